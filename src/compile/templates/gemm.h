/* templates/gemm.h — what the prefill GEMM's two forms share (private to
 * templates/): the group's shape, the workgroup's tile origin and the
 * per-output epilogue. gemm.c holds the scalar form and the dispatch,
 * gemm_mma.c the matrix-fragment form. */
#ifndef POOT_COMPILE_TEMPLATES_GEMM_H
#define POOT_COMPILE_TEMPLATES_GEMM_H

#include "../compile_impl.h"

#define GEMM_TILE 64 /* output rows and columns per workgroup (both forms) */
#define GEMM_THREADS 256

typedef struct gemm_root {
  poot_value v; /* the dot */
  poot_value x; /* its left operand, [M, K] f32 */
  poot_value w; /* its right operand, [N, K] f32 (inline convert/dequantize of a weight) */
} gemm_root;

/* One GEMM kernel's shape and state: the roots, M x N x K, the
 * accumulators, the staged tiles and the thread's place in its tile (the
 * last four fields: the scalar form's). */
typedef struct gemm_form {
  const pc_group *g;
  gemm_root rs[PG_MAX_ROOTS];
  int64_t M, N, K;
  uint32_t nr, pacc, sa, sb[PG_MAX_ROOTS];
  uint32_t tm, tn; /* the tile's rows and columns: GEMM_TILE, or the mma form's (gemm_mma.c) */
  /* Split-K (g->split > 1): the workgroup's split sidx sums contraction
   * elements [kbase, kbase + ks) and stores the raw sums in g->aux_temp. */
  uint32_t split, ks;
  /* x may be copied from a staged 16-bit temp (the group's x_temp1, or the
   * planner asking; gemm_mma.c's raw path with x in its ring). */
  bool xs;
  /* The weights may be copied from staged 16-bit temps (the group's
   * w_temp1, or the planner asking; gemm_mma.c's raw path). */
  bool ws;
  poot_kir_value kbase, sidx;
  poot_kir_value lid, valid, m0, n0, tx, ty;
} gemm_form;

/* The workgroup's output tile origin m0, n0 (row tiles fastest: neighbouring
 * workgroups read the same weight tile), lid, and valid (the workgroup is
 * one of the nwg real ones; the others compute a clamped copy and store
 * nothing). With split-K, nwg counts tiles times splits (the split slowest)
 * and the split's kbase and sidx are set. */
POOT_MUST_USE poot_status poot__cc_gemm_origin(pc_kctx *k, gemm_form *f, uint64_t nwg,
                                               uint64_t nbm);
/* Output (m, n) (absolute u32 row and column): opens `if m < M && n < N`
 * and gives its linear index and graph index. */
POOT_MUST_USE poot_status poot__cc_gemm_out_begin(pc_kctx *k, const gemm_form *f, poot_kir_value m,
                                                  poot_kir_value n, poot_kir_value *out_lin,
                                                  poot_kir_value idx[PC_MAX_DIMS]);
/* Closes what poot__cc_gemm_out_begin opened: acc[r] (f32) is root r's sum
 * at idx; the group's expression (residual add, SwiGLU, bias, …) of them is
 * stored at lin — or, split, each root's partial sum at its place in the
 * split's partials (poot__cc_tpl_gemm_combine adds them). */
POOT_MUST_USE poot_status poot__cc_gemm_out_end(pc_kctx *k, const gemm_form *f, poot_kir_value lin,
                                                const poot_kir_value idx[PC_MAX_DIMS],
                                                const poot_kir_value *acc);

/* Element e (u32) of a staged tile of 64 rows by 2^step_log2 contraction
 * elements: its tile row r and column c, and the value of operand v at
 * (r0 + r clamped to rows, k0 + c), through the group's emitter. zero != 0
 * (an f32 0) when K is ragged: past K the value is 0. */
POOT_MUST_USE poot_status poot__cc_gemm_staged(pc_kctx *k, poot_value v, int64_t rows, int64_t K,
                                               poot_kir_value r0, poot_kir_value k0,
                                               poot_kir_value e, uint32_t step_log2,
                                               poot_kir_value zero, poot_kir_value *out_r,
                                               poot_kir_value *out_c, poot_kir_value *out_val);

/* gemm_mma.c: whether the matrix-fragment form takes this group on this
 * target, and the form itself (f's shape filled; emits the whole body).
 * *out_what: "gemm_mma", then " split" (split-K), " raw" (raw 16-bit
 * weights copied asynchronously), " wide" (64 × 128 tiles), " big" (128 ×
 * 128), " tall" (128 × 64, the SwiGLU pair), " skinny" (32 × 64 with a deeper ring), " medium"
 * (MEDIUM precision). */
bool poot__cc_gemm_mma_fits(const pc_planner *pl, const gemm_form *f);
/* Shared memory bytes the matrix-fragment form may take: the target's
 * opt-in amount where it has one (PTX's dynamic window, up to 227 KiB on
 * sm_90; none under static-shared), else shared_memory_bytes. Every other
 * template keeps shared_memory_bytes. */
uint32_t poot__cc_gemm_shared_budget(const pc_planner *pl);
/* The tile the form takes for f (shape and split set): f->tm and f->tn. */
void poot__cc_gemm_mma_tile(const pc_planner *pl, gemm_form *f);
/* Whether the form (f->xs set) copies x from a staged temp, and its form:
 * *out_one (MEDIUM: one array of *out_ty) or bf16 hi and lo. */
bool poot__cc_gemm_mma_xstaged(const pc_planner *pl, gemm_form *f, bool *out_one,
                               poot_kir_scalar *out_ty);
/* Whether the form (f->ws set) copies the weights from staged temps, and
 * their form (as for x). */
bool poot__cc_gemm_mma_wstaged(const pc_planner *pl, gemm_form *f, bool *out_one,
                               poot_kir_scalar *out_ty);
POOT_MUST_USE poot_status poot__cc_gemm_mma(pc_kctx *k, gemm_form *f, uint64_t nwg, uint64_t nbm,
                                            const char **out_what);

#endif
