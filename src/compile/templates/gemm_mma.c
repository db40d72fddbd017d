/* templates/gemm_mma.c — the prefill GEMM on matrix fragments (KIR's mma,
 * m16n8k16 bf16 -> f32), for targets with poot_kir_target_has_matrix:
 *   out[m, n] = Σ_c x[m, c] · W[n, c]
 * with the group shape, tile grid and epilogue of gemm.c's scalar form.
 *
 * A workgroup of 256 threads (8 warps) computes a 64 × 64 tile of the
 * output; warp w owns rows 32·(w / 4) .. +32 and columns 16·(w % 4) .. +16 of
 * it, as 2 × 2 fragments of 16 × 8 (f32x4 accumulators per lane, per root).
 * The contraction runs in steps of 32: the workgroup stages x[64, 32] and
 * each root's W[64, 32] in shared memory, every element through the group's
 * emitter (a prologue or a dequantization applied once per staged element,
 * in f32) and then split into two bf16 halves (below), rows of 40 elements
 * (80 bytes: the 8 rows an ldmatrix reads fall in distinct banks). The
 * staging is pipelined through registers: a thread fetches pairs of
 * adjacent elements of the next step into private registers before the
 * current step's fragments, and splits and stores them (one 32-bit store
 * per pair and half) after a barrier that follows them. Each
 * step is two k16 halves: per half a warp loads its two A fragments and one
 * x4 B load per root (two n8 fragments) of each half, and issues three mma
 * per fragment pair. Past K the staged elements are 0; past M or N rows
 * repeat the last one and are not stored (as gemm.c).
 *
 * Numerics (the 3 × bf16 split). Every staged f32 value v becomes
 * hi = bf16(v) and lo = bf16(v − hi), both round to nearest even; v − hi is
 * exact in f32. With u = 2^-8 (bf16's unit roundoff): |v − hi| ≤ u|v| and
 * v = hi + lo + e with |e| ≤ u·|v − hi| ≤ u²|v|. The kernel sums
 * xh·wh + xh·wl + xl·wh, so each product x·w is off by
 * xl·wl + (xh + xl)·ew + ex·w, at most 3u²|x·w| = 3·2^-16·|x·w| (to first
 * order); bf16 has f32's exponent range, so nothing overflows that did not
 * in f32 (subnormal lo parts lose bits: an absolute 2^-133·|w| a term).
 * The products are exact and each mma adds 16 of them to the f32
 * accumulator with one rounding (the interpreter; hardware in its own
 * order), 3K/16 roundings in all. Against the oracle's sequential f32 sum
 * ((K − 1)·2^-24·Σ|t|) the difference is at most
 * (3·2^-16 + (K + 3K/16)·2^-24)·Σ|t|. The GEMM tests allow
 * 4.8e-7·K·max|out| ≈ 8.05·K·2^-24·max|out| with Σ|t| ≤ 4·max|out| for
 * their inputs (the bound docs/compiler.md states), i.e. 768·4 + 4.75·K ≤
 * 8.05·K in units of 2^-24·max|out|: K ≥ 931. The form therefore takes
 * contractions of at least GEMM_MMA_MIN_K = 1024 and leaves shorter ones
 * to the scalar form, so no tolerance changes.
 *
 * The raw path (raw_*, below): where every root's weight is an f16 or bf16
 * leaf read through a plain convert, its tiles are copied as stored with
 * ASYNC_COPY into a ring of 2 to 6 tiles (one barrier a step; x staged as
 * above into two buffers, or one and a second barrier where shared memory
 * is short); bf16 weights are their own hi half, f16 ones are split in
 * registers after ldmatrix (the same hi and lo values). Its tiles are
 * chosen by rule (mma_choose): 128 × 128 or 64 × 128 for one root and
 * 128 × 64 for the SwiGLU pair where M ≥ 128 and enough of them fill the
 * GPU, 32 × 64 for M ≤ 32, else 64 × 64; the 8 warps are 2 × 4 on each, a
 * warp holding fm × fn fragments of it.
 *
 * x staged (xraw, the group's x_temp1; M > 64): a PG_GEMM_X group wrote
 * x's 16-bit form (bf16 hi and lo, or MEDIUM's one array: the values the
 * emitter's staging stores) into a temp, and the raw path copies x's
 * tiles from it with ASYNC_COPY into a ring beside the weights' (same
 * stages, same commit groups); tiles whose ring cannot hold x too give
 * way to the next (docs/compiler.md, "x staged once"). Same bits.
 *
 * Weights staged (wtemp, the group's w_temp1; M > 64): where a weight is
 * not a 16-bit leaf (a K-quant, q8_0, an f32 weight …), a PG_GEMM_W group
 * per root wrote its 16-bit form into a temp as the emitter's staging
 * stores it (bf16 hi and lo, or MEDIUM's one array), and the raw path
 * copies its tiles from there as it copies a leaf's: the dequantization
 * runs once per weight element, not once per row tile. At `high` each
 * root has a second ring, of its lo halves (acc += xh·wh + xh·wl + xl·wh,
 * as the emitter's form). Same bits (docs/compiler.md, "Weights staged
 * once").
 *
 * MEDIUM precision (poot_compile_options.matmul_precision): every operand
 * rounded once to one 16-bit type and one mma per fragment pair; its bound
 * (and f16's range) is docs/compiler.md's, tested by compile_gemm.
 *
 * The kernel's subgroups must be 32 lanes (the fragments' layout); a target
 * without matrix fragments, with other subgroups or too little shared
 * memory keeps the scalar form (poot__cc_gemm_mma_fits). */
#include <stdio.h>
#include <string.h>

#include "gemm.h"

#define OP(x) POOT_KIR_OP_##x

#define MMA_STEP 32      /* contraction elements staged per step */
#define MMA_PITCH 40     /* shared row pitch in bf16 elements (80 bytes) */
#define MMA_WARPS 8      /* GEMM_THREADS / 32 */
#define MMA_FM_MAX 4     /* 16-row fragments per warp, at most (the big tile) */
#define MMA_FRAGS_MAX 16 /* fragments per warp and root, at most (the big tile: 4 × 4) */
#define MMA_WIDE 128     /* the wide tile's columns (raw path, one root, M >= MMA_WIDE_M) */
#define MMA_WIDE_M 128
#define MMA_BIG 128     /* the big tile's rows and columns (raw path, one root, M >= MMA_BIG) */
#define MMA_SKINNY_M 32 /* the skinny tile's rows (raw path, M <= MMA_SKINNY_M) */
#define MMA_STAGES 4    /* ring tiles at most (the skinny tile: MMA_STAGES_SKINNY) */
#define MMA_STAGES_SKINNY 6
/* Accumulator (root r, fragment fm, fn) in the private array (s->fn per row). */
#define ACC(form, r, m, n) (((r) * (form)->fm + (m)) * (form)->fn + (n))
#define GEMM_MMA_MIN_K 1024 /* shorter contractions: the scalar form (see the top) */

/* Shared bytes the form needs: hi and lo tiles of x and of each weight. */
static uint64_t mma_shared_bytes(uint32_t nr) {
  return 2ull * 2 * GEMM_TILE * MMA_PITCH * (1 + nr);
}

uint32_t poot__cc_gemm_shared_budget(const pc_planner *pl) {
  const poot_kir_target *t = pl->t;
  return t->shared_memory_optin_bytes > t->shared_memory_bytes ? t->shared_memory_optin_bytes
                                                               : t->shared_memory_bytes;
}

