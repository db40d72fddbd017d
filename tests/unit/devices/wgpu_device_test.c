/* The wgpu device against the device interface (poot/exec.h §1): buffers
 * (slot buffers through their host copies), a KIR dispatch from poot's WGSL,
 * record once / re-encode many with slot values, replay versus eager
 * submission, stages, the error word as KERNEL_FAULT naming kernel and trap
 * code, an injected device loss, a real one (the WebGPU device destroyed
 * under a replay: the library's error callback), and a 2-second TIMEOUT, each
 * followed by POISONED. Runs on whatever adapter poot_wgpu_device_create
 * picks (wgpu-native over lavapipe in CI; the library from
 * POOT_WGPU_LIBRARY, which the build sets). Exits 77 without the library or
 * an adapter. */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>

#include "poot/devices.h"
#include "poot/exec.h"
#include "vk_kernels.h"

static poot_device *open_device(uint32_t watchdog_ms, uint64_t timeout_ns) {
  poot_wgpu_options o;
  poot_wgpu_options_init(&o);
  o.library = getenv("POOT_WGPU_LIBRARY");
  o.watchdog_ms = watchdog_ms;
  o.timeout_ns = timeout_ns;
  poot_device *d = NULL;
  POOT_ASSERT_OK(poot_wgpu_device_create(&o, &d));
  return d;
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
  assert_string_equal(caps->backend, "wgpu");
  assert_int_equal(caps->target.lang, POOT_KIR_LANG_WGSL);
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
  /* A partial write lands exactly where asked, whole words or not. */
  uint32_t patch[3] = {7, 8, 9};
  POOT_ASSERT_OK(poot_device_upload(local, 40, patch, sizeof patch));
  POOT_ASSERT_OK(poot_device_download(local, 36, out, 20));
  assert_int_equal(out[0], in[9]);
  assert_int_equal(out[1], 7);
  assert_int_equal(out[3], 9);
  assert_int_equal(out[4], in[13]);
  const uint8_t bytes[3] = {0xa1, 0xa2, 0xa3};
  POOT_ASSERT_OK(poot_device_upload(local, 401, bytes, 3));
  uint8_t back[9];
  POOT_ASSERT_OK(poot_device_download(local, 399, back, 7));
  uint8_t want[7];
  memcpy(want, (const uint8_t *)in + 399, 7);
  memcpy(want + 2, bytes, 3);
  assert_memory_equal(back, want, 7);
  POOT_ASSERT_STATUS(poot_device_upload(local, sizeof in - 4, patch, 8), POOT_INVALID_ARGUMENT);
  /* The slot buffer's host address is stable and reads back what the host
   * wrote there. */
  void *host = poot_device_buffer_host(slot);
  ((uint32_t *)host)[3] = 0xabcdef01u;
  uint32_t w = 0;
  POOT_ASSERT_OK(poot_device_download(slot, 12, &w, 4));
  assert_int_equal(w, 0xabcdef01u);
  assert_ptr_equal(poot_device_buffer_host(slot), host);
  poot_device_buffer_destroy(local);
  poot_device_buffer_destroy(slot);
  poot_device_destroy(d);
}

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
  poot_device_buffer *bcopy = new_buffer(d, POOT_DEVICE_BUFFER_SLOT, sizeof out);
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
  uint64_t ns0 = 0, n0 = 0, ns1 = 0, n1 = 0;
  poot_wgpu_encode_stats(d, &ns0, &n0);
  for (uint32_t step = 0; step < 6; step++) {
    slot_words[1] = 1000 * step + 5;
    POOT_ASSERT_OK(poot_device_replay(rec));
    uint64_t device_ns = 0;
    POOT_ASSERT_OK(poot_device_synchronize(d, &device_ns));
    if (poot_device_caps_get(d)->can_time) assert_true(device_ns > 0);
    /* The copy's destination, a slot buffer the commands write, is read
     * back from the device. */
    POOT_ASSERT_OK(poot_device_download(bcopy, 0, out, sizeof out));
    for (uint32_t i = 0; i < N; i++) assert_int_equal(out[i], 3 * i + 1000 * step + 5);
  }
  /* Every replay re-encoded the cached list, and the time is counted. */
  poot_wgpu_encode_stats(d, &ns1, &n1);
  assert_int_equal(n1 - n0, 6);
  assert_true(ns1 > ns0);
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  poot_device_buffer_destroy(bcopy);
  poot_device_buffer_destroy(slots);
  poot_kir_kernel_destroy(kir);
  poot_device_destroy(d);
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

/* Replay = eager, bit for bit; a recording cut into stages (one command
 * buffer each) gives the same. */
