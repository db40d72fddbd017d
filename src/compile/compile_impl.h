/* compile_impl.h — private to src/compile: the flattened graph view the
 * planner builds, the kernel-building context and the template entry
 * points. */
#ifndef POOT_COMPILE_IMPL_H
#define POOT_COMPILE_IMPL_H

#include "poot/compile.h"

/* How a value is held. */
typedef enum {
  PC_INLINE = 0, /* recomputed inside every kernel that reads it */
  PC_LEAFBUF,    /* a leaf with its own dense buffer */
  PC_SLOT,       /* a slot leaf in the slot buffer */
  PC_CONSTLIT,   /* a scalar constant, a literal */
  PC_TEMP,       /* materialized into the arena */
  PC_DENSE,      /* materialized into a dense buffer (an output / a state in place) */
  PC_FUSED,      /* a contraction root computed inside another group's kernel */
  PC_LOCAL,      /* a small reduction recomputed by every workgroup that reads it (shared) */
} pc_hold;

typedef enum {
  PG_POINTWISE = 0,
  PG_CONTRACT,
  PG_DUS,
  PG_TOPK,
  PG_CUMSUM,
  PG_SCATTER,
  PG_ATTENTION,
  PG_ATTN_COMBINE,
  PG_GEMM_COMBINE, /* the split-K GEMM's partials added, then its epilogue */
  PG_GEMM_X,       /* a GEMM's x in the 16-bit form its mma wants (aux_temp) */
  PG_GEMM_W,       /* a GEMM root's weight in the 16-bit form its mma wants (aux_temp) */
} pg_kind;

#define PG_MAX_ROOTS 4

typedef struct pc_group {
  pg_kind kind;
  poot_value out;       /* value computed (expression root) */
  poot_value dest;      /* value whose storage is written (usually out) */
  uint32_t dest_buffer; /* dense destination buffer, or UINT32_MAX (temp of dest) */
  uint32_t nroots;
  poot_value roots[PG_MAX_ROOTS]; /* contract roots (dot/reduce) */
  poot_value out2;                /* top_k: indices */
  uint32_t split;                 /* attention: workgroups per row over [cap] (1: none) */
  bool tile;                      /* attention: the tiled prefill form (attention_tile.c) */
  uint32_t aux_temp;              /* attention split: the partials' temp, else UINT32_MAX;
                                   * top_k pipeline: the runs written (UINT32_MAX: the results) */
  uint32_t step;                  /* top_k pipeline: 0 = tiles, r = merge round r */
  uint32_t aux_in;                /* top_k merge round: the runs read */
  uint32_t nlocal;                /* PC_LOCAL reductions this group computes first */
  poot_value locals[4];
  /* A part of a wide concat (pointwise; cat_hi > 0): operands [cat_lo,
   * cat_hi) of the concat `out` written into its storage, so that no kernel
   * reads more than PC_CONCAT_PART stored operands (push params, bindings). */
  uint32_t cat_lo, cat_hi;
  /* The mma GEMM's x staged once (PG_GEMM_X writes it, the GEMM copies
   * it): the temp's index + 1 on the GEMM group (0: x through the
   * emitter); on the PG_GEMM_X group, xone: one 16-bit array of xty (MEDIUM)
   * rather than bf16 hi and lo arrays. */
  uint32_t x_temp1;
  bool xone;
  poot_kir_scalar xty;
  /* The mma GEMM's weights staged once (a PG_GEMM_W group per root writes
   * one, roots[0] its dot; the GEMM copies them): root r's temp index + 1
   * on the GEMM group (0: the weights as the form reads them otherwise);
   * the PG_GEMM_W group's form is xone and xty, as PG_GEMM_X's. */
  uint32_t w_temp1[PG_MAX_ROOTS];
} pc_group;

/* Operands of a concat one kernel reads at most (the rest: more parts). */
#define PC_CONCAT_PART 8

