/* templates/kv_quant.c — the q8_0 K/V write (docs/compiler.md "The q8_0
 * K/V cache"): a step's fresh K or V rows (f32) quantized as GGUF's q8_0
 * blocks and stored into the state in place, by the dynamic_update_slice
 * (contiguous cache) and scatter_update (paged pool) templates.
 *
 * A q8_0 block is 34 bytes (an f16 scale, 32 int8), so blocks straddle
 * 32-bit words; a pair of blocks is 68 bytes, 17 whole words. One thread
 * quantizes 64 consecutive elements of the state (two blocks) and writes
 * their 17 words, so no two threads share a word. That needs each
 * contiguous run the write covers (a token's Hkv · head_dim elements) to be
 * whole pairs: Hkv · head_dim a multiple of 64, which every model with an
 * even number of K/V heads or head_dim 64, 128, 256 has; another is refused
 * (UNSUPPORTED, naming it).
 *
 * The arithmetic is the oracle's (poot_quant_quantize_q8_0, quantize in
 * poot/graph.h): amax = the largest |x| (NaN never replaces it), d = amax /
 * 127 in f32, id = d == 0 ? 0 : 1 / d, q = round(x · id) half away from
 * zero, clamped to [-128, 127] (NaN and out-of-range: -128); d stored as
 * f16 (round to nearest even). */
#include <string.h>

#include "../compile_impl.h"
#include "poot/quant.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

bool poot__cc_q8_run_ok(const poot_type *state, uint32_t from) {
  if (state->dtype != POOT_DTYPE_Q8_0) return false;
  int64_t run = 1;
  for (uint32_t i = from; i < state->shape.rank; i++) run *= state->shape.dims[i];
  return from < state->shape.rank && run % PC_Q8_PAIR == 0;
}

poot_status poot__cc_q8_refuse(const poot_type *state) {
  int64_t r = state->shape.rank >= 2 ? state->shape.dims[state->shape.rank - 2] : 1;
  return poot_status_make(POOT_UNSUPPORTED,
                          "compile: a q8_0 K/V state is written in place, two blocks (64 "
                          "elements) a thread; its token rows of %lld x %lld elements (Hkv x "
                          "head_dim) are not a multiple of 64 (use --kv-type f16 for this model)",
                          (long long)r, (long long)state->shape.dims[state->shape.rank - 1]);
}

poot_status poot__cc_q8_pair_values(pc_kctx *k, poot_value upd, const poot_kir_value *const uidx[2],
                                    uint32_t rank, poot_kir_value vals[PC_Q8_PAIR]) {
  poot_kir_value idx[PC_MAX_DIMS];
  bool saved = k->prequant;
  k->prequant = true;
  poot_status st = NULL;
  for (uint32_t j = 0; j < PC_Q8_PAIR && !st; j++) {
    const poot_kir_value *u = uidx[j / 32];
    if (j % 32 == 0) memcpy(idx, u, sizeof(poot_kir_value) * rank);
    if (j % 32) st = poot__cc_bin_c(k, OP(ADD), u[rank - 1], j % 32, &idx[rank - 1]);
    if (!st) st = poot__cc_emit(k, upd, idx, &vals[j]);
  }
  k->prequant = saved;
  return st;
}

/* One block: the f16 scale's bits (u32) and the 32 quants as bytes (u32,
 * 0..255), as poot_quant_quantize_q8_0 computes them. */
