/* Every corpus kernel on the interpreter at subgroup sizes 8, 32 and 64 and
 * every size of the case, against its plain C reference. */
#include "poot_test.h"

#include "corpus.h"

static const uint32_t sg_sizes[] = {8, 32, 64};

static void run_case(const poot_kir_corpus_case *c, uint32_t sg, uint64_t *runs) {
  poot_kir_target t;
  poot_kir_target_init_interp(&t, sg);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, &t, &k));
  for (int j = 0; j < POOT_KIR_CORPUS_MAX_SIZES && c->sizes[j]; j++) {
    poot_kir_corpus_run run;
    POOT_ASSERT_OK(c->prepare(c, k, c->sizes[j], 1234 + (uint64_t)j, &run));
    uint32_t err = 0;
    poot_kir_interp_options o = {0};
    memcpy(o.grid, run.grid, sizeof o.grid);
    o.subgroup_size = sg;
    o.buffers = run.buffers;
    o.buffer_count = run.buffer_count;
    o.params = run.params;
    o.param_count = run.param_count;
    o.error_word = &err;
    poot_status st = poot_kir_interp_run(k, &o);
    if (st) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", poot_status_message(st));
      poot_status_free(st);
      poot_kir_corpus_run_deinit(&run);
      poot_kir_kernel_destroy(k);
      fail_msg("%s sg %u size %u: %s", c->name, sg, c->sizes[j], msg);
    }
    st = poot_kir_corpus_compare(k, &run, &err, true);
    if (st) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", poot_status_message(st));
      poot_status_free(st);
      poot_kir_corpus_run_deinit(&run);
      poot_kir_kernel_destroy(k);
      fail_msg("%s sg %u: %s", c->name, sg, msg);
    }
    /* A case whose checks fail must also fault in trap mode, with its code. */
    if (run.expected_error_bits) {
      poot_kir_corpus_run run2;
      POOT_ASSERT_OK(c->prepare(c, k, c->sizes[j], 1234 + (uint64_t)j, &run2));
      o.buffers = run2.buffers;
      o.error_word = NULL;
      char code[64];
      snprintf(code, sizeof code, "trap code %d", __builtin_ctz(run.expected_error_bits));
      POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_KERNEL_FAULT, code);
      poot_kir_corpus_run_deinit(&run2);
    }
    poot_kir_corpus_run_deinit(&run);
    (*runs)++;
  }
  poot_kir_kernel_destroy(k);
}

static void test_corpus(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  assert_non_null(cases);
  assert_true(n >= 20);
  uint64_t runs = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t s = 0; s < sizeof sg_sizes / sizeof sg_sizes[0]; s++)
      run_case(&cases[i], sg_sizes[s], &runs);
  printf("corpus: %zu cases, %llu runs matched their references\n", n, (unsigned long long)runs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
