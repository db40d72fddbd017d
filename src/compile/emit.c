/* emit.c — the fusion emitter: the value of a graph value at a multi-index,
 * as KIR statements (loop fusion by index arithmetic). Elementwise and
 * movement ops are inlined; materialized values and leaves are loaded from
 * their buffers (kir_build.c). Float ops on f16/bf16 round after every op,
 * integer ops on narrow types wrap, exactly as poot_eval does (numerics.c). */
#include <string.h>

#include "compile_impl.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

/* ---------------------------------------------------------- constants */

static poot_status const_literal(pc_kctx *k, const poot_tensor *c, poot_kir_value *out) {
  poot_dtype dt = c->type.dtype;
  const uint8_t *p = c->data;
  uint64_t bits = 0;
  size_t n = poot_dtype_info_of(dt)->elem_bytes;
  memcpy(&bits, p, n);
  if (dt == POOT_DTYPE_I64) return poot_kir_const(k->b, S(I64), bits, out);
  poot_kir_value b;
  POOT_TRY(poot__cc_u32(k, (uint32_t)bits, &b));
  /* Fold through the same decoder a load uses (constants are rare and small). */
  if (dt == POOT_DTYPE_F32) {
    float f;
    memcpy(&f, p, 4);
    return poot__cc_cf32(k, f, out);
  }
  if (dt == POOT_DTYPE_F16) return poot__cc_cf32(k, poot_f16_to_f32((uint16_t)bits), out);
  if (dt == POOT_DTYPE_BF16) return poot__cc_cf32(k, poot_bf16_to_f32((uint16_t)bits), out);
  if (dt == POOT_DTYPE_I8) return poot__cc_i32(k, (int8_t)bits, out);
  if (dt == POOT_DTYPE_I16) return poot__cc_i32(k, (int16_t)bits, out);
  if (dt == POOT_DTYPE_BOOL) return poot_kir_const_bool(k->b, bits != 0, out);
  return poot__cc_from_bits(k, b, dt, out);
}

/* ------------------------------------------------------- elementwise */

static bool op_is_float_math(poot_op op) {
  return op >= POOT_OP_EXP && op <= POOT_OP_SIGMOID;
}

static poot_status emit_arith(pc_kctx *k, poot_op op, poot_dtype dt, const poot_kir_value *a,
                              poot_kir_value *out) {
  poot_kir_op ko = op == POOT_OP_ADD ? OP(ADD) : op == POOT_OP_SUB ? OP(SUB) : OP(MUL);
  poot_kir_value r;
  if (dt == POOT_DTYPE_BOOL)
    return poot_status_make(POOT_UNSUPPORTED, "compile: %s on bool", poot_op_name(op));
  POOT_TRY(poot__cc_bin(k, ko, a[0], a[1], &r));
  return poot__cc_round(k, dt, r, out);
}

static poot_status emit_divrem(pc_kctx *k, poot_op op, poot_dtype dt, const poot_kir_value *a,
                               poot_kir_value *out) {
  bool fl = poot_dtype_is_float(dt);
  poot_kir_value r;
  if (fl && op == POOT_OP_REM) {
    POOT_TRY(poot__cc_f32_rem(k, a[0], a[1], &r));
    return poot__cc_round(k, dt, r, out);
  }
  if (fl) {
    POOT_TRY(poot__cc_bin(k, op == POOT_OP_DIV ? OP(DIV) : OP(REM), a[0], a[1], &r));
    return poot__cc_round(k, dt, r, out);
  }
  if (dt == POOT_DTYPE_BOOL)
    return poot_status_make(POOT_UNSUPPORTED, "compile: %s on %s", poot_op_name(op),
                            poot_dtype_name(dt));
  return poot__cc_int_divrem(k, op == POOT_OP_DIV, dt, a[0], a[1], out);
}

static poot_status emit_minmax(pc_kctx *k, poot_op op, poot_dtype dt, const poot_kir_value *a,
                               poot_kir_value *out) {
  poot_kir_value r;
  if (poot_dtype_is_float(dt)) {
    POOT_TRY(poot__cc_fminmax(k, op == POOT_OP_MAX, a[0], a[1], &r));
    return poot__cc_round(k, dt, r, out);
  }
  return poot__cc_bin(k, op == POOT_OP_MAX ? OP(MAX) : OP(MIN), a[0], a[1], out);
}

