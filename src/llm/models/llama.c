/* llama.c — the Llama family: Llama 1/2/3/3.1/3.2 (grouped-query attention,
 * tied or separate classifier, rope scaling linear and llama3) and llama2.c
 * checkpoints. Hugging Face checkpoints use the rotate-half (neox) rope;
 * llama.cpp's converter permutes Q/K of GGUF llama files (and llama2.c keeps
 * Meta's layout) so those use the interleaved (norm) rope. */
#include "models_impl.h"

static poot_status llama_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  (void)c;
  if (hf->attention_bias)
    return poot__hf_unsupported(hf, "attention_bias", "is true (no q/k/v/o biases in Llama)");
  return NULL;
}

static poot_status llama_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                   poot_model_config *c) {
  (void)store;
  /* A window (Mistral converted as "llama") is read by the common reader. */
  (void)g;
  (void)arch;
  c->rope_mode = POOT_ROPE_NORM;
  return NULL;
}

static bool llama_weight_name(const poot_model_config *c, poot_weight_naming naming,
                              const poot_weight_ref *ref, char *buf, size_t n) {
  (void)c;
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_archs[] = {"llama", NULL};
static const char *const hf_archs[] = {"LlamaForCausalLM", NULL};
static const char *const hf_types[] = {"llama", NULL};

const poot__family poot__family_llama = {
    .family = POOT_MODEL_FAMILY_LLAMA,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .from_hf = llama_from_hf,
    .from_gguf = llama_from_gguf,
    .weight_name = llama_weight_name,
};
