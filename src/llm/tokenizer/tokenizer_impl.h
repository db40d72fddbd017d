/* tokenizer_impl.h — the tokenizer object's insides (private to
 * src/llm/tokenizer/).
 *
 * Every kind runs the same pipeline, shaped after Hugging Face tokenizers:
 *   text → split out added/special tokens → per text fragment: normalizer
 *   ops → pre-tokenizer ops (pieces) → the model on each piece → ids,
 * with BOS/EOS around it. Loaders (GGUF, tokenizer.json, llama2.c) fill the
 * vocabulary and choose the ops. */
#ifndef POOT_LLM_TOKENIZER_IMPL_H
#define POOT_LLM_TOKENIZER_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string.h>

#include "poot/llm/tokenizer.h"

typedef struct poot__tok_entry {
  const char *text; /* arena copy, NUL-terminated */
  uint32_t len;
  float score;
  uint32_t attr; /* poot_token_attr bits */
} poot__tok_entry;

typedef enum poot__norm_type {
  POOT__NORM_NFC = 0,
  POOT__NORM_NFD,
  POOT__NORM_NFKC,
  POOT__NORM_NFKD,
  POOT__NORM_LOWERCASE,
  POOT__NORM_STRIP_ACCENTS, /* remove Mn */
  POOT__NORM_PREPEND,       /* a = prefix (only on a non-empty fragment) */
  POOT__NORM_REPLACE,       /* a → b (literal) */
  POOT__NORM_BERT,          /* BertNormalizer: clean, chinese, strip accents, lowercase */
} poot__norm_type;

typedef struct poot__norm_op {
  poot__norm_type type;
  const char *a, *b;
  size_t a_len, b_len;
  bool clean_text, handle_chinese, strip_accents, lowercase; /* BERT */
} poot__norm_op;

typedef enum poot__pre_type {
  POOT__PRE_SPLIT = 0,  /* regex, matches and gaps both kept (HF "Isolated") */
  POOT__PRE_BYTE_LEVEL, /* maps bytes to GPT-2's byte characters (+ optional regex) */
  POOT__PRE_METASPACE,  /* ' ' → U+2581, optional prefix, optional split before U+2581 */
  POOT__PRE_BERT,       /* split on whitespace, isolate punctuation */
  POOT__PRE_DIGITS,     /* isolate digits (runs or individual) */
  POOT__PRE_WHITESPACE_SPLIT,
} poot__pre_type;

enum { POOT__PREPEND_ALWAYS = 0, POOT__PREPEND_FIRST, POOT__PREPEND_NEVER };

typedef struct poot__pre_op {
  poot__pre_type type;
  pcre2_code *re;        /* SPLIT, BYTE_LEVEL with use_regex (owned) */
  bool add_prefix_space; /* BYTE_LEVEL */
  int prepend_scheme;    /* METASPACE */
  bool split;            /* METASPACE */
  bool individual;       /* DIGITS */
} poot__pre_op;

#define POOT__MAX_OPS 8

/* A special/added token as the splitter sees it. */
typedef struct poot__special {
  poot_token id;
  bool special; /* CONTROL/UNKNOWN: only with parse_special */
} poot__special;

struct poot_tokenizer {
  poot_tokenizer_kind kind;
  poot_arena arena;
  int32_t n_tokens;
  poot__tok_entry *tokens; /* poot_malloc'ed */
  /* Text → the last id with that text: open addressing, slots hold id + 1. */
  uint32_t *text_slots;
  size_t text_cap;
  /* BPE merges: (left id << 32 | right id) → rank << 32 | merged id. */
  struct poot__merge_slot *merge_slots;
  size_t merge_cap, merge_len;
  uint32_t max_token_len;

