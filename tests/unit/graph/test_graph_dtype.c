/* test_graph_dtype.c — the dtype table, shapes, byte sizes and enum names;
 * allocation failures in the builder, printer and parser. */
#include "graph_fixtures.h"
#include "poot_test.h"

typedef struct expect {
  poot_dtype dt;
  const char *name;
  bool is_float, is_int, is_signed, is_packed;
  size_t elem_bytes;
  int64_t block_elems;
  size_t block_bytes;
} expect;

static void test_dtype_table(void **state) {
  (void)state;
  /* Block sizes as GGUF (ggml's type_traits) defines them. */
  static const expect table[] = {
      {POOT_DTYPE_F32, "f32", true, false, true, false, 4, 1, 4},
      {POOT_DTYPE_F16, "f16", true, false, true, false, 2, 1, 2},
      {POOT_DTYPE_BF16, "bf16", true, false, true, false, 2, 1, 2},
      {POOT_DTYPE_I8, "i8", false, true, true, false, 1, 1, 1},
      {POOT_DTYPE_U8, "u8", false, true, false, false, 1, 1, 1},
      {POOT_DTYPE_I16, "i16", false, true, true, false, 2, 1, 2},
      {POOT_DTYPE_I32, "i32", false, true, true, false, 4, 1, 4},
      {POOT_DTYPE_I64, "i64", false, true, true, false, 8, 1, 8},
      {POOT_DTYPE_U32, "u32", false, true, false, false, 4, 1, 4},
      {POOT_DTYPE_BOOL, "bool", false, false, false, false, 1, 1, 1},
      {POOT_DTYPE_Q8_0, "q8_0", false, false, false, true, 0, 32, 34},
      {POOT_DTYPE_Q4_0, "q4_0", false, false, false, true, 0, 32, 18},
      {POOT_DTYPE_Q4_1, "q4_1", false, false, false, true, 0, 32, 20},
      {POOT_DTYPE_Q5_0, "q5_0", false, false, false, true, 0, 32, 22},
      {POOT_DTYPE_Q5_1, "q5_1", false, false, false, true, 0, 32, 24},
      {POOT_DTYPE_Q4_K, "q4_k", false, false, false, true, 0, 256, 144},
      {POOT_DTYPE_Q5_K, "q5_k", false, false, false, true, 0, 256, 176},
      {POOT_DTYPE_Q6_K, "q6_k", false, false, false, true, 0, 256, 210},
      {POOT_DTYPE_Q8_K, "q8_k", false, false, false, true, 0, 256, 292},
      {POOT_DTYPE_Q2_K, "q2_k", false, false, false, true, 0, 256, 84},
      {POOT_DTYPE_Q3_K, "q3_k", false, false, false, true, 0, 256, 110},
  };
  assert_int_equal(sizeof table / sizeof table[0], POOT_DTYPE_COUNT - 1);
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    const expect *e = &table[i];
    const poot_dtype_info *info = poot_dtype_info_of(e->dt);
    assert_non_null(info);
    assert_string_equal(info->name, e->name);
    assert_string_equal(poot_dtype_name(e->dt), e->name);
    assert_int_equal(info->is_float, e->is_float);
    assert_int_equal(info->is_int, e->is_int);
    assert_int_equal(info->is_signed, e->is_signed);
    assert_int_equal(info->is_packed, e->is_packed);
    assert_int_equal(info->elem_bytes, e->elem_bytes);
    assert_int_equal(info->block_elems, e->block_elems);
    assert_int_equal(info->block_bytes, e->block_bytes);
    assert_int_equal(info->bits, e->elem_bytes * 8);
    assert_int_equal(poot_dtype_is_float(e->dt), e->is_float);
    assert_int_equal(poot_dtype_is_int(e->dt), e->is_int);
    assert_int_equal(poot_dtype_is_packed(e->dt), e->is_packed);
    poot_dtype back = POOT_DTYPE_NONE;
    assert_true(poot_dtype_from_name(e->name, strlen(e->name), &back));
    assert_int_equal(back, e->dt);
  }
  poot_dtype dt = POOT_DTYPE_F32;
  assert_false(poot_dtype_from_name("f64", 3, &dt));
  assert_int_equal(dt, POOT_DTYPE_NONE);
  assert_false(poot_dtype_from_name("f3", 2, &dt));
  assert_null(poot_dtype_info_of(POOT_DTYPE_NONE));
  assert_null(poot_dtype_info_of(POOT_DTYPE_COUNT));
  assert_string_equal(poot_dtype_name((poot_dtype)99), "?");
}

