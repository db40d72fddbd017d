/* driver_internal.h — the driver's pieces exposed for its tests only. */
#ifndef POOT_LLM_DRIVER_INTERNAL_H
#define POOT_LLM_DRIVER_INTERNAL_H

#include "poot/graph.h"

/* Replaces the output of `graph` (f32[1, V]) with the greedy suffix:
 * i32[2] = {argmax (the first NaN wins), 1 when every value is finite else
 * 0}; verifies the graph. INTERNAL when the output is not f32[1, V]. */
POOT_MUST_USE poot_status poot__driver_append_greedy(poot_graph *graph);

#endif /* POOT_LLM_DRIVER_INTERNAL_H */
