/* emit_packed.c — the expression emitter, part two: GGUF block decoding
 * (dequantize fused into whatever reads it) and the Philox generator. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

/* -------------------------------------------------------- dequantize */

static poot_status byte_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value *out) {
  poot_kir_value wi, w, sh;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
  POOT_TRY(poot__cc_load_word(k, ref, wi, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), bo, 3, &sh));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), sh, 3, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), w, sh, &w));
  return poot__cc_bin_c(k, OP(AND), w, 0xff, out);
}
/* 16 bits at an even byte offset. */
static poot_status half_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value *out) {
  poot_kir_value wi, w, sh;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
  POOT_TRY(poot__cc_load_word(k, ref, wi, &w));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), bo, 2, &sh));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), sh, 3, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), w, sh, &w));
  return poot__cc_bin_c(k, OP(AND), w, 0xffff, out);
}
static poot_status f16_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, uint32_t add,
                          poot_kir_value *out) {
  poot_kir_value o, h;
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, add, &o));
  POOT_TRY(half_at(k, ref, o, &h));
  return poot__cc_f16_decode(k, h, out);
}
static poot_status u32_at(pc_kctx *k, uint32_t ref, poot_kir_value bo, uint32_t add,
                          poot_kir_value *out) {
  poot_kir_value o, lo, hi;
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, add, &o));
  POOT_TRY(half_at(k, ref, o, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), o, 2, &o));
  POOT_TRY(half_at(k, ref, o, &hi));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), hi, 16, &hi));
  return poot__cc_bin(k, OP(OR), lo, hi, out);
}

/* Q8_0 and Q8_K: an i8 quant times the block scale (f16; Q8_K f32). */
static poot_status deq_q8(pc_kctx *k, poot_dtype dt, uint32_t ref, poot_kir_value bo,
                          poot_kir_value j, poot_kir_value *out) {
  poot_kir_value d, q, y, qb, o;
  uint32_t qoff = dt == POOT_DTYPE_Q8_0 ? 2 : 4;
  if (dt == POOT_DTYPE_Q8_0) {
    POOT_TRY(f16_at(k, ref, bo, 0, &d));
  } else {
    poot_kir_value wi;
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), bo, 2, &wi));
    POOT_TRY(poot__cc_load_word(k, ref, wi, &d));
    POOT_TRY(poot__cc_bcast(k, S(F32), d, &d));
  }
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, qoff, &o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), o, j, &o));
  POOT_TRY(byte_at(k, ref, o, &qb));
  POOT_TRY(poot__cc_bcast(k, S(I32), qb, &q));
  POOT_TRY(poot__cc_wrap_int(k, POOT_DTYPE_I8, q, &q));
  POOT_TRY(poot__cc_cvt(k, S(F32), q, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), q, d, &y));
  *out = y;
  return NULL;
}

/* Q4_0, Q4_1, Q5_0 and Q5_1: a 4-bit quant (the fifth bit from qh) times
 * the f16 scale, plus the f16 min (_1) or centred (_0). */
