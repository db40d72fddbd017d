/* templates/pointwise.c — the pointwise template (any fused chain of
 * elementwise and movement ops, one output element per thread; a whole
 * 32-bit word per thread when the destination holds 8- or 16-bit elements
 * densely) and the dynamic_update_slice-in-place template (16-bit states
 * written a word, two elements, per thread). */
#include <stdio.h>
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x

void poot__cc_grid_for(uint64_t workgroups, uint32_t grid[3]) {
  if (workgroups == 0) workgroups = 1;
  grid[2] = 1;
  if (workgroups <= 65535) {
    grid[0] = (uint32_t)workgroups;
    grid[1] = 1;
  } else {
    grid[0] = 65535;
    grid[1] = (uint32_t)((workgroups + 65534) / 65535);
  }
}

poot_status poot__cc_linear_workgroup(pc_kctx *k, poot_kir_value *out) {
  poot_kir_value x, y, nx, t;
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &x));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_WORKGROUP_ID, 1, &y));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 0, &nx));
  POOT_TRY(poot__cc_bin(k, OP(MUL), y, nx, &t));
  if (!k->wg_base) return poot__cc_bin(k, OP(ADD), t, x, out);
  POOT_TRY(poot__cc_bin(k, OP(ADD), t, x, &t));
  return poot__cc_bin_c(k, OP(SUB), t, k->wg_base, out);
}

const char *poot__cc_name(pc_kctx *k, const char *base, char *buf, size_t n) {
  snprintf(buf, n, "%s_%u", base, k->tag);
  return buf;
}

/* Global thread index over a grid of `units` threads; *out_valid is
 * gid < units. */
static poot_status thread_index(pc_kctx *k, uint64_t units, uint32_t grid[3], poot_kir_value *gid,
                                poot_kir_value *valid) {
  uint32_t wg = k->pl->wg;
  poot__cc_grid_for((units + wg - 1) / wg, grid);
  poot_kir_value w, l;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), w, wg, &w));
  POOT_TRY(poot__cc_bin(k, OP(ADD), w, l, gid));
  return poot__cc_bin_c(k, OP(LT), *gid, (uint32_t)units, valid);
}

static poot_status store_dense(pc_kctx *k, uint32_t buffer, poot_dtype dt, poot_kir_value lin,
                               poot_kir_value val) {
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  poot_kir_value w;
  if (dt == POOT_DTYPE_I64) {
    poot_kir_value lo, hi, c32, idx;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_U32, val, &lo));
    POOT_TRY(poot_kir_const(k->b, POOT_KIR_I64, 32, &c32));
    POOT_TRY(poot__cc_bin(k, OP(SHR), val, c32, &hi));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_U32, hi, &hi));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, lo));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
    return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, hi);
  }
  POOT_TRY(poot__cc_to_bits(k, val, dt, &w));
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, lin, w);
}

/* A part of a wide concat (pc_group.cat_lo/hi, 32-bit elements): one
 * thread per element of operands [cat_lo, cat_hi), stored at its place in
 * the concat's storage; the concat emits only those operands. */
static poot_status concat_part(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  const poot_type *ty = poot__cc_type(pl, g->out);
  const uint32_t axis = n->attrs.axis;
  int64_t off = 0, len = 0;
  for (uint32_t j = 0; j < g->cat_hi; j++) {
    int64_t sz = poot__cc_type(pl, pl->alias[n->operands[j]])->shape.dims[axis];
    if (j < g->cat_lo)
      off += sz;
    else
      len += sz;
  }
  poot_shape sub = ty->shape;
  sub.dims[axis] = len;
  const int64_t units = poot__cc_elems(&sub);
  poot_kir_value gid, valid, idx[PC_MAX_DIMS], o, lin, val;
  POOT_TRY(thread_index(k, units < 1 ? 1 : (uint64_t)units, grid, &gid, &valid));
  if (units == 0) return NULL;
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_delinearize(k, gid, &sub, idx));
  POOT_TRY(poot__cc_u32(k, (uint32_t)off, &o));
  if (off) POOT_TRY(poot__cc_bin(k, OP(ADD), idx[axis], o, &idx[axis]));
  POOT_TRY(poot__cc_linearize(k, idx, &ty->shape, &lin));
  k->cat_v = g->out, k->cat_lo = g->cat_lo, k->cat_hi = g->cat_hi;
  poot_status st = poot__cc_emit(k, g->out, idx, &val);
  k->cat_hi = 0;
  POOT_TRY(st);
  uint32_t dest_buf = g->dest_buffer;
  if (dest_buf == UINT32_MAX && pl->v[g->dest].hold == PC_DENSE) dest_buf = pl->v[g->dest].buffer;
  if (dest_buf != UINT32_MAX)
    POOT_TRY(store_dense(k, dest_buf, ty->dtype, lin, val));
  else
    POOT_TRY(poot__cc_store_value(k, g->dest, lin, val));
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)units * 8;
  return poot_kir_end(k->b);
}

