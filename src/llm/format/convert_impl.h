/* Private to src/llm/format: the pieces of `poot convert`. */
#ifndef POOT_LLM_FORMAT_CONVERT_IMPL_H
#define POOT_LLM_FORMAT_CONVERT_IMPL_H

#include "poot/llm/convert.h"
#include "poot/llm/gguf.h"
#include "poot/llm/hf_config.h"
#include "poot/llm/llama2c.h"

/* llama.cpp's token types. */
enum {
  POOT__TOKEN_NORMAL = 1,
  POOT__TOKEN_UNKNOWN = 2,
  POOT__TOKEN_CONTROL = 3,
  POOT__TOKEN_USER_DEFINED = 4,
  POOT__TOKEN_UNUSED = 5,
  POOT__TOKEN_BYTE = 6,
};

/* Writes the tokenizer of a llama2.c tokenizer file as a SentencePiece
 * ("llama") vocabulary, the way llama.cpp's llama2.c converter does. */
POOT_MUST_USE poot_status poot__convert_vocab_llama2c(poot_gguf_writer *w,
                                                      const poot_llama2c_vocab *vocab);

/* Writes the tokenizer of a Hugging Face folder (tokenizer.json, and
 * tokenizer_config.json / chat_template.jinja when present) and its chat
 * template. `config` gives vocab_size and fallback special token ids.
 * *out_n_tokens is the vocabulary size written. */
POOT_MUST_USE poot_status poot__convert_vocab_hf(poot_gguf_writer *w, const char *folder,
                                                 const poot_hf_config *config,
                                                 uint32_t *out_n_tokens);

/* Writes the GGUF under a temporary name, checks it with the loader's checks
 * (poot_model_check_file) and renames it to `output`; a file that would not
 * load is removed and its status returned (convert_check.c). A GGUF input
 * that does not load itself (a vocabulary-only file, an architecture poot
 * does not run) is re-typed unchecked: its metadata is copied, not made. */
POOT_MUST_USE poot_status poot__convert_write_checked(poot_gguf_writer *w, const char *input,
                                                      bool gguf_input, const char *output);

/* The names `--type` takes, for messages. */
#define POOT__CONVERT_TYPE_NAMES \
  "f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k q4_k_m q5_k_m"

/* The tensor type of `gguf_name` (a 2-D tensor) under a mixture, for a
 * model of n_layers whose file has (has_output) or lacks an output.weight
 * (convert_mix.c; poot/llm/convert.h states the rule). */
poot_gguf_type poot__convert_mix_type(poot_convert_mixture mixture, const char *gguf_name,
                                      int64_t n_layers, bool has_output);
/* llama.cpp's fallback for a k-quant whose block does not divide a row:
 * q4_k → q5_0, q5_k → q5_1, q6_k → q8_0; f16 for every other type. */
poot_gguf_type poot__convert_k_fallback(poot_gguf_type type);

/* Reads and parses a JSON file into `arena`; NOT_FOUND when absent. */
POOT_MUST_USE poot_status poot__read_json(poot_arena *arena, const char *path,
                                          const poot_json **out_root);

#endif
