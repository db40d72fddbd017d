/* phi3.c — Phi-3 / Phi-3.5 / Phi-4-mini: one fused qkv projection
 * ([(Hq + 2 Hkv) D, hidden], q then k then v) and one fused gate/up
 * projection ([2 ff, hidden], gate first; GGUF keeps it as ffn_up), partial
 * rotary (`partial_rotary_factor`), su/longrope scaling (per-frequency short
 * and long factors, cos/sin times the attention factor), sliding-window
 * attention when the config sets `sliding_window`. */
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

static void phi3_defaults(poot_model_config *c) {
  c->fused_qkv = true;
  c->fused_gate_up = true;
}

static poot_status phi3_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  (void)c;
  if (hf->attention_bias)
    return poot__hf_unsupported(hf, "attention_bias", "is true (no qkv/o biases in Phi-3)");
  return NULL;
}

static bool read_factors(const poot_store *store, const char *name, float *out, int64_t n) {
  const poot_store_tensor *t = NULL;
  if (!store) return false;
  poot_status st = poot_store_find(store, name, &t);
  if (st) {
    poot_status_free(st);
    return false;
  }
  if (t->dtype != POOT_DTYPE_F32 || t->size != (size_t)n * sizeof(float)) return false;
  memcpy(out, t->data, t->size);
  return true;
}

static poot_status phi3_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                  poot_model_config *c) {
  int64_t v = 0;
  double d = 0;
  int64_t half = c->rope_dims / 2;
  if (read_factors(store, "rope_factors_short.weight", c->rope_short_factors, half) &&
      read_factors(store, "rope_factors_long.weight", c->rope_long_factors, half)) {
    c->rope_scaling = POOT_MODEL_ROPE_SCALING_LONGROPE;
    if (poot__gguf_arch_i64(g, arch, "rope.scaling.original_context_length", &v))
      c->rope_original_context = v;
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.attn_factor", &d) && d > 0)
      c->rope_attn_factor = d;
    c->rope_factor = c->rope_original_context > 0
                         ? (double)c->context_length / (double)c->rope_original_context
                         : 1.0;
  }
  return NULL;
}

static bool phi3_weight_name(const poot_model_config *c, poot_weight_naming naming,
                             const poot_weight_ref *ref, char *buf, size_t n) {
  (void)c;
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C) return false;
  if (naming == POOT_WEIGHT_NAMING_HF && ref->role == POOT_WEIGHT_FFN_UP) {
    int k = snprintf(buf, n, "model.layers.%d.mlp.gate_up_proj.weight", (int)ref->layer);
    return k > 0 && (size_t)k < n;
  }
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_archs[] = {"phi3", NULL};
static const char *const hf_archs[] = {"Phi3ForCausalLM", NULL};
static const char *const hf_types[] = {"phi3", NULL};

const poot__family poot__family_phi3 = {
    .family = POOT_MODEL_FAMILY_PHI3,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .defaults = phi3_defaults,
    .from_hf = phi3_from_hf,
    .from_gguf = phi3_from_gguf,
    .weight_name = phi3_weight_name,
};
