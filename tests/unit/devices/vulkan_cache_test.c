/* The Vulkan device's pipeline cache file and fused-fma probe: a second
 * start reads the file the first wrote (and, where the driver stores
 * pipelines and reports creation feedback, answers from it), a corrupt, a
 * truncated or a foreign file is ignored and rewritten, the cache can be
 * turned off; the probe's verdict matches the device's fma(), and a target
 * with fma_fused renders the native fma(); kernels_prepare builds a set of
 * kernels on several threads once, and a failed batch keeps none. Exits 77
 * without a Vulkan device. */
#include "poot_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "poot/devices.h"
#include "poot/exec.h"
#include "vk_kernels.h"

static char g_dir[1024];

static poot_device *open_cached(bool disabled) {
  poot_vulkan_options o;
  poot_vulkan_options_init(&o);
  o.validation = true;
  o.pipeline_cache_dir = g_dir;
  o.no_pipeline_cache = disabled;
  poot_device *d = NULL;
  POOT_ASSERT_OK(poot_vulkan_device_create(&o, &d));
  return d;
}

static void close_device(poot_device *d) {
  if (poot_vulkan_validation_enabled(d)) assert_int_equal(poot_vulkan_validation_messages(d), 0);
  poot_device_destroy(d);
}

/* Creates the affine and fma kernels (through the device's kernel cache). */
static void make_kernels(poot_device *d) {
  poot_kir_kernel *kir[2] = {NULL, NULL};
  POOT_ASSERT_OK(vkt_build_affine(1, &kir[0]));
  POOT_ASSERT_OK(vkt_build_fma(&kir[1]));
  for (int i = 0; i < 2; i++) {
    poot_device_kernel *k = NULL;
    POOT_ASSERT_OK(poot_device_kernel_get(d, kir[i], &k));
    assert_non_null(k);
    poot_kir_kernel_destroy(kir[i]);
  }
}

/* The one file in g_dir (the name is the device's), or false. */
static bool cache_file(char *out, size_t n) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "ls %s/*.bin 2>/dev/null", g_dir);
  FILE *p = popen(cmd, "r");
  if (!p) return false;
  bool ok = fgets(out, (int)n, p) != NULL;
  pclose(p);
  if (ok) out[strcspn(out, "\n")] = '\0';
  return ok;
}

static size_t file_size(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 ? (size_t)s.st_size : 0;
}

static void write_bytes(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
}

/* The file's header is Vulkan's version-one header. */
static void assert_valid_header(const char *path) {
  VkPipelineCacheHeaderVersionOne h;
  memset(&h, 0, sizeof h);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(&h, 1, sizeof h, f), sizeof h);
  fclose(f);
  assert_int_equal(h.headerVersion, VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
  assert_true(h.headerSize >= sizeof h);
}

static void test_cache_round_trip(void **state) {
  (void)state;
  poot_test_system("rm -rf %s", g_dir);
  /* Cold: nothing read, the file written at destroy. */
  poot_device *d = open_cached(false);
  poot_vulkan_pipeline_cache_info info;
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_true(info.enabled);
  assert_int_equal(info.bytes_loaded, 0);
  make_kernels(d);
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_int_equal(info.pipelines, 5); /* the three probes' and the two kernels */
  close_device(d);
  char path[1024];
  assert_true(cache_file(path, sizeof path));
  size_t size = file_size(path);
  assert_true(size >= sizeof(VkPipelineCacheHeaderVersionOne));
  assert_valid_header(path);

  /* Warm: the whole file read and accepted. */
  d = open_cached(false);
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_int_equal(info.bytes_loaded, size);
  make_kernels(d);
  poot_vulkan_pipeline_cache_stats(d, &info);
  /* A driver that stores pipelines (the file holds more than its header)
   * and reports feedback answers every one of them from the file. */
  bool stores = size > sizeof(VkPipelineCacheHeaderVersionOne);
  printf("pipeline cache: %zu bytes, %u of %u pipelines answered by it%s\n", size, info.hits,
         info.pipelines, info.can_count_hits ? "" : " (no creation feedback: hits not counted)");
  if (stores && info.can_count_hits) assert_int_equal(info.hits, info.pipelines);
  close_device(d);
}

