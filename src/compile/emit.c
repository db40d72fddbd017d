/* emit.c — the expression emitter: the value of a graph value at a
 * multi-index, as KIR statements (loop fusion by index arithmetic).
 * Elementwise and movement ops are inlined; materialized values and leaves
 * are loaded from their buffers. Float ops on f16/bf16 round after every
 * op, integer ops on narrow types wrap, exactly as poot_eval does. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

#define T POOT_TRY
#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

const poot_type *poot__cc_type(const pc_planner *pl, poot_value v) {
  return poot_graph_value_type(pl->g, v);
}

int64_t poot__cc_elems(const poot_shape *s) {
  int64_t n = 1;
  for (uint32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

poot_kir_scalar poot__cc_compute_scalar(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_F32:
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16:
      return S(F32);
    case POOT_DTYPE_I8:
    case POOT_DTYPE_I16:
    case POOT_DTYPE_I32:
      return S(I32);
    case POOT_DTYPE_U8:
    case POOT_DTYPE_U32:
      return S(U32);
    case POOT_DTYPE_I64:
      return S(I64);
    case POOT_DTYPE_BOOL:
      return S(BOOL);
    default:
      return S(U32);
  }
}

/* ------------------------------------------------------------ basics */

poot_status poot__cc_u32(pc_kctx *k, uint32_t c, poot_kir_value *out) {
  return poot_kir_const_u32(k->b, c, out);
}
static poot_status ci32(pc_kctx *k, int32_t c, poot_kir_value *out) {
  return poot_kir_const_i32(k->b, c, out);
}
poot_status poot__cc_cf32(pc_kctx *k, float c, poot_kir_value *out) {
  return poot_kir_const_f32(k->b, c, out);
}
static poot_status cscal(pc_kctx *k, poot_kir_scalar s, int64_t v, poot_kir_value *out) {
  return poot_kir_const(k->b, s, s == S(I64) ? (uint64_t)v : (uint64_t)(uint32_t)v, out);
}
poot_status poot__cc_bin(pc_kctx *k, poot_kir_op op, poot_kir_value a, poot_kir_value b,
                         poot_kir_value *out) {
  return poot_kir_binary(k->b, op, a, b, out);
}
static poot_kir_scalar sc(pc_kctx *k, poot_kir_value v) {
  return (poot_kir_scalar)poot_kir_builder_value_type(k->b, v).scalar;
}
/* a op constant (in a's type). */
poot_status poot__cc_bin_c(pc_kctx *k, poot_kir_op op, poot_kir_value a, uint32_t c,
                           poot_kir_value *out) {
  poot_kir_value cv;
  T(cscal(k, sc(k, a), (int64_t)(int32_t)c, &cv));
  if (sc(k, a) == S(I64)) T(poot_kir_const(k->b, S(I64), c, &cv));
  return poot__cc_bin(k, op, a, cv, out);
}
static poot_status un(pc_kctx *k, poot_kir_op op, poot_kir_value a, poot_kir_value *out) {
  return poot_kir_unary(k->b, op, a, out);
}
poot_status poot__cc_sel(pc_kctx *k, poot_kir_value c, poot_kir_value a, poot_kir_value b,
                         poot_kir_value *out) {
  return poot_kir_select(k->b, c, a, b, out);
}
poot_status poot__cc_cvt(pc_kctx *k, poot_kir_scalar to, poot_kir_value a, poot_kir_value *out) {
  if (sc(k, a) == to) {
    *out = a;
    return NULL;
  }
  return poot_kir_convert(k->b, to, a, out);
}
poot_status poot__cc_bcast(pc_kctx *k, poot_kir_scalar to, poot_kir_value a, poot_kir_value *out) {
  if (sc(k, a) == to) {
    *out = a;
    return NULL;
  }
  return poot_kir_bitcast(k->b, poot_kir_type_make(to, 1), a, out);
}

/* ------------------------------------------------------------- memo */

void poot__cc_scope_push(pc_kctx *k) {
  k->depth++;
}
void poot__cc_scope_pop(pc_kctx *k) {
  while (k->nmemo > 0 && k->memo[k->nmemo - 1].depth >= k->depth) k->nmemo--;
  k->depth--;
}

static bool memo_get(pc_kctx *k, poot_value v, uint32_t rank, const poot_kir_value *idx,
                     poot_kir_value *out) {
  for (uint32_t i = k->nmemo; i-- > 0;) {
    const pc_memo *m = &k->memo[i];
    if (m->v != v || m->rank != rank) continue;
    if (rank && memcmp(m->idx, idx, rank * sizeof *idx) != 0) continue;
    *out = m->out;
    return true;
  }
  return false;
}

poot_status poot__cc_memo_put(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                              poot_kir_value val) {
  if (k->nmemo >= PC_MAX_MEMO) return NULL; /* only a cache */
  pc_memo *m = &k->memo[k->nmemo++];
  memset(m, 0, sizeof *m);
  m->v = v;
  m->rank = poot__cc_type(k->pl, v)->shape.rank;
  if (m->rank) memcpy(m->idx, idx, m->rank * sizeof *idx);
  m->out = val;
  m->depth = k->depth;
  return NULL;
}

/* ----------------------------------------------------------- indices */

poot_status poot__cc_delinearize(pc_kctx *k, poot_kir_value lin, const poot_shape *shape,
                                 poot_kir_value *idx) {
  uint64_t stride = 1;
  for (uint32_t d = shape->rank; d-- > 0;) {
    if (shape->dims[d] == 1 || shape->dims[d] == 0) {
      T(poot__cc_u32(k, 0, &idx[d]));
      continue;
    }
    poot_kir_value q = lin;
    if (stride != 1) T(poot__cc_bin_c(k, OP(DIV), lin, (uint32_t)stride, &q));
    bool outer = true;
    for (uint32_t e = 0; e < d; e++)
      if (shape->dims[e] != 1) outer = false;
    if (!outer)
      T(poot__cc_bin_c(k, OP(REM), q, (uint32_t)shape->dims[d], &idx[d]));
    else
      idx[d] = q;
    stride *= (uint64_t)shape->dims[d];
  }
  return NULL;
}

poot_status poot__cc_linearize(pc_kctx *k, const poot_kir_value *idx, const poot_shape *shape,
                               poot_kir_value *out) {
  poot_kir_value acc = 0;
  uint64_t stride = 1;
  for (uint32_t d = shape->rank; d-- > 0;) {
    if (shape->dims[d] != 1) {
      poot_kir_value term = idx[d];
      if (stride != 1) T(poot__cc_bin_c(k, OP(MUL), idx[d], (uint32_t)stride, &term));
      if (acc)
        T(poot__cc_bin(k, OP(ADD), acc, term, &acc));
      else
        acc = term;
    }
    stride *= (uint64_t)shape->dims[d];
  }
  if (!acc) T(poot__cc_u32(k, 0, &acc));
  *out = acc;
  return NULL;
}

/* --------------------------------------------------------- bindings */

poot_status poot__cc_binding_of(pc_kctx *k, uint32_t buffer, uint32_t *out_ref) {
  for (uint32_t i = 0; i < k->nbind; i++)
    if (k->bind_buf[i] == buffer) {
      *out_ref = i;
      return NULL;
    }
  if (k->nbind >= POOT_PLAN_MAX_BINDINGS)
    return poot_status_make(POOT_UNSUPPORTED, "compile: kernel needs more than %d bindings",
                            POOT_PLAN_MAX_BINDINGS);
  const poot_plan_buffer *pb = poot_vec_at(&k->pl->buffers, buffer);
  bool ro = pb->cls == POOT_PLAN_BUFFER_WEIGHT || pb->cls == POOT_PLAN_BUFFER_CONST ||
            pb->cls == POOT_PLAN_BUFFER_SLOT || pb->cls == POOT_PLAN_BUFFER_INPUT;
  char name[24];
  snprintf(name, sizeof name, "b%u", k->nbind);
  /* Weights and constants are written before the first step and never by
   * a kernel: they may be read before the wait for the previous kernel. */
  bool inv = pb->cls == POOT_PLAN_BUFFER_WEIGHT || pb->cls == POOT_PLAN_BUFFER_CONST;
  poot_kir_binding bd = {
      name, k->nbind, S(U32), ro ? POOT_KIR_ACCESS_READ : POOT_KIR_ACCESS_READ_WRITE, 16, inv};
  uint32_t ref = 0;
  T(poot_kir_add_binding(k->b, &bd, &ref));
  k->bind_buf[k->nbind++] = buffer;
  *out_ref = ref;
  return NULL;
}

/* The arena word offset of temp `ti` (a PUSH param). */
static poot_status temp_offset(pc_kctx *k, uint32_t ti, poot_kir_value *out) {
  for (uint32_t i = 0; i < k->npush; i++)
    if (k->push_temp[i] == ti) return poot_kir_param_get(k->b, (uint32_t)k->push_val[i], out);
  if (k->npush >= POOT_PLAN_MAX_PUSH)
    return poot_status_make(POOT_UNSUPPORTED, "compile: kernel reads more than %d temporaries",
                            POOT_PLAN_MAX_PUSH);
  char name[24];
  snprintf(name, sizeof name, "off%u", k->npush);
  poot_kir_param p = {name, S(U32), POOT_KIR_PARAM_PUSH, 0, 0};
  uint32_t pi = 0;
  T(poot_kir_add_param(k->b, &p, &pi));
  /* The param index is kept, not the value: a value read inside a block
   * is not visible outside it. */
  k->push_temp[k->npush] = ti;
  k->push_val[k->npush++] = pi;
  return poot_kir_param_get(k->b, pi, out);
}

