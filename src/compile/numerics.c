/* numerics.c — soft-float and integer numerics in KIR, exactly as poot_eval
 * computes them: f16/bf16 decode, encode and rounding, bit casts, narrow
 * integer wrapping, IEEE min/max and remainder, integer division, power
 * and shifts with their edge cases, and dtype conversion. */
#include "compile_impl.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

/* ------------------------------------------------------- f16 / bf16 */

/* f16 bits (u32, low 16) → f32 value. */
poot_status poot__cc_f16_decode(pc_kctx *k, poot_kir_value h, poot_kir_value *out) {
  poot_kir_value sign, e, man, t1, t2, normal, inf, sub, subf, sb, z, c;
  POOT_TRY(poot__cc_bin_c(k, OP(AND), h, 0x8000, &sign));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), sign, 16, &sign));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), h, 10, &e));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), e, 0x1f, &e));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), h, 0x3ff, &man));
  /* normal: sign | (e + 112) << 23 | man << 13 */
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), e, 112, &t1));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), t1, 23, &t1));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), man, 13, &t2));
  POOT_TRY(poot__cc_bin(k, OP(OR), t1, t2, &normal));
  POOT_TRY(poot__cc_bin(k, OP(OR), normal, sign, &normal));
  /* inf/nan */
  POOT_TRY(poot__cc_bin_c(k, OP(OR), t2, 0x7f800000u, &inf));
  POOT_TRY(poot__cc_bin(k, OP(OR), inf, sign, &inf));
  /* subnormal/zero: man * 2^-24, exact */
  POOT_TRY(poot__cc_cvt(k, S(F32), man, &subf));
  POOT_TRY(poot__cc_cf32(k, 5.9604644775390625e-08f, &c));
  POOT_TRY(poot__cc_bin(k, OP(MUL), subf, c, &subf));
  POOT_TRY(poot__cc_bcast(k, S(U32), subf, &sb));
  POOT_TRY(poot__cc_bin(k, OP(OR), sb, sign, &sub));
  POOT_TRY(poot__cc_u32(k, 0, &z));
  poot_kir_value is0, is31, r;
  POOT_TRY(poot__cc_bin(k, OP(EQ), e, z, &is0));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), e, 0x1f, &is31));
  POOT_TRY(poot__cc_sel(k, is31, inf, normal, &r));
  POOT_TRY(poot__cc_sel(k, is0, sub, r, &r));
  return poot__cc_bcast(k, S(F32), r, out);
}

/* The two f16 halves of word w (low half first) → f32: the target's
 * conversion where it has f16 arithmetic, else the integer decoder. */
poot_status poot__cc_f16_pair(pc_kctx *k, poot_kir_value w, poot_kir_value out[2]) {
  if (k->t->arith_types & POOT_KIR_SCALAR_BIT(POOT_KIR_F16)) {
    poot_kir_value v;
    POOT_TRY(poot_kir_bitcast(k->b, poot_kir_type_make(POOT_KIR_F16, 2), w, &v));
    for (uint32_t l = 0; l < 2; l++) {
      poot_kir_value e;
      POOT_TRY(poot_kir_extract(k->b, v, l, &e));
      POOT_TRY(poot_kir_convert(k->b, POOT_KIR_F32, e, &out[l]));
    }
    return NULL;
  }
  poot_kir_value lo, hi;
  POOT_TRY(poot__cc_bin_c(k, OP(AND), w, 0xffff, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, 16, &hi));
  POOT_TRY(poot__cc_f16_decode(k, lo, &out[0]));
  return poot__cc_f16_decode(k, hi, &out[1]);
}

/* f32 value → f16 bits (u32), round to nearest even, as poot_f32_to_f16
 * (which quiets NaNs) when `quiet`; otherwise NaN payloads are kept as they
 * are (the bits of a value that is already an f16: stores and bitcasts). */
