/* The GGUF block codecs against hand-computed blocks and, bit for bit,
 * against the gguf package's numpy routines (tests/ref/quant_ref.py):
 * dequantization of random blocks of every format, the reference
 * quantizers byte for byte, and poot's own k-quant quantizers (q4_k, q5_k,
 * q6_k) through the gguf package's dequantizer plus their error bound. */
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

/* The formats whose quantizer the gguf package (or, q8_k, its port) has. */
static bool gguf_quantizes(const char *name) {
  return strcmp(name, "q4_k") != 0 && strcmp(name, "q5_k") != 0 && strcmp(name, "q6_k") != 0;
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

  if (f->quantize && gguf_quantizes(name)) {
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

/* The effective scale d1 and min m1 (0 for q6_k) of element e of a block,
 * decoded here from the layout (as ggml's get_scale_min_k4 and q6_k). */
static void effective_scale(const char *name, const uint8_t *b, int e, float *d1, float *m1) {
  if (strcmp(name, "q6_k") == 0) {
    uint16_t hd = (uint16_t)(b[208] | (b[209] << 8));
    *d1 = poot_f16_to_f32(hd) * (float)(int8_t)b[192 + e / 16];
    *m1 = 0.0f;
    return;
  }
  const uint8_t *q = b + 4;
  int j = e / 32;
  unsigned sc, mn;
  if (j < 4) {
    sc = q[j] & 63u;
    mn = q[j + 4] & 63u;
  } else {
    sc = (q[j + 4] & 0x0Fu) | ((unsigned)(q[j - 4] >> 6) << 4);
    mn = (unsigned)(q[j + 4] >> 4) | ((unsigned)(q[j] >> 6) << 4);
  }
  *d1 = poot_f16_to_f32((uint16_t)(b[0] | (b[1] << 8))) * (float)sc;
  *m1 = poot_f16_to_f32((uint16_t)(b[2] | (b[3] << 8))) * (float)mn;
}

/* poot's own quantizer of `name`: the round trip error within the bound of
 * poot/quant.h for every element, and the blocks it writes decoded by the
 * gguf package exactly as by poot. */
static void check_own_quantizer(const char *name) {
  const poot_quant_format *f = poot_quant_format_by_name(name);
  assert_non_null(f);
  assert_non_null(f->quantize);
  char fn[64];
  size_t in_size = 0;
  snprintf(fn, sizeof fn, "%s.in.f32", name);
  float *in = have_ref ? read_file(fn, &in_size) : NULL;
  size_t n = in_size / 4;
  if (!in) { /* no reference inputs: a ramp and a random row */
    n = 4 * POOT_QUANT_QK_K;
    in = poot_malloc(n * sizeof(float));
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
      in[i] = i < 512 ? (float)i / 64.0f - 4.0f : (float)((i * 2654435761u) % 1000) / 999.0f - 0.3f;
  }
  size_t nb = n / f->block_elems, bytes = nb * f->block_bytes;
  uint8_t *q = malloc(bytes);
  float *y = malloc(n * sizeof(float));
  assert_non_null(q);
  assert_non_null(y);
  POOT_ASSERT_OK(poot_quant_quantize_row(f, in, n, q, bytes));
  POOT_ASSERT_OK(poot_quant_dequantize_row(f, q, bytes, y, n));
  for (size_t i = 0; i < n; i++) {
    float d1, m1;
    effective_scale(name, q + (i / 256) * f->block_bytes, (int)(i % 256), &d1, &m1);
    const float bound = 0.5f * d1 + ldexpf(fabsf(in[i]) + m1 + 32.0f * d1, -21);
    if (!(fabsf(in[i] - y[i]) <= bound))
      fail_msg("%s: element %zu: %.9g came back as %.9g, more than the bound %.3g", name, i, in[i],
               y[i], bound);
  }
  if (have_ref) {
    char bin[800], out[800];
    snprintf(bin, sizeof bin, "%s/%s.poot.bin", ref_dir, name);
    snprintf(out, sizeof out, "%s/%s.poot.f32", ref_dir, name);
    POOT_ASSERT_OK(poot_file_write_all(bin, q, bytes));
    const char *py = getenv("PYTHON3");
    assert_int_equal(poot_test_system("%s '%s/tests/ref/quant_ref.py' --dequantize %s '%s' '%s'",
                                      py ? py : "python3", poot_test_source_dir(), name, bin, out),
                     0);
    snprintf(fn, sizeof fn, "%s.poot.f32", name);
    size_t ref_size = 0;
    float *ref = read_file(fn, &ref_size);
    assert_non_null(ref);
    assert_int_equal(ref_size, n * sizeof(float));
    assert_same_floats(name, y, ref, n);
    poot_free(ref);
  }
  free(q);
  free(y);
  poot_free(in);
}

/* The quality of poot's k-quant quantizers on normal-distributed rows:
 * the RMS error relative to the RMS value, and the worst element relative
 * to its sub-block's range. */
static void check_quality(const char *name, double max_rel_rms) {
  const poot_quant_format *f = poot_quant_format_by_name(name);
  enum { N = 64 * 256 };
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  uint8_t *q = malloc(64 * (size_t)f->block_bytes);
  assert_true(x && y && q);
  uint64_t s = 12345;
  for (int i = 0; i < N; i += 2) { /* Box-Muller from an LCG */
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = ((double)(s >> 11) + 1.0) / 9007199254740993.0;
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = (double)(s >> 11) / 9007199254740992.0;
    double r = sqrt(-2.0 * log(u1));
    x[i] = (float)(0.02 * r * cos(6.283185307179586 * u2));
    x[i + 1] = (float)(0.02 * r * sin(6.283185307179586 * u2));
  }
  f->quantize(x, q, 64);
  f->dequantize(q, y, 64);
  double se = 0, sx = 0;
  for (int i = 0; i < N; i++) {
    se += (double)(x[i] - y[i]) * (x[i] - y[i]);
    sx += (double)x[i] * x[i];
  }
  double rel = sqrt(se / sx);
  printf("%s: relative RMS error %.4f on N(0, 0.02) rows\n", name, rel);
  assert_true(rel <= max_rel_rms);
  free(x);
  free(y);
  free(q);
}

/* Non-finite inputs give defined codes (no undefined conversion: the
 * sanitizer build checks) and leave the next block alone. */
static void check_nonfinite(const char *name) {
  const poot_quant_format *f = poot_quant_format_by_name(name);
  float x[512];
  for (int i = 0; i < 512; i++) x[i] = (float)(i % 17) * 0.01f;
  x[3] = NAN;
  x[40] = INFINITY;
  x[200] = -INFINITY;
  uint8_t q[2 * 292];
  float y[512], y1[256];
  f->quantize(x, q, 2);
  f->dequantize(q, y, 2);
  f->quantize(x + 256, q, 1);
  f->dequantize(q, y1, 1);
  assert_memory_equal(y + 256, y1, sizeof y1);
}

static void test_own_q4_k(void **state) {
  (void)state;
  check_nonfinite("q4_k");
  check_nonfinite("q5_k");
  check_nonfinite("q6_k");
  check_own_quantizer("q4_k");
  check_quality("q4_k", 0.10);
}
static void test_own_q5_k(void **state) {
  (void)state;
  check_own_quantizer("q5_k");
  check_quality("q5_k", 0.05);
}
static void test_own_q6_k(void **state) {
  (void)state;
  check_own_quantizer("q6_k");
  check_quality("q6_k", 0.03);
}

/* Hand-built q2_k and q3_k blocks. */
static void test_hand_q2_q3(void **state) {
  (void)state;
  /* q2_k: d = 1, dmin = 0.5; group g: scale g & 15, min 1; every 2-bit
   * field of qs byte i is (i & 3). */
  uint8_t b[84] = {0};
  for (int g = 0; g < 16; g++) b[g] = (uint8_t)((g & 15) | (1 << 4));
  for (int i = 0; i < 64; i++) b[16 + i] = (uint8_t)((i & 3) * 0x55);
  b[81] = 0x3C;
  b[83] = 0x38;
  float y[256];
  poot_quant_dequantize_q2_k(b, y, 1);
  for (int e = 0; e < 256; e++) {
    int h = e / 128, l = e % 32;
    int q = (32 * h + l) & 3;
    assert_true(y[e] == (float)(e / 16) * (float)q - 0.5f);
  }
  /* q3_k: d = 0.5; scale of group g: 6-bit value g + 24 (so g − 8 after
   * the −32); hmask bit set for the even elements of each 32; qs fields 3. */
  uint8_t c[110] = {0};
  for (int g = 0; g < 16; g++) {
    unsigned v = (unsigned)g + 24;
    c[96 + g % 8] |= (uint8_t)((v & 15) << (4 * (g / 8)));
    c[104 + g % 4] |= (uint8_t)((v >> 4) << (2 * (g / 4)));
  }
  for (int l = 0; l < 32; l++) c[l] = (l & 1) ? 0x00 : 0xFF;
  for (int i = 0; i < 64; i++) c[32 + i] = 0xFF;
  c[109] = 0x38;
  poot_quant_dequantize_q3_k(c, y, 1);
  for (int e = 0; e < 256; e++) {
    int q = (e & 1) ? 3 - 4 : 3;
    assert_true(y[e] == 0.5f * (float)(e / 16 - 8) * (float)q);
  }
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
static void test_ref_q2_k(void **state) { (void)state; check_format("q2_k"); }
static void test_ref_q3_k(void **state) { (void)state; check_format("q3_k"); }

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
  assert_int_equal(n, 11);
  assert_ptr_equal(poot_quant_format_by_ggml_type(14), poot_quant_format_by_name("Q6_K"));
  assert_null(poot_quant_format_by_name("iq4_nl"));
  assert_ptr_equal(poot_quant_format_of_dtype(POOT_DTYPE_Q3_K), poot_quant_format_by_ggml_type(11));
  assert_null(poot_quant_format_by_ggml_type(0));
  for (size_t i = 0; i < n; i++) assert_true(t[i].block_bytes > 0 && t[i].dequantize);
  float y[64];
  uint8_t b[64] = {0};
  const poot_quant_format *q80 = poot_quant_format_by_name("q8_0");
  POOT_ASSERT_STATUS_MSG(poot_quant_dequantize_row(q80, b, 34, y, 31), POOT_INVALID_ARGUMENT,
                         "multiple");
  POOT_ASSERT_STATUS_MSG(poot_quant_dequantize_row(q80, b, 33, y, 32), POOT_INVALID_ARGUMENT,
                         "bytes");
  POOT_ASSERT_STATUS_MSG(poot_quant_quantize_row(poot_quant_format_by_name("q2_k"), y, 0, b, 0),
                         POOT_UNSUPPORTED, "q2_k");
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
      cmocka_unit_test(test_ref_q8_k),      cmocka_unit_test(test_ref_q2_k),
      cmocka_unit_test(test_ref_q3_k),      cmocka_unit_test(test_hand_q2_q3),
      cmocka_unit_test(test_own_q4_k),      cmocka_unit_test(test_own_q5_k),
      cmocka_unit_test(test_own_q6_k),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  if (failed) return 1;
  if (!have_ref) return poot_test_skip("python3 with numpy and gguf is absent");
  return 0;
}