void poot__cc_note_buffer(pc_kctx *k, uint32_t ref, double frac) {
  if (ref < POOT_PLAN_MAX_BINDINGS && k->buf_frac[ref] < frac) k->buf_frac[ref] = frac;
}

static void note_read(pc_kctx *k, uint32_t ti);

poot_status poot__cc_temp_base(pc_kctx *k, uint32_t ti, bool read, poot_kir_value *out) {
  if (read) note_read(k, ti);
  return temp_offset(k, ti, out);
}

static void note_read(pc_kctx *k, uint32_t ti) {
  for (uint32_t i = 0; i < k->nreads; i++)
    if (k->reads[i] == ti) return;
  if (k->nreads < 256) k->reads[k->nreads++] = ti;
}

poot_status poot__cc_load_word(pc_kctx *k, uint32_t ref, poot_kir_value idx, poot_kir_value *out) {
  return poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, 1, out);
}

/* ------------------------------------------------------- f16 / bf16 */

/* f16 bits (u32, low 16) → f32 value. */
poot_status poot__cc_f16_decode(pc_kctx *k, poot_kir_value h, poot_kir_value *out) {
  poot_kir_value sign, e, man, t1, t2, normal, inf, sub, subf, sb, z, c;
  T(poot__cc_bin_c(k, OP(AND), h, 0x8000, &sign));
  T(poot__cc_bin_c(k, OP(SHL), sign, 16, &sign));
  T(poot__cc_bin_c(k, OP(SHR), h, 10, &e));
  T(poot__cc_bin_c(k, OP(AND), e, 0x1f, &e));
  T(poot__cc_bin_c(k, OP(AND), h, 0x3ff, &man));
  /* normal: sign | (e + 112) << 23 | man << 13 */
  T(poot__cc_bin_c(k, OP(ADD), e, 112, &t1));
  T(poot__cc_bin_c(k, OP(SHL), t1, 23, &t1));
  T(poot__cc_bin_c(k, OP(SHL), man, 13, &t2));
  T(poot__cc_bin(k, OP(OR), t1, t2, &normal));
  T(poot__cc_bin(k, OP(OR), normal, sign, &normal));
  /* inf/nan */
  T(poot__cc_bin_c(k, OP(OR), t2, 0x7f800000u, &inf));
  T(poot__cc_bin(k, OP(OR), inf, sign, &inf));
  /* subnormal/zero: man * 2^-24, exact */
  T(poot__cc_cvt(k, S(F32), man, &subf));
  T(poot__cc_cf32(k, 5.9604644775390625e-08f, &c));
  T(poot__cc_bin(k, OP(MUL), subf, c, &subf));
  T(poot__cc_bcast(k, S(U32), subf, &sb));
  T(poot__cc_bin(k, OP(OR), sb, sign, &sub));
  T(poot__cc_u32(k, 0, &z));
  poot_kir_value is0, is31, r;
  T(poot__cc_bin(k, OP(EQ), e, z, &is0));
  T(poot__cc_bin_c(k, OP(EQ), e, 0x1f, &is31));
  T(poot__cc_sel(k, is31, inf, normal, &r));
  T(poot__cc_sel(k, is0, sub, r, &r));
  return poot__cc_bcast(k, S(F32), r, out);
}

/* f32 value → f16 bits (u32), round to nearest even, as poot_f32_to_f16
 * (which quiets NaNs) when `quiet`; otherwise NaN payloads are kept as they
 * are (the bits of a value that is already an f16: stores and bitcasts). */
static poot_status f16_encode_q(pc_kctx *k, poot_kir_value f, bool quiet, poot_kir_value *out) {
  poot_kir_value x, sign, exp, man, ei, nan_inf, manhi, qnan, infv;
  T(poot__cc_bcast(k, S(U32), f, &x));
  T(poot__cc_bin_c(k, OP(SHR), x, 16, &sign));
  T(poot__cc_bin_c(k, OP(AND), sign, 0x8000, &sign));
  T(poot__cc_bin_c(k, OP(SHR), x, 23, &exp));
  T(poot__cc_bin_c(k, OP(AND), exp, 0xff, &exp));
  T(poot__cc_bin_c(k, OP(AND), x, 0x7fffff, &man));
  T(poot__cc_bin_c(k, OP(SHR), man, 13, &manhi));
  T(poot__cc_bin_c(k, OP(OR), manhi, quiet ? 0x7e00 : 0x7c00, &qnan));
  T(poot__cc_u32(k, 0x7c00, &infv));
  poot_kir_value man0, zero;
  T(poot__cc_u32(k, 0, &zero));
  T(poot__cc_bin(k, OP(EQ), man, zero, &man0));
  T(poot__cc_sel(k, man0, infv, qnan, &nan_inf));
  /* e = exp - 112 as i32 */
  T(poot__cc_bcast(k, S(I32), exp, &ei));
  T(poot__cc_bin_c(k, OP(SUB), ei, 112, &ei));
  /* normal: h = e << 10 | man >> 13, round on the low 13 bits */
  poot_kir_value eu, h, rem, odd, up, gt, eq, t, normal;
  poot_kir_value ec;
  T(ci32(k, 1, &t));
  T(poot__cc_bin(k, OP(MAX), ei, t, &ec));
  T(poot__cc_bcast(k, S(U32), ec, &eu));
  T(poot__cc_bin_c(k, OP(SHL), eu, 10, &h));
  T(poot__cc_bin(k, OP(OR), h, manhi, &h));
  T(poot__cc_bin_c(k, OP(AND), man, 0x1fff, &rem));
  T(poot__cc_bin_c(k, OP(AND), h, 1, &odd));
  T(poot__cc_bin_c(k, OP(GT), rem, 0x1000, &gt));
  T(poot__cc_bin_c(k, OP(EQ), rem, 0x1000, &eq));
  poot_kir_value oddb;
  T(poot__cc_bin_c(k, OP(NE), odd, 0, &oddb));
  T(poot__cc_bin(k, OP(AND), eq, oddb, &eq));
  T(poot__cc_bin(k, OP(OR), gt, eq, &up));
  poot_kir_value one, hp;
  T(poot__cc_u32(k, 1, &one));
  T(poot__cc_bin(k, OP(ADD), h, one, &hp));
  T(poot__cc_sel(k, up, hp, h, &normal));
  /* subnormal: e in [-10, 0] */
  poot_kir_value es, lo, hi, shift, m2, hm, rm, mask, half, oddm, up2, sub;
  T(ci32(k, -10, &lo));
  T(ci32(k, 0, &hi));
  T(poot__cc_bin(k, OP(MAX), ei, lo, &es));
  T(poot__cc_bin(k, OP(MIN), es, hi, &es));
  poot_kir_value c14;
  T(ci32(k, 14, &c14));
  T(poot__cc_bin(k, OP(SUB), c14, es, &shift));
  T(poot__cc_bcast(k, S(U32), shift, &shift));
  T(poot__cc_bin_c(k, OP(OR), man, 0x800000, &m2));
  T(poot__cc_bin(k, OP(SHR), m2, shift, &hm));
  T(poot__cc_bin(k, OP(SHL), one, shift, &mask));
  T(poot__cc_bin(k, OP(SUB), mask, one, &mask));
  T(poot__cc_bin(k, OP(AND), m2, mask, &rm));
  poot_kir_value sh1;
  T(poot__cc_bin(k, OP(SUB), shift, one, &sh1));
  T(poot__cc_bin(k, OP(SHL), one, sh1, &half));
  T(poot__cc_bin_c(k, OP(AND), hm, 1, &oddm));
  T(poot__cc_bin_c(k, OP(NE), oddm, 0, &oddm));
  T(poot__cc_bin(k, OP(GT), rm, half, &gt));
  T(poot__cc_bin(k, OP(EQ), rm, half, &eq));
  T(poot__cc_bin(k, OP(AND), eq, oddm, &eq));
  T(poot__cc_bin(k, OP(OR), gt, eq, &up2));
  T(poot__cc_bin(k, OP(ADD), hm, one, &hp));
  T(poot__cc_sel(k, up2, hp, hm, &sub));
  /* pick */
  poot_kir_value r, isnan, isover, issub, iszero, c31, cm10;
  T(poot__cc_bin_c(k, OP(EQ), exp, 0xff, &isnan));
  T(ci32(k, 31, &c31));
  T(poot__cc_bin(k, OP(GE), ei, c31, &isover));
  T(poot__cc_bin(k, OP(LE), ei, hi, &issub));
  T(ci32(k, -10, &cm10));
  T(poot__cc_bin(k, OP(LT), ei, cm10, &iszero));
  T(poot__cc_sel(k, issub, sub, normal, &r));
  T(poot__cc_sel(k, iszero, zero, r, &r));
  T(poot__cc_sel(k, isover, infv, r, &r));
  T(poot__cc_sel(k, isnan, nan_inf, r, &r));
  return poot__cc_bin(k, OP(OR), r, sign, out);
}

