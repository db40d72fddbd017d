/* The device interface's public half (poot/exec.h §1): argument checks done
 * once, the poison rule, the kernel cache and stage cutting (by the plan's
 * rule), so that a backend implements only the device work. */
#include <stdio.h>
#include <string.h>

#include "poot/compile.h"
#include "poot/exec.h"

poot_status poot_device_base_init(poot_device *device, const poot_device_vtable *vt) {
  device->vt = vt;
  device->timeout_ns = POOT_DEVICE_DEFAULT_TIMEOUT_NS;
  device->poisoned = false;
  device->poison_reason[0] = '\0';
  device->pending = NULL;
  device->pending_first = NULL;
  poot_map_init(&device->kernel_cache);
  return NULL;
}

void poot_device_destroy(poot_device *device) {
  if (!device) return;
  for (size_t it = 0;;) {
    const void *k;
    size_t kl;
    uint64_t v;
    if (!poot_map_next(&device->kernel_cache, &it, &k, &kl, &v)) break;
    poot_device_kernel *kernel = (poot_device_kernel *)(uintptr_t)v;
    poot_free(kernel->kir_text);
    device->vt->kernel_destroy(device, kernel);
  }
  poot_map_deinit(&device->kernel_cache);
  device->vt->destroy(device);
}

const poot_device_caps *poot_device_caps_get(const poot_device *device) {
  return &device->caps;
}

void poot_device_set_timeout(poot_device *device, uint64_t timeout_ns) {
  device->timeout_ns = timeout_ns ? timeout_ns : POOT_DEVICE_DEFAULT_TIMEOUT_NS;
}

bool poot_device_is_poisoned(const poot_device *device) {
  return device->poisoned;
}

void poot_device_poison(poot_device *device, const char *reason) {
  if (device->poisoned) return;
  device->poisoned = true;
  snprintf(device->poison_reason, sizeof device->poison_reason, "%s",
           reason ? reason : "poisoned by the caller");
}

static poot_status refuse_poisoned(const poot_device *device) {
  return poot_status_make(POOT_POISONED,
                          "%s device '%s' was poisoned earlier and refuses all work (%s)",
                          device->caps.backend, device->caps.name, device->poison_reason);
}

/* Applies the poison rule to a backend's result: a lost device or a wait
 * that ran out poisons the context. */
static poot_status observe(poot_device *device, poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  if (c == POOT_DEVICE_LOST || c == POOT_TIMEOUT) {
    poot_device_poison(device, poot_status_message(st));
    device->pending = NULL;
    device->pending_first = NULL;
  }
  return st;
}

poot_status poot_device_buffer_create(poot_device *device, poot_device_buffer_kind kind,
                                      uint64_t size, poot_device_buffer **out_buffer) {
  *out_buffer = NULL;
  if (device->poisoned) return refuse_poisoned(device);
  if (size == 0 || (kind != POOT_DEVICE_BUFFER_LOCAL && kind != POOT_DEVICE_BUFFER_SLOT))
    return poot_status_make(POOT_INVALID_ARGUMENT, "device buffer: size 0 or bad kind %d",
                            (int)kind);
  poot_status st = observe(device, device->vt->buffer_create(device, kind, size, out_buffer));
  if (!st) {
    (*out_buffer)->device = device;
    (*out_buffer)->kind = kind;
    (*out_buffer)->size = size;
  }
  return st;
}

void poot_device_buffer_destroy(poot_device_buffer *buffer) {
  if (!buffer) return;
  buffer->device->vt->buffer_destroy(buffer->device, buffer);
}

static poot_status check_range(const poot_device_buffer *b, uint64_t offset, uint64_t size,
                               const char *what) {
  if (offset > b->size || size > b->size - offset)
    return poot_status_make(
        POOT_INVALID_ARGUMENT, "device %s: bytes [%llu, +%llu) outside a buffer of %llu bytes",
        what, (unsigned long long)offset, (unsigned long long)size, (unsigned long long)b->size);
  return NULL;
}

poot_status poot_device_upload(poot_device_buffer *buffer, uint64_t offset, const void *data,
                               uint64_t size) {
  poot_device *d = buffer->device;
  if (d->poisoned) return refuse_poisoned(d);
  POOT_TRY(check_range(buffer, offset, size, "upload"));
  if (d->pending)
    return poot_status_make(POOT_INVALID_ARGUMENT, "device upload while a replay is pending");
  if (size == 0) return NULL;
  poot_status st = observe(d, d->vt->upload(d, buffer, offset, data, size));
  if (!st) d->bytes_uploaded += size;
  return st;
}

