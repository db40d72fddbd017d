/* templates/attention_tile.c — "poot.attention" in prefill, tiled: one
 * workgroup takes tq query positions times the grp = Hq / Hkv query heads
 * that share one KV head (rows = tq · grp (query, head) rows) and sweeps the
 * visible K/V positions in blocks of bc, each block staged in shared memory
 * once (converted to f32 as it is loaded) and read there by every row. The
 * grid is (query tiles, KV heads). Each row has `lanes` threads: a thread
 * computes ns of the block's scores for its row (each a whole q·k in index
 * order, times the f32 scale, masked to -inf: as the decomposition), the
 * scores go to shared memory, and then every thread of the row runs the
 * same online softmax over them (the row's m and l, identical in its lanes)
 * and accumulates the weighted V sum for its nd dims. Blocks past the
 * tile's last visible position (a causal mask, recognized as the other
 * form recognizes it) are never read.
 *
 * Numerics (tier 2, docs/compiler.md): a score is the decomposition's
 * index-order sum (fma: one rounding a term, D·u·Σ|q·k| at most); a
 * position's weight passes through its own exp and one rescaling exp per
 * later block (⌈C/bc⌉), fewer than the per-row form's ⌈C/16⌉ + 3; the sums
 * of the weights and of the weighted V rows are serial over the positions
 * (λ·C·u), the per-row form's bound with C in place of √(2C). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x
/* Query positions below which the per-row form is kept: a tile of fewer
 * rows shares its K/V loads among fewer rows than the per-row form's split
 * spreads over the device, and decode (T = 1) is the per-row form's. */
#define ATT_TILE_MIN_T 16
/* Registers a thread may hold for its dims of the weighted V sum. */
#define ATT_TILE_MAX_ND 32

/* Shared words of a tile: Q rows, K block (pitch D + 1, so that the lanes
 * reading different positions at one dim hit different banks), V block,
 * scores (pitch bc + 1). */
static uint64_t tile_words(uint32_t rows, uint32_t bc, uint32_t D) {
  return (uint64_t)rows * D + (uint64_t)bc * (D + 1) + (uint64_t)bc * D + (uint64_t)rows * (bc + 1);
}

bool poot__cc_attn_tile_shape(const pc_planner *pl, const poot_node *n, pc_attn_tile *out) {
  memset(out, 0, sizeof *out);
  const poot_kir_target *t = pl->t;
  /* CPU SIMD lanes (lavapipe) keep the simpler form, as the GEMM does. */
  if (t->simd_cpu || pl->opt->no_attention_tile) return false;
  const poot_shape *qs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  const poot_shape *ks = &poot__cc_type(pl, pl->alias[n->operands[1]])->shape;
  int64_t T = qs->dims[0], grp = qs->dims[1] / ks->dims[1], D = qs->dims[2];
  if (T < ATT_TILE_MIN_T ||
      poot__cc_attn_causal_bound(pl, pl->alias[n->operands[3]]) == POOT_VALUE_NONE)
    return false;
  uint32_t wg = pl->wg,
           budget = t->shared_memory_bytes < 48 * 1024 ? t->shared_memory_bytes : 48 * 1024;
  static const uint32_t bcs[] = {32, 16}, tqs[] = {16, 8, 4};
  for (uint32_t bi = 0; bi < 2; bi++)
    for (uint32_t ti = 0; ti < 3; ti++) {
      int64_t rows = tqs[ti] * grp;
      if (rows > wg || tqs[ti] > T) continue;
      uint32_t lanes = wg / (uint32_t)rows, nd = (uint32_t)((D + lanes - 1) / lanes);
      if (nd > ATT_TILE_MAX_ND || 4 * tile_words((uint32_t)rows, bcs[bi], (uint32_t)D) > budget)
        continue;
      out->tq = tqs[ti];
      out->bc = bcs[bi];
      out->rows = (uint32_t)rows;
      out->lanes = lanes;
      out->nd = nd;
      out->ns = (bcs[bi] + lanes - 1) / lanes;
      return true;
    }
  return false;
}

/* The kernel's state: operands, shape, shared and private arrays, and this
 * thread's row, lane, query position, head and dims. */
typedef struct att_tile {
  const poot_node *n;
  poot_value q, kk, v, mask;
  pc_attn_tile s;
  uint32_t T, hq, hkv, grp, D, wg, cap;
  uint32_t sq, sk, sv, ss; /* shared: Q, K, V, scores */
  uint32_t pm, pl_, pacc, psc;
  poot_kir_value valid, t0, hk, lid, row, lane, act, tt, ttc, h, ninf, zero, one, scale;
  poot_kir_value dj[ATT_TILE_MAX_ND], inj[ATT_TILE_MAX_ND];
} att_tile;

