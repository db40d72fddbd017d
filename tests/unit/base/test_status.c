/* Status codes and messages. */
#include "poot_test.h"

static poot_status fails_with(int x) {
  if (x > 2) return poot_status_make(POOT_CAPACITY, "x is %d, over the capacity 2", x);
  return NULL;
}

static poot_status tries(int x) {
  POOT_TRY(fails_with(x));
  return NULL;
}

static void test_make_and_message(void **state) {
  (void)state;
  poot_status s = poot_status_make(POOT_FORMAT, "bad byte %d at offset %zu", 7, (size_t)12);
  assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
  assert_string_equal(poot_status_message(s), "bad byte 7 at offset 12");
  s = poot_status_annotate(s, "reading '%s'", "m.gguf");
  assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
  assert_string_equal(poot_status_message(s), "reading 'm.gguf': bad byte 7 at offset 12");
  /* Nested context never prints a doubled ": :", even when a caller's
   * prefix carries its own separator. */
  s = poot_status_annotate(s, "model '%s': ", "m");
  s = poot_status_annotate(s, "poot inspect:");
  assert_string_equal(poot_status_message(s),
                      "poot inspect: model 'm': reading 'm.gguf': bad byte 7 at offset 12");
  assert_null(strstr(poot_status_message(s), ": :"));
  assert_int_equal(poot_status_consume(s), POOT_FORMAT);
  assert_null(poot_status_annotate(NULL, "x"));
  assert_int_equal(poot_status_code_of(NULL), POOT_OK);
  assert_string_equal(poot_status_message(NULL), "");
  poot_status_free(NULL);
}

static void test_try(void **state) {
  (void)state;
  assert_null(tries(1));
  POOT_ASSERT_STATUS_MSG(tries(3), POOT_CAPACITY, "over the capacity");
}

static void test_code_names(void **state) {
  (void)state;
  const char *expect[] = {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_MEMORY", "UNSUPPORTED",
                          "FORMAT", "IO", "CAPACITY", "DEVICE_LOST", "KERNEL_FAULT", "TIMEOUT",
                          "POISONED", "NEEDS_RESET", "NO_DEVICE", "CANCELLED", "INTERNAL"};
  for (int c = 0; c < POOT_STATUS_CODE_COUNT; c++)
    assert_string_equal(poot_status_code_name((poot_status_code)c), expect[c]);
  assert_string_equal(poot_status_code_name((poot_status_code)999), "UNKNOWN");
  /* A failure is never OK, even when asked. */
  assert_int_equal(poot_status_consume(poot_status_make(POOT_OK, "oops")), POOT_INTERNAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_make_and_message),
      cmocka_unit_test(test_try),
      cmocka_unit_test(test_code_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