static poot_status emit_pow(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                            poot_kir_value *out) {
  poot_kir_value r;
  if (!poot_dtype_is_float(dt)) {
    if (dt == POOT_DTYPE_BOOL)
      return poot_status_make(POOT_UNSUPPORTED, "compile: pow on %s", poot_dtype_name(dt));
    return poot__cc_int_pow(k, dt, a[0], a[1], out);
  }
  POOT_TRY(poot__cc_bin(k, OP(POW), a[0], a[1], &r));
  return poot__cc_round(k, dt, r, out);
}

static poot_status emit_abs(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                            poot_kir_value *out) {
  poot_kir_value r, z, lt, ng;
  if (poot_dtype_is_float(dt)) {
    POOT_TRY(poot__cc_un(k, OP(ABS), a[0], &r));
    return poot__cc_round(k, dt, r, out);
  }
  if (dt == POOT_DTYPE_U8 || dt == POOT_DTYPE_U32) {
    *out = a[0];
    return NULL;
  }
  POOT_TRY(poot__cc_scal(k, poot__cc_scalar_of(k, a[0]), 0, &z));
  POOT_TRY(poot__cc_bin(k, OP(LT), a[0], z, &lt));
  POOT_TRY(poot__cc_un(k, OP(NEG), a[0], &ng));
  POOT_TRY(poot__cc_wrap_int(k, dt, ng, &ng));
  return poot__cc_sel(k, lt, ng, a[0], out);
}

static poot_status emit_sign(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                             poot_kir_value *out) {
  bool fl = poot_dtype_is_float(dt);
  poot_kir_value r, z, one, m1, gt, lt;
  POOT_TRY(poot__cc_const_of(k, dt, 0.0, 0, &z));
  POOT_TRY(poot__cc_const_of(k, dt, 1.0, 1, &one));
  POOT_TRY(poot__cc_bin(k, OP(GT), a[0], z, &gt));
  if (dt == POOT_DTYPE_U8 || dt == POOT_DTYPE_U32) return poot__cc_sel(k, gt, one, z, out);
  POOT_TRY(poot__cc_const_of(k, dt, -1.0, -1, &m1));
  POOT_TRY(poot__cc_bin(k, OP(LT), a[0], z, &lt));
  POOT_TRY(poot__cc_sel(k, lt, m1, fl ? a[0] : z, &r));
  POOT_TRY(poot__cc_sel(k, gt, one, r, &r));
  return fl ? poot__cc_round(k, dt, r, out) : (*out = r, (poot_status)NULL);
}

static poot_status emit_sigmoid(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                                poot_kir_value *out) {
  poot_kir_value r, ng, e, one, d;
  POOT_TRY(poot__cc_un(k, OP(NEG), a[0], &ng));
  POOT_TRY(poot__cc_un(k, OP(EXP), ng, &e));
  POOT_TRY(poot__cc_cf32(k, 1.0f, &one));
  POOT_TRY(poot__cc_bin(k, OP(ADD), one, e, &d));
  POOT_TRY(poot__cc_bin(k, OP(DIV), one, d, &r));
  return poot__cc_round(k, dt, r, out);
}

static poot_status emit_rsqrt(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                              poot_kir_value *out) {
  poot_kir_value r, s, one;
  POOT_TRY(poot__cc_un(k, OP(SQRT), a[0], &s));
  POOT_TRY(poot__cc_cf32(k, 1.0f, &one));
  POOT_TRY(poot__cc_bin(k, OP(DIV), one, s, &r));
  return poot__cc_round(k, dt, r, out);
}

/* Round half away from zero: floor(|a| + (frac >= 0.5)), with a's sign bit
 * (also for -0); a NaN passes through. */
static poot_status emit_round(pc_kctx *k, poot_dtype dt, const poot_kir_value *a,
                              poot_kir_value *out) {
  poot_kir_value r, ax, t, fr, half, ge, one, t1;
  POOT_TRY(poot__cc_un(k, OP(ABS), a[0], &ax));
  POOT_TRY(poot__cc_un(k, OP(FLOOR), ax, &t));
  POOT_TRY(poot__cc_bin(k, OP(SUB), ax, t, &fr));
  POOT_TRY(poot__cc_cf32(k, 0.5f, &half));
  POOT_TRY(poot__cc_bin(k, OP(GE), fr, half, &ge));
  POOT_TRY(poot__cc_cf32(k, 1.0f, &one));
  POOT_TRY(poot__cc_bin(k, OP(ADD), t, one, &t1));
  POOT_TRY(poot__cc_sel(k, ge, t1, t, &t));
  /* copysign: keep a's sign bit (also for -0 and NaN) */
  poot_kir_value ba, bt, sgn;
  POOT_TRY(poot__cc_bcast(k, S(U32), a[0], &ba));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ba, 0x80000000u, &sgn));
  POOT_TRY(poot__cc_bcast(k, S(U32), t, &bt));
  POOT_TRY(poot__cc_bin(k, OP(OR), bt, sgn, &bt));
  POOT_TRY(poot__cc_bcast(k, S(F32), bt, &r));
  POOT_TRY(poot__cc_bin(k, OP(NE), a[0], a[0], &ge));
  POOT_TRY(poot__cc_sel(k, ge, a[0], r, &r));
  return poot__cc_round(k, dt, r, out);
}

