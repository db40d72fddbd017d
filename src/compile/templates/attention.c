/* templates/attention.c — "poot.attention" lowered by name: one workgroup
 * per (query position, query head) sweeps the whole [cap] once with an
 * online softmax (running max, running sum and the weighted sum of V rows
 * per thread), then the threads are combined: a subgroup reduction and a
 * small shared table where the target has subgroups, a shared-memory tree
 * otherwise. Grouped-query heads read kv head h / (Hq / Hkv). Decode
 * (T = 1) and prefill (T > 1, the causal mask is the graph's) use the same
 * template. Scores are computed as the decomposition does (q·k in index
 * order, times the f32 scale, masked to -inf); the softmax is reassociated
 * (tier 2). K and V are f32, f16 or q8_0 (the KV cache's types), converted
 * or decoded (poot__cc_load_packed) as they are loaded; f16 rows of a state
 * are read 8 halves per lane per 16-byte load where the subgroups allow it
 * (the wide form, att_wide_setup; q8_0 takes the subgroup form). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x
#define ATT_UNROLL 4
/* Positions per split, at least, before another split takes a share. */
#define ATT_SPLIT_MIN 256

double poot__cc_attention_scale(const poot_node *n) {
  for (uint32_t i = 0; i < n->num_cattrs; i++)
    if (!strcmp(n->cattrs[i].key, "scale"))
      return n->cattrs[i].kind == POOT_CATTR_FLOAT ? n->cattrs[i].f : (double)n->cattrs[i].i;
  return 1.0;
}

static poot_status fconst(pc_kctx *k, float f, poot_kir_value *out) {
  return poot_kir_const_f32(k->b, f, out);
}

/* Workgroup-wide sum or max of x without subgroups (shared tree); every
 * thread gets the result. */
static poot_status tree(pc_kctx *k, uint32_t sh, poot_kir_value lid, poot_kir_value x, bool mx,
                        poot_kir_value *out) {
  uint32_t wg = k->pl->wg;
  poot_kir_value z;
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lid, x));
  POOT_TRY(poot_kir_barrier(k->b));
  for (uint32_t s = wg / 2; s >= 1; s /= 2) {
    poot_kir_value lt, a, b, j, r;
    POOT_TRY(poot__cc_bin_c(k, OP(LT), lid, s, &lt));
    POOT_TRY(poot_kir_if_begin(k->b, lt));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), lid, s, &j));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, lid, 1, &a));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, j, 1, &b));
    POOT_TRY(poot__cc_bin(k, mx ? OP(MAX) : OP(ADD), a, b, &r));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lid, r));
    POOT_TRY(poot_kir_end(k->b));
    POOT_TRY(poot_kir_barrier(k->b));
  }
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, z, 1, out));
  return poot_kir_barrier(k->b);
}

/* Record layout of a split's partial: [M, L, O[0..D)] per (row, split). */
static poot_status partial_index(pc_kctx *k, const pc_group *g, poot_kir_value wc, uint32_t D,
                                 poot_kir_value field, poot_kir_value *out) {
  poot_kir_value base, x;
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, false, &base));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), wc, D + 2, &x));
  POOT_TRY(poot__cc_bin(k, OP(ADD), x, field, &x));
  return poot__cc_bin(k, OP(ADD), x, base, out);
}

/* Stores v at the field (a u32 value: 0 = M, 1 = L, 2 + d = O[d]). */
static poot_status partial_store(pc_kctx *k, const pc_group *g, poot_kir_value wc, uint32_t D,
                                 poot_kir_value field, poot_kir_value v) {
  poot_kir_value f, w;
  uint32_t ref;
  POOT_TRY(partial_index(k, g, wc, D, field, &f));
  POOT_TRY(poot__cc_binding_of(k, 0, &ref));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_U32, 1), v, &w));
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, f, w);
}

static poot_status field_const(pc_kctx *k, uint32_t f, poot_kir_value *out) {
  return poot__cc_u32(k, f, out);
}

/* Writes dimension d (a u32 value) of a row's result: O / L into the output
 * at (tt, h, d), or, split, O into the workgroup's partial record and, when
 * `with_ml` (where `first` holds, if given), its M and L. */
static poot_status row_write(pc_kctx *k, const pc_group *g, bool split, poot_kir_value wc,
                             uint32_t D, poot_kir_value tt, poot_kir_value h, poot_kir_value d,
                             bool with_ml, poot_kir_value first, poot_kir_value M, poot_kir_value L,
                             poot_kir_value O) {
  if (!split) {
    poot_kir_value r, lin, oidx[3] = {tt, h, d};
    POOT_TRY(poot__cc_bin(k, OP(DIV), O, L, &r));
    POOT_TRY(poot__cc_linearize(k, oidx, &poot__cc_type(k->pl, g->out)->shape, &lin));
    return poot__cc_store_value(k, g->dest, lin, r);
  }
  poot_kir_value fo, f0, f1;
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), d, 2, &fo));
  POOT_TRY(partial_store(k, g, wc, D, fo, O));
  if (!with_ml) return NULL;
  if (first) POOT_TRY(poot_kir_if_begin(k->b, first));
  POOT_TRY(field_const(k, 0, &f0));
  POOT_TRY(field_const(k, 1, &f1));
  POOT_TRY(partial_store(k, g, wc, D, f0, M));
  POOT_TRY(partial_store(k, g, wc, D, f1, L));
  return first ? poot_kir_end(k->b) : NULL;
}

/* The (query row, head, split) of this workgroup and the constants both
 * attention forms start from. */
typedef struct att_row {
  poot_kir_value valid, wc, sidx, tt, h, hk, ninf, zero, one;
} att_row;

static poot_status row_setup(pc_kctx *k, uint64_t nwg, bool split, uint32_t S, int64_t hq,
                             int64_t grp, att_row *r) {
  poot_kir_value w, row;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), w, (uint32_t)nwg, &r->valid));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(nwg - 1), &r->wc));
  POOT_TRY(poot__cc_bin(k, OP(MIN), w, r->wc, &r->wc));
  row = r->wc;
  r->sidx = 0;
  if (split) {
    POOT_TRY(poot__cc_bin_c(k, OP(DIV), r->wc, S, &row));
    POOT_TRY(poot__cc_bin_c(k, OP(REM), r->wc, S, &r->sidx));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), row, (uint32_t)hq, &r->tt));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), row, (uint32_t)hq, &r->h));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), r->h, (uint32_t)grp, &r->hk));
  POOT_TRY(fconst(k, -INFINITY, &r->ninf));
  POOT_TRY(fconst(k, 0.0f, &r->zero));
  return fconst(k, 1.0f, &r->one);
}

/* The row-wise last visible position of a causal mask bool[T, cap] built as
 * le(iota over cap, broadcast of x[T]) (or that AND something: a sliding
 * window only narrows it): the broadcast, read at (t, 0), is the last key
 * position row t may see. NONE when the mask has another form. */
static poot_value causal_bound(const pc_planner *pl, poot_value mask) {
  const poot_node *n = pl->v[mask].node;
  if (n && n->op == POOT_OP_AND) {
    poot_value a = causal_bound(pl, pl->alias[n->operands[0]]);
    return a != POOT_VALUE_NONE ? a : causal_bound(pl, pl->alias[n->operands[1]]);
  }
  if (!n || n->op != POOT_OP_LE) return POOT_VALUE_NONE;
  poot_value io = pl->alias[n->operands[0]], x = pl->alias[n->operands[1]];
  const poot_node *ni = pl->v[io].node, *nx = pl->v[x].node;
  const poot_type *mt = poot__cc_type(pl, mask), *xt = poot__cc_type(pl, x);
  if (!ni || !nx || mt->shape.rank != 2 || ni->op != POOT_OP_IOTA || ni->attrs.axis != 1)
    return POOT_VALUE_NONE;
  if (xt->dtype != POOT_DTYPE_I32 || nx->op != POOT_OP_BROADCAST) return POOT_VALUE_NONE;
  /* x must not vary along the cap axis: a broadcast whose operand maps to
   * result dim 0 only (or a scalar) */
  for (uint32_t i = 0; i < nx->attrs.num_dims; i++)
    if (nx->attrs.dims[i] != 0) return POOT_VALUE_NONE;
  return x;
}

