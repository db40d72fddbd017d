/* The wgpu device: wgpu-native loaded at run time, the adapter and the
 * WebGPU device with the features KIR kernels may use, the KIR target it
 * compiles for, buffers, uploads and downloads, bounded waits and the
 * device-lost and uncaptured-error callbacks. Kernels and recordings are in
 * wgpu_record.c. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wgpu_impl.h"

void poot_wgpu_options_init(poot_wgpu_options *options) {
  memset(options, 0, sizeof *options);
  options->index = -1;
}

/* ------------------------------------------------------------- library ---- */

poot_status poot__wg_runtime_open(poot_wg_runtime *rt, const char *library) {
  memset(rt, 0, sizeof *rt);
  const char *names[4];
  size_t n = 0;
  if (library && *library) names[n++] = library;
  names[n++] = "libwgpu_native.so";
  names[n++] = "libwgpu_native-release.so";
  names[n] = NULL;
  poot_status st = poot_dylib_open(names, &rt->lib);
  if (st) {
    poot_status no = poot_status_make(
        POOT_NO_DEVICE, "wgpu: libwgpu_native.so not found (%s; POOT_WGPU_LIBRARY names another)",
        poot_status_message(st));
    poot_status_free(st);
    return no;
  }
#define POOT_WG_SYMBOL(name, ret, args) {#name, (void **)&rt->api.name, false},
  const poot_dylib_symbol sym[] = {POOT_WG_FNS(POOT_WG_SYMBOL)};
#undef POOT_WG_SYMBOL
  st = poot_dylib_load(rt->lib, sym, sizeof sym / sizeof sym[0]);
  if (st) {
    poot_status no = poot_status_make(POOT_NO_DEVICE, "wgpu: %s", poot_status_message(st));
    poot_status_free(st);
    poot__wg_runtime_close(rt);
    return no;
  }
  const uint32_t v = rt->api.wgpuGetVersion();
  if (v >> 24 != POOT_WG_ABI_MAJOR) {
    poot_status no = poot_status_make(
        POOT_NO_DEVICE,
        "wgpu: %s is wgpu-native %u.%u.%u.%u; poot's declarations of its C API are those of "
        "release %u (PyPI's wgpu 0.32.0), so it is not used",
        poot_dylib_name(rt->lib), v >> 24, (v >> 16) & 255u, (v >> 8) & 255u, v & 255u,
        POOT_WG_ABI_MAJOR);
    poot__wg_runtime_close(rt);
    return no;
  }
  /* The primary backends only: OpenGL would list the same GPU twice. */
  poot_wg_instance_extras extras = {.chain = {.stype = POOT_WG_STYPE_INSTANCE_EXTRAS},
                                    .backends = POOT_WG_INSTANCE_BACKEND_PRIMARY};
  poot_wg_instance_desc desc = {.next = &extras.chain};
  rt->instance = rt->api.wgpuCreateInstance(&desc);
  if (!rt->instance) {
    poot__wg_runtime_close(rt);
    return poot_status_make(POOT_NO_DEVICE, "wgpu: wgpuCreateInstance failed");
  }
  return NULL;
}

void poot__wg_runtime_close(poot_wg_runtime *rt) {
  if (rt->instance) rt->api.wgpuInstanceRelease(rt->instance);
  rt->instance = NULL;
  poot_dylib_close(rt->lib);
  rt->lib = NULL;
}

size_t poot__wg_adapters(poot_wg_runtime *rt, poot_wg_adapter *out, size_t max) {
  poot_wg_enumerate_options o = {.backends = POOT_WG_INSTANCE_BACKEND_PRIMARY};
  size_t n = rt->api.wgpuInstanceEnumerateAdapters(rt->instance, &o, NULL);
  if (n == 0) return 0;
  poot_wg_adapter *all = poot_calloc(n, sizeof *all);
  if (!all) return 0;
  n = rt->api.wgpuInstanceEnumerateAdapters(rt->instance, &o, all);
  size_t kept = n < max ? n : max;
  memcpy(out, all, kept * sizeof *all);
  for (size_t i = kept; i < n; i++) rt->api.wgpuAdapterRelease(all[i]);
  poot_free(all);
  return kept;
}

static const char *kind_name(poot_wg_enum type) {
  switch (type) {
    case POOT_WG_ADAPTER_DISCRETE:
      return "discrete";
    case POOT_WG_ADAPTER_INTEGRATED:
      return "integrated";
    case POOT_WG_ADAPTER_CPU:
      return "cpu";
    default:
      return "other";
  }
}

static int kind_rank(poot_wg_enum type) {
  switch (type) {
    case POOT_WG_ADAPTER_DISCRETE:
      return 0;
    case POOT_WG_ADAPTER_INTEGRATED:
      return 1;
    case POOT_WG_ADAPTER_CPU:
      return 3;
    default:
      return 2;
  }
}

