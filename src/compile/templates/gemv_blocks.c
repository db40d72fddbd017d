/* templates/gemv_blocks.c — the GGUF block formats of the GEMV template
 * (gemv.c): where a lane's 64-element chunk lies in the weight row, how it
 * is loaded, and how it is decoded in registers.
 *
 * Chunks (words of 32 bits; see gemv_blocks.h for the element ranges):
 *   q8_0  17 words  two blocks of 34 bytes (the second's d at bytes 34..35)
 *   q4_0   9 words  two blocks of 18 bytes
 *   q4_1  10 words  two blocks of 20 bytes (d, m, qs)
 *   q5_0  11 words  two blocks of 22 bytes (d, qh, qs; the second at byte 22)
 *   q5_1  12 words  two blocks of 24 bytes (d, m, qh, qs)
 *   q4_k  12 words  the block's 16-byte header (d, dmin, scales) and qs
 *                   group j (32 bytes): three 16-byte vector loads
 *   q5_k  20 words  the header, all of qh (32 bytes, one bit plane of it
 *                   used) and qs group j: five 16-byte vector loads
 *   q6_k  20 words  for half h and lane range lh of a 210-byte block: its ql
 *                   bytes (2 × 16), qh bytes (16), scale words (2), d, each
 *                   read as one word more than it spans and funnel-shifted
 *                   by 16 bits in odd blocks (which start at byte 2 mod 4),
 *                   and the block's parity as word 19
 * The four lanes of one k-quant block read the same header line; their
 * loads coalesce, so DRAM reads each byte once.
 *
 * Decoding works on whole words: masks and shifts bring four codes into the
 * four bytes of a word (the fifth and sixth bits merged in from qh by word
 * operations too), and each code becomes an exact f32 through the mantissa
 * of 2^23 and one fused multiply-add — no integer-to-float conversion per
 * element. A run of codes sharing a scale (a 32-element block or sub-block,
 * a 16-element q6_k group) is summed as scale · Σ q·x + min · Σ x: the
 * scale and the min are applied once per run (min = m for q4_1/q5_1,
 * -dmin·m for the k-quants), and Σ x of every run is summed once per
 * workgroup, when x is staged (gemv.c), for all its rows and roots. The scales are computed as
 * poot/quant.h does (d * sc, dmin * m, d * (float)scales[i]); only the order of the f32 sums
 * differs from the oracle (docs/compiler.md, the dot cases' bound). */
#include "gemv_blocks.h"

#include <math.h>
#include <string.h>

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

#define GQ_MAX_RUNS 4

uint32_t poot__gq_words(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_Q8_0:
      return 17;
    case POOT_DTYPE_Q4_0:
      return 9;
    case POOT_DTYPE_Q4_1:
      return 10;
    case POOT_DTYPE_Q5_0:
      return 11;
    case POOT_DTYPE_Q5_1:
    case POOT_DTYPE_Q4_K:
      return 12;
    case POOT_DTYPE_Q5_K:
    case POOT_DTYPE_Q6_K:
      return 20;
    default:
      return 0;
  }
}

bool poot__gq_has_mins(poot_dtype dt) {
  return dt == POOT_DTYPE_Q4_1 || dt == POOT_DTYPE_Q5_1 || dt == POOT_DTYPE_Q4_K ||
         dt == POOT_DTYPE_Q5_K;
}

bool poot__gq_is_k(poot_dtype dt) {
  return dt == POOT_DTYPE_Q4_K || dt == POOT_DTYPE_Q5_K || dt == POOT_DTYPE_Q6_K;
}

/* ------------------------------------------------------------- loading */

static poot_status words_at(pc_kctx *k, uint32_t ref, poot_kir_value at, uint32_t n,
                            poot_kir_value *wd) {
  for (uint32_t i = 0; i < n; i++) {
    poot_kir_value a = at;
    if (i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, i, &a));
    POOT_TRY(poot__cc_load_word(k, ref, a, &wd[i]));
  }
  return NULL;
}

/* n (a multiple of 4) words from word `at` (a multiple of 4) as 16-byte
 * vector loads. */
static poot_status vec_at(pc_kctx *k, uint32_t ref, poot_kir_value at, uint32_t first, uint32_t n,
                          poot_kir_value *wd) {
  for (uint32_t i = 0; i < n; i += 4) {
    poot_kir_value a = at, v;
    if (first + i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, first + i, &a));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, ref, a, 4, &v));
    for (uint32_t l = 0; l < 4; l++) POOT_TRY(poot_kir_extract(k->b, v, l, &wd[i + l]));
  }
  return NULL;
}

/* q4_k / q5_k: block ch / 4 of the row (36 / 44 words, so every block and
 * its qs groups are 16-byte aligned when the row is), qs group ch % 4. */
static poot_status load_k45(pc_kctx *k, poot_dtype dt, uint32_t ref, int64_t kk, poot_kir_value row,
                            poot_kir_value ch, poot_kir_value *wd) {
  uint32_t bw = dt == POOT_DTYPE_Q4_K ? 36 : 44, nb = (uint32_t)(kk / 256);
  uint32_t qs = dt == POOT_DTYPE_Q4_K ? 4 : 12;
  poot_kir_value blk, j, at, g;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), ch, 2, &blk));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ch, 3, &j));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, nb * bw, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), blk, bw, &blk));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, blk, &at));
  POOT_TRY(vec_at(k, ref, at, 0, qs, wd)); /* header (+ qh) */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), j, 8, &g));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, g, &g));
  return vec_at(k, ref, g, qs, 8, wd + qs);
}

