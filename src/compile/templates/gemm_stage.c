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
  poot_kir_value hi[2], lo[2], h2, l2, hw, lw;
  for (uint32_t j = 0; j < 2; j++) {
    poot_kir_value idx[2] = {m, c}, e, hf, rest;
    if (j) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, 1, &idx[1]));
    POOT_TRY(poot__cc_emit(k, v, idx, &e));
    if (g->xone) {
      POOT_TRY(poot_kir_convert(k->b, g->xty, e, &hi[j]));
      continue;
    }
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, e, &hi[j]));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, hi[j], &hf));
    POOT_TRY(poot_kir_binary(k->b, OP(SUB), e, hf, &rest));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, rest, &lo[j]));
  }
  const poot_kir_type u32 = poot_kir_type_make(POOT_KIR_U32, 1);
  POOT_TRY(poot_kir_vec(k->b, 2, hi, &h2));
  POOT_TRY(poot_kir_bitcast(k->b, u32, h2, &hw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), base, p, &at));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, hw));
  if (!g->xone) {
    POOT_TRY(poot_kir_vec(k->b, 2, lo, &l2));
    POOT_TRY(poot_kir_bitcast(k->b, u32, l2, &lw));
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

/* The block form: thread t decodes chunk t % (K / 64) of row t / (K / 64),
 * and the workgroup writes its chunks' 16-bit values through shared memory
 * so that its global stores are coalesced. A workgroup's GEMM_THREADS
 * chunks are whole blocks (256 elements, or 64 for the 32-element formats:
 * every format's 4 or 1 chunks a block lie in one aligned run of
 * 64-element slots), so they cover elements [wgi · 16,384, + 16,384) of
 * the [N, K] temp, contiguous (rows are K apart): each thread puts its
 * values' words at their place in that span in shared memory (4 words of
 * padding after each 32: the 16-byte stores of a quarter warp, 128 bytes
 * apart, fall in distinct banks), then each thread copies 16-byte words of
 * the span in order (a warp's stores one 512-byte run). At `high` the hi
 * words go first, then the lo ones, through the same buffer. */
#define STAGE_SPAN_WORDS (GEMM_THREADS * GQ_CHUNK / 2) /* 8,192 words: 16,384 values */
#define STAGE_PAD(w) ((w) + ((w) >> 5) * 4)

static poot_status span_word(pc_kctx *k, poot_kir_value w, poot_kir_value *out) {
  poot_kir_value p;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, 5, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), p, 4, &p));
  return poot__cc_bin(k, OP(ADD), w, p, out);
}

/* Copies the span out: 16-byte word q of 2,048 (thread l takes q = l +
 * 256 i) from shared memory to temp words at `dst` + 4q, where inside
 * `words` (the temp's last span is partial). */
static poot_status span_copy(pc_kctx *k, uint32_t sh, uint32_t ref, poot_kir_value lid,
                             poot_kir_value dst, poot_kir_value span0, uint32_t words) {
  for (uint32_t i = 0; i < STAGE_SPAN_WORDS / 4 / GEMM_THREADS; i++) {
    poot__cc_scope_push(k);
    poot_kir_value q, w, in, at, v;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), lid, i * GEMM_THREADS, &q));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), q, 4, &w));
    POOT_TRY(poot__cc_bin(k, OP(ADD), w, span0, &in));
    POOT_TRY(poot__cc_bin_c(k, OP(LT), in, words, &in));
    POOT_TRY(poot_kir_if_begin(k->b, in));
    POOT_TRY(span_word(k, w, &at));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, at, 4, &v));
    POOT_TRY(poot__cc_bin(k, OP(ADD), dst, w, &at));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, v));
    POOT_TRY(poot_kir_end(k->b));
    poot__cc_scope_pop(k);
  }
  return NULL;
}

