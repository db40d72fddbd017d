/* runtime_test.c — the runtime object (include/poot/runtime.h): argument
 * errors, a missing model, an unknown backend and, on a present device,
 * the stages in order (model, device and engine, driver) with the driver's
 * program defaulting to the model path and greedy ids from the demo model;
 * the one-call create; a new device context (reopen_device) gives the same
 * ids. SKIPs the device part when no device is present. */
#include <string.h>

#include "poot_test.h"

#include "poot/runtime.h"

static bool demo_path(char *buf, size_t size) {
  snprintf(buf, size, "%s/models/poot-demo.gguf", poot_test_source_dir());
  FILE *f = fopen(buf, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void test_errors(void **state) {
  (void)state;
  poot_runtime *rt = (poot_runtime *)1;
  POOT_ASSERT_STATUS(poot_runtime_open(NULL, &rt), POOT_INVALID_ARGUMENT);
  assert_null(rt);
  poot_runtime_options o = poot_runtime_options_default();
  assert_string_equal(o.device, "auto");
  POOT_ASSERT_STATUS_MSG(poot_runtime_open(&o, &rt), POOT_INVALID_ARGUMENT, "model path");
  o.model_path = "/nonexistent/model.gguf";
  POOT_ASSERT_STATUS_MSG(poot_runtime_open(&o, &rt), POOT_NOT_FOUND, "does not exist");
  assert_null(rt);
  poot_runtime_destroy(NULL);
}

static void test_unknown_backend(void **state) {
  (void)state;
  char model[1024];
  if (!demo_path(model, sizeof model)) {
    printf("SKIP: models/poot-demo.gguf is absent\n");
    skip();
  }
  poot_runtime_options o = poot_runtime_options_default();
  o.model_path = model;
  o.device = "no-such-backend";
  poot_runtime *rt = NULL;
  POOT_ASSERT_OK(poot_runtime_open(&o, &rt));
  assert_non_null(poot_runtime_model(rt));
  assert_null(poot_runtime_device(rt));
  assert_null(poot_runtime_device_caps(rt));
  POOT_ASSERT_STATUS(poot_runtime_open_device(rt), POOT_INVALID_ARGUMENT);
  assert_null(poot_runtime_executor(rt));
  poot_runtime_destroy(rt);
  /* The one-call create leaves nothing open when a stage fails. */
  rt = (poot_runtime *)1;
  POOT_ASSERT_STATUS(poot_runtime_create(&o, &rt), POOT_INVALID_ARGUMENT);
  assert_null(rt);
}

static void test_stages(void **state) {
  (void)state;
  char model[1024];
  if (!demo_path(model, sizeof model)) {
    printf("SKIP: models/poot-demo.gguf is absent\n");
    skip();
  }
  poot_runtime_options o = poot_runtime_options_default();
  o.model_path = model;
  poot_runtime *rt = NULL;
  POOT_ASSERT_OK(poot_runtime_open(&o, &rt));
  poot_status st = poot_runtime_open_device(rt);
  if (st && poot_status_code_of(st) == POOT_NO_DEVICE) {
    printf("SKIP: no device: %s\n", poot_status_message(st));
    poot_status_free(st);
    poot_runtime_destroy(rt);
    skip();
  }
  POOT_ASSERT_OK(st);
  assert_non_null(poot_runtime_device_caps(rt));
  POOT_ASSERT_STATUS(poot_runtime_open_device(rt), POOT_INVALID_ARGUMENT);
  poot_driver_options d = poot_driver_options_default();
  d.cap = 32;
  POOT_ASSERT_OK(poot_runtime_create_driver(rt, &d));
  POOT_ASSERT_STATUS(poot_runtime_create_driver(rt, &d), POOT_INVALID_ARGUMENT);
  poot_driver *drv = poot_runtime_driver(rt);
  assert_int_equal(poot_driver_cap(drv), 32);
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = 4;
  go.no_text = true;
  poot_driver_generate_result a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  poot_token prompt[] = {1, 17};
  POOT_ASSERT_OK(poot_driver_generate_ids(drv, prompt, 2, &go, NULL, NULL, &a));
  assert_true(a.n_ids > 0);
  poot_runtime_destroy(rt);

  /* The one call gives the same ids. */
  o.driver.cap = 32;
  POOT_ASSERT_OK(poot_runtime_create(&o, &rt));
  POOT_ASSERT_OK(poot_driver_generate_ids(poot_runtime_driver(rt), prompt, 2, &go, NULL, NULL, &b));
  assert_int_equal(a.n_ids, b.n_ids);
  assert_memory_equal(a.ids, b.ids, a.n_ids * sizeof a.ids[0]);
  poot_driver_generate_result_deinit(&b);
  memset(&b, 0, sizeof b);

  /* A new device context (the server's recovery after a lost device): a
   * new device, engine and driver with the driver's options, and the same
   * ids. */
  POOT_ASSERT_OK(poot_runtime_reopen_device(rt));
  assert_non_null(poot_runtime_device(rt));
  assert_non_null(poot_runtime_executor(rt));
  assert_int_equal(poot_driver_cap(poot_runtime_driver(rt)), 32);
  poot_exec_target et;
  poot_exec_target_get(poot_runtime_executor(rt), &et);
  assert_int_equal(et.matmul_precision, POOT_MATMUL_HIGH);
  POOT_ASSERT_OK(poot_driver_generate_ids(poot_runtime_driver(rt), prompt, 2, &go, NULL, NULL, &b));
  assert_int_equal(a.n_ids, b.n_ids);
  assert_memory_equal(a.ids, b.ids, a.n_ids * sizeof a.ids[0]);
  poot_driver_generate_result_deinit(&a);
  poot_driver_generate_result_deinit(&b);
  poot_runtime_destroy(rt);
}

/* The matmul precision of the options reaches the engine's compile
 * settings, and a new device context keeps it. */
static void test_matmul_precision(void **state) {
  (void)state;
  char model[1024];
  if (!demo_path(model, sizeof model)) {
    printf("SKIP: models/poot-demo.gguf is absent\n");
    skip();
  }
  poot_runtime_options o = poot_runtime_options_default();
  o.model_path = model;
  o.matmul_precision = POOT_MATMUL_MEDIUM;
  poot_runtime *rt = NULL;
  POOT_ASSERT_OK(poot_runtime_open(&o, &rt));
  poot_status st = poot_runtime_open_device(rt);
  if (st && poot_status_code_of(st) == POOT_NO_DEVICE) {
    printf("SKIP: no device: %s\n", poot_status_message(st));
    poot_status_free(st);
    poot_runtime_destroy(rt);
    skip();
  }
  POOT_ASSERT_OK(st);
  poot_exec_target et;
  poot_exec_target_get(poot_runtime_executor(rt), &et);
  assert_int_equal(et.matmul_precision, POOT_MATMUL_MEDIUM);
  assert_false(et.batch_invariant);
  POOT_ASSERT_OK(poot_runtime_reopen_device(rt));
  poot_exec_target_get(poot_runtime_executor(rt), &et);
  assert_int_equal(et.matmul_precision, POOT_MATMUL_MEDIUM);
  poot_runtime_destroy(rt);
  poot_matmul_precision p;
  POOT_ASSERT_OK(poot_matmul_precision_parse("medium", &p));
  assert_int_equal(p, POOT_MATMUL_MEDIUM);
  assert_string_equal(poot_matmul_precision_name(p), "medium");
  POOT_ASSERT_STATUS(poot_matmul_precision_parse("highest", &p), POOT_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_unknown_backend),
      cmocka_unit_test(test_stages),
      cmocka_unit_test(test_matmul_precision),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