static poot_status deq_q4_q5(pc_kctx *k, poot_dtype dt, uint32_t ref, poot_kir_value bo,
                             poot_kir_value j, poot_kir_value *out) {
  poot_kir_value d, m = 0, q, y, qb, jj, hi, o, nib;
  bool has_m = dt == POOT_DTYPE_Q4_1 || dt == POOT_DTYPE_Q5_1;
  bool five = dt == POOT_DTYPE_Q5_0 || dt == POOT_DTYPE_Q5_1;
  uint32_t qs_off = 2 + (has_m ? 2 : 0) + (five ? 4 : 0);
  POOT_TRY(f16_at(k, ref, bo, 0, &d));
  if (has_m) POOT_TRY(f16_at(k, ref, bo, 2, &m));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 15, &jj));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 4, &hi)); /* 0 or 1 */
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, qs_off, &o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), o, jj, &o));
  POOT_TRY(byte_at(k, ref, o, &qb));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), hi, 4, &hi));
  POOT_TRY(poot__cc_bin(k, OP(SHR), qb, hi, &nib));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), nib, 15, &nib));
  if (five) {
    poot_kir_value qh, bit;
    POOT_TRY(u32_at(k, ref, bo, has_m ? 4 : 2, &qh));
    POOT_TRY(poot__cc_bin(k, OP(SHR), qh, j, &bit));
    POOT_TRY(poot__cc_bin_c(k, OP(AND), bit, 1, &bit));
    POOT_TRY(poot__cc_bin_c(k, OP(SHL), bit, 4, &bit));
    POOT_TRY(poot__cc_bin(k, OP(OR), nib, bit, &nib));
  }
  POOT_TRY(poot__cc_bcast(k, S(I32), nib, &q));
  if (!has_m) POOT_TRY(poot__cc_bin_c(k, OP(SUB), q, five ? 16 : 8, &q));
  POOT_TRY(poot__cc_cvt(k, S(F32), q, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d, q, &y));
  if (has_m) POOT_TRY(poot__cc_bin(k, OP(ADD), y, m, &y));
  *out = y;
  return NULL;
}

/* The 2-bit low part of element j of a Q2_K/Q3_K block: bits 2s..2s+1 of
 * qs[32h + l] for j = 128h + 32s + l, qs at byte qs_off of the block. */
static poot_status low2_q23(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value j,
                            uint32_t qs_off, poot_kir_value *out) {
  poot_kir_value h, s, l, o, qb;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 7, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 5, &s));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), s, 3, &s));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 31, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), h, 32, &o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), o, l, &o));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), o, qs_off, &o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, o, &o));
  POOT_TRY(byte_at(k, ref, o, &qb));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s, 2, &s));
  POOT_TRY(poot__cc_bin(k, OP(SHR), qb, s, &qb));
  return poot__cc_bin_c(k, OP(AND), qb, 3, out);
}

/* Q2_K: a 2-bit quant times d · (4-bit scale) less dmin · (4-bit min), one
 * scale byte per 16 elements (low nibble scale, high nibble min). */
static poot_status deq_q2_k(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value j,
                            poot_kir_value *out) {
  poot_kir_value q, g, so, sb, sc, mn, d, dmin, dl, ml, y;
  POOT_TRY(low2_q23(k, ref, bo, j, 16, &q));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 4, &g));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, g, &so));
  POOT_TRY(byte_at(k, ref, so, &sb));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), sb, 15, &sc));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), sb, 4, &mn));
  POOT_TRY(f16_at(k, ref, bo, 80, &d));
  POOT_TRY(f16_at(k, ref, bo, 82, &dmin));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, sc, &sc));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d, sc, &dl));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, mn, &mn));
  POOT_TRY(poot__cc_bin(k, OP(MUL), dmin, mn, &ml));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, q, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), dl, q, &y));
  return poot__cc_bin(k, OP(SUB), y, ml, out);
}

/* Q3_K: a 3-bit signed quant (2 low bits from qs, a clear hmask bit
 * subtracts 4) times d · (6-bit scale − 32) of its 16 elements. */