static void copy_view(char *dst, size_t cap, poot_wg_string_view v) {
  size_t n = v.data ? (v.length == POOT_WG_STRLEN ? strlen(v.data) : v.length) : 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, v.data, n);
  dst[n] = '\0';
}

void poot__wg_describe(poot_wg_runtime *rt, poot_wg_adapter adapter, uint32_t index,
                       poot_device_info *info) {
  memset(info, 0, sizeof *info);
  info->index = index;
  poot_wg_adapter_info ai;
  memset(&ai, 0, sizeof ai);
  if (rt->api.wgpuAdapterGetInfo(adapter, &ai) != POOT_WG_SUCCESS) {
    snprintf(info->name, sizeof info->name, "adapter %u", index);
    snprintf(info->kind, sizeof info->kind, "other");
    snprintf(info->why, sizeof info->why, "wgpuAdapterGetInfo failed");
    return;
  }
  copy_view(info->name, sizeof info->name, ai.device);
  if (!info->name[0]) copy_view(info->name, sizeof info->name, ai.description);
  snprintf(info->kind, sizeof info->kind, "%s", kind_name(ai.adapter_type));
  rt->api.wgpuAdapterInfoFreeMembers(ai);
  /* Compute is part of every WebGPU adapter; nothing else is required. */
  info->usable = true;
}

/* ----------------------------------------------------------- callbacks ---- */

static void on_lost(const poot_wg_device *device, poot_wg_enum reason, poot_wg_string_view message,
                    void *userdata1, void *userdata2) {
  (void)device;
  (void)userdata2;
  poot_wg_sink *s = userdata1;
  if (s->destroying || reason == POOT_WG_LOST_CALLBACK_CANCELLED) return;
  if (s->lost) return;
  char m[200];
  copy_view(m, sizeof m, message);
  snprintf(s->lost_reason, sizeof s->lost_reason, "%s (reason %u)", m[0] ? m : "no message",
           (unsigned)reason);
  s->lost = true;
}

static void on_error(const poot_wg_device *device, poot_wg_enum type, poot_wg_string_view message,
                     void *userdata1, void *userdata2) {
  (void)device;
  (void)userdata2;
  poot_wg_sink *s = userdata1;
  if (s->errors++ == 0) {
    char m[440];
    copy_view(m, sizeof m, message);
    snprintf(s->error, sizeof s->error, "error type %u: %s", (unsigned)type, m);
  }
  poot_log(POOT_LOG_WARN, "wgpu: uncaptured error (type %u)", (unsigned)type);
}

