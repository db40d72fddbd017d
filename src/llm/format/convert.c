/* `poot convert`: llama2.c checkpoints and Hugging Face safetensors folders
 * to GGUF, tensors streamed row by row through the GGUF writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_impl.h"
#include "poot/llm/convert.h"
#include "poot/llm/model.h"
#include "poot/llm/store.h"
#include "poot/llm/weight_map.h"
#include "poot/quant.h"

int poot_convert_file_type(poot_gguf_type type) {
  switch (type) {
    case POOT_GGUF_TYPE_F32:
      return 0;
    case POOT_GGUF_TYPE_F16:
      return 1;
    case POOT_GGUF_TYPE_Q4_0:
      return 2;
    case POOT_GGUF_TYPE_Q4_1:
      return 3;
    case POOT_GGUF_TYPE_Q8_0:
      return 7;
    case POOT_GGUF_TYPE_Q5_0:
      return 8;
    case POOT_GGUF_TYPE_Q5_1:
      return 9;
    case POOT_GGUF_TYPE_Q4_K:
      return 14; /* MOSTLY_Q4_K_S: the uniform k-quants carry the _S labels */
    case POOT_GGUF_TYPE_Q5_K:
      return 16;
    case POOT_GGUF_TYPE_Q6_K:
      return 18;
    case POOT_GGUF_TYPE_BF16:
      return 32;
    default:
      return -1;
  }
}

/* One output tensor: where its rows come from and how they are encoded. */
typedef struct plan_tensor {
  const poot_store_tensor *src;
  char gguf_name[128];
  poot_gguf_type type;
  uint64_t rows, cols;
  uint32_t permute_heads;             /* 0: none; else llama.cpp's Q/K permutation */
  bool copy;                          /* written byte for byte (same type) */
  const poot_quant_format *src_codec; /* a packed source, dequantized row by row */
  bool add_one;                       /* Gemma norms: w + 1 (llama.cpp's converter) */
  const float *gen;                   /* a tensor convert computes (src NULL) */
} plan_tensor;

typedef struct plan {
  plan_tensor *tensors;
  size_t n;
  float *row; /* one f32 row */
  float *gen; /* data of the computed tensors (rope_freqs, rope factors) */
  size_t gen_len, gen_cap;
  uint64_t bytes_total, bytes_done;
  const poot_convert_options *options;
  /* What a mixture's rule needs (poot__convert_mix_type). */
  int64_t n_layers;
  bool has_output;
} plan;

/* The most rotary frequency pairs a computed rope tensor holds. */
#define POOT_CONVERT_MAX_ROPE_PAIRS 512

static poot_status oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
}

/* llama.cpp's Q/K permutation (LlamaModel.permute):
 * w.reshape(n_head, 2, n/n_head/2, …).swapaxes(1, 2): output index (h, i, j)
 * takes input index (h, j, i) along the permuted dimension of length n. */
static uint64_t permuted(uint64_t k, uint64_t n, uint32_t heads) {
  uint64_t per_head = n / heads, half = per_head / 2;
  uint64_t h = k / per_head, within = k % per_head, i = within / 2, j = within % 2;
  return h * per_head + j * half + i;
}

/* Element `k` of a float source as f32. */
static float load(const plan_tensor *t, uint64_t k) {
  const uint8_t *p = t->src->data;
  uint16_t h;
  switch (t->src->dtype) {
    case POOT_DTYPE_F32: {
      float f;
      memcpy(&f, p + k * 4, 4);
      return f;
    }
    case POOT_DTYPE_F16:
      memcpy(&h, p + k * 2, 2);
      return poot_f16_to_f32(h);
    case POOT_DTYPE_BF16:
      memcpy(&h, p + k * 2, 2);
      return poot_bf16_to_f32(h);
    default:
      return 0.0f;
  }
}

/* Reads source row `r` (after the permutation) as f32. A permuted 1-D
 * tensor (a bias) is permuted along its only dimension. */
static void read_row(const plan_tensor *t, uint64_t r, float *dst) {
  uint64_t n = t->cols;
  if (t->gen) {
    memcpy(dst, t->gen + r * n, (size_t)n * sizeof(float));
    return;
  }
  if (t->permute_heads && t->src->shape.rank == 1) {
    for (uint64_t k = 0; k < n; k++) dst[k] = load(t, permuted(k, n, t->permute_heads));
    return;
  }
  if (t->permute_heads) r = permuted(r, t->rows, t->permute_heads);
  const uint8_t *p = t->src->data;
  switch (t->src->dtype) {
    case POOT_DTYPE_F32:
      memcpy(dst, p + r * n * 4, (size_t)n * 4);
      break;
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16:
      for (uint64_t k = 0; k < n; k++) dst[k] = load(t, r * n + k);
      break;
    default:
      if (t->src_codec) {
        uint64_t row_bytes = n / t->src_codec->block_elems * t->src_codec->block_bytes;
        t->src_codec->dequantize(p + r * row_bytes, dst, (size_t)(n / t->src_codec->block_elems));
      }
      break;
  }
}

