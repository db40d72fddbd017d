/* gemv_test.c — the weight-streaming GEMV template (templates/gemv.c,
 * gemv_blocks.c) on the KIR interpreter against poot_eval, at subgroup sizes
 * 8, 32 and 64: every weight format it reads (f32, f16, bf16, q8_0, q4_0,
 * q4_1, q5_0, q5_1, q4_k, q5_k, q6_k) at the real row lengths (2048, 4096,
 * 8192, 14336) and small ones, ragged chunk counts, several rows of x, x
 * staged in several tiles, two rows per subgroup, two roots sharing x with
 * an RMSNorm prologue and a SwiGLU epilogue (of one format and of two),
 * three roots of mixed formats (a Q4_K_M file's Q, K and V), and the shapes
 * it must leave to the generic contraction (more rows than it takes, a row
 * length that is not a whole chunk, formats whose chunks differ). The plan's
 * dispatch names say which template ran. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot/quant.h"
#include "poot_test.h"

#define B(x) POOT_ASSERT_OK(x)

/* The interpreter profiles: subgroups of 8, 32 (with the PTX device's 48 KiB
 * of shared memory: x in tiles) and 64, and 32 without f16 arithmetic (the
 * integer f16 decoder) and 16 KiB of shared memory (many tiles). */
static const uint32_t sgs[] = {8, 32, 64, 32};

static void profile(int i, poot_kir_target *t) {
  poot_kir_target_init_interp(t, sgs[i]);
  if (i == 1) t->shared_memory_bytes = 48 * 1024;
  if (i == 3) {
    t->arith_types &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_F16);
    t->shared_memory_bytes = 16 * 1024;
  }
}

/* The profiles in `mask` (bit i: profile i): the template runs (or not)
 * and the outputs match. The long outputs (two rows per subgroup) run at
 * subgroup 32 only for block formats: an interpreted million-element
 * weight costs seconds. */
static void check_on(poot_graph *g, int64_t k, bool want, const char *what, unsigned mask) {
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  for (int i = 0; i < 4; i++) {
    if (!(mask & (1u << i))) continue;
    poot_kir_target t;
    profile(i, &t);
    char why[512];
    if (!pt_check_projection(g, &in, &t, sgs[i], k, "gemv", want, what, why, sizeof why))
      fail_msg("%s", why);
  }
  pt_inputs_free(&in);
}
static void check(poot_graph *g, int64_t k, bool want, const char *what) {
  check_on(g, k, want, what, 15u);
}

static void one(poot_dtype wt, int64_t m, int64_t n, int64_t k, bool want) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  char what[64];
  snprintf(what, sizeof what, "gemv %s [%lld,%lld]x[%lld,%lld]", poot_dtype_name(wt), (long long)m,
           (long long)k, (long long)n, (long long)k);
  check_on(g, k, want, what, n >= 2048 && poot_dtype_is_packed(wt) ? 2u : 15u);
  poot_graph_destroy(g);
}

static void test_formats(void **state) {
  (void)state;
  one(POOT_DTYPE_F16, 1, 5, 2048, true); /* 8 chunks per lane at sg 32: unrolled */
  one(POOT_DTYPE_F16, 1, 9, 96, true);
  one(POOT_DTYPE_BF16, 3, 4, 64, true);
  one(POOT_DTYPE_F32, 1, 6, 132, true); /* 33 chunks: ragged */
  one(POOT_DTYPE_F32, 4, 3, 1028, true);
  one(POOT_DTYPE_Q8_0, 1, 7, 192, true); /* 3 block pairs */
  one(POOT_DTYPE_Q8_0, 2, 3, 4096, true);
  one(POOT_DTYPE_Q4_0, 2, 9, 128, true);
  one(POOT_DTYPE_Q4_0, 1, 4, 8192, true);
  /* long outputs: two rows per subgroup */
  one(POOT_DTYPE_F16, 1, 4100, 64, true);
  one(POOT_DTYPE_BF16, 2, 4098, 136, true);
  /* x larger than shared memory: staged in tiles of K */
  one(POOT_DTYPE_Q8_0, 4, 3, 4096, true);
  one(POOT_DTYPE_F16, 2, 5, 8200, true);
  /* the batched decode's rows: up to 8 (x in tiles from K = 2048 at 48 KiB) */
  one(POOT_DTYPE_F16, 8, 5, 2048, true);
  one(POOT_DTYPE_F16, 5, 4100, 136, true);
  one(POOT_DTYPE_Q8_0, 8, 3, 2048, true);
  one(POOT_DTYPE_Q4_K, 7, 2048, 256, true);
}

