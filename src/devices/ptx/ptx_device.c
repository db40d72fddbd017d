/* ptx_device.c — the PTX device: poot/exec.h's device interface over the
 * CUDA driver (DESIGN §6). Buffers are cuMemAlloc memory (LOCAL) or pinned,
 * device-mapped host memory (SLOT: the host writes it in place between
 * replays and kernels read it through the mapping, or, with slot_mirror, a
 * device copy refreshed at the head of each replay). A recording is one CUDA
 * graph per stage, captured from the stream (a one-command recording is
 * launched directly); a replay launches the graphs between two timing
 * events; synchronize polls the stream with a deadline.
 *
 * Built without the CUDA headers, only the stubs at the end remain. */
#include "ptx_device.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void poot_ptx_options_init(poot_ptx_options *options) {
  memset(options, 0, sizeof *options);
  options->index = 0;
}

#ifdef POOT_HAVE_CUDA_H

#include "ptx_impl.h"

typedef struct ptx_device {
  poot_device base; /* first member */
  poot__ptx_ctx *ctx;
  bool eager;
  bool slot_mirror;
  CUevent ev_start, ev_end;
  bool timing;              /* the pending replay recorded both events */
  uint32_t compile_threads; /* kernels_create's threads (1: one by one) */
} ptx_device;

typedef struct ptx_buffer {
  poot_device_buffer base; /* first member */
  poot__ptx_mem mem;
  poot__ptx_mem mirror; /* SLOT with slot_mirror: device copy, made at first record */
  /* Scratch for ptx_record (one record at a time per device). */
  bool rec_mirrored, rec_written;
} ptx_buffer;

typedef struct ptx_recording {
  poot_device_recording base; /* first member */
  uint32_t count;             /* commands, mirror copies included */
  uint32_t nhead;             /* mirror refreshes before the caller's first command */
  poot__ptx_cmd *cmds;
  const char **labels; /* per command, owned strings or NULL */
  CUdeviceptr *addrs;  /* pool for the dispatches' buffer addresses */
  uint32_t *push;      /* pool for their push values */
  uint32_t stage_count;
  uint32_t *stage_end;     /* commands [stage_end[s-1], stage_end[s]) form stage s */
  poot__ptx_graph *graphs; /* one per stage; NULL when eager */
  bool has_checks;
} ptx_recording;

static const poot_device_vtable ptx_vtable;

/* Checked downcasts (STYLE: interfaces): NULL, or INTERNAL from ptx_of, for
 * a device of another backend. */
static ptx_device *ptx_cast(poot_device *device) {
  return POOT_DOWNCAST(ptx_device, base, device, &ptx_vtable);
}

static poot_status ptx_of(poot_device *device, ptx_device **out_device) {
  *out_device = ptx_cast(device);
  return poot_downcast_check(*out_device, "PTX device");
}

/* Carries a context poison (sticky error, timeout) over to the base, so that
 * poot_device_* refuses every later call as POISONED. */
static poot_status ptx_result(ptx_device *d, poot_status st) {
  if (d->ctx->poison_code != POOT_OK && !d->base.poisoned) {
    poot_device_poison(&d->base, poot_status_message(st) && *poot_status_message(st)
                                     ? poot_status_message(st)
                                     : d->ctx->poison_reason);
    d->base.pending = NULL;
    d->base.pending_first = NULL;
  }
  return st;
}

/* ------------------------------------------------------------------ buffers */

static poot_status ptx_buffer_create(poot_device *device, poot_device_buffer_kind kind,
                                     uint64_t size, poot_device_buffer **out_buffer) {
  *out_buffer = NULL;
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  ptx_buffer *b = poot_calloc(1, sizeof *b);
  if (!b) return poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
  poot_status st =
      ptx_result(d, poot__ptx_mem_alloc(d->ctx, size, kind == POOT_DEVICE_BUFFER_SLOT, &b->mem));
  if (st) {
    poot_free(b);
    return st;
  }
  b->base.host = b->mem.host;
  *out_buffer = &b->base;
  return NULL;
}

