/* The GGUF block codecs against hand-computed blocks and, bit for bit,
 * against the gguf package's numpy routines (tests/ref/quant_ref.py). */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>

#include "poot/quant.h"

static char ref_dir[600];
static bool have_ref;

/* Reads a whole reference file; NULL with *out_size 0 when absent. */
static void *read_file(const char *name, size_t *out_size) {
  char path[800];
  snprintf(path, sizeof path, "%s/%s", ref_dir, name);
  char *data = NULL;
  size_t size = 0;
  poot_status s = poot_file_read_all(path, &data, &size);
  if (s) {
    poot_status_free(s);
    *out_size = 0;
    return NULL;
  }
  *out_size = size;
  return data;
}

static void assert_same_floats(const char *what, const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (poot_f32_bits(got[i]) != poot_f32_bits(want[i]))
      fail_msg("%s: element %zu is %.9g (0x%08x), reference %.9g (0x%08x)", what, i, got[i],
               poot_f32_bits(got[i]), want[i], poot_f32_bits(want[i]));
  }
}

static void check_format(const char *name) {
  if (!have_ref) skip();
  const poot_quant_format *f = poot_quant_format_by_name(name);
  assert_non_null(f);
  char fn[64];
  size_t in_size = 0, q_size = 0, qd_size = 0, rq_size = 0, rqd_size = 0;
  snprintf(fn, sizeof fn, "%s.in.f32", name);
  float *in = read_file(fn, &in_size);
  snprintf(fn, sizeof fn, "%s.rq.bin", name);
  uint8_t *rq = read_file(fn, &rq_size);
  snprintf(fn, sizeof fn, "%s.rqd.f32", name);
  float *rqd = read_file(fn, &rqd_size);
  assert_non_null(in);
  assert_non_null(rq);
  assert_non_null(rqd);

  /* Random valid blocks: dequantization is bit-identical. */
  size_t n = rqd_size / 4;
  assert_int_equal(rq_size, n / f->block_elems * f->block_bytes);
  float *got = malloc(n * sizeof(float) + 1);
  POOT_ASSERT_OK(poot_quant_dequantize_row(f, rq, rq_size, got, n));
  assert_same_floats(name, got, rqd, n);
  free(got);

  if (f->quantize) {
    snprintf(fn, sizeof fn, "%s.q.bin", name);
    uint8_t *q = read_file(fn, &q_size);
    snprintf(fn, sizeof fn, "%s.qd.f32", name);
    float *qd = read_file(fn, &qd_size);
    assert_non_null(q);
    assert_non_null(qd);
    size_t m = in_size / 4;
    assert_int_equal(q_size, m / f->block_elems * f->block_bytes);
    uint8_t *mine = malloc(q_size + 1);
    POOT_ASSERT_OK(poot_quant_quantize_row(f, in, m, mine, q_size));
    for (size_t i = 0; i < q_size; i++) {
      if (mine[i] != q[i])
        fail_msg("%s quantize: byte %zu of block %zu is 0x%02x, gguf wrote 0x%02x", name,
                 i % f->block_bytes, i / f->block_bytes, mine[i], q[i]);
    }
    float *deq = malloc(m * sizeof(float) + 1);
    POOT_ASSERT_OK(poot_quant_dequantize_row(f, mine, q_size, deq, m));
    assert_same_floats(name, deq, qd, m);
    free(deq);
    free(mine);
    poot_free(q);
    poot_free(qd);
  }
  poot_free(in);
  poot_free(rq);
  poot_free(rqd);
}

static void test_ref_q8_0(void **state) { (void)state; check_format("q8_0"); }
static void test_ref_q4_0(void **state) { (void)state; check_format("q4_0"); }
static void test_ref_q4_1(void **state) { (void)state; check_format("q4_1"); }
static void test_ref_q5_0(void **state) { (void)state; check_format("q5_0"); }
static void test_ref_q5_1(void **state) { (void)state; check_format("q5_1"); }
static void test_ref_q4_k(void **state) { (void)state; check_format("q4_k"); }
static void test_ref_q5_k(void **state) { (void)state; check_format("q5_k"); }
static void test_ref_q6_k(void **state) { (void)state; check_format("q6_k"); }
static void test_ref_q8_k(void **state) { (void)state; check_format("q8_k"); }

