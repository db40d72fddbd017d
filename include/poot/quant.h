/* poot/quant.h — the GGUF block codecs (part of the graph layer).
 *
 * The packed weight formats of DESIGN §3 (q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k
 * q4_k q5_k q6_k q8_k), byte for byte as GGUF and ggml define them. They live in the
 * graph layer so that both the oracle (eval) and the model-loading layer
 * (llm, which may not use eval) can decode and encode them.
 *
 * Every function works on whole blocks: `n_blocks` consecutive blocks of the
 * format at `src`, little-endian, unaligned access is fine. Dequantization
 * writes n_blocks * block_elems floats; quantization reads that many floats
 * and writes n_blocks * block_bytes bytes. These per-format calls cannot fail
 * and never allocate; the caller sizes both buffers.
 *
 * Float rules (docs/eval.md): every scale is an IEEE binary16 value decoded
 * with poot_f16_to_f32 (q8_k: a binary32 value); each product and sum is one
 * correctly rounded f32 operation in the order written for each format below,
 * never contracted into a fused multiply-add, so results are bit-identical to
 * the `gguf` Python package's numpy routines and to ggml's reference C.
 *
 * Thread safety: all functions are pure. */
#ifndef POOT_QUANT_H
#define POOT_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per block: 32 for the legacy formats, 256 for the k-quants. */
#define POOT_QUANT_QK 32
#define POOT_QUANT_QK_K 256

/* Bytes per block. */
#define POOT_QUANT_Q8_0_BYTES 34  /* f16 d; i8 qs[32] */
#define POOT_QUANT_Q4_0_BYTES 18  /* f16 d; u8 qs[16] */
#define POOT_QUANT_Q4_1_BYTES 20  /* f16 d, m; u8 qs[16] */
#define POOT_QUANT_Q5_0_BYTES 22  /* f16 d; u32 qh; u8 qs[16] */
#define POOT_QUANT_Q5_1_BYTES 24  /* f16 d, m; u32 qh; u8 qs[16] */
#define POOT_QUANT_Q2_K_BYTES 84  /* u8 scales[16]; u8 qs[64]; f16 d, dmin */
#define POOT_QUANT_Q3_K_BYTES 110 /* u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d */
#define POOT_QUANT_Q4_K_BYTES 144 /* f16 d, dmin; u8 scales[12]; u8 qs[128] */
#define POOT_QUANT_Q5_K_BYTES 176 /* f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128] */
#define POOT_QUANT_Q6_K_BYTES 210 /* u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d */
#define POOT_QUANT_Q8_K_BYTES 292 /* f32 d; i8 qs[256]; i16 bsums[16] */

/* ------------------------------------------------------------ dequantize */

/* q8_0:  y[j] = q[j] * d                                                 */
void poot_quant_dequantize_q8_0(const void *src, float *dst, size_t n_blocks);
/* q4_0:  y[j] = d * (q[j] - 8); q[j] = qs[j] & 15, q[j+16] = qs[j] >> 4    */
void poot_quant_dequantize_q4_0(const void *src, float *dst, size_t n_blocks);
/* q4_1:  y[j] = (d * q[j]) + m                                            */
void poot_quant_dequantize_q4_1(const void *src, float *dst, size_t n_blocks);
/* q5_0:  y[j] = d * (q[j] - 16); bit 4 of q[j] is bit j of qh             */
void poot_quant_dequantize_q5_0(const void *src, float *dst, size_t n_blocks);
/* q5_1:  y[j] = (d * q[j]) + m                                            */
void poot_quant_dequantize_q5_1(const void *src, float *dst, size_t n_blocks);
/* q2_k:  16-element group g: y = ((d * (sc[g] & 15)) * q) - (dmin * (sc[g] >> 4));
 *        element 128h + 32s + l has q = bits 2s..2s+1 of qs[32h + l]     */
void poot_quant_dequantize_q2_k(const void *src, float *dst, size_t n_blocks);
/* q3_k:  16-element group g: y = (d * (sc6[g] - 32)) * (q - 4 * !hbit);
 *        q as q2_k, hbit = bit (e / 32) of hmask[e % 32]                 */
void poot_quant_dequantize_q3_k(const void *src, float *dst, size_t n_blocks);
/* q4_k:  sub-block s (32 elements): y = ((d * sc[s]) * q) - (dmin * mn[s]) */
void poot_quant_dequantize_q4_k(const void *src, float *dst, size_t n_blocks);
/* q5_k:  as q4_k with a fifth bit from qh                                 */
void poot_quant_dequantize_q5_k(const void *src, float *dst, size_t n_blocks);
/* q6_k:  16-element group g: y = (d * scales[g]) * (q - 32)               */
void poot_quant_dequantize_q6_k(const void *src, float *dst, size_t n_blocks);
/* q8_k:  y[j] = d * q[j]                                                  */
void poot_quant_dequantize_q8_k(const void *src, float *dst, size_t n_blocks);

