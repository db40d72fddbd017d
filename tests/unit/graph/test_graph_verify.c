/* test_graph_verify.c — malformed graphs are rejected with a message that
 * names the node and the rule; builder calls validate their arguments. */
#include "poot/graph.h"
#include "poot_test.h"

static poot_status parse(const char *text) {
  poot_graph *g = NULL;
  poot_status st = poot_graph_parse(text, strlen(text), &g);
  if (st) assert_null(g);
  poot_graph_destroy(g);
  return st;
}

#define HDR "pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = param 1 \"b\" : f16[2]\n"

static void test_type_mismatch(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = add %0, %1 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (add): same operand types");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = exp %0 : f16[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (exp): type mismatch: result 0 is declared f16[2]");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = and %0, %0 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "operand dtype");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = select %0, %0, %0 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (select): operand dtype: operand 0 is f32, expected bool");
}

static void test_shape_mismatch(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = add %0, %0 : f32[3]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (add): type mismatch");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = reshape %0 : f32[3]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (reshape): shape mismatch");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = broadcast %0 {dims=[0]} : f32[3,2]\n"),
                         POOT_INVALID_ARGUMENT, "node %2 (broadcast): shape mismatch");
  POOT_ASSERT_STATUS_MSG(
      parse("pgraph 1\n%0 = param 0 \"a\" : f32[2,3]\n%1 = param 1 \"b\" : f32[4,5]\n"
            "%2 = dot_general %0, %1 {lhs_batch=[], rhs_batch=[], lhs_contract=[1], "
            "rhs_contract=[0]} : f32[2,5]\n"),
      POOT_INVALID_ARGUMENT, "node %2 (dot_general): shape mismatch");
}

static void test_dangling_value(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = neg %7 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (neg): dangling value: operand 0 (%3) is never defined");
  POOT_ASSERT_STATUS_MSG(parse(HDR "output %9\n"), POOT_INVALID_ARGUMENT, "dangling value");
  /* A body cannot see the values of its enclosing region. */
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = composite \"x.y\" (%0) : f32[2] {\n"
                                   "  %3 = param 0 : f32[2]\n"
                                   "  %4 = add %3, %0 : f32[2]\n"
                                   "  return %4\n}\n"),
                         POOT_INVALID_ARGUMENT, "node %4 (add): region isolation");
}

static void test_cycle(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = neg %3 : f32[2]\n%3 = neg %2 : f32[2]\n"),
                         POOT_INVALID_ARGUMENT, "cycle");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = add %0, %2 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (add): cycle");
  /* Forward references without a cycle are put in order. */
  poot_graph *g = NULL;
  const char *fwd = HDR "%3 = neg %2 : f32[2]\n%2 = exp %0 : f32[2]\noutput %3\n";
  POOT_ASSERT_OK(poot_graph_parse(fwd, strlen(fwd), &g));
  char *text = NULL;
  POOT_ASSERT_OK(poot_graph_to_text(g, &text));
  assert_string_equal(text, HDR "%2 = exp %0 : f32[2]\n%3 = neg %2 : f32[2]\noutput %3\n");
  poot_free(text);
  poot_graph_destroy(g);
  /* Reduce dims read in any order print sorted, as the builder stores them. */
  const char *red = "pgraph 1\n%0 = param 0 \"a\" : f32[2,3]\n"
                    "%1 = reduce %0 {dims=[1,0], kind=sum} : f32[]\noutput %1\n";
  POOT_ASSERT_OK(poot_graph_parse(red, strlen(red), &g));
  POOT_ASSERT_OK(poot_graph_to_text(g, &text));
  assert_non_null(strstr(text, "{kind=sum, dims=[0,1]}"));
  poot_free(text);
  poot_graph_destroy(g);
}

static void test_wrong_arity(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = add %0 : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (add): arity: takes 2 operands, got 1");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = iota %0 {axis=0} : f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (iota): arity");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = dynamic_slice %0 : f32[1]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (dynamic_slice): arity");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2, %3 = neg %0 : f32[2], f32[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (neg): arity: the op has 1 results, the node declares 2");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = composite \"x.y\" (%0, %1) : f32[2] {\n"
                                   "  %3 = param 0 : f32[2]\n"
                                   "  return %3\n}\n"),
                         POOT_INVALID_ARGUMENT, "arity: body has 1 params for 2 operands");
}

static void test_bad_attribute(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = param 0 \"a\" : f32[2,3]\n"
                               "%1 = transpose %0 {dims=[0,0]} : f32[2,2]\n"),
                         POOT_INVALID_ARGUMENT, "node %1 (transpose): bad attribute");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = reduce %0 {kind=sum, dims=[1]} : f32[]\n"),
                         POOT_INVALID_ARGUMENT, "node %2 (reduce): bad attribute");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = slice %0 {start=[1], limit=[3], stride=[1]} : f32[2]\n"),
                         POOT_INVALID_ARGUMENT, "node %2 (slice): bad attribute");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2, %3 = top_k %0 {k=3} : f32[3], i32[3]\n"),
                         POOT_INVALID_ARGUMENT, "node %2 (top_k): bad attribute");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = neg %0 check pos_out_of_range : f32[2]\n"),
                         POOT_INVALID_ARGUMENT, "node %2 (neg): bad check");
  POOT_ASSERT_STATUS_MSG(parse(HDR "%2 = convert %0 : q4_0[2]\n"), POOT_INVALID_ARGUMENT,
                         "node %2 (convert)");
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = weight : f32[2]\n"), POOT_FORMAT,
                         "line 2:13: expected a weight name");
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = weight w : f32[2]\n%1 = weight \"w\" : f32[2]\n"),
                         POOT_INVALID_ARGUMENT, "duplicate weight");
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = slot pos : f32[]\n"), POOT_INVALID_ARGUMENT,
                         "node %0 (leaf): slot leaf: a pos slot needs an integer dtype");
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = state \"s\" : f32[2]\n%1 = state \"s\" : f32[2]\n"),
                         POOT_INVALID_ARGUMENT, "node %1 (leaf): state leaf: duplicate state");
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = weight output : f32[2]\n"
                               "%1 = composite \"a.b\" () : f32[2] {\n"
                               "  %2 = weight output_norm : f32[2]\n  return %2\n}\n"),
                         POOT_INVALID_ARGUMENT, "only allowed in the root region");
}

