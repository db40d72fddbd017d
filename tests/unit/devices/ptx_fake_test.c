/* ptx_device_fake — the PTX device's host-side logic against a fake
 * libcuda.so.1 (ptx_fake_cuda.c, found through LD_LIBRARY_PATH): kernel
 * arguments in the renderer's order, graph capture and replay, eager
 * recordings, copies, the JIT error log in the status, the fault record
 * turned into KERNEL_FAULT, sticky errors, timeouts and the POISONED rule,
 * the PTX dump for bench/ptx_compile_time.py, and, under ASan, that none of
 * it leaks. Built only where the CUDA headers are; it needs no GPU. The GPU
 * tests are ptx_device*. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/kir.h"
#include "ptx_device.h"

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
#define EXPECT_CODE(expr, code, needle)                                                            \
  do {                                                                                             \
    poot_status ex_s_ = (expr);                                                                    \
    poot_status_code ex_c_ = poot_status_code_of(ex_s_);                                           \
    char ex_m_[1024];                                                                              \
    snprintf(ex_m_, sizeof ex_m_, "%s", poot_status_message(ex_s_));                               \
    poot_status_free(ex_s_);                                                                       \
    if (ex_c_ != (code))                                                                           \
      FAILF("%s returned %s (%s), expected %s", #expr, poot_status_code_name(ex_c_), ex_m_,        \
            poot_status_code_name(code));                                                          \
    if (!strstr(ex_m_, (needle))) FAILF("%s: '%s' does not mention '%s'", #expr, ex_m_, (needle)); \
  } while (0)

#define B(expr)           \
  do {                    \
    if (!st) st = (expr); \
  } while (0)

static void (*fake_reset)(void);

/* A kernel named `name` with the given bindings (u32), PUSH params and,
 * when `checked`, a check (so the fault record is its last argument). The
 * fake recognizes it by name; the body only has to be valid KIR. */
