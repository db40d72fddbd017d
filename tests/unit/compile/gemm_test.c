/* gemm_test.c — the tiled GEMM template of prefill (templates/gemm.c) on the
 * KIR interpreter against poot_eval, at subgroup sizes 8, 32 and 64 and
 * without subgroups: every weight format through its inline convert or
 * dequantize, rows and columns that are not whole 64-tiles, contraction
 * lengths that are not whole 16-steps, several tiles each way, and the FFN of
 * a decoder layer (an RMSNorm'd x shared by gate and up, SwiGLU, then the
 * down projection with the residual added). The plan's dispatch names say
 * which template ran. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot/quant.h"
#include "poot_test.h"

#define B(x) POOT_ASSERT_OK(x)

static const uint32_t sgs[] = {8, 32, 64, 0};

static void profile(int i, poot_kir_target *t) {
  poot_kir_target_init_interp(t, sgs[i] ? sgs[i] : 32);
  if (i == 1) t->shared_memory_bytes = 48 * 1024;
  if (i == 3) {
    t->subgroup_ops = false;
    t->subgroup_size = 0;
  }
}

/* The PTX targets with matrix fragments, run on the interpreter (which runs
 * mma exactly on the fragments' layout). */
static const char *const ptx_targets[] = {"sm_80", "sm_90"};

/* Every profile: the template runs (or not) and the outputs match; the
 * matrix-fragment form runs exactly where mma is expected (the profiles at
 * subgroup 32 and the PTX targets, K ≥ 1024) and nowhere else. */
static void check(poot_graph *g, int64_t k, bool want, const char *what) {
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  bool mma = want && k >= 1024;
  for (int i = 0; i < 6; i++) {
    /* long contractions: the scalar form's other profiles are covered by
     * the short cases */
    if (k >= 1024 && (i == 2 || i == 3)) continue;
    poot_kir_target t;
    if (i < 4)
      profile(i, &t);
    else
      B(poot_device_target_by_name(ptx_targets[i - 4], &t));
    uint32_t sg = i < 4 && sgs[i] ? sgs[i] : 32;
    bool want_mma = mma && sg == 32 && i != 3;
    if (pt_uses_template(g, &t, "gemm_mma") != want_mma)
      fail_msg("%s profile %d: the mma form %s", what, i, want_mma ? "not used" : "used");
    char why[512];
    if (!pt_check_projection(g, &in, &t, sg, k, "gemm", want, what, why, sizeof why))
      fail_msg("profile %d: %s", i, why);
  }
  pt_inputs_free(&in);
}

static void one(poot_dtype wt, int64_t m, int64_t n, int64_t k, bool want) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  char what[64];
  snprintf(what, sizeof what, "gemm %s [%lld,%lld]x[%lld,%lld]", poot_dtype_name(wt), (long long)m,
           (long long)k, (long long)n, (long long)k);
  check(g, k, want, what);
  /* f16 and bf16 weights with rows of whole 16-byte copies: the raw path */
  bool raw = want && k >= 1024 && k % 8 == 0 && (wt == POOT_DTYPE_F16 || wt == POOT_DTYPE_BF16);
  for (int i = 0; i < 2; i++) {
    poot_kir_target t;
    B(poot_device_target_by_name(ptx_targets[i], &t));
    if (pt_uses_template(g, &t, "raw") != raw)
      fail_msg("%s %s: the raw path %s", what, ptx_targets[i], raw ? "not used" : "used");
  }
  poot_graph_destroy(g);
}

static void test_formats(void **state) {
  (void)state;
  one(POOT_DTYPE_F32, 9, 3, 40, true);    /* past the GEMV's 8 rows; K not whole steps */
  one(POOT_DTYPE_F16, 70, 130, 96, true); /* 2 x 3 tiles, both ragged */
  one(POOT_DTYPE_BF16, 64, 64, 64, true); /* exactly one tile */
  one(POOT_DTYPE_Q8_0, 33, 65, 128, true);
  one(POOT_DTYPE_Q4_0, 9, 70, 256, true);
  one(POOT_DTYPE_Q4_K, 10, 5, 256, true); /* any format the emitter reads */
  one(POOT_DTYPE_F16, 4, 5, 64, false);   /* four rows or fewer: never (5 to 8: where the
                                           * GEMV declines, as without subgroups) */
}

