/* poot/llm/tokenizer.h — text to token ids and back.
 *
 * Kinds (docs/tokenizers.md has the details):
 *  - SentencePiece BPE by scores with byte fallback (GGUF "llama": Llama 2,
 *    Phi-3, …): the space escape U+2581, the leading space, score-ordered
 *    bigram merges, <0xXX> byte tokens.
 *  - merge-rank BPE as Hugging Face defines it, either byte-level (GGUF
 *    "gpt2": GPT-2, Llama 3, Qwen2, …, with the model's pre-tokenizer regex,
 *    run by PCRE2) or over characters with byte fallback (a Llama 2
 *    tokenizer.json).
 *  - SentencePiece unigram (Viterbi over piece scores; tokenizer.json).
 *  - WordPiece (GGUF "bert", tokenizer.json WordPiece): BERT normalization and
 *    pre-tokenization, then greedy longest match first.
 *  - the llama2.c tokenizer (tokenizer.bin) with llama2.c's exact encode().
 *
 * A tokenizer is immutable once loaded: encode and decode may run on many
 * threads at once. Token ids are int32_t; -1 means "none". */
#ifndef POOT_LLM_TOKENIZER_H
#define POOT_LLM_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t poot_token;
#define POOT_TOKEN_NONE ((poot_token)-1)

typedef enum poot_tokenizer_kind {
  POOT_TOKENIZER_SPM = 0,   /* SentencePiece BPE by scores (GGUF "llama") */
  POOT_TOKENIZER_BPE,       /* merge-rank BPE (byte-level or character-level) */
  POOT_TOKENIZER_UNIGRAM,   /* SentencePiece unigram */
  POOT_TOKENIZER_WORDPIECE, /* BERT WordPiece */
  POOT_TOKENIZER_LLAMA2C,   /* llama2.c's tokenizer.bin */
  POOT_TOKENIZER_KIND_COUNT
} poot_tokenizer_kind;

/* Token attributes (bit flags), as GGUF's token_type and Hugging Face's added
 * tokens define them. CONTROL and UNKNOWN tokens are "special": they are
 * matched in text only when parse_special is on and rendered only when asked.
 * USER_DEFINED tokens (HF added tokens with special=false) are always matched
 * in text and always rendered verbatim. */
typedef enum poot_token_attr {
  POOT_TOKEN_ATTR_NORMAL = 1u << 0,
  POOT_TOKEN_ATTR_UNKNOWN = 1u << 1,
  POOT_TOKEN_ATTR_CONTROL = 1u << 2,
  POOT_TOKEN_ATTR_USER_DEFINED = 1u << 3,
  POOT_TOKEN_ATTR_UNUSED = 1u << 4,
  POOT_TOKEN_ATTR_BYTE = 1u << 5,
  POOT_TOKEN_ATTR_LSTRIP = 1u << 6, /* matching eats whitespace to the left */
  POOT_TOKEN_ATTR_RSTRIP = 1u << 7, /* matching eats whitespace to the right */
} poot_token_attr;

typedef struct poot_tokenizer poot_tokenizer;

/* ----------------------------------------------------------------- loading */

/* Opens whatever `path` names: a GGUF file (a vocabulary-only one is fine), a
 * tokenizer.json file, a folder holding tokenizer.json (and optionally
 * tokenizer_config.json), or a llama2.c tokenizer .bin. The format is told
 * by content (GGUF magic, a leading '{'), else llama2.c is assumed.
 * NOT_FOUND/IO for an unreadable path, FORMAT for a malformed file,
 * UNSUPPORTED for a tokenizer kind or pre-tokenizer poot does not implement
 * (the message names it). *out_tok is NULL on failure. */
POOT_MUST_USE poot_status poot_tokenizer_open_path(const char *path, poot_tokenizer **out_tok);

/* Loads from GGUF metadata (tokenizer.ggml.*). `gguf` is borrowed during the
 * call only: everything is copied. */
POOT_MUST_USE poot_status poot_tokenizer_load_gguf(const poot_gguf *gguf, poot_tokenizer **out_tok);

/* Loads a Hugging Face tokenizer.json held in memory (`json`, `json_len`).
 * `config_json` (may be NULL) is tokenizer_config.json, consulted for
 * add_bos_token / add_eos_token / bos_token / eos_token. Both are borrowed
 * during the call only. */
POOT_MUST_USE poot_status poot_tokenizer_load_hf_json(const char *json, size_t json_len,
                                                      const char *config_json, size_t config_len,
                                                      poot_tokenizer **out_tok);

/* Loads a llama2.c tokenizer file held in memory: int32 max_token_length,
 * then per token float32 score, int32 length, bytes. `vocab_size` is the
 * model's vocabulary size, or 0 to read tokens until the end of the data.
 * FORMAT naming the token and offset on truncated or hostile input. */
POOT_MUST_USE poot_status poot_tokenizer_load_llama2c(const void *data, size_t size,
                                                      int32_t vocab_size, poot_tokenizer **out_tok);

void poot_tokenizer_destroy(poot_tokenizer *tok); /* NULL-safe */

/* --------------------------------------------------------------- vocabulary */

poot_tokenizer_kind poot_tokenizer_get_kind(const poot_tokenizer *tok);
const char *poot_tokenizer_kind_name(poot_tokenizer_kind kind); /* "spm", "bpe", … */
int32_t poot_tokenizer_vocab_size(const poot_tokenizer *tok);
/* The stored text of token `id` (borrowed; `*out_len` bytes, NUL-terminated),
 * or NULL when id is out of range. */
