/* ops_edge_test.c — elementwise ops whose template is an algorithm rather
 * than an instruction, on chosen edge inputs (planned for the KIR
 * interpreter, against poot_eval): float rem (C's fmodf, exact: zero results
 * of both signs, |x| < |y|, |x| = |y|, denormal operands and results, 250
 * binades apart; NaN for y = 0, x infinite, a NaN operand) and integer pow
 * (wrapping, exponent 0, large exponents, negative exponents on the bases
 * -1, 0, 1 and others; i64 exponents past 2^32), i64 division and
 * remainder. Bit-exact except that a NaN matches any NaN. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot_test.h"

#define B(x) POOT_ASSERT_OK(x)

static void run(poot_dtype dt, poot_op op, const void *xs, const void *ys, int64_t n,
                bool exact) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_type t = poot_type_make(dt, 1, &n);
  poot_value x, y, o;
  B(poot_graph_add_param(g, "x", &t, &x));
  B(poot_graph_add_param(g, "y", &t, &y));
  B(poot_graph_binary(g, op, x, y, &o));
  B(poot_graph_set_output(g, o));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 1, 5, 0, 1.0f, &in));
  size_t eb = poot_dtype_info_of(dt)->elem_bytes;
  for (size_t i = 0; i < in.count; i++) {
    if (!strcmp(in.names[i], "x")) memcpy(in.tensors[i].data, xs, (size_t)n * eb);
    if (!strcmp(in.names[i], "y")) memcpy(in.tensors[i].data, ys, (size_t)n * eb);
  }
  const uint32_t sgs[] = {8, 32};
  for (int i = 0; i < 2; i++) {
    poot_kir_target tg;
    poot_kir_target_init_interp(&tg, sgs[i]);
    pt_result r;
    poot_status st = pt_check(g, &tg, &in, sgs[i], exact, 0.0, &r);
    if (st) fail_msg("%s %s: %s", poot_op_name(op), poot_dtype_name(dt), poot_status_message(st));
    if (!r.ok) fail_msg("%s %s sg=%u: %s", poot_op_name(op), poot_dtype_name(dt), sgs[i], r.what);
  }
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_float_rem(void **state) {
  (void)state;
  const float x[] = {5.0f,   -5.0f,  7.0f,    1.0f,     -1.5f,  3.4e38f, -3.4e38f, 1e-40f,
                     1e-40f, 2.5f,   1e-38f,  0.0f,     -0.0f,  123.456f, 1e30f,  -7.25f,
                     0.3f,   6e-39f, 1e-45f,  16777215.0f};
  const float y[] = {2.5f,   2.5f,   7.0f,    3.0f,     -1.0f,  1e-38f,  3e-45f,   3e-41f,
                     -7e-41f, 1e-40f, 3e-39f, 1.5f,     2.0f,   0.1f,    -0.3f,    0.5f,
                     1e-7f,  1e-39f, 1e-45f,  1.0f};
  run(POOT_DTYPE_F32, POOT_OP_REM, x, y, sizeof x / sizeof x[0], true);
  const float xn[] = {1.0f, INFINITY, -INFINITY, NAN, 2.0f, INFINITY};
  const float yn[] = {0.0f, 2.0f, 1.0f, 1.0f, NAN, INFINITY};
  run(POOT_DTYPE_F32, POOT_OP_REM, xn, yn, sizeof xn / sizeof xn[0], false);
  /* an infinite y returns x */
  const float xi[] = {3.0f, -0.0f, 1e-40f};
  const float yi[] = {INFINITY, -INFINITY, INFINITY};
  run(POOT_DTYPE_F32, POOT_OP_REM, xi, yi, 3, true);
}

static void test_int_pow(void **state) {
  (void)state;
  const int32_t x[] = {2, 3, -2, 7, 0, 0, 1, -1, -1, 5, 2, -3, 1, -1, 0, 12345, -7, 2};
  const int32_t y[] = {10, 20, 31, 0, 0, 5, -5, -3, -4, -1, 32, 13, 2147483647, 2147483647,
                       -2, 99, 7, 40};
  run(POOT_DTYPE_I32, POOT_OP_POW, x, y, sizeof x / sizeof x[0], true);
  const uint32_t ux[] = {2, 3, 4294967295u, 0, 7, 65537};
  const uint32_t uy[] = {31, 4294967295u, 3, 0, 100, 5};
  run(POOT_DTYPE_U32, POOT_OP_POW, ux, uy, sizeof ux / sizeof ux[0], true);
  const int8_t bx[] = {2, -3, 5, -1, 1, 0, 127, -128};
  const int8_t by[] = {7, 5, 3, -7, -100, 0, 2, 3};
  run(POOT_DTYPE_I8, POOT_OP_POW, bx, by, sizeof bx, true);
  const int16_t hx[] = {3, 255, 2, 0, -2};
  const int16_t hy[] = {9, 2, 17, 32767, 15};
  run(POOT_DTYPE_I16, POOT_OP_POW, hx, hy, 5, true);
  /* i64: exponents past 2^32 (an odd base does not repeat within 2^32
   * steps modulo 2^64), wrapping, negative exponents */
  const int64_t lx[] = {3, 3, 2, -5, 1, -1, -1, 0, 7, INT64_MIN, 123456789, -2, 5};
  const int64_t ly[] = {(int64_t)1 << 32,
                        ((int64_t)1 << 33) + 7,
                        63,
                        27,
                        -9,
                        -(((int64_t)1 << 40) + 1),
                        ((int64_t)1 << 50),
                        0,
                        INT64_MAX,
                        2,
                        3,
                        64,
                        -1};
  run(POOT_DTYPE_I64, POOT_OP_POW, lx, ly, sizeof lx / sizeof lx[0], true);
}

/* i64 division and remainder: truncation toward zero, the dividend's sign,
 * and the oracle's rules for a zero divisor (div: all bits set, rem: x) and
 * for MIN / -1 (wraps to MIN, remainder 0); values past 32 bits. */
static void test_i64_divrem(void **state) {
  (void)state;
  const int64_t x[] = {7,
                       -7,
                       7,
                       -7,
                       0,
                       5,
                       -5,
                       INT64_MIN,
                       INT64_MIN,
                       INT64_MAX,
                       (int64_t)1 << 40,
                       -((int64_t)3 << 35),
                       123456789012345,
                       9,
                       -1};
  const int64_t y[] = {2, 2, -2, -2, 3, 0, 0, -1, 1, -1, 3, 7, -1000003, INT64_MIN, INT64_MAX};
  size_t n = sizeof x / sizeof x[0];
  run(POOT_DTYPE_I64, POOT_OP_DIV, x, y, (int64_t)n, true);
  run(POOT_DTYPE_I64, POOT_OP_REM, x, y, (int64_t)n, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_rem),
      cmocka_unit_test(test_int_pow),
      cmocka_unit_test(test_i64_divrem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