poot_status poot__cc_roundf(pc_kctx *k, poot_kir_value x, poot_kir_value *out) {
  return emit_round(k, POOT_DTYPE_F32, &x, out);
}

/* Comparisons; bools are ordered as u32 0/1. */
static poot_status emit_compare(pc_kctx *k, poot_op op, const poot_kir_value *a,
                                poot_kir_value *out) {
  static const poot_kir_op map[] = {OP(EQ), OP(NE), OP(LT), OP(LE), OP(GT), OP(GE)};
  poot_kir_value x = a[0], y = a[1];
  if (poot__cc_scalar_of(k, x) == S(BOOL) && op != POOT_OP_EQ && op != POOT_OP_NE) {
    POOT_TRY(poot__cc_convert(k, x, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &x));
    POOT_TRY(poot__cc_convert(k, y, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &y));
  }
  return poot__cc_bin(k, map[op - POOT_OP_EQ], x, y, out);
}

/* The one-operand float functions that map to one KIR op each. */
static poot_status emit_float_math(pc_kctx *k, poot_op op, poot_dtype dt, const poot_kir_value *a,
                                   poot_kir_value *out) {
  static const struct {
    poot_op g;
    poot_kir_op kk;
  } m[] = {{POOT_OP_EXP, OP(EXP)},     {POOT_OP_EXP2, OP(EXP2)}, {POOT_OP_LOG, OP(LOG)},
           {POOT_OP_LOG2, OP(LOG2)},   {POOT_OP_SQRT, OP(SQRT)}, {POOT_OP_SIN, OP(SIN)},
           {POOT_OP_COS, OP(COS)},     {POOT_OP_TANH, OP(TANH)}, {POOT_OP_ERF, OP(ERF)},
           {POOT_OP_FLOOR, OP(FLOOR)}, {POOT_OP_CEIL, OP(CEIL)}};
  poot_kir_value r;
  if (op_is_float_math(op))
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
      if (m[i].g == op) {
        POOT_TRY(poot__cc_un(k, m[i].kk, a[0], &r));
        return poot__cc_round(k, dt, r, out);
      }
  return poot_status_make(POOT_UNSUPPORTED, "compile: op %s has no elementwise template",
                          poot_op_name(op));
}

/* One elementwise op of node n on operand values a (dtype dt). */
static poot_status emit_elementwise(pc_kctx *k, const poot_node *n, poot_dtype dt,
                                    const poot_kir_value *a, poot_kir_value *out) {
  poot_op op = n->op;
  bool fl = poot_dtype_is_float(dt);
  poot_kir_value r;
  k->flops++;
  switch (op) {
    case POOT_OP_ADD:
    case POOT_OP_SUB:
    case POOT_OP_MUL:
      return emit_arith(k, op, dt, a, out);
    case POOT_OP_DIV:
    case POOT_OP_REM:
      return emit_divrem(k, op, dt, a, out);
    case POOT_OP_MAX:
    case POOT_OP_MIN:
      return emit_minmax(k, op, dt, a, out);
    case POOT_OP_POW:
      return emit_pow(k, dt, a, out);
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
      return poot__cc_int_shift(k, op == POOT_OP_SHL, dt, a[0], a[1], out);
    case POOT_OP_NEG:
      /* floats: rounded like every f16/bf16 op (which quiets a NaN) */
      POOT_TRY(poot__cc_un(k, OP(NEG), a[0], &r));
      return fl ? poot__cc_round(k, dt, r, out) : poot__cc_wrap_int(k, dt, r, out);
    case POOT_OP_ABS:
      return emit_abs(k, dt, a, out);
    case POOT_OP_SIGN:
      return emit_sign(k, dt, a, out);
    case POOT_OP_NOT:
      POOT_TRY(poot__cc_un(k, OP(NOT), a[0], &r));
      return poot__cc_wrap_int(k, dt, r, out);
    case POOT_OP_SIGMOID:
      return emit_sigmoid(k, dt, a, out);
    case POOT_OP_RSQRT:
      return emit_rsqrt(k, dt, a, out);
    case POOT_OP_ROUND:
      return emit_round(k, dt, a, out);
    case POOT_OP_EQ:
    case POOT_OP_NE:
    case POOT_OP_LT:
    case POOT_OP_LE:
    case POOT_OP_GT:
    case POOT_OP_GE:
      return emit_compare(k, op, a, out);
    case POOT_OP_SELECT:
      return poot__cc_sel(k, a[0], a[1], a[2], out);
    default:
      return emit_float_math(k, op, dt, a, out);
  }
}