static poot_status build_shared(const char *name, uint32_t bindings, uint32_t push, bool checked,
                                uint32_t shared_words, poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {name, {32, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  uint32_t sref = 0;
  if (shared_words) B(poot_kir_add_shared(b, "tile", POOT_KIR_U32, shared_words, &sref));
  static const char *const names[] = {"b0", "b1", "b2", "b3"};
  for (uint32_t i = 0; i < bindings; i++) {
    poot_kir_binding bd = {names[i], i, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
    uint32_t ref = 0;
    B(poot_kir_add_binding(b, &bd, &ref));
  }
  for (uint32_t i = 0; i < push; i++) {
    poot_kir_param p = {i ? "q" : "p", POOT_KIR_U32, POOT_KIR_PARAM_PUSH, 0, 0};
    uint32_t idx = 0;
    B(poot_kir_add_param(b, &p, &idx));
  }
  poot_kir_value lid = 0, v = 0, c = 0, ok = 0;
  B(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  B(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, 0, lid, 1, &v));
  if (checked) {
    B(poot_kir_const_u32(b, 100, &c));
    B(poot_kir_binary(b, POOT_KIR_OP_LT, v, c, &ok));
    B(poot_kir_check(b, ok, 5));
  }
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, bindings - 1, lid, v));
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  return poot_kir_builder_finish(b, out);
}

static poot_status build(const char *name, uint32_t bindings, uint32_t push, bool checked,
                         poot_kir_kernel **out) {
  return build_shared(name, bindings, push, checked, 0, out);
}

static poot_device *g_dev;

static int test_buffers_and_replay(bool mirror) {
  poot_ptx_device_set_slot_mirror(g_dev, mirror);
  const poot_device_caps *caps = poot_device_caps_get(g_dev);
  EXPECT(strcmp(caps->backend, "ptx") == 0);
  EXPECT(strcmp(caps->name, "poot fake GPU") == 0);
  EXPECT(caps->target.sm_version == 90);
  enum { N = 256 };
  uint32_t src[N], got[N];
  for (uint32_t i = 0; i < N; i++) src[i] = i * 7u;
  poot_device_buffer *a = NULL, *o1 = NULL, *o2 = NULL, *slots = NULL, *res = NULL, *sout = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, N * 4, &sout));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &a));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o1));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o2));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 16, &slots));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 16, &res));
  OK(poot_device_download(a, 0, got, sizeof got));
  for (uint32_t i = 0; i < N; i++) EXPECT(got[i] == 0);
  OK(poot_device_upload(a, 0, src, sizeof src));
  OK(poot_device_download(a, 0, got, sizeof got));
  EXPECT(memcmp(src, got, sizeof src) == 0);
  poot_kir_kernel *kir = NULL;
  OK(build("fk_add", 3, 1, false, &kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  uint32_t n = N;
  /* The third dispatch writes a SLOT buffer: with mirrors, the host sees it
   * only through the write-back at the end of the replay. */
  poot_device_buffer *args1[] = {a, o1, slots}, *args2[] = {o1, o2, slots},
                     *args3[] = {o2, sout, slots};
  poot_device_cmd cmds[4] = {
      {.kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args1, .push = &n},
      {.kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args2, .push = &n},
      {.kind = POOT_DEVICE_CMD_COPY, .src = o2, .dst = res, .src_offset = 40, .size = 16},
      {.kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args3, .push = &n},
  };
  const uint32_t *sout_host = poot_device_buffer_host(sout);
  uint32_t *slot = poot_device_buffer_host(slots);
  const uint32_t *out = poot_device_buffer_host(res);
  for (int eager = 0; eager < 2; eager++) {
    poot_ptx_device_set_eager(g_dev, eager);
    poot_device_recording *rec = NULL;
    OK(poot_device_record(g_dev, cmds, 4, NULL, &rec));
    EXPECT(rec->command_count == 4 && rec->dispatch_count == 3);
    for (uint32_t step = 1; step <= 5; step++) {
      slot[0] = step * 1000u;
      OK(poot_device_replay(rec));
      uint64_t ns = 0;
      OK(poot_device_synchronize(g_dev, &ns));
      EXPECT(ns == 4000); /* the fake's events say 4 us */
      for (uint32_t i = 0; i < 4; i++) EXPECT(out[i] == src[10 + i] + 2 * step * 1000u);
      for (uint32_t i = 0; i < N; i++) EXPECT(sout_host[i] == src[i] + 3 * step * 1000u);
    }
    poot_device_recording_destroy(rec);
  }
  OK(poot_device_submit_one(g_dev, &cmds[0], NULL));
  OK(poot_device_download(o1, 0, got, sizeof got));
  for (uint32_t i = 0; i < N; i++) EXPECT(got[i] == src[i] + 5000u);
  poot_device_buffer *all[] = {a, o1, o2, slots, res, sout};
  for (int i = 0; i < 6; i++) poot_device_buffer_destroy(all[i]);
  poot_ptx_device_set_slot_mirror(g_dev, false);
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* Two recordings chained (poot_device_replay_chained): the second is
 * submitted while the first is pending, its slot written in between, one
 * synchronize waits for both and times the chain; a third chained replay
 * while two are pending waits for them first; a chained replay with
 * nothing pending is a plain one. */
static int test_chain(void) {
  EXPECT(poot_device_caps_get(g_dev)->chains_replays);
  enum { N = 64 };
  uint32_t src[N], got[N];
  for (uint32_t i = 0; i < N; i++) src[i] = 3u * i + 1u;
  poot_device_buffer *a = NULL, *o1 = NULL, *o2 = NULL, *s1 = NULL, *s2 = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &a));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o1));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o2));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 16, &s1));
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_SLOT, 16, &s2));
  OK(poot_device_upload(a, 0, src, sizeof src));
  poot_kir_kernel *kir = NULL;
  OK(build("fk_add", 3, 1, false, &kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  uint32_t n = N;
  poot_device_buffer *args1[] = {a, o1, s1}, *args2[] = {o1, o2, s2};
  poot_device_cmd c1 = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args1, .push = &n};
  poot_device_cmd c2 = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args2, .push = &n};
  uint32_t *h1 = poot_device_buffer_host(s1), *h2 = poot_device_buffer_host(s2);
  poot_device_recording *r1 = NULL, *r2 = NULL;
  OK(poot_device_record(g_dev, &c1, 1, NULL, &r1));
  OK(poot_device_record(g_dev, &c2, 1, NULL, &r2));
  for (uint32_t step = 1; step <= 3; step++) {
    h1[0] = step;
    h2[0] = 0xdead;
    OK(poot_device_replay(r1));
    h2[0] = 100u * step; /* while r1 is pending: r2 reads it */
    OK(poot_device_replay_chained(r2));
    EXPECT(g_dev->pending == r2 && g_dev->pending_first == r1);
    EXPECT_CODE(poot_device_download(o2, 0, got, sizeof got), POOT_INVALID_ARGUMENT, "pending");
    uint64_t ns = 0;
    OK(poot_device_synchronize(g_dev, &ns));
    EXPECT(ns == 4000 && !g_dev->pending && !g_dev->pending_first);
    OK(poot_device_download(o2, 0, got, sizeof got));
    for (uint32_t i = 0; i < N; i++) EXPECT(got[i] == src[i] + 101u * step);
  }
  /* a third behind two: they are waited for, then it runs alone */
  OK(poot_device_replay(r1));
  OK(poot_device_replay_chained(r2));
  OK(poot_device_replay_chained(r1));
  EXPECT(g_dev->pending == r1 && !g_dev->pending_first);
  OK(poot_device_synchronize(g_dev, NULL));
  /* nothing pending: a plain replay */
  OK(poot_device_replay_chained(r2));
  EXPECT(g_dev->pending == r2 && !g_dev->pending_first);
  OK(poot_device_synchronize(g_dev, NULL));
  poot_device_recording_destroy(r1);
  poot_device_recording_destroy(r2);
  poot_device_buffer *all[] = {a, o1, o2, s1, s2};
  for (int i = 0; i < 5; i++) poot_device_buffer_destroy(all[i]);
  poot_kir_kernel_destroy(kir);
  return 0;
}