static poot_status f16_encode_q(pc_kctx *k, poot_kir_value f, bool quiet, poot_kir_value *out) {
  poot_kir_value x, sign, exp, man, ei, nan_inf, manhi, qnan, infv;
  POOT_TRY(poot__cc_bcast(k, S(U32), f, &x));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), x, 16, &sign));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), sign, 0x8000, &sign));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), x, 23, &exp));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), exp, 0xff, &exp));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), x, 0x7fffff, &man));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), man, 13, &manhi));
  POOT_TRY(poot__cc_bin_c(k, OP(OR), manhi, quiet ? 0x7e00 : 0x7c00, &qnan));
  POOT_TRY(poot__cc_u32(k, 0x7c00, &infv));
  poot_kir_value man0, zero;
  POOT_TRY(poot__cc_u32(k, 0, &zero));
  POOT_TRY(poot__cc_bin(k, OP(EQ), man, zero, &man0));
  POOT_TRY(poot__cc_sel(k, man0, infv, qnan, &nan_inf));
  /* e = exp - 112 as i32 */
  POOT_TRY(poot__cc_bcast(k, S(I32), exp, &ei));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), ei, 112, &ei));
  /* normal: h = e << 10 | man >> 13, round on the low 13 bits */
  poot_kir_value eu, h, rem, odd, up, gt, eq, t, normal;
  poot_kir_value ec;
  POOT_TRY(poot__cc_i32(k, 1, &t));
  POOT_TRY(poot__cc_bin(k, OP(MAX), ei, t, &ec));
  POOT_TRY(poot__cc_bcast(k, S(U32), ec, &eu));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), eu, 10, &h));
  POOT_TRY(poot__cc_bin(k, OP(OR), h, manhi, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), man, 0x1fff, &rem));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), h, 1, &odd));
  POOT_TRY(poot__cc_bin_c(k, OP(GT), rem, 0x1000, &gt));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), rem, 0x1000, &eq));
  poot_kir_value oddb;
  POOT_TRY(poot__cc_bin_c(k, OP(NE), odd, 0, &oddb));
  POOT_TRY(poot__cc_bin(k, OP(AND), eq, oddb, &eq));
  POOT_TRY(poot__cc_bin(k, OP(OR), gt, eq, &up));
  poot_kir_value one, hp;
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot__cc_bin(k, OP(ADD), h, one, &hp));
  POOT_TRY(poot__cc_sel(k, up, hp, h, &normal));
  /* subnormal: e in [-10, 0] */
  poot_kir_value es, lo, hi, shift, m2, hm, rm, mask, half, oddm, up2, sub;
  POOT_TRY(poot__cc_i32(k, -10, &lo));
  POOT_TRY(poot__cc_i32(k, 0, &hi));
  POOT_TRY(poot__cc_bin(k, OP(MAX), ei, lo, &es));
  POOT_TRY(poot__cc_bin(k, OP(MIN), es, hi, &es));
  poot_kir_value c14;
  POOT_TRY(poot__cc_i32(k, 14, &c14));
  POOT_TRY(poot__cc_bin(k, OP(SUB), c14, es, &shift));
  POOT_TRY(poot__cc_bcast(k, S(U32), shift, &shift));
  POOT_TRY(poot__cc_bin_c(k, OP(OR), man, 0x800000, &m2));
  POOT_TRY(poot__cc_bin(k, OP(SHR), m2, shift, &hm));
  POOT_TRY(poot__cc_bin(k, OP(SHL), one, shift, &mask));
  POOT_TRY(poot__cc_bin(k, OP(SUB), mask, one, &mask));
  POOT_TRY(poot__cc_bin(k, OP(AND), m2, mask, &rm));
  poot_kir_value sh1;
  POOT_TRY(poot__cc_bin(k, OP(SUB), shift, one, &sh1));
  POOT_TRY(poot__cc_bin(k, OP(SHL), one, sh1, &half));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), hm, 1, &oddm));
  POOT_TRY(poot__cc_bin_c(k, OP(NE), oddm, 0, &oddm));
  POOT_TRY(poot__cc_bin(k, OP(GT), rm, half, &gt));
  POOT_TRY(poot__cc_bin(k, OP(EQ), rm, half, &eq));
  POOT_TRY(poot__cc_bin(k, OP(AND), eq, oddm, &eq));
  POOT_TRY(poot__cc_bin(k, OP(OR), gt, eq, &up2));
  POOT_TRY(poot__cc_bin(k, OP(ADD), hm, one, &hp));
  POOT_TRY(poot__cc_sel(k, up2, hp, hm, &sub));
  /* pick */
  poot_kir_value r, isnan, isover, issub, iszero, c31, cm10;
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), exp, 0xff, &isnan));
  POOT_TRY(poot__cc_i32(k, 31, &c31));
  POOT_TRY(poot__cc_bin(k, OP(GE), ei, c31, &isover));
  POOT_TRY(poot__cc_bin(k, OP(LE), ei, hi, &issub));
  POOT_TRY(poot__cc_i32(k, -10, &cm10));
  POOT_TRY(poot__cc_bin(k, OP(LT), ei, cm10, &iszero));
  POOT_TRY(poot__cc_sel(k, issub, sub, normal, &r));
  POOT_TRY(poot__cc_sel(k, iszero, zero, r, &r));
  POOT_TRY(poot__cc_sel(k, isover, infv, r, &r));
  POOT_TRY(poot__cc_sel(k, isnan, nan_inf, r, &r));
  return poot__cc_bin(k, OP(OR), r, sign, out);
}

