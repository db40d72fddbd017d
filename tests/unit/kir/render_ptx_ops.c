/* Extra KIR kernels for the PTX and AMDGPU renderer tests; see the header. */
#include "render_ptx_ops.h"

#include <stdio.h>
#include <string.h>

typedef poot_kir_builder B;
typedef poot_kir_value V;

static poot_status bind(B *b, const char *name, uint32_t binding, poot_kir_scalar elem,
                        poot_kir_access access, uint32_t *out) {
  poot_kir_binding d = {name, binding, elem, access, 16, false};
  return poot_kir_add_binding(b, &d, out);
}

/* 0: math and arithmetic on f32 and f16, vectors, select, compares. */
static poot_status k_math(B *b) {
  uint32_t xin, hin, yout, hout;
  POOT_TRY(bind(b, "x", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &xin));
  POOT_TRY(bind(b, "h", 1, POOT_KIR_F16, POOT_KIR_ACCESS_READ, &hin));
  POOT_TRY(bind(b, "y", 2, POOT_KIR_F32, POOT_KIR_ACCESS_READ_WRITE, &yout));
  POOT_TRY(bind(b, "hy", 3, POOT_KIR_F16, POOT_KIR_ACCESS_WRITE, &hout));
  V gid, four, idx, x4, h4, x, h;
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_const_u32(b, 4, &four));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, gid, four, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, xin, idx, 4, &x4));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, hin, idx, 4, &h4));
  POOT_TRY(poot_kir_extract(b, x4, 1, &x));
  POOT_TRY(poot_kir_extract(b, h4, 2, &h));
  static const poot_kir_op unary[] = {
      POOT_KIR_OP_NEG,  POOT_KIR_OP_ABS,  POOT_KIR_OP_EXP,   POOT_KIR_OP_EXP2, POOT_KIR_OP_LOG,
      POOT_KIR_OP_LOG2, POOT_KIR_OP_SQRT, POOT_KIR_OP_RSQRT, POOT_KIR_OP_SIN,  POOT_KIR_OP_COS,
      POOT_KIR_OP_TANH, POOT_KIR_OP_ERF,  POOT_KIR_OP_FLOOR, POOT_KIR_OP_CEIL};
  static const poot_kir_op binary[] = {POOT_KIR_OP_ADD, POOT_KIR_OP_SUB, POOT_KIR_OP_MUL,
                                       POOT_KIR_OP_DIV, POOT_KIR_OP_MIN, POOT_KIR_OP_MAX,
                                       POOT_KIR_OP_POW};
  V accx = x, acch = h, accv = x4;
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
    V r;
    POOT_TRY(poot_kir_unary(b, unary[i], accx, &r));
    accx = r;
    POOT_TRY(poot_kir_unary(b, unary[i], acch, &r));
    acch = r;
    POOT_TRY(poot_kir_unary(b, unary[i], accv, &r));
    accv = r;
  }
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
    V r;
    POOT_TRY(poot_kir_binary(b, binary[i], accx, x, &r));
    accx = r;
    POOT_TRY(poot_kir_binary(b, binary[i], acch, h, &r));
    acch = r;
    POOT_TRY(poot_kir_binary(b, binary[i], accv, x4, &r));
    accv = r;
  }
  V f, fh, lt, ne, sel, selv, ltv, hx;
  POOT_TRY(poot_kir_fma(b, accx, x, accx, &f));
  POOT_TRY(poot_kir_fma(b, acch, h, acch, &fh));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_LT, f, x, &lt));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_NE, fh, h, &ne));
  V both;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_XOR, lt, ne, &both));
  POOT_TRY(poot_kir_select(b, both, f, x, &sel));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_GE, accv, x4, &ltv));
  POOT_TRY(poot_kir_select(b, ltv, accv, x4, &selv));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_F32, fh, &hx));
  V sum, sumv, splat, v4h;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, sel, hx, &sum));
  POOT_TRY(poot_kir_splat(b, 4, sum, &splat));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, selv, splat, &sumv));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, yout, idx, sumv));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_F16, sumv, &v4h));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, hout, idx, v4h));
  return NULL;
}

