/* The Vulkan device against the device interface (poot/exec.h §1): buffers,
 * a KIR dispatch, record once / replay many with slot values, replay versus
 * eager submission, the error word as KERNEL_FAULT, an injected device loss,
 * a forced watchdog split and a 2-second TIMEOUT, each followed by POISONED.
 * Runs on whatever device poot_vulkan_device_create picks (lavapipe in CI),
 * with the Khronos validation layer on when it is installed: it must stay
 * silent. Exits 77 without a Vulkan device. */
#include "poot_test.h"

#include <math.h>

#include "poot/devices.h"
#include "poot/exec.h"
#include "vk_kernels.h"

static bool g_force_staging;

static poot_device *open_device(uint32_t watchdog_ms, uint64_t timeout_ns) {
  poot_vulkan_options o;
  poot_vulkan_options_init(&o);
  o.force_staging = g_force_staging;
  o.no_pipeline_cache = true; /* vulkan_cache_test covers it */
  o.validation = true;
  o.watchdog_ms = watchdog_ms;
  o.timeout_ns = timeout_ns;
  poot_device *d = NULL;
  POOT_ASSERT_OK(poot_vulkan_device_create(&o, &d));
  return d;
}

/* The validation layer (when on) must not have said anything. */
static void close_device(poot_device *d) {
  if (poot_vulkan_validation_enabled(d)) assert_int_equal(poot_vulkan_validation_messages(d), 0);
  poot_device_destroy(d);
}

static poot_device_buffer *new_buffer(poot_device *d, poot_device_buffer_kind kind, uint64_t size) {
  poot_device_buffer *b = NULL;
  POOT_ASSERT_OK(poot_device_buffer_create(d, kind, size, &b));
  return b;
}

static void test_buffers(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  const poot_device_caps *caps = poot_device_caps_get(d);
  assert_string_equal(caps->backend, "vulkan");
  assert_int_equal(caps->target.lang, POOT_KIR_LANG_GLSL);
  assert_false(caps->target.has_trap);
  assert_true(caps->target.max_workgroup_size >= 64);
  enum { N = 1000 };
  uint32_t in[N], out[N];
  for (uint32_t i = 0; i < N; i++) in[i] = i * 2654435761u;
  poot_device_buffer *local = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof in);
  poot_device_buffer *slot = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 64);
  assert_null(poot_device_buffer_host(local));
  assert_non_null(poot_device_buffer_host(slot));
  POOT_ASSERT_OK(poot_device_upload(local, 0, in, sizeof in));
  memset(out, 0, sizeof out);
  POOT_ASSERT_OK(poot_device_download(local, 0, out, sizeof out));
  assert_memory_equal(in, out, sizeof in);
  /* A partial write lands exactly where asked. */
  uint32_t patch[3] = {7, 8, 9};
  POOT_ASSERT_OK(poot_device_upload(local, 40, patch, sizeof patch));
  POOT_ASSERT_OK(poot_device_download(local, 36, out, 20));
  assert_int_equal(out[0], in[9]);
  assert_int_equal(out[1], 7);
  assert_int_equal(out[3], 9);
  assert_int_equal(out[4], in[13]);
  /* Out of range is refused before the device sees it. */
  POOT_ASSERT_STATUS(poot_device_upload(local, sizeof in - 4, patch, 8), POOT_INVALID_ARGUMENT);
  /* The slot buffer's address is stable and the device reads it. */
  void *host = poot_device_buffer_host(slot);
  ((uint32_t *)host)[3] = 0xabcdef01u;
  uint32_t w = 0;
  POOT_ASSERT_OK(poot_device_download(slot, 12, &w, 4));
  assert_int_equal(w, 0xabcdef01u);
  assert_ptr_equal(poot_device_buffer_host(slot), host);
  poot_device_buffer_destroy(local);
  poot_device_buffer_destroy(slot);
  close_device(d);
}

static void test_record_replay_slots(void **state);

/* The discrete-GPU path (staging copies for device-local memory), forced on
 * whatever device this is: buffers and a replayed dispatch again. */
static void test_staging(void **state) {
  g_force_staging = true;
  test_buffers(state);
  test_record_replay_slots(state);
  g_force_staging = false;
}

/* An affine dispatch then a copy, recorded once and replayed with a new
 * slot value each time: the results follow the slot. */
