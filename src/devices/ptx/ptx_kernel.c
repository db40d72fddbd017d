/* ptx_kernel.c — kernels (PTX modules), launches, and CUDA graphs.
 *
 * A kernel's arguments are what src/kir/render_ptx.c declares: one 64-bit
 * global address per binding in kernel->bindings order, one 32-bit value per
 * PUSH param in param order, and, when the kernel has checks, the device
 * address of the host-mapped fault record last. */
#ifdef POOT_HAVE_CUDA_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

#define JIT_LOG_BYTES 8192

/* Lets fn's launches pass `bytes` of dynamic shared memory (over 48 KiB,
 * up to the device's opt-in maximum, checked before). UNSUPPORTED naming
 * the kernel and the bytes where the driver lacks the call or refuses. */
static poot_status allow_dynamic_shared(poot__ptx_ctx *ctx, CUfunction fn, const char *name,
                                        uint64_t bytes) {
  if (!ctx->cu.FuncSetAttribute)
    return poot_status_make(POOT_UNSUPPORTED,
                            "PTX device: kernel '%s' needs %" PRIu64
                            " bytes of dynamic shared memory, and this CUDA driver has no "
                            "cuFuncSetAttribute to allow it",
                            name, bytes);
  CUresult r =
      ctx->cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (r == CUDA_SUCCESS) return NULL;
  poot_status st = poot__ptx_check(ctx, r, "cuFuncSetAttribute");
  poot_status_code code = poot_status_code_of(st);
  if (code == POOT_DEVICE_LOST || code == POOT_OUT_OF_MEMORY || code == POOT_POISONED)
    return poot_status_annotate(
        st, "allowing kernel '%s' %" PRIu64 " bytes of dynamic shared memory", name, bytes);
  poot_status out = poot_status_make(POOT_UNSUPPORTED,
                                     "PTX device: the CUDA driver refused kernel '%s' %" PRIu64
                                     " bytes of dynamic shared memory (%s allows %" PRIu32 "): %s",
                                     name, bytes, ctx->name, ctx->target.shared_memory_optin_bytes,
                                     poot_status_message(st));
  poot_status_free(st);
  return out;
}

