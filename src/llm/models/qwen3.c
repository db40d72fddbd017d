/* qwen3.c — Qwen3: the Llama layout with an RMSNorm over each head's
 * features of q and k (before the rope), no q/k/v bias unless
 * `attention_bias` is set. */
#include "models_impl.h"

static void qwen3_defaults(poot_model_config *c) {
  c->qk_norm = true;
  c->norm_eps = 1e-6;
}

static poot_status qwen3_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  c->qkv_bias = hf->attention_bias;
  poot__qwen_window(hf, c);
  return NULL;
}

static poot_status qwen3_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                   poot_model_config *c) {
  (void)g;
  (void)arch;
  c->qkv_bias = store && poot_gguf_find_tensor(g, "blk.0.attn_q.bias") != NULL;
  return NULL;
}

static bool qwen3_weight_name(const poot_model_config *c, poot_weight_naming naming,
                              const poot_weight_ref *ref, char *buf, size_t n) {
  (void)c;
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C) return false;
  return poot__weight_name_standard(naming, ref, buf, n);
}

static const char *const gguf_archs[] = {"qwen3", NULL};
static const char *const hf_archs[] = {"Qwen3ForCausalLM", NULL};
static const char *const hf_types[] = {"qwen3", NULL};

const poot__family poot__family_qwen3 = {
    .family = POOT_MODEL_FAMILY_QWEN3,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .defaults = qwen3_defaults,
    .from_hf = qwen3_from_hf,
    .sliding_default = poot__qwen_sliding_default,
    .from_gguf = qwen3_from_gguf,
    .weight_name = qwen3_weight_name,
};