static poot_status tile_arrays(pc_kctx *k, att_tile *a) {
  char nm[32];
  uint32_t D = a->D, bc = a->s.bc, rows = a->s.rows;
  poot_kir_type f1 = poot_kir_type_make(POOT_KIR_F32, 1);
  POOT_TRY(poot__cc_shared(k, "tq", POOT_KIR_F32, rows * D, &a->sq));
  POOT_TRY(poot__cc_shared(k, "tk", POOT_KIR_F32, bc * (D + 1), &a->sk));
  POOT_TRY(poot__cc_shared(k, "tv", POOT_KIR_F32, bc * D, &a->sv));
  POOT_TRY(poot__cc_shared(k, "ts", POOT_KIR_F32, rows * (bc + 1), &a->ss));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "m", nm, sizeof nm), f1, 1, &a->pm));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "l", nm, sizeof nm), f1, 1, &a->pl_));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "o", nm, sizeof nm), f1, a->s.nd, &a->pacc));
  return poot_kir_add_private(k->b, poot__cc_name(k, "sc", nm, sizeof nm), f1, a->s.ns, &a->psc);
}

/* The workgroup's (tile, kv head), the thread's (row, lane), its query
 * position (clamped into [0, T) for reads), head and dims; state reset. */
static poot_status tile_ids(pc_kctx *k, att_tile *a, uint64_t nwg) {
  poot_kir_value w, wc, tile, qi, hl, lim, tm1;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), w, (uint32_t)nwg, &a->valid));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(nwg - 1), &wc));
  POOT_TRY(poot__cc_bin(k, OP(MIN), w, wc, &wc));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), wc, a->hkv, &tile));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), wc, a->hkv, &a->hk));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), tile, a->s.tq, &a->t0));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &a->lid));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), a->lid, a->s.lanes, &a->row));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), a->lid, a->s.lanes, &a->lane));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), a->row, a->s.rows, &a->act));
  POOT_TRY(poot__cc_u32(k, a->s.rows - 1, &lim));
  POOT_TRY(poot__cc_bin(k, OP(MIN), a->row, lim, &a->row));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), a->row, a->grp, &qi));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), a->row, a->grp, &hl));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a->t0, qi, &a->tt));
  POOT_TRY(poot__cc_u32(k, a->T - 1, &tm1));
  POOT_TRY(poot__cc_bin(k, OP(MIN), a->tt, tm1, &a->ttc));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), a->hk, a->grp, &a->h));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a->h, hl, &a->h));
  POOT_TRY(poot_kir_const_f32(k->b, -INFINITY, &a->ninf));
  POOT_TRY(poot_kir_const_f32(k->b, 0.0f, &a->zero));
  POOT_TRY(poot_kir_const_f32(k->b, 1.0f, &a->one));
  POOT_TRY(poot_kir_const_f32(k->b, (float)poot__cc_attention_scale(a->n), &a->scale));
  POOT_TRY(poot_kir_priv_store(k->b, a->pm, 0, a->ninf));
  POOT_TRY(poot_kir_priv_store(k->b, a->pl_, 0, a->zero));
  for (uint32_t j = 0; j < a->s.nd; j++) {
    poot_kir_value dm;
    POOT_TRY(poot_kir_priv_store(k->b, a->pacc, j, a->zero));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), a->lane, j * a->s.lanes, &a->dj[j]));
    a->inj[j] = 0;
    if ((j + 1) * a->s.lanes > a->D) {
      POOT_TRY(poot__cc_bin_c(k, OP(LT), a->dj[j], a->D, &a->inj[j]));
      POOT_TRY(poot__cc_u32(k, a->D - 1, &dm));
      POOT_TRY(poot__cc_bin(k, OP(MIN), a->dj[j], dm, &a->dj[j]));
    }
  }
  return NULL;
}

/* The tile's q rows into shared memory (each element of q evaluated once). */
static poot_status tile_stage_q(pc_kctx *k, att_tile *a) {
  poot_kir_value end, step, i, r, d, qi, hl, t, h, tm1, x;
  POOT_TRY(poot__cc_u32(k, a->s.rows * a->D, &end));
  POOT_TRY(poot__cc_u32(k, a->wg, &step));
  POOT_TRY(poot_kir_for_begin(k->b, a->lid, end, step, &i));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), i, a->D, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), i, a->D, &d));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), r, a->grp, &qi));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), r, a->grp, &hl));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a->t0, qi, &t));
  POOT_TRY(poot__cc_u32(k, a->T - 1, &tm1));
  POOT_TRY(poot__cc_bin(k, OP(MIN), t, tm1, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), a->hk, a->grp, &h));
  POOT_TRY(poot__cc_bin(k, OP(ADD), h, hl, &h));
  poot_kir_value idx[3] = {t, h, d};
  POOT_TRY(poot__cc_emit(k, a->q, idx, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, a->sq, i, x));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The tile's visible end: the largest of its rows' last visible position
 * + 1 under the causal mask, within [0, cap] (workgroup-uniform). */
