/* templates/gemv.c — the weight-streaming GEMV of decode steps:
 *   out[m, n] = Σ_c x[m, c] · W[n, c]     (M ≤ GEMV_MAX_M rows of x)
 * for dot_general roots whose right operand is a leaf (a weight) stored
 * row-major (f32, f16, bf16, and the block formats q8_0, q4_0, q4_1, q5_0,
 * q5_1, q4_k, q5_k, q6_k of gemv_blocks.c), read through its convert or
 * dequantize.
 *
 * One subgroup per output column n, or two for long outputs (per workgroup:
 * wg / sg subgroups). Each lane streams whole chunks of the weight row
 * (f32, f16, bf16: 16 bytes, one four-word vector load; block formats: 64
 * elements, gemv_blocks.c), up to eight chunks per lane in flight, decodes
 * them in registers (no per-element index arithmetic on the weight),
 * multiplies with x and accumulates in f32. x (the group's prologue applied
 * — an RMSNorm scale, say) is first staged by the whole workgroup in shared
 * memory, in tiles of K when it does not fit, and read back with 16-byte
 * loads: the same bytes as the weight chunk's elements, where per-element
 * loads from global memory would cost one L1 wavefront per lane. A subgroup
 * reduction ends each column, and lane 0 runs the epilogue (residual add,
 * SwiGLU of two roots sharing x) for every row m.
 *
 * Weight values are exact (conversion and block dequantization are exact in
 * f32); only the order of the f32 sums differs from poot_eval, within the
 * reassociation bound of docs/compiler.md. Blocks are summed as
 * scale · Σ q·x + min · Σ x, inside the same bound.
 *
 * When all of K is one tile and the output is long, each subgroup loops over
 * several groups of rows (row_groups): x is staged once per workgroup for
 * all of them and no barrier separates them.
 *
 * poot__cc_tpl_gemv reports *out_done = false, having emitted nothing, when a
 * group does not have this shape; the generic contraction takes it then. */
#include <stdio.h>
#include <string.h>

#include "gemv_blocks.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

#define GEMV_UNROLL 8 /* chunks per lane in flight, at most */
#define GEMV_MAX_TILES 8
/* Prefetching 32 words (the 8 chunks of a 2048-element f16 row) was measured
 * 3-4 % slower on the 1B decode than 16 (register pressure). */
#define GEMV_PREFETCH_WORDS 16
/* Weight words in flight per lane for block formats: four chunks of the
 * q8_0 Q, K and V (51 words each), as measured. */
#define GEMV_BLOCK_WORDS 204
/* Block formats take two rows per subgroup from this N on (16-byte chunks
 * from 4096). */
#define GEMV_BLOCK_R2_MIN_N 2048
/* The row loop keeps at least this many workgroups (row_groups): on the
 * H200 the 8B shape's Q4_K_M step ran 6 % faster with 528 than with a
 * workgroup per 16 rows, and no faster with 264. */
#define GEMV_ROW_LOOP_GRID 512

typedef struct gemv_root {
  poot_value v;   /* the dot */
  poot_value x;   /* its left operand, [M, K] f32 */
  poot_value w;   /* the weight leaf, [N, K] */
  poot_dtype wdt; /* its stored dtype */
  uint32_t ref;   /* its binding */
  uint32_t woff;  /* its chunk's first word among the roots' chunk words */
} gemv_root;

/* Elements one lane reads per chunk, and words per chunk. */
static uint32_t chunk_elems(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_F32:
      return 4;
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16:
      return 8;
    default:
      return poot__gq_words(dt) ? GQ_CHUNK : 0;
  }
}
static uint32_t chunk_words(poot_dtype dt) {
  uint32_t n = poot__gq_words(dt);
  return n ? n : 4;
}

/* The weight leaf under a dot's right operand: the f32 leaf itself, or the
 * leaf of an inline convert (f16, bf16) or dequantize (q8_0, q4_0) to f32. */
static bool weight_of(pc_planner *pl, poot_value b, poot_value *out_w) {
  if (poot__cc_type(pl, b)->dtype != POOT_DTYPE_F32) return false;
  const pc_value *pb = &pl->v[b];
  if (pb->hold == PC_LEAFBUF) {
    *out_w = b;
    return pb->node && pb->node->op == POOT_OP_LEAF;
  }
  if (pb->hold != PC_INLINE || !pb->node) return false;
  if (pb->node->op != POOT_OP_CONVERT && pb->node->op != POOT_OP_DEQUANTIZE) return false;
  poot_value w = pl->alias[pb->node->operands[0]];
  const pc_value *pw = &pl->v[w];
  if (pw->hold != PC_LEAFBUF || !pw->node || pw->node->op != POOT_OP_LEAF) return false;
  poot_dtype dt = poot__cc_type(pl, w)->dtype;
  if (pb->node->op == POOT_OP_CONVERT && dt != POOT_DTYPE_F16 && dt != POOT_DTYPE_BF16)
    return false;
  if (pb->node->op == POOT_OP_DEQUANTIZE && !poot__gq_words(dt)) return false;
  *out_w = w;
  return true;
}

