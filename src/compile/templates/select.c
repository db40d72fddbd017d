/* templates/select.c — top_k over long rows as a pipeline of sorting
 * dispatches (docs/topk.md). Elements are (key, index) pairs of u32 words
 * in shared memory, the key an unsigned image of the op's order (tk_key).
 * Stage 1: one workgroup per tile of a row loads the tile, sorts each block
 * of K pairs with a bitonic network (K: k rounded up to a power of two),
 * then halves the sorted runs pairwise to one (tk_halve_level) and writes
 * it, a run. Merge rounds: one workgroup takes up to G runs of its row and
 * halves them to one; the last round writes the op's two results, reading
 * the values again from x at the indices. The order is poot_eval's: larger
 * first, NaN the largest, equal values by the lower index; a pad (past the
 * row) sorts after everything. Runs live in two aux temps used in turn, as
 * [row][run][K] pairs of words (key, index). Short rows and the cases the
 * pipeline does not take keep the per-element rank template
 * (pointwise.c). */
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x
/* Rows up to this length use the rank template (n² compares, n threads). */
#define TK_RANK_MAX 64
/* Stage-1 tile and merge tile caps (pairs); both also fit shared memory. */
#define TK_TILE_MAX 2048u
#define TK_MERGE_MAX 4096u
#define TK_PAD 0xffffffffu
/* Threads a workgroup at most (fewer where the target has fewer). */
#define TK_WG_MAX 1024u

static uint32_t pow2_ceil(uint64_t x) {
  uint32_t p = 1;
  while (p < x && p < 0x80000000u) p *= 2;
  return p;
}
static uint32_t log2_u(uint32_t p) {
  uint32_t l = 0;
  while ((1u << l) < p) l++;
  return l;
}

bool poot__cc_topk_shape(const pc_planner *pl, const poot_node *n, pc_topk_shape *out) {
  memset(out, 0, sizeof *out);
  const poot_type *xt = poot_graph_value_type(pl->g, pl->alias[n->operands[0]]);
  const poot_shape *xs = &xt->shape;
  if (xs->rank < 1) return false;
  poot_kir_scalar cs = poot__cc_compute_scalar(xt->dtype);
  if (cs != POOT_KIR_F32 && cs != POOT_KIR_I32 && cs != POOT_KIR_U32) return false;
  int64_t len = xs->dims[xs->rank - 1], k = n->attrs.k;
  int64_t rows = poot__cc_elems(xs) / (len > 0 ? len : 1);
  if (len <= TK_RANK_MAX || k < 1 || k > len || len >= 0x7fffffff || rows < 1 || rows > 0xffffff)
    return false;
  /* Two shared arrays of 4-byte words: 8 bytes a pair. */
  uint32_t smax = TK_MERGE_MAX;
  while (smax > 1 && (uint64_t)smax * 8 > pl->t->shared_memory_bytes) smax /= 2;
  uint32_t s1max = smax < TK_TILE_MAX ? smax : TK_TILE_MAX;
  /* Many threads a workgroup hide the latency of the barrier steps. */
  uint32_t cap = pl->t->max_workgroup_size < pl->t->max_workgroup_dims[0]
                     ? pl->t->max_workgroup_size
                     : pl->t->max_workgroup_dims[0];
  if (cap > TK_WG_MAX) cap = TK_WG_MAX;
  /* A CPU device runs a workgroup's threads between barriers one SIMD
   * batch after another: the plan's size there. */
  if (pl->t->simd_cpu && cap > pl->wg) cap = pl->wg;
  out->n = (uint32_t)len;
  out->k = (uint32_t)k;
  out->K = pow2_ceil((uint64_t)k);
  out->rows = (uint32_t)rows;
  if ((uint64_t)len <= s1max) {
    out->tile = pow2_ceil((uint64_t)len);
    out->tiles = 1;
    out->wg = out->tile / 2 < 32 ? 32 : out->tile / 2;
    if (out->wg > cap) out->wg = cap;
    return true;
  }
  if (out->K > s1max || 2 * out->K > smax) return false;
  out->tile = s1max;
  out->tiles = (uint32_t)((len + s1max - 1) / s1max);
  out->group = smax / out->K;
  for (uint32_t r = out->tiles; r > 1; r = (r + out->group - 1) / out->group) out->rounds++;
  out->wg = cap;
  return true;
}

