/* emit_packed.c — the expression emitter, part two: GGUF block decoding
 * (dequantize fused into whatever reads it) and the Philox generator. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

#define T POOT_TRY
#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

/* -------------------------------------------------------- dequantize */

static poot_status byte_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value *out) {
  poot_kir_value wi, w, sh;
  T(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
  T(poot__cc_load_word(k, ref, wi, &w));
  T(poot__cc_bin_c(k, OP(AND), bo, 3, &sh));
  T(poot__cc_bin_c(k, OP(SHL), sh, 3, &sh));
  T(poot__cc_bin(k, OP(SHR), w, sh, &w));
  return poot__cc_bin_c(k, OP(AND), w, 0xff, out);
}
/* 16 bits at an even byte offset. */
static poot_status half_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value *out) {
  poot_kir_value wi, w, sh;
  T(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
  T(poot__cc_load_word(k, ref, wi, &w));
  T(poot__cc_bin_c(k, OP(AND), bo, 2, &sh));
  T(poot__cc_bin_c(k, OP(SHL), sh, 3, &sh));
  T(poot__cc_bin(k, OP(SHR), w, sh, &w));
  return poot__cc_bin_c(k, OP(AND), w, 0xffff, out);
}
static poot_status f16_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, uint32_t add,
                          poot_kir_value *out) {
  poot_kir_value o, h;
  T(poot__cc_bin_c(k, OP(ADD), bo, add, &o));
  T(half_at(k, ref, o, &h));
  return poot__cc_f16_decode(k, h, out);
}
static poot_status u32_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, uint32_t add,
                          poot_kir_value *out) {
  poot_kir_value o, lo, hi;
  T(poot__cc_bin_c(k, OP(ADD), bo, add, &o));
  T(half_at(k, ref, o, &lo));
  T(poot__cc_bin_c(k, OP(ADD), o, 2, &o));
  T(half_at(k, ref, o, &hi));
  T(poot__cc_bin_c(k, OP(SHL), hi, 16, &hi));
  return poot__cc_bin(k, OP(OR), lo, hi, out);
}