static void test_cache_rejects_bad_files(void **state) {
  (void)state;
  char path[1024];
  poot_device *d = open_cached(false);
  close_device(d);
  assert_true(cache_file(path, sizeof path));
  assert_true(file_size(path) >= sizeof(VkPipelineCacheHeaderVersionOne));
  poot_vulkan_pipeline_cache_info info;

  /* Foreign: a valid-looking header of another vendor and device. */
  VkPipelineCacheHeaderVersionOne h = {.headerSize = sizeof h,
                                       .headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE,
                                       .vendorID = 0x1234,
                                       .deviceID = 0x5678};
  uint8_t buf[256];
  memset(buf, 0xa5, sizeof buf);
  memcpy(buf, &h, sizeof h);
  write_bytes(path, buf, sizeof buf);
  d = open_cached(false);
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_true(info.enabled);
  assert_int_equal(info.bytes_loaded, 0);
  close_device(d);
  /* Rewritten as this device's. Not compared with the first file's size: what a driver
   * keeps of the same pipelines differs between writes (NVIDIA's: 7,635 bytes the first
   * time, 15,014 after the foreign file). */
  assert_valid_header(path);
  assert_true(file_size(path) >= sizeof(VkPipelineCacheHeaderVersionOne));

  /* Truncated inside the header, then a header whose size field lies. */
  write_bytes(path, buf, 10);
  d = open_cached(false);
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_int_equal(info.bytes_loaded, 0);
  close_device(d);
  h.headerSize = 4096;
  memcpy(buf, &h, sizeof h);
  write_bytes(path, buf, sizeof buf);
  d = open_cached(false);
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_int_equal(info.bytes_loaded, 0);
  close_device(d);
  assert_valid_header(path);
}

static void test_cache_disabled(void **state) {
  (void)state;
  poot_test_system("rm -rf %s", g_dir);
  poot_device *d = open_cached(true);
  poot_vulkan_pipeline_cache_info info;
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_false(info.enabled);
  make_kernels(d);
  close_device(d);
  char path[1024];
  assert_false(cache_file(path, sizeof path));
}

static poot_device *open_threads(uint32_t threads) {
  poot_vulkan_options o;
  poot_vulkan_options_init(&o);
  o.validation = true;
  o.no_pipeline_cache = true;
  o.compile_threads = threads;
  poot_device *d = NULL;
  POOT_ASSERT_OK(poot_vulkan_device_create(&o, &d));
  return d;
}

#define PREP_N 6
/* Six kernels, the last a second object with the first one's text. */
static void build_prepare_set(poot_kir_kernel *kir[PREP_N]) {
  POOT_ASSERT_OK(vkt_build_affine(1, &kir[0]));
  POOT_ASSERT_OK(vkt_build_affine(2, &kir[1]));
  POOT_ASSERT_OK(vkt_build_fma(&kir[2]));
  POOT_ASSERT_OK(vkt_build_float(&kir[3]));
  POOT_ASSERT_OK(vkt_build_checked(7, &kir[4]));
  POOT_ASSERT_OK(vkt_build_affine(1, &kir[5]));
}

/* kernels_prepare builds the distinct kernels once, on four threads, and
 * every later get is a cache hit; the duplicate shares the first's kernel. */
static void test_kernels_prepare_threads(void **state) {
  (void)state;
  poot_device *d = open_threads(4);
  poot_kir_kernel *kir[PREP_N];
  build_prepare_set(kir);
  uint32_t before = d->kernels_created;
  POOT_ASSERT_OK(poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)kir, PREP_N));
  assert_int_equal(d->kernels_created - before, PREP_N - 1);
  poot_vulkan_pipeline_cache_info info;
  poot_vulkan_pipeline_cache_stats(d, &info);
  assert_int_equal(info.pipelines, 3 + PREP_N - 1); /* the probes' and the five */
  poot_device_kernel *k[PREP_N];
  for (int i = 0; i < PREP_N; i++) {
    POOT_ASSERT_OK(poot_device_kernel_get(d, kir[i], &k[i]));
    assert_non_null(k[i]);
  }
  assert_int_equal(d->kernels_created - before, PREP_N - 1);
  assert_ptr_equal(k[0], k[5]);
  for (int i = 0; i < PREP_N - 1; i++)
    for (int j = i + 1; j < PREP_N - 1; j++) assert_ptr_not_equal(k[i], k[j]);
  /* A second prepare finds them all: nothing compiled. */
  POOT_ASSERT_OK(poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)kir, PREP_N));
  assert_int_equal(d->kernels_created - before, PREP_N - 1);
  for (int i = 0; i < PREP_N; i++) poot_kir_kernel_destroy(kir[i]);
  close_device(d);
}

/* A batch that fails keeps nothing: one pipeline of the batch (on whichever
 * thread) is refused with OUT_OF_MEMORY, the status says so, every kernel
 * the other threads made is destroyed and the cache stays empty; the device
 * is not poisoned, and the same prepare then succeeds. */