static int test_jit_error(void) {
  poot_kir_kernel *kir = NULL;
  OK(build("fk_jit_error", 1, 0, false, &kir));
  poot_device_kernel *k = NULL;
  EXPECT_CODE(poot_device_kernel_get(g_dev, kir, &k), POOT_FORMAT, "fake syntax error");
  EXPECT(!poot_device_is_poisoned(g_dev));
  poot_kir_kernel_destroy(kir);
  return 0;
}

/* POOT_FAKECUDA_PTX_DIR (bench/ptx_compile_time.py): each module the device
 * loads is written there as the driver got it, one file a module, and a
 * cache hit writes none; a kernel name of 79 bytes loads. */
static int test_ptx_dump(void) {
  char dir[] = "/tmp/poot-fakecuda-XXXXXX";
  if (!mkdtemp(dir)) FAILF("mkdtemp failed");
  setenv("POOT_FAKECUDA_PTX_DIR", dir, 1);
  char name[80];
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  memcpy(name, "fk_long_", 8);
  poot_kir_kernel *kir[2] = {0};
  poot_device_kernel *k = NULL;
  int rc = 0;
  OK(build("fk_add", 3, 2, false, &kir[0]));
  OK(build(name, 1, 0, false, &kir[1]));
  for (int i = 0; i < 2 && !rc; i++) {
    poot_status st = poot_device_kernel_get(g_dev, kir[i], &k);
    if (!st) st = poot_device_kernel_get(g_dev, kir[i], &k); /* a hit: nothing written */
    if (st) {
      printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, poot_status_message(st));
      poot_status_free(st);
      rc = 1;
    }
  }
  unsetenv("POOT_FAKECUDA_PTX_DIR");
  int files = 0, add = 0, longn = 0;
  DIR *dh = opendir(dir);
  struct dirent *de;
  while (dh && (de = readdir(dh))) {
    if (de->d_name[0] == '.') continue;
    char path[512], head[64] = {0};
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f) fclose(f);
    files++;
    if (n > 0 && strncmp(head, "//\n// Generated by poot", 23) == 0) {
      if (strstr(de->d_name, "_fk_add.ptx")) add++;
      if (strstr(de->d_name, name)) longn++;
    }
    unlink(path);
  }
  if (dh) closedir(dh);
  rmdir(dir);
  poot_kir_kernel_destroy(kir[0]);
  poot_kir_kernel_destroy(kir[1]);
  if (rc) return rc;
  EXPECT(files == 2);
  EXPECT(add == 1);
  EXPECT(longn == 1);
  return 0;
}

/* kernels_prepare on four threads: the distinct kernels are compiled once
 * (the duplicate shares its twin's), later gets are cache hits, and a
 * batch with a kernel the JIT refuses keeps none of it: the status is the
 * JIT's, the device stays usable and a later get compiles the good ones. */