bool poot__cc_gemm_mma_fits(const pc_planner *pl, const gemm_form *f) {
  const poot_kir_target *t = pl->t;
  if (!poot_kir_target_has_matrix(t) || !t->subgroup_ops || t->subgroup_size != 32) return false;
  if (!poot_kir_target_has_storage(t, POOT_KIR_BF16)) return false;
  if (pl->wg != GEMM_THREADS || f->K < GEMM_MMA_MIN_K) return false;
  return poot__cc_gemm_shared_budget(pl) >= mma_shared_bytes(f->g->nroots) + 4096;
}

/* The form's own state beside gemm_form: shared tiles (operand 0 is x,
 * 1 + r root r's weight), the accumulators and the lane's fragment rows. */
typedef struct mma_form {
  gemm_form *f;
  uint32_t hi[1 + PG_MAX_ROOTS], lo[1 + PG_MAX_ROOTS];
  uint32_t pacc; /* f32x4 [nr][fm][fn] */
  /* The tile (tm × tn) and its warps: wmn down its rows, wnn = 8 / wmn
   * across, each owning fm 16-row by fn 8-column fragments; pairs: the
   * element pairs a thread stages of x per step (tm · 32 / 512). */
  uint32_t tm, tn, wmn, wnn, fm, fn, pairs;
  uint32_t ppre; /* f32 [1 + nr][pairs][2]: the next step's staged values */
  poot_kir_value wm, wn, lane;
  poot_kir_value arow[MMA_FM_MAX]; /* this lane's A row (ldmatrix) per fragment, as an element */
  poot_kir_value brow;             /* this lane's B row (ldmatrix x4: two n8 fragments) */
  /* MEDIUM (one): every operand rounded once to oty, one mma per pair. */
  bool one;
  poot_kir_scalar oty;
  /* The raw path (raw): every root's weight a plain f16 or bf16 leaf (wty)
   * copied as it is stored into a ring of `stages` tiles (ring[r], binding
   * wref[r]); x in xbuf buffers of hi[0] (and lo[0]): 2, or 1 where shared
   * memory is short (a second barrier a step). */
  bool raw;
  poot_kir_scalar wty;
  uint32_t stages, xbuf;
  uint32_t ring[PG_MAX_ROOTS], wref[PG_MAX_ROOTS];
  poot_value wleaf[PG_MAX_ROOTS];
  /* Weights staged (wtemp): each root's 16-bit form in a temp from
   * element wsrc[r][0] (hi, or MEDIUM's one array); at `high` (wlo) its lo
   * halves from wsrc[r][1] into a second ring, ringlo[r]. */
  bool wtemp, wlo;
  uint32_t ringlo[PG_MAX_ROOTS];
  poot_kir_value wsrc[PG_MAX_ROOTS][2];
  /* x staged (xraw): x's 16-bit form in a temp (PG_GEMM_X wrote it),
   * copied like the weights into rings hi[0] (and lo[0]) of `stages`
   * tiles, from binding xref at elements xsrc[0] (hi) and xsrc[1] (lo). */
  bool xraw;
  uint32_t xref;
  poot_kir_value xsrc[2];
} mma_form;

static poot_status mma_arrays(pc_kctx *k, mma_form *s) {
  char nm[32], base[16];
  for (uint32_t o = 0; o <= s->f->nr; o++) {
    snprintf(base, sizeof base, "mh%u", o);
    POOT_TRY(poot__cc_shared(k, base, s->one ? s->oty : POOT_KIR_BF16, GEMM_TILE * MMA_PITCH,
                             &s->hi[o]));
    if (s->one) continue;
    snprintf(base, sizeof base, "ml%u", o);
    POOT_TRY(poot__cc_shared(k, base, POOT_KIR_BF16, GEMM_TILE * MMA_PITCH, &s->lo[o]));
  }
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "mpre", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), (1 + s->f->nr) * s->pairs * 2,
                                &s->ppre));
  return poot_kir_add_private(k->b, poot__cc_name(k, "macc", nm, sizeof nm),
                              poot_kir_type_make(POOT_KIR_F32, 4), s->f->nr * s->fm * s->fn,
                              &s->pacc);
}

/* v = a · m + c (u32). */
static poot_status mad_c(pc_kctx *k, poot_kir_value a, uint32_t m, uint32_t c,
                         poot_kir_value *out) {
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), a, m, out));
  return c ? poot__cc_bin_c(k, OP(ADD), *out, c, out) : NULL;
}

/* The lane's warp position and its ldmatrix rows (kir.h, "matrix
 * fragments"): lane L names row L % 8 of matrix L / 8. For A (x, rows m,
 * k contiguous) matrix i is rows 8·(i & 1), columns 8·(i >> 1) of the
 * 16 × 16 fragment; for B (W as N × K, plain ldmatrix) matrix i is rows
 * n = 8·(i >> 1) (the n8 fragment), columns k = 8·(i & 1), so words 0, 1
 * are fragment 0's B and words 2, 3 fragment 1's. Accumulators zeroed. */
static poot_status mma_lanes(pc_kctx *k, mma_form *s) {
  poot_kir_value w, mat, r8, lo1, hi1, r, zero, z4;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), s->f->lid, 5, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), s->f->lid, 31, &s->lane));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, s->wnn == 8 ? 3 : 2, &s->wm));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), w, s->wnn - 1, &s->wn));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), s->lane, 3, &mat));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), s->lane, 7, &r8));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), mat, 1, &lo1));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), mat, 1, &hi1));
  for (uint32_t fm = 0; fm < s->fm; fm++) {
    poot_kir_value c;
    POOT_TRY(mad_c(k, s->wm, s->tm / s->wmn, 16 * fm, &r));
    POOT_TRY(mad_c(k, lo1, 8, 0, &c));
    POOT_TRY(poot__cc_bin(k, OP(ADD), r, c, &r));
    POOT_TRY(poot__cc_bin(k, OP(ADD), r, r8, &r));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), r, MMA_PITCH, &r));
    POOT_TRY(mad_c(k, hi1, 8, 0, &c));
    POOT_TRY(poot__cc_bin(k, OP(ADD), r, c, &s->arow[fm]));
  }
  poot_kir_value c;
  POOT_TRY(mad_c(k, s->wn, s->tn / s->wnn, 0, &r));
  POOT_TRY(mad_c(k, hi1, 8, 0, &c));
  POOT_TRY(poot__cc_bin(k, OP(ADD), r, c, &r));
  POOT_TRY(poot__cc_bin(k, OP(ADD), r, r8, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), r, MMA_PITCH, &r));
  POOT_TRY(mad_c(k, lo1, 8, 0, &c));
  POOT_TRY(poot__cc_bin(k, OP(ADD), r, c, &s->brow));
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  POOT_TRY(poot_kir_splat(k->b, 4, zero, &z4));
  for (uint32_t i = 0; i < s->f->nr * s->fm * s->fn; i++)
    POOT_TRY(poot_kir_priv_store(k->b, s->pacc, i, z4));
  return NULL;
}

/* Fetches rows [r0, r0 + tm) (clamped to `rows`; tm is 64 but for x on
 * the raw path's other tiles) of operand o's value v, contraction elements
 * [k0, k0 + 32) (0 past K), into the private prefetch registers: pairs of
 * adjacent elements (two per thread and pass, a warp per two rows, so a
 * warp's loads of one pass cover 64 contiguous elements), through the
 * group's emitter. Nothing here reads shared memory, so the loads are in
 * flight while the previous step's fragments run. */