/* Shapes the template leaves to the generic contraction. */
static void test_fallback(void **state) {
  (void)state;
  one(POOT_DTYPE_F16, 9, 3, 64, false);   /* more rows of x than it takes */
  one(POOT_DTYPE_BF16, 1, 3, 70, false);  /* not a whole 8-element chunk */
  one(POOT_DTYPE_Q4_0, 1, 3, 96, false);  /* an odd number of blocks */
  one(POOT_DTYPE_Q5_1, 1, 3, 160, false); /* the same for q5_1 */
  one(POOT_DTYPE_Q4_K, 9, 3, 256, false); /* more rows of x than it takes */
}

/* The k-quants and the other 32-element block formats at the row lengths
 * of Llama 3.2 1B (2048; ffn_down 8192) and 3.1 8B (4096; ffn_down 14336),
 * and small, odd-block-count and ragged ones. */
static void test_blocks(void **state) {
  (void)state;
  static const poot_dtype kq[] = {POOT_DTYPE_Q4_K, POOT_DTYPE_Q6_K, POOT_DTYPE_Q5_K};
  for (int i = 0; i < 3; i++) {
    one(kq[i], 1, 5, 2048, true); /* one chunk per lane at sg 32 */
    one(kq[i], 2, 3, 256, true);  /* one block: 4 of 8, 32 or 64 lanes */
    one(kq[i], 1, 3, 768, true);  /* 3 blocks a row: odd q6_k blocks on odd rows; ragged */
    one(kq[i], i < 2 ? 4 : 2, 2, 4096, true); /* x in tiles at 48 (m = 4) and 16 KiB */
  }
  one(POOT_DTYPE_Q4_K, 1, 2, 14336, true);
  one(POOT_DTYPE_Q6_K, 1, 2, 8192, true);
  static const poot_dtype lq[] = {POOT_DTYPE_Q4_1, POOT_DTYPE_Q5_0, POOT_DTYPE_Q5_1};
  for (int i = 0; i < 3; i++) {
    one(lq[i], 1, 5, 2048, true);
    one(lq[i], 3, 3, 192, true); /* 3 block pairs: ragged */
  }
  one(POOT_DTYPE_Q5_0, 1, 4100, 64, true);  /* two rows per subgroup */
  one(POOT_DTYPE_Q6_K, 1, 2048, 256, true); /* block formats: two rows from N = 2048 */
  one(POOT_DTYPE_Q4_K, 3, 2048, 256, true); /* … and several rows of x */
  one(POOT_DTYPE_Q4_1, 2, 2, 8192, true);
}

/* x [m, h] → RMSNorm → `nr` projections sharing it, of formats wt[]: the
 * gate and up of an FFN with SwiGLU (nr 2), or d0 + d1 · d2 (nr 3: three
 * roots, the formats of a Q4_K_M file's Q, K, V). Only this one group
 * contracts, so "gemv" in the plan names it. */
static void shared_x(int nr, const poot_dtype *wt, int64_t m, int64_t h, const int64_t *n,
                     bool want) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, h),
             nw = pt_param(g, "norm", POOT_DTYPE_F32, h, 0);
  poot_value xn, d[3], y;
  B(poot_graph_rms_norm(g, x, nw, 1e-5, &xn));
  char what[128], nm[16];
  int len = snprintf(what, sizeof what, "m=%lld h=%lld", (long long)m, (long long)h);
  for (int i = 0; i < nr; i++) {
    snprintf(nm, sizeof nm, "w%d", i & 3);
    d[i] = pt_dot_nt(g, xn, pt_param(g, nm, wt[i], n[i], h));
    len += snprintf(what + len, sizeof what - (size_t)len, " %s[%lld]", poot_dtype_name(wt[i]),
                    (long long)n[i]);
  }
  if (nr == 2) {
    B(poot_graph_swiglu(g, d[0], d[1], &y));
  } else {
    B(poot_graph_binary(g, POOT_OP_MUL, d[1], d[2], &y));
    B(poot_graph_binary(g, POOT_OP_ADD, d[0], y, &y));
  }
  B(poot_graph_set_output(g, y));
  check_on(g, h, want, what, n[0] >= 4096 ? 2u : 15u);
  poot_graph_destroy(g);
}

