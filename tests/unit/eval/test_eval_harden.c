/* test_eval_harden.c — robustness of the graph text parser, printer,
 * verifier and the reference evaluator: with any allocation failing, each
 * returns OUT_OF_MEMORY and leaks nothing (checked under ASan); graphs
 * found by fuzzing return typed statuses. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/eval.h"
#include "poot/graph.h"

/* Every sweep below checks, at each n, that the n-th allocation failing was
 * reached and reported as OUT_OF_MEMORY (tests/poot_test.h). */
#define SWEEP_LIMIT 1000000

static char *read_corpus(const char *rel, size_t *out_len) {
  const char *src = getenv("POOT_SOURCE_DIR");
  if (!src) src = ".";
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s", src, rel);
  char *text = NULL;
  POOT_ASSERT_OK(poot_file_read_all(path, &text, out_len));
  return text;
}

typedef struct text_ctx {
  const char *text;
  size_t len;
} text_ctx;

static poot_status try_parse_print(void *ctx) {
  text_ctx *t = ctx;
  poot_graph *g = NULL;
  POOT_TRY(poot_graph_parse(t->text, t->len, &g));
  char *out = NULL;
  poot_status s = poot_graph_to_text(g, &out);
  poot_free(out);
  poot_graph_destroy(g);
  return s;
}

/* Evaluates with every root leaf but the states bound to zeros. */
static poot_status eval_zero(const poot_graph *g) {
  enum { MAX = 64 };
  poot_eval_input items[MAX];
  poot_tensor tensors[MAX];
  char *names[MAX];
  size_t n = 0;
  poot_status s = NULL;
  const poot_region *root = poot_graph_root(g);
  for (uint32_t i = 0; i < root->num_nodes && n < MAX; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op != POOT_OP_LEAF || node->storage == POOT_STORAGE_CONST ||
        node->storage == POOT_STORAGE_STATE)
      continue;
    const poot_type *t = poot_graph_value_type(g, node->results[0]);
    size_t bytes = 0;
    POOT_ASSERT_OK(poot_type_byte_size(t->dtype, &t->shape, &bytes));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_graph_leaf_name(g, node, &sb);
    /* The test's own allocations must not fail: use libc directly. */
    names[n] = strdup(sb.data ? sb.data : "");
    poot_strbuf_deinit(&sb);
    tensors[n] = (poot_tensor){.type = *t, .data = calloc(1, bytes ? bytes : 1), .size = bytes};
    assert_non_null(names[n]);
    assert_non_null(tensors[n].data);
    items[n] = (poot_eval_input){names[n], &tensors[n]};
    n++;
  }
  poot_eval_options opts;
  poot_eval_options_init(&opts);
  opts.zero_missing_states = true;
  poot_eval_inputs inputs = {.count = n, .items = items};
  poot_evaluation *ev = NULL;
  s = poot_eval(g, &inputs, &opts, &ev);
  assert_true((s == NULL) == (ev != NULL));
  poot_evaluation_destroy(ev);
  for (size_t i = 0; i < n; i++) {
    free(names[i]);
    free(tensors[i].data);
  }
  return s;
}

static poot_status try_eval(void *ctx) {
  return eval_zero(ctx);
}

static const char *const graphs[] = {"eval_graph/small.pgraph", "eval_graph/state.pgraph",
                                     "eval_graph/attention_step.pgraph",
                                     "graph_text/all_ops.pgraph"};

static void test_parse_print_oom(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    text_ctx t;
    char *text = read_corpus(graphs[i], &t.len);
    t.text = text;
    assert_true(poot_test_oom_sweep(graphs[i], try_parse_print, &t, SWEEP_LIMIT) > 0);
    poot_free(text);
  }
}

static void test_eval_oom(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    size_t len = 0;
    char *text = read_corpus(graphs[i], &len);
    poot_graph *g = NULL;
    POOT_ASSERT_OK(poot_graph_parse(text, len, &g));
    assert_true(poot_test_oom_sweep(graphs[i], try_eval, g, SWEEP_LIMIT) > 0);
    poot_graph_destroy(g);
    poot_free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_print_oom),
      cmocka_unit_test(test_eval_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