/* Whether group g has the GEMV shape; fills the roots, M, N, K. */
static bool eligible(pc_planner *pl, const pc_group *g, gemv_root *rs, int64_t *m, int64_t *n,
                     int64_t *kk) {
  const poot_kir_target *t = pl->t;
  uint32_t sg = t->subgroup_ops ? t->subgroup_size : 0;
  /* On a CPU's SIMD lanes a lane's own 16-byte chunk is a gather: the
   * generic contraction's interleaved words are plain vector loads there. */
  if (!sg || t->simd_cpu || pl->wg % sg != 0 || pl->wg < sg || g->nroots == 0) return false;
  for (uint32_t i = 0; i < g->nroots; i++) {
    gemv_root *r = &rs[i];
    poot_value b;
    int64_t M, N, K;
    r->v = g->roots[i];
    if (!poot__cc_dot_nt(pl, r->v, &r->x, &b, &M, &N, &K) || M > GEMV_MAX_M) return false;
    if (!weight_of(pl, b, &r->w)) return false;
    r->wdt = poot__cc_type(pl, r->w)->dtype;
    const poot_type *wt = poot__cc_type(pl, r->w);
    if (wt->shape.rank != 2 || wt->shape.dims[0] != N || wt->shape.dims[1] != K) return false;
    if (K % chunk_elems(r->wdt) != 0 || K > (int64_t)UINT32_MAX / 8 ||
        N * K > (int64_t)UINT32_MAX / 4)
      return false;
    if (i == 0) {
      *m = M, *n = N, *kk = K;
    } else if (r->x != rs[0].x || N != *n || K != *kk) {
      return false;
    }
  }
  const poot_shape *os = &poot__cc_type(pl, g->roots[0])->shape;
  return os->rank == 2 && os->dims[0] == *m && os->dims[1] == *n;
}

/* ------------------------------------------------------------ decoding */

poot_status poot__gemv_f16_lo(pc_kctx *k, poot_kir_value w, poot_kir_value *out) {
  poot_kir_value p[2];
  POOT_TRY(poot__cc_f16_pair(k, w, p));
  *out = p[0];
  return NULL;
}

/* The staged x tile (gemv_xtile): row m's element c at m * pitch + c +
 * 4 * (c / 32): one 16-byte pad per 128 bytes keeps the 16-byte loads of a
 * quarter subgroup on distinct banks whether a lane reads 32 bytes (f16
 * chunks) or 256 bytes (block pairs) of x. */
typedef gemv_xtile xtile;

static uint32_t xpos(uint32_t c) {
  return c + 4 * (c / 32);
}

/* x[m, c0 + first + e] for e in [0, count) (count a multiple of 4; c0 a
 * multiple of 4), every row m, from the staged tile. xpos(c0 + o) is
 * xpos(c0) + xpos(o) when c0 % 32 + (o % 32) < 32, as it is for every
 * caller (a lane's groups of four never cross a 32-float line), so the
 * loads are one base and constant offsets. */
poot_status poot__gemv_x_run(pc_kctx *k, const xtile *xt, uint32_t nm, poot_kir_value c0,
                             uint32_t first, uint32_t count, poot_kir_value xs[][GEMV_MAX_M]) {
  poot_kir_value line, xb;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), c0, 5, &line));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), line, 4, &line));
  POOT_TRY(poot__cc_bin(k, OP(ADD), c0, line, &xb));
  for (uint32_t e = 0; e < count; e += 4) {
    for (uint32_t m = 0; m < nm; m++) {
      poot_kir_value a = xb, v;
      uint32_t off = xpos(first + e) + m * xt->pitch;
      if (off) POOT_TRY(poot__cc_bin_c(k, OP(ADD), xb, off, &a));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->sh, a, 4, &v));
      for (uint32_t l = 0; l < 4; l++) POOT_TRY(poot_kir_extract(k->b, v, l, &xs[e + l][m]));
    }
  }
  return NULL;
}

/* acc[m] (private elements base..base+nm) += Σ_e vals[e] · x[m, c0 + first + e],
 * the sum over the run scaled by `scale` (0: none) and kept only where
 * `inr` holds (0: always). */
static poot_status dot_run(pc_kctx *k, const xtile *xt, uint32_t nm, poot_kir_value c0,
                           uint32_t first, const poot_kir_value *vals, uint32_t count,
                           poot_kir_value scale, poot_kir_value inr, uint32_t pacc, uint32_t base) {
  poot_kir_value part[GEMV_MAX_M] = {0}, xs[32][GEMV_MAX_M];
  POOT_TRY(poot__gemv_x_run(k, xt, nm, c0, first, count, xs));
  for (uint32_t e = 0; e < count; e++) {
    for (uint32_t m = 0; m < nm; m++) {
      if (!part[m])
        POOT_TRY(poot__cc_bin(k, OP(MUL), vals[e], xs[e][m], &part[m]));
      else
        POOT_TRY(poot_kir_fma(k->b, vals[e], xs[e][m], part[m], &part[m]));
    }
  }
  for (uint32_t m = 0; m < nm; m++) {
    poot_kir_value a, p = part[m];
    if (scale) POOT_TRY(poot__cc_bin(k, OP(MUL), p, scale, &p));
    if (inr) {
      poot_kir_value z;
      POOT_TRY(poot__cc_cf32(k, 0.0f, &z));
      POOT_TRY(poot__cc_sel(k, inr, p, z, &p));
    }
    POOT_TRY(poot_kir_priv_load(k->b, pacc, base + m, &a));
    POOT_TRY(poot__cc_bin(k, OP(ADD), a, p, &a));
    POOT_TRY(poot_kir_priv_store(k->b, pacc, base + m, a));
  }
  return NULL;
}

/* Adds one 16-byte chunk (f32, f16, bf16) of root r's row (already loaded
 * as wd[]) to its accumulators; block formats are gemv_blocks.c's. c0: the chunk's first
 * contraction index in the tile. */