poot_status poot_device_download(poot_device_buffer *buffer, uint64_t offset, void *data,
                                 uint64_t size) {
  poot_device *d = buffer->device;
  if (d->poisoned) return refuse_poisoned(d);
  POOT_TRY(check_range(buffer, offset, size, "download"));
  if (d->pending)
    return poot_status_make(POOT_INVALID_ARGUMENT, "device download while a replay is pending");
  if (size == 0) return NULL;
  poot_status st = observe(d, d->vt->download(d, buffer, offset, data, size));
  if (!st) d->bytes_downloaded += size;
  return st;
}

/* The kernel cache's key: the 128-bit cache key and a probe number. A hit
 * counts only when the cached kernel's KIR text equals the asked one; a
 * different kernel under the same hash (a collision) moves the search to the
 * next probe, so a collision costs a compile, never a wrong kernel. */
typedef struct kernel_cache_key {
  poot_hash128 hash;
  uint64_t probe;
} kernel_cache_key;

/* The cached kernel for kir, or NULL; *out_key is the key a new one takes
 * (the first free probe). */
static poot_device_kernel *cache_find(poot_device *device, const poot_kir_kernel *kir,
                                      kernel_cache_key *out_key) {
  memset(out_key, 0, sizeof *out_key);
  out_key->hash = poot_kir_cache_key(kir, &device->caps.target);
  for (uint64_t v = 0; poot_map_get(&device->kernel_cache, out_key, sizeof *out_key, &v);
       out_key->probe++) {
    poot_device_kernel *hit = (poot_device_kernel *)(uintptr_t)v;
    if (hit->kir_text_len == kir->text_len &&
        memcmp(hit->kir_text, kir->text, kir->text_len) == 0)
      return hit;
  }
  return NULL;
}

/* Puts a kernel the backend made for kir into the cache under key; on an
 * error the kernel is destroyed. */
static poot_status cache_insert(poot_device *device, const poot_kir_kernel *kir,
                                const kernel_cache_key *key, poot_device_kernel *k) {
  char *text = poot_strndup(kir->text, kir->text_len);
  poot_status st = text ? NULL
                        : poot_status_make(POOT_OUT_OF_MEMORY,
                                           "kernel %s: copying its KIR for the cache", kir->name);
  if (!st) {
    k->key = key->hash;
    k->kir_text = text;
    k->kir_text_len = kir->text_len;
    st = poot_map_put(&device->kernel_cache, key, sizeof *key, (uint64_t)(uintptr_t)k);
  }
  if (st) {
    poot_free(text);
    k->kir_text = NULL;
    device->vt->kernel_destroy(device, k);
    return st;
  }
  device->kernels_created++;
  return NULL;
}

poot_status poot_device_kernel_get(poot_device *device, const poot_kir_kernel *kir,
                                   poot_device_kernel **out_kernel) {
  *out_kernel = NULL;
  if (device->poisoned) return refuse_poisoned(device);
  kernel_cache_key key;
  poot_device_kernel *hit = cache_find(device, kir, &key);
  if (hit) {
    *out_kernel = hit;
    return NULL;
  }
  POOT_TRY(poot_kir_verify(kir, &device->caps.target));
  poot_device_kernel *k = NULL;
  POOT_TRY(observe(device, device->vt->kernel_create(device, kir, &k)));
  POOT_TRY(cache_insert(device, kir, &key, k));
  *out_kernel = k;
  return NULL;
}

/* The kernels of a prepare call the cache lacks, each once. */
typedef struct prepare_list {
  const poot_kir_kernel **kirs;
  poot_device_kernel **made;
  uint32_t n;
} prepare_list;

static bool listed(const prepare_list *l, const poot_kir_kernel *kir) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->kirs[i] == kir || (l->kirs[i]->text_len == kir->text_len &&
                              memcmp(l->kirs[i]->text, kir->text, kir->text_len) == 0))
      return true;
  return false;
}