static void test_mixed(void **state) {
  (void)state;
  const poot_dtype kk[2] = {POOT_DTYPE_Q4_K, POOT_DTYPE_Q4_K},
                   k6[2] = {POOT_DTYPE_Q4_K, POOT_DTYPE_Q6_K},
                   l5[2] = {POOT_DTYPE_Q5_1, POOT_DTYPE_Q8_0},
                   fk[2] = {POOT_DTYPE_F16, POOT_DTYPE_Q4_K};
  const int64_t n2[2] = {6, 6}, n4[2] = {4098, 4098};
  shared_x(2, kk, 1, 2048, n2, true);
  shared_x(2, k6, 2, 512, n2, true);
  shared_x(2, k6, 1, 256, n4, true); /* two rows per subgroup, two formats */
  shared_x(2, l5, 1, 128, n2, true);
  shared_x(2, fk, 1, 256, n2, false); /* 8- and 64-element chunks: the generic contraction */
  const poot_dtype qkv[3] = {POOT_DTYPE_Q4_K, POOT_DTYPE_Q4_K, POOT_DTYPE_Q6_K};
  const int64_t n3[3] = {5, 5, 5};
  shared_x(3, qkv, 1, 2048, n3, true);
  shared_x(3, qkv, 4, 768, n3, true);
}

/* Gate and up sharing an RMSNorm'd x, SwiGLU, then a down projection with
 * the residual added: the FFN of a decoder layer at four rows. */
static void test_ffn(void **state) {
  (void)state;
  for (int q = 0; q < 2; q++) {
    poot_graph *g;
    B(poot_graph_create(&g));
    int64_t m = q ? 1 : 4, h = 256, ff = q ? 512 : 384;
    poot_dtype wt = q ? POOT_DTYPE_Q4_K : POOT_DTYPE_F16;
    B(pt_ffn_graph(g, m, h, ff, wt));
    check(g, ff, true, q ? "ffn q4_k m=1" : "ffn f16 m=4");
    poot_graph_destroy(g);
  }
}

/* The row loop (x staged once per workgroup for several groups of rows):
 * one subgroup per workgroup (a 32-thread limit), so that a thousand row
 * groups already take it — block formats with two rows per subgroup, an
 * odd N of f16 with one, and a ragged last group. */
static void row_loop_one(poot_dtype wt, int64_t m, int64_t n, int64_t k) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  poot_kir_target t;
  poot_kir_target_init_interp(&t, 32);
  t.max_workgroup_size = 32;
  char what[64], why[512];
  snprintf(what, sizeof what, "row loop %s [%lld,%lld]x[%lld,%lld]", poot_dtype_name(wt),
           (long long)m, (long long)k, (long long)n, (long long)k);
  if (!pt_check_projection(g, &in, &t, 32, k, "gemv", true, what, why, sizeof why))
    fail_msg("%s", why);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_row_loop(void **state) {
  (void)state;
  row_loop_one(POOT_DTYPE_Q4_K, 1, 2048, 256); /* two row groups per subgroup */
  row_loop_one(POOT_DTYPE_Q6_K, 2, 2050, 256); /* the last group: one subgroup only */
  row_loop_one(POOT_DTYPE_F16, 1, 1025, 64);   /* one row per subgroup */
}

/* MEDIUM precision (docs/compiler.md "The decode GEMV at medium"): x
 * rounded per aligned 32 elements to int8 codes q̂ with d = max|x| / 127,
 * the block products summed exactly in i32 (dot4_i8), scales and mins in
 * f32. Per output the bound is
 *   Σ_b e_b · Σ_{c in b} |w_c|  +  (K + K/16 + 16) · 2^-24 · Σ_c (|s_c| + |m_c|)·(|x_c| + e_c)
 * with e_b = d_b · (1/2 + 2^-15) (the roundings of 1/127, of d, of 127 / max|x|
 * and of x times it),
 * max|x_b| for a block below 2^-100 (zeros); s_c the weight without its
 * min term, m_c the min (w_c = s_c + m_c): the f32 roundings of the run
 * terms and their sums against the oracle's K sequential ones. The test
 * allows its largest value over the outputs (pt_check's tolerance is
 * relative to the largest output). The weights' min-free copy: the
 * format's min scale (q4_1/q5_1 m, q4_k/q5_k dmin) set to zero. */