poot_status poot__wg_check_lost(poot_wgpu_device *d, const char *during) {
  if (d->sink->lost)
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: device '%s' lost during %s: %s",
                            d->base.caps.name, during, d->sink->lost_reason);
  if (d->sink->errors)
    return poot_status_make(
        POOT_DEVICE_LOST, "wgpu: device '%s' reported %u uncaptured error(s) by %s; the first: %s",
        d->base.caps.name, d->sink->errors, during, d->sink->error);
  return NULL;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
                        .tv_nsec = (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

poot_status poot__wg_wait(poot_wgpu_device *d, const volatile bool *flag, uint64_t timeout_ns,
                          const char *what) {
  const uint64_t t0 = poot_time_ns();
  /* A GPU is polled for its first 2 ms (its waits are short); a CPU adapter
   * needs the cores, so it is polled with growing sleeps from the start.
   * Sleeps grow from 20 µs to at most 160 µs: the wait ends at most that
   * late. */
  uint64_t nap = d->cpu ? 20000 : 0;
  for (;;) {
    (void)d->rt.api.wgpuDevicePoll(d->device, 0, NULL);
    if (*flag) return NULL;
    POOT_TRY(poot__wg_check_lost(d, what));
    uint64_t spent = poot_time_ns() - t0;
    if (spent >= timeout_ns)
      return poot_status_make(POOT_TIMEOUT,
                              "wgpu: %s did not finish within %.3f s on '%s' (the device is "
                              "poisoned; its memory is left to the driver)",
                              what, (double)timeout_ns * 1e-9, d->base.caps.name);
    if (!d->cpu && spent < 2000000) continue;
    if (nap == 0) nap = 20000;
    sleep_ns(nap);
    if (nap < 100000) nap *= 2;
  }
}

/* An error scope's answer. */
typedef struct scope_answer {
  bool done;
  poot_wg_enum type;
  char message[600];
} scope_answer;

static void on_scope(poot_wg_enum status, poot_wg_enum type, poot_wg_string_view message,
                     void *userdata1, void *userdata2) {
  (void)userdata2;
  scope_answer *a = userdata1;
  a->type = status == POOT_WG_SUCCESS ? type : POOT_WG_ERROR_NONE;
  copy_view(a->message, sizeof a->message, message);
  a->done = true;
}

void poot__wg_scope_push(poot_wgpu_device *d) {
  d->rt.api.wgpuDevicePushErrorScope(d->device, POOT_WG_FILTER_OUT_OF_MEMORY);
  d->rt.api.wgpuDevicePushErrorScope(d->device, POOT_WG_FILTER_VALIDATION);
}

poot_status poot__wg_scope_pop(poot_wgpu_device *d, const char *what) {
  scope_answer *a = poot_calloc(2, sizeof *a);
  if (!a) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: error scope answers");
  for (int i = 0; i < 2; i++) {
    poot_wg_scope_cb_info cb = {
        .mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS, .callback = on_scope, .userdata1 = &a[i]};
    (void)d->rt.api.wgpuDevicePopErrorScope(d->device, cb);
    poot_status w = poot__wg_wait(d, &a[i].done, d->base.timeout_ns, "an error scope");
    if (w) {
      poot__wg_sink_keep(d->sink, a); /* an answer may still come */
      return w;
    }
  }
  poot_status st = NULL;
  if (a[0].type == POOT_WG_ERROR_VALIDATION)
    st = poot_status_make(POOT_FORMAT, "wgpu: %s refused: %s", what, a[0].message);
  else if (a[0].type != POOT_WG_ERROR_NONE)
    st = poot_status_make(POOT_DEVICE_LOST, "wgpu: %s failed (error type %u): %s", what,
                          (unsigned)a[0].type, a[0].message);
  else if (a[1].type == POOT_WG_ERROR_OUT_OF_MEMORY)
    st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: %s: out of memory (%s)", what, a[1].message);
  else if (a[1].type != POOT_WG_ERROR_NONE)
    st = poot_status_make(POOT_DEVICE_LOST, "wgpu: %s failed (error type %u): %s", what,
                          (unsigned)a[1].type, a[1].message);
  poot_free(a);
  return st;
}

/* -------------------------------------------------------------- buffers ---- */

poot_status poot__wg_raw_buffer(poot_wgpu_device *d, uint64_t size, poot_wg_flags usage,
                                const char *what, poot_wg_buffer *out) {
  *out = NULL;
  if (size > d->limits.max_buffer_size)
    return poot_status_make(POOT_OUT_OF_MEMORY,
                            "wgpu: %s of %llu bytes exceeds the adapter's maxBufferSize (%llu) "
                            "on '%s'",
                            what, (unsigned long long)size,
                            (unsigned long long)d->limits.max_buffer_size, d->base.caps.name);
  poot_wg_buffer_desc desc = {.label = poot__wg_str(what), .usage = usage, .size = size};
  poot__wg_scope_push(d);
  poot_wg_buffer b = d->rt.api.wgpuDeviceCreateBuffer(d->device, &desc);
  poot_status st = poot__wg_scope_pop(d, what);
  if (!st && !b) st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: %s: no buffer", what);
  if (st) {
    if (b && poot_status_code_of(st) != POOT_TIMEOUT) d->rt.api.wgpuBufferRelease(b);
    return st;
  }
  *out = b;
  return NULL;
}

static void wg_buffer_destroy(poot_device *device, poot_device_buffer *buffer) {
  poot_wgpu_device *d = poot__wg_device_cast(device);
  if (!d || !buffer) return;
  poot_wgpu_buffer *b = (poot_wgpu_buffer *)buffer;
  if (!device->poisoned && b->buffer) {
    d->rt.api.wgpuBufferDestroy(b->buffer);
    d->rt.api.wgpuBufferRelease(b->buffer);
  }
  poot_free(b->shadow);
  poot_free(b);
}

static poot_status wg_buffer_create(poot_device *device, poot_device_buffer_kind kind,
                                    uint64_t size, poot_device_buffer **out_buffer) {
  *out_buffer = NULL;
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  poot_wgpu_buffer *b = poot_calloc(1, sizeof *b);
  if (!b) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: buffer object");
  b->base.device = device;
  b->base.kind = kind;
  b->base.size = size;
  b->alloc_size = (size + 3) & ~(uint64_t)3;
  poot_status st = NULL;
  if (kind == POOT_DEVICE_BUFFER_SLOT) {
    b->shadow = poot_calloc(1, (size_t)b->alloc_size);
    if (!b->shadow) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: host copy of a slot buffer");
      goto fail;
    }
    b->base.host = b->shadow;
  }
  /* WebGPU zeroes new buffers. */
  st = poot__wg_raw_buffer(d, b->alloc_size,
                           POOT_WG_USAGE_STORAGE | POOT_WG_USAGE_COPY_SRC | POOT_WG_USAGE_COPY_DST,
                           kind == POOT_DEVICE_BUFFER_SLOT ? "slot buffer" : "buffer", &b->buffer);
  if (st) goto fail;
  *out_buffer = &b->base;
  return NULL;
fail:
  wg_buffer_destroy(device, &b->base);
  return st;
}

