/* test_graph_text.c — the text form: the documented example, parse errors
 * with positions, bit-exact float constants, strings, hostile input. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "graph_fixtures.h"
#include "poot_test.h"

static char *to_text(const poot_graph *g) {
  char *t = NULL;
  POOT_ASSERT_OK(poot_graph_to_text(g, &t));
  return t;
}

static void test_example_file(void **state) {
  (void)state;
  const char *src = poot_test_source_dir();
  if (!src) skip();
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/unit/graph/data/attention_step.pgraph", src);
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_load(path, &g));
  const poot_type *ot = poot_graph_value_type(g, poot_graph_output(g));
  assert_non_null(ot);
  assert_int_equal(ot->dtype, POOT_DTYPE_F32);
  assert_int_equal(ot->shape.rank, 3);
  assert_int_equal(poot_graph_state_count(g), 2);
  int checks = 0;
  for (uint32_t i = 0; i < poot_graph_node_count(g); i++)
    checks += poot_graph_node(g, i)->trap == POOT_TRAP_POS_OUT_OF_RANGE;
  assert_int_equal(checks, 2);
  /* Without its comments the file is exactly what the builder prints. */
  poot_graph *built = NULL;
  POOT_ASSERT_OK(poot_graph_create(&built));
  POOT_ASSERT_OK(graph_fixture_attention_step(built, 8, 2, 4));
  char *a = to_text(g), *b = to_text(built);
  assert_string_equal(a, b);
  uint64_t ha = 0, hb = 0;
  POOT_ASSERT_OK(poot_graph_hash(g, &ha));
  POOT_ASSERT_OK(poot_graph_hash(built, &hb));
  assert_true(ha == hb);
  poot_free(a);
  poot_free(b);
  poot_graph_destroy(built);
  poot_graph_destroy(g);
  POOT_ASSERT_STATUS_MSG(poot_graph_load("/nonexistent/x.pgraph", &g), POOT_NOT_FOUND,
                         "x.pgraph");
  assert_null(g);
}

typedef struct bad_case {
  const char *text;
  const char *needle;
} bad_case;