/* The matrix-fragment form (K ≥ 1024): ragged tiles each way and K not
 * whole 32-steps, several fragments per warp, every weight path. The
 * inputs are random f32 values (x never bf16-representable), so the
 * results need the lo halves of the 3 x bf16 split (hi alone fails the
 * first case, by 1.3x: random rounding errors mostly cancel; test_split is
 * the sharp check). */
static void test_mma(void **state) {
  (void)state;
  one(POOT_DTYPE_F16, 70, 130, 1040, true); /* 2 x 3 tiles, K % 32 = 16 */
  one(POOT_DTYPE_F32, 64, 64, 1024, true);  /* exactly one tile */
  one(POOT_DTYPE_BF16, 9, 9, 1055, true);   /* the fewest rows past the GEMV's; K odd */
  one(POOT_DTYPE_BF16, 20, 72, 1064, true); /* raw, K % 32 = 8: a step of one live copy */
  one(POOT_DTYPE_F16, 32, 130, 1040, true); /* the skinny tile's most rows, 3 tiles */
  one(POOT_DTYPE_F16, 17, 64, 2048, true);  /* skinny, split over K in 8 */
  one(POOT_DTYPE_Q8_0, 33, 65, 1024, true);
  one(POOT_DTYPE_Q4_0, 9, 70, 1024, true);
  one(POOT_DTYPE_Q4_K, 10, 5, 1024, true);
  one(POOT_DTYPE_F16, 70, 130, 1008, true); /* just short of the mma form: scalar */
}

/* The FFN of a decoder layer over 20 positions. */
static void test_ffn(void **state) {
  (void)state;
  for (int q = 0; q < 2; q++) {
    poot_graph *g;
    B(poot_graph_create(&g));
    int64_t m = 20, h = 128, ff = 160;
    poot_dtype wt = q ? POOT_DTYPE_Q4_0 : POOT_DTYPE_F16;
    B(pt_ffn_graph(g, m, h, ff, wt));
    check(g, ff, true, q ? "ffn q4_0 m=20" : "ffn f16 m=20");
    poot_graph_destroy(g);
  }
}

/* The 3 x bf16 split without cancellation: x = 1 + 3·2^-10 and
 * W = 1 + 5·2^-11 everywhere (neither bf16-representable, both lo halves
 * exact), so every output is K·x·W up to the dropped xl·wl (7e-6
 * relative). Without x's lo half (or W's) every product is off by 2.9e-3
 * (2.4e-3) relative, 6x (5x) the tolerance; swapped or misplaced halves
 * fail likewise. */
static void test_split(void **state) {
  (void)state;
  const int64_t m = 9, n = 16, k = 1024;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", POOT_DTYPE_F32, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  for (size_t i = 0; i < in.count; i++) {
    float v = strcmp(in.names[i], "x") == 0 ? 1.0f + 3.0f / 1024 : 1.0f + 5.0f / 2048;
    float *d = in.tensors[i].data;
    for (int64_t e = 0; e < (strcmp(in.names[i], "x") == 0 ? m : n) * k; e++) d[e] = v;
  }
  for (int i = 0; i < 2; i++) {
    poot_kir_target t;
    B(poot_device_target_by_name(ptx_targets[i], &t));
    assert_true(pt_uses_template(g, &t, "gemm_mma"));
    pt_result r;
    B(pt_check(g, &t, &in, 32, false, (double)k * 4.8e-7 + 1e-6, &r));
    if (!r.ok) fail_msg("split %s: %s", ptx_targets[i], r.what);
    printf("split %s: max error %.3g (allowed %.3g)\n", ptx_targets[i], r.max_err, r.max_allowed);
  }
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* The FFN at K = 1024 both ways: SwiGLU's gate and up sharing x, then the
 * down projection with the residual, all on the matrix-fragment form (and
 * split over K: test_split_k). */
