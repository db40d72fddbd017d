/* The GGUF block codecs (see include/poot/quant.h and docs/eval.md).
 *
 * Each routine is written as a plain loop in the order ggml's reference C
 * evaluates it. Every intermediate is a float variable, so each operation is
 * rounded to f32 on its own; contraction into fused multiply-adds is switched
 * off below for compilers that would otherwise do it. */
#include "poot/quant.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---------------------------------------------------------------- helpers */

static inline uint16_t rd_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t rd_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void wr_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void wr_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline float rd_f16(const uint8_t *p) { return poot_f16_to_f32(rd_u16(p)); }
static inline void wr_f16(uint8_t *p, float f) { wr_u16(p, poot_f32_to_f16(f)); }

/* Float to integer the way numpy's astype does it on x86 for in-range values
 * (truncation toward zero); out-of-range and NaN inputs, which numpy leaves
 * unspecified, become `lo` so that C never meets undefined behaviour. */
static inline int trunc_to_int(float v, int lo, int hi) {
  if (!(v > -1e9f && v < 1e9f)) return lo;
  int i = (int)v;
  if (i < lo) i = lo;
  if (i > hi) i = hi;
  return i;
}

/* Index of the first element of largest magnitude (numpy's argmax(abs)). */
static size_t argmax_abs(const float *x, size_t n) {
  size_t best = 0;
  for (size_t j = 1; j < n; j++)
    if (fabsf(x[j]) > fabsf(x[best])) best = j;
  return best;
}

/* ------------------------------------------------------------- dequantize */

void poot_quant_dequantize_q8_0(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q8_0_BYTES, dst += POOT_QUANT_QK) {
    const float d = rd_f16(b);
    for (int j = 0; j < POOT_QUANT_QK; j++) dst[j] = (float)(int8_t)b[2 + j] * d;
  }
}

void poot_quant_dequantize_q4_0(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_0_BYTES, dst += POOT_QUANT_QK) {
    const float d = rd_f16(b);
    const uint8_t *qs = b + 2;
    for (int j = 0; j < 16; j++) {
      dst[j] = d * (float)((int)(qs[j] & 0x0F) - 8);
      dst[j + 16] = d * (float)((int)(qs[j] >> 4) - 8);
    }
  }
}

void poot_quant_dequantize_q4_1(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_1_BYTES, dst += POOT_QUANT_QK) {
    const float d = rd_f16(b), m = rd_f16(b + 2);
    const uint8_t *qs = b + 4;
    for (int j = 0; j < 16; j++) {
      const float p0 = d * (float)(qs[j] & 0x0F);
      const float p1 = d * (float)(qs[j] >> 4);
      dst[j] = p0 + m;
      dst[j + 16] = p1 + m;
    }
  }
}

void poot_quant_dequantize_q5_0(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_0_BYTES, dst += POOT_QUANT_QK) {
    const float d = rd_f16(b);
    const uint32_t qh = rd_u32(b + 2);
    const uint8_t *qs = b + 6;
    for (int j = 0; j < 16; j++) {
      const int q0 = (int)((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4));
      const int q1 = (int)((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
      dst[j] = d * (float)(q0 - 16);
      dst[j + 16] = d * (float)(q1 - 16);
    }
  }
}

void poot_quant_dequantize_q5_1(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_1_BYTES, dst += POOT_QUANT_QK) {
    const float d = rd_f16(b), m = rd_f16(b + 2);
    const uint32_t qh = rd_u32(b + 4);
    const uint8_t *qs = b + 8;
    for (int j = 0; j < 16; j++) {
      const unsigned q0 = (qs[j] & 0x0Fu) | (((qh >> j) & 1u) << 4);
      const unsigned q1 = (qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4);
      const float p0 = d * (float)q0;
      const float p1 = d * (float)q1;
      dst[j] = p0 + m;
      dst[j + 16] = p1 + m;
    }
  }
}

/* The 6-bit scale and min of sub-block j of a q4_k/q5_k block (ggml's
 * get_scale_min_k4). */