typedef struct pc_value {
  pc_hold hold;
  const poot_node *node; /* defining node (after resolution) */
  uint32_t ri;           /* result index */
  uint32_t users;
  uint32_t buffer;    /* LEAFBUF/DENSE: buffer index */
  uint32_t slot_word; /* SLOT: word offset */
  uint32_t temp;      /* TEMP: index in temps */
  uint32_t cost;
  bool expensive;
  bool reachable;
  bool inplace; /* a dynamic_update_slice or scatter_update written into its State */
  bool result;  /* read by a result copy (output, environment, state) */
  /* Users that are attention templates reading it as their K or V. */
  uint32_t attn_kv_users;
} pc_value;

typedef struct pc_planner {
  const poot_graph *g;
  const poot_compile_options *opt;
  /* The target the templates budget for and the planner verifies with
   * (&own): opt->target, without its opt-in amount under
   * opt->shared_memory_static (poot__cc_gemm_shared_budget). */
  const poot_kir_target *t;
  poot_kir_target own;
  uint32_t wg; /* workgroup size */
  uint32_t nvalues;
  poot_value *alias; /* resolution of params / composite results */
  pc_value *v;
  poot_arena arena; /* plan lifetime */
  poot_vec buffers; /* poot_plan_buffer */
  poot_vec slots;   /* poot_plan_slot */
  uint32_t slot_words;
  poot_vec temps;  /* poot_plan_temp */
  poot_vec groups; /* pc_group */
  poot_vec order;  /* const poot_node *: reachable op nodes in topological order */
  uint32_t out_buffer;
  poot_vec env_buffers; /* uint32_t */
} pc_planner;

/* Kernel-building context for one group. */
#define PC_MAX_MEMO 2048
#define PC_MAX_DIMS POOT_MAX_RANK
typedef struct pc_memo {
  poot_value v;
  uint32_t rank;
  poot_kir_value idx[PC_MAX_DIMS];
  poot_kir_value out;
  uint32_t depth;
} pc_memo;

/* A shared array of a kernel (poot__cc_shared). */
typedef struct pc_shared_arr {
  uint32_t ref, count, tag;
  poot_kir_scalar elem;
} pc_shared_arr;

typedef struct pc_kctx {
  pc_planner *pl;
  poot_kir_builder *b;
  const poot_kir_target *t;
  uint32_t nbind;
  uint32_t bind_buf[POOT_PLAN_MAX_BINDINGS];         /* plan buffer per binding */
  poot_kir_scalar bind_elem[POOT_PLAN_MAX_BINDINGS]; /* its element type (u32 but for raw reads) */
  uint32_t npush;
  uint32_t push_temp[POOT_PLAN_MAX_PUSH]; /* temp index per push param */
  poot_kir_value push_val[POOT_PLAN_MAX_PUSH];
  uint32_t nmemo;
  pc_memo *memo;
  uint32_t depth;
  bool has_checks;
  poot_value computing; /* the group's own result: computed, never loaded */
  uint32_t nlocal;      /* PC_LOCAL values in shared memory: value, shared array */
  poot_value local_v[4];
  uint32_t local_sh[4];
  uint32_t wg_base; /* first workgroup of this group in a batched kernel */
  /* While a concat part is emitted: that concat emits only operands
   * [cat_lo, cat_hi) (cat_hi 0: every operand). */
  poot_value cat_v;
  uint32_t cat_lo, cat_hi;
  uint32_t tag; /* group number inside the kernel (unique names) */
  /* Shared arrays declared through poot__cc_shared: element type, count,
   * and the last group (tag) using each. */
  uint32_t nshared;
  pc_shared_arr shared[24];
  /* Reads: temps read (for liveness) */
  uint32_t nreads;
  uint32_t reads[256];
  uint64_t bytes; /* bytes estimate */
  double frac;    /* fraction of a leaf buffer read under the current gather */
  double buf_frac[POOT_PLAN_MAX_BINDINGS];
  uint64_t flops;
  /* While the q8_0 K/V write reads its update (poot__cc_q8_pair_values): a
   * quantize node emits its f32 operand, which the template quantizes. */
  bool prequant;
} pc_kctx;

