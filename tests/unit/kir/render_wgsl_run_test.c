/* The WGSL renderings run: every corpus kernel that a WebGPU target can hold
 * is rendered to WGSL, dispatched by PyPI's `wgpu` (tests/ref/wgsl_run.py;
 * on this machine through Vulkan on lavapipe) over the corpus inputs, and
 * its outputs match the C reference and the KIR interpreter on the same
 * inputs, with the same error word. Exit 77 when wgpu has no adapter. */
#include <stdlib.h>

#include "corpus.h"
#include "poot/devices.h"
#include "poot_test.h"

#define MAX_JOBS 512

typedef struct job {
  const poot_kir_corpus_case *c;
  poot_kir_kernel *k;
  poot_kir_corpus_run run;
  void *interp[POOT_KIR_CORPUS_MAX_BUFFERS]; /* the interpreter's outputs */
  uint32_t interp_err;
} job;

static char g_dir[1024];
static uint32_t g_sg;
static bool g_f16;
static bool g_fatomic;
static bool g_i64;
static job g_jobs[MAX_JOBS];
static size_t g_job_count;

static const char *python(void) {
  const char *py = getenv("PYTHON");
  return py ? py : "python3";
}

static void write_file(const char *path, const void *data, size_t size) {
  POOT_ASSERT_OK(poot_file_write_all(path, data, size));
}

/* Runs the interpreter on copies of the run's inputs (error-word mode). */
static void interp_job(job *j, const poot_kir_target *t) {
  poot_kir_buffer ib[POOT_KIR_CORPUS_MAX_BUFFERS];
  memset(ib, 0, sizeof ib);
  for (size_t i = 0; i < j->run.buffer_count; i++) {
    ib[i].size = j->run.buffers[i].size;
    ib[i].data = poot_malloc(ib[i].size ? ib[i].size : 1);
    assert_non_null(ib[i].data);
    memcpy(ib[i].data, j->run.buffers[i].data, ib[i].size);
    j->interp[i] = ib[i].data;
  }
  poot_kir_interp_options opt = {
      .grid = {j->run.grid[0], j->run.grid[1], j->run.grid[2]},
      .subgroup_size = t->subgroup_size,
      .buffers = ib,
      .buffer_count = j->run.buffer_count,
      .params = j->run.params,
      .param_count = j->run.param_count,
      .error_word = &j->interp_err,
  };
  POOT_ASSERT_OK(poot_kir_interp_run(j->k, &opt));
}

/* Writes one job's WGSL and buffers; appends its manifest entry. */
static void stage_job(size_t n, job *j, const poot_kir_target *t, poot_strbuf *manifest) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_wgsl(j->k, t, &sb));
  char path[1200];
  snprintf(path, sizeof path, "%s/j%zu.wgsl", g_dir, n);
  write_file(path, sb.data, sb.len);
  poot_strbuf_deinit(&sb);
  poot_strbuf_printf(manifest, "%s{\"wgsl\": \"%s\", \"grid\": [%u, %u, %u], \"buffers\": [",
                     n ? ",\n" : "", path, j->run.grid[0] ? j->run.grid[0] : 1,
                     j->run.grid[1] ? j->run.grid[1] : 1, j->run.grid[2] ? j->run.grid[2] : 1);
  const poot_kir_kernel *k = j->k;
  for (uint32_t i = 0; i < k->binding_count; i++) {
    snprintf(path, sizeof path, "%s/j%zu.b%u.bin", g_dir, n, i);
    write_file(path, j->run.buffers[i].data, j->run.buffers[i].size);
    poot_strbuf_printf(manifest, "%s{\"binding\": %u, \"path\": \"%s\"}", i ? ", " : "",
                       k->bindings[i].binding, path);
  }
  if (k->has_checks) {
    uint32_t zero = 0;
    snprintf(path, sizeof path, "%s/j%zu.err.bin", g_dir, n);
    write_file(path, &zero, 4);
    poot_strbuf_printf(manifest, ", {\"binding\": %u, \"path\": \"%s\"}", k->error_binding, path);
  }
  uint32_t push[64];
  uint32_t count = 0;
  for (uint32_t i = 0; i < k->param_count && count < 64; i++)
    if (k->params[i].kind == POOT_KIR_PARAM_PUSH) push[count++] = j->run.params[i];
  if (count) {
    snprintf(path, sizeof path, "%s/j%zu.params.bin", g_dir, n);
    write_file(path, push, count * 4);
    poot_strbuf_printf(manifest, ", {\"binding\": %u, \"path\": \"%s\", \"uniform\": true}",
                       k->param_binding, path);
  }
  poot_strbuf_puts(manifest, "]}");
}

/* Reads `size` bytes of a job's output file (it may be padded). */
static void read_output(const char *path, void *dst, size_t size) {
  char *data = NULL;
  size_t got = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &data, &got));
  assert_true(got >= size);
  memcpy(dst, data, size);
  poot_free(data);
}

