/* templates/contract.c — reductions and dot_general (GEMV/GEMM) with the
 * elementwise prologue inlined into the loads (dequantize included) and an
 * elementwise epilogue over one or more accumulators (residual add, SwiGLU
 * of two GEMVs sharing their input).
 *
 * Modes (chosen from the target description only):
 *  serial  one thread per output, the contraction in index order: bit for
 *          bit poot_eval (short contractions, argmax, 16-bit or 64-bit
 *          accumulators);
 *  sg      one subgroup per output: lanes stride the contraction (adjacent
 *          lanes read adjacent elements: coalesced), four loads in flight
 *          per lane, then a subgroup reduction;
 *  wg      one workgroup per output with a shared-memory tree, for targets
 *          without subgroup operations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x
#define SERIAL_UNROLL 8

typedef struct croot {
  poot_value v;
  const poot_node *n;
  bool dot;
  poot_reduce_kind kind;
  poot_dtype acc;
  poot_value a, b; /* dot lhs/rhs, reduce input */
  poot_shape cshape;
  uint32_t cdims_a[POOT_MAX_RANK], cdims_b[POOT_MAX_RANK];
} croot;

static void root_init(pc_planner *pl, poot_value v, croot *r) {
  memset(r, 0, sizeof *r);
  r->v = v;
  r->n = pl->v[v].node;
  r->dot = r->n->op == POOT_OP_DOT_GENERAL;
  r->acc = r->n->attrs.dtype;
  r->a = pl->alias[r->n->operands[0]];
  if (r->dot) {
    r->b = pl->alias[r->n->operands[1]];
    const poot_dot_dims *dd = &r->n->attrs.dot;
    const poot_shape *as = &poot__cc_type(pl, r->a)->shape;
    r->cshape.rank = dd->num_contract;
    for (uint32_t i = 0; i < dd->num_contract; i++)
      r->cshape.dims[i] = as->dims[dd->lhs_contract[i]];
  } else {
    r->kind = r->n->attrs.reduce_kind;
    const poot_shape *xs = &poot__cc_type(pl, r->a)->shape;
    bool red[POOT_MAX_RANK] = {0};
    for (uint32_t i = 0; i < r->n->attrs.num_dims; i++) red[r->n->attrs.dims[i]] = true;
    for (uint32_t d = 0; d < xs->rank; d++)
      if (red[d]) {
        r->cdims_a[r->cshape.rank] = d;
        r->cshape.dims[r->cshape.rank++] = xs->dims[d];
      }
  }
}

/* The term of one contraction step at output idx and contraction index
 * cidx, already in the accumulation dtype (dot: the rounded product). */
static poot_status term(pc_kctx *k, const croot *r, const poot_kir_value *idx,
                        const poot_kir_value *cidx, poot_kir_value *out) {
  pc_planner *pl = k->pl;
  poot_kir_value ai[PC_MAX_DIMS], bi[PC_MAX_DIMS], x, y;
  if (!r->dot) {
    const poot_shape *xs = &poot__cc_type(pl, r->a)->shape;
    uint32_t oi = 0, ci = 0;
    for (uint32_t d = 0; d < xs->rank; d++) {
      if (ci < r->cshape.rank && r->cdims_a[ci] == d)
        ai[d] = cidx[ci++];
      else
        ai[d] = idx[oi++];
    }
    POOT_TRY(poot__cc_emit(k, r->a, ai, &x));
    if (r->kind == POOT_REDUCE_ARGMAX) {
      *out = x;
      return NULL;
    }
    return poot__cc_convert(k, x, poot__cc_type(pl, r->a)->dtype, r->acc, out);
  }
  const poot_dot_dims *dd = &r->n->attrs.dot;
  const poot_shape *as = &poot__cc_type(pl, r->a)->shape, *bs = &poot__cc_type(pl, r->b)->shape;
  uint32_t nb = dd->num_batch, pos = nb;
  bool used_a[POOT_MAX_RANK] = {0}, used_b[POOT_MAX_RANK] = {0};
  for (uint32_t i = 0; i < nb; i++) {
    ai[dd->lhs_batch[i]] = idx[i];
    bi[dd->rhs_batch[i]] = idx[i];
    used_a[dd->lhs_batch[i]] = used_b[dd->rhs_batch[i]] = true;
  }
  for (uint32_t i = 0; i < dd->num_contract; i++) {
    ai[dd->lhs_contract[i]] = cidx[i];
    bi[dd->rhs_contract[i]] = cidx[i];
    used_a[dd->lhs_contract[i]] = used_b[dd->rhs_contract[i]] = true;
  }
  for (uint32_t d = 0; d < as->rank; d++)
    if (!used_a[d]) ai[d] = idx[pos++];
  for (uint32_t d = 0; d < bs->rank; d++)
    if (!used_b[d]) bi[d] = idx[pos++];
  POOT_TRY(poot__cc_emit(k, r->a, ai, &x));
  POOT_TRY(poot__cc_emit(k, r->b, bi, &y));
  POOT_TRY(poot__cc_convert(k, x, poot__cc_type(pl, r->a)->dtype, r->acc, &x));
  POOT_TRY(poot__cc_convert(k, y, poot__cc_type(pl, r->b)->dtype, r->acc, &y));
  k->flops += 2;
  return poot__cc_accum(k, OP(MUL), r->acc, x, y, out);
}

