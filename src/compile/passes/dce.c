/* Dead-code elimination. A node is live when one of its results reaches the
 * output, a State update or the environment (in a body: the body's
 * results), or when it carries a check (a failing check is an observable
 * result of evaluation, so it is never dropped), or when it is a composite
 * whose body holds a check. Interface leaves (Weight, State, Slot, Param)
 * are always kept: they are what callers bind by name, and eval rejects a
 * binding that names no leaf. Unused Consts and computations are dropped. */
#include <string.h>

#include "passes_impl.h"

/* True when the region (or a body nested in it) holds a node with a check. */
static bool region_has_check(const poot_graph *g, const poot_region *r) {
  for (uint32_t i = 0; i < r->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, r->nodes[i]);
    if (n->trap != POOT_TRAP_NONE) return true;
    if (n->op == POOT_OP_COMPOSITE && region_has_check(g, n->body)) return true;
  }
  return false;
}

static void mark_value(const poot_graph *g, uint8_t *live, poot_value v) {
  const poot_node *n = poot__pass_def(g, v);
  if (n) live[n->id] = 1;
}

/* Marks the live nodes of a region whose roots are already marked. Regions
 * are in topological order, so one backward sweep suffices. */
static void mark_region(const poot_graph *g, const poot_region *r, uint8_t *live) {
  for (uint32_t i = r->num_nodes; i-- > 0;) {
    const poot_node *n = poot_graph_node(g, r->nodes[i]);
    if (n->op == POOT_OP_LEAF) {
      if (n->storage != POOT_STORAGE_CONST) live[n->id] = 1;
      continue;
    }
    if (n->trap != POOT_TRAP_NONE) live[n->id] = 1;
    if (n->op == POOT_OP_COMPOSITE && !live[n->id] && region_has_check(g, n->body)) live[n->id] = 1;
    if (!live[n->id]) continue;
    for (uint32_t k = 0; k < n->num_operands; k++) mark_value(g, live, n->operands[k]);
    if (n->op == POOT_OP_COMPOSITE) {
      for (uint32_t k = 0; k < n->body->num_results; k++) mark_value(g, live, n->body->results[k]);
      mark_region(g, n->body, live);
    }
  }
}

/* Counts the dropped nodes of a region (a dropped composite counts once). */
static uint32_t count_dropped(const poot_graph *g, const poot_region *r, const uint8_t *live) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < r->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, r->nodes[i]);
    if (!live[n->id])
      c++;
    else if (n->op == POOT_OP_COMPOSITE)
      c += count_dropped(g, n->body, live);
  }
  return c;
}

poot_status poot_pass_dce(const poot_graph *graph, const poot_pass_options *options,
                          poot_graph **out_graph, uint32_t *out_changes) {
  if (out_graph) *out_graph = NULL;
  if (out_changes) *out_changes = 0;
  if (!graph || !out_graph)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_pass_dce: NULL argument");
  poot_pass_options defaults;
  poot_pass_options_init(&defaults);
  const uint32_t nn = poot_graph_node_count(graph);
  uint8_t *live = poot_calloc(nn ? nn : 1, 1);
  if (!live) return poot_status_make(POOT_OUT_OF_MEMORY, "poot_pass_dce: out of memory");
  poot_value out = poot_graph_output(graph);
  if (out != POOT_VALUE_NONE) mark_value(graph, live, out);
  for (uint32_t i = 0; i < poot_graph_state_count(graph); i++) {
    poot_value sv = POOT_VALUE_NONE, nv = POOT_VALUE_NONE;
    poot_graph_state_at(graph, i, &sv, &nv);
    mark_value(graph, live, sv);
    mark_value(graph, live, nv);
  }
  for (uint32_t i = 0; i < poot_graph_env_count(graph); i++) {
    const char *name = NULL;
    poot_value v = POOT_VALUE_NONE;
    poot_graph_env_at(graph, i, &name, &v);
    mark_value(graph, live, v);
  }
  const poot_region *root = poot_graph_root(graph);
  mark_region(graph, root, live);
  const uint32_t dropped = count_dropped(graph, root, live);
  /* The walker reads drop flags. */
  for (uint32_t i = 0; i < nn; i++) live[i] = !live[i];
  pass_rb rb;
  memset(&rb, 0, sizeof rb);
  rb.src = graph;
  rb.opt = options ? options : &defaults;
  rb.drop = live;
  poot_status st = poot__pass_rebuild(&rb, out_graph);
  if (!st && out_changes) *out_changes = dropped;
  poot_free(live);
  return st;
}
