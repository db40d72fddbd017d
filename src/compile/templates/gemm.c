/* templates/gemm.c — the tiled matrix product of prefill steps:
 *   out[m, n] = Σ_c x[m, c] · W[n, c]
 * (M > 4 rows of x that the GEMV, which takes up to 8, does not take)
 * for dot_general roots with no batch dimension that contract the last
 * dimension of both rank-2 operands (a projection: x [M, K] times a weight
 * [N, K], read through whatever inline convert or dequantize it has).
 *
 * A workgroup of 256 threads computes a 64 × 64 tile of the output, each
 * thread a 4 × 4 block of it (per root: the SwiGLU pair shares x). The
 * contraction runs in steps of 16: the workgroup stages x[64 rows, 16] and
 * each root's W[64 rows, 16] in shared memory (every element through the
 * group's emitter, so a prologue or a dequantization is applied once per
 * staged element and then reused by 64 products), then every thread
 * accumulates its 16 outputs from shared memory. Workgroups that share a
 * weight tile are adjacent in the grid (row tiles vary fastest), so the
 * weight is read from DRAM about once while x stays in cache. Past the end
 * of K the staged elements are 0; past M or N a tile's rows repeat the last
 * one and are not stored.
 *
 * Weight values are exact (conversion and block dequantization are exact in
 * f32); each output is a sequential fused multiply-add over K, so only the
 * order of the f32 sums differs from poot_eval's, inside the reassociation
 * bound of docs/compiler.md.
 *
 * Where the target has matrix fragments and K ≥ 1024, gemm_mma.c's form
 * takes the same groups (same tiles and grid, this file's epilogue); every
 * other target and contraction keeps the form here.
 *
 * poot__cc_tpl_gemm reports *out_done = false, having emitted nothing, when
 * a group does not have this shape or the workgroup is not 256 threads; the
 * generic contraction takes it then. */
#include <stdio.h>
#include <string.h>

#include "gemm.h"

#define OP(x) POOT_KIR_OP_##x

#define GEMM_STEP 16  /* contraction elements staged per step */
#define GEMM_PITCH 17 /* shared row pitch (a pad word against bank conflicts) */
#define GEMM_MIN_M 5  /* fewer rows: the GEMV (up to 8 where it takes them) */
/* Split-K: a grid of fewer tiles than this is split over K, each split at
 * least GEMM_SPLIT_MIN_K long and a whole number of 32-element steps (both
 * forms' steps). */
#define GEMM_SPLIT_GRID 256
#define GEMM_SPLIT_MIN_K 256
#define GEMM_SPLIT_MAX 32

bool poot__cc_dot_nt(pc_planner *pl, poot_value v, poot_value *x, poot_value *w, int64_t *m,
                     int64_t *n, int64_t *k) {
  const poot_node *nd = pl->v[v].node;
  if (!nd || nd->op != POOT_OP_DOT_GENERAL || nd->attrs.dtype != POOT_DTYPE_F32) return false;
  const poot_dot_dims *dd = &nd->attrs.dot;
  if (dd->num_batch != 0 || dd->num_contract != 1 || dd->lhs_contract[0] != 1 ||
      dd->rhs_contract[0] != 1)
    return false;
  *x = pl->alias[nd->operands[0]];
  *w = pl->alias[nd->operands[1]];
  const poot_type *xt = poot__cc_type(pl, *x), *wt = poot__cc_type(pl, *w);
  if (xt->dtype != POOT_DTYPE_F32 || wt->dtype != POOT_DTYPE_F32 || xt->shape.rank != 2 ||
      wt->shape.rank != 2 || wt->shape.dims[1] != xt->shape.dims[1])
    return false;
  *m = xt->shape.dims[0], *k = xt->shape.dims[1], *n = wt->shape.dims[0];
  return *m >= 1 && *k >= 1 && *n >= 1;
}

