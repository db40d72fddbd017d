/* Test support for the graph passes: a generator of random well-typed
 * graphs, random input bindings, and the bit-for-bit comparison of two
 * graphs' evaluations. */
#ifndef POOT_TESTS_PASSES_GEN_H
#define POOT_TESTS_PASSES_GEN_H

#include <stdint.h>

#include "poot/base.h"
#include "poot/eval.h"
#include "poot/graph.h"

/* A random graph: root Params, States (with updates), Slots, a Weight,
 * Consts (special values and splats among them), core ops of every family
 * the generator knows, composites (nested, sometimes duplicated), duplicate
 * nodes and identity chains for the passes to find; an output and a few env
 * entries. *out_skipped counts builder calls the generator got wrong (they
 * are dropped). */
POOT_MUST_USE poot_status pg_random_graph(uint64_t seed, poot_graph **out_graph,
                                          uint32_t *out_skipped);

/* Random bindings for every bound leaf of the root (floats mixed with ±0,
 * ±inf, quiet and signalling NaNs with random payloads, subnormals). */
typedef struct pg_inputs {
  size_t count;
  poot_eval_input *items;
  poot_tensor *tensors;
  char **names;
} pg_inputs;
POOT_MUST_USE poot_status pg_make_inputs(const poot_graph *graph, uint64_t seed, pg_inputs *out);
void pg_inputs_free(pg_inputs *inputs);

/* Evaluates both graphs with the same inputs and compares every result bit
 * for bit (or the fault: code, op, trap, index, limit). Returns NULL when
 * identical, else a heap message (poot_free). *out_code receives the first
 * graph's evaluation status code. */
char *pg_compare(const poot_graph *a, const poot_graph *b, const pg_inputs *inputs,
                 poot_status_code *out_code);

/* print → parse → print must be byte-identical. NULL or a heap message. */
char *pg_check_text(const poot_graph *graph);

/* Counts nodes with op `op` in every region. */
uint32_t pg_count_op(const poot_graph *graph, poot_op op);

#endif /* POOT_TESTS_PASSES_GEN_H */