poot_value poot__cc_attn_causal_bound(const pc_planner *pl, poot_value mask) {
  return causal_bound(pl, mask);
}

/* end = min(end, the row's last visible position + 1) under a causal mask
 * (unchanged otherwise). */
static poot_status bound_end(pc_kctx *k, poot_value mask, poot_kir_value tt, poot_kir_value *end) {
  poot_value bound = causal_bound(k->pl, mask);
  if (bound == POOT_VALUE_NONE) return NULL;
  poot_kir_value zi, bi[2], x, one_i, zero_i, xu;
  POOT_TRY(poot__cc_u32(k, 0, &zi));
  bi[0] = tt;
  bi[1] = zi;
  POOT_TRY(poot__cc_emit(k, bound, bi, &x));
  POOT_TRY(poot_kir_const_i32(k->b, 1, &one_i));
  POOT_TRY(poot_kir_const_i32(k->b, 0, &zero_i));
  POOT_TRY(poot__cc_bin(k, OP(ADD), x, one_i, &x));
  POOT_TRY(poot__cc_bin(k, OP(MAX), x, zero_i, &x));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_U32, 1), x, &xu));
  return poot__cc_bin(k, OP(MIN), *end, xu, end);
}

/* The number of splits that hold positions of row tt, at run time: under a
 * causal mask the visible range [0, vis) is shared by
 * n = clamp(ceil(vis / ATT_SPLIT_MIN), 1, S) splits, so a short context is
 * swept by one workgroup and a long one by all S; without one, S. Both the
 * attention and its combine compute it the same way. *out_vis gets vis (cap
 * without a causal mask). */
static poot_status att_nsplit(pc_kctx *k, poot_value mask, poot_kir_value tt, uint32_t S,
                              int64_t cap, poot_kir_value *out_n, poot_kir_value *out_vis) {
  POOT_TRY(poot__cc_u32(k, (uint32_t)cap, out_vis));
  POOT_TRY(bound_end(k, mask, tt, out_vis));
  if (causal_bound(k->pl, mask) == POOT_VALUE_NONE) return poot__cc_u32(k, S, out_n);
  poot_kir_value n, one;
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), *out_vis, ATT_SPLIT_MIN - 1, &n));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), n, ATT_SPLIT_MIN, &n));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot__cc_bin(k, OP(MAX), n, one, &n));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), n, S, out_n));
  return NULL;
}

/* This workgroup's positions [*c0, *end) of its row, and whether it has a
 * share at all (*active; workgroup-uniform). Without a split: [0, cap)
 * bounded by a causal mask. A split shares the visible range among the
 * att_nsplit splits in equal chunks chosen at run time (at every position
 * the work is even, and the splits past the last one do nothing). */
static poot_status att_range(pc_kctx *k, poot_value mask, poot_kir_value tt, bool split, uint32_t S,
                             int64_t cap, poot_kir_value sidx, poot_kir_value *c0,
                             poot_kir_value *end, poot_kir_value *active) {
  POOT_TRY(poot__cc_u32(k, 0, c0));
  *active = 0;
  if (!split) {
    POOT_TRY(poot__cc_u32(k, (uint32_t)cap, end));
    return bound_end(k, mask, tt, end);
  }
  poot_kir_value n, vis, chunk, one, e1;
  POOT_TRY(att_nsplit(k, mask, tt, S, cap, &n, &vis));
  POOT_TRY(poot__cc_bin(k, OP(LT), sidx, n, active));
  POOT_TRY(poot__cc_bin(k, OP(ADD), vis, n, &chunk));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot__cc_bin(k, OP(SUB), chunk, one, &chunk));
  POOT_TRY(poot__cc_bin(k, OP(DIV), chunk, n, &chunk));
  POOT_TRY(poot__cc_bin(k, OP(MUL), sidx, chunk, c0));
  POOT_TRY(poot__cc_bin(k, OP(ADD), *c0, chunk, &e1));
  return poot__cc_bin(k, OP(MIN), e1, vis, end);
}

/* The subgroup form's state: the operands, its private and shared arrays,
 * the workgroup's row, and this lane's dims and q. */
typedef struct att_sg {
  const poot_node *n;
  poot_value q, kk, v, mask;
  uint32_t D, sg, nsub, nd;
  uint32_t pm, pl_, pacc, sm, sl, so;
  att_row ar;
  poot_kir_value lid, sid, lane;
  poot_kir_value dj[8], inj[8], qv[8];
  /* The stashed (m, l, o) records: nst of them (one per subgroup, or per
   * lane group when wide); this lane's record and whether it writes m, l. */
  uint32_t nst;
  poot_kir_value rec, first;
  /* Wide (f16 K/V, att_wide_setup): lp lanes per position, each holding 8
   * consecutive dims (one 16-byte load of K, one of V), pp positions per
   * subgroup at a time; K/V at word kw0/vw0 of bindings kref/vref. */
  bool wide;
  uint32_t lp, pp, kref, vref, kw0, vw0, hkv;
  poot_kir_value part, sub;
  /* Wide through row maps (a paged pool): the gathers giving each
   * position's table row (NONE: the position is the row); vsame when V's
   * rows are K's. */
  poot_value kmap, vmap;
  bool vsame;
} att_sg;

/* The running (m, l, o) in private memory and the subgroups' (m, l, o) in
 * shared memory. */
static poot_status sg_arrays(pc_kctx *k, att_sg *s) {
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "m", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &s->pm));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "l", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &s->pl_));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "o", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), s->nd, &s->pacc));
  POOT_TRY(poot__cc_shared(k, "sm", POOT_KIR_F32, s->nst, &s->sm));
  POOT_TRY(poot__cc_shared(k, "sl", POOT_KIR_F32, s->nst, &s->sl));
  return poot__cc_shared(k, "so", POOT_KIR_F32, s->nst * s->D, &s->so);
}

/* Wide: lane = sub · lp + part holds dims 8·part … 8·part + 7 of the sub-th
 * position of its subgroup's pp; its record is sid · pp + sub. */
static poot_status sg_lane_setup_wide(pc_kctx *k, att_sg *s) {
  POOT_TRY(poot__cc_bin_c(k, OP(AND), s->lane, s->lp - 1, &s->part));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), s->lane, s->lp, &s->sub));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->sid, s->pp, &s->rec));
  POOT_TRY(poot__cc_bin(k, OP(ADD), s->rec, s->sub, &s->rec));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), s->part, 0, &s->first));
  poot_kir_value d0;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->part, 8, &d0));
  for (uint32_t j = 0; j < 8; j++) {
    s->inj[j] = 0;
    s->dj[j] = d0;
    if (j) POOT_TRY(poot__cc_bin_c(k, OP(ADD), d0, j, &s->dj[j]));
    poot_kir_value idx[3] = {s->ar.tt, s->ar.h, s->dj[j]};
    POOT_TRY(poot__cc_emit(k, s->q, idx, &s->qv[j]));
  }
  return NULL;
}

/* The thread's ids, the running state reset, and this lane's dims
 * (clamped) and q there (0 past D). */