static void test_record_replay_slots(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_affine(1, &kir));
  poot_device_kernel *k = NULL, *k2 = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k2));
  assert_ptr_equal(k, k2); /* cached by KIR hash and target */
  assert_int_equal(k->push_count, 1);
  enum { N = 300 };
  uint32_t in[N], out[N];
  for (uint32_t i = 0; i < N; i++) in[i] = i;
  poot_device_buffer *bin = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof in);
  poot_device_buffer *bout = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof out);
  poot_device_buffer *bcopy = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof out);
  poot_device_buffer *slots = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 16);
  POOT_ASSERT_OK(poot_device_upload(bin, 0, in, sizeof in));
  poot_device_buffer *binds[3] = {bin, bout, slots};
  uint32_t push[1] = {N};
  poot_device_cmd cmds[2] = {
      {.kind = POOT_DEVICE_CMD_DISPATCH,
       .kernel = k,
       .grid = {(N + 63) / 64, 1, 1},
       .buffers = binds,
       .push = push,
       .weight_us = 1},
      {.kind = POOT_DEVICE_CMD_COPY, .src = bout, .dst = bcopy, .size = sizeof out, .weight_us = 1},
  };
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, cmds, 2, NULL, &rec));
  assert_int_equal(rec->command_count, 2);
  assert_int_equal(rec->dispatch_count, 1);
  assert_int_equal(rec->stage_count, 1);
  uint32_t *slot_words = poot_device_buffer_host(slots);
  for (uint32_t step = 0; step < 6; step++) {
    slot_words[1] = 1000 * step + 5;
    POOT_ASSERT_OK(poot_device_replay(rec));
    uint64_t device_ns = 0;
    POOT_ASSERT_OK(poot_device_synchronize(d, &device_ns));
    if (poot_device_caps_get(d)->can_time) assert_true(device_ns > 0);
    POOT_ASSERT_OK(poot_device_download(bcopy, 0, out, sizeof out));
    for (uint32_t i = 0; i < N; i++) assert_int_equal(out[i], 3 * i + 1000 * step + 5);
  }
  assert_int_equal(rec->command_count, 2);
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  poot_device_buffer_destroy(bcopy);
  poot_device_buffer_destroy(slots);
  poot_kir_kernel_destroy(kir);
  close_device(d);
}

/* Runs affine kernel k once over in[i] = i with slots {0, 10, 20, 30}:
 * out[i] = 3 i + slots[the kernel's slot index]. Returns out[1]. */
static uint32_t run_affine_once(poot_device *d, poot_device_kernel *k) {
  enum { N = 64 };
  uint32_t in[N], out[N], slot_values[4] = {0, 10, 20, 30};
  for (uint32_t i = 0; i < N; i++) in[i] = i;
  poot_device_buffer *bin = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof in);
  poot_device_buffer *bout = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof out);
  poot_device_buffer *slots = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, sizeof slot_values);
  POOT_ASSERT_OK(poot_device_upload(bin, 0, in, sizeof in));
  memcpy(poot_device_buffer_host(slots), slot_values, sizeof slot_values);
  poot_device_buffer *binds[3] = {bin, bout, slots};
  uint32_t push[1] = {N};
  poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                         .kernel = k,
                         .grid = {1, 1, 1},
                         .buffers = binds,
                         .push = push,
                         .weight_us = 1};
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, &cmd, 1, NULL, &rec));
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  POOT_ASSERT_OK(poot_device_download(bout, 0, out, sizeof out));
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  poot_device_buffer_destroy(slots);
  return out[1];
}

/* Two different kernels forced to the same 128-bit hash (a collision): the
 * kernel cache compares the KIR on a hit, so each gets its own compiled
 * kernel and computes its own result. */
static void test_kernel_cache_collision(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  poot_kir_kernel *k1 = NULL, *k2 = NULL;
  POOT_ASSERT_OK(vkt_build_affine(1, &k1));
  POOT_ASSERT_OK(vkt_build_affine(2, &k2));
  assert_false(poot_kir_kernel_same(k1, k2));
  k2->hash = k1->hash;
  k2->hash128 = k1->hash128;
  poot_device_kernel *d1 = NULL, *d2 = NULL, *again = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, k1, &d1));
  POOT_ASSERT_OK(poot_device_kernel_get(d, k2, &d2));
  assert_true(poot_hash128_equal(d1->key, d2->key));
  assert_ptr_not_equal(d1, d2);
  POOT_ASSERT_OK(poot_device_kernel_get(d, k2, &again));
  assert_ptr_equal(again, d2); /* the second kernel is found past the first */
  POOT_ASSERT_OK(poot_device_kernel_get(d, k1, &again));
  assert_ptr_equal(again, d1);
  assert_int_equal(run_affine_once(d, d1), 3 + 10);
  assert_int_equal(run_affine_once(d, d2), 3 + 20);
  poot_kir_kernel_destroy(k1);
  poot_kir_kernel_destroy(k2);
  close_device(d);
}