static poot_status chunk_accumulate(pc_kctx *k, const gemv_root *r, const xtile *xt, uint32_t nm,
                                    poot_kir_value c0, const poot_kir_value *wd, poot_kir_value inr,
                                    uint32_t pacc, uint32_t base) {
  poot_kir_value v[32];
  switch (r->wdt) {
    case POOT_DTYPE_F32:
      for (uint32_t e = 0; e < 4; e++) POOT_TRY(poot__cc_bcast(k, S(F32), wd[e], &v[e]));
      return dot_run(k, xt, nm, c0, 0, v, 4, 0, inr, pacc, base);
    case POOT_DTYPE_F16:
      for (uint32_t e = 0; e < 4; e++) POOT_TRY(poot__cc_f16_pair(k, wd[e], &v[2 * e]));
      return dot_run(k, xt, nm, c0, 0, v, 8, 0, inr, pacc, base);
    case POOT_DTYPE_BF16:
      for (uint32_t e = 0; e < 4; e++) {
        poot_kir_value lo, hi;
        POOT_TRY(poot__cc_bin_c(k, OP(SHL), wd[e], 16, &lo));
        POOT_TRY(poot__cc_bin_c(k, OP(AND), wd[e], 0xffff0000u, &hi));
        POOT_TRY(poot__cc_bcast(k, S(F32), lo, &v[2 * e]));
        POOT_TRY(poot__cc_bcast(k, S(F32), hi, &v[2 * e + 1]));
      }
      return dot_run(k, xt, nm, c0, 0, v, 8, 0, inr, pacc, base);
    default:
      return poot_status_make(POOT_INTERNAL, "compile: gemv of %s", poot_dtype_name(r->wdt));
  }
}

/* Loads chunk `ch` of row `row` of root r's weight into wd[]. */
static poot_status chunk_load(pc_kctx *k, const gemv_root *r, int64_t kk, poot_kir_value row,
                              poot_kir_value ch, poot_kir_value *wd) {
  if (poot__gq_words(r->wdt)) return poot__gq_load(k, r->wdt, r->ref, kk, row, ch, wd);
  /* words per row: K elements × bytes / 4 */
  uint32_t row_words = (uint32_t)(kk * (int64_t)poot_dtype_info_of(r->wdt)->elem_bytes / 4);
  poot_kir_value at, off, v;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, row_words, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), ch, 4, &off));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, off, &at));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, r->ref, at, 4, &v));
  for (uint32_t i = 0; i < 4; i++) POOT_TRY(poot_kir_extract(k->b, v, i, &wd[i]));
  return NULL;
}

/* Loads the chunks first, first + sg, … (unroll of them, clamped to last)
 * of every row and root into the private array ppre: chunk u of row r and
 * root i at words (u · R + r) · per + woff[i] onwards. */
static poot_status prefetch(pc_kctx *k, const gemv_root *rs, uint32_t nr, uint32_t R, int64_t kk,
                            const poot_kir_value *rows, poot_kir_value first, poot_kir_value last,
                            uint32_t unroll, uint32_t sg, uint32_t ppre) {
  uint32_t per = rs[nr - 1].woff + chunk_words(rs[nr - 1].wdt);
  for (uint32_t u = 0; u < unroll; u++) {
    poot_kir_value ch = first, wd[GQ_MAX_WORDS];
    if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), first, u * sg, &ch));
    POOT_TRY(poot__cc_bin(k, OP(MIN), ch, last, &ch));
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t i = 0; i < nr; i++) {
        POOT_TRY(chunk_load(k, &rs[i], kk, rows[r], ch, wd));
        for (uint32_t w = 0; w < chunk_words(rs[i].wdt); w++)
          POOT_TRY(poot_kir_priv_store(k->b, ppre, (u * R + r) * per + rs[i].woff + w, wd[w]));
      }
  }
  return NULL;
}

/* The run sums of the staged tile of tk elements: Σ x[m, 32 s + e] over
 * e = 0..31 in order (the order a lane summed them in before: the same
 * bits), one thread per run, for the block formats with mins, whose lanes
 * then read one sum per run instead of adding 32 values per chunk each;
 * then a barrier. */
static poot_status stage_sums(pc_kctx *k, const xtile *xt, uint32_t nm, uint32_t tk) {
  poot_kir_value lid, end, stepv, s;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  POOT_TRY(poot__cc_u32(k, tk / 32, &end));
  POOT_TRY(poot__cc_u32(k, k->pl->wg, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, lid, end, stepv, &s));
  poot__cc_scope_push(k);
  poot_kir_value at;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, 36, &at)); /* xpos(32 s) */
  for (uint32_t m = 0; m < nm; m++) {
    poot_kir_value sum = 0, a, d = s;
    for (uint32_t q = 0; q < 8; q++) {
      poot_kir_value v, e;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, m * xt->pitch + 4 * q, &a));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->sh, a, 4, &v));
      for (uint32_t l = 0; l < 4; l++) {
        POOT_TRY(poot_kir_extract(k->b, v, l, &e));
        if (!sum)
          sum = e;
        else
          POOT_TRY(poot__cc_bin(k, OP(ADD), sum, e, &sum));
      }
    }
    if (m) POOT_TRY(poot__cc_bin_c(k, OP(ADD), s, m * xt->runs, &d));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, xt->ssh, d, sum));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_barrier(k->b);
}

/* Medium: x̂ of the staged tile, one thread per aligned 32 elements s and
 * row m, as llama.cpp's q8_1: d = max|x| · fl(1/127), q = x · fl(127 / max|x|)
 * rounded to nearest even (adding 1.5 · 2^23 rounds it: |x / d| < 127.5), four codes a
 * word; d, and the run sum d · Σ q where the tile has sums. A block whose
 * max|x| is below 2^-100 becomes zeros (d = 0: 1 / d would overflow); a
 * block with a NaN (or an infinity) gets d = NaN, so its outputs are NaN
 * as the oracle's are.
 * Then a barrier. docs/compiler.md "The decode GEMV at medium" bounds it. */