poot_status poot__cc_tpl_pointwise(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  if (g->cat_hi) return concat_part(k, g, grid);
  const poot_type *ty = poot__cc_type(pl, g->out);
  int64_t n = poot__cc_elems(&ty->shape);
  uint32_t dest_buf = g->dest_buffer;
  if (dest_buf == UINT32_MAX && pl->v[g->dest].hold == PC_DENSE) dest_buf = pl->v[g->dest].buffer;
  const poot_dtype_info *di = poot_dtype_info_of(ty->dtype);
  bool words = dest_buf != UINT32_MAX && di->elem_bytes < 4;
  uint32_t epw = words ? 4 / (uint32_t)di->elem_bytes : 1;
  uint64_t units = words ? (uint64_t)(n + epw - 1) / epw : (uint64_t)n;
  poot_kir_value gid, valid;
  POOT_TRY(poot__cc_local_prologue(k, g));
  POOT_TRY(thread_index(k, units < 1 ? 1 : units, grid, &gid, &valid));
  if (n == 0) {
    /* no element, but the starts are still checked (as the oracle does) */
    POOT_TRY(poot_kir_if_begin(k->b, valid));
    poot__cc_scope_push(k);
    POOT_TRY(poot__cc_emit_start_checks(k, g->out));
    poot__cc_scope_pop(k);
    return poot_kir_end(k->b);
  }
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  poot_kir_value idx[PC_MAX_DIMS], val;
  if (!words) {
    POOT_TRY(poot__cc_delinearize(k, gid, &ty->shape, idx));
    POOT_TRY(poot__cc_emit(k, g->out, idx, &val));
    if (dest_buf != UINT32_MAX)
      POOT_TRY(store_dense(k, dest_buf, ty->dtype, gid, val));
    else
      POOT_TRY(poot__cc_store_value(k, g->dest, gid, val));
  } else {
    poot_kir_value word = 0, base, nm1;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), gid, epw, &base));
    POOT_TRY(poot__cc_u32(k, (uint32_t)(n - 1), &nm1));
    for (uint32_t e = 0; e < epw; e++) {
      poot_kir_value lin, linc, ok, bits, z;
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), base, e, &lin));
      POOT_TRY(poot__cc_bin(k, OP(MIN), lin, nm1, &linc));
      POOT_TRY(poot__cc_bin(k, OP(LE), lin, nm1, &ok));
      POOT_TRY(poot__cc_delinearize(k, linc, &ty->shape, idx));
      POOT_TRY(poot__cc_emit(k, g->out, idx, &val));
      POOT_TRY(poot__cc_to_bits(k, val, ty->dtype, &bits));
      POOT_TRY(poot__cc_u32(k, 0, &z));
      POOT_TRY(poot_kir_select(k->b, ok, bits, z, &bits));
      if (e) POOT_TRY(poot__cc_bin_c(k, OP(SHL), bits, e * 8 * (uint32_t)di->elem_bytes, &bits));
      if (word)
        POOT_TRY(poot__cc_bin(k, OP(OR), word, bits, &word));
      else
        word = bits;
    }
    uint32_t ref;
    POOT_TRY(poot__cc_binding_of(k, dest_buf, &ref));
    poot__cc_note_buffer(k, ref, 1.0);
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, gid, word));
  }
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)n * (di->elem_bytes ? di->elem_bytes : 4);
  return poot_kir_end(k->b);
}

bool poot__cc_dus_word_pairs(const pc_planner *pl, const poot_node *n) {
  const poot_shape *xs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  const poot_shape *us = &poot__cc_type(pl, pl->alias[n->operands[1]])->shape;
  if (xs->rank < 1 || us->rank != xs->rank) return false;
  int64_t last = xs->dims[xs->rank - 1];
  return us->dims[us->rank - 1] == last && last % 2 == 0;
}

/* The window's starts (clamped, checked) at the update's index uidx: the
 * destination index didx. */