static poot_status deq_q3_k(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value j,
                            poot_kir_value *out) {
  poot_kir_value q, l, ho, hb, sh, g, t, lo_o, lo, hi_o, hi, sc, d, dl, y;
  POOT_TRY(low2_q23(k, ref, bo, j, 32, &q));
  /* bit j / 32 of hmask[j % 32], at byte 0 */
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 31, &l));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, l, &ho));
  POOT_TRY(byte_at(k, ref, ho, &hb));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 5, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), hb, sh, &hb));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), hb, 1, &hb));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), hb, 2, &hb));
  POOT_TRY(poot__cc_bin(k, OP(OR), q, hb, &q)); /* low | 4·hbit, then − 4 */
  POOT_TRY(poot__cc_bcast(k, POOT_KIR_I32, q, &q));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), q, 4, &q));
  /* scale g = j / 16: nibble g / 8 of scales[g % 8] (byte 96), bits
   * 2(g / 4).. of scales[8 + g % 4] */
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 4, &g));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), g, 7, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, t, &lo_o));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), lo_o, 96, &lo_o));
  POOT_TRY(byte_at(k, ref, lo_o, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), g, 3, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t, 4, &t));
  POOT_TRY(poot__cc_bin(k, OP(SHR), lo, t, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), lo, 15, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), g, 3, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, t, &hi_o));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), hi_o, 104, &hi_o));
  POOT_TRY(byte_at(k, ref, hi_o, &hi));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), g, 2, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t, 2, &t));
  POOT_TRY(poot__cc_bin(k, OP(SHR), hi, t, &hi));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), hi, 3, &hi));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), hi, 4, &hi));
  POOT_TRY(poot__cc_bin(k, OP(OR), lo, hi, &sc));
  POOT_TRY(poot__cc_bcast(k, POOT_KIR_I32, sc, &sc));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), sc, 32, &sc));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, sc, &sc));
  POOT_TRY(f16_at(k, ref, bo, 108, &d));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d, sc, &dl));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, q, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), dl, q, &y));
  *out = y;
  return NULL;
}

/* Q4_K and Q5_K: a 4-bit quant (the fifth bit from qh) times the 6-bit
 * scale of its sub-block, less its 6-bit min. */
static poot_status deq_q45_k(pc_kctx *k, poot_dtype dt, uint32_t ref, poot_kir_value bo,
                             poot_kir_value j, poot_kir_value *out) {
  poot_kir_value d, q, y, qb, nib;
  /* sub-block sb = j / 32 with 6-bit scale and min (get_scale_min_k4) */
  bool five = dt == POOT_DTYPE_Q5_K;
  poot_kir_value sb, l, dmin, lt4, i0, i1, i2, b0, b1, b2, sc, mn, t1, t2, d1, m1;
  POOT_TRY(f16_at(k, ref, bo, 0, &d));
  POOT_TRY(f16_at(k, ref, bo, 2, &dmin));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 5, &sb));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 31, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), sb, 4, &lt4));
  /* bytes: s4 = scales[sb+4] (sb<4: the min; else low/high nibbles),
   * s0 = scales[sb] (sb<4: the scale), sm4 = scales[sb-4] (sb>=4) */
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, 4, &i0));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i0, sb, &i1)); /* &scales[sb] */
  POOT_TRY(byte_at(k, ref, i1, &b0));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), i1, 4, &i2));
  POOT_TRY(byte_at(k, ref, i2, &b1)); /* scales[sb+4] (sb < 8 → index < 12) */
  poot_kir_value sbm4, im4;
  POOT_TRY(poot__cc_bin_c(k, OP(MAX), sb, 4, &sbm4));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), sbm4, 4, &sbm4));
  POOT_TRY(poot__cc_bin(k, OP(ADD), i0, sbm4, &im4));
  POOT_TRY(byte_at(k, ref, im4, &b2)); /* scales[sb-4] */
  poot_kir_value lo_sc, lo_mn, hi_sc, hi_mn;
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b0, 63, &lo_sc));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b1, 63, &lo_mn));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b1, 15, &t1));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), b2, 6, &t2));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), t2, 4, &t2));
  POOT_TRY(poot__cc_bin(k, OP(OR), t1, t2, &hi_sc));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), b1, 4, &t1));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), b0, 6, &t2));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), t2, 4, &t2));
  POOT_TRY(poot__cc_bin(k, OP(OR), t1, t2, &hi_mn));
  POOT_TRY(poot_kir_select(k->b, lt4, lo_sc, hi_sc, &sc));
  POOT_TRY(poot_kir_select(k->b, lt4, lo_mn, hi_mn, &mn));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, sc, &t1));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d, t1, &d1));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, mn, &t2));
  POOT_TRY(poot__cc_bin(k, OP(MUL), dmin, t2, &m1));
  /* nibble: qs[32 * (sb / 2) + l] >> (4 * (sb & 1)) */
  poot_kir_value qo, sh, half;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), sb, 1, &half));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), half, 32, &qo));
  POOT_TRY(poot__cc_bin(k, OP(ADD), qo, l, &qo));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), qo, five ? 48 : 16, &qo));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, qo, &qo));
  POOT_TRY(byte_at(k, ref, qo, &qb));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), sb, 1, &sh));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), sh, 4, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), qb, sh, &nib));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), nib, 15, &nib));
  if (five) {
    poot_kir_value ho, hb;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), bo, 16, &ho));
    POOT_TRY(poot__cc_bin(k, OP(ADD), ho, l, &ho));
    POOT_TRY(byte_at(k, ref, ho, &hb));
    POOT_TRY(poot__cc_bin(k, OP(SHR), hb, sb, &hb));
    POOT_TRY(poot__cc_bin_c(k, OP(AND), hb, 1, &hb));
    POOT_TRY(poot__cc_bin_c(k, OP(SHL), hb, 4, &hb));
    POOT_TRY(poot__cc_bin(k, OP(OR), nib, hb, &nib));
  }
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, nib, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d1, q, &y));
  POOT_TRY(poot__cc_bin(k, OP(SUB), y, m1, &y));
  *out = y;
  return NULL;
}