static void test_kernels_prepare_failure(void **state) {
  (void)state;
  poot_device *d = open_threads(4);
  poot_kir_kernel *kir[PREP_N];
  build_prepare_set(kir);
  uint32_t before = d->kernels_created;
  poot_vulkan_device_inject(d, POOT_VULKAN_FAULT_PIPELINE_OUT_OF_MEMORY);
  poot_status st = poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)kir, PREP_N);
  assert_non_null(st);
  assert_int_equal(poot_status_code_of(st), POOT_OUT_OF_MEMORY);
  assert_non_null(strstr(poot_status_message(st), "vkCreateComputePipelines"));
  poot_status_free(st);
  assert_int_equal(d->kernels_created, before);
  assert_false(poot_device_is_poisoned(d));
  POOT_ASSERT_OK(poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)kir, PREP_N));
  assert_int_equal(d->kernels_created - before, PREP_N - 1);
  for (int i = 0; i < PREP_N; i++) poot_kir_kernel_destroy(kir[i]);
  close_device(d);
}

/* The probe's verdict is what the device's native fma() does: run the fma
 * kernel rendered natively on product-cancelling triples and compare. */
static void test_fma_probe(void **state) {
  (void)state;
  poot_device *d = open_cached(true);
  poot_device_caps *caps = &d->caps;
  bool probed = caps->target.fma_fused;
  printf("fma_fused: %s on %s\n", probed ? "yes" : "no", caps->name);
  if (strstr(caps->name, "llvmpipe")) assert_false(probed); /* lavapipe: multiply, then add */
  enum { N = 256 };
  float a[N], b[N], c[N], got[N];
  poot_test_fill_random(a, N, 1, 1.0f, 2.0f);
  poot_test_fill_random(b, N, 2, 1.0f, 2.0f);
  for (int i = 0; i < N; i++) {
    volatile float p = a[i] * b[i];
    c[i] = -p;
  }
  /* Native fma() whatever the probe said, then the target as probed. */
  for (int pass = 0; pass < 2; pass++) {
    caps->target.fma_fused = pass == 0 ? true : probed;
    poot_kir_kernel *kir = NULL;
    POOT_ASSERT_OK(vkt_build_fma(&kir));
    poot_strbuf glsl;
    poot_strbuf_init(&glsl);
    POOT_ASSERT_OK(poot_kir_render_glsl(kir, &caps->target, &glsl));
    assert_true((strstr(glsl.data, "poot_fma(") == NULL) == caps->target.fma_fused);
    poot_strbuf_deinit(&glsl);
    poot_device_kernel *k = NULL;
    POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
    poot_kir_kernel_destroy(kir);
    poot_device_buffer *bufs[4];
    const float *in[3] = {a, b, c};
    for (int i = 0; i < 4; i++) {
      POOT_ASSERT_OK(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_LOCAL, sizeof got, &bufs[i]));
      if (i < 3) POOT_ASSERT_OK(poot_device_upload(bufs[i], 0, in[i], sizeof got));
    }
    uint32_t n = N;
    poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                           .kernel = k,
                           .grid = {N / 64, 1, 1},
                           .buffers = bufs,
                           .push = &n};
    POOT_ASSERT_OK(poot_device_submit_one(d, &cmd, NULL));
    POOT_ASSERT_OK(poot_device_download(bufs[3], 0, got, sizeof got));
    int exact = 0;
    for (int i = 0; i < N; i++) {
      float want = fmaf(a[i], b[i], c[i]);
      exact += memcmp(&want, &got[i], sizeof want) == 0;
    }
    /* Native: exact everywhere iff the probe said fused. As probed: exact. */
    if (pass == 0)
      assert_int_equal(exact == N, probed);
    else
      assert_int_equal(exact, N);
    for (int i = 0; i < 4; i++) poot_device_buffer_destroy(bufs[i]);
  }
  caps->target.fma_fused = probed;
  close_device(d);
}

int main(void) {
  poot_vulkan_options o;
  poot_vulkan_options_init(&o);
  o.no_pipeline_cache = true;
  poot_device *probe = NULL;
  poot_status st = poot_vulkan_device_create(&o, &probe);
  if (st) {
    int rc = poot_test_skip("no Vulkan device: %s", poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  poot_device_destroy(probe);
  snprintf(g_dir, sizeof g_dir, "%s/pipeline-cache", poot_test_tmpdir());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_round_trip),
      cmocka_unit_test(test_cache_rejects_bad_files),
      cmocka_unit_test(test_cache_disabled),
      cmocka_unit_test(test_fma_probe),
      cmocka_unit_test(test_kernels_prepare_threads),
      cmocka_unit_test(test_kernels_prepare_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
