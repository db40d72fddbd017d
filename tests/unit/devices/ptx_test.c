/* ptx_device tests — the PTX device through poot/exec.h's device interface
 * on an NVIDIA GPU. SKIP (exit 77) without libcuda.so.1 or a GPU, so CI
 * skips them; scripts/gpu-check.sh runs them on a GPU machine.
 *
 * One program, three modes, each its own CTest test and process, because a
 * trap or a timed-out kernel poisons the CUDA context for the process:
 *   ptx_device_test          buffers, slot-driven replay, replay vs eager,
 *                            copies, device time, the launch micro-benchmark,
 *                            a kernel with 96 KiB of dynamic shared memory
 *   ptx_device_test fault    a failed check → KERNEL_FAULT (kernel, dispatch,
 *                            trap code) → POISONED; then a new device on
 *                            the same GPU works again (primary context reset)
 *   ptx_device_test timeout  a kernel that never ends, a 2 s timeout →
 *                            TIMEOUT → POISONED; the process goes on
 *
 * A plain C program (no cmocka), like kir_render_ptx_cuda, so that a GPU
 * machine with only a compiler and the driver can build and run it
 * (scripts/gpu-check.sh). Each check prints FAIL with file and line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/kir.h"
#include "ptx_device.h"

/* ---------------------------------------------------------------- checks */

#define FAILF(...)                               \
  do {                                           \
    printf("FAIL: %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__);                         \
    printf("\n");                                \
    return 1;                                    \
  } while (0)
#define EXPECT(cond)                          \
  do {                                        \
    if (!(cond)) FAILF("expected %s", #cond); \
  } while (0)
#define OK(expr)                                                                             \
  do {                                                                                       \
    poot_status ok_s_ = (expr);                                                              \
    if (ok_s_) {                                                                             \
      printf("FAIL: %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,                         \
             poot_status_code_name(poot_status_code_of(ok_s_)), poot_status_message(ok_s_)); \
      poot_status_free(ok_s_);                                                               \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)
/* The call fails with `code` and its message mentions `needle` (or NULL). */
#define EXPECT_CODE(expr, code, needle)                                                        \
  do {                                                                                         \
    poot_status ex_s_ = (expr);                                                                \
    poot_status_code ex_c_ = poot_status_code_of(ex_s_);                                       \
    char ex_m_[1024];                                                                          \
    snprintf(ex_m_, sizeof ex_m_, "%s", poot_status_message(ex_s_));                           \
    poot_status_free(ex_s_);                                                                   \
    if (ex_c_ != (code))                                                                       \
      FAILF("%s returned %s (%s), expected %s", #expr, poot_status_code_name(ex_c_), ex_m_,    \
            poot_status_code_name(code));                                                      \
    if ((needle) && !strstr(ex_m_, (needle) ? (needle) : ""))                                  \
      FAILF("%s: message '%s' does not mention '%s'", #expr, ex_m_, (needle) ? (needle) : ""); \
  } while (0)

static void fill_random(float *buf, size_t n, uint64_t seed, float lo, float hi) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = lo + (hi - lo) * (float)((double)(x >> 40) / (double)(1ull << 24));
  }
}

/* ------------------------------------------------------------- kernels */

/* Accumulates the first failure of a run of builder calls. */
#define B(expr)           \
  do {                    \
    if (!st) st = (expr); \
  } while (0)

static poot_status finish(poot_kir_builder *b, poot_status st, poot_kir_kernel **out) {
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  return poot_kir_builder_finish(b, out);
}

/* out[i] = a[i] + b[i] * float(slots[0]) for i < n: the scalar comes from a
 * SLOT param, so a replay follows what the host wrote into the slot buffer. */
static poot_status build_axpy_slot(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"axpy_slot", {64, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding ba = {"a", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bb = {"b", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bo = {"out", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  poot_kir_binding bs = {"slots", 3, POOT_KIR_U32, POOT_KIR_ACCESS_READ, 16, false};
  uint32_t ra = 0, rb = 0, ro = 0, rs = 0, pn = 0, pk = 0;
  B(poot_kir_add_binding(b, &ba, &ra));
  B(poot_kir_add_binding(b, &bb, &rb));
  B(poot_kir_add_binding(b, &bo, &ro));
  B(poot_kir_add_binding(b, &bs, &rs));
  poot_kir_param n = {"n", POOT_KIR_U32, POOT_KIR_PARAM_PUSH, 0, 0};
  poot_kir_param k = {"k", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, rs, 0};
  B(poot_kir_add_param(b, &n, &pn));
  B(poot_kir_add_param(b, &k, &pk));
  poot_kir_value gid = 0, vn = 0, in = 0, va = 0, vb = 0, vk = 0, kf = 0, m = 0, s = 0;
  B(poot_kir_global_id(b, 0, &gid));
  B(poot_kir_param_get(b, pn, &vn));
  B(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &in));
  B(poot_kir_if_begin(b, in));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &va));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rb, gid, 1, &vb));
  B(poot_kir_param_get(b, pk, &vk));
  B(poot_kir_convert(b, POOT_KIR_F32, vk, &kf));
  B(poot_kir_binary(b, POOT_KIR_OP_MUL, vb, kf, &m));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, va, m, &s));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, s));
  B(poot_kir_end(b));
  return finish(b, st, out);
}