/* -------------------------------------------------------------- quantize */

/* The reference quantizers of ggml (quantize_row_*_ref), as the `gguf`
 * package's numpy code computes them: the scale in f32, stored as f16 (round
 * to nearest even), the inverse scale 1/d (0 when d == 0), each code rounded
 * as ggml does (q8_0: half away from zero; q4/q5: truncation of x*id + 8.5,
 * 16.5 or 0.5, clamped). Non-finite inputs give unspecified (but defined,
 * non-crashing) codes. q8_k follows ggml's quantize_row_q8_K_ref (the gguf
 * package has no q8_k codec): iscale = -127/max, nearest-even codes, bsums,
 * d = 1/iscale stored as f32. */
void poot_quant_quantize_q8_0(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q4_0(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q4_1(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q5_0(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q5_1(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q8_k(const float *src, void *dst, size_t n_blocks);

/* poot's own k-quant quantizers (not ggml's search; docs/eval.md): per
 * sub-block (q4_k/q5_k: 32 elements, q6_k: 16) the range of its values,
 * [min(lo, 0), hi] for q4_k/q5_k and [lo, hi] for q6_k; the f16 super-scales
 * d (and dmin) are the smallest f16 values with which each sub-block's
 * 6-bit scale (q6_k: 7-bit, 0..127) and 6-bit min, rounded up, still reach
 * both ends; each code is the nearest for the f32 scale d1 = d * sc and min
 * m1 = dmin * mn that the dequantizer computes, so no value is clipped.
 * Bound, for finite inputs with |x| ≤ 2^21 (where d stays a finite f16), per
 * element of a sub-block with effective scale d1 and min m1 (0 for q6_k):
 *   |x − deq(q(x))| ≤ d1/2 + 2^-21 (|x| + m1 + 32 d1)
 * and d1 ≤ need + d, need = (hi + m1)/15 (q5_k: /31; q6_k:
 * max(hi/31, −lo/32)), d ≤ max(need)/63 (q6_k: /127) rounded up to f16.
 * Non-finite inputs give defined codes. */
void poot_quant_quantize_q4_k(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q5_k(const float *src, void *dst, size_t n_blocks);
void poot_quant_quantize_q6_k(const float *src, void *dst, size_t n_blocks);

/* ------------------------------------------------------ format descriptors */

/* One packed format: its name as GGUF spells it in lower case ("q4_k"), its
 * GGML type id, its geometry and its codecs (quantize is NULL for q2_k and
 * q3_k, which poot reads but does not write). */
typedef struct poot_quant_format {
  const char *name;
  uint32_t ggml_type; /* GGML's type id: q4_0 = 2 … q2_k = 10 … q8_k = 15 */
  uint32_t block_elems;
  uint32_t block_bytes;
  void (*dequantize)(const void *src, float *dst, size_t n_blocks);
  void (*quantize)(const float *src, void *dst, size_t n_blocks); /* may be NULL */
} poot_quant_format;

/* The table of every packed format, in GGML type-id order; *out_count is set
 * to its length. The table is static and never changes. */
const poot_quant_format *poot_quant_formats(size_t *out_count);
/* Looks a format up by name ("q8_0", case-insensitive) or GGML type id;
 * NULL when unknown. */
const poot_quant_format *poot_quant_format_by_name(const char *name);
const poot_quant_format *poot_quant_format_by_ggml_type(uint32_t ggml_type);
/* The format of a packed poot dtype (POOT_DTYPE_Q8_0 …); NULL for a plain
 * dtype. */
const poot_quant_format *poot_quant_format_of_dtype(poot_dtype dtype);

/* Checked whole-row helpers: INVALID_ARGUMENT when `n_elements` is not a
 * multiple of the block size or `src_bytes`/`dst_bytes` does not match the
 * element count; UNSUPPORTED when the format has no quantizer. */
POOT_MUST_USE poot_status poot_quant_dequantize_row(const poot_quant_format *format,
                                                    const void *src, size_t src_bytes,
                                                    float *dst, size_t n_elements);
POOT_MUST_USE poot_status poot_quant_quantize_row(const poot_quant_format *format,
                                                  const float *src, size_t n_elements,
                                                  void *dst, size_t dst_bytes);

#ifdef __cplusplus
}
#endif

#endif /* POOT_QUANT_H */