const char *poot_tokenizer_token_text(const poot_tokenizer *tok, poot_token id, size_t *out_len);
float poot_tokenizer_token_score(const poot_tokenizer *tok, poot_token id);   /* 0 if none */
uint32_t poot_tokenizer_token_attr(const poot_tokenizer *tok, poot_token id); /* 0 if none */
/* The id whose stored text is exactly `text[0..len)`, or POOT_TOKEN_NONE. */
poot_token poot_tokenizer_find(const poot_tokenizer *tok, const char *text, size_t len);

/* Special ids (POOT_TOKEN_NONE when the model has none) and whether encode
 * adds BOS/EOS when asked to add specials. */
typedef struct poot_tokenizer_specials {
  poot_token bos, eos, unk, sep, pad, eot;
  bool add_bos, add_eos, add_sep;
} poot_tokenizer_specials;
poot_tokenizer_specials poot_tokenizer_get_specials(const poot_tokenizer *tok);
/* True when `id` ends generation: the EOS or EOT id, or a CONTROL token that
 * closes a turn in the common chat formats ("<|eot_id|>", "<|im_end|>",
 * "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>",
 * "<|end_of_text|>", DeepSeek's end of sentence), as llama.cpp decides. */
bool poot_tokenizer_is_end_of_generation(const poot_tokenizer *tok, poot_token id);

/* ------------------------------------------------------------------ encode */

typedef struct poot_tokenizer_encode_options {
  /* Add the model's BOS (and EOS / SEP) as its metadata says. */
  bool add_special;
  /* Match CONTROL and UNKNOWN tokens written in the text ("<s>",
   * "<|eot_id|>"). When false they are tokenized as plain text. */
  bool parse_special;
} poot_tokenizer_encode_options;

static inline poot_tokenizer_encode_options poot_tokenizer_encode_options_default(void) {
  poot_tokenizer_encode_options o = {.add_special = true, .parse_special = false};
  return o;
}

/* Tokenizes `text[0..len)` (any bytes; invalid UTF-8 is byte-encoded where
 * the model can, else mapped to the unknown token). On success *out_ids is a
 * poot_malloc'ed array of *out_count ids (NULL when the count is 0) that the
 * caller frees with poot_free. `options` may be NULL (the defaults above).
 * OUT_OF_MEMORY; INTERNAL if the regex engine fails. */
POOT_MUST_USE poot_status poot_tokenizer_encode(const poot_tokenizer *tok, const char *text,
                                                size_t len,
                                                const poot_tokenizer_encode_options *options,
                                                poot_token **out_ids, size_t *out_count);

/* ------------------------------------------------------------------ decode */

typedef struct poot_tokenizer_decode_options {
  /* Render CONTROL and UNKNOWN tokens as their text; when false they produce
   * nothing. */
  bool render_special;
  /* Remove the leading space the model's encoder adds (SentencePiece's dummy
   * prefix, llama2.c's space after BOS). */
  bool strip_prefix_space;
  /* The model's embedding rows (0: the tokenizer's size). Ids from the
   * tokenizer's size up to this are the padding rows Hugging Face checkpoints
   * round their embedding up with (Qwen: 151,936 rows for 151,665 tokens):
   * they have no text, as transformers decodes them; ids past it are
   * INVALID_ARGUMENT. */
  int64_t vocab_rows;
} poot_tokenizer_decode_options;

static inline poot_tokenizer_decode_options poot_tokenizer_decode_options_default(void) {
  poot_tokenizer_decode_options o = {
      .render_special = false, .strip_prefix_space = true, .vocab_rows = 0};
  return o;
}

/* Appends the bytes of one token to `out` (no prefix-space handling).
 * INVALID_ARGUMENT for an id out of range. */
POOT_MUST_USE poot_status poot_tokenizer_token_to_piece(const poot_tokenizer *tok, poot_token id,
                                                        bool render_special, poot_strbuf *out);

/* Appends the text of `ids` to `out`. `options` may be NULL (defaults).
 * INVALID_ARGUMENT for an id out of range; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_tokenizer_decode(const poot_tokenizer *tok, const poot_token *ids,
                                                size_t count,
                                                const poot_tokenizer_decode_options *options,
                                                poot_strbuf *out);

/* A streaming decoder: feed ids one at a time and receive only complete
 * UTF-8 sequences; bytes of a character split across tokens are held back
 * until it completes. The tokenizer is borrowed and must outlive it. One
 * decoder serves one stream on one thread. */
typedef struct poot_tokenizer_decoder poot_tokenizer_decoder;

POOT_MUST_USE poot_status poot_tokenizer_decoder_create(
    const poot_tokenizer *tok, const poot_tokenizer_decode_options *options,
    poot_tokenizer_decoder **out_decoder);
/* Appends to `out` whatever text is complete after `id`. */
POOT_MUST_USE poot_status poot_tokenizer_decoder_push(poot_tokenizer_decoder *dec, poot_token id,
                                                      poot_strbuf *out);
/* Appends the held-back bytes (an incomplete sequence at the end of the
 * stream), verbatim, and resets the decoder for a new stream. */
POOT_MUST_USE poot_status poot_tokenizer_decoder_flush(poot_tokenizer_decoder *dec,
                                                       poot_strbuf *out);
/* How many bytes are held back now. */
size_t poot_tokenizer_decoder_pending(const poot_tokenizer_decoder *dec);
void poot_tokenizer_decoder_destroy(poot_tokenizer_decoder *dec); /* NULL-safe */

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_TOKENIZER_H */