static void test_parse_errors(void **state) {
  (void)state;
  static const bad_case cases[] = {
      {"", "line 1:1: expected the header 'pgraph 1', got end of input"},
      {"pgraph 2\n", "line 1:8: expected the format version 1"},
      {"pgraph 1\n%0 = frob : f32[2]\n", "line 2:6: expected an op name, got 'frob'"},
      {"pgraph 1\n%0 = param 0 \"a\" : f33[2]\n", "line 2:20: expected a dtype"},
      {"pgraph 1\n%0 = param 0 \"a : f32[2]\n", "line 2:14: unterminated string"},
      {"pgraph 1\n%0 = const [1, 2] : f32[3]\n", "element count does not match"},
      {"pgraph 1\n%0 = const [1x] : f32[]\n", "line 2:13: expected a float, got '1x'"},
      {"pgraph 1\n%0 = const [300] : i8[]\n", "expected an i8 integer"},
      {"pgraph 1\n%0 = const [1] : q4_0[32]\n", "packed constant data as 0x"},
      {"pgraph 1\n%0 = const 0x00 : q4_0[32]\n", "hex data does not match"},
      {"pgraph 1\n%0 = const [nan(0x3f800000)] : f32[]\n", "the bit pattern of a NaN"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = reduce %0 {kind=sum} : f32[]\n",
       "reduce needs attribute 'dims'"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = reduce %0 {kind=foo, dims=[0]} : f32[]\n",
       "line 3:22: expected sum, max, min or argmax"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = neg %0 {axis=0} : f32[2]\n",
       "expected an attribute of neg"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = composite \"c\" (%0) : f32[2] {\n",
       "line 4:1: expected a node or 'return', got end of input"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[1,2,3,4,5,6,7,8,9]\n", "rank exceeds 8"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%0 = neg %0 : f32[2]\n", "line 3:1: value defined twice"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\noutput %0\noutput %0\n", "line 4:1: output given twice"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[-2]\n", "expected a dim >= 0"},
      {"pgraph 1\n%0 = param 0 \"a\\q\" : f32[2]\n", "bad escape"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = neg %0 check maybe : f32[2]\n",
       "expected a trap code"},
      {"pgraph 1\n%0 = param 0 \"a\" : f32[2]\n%1 = neg %0 : f32[2], f32[2]\n",
       "more types than results"},
      {"pgraph 1\n%0 = param 99999999 \"a\" : f32[2]\n", "a param index in [0, 65535]"},
      {"pgraph 1\n$\n", "line 2:1: expected a node, output, update or env, got '$'"},
      {"pgraph 1\n%0 = slot tokens : i32[1]\n", "token, pos, slot_map, write_map"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    poot_graph *g = NULL;
    poot_status st = poot_graph_parse(cases[i].text, strlen(cases[i].text), &g);
    assert_null(g);
    poot_status_code code = poot_status_code_of(st);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", poot_status_message(st));
    poot_status_free(st);
    if (code != POOT_FORMAT || !strstr(msg, cases[i].needle))
      fail_msg("case %zu: got %s '%s', want FORMAT mentioning '%s'", i,
               poot_status_code_name(code), msg, cases[i].needle);
  }
}

/* Float constants survive print → parse bit for bit, NaN payloads included. */
static void test_float_bits_roundtrip(void **state) {
  (void)state;
  uint64_t rng = 12345;
  enum { N = 4096 };
  uint32_t *f32 = poot_malloc(N * sizeof *f32);
  uint16_t *f16 = poot_malloc(N * sizeof *f16);
  assert_non_null(f32);
  assert_non_null(f16);
  for (int i = 0; i < N; i++) {
    uint64_t r = poot_test_rand_u64(&rng);
    f32[i] = (uint32_t)r;
    f16[i] = (uint16_t)(r >> 32);
  }
  /* Hand-picked edge cases. */
  uint32_t e32[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x7f800000,
                    0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff, 0x3f800000};
  uint16_t e16[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01};
  memcpy(f32, e32, sizeof e32);
  memcpy(f16, e16, sizeof e16);
  for (int kind = 0; kind < 3; kind++) {
    poot_graph *g = NULL;
    POOT_ASSERT_OK(poot_graph_create(&g));
    poot_tensor t;
    t.type = poot_type_make(kind == 0 ? POOT_DTYPE_F32 : kind == 1 ? POOT_DTYPE_F16 : POOT_DTYPE_BF16,
                            1, (int64_t[]){N});
    t.data = kind == 0 ? (void *)f32 : (void *)f16;
    t.size = kind == 0 ? N * 4 : N * 2;
    poot_value c;
    POOT_ASSERT_OK(poot_graph_add_const(g, &t, &c));
    POOT_ASSERT_OK(poot_graph_set_output(g, c));
    char *text = to_text(g);
    poot_graph *g2 = NULL;
    POOT_ASSERT_OK(poot_graph_parse(text, strlen(text), &g2));
    const poot_node *n = poot_graph_value_node(g2, poot_graph_output(g2), NULL);
    assert_int_equal(n->storage, POOT_STORAGE_CONST);
    assert_int_equal(n->constant->size, t.size);
    if (memcmp(n->constant->data, t.data, t.size) != 0) {
      const uint8_t *a = t.data, *b = n->constant->data;
      size_t k = 0;
      while (a[k] == b[k]) k++;
      fail_msg("dtype kind %d: byte %zu differs after the round trip", kind, k);
    }
    char *text2 = to_text(g2);
    assert_string_equal(text, text2);
    poot_free(text);
    poot_free(text2);
    poot_graph_destroy(g);
    poot_graph_destroy(g2);
  }
  poot_free(f32);
  poot_free(f16);
  /* Spellings the printer uses. */
  const char *t = "pgraph 1\n%0 = const [nan, -nan, inf, -inf, -0, nan(0x7fc00001), 1e-45, 0.1] : f32[8]\n"
                  "output %0\n";
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_parse(t, strlen(t), &g));
  char *back = to_text(g);
  assert_string_equal(back, t);
  const uint32_t *bits = poot_graph_value_node(g, 0, NULL)->constant->data;
  assert_int_equal(bits[0], 0x7fc00000u);
  assert_int_equal(bits[1], 0xffc00000u);
  assert_int_equal(bits[4], 0x80000000u);
  assert_int_equal(bits[5], 0x7fc00001u);
  assert_int_equal(bits[6], 1u);
  assert_int_equal(bits[7], 0x3dcccccdu);
  poot_free(back);
  poot_graph_destroy(g);
}

static void test_strings_and_attrs(void **state) {
  (void)state;
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type t = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){2});
  poot_value s, e;
  POOT_ASSERT_OK(poot_graph_add_state(g, "we\"ird\\name\n\t\x01\x7f", &t, &s));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "top_p", &t, &e));
  POOT_ASSERT_OK(poot_graph_add_env(g, "caf\xc3\xa9", e));
  double vals[] = {0.1, -0.0, 1e300, 5e-324, INFINITY, -INFINITY, NAN, 3.0};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    poot_value p, r;
    poot_composite_attr a = {.key = "v", .kind = POOT_CATTR_FLOAT, .f = vals[i]};
    POOT_ASSERT_OK(poot_graph_composite_begin(g, "t.f", 1, &a, 1, &s, &p));
    POOT_ASSERT_OK(poot_graph_composite_end(g, 1, &p, &r));
  }
  POOT_ASSERT_OK(poot_graph_set_output(g, s));
  char *text = to_text(g);
  assert_non_null(strstr(text, "state \"we\\\"ird\\\\name\\n\\t\\x01\\x7f\""));
  assert_non_null(strstr(text, "{v=3.0}"));
  assert_non_null(strstr(text, "{v=5e-324}"));
  assert_non_null(strstr(text, "{v=-0.0}"));
  poot_graph *g2 = NULL;
  POOT_ASSERT_OK(poot_graph_parse(text, strlen(text), &g2));
  char *text2 = to_text(g2);
  assert_string_equal(text, text2);
  const poot_node *n = poot_graph_value_node(g2, poot_graph_output(g2), NULL);
  assert_string_equal(n->name, "we\"ird\\name\n\t\x01\x7f");
  const char *env_name = NULL;
  poot_value ev;
  poot_graph_env_at(g2, 0, &env_name, &ev);
  assert_string_equal(env_name, "caf\xc3\xa9");
  poot_free(text);
  poot_free(text2);
  poot_graph_destroy(g);
  poot_graph_destroy(g2);
}