static void scale_min_k4(int j, const uint8_t *q, unsigned *sc, unsigned *mn) {
  if (j < 4) {
    *sc = q[j] & 63u;
    *mn = q[j + 4] & 63u;
  } else {
    *sc = (q[j + 4] & 0x0Fu) | ((unsigned)(q[j - 4] >> 6) << 4);
    *mn = (unsigned)(q[j + 4] >> 4) | ((unsigned)(q[j] >> 6) << 4);
  }
}

void poot_quant_dequantize_q4_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_K_BYTES, dst += POOT_QUANT_QK_K) {
    const float d = rd_f16(b), dmin = rd_f16(b + 2);
    const uint8_t *scales = b + 4, *qs = b + 16;
    for (int s = 0; s < 8; s++) {
      unsigned sc, mn;
      scale_min_k4(s, scales, &sc, &mn);
      const float d1 = d * (float)sc, m1 = dmin * (float)mn;
      /* Sub-blocks 2c and 2c+1 share the 32 bytes of chunk c: low nibbles
       * first, then high nibbles. */
      const uint8_t *q = qs + 32 * (s / 2);
      const int shift = (s & 1) ? 4 : 0;
      for (int l = 0; l < 32; l++) {
        const float p = d1 * (float)((q[l] >> shift) & 0x0F);
        dst[32 * s + l] = p - m1;
      }
    }
  }
}

void poot_quant_dequantize_q5_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_K_BYTES, dst += POOT_QUANT_QK_K) {
    const float d = rd_f16(b), dmin = rd_f16(b + 2);
    const uint8_t *scales = b + 4, *qh = b + 16, *qs = b + 48;
    for (int s = 0; s < 8; s++) {
      unsigned sc, mn;
      scale_min_k4(s, scales, &sc, &mn);
      const float d1 = d * (float)sc, m1 = dmin * (float)mn;
      const uint8_t *q = qs + 32 * (s / 2);
      const int shift = (s & 1) ? 4 : 0;
      for (int l = 0; l < 32; l++) {
        const unsigned v = ((q[l] >> shift) & 0x0Fu) | (((qh[l] >> s) & 1u) << 4);
        const float p = d1 * (float)v;
        dst[32 * s + l] = p - m1;
      }
    }
  }
}

void poot_quant_dequantize_q6_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q6_K_BYTES, dst += POOT_QUANT_QK_K) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *scales = (const int8_t *)(b + 192);
    const float d = rd_f16(b + 208);
    /* Element e = 128h + 32k + l (h half, k quarter, l lane): its low four
     * bits are nibble k>>1 of ql[64h + 32(k&1) + l], its high two bits are
     * bits 2k..2k+1 of qh[32h + l]. */
    for (int h = 0; h < 2; h++) {
      for (int k = 0; k < 4; k++) {
        for (int l = 0; l < 32; l++) {
          const int e = 128 * h + 32 * k + l;
          const unsigned lo = (ql[64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 0x0Fu;
          const unsigned hi = (qh[32 * h + l] >> (2 * k)) & 3u;
          const int q = (int)(lo | (hi << 4)) - 32;
          const float ds = d * (float)scales[e / 16];
          dst[e] = ds * (float)q;
        }
      }
    }
  }
}

void poot_quant_dequantize_q8_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q8_K_BYTES, dst += POOT_QUANT_QK_K) {
    const float d = poot_f32_from_bits(rd_u32(b));
    for (int j = 0; j < POOT_QUANT_QK_K; j++) dst[j] = d * (float)(int8_t)b[4 + j];
  }
}

/* Q2_K and Q3_K share one element order: element e = 128h + 32s + l
 * (h half, s shift, l lane) takes bits 2s..2s+1 of qs[32h + l]. */
static inline unsigned q23_low(const uint8_t *qs, int e) {
  return (qs[32 * (e / 128) + (e % 32)] >> (2 * ((e / 32) % 4))) & 3u;
}

void poot_quant_dequantize_q2_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q2_K_BYTES, dst += POOT_QUANT_QK_K) {
    const uint8_t *scales = b, *qs = b + 16;
    const float d = rd_f16(b + 80), dmin = rd_f16(b + 82);
    for (int g = 0; g < 16; g++) {
      const float dl = d * (float)(scales[g] & 0x0F);
      const float ml = dmin * (float)(scales[g] >> 4);
      for (int l = 0; l < 16; l++) {
        const int e = 16 * g + l;
        const float p = dl * (float)q23_low(qs, e);
        dst[e] = p - ml;
      }
    }
  }
}