static poot_status mma_fetch(pc_kctx *k, const mma_form *s, uint32_t o, poot_value v, int64_t rows,
                             poot_kir_value r0, poot_kir_value k0) {
  int64_t K = s->f->K;
  poot_kir_value zero = 0;
  if (K % MMA_STEP != 0) POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  for (uint32_t p = 0; p < s->pairs; p++) {
    for (uint32_t j = 0; j < 2; j++) {
      poot__cc_scope_push(k);
      poot_kir_value e, r, c, val;
      POOT_TRY(mad_c(k, s->f->lid, 2, 2 * p * GEMM_THREADS + j, &e));
      POOT_TRY(poot__cc_gemm_staged(k, v, rows, K, r0, k0, e, 5, zero, &r, &c, &val));
      POOT_TRY(poot_kir_priv_store(k->b, s->ppre, (o * s->pairs + p) * 2 + j, val));
      poot__cc_scope_pop(k);
    }
  }
  return NULL;
}

/* Every operand's fetch: x, then each root's weight. */
static poot_status mma_fetch_all(pc_kctx *k, const mma_form *s, poot_kir_value k0) {
  const gemm_form *f = s->f;
  POOT_TRY(mma_fetch(k, s, 0, f->rs[0].x, f->M, f->m0, k0));
  for (uint32_t r = 0; r < f->nr; r++)
    POOT_TRY(mma_fetch(k, s, 1 + r, f->rs[r].w, f->N, f->n0, k0));
  return NULL;
}

/* Splits the prefetched values of operands [0, nops) into bf16 hi and lo
 * halves (MEDIUM: rounds them once to oty) and stores them into the shared
 * tiles at element offset `off` (0: none), a pair per 32-bit store: pass
 * p's pair is tile row (2·lid + 512·p) / 32, columns c and c + 1 (c even). */
static poot_status mma_put(pc_kctx *k, const mma_form *s, uint32_t nops, poot_kir_value off) {
  for (uint32_t o = 0; o < nops; o++)
    for (uint32_t p = 0; p < s->pairs; p++) {
      poot__cc_scope_push(k);
      poot_kir_value e, r, c, at, hi[2], lo[2], h2, l2;
      POOT_TRY(mad_c(k, s->f->lid, 2, 2 * p * GEMM_THREADS, &e));
      POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, 5, &r));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), e, MMA_STEP - 1, &c));
      POOT_TRY(mad_c(k, r, MMA_PITCH, 0, &at));
      POOT_TRY(poot__cc_bin(k, OP(ADD), at, c, &at));
      if (off) POOT_TRY(poot__cc_bin(k, OP(ADD), at, off, &at));
      for (uint32_t j = 0; j < 2; j++) {
        poot_kir_value val, hif, rest;
        POOT_TRY(poot_kir_priv_load(k->b, s->ppre, (o * s->pairs + p) * 2 + j, &val));
        if (s->one) {
          POOT_TRY(poot_kir_convert(k->b, s->oty, val, &hi[j]));
          continue;
        }
        POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, val, &hi[j]));
        POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, hi[j], &hif));
        POOT_TRY(poot_kir_binary(k->b, OP(SUB), val, hif, &rest));
        POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, rest, &lo[j]));
      }
      POOT_TRY(poot_kir_vec(k->b, 2, hi, &h2));
      if (!s->one) POOT_TRY(poot_kir_vec(k->b, 2, lo, &l2));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->hi[o], at, h2));
      if (!s->one) POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->lo[o], at, l2));
      poot__cc_scope_pop(k);
    }
  return NULL;
}

/* The B fragment (u32x2) of n8 fragment fn from an x4 load. */
static poot_status b_frag(pc_kctx *k, poot_kir_value x4, uint32_t fn, poot_kir_value *out) {
  poot_kir_value w[2];
  POOT_TRY(poot_kir_extract(k->b, x4, 2 * fn, &w[0]));
  POOT_TRY(poot_kir_extract(k->b, x4, 2 * fn + 1, &w[1]));
  return poot_kir_vec(k->b, 2, w, out);
}

/* MEDIUM: root r's fragment pairs from A fragments a[] and the x4 load
 * w4 (n8 fragments f0 and f0 + 1), one mma each (operands oty). */
static poot_status mma_one(pc_kctx *k, const mma_form *s, uint32_t r, const poot_kir_value *a,
                           poot_kir_value w4, uint32_t f0, poot_kir_value *acc) {
  for (uint32_t fn = 0; fn < 2; fn++) {
    poot_kir_value b;
    POOT_TRY(b_frag(k, w4, fn, &b));
    for (uint32_t fm = 0; fm < s->fm; fm++) {
      poot_kir_value *c = &acc[ACC(s, r, fm, f0 + fn)];
      POOT_TRY(poot_kir_mma(k->b, s->oty, a[fm], b, *c, c));
    }
  }
  return NULL;
}

/* One k16 half (elements [16·h, 16·h + 16) of the staged step): every
 * root's fragments, acc += xh·wh + xh·wl + xl·wh (MEDIUM: acc += x·w). */
static poot_status mma_half(pc_kctx *k, const mma_form *s, uint32_t h, poot_kir_value *acc) {
  poot_kir_value ah[MMA_FM_MAX], al[MMA_FM_MAX], at;
  for (uint32_t fm = 0; fm < s->fm; fm++) {
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), s->arow[fm], 16 * h, &at));
    POOT_TRY(poot_kir_mma_load(k->b, s->hi[0], at, false, &ah[fm]));
    if (!s->one) POOT_TRY(poot_kir_mma_load(k->b, s->lo[0], at, false, &al[fm]));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), s->brow, 16 * h, &at));
  for (uint32_t r = 0; r < s->f->nr; r++) {
    poot_kir_value bh4, bl4;
    POOT_TRY(poot_kir_mma_load(k->b, s->hi[1 + r], at, false, &bh4));
    if (s->one) {
      POOT_TRY(mma_one(k, s, r, ah, bh4, 0, acc));
      continue;
    }
    POOT_TRY(poot_kir_mma_load(k->b, s->lo[1 + r], at, false, &bl4));
    for (uint32_t fn = 0; fn < 2; fn++) {
      poot_kir_value bh, bl;
      POOT_TRY(b_frag(k, bh4, fn, &bh));
      POOT_TRY(b_frag(k, bl4, fn, &bl));
      for (uint32_t fm = 0; fm < s->fm; fm++) {
        poot_kir_value *c = &acc[ACC(s, r, fm, fn)];
        POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, al[fm], bh, *c, c));
        POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah[fm], bl, *c, c));
        POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah[fm], bh, *c, c));
      }
    }
  }
  return NULL;
}

/* The loop over K in steps of MMA_STEP, software-pipelined through
 * registers, with one copy of the staging: iteration i (0 .. steps)
 * fetches step i (its global loads issued first; clamped to the last step,
 * so no load past the operands), runs step i − 1's fragments from shared
 * memory when i > 0, and after a barrier splits and stores the fetched
 * step over the tiles. Iteration 0 is the prologue (step 0 staged, nothing
 * run); the last one's store is never read. The staging is most of the
 * kernel's code (a dequantizing emitter's especially), and the driver's
 * JIT time grows with the code: one copy instead of a prologue's second
 * one cuts it by about 45 % (docs/PERFORMANCE.md, "Compile time offline").
 * Same arithmetic in the same order as a peeled prologue: the same bits. */
