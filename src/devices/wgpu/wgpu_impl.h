/* The wgpu device's private header: the loaded library and the objects that
 * embed poot/exec.h's bases. Never leaves src/devices/wgpu. */
#ifndef POOT_DEVICES_WGPU_WGPU_IMPL_H
#define POOT_DEVICES_WGPU_WGPU_IMPL_H

#include "poot/devices.h"
#include "poot/exec.h"
#include "wgpu_api.h"

/* What the library's callbacks report. Separate from the device so that a
 * poisoned device, whose WebGPU objects are leaked on purpose, can be freed
 * while a late callback still finds its sink (the sink is leaked with it). */
typedef struct poot_wg_sink {
  bool destroying; /* our own release: a loss it reports is not a fault */
  bool lost;
  char lost_reason[256];
  uint32_t errors; /* uncaptured errors */
  char error[512]; /* the first one */
  /* Answers a wait gave up on (TIMEOUT): their callbacks may still come, so
   * they stay allocated and reachable from here. */
  void *late[8];
  uint32_t late_count;
} poot_wg_sink;

/* Keeps `state` allocated for a callback that may still come. */
static inline void poot__wg_sink_keep(poot_wg_sink *s, void *state) {
  if (s->late_count < sizeof s->late / sizeof s->late[0]) s->late[s->late_count++] = state;
}

/* A map's answer; poot__wg_on_map (the callback) fills it from userdata1
 * (the queue's work-done answer has the same shape). */
typedef struct poot_wg_map_state {
  bool done;
  poot_wg_enum status;
} poot_wg_map_state;

/* The library, its instance and the adapters it lists (shared by the
 * registry's probe and the device). */
typedef struct poot_wg_runtime {
  poot_dylib *lib;
  poot_wg_api api;
  poot_wg_instance instance;
} poot_wg_runtime;

typedef struct poot_wgpu_device {
  poot_device base; /* first member */
  poot_wg_runtime rt;
  poot_wg_adapter adapter;
  poot_wg_device device;
  poot_wg_queue queue;
  poot_wg_limits limits;
  poot_wg_sink *sink;
  uint64_t storage_align; /* minStorageBufferOffsetAlignment */
  bool cpu;               /* a CPU adapter: waits sleep instead of spinning */
  /* Nanoseconds per timestamp tick (0: the device cannot time: it lacks
   * timestamp queries, or the native writes between passes). */
  double timestamp_ns;
  poot_wgpu_fault inject;
  /* A MAP_READ buffer that downloads copy through, grown on demand. */
  poot_wg_buffer readback;
  uint64_t readback_size;
  /* The pending replay's completion: the map of its error words, or the
   * queue's work-done answer when it has none (NULL: nothing pending). */
  poot_wg_map_state *pending_state;
  bool pending_mapped; /* pending_state is the map of the recording's results */
} poot_wgpu_device;

typedef struct poot_wgpu_buffer {
  poot_device_buffer base; /* first member */
  poot_wg_buffer buffer;
  uint64_t alloc_size; /* size rounded up to whole words */
  void *shadow;        /* SLOT: the host's copy (base.host), written to the device per replay */
  /* SLOT: a replay wrote the device's copy after the host last wrote the
   * whole buffer: downloads read the device, replays do not overwrite it
   * with the host's copy. */
  bool device_newer;
} poot_wgpu_buffer;

typedef struct poot_wgpu_kernel {
  poot_device_kernel base; /* first member */
  poot_wg_shader_module module;
  poot_wg_bind_group_layout set_layout;
  poot_wg_pipeline_layout layout;
  poot_wg_compute_pipeline pipeline;
  uint32_t *binding_numbers; /* KIR binding numbers, in binding order */
  bool *binding_written;     /* the kernel may write the binding */
  uint32_t error_binding;
  uint32_t param_binding; /* the uniform buffer of the PUSH params */
} poot_wgpu_kernel;

/* One cached command of a recording. */
typedef struct poot_wg_cmd {
  bool copy;
  uint32_t stage;
  /* dispatch */
  poot_wg_compute_pipeline pipeline;
  poot_wg_bind_group group;
  uint32_t grid[3];
  /* copy */
  poot_wg_buffer src, dst;
  uint64_t src_offset, dst_offset, size;
} poot_wg_cmd;

/* Outputs up to this size come back with the replay's one map. */
#define POOT_WG_RESULT_MAX (1u << 20)