static void test_results_rules(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(parse("pgraph 1\n%0 = state \"s\" : f32[2]\n%1 = param 0 \"a\" : f16[2]\n"
                               "update %0 = %1\n"),
                         POOT_INVALID_ARGUMENT, "update %1 of state \"s\"");
  POOT_ASSERT_STATUS_MSG(parse(HDR "update %0 = %0\n"), POOT_FORMAT, "line 4:1: update target is not a state");
  POOT_ASSERT_STATUS_MSG(parse(HDR "env \"e\" = %0\nenv \"e\" = %1\n"), POOT_INVALID_ARGUMENT,
                         "env name \"e\" is used twice");
}

static void test_builder_rejects(void **state) {
  (void)state;
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type f = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){2});
  poot_type h = poot_type_make(POOT_DTYPE_F16, 1, (int64_t[]){2});
  poot_value a, b, r = 123;
  POOT_ASSERT_OK(poot_graph_add_param(g, "a", &f, &a));
  POOT_ASSERT_OK(poot_graph_add_param(g, "b", &h, &b));
  POOT_ASSERT_STATUS_MSG(poot_graph_binary(g, POOT_OP_ADD, a, b, &r), POOT_INVALID_ARGUMENT,
                         "node %2 (add): same operand types");
  assert_int_equal(r, POOT_VALUE_NONE);
  POOT_ASSERT_STATUS_MSG(poot_graph_binary(g, POOT_OP_ADD, a, 99, &r), POOT_INVALID_ARGUMENT,
                         "dangling value");
  POOT_ASSERT_STATUS_MSG(poot_graph_unary(g, POOT_OP_ADD, a, &r), POOT_INVALID_ARGUMENT,
                         "not an elementwise unary op");
  POOT_ASSERT_STATUS(poot_graph_transpose(g, a, (int64_t[]){1}, &r), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS_MSG(poot_graph_add_param(g, "a", &f, &r), POOT_INVALID_ARGUMENT, "duplicate");
  poot_weight_id bad = {.key = 1, .name = ""};
  POOT_ASSERT_STATUS_MSG(poot_graph_add_weight(g, &bad, &f, &r), POOT_INVALID_ARGUMENT,
                         "a weight needs a display name");
  {
    /* A weight key and a weight name are each one weight's. */
    poot_graph *wg = NULL;
    POOT_ASSERT_OK(poot_graph_create(&wg));
    poot_weight_id w1 = {.key = 7, .name = "w1"}, w2 = {.key = 7, .name = "w2"},
                   w3 = {.key = 8, .name = "w1"};
    POOT_ASSERT_OK(poot_graph_add_weight(wg, &w1, &f, &r));
    POOT_ASSERT_STATUS_MSG(poot_graph_add_weight(wg, &w2, &f, &r), POOT_INVALID_ARGUMENT,
                           "duplicate weight \"w1\"");
    POOT_ASSERT_STATUS_MSG(poot_graph_add_weight(wg, &w3, &f, &r), POOT_INVALID_ARGUMENT,
                           "duplicate weight \"w1\"");
    poot_graph_destroy(wg);
  }
  poot_type neg = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){-1});
  POOT_ASSERT_STATUS(poot_graph_add_param(g, "n", &neg, &r), POOT_INVALID_ARGUMENT);
  poot_type q = poot_type_make(POOT_DTYPE_Q4_K, 1, (int64_t[]){100});
  poot_weight_id out = poot_weight_id_named("output");
  POOT_ASSERT_STATUS_MSG(poot_graph_add_weight(g, &out, &q, &r), POOT_INVALID_ARGUMENT,
                         "multiple of 256");
  /* Composite misuse: attention with mismatched heads, abort keeps the graph valid. */
  poot_value p;
  POOT_ASSERT_OK(poot_graph_composite_begin(g, "my.op", 0, NULL, 1, &a, &p));
  POOT_ASSERT_STATUS_MSG(poot_graph_add_state(g, "s", &f, &r), POOT_INVALID_ARGUMENT,
                         "only allowed in the root region");
  POOT_ASSERT_STATUS_MSG(poot_graph_binary(g, POOT_OP_ADD, p, a, &r), POOT_INVALID_ARGUMENT,
                         "not in the region being built");
  POOT_ASSERT_STATUS_MSG(poot_graph_verify(g), POOT_INVALID_ARGUMENT, "still open");
  poot_graph_composite_abort(g);
  uint32_t nodes = poot_graph_node_count(g);
  assert_int_equal(nodes, 2);
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_MUL, a, a, &r));
  POOT_ASSERT_OK(poot_graph_set_output(g, r));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_type_mismatch), cmocka_unit_test(test_shape_mismatch),
      cmocka_unit_test(test_dangling_value), cmocka_unit_test(test_cycle),
      cmocka_unit_test(test_wrong_arity),   cmocka_unit_test(test_bad_attribute),
      cmocka_unit_test(test_results_rules), cmocka_unit_test(test_builder_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