static int test_prepare_threads(void) {
  poot_ptx_options o;
  poot_ptx_options_init(&o);
  o.timeout_ns = 50000000;
  o.compile_threads = 4;
  poot_device *d = NULL;
  OK(poot_ptx_device_create(&o, &d));
  enum { N = 6, M = 4 };
  poot_kir_kernel *kir[N] = {0}, *bad[M] = {0};
  const uint32_t binds[N] = {2, 3, 4, 2, 3, 2}, pushes[N] = {0, 1, 2, 1, 0, 0};
  const bool checks[N] = {false, false, false, true, true, false};
  for (int i = 0; i < N; i++) OK(build("fk_add", binds[i], pushes[i], checks[i], &kir[i]));
  uint32_t before = d->kernels_created;
  OK(poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)kir, N));
  EXPECT(d->kernels_created - before == N - 1);
  poot_device_kernel *k[N];
  for (int i = 0; i < N; i++) OK(poot_device_kernel_get(d, kir[i], &k[i]));
  EXPECT(d->kernels_created - before == N - 1);
  EXPECT(k[0] == k[5]);
  for (int i = 0; i < N - 1; i++)
    for (int j = i + 1; j < N - 1; j++) EXPECT(k[i] != k[j]);
  for (int i = 0; i < M - 1; i++) OK(build("fk_add", 4, (uint32_t)i % 2, i > 0, &bad[i]));
  OK(build("fk_jit_error", 1, 0, false, &bad[M - 1]));
  before = d->kernels_created;
  EXPECT_CODE(poot_device_kernels_prepare(d, (const poot_kir_kernel *const *)bad, M), POOT_FORMAT,
              "fake syntax error");
  EXPECT(d->kernels_created == before);
  EXPECT(!poot_device_is_poisoned(d));
  poot_device_kernel *again = NULL;
  OK(poot_device_kernel_get(d, bad[1], &again));
  EXPECT(d->kernels_created == before + 1);
  for (int i = 0; i < N; i++) poot_kir_kernel_destroy(kir[i]);
  for (int i = 0; i < M; i++) poot_kir_kernel_destroy(bad[i]);
  poot_device_destroy(d);
  return 0;
}

static void (*fake_shared_log)(unsigned *attr_calls, int *attr_bytes, unsigned *runs,
                               unsigned *run_shared, int *run_ex);

/* Dynamic shared memory on device d (launching through cuLaunchKernelEx
 * when ex, else cuLaunchKernel): a kernel whose shared window is 65,552
 * bytes gets cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, 65,552) once,
 * at creation, and every launch of it passes those bytes, eagerly and from
 * a captured graph; one of exactly 48 KiB sets nothing and launches with 0;
 * the driver's refusal is UNSUPPORTED naming the kernel and the bytes (the
 * device usable after it); a window over the device's opt-in maximum is
 * UNSUPPORTED at creation. */
