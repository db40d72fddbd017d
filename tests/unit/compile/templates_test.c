/* templates_test.c — every kernel template at several shapes (odd and
 * non-power-of-two included), planned and run on the KIR interpreter
 * against poot_eval on random inputs: bit-exact for integer, packed-byte
 * and movement work and for elementwise float chains (the interpreter uses
 * the oracle's C math), within the reassociation bound of docs/compiler.md
 * for cooperative float contractions; at subgroup sizes 8, 32 and 64 and on
 * a target with no subgroup operations and 32-bit storage only (the WebGPU
 * profile: shared-memory tree reductions, manual f16/bf16 rounding). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot_test.h"

#define B(x) POOT_ASSERT_OK(x)

static poot_value P(poot_graph *g, const char *name, poot_dtype dt, uint32_t rank,
                    const int64_t *dims) {
  poot_type t = poot_type_make(dt, rank, dims);
  poot_value v;
  B(poot_graph_add_param(g, name, &t, &v));
  return v;
}

/* Runs g on every target profile; `tol` 0 means bit-exact. */
static void check_all(poot_graph *g, double tol, int64_t int_hi, const char *what) {
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 42, int_hi, 3, 1.0f, &in));
  const uint32_t sgs[] = {8, 32, 64, 0};
  for (int i = 0; i < 4; i++) {
    poot_kir_target t;
    poot_kir_target_init_interp(&t, sgs[i] ? sgs[i] : 32);
    if (!sgs[i]) {
      /* the WebGPU profile without subgroups */
      t.subgroup_ops = false;
      t.subgroup_size = 0;
      t.storage_types = POOT_KIR_SCALAR_BIT(POOT_KIR_U32) | POOT_KIR_SCALAR_BIT(POOT_KIR_I32) |
                        POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
      t.arith_types = t.storage_types | POOT_KIR_SCALAR_BIT(POOT_KIR_BOOL);
      t.max_workgroup_size = 256;
    }
    pt_result r;
    poot_status st = pt_check(g, &t, &in, sgs[i] ? sgs[i] : 32, tol == 0, tol, &r);
    if (st) fail_msg("%s sg=%u: %s", what, sgs[i], poot_status_message(st));
    if (!r.ok) fail_msg("%s sg=%u: %s", what, sgs[i], r.what);
  }
  pt_inputs_free(&in);
}

/* ------------------------------------------------------- elementwise */

static poot_value un(poot_graph *g, poot_op op, poot_value x) {
  poot_value o;
  B(poot_graph_unary(g, op, x, &o));
  return o;
}
static poot_value bi(poot_graph *g, poot_op op, poot_value a, poot_value b) {
  poot_value o;
  B(poot_graph_binary(g, op, a, b, &o));
  return o;
}
static poot_value cst(poot_graph *g, poot_dtype dt, double v, const poot_shape *s) {
  poot_value c, o;
  B(poot_graph_const_f32(g, dt, v, &c));
  int64_t none[1] = {0};
  B(poot_graph_broadcast(g, c, s, none, &o));
  return o;
}

