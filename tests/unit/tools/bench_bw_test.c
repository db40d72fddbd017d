/* poot bench's bandwidth probes (tools/support_bench_bw.c, docs/driver.md):
 * the stream kernel's launch shape; the kernel on the KIR interpreter reads
 * every word of its buffer exactly once and nothing past it, and writes only
 * when its reads hit the constant; on Vulkan (lavapipe in CI) both probes
 * measure a positive bandwidth and a limit below the asked size falls back
 * to the largest size that fits, saying why. */
#include "poot_test.h"

#include "poot/devices.h"
#include "bench_bw.h"

#define MAGIC 0x9e3779b9u
#define SENTINEL 0xdeadbeefu
#define MIB ((uint64_t)1 << 20)

static void test_shape(void **state) {
  (void)state;
  static const struct {
    uint64_t bytes;
    uint32_t max_group;
    bool cpu;
    uint32_t group, groups, iters;
  } cases[] = {
      {1024 * MIB, 1024, false, 256, 1024, 64}, /* the default on a GPU */
      {8 * MIB, 0, false, 256, 512, 1},         /* 512 chunks of 16 KiB */
      {1024 * MIB, 128, true, 128, 32768, 4},   /* a CPU device, 128-thread groups */
      {3 * MIB, 256, false, 256, 64, 3},        /* 192 chunks: 64 workgroups of 3 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t g = 0, n = 0, it = 0;
    poot_bench_stream_shape(cases[i].bytes, cases[i].max_group, cases[i].cpu, &g, &n, &it);
    assert_int_equal(g, cases[i].group);
    assert_int_equal(n, cases[i].groups);
    assert_int_equal(it, cases[i].iters);
    assert_int_equal((uint64_t)g * n * it * 64, cases[i].bytes);
  }
}

/* Runs the stream kernel (32 threads a group, 4 groups, 3 iterations: 6,144
 * words) over a buffer of zeros with MAGIC at `at` (none when at < 0);
 * returns the sink's word 0. */
static uint32_t run_stream(const poot_kir_kernel *k, uint32_t *src, size_t words, long at) {
  memset(src, 0, words * 4);
  if (at >= 0) src[at] = MAGIC;
  uint32_t sink[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
  poot_kir_buffer bufs[2] = {{src, words * 4}, {sink, sizeof sink}};
  uint32_t iters = 3;
  poot_kir_interp_options o = {
      .grid = {4, 1, 1}, .buffers = bufs, .buffer_count = 2, .params = &iters, .param_count = 1};
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  return sink[0];
}

static void test_stream_reads_every_word(void **state) {
  (void)state;
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_bench_stream_kernel(32, &k));
  enum { WORDS = 32 * 4 * 3 * 4 * 4 };
  uint32_t *src = poot_malloc(WORDS * 4);
  assert_non_null(src);
  /* Zeros XOR to zero: nothing is written. */
  assert_int_equal(run_stream(k, src, WORDS, -1), SENTINEL);
  /* One MAGIC word anywhere reaches the sink: the first and last words, the
   * lanes of one vector, the edges of a thread's, a workgroup's and an
   * iteration's span. A word read twice by its thread would cancel out; one
   * past the buffer would be the interpreter's INVALID_ARGUMENT. */
  static const long at[] = {0, 1, 3, 4, 127, 128, 511, 512, 2047, 2048, 3001, WORDS - 1};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
    assert_int_equal(run_stream(k, src, WORDS, at[i]), MAGIC);
  poot_free(src);
  poot_kir_kernel_destroy(k);
}

static poot_device *open_vulkan(void) {
  poot_device *d = NULL;
  poot_status st = poot_device_open("vulkan", NULL, &d);
  if (poot_status_code_of(st) == POOT_NO_DEVICE) {
    printf("SKIP: no Vulkan device: %s\n", poot_status_message(st));
    poot_status_free(st);
    return NULL;
  }
  POOT_ASSERT_OK(st);
  return d;
}

static void test_probes_on_vulkan(void **state) {
  (void)state;
  poot_device *d = open_vulkan();
  if (!d) {
    skip();
    return;
  }
  bench_bw bw;
  /* As asked. */
  POOT_ASSERT_OK(poot_bench_bandwidth(d, 2 * MIB, 0, 2, &bw));
  assert_false(bw.fell_back);
  assert_int_equal(bw.bytes, 2 * MIB);
  assert_int_equal(bw.stream_bytes, 2 * MIB);
  assert_true(bw.copy_bw > 0 && bw.stream_bw > 0);
  assert_string_equal(bw.stream_error, "");
  /* 4 MiB over a 3 MiB limit: 2 MiB, and why. */
  POOT_ASSERT_OK(poot_bench_bandwidth(d, 4 * MIB, 3 * MIB, 2, &bw));
  assert_true(bw.fell_back);
  assert_int_equal(bw.asked_bytes, 4 * MIB);
  assert_int_equal(bw.bytes, 2 * MIB);
  assert_int_equal(bw.stream_bytes, 2 * MIB);
  assert_non_null(strstr(bw.why, "two buffers of 4 MiB do not fit"));
  assert_non_null(strstr(bw.why, "3 MiB per buffer"));
  assert_true(bw.copy_bw > 0 && bw.stream_bw > 0);
  /* Nothing fits: an error, not a figure. */
  POOT_ASSERT_STATUS(poot_bench_bandwidth(d, 4 * MIB, MIB / 2, 2, &bw), POOT_OUT_OF_MEMORY);
  assert_true(bw.copy_bw == 0 && bw.stream_bw == 0);
  poot_device_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape),
      cmocka_unit_test(test_stream_reads_every_word),
      cmocka_unit_test(test_probes_on_vulkan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