/* Q6_K: a 6-bit quant (4 low bits from ql, 2 from qh) times its i8 scale
 * and the f16 d. */
static poot_status deq_q6_k(pc_kctx *k, uint32_t ref, poot_kir_value bo, poot_kir_value j,
                            poot_kir_value *out) {
  poot_kir_value d, q, y, nib;
  /* e = 128h + 32kq + l */
  poot_kir_value hh, r, kq, l, lo_o, lo, hi_o, hib, sh, sc, ds;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 7, &hh));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 127, &r));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), r, 5, &kq));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), r, 31, &l));
  /* ql[64h + 32(kq&1) + l] >> 4(kq>>1) */
  poot_kir_value t1, t2;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), hh, 64, &t1));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), kq, 1, &t2));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t2, 32, &t2));
  POOT_TRY(poot__cc_bin(k, OP(ADD), t1, t2, &lo_o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), lo_o, l, &lo_o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, lo_o, &lo_o));
  POOT_TRY(byte_at(k, ref, lo_o, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), kq, 1, &sh));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), sh, 4, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), lo, sh, &lo));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), lo, 15, &lo));
  /* qh[32h + l] >> 2kq */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), hh, 32, &hi_o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), hi_o, l, &hi_o));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), hi_o, 128, &hi_o));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, hi_o, &hi_o));
  POOT_TRY(byte_at(k, ref, hi_o, &hib));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), kq, 2, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), hib, sh, &hib));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), hib, 3, &hib));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), hib, 4, &hib));
  POOT_TRY(poot__cc_bin(k, OP(OR), lo, hib, &nib));
  POOT_TRY(poot__cc_bcast(k, POOT_KIR_I32, nib, &q));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), q, 32, &q));
  /* scale: i8 scales[e / 16] at 192, d at 208 */
  poot_kir_value so;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), j, 4, &so));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), so, 192, &so));
  POOT_TRY(poot__cc_bin(k, OP(ADD), bo, so, &so));
  POOT_TRY(byte_at(k, ref, so, &sc));
  POOT_TRY(poot__cc_bcast(k, POOT_KIR_I32, sc, &sc));
  POOT_TRY(poot__cc_wrap_int(k, POOT_DTYPE_I8, sc, &sc));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, sc, &sc));
  POOT_TRY(f16_at(k, ref, bo, 208, &d));
  POOT_TRY(poot__cc_bin(k, OP(MUL), d, sc, &ds));
  POOT_TRY(poot__cc_cvt(k, POOT_KIR_F32, q, &q));
  POOT_TRY(poot__cc_bin(k, OP(MUL), ds, q, &y));
  *out = y;
  return NULL;
}