static void test_replay_vs_eager_and_stages(void **state) {
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
  poot_device_destroy(d);
  poot_kir_kernel_destroy(kir);
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
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_STATUS_MSG(poot_device_synchronize(d, NULL), POOT_KERNEL_FAULT, "gather token_embd");
  /* The error word does not poison: the next replay is clean again. */
  assert_false(poot_device_is_poisoned(d));
  *limit = N;
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_OK(poot_device_synchronize(d, NULL));
  /* Eager submission raises it too. */
  *limit = 10;
  POOT_ASSERT_STATUS_MSG(poot_device_submit_one(d, &cmd, NULL), POOT_KERNEL_FAULT, "trap code 1");
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(bin);
  poot_device_buffer_destroy(bout);
  poot_device_buffer_destroy(slots);
  poot_kir_kernel_destroy(kir);
  poot_device_destroy(d);
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

/* A device loss at a replay: injected (`destroy` false: the submission
 * reports it) or real (the WebGPU device destroyed under the replay: the
 * library reports it through the uncaptured-error callback, at the slot
 * writes before the submission, which then never happens). */
static void device_lost(bool destroy) {
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
  poot_wgpu_device_inject(
      d, destroy ? POOT_WGPU_FAULT_DESTROY_DEVICE : POOT_WGPU_FAULT_SUBMIT_DEVICE_LOST);
  poot_status st = poot_device_replay(rec);
  if (!st) st = poot_device_synchronize(d, NULL);
  printf("device loss (%s): %s\n", destroy ? "destroyed" : "injected", poot_status_message(st));
  POOT_ASSERT_STATUS_MSG(st, POOT_DEVICE_LOST, "lost");
  assert_all_poisoned(d, rec, b[0], kir);
  POOT_ASSERT_STATUS_MSG(poot_device_replay(rec), POOT_POISONED, "lost");
  /* Teardown of a poisoned device frees host memory only. */
  poot_device_recording_destroy(rec);
  for (int i = 0; i < 3; i++) poot_device_buffer_destroy(b[i]);
  poot_kir_kernel_destroy(kir);
  poot_device_destroy(d);
}

static void test_device_lost_injected(void **state) {
  (void)state;
  device_lost(false);
}

static void test_device_lost_destroyed(void **state) {
  (void)state;
  device_lost(true);
}

/* The hooks on a device of another implementation: no write, no answer. */
static void test_hooks_other_backend(void **state) {
  (void)state;
  static const poot_device_vtable other_vtable = {0};
  poot_device other;
  memset(&other, 0, sizeof other);
  other.vt = &other_vtable;
  poot_device before;
  memcpy(&before, &other, sizeof before);
  poot_wgpu_device_inject(&other, POOT_WGPU_FAULT_SUBMIT_DEVICE_LOST);
  assert_memory_equal(&other, &before, sizeof other);
  uint64_t ns = 1, n = 1;
  poot_wgpu_encode_stats(&other, &ns, &n);
  assert_int_equal(ns, 0);
  assert_int_equal(n, 0);
}

/* A kernel that runs for seconds against a 2 s timeout: TIMEOUT, then
 * POISONED. The grid is a sixteenth of the Vulkan test's (WebGPU cannot
 * tell the running kernel to stop), so the work ends by itself soon after. */
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
                         .grid = {VKT_SPIN_GRID_X / 4, 1, 1},
                         .buffers = b};
  poot_device_recording *rec = NULL;
  POOT_ASSERT_OK(poot_device_record(d, &cmd, 1, NULL, &rec));
  uint64_t t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_device_replay(rec));
  POOT_ASSERT_STATUS_MSG(poot_device_synchronize(d, NULL), POOT_TIMEOUT, "2.000 s");
  uint64_t waited = poot_time_ns() - t0;
  assert_true(waited >= 1900000000ull && waited < 30000000000ull);
  assert_all_poisoned(d, rec, out, kir);
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(ctl);
  poot_device_buffer_destroy(out);
  poot_kir_kernel_destroy(kir);
  poot_device_destroy(d);
}

int main(void) {
  poot_wgpu_options o;
  poot_wgpu_options_init(&o);
  o.library = getenv("POOT_WGPU_LIBRARY");
  poot_device *probe = NULL;
  poot_status st = poot_wgpu_device_create(&o, &probe);
  if (poot_status_code_of(st) == POOT_NO_DEVICE) { /* no library or no adapter */
    int rc = poot_test_skip("no wgpu device: %s", poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  if (st) { /* a library and an adapter that fail are a failure, never a skip */
    printf("FAIL: the wgpu device could not be created: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  printf("device: %s (%s), subgroup %u, device time %s\n", probe->caps.name, probe->caps.kind,
         probe->caps.target.subgroup_size, probe->caps.can_time ? "on" : "off");
  poot_device_destroy(probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buffers),
      cmocka_unit_test(test_record_replay_slots),
      cmocka_unit_test(test_replay_vs_eager_and_stages),
      cmocka_unit_test(test_kernel_fault),
      cmocka_unit_test(test_device_lost_injected),
      cmocka_unit_test(test_device_lost_destroyed),
      cmocka_unit_test(test_hooks_other_backend),
      /* last: the spinning kernel keeps the CPU adapter busy a while */
      cmocka_unit_test(test_timeout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
