/* poot/devices.h — the backends (DESIGN §2 `devices/`, §6, §11): opening a
 * device by name, listing what this machine has, and each backend's own
 * options and test hooks. Each backend lives in src/devices/<name>/ and
 * implements the device interface of poot/exec.h; vendor runtimes are loaded
 * with dlopen at run time, so one binary runs on a machine without them.
 *
 * Thread safety: as poot/exec.h (one thread per device at a time). */
#ifndef POOT_DEVICES_H
#define POOT_DEVICES_H

#include "poot/exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ Vulkan */

typedef struct poot_vulkan_options {
  /* Physical device index as the loader lists them; -1 → the best: a discrete
   * GPU, then an integrated one, then a CPU implementation (lavapipe). */
  int32_t index;
  uint64_t timeout_ns; /* every fence wait; 0 → 600 s */
  /* Watchdog budget per submission in ms: recordings are cut into several
   * command buffers by work weight. 0 → none (desktop Linux compute has no
   * watchdog); tests force one to exercise the split. */
  uint32_t watchdog_ms;
  /* Enable the Khronos validation layer when installed, and count its
   * warnings and errors (poot_vulkan_validation_messages). */
  bool validation;
  /* Move LOCAL buffers' data through staging copies even where the host
   * could map them (tests the discrete-GPU path on a CPU device). */
  bool force_staging;
  /* Build for the device as for a GPU even where it is a CPU implementation
   * (lavapipe): the planner's GPU forms (the subgroup GEMV, the subgroup
   * attention, the tiled GEMM) instead of the SIMD-lane-friendly ones. Legal
   * on any device with subgroups; lets a CPU run the plans a discrete GPU
   * gets (POOT_VULKAN_GPU_FORMS=1 through poot_device_open). */
  bool gpu_forms;
  /* The VkPipelineCache file's folder: NULL → $XDG_CACHE_HOME/poot/vulkan,
   * else $HOME/.cache/poot/vulkan (POOT_VULKAN_CACHE_DIR through
   * poot_device_open). no_pipeline_cache: neither read nor write one
   * (POOT_VULKAN_CACHE=0). Borrowed; read only during create. */
  const char *pipeline_cache_dir;
  bool no_pipeline_cache;
  /* The pipeline diagnostic: every kernel's SPIR-V size and
   * vkCreateComputePipelines time logged at WARN (so it shows without -v),
   * and kernel creation refused with TIMEOUT once diag_budget_s seconds of
   * kernel creation have passed (POOT_VULKAN_DIAG=1,
   * POOT_VULKAN_DIAG_BUDGET_S through poot_device_open; 0 → 60 s). */
  bool diag;
  double diag_budget_s;
  /* Keep the exact integer half conversions even where the device's probe
   * finds its own unpackHalf2x16/packHalf2x16 exact (POOT_VULKAN_EXACT_F16=1
   * through poot_device_open; a comparison, or a device that lies). */
  bool exact_f16;
  /* A fence wait on a GPU polls the fence for this many microseconds before
   * it blocks, as CUDA's default synchronization spins (a blocking wait
   * through NVIDIA's driver wakes ~0.2 ms after the work ends: a tenth of a
   * 1B model's decode step). 0 → 2000; UINT32_MAX → never poll
   * (POOT_VULKAN_SPIN_US through poot_device_open, where 0 means never). A CPU device never
   * polls: its work needs the cores. */
  uint32_t spin_us;
  /* Threads that build a plan's kernels at once (the driver's pipeline
   * compiler is most of a cold start): 0 → one per online CPU, at most 16;
   * 1 → one kernel after another (POOT_VULKAN_COMPILE_THREADS through
   * poot_device_open). The diagnostic always builds one after another. */
  uint32_t compile_threads;
} poot_vulkan_options;

void poot_vulkan_options_init(poot_vulkan_options *options);

/* Creates a Vulkan device. NO_DEVICE when libvulkan.so.1 or a device is
 * absent (naming which); UNSUPPORTED when the chosen device lacks what poot
 * needs (Vulkan 1.2, a compute queue, robustBufferAccess); NOT_FOUND for an
 * index past the list; DEVICE_LOST when the driver fails. */
POOT_MUST_USE poot_status poot_vulkan_device_create(const poot_vulkan_options *options,
                                                    poot_device **out_device);