static poot_status stage_blocks(pc_kctx *k, const pc_group *g, poot_value leaf, int64_t N,
                                int64_t K, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_dtype dt = poot__cc_type(pl, leaf)->dtype;
  const uint32_t per_row = (uint32_t)(K / GQ_CHUNK), chunks = (uint32_t)N * per_row;
  const uint32_t words = (uint32_t)(N * K / 2); /* of each array */
  poot__cc_grid_for(((uint64_t)chunks + GEMM_THREADS - 1) / GEMM_THREADS, grid);
  poot_kir_value wgi, l, t, tc, base, row, ch, span0, wd[GQ_MAX_WORDS];
  POOT_TRY(poot__cc_linear_workgroup(k, &wgi));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wgi, GEMM_THREADS, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), t, l, &t));
  /* past the last chunk a thread decodes the last one again and stores
   * nothing (it still meets the barriers) */
  poot_kir_value live;
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), t, chunks - 1, &tc));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), t, chunks, &live));
  uint32_t ref, wref, sh;
  POOT_TRY(poot__cc_binding_of(k, 0, &ref));
  POOT_TRY(poot__cc_binding_of(k, pl->v[leaf].buffer, &wref));
  poot__cc_note_buffer(k, wref, k->frac);
  POOT_TRY(poot__cc_shared(k, "gws", POOT_KIR_U32, STAGE_PAD(STAGE_SPAN_WORDS), &sh));
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, false, &base));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), tc, per_row, &row));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), tc, per_row, &ch));
  POOT_TRY(poot__gq_load(k, dt, wref, K, row, ch, wd));
  gq_values gv;
  POOT_TRY(poot__gq_values(k, dt, wd, ch, &gv));
  /* the span's first word in the array, and this chunk's words in the span:
   * (row · K + chunk base) / 2 − span0 */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wgi, STAGE_SPAN_WORDS, &span0));
  poot_kir_value cw, rw;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), gv.base, 1, &cw));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(K / 2), &rw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), rw, cw, &rw));
  POOT_TRY(poot__cc_bin(k, OP(SUB), rw, span0, &rw));
  const poot_kir_type u32 = poot_kir_type_make(POOT_KIR_U32, 1);
  poot_kir_value hw[GQ_CHUNK / 2], lw[GQ_CHUNK / 2];
  for (uint32_t e = 0; e < GQ_CHUNK / 2; e++) {
    poot_kir_value hi[2], lo[2], h2, l2;
    for (uint32_t j = 0; j < 2; j++) {
      poot_kir_value v = gv.v[2 * e + j], hf, rest;
      if (g->xone) {
        POOT_TRY(poot_kir_convert(k->b, g->xty, v, &hi[j]));
        continue;
      }
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, v, &hi[j]));
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, hi[j], &hf));
      POOT_TRY(poot_kir_binary(k->b, OP(SUB), v, hf, &rest));
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, rest, &lo[j]));
    }
    POOT_TRY(poot_kir_vec(k->b, 2, hi, &h2));
    POOT_TRY(poot_kir_bitcast(k->b, u32, h2, &hw[e]));
    if (g->xone) continue;
    POOT_TRY(poot_kir_vec(k->b, 2, lo, &l2));
    POOT_TRY(poot_kir_bitcast(k->b, u32, l2, &lw[e]));
  }
  for (uint32_t h = 0; h < (g->xone ? 1u : 2u); h++) {
    if (h) POOT_TRY(poot_kir_barrier(k->b)); /* the hi span copied out before it is reused */
    /* run r's words from (off[r] + 8q) / 2: four a 16-byte store */
    POOT_TRY(poot_kir_if_begin(k->b, live));
    for (uint32_t r = 0; r < gv.runs; r++)
      for (uint32_t q = 0; q < gv.n / 8; q++) {
        poot_kir_value at, v4, w4[4];
        for (uint32_t w = 0; w < 4; w++) w4[w] = (h ? lw : hw)[(r * gv.n + 8 * q) / 2 + w];
        POOT_TRY(poot__cc_bin_c(k, OP(ADD), rw, (gv.off[r] + 8 * q) / 2, &at));
        POOT_TRY(span_word(k, at, &at));
        POOT_TRY(poot_kir_vec(k->b, 4, w4, &v4));
        POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, at, v4));
      }
    POOT_TRY(poot_kir_end(k->b));
    POOT_TRY(poot_kir_barrier(k->b)); /* the span complete */
    poot_kir_value dst;
    POOT_TRY(poot__cc_bin(k, OP(ADD), base, span0, &dst));
    if (h) POOT_TRY(poot__cc_bin_c(k, OP(ADD), dst, words, &dst));
    POOT_TRY(span_copy(k, sh, ref, l, dst, span0, words));
  }
  k->bytes += (uint64_t)N * (uint64_t)K * (g->xone ? 2 : 4);
  return NULL;
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