static poot_status mma_steps(pc_kctx *k, const mma_form *s) {
  const gemm_form *f = s->f;
  uint32_t steps = (uint32_t)((f->K + MMA_STEP - 1) / MMA_STEP);
  if (f->split > 1) steps = f->ks / MMA_STEP; /* from kbase */
  poot_kir_value z, end, stepv, k0, kf, run;
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_u32(k, (steps + 1) * MMA_STEP, &end));
  POOT_TRY(poot__cc_u32(k, MMA_STEP, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, stepv, &k0));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), k0, (steps - 1) * MMA_STEP, &kf));
  if (f->split > 1) POOT_TRY(poot__cc_bin(k, OP(ADD), kf, f->kbase, &kf));
  POOT_TRY(mma_fetch_all(k, s, kf));
  POOT_TRY(poot__cc_bin_c(k, OP(GE), k0, MMA_STEP, &run));
  POOT_TRY(poot_kir_if_begin(k->b, run)); /* uniform: every thread's k0 */
  poot_kir_value acc[PG_MAX_ROOTS * MMA_FRAGS_MAX];
  for (uint32_t i = 0; i < f->nr * s->fm * s->fn; i++)
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, i, &acc[i]));
  for (uint32_t h = 0; h < MMA_STEP / 16; h++) POOT_TRY(mma_half(k, s, h, acc));
  for (uint32_t i = 0; i < f->nr * s->fm * s->fn; i++)
    POOT_TRY(poot_kir_priv_store(k->b, s->pacc, i, acc[i]));
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_barrier(k->b)); /* the tiles are read before they are overwritten */
  POOT_TRY(mma_put(k, s, 1 + f->nr, 0));
  POOT_TRY(poot_kir_barrier(k->b)); /* the next step's tiles are complete */
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* ----------------------------------------------------------- the raw path */

/* The f16 or bf16 leaf under weight operand w when the form may copy it as
 * stored: an inline convert of a weight leaf (a dense [N, K] buffer) whose
 * rows start on 16 bytes (K % 8 == 0, a 16-byte aligned buffer). */
static bool raw_leaf(const pc_planner *pl, poot_value w, int64_t K, poot_value *out) {
  const pc_value *pw = &pl->v[w];
  if (pw->hold != PC_INLINE || !pw->node || pw->node->op != POOT_OP_CONVERT || K % 8 != 0)
    return false;
  poot_value l = pl->alias[pw->node->operands[0]];
  const pc_value *pv = &pl->v[l];
  if (pv->hold != PC_LEAFBUF || !pv->node || pv->node->op != POOT_OP_LEAF) return false;
  const poot_type *lt = poot__cc_type(pl, l);
  if ((lt->dtype != POOT_DTYPE_F16 && lt->dtype != POOT_DTYPE_BF16) || lt->shape.rank != 2)
    return false;
  const poot_plan_buffer *pb = poot_vec_at(&pl->buffers, pv->buffer);
  if (pb->align % 16 != 0) return false;
  *out = l;
  return true;
}

/* Shared bytes of the raw path: x's tiles xbuf times (hi and lo, or one),
 * and `stages` raw tiles per root. */
static uint64_t raw_shared_bytes(const mma_form *s, uint32_t xbuf, uint32_t stages) {
  uint64_t xtile = 2ull * s->tm * MMA_PITCH, wtile = (s->wlo ? 4ull : 2ull) * s->tn * MMA_PITCH;
  return xbuf * (s->one ? 1 : 2) * xtile + (uint64_t)stages * s->f->nr * wtile;
}

/* Shared bytes of the raw path with x staged: `stages` tiles of x (hi and
 * lo, or one) and of each root. */
static uint64_t xraw_shared_bytes(const mma_form *s, uint32_t stages) {
  uint64_t xtile = 2ull * s->tm * MMA_PITCH, wtile = (s->wlo ? 4ull : 2ull) * s->tn * MMA_PITCH;
  return (uint64_t)stages * ((s->one ? 1 : 2) * xtile + s->f->nr * wtile);
}

/* The tile tm × tn with wmn warps down its rows (fragments per warp and
 * the x staging's pairs follow). */
static void mma_geometry(mma_form *s, uint32_t tm, uint32_t tn, uint32_t wmn) {
  s->tm = tm, s->tn = tn, s->wmn = wmn, s->wnn = MMA_WARPS / wmn;
  s->fm = tm / wmn / 16;
  s->fn = tn / s->wnn / 8;
  s->pairs = tm * MMA_STEP / GEMM_THREADS / 2;
}

/* How the form runs this group: MEDIUM where asked and every weight is
 * 16-bit or dequantized (oty bf16 when all are bf16, else f16; f32 weights
 * keep the split), and the raw path where every weight is a raw leaf of
 * one type or the weights are staged (f->ws: copied from temps in the
 * form the emitter's staging stores), with as many stages (4 down to 2) as
 * shared memory holds. */
