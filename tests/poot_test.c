/* Shared test helpers; see poot_test.h. */
#include "poot_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *poot_test_data_dir(void) {
  const char *d = getenv("POOT_DATA_DIR");
  if (!d || !*d) return NULL;
  struct stat st;
  if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return d;
}

bool poot_test_data_path(const char *rel, char *out, size_t out_size) {
  const char *d = poot_test_data_dir();
  if (!d) return false;
  int n = snprintf(out, out_size, "%s/%s", d, rel);
  if (n < 0 || (size_t)n >= out_size) return false;
  struct stat st;
  return stat(out, &st) == 0;
}

const char *poot_test_source_dir(void) {
  const char *d = getenv("POOT_SOURCE_DIR");
  return d ? d : ".";
}

const char *poot_test_binary_dir(void) {
  const char *d = getenv("POOT_BINARY_DIR");
  return d ? d : ".";
}

int poot_test_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("SKIP: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return POOT_TEST_SKIP;
}

static char poot_test_tmp[512];

static void poot_test_tmp_cleanup(void) {
  if (poot_test_tmp[0]) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", poot_test_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", poot_test_tmp);
  }
}

const char *poot_test_tmpdir(void) {
  if (!poot_test_tmp[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(poot_test_tmp, sizeof poot_test_tmp, "%s/poot-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(poot_test_tmp)) {
      poot_test_tmp[0] = 0;
      return "/tmp";
    }
    atexit(poot_test_tmp_cleanup);
  }
  return poot_test_tmp;
}

int poot_test_system(const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

uint64_t poot_test_rand_u64(uint64_t *state) {
  /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void poot_test_fill_random(float *buf, size_t n, uint64_t seed, float lo, float hi) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    double u = (double)(poot_test_rand_u64(&s) >> 11) * (1.0 / 9007199254740992.0);
    buf[i] = (float)(lo + (hi - lo) * u);
  }
}

static int poot_test_skipped;

void poot_test_note_skip(void) { poot_test_skipped++; }

int poot_test_finish(int failures) {
  if (failures == 0 && poot_test_skipped > 0) {
    printf("SKIP: %d test case(s) skipped (their data, tool or device is absent)\n",
           poot_test_skipped);
    fflush(stdout);
    return POOT_TEST_SKIP;
  }
  return failures;
}

uint64_t poot_test_oom_sweep(const char *what, poot_test_attempt_fn fn, void *ctx, uint64_t limit) {
  return poot_test_oom_sweep_after(what, fn, NULL, ctx, limit);
}

uint64_t poot_test_oom_sweep_after(const char *what, poot_test_attempt_fn fn,
                                   poot_test_after_fn after, void *ctx, uint64_t limit) {
  poot_alloc_fail_after(0);
  poot_status_code want = poot_status_consume(fn(ctx));
  if (after) after(ctx, want);
  for (uint64_t n = 1; n <= limit; n++) {
    poot_alloc_fail_after(n);
    poot_status s = fn(ctx);
    bool reached = poot_alloc_count_since_set() >= n;
    poot_alloc_fail_after(0);
    poot_status_code c = poot_status_code_of(s);
    if (after) after(ctx, c);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", poot_status_message(s));
    poot_status_free(s);
    if (!reached) {
      if (c != want)
        fail_msg("%s: with all %llu allocations granted it gave %s (%s), not %s", what,
                 (unsigned long long)(n - 1), poot_status_code_name(c), msg,
                 poot_status_code_name(want));
      return n - 1;
    }
    if (c != POOT_OUT_OF_MEMORY)
      fail_msg("%s: allocation %llu failed but it gave %s (%s), not OUT_OF_MEMORY", what,
               (unsigned long long)n, poot_status_code_name(c), c == POOT_OK ? "ok" : msg);
  }
  fail_msg("%s: still allocating after %llu allocations", what, (unsigned long long)limit);
  return limit;
}