static poot_status dus_dest_index(pc_kctx *k, const poot_node *n, const poot_shape *xs,
                                  const poot_shape *us, const poot_kir_value *uidx,
                                  poot_kir_value *didx) {
  for (uint32_t i = 0; i < xs->rank; i++) {
    poot_kir_value s, c, ok, z, h, ge, le;
    POOT_TRY(poot__cc_emit(k, n->operands[2 + i], NULL, &s));
    poot_kir_scalar ss = (poot_kir_scalar)poot_kir_builder_value_type(k->b, s).scalar;
    int64_t hi = xs->dims[i] - us->dims[i];
    POOT_TRY(poot_kir_const(k->b, ss, ss == POOT_KIR_I64 ? 0 : 0, &z));
    POOT_TRY(
        poot_kir_const(k->b, ss, ss == POOT_KIR_I64 ? (uint64_t)hi : (uint64_t)(uint32_t)hi, &h));
    if (ss == POOT_KIR_U32) {
      POOT_TRY(poot__cc_bin(k, OP(LE), s, h, &ok));
      POOT_TRY(poot__cc_bin(k, OP(MIN), s, h, &c));
    } else {
      POOT_TRY(poot__cc_bin(k, OP(GE), s, z, &ge));
      POOT_TRY(poot__cc_bin(k, OP(LE), s, h, &le));
      POOT_TRY(poot__cc_bin(k, OP(AND), ge, le, &ok));
      POOT_TRY(poot__cc_bin(k, OP(MAX), s, z, &c));
      POOT_TRY(poot__cc_bin(k, OP(MIN), c, h, &c));
    }
    if (n->trap != POOT_TRAP_NONE) {
      k->has_checks = true;
      POOT_TRY(poot_kir_check(k->b, ok, (uint32_t)n->trap));
    }
    if (ss != POOT_KIR_U32) POOT_TRY(poot_kir_convert(k->b, POOT_KIR_U32, c, &c));
    POOT_TRY(poot__cc_bin(k, OP(ADD), uidx[i], c, &didx[i]));
  }
  return NULL;
}

/* A 16-bit state (poot__cc_dus_word_pairs holds: whole rows of an even
 * length): one thread per 32-bit word of the update, two elements of one
 * row packed (low half first) into the state's word. */
static poot_status dus_pairs(pc_kctx *k, const pc_group *g, poot_kir_value gid,
                             const poot_shape *xs, const poot_shape *us, poot_dtype dt) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value upd = pl->alias[n->operands[1]];
  uint32_t r = us->rank;
  poot_kir_value e0, uidx[PC_MAX_DIMS], u1[PC_MAX_DIMS], didx[PC_MAX_DIMS], v0, v1, b0, b1, w, lin;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), gid, 2, &e0));
  POOT_TRY(poot__cc_delinearize(k, e0, us, uidx));
  memcpy(u1, uidx, sizeof(poot_kir_value) * r);
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), uidx[r - 1], 1, &u1[r - 1]));
  POOT_TRY(dus_dest_index(k, n, xs, us, uidx, didx));
  POOT_TRY(poot__cc_emit(k, upd, uidx, &v0));
  POOT_TRY(poot__cc_emit(k, upd, u1, &v1));
  POOT_TRY(poot__cc_to_bits(k, v0, dt, &b0));
  POOT_TRY(poot__cc_to_bits(k, v1, dt, &b1));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b0, 0xffff, &b0));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), b1, 16, &b1));
  POOT_TRY(poot__cc_bin(k, OP(OR), b0, b1, &w));
  POOT_TRY(poot__cc_linearize(k, didx, xs, &lin));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, 2, &lin));
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, pl->v[g->out].buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, lin, w);
}

/* A q8_0 state (poot__cc_q8_dus_ok): one thread per pair of blocks of the
 * update (64 elements of a row), quantized and written as 17 words. */
static poot_status dus_q8(pc_kctx *k, const pc_group *g, poot_kir_value gid, const poot_shape *xs,
                          const poot_shape *us) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value upd = pl->alias[n->operands[1]];
  poot_kir_value e0, e1, uidx[PC_MAX_DIMS], u1[PC_MAX_DIMS], didx[PC_MAX_DIMS], vals[PC_Q8_PAIR],
      lin;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), gid, PC_Q8_PAIR, &e0));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), e0, PC_Q8_PAIR / 2, &e1));
  POOT_TRY(poot__cc_delinearize(k, e0, us, uidx));
  POOT_TRY(poot__cc_delinearize(k, e1, us, u1));
  POOT_TRY(dus_dest_index(k, n, xs, us, uidx, didx));
  const poot_kir_value *blocks[2] = {uidx, u1};
  POOT_TRY(poot__cc_q8_pair_values(k, upd, blocks, us->rank, vals));
  POOT_TRY(poot__cc_linearize(k, didx, xs, &lin));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, PC_Q8_PAIR, &lin));
  return poot__cc_q8_pair_store(k, pl->v[g->out].buffer, lin, vals);
}

