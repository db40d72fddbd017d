/* smoke */
#include <stdio.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/llm/batch.h"
#include "poot/llm/driver.h"
#include "poot_test.h"

static const char *g_spec = "vulkan";

static void test_smoke(void **state) {
  (void)state;
  char model[1024], tok[1024];
  if (!poot_test_data_path("models/stories260K/stories260K.bin", model, sizeof model) ||
      !poot_test_data_path("models/stories260K/tok512.bin", tok, sizeof tok)) {
    printf("SKIP\n");
    skip();
  }
  poot_model *m;
  poot_model_open_options mo = {.tokenizer_path = tok};
  POOT_ASSERT_OK(poot_model_open(model, &mo, &m));
  poot_device *dev;
  POOT_ASSERT_OK(poot_device_open(g_spec, NULL, &dev));
  poot_executor *ex;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_batch_options o = poot_batch_options_default();
  o.max_batch = 4; o.max_seq_len = 64; o.block_size = 4; o.num_blocks = 40; o.prefill_chunk = 4;
  poot_batch *b;
  uint64_t t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_batch_create(ex, m, &o, &b));
  POOT_ASSERT_OK(poot_batch_prepare(b));
  printf("prepare %.1f ms\n", (poot_time_ns() - t0) / 1e6);
  int32_t p[3][8] = {{1, 403, 407, 261, 30}, {1, 66, 300, 17, 9, 88, 41, 5}, {1, 12}};
  int64_t np[3] = {5, 8, 2};
  poot_batch_prompt pr[3];
  for (int i = 0; i < 3; i++) pr[i] = (poot_batch_prompt){p[i], np[i], 10};
  poot_batch_output out[3];
  t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_batch_generate(b, pr, 3, NULL, out));
  printf("generate %.1f ms\n", (poot_time_ns() - t0) / 1e6);
  for (int i = 0; i < 3; i++) {
    printf("req %d finish %d:", i, out[i].finish);
    for (int j = 0; j < out[i].n; j++) printf(" %d", out[i].ids[j]);
    printf("\n");
  }
  poot_batch_outputs_free(out, 3);
  poot_batch_destroy(b);
  /* the driver, f32 cache */
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64; dopt.prefill_chunk = 4; dopt.kv_dtype = POOT_DTYPE_F32;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  for (int i = 0; i < 3; i++) {
    POOT_ASSERT_OK(poot_driver_reset(d));
    poot_token next; bool nf;
    poot_token ids[8]; for (int j = 0; j < np[i]; j++) ids[j] = p[i][j];
    POOT_ASSERT_OK(poot_driver_feed(d, ids, (size_t)np[i], &next, &nf));
    printf("drv %d:", i);
    for (int j = 0; j < 10; j++) { printf(" %d", next); poot_token t = next; POOT_ASSERT_OK(poot_driver_feed(d, &t, 1, &next, &nf)); }
    printf("\n");
  }
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(m);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  poot_device *d = NULL;
  poot_status st = poot_device_open(g_spec, NULL, &d);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", g_spec, poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  poot_device_destroy(d);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_smoke)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