/* ---------------------------------------------------- index helpers */

/* A scalar start/index value → i32 clamped into [0, hi] plus "in range"
 * bool. Works for i32/u32/i64 compute values. */
static poot_status index_range(pc_kctx *k, poot_kir_value x, int64_t hi, poot_kir_value *clamped,
                               poot_kir_value *ok) {
  poot_kir_scalar s = poot__cc_scalar_of(k, x);
  poot_kir_value z, h, ge, le, c;
  if (s == S(BOOL)) {
    POOT_TRY(poot__cc_convert(k, x, POOT_DTYPE_BOOL, POOT_DTYPE_U32, &x));
    s = S(U32);
  }
  POOT_TRY(poot__cc_scal(k, s, 0, &z));
  POOT_TRY(poot__cc_scal(k, s, hi, &h));
  if (s == S(U32)) {
    POOT_TRY(poot__cc_bin(k, OP(LE), x, h, ok));
    POOT_TRY(poot__cc_bin(k, OP(MIN), x, h, &c));
  } else {
    POOT_TRY(poot__cc_bin(k, OP(GE), x, z, &ge));
    POOT_TRY(poot__cc_bin(k, OP(LE), x, h, &le));
    POOT_TRY(poot__cc_bin(k, OP(AND), ge, le, ok));
    POOT_TRY(poot__cc_bin(k, OP(MAX), x, z, &c));
    POOT_TRY(poot__cc_bin(k, OP(MIN), c, h, &c));
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
    POOT_TRY(poot__cc_emit(k, pl->alias[n->operands[(dus ? 2 : 1) + i]], NULL, &s));
    POOT_TRY(index_range(k, s, xs->dims[i] - us->dims[i], &c, &ok));
    POOT_TRY(maybe_check(k, n, ok));
  }
  return NULL;
}

/* ------------------------------------------------------------- emit */

/* The value of a value held in storage (a buffer, a slot, a temp or shared
 * memory) at idx; *out_done false when v is computed inline. */
static poot_status emit_stored(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                               poot_kir_value *out, bool *out_done) {
  pc_planner *pl = k->pl;
  pc_value *pv = &pl->v[v];
  const poot_type *ty = poot__cc_type(pl, v);
  *out_done = true;
  if (pv->hold == PC_CONSTLIT) return const_literal(k, pv->node->constant, out);
  if (v != k->computing && poot_dtype_is_packed(ty->dtype) &&
      (pv->hold == PC_LEAFBUF || pv->hold == PC_DENSE))
    return poot__cc_load_packed(k, v, idx, out); /* a packed value reads as its f32 elements */
  if (v != k->computing && (pv->hold == PC_TEMP || pv->hold == PC_LEAFBUF || pv->hold == PC_SLOT ||
                            pv->hold == PC_DENSE)) {
    poot_kir_value lin;
    POOT_TRY(poot__cc_linearize(k, idx, &ty->shape, &lin));
    return poot__cc_load_value(k, v, lin, out);
  }
  if (pv->hold == PC_LOCAL) {
    for (uint32_t i = 0; i < k->nlocal; i++)
      if (k->local_v[i] == v) {
        poot_kir_value lin;
        POOT_TRY(poot__cc_linearize(k, idx, &ty->shape, &lin));
        return poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, k->local_sh[i], lin, 1, out);
      }
    return poot_status_make(POOT_INTERNAL, "compile: local value %%%u read before its prologue", v);
  }
  if (pv->hold == PC_FUSED)
    return poot_status_make(POOT_INTERNAL, "compile: fused value %%%u read outside its kernel", v);
  *out_done = false;
  return NULL;
}

