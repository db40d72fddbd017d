/* poot/exec.h — the execution layer (DESIGN §6): the device interface every
 * backend implements, the executor interface the driver uses, and the generic
 * engine that implements the executor once over any device.
 *
 * Contents:
 *   1. the device interface (buffers, uploads and downloads, kernels compiled
 *      from KIR, recordings, replay, synchronize with a timeout, poison)
 *   2. the executor interface (the verbs of DESIGN §6, and an entry's
 *      bindings: slots and root inputs by handle)
 *   3. the engine (the executor over a device)
 *
 * ---------------------------------------------------------------- faults ----
 * Every device call goes through the poot_device_* functions below, which
 * validate arguments once and carry the fault model so that a backend never
 * repeats it:
 *  - DEVICE_LOST: the driver failed (a failed submission or wait, a lost
 *    device). The device is poisoned.
 *  - TIMEOUT: a wait outlasted the device's timeout (600 s unless configured).
 *    The device is poisoned.
 *  - KERNEL_FAULT: a kernel check failed; the message names the dispatch, the
 *    kernel and the trap code. On devices without a real trap (Vulkan: the
 *    error word) the device stays usable; the engine marks the executable
 *    NEEDS_RESET.
 *  - POISONED: every call on a poisoned device is refused without touching
 *    the device; the message repeats the original cause.
 * After a failed submission or wait, the device deliberately leaks whatever
 * the pending work could still reference (buffers, recordings, the device
 * itself) rather than free it under the GPU: destroy calls on a poisoned
 * device release host memory only.
 *
 * Thread safety: a device, an engine and their objects are used from one
 * thread at a time (callers serialize); distinct devices are independent. */
#ifndef POOT_EXEC_H
#define POOT_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/compile.h"
#include "poot/graph.h"
#include "poot/kir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================== 1. the device */

#define POOT_DEVICE_DEFAULT_TIMEOUT_NS (600ull * 1000000000ull)

typedef struct poot_device poot_device;

/* What a device is and can do (filled at creation; read-only after). */
typedef struct poot_device_caps {
  const char *backend;    /* "vulkan", … (static string) */
  char name[256];         /* the driver's device name */
  char kind[32];          /* "discrete", "integrated", "cpu", "virtual", "other" */
  uint32_t index;         /* index among the backend's devices */
  poot_kir_target target; /* what kernels are compiled for (name is static) */
  uint64_t local_bytes;   /* device-local memory */
  uint64_t host_visible_bytes;
  uint32_t watchdog_ms; /* budget per submission; 0 = none */
  bool can_time;        /* replays report device time */
  /* poot_device_replay_chained queues a replay behind the pending one (the
   * device runs them in submission order) instead of waiting for it. */
  bool chains_replays;
} poot_device_caps;

typedef enum poot_device_buffer_kind {
  /* Device-local memory, written and read through upload/download. */
  POOT_DEVICE_BUFFER_LOCAL = 0,
  /* Host-visible, coherent memory mapped once at a stable address
   * (poot_device_buffer_host) for the per-step slot values: the host writes
   * it between replays; kernels read it. */
  POOT_DEVICE_BUFFER_SLOT,
} poot_device_buffer_kind;

/* A device buffer. Backends embed it as the first member of their own. */
typedef struct poot_device_buffer {
  poot_device *device;
  poot_device_buffer_kind kind;
  uint64_t size; /* bytes as asked */
  void *host;    /* SLOT: the mapped address (stable); LOCAL: NULL */
} poot_device_buffer;

/* A kernel compiled for the device. Cached by the device per
 * poot_kir_cache_key and the KIR's printed form (compared on a hit); owned
 * by the device until it is destroyed. */
typedef struct poot_device_kernel {
  poot_hash128 key; /* poot_kir_cache_key(kir, target); set by the generic layer */
  char *kir_text;   /* the KIR's printed form (owned by the generic layer) */
  size_t kir_text_len;
  char *name;             /* kernel name (owned) */
  uint32_t binding_count; /* KIR bindings (the error word excluded) */
  uint32_t push_count;    /* PUSH params */
  bool has_checks;        /* uses the error word / fault record */
} poot_device_kernel;