/* q6_k: global block gb = row · nb + ch / 4 starts at byte 210 gb, word
 * (105 gb) >> 1, two bytes into it when gb is odd. */
static poot_status load_q6k(pc_kctx *k, uint32_t ref, int64_t kk, poot_kir_value row,
                            poot_kir_value ch, poot_kir_value *wd) {
  poot_kir_value gb, w0, q, h, lh, at;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(kk / 256), &gb));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), ch, 2, &q));
  POOT_TRY(poot__cc_bin(k, OP(ADD), gb, q, &gb));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), gb, 105, &w0));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w0, 1, &w0));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ch, 3, &q));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), q, 1, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), q, 1, &lh));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), h, 16, &h)); /* 64 h bytes */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), lh, 4, &lh));
  POOT_TRY(poot__cc_bin(k, OP(ADD), h, lh, &q));
  POOT_TRY(poot__cc_bin(k, OP(ADD), w0, q, &at)); /* ql: byte 64 h + 16 lh */
  POOT_TRY(words_at(k, ref, at, 5, wd));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, 8, &at)); /* byte 64 h + 32 + 16 lh */
  POOT_TRY(words_at(k, ref, at, 5, wd + 5));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), h, 1, &h)); /* 8 h words = 32 h bytes */
  POOT_TRY(poot__cc_bin(k, OP(ADD), h, lh, &q));
  POOT_TRY(poot__cc_bin(k, OP(ADD), w0, q, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, 32, &at)); /* qh: byte 128 + 32 h + 16 lh */
  POOT_TRY(words_at(k, ref, at, 5, wd + 10));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), h, 2, &h)); /* 2 h words */
  POOT_TRY(poot__cc_bin(k, OP(ADD), w0, h, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, 48, &at)); /* scales: byte 192 + 8 h */
  POOT_TRY(words_at(k, ref, at, 3, wd + 15));
  POOT_TRY(poot__cc_bin_c(k, OP(ADD), w0, 52, &at)); /* d: byte 208 */
  POOT_TRY(poot__cc_load_word(k, ref, at, &wd[18]));
  return poot__cc_bin_c(k, OP(AND), gb, 1, &wd[19]);
}

poot_status poot__gq_load(pc_kctx *k, poot_dtype dt, uint32_t ref, int64_t kk, poot_kir_value row,
                          poot_kir_value ch, poot_kir_value *wd) {
  if (dt == POOT_DTYPE_Q4_K || dt == POOT_DTYPE_Q5_K) return load_k45(k, dt, ref, kk, row, ch, wd);
  if (dt == POOT_DTYPE_Q6_K) return load_q6k(k, ref, kk, row, ch, wd);
  uint32_t nw = poot__gq_words(dt);
  poot_kir_value at, off;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), row, (uint32_t)(kk / GQ_CHUNK) * nw, &at));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), ch, nw, &off));
  POOT_TRY(poot__cc_bin(k, OP(ADD), at, off, &at));
  return words_at(k, ref, at, nw, wd);
}

/* ------------------------------------------------------------ decoding */

/* One decoded chunk: run r holds words[r][0 .. n/4), each with four codes
 * in fields of `width` bits at bit[r][i] + 8 · (0, 1, 2, 3); element e of
 * the run is field e % 4 of word e / 4, minus bias. */
typedef struct gq_chunk {
  uint32_t runs, n, width, bias;
  uint32_t off[GQ_MAX_RUNS]; /* x offset of each run from the chunk's base */
  poot_kir_value w[GQ_MAX_RUNS][8];
  uint32_t bit[GQ_MAX_RUNS][8];
  poot_kir_value scale[GQ_MAX_RUNS], minv[GQ_MAX_RUNS]; /* minv 0: none */
} gq_chunk;

/* Field [bit, bit + width) of word w, minus bias, as an exact f32: the field
 * masked into the mantissa of 2^23 (OR 0x4B000000), then one fused
 * multiply-add takes off 2^23 and the bias and undoes the field's position.
 * Fields reaching past bit 22 are read from w >> 16 (*hi, made once). */
static poot_status field(pc_kctx *k, poot_kir_value w, poot_kir_value *hi, uint32_t bit,
                         uint32_t width, uint32_t bias, poot_kir_value *out) {
  poot_kir_value src = w, t, f, c;
  if (bit + width > 23) {
    if (!*hi) POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, 16, hi));
    src = *hi;
    bit -= 16;
  }
  POOT_TRY(poot__cc_bin_c(k, OP(AND), src, ((1u << width) - 1u) << bit, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(OR), t, 0x4B000000u, &t));
  POOT_TRY(poot__cc_bcast(k, S(F32), t, &f));
  POOT_TRY(poot__cc_cf32(k, -(ldexpf(1.0f, 23 - (int)bit) + (float)bias), &c));
  if (!bit) return poot__cc_bin(k, OP(ADD), f, c, out);
  poot_kir_value sc;
  POOT_TRY(poot__cc_cf32(k, ldexpf(1.0f, -(int)bit), &sc));
  return poot_kir_fma(k->b, f, sc, c, out);
}

/* The four bytes at byte offset 2 of the pair (a, b). */
static poot_status funnel16(pc_kctx *k, poot_kir_value a, poot_kir_value b, poot_kir_value *out) {
  poot_kir_value x, y;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), a, 16, &x));
  POOT_TRY(poot__cc_bin_c(k, OP(SHL), b, 16, &y));
  return poot__cc_bin(k, OP(OR), x, y, out);
}

