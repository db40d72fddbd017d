/* kir_render_math_bounds — the composite math that the PTX and AMDGPU
 * renderers emit (exp, tanh, erf, sin/cos range reduction, pow), replayed in
 * C with the renderers' own constants (render_ptx_amdgpu.h) and the C
 * library standing in for the hardware approximations (ex2, lg2, sin), over
 * dense samples. It bounds the error that the formulas themselves add; the
 * hardware approximations add theirs on top (docs/kir-ptx-amdgpu.md gives
 * both and what the H200 measured). A wrong coefficient shows up here. */
#include <math.h>

#include "poot_test.h"
#include "render_ptx_amdgpu.h"

static float B(uint32_t u) {
  return poot_f32_from_bits(u);
}

static float k_exp(float x) {
  float t = x * B(POOT__KIR_LOG2E_HI);
  float e = fmaf(x, B(POOT__KIR_LOG2E_HI), -t);
  e = fmaf(x, B(POOT__KIR_LOG2E_LO), e);
  float r = exp2f(t);
  float q = fmaf(r, e * B(POOT__KIR_LN2), r);
  return fabsf(t) < B(POOT__KIR_EXP_CORR_LIMIT) ? q : r;
}

static float k_tanh(float x) {
  float ax = fabsf(x), x2 = x * x;
  float p = B(poot__kir_tanh_coef[0]);
  for (int i = 1; i < POOT__KIR_TANH_NCOEF; i++) p = fmaf(p, x2, B(poot__kir_tanh_coef[i]));
  p = p * x;
  float e = exp2f(ax * B(0x4038AA3Bu));
  float q = copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return ax < B(POOT__KIR_TANH_SMALL) ? p : q;
}

static float k_erf(float x) {
  float ax = fabsf(x), x2 = x * x;
  float p = B(poot__kir_erf_coef[0]);
  for (int i = 1; i < POOT__KIR_ERF_NCOEF; i++) p = fmaf(p, x2, B(poot__kir_erf_coef[i]));
  p = p * x;
  float axc = fminf(ax, B(POOT__KIR_ERF_CLAMP));
  float t = 1.0f / fmaf(axc, B(POOT__KIR_ERF_P), 1.0f);
  float q = B(poot__kir_erf_as[0]);
  for (int i = 1; i < 5; i++) q = fmaf(q, t, B(poot__kir_erf_as[i]));
  q = q * t;
  float hi = axc * axc, lo = fmaf(axc, axc, -hi);
  float e = k_exp(-hi);
  e = fmaf(e, -lo, e);
  float big = copysignf(fmaf(-q, e, 1.0f), x);
  float r = ax < 1.0f ? p : big;
  return x != x ? x : r;
}

static float k_reduce(float x) {
  float k = -rintf(x * B(POOT__KIR_INV_2PI));
  float r = fmaf(k, B(POOT__KIR_2PI_1), x);
  r = fmaf(k, B(POOT__KIR_2PI_2), r);
  return fmaf(k, B(POOT__KIR_2PI_3), r);
}

static float k_pow(float x, float y) {
  float r = exp2f(log2f(fabsf(x)) * y);
  float yi = truncf(y), h = y * 0.5f;
  bool isint = yi == y, odd = isint && truncf(h) != h;
  float nr = isint ? (odd ? -r : r) : NAN;
  if (x < 0) r = nr;
  if (y == 0 || x == 1) r = 1;
  return r;
}

static double ulp_of(double v) {
  float f = fabsf((float)v);
  if (f == 0.0f || !isfinite(f)) return ldexp(1.0, -149);
  return (double)(nextafterf(f, INFINITY) - f);
}