typedef enum poot_device_cmd_kind {
  POOT_DEVICE_CMD_DISPATCH = 0,
  POOT_DEVICE_CMD_COPY,
} poot_device_cmd_kind;

/* One command of a recording. Pointers are borrowed for the call that takes
 * the command; the recording copies what it keeps. */
typedef struct poot_device_cmd {
  poot_device_cmd_kind kind;
  /* DISPATCH */
  poot_device_kernel *kernel;
  uint32_t grid[3];                   /* workgroups; 0 counts as 1 */
  poot_device_buffer *const *buffers; /* one per KIR binding, in order */
  const uint32_t *push;               /* kernel->push_count 32-bit values */
  double weight_us;                   /* estimated device time (stage cutting) */
  const char *label;                  /* what it computes, for messages (may be NULL) */
  /* COPY: size bytes from src+src_offset to dst+dst_offset (multiples of 4) */
  poot_device_buffer *src, *dst;
  uint64_t src_offset, dst_offset, size;
} poot_device_cmd;

/* A recorded command list, replayable any number of times. Backends embed
 * it as the first member of their own. */
typedef struct poot_device_recording {
  poot_device *device;
  uint32_t command_count;
  uint32_t dispatch_count;
  uint32_t stage_count; /* command buffers / submissions it was cut into */
} poot_device_recording;

typedef struct poot_device_record_options {
  /* Watchdog budget per stage in µs of summed weight_us; 0 → the device's
   * caps.watchdog_ms (no cut when that is 0 too). A command heavier than the
   * budget gets a stage of its own. */
  double stage_budget_us;
} poot_device_record_options;

/* The backend's half of a device (internal to devices; see src/devices). Every
 * entry is required unless marked optional. Entries never see a poisoned
 * device, a NULL argument or an out-of-range offset: the poot_device_*
 * functions check those first. */
typedef struct poot_device_vtable {
  void (*destroy)(poot_device *device);
  poot_status (*buffer_create)(poot_device *device, poot_device_buffer_kind kind, uint64_t size,
                               poot_device_buffer **out_buffer);
  void (*buffer_destroy)(poot_device *device, poot_device_buffer *buffer);
  poot_status (*upload)(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                        const void *data, uint64_t size);
  poot_status (*download)(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                          void *data, uint64_t size);
  poot_status (*kernel_create)(poot_device *device, const poot_kir_kernel *kir,
                               poot_device_kernel **out_kernel);
  void (*kernel_destroy)(poot_device *device, poot_device_kernel *kernel);
  /* (optional) Creates the kernels of kirs[0..n) at once, on several host
   * threads where the backend can (a driver's pipeline compiler is the long
   * part of a cold start). On success out[i] holds kirs[i]'s kernel; on a
   * failure every out[i] is NULL, nothing is kept, and the status is the
   * first failing kernel's in index order. NULL → kernel_create for one
   * kernel after another. */
  poot_status (*kernels_create)(poot_device *device, const poot_kir_kernel *const *kirs, uint32_t n,
                                poot_device_kernel **out);
  /* stage_of[i] is the stage of cmds[i] (non-decreasing, from 0 to
   * stage_count-1). */
  poot_status (*record)(poot_device *device, const poot_device_cmd *cmds, uint32_t count,
                        const uint32_t *stage_of, uint32_t stage_count,
                        poot_device_recording **out_recording);
  void (*recording_destroy)(poot_device *device, poot_device_recording *recording);
  /* Submits the recording; does not wait. */
  poot_status (*replay)(poot_device *device, poot_device_recording *recording);
  /* Waits at most timeout_ns for the submitted work, then raises a staged
   * kernel fault. TIMEOUT / DEVICE_LOST / KERNEL_FAULT. */
  poot_status (*synchronize)(poot_device *device, uint64_t timeout_ns, uint64_t *out_device_ns);
} poot_device_vtable;

