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

static poot_status gemma_from_hf(const poot_hf_config *hf, const poot_json *text,
                                 poot_model_config *c) {
  (void)hf;
  (void)text;
  c->tied_output = true;
  return NULL;
}

static void query_scale(const poot_json *text, poot_model_config *c) {
  double q = 0;
  if (poot__json_number(text, "query_pre_attn_scalar", &q) && q > 0) c->attn_scale = pow(q, -0.5);
}

static poot_status gemma2_from_hf(const poot_hf_config *hf, const poot_json *text,
                                  poot_model_config *c) {
  (void)hf;
  c->tied_output = true;
  query_scale(text, c);
  double v = 0;
  if (poot__json_number(text, "attn_logit_softcapping", &v) && v > 0) c->attn_softcap = v;
  if (poot__json_number(text, "final_logit_softcapping", &v) && v > 0) c->final_softcap = v;
  if (poot__json_number(text, "sliding_window", &v) && v > 0) {
    c->sliding_window = (int64_t)v;
    if (!poot__hf_layer_types(text, c)) {
      for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = (i % 2) == 0;
      c->any_layer_sliding_marked = true;
    }
  }
  return NULL;
}

static poot_status gemma3_from_hf(const poot_hf_config *hf, const poot_json *text,
                                  poot_model_config *c) {
  (void)hf;
  c->tied_output = true;
  query_scale(text, c);
  double v = 0;
  if (poot__json_number(text, "attn_logit_softcapping", &v) && v > 0) c->attn_softcap = v;
  if (poot__json_number(text, "final_logit_softcapping", &v) && v > 0) c->final_softcap = v;
  if (poot__json_number(text, "rope_local_base_freq", &v) && v > 0) c->rope_theta_local = v;
  if (poot__json_number(text, "sliding_window", &v) && v > 0) {
    c->sliding_window = (int64_t)v;
    if (!poot__hf_layer_types(text, c)) {
      double pat = 6;
      poot__json_number(text, "sliding_window_pattern", &pat);
      int64_t p = pat >= 1 ? (int64_t)pat : 6;
      for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = ((i + 1) % p) != 0;
      c->any_layer_sliding_marked = true;
    }
  }
  return NULL;
}

static poot_status gemma_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                   poot_model_config *c) {
  (void)store;
  c->norm_plus_one = false; /* llama.cpp's converter already added 1 */
  c->tied_output = poot_gguf_find_tensor(g, "output.weight") == NULL;
  double v = 0;
  int64_t w = 0;
  if (poot__gguf_arch_f64(g, arch, "attn_logit_softcapping", &v) && v > 0) c->attn_softcap = v;
  if (poot__gguf_arch_f64(g, arch, "final_logit_softcapping", &v) && v > 0) c->final_softcap = v;
  /* llama.cpp derives the query scale from head_dim; a file may state it. */
  if (poot__gguf_arch_f64(g, arch, "attention.scale", &v) && v > 0) c->attn_scale = v;
  if (c->family == POOT_MODEL_FAMILY_GEMMA3 &&
      poot__gguf_arch_f64(g, arch, "rope.freq_base_swa", &v) && v > 0)
    c->rope_theta_local = v;
  if (poot__gguf_arch_i64(g, arch, "attention.sliding_window", &w) && w > 0) {
    c->sliding_window = w;
    c->any_layer_sliding_marked = true;
    /* The pattern: `attention.sliding_window_pattern` as a period (a layer is
     * global when (i + 1) % period == 0) or a per-layer bool array, else
     * llama.cpp's defaults (Gemma 2: even layers local; Gemma 3: period 6). */
    int64_t period = c->family == POOT_MODEL_FAMILY_GEMMA2 ? 2 : 6;
    char key[96];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", arch);
    const poot_gguf_value *pat = poot_gguf_find(g, key);
    bool from_array = false;
    if (pat && pat->type == POOT_GGUF_VALUE_ARRAY &&
        poot_gguf_array_len(pat) == (uint64_t)c->n_layers) {
      from_array = true;
      for (int64_t i = 0; i < c->n_layers && from_array; i++) {
        bool b = false;
        poot_status st = poot_gguf_array_get_bool(pat, (uint64_t)i, &b);
        if (st) {
          poot_status_free(st);
          from_array = false;
        }
        c->layer_sliding[i] = b;
      }
    } else if (pat) {
      int64_t p = 0;
      if (poot__gguf_arch_i64(g, arch, "attention.sliding_window_pattern", &p) && p >= 1)
        period = p;
    }
    if (!from_array)
      for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = ((i + 1) % period) != 0;
  }
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
    .from_gguf = gemma_from_gguf,
    .weight_name = gemma_weight_name,
};

const poot__family poot__family_gemma3 = {
    .family = POOT_MODEL_FAMILY_GEMMA3,
    .gguf_archs = gguf_gemma3,
    .hf_archs = hf_gemma3,
    .hf_model_types = types_gemma3,
    .defaults = gemma3_defaults,
    .from_hf = gemma3_from_hf,
    .from_gguf = gemma_from_gguf,
    .weight_name = gemma_weight_name,
};
