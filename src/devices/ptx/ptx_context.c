/* ptx_context.c — one GPU: primary context, stream, fault record, poison,
 * bounded waits, and memory. See ptx_impl.h for the contract. */
#ifdef POOT_HAVE_CUDA_H

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ptx_impl.h"

#define PTX_DEFAULT_TIMEOUT_NS (600ull * 1000000000ull)

/* ------------------------------------------------------------- poisoning */

poot_status poot__ptx_poison(poot__ptx_ctx *ctx, poot_status st) {
  poot_status_code code = poot_status_code_of(st);
  if (code == POOT_OK) code = POOT_DEVICE_LOST;
  if (ctx->poison_code == POOT_OK) {
    ctx->poison_code = code;
    snprintf(ctx->poison_reason, sizeof ctx->poison_reason, "%s: %s", poot_status_code_name(code),
             poot_status_message(st));
  }
  poot_status out =
      poot_status_make(code, "%s; the CUDA context of GPU %d is poisoned (a new device is needed)",
                       poot_status_message(st), ctx->index);
  poot_status_free(st);
  return out;
}

poot_status poot__ptx_enter(poot__ptx_ctx *ctx) {
  if (ctx->poison_code != POOT_OK)
    return poot_status_make(POOT_POISONED,
                            "PTX device (GPU %d) is poisoned by an earlier failure and refuses "
                            "work; destroy it and create a new one (%s)",
                            ctx->index, ctx->poison_reason);
  CUresult r = ctx->cu.CtxSetCurrent(ctx->ctx);
  if (r != CUDA_SUCCESS) return poot__ptx_check(ctx, r, "cuCtxSetCurrent");
  return NULL;
}

static const char *kernel_name_of(const poot__ptx_ctx *ctx, uint64_t hash) {
  for (const poot__ptx_kernel *k = ctx->kernels; k; k = k->next)
    if (k->hash == hash) return k->base.name;
  return NULL;
}

/* After a sticky error: a complete fault record means a KIR check failed. */
static poot_status fault_status(poot__ptx_ctx *ctx, CUresult r, const char *what) {
  char err[256];
  poot__cuda_error_text(&ctx->cu, r, err, sizeof err);
  uint32_t w[POOT__PTX_FAULT_WORDS];
  for (uint32_t i = 0; i < POOT__PTX_FAULT_WORDS; i++) w[i] = ctx->fault ? ctx->fault[i] : 0;
  if (w[1] == 2u) {
    uint64_t hash = (uint64_t)w[3] | ((uint64_t)w[4] << 32);
    ctx->fault_seen = true;
    ctx->fault_hash = hash;
    const char *name = kernel_name_of(ctx, hash);
    return poot_status_make(POOT_KERNEL_FAULT,
                            "PTX device: kernel '%s' (hash %016" PRIx64
                            ") failed a check with trap code %" PRIu32 " in workgroup (%" PRIu32
                            ",%" PRIu32 ",%" PRIu32 ") thread %" PRIu32 " (trap bits 0x%08" PRIx32
                            "; %s reported %s)",
                            name ? name : "?", hash, w[2], w[5], w[6], w[7], w[8], w[0], what, err);
  }
  if (w[0] != 0) {
    /* A thread set its trap bit but the record was not completed (the
     * claiming thread was cut short): the code is known, the kernel not. */
    return poot_status_make(POOT_KERNEL_FAULT,
                            "PTX device: a kernel failed a check with trap code %d (trap bits "
                            "0x%08" PRIx32 "; the fault record is incomplete; %s reported %s)",
                            __builtin_ctz(w[0]), w[0], what, err);
  }
  return poot_status_make(POOT_DEVICE_LOST, "PTX device: %s failed: %s", what, err);
}