/* A chain of float dispatches x0 → x1 → … → x8. */
typedef struct chain {
  poot_device_buffer *x[9];
  poot_device_buffer *slots;
  poot_device_buffer *binds[8][3];
  poot_device_cmd cmds[8];
  uint32_t push[1];
} chain;

enum { CHAIN_N = 257, CHAIN_LEN = 8 };

static void chain_init(poot_device *d, poot_device_kernel *k, chain *c) {
  float x0[CHAIN_N];
  poot_test_fill_random(x0, CHAIN_N, 42, -1.0f, 1.0f);
  for (int i = 0; i <= CHAIN_LEN; i++) {
    c->x[i] = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof x0);
    if (i == 0) POOT_ASSERT_OK(poot_device_upload(c->x[0], 0, x0, sizeof x0));
  }
  c->slots = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 16);
  float s = 0.375f;
  memcpy(poot_device_buffer_host(c->slots), &s, 4);
  c->push[0] = CHAIN_N;
  for (int i = 0; i < CHAIN_LEN; i++) {
    c->binds[i][0] = c->x[i];
    c->binds[i][1] = c->x[i + 1];
    c->binds[i][2] = c->slots;
    c->cmds[i] = (poot_device_cmd){.kind = POOT_DEVICE_CMD_DISPATCH,
                                   .kernel = k,
                                   .grid = {(CHAIN_N + 63) / 64, 1, 1},
                                   .buffers = c->binds[i],
                                   .push = c->push,
                                   .weight_us = 600,
                                   .label = "chain link"};
  }
}

static void chain_deinit(chain *c) {
  for (int i = 0; i <= CHAIN_LEN; i++) poot_device_buffer_destroy(c->x[i]);
  poot_device_buffer_destroy(c->slots);
}

static void chain_clear(chain *c) {
  float zero[CHAIN_N] = {0};
  for (int i = 1; i <= CHAIN_LEN; i++)
    POOT_ASSERT_OK(poot_device_upload(c->x[i], 0, zero, sizeof zero));
}

static void test_replay_vs_eager_and_watchdog(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_float(&kir));
  poot_device_kernel *k = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  chain c;
  chain_init(d, k, &c);
  float eager[CHAIN_N], replay[CHAIN_N], split[CHAIN_N];
  for (int i = 0; i < CHAIN_LEN; i++) POOT_ASSERT_OK(poot_device_submit_one(d, &c.cmds[i], NULL));
  POOT_ASSERT_OK(poot_device_download(c.x[CHAIN_LEN], 0, eager, sizeof eager));
  for (int i = 0; i < CHAIN_N; i++) assert_true(isfinite(eager[i]) && eager[i] != 0.0f);

  chain_clear(&c);
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, c.cmds, CHAIN_LEN, NULL, &rec));
  assert_int_equal(rec->stage_count, 1);
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  POOT_ASSERT_OK(poot_device_download(c.x[CHAIN_LEN], 0, replay, sizeof replay));
  assert_memory_equal(eager, replay, sizeof eager);
  poot_device_recording_destroy(rec);

  /* A 1 ms budget with 600 µs commands: one command per command buffer. */
  chain_clear(&c);
  poot_device_record_options ro = {.stage_budget_us = 1000};
  POOT_ASSERT_OK(poot_device_record(d, c.cmds, CHAIN_LEN, &ro, &rec));
  assert_int_equal(rec->stage_count, CHAIN_LEN);
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  POOT_ASSERT_OK(poot_device_download(c.x[CHAIN_LEN], 0, split, sizeof split));
  assert_memory_equal(eager, split, sizeof eager);
  poot_device_recording_destroy(rec);
  chain_deinit(&c);
  close_device(d);
  poot_kir_kernel_destroy(kir);
}

