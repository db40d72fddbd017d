/* poot/compile.h — the compile layer (DESIGN §4): from a verified graph to a
 * backend-neutral plan whose kernels are KIR.
 *
 * The planner flattens composites (their decompositions are inlined; the
 * known ones end up in the tuned templates of src/compile/templates/), groups
 * the graph's ops into kernels and instantiates a kernel template per group:
 *  - pointwise: any chain of elementwise and movement ops (converts,
 *    compare/select, broadcast, reshape, transpose, slice, concat, pad, iota,
 *    gather with its check, dynamic_slice, dynamic_update_slice, dequantize),
 *    computed per output element by index arithmetic (loop fusion);
 *  - contract: reduce and dot_general with the elementwise prologue inlined
 *    into the loads (dequantize always fused into the matmul that reads it)
 *    and an elementwise epilogue (residual adds, SwiGLU of two GEMVs that
 *    share their input): serial in index order for short contractions,
 *    one subgroup (or one workgroup with a shared-memory tree when the target
 *    has no subgroup operations) per output for long ones;
 *  - dus: dynamic_update_slice of a State in place (writes only the window;
 *    the start is read from the slot buffer at run time);
 *  - top_k, cumsum, scatter_update: per-row templates;
 *  - attention: "poot.attention" lowered by name (online softmax over
 *    [cap], split across workgroups with a combine for long caches).
 * Every template reads only the target description (subgroup size, shared
 * memory, workgroup limits), never a backend name.
 *
 * Memory (the plan's buffers): every buffer is bound as an array of 32-bit
 * words. Weights, states, slots, constants and outputs hold the graph's
 * dense little-endian layout (GGUF blocks for packed weights); the engine
 * pads each to a multiple of 4 bytes. Every slot leaf lives in ONE slot
 * buffer at a word offset (32-bit slots one word per element, i64 two);
 * kernels read positions and token ids from it at run time, so no
 * slot-dependent value is ever a literal in a plan. Temporaries live in one
 * arena buffer at word offsets passed as push constants (so the same kernel
 * serves every layer); each holds one 32-bit word per element (two for i64):
 * f32 bits for float dtypes (f16/bf16 values already rounded), the integer
 * for integer dtypes, 0/1 for bool. Temporaries share arena memory by
 * liveness (dispatch intervals).
 *
 * Thread safety: a finished plan is immutable and may be read from any
 * thread. Plans own all their memory (poot_plan_destroy). */
#ifndef POOT_COMPILE_H
#define POOT_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"
#include "poot/kir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================= graph passes */
/* Reserved for the graph passes (canonicalize, constant-fold, CSE, DCE) of
 * src/compile/passes/; declared by their author. */

/* ======================================================== options, plan */

/* How the prefill GEMM's products are formed on matrix fragments (the
 * precedent: PyTorch's float32 matmul precision "highest"/"high"/"medium").
 * HIGH (the default): operands split into bf16 hi + lo halves, three mma per
 * fragment pair, within 3·2^-16 relative of each f32 product. MEDIUM:
 * operands rounded once to the weight's 16-bit type (f16 for f16 and
 * dequantized weights, bf16 for bf16; f32 weights stay HIGH), one mma per
 * fragment pair; x rounded to f16 overflows to ±inf past 65504. MEDIUM also
 * rounds x to int8 blocks of 32 (q8_1's d = max|x| / 127) for the decode
 * GEMV of block-format weights where the target has dot4_i8 natively
 * (docs/compiler.md "The decode GEMV at medium"). */
typedef enum poot_matmul_precision {
  POOT_MATMUL_HIGH = 0,
  POOT_MATMUL_MEDIUM = 1,
} poot_matmul_precision;
/* "high", "medium"; and back (POOT_INVALID_ARGUMENT naming the choices). */
const char *poot_matmul_precision_name(poot_matmul_precision p);
POOT_MUST_USE poot_status poot_matmul_precision_parse(const char *s, poot_matmul_precision *out);