/* Whether group g has the GEMM shape; fills the roots, M, N, K. */
static bool eligible(pc_planner *pl, const pc_group *g, gemm_root *rs, int64_t *m, int64_t *n,
                     int64_t *kk) {
  /* On a CPU's SIMD lanes (lavapipe) the tile's barriers and per-thread
   * blocks cost more than they save: measured on the demo's 64-token
   * prefill, 24 tok/s and 33 s of shader compilation against the generic
   * contraction's 118 tok/s and 0.5 s. */
  if (pl->t->simd_cpu) return false;
  if (pl->wg != GEMM_THREADS || g->nroots == 0 || g->nroots > PG_MAX_ROOTS) return false;
  if (pl->t->shared_memory_bytes < 4u * GEMM_TILE * GEMM_PITCH * (1 + g->nroots) + 4096)
    return false;
  for (uint32_t i = 0; i < g->nroots; i++) {
    gemm_root *r = &rs[i];
    int64_t M, N, K;
    r->v = g->roots[i];
    if (!poot__cc_dot_nt(pl, r->v, &r->x, &r->w, &M, &N, &K) || M < GEMM_MIN_M) return false;
    if (M * N > (int64_t)INT32_MAX || M * K > (int64_t)INT32_MAX || N * K > (int64_t)INT32_MAX)
      return false;
    if (i == 0) {
      *m = M, *n = N, *kk = K;
    } else if (r->x != rs[0].x || N != *n || K != *kk) {
      return false;
    }
  }
  return true;
}

poot_status poot__cc_gemm_staged(pc_kctx *k, poot_value v, int64_t rows, int64_t K,
                                 poot_kir_value r0, poot_kir_value k0, poot_kir_value e,
                                 uint32_t step_log2, poot_kir_value zero, poot_kir_value *out_r,
                                 poot_kir_value *out_c, poot_kir_value *out_val) {
  poot_kir_value r, c, row, col, inr = 0;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, step_log2, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), e, (1u << step_log2) - 1, &c));
  POOT_TRY(poot__cc_bin(k, OP(ADD), r0, r, &row));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), row, (uint32_t)(rows - 1), &row));
  POOT_TRY(poot__cc_bin(k, OP(ADD), k0, c, &col));
  if (zero) {
    POOT_TRY(poot__cc_bin_c(k, OP(LT), col, (uint32_t)K, &inr));
    POOT_TRY(poot__cc_bin_c(k, OP(MIN), col, (uint32_t)(K - 1), &col));
  }
  poot_kir_value idx[2] = {row, col};
  POOT_TRY(poot__cc_emit(k, v, idx, out_val));
  if (inr) POOT_TRY(poot__cc_sel(k, inr, *out_val, zero, out_val));
  *out_r = r, *out_c = c;
  return NULL;
}

/* Stages rows [r0, r0 + 64) (clamped to `rows`) of operand v, contraction
 * elements [k0, k0 + 16) (0 past K), into the shared tile sh: four elements
 * per thread. */
static poot_status stage(pc_kctx *k, poot_value v, int64_t rows, int64_t K, poot_kir_value r0,
                         poot_kir_value k0, poot_kir_value lid, uint32_t sh) {
  bool ragged = K % GEMM_STEP != 0;
  poot_kir_value zero = 0;
  if (ragged) POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  for (uint32_t i = 0; i < GEMM_TILE * GEMM_STEP / GEMM_THREADS; i++) {
    poot__cc_scope_push(k);
    poot_kir_value e = lid, r, c, at, val;
    if (i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), lid, i * GEMM_THREADS, &e));
    POOT_TRY(poot__cc_gemm_staged(k, v, rows, K, r0, k0, e, 4, zero, &r, &c, &val));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), r, GEMM_PITCH, &at));
    POOT_TRY(poot__cc_bin(k, OP(ADD), at, c, &at));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, at, val));
    poot__cc_scope_pop(k);
  }
  return NULL;
}

/* The accumulators (16 per root and thread) and the shared tiles of x and
 * of each root's weight. */