static void mma_choose(const pc_planner *pl, mma_form *s) {
  const gemm_form *f = s->f;
  const poot_kir_target *t = pl->t;
  bool all_bf16 = true, all_lowp = true, raw = true;
  mma_geometry(s, GEMM_TILE, GEMM_TILE, 2);
  for (uint32_t r = 0; r < f->nr; r++) {
    const pc_value *pw = &pl->v[f->rs[r].w];
    poot_dtype dt = POOT_DTYPE_F32;
    if (pw->hold == PC_INLINE && pw->node &&
        (pw->node->op == POOT_OP_CONVERT || pw->node->op == POOT_OP_DEQUANTIZE))
      dt = poot__cc_type(pl, pl->alias[pw->node->operands[0]])->dtype;
    all_bf16 &= dt == POOT_DTYPE_BF16;
    all_lowp &= dt != POOT_DTYPE_F32;
    raw &= raw_leaf(pl, f->rs[r].w, f->K, &s->wleaf[r]);
    if (raw && r && poot__cc_type(pl, s->wleaf[r])->dtype != poot__cc_type(pl, s->wleaf[0])->dtype)
      raw = false;
  }
  s->oty = all_bf16 ? POOT_KIR_BF16 : POOT_KIR_F16;
  s->one = pl->opt->matmul_precision == POOT_MATMUL_MEDIUM && all_lowp &&
           poot_kir_target_has_storage(t, s->oty);
  if (f->ws && !raw && f->K % 8 == 0) {
    raw = s->wtemp = true;
    s->wlo = !s->one;
    s->wty = s->one ? s->oty : POOT_KIR_BF16;
  } else if (raw) {
    s->wty =
        poot__cc_type(pl, s->wleaf[0])->dtype == POOT_DTYPE_BF16 ? POOT_KIR_BF16 : POOT_KIR_F16;
  }
  if (!raw || !poot_kir_target_has_storage(t, s->wty)) {
    s->wtemp = s->wlo = false;
    return;
  }
  /* The raw path's tiles, best first (docs/compiler.md, "Tiles"), each
   * where its rule holds and a ring of at least 2 fits with x double
   * buffered, else with x single buffered:
   *   big 128 × 128 (warps 2 × 4 of 64 × 32): one root over at least 128
   *     rows, unsplit, at least min_grid big tiles (a workgroup an SM at
   *     its registers: two waves of a 132-SM GPU at the default, so the
   *     last wave's idle SMs cost little);
   *   wide 64 × 128 (warps 2 × 4 of 32 × 32): one root over at least 128
   *     rows, unsplit, at least min_grid wide tiles (two an SM);
   *   tall 128 × 64 (warps 2 × 4 of 64 × 16): the SwiGLU pair (two roots:
   *     as many accumulators as the big tile's one) over at least 128
   *     rows, unsplit, at least min_grid tall tiles; each B fragment (and
   *     an f16 weight's split) serves 4 A fragments instead of 2;
   *   skinny 32 × 64 (warps 2 × 4 of 16 × 16): M <= 32 (batched decode;
   *     the grid and the planner's split are those of 64 × 64, since one
   *     row of tiles either way), a ring up to MMA_STAGES_SKINNY deep;
   *   64 × 64 (warps 2 × 4 of 32 × 16): every other group.
   * The split, when there is one, was chosen before (planner.c) from 64 ×
   * 64 tiles, so the split choice never depends on a tile here. */
  const uint64_t min_grid = pl->opt->gemm_wide_min_grid ? pl->opt->gemm_wide_min_grid : 256;
  const uint64_t budget = poot__cc_gemm_shared_budget(pl);
  const uint64_t M = (uint64_t)f->M, N = (uint64_t)f->N;
  const bool one_unsplit = f->nr == 1 && f->split <= 1;
  const bool big = pl->opt->gemm_big_tiles; /* off by default: measured slower (compile.h) */
  const struct {
    bool ok;
    uint32_t tm, tn, stages;
  } c[5] = {
      {big && one_unsplit && M >= MMA_BIG &&
           ((M + MMA_BIG - 1) / MMA_BIG) * ((N + MMA_BIG - 1) / MMA_BIG) >= min_grid,
       MMA_BIG, MMA_BIG, MMA_STAGES},
      {one_unsplit && M >= MMA_WIDE_M &&
           ((M + GEMM_TILE - 1) / GEMM_TILE) * ((N + MMA_WIDE - 1) / MMA_WIDE) >= min_grid,
       GEMM_TILE, MMA_WIDE, MMA_STAGES},
      {big && f->nr == 2 && f->split <= 1 && M >= MMA_BIG &&
           ((M + MMA_BIG - 1) / MMA_BIG) * ((N + GEMM_TILE - 1) / GEMM_TILE) >= min_grid,
       MMA_BIG, GEMM_TILE, MMA_STAGES},
      {M <= MMA_SKINNY_M, MMA_SKINNY_M, GEMM_TILE, MMA_STAGES_SKINNY},
      {true, GEMM_TILE, GEMM_TILE, MMA_STAGES},
  };
  /* With x staged (f->xs), first the tiles whose ring holds x's tiles too
   * (at `high` the big and tall tiles' do not: 30 KiB a stage); then, as
   * without, x through the emitter. */
  for (uint32_t i = 0; i < 5 && f->xs; i++) {
    if (!c[i].ok) continue;
    mma_geometry(s, c[i].tm, c[i].tn, 2);
    for (uint32_t st = c[i].stages; st >= 2; st--)
      if (xraw_shared_bytes(s, st) + 4096 <= budget) {
        s->raw = s->xraw = true;
        s->stages = st;
        s->xbuf = 0;
        return;
      }
  }
  for (uint32_t i = 0; i < 5; i++) {
    if (!c[i].ok) continue;
    mma_geometry(s, c[i].tm, c[i].tn, 2);
    for (uint32_t xb = 2; xb >= 1; xb--)
      for (uint32_t st = c[i].stages; st >= 2; st--)
        if (raw_shared_bytes(s, xb, st) + 4096 <= budget) {
          s->raw = true;
          s->stages = st;
          s->xbuf = xb;
          return;
        }
  }
  s->wtemp = s->wlo = false;
  mma_geometry(s, GEMM_TILE, GEMM_TILE, 2);
}

void poot__cc_gemm_mma_tile(const pc_planner *pl, gemm_form *f) {
  mma_form s;
  memset(&s, 0, sizeof s);
  s.f = f;
  mma_choose(pl, &s);
  f->tm = s.tm;
  f->tn = s.tn;
}

bool poot__cc_gemm_mma_xstaged(const pc_planner *pl, gemm_form *f, bool *out_one,
                               poot_kir_scalar *out_ty) {
  mma_form s;
  memset(&s, 0, sizeof s);
  s.f = f;
  mma_choose(pl, &s);
  *out_one = s.one;
  *out_ty = s.one ? s.oty : POOT_KIR_BF16;
  return s.xraw;
}

bool poot__cc_gemm_mma_wstaged(const pc_planner *pl, gemm_form *f, bool *out_one,
                               poot_kir_scalar *out_ty) {
  mma_form s;
  memset(&s, 0, sizeof s);
  s.f = f;
  mma_choose(pl, &s);
  *out_one = s.one;
  *out_ty = s.wty;
  return s.wtemp;
}

/* The raw path's arrays: x's tiles (xbuf buffers each), the roots' rings,
 * their typed bindings, x's prefetch registers and the accumulators. */
static poot_status raw_arrays(pc_kctx *k, mma_form *s) {
  char nm[32], base[16];
  const uint32_t tile = (s->xraw ? s->stages : s->xbuf) * s->tm * MMA_PITCH;
  POOT_TRY(poot__cc_shared(k, "mh0", s->one ? s->oty : POOT_KIR_BF16, tile, &s->hi[0]));
  if (!s->one) POOT_TRY(poot__cc_shared(k, "ml0", POOT_KIR_BF16, tile, &s->lo[0]));
  for (uint32_t r = 0; r < s->f->nr; r++) {
    snprintf(base, sizeof base, "mw%u", r);
    POOT_TRY(poot__cc_shared(k, base, s->wty, s->stages * s->tn * MMA_PITCH, &s->ring[r]));
    if (s->wlo) {
      snprintf(base, sizeof base, "mv%u", r);
      POOT_TRY(
          poot__cc_shared(k, base, POOT_KIR_BF16, s->stages * s->tn * MMA_PITCH, &s->ringlo[r]));
    }
    if (s->wtemp) {
      /* root r's temp: hi at its first element, lo N · K elements on */
      const gemm_form *f = s->f;
      poot_kir_value b;
      POOT_TRY(poot__cc_binding_typed(k, 0, s->wty, &s->wref[r]));
      POOT_TRY(poot__cc_temp_base(k, f->g->w_temp1[r] - 1, true, &b));
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), b, 2, &s->wsrc[r][0]));
      if (s->wlo)
        POOT_TRY(
            poot__cc_bin_c(k, OP(ADD), s->wsrc[r][0], (uint32_t)(f->N * f->K), &s->wsrc[r][1]));
      k->bytes += (uint64_t)f->N * (uint64_t)f->K * (s->wlo ? 4 : 2);
      continue;
    }
    POOT_TRY(poot__cc_binding_typed(k, k->pl->v[s->wleaf[r]].buffer, s->wty, &s->wref[r]));
    poot__cc_note_buffer(k, s->wref[r], k->frac);
  }
  if (s->xraw) {
    /* x's temp: hi at its first element, lo M · K elements on */
    const gemm_form *f = s->f;
    poot_kir_value base;
    POOT_TRY(poot__cc_binding_typed(k, 0, s->one ? s->oty : POOT_KIR_BF16, &s->xref));
    POOT_TRY(poot__cc_temp_base(k, f->g->x_temp1 - 1, true, &base));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), base, 2, &s->xsrc[0]));
    if (!s->one)
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), s->xsrc[0], (uint32_t)(f->M * f->K), &s->xsrc[1]));
    k->bytes += (uint64_t)f->M * (uint64_t)f->K * (s->one ? 2 : 4);
  } else {
    POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "mpre", nm, sizeof nm),
                                  poot_kir_type_make(POOT_KIR_F32, 1), s->pairs * 2, &s->ppre));
  }
  return poot_kir_add_private(k->b, poot__cc_name(k, "macc", nm, sizeof nm),
                              poot_kir_type_make(POOT_KIR_F32, 4), s->f->nr * s->fm * s->fn,
                              &s->pacc);
}