static poot_status f16_encode(pc_kctx *k, poot_kir_value f, poot_kir_value *out) {
  return f16_encode_q(k, f, true, out);
}

/* f32 → bf16 bits (u32), as poot_f32_to_bf16. */
static poot_status bf16_encode(pc_kctx *k, poot_kir_value f, poot_kir_value *out) {
  poot_kir_value x, a, isnan, qn, lsb, r;
  POOT_TRY(poot__cc_bcast(k, S(U32), f, &x));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), x, 0x7fffffff, &a));
  POOT_TRY(poot__cc_bin_c(k, OP(GT), a, 0x7f800000, &isnan));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), x, 16, &qn));
  POOT_TRY(poot__cc_bin_c(k, OP(OR), qn, 0x40, &qn));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), x, 16, &lsb));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), lsb, 1, &lsb));
  POOT_TRY(poot__cc_bin(k, OP(ADD), x, lsb, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), r, 0x7fff, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), r, 16, &r));
  return poot__cc_sel(k, isnan, qn, r, out);
}

static poot_status bf16_decode(pc_kctx *k, poot_kir_value h, poot_kir_value *out) {
  poot_kir_value x;
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), h, 16, &x));
  return poot__cc_bcast(k, S(F32), x, out);
}

/* Wraps an integer compute value to the width of dt. */
poot_status poot__cc_wrap_int(pc_kctx *k, poot_dtype dt, poot_kir_value x, poot_kir_value *out) {
  switch (dt) {
    case POOT_DTYPE_I8:
    case POOT_DTYPE_I16: {
      uint32_t s = dt == POOT_DTYPE_I8 ? 24 : 16;
      poot_kir_value t;
      POOT_TRY(poot__cc_bin_c(k, OP(SHL), x, s, &t));
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
      POOT_TRY(f16_encode(k, x, &b));
      return poot__cc_f16_decode(k, b, out);
    case POOT_DTYPE_BF16:
      POOT_TRY(bf16_encode(k, x, &b));
      return bf16_decode(k, b, out);
    default:
      return poot__cc_wrap_int(k, dt, x, out);
  }
}

/* Bits of dtype dt (low bits of a u32) → compute value. */
poot_status poot__cc_from_bits(pc_kctx *k, poot_kir_value bits, poot_dtype dt,
                               poot_kir_value *out) {
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
      POOT_TRY(poot__cc_bcast(k, S(I32), bits, &i));
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
      POOT_TRY(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(SHR), u, 16, out);
    case POOT_DTYPE_I8:
    case POOT_DTYPE_U8:
      POOT_TRY(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(AND), u, 0xff, out);
    case POOT_DTYPE_I16:
      POOT_TRY(poot__cc_bcast(k, S(U32), x, &u));
      return poot__cc_bin_c(k, OP(AND), u, 0xffff, out);
    case POOT_DTYPE_I32:
    case POOT_DTYPE_U32:
      return poot__cc_bcast(k, S(U32), x, out);
    case POOT_DTYPE_BOOL: {
      poot_kir_value one, zero;
      POOT_TRY(poot__cc_u32(k, 1, &one));
      POOT_TRY(poot__cc_u32(k, 0, &zero));
      return poot__cc_sel(k, x, one, zero, out);
    }
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: no element store for %s",
                              poot_dtype_name(dt));
  }
}