static poot_status gemm_arrays(pc_kctx *k, gemm_form *f) {
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "macc", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), f->nr * 16, &f->pacc));
  POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "ma", nm, sizeof nm), POOT_KIR_F32,
                               GEMM_TILE * GEMM_PITCH, &f->sa));
  for (uint32_t i = 0; i < f->nr; i++) {
    char base[16];
    snprintf(base, sizeof base, "mb%u", i);
    POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, base, nm, sizeof nm), POOT_KIR_F32,
                                 GEMM_TILE * GEMM_PITCH, &f->sb[i]));
  }
  return NULL;
}

poot_status poot__cc_gemm_origin(pc_kctx *k, gemm_form *f, uint64_t nwg, uint64_t nbm) {
  poot_kir_value w, wc, bm, bn;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &f->lid));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), w, (uint32_t)nwg, &f->valid));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), w, (uint32_t)(nwg - 1), &wc));
  if (f->split > 1) {
    const uint32_t tiles = (uint32_t)(nwg / f->split);
    POOT_TRY(poot__cc_bin_c(k, OP(DIV), wc, tiles, &f->sidx));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->sidx, f->ks, &f->kbase));
    POOT_TRY(poot__cc_bin_c(k, OP(REM), wc, tiles, &wc));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(REM), wc, (uint32_t)nbm, &bm));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), wc, (uint32_t)nbm, &bn));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), bm, f->tm, &f->m0));
  return poot__cc_bin_c(k, OP(MUL), bn, f->tn, &f->n0);
}

/* The workgroup's output tile, the thread's 4 x 4 block in it, and the
 * accumulators zeroed. */
static poot_status gemm_tile_origin(pc_kctx *k, gemm_form *f, uint64_t nwg, uint64_t nbm) {
  poot_kir_value zero;
  POOT_TRY(poot__cc_gemm_origin(k, f, nwg, nbm));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), f->lid, 15, &f->tx));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), f->lid, 4, &f->ty));
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  for (uint32_t i = 0; i < f->nr * 16; i++) POOT_TRY(poot_kir_priv_store(k->b, f->pacc, i, zero));
  return NULL;
}

/* The loop over K in steps of GEMM_STEP: stage the tiles, then every
 * thread's 4 x 4 block of products per root from shared memory. */
static poot_status gemm_steps(pc_kctx *k, const gemm_form *f) {
  uint32_t nr = f->nr;
  /* this thread's rows ty·4 + i and columns tx·4 + j of the tile, as
   * shared offsets of element 0 of the step */
  poot_kir_value arow[4], bcol[4];
  for (uint32_t i = 0; i < 4; i++) {
    poot_kir_value r;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->ty, 4, &r));
    if (i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), r, i, &r));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), r, GEMM_PITCH, &arow[i]));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->tx, 4, &r));
    if (i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), r, i, &r));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), r, GEMM_PITCH, &bcol[i]));
  }
  uint32_t steps = (uint32_t)((f->K + GEMM_STEP - 1) / GEMM_STEP);
  if (f->split > 1) steps = f->ks / GEMM_STEP;
  poot_kir_value z, end, stepv, k0;
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_u32(k, steps * GEMM_STEP, &end));
  POOT_TRY(poot__cc_u32(k, GEMM_STEP, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, stepv, &k0));
  poot__cc_scope_push(k);
  if (f->split > 1) POOT_TRY(poot__cc_bin(k, OP(ADD), k0, f->kbase, &k0));
  POOT_TRY(stage(k, f->rs[0].x, f->M, f->K, f->m0, k0, f->lid, f->sa));
  for (uint32_t i = 0; i < nr; i++)
    POOT_TRY(stage(k, f->rs[i].w, f->N, f->K, f->n0, k0, f->lid, f->sb[i]));
  POOT_TRY(poot_kir_barrier(k->b));
  poot_kir_value acc[PG_MAX_ROOTS * 16];
  for (uint32_t i = 0; i < nr * 16; i++) POOT_TRY(poot_kir_priv_load(k->b, f->pacc, i, &acc[i]));
  for (uint32_t c = 0; c < GEMM_STEP; c++) {
    poot_kir_value a[4], at;
    for (uint32_t i = 0; i < 4; i++) {
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), arow[i], c, &at));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, f->sa, at, 1, &a[i]));
    }
    for (uint32_t r = 0; r < nr; r++) {
      poot_kir_value b[4];
      for (uint32_t j = 0; j < 4; j++) {
        POOT_TRY(poot__cc_bin_c(k, OP(ADD), bcol[j], c, &at));
        POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, f->sb[r], at, 1, &b[j]));
      }
      for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = 0; j < 4; j++) {
          poot_kir_value *s = &acc[r * 16 + i * 4 + j];
          POOT_TRY(poot_kir_fma(k->b, a[i], b[j], *s, s));
        }
    }
  }
  for (uint32_t i = 0; i < nr * 16; i++) POOT_TRY(poot_kir_priv_store(k->b, f->pacc, i, acc[i]));
  POOT_TRY(poot_kir_barrier(k->b)); /* the tiles are read before the next step's staging */
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