static void dequant(poot_dtype wt, const uint8_t *src, float *dst, size_t nb, bool nomin) {
  size_t bytes = 0, qk = 32;
  void (*deq)(const void *, float *, size_t) = NULL;
  size_t minat = 0;
  switch (wt) {
    case POOT_DTYPE_Q8_0:
      deq = poot_quant_dequantize_q8_0, bytes = 34;
      break;
    case POOT_DTYPE_Q4_0:
      deq = poot_quant_dequantize_q4_0, bytes = 18;
      break;
    case POOT_DTYPE_Q5_0:
      deq = poot_quant_dequantize_q5_0, bytes = 22;
      break;
    case POOT_DTYPE_Q4_1:
      deq = poot_quant_dequantize_q4_1, bytes = 20, minat = 2;
      break;
    case POOT_DTYPE_Q5_1:
      deq = poot_quant_dequantize_q5_1, bytes = 24, minat = 2;
      break;
    case POOT_DTYPE_Q4_K:
      deq = poot_quant_dequantize_q4_k, bytes = 144, minat = 2, qk = 256;
      break;
    case POOT_DTYPE_Q5_K:
      deq = poot_quant_dequantize_q5_k, bytes = 176, minat = 2, qk = 256;
      break;
    case POOT_DTYPE_Q6_K:
      deq = poot_quant_dequantize_q6_k, bytes = 210, qk = 256;
      break;
    default:
      fail_msg("medium: no dequantizer for %s", poot_dtype_name(wt));
  }
  uint8_t blk[256];
  for (size_t b = 0; b < nb; b++) {
    memcpy(blk, src + b * bytes, bytes);
    if (nomin && minat) blk[minat] = blk[minat + 1] = 0;
    deq(blk, dst + b * qk, 1);
  }
}

static const void *input(const pt_inputs *in, const char *name) {
  for (size_t i = 0; i < in->count; i++)
    if (strcmp(in->names[i], name) == 0) return in->tensors[i].data;
  fail_msg("medium: no input %s", name);
  return NULL;
}

/* The bound above for y = x · w^T (x [m, k] f32, w [n, k] of format wt), per
 * output, with its quantization term times qscale, into bd[m · n]; the
 * exact products into y[m · n], and the oracle's own distance from them,
 * k · 2^-24 · Σ|x w|, into od[m · n]. */
static void medium_bound(poot_dtype wt, const float *xd, const uint8_t *wq, int64_t m, int64_t n,
                         int64_t k, double qscale, double *bd, double *y, double *od) {
  size_t qk = wt == POOT_DTYPE_Q4_K || wt == POOT_DTYPE_Q5_K || wt == POOT_DTYPE_Q6_K ? 256 : 32;
  float *w = poot_calloc((size_t)(n * k), sizeof *w), *s = poot_calloc((size_t)(n * k), sizeof *s);
  double *e = poot_calloc((size_t)(m * k), sizeof *e);
  assert_true(w && s && e);
  dequant(wt, wq, w, (size_t)(n * k) / qk, false);
  dequant(wt, wq, s, (size_t)(n * k) / qk, true);
  for (int64_t r = 0; r < m; r++)
    for (int64_t b = 0; b < k / 32; b++) {
      float amax = 0;
      for (int e2 = 0; e2 < 32; e2++) amax = fmaxf(amax, fabsf(xd[r * k + b * 32 + e2]));
      float d = amax * (1.0f / 127.0f);
      double eb = amax < 0x1p-100f ? amax : d * (0.5 + 0x1p-15);
      for (int e2 = 0; e2 < 32; e2++) e[r * k + b * 32 + e2] = eb;
    }
  const double acc = ((double)k + (double)k / 16 + 16) * 0x1p-24;
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n; c++) {
      double out = 0, q = 0, rs = 0, sum = 0;
      for (int64_t i = 0; i < k; i++) {
        double x = xd[r * k + i], wv = w[c * k + i], sv = s[c * k + i];
        out += x * wv;
        sum += fabs(x * wv);
        q += e[r * k + i] * fabs(wv);
        rs += (fabs(sv) + fabs(wv - sv)) * (fabs(x) + e[r * k + i]);
      }
      bd[r * n + c] = qscale * q + acc * rs;
      y[r * n + c] = out;
      od[r * n + c] = (double)k * 0x1p-24 * sum;
    }
  poot_free(w);
  poot_free(s);
  poot_free(e);
}

/* The epilogues: none (y = x·w^T), the residual (y = res + x·w^T), and the
 * SwiGLU pair (y = silu(x·w0^T) · x·w1^T). */