/* x's copies of a step (raw_copy's row0, ch, col and valid) into the x
 * ring tiles at element offset xoff: tile row r holds x row m0 + r (rows
 * past M repeat the last one), as the emitter's staging clamped them. The
 * skinny tile's 32 rows take half the threads. */
static poot_status raw_copy_x(pc_kctx *k, const mma_form *s, poot_kir_value row0, poot_kir_value ch,
                              poot_kir_value col, poot_kir_value valid, poot_kir_value xoff) {
  const gemm_form *f = s->f;
  const uint32_t rows = GEMM_THREADS / 4, passes = s->tm >= rows ? s->tm / rows : 1;
  if (s->tm < rows) {
    poot_kir_value in;
    POOT_TRY(poot__cc_bin_c(k, OP(LT), row0, s->tm, &in));
    POOT_TRY(poot_kir_if_begin(k->b, in));
  }
  for (uint32_t q = 0; q < passes; q++) {
    poot_kir_value row = row0, m, src, dst, at;
    if (q) POOT_TRY(poot__cc_bin_c(k, OP(ADD), row0, q * rows, &row));
    POOT_TRY(poot__cc_bin(k, OP(ADD), f->m0, row, &m));
    POOT_TRY(poot__cc_bin_c(k, OP(MIN), m, (uint32_t)(f->M - 1), &m));
    POOT_TRY(mad_c(k, m, (uint32_t)f->K, 0, &src));
    POOT_TRY(poot__cc_bin(k, OP(ADD), src, col, &src));
    POOT_TRY(mad_c(k, row, MMA_PITCH, 0, &dst));
    POOT_TRY(poot__cc_bin(k, OP(ADD), dst, ch, &dst));
    POOT_TRY(poot__cc_bin(k, OP(ADD), dst, xoff, &dst));
    for (uint32_t h = 0; h < (s->one ? 1u : 2u); h++) {
      POOT_TRY(poot__cc_bin(k, OP(ADD), src, s->xsrc[h], &at));
      POOT_TRY(poot_kir_async_copy(k->b, h ? s->lo[0] : s->hi[0], dst, s->xref, at, valid));
    }
  }
  return s->tm < rows ? poot_kir_end(k->b) : NULL;
}

/* Issues every root's copies of the step at contraction element k0 into
 * the ring tile at element offset `off`, and commits them as one group:
 * thread lid copies elements [8·(lid % 4), +8) of tile row lid / 4 (rows
 * past N repeat the last one; elements at or past kend are zeros). */
static poot_status raw_copy(pc_kctx *k, const mma_form *s, poot_kir_value k0, poot_kir_value kend,
                            poot_kir_value off, poot_kir_value xoff) {
  const gemm_form *f = s->f;
  poot__cc_scope_push(k);
  poot_kir_value row0, ch, col, valid;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), f->lid, 2, &row0));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), f->lid, 3, &ch));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), ch, 8, &ch));
  POOT_TRY(poot__cc_bin(k, OP(ADD), k0, ch, &col));
  if (kend)
    POOT_TRY(poot__cc_bin(k, OP(LT), col, kend, &valid));
  else
    POOT_TRY(poot__cc_bin_c(k, OP(LT), col, (uint32_t)f->K, &valid));
  for (uint32_t q = 0; q < s->tn / (GEMM_THREADS / 4); q++) { /* 64 rows a pass */
    poot_kir_value row = row0, n, src, dst;
    if (q) POOT_TRY(poot__cc_bin_c(k, OP(ADD), row0, q * (GEMM_THREADS / 4), &row));
    POOT_TRY(poot__cc_bin(k, OP(ADD), f->n0, row, &n));
    POOT_TRY(poot__cc_bin_c(k, OP(MIN), n, (uint32_t)(f->N - 1), &n));
    POOT_TRY(mad_c(k, n, (uint32_t)f->K, 0, &src));
    POOT_TRY(poot__cc_bin(k, OP(ADD), src, col, &src));
    POOT_TRY(mad_c(k, row, MMA_PITCH, 0, &dst));
    POOT_TRY(poot__cc_bin(k, OP(ADD), dst, ch, &dst));
    POOT_TRY(poot__cc_bin(k, OP(ADD), dst, off, &dst));
    for (uint32_t r = 0; r < f->nr; r++) {
      if (!s->wtemp) {
        POOT_TRY(poot_kir_async_copy(k->b, s->ring[r], dst, s->wref[r], src, valid));
        continue;
      }
      for (uint32_t h = 0; h < (s->wlo ? 2u : 1u); h++) {
        poot_kir_value at;
        POOT_TRY(poot__cc_bin(k, OP(ADD), src, s->wsrc[r][h], &at));
        POOT_TRY(
            poot_kir_async_copy(k->b, h ? s->ringlo[r] : s->ring[r], dst, s->wref[r], at, valid));
      }
    }
  }
  if (s->xraw) POOT_TRY(raw_copy_x(k, s, row0, ch, col, valid, xoff));
  poot__cc_scope_pop(k);
  return poot_kir_async_commit(k->b);
}

/* An f16 x4 load's words split into bf16 hi and lo words (the same
 * elements in the same places): w = hi + lo exactly (11 significant bits
 * into 8 + 8; f16's range is inside bf16's). */
static poot_status raw_split(pc_kctx *k, poot_kir_value w4, poot_kir_value *hi4,
                             poot_kir_value *lo4) {
  poot_kir_value hw[4], lw[4];
  const poot_kir_type u32 = poot_kir_type_make(POOT_KIR_U32, 1);
  for (uint32_t i = 0; i < 4; i++) {
    poot_kir_value word, v[2], h[2], l[2], h2, l2;
    POOT_TRY(poot_kir_extract(k->b, w4, i, &word));
    POOT_TRY(poot__cc_f16_pair(k, word, v));
    for (uint32_t j = 0; j < 2; j++) {
      poot_kir_value hf, rest;
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, v[j], &h[j]));
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, h[j], &hf));
      POOT_TRY(poot_kir_binary(k->b, OP(SUB), v[j], hf, &rest));
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_BF16, rest, &l[j]));
    }
    POOT_TRY(poot_kir_vec(k->b, 2, h, &h2));
    POOT_TRY(poot_kir_vec(k->b, 2, l, &l2));
    POOT_TRY(poot_kir_bitcast(k->b, u32, h2, &hw[i]));
    POOT_TRY(poot_kir_bitcast(k->b, u32, l2, &lw[i]));
  }
  POOT_TRY(poot_kir_vec(k->b, 4, hw, hi4));
  return poot_kir_vec(k->b, 4, lw, lo4);
}

/* One k16 half of the raw path: x's fragments from the x buffer at xoff,
 * each root's from its ring tile at woff. bf16 weights are their own hi
 * half (lo = 0: acc += xh·w + xl·w, the same sums as the split); f16
 * weights are split in registers (acc += xh·wh + xh·wl + xl·wh); MEDIUM
 * feeds the raw fragments to one mma. */
