/* poot/llm/hf_config.h — Hugging Face config.json and generation_config.json.
 *
 * The common fields are parsed into plain structs; everything else stays
 * reachable through the raw JSON (`root`). A field that is absent keeps the
 * value documented beside it (-1 for counts and ids, 0 for floats unless
 * noted), so callers can tell "absent" from a value. Objects own their
 * memory (one arena); strings and JSON are borrowed from them. */
#ifndef POOT_LLM_HF_CONFIG_H
#define POOT_LLM_HF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POOT_HF_MAX_EOS 8

typedef struct poot_hf_config {
  const char *model_type;   /* "llama", "qwen2", …; NULL when absent */
  const char *architecture; /* architectures[0]; NULL when absent */
  const char *torch_dtype;  /* "bfloat16", …; NULL when absent */
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t intermediate_size;
  int64_t num_hidden_layers;
  int64_t num_attention_heads;
  int64_t num_key_value_heads; /* defaults to num_attention_heads */
  int64_t head_dim;            /* defaults to hidden_size / num_attention_heads */
  int64_t max_position_embeddings;
  double rms_norm_eps;      /* 0 when absent */
  double layer_norm_eps;    /* 0 when absent */
  double rope_theta;        /* 10000 when absent */
  bool tie_word_embeddings; /* false when absent */
  bool attention_bias;      /* false when absent */
  int64_t bos_token_id;
  int64_t eos_token_ids[POOT_HF_MAX_EOS]; /* an int or a list */
  size_t n_eos_token_ids;
  int64_t pad_token_id;
  const poot_json *rope_scaling; /* the object, or NULL */
  const poot_json *root;         /* the whole document */
  poot_arena arena;              /* private */
} poot_hf_config;

typedef struct poot_hf_generation_config {
  int64_t bos_token_id;
  int64_t eos_token_ids[POOT_HF_MAX_EOS];
  size_t n_eos_token_ids;
  int64_t pad_token_id;
  bool do_sample;     /* false when absent */
  double temperature; /* -1 when absent */
  double top_p;       /* -1 when absent */
  int64_t top_k;
  int64_t max_length;
  int64_t max_new_tokens;
  double repetition_penalty; /* -1 when absent */
  const poot_json *root;
  poot_arena arena; /* private */
} poot_hf_generation_config;

/* Reads config.json at `path`. NOT_FOUND/IO, FORMAT (JSON errors name the
 * offset; a field of the wrong type names the field). */
POOT_MUST_USE poot_status poot_hf_config_load(const char *path, poot_hf_config **out_config);
/* Parses config text (borrowed during the call). `name` names it in errors. */
POOT_MUST_USE poot_status poot_hf_config_parse(const char *text, size_t len, const char *name,
                                               poot_hf_config **out_config);
void poot_hf_config_destroy(poot_hf_config *config); /* NULL-safe */

POOT_MUST_USE poot_status poot_hf_generation_config_load(const char *path,
                                                         poot_hf_generation_config **out_config);
POOT_MUST_USE poot_status poot_hf_generation_config_parse(const char *text, size_t len,
                                                          const char *name,
                                                          poot_hf_generation_config **out_config);
void poot_hf_generation_config_destroy(poot_hf_generation_config *config); /* NULL-safe */

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_HF_CONFIG_H */
