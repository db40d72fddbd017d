/* The stop-string matcher (src/llm/sampling/stop.c): a stop split across
 * pieces, overlapping prefixes, held-back text released, UTF-8 never split,
 * and the same result however the text is split. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/sampling.h"

typedef struct run {
  char text[4096];
  size_t len;
  bool stopped;
  int32_t index;
} run;

static poot_stop_matcher *make(const char *const *stops, size_t n) {
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  for (size_t i = 0; i < n; i++)
    POOT_ASSERT_OK(poot_sampling_add_stop(&p, stops[i], strlen(stops[i])));
  poot_stop_matcher *m = NULL;
  POOT_ASSERT_OK(poot_stop_matcher_create(&p, &m));
  return m;
}

static void take(run *r, const poot_stop_output *o) {
  assert_true(r->len + o->len < sizeof r->text);
  memcpy(r->text + r->len, o->text, o->len);
  r->len += o->len;
  r->text[r->len] = '\0';
  r->stopped = o->stopped;
  r->index = o->stop_index;
}

/* Feeds one piece and checks exactly what came out. */
static void feed(poot_stop_matcher *m, run *r, const char *piece, const char *want) {
  poot_stop_output o;
  POOT_ASSERT_OK(poot_stop_matcher_feed(m, piece, strlen(piece), &o));
  assert_int_equal(o.len, strlen(want));
  assert_memory_equal(o.text, want, o.len);
  take(r, &o);
}

static void test_split_stop(void **state) {
  (void)state;
  const char *stops[] = {"###"};
  poot_stop_matcher *m = make(stops, 1);
  run r = {0};
  feed(m, &r, "Hello #", "Hello ");
  feed(m, &r, "#", "");
  feed(m, &r, "# world", "");
  assert_true(r.stopped);
  assert_int_equal(r.index, 0);
  assert_string_equal(r.text, "Hello ");
  feed(m, &r, "more", ""); /* after a stop nothing is emitted */
  assert_true(r.stopped);
  poot_stop_matcher_destroy(m);
}

static void test_release_and_finish(void **state) {
  (void)state;
  const char *stops[] = {"###", "\n\nUser:"};
  poot_stop_matcher *m = make(stops, 2);
  run r = {0};
  feed(m, &r, "a#", "a");
  feed(m, &r, "#b", "##b"); /* "##b" cannot begin "###" any more */
  feed(m, &r, "c\n", "c");
  feed(m, &r, "\nUs", "");
  feed(m, &r, "a", "\n\nUsa");
  feed(m, &r, "x##", "x");
  poot_stop_output o;
  poot_stop_matcher_finish(m, &o);
  assert_int_equal(o.len, 2);
  assert_memory_equal(o.text, "##", 2);
  assert_false(o.stopped);
  poot_stop_matcher_reset(m);
  run again = {0};
  feed(m, &again, "###", "");
  assert_true(again.stopped);
  poot_stop_matcher_destroy(m);
}

static void test_overlapping_prefixes(void **state) {
  (void)state;
  { /* "aab" inside "aaab": the first a is free, the rest matches */
    const char *stops[] = {"aab"};
    poot_stop_matcher *m = make(stops, 1);
    run r = {0};
    feed(m, &r, "aa", "");
    feed(m, &r, "ab", "a");
    assert_true(r.stopped);
    poot_stop_matcher_destroy(m);
  }
  { /* the match that ends first wins: "abc" before "bcd" */
    const char *stops[] = {"bcd", "abc"};
    poot_stop_matcher *m = make(stops, 2);
    run r = {0};
    feed(m, &r, "xabcd", "x");
    assert_int_equal(r.index, 1);
    poot_stop_matcher_destroy(m);
  }
  { /* "ab" ends before "abc" could */
    const char *stops[] = {"abc", "ab"};
    poot_stop_matcher *m = make(stops, 2);
    run r = {0};
    feed(m, &r, "zabc", "z");
    assert_int_equal(r.index, 1);
    poot_stop_matcher_destroy(m);
  }
  { /* both end at once: the longer */
    const char *stops[] = {"bc", "abc"};
    poot_stop_matcher *m = make(stops, 2);
    run r = {0};
    feed(m, &r, "abc", "");
    assert_int_equal(r.index, 1);
    poot_stop_matcher_destroy(m);
  }
}

static void test_utf8_not_split(void **state) {
  (void)state;
  poot_stop_matcher *m = make(NULL, 0);
  run r = {0};
  feed(m, &r, "h\xc3", "h");
  feed(m, &r, "\xa9", "\xc3\xa9");
  feed(m, &r, "\xf0\x9f", ""); /* U+1F600 in three pieces */
  feed(m, &r, "\x98", "");
  feed(m, &r, "\x80!", "\xf0\x9f\x98\x80!");
  feed(m, &r, "\x80\x80", "\x80\x80"); /* stray continuation bytes are not held */
  poot_stop_matcher_destroy(m);
  /* A held stop prefix that is a whole character is released whole. */
  const char *stops[] = {"\xc3\xa9!"};
  m = make(stops, 1);
  run s = {0};
  feed(m, &s, "caf\xc3", "caf");
  feed(m, &s, "\xa9", "");
  feed(m, &s, "?", "\xc3\xa9?");
  feed(m, &s, "\xc3\xa9!", "");
  assert_true(s.stopped);
  poot_stop_matcher_destroy(m);
}

/* The same text split at random gives the same output and stop as the
 * whole text fed at once. */
static void test_split_invariance(void **state) {
  (void)state;
  const char *stops[] = {"##a", "ba", "#\xc3\xa9", "aaaa"};
  const char *alphabet[] = {"a", "b", "#", "\xc3\xa9", "\xc3", "\xa9", "xyz"};
  uint64_t x = 0x9E3779B97F4A7C15ull;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (int iter = 0; iter < 500; iter++) {
    char text[256];
    size_t len = 0;
    size_t n = NEXT() % 30;
    for (size_t i = 0; i < n; i++) {
      const char *a = alphabet[NEXT() % 7];
      memcpy(text + len, a, strlen(a));
      len += strlen(a);
    }
    run whole = {0}, pieces = {0};
    poot_stop_matcher *m = make(stops, 4);
    poot_stop_output o;
    POOT_ASSERT_OK(poot_stop_matcher_feed(m, text, len, &o));
    take(&whole, &o);
    poot_stop_matcher_finish(m, &o);
    take(&whole, &o);
    poot_stop_matcher_reset(m);
    for (size_t at = 0; at < len;) {
      size_t k = 1 + NEXT() % 4;
      if (k > len - at) k = len - at;
      POOT_ASSERT_OK(poot_stop_matcher_feed(m, text + at, k, &o));
      take(&pieces, &o);
      at += k;
    }
    poot_stop_matcher_finish(m, &o);
    take(&pieces, &o);
    assert_int_equal(whole.len, pieces.len);
    assert_memory_equal(whole.text, pieces.text, whole.len);
    assert_int_equal(whole.stopped, pieces.stopped);
    assert_int_equal(whole.index, pieces.index);
    if (!whole.stopped) assert_memory_equal(whole.text, text, len);
    poot_stop_matcher_destroy(m);
  }
#undef NEXT
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_stop),           cmocka_unit_test(test_release_and_finish),
      cmocka_unit_test(test_overlapping_prefixes), cmocka_unit_test(test_utf8_not_split),
      cmocka_unit_test(test_split_invariance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