static poot_status prepare_missing(poot_device *device, const poot_kir_kernel *const *kirs,
                                   uint32_t n, prepare_list *l) {
  for (uint32_t i = 0; i < n; i++) {
    kernel_cache_key key;
    if (cache_find(device, kirs[i], &key) || listed(l, kirs[i])) continue;
    POOT_TRY(poot_kir_verify(kirs[i], &device->caps.target));
    l->kirs[l->n++] = kirs[i];
  }
  return NULL;
}

poot_status poot_device_kernels_prepare(poot_device *device, const poot_kir_kernel *const *kirs,
                                        uint32_t n) {
  if (device->poisoned) return refuse_poisoned(device);
  /* Without kernels_create there is nothing to gain: poot_device_kernel_get
   * compiles each kernel on first use, and its caller reports progress. */
  if (n == 0 || !device->vt->kernels_create) return NULL;
  if (!kirs) return poot_status_make(POOT_INVALID_ARGUMENT, "kernels_prepare: no kernels");
  prepare_list l = {poot_calloc(n, sizeof *l.kirs), poot_calloc(n, sizeof *l.made), 0};
  poot_status st = l.kirs && l.made ? prepare_missing(device, kirs, n, &l)
                                    : poot_status_make(POOT_OUT_OF_MEMORY,
                                                       "kernels_prepare: %u kernels", n);
  if (!st && l.n > 0) {
    st = observe(device, device->vt->kernels_create(device, l.kirs, l.n, l.made));
    for (uint32_t i = 0; i < l.n && !st; i++) {
      kernel_cache_key key;
      (void)cache_find(device, l.kirs[i], &key);
      st = cache_insert(device, l.kirs[i], &key, l.made[i]);
      l.made[i] = NULL;
    }
    /* An insert that failed leaves the later kernels to destroy here. */
    for (uint32_t i = 0; i < l.n; i++)
      if (l.made[i]) device->vt->kernel_destroy(device, l.made[i]);
  }
  poot_free(l.kirs);
  poot_free(l.made);
  return st;
}

uint32_t poot_device_cut_stages(const poot_device_cmd *cmds, uint32_t count, double budget_us,
                                uint32_t *out_stage) {
  /* The plan's rule (poot/compile.h), so a recording splits where the plan
   * of its commands does for the same budget. */
  poot_plan_stager stager = {.budget_us = budget_us};
  for (uint32_t i = 0; i < count; i++)
    out_stage[i] = poot_plan_stage_next(&stager, cmds[i].weight_us);
  return count ? stager.stage + 1 : 0;
}

static poot_status check_cmd(const poot_device *device, const poot_device_cmd *c, uint32_t i) {
  if (c->kind == POOT_DEVICE_CMD_DISPATCH) {
    if (!c->kernel)
      return poot_status_make(POOT_INVALID_ARGUMENT, "command %u: dispatch without a kernel", i);
    if (c->kernel->binding_count && !c->buffers)
      return poot_status_make(POOT_INVALID_ARGUMENT, "command %u (%s): no buffers", i,
                              c->kernel->name);
    for (uint32_t b = 0; b < c->kernel->binding_count; b++) {
      if (!c->buffers[b] || c->buffers[b]->device != device)
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "command %u (%s): binding %u has no buffer of this device", i,
                                c->kernel->name, b);
    }
    if (c->kernel->push_count && !c->push)
      return poot_status_make(POOT_INVALID_ARGUMENT, "command %u (%s): push constants missing", i,
                              c->kernel->name);
    return NULL;
  }
  if (c->kind == POOT_DEVICE_CMD_COPY) {
    if (!c->src || !c->dst || c->src->device != device || c->dst->device != device)
      return poot_status_make(POOT_INVALID_ARGUMENT, "command %u: copy between bad buffers", i);
    if ((c->size | c->src_offset | c->dst_offset) & 3u)
      return poot_status_make(POOT_INVALID_ARGUMENT, "command %u: copy not in whole words", i);
    POOT_TRY(check_range(c->src, c->src_offset, c->size, "copy"));
    POOT_TRY(check_range(c->dst, c->dst_offset, c->size, "copy"));
    return NULL;
  }
  return poot_status_make(POOT_INVALID_ARGUMENT, "command %u: bad kind %d", i, (int)c->kind);
}