static poot_status sg_lane_setup(pc_kctx *k, att_sg *s) {
  uint32_t D = s->D, sg = s->sg;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &s->lid));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &s->sid));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &s->lane));
  POOT_TRY(poot_kir_priv_store(k->b, s->pm, 0, s->ar.ninf));
  POOT_TRY(poot_kir_priv_store(k->b, s->pl_, 0, s->ar.zero));
  for (uint32_t j = 0; j < s->nd; j++) POOT_TRY(poot_kir_priv_store(k->b, s->pacc, j, s->ar.zero));
  if (s->wide) return sg_lane_setup_wide(k, s);
  s->rec = s->sid;
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), s->lane, 0, &s->first));
  for (uint32_t j = 0; j < s->nd; j++) {
    poot_kir_value dm;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), s->lane, j * sg, &s->dj[j]));
    s->inj[j] = 0;
    if ((j + 1) * sg > D) {
      POOT_TRY(poot__cc_bin_c(k, OP(LT), s->dj[j], D, &s->inj[j]));
      POOT_TRY(poot__cc_u32(k, D - 1, &dm));
      POOT_TRY(poot__cc_bin(k, OP(MIN), s->dj[j], dm, &s->dj[j]));
    }
    poot_kir_value idx[3] = {s->ar.tt, s->ar.h, s->dj[j]};
    POOT_TRY(poot__cc_emit(k, s->q, idx, &s->qv[j]));
    if (s->inj[j]) POOT_TRY(poot_kir_select(k->b, s->inj[j], s->qv[j], s->ar.zero, &s->qv[j]));
  }
  return NULL;
}

/* The 8 f16 values of a K or V row (table row cu, kv head hk) at this
 * lane's dims: one 16-byte load (4 words) from word w0 of binding ref,
 * decoded in registers. */
static poot_status wide_row(pc_kctx *k, const att_sg *s, uint32_t ref, uint32_t w0,
                            poot_kir_value cu, poot_kir_value *out) {
  poot_kir_value at, pw, v;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), cu, s->hkv, &at));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, s->ar.hk, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), at, s->D / 2, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->part, 4, &pw));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, pw, &at));
  if (w0) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, w0, &at));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, 4, &v));
  for (uint32_t i = 0; i < 4; i++) {
    poot_kir_value w;
    POOT_TRY(poot_kir_extract(k->b, v, i, &w));
    POOT_TRY(poot__cc_f16_pair(k, w, &out[2 * i]));
  }
  return NULL;
}

/* Wide: the scaled, masked score of position c + u·nsub·pp + sub (clamped
 * into the range; past it, masked): 8 products per lane, summed over the
 * position's lp lanes by an xor butterfly (every lane of the group gets
 * the same sum), and this lane's 8 V values there. */
static poot_status sg_score_wide(pc_kctx *k, const att_sg *s, poot_kir_value c, uint32_t u,
                                 poot_kir_value end, poot_kir_value endm1, poot_kir_value scale,
                                 poot_kir_value *out_score, poot_kir_value *vv) {
  poot_kir_value cu = c, inr, sc = 0, kv[8];
  if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, u * s->nsub * s->pp, &cu));
  POOT_TRY(poot__cc_bin(k, OP(ADD), cu, s->sub, &cu));
  POOT_TRY(poot__cc_bin(k, OP(LT), cu, end, &inr));
  POOT_TRY(poot__cc_bin(k, OP(MIN), cu, endm1, &cu));
  /* The table rows: one row-map lookup a position serves its whole row. */
  poot_kir_value rk = cu, rv = cu;
  if (s->kmap != POOT_VALUE_NONE) POOT_TRY(poot__cc_emit_gather_row(k, s->kmap, cu, &rk));
  if (s->vsame)
    rv = rk;
  else if (s->vmap != POOT_VALUE_NONE)
    POOT_TRY(poot__cc_emit_gather_row(k, s->vmap, cu, &rv));
  POOT_TRY(wide_row(k, s, s->kref, s->kw0, rk, kv));
  POOT_TRY(wide_row(k, s, s->vref, s->vw0, rv, vv));
  for (uint32_t j = 0; j < 8; j++) {
    if (sc)
      POOT_TRY(poot_kir_fma(k->b, s->qv[j], kv[j], sc, &sc));
    else
      POOT_TRY(poot__cc_bin(k, OP(MUL), s->qv[j], kv[j], &sc));
  }
  for (uint32_t m = s->lp / 2; m >= 1; m /= 2) {
    poot_kir_value o;
    POOT_TRY(poot_kir_subgroup_shuffle_xor(k->b, sc, m, &o));
    POOT_TRY(poot__cc_bin(k, OP(ADD), sc, o, &sc));
  }
  poot_kir_value mk, midx[2] = {s->ar.tt, cu};
  POOT_TRY(poot__cc_bin(k, OP(MUL), sc, scale, &sc));
  POOT_TRY(poot__cc_emit(k, s->mask, midx, &mk));
  POOT_TRY(poot__cc_bin(k, OP(AND), mk, inr, &mk));
  return poot_kir_select(k->b, mk, sc, s->ar.ninf, out_score);
}

/* The scaled, masked score of position c + u·nsub (clamped into the range;
 * past it, masked) and this lane's V there. */
static poot_status sg_score(pc_kctx *k, const att_sg *s, poot_kir_value c, uint32_t u,
                            poot_kir_value end, poot_kir_value endm1, poot_kir_value scale,
                            poot_kir_value *out_score, poot_kir_value *vv) {
  poot_kir_value cu = c, sc = 0, inr = 0;
  if (u) {
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, u * s->nsub, &cu));
    POOT_TRY(poot__cc_bin(k, OP(LT), cu, end, &inr));
    POOT_TRY(poot__cc_bin(k, OP(MIN), cu, endm1, &cu));
  }
  for (uint32_t j = 0; j < s->nd; j++) {
    poot_kir_value idx[3] = {cu, s->ar.hk, s->dj[j]}, kv;
    POOT_TRY(poot__cc_emit(k, s->kk, idx, &kv));
    POOT_TRY(poot__cc_emit(k, s->v, idx, &vv[j]));
    if (sc)
      POOT_TRY(poot_kir_fma(k->b, s->qv[j], kv, sc, &sc));
    else
      POOT_TRY(poot__cc_bin(k, OP(MUL), s->qv[j], kv, &sc));
  }
  poot_kir_value mk, midx[2] = {s->ar.tt, cu};
  POOT_TRY(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), sc, &sc));
  POOT_TRY(poot__cc_bin(k, OP(MUL), sc, scale, &sc));
  POOT_TRY(poot__cc_emit(k, s->mask, midx, &mk));
  if (inr) POOT_TRY(poot__cc_bin(k, OP(AND), mk, inr, &mk));
  return poot_kir_select(k->b, mk, sc, s->ar.ninf, out_score);
}

/* One rescale per block of positions: mb = max(m, s_u); the block's
 * weights p_u = e^(s_u - mb) are independent of each other. */
static poot_status sg_update(pc_kctx *k, const att_sg *s, const poot_kir_value *sc,
                             poot_kir_value vv[][8]) {
  uint32_t un = ATT_UNROLL;
  poot_kir_value ninf = s->ar.ninf, zero = s->ar.zero, one = s->ar.one;
  poot_kir_value m, mb, isn, cr, e, l, p[ATT_UNROLL];
  POOT_TRY(poot_kir_priv_load(k->b, s->pm, 0, &m));
  mb = m;
  for (uint32_t u = 0; u < un; u++) POOT_TRY(poot__cc_bin(k, OP(MAX), mb, sc[u], &mb));
  POOT_TRY(poot__cc_bin(k, OP(EQ), mb, ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, mb, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, one, e, &cr));
  for (uint32_t u = 0; u < un; u++) {
    POOT_TRY(poot__cc_bin(k, OP(SUB), sc[u], mb, &e));
    POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
    POOT_TRY(poot_kir_select(k->b, isn, zero, e, &p[u]));
  }
  POOT_TRY(poot_kir_priv_store(k->b, s->pm, 0, mb));
  POOT_TRY(poot_kir_priv_load(k->b, s->pl_, 0, &l));
  POOT_TRY(poot__cc_bin(k, OP(MUL), l, cr, &l));
  for (uint32_t u = 0; u < un; u++) POOT_TRY(poot__cc_bin(k, OP(ADD), l, p[u], &l));
  POOT_TRY(poot_kir_priv_store(k->b, s->pl_, 0, l));
  for (uint32_t j = 0; j < s->nd; j++) {
    poot_kir_value a;
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, j, &a));
    POOT_TRY(poot__cc_bin(k, OP(MUL), a, cr, &a));
    for (uint32_t u = 0; u < un; u++) POOT_TRY(poot_kir_fma(k->b, p[u], vv[u][j], a, &a));
    POOT_TRY(poot_kir_priv_store(k->b, s->pacc, j, a));
  }
  return NULL;
}

