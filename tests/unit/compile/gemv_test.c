/* gemv_test.c — the weight-streaming GEMV template (templates/gemv.c) on the
 * KIR interpreter against poot_eval, at subgroup sizes 8, 32 and 64: every
 * weight format it reads (f32, f16, bf16, q8_0, q4_0), ragged chunk counts,
 * several rows of x, x staged in several tiles, two roots sharing x with an RMSNorm prologue and a
 * SwiGLU epilogue, and the shapes it must leave to the generic contraction
 * (more rows than it takes, a row length that is not a whole chunk). The
 * plan's dispatch names say which template ran. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
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

/* Every profile: the template runs (or not) and the outputs match. */
static void check(poot_graph *g, int64_t k, bool want, const char *what) {
  B(poot_graph_verify(g));
  pt_inputs in;
  B(pt_inputs_make(g, 7, 5, 0, 1.0f, &in));
  for (int i = 0; i < 4; i++) {
    poot_kir_target t;
    profile(i, &t);
    char why[512];
    if (!pt_check_projection(g, &in, &t, sgs[i], k, "gemv", want, what, why, sizeof why))
      fail_msg("%s", why);
  }
  pt_inputs_free(&in);
}

static void one(poot_dtype wt, int64_t m, int64_t n, int64_t k, bool want) {
  poot_graph *g;
  B(poot_graph_create(&g));
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, k), w = pt_param(g, "w", wt, n, k);
  B(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  char what[64];
  snprintf(what, sizeof what, "gemv %s [%lld,%lld]x[%lld,%lld]", poot_dtype_name(wt),
           (long long)m, (long long)k, (long long)n, (long long)k);
  check(g, k, want, what);
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
}

/* Shapes the template leaves to the generic contraction. */
static void test_fallback(void **state) {
  (void)state;
  one(POOT_DTYPE_F16, 5, 3, 64, false);   /* more rows of x than it takes */
  one(POOT_DTYPE_BF16, 1, 3, 70, false);  /* not a whole 8-element chunk */
  one(POOT_DTYPE_Q4_0, 1, 3, 96, false);  /* an odd number of blocks */
  one(POOT_DTYPE_Q4_K, 1, 3, 256, false); /* a format it does not read */
}

/* Gate and up sharing an RMSNorm'd x, SwiGLU, then a down projection with
 * the residual added: the FFN of a decoder layer at four rows. */
static void test_ffn(void **state) {
  (void)state;
  for (int q = 0; q < 2; q++) {
    poot_graph *g;
    B(poot_graph_create(&g));
    int64_t m = q ? 1 : 4, h = 256, ff = 384;
    poot_dtype wt = q ? POOT_DTYPE_Q8_0 : POOT_DTYPE_F16;
    B(pt_ffn_graph(g, m, h, ff, wt));
    check(g, ff, true, q ? "ffn q8_0 m=1" : "ffn f16 m=4");
    poot_graph_destroy(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_formats),
      cmocka_unit_test(test_fallback),
      cmocka_unit_test(test_ffn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
