/* gemv_blocks.h — internal to the GEMV template (gemv.c, gemv_blocks.c): the
 * chunks of the GGUF block formats it streams and their decoders.
 *
 * A lane's chunk of a block-format weight row is always 64 elements: a pair
 * of 32-element blocks (q8_0, q4_0, q4_1, q5_0, q5_1), or a quarter of a
 * 256-element k-quant block with the block's header (q4_k, q5_k: one 32-byte
 * qs group, the two sub-blocks it holds; q6_k: the elements of one half and
 * one 16-element lane range, whose ql, qh and scale bytes are all its own). */
#ifndef POOT_COMPILE_TEMPLATES_GEMV_BLOCKS_H
#define POOT_COMPILE_TEMPLATES_GEMV_BLOCKS_H

#include "../compile_impl.h"

#define GEMV_MAX_M 8
#define GQ_MAX_WORDS 20 /* weight words of one chunk, at most (q5_k, q6_k) */
#define GQ_CHUNK 64     /* elements of one chunk */

/* The staged x tile in shared memory: row m's element c (tile-relative) at
 * m * pitch + c + 4 * (c / 32). */
typedef struct gemv_xtile {
  uint32_t sh;    /* the shared array */
  uint32_t pitch; /* floats per row of x */
  bool sums;      /* run sums staged too: Σ x over each aligned 32 elements */
  uint32_t ssh;   /* their shared array: row m's run s at m * runs + s */
  uint32_t runs;  /* run sums per row of x */
  /* Medium precision (docs/compiler.md "The decode GEMV at medium"): x̂, x
   * rounded to int8 per aligned 32 elements, beside the f32 tile: row m's
   * element c in byte c % 4 of word m * qpitch + c / 4 + 4 (c / 64); the
   * block's scale d at dsh[m * runs + c / 32]; the run sums (ssh) are then
   * d · Σ q̂, the sums of x̂. */
  bool q8;
  uint32_t qsh, qpitch, dsh;
} gemv_xtile;

/* x[m, c0 + first + e] for e in [0, count) (count ≤ 32, a multiple of 4; c0 a
 * multiple of 4), every row m < nm, from the staged tile. (gemv.c) */
POOT_MUST_USE poot_status poot__gemv_x_run(pc_kctx *k, const gemv_xtile *xt, uint32_t nm,
                                           poot_kir_value c0, uint32_t first, uint32_t count,
                                           poot_kir_value xs[][GEMV_MAX_M]);
/* The low f16 half of word w as f32. (gemv.c) */
POOT_MUST_USE poot_status poot__gemv_f16_lo(pc_kctx *k, poot_kir_value w, poot_kir_value *out);

/* Words of one chunk of block format dt; 0 when the template does not read
 * dt as blocks. */
uint32_t poot__gq_words(poot_dtype dt);
/* Whether dt's runs have mins (min · Σ x per 32 elements: q4_1, q5_1, q4_k,
 * q5_k), so that the staged tile carries the run sums of x. */
bool poot__gq_has_mins(poot_dtype dt);
/* Whether dt is a 256-element k-quant (its tiles of K are whole blocks). */
bool poot__gq_is_k(poot_dtype dt);

/* Loads chunk ch (a global chunk index) of row `row` of the [N, kk] weight of
 * format dt bound at ref into wd[0 .. poot__gq_words(dt)). */
POOT_MUST_USE poot_status poot__gq_load(pc_kctx *k, poot_dtype dt, uint32_t ref, int64_t kk,
                                        poot_kir_value row, poot_kir_value ch, poot_kir_value *wd);

/* The 64 values of one decoded chunk, as the emitter's dequantization
 * computes them (scale · q, plus the run's min term: the product is exact,
 * so one rounding, the emitter's): run r's element e is v[r · n + e], at
 * element base + off[r] + e of the weight row. */
typedef struct gq_values {
  poot_kir_value base;
  uint32_t runs, n, off[4];
  poot_kir_value v[GQ_CHUNK];
} gq_values;

/* Decodes chunk ch (wd as poot__gq_load loaded it) of format dt into its
 * values. */
POOT_MUST_USE poot_status poot__gq_values(pc_kctx *k, poot_dtype dt, const poot_kir_value *wd,
                                          poot_kir_value ch, gq_values *out);

/* One chunk to accumulate: its format, its loaded words, and the private
 * accumulators acc[base .. base + nm) it adds to. */
typedef struct gq_job {
  poot_dtype dt;
  const poot_kir_value *wd;
  uint32_t base;
} gq_job;

/* Adds the chunks jobs[0 .. nj) (all at tile-relative chunk index ch, each
 * a row × root of the same chunk position) to their accumulators:
 * acc[m] += Σ_runs scale · Σ q·x + min · Σ x, kept only where inr holds
 * (0: always). Jobs of one format share each run's x loads and Σ x. */
POOT_MUST_USE poot_status poot__gq_accumulate(pc_kctx *k, const gemv_xtile *xt, uint32_t nm,
                                              poot_kir_value ch, const gq_job *jobs, uint32_t nj,
                                              poot_kir_value inr, uint32_t pacc);

#endif