/* y1 = tanh(exp(x)*sqrt(|x|+1)) - x + fma(x, x, 1)/64, out = y1 + 1e-3 *
 * (sum of y1 over the warp): math, fma and shuffles, bounded when chained,
 * for the bit-identity check. */
static poot_status build_mathmix(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"mathmix", {64, 1, 1}, 32};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding bx = {"x", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding by = {"y", 1, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  uint32_t rx = 0, ry = 0;
  B(poot_kir_add_binding(b, &bx, &rx));
  B(poot_kir_add_binding(b, &by, &ry));
  poot_kir_value gid = 0, x = 0, e = 0, ax = 0, one = 0, ax1 = 0, sq = 0, p = 0, t = 0, f = 0,
                 c64 = 0, fd = 0, y0 = 0, y1 = 0, r = 0, eps = 0, re = 0, y = 0;
  B(poot_kir_global_id(b, 0, &gid));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, gid, 1, &x));
  B(poot_kir_unary(b, POOT_KIR_OP_EXP, x, &e));
  B(poot_kir_unary(b, POOT_KIR_OP_ABS, x, &ax));
  B(poot_kir_const_f32(b, 1.0f, &one));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, ax, one, &ax1));
  B(poot_kir_unary(b, POOT_KIR_OP_SQRT, ax1, &sq));
  B(poot_kir_binary(b, POOT_KIR_OP_MUL, e, sq, &p));
  B(poot_kir_unary(b, POOT_KIR_OP_TANH, p, &t));
  B(poot_kir_fma(b, x, x, one, &f));
  B(poot_kir_const_f32(b, 64.0f, &c64));
  B(poot_kir_binary(b, POOT_KIR_OP_DIV, f, c64, &fd));
  B(poot_kir_binary(b, POOT_KIR_OP_SUB, t, x, &y0));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, y0, fd, &y1));
  B(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, y1, &r));
  B(poot_kir_const_f32(b, 1e-3f, &eps));
  B(poot_kir_binary(b, POOT_KIR_OP_MUL, r, eps, &re));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, y1, re, &y));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ry, gid, y));
  return finish(b, st, out);
}

/* out[i] = table[ids[i]] with check(ids[i] < n, trap 7): a token id past
 * the vocabulary traps. */
static poot_status build_gather_checked(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"gather_checked", {32, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding bt = {"table", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bi = {"ids", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bo = {"out", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  uint32_t rt = 0, ri = 0, ro = 0, pn = 0;
  B(poot_kir_add_binding(b, &bt, &rt));
  B(poot_kir_add_binding(b, &bi, &ri));
  B(poot_kir_add_binding(b, &bo, &ro));
  poot_kir_param n = {"n", POOT_KIR_U32, POOT_KIR_PARAM_PUSH, 0, 0};
  B(poot_kir_add_param(b, &n, &pn));
  poot_kir_value gid = 0, id = 0, vn = 0, ok = 0, zero = 0, safe = 0, v = 0;
  B(poot_kir_global_id(b, 0, &gid));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ri, gid, 1, &id));
  B(poot_kir_param_get(b, pn, &vn));
  B(poot_kir_binary(b, POOT_KIR_OP_LT, id, vn, &ok));
  B(poot_kir_check(b, ok, 7));
  B(poot_kir_const_u32(b, 0, &zero));
  B(poot_kir_select(b, ok, id, zero, &safe));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rt, safe, 1, &v));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, v));
  return finish(b, st, out);
}

/* for (i = 0; i < 1; i += slots[0]) atomic_add(counter[0], 1): with a zero
 * step in the slot, the kernel never ends. */
static poot_status build_spin(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"spin_forever", {32, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding bc = {"counter", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
  poot_kir_binding bs = {"slots", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ, 16, false};
  uint32_t rc = 0, rs = 0, ps = 0;
  B(poot_kir_add_binding(b, &bc, &rc));
  B(poot_kir_add_binding(b, &bs, &rs));
  poot_kir_param step = {"step", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, rs, 0};
  B(poot_kir_add_param(b, &step, &ps));
  poot_kir_value zero = 0, one = 0, vs = 0, i = 0, old = 0;
  B(poot_kir_const_u32(b, 0, &zero));
  B(poot_kir_const_u32(b, 1, &one));
  B(poot_kir_param_get(b, ps, &vs));
  B(poot_kir_for_begin(b, zero, one, vs, &i));
  B(poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, rc, zero, one, &old));
  B(poot_kir_end(b));
  return finish(b, st, out);
}

/* x[lid] += 1 in one workgroup of 32: the tiny kernel of the benchmark. */
static poot_status build_tiny(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"tiny_inc", {32, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding bx = {"x", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
  uint32_t rx = 0;
  B(poot_kir_add_binding(b, &bx, &rx));
  poot_kir_value lid = 0, v = 0, one = 0, w = 0;
  B(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, lid, 1, &v));
  B(poot_kir_const_u32(b, 1, &one));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, v, one, &w));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, rx, lid, w));
  return finish(b, st, out);
}

/* x[lid] += s[0] (a SLOT param) in one workgroup of 32: the benchmark's
 * slot-reading kernel, with s in a SLOT (host-mapped) or a LOCAL buffer. */