static poot_status fill_tensor(void *ctx, size_t index, void *dst, uint64_t size) {
  plan *pl = ctx;
  const plan_tensor *t = &pl->tensors[index];
  uint64_t row_bytes = 0;
  if (!poot_gguf_row_size(t->type, t->cols, &row_bytes) || row_bytes * t->rows != size)
    return poot_status_make(POOT_INTERNAL, "convert: size mismatch for '%s'", t->gguf_name);
  const poot_quant_format *q = poot_quant_format_by_ggml_type(t->type);
  uint8_t *out = dst;
  /* A kept tensor is copied whole; the loop then has nothing to do. */
  if (t->copy) memcpy(dst, t->src->data, (size_t)size);
  for (uint64_t r = 0; !t->copy && r < t->rows; r++) {
    uint8_t *o = out + r * row_bytes;
    read_row(t, r, pl->row);
    /* Gemma's (1 + w) norms, as llama.cpp's converter writes them (in f32,
     * as transformers computes 1 + w). */
    if (t->add_one)
      for (uint64_t k = 0; k < t->cols; k++) pl->row[k] += 1.0f;
    switch (t->type) {
      case POOT_GGUF_TYPE_F32:
        memcpy(o, pl->row, (size_t)row_bytes);
        break;
      case POOT_GGUF_TYPE_F16:
        for (uint64_t k = 0; k < t->cols; k++) {
          uint16_t h = poot_f32_to_f16(pl->row[k]);
          memcpy(o + k * 2, &h, 2);
        }
        break;
      case POOT_GGUF_TYPE_BF16:
        for (uint64_t k = 0; k < t->cols; k++) {
          uint16_t h = poot_f32_to_bf16(pl->row[k]);
          memcpy(o + k * 2, &h, 2);
        }
        break;
      default:
        if (!q) return poot_status_make(POOT_INTERNAL, "convert: no codec for '%s'", t->gguf_name);
        POOT_TRY(poot_quant_quantize_row(q, pl->row, (size_t)t->cols, o, (size_t)row_bytes));
    }
  }
  pl->bytes_done += size;
  if (pl->options->progress)
    pl->options->progress(pl->options->progress_ctx, index + 1, pl->n, t->gguf_name, pl->bytes_done,
                          pl->bytes_total);
  return NULL;
}

/* Adds a plan entry for a store tensor under a GGUF name. `keep` writes it
 * in its own type, byte for byte (GGUF sources only). Tensors that are not
 * floating point or a computable packed format are always kept. */
static poot_status plan_add(plan *pl, poot_gguf_writer *w, const poot_store_tensor *src,
                            const char *gguf_name, poot_gguf_type want, uint32_t permute_heads,
                            bool keep) {
  bool from_gguf = src->gguf_type >= 0;
  poot_gguf_type src_type = from_gguf ? (poot_gguf_type)src->gguf_type : POOT_GGUF_TYPE_F32;
  const poot_quant_format *codec = NULL;
  bool floaty =
      src->dtype == POOT_DTYPE_F32 || src->dtype == POOT_DTYPE_F16 || src->dtype == POOT_DTYPE_BF16;
  if (from_gguf && !floaty) {
    codec = poot_quant_format_by_ggml_type(src_type);
    if (!codec) keep = true;
  }
  if (keep && !from_gguf)
    return poot_status_make(POOT_INTERNAL, "convert: cannot keep the type of '%s'", src->name);
  if (!keep && !floaty && !codec)
    return poot_status_make(POOT_UNSUPPORTED,
                            "convert: tensor '%s' has type %s (f32, f16 or bf16 "
                            "are converted)",
                            src->name, src->type_name);
  if (src->shape.rank > POOT_GGUF_MAX_DIMS || (!keep && src->shape.rank < 1))
    return poot_status_make(POOT_UNSUPPORTED, "convert: tensor '%s' has rank %u", src->name,
                            src->shape.rank);
  plan_tensor *t = &pl->tensors[pl->n];
  memset(t, 0, sizeof *t);
  t->src = src;
  t->src_codec = codec;
  snprintf(t->gguf_name, sizeof t->gguf_name, "%s", gguf_name);
  t->cols = src->shape.rank ? (uint64_t)src->shape.dims[src->shape.rank - 1] : 1;
  t->rows = 1;
  for (uint32_t d = 0; d + 1 < src->shape.rank; d++) t->rows *= (uint64_t)src->shape.dims[d];
  /* 1-D tensors stay f32; a mixture picks per tensor; a k-quant block that
   * does not divide the row length falls back to llama.cpp's legacy
   * format, any other block to f16 (llama.cpp's converter does both). */
  if (!keep && src->shape.rank > 1 && pl->options->mixture != POOT_CONVERT_MIXTURE_NONE)
    want = poot__convert_mix_type(pl->options->mixture, gguf_name, pl->n_layers, pl->has_output);
  poot_gguf_type type = keep ? src_type : src->shape.rank == 1 ? POOT_GGUF_TYPE_F32 : want;
  t->copy = keep;
  uint64_t row_bytes = 0;
  while (!keep && !poot_gguf_row_size(type, t->cols, &row_bytes)) {
    poot_gguf_type fallback = poot__convert_k_fallback(type);
    poot_log(POOT_LOG_INFO,
             "convert: %s: %llu columns are not a multiple of the %s block; writing %s", gguf_name,
             (unsigned long long)t->cols, poot_gguf_type_info_of(type)->name,
             poot_gguf_type_info_of(fallback)->name);
    type = fallback;
  }
  t->type = type;
  uint64_t permuted_len = src->shape.rank == 1 ? t->cols : t->rows;
  if (permute_heads && (permuted_len % (2ull * permute_heads) != 0))
    return poot_status_make(POOT_FORMAT,
                            "convert: tensor '%s' permutes %llu rows, not a multiple of "
                            "2 × %u heads",
                            src->name, (unsigned long long)permuted_len, permute_heads);
  t->permute_heads = permute_heads;
  uint64_t dims[POOT_GGUF_MAX_DIMS];
  for (uint32_t d = 0; d < src->shape.rank; d++)
    dims[d] = (uint64_t)src->shape.dims[src->shape.rank - 1 - d];
  POOT_TRY(poot_gguf_writer_add_tensor(w, gguf_name, type, src->shape.rank, dims, NULL));
  uint64_t size = 0;
  poot_gguf_row_size(type, t->cols, &size);
  pl->bytes_total += size * t->rows;
  pl->n++;
  return NULL;
}

