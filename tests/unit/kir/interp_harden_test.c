/* interp_harden_test.c — the KIR interpreter stays bounded and typed on
 * kernels found by fuzzing (tests/fuzz/kir_builder.c). */
#include "poot_test.h"

#include "poot/kir.h"

/* A loop with an empty body executed no statement per iteration, so
 * max_steps never stopped it: 2^32 iterations ran for minutes. Every
 * iteration now counts, and the run returns TIMEOUT naming the loop. */
static void test_empty_loop_is_bounded(void **state) {
  (void)state;
  poot_kir_kernel_desc desc = {.name = "spin", .workgroup_size = {1, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  poot_kir_value zero, end, one, i;
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0xffffffffu, &end));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 1, &one));
  POOT_ASSERT_OK(poot_kir_for_begin(b, zero, end, one, &i));
  POOT_ASSERT_OK(poot_kir_end(b));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_interp_options o;
  memset(&o, 0, sizeof o);
  o.max_steps = 1000;
  poot_status s = poot_kir_interp_run(k, &o);
  assert_int_equal(poot_status_code_of(s), POOT_TIMEOUT);
  assert_non_null(strstr(poot_status_message(s), "more than 1000 statements"));
  assert_non_null(strstr(poot_status_message(s), "spin"));
  poot_status_free(s);
  /* A loop of 10 empty iterations still runs within a bound of 100. */
  poot_kir_kernel_destroy(k);
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 10, &end));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 1, &one));
  POOT_ASSERT_OK(poot_kir_for_begin(b, zero, end, one, &i));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  o.max_steps = 100;
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  poot_kir_kernel_destroy(k);
}

/* The same for the grid: an empty kernel over 65535^3 workgroups ran
 * 2.8e14 empty workgroups; each workgroup now counts as a statement. */
static void test_empty_grid_is_bounded(void **state) {
  (void)state;
  poot_kir_kernel_desc desc = {.name = "nothing", .workgroup_size = {1, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_interp_options o;
  memset(&o, 0, sizeof o);
  o.grid[0] = o.grid[1] = o.grid[2] = 65535;
  o.max_steps = 1000;
  poot_status s = poot_kir_interp_run(k, &o);
  assert_int_equal(poot_status_code_of(s), POOT_TIMEOUT);
  assert_non_null(strstr(poot_status_message(s), "grid 65535x65535x65535"));
  poot_status_free(s);
  o.grid[0] = 10;
  o.grid[1] = o.grid[2] = 1;
  o.max_steps = 10;
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  poot_kir_kernel_destroy(k);
}

/* A shared array of 2^32-1 floats was allocated and cleared per
 * workgroup (16 GiB); the interpreter now refuses more shared memory than
 * its target description allows, naming the size. */
static void test_huge_shared_is_refused(void **state) {
  (void)state;
  poot_kir_kernel_desc desc = {.name = "big", .workgroup_size = {1, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  uint32_t ref = 0;
  POOT_ASSERT_OK(poot_kir_add_shared(b, "s", POOT_KIR_F32, UINT32_MAX, &ref));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_interp_options o;
  memset(&o, 0, sizeof o);
  poot_status s = poot_kir_interp_run(k, &o);
  assert_int_equal(poot_status_code_of(s), POOT_UNSUPPORTED);
  assert_non_null(strstr(poot_status_message(s), "17179869180 bytes of shared memory"));
  poot_status_free(s);
  poot_kir_kernel_destroy(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_loop_is_bounded),
      cmocka_unit_test(test_empty_grid_is_bounded),
      cmocka_unit_test(test_huge_shared_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