/* The update's runs: its trailing dims that are whole dims of the state
 * (each pair of blocks of the update then lies in one run of the state). */
bool poot__cc_q8_dus_ok(const pc_planner *pl, const poot_node *n) {
  const poot_type *xt = poot__cc_type(pl, pl->alias[n->operands[0]]);
  const poot_shape *us = &poot__cc_type(pl, pl->alias[n->operands[1]])->shape;
  uint32_t r = xt->shape.rank, from = r;
  if (us->rank != r) return false;
  while (from > 0 && us->dims[from - 1] == xt->shape.dims[from - 1]) from--;
  return poot__cc_q8_run_ok(xt, from);
}

/* dynamic_update_slice of a State in place: threads over the update's
 * elements (a 16-bit state: over its words; a q8_0 state: over its pairs
 * of blocks); the starts are read (from the slot buffer) at run time. */
poot_status poot__cc_tpl_dus(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value upd = pl->alias[n->operands[1]];
  const poot_shape *xs = &poot__cc_type(pl, g->out)->shape;
  const poot_shape *us = &poot__cc_type(pl, upd)->shape;
  poot_dtype dt = poot__cc_type(pl, g->out)->dtype;
  size_t eb = poot_dtype_info_of(dt)->elem_bytes;
  const bool q8 = dt == POOT_DTYPE_Q8_0;
  if (eb == 2 && !poot__cc_dus_word_pairs(pl, n))
    return poot_status_make(POOT_INTERNAL, "compile: 16-bit in-place update of odd rows");
  if (q8 && (!poot__cc_q8_dus_ok(pl, n) || !pl->v[g->out].inplace))
    return poot__cc_q8_refuse(poot__cc_type(pl, g->out));
  int64_t nu = poot__cc_elems(us);
  poot_kir_value gid, valid;
  int64_t per = q8 ? PC_Q8_PAIR : eb == 2 ? 2 : 1; /* elements a thread writes */
  POOT_TRY(thread_index(k, (uint64_t)(nu / per), grid, &gid, &valid));
  if (nu == 0) return NULL;
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  double saved = k->frac;
  k->frac = (double)nu / (double)poot__cc_elems(xs);
  poot_status sst = NULL;
  if (q8) {
    sst = dus_q8(k, g, gid, xs, us);
  } else if (eb == 2) {
    sst = dus_pairs(k, g, gid, xs, us, dt);
  } else {
    poot_kir_value uidx[PC_MAX_DIMS], didx[PC_MAX_DIMS], val, lin;
    sst = poot__cc_delinearize(k, gid, us, uidx);
    if (!sst) sst = dus_dest_index(k, n, xs, us, uidx, didx);
    if (!sst) sst = poot__cc_emit(k, upd, uidx, &val);
    if (!sst) sst = poot__cc_linearize(k, didx, xs, &lin);
    if (!sst) sst = store_dense(k, pl->v[g->out].buffer, dt, lin, val);
  }
  k->frac = saved;
  POOT_TRY(sst);
  poot__cc_scope_pop(k);
  k->bytes += (uint64_t)nu * 2 * (q8 ? 1 : eb);
  return poot_kir_end(k->b);
}

/* cumsum of short rows: one thread per output element sums its prefix in
 * index order (exactly poot_eval's order; O(n) per element, parallel over
 * elements). Long rows: the workgroup scan of scan.c. */
poot_status poot__cc_tpl_cumsum_serial(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value x = pl->alias[n->operands[0]];
  const poot_type *ty = poot__cc_type(pl, g->out);
  poot_dtype xd = poot__cc_type(pl, x)->dtype, acc = n->attrs.dtype;
  uint32_t ax = (uint32_t)n->attrs.axis;
  int64_t ne = poot__cc_elems(&ty->shape);
  poot_kir_value gid, valid;
  POOT_TRY(thread_index(k, (uint64_t)ne, grid, &gid, &valid));
  if (ne == 0) return NULL;
  uint32_t pacc;
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "acc", nm, sizeof nm),
                                poot_kir_type_make(poot__cc_compute_scalar(acc), 1), 1, &pacc));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  poot_kir_value idx[PC_MAX_DIMS], xi[PC_MAX_DIMS], z, end, one, j, v, a;
  POOT_TRY(poot__cc_delinearize(k, gid, &ty->shape, idx));
  POOT_TRY(poot__cc_const_of(k, acc, 0.0, 0, &z));
  POOT_TRY(poot_kir_priv_store(k->b, pacc, 0, z));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx[ax], 1, &end));
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, one, &j));
  poot__cc_scope_push(k);
  memcpy(xi, idx, sizeof idx);
  xi[ax] = j;
  POOT_TRY(poot__cc_emit(k, x, xi, &v));
  POOT_TRY(poot__cc_convert(k, v, xd, acc, &v));
  POOT_TRY(poot_kir_priv_load(k->b, pacc, 0, &a));
  POOT_TRY(poot__cc_accum(k, OP(ADD), acc, a, v, &a));
  POOT_TRY(poot_kir_priv_store(k->b, pacc, 0, a));
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_priv_load(k->b, pacc, 0, &a));
  POOT_TRY(poot__cc_store_value(k, g->dest, gid, a));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* a before b in top_k order: larger first (NaN largest), ties by index. */