/* The 6-bit scale of 16-element group g of a q3_k block, less 32: its low
 * four bits are nibble g/8 of scales[g % 8], its high two bits are bits
 * 2(g/4).. of scales[8 + g % 4]. */
static int scale_q3_k(const uint8_t *scales, int g) {
  const unsigned lo = (scales[g % 8] >> (4 * (g / 8))) & 0x0Fu;
  const unsigned hi = (scales[8 + g % 4] >> (2 * (g / 4))) & 3u;
  return (int)(lo | (hi << 4)) - 32;
}

void poot_quant_dequantize_q3_k(const void *src, float *dst, size_t n_blocks) {
  const uint8_t *b = src;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q3_K_BYTES, dst += POOT_QUANT_QK_K) {
    const uint8_t *hmask = b, *qs = b + 32, *scales = b + 96;
    const float d = rd_f16(b + 108);
    for (int g = 0; g < 16; g++) {
      const float dl = d * (float)scale_q3_k(scales, g);
      for (int l = 0; l < 16; l++) {
        const int e = 16 * g + l;
        /* A clear hmask bit (bit e/32 of hmask[e % 32]) subtracts 4. */
        const int high = (hmask[e % 32] >> (e / 32)) & 1;
        const int q = (int)q23_low(qs, e) - (high ? 0 : 4);
        dst[e] = dl * (float)q;
      }
    }
  }
}

/* --------------------------------------------------------------- quantize */

void poot_quant_quantize_q8_0(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q8_0_BYTES, src += POOT_QUANT_QK) {
    float amax = 0.0f;
    for (int j = 0; j < POOT_QUANT_QK; j++)
      if (fabsf(src[j]) > amax) amax = fabsf(src[j]);
    const float d = amax / 127.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wr_f16(b, d);
    for (int j = 0; j < POOT_QUANT_QK; j++) {
      const float v = src[j] * id;
      /* roundf rounds half away from zero, as gguf's np_roundf does. */
      b[2 + j] = (uint8_t)(int8_t)trunc_to_int(roundf(v), -128, 127);
    }
  }
}

void poot_quant_quantize_q4_0(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_0_BYTES, src += POOT_QUANT_QK) {
    const float max = src[argmax_abs(src, POOT_QUANT_QK)];
    const float d = max / -8.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wr_f16(b, d);
    uint8_t q[POOT_QUANT_QK];
    for (int j = 0; j < POOT_QUANT_QK; j++) {
      const float p = src[j] * id;
      q[j] = (uint8_t)trunc_to_int(truncf(p + 8.5f), 0, 15);
    }
    for (int j = 0; j < 16; j++) b[2 + j] = (uint8_t)(q[j] | (q[j + 16] << 4));
  }
}

static void min_max(const float *x, size_t n, float *out_min, float *out_max) {
  float mn = x[0], mx = x[0];
  for (size_t j = 1; j < n; j++) {
    if (x[j] < mn) mn = x[j];
    if (x[j] > mx) mx = x[j];
  }
  *out_min = mn;
  *out_max = mx;
}

void poot_quant_quantize_q4_1(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_1_BYTES, src += POOT_QUANT_QK) {
    float mn, mx;
    min_max(src, POOT_QUANT_QK, &mn, &mx);
    const float d = (mx - mn) / 15.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wr_f16(b, d);
    wr_f16(b + 2, mn);
    uint8_t q[POOT_QUANT_QK];
    for (int j = 0; j < POOT_QUANT_QK; j++) {
      const float diff = src[j] - mn;
      const float p = diff * id;
      q[j] = (uint8_t)trunc_to_int(truncf(p + 0.5f), 0, 15);
    }
    for (int j = 0; j < 16; j++) b[4 + j] = (uint8_t)(q[j] | (q[j + 16] << 4));
  }
}

/* Packs 32 five-bit codes: low nibbles into qs (element j and j+16 share a
 * byte), the fifth bits into the 32-bit word qh (bit j for element j). */
