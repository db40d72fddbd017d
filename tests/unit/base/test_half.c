/* f16 and bf16 conversions against hand-computed bit patterns and an
 * exhaustive round trip. */
#include <math.h>

#include "poot_test.h"

static void test_f16_known(void **state) {
  (void)state;
  assert_int_equal(poot_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(poot_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(poot_f32_to_f16(65504.0f), 0x7bff);
  assert_int_equal(poot_f32_to_f16(65520.0f), 0x7c00); /* halfway to 2^16 rounds to inf */
  assert_int_equal(poot_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(poot_f32_to_f16(INFINITY), 0x7c00);
  assert_int_equal(poot_f32_to_f16(-INFINITY), 0xfc00);
  assert_int_equal(poot_f32_to_f16(-0.0f), 0x8000);
  assert_int_equal(poot_f32_to_f16(0x1p-24f), 0x0001);   /* smallest subnormal */
  assert_int_equal(poot_f32_to_f16(0x1p-25f), 0x0000);   /* halfway, ties to even (0) */
  assert_int_equal(poot_f32_to_f16(0x1.8p-25f), 0x0001); /* above halfway */
  assert_int_equal(poot_f32_to_f16(0x3p-25f), 0x0002);   /* 1.5 ulp ties to even (2) */
  assert_int_equal(poot_f32_to_f16(0x1p-14f), 0x0400);   /* smallest normal */
  /* 1 + 2^-11 is halfway between 1 and 1+2^-10: ties to even → 1. */
  assert_int_equal(poot_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  assert_int_equal(poot_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);
  uint16_t n = poot_f32_to_f16(NAN);
  assert_int_equal(n & 0x7c00, 0x7c00);
  assert_true((n & 0x3ff) != 0);
  assert_true(isnan(poot_f16_to_f32(0x7e00)));
  assert_true(poot_f16_to_f32(0x0001) == 0x1p-24f);
  assert_true(poot_f16_to_f32(0x3555) == 0x1.554p-2f);
  assert_true(signbit(poot_f16_to_f32(0x8000)));
}

static void test_f16_exhaustive(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = poot_f16_to_f32((uint16_t)h);
    if (isnan(f)) continue;
    assert_int_equal(poot_f32_to_f16(f), h);
  }
  /* Every f32 between two adjacent f16 values rounds to the nearer one (ties to even). */
  uint64_t s = 1;
  for (int i = 0; i < 200000; i++) {
    uint32_t bits = (uint32_t)poot_test_rand_u64(&s);
    float f = poot_f32_from_bits(bits);
    if (isnan(f)) continue;
    uint16_t h = poot_f32_to_f16(f);
    double back = poot_f16_to_f32(h);
    if (isinf(back)) {
      assert_true(fabs(f) >= 65520.0f);
      continue;
    }
    /* No other f16 is closer. */
    uint16_t up = (uint16_t)(h + 1), down = (uint16_t)(h - 1);
    double err = fabs(back - f);
    if ((up & 0x7c00) != 0x7c00 && (h & 0x7fff) != 0x7bff)
      assert_true(err <= fabs((double)poot_f16_to_f32(up) - f));
    if ((h & 0x7fff) != 0) assert_true(err <= fabs((double)poot_f16_to_f32(down) - f));
  }
}

static void test_bf16(void **state) {
  (void)state;
  assert_int_equal(poot_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(poot_f32_to_bf16(-0.0f), 0x8000);
  assert_int_equal(poot_f32_to_bf16(poot_f32_from_bits(0x3f808000u)), 0x3f80); /* tie → even */
  assert_int_equal(poot_f32_to_bf16(poot_f32_from_bits(0x3f818000u)), 0x3f82); /* tie → even */
  assert_int_equal(poot_f32_to_bf16(poot_f32_from_bits(0x3f808001u)), 0x3f81);
  assert_int_equal(poot_f32_to_bf16(poot_f32_from_bits(0x7f7fffffu)), 0x7f80); /* max → inf */
  assert_int_equal(poot_f32_to_bf16(INFINITY), 0x7f80);
  uint16_t n = poot_f32_to_bf16(poot_f32_from_bits(0x7f800001u)); /* signalling NaN stays NaN */
  assert_true(isnan(poot_bf16_to_f32(n)));
  assert_true(poot_bf16_to_f32(0x4049) == 3.140625f);
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = poot_bf16_to_f32((uint16_t)h);
    if (!isnan(f)) assert_int_equal(poot_f32_to_bf16(f), h);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16_known),
      cmocka_unit_test(test_f16_exhaustive),
      cmocka_unit_test(test_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
