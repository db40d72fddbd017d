/* mistral.c — Mistral: the Llama layout, with sliding-window attention on
 * every layer when config.json sets `sliding_window` (the mask keeps key j
 * for query i when i - j < window). llama.cpp writes Mistral GGUF files as
 * architecture "llama" (permuted Q/K), which the llama family reads. */
#include "models_impl.h"

static poot_status mistral_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  (void)c;
  if (hf->attention_bias)
    return poot__hf_unsupported(hf, "attention_bias", "is true (no q/k/v/o biases in Mistral)");
  return NULL;
}

static poot_status mistral_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                     poot_model_config *c) {
  (void)store;
  (void)g; /* the window: the common reader */
  (void)arch;
  c->rope_mode = POOT_ROPE_NORM;
  return NULL;
}

static bool mistral_weight_name(const poot_model_config *c, poot_weight_naming naming,
                                const poot_weight_ref *ref, char *buf, size_t n) {
  (void)c;
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C) return false;
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_archs[] = {"mistral", NULL};
static const char *const hf_archs[] = {"MistralForCausalLM", NULL};
static const char *const hf_types[] = {"mistral", NULL};

const poot__family poot__family_mistral = {
    .family = POOT_MODEL_FAMILY_MISTRAL,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .from_hf = mistral_from_hf,
    .from_gguf = mistral_from_gguf,
    .weight_name = mistral_weight_name,
};