static poot_status raw_half(pc_kctx *k, const mma_form *s, uint32_t h, poot_kir_value xoff,
                            poot_kir_value woff, poot_kir_value *acc) {
  poot_kir_value ah[MMA_FM_MAX], al[MMA_FM_MAX], at;
  for (uint32_t fm = 0; fm < s->fm; fm++) {
    POOT_TRY(poot__cc_bin(k, OP(ADD), s->arow[fm], xoff, &at));
    if (h) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, 16 * h, &at));
    POOT_TRY(poot_kir_mma_load(k->b, s->hi[0], at, false, &ah[fm]));
    if (!s->one) POOT_TRY(poot_kir_mma_load(k->b, s->lo[0], at, false, &al[fm]));
  }
  poot_kir_value bat;
  POOT_TRY(poot__cc_bin(k, OP(ADD), s->brow, woff, &bat));
  if (h) POOT_TRY(poot__cc_bin_c(k, OP(ADD), bat, 16 * h, &bat));
  /* x4 load j holds n8 fragments 2j and 2j + 1 (rows 16·j further) */
  for (uint32_t r = 0; r < s->f->nr; r++)
    for (uint32_t j = 0; j < s->fn / 2; j++) {
      poot_kir_value w4, bh4, bl4 = 0;
      at = bat;
      if (j) POOT_TRY(poot__cc_bin_c(k, OP(ADD), bat, 16 * j * MMA_PITCH, &at));
      POOT_TRY(poot_kir_mma_load(k->b, s->ring[r], at, false, &w4));
      if (s->one) {
        POOT_TRY(mma_one(k, s, r, ah, w4, 2 * j, acc));
        continue;
      }
      bh4 = w4;
      if (s->wlo)
        POOT_TRY(poot_kir_mma_load(k->b, s->ringlo[r], at, false, &bl4));
      else if (s->wty == POOT_KIR_F16)
        POOT_TRY(raw_split(k, w4, &bh4, &bl4));
      for (uint32_t fn = 0; fn < 2; fn++) {
        poot_kir_value bh, bl;
        POOT_TRY(b_frag(k, bh4, fn, &bh));
        if (bl4) POOT_TRY(b_frag(k, bl4, fn, &bl));
        for (uint32_t fm = 0; fm < s->fm; fm++) {
          poot_kir_value *c = &acc[ACC(s, r, fm, 2 * j + fn)];
          POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, al[fm], bh, *c, c));
          if (bl4) POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah[fm], bl, *c, c));
          POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah[fm], bh, *c, c));
        }
      }
    }
  return NULL;
}

/* raw_half for the 128-row tiles (4 A fragments a warp): every root's B
 * fragments first (and an f16 weight's split), then one A fragment row at
 * a time, so only one row's A fragments are live beside the B ones (24
 * registers fewer; ptxas sm_80 spilled the tall tile otherwise). Each
 * accumulator gets the same mma in the same order as in raw_half. */
static poot_status raw_half_rows(pc_kctx *k, const mma_form *s, uint32_t h, poot_kir_value xoff,
                                 poot_kir_value woff, poot_kir_value *acc) {
  poot_kir_value bh4[PG_MAX_ROOTS][2], bl4[PG_MAX_ROOTS][2], bat, at;
  POOT_TRY(poot__cc_bin(k, OP(ADD), s->brow, woff, &bat));
  if (h) POOT_TRY(poot__cc_bin_c(k, OP(ADD), bat, 16 * h, &bat));
  for (uint32_t r = 0; r < s->f->nr; r++)
    for (uint32_t j = 0; j < s->fn / 2; j++) {
      at = bat;
      if (j) POOT_TRY(poot__cc_bin_c(k, OP(ADD), bat, 16 * j * MMA_PITCH, &at));
      POOT_TRY(poot_kir_mma_load(k->b, s->ring[r], at, false, &bh4[r][j]));
      bl4[r][j] = 0;
      if (s->wlo)
        POOT_TRY(poot_kir_mma_load(k->b, s->ringlo[r], at, false, &bl4[r][j]));
      else if (!s->one && s->wty == POOT_KIR_F16)
        POOT_TRY(raw_split(k, bh4[r][j], &bh4[r][j], &bl4[r][j]));
    }
  for (uint32_t fm = 0; fm < s->fm; fm++) {
    poot_kir_value ah, al = 0;
    POOT_TRY(poot__cc_bin(k, OP(ADD), s->arow[fm], xoff, &at));
    if (h) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, 16 * h, &at));
    POOT_TRY(poot_kir_mma_load(k->b, s->hi[0], at, false, &ah));
    if (!s->one) POOT_TRY(poot_kir_mma_load(k->b, s->lo[0], at, false, &al));
    for (uint32_t r = 0; r < s->f->nr; r++)
      for (uint32_t j = 0; j < s->fn / 2; j++)
        for (uint32_t fn = 0; fn < 2; fn++) {
          poot_kir_value bh, bl, *c = &acc[ACC(s, r, fm, 2 * j + fn)];
          POOT_TRY(b_frag(k, bh4[r][j], fn, &bh));
          if (s->one) {
            POOT_TRY(poot_kir_mma(k->b, s->oty, ah, bh, *c, c));
            continue;
          }
          POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, al, bh, *c, c));
          if (bl4[r][j]) {
            POOT_TRY(b_frag(k, bl4[r][j], fn, &bl));
            POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah, bl, *c, c));
          }
          POOT_TRY(poot_kir_mma(k->b, POOT_KIR_BF16, ah, bh, *c, c));
        }
  }
  return NULL;
}

/* The raw path's loop over K: steps 0 … S − 2 of the weights are copied
 * before it, and x's step 0 staged. Iteration i fetches x's step i + 1
 * into registers (its global loads in flight), waits for its own copies of
 * step i, and after one barrier (every thread's copies and x's tile of
 * step i visible; every thread done with step i − 1's tiles) issues the
 * copies of step i + S − 1 into the ring tile step i − 1 used, runs step
 * i's fragments, and stores x's step i + 1 into the other x buffer — or,
 * with one x buffer, into the same one after a second barrier (every
 * thread done with step i's x). */
