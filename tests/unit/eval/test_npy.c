/* The .npy reader and writer: round trips, numpy-written files, and
 * malformed headers that must be FORMAT errors, never crashes. */
#include "poot_test.h"

#include <stdlib.h>

#include "npy.h"

static void test_round_trip(void **state) {
  (void)state;
  float v[6] = {1.0f, -2.5f, 0.0f, -0.0f, 3.0e-40f, 1e30f};
  poot_npy a = {.type = POOT_NPY_F32, .rank = 2, .shape = {2, 3}, .data = v, .bytes = sizeof v};
  void *bytes = NULL;
  size_t size = 0;
  POOT_ASSERT_OK(poot_npy_serialize(&a, &bytes, &size));
  assert_int_equal((size - sizeof v) % 64, 0);
  poot_npy b;
  POOT_ASSERT_OK(poot_npy_parse(bytes, size, &b));
  assert_int_equal(b.type, POOT_NPY_F32);
  assert_int_equal(b.rank, 2);
  assert_int_equal(b.shape[0], 2);
  assert_int_equal(b.shape[1], 3);
  assert_memory_equal(b.data, v, sizeof v);
  poot_npy_deinit(&b);
  poot_free(bytes);
  /* Every type, rank 0 and an empty dimension. */
  for (int t = 0; t < POOT_NPY_TYPE_COUNT; t++) {
    uint8_t raw[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    poot_npy s = {.type = (poot_npy_type)t, .rank = 0, .data = raw,
                  .bytes = poot_npy_type_size((poot_npy_type)t)};
    POOT_ASSERT_OK(poot_npy_serialize(&s, &bytes, &size));
    POOT_ASSERT_OK(poot_npy_parse(bytes, size, &b));
    assert_int_equal(b.type, (t == POOT_NPY_BF16) ? POOT_NPY_BF16 : t);
    assert_int_equal(b.rank, 0);
    assert_memory_equal(b.data, raw, s.bytes);
    poot_npy_deinit(&b);
    poot_free(bytes);
  }
  poot_npy e = {.type = POOT_NPY_I32, .rank = 2, .shape = {4, 0}, .data = NULL, .bytes = 0};
  POOT_ASSERT_OK(poot_npy_serialize(&e, &bytes, &size));
  POOT_ASSERT_OK(poot_npy_parse(bytes, size, &b));
  assert_int_equal(b.shape[1], 0);
  assert_int_equal(b.bytes, 0);
  poot_npy_deinit(&b);
  poot_free(bytes);
}

static poot_status parse_text(const char *header, size_t data_bytes, int version) {
  uint8_t buf[512] = {0};
  size_t hl = strlen(header), start = version == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)version;
  buf[8] = (uint8_t)hl;
  memcpy(buf + start, header, hl);
  poot_npy a;
  poot_status s = poot_npy_parse(buf, start + hl + data_bytes, &a);
  poot_npy_deinit(&a);
  return s;
}

static void test_malformed(void **state) {
  (void)state;
  POOT_ASSERT_OK(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", 8, 1));
  POOT_ASSERT_OK(parse_text("{\"descr\":\"<f2\",\"fortran_order\":False,\"shape\":(1,2)}", 4, 2));
  POOT_ASSERT_STATUS_MSG(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 7, 1),
                         POOT_FORMAT, "data bytes");
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'shape': (2,), }", 8, 1), POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': Maybe, 'shape': (2,)}", 8, 1),
                     POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': (x,)}", 8, 1),
                     POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': (2,", 8, 1),
                     POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("['descr']", 0, 1), POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': "
                                "(99999999999, 99999999999, 99999999999)}", 0, 1),
                     POOT_FORMAT);
  POOT_ASSERT_STATUS(parse_text("{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}", 8, 1),
                     POOT_UNSUPPORTED);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16, 1),
                     POOT_UNSUPPORTED);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': True, 'shape': (2,)}", 8, 1),
                     POOT_UNSUPPORTED);
  POOT_ASSERT_STATUS(parse_text("{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", 8, 9),
                     POOT_UNSUPPORTED);
  /* Truncations of a valid file at every length. */
  int32_t v[3] = {1, 2, 3};
  poot_npy a = {.type = POOT_NPY_I32, .rank = 1, .shape = {3}, .data = v, .bytes = sizeof v};
  void *bytes = NULL;
  size_t size = 0;
  POOT_ASSERT_OK(poot_npy_serialize(&a, &bytes, &size));
  for (size_t n = 0; n < size; n++) {
    poot_npy b;
    poot_status s = poot_npy_parse(bytes, n, &b);
    assert_non_null(s);
    assert_int_equal(poot_status_consume(s), POOT_FORMAT);
    assert_null(b.data);
  }
  /* A header length that points past the end. */
  ((uint8_t *)bytes)[9] = 0x7f;
  poot_npy b;
  POOT_ASSERT_STATUS_MSG(poot_npy_parse(bytes, size, &b), POOT_FORMAT, "past the end");
  poot_free(bytes);
}

