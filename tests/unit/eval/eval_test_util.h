/* Helpers shared by the poot_eval unit tests: build small graphs from
 * literal data, evaluate them and read results. Every helper fails the
 * current cmocka test on error. */
#ifndef POOT_TESTS_EVAL_TEST_UTIL_H
#define POOT_TESTS_EVAL_TEST_UTIL_H

#include "poot_test.h"

#include <math.h>

#include "poot/eval.h"
#include "poot/graph.h"

static inline poot_graph *tg_new(void) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  return g;
}

/* A constant of dtype dt and shape dims[rank] holding `data`. */
static inline poot_value tg_const(poot_graph *g, poot_dtype dt, uint32_t rank, const int64_t *dims,
                                  const void *data) {
  poot_tensor t = {.type = poot_type_make(dt, rank, dims), .data = (void *)data};
  POOT_ASSERT_OK(poot_type_byte_size(dt, &t.type.shape, &t.size));
  poot_value v = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_const(g, &t, &v));
  return v;
}

/* Vector constants. */
static inline poot_value tg_f32(poot_graph *g, int64_t n, const float *data) {
  return tg_const(g, POOT_DTYPE_F32, 1, &n, data);
}
static inline poot_value tg_i32(poot_graph *g, int64_t n, const int32_t *data) {
  return tg_const(g, POOT_DTYPE_I32, 1, &n, data);
}
static inline poot_value tg_scalar_i32(poot_graph *g, int32_t v) {
  return tg_const(g, POOT_DTYPE_I32, 0, NULL, &v);
}

/* Sets `out` as the output, verifies, evaluates without inputs. */
static inline poot_evaluation *tg_run_inputs(poot_graph *g, poot_value out,
                                             const poot_eval_inputs *inputs) {
  POOT_ASSERT_OK(poot_graph_set_output(g, out));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, inputs, NULL, &ev));
  assert_non_null(ev);
  assert_true(ev->has_output);
  return ev;
}
static inline poot_evaluation *tg_run(poot_graph *g, poot_value out) {
  return tg_run_inputs(g, out, NULL);
}

/* Bitwise float comparison (NaN matches any NaN). */
static inline void tg_assert_f32(const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (isnan(got[i]) && isnan(want[i])) continue;
    if (poot_f32_bits(got[i]) != poot_f32_bits(want[i]))
      fail_msg("element %zu: got %.9g (0x%08x), want %.9g (0x%08x)", i, (double)got[i],
               poot_f32_bits(got[i]), (double)want[i], poot_f32_bits(want[i]));
  }
}

static inline void tg_assert_near(const float *got, const float *want, size_t n, float tol) {
  for (size_t i = 0; i < n; i++) {
    if (!(fabsf(got[i] - want[i]) <= tol))
      fail_msg("element %zu: got %.9g, want %.9g (tolerance %g)", i, (double)got[i],
               (double)want[i], (double)tol);
  }
}

/* Evaluates a unary op over f32 data and returns the evaluation. */
static inline poot_evaluation *tg_unary_f32(poot_op op, int64_t n, const float *x) {
  poot_graph *g = tg_new();
  poot_value a = tg_f32(g, n, x), r;
  POOT_ASSERT_OK(poot_graph_unary(g, op, a, &r));
  poot_evaluation *ev = tg_run(g, r);
  poot_graph_destroy(g);
  return ev;
}

static inline poot_evaluation *tg_binary(poot_op op, poot_dtype dt, int64_t n, const void *a,
                                         const void *b) {
  poot_graph *g = tg_new();
  poot_value x = tg_const(g, dt, 1, &n, a), y = tg_const(g, dt, 1, &n, b), r;
  POOT_ASSERT_OK(poot_graph_binary(g, op, x, y, &r));
  poot_evaluation *ev = tg_run(g, r);
  poot_graph_destroy(g);
  return ev;
}

#endif