poot_status poot__cc_emit_dequantize(pc_kctx *k, const poot_node *n, const poot_kir_value *idx,
                                     poot_kir_value *out) {
  poot_value w = k->pl->alias[n->operands[0]];
  poot_kir_value y;
  if (k->pl->v[w].hold == PC_LEAFBUF)
    POOT_TRY(poot__cc_load_packed(k, w, idx, &y));
  else /* a view of a q8_0 K/V state: its elements, decoded where they are stored */
    POOT_TRY(poot__cc_emit(k, w, idx, &y));
  return poot__cc_round(k, n->attrs.dtype, y, out);
}

poot_status poot__cc_load_packed(pc_kctx *k, poot_value w, const poot_kir_value *idx,
                                 poot_kir_value *out) {
  const poot_type *wt = poot__cc_type(k->pl, w);
  const poot_dtype_info *di = poot_dtype_info_of(wt->dtype);
  pc_value *pw = &k->pl->v[w];
  if (pw->hold != PC_LEAFBUF && pw->hold != PC_DENSE)
    return poot_status_make(POOT_UNSUPPORTED,
                            "compile: %s value %%%u is not in a buffer (only weights and "
                            "K/V states are read packed)",
                            poot_dtype_name(wt->dtype), w);
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, pw->buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  uint32_t r = wt->shape.rank;
  int64_t kdim = wt->shape.dims[r - 1];
  uint32_t be = (uint32_t)di->block_elems, bb = (uint32_t)di->block_bytes;
  poot_shape lead = wt->shape;
  lead.rank = r - 1;
  poot_kir_value row, blk, j, bo;
  POOT_TRY(poot__cc_linearize(k, idx, &lead, &row));
  POOT_TRY(poot__cc_bin_c(k, OP(DIV), idx[r - 1], be, &blk));
  POOT_TRY(poot__cc_bin_c(k, OP(REM), idx[r - 1], be, &j));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(kdim / be), &row));
  POOT_TRY(poot__cc_bin(k, OP(ADD), row, blk, &bo));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), bo, bb, &bo));
  k->bytes += 1;
  k->flops += 2;
  poot_kir_value y;
  switch (wt->dtype) {
    case POOT_DTYPE_Q8_0:
    case POOT_DTYPE_Q8_K:
      POOT_TRY(deq_q8(k, wt->dtype, ref, bo, j, &y));
      break;
    case POOT_DTYPE_Q4_0:
    case POOT_DTYPE_Q4_1:
    case POOT_DTYPE_Q5_0:
    case POOT_DTYPE_Q5_1:
      POOT_TRY(deq_q4_q5(k, wt->dtype, ref, bo, j, &y));
      break;
    case POOT_DTYPE_Q4_K:
    case POOT_DTYPE_Q5_K:
      POOT_TRY(deq_q45_k(k, wt->dtype, ref, bo, j, &y));
      break;
    case POOT_DTYPE_Q6_K:
      POOT_TRY(deq_q6_k(k, ref, bo, j, &y));
      break;
    case POOT_DTYPE_Q2_K:
      POOT_TRY(deq_q2_k(k, ref, bo, j, &y));
      break;
    case POOT_DTYPE_Q3_K:
      POOT_TRY(deq_q3_k(k, ref, bo, j, &y));
      break;
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: dequantize of %s has no template",
                              poot_dtype_name(wt->dtype));
  }
  *out = y;
  return NULL;
}

/* ------------------------------------------------------------ Philox */

/* High 32 bits of a 32x32 product, in 16-bit limbs (no 64-bit integers
 * needed: WebGPU has none). */
static poot_status mulhi(pc_kctx *k, uint32_t a, poot_kir_value b, poot_kir_value *out) {
  poot_kir_value bl, bh, p0, p1, p2, p3, mid, t, al, ah;
  POOT_TRY(poot__cc_u32(k, a & 0xffffu, &al));
  POOT_TRY(poot__cc_u32(k, a >> 16, &ah));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b, 0xffff, &bl));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), b, 16, &bh));
  POOT_TRY(poot__cc_bin(k, OP(MUL), al, bl, &p0));
  POOT_TRY(poot__cc_bin(k, OP(MUL), ah, bl, &p1));
  POOT_TRY(poot__cc_bin(k, OP(MUL), al, bh, &p2));
  POOT_TRY(poot__cc_bin(k, OP(MUL), ah, bh, &p3));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p0, 16, &mid));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), p1, 0xffff, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), mid, t, &mid));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), p2, 0xffff, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), mid, t, &mid));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p1, 16, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), p3, t, &p3));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), p2, 16, &t));
  POOT_TRY(poot__cc_bin(k, OP(ADD), p3, t, &p3));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), mid, 16, &t));
  return poot__cc_bin(k, OP(ADD), p3, t, out);
}