static void test_corpus_runs_on_wgpu(void **state) {
  (void)state;
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, g_sg, &t);
  t.name = "webgpu-device";
  /* 8/16-bit and bf16 buffers are packed into u32 words by the renderer. */
  t.storage_types = POOT_KIR_ALL_STORAGE_TYPES & ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  if (g_f16) t.arith_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_F16);
  /* shader-float32-atomic: add and exchange on f32 in storage buffers. */
  if (g_fatomic) {
    t.atomic_types[POOT_KIR_ATOMIC_ADD] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
    t.atomic_types[POOT_KIR_ATOMIC_XCHG] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
  }
  /* shader-int64: naga's i64 (not WebGPU; never in the default target). */
  if (g_i64) {
    t.storage_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
    t.arith_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  }
  size_t n = 0, unsupported = 0, kernels = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  poot_strbuf manifest;
  poot_strbuf_init(&manifest);
  poot_strbuf_puts(&manifest, "{\"jobs\": [\n");
  for (size_t i = 0; i < n; i++) {
    const poot_kir_corpus_case *c = &cases[i];
    poot_kir_kernel *k = NULL;
    poot_status st = c->build(c, &t, &k);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      printf("  %s: unsupported on %s (%s)\n", c->name, t.name, poot_status_message(st));
      poot_status_free(st);
      unsupported++;
      continue;
    }
    POOT_ASSERT_OK(st);
    kernels++;
    for (int s = 0; s < POOT_KIR_CORPUS_MAX_SIZES && c->sizes[s]; s++) {
      assert_true(g_job_count < MAX_JOBS);
      job *j = &g_jobs[g_job_count];
      memset(j, 0, sizeof *j);
      j->c = c;
      j->k = k; /* shared by the jobs of one case; freed once at the end */
      POOT_ASSERT_OK(c->prepare(c, k, c->sizes[s], 0x77650000u + (uint64_t)s, &j->run));
      interp_job(j, &t);
      stage_job(g_job_count, j, &t, &manifest);
      g_job_count++;
    }
  }
  poot_strbuf_puts(&manifest, "\n]}\n");
  char mpath[1200];
  snprintf(mpath, sizeof mpath, "%s/manifest.json", g_dir);
  write_file(mpath, manifest.data, manifest.len);
  poot_strbuf_deinit(&manifest);

  int rc = poot_test_system("%s '%s/tests/ref/wgsl_run.py' '%s'", python(), poot_test_source_dir(),
                            mpath);
  assert_int_equal(rc, 0);

  size_t matched = 0, failures = 0;
  for (size_t jn = 0; jn < g_job_count; jn++) {
    job *j = &g_jobs[jn];
    char path[1200];
    for (uint32_t i = 0; i < j->k->binding_count; i++) {
      snprintf(path, sizeof path, "%s/j%zu.b%u.bin.out", g_dir, jn, i);
      read_output(path, j->run.buffers[i].data, j->run.buffers[i].size);
    }
    uint32_t err = 0;
    if (j->k->has_checks) {
      snprintf(path, sizeof path, "%s/j%zu.err.bin.out", g_dir, jn);
      read_output(path, &err, 4);
    }
    poot_status st = poot_kir_corpus_compare(j->k, &j->run, &err, false);
    if (!st && err != j->interp_err)
      st = poot_status_make(POOT_INVALID_ARGUMENT, "error word 0x%08x, interpreter 0x%08x", err,
                            j->interp_err);
    if (!st) {
      poot_kir_corpus_run vs = j->run;
      for (size_t i = 0; i < vs.buffer_count; i++)
        if (vs.expected[i]) vs.expected[i] = j->interp[i];
      st = poot_kir_corpus_compare(j->k, &vs, &err, false);
      if (st) st = poot_status_annotate(st, "against the interpreter");
    }
    if (st) {
      failures++;
      printf("  FAIL %s size %u: %s\n", j->c->name, j->run.size, poot_status_message(st));
      poot_status_free(st);
    } else {
      matched++;
    }
  }
  printf(
      "wgpu (subgroup size %u, f16 %s, f32 atomics %s, i64 %s): %zu of %zu runs of %zu corpus "
      "kernels match the "
      "reference and the interpreter; %zu kernels unsupported\n",
      g_sg, g_f16 ? "on" : "off", g_fatomic ? "on" : "off", g_i64 ? "on" : "off", matched,
      g_job_count, kernels, unsupported);
  /* Free everything (each kernel once). */
  for (size_t jn = 0; jn < g_job_count; jn++) {
    job *j = &g_jobs[jn];
    for (size_t i = 0; i < j->run.buffer_count; i++) poot_free(j->interp[i]);
    bool own = jn == 0 || g_jobs[jn - 1].k != j->k;
    poot_kir_corpus_run_deinit(&j->run);
    if (own) poot_kir_kernel_destroy(j->k);
  }
  assert_true(kernels > 0);
  assert_int_equal(failures, 0);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s", poot_test_tmpdir());
  char probe[1200];
  snprintf(probe, sizeof probe, "%s/probe.txt", g_dir);
  int rc = poot_test_system("%s '%s/tests/ref/wgsl_run.py' --probe '%s'", python(),
                            poot_test_source_dir(), probe);
  if (rc == POOT_TEST_SKIP) return poot_test_skip("wgpu has no adapter here (see above)");
  if (rc != 0) {
    printf("wgsl_run.py --probe failed (exit %d)\n", rc);
    return 1;
  }
  char *text = NULL;
  size_t len = 0;
  poot_status st = poot_file_read_all(probe, &text, &len);
  if (st) {
    printf("%s\n", poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  unsigned sg = 0, f16 = 0, fatomic = 0, i64 = 0;
  if (sscanf(text, "%u %u %u %u", &sg, &f16, &fatomic, &i64) != 4) {
    printf("bad probe output '%s'\n", text);
    poot_free(text);
    return 1;
  }
  poot_free(text);
  g_sg = sg;
  g_f16 = f16 != 0;
  g_fatomic = fatomic != 0;
  g_i64 = i64 != 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus_runs_on_wgpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