static void float_chain(poot_dtype dt, int64_t r0, int64_t r1) {
  poot_graph *g;
  B(poot_graph_create(&g));
  int64_t d[2] = {r0, r1};
  poot_shape s = poot_shape_make(2, d);
  poot_value x = P(g, "x", dt, 2, d), y = P(g, "y", dt, 2, d);
  poot_value one = cst(g, dt, 1.0, &s), half = cst(g, dt, 0.5, &s);
  poot_value a = bi(g, POOT_OP_ADD, x, y);
  a = bi(g, POOT_OP_MUL, a, x);
  a = bi(g, POOT_OP_SUB, a, y);
  poot_value ay = bi(g, POOT_OP_ADD, un(g, POOT_OP_ABS, y), one);
  a = bi(g, POOT_OP_DIV, a, ay);
  a = bi(g, POOT_OP_MAX, a, un(g, POOT_OP_NEG, x));
  a = bi(g, POOT_OP_MIN, a, bi(g, POOT_OP_ADD, y, one));
  poot_value e = un(g, POOT_OP_EXP, a);
  poot_value l = un(g, POOT_OP_LOG, bi(g, POOT_OP_ADD, un(g, POOT_OP_ABS, x), one));
  poot_value t = un(g, POOT_OP_TANH, bi(g, POOT_OP_MUL, e, l));
  poot_value sg = un(g, POOT_OP_SIGMOID, t);
  poot_value rs = un(g, POOT_OP_RSQRT, ay);
  poot_value sq = un(g, POOT_OP_SQRT, bi(g, POOT_OP_ADD, un(g, POOT_OP_ABS, a), half));
  poot_value fl = un(g, POOT_OP_FLOOR, bi(g, POOT_OP_MUL, x, cst(g, dt, 7.0, &s)));
  poot_value ce = un(g, POOT_OP_CEIL, bi(g, POOT_OP_MUL, y, cst(g, dt, 5.0, &s)));
  poot_value ro = un(g, POOT_OP_ROUND, bi(g, POOT_OP_MUL, x, cst(g, dt, 4.5, &s)));
  poot_value sn = un(g, POOT_OP_SIGN, y);
  poot_value pw = bi(g, POOT_OP_POW, bi(g, POOT_OP_ADD, un(g, POOT_OP_ABS, x), half), y);
  poot_value sc = bi(g, POOT_OP_ADD, un(g, POOT_OP_SIN, x), un(g, POOT_OP_COS, y));
  poot_value r = bi(g, POOT_OP_ADD, sg, rs);
  r = bi(g, POOT_OP_ADD, r, sq);
  r = bi(g, POOT_OP_ADD, r, bi(g, POOT_OP_MUL, fl, ce));
  r = bi(g, POOT_OP_ADD, r, bi(g, POOT_OP_MUL, ro, sn));
  r = bi(g, POOT_OP_ADD, r, bi(g, POOT_OP_MUL, pw, cst(g, dt, 0.75, &s)));
  r = bi(g, POOT_OP_ADD, r, sc);
  poot_value lt, o;
  B(poot_graph_binary(g, POOT_OP_LT, x, y, &lt));
  B(poot_graph_select(g, lt, r, un(g, POOT_OP_ERF, x), &o));
  B(poot_graph_set_output(g, o));
  char what[64];
  snprintf(what, sizeof what, "float chain %s [%lld,%lld]", poot_dtype_name(dt), (long long)r0,
           (long long)r1);
  check_all(g, 0, 0, what);
  poot_graph_destroy(g);
}

static void test_elementwise_float(void **state) {
  (void)state;
  float_chain(POOT_DTYPE_F32, 7, 13);
  float_chain(POOT_DTYPE_F16, 5, 33);
  float_chain(POOT_DTYPE_BF16, 3, 17);
  float_chain(POOT_DTYPE_F32, 1, 1);
}

static void int_chain(poot_dtype dt, int64_t n) {
  poot_graph *g;
  B(poot_graph_create(&g));
  int64_t d[1] = {n};
  poot_value x = P(g, "x", dt, 1, d), y = P(g, "y", dt, 1, d), sh = P(g, "s", dt, 1, d);
  poot_value a = bi(g, POOT_OP_ADD, x, y);
  a = bi(g, POOT_OP_MUL, a, y);
  a = bi(g, POOT_OP_SUB, a, x);
  poot_value q = bi(g, POOT_OP_DIV, a, y); /* y has zeros */
  poot_value m = bi(g, POOT_OP_REM, a, y);
  poot_value b = bi(g, POOT_OP_XOR, bi(g, POOT_OP_AND, q, x), bi(g, POOT_OP_OR, m, y));
  b = bi(g, POOT_OP_MAX, b, bi(g, POOT_OP_MIN, x, y));
  b = bi(g, POOT_OP_ADD, b, bi(g, POOT_OP_SHL, x, sh));
  b = bi(g, POOT_OP_ADD, b, bi(g, POOT_OP_SHR, a, sh));
  b = bi(g, POOT_OP_ADD, b, un(g, POOT_OP_NOT, x));
  if (poot_dtype_info_of(dt)->is_signed) {
    b = bi(g, POOT_OP_ADD, b, un(g, POOT_OP_NEG, y));
    b = bi(g, POOT_OP_ADD, b, un(g, POOT_OP_ABS, a));
    b = bi(g, POOT_OP_ADD, b, un(g, POOT_OP_SIGN, a));
  }
  poot_value ge, o, f, back;
  B(poot_graph_binary(g, POOT_OP_GE, x, y, &ge));
  B(poot_graph_select(g, ge, b, a, &o));
  /* through floats and back: saturating conversions */
  B(poot_graph_convert(g, o, POOT_DTYPE_F32, &f));
  f = bi(g, POOT_OP_MUL, f, f);
  B(poot_graph_convert(g, f, dt, &back));
  o = bi(g, POOT_OP_ADD, o, back);
  poot_value bo;
  B(poot_graph_convert(g, ge, dt, &bo));
  o = bi(g, POOT_OP_ADD, o, bo);
  B(poot_graph_set_output(g, o));
  char what[64];
  snprintf(what, sizeof what, "int chain %s [%lld]", poot_dtype_name(dt), (long long)n);
  check_all(g, 0, 11, what);
  poot_graph_destroy(g);
}