static poot_status f16_hi(pc_kctx *k, poot_kir_value w, poot_kir_value *out) {
  poot_kir_value h;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), w, 16, &h));
  return poot__gemv_f16_lo(k, h, out);
}

/* Bits 0..3 of v spread to bits 0, 8, 16, 24 (no two partial products
 * meet, so the multiply carries nothing). */
static poot_status spread4(pc_kctx *k, poot_kir_value v, uint32_t shift, poot_kir_value *out) {
  poot_kir_value t = v;
  if (shift) POOT_TRY(poot__cc_bin_c(k, OP(SHR), v, shift, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), t, 15, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), t, 0x00204081u, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), t, 0x01010101u, &t));
  return poot__cc_bin_c(k, OP(SHL), t, 4, out);
}

static void layout(gq_chunk *c, uint32_t runs, uint32_t n, uint32_t width, uint32_t bias) {
  c->runs = runs, c->n = n, c->width = width, c->bias = bias;
  for (uint32_t r = 0; r < runs; r++) c->off[r] = r * (GQ_CHUNK / runs);
}

/* The 32-element block formats: block b of the pair has its d (and m) at
 * dw[b] (f16 halves: d low, m high when `hasm`; d high when `dhi`), its 16
 * qs bytes as the words qs[b][0..3] (low nibbles: elements 0..15, high:
 * 16..31), and its qh (q5) word qh[b]. */
static poot_status legacy(pc_kctx *k, gq_chunk *c, const poot_kir_value dw[2], const bool dhi[2],
                          bool hasm, poot_kir_value qs[2][4], const poot_kir_value *qh) {
  for (uint32_t b = 0; b < 2; b++) {
    POOT_TRY((dhi[b] ? f16_hi : poot__gemv_f16_lo)(k, dw[b], &c->scale[b]));
    c->minv[b] = 0;
    if (hasm) POOT_TRY(f16_hi(k, dw[b], &c->minv[b]));
    for (uint32_t i = 0; i < 4; i++) {
      if (!qh) {
        c->w[b][i] = c->w[b][4 + i] = qs[b][i];
        c->bit[b][i] = 0, c->bit[b][4 + i] = 4;
        continue;
      }
      poot_kir_value lo, hi, s;
      POOT_TRY(poot__cc_bin_c(k, OP(AND), qs[b][i], 0x0F0F0F0Fu, &lo));
      POOT_TRY(spread4(k, qh[b], 4 * i, &s));
      POOT_TRY(poot__cc_bin(k, OP(OR), lo, s, &c->w[b][i]));
      POOT_TRY(poot__cc_bin_c(k, OP(SHR), qs[b][i], 4, &hi));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), hi, 0x0F0F0F0Fu, &hi));
      POOT_TRY(spread4(k, qh[b], 16 + 4 * i, &s));
      POOT_TRY(poot__cc_bin(k, OP(OR), hi, s, &c->w[b][4 + i]));
      c->bit[b][i] = c->bit[b][4 + i] = 0;
    }
  }
  return NULL;
}

static poot_status dec_q8_0(pc_kctx *k, const poot_kir_value *wd, gq_chunk *c) {
  /* words 0..8: d0 | q0[0..31] at bytes 2..33 | d1 at bytes 34..35;
   * words 9..16: q1[0..31]. Signed bytes: x ^ 0x80 is q + 128. */
  layout(c, 2, 32, 8, 128);
  POOT_TRY(poot__gemv_f16_lo(k, wd[0], &c->scale[0]));
  POOT_TRY(f16_hi(k, wd[8], &c->scale[1]));
  c->minv[0] = c->minv[1] = 0;
  for (uint32_t i = 0; i < 8; i++) {
    poot_kir_value qw;
    POOT_TRY(funnel16(k, wd[i], wd[i + 1], &qw));
    POOT_TRY(poot__cc_bin_c(k, OP(XOR), qw, 0x80808080u, &c->w[0][i]));
    POOT_TRY(poot__cc_bin_c(k, OP(XOR), wd[9 + i], 0x80808080u, &c->w[1][i]));
    c->bit[0][i] = c->bit[1][i] = 0;
  }
  return NULL;
}

/* The pair formats but q8_0. */
static poot_status dec_pair(pc_kctx *k, poot_dtype dt, const poot_kir_value *wd, gq_chunk *c) {
  poot_kir_value dw[2], qs[2][4], qh[2];
  bool dhi[2] = {false, false}, five = dt == POOT_DTYPE_Q5_0 || dt == POOT_DTYPE_Q5_1;
  bool hasm = dt == POOT_DTYPE_Q4_1 || dt == POOT_DTYPE_Q5_1;
  layout(c, 2, 32, five ? 5 : 4, dt == POOT_DTYPE_Q4_0 ? 8 : dt == POOT_DTYPE_Q5_0 ? 16 : 0);
  switch (dt) {
    case POOT_DTYPE_Q4_0: /* d0 | qs0 at bytes 2..17 | d1 at 18..19; qs1: words 5..8 */
      dw[0] = wd[0], dw[1] = wd[4], dhi[1] = true;
      for (uint32_t i = 0; i < 4; i++) {
        POOT_TRY(funnel16(k, wd[i], wd[i + 1], &qs[0][i]));
        qs[1][i] = wd[5 + i];
      }
      break;
    case POOT_DTYPE_Q5_0: /* d0 | qh0 at 2..5 | qs0 at 6..21 | d1 at 22..23; qh1, qs1 */
      dw[0] = wd[0], dw[1] = wd[5], dhi[1] = true;
      POOT_TRY(funnel16(k, wd[0], wd[1], &qh[0]));
      qh[1] = wd[6];
      for (uint32_t i = 0; i < 4; i++) {
        POOT_TRY(funnel16(k, wd[1 + i], wd[2 + i], &qs[0][i]));
        qs[1][i] = wd[7 + i];
      }
      break;
    default: /* q4_1: d|m, qs (5 words a block); q5_1: d|m, qh, qs (6) */
      for (uint32_t b = 0; b < 2; b++) {
        uint32_t o = b * (five ? 6 : 5);
        dw[b] = wd[o];
        if (five) qh[b] = wd[o + 1];
        for (uint32_t i = 0; i < 4; i++) qs[b][i] = wd[o + 1 + five + i];
      }
      break;
  }
  return legacy(k, c, dw, dhi, hasm, qs, five ? qh : NULL);
}

