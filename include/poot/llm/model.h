/* poot/llm/model.h — model families, step shapes, tracing and the registry
 * (DESIGN §1, §3, §7; docs/families.md).
 *
 * A family turns a model configuration (poot_model_config, read from a
 * Hugging Face config.json, GGUF metadata or a llama2.c header) into a graph
 * for one step shape (poot_model_step): B sequences of T tokens each over a
 * KV capacity `cap`, contiguous or paged. Graphs are built from composites
 * (poot.rms_norm, poot.rope, poot.attention, poot.swiglu, poot.geglu, …) and
 * core ops; docs/families.md lists what each composite means.
 *
 * Leaves of a traced graph (bind them by poot_graph_leaf_name):
 *   Slot token      i32[B, T]        the step's token ids
 *   Slot pos        i32[B]           position of each sequence's first token
 *   Slot slot_map   i32[B, cap/bs]   paged only: each sequence's block table
 *   Slot write_map  i32[B*T]         paged only: pool row of each new token
 *   Slot embeds     f32[B, T, hidden] input_embeds only: rows used in place
 *                                    of token embeddings
 *   Slot embeds_on  i32[B, T]        input_embeds only: nonzero where the
 *                                    row of `embeds` replaces the token's
 *   State blk.N.k / blk.N.v          contiguous: f32[B, cap, Hkv, D]
 *                                    paged: f32[num_blocks*bs, Hkv, D]
 *   Weight roles    as the family's weight map names them
 * The primary output is f32[B, vocab], the logits of each sequence's last
 * position (or, with POOT_MODEL_OUTPUT_HIDDEN, f32[B, T, hidden], the final
 * normalized hidden states of every position). Nothing in the graph depends
 * on the positions' values: tracing one step shape twice gives one structural
 * hash (constant shape, DESIGN §1).
 *
 * Objects here are not thread safe for writes; a finished model handle may
 * be read from several threads. */
#ifndef POOT_LLM_MODEL_H
#define POOT_LLM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"
#include "poot/llm/chat_template.h"
#include "poot/llm/gguf.h"
#include "poot/llm/hf_config.h"
#include "poot/llm/llama2c.h"
#include "poot/llm/store.h"
#include "poot/llm/tokenizer.h"
#include "poot/llm/weight_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- families */

typedef enum poot_model_family {
  POOT_MODEL_FAMILY_NONE = 0,
  POOT_MODEL_FAMILY_LLAMA,   /* Llama 1/2/3/3.1/3.2, llama2.c checkpoints */
  POOT_MODEL_FAMILY_MISTRAL, /* Llama layout with optional sliding-window attention */
  POOT_MODEL_FAMILY_QWEN2,   /* q/k/v bias */
  POOT_MODEL_FAMILY_QWEN3,   /* per-head q/k RMSNorm */
  POOT_MODEL_FAMILY_GEMMA,   /* Gemma 1 */
  POOT_MODEL_FAMILY_GEMMA2,  /* post-norms, soft-capping, alternating local/global */
  POOT_MODEL_FAMILY_GEMMA3,  /* post-norms, q/k norm, local/global rope theta */
  POOT_MODEL_FAMILY_PHI3,    /* fused qkv and gate/up, su/longrope */
  POOT_MODEL_FAMILY_BERT,    /* BERT-style encoders: pooled embeddings, cross-encoders */
  POOT_MODEL_FAMILY_COUNT
} poot_model_family;

/* "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "phi3",
 * "bert"; "?" for an invalid value. */
const char *poot_model_family_name(poot_model_family family);

/* The family of a GGUF `general.architecture` string. UNSUPPORTED naming the
 * architecture when no family handles it. */
POOT_MUST_USE poot_status poot_model_family_from_gguf_arch(const char *arch,
                                                           poot_model_family *out_family);
/* The family of a Hugging Face config: `architecture` (architectures[0]) is
 * tried first, then `model_type`; either may be NULL. UNSUPPORTED naming
 * them when no family handles them. */
POOT_MUST_USE poot_status poot_model_family_from_hf(const char *architecture,
                                                    const char *model_type,
                                                    poot_model_family *out_family);

/* ---------------------------------------------------------------- config */

#define POOT_MODEL_MAX_LAYERS 256
#define POOT_MODEL_MAX_ROPE_PAIRS 256 /* head_dim / 2 */