static poot_status quantize_block(pc_kctx *k, const poot_kir_value *x, poot_kir_value *out_d,
                                  poot_kir_value *out_q) {
  poot_kir_value amax, zero, c127, d, id, one, dz;
  POOT_TRY(poot__cc_cf32(k, 0.0f, &zero));
  amax = zero;
  for (uint32_t j = 0; j < 32; j++) {
    poot_kir_value a, gt;
    POOT_TRY(poot__cc_un(k, OP(ABS), x[j], &a));
    POOT_TRY(poot__cc_bin(k, OP(GT), a, amax, &gt));
    POOT_TRY(poot__cc_sel(k, gt, a, amax, &amax));
  }
  POOT_TRY(poot__cc_cf32(k, 127.0f, &c127));
  POOT_TRY(poot__cc_bin(k, OP(DIV), amax, c127, &d));
  POOT_TRY(poot__cc_cf32(k, 1.0f, &one));
  POOT_TRY(poot__cc_bin(k, OP(DIV), one, d, &id));
  POOT_TRY(poot__cc_bin(k, OP(EQ), d, zero, &dz));
  POOT_TRY(poot__cc_sel(k, dz, zero, id, &id));
  POOT_TRY(poot__cc_to_bits(k, d, POOT_DTYPE_F16, out_d));
  poot_kir_value lo, hi, m128, p127;
  POOT_TRY(poot__cc_cf32(k, -1e9f, &lo));
  POOT_TRY(poot__cc_cf32(k, 1e9f, &hi));
  POOT_TRY(poot__cc_i32(k, -128, &m128));
  POOT_TRY(poot__cc_i32(k, 127, &p127));
  for (uint32_t j = 0; j < 32; j++) {
    poot_kir_value v, r, a, b, ok, i;
    POOT_TRY(poot__cc_bin(k, OP(MUL), x[j], id, &v));
    POOT_TRY(poot__cc_roundf(k, v, &r));
    POOT_TRY(poot__cc_bin(k, OP(GT), r, lo, &a));
    POOT_TRY(poot__cc_bin(k, OP(LT), r, hi, &b));
    POOT_TRY(poot__cc_bin(k, OP(AND), a, b, &ok));
    POOT_TRY(poot__cc_sel(k, ok, r, zero, &r));
    POOT_TRY(poot__cc_cvt(k, S(I32), r, &i)); /* |r| < 1e9: truncation is exact */
    POOT_TRY(poot__cc_sel(k, ok, i, m128, &i));
    POOT_TRY(poot__cc_bin(k, OP(MAX), i, m128, &i));
    POOT_TRY(poot__cc_bin(k, OP(MIN), i, p127, &i));
    POOT_TRY(poot__cc_bcast(k, S(U32), i, &i));
    POOT_TRY(poot__cc_bin_c(k, OP(AND), i, 0xff, &out_q[j]));
  }
  k->flops += 32 * 6;
  return NULL;
}

poot_status poot__cc_q8_pair_store(pc_kctx *k, uint32_t buffer, poot_kir_value pair,
                                   const poot_kir_value vals[PC_Q8_PAIR]) {
  /* The 68 bytes of the two blocks: d (2 bytes), qs (32), d, qs. */
  poot_kir_value bytes[2 * POOT_QUANT_Q8_0_BYTES];
  for (uint32_t b = 0; b < 2; b++) {
    poot_kir_value dbits, *p = bytes + b * POOT_QUANT_Q8_0_BYTES;
    POOT_TRY(quantize_block(k, vals + 32 * b, &dbits, p + 2));
    POOT_TRY(poot__cc_bin_c(k, OP(AND), dbits, 0xff, &p[0]));
    POOT_TRY(poot__cc_bin_c(k, OP(SHR), dbits, 8, &p[1]));
  }
  uint32_t ref;
  POOT_TRY(poot__cc_binding_of(k, buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  poot_kir_value base;
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), pair, PC_Q8_PAIR_WORDS, &base));
  for (uint32_t w = 0; w < PC_Q8_PAIR_WORDS; w++) {
    poot_kir_value word = bytes[4 * w], sh, at;
    for (uint32_t i = 1; i < 4; i++) {
      POOT_TRY(poot__cc_bin_c(k, OP(SHL), bytes[4 * w + i], 8 * i, &sh));
      POOT_TRY(poot__cc_bin(k, OP(OR), word, sh, &word));
    }
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), base, w, &at));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, at, word));
  }
  k->bytes += 2 * POOT_QUANT_Q8_0_BYTES;
  return NULL;
}