static void test_ffn_mma(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  B(pt_ffn_graph(g, 20, 1024, 1024, POOT_DTYPE_Q4_0));
  check(g, 1024, true, "ffn q4_0 m=20 h=ff=1024");
  /* 20 rows, one tile of 64 x 64 per projection: split-K in 4 (the SwiGLU
   * pair sharing x; the residual in the combine) */
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  assert_true(pt_uses_template(g, &t, "gemm_mma split"));
  assert_true(pt_uses_template(g, &t, "gemm_combine"));
  poot_graph_destroy(g);
  /* f16 weights: the raw path, the SwiGLU pair's two rings, split-K; bf16
   * at h = 1040: the pair unsplit (K % 64 != 0) with a ragged last step,
   * the down projection split */
  for (int b = 0; b < 2; b++) {
    const int64_t h = b ? 1040 : 1024;
    B(poot_graph_create(&g));
    B(pt_ffn_graph(g, 20, h, 1024, b ? POOT_DTYPE_BF16 : POOT_DTYPE_F16));
    B(poot_graph_verify(g));
    assert_true(pt_uses_template(g, &t, "gemm_mma split raw"));
    if (b) assert_true(pt_uses_template(g, &t, "gemm_mma raw"));
    pt_inputs in;
    B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
    char why[512];
    if (!pt_check_projection(g, &in, &t, 32, h, "gemm", true,
                             b ? "ffn bf16 m=20 h=1040 ff=1024" : "ffn f16 m=20 h=ff=1024", why,
                             sizeof why))
      fail_msg("%s", why);
    pt_inputs_free(&in);
    poot_graph_destroy(g);
  }
}

/* MEDIUM precision (docs/compiler.md, "Numerics"): x rounded once to the
 * weight's 16-bit type (f16 for dequantized weights, which are rounded to
 * f16 too), one mma per fragment pair. Per output the bound is
 *   Σ_c ((u_x·|x_c| + η)·(1 + u_w) + u_w·|x_c|)·|w_c|
 *   + ((K/16)·(1 + u_x)(1 + u_w)·(1 + 17·2^-29) + K)·2^-24·Σ_c |x_c·w_c|
 * (u_x = 2^-11 for f16, 2^-8 for bf16; η = 2^-25 where x is f16 (its
 * subnormals' half step), u_w = 2^-11 for a dequantized weight, else 0; the
 * K/16 mma roundings against the oracle's K sequential ones, the
 * interpreter's double sum of 17 terms), evaluated from the inputs; the
 * test allows its largest value (pt_check's tolerance is relative to the
 * largest output: divided by a lower bound of the oracle's). */
