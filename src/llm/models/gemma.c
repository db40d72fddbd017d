/* gemma.c — Gemma 1, 2 and 3 (text).
 *  - embeddings times sqrt(hidden_size) rounded to f32 (Hugging Face's
 *    `tensor(hidden_size ** 0.5, dtype)`);
 *  - RMSNorm scaling by (1 + w) (llama.cpp's converter adds the 1 to GGUF
 *    norm weights, so GGUF files scale by w);
 *  - GeGLU with the tanh gelu; tied classifier;
 *  - Gemma 2/3: norms after attention and after the MLP as well as before
 *    (HF post_attention_layernorm is GGUF attn_post_norm and HF
 *    pre_feedforward_layernorm is ffn_norm), queries scaled by
 *    query_pre_attn_scalar^-0.5, alternating local (sliding) and global
 *    layers;
 *  - Gemma 2: attention logits and final logits soft-capped (tanh(x/c)*c);
 *    even layers are local;
 *  - Gemma 3: per-head q/k norm, local layers use rope_local_base_freq and no
 *    scaling, a layer is global when (i + 1) % sliding_window_pattern == 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

static void gemma_defaults(poot_model_config *c) {
  c->activation = POOT_MODEL_ACT_GELU_TANH;
  c->embed_scale = true;
  c->norm_plus_one = true;
  c->tied_output = true;
  c->norm_eps = 1e-6;
}

static void gemma2_defaults(poot_model_config *c) {
  gemma_defaults(c);
  c->post_norms = true;
}

static void gemma3_defaults(poot_model_config *c) {
  gemma2_defaults(c);
  c->qk_norm = true;
  c->rope_theta_local = 10000.0;
  c->rope_local_unscaled = true;
}

static poot_status gemma_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  c->tied_output = true; /* Gemma's classifier is always the embedding */
  if (hf->attention_bias)
    return poot__hf_unsupported(hf, "attention_bias", "is true (no q/k/v/o biases in Gemma)");
  return NULL;
}

/* Gemma 2/3: the query scale and the soft-caps. */
static poot_status gemma2_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  POOT_TRY(gemma_from_hf(hf, c));
  if (hf->query_pre_attn_scalar > 0) c->attn_scale = pow(hf->query_pre_attn_scalar, -0.5);
  if (hf->attn_logit_softcapping > 0) c->attn_softcap = hf->attn_logit_softcapping;
  if (hf->final_logit_softcapping > 0) c->final_softcap = hf->final_logit_softcapping;
  return NULL;
}

/* Without `layer_types`: Gemma 2 slides on even layers, Gemma 3 on all but
 * every `sliding_window_pattern`-th (6). */
static void gemma2_sliding_default(const poot_hf_config *hf, poot_model_config *c) {
  (void)hf;
  for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = (i % 2) == 0;
  c->any_layer_sliding_marked = true;
}

static void gemma3_sliding_default(const poot_hf_config *hf, poot_model_config *c) {
  int64_t p = hf->sliding_window_pattern >= 1 ? hf->sliding_window_pattern : 6;
  for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = ((i + 1) % p) != 0;
  c->any_layer_sliding_marked = true;
}

static poot_status gemma_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                   poot_model_config *c) {
  (void)store;
  c->norm_plus_one = false; /* llama.cpp's converter already added 1 */
  c->tied_output = poot_gguf_find_tensor(g, "output.weight") == NULL;
  double v = 0;
  if (poot__gguf_arch_f64(g, arch, "attn_logit_softcapping", &v) && v > 0) c->attn_softcap = v;
  if (poot__gguf_arch_f64(g, arch, "final_logit_softcapping", &v) && v > 0) c->final_softcap = v;
  /* llama.cpp derives the query scale from head_dim; a file may state it. */
  if (poot__gguf_arch_f64(g, arch, "attention.scale", &v) && v > 0) c->attn_scale = v;
  return NULL;
}

static bool gemma_weight_name(const poot_model_config *c, poot_weight_naming naming,
                              const poot_weight_ref *ref, char *buf, size_t n) {
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C) return false;
  if (naming == POOT_WEIGHT_NAMING_GGUF && ref->layer >= 0 &&
      (ref->role == POOT_WEIGHT_ATTN_POST_NORM || ref->role == POOT_WEIGHT_FFN_POST_NORM)) {
    /* llama.cpp's names for Gemma 2/3's post-norms. */
    int k =
        snprintf(buf, n, "blk.%d.%s.weight", (int)ref->layer,
                 ref->role == POOT_WEIGHT_ATTN_POST_NORM ? "post_attention_norm" : "post_ffw_norm");
    return k > 0 && (size_t)k < n;
  }
  if (naming == POOT_WEIGHT_NAMING_HF && c->post_norms) {
    const char *fmt = NULL;
    switch (ref->role) {
      case POOT_WEIGHT_ATTN_POST_NORM:
        fmt = "model.layers.%d.post_attention_layernorm.weight";
        break;
      case POOT_WEIGHT_FFN_NORM:
        fmt = "model.layers.%d.pre_feedforward_layernorm.weight";
        break;
      case POOT_WEIGHT_FFN_POST_NORM:
        fmt = "model.layers.%d.post_feedforward_layernorm.weight";
        break;
      default:
        break;
    }
    if (fmt) {
      int k = snprintf(buf, n, fmt, (int)ref->layer);
      return k > 0 && (size_t)k < n;
    }
  }
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_gemma[] = {"gemma", NULL};
static const char *const hf_gemma[] = {"GemmaForCausalLM", NULL};
static const char *const types_gemma[] = {"gemma", NULL};
static const char *const gguf_gemma2[] = {"gemma2", NULL};
static const char *const hf_gemma2[] = {"Gemma2ForCausalLM", NULL};
static const char *const types_gemma2[] = {"gemma2", NULL};
static const char *const gguf_gemma3[] = {"gemma3", NULL};
static const char *const hf_gemma3[] = {"Gemma3ForCausalLM", NULL};
static const char *const types_gemma3[] = {"gemma3_text", NULL};

const poot__family poot__family_gemma = {
    .family = POOT_MODEL_FAMILY_GEMMA,
    .gguf_archs = gguf_gemma,
    .hf_archs = hf_gemma,
    .hf_model_types = types_gemma,
    .defaults = gemma_defaults,
    .from_hf = gemma_from_hf,
    .from_gguf = gemma_from_gguf,
    .weight_name = gemma_weight_name,
};

const poot__family poot__family_gemma2 = {
    .family = POOT_MODEL_FAMILY_GEMMA2,
    .gguf_archs = gguf_gemma2,
    .hf_archs = hf_gemma2,
    .hf_model_types = types_gemma2,
    .defaults = gemma2_defaults,
    .from_hf = gemma2_from_hf,
    .sliding_default = gemma2_sliding_default,
    .from_gguf = gemma_from_gguf,
    .weight_name = gemma_weight_name,
};

const poot__family poot__family_gemma3 = {
    .family = POOT_MODEL_FAMILY_GEMMA3,
    .gguf_archs = gguf_gemma3,
    .hf_archs = hf_gemma3,
    .hf_model_types = types_gemma3,
    .defaults = gemma3_defaults,
    .from_hf = gemma2_from_hf,
    .sliding_default = gemma3_sliding_default,
    .from_gguf = gemma_from_gguf,
    .weight_name = gemma_weight_name,
};
