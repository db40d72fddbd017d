/* poot_eval: movement ops, reductions, dot_general, cumsum, top_k,
 * (de)quantize, rng, checks (typed faults), input binding, states and env. */
#include <math.h>

#include "eval_test_util.h"

#include "poot/quant.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* --------------------------------------------------------------- movement */

static void test_broadcast_reshape_transpose(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float row[] = {1, 2, 3};
  poot_value x = tg_f32(g, 3, row), b, s, c, r, t;
  poot_shape sh = poot_shape_of(2, 2, 3);
  POOT_ASSERT_OK(poot_graph_broadcast(g, x, &sh, DIMS(1), &b));
  float one = 7.0f;
  poot_value sc = tg_const(g, POOT_DTYPE_F32, 0, NULL, &one);
  poot_shape sh2 = poot_shape_of(2, 2, 2);
  POOT_ASSERT_OK(poot_graph_broadcast(g, sc, &sh2, NULL, &s));
  const float col[] = {10, 20};
  poot_value cv = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 1), col);
  POOT_ASSERT_OK(poot_graph_broadcast(g, cv, &sh, DIMS(0, 1), &c));
  poot_shape sh3 = poot_shape_of(3, 3, 2, 1);
  POOT_ASSERT_OK(poot_graph_reshape(g, c, &sh3, &r));
  POOT_ASSERT_OK(poot_graph_transpose(g, b, DIMS(1, 0), &t));
  POOT_ASSERT_OK(poot_graph_add_env(g, "b", b));
  POOT_ASSERT_OK(poot_graph_add_env(g, "s", s));
  POOT_ASSERT_OK(poot_graph_add_env(g, "r", r));
  poot_evaluation *ev = tg_run(g, t);
  const float wb[] = {1, 2, 3, 1, 2, 3}, ws[] = {7, 7, 7, 7}, wr[] = {10, 10, 10, 20, 20, 20},
              wt[] = {1, 1, 2, 2, 3, 3};
  tg_assert_f32(poot_evaluation_env(ev, "b")->data, wb, 6);
  tg_assert_f32(poot_evaluation_env(ev, "s")->data, ws, 4);
  tg_assert_f32(poot_evaluation_env(ev, "r")->data, wr, 6);
  assert_int_equal(poot_evaluation_env(ev, "r")->type.shape.rank, 3);
  tg_assert_f32(ev->output.data, wt, 6);
  assert_int_equal(ev->output.type.shape.dims[0], 3);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_slice_concat_pad(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const int32_t m[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  poot_value x = tg_const(g, POOT_DTYPE_I32, 2, DIMS(3, 4), m), s, e, c, p;
  POOT_ASSERT_OK(poot_graph_slice(g, x, DIMS(0, 1), DIMS(3, 4), DIMS(2, 2), &s)); /* [2,2] */
  POOT_ASSERT_OK(poot_graph_slice(g, x, DIMS(1, 2), DIMS(1, 4), NULL, &e));       /* [0,2] */
  poot_value parts[3] = {s, x, s};
  (void)parts;
  poot_value two[2] = {x, x};
  POOT_ASSERT_OK(poot_graph_concat(g, 2, two, 1, &c)); /* [3, 8] */
  int32_t zero = -1;
  poot_value pv = tg_const(g, POOT_DTYPE_I32, 0, NULL, &zero);
  const int32_t v2[] = {1, 2};
  poot_value small = tg_const(g, POOT_DTYPE_I32, 1, DIMS(2), v2);
  POOT_ASSERT_OK(poot_graph_pad(g, small, pv, DIMS(1), DIMS(2), DIMS(2), &p)); /* 1+2+1*2+2 = 7 */
  POOT_ASSERT_OK(poot_graph_add_env(g, "e", e));
  POOT_ASSERT_OK(poot_graph_add_env(g, "c", c));
  POOT_ASSERT_OK(poot_graph_add_env(g, "p", p));
  poot_evaluation *ev = tg_run(g, s);
  const int32_t ws[] = {1, 3, 9, 11};
  assert_memory_equal(ev->output.data, ws, sizeof ws);
  const poot_tensor *et = poot_evaluation_env(ev, "e");
  assert_int_equal(et->type.shape.dims[0], 0);
  assert_int_equal(et->size, 0);
  const int32_t wc[] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11};
  assert_memory_equal(poot_evaluation_env(ev, "c")->data, wc, sizeof wc);
  const int32_t wp[] = {-1, 1, -1, -1, 2, -1, -1};
  assert_memory_equal(poot_evaluation_env(ev, "p")->data, wp, sizeof wp);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* concat along axis 0 of three operands of different sizes */
  g = tg_new();
  const float a[] = {1, 2}, b[] = {3, 4, 5, 6}, d[] = {7, 8};
  poot_value va = tg_const(g, POOT_DTYPE_F32, 2, DIMS(1, 2), a);
  poot_value vb = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 2), b);
  poot_value vd = tg_const(g, POOT_DTYPE_F32, 2, DIMS(1, 2), d);
  poot_value three[3] = {va, vb, vd};
  POOT_ASSERT_OK(poot_graph_concat(g, 3, three, 0, &c));
  ev = tg_run(g, c);
  const float wcat[] = {1, 2, 3, 4, 5, 6, 7, 8};
  tg_assert_f32(ev->output.data, wcat, 8);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