/* ---------------------------------------------- float and integer ops */

poot_status poot__cc_fminmax(pc_kctx *k, bool is_max, poot_kir_value a, poot_kir_value b,
                             poot_kir_value *out) {
  poot_kir_value gt, r, eq, ba, bb, bz, z, na, nb;
  POOT_TRY(poot__cc_bin(k, is_max ? OP(GT) : OP(LT), a, b, &gt));
  POOT_TRY(poot__cc_sel(k, gt, a, b, &r));
  POOT_TRY(poot__cc_bin(k, OP(EQ), a, b, &eq));
  POOT_TRY(poot__cc_bcast(k, S(U32), a, &ba));
  POOT_TRY(poot__cc_bcast(k, S(U32), b, &bb));
  POOT_TRY(poot__cc_bin(k, is_max ? OP(AND) : OP(OR), ba, bb, &bz));
  POOT_TRY(poot__cc_bcast(k, S(F32), bz, &z));
  POOT_TRY(poot__cc_sel(k, eq, z, r, &r));
  POOT_TRY(poot__cc_bin(k, OP(NE), a, a, &na));
  POOT_TRY(poot__cc_bin(k, OP(NE), b, b, &nb));
  POOT_TRY(poot__cc_sel(k, nb, b, r, &r));
  return poot__cc_sel(k, na, a, r, out);
}

/* Accumulation step of reductions: add/max/min in dtype dt. */
poot_status poot__cc_accum(pc_kctx *k, poot_kir_op op, poot_dtype dt, poot_kir_value a,
                           poot_kir_value b, poot_kir_value *out) {
  poot_kir_value r;
  if (poot_dtype_is_float(dt) && (op == OP(MAX) || op == OP(MIN)))
    return poot__cc_fminmax(k, op == OP(MAX), a, b, out);
  POOT_TRY(poot__cc_bin(k, op, a, b, &r));
  return poot__cc_round(k, dt, r, out);
}

poot_status poot__cc_int_divrem(pc_kctx *k, bool div, poot_dtype dt, poot_kir_value a,
                                poot_kir_value b, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_scalar_of(k, a);
  bool sgn = s != S(U32);
  poot_kir_value zero, one, m1, b0, bm1, bad, sb, r, na;
  POOT_TRY(poot__cc_scal(k, s, 0, &zero));
  POOT_TRY(poot__cc_scal(k, s, 1, &one));
  POOT_TRY(poot__cc_scal(k, s, -1, &m1));
  POOT_TRY(poot__cc_bin(k, OP(EQ), b, zero, &b0));
  bad = b0;
  if (sgn) {
    POOT_TRY(poot__cc_bin(k, OP(EQ), b, m1, &bm1));
    POOT_TRY(poot__cc_bin(k, OP(OR), b0, bm1, &bad));
  }
  POOT_TRY(poot__cc_sel(k, bad, one, b, &sb));
  POOT_TRY(poot__cc_bin(k, div ? OP(DIV) : OP(REM), a, sb, &r));
  if (sgn) {
    if (div) {
      POOT_TRY(poot__cc_un(k, OP(NEG), a, &na));
      POOT_TRY(poot__cc_sel(k, bm1, na, r, &r));
    } else {
      POOT_TRY(poot__cc_sel(k, bm1, zero, r, &r));
    }
  }
  POOT_TRY(poot__cc_sel(k, b0, div ? m1 : a, r, &r));
  return poot__cc_wrap_int(k, dt, r, out);
}

