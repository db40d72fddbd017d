/* cuda_api.c — the CUDA driver's entry points, loaded at run time.
 *
 * poot never links libcuda: one binary must run on machines without an
 * NVIDIA driver (DESIGN §6). The toolkit's cuda.h gives the types; its
 * macros map API names to versioned symbols (cuMemAlloc → cuMemAlloc_v2),
 * so the table below names the exported symbols explicitly, as of the
 * CUDA 12/13 ABI. Every symbol here exists since CUDA 11.4. */
#ifdef POOT_HAVE_CUDA_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* The driver is loaded once per process and never unloaded: cuInit starts
 * threads that run inside libcuda until the process exits (and a timed-out
 * kernel keeps its context alive), so dlclose would unmap code under them.
 * This is the one process-wide state of the backend; it is reachable for
 * leak checkers. */
static pthread_mutex_t g_cuda_lock = PTHREAD_MUTEX_INITIALIZER;
static poot__cuda g_cuda;

static poot_status cuda_load(poot__cuda *out_api);

poot_status poot__cuda_open(poot__cuda *out_api) {
  memset(out_api, 0, sizeof *out_api);
  pthread_mutex_lock(&g_cuda_lock);
  poot_status st = NULL;
  if (!g_cuda.lib) st = cuda_load(&g_cuda);
  if (!st) *out_api = g_cuda;
  pthread_mutex_unlock(&g_cuda_lock);
  return st;
}

static poot_status cuda_load(poot__cuda *out_api) {
  memset(out_api, 0, sizeof *out_api);
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  poot_dylib *lib = NULL;
  poot_status st = poot_dylib_open(names, &lib);
  if (st) {
    poot_status out = poot_status_make(POOT_NO_DEVICE,
                                       "PTX device: libcuda.so.1 not found (no NVIDIA driver): %s",
                                       poot_status_message(st));
    poot_status_free(st);
    return out;
  }
  poot__cuda *a = out_api;
  const poot_dylib_symbol table[] = {
      {"cuInit", (void **)&a->Init, false},
      {"cuDriverGetVersion", (void **)&a->DriverGetVersion, false},
      {"cuGetErrorName", (void **)&a->GetErrorName, false},
      {"cuGetErrorString", (void **)&a->GetErrorString, false},
      {"cuDeviceGetCount", (void **)&a->DeviceGetCount, false},
      {"cuDeviceGet", (void **)&a->DeviceGet, false},
      {"cuDeviceGetName", (void **)&a->DeviceGetName, false},
      {"cuDeviceGetAttribute", (void **)&a->DeviceGetAttribute, false},
      {"cuDeviceTotalMem_v2", (void **)&a->DeviceTotalMem, false},
      {"cuDevicePrimaryCtxRetain", (void **)&a->DevicePrimaryCtxRetain, false},
      {"cuDevicePrimaryCtxRelease_v2", (void **)&a->DevicePrimaryCtxRelease, false},
      {"cuDevicePrimaryCtxReset_v2", (void **)&a->DevicePrimaryCtxReset, false},
      {"cuCtxSetCurrent", (void **)&a->CtxSetCurrent, false},
      {"cuCtxSynchronize", (void **)&a->CtxSynchronize, false},
      {"cuStreamCreate", (void **)&a->StreamCreate, false},
      {"cuStreamDestroy_v2", (void **)&a->StreamDestroy, false},
      {"cuStreamQuery", (void **)&a->StreamQuery, false},
      {"cuStreamBeginCapture_v2", (void **)&a->StreamBeginCapture, false},
      {"cuStreamEndCapture", (void **)&a->StreamEndCapture, false},
      {"cuGraphInstantiateWithFlags", (void **)&a->GraphInstantiateWithFlags, false},
      {"cuGraphLaunch", (void **)&a->GraphLaunch, false},
      {"cuGraphExecDestroy", (void **)&a->GraphExecDestroy, false},
      {"cuGraphDestroy", (void **)&a->GraphDestroy, false},
      {"cuEventCreate", (void **)&a->EventCreate, false},
      {"cuEventRecord", (void **)&a->EventRecord, false},
      {"cuEventDestroy_v2", (void **)&a->EventDestroy, false},
      {"cuEventElapsedTime_v2", (void **)&a->EventElapsedTime, true},
      {"cuModuleLoadDataEx", (void **)&a->ModuleLoadDataEx, false},
      {"cuModuleUnload", (void **)&a->ModuleUnload, false},
      {"cuModuleGetFunction", (void **)&a->ModuleGetFunction, false},
      {"cuFuncSetAttribute", (void **)&a->FuncSetAttribute, true},
      {"cuLaunchKernel", (void **)&a->LaunchKernel, false},
      {"cuLaunchKernelEx", (void **)&a->LaunchKernelEx, true},
      {"cuMemAlloc_v2", (void **)&a->MemAlloc, false},
      {"cuMemFree_v2", (void **)&a->MemFree, false},
      {"cuMemHostAlloc", (void **)&a->MemHostAlloc, false},
      {"cuMemHostGetDevicePointer_v2", (void **)&a->MemHostGetDevicePointer, false},
      {"cuMemFreeHost", (void **)&a->MemFreeHost, false},
      {"cuMemGetInfo_v2", (void **)&a->MemGetInfo, false},
      {"cuMemcpyHtoDAsync_v2", (void **)&a->MemcpyHtoDAsync, false},
      {"cuMemcpyDtoHAsync_v2", (void **)&a->MemcpyDtoHAsync, false},
      {"cuMemcpyAsync", (void **)&a->MemcpyAsync, false},
      {"cuMemsetD8Async", (void **)&a->MemsetD8Async, false},
  };
  st = poot_dylib_load(lib, table, sizeof table / sizeof table[0]);
  if (st) {
    poot_dylib_close(lib);
    memset(out_api, 0, sizeof *out_api);
    return poot_status_annotate(st, "PTX device: the CUDA driver is too old (needs CUDA 11.4+)");
  }
  if (!a->EventElapsedTime) {
    /* Drivers before CUDA 12.8 export only the first version. */
    const poot_dylib_symbol old[] = {{"cuEventElapsedTime", (void **)&a->EventElapsedTime, true}};
    st = poot_dylib_load(lib, old, 1);
    if (st) poot_status_free(st);
  }
  a->lib = lib;
  return NULL;
}

void poot__cuda_close(poot__cuda *api) {
  /* The library stays loaded (see g_cuda); only this copy is cleared. */
  if (api) memset(api, 0, sizeof *api);
}

const char *poot__cuda_error_text(const poot__cuda *api, CUresult r, char *buf, size_t size) {
  const char *name = NULL, *text = NULL;
  if (api && api->GetErrorName && api->GetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
  if (api && api->GetErrorString && api->GetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
  if (name && text)
    snprintf(buf, size, "%s (%s)", name, text);
  else
    snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}

bool poot__cuda_error_is_sticky(CUresult r) {
  switch (r) {
    /* The errors after which "the process must be terminated and relaunched"
     * (cuda.h's own words), plus the device-level failures. */
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

#endif /* POOT_HAVE_CUDA_H */