/* A KV-cache step: dynamic_update_slice of a row at `pos` into [cap, d]. */
static poot_status kv_step(int32_t pos, poot_trap trap, poot_evaluation **out_ev,
                           poot_eval_fault *fault) {
  poot_graph *g = tg_new();
  const float cache[] = {0, 0, 0, 0, 0, 0, 0, 0};
  const float row[] = {5, 6};
  poot_value kv = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), cache);
  poot_value r = tg_const(g, POOT_DTYPE_F32, 2, DIMS(1, 2), row);
  poot_value starts[2] = {tg_scalar_i32(g, pos), tg_scalar_i32(g, 0)}, u;
  POOT_ASSERT_OK(poot_graph_dynamic_update_slice(g, kv, r, starts, trap, &u));
  POOT_ASSERT_OK(poot_graph_set_output(g, u));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.out_fault = fault;
  poot_status s = poot_eval(g, NULL, &opt, out_ev);
  poot_graph_destroy(g);
  return s;
}

static void test_dynamic_slices_and_faults(void **state) {
  (void)state;
  poot_evaluation *ev = NULL;
  poot_eval_fault fault;
  POOT_ASSERT_OK(kv_step(2, POOT_TRAP_POS_OUT_OF_RANGE, &ev, &fault));
  const float w2[] = {0, 0, 0, 0, 5, 6, 0, 0};
  tg_assert_f32(ev->output.data, w2, 8);
  poot_evaluation_destroy(ev);
  /* Fallback clamps 9 to 3 (the last row). */
  POOT_ASSERT_OK(kv_step(9, POOT_TRAP_NONE, &ev, &fault));
  const float w9[] = {0, 0, 0, 0, 0, 0, 5, 6};
  tg_assert_f32(ev->output.data, w9, 8);
  poot_evaluation_destroy(ev);
  /* With a check: a typed fault naming the node and trap code. */
  memset(&fault, 0, sizeof fault);
  poot_status s = kv_step(4, POOT_TRAP_POS_OUT_OF_RANGE, &ev, &fault);
  assert_null(ev);
  assert_int_equal(poot_status_code_of(s), POOT_KERNEL_FAULT);
  assert_non_null(strstr(poot_status_message(s), "dynamic_update_slice"));
  assert_non_null(strstr(poot_status_message(s), "pos_out_of_range"));
  char want[32];
  snprintf(want, sizeof want, "node %%%u ", fault.node);
  assert_non_null(strstr(poot_status_message(s), want));
  poot_status_free(s);
  assert_int_equal(fault.trap, POOT_TRAP_POS_OUT_OF_RANGE);
  assert_int_equal(fault.op, POOT_OP_DYNAMIC_UPDATE_SLICE);
  assert_int_equal(fault.index, 4);
  assert_int_equal(fault.limit, 4);
  assert_int_equal(fault.composite_node, UINT32_MAX);
  s = kv_step(-1, POOT_TRAP_POS_OUT_OF_RANGE, &ev, NULL);
  assert_int_equal(poot_status_consume(s), POOT_KERNEL_FAULT);

  /* dynamic_slice: clamped and checked. */
  poot_graph *g = tg_new();
  const int32_t m[] = {0, 1, 2, 3, 4, 5};
  poot_value x = tg_const(g, POOT_DTYPE_I32, 1, DIMS(6), m), d, e;
  poot_value st1[1] = {tg_scalar_i32(g, 5)};
  POOT_ASSERT_OK(poot_graph_dynamic_slice(g, x, st1, DIMS(3), POOT_TRAP_NONE, &d));
  poot_value st2[1] = {tg_scalar_i32(g, -2)};
  POOT_ASSERT_OK(poot_graph_dynamic_slice(g, x, st2, DIMS(2), POOT_TRAP_NONE, &e));
  POOT_ASSERT_OK(poot_graph_add_env(g, "e", e));
  ev = tg_run(g, d);
  const int32_t wd[] = {3, 4, 5}, we[] = {0, 1};
  assert_memory_equal(ev->output.data, wd, sizeof wd);
  assert_memory_equal(poot_evaluation_env(ev, "e")->data, we, sizeof we);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  g = tg_new();
  x = tg_const(g, POOT_DTYPE_I32, 1, DIMS(6), m);
  poot_value st3[1] = {tg_scalar_i32(g, 4)};
  POOT_ASSERT_OK(poot_graph_dynamic_slice(g, x, st3, DIMS(3), POOT_TRAP_SLICE_OUT_OF_RANGE, &d));
  POOT_ASSERT_OK(poot_graph_set_output(g, d));
  POOT_ASSERT_OK(poot_graph_verify(g));
  POOT_ASSERT_STATUS_MSG(poot_eval(g, NULL, NULL, &ev), POOT_KERNEL_FAULT, "slice_out_of_range");
  poot_graph_destroy(g);
}