static void medium_one(poot_dtype wt, int64_t m, int64_t n, int64_t k, uint32_t min_grid,
                       const char *form) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  const float *xd = NULL;
  float *wd = poot_calloc((size_t)(n * k), sizeof *wd);
  assert_non_null(wd);
  for (size_t i = 0; i < in.count; i++) {
    const void *d = in.tensors[i].data;
    if (strcmp(in.names[i], "x") == 0) {
      xd = d;
    } else if (wt == POOT_DTYPE_Q8_0) {
      poot_quant_dequantize_q8_0(d, wd, (size_t)(n * k / 32));
    } else {
      const uint16_t *h = d;
      for (int64_t e = 0; e < n * k; e++)
        wd[e] = wt == POOT_DTYPE_BF16 ? poot_bf16_to_f32(h[e]) : poot_f16_to_f32(h[e]);
    }
  }
  assert_non_null(xd);
  const bool bf = wt == POOT_DTYPE_BF16;
  const double ux = bf ? 0x1p-8 : 0x1p-11, eta = bf ? 0 : 0x1p-25;
  const double uw = wt == POOT_DTYPE_Q8_0 ? 0x1p-11 : 0;
  const double acc =
      ((double)k / 16 * (1 + ux) * (1 + uw) * (1 + 17 * 0x1p-29) + (double)k) * 0x1p-24;
  double tol = 0, outmax = 0, summax = 0;
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n; c++) {
      double out = 0, sum = 0, rnd = 0;
      for (int64_t e = 0; e < k; e++) {
        double a = fabs((double)xd[r * k + e]), b = fabs((double)wd[c * k + e]);
        out += (double)xd[r * k + e] * (double)wd[c * k + e];
        sum += a * b;
        rnd += ((ux * a + eta) * (1 + uw) + uw * a) * b;
      }
      tol = fmax(tol, rnd + acc * sum);
      outmax = fmax(outmax, fabs(out));
      summax = fmax(summax, sum);
    }
  /* the oracle's largest output is at least outmax less its own rounding */
  const double tol_rel = tol / (outmax - (double)k * 0x1p-24 * summax);
  for (int i = 1; i < 2; i++) { /* sm_90 (sm_80: the render test and ptxas) */
    poot_kir_target t;
    B(poot_device_target_by_name(ptx_targets[i], &t));
    poot_compile_options o;
    poot_compile_options_init(&o);
    o.target = &t;
    o.matmul_precision = POOT_MATMUL_MEDIUM;
    o.gemm_wide_min_grid = min_grid;
    o.gemm_big_tiles = true;
    if (!pt_uses_template_opt(g, &o, form))
      fail_msg("medium %s [%lld]: %s not used", poot_dtype_name(wt), (long long)k, form);
    pt_result r;
    B(pt_check_opt(g, &o, &in, 32, false, tol_rel, &r));
    if (!r.ok) fail_msg("medium %s %s: %s", poot_dtype_name(wt), ptx_targets[i], r.what);
    printf("medium %s [%lld,%lld]x[%lld,%lld] %s: max error %.3g (allowed %.3g)\n",
           poot_dtype_name(wt), (long long)m, (long long)k, (long long)n, (long long)k,
           ptx_targets[i], r.max_err, r.max_allowed);
  }
  poot_free(wd);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_medium(void **state) {
  (void)state;
  /* 20 rows: the skinny tile (2 tiles, unsplit) */
  medium_one(POOT_DTYPE_F16, 20, 72, 1040, 0, "gemm_mma raw skinny medium");
  medium_one(POOT_DTYPE_BF16, 20, 72, 1064, 0, "gemm_mma raw skinny medium");
  medium_one(POOT_DTYPE_F16, 12, 40, 2048, 0, "gemm_mma split raw skinny medium");
  medium_one(POOT_DTYPE_Q8_0, 33, 65, 1024, 0, "gemm_mma split medium"); /* split-K */
  /* 2 wide tiles against 1 big: the wide one at a threshold of 2 */
  medium_one(POOT_DTYPE_BF16, 128, 72, 1064, 2, "gemm_mma raw wide medium");
  medium_one(POOT_DTYPE_F16, 136, 72, 1040, 1, "gemm_mma raw big medium"); /* ragged M, N */
}

/* Two projections of one x at one level (a layer's K and V): one batched
 * kernel, the second group reusing the first's shared arrays (their
 * workgroups are disjoint), split over K; their outputs concatenated. */
static void test_batched(void **state) {
  (void)state;
  const int64_t m = 20, k = 1024;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k);
  poot_value wk = pt_param(g, "wk", POOT_DTYPE_F16, 72, k);
  poot_value wv = pt_param(g, "wv", POOT_DTYPE_F16, 40, k);
  poot_value two[2] = {pt_dot_nt(g, x, wk), pt_dot_nt(g, x, wv)}, c;
  B(poot_graph_concat(g, 2, two, 1, &c));
  B(poot_graph_set_output(g, c));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  assert_true(pt_uses_template(g, &t, "gemm_mma split raw skinny + contract"));
  assert_false(pt_uses_template(g, &t, "gemm_x")); /* 20 rows: x with the emitter */
  pt_result r;
  B(pt_check(g, &t, &in, 32, false, (double)k * 4.8e-7 + 1e-6, &r));
  if (!r.ok) fail_msg("batched: %s", r.what);
  printf("batched K and V: max error %.3g (allowed %.3g)\n", r.max_err, r.max_allowed);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* One projection on a tile the grid threshold picks (gemm_wide_min_grid,
 * whose default asks for 256 workgroups) against poot_eval with the GEMM
 * tests' bound, on sm_90. */