uint32_t poot__cc_group_wg(const pc_planner *pl, const pc_group *g) {
  pc_topk_shape s;
  if (g->kind == PG_CUMSUM) {
    uint32_t wg = poot__cc_scan_wg(pl, pl->v[g->out].node);
    return wg ? wg : pl->wg;
  }
  if (g->kind != PG_TOPK || !poot__cc_topk_shape(pl, pl->v[g->out].node, &s)) return pl->wg;
  return s.wg;
}

/* Runs per row entering round `round` (1-based), and that round's group. */
static uint32_t runs_in(const pc_topk_shape *s, uint32_t round) {
  uint32_t r = s->tiles;
  for (uint32_t i = 1; i < round; i++) r = (r + s->group - 1) / s->group;
  return r;
}
static uint32_t group_of(const pc_topk_shape *s, uint32_t rin) {
  uint32_t g = pow2_ceil(rin);
  return g < s->group ? g : s->group;
}

typedef struct tk {
  pc_kctx *k;
  const pc_group *g;
  pc_topk_shape s;
  poot_dtype dt;     /* the values' dtype */
  uint64_t nwg;      /* workgroups of the dispatch */
  uint64_t ce;       /* compare-exchanges a workgroup does */
  uint32_t shk, shi; /* shared: keys, indices */
  uint32_t arena;    /* binding of the temps */
  poot_kir_value lid, zero, one, row, pad;
} tk;

/* A loop of the workgroup over count positions, *p = q·wg + lid; the body
 * is guarded by p < count when wg does not divide count. Closed by
 * tk_each_end with the same count. */
static poot_status tk_each_begin(tk *t, uint32_t count, poot_kir_value *p) {
  pc_kctx *k = t->k;
  uint32_t wg = t->s.wg;
  poot_kir_value end, q, lt;
  POOT_TRY(poot__cc_u32(k, (count + wg - 1) / wg, &end));
  POOT_TRY(poot_kir_for_begin(k->b, t->zero, end, t->one, &q));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), q, wg, p));
  POOT_TRY(poot__cc_bin(k, OP(ADD), *p, t->lid, p));
  if (count % wg == 0) return NULL;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), *p, count, &lt));
  return poot_kir_if_begin(k->b, lt);
}
static poot_status tk_each_end(tk *t, uint32_t count) {
  if (count % t->s.wg != 0) POOT_TRY(poot_kir_end(t->k->b));
  poot__cc_scope_pop(t->k);
  return poot_kir_end(t->k->b);
}

/* The u32 sort key of value v (compute type): larger keys come first. f32
 * (f16 and bf16 widened): ±0 as one key, every NaN the largest key, the
 * others in the order of their values; i32 with its sign bit flipped; u32
 * as it is. A pad has key 0 and index TK_PAD: it ties at most with an
 * element of key 0 (INT32_MIN, 0u), which its lower index puts first. */
