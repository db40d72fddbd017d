/* Philox4x32-10 against the known-answer vectors of Random123 (kat_vectors,
 * the three "philox4x32 10" lines: counter, key, expected output). */
#include "poot_test.h"

#include "poot/eval.h"

static void test_kat(void **state) {
  (void)state;
  static const struct {
    uint32_t ctr[4], key[2], want[4];
  } kat[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
    uint32_t out[4];
    poot_philox4x32_10(kat[i].ctr, kat[i].key, out);
    for (int w = 0; w < 4; w++) assert_int_equal(out[w], kat[i].want[w]);
  }
}

static void test_uniform(void **state) {
  (void)state;
  assert_true(poot_philox_uniform(0) == 0.0f);
  assert_true(poot_philox_uniform(0xffffffffu) == 1.0f - 1.0f / 16777216.0f);
  assert_true(poot_philox_uniform(0x80000000u) == 0.5f);
  assert_true(poot_philox_uniform(0x000000ffu) == 0.0f); /* low 8 bits dropped */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_kat), cmocka_unit_test(test_uniform)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
