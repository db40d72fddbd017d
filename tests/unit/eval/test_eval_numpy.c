/* poot_eval against numpy (tests/ref/eval_ref.py) and gguf on random inputs.
 *
 * This program builds one small graph per case, evaluates it, and writes the
 * case's inputs and poot_eval's output as .npy files with a manifest line;
 * the reference script then recomputes every case with numpy (and gguf for
 * dequantize) and compares, bit for bit where numpy computes the same thing
 * in the same order, and within the ULP bounds derived in docs/eval.md
 * otherwise. SKIPs when python3, numpy or gguf is absent. */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>

#include "npy.h"
#include "poot/eval.h"
#include "poot/graph.h"
#include "poot/quant.h"

static char dir[600];
static FILE *manifest;
static uint64_t rng_state = 0x5eed2026u;

/* Random f32 values: mostly uniform in [lo, hi), with a sprinkling of
 * specials (when `specials`) — ±0, ±inf, NaN, denormals, huge values. */
static void fill(float *x, int64_t n, float lo, float hi, bool specials) {
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-42f, 3e38f,
                             -3e38f, 1.0f, -1.0f, 0.5f, 2.5f, -2.5f};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = poot_test_rand_u64(&rng_state);
    if (specials && r % 11 == 0) {
      x[i] = sp[(r >> 8) % (sizeof sp / sizeof sp[0])];
    } else {
      double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);
      x[i] = (float)(lo + (hi - lo) * u);
    }
  }
}

static poot_npy_type npy_of(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_F32: return POOT_NPY_F32;
    case POOT_DTYPE_F16: return POOT_NPY_F16;
    case POOT_DTYPE_BF16: return POOT_NPY_BF16;
    case POOT_DTYPE_I8: return POOT_NPY_I8;
    case POOT_DTYPE_I32: return POOT_NPY_I32;
    case POOT_DTYPE_BOOL: return POOT_NPY_BOOL;
    default: return POOT_NPY_U8; /* packed: raw bytes */
  }
}

static void write_tensor(const char *name, const char *suffix, const poot_tensor *t) {
  poot_npy a = {.type = npy_of(t->type.dtype), .rank = (int)t->type.shape.rank,
                .data = t->data, .bytes = t->size};
  for (uint32_t d = 0; d < t->type.shape.rank; d++) a.shape[d] = t->type.shape.dims[d];
  if (poot_dtype_is_packed(t->type.dtype)) {
    a.rank = 1;
    a.shape[0] = (int64_t)t->size;
  }
  char path[800];
  snprintf(path, sizeof path, "%s/%s.%s.npy", dir, name, suffix);
  POOT_ASSERT_OK(poot_npy_write(path, &a));
}

/* Builds x (and y) as constants, applies the op family, evaluates, writes. */
typedef poot_status (*build_fn)(poot_graph *g, const poot_value *in, poot_value *out, const void *arg);