static poot_status f16_encode(pc_kctx *k, poot_kir_value f, poot_kir_value *out) {
  return f16_encode_q(k, f, true, out);
}

/* f32 → bf16 bits (u32), as poot_f32_to_bf16. */
static poot_status bf16_encode(pc_kctx *k, poot_kir_value f, poot_kir_value *out) {
  poot_kir_value x, a, isnan, qn, lsb, r;
  T(poot__cc_bcast(k, S(U32), f, &x));
  T(poot__cc_bin_c(k, OP(AND), x, 0x7fffffff, &a));
  T(poot__cc_bin_c(k, OP(GT), a, 0x7f800000, &isnan));
  T(poot__cc_bin_c(k, OP(SHR), x, 16, &qn));
  T(poot__cc_bin_c(k, OP(OR), qn, 0x40, &qn));
  T(poot__cc_bin_c(k, OP(SHR), x, 16, &lsb));
  T(poot__cc_bin_c(k, OP(AND), lsb, 1, &lsb));
  T(poot__cc_bin(k, OP(ADD), x, lsb, &r));
  T(poot__cc_bin_c(k, OP(ADD), r, 0x7fff, &r));
  T(poot__cc_bin_c(k, OP(SHR), r, 16, &r));
  return poot__cc_sel(k, isnan, qn, r, out);
}

static poot_status bf16_decode(pc_kctx *k, poot_kir_value h, poot_kir_value *out) {
  poot_kir_value x;
  T(poot__cc_bin_c(k, OP(SHL), h, 16, &x));
  return poot__cc_bcast(k, S(F32), x, out);
}

/* Wraps an integer compute value to the width of dt. */
poot_status poot__cc_wrap_int(pc_kctx *k, poot_dtype dt, poot_kir_value x, poot_kir_value *out) {
  switch (dt) {
    case POOT_DTYPE_I8:
    case POOT_DTYPE_I16: {
      uint32_t s = dt == POOT_DTYPE_I8 ? 24 : 16;
      poot_kir_value t;
      T(poot__cc_bin_c(k, OP(SHL), x, s, &t));
      return poot__cc_bin_c(k, OP(SHR), t, s, out);
    }
    case POOT_DTYPE_U8:
      return poot__cc_bin_c(k, OP(AND), x, 0xff, out);
    default:
      *out = x;
      return NULL;
  }
}

poot_status poot__cc_round(pc_kctx *k, poot_dtype dt, poot_kir_value x, poot_kir_value *out) {
  poot_kir_value b;
  switch (dt) {
    case POOT_DTYPE_F16:
      T(f16_encode(k, x, &b));
      return poot__cc_f16_decode(k, b, out);
    case POOT_DTYPE_BF16:
      T(bf16_encode(k, x, &b));
      return bf16_decode(k, b, out);
    default:
      return poot__cc_wrap_int(k, dt, x, out);
  }
}

/* Bits of dtype dt (low bits of a u32) → compute value. */
static poot_status from_bits(pc_kctx *k, poot_kir_value bits, poot_dtype dt, poot_kir_value *out) {
  switch (dt) {
    case POOT_DTYPE_F32:
      return poot__cc_bcast(k, S(F32), bits, out);
    case POOT_DTYPE_F16:
      return poot__cc_f16_decode(k, bits, out);
    case POOT_DTYPE_BF16:
      return bf16_decode(k, bits, out);
    case POOT_DTYPE_I8:
    case POOT_DTYPE_I16:
    case POOT_DTYPE_I32: {
      poot_kir_value i;
      T(poot__cc_bcast(k, S(I32), bits, &i));
      return poot__cc_wrap_int(k, dt, i, out);
    }
    case POOT_DTYPE_U8:
    case POOT_DTYPE_U32:
      *out = bits;
      return NULL;
    case POOT_DTYPE_BOOL:
      return poot__cc_bin_c(k, OP(NE), bits, 0, out);
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: no element load for %s",
                              poot_dtype_name(dt));
  }
}

poot_status poot__cc_to_bits(pc_kctx *k, poot_kir_value x, poot_dtype dt, poot_kir_value *out) {
  poot_kir_value u;
  switch (dt) {
    case POOT_DTYPE_F32:
      return poot__cc_bcast(k, S(U32), x, out);
    case POOT_DTYPE_F16:
      return f16_encode_q(k, x, false, out);
    case POOT_DTYPE_BF16:
      /* the value is already a bf16: its top half, NaN payload kept */
      T(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(SHR), u, 16, out);
    case POOT_DTYPE_I8:
    case POOT_DTYPE_U8:
      T(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(AND), u, 0xff, out);
    case POOT_DTYPE_I16:
      T(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(AND), u, 0xffff, out);
    case POOT_DTYPE_I32:
    case POOT_DTYPE_U32:
      return poot__cc_bcast(k, S(U32), x, out);
    case POOT_DTYPE_BOOL: {
      poot_kir_value one, zero;
      T(poot__cc_u32(k, 1, &one));
      T(poot__cc_u32(k, 0, &zero));
      return poot__cc_sel(k, x, one, zero, out);
    }
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: no element store for %s",
                              poot_dtype_name(dt));
  }
}

/* Temp/slot word format: compute-type bits (bool 0/1). */
static poot_status word_to_value(pc_kctx *k, poot_kir_value w, poot_dtype dt, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_compute_scalar(dt);
  if (s == S(BOOL)) return poot__cc_bin_c(k, OP(NE), w, 0, out);
  return poot__cc_bcast(k, s, w, out);
}
static poot_status value_to_word(pc_kctx *k, poot_kir_value v, poot_kir_value *out) {
  if (sc(k, v) == S(BOOL)) {
    poot_kir_value one, zero;
    T(poot__cc_u32(k, 1, &one));
    T(poot__cc_u32(k, 0, &zero));
    return poot__cc_sel(k, v, one, zero, out);
  }
  return poot__cc_bcast(k, S(U32), v, out);
}

static poot_status i64_from_words(pc_kctx *k, poot_kir_value lo, poot_kir_value hi,
                                  poot_kir_value *out) {
  poot_kir_value l, h, c32;
  T(poot__cc_cvt(k, S(I64), lo, &l));
  T(poot__cc_cvt(k, S(I64), hi, &h));
  T(poot_kir_const(k->b, S(I64), 32, &c32));
  T(poot__cc_bin(k, OP(SHL), h, c32, &h));
  return poot__cc_bin(k, OP(OR), h, l, out);
}

/* ------------------------------------------------------------- loads */