poot_status poot__ptx_check(poot__ptx_ctx *ctx, CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return NULL;
  char err[256];
  if (poot__cuda_error_is_sticky(r)) return poot__ptx_poison(ctx, fault_status(ctx, r, what));
  poot__cuda_error_text(&ctx->cu, r, err, sizeof err);
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: %s: %s", what, err);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
      return poot_status_make(POOT_NO_DEVICE, "PTX device: %s: %s", what, err);
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      return poot_status_make(POOT_UNSUPPORTED, "PTX device: %s: %s", what, err);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
      return poot_status_make(POOT_INTERNAL, "PTX device: %s: %s", what, err);
    default:
      /* Anything else from the driver means it or the GPU is in a state we
       * cannot reason about: refuse further work rather than guess. */
      return poot__ptx_poison(
          ctx, poot_status_make(POOT_DEVICE_LOST, "PTX device: %s failed: %s", what, err));
  }
}

void poot__ptx_fault_clear(poot__ptx_ctx *ctx) {
  /* The record is host memory; no work is pending when this is called. */
  for (uint32_t i = 0; i < POOT__PTX_FAULT_WORDS; i++) ctx->fault[i] = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------ waits */

poot_status poot__ptx_wait(poot__ptx_ctx *ctx, uint64_t timeout_ns) {
  if (!timeout_ns) timeout_ns = ctx->timeout_ns;
  uint64_t start = poot_time_ns();
  uint64_t sleep_ns = 0;
  for (;;) {
    CUresult r = ctx->cu.StreamQuery(ctx->stream);
    if (r == CUDA_SUCCESS) return NULL;
    if (r != CUDA_ERROR_NOT_READY) return poot__ptx_check(ctx, r, "cuStreamQuery");
    uint64_t now = poot_time_ns();
    if (now - start >= timeout_ns) {
      ctx->work_may_run = true;
      return poot__ptx_poison(
          ctx, poot_status_make(POOT_TIMEOUT,
                                "PTX device: the GPU work did not finish within %.3f s (the "
                                "configured timeout)",
                                (double)timeout_ns * 1e-9));
    }
    /* Poll without sleeping for the first 20 ms (a decode step takes 0.1 to
     * 20 ms; a sleep overshoots by up to its length, which the step would
     * pay in full), yielding the core to other threads; then sleep with an
     * interval that doubles from 50 us up to 1 ms. */
    if (now - start < 20000000) {
      sched_yield();
      continue;
    }
    sleep_ns = sleep_ns ? sleep_ns * 2 : 50000;
    if (sleep_ns > 1000000) sleep_ns = 1000000;
    struct timespec ts = {0, (long)sleep_ns};
    nanosleep(&ts, NULL);
  }
}

/* -------------------------------------------------------------- lifecycle */

poot_status poot__ptx_ctx_create(const poot__ptx_ctx_options *options, poot__ptx_ctx **out_ctx) {
  *out_ctx = NULL;
  poot__ptx_ctx *ctx = poot_calloc(1, sizeof *ctx);
  if (!ctx) return poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
  if (pthread_mutex_init(&ctx->create_lock, NULL) != 0) {
    poot_free(ctx);
    return poot_status_make(POOT_INTERNAL, "PTX device: the kernel creation lock");
  }
  poot_status st = poot__cuda_open(&ctx->cu);
  if (st) goto fail_free;
  ctx->index = options ? options->device_index : 0;
  ctx->timeout_ns =
      options && options->default_timeout_ns ? options->default_timeout_ns : PTX_DEFAULT_TIMEOUT_NS;
  char err[256];
  CUresult r = ctx->cu.Init(0);
  if (r != CUDA_SUCCESS) {
    st = poot_status_make(poot__cuda_error_is_sticky(r) ? POOT_DEVICE_LOST : POOT_NO_DEVICE,
                          "PTX device: cuInit failed: %s%s",
                          poot__cuda_error_text(&ctx->cu, r, err, sizeof err),
                          poot__cuda_error_is_sticky(r)
                              ? " (a sticky error from an earlier fault: a new process is needed)"
                              : "");
    goto fail_close;
  }
  int count = 0;
  r = ctx->cu.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS || ctx->index < 0 || ctx->index >= count) {
    st = poot_status_make(POOT_NO_DEVICE, "PTX device: no CUDA GPU %d (%d present)", ctx->index,
                          count);
    goto fail_close;
  }
  ctx->cu.DriverGetVersion(&ctx->driver_version);
  r = ctx->cu.DeviceGet(&ctx->dev, ctx->index);
  if (r == CUDA_SUCCESS) r = ctx->cu.DeviceGetName(ctx->name, (int)sizeof ctx->name, ctx->dev);
  if (r == CUDA_SUCCESS)
    r = ctx->cu.DeviceGetAttribute(&ctx->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   ctx->dev);
  if (r == CUDA_SUCCESS)
    r = ctx->cu.DeviceGetAttribute(&ctx->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   ctx->dev);
  if (r == CUDA_SUCCESS)
    r = ctx->cu.DeviceGetAttribute(&ctx->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   ctx->dev);
  size_t total = 0;
  if (r == CUDA_SUCCESS) r = ctx->cu.DeviceTotalMem(&total, ctx->dev);
  if (r != CUDA_SUCCESS) {
    st = poot_status_make(POOT_NO_DEVICE, "PTX device: GPU %d: %s", ctx->index,
                          poot__cuda_error_text(&ctx->cu, r, err, sizeof err));
    goto fail_close;
  }
  ctx->total_mem = total;
  /* The KIR target: PTX for the queried compute capability (sm_90 for 9.x
   * and later, sm_80 for 8.x), narrowed to what the driver can launch. */
  if (ctx->cc_major >= 9) {
    poot_kir_target_init(&ctx->target, POOT_KIR_LANG_PTX, 32);
    ctx->target.name = "sm_90";
    ctx->target.sm_version = 90;
    ctx->target.grid_dependency = true;
    /* Kernels wait for their predecessor themselves only if every launch
     * can say so (cuLaunchKernelEx) and stream capture keeps it as a
     * programmatic graph edge (CUDA 12.3 drivers on); an older driver gets
     * plain launches. */
    if (!ctx->cu.LaunchKernelEx || ctx->driver_version < 12030) ctx->target.grid_dependency = false;
    /* POOT_PTX_GRID_DEPENDENCY=0 turns it off (for measuring, or to rule it
     * out when chasing a fault). */
    const char *gd = getenv("POOT_PTX_GRID_DEPENDENCY");
    if (gd && strcmp(gd, "0") == 0) ctx->target.grid_dependency = false;
  } else if (ctx->cc_major >= 8) {
    poot_kir_target_init(&ctx->target, POOT_KIR_LANG_PTX, 32);
    ctx->target.name = "sm_80";
    ctx->target.sm_version = 80;
  } else {
    st = poot_status_make(POOT_UNSUPPORTED,
                          "PTX device: %s has compute capability %d.%d; poot needs 8.0 or newer",
                          ctx->name, ctx->cc_major, ctx->cc_minor);
    goto fail_close;
  }
  /* Dynamic shared memory a block may opt in to (over the 48 KiB of static
   * .shared: 227 KiB on an H100); a driver that cannot say gives none. */
  int optin = 0;
  if (ctx->cu.DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 ctx->dev) != CUDA_SUCCESS ||
      optin < 0 || !ctx->cu.FuncSetAttribute)
    optin = 0;
  ctx->target.shared_memory_optin_bytes = (uint32_t)optin;
  r = ctx->cu.DevicePrimaryCtxRetain(&ctx->ctx, ctx->dev);
  if (r != CUDA_SUCCESS && poot__cuda_error_is_sticky(r)) {
    /* Measured on an H200 (driver 580): after a trap, even a reset primary
     * context cannot be retained again in the same process. */
    st = poot_status_make(POOT_DEVICE_LOST,
                          "PTX device: the CUDA driver of this process still holds a sticky "
                          "error from an earlier fault (%s); a new process is needed to use "
                          "GPU %d again",
                          poot__cuda_error_text(&ctx->cu, r, err, sizeof err), ctx->index);
    goto fail_close;
  }
  if (r != CUDA_SUCCESS) {
    st = poot_status_make(POOT_NO_DEVICE, "PTX device: cuDevicePrimaryCtxRetain: %s",
                          poot__cuda_error_text(&ctx->cu, r, err, sizeof err));
    goto fail_close;
  }
  r = ctx->cu.CtxSetCurrent(ctx->ctx);
  if (r == CUDA_SUCCESS) r = ctx->cu.StreamCreate(&ctx->stream, CU_STREAM_NON_BLOCKING);
  void *rec = NULL;
  if (r == CUDA_SUCCESS)
    r = ctx->cu.MemHostAlloc(&rec, POOT__PTX_FAULT_RECORD_BYTES,
                             CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_SUCCESS) {
    ctx->fault = rec;
    r = ctx->cu.MemHostGetDevicePointer(&ctx->fault_dev, rec, 0);
  }
  if (r != CUDA_SUCCESS) {
    st = poot__ptx_check(ctx, r, "creating the stream and the fault record");
    goto fail_ctx;
  }
  poot__ptx_fault_clear(ctx);
  *out_ctx = ctx;
  return NULL;