static poot_kir_op acc_op(const croot *r) {
  if (r->dot || r->kind == POOT_REDUCE_SUM) return OP(ADD);
  return r->kind == POOT_REDUCE_MAX ? OP(MAX) : OP(MIN);
}

static poot_status identity(pc_kctx *k, const croot *r, poot_kir_value *out) {
  poot_kir_op op = acc_op(r);
  if (op == OP(ADD)) return poot__cc_const_of(k, r->acc, 0.0, 0, out);
  bool mx = op == OP(MAX);
  if (poot_dtype_is_float(r->acc))
    return poot__cc_const_of(k, r->acc, mx ? -INFINITY : INFINITY, 0, out);
  int64_t lo = 0, hi = 0;
  switch (r->acc) {
    case POOT_DTYPE_I8:
      lo = -128, hi = 127;
      break;
    case POOT_DTYPE_I16:
      lo = -32768, hi = 32767;
      break;
    case POOT_DTYPE_I32:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    case POOT_DTYPE_U8:
      lo = 0, hi = 255;
      break;
    case POOT_DTYPE_U32:
      lo = 0, hi = UINT32_MAX;
      break;
    case POOT_DTYPE_I64:
      lo = INT64_MIN, hi = INT64_MAX;
      break;
    case POOT_DTYPE_BOOL:
      lo = 0, hi = 1;
      break;
    default:
      break;
  }
  return poot__cc_const_of(k, r->acc, 0.0, mx ? lo : hi, out);
}

static bool coop_ok(const croot *r) {
  if (!r->dot && r->kind == POOT_REDUCE_ARGMAX) return false;
  poot_kir_scalar s = poot__cc_compute_scalar(r->acc);
  if (r->acc != POOT_DTYPE_F32 && r->acc != POOT_DTYPE_I32 && r->acc != POOT_DTYPE_U32)
    return false;
  return s == POOT_KIR_F32 || s == POOT_KIR_I32 || s == POOT_KIR_U32;
}

/* The terms of every root at contraction index c (u32). */
static poot_status terms(pc_kctx *k, const croot *rs, uint32_t nr, const poot_kir_value *idx,
                         poot_kir_value c, poot_kir_value *out) {
  poot_kir_value cidx[PC_MAX_DIMS];
  POOT_TRY(poot__cc_delinearize(k, c, &rs[0].cshape, cidx));
  for (uint32_t i = 0; i < nr; i++) POOT_TRY(term(k, &rs[i], idx, cidx, &out[i]));
  return NULL;
}

/* Adds the terms t[] (at contraction index c) to the private accumulators. */
static poot_status update(pc_kctx *k, const croot *rs, uint32_t nr, const poot_kir_value *tv,
                          poot_kir_value c, poot_kir_value inrange, uint32_t pacc, uint32_t parg) {
  for (uint32_t i = 0; i < nr; i++) {
    poot_kir_value t = tv[i], a;
    POOT_TRY(poot_kir_priv_load(k->b, pacc, i, &a));
    if (!rs[i].dot && rs[i].kind == POOT_REDUCE_ARGMAX) {
      /* better: t > best, or t is NaN and best is not (the first NaN wins) */
      poot_kir_value gt = 0, na, nb, nnb, tmp, bi, ci;
      POOT_TRY(poot__cc_bin(k, OP(GT), t, a, &gt));
      if (poot_kir_builder_value_type(k->b, t).scalar == POOT_KIR_F32) {
        POOT_TRY(poot__cc_bin(k, OP(NE), t, t, &na));
        POOT_TRY(poot__cc_bin(k, OP(NE), a, a, &nb));
        POOT_TRY(poot_kir_unary(k->b, OP(NOT), nb, &nnb));
        POOT_TRY(poot__cc_bin(k, OP(AND), na, nnb, &tmp));
        POOT_TRY(poot__cc_bin(k, OP(OR), gt, tmp, &gt));
      }
      POOT_TRY(poot_kir_select(k->b, gt, t, a, &a));
      POOT_TRY(poot_kir_priv_store(k->b, pacc, i, a));
      POOT_TRY(poot_kir_priv_load(k->b, parg, 0, &bi));
      POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_I32, 1), c, &ci));
      POOT_TRY(poot_kir_select(k->b, gt, ci, bi, &bi));
      POOT_TRY(poot_kir_priv_store(k->b, parg, 0, bi));
      continue;
    }
    if (inrange) {
      poot_kir_value id;
      POOT_TRY(identity(k, &rs[i], &id));
      POOT_TRY(poot_kir_select(k->b, inrange, t, id, &t));
    }
    POOT_TRY(poot__cc_accum(k, acc_op(&rs[i]), rs[i].acc, a, t, &a));
    POOT_TRY(poot_kir_priv_store(k->b, pacc, i, a));
  }
  return NULL;
}

