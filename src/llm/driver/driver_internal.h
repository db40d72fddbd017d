/* driver_internal.h — the driver's pieces exposed for its tests only. */
#ifndef POOT_LLM_DRIVER_INTERNAL_H
#define POOT_LLM_DRIVER_INTERNAL_H

#include "poot/graph.h"

/* Replaces the output of `graph` (f32[B, V]) with the greedy suffix:
 * {argmax (the first NaN wins), 1 when every value is finite else 0} of each
 * row, i32[2] when B = 1 and i32[B, 2] otherwise (each row's pair depends on
 * that row alone); verifies the graph. INTERNAL when the output is not
 * f32[B, V]. */
POOT_MUST_USE poot_status poot__driver_append_greedy(poot_graph *graph);

/* The batched runner's decode steps run through entries without the greedy
 * suffix while `out` is not NULL (added on first use), and write the
 * logits of each one-token item (the batched step's rows), f32[rows,
 * vocab] in the plan's order, to
 * `out` (borrowed; room for max_batch rows); the ids are then each row's
 * first maximum computed on the host. Verification only (tests). */
struct poot_batch;
void poot__batch_set_decode_logits(struct poot_batch *batch, float *out);

#endif /* POOT_LLM_DRIVER_INTERNAL_H */