/* Every prefix and many one-byte mutations of a valid file parse to a graph
 * or fail with FORMAT/INVALID_ARGUMENT; none crashes or leaks (ASan). */
static void test_hostile_input(void **state) {
  (void)state;
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  POOT_ASSERT_OK(graph_fixture_attention_step(g, 4, 1, 2));
  char *text = to_text(g);
  poot_graph_destroy(g);
  size_t len = strlen(text);
  size_t ok = 0;
  for (size_t cut = 0; cut <= len; cut++) {
    poot_status st = poot_graph_parse(text, cut, &g);
    poot_status_code c = poot_status_code_of(st);
    poot_status_free(st);
    assert_true(c == POOT_OK || c == POOT_FORMAT || c == POOT_INVALID_ARGUMENT);
    ok += c == POOT_OK;
    poot_graph_destroy(g);
  }
  assert_true(ok >= 1);
  char *mut = poot_malloc(len + 1);
  assert_non_null(mut);
  uint64_t rng = 99;
  static const char alphabet[] = "%0123456789[]{}(),:=\"\\#xq_-. \n\t\x01\xff";
  for (int i = 0; i < 4000; i++) {
    memcpy(mut, text, len + 1);
    for (int k = 0; k < 1 + i % 3; k++) {
      size_t at = poot_test_rand_u64(&rng) % len;
      mut[at] = alphabet[poot_test_rand_u64(&rng) % (sizeof alphabet - 1)];
    }
    poot_status st = poot_graph_parse(mut, len, &g);
    poot_status_code c = poot_status_code_of(st);
    poot_status_free(st);
    assert_true(c == POOT_OK || c == POOT_FORMAT || c == POOT_INVALID_ARGUMENT);
    if (g) {
      /* Whatever parses must print and reparse identically. */
      char *a = to_text(g), *b = NULL;
      poot_graph *g2 = NULL;
      POOT_ASSERT_OK(poot_graph_parse(a, strlen(a), &g2));
      b = to_text(g2);
      assert_string_equal(a, b);
      poot_free(a);
      poot_free(b);
      poot_graph_destroy(g2);
    }
    poot_graph_destroy(g);
  }
  poot_free(mut);
  poot_free(text);
}

/* Every file of the fuzzer's corpus is a valid graph that round-trips. */
static void test_corpus_files(void **state) {
  (void)state;
  const char *src = poot_test_source_dir();
  if (!src) skip();
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/graph_text", src);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 7 || strcmp(e->d_name + n - 7, ".pgraph") != 0) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    poot_graph *g = NULL;
    POOT_ASSERT_OK(poot_graph_load(path, &g));
    char *a = to_text(g);
    poot_graph *g2 = NULL;
    POOT_ASSERT_OK(poot_graph_parse(a, strlen(a), &g2));
    char *b = to_text(g2);
    assert_string_equal(a, b);
    poot_free(a);
    poot_free(b);
    poot_graph_destroy(g);
    poot_graph_destroy(g2);
    files++;
  }
  closedir(d);
  assert_true(files >= 3);
}

/* The worked example in docs/graph.md parses, verifies and is the test file. */
static void test_docs_example(void **state) {
  (void)state;
  const char *src = poot_test_source_dir();
  if (!src) skip();
  char path[4096];
  snprintf(path, sizeof path, "%s/docs/graph.md", src);
  char *doc = NULL;
  size_t size = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &doc, &size));
  const char *start = strstr(doc, "```\npgraph 1\n%0 = slot pos");
  assert_non_null(start);
  start += 4;
  const char *end = strstr(start, "```");
  assert_non_null(end);
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_parse(start, (size_t)(end - start), &g));
  snprintf(path, sizeof path, "%s/tests/unit/graph/data/attention_step.pgraph", src);
  poot_graph *file = NULL;
  POOT_ASSERT_OK(poot_graph_load(path, &file));
  uint64_t a = 0, b = 0;
  POOT_ASSERT_OK(poot_graph_hash(g, &a));
  POOT_ASSERT_OK(poot_graph_hash(file, &b));
  assert_true(a == b);
  poot_graph_destroy(g);
  poot_graph_destroy(file);
  poot_free(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_example_file),         cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_float_bits_roundtrip), cmocka_unit_test(test_strings_and_attrs),
      cmocka_unit_test(test_hostile_input),        cmocka_unit_test(test_corpus_files),
      cmocka_unit_test(test_docs_example),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