/* Adds the terms at contraction index c (u32) to the private accumulators. */
static poot_status step(pc_kctx *k, const croot *rs, uint32_t nr, const poot_kir_value *idx,
                        poot_kir_value c, poot_kir_value inrange, uint32_t pacc, uint32_t parg) {
  poot_kir_value tv[PG_MAX_ROOTS];
  POOT_TRY(terms(k, rs, nr, idx, c, tv));
  return update(k, rs, nr, tv, c, inrange, pacc, parg);
}

static poot_status finish(pc_kctx *k, const pc_group *g, const croot *rs, uint32_t nr,
                          const poot_kir_value *idx, const poot_kir_value *accs,
                          poot_kir_value lin) {
  for (uint32_t i = 0; i < nr; i++) POOT_TRY(poot__cc_memo_put(k, rs[i].v, idx, accs[i]));
  poot_kir_value val;
  POOT_TRY(poot__cc_emit(k, g->out, idx, &val));
  return poot__cc_store_value(k, g->dest, lin, val);
}

/* v "beats" w in an argmax: greater, or NaN where w is not (the first NaN
 * wins); `eq`: the same value (both NaN counts as the same). */
static poot_status argmax_beats(pc_kctx *k, poot_kir_value v, poot_kir_value w,
                                poot_kir_value *beats, poot_kir_value *eq) {
  POOT_TRY(poot__cc_bin(k, OP(GT), v, w, beats));
  POOT_TRY(poot__cc_bin(k, OP(EQ), v, w, eq));
  if (poot_kir_builder_value_type(k->b, v).scalar != POOT_KIR_F32) return NULL;
  poot_kir_value nv, nw, nnw, t;
  POOT_TRY(poot__cc_bin(k, OP(NE), v, v, &nv));
  POOT_TRY(poot__cc_bin(k, OP(NE), w, w, &nw));
  POOT_TRY(poot_kir_unary(k->b, OP(NOT), nw, &nnw));
  POOT_TRY(poot__cc_bin(k, OP(AND), nv, nnw, &t));
  POOT_TRY(poot__cc_bin(k, OP(OR), *beats, t, beats));
  POOT_TRY(poot__cc_bin(k, OP(AND), nv, nw, &t));
  return poot__cc_bin(k, OP(OR), *eq, t, eq);
}

/* argmax by subgroups: one subgroup per output; each lane walks its strided
 * indices in increasing order (so it keeps its first maximum), four loads in
 * flight, then a butterfly over the lanes keeps the greater value and, among
 * equal ones, the smaller index: the oracle's first maximum / first NaN. */
