/* tests/poot_test.h — helpers shared by the unit tests (cmocka).
 *
 * Skips: a test program whose device, tool or data is absent prints
 * "SKIP: why" and exits POOT_TEST_SKIP (77); CTest counts it as skipped. */
#ifndef POOT_TESTS_POOT_TEST_H
#define POOT_TESTS_POOT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
/* cmocka needs the includes above first. */
#include <cmocka.h>

#include <string.h>

#include "poot/base.h"

#define POOT_TEST_SKIP 77

/* A cmocka test that calls skip() (its data or tool is absent) makes the whole
 * program exit POOT_TEST_SKIP when nothing failed, so CTest counts it as
 * skipped: a partly skipped program is never reported as passed. */
void poot_test_note_skip(void);
int poot_test_finish(int failures);
#undef skip
#define skip() (poot_test_note_skip(), _skip(__FILE__, __LINE__))
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(t, setup, teardown)                                                 \
  poot_test_finish(_cmocka_run_group_tests(#t, t, sizeof(t) / sizeof((t)[0]), setup, teardown))

/* Fails the current cmocka test with the status's code and message. */
#define POOT_ASSERT_OK(expr)                                                                       \
  do {                                                                                             \
    poot_status poot__s = (expr);                                                                  \
    if (poot__s) {                                                                                 \
      char poot__m[1024];                                                                          \
      snprintf(poot__m, sizeof poot__m, "%s", poot_status_message(poot__s));                       \
      poot_status_code poot__c = poot_status_code_of(poot__s);                                     \
      poot_status_free(poot__s);                                                                   \
      fail_msg("%s returned %s: %s", #expr, poot_status_code_name(poot__c), poot__m);              \
    }                                                                                              \
  } while (0)

/* Asserts a failed status with the given code; frees it. */
#define POOT_ASSERT_STATUS(expr, code)                                                             \
  do {                                                                                             \
    poot_status poot__s = (expr);                                                                  \
    poot_status_code poot__c = poot_status_code_of(poot__s);                                       \
    if (poot__c != (code)) {                                                                       \
      char poot__m[1024];                                                                          \
      snprintf(poot__m, sizeof poot__m, "%s", poot_status_message(poot__s));                       \
      poot_status_free(poot__s);                                                                   \
      fail_msg("%s returned %s (%s), expected %s", #expr, poot_status_code_name(poot__c),          \
               poot__m, poot_status_code_name(code));                                              \
    }                                                                                              \
    poot_status_free(poot__s);                                                                     \
  } while (0)

/* Like POOT_ASSERT_STATUS, and also checks that the message contains `needle`. */
#define POOT_ASSERT_STATUS_MSG(expr, code, needle)                                                 \
  do {                                                                                             \
    poot_status poot__s = (expr);                                                                  \
    poot_status_code poot__c = poot_status_code_of(poot__s);                                       \
    char poot__m[1024];                                                                            \
    snprintf(poot__m, sizeof poot__m, "%s", poot_status_message(poot__s));                         \
    poot_status_free(poot__s);                                                                     \
    if (poot__c != (code))                                                                         \
      fail_msg("%s returned %s (%s), expected %s", #expr, poot_status_code_name(poot__c),          \
               poot__m, poot_status_code_name(code));                                              \
    if (!strstr(poot__m, (needle)))                                                                \
      fail_msg("%s: message '%s' does not mention '%s'", #expr, poot__m, (needle));                \
  } while (0)

/* One attempt of an out-of-memory sweep: runs the code under test, frees
 * whatever it made (and may check its result with cmocka asserts when it
 * succeeded), and returns its status. */
typedef poot_status (*poot_test_attempt_fn)(void *ctx);

/* Out-of-memory sweep: runs fn with the n-th allocation (and every later
 * one) failing, for n = 1, 2, ... For every n whose failure fn reached
 * (poot_alloc_count_since_set() >= n) the result must be OUT_OF_MEMORY: a
 * failure that was reached but swallowed fails the test. The sweep ends at
 * the first n that fn did not reach; that run must give the result of a run
 * with no failure (success, or the same rejection of a bad input). Fails
 * when the sweep passes `limit` allocations. Returns how many n were reached
 * (the allocations fn makes), so a caller can insist there were some. */
uint64_t poot_test_oom_sweep(const char *what, poot_test_attempt_fn fn, void *ctx, uint64_t limit);
/* As poot_test_oom_sweep, and `after` runs after each attempt with failure
 * injection off, given the attempt's code: it checks (allocating as it
 * likes) and frees what the attempt left in ctx. */
typedef void (*poot_test_after_fn)(void *ctx, poot_status_code code);
uint64_t poot_test_oom_sweep_after(const char *what, poot_test_attempt_fn fn,
                                   poot_test_after_fn after, void *ctx, uint64_t limit);

/* The shared test data folder (POOT_DATA_DIR), or NULL when unset/absent. */
const char *poot_test_data_dir(void);
/* Joins the data folder and `rel` into out; false when the file is absent. */
bool poot_test_data_path(const char *rel, char *out, size_t out_size);
/* The source folder (POOT_SOURCE_DIR) and build folder (POOT_BINARY_DIR). */
const char *poot_test_source_dir(void);
const char *poot_test_binary_dir(void);
/* Prints "SKIP: ..." and returns POOT_TEST_SKIP, for `return poot_test_skip(...)` in main. */
int poot_test_skip(const char *fmt, ...) POOT_PRINTF(1, 2);
/* A fresh private temporary folder for this test program (removed at exit). */
const char *poot_test_tmpdir(void);
/* Runs a shell command; returns its exit status (or -1). */
int poot_test_system(const char *fmt, ...) POOT_PRINTF(1, 2);
/* Fills buf with deterministic pseudo-random floats in [lo, hi). */
void poot_test_fill_random(float *buf, size_t n, uint64_t seed, float lo, float hi);
uint64_t poot_test_rand_u64(uint64_t *state);

#endif