static void ptx_buffer_destroy(poot_device *device, poot_device_buffer *buffer) {
  ptx_device *d = ptx_cast(device);
  if (!d) return;
  ptx_buffer *b = (ptx_buffer *)buffer;
  /* On a poisoned device only host memory is released (poot/exec.h). */
  if (!d->base.poisoned) {
    poot__ptx_mem_free(d->ctx, &b->mem);
    poot__ptx_mem_free(d->ctx, &b->mirror);
  }
  poot_free(b);
}

static poot_status ptx_upload(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                              const void *data, uint64_t size) {
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  return ptx_result(
      d, poot__ptx_mem_write(d->ctx, &((ptx_buffer *)buffer)->mem, offset, data, (size_t)size));
}

static poot_status ptx_download(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                                void *data, uint64_t size) {
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  return ptx_result(
      d, poot__ptx_mem_read(d->ctx, &((ptx_buffer *)buffer)->mem, offset, data, (size_t)size));
}

/* ------------------------------------------------------------------ kernels */

static poot_status ptx_kernel_create(poot_device *device, const poot_kir_kernel *kir,
                                     poot_device_kernel **out_kernel) {
  *out_kernel = NULL;
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  poot__ptx_kernel *k = NULL;
  POOT_TRY(ptx_result(d, poot__ptx_kernel_create(d->ctx, kir, &k)));
  *out_kernel = &k->base;
  return NULL;
}

/* One kernel on a worker thread of kernels_create: the poison rule
 * (ptx_result) runs once on the calling thread afterwards. */
static poot_status ptx_kernel_build(poot_device *device, const poot_kir_kernel *kir,
                                    poot_device_kernel **out_kernel) {
  *out_kernel = NULL;
  poot__ptx_kernel *k = NULL;
  POOT_TRY(poot__ptx_kernel_create(ptx_cast(device)->ctx, kir, &k));
  *out_kernel = &k->base;
  return NULL;
}

/* Several kernels at once (poot_device_kernels_build): each thread makes
 * the context current and hands its PTX to the driver's JIT, which may run
 * on several threads of one context; the context's kernel list and its
 * poison state take the context's lock (ptx_kernel.c). */
static poot_status ptx_kernels_create(poot_device *device, const poot_kir_kernel *const *kirs,
                                      uint32_t n, poot_device_kernel **out) {
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  return ptx_result(
      d, poot_device_kernels_build(device, ptx_kernel_build, kirs, n, out, d->compile_threads));
}

static void ptx_kernel_destroy(poot_device *device, poot_device_kernel *kernel) {
  ptx_device *d = ptx_cast(device);
  if (!d) return;
  poot__ptx_kernel_destroy(d->ctx, (poot__ptx_kernel *)kernel);
}

/* --------------------------------------------------------------- recordings */

static void recording_free(ptx_device *d, ptx_recording *r) {
  if (!r) return;
  if (r->graphs) {
    /* A recording that may still run (pending, or the device poisoned) keeps
     * its graphs: they are leaked rather than destroyed under the GPU. */
    bool in_flight =
        d->base.pending == &r->base || d->base.pending_first == &r->base || d->base.poisoned;
    for (uint32_t s = 0; s < r->stage_count && !in_flight; s++)
      poot__ptx_graph_destroy(d->ctx, &r->graphs[s]);
    poot_free(r->graphs);
  }
  if (r->labels)
    for (uint32_t i = 0; i < r->count; i++) poot_free((void *)r->labels[i]);
  poot_free(r->labels);
  poot_free(r->cmds);
  poot_free(r->addrs);
  poot_free(r->push);
  poot_free(r->stage_end);
  poot_free(r);
}

/* With slot mirrors, the SLOT buffers that dispatches bind are bound as their
 * device mirrors (made here on first use): marks them, and those that a
 * command writes, in the buffers' scratch fields; *out_head is how many. */