static poot_status stage_q8(pc_kctx *k, const xtile *xt, uint32_t nm, uint32_t tk) {
  poot_kir_value lid, end, stepv, s, at, qat, t;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  POOT_TRY(poot__cc_u32(k, tk / 32, &end));
  POOT_TRY(poot__cc_u32(k, k->pl->wg, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, lid, end, stepv, &s));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, 36, &at)); /* xpos(32 s) */
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), s, 1, &t));   /* the word of element 32 s */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t, 4, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, 8, &qat));
  POOT_TRY(poot__cc_bin(k, OP(ADD), qat, t, &qat));
  poot_kir_value c127, inv127, tiny, one, zero, magic;
  POOT_TRY(poot__cc_cf32(k, 127.0f, &c127));
  POOT_TRY(poot__cc_cf32(k, 1.0f / 127.0f, &inv127));
  POOT_TRY(poot__cc_cf32(k, 0x1p-100f, &tiny));
  POOT_TRY(poot__cc_cf32(k, 1.0f, &one));
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  POOT_TRY(poot__cc_cf32(k, 12582912.0f, &magic));
  for (uint32_t m = 0; m < nm; m++) {
    poot_kir_value x[32], amax = 0, d, id, big, sq = 0, a, nan = zero;
    for (uint32_t q = 0; q < 8; q++) {
      poot_kir_value v;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, m * xt->pitch + 4 * q, &a));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->sh, a, 4, &v));
      for (uint32_t l = 0; l < 4; l++) {
        poot_kir_value ax;
        POOT_TRY(poot_kir_extract(k->b, v, l, &x[4 * q + l]));
        POOT_TRY(poot_kir_fma(k->b, x[4 * q + l], zero, nan, &nan));
        POOT_TRY(poot__cc_un(k, OP(ABS), x[4 * q + l], &ax));
        if (!amax)
          amax = ax;
        else
          POOT_TRY(poot__cc_bin(k, OP(MAX), amax, ax, &amax));
      }
    }
    /* d = max|x| · fl(1/127), 1/d as 127 / max|x|: one division */
    POOT_TRY(poot__cc_bin(k, OP(GE), amax, tiny, &big));
    POOT_TRY(poot__cc_bin(k, OP(MUL), amax, inv127, &d));
    POOT_TRY(poot__cc_sel(k, big, amax, one, &id));
    POOT_TRY(poot__cc_bin(k, OP(DIV), c127, id, &id));
    POOT_TRY(poot__cc_sel(k, big, d, zero, &d));
    POOT_TRY(poot__cc_sel(k, big, id, zero, &id));
    /* max ignores a NaN: Σ x · 0 (0, or NaN where an x is NaN or infinite)
     * added to d carries it into every product of the block. */
    POOT_TRY(poot__cc_bin(k, OP(ADD), d, nan, &d));
    for (uint32_t w = 0; w < 8; w++) {
      poot_kir_value word = 0;
      for (uint32_t l = 0; l < 4; l++) {
        poot_kir_value v, q;
        POOT_TRY(poot__cc_bin(k, OP(MUL), x[4 * w + l], id, &v));
        POOT_TRY(poot__cc_bin(k, OP(ADD), v, magic, &v));
        POOT_TRY(poot__cc_bcast(k, S(U32), v, &q));
        POOT_TRY(poot__cc_bin_c(k, OP(SUB), q, 0x4B400000u, &q)); /* q, two's complement */
        if (xt->sums) {
          if (!sq)
            sq = q;
          else
            POOT_TRY(poot__cc_bin(k, OP(ADD), sq, q, &sq));
        }
        POOT_TRY(poot__cc_bin_c(k, OP(AND), q, 0xffu, &q));
        if (l) POOT_TRY(poot__cc_bin_c(k, OP(SHL), q, 8 * l, &q));
        if (!word)
          word = q;
        else
          POOT_TRY(poot__cc_bin(k, OP(OR), word, q, &word));
      }
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), qat, m * xt->qpitch + w, &a));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, xt->qsh, a, word));
    }
    poot_kir_value ds = s;
    if (m) POOT_TRY(poot__cc_bin_c(k, OP(ADD), s, m * xt->runs, &ds));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, xt->dsh, ds, d));
    if (xt->sums) {
      poot_kir_value sf;
      POOT_TRY(poot__cc_bcast(k, S(I32), sq, &sq));
      POOT_TRY(poot__cc_cvt(k, S(F32), sq, &sf));
      POOT_TRY(poot__cc_bin(k, OP(MUL), d, sf, &sf));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, xt->ssh, ds, sf));
    }
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_barrier(k->b);
}

/* Stages x[m, tile0 + c] for c in [0, tk) (the group's prologue applied)
 * into the tile, every thread of the workgroup striding c; then a barrier
 * (and the run sums when the tile has them). */