enum { EPI_NONE, EPI_RESIDUAL, EPI_SWIGLU };

/* Runs g at medium on the interpreter against poot_eval within the bound
 * (its quantization term times qscale) carried through the epilogue:
 * residual |Δ| ≤ B + 2^-23 (|res| + |y| + B); SwiGLU, with |silu'| ≤ 1.1 and
 * B counted twice where an exact value stands for the oracle's,
 * 2.2 B_g (|u| + 2 B_u) + (|silu(g)| + 2.2 B_g) · 2 B_u + 2^-18 |y| (the
 * exponential's rounding). Returns whether it held; the template must be
 * "gemv medium". */
/* The medium tests' target (the interpreter, subgroups of 32, 48 KiB of
 * shared memory, like the PTX device) and options at precision p. */
static void interp_options(poot_kir_target *t, poot_compile_options *o, poot_matmul_precision p) {
  poot_kir_target_init_interp(t, 32);
  t->shared_memory_bytes = 48 * 1024;
  poot_compile_options_init(o);
  o->target = t;
  o->matmul_precision = p;
}

/* The opt-in forms medium_run compiles with (test_one_row). */
static uint32_t g_forms;

static bool medium_run(poot_graph *g, const pt_inputs *in, int epi, poot_dtype wt, int64_t m,
                       int64_t n, int64_t k, double qscale, uint32_t max_wg, double *out_err) {
  const float *xd = input(in, "x");
  size_t mn = (size_t)(m * n);
  double *b0 = poot_calloc(mn, sizeof *b0), *y0 = poot_calloc(mn, sizeof *y0);
  double *b1 = poot_calloc(mn, sizeof *b1), *y1 = poot_calloc(mn, sizeof *y1);
  double *o0 = poot_calloc(mn, sizeof *o0), *o1 = poot_calloc(mn, sizeof *o1);
  assert_true(b0 && y0 && b1 && y1 && o0 && o1);
  medium_bound(wt, xd, input(in, epi == EPI_SWIGLU ? "w0" : "w"), m, n, k, qscale, b0, y0, o0);
  if (epi == EPI_SWIGLU) medium_bound(wt, xd, input(in, "w1"), m, n, k, qscale, b1, y1, o1);
  const float *res = epi == EPI_RESIDUAL ? input(in, "res") : NULL;
  double tol = 0, outmax = 0, odmax = 0;
  for (size_t i = 0; i < mn; i++) {
    double y = y0[i], t = b0[i], od = o0[i];
    if (epi == EPI_RESIDUAL) {
      y = res[i] + y0[i];
      t = b0[i] + 0x1p-23 * (fabs(res[i]) + fabs(y0[i]) + b0[i]);
      od = o0[i] + 0x1p-23 * (fabs(res[i]) + fabs(y0[i]) + o0[i]);
    } else if (epi == EPI_SWIGLU) {
      double sg = y0[i] / (1 + exp(-y0[i]));
      y = sg * y1[i];
      t = 2.2 * b0[i] * (fabs(y1[i]) + 2 * b1[i]) + (fabs(sg) + 2.2 * b0[i]) * 2 * b1[i] +
          0x1p-18 * fabs(y);
      od = 1.1 * o0[i] * (fabs(y1[i]) + o1[i]) + (fabs(sg) + 1.1 * o0[i]) * o1[i] +
           0x1p-18 * fabs(y);
    }
    tol = fmax(tol, t);
    outmax = fmax(outmax, fabs(y));
    odmax = fmax(odmax, od);
  }
  /* the oracle's largest output is at least the exact one's less its own
   * rounding */
  const double tol_rel = tol / (outmax - odmax);
  poot_kir_target t;
  poot_compile_options o;
  interp_options(&t, &o, POOT_MATMUL_MEDIUM);
  if (max_wg) t.max_workgroup_size = max_wg;
  poot_compile_options_set_forms(&o, g_forms);
  if (!pt_uses_template_opt(g, &o, "gemv medium"))
    fail_msg("medium %s [%lld]: gemv medium not used", poot_dtype_name(wt), (long long)k);
  pt_result r;
  B(pt_check_opt(g, &o, in, 32, false, tol_rel, &r));
  *out_err = r.max_err / r.max_allowed;
  poot_free(b0);
  poot_free(y0);
  poot_free(b1);
  poot_free(y1);
  poot_free(o0);
  poot_free(o1);
  return r.ok;
}