static poot_status plan_mirrors(ptx_device *d, const poot_device_cmd *cmds, uint32_t count,
                                uint32_t *out_head) {
  *out_head = 0;
  if (!d->slot_mirror) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    const poot_device_cmd *c = &cmds[i];
    if (c->kind != POOT_DEVICE_CMD_DISPATCH) continue;
    const poot__ptx_kernel *k = (const poot__ptx_kernel *)c->kernel;
    for (uint32_t b = 0; b < k->base.binding_count; b++) {
      ptx_buffer *pb = (ptx_buffer *)c->buffers[b];
      if (pb->base.kind != POOT_DEVICE_BUFFER_SLOT) continue;
      if (!pb->rec_mirrored) {
        if (!pb->mirror.dptr)
          POOT_TRY(poot__ptx_mem_alloc(d->ctx, pb->mem.size, false, &pb->mirror));
        pb->rec_mirrored = true;
        (*out_head)++;
      }
      if ((k->write_mask >> b) & 1u) pb->rec_written = true;
    }
  }
  for (uint32_t i = 0; i < count; i++)
    if (cmds[i].kind == POOT_DEVICE_CMD_COPY && ((ptx_buffer *)cmds[i].dst)->rec_mirrored)
      ((ptx_buffer *)cmds[i].dst)->rec_written = true;
  return NULL;
}

static void clear_marks(const poot_device_cmd *cmds, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    const poot_device_cmd *c = &cmds[i];
    if (c->kind == POOT_DEVICE_CMD_COPY) {
      ((ptx_buffer *)c->src)->rec_mirrored = ((ptx_buffer *)c->src)->rec_written = false;
      ((ptx_buffer *)c->dst)->rec_mirrored = ((ptx_buffer *)c->dst)->rec_written = false;
      continue;
    }
    for (uint32_t b = 0; b < c->kernel->binding_count; b++) {
      ptx_buffer *pb = (ptx_buffer *)c->buffers[b];
      pb->rec_mirrored = pb->rec_written = false;
    }
  }
}

/* The address a recorded command uses for a buffer: its mirror while the
 * recording mirrors it, else its own. */
static CUdeviceptr rec_addr(const ptx_buffer *b) {
  return b->rec_mirrored ? b->mirror.dptr : b->mem.dptr;
}