static void test_elementwise_int(void **state) {
  (void)state;
  int_chain(POOT_DTYPE_I32, 37);
  int_chain(POOT_DTYPE_I8, 29);
  int_chain(POOT_DTYPE_U8, 31);
  int_chain(POOT_DTYPE_U32, 19);
  int_chain(POOT_DTYPE_I16, 23);
}

/* ----------------------------------------------------------- movement */

static void test_movement(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  int64_t d[3] = {3, 5, 7};
  poot_value x = P(g, "x", POOT_DTYPE_F16, 3, d);
  int64_t rd[1] = {7};
  poot_value row = P(g, "row", POOT_DTYPE_F16, 1, rd);
  poot_value t, r, s, c, p, b, io, pv, o;
  B(poot_graph_transpose(g, x, (int64_t[]){2, 0, 1}, &t)); /* [7,3,5] */
  poot_shape s21 = poot_shape_of(2, 21, 5), s15 = poot_shape_of(2, 15, 7);
  B(poot_graph_reshape(g, t, &s21, &r));
  B(poot_graph_slice(g, r, (int64_t[]){1, 0}, (int64_t[]){20, 5}, (int64_t[]){2, 2},
                     &s));                                 /* [10,3] */
  B(poot_graph_concat(g, 2, (poot_value[]){s, s}, 1, &c)); /* [10,6] */
  B(poot_graph_const_f32(g, POOT_DTYPE_F16, -2.5, &pv));
  B(poot_graph_pad(g, c, pv, (int64_t[]){1, 0}, (int64_t[]){0, 2}, (int64_t[]){1, 1},
                   &p)); /* [20,13] */
  B(poot_graph_reshape(g, x, &s15, &o));
  B(poot_graph_broadcast(g, row, &s15, (int64_t[]){1}, &b));
  o = bi(g, POOT_OP_ADD, o, b);
  poot_type it = poot_type_make(POOT_DTYPE_F16, 2, (int64_t[]){15, 7});
  B(poot_graph_iota(g, &it, 0, &io));
  o = bi(g, POOT_OP_MUL, o, io);
  B(poot_graph_set_output(g, p));
  B(poot_graph_add_env(g, "other", o));
  check_all(g, 0, 0, "movement");
  poot_graph_destroy(g);
}

/* ------------------------------------------------------- reductions */