/* Hand-computed blocks. */
static void test_hand_q8_0(void **state) {
  (void)state;
  float x[32] = {0};
  x[0] = 127.0f;
  x[1] = -63.5f; /* -63.5 rounds away from zero to -64 */
  x[2] = 0.5f;   /* 0.5 → 1 */
  x[3] = -0.49f;
  uint8_t b[34];
  poot_quant_quantize_q8_0(x, b, 1);
  assert_int_equal(b[0] | (b[1] << 8), 0x3C00); /* d = 127/127 = 1.0 in f16 */
  assert_int_equal((int8_t)b[2], 127);
  assert_int_equal((int8_t)b[3], -64);
  assert_int_equal((int8_t)b[4], 1);
  assert_int_equal((int8_t)b[5], 0);
  float y[32];
  poot_quant_dequantize_q8_0(b, y, 1);
  assert_true(y[0] == 127.0f && y[1] == -64.0f && y[2] == 1.0f && y[5] == 0.0f);
}

static void test_hand_q4_0(void **state) {
  (void)state;
  /* d = 0.5 (f16 0x3800); q[j] = j & 15 for the low half, 15 - (j&15) high. */
  uint8_t b[18] = {0x00, 0x38};
  for (int j = 0; j < 16; j++) b[2 + j] = (uint8_t)(j | ((15 - j) << 4));
  float y[32];
  poot_quant_dequantize_q4_0(b, y, 1);
  for (int j = 0; j < 16; j++) {
    assert_true(y[j] == 0.5f * (float)(j - 8));
    assert_true(y[j + 16] == 0.5f * (float)(7 - j));
  }
  /* Quantizing those values gives back the same codes except the scale sign:
   * the largest magnitude is -4 (code 0), so d = -4 / -8 = 0.5. */
  uint8_t q[18];
  poot_quant_quantize_q4_0(y, q, 1);
  assert_memory_equal(q, b, 18);
}

static void test_hand_q4_1_q5(void **state) {
  (void)state;
  /* q4_1: d = 1, m = -2: y = q - 2. */
  uint8_t b[20] = {0x00, 0x3C, 0x00, 0xC0};
  for (int j = 0; j < 16; j++) b[4 + j] = (uint8_t)(j | (j << 4));
  float y[32];
  poot_quant_dequantize_q4_1(b, y, 1);
  for (int j = 0; j < 16; j++) assert_true(y[j] == (float)j - 2.0f && y[j + 16] == y[j]);
  /* q5_0: d = 1, qh bit j set for j odd: y = q + 16*(j odd) - 16. */
  uint8_t c[22] = {0x00, 0x3C, 0xAA, 0xAA, 0xAA, 0xAA};
  for (int j = 0; j < 16; j++) c[6 + j] = (uint8_t)(3 | (5 << 4));
  poot_quant_dequantize_q5_0(c, y, 1);
  for (int j = 0; j < 16; j++) {
    assert_true(y[j] == (float)(3 + 16 * (j & 1) - 16));
    assert_true(y[j + 16] == (float)(5 + 16 * (j & 1) - 16));
  }
  /* q5_1 with d = 2, m = 1. */
  uint8_t e[24] = {0x00, 0x40, 0x00, 0x3C, 0xFF, 0xFF, 0x00, 0x00};
  for (int j = 0; j < 16; j++) e[8 + j] = 0x21;
  poot_quant_dequantize_q5_1(e, y, 1);
  for (int j = 0; j < 16; j++) {
    assert_true(y[j] == 2.0f * 17.0f + 1.0f);     /* low nibble 1, bit 16 set */
    assert_true(y[j + 16] == 2.0f * 2.0f + 1.0f); /* high nibble 2, no fifth bit */
  }
}