static void tile_one(poot_dtype wt, int64_t m, int64_t n, int64_t k, uint32_t min_grid,
                     bool emitter, const char *form) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  o.gemm_x_emitter = emitter;
  o.shared_memory_static = true;                   /* the tile rules at 48 KiB */
  assert_false(pt_uses_template_opt(g, &o, form)); /* too few tiles for the default */
  o.gemm_wide_min_grid = min_grid;
  o.gemm_big_tiles = true;
  if (!pt_uses_template_opt(g, &o, form)) fail_msg("%s not used", form);
  pt_result r;
  B(pt_check_opt(g, &o, &in, 32, false, (double)k * 4.8e-7 + 1e-6, &r));
  if (!r.ok) fail_msg("%s: %s", form, r.what);
  printf("%s %s [%lld,%lld]x[%lld,%lld]: max error %.3g (allowed %.3g)\n", form,
         poot_dtype_name(wt), (long long)m, (long long)k, (long long)n, (long long)k, r.max_err,
         r.max_allowed);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* The wide tile (64 × 128) and the big one (128 × 128, x single
 * buffered at high precision): ragged M, N (a second tile of 8 columns)
 * and K. 130 × 136 is 6 wide tiles and 4 big ones: a threshold of 6 takes
 * the wide tile, 1 the big one. At high precision the big tile's ring has
 * no room for x's staged tiles: it is taken with x through the emitter
 * (gemm_x_emitter), and with x staged the wide tile is. */
static void test_wide(void **state) {
  (void)state;
  tile_one(POOT_DTYPE_F16, 130, 136, 1032, 6, false, "gemm_mma raw wide xs");
  tile_one(POOT_DTYPE_F16, 130, 136, 1032, 6, true, "gemm_mma raw wide");
  tile_one(POOT_DTYPE_F16, 136, 136, 1032, 1, true, "gemm_mma raw big");
  tile_one(POOT_DTYPE_BF16, 136, 72, 1064, 1, true, "gemm_mma raw big");
}

/* The tall tile (128 × 64) of the SwiGLU pair: an FFN over 130 positions
 * at h = 1064 (ragged M; K ragged and not split, K % 64 != 0), ff = 136
 * (ragged N; the down projection, K = 136, takes the scalar form) against
 * poot_eval. */
static void test_tall(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  B(pt_ffn_graph(g, 130, 1064, 136, POOT_DTYPE_F16));
  B(poot_graph_verify(g));
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  o.gemm_x_emitter = true;       /* the tall tile with x through the emitter */
  o.shared_memory_static = true; /* in 48 KiB */
  assert_false(pt_uses_template_opt(g, &o, "gemm_mma raw tall"));
  o.gemm_wide_min_grid = 1;
  o.gemm_big_tiles = true;
  assert_true(pt_uses_template_opt(g, &o, "gemm_mma raw tall"));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  pt_result r;
  B(pt_check_opt(g, &o, &in, 32, false, 1064 * 4.8e-7 + 1e-6, &r));
  if (!r.ok) fail_msg("tall: %s", r.what);
  printf("tall f16 SwiGLU pair m=130 h=1064 ff=136: max error %.3g (allowed %.3g)\n", r.max_err,
         r.max_allowed);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* x staged once (PG_GEMM_X, then copied into the ring like the weights)
 * against x through the emitter in every tile (gemm_x_emitter): the same
 * bits at both precisions, on sm_90 (and sm_80 for the first case) — the same f32 values
 * rounded the same way, the same mma in the same order. Ragged M, N and
 * K; split-K; the RMSNorm'd x of the SwiGLU pair (one staged x for both
 * roots) and the SwiGLU output as the down projection's x; the wide tile
 * and the big one at medium (the tall pair, like big a tile off by
 * default, is left out: the 130-row FFN and the FFNs' second precision
 * were most of the test's time, and CI's 30 minutes are spent). At 64 rows or fewer
 * (the skinny tile, batched decode) x stays with the emitter
 * (test_batched). */
typedef struct xs_case {
  const char *what;
  poot_dtype wt;
  int64_t m, n, k; /* n = 0: the FFN at h = k, ff = 1024 (or 136 when m > 128) */
  uint32_t min_grid;
  const char *form;        /* a dispatch name with x staged, at high and medium */
  const char *form_medium; /* NULL: high only (CI time); form NULL: medium only */
} xs_case;