static void pack_q5(const uint8_t *q, uint8_t *qh_out, uint8_t *qs_out) {
  uint32_t qh = 0;
  for (int j = 0; j < POOT_QUANT_QK; j++) qh |= (uint32_t)((q[j] >> 4) & 1u) << j;
  wr_u32(qh_out, qh);
  for (int j = 0; j < 16; j++) qs_out[j] = (uint8_t)((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
}

void poot_quant_quantize_q5_0(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_0_BYTES, src += POOT_QUANT_QK) {
    const float max = src[argmax_abs(src, POOT_QUANT_QK)];
    const float d = max / -16.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wr_f16(b, d);
    uint8_t q[POOT_QUANT_QK];
    for (int j = 0; j < POOT_QUANT_QK; j++) {
      const float p = src[j] * id;
      q[j] = (uint8_t)trunc_to_int(truncf(p + 16.5f), 0, 31);
    }
    pack_q5(q, b + 2, b + 6);
  }
}

void poot_quant_quantize_q5_1(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_1_BYTES, src += POOT_QUANT_QK) {
    float mn, mx;
    min_max(src, POOT_QUANT_QK, &mn, &mx);
    const float d = (mx - mn) / 31.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wr_f16(b, d);
    wr_f16(b + 2, mn);
    uint8_t q[POOT_QUANT_QK];
    for (int j = 0; j < POOT_QUANT_QK; j++) {
      const float diff = src[j] - mn;
      const float p = diff * id;
      q[j] = (uint8_t)trunc_to_int(truncf(p + 0.5f), 0, 31);
    }
    pack_q5(q, b + 4, b + 8);
  }
}

/* ggml's nearest_int: round to nearest even through the 1.5 * 2^23 trick,
 * exact for |v| <= 2^22 - 1 (the codes here stay within ±128). */
static int nearest_int(float v) {
  if (!(fabsf(v) <= 4194303.0f)) return v > 0 ? 127 : -128;
  const float t = v + 12582912.0f;
  return (int)(poot_f32_bits(t) & 0x007FFFFFu) - 0x00400000;
}

void poot_quant_quantize_q8_k(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q8_K_BYTES, src += POOT_QUANT_QK_K) {
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < POOT_QUANT_QK_K; j++) {
      const float ax = fabsf(src[j]);
      if (ax > amax) {
        amax = ax;
        max = src[j];
      }
    }
    memset(b, 0, POOT_QUANT_Q8_K_BYTES);
    if (amax == 0.0f) continue; /* d = 0, every code and sum 0 */
    const float iscale = -127.0f / max;
    int8_t q[POOT_QUANT_QK_K];
    for (int j = 0; j < POOT_QUANT_QK_K; j++) {
      const int v = nearest_int(iscale * src[j]);
      q[j] = (int8_t)(v < 127 ? (v < -128 ? -128 : v) : 127);
      b[4 + j] = (uint8_t)q[j];
    }
    for (int g = 0; g < POOT_QUANT_QK_K / 16; g++) {
      int sum = 0;
      for (int l = 0; l < 16; l++) sum += q[16 * g + l];
      wr_u16(b + 4 + POOT_QUANT_QK_K + 2 * g, (uint16_t)(int16_t)sum);
    }
    wr_u32(b, poot_f32_bits(1.0f / iscale));
  }
}

/* ---------------------------------------------------- k-quant quantizers
 *
 * The k-quants store per-sub-block scales (and mins) as 6-bit (q6_k: 8-bit)
 * multiples of one f16 super-scale per 256 elements. The quantizers below
 * are poot's own covering min/max scheme, not ggml's search:
 *   1. per sub-block the range [lo, hi] of its values, lo ≤ 0 (the format
 *      can only subtract a min);
 *   2. the super-scales are the smallest f16 values with which every
 *      sub-block's 6-bit min and scale, each rounded UP, still reach lo and
 *      hi (f16_at_least, ceil_code);
 *   3. every code is the nearest one for the scale and min as the
 *      dequantizer computes them (the same f32 products).
 * Because the codes' range covers every value, no value is clipped, and
 * |x − deq(q(x))| ≤ d1/2 + rounding, d1 being the sub-block's effective
 * scale; include/poot/quant.h states the bound. */

