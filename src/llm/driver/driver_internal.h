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

/* The sampling suffix of `kind` on each row of a traced step's logits
 * f32[B, V] (driver_sample.c, row mode): output i32[B, words] (each row's
 * {id, finite, any survivor, logprob bits} and, with LOGPROBS, its top-n
 * ids and logprob bits over the raw logits, as the B = 1 suffix writes
 * them: poot__driver_sample_words); per-row parameter slots sampler.f [B, 8],
 * sampler.i [B, 4], sampler.seed [B, 2], sampler.ctr [B, 2] (the Philox
 * counter {draws so far, 0}, written by the host) and, with a logit bias,
 * sampler.bias_id / sampler.bias [B, MAX_BIAS]; with a grammar (MASK),
 * sampler.mask u32[B, ⌈V/32⌉]; with penalties, sampler.pen_id /
 * sampler.pen_n i32[B, pen_width]: each row's distinct ids of its penalty
 * window and their counts (padding: token −1), which the host writes from
 * the request's history (pen_width ignored without PENALTIES). */
POOT_MUST_USE poot_status poot__driver_append_sampler_rows(poot_graph *g, uint32_t kind,
                                                           int64_t pen_width);

/* The batched runner's decode steps run through entries without the greedy
 * suffix while `out` is not NULL (added on first use), and write the
 * logits of each row of the step's batched replays (one-token items and
 * prompt tails), f32[rows, vocab], to `out` (borrowed; room for
 * POOT__BATCH_STEP_ROWS(max_batch) rows); the ids are then each row's
 * first maximum computed on the host. Verification only (tests). */
#define POOT__BATCH_STEP_ROWS(max_batch) (16 * (max_batch))
struct poot_batch;
void poot__batch_set_decode_logits(struct poot_batch *batch, float *out);
/* The rows of the last step's replays through those entries: each row's
 * plan item and token offset in it (`items`, `offs`: room for
 * POOT__BATCH_STEP_ROWS(max_batch)), in the order of the logits; returns
 * their count. */
int32_t poot__batch_logits_rows(const struct poot_batch *batch, int32_t *items, int32_t *offs);

#endif /* POOT_LLM_DRIVER_INTERNAL_H */