typedef enum poot_model_rope_scaling {
  POOT_MODEL_ROPE_SCALING_NONE = 0,
  POOT_MODEL_ROPE_SCALING_LINEAR,   /* positions divided by factor */
  POOT_MODEL_ROPE_SCALING_LLAMA3,   /* Llama 3.1 per-frequency smoothing */
  POOT_MODEL_ROPE_SCALING_LONGROPE, /* Phi-3 su/longrope: per-frequency factors */
  POOT_MODEL_ROPE_SCALING_FREQS,    /* GGUF rope_freqs: per-frequency divisors */
  POOT_MODEL_ROPE_SCALING_YARN,     /* YaRN: ramped interpolation, cos/sin scaled */
  POOT_MODEL_ROPE_SCALING_DYNAMIC,  /* dynamic NTK: theta grows with the sequence */
} poot_model_rope_scaling;

typedef enum poot_model_activation {
  POOT_MODEL_ACT_SILU = 0,  /* SwiGLU */
  POOT_MODEL_ACT_GELU_TANH, /* GeGLU with the tanh approximation */
  POOT_MODEL_ACT_GELU,      /* encoders: the exact (erf) GELU, Hugging Face's "gelu" */
} poot_model_activation;

/* How an encoder turns its hidden states into one vector a sequence
 * (sentence-transformers' Pooling module; GGUF `<arch>.pooling_type`). */
typedef enum poot_model_pooling {
  POOT_MODEL_POOLING_DEFAULT = 0, /* in a step: the model's own; in a config: mean */
  POOT_MODEL_POOLING_MEAN,        /* the mean over the sequence's tokens (never padding) */
  POOT_MODEL_POOLING_CLS,         /* the first token's state */
  POOT_MODEL_POOLING_LAST,        /* the last real token's state */
} poot_model_pooling;

/* "mean", "cls", "last" ("default" for DEFAULT, "?" for an invalid value). */
const char *poot_model_pooling_name(poot_model_pooling pooling);
/* The pooling named "mean" / "cls" / "last"; INVALID_ARGUMENT otherwise. */
POOT_MUST_USE poot_status poot_model_pooling_from_name(const char *name,
                                                       poot_model_pooling *out_pooling);

/* Everything a family needs to trace a graph. A plain value (copyable); no
 * pointers. Fields a family does not use are ignored. */
typedef struct poot_model_config {
  poot_model_family family;
  char architecture[64]; /* the string the family was detected from */
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t intermediate_size;
  int64_t n_layers;
  int64_t n_heads;
  int64_t n_kv_heads;
  int64_t head_dim;
  int64_t context_length; /* the model's trained context (0: unknown) */
  double norm_eps;

  /* Rotary embedding. */
  poot_rope_mode rope_mode; /* NORM for GGUF llama and llama2.c (permuted Q/K), else NEOX */
  int64_t rope_dims;        /* rotated features per head (≤ head_dim, even) */
  double rope_theta;
  double rope_theta_local; /* Gemma 3 local layers (0: rope_theta) */
  poot_model_rope_scaling rope_scaling;
  double rope_factor;            /* LINEAR, LLAMA3, LONGROPE (context ratio), YARN, DYNAMIC */
  double rope_low_freq_factor;   /* LLAMA3 */
  double rope_high_freq_factor;  /* LLAMA3 */
  /* LLAMA3, LONGROPE, YARN; DYNAMIC: the length past which theta grows
   * (transformers: max_position_embeddings). */
  int64_t rope_original_context;
  double rope_attn_factor;       /* LONGROPE, YARN: cos/sin multiplier (0: derived) */
  double rope_beta_fast;         /* YARN: the ramp's bounds in rotations (32, 1) */
  double rope_beta_slow;
  bool rope_yarn_no_truncate;    /* YARN: keep the ramp's bounds fractional */
  float rope_short_factors[POOT_MODEL_MAX_ROPE_PAIRS]; /* LONGROPE; FREQS: the divisors */
  float rope_long_factors[POOT_MODEL_MAX_ROPE_PAIRS];  /* LONGROPE */
  bool rope_local_unscaled; /* Gemma 3: scaling applies to global layers only */

  /* Attention. */
  double attn_scale;      /* 0: 1/sqrt(head_dim) */
  double attn_softcap;    /* 0: none (Gemma 2: 50) */
  int64_t sliding_window; /* 0: none */
  /* 1 where layer i attends only within sliding_window (every layer when
   * sliding_window is set and no layer is marked: Mistral, Phi-3). */
  uint8_t layer_sliding[POOT_MODEL_MAX_LAYERS];
  bool any_layer_sliding_marked;
  bool qkv_bias;  /* Qwen2 */
  bool qk_norm;   /* Qwen3, Gemma 3 */
  bool fused_qkv; /* Phi-3 */

  /* Blocks. */
  poot_model_activation activation;
  bool fused_gate_up;   /* Phi-3: one [2*ff, hidden] projection, gate first */
  bool post_norms;      /* Gemma 2/3: norms after attention and MLP */
  bool norm_plus_one;   /* Gemma: norms scale by (1 + w) (false for GGUF, where
                           the converter already added 1) */
  bool embed_scale;     /* Gemma: embeddings times sqrt(hidden) rounded to f32 */
  bool tied_output;     /* the classifier is the token embedding */
  double final_softcap; /* 0: none (Gemma 2: 30) */

  /* Encoders (BERT; docs/encoders.md). context_length is
   * max_position_embeddings, the longest sequence. */
  int64_t type_vocab_size;    /* token-type (segment) embedding rows */
  int64_t n_labels;           /* classifier outputs (a cross-encoder: 1); 0: none */
  poot_model_pooling pooling; /* sentence-transformers' Pooling (MEAN without one) */
  bool normalize;             /* a Normalize module: L2-normalize the pooled vector */
  bool weights_prefixed;      /* HF tensors under "bert." (BertFor… classes) */
  /* sentence-transformers' max_seq_length (sentence_bert_config.json): the
   * longest text it embeds, cut there when it truncates; 0: none, the limit
   * is context_length (poot_model_encoder_max_tokens). */
  int64_t max_seq_length;
} poot_model_config;