static poot_status build_tiny_slot(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"tiny_slot", {32, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  poot_kir_binding bx = {"x", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
  poot_kir_binding bs = {"s", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ, 16, false};
  uint32_t rx = 0, rs = 0, pk = 0;
  B(poot_kir_add_binding(b, &bx, &rx));
  B(poot_kir_add_binding(b, &bs, &rs));
  poot_kir_param k = {"k", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, rs, 0};
  B(poot_kir_add_param(b, &k, &pk));
  poot_kir_value lid = 0, v = 0, vk = 0, w = 0;
  B(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, lid, 1, &v));
  B(poot_kir_param_get(b, pk, &vk));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, v, vk, &w));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, rx, lid, w));
  return finish(b, st, out);
}

/* ------------------------------------------------------------- fixture */

static poot_device *g_dev;

#define LOCAL POOT_DEVICE_BUFFER_LOCAL
#define SLOT POOT_DEVICE_BUFFER_SLOT

/* -------------------------------------------------------------- tests */

static int test_caps(void) {
  const poot_device_caps *c = poot_device_caps_get(g_dev);
  EXPECT(strcmp(c->backend, "ptx") == 0);
  EXPECT((c->target.lang) == (POOT_KIR_LANG_PTX));
  EXPECT(c->target.sm_version == 80 || c->target.sm_version == 90);
  EXPECT(c->local_bytes > ((uint64_t)1 << 30));
  EXPECT(c->can_time);
  printf("device: %s (%s), target %s, %.1f GiB\n", c->name, c->kind, c->target.name,
         (double)c->local_bytes / (double)(1ull << 30));
  return 0;
}

static int test_buffers_round_trip(void) {
  enum { N = 1 << 20 };
  uint8_t *src = malloc(N), *dst = malloc(N);
  EXPECT(src);
  EXPECT(dst);
  for (size_t i = 0; i < N; i++) src[i] = (uint8_t)(i * 2654435761u >> 13);
  poot_device_buffer *local = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N, &local));
  EXPECT(!poot_device_buffer_host(local));
  /* Fresh buffers read as zero. */
  OK(poot_device_download(local, 0, dst, 4096));
  for (size_t i = 0; i < 4096; i++) EXPECT((dst[i]) == (0));
  OK(poot_device_upload(local, 0, src, N));
  memset(dst, 0xAB, N);
  OK(poot_device_download(local, 0, dst, N));
  EXPECT(memcmp(src, dst, N) == 0);
  /* A partial write at an odd offset changes only those bytes. */
  OK(poot_device_upload(local, 12345, "poot", 4));
  OK(poot_device_download(local, 12340, dst, 16));
  EXPECT(memcmp(dst, src + 12340, 5) == 0);
  EXPECT(memcmp(dst + 5, "poot", 4) == 0);
  EXPECT(memcmp(dst + 9, src + 12349, 7) == 0);
  EXPECT_CODE(poot_device_upload(local, N - 2, src, 4), POOT_INVALID_ARGUMENT, NULL);
  /* A slot buffer: host writes through the stable mapping, uploads and
   * downloads see the same bytes. */
  poot_device_buffer *slot = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 256, &slot));
  uint8_t *host = poot_device_buffer_host(slot);
  EXPECT(host);
  for (int i = 0; i < 256; i++) EXPECT((host[i]) == (0));
  memcpy(host, src, 256);
  OK(poot_device_download(slot, 0, dst, 256));
  EXPECT(memcmp(dst, src, 256) == 0);
  OK(poot_device_upload(slot, 128, src + 1000, 64));
  EXPECT(memcmp(host + 128, src + 1000, 64) == 0);
  EXPECT((poot_device_buffer_host(slot)) == (host));
  poot_device_buffer_destroy(slot);
  poot_device_buffer_destroy(local);
  free(src);
  free(dst);
  return 0;
}

/* A two-dispatch recording (out1 = a + b*k; out2 = out1 + b*k) plus a copy
 * of the first 16 results into a slot buffer, recorded once and replayed
 * with the slot set to k = 1..40: every result follows the slot. */