static void test_gather_scatter(void **state) {
  (void)state;
  /* Embedding lookup: table [4, 2], ids [3]. */
  const float table[] = {0, 1, 10, 11, 20, 21, 30, 31};
  const int32_t ids[] = {2, 0, 7};
  poot_graph *g = tg_new();
  poot_value t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), table);
  poot_value i = tg_i32(g, 3, ids), r;
  POOT_ASSERT_OK(poot_graph_gather(g, t, i, 0, 0, POOT_TRAP_NONE, &r));
  poot_evaluation *ev = tg_run(g, r);
  const float w[] = {20, 21, 0, 1, 30, 31}; /* 7 clamps to 3 */
  tg_assert_f32(ev->output.data, w, 6);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* An unchecked gather from an empty axis has nothing to clamp to: zeros. */
  g = tg_new();
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(0, 2), table);
  i = tg_i32(g, 3, ids);
  POOT_ASSERT_OK(poot_graph_gather(g, t, i, 0, 0, POOT_TRAP_NONE, &r));
  ev = tg_run(g, r);
  const float zeros[6] = {0};
  tg_assert_f32(ev->output.data, zeros, 6);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* The same with a check traps on id 7. */
  g = tg_new();
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), table);
  i = tg_i32(g, 3, ids);
  POOT_ASSERT_OK(poot_graph_gather(g, t, i, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &r));
  POOT_ASSERT_OK(poot_graph_set_output(g, r));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_eval_fault fault;
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.out_fault = &fault;
  POOT_ASSERT_STATUS_MSG(poot_eval(g, NULL, &opt, &ev), POOT_KERNEL_FAULT,
                         "(gather): check failed: trap token_out_of_range: index 7 outside [0, 4)");
  assert_int_equal(fault.trap, POOT_TRAP_TOKEN_OUT_OF_RANGE);
  assert_int_equal(fault.index, 7);
  poot_graph_destroy(g);
  /* Gather along axis 1 with batch_dims 1: out[b, j] = table[b, idx[b, j]]. */
  g = tg_new();
  const int32_t bi[] = {1, 0, 3, 3};
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 4), table);
  i = tg_const(g, POOT_DTYPE_I32, 2, DIMS(2, 2), bi);
  POOT_ASSERT_OK(poot_graph_gather(g, t, i, 1, 1, POOT_TRAP_NONE, &r));
  ev = tg_run(g, r);
  const float wb[] = {1, 0, 31, 31};
  tg_assert_f32(ev->output.data, wb, 4);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* Gather along axis 1 without batch dims: [2,4] x [3] → [2,3]. */
  g = tg_new();
  const int32_t ci[] = {3, 0, 1};
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 4), table);
  i = tg_i32(g, 3, ci);
  POOT_ASSERT_OK(poot_graph_gather(g, t, i, 1, 0, POOT_TRAP_NONE, &r));
  ev = tg_run(g, r);
  const float wc[] = {11, 0, 1, 31, 20, 21};
  tg_assert_f32(ev->output.data, wc, 6);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* scatter_update: rows written in order, the last write wins, an
   * out-of-range index is skipped without a check. */
  g = tg_new();
  const float tgt[] = {0, 0, 0, 0, 0, 0, 0, 0};
  const int32_t si[] = {1, 3, 1, -1};
  const float upd[] = {1, 1, 2, 2, 3, 3, 4, 4};
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), tgt);
  i = tg_i32(g, 4, si);
  poot_value u = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), upd);
  POOT_ASSERT_OK(poot_graph_scatter_update(g, t, i, u, 0, POOT_TRAP_NONE, &r));
  ev = tg_run(g, r);
  const float ws[] = {0, 0, 3, 3, 0, 0, 2, 2};
  tg_assert_f32(ev->output.data, ws, 8);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  g = tg_new();
  t = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), tgt);
  i = tg_i32(g, 4, si);
  u = tg_const(g, POOT_DTYPE_F32, 2, DIMS(4, 2), upd);
  POOT_ASSERT_OK(poot_graph_scatter_update(g, t, i, u, 0, POOT_TRAP_WRITE_MAP_OUT_OF_RANGE, &r));
  POOT_ASSERT_OK(poot_graph_set_output(g, r));
  POOT_ASSERT_OK(poot_graph_verify(g));
  POOT_ASSERT_STATUS_MSG(poot_eval(g, NULL, NULL, &ev), POOT_KERNEL_FAULT,
                         "write_map_out_of_range: index -1");
  poot_graph_destroy(g);
}

/* ------------------------------------------------------------- reductions */

static poot_evaluation *reduce1(const float *x, int64_t rows, int64_t cols, poot_reduce_kind k,
                                uint32_t nd, const int64_t *dims, poot_dtype acc) {
  poot_graph *g = tg_new();
  poot_value v = tg_const(g, POOT_DTYPE_F32, 2, DIMS(rows, cols), x), r;
  POOT_ASSERT_OK(poot_graph_reduce(g, v, k, nd, dims, acc, &r));
  poot_evaluation *ev = tg_run(g, r);
  poot_graph_destroy(g);
  return ev;
}