/* The device base; backends embed it as the first member. */
struct poot_device {
  const poot_device_vtable *vt;
  poot_device_caps caps;
  uint64_t timeout_ns; /* every wait is bounded by it */
  bool poisoned;
  char poison_reason[512];
  poot_device_recording *pending; /* replayed, not yet synchronized */
  /* With caps.chains_replays: replayed before `pending` (chained), not yet
   * synchronized; NULL otherwise. */
  poot_device_recording *pending_first;
  poot_map kernel_cache; /* (key, probe) → poot_device_kernel* */
  uint64_t bytes_uploaded;
  uint32_t kernels_created; /* kernel cache misses: kernels the backend compiled */
  uint64_t bytes_downloaded;
  /* Host time the backend spent building command buffers in replay, and
   * how many replays built them: a backend that cannot resubmit recorded
   * command buffers (wgpu) encodes its cached list every replay; 0 for
   * the others. */
  uint64_t encode_ns;
  uint64_t encodes;
};

/* Initializes the base (backends call it in their create). */
POOT_MUST_USE poot_status poot_device_base_init(poot_device *device, const poot_device_vtable *vt);

/* For backends' kernels_create (src/exec/device_build.c): creates kirs[0..n)
 * with `create` on up to `threads` host threads (1: one after another),
 * with kernels_create's contract (all or nothing; the first failure in
 * index order; vt->kernel_destroy undoes the made ones), saying every 5 s
 * how far it is. `create` must be safe on several threads at once. */
typedef poot_status (*poot_device_kernel_create_fn)(poot_device *device, const poot_kir_kernel *kir,
                                                    poot_device_kernel **out_kernel);
POOT_MUST_USE poot_status poot_device_kernels_build(poot_device *device,
                                                    poot_device_kernel_create_fn create,
                                                    const poot_kir_kernel *const *kirs, uint32_t n,
                                                    poot_device_kernel **out, uint32_t threads);
/* Threads for it: `asked` (at most 16), else one per online CPU, at most 16
 * (a driver's compiler is CPU-bound; more threads than cores only contend). */
uint32_t poot_device_build_threads(uint32_t asked);

/* Destroys the device and everything it still holds (kernels in the cache;
 * the caller destroys its buffers and recordings first). NULL-safe. On a
 * poisoned device only host memory is released. */
void poot_device_destroy(poot_device *device);
const poot_device_caps *poot_device_caps_get(const poot_device *device);
/* Every wait is bounded by this (0 → the 600 s default). */
void poot_device_set_timeout(poot_device *device, uint64_t timeout_ns);
bool poot_device_is_poisoned(const poot_device *device);
/* Poisons the device: every later call returns POISONED quoting `reason`. */
void poot_device_poison(poot_device *device, const char *reason);

/* Buffers. size > 0. OUT_OF_MEMORY, DEVICE_LOST, POISONED. */
POOT_MUST_USE poot_status poot_device_buffer_create(poot_device *device,
                                                    poot_device_buffer_kind kind, uint64_t size,
                                                    poot_device_buffer **out_buffer);
void poot_device_buffer_destroy(poot_device_buffer *buffer); /* NULL-safe */
/* SLOT buffers: the stable mapped address; NULL for LOCAL ones. */
static inline void *poot_device_buffer_host(const poot_device_buffer *buffer) {
  return buffer ? buffer->host : NULL;
}
/* Copies between host and buffer. Offsets and sizes in range; no pending
 * replay (synchronize first). INVALID_ARGUMENT, DEVICE_LOST, TIMEOUT,
 * POISONED. */
POOT_MUST_USE poot_status poot_device_upload(poot_device_buffer *buffer, uint64_t offset,
                                             const void *data, uint64_t size);
POOT_MUST_USE poot_status poot_device_download(poot_device_buffer *buffer, uint64_t offset,
                                               void *data, uint64_t size);

/* The device kernel for `kir` (borrowed), compiled on first use and cached
 * by poot_kir_cache_key(kir, &caps.target). *out_kernel is borrowed (owned by
 * the device). UNSUPPORTED (the target cannot run it), FORMAT (the backend
 * compiler refused it), DEVICE_LOST, POISONED. */
POOT_MUST_USE poot_status poot_device_kernel_get(poot_device *device, const poot_kir_kernel *kir,
                                                 poot_device_kernel **out_kernel);