/* Files written by numpy itself, when python3 with numpy is present. */
static void test_numpy_files(void **state) {
  (void)state;
  const char *dir = poot_test_tmpdir();
  int rc = poot_test_system(
      "python3 -c \"import numpy as np, sys; d=sys.argv[1]; "
      "np.save(d+'/a.npy', np.arange(12, dtype=np.float32).reshape(3,4)); "
      "np.save(d+'/b.npy', np.array([True, False, True])); "
      "np.save(d+'/c.npy', np.int64(-5)); "
      "np.save(d+'/d.npy', np.array([[1.5]], dtype=np.float16))\" '%s' 2>/dev/null",
      dir);
  if (rc != 0) skip();
  char path[700];
  poot_npy a;
  snprintf(path, sizeof path, "%s/a.npy", dir);
  POOT_ASSERT_OK(poot_npy_read(path, &a));
  assert_int_equal(a.type, POOT_NPY_F32);
  assert_int_equal(a.rank, 2);
  assert_int_equal(a.shape[0], 3);
  assert_true(((float *)a.data)[11] == 11.0f);
  poot_npy_deinit(&a);
  snprintf(path, sizeof path, "%s/b.npy", dir);
  POOT_ASSERT_OK(poot_npy_read(path, &a));
  assert_int_equal(a.type, POOT_NPY_BOOL);
  assert_int_equal(((uint8_t *)a.data)[2], 1);
  poot_npy_deinit(&a);
  snprintf(path, sizeof path, "%s/c.npy", dir);
  POOT_ASSERT_OK(poot_npy_read(path, &a));
  assert_int_equal(a.type, POOT_NPY_I64);
  assert_int_equal(a.rank, 0);
  assert_int_equal(((int64_t *)a.data)[0], -5);
  poot_npy_deinit(&a);
  snprintf(path, sizeof path, "%s/d.npy", dir);
  POOT_ASSERT_OK(poot_npy_read(path, &a));
  assert_int_equal(a.type, POOT_NPY_F16);
  assert_int_equal(((uint16_t *)a.data)[0], 0x3E00);
  poot_npy_deinit(&a);
  snprintf(path, sizeof path, "%s/missing.npy", dir);
  poot_status s = poot_npy_read(path, &a);
  assert_non_null(s);
  poot_status_free(s);
  /* And numpy reads what we write. */
  int16_t w[4] = {-1, 2, -3, 32767};
  poot_npy o = {.type = POOT_NPY_I16, .rank = 2, .shape = {2, 2}, .data = w, .bytes = sizeof w};
  snprintf(path, sizeof path, "%s/w.npy", dir);
  POOT_ASSERT_OK(poot_npy_write(path, &o));
  rc = poot_test_system("python3 -c \"import numpy as np, sys; a=np.load(sys.argv[1]); "
                        "sys.exit(0 if a.dtype==np.int16 and a.shape==(2,2) and "
                        "a.tolist()==[[-1,2],[-3,32767]] else 1)\" '%s'",
                        path);
  assert_int_equal(rc, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_numpy_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
