/* templates/attention.c — "poot.attention" lowered by name: one workgroup
 * per (query position, query head) sweeps the whole [cap] once with an
 * online softmax (running max, running sum and the weighted sum of V rows
 * per thread), then the threads are combined: a subgroup reduction and a
 * small shared table where the target has subgroups, a shared-memory tree
 * otherwise. Grouped-query heads read kv head h / (Hq / Hkv). Decode
 * (T = 1) and prefill (T > 1, the causal mask is the graph's) use the same
 * template. Scores are computed as the decomposition does (q·k in index
 * order, times the f32 scale, masked to -inf); the softmax is reassociated
 * (tier 2). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define T POOT_TRY
#define OP(x) POOT_KIR_OP_##x

double pc_attention_scale(const poot_node *n) {
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
  T(pc_u32(k, 0, &z));
  T(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lid, x));
  T(poot_kir_barrier(k->b));
  for (uint32_t s = wg / 2; s >= 1; s /= 2) {
    poot_kir_value lt, a, b, j, r;
    T(pc_bin_c(k, OP(LT), lid, s, &lt));
    T(poot_kir_if_begin(k->b, lt));
    T(pc_bin_c(k, OP(ADD), lid, s, &j));
    T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, lid, 1, &a));
    T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, j, 1, &b));
    T(pc_bin(k, mx ? OP(MAX) : OP(ADD), a, b, &r));
    T(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sh, lid, r));
    T(poot_kir_end(k->b));
    T(poot_kir_barrier(k->b));
  }
  T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sh, z, 1, out));
  return poot_kir_barrier(k->b);
}

poot_status pc_tpl_attention(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value q = pl->alias[n->operands[0]], kk = pl->alias[n->operands[1]];
  poot_value v = pl->alias[n->operands[2]], mask = pl->alias[n->operands[3]];
  const poot_shape *qs = &pc_type(pl, q)->shape, *ks = &pc_type(pl, kk)->shape;
  int64_t tq = qs->dims[0], hq = qs->dims[1], dd = qs->dims[2], cap = ks->dims[0];
  int64_t grp = hq / ks->dims[1];
  uint32_t wg = pl->wg, D = (uint32_t)dd;
  const poot_kir_target *t = pl->t;
  uint32_t sg = t->subgroup_ops ? t->subgroup_size : 0;
  bool use_sg = sg && wg % sg == 0;
  uint64_t nwg = (uint64_t)(tq * hq);
  pc_grid_for(nwg, grid);
  char nm[32];
  uint32_t pm, pl_, pacc;
  T(poot_kir_add_private(k->b, pc_name(k, "m", nm, sizeof nm), poot_kir_type_make(POOT_KIR_F32, 1), 1, &pm));
  T(poot_kir_add_private(k->b, pc_name(k, "l", nm, sizeof nm), poot_kir_type_make(POOT_KIR_F32, 1), 1, &pl_));
  T(poot_kir_add_private(k->b, pc_name(k, "o", nm, sizeof nm), poot_kir_type_make(POOT_KIR_F32, 1), D, &pacc));
  poot_kir_value w, lid, valid, wc, tt, h, hk, ninf, zero, one;
  T(pc_linear_workgroup(k, &w));
  T(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  T(pc_bin_c(k, OP(LT), w, (uint32_t)nwg, &valid));
  T(pc_u32(k, (uint32_t)(nwg - 1), &wc));
  T(pc_bin(k, OP(MIN), w, wc, &wc));
  T(pc_bin_c(k, OP(DIV), wc, (uint32_t)hq, &tt));
  T(pc_bin_c(k, OP(REM), wc, (uint32_t)hq, &h));
  T(pc_bin_c(k, OP(DIV), h, (uint32_t)grp, &hk));
  T(fconst(k, -INFINITY, &ninf));
  T(fconst(k, 0.0f, &zero));
  T(fconst(k, 1.0f, &one));
  T(poot_kir_priv_store(k->b, pm, 0, ninf));
  T(poot_kir_priv_store(k->b, pl_, 0, zero));
  for (uint32_t d = 0; d < D; d++) T(poot_kir_priv_store(k->b, pacc, d, zero));
  /* q row in registers */
  poot_kir_value qv[256];
  for (uint32_t d = 0; d < D; d++) {
    poot_kir_value idx[3] = {tt, h, 0};
    T(pc_u32(k, d, &idx[2]));
    T(pc_emit(k, q, idx, &qv[d]));
  }
  poot_kir_value end, stepv, c, scale;
  T(pc_u32(k, (uint32_t)cap, &end));
  T(pc_u32(k, wg, &stepv));
  T(fconst(k, (float)pc_attention_scale(n), &scale));
  T(poot_kir_for_begin(k->b, lid, end, stepv, &c));
  pc_scope_push(k);
  {
    poot_kir_value s = 0, mk, m, mn, isn, cr, p, l, e;
    for (uint32_t d = 0; d < D; d++) {
      poot_kir_value idx[3] = {c, hk, 0}, kv, pr;
      T(pc_u32(k, d, &idx[2]));
      T(pc_emit(k, kk, idx, &kv));
      T(pc_bin(k, OP(MUL), qv[d], kv, &pr));
      if (s)
        T(pc_bin(k, OP(ADD), s, pr, &s));
      else
        T(pc_bin(k, OP(ADD), zero, pr, &s));
    }
    T(pc_bin(k, OP(MUL), s, scale, &s));
    poot_kir_value midx[2] = {tt, c};
    T(pc_emit(k, mask, midx, &mk));
    T(poot_kir_select(k->b, mk, s, ninf, &s));
    T(poot_kir_priv_load(k->b, pm, 0, &m));
    T(pc_bin(k, OP(MAX), m, s, &mn));
    T(pc_bin(k, OP(EQ), mn, ninf, &isn));
    T(pc_bin(k, OP(SUB), m, mn, &e));
    T(poot_kir_unary(k->b, OP(EXP), e, &e));
    T(poot_kir_select(k->b, isn, one, e, &cr));
    T(pc_bin(k, OP(SUB), s, mn, &e));
    T(poot_kir_unary(k->b, OP(EXP), e, &e));
    T(poot_kir_select(k->b, isn, zero, e, &p));
    T(poot_kir_priv_store(k->b, pm, 0, mn));
    T(poot_kir_priv_load(k->b, pl_, 0, &l));
    T(pc_bin(k, OP(MUL), l, cr, &l));
    T(pc_bin(k, OP(ADD), l, p, &l));
    T(poot_kir_priv_store(k->b, pl_, 0, l));
    for (uint32_t d = 0; d < D; d++) {
      poot_kir_value idx[3] = {c, hk, 0}, vv, a;
      T(pc_u32(k, d, &idx[2]));
      T(pc_emit(k, v, idx, &vv));
      T(poot_kir_priv_load(k->b, pacc, d, &a));
      T(pc_bin(k, OP(MUL), a, cr, &a));
      T(pc_bin(k, OP(MUL), p, vv, &vv));
      T(pc_bin(k, OP(ADD), a, vv, &a));
      T(poot_kir_priv_store(k->b, pacc, d, a));
    }
  }
  pc_scope_pop(k);
  T(poot_kir_end(k->b));
  k->flops += (uint64_t)nwg * (uint64_t)cap * (uint64_t)dd * 4;
  /* combine the threads */
  poot_kir_value m, M, f, isn, e, l;
  T(poot_kir_priv_load(k->b, pm, 0, &m));
  uint32_t nsub = use_sg ? wg / sg : 0;
  uint32_t sm, sl, so;
  if (use_sg) {
    poot_kir_value sid, lane, first, mm;
    T(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sid));
    T(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
    T(pc_bin_c(k, OP(EQ), lane, 0, &first));
    T(poot_kir_add_shared(k->b, pc_name(k, "sm", nm, sizeof nm), POOT_KIR_F32, nsub, &sm));
    T(poot_kir_add_shared(k->b, pc_name(k, "sl", nm, sizeof nm), POOT_KIR_F32, nsub, &sl));
    T(poot_kir_add_shared(k->b, pc_name(k, "so", nm, sizeof nm), POOT_KIR_F32, nsub * D, &so));
    T(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_MAX), m, &mm));
    T(poot_kir_if_begin(k->b, first));
    T(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sm, sid, mm));
    T(poot_kir_end(k->b));
    T(poot_kir_barrier(k->b));
    M = ninf;
    for (uint32_t j = 0; j < nsub; j++) {
      poot_kir_value jj, x;
      T(pc_u32(k, j, &jj));
      T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sm, jj, 1, &x));
      T(pc_bin(k, OP(MAX), M, x, &M));
    }
    T(pc_bin(k, OP(EQ), m, ninf, &isn));
    T(pc_bin(k, OP(SUB), m, M, &e));
    T(poot_kir_unary(k->b, OP(EXP), e, &e));
    T(poot_kir_select(k->b, isn, zero, e, &f));
    T(poot_kir_priv_load(k->b, pl_, 0, &l));
    T(pc_bin(k, OP(MUL), l, f, &l));
    poot_kir_value ls, os[256];
    T(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), l, &ls));
    for (uint32_t d = 0; d < D; d++) {
      poot_kir_value a;
      T(poot_kir_priv_load(k->b, pacc, d, &a));
      T(pc_bin(k, OP(MUL), a, f, &a));
      T(poot_kir_subgroup_reduce(k->b, OP(SG_REDUCE_ADD), a, &os[d]));
    }
    T(poot_kir_if_begin(k->b, first));
    T(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, sl, sid, ls));
    for (uint32_t d = 0; d < D; d++) {
      poot_kir_value ix;
      T(pc_bin_c(k, OP(MUL), sid, D, &ix));
      T(pc_bin_c(k, OP(ADD), ix, d, &ix));
      T(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, so, ix, os[d]));
    }
    T(poot_kir_end(k->b));
    T(poot_kir_barrier(k->b));
    poot_kir_value cond, lt;
    T(pc_bin_c(k, OP(LT), lid, D, &lt));
    T(pc_bin(k, OP(AND), lt, valid, &cond));
    T(poot_kir_if_begin(k->b, cond));
    pc_scope_push(k);
    poot_kir_value L = zero, O = zero, r, lin, oidx[3] = {tt, h, lid};
    for (uint32_t j = 0; j < nsub; j++) {
      poot_kir_value jj, x, ix;
      T(pc_u32(k, j, &jj));
      T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, sl, jj, 1, &x));
      T(pc_bin(k, OP(ADD), L, x, &L));
      T(pc_u32(k, j * D, &ix));
      T(pc_bin(k, OP(ADD), ix, lid, &ix));
      T(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, so, ix, 1, &x));
      T(pc_bin(k, OP(ADD), O, x, &O));
    }
    T(pc_bin(k, OP(DIV), O, L, &r));
    T(pc_linearize(k, oidx, &pc_type(pl, g->out)->shape, &lin));
    T(pc_store_value(k, g->dest, lin, r));
    pc_scope_pop(k);
    return poot_kir_end(k->b);
  }
  /* no subgroups: shared trees */
  uint32_t sh;
  T(poot_kir_add_shared(k->b, pc_name(k, "red", nm, sizeof nm), POOT_KIR_F32, wg, &sh));
  T(tree(k, sh, lid, m, true, &M));
  T(pc_bin(k, OP(EQ), m, ninf, &isn));
  T(pc_bin(k, OP(SUB), m, M, &e));
  T(poot_kir_unary(k->b, OP(EXP), e, &e));
  T(poot_kir_select(k->b, isn, zero, e, &f));
  T(poot_kir_priv_load(k->b, pl_, 0, &l));
  T(pc_bin(k, OP(MUL), l, f, &l));
  poot_kir_value L;
  T(tree(k, sh, lid, l, false, &L));
  for (uint32_t d = 0; d < D; d++) {
    poot_kir_value a, O, r, cond, eq, lin, dv;
    T(poot_kir_priv_load(k->b, pacc, d, &a));
    T(pc_bin(k, OP(MUL), a, f, &a));
    T(tree(k, sh, lid, a, false, &O));
    T(pc_bin_c(k, OP(EQ), lid, d, &eq));
    T(pc_bin(k, OP(AND), eq, valid, &cond));
    T(poot_kir_if_begin(k->b, cond));
    pc_scope_push(k);
    T(pc_bin(k, OP(DIV), O, L, &r));
    T(pc_u32(k, d, &dv));
    poot_kir_value oidx[3] = {tt, h, dv};
    T(pc_linearize(k, oidx, &pc_type(pl, g->out)->shape, &lin));
    T(pc_store_value(k, g->dest, lin, r));
    pc_scope_pop(k);
    T(poot_kir_end(k->b));
  }
  return NULL;
}