/* Compiles every kernel of kirs[0..n) the cache does not hold yet, at once,
 * through the backend's kernels_create (several threads), so the
 * poot_device_kernel_get calls that follow are cache hits. A backend
 * without kernels_create does nothing here (each kernel is compiled at its
 * first poot_device_kernel_get). Kernels that
 * appear twice are compiled once. The errors of poot_device_kernel_get
 * (kernels made before the error may stay cached, as with single gets). */
POOT_MUST_USE poot_status poot_device_kernels_prepare(poot_device *device,
                                                      const poot_kir_kernel *const *kirs,
                                                      uint32_t n);

/* Records `count` commands once (descriptor sets and arguments baked), cut
 * into stages by weight when a budget applies. options may be NULL.
 * INVALID_ARGUMENT (a bad command), OUT_OF_MEMORY, DEVICE_LOST, POISONED. */
POOT_MUST_USE poot_status poot_device_record(poot_device *device, const poot_device_cmd *cmds,
                                             uint32_t count,
                                             const poot_device_record_options *options,
                                             poot_device_recording **out_recording);
void poot_device_recording_destroy(poot_device_recording *recording); /* NULL-safe */
/* Submits the recording verbatim (slot buffers are read as they are now).
 * One replay may be pending at a time. DEVICE_LOST (poisons), POISONED. */
POOT_MUST_USE poot_status poot_device_replay(poot_device_recording *recording);
/* poot_device_replay that does not wait for a pending replay: on a device
 * with caps.chains_replays the recording is queued behind it (the device runs
 * them in submission order, with no host round trip between them) and the
 * next synchronize waits for both; at most two replays are pending. On any
 * other device it synchronizes the pending replay first and submits nothing
 * when that fails (its status is returned). With nothing pending it is
 * poot_device_replay. When the backend refuses the submission without
 * poisoning, the pending replay is waited for before the error returns
 * (nothing stays pending). DEVICE_LOST (poisons), POISONED, and what
 * poot_device_synchronize returns. */
POOT_MUST_USE poot_status poot_device_replay_chained(poot_device_recording *recording);
/* Waits for the pending replay (or chain), bounded by the device timeout. OK
 * when none is pending. TIMEOUT and DEVICE_LOST poison the device;
 * KERNEL_FAULT names the dispatch, kernel and trap code. out_device_ns (may
 * be NULL) receives the device time of the replay (of the whole chain) when
 * caps.can_time, else 0. */
POOT_MUST_USE poot_status poot_device_synchronize(poot_device *device, uint64_t *out_device_ns);
/* Record + replay + synchronize + destroy of one command: eager submission,
 * the baseline replay is compared with. out_device_ns (may be NULL) receives
 * the command's device time when caps.can_time, else 0. */
POOT_MUST_USE poot_status poot_device_submit_one(poot_device *device, const poot_device_cmd *cmd,
                                                 uint64_t *out_device_ns);

/* The stage of each command for a budget (exposed for tests): fills
 * out_stage[0..count) and returns the number of stages (≥ 1 when count > 0).
 * budget_us <= 0: one stage. */
uint32_t poot_device_cut_stages(const poot_device_cmd *cmds, uint32_t count, double budget_us,
                                uint32_t *out_stage);

/* ===================================================== 2. the executor */

/* A host weight bound by identity: the key of the graph's weight leaf that
 * reads it (poot_node.weight.key, poot/graph.h) and its display name, for
 * messages only (may be NULL). The tensor is borrowed for the call. */
typedef struct poot_exec_weight {
  poot_weight_key key;
  const char *name;
  const poot_tensor *tensor;
} poot_exec_weight;

/* What identifies an entry: program, step shape, sampling suffix and the
 * carried inputs it binds. Two add_entry calls with equal keys give the same
 * entry (the graph of the second call is not compiled). Strings are copied;
 * NULL counts as "". */
typedef struct poot_exec_entry_key {
  const char *program;      /* e.g. the model's id */
  const char *step_shape;   /* "decode", "prefill:16", "batch:4x1" */
  const char *sampling;     /* "greedy", "" for none */
  const char *bound_inputs; /* carried inputs it binds, "" for none */
} poot_exec_entry_key;