static void reduce_case(int64_t a, int64_t b, int64_t c, poot_reduce_kind kind, uint32_t nd,
                        const int64_t *dims) {
  poot_graph *g;
  B(poot_graph_create(&g));
  int64_t d[3] = {a, b, c};
  poot_value x = P(g, "x", POOT_DTYPE_F32, 3, d);
  poot_value sq = bi(g, POOT_OP_MUL, x, x); /* prologue */
  poot_value in = kind == POOT_REDUCE_SUM ? sq : x;
  poot_value r, o;
  B(poot_graph_reduce(g, in, kind, nd, dims,
                      kind == POOT_REDUCE_ARGMAX ? POOT_DTYPE_I32 : POOT_DTYPE_F32, &r));
  if (kind == POOT_REDUCE_SUM) {
    /* epilogue: rsqrt(sum + 1) */
    const poot_shape *rs = &poot_graph_value_type(g, r)->shape;
    o = un(g, POOT_OP_RSQRT, bi(g, POOT_OP_ADD, r, cst(g, POOT_DTYPE_F32, 1.0, rs)));
  } else {
    o = r;
  }
  B(poot_graph_set_output(g, o));
  int64_t n = 1;
  for (uint32_t i = 0; i < nd; i++) n *= d[dims[i]];
  char what[80];
  snprintf(what, sizeof what, "reduce %s [%lld,%lld,%lld] over %u dims",
           poot_reduce_kind_name(kind), (long long)a, (long long)b, (long long)c, nd);
  /* a length-n f32 sum of non-negative terms: |error| <= n * 2^-24 * sum */
  check_all(g, kind == POOT_REDUCE_SUM ? (double)n * 6e-8 + 1e-6 : 0, 0, what);
  poot_graph_destroy(g);
}

static void test_reduce(void **state) {
  (void)state;
  reduce_case(5, 37, 3, POOT_REDUCE_SUM, 1, (int64_t[]){1});
  reduce_case(3, 130, 1, POOT_REDUCE_SUM, 1, (int64_t[]){1});
  reduce_case(2, 77, 3, POOT_REDUCE_SUM, 2, (int64_t[]){1, 2});
  reduce_case(4, 100, 1, POOT_REDUCE_MAX, 1, (int64_t[]){1});
  reduce_case(4, 9, 65, POOT_REDUCE_MIN, 1, (int64_t[]){2});
  reduce_case(3, 71, 1, POOT_REDUCE_ARGMAX, 1, (int64_t[]){1});
}

/* --------------------------------------------------------- GEMV/GEMM */

static void dot_case(poot_dtype wt, int64_t m, int64_t n, int64_t k) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = P(g, "x", POOT_DTYPE_F32, 2, (int64_t[]){m, k});
  poot_value w = P(g, "w", wt, 2, (int64_t[]){n, k});
  poot_value wf = w, o;
  if (poot_dtype_is_packed(wt))
    B(poot_graph_dequantize(g, w, POOT_DTYPE_F32, &wf));
  else if (wt != POOT_DTYPE_F32)
    B(poot_graph_convert(g, w, POOT_DTYPE_F32, &wf));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  B(poot_graph_dot_general(g, x, wf, &dd, POOT_DTYPE_F32, &o));
  B(poot_graph_set_output(g, o));
  char what[64];
  snprintf(what, sizeof what, "dot %s [%lld,%lld]x[%lld,%lld]", poot_dtype_name(wt), (long long)m,
           (long long)k, (long long)n, (long long)k);
  /* terms |x*w| <= |w|max; bound n*eps*sum|terms| relative to the largest output */
  check_all(g, (double)k * 1.2e-7 * 4, 0, what);
  poot_graph_destroy(g);
}

static void test_gemv_gemm(void **state) {
  (void)state;
  dot_case(POOT_DTYPE_F32, 1, 7, 131);
  dot_case(POOT_DTYPE_F32, 3, 5, 40);
  dot_case(POOT_DTYPE_F16, 1, 9, 96);
  dot_case(POOT_DTYPE_BF16, 2, 3, 70);
  dot_case(POOT_DTYPE_Q8_0, 1, 5, 128);
  dot_case(POOT_DTYPE_Q4_0, 1, 3, 96);
  dot_case(POOT_DTYPE_Q4_1, 2, 3, 64);
  dot_case(POOT_DTYPE_Q5_0, 1, 4, 160);
  dot_case(POOT_DTYPE_Q5_1, 1, 3, 64);
  dot_case(POOT_DTYPE_Q8_K, 1, 3, 256);
  dot_case(POOT_DTYPE_Q4_K, 1, 3, 256);
  dot_case(POOT_DTYPE_Q5_K, 2, 2, 512);
  dot_case(POOT_DTYPE_Q6_K, 1, 3, 256);
}