static void test_reduce(void **state) {
  (void)state;
  /* Sum in index order: ((1e8 + 1) - 1e8) + 1 = 1 in f32 (not 2). */
  const float x[] = {1e8f, 1.0f, -1e8f, 1.0f, NAN, 2.0f, -0.0f, 0.0f};
  poot_evaluation *ev = reduce1(x, 2, 4, POOT_REDUCE_SUM, 1, DIMS(1), POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 1.0f);
  assert_true(isnan(((float *)ev->output.data)[1]));
  poot_evaluation_destroy(ev);
  ev = reduce1(x, 2, 4, POOT_REDUCE_MAX, 1, DIMS(1), POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 1e8f);
  assert_true(isnan(((float *)ev->output.data)[1]));
  poot_evaluation_destroy(ev);
  const float z[] = {0.0f, -0.0f, 3.0f, -0.0f};
  ev = reduce1(z, 2, 2, POOT_REDUCE_MIN, 1, DIMS(1), POOT_DTYPE_F32);
  assert_int_equal(poot_f32_bits(((float *)ev->output.data)[0]), 0x80000000u);
  assert_int_equal(poot_f32_bits(((float *)ev->output.data)[1]), 0x80000000u);
  poot_evaluation_destroy(ev);
  ev = reduce1(z, 2, 2, POOT_REDUCE_MAX, 1, DIMS(0), POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 3.0f);
  assert_int_equal(poot_f32_bits(((float *)ev->output.data)[1]), 0x80000000u); /* max(-0, -0) */
  poot_evaluation_destroy(ev);
  /* Both dims, and column-major order check: sum over dims {0,1} in
   * row-major order. */
  const float y[] = {1, 2, 3, 4, 5, 6};
  ev = reduce1(y, 2, 3, POOT_REDUCE_SUM, 2, DIMS(1, 0), POOT_DTYPE_F32);
  assert_int_equal(ev->output.type.shape.rank, 0);
  assert_true(((float *)ev->output.data)[0] == 21.0f);
  poot_evaluation_destroy(ev);
  /* argmax: first maximum; the first NaN wins. */
  const float am[] = {1, 5, 5, 2, 3, NAN, 9, NAN};
  ev = reduce1(am, 2, 4, POOT_REDUCE_ARGMAX, 1, DIMS(1), POOT_DTYPE_I32);
  assert_int_equal(((int32_t *)ev->output.data)[0], 1);
  assert_int_equal(((int32_t *)ev->output.data)[1], 1);
  poot_evaluation_destroy(ev);
  /* Empty reductions: sum 0, max -inf. */
  ev = reduce1(NULL, 2, 0, POOT_REDUCE_SUM, 1, DIMS(1), POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 0.0f);
  poot_evaluation_destroy(ev);
  ev = reduce1(NULL, 2, 0, POOT_REDUCE_MAX, 1, DIMS(1), POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[1] == -INFINITY);
  poot_evaluation_destroy(ev);
  /* Integer sums wrap in the accumulation dtype; f16 accumulation rounds
   * each step: 2048 + 1 + 1 stays 2048 in f16. */
  poot_graph *g = tg_new();
  const int8_t i8[] = {100, 100, 100};
  poot_value v = tg_const(g, POOT_DTYPE_I8, 1, DIMS(3), i8), r, r2;
  POOT_ASSERT_OK(poot_graph_reduce(g, v, POOT_REDUCE_SUM, 1, DIMS(0), POOT_DTYPE_I8, &r));
  POOT_ASSERT_OK(poot_graph_reduce(g, v, POOT_REDUCE_SUM, 1, DIMS(0), POOT_DTYPE_I32, &r2));
  POOT_ASSERT_OK(poot_graph_add_env(g, "wide", r2));
  ev = tg_run(g, r);
  assert_int_equal(((int8_t *)ev->output.data)[0], 44);
  assert_int_equal(((int32_t *)poot_evaluation_env(ev, "wide")->data)[0], 300);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  g = tg_new();
  const uint16_t h[] = {poot_f32_to_f16(2048.0f), 0x3C00, 0x3C00};
  v = tg_const(g, POOT_DTYPE_F16, 1, DIMS(3), h);
  POOT_ASSERT_OK(poot_graph_reduce(g, v, POOT_REDUCE_SUM, 1, DIMS(0), POOT_DTYPE_F16, &r));
  POOT_ASSERT_OK(poot_graph_reduce(g, v, POOT_REDUCE_SUM, 1, DIMS(0), POOT_DTYPE_F32, &r2));
  POOT_ASSERT_OK(poot_graph_add_env(g, "f32", r2));
  ev = tg_run(g, r);
  assert_int_equal(((uint16_t *)ev->output.data)[0], poot_f32_to_f16(2048.0f));
  assert_true(((float *)poot_evaluation_env(ev, "f32")->data)[0] == 2050.0f);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_dot_cumsum(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float a[] = {1, 2, 3, 4, 5, 6};        /* [2,3] */
  const float b[] = {1, 0, 0, 1, 1, 1};        /* [3,2] */
  poot_value va = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 3), a);
  poot_value vb = tg_const(g, POOT_DTYPE_F32, 2, DIMS(3, 2), b), r;
  poot_dot_dims dd = {.num_contract = 1, .lhs_contract = {1}, .rhs_contract = {0}};
  POOT_ASSERT_OK(poot_graph_dot_general(g, va, vb, &dd, POOT_DTYPE_F32, &r));
  poot_evaluation *ev = tg_run(g, r);
  const float w[] = {4, 5, 10, 11};
  tg_assert_f32(ev->output.data, w, 4);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* Batched, contracting the last dims of both (q · k^T per head), and the
   * index order of the accumulation. */
  g = tg_new();
  const float q[] = {1e8f, 1, -1e8f, 1, 1, 2, 3, 4}; /* [2 heads, 1, 4] */
  const float k[] = {1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1}; /* [2, 2, 4] */
  va = tg_const(g, POOT_DTYPE_F32, 3, DIMS(2, 1, 4), q);
  vb = tg_const(g, POOT_DTYPE_F32, 3, DIMS(2, 2, 4), k);
  poot_dot_dims bd = {.num_batch = 1, .lhs_batch = {0}, .rhs_batch = {0}, .num_contract = 1,
                      .lhs_contract = {2}, .rhs_contract = {2}};
  POOT_ASSERT_OK(poot_graph_dot_general(g, va, vb, &bd, POOT_DTYPE_F32, &r));
  ev = tg_run(g, r);
  assert_int_equal(ev->output.type.shape.rank, 3);
  const float wq[] = {1.0f, 1e8f, 10.0f, 4.0f};
  tg_assert_f32(ev->output.data, wq, 4);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* Integer dot wraps in i32. */
  g = tg_new();
  const int32_t ia[] = {65536, 65536}, ib[] = {65536, 1};
  va = tg_i32(g, 2, ia);
  vb = tg_i32(g, 2, ib);
  poot_dot_dims vd = {.num_contract = 1, .lhs_contract = {0}, .rhs_contract = {0}};
  POOT_ASSERT_OK(poot_graph_dot_general(g, va, vb, &vd, POOT_DTYPE_I32, &r));
  ev = tg_run(g, r);
  assert_int_equal(((int32_t *)ev->output.data)[0], 65536);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* cumsum along both axes. */
  g = tg_new();
  const float c[] = {1, 2, 3, 4, 5, 6};
  va = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 3), c);
  poot_value c0, c1;
  POOT_ASSERT_OK(poot_graph_cumsum(g, va, 1, POOT_DTYPE_F32, &c1));
  POOT_ASSERT_OK(poot_graph_cumsum(g, va, 0, POOT_DTYPE_F32, &c0));
  POOT_ASSERT_OK(poot_graph_add_env(g, "c0", c0));
  ev = tg_run(g, c1);
  const float w1[] = {1, 3, 6, 4, 9, 15}, w0[] = {1, 2, 3, 5, 7, 9};
  tg_assert_f32(ev->output.data, w1, 6);
  tg_assert_f32(poot_evaluation_env(ev, "c0")->data, w0, 6);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_top_k(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float x[] = {1, 3, 3, NAN, -INFINITY, 2, 0, -0.0f};
  poot_value v = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 4), x), vals, idx;
  POOT_ASSERT_OK(poot_graph_top_k(g, v, 3, &vals, &idx));
  POOT_ASSERT_OK(poot_graph_add_env(g, "idx", idx));
  poot_evaluation *ev = tg_run(g, vals);
  const int32_t wi[] = {3, 1, 2, 1, 2, 3};
  assert_memory_equal(poot_evaluation_env(ev, "idx")->data, wi, sizeof wi);
  const float wv[] = {NAN, 3, 3, 2, 0, -0.0f};
  tg_assert_f32(ev->output.data, wv, 6);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
  /* k = 0 and integers. */
  g = tg_new();
  const int32_t xi[] = {5, -1, 5, 7};
  v = tg_i32(g, 4, xi);
  POOT_ASSERT_OK(poot_graph_top_k(g, v, 4, &vals, &idx));
  POOT_ASSERT_OK(poot_graph_add_env(g, "idx", idx));
  ev = tg_run(g, vals);
  const int32_t wv2[] = {7, 5, 5, -1}, wi2[] = {3, 0, 2, 1};
  assert_memory_equal(ev->output.data, wv2, sizeof wv2);
  assert_memory_equal(poot_evaluation_env(ev, "idx")->data, wi2, sizeof wi2);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