static void run_case(const char *name, const char *kind, uint32_t n_in, const poot_tensor *ins,
                     build_fn build, const void *arg) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_value in[4], out;
  for (uint32_t i = 0; i < n_in; i++) {
    POOT_ASSERT_OK(poot_graph_add_const(g, &ins[i], &in[i]));
    char suffix[16];
    snprintf(suffix, sizeof suffix, "in%u", i);
    write_tensor(name, suffix, &ins[i]);
  }
  POOT_ASSERT_OK(build(g, in, &out, arg));
  POOT_ASSERT_OK(poot_graph_set_output(g, out));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, NULL, NULL, &ev));
  write_tensor(name, "out", &ev->output);
  fprintf(manifest, "%s %s %u\n", name, kind, n_in);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static poot_status b_unary(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  return poot_graph_unary(g, *(const poot_op *)a, in[0], out);
}
static poot_status b_binary(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  return poot_graph_binary(g, *(const poot_op *)a, in[0], in[1], out);
}
static poot_status b_convert(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  return poot_graph_convert(g, in[0], *(const poot_dtype *)a, out);
}
static poot_status b_sum(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  int64_t d = 1;
  return poot_graph_reduce(g, in[0], POOT_REDUCE_SUM, 1, &d, POOT_DTYPE_F32, out);
}
static poot_status b_max(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  int64_t d = 1;
  return poot_graph_reduce(g, in[0], POOT_REDUCE_MAX, 1, &d, POOT_DTYPE_F32, out);
}
static poot_status b_cumsum(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  return poot_graph_cumsum(g, in[0], 1, POOT_DTYPE_F32, out);
}
static poot_status b_matmul(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  poot_dot_dims dd = {.num_contract = 1, .lhs_contract = {1}, .rhs_contract = {0}};
  return poot_graph_dot_general(g, in[0], in[1], &dd, POOT_DTYPE_F32, out);
}
static poot_status b_softmax(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  return poot_graph_softmax(g, in[0], 1, out);
}
static poot_status b_dequant(poot_graph *g, const poot_value *in, poot_value *out, const void *a) {
  (void)a;
  return poot_graph_dequantize(g, in[0], POOT_DTYPE_F32, out);
}

static poot_tensor make_f32(float *data, int64_t rows, int64_t cols) {
  poot_tensor t = {.type = poot_type_make(POOT_DTYPE_F32, 2, (const int64_t[]){rows, cols}),
                   .data = data, .size = (size_t)(rows * cols) * 4};
  return t;
}

/* Converts f32 data to a 16-bit dtype tensor (storage in `bits`). */
static poot_tensor make_half(poot_dtype dt, const float *x, uint16_t *bits, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    bits[i] = dt == POOT_DTYPE_F16 ? poot_f32_to_f16(x[i]) : poot_f32_to_bf16(x[i]);
  poot_tensor t = {.type = poot_type_make(dt, 1, &n), .data = bits, .size = (size_t)n * 2};
  return t;
}

enum { NX = 512 };

