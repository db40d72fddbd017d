/* poot_eval: elementwise ops, compare, select, convert, bitcast and iota,
 * against hand-computed values and the edge cases of each (NaN, ±inf, -0,
 * denormals, integer overflow, f16/bf16 rounding). */
#include "eval_test_util.h"

#include <float.h>
#include <stdint.h>

#define N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
static const float INF = INFINITY;
/* Keeps the compiler from folding library calls at build time (its folding
 * may round differently from the run-time library the oracle calls). */
static float vf(float v) {
  volatile float t = v;
  return t;
}

static void test_float_arith(void **state) {
  (void)state;
  const float a[] = {1.0f, -0.0f, INF, NAN, 1e-45f, 3.0f, -7.5f, 0.0f};
  const float b[] = {2.0f, -0.0f, -INF, 1.0f, 1e-45f, 0.0f, 2.0f, -0.0f};
  struct {
    poot_op op;
    float want[8];
  } cases[] = {
      {POOT_OP_ADD, {3.0f, -0.0f, NAN, NAN, 2.8e-45f, 3.0f, -5.5f, 0.0f}},
      {POOT_OP_SUB, {-1.0f, 0.0f, INF, NAN, 0.0f, 3.0f, -9.5f, 0.0f}},
      {POOT_OP_MUL, {2.0f, 0.0f, -INF, NAN, 0.0f, 0.0f, -15.0f, -0.0f}},
      {POOT_OP_DIV, {0.5f, NAN, NAN, NAN, 1.0f, INF, -3.75f, NAN}},
      {POOT_OP_REM, {1.0f, NAN, NAN, NAN, 0.0f, NAN, -1.5f, NAN}},
      {POOT_OP_MAX, {2.0f, -0.0f, INF, NAN, 1e-45f, 3.0f, 2.0f, 0.0f}},
      {POOT_OP_MIN, {1.0f, -0.0f, -INF, NAN, 1e-45f, 0.0f, -7.5f, -0.0f}},
      {POOT_OP_POW, {1.0f, 1.0f, 0.0f, NAN, powf(vf(1e-45f), vf(1e-45f)), 1.0f, 56.25f, 1.0f}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    poot_evaluation *ev = tg_binary(cases[c].op, POOT_DTYPE_F32, N(a), a, b);
    tg_assert_f32(ev->output.data, cases[c].want, 8);
    poot_evaluation_destroy(ev);
  }
}

static uint16_t f16(float f) { return poot_f32_to_f16(f); }

static void test_half_rounding(void **state) {
  (void)state;
  /* f16: 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even → 1.
   * 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9 → 1 + 2^-9. */
  const uint16_t a[] = {f16(1.0f), f16(1.0f), f16(65504.0f), f16(6.0e-8f), f16(-0.0f)};
  const uint16_t b[] = {f16(0.00048828125f), f16(0.00146484375f), f16(16.0f), f16(6.0e-8f),
                        f16(-0.0f)};
  poot_evaluation *ev = tg_binary(POOT_OP_ADD, POOT_DTYPE_F16, 5, a, b);
  const uint16_t *r = ev->output.data;
  assert_int_equal(r[0], 0x3C00);
  assert_int_equal(r[1], 0x3C02);
  /* 65504 + 16 = 65520 rounds to infinity (a tie; the largest finite
   * value's significand is odd). */
  assert_int_equal(r[2], 0x7C00);
  poot_evaluation_destroy(ev);
  const uint16_t c[] = {f16(65504.0f)}, d[] = {f16(16.0f)};
  ev = tg_binary(POOT_OP_ADD, POOT_DTYPE_F16, 1, c, d);
  assert_int_equal(((uint16_t *)ev->output.data)[0], 0x7C00);
  poot_evaluation_destroy(ev);
  /* denormal + denormal, -0 + -0 */
  const uint16_t e[] = {0x0001, 0x8000}, f[] = {0x0001, 0x8000};
  ev = tg_binary(POOT_OP_ADD, POOT_DTYPE_F16, 2, e, f);
  assert_int_equal(((uint16_t *)ev->output.data)[0], 0x0002);
  assert_int_equal(((uint16_t *)ev->output.data)[1], 0x8000);
  poot_evaluation_destroy(ev);
  /* bf16: 1 * (1 + 2^-8) = 1 + 2^-8, a tie between 1 and 1 + 2^-7 → 1. */
  const uint16_t g[] = {poot_f32_to_bf16(1.0f), poot_f32_to_bf16(3.0f)};
  const uint16_t h[] = {0x3F80, poot_f32_to_bf16(1.0078125f)}; /* 1, 1 + 2^-7 */
  ev = tg_binary(POOT_OP_MUL, POOT_DTYPE_BF16, 2, g, h);
  assert_int_equal(((uint16_t *)ev->output.data)[0], 0x3F80);
  /* 3 * (1 + 2^-7) = 3 + 3*2^-7 = 3.0234375 → bf16 spacing at 3 is 2^-6:
   * 3.0234375 = 3 + 1.5 * 2^-6 → tie → even (3 + 2*2^-6 = 3.03125). */
  assert_int_equal(((uint16_t *)ev->output.data)[1], poot_f32_to_bf16(3.03125f));
  poot_evaluation_destroy(ev);
}

static void test_int_arith(void **state) {
  (void)state;
  const int32_t a[] = {INT32_MAX, INT32_MIN, 65536, 7, -7, 5, INT32_MIN, 3};
  const int32_t b[] = {1, -1, 65536, -3, 3, 0, 0, -1};
  struct {
    poot_op op;
    int32_t want[8];
  } cases[] = {
      {POOT_OP_ADD, {INT32_MIN, INT32_MAX, 131072, 4, -4, 5, INT32_MIN, 2}},
      {POOT_OP_SUB, {INT32_MAX - 1, INT32_MIN + 1, 0, 10, -10, 5, INT32_MIN, 4}},
      {POOT_OP_MUL, {INT32_MAX, INT32_MIN, 0, -21, -21, 0, 0, -3}},
      {POOT_OP_DIV, {INT32_MAX, INT32_MIN, 1, -2, -2, -1, -1, -3}},
      {POOT_OP_REM, {0, 0, 0, 1, -1, 5, INT32_MIN, 0}},
      {POOT_OP_MAX, {INT32_MAX, -1, 65536, 7, 3, 5, 0, 3}},
      {POOT_OP_MIN, {1, INT32_MIN, 65536, -3, -7, 0, INT32_MIN, -1}},
      {POOT_OP_POW, {INT32_MAX, 0, 0, 0, -343, 1, 1, 0}},
      {POOT_OP_AND, {1, INT32_MIN, 65536, 5, 1, 0, 0, 3}},
      {POOT_OP_OR, {INT32_MAX, -1, 65536, -1, -5, 5, INT32_MIN, -1}},
      {POOT_OP_XOR, {INT32_MAX - 1, INT32_MAX, 0, -6, -6, 5, INT32_MIN, -4}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    poot_evaluation *ev = tg_binary(cases[c].op, POOT_DTYPE_I32, N(a), a, b);
    const int32_t *r = ev->output.data;
    for (int i = 0; i < 8; i++)
      if (r[i] != cases[c].want[i])
        fail_msg("%s element %d: got %d want %d", poot_op_name(cases[c].op), i, r[i],
                 cases[c].want[i]);
    poot_evaluation_destroy(ev);
  }
  /* i8 wraps, u32 is unsigned, i64 INT_MIN / -1. */
  const int8_t c8[] = {100, -128, 127}, d8[] = {100, -1, 1};
  poot_evaluation *ev = tg_binary(POOT_OP_ADD, POOT_DTYPE_I8, 3, c8, d8);
  assert_int_equal(((int8_t *)ev->output.data)[0], -56);
  assert_int_equal(((int8_t *)ev->output.data)[1], 127);
  assert_int_equal(((int8_t *)ev->output.data)[2], -128);
  poot_evaluation_destroy(ev);
  const uint32_t cu[] = {0, 0xFFFFFFFFu, 7, 0x80000000u}, du[] = {1, 2, 0, 0x80000000u};
  ev = tg_binary(POOT_OP_SUB, POOT_DTYPE_U32, 4, cu, du);
  assert_int_equal(((uint32_t *)ev->output.data)[0], 0xFFFFFFFFu);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_DIV, POOT_DTYPE_U32, 4, cu, du);
  assert_int_equal(((uint32_t *)ev->output.data)[1], 0x7FFFFFFFu);
  assert_int_equal(((uint32_t *)ev->output.data)[2], 0xFFFFFFFFu); /* x/0: all bits */
  assert_int_equal(((uint32_t *)ev->output.data)[3], 1);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_MAX, POOT_DTYPE_U32, 4, cu, du);
  assert_int_equal(((uint32_t *)ev->output.data)[1], 0xFFFFFFFFu);
  poot_evaluation_destroy(ev);
  const int64_t c64[] = {INT64_MIN, INT64_MIN, INT64_MAX, 2}, d64[] = {-1, -1, 1, 63};
  ev = tg_binary(POOT_OP_DIV, POOT_DTYPE_I64, 4, c64, d64);
  assert_true(((int64_t *)ev->output.data)[0] == INT64_MIN);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_REM, POOT_DTYPE_I64, 4, c64, d64);
  assert_true(((int64_t *)ev->output.data)[1] == 0);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_ADD, POOT_DTYPE_I64, 4, c64, d64);
  assert_true(((int64_t *)ev->output.data)[2] == INT64_MIN);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_POW, POOT_DTYPE_I64, 4, c64, d64);
  assert_true(((int64_t *)ev->output.data)[3] == INT64_MIN); /* 2^63 wraps */
  poot_evaluation_destroy(ev);
  /* Negative exponents. */
  const int32_t pb[] = {1, -1, -1, 2, 0}, pe[] = {-5, -3, -2, -1, 0};
  ev = tg_binary(POOT_OP_POW, POOT_DTYPE_I32, 5, pb, pe);
  const int32_t pw[] = {1, -1, 1, 0, 1};
  assert_memory_equal(ev->output.data, pw, sizeof pw);
  poot_evaluation_destroy(ev);
}