static poot_status tk_key(tk *t, poot_kir_value v, poot_kir_value *out) {
  pc_kctx *k = t->k;
  poot_kir_scalar cs = poot__cc_compute_scalar(t->dt);
  poot_kir_value b, m;
  if (cs == POOT_KIR_U32) {
    *out = v;
    return NULL;
  }
  POOT_TRY(poot__cc_bcast(k, POOT_KIR_U32, v, &b));
  if (cs == POOT_KIR_I32) return poot__cc_bin_c(k, OP(XOR), b, 0x80000000u, out);
  poot_kir_value zf, isz, isnan, sign, top, nan;
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zf));
  POOT_TRY(poot__cc_bin(k, OP(EQ), v, zf, &isz));
  POOT_TRY(poot__cc_bin(k, OP(NE), v, v, &isnan));
  POOT_TRY(poot_kir_select(k->b, isz, t->zero, b, &b));
  /* negative: all bits flipped; else the sign bit set */
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), b, 31, &sign));
  POOT_TRY(poot__cc_bin(k, OP(SUB), t->zero, sign, &m));
  POOT_TRY(poot__cc_u32(k, 0x80000000u, &top));
  POOT_TRY(poot__cc_bin(k, OP(OR), m, top, &m));
  POOT_TRY(poot__cc_bin(k, OP(XOR), b, m, &b));
  POOT_TRY(poot__cc_u32(k, 0xffffffffu, &nan));
  return poot_kir_select(k->b, isnan, nan, b, out);
}

/* Pair a sorts before pair b: a larger key, or an equal key and a lower
 * index. */
static poot_status tk_before(tk *t, poot_kir_value ka, poot_kir_value ia, poot_kir_value kb,
                             poot_kir_value ib, poot_kir_value *out) {
  pc_kctx *k = t->k;
  poot_kir_value gt, eq, lt;
  POOT_TRY(poot__cc_bin(k, OP(GT), ka, kb, &gt));
  POOT_TRY(poot__cc_bin(k, OP(EQ), ka, kb, &eq));
  POOT_TRY(poot__cc_bin(k, OP(LT), ia, ib, &lt));
  POOT_TRY(poot__cc_bin(k, OP(AND), eq, lt, &eq));
  return poot__cc_bin(k, OP(OR), gt, eq, out);
}

/* Compare-exchange of shared positions i < l: the first in order at i
 * (at l when `desc`, a bool value, holds; desc 0: never). Two distinct
 * pairs never tie; swapping two pads changes nothing. */
static poot_status tk_ce(tk *t, poot_kir_value i, poot_kir_value l, poot_kir_value desc) {
  pc_kctx *k = t->k;
  poot_kir_value ka, ia, kb, ib, sw, x;
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shk, i, 1, &ka));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shi, i, 1, &ia));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shk, l, 1, &kb));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shi, l, 1, &ib));
  POOT_TRY(tk_before(t, kb, ib, ka, ia, &sw));
  if (desc) POOT_TRY(poot__cc_bin(k, OP(NE), sw, desc, &sw));
  POOT_TRY(poot_kir_select(k->b, sw, kb, ka, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shk, i, x));
  POOT_TRY(poot_kir_select(k->b, sw, ka, kb, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shk, l, x));
  POOT_TRY(poot_kir_select(k->b, sw, ib, ia, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shi, i, x));
  POOT_TRY(poot_kir_select(k->b, sw, ia, ib, &x));
  return poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shi, l, x);
}

/* i = (q >> lj) << (lj + 1) | (q & (2^lj - 1)): the first position of
 * compare-exchange q at distance 2^lj (jm = 2^lj - 1). */
static poot_status tk_first(tk *t, poot_kir_value q, poot_kir_value lj, poot_kir_value jm,
                            poot_kir_value *out) {
  pc_kctx *k = t->k;
  poot_kir_value hi, lo;
  POOT_TRY(poot__cc_bin(k, OP(SHR), q, lj, &hi));
  POOT_TRY(poot__cc_bin(k, OP(SHL), hi, lj, &hi));
  POOT_TRY(poot__cc_bin(k, OP(SHL), hi, t->one, &hi));
  POOT_TRY(poot__cc_bin(k, OP(AND), q, jm, &lo));
  return poot__cc_bin(k, OP(OR), hi, lo, out);
}

/* The bitonic sort of every block of K pairs of a tile of `size`, each
 * first in order first: stages ls = 1 … log K, steps lj = ls - 1 … 0;
 * the blocks of stage ls alternate in direction, but those of the last. */