/* Compile settings of the executor's target. */
typedef struct poot_exec_target {
  /* Borrowed; NULL → the device's own target. A target the device cannot run
   * is refused by target_set as UNSUPPORTED. */
  const poot_kir_target *target;
  uint32_t workgroup_size; /* 0 → the compiler's default */
  uint32_t coop_min;       /* 0 → the compiler's default */
  double stage_budget_us;  /* 0 → the device's watchdog budget */
  /* Compile each row of a batched step as it is compiled alone where the
   * compiler can: the small reductions (RMSNorm statistics) are dispatched
   * on their own, one order per row whatever the row count, instead of
   * recomputed in every workgroup that reads them (whose order changes past
   * 4 rows). Costs those dispatches. docs/batching.md "Batch invariance". */
  bool batch_invariant;
  /* How the prefill GEMM forms its products on matrix fragments:
   * POOT_MATMUL_HIGH (the default: the 3 × bf16 split) or
   * POOT_MATMUL_MEDIUM (operands rounded once to 16 bits, one mma per
   * fragment pair; its bound and f16's range: docs/compiler.md "Numerics"),
   * and for the block-format decode GEMV x rounded to int8 blocks of 32
   * summed with dot4_i8 where the target has it natively (docs/compiler.md
   * "The decode GEMV at medium"). Other targets and GEMVs ignore it. */
  poot_matmul_precision matmul_precision;
  /* Opt-in compiler forms (poot_compile_form bits; 0: the defaults). */
  uint32_t forms;
} poot_exec_target;

/* One dispatch of an eager step, as the profile callback sees it. The byte
 * counts are the plan's estimates for one run of the dispatch (the
 * compiler's step-bytes accounting: each buffer it binds times the fraction
 * of it the kernel touches); states accessed whole are counted at their
 * whole size, although a kernel bounded by a run-time length (attention at
 * the visible positions) reads only part of them. */
typedef struct poot_exec_dispatch_info {
  uint32_t entry;             /* the entry being stepped */
  uint32_t index;             /* the dispatch's index in the entry's plan */
  const char *label;          /* what it computes ("dot %36 gemv sg"); may be NULL */
  uint64_t device_ns;         /* device time; 0 when the device cannot time */
  uint64_t bytes;             /* bytes read and written */
  uint64_t weight_bytes;      /* of bytes: weights */
  uint64_t state_bytes;       /* of bytes: states (the K/V cache) */
  uint64_t state_whole_bytes; /* of state_bytes: states accessed whole */
} poot_exec_dispatch_info;

/* Called after each dispatch of an eager step (profiling); info is borrowed
 * for the call. */
typedef void (*poot_exec_dispatch_fn)(void *ctx, const poot_exec_dispatch_info *info);

/* A slot or root input of one entry, bound by handle: what step writes.
 * add_entry returns one for every slot and root input the graph declares
 * (poot_exec_bindings); poot_exec_entry_slot finds one by name. A handle
 * names its entry: step refuses a handle of another entry. */
typedef struct poot_exec_slot {
  uint32_t entry; /* the entry's id */
  uint32_t index; /* among the entry's bindings */
} poot_exec_slot;

/* One slot or root input an entry's graph declares. */
typedef struct poot_exec_binding {
  const char *name; /* "token", "pos", a named slot's or root input's name (owned by the entry) */
  poot_exec_slot slot; /* its handle */
  poot_type type;      /* the leaf's type: what step takes */
  bool is_input;       /* a root input (a Param leaf); else a slot */
  /* false when the passes removed the leaf: the handle stays valid and step
   * accepts a value for it and drops it. */
  bool read;
} poot_exec_binding;

/* The bindings of one entry, in the graph's order. Borrowed: valid until the
 * entry is removed or the executor unloaded. */
typedef struct poot_exec_bindings {
  uint32_t entry;
  uint32_t count;
  const poot_exec_binding *items;
} poot_exec_bindings;

/* A value for one slot or root input. The tensor is borrowed for the call;
 * its type must equal the binding's. */
typedef struct poot_exec_slot_value {
  poot_exec_slot slot;
  const poot_tensor *tensor;
} poot_exec_slot_value;