static poot_status ptx_record(poot_device *device, const poot_device_cmd *cmds, uint32_t count,
                              const uint32_t *stage_of, uint32_t stage_count,
                              poot_device_recording **out_recording) {
  *out_recording = NULL;
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  size_t naddr = 0, npush = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (cmds[i].kind != POOT_DEVICE_CMD_DISPATCH) continue;
    naddr += cmds[i].kernel->binding_count;
    npush += cmds[i].kernel->push_count;
  }
  uint32_t nhead = 0;
  ptx_recording *r = NULL;
  poot_status st = plan_mirrors(d, cmds, count, &nhead);
  if (st) goto fail;
  /* Room for a refresh and a write-back of each mirror around the commands. */
  size_t room = (size_t)count + 2u * nhead;
  r = poot_calloc(1, sizeof *r);
  if (r) {
    r->nhead = nhead;
    r->stage_count = stage_count ? stage_count : 1;
    r->cmds = poot_calloc(room, sizeof *r->cmds);
    r->labels = poot_calloc(room, sizeof *r->labels);
    r->addrs = poot_calloc(naddr ? naddr : 1, sizeof *r->addrs);
    r->push = poot_calloc(npush ? npush : 1, sizeof *r->push);
    r->stage_end = poot_calloc(r->stage_count, sizeof *r->stage_end);
  }
  if (!r || !r->cmds || !r->labels || !r->addrs || !r->push || !r->stage_end) {
    st = poot_status_make(POOT_OUT_OF_MEMORY,
                          "PTX device: out of host memory recording %" PRIu32 " commands", count);
    goto fail;
  }
  r->count = (uint32_t)room; /* every label slot is freed, even after a failure */
  /* Mirror refreshes first, write-backs of written mirrors after everything. */
  uint32_t hi = 0, ti = nhead + count;
  for (uint32_t i = 0; i < count; i++) {
    if (cmds[i].kind != POOT_DEVICE_CMD_DISPATCH) continue;
    for (uint32_t b = 0; b < cmds[i].kernel->binding_count; b++) {
      const ptx_buffer *pb = (const ptx_buffer *)cmds[i].buffers[b];
      if (!pb->rec_mirrored) continue;
      bool seen = false;
      for (uint32_t h = 0; h < hi && !seen; h++) seen = r->cmds[h].dst == pb->mirror.dptr;
      if (seen) continue;
      r->cmds[hi++] = (poot__ptx_cmd){
          .is_copy = true, .src = pb->mem.dptr, .dst = pb->mirror.dptr, .size = pb->mem.size};
      if (pb->rec_written)
        r->cmds[ti++] = (poot__ptx_cmd){
            .is_copy = true, .src = pb->mirror.dptr, .dst = pb->mem.dptr, .size = pb->mem.size};
    }
  }
  size_t ai = 0, pi = 0;
  for (uint32_t i = 0; i < count; i++) {
    const poot_device_cmd *c = &cmds[i];
    poot__ptx_cmd *o = &r->cmds[nhead + i];
    if (c->label && !(r->labels[nhead + i] = poot_strdup(c->label))) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
      goto fail;
    }
    uint32_t s = stage_of ? stage_of[i] : 0;
    if (s < r->stage_count) r->stage_end[s] = nhead + i + 1;
    if (c->kind == POOT_DEVICE_CMD_COPY) {
      o->is_copy = true;
      o->src = rec_addr((const ptx_buffer *)c->src) + c->src_offset;
      o->dst = rec_addr((const ptx_buffer *)c->dst) + c->dst_offset;
      o->size = c->size;
      continue;
    }
    const poot__ptx_kernel *k = (const poot__ptx_kernel *)c->kernel;
    o->kernel = k;
    for (int g = 0; g < 3; g++) o->grid[g] = c->grid[g] ? c->grid[g] : 1;
    o->buffers = &r->addrs[ai];
    for (uint32_t b = 0; b < k->base.binding_count; b++)
      r->addrs[ai++] = rec_addr((const ptx_buffer *)c->buffers[b]);
    o->push = &r->push[pi];
    for (uint32_t p = 0; p < k->base.push_count; p++) r->push[pi++] = c->push[p];
    if (k->base.has_checks) r->has_checks = true;
  }
  clear_marks(cmds, count);
  r->count = ti;
  /* Stages with no command of their own end where the previous one ends;
   * the first stage starts with the refreshes, the last ends with the
   * write-backs. */
  for (uint32_t s = 1; s < r->stage_count; s++)
    if (r->stage_end[s] < r->stage_end[s - 1]) r->stage_end[s] = r->stage_end[s - 1];
  r->stage_end[r->stage_count - 1] = r->count;
  /* A one-command recording (an eager submission) is launched directly:
   * capturing a graph would cost more than it saves. */
  if (!d->eager && count > 1) {
    r->graphs = poot_calloc(r->stage_count, sizeof *r->graphs);
    if (!r->graphs) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
      goto fail;
    }
    uint32_t begin = 0;
    for (uint32_t s = 0; s < r->stage_count; s++) {
      uint32_t end = r->stage_end[s];
      if (end > begin) {
        st = poot__ptx_graph_capture(d->ctx, &r->cmds[begin], end - begin, &r->graphs[s]);
        if (st) goto fail;
      }
      begin = end;
    }
  }
  *out_recording = &r->base;
  return NULL;

fail:
  clear_marks(cmds, count);
  recording_free(d, r);
  return ptx_result(d, st);
}

static void ptx_recording_destroy(poot_device *device, poot_device_recording *recording) {
  ptx_device *d = ptx_cast(device);
  if (d) recording_free(d, (ptx_recording *)recording);
}

