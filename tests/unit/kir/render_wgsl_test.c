/* KIR's WGSL renderer: every corpus kernel renders to WGSL for the WebGPU
 * targets, deterministically, and the WGSL compiler of PyPI's `wgpu` accepts
 * every rendering (tests/ref/wgsl_validate.py creates a shader module and a
 * compute pipeline for each). The renderer runs first; the program then
 * exits 77 (skip) only when wgpu or an adapter is absent. */
#include <stdlib.h>
#include <sys/stat.h>

#include "corpus.h"
#include "poot/devices.h"
#include "poot_test.h"
#include "render_ptx_ops.h"

static char g_dir[1024];

/* The WebGPU targets: the defaults without and with subgroups, and one with
 * every storage type (8/16-bit and bf16 packed into u32 words), f16
 * arithmetic (`enable f16;`, the shader-f16 feature), f32 atomic add and
 * exchange (shader-float32-atomic) and i64 (naga's shader-int64). */
static void target_at(int which, poot_kir_target *t) {
  switch (which) {
    case 0:
      poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 0, t);
      break;
    case 1:
      poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 32, t);
      t->name = "webgpu-sg32";
      break;
    default:
      poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 32, t);
      t->name = "webgpu-wide";
      t->storage_types = POOT_KIR_ALL_STORAGE_TYPES;
      t->arith_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_F16) | POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
      t->atomic_types[POOT_KIR_ATOMIC_ADD] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
      t->atomic_types[POOT_KIR_ATOMIC_XCHG] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
      break;
  }
}

static void test_corpus_renders(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  assert_true(n > 0);
  size_t rendered[3] = {0}, wide_missing = 0;
  for (int w = 0; w < 3; w++) {
    poot_kir_target t;
    target_at(w, &t);
    for (size_t i = 0; i < n; i++) {
      const poot_kir_corpus_case *c = &cases[i];
      poot_kir_kernel *k = NULL;
      poot_status st = c->build(c, &t, &k);
      if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
        if (w == 2) {
          printf("  %s on %s: unsupported (%s)\n", c->name, t.name, poot_status_message(st));
          wide_missing++;
        }
        poot_status_free(st);
        continue;
      }
      POOT_ASSERT_OK(st);
      poot_strbuf a, b;
      poot_strbuf_init(&a);
      poot_strbuf_init(&b);
      POOT_ASSERT_OK(poot_kir_render_wgsl(k, &t, &a));
      POOT_ASSERT_OK(poot_kir_render_wgsl(k, &t, &b));
      assert_int_equal(a.len, b.len);
      assert_memory_equal(a.data, b.data, a.len);
      char entry[256];
      snprintf(entry, sizeof entry, "fn %s(", k->name);
      assert_non_null(strstr(a.data, entry));
      if (k->has_checks) assert_non_null(strstr(a.data, "atomicOr(&poot_err[0]"));
      char path[1200];
      snprintf(path, sizeof path, "%s/%s.%s.wgsl", g_dir, c->name, t.name);
      POOT_ASSERT_OK(poot_file_write_all(path, a.data, a.len));
      poot_strbuf_deinit(&a);
      poot_strbuf_deinit(&b);
      poot_kir_kernel_destroy(k);
      rendered[w]++;
    }
    printf("%s: %zu of %zu corpus kernels rendered\n", t.name, rendered[w], n);
  }
  /* Every kernel renders on the wide target. */
  assert_true(rendered[2] > 0);
  assert_true(rendered[0] > 0);
  assert_true(rendered[1] >= rendered[0]);
  assert_int_equal(rendered[2] + wide_missing, n);
}

/* The renderer tests' extra kernels (every op and conversion pair) on the
 * wide target; the ones with 64-bit integers or float atomics are refused. */
static void test_ops_kernels(void **state) {
  (void)state;
  poot_kir_target t;
  target_at(2, &t);
  t.max_bindings = 32;
  uint32_t done = 0;
  for (uint32_t i = 0; i < RENDER_OPS_KERNEL_COUNT; i++) {
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(render_ops_kernel(i, 32, &k));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_status st = poot_kir_render_wgsl(k, &t, &sb);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      printf("  %s: unsupported on %s (%s)\n", k->name, t.name, poot_status_message(st));
      poot_status_free(st);
    } else {
      POOT_ASSERT_OK(st);
      char path[1200];
      snprintf(path, sizeof path, "%s/%s.%s.wgsl", g_dir, k->name, t.name);
      POOT_ASSERT_OK(poot_file_write_all(path, sb.data, sb.len));
      done++;
    }
    poot_strbuf_deinit(&sb);
    poot_kir_kernel_destroy(k);
  }
  printf("%u of %u extra op kernels rendered\n", done, RENDER_OPS_KERNEL_COUNT);
  assert_true(done >= 1);
}

typedef struct render_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
} render_ctx;

static poot_status try_render(void *ctx) {
  const render_ctx *r = ctx;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot_kir_render_wgsl(r->k, r->t, &sb);
  if (!st) assert_non_null(strstr(sb.data, "@compute"));
  poot_strbuf_deinit(&sb);
  return st;
}

/* Exhausted memory at every allocation of a render gives OUT_OF_MEMORY. */
static void test_out_of_memory(void **state) {
  (void)state;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("gemv_tiled_f32");
  if (!c) c = &poot_kir_corpus(&(size_t){0})[0];
  poot_kir_target t;
  target_at(2, &t);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, &t, &k));
  render_ctx r = {k, &t};
  assert_true(poot_test_oom_sweep("render wgsl", try_render, &r, 10000) > 0);
  poot_kir_kernel_destroy(k);
}

static void test_wrong_target_language(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("vadd_f32");
  if (!c) c = &poot_kir_corpus(&n)[0];
  poot_kir_target web, lav;
  poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 0, &web);
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &lav);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, &web, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_STATUS(poot_kir_render_wgsl(k, &lav, &sb), POOT_INVALID_ARGUMENT);
  assert_int_equal(sb.len, 0);
  poot_strbuf_deinit(&sb);
  poot_kir_kernel_destroy(k);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s/wgsl", poot_test_tmpdir());
  if (mkdir(g_dir, 0755) != 0) {
    printf("cannot create %s\n", g_dir);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus_renders),
      cmocka_unit_test(test_ops_kernels),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_wrong_target_language),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (rc != 0) return rc;
  /* The WebGPU implementation's own compiler judges every rendering. */
  const char *py = getenv("PYTHON");
  int v = poot_test_system("%s '%s/tests/ref/wgsl_validate.py' '%s'", py ? py : "python3",
                           poot_test_source_dir(), g_dir);
  if (v == POOT_TEST_SKIP) return poot_test_skip("wgpu cannot validate WGSL here (see above)");
  if (v != 0) {
    printf("wgsl_validate.py failed (exit %d)\n", v);
    return 1;
  }
  return 0;
}