/* The dequantized weights themselves, bit for bit. */
static void test_dequantize(void **state) {
  (void)state;
  const poot_dtype fmts[] = {POOT_DTYPE_Q8_0, POOT_DTYPE_Q4_0, POOT_DTYPE_Q4_1,
                             POOT_DTYPE_Q5_0, POOT_DTYPE_Q5_1, POOT_DTYPE_Q8_K,
                             POOT_DTYPE_Q4_K, POOT_DTYPE_Q5_K, POOT_DTYPE_Q6_K};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    poot_graph *g;
    B(poot_graph_create(&g));
    int64_t k = poot_dtype_info_of(fmts[i])->block_elems == 256 ? 512 : 96;
    poot_value w = P(g, "w", fmts[i], 2, (int64_t[]){3, k}), o;
    B(poot_graph_dequantize(g, w, i % 2 ? POOT_DTYPE_F16 : POOT_DTYPE_F32, &o));
    B(poot_graph_set_output(g, o));
    check_all(g, 0, 0, poot_dtype_name(fmts[i]));
    poot_graph_destroy(g);
  }
}

/* ------------------------------------------------- indexing and more */

static void test_gather_dus_slice(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value table = P(g, "table", POOT_DTYPE_F16, 2, (int64_t[]){11, 6});
  poot_value ids = P(g, "ids", POOT_DTYPE_I32, 2, (int64_t[]){2, 3});
  poot_value ga, st, upd, ds, dus;
  B(poot_graph_gather(g, table, ids, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &ga)); /* [2,3,6] */
  poot_type stt = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 5});
  B(poot_graph_add_state(g, "cache", &stt, &st));
  upd = P(g, "upd", POOT_DTYPE_F32, 3, (int64_t[]){1, 2, 5});
  poot_type pt = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){1});
  poot_value pos, p0, z;
  B(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &pt, &pos));
  poot_shape s0 = poot_shape_of(0, 0);
  B(poot_graph_reshape(g, pos, &s0, &p0));
  B(poot_graph_const_int(g, POOT_DTYPE_I32, 0, &z));
  B(poot_graph_dynamic_update_slice(g, st, upd, (poot_value[]){p0, z, z},
                                    POOT_TRAP_POS_OUT_OF_RANGE, &dus));
  B(poot_graph_set_state_update(g, st, dus));
  B(poot_graph_dynamic_slice(g, dus, (poot_value[]){p0, z, z}, (int64_t[]){3, 2, 5},
                             POOT_TRAP_SLICE_OUT_OF_RANGE, &ds));
  poot_value gaf, sum;
  B(poot_graph_convert(g, ga, POOT_DTYPE_F32, &gaf));
  B(poot_graph_reduce(g, gaf, POOT_REDUCE_SUM, 1, (int64_t[]){0}, POOT_DTYPE_F32, &sum));
  /* dynamic_update_slice inline (not a State): a 2-D window */
  poot_value base = P(g, "base", POOT_DTYPE_F16, 2, (int64_t[]){6, 7});
  poot_value win = P(g, "win", POOT_DTYPE_F16, 2, (int64_t[]){2, 3});
  poot_value one, dus2, d2f;
  B(poot_graph_const_int(g, POOT_DTYPE_I32, 1, &one));
  B(poot_graph_dynamic_update_slice(g, base, win, (poot_value[]){p0, one}, POOT_TRAP_NONE, &dus2));
  B(poot_graph_convert(g, dus2, POOT_DTYPE_F32, &d2f));
  B(poot_graph_set_output(g, ds));
  B(poot_graph_add_env(g, "sum", sum));
  B(poot_graph_add_env(g, "dus2", d2f));
  check_all(g, 0, 11, "gather/dus/dynamic_slice");
  poot_graph_destroy(g);
}