/* max_wg: the target's workgroup limit (0: the interpreter's); 32 makes a
 * thousand rows take the row loop (row_loop_one). */
static void medium_one(poot_dtype wt, int64_t m, int64_t n, int64_t k, uint32_t max_wg) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  double r;
  if (!medium_run(g, &in, EPI_NONE, wt, m, n, k, 1.0, max_wg, &r))
    fail_msg("medium %s [%lld,%lld]x[%lld,%lld]: outside the bound (%.3g of it)",
             poot_dtype_name(wt), (long long)m, (long long)k, (long long)n, (long long)k, r);
  printf("medium %s [%lld,%lld]x[%lld,%lld]: error %.3g of the bound\n", poot_dtype_name(wt),
         (long long)m, (long long)k, (long long)n, (long long)k, r);

  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* The bound is tight: in each block of 32, x = 1 once and 0.49 d (d =
 * 1/127) elsewhere, every one of which rounds to 0 (off by 0.49 d, the
 * bound's d/2 less 2 %), and weights ≥ 0 (quantized from [0, 1)), so the
 * errors add up without cancelling: the result uses most of the bound, and a
 * quarter of it (or of its quantization term) fails. */
static void medium_tight(poot_dtype wt, int64_t n, int64_t k) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, 1, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  float *wf = poot_calloc((size_t)(n * k), sizeof *wf);
  assert_non_null(wf);
  for (int64_t i = 0; i < n * k; i++) wf[i] = (float)((i * 7919) % 1000) / 1000.0f;
  for (size_t i = 0; i < in.count; i++) {
    if (strcmp(in.names[i], "x") == 0) {
      float *xd = in.tensors[i].data;
      for (int64_t c = 0; c < k; c++) xd[c] = c % 32 == 5 ? 1.0f : 0.49f / 127.0f;
    } else if (wt == POOT_DTYPE_Q8_0) {
      poot_quant_quantize_q8_0(wf, in.tensors[i].data, (size_t)(n * k / 32));
    } else {
      poot_quant_quantize_q4_k(wf, in.tensors[i].data, (size_t)(n * k / 256));
    }
  }
  double r, r4;
  if (!medium_run(g, &in, EPI_NONE, wt, 1, n, k, 1.0, 0, &r))
    fail_msg("medium tight %s: outside the bound (%.3g of it)", poot_dtype_name(wt), r);
  if (medium_run(g, &in, EPI_NONE, wt, 1, n, k, 0.25, 0, &r4))
    fail_msg("medium tight %s: within a quarter of the rounding term (%.3g)", poot_dtype_name(wt),
             r4);
  printf("medium tight %s [1,%lld]x[%lld,%lld]: error %.3g of the bound\n", poot_dtype_name(wt),
         (long long)k, (long long)n, (long long)k, r);
  poot_free(wf);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* The epilogues at medium: the residual added to an odd number of rows, and
 * the SwiGLU pair (two roots sharing x̂). */
static void medium_epi(int epi, poot_dtype wt, int64_t m, int64_t n, int64_t k) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), y;
  if (epi == EPI_SWIGLU) {
    poot_value d0 = pt_dot_nt(g, x, pt_param(g, "w0", wt, n, k));
    poot_value d1 = pt_dot_nt(g, x, pt_param(g, "w1", wt, n, k));
    B(poot_graph_swiglu(g, d0, d1, &y));
  } else {
    poot_value d = pt_dot_nt(g, x, pt_param(g, "w", wt, n, k));
    B(poot_graph_binary(g, POOT_OP_ADD, pt_param(g, "res", POOT_DTYPE_F32, m, n), d, &y));
  }
  B(poot_graph_set_output(g, y));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 11, 5, 0, 1.0f, &in));
  double r;
  const char *what = epi == EPI_SWIGLU ? "swiglu" : "residual";
  if (!medium_run(g, &in, epi, wt, m, n, k, 1.0, 0, &r))
    fail_msg("medium %s %s [%lld,%lld]x[%lld,%lld]: outside the bound (%.3g of it)", what,
             poot_dtype_name(wt), (long long)m, (long long)k, (long long)n, (long long)k, r);
  printf("medium %s %s [%lld,%lld]x[%lld,%lld]: error %.3g of the bound\n", what,
         poot_dtype_name(wt), (long long)m, (long long)k, (long long)n, (long long)k, r);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* Two medium GEMVs of one x at one level (a layer's K and V: different N,
 * so two groups) batched into one kernel, the second group reusing the
 * first's shared tiles; their outputs concatenated. Bound: the largest of
 * both projections' (the plain case's), relative to the larger output. */