/* Leading-zero normalization of a significand: while bit 23 of m is clear
 * (and m is not 0), m <<= 1 and e -= 1; at most `steps` times (unrolled). */
static poot_status normalize23(pc_kctx *k, poot_kir_value *m, poot_kir_value *e, uint32_t steps) {
  poot_kir_value zu, one_i;
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  POOT_TRY(poot_kir_const_i32(k->b, 1, &one_i));
  for (uint32_t i = 0; i < steps; i++) {
    poot_kir_value top, clear, nz, go, m2, e2;
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), *m, 23, &top));
    POOT_TRY(poot__cc_bin(k, OP(EQ), top, zu, &clear));
    POOT_TRY(poot__cc_bin(k, OP(NE), *m, zu, &nz));
    POOT_TRY(poot__cc_bin(k, OP(AND), clear, nz, &go));
    POOT_TRY(poot__cc_bin_c(k, OP(SHL), *m, 1, &m2));
    POOT_TRY(poot__cc_bin(k, OP(SUB), *e, one_i, &e2));
    POOT_TRY(poot__cc_sel(k, go, m2, *m, m));
    POOT_TRY(poot__cc_sel(k, go, e2, *e, e));
  }
  return NULL;
}

/* The significand (bit 23 set) and unbiased-by-127 exponent of |x| bits
 * ax (finite, not 0), denormals normalized: ax = m · 2^(e - 150). */
static poot_status f32_split(pc_kctx *k, poot_kir_value ax, poot_kir_value *m, poot_kir_value *e) {
  poot_kir_value eu, man, den, zu, one_i, mn;
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  POOT_TRY(poot_kir_const_i32(k->b, 1, &one_i));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), ax, 23, &eu));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ax, 0x7fffff, &man));
  POOT_TRY(poot__cc_bin(k, OP(EQ), eu, zu, &den));
  POOT_TRY(poot__cc_bin_c(k, OP(OR), man, 0x800000, &mn));
  POOT_TRY(poot__cc_sel(k, den, man, mn, m));
  POOT_TRY(poot__cc_bcast(k, S(I32), eu, e));
  POOT_TRY(poot__cc_sel(k, den, one_i, *e, e)); /* a denormal has exponent 1 */
  return normalize23(k, m, e, 23);
}

/* Float rem, exactly C's fmodf (the oracle's): |x| mod |y| by long division
 * on the significands (one shift-subtract per binade between them: at most
 * 277), then renormalized; the sign of x. NaN (0x7fc00000) when y is 0 or
 * x is infinite or either is NaN. Every step is exact. */