static poot_status stage(pc_kctx *k, const gemv_root *r, const xtile *xt, uint32_t nm,
                         uint32_t tile0, uint32_t tk) {
  poot_kir_value lid, end, stepv, c;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  POOT_TRY(poot__cc_u32(k, tk, &end));
  POOT_TRY(poot__cc_u32(k, k->pl->wg, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, lid, end, stepv, &c));
  poot__cc_scope_push(k);
  poot_kir_value cg, at, line;
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, tile0, &cg));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), c, 5, &line));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), line, 4, &line));
  POOT_TRY(poot__cc_bin(k, OP(ADD), c, line, &at));
  for (uint32_t m = 0; m < nm; m++) {
    poot_kir_value mv, x, a = at;
    POOT_TRY(poot__cc_u32(k, m, &mv));
    poot_kir_value ai[2] = {mv, cg};
    POOT_TRY(poot__cc_emit(k, r->x, ai, &x));
    if (m) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, m * xt->pitch, &a));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, xt->sh, a, x));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_barrier(k->b));
  if (xt->q8) return stage_q8(k, xt, nm, tk);
  return xt->sums ? stage_sums(k, xt, nm, tk) : NULL;
}

/* The contraction tile: all of K when its staged x fits in the shared memory
 * left to this group, else the largest multiple of align (64, or 256 for
 * k-quant blocks) that does. 0 when not even align elements fit or more than GEMV_MAX_TILES tiles
 * would be needed. */
static uint32_t tile_len(const pc_planner *pl, int64_t M, int64_t K, uint32_t align, bool sums,
                         bool q8) {
  uint32_t budget = pl->t->shared_memory_bytes > 8192 ? pl->t->shared_memory_bytes - 4096 : 0;
  uint64_t per_elem = 4ull * (uint64_t)M; /* plus a pad of 4 floats (and a sum) per 32 */
  uint64_t fit = budget / per_elem * 32 / (sums ? 37 : 36) / align * align;
  /* medium: and x̂ (20 words per 64), a scale per 32: 37 (38) + 11 words per 32 */
  if (q8) fit = budget / per_elem * 32 / (sums ? 48 : 47) / align * align;
  if (fit < align) return 0;
  uint64_t tk = (uint64_t)K <= fit ? (uint64_t)K : fit;
  if (((uint64_t)K + tk - 1) / tk > GEMV_MAX_TILES) return 0;
  return (uint32_t)tk;
}

/* One GEMV kernel's shape and state: the roots, M x N x K, R rows per
 * subgroup, the chunking, the accumulators, the x tile and the prefetched
 * first loads. */
typedef struct gemv_form {
  const pc_group *g;
  gemv_root rs[PG_MAX_ROOTS];
  int64_t M, N, K;
  uint32_t nr, nm, R, sg, tk, ce, per, umax; /* per: chunk words of all roots */
  uint32_t pacc, ppre;
  bool prefetched;
  bool q8; /* medium: x̂ in int8 blocks, dot4_i8 (block formats only) */
  xtile xt;
  poot_kir_value rows[2], lane, valid, z;
} gemv_form;

/* The weight words of the unroll chunks starting at ch0 (from the prefetch
 * registers on the first tile when prefetched); *chv the chunk indices,
 * inr[u] whether chunk u is in range (0: always). */
static poot_status tile_loads(pc_kctx *k, const gemv_form *f, poot_kir_value ch0, uint32_t unroll,
                              bool ragged, bool pre, uint32_t first_chunk, poot_kir_value end,
                              poot_kir_value last,
                              poot_kir_value wd[][2 * PG_MAX_ROOTS][GQ_MAX_WORDS],
                              poot_kir_value *inr, poot_kir_value *chv) {
  uint32_t R = f->R, nr = f->nr, sg = f->sg;
  for (uint32_t u = 0; u < unroll; u++) {
    poot_kir_value ch = ch0, chg;
    inr[u] = 0;
    if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), ch0, u * sg, &ch));
    if (ragged && u) {
      POOT_TRY(poot__cc_bin(k, OP(LT), ch, end, &inr[u]));
      POOT_TRY(poot__cc_bin(k, OP(MIN), ch, last, &ch));
    }
    chv[u] = ch;
    chg = ch;
    if (first_chunk) POOT_TRY(poot__cc_bin_c(k, OP(ADD), ch, first_chunk, &chg));
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t i = 0; i < nr; i++) {
        if (pre) {
          for (uint32_t w2 = 0; w2 < chunk_words(f->rs[i].wdt); w2++)
            POOT_TRY(poot_kir_priv_load(k->b, f->ppre, (u * R + r) * f->per + f->rs[i].woff + w2,
                                        &wd[u][r * nr + i][w2]));
        } else {
          POOT_TRY(chunk_load(k, &f->rs[i], f->K, f->rows[r], chg, wd[u][r * nr + i]));
        }
      }
  }
  return NULL;
}

/* One tile of K from tile0, its x staged: for (ch = first; ch < chunks;
 * ch += sg * U), U chunks per lane with their loads first. first is the
 * lane, rotated by the tile's first chunk when that is not a multiple of
 * sg: global chunk c is then lane c % sg's in every tile, as without
 * tiles, and each lane adds its chunks in the same order, so a row of x
 * sums in one order whatever M (and so the tile length) is. */