/* The most tokens an encoder's text may have: sentence-transformers'
 * max_seq_length where the model has one below its positions, else
 * context_length (max_position_embeddings). */
static inline int64_t poot_model_encoder_max_tokens(const poot_model_config *c) {
  return c->max_seq_length > 0 && c->max_seq_length < c->context_length ? c->max_seq_length
                                                                         : c->context_length;
}

/* True for a family that encodes whole sequences (BERT): it traces
 * POOT_MODEL_OUTPUT_EMBEDDING / SCORES steps only, with no KV state. */
bool poot_model_is_encoder(const poot_model_config *config);

/* Fills `config` with the family's defaults (everything else zero). */
void poot_model_config_init(poot_model_config *config, poot_model_family family);

/* From a Hugging Face config (Gemma 3's nested text_config is read too).
 * UNSUPPORTED for an unknown architecture or rope scaling, naming it;
 * FORMAT when a needed field is missing. */
POOT_MUST_USE poot_status poot_model_config_from_hf(const poot_hf_config *hf,
                                                    poot_model_config *out_config);
/* From GGUF metadata (`<arch>.…` keys; rope_freqs and Phi-3's
 * rope_factors_long/short tensors are read when `store` is not NULL). */
POOT_MUST_USE poot_status poot_model_config_from_gguf(const poot_gguf *gguf,
                                                      const poot_store *store,
                                                      poot_model_config *out_config);
/* From a llama2.c header: a Llama with the interleaved (NORM) rope, theta
 * 10000, eps 1e-5. */
POOT_MUST_USE poot_status poot_model_config_from_llama2c(const poot_llama2c_config *c,
                                                         poot_model_config *out_config);
/* INVALID_ARGUMENT naming the first inconsistent field. */
POOT_MUST_USE poot_status poot_model_config_validate(const poot_model_config *config);

/* The family's weight map in a naming (llama2.c naming only for llama).
 * UNSUPPORTED for a naming the family has no names in. */
POOT_MUST_USE poot_status poot_model_weight_map_create(const poot_model_config *config,
                                                       poot_weight_naming naming,
                                                       poot_weight_map **out_map);

/* -------------------------------------------------------------- step shapes */

typedef enum poot_model_output {
  POOT_MODEL_OUTPUT_LOGITS = 0, /* f32[B, vocab] of each sequence's last position */
  POOT_MODEL_OUTPUT_HIDDEN,     /* f32[B, T, hidden], final-normalized */
  /* Encoders only (poot_model_is_encoder), B sequences of at most T tokens,
   * right-padded: the slots are `token` i32[B, T], "seq_len" i32[B] (each
   * sequence's real length, 1..T: attention never sees a key past it, pooling
   * never counts one) and "token_type" i32[B, T] (segment ids; 0 for a single
   * text). No KV state; `cap` is ignored. */
  POOT_MODEL_OUTPUT_EMBEDDING, /* f32[B, hidden]: pooled (and normalized) per sequence */
  POOT_MODEL_OUTPUT_SCORES,    /* f32[B, n_labels]: the classifier over the pooled [CLS] */
} poot_model_output;

