/* The device probes: small dispatches at device creation that tell what
 * Vulkan leaves to the device and KIR fixes.
 *
 * The fused-fma probe: whether the device's own GLSL fma() rounds once
 * (KIR's FMA semantics). Vulkan's precision rules only promise a multiply
 * followed by an add, so the renderers otherwise emit the exact integer
 * routine poot_fma; that routine, inlined by the driver at each of a GPU
 * GEMM's hundreds of fma sites, is what made pipeline creation take seconds
 * per kernel (docs/backends.md, "Compile time on a discrete GPU").
 *
 * The half-conversion probe: whether unpackHalf2x16 gives every half's
 * exact value and packHalf2x16 rounds to nearest even, a NaN staying a
 * NaN (Vulkan fixes
 * neither without float controls). Otherwise the renderers emit the exact
 * integer routines, ~13 operations a half, which on a GPU make every f16
 * GEMV bound by its integer issue rate rather than by memory. */
#include <math.h>
#include <stdlib.h>
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

/* out[i] = convert(in[i]) for i < n: f16 -> f32 (widen) or f32 -> f16. */
static poot_status build_half_probe(bool widen, poot_kir_kernel **out) {
  *out = NULL;
  poot_kir_kernel_desc desc = {.name = widen ? "poot_probe_f16_widen" : "poot_probe_f16_narrow",
                               .workgroup_size = {64, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  const poot_kir_scalar from = widen ? POOT_KIR_F16 : POOT_KIR_F32;
  const poot_kir_scalar to = widen ? POOT_KIR_F32 : POOT_KIR_F16;
  poot_kir_binding in = {
      .name = "in", .binding = 0, .elem = from, .access = POOT_KIR_ACCESS_READ, .align = 16};
  poot_kir_binding res = {
      .name = "out", .binding = 1, .elem = to, .access = POOT_KIR_ACCESS_WRITE, .align = 16};
  uint32_t rin, rout, pn;
  T(poot_kir_add_binding(b, &in, &rin));
  T(poot_kir_add_binding(b, &res, &rout));
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  T(poot_kir_add_param(b, &n, &pn));
  poot_kir_value gid, vn, lt, x, y;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rin, gid, 1, &x));
  T(poot_kir_convert(b, to, x, &y));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, rout, gid, y));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

static float f32_of(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* The narrowing probe's inputs: every finite half's value, each tie between
 * neighbouring halves (the overflow tie 65520 and the underflow tie 2^-25
 * included) and the floats either side of it, both signs; infinities, NaNs
 * with payloads, f32 subnormals, values past the f16 range. Returns the
 * count (8 * 0x7c00 + 16). */
static uint32_t make_narrow_inputs(float *x) {
  uint32_t n = 0;
  for (uint32_t sign = 0; sign < 2; sign++) {
    for (uint32_t h = 0; h < 0x7c00u; h++) {
      uint16_t hs = (uint16_t)(h | (sign << 15));
      float v = poot_f16_to_f32(hs);
      /* The next half up (0x7c00 is infinity: the tie is at 65520). */
      double up = h + 1 < 0x7c00u ? (double)poot_f16_to_f32((uint16_t)((h + 1) | (sign << 15)))
                                  : (sign ? -65536.0 : 65536.0);
      float mid = (float)(((double)v + up) / 2.0); /* exact: 12 significant bits */
      x[n++] = v;
      x[n++] = mid;
      x[n++] = nextafterf(mid, 0.0f);
      x[n++] = nextafterf(mid, sign ? -INFINITY : INFINITY);
    }
  }
  static const uint32_t extra[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                   0xffc01234u, 0x7fbfe000u, 0x00000001u, 0x807fffffu,
                                   0x00400000u, 0x7f7fffffu, 0xff7fffffu, 0x47ffefffu,
                                   0x47fff000u, 0x47fff001u, 0x33000000u, 0x33000001u};
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) x[n++] = f32_of(extra[i]);
  return n;
}

static bool half_nan(uint16_t h) {
  return (h & 0x7fffu) > 0x7c00u;
}

/* Runs one conversion probe over n inputs; *out_exact: every result has
 * base.h's bits. */