poot_status poot__cc_f32_rem(pc_kctx *k, poot_kir_value x, poot_kir_value y, poot_kir_value *out) {
  char nm[32];
  uint32_t pm;
  poot_kir_value ux, uy, sx, ax, ay, zu, nan_in, lt, eq, mx, ex, my, ey, n, i0, one_u, c;
  POOT_TRY(poot__cc_bcast(k, S(U32), x, &ux));
  POOT_TRY(poot__cc_bcast(k, S(U32), y, &uy));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ux, 0x80000000u, &sx));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ux, 0x7fffffffu, &ax));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), uy, 0x7fffffffu, &ay));
  POOT_TRY(poot__cc_u32(k, 0, &zu));
  {
    poot_kir_value y0, xinf, ynan;
    POOT_TRY(poot__cc_bin(k, OP(EQ), ay, zu, &y0));
    POOT_TRY(poot__cc_bin_c(k, OP(GE), ax, 0x7f800000u, &xinf));
    POOT_TRY(poot__cc_bin_c(k, OP(GT), ay, 0x7f800000u, &ynan));
    POOT_TRY(poot__cc_bin(k, OP(OR), y0, xinf, &nan_in));
    POOT_TRY(poot__cc_bin(k, OP(OR), nan_in, ynan, &nan_in));
  }
  POOT_TRY(poot__cc_bin(k, OP(LT), ax, ay, &lt));
  POOT_TRY(poot__cc_bin(k, OP(EQ), ax, ay, &eq));
  /* safe operands for the division path (the selects below discard it) */
  poot_kir_value sax, say, bad, onef;
  POOT_TRY(poot__cc_bin(k, OP(OR), nan_in, lt, &bad));
  POOT_TRY(poot__cc_bin(k, OP(OR), bad, eq, &bad));
  POOT_TRY(poot__cc_u32(k, 0x3f800000u, &onef));
  POOT_TRY(poot__cc_sel(k, bad, onef, ax, &sax));
  POOT_TRY(poot__cc_sel(k, bad, onef, ay, &say));
  POOT_TRY(f32_split(k, sax, &mx, &ex));
  POOT_TRY(f32_split(k, say, &my, &ey));
  /* for (i = 0; i < ex - ey; i++) { d = m - my; if (d >= 0) m = d; m <<= 1; } */
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "fm", nm, sizeof nm),
                                poot_kir_type_make(S(U32), 1), 1, &pm));
  POOT_TRY(poot_kir_priv_store(k->b, pm, 0, mx));
  POOT_TRY(poot__cc_bin(k, OP(SUB), ex, ey, &n));
  POOT_TRY(poot__cc_bcast(k, S(U32), n, &n)); /* ex >= ey on this path */
  POOT_TRY(poot__cc_u32(k, 0, &i0));
  POOT_TRY(poot__cc_u32(k, 1, &one_u));
  POOT_TRY(poot_kir_for_begin(k->b, i0, n, one_u, &c));
  {
    poot_kir_value m, d, ge, m2;
    POOT_TRY(poot_kir_priv_load(k->b, pm, 0, &m));
    POOT_TRY(poot__cc_bin(k, OP(GE), m, my, &ge));
    POOT_TRY(poot__cc_bin(k, OP(SUB), m, my, &d));
    POOT_TRY(poot__cc_sel(k, ge, d, m, &m2));
    POOT_TRY(poot__cc_bin_c(k, OP(SHL), m2, 1, &m2));
    POOT_TRY(poot_kir_priv_store(k->b, pm, 0, m2));
  }
  POOT_TRY(poot_kir_end(k->b));
  (void)c;
  poot_kir_value m, ge, d, e = ey, r, isz, den, sh, shu, mden, e23, mnorm, one_i;
  POOT_TRY(poot_kir_priv_load(k->b, pm, 0, &m));
  POOT_TRY(poot__cc_bin(k, OP(GE), m, my, &ge));
  POOT_TRY(poot__cc_bin(k, OP(SUB), m, my, &d));
  POOT_TRY(poot__cc_sel(k, ge, d, m, &m));
  POOT_TRY(poot__cc_bin(k, OP(EQ), m, zu, &isz));
  POOT_TRY(normalize23(k, &m, &e, 24));
  /* e > 0: normal; else a denormal: m >> (1 - e) (exact: the low bits are 0) */
  POOT_TRY(poot_kir_const_i32(k->b, 1, &one_i));
  POOT_TRY(poot__cc_bin(k, OP(LT), e, one_i, &den));
  POOT_TRY(poot__cc_bin(k, OP(SUB), one_i, e, &sh));
  POOT_TRY(poot__cc_bcast(k, S(U32), sh, &shu));
  {
    poot_kir_value c31;
    POOT_TRY(poot__cc_u32(k, 31, &c31));
    POOT_TRY(poot__cc_bin(k, OP(MIN), shu, c31, &shu));
  }
  POOT_TRY(poot__cc_bin(k, OP(SHR), m, shu, &mden));
  POOT_TRY(poot__cc_bcast(k, S(U32), e, &e23));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), e23, 23, &e23));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), m, 0x7fffff, &mnorm));
  POOT_TRY(poot__cc_bin(k, OP(OR), mnorm, e23, &mnorm));
  POOT_TRY(poot__cc_sel(k, den, mden, mnorm, &r));
  POOT_TRY(poot__cc_sel(k, isz, zu, r, &r));
  /* the cases decided before the division */
  POOT_TRY(poot__cc_sel(k, eq, zu, r, &r));
  POOT_TRY(poot__cc_sel(k, lt, ax, r, &r));
  POOT_TRY(poot__cc_bin(k, OP(OR), r, sx, &r));
  {
    poot_kir_value qn;
    POOT_TRY(poot__cc_u32(k, 0x7fc00000u, &qn));
    POOT_TRY(poot__cc_sel(k, nan_in, qn, r, &r));
  }
  return poot__cc_bcast(k, S(F32), r, out);
}

