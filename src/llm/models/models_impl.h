/* models_impl.h — private to src/llm/models and src/llm/registry: the family
 * descriptors and the shared tracing helpers. */
#ifndef POOT_LLM_MODELS_IMPL_H
#define POOT_LLM_MODELS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/llm/model.h"

/* One family: how it is detected, configured and named. */
typedef struct poot__family {
  poot_model_family family;
  const char *const *gguf_archs;     /* NULL-terminated */
  const char *const *hf_archs;       /* NULL-terminated ("LlamaForCausalLM") */
  const char *const *hf_model_types; /* NULL-terminated ("llama") */
  /* Family defaults on top of poot_model_config_init's zeroes. */
  void (*defaults)(poot_model_config *c);
  /* Family fields from a HF config (every key is read by the one reader,
   * poot_hf_config; the common fields, the rope and the sliding window are
   * already set, the sliding layers by `layer_types` when the file has them).
   * `sliding_default` marks the family's default sliding layers when the
   * file has a window but no `layer_types`; NULL: every layer. */
  poot_status (*from_hf)(const poot_hf_config *hf, poot_model_config *c);
  void (*sliding_default)(const poot_hf_config *hf, poot_model_config *c);
  /* Family fields from GGUF metadata (`arch` is general.architecture). */
  poot_status (*from_gguf)(const poot_gguf *gguf, const char *arch, const poot_store *store,
                           poot_model_config *c);
  /* The tensor name of a role in a naming; false when the family has none. */
  bool (*weight_name)(const poot_model_config *c, poot_weight_naming naming,
                      const poot_weight_ref *ref, char *buf, size_t n);
  /* (optional) The roles the family's graphs read, the global ones
   * (per_layer false) or each layer's, into out (at most 32); NULL: the
   * decoder's (token embedding, final norm, classifier; config_roles). */
  size_t (*roles)(const poot_model_config *c, bool per_layer, poot_weight_role *out);
} poot__family;

extern const poot__family poot__family_llama;
extern const poot__family poot__family_mistral;
extern const poot__family poot__family_qwen2;
extern const poot__family poot__family_qwen3;
extern const poot__family poot__family_gemma;
extern const poot__family poot__family_gemma2;
extern const poot__family poot__family_gemma3;
extern const poot__family poot__family_phi3;
extern const poot__family poot__family_bert;

const poot__family *poot__family_of(poot_model_family family);

/* The standard llama-style names (GGUF, HF, Meta/llama2.c), shared by the
 * families; false when the naming has no name for the role. */
bool poot__weight_name_standard(poot_weight_naming naming, const poot_weight_ref *ref, char *buf,
                                size_t n);

/* JSON helpers for config.json fields the common reader does not parse. */
const poot_json *poot__json_member(const poot_json *obj, const char *key);
bool poot__json_number(const poot_json *obj, const char *key, double *out);
bool poot__json_bool(const poot_json *obj, const char *key, bool *out);

/* Qwen 2/3: the default sliding layers, and the window kept only when
 * `use_sliding_window` is true. */
void poot__qwen_sliding_default(const poot_hf_config *hf, poot_model_config *c);
void poot__qwen_window(const poot_hf_config *hf, poot_model_config *c);

/* GGUF helpers: `<arch>.<key>` lookups; false (no error) when absent. */
bool poot__gguf_arch_f64(const poot_gguf *g, const char *arch, const char *key, double *out);
bool poot__gguf_arch_i64(const poot_gguf *g, const char *arch, const char *key, int64_t *out);

/* UNSUPPORTED naming a config.json key whose value would change the
 * computation in a way the family does not implement. */
POOT_MUST_USE poot_status poot__hf_unsupported(const poot_hf_config *hf, const char *key,
                                               const char *why);

/* The rotary embedding of one layer: x [N, H, D] float, pos i32[N], seq_len
 * i32[N] (each token's sequence length this step: its sequence's last
 * position + 1; read only by LONGROPE). Uses
 * poot.rope with the plain inverse frequencies, or a poot.rope composite of
 * its own (attrs name the scaling) whose body holds the scaled inverse
 * frequencies as constants. */
POOT_MUST_USE poot_status poot__trace_rope(poot_graph *g, const poot_model_config *c,
                                           bool local_layer, poot_value x, poot_value pos,
                                           poot_value seq_len, poot_value *out);

/* Attention with logit soft-capping: a "poot.attention" composite with
 * {scale, softcap} attrs; scores = tanh(q·k * scale / softcap) * softcap. */
POOT_MUST_USE poot_status poot__trace_attention_softcap(poot_graph *g, poot_value q, poot_value k,
                                                        poot_value v, poot_value mask, double scale,
                                                        double softcap, poot_value *out);

/* BERT (bert.c): sentence-transformers' modules.json in `folder` (absent:
 * nothing changes): the Pooling module's mode into c->pooling, a Normalize
 * module into c->normalize. UNSUPPORTED naming a module or pooling mode poot
 * does not implement; FORMAT/IO from the files. */
POOT_MUST_USE poot_status poot__bert_read_sentence_transformers(const char *folder,
                                                                poot_model_config *c);

/* The encoder graph (encoder.c) of an encoder family's EMBEDDING or SCORES
 * step; poot_model_trace calls it (after validating config and step). */
POOT_MUST_USE poot_status poot__encoder_trace(const poot_model_config *c, const poot_model_step *s,
                                              const poot_model_trace_options *o,
                                              poot_graph **out_graph);

#endif