/* The smallest f16 value ≥ v (v ≥ 0), at most 65504; 0 for NaN or v ≤ 0. */
static uint16_t f16_at_least(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 65504.0f) return 0x7BFF;
  uint16_t h = poot_f32_to_f16(v);
  if (poot_f16_to_f32(h) < v) h++;
  return h;
}

/* ceil(num / den) in [0, hi] (0 when den is 0 or the quotient is NaN). */
static int ceil_code(float num, float den, int hi) {
  if (!(den > 0.0f)) return 0;
  const float t = num / den;
  if (!(t > 0.0f)) return 0;
  if (t >= (float)hi) return hi;
  const int c = (int)ceilf(t);
  return c > hi ? hi : c;
}

/* The nearest integer to t (ties to even), clamped to [lo, hi]; lo for NaN. */
static int nearest_code(float t, int lo, int hi) {
  if (!(t > (float)lo)) return lo;
  if (t >= (float)hi) return hi;
  const int v = nearest_int(t);
  return v < lo ? lo : v > hi ? hi : v;
}

/* One q4_k/q5_k block (codes 0..qmax): writes d and dmin at out[0..3], the
 * 12 scale bytes at out + 4 and the 256 codes in element order to q. */
static void quantize_k_minmax(const float *x, int qmax, uint8_t *out, uint8_t *q) {
  float lo[8], hi[8], m1[8], need[8], off_max = 0.0f, need_max = 0.0f;
  for (int s = 0; s < 8; s++) {
    min_max(x + 32 * s, 32, &lo[s], &hi[s]);
    if (!(lo[s] < 0.0f)) lo[s] = 0.0f;
    if (-lo[s] > off_max) off_max = -lo[s];
  }
  const uint16_t hdmin = f16_at_least(off_max / 63.0f);
  const float dmin = poot_f16_to_f32(hdmin);
  int mn[8], sc[8];
  for (int s = 0; s < 8; s++) {
    mn[s] = ceil_code(-lo[s], dmin, 63);
    m1[s] = dmin * (float)mn[s];
    const float span = hi[s] + m1[s];
    need[s] = span > 0.0f ? span / (float)qmax : 0.0f;
    if (need[s] > need_max) need_max = need[s];
  }
  const uint16_t hd = f16_at_least(need_max / 63.0f);
  const float d = poot_f16_to_f32(hd);
  wr_u16(out, hd);
  wr_u16(out + 2, hdmin);
  uint8_t *scales = out + 4;
  memset(scales, 0, 12);
  for (int s = 0; s < 8; s++) {
    sc[s] = ceil_code(need[s], d, 63);
    const float d1 = d * (float)sc[s];
    for (int l = 0; l < 32; l++) {
      const float v = x[32 * s + l] + m1[s];
      q[32 * s + l] = (uint8_t)(d1 > 0.0f ? nearest_code(v / d1, 0, qmax) : 0);
    }
    /* The inverse of scale_min_k4. */
    if (s < 4) {
      scales[s] |= (uint8_t)sc[s];
      scales[s + 4] |= (uint8_t)mn[s];
    } else {
      scales[s + 4] = (uint8_t)((sc[s] & 0x0F) | ((mn[s] & 0x0F) << 4));
      scales[s - 4] |= (uint8_t)((sc[s] >> 4) << 6);
      scales[s] |= (uint8_t)((mn[s] >> 4) << 6);
    }
  }
}

void poot_quant_quantize_q4_k(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q4_K_BYTES, src += POOT_QUANT_QK_K) {
    uint8_t q[POOT_QUANT_QK_K];
    quantize_k_minmax(src, 15, b, q);
    /* Sub-blocks 2c (low nibbles) and 2c+1 (high nibbles) share 32 bytes. */
    uint8_t *qs = b + 16;
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++)
        qs[32 * c + l] = (uint8_t)(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
  }
}