static poot_status tile_vend(pc_kctx *k, att_tile *a, poot_kir_value *out) {
  poot_value bound = poot__cc_attn_causal_bound(k->pl, a->mask);
  poot_kir_value z, one_i, zero_i, tm1, best;
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot_kir_const_i32(k->b, 1, &one_i));
  POOT_TRY(poot_kir_const_i32(k->b, 0, &zero_i));
  POOT_TRY(poot__cc_u32(k, a->T - 1, &tm1));
  best = zero_i;
  for (uint32_t qi = 0; qi < a->s.tq; qi++) {
    poot_kir_value t, x;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), a->t0, qi, &t));
    POOT_TRY(poot__cc_bin(k, OP(MIN), t, tm1, &t));
    poot_kir_value bi[2] = {t, z};
    POOT_TRY(poot__cc_emit(k, bound, bi, &x));
    POOT_TRY(poot__cc_bin(k, OP(ADD), x, one_i, &x));
    POOT_TRY(poot__cc_bin(k, OP(MAX), best, x, &best));
  }
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_U32, 1), best, &best));
  return poot__cc_bin_c(k, OP(MIN), best, a->cap, out);
}

/* Block [c0, c0 + bc) of K and V into shared memory (positions at or past
 * vend read vend - 1: their scores are masked). */
static poot_status tile_stage_kv(pc_kctx *k, att_tile *a, poot_kir_value c0, poot_kir_value vm1) {
  poot_kir_value end, step, i, j, d, c, x, y, ik, one;
  POOT_TRY(poot__cc_u32(k, a->s.bc * a->D, &end));
  POOT_TRY(poot__cc_u32(k, a->wg, &step));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot_kir_for_begin(k->b, a->lid, end, step, &i));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), i, a->D, &j));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), i, a->D, &d));
  POOT_TRY(poot__cc_bin(k, OP(ADD), c0, j, &c));
  POOT_TRY(poot__cc_bin(k, OP(MIN), c, vm1, &c));
  poot_kir_value idx[3] = {c, a->hk, d};
  POOT_TRY(poot__cc_emit(k, a->kk, idx, &x));
  POOT_TRY(poot__cc_emit(k, a->v, idx, &y));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i, j, &ik)); /* j·(D + 1) + d */
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, a->sk, ik, x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, a->sv, i, y));
  poot__cc_scope_pop(k);
  (void)one;
  return poot_kir_end(k->b);
}

/* This thread's ns scores of the block for its row (positions lane +
 * u·lanes), scaled and masked, into the shared score rows. */