static int replay_follows_slots(bool mirror) {
  poot_ptx_device_set_slot_mirror(g_dev, mirror);
  enum { N = 10000 };
  poot_kir_kernel *kir = NULL;
  OK(build_axpy_slot(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  poot_device_kernel *k2 = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k2));
  EXPECT((k) == (k2)); /* cached by KIR hash and target */
  EXPECT((k->binding_count) == (4));
  EXPECT((k->push_count) == (1));
  float *a = malloc(N * sizeof *a), *bv = malloc(N * sizeof *bv), *o = malloc(N * sizeof *o);
  fill_random(a, N, 1, -4.0f, 4.0f);
  fill_random(bv, N, 2, -1.0f, 1.0f);
  poot_device_buffer *ba = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &ba));
  poot_device_buffer *bb = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &bb));
  poot_device_buffer *o1 = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o1));
  poot_device_buffer *o2 = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o2));
  poot_device_buffer *slots = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 64, &slots));
  poot_device_buffer *result = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 64, &result));
  OK(poot_device_upload(ba, 0, a, N * 4));
  OK(poot_device_upload(bb, 0, bv, N * 4));
  uint32_t n = N;
  poot_device_buffer *args1[] = {ba, bb, o1, slots};
  poot_device_buffer *args2[] = {o1, bb, o2, slots};
  poot_device_cmd cmds[3] = {
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .grid = {(N + 63) / 64, 1, 1},
       .buffers = args1,
       .push = &n,
       .label = "first"},
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .grid = {(N + 63) / 64, 1, 1},
       .buffers = args2,
       .push = &n,
       .label = "second"},
      {.kind = POOT_DEVICE_CMD_COPY,
       .src = o2,
       .dst = result,
       .src_offset = 4 * 100,
       .dst_offset = 0,
       .size = 64},
  };
  poot_device_recording *rec = NULL;
  OK(poot_device_record(g_dev, cmds, 3, NULL, &rec));
  EXPECT((rec->dispatch_count) == (2));
  EXPECT((rec->command_count) == (3));
  uint32_t *slot = poot_device_buffer_host(slots);
  const float *res = poot_device_buffer_host(result);
  uint64_t device_ns_total = 0;
  for (uint32_t step = 1; step <= 40; step++) {
    slot[0] = step; /* the only thing the host changes between replays */
    OK(poot_device_replay(rec));
    uint64_t dns = 0;
    OK(poot_device_synchronize(g_dev, &dns));
    device_ns_total += dns;
    float kf = (float)step;
    for (int i = 0; i < 16; i++) {
      float m = bv[100 + i] * kf;
      float o1v = a[100 + i] + m;
      float want = o1v + m;
      if (memcmp(&res[i], &want, 4) != 0)
        FAILF("step %u: result[%d] = %.9g, want %.9g", step, i, (double)res[i], (double)want);
    }
    if (step % 13 == 0) {
      OK(poot_device_download(o2, 0, o, N * 4));
      for (int i = 0; i < N; i++) {
        float m = bv[i] * kf;
        float o1v = a[i] + m;
        float want = o1v + m;
        if (memcmp(&o[i], &want, 4) != 0)
          FAILF("step %u: out[%d] = %.9g, want %.9g", step, i, (double)o[i], (double)want);
      }
    }
  }
  EXPECT(device_ns_total > 0); /* events time the replays */
  printf("40 replays following the slot%s: device time %.2f us per replay\n",
         mirror ? " (slot mirror)" : "", (double)device_ns_total / 40e3);
  poot_ptx_device_set_slot_mirror(g_dev, false);
  poot_device_recording_destroy(rec);
  poot_device_buffer *all[] = {ba, bb, o1, o2, slots, result};
  for (size_t i = 0; i < 6; i++) poot_device_buffer_destroy(all[i]);
  poot_kir_kernel_destroy(kir);
  free(a);
  free(bv);
  free(o);
  return 0;
}

static int test_replay_follows_slots(void) {
  return replay_follows_slots(false);
}

/* The same with SLOT buffers mirrored in device memory. */
static int test_replay_follows_slots_mirror(void) {
  return replay_follows_slots(true);
}

/* Runs `depth` chained mathmix dispatches (x → y0 → y1 → ...) in `mode`
 * (0 graph replay, 1 eager recording, 2 one submission per dispatch) and
 * downloads the last output into out. */
static int run_chain(poot_device_kernel *k, const float *x, size_t n, int depth, int mode,
                     float *out) {
  poot_device_buffer *bufs[9] = {0};
  for (int i = 0; i <= depth; i++) OK(poot_device_buffer_create(g_dev, LOCAL, n * 4, &bufs[i]));
  OK(poot_device_upload(bufs[0], 0, x, n * 4));
  poot_device_cmd cmds[8];
  poot_device_buffer *args[8][2];
  for (int i = 0; i < depth; i++) {
    args[i][0] = bufs[i];
    args[i][1] = bufs[i + 1];
    cmds[i] = (poot_device_cmd){.kind = POOT_DEVICE_CMD_DISPATCH,
                                .kernel = k,
                                .grid = {(uint32_t)(n / 64), 1, 1},
                                .buffers = args[i]};
  }
  if (mode == 2) {
    for (int i = 0; i < depth; i++) OK(poot_device_submit_one(g_dev, &cmds[i], NULL));
  } else {
    poot_ptx_device_set_eager(g_dev, mode == 1);
    poot_device_recording *rec = NULL;
    OK(poot_device_record(g_dev, cmds, (uint32_t)depth, NULL, &rec));
    for (int r = 0; r < 3; r++) {
      OK(poot_device_replay(rec));
      OK(poot_device_synchronize(g_dev, NULL));
    }
    poot_device_recording_destroy(rec);
    poot_ptx_device_set_eager(g_dev, false);
  }
  OK(poot_device_download(bufs[depth], 0, out, n * 4));
  for (int i = 0; i <= depth; i++) poot_device_buffer_destroy(bufs[i]);
  return 0;
}