poot_status poot__cc_gemm_out_begin(pc_kctx *k, const gemm_form *f, poot_kir_value m,
                                    poot_kir_value n, poot_kir_value *out_lin,
                                    poot_kir_value idx[PC_MAX_DIMS]) {
  const poot_shape *os = &poot__cc_type(k->pl, f->g->roots[0])->shape;
  poot_kir_value inr, inc, ok, lin;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), m, (uint32_t)f->M, &inr));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), n, (uint32_t)f->N, &inc));
  POOT_TRY(poot__cc_bin(k, OP(AND), inr, inc, &ok));
  POOT_TRY(poot_kir_if_begin(k->b, ok));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), m, (uint32_t)f->N, &lin));
  POOT_TRY(poot__cc_bin(k, OP(ADD), lin, n, &lin));
  *out_lin = lin;
  return poot__cc_delinearize(k, lin, os, idx);
}

poot_status poot__cc_gemm_out_end(pc_kctx *k, const gemm_form *f, poot_kir_value lin,
                                  const poot_kir_value idx[PC_MAX_DIMS],
                                  const poot_kir_value *acc) {
  poot_kir_value val;
  if (f->split > 1) {
    /* partial (split s, root r) of output lin at ((s · nr + r) · M · N + lin) */
    poot_kir_value base, at, w;
    uint32_t ref, mn = (uint32_t)(f->M * f->N);
    POOT_TRY(poot__cc_temp_base(k, f->g->aux_temp, false, &base));
    POOT_TRY(poot__cc_binding_of(k, 0, &ref));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->sidx, f->nr * mn, &at));
    POOT_TRY(poot__cc_bin(k, OP(ADD), at, base, &at));
    POOT_TRY(poot__cc_bin(k, OP(ADD), at, lin, &at));
    for (uint32_t r = 0; r < f->nr; r++) {
      poot_kir_value a = at;
      if (r) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, r * mn, &a));
      POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_U32, 1), acc[r], &w));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, a, w));
    }
    return poot_kir_end(k->b);
  }
  for (uint32_t r = 0; r < f->nr; r++) POOT_TRY(poot__cc_memo_put(k, f->rs[r].v, idx, acc[r]));
  POOT_TRY(poot__cc_emit(k, f->g->out, idx, &val));
  POOT_TRY(poot__cc_store_value(k, f->g->dest, lin, val));
  return poot_kir_end(k->b);
}

/* The epilogue per output: the roots' sums into the memo, the group's
 * expression (residual add, SwiGLU, …) stored where it is in range. */
static poot_status gemm_epilogue(pc_kctx *k, const gemm_form *f) {
  POOT_TRY(poot_kir_if_begin(k->b, f->valid));
  for (uint32_t i = 0; i < 4; i++)
    for (uint32_t j = 0; j < 4; j++) {
      poot__cc_scope_push(k);
      poot_kir_value m, n, lin, idx[PC_MAX_DIMS], acc[PG_MAX_ROOTS];
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->ty, 4, &m));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), m, i, &m));
      POOT_TRY(poot__cc_bin(k, OP(ADD), m, f->m0, &m));
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), f->tx, 4, &n));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), n, j, &n));
      POOT_TRY(poot__cc_bin(k, OP(ADD), n, f->n0, &n));
      POOT_TRY(poot__cc_gemm_out_begin(k, f, m, n, &lin, idx));
      for (uint32_t r = 0; r < f->nr; r++)
        POOT_TRY(poot_kir_priv_load(k->b, f->pacc, r * 16 + i * 4 + j, &acc[r]));
      POOT_TRY(poot__cc_gemm_out_end(k, f, lin, idx, acc));
      poot__cc_scope_pop(k);
    }
  k->flops += 2ull * (uint64_t)f->M * (uint64_t)f->N * (uint64_t)f->K * f->nr;
  return poot_kir_end(k->b);
}

