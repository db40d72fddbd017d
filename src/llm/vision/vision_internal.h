/* vision_internal.h — the vision handle's fields (private to this folder). */
#ifndef POOT_LLM_VISION_INTERNAL_H
#define POOT_LLM_VISION_INTERNAL_H

#include "poot/llm/vision.h"

struct poot_vision {
  poot_model *model; /* borrowed: its store and weight map hold the tower's tensors */
  poot_vision_config cfg;
};

#endif /* POOT_LLM_VISION_INTERNAL_H */