typedef struct poot_compile_options {
  /* Borrowed; the target every kernel is built for (required). */
  const poot_kir_target *target;
  /* Threads per workgroup of the templates; 0 → min(256, target limit). */
  uint32_t workgroup_size;
  /* Contractions at least this long run cooperatively (subgroup or
   * workgroup per output); shorter ones run serially in index order, bit for
   * bit as poot_eval. 0 → 64. UINT32_MAX → always serial. */
  uint32_t coop_min;
  /* Watchdog budget per stage in microseconds of estimated device time; 0 →
   * the target's watchdog_ms (none when that is 0 too). */
  double stage_budget_us;
  /* Device model for work weights: bytes per µs and flops per µs. 0 → 2e6
   * (2 TB/s) and 5e7 (50 TFLOP/s). */
  double bytes_per_us;
  double flops_per_us;
  /* One dispatch per group instead of one per level of independent groups
   * (debugging). */
  bool no_batching;
  /* Lower "poot.attention" through its decomposition instead of the fused
   * attention template. */
  bool no_attention_template;
  /* The per-row attention form in prefill too (no tiled form). */
  bool no_attention_tile;
  /* Keep small reductions (RMSNorm statistics) as dispatches of their own
   * instead of recomputing them in every workgroup that reads them. */
  bool no_local_reductions;
  /* The prefill GEMM's precision on matrix fragments (docs/compiler.md,
   * "Numerics" of "The prefill GEMM on matrix fragments") and the block-
   * format decode GEMV's ("The decode GEMV at medium": int8 x and dot4_i8,
   * where the target has it natively); other GEMVs are not affected. */
  poot_matmul_precision matmul_precision;
  /* The prefill GEMM on matrix fragments takes its larger tiles (raw
   * f16/bf16 weights, not split, M ≥ 128: 128 × 128 or 64 × 128 for one
   * root, 128 × 64 for the SwiGLU pair) where they number at least this
   * many workgroups; 0 → 256 (about a wave of every SM at two workgroups
   * each, two waves at one); UINT32_MAX → never (docs/compiler.md). */
  uint32_t gemm_wide_min_grid;
  /* The 128-row tiles of the GEMM on matrix fragments (128 × 128 for one
   * root, 128 × 64 for the SwiGLU pair). Off by default: on an H100 they
   * made prefill slower (1B shape pp512 17,745 → 14,814 tok/s, pp2048
   * 18,865 → 14,428, the 8B shape's layers 47,445 → 32,797 at high; one
   * workgroup an SM at their 130–209 registers, docs/PERFORMANCE.md). */
  bool gemm_big_tiles;
  /* The prefill GEMM on matrix fragments computes x through the group's
   * emitter in every column tile instead of staging it once per projection
   * into a 16-bit temp (a gemm_x dispatch) copied like the weights (both
   * give the same bits; docs/compiler.md "x staged once"). Staged is the
   * default: on an H100 it took the 1B shape's pp512 from 17,402 to 28,654
   * tok/s at high and 27,515 to 46,960 at medium (docs/PERFORMANCE.md). */
  bool gemm_x_emitter;
  /* The prefill GEMM on matrix fragments dequantizes each weight that is
   * not an f16 or bf16 leaf (a K-quant, q8_0, f32 …) through the group's
   * emitter in every row tile instead of staging it once per step into a
   * 16-bit temp (a gemm_w dispatch) copied like a 16-bit leaf (the same
   * bits; docs/compiler.md "Weights staged once"). Staged is the default:
   * on an H100 the full 8B shape's Q4_K_M pp512 went from 1,318 to 6,253
   * tok/s at medium (docs/PERFORMANCE.md). */
  bool gemm_w_emitter;
  /* The block-format decode GEMV takes one row per subgroup at every N
   * (default: two from N = 2048, docs/compiler.md "The decode GEMV"):
   * twice the workgroups for the short projections, which run at a
   * quarter of the SMs' warps on an H100. Off until measured. */
  bool gemv_one_row;
  /* The planner budgets every template with shared_memory_bytes (48 KiB
   * of static .shared on PTX) instead of the target's opt-in shared memory
   * (poot_kir_target.shared_memory_optin_bytes: up to 227 KiB a workgroup
   * on sm_90 through PTX's dynamic shared memory), which lets the GEMM on
   * matrix fragments take deeper rings, bigger tiles and the SwiGLU pair
   * with staged weights at high (docs/compiler.md "Big shared memory"). The
   * opt-in amount is the default: on an H100 it took the full 8B shape's
   * Q4_K_M pp512 at high to 3,080 tok/s (the pair staged). No effect where
   * the target has no opt-in amount. */
  bool shared_memory_static;
} poot_compile_options;

void poot_compile_options_init(poot_compile_options *options);

/* The forms above that are not the default, by name, so that a device run
 * can measure them beside the defaults (`poot bench --forms big-tiles,x-emitter`):
 * each bit turns one switch of poot_compile_options on. */
typedef enum poot_compile_form {
  POOT_FORM_GEMM_BIG_TILES = 1u << 0, /* "big-tiles": gemm_big_tiles */
  POOT_FORM_GEMM_X_EMITTER = 1u << 1, /* "x-emitter": gemm_x_emitter */
  POOT_FORM_GEMV_ONE_ROW = 1u << 2,   /* "gemv-one-row": gemv_one_row */
  POOT_FORM_GEMM_W_EMITTER = 1u << 3, /* "w-emitter": gemm_w_emitter */
  POOT_FORM_STATIC_SHARED = 1u << 4,  /* "static-shared": shared_memory_static */
} poot_compile_form;