poot_status poot__cc_topk_before(pc_kctx *k, poot_kir_value a, poot_kir_value ia, poot_kir_value b,
                                 poot_kir_value ib, bool fl, poot_kir_value *out) {
  poot_kir_value gt, eq, lt;
  POOT_TRY(poot__cc_bin(k, OP(GT), a, b, &gt));
  POOT_TRY(poot__cc_bin(k, OP(EQ), a, b, &eq));
  if (fl) {
    poot_kir_value na, nb, nnb, t;
    POOT_TRY(poot__cc_bin(k, OP(NE), a, a, &na));
    POOT_TRY(poot__cc_bin(k, OP(NE), b, b, &nb));
    POOT_TRY(poot_kir_unary(k->b, OP(NOT), nb, &nnb));
    POOT_TRY(poot__cc_bin(k, OP(AND), na, nnb, &t));
    POOT_TRY(poot__cc_bin(k, OP(OR), gt, t, &gt));
    POOT_TRY(poot__cc_bin(k, OP(AND), na, nb, &t));
    POOT_TRY(poot__cc_bin(k, OP(OR), eq, t, &eq));
  }
  POOT_TRY(poot__cc_bin(k, OP(LT), ia, ib, &lt));
  POOT_TRY(poot__cc_bin(k, OP(AND), eq, lt, &eq));
  return poot__cc_bin(k, OP(OR), gt, eq, out);
}

/* top_k of short rows: one thread per input element counts the elements
 * that sort before it; ranks below k are written (values and i32
 * indices). Long rows: the sorting pipeline of select.c. */
poot_status poot__cc_tpl_topk_rank(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value x = pl->alias[n->operands[0]];
  const poot_shape *xs = &poot__cc_type(pl, x)->shape;
  poot_dtype xd = poot__cc_type(pl, x)->dtype;
  uint32_t r = xs->rank;
  int64_t len = xs->dims[r - 1], kk = n->attrs.k;
  int64_t ne = poot__cc_elems(xs);
  poot_kir_value gid, valid;
  POOT_TRY(thread_index(k, (uint64_t)ne, grid, &gid, &valid));
  if (ne == 0 || kk == 0) return NULL;
  uint32_t prank;
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "rank", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_U32, 1), 1, &prank));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  poot_kir_value idx[PC_MAX_DIMS], yi[PC_MAX_DIMS], me, z, end, one, j, y, b, rk, rk1;
  POOT_TRY(poot__cc_delinearize(k, gid, xs, idx));
  POOT_TRY(poot__cc_emit(k, x, idx, &me));
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot_kir_priv_store(k->b, prank, 0, z));
  POOT_TRY(poot__cc_u32(k, (uint32_t)len, &end));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, one, &j));
  poot__cc_scope_push(k);
  memcpy(yi, idx, sizeof idx);
  yi[r - 1] = j;
  POOT_TRY(poot__cc_emit(k, x, yi, &y));
  POOT_TRY(poot__cc_topk_before(k, y, j, me, idx[r - 1], poot_dtype_is_float(xd), &b));
  POOT_TRY(poot_kir_priv_load(k->b, prank, 0, &rk));
  POOT_TRY(poot__cc_bin(k, OP(ADD), rk, one, &rk1));
  POOT_TRY(poot_kir_select(k->b, b, rk1, rk, &rk));
  POOT_TRY(poot_kir_priv_store(k->b, prank, 0, rk));
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_priv_load(k->b, prank, 0, &rk));
  poot_kir_value ok, oi[PC_MAX_DIMS], lin, ix;
  POOT_TRY(poot__cc_bin_c(k, OP(LT), rk, (uint32_t)kk, &ok));
  POOT_TRY(poot_kir_if_begin(k->b, ok));
  memcpy(oi, idx, sizeof idx);
  oi[r - 1] = rk;
  poot_shape os = *xs;
  os.dims[r - 1] = kk;
  POOT_TRY(poot__cc_linearize(k, oi, &os, &lin));
  POOT_TRY(poot__cc_store_value(k, g->out, lin, me));
  POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_I32, 1), idx[r - 1], &ix));
  POOT_TRY(poot__cc_store_value(k, g->out2, lin, ix));
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* A scatter index ix against the axis's last index hi: *ok when in range,
 * *c the index clamped into range (u32); the check when the op traps. */