void poot_quant_quantize_q5_k(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q5_K_BYTES, src += POOT_QUANT_QK_K) {
    uint8_t q[POOT_QUANT_QK_K];
    quantize_k_minmax(src, 31, b, q);
    uint8_t *qh = b + 16, *qs = b + 48;
    memset(qh, 0, 32);
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++)
        qs[32 * c + l] = (uint8_t)((q[64 * c + l] & 0x0F) | ((q[64 * c + 32 + l] & 0x0F) << 4));
    /* The fifth bit of element 32s + l is bit s of qh[l]. */
    for (int s = 0; s < 8; s++)
      for (int l = 0; l < 32; l++) qh[l] |= (uint8_t)(((q[32 * s + l] >> 4) & 1u) << s);
  }
}

/* One q6_k block: codes −32..31 times an i8 scale (0..127 here) per 16
 * elements times the f16 d. A group's scale covers 31 steps up and 32
 * down. */
static void quantize_q6_k_block(const float *x, uint8_t *b) {
  float need[16], need_max = 0.0f;
  for (int g = 0; g < 16; g++) {
    float lo, hi;
    min_max(x + 16 * g, 16, &lo, &hi);
    const float up = hi > 0.0f ? hi / 31.0f : 0.0f, down = lo < 0.0f ? -lo / 32.0f : 0.0f;
    need[g] = up > down ? up : down;
    if (need[g] > need_max) need_max = need[g];
  }
  const uint16_t hd = f16_at_least(need_max / 127.0f);
  const float d = poot_f16_to_f32(hd);
  uint8_t *ql = b, *qh = b + 128, *scales = b + 192;
  memset(b, 0, POOT_QUANT_Q6_K_BYTES);
  for (int g = 0; g < 16; g++) {
    const int sc = ceil_code(need[g], d, 127);
    scales[g] = (uint8_t)(int8_t)sc;
    const float d1 = d * (float)sc;
    for (int l = 0; l < 16; l++) {
      const int e = 16 * g + l;
      const int q = d1 > 0.0f ? nearest_code(x[e] / d1, -32, 31) : 0;
      const unsigned u = (unsigned)(q + 32);
      const int h = e / 128, k = (e / 32) % 4, lane = e % 32;
      ql[64 * h + 32 * (k & 1) + lane] |= (uint8_t)((u & 0x0Fu) << (4 * (k >> 1)));
      qh[32 * h + lane] |= (uint8_t)((u >> 4) << (2 * k));
    }
  }
  wr_u16(b + 208, hd);
}

void poot_quant_quantize_q6_k(const float *src, void *dst, size_t n_blocks) {
  uint8_t *b = dst;
  for (size_t i = 0; i < n_blocks; i++, b += POOT_QUANT_Q6_K_BYTES, src += POOT_QUANT_QK_K)
    quantize_q6_k_block(src, b);
}

/* -------------------------------------------------------- format table */

static const poot_quant_format formats[] = {
    {"q4_0", 2, POOT_QUANT_QK, POOT_QUANT_Q4_0_BYTES, poot_quant_dequantize_q4_0,
     poot_quant_quantize_q4_0},
    {"q4_1", 3, POOT_QUANT_QK, POOT_QUANT_Q4_1_BYTES, poot_quant_dequantize_q4_1,
     poot_quant_quantize_q4_1},
    {"q5_0", 6, POOT_QUANT_QK, POOT_QUANT_Q5_0_BYTES, poot_quant_dequantize_q5_0,
     poot_quant_quantize_q5_0},
    {"q5_1", 7, POOT_QUANT_QK, POOT_QUANT_Q5_1_BYTES, poot_quant_dequantize_q5_1,
     poot_quant_quantize_q5_1},
    {"q8_0", 8, POOT_QUANT_QK, POOT_QUANT_Q8_0_BYTES, poot_quant_dequantize_q8_0,
     poot_quant_quantize_q8_0},
    {"q2_k", 10, POOT_QUANT_QK_K, POOT_QUANT_Q2_K_BYTES, poot_quant_dequantize_q2_k, NULL},
    {"q3_k", 11, POOT_QUANT_QK_K, POOT_QUANT_Q3_K_BYTES, poot_quant_dequantize_q3_k, NULL},
    {"q4_k", 12, POOT_QUANT_QK_K, POOT_QUANT_Q4_K_BYTES, poot_quant_dequantize_q4_k,
     poot_quant_quantize_q4_k},
    {"q5_k", 13, POOT_QUANT_QK_K, POOT_QUANT_Q5_K_BYTES, poot_quant_dequantize_q5_k,
     poot_quant_quantize_q5_k},
    {"q6_k", 14, POOT_QUANT_QK_K, POOT_QUANT_Q6_K_BYTES, poot_quant_dequantize_q6_k,
     poot_quant_quantize_q6_k},
    {"q8_k", 15, POOT_QUANT_QK_K, POOT_QUANT_Q8_K_BYTES, poot_quant_dequantize_q8_k,
     poot_quant_quantize_q8_k},
};