/* quantize (a q8_0 K/V cache's write): GGUF's reference quantizer, bit for
 * bit; the packed rows then scattered, gathered and sliced in whole blocks,
 * and read back within half a quantum. */
static void test_quantize_kv(void **state) {
  (void)state;
  float x[2 * 64];
  for (int i = 0; i < 2 * 64; i++) x[i] = (float)((i * 37) % 101 - 50) * 0.013f;
  x[5] = 0.0f;
  for (int j = 96; j < 128; j++) x[j] = 0.0f; /* an all-zero block: d = 0 */
  x[7] = -1.75f;                              /* the amax of block 0, negative */
  uint8_t want[4 * 34];
  poot_quant_quantize_q8_0(x, want, 4);
  poot_graph *g = tg_new();
  poot_value xv = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 64), x), q, pool, nv, rows, back, sl;
  POOT_ASSERT_OK(poot_graph_quantize(g, xv, POOT_DTYPE_Q8_0, &q));
  uint8_t zero[3 * 2 * 34] = {0};
  pool = tg_const(g, POOT_DTYPE_Q8_0, 2, DIMS(3, 64), zero);
  const int32_t at[] = {2, 0}, rd[] = {0, 2};
  POOT_ASSERT_OK(poot_graph_scatter_update(g, pool, tg_i32(g, 2, at), q, 0,
                                           POOT_TRAP_WRITE_MAP_OUT_OF_RANGE, &nv));
  POOT_ASSERT_OK(
      poot_graph_gather(g, nv, tg_i32(g, 2, rd), 0, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &rows));
  POOT_ASSERT_OK(poot_graph_slice(g, rows, DIMS(1, 0), DIMS(2, 64), NULL, &sl));
  POOT_ASSERT_OK(poot_graph_add_env(g, "q", q));
  POOT_ASSERT_OK(poot_graph_add_env(g, "row0", sl));
  POOT_ASSERT_OK(poot_graph_dequantize(g, rows, POOT_DTYPE_F32, &back));
  poot_evaluation *ev = tg_run(g, back);
  assert_memory_equal(poot_evaluation_env(ev, "q")->data, want, sizeof want);
  assert_memory_equal(poot_evaluation_env(ev, "row0")->data, want, 2 * 34);
  const float *f = ev->output.data; /* rows: x's row 1 (pool row 0), then row 0 */
  for (int i = 0; i < 128; i++) {
    float xi = x[(i < 64 ? 64 : -64) + i], amax = 0;
    int b0 = (i < 64 ? 64 : -64) + i - (i % 32);
    for (int j = 0; j < 32; j++) amax = fabsf(x[b0 + j]) > amax ? fabsf(x[b0 + j]) : amax;
    assert_true(fabsf(f[i] - xi) <= amax / 127.0f * 0.5f * 1.01f);
  }
  assert_true(fabsf(f[64 + 7] + 1.75f) < 1e-3f); /* the amax code is ±127 */
  poot_evaluation_destroy(ev);

  /* Packed values move in whole blocks only: a slice into a block, a gather
   * along the last axis and a reshape of the last dim are refused. */
  poot_value bad;
  poot_status st = poot_graph_slice(g, q, DIMS(0, 16), DIMS(2, 48), NULL, &bad);
  assert_non_null(st);
  assert_int_equal(poot_status_code_of(st), POOT_INVALID_ARGUMENT);
  poot_status_free(st);
  st = poot_graph_gather(g, q, tg_i32(g, 2, rd), 1, 0, POOT_TRAP_NONE, &bad);
  assert_non_null(st);
  poot_status_free(st);
  poot_shape flat = poot_shape_of(1, 128);
  st = poot_graph_reshape(g, q, &flat, &bad);
  assert_non_null(st);
  poot_status_free(st);
  st = poot_graph_quantize(g, xv, POOT_DTYPE_Q4_0, &bad); /* only q8_0 */
  assert_non_null(st);
  poot_status_free(st);
  poot_graph_destroy(g);
}