/* 1: every conversion pair (scalars and 2-lane vectors) and bitcasts. */
static poot_status k_convert(B *b) {
  static const poot_kir_scalar types[] = {POOT_KIR_I8,   POOT_KIR_U8,  POOT_KIR_I16, POOT_KIR_U16,
                                          POOT_KIR_I32,  POOT_KIR_U32, POOT_KIR_I64, POOT_KIR_F16,
                                          POOT_KIR_BF16, POOT_KIR_F32};
  enum { NT = sizeof types / sizeof types[0] };
  uint32_t in[NT], out[NT];
  char names[2 * NT][16];
  for (uint32_t i = 0; i < NT; i++) {
    snprintf(names[i], sizeof names[i], "in_%s", poot_kir_scalar_name(types[i]));
    snprintf(names[NT + i], sizeof names[NT + i], "out_%s", poot_kir_scalar_name(types[i]));
    POOT_TRY(bind(b, names[i], i, types[i], POOT_KIR_ACCESS_READ, &in[i]));
    POOT_TRY(bind(b, names[NT + i], NT + i, types[i], POOT_KIR_ACCESS_READ_WRITE, &out[i]));
  }
  V gid, two, idx2, nt, base;
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_const_u32(b, 2, &two));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, gid, two, &idx2));
  POOT_TRY(poot_kir_const_u32(b, NT, &nt));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, gid, nt, &base));
  V src[NT], src2[NT];
  for (uint32_t i = 0; i < NT; i++) {
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, in[i], gid, 1, &src[i]));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, in[i], idx2, 2, &src2[i]));
  }
  for (uint32_t to = 0; to < NT; to++) {
    for (uint32_t from = 0; from < NT; from++) {
      V r, r2, idx, k;
      POOT_TRY(poot_kir_convert(b, types[to], src[from], &r));
      POOT_TRY(poot_kir_const_u32(b, from, &k));
      POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, base, k, &idx));
      POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, out[to], idx, r));
      POOT_TRY(poot_kir_convert(b, types[to], src2[from], &r2));
      POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, out[to], idx2, r2));
    }
    /* bool round trip */
    V bl, back;
    POOT_TRY(poot_kir_convert(b, POOT_KIR_BOOL, src[to], &bl));
    POOT_TRY(poot_kir_convert(b, types[to], bl, &back));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, out[to], gid, back));
  }
  /* Bitcasts: f32<->u32, f16x2<->u32, u8x4<->u32, i64<->u32x2, f32x2<->i64,
   * i16x4<->i64, bf16x4<->f32x2. */
  struct {
    uint32_t from, lanes_from;
    poot_kir_scalar to;
    uint32_t lanes_to;
  } casts[] = {
      {9, 1, POOT_KIR_U32, 1}, {7, 2, POOT_KIR_U32, 1}, {1, 4, POOT_KIR_U32, 1},
      {6, 1, POOT_KIR_U32, 2}, {9, 2, POOT_KIR_I64, 1}, {2, 4, POOT_KIR_I64, 1},
      {8, 4, POOT_KIR_F32, 2}, {5, 1, POOT_KIR_F16, 2}, {5, 1, POOT_KIR_U8, 4},
      {6, 1, POOT_KIR_I16, 4}, {6, 1, POOT_KIR_F32, 2},
  };
  for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
    V v, r, four, idx4, z;
    uint32_t lf = casts[i].lanes_from;
    if (lf == 4) {
      POOT_TRY(poot_kir_const_u32(b, 4, &four));
      POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, gid, four, &idx4));
      POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, in[casts[i].from], idx4, 4, &v));
    } else {
      v = lf == 2 ? src2[casts[i].from] : src[casts[i].from];
    }
    POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(casts[i].to, casts[i].lanes_to), v, &r));
    uint32_t to_pos = 0;
    for (uint32_t t = 0; t < NT; t++)
      if (types[t] == casts[i].to) to_pos = t;
    if (casts[i].lanes_to == 4) {
      POOT_TRY(poot_kir_const_u32(b, 4, &four));
      POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, gid, four, &z));
    } else {
      z = casts[i].lanes_to == 2 ? idx2 : gid;
    }
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, out[to_pos], z, r));
  }
  return NULL;
}