const poot_quant_format *poot_quant_formats(size_t *out_count) {
  if (out_count) *out_count = sizeof formats / sizeof formats[0];
  return formats;
}

const poot_quant_format *poot_quant_format_by_name(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcasecmp(formats[i].name, name) == 0) return &formats[i];
  return NULL;
}

const poot_quant_format *poot_quant_format_by_ggml_type(uint32_t ggml_type) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].ggml_type == ggml_type) return &formats[i];
  return NULL;
}

const poot_quant_format *poot_quant_format_of_dtype(poot_dtype dtype) {
  switch (dtype) {
    case POOT_DTYPE_Q8_0: return poot_quant_format_by_ggml_type(8);
    case POOT_DTYPE_Q4_0: return poot_quant_format_by_ggml_type(2);
    case POOT_DTYPE_Q4_1: return poot_quant_format_by_ggml_type(3);
    case POOT_DTYPE_Q5_0: return poot_quant_format_by_ggml_type(6);
    case POOT_DTYPE_Q5_1: return poot_quant_format_by_ggml_type(7);
    case POOT_DTYPE_Q4_K: return poot_quant_format_by_ggml_type(12);
    case POOT_DTYPE_Q5_K: return poot_quant_format_by_ggml_type(13);
    case POOT_DTYPE_Q6_K: return poot_quant_format_by_ggml_type(14);
    case POOT_DTYPE_Q8_K: return poot_quant_format_by_ggml_type(15);
    case POOT_DTYPE_Q2_K: return poot_quant_format_by_ggml_type(10);
    case POOT_DTYPE_Q3_K: return poot_quant_format_by_ggml_type(11);
    default: return NULL;
  }
}

static poot_status check_geometry(const poot_quant_format *format, size_t n_elements,
                                  size_t bytes, size_t *out_blocks) {
  *out_blocks = 0;
  if (!format) return poot_status_make(POOT_INVALID_ARGUMENT, "quant: no format given");
  if (n_elements % format->block_elems != 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "quant: %zu elements is not a multiple of the %s block size %u",
                            n_elements, format->name, (unsigned)format->block_elems);
  const size_t n_blocks = n_elements / format->block_elems;
  size_t need = 0;
  if (!poot_size_mul(n_blocks, format->block_bytes, &need) || need != bytes)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "quant: %zu %s elements take %zu bytes, the buffer has %zu",
                            n_elements, format->name, need, bytes);
  *out_blocks = n_blocks;
  return POOT_OK_STATUS;
}

poot_status poot_quant_dequantize_row(const poot_quant_format *format, const void *src,
                                      size_t src_bytes, float *dst, size_t n_elements) {
  size_t n_blocks = 0;
  POOT_TRY(check_geometry(format, n_elements, src_bytes, &n_blocks));
  if (n_blocks) format->dequantize(src, dst, n_blocks);
  return POOT_OK_STATUS;
}

poot_status poot_quant_quantize_row(const poot_quant_format *format, const float *src,
                                    size_t n_elements, void *dst, size_t dst_bytes) {
  size_t n_blocks = 0;
  POOT_TRY(check_geometry(format, n_elements, dst_bytes, &n_blocks));
  if (!format->quantize)
    return poot_status_make(POOT_UNSUPPORTED, "quant: no quantizer for %s (dequantize only)",
                            format->name);
  if (n_blocks) format->quantize(src, dst, n_blocks);
  return POOT_OK_STATUS;
}
