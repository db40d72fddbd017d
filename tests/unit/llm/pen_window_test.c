/* The batched runner's penalty window kept one id at a time
 * (src/llm/driver/pen_window.c) against the sorting reference it replaced:
 * the distinct ids of the last lag ids of a history prefix and their
 * counts, found by sorting the window and counting runs. Long seeded
 * histories over small and large vocabularies, with and without a lag,
 * advanced one id, several ids, back, and past a whole window at a time;
 * then the host time of a step at 64 penalized rows with a 4,096-id
 * whole-history window, both ways (printed, not asserted). */
#include "poot_test.h"

#include <stdlib.h>

#include "../../../src/llm/driver/pen_window.h"

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The reference (the runner's former fill_window): the window of h[0..n)
 * sorted into ids[] / counts[]; returns the distinct count. */
static int64_t reference(const int32_t *h, int64_t n, int64_t lag, int32_t *tmp, int32_t *ids,
                         int32_t *counts) {
  const int64_t from = lag > 0 && n > lag ? n - lag : 0;
  memcpy(tmp, h + from, (size_t)(n - from) * sizeof *h);
  qsort(tmp, (size_t)(n - from), sizeof *tmp, cmp_i32);
  int64_t m = 0;
  for (int64_t i = 0; i < n - from; i++) {
    if (m > 0 && ids[m - 1] == tmp[i]) {
      counts[m - 1]++;
      continue;
    }
    ids[m] = tmp[i];
    counts[m++] = 1;
  }
  return m;
}

typedef struct scratch {
  int32_t *tmp, *ids, *cnt;
  int64_t *pair;
} scratch;

static void scratch_init(scratch *s, int64_t n) {
  s->tmp = malloc((size_t)n * sizeof *s->tmp);
  s->ids = malloc((size_t)n * sizeof *s->ids);
  s->cnt = malloc((size_t)n * sizeof *s->cnt);
  s->pair = malloc((size_t)n * sizeof *s->pair);
  assert_true(s->tmp && s->ids && s->cnt && s->pair);
}

static void scratch_deinit(scratch *s) {
  free(s->tmp);
  free(s->ids);
  free(s->cnt);
  free(s->pair);
}

/* The window's (id, count) pairs, sorted by id, equal the reference's. */
static void check_equal(const pen_window *w, const int32_t *h, int64_t n, int64_t lag, scratch *s) {
  const int64_t m = reference(h, n, lag, s->tmp, s->ids, s->cnt);
  assert_int_equal(w->n, n);
  assert_int_equal(w->m, m);
  assert_true(w->m <= w->width);
  for (int64_t i = 0; i < m; i++) {
    assert_true(w->counts[i] > 0);
    s->pair[i] = (int64_t)w->ids[i] * 0x100000000LL + w->counts[i];
  }
  qsort(s->pair, (size_t)m, sizeof *s->pair, cmp_i64);
  for (int64_t i = 0; i < m; i++) {
    assert_int_equal(s->pair[i] >> 32, s->ids[i]);
    assert_int_equal(s->pair[i] & 0xffffffffLL, s->cnt[i]);
  }
}

/* A row's lists hold the window's entries in its order, then padding. */
static void check_row(const pen_window *w, const int32_t *ids, const int32_t *counts,
                      int64_t width) {
  for (int64_t i = 0; i < width; i++) {
    assert_int_equal(ids[i], i < w->m ? w->ids[i] : -1);
    assert_int_equal(counts[i], i < w->m ? w->counts[i] : 0);
  }
}

/* A seeded history of `max_ids` ids over `vocab` (half the time from a few
 * hot ids, so counts grow and ids leave and re-enter the window), walked
 * with steps of 1 (mostly), 2–20 (prompt chunks), back (a rebuild) and past
 * a whole window; checked after each move. */
static void run_case(int64_t vocab, int64_t lag, int64_t max_ids, uint64_t seed) {
  int32_t *h = malloc((size_t)max_ids * sizeof *h);
  assert_non_null(h);
  uint64_t r = seed;
  for (int64_t i = 0; i < max_ids; i++)
    h[i] = (int32_t)(rng_next(&r) % 2 ? rng_next(&r) % 7 : rng_next(&r) % (uint64_t)vocab);
  scratch s;
  scratch_init(&s, max_ids);
  pen_window w, other;
  POOT_ASSERT_OK(poot__pen_window_init(&w, lag, max_ids, vocab));
  POOT_ASSERT_OK(poot__pen_window_init(&other, 0, max_ids, vocab));
  POOT_ASSERT_OK(poot__pen_window_advance(&other, h, max_ids / 2));
  /* two rows' lists; now and then the other window (or an empty row) takes
   * the row the window writes, so the next write cannot patch */
  const int64_t width = w.width;
  int32_t *rid = malloc((size_t)(2 * width) * sizeof *rid);
  int32_t *rn = malloc((size_t)(2 * width) * sizeof *rn);
  assert_true(rid && rn);
  pen_row rows[2] = {{0, width}, {0, width}};
  uint64_t stamp = 0;
  int64_t n = 0, checks = 0;
  while (n < max_ids) {
    const uint64_t pick = rng_next(&r) % 100;
    int64_t next = n + 1;
    if (pick < 8)
      next = n + 2 + (int64_t)(rng_next(&r) % 19);
    else if (pick < 10 && n > 0)
      next = n - 1 - (int64_t)(rng_next(&r) % (uint64_t)(n < 40 ? n : 40));
    else if (pick < 11)
      next = n + (w.lag > 0 ? w.lag : 64) + 1 + (int64_t)(rng_next(&r) % 5);
    if (next > max_ids) next = max_ids;
    POOT_ASSERT_OK(poot__pen_window_advance(&w, h, next));
    n = next;
    check_equal(&w, h, n, w.lag, &s);
    const int64_t row = (int64_t)(rng_next(&r) % 8 == 0);
    if (rng_next(&r) % 10 == 0) {
      pen_window *x = rng_next(&r) % 2 && other.m <= width ? &other : NULL;
      poot__pen_window_write(x, rid + row * width, rn + row * width, width, &rows[row], ++stamp);
    }
    poot__pen_window_write(&w, rid + row * width, rn + row * width, width, &rows[row], ++stamp);
    check_row(&w, rid + row * width, rn + row * width, width);
    checks++;
  }
  assert_true(checks > 100);
  free(rid);
  free(rn);
  poot__pen_window_deinit(&other);
  /* an id outside the vocabulary is refused and leaves the window empty */
  h[0] = (int32_t)vocab;
  POOT_ASSERT_STATUS(poot__pen_window_advance(&w, h, 3), POOT_INVALID_ARGUMENT);
  assert_int_equal(w.m, 0);
  POOT_ASSERT_STATUS(poot__pen_window_advance(&w, h, max_ids + 1), POOT_INVALID_ARGUMENT);
  poot__pen_window_deinit(&w);
  poot__pen_window_deinit(&w); /* idempotent */
  scratch_deinit(&s);
  free(h);
}

static void test_whole_history(void **state) {
  (void)state;
  run_case(32, 0, 3000, 1);    /* more ids than the vocabulary: width = vocab */
  run_case(50000, 0, 3000, 2); /* mostly distinct */
}

static void test_lag(void **state) {
  (void)state;
  run_case(32, 64, 3000, 3);
  run_case(50000, 6, 3000, 4);
  run_case(300, 257, 3000, 5);
  run_case(300, 5000, 2000, 6); /* a lag past the history: the whole of it */
}

static void test_refusals(void **state) {
  (void)state;
  pen_window w;
  POOT_ASSERT_STATUS(poot__pen_window_init(&w, 0, 0, 100), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot__pen_window_init(&w, 0, 10, 0), POOT_INVALID_ARGUMENT);
  poot__pen_window_deinit(&w);
}

/* 64 rows, each a request with a 4,096-id history (a 32,000-id vocabulary)
 * and a whole-history window, over 32 steps of one new id each: the rows'
 * [64, W] lists written as the runner writes them, sorted anew each step
 * (before) or moved on by one id and copied (now). */
static void test_timing(void **state) {
  (void)state;
  enum { ROWS = 64, HIST = 4096 + 32, STEPS = 32, SORTED_STEPS = 8 };
  const int64_t V = 32000, W = HIST;
  int32_t *h = malloc((size_t)ROWS * HIST * sizeof *h);
  int32_t *out_id = malloc((size_t)ROWS * W * sizeof *out_id);
  int32_t *out_n = malloc((size_t)ROWS * W * sizeof *out_n);
  int32_t *tmp = malloc((size_t)HIST * sizeof *tmp);
  pen_window *w = calloc(ROWS, sizeof *w);
  assert_true(h && out_id && out_n && tmp && w);
  uint64_t r = 99;
  for (int64_t i = 0; i < (int64_t)ROWS * HIST; i++) h[i] = (int32_t)(rng_next(&r) % (uint64_t)V);
  const int64_t n0 = 4096;
  /* before: sort each row's window every step */
  uint64_t t0 = poot_time_ns();
  for (int s = 0; s < SORTED_STEPS; s++)
    for (int64_t row = 0; row < ROWS; row++) {
      int32_t *id = out_id + row * W, *cnt = out_n + row * W;
      const int64_t m = reference(h + row * HIST, n0 + s, 0, tmp, id, cnt);
      for (int64_t j = m; j < W; j++) id[j] = -1, cnt[j] = 0;
    }
  const double before_us = (double)(poot_time_ns() - t0) / 1e3 / SORTED_STEPS;
  /* now: each window built once (admission), then one id a step */
  for (int64_t row = 0; row < ROWS; row++) {
    POOT_ASSERT_OK(poot__pen_window_init(&w[row], 0, HIST, V));
    POOT_ASSERT_OK(poot__pen_window_advance(&w[row], h + row * HIST, n0 - 1));
  }
  pen_row *rows = malloc(ROWS * sizeof *rows);
  assert_non_null(rows);
  for (int64_t row = 0; row < ROWS; row++) rows[row] = (pen_row){0, W};
  uint64_t stamp = 0;
  t0 = poot_time_ns();
  for (int s = 0; s < STEPS; s++)
    for (int64_t row = 0; row < ROWS; row++) {
      POOT_ASSERT_OK(poot__pen_window_advance(&w[row], h + row * HIST, n0 + s));
      poot__pen_window_write(&w[row], out_id + row * W, out_n + row * W, W, &rows[row], ++stamp);
    }
  const double now_us = (double)(poot_time_ns() - t0) / 1e3 / STEPS;
  /* the last step's lists are the reference's */
  scratch sc;
  scratch_init(&sc, HIST);
  for (int64_t row = 0; row < ROWS; row++) {
    check_equal(&w[row], h + row * HIST, n0 + STEPS - 1, 0, &sc);
    check_row(&w[row], out_id + row * W, out_n + row * W, W);
  }
  scratch_deinit(&sc);
  printf(
      "penalty windows, 64 rows, 4,096-id whole history: %.0f us a step sorted, %.0f us kept "
      "(%.1f us of it a row)\n",
      before_us, now_us, now_us / ROWS);
  for (int64_t row = 0; row < ROWS; row++) poot__pen_window_deinit(&w[row]);
  free(rows);
  free(w);
  free(tmp);
  free(out_n);
  free(out_id);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_whole_history),
      cmocka_unit_test(test_lag),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_timing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
