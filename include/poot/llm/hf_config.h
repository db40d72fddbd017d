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

/* One rotary-embedding parameter set, as transformers 4.x (`rope_theta` +
 * `rope_scaling`) and 5.x (`rope_parameters`, flat or keyed by layer type)
 * write it. Absent numbers are 0 (-1 for the context), absent lists NULL. */
typedef struct poot_hf_rope {
  bool present;     /* the parameters were given (or a theta was) */
  const char *type; /* "default", "linear", "dynamic", "yarn", "llama3", "longrope"
                       ("su" reads as "longrope"); never NULL */
  double theta;     /* rope_theta (after the reader's fallbacks: never absent) */
  double factor;
  double low_freq_factor, high_freq_factor;  /* llama3 */
  int64_t original_max_position_embeddings;  /* -1 when absent */
  double attention_factor;                   /* yarn, longrope */
  double beta_fast, beta_slow;               /* yarn */
  double mscale, mscale_all_dim;             /* yarn */
  bool truncate;                             /* yarn; true when absent */
  double partial_rotary_factor;              /* 0 when absent */
  const poot_json *short_factor, *long_factor; /* longrope lists */
  const poot_json *object;                     /* the JSON it came from, or NULL */
} poot_hf_rope;

typedef struct poot_hf_config {
  const char *model_type;   /* "llama", "qwen2", …; NULL when absent */
  const char *architecture; /* architectures[0]; NULL when absent */
  const char *torch_dtype;  /* "bfloat16", …; NULL when absent */
  /* The model's fields below come from `text_config` when the file nests one
   * (multimodal wrappers), else from the top level. */
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t intermediate_size;
  int64_t num_hidden_layers;
  int64_t num_attention_heads;
  int64_t num_key_value_heads; /* defaults to num_attention_heads */
  int64_t head_dim;            /* defaults to hidden_size / num_attention_heads */
  int64_t max_position_embeddings;
  int64_t original_max_position_embeddings; /* top level (Phi-3); -1 when absent */
  double rms_norm_eps;      /* 0 when absent */
  double layer_norm_eps;    /* 0 when absent */
  double rope_theta;        /* the global layers' theta; 10000 when absent */
  double partial_rotary_factor; /* top level or in the rope parameters; 1 when absent */
  bool tie_word_embeddings; /* false when absent (text_config, else top level) */
  bool attention_bias;      /* false when absent */
  bool mlp_bias;            /* false when absent */
  const char *hidden_act;   /* `hidden_activation` when set, else `hidden_act`; NULL */
  int64_t sliding_window;   /* -1 when absent or null */
  int use_sliding_window;   /* -1 absent, 0 false, 1 true (Qwen 2) */
  int64_t max_window_layers; /* -1 when absent (Qwen 2) */
  int64_t sliding_window_pattern; /* -1 when absent (Gemma 3 before layer_types) */
  const poot_json *layer_types;   /* the array of "sliding_attention" | "full_attention" */
  double attn_logit_softcapping;  /* 0 when absent or null */
  double final_logit_softcapping; /* 0 when absent or null */
  double query_pre_attn_scalar;   /* 0 when absent */
  bool use_bidirectional_attention; /* false when absent or null */
  /* The rope of the global (full-attention) layers, and of the sliding layers
   * when the file gives them their own (5.x `rope_parameters.sliding_attention`,
   * 4.x Gemma 3 `rope_local_base_freq`; `present` false otherwise). */
  poot_hf_rope rope;
  poot_hf_rope rope_sliding;
  int64_t bos_token_id;
  int64_t eos_token_ids[POOT_HF_MAX_EOS]; /* an int or a list */
  size_t n_eos_token_ids;
  int64_t pad_token_id;
  const poot_json *rope_scaling; /* the 4.x object or the 5.x parameters; NULL when
                                    there is no scaling (type "default") */
  const poot_json *text;         /* text_config, else the whole document */
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