static void test_xstage(void **state) {
  (void)state;
  static const xs_case cs[] = {
      {"f16 ragged", POOT_DTYPE_F16, 70, 130, 1040, 0, "gemm_mma raw xs", "gemm_mma raw medium xs"},
      {"bf16 ragged", POOT_DTYPE_BF16, 72, 72, 1064, 0, "gemm_mma raw xs",
       "gemm_mma raw medium xs"},
      {"f16 split", POOT_DTYPE_F16, 70, 64, 2048, 0, "gemm_mma split raw xs",
       "gemm_mma split raw medium xs"},
      {"ffn f16", POOT_DTYPE_F16, 65, 0, 1024, 0, "gemm_mma split raw xs", NULL},
      {"big f16", POOT_DTYPE_F16, 136, 136, 1032, 1, NULL, "gemm_mma raw big medium xs"},
  };
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
    const xs_case *x = &cs[c];
    poot_graph *g;
    B(poot_graph_create(&g));
    if (x->n) {
      poot_value xv = pt_param(g, "x", POOT_DTYPE_F32, x->m, x->k);
      poot_value w = pt_param(g, "w", x->wt, x->n, x->k);
      B(poot_graph_set_output(g, pt_dot_nt(g, xv, w)));
    } else {
      B(pt_ffn_graph(g, x->m, x->k, x->m > 128 ? 136 : 1024, x->wt));
    }
    B(poot_graph_verify(g));
    pt_inputs in;
    B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
    for (int i = 0; i < 4; i++) {
      if ((i & 1) == 0 && c > 0) continue; /* sm_80: the first case (same plans; CI time) */
      poot_kir_target t;
      B(poot_device_target_by_name(ptx_targets[i & 1], &t));
      poot_compile_options a, b;
      poot_compile_options_init(&a);
      a.target = &t;
      a.matmul_precision = i >= 2 ? POOT_MATMUL_MEDIUM : POOT_MATMUL_HIGH;
      a.gemm_wide_min_grid = x->min_grid;
      a.gemm_big_tiles = true; /* the big and tall cases (off by default) */
      a.gemm_x_emitter = false;
      a.shared_memory_static = true; /* the tiles of 48 KiB (test_big_shared: the rest) */
      b = a;
      b.gemm_x_emitter = true;
      const char *form = i >= 2 ? x->form_medium : x->form;
      if (!form) continue;
      if (!pt_uses_template_opt(g, &a, form) || !pt_uses_template_opt(g, &a, "gemm_x") ||
          pt_uses_template_opt(g, &b, " xs") || pt_uses_template_opt(g, &b, "gemm_x"))
        fail_msg("xstage %s %s: %s not used (or x staged with gemm_x_emitter)", x->what,
                 ptx_targets[i & 1], form);
      bool same = false;
      char why[256];
      B(pt_same_bits(g, &a, &b, &in, 32, &same, why, sizeof why));
      if (!same)
        fail_msg("xstage %s %s %s: %s", x->what, ptx_targets[i & 1], i >= 2 ? "medium" : "high",
                 why);
    }
    printf("xstage %s: the same bits at %s\n", x->what,
           x->form ? (x->form_medium ? "high and medium" : "high") : "medium");
    pt_inputs_free(&in);
    poot_graph_destroy(g);
  }
}

/* Weights staged once (PG_GEMM_W, then copied into the ring like a 16-bit
 * leaf's) against the emitter's staging of them (gemm_w_emitter): the
 * same bits, on sm_90 — the same f32 values rounded the same way, the same
 * mma in the same order (the block formats' chunks decoded by the GEMV's
 * decoders, gemm_stage.c; the f32 weight through the emitter). A K-quant
 * with mins (q4_k) at both precisions and with x staged too; q6_k's SwiGLU
 * pair and down projection at medium, and a q6_k projection whose chunks
 * end inside a workgroup; q8_0 split over K; an f32 weight (its hi
 * and lo at medium too). At 64 rows or fewer the weights stay with the
 * emitter. */
typedef struct ws_case {
  const char *what;
  poot_dtype wt;
  int64_t m, n, k;                /* n = 0: the FFN at h = k, ff = 1024 */
  bool xs;                        /* x staged too (in both plans) */
  const char *form, *form_medium; /* NULL: that precision is not run (CI time) */
} ws_case;

