/* A fake libcuda.so.1 for the PTX device's host-side tests (ptx_device_fake):
 * the driver entry points the device uses, over host memory, so that the
 * device's bookkeeping (argument order, capture and replay, the fault
 * record, sticky errors, timeouts, poisoning, leaks under ASan) is tested
 * on machines without a GPU but with the CUDA headers.
 *
 * It cannot run PTX. Kernels are recognized by their entry name:
 *   fk_add(src, dst, slots, n)  dst[i] = src[i] + slots[0] for i < n (u32)
 *   fk_trap(buf, code, fault)   fills the fault record as the PTX renderer's
 *                               handler does (kernel hash read from the
 *                               module's header comment), then a sticky
 *                               CUDA_ERROR_LAUNCH_FAILED
 *   fk_lost(buf)                a sticky CUDA_ERROR_ILLEGAL_ADDRESS, no record
 *   fk_hang(buf)                the stream never becomes idle
 * A module whose entry is fk_jit_error fails to load with a JIT error log.
 * Work runs when it is issued (eagerly, or at cuGraphLaunch for a captured
 * graph); errors surface at the next cuStreamQuery, as on a GPU.
 * fakecuda_reset() clears the sticky error and the hang (a "new process").
 * Dynamic shared memory: the device reports an opt-in maximum of 232,448
 * bytes (an H100's); cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
 * raises a function's limit from 48 KiB (refused past the maximum, and
 * always for an entry named fk_refuse_shared); a launch past the limit
 * fails as on the driver. fakecuda_shared_log() tells the test what was
 * set and what the last kernel that ran was launched with (through
 * cuLaunchKernel or cuLaunchKernelEx, eagerly or from a captured graph).
 * With POOT_FAKECUDA_PTX_DIR set, every module's PTX is also written there
 * (NNNN_ENTRY.ptx, numbered in load order): a program such as `poot bench
 * --device ptx` (whose kernels load but do nothing here) then shows which
 * kernels the driver would JIT, for timing them with ptxas offline
 * (bench/ptx_compile_time.py, docs/PERFORMANCE.md). */
#include <cuda.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FK_MAX_OPS 4096
#define FK_MAX_ALLOCS 4096
#define FK_NAME_MAX 256 /* a kernel name, with its NUL */

typedef struct fk_op {
  int kind;        /* 0 kernel, 1 copy */
  int ex;          /* launched through cuLaunchKernelEx */
  unsigned shared; /* dynamic shared bytes the launch passed */
  const struct CUfunc_st *fn;
  uint64_t args[8];
  CUdeviceptr dst, src;
  size_t size;
} fk_op;

struct CUfunc_st {
  char name[FK_NAME_MAX];
  uint64_t hash;
  int max_dynamic; /* cuFuncSetAttribute's limit; 0: 48 KiB */
};
struct CUmod_st {
  struct CUfunc_st fn;
};
struct CUgraph_st {
  int count;
  fk_op ops[FK_MAX_OPS];
};
struct CUgraphExec_st {
  struct CUgraph_st g;
};
struct CUstream_st {
  int capturing;
  struct CUgraph_st *graph;
};
struct CUevent_st {
  int recorded;
};
struct CUctx_st {
  int retained;
};

static CUresult g_sticky;             /* process-wide, as on the real driver */
static CUresult g_pending;            /* raised at the next stream query */
static int g_hung;                    /* the stream never finishes */
static struct CUctx_st g_ctx;         /* the primary context */
static void *g_allocs[FK_MAX_ALLOCS]; /* live allocations stay reachable */
#define FK_SHARED_STATIC 49152
#define FK_SHARED_OPTIN 232448
static unsigned g_attr_calls; /* successful MAX_DYNAMIC_SHARED_SIZE_BYTES calls */
static int g_attr_bytes;      /* the last one's value */
static unsigned g_runs;       /* kernels run */
static unsigned g_run_shared; /* the last one's dynamic shared bytes */
static int g_run_ex;          /* and whether it came through cuLaunchKernelEx */

void fakecuda_shared_log(unsigned *attr_calls, int *attr_bytes, unsigned *runs,
                         unsigned *run_shared, int *run_ex);
void fakecuda_shared_log(unsigned *attr_calls, int *attr_bytes, unsigned *runs,
                         unsigned *run_shared, int *run_ex) {
  *attr_calls = g_attr_calls;
  *attr_bytes = g_attr_bytes;
  *runs = g_runs;
  *run_shared = g_run_shared;
  *run_ex = g_run_ex;
}

void fakecuda_reset(void);
void fakecuda_reset(void) {
  g_sticky = CUDA_SUCCESS;
  g_pending = CUDA_SUCCESS;
  g_hung = 0;
}

/* Modules may be loaded on several threads at once (the device's
 * kernels_create), as the real driver allows: the allocation table is
 * locked. */