/* A comma-separated list of the names above ("" or "none": no form). */
POOT_MUST_USE poot_status poot_compile_forms_parse(const char *list, uint32_t *out_forms);
/* The names of `forms`, comma-separated ("none" for 0), into buf. */
const char *poot_compile_forms_name(uint32_t forms, char *buf, size_t size);
void poot_compile_options_set_forms(poot_compile_options *options, uint32_t forms);

typedef enum poot_plan_buffer_class {
  POOT_PLAN_BUFFER_TEMP = 0, /* the arena of temporaries (one buffer) */
  POOT_PLAN_BUFFER_SLOT,     /* the slot buffer (one buffer) */
  POOT_PLAN_BUFFER_WEIGHT,
  POOT_PLAN_BUFFER_STATE,
  POOT_PLAN_BUFFER_CONST,  /* literal data held by the plan */
  POOT_PLAN_BUFFER_INPUT,  /* a root Param leaf (tests and tools) */
  POOT_PLAN_BUFFER_OUTPUT, /* the primary output or an environment entry */
  POOT_PLAN_BUFFER_CLASS_COUNT
} poot_plan_buffer_class;
const char *poot_plan_buffer_class_name(poot_plan_buffer_class c); /* "temp", ... */

typedef struct poot_plan_buffer {
  poot_plan_buffer_class cls;
  const char *name;           /* binding name ("blk.0.attn_q", "blk.0.k", "output", ...) */
  poot_type type;             /* the tensor's graph type (TEMP/SLOT: u32[words]) */
  uint64_t size;              /* bytes, a multiple of 4 */
  uint32_t align;             /* base alignment in bytes */
  const void *data;           /* CONST: the bytes (size rounded up with zeros); else NULL */
  poot_weight_key weight_key; /* WEIGHT: the leaf's key, which binds it; else 0 */
} poot_plan_buffer;

/* A slot leaf inside the slot buffer. */
typedef struct poot_plan_slot {
  const char *name; /* binding name: "token", "pos", or the named slot's name */
  poot_type type;
  uint32_t word_offset; /* first word in the slot buffer */
} poot_plan_slot;

/* A temporary in the arena. */
typedef struct poot_plan_temp {
  poot_value value; /* the graph value it holds */
  poot_type type;
  uint64_t offset;      /* bytes from the arena's start (aligned) */
  uint64_t size;        /* bytes */
  uint32_t first, last; /* dispatch indices: written first at `first`, read last at `last` */
} poot_plan_temp;

#define POOT_PLAN_MAX_BINDINGS 64
#define POOT_PLAN_MAX_PUSH 64

typedef struct poot_plan_dispatch {
  uint32_t kernel;  /* index into plan->kernels */
  uint32_t grid[3]; /* workgroups */
  uint32_t binding_count;
  uint32_t bindings[POOT_PLAN_MAX_BINDINGS]; /* buffer index per kernel binding, in order */
  uint32_t push_count;
  uint32_t push[POOT_PLAN_MAX_PUSH]; /* PUSH param values (32-bit patterns) in param order */
  const char *what; /* the group it computes, for the printer ("dot %36 gemv sg") */
  uint64_t bytes;   /* estimated bytes read and written */
  /* Of `bytes`: weight buffers; state buffers (the K/V cache); and of those
   * the states accessed whole (a sweep, which a kernel bounded by a run-time
   * length reads only in part). The rest is activations: temporaries, slots,
   * constants, inputs and outputs. */
  uint64_t weight_bytes, state_bytes, state_whole_bytes;
  uint64_t flops;   /* estimated arithmetic */
  double weight_us; /* work weight: max(bytes/bandwidth, flops/rate) + launch */
  uint32_t stage;   /* stage index (watchdog split) */
} poot_plan_dispatch;

typedef struct poot_plan {
  poot_kir_target target; /* copy (name borrowed from the constructor's static string) */
  uint32_t buffer_count;
  poot_plan_buffer *buffers; /* [0] is the temp arena, [1] the slot buffer */
  uint32_t slot_count;
  poot_plan_slot *slots;
  uint32_t temp_count;
  poot_plan_temp *temps;
  uint32_t kernel_count;
  poot_kir_kernel **kernels; /* distinct by KIR hash */
  uint32_t dispatch_count;
  poot_plan_dispatch *dispatches;
  uint32_t stage_count;
  /* Results: buffer index of the primary output (UINT32_MAX: none), and per
   * graph State (in graph order) its buffer. */
  uint32_t output_buffer;
  uint32_t state_count;
  uint32_t *state_buffers;
  uint32_t env_count;
  uint32_t *env_buffers;
  uint64_t weight_bytes;   /* sum of the weight buffers */
  uint64_t bytes_per_step; /* estimated bytes every dispatch reads and writes */
  void *impl_;             /* private: arena */
} poot_plan;