/* Copies [offset, offset+size) of a buffer (whole words) to `data` through
 * the readback buffer: one copy command, a submission, a bounded map. */
static poot_status read_words(poot_wgpu_device *d, poot_wg_buffer src, uint64_t offset, void *data,
                              uint64_t size) {
  if (d->readback_size < size) {
    if (d->readback) {
      d->rt.api.wgpuBufferDestroy(d->readback);
      d->rt.api.wgpuBufferRelease(d->readback);
      d->readback = NULL;
      d->readback_size = 0;
    }
    uint64_t want = size < 65536 ? 65536 : size;
    POOT_TRY(poot__wg_raw_buffer(d, want, POOT_WG_USAGE_MAP_READ | POOT_WG_USAGE_COPY_DST,
                                 "readback buffer", &d->readback));
    d->readback_size = want;
  }
  poot_wg_command_encoder enc = d->rt.api.wgpuDeviceCreateCommandEncoder(d->device, NULL);
  if (!enc) return poot_status_make(POOT_DEVICE_LOST, "wgpu: no command encoder for a download");
  d->rt.api.wgpuCommandEncoderCopyBufferToBuffer(enc, src, offset, d->readback, 0, size);
  poot_wg_command_buffer cb = d->rt.api.wgpuCommandEncoderFinish(enc, NULL);
  d->rt.api.wgpuCommandEncoderRelease(enc);
  if (!cb) return poot_status_make(POOT_DEVICE_LOST, "wgpu: finishing a download's commands");
  d->rt.api.wgpuQueueSubmit(d->queue, 1, &cb);
  d->rt.api.wgpuCommandBufferRelease(cb);
  poot_wg_map_state *m = poot_calloc(1, sizeof *m);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: map state");
  poot_wg_map_cb_info info = {
      .mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS, .callback = poot__wg_on_map, .userdata1 = m};
  (void)d->rt.api.wgpuBufferMapAsync(d->readback, POOT_WG_MAP_READ, 0, (size_t)size, info);
  poot_status st = poot__wg_wait(d, &m->done, d->base.timeout_ns, "a download");
  if (st) {
    poot__wg_sink_keep(d->sink, m); /* the map may still answer */
    return st;
  }
  if (m->status != POOT_WG_SUCCESS) {
    unsigned status = (unsigned)m->status;
    poot_free(m);
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: mapping a download failed (status %u)",
                            status);
  }
  poot_free(m);
  const void *p = d->rt.api.wgpuBufferGetConstMappedRange(d->readback, 0, (size_t)size);
  if (p) memcpy(data, p, (size_t)size);
  d->rt.api.wgpuBufferUnmap(d->readback);
  if (!p) return poot_status_make(POOT_DEVICE_LOST, "wgpu: a mapped download has no range");
  return NULL;
}

void poot__wg_on_map(poot_wg_enum status, poot_wg_string_view message, void *userdata1,
                     void *userdata2) {
  (void)message;
  (void)userdata2;
  poot_wg_map_state *m = userdata1;
  m->status = status;
  m->done = true;
}

static poot_status wg_download(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                               void *data, uint64_t size) {
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  poot_wgpu_buffer *b = (poot_wgpu_buffer *)buffer;
  if (b->shadow && !b->device_newer) { /* the host wrote it last */
    memcpy(data, (const uint8_t *)b->shadow + offset, (size_t)size);
    return NULL;
  }
  uint64_t lo = offset & ~(uint64_t)3, hi = (offset + size + 3) & ~(uint64_t)3;
  if (lo == offset && hi == offset + size) return read_words(d, b->buffer, offset, data, size);
  uint8_t *tmp = poot_malloc((size_t)(hi - lo));
  if (!tmp) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: download staging");
  poot_status st = read_words(d, b->buffer, lo, tmp, hi - lo);
  if (!st) memcpy(data, tmp + (offset - lo), (size_t)size);
  poot_free(tmp);
  return st;
}