poot_status poot_device_record(poot_device *device, const poot_device_cmd *cmds, uint32_t count,
                               const poot_device_record_options *options,
                               poot_device_recording **out_recording) {
  *out_recording = NULL;
  if (device->poisoned) return refuse_poisoned(device);
  if (count == 0) return poot_status_make(POOT_INVALID_ARGUMENT, "record: no commands");
  for (uint32_t i = 0; i < count; i++) POOT_TRY(check_cmd(device, &cmds[i], i));
  double budget = options ? options->stage_budget_us : 0;
  if (budget <= 0) budget = (double)device->caps.watchdog_ms * 1000.0;
  uint32_t *stage_of = poot_calloc(count, sizeof *stage_of);
  if (!stage_of) return poot_status_make(POOT_OUT_OF_MEMORY, "record: stage table");
  uint32_t stages = poot_device_cut_stages(cmds, count, budget, stage_of);
  poot_device_recording *rec = NULL;
  poot_status st = observe(device, device->vt->record(device, cmds, count, stage_of, stages, &rec));
  poot_free(stage_of);
  if (st) return st;
  rec->device = device;
  rec->command_count = count;
  rec->stage_count = stages;
  rec->dispatch_count = 0;
  for (uint32_t i = 0; i < count; i++)
    if (cmds[i].kind == POOT_DEVICE_CMD_DISPATCH) rec->dispatch_count++;
  *out_recording = rec;
  return NULL;
}

void poot_device_recording_destroy(poot_device_recording *recording) {
  if (!recording) return;
  poot_device *d = recording->device;
  /* A recording still in flight is the device's problem to leak; the
   * backend sees `pending` and keeps the GPU objects. */
  d->vt->recording_destroy(d, recording);
  if (d->pending == recording) d->pending = NULL;
  if (d->pending_first == recording) d->pending_first = NULL;
}

poot_status poot_device_replay(poot_device_recording *recording) {
  poot_device *d = recording->device;
  if (d->poisoned) return refuse_poisoned(d);
  if (d->pending)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "device replay while another replay is pending (synchronize first)");
  poot_status st = observe(d, d->vt->replay(d, recording));
  if (!st) d->pending = recording;
  return st;
}

poot_status poot_device_replay_chained(poot_device_recording *recording) {
  poot_device *d = recording->device;
  if (d->poisoned) return refuse_poisoned(d);
  if (!d->pending) return poot_device_replay(recording);
  if (!d->caps.chains_replays || d->pending_first) {
    /* No queue here (or two already pending): wait for what is pending. */
    POOT_TRY(poot_device_synchronize(d, NULL));
    return poot_device_replay(recording);
  }
  poot_device_recording *first = d->pending;
  d->pending_first = first;
  poot_status st = observe(d, d->vt->replay(d, recording));
  if (!st) {
    d->pending = recording;
  } else if (!d->poisoned) {
    /* Refused without poisoning: `first` alone is pending; wait for it, so
     * that nothing is left pending, and report its fault before this one
     * (it happened first). */
    d->pending_first = NULL;
    poot_status w = poot_device_synchronize(d, NULL);
    if (w) {
      poot_status_free(st);
      st = w;
    }
  }
  return st;
}

poot_status poot_device_synchronize(poot_device *device, uint64_t *out_device_ns) {
  if (out_device_ns) *out_device_ns = 0;
  if (device->poisoned) return refuse_poisoned(device);
  if (!device->pending) return NULL;
  uint64_t ns = 0;
  poot_status st = device->vt->synchronize(device, device->timeout_ns, &ns);
  poot_status_code c = poot_status_code_of(st);
  if (c != POOT_TIMEOUT && c != POOT_DEVICE_LOST) device->pending = device->pending_first = NULL;
  st = observe(device, st);
  if (out_device_ns) *out_device_ns = ns;
  return st;
}

poot_status poot_device_submit_one(poot_device *device, const poot_device_cmd *cmd,
                                   uint64_t *out_device_ns) {
  if (out_device_ns) *out_device_ns = 0;
  poot_device_record_options opt = {.stage_budget_us = 0};
  poot_device_recording *rec = NULL;
  POOT_TRY(poot_device_record(device, cmd, 1, &opt, &rec));
  poot_status st = poot_device_replay(rec);
  if (!st) st = poot_device_synchronize(device, out_device_ns);
  poot_device_recording_destroy(rec);
  return st;
}