static void test_byte_sizes(void **state) {
  (void)state;
  size_t bytes = 1;
  poot_shape s = poot_shape_of(2, 4096, 4096);
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_Q4_K, &s, &bytes));
  assert_int_equal(bytes, (size_t)4096 * 16 * 144);
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_Q8_0, &s, &bytes));
  assert_int_equal(bytes, (size_t)4096 * 128 * 34);
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_BF16, &s, &bytes));
  assert_int_equal(bytes, (size_t)4096 * 4096 * 2);
  poot_shape scalar = poot_shape_make(0, NULL);
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_I64, &scalar, &bytes));
  assert_int_equal(bytes, 8);
  poot_shape empty = poot_shape_of(3, 5, 0, 7);
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_F32, &empty, &bytes));
  assert_int_equal(bytes, 0);
  int64_t n = -1;
  POOT_ASSERT_OK(poot_shape_elements(&empty, &n));
  assert_int_equal(n, 0);
  poot_shape odd = poot_shape_of(2, 2, 48);
  POOT_ASSERT_STATUS_MSG(poot_type_byte_size(POOT_DTYPE_Q4_0, &odd, &bytes), POOT_INVALID_ARGUMENT,
                         "multiple of 32");
  assert_int_equal(bytes, 0);
  POOT_ASSERT_STATUS(poot_type_byte_size(POOT_DTYPE_Q4_0, &scalar, &bytes), POOT_INVALID_ARGUMENT);
  poot_shape huge = poot_shape_of(4, INT64_MAX / 2, 4, 1, 1);
  POOT_ASSERT_STATUS(poot_type_byte_size(POOT_DTYPE_F32, &huge, &bytes), POOT_INVALID_ARGUMENT);
  poot_shape neg = poot_shape_of(1, -3);
  POOT_ASSERT_STATUS(poot_shape_elements(&neg, &n), POOT_INVALID_ARGUMENT);
  poot_shape r9 = poot_shape_of(1, 1);
  r9.rank = 9;
  POOT_ASSERT_STATUS(poot_shape_elements(&r9, &n), POOT_INVALID_ARGUMENT);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_type t = {POOT_DTYPE_Q6_K, s};
  poot_type_format(&sb, &t);
  poot_strbuf_puts(&sb, " ");
  t = (poot_type){POOT_DTYPE_BOOL, scalar};
  poot_type_format(&sb, &t);
  assert_string_equal(sb.data, "q6_k[4096,4096] bool[]");
  poot_strbuf_deinit(&sb);
}

static void test_enum_names(void **state) {
  (void)state;
  for (int op = 0; op < POOT_OP_COUNT; op++) {
    const char *name = poot_op_name((poot_op)op);
    poot_op back = POOT_OP_COUNT;
    assert_true(poot_op_from_name(name, strlen(name), &back));
    assert_int_equal(back, op);
  }
  int32_t lo, hi;
  poot_op_arity(POOT_OP_CONCAT, &lo, &hi);
  assert_int_equal(lo, 1);
  assert_int_equal(hi, -1);
  poot_op_arity(POOT_OP_SCATTER_UPDATE, &lo, &hi);
  assert_int_equal(lo, 3);
  assert_int_equal(hi, 3);
  for (int t = 0; t < POOT_TRAP_COUNT; t++) {
    const char *name = poot_trap_name((poot_trap)t);
    poot_trap back = POOT_TRAP_COUNT;
    assert_true(poot_trap_from_name(name, strlen(name), &back));
    assert_int_equal(back, t);
  }
  assert_string_equal(poot_trap_name(POOT_TRAP_POS_OUT_OF_RANGE), "pos_out_of_range");
  for (int k = 1; k < POOT_SLOT_KIND_COUNT; k++) {
    const char *name = poot_slot_kind_name((poot_slot_kind)k);
    poot_slot_kind back = POOT_SLOT_NONE;
    assert_true(poot_slot_kind_from_name(name, strlen(name), &back));
    assert_int_equal(back, k);
  }
  assert_string_equal(poot_storage_name(POOT_STORAGE_WEIGHT), "weight");
  /* Weight display names print bare when the text form reads them back as
   * one word, quoted otherwise; the text form's key is the name's hash. */
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_weight_name_format(&sb, "blk.3.ffn_down");
  assert_string_equal(sb.data, "blk.3.ffn_down");
  poot_strbuf_clear(&sb);
  poot_weight_name_format(&sb, "vision patch");
  assert_string_equal(sb.data, "\"vision patch\"");
  poot_strbuf_clear(&sb);
  poot_weight_name_format(&sb, "blk.3.");
  assert_string_equal(sb.data, "\"blk.3.\"");
  poot_weight_id id = poot_weight_id_named("token_embd");
  assert_string_equal(id.name, "token_embd");
  assert_true(id.key == poot_weight_key_of_name("token_embd", 10));
  assert_true(id.key != poot_weight_key_of_name("token_embe", 10));
  poot_strbuf_deinit(&sb);
}

/* Allocation failures anywhere in building, printing or parsing return
 * OUT_OF_MEMORY (never a crash or a leak). */
static poot_status try_build_print_parse(void *ctx) {
  (void)ctx;
  poot_graph *g = NULL;
  poot_status st = poot_graph_create(&g);
  if (!st) st = graph_fixture_all_ops(g);
  char *text = NULL;
  if (!st) st = poot_graph_to_text(g, &text);
  poot_graph *g2 = NULL;
  if (!st) st = poot_graph_parse(text, strlen(text), &g2);
  poot_free(text);
  poot_graph_destroy(g);
  poot_graph_destroy(g2);
  return st;
}

static void test_alloc_failure(void **state) {
  (void)state;
  assert_true(poot_test_oom_sweep("build, print, parse", try_build_print_parse, NULL, 100000) > 50);
  /* A builder call that fails for memory leaves a graph that still works. */
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type t = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){4});
  poot_value a, r = 0;
  POOT_ASSERT_OK(poot_graph_add_param(g, "a", &t, &a));
  poot_status st = NULL;
  for (int i = 0; i < 2000 && !st; i++) {
    poot_alloc_fail_after(1);
    st = poot_graph_binary(g, POOT_OP_ADD, a, a, &r);
    poot_alloc_fail_after(0);
  }
  POOT_ASSERT_STATUS(st, POOT_OUT_OF_MEMORY);
  assert_int_equal(r, POOT_VALUE_NONE);
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_MUL, a, a, &r));
  POOT_ASSERT_OK(poot_graph_set_output(g, r));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_byte_sizes),
      cmocka_unit_test(test_enum_names),
      cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