/* kir_build.c: the KIR-building helpers every emitter and template shares. */
const poot_type *poot__cc_type(const pc_planner *pl, poot_value v);
int64_t poot__cc_elems(const poot_shape *s);
/* Compute type of a graph dtype. */
poot_kir_scalar poot__cc_compute_scalar(poot_dtype dt);
POOT_MUST_USE poot_status poot__cc_u32(pc_kctx *k, uint32_t c, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_i32(pc_kctx *k, int32_t c, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_cf32(pc_kctx *k, float c, poot_kir_value *out);
/* A constant of scalar type s (i64 keeps all 64 bits, others the low 32). */
POOT_MUST_USE poot_status poot__cc_scal(pc_kctx *k, poot_kir_scalar s, int64_t v,
                                        poot_kir_value *out);
/* A constant of dtype dt's compute type: f for floats, i otherwise. */
POOT_MUST_USE poot_status poot__cc_const_of(pc_kctx *k, poot_dtype dt, double f, int64_t i,
                                            poot_kir_value *out);
/* The scalar type of a KIR value. */
poot_kir_scalar poot__cc_scalar_of(pc_kctx *k, poot_kir_value v);
POOT_MUST_USE poot_status poot__cc_bin(pc_kctx *k, poot_kir_op op, poot_kir_value a,
                                       poot_kir_value b, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_bin_c(pc_kctx *k, poot_kir_op op, poot_kir_value a, uint32_t c,
                                         poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_un(pc_kctx *k, poot_kir_op op, poot_kir_value a,
                                      poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_sel(pc_kctx *k, poot_kir_value c, poot_kir_value a,
                                       poot_kir_value b, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_cvt(pc_kctx *k, poot_kir_scalar to, poot_kir_value a,
                                       poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_bcast(pc_kctx *k, poot_kir_scalar to, poot_kir_value a,
                                         poot_kir_value *out);
void poot__cc_scope_push(pc_kctx *k);
void poot__cc_scope_pop(pc_kctx *k);
/* The memoized value of v at idx, when one is visible in the current scope. */
bool poot__cc_memo_get(pc_kctx *k, poot_value v, uint32_t rank, const poot_kir_value *idx,
                       poot_kir_value *out);
/* Binds a value (or an arbitrary KIR value) as the value of v at idx (memo). */
POOT_MUST_USE poot_status poot__cc_memo_put(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                                            poot_kir_value val);
/* Splits a u32 linear index into the multi-index of `shape`. */
POOT_MUST_USE poot_status poot__cc_delinearize(pc_kctx *k, poot_kir_value lin,
                                               const poot_shape *shape, poot_kir_value *idx);
POOT_MUST_USE poot_status poot__cc_linearize(pc_kctx *k, const poot_kir_value *idx,
                                             const poot_shape *shape, poot_kir_value *out);
/* The kernel's binding of plan buffer `buffer` (added on first use;
 * weights and constants read-only and invariant). */
POOT_MUST_USE poot_status poot__cc_binding_of(pc_kctx *k, uint32_t buffer, uint32_t *out_ref);
/* The same with elements of type `elem` (16-byte copies of raw 16-bit
 * weights): a binding of its own when the buffer is also read as words. */
POOT_MUST_USE poot_status poot__cc_binding_typed(pc_kctx *k, uint32_t buffer, poot_kir_scalar elem,
                                                 uint32_t *out_ref);
void poot__cc_note_buffer(pc_kctx *k, uint32_t ref, double frac);
/* Word offset of temp `ti` in the arena (a push constant); records a read. */
POOT_MUST_USE poot_status poot__cc_temp_base(pc_kctx *k, uint32_t ti, bool read,
                                             poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_load_word(pc_kctx *k, uint32_t ref, poot_kir_value idx,
                                             poot_kir_value *out);
/* Reads element `lin` of a materialized/leaf value (compute type). */
POOT_MUST_USE poot_status poot__cc_load_value(pc_kctx *k, poot_value v, poot_kir_value lin,
                                              poot_kir_value *out);
/* Stores `val` (compute type of v's dtype) as element `lin` of the storage of
 * value v (temp or dense 32/64-bit buffer). */
POOT_MUST_USE poot_status poot__cc_store_value(pc_kctx *k, poot_value v, poot_kir_value lin,
                                               poot_kir_value val);

/* numerics.c: soft-float and integer numerics, exactly as poot_eval. */
POOT_MUST_USE poot_status poot__cc_f16_decode(pc_kctx *k, poot_kir_value h, poot_kir_value *out);
/* The two f16 halves of word w (low half first) as f32: the target's
 * conversion where it has f16 arithmetic, else the integer decoder. */
POOT_MUST_USE poot_status poot__cc_f16_pair(pc_kctx *k, poot_kir_value w, poot_kir_value out[2]);
POOT_MUST_USE poot_status poot__cc_wrap_int(pc_kctx *k, poot_dtype dt, poot_kir_value x,
                                            poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_round(pc_kctx *k, poot_dtype dt, poot_kir_value x,
                                         poot_kir_value *out);
/* Storage bits (u32) of dtype dt → its compute value. */
POOT_MUST_USE poot_status poot__cc_from_bits(pc_kctx *k, poot_kir_value bits, poot_dtype dt,
                                             poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_to_bits(pc_kctx *k, poot_kir_value x, poot_dtype dt,
                                           poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_accum(pc_kctx *k, poot_kir_op op, poot_dtype dt,
                                         poot_kir_value a, poot_kir_value b, poot_kir_value *out);
/* The maximum or minimum of two f32 values, with poot_eval's NaN and
 * signed-zero rules. */
POOT_MUST_USE poot_status poot__cc_fminmax(pc_kctx *k, bool is_max, poot_kir_value a,
                                           poot_kir_value b, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_int_divrem(pc_kctx *k, bool div, poot_dtype dt, poot_kir_value a,
                                              poot_kir_value b, poot_kir_value *out);
/* The f32 remainder, exactly C's fmodf. */
POOT_MUST_USE poot_status poot__cc_f32_rem(pc_kctx *k, poot_kir_value x, poot_kir_value y,
                                           poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_int_pow(pc_kctx *k, poot_dtype dt, poot_kir_value a,
                                           poot_kir_value b, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_int_shift(pc_kctx *k, bool left, poot_dtype dt, poot_kir_value a,
                                             poot_kir_value b, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_convert(pc_kctx *k, poot_kir_value x, poot_dtype from,
                                           poot_dtype to, poot_kir_value *out);

/* emit.c: the fusion emitter. */
POOT_MUST_USE poot_status poot__cc_emit(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                                        poot_kir_value *out);
/* The table row a rank-1-index gather v reads at index position pos: the
 * index read, checked with v's trap and clamped (u32). */
POOT_MUST_USE poot_status poot__cc_emit_gather_row(pc_kctx *k, poot_value v, poot_kir_value pos,
                                                   poot_kir_value *out);
/* Every check of an inline gather v over its whole index tensor (what
 * computing it whole would check, though its readers read some rows only):
 * the first workgroup of the group strides the index elements. Nothing for
 * a gather without a trap. */
POOT_MUST_USE poot_status poot__cc_emit_gather_checks(pc_kctx *k, poot_value v);
POOT_MUST_USE poot_status poot__cc_emit_start_checks(pc_kctx *k, poot_value v);
/* emit_packed.c: GGUF block decoding and the Philox generator. */
POOT_MUST_USE poot_status poot__cc_emit_dequantize(pc_kctx *k, const poot_node *n,
                                                   const poot_kir_value *idx, poot_kir_value *out);
/* Element idx of packed value w held in a buffer (a weight or a q8_0 K/V
 * state), decoded to f32 (GGUF's dequantization). UNSUPPORTED elsewhere. */
POOT_MUST_USE poot_status poot__cc_load_packed(pc_kctx *k, poot_value w, const poot_kir_value *idx,
                                               poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_emit_rng(pc_kctx *k, const poot_node *n,
                                            const poot_kir_value *idx, const poot_type *ty,
                                            poot_kir_value *out);
/* The group's PC_LOCAL reductions, computed by the whole workgroup into
 * shared memory (uniform control flow: call before any per-thread branch).
 * (templates/contract.c) */
POOT_MUST_USE poot_status poot__cc_local_prologue(pc_kctx *k, const pc_group *g);

/* templates/: one function per template family; each builds the group's
 * kernel body into k->b (the builder exists; workgroup size pl->wg) and sets
 * the grid. */
POOT_MUST_USE poot_status poot__cc_tpl_pointwise(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
POOT_MUST_USE poot_status poot__cc_tpl_contract(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                                const char **out_what);
/* The weight-streaming GEMV (templates/gemv.c); *out_done false when g does
 * not have its shape (nothing emitted). */
POOT_MUST_USE poot_status poot__cc_tpl_gemv(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                            const char **out_what, bool *out_done);
/* Whether root v is a projection: a dot_general with an f32 result, no batch
 * dimension, contracting the last dimension of both rank-2 f32 operands
 * (x [M, K] times w [N, K]); *x and *w get the operands (aliases resolved),
 * *m, *n, *k the sizes. (templates/gemm.c) */
bool poot__cc_dot_nt(pc_planner *pl, poot_value v, poot_value *x, poot_value *w, int64_t *m,
                     int64_t *n, int64_t *k);
/* The tiled GEMM of prefill (templates/gemm.c); *out_done false when g does
 * not have its shape (nothing emitted). */
/* Whether the decode GEMV (templates/gemv.c) takes contraction group g. */
bool poot__cc_gemv_takes(pc_planner *pl, const pc_group *g);
/* Split-K of a GEMM group (templates/gemm.c): the number of splits of K
 * (1: none) when the GEMM takes group g (the GEMV does not) and its tiles
 * alone would be a small grid; the planner then gives the group a partials
 * temp and a combine group (PG_GEMM_COMBINE). */
uint32_t poot__cc_gemm_split(pc_planner *pl, const pc_group *g);
/* Adds each output's split partials in split order and runs the group's
 * epilogue (templates/gemm.c). */
POOT_MUST_USE poot_status poot__cc_tpl_gemm_combine(pc_kctx *k, const pc_group *g,
                                                    uint32_t grid[3]);
POOT_MUST_USE poot_status poot__cc_tpl_gemm(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                            const char **out_what, bool *out_done);
/* Whether the mma GEMM of group g (split already chosen) would copy x from
 * a staged 16-bit temp (the raw path with x in its ring): *out_one and
 * *out_ty give the temp's form (MEDIUM: one array of that type; else bf16
 * hi and lo), *out_bytes its size. (templates/gemm.c) */
bool poot__cc_gemm_x_staged(pc_planner *pl, const pc_group *g, bool *out_one,
                            poot_kir_scalar *out_ty, uint64_t *out_bytes);
/* The PG_GEMM_X group: x of g->roots[0] at every [m, c], rounded as the mma
 * GEMM's staging rounds it, into g->aux_temp (templates/gemm_stage.c). */
POOT_MUST_USE poot_status poot__cc_tpl_gemm_x(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
/* Whether the mma GEMM of group g (split chosen) would copy its weights
 * from staged 16-bit temps, one a root (a weight that is not a 16-bit leaf
 * the raw path copies as stored): the temps' form as for x, *out_bytes
 * each one's size. (templates/gemm.c) */
bool poot__cc_gemm_w_staged(pc_planner *pl, const pc_group *g, bool *out_one,
                            poot_kir_scalar *out_ty, uint64_t *out_bytes);
/* The PG_GEMM_W group: the weight of g->roots[0] at every [n, c], rounded
 * as the mma GEMM's staging rounds it, into g->aux_temp; *mode "high" or
 * "medium", then " blocks" where block-format chunks are decoded
 * (templates/gemm_stage.c). */
POOT_MUST_USE poot_status poot__cc_tpl_gemm_w(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                              const char **mode);
/* templates/kv_quant.c: the q8_0 K/V write, one thread per pair of blocks
 * (PC_Q8_PAIR elements, PC_Q8_PAIR_WORDS words). */
#define PC_Q8_PAIR 64
#define PC_Q8_PAIR_WORDS 17
/* Whether `state` is q8_0 and the elements of its dims from `from` on (the
 * contiguous run one write covers) are whole pairs of blocks; the error
 * naming a state whose runs are not. */
bool poot__cc_q8_run_ok(const poot_type *state, uint32_t from);
POOT_MUST_USE poot_status poot__cc_q8_refuse(const poot_type *state);
/* The f32 values (before quantize) of update `upd` (rank `rank`) in its two
 * blocks: 32 elements along the last dim from uidx[0], then from uidx[1]. */
POOT_MUST_USE poot_status poot__cc_q8_pair_values(pc_kctx *k, poot_value upd,
                                                  const poot_kir_value *const uidx[2],
                                                  uint32_t rank, poot_kir_value vals[PC_Q8_PAIR]);
/* Quantizes vals and stores the two blocks as pair `pair` (element index /
 * 64) of plan buffer `buffer`. */
POOT_MUST_USE poot_status poot__cc_q8_pair_store(pc_kctx *k, uint32_t buffer, poot_kir_value pair,
                                                 const poot_kir_value vals[PC_Q8_PAIR]);
/* Whether dynamic_update_slice / scatter_update n of a q8_0 state can be
 * written in place (whole rows of whole pairs of blocks). (pointwise.c) */
bool poot__cc_q8_dus_ok(const pc_planner *pl, const poot_node *n);
bool poot__cc_q8_scatter_ok(const pc_planner *pl, const poot_node *n);
/* roundf of an f32 value (half away from zero), as the round op. (emit.c) */
POOT_MUST_USE poot_status poot__cc_roundf(pc_kctx *k, poot_kir_value x, poot_kir_value *out);
POOT_MUST_USE poot_status poot__cc_tpl_dus(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
/* Whether dynamic_update_slice n of a 16-bit state can be written in place
 * by 32-bit words: its update covers whole rows (the last dimension) of an
 * even length. */
bool poot__cc_dus_word_pairs(const pc_planner *pl, const poot_node *n);
/* Whether a scatter_update's 16-bit target is written one 32-bit word (two
 * elements of a row) per thread: its axis is not the last dimension and
 * that dimension is even (a paged f16 K/V pool: rows of Hkv · D halves). */
bool poot__cc_scatter_word_pairs(const pc_planner *pl, const poot_node *n);
/* Index lists up to this length scatter into a single position (the target
 * has only the axis) one thread per index (templates/pointwise.c). */
#define PC_SCATTER_PAR_MAX 4096
/* top_k (templates/select.c): the sorting pipeline, or the rank template
 * (pointwise.c) where the pipeline does not apply. */
POOT_MUST_USE poot_status poot__cc_tpl_topk(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                            const char **mode);
POOT_MUST_USE poot_status poot__cc_tpl_topk_rank(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
/* The sizes of top_k node n's pipeline; false when its rows take the rank
 * template (short rows, 64-bit or bool values, k too large for shared
 * memory). */
typedef struct pc_topk_shape {
  uint32_t n, k; /* row length, k */
  uint32_t K;    /* run length: k rounded up to a power of two */
  uint32_t rows;
  uint32_t tile;   /* stage 1: pairs a workgroup sorts (a power of two) */
  uint32_t tiles;  /* stage-1 workgroups a row = its runs after stage 1 */
  uint32_t group;  /* merge: runs a workgroup takes at most (a power of two) */
  uint32_t rounds; /* merge rounds */
  uint32_t wg;     /* threads of a workgroup of the pipeline's kernels */
} pc_topk_shape;
bool poot__cc_topk_shape(const pc_planner *pl, const poot_node *n, pc_topk_shape *out);
/* The workgroup size of group g's kernel: the pipeline's own for a top_k
 * stage, the scan's for a cumsum, else the plan's (a group of another size
 * is never batched with others). */
uint32_t poot__cc_group_wg(const pc_planner *pl, const pc_group *g);
/* The groups of top_k node n with values v (stage 1 and the merge rounds). */
POOT_MUST_USE poot_status poot__cc_group_topk(pc_planner *pl, const poot_node *n, poot_value v);
/* a before b in top_k order: larger first (NaN largest when fl), ties by
 * the lower index. */
POOT_MUST_USE poot_status poot__cc_topk_before(pc_kctx *k, poot_kir_value a, poot_kir_value ia,
                                               poot_kir_value b, poot_kir_value ib, bool fl,
                                               poot_kir_value *out);
/* cumsum (templates/scan.c): a workgroup scan per row, or the serial
 * template (pointwise.c) for short rows and other accumulators. */
POOT_MUST_USE poot_status poot__cc_tpl_cumsum(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                              const char **mode);
POOT_MUST_USE poot_status poot__cc_tpl_cumsum_serial(pc_kctx *k, const pc_group *g,
                                                     uint32_t grid[3]);
/* The scan's workgroup size for cumsum node n; 0 when it takes the serial
 * template. */
uint32_t poot__cc_scan_wg(const pc_planner *pl, const poot_node *n);
POOT_MUST_USE poot_status poot__cc_tpl_scatter(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
POOT_MUST_USE poot_status poot__cc_tpl_attention(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
POOT_MUST_USE poot_status poot__cc_tpl_attn_combine(pc_kctx *k, const pc_group *g,
                                                    uint32_t grid[3]);
double poot__cc_attention_scale(const poot_node *n);
/* Whether gather v may be read in place by an attention template as its K
 * or V (not materialized): rows (axis 0, a rank-1 index) of a stored
 * [R, Hkv, D] table, a paged K/V pool through its row map (attention.c). */
bool poot__cc_attn_kv_gather(const pc_planner *pl, poot_value v);
/* The checks of attention operands kk and v that are inline gathers, over
 * their whole index (attention.c). */
POOT_MUST_USE poot_status poot__cc_attn_kv_checks(pc_kctx *k, poot_value kk, poot_value v);
/* The last-visible-position operand of a recognizably causal mask, else
 * POOT_VALUE_NONE (attention.c). */
poot_value poot__cc_attn_causal_bound(const pc_planner *pl, poot_value mask);
/* templates/attention_tile.c: the tiled prefill form's shape. */
typedef struct pc_attn_tile {
  uint32_t tq;    /* query positions per workgroup */
  uint32_t bc;    /* K/V positions per block staged in shared memory */
  uint32_t rows;  /* tq · (Hq / Hkv) (query, head) rows */
  uint32_t lanes; /* threads per row */
  uint32_t nd;    /* dims of the weighted V sum per thread */
  uint32_t ns;    /* scores per thread per block */
} pc_attn_tile;
/* Whether attention node n takes the tiled form on this target (T ≥ 16, a
 * causal mask, shared memory, no SIMD CPU), and its shape. */
bool poot__cc_attn_tile_shape(const pc_planner *pl, const poot_node *n, pc_attn_tile *out);
POOT_MUST_USE poot_status poot__cc_tpl_attn_tile(pc_kctx *k, const pc_group *g, uint32_t grid[3]);
/* A composite the planner lowers to a template by name (not flattened). */
bool poot__cc_lowered_composite(const pc_planner *pl, const poot_node *n);
/* The linear thread index over a 2-D grid (x up to 65535 workgroups). */
POOT_MUST_USE poot_status poot__cc_linear_workgroup(pc_kctx *k, poot_kir_value *out);
void poot__cc_grid_for(uint64_t workgroups, uint32_t grid[3]);
/* A declaration name unique in the kernel: "<base>_<tag>". */
const char *poot__cc_name(pc_kctx *k, const char *base, char *buf, size_t n);
/* A shared array of `count` elems for the group being built: one that an
 * earlier group of the same batched kernel declared (the groups of a
 * kernel run in different workgroups, so none sees another's shared
 * memory) when one is large enough and this group uses it for nothing
 * else, else a new one named "<base>_<tag>". The kernel's shared memory is
 * then its largest group's, not their sum. */
POOT_MUST_USE poot_status poot__cc_shared(pc_kctx *k, const char *base, poot_kir_scalar elem,
                                          uint32_t count, uint32_t *out_ref);

POOT_MUST_USE poot_status poot__cc_plan_build(pc_planner *pl, const poot_graph *g);

#endif
