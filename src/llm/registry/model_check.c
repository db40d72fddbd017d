/* poot_model_check_file: the checks a model file meets before poot can run
 * it, without a device. `poot convert` calls it on what it wrote, so that it
 * never hands out a GGUF that poot itself would refuse. */
#include <string.h>

#include "poot/llm/model.h"

/* Every Weight leaf of g resolves to a stored tensor of the graph's dtype
 * and byte size (the binding the driver does before it loads weights). */
static poot_status check_weights(poot_model *m, const poot_graph *g) {
  const poot_region *root = poot_graph_root(g);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op != POOT_OP_LEAF || node->storage != POOT_STORAGE_WEIGHT) continue;
    poot_tensor t;
    POOT_TRY(poot_model_weight_tensor(m, &node->weight, poot_graph_value_type(g, node->results[0]),
                                      &t));
  }
  return NULL;
}

poot_status poot_model_check_file(const char *path) {
  poot_model *m = NULL;
  POOT_TRY(poot_model_open(path, NULL, &m));
  /* A one-token decode step with a one-row cache reads every weight. */
  poot_model_step step = {.batch = 1, .tokens = 1, .cap = 1};
  poot_model_trace_options to = poot_model_trace_options_for(m);
  poot_graph *g = NULL;
  poot_status st = poot_model_trace(poot_model_get_config(m), &step, &to, &g);
  if (!st) st = check_weights(m, g);
  poot_graph_destroy(g);
  poot_model_destroy(m);
  return st;
}