static poot_status tk_sort_blocks(tk *t, uint32_t size) {
  pc_kctx *k = t->k;
  uint32_t lk = log2_u(t->s.K);
  if (lk == 0) return NULL;
  poot_kir_value a, b, ls, q, lj, j, jm, dm, p, i, l, dir;
  POOT_TRY(poot__cc_u32(k, 1, &a));
  POOT_TRY(poot__cc_u32(k, lk + 1, &b));
  POOT_TRY(poot_kir_for_begin(k->b, a, b, t->one, &ls));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(LT), ls, lk, &dm));
  POOT_TRY(poot_kir_select(k->b, dm, t->one, t->zero, &dm));
  POOT_TRY(poot_kir_for_begin(k->b, t->zero, ls, t->one, &q));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin(k, OP(SUB), ls, q, &lj));
  POOT_TRY(poot__cc_bin(k, OP(SUB), lj, t->one, &lj));
  POOT_TRY(poot__cc_bin(k, OP(SHL), t->one, lj, &j));
  POOT_TRY(poot__cc_bin(k, OP(SUB), j, t->one, &jm));
  POOT_TRY(tk_each_begin(t, size / 2, &p));
  POOT_TRY(tk_first(t, p, lj, jm, &i));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i, j, &l));
  POOT_TRY(poot__cc_bin(k, OP(SHR), i, ls, &dir));
  POOT_TRY(poot__cc_bin(k, OP(AND), dir, dm, &dir));
  POOT_TRY(poot__cc_bin_c(k, OP(NE), dir, 0, &dir));
  POOT_TRY(tk_ce(t, i, l, dir));
  POOT_TRY(tk_each_end(t, size / 2));
  POOT_TRY(poot_kir_barrier(k->b));
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  t->ce += (uint64_t)lk * (lk + 1) / 2 * (size / 2);
  return poot_kir_end(k->b);
}

/* Level L of the halving: the live runs (sorted blocks of K, 2^L·K apart)
 * in pairs (A, B): A[i] keeps the first of A[i] and B[K-1-i], which leaves
 * the first K of both in A as a bitonic sequence; a bitonic merge (steps
 * lj = log K - 1 … 0) sorts it again. */
static poot_status tk_halve_level(tk *t, uint32_t size, uint32_t L) {
  pc_kctx *k = t->k;
  uint32_t K = t->s.K, lk = log2_u(K), merges = size / K >> (L + 1);
  poot_kir_value p, m, i, a, b, ka, ia, kb, ib, w, x;
  POOT_TRY(tk_each_begin(t, merges * K, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p, lk, &m));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), p, K - 1, &i));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), m, L + lk + 1, &a));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), a, (K << L) + K - 1, &b));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a, i, &a));
  POOT_TRY(poot__cc_bin(k, OP(SUB), b, i, &b));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shk, a, 1, &ka));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shi, a, 1, &ia));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shk, b, 1, &kb));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shi, b, 1, &ib));
  POOT_TRY(tk_before(t, kb, ib, ka, ia, &w));
  POOT_TRY(poot_kir_select(k->b, w, kb, ka, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shk, a, x));
  POOT_TRY(poot_kir_select(k->b, w, ib, ia, &x));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shi, a, x));
  POOT_TRY(tk_each_end(t, merges * K));
  POOT_TRY(poot_kir_barrier(k->b));
  t->ce += (uint64_t)merges * K;
  if (lk == 0) return NULL;
  poot_kir_value end, q, lj, j, jm, r, c, base, l;
  POOT_TRY(poot__cc_u32(k, lk, &end));
  POOT_TRY(poot_kir_for_begin(k->b, t->zero, end, t->one, &q));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), end, 1, &lj));
  POOT_TRY(poot__cc_bin(k, OP(SUB), lj, q, &lj));
  POOT_TRY(poot__cc_bin(k, OP(SHL), t->one, lj, &j));
  POOT_TRY(poot__cc_bin(k, OP(SUB), j, t->one, &jm));
  POOT_TRY(tk_each_begin(t, merges * K / 2, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p, lk - 1, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), p, K / 2 - 1, &c));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), r, L + lk + 1, &base));
  POOT_TRY(tk_first(t, c, lj, jm, &i));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i, base, &i));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i, j, &l));
  POOT_TRY(tk_ce(t, i, l, 0));
  POOT_TRY(tk_each_end(t, merges * K / 2));
  POOT_TRY(poot_kir_barrier(k->b));
  poot__cc_scope_pop(k);
  t->ce += (uint64_t)lk * merges * K / 2;
  return poot_kir_end(k->b);
}