static void test_wstage(void **state) {
  (void)state;
  static const ws_case cs[] = {
      {"q4_k", POOT_DTYPE_Q4_K, 70, 72, 1024, false, "raw ws", "raw medium ws"},
      {"q4_k x staged", POOT_DTYPE_Q4_K, 70, 72, 1024, true, "raw xs ws", NULL},
      {"q6_k ffn", POOT_DTYPE_Q6_K, 66, 0, 1024, false, NULL, "raw medium ws"},
      {"q8_0 split", POOT_DTYPE_Q8_0, 68, 64, 2048, false, "split raw ws", NULL},
      {"f32", POOT_DTYPE_F32, 67, 40, 1032, false, NULL, "raw ws"},
      {"q6_k partial", POOT_DTYPE_Q6_K, 65, 40, 1024, false, NULL, "raw medium ws"},
  };
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
    const ws_case *x = &cs[c];
    poot_graph *g;
    B(poot_graph_create(&g));
    if (x->n) {
      poot_value xv = pt_param(g, "x", POOT_DTYPE_F32, x->m, x->k);
      poot_value w = pt_param(g, "w", x->wt, x->n, x->k);
      B(poot_graph_set_output(g, pt_dot_nt(g, xv, w)));
    } else {
      B(pt_ffn_graph(g, x->m, x->k, 1024, x->wt));
    }
    B(poot_graph_verify(g));
    pt_inputs in;
    B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
    poot_kir_target t;
    B(poot_device_target_by_name("sm_90", &t));
    for (int i = 0; i < 2; i++) {
      const char *form = i ? x->form_medium : x->form;
      if (!form) continue;
      poot_compile_options a, b;
      poot_compile_options_init(&a);
      a.target = &t;
      a.matmul_precision = i ? POOT_MATMUL_MEDIUM : POOT_MATMUL_HIGH;
      a.gemm_x_emitter = !x->xs;
      a.gemm_w_emitter = true;
      a.shared_memory_static = true; /* 48 KiB (test_big_shared: the opt-in amount) */
      b = a;
      a.gemm_w_emitter = false;
      const char *staging = x->wt == POOT_DTYPE_F32 ? "gemm_w" : " blocks";
      if (!pt_uses_template_opt(g, &a, form) || !pt_uses_template_opt(g, &a, staging) ||
          pt_uses_template_opt(g, &b, " ws") || pt_uses_template_opt(g, &b, "gemm_w"))
        fail_msg("wstage %s: %s not used (or weights staged with gemm_w_emitter)", x->what, form);
      bool same = false;
      char why[256];
      B(pt_same_bits(g, &a, &b, &in, 32, &same, why, sizeof why));
      if (!same) fail_msg("wstage %s %s: %s", x->what, i ? "medium" : "high", why);
      printf("wstage %s: the same bits at %s\n", x->what, i ? "medium" : "high");
    }
    pt_inputs_free(&in);
    poot_graph_destroy(g);
  }
  /* 64 rows: a batched decode step keeps its weights with the emitter */
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value xv = pt_param(g, "x", POOT_DTYPE_F32, 64, 1024);
  B(poot_graph_set_output(g, pt_dot_nt(g, xv, pt_param(g, "w", POOT_DTYPE_Q4_K, 72, 1024))));
  B(poot_graph_verify(g));
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  assert_false(pt_uses_template_opt(g, &o, "gemm_w"));
  poot_graph_destroy(g);
}

/* Under big-shared (sm_90's 227 KiB opt-in amount) the plan of `o`: how
 * many dispatches' names hold `what`, and the most dynamic shared memory a
 * kernel asks (poot_kir_ptx_dynamic_shared_bytes). */
static void big_shared_facts(const poot_graph *g, const poot_compile_options *o, const char *what,
                             uint32_t *out_count, uint64_t *out_dynamic) {
  poot_plan *plan = NULL;
  B(poot_plan_create(g, o, &plan));
  *out_count = 0;
  *out_dynamic = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (plan->dispatches[i].what && strstr(plan->dispatches[i].what, what)) (*out_count)++;
  for (uint32_t i = 0; i < plan->kernel_count; i++) {
    uint64_t d = poot_kir_ptx_dynamic_shared_bytes(plan->kernels[i]);
    if (d > *out_dynamic) *out_dynamic = d;
  }
  poot_plan_destroy(plan);
}

