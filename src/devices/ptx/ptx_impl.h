/* ptx_impl.h — private to the PTX device (src/devices/ptx/).
 *
 * The PTX device runs KIR kernels rendered to PTX on NVIDIA GPUs through the
 * CUDA driver API. libcuda.so.1 is opened at run time (cuda_api.c); the
 * toolkit's cuda.h is used for its types and constants only, never linked.
 *
 * Objects:
 *  - poot__cuda: the driver's entry points, resolved by name with dlsym.
 *  - poot__ptx_ctx: one GPU: the retained primary context, one stream, the
 *    host-mapped fault record, the poison state, the compiled kernels (so a
 *    fault can name its kernel from the hash in the record).
 *  - poot__ptx_mem: a device buffer (cuMemAlloc) or a host-visible buffer
 *    (pinned, device-mapped cuMemHostAlloc); both have stable addresses.
 *  - poot__ptx_kernel: a module loaded from PTX text and its one function.
 *  - poot__ptx_graph: a captured, instantiated CUDA graph of dispatches.
 *
 * Threading: a context and everything made from it is used by one thread
 * at a time (the engine serializes calls); the context is made current on
 * the calling thread at every entry that touches the driver.
 *
 * Faults: every driver call goes through poot__ptx_check, which maps the
 * result to a status. A sticky error (the context can no longer run work:
 * illegal address, trap, launch failure, ...) poisons the context: the
 * fault record is read first, so that a failed KIR check is reported as
 * KERNEL_FAULT naming the kernel and the trap code; anything else is
 * DEVICE_LOST. A wait that outlasts its deadline returns TIMEOUT and
 * poisons too. Once poisoned, every entry returns POISONED without calling
 * the driver. */
#ifndef POOT_DEVICES_PTX_IMPL_H
#define POOT_DEVICES_PTX_IMPL_H

#include <cuda.h>
#include <pthread.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/kir.h"
#include "ptx_device.h"

/* ---------------------------------------------------------- driver table */