typedef struct poot_wgpu_recording {
  poot_device_recording base; /* first member */
  poot_wg_cmd *cmds;
  uint32_t cmd_count;
  uint32_t stage_count;
  poot_wg_buffer *params; /* one uniform buffer per dispatch with PUSH params */
  uint32_t param_count;
  /* SLOT buffers the commands only read: their host copies are written to
   * the device before each replay. */
  poot_wgpu_buffer **slot_inputs;
  uint32_t slot_input_count;
  /* SLOT buffers a command may write (outputs): each small one is copied
   * into `results` at output_offset[i] at the end of every replay and into
   * its host copy at synchronize (UINT64_MAX: too large; downloads read the
   * device). */
  poot_wgpu_buffer **slot_outputs;
  uint64_t *output_offset;
  uint32_t slot_output_count;
  /* One error word per checked dispatch at storage-aligned offsets. */
  poot_wg_buffer errors;
  uint64_t errors_size;
  /* The small results of a replay, mapped once at synchronize: the error
   * words at 0, then the small outputs (NULL when there are neither). */
  poot_wg_buffer results;
  uint64_t results_size;
  /* Device time: two timestamps written around the replay's commands,
   * resolved into `resolve` and copied into `results` at timestamps_offset
   * (timestamps NULL when the device cannot time). */
  poot_wg_query_set timestamps;
  poot_wg_buffer resolve;
  uint64_t timestamps_offset;
  void *zeros; /* errors_size zero bytes, written before each replay */
  uint32_t checked_count;
  uint32_t *checked_dispatch; /* command index of each checked dispatch */
  char **checked_kernel;      /* its kernel's name (owned) */
  char **checked_label;       /* its label (owned, may be NULL) */
} poot_wgpu_recording;

/* The wgpu device's vtable, its type tag (wgpu_device.c). */
extern const poot_device_vtable poot__wg_vtable;

static inline poot_wgpu_device *poot__wg_device_cast(const poot_device *d) {
  return POOT_DOWNCAST(poot_wgpu_device, base, d, &poot__wg_vtable);
}
POOT_MUST_USE static inline poot_status poot__wg_device_of(poot_device *d,
                                                           poot_wgpu_device **out_device) {
  *out_device = poot__wg_device_cast(d);
  return poot_downcast_check(*out_device, "wgpu device");
}

static inline poot_wg_string_view poot__wg_str(const char *s) {
  return (poot_wg_string_view){s, s ? POOT_WG_STRLEN : 0};
}

/* wgpu_device.c: the library, the instance, adapters. library: tried first
 * (NULL: only the standard names). NO_DEVICE naming what is missing. */
POOT_MUST_USE poot_status poot__wg_runtime_open(poot_wg_runtime *rt, const char *library);
void poot__wg_runtime_close(poot_wg_runtime *rt);
/* The adapters (at most max), in the library's order; OpenGL excluded. */
size_t poot__wg_adapters(poot_wg_runtime *rt, poot_wg_adapter *out, size_t max);
/* Fills info for an adapter (name, kind; usable). */
void poot__wg_describe(poot_wg_runtime *rt, poot_wg_adapter adapter, uint32_t index,
                       poot_device_info *info);
/* Waits until *flag is set, polling the device, bounded by timeout_ns: TIMEOUT
 * naming `what`, DEVICE_LOST when the device reports a loss meanwhile. */
POOT_MUST_USE poot_status poot__wg_wait(poot_wgpu_device *d, const volatile bool *flag,
                                        uint64_t timeout_ns, const char *what);
/* DEVICE_LOST when the device reported a loss or an uncaptured error. */
POOT_MUST_USE poot_status poot__wg_check_lost(poot_wgpu_device *d, const char *during);
/* Runs `push` … `pop` around object creation: push opens validation and
 * out-of-memory scopes; pop closes them and returns FORMAT (validation, the
 * library's message) or OUT_OF_MEMORY naming `what`. */
void poot__wg_scope_push(poot_wgpu_device *d);
POOT_MUST_USE poot_status poot__wg_scope_pop(poot_wgpu_device *d, const char *what);

/* A buffer of `size` bytes with `usage`, inside error scopes (FORMAT,
 * OUT_OF_MEMORY naming `what`). */
POOT_MUST_USE poot_status poot__wg_raw_buffer(poot_wgpu_device *d, uint64_t size,
                                              poot_wg_flags usage, const char *what,
                                              poot_wg_buffer *out);
void poot__wg_on_map(poot_wg_enum status, poot_wg_string_view message, void *userdata1,
                     void *userdata2);

/* wgpu_record.c: kernels, recordings, replay, synchronize. */
POOT_MUST_USE poot_status poot__wg_kernel_create(poot_device *device, const poot_kir_kernel *kir,
                                                 poot_device_kernel **out_kernel);
void poot__wg_kernel_destroy(poot_device *device, poot_device_kernel *kernel);
POOT_MUST_USE poot_status poot__wg_record(poot_device *device, const poot_device_cmd *cmds,
                                          uint32_t count, const uint32_t *stage_of,
                                          uint32_t stage_count,
                                          poot_device_recording **out_recording);
void poot__wg_recording_destroy(poot_device *device, poot_device_recording *recording);
POOT_MUST_USE poot_status poot__wg_replay(poot_device *device, poot_device_recording *recording);
POOT_MUST_USE poot_status poot__wg_synchronize(poot_device *device, uint64_t timeout_ns,
                                               uint64_t *out_device_ns);

#endif