static pthread_mutex_t g_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *fk_alloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  pthread_mutex_lock(&g_alloc_lock);
  for (int i = 0; p && i < FK_MAX_ALLOCS; i++)
    if (!g_allocs[i]) {
      g_allocs[i] = p;
      pthread_mutex_unlock(&g_alloc_lock);
      return p;
    }
  pthread_mutex_unlock(&g_alloc_lock);
  free(p);
  return NULL;
}

static CUresult fk_free(void *p) {
  pthread_mutex_lock(&g_alloc_lock);
  for (int i = 0; i < FK_MAX_ALLOCS; i++)
    if (g_allocs[i] == p) {
      g_allocs[i] = NULL;
      pthread_mutex_unlock(&g_alloc_lock);
      free(p);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&g_alloc_lock);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
    case CUDA_ERROR_LAUNCH_FAILED:
      *s = "CUDA_ERROR_LAUNCH_FAILED";
      break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    case CUDA_ERROR_INVALID_PTX:
      *s = "CUDA_ERROR_INVALID_PTX";
      break;
    case CUDA_ERROR_NOT_READY:
      *s = "CUDA_ERROR_NOT_READY";
      break;
    default:
      *s = "CUDA_ERROR_FAKE";
      break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_LAUNCH_FAILED ? "unspecified launch failure" : "fake driver error";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice *d, int i) {
  if (i != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "poot fake GPU");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *v = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = FK_SHARED_OPTIN;
      break;
    default:
      *v = 0;
      break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t *n, CUdevice d) {
  (void)d;
  *n = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d;
  if (g_sticky) return g_sticky;
  g_ctx.retained++;
  *c = &g_ctx;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  (void)d;
  if (g_ctx.retained > 0) g_ctx.retained--;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) {
  (void)d;
  return g_sticky;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  (void)c;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize(void) {
  return g_sticky;
}
CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags) {
  (void)flags;
  *s = fk_alloc(sizeof **s);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  return fk_free(s);
}
CUresult CUDAAPI cuStreamQuery(CUstream s) {
  (void)s;
  if (g_pending) {
    g_sticky = g_pending;
    g_pending = CUDA_SUCCESS;
  }
  if (g_sticky) return g_sticky;
  return g_hung ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

/* -------------------------------------------------------------- execution */

static void fk_run(const fk_op *op) {
  if (op->kind == 1) {
    memcpy((void *)(uintptr_t)op->dst, (const void *)(uintptr_t)op->src, op->size);
    return;
  }
  const struct CUfunc_st *f = op->fn;
  g_runs++;
  g_run_shared = op->shared;
  g_run_ex = op->ex;
  if (strcmp(f->name, "fk_add") == 0) {
    const uint32_t *src = (const uint32_t *)(uintptr_t)op->args[0];
    uint32_t *dst = (uint32_t *)(uintptr_t)op->args[1];
    const uint32_t *slots = (const uint32_t *)(uintptr_t)op->args[2];
    for (uint32_t i = 0; i < (uint32_t)op->args[3]; i++) dst[i] = src[i] + slots[0];
  } else if (strcmp(f->name, "fk_trap") == 0) {
    uint32_t code = (uint32_t)op->args[1];
    volatile uint32_t *rec = (uint32_t *)(uintptr_t)op->args[2];
    rec[0] |= 1u << code;
    rec[2] = code;
    rec[3] = (uint32_t)f->hash;
    rec[4] = (uint32_t)(f->hash >> 32);
    rec[5] = 1;
    rec[6] = rec[7] = 0;
    rec[8] = 3;
    rec[1] = 2;
    g_pending = CUDA_ERROR_LAUNCH_FAILED;
  } else if (strcmp(f->name, "fk_lost") == 0) {
    g_pending = CUDA_ERROR_ILLEGAL_ADDRESS;
  } else if (strcmp(f->name, "fk_hang") == 0) {
    g_hung = 1;
  }
}

static CUresult fk_issue(CUstream s, const fk_op *op) {
  if (g_sticky) return g_sticky;
  if (s->capturing) {
    if (s->graph->count >= FK_MAX_OPS) return CUDA_ERROR_OUT_OF_MEMORY;
    s->graph->ops[s->graph->count++] = *op;
    return CUDA_SUCCESS;
  }
  if (!g_hung && !g_pending) fk_run(op);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  (void)mode;
  if (s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  s->graph = fk_alloc(sizeof *s->graph);
  if (!s->graph) return CUDA_ERROR_OUT_OF_MEMORY;
  s->capturing = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *g) {
  if (!s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = 0;
  *g = s->graph;
  s->graph = NULL;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long f) {
  (void)f;
  *e = fk_alloc(sizeof **e);
  if (!*e) return CUDA_ERROR_OUT_OF_MEMORY;
  (*e)->g = *g;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
  for (int i = 0; i < e->g.count; i++) {
    CUresult r = fk_issue(s, &e->g.ops[i]);
    if (r) return r;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) {
  return fk_free(e);
}
CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
  return fk_free(g);
}
CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) {
  (void)flags;
  *e = fk_alloc(sizeof **e);
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  (void)s;
  e->recorded = 1;
  return g_sticky;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) {
  return fk_free(e);
}
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 0.004f;
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- modules */

/* The module's text under POOT_FAKECUDA_PTX_DIR, numbered in load order. */
static void fk_dump(const char *text, const char *entry, size_t len) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static unsigned count;
  const char *dir = getenv("POOT_FAKECUDA_PTX_DIR");
  if (!dir) return;
  pthread_mutex_lock(&lock);
  char path[4096];
  snprintf(path, sizeof path, "%s/%04u_%.*s.ptx", dir, count++, (int)len, entry);
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n,
                                    CUjit_option *opts, void **vals) {
  const char *text = image;
  const char *entry = strstr(text, ".visible .entry ");
  const char *hash = strstr(text, "(hash ");
  if (!entry || !hash || strncmp(text, "//\n// Generated by poot", 23) != 0)
    return CUDA_ERROR_INVALID_PTX;
  entry += strlen(".visible .entry ");
  size_t len = strcspn(entry, "(");
  fk_dump(text, entry, len);
  if (len >= FK_NAME_MAX) return CUDA_ERROR_INVALID_PTX;
  if (strncmp(entry, "fk_jit_error", len) == 0) {
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) log = vals[i];
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) size = (size_t)(uintptr_t)vals[i];
    }
    if (log && size) snprintf(log, size, "ptxas fatal   : fake syntax error in 'fk_jit_error'");
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = fk_alloc(sizeof **m);
  if (!*m) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy((*m)->fn.name, entry, len);
  (*m)->fn.name[len] = '\0';
  (*m)->fn.hash = strtoull(hash + 6, NULL, 16);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  return fk_free(m);
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  if (strcmp(m->fn.name, name) != 0) return CUDA_ERROR_NOT_FOUND;
  *f = &m->fn;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value) {
  if (g_sticky) return g_sticky;
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_SUCCESS;
  if (value < 0 || value > FK_SHARED_OPTIN || strcmp(f->name, "fk_refuse_shared") == 0)
    return CUDA_ERROR_INVALID_VALUE;
  f->max_dynamic = value;
  g_attr_calls++;
  g_attr_bytes = value;
  return CUDA_SUCCESS;
}