/* Adds a 1-D f32 tensor that convert computes (llama3's rope_freqs, Phi-3's
 * rope factors); `data` (n floats) is copied. The plan has room for it. */
static poot_status plan_add_generated(plan *pl, poot_gguf_writer *w, const char *gguf_name,
                                      const float *data, size_t n) {
  if (pl->gen_len + n > pl->gen_cap)
    return poot_status_make(POOT_INTERNAL, "convert: no room for '%s'", gguf_name);
  memcpy(pl->gen + pl->gen_len, data, n * sizeof(float));
  plan_tensor *t = &pl->tensors[pl->n];
  memset(t, 0, sizeof *t);
  t->gen = pl->gen + pl->gen_len;
  pl->gen_len += n;
  snprintf(t->gguf_name, sizeof t->gguf_name, "%s", gguf_name);
  t->rows = 1;
  t->cols = n;
  t->type = POOT_GGUF_TYPE_F32;
  uint64_t dims[1] = {n};
  POOT_TRY(poot_gguf_writer_add_tensor(w, gguf_name, POOT_GGUF_TYPE_F32, 1, dims, NULL));
  pl->bytes_total += n * sizeof(float);
  pl->n++;
  return NULL;
}

static poot_status set_str(poot_gguf_writer *w, const char *key, const char *value) {
  return poot_gguf_writer_set_string(w, key, value, strlen(value));
}

static poot_status set_arch_u32(poot_gguf_writer *w, const char *arch, const char *key, int64_t v) {
  char k[128];
  snprintf(k, sizeof k, "%s.%s", arch, key);
  return poot_gguf_writer_set_u32(w, k, (uint32_t)v);
}

static poot_status set_arch_f32(poot_gguf_writer *w, const char *arch, const char *key, double v) {
  char k[128];
  snprintf(k, sizeof k, "%s.%s", arch, key);
  return poot_gguf_writer_set_f32(w, k, (float)v);
}

/* llama.cpp's general.file_type of the output: the mixture's, else the
 * type's. */
static uint32_t file_type_of(const poot_convert_options *o, poot_gguf_type type) {
  int ft = o->mixture != POOT_CONVERT_MIXTURE_NONE ? poot_convert_mixture_file_type(o->mixture)
                                                   : poot_convert_file_type(type);
  return (uint32_t)ft;
}

static poot_status set_common(poot_gguf_writer *w, const char *name, uint32_t file_type) {
  POOT_TRY(set_str(w, "general.name", name));
  POOT_TRY(poot_gguf_writer_set_u32(w, "general.file_type", file_type));
  return poot_gguf_writer_set_u32(w, "general.quantization_version", 2);
}

/* ---------------------------------------------------------------- llama2.c */