/* What every inlined op reads: the node, its result type and its operands
 * (aliases resolved). */
typedef struct inline_op {
  const poot_node *n;
  const poot_type *ty;
  const poot_attrs *at;
  uint32_t nops;
  poot_value ops[8]; /* the first 8 operands (concat reads its own: any number) */
} inline_op;

static poot_status emit_iota(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                             poot_kir_value *out) {
  poot_kir_value x = idx[o->at->axis];
  if (poot_dtype_is_float(o->ty->dtype)) {
    POOT_TRY(poot__cc_cvt(k, S(F32), x, &x));
    return poot__cc_round(k, o->ty->dtype, x, out);
  }
  return poot__cc_convert(k, x, POOT_DTYPE_U32, o->ty->dtype, out);
}

static poot_status emit_bitcast(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                                poot_kir_value *out) {
  poot_dtype from = poot__cc_type(k->pl, o->ops[0])->dtype;
  poot_kir_value a, bits;
  POOT_TRY(poot__cc_emit(k, o->ops[0], idx, &a));
  if (from == o->ty->dtype) {
    *out = a;
    return NULL;
  }
  if (from == POOT_DTYPE_I64 || o->ty->dtype == POOT_DTYPE_I64)
    return poot_status_make(POOT_UNSUPPORTED, "compile: 64-bit bitcast");
  POOT_TRY(poot__cc_to_bits(k, a, from, &bits));
  return poot__cc_from_bits(k, bits, o->ty->dtype, out);
}

/* broadcast, reshape, transpose and slice: operand 0 at a moved index. */
static poot_status emit_movement(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                                 poot_kir_value *out) {
  const poot_shape *os = &poot__cc_type(k->pl, o->ops[0])->shape;
  const poot_attrs *at = o->at;
  const poot_type *ty = o->ty;
  poot_kir_value sub[PC_MAX_DIMS];
  switch (o->n->op) {
    case POOT_OP_BROADCAST:
      for (uint32_t i = 0; i < os->rank; i++) {
        if (os->dims[i] == 1)
          POOT_TRY(poot__cc_u32(k, 0, &sub[i]));
        else
          sub[i] = idx[at->dims[i]];
      }
      break;
    case POOT_OP_RESHAPE: {
      if (poot_shape_equal(os, &ty->shape)) return poot__cc_emit(k, o->ops[0], idx, out);
      poot_kir_value lin;
      POOT_TRY(poot__cc_linearize(k, idx, &ty->shape, &lin));
      POOT_TRY(poot__cc_delinearize(k, lin, os, sub));
      break;
    }
    case POOT_OP_TRANSPOSE:
      for (uint32_t i = 0; i < ty->shape.rank; i++) sub[at->dims[i]] = idx[i];
      break;
    default: /* POOT_OP_SLICE */
      for (uint32_t i = 0; i < ty->shape.rank; i++) {
        poot_kir_value x = idx[i];
        if (at->stride[i] != 1)
          POOT_TRY(poot__cc_bin_c(k, OP(MUL), x, (uint32_t)at->stride[i], &x));
        if (at->start[i] != 0) POOT_TRY(poot__cc_bin_c(k, OP(ADD), x, (uint32_t)at->start[i], &x));
        sub[i] = x;
      }
      break;
  }
  return poot__cc_emit(k, o->ops[0], sub, out);
}

/* concat: every non-empty operand at its clamped index, selected by the
 * position along the axis. */
static poot_status emit_concat(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                               poot_kir_value *out) {
  const poot_attrs *at = o->at;
  poot_kir_value sub[PC_MAX_DIMS];
  int64_t off = 0;
  poot_kir_value r = 0;
  /* A concat has any number of operands (a batched step's B attention
   * outputs), more than inline_op keeps: read them from the node. A part of
   * a wide concat (pc_group.cat_lo/hi) emits only its own operands. */
  const bool part = k->cat_hi && k->pl->alias[o->n->results[0]] == k->cat_v;
  for (uint32_t j = 0; j < o->nops; j++) {
    const poot_value opj = k->pl->alias[o->n->operands[j]];
    const poot_shape *os = &poot__cc_type(k->pl, opj)->shape;
    int64_t sz = os->dims[at->axis];
    if (sz == 0) continue;
    if (part && (j < k->cat_lo || j >= k->cat_hi)) {
      off += sz;
      continue;
    }
    memcpy(sub, idx, o->ty->shape.rank * sizeof *idx);
    poot_kir_value x = idx[at->axis], lo, hi, ge, val;
    POOT_TRY(poot__cc_u32(k, (uint32_t)off, &lo));
    POOT_TRY(poot__cc_bin(k, OP(MAX), x, lo, &x));
    POOT_TRY(poot__cc_bin(k, OP(SUB), x, lo, &x));
    POOT_TRY(poot__cc_u32(k, (uint32_t)(sz - 1), &hi));
    POOT_TRY(poot__cc_bin(k, OP(MIN), x, hi, &sub[at->axis]));
    POOT_TRY(poot__cc_emit(k, opj, sub, &val));
    if (!r) {
      r = val;
    } else {
      POOT_TRY(poot__cc_bin(k, OP(GE), idx[at->axis], lo, &ge));
      POOT_TRY(poot__cc_sel(k, ge, val, r, &r));
    }
    off += sz;
  }
  *out = r;
  return NULL;
}