static poot_status ptx_replay(poot_device *device, poot_device_recording *recording) {
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  ptx_recording *r = (ptx_recording *)recording;
  poot__ptx_ctx *ctx = d->ctx;
  POOT_TRY(ptx_result(d, poot__ptx_enter(ctx)));
  /* Chained behind a pending replay (poot_device_replay_chained): the same
   * stream runs it after that one. The fault record is left alone (it is
   * clear: a fault poisons the context, so none happened since the last
   * synchronize cleared it or since that replay's own clear), and the timing
   * events span the chain: the start event of the first replay stays. */
  const bool chained = d->base.pending != NULL;
  poot_status st = NULL;
  bool timed = false;
  if (!chained) {
    if (r->has_checks) poot__ptx_fault_clear(ctx);
    ctx->fault_seen = false;
    d->timing = false;
    timed = d->ev_start && ctx->cu.EventRecord(d->ev_start, ctx->stream) == CUDA_SUCCESS;
  } else {
    timed = d->timing;
  }
  if (r->graphs) {
    for (uint32_t s = 0; s < r->stage_count && !st; s++)
      if (r->graphs[s].exec) st = poot__ptx_graph_launch(ctx, &r->graphs[s]);
  } else {
    st = poot__ptx_launch(ctx, r->cmds, r->count);
  }
  d->timing = !st && timed && ctx->cu.EventRecord(d->ev_end, ctx->stream) == CUDA_SUCCESS;
  if (st && ctx->poison_code == POOT_OK) {
    /* A launch was refused without poisoning (bad arguments): let what was
     * issued finish so that the device stays consistent. */
    poot_status w = poot__ptx_wait(ctx, 0);
    if (w) {
      poot_status_free(st);
      st = w;
    }
  }
  return ptx_result(d, st);
}

/* Names the dispatches of the pending recordings (the chain's first, then
 * the last) that run the faulting kernel. */
static poot_status name_fault(ptx_device *d, poot_status st) {
  const ptx_recording *recs[2] = {(const ptx_recording *)d->base.pending_first,
                                  (const ptx_recording *)d->base.pending};
  if (!d->ctx->fault_seen) return st;
  for (int k = 0; k < 2; k++) {
    const ptx_recording *r = recs[k];
    if (!r) continue;
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->count; i++) {
      const poot__ptx_cmd *c = &r->cmds[i];
      if (c->is_copy || c->kernel->hash != d->ctx->fault_hash) continue;
      if (n < 4)
        poot_strbuf_printf(&sb, "%s#%" PRIu32 "%s%s%s", n ? ", " : "", i - r->nhead,
                           r->labels[i] ? " ('" : "", r->labels[i] ? r->labels[i] : "",
                           r->labels[i] ? "')" : "");
      n++;
    }
    if (n > 4) poot_strbuf_printf(&sb, " and %" PRIu32 " more", n - 4);
    if (n && !sb.failed)
      st = poot_status_annotate(st, "dispatch %s of %" PRIu32 "%s", sb.data, r->base.command_count,
                                recs[0] ? (k == 0 ? " (the first of two chained replays)"
                                                  : " (the second of two chained replays)")
                                        : "");
    poot_strbuf_deinit(&sb);
  }
  return st;
}

static poot_status ptx_synchronize(poot_device *device, uint64_t timeout_ns,
                                   uint64_t *out_device_ns) {
  *out_device_ns = 0;
  ptx_device *d = NULL;
  POOT_TRY(ptx_of(device, &d));
  poot__ptx_ctx *ctx = d->ctx;
  POOT_TRY(ptx_result(d, poot__ptx_enter(ctx)));
  poot_status st = poot__ptx_wait(ctx, timeout_ns);
  if (st) {
    if (poot_status_code_of(st) == POOT_KERNEL_FAULT) st = name_fault(d, st);
    /* poot_device_synchronize poisons on TIMEOUT and DEVICE_LOST; a trap
     * poisons a CUDA context too, so KERNEL_FAULT does here as well. */
    return ptx_result(d, st);
  }
  if (d->timing) {
    float ms = 0;
    if (ctx->cu.EventElapsedTime(&ms, d->ev_start, d->ev_end) == CUDA_SUCCESS && ms > 0)
      *out_device_ns = (uint64_t)((double)ms * 1e6);
  }
  d->timing = false;
  return NULL;
}