static int test_replay_matches_eager(void) {
  enum { N = 1 << 16, DEPTH = 6 };
  poot_kir_kernel *kir = NULL;
  OK(build_mathmix(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  float *x = malloc(N * 4);
  fill_random(x, N, 7, -0.5f, 0.5f);
  float *graph = malloc(N * 4), *eager = malloc(N * 4), *one = malloc(N * 4);
  EXPECT(graph && eager && one);
  if (run_chain(k, x, N, DEPTH, 0, graph) || run_chain(k, x, N, DEPTH, 1, eager) ||
      run_chain(k, x, N, DEPTH, 2, one))
    return 1;
  size_t finite = 0;
  for (size_t i = 0; i < N; i++) finite += isfinite(graph[i]) ? 1 : 0;
  EXPECT((finite) == (N));
  EXPECT(memcmp(graph, eager, N * 4) == 0);
  EXPECT(memcmp(graph, one, N * 4) == 0);
  printf(
      "replay (CUDA graph) vs eager launches vs one-by-one submission: %d x %d floats "
      "bit-identical\n",
      DEPTH, N);
  free(graph);
  free(eager);
  free(one);
  free(x);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* A kernel over PTX's 48 KiB of static shared memory: tiles a and c of
 * BS_N f32 each and b of 3 u32 between them (a 98,320-byte dynamic window,
 * kir.h's poot_kir_ptx_dynamic_shared_bytes); per workgroup w, over its
 * block of BS_N elements, out[i] = a[n-1-i] + c[i] + b[i % 3] after
 * a[i] = in[i], c[n-1-i] = 2 in[i], b[t] = t + 1 + w. */
#define BS_N 12288u
#define BS_WG 256u
static poot_status build_big_shared(poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"big_shared", {BS_WG, 1, 1}, 0};
  poot_kir_builder *bl = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &bl));
  poot_status st = NULL;
  uint32_t a = 0, bs = 0, c = 0, in = 0, o = 0;
  poot_kir_binding bin = {"in", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bout = {"out", 1, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  B(poot_kir_add_binding(bl, &bin, &in));
  B(poot_kir_add_binding(bl, &bout, &o));
  B(poot_kir_add_shared(bl, "a", POOT_KIR_F32, BS_N, &a));
  B(poot_kir_add_shared(bl, "b", POOT_KIR_U32, 3, &bs));
  B(poot_kir_add_shared(bl, "c", POOT_KIR_F32, BS_N, &c));
  poot_kir_value lid = 0, wid = 0, zero = 0, one = 0, three = 0, wg = 0, last = 0, steps = 0,
                 two = 0, nn = 0, blk = 0;
  B(poot_kir_builtin_get(bl, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  B(poot_kir_builtin_get(bl, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wid));
  B(poot_kir_const_u32(bl, 0, &zero));
  B(poot_kir_const_u32(bl, 1, &one));
  B(poot_kir_const_u32(bl, 3, &three));
  B(poot_kir_const_u32(bl, BS_WG, &wg));
  B(poot_kir_const_u32(bl, BS_N - 1, &last));
  B(poot_kir_const_u32(bl, BS_N / BS_WG, &steps));
  B(poot_kir_const_u32(bl, BS_N, &nn));
  B(poot_kir_const_f32(bl, 2.0f, &two));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, wid, nn, &blk));
  poot_kir_value small = 0, t1 = 0, t2 = 0;
  B(poot_kir_binary(bl, POOT_KIR_OP_LT, lid, three, &small));
  B(poot_kir_if_begin(bl, small));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, lid, one, &t1));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, t1, wid, &t2));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, bs, lid, t2));
  B(poot_kir_end(bl));
  poot_kir_value j = 0, idx = 0, rev = 0, v = 0, v2 = 0, base = 0, g = 0;
  B(poot_kir_for_begin(bl, zero, steps, one, &j));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, j, wg, &base));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, base, lid, &idx));
  B(poot_kir_binary(bl, POOT_KIR_OP_SUB, last, idx, &rev));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, blk, idx, &g));
  B(poot_kir_load(bl, POOT_KIR_SPACE_GLOBAL, in, g, 1, &v));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, a, idx, v));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, v, two, &v2));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, c, rev, v2));
  B(poot_kir_end(bl));
  B(poot_kir_barrier(bl));
  poot_kir_value j2 = 0, base2 = 0, idx2 = 0, rev2 = 0, x = 0, y = 0, m = 0, bw = 0, bf = 0, s1 = 0,
                 s2 = 0, g2 = 0;
  B(poot_kir_for_begin(bl, zero, steps, one, &j2));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, j2, wg, &base2));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, base2, lid, &idx2));
  B(poot_kir_binary(bl, POOT_KIR_OP_SUB, last, idx2, &rev2));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, a, rev2, 1, &x));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, c, idx2, 1, &y));
  B(poot_kir_binary(bl, POOT_KIR_OP_REM, idx2, three, &m));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, bs, m, 1, &bw));
  B(poot_kir_convert(bl, POOT_KIR_F32, bw, &bf));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, x, y, &s1));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, s1, bf, &s2));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, blk, idx2, &g2));
  B(poot_kir_store(bl, POOT_KIR_SPACE_GLOBAL, o, g2, s2));
  B(poot_kir_end(bl));
  return finish(bl, st, out);
}

/* The 96 KiB kernel gives its exact values (the sums of two values and a
 * small integer are exact in f32 here) replayed from a CUDA graph, from an
 * eager recording and submitted alone: the renderer's window offsets, the
 * attribute set at creation and every launch's sharedMemBytes. */