static poot_status gemv_chunks(pc_kctx *k, const gemv_form *f, uint32_t tile0) {
  uint32_t K = (uint32_t)f->K, tk = f->tk, ce = f->ce, sg = f->sg, R = f->R, nr = f->nr;
  uint32_t len = K - tile0 < tk ? K - tile0 : tk;
  uint32_t chunks = len / ce, first_chunk = tile0 / ce;
  uint32_t iters = (chunks + sg - 1) / sg;
  uint32_t unroll = iters >= f->umax ? f->umax : iters;
  bool ragged = chunks % (sg * unroll) != 0;
  bool pre = f->prefetched && tile0 == 0;
  poot_kir_value end, stepv, ch0, last, first = f->lane;
  POOT_TRY(poot__cc_u32(k, chunks, &end));
  POOT_TRY(poot__cc_u32(k, sg * unroll, &stepv));
  POOT_TRY(poot__cc_u32(k, chunks - 1, &last));
  if (first_chunk % sg) {
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), f->lane, sg - first_chunk % sg, &first));
    POOT_TRY(poot__cc_bin_c(k, OP(REM), first, sg, &first));
  }
  POOT_TRY(poot_kir_for_begin(k->b, first, end, stepv, &ch0));
  poot__cc_scope_push(k);
  poot_kir_value wd[GEMV_UNROLL][2 * PG_MAX_ROOTS][GQ_MAX_WORDS], inr[GEMV_UNROLL],
      chv[GEMV_UNROLL];
  POOT_TRY(tile_loads(k, f, ch0, unroll, ragged, pre, first_chunk, end, last, wd, inr, chv));
  if (pre && iters > unroll) {
    /* the next iteration's chunks, while this one's are used */
    poot_kir_value nx, more;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), ch0, sg * unroll, &nx));
    POOT_TRY(poot__cc_bin(k, OP(LT), nx, end, &more));
    POOT_TRY(poot_kir_if_begin(k->b, more));
    POOT_TRY(prefetch(k, f->rs, nr, R, f->K, f->rows, nx, last, unroll, sg, f->ppre));
    POOT_TRY(poot_kir_end(k->b));
  }
  for (uint32_t u = 0; u < unroll; u++) {
    if (ce == GQ_CHUNK) {
      gq_job jobs[2 * PG_MAX_ROOTS];
      for (uint32_t r = 0; r < R; r++)
        for (uint32_t i = 0; i < nr; i++)
          jobs[r * nr + i] = (gq_job){f->rs[i].wdt, wd[u][r * nr + i], (r * nr + i) * f->nm};
      POOT_TRY(poot__gq_accumulate(k, &f->xt, f->nm, chv[u], jobs, R * nr, inr[u], f->pacc));
      continue;
    }
    poot_kir_value c0;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), chv[u], ce, &c0));
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t i = 0; i < nr; i++)
        POOT_TRY(chunk_accumulate(k, &f->rs[i], &f->xt, f->nm, c0, wd[u][r * nr + i], inr[u],
                                  f->pacc, (r * nr + i) * f->nm));
  }
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* One tile of K from tile0: stage x, then its chunks. */
static poot_status gemv_tile(pc_kctx *k, const gemv_form *f, uint32_t tile0) {
  uint32_t K = (uint32_t)f->K, len = K - tile0 < f->tk ? K - tile0 : f->tk;
  if (tile0) POOT_TRY(poot_kir_barrier(k->b)); /* the previous tile is read */
  POOT_TRY(stage(k, &f->rs[0], &f->xt, f->nm, tile0, len));
  return gemv_chunks(k, f, tile0);
}

/* Reduce each accumulator over the subgroup; lane 0 finishes the rows (the
 * group's epilogue at each output). */
static poot_status gemv_finish(pc_kctx *k, const gemv_form *f) {
  uint32_t R = f->R, nr = f->nr, nm = f->nm;
  poot_kir_value accs[2 * PG_MAX_ROOTS * GEMV_MAX_M];
  for (uint32_t i = 0; i < R * nr * nm; i++) {
    poot_kir_value a;
    POOT_TRY(poot_kir_priv_load(k->b, f->pacc, i, &a));
    POOT_TRY(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), a, &accs[i]));
  }
  poot_kir_value first, cond;
  POOT_TRY(poot__cc_bin(k, OP(EQ), f->lane, f->z, &first));
  POOT_TRY(poot__cc_bin(k, OP(AND), first, f->valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  const poot_shape *os = &poot__cc_type(k->pl, f->g->roots[0])->shape;
  for (uint32_t rm = 0; rm < R * nm; rm++) {
    uint32_t r = rm / nm, m = rm % nm;
    poot__cc_scope_push(k);
    poot_kir_value lin, idx[PC_MAX_DIMS], val;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), f->rows[r], m * (uint32_t)f->N, &lin));
    POOT_TRY(poot__cc_delinearize(k, lin, os, idx));
    for (uint32_t i = 0; i < nr; i++)
      POOT_TRY(poot__cc_memo_put(k, f->rs[i].v, idx, accs[(r * nr + i) * nm + m]));
    POOT_TRY(poot__cc_emit(k, f->g->out, idx, &val));
    POOT_TRY(poot__cc_store_value(k, f->g->dest, lin, val));
    poot__cc_scope_pop(k);
  }
  return poot_kir_end(k->b);
}

/* The subgroup's first row: (workgroup · subgroups + subgroup) · R; and
 * its lane. */
static poot_status gemv_first_row(pc_kctx *k, gemv_form *f, poot_kir_value *o) {
  uint32_t per = k->pl->wg / f->sg;
  poot_kir_value w, sid;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &f->lane));
  POOT_TRY(poot__cc_u32(k, 0, &f->z));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, per, o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), *o, sid, o));
  if (f->R > 1) POOT_TRY(poot__cc_bin_c(k, OP(MUL), *o, f->R, o)); /* rows o .. o + R - 1 */
  return NULL;
}

/* Rows o .. o + R - 1 (clamped), whether they are in range, and the
 * accumulators zeroed. */