static poot_status wg_upload(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                             const void *data, uint64_t size) {
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  poot_wgpu_buffer *b = (poot_wgpu_buffer *)buffer;
  uint64_t lo = offset & ~(uint64_t)3, hi = (offset + size + 3) & ~(uint64_t)3;
  if (b->shadow) {
    memcpy((uint8_t *)b->shadow + offset, data, (size_t)size);
    if (offset == 0 && size == b->base.size) b->device_newer = false;
    if (!b->device_newer) { /* the host's copy holds every word: write from it */
      d->rt.api.wgpuQueueWriteBuffer(d->queue, b->buffer, lo, (const uint8_t *)b->shadow + lo,
                                     (size_t)(hi - lo));
      return poot__wg_check_lost(d, "an upload");
    }
  }
  if (lo == offset && hi == offset + size) {
    d->rt.api.wgpuQueueWriteBuffer(d->queue, b->buffer, offset, data, (size_t)size);
    return poot__wg_check_lost(d, "an upload");
  }
  /* WebGPU writes whole words: read the words around the range, patch. */
  uint8_t *tmp = poot_malloc((size_t)(hi - lo));
  if (!tmp) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: upload staging");
  poot_status st = read_words(d, b->buffer, lo, tmp, hi - lo);
  if (!st) {
    memcpy(tmp + (offset - lo), data, (size_t)size);
    d->rt.api.wgpuQueueWriteBuffer(d->queue, b->buffer, lo, tmp, (size_t)(hi - lo));
    st = poot__wg_check_lost(d, "an upload");
  }
  poot_free(tmp);
  return st;
}

/* ------------------------------------------------------------- device ---- */

/* Sinks of poisoned devices: a late callback may still write them, so they
 * stay allocated and reachable from here (a deliberate leak, not a lost
 * pointer, for a leak checker). Their libraries stay loaded too. */
static poot_wg_sink *abandoned_sinks[64];
static poot_dylib *abandoned_libs[64];
static unsigned abandoned_count;

static void wg_destroy(poot_device *device) {
  poot_wgpu_device *d = poot__wg_device_cast(device);
  if (!d) return;
  if (device->poisoned) {
    unsigned i = __atomic_fetch_add(&abandoned_count, 1u, __ATOMIC_RELAXED);
    if (i < sizeof abandoned_sinks / sizeof abandoned_sinks[0]) {
      abandoned_sinks[i] = d->sink;
      abandoned_libs[i] = d->rt.lib;
    }
    poot_free(d);
    return;
  }
  if (d->sink) d->sink->destroying = true;
  if (d->readback) {
    d->rt.api.wgpuBufferDestroy(d->readback);
    d->rt.api.wgpuBufferRelease(d->readback);
  }
  if (d->queue) d->rt.api.wgpuQueueRelease(d->queue);
  if (d->device) {
    /* Bounded: what the queue still runs must end before its objects go. */
    const uint64_t t0 = poot_time_ns();
    while (!d->rt.api.wgpuDevicePoll(d->device, 0, NULL)) {
      if (poot_time_ns() - t0 > d->base.timeout_ns) {
        poot_log(POOT_LOG_WARN,
                 "wgpu: '%s' still had work after %.3f s at destroy; its objects are left to the "
                 "library",
                 d->base.caps.name, (double)d->base.timeout_ns * 1e-9);
        device->poisoned = true;
        wg_destroy(device);
        return;
      }
      sleep_ns(100000);
    }
    d->rt.api.wgpuDeviceRelease(d->device);
  }
  if (d->adapter) d->rt.api.wgpuAdapterRelease(d->adapter);
  poot__wg_runtime_close(&d->rt);
  if (d->sink)
    for (uint32_t i = 0; i < d->sink->late_count; i++) poot_free(d->sink->late[i]);
  poot_free(d->sink);
  poot_free(d);
}

const poot_device_vtable poot__wg_vtable = {
    .destroy = wg_destroy,
    .buffer_create = wg_buffer_create,
    .buffer_destroy = wg_buffer_destroy,
    .upload = wg_upload,
    .download = wg_download,
    .kernel_create = poot__wg_kernel_create,
    .kernel_destroy = poot__wg_kernel_destroy,
    .record = poot__wg_record,
    .recording_destroy = poot__wg_recording_destroy,
    .replay = poot__wg_replay,
    .synchronize = poot__wg_synchronize,
};

/* Picks options->index, or the best adapter by kind; releases the others. */
static poot_status pick_adapter(poot_wgpu_device *d, int32_t index) {
  poot_wg_adapter list[16];
  size_t n = poot__wg_adapters(&d->rt, list, 16);
  if (n == 0) return poot_status_make(POOT_NO_DEVICE, "wgpu: the library lists no adapter");
  int best = -1, best_rank = 99;
  if (index >= 0) {
    if ((size_t)index >= n) {
      for (size_t i = 0; i < n; i++) d->rt.api.wgpuAdapterRelease(list[i]);
      return poot_status_make(POOT_NOT_FOUND, "wgpu: no adapter %d (%zu found)", (int)index, n);
    }
    best = index;
  } else {
    for (size_t i = 0; i < n; i++) {
      poot_wg_adapter_info ai;
      memset(&ai, 0, sizeof ai);
      if (d->rt.api.wgpuAdapterGetInfo(list[i], &ai) != POOT_WG_SUCCESS) continue;
      int r = kind_rank(ai.adapter_type);
      d->rt.api.wgpuAdapterInfoFreeMembers(ai);
      if (r < best_rank) {
        best_rank = r;
        best = (int)i;
      }
    }
    if (best < 0) best = 0;
  }
  for (size_t i = 0; i < n; i++)
    if ((int)i != best) d->rt.api.wgpuAdapterRelease(list[i]);
  d->adapter = list[best];
  d->base.caps.index = (uint32_t)best;
  return NULL;
}