static poot_status argmax_sg(pc_kctx *k, const pc_group *g, const croot *r, uint32_t grid[3],
                             int64_t nout, int64_t clen) {
  pc_planner *pl = k->pl;
  uint32_t sg = pl->t->subgroup_size, per = pl->wg / sg;
  const poot_shape *os = &poot__cc_type(pl, g->roots[0])->shape;
  poot_dtype xd = poot__cc_type(pl, r->a)->dtype;
  poot_kir_scalar xs = poot__cc_compute_scalar(xd);
  char nm[32];
  uint32_t pacc, parg;
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "acc", nm, sizeof nm),
                                poot_kir_type_make(xs, 1), 1, &pacc));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "arg", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_I32, 1), 1, &parg));
  POOT_TRY(poot__cc_local_prologue(k, g));
  poot__cc_grid_for(((uint64_t)nout + per - 1) / per, grid);
  poot_kir_value w, sid, lane, o, valid, oc, z, id, big, idx[PC_MAX_DIMS];
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, per, &o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), o, sid, &o));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), o, (uint32_t)nout, &valid));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(nout - 1), &oc));
  POOT_TRY(poot__cc_bin(k, OP(MIN), o, oc, &oc));
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_delinearize(k, oc, os, idx));
  POOT_TRY(poot__cc_const_of(k, xd, -INFINITY, xd == POOT_DTYPE_I32 ? INT32_MIN : 0, &id));
  POOT_TRY(poot_kir_const_i32(k->b, INT32_MAX, &big)); /* a lane that saw nothing loses every tie */
  POOT_TRY(poot_kir_priv_store(k->b, pacc, 0, id));
  POOT_TRY(poot_kir_priv_store(k->b, parg, 0, big));
  uint32_t un = clen >= (int64_t)sg * 4 ? 4 : 1;
  poot_kir_value end, stepv, c0, cm1;
  POOT_TRY(poot__cc_u32(k, (uint32_t)clen, &end));
  POOT_TRY(poot__cc_u32(k, sg * un, &stepv));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(clen - 1), &cm1));
  POOT_TRY(poot_kir_for_begin(k->b, lane, end, stepv, &c0));
  poot__cc_scope_push(k);
  poot_kir_value cu[4], tv[4][PG_MAX_ROOTS];
  for (uint32_t u = 0; u < un; u++) {
    cu[u] = c0;
    if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c0, u * sg, &cu[u]));
    /* past the end: the last element again (a real candidate; no harm) */
    if (un > 1 && clen % (int64_t)(sg * un) != 0)
      POOT_TRY(poot__cc_bin(k, OP(MIN), cu[u], cm1, &cu[u]));
    POOT_TRY(terms(k, r, 1, idx, cu[u], tv[u]));
  }
  for (uint32_t u = 0; u < un; u++) {
    poot_kir_value a, bi, ci, beats, eq, earlier, take;
    POOT_TRY(poot_kir_priv_load(k->b, pacc, 0, &a));
    POOT_TRY(poot_kir_priv_load(k->b, parg, 0, &bi));
    POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_I32, 1), cu[u], &ci));
    POOT_TRY(argmax_beats(k, tv[u][0], a, &beats, &eq));
    POOT_TRY(poot__cc_bin(k, OP(LT), ci, bi, &earlier));
    POOT_TRY(poot__cc_bin(k, OP(AND), eq, earlier, &take));
    POOT_TRY(poot__cc_bin(k, OP(OR), beats, take, &take));
    POOT_TRY(poot_kir_select(k->b, take, tv[u][0], a, &a));
    POOT_TRY(poot_kir_select(k->b, take, ci, bi, &bi));
    POOT_TRY(poot_kir_priv_store(k->b, pacc, 0, a));
    POOT_TRY(poot_kir_priv_store(k->b, parg, 0, bi));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  poot_kir_value a, bi;
  POOT_TRY(poot_kir_priv_load(k->b, pacc, 0, &a));
  POOT_TRY(poot_kir_priv_load(k->b, parg, 0, &bi));
  for (uint32_t mask = sg / 2; mask >= 1; mask /= 2) {
    poot_kir_value ov, oi, beats, eq, earlier, take;
    POOT_TRY(poot_kir_subgroup_shuffle_xor(k->b, a, mask, &ov));
    POOT_TRY(poot_kir_subgroup_shuffle_xor(k->b, bi, mask, &oi));
    POOT_TRY(argmax_beats(k, ov, a, &beats, &eq));
    POOT_TRY(poot__cc_bin(k, OP(LT), oi, bi, &earlier));
    POOT_TRY(poot__cc_bin(k, OP(AND), eq, earlier, &take));
    POOT_TRY(poot__cc_bin(k, OP(OR), beats, take, &take));
    POOT_TRY(poot_kir_select(k->b, take, ov, a, &a));
    POOT_TRY(poot_kir_select(k->b, take, oi, bi, &bi));
  }
  poot_kir_value first, cond;
  POOT_TRY(poot__cc_bin(k, OP(EQ), lane, z, &first));
  POOT_TRY(poot__cc_bin(k, OP(AND), first, valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  poot__cc_scope_push(k);
  POOT_TRY(finish(k, g, r, 1, idx, &bi, oc));
  poot__cc_scope_pop(k);
  k->flops += (uint64_t)nout * (uint64_t)clen;
  return poot_kir_end(k->b);
}

/* What the serial and cooperative forms share: the roots, the output
 * shape and sizes, the accumulators and two constants. */
typedef struct cform {
  const pc_group *g;
  croot rs[PG_MAX_ROOTS];
  uint32_t nr;
  const poot_shape *os;
  int64_t nout, clen;
  uint32_t wg;
  uint32_t pacc, parg;
  poot_kir_scalar as;
  poot_kir_value z, one;
} cform;

/* The accumulators' start values (an argmax: index 0 and the dtype's
 * lowest value). */
static poot_status serial_init(pc_kctx *k, const cform *f) {
  for (uint32_t i = 0; i < f->nr; i++) {
    poot_kir_value id;
    if (!f->rs[i].dot && f->rs[i].kind == POOT_REDUCE_ARGMAX) {
      poot_kir_value zi;
      POOT_TRY(poot_kir_const_i32(k->b, 0, &zi));
      POOT_TRY(poot_kir_priv_store(k->b, f->parg, 0, zi));
      poot_dtype xd = poot__cc_type(k->pl, f->rs[i].a)->dtype;
      POOT_TRY(poot__cc_const_of(k, xd, -INFINITY,
                                 xd == POOT_DTYPE_U32 || xd == POOT_DTYPE_U8
                                     ? 0
                                     : (xd == POOT_DTYPE_I64 ? INT64_MIN : INT32_MIN),
                                 &id));
    } else {
      POOT_TRY(identity(k, &f->rs[i], &id));
    }
    POOT_TRY(poot_kir_priv_store(k->b, f->pacc, i, id));
  }
  return NULL;
}

/* The serial walk of one output's contraction. In index order (bit for bit
 * the oracle's), SERIAL_UNROLL indices per iteration with every load issued
 * before the first update: a serial walk is bound by load latency, not by
 * its arithmetic. */
static poot_status serial_walk(pc_kctx *k, const cform *f, const poot_kir_value *idx) {
  poot_kir_value end, c;
  uint32_t un = f->clen >= 2 * SERIAL_UNROLL ? SERIAL_UNROLL : 1;
  uint32_t body = (uint32_t)f->clen / un * un;
  if (body > 0) {
    poot_kir_value stepu;
    POOT_TRY(poot__cc_u32(k, body, &end));
    POOT_TRY(poot__cc_u32(k, un, &stepu));
    POOT_TRY(poot_kir_for_begin(k->b, f->z, end, stepu, &c));
    poot__cc_scope_push(k);
    poot_kir_value cu[SERIAL_UNROLL], tv[SERIAL_UNROLL][PG_MAX_ROOTS];
    for (uint32_t u = 0; u < un; u++) {
      cu[u] = c;
      if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, u, &cu[u]));
      POOT_TRY(terms(k, f->rs, f->nr, idx, cu[u], tv[u]));
    }
    for (uint32_t u = 0; u < un; u++)
      POOT_TRY(update(k, f->rs, f->nr, tv[u], cu[u], 0, f->pacc, f->parg));
    poot__cc_scope_pop(k);
    POOT_TRY(poot_kir_end(k->b));
  }
  if (body < (uint32_t)f->clen) {
    poot_kir_value from;
    POOT_TRY(poot__cc_u32(k, body, &from));
    POOT_TRY(poot__cc_u32(k, (uint32_t)f->clen, &end));
    POOT_TRY(poot_kir_for_begin(k->b, from, end, f->one, &c));
    poot__cc_scope_push(k);
    POOT_TRY(step(k, f->rs, f->nr, idx, c, 0, f->pacc, f->parg));
    poot__cc_scope_pop(k);
    POOT_TRY(poot_kir_end(k->b));
  }
  return NULL;
}