static poot_status emit_pad(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                            poot_kir_value *out) {
  const poot_shape *os = &poot__cc_type(k->pl, o->ops[0])->shape;
  const poot_attrs *at = o->at;
  poot_kir_value sub[PC_MAX_DIMS];
  poot_kir_value ok = 0, pv2, val;
  for (uint32_t i = 0; i < os->rank; i++) {
    /* p = idx - low; valid when 0 <= p, p % (interior+1) == 0, p/(i+1) < size */
    int64_t step = at->interior[i] + 1;
    poot_kir_value x, lo, ge, q, rm, lt, c, hi;
    POOT_TRY(poot__cc_u32(k, (uint32_t)at->low[i], &lo));
    POOT_TRY(poot__cc_bin(k, OP(GE), idx[i], lo, &ge));
    POOT_TRY(poot__cc_bin(k, OP(MAX), idx[i], lo, &x));
    POOT_TRY(poot__cc_bin(k, OP(SUB), x, lo, &x));
    q = x;
    c = ge;
    if (step != 1) {
      POOT_TRY(poot__cc_bin_c(k, OP(DIV), x, (uint32_t)step, &q));
      POOT_TRY(poot__cc_bin_c(k, OP(REM), x, (uint32_t)step, &rm));
      POOT_TRY(poot__cc_bin_c(k, OP(EQ), rm, 0, &rm));
      POOT_TRY(poot__cc_bin(k, OP(AND), c, rm, &c));
    }
    POOT_TRY(poot__cc_bin_c(k, OP(LT), q, (uint32_t)os->dims[i], &lt));
    POOT_TRY(poot__cc_bin(k, OP(AND), c, lt, &c));
    POOT_TRY(poot__cc_u32(k, os->dims[i] > 0 ? (uint32_t)(os->dims[i] - 1) : 0, &hi));
    POOT_TRY(poot__cc_bin(k, OP(MIN), q, hi, &sub[i]));
    if (ok)
      POOT_TRY(poot__cc_bin(k, OP(AND), ok, c, &ok));
    else
      ok = c;
  }
  POOT_TRY(poot__cc_emit(k, o->ops[1], NULL, &pv2));
  if (poot__cc_elems(os) == 0) {
    *out = pv2;
    return NULL;
  }
  POOT_TRY(poot__cc_emit(k, o->ops[0], sub, &val));
  if (!ok) {
    *out = val;
    return NULL;
  }
  return poot__cc_sel(k, ok, val, pv2, out);
}

/* dynamic_slice (operand 0 at idx + start) and dynamic_update_slice (the
 * update inside its window, operand 0 outside); the starts are clamped and
 * checked. */
