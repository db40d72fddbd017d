/* The fused-fma probe: one small dispatch, at device creation, that tells
 * whether the device's own GLSL fma() rounds once (KIR's FMA semantics).
 * Vulkan's precision rules only promise a multiply followed by an add, so
 * the renderers otherwise emit the exact integer routine poot_fma; that
 * routine, inlined by the driver at each of a GPU GEMM's hundreds of fma
 * sites, is what made pipeline creation take seconds per kernel
 * (docs/backends.md, "Compile time on a discrete GPU"). */
#include <math.h>
#include <string.h>

#include "vk_impl.h"

enum { PROBE_N = 512 };

#define T(expr)        \
  do {                 \
    st = (expr);       \
    if (st) goto fail; \
  } while (0)

/* out[i] = fma(a[i], b[i], c[i]) for i < n. */
static poot_status build_probe(poot_kir_kernel **out) {
  *out = NULL;
  poot_kir_kernel_desc desc = {.name = "poot_probe_fma", .workgroup_size = {64, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  static const char *const names[4] = {"a", "b", "c", "out"};
  uint32_t refs[4], pn;
  for (uint32_t i = 0; i < 4; i++) {
    poot_kir_binding bd = {.name = names[i],
                           .binding = i,
                           .elem = POOT_KIR_F32,
                           .access = i < 3 ? POOT_KIR_ACCESS_READ : POOT_KIR_ACCESS_WRITE,
                           .align = 16};
    T(poot_kir_add_binding(b, &bd, &refs[i]));
  }
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  T(poot_kir_add_param(b, &n, &pn));
  poot_kir_value gid, vn, lt, x[3], y;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  for (int i = 0; i < 3; i++) T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, refs[i], gid, 1, &x[i]));
  T(poot_kir_fma(b, x[0], x[1], x[2], &y));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, refs[3], gid, y));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

/* Triples where a fused and an unfused fma differ: c = -round(a * b) leaves
 * exactly the product's rounding error when fused and 0 when not; and
 * random ones over a wide exponent range, subnormal results included. */
static void make_triples(float *a, float *b, float *c) {
  uint32_t s = 0x9e3779b9u;
  for (uint32_t i = 0; i < PROBE_N; i++) {
    s = s * 1664525u + 1013904223u;
    float ma = 1.0f + (float)(s >> 9) * 0x1p-23f;
    s = s * 1664525u + 1013904223u;
    float mb = 1.0f + (float)(s >> 9) * 0x1p-23f;
    s = s * 1664525u + 1013904223u;
    int ea = (int)(s % 40u) - 20, eb = (int)((s >> 8) % 40u) - 20;
    a[i] = ldexpf(ma, ea) * ((s >> 20) & 1u ? -1.0f : 1.0f);
    b[i] = ldexpf(mb, eb);
    if (i % 2 == 0) {
      volatile float p = a[i] * b[i];
      c[i] = -p;
    } else {
      s = s * 1664525u + 1013904223u;
      c[i] = ldexpf(1.0f + (float)(s >> 9) * 0x1p-23f, (int)(s % 60u) - 30);
    }
    if (i % 64 == 63) {
      /* A product near the bottom of the normal range: the result is
       * subnormal, which a device flushing denormals gets wrong. */
      a[i] = 0x1.8p-70f;
      b[i] = 0x1.4p-60f;
      c[i] = -0x1p-130f;
    }
  }
}

static poot_status run_probe(poot_vk_device *d, poot_device_kernel *k, bool *out_fused) {
  float in[3][PROBE_N], got[PROBE_N];
  make_triples(in[0], in[1], in[2]);
  poot_device_buffer *bufs[4] = {NULL, NULL, NULL, NULL};
  poot_status st = NULL;
  for (int i = 0; i < 4; i++)
    T(poot_device_buffer_create(&d->base, POOT_DEVICE_BUFFER_LOCAL, sizeof got, &bufs[i]));
  for (int i = 0; i < 3; i++) T(poot_device_upload(bufs[i], 0, in[i], sizeof got));
  uint32_t n = PROBE_N;
  poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                         .kernel = k,
                         .grid = {PROBE_N / 64, 1, 1},
                         .buffers = bufs,
                         .push = &n,
                         .label = "the fused-fma probe"};
  T(poot_device_submit_one(&d->base, &cmd, NULL));
  T(poot_device_download(bufs[3], 0, got, sizeof got));
  /* Every normal-range triple must match; a subnormal result may be
   * flushed (a device that flushes does so in every float operation, not
   * only in fma, so the exact routine would not make it exact either). */
  uint32_t wrong = 0, wrong_subnormal = 0;
  for (uint32_t i = 0; i < PROBE_N; i++) {
    float want = fmaf(in[0][i], in[1][i], in[2][i]);
    if (memcmp(&want, &got[i], sizeof want) == 0) continue;
    if (fpclassify(want) == FP_SUBNORMAL && got[i] == 0.0f)
      wrong_subnormal++;
    else
      wrong++;
  }
  if (wrong_subnormal)
    poot_log(POOT_LOG_INFO, "vulkan: the fused-fma probe: %u subnormal results flushed to zero",
             wrong_subnormal);
  *out_fused = wrong == 0;
fail:
  for (int i = 0; i < 4; i++) poot_device_buffer_destroy(bufs[i]);
  return st;
}

poot_status poot__vk_probe_fma(poot_vk_device *d) {
  poot_kir_target *t = &d->base.caps.target;
  t->fma_fused = false;
  poot_kir_kernel *kir = NULL;
  POOT_TRY(build_probe(&kir));
  /* Rendered with the native fma(); created outside the device's kernel
   * cache, whose key would record the target before the probe decides. */
  t->fma_fused = true;
  poot_device_kernel *k = NULL;
  poot_status st = poot__vk_kernel_create(&d->base, kir, &k);
  t->fma_fused = false;
  bool fused = false;
  if (!st) st = run_probe(d, k, &fused);
  if (k) poot__vk_kernel_destroy(&d->base, k);
  poot_kir_kernel_destroy(kir);
  if (st) return poot_status_annotate(st, "vulkan: the fused-fma probe");
  t->fma_fused = fused;
  poot_log(d->diag ? POOT_LOG_WARN : POOT_LOG_INFO, "vulkan: '%s' %s", d->base.caps.name,
           fused ? "computes fma() fused: kernels use it"
                 : "does not compute fma() fused: kernels use the exact routine poot_fma");
  return NULL;
}
