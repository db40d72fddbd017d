/* ptx_device.h — the PTX device's entry points (NVIDIA GPUs through the CUDA
 * driver). These declarations belong in poot/devices.h beside the Vulkan
 * ones; until they move there, the registry and the tests include this file.
 * It needs no CUDA header: a build without one still has these functions,
 * which then report that the backend was compiled out.
 *
 * Thread safety: as poot/exec.h (one thread per device at a time). */
#ifndef POOT_DEVICES_PTX_DEVICE_H
#define POOT_DEVICES_PTX_DEVICE_H

#include "poot/devices.h"
#include "poot/exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_ptx_options {
  int32_t index;       /* CUDA device ordinal; -1 → 0 */
  uint64_t timeout_ns; /* every wait; 0 → 600 s */
  /* Recordings launch their dispatches one by one (cuLaunchKernel each
   * replay) instead of capturing a CUDA graph: the eager baseline that graph
   * replay is compared with. A one-command recording is always eager. */
  bool eager;
  /* SLOT buffers that dispatches bind get a device mirror: each replay
   * starts with a copy of the host memory into the mirror (and ends with a
   * copy back when a dispatch writes it), and kernels read the mirror
   * instead of host memory through the mapping. Off: kernels read the
   * pinned host memory in place (zero-copy). */
  bool slot_mirror;
  /* Host threads that compile a plan's kernels at once (the driver's PTX
   * JIT is most of a cold start): 0 → one per online CPU, at most 16; 1 →
   * one after another (POOT_PTX_COMPILE_THREADS through the registry). */
  uint32_t compile_threads;
} poot_ptx_options;

void poot_ptx_options_init(poot_ptx_options *options);

/* Creates a PTX device: loads libcuda.so.1, retains the GPU's primary
 * context, creates one stream and the host-mapped fault record. Kernels are
 * rendered to PTX for sm_90 (compute capability 9.x and newer) or sm_80 (8.x)
 * and compiled by the driver. NO_DEVICE when libcuda.so.1 or the GPU is
 * absent (or the backend was compiled out), UNSUPPORTED below compute
 * capability 8.0, DEVICE_LOST when the driver fails.
 *
 * Faults: a failed KIR check traps; the next call that observes it returns
 * KERNEL_FAULT naming the dispatch, the kernel and the trap code (read from
 * the fault record), any other sticky CUDA error DEVICE_LOST, a wait past
 * the timeout TIMEOUT. All three poison the device: a sticky error cannot be
 * cleared from a CUDA context, so every later call is POISONED. Destroying a
 * device poisoned by a sticky error resets the GPU's primary context, so a
 * new device on the same GPU starts clean; after a TIMEOUT the kernel may
 * still run, so the context and its memory are left to the process's exit. */
POOT_MUST_USE poot_status poot_ptx_device_create(const poot_ptx_options *options,
                                                 poot_device **out_device);

/* Switches later recordings of a PTX device between graph capture (false)
 * and eager launches (true). Ignored for other devices' backends. */
void poot_ptx_device_set_eager(poot_device *device, bool eager);

/* Switches later recordings between slot mirrors (true) and zero-copy slot
 * reads (false); see poot_ptx_options.slot_mirror. Ignored for other
 * backends' devices. */
void poot_ptx_device_set_slot_mirror(poot_device *device, bool slot_mirror);

/* Fills `out` for the registry: whether the backend is built, whether the
 * driver loads, and each GPU with its compute capability. Never fails. */
void poot__ptx_probe(poot_backend_report *out);

#ifdef __cplusplus
}
#endif

#endif