poot_status poot__ptx_kernel_create(poot__ptx_ctx *ctx, const poot_kir_kernel *kernel,
                                    poot__ptx_kernel **out_kernel) {
  *out_kernel = NULL;
  POOT_TRY(poot__ptx_enter(ctx));
  uint32_t push = 0;
  for (uint32_t i = 0; i < kernel->param_count; i++)
    if (kernel->params[i].kind == POOT_KIR_PARAM_PUSH) push++;
  const uint64_t bytes = 8ull * kernel->binding_count + 4ull * push + 8;
  if (kernel->binding_count + push + 1 > POOT__PTX_MAX_ARGS || bytes > POOT__PTX_MAX_PARAM_BYTES)
    return poot_status_make(POOT_UNSUPPORTED,
                            "PTX device: kernel '%s' has %" PRIu32 " bindings and %" PRIu32
                            " push words (%" PRIu64 " bytes of parameters); CUDA takes at most %u",
                            kernel->name, kernel->binding_count, push, bytes,
                            POOT__PTX_MAX_PARAM_BYTES);
  /* Past 48 KiB the kernel's shared arrays are one dynamic window, which
   * this device must allow (its opt-in maximum) before any launch. */
  const uint64_t dyn = poot_kir_ptx_dynamic_shared_bytes(kernel);
  if (dyn > ctx->target.shared_memory_optin_bytes)
    return poot_status_make(POOT_UNSUPPORTED,
                            "PTX device: kernel '%s' needs %" PRIu64
                            " bytes of shared memory per block; %s allows at most %" PRIu32
                            " (its opt-in maximum)",
                            kernel->name, dyn, ctx->name,
                            ctx->target.shared_memory_optin_bytes > ctx->target.shared_memory_bytes
                                ? ctx->target.shared_memory_optin_bytes
                                : ctx->target.shared_memory_bytes);
  poot_strbuf ptx;
  poot_strbuf_init(&ptx);
  poot_status st = poot_kir_render_ptx(kernel, &ctx->target, &ptx);
  if (!st) st = poot_strbuf_status(&ptx);
  if (st) {
    poot_strbuf_deinit(&ptx);
    return st;
  }
  poot__ptx_kernel *k = poot_calloc(1, sizeof *k);
  char *info = poot_malloc(JIT_LOG_BYTES), *error = poot_malloc(JIT_LOG_BYTES);
  if (k) k->base.name = poot_strdup(kernel->name);
  if (!k || !info || !error || !k->base.name) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "PTX device: out of host memory");
    goto fail_early;
  }
  info[0] = error[0] = '\0';
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {info, (void *)(uintptr_t)JIT_LOG_BYTES, error, (void *)(uintptr_t)JIT_LOG_BYTES};
  /* The JIT runs outside the lock, so several threads compile at once. */
  CUresult r = ctx->cu.ModuleLoadDataEx(&k->module, ptx.data, 4, opts, vals);
  const bool loaded = r == CUDA_SUCCESS;
  if (!loaded)
    k->module = NULL;
  else
    r = ctx->cu.ModuleGetFunction(&k->fn, k->module, kernel->name);
  pthread_mutex_lock(&ctx->create_lock);
  if (!loaded) {
    info[JIT_LOG_BYTES - 1] = error[JIT_LOG_BYTES - 1] = '\0';
    st = poot__ptx_check(ctx, r, "cuModuleLoadDataEx");
    poot_status_code code = poot_status_code_of(st);
    /* The driver refused the PTX: that is the renderer's output being
     * malformed for this driver (FORMAT), unless the cause is the device. */
    if (code == POOT_UNSUPPORTED && r == CUDA_ERROR_INVALID_PTX) code = POOT_FORMAT;
    if (code != POOT_OUT_OF_MEMORY && code != POOT_DEVICE_LOST) {
      poot_status out =
          poot_status_make(code,
                           "PTX device: the CUDA driver refused kernel '%s' (hash %016" PRIx64
                           ") for %s: %s; JIT log: %s%s%s",
                           kernel->name, kernel->hash, ctx->target.name, poot_status_message(st),
                           error[0] ? error : "(empty)", info[0] ? "; info: " : "", info);
      poot_status_free(st);
      st = out;
    }
    goto fail;
  }
  if (r != CUDA_SUCCESS) {
    st = poot__ptx_check(ctx, r, "cuModuleGetFunction");
    goto fail;
  }
  if (dyn) {
    st = allow_dynamic_shared(ctx, k->fn, kernel->name, dyn);
    if (st) goto fail;
  }
  k->shared_bytes = (uint32_t)dyn;
  for (int d = 0; d < 3; d++)
    k->block[d] = kernel->workgroup_size[d] ? kernel->workgroup_size[d] : 1;
  k->hash = kernel->hash;
  k->base.binding_count = kernel->binding_count;
  k->base.push_count = push;
  k->base.has_checks = kernel->has_checks;
  for (uint32_t i = 0; i < kernel->binding_count; i++)
    if (kernel->bindings[i].access & POOT_KIR_ACCESS_WRITE) k->write_mask |= 1ull << i;
  k->next = ctx->kernels;
  ctx->kernels = k;
  pthread_mutex_unlock(&ctx->create_lock);
  poot_free(info);
  poot_free(error);
  poot_strbuf_deinit(&ptx);
  *out_kernel = k;
  return NULL;

fail:
  if (k && k->module && ctx->poison_code == POOT_OK) ctx->cu.ModuleUnload(k->module);
  pthread_mutex_unlock(&ctx->create_lock);
fail_early:
  if (k) poot_free(k->base.name);
  poot_free(k);
  poot_free(info);
  poot_free(error);
  poot_strbuf_deinit(&ptx);
  return st;
}

void poot__ptx_kernel_destroy(poot__ptx_ctx *ctx, poot__ptx_kernel *kernel) {
  if (!ctx || !kernel) return;
  pthread_mutex_lock(&ctx->create_lock);
  for (poot__ptx_kernel **p = &ctx->kernels; *p; p = &(*p)->next)
    if (*p == kernel) {
      *p = kernel->next;
      break;
    }
  pthread_mutex_unlock(&ctx->create_lock);
  /* A poisoned context keeps its modules: after a timeout a kernel may still
   * run, after a sticky error the context reset unloads them. */
  if (ctx->poison_code == POOT_OK) {
    ctx->cu.CtxSetCurrent(ctx->ctx);
    ctx->cu.ModuleUnload(kernel->module);
  }
  poot_free(kernel->base.name);
  poot_free(kernel);
}

/* ---------------------------------------------------------------- launches */