static void test_cases(void **state) {
  (void)state;
  static float a[NX], b[NX], c[NX];
  char name[64];
  /* Elementwise f32: every binary and unary float op. */
  static const struct {
    poot_op op;
    float lo, hi;
  } bins[] = {{POOT_OP_ADD, -100, 100}, {POOT_OP_SUB, -100, 100}, {POOT_OP_MUL, -100, 100},
              {POOT_OP_DIV, -100, 100}, {POOT_OP_REM, -100, 100}, {POOT_OP_MAX, -100, 100},
              {POOT_OP_MIN, -100, 100}, {POOT_OP_POW, 0, 4},      {POOT_OP_EQ, -2, 2},
              {POOT_OP_NE, -2, 2},      {POOT_OP_LT, -2, 2},      {POOT_OP_LE, -2, 2},
              {POOT_OP_GT, -2, 2},      {POOT_OP_GE, -2, 2}};
  for (size_t k = 0; k < sizeof bins / sizeof bins[0]; k++) {
    fill(a, NX, bins[k].lo, bins[k].hi, true);
    fill(b, NX, bins[k].lo, bins[k].hi, true);
    if (bins[k].op >= POOT_OP_EQ)
      for (int i = 0; i < NX; i += 7) b[i] = a[i]; /* some equal pairs */
    poot_tensor t[2] = {make_f32(a, 1, NX), make_f32(b, 1, NX)};
    snprintf(name, sizeof name, "f32_%s", poot_op_name(bins[k].op));
    run_case(name, poot_op_name(bins[k].op), 2, t, b_binary, &bins[k].op);
  }
  static const struct {
    poot_op op;
    float lo, hi;
  } uns[] = {{POOT_OP_NEG, -10, 10},   {POOT_OP_ABS, -10, 10},    {POOT_OP_SIGN, -10, 10},
             {POOT_OP_EXP, -90, 90},   {POOT_OP_EXP2, -130, 130}, {POOT_OP_LOG, 0, 1000},
             {POOT_OP_LOG2, 0, 1000},  {POOT_OP_SQRT, 0, 1000},   {POOT_OP_RSQRT, 0, 1000},
             {POOT_OP_SIN, -100, 100}, {POOT_OP_COS, -100, 100},  {POOT_OP_TANH, -10, 10},
             {POOT_OP_ERF, -4, 4},     {POOT_OP_FLOOR, -50, 50},  {POOT_OP_CEIL, -50, 50},
             {POOT_OP_ROUND, -50, 50}, {POOT_OP_SIGMOID, -20, 20}};
  for (size_t k = 0; k < sizeof uns / sizeof uns[0]; k++) {
    fill(a, NX, uns[k].lo, uns[k].hi, true);
    if (uns[k].op == POOT_OP_ROUND)
      for (int i = 0; i < NX; i += 5) a[i] = floorf(a[i]) + 0.5f; /* exact halves */
    poot_tensor t[1] = {make_f32(a, 1, NX)};
    snprintf(name, sizeof name, "f32_%s", poot_op_name(uns[k].op));
    run_case(name, poot_op_name(uns[k].op), 1, t, b_unary, &uns[k].op);
  }
  /* f16 and bf16 arithmetic: computed in f32, rounded on store. */
  static uint16_t ha[NX], hb[NX];
  const poot_dtype halves[2] = {POOT_DTYPE_F16, POOT_DTYPE_BF16};
  const poot_op hops[4] = {POOT_OP_ADD, POOT_OP_SUB, POOT_OP_MUL, POOT_OP_DIV};
  for (int h = 0; h < 2; h++) {
    for (int k = 0; k < 4; k++) {
      fill(a, NX, -300, 300, true);
      fill(b, NX, -300, 300, true);
      poot_tensor t[2] = {make_half(halves[h], a, ha, NX), make_half(halves[h], b, hb, NX)};
      snprintf(name, sizeof name, "%s_%s", poot_dtype_name(halves[h]), poot_op_name(hops[k]));
      run_case(name, poot_op_name(hops[k]), 2, t, b_binary, &hops[k]);
    }
    fill(a, NX, -10, 10, true);
    poot_tensor t[1] = {make_half(halves[h], a, ha, NX)};
    const poot_op e = POOT_OP_EXP;
    snprintf(name, sizeof name, "%s_exp", poot_dtype_name(halves[h]));
    run_case(name, "exp", 1, t, b_unary, &e);
  }
  /* Converts. */
  const poot_dtype to[4] = {POOT_DTYPE_F16, POOT_DTYPE_BF16, POOT_DTYPE_I32, POOT_DTYPE_I8};
  for (int k = 0; k < 4; k++) {
    fill(a, NX, k >= 2 ? -1e9f : -70000, k >= 2 ? 1e9f : 70000, k < 2);
    if (k < 2)
      for (int i = 0; i < NX; i += 3) a[i] = a[i] * 1e-9f; /* small and denormal halves */
    poot_tensor t[1] = {make_f32(a, 1, NX)};
    snprintf(name, sizeof name, "convert_f32_%s", poot_dtype_name(to[k]));
    run_case(name, "convert", 1, t, b_convert, &to[k]);
  }
  {
    static int32_t iv[NX];
    for (int i = 0; i < NX; i++) iv[i] = (int32_t)(uint32_t)poot_test_rand_u64(&rng_state);
    int64_t n = NX;
    poot_tensor t[1] = {{.type = poot_type_make(POOT_DTYPE_I32, 1, &n), .data = iv, .size = NX * 4}};
    for (int k = 0; k < 2; k++) {
      const poot_dtype d = k ? POOT_DTYPE_F16 : POOT_DTYPE_F32;
      snprintf(name, sizeof name, "convert_i32_%s", poot_dtype_name(d));
      run_case(name, "convert", 1, t, b_convert, &d);
    }
  }
  /* Reductions, cumsum, matmul, softmax (16 rows of 32). */
  fill(a, NX, -1000, 1000, false);
  poot_tensor t1[1] = {make_f32(a, 16, 32)};
  run_case("reduce_sum", "reduce_sum", 1, t1, b_sum, NULL);
  run_case("reduce_max", "reduce_max", 1, t1, b_max, NULL);
  run_case("cumsum", "cumsum", 1, t1, b_cumsum, NULL);
  fill(b, 32 * 8, -3, 3, false);
  poot_tensor t2[2] = {make_f32(a, 16, 32), make_f32(b, 32, 8)};
  run_case("matmul", "matmul", 2, t2, b_matmul, NULL);
  fill(c, NX, -8, 8, false);
  poot_tensor t3[1] = {make_f32(c, 16, 32)};
  run_case("softmax", "softmax", 1, t3, b_softmax, NULL);
  /* dequantize of every packed format gguf knows, from random valid blocks
   * (random bytes with finite f16 scales). */
  static uint8_t blocks[4 * 292];
  static const struct {
    poot_dtype dt;
    const char *name;
    int scale_offsets[2];
  } qs[] = {{POOT_DTYPE_Q8_0, "q8_0", {0, -1}}, {POOT_DTYPE_Q4_0, "q4_0", {0, -1}},
            {POOT_DTYPE_Q4_1, "q4_1", {0, 2}},  {POOT_DTYPE_Q5_0, "q5_0", {0, -1}},
            {POOT_DTYPE_Q5_1, "q5_1", {0, 2}},  {POOT_DTYPE_Q4_K, "q4_k", {0, 2}},
            {POOT_DTYPE_Q5_K, "q5_k", {0, 2}},  {POOT_DTYPE_Q6_K, "q6_k", {208, -1}},
            {POOT_DTYPE_Q2_K, "q2_k", {80, 82}}, {POOT_DTYPE_Q3_K, "q3_k", {108, -1}}};
  for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
    const poot_quant_format *f = poot_quant_format_of_dtype(qs[k].dt);
    const int64_t nb = 4;
    for (size_t i = 0; i < (size_t)nb * f->block_bytes; i++)
      blocks[i] = (uint8_t)poot_test_rand_u64(&rng_state);
    for (int64_t bi = 0; bi < nb; bi++) {
      for (int s = 0; s < 2; s++) {
        if (qs[k].scale_offsets[s] < 0) continue;
        float v = 0;
        fill(&v, 1, -2, 2, false);
        uint16_t hbits = poot_f32_to_f16(v);
        uint8_t *p = blocks + bi * f->block_bytes + qs[k].scale_offsets[s];
        p[0] = (uint8_t)hbits;
        p[1] = (uint8_t)(hbits >> 8);
      }
    }
    poot_tensor t[1] = {{.type = poot_type_make(qs[k].dt, 2,
                                                 (const int64_t[]){2, nb / 2 * f->block_elems}),
                         .data = blocks,
                         .size = (size_t)nb * f->block_bytes}};
    snprintf(name, sizeof name, "dequantize_%s", qs[k].name);
    run_case(name, qs[k].name, 1, t, b_dequant, NULL);
  }
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/numpy", poot_test_tmpdir());
  if (poot_test_system("mkdir -p '%s'", dir) != 0) return 1;
  char path[700];
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  manifest = fopen(path, "w");
  if (!manifest) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cases)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fclose(manifest);
  if (failed) return 1;
  const char *py = getenv("PYTHON3");
  int rc = poot_test_system("%s '%s/tests/ref/eval_ref.py' '%s'", py ? py : "python3",
                            poot_test_source_dir(), dir);
  if (rc == 77) return poot_test_skip("python3 with numpy and gguf is absent");
  return rc == 0 ? 0 : 1;
}