/* The serial form: one thread per output. */
static poot_status contract_serial(pc_kctx *k, const cform *f, uint32_t grid[3]) {
  uint32_t wg = f->wg;
  poot_kir_value idx[PC_MAX_DIMS], w, l, o, accs[PG_MAX_ROOTS];
  poot__cc_grid_for(((uint64_t)f->nout + wg - 1) / wg, grid);
  poot_kir_value valid;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, wg, &w));
  POOT_TRY(poot__cc_bin(k, OP(ADD), w, l, &o));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), o, (uint32_t)f->nout, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_delinearize(k, o, f->os, idx));
  POOT_TRY(serial_init(k, f));
  POOT_TRY(serial_walk(k, f, idx));
  for (uint32_t i = 0; i < f->nr; i++) {
    if (!f->rs[i].dot && f->rs[i].kind == POOT_REDUCE_ARGMAX)
      POOT_TRY(poot_kir_priv_load(k->b, f->parg, 0, &accs[i]));
    else
      POOT_TRY(poot_kir_priv_load(k->b, f->pacc, i, &accs[i]));
  }
  POOT_TRY(finish(k, f->g, f->rs, f->nr, idx, accs, o));
  poot__cc_scope_pop(k);
  k->flops += (uint64_t)f->nout * (uint64_t)f->clen * f->nr;
  return poot_kir_end(k->b);
}

/* Root i's accumulator a combined over the workgroup through a shared tree
 * (every thread gets the result). */