poot_status poot__cc_load_value(pc_kctx *k, poot_value v, poot_kir_value lin, poot_kir_value *out) {
  pc_value *pv = &k->pl->v[v];
  poot_dtype dt = poot__cc_type(k->pl, v)->dtype;
  const poot_dtype_info *di = poot_dtype_info_of(dt);
  uint32_t ref = 0;
  poot_kir_value base = 0, w, w2, idx;
  k->bytes += di->elem_bytes ? di->elem_bytes : 1;
  if (pv->hold == PC_TEMP || pv->hold == PC_SLOT) {
    if (pv->hold == PC_TEMP) {
      T(poot__cc_binding_of(k, 0, &ref));
      T(temp_offset(k, pv->temp, &base));
      note_read(k, pv->temp);
    } else {
      T(poot__cc_binding_of(k, 1, &ref));
      T(poot__cc_u32(k, pv->slot_word, &base));
    }
    if (dt == POOT_DTYPE_I64) {
      T(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      T(poot__cc_bin(k, OP(ADD), idx, base, &idx));
      T(poot__cc_load_word(k, ref, idx, &w));
      T(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      T(poot__cc_load_word(k, ref, idx, &w2));
      return i64_from_words(k, w, w2, out);
    }
    T(poot__cc_bin(k, OP(ADD), lin, base, &idx));
    T(poot__cc_load_word(k, ref, idx, &w));
    return word_to_value(k, w, dt, out);
  }
  if (pv->hold != PC_LEAFBUF && pv->hold != PC_DENSE)
    return poot_status_make(POOT_INTERNAL, "compile: value %%%u has no storage", v);
  T(poot__cc_binding_of(k, pv->buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  switch (di->elem_bytes) {
    case 8:
      T(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      T(poot__cc_load_word(k, ref, idx, &w));
      T(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      T(poot__cc_load_word(k, ref, idx, &w2));
      return i64_from_words(k, w, w2, out);
    case 4:
      T(poot__cc_load_word(k, ref, lin, &w));
      return from_bits(k, w, dt, out);
    case 2:
    case 1: {
      uint32_t per = 4 / (uint32_t)di->elem_bytes;
      poot_kir_value sh;
      T(poot__cc_bin_c(k, OP(DIV), lin, per, &idx));
      T(poot__cc_load_word(k, ref, idx, &w));
      T(poot__cc_bin_c(k, OP(REM), lin, per, &sh));
      T(poot__cc_bin_c(k, OP(MUL), sh, 8 * (uint32_t)di->elem_bytes, &sh));
      T(poot__cc_bin(k, OP(SHR), w, sh, &w));
      T(poot__cc_bin_c(k, OP(AND), w, di->elem_bytes == 2 ? 0xffff : 0xff, &w));
      return from_bits(k, w, dt, out);
    }
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: cannot load %s elements",
                              poot_dtype_name(dt));
  }
}

poot_status poot__cc_store_value(pc_kctx *k, poot_value v, poot_kir_value lin, poot_kir_value val) {
  pc_value *pv = &k->pl->v[v];
  poot_dtype dt = poot__cc_type(k->pl, v)->dtype;
  uint32_t ref = 0;
  poot_kir_value base, idx, w;
  k->bytes += 4;
  if (pv->hold == PC_TEMP) {
    T(poot__cc_binding_of(k, 0, &ref));
    T(temp_offset(k, pv->temp, &base));
    if (dt == POOT_DTYPE_I64) {
      poot_kir_value lo, hi, c32;
      T(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      T(poot__cc_bin(k, OP(ADD), idx, base, &idx));
      T(poot__cc_cvt(k, S(U32), val, &lo));
      T(poot_kir_const(k->b, S(I64), 32, &c32));
      T(poot__cc_bin(k, OP(SHR), val, c32, &hi));
      T(poot__cc_cvt(k, S(U32), hi, &hi));
      T(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, lo));
      T(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, hi);
    }
    T(poot__cc_bin(k, OP(ADD), lin, base, &idx));
    T(value_to_word(k, val, &w));
    return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, w);
  }
  if (pv->hold != PC_DENSE)
    return poot_status_make(POOT_INTERNAL, "compile: value %%%u is not stored", v);
  T(poot__cc_binding_of(k, pv->buffer, &ref));
  poot__cc_note_buffer(k, ref, 1.0);
  const poot_dtype_info *di = poot_dtype_info_of(dt);
  if (di->elem_bytes == 8) {
    poot_kir_value lo, hi, c32;
    T(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
    T(poot__cc_cvt(k, S(U32), val, &lo));
    T(poot_kir_const(k->b, S(I64), 32, &c32));
    T(poot__cc_bin(k, OP(SHR), val, c32, &hi));
    T(poot__cc_cvt(k, S(U32), hi, &hi));
    T(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, lo));
    T(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
    return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, hi);
  }
  if (di->elem_bytes != 4)
    return poot_status_make(POOT_INTERNAL, "compile: element store of %s", poot_dtype_name(dt));
  T(poot__cc_to_bits(k, val, dt, &w));
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, lin, w);
}

/* ---------------------------------------------------------- constants */

poot_status poot__cc_const_of(pc_kctx *k, poot_dtype dt, double f, int64_t i, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_compute_scalar(dt);
  if (s == S(F32)) return poot__cc_cf32(k, (float)f, out);
  if (s == S(BOOL)) return poot_kir_const_bool(k->b, i != 0, out);
  return cscal(k, s, i, out);
}

static poot_status const_literal(pc_kctx *k, const poot_tensor *c, poot_kir_value *out) {
  poot_dtype dt = c->type.dtype;
  const uint8_t *p = c->data;
  uint64_t bits = 0;
  size_t n = poot_dtype_info_of(dt)->elem_bytes;
  memcpy(&bits, p, n);
  if (dt == POOT_DTYPE_I64) return poot_kir_const(k->b, S(I64), bits, out);
  poot_kir_value b;
  T(poot__cc_u32(k, (uint32_t)bits, &b));
  /* Fold through the same decoder a load uses (constants are rare and small). */
  if (dt == POOT_DTYPE_F32) {
    float f;
    memcpy(&f, p, 4);
    return poot__cc_cf32(k, f, out);
  }
  if (dt == POOT_DTYPE_F16) return poot__cc_cf32(k, poot_f16_to_f32((uint16_t)bits), out);
  if (dt == POOT_DTYPE_BF16) return poot__cc_cf32(k, poot_bf16_to_f32((uint16_t)bits), out);
  if (dt == POOT_DTYPE_I8) return ci32(k, (int8_t)bits, out);
  if (dt == POOT_DTYPE_I16) return ci32(k, (int16_t)bits, out);
  if (dt == POOT_DTYPE_BOOL) return poot_kir_const_bool(k->b, bits != 0, out);
  return from_bits(k, b, dt, out);
}

/* ------------------------------------------------------- elementwise */

static bool is_nan_check(poot_kir_op op) {
  (void)op;
  return false;
}

static poot_status fminmax(pc_kctx *k, bool is_max, poot_kir_value a, poot_kir_value b,
                           poot_kir_value *out) {
  poot_kir_value gt, r, eq, ba, bb, bz, z, na, nb;
  T(poot__cc_bin(k, is_max ? OP(GT) : OP(LT), a, b, &gt));
  T(poot__cc_sel(k, gt, a, b, &r));
  T(poot__cc_bin(k, OP(EQ), a, b, &eq));
  T(poot__cc_bcast(k, S(U32), a, &ba));
  T(poot__cc_bcast(k, S(U32), b, &bb));
  T(poot__cc_bin(k, is_max ? OP(AND) : OP(OR), ba, bb, &bz));
  T(poot__cc_bcast(k, S(F32), bz, &z));
  T(poot__cc_sel(k, eq, z, r, &r));
  T(poot__cc_bin(k, OP(NE), a, a, &na));
  T(poot__cc_bin(k, OP(NE), b, b, &nb));
  T(poot__cc_sel(k, nb, b, r, &r));
  return poot__cc_sel(k, na, a, r, out);
}

/* Accumulation step of reductions: add/max/min in dtype dt. */
poot_status poot__cc_accum(pc_kctx *k, poot_kir_op op, poot_dtype dt, poot_kir_value a,
                           poot_kir_value b, poot_kir_value *out) {
  poot_kir_value r;
  if (poot_dtype_is_float(dt) && (op == OP(MAX) || op == OP(MIN)))
    return fminmax(k, op == OP(MAX), a, b, out);
  T(poot__cc_bin(k, op, a, b, &r));
  return poot__cc_round(k, dt, r, out);
}

static poot_status int_divrem(pc_kctx *k, bool div, poot_dtype dt, poot_kir_value a,
                              poot_kir_value b, poot_kir_value *out) {
  poot_kir_scalar s = sc(k, a);
  bool sgn = s != S(U32);
  poot_kir_value zero, one, m1, b0, bm1, bad, sb, r, na;
  T(cscal(k, s, 0, &zero));
  T(cscal(k, s, 1, &one));
  T(cscal(k, s, -1, &m1));
  T(poot__cc_bin(k, OP(EQ), b, zero, &b0));
  bad = b0;
  if (sgn) {
    T(poot__cc_bin(k, OP(EQ), b, m1, &bm1));
    T(poot__cc_bin(k, OP(OR), b0, bm1, &bad));
  }
  T(poot__cc_sel(k, bad, one, b, &sb));
  T(poot__cc_bin(k, div ? OP(DIV) : OP(REM), a, sb, &r));
  if (sgn) {
    if (div) {
      T(un(k, OP(NEG), a, &na));
      T(poot__cc_sel(k, bm1, na, r, &r));
    } else {
      T(poot__cc_sel(k, bm1, zero, r, &r));
    }
  }
  T(poot__cc_sel(k, b0, div ? m1 : a, r, &r));
  return poot__cc_wrap_int(k, dt, r, out);
}

/* Leading-zero normalization of a significand: while bit 23 of m is clear
 * (and m is not 0), m <<= 1 and e -= 1; at most `steps` times (unrolled). */
static poot_status normalize23(pc_kctx *k, poot_kir_value *m, poot_kir_value *e, uint32_t steps) {
  poot_kir_value zu, one_i;
  T(poot__cc_u32(k, 0, &zu));
  T(poot_kir_const_i32(k->b, 1, &one_i));
  for (uint32_t i = 0; i < steps; i++) {
    poot_kir_value top, clear, nz, go, m2, e2;
    T(poot__cc_bin_c(k, OP(SHR), *m, 23, &top));
    T(poot__cc_bin(k, OP(EQ), top, zu, &clear));
    T(poot__cc_bin(k, OP(NE), *m, zu, &nz));
    T(poot__cc_bin(k, OP(AND), clear, nz, &go));
    T(poot__cc_bin_c(k, OP(SHL), *m, 1, &m2));
    T(poot__cc_bin(k, OP(SUB), *e, one_i, &e2));
    T(poot__cc_sel(k, go, m2, *m, m));
    T(poot__cc_sel(k, go, e2, *e, e));
  }
  return NULL;
}

/* The significand (bit 23 set) and unbiased-by-127 exponent of |x| bits
 * ax (finite, not 0), denormals normalized: ax = m · 2^(e - 150). */
static poot_status f32_split(pc_kctx *k, poot_kir_value ax, poot_kir_value *m,
                             poot_kir_value *e) {
  poot_kir_value eu, man, den, zu, one_i, mn;
  T(poot__cc_u32(k, 0, &zu));
  T(poot_kir_const_i32(k->b, 1, &one_i));
  T(poot__cc_bin_c(k, OP(SHR), ax, 23, &eu));
  T(poot__cc_bin_c(k, OP(AND), ax, 0x7fffff, &man));
  T(poot__cc_bin(k, OP(EQ), eu, zu, &den));
  T(poot__cc_bin_c(k, OP(OR), man, 0x800000, &mn));
  T(poot__cc_sel(k, den, man, mn, m));
  T(poot__cc_bcast(k, S(I32), eu, e));
  T(poot__cc_sel(k, den, one_i, *e, e)); /* a denormal has exponent 1 */
  return normalize23(k, m, e, 23);
}

/* Float rem, exactly C's fmodf (the oracle's): |x| mod |y| by long division
 * on the significands (one shift-subtract per binade between them: at most
 * 277), then renormalized; the sign of x. NaN (0x7fc00000) when y is 0 or
 * x is infinite or either is NaN. Every step is exact. */
static poot_status f32_rem(pc_kctx *k, poot_kir_value x, poot_kir_value y, poot_kir_value *out) {
  char nm[32];
  uint32_t pm;
  poot_kir_value ux, uy, sx, ax, ay, zu, nan_in, lt, eq, mx, ex, my, ey, n, i0, one_u, c;
  T(poot__cc_bcast(k, S(U32), x, &ux));
  T(poot__cc_bcast(k, S(U32), y, &uy));
  T(poot__cc_bin_c(k, OP(AND), ux, 0x80000000u, &sx));
  T(poot__cc_bin_c(k, OP(AND), ux, 0x7fffffffu, &ax));
  T(poot__cc_bin_c(k, OP(AND), uy, 0x7fffffffu, &ay));
  T(poot__cc_u32(k, 0, &zu));
  {
    poot_kir_value y0, xinf, ynan;
    T(poot__cc_bin(k, OP(EQ), ay, zu, &y0));
    T(poot__cc_bin_c(k, OP(GE), ax, 0x7f800000u, &xinf));
    T(poot__cc_bin_c(k, OP(GT), ay, 0x7f800000u, &ynan));
    T(poot__cc_bin(k, OP(OR), y0, xinf, &nan_in));
    T(poot__cc_bin(k, OP(OR), nan_in, ynan, &nan_in));
  }
  T(poot__cc_bin(k, OP(LT), ax, ay, &lt));
  T(poot__cc_bin(k, OP(EQ), ax, ay, &eq));
  /* safe operands for the division path (the selects below discard it) */
  poot_kir_value sax, say, bad, onef;
  T(poot__cc_bin(k, OP(OR), nan_in, lt, &bad));
  T(poot__cc_bin(k, OP(OR), bad, eq, &bad));
  T(poot__cc_u32(k, 0x3f800000u, &onef));
  T(poot__cc_sel(k, bad, onef, ax, &sax));
  T(poot__cc_sel(k, bad, onef, ay, &say));
  T(f32_split(k, sax, &mx, &ex));
  T(f32_split(k, say, &my, &ey));
  /* for (i = 0; i < ex - ey; i++) { d = m - my; if (d >= 0) m = d; m <<= 1; } */
  T(poot_kir_add_private(k->b, poot__cc_name(k, "fm", nm, sizeof nm),
                         poot_kir_type_make(S(U32), 1), 1, &pm));
  T(poot_kir_priv_store(k->b, pm, 0, mx));
  T(poot__cc_bin(k, OP(SUB), ex, ey, &n));
  T(poot__cc_bcast(k, S(U32), n, &n)); /* ex >= ey on this path */
  T(poot__cc_u32(k, 0, &i0));
  T(poot__cc_u32(k, 1, &one_u));
  T(poot_kir_for_begin(k->b, i0, n, one_u, &c));
  {
    poot_kir_value m, d, ge, m2;
    T(poot_kir_priv_load(k->b, pm, 0, &m));
    T(poot__cc_bin(k, OP(GE), m, my, &ge));
    T(poot__cc_bin(k, OP(SUB), m, my, &d));
    T(poot__cc_sel(k, ge, d, m, &m2));
    T(poot__cc_bin_c(k, OP(SHL), m2, 1, &m2));
    T(poot_kir_priv_store(k->b, pm, 0, m2));
  }
  T(poot_kir_end(k->b));
  (void)c;
  poot_kir_value m, ge, d, e = ey, r, isz, den, sh, shu, mden, e23, mnorm, one_i;
  T(poot_kir_priv_load(k->b, pm, 0, &m));
  T(poot__cc_bin(k, OP(GE), m, my, &ge));
  T(poot__cc_bin(k, OP(SUB), m, my, &d));
  T(poot__cc_sel(k, ge, d, m, &m));
  T(poot__cc_bin(k, OP(EQ), m, zu, &isz));
  T(normalize23(k, &m, &e, 24));
  /* e > 0: normal; else a denormal: m >> (1 - e) (exact: the low bits are 0) */
  T(poot_kir_const_i32(k->b, 1, &one_i));
  T(poot__cc_bin(k, OP(LT), e, one_i, &den));
  T(poot__cc_bin(k, OP(SUB), one_i, e, &sh));
  T(poot__cc_bcast(k, S(U32), sh, &shu));
  {
    poot_kir_value c31;
    T(poot__cc_u32(k, 31, &c31));
    T(poot__cc_bin(k, OP(MIN), shu, c31, &shu));
  }
  T(poot__cc_bin(k, OP(SHR), m, shu, &mden));
  T(poot__cc_bcast(k, S(U32), e, &e23));
  T(poot__cc_bin_c(k, OP(SHL), e23, 23, &e23));
  T(poot__cc_bin_c(k, OP(AND), m, 0x7fffff, &mnorm));
  T(poot__cc_bin(k, OP(OR), mnorm, e23, &mnorm));
  T(poot__cc_sel(k, den, mden, mnorm, &r));
  T(poot__cc_sel(k, isz, zu, r, &r));
  /* the cases decided before the division */
  T(poot__cc_sel(k, eq, zu, r, &r));
  T(poot__cc_sel(k, lt, ax, r, &r));
  T(poot__cc_bin(k, OP(OR), r, sx, &r));
  {
    poot_kir_value qn;
    T(poot__cc_u32(k, 0x7fc00000u, &qn));
    T(poot__cc_sel(k, nan_in, qn, r, &r));
  }
  return poot__cc_bcast(k, S(F32), r, out);
}

/* Integer pow as the oracle computes it: square-and-multiply over the
 * exponent's bits, wrapping at the dtype's width (32-bit arithmetic wraps
 * the same way below it); a negative signed exponent gives 1 for base 1,
 * ±1 for base -1 and 0 otherwise. */
static poot_status int_pow(pc_kctx *k, poot_dtype dt, poot_kir_value a, poot_kir_value b,
                           poot_kir_value *out) {
  poot_kir_scalar s = sc(k, a);
  bool sgn = s != S(U32);
  /* An i64 exponent has 64 bits to visit (odd bases do not repeat within
   * 2^32 steps modulo 2^64); a narrower one is widened to u32. */
  bool wide = s == S(I64);
  uint32_t bits = wide ? 64 : 32;
  poot_kir_value r, base = a, e, one, zero, m1, ez;
  T(cscal(k, s, 1, &one));
  T(cscal(k, s, 0, &zero));
  T(cscal(k, s, -1, &m1));
  if (wide) {
    e = b;
    ez = zero;
  } else {
    T(poot__cc_bcast(k, S(U32), b, &e));
    T(poot__cc_u32(k, 0, &ez));
  }
  r = one;
  for (uint32_t bit = 0; bit < bits; bit++) {
    poot_kir_value lsb, set, rb;
    T(poot__cc_bin_c(k, OP(AND), e, 1, &lsb));
    T(poot__cc_bin(k, OP(NE), lsb, ez, &set));
    T(poot__cc_bin(k, OP(MUL), r, base, &rb));
    T(poot__cc_sel(k, set, rb, r, &r));
    if (bit + 1 < bits) {
      T(poot__cc_bin(k, OP(MUL), base, base, &base));
      T(poot__cc_bin_c(k, OP(SHR), e, 1, &e));
    }
  }
  if (sgn) {
    poot_kir_value neg, b1, bm1, odd, t, oddu;
    T(poot__cc_bin(k, OP(LT), b, zero, &neg));
    T(poot__cc_bin(k, OP(EQ), a, one, &b1));
    T(poot__cc_bin(k, OP(EQ), a, m1, &bm1));
    if (wide)
      oddu = b;
    else
      T(poot__cc_bcast(k, S(U32), b, &oddu));
    T(poot__cc_bin_c(k, OP(AND), oddu, 1, &oddu));
    T(poot__cc_bin(k, OP(NE), oddu, ez, &odd));
    T(poot__cc_sel(k, odd, m1, one, &t)); /* base -1 */
    T(poot__cc_sel(k, bm1, t, zero, &t));
    T(poot__cc_sel(k, b1, one, t, &t));
    T(poot__cc_sel(k, neg, t, r, &r));
  }
  return poot__cc_wrap_int(k, dt, r, out);
}

static poot_status int_shift(pc_kctx *k, bool left, poot_dtype dt, poot_kir_value a,
                             poot_kir_value b, poot_kir_value *out) {
  poot_kir_scalar s = sc(k, a);
  bool sgn = s != S(U32);
  uint32_t width = poot_dtype_info_of(dt)->bits;
  poot_kir_value zero, w, bad, neg, sb, r, fill, m1;
  T(cscal(k, s, 0, &zero));
  T(cscal(k, s, width, &w));
  T(poot__cc_bin(k, OP(GE), b, w, &bad));
  if (sgn) {
    T(poot__cc_bin(k, OP(LT), b, zero, &neg));
    T(poot__cc_bin(k, OP(OR), bad, neg, &bad));
  }
  T(poot__cc_sel(k, bad, zero, b, &sb));
  T(poot__cc_bin(k, left ? OP(SHL) : OP(SHR), a, sb, &r));
  fill = zero;
  if (!left && sgn) {
    poot_kir_value lt;
    T(cscal(k, s, -1, &m1));
    T(poot__cc_bin(k, OP(LT), a, zero, &lt));
    T(poot__cc_sel(k, lt, m1, zero, &fill));
  }
  T(poot__cc_sel(k, bad, fill, r, &r));
  return poot__cc_wrap_int(k, dt, r, out);
}

poot_status poot__cc_convert(pc_kctx *k, poot_kir_value x, poot_dtype from, poot_dtype to,
                             poot_kir_value *out) {
  poot_kir_scalar fs = poot__cc_compute_scalar(from), ts = poot__cc_compute_scalar(to);
  poot_kir_value r;
  if (from == to) {
    *out = x;
    return NULL;
  }
  if (to == POOT_DTYPE_BOOL) {
    poot_kir_value z;
    if (fs == S(BOOL)) {
      *out = x;
      return NULL;
    }
    T(cscal(k, fs, 0, &z));
    if (fs == S(F32)) T(poot__cc_cf32(k, 0.0f, &z));
    return poot__cc_bin(k, OP(NE), x, z, out);
  }
  if (fs == S(BOOL)) {
    poot_kir_value one, zero;
    T(poot__cc_const_of(k, to, 1.0, 1, &one));
    T(poot__cc_const_of(k, to, 0.0, 0, &zero));
    return poot__cc_sel(k, x, one, zero, out);
  }
  if (ts == S(F32)) {
    T(poot__cc_cvt(k, S(F32), x, &r));
    return poot__cc_round(k, to, r, out);
  }
  if (fs == S(F32)) {
    /* float → int: truncate, saturate, NaN → 0 (KIR convert); narrow ints
     * clamp after a conversion to 32 bits. */
    switch (to) {
      case POOT_DTYPE_I8:
      case POOT_DTYPE_I16: {
        poot_kir_value lo, hi;
        T(poot__cc_cvt(k, S(I32), x, &r));
        T(ci32(k, to == POOT_DTYPE_I8 ? -128 : -32768, &lo));
        T(ci32(k, to == POOT_DTYPE_I8 ? 127 : 32767, &hi));
        T(poot__cc_bin(k, OP(MAX), r, lo, &r));
        return poot__cc_bin(k, OP(MIN), r, hi, out);
      }
      case POOT_DTYPE_U8: {
        poot_kir_value hi;
        T(poot__cc_cvt(k, S(U32), x, &r));
        T(poot__cc_u32(k, 255, &hi));
        return poot__cc_bin(k, OP(MIN), r, hi, out);
      }
      default:
        return poot__cc_cvt(k, ts, x, out);
    }
  }
  /* int → int: wrap */
  T(poot__cc_cvt(k, ts, x, &r));
  return poot__cc_wrap_int(k, to, r, out);
}

static bool op_is_float_math(poot_op op) {
  return op >= POOT_OP_EXP && op <= POOT_OP_SIGMOID;
}

static poot_status emit_elementwise(pc_kctx *k, const poot_node *n, poot_dtype dt,
                                    const poot_kir_value *a, poot_kir_value *out) {
  poot_op op = n->op;
  bool fl = poot_dtype_is_float(dt);
  poot_kir_value r;
  k->flops++;
  switch (op) {
    case POOT_OP_ADD:
    case POOT_OP_SUB:
    case POOT_OP_MUL: {
      poot_kir_op ko = op == POOT_OP_ADD ? OP(ADD) : op == POOT_OP_SUB ? OP(SUB) : OP(MUL);
      if (dt == POOT_DTYPE_BOOL)
        return poot_status_make(POOT_UNSUPPORTED, "compile: %s on bool", poot_op_name(op));
      T(poot__cc_bin(k, ko, a[0], a[1], &r));
      return poot__cc_round(k, dt, r, out);
    }
    case POOT_OP_DIV:
    case POOT_OP_REM:
      if (fl && op == POOT_OP_REM) {
        T(f32_rem(k, a[0], a[1], &r));
        return poot__cc_round(k, dt, r, out);
      }
      if (fl) {
        T(poot__cc_bin(k, op == POOT_OP_DIV ? OP(DIV) : OP(REM), a[0], a[1], &r));
        return poot__cc_round(k, dt, r, out);
      }
      if (dt == POOT_DTYPE_BOOL)
        return poot_status_make(POOT_UNSUPPORTED, "compile: %s on %s", poot_op_name(op),
                                poot_dtype_name(dt));
      return int_divrem(k, op == POOT_OP_DIV, dt, a[0], a[1], out);
    case POOT_OP_MAX:
    case POOT_OP_MIN:
      if (fl) {
        T(fminmax(k, op == POOT_OP_MAX, a[0], a[1], &r));
        return poot__cc_round(k, dt, r, out);
      }
      return poot__cc_bin(k, op == POOT_OP_MAX ? OP(MAX) : OP(MIN), a[0], a[1], out);
    case POOT_OP_POW:
      if (!fl) {
        if (dt == POOT_DTYPE_BOOL)
          return poot_status_make(POOT_UNSUPPORTED, "compile: pow on %s", poot_dtype_name(dt));
        return int_pow(k, dt, a[0], a[1], out);
      }
      T(poot__cc_bin(k, OP(POW), a[0], a[1], &r));
      return poot__cc_round(k, dt, r, out);
    case POOT_OP_AND:
    case POOT_OP_OR:
    case POOT_OP_XOR:
      return poot__cc_bin(k,
                          op == POOT_OP_AND  ? OP(AND)
                          : op == POOT_OP_OR ? OP(OR)
                                             : OP(XOR),
                          a[0], a[1], out);
    case POOT_OP_SHL:
    case POOT_OP_SHR:
      if (dt == POOT_DTYPE_I64) {
        /* 64-bit counts: same guards in i64. */
      }
      return int_shift(k, op == POOT_OP_SHL, dt, a[0], a[1], out);
    case POOT_OP_NEG:
      /* floats: rounded like every f16/bf16 op (which quiets a NaN) */
      T(un(k, OP(NEG), a[0], &r));
      return fl ? poot__cc_round(k, dt, r, out) : poot__cc_wrap_int(k, dt, r, out);
    case POOT_OP_ABS:
      if (fl) {
        T(un(k, OP(ABS), a[0], &r));
        return poot__cc_round(k, dt, r, out);
      }
      if (dt == POOT_DTYPE_U8 || dt == POOT_DTYPE_U32) {
        *out = a[0];
        return NULL;
      }
      {
        poot_kir_value z, lt, ng;
        T(cscal(k, sc(k, a[0]), 0, &z));
        T(poot__cc_bin(k, OP(LT), a[0], z, &lt));
        T(un(k, OP(NEG), a[0], &ng));
        T(poot__cc_wrap_int(k, dt, ng, &ng));
        return poot__cc_sel(k, lt, ng, a[0], out);
      }
    case POOT_OP_SIGN: {
      poot_kir_value z, one, m1, gt, lt;
      T(poot__cc_const_of(k, dt, 0.0, 0, &z));
      T(poot__cc_const_of(k, dt, 1.0, 1, &one));
      T(poot__cc_bin(k, OP(GT), a[0], z, &gt));
      if (dt == POOT_DTYPE_U8 || dt == POOT_DTYPE_U32) return poot__cc_sel(k, gt, one, z, out);
      T(poot__cc_const_of(k, dt, -1.0, -1, &m1));
      T(poot__cc_bin(k, OP(LT), a[0], z, &lt));
      T(poot__cc_sel(k, lt, m1, fl ? a[0] : z, &r));
      T(poot__cc_sel(k, gt, one, r, &r));
      return fl ? poot__cc_round(k, dt, r, out) : (*out = r, (poot_status)NULL);
    }
    case POOT_OP_NOT:
      T(un(k, OP(NOT), a[0], &r));
      return poot__cc_wrap_int(k, dt, r, out);
    case POOT_OP_SIGMOID: {
      poot_kir_value ng, e, one, d;
      T(un(k, OP(NEG), a[0], &ng));
      T(un(k, OP(EXP), ng, &e));
      T(poot__cc_cf32(k, 1.0f, &one));
      T(poot__cc_bin(k, OP(ADD), one, e, &d));
      T(poot__cc_bin(k, OP(DIV), one, d, &r));
      return poot__cc_round(k, dt, r, out);
    }
    case POOT_OP_RSQRT: {
      poot_kir_value s, one;
      T(un(k, OP(SQRT), a[0], &s));
      T(poot__cc_cf32(k, 1.0f, &one));
      T(poot__cc_bin(k, OP(DIV), one, s, &r));
      return poot__cc_round(k, dt, r, out);
    }
    case POOT_OP_ROUND: {
      poot_kir_value ax, t, fr, half, ge, one, t1, neg, ng;
      T(un(k, OP(ABS), a[0], &ax));
      T(un(k, OP(FLOOR), ax, &t));
      T(poot__cc_bin(k, OP(SUB), ax, t, &fr));
      T(poot__cc_cf32(k, 0.5f, &half));
      T(poot__cc_bin(k, OP(GE), fr, half, &ge));
      T(poot__cc_cf32(k, 1.0f, &one));
      T(poot__cc_bin(k, OP(ADD), t, one, &t1));
      T(poot__cc_sel(k, ge, t1, t, &t));
      /* copysign: keep a's sign bit (also for -0 and NaN) */
      poot_kir_value ba, bt, sgn;
      T(poot__cc_bcast(k, S(U32), a[0], &ba));
      T(poot__cc_bin_c(k, OP(AND), ba, 0x80000000u, &sgn));
      T(poot__cc_bcast(k, S(U32), t, &bt));
      T(poot__cc_bin(k, OP(OR), bt, sgn, &bt));
      T(poot__cc_bcast(k, S(F32), bt, &r));
      (void)neg;
      (void)ng;
      T(poot__cc_bin(k, OP(NE), a[0], a[0], &ge));
      T(poot__cc_sel(k, ge, a[0], r, &r));
      return poot__cc_round(k, dt, r, out);
    }
    case POOT_OP_EQ:
    case POOT_OP_NE:
    case POOT_OP_LT:
    case POOT_OP_LE:
    case POOT_OP_GT:
    case POOT_OP_GE: {
      static const poot_kir_op map[] = {OP(EQ), OP(NE), OP(LT), OP(LE), OP(GT), OP(GE)};
      poot_kir_value x = a[0], y = a[1];
      if (sc(k, x) == S(BOOL) && op != POOT_OP_EQ && op != POOT_OP_NE) {
        T(poot__cc_convert(k, x, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &x));
        T(poot__cc_convert(k, y, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &y));
      }
      return poot__cc_bin(k, map[op - POOT_OP_EQ], x, y, out);
    }
    case POOT_OP_SELECT:
      return poot__cc_sel(k, a[0], a[1], a[2], out);
    default:
      break;
  }
  if (op_is_float_math(op)) {
    static const struct {
      poot_op g;
      poot_kir_op kk;
    } m[] = {{POOT_OP_EXP, OP(EXP)},     {POOT_OP_EXP2, OP(EXP2)}, {POOT_OP_LOG, OP(LOG)},
             {POOT_OP_LOG2, OP(LOG2)},   {POOT_OP_SQRT, OP(SQRT)}, {POOT_OP_SIN, OP(SIN)},
             {POOT_OP_COS, OP(COS)},     {POOT_OP_TANH, OP(TANH)}, {POOT_OP_ERF, OP(ERF)},
             {POOT_OP_FLOOR, OP(FLOOR)}, {POOT_OP_CEIL, OP(CEIL)}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
      if (m[i].g == op) {
        T(un(k, m[i].kk, a[0], &r));
        return poot__cc_round(k, dt, r, out);
      }
  }
  (void)is_nan_check;
  return poot_status_make(POOT_UNSUPPORTED, "compile: op %s has no elementwise template",
                          poot_op_name(op));
}

/* ---------------------------------------------------- index helpers */

/* A scalar start/index value → i32 clamped into [0, hi] plus "in range"
 * bool. Works for i32/u32/i64 compute values. */
static poot_status index_range(pc_kctx *k, poot_kir_value x, int64_t hi, poot_kir_value *clamped,
                               poot_kir_value *ok) {
  poot_kir_scalar s = sc(k, x);
  poot_kir_value z, h, ge, le, c;
  if (s == S(BOOL)) {
    T(poot__cc_convert(k, x, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &x));
    s = S(U32);
  }
  T(cscal(k, s, 0, &z));
  T(cscal(k, s, hi, &h));
  if (s == S(U32)) {
    T(poot__cc_bin(k, OP(LE), x, h, ok));
    T(poot__cc_bin(k, OP(MIN), x, h, &c));
  } else {
    T(poot__cc_bin(k, OP(GE), x, z, &ge));
    T(poot__cc_bin(k, OP(LE), x, h, &le));
    T(poot__cc_bin(k, OP(AND), ge, le, ok));
    T(poot__cc_bin(k, OP(MAX), x, z, &c));
    T(poot__cc_bin(k, OP(MIN), c, h, &c));
  }
  return poot__cc_cvt(k, S(U32), c, clamped);
}

static poot_status maybe_check(pc_kctx *k, const poot_node *n, poot_kir_value ok) {
  if (n->trap == POOT_TRAP_NONE) return NULL;
  k->has_checks = true;
  return poot_kir_check(k->b, ok, (uint32_t)n->trap);
}

/* The start checks of a dynamic_slice / dynamic_update_slice whose result
 * has no element (so no element evaluation runs them). */
poot_status poot__cc_emit_start_checks(pc_kctx *k, poot_value v) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[pl->alias[v]].node;
  if (!n || n->trap == POOT_TRAP_NONE) return NULL;
  if (n->op != POOT_OP_DYNAMIC_SLICE && n->op != POOT_OP_DYNAMIC_UPDATE_SLICE) return NULL;
  bool dus = n->op == POOT_OP_DYNAMIC_UPDATE_SLICE;
  const poot_shape *xs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  const poot_shape *us = dus ? &poot__cc_type(pl, pl->alias[n->operands[1]])->shape
                             : &poot__cc_type(pl, pl->alias[v])->shape;
  for (uint32_t i = 0; i < xs->rank; i++) {
    poot_kir_value s, c, ok;
    T(poot__cc_emit(k, pl->alias[n->operands[(dus ? 2 : 1) + i]], NULL, &s));
    T(index_range(k, s, xs->dims[i] - us->dims[i], &c, &ok));
    T(maybe_check(k, n, ok));
  }
  return NULL;
}

/* ------------------------------------------------------------- emit */

static poot_status emit_node(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                             poot_kir_value *out);

poot_status poot__cc_emit(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                          poot_kir_value *out) {
  v = k->pl->alias[v];
  uint32_t rank = poot__cc_type(k->pl, v)->shape.rank;
  if (memo_get(k, v, rank, idx, out)) return NULL;
  T(emit_node(k, v, idx, out));
  return poot__cc_memo_put(k, v, idx, *out);
}

static poot_status emit_node(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                             poot_kir_value *out) {
  pc_planner *pl = k->pl;
  pc_value *pv = &pl->v[v];
  const poot_type *ty = poot__cc_type(pl, v);
  const poot_node *n = pv->node;
  if (pv->hold == PC_CONSTLIT) return const_literal(k, n->constant, out);
  if (v != k->computing && (pv->hold == PC_TEMP || pv->hold == PC_LEAFBUF || pv->hold == PC_SLOT ||
                            pv->hold == PC_DENSE)) {
    poot_kir_value lin;
    T(poot__cc_linearize(k, idx, &ty->shape, &lin));
    return poot__cc_load_value(k, v, lin, out);
  }
  if (pv->hold == PC_LOCAL) {
    for (uint32_t i = 0; i < k->nlocal; i++)
      if (k->local_v[i] == v) {
        poot_kir_value lin;
        T(poot__cc_linearize(k, idx, &ty->shape, &lin));
        return poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, k->local_sh[i], lin, 1, out);
      }
    return poot_status_make(POOT_INTERNAL, "compile: local value %%%u read before its prologue", v);
  }
  if (pv->hold == PC_FUSED)
    return poot_status_make(POOT_INTERNAL, "compile: fused value %%%u read outside its kernel", v);
  uint32_t nops = n->num_operands;
  poot_value ops[8] = {0};
  for (uint32_t i = 0; i < nops && i < 8; i++) ops[i] = pl->alias[n->operands[i]];
  const poot_attrs *at = &n->attrs;
  poot_kir_value sub[PC_MAX_DIMS], a[3];
  switch (n->op) {
    case POOT_OP_IOTA: {
      poot_kir_value x = idx[at->axis];
      if (poot_dtype_is_float(ty->dtype)) {
        T(poot__cc_cvt(k, S(F32), x, &x));
        return poot__cc_round(k, ty->dtype, x, out);
      }
      return poot__cc_convert(k, x, POOT_DTYPE_U32, ty->dtype, out);
    }
    case POOT_OP_CONVERT:
      T(poot__cc_emit(k, ops[0], idx, &a[0]));
      k->flops++;
      return poot__cc_convert(k, a[0], poot__cc_type(pl, ops[0])->dtype, ty->dtype, out);
    case POOT_OP_BITCAST: {
      poot_dtype from = poot__cc_type(pl, ops[0])->dtype;
      T(poot__cc_emit(k, ops[0], idx, &a[0]));
      if (from == ty->dtype) {
        *out = a[0];
        return NULL;
      }
      if (from == POOT_DTYPE_I64 || ty->dtype == POOT_DTYPE_I64)
        return poot_status_make(POOT_UNSUPPORTED, "compile: 64-bit bitcast");
      poot_kir_value bits;
      T(poot__cc_to_bits(k, a[0], from, &bits));
      return from_bits(k, bits, ty->dtype, out);
    }
    case POOT_OP_BROADCAST: {
      const poot_shape *os = &poot__cc_type(pl, ops[0])->shape;
      for (uint32_t i = 0; i < os->rank; i++) {
        if (os->dims[i] == 1)
          T(poot__cc_u32(k, 0, &sub[i]));
        else
          sub[i] = idx[at->dims[i]];
      }
      return poot__cc_emit(k, ops[0], sub, out);
    }
    case POOT_OP_RESHAPE: {
      const poot_shape *os = &poot__cc_type(pl, ops[0])->shape;
      if (poot_shape_equal(os, &ty->shape)) return poot__cc_emit(k, ops[0], idx, out);
      poot_kir_value lin;
      T(poot__cc_linearize(k, idx, &ty->shape, &lin));
      T(poot__cc_delinearize(k, lin, os, sub));
      return poot__cc_emit(k, ops[0], sub, out);
    }
    case POOT_OP_TRANSPOSE:
      for (uint32_t i = 0; i < ty->shape.rank; i++) sub[at->dims[i]] = idx[i];
      return poot__cc_emit(k, ops[0], sub, out);
    case POOT_OP_SLICE:
      for (uint32_t i = 0; i < ty->shape.rank; i++) {
        poot_kir_value x = idx[i];
        if (at->stride[i] != 1) T(poot__cc_bin_c(k, OP(MUL), x, (uint32_t)at->stride[i], &x));
        if (at->start[i] != 0) T(poot__cc_bin_c(k, OP(ADD), x, (uint32_t)at->start[i], &x));
        sub[i] = x;
      }
      return poot__cc_emit(k, ops[0], sub, out);
    case POOT_OP_CONCAT: {
      int64_t off = 0;
      poot_kir_value r = 0;
      for (uint32_t j = 0; j < nops; j++) {
        const poot_shape *os = &poot__cc_type(pl, ops[j])->shape;
        int64_t sz = os->dims[at->axis];
        if (sz == 0) continue;
        memcpy(sub, idx, ty->shape.rank * sizeof *idx);
        poot_kir_value x = idx[at->axis], lo, hi, ge, val;
        T(poot__cc_u32(k, (uint32_t)off, &lo));
        T(poot__cc_bin(k, OP(MAX), x, lo, &x));
        T(poot__cc_bin(k, OP(SUB), x, lo, &x));
        T(poot__cc_u32(k, (uint32_t)(sz - 1), &hi));
        T(poot__cc_bin(k, OP(MIN), x, hi, &sub[at->axis]));
        T(poot__cc_emit(k, ops[j], sub, &val));
        if (!r) {
          r = val;
        } else {
          T(poot__cc_bin(k, OP(GE), idx[at->axis], lo, &ge));
          T(poot__cc_sel(k, ge, val, r, &r));
        }
        off += sz;
      }
      *out = r;
      return NULL;
    }
    case POOT_OP_PAD: {
      const poot_shape *os = &poot__cc_type(pl, ops[0])->shape;
      poot_kir_value ok = 0, pv2, val;
      for (uint32_t i = 0; i < os->rank; i++) {
        /* p = idx - low; valid when 0 <= p, p % (interior+1) == 0, p/(i+1) < size */
        int64_t step = at->interior[i] + 1;
        poot_kir_value x, lo, ge, q, rm, lt, c, hi;
        T(poot__cc_u32(k, (uint32_t)at->low[i], &lo));
        T(poot__cc_bin(k, OP(GE), idx[i], lo, &ge));
        T(poot__cc_bin(k, OP(MAX), idx[i], lo, &x));
        T(poot__cc_bin(k, OP(SUB), x, lo, &x));
        q = x;
        c = ge;
        if (step != 1) {
          T(poot__cc_bin_c(k, OP(DIV), x, (uint32_t)step, &q));
          T(poot__cc_bin_c(k, OP(REM), x, (uint32_t)step, &rm));
          T(poot__cc_bin_c(k, OP(EQ), rm, 0, &rm));
          T(poot__cc_bin(k, OP(AND), c, rm, &c));
        }
        T(poot__cc_bin_c(k, OP(LT), q, (uint32_t)os->dims[i], &lt));
        T(poot__cc_bin(k, OP(AND), c, lt, &c));
        T(poot__cc_u32(k, os->dims[i] > 0 ? (uint32_t)(os->dims[i] - 1) : 0, &hi));
        T(poot__cc_bin(k, OP(MIN), q, hi, &sub[i]));
        if (ok)
          T(poot__cc_bin(k, OP(AND), ok, c, &ok));
        else
          ok = c;
      }
      T(poot__cc_emit(k, ops[1], NULL, &pv2));
      if (poot__cc_elems(os) == 0) {
        *out = pv2;
        return NULL;
      }
      T(poot__cc_emit(k, ops[0], sub, &val));
      if (!ok) {
        *out = val;
        return NULL;
      }
      return poot__cc_sel(k, ok, val, pv2, out);
    }
    case POOT_OP_DYNAMIC_SLICE:
    case POOT_OP_DYNAMIC_UPDATE_SLICE: {
      bool dus = n->op == POOT_OP_DYNAMIC_UPDATE_SLICE;
      const poot_shape *xs = &poot__cc_type(pl, ops[0])->shape;
      const poot_shape *us = dus ? &poot__cc_type(pl, ops[1])->shape : &ty->shape;
      uint32_t first = dus ? 2 : 1;
      poot_kir_value inwin = 0;
      poot_kir_value uidx[PC_MAX_DIMS];
      for (uint32_t i = 0; i < xs->rank; i++) {
        poot_kir_value s, c, ok;
        T(poot__cc_emit(k, pl->alias[n->operands[first + i]], NULL, &s));
        T(index_range(k, s, xs->dims[i] - us->dims[i], &c, &ok));
        T(maybe_check(k, n, ok));
        if (!dus) {
          T(poot__cc_bin(k, OP(ADD), idx[i], c, &sub[i]));
          continue;
        }
        poot_kir_value ge, lt, end, u, hi;
        T(poot__cc_bin(k, OP(GE), idx[i], c, &ge));
        T(poot__cc_bin_c(k, OP(ADD), c, (uint32_t)us->dims[i], &end));
        T(poot__cc_bin(k, OP(LT), idx[i], end, &lt));
        T(poot__cc_bin(k, OP(AND), ge, lt, &ge));
        if (i == 0)
          inwin = ge;
        else
          T(poot__cc_bin(k, OP(AND), inwin, ge, &inwin));
        T(poot__cc_bin(k, OP(MAX), idx[i], c, &u));
        T(poot__cc_bin(k, OP(SUB), u, c, &u));
        T(poot__cc_u32(k, us->dims[i] > 0 ? (uint32_t)(us->dims[i] - 1) : 0, &hi));
        T(poot__cc_bin(k, OP(MIN), u, hi, &uidx[i]));
      }
      if (!dus) return poot__cc_emit(k, ops[0], sub, out);
      poot_kir_value old, upd;
      T(poot__cc_emit(k, ops[0], idx, &old));
      if (poot__cc_elems(us) == 0) {
        *out = old;
        return NULL;
      }
      T(poot__cc_emit(k, ops[1], uidx, &upd));
      if (!inwin) {
        *out = upd;
        return NULL;
      }
      return poot__cc_sel(k, inwin, upd, old, out);
    }
    case POOT_OP_GATHER: {
      const poot_shape *ts = &poot__cc_type(pl, ops[0])->shape;
      const poot_shape *is = &poot__cc_type(pl, ops[1])->shape;
      uint32_t ax = (uint32_t)at->axis, bd = (uint32_t)at->batch_dims;
      uint32_t ni = is->rank - bd;
      poot_kir_value iidx[PC_MAX_DIMS], ix, c, ok;
      for (uint32_t i = 0; i < bd; i++) iidx[i] = idx[i];
      for (uint32_t i = 0; i < ni; i++) iidx[bd + i] = idx[ax + i];
      T(poot__cc_emit(k, ops[1], iidx, &ix));
      T(index_range(k, ix, ts->dims[ax] - 1, &c, &ok));
      T(maybe_check(k, n, ok));
      for (uint32_t i = 0; i < ax; i++) sub[i] = idx[i];
      sub[ax] = c;
      for (uint32_t i = ax + 1; i < ts->rank; i++) sub[i] = idx[ni + i - 1];
      /* Only the gathered rows of the table are read. */
      double saved = k->frac,
             f = (double)poot__cc_elems(is) / (double)(ts->dims[ax] ? ts->dims[ax] : 1);
      k->frac = saved * (f < 1.0 ? f : 1.0);
      poot_status gs = poot__cc_emit(k, ops[0], sub, out);
      k->frac = saved;
      return gs;
    }
    case POOT_OP_DEQUANTIZE:
      return poot__cc_emit_dequantize(k, n, idx, out);
    case POOT_OP_RNG:
      return poot__cc_emit_rng(k, n, idx, ty, out);
    case POOT_OP_LEAF:
      return poot_status_make(POOT_INTERNAL, "compile: leaf %%%u without storage", v);
    default:
      break;
  }
  if ((n->op >= POOT_OP_ADD && n->op <= POOT_OP_GE) || n->op == POOT_OP_SELECT) {
    for (uint32_t i = 0; i < nops; i++) T(poot__cc_emit(k, ops[i], idx, &a[i]));
    poot_dtype dt =
        n->op >= POOT_OP_EQ && n->op <= POOT_OP_GE ? poot__cc_type(pl, ops[0])->dtype : ty->dtype;
    return emit_elementwise(k, n, dt, a, out);
  }
  return poot_status_make(POOT_UNSUPPORTED, "compile: %s (%%%u) cannot be inlined",
                          poot_op_name(n->op), v);
}