static int big_shared_case(poot_device *d, int ex) {
  EXPECT(poot_device_caps_get(d)->target.shared_memory_optin_bytes == 232448);
  EXPECT(poot_device_caps_get(d)->target.grid_dependency == (ex != 0));
  enum { N = 64 };
  unsigned calls0 = 0, calls = 0, runs0 = 0, runs = 0, run_shared = 0;
  int bytes = 0, run_ex = 0;
  fake_shared_log(&calls0, &bytes, &runs0, &run_shared, &run_ex);
  poot_kir_kernel *big = NULL, *edge = NULL, *refused = NULL, *huge = NULL;
  OK(build_shared("fk_add", 3, 1, false, 16388, &big));  /* 65,552 bytes */
  OK(build_shared("fk_add", 3, 1, false, 12288, &edge)); /* 49,152: static */
  OK(build_shared("fk_refuse_shared", 1, 0, false, 16388, &refused));
  OK(build_shared("fk_add", 1, 0, false, 58113, &huge)); /* 232,452 bytes */
  EXPECT(poot_kir_ptx_dynamic_shared_bytes(big) == 65552);
  EXPECT(poot_kir_ptx_dynamic_shared_bytes(edge) == 0);
  poot_device_kernel *kb = NULL, *ke = NULL, *k = NULL;
  OK(poot_device_kernel_get(d, big, &kb));
  fake_shared_log(&calls, &bytes, &runs, &run_shared, &run_ex);
  EXPECT(calls == calls0 + 1 && bytes == 65552);
  OK(poot_device_kernel_get(d, edge, &ke));
  fake_shared_log(&calls, &bytes, &runs, &run_shared, &run_ex);
  EXPECT(calls == calls0 + 1);
  EXPECT_CODE(poot_device_kernel_get(d, refused, &k), POOT_UNSUPPORTED,
              "refused kernel 'fk_refuse_shared' 65552 bytes of dynamic shared memory");
  EXPECT(!poot_device_is_poisoned(d));
  EXPECT_CODE(poot_device_kernel_get(d, huge, &k), POOT_UNSUPPORTED,
              "exceeds the target's 232448 bytes per workgroup, opt-in included");
  uint32_t src[N], got[N], n = N;
  for (uint32_t i = 0; i < N; i++) src[i] = 5u * i + 3u;
  poot_device_buffer *a = NULL, *o = NULL, *o2 = NULL, *slots = NULL;
  OK(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_LOCAL, N * 4, &a));
  OK(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o));
  OK(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_LOCAL, N * 4, &o2));
  OK(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_SLOT, 16, &slots));
  OK(poot_device_upload(a, 0, src, sizeof src));
  uint32_t *slot = poot_device_buffer_host(slots);
  poot_device_buffer *args[] = {a, o, slots}, *args2[] = {o, o2, slots};
  poot_device_cmd cb = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = kb, .buffers = args, .push = &n};
  poot_device_cmd ce = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = ke, .buffers = args2, .push = &n};
  for (int eager = 0; eager < 2; eager++) {
    poot_ptx_device_set_eager(d, eager);
    poot_device_recording *rb = NULL, *re = NULL;
    OK(poot_device_record(d, &cb, 1, NULL, &rb));
    OK(poot_device_record(d, &ce, 1, NULL, &re));
    for (uint32_t step = 1; step <= 2; step++) {
      slot[0] = 100u * step + (uint32_t)eager;
      fake_shared_log(&calls, &bytes, &runs0, &run_shared, &run_ex);
      OK(poot_device_replay(rb));
      OK(poot_device_synchronize(d, NULL));
      fake_shared_log(&calls, &bytes, &runs, &run_shared, &run_ex);
      EXPECT(runs == runs0 + 1 && run_shared == 65552 && run_ex == ex);
      OK(poot_device_download(o, 0, got, sizeof got));
      for (uint32_t i = 0; i < N; i++) EXPECT(got[i] == src[i] + slot[0]);
      OK(poot_device_replay(re));
      OK(poot_device_synchronize(d, NULL));
      fake_shared_log(&calls, &bytes, &runs, &run_shared, &run_ex);
      EXPECT(runs == runs0 + 2 && run_shared == 0 && run_ex == ex);
    }
    poot_device_recording_destroy(rb);
    poot_device_recording_destroy(re);
  }
  poot_ptx_device_set_eager(d, false);
  fake_shared_log(&calls, &bytes, &runs, &run_shared, &run_ex);
  EXPECT(calls == calls0 + 1); /* once, at creation */
  poot_device_buffer *all[] = {a, o, o2, slots};
  for (int i = 0; i < 4; i++) poot_device_buffer_destroy(all[i]);
  poot_kir_kernel *kirs[] = {big, edge, refused, huge};
  for (int i = 0; i < 4; i++) poot_kir_kernel_destroy(kirs[i]);
  return 0;
}

/* big_shared_case through cuLaunchKernelEx (g_dev: grid dependency) and,
 * on a device made with POOT_PTX_GRID_DEPENDENCY=0, cuLaunchKernel. */
static int test_big_shared(void) {
  if (big_shared_case(g_dev, 1)) return 1;
  setenv("POOT_PTX_GRID_DEPENDENCY", "0", 1);
  poot_ptx_options o;
  poot_ptx_options_init(&o);
  o.timeout_ns = 50000000;
  poot_device *d = NULL;
  poot_status st = poot_ptx_device_create(&o, &d);
  unsetenv("POOT_PTX_GRID_DEPENDENCY");
  OK(st);
  int rc = big_shared_case(d, 0);
  poot_device_destroy(d);
  return rc;
}

/* A fault scenario: record `name`, replay, expect `code` naming `needle`,
 * then POISONED, then a new device refused until the fake "process" is
 * renewed. */
