/* batch_inputs.c — input rows of the batched runner's requests
 * (poot_batch_request.inputs, poot/llm/batch.h): an image's rows kept with
 * its request, by prompt position, until the request is taken finished;
 * the salt of its blocks; a chunk's embeds / embeds_on values. */
#include <string.h>

#include "poot/llm/batch.h"

#include "batch_impl.h"

void poot__batch_inputs_free(batch_img *im) {
  if (!im) return;
  poot_free(im->row_at);
  poot_free(im->rows);
  poot_free(im);
}

/* Checks one input against a prompt of n ids (at most `left` more rows). */
static poot_status check_input(const poot_driver_input *in, size_t k, const poot_driver_input *all,
                               int64_t n, int64_t H) {
  if (!in->name) return BAD("batch: input %zu has no name", k);
  if (strcmp(in->name, POOT_MODEL_SLOT_EMBEDS) != 0)
    return BAD("batch: input '%s' is not an input of this model (a decoder declares '%s')",
               in->name, POOT_MODEL_SLOT_EMBEDS);
  for (size_t j = 0; j < k; j++)
    if (all[j].name && strcmp(all[j].name, in->name) == 0)
      return BAD("batch: input '%s' is given twice", in->name);
  if (in->n_rows && !in->rows)
    return BAD("batch: input '%s' has %zu rows but no row array", in->name, in->n_rows);
  for (size_t i = 0; i < in->n_rows; i++) {
    const poot_driver_input_row *r = &in->rows[i];
    if (r->index < 0 || r->index >= n - 1)
      return BAD(
          "batch: input '%s' row %zu is at prompt index %lld; rows go at [0, %lld) (the "
          "prompt's last id cannot have one: its step samples the first new id)",
          in->name, i, (long long)r->index, (long long)(n - 1));
    if (!r->values || (int64_t)r->n_values != H)
      return BAD("batch: input '%s' row %zu has %zu values%s; the model's rows have %lld", in->name,
                 i, r->n_values, r->values ? "" : " (NULL)", (long long)H);
  }
  return NULL;
}

poot_status poot__batch_inputs_make(poot_batch *b, const poot_batch_request *r, batch_img **out) {
  *out = NULL;
  if (!r->n_inputs) return NULL;
  if (!r->inputs) return BAD("batch: %zu inputs but no input array", r->n_inputs);
  if (!r->prompt || r->n_prompt < 1) return BAD("batch: a request needs a prompt");
  const int64_t H = poot_model_get_config(b->model)->hidden_size, n = r->n_prompt;
  size_t total = 0;
  for (size_t k = 0; k < r->n_inputs; k++) {
    POOT_TRY(check_input(&r->inputs[k], k, r->inputs, n, H));
    total += r->inputs[k].n_rows;
  }
  if (total == 0) return NULL;
  batch_img *im = poot_calloc(1, sizeof *im);
  if (im) {
    im->row_at = poot_malloc((size_t)n * sizeof *im->row_at);
    im->rows = poot_malloc(total * (size_t)H * sizeof *im->rows);
  }
  if (!im || !im->row_at || !im->rows) {
    poot__batch_inputs_free(im);
    return OOM("input rows");
  }
  im->n_prompt = n;
  for (int64_t p = 0; p < n; p++) im->row_at[p] = -1;
  for (size_t k = 0; k < r->n_inputs; k++)
    for (size_t i = 0; i < r->inputs[k].n_rows; i++) {
      const poot_driver_input_row *row = &r->inputs[k].rows[i];
      if (im->row_at[row->index] >= 0) {
        poot__batch_inputs_free(im);
        return BAD("batch: input '%s' has two rows at prompt index %lld", r->inputs[k].name,
                   (long long)row->index);
      }
      im->row_at[row->index] = (int32_t)im->n_rows;
      memcpy(im->rows + im->n_rows * (size_t)H, row->values, (size_t)H * sizeof *im->rows);
      im->n_rows++;
    }
  /* The salt: every row's position and values, in position order, so equal
   * rows at equal places share blocks and nothing else does. */
  uint64_t h = POOT_KV_POOL_ROOT_HASH;
  for (int64_t p = 0; p < n; p++) {
    if (im->row_at[p] < 0) continue;
    h = poot_hash64_mix(h, (uint64_t)p);
    h = poot_hash64(im->rows + (size_t)im->row_at[p] * (size_t)H, (size_t)H * sizeof *im->rows, h);
  }
  im->salt = h ? h : 1;
  if (!b->emb) {
    b->emb = poot_malloc((size_t)(b->chunk * H) * sizeof *b->emb);
    b->emb_on = poot_malloc((size_t)b->chunk * sizeof *b->emb_on);
    if (!b->emb || !b->emb_on) {
      poot_free(b->emb);
      poot_free(b->emb_on);
      b->emb = NULL;
      b->emb_on = NULL;
      poot__batch_inputs_free(im);
      return OOM("input rows of a step");
    }
  }
  *out = im;
  return NULL;
}

poot_status poot__batch_inputs_put(poot_batch *b, uint64_t caller_id, batch_img *im) {
  return poot_map_put(&b->img_index, &caller_id, sizeof caller_id, (uint64_t)(uintptr_t)im);
}

const batch_img *poot__batch_inputs_get(const poot_batch *b, uint64_t caller_id) {
  uint64_t v = 0;
  if (!poot_map_get(&b->img_index, &caller_id, sizeof caller_id, &v)) return NULL;
  return (const batch_img *)(uintptr_t)v;
}

void poot__batch_inputs_drop(poot_batch *b, uint64_t caller_id) {
  uint64_t v = 0;
  if (!poot_map_get(&b->img_index, &caller_id, sizeof caller_id, &v)) return;
  poot_map_remove(&b->img_index, &caller_id, sizeof caller_id);
  poot__batch_inputs_free((batch_img *)(uintptr_t)v);
}

void poot__batch_inputs_deinit(poot_batch *b) {
  const void *k = NULL;
  size_t kl = 0;
  uint64_t v = 0;
  for (size_t it = 0; poot_map_next(&b->img_index, &it, &k, &kl, &v);)
    poot__batch_inputs_free((batch_img *)(uintptr_t)v);
  poot_map_deinit(&b->img_index);
  poot_free(b->emb);
  poot_free(b->emb_on);
  b->emb = NULL;
  b->emb_on = NULL;
}

bool poot__batch_inputs_any(const batch_img *im, int64_t pos, int64_t n) {
  if (!im) return false;
  for (int64_t p = pos < 0 ? 0 : pos; p < pos + n && p < im->n_prompt; p++)
    if (im->row_at[p] >= 0) return true;
  return false;
}

void poot__batch_inputs_fill(poot_batch *b, const batch_img *im, int64_t pos, int64_t T) {
  const int64_t H = poot_model_get_config(b->model)->hidden_size;
  memset(b->emb, 0, (size_t)(T * H) * sizeof *b->emb);
  for (int64_t i = 0; i < T; i++) {
    const int64_t p = pos + i;
    const int32_t r = p >= 0 && p < im->n_prompt ? im->row_at[p] : -1;
    b->emb_on[i] = r >= 0;
    if (r >= 0)
      memcpy(b->emb + i * H, im->rows + (size_t)r * (size_t)H, (size_t)H * sizeof *b->emb);
  }
}