/* Plans `graph` (borrowed; must have passed poot_graph_verify) for
 * options->target. INVALID_ARGUMENT for bad options, UNSUPPORTED naming the
 * op and dtype a template does not cover on this target (e.g. i64 on a
 * target without 64-bit integers, a k-quant format), OUT_OF_MEMORY.
 * *out_plan is NULL on failure. */
POOT_MUST_USE poot_status poot_plan_create(const poot_graph *graph,
                                           const poot_compile_options *options,
                                           poot_plan **out_plan);
void poot_plan_destroy(poot_plan *plan); /* NULL-safe */

/* Stage cutting (the watchdog split), the one rule the plan and the device
 * layer's recordings both follow: weights in order, a stage closes when the
 * next weight would push its sum past budget_us (none when budget_us <= 0),
 * a weight heavier than the budget gets a stage of its own, negative
 * weights count as 0. Start from {.budget_us = …}; each call returns the
 * stage of the next weight. Inline, so that the device half of exec uses
 * it without linking the compiler. */
typedef struct poot_plan_stager {
  double budget_us;
  double acc_us;  /* weight of the open stage */
  uint32_t stage; /* the open stage */
} poot_plan_stager;
static inline uint32_t poot_plan_stage_next(poot_plan_stager *stager, double weight_us) {
  double w = weight_us > 0 ? weight_us : 0;
  /* Close the stage when this weight would push it past the budget; a
   * weight heavier than the budget still gets a stage (of its own). */
  if (stager->budget_us > 0 && stager->acc_us > 0 && stager->acc_us + w > stager->budget_us) {
    stager->stage++;
    stager->acc_us = 0;
  }
  stager->acc_us += w;
  return stager->stage;
}

/* Appends the plan's text form: buffers, slots, temporaries with offsets and
 * lifetimes, then one line per dispatch (kernel, grid, bindings, push
 * constants, weight). Deterministic. */
void poot_plan_print(const poot_plan *plan, poot_strbuf *out);

/* Renders kernel `index` for `target` (usually plan->target) in its language:
 * PTX text, GLSL text, WGSL text or LLVM IR text. Errors from the renderer. */
POOT_MUST_USE poot_status poot_plan_render_kernel(const poot_plan *plan, uint32_t index,
                                                  const poot_kir_target *target, poot_strbuf *out);

/* ================================================ the interpreter device */

/* One input: a leaf's binding name (as poot_eval takes) and a tensor of its
 * type (borrowed). */
typedef struct poot_plan_input {
  const char *name;
  const poot_tensor *tensor;
} poot_plan_input;

/* Buffers of a plan on the CPU, run with the KIR interpreter: the reference
 * "device" of the compile tests. */
typedef struct poot_plan_run poot_plan_run;

typedef struct poot_plan_run_options {
  uint32_t subgroup_size; /* 0 → the plan target's */
  /* Run checks as the SPIR-V/WGSL targets do (error word) instead of a trap;
   * a set word still fails the dispatch with KERNEL_FAULT. */
  bool error_word;
} poot_plan_run_options;

/* Allocates every buffer (zeroed states unless bound). OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_plan_run_create(const poot_plan *plan, poot_plan_run **out_run);
void poot_plan_run_destroy(poot_plan_run *run); /* NULL-safe */
/* Binds inputs by name (weights, states, slots, params) and copies them in.
 * INVALID_ARGUMENT for an unknown name or a type mismatch. Inputs not named
 * keep their contents (states carry over between steps). */
POOT_MUST_USE poot_status poot_plan_run_bind(poot_plan_run *run, size_t count,
                                             const poot_plan_input *inputs);
/* Runs every dispatch in order. KERNEL_FAULT "dispatch D (kernel K): ...
 * trap code N (trap name)" when a check fails; other interpreter errors. */
POOT_MUST_USE poot_status poot_plan_run_step(poot_plan_run *run,
                                             const poot_plan_run_options *options);
/* The primary output / the new value of state `name` / an environment entry
 * as a host tensor (borrowed view of the run's buffer, valid until the next
 * step). NOT_FOUND when absent. */
POOT_MUST_USE poot_status poot_plan_run_output(poot_plan_run *run, poot_tensor *out_tensor);
POOT_MUST_USE poot_status poot_plan_run_state(poot_plan_run *run, const char *name,
                                              poot_tensor *out_tensor);

#ifdef __cplusplus
}
#endif

#endif /* POOT_COMPILE_H */