static void test_dequantize_rng(void **state) {
  (void)state;
  /* Two q8_0 blocks: d = 0.5 and d = 2, codes j - 16. */
  uint8_t blocks[2 * 34];
  for (int b = 0; b < 2; b++) {
    blocks[34 * b] = 0x00;
    blocks[34 * b + 1] = b ? 0x40 : 0x38;
    for (int j = 0; j < 32; j++) blocks[34 * b + 2 + j] = (uint8_t)(int8_t)(j - 16);
  }
  poot_graph *g = tg_new();
  poot_value w = tg_const(g, POOT_DTYPE_Q8_0, 2, DIMS(1, 64), blocks), r, rh;
  POOT_ASSERT_OK(poot_graph_dequantize(g, w, POOT_DTYPE_F32, &r));
  POOT_ASSERT_OK(poot_graph_dequantize(g, w, POOT_DTYPE_BF16, &rh));
  POOT_ASSERT_OK(poot_graph_add_env(g, "bf16", rh));
  poot_evaluation *ev = tg_run(g, r);
  const float *f = ev->output.data;
  for (int j = 0; j < 32; j++) {
    assert_true(f[j] == 0.5f * (float)(j - 16));
    assert_true(f[32 + j] == 2.0f * (float)(j - 16));
  }
  const uint16_t *hb = poot_evaluation_env(ev, "bf16")->data;
  assert_int_equal(hb[33], poot_f32_to_bf16(-30.0f));
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* rng bits with key 0 and counter 0: element n takes word n % 4 of
   * philox((n/4, 0, 0, 0), (0, 0)); block 0 is Random123's zero vector. */
  g = tg_new();
  const uint32_t zero2[] = {0, 0}, key[] = {0xa4093822u, 0x299f31d0u}, ctr[] = {0x13198a2eu, 0x03707344u};
  poot_value k0 = tg_const(g, POOT_DTYPE_U32, 1, DIMS(2), zero2);
  poot_value c0 = tg_const(g, POOT_DTYPE_U32, 1, DIMS(2), zero2);
  poot_type tb = poot_type_make(POOT_DTYPE_U32, 2, DIMS(2, 3));
  POOT_ASSERT_OK(poot_graph_rng(g, k0, c0, &tb, POOT_RNG_BITS, &r));
  poot_value k1 = tg_const(g, POOT_DTYPE_U32, 1, DIMS(2), key);
  poot_value c1 = tg_const(g, POOT_DTYPE_U32, 1, DIMS(2), ctr);
  poot_type tf = poot_type_make(POOT_DTYPE_F32, 1, DIMS(5));
  poot_value u, uh;
  POOT_ASSERT_OK(poot_graph_rng(g, k1, c1, &tf, POOT_RNG_UNIFORM, &u));
  poot_type th = poot_type_make(POOT_DTYPE_F16, 1, DIMS(4));
  POOT_ASSERT_OK(poot_graph_rng(g, k1, c1, &th, POOT_RNG_UNIFORM, &uh));
  POOT_ASSERT_OK(poot_graph_add_env(g, "u", u));
  POOT_ASSERT_OK(poot_graph_add_env(g, "uh", uh));
  ev = tg_run(g, r);
  const uint32_t *bits = ev->output.data;
  assert_int_equal(bits[0], 0x6627e8d5u);
  assert_int_equal(bits[1], 0xe169c58du);
  assert_int_equal(bits[2], 0xbc57ac4cu);
  assert_int_equal(bits[3], 0x9b00dbd8u);
  uint32_t blk1[4];
  poot_philox4x32_10((const uint32_t[]){1, 0, 0, 0}, zero2, blk1);
  assert_int_equal(bits[4], blk1[0]);
  assert_int_equal(bits[5], blk1[1]);
  /* Counter words 2,3 and the key come from the operands: block 0 of the
   * uniform draw is philox((0, 0, 0x13198a2e, 0x03707344), key). */
  uint32_t blk[4];
  poot_philox4x32_10((const uint32_t[]){0, 0, 0x13198a2eu, 0x03707344u}, key, blk);
  const float *uf = poot_evaluation_env(ev, "u")->data;
  for (int j = 0; j < 4; j++) {
    assert_true(uf[j] == (float)(blk[j] >> 8) * 0x1p-24f);
    assert_true(uf[j] >= 0.0f && uf[j] < 1.0f);
  }
  const uint16_t *uhh = poot_evaluation_env(ev, "uh")->data;
  for (int j = 0; j < 4; j++)
    assert_int_equal(uhh[j], poot_f32_to_f16((float)(blk[j] >> 21) * 0x1p-11f));
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

/* More shapes: empty operands, size-1 dims, rank 3 transposes, int
 * reductions and scans, f16 accumulation in dot_general, top_k with k = 0. */
static void test_more_edges(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float a[] = {1, 2, 3, 4, 5, 6};
  poot_value x = tg_const(g, POOT_DTYPE_F32, 3, DIMS(1, 2, 3), a), t, e, c, p, k0, k0i;
  POOT_ASSERT_OK(poot_graph_transpose(g, x, DIMS(2, 0, 1), &t)); /* [3, 1, 2] */
  poot_value empty = tg_const(g, POOT_DTYPE_F32, 3, DIMS(1, 0, 3), NULL);
  poot_value two[2] = {empty, x};
  POOT_ASSERT_OK(poot_graph_concat(g, 2, two, 1, &c)); /* == x */
  float pv = 9;
  poot_value pval = tg_const(g, POOT_DTYPE_F32, 0, NULL, &pv);
  poot_value m2 = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 3), a);
  POOT_ASSERT_OK(poot_graph_pad(g, m2, pval, DIMS(0, 1), DIMS(1, 0), DIMS(1, 0), &p)); /* [4, 4] */
  POOT_ASSERT_OK(poot_graph_slice(g, empty, DIMS(0, 0, 1), DIMS(1, 0, 3), NULL, &e));
  POOT_ASSERT_OK(poot_graph_top_k(g, m2, 0, &k0, &k0i));
  POOT_ASSERT_OK(poot_graph_add_env(g, "c", c));
  POOT_ASSERT_OK(poot_graph_add_env(g, "p", p));
  POOT_ASSERT_OK(poot_graph_add_env(g, "e", e));
  POOT_ASSERT_OK(poot_graph_add_env(g, "k0", k0));
  poot_evaluation *ev = tg_run(g, t);
  const float wt[] = {1, 4, 2, 5, 3, 6};
  tg_assert_f32(ev->output.data, wt, 6);
  assert_int_equal(ev->output.type.shape.dims[0], 3);
  tg_assert_f32(poot_evaluation_env(ev, "c")->data, a, 6);
  const float wp[] = {9, 1, 2, 3, 9, 9, 9, 9, 9, 4, 5, 6, 9, 9, 9, 9};
  tg_assert_f32(poot_evaluation_env(ev, "p")->data, wp, 16);
  assert_int_equal(poot_evaluation_env(ev, "e")->size, 0);
  assert_int_equal(poot_evaluation_env(ev, "k0")->size, 0);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* Integer reductions and scans wrap; argmax over ints. */
  g = tg_new();
  const int32_t iv[] = {INT32_MAX, 1, -5, 7, 7, -9};
  x = tg_const(g, POOT_DTYPE_I32, 2, DIMS(2, 3), iv);
  poot_value rs, rmax, rmin, am, cs;
  POOT_ASSERT_OK(poot_graph_reduce(g, x, POOT_REDUCE_SUM, 1, DIMS(1), POOT_DTYPE_I32, &rs));
  POOT_ASSERT_OK(poot_graph_reduce(g, x, POOT_REDUCE_MAX, 1, DIMS(1), POOT_DTYPE_I32, &rmax));
  POOT_ASSERT_OK(poot_graph_reduce(g, x, POOT_REDUCE_MIN, 1, DIMS(0), POOT_DTYPE_I32, &rmin));
  POOT_ASSERT_OK(poot_graph_reduce(g, x, POOT_REDUCE_ARGMAX, 1, DIMS(1), POOT_DTYPE_I32, &am));
  POOT_ASSERT_OK(poot_graph_cumsum(g, x, 1, POOT_DTYPE_I32, &cs));
  POOT_ASSERT_OK(poot_graph_add_env(g, "max", rmax));
  POOT_ASSERT_OK(poot_graph_add_env(g, "min", rmin));
  POOT_ASSERT_OK(poot_graph_add_env(g, "argmax", am));
  POOT_ASSERT_OK(poot_graph_add_env(g, "cumsum", cs));
  ev = tg_run(g, rs);
  assert_int_equal(((int32_t *)ev->output.data)[0], (int32_t)((uint32_t)INT32_MAX + 1u - 5u));
  assert_int_equal(((int32_t *)ev->output.data)[1], 5);
  const int32_t wmax[] = {INT32_MAX, 7}, wmin[] = {7, 1, -9}, wam[] = {0, 0};
  assert_memory_equal(poot_evaluation_env(ev, "max")->data, wmax, sizeof wmax);
  assert_memory_equal(poot_evaluation_env(ev, "min")->data, wmin, sizeof wmin);
  assert_memory_equal(poot_evaluation_env(ev, "argmax")->data, wam, sizeof wam);
  const int32_t *cs_got = poot_evaluation_env(ev, "cumsum")->data;
  assert_int_equal(cs_got[1], INT32_MIN);
  assert_int_equal(cs_got[2], (int32_t)((uint32_t)INT32_MIN - 5u));
  assert_int_equal(cs_got[5], 5);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* dot_general accumulating in f16: 2048 + 1 + 1 stays 2048. */
  g = tg_new();
  const uint16_t hl[] = {poot_f32_to_f16(2048.0f), 0x3C00, 0x3C00};
  const uint16_t hr[] = {0x3C00, 0x3C00, 0x3C00};
  poot_value l = tg_const(g, POOT_DTYPE_F16, 1, DIMS(3), hl), r = tg_const(g, POOT_DTYPE_F16, 1, DIMS(3), hr), d;
  poot_dot_dims dd = {.num_contract = 1, .lhs_contract = {0}, .rhs_contract = {0}};
  POOT_ASSERT_OK(poot_graph_dot_general(g, l, r, &dd, POOT_DTYPE_F16, &d));
  ev = tg_run(g, d);
  assert_int_equal(((uint16_t *)ev->output.data)[0], poot_f32_to_f16(2048.0f));
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