typedef struct device_answer {
  bool done;
  poot_wg_enum status;
  poot_wg_device device;
  char message[256];
} device_answer;

static void on_device(poot_wg_enum status, poot_wg_device device, poot_wg_string_view message,
                      void *userdata1, void *userdata2) {
  (void)userdata2;
  device_answer *a = userdata1;
  a->status = status;
  a->device = device;
  copy_view(a->message, sizeof a->message, message);
  a->done = true;
}

/* The subgroup size a workgroup of 64 threads runs with, read by one
 * dispatch (the adapter reports only a range where the driver may choose);
 * 0 when the probe cannot run. */
static const char k_subgroup_probe[] =
    "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn probe(@builtin(subgroup_size) s: u32, @builtin(local_invocation_index) i: u32) {\n"
    "  if (i == 0u) { out[0] = s; }\n"
    "}\n";

static poot_status probe_subgroup(poot_wgpu_device *d, uint32_t *out_size) {
  *out_size = 0;
  const poot_wg_api *api = &d->rt.api;
  poot_wg_buffer buf = NULL;
  POOT_TRY(poot__wg_raw_buffer(d, 16, POOT_WG_USAGE_STORAGE | POOT_WG_USAGE_COPY_SRC,
                               "subgroup probe", &buf));
  poot_wg_layout_entry entry = {.binding = 0,
                                .visibility = POOT_WG_STAGE_COMPUTE,
                                .buffer = {.type = POOT_WG_BINDING_STORAGE}};
  poot_wg_shader_source_wgsl src = {.chain = {.stype = POOT_WG_STYPE_SHADER_SOURCE_WGSL},
                                    .code = poot__wg_str(k_subgroup_probe)};
  poot_wg_shader_module_desc smd = {.next = &src.chain, .label = poot__wg_str("subgroup probe")};
  poot__wg_scope_push(d);
  poot_wg_shader_module module = api->wgpuDeviceCreateShaderModule(d->device, &smd);
  poot_wg_bind_group_layout_desc bld = {.entry_count = 1, .entries = &entry};
  poot_wg_bind_group_layout bgl = api->wgpuDeviceCreateBindGroupLayout(d->device, &bld);
  poot_wg_pipeline_layout_desc pld = {.bind_group_layout_count = 1, .bind_group_layouts = &bgl};
  poot_wg_pipeline_layout layout = api->wgpuDeviceCreatePipelineLayout(d->device, &pld);
  poot_wg_compute_pipeline_desc cpd = {
      .layout = layout, .compute = {.module = module, .entry_point = poot__wg_str("probe")}};
  poot_wg_compute_pipeline pipeline = api->wgpuDeviceCreateComputePipeline(d->device, &cpd);
  poot_wg_bind_group_entry bge = {.binding = 0, .buffer = buf, .size = 16};
  poot_wg_bind_group_desc bgd = {.layout = bgl, .entry_count = 1, .entries = &bge};
  poot_wg_bind_group group = api->wgpuDeviceCreateBindGroup(d->device, &bgd);
  poot_status st = poot__wg_scope_pop(d, "the subgroup probe");
  if (!st) {
    poot_wg_command_encoder enc = api->wgpuDeviceCreateCommandEncoder(d->device, NULL);
    poot_wg_compute_pass pass = api->wgpuCommandEncoderBeginComputePass(enc, NULL);
    api->wgpuComputePassEncoderSetPipeline(pass, pipeline);
    api->wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, NULL);
    api->wgpuComputePassEncoderDispatchWorkgroups(pass, 1, 1, 1);
    api->wgpuComputePassEncoderEnd(pass);
    api->wgpuComputePassEncoderRelease(pass);
    poot_wg_command_buffer cb = api->wgpuCommandEncoderFinish(enc, NULL);
    api->wgpuCommandEncoderRelease(enc);
    api->wgpuQueueSubmit(d->queue, 1, &cb);
    api->wgpuCommandBufferRelease(cb);
    uint32_t words[4] = {0, 0, 0, 0};
    st = read_words(d, buf, 0, words, 16);
    if (!st) *out_size = words[0];
  }
  if (poot_status_code_of(st) == POOT_TIMEOUT) return st; /* leave it all to the driver */
  if (group) api->wgpuBindGroupRelease(group);
  if (pipeline) api->wgpuComputePipelineRelease(pipeline);
  if (layout) api->wgpuPipelineLayoutRelease(layout);
  if (bgl) api->wgpuBindGroupLayoutRelease(bgl);
  if (module) api->wgpuShaderModuleRelease(module);
  api->wgpuBufferDestroy(buf);
  api->wgpuBufferRelease(buf);
  return st;
}