fail_ctx:
  if (ctx->fault) ctx->cu.MemFreeHost((void *)ctx->fault);
  if (ctx->stream) ctx->cu.StreamDestroy(ctx->stream);
  ctx->cu.DevicePrimaryCtxRelease(ctx->dev);
fail_close:
  poot__cuda_close(&ctx->cu);
fail_free:
  pthread_mutex_destroy(&ctx->create_lock);
  poot_free(ctx);
  return st;
}

void poot__ptx_ctx_destroy(poot__ptx_ctx *ctx) {
  if (!ctx) return;
  while (ctx->kernels) poot__ptx_kernel_destroy(ctx, ctx->kernels);
  if (ctx->work_may_run) {
    /* A timed-out kernel may still be running and reading this memory: the
     * stream, the fault record and the context stay as they are; the driver
     * reclaims them when the process exits. */
    pthread_mutex_destroy(&ctx->create_lock);
    poot_free(ctx);
    return;
  }
  ctx->cu.CtxSetCurrent(ctx->ctx);
  bool sticky = ctx->poison_code != POOT_OK;
  if (!sticky) {
    ctx->cu.StreamQuery(ctx->stream);
    ctx->cu.StreamDestroy(ctx->stream);
    ctx->cu.MemFreeHost((void *)ctx->fault);
  }
  ctx->cu.DevicePrimaryCtxRelease(ctx->dev);
  /* After a sticky error the context cannot run work again in this process;
   * resetting the primary context destroys it (and its allocations), so the
   * next device created on this GPU retains a fresh one. */
  if (sticky) {
    CUresult r = ctx->cu.DevicePrimaryCtxReset(ctx->dev);
    if (r != CUDA_SUCCESS) {
      char err[256];
      poot_log(POOT_LOG_INFO, "PTX device: resetting the primary context of GPU %d: %s", ctx->index,
               poot__cuda_error_text(&ctx->cu, r, err, sizeof err));
    }
  }
  poot__cuda_close(&ctx->cu);
  pthread_mutex_destroy(&ctx->create_lock);
  poot_free(ctx);
}