static int test_big_shared(void) {
  enum { WGS = 4, N = WGS * BS_N };
  const poot_device_caps *caps = poot_device_caps_get(g_dev);
  poot_kir_kernel *kir = NULL;
  OK(build_big_shared(&kir));
  EXPECT(poot_kir_ptx_dynamic_shared_bytes(kir) == 98320);
  if (caps->target.shared_memory_optin_bytes < 98320) {
    printf("SKIP: big_shared: %s allows %u bytes of shared memory per block\n", caps->name,
           caps->target.shared_memory_optin_bytes);
    poot_kir_kernel_destroy(kir);
    return 0;
  }
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  float *x = malloc(N * 4), *got = malloc(N * 4);
  EXPECT(x && got);
  for (uint32_t i = 0; i < N; i++) x[i] = (float)((i * 37u) % 1000u) * 0.25f - 100.0f;
  poot_device_buffer *bin = NULL, *bout = NULL;
  OK(poot_device_buffer_create(g_dev, LOCAL, N * 4, &bin));
  OK(poot_device_buffer_create(g_dev, LOCAL, N * 4, &bout));
  OK(poot_device_upload(bin, 0, x, N * 4));
  poot_device_buffer *args[] = {bin, bout};
  poot_device_cmd cmd = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .grid = {WGS, 1, 1}, .buffers = args};
  for (int mode = 0; mode < 3; mode++) {
    memset(got, 0, N * 4);
    OK(poot_device_upload(bout, 0, got, N * 4));
    if (mode == 2) {
      OK(poot_device_submit_one(g_dev, &cmd, NULL));
    } else {
      poot_ptx_device_set_eager(g_dev, mode == 1);
      poot_device_recording *rec = NULL;
      OK(poot_device_record(g_dev, &cmd, 1, NULL, &rec));
      OK(poot_device_replay(rec));
      OK(poot_device_synchronize(g_dev, NULL));
      poot_device_recording_destroy(rec);
      poot_ptx_device_set_eager(g_dev, false);
    }
    OK(poot_device_download(bout, 0, got, N * 4));
    for (uint32_t w = 0; w < WGS; w++)
      for (uint32_t i = 0; i < BS_N; i++) {
        float want = 3.0f * x[w * BS_N + BS_N - 1 - i] + (float)(i % 3 + 1 + w);
        if (got[w * BS_N + i] != want)
          FAILF("big_shared mode %d: out[%u] = %g, want %g", mode, w * BS_N + i,
                (double)got[w * BS_N + i], (double)want);
      }
  }
  printf("big_shared: a 98,320-byte dynamic window, exact in graph, eager and one-by-one\n");
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  free(x);
  free(got);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* Not asserted: host time per tiny kernel, launched eagerly or in a graph. */