uint32_t poot__cc_gemm_split(pc_planner *pl, const pc_group *g) {
  gemm_root rs[PG_MAX_ROOTS];
  int64_t M = 0, N = 0, K = 0;
  if (g->kind != PG_CONTRACT || !eligible(pl, g, rs, &M, &N, &K) || poot__cc_gemv_takes(pl, g))
    return 1; /* not the GEMM: the contract template tries the GEMV first */
  uint64_t tiles =
      (uint64_t)((M + GEMM_TILE - 1) / GEMM_TILE) * (uint64_t)((N + GEMM_TILE - 1) / GEMM_TILE);
  uint32_t s = 1;
  while (tiles * s * 2 <= GEMM_SPLIT_GRID && s * 2 <= GEMM_SPLIT_MAX &&
         K % ((int64_t)s * 2 * 32) == 0 && K / ((int64_t)s * 2) >= GEMM_SPLIT_MIN_K)
    s *= 2;
  return s;
}

poot_status poot__cc_tpl_gemm_combine(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  poot_value x, w;
  int64_t M = 0, N = 0, K = 0;
  if (!poot__cc_dot_nt(pl, g->roots[0], &x, &w, &M, &N, &K) || g->aux_temp == UINT32_MAX)
    return poot_status_make(POOT_INTERNAL, "compile: gemm combine of %%%u", g->out);
  const uint32_t mn = (uint32_t)(M * N), S = g->split, nr = g->nroots;
  const poot_shape *os = &poot__cc_type(pl, g->roots[0])->shape;
  poot__cc_grid_for(((uint64_t)mn + pl->wg - 1) / pl->wg, grid);
  poot_kir_value wgi, l, gid, valid, base, idx[PC_MAX_DIMS], val, acc[PG_MAX_ROOTS];
  POOT_TRY(poot__cc_linear_workgroup(k, &wgi));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wgi, pl->wg, &gid));
  POOT_TRY(poot__cc_bin(k, OP(ADD), gid, l, &gid));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), gid, mn, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, 0, &ref));
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, true, &base));
  POOT_TRY(poot__cc_bin(k, OP(ADD), base, gid, &base));
  /* Each root's partials in split order: one order for every output. */
  for (uint32_t r = 0; r < nr; r++) {
    for (uint32_t s = 0; s < S; s++) {
      poot_kir_value at, word, v;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), base, (s * nr + r) * mn, &at));
      POOT_TRY(poot__cc_load_word(k, ref, at, &word));
      POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), word, &v));
      if (s)
        POOT_TRY(poot__cc_bin(k, OP(ADD), acc[r], v, &acc[r]));
      else
        acc[r] = v;
    }
  }
  POOT_TRY(poot__cc_delinearize(k, gid, os, idx));
  for (uint32_t r = 0; r < nr; r++) POOT_TRY(poot__cc_memo_put(k, g->roots[r], idx, acc[r]));
  POOT_TRY(poot__cc_emit(k, g->out, idx, &val));
  POOT_TRY(poot__cc_store_value(k, g->dest, gid, val));
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)mn * S * nr * 4;
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_gemm(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                              const char **out_what, bool *out_done) {
  gemm_form f;
  memset(&f, 0, sizeof f);
  f.g = g;
  *out_done = false;
  if (!eligible(k->pl, g, f.rs, &f.M, &f.N, &f.K)) return NULL;
  *out_done = true;
  *out_what = "gemm";
  f.nr = g->nroots;
  f.tm = f.tn = GEMM_TILE;
  f.split = g->split > 1 && g->aux_temp != UINT32_MAX ? g->split : 1;
  f.xs = g->x_temp1 != 0;
  f.ws = g->w_temp1[0] != 0;
  const bool mma = poot__cc_gemm_mma_fits(k->pl, &f);
  if (mma) poot__cc_gemm_mma_tile(k->pl, &f);
  uint64_t nbm = ((uint64_t)f.M + f.tm - 1) / f.tm;
  uint64_t nbn = ((uint64_t)f.N + f.tn - 1) / f.tn;
  uint64_t nwg = nbm * nbn;
  if (f.split > 1) {
    if (f.K % ((int64_t)f.split * 32) != 0)
      return poot_status_make(POOT_INTERNAL, "compile: gemm split %u of K = %lld", f.split,
                              (long long)f.K);
    f.ks = (uint32_t)(f.K / f.split);
    nwg *= f.split;
  }
  poot__cc_grid_for(nwg, grid);
  if (mma) return poot__cc_gemm_mma(k, &f, nwg, nbm, out_what);
  if (f.split > 1) *out_what = "gemm split";
  POOT_TRY(gemm_arrays(k, &f));
  POOT_TRY(gemm_tile_origin(k, &f, nwg, nbm));
  POOT_TRY(poot__cc_local_prologue(k, g));
  POOT_TRY(gemm_steps(k, &f));
  return gemm_epilogue(k, &f);
}