static poot_status raw_steps(pc_kctx *k, const mma_form *s) {
  const gemm_form *f = s->f;
  const uint32_t S = s->stages, tile = s->tm * MMA_PITCH, wtile = s->tn * MMA_PITCH;
  uint32_t steps = (uint32_t)((f->K + MMA_STEP - 1) / MMA_STEP);
  if (f->split > 1) steps = f->ks / MMA_STEP;
  poot_kir_value z, kend = 0, end, stepv, k0, kn, kk, i, o;
  POOT_TRY(poot__cc_u32(k, 0, &z));
  poot_kir_value kstart = f->split > 1 ? f->kbase : z;
  if (f->split > 1) POOT_TRY(poot__cc_bin_c(k, OP(ADD), f->kbase, f->ks, &kend));
  poot__cc_scope_push(k);
  for (uint32_t j = 0; j + 1 < S; j++) {
    poot_kir_value kj, off, xo = 0;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), kstart, j * MMA_STEP, &kj));
    POOT_TRY(poot__cc_u32(k, j * wtile, &off));
    if (s->xraw) POOT_TRY(poot__cc_u32(k, j * tile, &xo));
    POOT_TRY(raw_copy(k, s, kj, kend, off, xo));
  }
  if (!s->xraw) {
    POOT_TRY(mma_fetch(k, s, 0, f->rs[0].x, f->M, f->m0, kstart));
    POOT_TRY(mma_put(k, s, 1, 0));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot__cc_u32(k, steps * MMA_STEP, &end));
  POOT_TRY(poot__cc_u32(k, MMA_STEP, &stepv));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, stepv, &k0));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), k0, MMA_STEP, &kn));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), kn, (steps - 1) * MMA_STEP, &kn));
  if (f->split > 1) POOT_TRY(poot__cc_bin(k, OP(ADD), kn, f->kbase, &kn));
  if (!s->xraw) POOT_TRY(mma_fetch(k, s, 0, f->rs[0].x, f->M, f->m0, kn));
  POOT_TRY(poot_kir_async_wait(k->b, S - 2));
  POOT_TRY(poot_kir_barrier(k->b));
  /* step i + S − 1 into tile (i + S − 1) % S */
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), k0, 5, &i));
  POOT_TRY(poot__cc_bin(k, OP(ADD), k0, kstart, &kk));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), kk, (S - 1) * MMA_STEP, &kn));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), i, S - 1, &o));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), o, S, &o));
  poot_kir_value xo = 0;
  if (s->xraw) POOT_TRY(poot__cc_bin_c(k, OP(MUL), o, tile, &xo));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), o, wtile, &o));
  POOT_TRY(raw_copy(k, s, kn, kend, o, xo));
  poot_kir_value woff, xoff, xnext = 0;
  POOT_TRY(poot__cc_bin_c(k, OP(REM), i, S, &woff));
  if (s->xraw) POOT_TRY(poot__cc_bin_c(k, OP(MUL), woff, tile, &xoff));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), woff, wtile, &woff));
  if (s->xraw) {
    /* x's tile of step i is in the ring beside the weights' */
  } else if (s->xbuf == 2) {
    POOT_TRY(poot__cc_bin_c(k, OP(AND), i, 1, &xoff));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), xoff, tile, &xoff));
    POOT_TRY(poot__cc_bin_c(k, OP(XOR), xoff, tile, &xnext));
  } else {
    xoff = xnext = z;
  }
  poot_kir_value acc[PG_MAX_ROOTS * MMA_FRAGS_MAX];
  for (uint32_t a = 0; a < f->nr * s->fm * s->fn; a++)
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, a, &acc[a]));
  for (uint32_t h = 0; h < MMA_STEP / 16; h++)
    POOT_TRY(s->fm > 2 ? raw_half_rows(k, s, h, xoff, woff, acc)
                       : raw_half(k, s, h, xoff, woff, acc));
  for (uint32_t a = 0; a < f->nr * s->fm * s->fn; a++)
    POOT_TRY(poot_kir_priv_store(k->b, s->pacc, a, acc[a]));
  if (!s->xraw) {
    if (s->xbuf == 1) POOT_TRY(poot_kir_barrier(k->b)); /* step i's x read before it is replaced */
    POOT_TRY(mma_put(k, s, 1, xnext));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_async_wait(k->b, 0); /* no copy outlives the kernel */
}

/* The epilogue: lane element l of fragment (fm, fn) is row
 * 16·fm + g + 8·(l >> 1), column 8·fn + 2q + (l & 1) of the warp's sub-tile
 * (g = lane / 4, q = lane % 4), through gemm.c's per-output epilogue. */
static poot_status mma_epilogue(pc_kctx *k, const mma_form *s) {
  const gemm_form *f = s->f;
  poot_kir_value g, q, mb, nb;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), s->lane, 2, &g));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), s->lane, 3, &q));
  POOT_TRY(mad_c(k, s->wm, s->tm / s->wmn, 0, &mb));
  POOT_TRY(poot__cc_bin(k, OP(ADD), mb, f->m0, &mb));
  POOT_TRY(poot__cc_bin(k, OP(ADD), mb, g, &mb));
  POOT_TRY(mad_c(k, s->wn, s->tn / s->wnn, 0, &nb));
  POOT_TRY(poot__cc_bin(k, OP(ADD), nb, f->n0, &nb));
  POOT_TRY(mad_c(k, q, 2, 0, &q));
  POOT_TRY(poot__cc_bin(k, OP(ADD), nb, q, &nb));
  POOT_TRY(poot_kir_if_begin(k->b, f->valid));
  for (uint32_t fm = 0; fm < s->fm; fm++)
    for (uint32_t fn = 0; fn < s->fn; fn++) {
      poot_kir_value a4[PG_MAX_ROOTS];
      for (uint32_t r = 0; r < f->nr; r++)
        POOT_TRY(poot_kir_priv_load(k->b, s->pacc, ACC(s, r, fm, fn), &a4[r]));
      for (uint32_t l = 0; l < 4; l++) {
        poot__cc_scope_push(k);
        poot_kir_value m, n, lin, idx[PC_MAX_DIMS], acc[PG_MAX_ROOTS];
        POOT_TRY(poot__cc_bin_c(k, OP(ADD), mb, 16 * fm + 8 * (l >> 1), &m));
        POOT_TRY(poot__cc_bin_c(k, OP(ADD), nb, 8 * fn + (l & 1), &n));
        POOT_TRY(poot__cc_gemm_out_begin(k, f, m, n, &lin, idx));
        for (uint32_t r = 0; r < f->nr; r++) POOT_TRY(poot_kir_extract(k->b, a4[r], l, &acc[r]));
        POOT_TRY(poot__cc_gemm_out_end(k, f, lin, idx, acc));
        poot__cc_scope_pop(k);
      }
    }
  k->flops += 2ull * (uint64_t)f->M * (uint64_t)f->N * (uint64_t)f->K * f->nr;
  return poot_kir_end(k->b);
}

poot_status poot__cc_gemm_mma(pc_kctx *k, gemm_form *f, uint64_t nwg, uint64_t nbm,
                              const char **out_what) {
  static const char *const names[8] = {"gemm_mma",
                                       "gemm_mma split",
                                       "gemm_mma raw",
                                       "gemm_mma split raw",
                                       "gemm_mma medium",
                                       "gemm_mma split medium",
                                       "gemm_mma raw medium",
                                       "gemm_mma split raw medium"};
  static const char *const skinny_names[4] = {"gemm_mma raw skinny", "gemm_mma split raw skinny",
                                              "gemm_mma raw skinny medium",
                                              "gemm_mma split raw skinny medium"};
  mma_form s;
  memset(&s, 0, sizeof s);
  s.f = f;
  mma_choose(k->pl, &s);
  *out_what = names[(f->split > 1) + 2 * s.raw + 4 * s.one];
  if (s.tm == MMA_BIG && s.tn == MMA_BIG)
    *out_what = s.one ? "gemm_mma raw big medium" : "gemm_mma raw big";
  else if (s.tm == MMA_BIG)
    *out_what = s.one ? "gemm_mma raw tall medium" : "gemm_mma raw tall";
  else if (s.tn != GEMM_TILE)
    *out_what = s.one ? "gemm_mma raw wide medium" : "gemm_mma raw wide";
  else if (s.tm != GEMM_TILE)
    *out_what = skinny_names[(f->split > 1) + 2 * s.one];
  if (s.xraw || s.wtemp) {
    char nm[64];
    snprintf(nm, sizeof nm, "%s%s%s", *out_what, s.xraw ? " xs" : "", s.wtemp ? " ws" : "");
    *out_what = poot_arena_strdup(&k->pl->arena, nm);
    if (!*out_what) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  }
  if (s.tm != f->tm || s.tn != f->tn)
    return poot_status_make(POOT_INTERNAL, "compile: gemm_mma tile of %u x %u, grid of %u x %u",
                            s.tm, s.tn, f->tm, f->tn);
  POOT_TRY(s.raw ? raw_arrays(k, &s) : mma_arrays(k, &s));
  POOT_TRY(poot__cc_gemm_origin(k, f, nwg, nbm));
  POOT_TRY(mma_lanes(k, &s));
  POOT_TRY(poot__cc_local_prologue(k, f->g));
  POOT_TRY(s.raw ? raw_steps(k, &s) : mma_steps(k, &s));
  return mma_epilogue(k, &s);
}