static poot_status tile_scores(pc_kctx *k, att_tile *a, poot_kir_value c0, poot_kir_value vend) {
  uint32_t ns = a->s.ns, bc = a->s.bc, lanes = a->s.lanes;
  poot_kir_value jj[16], kb[16], zu, Dv, onev, d, qb, qd;
  POOT_TRY(poot_kir_if_begin(k->b, a->act));
  poot__cc_scope_push(k);
  for (uint32_t u = 0; u < ns; u++) {
    poot_kir_value jc, lim;
    POOT_TRY(poot_kir_priv_store(k->b, a->psc, u, a->zero));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), a->lane, u * lanes, &jj[u]));
    POOT_TRY(poot__cc_u32(k, bc - 1, &lim));
    POOT_TRY(poot__cc_bin(k, OP(MIN), jj[u], lim, &jc));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), jc, a->D + 1, &kb[u]));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), a->row, a->D, &qb));
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  POOT_TRY(poot__cc_u32(k, a->D, &Dv));
  POOT_TRY(poot__cc_u32(k, 1, &onev));
  POOT_TRY(poot_kir_for_begin(k->b, zu, Dv, onev, &d));
  {
    poot_kir_value qix;
    POOT_TRY(poot__cc_bin(k, OP(ADD), qb, d, &qix));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, a->sq, qix, 1, &qd));
    for (uint32_t u = 0; u < ns; u++) {
      poot_kir_value kix, kd, s;
      POOT_TRY(poot__cc_bin(k, OP(ADD), kb[u], d, &kix));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, a->sk, kix, 1, &kd));
      POOT_TRY(poot_kir_priv_load(k->b, a->psc, u, &s));
      POOT_TRY(poot_kir_fma(k->b, qd, kd, s, &s));
      POOT_TRY(poot_kir_priv_store(k->b, a->psc, u, s));
    }
  }
  POOT_TRY(poot_kir_end(k->b));
  for (uint32_t u = 0; u < ns; u++) {
    poot_kir_value s, c, inr, cm, mk, six, vm1;
    POOT_TRY(poot_kir_priv_load(k->b, a->psc, u, &s));
    POOT_TRY(poot__cc_bin(k, OP(MUL), s, a->scale, &s));
    POOT_TRY(poot__cc_bin(k, OP(ADD), c0, jj[u], &c));
    POOT_TRY(poot__cc_bin(k, OP(LT), c, vend, &inr));
    POOT_TRY(poot__cc_bin(k, OP(SUB), vend, onev, &vm1));
    POOT_TRY(poot__cc_bin(k, OP(MIN), c, vm1, &cm));
    poot_kir_value midx[2] = {a->ttc, cm};
    POOT_TRY(poot__cc_emit(k, a->mask, midx, &mk));
    POOT_TRY(poot__cc_bin(k, OP(AND), mk, inr, &mk));
    POOT_TRY(poot_kir_select(k->b, mk, s, a->ninf, &s));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), a->row, bc + 1, &six));
    POOT_TRY(poot__cc_bin(k, OP(ADD), six, jj[u], &six));
    bool tail = (u + 1) * lanes > bc;
    poot_kir_value inb = 0;
    if (tail) {
      POOT_TRY(poot__cc_bin_c(k, OP(LT), jj[u], bc, &inb));
      POOT_TRY(poot_kir_if_begin(k->b, inb));
    }
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, a->ss, six, s));
    if (tail) POOT_TRY(poot_kir_end(k->b));
  }
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The row's online softmax over the block's scores (one rescale a block)
 * and this thread's dims of the weighted V sum. */
static poot_status tile_update(pc_kctx *k, att_tile *a) {
  uint32_t bc = a->s.bc;
  poot_kir_value zu, bcv, onev, j, sb, m, mb, isn, e, cr, l;
  POOT_TRY(poot_kir_if_begin(k->b, a->act));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  POOT_TRY(poot__cc_u32(k, bc, &bcv));
  POOT_TRY(poot__cc_u32(k, 1, &onev));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), a->row, bc + 1, &sb));
  POOT_TRY(poot_kir_priv_load(k->b, a->pm, 0, &m));
  POOT_TRY(poot_kir_for_begin(k->b, zu, bcv, onev, &j));
  {
    poot_kir_value ix, x, cur;
    POOT_TRY(poot__cc_bin(k, OP(ADD), sb, j, &ix));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, a->ss, ix, 1, &x));
    POOT_TRY(poot_kir_priv_load(k->b, a->pm, 0, &cur));
    POOT_TRY(poot__cc_bin(k, OP(MAX), cur, x, &cur));
    POOT_TRY(poot_kir_priv_store(k->b, a->pm, 0, cur));
  }
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_priv_load(k->b, a->pm, 0, &mb));
  POOT_TRY(poot__cc_bin(k, OP(EQ), mb, a->ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, mb, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, a->one, e, &cr));
  POOT_TRY(poot_kir_priv_load(k->b, a->pl_, 0, &l));
  POOT_TRY(poot__cc_bin(k, OP(MUL), l, cr, &l));
  POOT_TRY(poot_kir_priv_store(k->b, a->pl_, 0, l));
  for (uint32_t q = 0; q < a->s.nd; q++) {
    poot_kir_value o;
    POOT_TRY(poot_kir_priv_load(k->b, a->pacc, q, &o));
    POOT_TRY(poot__cc_bin(k, OP(MUL), o, cr, &o));
    POOT_TRY(poot_kir_priv_store(k->b, a->pacc, q, o));
  }
  POOT_TRY(poot_kir_for_begin(k->b, zu, bcv, onev, &j));
  {
    poot_kir_value ix, x, p, vb;
    POOT_TRY(poot__cc_bin(k, OP(ADD), sb, j, &ix));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, a->ss, ix, 1, &x));
    POOT_TRY(poot__cc_bin(k, OP(SUB), x, mb, &p));
    POOT_TRY(poot_kir_unary(k->b, OP(EXP), p, &p));
    POOT_TRY(poot_kir_select(k->b, isn, a->zero, p, &p));
    POOT_TRY(poot_kir_priv_load(k->b, a->pl_, 0, &l));
    POOT_TRY(poot__cc_bin(k, OP(ADD), l, p, &l));
    POOT_TRY(poot_kir_priv_store(k->b, a->pl_, 0, l));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), j, a->D, &vb));
    for (uint32_t q = 0; q < a->s.nd; q++) {
      poot_kir_value vix, vv, o;
      POOT_TRY(poot__cc_bin(k, OP(ADD), vb, a->dj[q], &vix));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, a->sv, vix, 1, &vv));
      POOT_TRY(poot_kir_priv_load(k->b, a->pacc, q, &o));
      POOT_TRY(poot_kir_fma(k->b, p, vv, o, &o));
      POOT_TRY(poot_kir_priv_store(k->b, a->pacc, q, o));
    }
  }
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The sweep over the blocks of [0, vend): stage, score, update; barriers
 * between the phases (the block loop is workgroup-uniform). */