/* The subgroup's sweep over every nsub-th position of [c0, end). A causal
 * mask bounds the sweep (att_range): positions past the row's last visible
 * one are never read (their weight would be exactly 0: the result is the
 * same bit for bit), so a decode step reads pos + 1 positions, not cap.
 * ATT_UNROLL positions per iteration: their K/V loads and q·k sums are
 * independent (issued together); the online-softmax updates follow in
 * position order. A position past the range reads the range's last one and
 * counts as masked. */
static poot_status sg_sweep(pc_kctx *k, const att_sg *s, poot_kir_value c0, poot_kir_value end) {
  uint32_t un = ATT_UNROLL;
  poot_kir_value stepv, c, scale, start, endm1, one_u;
  uint32_t per = s->wide ? s->pp : 1; /* positions per subgroup at a time */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->sid, per, &start));
  POOT_TRY(poot__cc_bin(k, OP(ADD), c0, start, &start));
  POOT_TRY(poot__cc_u32(k, 1, &one_u));
  POOT_TRY(poot__cc_bin(k, OP(SUB), end, one_u, &endm1));
  POOT_TRY(poot__cc_u32(k, s->nsub * per * un, &stepv));
  POOT_TRY(fconst(k, (float)poot__cc_attention_scale(s->n), &scale));
  POOT_TRY(poot_kir_for_begin(k->b, start, end, stepv, &c));
  poot__cc_scope_push(k);
  poot_kir_value sc[ATT_UNROLL], vv[ATT_UNROLL][8];
  for (uint32_t u = 0; u < un; u++)
    POOT_TRY(s->wide ? sg_score_wide(k, s, c, u, end, endm1, scale, &sc[u], vv[u])
                     : sg_score(k, s, c, u, end, endm1, scale, &sc[u], vv[u]));
  POOT_TRY(sg_update(k, s, sc, vv));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* Each subgroup's (or lane group's) (m, l, o) into shared memory. */
static poot_status sg_stash(pc_kctx *k, const att_sg *s) {
  poot_kir_value m, l;
  POOT_TRY(poot_kir_priv_load(k->b, s->pm, 0, &m));
  POOT_TRY(poot_kir_priv_load(k->b, s->pl_, 0, &l));
  POOT_TRY(poot_kir_if_begin(k->b, s->first));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->sm, s->rec, m));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->sl, s->rec, l));
  POOT_TRY(poot_kir_end(k->b));
  for (uint32_t j = 0; j < s->nd; j++) {
    poot_kir_value a, ix;
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, j, &a));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->rec, s->D, &ix));
    POOT_TRY(poot__cc_bin(k, OP(ADD), ix, s->dj[j], &ix));
    if (s->inj[j]) POOT_TRY(poot_kir_if_begin(k->b, s->inj[j]));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->so, ix, a));
    if (s->inj[j]) POOT_TRY(poot_kir_end(k->b));
  }
  return poot_kir_barrier(k->b);
}

/* Threads j < nsub: f_j = e^(m_j - M), M = max m_j, into shared sf (M at
 * nsub). */
static poot_status sg_weights(pc_kctx *k, const att_sg *s, uint32_t *out_sf) {
  uint32_t nsub = s->nst, sf;
  POOT_TRY(poot__cc_shared(k, "sf", POOT_KIR_F32, nsub + 1, &sf));
  *out_sf = sf;
  poot_kir_value ltn;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), s->lid, nsub, &ltn));
  POOT_TRY(poot_kir_if_begin(k->b, ltn));
  poot_kir_value Mx = s->ar.ninf, mj, e, f, isn, mine;
  for (uint32_t j = 0; j < nsub; j++) {
    poot_kir_value jj;
    POOT_TRY(poot__cc_u32(k, j, &jj));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sm, jj, 1, &mj));
    POOT_TRY(poot__cc_bin(k, OP(MAX), Mx, mj, &Mx));
  }
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sm, s->lid, 1, &mine));
  POOT_TRY(poot__cc_bin(k, OP(EQ), mine, s->ar.ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), mine, Mx, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, s->ar.zero, e, &f));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sf, s->lid, f));
  poot_kir_value is0, nsv;
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), s->lid, 0, &is0));
  POOT_TRY(poot_kir_if_begin(k->b, is0));
  POOT_TRY(poot__cc_u32(k, nsub, &nsv));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sf, nsv, Mx));
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_barrier(k->b);
}

/* Threads d < D: L = Σ l_j f_j, O[d] = Σ o_j[d] f_j (no exp on their
 * path), written as the row's result. */
static poot_status sg_combine(pc_kctx *k, const pc_group *g, const att_sg *s, bool split,
                              uint32_t sf) {
  uint32_t D = s->D;
  poot_kir_value cond, lt;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), s->lid, D, &lt));
  POOT_TRY(poot__cc_bin(k, OP(AND), lt, s->ar.valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  poot__cc_scope_push(k);
  poot_kir_value M, L = s->ar.zero, O = s->ar.zero, nsv;
  POOT_TRY(poot__cc_u32(k, s->nst, &nsv));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sf, nsv, 1, &M));
  for (uint32_t j = 0; j < s->nst; j++) {
    poot_kir_value jj, x, ix, f;
    POOT_TRY(poot__cc_u32(k, j, &jj));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sf, jj, 1, &f));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sl, jj, 1, &x));
    POOT_TRY(poot_kir_fma(k->b, x, f, L, &L));
    POOT_TRY(poot__cc_u32(k, j * D, &ix));
    POOT_TRY(poot__cc_bin(k, OP(ADD), ix, s->lid, &ix));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->so, ix, 1, &x));
    POOT_TRY(poot_kir_fma(k->b, x, f, O, &O));
  }
  poot_kir_value is0;
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), s->lid, 0, &is0));
  POOT_TRY(row_write(k, g, split, s->ar.wc, D, s->ar.tt, s->ar.h, s->lid, true, is0, M, L, O));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The dense buffer a K or V operand reads and the element offset there of
 * its first element, when it is a contiguous view of one (reshapes and
 * leading-dimension slices of a state, say the per-sequence rows of a KV
 * cache); false otherwise. */
static bool kv_view(const pc_planner *pl, poot_value v, uint32_t *out_buf, int64_t *out_off) {
  int64_t off = 0;
  for (int guard = 0; guard < 32; guard++) {
    v = pl->alias[v];
    const pc_value *pv = &pl->v[v];
    if (pv->hold == PC_DENSE || pv->hold == PC_LEAFBUF) {
      *out_buf = pv->buffer;
      *out_off = off;
      return true;
    }
    const poot_node *n = pv->node;
    if (pv->hold != PC_INLINE || !n) return false;
    if (n->op == POOT_OP_SLICE) {
      const poot_shape *xs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
      const poot_shape *ys = &poot__cc_type(pl, v)->shape;
      /* contiguous: ones, then one sliced dimension, then whole ones */
      uint32_t d = 0;
      while (d + 1 < ys->rank && ys->dims[d] == 1) d++;
      int64_t lin = 0;
      for (uint32_t i = 0; i < xs->rank; i++) {
        if (n->attrs.stride[i] > 1 && ys->dims[i] > 1) return false;
        if (i > d && (n->attrs.start[i] != 0 || ys->dims[i] != xs->dims[i])) return false;
        lin = lin * xs->dims[i] + n->attrs.start[i];
      }
      off += lin;
    } else if (n->op != POOT_OP_RESHAPE) {
      return false;
    }
    v = n->operands[0];
  }
  return false;
}