/* ----------------------------------------------------- bindings and state */

static void test_bindings_states_env(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  poot_type t2 = poot_type_make(POOT_DTYPE_F32, 1, DIMS(2));
  poot_type ti = poot_type_make(POOT_DTYPE_I32, 1, DIMS(1));
  poot_weight_id ref = poot_weight_id_named("blk.3.attn_q");
  poot_value w, st, pos, p, sum, nxt;
  POOT_ASSERT_OK(poot_graph_add_weight(g, &ref, &t2, &w));
  POOT_ASSERT_OK(poot_graph_add_state(g, "acc", &t2, &st));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &ti, &pos));
  POOT_ASSERT_OK(poot_graph_add_param(g, "x", &t2, &p));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, w, p, &sum));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, st, sum, &nxt));
  POOT_ASSERT_OK(poot_graph_set_state_update(g, st, nxt));
  POOT_ASSERT_OK(poot_graph_add_env(g, "pos", pos));
  POOT_ASSERT_OK(poot_graph_set_output(g, sum));
  POOT_ASSERT_OK(poot_graph_verify(g));

  float wv[] = {1, 2}, sv[] = {10, 20}, xv[] = {100, 200};
  int32_t posv[] = {7};
  poot_tensor tw = {t2, wv, 8}, ts = {t2, sv, 8}, tx = {t2, xv, 8}, tp = {ti, posv, 4};
  poot_eval_input items[] = {
      {"blk.3.attn_q", &tw}, {"acc", &ts}, {"pos", &tp}, {"x", &tx}};
  poot_eval_inputs in = {.count = 4, .items = items};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &in, NULL, &ev));
  const float ws[] = {101, 202}, wst[] = {111, 222};
  tg_assert_f32(ev->output.data, ws, 2);
  assert_int_equal(ev->num_states, 1);
  assert_string_equal(ev->states[0].name, "acc");
  tg_assert_f32(poot_evaluation_state(ev, "acc")->data, wst, 2);
  assert_int_equal(((int32_t *)poot_evaluation_env(ev, "pos")->data)[0], 7);
  assert_null(poot_evaluation_state(ev, "nope"));
  poot_evaluation_destroy(ev);

  /* A missing binding, a wrong dtype or shape, an unknown or duplicate name. */
  poot_eval_inputs missing = {.count = 3, .items = items};
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &missing, NULL, &ev), POOT_INVALID_ARGUMENT,
                         "no input binds param 'x'");
  assert_null(ev);
  poot_type bad = poot_type_make(POOT_DTYPE_F16, 1, DIMS(2));
  poot_tensor tbad = {bad, xv, 4};
  poot_eval_input items2[] = {{"blk.3.attn_q", &tw}, {"acc", &ts}, {"pos", &tp}, {"x", &tbad}};
  poot_eval_inputs wrong = {.count = 4, .items = items2};
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &wrong, NULL, &ev), POOT_INVALID_ARGUMENT, "f16[2]");
  poot_type bad_shape = poot_type_make(POOT_DTYPE_F32, 1, DIMS(3));
  poot_tensor tbs = {bad_shape, xv, 12};
  items2[3].tensor = &tbs;
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &wrong, NULL, &ev), POOT_INVALID_ARGUMENT, "f32[3]");
  poot_eval_input items3[] = {{"blk.3.attn_q", &tw}, {"acc", &ts}, {"pos", &tp},
                              {"x", &tx},            {"y", &tx}};
  poot_eval_inputs extra = {.count = 5, .items = items3};
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &extra, NULL, &ev), POOT_INVALID_ARGUMENT,
                         "'y' names no leaf");
  items3[4].name = "x";
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &extra, NULL, &ev), POOT_INVALID_ARGUMENT, "bound twice");
  /* A missing state is an error, or zeros when asked. */
  poot_eval_input items4[] = {{"blk.3.attn_q", &tw}, {"pos", &tp}, {"x", &tx}};
  poot_eval_inputs nostate = {.count = 3, .items = items4};
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &nostate, NULL, &ev), POOT_INVALID_ARGUMENT,
                         "no input binds state 'acc'");
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.zero_missing_states = true;
  POOT_ASSERT_OK(poot_eval(g, &nostate, &opt, &ev));
  tg_assert_f32(poot_evaluation_state(ev, "acc")->data, ws, 2);
  poot_evaluation_destroy(ev);
  POOT_ASSERT_STATUS(poot_eval(NULL, NULL, NULL, &ev), POOT_INVALID_ARGUMENT);
  poot_graph_destroy(g);
}