typedef struct poot_model_step {
  int64_t batch;  /* B ≥ 1 */
  int64_t tokens; /* T ≥ 1 (1: decode; > 1: a prefill chunk) */
  int64_t cap;    /* KV capacity per sequence, ≥ T */
  bool paged;
  int64_t block_size; /* paged: rows per block; divides cap */
  int64_t num_blocks; /* paged: blocks in the shared pool */
  poot_model_output output;
  /* Declare the named slots "embeds" f32[B, T, hidden] and "embeds_on"
   * i32[B, T]: where embeds_on is nonzero, that row of embeds is used in
   * place of the token's embedding (the token is still given, any valid id,
   * and its gather still runs), as Hugging Face's inputs_embeds: before the
   * family's embedding scale (Gemma, Gemma 2: √hidden multiplies the row
   * too), except Gemma 3, whose scale is part of its embedding module (a row
   * there is taken as already scaled). Values are bound per step, never part
   * of the graph. */
  bool input_embeds;
  /* EMBEDDING: the pooling (DEFAULT: the model's) and whether to normalize
   * (0: as the model says, 1: yes, -1: no). */
  poot_model_pooling pooling;
  int normalize;
} poot_model_step;

/* The encoder slots' names (POOT_MODEL_OUTPUT_EMBEDDING / SCORES). */
#define POOT_MODEL_SLOT_SEQ_LEN "seq_len"
#define POOT_MODEL_SLOT_TOKEN_TYPE "token_type"

/* The names of the input_embeds slots. */
#define POOT_MODEL_SLOT_EMBEDS "embeds"
#define POOT_MODEL_SLOT_EMBEDS_ON "embeds_on"

/* The weight types a trace uses. Without a callback every weight is f32 of
 * its family's shape; with one (a loaded model), the store's dtype (f16,
 * bf16 and packed weights are converted / dequantized in the graph). */
typedef poot_status (*poot_model_weight_type_fn)(void *ctx, const poot_weight_ref *ref,
                                                 const poot_type *expected, poot_type *out_type);

typedef struct poot_model_trace_options {
  poot_model_weight_type_fn weight_type; /* optional */
  void *weight_type_ctx;
  /* The K/V states' element type: POOT_DTYPE_F16 (as llama.cpp keeps its
   * cache: half the bytes), POOT_DTYPE_F32, or POOT_DTYPE_Q8_0 (GGUF's
   * blocks of 32 along head_dim, which must be a multiple of 32: about a
   * quarter of f32's bytes); POOT_DTYPE_NONE takes
   * poot_model_kv_dtype_default. A step rounds (f16) or quantizes (q8_0) its
   * fresh K/V rows when writing and attention reads them back exactly,
   * contiguous or paged. */
  poot_dtype kv_dtype;
} poot_model_trace_options;

/* The K/V cache's type when none is asked: f16 (docs/driver.md "The KV
 * cache's type"), contiguous or paged (a paged pool's rows are scattered as
 * 32-bit words of two halves; docs/batching.md). The one place this default
 * lives (the trace, the driver and the batched runner ask). */
static inline poot_dtype poot_model_kv_dtype_default(bool paged) {
  (void)paged;
  return POOT_DTYPE_F16;
}

/* Whether `dtype` is a K/V cache type (f32, f16 or q8_0; the trace also
 * needs head_dim a multiple of 32 for q8_0). The one list of them. */
static inline bool poot_model_kv_dtype_ok(poot_dtype dtype) {
  return dtype == POOT_DTYPE_F32 || dtype == POOT_DTYPE_F16 || dtype == POOT_DTYPE_Q8_0;
}

/* Traces the graph of `step` for `config` and verifies it. `options` may be
 * NULL. INVALID_ARGUMENT for an inconsistent config or step; UNSUPPORTED
 * for a family feature that cannot be traced; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_model_trace(const poot_model_config *config,
                                           const poot_model_step *step,
                                           const poot_model_trace_options *options,
                                           poot_graph **out_graph);

/* The rotary inverse frequencies of a layer (rope_dims / 2 of them), as
 * Hugging Face computes them in f32 with the config's scaling; LONGROPE's
 * long table when `long_table`, else its short (or only) table. Gemma 3's
 * local layers (`local_layer`) use rope_theta_local and no scaling. */
/* The sequence length past which a runner recomputes the whole KV cache, or
 * 0. LONGROPE (Phi-3) switches to its long factors for every position once a
 * sequence grows past the original context; transformers then drops its
 * cache and runs the whole sequence again (Phi3ForCausalLM.
 * prepare_inputs_for_generation), so the keys cached before the switch are
 * rotated with the long factors too. A runner that reaches this length
 * with a cache computed at or below it does the same. */