static poot_status wg_combine(pc_kctx *k, const cform *f, uint32_t i, poot_kir_op op,
                              poot_kir_value lane, poot_kir_value a, poot_kir_value *out) {
  char name[16];
  snprintf(name, sizeof name, "red%u_%u", i, k->tag);
  uint32_t sh;
  POOT_TRY(poot_kir_add_shared(k->b, name, f->as, f->wg, &sh));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lane, a));
  POOT_TRY(poot_kir_barrier(k->b));
  for (uint32_t s = f->wg / 2; s >= 1; s /= 2) {
    poot_kir_value lt, x, y, j, r;
    POOT_TRY(poot__cc_bin_c(k, OP(LT), lane, s, &lt));
    POOT_TRY(poot_kir_if_begin(k->b, lt));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), lane, s, &j));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, lane, 1, &x));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, j, 1, &y));
    POOT_TRY(poot__cc_accum(k, op, f->rs[i].acc, x, y, &r));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lane, r));
    POOT_TRY(poot_kir_end(k->b));
    POOT_TRY(poot_kir_barrier(k->b));
  }
  return poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, f->z, 1, out);
}

/* The lanes' strided walk of the contraction, unrolled 4 when long enough
 * (an index past the end is clamped and masked). */
static poot_status coop_walk(pc_kctx *k, const cform *f, uint32_t lanes, poot_kir_value lane,
                             const poot_kir_value *idx) {
  int64_t clen = f->clen;
  uint32_t unroll = clen >= (int64_t)lanes * 4 ? 4 : 1;
  poot_kir_value end, stepv, c0, cm1;
  POOT_TRY(poot__cc_u32(k, (uint32_t)clen, &end));
  POOT_TRY(poot__cc_u32(k, lanes * unroll, &stepv));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(clen - 1), &cm1));
  POOT_TRY(poot_kir_for_begin(k->b, lane, end, stepv, &c0));
  poot__cc_scope_push(k);
  for (uint32_t u = 0; u < unroll; u++) {
    poot_kir_value c = c0, inr = 0, cc;
    if (u) POOT_TRY(poot__cc_bin_c(k, OP(ADD), c0, u * lanes, &c));
    if (unroll > 1 && (clen % (int64_t)(lanes * unroll)) != 0) {
      POOT_TRY(poot__cc_bin(k, OP(LT), c, end, &inr));
      POOT_TRY(poot__cc_bin(k, OP(MIN), c, cm1, &cc));
    } else {
      cc = c;
    }
    POOT_TRY(step(k, f->rs, f->nr, idx, cc, inr, f->pacc, f->parg));
  }
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* Cooperative: `per` outputs per workgroup, `lanes` threads per output (a
 * subgroup each with use_sg, else the whole workgroup). */