static poot_status try_eval(void *ctx) {
  poot_evaluation *ev = NULL;
  poot_status s = poot_eval(ctx, NULL, NULL, &ev);
  if (s) assert_null(ev);
  poot_evaluation_destroy(ev);
  return s;
}

/* Allocation failures inside poot_eval are OUT_OF_MEMORY, never a crash or
 * a leak (the sanitizer run checks the latter). */
static void test_out_of_memory(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float a[] = {1, 2, 3, 4};
  poot_value x = tg_f32(g, 4, a), y, z;
  POOT_ASSERT_OK(poot_graph_unary(g, POOT_OP_EXP, x, &y));
  POOT_ASSERT_OK(poot_graph_top_k(g, y, 2, &z, &x));
  POOT_ASSERT_OK(poot_graph_add_env(g, "e", y));
  POOT_ASSERT_OK(poot_graph_set_output(g, z));
  POOT_ASSERT_OK(poot_graph_verify(g));
  assert_true(poot_test_oom_sweep("eval top_k", try_eval, g, 64) > 0);
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_reshape_transpose),
      cmocka_unit_test(test_slice_concat_pad),
      cmocka_unit_test(test_dynamic_slices_and_faults),
      cmocka_unit_test(test_gather_scatter),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_dot_cumsum),
      cmocka_unit_test(test_top_k),
      cmocka_unit_test(test_dequantize_rng),
      cmocka_unit_test(test_quantize_kv),
      cmocka_unit_test(test_more_edges),
      cmocka_unit_test(test_bindings_states_env),
      cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