static void test_topk_cumsum_scatter(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = P(g, "x", POOT_DTYPE_F32, 2, (int64_t[]){3, 37});
  poot_value tv, ti, cs, tgt, ids, upd, sc;
  B(poot_graph_top_k(g, x, 5, &tv, &ti));
  B(poot_graph_cumsum(g, x, 1, POOT_DTYPE_F32, &cs));
  tgt = P(g, "tgt", POOT_DTYPE_I32, 2, (int64_t[]){7, 4});
  ids = P(g, "ids", POOT_DTYPE_I32, 1, (int64_t[]){5});
  upd = P(g, "upd", POOT_DTYPE_I32, 2, (int64_t[]){5, 4});
  B(poot_graph_scatter_update(g, tgt, ids, upd, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &sc));
  B(poot_graph_set_output(g, tv));
  B(poot_graph_add_env(g, "idx", ti));
  B(poot_graph_add_env(g, "cumsum", cs));
  B(poot_graph_add_env(g, "scatter", sc));
  check_all(g, 0, 7, "top_k/cumsum/scatter");
  poot_graph_destroy(g);
}

/* Philox: bits and uniform floats (f32, f16, bf16), bit for bit. */
static void test_rng(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value key = P(g, "key", POOT_DTYPE_U32, 1, (int64_t[]){2});
  poot_value ctr = P(g, "ctr", POOT_DTYPE_U32, 1, (int64_t[]){2});
  poot_type tb = poot_type_make(POOT_DTYPE_U32, 2, (int64_t[]){3, 7});
  poot_type tf = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){13});
  poot_type th = poot_type_make(POOT_DTYPE_F16, 1, (int64_t[]){9});
  poot_type tbf = poot_type_make(POOT_DTYPE_BF16, 1, (int64_t[]){5});
  poot_value a, b, c, d;
  B(poot_graph_rng(g, key, ctr, &tb, POOT_RNG_BITS, &a));
  B(poot_graph_rng(g, key, ctr, &tf, POOT_RNG_UNIFORM, &b));
  B(poot_graph_rng(g, key, ctr, &th, POOT_RNG_UNIFORM, &c));
  B(poot_graph_rng(g, key, ctr, &tbf, POOT_RNG_UNIFORM, &d));
  B(poot_graph_set_output(g, a));
  B(poot_graph_add_env(g, "f32", b));
  B(poot_graph_add_env(g, "f16", c));
  B(poot_graph_add_env(g, "bf16", d));
  check_all(g, 0, 1000000007, "rng");
  poot_graph_destroy(g);
}

/* Composites: rms_norm, rope (both modes), softmax, attention, swiglu. */
static void test_composites(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = P(g, "x", POOT_DTYPE_F32, 3, (int64_t[]){3, 4, 10});
  poot_value w = P(g, "w", POOT_DTYPE_F32, 1, (int64_t[]){10});
  poot_type pt = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){3});
  poot_value pos, n, r1, r2, sm, k, v, mask, att, sw, out;
  B(poot_graph_add_param(g, "pos", &pt, &pos));
  B(poot_graph_rms_norm(g, x, w, 1e-5, &n));
  B(poot_graph_rope(g, n, pos, 10000.0, 10, POOT_ROPE_NEOX, &r1));
  B(poot_graph_rope(g, r1, pos, 500.0, 6, POOT_ROPE_NORM, &r2));
  B(poot_graph_softmax(g, r2, 2, &sm));
  k = P(g, "k", POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 10});
  v = P(g, "v", POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 10});
  mask = P(g, "mask", POOT_DTYPE_BOOL, 2, (int64_t[]){3, 9});
  B(poot_graph_attention(g, sm, k, v, mask, 0.3, &att));
  B(poot_graph_swiglu(g, att, x, &sw));
  out = bi(g, POOT_OP_ADD, sw, n);
  B(poot_graph_set_output(g, out));
  check_all(g, 1e-5, 7, "composites");
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise_float), cmocka_unit_test(test_elementwise_int),
      cmocka_unit_test(test_movement),          cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_gemv_gemm),         cmocka_unit_test(test_dequantize),
      cmocka_unit_test(test_gather_dus_slice),  cmocka_unit_test(test_topk_cumsum_scatter),
      cmocka_unit_test(test_composites),        cmocka_unit_test(test_rng),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