static poot_status convert_llama2c(poot_store *store, poot_gguf_writer *w, plan *pl,
                                   const poot_convert_options *o, poot_gguf_type type) {
  const poot_llama2c *m = poot_store_llama2c(store);
  const poot_llama2c_config *c = poot_llama2c_config_of(m);
  if (!o->tokenizer_path)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "convert: a llama2.c checkpoint needs --tokenizer FILE");
  POOT_TRY(set_str(w, "general.architecture", "llama"));
  POOT_TRY(set_common(w, o->name ? o->name : "llama", file_type_of(o, type)));
  pl->n_layers = c->n_layers;
  pl->has_output = true; /* a shared classifier is written out as output.weight */
  POOT_TRY(set_arch_u32(w, "llama", "context_length", c->seq_len));
  POOT_TRY(set_arch_u32(w, "llama", "embedding_length", c->dim));
  POOT_TRY(set_arch_u32(w, "llama", "feed_forward_length", c->hidden_dim));
  POOT_TRY(set_arch_u32(w, "llama", "attention.head_count", c->n_heads));
  POOT_TRY(set_arch_u32(w, "llama", "attention.head_count_kv", c->n_kv_heads));
  POOT_TRY(set_arch_u32(w, "llama", "block_count", c->n_layers));
  POOT_TRY(set_arch_u32(w, "llama", "rope.dimension_count", c->dim / c->n_heads));
  POOT_TRY(set_arch_f32(w, "llama", "attention.layer_norm_rms_epsilon", 1e-5));
  POOT_TRY(set_arch_u32(w, "llama", "vocab_size", c->vocab_size));
  poot_llama2c_vocab *vocab = NULL;
  POOT_TRY(poot_llama2c_vocab_load(o->tokenizer_path, c->vocab_size, &vocab));
  poot_status s = poot__convert_vocab_llama2c(w, vocab);
  poot_llama2c_vocab_destroy(vocab);
  POOT_TRY(s);

  /* Tensors in llama.cpp's order: embedding, output norm, output, layers. */
  static const poot_weight_role layer_roles[] = {
      POOT_WEIGHT_ATTN_NORM, POOT_WEIGHT_ATTN_Q,      POOT_WEIGHT_ATTN_K,
      POOT_WEIGHT_ATTN_V,    POOT_WEIGHT_ATTN_OUTPUT, POOT_WEIGHT_FFN_NORM,
      POOT_WEIGHT_FFN_GATE,  POOT_WEIGHT_FFN_DOWN,    POOT_WEIGHT_FFN_UP};
  poot_weight_ref globals[3] = {{POOT_WEIGHT_TOKEN_EMBD, -1, NULL},
                                {POOT_WEIGHT_OUTPUT_NORM, -1, NULL},
                                {POOT_WEIGHT_OUTPUT, -1, NULL}};
  pl->tensors = poot_calloc(3 + 9 * (size_t)c->n_layers, sizeof *pl->tensors);
  if (!pl->tensors) return oom();
  for (int i = 0; i < 3; i++) {
    char src[128], dst[128];
    poot_weight_ref ref = globals[i];
    /* A shared classifier is the embedding; llama.cpp writes it out. */
    if (ref.role == POOT_WEIGHT_OUTPUT && c->shared_classifier) ref.role = POOT_WEIGHT_TOKEN_EMBD;
    poot_weight_name_llama(POOT_WEIGHT_NAMING_LLAMA2C, &ref, src, sizeof src);
    poot_weight_name_llama(POOT_WEIGHT_NAMING_GGUF, &globals[i], dst, sizeof dst);
    const poot_store_tensor *t = NULL;
    POOT_TRY(poot_store_find(store, src, &t));
    POOT_TRY(plan_add(pl, w, t, dst, type, 0, false));
  }
  for (int32_t l = 0; l < c->n_layers; l++) {
    for (size_t r = 0; r < sizeof layer_roles / sizeof layer_roles[0]; r++) {
      poot_weight_ref ref = {layer_roles[r], l, NULL};
      char src[128], dst[128];
      poot_weight_name_llama(POOT_WEIGHT_NAMING_LLAMA2C, &ref, src, sizeof src);
      poot_weight_name_llama(POOT_WEIGHT_NAMING_GGUF, &ref, dst, sizeof dst);
      const poot_store_tensor *t = NULL;
      POOT_TRY(poot_store_find(store, src, &t));
      POOT_TRY(plan_add(pl, w, t, dst, type, 0, false));
    }
  }
  return NULL;
}

/* ------------------------------------------------------------ Hugging Face */

/* What a Hugging Face architecture becomes in GGUF. */
typedef enum hf_kind {
  HF_LLAMA, /* llama, mistral (llama.cpp writes Mistral as "llama") */
  HF_QWEN2,
  HF_QWEN3,
  HF_GEMMA,
  HF_GEMMA2,
  HF_GEMMA3,
  HF_PHI3,
} hf_kind;

static const struct {
  const char *model_type;
  hf_kind kind;
  const char *arch;
} hf_archs[] = {
    {"llama", HF_LLAMA, "llama"},         {"mistral", HF_LLAMA, "llama"},
    {"qwen2", HF_QWEN2, "qwen2"},         {"qwen3", HF_QWEN3, "qwen3"},
    {"gemma", HF_GEMMA, "gemma"},         {"gemma2", HF_GEMMA2, "gemma2"},
    {"gemma3_text", HF_GEMMA3, "gemma3"}, {"phi3", HF_PHI3, "phi3"},
};

static bool is_gemma(hf_kind k) {
  return k == HF_GEMMA || k == HF_GEMMA2 || k == HF_GEMMA3;
}

/* Per-layer Hugging Face module names → llama.cpp's GGUF names. */
typedef enum hf_part { PART_OTHER, PART_Q, PART_K } hf_part;

static const struct {
  const char *hf;
  const char *gguf;
  hf_part part;
} hf_layer_names[] = {
    {"input_layernorm", "attn_norm", PART_OTHER},
    {"self_attn.q_proj", "attn_q", PART_Q},
    {"self_attn.k_proj", "attn_k", PART_K},
    {"self_attn.v_proj", "attn_v", PART_OTHER},
    {"self_attn.o_proj", "attn_output", PART_OTHER},
    {"self_attn.qkv_proj", "attn_qkv", PART_OTHER},
    {"self_attn.q_norm", "attn_q_norm", PART_OTHER},
    {"self_attn.k_norm", "attn_k_norm", PART_OTHER},
    {"post_attention_layernorm", "ffn_norm", PART_OTHER}, /* Gemma 2/3: below */
    {"pre_feedforward_layernorm", "ffn_norm", PART_OTHER},
    {"post_feedforward_layernorm", "post_ffw_norm", PART_OTHER},
    {"mlp.gate_proj", "ffn_gate", PART_OTHER},
    {"mlp.up_proj", "ffn_up", PART_OTHER},
    {"mlp.gate_up_proj", "ffn_up", PART_OTHER}, /* Phi-3: gate rows first */
    {"mlp.down_proj", "ffn_down", PART_OTHER},
};