static void medium_batched(void) {
  const int64_t m = 2, k = 512, n0 = 12, n1 = 4;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k);
  poot_value two[2] = {pt_dot_nt(g, x, pt_param(g, "w0", POOT_DTYPE_Q4_K, n0, k)),
                       pt_dot_nt(g, x, pt_param(g, "w1", POOT_DTYPE_Q4_K, n1, k))},
             c;
  B(poot_graph_concat(g, 2, two, 1, &c));
  B(poot_graph_set_output(g, c));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  double tol = 0, outmax = 0, odmax = 0;
  for (int i = 0; i < 2; i++) {
    int64_t n = i ? n1 : n0;
    double bd[2 * 12], y[2 * 12], od[2 * 12];
    medium_bound(POOT_DTYPE_Q4_K, input(&in, "x"), input(&in, i ? "w1" : "w0"), m, n, k, 1.0, bd, y,
                 od);
    for (int64_t j = 0; j < m * n; j++) {
      tol = fmax(tol, bd[j]);
      outmax = fmax(outmax, fabs(y[j]));
      odmax = fmax(odmax, od[j]);
    }
  }
  poot_kir_target t;
  poot_compile_options o;
  interp_options(&t, &o, POOT_MATMUL_MEDIUM);
  if (!pt_uses_template_opt(g, &o, "gemv medium + contract"))
    fail_msg("medium batched: the two GEMVs are not one batched kernel");
  pt_result r;
  B(pt_check_opt(g, &o, &in, 32, false, tol / (outmax - odmax), &r));
  if (!r.ok) fail_msg("medium batched: %s", r.what);
  printf("medium batched K and V: error %.3g of the bound\n", r.max_err / r.max_allowed);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* A NaN in x stays a NaN at medium (max|x| ignores it; d carries it): the
 * output is 1 where the dot is NaN, compared exactly with the oracle's. */
static void medium_nan(void) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, 2, 256), y, c;
  poot_value d = pt_dot_nt(g, x, pt_param(g, "w", POOT_DTYPE_Q4_K, 3, 256));
  B(poot_graph_binary(g, POOT_OP_NE, d, d, &c));
  B(poot_graph_convert(g, c, POOT_DTYPE_F32, &y));
  B(poot_graph_set_output(g, y));
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  for (size_t i = 0; i < in.count; i++)
    if (strcmp(in.names[i], "x") == 0) ((float *)in.tensors[i].data)[256 + 37] = NAN;
  poot_kir_target t;
  poot_kir_target_init_interp(&t, 32);
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  o.matmul_precision = POOT_MATMUL_MEDIUM;
  if (!pt_uses_template_opt(g, &o, "gemv medium")) fail_msg("medium nan: gemv medium not used");
  pt_result r;
  B(pt_check_opt(g, &o, &in, 32, true, 0, &r));
  if (!r.ok) fail_msg("medium nan: %s", r.what);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_medium(void **state) {
  (void)state;
  medium_one(POOT_DTYPE_Q4_K, 1, 5, 2048, 0);
  medium_one(POOT_DTYPE_Q6_K, 2, 3, 768, 0); /* odd blocks on odd rows; ragged */
  medium_one(POOT_DTYPE_Q8_0, 1, 7, 192, 0);
  medium_one(POOT_DTYPE_Q4_0, 3, 9, 128, 0);
  medium_one(POOT_DTYPE_Q5_K, 1, 3, 512, 0);
  medium_one(POOT_DTYPE_Q4_1, 1, 3, 192, 0);
  medium_one(POOT_DTYPE_Q5_0, 1, 3, 128, 0);
  medium_one(POOT_DTYPE_Q5_1, 2, 3, 192, 0);
  medium_one(POOT_DTYPE_Q4_K, 4, 2, 4096, 0);           /* x in three tiles of K */
  medium_one(POOT_DTYPE_Q8_0, 8, 3, 2048, 0);           /* a batched decode's eight rows, tiles */
  medium_one(POOT_DTYPE_Q6_K, 2, 2050, 256, 32);        /* the row loop, a ragged last group */
  medium_epi(EPI_RESIDUAL, POOT_DTYPE_Q4_K, 2, 7, 512); /* odd N */
  medium_epi(EPI_RESIDUAL, POOT_DTYPE_Q6_K, 1, 4098, 256); /* two rows per subgroup */
  medium_epi(EPI_SWIGLU, POOT_DTYPE_Q4_K, 1, 5, 256);
  medium_epi(EPI_SWIGLU, POOT_DTYPE_Q8_0, 3, 3, 192);
  medium_batched();
  medium_nan();
  medium_tight(POOT_DTYPE_Q8_0, 3, 256);
  medium_tight(POOT_DTYPE_Q4_K, 3, 2048);
}

