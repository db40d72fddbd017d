/* templates/gemm_stage.c — the staging groups of the mma GEMM's raw path:
 * x (PG_GEMM_X) or a root's weight (PG_GEMM_W) written once into a temp in
 * the 16-bit form the mma reads — the values the emitter's staging would
 * have computed in every tile, rounded as it rounds them (MEDIUM: one
 * array of xty; else bf16 hi and lo arrays, hi at the temp's first
 * element, lo rows · K elements on). Same bits as that staging, by
 * construction (gemm_mma.c; docs/compiler.md "x staged once", "Weights
 * staged once").
 *
 * The general form computes every element through the group's emitter (a
 * prologue, a convert, a dequantization: whatever the operand is). A
 * weight that is a dequantized block-format leaf (the formats the decode
 * GEMV decodes: q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k) is decoded
 * instead a 64-element chunk per thread with the GEMV's chunk loads and
 * decoders (gemv_blocks.h: whole-word loads, the scales decoded once a
 * chunk), the same values in the same rounding, stored as 16-byte words. */
#include <string.h>

#include "gemm.h"
#include "gemv_blocks.h"

#define OP(x) POOT_KIR_OP_##x

/* Two adjacent values rounded as the mma form's staging rounds them, as
 * 32-bit words (low half first): MEDIUM (g->xone) one word of xty, else
 * *hw of hi = bf16(v) and *lw of lo = bf16(v − hi) (v − hi exact). */
static poot_status pack_pair(pc_kctx *k, const pc_group *g, const poot_kir_value v[2],
                             poot_kir_value *hw, poot_kir_value *lw) {
  poot_kir_value hi[2], lo[2], h2, l2;
  for (uint32_t j = 0; j < 2; j++) {
    poot_kir_value hf, rest;
    if (g->xone) {
      POOT_TRY(poot_kir_convert(k->b, g->xty, v[j], &hi[j]));
      continue;
    }
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, v[j], &hi[j]));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, hi[j], &hf));
    POOT_TRY(poot_kir_binary(k->b, OP(SUB), v[j], hf, &rest));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, rest, &lo[j]));
  }
  const poot_kir_type u32 = poot_kir_type_make(POOT_KIR_U32, 1);
  POOT_TRY(poot_kir_vec(k->b, 2, hi, &h2));
  POOT_TRY(poot_kir_bitcast(k->b, u32, h2, hw));
  if (g->xone) return NULL;
  POOT_TRY(poot_kir_vec(k->b, 2, lo, &l2));
  return poot_kir_bitcast(k->b, u32, l2, lw);
}

/* The staging groups (PG_GEMM_X, PG_GEMM_W): one thread per pair of
 * adjacent elements of a row of v ([rows, K], K even), each computed
 * through the emitter exactly as the mma form's staging computed it (a
 * prologue or a dequantization in f32), then rounded as that staging
 * rounded it: MEDIUM to xty, else hi = bf16(v) and lo = bf16(v − hi) (v − hi
 * exact). A pair is one 32-bit word of each array: hi at the temp's first
 * word, lo rows · K / 2 words on. */
static poot_status stage_pairs(pc_kctx *k, const pc_group *g, poot_value v, int64_t rows, int64_t K,
                               uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const uint32_t pairs = (uint32_t)(rows * K / 2), half = (uint32_t)(K / 2);
  poot__cc_grid_for(((uint64_t)pairs + pl->wg - 1) / pl->wg, grid);
  poot_kir_value wgi, l, p, valid, base, m, c, at;
  POOT_TRY(poot__cc_linear_workgroup(k, &wgi));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wgi, pl->wg, &p));
  POOT_TRY(poot__cc_bin(k, OP(ADD), p, l, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), p, pairs, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, 0, &ref));
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, false, &base));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), p, half, &m));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), p, half, &c));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), c, 2, &c));
  poot_kir_value e[2], hw, lw;
  for (uint32_t j = 0; j < 2; j++) {
    poot_kir_value idx[2] = {m, c};
    if (j) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, 1, &idx[1]));
    POOT_TRY(poot__cc_emit(k, v, idx, &e[j]));
  }
  POOT_TRY(pack_pair(k, g, e, &hw, &lw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), base, p, &at));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, hw));
  if (!g->xone) {
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, pairs, &at));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, lw));
  }
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)rows * (uint64_t)K * (g->xone ? 2 : 4);
  return poot_kir_end(k->b);
}

/* Whether weight w ([N, K]) is an inline dequantization of a block-format
 * leaf the chunk decoders take, in whole chunks (K a multiple of 256 or of
 * 64 for the 32-element formats) whose rows start on 16 bytes: *out_leaf. */