/* Requests the device with every feature KIR kernels may use that the
 * adapter has, and the adapter's own limits; fills the KIR target. */
static poot_status open_device(poot_wgpu_device *d, const poot_wgpu_options *o) {
  poot_wg_runtime *rt = &d->rt;
  poot_wg_adapter_info ai;
  memset(&ai, 0, sizeof ai);
  if (rt->api.wgpuAdapterGetInfo(d->adapter, &ai) != POOT_WG_SUCCESS)
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: wgpuAdapterGetInfo failed");
  poot_device_caps *caps = &d->base.caps;
  caps->backend = "wgpu";
  copy_view(caps->name, sizeof caps->name, ai.device);
  snprintf(caps->kind, sizeof caps->kind, "%s", kind_name(ai.adapter_type));
  d->cpu = ai.adapter_type == POOT_WG_ADAPTER_CPU;
  const uint32_t sg_min = ai.subgroup_min_size, sg_max = ai.subgroup_max_size;
  rt->api.wgpuAdapterInfoFreeMembers(ai);

  memset(&d->limits, 0, sizeof d->limits);
  if (rt->api.wgpuAdapterGetLimits(d->adapter, &d->limits) != POOT_WG_SUCCESS)
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: wgpuAdapterGetLimits failed");
  d->limits.next = NULL;
  poot_wg_enum features[10];
  size_t nf = 0;
  /* Subgroups are the standard feature in newer libraries, wgpu-native's
   * own before that: either will do. */
  const poot_wg_enum wanted[] = {
      POOT_WG_FEATURE_SHADER_F16, POOT_WG_FEATURE_SUBGROUPS, POOT_WG_FEATURE_NATIVE_SHADER_INT64,
      POOT_WG_FEATURE_NATIVE_SHADER_F32_ATOMIC, POOT_WG_FEATURE_NATIVE_SUBGROUP};
  bool has[5] = {false, false, false, false, false};
  for (int i = 0; i < 5; i++) {
    has[i] = rt->api.wgpuAdapterHasFeature(d->adapter, wanted[i]) != 0;
    if (has[i]) features[nf++] = wanted[i];
  }
  has[1] |= has[4];
  /* Device time: timestamps written on the encoder, between passes. */
  const bool can_time =
      rt->api.wgpuAdapterHasFeature(d->adapter, POOT_WG_FEATURE_TIMESTAMP_QUERY) &&
      rt->api.wgpuAdapterHasFeature(d->adapter, POOT_WG_FEATURE_NATIVE_TIMESTAMP_IN_ENCODERS);
  if (can_time) {
    features[nf++] = POOT_WG_FEATURE_TIMESTAMP_QUERY;
    features[nf++] = POOT_WG_FEATURE_NATIVE_TIMESTAMP_IN_ENCODERS;
  }
  device_answer *a = poot_calloc(1, sizeof *a);
  if (!a) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: device request");
  poot_wg_device_desc desc = {.label = poot__wg_str("poot"),
                              .required_feature_count = nf,
                              .required_features = features,
                              .required_limits = &d->limits,
                              .default_queue = {.label = poot__wg_str("poot queue")},
                              .device_lost = {.mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS,
                                              .callback = on_lost,
                                              .userdata1 = d->sink},
                              .uncaptured_error = {.callback = on_error, .userdata1 = d->sink}};
  poot_wg_device_cb_info cb = {
      .mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS, .callback = on_device, .userdata1 = a};
  (void)rt->api.wgpuAdapterRequestDevice(d->adapter, &desc, cb);
  const uint64_t t0 = poot_time_ns();
  while (!a->done && poot_time_ns() - t0 < d->base.timeout_ns) {
    rt->api.wgpuInstanceProcessEvents(rt->instance);
    if (!a->done) sleep_ns(100000);
  }
  if (!a->done) { /* the answer may still come */
    poot__wg_sink_keep(d->sink, a);
    return poot_status_make(POOT_TIMEOUT, "wgpu: the device request was not answered in %.3f s",
                            (double)d->base.timeout_ns * 1e-9);
  }
  poot_status st = NULL;
  if (a->status != POOT_WG_SUCCESS || !a->device)
    st = poot_status_make(POOT_DEVICE_LOST, "wgpu: the device request for '%s' failed: %s",
                          caps->name, a->message);
  d->device = a->device;
  poot_free(a);
  if (st) return st;
  d->queue = rt->api.wgpuDeviceGetQueue(d->device);
  if (!d->queue) return poot_status_make(POOT_DEVICE_LOST, "wgpu: the device has no queue");
  d->storage_align = d->limits.min_storage_buffer_offset_alignment
                         ? d->limits.min_storage_buffer_offset_alignment
                         : 256;

  /* The KIR target: WebGPU's defaults, widened by what the device has. A
   * subgroup size is built in only when the adapter has one fixed size. */
  uint32_t sg = 0;
  if (has[1] && sg_min == sg_max && sg_min > 0) {
    sg = sg_min;
  } else if (has[1]) {
    POOT_TRY(probe_subgroup(d, &sg));
    /* A size outside the reported range or not a power of two: none. */
    if (sg < 4 || sg > 128 || (sg & (sg - 1)) || (sg_max && (sg < sg_min || sg > sg_max))) sg = 0;
  }
  poot_kir_target *t = &caps->target;
  poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, sg, t);
  t->name = "wgpu-device";
  /* 8/16-bit and bf16 buffers are packed into u32 words by the renderer. */
  t->storage_types = POOT_KIR_ALL_STORAGE_TYPES & ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  if (has[0]) t->arith_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_F16);
  if (has[2]) {
    t->storage_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
    t->arith_types |= POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  }
  if (has[3]) {
    t->atomic_types[POOT_KIR_ATOMIC_ADD] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
    t->atomic_types[POOT_KIR_ATOMIC_XCHG] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
  }
  t->simd_cpu = d->cpu;
  t->max_workgroup_size = d->limits.max_compute_invocations_per_workgroup;
  t->max_workgroup_dims[0] = d->limits.max_compute_workgroup_size_x;
  t->max_workgroup_dims[1] = d->limits.max_compute_workgroup_size_y;
  t->max_workgroup_dims[2] = d->limits.max_compute_workgroup_size_z;
  t->shared_memory_bytes = d->limits.max_compute_workgroup_storage_size;
  uint32_t mb = d->limits.max_storage_buffers_per_shader_stage;
  t->max_bindings = mb < 64 ? mb : 64;
  t->watchdog_ms = o->watchdog_ms;
  caps->watchdog_ms = o->watchdog_ms;
  if (can_time) {
    const float period = rt->api.wgpuQueueGetTimestampPeriod(d->queue);
    d->timestamp_ns = period > 0 ? (double)period : 0;
  }
  caps->can_time = d->timestamp_ns > 0;
  poot_log(POOT_LOG_INFO,
           "wgpu: '%s' (%s): subgroups %s (sizes %u..%u; kernels built for %u), f16 %s, i64 %s, "
           "f32 atomics %s",
           caps->name, caps->kind, has[1] ? "on" : "off", sg_min, sg_max, sg, has[0] ? "on" : "off",
           has[2] ? "on" : "off", has[3] ? "on" : "off");
  /* WebGPU does not say how much memory the device has (0: unknown); a
   * buffer past maxBufferSize is refused as OUT_OF_MEMORY. */
  caps->local_bytes = 0;
  caps->host_visible_bytes = 0;
  return NULL;
}

