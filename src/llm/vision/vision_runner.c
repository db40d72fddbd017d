/* vision_runner.c — the tower on an executor: weights loaded once, one entry
 * for the frame shape added on first use, the pixels written to their slot
 * each call (docs/vision.md "The caption path"). */
#include <stdio.h>
#include <string.h>

#include "vision_internal.h"

struct poot_vision_runner {
  poot_vision *vision; /* borrowed */
  poot_executor *ex;   /* borrowed */
  bool added;
  uint32_t entry;
  poot_exec_slot pixels;
  uint32_t entries;
};

poot_status poot_vision_runner_create(poot_vision *v, poot_executor *ex, poot_vision_runner **out) {
  *out = NULL;
  if (!v || !ex) return poot_status_make(POOT_INVALID_ARGUMENT, "vision runner: NULL argument");
  poot_vision_runner *r = poot_calloc(1, sizeof *r);
  if (!r) return poot_status_make(POOT_OUT_OF_MEMORY, "vision runner");
  r->vision = v;
  r->ex = ex;
  poot_graph *g = NULL;
  poot_exec_weight *w = NULL;
  poot_tensor *t = NULL;
  size_t n = 0;
  poot_status st = poot_vision_trace(v, &g);
  if (!st) st = poot_vision_weights(v, g, &w, &t, &n);
  if (!st) st = poot_exec_load_weights(ex, n, w);
  poot_free(w);
  poot_free(t);
  poot_graph_destroy(g);
  if (st) {
    poot_free(r);
    return poot_status_annotate(st, "loading the vision tower's weights");
  }
  *out = r;
  return NULL;
}

void poot_vision_runner_destroy(poot_vision_runner *r) {
  if (!r) return;
  if (r->added) poot_status_free(poot_exec_remove_entry(r->ex, r->entry));
  poot_exec_unload(r->ex);
  poot_free(r);
}

static poot_status ensure_entry(poot_vision_runner *r) {
  if (r->added) return NULL;
  poot_graph *g = NULL;
  POOT_TRY(poot_vision_trace(r->vision, &g));
  char shape[64];
  int64_t S = r->vision->cfg.image_size;
  snprintf(shape, sizeof shape, "pixels:%lldx%lld", (long long)S, (long long)S);
  poot_exec_entry_key key = {
      .program = "vision", .step_shape = shape, .sampling = "", .bound_inputs = "pixels"};
  uint32_t id = UINT32_MAX;
  poot_status st = poot_exec_add_entry(r->ex, &key, g, &id, NULL);
  poot_graph_destroy(g);
  POOT_TRY(st);
  st = poot_exec_entry_slot(r->ex, id, POOT_VISION_SLOT_PIXELS, &r->pixels);
  if (st) {
    poot_status_free(poot_exec_remove_entry(r->ex, id));
    return st;
  }
  r->entry = id;
  r->added = true;
  r->entries++;
  return NULL;
}

poot_status poot_vision_runner_encode(poot_vision_runner *r, const float *pixels, float *out_rows) {
  if (!r || !pixels || !out_rows)
    return poot_status_make(POOT_INVALID_ARGUMENT, "vision encode: NULL argument");
  POOT_TRY(ensure_entry(r));
  const poot_vision_config *c = &r->vision->cfg;
  int64_t S = c->image_size;
  poot_tensor px = {.type = poot_type_make(POOT_DTYPE_F32, 4, (int64_t[]){1, 3, S, S}),
                    .data = (void *)pixels,
                    .size = (size_t)(3 * S * S) * sizeof(float)};
  poot_exec_slot_value in = {.slot = r->pixels, .tensor = &px};
  poot_exec_step_io io = {.input_count = 1,
                          .inputs = &in,
                          .output = out_rows,
                          .output_size = (size_t)(c->rows * c->text_hidden) * sizeof(float)};
  return poot_status_annotate(poot_exec_step(r->ex, r->entry, &io), "vision tower step");
}

uint32_t poot_vision_runner_entries(const poot_vision_runner *r) {
  return r ? r->entries : 0;
}