static poot_status scatter_index(pc_kctx *k, const poot_node *n, poot_kir_value ix, int64_t hi,
                                 poot_kir_value *ok, poot_kir_value *c) {
  poot_kir_scalar s = (poot_kir_scalar)poot_kir_builder_value_type(k->b, ix).scalar;
  poot_kir_value zz, h, ge, le;
  POOT_TRY(poot_kir_const(k->b, s, 0, &zz));
  POOT_TRY(poot_kir_const(k->b, s, s == POOT_KIR_I64 ? (uint64_t)hi : (uint64_t)(uint32_t)hi, &h));
  if (s == POOT_KIR_U32) {
    POOT_TRY(poot__cc_bin(k, OP(LE), ix, h, ok));
    *c = ix;
  } else {
    POOT_TRY(poot__cc_bin(k, OP(GE), ix, zz, &ge));
    POOT_TRY(poot__cc_bin(k, OP(LE), ix, h, &le));
    POOT_TRY(poot__cc_bin(k, OP(AND), ge, le, ok));
    POOT_TRY(poot__cc_bin(k, OP(MAX), ix, zz, c));
    POOT_TRY(poot__cc_bin(k, OP(MIN), *c, h, c));
    POOT_TRY(poot_kir_convert(k->b, POOT_KIR_U32, *c, c));
  }
  if (n->trap == POOT_TRAP_NONE) return NULL;
  k->has_checks = true;
  return poot_kir_check(k->b, *ok, (uint32_t)n->trap);
}

/* scatter_update into a target that is only the axis: one thread per index
 * i writes its update unless a later index j > i names the same element
 * (the last write wins, as in the serial order) or it is out of range, so
 * distinct indices write in parallel and duplicates in any number still
 * give the serial result. O(ni²) index reads in all, ni ≤ PC_SCATTER_PAR_MAX. */