/* q4_k / q5_k: the scale and min of sub-blocks 2j and 2j + 1 (j = ch % 4),
 * ggml's get_scale_min_k4 on whole words: bytes 0..3 of
 *   sc = j < 2 ? s0 & 0x3f3f3f3f : (s2 & 0x0f0f0f0f) | ((s0 >> 2) & 0x30303030)
 *   mn = j < 2 ? s1 & 0x3f3f3f3f : ((s2 >> 4) & 0x0f0f0f0f) | ((s1 >> 2) & 0x30303030)
 * are the values of sub-blocks 4 (j / 2) + 0..3 (in the six low bits of
 * each byte: the masks that clear bits 6 and 7 are left to field()). */
static poot_status k_scales(pc_kctx *k, const poot_kir_value *wd, poot_kir_value j, gq_chunk *c) {
  poot_kir_value d, dmin, b, t, sc, mn, hi, two, sh;
  POOT_TRY(poot__gemv_f16_lo(k, wd[0], &d));
  POOT_TRY(f16_hi(k, wd[0], &dmin));
  POOT_TRY(poot__cc_u32(k, 2, &two));
  POOT_TRY(poot__cc_bin(k, OP(GE), j, two, &hi));
  /* Bits 6 and 7 of each byte are left as they come (field() reads the six
   * value bits only): the j < 2 words unmasked, the j >= 2 ones one bit
   * select of the low nibbles and the two high bits each. */
  POOT_TRY(poot__cc_bin_c(k, OP(AND), wd[3], 0x0F0F0F0Fu, &b));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), wd[1], 2, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), t, 0xF0F0F0F0u, &t));
  POOT_TRY(poot__cc_bin(k, OP(OR), b, t, &b));
  POOT_TRY(poot__cc_sel(k, hi, b, wd[1], &sc));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), wd[3], 4, &b));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), b, 0x0F0F0F0Fu, &b));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), wd[2], 2, &t));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), t, 0xF0F0F0F0u, &t));
  POOT_TRY(poot__cc_bin(k, OP(OR), b, t, &b));
  POOT_TRY(poot__cc_sel(k, hi, b, wd[2], &mn));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), j, 1, &sh)); /* bytes 2 (j % 2), + 1 */
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), sh, 16, &sh));
  POOT_TRY(poot__cc_bin(k, OP(SHR), sc, sh, &sc));
  POOT_TRY(poot__cc_bin(k, OP(SHR), mn, sh, &mn));
  for (uint32_t r = 0; r < 2; r++) {
    poot_kir_value h0 = 0, h1 = 0, s, m;
    POOT_TRY(field(k, sc, &h0, 8 * r, 6, 0, &s));
    POOT_TRY(field(k, mn, &h1, 8 * r, 6, 0, &m));
    POOT_TRY(poot__cc_bin(k, OP(MUL), d, s, &c->scale[r]));
    POOT_TRY(poot__cc_bin(k, OP(MUL), dmin, m, &m));
    POOT_TRY(poot__cc_un(k, OP(NEG), m, &c->minv[r]));
  }
  return NULL;
}

/* q4_k: qs words 4..11 (low nibbles: sub-block 2j, high: 2j + 1); q5_k:
 * qh words 4..11 (bit 2j / 2j + 1 of byte l: the fifth bit of element l of
 * each sub-block), qs words 12..19. */
static poot_status dec_k45(pc_kctx *k, poot_dtype dt, const poot_kir_value *wd, poot_kir_value ch,
                           gq_chunk *c) {
  bool five = dt == POOT_DTYPE_Q5_K;
  poot_kir_value j, s0, s1;
  layout(c, 2, 32, five ? 5 : 4, 0);
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ch, 3, &j));
  POOT_TRY(k_scales(k, wd, j, c));
  if (five) {
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), j, 2, &s0));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), s0, 1, &s1));
  }
  for (uint32_t i = 0; i < 8; i++) {
    poot_kir_value q = wd[(five ? 12 : 4) + i];
    c->bit[0][i] = c->bit[1][i] = 0;
    if (!five) {
      c->w[0][i] = c->w[1][i] = q;
      c->bit[1][i] = 4;
      continue;
    }
    for (uint32_t r = 0; r < 2; r++) {
      poot_kir_value lo = q, hb;
      if (r) POOT_TRY(poot__cc_bin_c(k, OP(SHR), q, 4, &lo));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), lo, 0x0F0F0F0Fu, &lo));
      POOT_TRY(poot__cc_bin(k, OP(SHR), wd[4 + i], r ? s1 : s0, &hb));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), hb, 0x01010101u, &hb));
      POOT_TRY(poot__cc_bin_c(k, OP(SHL), hb, 4, &hb));
      POOT_TRY(poot__cc_bin(k, OP(OR), lo, hb, &c->w[r][i]));
    }
  }
  return NULL;
}