/* From size / K sorted runs to one, at positions [0, K). */
static poot_status tk_halve(tk *t, uint32_t size) {
  for (uint32_t L = 0; (t->s.K << L) < size; L++) POOT_TRY(tk_halve_level(t, size, L));
  return NULL;
}

/* Loads element e of this workgroup's row (a pad past the row) into shared
 * position p. */
static poot_status tk_load_x(tk *t, poot_value x, const poot_shape *xs, poot_kir_value e,
                             poot_kir_value p) {
  pc_kctx *k = t->k;
  uint32_t r = xs->rank;
  poot_kir_value in, ec, idx[PC_MAX_DIMS], v, key, vi;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), e, t->s.n, &in));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), e, t->s.n - 1, &ec));
  if (r > 1) {
    poot_shape rs = *xs;
    rs.rank = r - 1;
    POOT_TRY(poot__cc_delinearize(k, t->row, &rs, idx));
  }
  idx[r - 1] = ec;
  POOT_TRY(poot__cc_emit(k, x, idx, &v));
  POOT_TRY(tk_key(t, v, &key));
  POOT_TRY(poot_kir_select(k->b, in, key, t->zero, &key));
  POOT_TRY(poot_kir_select(k->b, in, e, t->pad, &vi));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shk, p, key));
  return poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shi, p, vi);
}

/* Word `w` of pair q of run `run` (u32 values) of the row, in temp ti. */
static poot_status tk_word(tk *t, uint32_t ti, bool read, uint32_t nruns, poot_kir_value run,
                           poot_kir_value q, uint32_t w, poot_kir_value *out) {
  pc_kctx *k = t->k;
  poot_kir_value base, x;
  POOT_TRY(poot__cc_temp_base(k, ti, read, &base));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t->row, nruns, &x));
  POOT_TRY(poot__cc_bin(k, OP(ADD), x, run, &x));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), x, t->s.K, &x));
  POOT_TRY(poot__cc_bin(k, OP(ADD), x, q, &x));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), x, 2, &x));
  if (w) POOT_TRY(poot__cc_bin_c(k, OP(ADD), x, w, &x));
  return poot__cc_bin(k, OP(ADD), x, base, out);
}

/* The op's results from the first k pairs: the indices, and the values
 * read again from x at them (the keys do not keep ±0 and NaN bits). */
static poot_status tk_write_results(tk *t, poot_value x, const poot_shape *xs, poot_kir_value p,
                                    poot_kir_value ix) {
  pc_kctx *k = t->k;
  uint32_t r = xs->rank;
  poot_kir_value lin, idx[PC_MAX_DIMS], v, ii;
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), ix, t->s.n - 1, &ix));
  if (r > 1) {
    poot_shape rs = *xs;
    rs.rank = r - 1;
    POOT_TRY(poot__cc_delinearize(k, t->row, &rs, idx));
  }
  idx[r - 1] = ix;
  POOT_TRY(poot__cc_emit(k, x, idx, &v));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t->row, t->s.k, &lin));
  POOT_TRY(poot__cc_bin(k, OP(ADD), lin, p, &lin));
  POOT_TRY(poot__cc_store_value(k, t->g->out, lin, v));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_I32, 1), ix, &ii));
  return poot__cc_store_value(k, t->g->out2, lin, ii);
}

/* The first k pairs of the sorted tile as the op's results (last stage), or
 * the first K as run `run` of nruns into the group's aux temp. */