poot_status poot_wgpu_device_create(const poot_wgpu_options *options, poot_device **out_device) {
  *out_device = NULL;
  poot_wgpu_options defaults;
  if (!options) {
    poot_wgpu_options_init(&defaults);
    options = &defaults;
  }
  poot_wgpu_device *d = poot_calloc(1, sizeof *d);
  if (!d) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: device object");
  d->sink = poot_calloc(1, sizeof *d->sink);
  if (!d->sink) {
    poot_free(d);
    return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: device object");
  }
  poot_status st = poot_device_base_init(&d->base, &poot__wg_vtable);
  if (st) {
    poot_free(d->sink);
    poot_free(d);
    return st;
  }
  poot_device_set_timeout(&d->base, options->timeout_ns);
  st = poot__wg_runtime_open(&d->rt, options->library);
  if (!st) st = pick_adapter(d, options->index);
  if (!st) st = open_device(d, options);
  if (st) {
    poot_device_destroy(&d->base);
    return st;
  }
  *out_device = &d->base;
  return NULL;
}

void poot_wgpu_device_inject(poot_device *device, poot_wgpu_fault fault) {
  poot_wgpu_device *d = poot__wg_device_cast(device);
  if (d) d->inject = fault;
}

void poot_wgpu_encode_stats(const poot_device *device, uint64_t *out_ns, uint64_t *out_replays) {
  const poot_wgpu_device *d = poot__wg_device_cast(device);
  *out_ns = d ? d->base.encode_ns : 0;
  *out_replays = d ? d->base.encodes : 0;
}