/* ----------------------------------------------------------------- memory */

poot_status poot__ptx_mem_alloc(poot__ptx_ctx *ctx, uint64_t size, bool host_visible,
                                poot__ptx_mem *out_mem) {
  memset(out_mem, 0, sizeof *out_mem);
  POOT_TRY(poot__ptx_enter(ctx));
  size_t n = size ? (size_t)size : 4; /* a zero-size binding still needs an address */
  CUresult r;
  if (host_visible) {
    void *p = NULL;
    r = ctx->cu.MemHostAlloc(&p, n, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (r == CUDA_SUCCESS) {
      memset(p, 0, n);
      r = ctx->cu.MemHostGetDevicePointer(&out_mem->dptr, p, 0);
      if (r != CUDA_SUCCESS)
        ctx->cu.MemFreeHost(p);
      else
        out_mem->host = p;
    }
  } else {
    r = ctx->cu.MemAlloc(&out_mem->dptr, n);
    if (r == CUDA_SUCCESS) {
      r = ctx->cu.MemsetD8Async(out_mem->dptr, 0, n, ctx->stream);
      if (r != CUDA_SUCCESS) {
        ctx->cu.MemFree(out_mem->dptr);
        out_mem->dptr = 0;
      }
    }
  }
  if (r != CUDA_SUCCESS) {
    memset(out_mem, 0, sizeof *out_mem);
    return poot_status_annotate(
        poot__ptx_check(ctx, r, host_visible ? "cuMemHostAlloc" : "cuMemAlloc"),
        "allocating %" PRIu64 " bytes of %s memory", size, host_visible ? "pinned host" : "device");
  }
  out_mem->size = size;
  if (!host_visible) {
    poot_status st = poot__ptx_wait(ctx, 0);
    if (st) return st; /* poisoned: the memory is left to the context */
  }
  return NULL;
}

void poot__ptx_mem_free(poot__ptx_ctx *ctx, poot__ptx_mem *mem) {
  if (!ctx || !mem || (!mem->dptr && !mem->host)) return;
  /* After a timeout a kernel may still use the memory; after a sticky error
   * the context reset frees everything at once. */
  if (ctx->poison_code == POOT_OK) {
    ctx->cu.CtxSetCurrent(ctx->ctx);
    if (mem->host)
      ctx->cu.MemFreeHost(mem->host);
    else
      ctx->cu.MemFree(mem->dptr);
  }
  memset(mem, 0, sizeof *mem);
}

static poot_status range_check(const poot__ptx_mem *mem, uint64_t offset, size_t size) {
  if (offset > mem->size || size > mem->size - offset)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "PTX device: range [%" PRIu64 ", +%zu) is outside a buffer of %" PRIu64
                            " bytes",
                            offset, size, mem->size);
  return NULL;
}