static void test_shifts(void **state) {
  (void)state;
  const int32_t a[] = {1, 1, -8, -8, -8, 5, 1};
  const int32_t b[] = {31, 32, 1, 40, -1, 0, 30};
  poot_evaluation *ev = tg_binary(POOT_OP_SHL, POOT_DTYPE_I32, 7, a, b);
  const int32_t shl[] = {INT32_MIN, 0, -16, 0, 0, 5, 1 << 30};
  assert_memory_equal(ev->output.data, shl, sizeof shl);
  poot_evaluation_destroy(ev);
  ev = tg_binary(POOT_OP_SHR, POOT_DTYPE_I32, 7, a, b);
  const int32_t shr[] = {0, 0, -4, -1, -1, 5, 0};
  assert_memory_equal(ev->output.data, shr, sizeof shr);
  poot_evaluation_destroy(ev);
  const uint32_t ua[] = {0x80000000u, 0x80000000u, 0xFFFFFFFFu}, ub[] = {31, 32, 4};
  ev = tg_binary(POOT_OP_SHR, POOT_DTYPE_U32, 3, ua, ub);
  const uint32_t ushr[] = {1, 0, 0x0FFFFFFFu};
  assert_memory_equal(ev->output.data, ushr, sizeof ushr);
  poot_evaluation_destroy(ev);
  const uint8_t u8a[] = {0x81}, u8b[] = {1};
  ev = tg_binary(POOT_OP_SHL, POOT_DTYPE_U8, 1, u8a, u8b);
  assert_int_equal(((uint8_t *)ev->output.data)[0], 0x02);
  poot_evaluation_destroy(ev);
}