static void ptx_destroy(poot_device *device) {
  ptx_device *d = ptx_cast(device);
  if (!d) return;
  if (!d->base.poisoned && d->ctx->poison_code == POOT_OK) {
    d->ctx->cu.CtxSetCurrent(d->ctx->ctx);
    if (d->ev_start) d->ctx->cu.EventDestroy(d->ev_start);
    if (d->ev_end) d->ctx->cu.EventDestroy(d->ev_end);
  }
  poot__ptx_ctx_destroy(d->ctx);
  poot_free(d);
}

static const poot_device_vtable ptx_vtable = {
    .destroy = ptx_destroy,
    .buffer_create = ptx_buffer_create,
    .buffer_destroy = ptx_buffer_destroy,
    .upload = ptx_upload,
    .download = ptx_download,
    .kernel_create = ptx_kernel_create,
    .kernel_destroy = ptx_kernel_destroy,
    .kernels_create = ptx_kernels_create,
    .record = ptx_record,
    .recording_destroy = ptx_recording_destroy,
    .replay = ptx_replay,
    .synchronize = ptx_synchronize,
};

poot_status poot_ptx_device_create(const poot_ptx_options *options, poot_device **out_device) {
  *out_device = NULL;
  poot_ptx_options defaults;
  poot_ptx_options_init(&defaults);
  if (!options) options = &defaults;
  ptx_device *d = poot_calloc(1, sizeof *d);
  if (!d) return poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
  poot__ptx_ctx_options co = {options->index < 0 ? 0 : options->index, options->timeout_ns};
  poot_status st = poot__ptx_ctx_create(&co, &d->ctx);
  if (st) {
    poot_free(d);
    return st;
  }
  st = poot_device_base_init(&d->base, &ptx_vtable);
  if (st) goto fail;
  poot_device_set_timeout(&d->base, options->timeout_ns);
  d->eager = options->eager;
  d->slot_mirror = options->slot_mirror;
  d->compile_threads = poot_device_build_threads(options->compile_threads);
  poot__ptx_ctx *ctx = d->ctx;
  poot_device_caps *caps = &d->base.caps;
  caps->backend = "ptx";
  snprintf(caps->name, sizeof caps->name, "%s", ctx->name);
  int integrated = 0, watchdog = 0;
  ctx->cu.DeviceGetAttribute(&integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED, ctx->dev);
  ctx->cu.DeviceGetAttribute(&watchdog, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, ctx->dev);
  snprintf(caps->kind, sizeof caps->kind, "%s", integrated ? "integrated" : "discrete");
  caps->index = (uint32_t)co.device_index;
  caps->target = ctx->target;
  /* A GPU that drives a display has a kernel-run-time watchdog (about 2 s on
   * Linux); budget stages well inside it. */
  caps->watchdog_ms = watchdog ? POOT_DEVICE_WATCHDOG_CUDA_DISPLAY_MS : 0u;
  caps->target.watchdog_ms = caps->watchdog_ms;
  caps->local_bytes = ctx->total_mem;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  caps->host_visible_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  CUresult r = ctx->cu.EventCreate(&d->ev_start, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = ctx->cu.EventCreate(&d->ev_end, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    st = poot__ptx_check(ctx, r, "cuEventCreate");
    goto fail;
  }
  caps->can_time = ctx->cu.EventElapsedTime != NULL;
  caps->chains_replays = true; /* one stream: replays run in submission order */
  *out_device = &d->base;
  return NULL;

fail:
  if (d->ev_start) d->ctx->cu.EventDestroy(d->ev_start);
  if (d->ev_end) d->ctx->cu.EventDestroy(d->ev_end);
  poot_map_deinit(&d->base.kernel_cache);
  poot__ptx_ctx_destroy(d->ctx);
  poot_free(d);
  return st;
}

void poot_ptx_device_set_eager(poot_device *device, bool eager) {
  ptx_device *d = ptx_cast(device);
  if (d) d->eager = eager;
}

void poot_ptx_device_set_slot_mirror(poot_device *device, bool slot_mirror) {
  ptx_device *d = ptx_cast(device);
  if (d) d->slot_mirror = slot_mirror;
}

void poot__ptx_probe(poot_backend_report *out) {
  memset(out, 0, sizeof *out);
  out->backend = "ptx";
  out->built = true;
  poot__cuda cu;
  poot_status st = poot__cuda_open(&cu);
  if (st) {
    snprintf(out->reason, sizeof out->reason, "%s", poot_status_message(st));
    poot_status_free(st);
    return;
  }
  char err[200];
  int count = 0;
  CUresult r = cu.Init(0);
  if (r == CUDA_SUCCESS) r = cu.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count <= 0) {
    snprintf(out->reason, sizeof out->reason, "libcuda.so.1 loaded but no CUDA GPU: %s",
             r != CUDA_SUCCESS ? poot__cuda_error_text(&cu, r, err, sizeof err) : "0 devices");
    poot__cuda_close(&cu);
    return;
  }
  int version = 0;
  cu.DriverGetVersion(&version);
  snprintf(out->reason, sizeof out->reason, "libcuda.so.1 (CUDA driver %d.%d)", version / 1000,
           (version % 1000) / 10);
  for (int i = 0; i < count && out->device_count < 8; i++) {
    poot_device_info *info = &out->devices[out->device_count++];
    CUdevice dev = 0;
    int major = 0, minor = 0, integrated = 0;
    info->index = (uint32_t)i;
    if (cu.DeviceGet(&dev, i) != CUDA_SUCCESS ||
        cu.DeviceGetName(info->name, (int)sizeof info->name, dev) != CUDA_SUCCESS) {
      snprintf(info->why, sizeof info->why, "the driver cannot describe GPU %d", i);
      continue;
    }
    cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cu.DeviceGetAttribute(&integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED, dev);
    snprintf(info->kind, sizeof info->kind, "%s", integrated ? "integrated" : "discrete");
    info->usable = major >= 8;
    if (info->usable)
      snprintf(info->why, sizeof info->why, "compute capability %d.%d (%s)", major, minor,
               major >= 9 ? "sm_90" : "sm_80");
    else
      snprintf(info->why, sizeof info->why, "compute capability %d.%d; poot needs 8.0 or newer",
               major, minor);
  }
  out->present = true;
  poot__cuda_close(&cu);
}

#else /* !POOT_HAVE_CUDA_H: the backend is compiled out */

#define PTX_COMPILED_OUT                                                                     \
  "this poot was built without the PTX backend (the CUDA toolkit's cuda.h was not found at " \
  "build time; set CUDA_HOME and rebuild)"

poot_status poot_ptx_device_create(const poot_ptx_options *options, poot_device **out_device) {
  (void)options;
  *out_device = NULL;
  return poot_status_make(POOT_NO_DEVICE, "PTX device: %s", PTX_COMPILED_OUT);
}

void poot_ptx_device_set_eager(poot_device *device, bool eager) {
  (void)device;
  (void)eager;
}

void poot_ptx_device_set_slot_mirror(poot_device *device, bool slot_mirror) {
  (void)device;
  (void)slot_mirror;
}

void poot__ptx_probe(poot_backend_report *out) {
  memset(out, 0, sizeof *out);
  out->backend = "ptx";
  snprintf(out->reason, sizeof out->reason, "%s", PTX_COMPILED_OUT);
}

#endif