/* rng: element n takes word n % 4 of Philox4x32-10 at counter
 * (n / 4, 0, counter[0], counter[1]) and the key. */
poot_status poot__cc_emit_rng(pc_kctx *k, const poot_node *n, const poot_kir_value *idx,
                              const poot_type *ty, poot_kir_value *out) {
  pc_planner *pl = k->pl;
  poot_value key = pl->alias[n->operands[0]], ctr = pl->alias[n->operands[1]];
  poot_kir_value i0, i1, k0, k1, c2, c3, lin, c0, c1, w;
  POOT_TRY(poot__cc_u32(k, 0, &i0));
  POOT_TRY(poot__cc_u32(k, 1, &i1));
  POOT_TRY(poot__cc_emit(k, key, &i0, &k0));
  POOT_TRY(poot__cc_emit(k, key, &i1, &k1));
  POOT_TRY(poot__cc_emit(k, ctr, &i0, &c2));
  POOT_TRY(poot__cc_emit(k, ctr, &i1, &c3));
  POOT_TRY(poot__cc_linearize(k, idx, &ty->shape, &lin));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), lin, 2, &c0));
  POOT_TRY(poot__cc_u32(k, 0, &c1));
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), k0, 0x9E3779B9u, &k0));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), k1, 0xBB67AE85u, &k1));
    }
    poot_kir_value hi0, lo0, hi1, lo1, m0, m1, n0, n2;
    POOT_TRY(mulhi(k, 0xD2511F53u, c0, &hi0));
    POOT_TRY(poot__cc_u32(k, 0xD2511F53u, &m0));
    POOT_TRY(poot__cc_bin(k, OP(MUL), m0, c0, &lo0));
    POOT_TRY(mulhi(k, 0xCD9E8D57u, c2, &hi1));
    POOT_TRY(poot__cc_u32(k, 0xCD9E8D57u, &m1));
    POOT_TRY(poot__cc_bin(k, OP(MUL), m1, c2, &lo1));
    POOT_TRY(poot__cc_bin(k, OP(XOR), hi1, c1, &n0));
    POOT_TRY(poot__cc_bin(k, OP(XOR), n0, k0, &n0));
    POOT_TRY(poot__cc_bin(k, OP(XOR), hi0, c3, &n2));
    POOT_TRY(poot__cc_bin(k, OP(XOR), n2, k1, &n2));
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  poot_kir_value sel4, is1, is2, is3;
  POOT_TRY(poot__cc_bin_c(k, OP(AND), lin, 3, &sel4));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), sel4, 1, &is1));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), sel4, 2, &is2));
  POOT_TRY(poot__cc_bin_c(k, OP(EQ), sel4, 3, &is3));
  POOT_TRY(poot__cc_sel(k, is1, c1, c0, &w));
  POOT_TRY(poot__cc_sel(k, is2, c2, w, &w));
  POOT_TRY(poot__cc_sel(k, is3, c3, w, &w));
  k->flops += 60;
  if (n->attrs.rng_dist == POOT_RNG_BITS) {
    *out = w;
    return NULL;
  }
  uint32_t m = ty->dtype == POOT_DTYPE_F32 ? 24 : ty->dtype == POOT_DTYPE_F16 ? 11 : 8;
  poot_kir_value f, sc;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, 32 - m, &w));
  POOT_TRY(poot__cc_cvt(k, S(F32), w, &f));
  POOT_TRY(poot__cc_cf32(k, ldexpf(1.0f, -(int)m), &sc));
  return poot__cc_bin(k, OP(MUL), f, sc, out);
}