static void test_unary_int_bool(void **state) {
  (void)state;
  const int32_t a[] = {INT32_MIN, -5, 0, 7};
  struct {
    poot_op op;
    int32_t want[4];
  } cases[] = {
      {POOT_OP_NEG, {INT32_MIN, 5, 0, -7}},
      {POOT_OP_ABS, {INT32_MIN, 5, 0, 7}},
      {POOT_OP_SIGN, {-1, -1, 0, 1}},
      {POOT_OP_NOT, {INT32_MAX, 4, -1, -8}},
  };
  for (size_t c = 0; c < 4; c++) {
    poot_graph *g = tg_new();
    poot_value x = tg_i32(g, 4, a), r;
    POOT_ASSERT_OK(poot_graph_unary(g, cases[c].op, x, &r));
    poot_evaluation *ev = tg_run(g, r);
    assert_memory_equal(ev->output.data, cases[c].want, sizeof cases[c].want);
    poot_evaluation_destroy(ev);
    poot_graph_destroy(g);
  }
  const uint8_t t[] = {1, 0, 1, 0}, u[] = {1, 1, 0, 0};
  poot_graph *g = tg_new();
  int64_t n = 4;
  poot_value x = tg_const(g, POOT_DTYPE_BOOL, 1, &n, t), y = tg_const(g, POOT_DTYPE_BOOL, 1, &n, u);
  poot_value nx, an, orr, xo;
  POOT_ASSERT_OK(poot_graph_unary(g, POOT_OP_NOT, x, &nx));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_AND, x, y, &an));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_OR, nx, an, &orr));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_XOR, orr, y, &xo));
  POOT_ASSERT_OK(poot_graph_add_env(g, "not", nx));
  POOT_ASSERT_OK(poot_graph_add_env(g, "and", an));
  POOT_ASSERT_OK(poot_graph_add_env(g, "or", orr));
  poot_evaluation *ev = tg_run(g, xo);
  const uint8_t w_not[] = {0, 1, 0, 1}, w_and[] = {1, 0, 0, 0}, w_or[] = {1, 1, 0, 1},
                w_xor[] = {0, 0, 0, 1};
  assert_memory_equal(poot_evaluation_env(ev, "not")->data, w_not, 4);
  assert_memory_equal(poot_evaluation_env(ev, "and")->data, w_and, 4);
  assert_memory_equal(poot_evaluation_env(ev, "or")->data, w_or, 4);
  assert_memory_equal(ev->output.data, w_xor, 4);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_float_unary(void **state) {
  (void)state;
  const float x[] = {0.0f, -0.0f, 1.0f, -1.0f, INF, -INF, NAN, 2.5f, -2.5f, -0.5f, 8.0f, 1e-45f};
  struct {
    poot_op op;
    float want[12];
  } cases[] = {
      {POOT_OP_NEG, {-0.0f, 0.0f, -1.0f, 1.0f, -INF, INF, NAN, -2.5f, 2.5f, 0.5f, -8.0f, -1e-45f}},
      {POOT_OP_ABS, {0.0f, 0.0f, 1.0f, 1.0f, INF, INF, NAN, 2.5f, 2.5f, 0.5f, 8.0f, 1e-45f}},
      {POOT_OP_SIGN, {0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, NAN, 1.0f, -1.0f, -1.0f, 1.0f, 1.0f}},
      {POOT_OP_EXP, {1.0f, 1.0f, expf(vf(1.0f)), expf(vf(-1.0f)), INF, 0.0f, NAN, expf(vf(2.5f)), expf(vf(-2.5f)),
                     expf(vf(-0.5f)), expf(vf(8.0f)), 1.0f}},
      {POOT_OP_EXP2, {1.0f, 1.0f, 2.0f, 0.5f, INF, 0.0f, NAN, exp2f(vf(2.5f)), exp2f(vf(-2.5f)),
                      exp2f(vf(-0.5f)), 256.0f, 1.0f}},
      {POOT_OP_LOG, {-INF, -INF, 0.0f, NAN, INF, NAN, NAN, logf(vf(2.5f)), NAN, NAN, logf(vf(8.0f)),
                     logf(vf(1e-45f))}},
      {POOT_OP_LOG2, {-INF, -INF, 0.0f, NAN, INF, NAN, NAN, log2f(vf(2.5f)), NAN, NAN, 3.0f, -149.0f}},
      {POOT_OP_SQRT, {0.0f, -0.0f, 1.0f, NAN, INF, NAN, NAN, sqrtf(vf(2.5f)), NAN, NAN, sqrtf(vf(8.0f)),
                      sqrtf(vf(1e-45f))}},
      {POOT_OP_RSQRT, {INF, -INF, 1.0f, NAN, 0.0f, NAN, NAN, 1.0f / sqrtf(vf(2.5f)), NAN, NAN,
                       1.0f / sqrtf(vf(8.0f)), 1.0f / sqrtf(vf(1e-45f))}},
      {POOT_OP_SIN, {0.0f, -0.0f, sinf(vf(1.0f)), sinf(vf(-1.0f)), NAN, NAN, NAN, sinf(vf(2.5f)), sinf(vf(-2.5f)),
                     sinf(vf(-0.5f)), sinf(vf(8.0f)), sinf(vf(1e-45f))}},
      {POOT_OP_COS, {1.0f, 1.0f, cosf(vf(1.0f)), cosf(vf(-1.0f)), NAN, NAN, NAN, cosf(vf(2.5f)), cosf(vf(-2.5f)),
                     cosf(vf(-0.5f)), cosf(vf(8.0f)), 1.0f}},
      {POOT_OP_TANH, {0.0f, -0.0f, tanhf(vf(1.0f)), tanhf(vf(-1.0f)), 1.0f, -1.0f, NAN, tanhf(vf(2.5f)),
                      tanhf(vf(-2.5f)), tanhf(vf(-0.5f)), tanhf(vf(8.0f)), tanhf(vf(1e-45f))}},
      {POOT_OP_ERF, {0.0f, -0.0f, erff(vf(1.0f)), erff(vf(-1.0f)), 1.0f, -1.0f, NAN, erff(vf(2.5f)),
                     erff(vf(-2.5f)), erff(vf(-0.5f)), 1.0f, erff(vf(1e-45f))}},
      {POOT_OP_FLOOR, {0.0f, -0.0f, 1.0f, -1.0f, INF, -INF, NAN, 2.0f, -3.0f, -1.0f, 8.0f, 0.0f}},
      {POOT_OP_CEIL, {0.0f, -0.0f, 1.0f, -1.0f, INF, -INF, NAN, 3.0f, -2.0f, -0.0f, 8.0f, 1.0f}},
      {POOT_OP_ROUND, {0.0f, -0.0f, 1.0f, -1.0f, INF, -INF, NAN, 3.0f, -3.0f, -1.0f, 8.0f, 0.0f}},
      {POOT_OP_SIGMOID, {0.5f, 0.5f, 1.0f / (1.0f + expf(vf(-1.0f))), 1.0f / (1.0f + expf(vf(1.0f))), 1.0f,
                         0.0f, NAN, 1.0f / (1.0f + expf(vf(-2.5f))), 1.0f / (1.0f + expf(vf(2.5f))),
                         1.0f / (1.0f + expf(vf(0.5f))), 1.0f / (1.0f + expf(vf(-8.0f))), 0.5f}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    poot_evaluation *ev = tg_unary_f32(cases[c].op, N(x), x);
    const float *r = ev->output.data;
    for (int i = 0; i < 12; i++) {
      if (isnan(r[i]) && isnan(cases[c].want[i])) continue;
      if (poot_f32_bits(r[i]) != poot_f32_bits(cases[c].want[i]))
        fail_msg("%s(%g): got %.9g want %.9g", poot_op_name(cases[c].op), (double)x[i],
                 (double)r[i], (double)cases[c].want[i]);
    }
    poot_evaluation_destroy(ev);
  }
  /* f16 math: exp(1) rounded to f16 on store. */
  poot_graph *g = tg_new();
  int64_t n = 2;
  const uint16_t h[] = {f16(1.0f), f16(-20.0f)};
  poot_value a = tg_const(g, POOT_DTYPE_F16, 1, &n, h), r;
  POOT_ASSERT_OK(poot_graph_unary(g, POOT_OP_EXP, a, &r));
  poot_evaluation *ev = tg_run(g, r);
  assert_int_equal(((uint16_t *)ev->output.data)[0], f16(expf(vf(1.0f))));
  assert_int_equal(((uint16_t *)ev->output.data)[1], f16(expf(vf(-20.0f)))); /* an f16 denormal */
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_compare_select(void **state) {
  (void)state;
  const float a[] = {1.0f, NAN, -0.0f, -INF, 2.0f};
  const float b[] = {2.0f, NAN, 0.0f, -INF, 1.0f};
  const uint8_t want[6][5] = {
      {0, 0, 1, 1, 0}, /* eq */
      {1, 1, 0, 0, 1}, /* ne */
      {1, 0, 0, 0, 0}, /* lt */
      {1, 0, 1, 1, 0}, /* le */
      {0, 0, 0, 0, 1}, /* gt */
      {0, 0, 1, 1, 1}, /* ge */
  };
  for (int c = 0; c < 6; c++) {
    poot_evaluation *ev = tg_binary((poot_op)(POOT_OP_EQ + c), POOT_DTYPE_F32, 5, a, b);
    assert_int_equal(ev->output.type.dtype, POOT_DTYPE_BOOL);
    assert_memory_equal(ev->output.data, want[c], 5);
    poot_evaluation_destroy(ev);
  }
  const uint32_t ua[] = {0xFFFFFFFFu, 0}, ub[] = {0, 1};
  poot_evaluation *ev = tg_binary(POOT_OP_GT, POOT_DTYPE_U32, 2, ua, ub);
  assert_int_equal(((uint8_t *)ev->output.data)[0], 1);
  assert_int_equal(((uint8_t *)ev->output.data)[1], 0);
  poot_evaluation_destroy(ev);
  const int32_t ia[] = {-1, 5}, ib[] = {0, 5};
  ev = tg_binary(POOT_OP_LT, POOT_DTYPE_I32, 2, ia, ib);
  assert_int_equal(((uint8_t *)ev->output.data)[0], 1);
  assert_int_equal(((uint8_t *)ev->output.data)[1], 0);
  poot_evaluation_destroy(ev);
  /* select */
  poot_graph *g = tg_new();
  int64_t n = 5;
  const uint8_t p[] = {1, 0, 1, 0, 1};
  poot_value pv = tg_const(g, POOT_DTYPE_BOOL, 1, &n, p), x = tg_f32(g, 5, a), y = tg_f32(g, 5, b), r;
  POOT_ASSERT_OK(poot_graph_select(g, pv, x, y, &r));
  ev = tg_run(g, r);
  const float ws[] = {1.0f, NAN, -0.0f, -INF, 2.0f};
  tg_assert_f32(ev->output.data, ws, 5);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static poot_evaluation *convert1(poot_dtype from, int64_t n, const void *data, poot_dtype to) {
  poot_graph *g = tg_new();
  poot_value x = tg_const(g, from, 1, &n, data), r;
  POOT_ASSERT_OK(poot_graph_convert(g, x, to, &r));
  poot_evaluation *ev = tg_run(g, r);
  poot_graph_destroy(g);
  return ev;
}

static void test_convert(void **state) {
  (void)state;
  const float f[] = {2.9f, -2.9f, NAN, 1e10f, -1e10f, INF, -INF, -0.0f, 255.5f, -128.7f};
  poot_evaluation *ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_I32);
  const int32_t wi[] = {2, -2, 0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0, 255, -128};
  assert_memory_equal(ev->output.data, wi, sizeof wi);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_U8);
  const uint8_t wu8[] = {2, 0, 0, 255, 0, 255, 0, 0, 255, 0};
  assert_memory_equal(ev->output.data, wu8, sizeof wu8);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_I8);
  const int8_t wi8[] = {2, -2, 0, 127, -128, 127, -128, 0, 127, -128};
  assert_memory_equal(ev->output.data, wi8, sizeof wi8);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_I64);
  assert_true(((int64_t *)ev->output.data)[3] == 10000000000LL);
  assert_true(((int64_t *)ev->output.data)[5] == INT64_MAX);
  assert_true(((int64_t *)ev->output.data)[6] == INT64_MIN);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_BOOL);
  const uint8_t wb[] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  assert_memory_equal(ev->output.data, wb, sizeof wb);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_F32, N(f), f, POOT_DTYPE_U32);
  assert_int_equal(((uint32_t *)ev->output.data)[3], 0xFFFFFFFFu); /* 1e10 saturates */
  assert_int_equal(((uint32_t *)ev->output.data)[1], 0);          /* negative → 0 */
  poot_evaluation_destroy(ev);

  /* f32 → f16: overflow, the largest finite, denormals, NaN, -0. */
  const float h[] = {65520.0f, 65519.0f, 1e-8f, 6e-8f, NAN, -0.0f, 1.0009765625f};
  ev = convert1(POOT_DTYPE_F32, N(h), h, POOT_DTYPE_F16);
  const uint16_t *r16 = ev->output.data;
  assert_int_equal(r16[0], 0x7C00);
  assert_int_equal(r16[1], 0x7BFF);
  assert_int_equal(r16[2], 0x0000);
  assert_int_equal(r16[3], 0x0001);
  assert_true((r16[4] & 0x7C00) == 0x7C00 && (r16[4] & 0x03FF) != 0);
  assert_int_equal(r16[5], 0x8000);
  assert_int_equal(r16[6], 0x3C01);
  poot_evaluation_destroy(ev);
  /* f32 → bf16 ties to even. */
  const float bfv[] = {poot_f32_from_bits(0x3F808000u), poot_f32_from_bits(0x3F818000u)};
  ev = convert1(POOT_DTYPE_F32, 2, bfv, POOT_DTYPE_BF16);
  assert_int_equal(((uint16_t *)ev->output.data)[0], 0x3F80);
  assert_int_equal(((uint16_t *)ev->output.data)[1], 0x3F82);
  poot_evaluation_destroy(ev);
  /* int → float: one rounding, ties to even. */
  const int32_t iv[] = {2049, 2051, 16777217, -16777219, 65520, 2147483647};
  ev = convert1(POOT_DTYPE_I32, N(iv), iv, POOT_DTYPE_F16);
  r16 = ev->output.data;
  assert_int_equal(r16[0], f16(2048.0f));
  assert_int_equal(r16[1], f16(2052.0f));
  assert_int_equal(r16[3], 0xFC00);
  assert_int_equal(r16[4], 0x7C00); /* 65520 → inf */
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_I32, N(iv), iv, POOT_DTYPE_F32);
  const float *rf = ev->output.data;
  assert_true(rf[2] == 16777216.0f);
  assert_true(rf[3] == -16777220.0f);
  assert_true(rf[5] == 2147483648.0f);
  poot_evaluation_destroy(ev);
  /* bf16 from a 25-bit integer: a single rounding (double rounding through
   * f32 would give a different answer for 0x1018001). */
  /* 16973823 = 129 * 2^17 + 0xFFFF: below the bf16 midpoint, so it rounds
   * down to 129 * 2^17; through f32 it would first round up to the
   * midpoint and then (odd) up again to 130 * 2^17. */
  const int32_t dbl[] = {16973823};
  ev = convert1(POOT_DTYPE_I32, 1, dbl, POOT_DTYPE_BF16);
  assert_int_equal(((uint16_t *)ev->output.data)[0], poot_f32_to_bf16(16908288.0f));
  poot_evaluation_destroy(ev);
  const int64_t i64v[] = {INT64_MAX, INT64_MIN, (1LL << 53) + 1};
  ev = convert1(POOT_DTYPE_I64, 3, i64v, POOT_DTYPE_F32);
  rf = ev->output.data;
  assert_true(rf[0] == 9223372036854775808.0f);
  assert_true(rf[1] == -9223372036854775808.0f);
  assert_true(rf[2] == 9007199254740992.0f);
  poot_evaluation_destroy(ev);
  const uint32_t u32v[] = {0xFFFFFFFFu};
  ev = convert1(POOT_DTYPE_U32, 1, u32v, POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 4294967296.0f);
  poot_evaluation_destroy(ev);
  /* int → int wraps; → bool is != 0; bool → float is 0/1. */
  const int32_t w[] = {300, -1, 0, 128};
  ev = convert1(POOT_DTYPE_I32, 4, w, POOT_DTYPE_I8);
  const int8_t w8[] = {44, -1, 0, -128};
  assert_memory_equal(ev->output.data, w8, 4);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_I32, 4, w, POOT_DTYPE_U32);
  assert_int_equal(((uint32_t *)ev->output.data)[1], 0xFFFFFFFFu);
  poot_evaluation_destroy(ev);
  ev = convert1(POOT_DTYPE_I32, 4, w, POOT_DTYPE_BOOL);
  const uint8_t wbb[] = {1, 1, 0, 1};
  assert_memory_equal(ev->output.data, wbb, 4);
  poot_evaluation_destroy(ev);
  const uint8_t bv[] = {1, 0};
  ev = convert1(POOT_DTYPE_BOOL, 2, bv, POOT_DTYPE_F32);
  assert_true(((float *)ev->output.data)[0] == 1.0f && ((float *)ev->output.data)[1] == 0.0f);
  poot_evaluation_destroy(ev);
  const int8_t i8v[] = {-1};
  ev = convert1(POOT_DTYPE_I8, 1, i8v, POOT_DTYPE_I64);
  assert_true(((int64_t *)ev->output.data)[0] == -1);
  poot_evaluation_destroy(ev);
  /* f16 → bf16 → f32 */
  const uint16_t hv[] = {f16(1.0009765625f), 0x0001};
  ev = convert1(POOT_DTYPE_F16, 2, hv, POOT_DTYPE_BF16);
  assert_int_equal(((uint16_t *)ev->output.data)[0], 0x3F80);
  assert_int_equal(((uint16_t *)ev->output.data)[1], poot_f32_to_bf16(5.9604645e-8f));
  poot_evaluation_destroy(ev);
}