/* The GGUF name of a Hugging Face tensor; false when it has none. */
static bool hf_to_gguf(const char *hf, hf_kind kind, int64_t n_layers, char *out, size_t out_size,
                       hf_part *out_part, bool *out_embedding) {
  *out_part = PART_OTHER;
  *out_embedding = false;
  int k = -1;
  if (strcmp(hf, "model.embed_tokens.weight") == 0) {
    *out_embedding = true;
    k = snprintf(out, out_size, "token_embd.weight");
  } else if (strcmp(hf, "model.norm.weight") == 0) {
    k = snprintf(out, out_size, "output_norm.weight");
  } else if (strcmp(hf, "lm_head.weight") == 0) {
    k = snprintf(out, out_size, "output.weight");
  } else if (strncmp(hf, "model.layers.", 13) == 0) {
    char *end = NULL;
    long layer = strtol(hf + 13, &end, 10);
    if (end == hf + 13 || *end != '.' || layer < 0 || layer >= n_layers) return false;
    const char *stem = end + 1;
    const char *dot = strrchr(stem, '.');
    if (!dot || (strcmp(dot, ".weight") != 0 && strcmp(dot, ".bias") != 0)) return false;
    size_t stem_len = (size_t)(dot - stem);
    for (size_t i = 0; i < sizeof hf_layer_names / sizeof hf_layer_names[0]; i++) {
      const char *h = hf_layer_names[i].hf;
      if (strlen(h) != stem_len || memcmp(h, stem, stem_len) != 0) continue;
      const char *g = hf_layer_names[i].gguf;
      /* Gemma 2/3: post_attention_layernorm follows attention. */
      if ((kind == HF_GEMMA2 || kind == HF_GEMMA3) && strcmp(h, "post_attention_layernorm") == 0)
        g = "post_attention_norm";
      *out_part = hf_layer_names[i].part;
      k = snprintf(out, out_size, "blk.%ld.%s%s", layer, g, dot);
      break;
    }
  }
  return k > 0 && (size_t)k < out_size;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* llama.cpp's rope_freqs for llama3 scaling (LlamaModel.generate_extra_tensors):
 * per frequency the divisor 1, factor, or 1 / ((1 - smooth) / factor + smooth),
 * over the f32 inverse frequencies 1 / theta^(2i / dims); in f32 as there
 * (each frequency is a float32 tensor, and Python numbers meet it as float32),
 * so that the tensor is byte-identical to llama.cpp's. */
static void llama3_rope_freqs(const poot_model_config *c, float *out) {
  float factor = (float)c->rope_factor, lo = (float)c->rope_low_freq_factor;
  float span = (float)(c->rope_high_freq_factor - c->rope_low_freq_factor);
  float old = (float)c->rope_original_context;
  float lo_wl = (float)((double)c->rope_original_context / c->rope_low_freq_factor);
  float hi_wl = (float)((double)c->rope_original_context / c->rope_high_freq_factor);
  float base = (float)c->rope_theta;
  int64_t dims = c->rope_dims;
  for (int64_t i = 0; i < dims / 2; i++) {
    float freq = 1.0f / powf(base, (float)(2 * i) / (float)dims);
    float wl = (float)(2.0 * M_PI) / freq;
    if (wl < hi_wl) {
      out[i] = 1.0f;
    } else if (wl > lo_wl) {
      out[i] = factor;
    } else {
      float smooth = (old / wl - lo) / span;
      out[i] = 1.0f / ((1.0f - smooth) / factor + smooth);
    }
  }
}

/* Which layers slide, as llama.cpp's `attention.sliding_window_pattern`
 * bool array (written when the config marks layers). */
static poot_status sliding_metadata(const poot_model_config *c, const char *arch,
                                    poot_gguf_writer *w) {
  if (c->sliding_window <= 0) return NULL;
  POOT_TRY(set_arch_u32(w, arch, "attention.sliding_window", c->sliding_window));
  if (!c->any_layer_sliding_marked) return NULL;
  bool sliding[POOT_MODEL_MAX_LAYERS];
  for (int64_t i = 0; i < c->n_layers; i++) sliding[i] = c->layer_sliding[i] != 0;
  char key[128];
  snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", arch);
  return poot_gguf_writer_set_array(w, key, POOT_GGUF_VALUE_BOOL, sliding, (size_t)c->n_layers);
}

/* The rope scaling, as llama.cpp's converter writes it: linear and yarn as
 * keys, llama3 as the rope_freqs tensor, longrope as two factor tensors.
 * Dynamic NTK has no GGUF form (llama.cpp's converter drops it, and the file
 * would then run unscaled past the original context): refused. */
static poot_status rope_metadata(const poot_model_config *c, const char *arch,
                                 poot_gguf_writer *w, plan *pl) {
  char k[96];
  snprintf(k, sizeof k, "%s.rope.scaling.type", arch);
  size_t half = (size_t)(c->rope_dims / 2);
  switch (c->rope_scaling) {
    case POOT_MODEL_ROPE_SCALING_NONE:
    case POOT_MODEL_ROPE_SCALING_FREQS:
      return NULL;
    case POOT_MODEL_ROPE_SCALING_LINEAR:
      POOT_TRY(set_str(w, k, "linear"));
      return set_arch_f32(w, arch, "rope.scaling.factor", c->rope_factor);
    case POOT_MODEL_ROPE_SCALING_YARN: {
      POOT_TRY(set_str(w, k, "yarn"));
      POOT_TRY(set_arch_f32(w, arch, "rope.scaling.factor", c->rope_factor));
      POOT_TRY(set_arch_u32(w, arch, "rope.scaling.original_context_length",
                            c->rope_original_context));
      if (c->rope_beta_fast != 32.0)
        POOT_TRY(set_arch_f32(w, arch, "rope.scaling.yarn_beta_fast", c->rope_beta_fast));
      if (c->rope_beta_slow != 1.0)
        POOT_TRY(set_arch_f32(w, arch, "rope.scaling.yarn_beta_slow", c->rope_beta_slow));
      /* Only an attention factor other than YaRN's own 0.1 ln(factor) + 1. */
      double derived = c->rope_factor <= 1.0 ? 1.0 : 0.1 * log(c->rope_factor) + 1.0;
      if (fabs(c->rope_attn_factor - derived) > 1e-9 * derived)
        POOT_TRY(set_arch_f32(w, arch, "rope.scaling.yarn_attn_factor", c->rope_attn_factor));
      if (c->rope_yarn_no_truncate)
        return poot_status_make(POOT_UNSUPPORTED,
                                "convert: yarn rope with truncate=false has no GGUF form");
      return NULL;
    }
    case POOT_MODEL_ROPE_SCALING_LLAMA3: {
      float freqs[POOT_MODEL_MAX_ROPE_PAIRS];
      llama3_rope_freqs(c, freqs);
      return plan_add_generated(pl, w, "rope_freqs.weight", freqs, half);
    }
    case POOT_MODEL_ROPE_SCALING_LONGROPE: {
      POOT_TRY(set_str(w, k, "longrope"));
      double attn = c->rope_attn_factor;
      if (!(attn > 0))
        attn = c->rope_factor > 1.0 && c->rope_original_context > 1
                   ? sqrt(1.0 + log(c->rope_factor) / log((double)c->rope_original_context))
                   : 1.0;
      POOT_TRY(set_arch_u32(w, arch, "rope.scaling.original_context_length",
                            c->rope_original_context));
      POOT_TRY(set_arch_f32(w, arch, "rope.scaling.attn_factor", attn));
      POOT_TRY(plan_add_generated(pl, w, "rope_factors_long.weight", c->rope_long_factors, half));
      return plan_add_generated(pl, w, "rope_factors_short.weight", c->rope_short_factors, half);
    }
    case POOT_MODEL_ROPE_SCALING_DYNAMIC:
      return poot_status_make(POOT_UNSUPPORTED,
                              "convert: dynamic (NTK) rope scaling has no GGUF form; the file "
                              "would run unscaled past %lld positions",
                              (long long)c->rope_original_context);
  }
  return NULL;
}

/* The hyperparameters under `<arch>.`, as llama.cpp's converter writes them,
 * from the model config the loader itself builds from config.json (one
 * reader, and the same validation as loading); computed tensors (rope_freqs,
 * rope factors) are added to the plan. */
static poot_status hf_metadata(const poot_model_config *c, const char *arch,
                               poot_gguf_writer *w, plan *pl) {
  if (c->context_length > 0) POOT_TRY(set_arch_u32(w, arch, "context_length", c->context_length));
  POOT_TRY(set_arch_u32(w, arch, "embedding_length", c->hidden_size));
  POOT_TRY(set_arch_u32(w, arch, "feed_forward_length", c->intermediate_size));
  POOT_TRY(set_arch_u32(w, arch, "block_count", c->n_layers));
  POOT_TRY(set_arch_u32(w, arch, "attention.head_count", c->n_heads));
  POOT_TRY(set_arch_u32(w, arch, "attention.head_count_kv", c->n_kv_heads));
  /* The global layers' base (Gemma 3's sliding layers: freq_base_swa). */
  POOT_TRY(set_arch_f32(w, arch, "rope.freq_base", c->rope_theta));
  if (c->rope_theta_local > 0 && c->sliding_window > 0)
    POOT_TRY(set_arch_f32(w, arch, "rope.freq_base_swa", c->rope_theta_local));
  POOT_TRY(set_arch_f32(w, arch, "attention.layer_norm_rms_epsilon", c->norm_eps));
  POOT_TRY(set_arch_u32(w, arch, "rope.dimension_count", c->rope_dims));
  POOT_TRY(set_arch_u32(w, arch, "attention.key_length", c->head_dim));
  POOT_TRY(set_arch_u32(w, arch, "attention.value_length", c->head_dim));
  POOT_TRY(sliding_metadata(c, arch, w));
  if (c->attn_softcap > 0) POOT_TRY(set_arch_f32(w, arch, "attn_logit_softcapping", c->attn_softcap));
  if (c->final_softcap > 0)
    POOT_TRY(set_arch_f32(w, arch, "final_logit_softcapping", c->final_softcap));
  /* llama.cpp derives the query scale from head_dim; transformers uses
   * query_pre_attn_scalar^-0.5, so the file states it. */
  if (c->attn_scale > 0) POOT_TRY(set_arch_f32(w, arch, "attention.scale", c->attn_scale));
  return rope_metadata(c, arch, w, pl);
}

static poot_status convert_hf(poot_store *store, const char *folder, poot_gguf_writer *w, plan *pl,
                              const poot_convert_options *o, poot_gguf_type type) {
  char path[4200];
  snprintf(path, sizeof path, "%s/config.json", folder);
  poot_hf_config *c = NULL;
  POOT_TRY(poot_hf_config_load(path, &c));
  poot_status s = NULL;
  const char *mt = c->model_type ? c->model_type : "?";
  const char *arch = NULL;
  hf_kind kind = HF_LLAMA;
  for (size_t i = 0; i < sizeof hf_archs / sizeof hf_archs[0]; i++) {
    if (strcmp(mt, hf_archs[i].model_type) == 0) {
      arch = hf_archs[i].arch;
      kind = hf_archs[i].kind;
    }
  }
  if (!arch) {
    s = poot_status_make(POOT_UNSUPPORTED,
                         "convert: model_type '%s' is not supported (llama, mistral, qwen2, "
                         "qwen3, gemma, gemma2, gemma3_text, phi3 are)",
                         mt);
    goto done;
  }
  /* The loader's own reading and checks: what is written loads. */
  poot_model_config mc;
  if ((s = poot_model_config_from_hf(c, &mc))) {
    s = poot_status_annotate(s, "convert: '%s'", path);
    goto done;
  }
  const char *name = o->name;
  if (!name) {
    const char *slash = strrchr(folder, '/');
    name = slash && slash[1] ? slash + 1 : folder;
  }
  size_t n = poot_store_tensor_count(store);
  pl->tensors = poot_calloc(n + 2, sizeof *pl->tensors);
  pl->gen_cap = 2 * POOT_CONVERT_MAX_ROPE_PAIRS;
  pl->gen = poot_calloc(pl->gen_cap, sizeof(float));
  if (!pl->tensors || !pl->gen) {
    s = oom();
    goto done;
  }
  if ((s = set_str(w, "general.architecture", arch))) goto done;
  if ((s = set_common(w, name, file_type_of(o, type)))) goto done;
  pl->n_layers = c->num_hidden_layers;
  {
    const poot_store_tensor *head = NULL;
    poot_status fs = poot_store_find(store, "lm_head.weight", &head);
    pl->has_output = !fs && !is_gemma(kind);
    poot_status_free(fs);
  }
  /* Computed tensors come first, as in llama.cpp (generate_extra_tensors). */
  if ((s = hf_metadata(&mc, arch, w, pl))) goto done;
  uint32_t n_tokens = 0;
  if ((s = poot__convert_vocab_hf(w, folder, c, &n_tokens))) goto done;
  if ((s = set_arch_u32(w, arch, "vocab_size", n_tokens))) goto done;

  /* llama.cpp's order: the embedding first, then the rest as found. */
  for (int pass = 0; pass < 2 && !s; pass++) {
    for (size_t i = 0; i < n && !s; i++) {
      const poot_store_tensor *t = poot_store_tensor_at(store, i);
      if (ends_with(t->name, "rotary_emb.inv_freq")) continue;
      /* Gemma's classifier is the embedding; llama.cpp skips lm_head. */
      if (is_gemma(kind) && strcmp(t->name, "lm_head.weight") == 0) continue;
      char gguf_name[128];
      hf_part part;
      bool embedding;
      if (!hf_to_gguf(t->name, kind, c->num_hidden_layers, gguf_name, sizeof gguf_name, &part,
                      &embedding)) {
        s = poot_status_make(POOT_UNSUPPORTED, "convert: cannot map tensor '%s' to a GGUF name",
                             t->name);
        break;
      }
      if ((pass == 0) != embedding) continue;
      uint32_t heads = 0;
      if (kind == HF_LLAMA && part == PART_Q) heads = (uint32_t)c->num_attention_heads;
      if (kind == HF_LLAMA && part == PART_K) heads = (uint32_t)c->num_key_value_heads;
      s = plan_add(pl, w, t, gguf_name, type, heads, false);
      if (!s && is_gemma(kind) && ends_with(t->name, "norm.weight"))
        pl->tensors[pl->n - 1].add_one = true;
    }
  }
done:
  poot_hf_config_destroy(c);
  return s;
}

/* ------------------------------------------------------------------- GGUF */

/* GGUF in: every metadata value is carried over unchanged and in order
 * (general.file_type follows --type, general.name follows --name); tensors
 * keep their names and order; without --type each keeps its own type, byte
 * for byte, so the output equals the input. */
static poot_status convert_gguf(poot_store *store, poot_gguf_writer *w, plan *pl,
                                const poot_convert_options *o) {
  const poot_gguf *g = poot_store_gguf(store);
  for (size_t i = 0; i < poot_gguf_kv_count(g); i++) {
    const char *key = poot_gguf_kv_key(g, i);
    POOT_TRY(poot_gguf_writer_set_value(w, key, poot_gguf_kv_value(g, i)));
    if (strcmp(key, "general.alignment") == 0 &&
        poot_gguf_alignment(g) != POOT_GGUF_DEFAULT_ALIGNMENT)
      POOT_TRY(poot_gguf_writer_set_alignment(w, poot_gguf_alignment(g)));
  }
  if (o->name) POOT_TRY(set_str(w, "general.name", o->name));
  bool retype = o->type_set || o->mixture != POOT_CONVERT_MIXTURE_NONE;
  if (retype) POOT_TRY(poot_gguf_writer_set_u32(w, "general.file_type", file_type_of(o, o->type)));
  size_t n = poot_store_tensor_count(store);
  /* The mixture's layer count and output: from the tensor names. */
  for (size_t i = 0; i < n; i++) {
    const char *name = poot_store_tensor_at(store, i)->name;
    if (strcmp(name, "output.weight") == 0) pl->has_output = true;
    char *end = NULL;
    long layer = strncmp(name, "blk.", 4) == 0 ? strtol(name + 4, &end, 10) : -1;
    if (layer >= 0 && end && *end == '.' && layer + 1 > pl->n_layers) pl->n_layers = layer + 1;
  }
  pl->tensors = poot_calloc(n ? n : 1, sizeof *pl->tensors);
  if (!pl->tensors) return oom();
  for (size_t i = 0; i < n; i++) {
    const poot_store_tensor *t = poot_store_tensor_at(store, i);
    POOT_TRY(plan_add(pl, w, t, t->name, o->type, 0, !retype));
  }
  return NULL;
}

/* The source's float type when every tensor shares it; f32 otherwise. */
static poot_gguf_type lossless_type(const poot_store *store) {
  poot_dtype common = POOT_DTYPE_NONE;
  for (size_t i = 0; i < poot_store_tensor_count(store); i++) {
    const poot_store_tensor *t = poot_store_tensor_at(store, i);
    if (t->shape.rank < 2) continue;
    if (common == POOT_DTYPE_NONE)
      common = t->dtype;
    else if (common != t->dtype)
      return POOT_GGUF_TYPE_F32;
  }
  return common == POOT_DTYPE_F16    ? POOT_GGUF_TYPE_F16
         : common == POOT_DTYPE_BF16 ? POOT_GGUF_TYPE_BF16
                                     : POOT_GGUF_TYPE_F32;
}

poot_status poot_convert_to_gguf(const char *input, const char *output,
                                 const poot_convert_options *options) {
  poot_convert_options defaults = {0};
  const poot_convert_options *o = options ? options : &defaults;
  if (o->type_set && o->mixture == POOT_CONVERT_MIXTURE_NONE && poot_convert_file_type(o->type) < 0)
    return poot_status_make(
        POOT_INVALID_ARGUMENT, "convert: type %s is not written (%s are)",
        poot_gguf_type_info_of(o->type) ? poot_gguf_type_info_of(o->type)->name : "?",
        POOT__CONVERT_TYPE_NAMES);
  if (poot_convert_mixture_file_type(o->mixture) < 0 && o->mixture != POOT_CONVERT_MIXTURE_NONE)
    return poot_status_make(POOT_INVALID_ARGUMENT, "convert: unknown mixture %d", (int)o->mixture);
  poot_store *store = NULL;
  POOT_TRY(poot_store_open(input, &store));
  poot_gguf_writer *w = NULL;
  plan pl = {.options = o};
  poot_status s = poot_gguf_writer_create(&w);
  if (s) goto done;
  poot_gguf_type type = o->type_set ? o->type : lossless_type(store);
  if (o->mixture == POOT_CONVERT_MIXTURE_Q4_K_M) type = POOT_GGUF_TYPE_Q4_K;
  if (o->mixture == POOT_CONVERT_MIXTURE_Q5_K_M) type = POOT_GGUF_TYPE_Q5_K;
  switch (poot_store_format_of(store)) {
    case POOT_STORE_FORMAT_LLAMA2C:
      s = convert_llama2c(store, w, &pl, o, type);
      break;
    case POOT_STORE_FORMAT_SAFETENSORS: {
      struct stat sb;
      char folder[4096];
      snprintf(folder, sizeof folder, "%s", input);
      if (stat(input, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        char *slash = strrchr(folder, '/');
        if (slash)
          *slash = 0;
        else
          snprintf(folder, sizeof folder, ".");
      }
      size_t len = strlen(folder);
      while (len > 1 && folder[len - 1] == '/') folder[--len] = 0;
      s = convert_hf(store, folder, w, &pl, o, type);
      break;
    }
    case POOT_STORE_FORMAT_GGUF:
      s = convert_gguf(store, w, &pl, o);
      break;
    default:
      s = poot_status_make(POOT_UNSUPPORTED, "convert: '%s': unknown format", input);
  }
  if (s) goto done;
  uint64_t max_cols = 1;
  for (size_t i = 0; i < pl.n; i++)
    if (pl.tensors[i].cols > max_cols) max_cols = pl.tensors[i].cols;
  pl.row = poot_calloc((size_t)max_cols, sizeof(float));
  if (!pl.row) {
    s = oom();
    goto done;
  }
  poot_gguf_writer_set_source(w, fill_tensor, &pl);
  s = poot__convert_write_checked(w, input, poot_store_format_of(store) == POOT_STORE_FORMAT_GGUF,
                                  output);
done:
  poot_free(pl.row);
  poot_free(pl.gen);
  poot_free(pl.tensors);
  poot_gguf_writer_destroy(w);
  poot_store_destroy(store);
  return s;
}