static CUresult fk_launch(CUfunction f, unsigned shared, CUstream s, void **params, int ex) {
  fk_op op = {.kind = 0, .fn = f, .shared = shared, .ex = ex};
  /* As on the driver: dynamic shared memory past 48 KiB needs the
   * function's attribute first. */
  if (shared > (unsigned)(f->max_dynamic ? f->max_dynamic : FK_SHARED_STATIC))
    return CUDA_ERROR_INVALID_VALUE;
  /* Pointer arguments are 8 bytes, push params 4: the fake knows which. */
  int nargs = 0, is_u32[8] = {0};
  if (strcmp(f->name, "fk_add") == 0) {
    nargs = 4;
    is_u32[3] = 1;
  } else if (strcmp(f->name, "fk_trap") == 0) {
    nargs = 3;
    is_u32[1] = 1;
  } else {
    nargs = 1;
  }
  for (int i = 0; i < nargs; i++)
    op.args[i] = is_u32[i] ? *(const uint32_t *)params[i] : *(const uint64_t *)params[i];
  return fk_issue(s, &op);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shared, CUstream s, void **params, void **extra) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)extra;
  return fk_launch(f, shared, s, params, 0);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
                                  void **extra) {
  (void)extra;
  return fk_launch(f, config->sharedMemBytes, config->hStream, params, 1);
}

/* ----------------------------------------------------------------- memory */

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n) {
  void *m = fk_alloc(n);
  *p = (CUdeviceptr)(uintptr_t)m;
  return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  return fk_free((void *)(uintptr_t)p);
}
CUresult CUDAAPI cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  (void)flags;
  *p = fk_alloc(n);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags) {
  (void)flags;
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFreeHost(void *p) {
  return fk_free(p);
}
CUresult CUDAAPI cuMemGetInfo(size_t *free_bytes, size_t *total) {
  *free_bytes = *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, CUstream s) {
  fk_op op = {.kind = 1, .dst = d, .src = (CUdeviceptr)(uintptr_t)h, .size = n};
  return fk_issue(s, &op);
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, CUstream s) {
  fk_op op = {.kind = 1, .dst = (CUdeviceptr)(uintptr_t)h, .src = d, .size = n};
  return fk_issue(s, &op);
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  fk_op op = {.kind = 1, .dst = d, .src = src, .size = n};
  return fk_issue(s, &op);
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  if (g_sticky) return g_sticky;
  (void)s;
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