bool poot__cc_attn_kv_gather(const pc_planner *pl, poot_value v) {
  v = pl->alias[v];
  const poot_node *n = pl->v[v].node;
  if (!n || n->op != POOT_OP_GATHER || n->attrs.axis != 0 || n->attrs.batch_dims != 0) return false;
  poot_value t = pl->alias[n->operands[0]];
  const poot_type *tt = poot__cc_type(pl, t);
  const poot_type *it = poot__cc_type(pl, pl->alias[n->operands[1]]);
  if (it->shape.rank != 1 || tt->shape.rank != 3 ||
      (poot_dtype_is_packed(tt->dtype) && tt->dtype != POOT_DTYPE_Q8_0))
    return false;
  pc_hold h = pl->v[t].hold;
  return h == PC_DENSE || h == PC_LEAFBUF || h == PC_TEMP;
}

/* Whether values a and b are the same: one value, or the same slice or
 * reshape of the same value (the trace slices K's and V's row maps apart). */
static bool same_value(const pc_planner *pl, poot_value a, poot_value b, int depth) {
  a = pl->alias[a];
  b = pl->alias[b];
  if (a == b) return true;
  const poot_node *na = pl->v[a].node, *nb = pl->v[b].node;
  if (depth > 4 || !na || !nb || na->op != nb->op || pl->v[a].hold != PC_INLINE ||
      pl->v[b].hold != PC_INLINE || !poot_type_equal(poot__cc_type(pl, a), poot__cc_type(pl, b)))
    return false;
  if (na->op == POOT_OP_SLICE) {
    uint32_t r = poot__cc_type(pl, pl->alias[na->operands[0]])->shape.rank;
    for (uint32_t i = 0; i < r; i++)
      if (na->attrs.start[i] != nb->attrs.start[i] || na->attrs.limit[i] != nb->attrs.limit[i] ||
          na->attrs.stride[i] != nb->attrs.stride[i])
        return false;
  } else if (na->op != POOT_OP_RESHAPE) {
    return false;
  }
  return same_value(pl, na->operands[0], nb->operands[0], depth + 1);
}

/* Whether gathers a and b read the same rows and check them alike. */
static bool same_rows(const pc_planner *pl, const poot_node *a, const poot_node *b) {
  return same_value(pl, a->operands[1], b->operands[1], 0) && a->trap == b->trap &&
         poot__cc_type(pl, pl->alias[a->operands[0]])->shape.dims[0] ==
             poot__cc_type(pl, pl->alias[b->operands[0]])->shape.dims[0];
}

/* Operand v read in place through a row map: the gather, else NONE. */
static poot_value kv_map(const pc_planner *pl, poot_value v) {
  v = pl->alias[v];
  return pl->v[v].hold == PC_INLINE && poot__cc_attn_kv_gather(pl, v) ? v : POOT_VALUE_NONE;
}

poot_status poot__cc_attn_kv_checks(pc_kctx *k, poot_value kk, poot_value v) {
  const pc_planner *pl = k->pl;
  poot_value mk = kv_map(pl, kk), mv = kv_map(pl, v);
  if (mk != POOT_VALUE_NONE) POOT_TRY(poot__cc_emit_gather_checks(k, mk));
  if (mv == POOT_VALUE_NONE ||
      (mk != POOT_VALUE_NONE && same_rows(pl, pl->v[mk].node, pl->v[mv].node)))
    return NULL;
  return poot__cc_emit_gather_checks(k, mv);
}

/* kv_view of operand v, or of the table a row-map gather of v reads
 * (*out_map: the gather; NONE for a plain view). */
static bool kv_rows(const pc_planner *pl, poot_value v, uint32_t *out_buf, int64_t *out_off,
                    poot_value *out_map) {
  *out_map = kv_map(pl, v);
  if (*out_map == POOT_VALUE_NONE) return kv_view(pl, v, out_buf, out_off);
  return kv_view(pl, pl->v[*out_map].node->operands[0], out_buf, out_off);
}

/* The fraction of its table a row-map gather reads (its index's length
 * over the table's rows); 1 without one. */
static double map_frac(const pc_planner *pl, poot_value map) {
  if (map == POOT_VALUE_NONE) return 1.0;
  const poot_node *n = pl->v[map].node;
  double rows = (double)poot__cc_type(pl, pl->alias[n->operands[0]])->shape.dims[0];
  double len = (double)poot__cc_type(pl, pl->alias[n->operands[1]])->shape.dims[0];
  return rows > 0 && len < rows ? len / rows : 1.0;
}

/* Sets up the wide form where it applies: K and V f16 rows of contiguous
 * views (kv_view) at 16-byte-aligned offsets, or rows of such a table
 * through a row map (kv_rows), D a multiple of 8 with lp = D / 8 a power of
 * two within a subgroup. Unchanged otherwise. */
static poot_status att_wide_setup(pc_kctx *k, att_sg *s) {
  const pc_planner *pl = k->pl;
  const poot_type *kt = poot__cc_type(pl, s->kk), *vt = poot__cc_type(pl, s->v);
  uint32_t kb, vb, lp = s->D / 8;
  int64_t ko, vo;
  poot_value km, vm;
  if (kt->dtype != POOT_DTYPE_F16 || vt->dtype != POOT_DTYPE_F16 || s->D % 8 || lp > s->sg ||
      (lp & (lp - 1)) || !kv_rows(pl, s->kk, &kb, &ko, &km) || !kv_rows(pl, s->v, &vb, &vo, &vm) ||
      ko % 8 || vo % 8)
    return NULL;
  s->kmap = km;
  s->vmap = vm;
  s->vsame = km != POOT_VALUE_NONE && vm != POOT_VALUE_NONE &&
             same_rows(pl, pl->v[km].node, pl->v[vm].node);
  s->wide = true;
  s->lp = lp;
  s->pp = s->sg / lp;
  s->nd = 8;
  s->nst = s->nsub * s->pp;
  s->hkv = (uint32_t)kt->shape.dims[1];
  s->kw0 = (uint32_t)(ko / 2);
  s->vw0 = (uint32_t)(vo / 2);
  POOT_TRY(poot__cc_binding_of(k, kb, &s->kref));
  POOT_TRY(poot__cc_binding_of(k, vb, &s->vref));
  poot__cc_note_buffer(k, s->kref, k->frac * map_frac(pl, km));
  poot__cc_note_buffer(k, s->vref, k->frac * map_frac(pl, vm));
  return NULL;
}

/* The subgroup form (targets with subgroups, D ≤ 8 · sg): each subgroup of
 * the workgroup takes every nsub-th position of the row's range; its lanes
 * split the head dimension (lane l holds dims l, l + sg, …: the K and V rows
 * are read by whole subgroups, coalesced), q·k is a subgroup sum, and each
 * subgroup keeps its own online softmax (m, l uniform; o per lane). The
 * subgroups are then combined through shared memory by threads d < D. */