/* A device created with a watchdog budget cuts by itself. */
static void test_device_watchdog(void **state) {
  (void)state;
  poot_device *d = open_device(2, 0); /* 2 ms: pairs of 600 µs... three per stage */
  assert_int_equal(poot_device_caps_get(d)->watchdog_ms, 2);
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_float(&kir));
  poot_device_kernel *k = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  chain c;
  chain_init(d, k, &c);
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, c.cmds, CHAIN_LEN, NULL, &rec));
  assert_int_equal(rec->stage_count, 3); /* 3 + 3 + 2 commands */
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  poot_device_recording_destroy(rec);
  uint32_t stages[CHAIN_LEN];
  assert_int_equal(poot_device_cut_stages(c.cmds, CHAIN_LEN, 0, stages), 1);
  assert_int_equal(poot_device_cut_stages(c.cmds, CHAIN_LEN, 100, stages), CHAIN_LEN);
  chain_deinit(&c);
  close_device(d);
  poot_kir_kernel_destroy(kir);
}

typedef struct record_ctx {
  poot_device *d;
  const poot_device_cmd *cmd;
} record_ctx;

static poot_status try_record(void *ctx) {
  record_ctx *r = ctx;
  poot_device_recording *rec = NULL;
  poot_status st = poot_device_record(r->d, r->cmd, 1, NULL, &rec);
  poot_device_recording_destroy(rec);
  return st;
}

static void test_kernel_fault(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_checked(1, &kir));
  poot_device_kernel *k = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  assert_true(k->has_checks);
  enum { N = 100 };
  uint32_t in[N], out[N];
  for (uint32_t i = 0; i < N; i++) in[i] = i;
  poot_device_buffer *bin = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof in);
  poot_device_buffer *bout = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, sizeof out);
  poot_device_buffer *slots = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 16);
  POOT_ASSERT_OK(poot_device_upload(bin, 0, in, sizeof in));
  poot_device_buffer *binds[3] = {bin, bout, slots};
  uint32_t push[1] = {N};
  poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                         .kernel = k,
                         .grid = {2, 1, 1},
                         .buffers = binds,
                         .push = push,
                         .label = "gather token_embd"};
  /* Recording a checked, labelled dispatch with each allocation failing in
   * turn: OUT_OF_MEMORY, never a NULL name kept for the fault report. */
  record_ctx rc = {d, &cmd};
  assert_true(poot_test_oom_sweep("record a checked dispatch", try_record, &rc, 10000) > 2);
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, &cmd, 1, NULL, &rec));
  uint32_t *limit = poot_device_buffer_host(slots);
  *limit = N; /* every index in range */
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  POOT_ASSERT_OK(poot_device_download(bout, 0, out, sizeof out));
  assert_memory_equal(in, out, sizeof in);
  *limit = 50; /* half the indices fail the check */
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_STATUS_MSG(poot_device_synchronize(d, NULL), POOT_KERNEL_FAULT, "gather_checked");
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_STATUS_MSG(poot_device_synchronize(d, NULL), POOT_KERNEL_FAULT, "trap code 1");
  /* The error word does not poison: the next replay is clean again. */
  assert_false(poot_device_is_poisoned(d));
  *limit = N;
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  poot_device_buffer_destroy(slots);
  poot_kir_kernel_destroy(kir);
  close_device(d);
}

/* Every call on a poisoned device is refused without touching it. */
static void assert_all_poisoned(poot_device *d, poot_device_recording *rec, poot_device_buffer *buf,
                                const poot_kir_kernel *kir) {
  uint32_t w = 0;
  poot_device_buffer *nb = NULL;
  poot_device_kernel *k = NULL;
  poot_device_recording *r2 = NULL;
  assert_true(poot_device_is_poisoned(d));
  POOT_ASSERT_STATUS(poot_device_replay(rec), POOT_POISONED);
  POOT_ASSERT_STATUS(poot_device_synchronize(d, NULL), POOT_POISONED);
  POOT_ASSERT_STATUS(poot_device_upload(buf, 0, &w, 4), POOT_POISONED);
  POOT_ASSERT_STATUS(poot_device_download(buf, 0, &w, 4), POOT_POISONED);
  POOT_ASSERT_STATUS(poot_device_buffer_create(d, POOT_DEVICE_BUFFER_LOCAL, 64, &nb),
                     POOT_POISONED);
  assert_null(nb);
  POOT_ASSERT_STATUS(poot_device_kernel_get(d, kir, &k), POOT_POISONED);
  poot_device_cmd copy = {.kind = POOT_DEVICE_CMD_COPY, .src = buf, .dst = buf, .size = 4};
  POOT_ASSERT_STATUS(poot_device_record(d, &copy, 1, NULL, &r2), POOT_POISONED);
}