poot_status poot__ptx_mem_write(poot__ptx_ctx *ctx, poot__ptx_mem *mem, uint64_t offset,
                                const void *data, size_t size) {
  POOT_TRY(poot__ptx_enter(ctx));
  POOT_TRY(range_check(mem, offset, size));
  if (!size) return NULL;
  if (mem->host) {
    memcpy((char *)mem->host + offset, data, size);
    return NULL;
  }
  POOT_TRY(poot__ptx_check(ctx,
                           ctx->cu.MemcpyHtoDAsync(mem->dptr + offset, data, size, ctx->stream),
                           "cuMemcpyHtoDAsync"));
  return poot__ptx_wait(ctx, 0);
}

poot_status poot__ptx_mem_read(poot__ptx_ctx *ctx, const poot__ptx_mem *mem, uint64_t offset,
                               void *data, size_t size) {
  POOT_TRY(poot__ptx_enter(ctx));
  POOT_TRY(range_check(mem, offset, size));
  if (!size) return NULL;
  if (mem->host) {
    /* Kernels that wrote it have finished (the engine synchronizes first). */
    memcpy(data, (const char *)mem->host + offset, size);
    return NULL;
  }
  POOT_TRY(poot__ptx_check(ctx,
                           ctx->cu.MemcpyDtoHAsync(data, mem->dptr + offset, size, ctx->stream),
                           "cuMemcpyDtoHAsync"));
  return poot__ptx_wait(ctx, 0);
}

#endif /* POOT_HAVE_CUDA_H */