static poot_status attention_sg(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  att_sg s;
  memset(&s, 0, sizeof s);
  s.n = pl->v[g->out].node;
  s.q = pl->alias[s.n->operands[0]];
  s.kk = pl->alias[s.n->operands[1]];
  s.v = pl->alias[s.n->operands[2]];
  s.mask = pl->alias[s.n->operands[3]];
  const poot_shape *qs = &poot__cc_type(pl, s.q)->shape, *ks = &poot__cc_type(pl, s.kk)->shape;
  int64_t tq = qs->dims[0], hq = qs->dims[1], cap = ks->dims[0];
  int64_t grp = hq / ks->dims[1];
  s.D = (uint32_t)qs->dims[2];
  s.sg = pl->t->subgroup_size;
  s.nsub = pl->wg / s.sg;
  s.nd = (s.D + s.sg - 1) / s.sg; /* dims per lane */
  s.nst = s.nsub;
  POOT_TRY(att_wide_setup(k, &s));
  uint32_t S = g->split ? g->split : 1;
  bool split = S > 1 && g->aux_temp != UINT32_MAX;
  uint64_t nwg = (uint64_t)(tq * hq) * S;
  poot__cc_grid_for(nwg, grid);
  POOT_TRY(sg_arrays(k, &s));
  POOT_TRY(row_setup(k, nwg, split, S, hq, grp, &s.ar));
  /* A split past the row's share does nothing (its partial is not read). */
  poot_kir_value c0, end, active;
  POOT_TRY(att_range(k, s.mask, s.ar.tt, split, S, cap, s.ar.sidx, &c0, &end, &active));
  if (active) POOT_TRY(poot_kir_if_begin(k->b, active));
  poot__cc_scope_push(k);
  POOT_TRY(sg_lane_setup(k, &s));
  POOT_TRY(sg_sweep(k, &s, c0, end));
  k->flops += (uint64_t)nwg * (uint64_t)cap * (uint64_t)s.D * 4;
  POOT_TRY(sg_stash(k, &s));
  uint32_t sf;
  POOT_TRY(sg_weights(k, &s, &sf));
  POOT_TRY(sg_combine(k, g, &s, split, sf));
  poot__cc_scope_pop(k);
  if (active) POOT_TRY(poot_kir_end(k->b));
  return NULL;
}

/* Whether the subgroup form fits: subgroups (not a SIMD CPU), at most 64
 * of them per workgroup, D ≤ 8 · sg and D ≤ the workgroup size. */
static bool att_use_sg(const pc_kctx *k, const pc_group *g) {
  const poot_kir_target *t0 = k->pl->t;
  uint32_t sg0 = t0->subgroup_ops ? t0->subgroup_size : 0;
  const poot_node *n0 = k->pl->v[g->out].node;
  int64_t d0 = poot__cc_type(k->pl, k->pl->alias[n0->operands[0]])->shape.dims[2];
  return sg0 && !t0->simd_cpu && k->pl->wg % sg0 == 0 && k->pl->wg / sg0 <= 64 &&
         d0 <= 8 * (int64_t)sg0 && d0 <= k->pl->wg;
}

/* The per-thread form's state: the operands, the running (m, l, o) in
 * private memory, the workgroup's row and the thread's index. */
typedef struct att_thr {
  const poot_node *n;
  poot_value q, kk, v, mask;
  uint32_t D, wg;
  uint32_t pm, pl_, pacc;
  att_row ar;
  poot_kir_value lid;
} att_thr;

/* The running (m, l, o) in private memory. */
static poot_status thr_arrays(pc_kctx *k, att_thr *s) {
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "m", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &s->pm));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "l", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &s->pl_));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "o", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), s->D, &s->pacc));
  return NULL;
}

/* The thread index, the running state reset, and the q row in registers. */
static poot_status thr_reset(pc_kctx *k, att_thr *s, poot_kir_value *qv) {
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &s->lid));
  POOT_TRY(poot_kir_priv_store(k->b, s->pm, 0, s->ar.ninf));
  POOT_TRY(poot_kir_priv_store(k->b, s->pl_, 0, s->ar.zero));
  for (uint32_t d = 0; d < s->D; d++) POOT_TRY(poot_kir_priv_store(k->b, s->pacc, d, s->ar.zero));
  for (uint32_t d = 0; d < s->D; d++) {
    poot_kir_value idx[3] = {s->ar.tt, s->ar.h, 0};
    POOT_TRY(poot__cc_u32(k, d, &idx[2]));
    POOT_TRY(poot__cc_emit(k, s->q, idx, &qv[d]));
  }
  return NULL;
}

/* One position c of the thread's sweep: its score, the online-softmax
 * rescale and the weighted V row. */
static poot_status thr_position(pc_kctx *k, const att_thr *s, const poot_kir_value *qv,
                                poot_kir_value c, poot_kir_value scale) {
  poot_kir_value ninf = s->ar.ninf, zero = s->ar.zero, one = s->ar.one;
  poot_kir_value sc = 0, mk, m, mn, isn, cr, p, l, e;
  for (uint32_t d = 0; d < s->D; d++) {
    poot_kir_value idx[3] = {c, s->ar.hk, 0}, kv, pr;
    POOT_TRY(poot__cc_u32(k, d, &idx[2]));
    POOT_TRY(poot__cc_emit(k, s->kk, idx, &kv));
    POOT_TRY(poot__cc_bin(k, OP(MUL), qv[d], kv, &pr));
    if (sc)
      POOT_TRY(poot__cc_bin(k, OP(ADD), sc, pr, &sc));
    else
      POOT_TRY(poot__cc_bin(k, OP(ADD), zero, pr, &sc));
  }
  POOT_TRY(poot__cc_bin(k, OP(MUL), sc, scale, &sc));
  poot_kir_value midx[2] = {s->ar.tt, c};
  POOT_TRY(poot__cc_emit(k, s->mask, midx, &mk));
  POOT_TRY(poot_kir_select(k->b, mk, sc, ninf, &sc));
  POOT_TRY(poot_kir_priv_load(k->b, s->pm, 0, &m));
  POOT_TRY(poot__cc_bin(k, OP(MAX), m, sc, &mn));
  POOT_TRY(poot__cc_bin(k, OP(EQ), mn, ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, mn, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, one, e, &cr));
  POOT_TRY(poot__cc_bin(k, OP(SUB), sc, mn, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, zero, e, &p));
  POOT_TRY(poot_kir_priv_store(k->b, s->pm, 0, mn));
  POOT_TRY(poot_kir_priv_load(k->b, s->pl_, 0, &l));
  POOT_TRY(poot__cc_bin(k, OP(MUL), l, cr, &l));
  POOT_TRY(poot__cc_bin(k, OP(ADD), l, p, &l));
  POOT_TRY(poot_kir_priv_store(k->b, s->pl_, 0, l));
  for (uint32_t d = 0; d < s->D; d++) {
    poot_kir_value idx[3] = {c, s->ar.hk, 0}, vv, a;
    POOT_TRY(poot__cc_u32(k, d, &idx[2]));
    POOT_TRY(poot__cc_emit(k, s->v, idx, &vv));
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, d, &a));
    POOT_TRY(poot__cc_bin(k, OP(MUL), a, cr, &a));
    POOT_TRY(poot__cc_bin(k, OP(MUL), p, vv, &vv));
    POOT_TRY(poot__cc_bin(k, OP(ADD), a, vv, &a));
    POOT_TRY(poot_kir_priv_store(k->b, s->pacc, d, a));
  }
  return NULL;
}

