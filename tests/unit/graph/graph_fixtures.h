/* graph_fixtures.h — graphs shared by the graph layer's tests. */
#ifndef POOT_TESTS_UNIT_GRAPH_FIXTURES_H
#define POOT_TESTS_UNIT_GRAPH_FIXTURES_H

#include "poot/graph.h"

/* Builds into `g` a graph that uses every core op, every composite, every
 * storage class, every check and every kind of result. Returns the first
 * failure (so allocation-failure tests can drive it). */
POOT_MUST_USE poot_status graph_fixture_all_ops(poot_graph *g);

/* Builds the masked attention decode step of docs/graph.md (one layer,
 * capacity cap, heads kv heads of head_dim). */
POOT_MUST_USE poot_status graph_fixture_attention_step(poot_graph *g, int64_t cap,
                                                       int64_t heads, int64_t head_dim);

#endif
