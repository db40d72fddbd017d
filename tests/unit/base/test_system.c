/* File mapping, dynamic loading, timing and logging. */
#include <math.h>

#include "poot_test.h"

#include <sys/stat.h>
#include <unistd.h>

static void test_files(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/f.bin", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_file_write_all(path, "hello\0world", 11));
  poot_file_map m;
  POOT_ASSERT_OK(poot_file_map_open(path, &m));
  assert_int_equal(m.size, 11);
  assert_memory_equal(m.data, "hello\0world", 11);
  poot_file_map_close(&m);
  poot_file_map_close(&m); /* idempotent */
  char *data;
  size_t size;
  POOT_ASSERT_OK(poot_file_read_all(path, &data, &size));
  assert_int_equal(size, 11);
  assert_int_equal(data[11], 0);
  poot_free(data);
  snprintf(path, sizeof path, "%s/empty", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_file_write_all(path, "", 0));
  POOT_ASSERT_OK(poot_file_map_open(path, &m));
  assert_int_equal(m.size, 0);
  poot_file_map_close(&m);
  POOT_ASSERT_STATUS_MSG(poot_file_map_open("/nonexistent/poot/x", &m), POOT_NOT_FOUND,
                         "/nonexistent/poot/x");
  POOT_ASSERT_STATUS(poot_file_map_open(poot_test_tmpdir(), &m), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_file_read_all("/nonexistent/poot/x", &data, &size), POOT_NOT_FOUND);
}

/* A FIFO, a device or a folder is refused at once with the path named; the
 * readers never block in open() waiting for a writer. */
static void test_not_regular_files(void **state) {
  (void)state;
  char fifo[1024];
  snprintf(fifo, sizeof fifo, "%s/model.fifo", poot_test_tmpdir());
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(30); /* a blocking open would hang the test: fail it instead */
  poot_file_map m;
  POOT_ASSERT_STATUS_MSG(poot_file_map_open(fifo, &m), POOT_INVALID_ARGUMENT, "FIFO");
  POOT_ASSERT_STATUS_MSG(poot_file_map_open(fifo, &m), POOT_INVALID_ARGUMENT, fifo);
  assert_null(m.data);
  char *data = (char *)1;
  size_t size = 1;
  POOT_ASSERT_STATUS_MSG(poot_file_read_all(fifo, &data, &size), POOT_INVALID_ARGUMENT,
                         "not a regular file");
  assert_null(data);
  assert_int_equal(size, 0);
  POOT_ASSERT_STATUS_MSG(poot_file_read_all("/dev/null", &data, &size), POOT_INVALID_ARGUMENT,
                         "character device");
  POOT_ASSERT_STATUS_MSG(poot_file_read_all(poot_test_tmpdir(), &data, &size),
                         POOT_INVALID_ARGUMENT, "folder");
  alarm(0);
}

static void test_dylib(void **state) {
  (void)state;
  const char *names[] = {"libpoot-does-not-exist.so", "libm.so.6", NULL};
  poot_dylib *lib = NULL;
  POOT_ASSERT_OK(poot_dylib_open(names, &lib));
  assert_string_equal(poot_dylib_name(lib), "libm.so.6");
  double (*cos_fn)(double) = NULL;
  void *missing = (void *)1;
  poot_dylib_symbol ok_table[] = {{"cos", (void **)&cos_fn, false},
                                  {"poot_no_such_symbol", &missing, true}};
  POOT_ASSERT_OK(poot_dylib_load(lib, ok_table, 2));
  assert_non_null(cos_fn);
  assert_true(cos_fn(0.0) == 1.0);
  assert_null(missing);
  void *sinp = NULL, *nope = NULL;
  poot_dylib_symbol bad_table[] = {{"sin", &sinp, false}, {"poot_no_such_symbol", &nope, false}};
  POOT_ASSERT_STATUS_MSG(poot_dylib_load(lib, bad_table, 2), POOT_NOT_FOUND, "poot_no_such_symbol");
  assert_null(sinp); /* a failed load leaves no half-filled table */
  poot_dylib_close(lib);
  const char *none[] = {"libpoot-absent-1.so", "libpoot-absent-2.so", NULL};
  POOT_ASSERT_STATUS_MSG(poot_dylib_open(none, &lib), POOT_NOT_FOUND, "libpoot-absent-2.so");
  assert_null(lib);
  poot_dylib_close(NULL);
}

static void test_time_and_log(void **state) {
  (void)state;
  uint64_t a = poot_time_ns();
  uint64_t b = poot_time_ns();
  assert_true(b >= a);
  assert_int_equal(poot_log_get_level(), POOT_LOG_WARN);
  poot_log_set_level(POOT_LOG_ERROR);
  assert_false(POOT_LOG_ENABLED(POOT_LOG_INFO));
  poot_log(POOT_LOG_INFO, "not printed");
  poot_log_set_level(POOT_LOG_WARN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_files),
      cmocka_unit_test(test_not_regular_files),
      cmocka_unit_test(test_dylib),
      cmocka_unit_test(test_time_and_log),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