bool poot__cc_gemm_x_staged(pc_planner *pl, const pc_group *g, bool *out_one,
                            poot_kir_scalar *out_ty, uint64_t *out_bytes) {
  gemm_form f;
  memset(&f, 0, sizeof f);
  f.g = g;
  if (pl->opt->gemm_x_emitter || g->kind != PG_CONTRACT ||
      !eligible(pl, g, f.rs, &f.M, &f.N, &f.K) || poot__cc_gemv_takes(pl, g))
    return false;
  /* One row of 64-row tiles or fewer (a batched decode step, B ≤ 64): x
   * stays with the emitter. Its staging there is a small part of a step
   * that streams the weights, and a dispatch more per projection would
   * cost more. */
  if (f.M <= GEMM_TILE) return false;
  f.nr = g->nroots;
  f.split = g->split > 1 && g->aux_temp != UINT32_MAX ? g->split : 1;
  f.xs = true;
  f.ws = g->w_temp1[0] != 0;
  if (!poot__cc_gemm_mma_fits(pl, &f) || !poot__cc_gemm_mma_xstaged(pl, &f, out_one, out_ty))
    return false;
  *out_bytes = (uint64_t)f.M * (uint64_t)f.K * (*out_one ? 2 : 4);
  return true;
}

bool poot__cc_gemm_w_staged(pc_planner *pl, const pc_group *g, bool *out_one,
                            poot_kir_scalar *out_ty, uint64_t *out_bytes) {
  gemm_form f;
  memset(&f, 0, sizeof f);
  f.g = g;
  if (pl->opt->gemm_w_emitter || g->kind != PG_CONTRACT ||
      !eligible(pl, g, f.rs, &f.M, &f.N, &f.K) || poot__cc_gemv_takes(pl, g))
    return false;
  /* As for x: a batched decode step (one row of 64-row tiles or fewer)
   * streams its weights once through the emitter; staging them would
   * write and read them again. The temp's rows start on 16 bytes (K % 8). */
  if (f.M <= GEMM_TILE || f.K % 8 != 0) return false;
  f.nr = g->nroots;
  f.split = g->split > 1 && g->aux_temp != UINT32_MAX ? g->split : 1;
  f.ws = true;
  if (!poot__cc_gemm_mma_fits(pl, &f) || !poot__cc_gemm_mma_wstaged(pl, &f, out_one, out_ty))
    return false;
  *out_bytes = (uint64_t)f.N * (uint64_t)f.K * (*out_one ? 2 : 4);
  return true;
}