/* Test hooks. */
typedef enum poot_vulkan_fault {
  POOT_VULKAN_FAULT_NONE = 0,
  /* The next vkQueueSubmit is not made and reports VK_ERROR_DEVICE_LOST. */
  POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST,
  /* The next vkCreateComputePipelines (on whichever thread makes it) is not
   * made and reports VK_ERROR_OUT_OF_DEVICE_MEMORY. */
  POOT_VULKAN_FAULT_PIPELINE_OUT_OF_MEMORY,
} poot_vulkan_fault;
void poot_vulkan_device_inject(poot_device *device, poot_vulkan_fault fault);
/* Whether the validation layer is on, and how many warnings and errors it
 * reported so far (each is also logged at WARN). */
bool poot_vulkan_validation_enabled(const poot_device *device);
uint32_t poot_vulkan_validation_messages(const poot_device *device);

/* What the pipeline cache did on this device so far. */
typedef struct poot_vulkan_pipeline_cache_info {
  bool enabled;        /* a VkPipelineCache is in use */
  size_t bytes_loaded; /* bytes of a valid cache file read at create (0: cold) */
  uint32_t pipelines;  /* pipelines created (the fused-fma probe's included) */
  uint32_t hits;       /* of them, answered by the cache */
  bool can_count_hits; /* VK_EXT_pipeline_creation_feedback: hits is meaningful */
} poot_vulkan_pipeline_cache_info;
/* Zeroes out_info for a device of another backend. */
void poot_vulkan_pipeline_cache_stats(const poot_device *device,
                                      poot_vulkan_pipeline_cache_info *out_info);

/* ================================================================= wgpu */

/* The WebGPU device over wgpu-native (libwgpu_native.so, loaded at run time;
 * docs/backends.md "wgpu"). Kernels are poot's WGSL renderings; a recording
 * is the list of compute pipelines and bind groups built once, and every
 * replay encodes that list into a new command buffer (WebGPU command buffers
 * cannot be submitted twice), so a replay costs host time the other backends
 * do not spend: poot_wgpu_encode_stats. */
typedef struct poot_wgpu_options {
  /* Adapter index as wgpuInstanceEnumerateAdapters lists them (OpenGL
   * excluded); -1 → the best: a discrete GPU, then an integrated one, then a
   * CPU implementation. */
  int32_t index;
  uint64_t timeout_ns;  /* every wait; 0 → 600 s */
  uint32_t watchdog_ms; /* budget per command buffer in ms; 0 → none */
  /* The library to load first (a path or a name; POOT_WGPU_LIBRARY through
   * poot_device_open and poot_devices_probe); then libwgpu_native.so and
   * libwgpu_native-release.so by the dynamic loader's search. Borrowed; read
   * only during create. */
  const char *library;
} poot_wgpu_options;

void poot_wgpu_options_init(poot_wgpu_options *options);

/* Creates a wgpu device. NO_DEVICE when the library or an adapter is absent
 * (naming which); NOT_FOUND for an index past the list; DEVICE_LOST when the
 * device request fails; TIMEOUT when the adapter or device request does not
 * answer within the timeout. */
POOT_MUST_USE poot_status poot_wgpu_device_create(const poot_wgpu_options *options,
                                                  poot_device **out_device);

/* Test hooks. */
typedef enum poot_wgpu_fault {
  POOT_WGPU_FAULT_NONE = 0,
  /* The next replay submits nothing and reports the device lost. */
  POOT_WGPU_FAULT_SUBMIT_DEVICE_LOST,
  /* The next replay destroys the WebGPU device (wgpuDeviceDestroy) before it
   * submits: the device-lost callback reports the loss as a real one. */
  POOT_WGPU_FAULT_DESTROY_DEVICE,
} poot_wgpu_fault;
void poot_wgpu_device_inject(poot_device *device, poot_wgpu_fault fault);

/* The host time spent encoding the cached dispatch lists into command
 * buffers, over every replay so far (the part of a step the other backends
 * replay instead). Zeroes for a device of another backend. */
void poot_wgpu_encode_stats(const poot_device *device, uint64_t *out_ns, uint64_t *out_replays);

/* =========================================================== catalogue */

/* Watchdog budgets per submission, in ms (0 = none). Desktop drivers reset
 * a GPU that stays busy about 2 s under a display; the PTX device budgets
 * well inside that limit when CUDA reports one. */
#define POOT_DEVICE_WATCHDOG_DESKTOP_MS 2000u
#define POOT_DEVICE_WATCHDOG_CUDA_DISPLAY_MS 1000u

