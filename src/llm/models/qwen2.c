/* qwen2.c — Qwen2 / Qwen2.5: the Llama layout with q/k/v biases; sliding
 * attention only when `use_sliding_window` is set (on the layers at and past
 * `max_window_layers`, or as `layer_types` says). */
#include <string.h>

#include "models_impl.h"

static void qwen2_defaults(poot_model_config *c) {
  c->qkv_bias = true;
  c->norm_eps = 1e-6;
}

/* Qwen 2/3 slide only when `use_sliding_window` is true (transformers drops
 * the window otherwise), on the layers at and past `max_window_layers`
 * unless `layer_types` says which. */
void poot__qwen_sliding_default(const poot_hf_config *hf, poot_model_config *c) {
  int64_t first = hf->max_window_layers > 0 ? hf->max_window_layers : 0;
  for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = i >= first;
  c->any_layer_sliding_marked = true;
}

void poot__qwen_window(const poot_hf_config *hf, poot_model_config *c) {
  if (hf->use_sliding_window == 1) return;
  c->sliding_window = 0;
  c->any_layer_sliding_marked = false;
  memset(c->layer_sliding, 0, sizeof c->layer_sliding);
}

static poot_status qwen2_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  poot__qwen_window(hf, c);
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
    .sliding_default = poot__qwen_sliding_default,
    .weight_name = qwen2_weight_name,
};
