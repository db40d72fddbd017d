/* qwen2.c — Qwen2 / Qwen2.5: the Llama layout with q/k/v biases; sliding
 * attention only when `use_sliding_window` is set (on the layers at and past
 * `max_window_layers`, or as `layer_types` says). */
#include "models_impl.h"

static void qwen2_defaults(poot_model_config *c) {
  c->qkv_bias = true;
  c->norm_eps = 1e-6;
}

static poot_status qwen2_from_hf(const poot_hf_config *hf, const poot_json *text,
                                 poot_model_config *c) {
  (void)hf;
  bool use = false;
  double w = 0, mwl = 0;
  if (poot__json_bool(text, "use_sliding_window", &use) && use &&
      poot__json_number(text, "sliding_window", &w) && w > 0) {
    c->sliding_window = (int64_t)w;
    if (!poot__hf_layer_types(text, c)) {
      poot__json_number(text, "max_window_layers", &mwl);
      for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = i >= (int64_t)mwl;
      c->any_layer_sliding_marked = true;
    }
  }
  return NULL;
}

static bool qwen2_weight_name(const poot_model_config *c, poot_weight_naming naming,
                              const poot_weight_ref *ref, char *buf, size_t n) {
  (void)c;
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C) return false;
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_archs[] = {"qwen2", NULL};
static const char *const hf_archs[] = {"Qwen2ForCausalLM", NULL};
static const char *const hf_types[] = {"qwen2", NULL};

const poot__family poot__family_qwen2 = {
    .family = POOT_MODEL_FAMILY_QWEN2,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .defaults = qwen2_defaults,
    .from_hf = qwen2_from_hf,
    .weight_name = qwen2_weight_name,
};