static int test_launch_benchmark(void) {
  enum { N = 2000, REPS = 5 };
  poot_kir_kernel *kir = NULL;
  OK(build_tiny(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  poot_device_buffer *x = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, 32 * 4, &x));
  poot_device_buffer *args[] = {x};
  poot_device_cmd *cmds = calloc(N, sizeof *cmds);
  for (int i = 0; i < N; i++)
    cmds[i] = (poot_device_cmd){
        .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .grid = {1, 1, 1}, .buffers = args};
  double best[2] = {1e30, 1e30}, capture_us = 0, device_us[2] = {0, 0};
  for (int mode = 0; mode < 2; mode++) {
    poot_ptx_device_set_eager(g_dev, mode == 1);
    uint64_t t0 = poot_time_ns();
    poot_device_recording *rec = NULL;
    OK(poot_device_record(g_dev, cmds, N, NULL, &rec));
    if (mode == 0) capture_us = (double)(poot_time_ns() - t0) * 1e-3;
    for (int r = 0; r < REPS; r++) {
      uint64_t s = poot_time_ns(), dns = 0;
      OK(poot_device_replay(rec));
      OK(poot_device_synchronize(g_dev, &dns));
      double us = (double)(poot_time_ns() - s) * 1e-3 / N;
      if (us < best[mode]) {
        best[mode] = us;
        device_us[mode] = (double)dns * 1e-3 / N;
      }
    }
    poot_device_recording_destroy(rec);
  }
  poot_ptx_device_set_eager(g_dev, false);
  /* Every dispatch ran: 2 modes x REPS replays x N increments. */
  uint32_t v[32];
  OK(poot_device_download(x, 0, v, sizeof v));
  for (int i = 0; i < 32; i++) EXPECT((v[i]) == (2u * REPS * N));
  /* One submission per kernel (record + replay + wait each). */
  enum { ONE = 200 };
  uint64_t s = poot_time_ns();
  for (int i = 0; i < ONE; i++) OK(poot_device_submit_one(g_dev, &cmds[0], NULL));
  double one_us = (double)(poot_time_ns() - s) * 1e-3 / ONE;
  printf(
      "BENCH ptx launch: %d tiny kernels: eager %.2f us/kernel (device %.2f), "
      "CUDA graph %.2f us/kernel (device %.2f); capture+instantiate %.0f us; "
      "one-by-one submit+wait %.2f us/kernel\n",
      N, best[1], device_us[1], best[0], device_us[0], capture_us, one_us);
  /* The cost of reading a slot scalar from pinned host memory (SLOT) against
   * device memory (LOCAL), in a graph of N kernels that each read it. */
  poot_kir_kernel *kir2 = NULL;
  OK(build_tiny_slot(&kir2));
  poot_device_kernel *k2 = NULL;
  OK(poot_device_kernel_get(g_dev, kir2, &k2));
  /* 0: SLOT read in place, 1: LOCAL, 2: SLOT through its device mirror. */
  double slot_us[3] = {1e30, 1e30, 1e30};
  for (int kind = 0; kind < 3; kind++) {
    poot_ptx_device_set_slot_mirror(g_dev, kind == 2);
    poot_device_buffer *sb = NULL;
    OK(poot_device_buffer_create(g_dev, kind == 1 ? LOCAL : SLOT, 64, &sb));
    uint32_t one = 1;
    OK(poot_device_upload(sb, 0, &one, 4));
    poot_device_buffer *args2[] = {x, sb};
    for (int i = 0; i < N; i++) {
      cmds[i].kernel = k2;
      cmds[i].buffers = args2;
    }
    poot_device_recording *rec = NULL;
    OK(poot_device_record(g_dev, cmds, N, NULL, &rec));
    for (int r = 0; r < REPS; r++) {
      uint64_t dns = 0;
      OK(poot_device_replay(rec));
      OK(poot_device_synchronize(g_dev, &dns));
      double us = (double)dns * 1e-3 / N;
      if (us < slot_us[kind]) slot_us[kind] = us;
    }
    poot_device_recording_destroy(rec);
    poot_device_buffer_destroy(sb);
  }
  OK(poot_device_download(x, 0, v, sizeof v));
  poot_ptx_device_set_slot_mirror(g_dev, false);
  for (int i = 0; i < 32; i++) EXPECT(v[i] == 5u * REPS * N + ONE);
  printf(
      "BENCH ptx slot read: a graph of %d kernels that each read a slot scalar: from pinned "
      "host memory %.2f us/kernel, from device memory %.2f us/kernel, from a SLOT buffer's "
      "device mirror %.2f us/kernel (device time)\n",
      N, slot_us[0], slot_us[1], slot_us[2]);
  poot_kir_kernel_destroy(kir2);
  free(cmds);
  poot_device_buffer_destroy(x);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* ------------------------------------------------------------ fault mode */

static int test_kernel_fault(void) {
  poot_kir_kernel *kir = NULL;
  OK(build_gather_checked(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  EXPECT(k->has_checks);
  enum { VOCAB = 1000 };
  float table[VOCAB];
  for (int i = 0; i < VOCAB; i++) table[i] = (float)i * 0.5f;
  poot_device_buffer *bt = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, sizeof table, &bt));
  poot_device_buffer *ids = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 32 * 4, &ids));
  poot_device_buffer *out = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, 32 * 4, &out));
  OK(poot_device_upload(bt, 0, table, sizeof table));
  uint32_t n = VOCAB;
  poot_device_buffer *args[] = {bt, ids, out};
  poot_device_cmd cmds[2] = {
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .grid = {1, 1, 1},
       .buffers = args,
       .push = &n,
       .label = "token embedding gather"},
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .grid = {1, 1, 1},
       .buffers = args,
       .push = &n,
       .label = "again"},
  };
  poot_device_recording *rec = NULL;
  OK(poot_device_record(g_dev, cmds, 2, NULL, &rec));
  uint32_t *slot = poot_device_buffer_host(ids);
  for (int i = 0; i < 32; i++) slot[i] = (uint32_t)(i * 31);
  OK(poot_device_replay(rec));
  OK(poot_device_synchronize(g_dev, NULL));
  float got[32];
  OK(poot_device_download(out, 0, got, sizeof got));
  for (int i = 0; i < 32; i++) EXPECT(got[i] == (float)(i * 31) * 0.5f);
  /* A token id past the vocabulary: the check traps. */
  slot[5] = VOCAB + 3;
  OK(poot_device_replay(rec));
  poot_status st = poot_device_synchronize(g_dev, NULL);
  printf("fault: %s: %s\n", poot_status_code_name(poot_status_code_of(st)),
         poot_status_message(st));
  EXPECT((poot_status_code_of(st)) == (POOT_KERNEL_FAULT));
  EXPECT(strstr(poot_status_message(st), "kernel 'gather_checked'"));
  EXPECT(strstr(poot_status_message(st), "trap code 7"));
  EXPECT(strstr(poot_status_message(st), "token embedding gather"));
  poot_status_free(st);
  EXPECT(poot_device_is_poisoned(g_dev));
  /* Every later call is refused without touching the driver. */
  EXPECT_CODE(poot_device_replay(rec), POOT_POISONED, "gather_checked");
  EXPECT_CODE(poot_device_download(out, 0, got, sizeof got), POOT_POISONED, NULL);
  EXPECT_CODE(poot_device_synchronize(g_dev, NULL), POOT_POISONED, NULL);
  poot_device_buffer *nb = NULL;
  EXPECT_CODE(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, 64, &nb), POOT_POISONED,
              NULL);
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bt);
  poot_device_buffer_destroy(ids);
  poot_device_buffer_destroy(out);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* After the poisoned device is destroyed (its primary context reset), a new
 * device on the same GPU either works or is refused as DEVICE_LOST saying
 * that a new process is needed (CUDA keeps a trap's sticky error for the
 * process); it never crashes or hangs. */
