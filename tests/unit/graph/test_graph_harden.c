/* test_graph_harden.c — size arithmetic of graph types fails with messages
 * that name the shape (what, where, why). */
#include "poot_test.h"

#include <limits.h>

#include "poot/graph.h"

static void expect_msg(poot_status s, const char *part) {
  assert_int_equal(poot_status_code_of(s), POOT_INVALID_ARGUMENT);
  if (!strstr(poot_status_message(s), part))
    fail_msg("message '%s' lacks '%s'", poot_status_message(s), part);
  poot_status_free(s);
}

static void test_size_messages_name_the_shape(void **state) {
  (void)state;
  poot_shape sh = {.rank = 2, .dims = {INT64_MAX, 4}};
  int64_t n = -1;
  expect_msg(poot_shape_elements(&sh, &n), "shape [9223372036854775807,4]: the element count");
  assert_int_equal(n, 0);
  sh = (poot_shape){.rank = 3, .dims = {2, -1, 3}};
  expect_msg(poot_shape_elements(&sh, &n), "shape [2,-1,3]: dim 1 is negative (-1)");
  sh = (poot_shape){.rank = 2, .dims = {INT64_MAX / 2, 3}};
  size_t bytes = 1;
  expect_msg(poot_type_byte_size(POOT_DTYPE_F32, &sh, &bytes), "overflows");
  assert_int_equal(bytes, 0);
  sh = (poot_shape){.rank = 2, .dims = {(int64_t)1 << 40, (int64_t)1 << 22}};
  expect_msg(poot_type_byte_size(POOT_DTYPE_F32, &sh, &bytes),
             "type f32[1099511627776,4194304]: the byte size overflows");
  sh = (poot_shape){.rank = POOT_MAX_RANK + 1};
  expect_msg(poot_shape_elements(&sh, &n), "rank 9 exceeds the maximum 8");
  /* In range: exact results. */
  sh = (poot_shape){.rank = 2, .dims = {3, 5}};
  POOT_ASSERT_OK(poot_type_byte_size(POOT_DTYPE_F16, &sh, &bytes));
  assert_int_equal(bytes, 30);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_size_messages_name_the_shape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