static poot_status scatter_parallel(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value ind = pl->alias[n->operands[1]], upd = pl->alias[n->operands[2]];
  const poot_shape *ts = &poot__cc_type(pl, g->out)->shape;
  const poot_shape *is = &poot__cc_type(pl, ind)->shape;
  uint32_t ax = (uint32_t)n->attrs.axis, ni = (uint32_t)poot__cc_elems(is), pdup;
  char nm[32];
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "dup", nm, sizeof nm),
                                poot_kir_type_make(POOT_KIR_U32, 1), 1, &pdup));
  poot_kir_value gid, valid, iidx[PC_MAX_DIMS], uidx[PC_MAX_DIMS], tidx[PC_MAX_DIMS];
  poot_kir_value ix, ok, c, z, one, end, j, start, d, val, lin, nd;
  POOT_TRY(thread_index(k, ni, grid, &gid, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_delinearize(k, gid, is, iidx));
  POOT_TRY(poot__cc_emit(k, ind, iidx, &ix));
  POOT_TRY(scatter_index(k, n, ix, ts->dims[ax] - 1, &ok, &c));
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot__cc_u32(k, ni, &end));
  POOT_TRY(poot_kir_priv_store(k->b, pdup, 0, z));
  POOT_TRY(poot__cc_bin(k, OP(ADD), gid, one, &start));
  POOT_TRY(poot_kir_for_begin(k->b, start, end, one, &j));
  poot__cc_scope_push(k);
  {
    poot_kir_value jidx[PC_MAX_DIMS], jx, eq;
    POOT_TRY(poot__cc_delinearize(k, j, is, jidx));
    POOT_TRY(poot__cc_emit(k, ind, jidx, &jx));
    POOT_TRY(poot__cc_bin(k, OP(EQ), jx, ix, &eq));
    POOT_TRY(poot_kir_priv_load(k->b, pdup, 0, &d));
    POOT_TRY(poot_kir_select(k->b, eq, one, d, &d));
    POOT_TRY(poot_kir_priv_store(k->b, pdup, 0, d));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  POOT_TRY(poot_kir_priv_load(k->b, pdup, 0, &d));
  POOT_TRY(poot__cc_bin(k, OP(EQ), d, z, &nd));
  POOT_TRY(poot__cc_bin(k, OP(AND), ok, nd, &ok));
  POOT_TRY(poot_kir_if_begin(k->b, ok));
  poot__cc_scope_push(k);
  for (uint32_t e = 0; e < ts->rank; e++) tidx[e] = z;
  tidx[ax] = c;
  for (uint32_t e = 0; e < ax; e++) uidx[e] = z;
  for (uint32_t e = 0; e < is->rank; e++) uidx[ax + e] = iidx[e];
  for (uint32_t e = ax + 1; e < ts->rank; e++) uidx[is->rank + e - 1] = z;
  POOT_TRY(poot__cc_emit(k, upd, uidx, &val));
  POOT_TRY(poot__cc_linearize(k, tidx, ts, &lin));
  POOT_TRY(poot__cc_store_value(k, g->out, lin, val));
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* scatter_update: the destination already holds the target (a pointwise
 * group ran first); one thread per (prefix, suffix) position applies the
 * updates in row-major order of the indices, so the last write wins. A
 * target that is only the axis takes scatter_parallel instead. */
/* The runs: the target's dims after the axis (a pool row: Hkv x head_dim). */
bool poot__cc_q8_scatter_ok(const pc_planner *pl, const poot_node *n) {
  const poot_type *tt = poot__cc_type(pl, pl->alias[n->operands[0]]);
  return poot__cc_q8_run_ok(tt, (uint32_t)n->attrs.axis + 1);
}

bool poot__cc_scatter_word_pairs(const pc_planner *pl, const poot_node *n) {
  const poot_type *tt = poot__cc_type(pl, pl->alias[n->operands[0]]);
  const uint32_t r = tt->shape.rank;
  return poot_dtype_info_of(tt->dtype)->elem_bytes == 2 && r >= 2 &&
         (uint32_t)n->attrs.axis < r - 1 && tt->shape.dims[r - 1] % 2 == 0;
}

/* The update's two elements at uidx and uidx + 1 (last dimension) packed
 * into one 32-bit word (low half first) at target index tidx. */
static poot_status scatter_pair(pc_kctx *k, const pc_group *g, poot_value upd, poot_kir_value *uidx,
                                uint32_t urank, poot_kir_value *tidx, const poot_shape *ts,
                                poot_dtype dt) {
  poot_kir_value u1[PC_MAX_DIMS], v0, v1, b0, b1, w, lin;
  memcpy(u1, uidx, sizeof(poot_kir_value) * urank);
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), uidx[urank - 1], 1, &u1[urank - 1]));
  POOT_TRY(poot__cc_emit(k, upd, uidx, &v0));
  POOT_TRY(poot__cc_emit(k, upd, u1, &v1));
  POOT_TRY(poot__cc_to_bits(k, v0, dt, &b0));
  POOT_TRY(poot__cc_to_bits(k, v1, dt, &b1));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b0, 0xffff, &b0));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), b1, 16, &b1));
  POOT_TRY(poot__cc_bin(k, OP(OR), b0, b1, &w));
  POOT_TRY(poot__cc_linearize(k, tidx, ts, &lin));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, 2, &lin));
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, k->pl->v[g->out].buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, lin, w);
}