/* q6_k: the words of an odd block funnel-shifted into place (ptxas makes
 * each one funnel shift and a select); then run k
 * (k = 0..3: elements 128 h + 32 k + 16 lh + 0..15) has the low nibbles
 * (k < 2) or high nibbles of ql word group k % 2, with bits 2k, 2k + 1 of
 * the qh bytes shifted to bits 4, 5 above them (at most two shifts and a
 * bit select a word), and the signed scale byte 2k + lh of the two scale
 * words. */
static poot_status dec_q6k(pc_kctx *k, const poot_kir_value *wd, poot_kir_value ch, gq_chunk *c) {
  poot_kir_value odd, zero, al[18], d, lh, t[2];
  layout(c, 4, 16, 6, 32);
  POOT_TRY(poot__cc_u32(k, 0, &zero));
  POOT_TRY(poot__cc_bin(k, OP(NE), wd[19], zero, &odd));
  static const uint8_t first[] = {0, 5, 10, 15}, count[] = {4, 4, 4, 2};
  for (uint32_t g = 0, o = 0; g < 4; g++)
    for (uint32_t i = 0; i < count[g]; i++, o++) {
      poot_kir_value f;
      POOT_TRY(funnel16(k, wd[first[g] + i], wd[first[g] + i + 1], &f));
      POOT_TRY(poot__cc_sel(k, odd, f, wd[first[g] + i], &al[o]));
    }
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), wd[18], 16, &d));
  POOT_TRY(poot__cc_sel(k, odd, d, wd[18], &d));
  POOT_TRY(poot__gemv_f16_lo(k, d, &d));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ch, 1, &lh));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), lh, 8, &lh));
  for (uint32_t s = 0; s < 2; s++) {
    POOT_TRY(poot__cc_bin(k, OP(SHR), al[12 + s], lh, &t[s]));
    POOT_TRY(poot__cc_bin_c(k, OP(XOR), t[s], 0x00800080u, &t[s]));
  }
  for (uint32_t r = 0; r < 4; r++) {
    poot_kir_value hi = 0, sc;
    POOT_TRY(field(k, t[r / 2], &hi, 16 * (r % 2), 8, 128, &sc));
    POOT_TRY(poot__cc_bin(k, OP(MUL), d, sc, &c->scale[r]));
    c->minv[r] = 0;
    for (uint32_t i = 0; i < 4; i++) {
      /* (nibbles & 0x0f…) | (qh bits at 4, 5 & 0xf0…): bits 6, 7 of each
       * byte are left over, and field() masks only the six code bits */
      poot_kir_value lo = al[4 * (r % 2) + i], hb = al[8 + i];
      if (r >= 2) POOT_TRY(poot__cc_bin_c(k, OP(SHR), lo, 4, &lo));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), lo, 0x0F0F0F0Fu, &lo));
      if (r < 2) POOT_TRY(poot__cc_bin_c(k, OP(SHL), hb, 4 - 2 * r, &hb));
      if (r == 3) POOT_TRY(poot__cc_bin_c(k, OP(SHR), hb, 2, &hb));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), hb, 0xF0F0F0F0u, &hb));
      POOT_TRY(poot__cc_bin(k, OP(OR), lo, hb, &c->w[r][i]));
      c->bit[r][i] = 0;
    }
  }
  c->off[0] = 0, c->off[1] = 32, c->off[2] = 64, c->off[3] = 96;
  return NULL;
}

static poot_status decode(pc_kctx *k, poot_dtype dt, const poot_kir_value *wd, poot_kir_value ch,
                          gq_chunk *c) {
  switch (dt) {
    case POOT_DTYPE_Q8_0:
      return dec_q8_0(k, wd, c);
    case POOT_DTYPE_Q4_0:
    case POOT_DTYPE_Q4_1:
    case POOT_DTYPE_Q5_0:
    case POOT_DTYPE_Q5_1:
      return dec_pair(k, dt, wd, c);
    case POOT_DTYPE_Q4_K:
    case POOT_DTYPE_Q5_K:
      return dec_k45(k, dt, wd, ch, c);
    case POOT_DTYPE_Q6_K:
      return dec_q6k(k, wd, ch, c);
    default:
      return poot_status_make(POOT_INTERNAL, "compile: gemv blocks of %s", poot_dtype_name(dt));
  }
}

/* The x offset of the chunk's runs: 64 ch, or for q6_k (half h, lane range
 * lh of block ch / 4) 256 (ch / 4) + 128 h + 16 lh. */
static poot_status chunk_base(pc_kctx *k, poot_dtype dt, poot_kir_value ch, poot_kir_value *out) {
  if (dt != POOT_DTYPE_Q6_K) return poot__cc_bin_c(k, OP(MUL), ch, GQ_CHUNK, out);
  poot_kir_value b, h, l;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), ch, 2, &b));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), b, 256, &b));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), ch, 1, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), h, 1, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), h, 128, &h));
  POOT_TRY(poot__cc_bin_c(k, OP(AND), ch, 1, &l));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), l, 16, &l));
  POOT_TRY(poot__cc_bin(k, OP(ADD), b, h, &b));
  return poot__cc_bin(k, OP(ADD), b, l, out);
}