/* 2: integers, bool logic, private arrays, loops, if/else, checks, params. */
static poot_status k_control(B *b) {
  uint32_t ib, ub, lb, slot;
  POOT_TRY(bind(b, "iv", 0, POOT_KIR_I32, POOT_KIR_ACCESS_READ_WRITE, &ib));
  POOT_TRY(bind(b, "uv", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, &ub));
  POOT_TRY(bind(b, "lv", 2, POOT_KIR_I64, POOT_KIR_ACCESS_READ_WRITE, &lb));
  POOT_TRY(bind(b, "slots", 3, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &slot));
  poot_kir_param pn = {"n", POOT_KIR_U32, POOT_KIR_PARAM_PUSH, 0, 0};
  poot_kir_param ps = {"scale", POOT_KIR_F32, POOT_KIR_PARAM_PUSH, 0, 0};
  poot_kir_param pp = {"pos", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, 3, 5};
  poot_kir_param pi = {"bias", POOT_KIR_I32, POOT_KIR_PARAM_PUSH, 0, 0};
  uint32_t in_, is_, ip_, ii_;
  POOT_TRY(poot_kir_add_param(b, &pn, &in_));
  POOT_TRY(poot_kir_add_param(b, &ps, &is_));
  POOT_TRY(poot_kir_add_param(b, &pp, &ip_));
  POOT_TRY(poot_kir_add_param(b, &pi, &ii_));
  uint32_t acc, flag, wide;
  POOT_TRY(poot_kir_add_private(b, "acc", poot_kir_type_make(POOT_KIR_I32, 2), 3, &acc));
  POOT_TRY(poot_kir_add_private(b, "flag", poot_kir_type_make(POOT_KIR_BOOL, 1), 1, &flag));
  POOT_TRY(poot_kir_add_private(b, "wide", poot_kir_type_make(POOT_KIR_I64, 1), 1, &wide));
  V n, scale, pos, bias, gid, lid, zero, one, izero, istep, ok;
  POOT_TRY(poot_kir_param_get(b, in_, &n));
  POOT_TRY(poot_kir_param_get(b, is_, &scale));
  POOT_TRY(poot_kir_param_get(b, ip_, &pos));
  POOT_TRY(poot_kir_param_get(b, ii_, &bias));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  POOT_TRY(poot_kir_const_u32(b, 0, &zero));
  POOT_TRY(poot_kir_const_u32(b, 1, &one));
  POOT_TRY(poot_kir_const_i32(b, -3, &izero));
  POOT_TRY(poot_kir_const_i32(b, 2, &istep));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_LT, gid, n, &ok));
  POOT_TRY(poot_kir_check(b, ok, 3));
  V i, iv, ui, x;
  POOT_TRY(poot_kir_for_begin(b, zero, pos, one, &i));
  {
    V a, w, s, iv2, c, lanes;
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ib, i, 1, &a));
    POOT_TRY(poot_kir_priv_load(b, acc, 1, &lanes));
    POOT_TRY(poot_kir_splat(b, 2, a, &s));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, lanes, s, &iv2));
    POOT_TRY(poot_kir_priv_store(b, acc, 1, iv2));
    POOT_TRY(poot_kir_convert(b, POOT_KIR_I64, a, &w));
    V wv, ws;
    POOT_TRY(poot_kir_priv_load(b, wide, 0, &wv));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, wv, w, &ws));
    POOT_TRY(poot_kir_priv_store(b, wide, 0, ws));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_GT, a, bias, &c));
    POOT_TRY(poot_kir_if_begin(b, c));
    {
      V fl, nf;
      POOT_TRY(poot_kir_priv_load(b, flag, 0, &fl));
      POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NOT, fl, &nf));
      POOT_TRY(poot_kir_priv_store(b, flag, 0, nf));
      POOT_TRY(poot_kir_check(b, nf, 7));
    }
    POOT_TRY(poot_kir_else_begin(b));
    {
      V t;
      POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_REM, a, istep, &t));
      POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ib, i, t));
    }
    POOT_TRY(poot_kir_end(b));
  }
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_for_begin(b, izero, bias, istep, &iv));
  {
    V t, u, sh, r, d, mn, mx, nt, ab, ng, xr, an, orr, shr;
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, iv, bias, &t));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_DIV, t, istep, &d));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MIN, d, iv, &mn));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MAX, mn, izero, &mx));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_ABS, mx, &ab));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NEG, ab, &ng));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NOT, ng, &nt));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_XOR, nt, iv, &xr));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_AND, xr, istep, &an));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_OR, an, t, &orr));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SHL, orr, istep, &sh));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SHR, sh, istep, &shr));
    POOT_TRY(poot_kir_convert(b, POOT_KIR_U32, shr, &u));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SHR, u, one, &r));
    V uu;
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_DIV, r, pos, &uu));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_REM, uu, n, &r));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ub, gid, r));
  }
  POOT_TRY(poot_kir_end(b));
  V av, w, f, fs, cv, sel, l64, sh64;
  POOT_TRY(poot_kir_priv_load(b, acc, 1, &av));
  POOT_TRY(poot_kir_extract(b, av, 0, &x));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ib, gid, x));
  POOT_TRY(poot_kir_priv_load(b, wide, 0, &w));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_I64, lid, &l64));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SHL, w, l64, &sh64));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SHR, sh64, l64, &w));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, lb, gid, w));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_F32, x, &f));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, f, scale, &fs));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_U32, fs, &cv));
  V fl, bsel;
  POOT_TRY(poot_kir_priv_load(b, flag, 0, &fl));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_EQ, fl, ok, &bsel));
  POOT_TRY(poot_kir_select(b, bsel, cv, gid, &sel));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ub, gid, sel));
  (void)ui;
  return NULL;
}