static poot_status tile_sweep(pc_kctx *k, att_tile *a) {
  poot_kir_value vend, zu, stepv, c0, one, vm1;
  POOT_TRY(tile_vend(k, a, &vend));
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot__cc_u32(k, a->s.bc, &stepv));
  POOT_TRY(poot__cc_bin(k, OP(SUB), vend, one, &vm1));
  POOT_TRY(poot_kir_for_begin(k->b, zu, vend, stepv, &c0));
  poot__cc_scope_push(k);
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(tile_stage_kv(k, a, c0, vm1));
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(tile_scores(k, a, c0, vend));
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(tile_update(k, a));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* Rows of the tile inside [0, T) write O / L at their dims. */
static poot_status tile_write(pc_kctx *k, const pc_group *g, att_tile *a) {
  poot_kir_value cond, intt, L;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), a->tt, a->T, &intt));
  POOT_TRY(poot__cc_bin(k, OP(AND), a->act, intt, &cond));
  POOT_TRY(poot__cc_bin(k, OP(AND), cond, a->valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  poot__cc_scope_push(k);
  POOT_TRY(poot_kir_priv_load(k->b, a->pl_, 0, &L));
  for (uint32_t q = 0; q < a->s.nd; q++) {
    poot_kir_value o, r, lin, oidx[3] = {a->tt, a->h, a->dj[q]};
    POOT_TRY(poot_kir_priv_load(k->b, a->pacc, q, &o));
    POOT_TRY(poot__cc_bin(k, OP(DIV), o, L, &r));
    POOT_TRY(poot__cc_linearize(k, oidx, &poot__cc_type(k->pl, g->out)->shape, &lin));
    if (a->inj[q]) POOT_TRY(poot_kir_if_begin(k->b, a->inj[q]));
    POOT_TRY(poot__cc_store_value(k, g->dest, lin, r));
    if (a->inj[q]) POOT_TRY(poot_kir_end(k->b));
  }
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_attn_tile(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  att_tile a;
  memset(&a, 0, sizeof a);
  a.n = pl->v[g->out].node;
  if (!poot__cc_attn_tile_shape(pl, a.n, &a.s) || a.s.ns > 16)
    return poot_status_make(POOT_INTERNAL,
                            "compile: attention tile planned for a shape it does not take");
  a.q = pl->alias[a.n->operands[0]];
  a.kk = pl->alias[a.n->operands[1]];
  a.v = pl->alias[a.n->operands[2]];
  a.mask = pl->alias[a.n->operands[3]];
  const poot_shape *qs = &poot__cc_type(pl, a.q)->shape, *ks = &poot__cc_type(pl, a.kk)->shape;
  a.T = (uint32_t)qs->dims[0];
  a.hq = (uint32_t)qs->dims[1];
  a.D = (uint32_t)qs->dims[2];
  a.hkv = (uint32_t)ks->dims[1];
  a.cap = (uint32_t)ks->dims[0];
  a.grp = a.hq / a.hkv;
  a.wg = pl->wg;
  uint64_t ntiles = (a.T + a.s.tq - 1) / a.s.tq, nwg = ntiles * a.hkv;
  poot__cc_grid_for(nwg, grid);
  POOT_TRY(poot__cc_attn_kv_checks(k, a.kk, a.v));
  POOT_TRY(tile_arrays(k, &a));
  POOT_TRY(tile_ids(k, &a, nwg));
  POOT_TRY(tile_stage_q(k, &a));
  POOT_TRY(tile_sweep(k, &a));
  k->flops += (uint64_t)a.T * a.hq * (uint64_t)a.cap * a.D * 4;
  return tile_write(k, g, &a);
}