static void test_hand_k(void **state) {
  (void)state;
  /* q4_k: d = 1, dmin = 0.5, sub-block s has scale s+1 and min s (s < 4),
   * and for s >= 4 the high bits come from bytes 0..7 and 8..11. */
  uint8_t b[144] = {0x00, 0x3C, 0x00, 0x38};
  uint8_t *sc = b + 4;
  for (int s = 0; s < 4; s++) {
    sc[s] = (uint8_t)(s + 1) | 0x40;     /* sub-block s+4 scale high bits = 01 */
    sc[s + 4] = (uint8_t)s | 0x80;       /* sub-block s+4 min high bits = 10 */
    sc[s + 8] = (uint8_t)(2 | (3 << 4)); /* s+4: scale low 2, min low 3 */
  }
  for (int i = 0; i < 128; i++) b[16 + i] = 0x97; /* low nibble 7, high 9 */
  float y[256];
  poot_quant_dequantize_q4_k(b, y, 1);
  for (int s = 0; s < 8; s++) {
    unsigned scale = s < 4 ? (unsigned)s + 1 : (2u | (1u << 4));
    unsigned mn = s < 4 ? (unsigned)s : (3u | (2u << 4));
    float q = (s & 1) ? 9.0f : 7.0f;
    float want = (1.0f * (float)scale) * q - 0.5f * (float)mn;
    for (int l = 0; l < 32; l++) assert_true(y[32 * s + l] == want);
  }
  /* q6_k: d = 0.25, scales[g] = g - 8, every code 33 (q - 32 = 1). */
  uint8_t c[210] = {0};
  for (int i = 0; i < 128; i++) c[i] = 0x11; /* both nibbles 1 */
  for (int i = 0; i < 64; i++) c[128 + i] = 0xAA; /* each 2-bit field = 2 */
  for (int g = 0; g < 16; g++) c[192 + g] = (uint8_t)(int8_t)(g - 8);
  c[208] = 0x00;
  c[209] = 0x34; /* 0.25 */
  poot_quant_dequantize_q6_k(c, y, 1);
  for (int e = 0; e < 256; e++) assert_true(y[e] == 0.25f * (float)(e / 16 - 8) * 1.0f);
  /* q8_k round trip of a ramp. */
  float x[256];
  for (int j = 0; j < 256; j++) x[j] = (float)(j - 128) / 128.0f;
  uint8_t k[292];
  poot_quant_quantize_q8_k(x, k, 1);
  poot_quant_dequantize_q8_k(k, y, 1);
  for (int j = 0; j < 256; j++) assert_true(fabsf(y[j] - x[j]) <= 1.0f / 127.0f);
  int16_t bs0 = (int16_t)(k[260] | (k[261] << 8));
  int sum = 0;
  for (int j = 0; j < 16; j++) sum += (int8_t)k[4 + j];
  assert_int_equal(bs0, sum);
}

static void test_table_and_errors(void **state) {
  (void)state;
  size_t n = 0;
  const poot_quant_format *t = poot_quant_formats(&n);
  assert_int_equal(n, 9);
  assert_ptr_equal(poot_quant_format_by_ggml_type(14), poot_quant_format_by_name("Q6_K"));
  assert_null(poot_quant_format_by_name("q2_k"));
  assert_null(poot_quant_format_by_ggml_type(0));
  for (size_t i = 0; i < n; i++) assert_true(t[i].block_bytes > 0 && t[i].dequantize);
  float y[64];
  uint8_t b[64] = {0};
  const poot_quant_format *q80 = poot_quant_format_by_name("q8_0");
  POOT_ASSERT_STATUS_MSG(poot_quant_dequantize_row(q80, b, 34, y, 31), POOT_INVALID_ARGUMENT,
                         "multiple");
  POOT_ASSERT_STATUS_MSG(poot_quant_dequantize_row(q80, b, 33, y, 32), POOT_INVALID_ARGUMENT,
                         "bytes");
  POOT_ASSERT_STATUS(poot_quant_quantize_row(poot_quant_format_by_name("q4_k"), y, 0, b, 0),
                     POOT_UNSUPPORTED);
  POOT_ASSERT_OK(poot_quant_dequantize_row(q80, b, 0, y, 0));
}

int main(void) {
  const char *py = getenv("PYTHON3");
  snprintf(ref_dir, sizeof ref_dir, "%s/quant", poot_test_tmpdir());
  int rc = poot_test_system("%s '%s/tests/ref/quant_ref.py' '%s' >/dev/null", py ? py : "python3",
                            poot_test_source_dir(), ref_dir);
  if (rc == 77) {
    printf("note: gguf/numpy missing, the reference comparisons are skipped\n");
  } else if (rc != 0) {
    fprintf(stderr, "quant_ref.py failed with status %d\n", rc);
    return 1;
  }
  have_ref = rc == 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_q8_0),     cmocka_unit_test(test_hand_q4_0),
      cmocka_unit_test(test_hand_q4_1_q5),  cmocka_unit_test(test_hand_k),
      cmocka_unit_test(test_table_and_errors),
      cmocka_unit_test(test_ref_q8_0),      cmocka_unit_test(test_ref_q4_0),
      cmocka_unit_test(test_ref_q4_1),      cmocka_unit_test(test_ref_q5_0),
      cmocka_unit_test(test_ref_q5_1),      cmocka_unit_test(test_ref_q4_k),
      cmocka_unit_test(test_ref_q5_k),      cmocka_unit_test(test_ref_q6_k),
      cmocka_unit_test(test_ref_q8_k),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  if (failed) return 1;
  if (!have_ref) return poot_test_skip("python3 with numpy and gguf is absent");
  return 0;
}