/* Integer pow as the oracle computes it: square-and-multiply over the
 * exponent's bits, wrapping at the dtype's width (32-bit arithmetic wraps
 * the same way below it); a negative signed exponent gives 1 for base 1,
 * ±1 for base -1 and 0 otherwise. */
poot_status poot__cc_int_pow(pc_kctx *k, poot_dtype dt, poot_kir_value a, poot_kir_value b,
                             poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_scalar_of(k, a);
  bool sgn = s != S(U32);
  /* An i64 exponent has 64 bits to visit (odd bases do not repeat within
   * 2^32 steps modulo 2^64); a narrower one is widened to u32. */
  bool wide = s == S(I64);
  uint32_t bits = wide ? 64 : 32;
  poot_kir_value r, base = a, e, one, zero, m1, ez;
  POOT_TRY(poot__cc_scal(k, s, 1, &one));
  POOT_TRY(poot__cc_scal(k, s, 0, &zero));
  POOT_TRY(poot__cc_scal(k, s, -1, &m1));
  if (wide) {
    e = b;
    ez = zero;
  } else {
    POOT_TRY(poot__cc_bcast(k, S(U32), b, &e));
    POOT_TRY(poot__cc_u32(k, 0, &ez));
  }
  r = one;
  for (uint32_t bit = 0; bit < bits; bit++) {
    poot_kir_value lsb, set, rb;
    POOT_TRY(poot__cc_bin_c(k, OP(AND), e, 1, &lsb));
    POOT_TRY(poot__cc_bin(k, OP(NE), lsb, ez, &set));
    POOT_TRY(poot__cc_bin(k, OP(MUL), r, base, &rb));
    POOT_TRY(poot__cc_sel(k, set, rb, r, &r));
    if (bit + 1 < bits) {
      POOT_TRY(poot__cc_bin(k, OP(MUL), base, base, &base));
      POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, 1, &e));
    }
  }
  if (sgn) {
    poot_kir_value neg, b1, bm1, odd, t, oddu;
    POOT_TRY(poot__cc_bin(k, OP(LT), b, zero, &neg));
    POOT_TRY(poot__cc_bin(k, OP(EQ), a, one, &b1));
    POOT_TRY(poot__cc_bin(k, OP(EQ), a, m1, &bm1));
    if (wide)
      oddu = b;
    else
      POOT_TRY(poot__cc_bcast(k, S(U32), b, &oddu));
    POOT_TRY(poot__cc_bin_c(k, OP(AND), oddu, 1, &oddu));
    POOT_TRY(poot__cc_bin(k, OP(NE), oddu, ez, &odd));
    POOT_TRY(poot__cc_sel(k, odd, m1, one, &t)); /* base -1 */
    POOT_TRY(poot__cc_sel(k, bm1, t, zero, &t));
    POOT_TRY(poot__cc_sel(k, b1, one, t, &t));
    POOT_TRY(poot__cc_sel(k, neg, t, r, &r));
  }
  return poot__cc_wrap_int(k, dt, r, out);
}