static poot_status tk_write(tk *t, poot_value x, const poot_shape *xs, uint32_t nruns,
                            poot_kir_value run) {
  pc_kctx *k = t->k;
  const pc_group *g = t->g;
  bool last = g->aux_temp == UINT32_MAX;
  uint32_t cnt = last ? t->s.k : t->s.K;
  poot_kir_value p, key, ix, a;
  if (!last) POOT_TRY(poot__cc_binding_of(k, 0, &t->arena));
  POOT_TRY(tk_each_begin(t, cnt, &p));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shi, p, 1, &ix));
  if (last) {
    POOT_TRY(tk_write_results(t, x, xs, p, ix));
  } else {
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, t->shk, p, 1, &key));
    POOT_TRY(tk_word(t, g->aux_temp, false, nruns, run, p, 0, &a));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, t->arena, a, key));
    POOT_TRY(tk_word(t, g->aux_temp, false, nruns, run, p, 1, &a));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, t->arena, a, ix));
  }
  return tk_each_end(t, cnt);
}

/* Merge round: up to G runs of the row (run w·G + r at block r), pads for
 * runs past the row's. */
static poot_status tk_load_runs(tk *t, uint32_t rin, uint32_t G, poot_kir_value w) {
  pc_kctx *k = t->k;
  uint32_t lk = log2_u(t->s.K), size = G * t->s.K;
  poot_kir_value p, r, q, gr, in, grc, a, key, ix;
  POOT_TRY(poot__cc_binding_of(k, 0, &t->arena));
  POOT_TRY(tk_each_begin(t, size, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p, lk, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), p, t->s.K - 1, &q));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, G, &gr));
  POOT_TRY(poot__cc_bin(k, OP(ADD), gr, r, &gr));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), gr, rin, &in));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), gr, rin - 1, &grc));
  POOT_TRY(tk_word(t, t->g->aux_in, true, rin, grc, q, 0, &a));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, t->arena, a, 1, &key));
  POOT_TRY(tk_word(t, t->g->aux_in, true, rin, grc, q, 1, &a));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, t->arena, a, 1, &ix));
  POOT_TRY(poot_kir_select(k->b, in, key, t->zero, &key));
  POOT_TRY(poot_kir_select(k->b, in, ix, t->pad, &ix));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shk, p, key));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, t->shi, p, ix));
  return tk_each_end(t, size);
}

/* This workgroup's (row, part) over parts workgroups a row; the body
 * runs under valid (uniform: the grid may hold extra workgroups). */
static poot_status tk_setup(tk *t, uint32_t parts, uint32_t size, uint32_t grid[3],
                            poot_kir_value *part) {
  pc_kctx *k = t->k;
  char nm[32];
  uint64_t nwg = (uint64_t)t->s.rows * parts;
  t->nwg = nwg;
  poot__cc_grid_for(nwg, grid);
  POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "tkk", nm, sizeof nm), POOT_KIR_U32, size,
                               &t->shk));
  POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "tki", nm, sizeof nm), POOT_KIR_U32, size,
                               &t->shi));
  poot_kir_value w, valid;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &t->lid));
  POOT_TRY(poot__cc_u32(k, 0, &t->zero));
  POOT_TRY(poot__cc_u32(k, 1, &t->one));
  POOT_TRY(poot__cc_u32(k, TK_PAD, &t->pad));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), w, (uint32_t)nwg, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), w, parts, &t->row));
  return poot__cc_bin_c(k, OP(REM), w, parts, part);
}

