/* tools/tool_vision.h — images for `poot generate --image` and `poot chat`'s
 * /image (support_vision.c). */
#ifndef POOT_TOOLS_TOOL_VISION_H
#define POOT_TOOLS_TOOL_VISION_H

#include "poot/llm/driver.h"
#include "poot/llm/vision.h"
#include "poot/runtime.h"

typedef struct poot_tool_vision {
  poot_runtime *rt; /* borrowed */
  poot_vision *vision;
  poot_executor *ex; /* the tower's own engine over the runtime's device */
  poot_vision_runner *runner;
  size_t *first;     /* each image's first row in the last encoded prompt */
  float *rows;       /* the last images' rows */
  char **prev_paths; /* the last images' paths (their rows are reused) */
  size_t n_prev;
  poot_driver_input_row *in_rows;
} poot_tool_vision;

/* The vision half of the runtime's model (UNSUPPORTED for a text-only model). */
POOT_MUST_USE poot_status poot_tool_vision_open(poot_runtime *rt, const char *model_path,
                                                poot_tool_vision **out);
void poot_tool_vision_destroy(poot_tool_vision *tv); /* NULL-safe */
/* The image token's text ("<image>"), borrowed; NULL without a tokenizer. */
const char *poot_tool_vision_token_text(const poot_tool_vision *tv, size_t *out_len);
/* Tokenizes `text` (added tokens matched) and expands its image tokens to the
 * tower's rows; INVALID_ARGUMENT when it holds other than n_images of them. */
POOT_MUST_USE poot_status poot_tool_vision_encode_prompt(poot_tool_vision *tv, const char *text,
                                                         size_t n_images, bool add_special,
                                                         poot_token **out_ids, size_t *out_count);
/* Expands the image tokens of ids[0..n) (as poot_tool_vision_encode_prompt). */
POOT_MUST_USE poot_status poot_tool_vision_expand(poot_tool_vision *tv, const poot_token *ids,
                                                  size_t n, size_t n_images, poot_token **out_ids,
                                                  size_t *out_count);
/* Loads, preprocesses and encodes the images (the device must be open)
 * into the "embeds" input of the last encoded prompt (rows borrowed from tv
 * until the next call). An image path of the previous call reuses its rows
 * (a conversation's earlier images are not encoded again). */
POOT_MUST_USE poot_status poot_tool_vision_rows(poot_tool_vision *tv, const char *const *paths,
                                                size_t n_images, poot_driver_input *out_input);

#endif /* POOT_TOOLS_TOOL_VISION_H */