static poot_status run_half_probe(poot_vk_device *d, poot_device_kernel *k, bool widen,
                                  bool *out_exact) {
  enum { NARROW_MAX = 8 * 0x7c00 + 16, WIDEN_N = 65536 };
  const uint32_t n_max = widen ? WIDEN_N : NARROW_MAX;
  void *in = poot_malloc((size_t)n_max * 4);
  void *got = poot_malloc((size_t)n_max * 4);
  poot_device_buffer *bufs[2] = {NULL, NULL};
  poot_status st = NULL;
  if (!in || !got) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "the half-conversion probe's %u inputs", n_max);
    goto fail;
  }
  uint32_t n = WIDEN_N;
  if (widen) {
    for (uint32_t h = 0; h < WIDEN_N; h++) ((uint16_t *)in)[h] = (uint16_t)h;
  } else {
    n = make_narrow_inputs(in);
  }
  const size_t in_bytes = (size_t)n * (widen ? 2 : 4), out_bytes = (size_t)n * (widen ? 4 : 2);
  /* Sizes in whole 16-byte vectors: a half buffer of odd length is padded. */
  T(poot_device_buffer_create(&d->base, POOT_DEVICE_BUFFER_LOCAL, (in_bytes + 15) & ~(size_t)15,
                              &bufs[0]));
  T(poot_device_buffer_create(&d->base, POOT_DEVICE_BUFFER_LOCAL, (out_bytes + 15) & ~(size_t)15,
                              &bufs[1]));
  T(poot_device_upload(bufs[0], 0, in, in_bytes));
  poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                         .kernel = k,
                         .grid = {(n + 63) / 64, 1, 1},
                         .buffers = bufs,
                         .push = &n,
                         .label = "the half-conversion probe"};
  T(poot_device_submit_one(&d->base, &cmd, NULL));
  T(poot_device_download(bufs[1], 0, got, out_bytes));
  uint32_t wrong = 0, first = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    /* Bit for bit; a NaN for a NaN (its payload is the device's, as on
     * PTX: docs/kir.md). */
    bool ok;
    if (widen) {
      float want = poot_f16_to_f32(((const uint16_t *)in)[i]), g = ((const float *)got)[i];
      ok = memcmp(&want, &g, sizeof want) == 0 || (isnan(want) && isnan(g));
    } else {
      uint16_t want = poot_f32_to_f16(((const float *)in)[i]), g = ((const uint16_t *)got)[i];
      ok = want == g || (half_nan(want) && half_nan(g));
    }
    if (!ok && wrong++ == 0) first = i;
  }
  if (wrong) {
    uint32_t xb = 0;
    if (!widen) memcpy(&xb, (const float *)in + first, 4);
    poot_log(POOT_LOG_INFO,
             "vulkan: the half-conversion probe (%s): %u of %u results differ from base.h's, "
             "the first for input %#x",
             widen ? "f16 -> f32" : "f32 -> f16", wrong, n,
             widen ? (unsigned)((const uint16_t *)in)[first] : (unsigned)xb);
  }
  *out_exact = wrong == 0;
fail:
  for (int i = 0; i < 2; i++) poot_device_buffer_destroy(bufs[i]);
  poot_free(in);
  poot_free(got);
  return st;
}

/* One direction: rendered with only its own flag set (so a fault of the
 * other direction cannot hide or cause one here). */
static poot_status probe_half(poot_vk_device *d, bool widen, bool *out_exact) {
  poot_kir_target *t = &d->base.caps.target;
  *out_exact = false;
  poot_kir_kernel *kir = NULL;
  POOT_TRY(build_half_probe(widen, &kir));
  if (widen)
    t->f16_widen_native = true;
  else
    t->f16_narrow_native = true;
  poot_device_kernel *k = NULL;
  poot_status st = poot__vk_kernel_create(&d->base, kir, &k);
  t->f16_widen_native = t->f16_narrow_native = false;
  if (!st) st = run_half_probe(d, k, widen, out_exact);
  if (k) poot__vk_kernel_destroy(&d->base, k);
  poot_kir_kernel_destroy(kir);
  return st;
}

poot_status poot__vk_probe_f16(poot_vk_device *d, bool exact_only) {
  poot_kir_target *t = &d->base.caps.target;
  t->f16_widen_native = t->f16_narrow_native = false;
  if (exact_only) {
    poot_log(POOT_LOG_INFO, "vulkan: half conversions by the exact routines (asked for)");
    return NULL;
  }
  bool widen = false, narrow = false;
  poot_status st = probe_half(d, true, &widen);
  if (!st) st = probe_half(d, false, &narrow);
  if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
    /* A probe kernel this device cannot build (say, no 16-bit storage):
     * the routines, as before the probe existed; not a reason to refuse
     * the device. */
    poot_log(POOT_LOG_INFO, "vulkan: half conversions by the exact routines (%s)",
             poot_status_message(st));
    poot_status_free(st);
    return NULL;
  }
  if (st) return poot_status_annotate(st, "vulkan: the half-conversion probe");
  t->f16_widen_native = widen;
  t->f16_narrow_native = narrow;
  poot_log(d->diag ? POOT_LOG_WARN : POOT_LOG_INFO,
           "vulkan: '%s' converts halves %s (f16 -> f32 %s, f32 -> f16 %s)", d->base.caps.name,
           widen && narrow   ? "exactly: kernels use unpackHalf2x16 and packHalf2x16"
           : widen || narrow ? "exactly one way: kernels use the native conversion there"
                             : "inexactly: kernels use the exact routines",
           widen ? "native" : "routine", narrow ? "native" : "routine");
  return NULL;
}