int64_t poot_model_rope_restart_length(const poot_model_config *config);

/* "none", "linear", "llama3", "longrope", "freqs", "yarn", "dynamic" ("?"
 * for an invalid value): the name the rope composite's attributes carry. */
const char *poot_model_rope_scaling_name(poot_model_rope_scaling scaling);

/* The sequence length past which a runner feeds a multi-token step (a
 * prompt) in one pass rather than in chunks, or 0. DYNAMIC (and LONGROPE)
 * choose their frequencies from the length of the forward pass each token is
 * in, as transformers runs a prompt: one pass over the whole prompt. */
int64_t poot_model_rope_whole_pass_length(const poot_model_config *config);

void poot_model_rope_inv_freq(const poot_model_config *config, bool local_layer, bool long_table,
                              float *out);

/* The K/V state names of layer `layer` ("blk.3.k", "blk.3.v") into buf. */
void poot_model_kv_state_name(int64_t layer, bool value, char *buf, size_t buf_size);

/* --------------------------------------------------------------- registry */

typedef struct poot_model poot_model;

typedef struct poot_model_open_options {
  /* llama2.c: the tokenizer file (required for text); otherwise an optional
   * override of the model's own tokenizer. */
  const char *tokenizer_path;
  /* Open without a tokenizer (tests of the graph alone). */
  bool skip_tokenizer;
} poot_model_open_options;

/* Opens a GGUF file, a safetensors folder with config.json, or a llama2.c
 * checkpoint; detects its format and family; reads the config, the weight
 * map, the tokenizer and the chat template (when the model has one).
 * `options` may be NULL. NOT_FOUND/IO/FORMAT from the readers; UNSUPPORTED
 * naming the architecture string for an unknown architecture;
 * INVALID_ARGUMENT for a llama2.c checkpoint without a tokenizer path (unless
 * skip_tokenizer). */
POOT_MUST_USE poot_status poot_model_open(const char *path, const poot_model_open_options *options,
                                          poot_model **out_model);
void poot_model_destroy(poot_model *model); /* NULL-safe */

/* Borrowed accessors, valid until poot_model_destroy. */
const poot_model_config *poot_model_get_config(const poot_model *model);
const poot_store *poot_model_get_store(const poot_model *model);
const poot_weight_map *poot_model_get_weight_map(const poot_model *model);
poot_store_format poot_model_get_format(const poot_model *model);
/* NULL when opened with skip_tokenizer. */
const poot_tokenizer *poot_model_get_tokenizer(const poot_model *model);
/* NULL when the model has no chat template. */
const poot_chat_template *poot_model_get_chat_template(const poot_model *model);
/* Token ids at which generation stops (EOS and end-of-turn ids; for a
 * llama2.c checkpoint, BOS, as llama2.c's runner does). Borrowed. */
const poot_token *poot_model_get_stop_ids(const poot_model *model, size_t *out_count);
/* True when `id` ends generation: a stop id above, or (except for llama2.c
 * checkpoints) a token the tokenizer calls end-of-generation. */
bool poot_model_is_stop(const poot_model *model, poot_token id);
/* The BOS/EOS text the chat template receives ("" when none). */
const char *poot_model_get_bos_text(const poot_model *model);
const char *poot_model_get_eos_text(const poot_model *model);

/* Trace options that type each weight as the model's store holds it. */
poot_model_trace_options poot_model_trace_options_for(const poot_model *model);

/* The tensor bound to a graph Weight leaf (its identity, node->weight: the
 * key finds the role in the model's weight map, the name is for messages),
 * as a host tensor of exactly the leaf's type. The data is borrowed from the
 * mapping (or from an aligned copy the model keeps when the file's data is
 * not aligned for its dtype). NOT_FOUND when the map or the store lacks it;
 * FORMAT when its dtype or shape differs from `type`. */
POOT_MUST_USE poot_status poot_model_weight_tensor(poot_model *model, const poot_weight_id *id,
                                                   const poot_type *type, poot_tensor *out_tensor);

/* Checks that the model file at `path` opens and can run, with the checks
 * the loader applies and no device: poot_model_open (format, config,
 * tokenizer, template), the config's validation and a traced one-token
 * decode step whose every weight resolves to a stored tensor of the right
 * dtype and size. The statuses of poot_model_open and poot_model_trace;
 * NOT_FOUND naming a missing tensor; FORMAT for a mismatched one. */
POOT_MUST_USE poot_status poot_model_check_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_MODEL_H */