poot_status poot__gq_values(pc_kctx *k, poot_dtype dt, const poot_kir_value *wd, poot_kir_value ch,
                            gq_values *out) {
  gq_chunk c;
  POOT_TRY(decode(k, dt, wd, ch, &c));
  POOT_TRY(chunk_base(k, dt, ch, &out->base));
  out->runs = c.runs, out->n = c.n;
  for (uint32_t r = 0; r < c.runs; r++) {
    out->off[r] = c.off[r];
    for (uint32_t i = 0; i < c.n / 4; i++) {
      poot_kir_value hi = 0;
      for (uint32_t f = 0; f < 4; f++) {
        poot_kir_value q, *v = &out->v[r * c.n + 4 * i + f];
        POOT_TRY(field(k, c.w[r][i], &hi, c.bit[r][i] + 8 * f, c.width, c.bias, &q));
        POOT_TRY(poot__cc_bin(k, OP(MUL), c.scale[r], q, v));
        if (c.minv[r]) POOT_TRY(poot__cc_bin(k, OP(ADD), *v, c.minv[r], v));
      }
    }
  }
  return NULL;
}

/* part[m] += Σ_f q_f · x[m, f] over the four codes of word i of run r of
 * chunk c (part[m] 0: starts the sum). */
static poot_status word_add(pc_kctx *k, const gq_chunk *c, uint32_t r, uint32_t i, uint32_t nm,
                            poot_kir_value xs[][GEMV_MAX_M], poot_kir_value *part) {
  poot_kir_value hi = 0;
  for (uint32_t f = 0; f < 4; f++) {
    poot_kir_value q;
    POOT_TRY(field(k, c->w[r][i], &hi, c->bit[r][i] + 8 * f, c->width, c->bias, &q));
    for (uint32_t m = 0; m < nm; m++) {
      if (!part[m])
        POOT_TRY(poot__cc_bin(k, OP(MUL), q, xs[f][m], &part[m]));
      else
        POOT_TRY(poot_kir_fma(k->b, q, xs[f][m], part[m], &part[m]));
    }
  }
  return NULL;
}

/* acc[base + m] += scale · part[m] (+ minv · sx[m]) for run r of chunk c,
 * where inr holds. */
static poot_status run_finish(pc_kctx *k, const gq_chunk *c, uint32_t r, uint32_t nm,
                              const poot_kir_value *part, const poot_kir_value *sx,
                              poot_kir_value inr, uint32_t pacc, uint32_t base) {
  for (uint32_t m = 0; m < nm; m++) {
    poot_kir_value a, p;
    POOT_TRY(poot__cc_bin(k, OP(MUL), part[m], c->scale[r], &p));
    if (c->minv[r]) POOT_TRY(poot_kir_fma(k->b, c->minv[r], sx[m], p, &p));
    if (inr) {
      poot_kir_value z;
      POOT_TRY(poot__cc_cf32(k, 0.0f, &z));
      POOT_TRY(poot__cc_sel(k, inr, p, z, &p));
    }
    POOT_TRY(poot_kir_priv_load(k->b, pacc, base + m, &a));
    POOT_TRY(poot__cc_bin(k, OP(ADD), a, p, &a));
    POOT_TRY(poot_kir_priv_store(k->b, pacc, base + m, a));
  }
  return NULL;
}

/* sx[r][m]: Σ x[m, ·] over run r of chunk c (32 elements at base + off[r],
 * 32-aligned), read from the sums staged with the tile. */
static poot_status run_sums(pc_kctx *k, const gemv_xtile *xt, uint32_t nm, poot_kir_value base,
                            const gq_chunk *c, poot_kir_value sx[][GEMV_MAX_M]) {
  if (!xt->sums || c->n != 32)
    return poot_status_make(POOT_INTERNAL, "compile: gemv run sums of a chunk without them");
  poot_kir_value s0;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), base, 5, &s0));
  for (uint32_t r = 0; r < c->runs; r++)
    for (uint32_t m = 0; m < nm; m++) {
      poot_kir_value at = s0;
      if (c->off[r] / 32 + m * xt->runs)
        POOT_TRY(poot__cc_bin_c(k, OP(ADD), s0, c->off[r] / 32 + m * xt->runs, &at));
      POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->ssh, at, 1, &sx[r][m]));
    }
  return NULL;
}

/* Decodes chunk ch of every job of format dt (at most 2 · PG_MAX_ROOTS):
 * cs[0..*n) with their job indices idx; *mins when any has a min term. */
static poot_status decode_jobs(pc_kctx *k, poot_dtype dt, poot_kir_value ch, const gq_job *jobs,
                               uint32_t nj, gq_chunk *cs, uint32_t *idx, uint32_t *n, bool *mins) {
  for (uint32_t i = 0; i < nj && *n < 2 * PG_MAX_ROOTS; i++) {
    if (jobs[i].dt != dt) continue;
    POOT_TRY(decode(k, dt, jobs[i].wd, ch, &cs[*n]));
    *mins = *mins || cs[*n].minv[0];
    idx[(*n)++] = i;
  }
  return NULL;
}

/* The jobs of format dt among jobs[0 .. nj): decoded, then word by word
 * (word i of every run, each run's four x values loaded once; Σ x, where
 * the format has mins, staged with the tile) into every job's run sums, so that a
 * loaded word and its x die as soon as they are used (q4_k's word i holds
 * codes of both runs); each run's sum is still in element order. */