static poot_status gemv_rows(pc_kctx *k, gemv_form *f, poot_kir_value o) {
  uint32_t R = f->R, N = (uint32_t)f->N;
  poot_kir_value oc, zero;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), o, N, &f->valid));
  POOT_TRY(poot__cc_u32(k, N - R, &oc));
  POOT_TRY(poot__cc_bin(k, OP(MIN), o, oc, &oc));
  f->rows[0] = oc;
  f->rows[1] = 0;
  if (R > 1) POOT_TRY(poot__cc_bin_c(k, OP(ADD), oc, 1, &f->rows[1]));
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  for (uint32_t i = 0; i < R * f->nr * f->nm; i++)
    POOT_TRY(poot_kir_priv_store(k->b, f->pacc, i, zero));
  return NULL;
}

/* Row groups per subgroup when all of K is one tile and the output is long:
 * x is staged (and the group's prologue computed) once per workgroup for
 * several groups of rows, and the subgroups, with no barrier between their
 * groups, stream their weights each at its own pace. The grid stays at
 * about GEMV_ROW_LOOP_GRID workgroups or more. */
static uint32_t row_groups(const gemv_form *f, uint32_t per) {
  if (f->tk < (uint32_t)f->K) return 1;
  uint64_t groups = ((uint64_t)f->N + per * f->R - 1) / (per * f->R);
  uint64_t rl = groups / GEMV_ROW_LOOP_GRID;
  return rl < 1 ? 1 : rl > 64 ? 64 : (uint32_t)rl;
}

/* The row loop: x staged once, then for (o = first; o < N; o += stride)
 * the rows' chunks and their finish. */
static poot_status gemv_row_loop(pc_kctx *k, gemv_form *f, poot_kir_value o0, uint32_t stride) {
  poot_kir_value end, stepv, o;
  POOT_TRY(stage(k, &f->rs[0], &f->xt, f->nm, 0, (uint32_t)f->K));
  POOT_TRY(poot__cc_u32(k, (uint32_t)f->N, &end));
  POOT_TRY(poot__cc_u32(k, stride, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, o0, end, stepv, &o));
  poot__cc_scope_push(k);
  POOT_TRY(gemv_rows(k, f, o));
  POOT_TRY(gemv_chunks(k, f, 0));
  POOT_TRY(gemv_finish(k, f));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The first tile's first loads are issued before anything that waits on
 * memory (the norm statistics, the staging of x): the weight stream does
 * not depend on x, and a workgroup would otherwise pay those latencies one
 * after the other. They wait in registers (a private array) while the loop
 * loads the next iteration's chunks before using the current ones. */
/* Chunks in flight per lane: eight when a lane streams one 16-byte row
 * (twice the bytes in flight for the short, latency-bound GEMVs), else up
 * to four, as long as they hold at most GEMV_BLOCK_WORDS words — for block
 * formats the target's gemv_block_words where it gives one. (Only block
 * formats were measured with it: the 8B shape's fused f16 GEMVs through
 * Vulkan ran half as fast with 48.) */
static void gemv_unroll(const poot_kir_target *t, gemv_form *f) {
  uint32_t per_chunk = f->R * f->per;
  uint32_t words =
      f->ce == GQ_CHUNK && t->gemv_block_words ? t->gemv_block_words : GEMV_BLOCK_WORDS;
  f->umax = per_chunk == 4 ? 8 : per_chunk * 4 <= words ? 4 : words / per_chunk;
  if (!f->umax) f->umax = 1;
}

static poot_status gemv_prefetch(pc_kctx *k, gemv_form *f) {
  uint32_t chunks0 = (uint32_t)(f->K < f->tk ? f->K : f->tk) / f->ce;
  uint32_t iters0 = (chunks0 + f->sg - 1) / f->sg;
  uint32_t per_chunk = f->R * f->per;
  uint32_t unroll0 = iters0 >= f->umax ? f->umax : iters0;
  f->prefetched = unroll0 * per_chunk <= GEMV_PREFETCH_WORDS;

  f->ppre = 0;
  if (!f->prefetched) return NULL;
  char nmb[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "gpre", nmb, sizeof nmb),
                                poot_kir_type_make(S(U32), 1), unroll0 * per_chunk, &f->ppre));
  poot_kir_value lastc;
  POOT_TRY(poot__cc_u32(k, chunks0 - 1, &lastc));
  return prefetch(k, f->rs, f->nr, f->R, f->K, f->rows, f->lane, lastc, unroll0, f->sg, f->ppre);
}

/* Whether the GEMV takes group g: f's roots, shape, chunking and tile of K
 * filled (sums: a root's format has mins). */
static bool gemv_takes(pc_planner *pl, const pc_group *g, gemv_form *f, bool *sums) {
  memset(f, 0, sizeof *f);
  f->g = g;
  if (!eligible(pl, g, f->rs, &f->M, &f->N, &f->K)) return false;
  /* Roots of different formats share the loop when their chunks cover the
   * same elements (every block format: 64); tiles of K hold whole k-quant
   * blocks. */
  bool kq = false;
  *sums = false;
  f->ce = chunk_elems(f->rs[0].wdt);
  /* Medium's int8 form where dot4_i8 is one instruction (and on the
   * interpreter, which tests it): emulated, its shifts cost more than the
   * float form's work, which then serves medium as it serves high. */
  const poot_kir_target *t = pl->t;
  f->q8 = pl->opt->matmul_precision == POOT_MATMUL_MEDIUM && f->ce == GQ_CHUNK &&
          (t->dot4_native || t->lang == POOT_KIR_LANG_NONE);
  for (uint32_t i = 0; i < g->nroots; i++) {
    if (chunk_elems(f->rs[i].wdt) != f->ce) return false;
    kq = kq || poot__gq_is_k(f->rs[i].wdt);
    *sums = *sums || poot__gq_has_mins(f->rs[i].wdt);
    f->rs[i].woff = f->per;
    f->per += chunk_words(f->rs[i].wdt);
  }
  /* Tiles of K a multiple of sg chunks, where that fits: chunk c is then
   * lane c % sg's in every tile, as without tiles, so each row sums in one
   * order whatever M is (the tile shrinks as M grows): a row of a batched
   * decode step is computed as alone (docs/batching.md "Batch invariance").
   * Where it does not fit, gemv_chunks rotates the lanes to the same end. */
  const uint32_t align = kq ? 256 : 64, sgc = pl->t->subgroup_size * f->ce;
  const uint32_t inv = sgc % align == 0 ? sgc : align % sgc == 0 ? align : align * sgc;
  f->tk = tile_len(pl, f->M, f->K, inv, *sums, f->q8);
  if (!f->tk) f->tk = tile_len(pl, f->M, f->K, align, *sums, f->q8);
  return f->tk && f->tk % f->ce == 0;
}