poot_status poot__cc_tpl_scatter(pc_kctx *k, const pc_group *g, uint32_t grid[3]) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  poot_value ind = pl->alias[n->operands[1]], upd = pl->alias[n->operands[2]];
  const poot_shape *ts = &poot__cc_type(pl, g->out)->shape;
  const poot_shape *is = &poot__cc_type(pl, ind)->shape;
  const poot_shape *us = &poot__cc_type(pl, upd)->shape;
  const poot_dtype dt = poot__cc_type(pl, g->out)->dtype;
  uint32_t ax = (uint32_t)n->attrs.axis;
  poot_shape ps = *ts; /* target with the axis dim set to 1 */
  ps.dims[ax] = 1;
  int64_t np = poot__cc_elems(&ps), ni = poot__cc_elems(is);
  bool empty = np == 0; /* no position: only the indices' checks run */
  /* 16-bit rows of a dense buffer (a state, a result): a thread per word
   * (two elements), so no two threads write halves of one word. A
   * temporary holds an element per word and keeps the element form. */
  const bool pairs = !empty && poot__cc_scatter_word_pairs(pl, n) &&
                     pl->v[g->out].hold == PC_DENSE && pl->v[g->out].buffer != UINT32_MAX;
  /* A q8_0 state (a paged K/V pool): in place only, a thread per pair of
   * blocks of a row (kv_quant.c). */
  const bool q8 = dt == POOT_DTYPE_Q8_0;
  if (q8 && (!poot__cc_q8_scatter_ok(pl, n) || !pl->v[g->out].inplace))
    return poot__cc_q8_refuse(poot__cc_type(pl, g->out));
  const uint32_t per = q8 ? PC_Q8_PAIR : pairs ? 2 : 1; /* elements a thread */
  if (!pairs && !q8 && np == 1 && ni > 1 && ni <= PC_SCATTER_PAR_MAX)
    return scatter_parallel(k, g, grid);
  if (empty) np = 1;
  poot_shape pw = ps; /* pairs: the positions' shape with the last dim halved */
  if (pairs) pw.dims[pw.rank - 1] /= per;
  poot_kir_value gid, valid;
  POOT_TRY(thread_index(k, (uint64_t)(np / per), grid, &gid, &valid));
  if (ni == 0 || (empty && n->trap == POOT_TRAP_NONE)) return NULL;
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  poot_kir_value pidx[PC_MAX_DIMS], p1[PC_MAX_DIMS], z, end, one, i;
  if (empty) {
    for (uint32_t d = 0; d < ps.rank; d++) POOT_TRY(poot__cc_u32(k, 0, &pidx[d]));
  } else if (q8) {
    poot_kir_value e0, e1;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), gid, PC_Q8_PAIR, &e0));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), e0, PC_Q8_PAIR / 2, &e1));
    POOT_TRY(poot__cc_delinearize(k, e0, &ps, pidx));
    POOT_TRY(poot__cc_delinearize(k, e1, &ps, p1));
  } else if (pairs) {
    POOT_TRY(poot__cc_delinearize(k, gid, &pw, pidx));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), pidx[pw.rank - 1], per, &pidx[pw.rank - 1]));
  } else {
    POOT_TRY(poot__cc_delinearize(k, gid, &ps, pidx));
  }
  POOT_TRY(poot__cc_u32(k, 0, &z));
  POOT_TRY(poot__cc_u32(k, (uint32_t)ni, &end));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot_kir_for_begin(k->b, z, end, one, &i));
  poot__cc_scope_push(k);
  poot_kir_value iidx[PC_MAX_DIMS], uidx[PC_MAX_DIMS], tidx[PC_MAX_DIMS], ix, ok, c, val, lin;
  POOT_TRY(poot__cc_delinearize(k, i, is, iidx));
  POOT_TRY(poot__cc_emit(k, ind, iidx, &ix));
  POOT_TRY(scatter_index(k, n, ix, ts->dims[ax] - 1, &ok, &c));
  for (uint32_t d = 0; d < ax; d++) uidx[d] = pidx[d];
  for (uint32_t d = 0; d < is->rank; d++) uidx[ax + d] = iidx[d];
  for (uint32_t d = ax + 1; d < ts->rank; d++) uidx[is->rank + d - 1] = pidx[d];
  (void)us;
  memcpy(tidx, pidx, sizeof pidx);
  tidx[ax] = c;
  if (empty) {
    poot__cc_scope_pop(k);
    POOT_TRY(poot_kir_end(k->b));
    poot__cc_scope_pop(k);
    return poot_kir_end(k->b);
  }
  POOT_TRY(poot_kir_if_begin(k->b, ok));
  poot__cc_scope_push(k);
  if (q8) {
    poot_kir_value vals[PC_Q8_PAIR], u1[PC_MAX_DIMS];
    memcpy(u1, uidx, sizeof u1);
    for (uint32_t d = 0; d < ax; d++) u1[d] = p1[d];
    for (uint32_t d = ax + 1; d < ts->rank; d++) u1[is->rank + d - 1] = p1[d];
    const poot_kir_value *blocks[2] = {uidx, u1};
    POOT_TRY(poot__cc_q8_pair_values(k, upd, blocks, us->rank, vals));
    POOT_TRY(poot__cc_linearize(k, tidx, ts, &lin));
    POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, PC_Q8_PAIR, &lin));
    POOT_TRY(poot__cc_q8_pair_store(k, pl->v[g->out].buffer, lin, vals));
  } else if (pairs) {
    POOT_TRY(scatter_pair(k, g, upd, uidx, us->rank, tidx, ts, dt));
  } else {
    POOT_TRY(poot__cc_emit(k, upd, uidx, &val));
    POOT_TRY(poot__cc_linearize(k, tidx, ts, &lin));
    POOT_TRY(poot__cc_store_value(k, g->out, lin, val));
  }
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}