static poot_status launch_one(poot__ptx_ctx *ctx, const poot__ptx_cmd *c) {
  if (c->is_copy) {
    CUresult r = ctx->cu.MemcpyAsync(c->dst, c->src, (size_t)c->size, ctx->stream);
    return r == CUDA_SUCCESS ? NULL : poot__ptx_check(ctx, r, "cuMemcpyAsync");
  }
  const poot__ptx_kernel *k = c->kernel;
  void *args[POOT__PTX_MAX_ARGS];
  uint32_t push[POOT__PTX_MAX_ARGS];
  CUdeviceptr bufs[POOT__PTX_MAX_ARGS];
  uint32_t n = 0;
  for (uint32_t i = 0; i < k->base.binding_count; i++) {
    bufs[i] = c->buffers[i];
    args[n++] = &bufs[i];
  }
  for (uint32_t i = 0; i < k->base.push_count; i++) {
    push[i] = c->push[i];
    args[n++] = &push[i];
  }
  CUdeviceptr fault = ctx->fault_dev;
  if (k->base.has_checks) args[n++] = &fault;
  uint32_t g0 = c->grid[0] ? c->grid[0] : 1, g1 = c->grid[1] ? c->grid[1] : 1,
           g2 = c->grid[2] ? c->grid[2] : 1;
  CUresult r;
  if (ctx->target.grid_dependency) {
    /* Programmatic stream serialization: this launch may begin while the
     * kernel before it still runs; the kernel's first instruction
     * (griddepcontrol.wait, rendered for this target) waits for it. Inside a
     * capture the edge becomes a programmatic graph edge. */
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = g0, cfg.gridDimY = g1, cfg.gridDimZ = g2;
    cfg.blockDimX = k->block[0], cfg.blockDimY = k->block[1], cfg.blockDimZ = k->block[2];
    cfg.sharedMemBytes = k->shared_bytes;
    cfg.hStream = ctx->stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    r = ctx->cu.LaunchKernelEx(&cfg, k->fn, args, NULL);
  } else {
    r = ctx->cu.LaunchKernel(k->fn, g0, g1, g2, k->block[0], k->block[1], k->block[2],
                             k->shared_bytes, ctx->stream, args, NULL);
  }
  if (r == CUDA_SUCCESS) return NULL;
  return poot_status_annotate(poot__ptx_check(ctx, r, "cuLaunchKernel"),
                              "launching kernel '%s' on grid (%" PRIu32 ",%" PRIu32 ",%" PRIu32 ")",
                              k->base.name, g0, g1, g2);
}

poot_status poot__ptx_launch(poot__ptx_ctx *ctx, const poot__ptx_cmd *cmds, size_t count) {
  POOT_TRY(poot__ptx_enter(ctx));
  for (size_t i = 0; i < count; i++) POOT_TRY(launch_one(ctx, &cmds[i]));
  return NULL;
}

/* ------------------------------------------------------------------ graphs */

poot_status poot__ptx_graph_capture(poot__ptx_ctx *ctx, const poot__ptx_cmd *cmds, size_t count,
                                    poot__ptx_graph *out_graph) {
  memset(out_graph, 0, sizeof *out_graph);
  POOT_TRY(poot__ptx_enter(ctx));
  uint64_t t0 = poot_time_ns();
  /* Thread-local mode: only this thread's unsafe calls are refused while
   * capturing; other threads of the process (another device) go on. */
  poot_status st = poot__ptx_check(
      ctx, ctx->cu.StreamBeginCapture(ctx->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      "cuStreamBeginCapture");
  if (st) return st;
  for (size_t i = 0; i < count && !st; i++) st = launch_one(ctx, &cmds[i]);
  /* Capture always ends, so that the stream is usable again. */
  CUgraph graph = NULL;
  CUresult r = ctx->cu.StreamEndCapture(ctx->stream, &graph);
  if (!st) st = poot__ptx_check(ctx, r, "cuStreamEndCapture");
  if (!st && !graph)
    st = poot_status_make(POOT_INTERNAL, "PTX device: cuStreamEndCapture returned no graph");
  if (st) {
    if (graph && ctx->poison_code == POOT_OK) ctx->cu.GraphDestroy(graph);
    return st;
  }
  CUgraphExec exec = NULL;
  r = ctx->cu.GraphInstantiateWithFlags(&exec, graph, 0);
  if (r != CUDA_SUCCESS) {
    st = poot__ptx_check(ctx, r, "cuGraphInstantiate");
    if (ctx->poison_code == POOT_OK) ctx->cu.GraphDestroy(graph);
    return st;
  }
  out_graph->graph = graph;
  out_graph->exec = exec;
  out_graph->dispatch_count = count;
  out_graph->capture_ns = poot_time_ns() - t0;
  return NULL;
}

poot_status poot__ptx_graph_launch(poot__ptx_ctx *ctx, const poot__ptx_graph *graph) {
  POOT_TRY(poot__ptx_enter(ctx));
  return poot__ptx_check(ctx, ctx->cu.GraphLaunch(graph->exec, ctx->stream), "cuGraphLaunch");
}

void poot__ptx_graph_destroy(poot__ptx_ctx *ctx, poot__ptx_graph *graph) {
  if (!ctx || !graph || !graph->exec) return;
  if (ctx->poison_code == POOT_OK) {
    ctx->cu.CtxSetCurrent(ctx->ctx);
    ctx->cu.GraphExecDestroy(graph->exec);
    ctx->cu.GraphDestroy(graph->graph);
  }
  memset(graph, 0, sizeof *graph);
}

#endif /* POOT_HAVE_CUDA_H */
