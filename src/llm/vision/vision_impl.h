/* vision_impl.h — what the registry and the HF config mapping need from the
 * vision folder (private to src/llm/). */
#ifndef POOT_LLM_VISION_IMPL_H
#define POOT_LLM_VISION_IMPL_H

#include <stdbool.h>

#include "poot/llm/store.h"
#include "poot/llm/weight_map.h"

/* Whether a Hugging Face config's architecture (architectures[0]) or
 * model_type names a LLaVA-style wrapper (LlavaForConditionalGeneration /
 * "llava"): its language model is text_config's, its tensors carry the
 * wrapper's prefixes. Either may be NULL. */
bool poot__llava_architecture(const char *architecture, const char *model_type);

/* The text model's family name of a LLaVA config: text_config.model_type,
 * "llama" when absent (LlavaConfig's default). */
const char *poot__llava_text_model_type(const poot_json *text_config);

/* Renames a text model's HF weight map to the wrapper's tensor names
 * (transformers 4.x "language_model.model.*" / "language_model.lm_head.*",
 * 5.x "model.language_model.*" / "lm_head.*", whichever the store holds) and
 * binds every tensor of the vision tower and the projector as a CUSTOM
 * weight named by its 4.x name ("vision_tower.vision_model.…",
 * "multi_modal_projector.…"). OUT_OF_MEMORY, INVALID_ARGUMENT. */
POOT_MUST_USE poot_status poot__llava_bind_weights(poot_weight_map *map, const poot_store *store);

#endif /* POOT_LLM_VISION_IMPL_H */