static poot_status format_jobs(pc_kctx *k, const gemv_xtile *xt, uint32_t nm, poot_kir_value ch,
                               poot_dtype dt, const gq_job *jobs, uint32_t nj, poot_kir_value inr,
                               uint32_t pacc) {
  gq_chunk cs[2 * PG_MAX_ROOTS];
  uint32_t idx[2 * PG_MAX_ROOTS], n = 0;
  bool mins = false;
  POOT_TRY(decode_jobs(k, dt, ch, jobs, nj, cs, idx, &n, &mins));
  poot_kir_value base;
  POOT_TRY(chunk_base(k, dt, ch, &base));
  poot_kir_value part[2 * PG_MAX_ROOTS][GQ_MAX_RUNS][GEMV_MAX_M], sx[GQ_MAX_RUNS][GEMV_MAX_M];
  memset(part, 0, sizeof part);
  uint32_t runs = cs[0].runs;
  if (mins) POOT_TRY(run_sums(k, xt, nm, base, &cs[0], sx));
  for (uint32_t i = 0; i < cs[0].n / 4; i++)
    for (uint32_t r = 0; r < runs; r++) {
      poot_kir_value xs[4][GEMV_MAX_M];
      POOT_TRY(poot__gemv_x_run(k, xt, nm, base, cs[0].off[r] + 4 * i, 4, xs));
      for (uint32_t j = 0; j < n; j++) POOT_TRY(word_add(k, &cs[j], r, i, nm, xs, part[j][r]));
    }
  for (uint32_t j = 0; j < n; j++)
    for (uint32_t r = 0; r < runs; r++)
      POOT_TRY(run_finish(k, &cs[j], r, nm, part[j][r], sx[r], inr, pacc, jobs[idx[j]].base));
  return NULL;
}

/* ------------------------------------------- medium: 8-bit x, dot4_i8 */

/* Whether chunk c's codes are summed unsigned and the bias taken off as
 * bias · Σ q̂ of the run (q4_0, q5_0, q6_k: a dot4_i8 of x̂ with ones per
 * word, once per run and row of x for all weight rows, where sign-extending
 * the codes costs four operations a word and weight row). */
static bool bias_by_sum(const gq_chunk *c) {
  return c->bias && c->width < 8;
}

/* Word i of run r of chunk c as four bytes for dot4_i8: the field masked
 * into each byte (unsigned codes, below 64: bias_by_sum subtracts the bias
 * later); q8_0's codes (width 8, stored with 0x80 flipped for the float
 * form) flipped back into signed bytes. */
static poot_status code_bytes(pc_kctx *k, const gq_chunk *c, uint32_t r, uint32_t i,
                              poot_kir_value *out) {
  uint32_t w = c->width, rep = 0x01010101u, mask = ((1u << w) - 1u) * rep;
  poot_kir_value t = c->w[r][i];
  if (c->bit[r][i]) POOT_TRY(poot__cc_bin_c(k, OP(SHR), t, c->bit[r][i], &t));
  if (w < 8) POOT_TRY(poot__cc_bin_c(k, OP(AND), t, mask, &t));
  if (c->bias && w == 8) POOT_TRY(poot__cc_bin_c(k, OP(XOR), t, c->bias * rep, &t));
  if (c->bias && w < 8 && c->bias >= 128)
    return poot_status_make(POOT_INTERNAL, "compile: gemv medium code bias %u of width %u", c->bias,
                            w);
  *out = t;
  return NULL;
}

/* Where x̂ of a chunk starts: its block index (base / 32) and its word
 * (base / 4 + 4 (base / 64)). When base is a multiple of 64 (every format
 * but q6_k) a run's block and words are these plus constants. */
typedef struct xq_at {
  poot_kir_value blk, word;
  bool aligned;
} xq_at;

static poot_status xq_base(pc_kctx *k, poot_dtype dt, poot_kir_value base, xq_at *at) {
  at->aligned = dt != POOT_DTYPE_Q6_K;
  poot_kir_value g;
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), base, 5, &at->blk));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), base, 6, &g));
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), g, 4, &g));
  POOT_TRY(poot__cc_bin_c(k, OP(SHR), base, 2, &at->word));
  return poot__cc_bin(k, OP(ADD), at->word, g, &at->word);
}

/* The n / 4 words of x̂ (four int8 codes each) of row m from element
 * base + off (off a multiple of 16; a run never crosses 64 elements), as
 * 16-byte loads, and the f32 scale d of its 32-element block. */
static poot_status xq_run(pc_kctx *k, const gemv_xtile *xt, uint32_t m, poot_kir_value base,
                          const xq_at *xa, uint32_t off, uint32_t n, poot_kir_value *xw,
                          poot_kir_value *d) {
  poot_kir_value blk, at;
  if (xa->aligned) {
    uint32_t cb = off / 32 + m * xt->runs, cw = off / 4 + 4 * (off / 64) + m * xt->qpitch;
    blk = xa->blk, at = xa->word;
    if (cb) POOT_TRY(poot__cc_bin_c(k, OP(ADD), xa->blk, cb, &blk));
    if (cw) POOT_TRY(poot__cc_bin_c(k, OP(ADD), xa->word, cw, &at));
  } else {
    poot_kir_value e, g;
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), base, off, &e));
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, 5, &blk));
    if (m) POOT_TRY(poot__cc_bin_c(k, OP(ADD), blk, m * xt->runs, &blk));
    /* word of element e: e / 4 + 4 (e / 64) */
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, 6, &g));
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), g, 4, &g));
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), e, 2, &at));
    POOT_TRY(poot__cc_bin(k, OP(ADD), at, g, &at));
    if (m) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, m * xt->qpitch, &at));
  }
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->dsh, blk, 1, d));
  for (uint32_t i = 0; i < n / 4; i += 4) {
    poot_kir_value a = at, v;
    if (i) POOT_TRY(poot__cc_bin_c(k, OP(ADD), at, i, &a));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, xt->qsh, a, 4, &v));
    for (uint32_t l = 0; l < 4; l++) POOT_TRY(poot_kir_extract(k->b, v, l, &xw[i + l]));
  }
  return NULL;
}