static bool block_leaf(pc_planner *pl, poot_value w, int64_t N, int64_t K, poot_value *out_leaf) {
  const pc_value *pw = &pl->v[w];
  if (pw->hold != PC_INLINE || !pw->node || pw->node->op != POOT_OP_DEQUANTIZE) return false;
  poot_value l = pl->alias[pw->node->operands[0]];
  const pc_value *pv = &pl->v[l];
  if (pv->hold != PC_LEAFBUF || !pv->node || pv->node->op != POOT_OP_LEAF) return false;
  const poot_type *lt = poot__cc_type(pl, l);
  const poot_dtype dt = lt->dtype;
  if (!poot__gq_words(dt) || lt->shape.rank != 2 || lt->shape.dims[0] != N ||
      lt->shape.dims[1] != K || K % (poot__gq_is_k(dt) ? 256 : 64) != 0 ||
      N * K > (int64_t)UINT32_MAX / 4)
    return false;
  *out_leaf = l;
  return true;
}

/* The block form: thread t decodes chunk t % (K / 64) of row t / (K / 64)
 * and stores its runs' values as pairs, four pairs a 16-byte store (each
 * run starts on 16 elements of a row of K, a multiple of 64). */
static poot_status stage_blocks(pc_kctx *k, const pc_group *g, poot_value leaf, int64_t N,
                                int64_t K, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_dtype dt = poot__cc_type(pl, leaf)->dtype;
  const uint32_t per_row = (uint32_t)(K / GQ_CHUNK), chunks = (uint32_t)N * per_row;
  const uint32_t lo_words = (uint32_t)(N * K / 2);
  poot__cc_grid_for(((uint64_t)chunks + pl->wg - 1) / pl->wg, grid);
  poot_kir_value wgi, l, t, valid, base, row, ch, wd[GQ_MAX_WORDS];
  POOT_TRY(poot__cc_linear_workgroup(k, &wgi));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wgi, pl->wg, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), t, l, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), t, chunks, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  uint32_t ref, wref;
  POOT_TRY(poot__cc_binding_of(k, 0, &ref));
  POOT_TRY(poot__cc_binding_of(k, pl->v[leaf].buffer, &wref));
  poot__cc_note_buffer(k, wref, k->frac);
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, false, &base));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), t, per_row, &row));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), t, per_row, &ch));
  POOT_TRY(poot__gq_load(k, dt, wref, K, row, ch, wd));
  gq_values gv;
  POOT_TRY(poot__gq_values(k, dt, wd, ch, &gv));
  /* word of element (row, base + off[r]) in the temp: (row · K + …) / 2 */
  poot_kir_value rw;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(K / 2), &rw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), rw, base, &rw));
  poot_kir_value cw;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), gv.base, 1, &cw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), rw, cw, &rw));
  for (uint32_t r = 0; r < gv.runs; r++)
    for (uint32_t q = 0; q < gv.n / 8; q++) { /* 8 elements: 4 words of each array */
      poot_kir_value hw[4], lw[4], at, v4;
      for (uint32_t w = 0; w < 4; w++)
        POOT_TRY(pack_pair(k, g, &gv.v[r * gv.n + 8 * q + 2 * w], &hw[w], &lw[w]));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), rw, (gv.off[r] + 8 * q) / 2, &at));
      POOT_TRY(poot_kir_vec(k->b, 4, hw, &v4));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, v4));
      if (g->xone) continue;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, lo_words, &at));
      POOT_TRY(poot_kir_vec(k->b, 4, lw, &v4));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, v4));
    }
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)N * (uint64_t)K * (g->xone ? 2 : 4);
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_gemm_x(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  poot_value x, w;
  int64_t M = 0, N = 0, K = 0;
  if (!poot__cc_dot_nt(k->pl, g->roots[0], &x, &w, &M, &N, &K) || g->aux_temp == UINT32_MAX ||
      K % 2 != 0)
    return poot_status_make(POOT_INTERNAL, "compile: gemm x of %%%u", g->out);
  return stage_pairs(k, g, x, M, K, grid);
}

poot_status poot__cc_tpl_gemm_w(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                const char **mode) {
  poot_value x, w;
  int64_t M = 0, N = 0, K = 0;
  if (!poot__cc_dot_nt(k->pl, g->roots[0], &x, &w, &M, &N, &K) || g->aux_temp == UINT32_MAX ||
      K % 2 != 0)
    return poot_status_make(POOT_INTERNAL, "compile: gemm w of %%%u", g->out);
  poot_value leaf;
  *mode = g->xone ? "medium" : "high";
  if (block_leaf(k->pl, w, N, K, &leaf)) {
    *mode = g->xone ? "medium blocks" : "high blocks";
    return stage_blocks(k, g, leaf, N, K, grid);
  }
  return stage_pairs(k, g, w, N, K, grid);
}
