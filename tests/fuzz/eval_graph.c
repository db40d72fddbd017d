/* eval_graph.c — libFuzzer target for the reference evaluator on parsed
 * graphs. Any text that parses (and so verifies) is evaluated with every
 * root leaf bound to zeros and missing states zeroed; poot_eval must return
 * a typed status (never crash, leak or read out of bounds). Graphs whose
 * values are large are skipped, to keep each run fast. */
#include <stdint.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/graph.h"

#define MAX_VALUE_BYTES ((size_t)1 << 16)
#define MAX_TOTAL_BYTES ((size_t)1 << 20)
#define MAX_INPUTS 64

static void check(int ok) {
  if (!ok) __builtin_trap();
}

/* True when every value is small enough to evaluate quickly. */
static int small_enough(const poot_graph *g) {
  size_t total = 0;
  for (uint32_t v = 0; v < poot_graph_value_count(g); v++) {
    const poot_type *t = poot_graph_value_type(g, v);
    if (!t) continue;
    size_t bytes = 0;
    poot_status st = poot_type_byte_size(t->dtype, &t->shape, &bytes);
    if (st) {
      poot_status_free(st);
      return 0;
    }
    if (bytes > MAX_VALUE_BYTES) return 0;
    total += bytes;
    if (total > MAX_TOTAL_BYTES) return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_graph *g = NULL;
  poot_status st = poot_graph_parse((const char *)data, size, &g);
  poot_status_free(st);
  if (!g) return 0;
  if (!small_enough(g)) {
    poot_graph_destroy(g);
    return 0;
  }
  poot_eval_input items[MAX_INPUTS];
  poot_tensor tensors[MAX_INPUTS];
  char *names[MAX_INPUTS];
  size_t n = 0;
  const poot_region *root = poot_graph_root(g);
  for (uint32_t i = 0; root && i < root->num_nodes && n < MAX_INPUTS; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (!node || node->op != POOT_OP_LEAF || node->storage == POOT_STORAGE_CONST) continue;
    /* Odd-numbered states stay unbound so zero_missing_states is exercised. */
    if (node->storage == POOT_STORAGE_STATE && (i & 1)) continue;
    const poot_type *t = poot_graph_value_type(g, node->results[0]);
    size_t bytes = 0;
    if (!t || poot_type_byte_size(t->dtype, &t->shape, &bytes)) continue; /* checked above */
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_graph_leaf_name(g, node, &sb);
    names[n] = poot_strbuf_take(&sb);
    tensors[n].type = *t;
    tensors[n].size = bytes;
    tensors[n].data = poot_calloc(1, bytes ? bytes : 1);
    items[n].name = names[n];
    items[n].tensor = &tensors[n];
    if (!names[n] || !tensors[n].data) {
      poot_free(names[n]);
      poot_free(tensors[n].data);
      continue;
    }
    n++;
  }
  poot_eval_options opts;
  poot_eval_options_init(&opts);
  opts.zero_missing_states = true;
  poot_eval_fault fault;
  opts.out_fault = &fault;
  poot_eval_inputs inputs = {.count = n, .items = items};
  poot_evaluation *ev = NULL;
  st = poot_eval(g, &inputs, &opts, &ev);
  poot_status_code code = poot_status_code_of(st);
  check(code == POOT_OK || code == POOT_INVALID_ARGUMENT || code == POOT_KERNEL_FAULT ||
        code == POOT_UNSUPPORTED || code == POOT_OUT_OF_MEMORY);
  check((code == POOT_OK) == (ev != NULL));
  poot_status_free(st);
  poot_evaluation_destroy(ev);
  for (size_t i = 0; i < n; i++) {
    poot_free(names[i]);
    poot_free(tensors[i].data);
  }
  poot_graph_destroy(g);
  return 0;
}