/* The jobs of format dt, on x̂: per run, S = Σ q·q̂ in i32 (dot4_i8, exact;
 * biased 4-6-bit codes as Σ code·q̂ − bias · Σ q̂),
 * then acc += scale · (d · S) (+ min · Σ x̂ of the run, staged as d · Σ q̂). */
static poot_status format_jobs_q8(pc_kctx *k, const gemv_xtile *xt, uint32_t nm, poot_kir_value ch,
                                  poot_dtype dt, const gq_job *jobs, uint32_t nj,
                                  poot_kir_value inr, uint32_t pacc) {
  gq_chunk cs[2 * PG_MAX_ROOTS];
  uint32_t idx[2 * PG_MAX_ROOTS], n = 0;
  bool mins = false;
  POOT_TRY(decode_jobs(k, dt, ch, jobs, nj, cs, idx, &n, &mins));
  poot_kir_value base, zero;
  xq_at xa;
  POOT_TRY(chunk_base(k, dt, ch, &base));
  POOT_TRY(xq_base(k, dt, base, &xa));
  POOT_TRY(poot__cc_i32(k, 0, &zero));
  poot_kir_value sx[GQ_MAX_RUNS][GEMV_MAX_M];
  if (mins) POOT_TRY(run_sums(k, xt, nm, base, &cs[0], sx));
  bool bsum = bias_by_sum(&cs[0]);
  poot_kir_value ones = 0;
  if (bsum) POOT_TRY(poot__cc_i32(k, 0x01010101, &ones));
  for (uint32_t r = 0; r < cs[0].runs; r++) {
    poot_kir_value qw[2 * PG_MAX_ROOTS][8];
    for (uint32_t j = 0; j < n; j++)
      for (uint32_t i = 0; i < cs[j].n / 4; i++) POOT_TRY(code_bytes(k, &cs[j], r, i, &qw[j][i]));
    for (uint32_t m = 0; m < nm; m++) {
      poot_kir_value xw[8], d, bq = 0;
      POOT_TRY(xq_run(k, xt, m, base, &xa, cs[0].off[r], cs[0].n, xw, &d));
      if (bsum) { /* bias · Σ q̂ over the run */
        bq = zero;
        for (uint32_t i = 0; i < cs[0].n / 4; i++)
          POOT_TRY(poot_kir_dot4_i8(k->b, ones, xw[i], bq, &bq));
        POOT_TRY(poot__cc_bin_c(k, OP(MUL), bq, cs[0].bias, &bq));
      }
      for (uint32_t j = 0; j < n; j++) {
        poot_kir_value sum = zero, sf, a, p;
        for (uint32_t i = 0; i < cs[j].n / 4; i++)
          POOT_TRY(poot_kir_dot4_i8(k->b, qw[j][i], xw[i], sum, &sum));
        if (bq) POOT_TRY(poot__cc_bin(k, OP(SUB), sum, bq, &sum));
        POOT_TRY(poot__cc_cvt(k, S(F32), sum, &sf));
        POOT_TRY(poot__cc_bin(k, OP(MUL), d, sf, &p));
        POOT_TRY(poot__cc_bin(k, OP(MUL), cs[j].scale[r], p, &p));
        if (cs[j].minv[r]) POOT_TRY(poot_kir_fma(k->b, cs[j].minv[r], sx[r][m], p, &p));
        if (inr) {
          poot_kir_value z;
          POOT_TRY(poot__cc_cf32(k, 0.0f, &z));
          POOT_TRY(poot__cc_sel(k, inr, p, z, &p));
        }
        uint32_t at = jobs[idx[j]].base + m;
        POOT_TRY(poot_kir_priv_load(k->b, pacc, at, &a));
        POOT_TRY(poot__cc_bin(k, OP(ADD), a, p, &a));
        POOT_TRY(poot_kir_priv_store(k->b, pacc, at, a));
      }
    }
  }
  return NULL;
}

poot_status poot__gq_accumulate(pc_kctx *k, const gemv_xtile *xt, uint32_t nm, poot_kir_value ch,
                                const gq_job *jobs, uint32_t nj, poot_kir_value inr,
                                uint32_t pacc) {
  for (uint32_t i = 0; i < nj; i++) {
    bool seen = false;
    for (uint32_t p = 0; p < i; p++) seen = seen || jobs[p].dt == jobs[i].dt;
    if (seen) continue;
    if (xt->q8)
      POOT_TRY(format_jobs_q8(k, xt, nm, ch, jobs[i].dt, jobs, nj, inr, pacc));
    else
      POOT_TRY(format_jobs(k, xt, nm, ch, jobs[i].dt, jobs, nj, inr, pacc));
  }
  return NULL;
}