/* The thread's sweep over every wg-th position of [c0, end). */
static poot_status thr_sweep(pc_kctx *k, const att_thr *s, const poot_kir_value *qv,
                             poot_kir_value c0, poot_kir_value end) {
  poot_kir_value stepv, c, scale, start;
  POOT_TRY(poot__cc_bin(k, OP(ADD), c0, s->lid, &start));
  POOT_TRY(poot__cc_u32(k, s->wg, &stepv));
  POOT_TRY(fconst(k, (float)poot__cc_attention_scale(s->n), &scale));
  POOT_TRY(poot_kir_for_begin(k->b, start, end, stepv, &c));
  poot__cc_scope_push(k);
  POOT_TRY(thr_position(k, s, qv, c, scale));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The threads combined with subgroups: each subgroup's max into shared
 * memory, M the workgroup's; each subgroup's rescaled (l, o) sums into
 * shared memory; threads d < D add them up and write the row. */
static poot_status thr_combine_sg(pc_kctx *k, const pc_group *g, const att_thr *s, bool split,
                                  uint32_t sg, poot_kir_value m) {
  uint32_t D = s->D, nsub = s->wg / sg;
  poot_kir_value ninf = s->ar.ninf, zero = s->ar.zero, lid = s->lid;
  uint32_t sm, sl, so;
  poot_kir_value M, f, isn, e, l;
  poot_kir_value sid, lane, first, mm;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), lane, 0, &first));
  POOT_TRY(poot__cc_shared(k, "sm", POOT_KIR_F32, nsub, &sm));
  POOT_TRY(poot__cc_shared(k, "sl", POOT_KIR_F32, nsub, &sl));
  POOT_TRY(poot__cc_shared(k, "so", POOT_KIR_F32, nsub * D, &so));
  POOT_TRY(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_MAX), m, &mm));
  POOT_TRY(poot_kir_if_begin(k->b, first));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sm, sid, mm));
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_barrier(k->b));
  M = ninf;
  for (uint32_t j = 0; j < nsub; j++) {
    poot_kir_value jj, x;
    POOT_TRY(poot__cc_u32(k, j, &jj));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sm, jj, 1, &x));
    POOT_TRY(poot__cc_bin(k, OP(MAX), M, x, &M));
  }
  POOT_TRY(poot__cc_bin(k, OP(EQ), m, ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, M, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, zero, e, &f));
  POOT_TRY(poot_kir_priv_load(k->b, s->pl_, 0, &l));
  POOT_TRY(poot__cc_bin(k, OP(MUL), l, f, &l));
  poot_kir_value ls, os[256];
  POOT_TRY(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), l, &ls));
  for (uint32_t d = 0; d < D; d++) {
    poot_kir_value a;
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, d, &a));
    POOT_TRY(poot__cc_bin(k, OP(MUL), a, f, &a));
    POOT_TRY(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), a, &os[d]));
  }
  POOT_TRY(poot_kir_if_begin(k->b, first));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sl, sid, ls));
  for (uint32_t d = 0; d < D; d++) {
    poot_kir_value ix;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), sid, D, &ix));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), ix, d, &ix));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, so, ix, os[d]));
  }
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_barrier(k->b));
  poot_kir_value cond, lt;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), lid, D, &lt));
  POOT_TRY(poot__cc_bin(k, OP(AND), lt, s->ar.valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  poot__cc_scope_push(k);
  poot_kir_value L = zero, O = zero;
  for (uint32_t j = 0; j < nsub; j++) {
    poot_kir_value jj, x, ix;
    POOT_TRY(poot__cc_u32(k, j, &jj));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sl, jj, 1, &x));
    POOT_TRY(poot__cc_bin(k, OP(ADD), L, x, &L));
    POOT_TRY(poot__cc_u32(k, j * D, &ix));
    POOT_TRY(poot__cc_bin(k, OP(ADD), ix, lid, &ix));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, so, ix, 1, &x));
    POOT_TRY(poot__cc_bin(k, OP(ADD), O, x, &O));
  }
  poot_kir_value is0;
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), lid, 0, &is0));
  POOT_TRY(row_write(k, g, split, s->ar.wc, D, s->ar.tt, s->ar.h, lid, true, is0, M, L, O));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* The threads combined without subgroups: shared trees for M, L and each
 * O[d]; thread d writes dimension d. */
static poot_status thr_combine_tree(pc_kctx *k, const pc_group *g, const att_thr *s, bool split,
                                    poot_kir_value m) {
  uint32_t D = s->D;
  poot_kir_value lid = s->lid;
  poot_kir_value M, f, isn, e, l;
  uint32_t sh;
  POOT_TRY(poot__cc_shared(k, "red", POOT_KIR_F32, s->wg, &sh));
  POOT_TRY(tree(k, sh, lid, m, true, &M));
  POOT_TRY(poot__cc_bin(k, OP(EQ), m, s->ar.ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, M, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, s->ar.zero, e, &f));
  POOT_TRY(poot_kir_priv_load(k->b, s->pl_, 0, &l));
  POOT_TRY(poot__cc_bin(k, OP(MUL), l, f, &l));
  poot_kir_value L;
  POOT_TRY(tree(k, sh, lid, l, false, &L));
  for (uint32_t d = 0; d < D; d++) {
    poot_kir_value a, O, cond, eq, dv;
    POOT_TRY(poot_kir_priv_load(k->b, s->pacc, d, &a));
    POOT_TRY(poot__cc_bin(k, OP(MUL), a, f, &a));
    POOT_TRY(tree(k, sh, lid, a, false, &O));
    POOT_TRY(poot__cc_bin_c(k, OP(EQ), lid, d, &eq));
    POOT_TRY(poot__cc_bin(k, OP(AND), eq, s->ar.valid, &cond));
    POOT_TRY(poot_kir_if_begin(k->b, cond));
    poot__cc_scope_push(k);
    POOT_TRY(poot__cc_u32(k, d, &dv));
    POOT_TRY(row_write(k, g, split, s->ar.wc, D, s->ar.tt, s->ar.h, dv, d == 0, 0, M, L, O));
    poot__cc_scope_pop(k);
    POOT_TRY(poot_kir_end(k->b));
  }
  return NULL;
}

poot_status poot__cc_tpl_attention(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  const poot_node *an = k->pl->v[g->out].node;
  POOT_TRY(
      poot__cc_attn_kv_checks(k, k->pl->alias[an->operands[1]], k->pl->alias[an->operands[2]]));
  if (att_use_sg(k, g)) return attention_sg(k, g, grid);
  pc_planner *pl = k->pl;
  att_thr s;
  memset(&s, 0, sizeof s);
  s.n = pl->v[g->out].node;
  s.q = pl->alias[s.n->operands[0]];
  s.kk = pl->alias[s.n->operands[1]];
  s.v = pl->alias[s.n->operands[2]];
  s.mask = pl->alias[s.n->operands[3]];
  const poot_shape *qs = &poot__cc_type(pl, s.q)->shape, *ks = &poot__cc_type(pl, s.kk)->shape;
  int64_t tq = qs->dims[0], hq = qs->dims[1], dd = qs->dims[2], cap = ks->dims[0];
  int64_t grp = hq / ks->dims[1];
  s.wg = pl->wg;
  s.D = (uint32_t)dd;
  const poot_kir_target *t = pl->t;
  uint32_t sg = t->subgroup_ops ? t->subgroup_size : 0;
  bool use_sg = sg && s.wg % sg == 0;
  uint32_t S = g->split ? g->split : 1;
  bool split = S > 1 && g->aux_temp != UINT32_MAX;
  uint64_t nwg = (uint64_t)(tq * hq) * S;
  poot__cc_grid_for(nwg, grid);
  poot_kir_value qv[256];
  POOT_TRY(thr_arrays(k, &s));
  POOT_TRY(row_setup(k, nwg, split, S, hq, grp, &s.ar));
  POOT_TRY(thr_reset(k, &s, qv));
  /* A split past the row's share sweeps nothing (its partial is not read). */
  poot_kir_value end, c0, active;
  POOT_TRY(att_range(k, s.mask, s.ar.tt, split, S, cap, s.ar.sidx, &c0, &end, &active));
  POOT_TRY(thr_sweep(k, &s, qv, c0, end));
  k->flops += (uint64_t)nwg * (uint64_t)cap * (uint64_t)dd * 4;
  poot_kir_value m;
  POOT_TRY(poot_kir_priv_load(k->b, s.pm, 0, &m));
  if (use_sg) return thr_combine_sg(k, g, &s, split, sg, m);
  return thr_combine_tree(k, g, &s, split, m);
}

/* The combine of a split attention: one thread per (row, d) merges the
 * splits' partials (max of the maxima, rescaled sums). */