typedef struct poot__cuda {
  poot_dylib *lib;
  CUresult(CUDAAPI *Init)(unsigned int);
  CUresult(CUDAAPI *DriverGetVersion)(int *);
  CUresult(CUDAAPI *GetErrorName)(CUresult, const char **);
  CUresult(CUDAAPI *GetErrorString)(CUresult, const char **);
  CUresult(CUDAAPI *DeviceGetCount)(int *);
  CUresult(CUDAAPI *DeviceGet)(CUdevice *, int);
  CUresult(CUDAAPI *DeviceGetName)(char *, int, CUdevice);
  CUresult(CUDAAPI *DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult(CUDAAPI *DeviceTotalMem)(size_t *, CUdevice);
  CUresult(CUDAAPI *DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult(CUDAAPI *DevicePrimaryCtxRelease)(CUdevice);
  CUresult(CUDAAPI *DevicePrimaryCtxReset)(CUdevice);
  CUresult(CUDAAPI *CtxSetCurrent)(CUcontext);
  CUresult(CUDAAPI *CtxSynchronize)(void);
  CUresult(CUDAAPI *StreamCreate)(CUstream *, unsigned int);
  CUresult(CUDAAPI *StreamDestroy)(CUstream);
  CUresult(CUDAAPI *StreamQuery)(CUstream);
  CUresult(CUDAAPI *StreamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult(CUDAAPI *StreamEndCapture)(CUstream, CUgraph *);
  CUresult(CUDAAPI *GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult(CUDAAPI *GraphLaunch)(CUgraphExec, CUstream);
  CUresult(CUDAAPI *GraphExecDestroy)(CUgraphExec);
  CUresult(CUDAAPI *GraphDestroy)(CUgraph);
  CUresult(CUDAAPI *EventCreate)(CUevent *, unsigned int);
  CUresult(CUDAAPI *EventRecord)(CUevent, CUstream);
  CUresult(CUDAAPI *EventDestroy)(CUevent);
  CUresult(CUDAAPI *EventElapsedTime)(float *, CUevent, CUevent); /* _v2 where present */
  CUresult(CUDAAPI *ModuleLoadDataEx)(CUmodule *, const void *, unsigned int, CUjit_option *,
                                      void **);
  CUresult(CUDAAPI *ModuleUnload)(CUmodule);
  CUresult(CUDAAPI *ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  /* Optional: a kernel's dynamic shared memory past 48 KiB (the launch
   * fails without it: poot__ptx_kernel_create says so). */
  CUresult(CUDAAPI *FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult(CUDAAPI *LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                  unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
                                  void **, void **);
  /* Optional (CUDA 11.8+): launches with programmatic stream serialization. */
  CUresult(CUDAAPI *LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
  CUresult(CUDAAPI *MemAlloc)(CUdeviceptr *, size_t);
  CUresult(CUDAAPI *MemFree)(CUdeviceptr);
  CUresult(CUDAAPI *MemHostAlloc)(void **, size_t, unsigned int);
  CUresult(CUDAAPI *MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned int);
  CUresult(CUDAAPI *MemFreeHost)(void *);
  CUresult(CUDAAPI *MemGetInfo)(size_t *, size_t *);
  CUresult(CUDAAPI *MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult(CUDAAPI *MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult(CUDAAPI *MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult(CUDAAPI *MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
} poot__cuda;

/* Fills the table with the driver's entry points; libcuda.so.1 is opened on
 * the first call and stays loaded for the process's life (its threads run
 * until exit). NO_DEVICE ("libcuda.so.1 not found: ...") when the driver
 * library is absent, NOT_FOUND when it lacks an entry point (a driver older
 * than CUDA 11.4). Thread safe. */
POOT_MUST_USE poot_status poot__cuda_open(poot__cuda *out_api);
void poot__cuda_close(poot__cuda *api); /* NULL-safe, idempotent */
/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
 * into buf (always NUL-terminated). */
const char *poot__cuda_error_text(const poot__cuda *api, CUresult r, char *buf, size_t size);
/* Whether a driver result leaves the context unusable (sticky). */
bool poot__cuda_error_is_sticky(CUresult r);

/* ---------------------------------------------------------------- context */

/* The fault record (src/kir/render_ptx.c writes it; little-endian words):
 * [0] OR of (1 << trap code) over failing threads, [1] state (0 empty,
 * 1 claimed, 2 complete), [2] trap code, [3..4] kernel hash low/high,
 * [5..7] workgroup id x/y/z, [8] local linear thread index. 64 bytes. */
#define POOT__PTX_FAULT_RECORD_BYTES 64u
#define POOT__PTX_FAULT_WORDS 16u

typedef struct poot__ptx_kernel poot__ptx_kernel;

typedef struct poot__ptx_ctx_options {
  int device_index;            /* CUDA device ordinal */
  uint64_t default_timeout_ns; /* 0 → 600 s (DESIGN §6) */
} poot__ptx_ctx_options;

typedef struct poot__ptx_ctx {
  poot__cuda cu;
  CUdevice dev;
  CUcontext ctx; /* the device's primary context, retained */
  CUstream stream;
  int index;
  char name[128];
  int cc_major, cc_minor;
  int sm_count;
  uint64_t total_mem;
  int driver_version;
  poot_kir_target target;
  volatile uint32_t *fault; /* host view of the fault record (pinned, mapped) */
  CUdeviceptr fault_dev;    /* its device address: every checked kernel's last argument */
  uint64_t timeout_ns;
  poot__ptx_kernel *kernels; /* every live kernel, for naming faults */
  /* Kernels may be created on several threads at once (kernels_create):
   * the kernel list and a creation's failure path (which may poison) take
   * this lock. */
  pthread_mutex_t create_lock;
  /* Poison: set once; every later entry returns POISONED with this reason. */
  poot_status_code poison_code; /* POOT_OK while healthy */
  char poison_reason[512];
  bool work_may_run; /* a timed-out launch may still be running: leak, don't free */
  /* The kernel hash of the last complete fault record (for naming the
   * dispatch); valid when fault_seen. */
  bool fault_seen;
  uint64_t fault_hash;
} poot__ptx_ctx;

/* Opens the driver, picks device `options->device_index`, retains its
 * primary context, creates one non-blocking stream and the fault record.
 * NO_DEVICE when the driver or the device is absent, UNSUPPORTED below
 * compute capability 8.0. */
POOT_MUST_USE poot_status poot__ptx_ctx_create(const poot__ptx_ctx_options *options,
                                               poot__ptx_ctx **out_ctx);
/* Frees what is safe to free. After a TIMEOUT (a kernel may still run) the
 * device memory and stream are deliberately leaked; after a sticky error the
 * primary context is reset (cuDevicePrimaryCtxReset) so that a new context
 * on the same GPU starts clean. NULL-safe. */
void poot__ptx_ctx_destroy(poot__ptx_ctx *ctx);

/* POISONED (naming the first fault) when poisoned, else NULL; makes the
 * context current on this thread. Every entry point starts with it. */
POOT_MUST_USE poot_status poot__ptx_enter(poot__ptx_ctx *ctx);
/* Maps a driver result to a status ("what" names the call for the
 * message); poisons on a sticky error after reading the fault record. */
POOT_MUST_USE poot_status poot__ptx_check(poot__ptx_ctx *ctx, CUresult r, const char *what);
/* Poisons with `code` and the message of `st` (consumed); returns a status
 * with the same code and message. */
POOT_MUST_USE poot_status poot__ptx_poison(poot__ptx_ctx *ctx, poot_status st);
/* Waits for the stream with a deadline (timeout_ns; 0 → ctx->timeout_ns):
 * polls cuStreamQuery, spinning first and then sleeping with a growing
 * interval (up to 1 ms). TIMEOUT poisons; a fault is reported as by
 * poot__ptx_check. */
POOT_MUST_USE poot_status poot__ptx_wait(poot__ptx_ctx *ctx, uint64_t timeout_ns);
/* Clears the fault record before work that may trap. */
void poot__ptx_fault_clear(poot__ptx_ctx *ctx);

/* ----------------------------------------------------------------- memory */

typedef struct poot__ptx_mem {
  CUdeviceptr dptr; /* device address (of the mapping, for host-visible) */
  void *host;       /* host-visible: the pinned host address; else NULL */
  uint64_t size;
} poot__ptx_mem;

/* Device memory (host_visible false) or pinned, device-mapped host memory
 * (host_visible true: kernels read and write it in place, the host through
 * mem->host). Zero-filled. OUT_OF_MEMORY naming the size. */
POOT_MUST_USE poot_status poot__ptx_mem_alloc(poot__ptx_ctx *ctx, uint64_t size, bool host_visible,
                                              poot__ptx_mem *out_mem);
void poot__ptx_mem_free(poot__ptx_ctx *ctx, poot__ptx_mem *mem); /* NULL-safe */
/* Synchronous copies (stream-ordered, then waited for with the deadline). */
POOT_MUST_USE poot_status poot__ptx_mem_write(poot__ptx_ctx *ctx, poot__ptx_mem *mem,
                                              uint64_t offset, const void *data, size_t size);
POOT_MUST_USE poot_status poot__ptx_mem_read(poot__ptx_ctx *ctx, const poot__ptx_mem *mem,
                                             uint64_t offset, void *data, size_t size);

/* ---------------------------------------------------------------- kernels */

struct poot__ptx_kernel {
  poot_device_kernel base; /* first member: name (owned), binding/push counts, has_checks */
  uint64_t hash;           /* the KIR kernel's hash (what a fault record names) */
  CUmodule module;
  CUfunction fn;
  uint32_t block[3];
  /* Dynamic shared bytes every launch passes (poot_kir_ptx_dynamic_shared_bytes;
   * 0: static shared only); cuFuncSetAttribute allowed it at creation. */
  uint32_t shared_bytes;
  uint64_t write_mask;    /* bit b: the kernel may store to binding b */
  poot__ptx_kernel *next; /* ctx->kernels list */
};

/* Renders `kernel` for the context's target and loads it with
 * cuModuleLoadDataEx; a JIT failure is FORMAT (or UNSUPPORTED) whose message
 * holds the driver's error log. A kernel with a dynamic shared window gets
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set to it; UNSUPPORTED
 * naming the kernel and the bytes when the window is over the device's
 * opt-in maximum, the driver lacks cuFuncSetAttribute or refuses it. */
POOT_MUST_USE poot_status poot__ptx_kernel_create(poot__ptx_ctx *ctx, const poot_kir_kernel *kernel,
                                                  poot__ptx_kernel **out_kernel);
void poot__ptx_kernel_destroy(poot__ptx_ctx *ctx, poot__ptx_kernel *kernel); /* NULL-safe */

/* One command as kept by a recording: a dispatch (kernel, grid, buffer
 * addresses in kernel->bindings order, push values in PUSH order) or a copy
 * of `size` bytes between device addresses. */
/* A launch passes each binding as a 64-bit address, each push word as 32
 * bits and the fault word's address last; CUDA's parameter space holds 4,096
 * bytes. The PTX target's own limits (64 bindings, 4,096 push bytes) bound
 * the counts; the bytes are checked per kernel. */
#define POOT__PTX_MAX_PARAM_BYTES 4096u
#define POOT__PTX_MAX_ARGS (64 + 1024 + 1)
typedef struct poot__ptx_cmd {
  bool is_copy;
  const poot__ptx_kernel *kernel;
  uint32_t grid[3];
  const CUdeviceptr *buffers;
  const uint32_t *push;
  CUdeviceptr src, dst;
  uint64_t size;
} poot__ptx_cmd;

/* Issues the commands on the stream in order (no wait). */
POOT_MUST_USE poot_status poot__ptx_launch(poot__ptx_ctx *ctx, const poot__ptx_cmd *cmds,
                                           size_t count);

/* ----------------------------------------------------------------- graphs */

typedef struct poot__ptx_graph {
  CUgraph graph;
  CUgraphExec exec;
  size_t dispatch_count;
  uint64_t capture_ns; /* capture + instantiate time */
} poot__ptx_graph;

/* Captures the dispatches (cuStreamBeginCapture in thread-local mode, every
 * launch, cuStreamEndCapture) and instantiates the graph. */
POOT_MUST_USE poot_status poot__ptx_graph_capture(poot__ptx_ctx *ctx, const poot__ptx_cmd *cmds,
                                                  size_t count, poot__ptx_graph *out_graph);
/* Launches the graph on the stream (no wait). */
POOT_MUST_USE poot_status poot__ptx_graph_launch(poot__ptx_ctx *ctx, const poot__ptx_graph *graph);
void poot__ptx_graph_destroy(poot__ptx_ctx *ctx, poot__ptx_graph *graph); /* NULL-safe */

#endif