  pcre2_match_context *match_ctx; /* bounds backtracking of hostile patterns */
  size_t n_norm, n_pre;
  poot__norm_op norm[POOT__MAX_OPS];
  poot__pre_op pre[POOT__MAX_OPS];
  bool byte_level;    /* pieces are mapped through GPT-2's byte characters */
  bool byte_fallback; /* unknown characters become <0xXX> tokens */
  bool ignore_merges; /* BPE: a piece that is a whole token is taken as is */
  bool fuse_unk;
  bool llama2c_prefix;   /* llama2.c: the dummy prefix and strip-after-BOS */
  bool wp_phantom;       /* WordPiece vocabulary in llama.cpp's U+2581 form */
  uint32_t wp_max_chars; /* WordPiece max_input_chars_per_word */
  float unigram_unk_score;

  /* Added tokens, indexed by first byte: first[b]..first[b+1] in `specials`,
   * longest first. */
  poot__special *specials;
  size_t n_specials;
  uint32_t special_first[257];

  poot_token byte_tokens[256]; /* <0xXX> (or the byte-level character) per byte */
  poot_token bos, eos, unk, sep, pad, eot;
  bool add_bos, add_eos, add_sep;
  bool strip_prefix_space; /* decoding removes the encoder's leading space */
  /* When no token holds the word marker (U+2581, or ' ' for llama2.c) right
   * after another character, no merge can cross the start of a word, so SPM,
   * character-level BPE and llama2.c merge word by word: the same result as
   * one pass over the whole text, with small heaps. */
  const char *chunk_marker;
  size_t chunk_marker_len;
};

/* ---- building (loaders) */

/* The largest score magnitude a vocabulary may hold. Scores are
 * log-probabilities (unigram, SentencePiece) or merge priorities; real
 * vocabularies stay within ±1e9 (llama.cpp writes -1e9 for unused pieces).
 * Within ±1e30, a Viterbi sum over any number of pieces a size_t can count
 * (2^64 · 1e30 ≈ 2·10^49) stays far inside double's range, and the unknown
 * piece's score (the lowest score minus 10) stays a finite float. Loaders
 * reject a score outside it (NaN and ±inf included) with FORMAT. */
#define POOT__TOK_SCORE_LIMIT 1e30

static inline bool poot__tok_score_ok(double score) {
  return score >= -POOT__TOK_SCORE_LIMIT && score <= POOT__TOK_SCORE_LIMIT;
}

/* Allocates an empty tokenizer of `kind` with room for n_tokens. */
POOT_MUST_USE poot_status poot__tok_new(poot_tokenizer_kind kind, int32_t n_tokens,
                                        poot_tokenizer **out_tok);
/* Sets token id's text (copied), score and attr. FORMAT for an id outside
 * the vocabulary, an over-long text, or a score that poot__tok_score_ok
 * refuses. */
POOT_MUST_USE poot_status poot__tok_set(poot_tokenizer *tok, int32_t id, const char *text,
                                        size_t len, float score, uint32_t attr);
/* After all tokens are set: builds the text map, byte tokens and specials. */
POOT_MUST_USE poot_status poot__tok_finish(poot_tokenizer *tok);
/* Adds a BPE merge of the texts a and b (skipped when a token is missing). */
POOT_MUST_USE poot_status poot__tok_add_merge(poot_tokenizer *tok, const char *a, size_t a_len,
                                              const char *b, size_t b_len, uint32_t rank);
/* Compiles a pre-tokenizer regex (UTF + Unicode properties, JIT when present). */
POOT_MUST_USE poot_status poot__tok_compile_regex(const char *pattern, size_t len,
                                                  pcre2_code **out_re);
POOT_MUST_USE poot_status poot__tok_add_split(poot_tokenizer *tok, const char *pattern);
/* The match context every regex match uses (created with the tokenizer). */
poot__norm_op *poot__tok_add_norm(poot_tokenizer *tok, poot__norm_type type);
poot__pre_op *poot__tok_add_pre(poot_tokenizer *tok, poot__pre_type type);