/* Stage 1: a tile of the row, its blocks of K sorted, then halved to one. */
static poot_status tk_tiles(tk *t, poot_value x, const poot_shape *xs, uint32_t grid[3]) {
  pc_kctx *k = t->k;
  uint32_t S = t->s.tile;
  poot_kir_value tile, p, e;
  POOT_TRY(tk_setup(t, t->s.tiles, S, grid, &tile));
  POOT_TRY(tk_each_begin(t, S, &p));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), tile, S, &e));
  POOT_TRY(poot__cc_bin(k, OP(ADD), e, p, &e));
  POOT_TRY(tk_load_x(t, x, xs, e, p));
  POOT_TRY(tk_each_end(t, S));
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(tk_sort_blocks(t, S));
  POOT_TRY(tk_halve(t, S));
  POOT_TRY(tk_write(t, x, xs, t->s.tiles, tile));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* A merge round: G runs halved to one. */
static poot_status tk_merge(tk *t, poot_value x, const poot_shape *xs, uint32_t grid[3]) {
  pc_kctx *k = t->k;
  uint32_t rin = runs_in(&t->s, t->g->step), G = group_of(&t->s, rin);
  uint32_t parts = (rin + G - 1) / G;
  poot_kir_value w;
  POOT_TRY(tk_setup(t, parts, G * t->s.K, grid, &w));
  POOT_TRY(tk_load_runs(t, rin, G, w));
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(tk_halve(t, G * t->s.K));
  POOT_TRY(tk_write(t, x, xs, parts, w));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_topk(pc_kctx *k, const pc_group *g, uint32_t grid[3], const char **mode) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  tk t;
  memset(&t, 0, sizeof t);
  if (!poot__cc_topk_shape(pl, n, &t.s)) return poot__cc_tpl_topk_rank(k, g, grid);
  poot_value x = pl->alias[n->operands[0]];
  const poot_type *xt = poot__cc_type(pl, x);
  t.k = k;
  t.g = g;
  t.dt = xt->dtype;
  poot_status st;
  if (g->step == 0) {
    *mode = t.s.tiles == 1 ? "tile" : "tiles";
    st = tk_tiles(&t, x, &xt->shape, grid);
  } else {
    *mode = g->aux_temp == UINT32_MAX ? "merge last" : "merge";
    st = tk_merge(&t, x, &xt->shape, grid);
  }
  /* about ten operations a compare-exchange */
  k->flops += t.ce * 10 * t.nwg;
  return st;
}

/* The pipeline's groups for top_k node n (values v): stage 1, then the
 * merge rounds, the runs in two aux temps used in turn. */
poot_status poot__cc_group_topk(pc_planner *pl, const poot_node *n, poot_value v) {
  pc_topk_shape s;
  bool pipe = poot__cc_topk_shape(pl, n, &s);
  uint32_t nt = pipe && s.tiles > 1 ? (s.rounds > 1 ? 2 : 1) : 0, tbase = (uint32_t)pl->temps.len;
  for (uint32_t q = 0; q < nt; q++) {
    uint64_t runs = q == 0 ? s.tiles : runs_in(&s, 2);
    uint64_t words = (uint64_t)s.rows * runs * s.K * 2;
    poot_plan_temp tt;
    memset(&tt, 0, sizeof tt);
    tt.value = POOT_VALUE_NONE;
    tt.type = poot_type_make(POOT_DTYPE_U32, 1, (int64_t[]){(int64_t)words});
    tt.size = words * 4;
    tt.first = UINT32_MAX;
    POOT_TRY(poot_vec_push(&pl->temps, &tt));
  }
  for (uint32_t step = 0; step <= (nt ? s.rounds : 0); step++) {
    pc_group gg;
    memset(&gg, 0, sizeof gg);
    bool last = !nt || step == s.rounds;
    gg.kind = PG_TOPK;
    gg.out = v;
    gg.dest = last ? v : POOT_VALUE_NONE;
    gg.dest_buffer = UINT32_MAX;
    gg.out2 = last ? n->results[1] : POOT_VALUE_NONE;
    gg.split = 1;
    gg.step = step;
    gg.aux_temp = last ? UINT32_MAX : tbase + step % 2;
    gg.aux_in = step ? tbase + (step - 1) % 2 : UINT32_MAX;
    POOT_TRY(poot_vec_push(&pl->groups, &gg));
  }
  return NULL;
}