/* The workgroups of the plan's GEMV dispatch (interp_options' target). */
static uint64_t gemv_groups(const poot_graph *g, poot_matmul_precision p, uint32_t forms) {
  poot_kir_target t;
  poot_compile_options o;
  interp_options(&t, &o, p);
  poot_compile_options_set_forms(&o, forms);
  poot_plan *plan = NULL;
  B(poot_plan_create(g, &o, &plan));
  uint64_t n = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (strstr(plan->dispatches[i].what, "gemv")) {
      const uint32_t *gr = plan->dispatches[i].grid;
      n += (uint64_t)gr[0] * gr[1] * gr[2];
    }
  poot_plan_destroy(plan);
  return n;
}

/* The opt-in form gemv-one-row (poot_compile_options.gemv_one_row): one row
 * per subgroup where the block GEMV takes two (N >= 2048), so twice the
 * workgroups at both precisions, and medium's results still inside its
 * bound; and the forms' names. */
static void test_one_row(void **state) {
  (void)state;
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, 1, 4096);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, pt_param(g, "w", POOT_DTYPE_Q4_K, 4096, 4096))));
  B(poot_graph_verify(g));
  for (int p = 0; p < 2; p++) {
    poot_matmul_precision mp = p ? POOT_MATMUL_MEDIUM : POOT_MATMUL_HIGH;
    uint64_t two = gemv_groups(g, mp, 0), one = gemv_groups(g, mp, POOT_FORM_GEMV_ONE_ROW);
    printf("q4_k [1,4096]x[4096,4096] %s: %llu workgroups, %llu with one row a subgroup\n",
           poot_matmul_precision_name(mp), (unsigned long long)two, (unsigned long long)one);
    assert_true(two > 0);
    assert_int_equal(one, 2 * two);
  }
  poot_graph_destroy(g);
  g_forms = POOT_FORM_GEMV_ONE_ROW;
  medium_epi(EPI_RESIDUAL, POOT_DTYPE_Q6_K, 1, 4098, 256);
  g_forms = 0;
  uint32_t f = 0;
  char buf[64];
  B(poot_compile_forms_parse("x-emitter,gemv-one-row", &f));
  assert_int_equal(f, POOT_FORM_GEMM_X_EMITTER | POOT_FORM_GEMV_ONE_ROW);
  assert_string_equal(poot_compile_forms_name(f, buf, sizeof buf), "x-emitter,gemv-one-row");
  B(poot_compile_forms_parse("static-shared,w-emitter", &f));
  assert_int_equal(f, POOT_FORM_STATIC_SHARED | POOT_FORM_GEMM_W_EMITTER);
  assert_string_equal(poot_compile_forms_name(f, buf, sizeof buf), "w-emitter,static-shared");
  poot_compile_options fo;
  poot_compile_options_init(&fo);
  poot_compile_options_set_forms(&fo, f);
  assert_true(fo.shared_memory_static && fo.gemm_w_emitter && !fo.gemm_x_emitter);
  B(poot_compile_forms_parse("none", &f));
  assert_int_equal(f, 0);
  assert_string_equal(poot_compile_forms_name(0, buf, sizeof buf), "none");
  POOT_ASSERT_STATUS_MSG(poot_compile_forms_parse("big-tiles,wide", &f), POOT_INVALID_ARGUMENT,
                         "compile form 'wide'");
  POOT_ASSERT_STATUS_MSG(poot_compile_forms_parse("static-sharedx", &f), POOT_INVALID_ARGUMENT,
                         "w-emitter, static-shared (or none)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_formats), cmocka_unit_test(test_fallback),
      cmocka_unit_test(test_blocks),  cmocka_unit_test(test_mixed),
      cmocka_unit_test(test_ffn),     cmocka_unit_test(test_row_loop),
      cmocka_unit_test(test_medium),  cmocka_unit_test(test_one_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