/* One step's inputs and output. */
typedef struct poot_exec_step_io {
  size_t input_count;
  const poot_exec_slot_value *inputs; /* slots and root inputs, by handle */
  void *output;                       /* receives the primary output (may be NULL) */
  size_t output_size;                 /* bytes; must equal the output's size when output != NULL */
  /* Submit the dispatches one by one (record, submit, wait each) instead of
   * replaying the recording: the baseline for tests and benchmarks. */
  bool eager;
  /* Eager steps only (may be NULL): a per-dispatch profile. */
  poot_exec_dispatch_fn on_dispatch;
  void *on_dispatch_ctx;
  /* Replay and return without waiting (output must be NULL): the next step
   * of another entry is queued behind this one on the device, with no host
   * round trip between them where the device chains replays
   * (caps.chains_replays; elsewhere it waits for this one first), and that
   * step's wait covers both. A fault of this step is reported by the next
   * call that waits for it (that step, or add_entry, remove_entry,
   * reset_state, load_weights) and makes later steps NEEDS_RESET as usual.
   * The slots and root inputs of this entry are not written again before it
   * finishes (a step of the same entry, or one with root inputs, waits).
   * Ignored by eager steps. */
  bool queue;
} poot_exec_step_io;

typedef struct poot_exec_stats {
  uint64_t steps;               /* successful steps */
  uint64_t captures;            /* recordings made (add_entry) */
  uint64_t entries;             /* live entries */
  uint64_t dispatches;          /* dispatches submitted over all steps */
  uint64_t dispatches_per_step; /* of the last step */
  uint64_t stages_per_step;     /* submissions of the last step */
  uint64_t host_ns_total;       /* host time inside step */
  double host_us_per_step;      /* host_ns_total / steps */
  uint64_t device_ns_total;     /* 0 when the device cannot time */
  double device_us_per_step;
  bool device_timed;
  uint64_t bytes_uploaded; /* weights, constants, states, inputs */
  uint64_t weight_bytes;   /* bytes of loaded weights */
  uint64_t state_bytes;    /* bytes of the states every entry shares (the K/V cache) */
  uint64_t kernels;        /* distinct device kernels */
  /* The device's local memory (poot_device_caps.local_bytes; 0 when the
   * executor cannot say): with weight_bytes and state_bytes, what a caller
   * sizing a KV pool has left. */
  uint64_t memory_bytes;
  /* Of host_ns_total: the device's encoding of command buffers in replay
   * (poot_device.encode_ns; 0 where recorded ones are resubmitted). */
  uint64_t encode_ns_total;
  double encode_us_per_step;
} poot_exec_stats;

typedef struct poot_executor poot_executor;

/* The executor interface (DESIGN §6): exactly these verbs. Callers go
 * through the poot_exec_* functions, which check arguments once: entries
 * never see a NULL array, a handle of another entry or out of range, or a
 * value whose type differs from its binding's. */
typedef struct poot_executor_vtable {
  void (*destroy)(poot_executor *executor);
  poot_status (*target_set)(poot_executor *executor, const poot_exec_target *target);
  poot_status (*load_weights)(poot_executor *executor, size_t count,
                              const poot_exec_weight *weights);
  poot_status (*add_entry)(poot_executor *executor, const poot_exec_entry_key *key,
                           const poot_graph *graph, uint32_t *out_entry);
  /* The entry's bindings (borrowed). NOT_FOUND for an entry it does not have. */
  poot_status (*bindings)(const poot_executor *executor, uint32_t entry,
                          poot_exec_bindings *out_bindings);
  poot_status (*step)(poot_executor *executor, uint32_t entry, const poot_exec_step_io *io);
  poot_status (*reset_state)(poot_executor *executor);
  poot_status (*remove_entry)(poot_executor *executor, uint32_t entry);
  void (*stats)(const poot_executor *executor, poot_exec_stats *out_stats);
  void (*unload)(poot_executor *executor);
  /* The settings target_set left (target: NULL, the device's own or the
   * one it was given, which the executor keeps). */
  void (*target_get)(const poot_executor *executor, poot_exec_target *out_target);
} poot_executor_vtable;

struct poot_executor {
  const poot_executor_vtable *vt;
};

/* Sets the compile target and options for later add_entry calls (entries
 * already added keep theirs). INVALID_ARGUMENT, UNSUPPORTED, POISONED. */
POOT_MUST_USE poot_status poot_exec_target_set(poot_executor *executor,
                                               const poot_exec_target *target);