/* Every float of [lo, hi] with a stride, both signs when `sym`. */
#define SWEEP(var, lo, hi, stride)                                                              \
  for (uint32_t var##_u = poot_f32_bits(lo); var##_u <= poot_f32_bits(hi); var##_u += (stride)) \
    for (int var##_s = 0; var##_s < 2; var##_s++)                                               \
      for (float var = var##_s ? -poot_f32_from_bits(var##_u) : poot_f32_from_bits(var##_u);    \
           var == var; var = NAN)

static void test_exp(void **state) {
  (void)state;
  double worst = 0;
  SWEEP(x, 1e-30f, 88.0f, 613) {
    double want = exp((double)x);
    if (want < 1.2e-38 || want > 3.4e38) continue;
    double e = fabs(k_exp(x) - want) / ulp_of(want);
    if (e > worst) worst = e;
  }
  printf("exp: %.2f ulp with a correctly rounded exp2\n", worst);
  assert_true(worst <= 1.0);
  /* Special values. */
  assert_true(k_exp(-INFINITY) == 0.0f);
  assert_true(isinf(k_exp(INFINITY)));
  assert_true(isnan(k_exp(NAN)));
  assert_true(k_exp(0.0f) == 1.0f);
}

static void test_tanh(void **state) {
  (void)state;
  double worst = 0;
  SWEEP(x, 1e-30f, 12.0f, 397) {
    double want = tanh((double)x);
    double e = fabs(k_tanh(x) - want) / ulp_of(want);
    if (e > worst) worst = e;
  }
  printf("tanh: %.2f ulp with a correctly rounded exp2\n", worst);
  assert_true(worst <= 2.0);
  assert_true(k_tanh(INFINITY) == 1.0f && k_tanh(-INFINITY) == -1.0f);
  assert_true(isnan(k_tanh(NAN)));
  assert_true(signbit(k_tanh(-0.0f)));
}

static void test_erf(void **state) {
  (void)state;
  double worst_abs = 0, worst_ulp_small = 0;
  SWEEP(x, 1e-30f, 6.0f, 397) {
    double want = erf((double)x);
    double err = fabs(k_erf(x) - want);
    if (err > worst_abs) worst_abs = err;
    if (fabsf(x) < 1.0f && err / ulp_of(want) > worst_ulp_small)
      worst_ulp_small = err / ulp_of(want);
  }
  printf("erf: %.3g absolute; %.2f ulp below |x| = 1\n", worst_abs, worst_ulp_small);
  assert_true(worst_abs <= 2.0e-7);
  assert_true(worst_ulp_small <= 3.0);
  assert_true(k_erf(INFINITY) == 1.0f && k_erf(-INFINITY) == -1.0f);
  assert_true(isnan(k_erf(NAN)));
}

static void test_sincos_reduction(void **state) {
  (void)state;
  double worst = 0;
  SWEEP(x, 1e-3f, 1.0e5f, 293) {
    double r = (double)k_reduce(x);
    double want = sin((double)x);
    double err = fabs(sin(r) - want);
    if (err > worst) worst = err;
  }
  printf("sin after the reduction: %.3g absolute for |x| <= 1e5\n", worst);
  assert_true(worst <= 2.0e-7);
}

static void test_pow(void **state) {
  (void)state;
  /* Rounding y*log2|x| costs up to 2 ln2 |y log2 x| ulp of the result (log2 and
   * the product each round once): the bound grows with the exponent, as for any pow built on
   * exp2/log2. */
  double worst = 0;
  for (float y = -8.0f; y <= 8.0f; y += 0.37f) {
    SWEEP(x, 1e-3f, 1e3f, 40009) {
      if (x < 0) continue;
      double want = pow((double)x, (double)y);
      if (!(want > 1e-37 && want < 1e37)) continue;
      double e = fabs(k_pow(x, y) - want) / ulp_of(want);
      double bound = 2.0 + 1.4 * fabs((double)y * log2((double)x));
      if (e / bound > worst) worst = e / bound;
    }
  }
  printf("pow: error / (2 + 1.4 |y log2 x|) ulp peaks at %.2f\n", worst);
  assert_true(worst <= 1.0);
  /* The C library's special cases that the composite reproduces. */
  assert_true(k_pow(-2.0f, 3.0f) == -8.0f);
  assert_true(k_pow(-2.0f, 2.0f) == 4.0f);
  assert_true(isnan(k_pow(-2.0f, 0.5f)));
  assert_true(k_pow(0.0f, 0.0f) == 1.0f);
  assert_true(k_pow(NAN, 0.0f) == 1.0f);
  assert_true(k_pow(1.0f, NAN) == 1.0f);
  assert_true(k_pow(0.0f, 2.0f) == 0.0f);
  assert_true(isinf(k_pow(0.0f, -1.0f)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp), cmocka_unit_test(test_tanh),
      cmocka_unit_test(test_erf), cmocka_unit_test(test_sincos_reduction),
      cmocka_unit_test(test_pow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