static void test_device_lost(void **state) {
  (void)state;
  poot_device *d = open_device(0, 0);
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_affine(0, &kir));
  poot_device_kernel *k = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  poot_device_buffer *b[3] = {new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, 256),
                              new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, 256),
                              new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 16)};
  uint32_t push[1] = {64};
  poot_device_cmd cmd = {
      .kind = POOT_DEVICE_CMD_DISPATCH, .kernel = k, .grid = {1, 1, 1}, .buffers = b, .push = push};
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, &cmd, 1, NULL, &rec));
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  poot_vulkan_device_inject(d, POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST);
  POOT_ASSERT_STATUS_MSG(poot_device_replay(rec), POOT_DEVICE_LOST, "device lost");
  assert_all_poisoned(d, rec, b[0], kir);
  POOT_ASSERT_STATUS_MSG(poot_device_replay(rec), POOT_POISONED, "device lost");
  /* Teardown of a poisoned device frees host memory only. */
  poot_device_recording_destroy(rec);
  for (int i = 0; i < 3; i++) poot_device_buffer_destroy(b[i]);
  poot_kir_kernel_destroy(kir);
  close_device(d);
}

static void test_timeout(void **state) {
  (void)state;
  poot_device *d = open_device(0, 2000000000ull); /* 2 s */
  poot_kir_kernel *kir = NULL;
  POOT_ASSERT_OK(vkt_build_spin(&kir));
  poot_device_kernel *k = NULL;
  POOT_ASSERT_OK(poot_device_kernel_get(d, kir, &k));
  poot_device_buffer *ctl = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, 16);
  poot_device_buffer *out = new_buffer(d, POOT_DEVICE_BUFFER_LOCAL, 16);
  poot_device_buffer *b[2] = {ctl, out};
  poot_device_cmd cmd = {.kind = POOT_DEVICE_CMD_DISPATCH,
                         .kernel = k,
                         .grid = {VKT_SPIN_GRID_X, VKT_SPIN_GRID_Y, 1},
                         .buffers = b};
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, &cmd, 1, NULL, &rec));
  uint64_t t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_STATUS_MSG(poot_device_synchronize(d, NULL), POOT_TIMEOUT, "2.000 s");
  uint64_t waited = poot_time_ns() - t0;
  assert_true(waited >= 1900000000ull && waited < 30000000000ull);
  assert_all_poisoned(d, rec, out, kir);
  /* Let the kernel end so that the driver's threads can exit with the
   * process; the device's objects stay leaked on purpose. */
  ((volatile uint32_t *)poot_device_buffer_host(ctl))[0] = 1;
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(ctl);
  poot_device_buffer_destroy(out);
  poot_kir_kernel_destroy(kir);
  close_device(d);
}

/* The Vulkan hooks on a device of another implementation (another vtable,
 * the type tag): no write through it, no answer from it. */
static void test_hooks_other_backend(void **state) {
  (void)state;
  static const poot_device_vtable other_vtable = {0};
  poot_device other;
  memset(&other, 0, sizeof other);
  other.vt = &other_vtable;
  poot_device before;
  memcpy(&before, &other, sizeof before);
  poot_vulkan_device_inject(&other, POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST);
  assert_memory_equal(&other, &before, sizeof other);
  assert_false(poot_vulkan_validation_enabled(&other));
  assert_int_equal(poot_vulkan_validation_messages(&other), 0);
}

int main(void) {
  poot_vulkan_options o;
  poot_vulkan_options_init(&o);
  o.validation = true;
  poot_device *probe = NULL;
  poot_status st = poot_vulkan_device_create(&o, &probe);
  if (st) {
    int rc = poot_test_skip("no Vulkan device: %s", poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  printf("device: %s (%s), subgroup %u, validation layer %s\n", probe->caps.name, probe->caps.kind,
         probe->caps.target.subgroup_size,
         poot_vulkan_validation_enabled(probe) ? "on" : "not installed (skipped)");
  poot_device_destroy(probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buffers),
      cmocka_unit_test(test_record_replay_slots),
      cmocka_unit_test(test_staging),
      cmocka_unit_test(test_replay_vs_eager_and_watchdog),
      cmocka_unit_test(test_device_watchdog),
      cmocka_unit_test(test_kernel_fault),
      cmocka_unit_test(test_device_lost),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_kernel_cache_collision),
      cmocka_unit_test(test_hooks_other_backend),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