/* The compile settings of later add_entry calls, as target_set left them
 * (every field but `target`, which reads NULL; all defaults before any
 * target_set). */
void poot_exec_target_get(const poot_executor *executor, poot_exec_target *out_target);
/* Uploads the weights (host tensors by weight key) once; entries bind them
 * by key. A graph weight whose key the call does not give stays unbound and
 * add_entry refuses the graph (NOT_FOUND). Replaces the weights of an
 * earlier call only after unload. INVALID_ARGUMENT (a duplicate key, a
 * missing tensor, weights already loaded), OUT_OF_MEMORY, DEVICE_LOST,
 * POISONED. */
POOT_MUST_USE poot_status poot_exec_load_weights(poot_executor *executor, size_t count,
                                                 const poot_exec_weight *weights);
/* Compiles `graph` (borrowed; verified) for the target, binds weights by
 * key, allocates its states (shared by name and type across entries,
 * zeroed), temporaries, slots and constants, and captures the recording.
 * An equal key returns the existing entry. *out_entry is the entry id;
 * out_bindings (may be NULL) receives its bindings: a handle for every slot
 * and root input the graph declares, including those the passes removed.
 * UNSUPPORTED (the compiler cannot plan it), NOT_FOUND (an unbound weight),
 * INVALID_ARGUMENT (a state whose type differs from an earlier entry's),
 * OUT_OF_MEMORY, DEVICE_LOST, POISONED. */
POOT_MUST_USE poot_status poot_exec_add_entry(poot_executor *executor,
                                              const poot_exec_entry_key *key,
                                              const poot_graph *graph, uint32_t *out_entry,
                                              poot_exec_bindings *out_bindings);
/* The bindings of an entry (borrowed, as add_entry returns them). NOT_FOUND
 * (no such entry). */
POOT_MUST_USE poot_status poot_exec_entry_bindings(const poot_executor *executor, uint32_t entry,
                                                   poot_exec_bindings *out_bindings);
/* The handle of the slot or root input bound as `name` ("token", "pos", a
 * named slot's or root input's name). INVALID_ARGUMENT naming it when the
 * entry's graph declares no such slot or input; NOT_FOUND (no such entry). */
POOT_MUST_USE poot_status poot_exec_entry_slot(const poot_executor *executor, uint32_t entry,
                                               const char *name, poot_exec_slot *out_slot);
/* Writes the slots and inputs by handle (a value for a leaf the passes
 * removed is dropped; one given no value keeps what an earlier step wrote,
 * unset before the first), replays the entry, synchronizes and reads back the primary
 * output. NEEDS_RESET when an earlier step failed after it replayed (until
 * reset_state); KERNEL_FAULT naming the kernel and trap code (the
 * executable is then NEEDS_RESET); TIMEOUT, DEVICE_LOST (the device is then
 * poisoned); POISONED; NOT_FOUND (no such entry); INVALID_ARGUMENT, naming
 * the slot, for a handle the entry does not have or a value of another type
 * (nothing replayed). */
POOT_MUST_USE poot_status poot_exec_step(poot_executor *executor, uint32_t entry,
                                         const poot_exec_step_io *io);
/* Zeroes every state and clears NEEDS_RESET. POISONED, DEVICE_LOST. */
POOT_MUST_USE poot_status poot_exec_reset_state(poot_executor *executor);
/* Releases an entry (its id is not reused). NOT_FOUND. */
POOT_MUST_USE poot_status poot_exec_remove_entry(poot_executor *executor, uint32_t entry);
void poot_exec_stats_get(const poot_executor *executor, poot_exec_stats *out_stats);
/* Releases every entry, state and weight (the executor stays usable). */
void poot_exec_unload(poot_executor *executor);
void poot_executor_destroy(poot_executor *executor); /* NULL-safe */

/* ======================================================= 3. the engine */

/* Creates the generic engine over `device` (borrowed: it must outlive the
 * engine). The target starts as the device's. OUT_OF_MEMORY, POISONED. */
POOT_MUST_USE poot_status poot_engine_create(poot_device *device, poot_executor **out_executor);

#ifdef __cplusplus
}
#endif

#endif /* POOT_EXEC_H */