static int test_new_device_after_fault(void) {
  poot_device_destroy(g_dev);
  g_dev = NULL;
  poot_status st = poot_ptx_device_create(NULL, &g_dev);
  if (st) {
    printf("a new device in the same process after the trap: %s: %s\n",
           poot_status_code_name(poot_status_code_of(st)), poot_status_message(st));
    EXPECT(poot_status_code_of(st) == POOT_DEVICE_LOST);
    EXPECT(strstr(poot_status_message(st), "new process") != NULL);
    poot_status_free(st);
    EXPECT(g_dev == NULL);
    return 0;
  }
  poot_kir_kernel *kir = NULL;
  OK(build_tiny(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  poot_device_buffer *x = NULL;
  OK(poot_device_buffer_create(g_dev, LOCAL, 32 * 4, &x));
  poot_device_buffer *args[] = {x};
  poot_device_cmd cmd = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .grid = {1, 1, 1}, .buffers = args};
  for (int i = 0; i < 3; i++) OK(poot_device_submit_one(g_dev, &cmd, NULL));
  uint32_t v[32];
  OK(poot_device_download(x, 0, v, sizeof v));
  for (int i = 0; i < 32; i++) EXPECT(v[i] == 3);
  printf("a new device after the fault works (the primary context was reset)\n");
  poot_device_buffer_destroy(x);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* ---------------------------------------------------------- timeout mode */

static int test_timeout(void) {
  poot_kir_kernel *kir = NULL;
  OK(build_spin(&kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  poot_device_buffer *counter = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, 64, &counter));
  poot_device_buffer *slots = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 64, &slots));
  poot_device_buffer *args[] = {counter, slots};
  poot_device_cmd cmd = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .grid = {1, 1, 1}, .buffers = args};
  /* With step 1 the loop runs once per thread: it finishes. */
  ((uint32_t *)poot_device_buffer_host(slots))[0] = 1;
  OK(poot_device_submit_one(g_dev, &cmd, NULL));
  uint32_t c = 0;
  OK(poot_device_download(counter, 0, &c, 4));
  EXPECT((c) == (32));
  /* With step 0 it never ends. */
  ((uint32_t *)poot_device_buffer_host(slots))[0] = 0;
  poot_device_set_timeout(g_dev, 2000000000ull);
  poot_device_recording *rec = NULL;
  OK(poot_device_record(g_dev, &cmd, 1, NULL, &rec));
  OK(poot_device_replay(rec));
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_device_synchronize(g_dev, NULL);
  double secs = (double)(poot_time_ns() - t0) * 1e-9;
  printf("timeout: %s after %.3f s: %s\n", poot_status_code_name(poot_status_code_of(st)), secs,
         poot_status_message(st));
  EXPECT((poot_status_code_of(st)) == (POOT_TIMEOUT));
  poot_status_free(st);
  EXPECT(secs >= 1.99 && secs < 4.0);
  EXPECT(poot_device_is_poisoned(g_dev));
  EXPECT_CODE(poot_device_synchronize(g_dev, NULL), POOT_POISONED, NULL);
  EXPECT_CODE(poot_device_download(counter, 0, &c, 4), POOT_POISONED, NULL);
  EXPECT_CODE(poot_device_replay(rec), POOT_POISONED, NULL);
  /* Destroying leaks what the running kernel may use; the process lives on. */
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(counter);
  poot_device_buffer_destroy(slots);
  poot_device_destroy(g_dev);
  g_dev = NULL;
  poot_kir_kernel_destroy(kir);
  printf("the process is alive after the timeout\n");
  return 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "basic";
  poot_ptx_options o;
  poot_ptx_options_init(&o);
  poot_status st = poot_ptx_device_create(&o, &g_dev);
  if (poot_status_code_of(st) == POOT_NO_DEVICE || poot_status_code_of(st) == POOT_UNSUPPORTED) {
    printf("SKIP: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 77;
  }
  if (st) {
    fprintf(stderr, "FAIL: creating the PTX device: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  typedef struct named_test {
    const char *name;
    int (*fn)(void);
  } named_test;
  static const named_test basic[] = {
      {"caps", test_caps},
      {"buffers_round_trip", test_buffers_round_trip},
      {"replay_follows_slots", test_replay_follows_slots},
      {"replay_follows_slots_mirror", test_replay_follows_slots_mirror},
      {"replay_matches_eager", test_replay_matches_eager},
      {"big_shared", test_big_shared},
      {"launch_benchmark", test_launch_benchmark},
      {NULL, NULL},
  };
  static const named_test fault[] = {
      {"kernel_fault", test_kernel_fault},
      {"new_device_after_fault", test_new_device_after_fault},
      {NULL, NULL},
  };
  static const named_test timeout[] = {{"timeout", test_timeout}, {NULL, NULL}};
  const named_test *tests = strcmp(mode, "fault") == 0     ? fault
                            : strcmp(mode, "timeout") == 0 ? timeout
                                                           : basic;
  int passed = 0, failed = 0;
  for (const named_test *t = tests; t->name; t++) {
    /* A failed fault test leaves a poisoned device behind: stop there. */
    if (failed && tests != basic) break;
    int r = t->fn();
    printf("%s: ptx_device %s %s\n", r ? "FAIL" : "ok", mode, t->name);
    if (r)
      failed++;
    else
      passed++;
  }
  printf("ptx_device %s: %d passed, %d failed\n", mode, passed, failed);
  poot_device_destroy(g_dev);
  return failed ? 1 : 0;
}