static poot_status contract_coop(pc_kctx *k, const cform *f, bool use_sg, uint32_t sg,
                                 uint32_t grid[3]) {
  uint32_t wg = f->wg, nr = f->nr;
  uint32_t lanes = use_sg ? sg : wg, per = wg / lanes;
  poot_kir_value idx[PC_MAX_DIMS], w, o, accs[PG_MAX_ROOTS];
  poot__cc_grid_for(((uint64_t)f->nout + per - 1) / per, grid);
  poot_kir_value lane, valid, oc, nm1;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  if (use_sg) {
    poot_kir_value sid;
    POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
    POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, per, &o));
    POOT_TRY(poot__cc_bin(k, OP(ADD), o, sid, &o));
  } else {
    o = w;
    POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lane));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(LT), o, (uint32_t)f->nout, &valid));
  POOT_TRY(poot__cc_u32(k, (uint32_t)(f->nout - 1), &nm1));
  POOT_TRY(poot__cc_bin(k, OP(MIN), o, nm1, &oc));
  POOT_TRY(poot__cc_delinearize(k, oc, f->os, idx));
  for (uint32_t i = 0; i < nr; i++) {
    poot_kir_value id;
    POOT_TRY(identity(k, &f->rs[i], &id));
    POOT_TRY(poot_kir_priv_store(k->b, f->pacc, i, id));
  }
  POOT_TRY(coop_walk(k, f, lanes, lane, idx));
  for (uint32_t i = 0; i < nr; i++) {
    poot_kir_value a;
    POOT_TRY(poot_kir_priv_load(k->b, f->pacc, i, &a));
    poot_kir_op op = acc_op(&f->rs[i]);
    if (use_sg) {
      poot_kir_op sop = op == OP(ADD)   ? OP(SG_REDUCE_ADD)
                        : op == OP(MAX) ? OP(SG_REDUCE_MAX)
                                        : OP(SG_REDUCE_MIN);
      POOT_TRY(poot_kir_subgroup_reduce(k->b, sop, a, &accs[i]));
    } else {
      POOT_TRY(wg_combine(k, f, i, op, lane, a, &accs[i]));
    }
  }
  poot_kir_value first, cond;
  POOT_TRY(poot__cc_bin(k, OP(EQ), lane, f->z, &first));
  POOT_TRY(poot__cc_bin(k, OP(AND), first, valid, &cond));
  POOT_TRY(poot_kir_if_begin(k->b, cond));
  poot__cc_scope_push(k);
  POOT_TRY(finish(k, f->g, f->rs, nr, idx, accs, oc));
  poot__cc_scope_pop(k);
  k->flops += (uint64_t)f->nout * (uint64_t)f->clen * nr;
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_contract(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                  const char **out_what) {
  pc_planner *pl = k->pl;
  bool gemv = false;
  POOT_TRY(poot__cc_tpl_gemv(k, g, grid, out_what, &gemv));
  if (gemv) return NULL;
  bool gemm = false;
  POOT_TRY(poot__cc_tpl_gemm(k, g, grid, out_what, &gemm));
  if (gemm) return NULL;
  cform f;
  memset(&f, 0, sizeof f);
  f.g = g;
  f.nr = g->nroots;
  bool coop = true;
  for (uint32_t i = 0; i < f.nr; i++) {
    root_init(pl, g->roots[i], &f.rs[i]);
    if (!coop_ok(&f.rs[i])) coop = false;
  }
  croot *rs = f.rs;
  f.os = &poot__cc_type(pl, g->roots[0])->shape;
  f.nout = poot__cc_elems(f.os);
  f.clen = poot__cc_elems(&rs[0].cshape);
  uint32_t coop_min = pl->opt->coop_min ? pl->opt->coop_min : 64;
  if (f.clen < (int64_t)coop_min) coop = false;
  const poot_kir_target *t = pl->t;
  uint32_t wg = pl->wg, sg = t->subgroup_ops ? t->subgroup_size : 0;
  f.wg = wg;
  bool use_sg = coop && sg && wg % sg == 0 && wg >= sg;
  bool use_wg = coop && !use_sg && (wg & (wg - 1)) == 0;
  if (f.nr == 1 && !rs[0].dot && rs[0].kind == POOT_REDUCE_ARGMAX && sg && wg % sg == 0 &&
      f.clen >= (int64_t)coop_min && f.clen <= INT32_MAX) {
    poot_dtype xd = poot__cc_type(pl, rs[0].a)->dtype;
    if (xd == POOT_DTYPE_F32 || xd == POOT_DTYPE_I32) {
      *out_what = "argmax sg";
      return argmax_sg(k, g, &rs[0], grid, f.nout, f.clen);
    }
  }
  *out_what = use_sg ? "sg" : use_wg ? "wg" : "serial";
  f.as = poot__cc_compute_scalar(rs[0].acc);
  if (!rs[0].dot && rs[0].kind == POOT_REDUCE_ARGMAX)
    f.as = poot__cc_compute_scalar(poot__cc_type(pl, rs[0].a)->dtype);
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "acc", nm, sizeof nm),
                                poot_kir_type_make(f.as, 1), f.nr, &f.pacc));
  if (!rs[0].dot && rs[0].kind == POOT_REDUCE_ARGMAX)
    POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "arg", nm, sizeof nm),
                                  poot_kir_type_make(POOT_KIR_I32, 1), 1, &f.parg));
  POOT_TRY(poot__cc_local_prologue(k, g));
  POOT_TRY(poot__cc_u32(k, 0, &f.z));
  POOT_TRY(poot__cc_u32(k, 1, &f.one));
  if (f.nout == 0) {
    grid[0] = grid[1] = grid[2] = 1;
    return NULL;
  }
  if (!use_sg && !use_wg) return contract_serial(k, &f, grid);
  return contract_coop(k, &f, use_sg, sg, grid);
}

/* Small reductions (RMSNorm statistics) recomputed by each workgroup that
 * reads them, instead of a dispatch of their own: every thread strides the
 * reduction, then subgroup reductions and a shared table (or a shared tree
 * without subgroups) combine it; the result is kept in shared memory. */