/* 3: atomics on global and shared memory, barriers, every subgroup op. */
static poot_status k_sync(B *b, uint32_t sg) {
  uint32_t ub, ib, fb, su, sf;
  POOT_TRY(bind(b, "u", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, &ub));
  POOT_TRY(bind(b, "i", 1, POOT_KIR_I32, POOT_KIR_ACCESS_READ_WRITE, &ib));
  POOT_TRY(bind(b, "f", 2, POOT_KIR_F32, POOT_KIR_ACCESS_READ_WRITE, &fb));
  POOT_TRY(poot_kir_add_shared(b, "su", POOT_KIR_U32, 64, &su));
  POOT_TRY(poot_kir_add_shared(b, "sf", POOT_KIR_F32, 64, &sf));
  V lid, gid, wg, zero, one, fone, ione, m;
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_ID, 0, &lid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wg));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_const_u32(b, 0, &zero));
  POOT_TRY(poot_kir_const_u32(b, 1, &one));
  POOT_TRY(poot_kir_const_f32(b, 1.5f, &fone));
  POOT_TRY(poot_kir_const_i32(b, -1, &ione));
  POOT_TRY(poot_kir_const_u32(b, 63, &m));
  V sidx, r;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_AND, lid, m, &sidx));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, su, sidx, zero));
  POOT_TRY(poot_kir_barrier(b));
  static const poot_kir_op ops[] = {POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_OP_ATOMIC_MAX,
                                    POOT_KIR_OP_ATOMIC_MIN, POOT_KIR_OP_ATOMIC_XCHG};
  V acc = gid;
  for (size_t k = 0; k < 4; k++) {
    POOT_TRY(poot_kir_atomic_rmw(b, ops[k], POOT_KIR_SPACE_SHARED, su, sidx, acc, &r));
    acc = r;
    POOT_TRY(poot_kir_atomic_rmw(b, ops[k], POOT_KIR_SPACE_GLOBAL, ub, wg, acc, &r));
    acc = r;
    V ir;
    POOT_TRY(poot_kir_atomic_rmw(b, ops[k], POOT_KIR_SPACE_GLOBAL, ib, wg, ione, &ir));
  }
  V fr, cas, fcas;
  POOT_TRY(
      poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, fb, wg, fone, &fr));
  POOT_TRY(
      poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_SHARED, sf, sidx, fr, &fr));
  POOT_TRY(
      poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_XCHG, POOT_KIR_SPACE_GLOBAL, fb, gid, fr, &fr));
  POOT_TRY(poot_kir_atomic_cas(b, POOT_KIR_SPACE_GLOBAL, ub, wg, acc, gid, &cas));
  POOT_TRY(poot_kir_atomic_cas(b, POOT_KIR_SPACE_SHARED, sf, sidx, fr, fone, &fcas));
  POOT_TRY(poot_kir_barrier(b));
  if (sg) {
    V s1, s2, s3, s4, s5, s6, lane, f1, f2, i1;
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, cas, &s1));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MAX, s1, &s2));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MIN, s2, &s3));
    POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
    V lane1;
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_XOR, lane, one, &lane1));
    POOT_TRY(poot_kir_subgroup_shuffle(b, s3, lane1, &s4));
    POOT_TRY(poot_kir_subgroup_shuffle_xor(b, s4, sg / 2, &s5));
    POOT_TRY(poot_kir_subgroup_broadcast(b, s5, sg - 1, &s6));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, fcas, &f1));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MAX, f1, &f2));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MIN, f2, &f1));
    POOT_TRY(poot_kir_subgroup_shuffle_xor(b, f1, 1, &f2));
    V ic;
    POOT_TRY(poot_kir_convert(b, POOT_KIR_I32, s6, &ic));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MIN, ic, &i1));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, i1, &i1));
    POOT_TRY(poot_kir_subgroup_broadcast(b, i1, 0, &i1));
    V sgid, sgsz, t;
    POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sgid));
    POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_SIZE, 0, &sgsz));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, sgid, sgsz, &t));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, t, s6, &t));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ub, gid, t));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, fb, gid, f2));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ib, gid, i1));
  }
  V nwg, ls;
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 0, &nwg));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_SIZE, 1, &ls));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, nwg, ls, &nwg));
  V ok;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_NE, nwg, zero, &ok));
  POOT_TRY(poot_kir_check(b, ok, 31));
  return NULL;
}

poot_status render_ops_kernel(uint32_t i, uint32_t sg, poot_kir_kernel **out) {
  *out = NULL;
  static const char *const names[RENDER_OPS_KERNEL_COUNT] = {"ops_math", "ops_convert",
                                                             "ops_control", "ops_sync"};
  if (i >= RENDER_OPS_KERNEL_COUNT)
    return poot_status_make(POOT_INVALID_ARGUMENT, "no ops kernel %u", i);
  poot_kir_kernel_desc desc = {names[i], {64, 1, 1}, sg};
  if (i == 3) desc.workgroup_size[1] = 2;
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_status st = NULL;
  switch (i) {
    case 0:
      st = k_math(b);
      break;
    case 1:
      st = k_convert(b);
      break;
    case 2:
      st = k_control(b);
      break;
    default:
      st = k_sync(b, sg);
      break;
  }
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  return poot_kir_builder_finish(b, out);
}