/* The named devices kernels can be rendered for without opening one (poot
 * compile, the renderer tests). An opened device fills its own target from
 * what it queried (poot_device_caps.target). */
typedef enum poot_device_target_id {
  POOT_DEVICE_TARGET_INTERP = 0, /* the KIR interpreter (poot_kir_target_init_interp) */
  POOT_DEVICE_TARGET_SM80,       /* PTX for sm_80 */
  POOT_DEVICE_TARGET_SM90,       /* PTX for sm_90, kernels wait for their predecessor */
  /* Vulkan through GLSL, generic desktop limits: 32 KiB shared, 16/8-bit
   * storage, f16 arithmetic, the desktop watchdog budget. */
  POOT_DEVICE_TARGET_VULKAN,
  /* Mesa lavapipe (llvmpipe): SIMD lanes as subgroups (4, 8 or 16 per its
   * SIMD width), f32 buffer atomics add/exchange, no watchdog. */
  POOT_DEVICE_TARGET_LAVAPIPE,
  /* WebGPU defaults: 256 threads, 16 KiB shared, 8 storage buffers. */
  POOT_DEVICE_TARGET_WEBGPU,
  POOT_DEVICE_TARGET_GFX90A,  /* AMDGPU wave64 */
  POOT_DEVICE_TARGET_GFX942,  /* AMDGPU wave64 */
  POOT_DEVICE_TARGET_GFX1100, /* AMDGPU wave32 */
  POOT_DEVICE_TARGET_COUNT
} poot_device_target_id;

/* Fills *out_target with the catalogue's target `id`. subgroup_size is the
 * size kernels are built for where the device lets it vary (interp: 0 → 32;
 * Vulkan, lavapipe, WebGPU: 0 = no subgroup ops); PTX and AMDGPU fix it. An
 * id past the catalogue gives a zeroed target, which every kernel fails to
 * verify against. Never fails otherwise. */
void poot_device_target_init(poot_device_target_id id, uint32_t subgroup_size,
                             poot_kir_target *out_target);

/* By name: "interp", "interp-sg<N>", "sm_80", "sm_90", "vulkan",
 * "vulkan-sg<N>", "lavapipe", "lavapipe-sg<N>", "webgpu", "webgpu-sg<N>",
 * "gfx90a", "gfx942", "gfx1100" (N a power of two up to 128). NOT_FOUND
 * naming the known targets. */
POOT_MUST_USE poot_status poot_device_target_by_name(const char *name, poot_kir_target *out_target);

/* ============================================================ registry */

/* One device a backend can open. */
typedef struct poot_device_info {
  char name[256];
  char kind[32]; /* "discrete", "integrated", "cpu", "virtual", "other" */
  uint32_t index;
  bool usable; /* false: `why` says what it lacks */
  char why[160];
} poot_device_info;

/* What one backend found on this machine. */
typedef struct poot_backend_report {
  const char *backend; /* "ptx", "rocm", "vulkan", "wgpu", "npu" */
  bool built;          /* compiled into this binary */
  bool present;        /* runtime loaded and at least one device */
  char reason[256];    /* why not present (or the runtime's name) */
  uint32_t device_count;
  poot_device_info devices[8];
} poot_backend_report;

#define POOT_BACKEND_COUNT 5

/* Probes every backend in DESIGN order (ptx, rocm, vulkan, wgpu, npu) into
 * out[0..POOT_BACKEND_COUNT). Never fails on a missing runtime (that is a
 * report); OUT_OF_MEMORY only. */
POOT_MUST_USE poot_status poot_devices_probe(poot_backend_report out[POOT_BACKEND_COUNT]);

typedef struct poot_device_open_options {
  uint64_t timeout_ns;  /* 0 → 600 s */
  uint32_t watchdog_ms; /* 0 → the device's own */
  bool validation;      /* Vulkan: the validation layer, when installed */
} poot_device_open_options;

/* Opens "auto" (the first present of ptx, rocm, vulkan, wgpu), a backend
 * name, or "backend:index". NO_DEVICE naming what was tried and why each is
 * absent; INVALID_ARGUMENT for an unknown backend name. options may be NULL. */
POOT_MUST_USE poot_status poot_device_open(const char *spec,
                                           const poot_device_open_options *options,
                                           poot_device **out_device);

#ifdef __cplusplus
}
#endif

#endif /* POOT_DEVICES_H */