poot_status poot__cc_local_prologue(pc_kctx *k, const pc_group *g) {
  pc_planner *pl = k->pl;
  uint32_t wg = pl->wg;
  const poot_kir_target *t = pl->t;
  uint32_t sg = t->subgroup_ops ? t->subgroup_size : 0;
  bool use_sg = sg && wg % sg == 0;
  for (uint32_t li = 0; li < g->nlocal; li++) {
    croot r;
    root_init(pl, g->locals[li], &r);
    const poot_shape *os = &poot__cc_type(pl, r.v)->shape;
    int64_t nout = poot__cc_elems(os), clen = poot__cc_elems(&r.cshape);
    poot_kir_scalar as = poot__cc_compute_scalar(r.acc);
    char nm[32];
    uint32_t sh, part, pacc;
    snprintf(nm, sizeof nm, "loc%u_%u", li, k->tag);
    POOT_TRY(poot_kir_add_shared(k->b, nm, as, (uint32_t)nout, &sh));
    snprintf(nm, sizeof nm, "lpart%u_%u", li, k->tag);
    POOT_TRY(poot_kir_add_shared(k->b, nm, as, use_sg ? wg / sg : wg, &part));
    snprintf(nm, sizeof nm, "lacc%u_%u", li, k->tag);
    POOT_TRY(poot_kir_add_private(k->b, nm, poot_kir_type_make(as, 1), 1, &pacc));
    poot_kir_value lid, z, end, stepv, first;
    POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
    POOT_TRY(poot__cc_u32(k, 0, &z));
    POOT_TRY(poot__cc_u32(k, (uint32_t)clen, &end));
    POOT_TRY(poot__cc_u32(k, wg, &stepv));
    POOT_TRY(poot__cc_bin(k, OP(EQ), lid, z, &first));
    for (int64_t o = 0; o < nout; o++) {
      poot_kir_value ov, idx[PC_MAX_DIMS], id, c, a, tot;
      POOT_TRY(poot__cc_u32(k, (uint32_t)o, &ov));
      POOT_TRY(poot__cc_delinearize(k, ov, os, idx));
      POOT_TRY(identity(k, &r, &id));
      POOT_TRY(poot_kir_priv_store(k->b, pacc, 0, id));
      POOT_TRY(poot_kir_for_begin(k->b, lid, end, stepv, &c));
      poot__cc_scope_push(k);
      POOT_TRY(step(k, &r, 1, idx, c, 0, pacc, 0));
      poot__cc_scope_pop(k);
      POOT_TRY(poot_kir_end(k->b));
      POOT_TRY(poot_kir_priv_load(k->b, pacc, 0, &a));
      poot_kir_op op = acc_op(&r);
      if (use_sg) {
        poot_kir_op sop = op == OP(ADD)   ? OP(SG_REDUCE_ADD)
                          : op == OP(MAX) ? OP(SG_REDUCE_MAX)
                                          : OP(SG_REDUCE_MIN);
        poot_kir_value sid, lane, l0, s;
        POOT_TRY(poot_kir_subgroup_reduce(k->b, sop, a, &s));
        POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
        POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
        POOT_TRY(poot__cc_bin(k, OP(EQ), lane, z, &l0));
        POOT_TRY(poot_kir_if_begin(k->b, l0));
        POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, part, sid, s));
        POOT_TRY(poot_kir_end(k->b));
        POOT_TRY(poot_kir_barrier(k->b));
        POOT_TRY(poot_kir_if_begin(k->b, first));
        poot__cc_scope_push(k);
        tot = 0;
        for (uint32_t j = 0; j < wg / sg; j++) {
          poot_kir_value jj, x;
          POOT_TRY(poot__cc_u32(k, j, &jj));
          POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, part, jj, 1, &x));
          if (tot)
            POOT_TRY(poot__cc_accum(k, op, r.acc, tot, x, &tot));
          else
            tot = x;
        }
        POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, ov, tot));
        poot__cc_scope_pop(k);
        POOT_TRY(poot_kir_end(k->b));
        POOT_TRY(poot_kir_barrier(k->b));
      } else {
        POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, part, lid, a));
        POOT_TRY(poot_kir_barrier(k->b));
        for (uint32_t s2 = wg / 2; s2 >= 1; s2 /= 2) {
          poot_kir_value lt, x, y, j, rr;
          POOT_TRY(poot__cc_bin_c(k, OP(LT), lid, s2, &lt));
          POOT_TRY(poot_kir_if_begin(k->b, lt));
          POOT_TRY(poot__cc_bin_c(k, OP(ADD), lid, s2, &j));
          POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, part, lid, 1, &x));
          POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, part, j, 1, &y));
          POOT_TRY(poot__cc_accum(k, op, r.acc, x, y, &rr));
          POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, part, lid, rr));
          POOT_TRY(poot_kir_end(k->b));
          POOT_TRY(poot_kir_barrier(k->b));
        }
        POOT_TRY(poot_kir_if_begin(k->b, first));
        POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, part, z, 1, &tot));
        POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, ov, tot));
        POOT_TRY(poot_kir_end(k->b));
        POOT_TRY(poot_kir_barrier(k->b));
      }
    }
    if (k->nlocal >= 4) return poot_status_make(POOT_INTERNAL, "compile: too many local values");
    k->local_v[k->nlocal] = r.v;
    k->local_sh[k->nlocal++] = sh;
    k->flops += (uint64_t)nout * (uint64_t)clen * 2;
  }
  return NULL;
}