/* The combine's state: the partial records (binding ref, this row's base),
 * the splits that wrote one (nact), the dimension d, the running (L, O) and
 * the unrolled form's per-split M and in-range flags. */
typedef struct att_cmb {
  uint32_t S, D, ref, pm, pls, po;
  bool unrolled;
  poot_kir_value rbase, nact, d, z, one, ninf, zero;
  poot_kir_value msv[16], inn[16];
} att_cmb;

/* The splits' records, unrolled when there are few (independent loads):
 * M, the maximum of their M. */
static poot_status cmb_max(pc_kctx *k, att_cmb *c, poot_kir_value *out_M) {
  uint32_t D = c->D;
  poot_kir_value M = c->ninf, s;
  if (c->unrolled) {
    for (uint32_t si = 0; si < c->S; si++) {
      poot_kir_value o, x;
      c->inn[si] = 0;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), c->rbase, si * (D + 2), &o));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, c->ref, o, 1, &x));
      POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), x, &c->msv[si]));
      if (si) {
        POOT_TRY(poot__cc_bin_c(k, OP(GT), c->nact, si, &c->inn[si]));
        POOT_TRY(poot_kir_select(k->b, c->inn[si], c->msv[si], c->ninf, &c->msv[si]));
      }
      POOT_TRY(poot__cc_bin(k, OP(MAX), M, c->msv[si], &M));
    }
    *out_M = M;
    return NULL;
  }
  POOT_TRY(poot_kir_for_begin(k->b, c->z, c->nact, c->one, &s));
  {
    poot_kir_value o, x, m;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, D + 2, &o));
    POOT_TRY(poot__cc_bin(k, OP(ADD), o, c->rbase, &o));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, c->ref, o, 1, &x));
    POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), x, &x));
    POOT_TRY(poot_kir_priv_load(k->b, c->pm, 0, &m));
    POOT_TRY(poot__cc_bin(k, OP(MAX), m, x, &m));
    POOT_TRY(poot_kir_priv_store(k->b, c->pm, 0, m));
  }
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_priv_load(k->b, c->pm, 0, out_M);
}

/* Split si's (l, o[d]) weighted by e^(m - M) added to (L, O); not unrolled,
 * a loop over the nact splits. */
static poot_status cmb_add(pc_kctx *k, const att_cmb *c, uint32_t si, poot_kir_value M) {
  uint32_t D = c->D;
  poot_kir_value o, ms, ls, os, e, wgt, isn, a, od, s;
  if (c->unrolled) {
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), c->rbase, si * (D + 2), &o));
    ms = c->msv[si];
  } else {
    POOT_TRY(poot_kir_for_begin(k->b, c->z, c->nact, c->one, &s));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, D + 2, &o));
    POOT_TRY(poot__cc_bin(k, OP(ADD), o, c->rbase, &o));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, c->ref, o, 1, &ms));
    POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), ms, &ms));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), o, 1, &od));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, c->ref, od, 1, &ls));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), ls, &ls));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), o, 2, &od));
  POOT_TRY(poot__cc_bin(k, OP(ADD), od, c->d, &od));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, c->ref, od, 1, &os));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F32, 1), os, &os));
  if (c->unrolled && c->inn[si]) {
    POOT_TRY(poot_kir_select(k->b, c->inn[si], ls, c->zero, &ls));
    POOT_TRY(poot_kir_select(k->b, c->inn[si], os, c->zero, &os));
  }
  POOT_TRY(poot__cc_bin(k, OP(EQ), ms, c->ninf, &isn));
  POOT_TRY(poot__cc_bin(k, OP(SUB), ms, M, &e));
  POOT_TRY(poot_kir_unary(k->b, OP(EXP), e, &e));
  POOT_TRY(poot_kir_select(k->b, isn, c->zero, e, &wgt));
  POOT_TRY(poot_kir_priv_load(k->b, c->pls, 0, &a));
  POOT_TRY(poot__cc_bin(k, OP(MUL), ls, wgt, &ls));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a, ls, &a));
  POOT_TRY(poot_kir_priv_store(k->b, c->pls, 0, a));
  POOT_TRY(poot_kir_priv_load(k->b, c->po, 0, &a));
  POOT_TRY(poot__cc_bin(k, OP(MUL), os, wgt, &os));
  POOT_TRY(poot__cc_bin(k, OP(ADD), a, os, &a));
  POOT_TRY(poot_kir_priv_store(k->b, c->po, 0, a));
  return c->unrolled ? NULL : poot_kir_end(k->b);
}

poot_status poot__cc_tpl_attn_combine(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  const poot_shape *qs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  int64_t hq = qs->dims[1];
  att_cmb c;
  memset(&c, 0, sizeof c);
  c.D = (uint32_t)qs->dims[2];
  c.S = g->split;
  uint32_t D = c.D, S = c.S, wg = pl->wg;
  uint64_t nthreads = (uint64_t)(qs->dims[0] * hq) * D;
  poot__cc_grid_for((nthreads + wg - 1) / wg, grid);
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "cm", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &c.pm));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "cl", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &c.pls));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "co", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_F32, 1), 1, &c.po));
  poot_kir_value w, l, gid, valid, row, tt, h, Sv;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, wg, &gid));
  POOT_TRY(poot__cc_bin(k, OP(ADD), gid, l, &gid));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), gid, (uint32_t)nthreads, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), gid, D, &row));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), gid, D, &c.d));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), row, (uint32_t)hq, &tt));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), row, (uint32_t)hq, &h));
  POOT_TRY(poot__cc_u32(k, 0, &c.z));
  POOT_TRY(poot__cc_u32(k, 1, &c.one));
  POOT_TRY(poot__cc_u32(k, S, &Sv));
  POOT_TRY(fconst(k, -INFINITY, &c.ninf));
  POOT_TRY(fconst(k, 0.0f, &c.zero));
  POOT_TRY(poot_kir_priv_store(k->b, c.pm, 0, c.ninf));
  POOT_TRY(poot_kir_priv_store(k->b, c.pls, 0, c.zero));
  POOT_TRY(poot_kir_priv_store(k->b, c.po, 0, c.zero));
  POOT_TRY(poot__cc_binding_of(k, 0, &c.ref));
  poot_kir_value base;
  POOT_TRY(poot__cc_temp_base(k, g->aux_temp, true, &base));
  /* rec(s) = base + ((row * S) + s) * (D + 2) */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, S * (D + 2), &c.rbase));
  POOT_TRY(poot__cc_bin(k, OP(ADD), c.rbase, base, &c.rbase));
  /* Only the splits that held a share of the row (att_nsplit) wrote a
   * record; the others' words are stale. */
  poot_kir_value vis;
  POOT_TRY(att_nsplit(k, pl->alias[n->operands[3]], tt, S,
                      poot__cc_type(pl, pl->alias[n->operands[1]])->shape.dims[0], &c.nact, &vis));
  (void)Sv;
  c.unrolled = S <= 16;
  poot_kir_value M;
  POOT_TRY(cmb_max(k, &c, &M));
  for (uint32_t si = 0; si < (c.unrolled ? S : 1); si++) POOT_TRY(cmb_add(k, &c, si, M));
  poot_kir_value L, O, r, lin, oidx[3];
  POOT_TRY(poot_kir_priv_load(k->b, c.pls, 0, &L));
  POOT_TRY(poot_kir_priv_load(k->b, c.po, 0, &O));
  POOT_TRY(poot__cc_bin(k, OP(DIV), O, L, &r));
  oidx[0] = tt;
  oidx[1] = h;
  oidx[2] = c.d;
  POOT_TRY(poot__cc_linearize(k, oidx, &poot__cc_type(pl, g->out)->shape, &lin));
  POOT_TRY(poot__cc_store_value(k, g->dest, lin, r));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}