static void test_bitcast_iota(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float one[] = {1.0f, -0.0f};
  poot_value x = tg_f32(g, 2, one), r;
  POOT_ASSERT_OK(poot_graph_bitcast(g, x, POOT_DTYPE_U32, &r));
  poot_evaluation *ev = tg_run(g, r);
  assert_int_equal(((uint32_t *)ev->output.data)[0], 0x3F800000u);
  assert_int_equal(((uint32_t *)ev->output.data)[1], 0x80000000u);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  g = tg_new();
  poot_type t = poot_type_make(POOT_DTYPE_I32, 2, (const int64_t[]){2, 3});
  POOT_ASSERT_OK(poot_graph_iota(g, &t, 1, &r));
  ev = tg_run(g, r);
  const int32_t wi[] = {0, 1, 2, 0, 1, 2};
  assert_memory_equal(ev->output.data, wi, sizeof wi);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  g = tg_new();
  t = poot_type_make(POOT_DTYPE_F16, 2, (const int64_t[]){3, 1});
  POOT_ASSERT_OK(poot_graph_iota(g, &t, 0, &r));
  ev = tg_run(g, r);
  const uint16_t wh[] = {0x0000, 0x3C00, 0x4000};
  assert_memory_equal(ev->output.data, wh, sizeof wh);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* An empty iota. */
  g = tg_new();
  t = poot_type_make(POOT_DTYPE_I32, 2, (const int64_t[]){0, 3});
  POOT_ASSERT_OK(poot_graph_iota(g, &t, 1, &r));
  ev = tg_run(g, r);
  assert_int_equal(ev->output.size, 0);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_arith),    cmocka_unit_test(test_half_rounding),
      cmocka_unit_test(test_int_arith),      cmocka_unit_test(test_shifts),
      cmocka_unit_test(test_unary_int_bool), cmocka_unit_test(test_float_unary),
      cmocka_unit_test(test_compare_select), cmocka_unit_test(test_convert),
      cmocka_unit_test(test_bitcast_iota),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