static poot_status emit_dynamic_slice(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                                      poot_kir_value *out) {
  const poot_node *n = o->n;
  bool dus = n->op == POOT_OP_DYNAMIC_UPDATE_SLICE;
  const poot_shape *xs = &poot__cc_type(k->pl, o->ops[0])->shape;
  const poot_shape *us = dus ? &poot__cc_type(k->pl, o->ops[1])->shape : &o->ty->shape;
  uint32_t first = dus ? 2 : 1;
  poot_kir_value sub[PC_MAX_DIMS], uidx[PC_MAX_DIMS];
  poot_kir_value inwin = 0;
  for (uint32_t i = 0; i < xs->rank; i++) {
    poot_kir_value s, c, ok;
    POOT_TRY(poot__cc_emit(k, k->pl->alias[n->operands[first + i]], NULL, &s));
    POOT_TRY(index_range(k, s, xs->dims[i] - us->dims[i], &c, &ok));
    POOT_TRY(maybe_check(k, n, ok));
    if (!dus) {
      POOT_TRY(poot__cc_bin(k, OP(ADD), idx[i], c, &sub[i]));
      continue;
    }
    poot_kir_value ge, lt, end, u, hi;
    POOT_TRY(poot__cc_bin(k, OP(GE), idx[i], c, &ge));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), c, (uint32_t)us->dims[i], &end));
    POOT_TRY(poot__cc_bin(k, OP(LT), idx[i], end, &lt));
    POOT_TRY(poot__cc_bin(k, OP(AND), ge, lt, &ge));
    if (i == 0)
      inwin = ge;
    else
      POOT_TRY(poot__cc_bin(k, OP(AND), inwin, ge, &inwin));
    POOT_TRY(poot__cc_bin(k, OP(MAX), idx[i], c, &u));
    POOT_TRY(poot__cc_bin(k, OP(SUB), u, c, &u));
    POOT_TRY(poot__cc_u32(k, us->dims[i] > 0 ? (uint32_t)(us->dims[i] - 1) : 0, &hi));
    POOT_TRY(poot__cc_bin(k, OP(MIN), u, hi, &uidx[i]));
  }
  if (!dus) return poot__cc_emit(k, o->ops[0], sub, out);
  poot_kir_value old, upd;
  POOT_TRY(poot__cc_emit(k, o->ops[0], idx, &old));
  if (poot__cc_elems(us) == 0) {
    *out = old;
    return NULL;
  }
  POOT_TRY(poot__cc_emit(k, o->ops[1], uidx, &upd));
  if (!inwin) {
    *out = upd;
    return NULL;
  }
  return poot__cc_sel(k, inwin, upd, old, out);
}

/* The table position gather node n reads at index element iidx: the index
 * read, checked with the node's trap (when it has one) and clamped (u32). */
static poot_status gather_position(pc_kctx *k, const poot_node *n, const poot_kir_value *iidx,
                                   poot_kir_value *out) {
  const pc_planner *pl = k->pl;
  const poot_shape *ts = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  poot_kir_value ix, ok;
  POOT_TRY(poot__cc_emit(k, pl->alias[n->operands[1]], iidx, &ix));
  POOT_TRY(index_range(k, ix, ts->dims[n->attrs.axis] - 1, out, &ok));
  return maybe_check(k, n, ok);
}

poot_status poot__cc_emit_gather_row(pc_kctx *k, poot_value v, poot_kir_value pos,
                                     poot_kir_value *out) {
  const poot_node *n = k->pl->v[k->pl->alias[v]].node;
  return gather_position(k, n, &pos, out);
}

poot_status poot__cc_emit_gather_checks(pc_kctx *k, poot_value v) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[pl->alias[v]].node;
  if (!n || n->op != POOT_OP_GATHER || n->trap == POOT_TRAP_NONE) return NULL;
  const poot_shape *is = &poot__cc_type(pl, pl->alias[n->operands[1]])->shape;
  int64_t ne = poot__cc_elems(is);
  if (ne == 0) return NULL;
  poot_kir_value w, lid, first, end, step, i, iidx[PC_MAX_DIMS], c;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), w, 0, &first));
  POOT_TRY(poot_kir_if_begin(k->b, first));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  POOT_TRY(poot__cc_u32(k, (uint32_t)ne, &end));
  POOT_TRY(poot__cc_u32(k, pl->wg, &step));
  POOT_TRY(poot_kir_for_begin(k->b, lid, end, step, &i));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_delinearize(k, i, is, iidx));
  POOT_TRY(gather_position(k, n, iidx, &c)); /* the index only: no table row is read */
  poot__cc_scope_pop(k);
  POOT_TRY(poot_kir_end(k->b));
  return poot_kir_end(k->b);
}