bool poot__cc_gemv_takes(pc_planner *pl, const pc_group *g) {
  gemv_form f;
  bool sums;
  return gemv_takes(pl, g, &f, &sums);
}

poot_status poot__cc_tpl_gemv(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                              const char **out_what, bool *out_done) {
  pc_planner *pl = k->pl;
  gemv_form f;
  bool sums;
  *out_done = false;
  if (!gemv_takes(pl, g, &f, &sums)) return NULL;
  *out_done = true;
  *out_what = f.q8 ? "gemv medium" : "gemv";
  f.nr = g->nroots;
  f.nm = (uint32_t)f.M;
  f.sg = pl->t->subgroup_size;
  uint32_t per = pl->wg / f.sg;
  /* Two rows per subgroup for long outputs: half the workgroups, so half
   * the x staging (and the norm statistics each workgroup recomputes), with
   * as many loads in flight; for block formats each x load and Σ x then
   * serves both rows. A 4-bit row streams 0.56 bytes per element where x
   * costs 4 bytes of shared-memory reads per element and row (a 128-byte-
   * per-cycle port: about the rate 4-bit weights arrive at on an H200 SM),
   * and at K = 2048 a workgroup's 8 KiB of staged x is as much as its eight
   * rows of weights: block formats take two rows from N = 2048 (still 128
   * workgroups, one per SM). */
  f.R = !pl->opt->gemv_one_row && f.N % 2 == 0 &&
                f.N >= (f.ce == GQ_CHUNK ? GEMV_BLOCK_R2_MIN_N : 4096)
            ? 2
            : 1;
  for (uint32_t i = 0; i < f.nr; i++) {
    const pc_value *pw = &pl->v[f.rs[i].w];
    POOT_TRY(poot__cc_binding_of(k, pw->buffer, &f.rs[i].ref));
    poot__cc_note_buffer(k, f.rs[i].ref, k->frac);
  }
  char nmb[32];
  f.xt = (xtile){0, xpos(f.tk), sums, 0, f.tk / 32, f.q8, 0, f.tk / 4 + f.tk / 16, 0};
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "gacc", nmb, sizeof nmb),
                                poot_kir_type_make(S(F32), 1), f.R * f.nr * f.nm, &f.pacc));
  if (f.q8) {
    /* Through poot__cc_shared: a batch of medium GEMVs (a layer's K and V)
     * needs its largest group's tiles, not their sum, which at K = 4096
     * would not fit in 48 KiB and split the batch. */
    POOT_TRY(poot__cc_shared(k, "gx", S(F32), f.nm * f.xt.pitch, &f.xt.sh));
    if (sums) POOT_TRY(poot__cc_shared(k, "gsx", S(F32), f.nm * f.xt.runs, &f.xt.ssh));
    POOT_TRY(poot__cc_shared(k, "gxq", S(U32), f.nm * f.xt.qpitch, &f.xt.qsh));
    POOT_TRY(poot__cc_shared(k, "gxd", S(F32), f.nm * f.xt.runs, &f.xt.dsh));
  } else {
    POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "gx", nmb, sizeof nmb), S(F32),
                                 f.nm * f.xt.pitch, &f.xt.sh));
    if (sums)
      POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "gsx", nmb, sizeof nmb), S(F32),
                                   f.nm * f.xt.runs, &f.xt.ssh));
  }
  uint32_t rl = row_groups(&f, per);
  uint64_t wgs = ((uint64_t)f.N + (uint64_t)per * f.R * rl - 1) / ((uint64_t)per * f.R * rl);
  poot__cc_grid_for(wgs, grid);
  poot_kir_value o0;
  gemv_unroll(pl->t, &f);
  POOT_TRY(gemv_first_row(k, &f, &o0));
  if (rl > 1) {
    POOT_TRY(poot__cc_local_prologue(k, g));
    POOT_TRY(gemv_row_loop(k, &f, o0, (uint32_t)wgs * per * f.R));
    k->flops += 2ull * (uint64_t)f.M * (uint64_t)f.N * (uint64_t)f.K * f.nr;
    return NULL;
  }
  POOT_TRY(gemv_rows(k, &f, o0));
  POOT_TRY(gemv_prefetch(k, &f));
  POOT_TRY(poot__cc_local_prologue(k, g));
  for (uint32_t tile0 = 0; tile0 < (uint32_t)f.K; tile0 += f.tk) POOT_TRY(gemv_tile(k, &f, tile0));
  POOT_TRY(gemv_finish(k, &f));
  k->flops += 2ull * (uint64_t)f.M * (uint64_t)f.N * (uint64_t)f.K * f.nr;
  return NULL;
}