poot_status poot__cc_int_shift(pc_kctx *k, bool left, poot_dtype dt, poot_kir_value a,
                               poot_kir_value b, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_scalar_of(k, a);
  bool sgn = s != S(U32);
  uint32_t width = poot_dtype_info_of(dt)->bits;
  poot_kir_value zero, w, bad, neg, sb, r, fill, m1;
  POOT_TRY(poot__cc_scal(k, s, 0, &zero));
  POOT_TRY(poot__cc_scal(k, s, width, &w));
  POOT_TRY(poot__cc_bin(k, OP(GE), b, w, &bad));
  if (sgn) {
    POOT_TRY(poot__cc_bin(k, OP(LT), b, zero, &neg));
    POOT_TRY(poot__cc_bin(k, OP(OR), bad, neg, &bad));
  }
  POOT_TRY(poot__cc_sel(k, bad, zero, b, &sb));
  POOT_TRY(poot__cc_bin(k, left ? OP(SHL) : OP(SHR), a, sb, &r));
  fill = zero;
  if (!left && sgn) {
    poot_kir_value lt;
    POOT_TRY(poot__cc_scal(k, s, -1, &m1));
    POOT_TRY(poot__cc_bin(k, OP(LT), a, zero, &lt));
    POOT_TRY(poot__cc_sel(k, lt, m1, zero, &fill));
  }
  POOT_TRY(poot__cc_sel(k, bad, fill, r, &r));
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
    POOT_TRY(poot__cc_scal(k, fs, 0, &z));
    if (fs == S(F32)) POOT_TRY(poot__cc_cf32(k, 0.0f, &z));
    return poot__cc_bin(k, OP(NE), x, z, out);
  }
  if (fs == S(BOOL)) {
    poot_kir_value one, zero;
    POOT_TRY(poot__cc_const_of(k, to, 1.0, 1, &one));
    POOT_TRY(poot__cc_const_of(k, to, 0.0, 0, &zero));
    return poot__cc_sel(k, x, one, zero, out);
  }
  if (ts == S(F32)) {
    POOT_TRY(poot__cc_cvt(k, S(F32), x, &r));
    return poot__cc_round(k, to, r, out);
  }
  if (fs == S(F32)) {
    /* float → int: truncate, saturate, NaN → 0 (KIR convert); narrow ints
     * clamp after a conversion to 32 bits. */
    switch (to) {
      case POOT_DTYPE_I8:
      case POOT_DTYPE_I16: {
        poot_kir_value lo, hi;
        POOT_TRY(poot__cc_cvt(k, S(I32), x, &r));
        POOT_TRY(poot__cc_i32(k, to == POOT_DTYPE_I8 ? -128 : -32768, &lo));
        POOT_TRY(poot__cc_i32(k, to == POOT_DTYPE_I8 ? 127 : 32767, &hi));
        POOT_TRY(poot__cc_bin(k, OP(MAX), r, lo, &r));
        return poot__cc_bin(k, OP(MIN), r, hi, out);
      }
      case POOT_DTYPE_U8: {
        poot_kir_value hi;
        POOT_TRY(poot__cc_cvt(k, S(U32), x, &r));
        POOT_TRY(poot__cc_u32(k, 255, &hi));
        return poot__cc_bin(k, OP(MIN), r, hi, out);
      }
      default:
        return poot__cc_cvt(k, ts, x, out);
    }
  }
  /* int → int: wrap */
  POOT_TRY(poot__cc_cvt(k, ts, x, &r));
  return poot__cc_wrap_int(k, to, r, out);
}