/* What a tokenizer.ggml.pre value means (llama.cpp's table): the regexes
 * applied in turn (a NULL-terminated list) and the options that come with it. */
enum {
  POOT__PRE_IGNORE_MERGES = 1, /* and add BOS */
  POOT__PRE_ADD_SEP = 2,
  POOT__PRE_NO_BOS = 4,
  POOT__PRE_ADD_BOS = 8,
};
typedef struct poot__pre_entry {
  const char *name;
  const char *const *regexes;
  uint32_t flags;
} poot__pre_entry;
/* NULL when the name is unknown. */
const poot__pre_entry *poot__tok_pre_lookup(const char *name, size_t len);
extern const char poot__tok_gpt2_regex[];

/* ---- pipeline stages (tokenizer_pipeline.c) */

/* One piece of normalized text handed to the model. */
typedef struct poot__piece {
  size_t off, len;
} poot__piece;

/* Normalizes fragment s[0..n) into out. `first` is true for the text's first
 * fragment. */
void poot__tok_normalize(const poot_tokenizer *tok, const char *s, size_t n, poot_strbuf *out);
/* Splits text (modified in place by METASPACE) into pieces. */
POOT_MUST_USE poot_status poot__tok_pretokenize(const poot_tokenizer *tok, poot_strbuf *text,
                                                bool first, poot_vec *pieces);

/* The length of the first chunk of s[0..n): up to the next word marker that
 * follows another character (n when there is none or chunking is off). */
size_t poot__tok_chunk_len(const poot_tokenizer *tok, const char *s, size_t n);

/* ---- models (tokenizer_models.c); each appends ids to `out` (poot_token). */
POOT_MUST_USE poot_status poot__model_spm(const poot_tokenizer *tok, const char *s, size_t n,
                                          poot_vec *out);
POOT_MUST_USE poot_status poot__model_bpe(const poot_tokenizer *tok, const char *s, size_t n,
                                          poot_vec *out);
POOT_MUST_USE poot_status poot__model_unigram(const poot_tokenizer *tok, const char *s, size_t n,
                                              poot_vec *out);
POOT_MUST_USE poot_status poot__model_wordpiece(const poot_tokenizer *tok, const char *s, size_t n,
                                                poot_vec *out);
POOT_MUST_USE poot_status poot__model_llama2c(const poot_tokenizer *tok, const char *s, size_t n,
                                              poot_vec *out);

/* GPT-2's byte ↔ character mapping. */
uint32_t poot__byte_to_char(uint8_t b);
int poot__char_to_byte(uint32_t cp); /* -1 when cp is not a byte character */

typedef struct poot__merge_slot {
  uint64_t key; /* UINT64_MAX: empty */
  uint64_t value;
} poot__merge_slot;

static inline uint64_t poot__tok_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

static inline poot_token poot__tok_lookup(const poot_tokenizer *tok, const char *s, size_t n) {
  if (!tok->text_cap) return POOT_TOKEN_NONE;
  size_t mask = tok->text_cap - 1;
  for (size_t i = poot__tok_hash(s, n) & mask;; i = (i + 1) & mask) {
    uint32_t v = tok->text_slots[i];
    if (!v) return POOT_TOKEN_NONE;
    const poot__tok_entry *e = &tok->tokens[v - 1];
    if (e->len == n && memcmp(e->text, s, n) == 0) return (poot_token)(v - 1);
  }
}

static inline bool poot__tok_merge_get(const poot_tokenizer *tok, poot_token a, poot_token b,
                                       uint64_t *out) {
  if (!tok->merge_cap) return false;
  uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
  size_t mask = tok->merge_cap - 1;
  for (size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & mask;; i = (i + 1) & mask) {
    const poot__merge_slot *sl = &tok->merge_slots[i];
    if (sl->key == key) {
      *out = sl->value;
      return true;
    }
    if (sl->key == UINT64_MAX) return false;
  }
}

#endif