static poot_status emit_gather(pc_kctx *k, const inline_op *o, const poot_kir_value *idx,
                               poot_kir_value *out) {
  const poot_shape *ts = &poot__cc_type(k->pl, o->ops[0])->shape;
  const poot_shape *is = &poot__cc_type(k->pl, o->ops[1])->shape;
  uint32_t ax = (uint32_t)o->at->axis, bd = (uint32_t)o->at->batch_dims;
  uint32_t ni = is->rank - bd;
  poot_kir_value sub[PC_MAX_DIMS], iidx[PC_MAX_DIMS], c;
  for (uint32_t i = 0; i < bd; i++) iidx[i] = idx[i];
  for (uint32_t i = 0; i < ni; i++) iidx[bd + i] = idx[ax + i];
  POOT_TRY(gather_position(k, o->n, iidx, &c));
  for (uint32_t i = 0; i < ax; i++) sub[i] = idx[i];
  sub[ax] = c;
  for (uint32_t i = ax + 1; i < ts->rank; i++) sub[i] = idx[ni + i - 1];
  /* Only the gathered rows of the table are read. */
  double saved = k->frac,
         f = (double)poot__cc_elems(is) / (double)(ts->dims[ax] ? ts->dims[ax] : 1);
  k->frac = saved * (f < 1.0 ? f : 1.0);
  poot_status gs = poot__cc_emit(k, o->ops[0], sub, out);
  k->frac = saved;
  return gs;
}

/* The value of v at idx, computed inline from its defining node. */
static poot_status emit_node(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                             poot_kir_value *out) {
  pc_planner *pl = k->pl;
  bool done = false;
  POOT_TRY(emit_stored(k, v, idx, out, &done));
  if (done) return NULL;
  const poot_node *n = pl->v[v].node;
  inline_op o = {.n = n, .ty = poot__cc_type(pl, v), .at = &n->attrs, .nops = n->num_operands};
  for (uint32_t i = 0; i < o.nops && i < 8; i++) o.ops[i] = pl->alias[n->operands[i]];
  poot_kir_value a[3];
  switch (n->op) {
    case POOT_OP_IOTA:
      return emit_iota(k, &o, idx, out);
    case POOT_OP_CONVERT:
      POOT_TRY(poot__cc_emit(k, o.ops[0], idx, &a[0]));
      k->flops++;
      return poot__cc_convert(k, a[0], poot__cc_type(pl, o.ops[0])->dtype, o.ty->dtype, out);
    case POOT_OP_BITCAST:
      return emit_bitcast(k, &o, idx, out);
    case POOT_OP_BROADCAST:
    case POOT_OP_RESHAPE:
    case POOT_OP_TRANSPOSE:
    case POOT_OP_SLICE:
      return emit_movement(k, &o, idx, out);
    case POOT_OP_CONCAT:
      return emit_concat(k, &o, idx, out);
    case POOT_OP_PAD:
      return emit_pad(k, &o, idx, out);
    case POOT_OP_DYNAMIC_SLICE:
    case POOT_OP_DYNAMIC_UPDATE_SLICE:
      return emit_dynamic_slice(k, &o, idx, out);
    case POOT_OP_GATHER:
      return emit_gather(k, &o, idx, out);
    case POOT_OP_DEQUANTIZE:
      return poot__cc_emit_dequantize(k, n, idx, out);
    case POOT_OP_QUANTIZE:
      /* Only the q8_0 K/V write computes it, from the f32 values. */
      if (k->prequant) return poot__cc_emit(k, o.ops[0], idx, out);
      return poot_status_make(
          POOT_UNSUPPORTED, "compile: quantize (%%%u) is computed only by a K/V state's write", v);
    case POOT_OP_RNG:
      return poot__cc_emit_rng(k, n, idx, o.ty, out);
    case POOT_OP_LEAF:
      return poot_status_make(POOT_INTERNAL, "compile: leaf %%%u without storage", v);
    default:
      break;
  }
  if ((n->op >= POOT_OP_ADD && n->op <= POOT_OP_GE) || n->op == POOT_OP_SELECT) {
    for (uint32_t i = 0; i < o.nops; i++) POOT_TRY(poot__cc_emit(k, o.ops[i], idx, &a[i]));
    poot_dtype dt = n->op >= POOT_OP_EQ && n->op <= POOT_OP_GE ? poot__cc_type(pl, o.ops[0])->dtype
                                                               : o.ty->dtype;
    return emit_elementwise(k, n, dt, a, out);
  }
  return poot_status_make(POOT_UNSUPPORTED, "compile: %s (%%%u) cannot be inlined",
                          poot_op_name(n->op), v);
}

poot_status poot__cc_emit(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                          poot_kir_value *out) {
  v = k->pl->alias[v];
  uint32_t rank = poot__cc_type(k->pl, v)->shape.rank;
  if (poot__cc_memo_get(k, v, rank, idx, out)) return NULL;
  POOT_TRY(emit_node(k, v, idx, out));
  return poot__cc_memo_put(k, v, idx, *out);
}
