/* support_vision.c — images in `poot generate --image` and `poot chat`'s
 * /image (docs/vision.md "The caption path"): the model's vision tower on
 * its own engine over the runtime's device, the prompt's image tokens
 * expanded to the tower's rows, and the rows bound as the driver's "embeds"
 * input. */
#include <stdio.h>
#include <string.h>

#include "poot/runtime.h"
#include "tool_vision.h"

poot_status poot_tool_vision_open(poot_runtime *rt, const char *model_path,
                                  poot_tool_vision **out) {
  *out = NULL;
  poot_tool_vision *tv = poot_calloc(1, sizeof *tv);
  if (!tv) return poot_status_make(POOT_OUT_OF_MEMORY, "vision");
  tv->rt = rt;
  poot_status st = poot_vision_open(poot_runtime_model(rt), model_path, &tv->vision);
  if (st) {
    poot_free(tv);
    return st;
  }
  *out = tv;
  return NULL;
}

static void free_prev(poot_tool_vision *tv) {
  for (size_t i = 0; i < tv->n_prev; i++) poot_free(tv->prev_paths[i]);
  poot_free(tv->prev_paths);
  tv->prev_paths = NULL;
  tv->n_prev = 0;
}

void poot_tool_vision_destroy(poot_tool_vision *tv) {
  if (!tv) return;
  free_prev(tv);
  poot_vision_runner_destroy(tv->runner);
  poot_executor_destroy(tv->ex);
  poot_vision_destroy(tv->vision);
  poot_free(tv->first);
  poot_free(tv->rows);
  poot_free(tv->in_rows);
  poot_free(tv);
}

const char *poot_tool_vision_token_text(const poot_tool_vision *tv, size_t *out_len) {
  const poot_tokenizer *tok = poot_model_get_tokenizer(poot_runtime_model(tv->rt));
  const poot_vision_config *c = poot_vision_get_config(tv->vision);
  *out_len = 0;
  return tok ? poot_tokenizer_token_text(tok, (poot_token)c->image_token_id, out_len) : NULL;
}

poot_status poot_tool_vision_encode_prompt(poot_tool_vision *tv, const char *text, size_t n_images,
                                           bool add_special, poot_token **out_ids,
                                           size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  const poot_model *m = poot_runtime_model(tv->rt);
  const poot_tokenizer *tok = poot_model_get_tokenizer(m);
  /* The image token is an added token: matched in the text as Hugging
   * Face's tokenizers match every added token. */
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  eo.add_special = add_special;
  eo.parse_special = true;
  poot_token *ids = NULL;
  size_t n = 0;
  POOT_TRY(poot_tokenizer_encode(tok, text, strlen(text), &eo, &ids, &n));
  poot_status st = poot_tool_vision_expand(tv, ids, n, n_images, out_ids, out_count);
  poot_free(ids);
  return st;
}

poot_status poot_tool_vision_expand(poot_tool_vision *tv, const poot_token *ids, size_t n,
                                    size_t n_images, poot_token **out_ids, size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  const poot_vision_config *c = poot_vision_get_config(tv->vision);
  size_t found = 0;
  for (size_t i = 0; i < n; i++) found += ids[i] == (poot_token)c->image_token_id;
  if (found != n_images) {
    size_t len = 0;
    const char *it = poot_tool_vision_token_text(tv, &len);
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the prompt has %zu image token(s) '%.*s' for %zu image(s)", found,
                            (int)len, it ? it : "", n_images);
  }
  poot_free(tv->first);
  tv->first = NULL;
  size_t images = 0;
  return poot_vision_expand_prompt(c, ids, n, out_ids, out_count, &tv->first, &images);
}

poot_status poot_tool_vision_rows(poot_tool_vision *tv, const char *const *paths, size_t n_images,
                                  poot_driver_input *out_input) {
  memset(out_input, 0, sizeof *out_input);
  const poot_vision_config *c = poot_vision_get_config(tv->vision);
  if (!tv->ex) {
    POOT_TRY(poot_engine_create(poot_runtime_device(tv->rt), &tv->ex));
    POOT_TRY(poot_vision_runner_create(tv->vision, tv->ex, &tv->runner));
  }
  size_t per = (size_t)(c->rows * c->text_hidden), total = per * n_images;
  float *rows = poot_malloc((total + 1) * sizeof *rows);
  float *pixels = poot_malloc((size_t)(3 * c->image_size * c->image_size) * sizeof *pixels);
  poot_driver_input_row *in = poot_malloc((n_images * (size_t)c->rows + 1) * sizeof *in);
  poot_status st = NULL;
  if (!rows || !pixels || !in) st = poot_status_make(POOT_OUT_OF_MEMORY, "image rows");
  char **names = poot_calloc(n_images + 1, sizeof *names);
  if (!st && !names) st = poot_status_make(POOT_OUT_OF_MEMORY, "image rows");
  for (size_t i = 0; i < n_images && !st; i++) {
    /* An image of the last call (a chat's earlier turn) keeps its rows: the
     * tower runs once per image of a conversation. */
    size_t j = 0;
    while (j < tv->n_prev && strcmp(tv->prev_paths[j], paths[i]) != 0) j++;
    if (!(names[i] = poot_strdup(paths[i]))) st = poot_status_make(POOT_OUT_OF_MEMORY, "path");
    if (!st && j < tv->n_prev) {
      memcpy(rows + per * i, tv->rows + per * j, per * sizeof *rows);
    } else if (!st) {
      poot_image img = {0};
      st = poot_image_load(paths[i], &img);
      if (!st) st = poot_vision_preprocess_image(&c->preprocess, &img, pixels);
      poot_image_deinit(&img);
      if (!st) st = poot_vision_runner_encode(tv->runner, pixels, rows + per * i);
    }
    for (int64_t r = 0; r < c->rows && !st; r++)
      in[i * (size_t)c->rows + (size_t)r] =
          (poot_driver_input_row){.index = (int64_t)tv->first[i] + r,
                                  .values = rows + per * i + (size_t)(r * c->text_hidden),
                                  .n_values = (size_t)c->text_hidden};
  }
  poot_free(pixels);
  if (st) {
    for (size_t i = 0; names && i < n_images; i++) poot_free(names[i]);
    poot_free(names);
    poot_free(rows);
    poot_free(in);
    return st;
  }
  free_prev(tv);
  tv->prev_paths = names;
  tv->n_prev = n_images;
  poot_free(tv->rows);
  poot_free(tv->in_rows);
  tv->rows = rows;
  tv->in_rows = in;
  *out_input = (poot_driver_input){
      .name = POOT_MODEL_SLOT_EMBEDS, .rows = in, .n_rows = n_images * (size_t)c->rows};
  return NULL;
}