static int fault_case(const char *name, bool checked, poot_status_code code, const char *needle,
                      const char *needle2, bool chained) {
  poot_kir_kernel *kir = NULL;
  OK(build(name, 1, checked ? 1 : 0, checked, &kir));
  poot_device_kernel *k = NULL;
  OK(poot_device_kernel_get(g_dev, kir, &k));
  poot_device_buffer *buf = NULL;
  OK(poot_device_buffer_create(g_dev, POOT_DEVICE_BUFFER_LOCAL, 128, &buf));
  uint32_t trap = 5;
  poot_device_buffer *args[] = {buf};
  poot_device_cmd cmds[2] = {
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .buffers = args,
       .push = &trap,
       .label = "the faulting step"},
      {.kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .buffers = args, .push = &trap},
  };
  poot_device_recording *rec = NULL, *after = NULL;
  OK(poot_device_record(g_dev, cmds, 2, NULL, &rec));
  OK(poot_device_replay(rec));
  if (chained) {
    /* a replay chained behind the faulting one: the fault names the first */
    poot_kir_kernel *kadd = NULL;
    OK(build("fk_add", 3, 1, false, &kadd));
    poot_device_kernel *ka = NULL;
    OK(poot_device_kernel_get(g_dev, kadd, &ka));
    static uint32_t zero = 0;
    static poot_device_buffer *args3[3];
    args3[0] = args3[1] = args3[2] = buf;
    poot_device_cmd c = {
        .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = ka, .buffers = args3, .push = &zero};
    poot_kir_kernel_destroy(kadd);
    OK(poot_device_record(g_dev, &c, 1, NULL, &after));
    poot_status cs = poot_device_replay_chained(after);
    if (cs && poot_status_code_of(cs) != code) {
      EXPECT_CODE(cs, code, needle);
    }
    poot_status_free(cs);
  }
  poot_status st = poot_device_synchronize(g_dev, NULL);
  printf("%s: %s: %s\n", name, poot_status_code_name(poot_status_code_of(st)),
         poot_status_message(st));
  EXPECT_CODE(st, code, needle);
  if (needle2) {
    /* Re-check the second fragment through the poison reason. */
    EXPECT_CODE(poot_device_synchronize(g_dev, NULL), POOT_POISONED, needle2);
  }
  EXPECT(poot_device_is_poisoned(g_dev));
  EXPECT_CODE(poot_device_replay(rec), POOT_POISONED, "poisoned");
  uint32_t x;
  EXPECT_CODE(poot_device_download(buf, 0, &x, 4), POOT_POISONED, "poisoned");
  poot_device_recording_destroy(rec);
  poot_device_recording_destroy(after);
  poot_device_buffer_destroy(buf);
  poot_kir_kernel_destroy(kir);
  poot_device_destroy(g_dev);
  g_dev = NULL;
  if (code != POOT_TIMEOUT) {
    EXPECT_CODE(poot_ptx_device_create(NULL, &g_dev), POOT_DEVICE_LOST, "new process");
    EXPECT(g_dev == NULL);
  }
  fake_reset();
  poot_ptx_options o;
  poot_ptx_options_init(&o);
  o.timeout_ns = 50000000; /* 50 ms */
  OK(poot_ptx_device_create(&o, &g_dev));
  return 0;
}

int main(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h || !(*(void **)&fake_reset = dlsym(h, "fakecuda_reset")) ||
      !(*(void **)&fake_shared_log = dlsym(h, "fakecuda_shared_log"))) {
    printf("SKIP: the fake libcuda.so.1 is not on LD_LIBRARY_PATH\n");
    return 77;
  }
  poot_ptx_options o;
  poot_ptx_options_init(&o);
  o.timeout_ns = 50000000; /* 50 ms */
  poot_status st = poot_ptx_device_create(&o, &g_dev);
  if (st) {
    printf("FAIL: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  int failed = 0;
  failed += test_buffers_and_replay(false);
  failed += test_buffers_and_replay(true);
  failed += test_jit_error();
  failed += test_prepare_threads();
  failed += test_ptx_dump();
  failed += test_chain();
  failed += test_big_shared();
  failed +=
      fault_case("fk_trap", true, POOT_KERNEL_FAULT, "kernel 'fk_trap'", "trap code 5", false);
  failed += fault_case("fk_trap", true, POOT_KERNEL_FAULT, "dispatch #0 ('the faulting step'), #1",
                       "workgroup (1,0,0) thread 3", false);
  failed += fault_case("fk_trap", true, POOT_KERNEL_FAULT,
                       "dispatch #0 ('the faulting step'), #1 of 2 (the first of two chained",
                       "trap code 5", true);
  failed += fault_case("fk_lost", false, POOT_DEVICE_LOST, "CUDA_ERROR_ILLEGAL_ADDRESS",
                       "cuStreamQuery", false);
  failed += fault_case("fk_hang", false, POOT_TIMEOUT, "did not finish within 0.050 s",
                       "did not finish", true);
  poot_device_destroy(g_dev);
  printf("ptx_device_fake: %s\n", failed ? "FAILED" : "all passed");
  dlclose(h);
  return failed ? 1 : 0;
}