poot_status poot__cc_emit_dequantize(pc_kctx *k, const poot_node *n, const poot_kir_value *idx,
                                     poot_kir_value *out) {
  poot_value w = k->pl->alias[n->operands[0]];
  const poot_type *wt = poot__cc_type(k->pl, w);
  const poot_dtype_info *di = poot_dtype_info_of(wt->dtype);
  pc_value *pw = &k->pl->v[w];
  if (pw->hold != PC_LEAFBUF)
    return poot_status_make(POOT_UNSUPPORTED, "compile: dequantize of a non-leaf value");
  uint32_t ref;
  T(poot__cc_binding_of(k, pw->buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  uint32_t r = wt->shape.rank;
  int64_t kdim = wt->shape.dims[r - 1];
  uint32_t be = (uint32_t)di->block_elems, bb = (uint32_t)di->block_bytes;
  poot_shape lead = wt->shape;
  lead.rank = r - 1;
  poot_kir_value row, blk, j, bo;
  T(poot__cc_linearize(k, idx, &lead, &row));
  T(poot__cc_bin_c(k, OP(DIV), idx[r - 1], be, &blk));
  T(poot__cc_bin_c(k, OP(REM), idx[r - 1], be, &j));
  T(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(kdim / be), &row));
  T(poot__cc_bin(k, OP(ADD), row, blk, &bo));
  T(poot__cc_bin_c(k, OP(MUL), bo, bb, &bo));
  k->bytes += 1;
  k->flops += 2;
  poot_kir_value d, m = 0, q, y, qb, jj, hi, o, nib;
  switch (wt->dtype) {
    case POOT_DTYPE_Q8_0:
    case POOT_DTYPE_Q8_K: {
      uint32_t qoff = wt->dtype == POOT_DTYPE_Q8_0 ? 2 : 4;
      if (wt->dtype == POOT_DTYPE_Q8_0) {
        T(f16_at(k, ref, bo, 0, &d));
      } else {
        poot_kir_value wi;
        T(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
        T(poot__cc_load_word(k, ref, wi, &d));
        T(poot__cc_bcast(k, S(F32), d, &d));
      }
      T(poot__cc_bin_c(k, OP(ADD), bo, qoff, &o));
      T(poot__cc_bin(k, OP(ADD), o, j, &o));
      T(byte_at(k, ref, o, &qb));
      T(poot__cc_bcast(k, S(I32), qb, &q));
      T(poot__cc_wrap_int(k, POOT_DTYPE_I8, q, &q));
      T(poot__cc_cvt(k, S(F32), q, &q));
      T(poot__cc_bin(k, OP(MUL), q, d, &y));
      break;
    }
    case POOT_DTYPE_Q4_0:
    case POOT_DTYPE_Q4_1:
    case POOT_DTYPE_Q5_0:
    case POOT_DTYPE_Q5_1: {
      bool has_m = wt->dtype == POOT_DTYPE_Q4_1 || wt->dtype == POOT_DTYPE_Q5_1;
      bool five = wt->dtype == POOT_DTYPE_Q5_0 || wt->dtype == POOT_DTYPE_Q5_1;
      uint32_t qs_off = 2 + (has_m ? 2 : 0) + (five ? 4 : 0);
      T(f16_at(k, ref, bo, 0, &d));
      if (has_m) T(f16_at(k, ref, bo, 2, &m));
      T(poot__cc_bin_c(k, OP(AND), j, 15, &jj));
      T(poot__cc_bin_c(k, OP(SHR), j, 4, &hi)); /* 0 or 1 */
      T(poot__cc_bin_c(k, OP(ADD), bo, qs_off, &o));
      T(poot__cc_bin(k, OP(ADD), o, jj, &o));
      T(byte_at(k, ref, o, &qb));
      T(poot__cc_bin_c(k, OP(MUL), hi, 4, &hi));
      T(poot__cc_bin(k, OP(SHR), qb, hi, &nib));
      T(poot__cc_bin_c(k, OP(AND), nib, 15, &nib));
      if (five) {
        poot_kir_value qh, bit;
        T(u32_at(k, ref, bo, has_m ? 4 : 2, &qh));
        T(poot__cc_bin(k, OP(SHR), qh, j, &bit));
        T(poot__cc_bin_c(k, OP(AND), bit, 1, &bit));
        T(poot__cc_bin_c(k, OP(SHL), bit, 4, &bit));
        T(poot__cc_bin(k, OP(OR), nib, bit, &nib));
      }
      T(poot__cc_bcast(k, S(I32), nib, &q));
      if (!has_m) T(poot__cc_bin_c(k, OP(SUB), q, five ? 16 : 8, &q));
      T(poot__cc_cvt(k, S(F32), q, &q));
      T(poot__cc_bin(k, OP(MUL), d, q, &y));
      if (has_m) T(poot__cc_bin(k, OP(ADD), y, m, &y));
      break;
    }
    case POOT_DTYPE_Q4_K:
    case POOT_DTYPE_Q5_K: {
      /* sub-block sb = j / 32 with 6-bit scale and min (get_scale_min_k4) */
      bool five = wt->dtype == POOT_DTYPE_Q5_K;
      poot_kir_value sb, l, dmin, lt4, i0, i1, i2, b0, b1, b2, sc, mn, t1, t2, d1, m1;
      T(f16_at(k, ref, bo, 0, &d));
      T(f16_at(k, ref, bo, 2, &dmin));
      T(poot__cc_bin_c(k, OP(SHR), j, 5, &sb));
      T(poot__cc_bin_c(k, OP(AND), j, 31, &l));
      T(poot__cc_bin_c(k, OP(LT), sb, 4, &lt4));
      /* bytes: s4 = scales[sb+4] (sb<4: the min; else low/high nibbles),
       * s0 = scales[sb] (sb<4: the scale), sm4 = scales[sb-4] (sb>=4) */
      T(poot__cc_bin_c(k, OP(ADD), bo, 4, &i0));
      T(poot__cc_bin(k, OP(ADD), i0, sb, &i1)); /* &scales[sb] */
      T(byte_at(k, ref, i1, &b0));
      T(poot__cc_bin_c(k, OP(ADD), i1, 4, &i2));
      T(byte_at(k, ref, i2, &b1)); /* scales[sb+4] (sb < 8 → index < 12) */
      poot_kir_value sbm4, im4;
      T(poot__cc_bin_c(k, OP(MAX), sb, 4, &sbm4));
      T(poot__cc_bin_c(k, OP(SUB), sbm4, 4, &sbm4));
      T(poot__cc_bin(k, OP(ADD), i0, sbm4, &im4));
      T(byte_at(k, ref, im4, &b2)); /* scales[sb-4] */
      poot_kir_value lo_sc, lo_mn, hi_sc, hi_mn;
      T(poot__cc_bin_c(k, OP(AND), b0, 63, &lo_sc));
      T(poot__cc_bin_c(k, OP(AND), b1, 63, &lo_mn));
      T(poot__cc_bin_c(k, OP(AND), b1, 15, &t1));
      T(poot__cc_bin_c(k, OP(SHR), b2, 6, &t2));
      T(poot__cc_bin_c(k, OP(SHL), t2, 4, &t2));
      T(poot__cc_bin(k, OP(OR), t1, t2, &hi_sc));
      T(poot__cc_bin_c(k, OP(SHR), b1, 4, &t1));
      T(poot__cc_bin_c(k, OP(SHR), b0, 6, &t2));
      T(poot__cc_bin_c(k, OP(SHL), t2, 4, &t2));
      T(poot__cc_bin(k, OP(OR), t1, t2, &hi_mn));
      T(poot_kir_select(k->b, lt4, lo_sc, hi_sc, &sc));
      T(poot_kir_select(k->b, lt4, lo_mn, hi_mn, &mn));
      T(poot__cc_cvt(k, POOT_KIR_F32, sc, &t1));
      T(poot__cc_bin(k, OP(MUL), d, t1, &d1));
      T(poot__cc_cvt(k, POOT_KIR_F32, mn, &t2));
      T(poot__cc_bin(k, OP(MUL), dmin, t2, &m1));
      /* nibble: qs[32 * (sb / 2) + l] >> (4 * (sb & 1)) */
      poot_kir_value qo, sh, half;
      T(poot__cc_bin_c(k, OP(SHR), sb, 1, &half));
      T(poot__cc_bin_c(k, OP(MUL), half, 32, &qo));
      T(poot__cc_bin(k, OP(ADD), qo, l, &qo));
      T(poot__cc_bin_c(k, OP(ADD), qo, five ? 48 : 16, &qo));
      T(poot__cc_bin(k, OP(ADD), bo, qo, &qo));
      T(byte_at(k, ref, qo, &qb));
      T(poot__cc_bin_c(k, OP(AND), sb, 1, &sh));
      T(poot__cc_bin_c(k, OP(MUL), sh, 4, &sh));
      T(poot__cc_bin(k, OP(SHR), qb, sh, &nib));
      T(poot__cc_bin_c(k, OP(AND), nib, 15, &nib));
      if (five) {
        poot_kir_value ho, hb;
        T(poot__cc_bin_c(k, OP(ADD), bo, 16, &ho));
        T(poot__cc_bin(k, OP(ADD), ho, l, &ho));
        T(byte_at(k, ref, ho, &hb));
        T(poot__cc_bin(k, OP(SHR), hb, sb, &hb));
        T(poot__cc_bin_c(k, OP(AND), hb, 1, &hb));
        T(poot__cc_bin_c(k, OP(SHL), hb, 4, &hb));
        T(poot__cc_bin(k, OP(OR), nib, hb, &nib));
      }
      T(poot__cc_cvt(k, POOT_KIR_F32, nib, &q));
      T(poot__cc_bin(k, OP(MUL), d1, q, &y));
      T(poot__cc_bin(k, OP(SUB), y, m1, &y));
      break;
    }
    case POOT_DTYPE_Q6_K: {
      /* e = 128h + 32kq + l */
      poot_kir_value hh, r, kq, l, lo_o, lo, hi_o, hib, sh, sc, ds;
      T(poot__cc_bin_c(k, OP(SHR), j, 7, &hh));
      T(poot__cc_bin_c(k, OP(AND), j, 127, &r));
      T(poot__cc_bin_c(k, OP(SHR), r, 5, &kq));
      T(poot__cc_bin_c(k, OP(AND), r, 31, &l));
      /* ql[64h + 32(kq&1) + l] >> 4(kq>>1) */
      poot_kir_value t1, t2;
      T(poot__cc_bin_c(k, OP(MUL), hh, 64, &t1));
      T(poot__cc_bin_c(k, OP(AND), kq, 1, &t2));
      T(poot__cc_bin_c(k, OP(MUL), t2, 32, &t2));
      T(poot__cc_bin(k, OP(ADD), t1, t2, &lo_o));
      T(poot__cc_bin(k, OP(ADD), lo_o, l, &lo_o));
      T(poot__cc_bin(k, OP(ADD), bo, lo_o, &lo_o));
      T(byte_at(k, ref, lo_o, &lo));
      T(poot__cc_bin_c(k, OP(SHR), kq, 1, &sh));
      T(poot__cc_bin_c(k, OP(MUL), sh, 4, &sh));
      T(poot__cc_bin(k, OP(SHR), lo, sh, &lo));
      T(poot__cc_bin_c(k, OP(AND), lo, 15, &lo));
      /* qh[32h + l] >> 2kq */
      T(poot__cc_bin_c(k, OP(MUL), hh, 32, &hi_o));
      T(poot__cc_bin(k, OP(ADD), hi_o, l, &hi_o));
      T(poot__cc_bin_c(k, OP(ADD), hi_o, 128, &hi_o));
      T(poot__cc_bin(k, OP(ADD), bo, hi_o, &hi_o));
      T(byte_at(k, ref, hi_o, &hib));
      T(poot__cc_bin_c(k, OP(MUL), kq, 2, &sh));
      T(poot__cc_bin(k, OP(SHR), hib, sh, &hib));
      T(poot__cc_bin_c(k, OP(AND), hib, 3, &hib));
      T(poot__cc_bin_c(k, OP(SHL), hib, 4, &hib));
      T(poot__cc_bin(k, OP(OR), lo, hib, &nib));
      T(poot__cc_bcast(k, POOT_KIR_I32, nib, &q));
      T(poot__cc_bin_c(k, OP(SUB), q, 32, &q));
      /* scale: i8 scales[e / 16] at 192, d at 208 */
      poot_kir_value so;
      T(poot__cc_bin_c(k, OP(SHR), j, 4, &so));
      T(poot__cc_bin_c(k, OP(ADD), so, 192, &so));
      T(poot__cc_bin(k, OP(ADD), bo, so, &so));
      T(byte_at(k, ref, so, &sc));
      T(poot__cc_bcast(k, POOT_KIR_I32, sc, &sc));
      T(poot__cc_wrap_int(k, POOT_DTYPE_I8, sc, &sc));
      T(poot__cc_cvt(k, POOT_KIR_F32, sc, &sc));
      T(f16_at(k, ref, bo, 208, &d));
      T(poot__cc_bin(k, OP(MUL), d, sc, &ds));
      T(poot__cc_cvt(k, POOT_KIR_F32, q, &q));
      T(poot__cc_bin(k, OP(MUL), ds, q, &y));
      break;
    }
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: dequantize of %s has no template",
                              poot_dtype_name(wt->dtype));
  }
  (void)m;
  return poot__cc_round(k, n->attrs.dtype, y, out);
}

/* ------------------------------------------------------------ Philox */

/* High 32 bits of a 32x32 product, in 16-bit limbs (no 64-bit integers
 * needed: WebGPU has none). */
static poot_status mulhi(pc_kctx *k, uint32_t a, poot_kir_value b, poot_kir_value *out) {
  poot_kir_value bl, bh, p0, p1, p2, p3, mid, t, al, ah;
  T(poot__cc_u32(k, a & 0xffffu, &al));
  T(poot__cc_u32(k, a >> 16, &ah));
  T(poot__cc_bin_c(k, OP(AND), b, 0xffff, &bl));
  T(poot__cc_bin_c(k, OP(SHR), b, 16, &bh));
  T(poot__cc_bin(k, OP(MUL), al, bl, &p0));
  T(poot__cc_bin(k, OP(MUL), ah, bl, &p1));
  T(poot__cc_bin(k, OP(MUL), al, bh, &p2));
  T(poot__cc_bin(k, OP(MUL), ah, bh, &p3));
  T(poot__cc_bin_c(k, OP(SHR), p0, 16, &mid));
  T(poot__cc_bin_c(k, OP(AND), p1, 0xffff, &t));
  T(poot__cc_bin(k, OP(ADD), mid, t, &mid));
  T(poot__cc_bin_c(k, OP(AND), p2, 0xffff, &t));
  T(poot__cc_bin(k, OP(ADD), mid, t, &mid));
  T(poot__cc_bin_c(k, OP(SHR), p1, 16, &t));
  T(poot__cc_bin(k, OP(ADD), p3, t, &p3));
  T(poot__cc_bin_c(k, OP(SHR), p2, 16, &t));
  T(poot__cc_bin(k, OP(ADD), p3, t, &p3));
  T(poot__cc_bin_c(k, OP(SHR), mid, 16, &t));
  return poot__cc_bin(k, OP(ADD), p3, t, out);
}

/* rng: element n takes word n % 4 of Philox4x32-10 at counter
 * (n / 4, 0, counter[0], counter[1]) and the key. */
poot_status poot__cc_emit_rng(pc_kctx *k, const poot_node *n, const poot_kir_value *idx,
                              const poot_type *ty, poot_kir_value *out) {
  pc_planner *pl = k->pl;
  poot_value key = pl->alias[n->operands[0]], ctr = pl->alias[n->operands[1]];
  poot_kir_value i0, i1, k0, k1, c2, c3, lin, c0, c1, w;
  T(poot__cc_u32(k, 0, &i0));
  T(poot__cc_u32(k, 1, &i1));
  T(poot__cc_emit(k, key, &i0, &k0));
  T(poot__cc_emit(k, key, &i1, &k1));
  T(poot__cc_emit(k, ctr, &i0, &c2));
  T(poot__cc_emit(k, ctr, &i1, &c3));
  T(poot__cc_linearize(k, idx, &ty->shape, &lin));
  T(poot__cc_bin_c(k, OP(SHR), lin, 2, &c0));
  T(poot__cc_u32(k, 0, &c1));
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      T(poot__cc_bin_c(k, OP(ADD), k0, 0x9E3779B9u, &k0));
      T(poot__cc_bin_c(k, OP(ADD), k1, 0xBB67AE85u, &k1));
    }
    poot_kir_value hi0, lo0, hi1, lo1, m0, m1, n0, n2;
    T(mulhi(k, 0xD2511F53u, c0, &hi0));
    T(poot__cc_u32(k, 0xD2511F53u, &m0));
    T(poot__cc_bin(k, OP(MUL), m0, c0, &lo0));
    T(mulhi(k, 0xCD9E8D57u, c2, &hi1));
    T(poot__cc_u32(k, 0xCD9E8D57u, &m1));
    T(poot__cc_bin(k, OP(MUL), m1, c2, &lo1));
    T(poot__cc_bin(k, OP(XOR), hi1, c1, &n0));
    T(poot__cc_bin(k, OP(XOR), n0, k0, &n0));
    T(poot__cc_bin(k, OP(XOR), hi0, c3, &n2));
    T(poot__cc_bin(k, OP(XOR), n2, k1, &n2));
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  poot_kir_value sel4, is1, is2, is3;
  T(poot__cc_bin_c(k, OP(AND), lin, 3, &sel4));
  T(poot__cc_bin_c(k, OP(EQ), sel4, 1, &is1));
  T(poot__cc_bin_c(k, OP(EQ), sel4, 2, &is2));
  T(poot__cc_bin_c(k, OP(EQ), sel4, 3, &is3));
  T(poot__cc_sel(k, is1, c1, c0, &w));
  T(poot__cc_sel(k, is2, c2, w, &w));
  T(poot__cc_sel(k, is3, c3, w, &w));
  k->flops += 60;
  if (n->attrs.rng_dist == POOT_RNG_BITS) {
    *out = w;
    return NULL;
  }
  uint32_t m = ty->dtype == POOT_DTYPE_F32 ? 24 : ty->dtype == POOT_DTYPE_F16 ? 11 : 8;
  poot_kir_value f, sc;
  T(poot__cc_bin_c(k, OP(SHR), w, 32 - m, &w));
  T(poot__cc_cvt(k, S(F32), w, &f));
  T(poot__cc_cf32(k, ldexpf(1.0f, -(int)m), &sc));
  return poot__cc_bin(k, OP(MUL), f, sc, out);
}