/* The opt-in shared memory (the default) against static-shared: the
 * RMSNorm'd q8_0 FFN at 66 rows, h = 1024, ff = 64 (the down projection too
 * short for matrix fragments: 1.2 s on the interpreter), x and weights
 * staged, at high. In 48 KiB the SwiGLU pair keeps the emitter's form (its
 * staged weights' hi and lo rings do not fit); with the opt-in amount it
 * takes the raw path (" ws") in a dynamic window past 48 KiB, and the
 * outputs are the same bits. A target without an opt-in amount is the
 * same either way. */
static void test_big_shared(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  B(pt_ffn_graph(g, 66, 1024, 64, POOT_DTYPE_Q8_0));
  B(poot_graph_verify(g));
  poot_kir_target t;
  B(poot_device_target_by_name("sm_90", &t));
  poot_compile_options a, b;
  poot_compile_options_init(&b);
  b.target = &t;
  a = b; /* the defaults: x and weights staged, the opt-in amount */
  poot_compile_options_set_forms(&b, POOT_FORM_STATIC_SHARED);
  assert_true(b.shared_memory_static && !a.shared_memory_static);
  uint32_t na = 0, nb = 0;
  uint64_t da = 0, db = 0;
  big_shared_facts(g, &a, " ws", &na, &da);
  big_shared_facts(g, &b, " ws", &nb, &db);
  printf(
      "big-shared: %u dispatches with staged weights (48 KiB: %u), %llu bytes of dynamic "
      "shared memory at most (48 KiB: %llu)\n",
      na, nb, (unsigned long long)da, (unsigned long long)db);
  assert_int_equal(nb + 1, na);
  assert_int_equal(db, 0);
  assert_true(da > POOT_KIR_PTX_STATIC_SHARED_MAX && da <= t.shared_memory_optin_bytes);
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  bool same = false;
  char why[256];
  B(pt_same_bits(g, &a, &b, &in, 32, &same, why, sizeof why));
  if (!same) fail_msg("big-shared: %s", why);
  pt_inputs_free(&in);
  /* no opt-in amount: the form changes nothing */
  t.shared_memory_optin_bytes = 0;
  big_shared_facts(g, &a, " ws", &na, &da);
  assert_int_equal(na, nb);
  assert_int_equal(da, 0);
  poot_graph_destroy(g);
}

/* Split-K (a batched decode's projections: more rows than the GEMV takes,
 * a grid of few tiles): K summed in parts into a partials temp, then a
 * combine dispatch adds them in split order and runs the epilogue. A
 * 12-row projection at K = 512 (2 splits, the scalar form on every
 * profile). */
static void test_split_k(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, 12, 512);
  poot_value w = pt_param(g, "w", POOT_DTYPE_Q8_0, 40, 512);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  check(g, 512, true, "split gemm q8_0 [12,512]x[40,512]");
  poot_kir_target t;
  profile(3, &t); /* no subgroups: the scalar form */
  assert_true(pt_uses_template(g, &t, "gemm split"));
  assert_true(pt_uses_template(g, &t, "gemm_combine"));
  poot_graph_destroy(g);
}

/* `compile_gemm tiled` or `compile_gemm mma` runs one form's tests (the mma
 * form's take minutes under the sanitizers: gemm.cmake); no argument, all. */
int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : "";
  const struct CMUnitTest tiled[] = {
      cmocka_unit_test(test_formats),
      cmocka_unit_test(test_ffn),
      cmocka_unit_test(test_split_k),
  };
  const struct CMUnitTest mma[] = {
      cmocka_unit_test(test_mma),     cmocka_unit_test(test_split),
      cmocka_unit_test(test_ffn_mma), cmocka_unit_test(test_medium),
      cmocka_unit_test(test_wide),    cmocka_unit_test(test_tall),
      cmocka_unit_test(test_batched), cmocka_unit_test(test_xstage),
      cmocka_unit_test(test_wstage),  cmocka_unit_test(test_big_shared),
  };
  int rc = 0;
  if (strcmp(only, "mma") != 0) rc |= cmocka_run_group_tests_name("tiled", tiled, NULL, NULL);
  if (strcmp(only, "tiled") != 0) rc |= cmocka_run_group_tests_name("mma", mma, NULL, NULL);
  return rc;
}
