/* Arena, vec, strbuf, map, hash, and allocation-failure injection. */
#include "poot_test.h"

static void test_arena(void **state) {
  (void)state;
  poot_arena a;
  poot_arena_init(&a, 128);
  uint8_t *p = poot_arena_alloc(&a, 10, 1);
  assert_non_null(p);
  for (int i = 0; i < 10; i++) assert_int_equal(p[i], 0);
  double *d = POOT_ARENA_NEW_ARRAY(&a, double, 3);
  assert_int_equal((uintptr_t)d % _Alignof(double), 0);
  void *big = poot_arena_alloc(&a, 100000, 64);
  assert_non_null(big);
  assert_int_equal((uintptr_t)big % 64, 0);
  char *s = poot_arena_strdup(&a, "hello");
  assert_string_equal(s, "hello");
  char *t = poot_arena_strndup(&a, "hello", 3);
  assert_string_equal(t, "hel");
  for (int i = 0; i < 1000; i++) assert_non_null(poot_arena_alloc(&a, 33, 8));
  assert_null(poot_arena_alloc(&a, 8, 3)); /* alignment must be a power of two */
  assert_null(poot_arena_alloc(&a, SIZE_MAX - 8, 16));
  poot_arena_deinit(&a);
}

static void test_vec(void **state) {
  (void)state;
  poot_vec v;
  poot_vec_init(&v, sizeof(int));
  for (int i = 0; i < 1000; i++) POOT_ASSERT_OK(poot_vec_push(&v, &i));
  assert_int_equal(v.len, 1000);
  for (int i = 0; i < 1000; i++) assert_int_equal(POOT_VEC_AT(&v, int, i), i);
  POOT_ASSERT_OK(poot_vec_resize(&v, 1005));
  assert_int_equal(*(int *)poot_vec_at(&v, 1004), 0);
  POOT_ASSERT_OK(poot_vec_push(&v, NULL));
  assert_int_equal(POOT_VEC_AT(&v, int, 1005), 0);
  poot_vec_clear(&v);
  assert_int_equal(v.len, 0);
  poot_vec_deinit(&v);
}

static void test_strbuf(void **state) {
  (void)state;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  assert_string_equal(sb.data, "");
  poot_strbuf_puts(&sb, "a");
  poot_strbuf_putc(&sb, 'b');
  poot_strbuf_printf(&sb, "%d-%s", 42, "x");
  poot_strbuf_append(&sb, "\0z", 2);
  assert_int_equal(sb.len, 8);
  assert_memory_equal(sb.data, "ab42-x\0z", 8);
  for (int i = 0; i < 10000; i++) poot_strbuf_putc(&sb, 'q');
  assert_int_equal(sb.len, 10008);
  POOT_ASSERT_OK(poot_strbuf_status(&sb));
  char *taken = poot_strbuf_take(&sb);
  assert_int_equal(taken[10007], 'q');
  poot_free(taken);
  assert_int_equal(sb.len, 0);
  poot_strbuf_deinit(&sb);
  /* printf into the free capacity: a piece that fits, one that fills it to
   * the last byte but the NUL, and one that does not fit (written again
   * into the grown buffer, nothing of the truncated attempt left). */
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "0123456789"); /* cap 64 */
  assert_int_equal(sb.cap, 64);
  poot_strbuf_printf(&sb, "[%u]", 7u);
  poot_strbuf_printf(&sb, "%050d", 5); /* 63 bytes: the NUL in the last */
  assert_int_equal(sb.len, 63);
  assert_int_equal(sb.cap, 64);
  poot_strbuf_printf(&sb, "v%u", 12345u);
  assert_int_equal(sb.len, 69);
  assert_string_equal(sb.data + 60, "005v12345");
  assert_int_equal(sb.data[sb.len], 0);
  poot_strbuf_deinit(&sb);
}

static void test_map(void **state) {
  (void)state;
  poot_map m;
  poot_map_init(&m);
  char key[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(key, sizeof key, "key-%d", i);
    POOT_ASSERT_OK(poot_map_put_str(&m, key, (uint64_t)i * 3));
  }
  assert_int_equal(m.len, 5000);
  for (int i = 0; i < 5000; i++) {
    uint64_t v = 0;
    snprintf(key, sizeof key, "key-%d", i);
    assert_true(poot_map_get_str(&m, key, &v));
    assert_int_equal(v, (uint64_t)i * 3);
  }
  assert_false(poot_map_get_str(&m, "absent", NULL));
  for (int i = 0; i < 5000; i += 2) {
    snprintf(key, sizeof key, "key-%d", i);
    assert_true(poot_map_remove(&m, key, strlen(key)));
  }
  assert_int_equal(m.len, 2500);
  POOT_ASSERT_OK(poot_map_put_str(&m, "key-1", 77)); /* replace */
  uint64_t v;
  assert_true(poot_map_get_str(&m, "key-1", &v));
  assert_int_equal(v, 77);
  assert_false(poot_map_get_str(&m, "key-0", NULL));
  /* Binary keys with NUL bytes. */
  POOT_ASSERT_OK(poot_map_put(&m, "a\0b", 3, 5));
  assert_true(poot_map_get(&m, "a\0b", 3, &v));
  assert_false(poot_map_get(&m, "a", 1, NULL));
  size_t it = 0, count = 0;
  while (poot_map_next(&m, &it, NULL, NULL, NULL)) count++;
  assert_int_equal(count, m.len);
  poot_map_deinit(&m);
}

static void test_map_large_and_churn(void **state) {
  (void)state;
  /* A vocabulary-sized map fills in linear time (this used to be quadratic),
   * and put/remove churn reuses tombstones without losing entries. */
  poot_map m;
  poot_map_init(&m);
  char key[32];
  for (int i = 0; i < 400000; i++) {
    int n = snprintf(key, sizeof key, "t%d", i);
    POOT_ASSERT_OK(poot_map_put(&m, key, (size_t)n, (uint64_t)i));
  }
  assert_int_equal(m.len, 400000);
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < 1000; i++) {
      int n = snprintf(key, sizeof key, "c%d", i);
      POOT_ASSERT_OK(poot_map_put(&m, key, (size_t)n, (uint64_t)round));
    }
    for (int i = 0; i < 1000; i++) {
      int n = snprintf(key, sizeof key, "c%d", i);
      assert_true(poot_map_remove(&m, key, (size_t)n));
    }
  }
  assert_int_equal(m.len, 400000);
  assert_true(m.len + m.tombstones < m.cap);
  uint64_t v;
  assert_true(poot_map_get(&m, "t399999", 7, &v));
  assert_int_equal(v, 399999);
  assert_false(poot_map_get(&m, "c5", 2, NULL));
  poot_map_deinit(&m);
}

static void test_hash_stable(void **state) {
  (void)state;
  /* Fixed values: the hash must never change between runs or builds. */
  uint64_t h1 = poot_hash64("poot", 4, 0);
  uint64_t h2 = poot_hash64("poot", 4, 0);
  assert_int_equal(h1, h2);
  assert_true(h1 != poot_hash64("poou", 4, 0));
  assert_true(h1 != poot_hash64("poot", 4, 1));
  assert_int_equal(poot_hash64("", 0, 0), poot_hash64_mix(0xcbf29ce484222325ull, 0));
  /* FNV-1a 128's published value for "a" and its offset basis for "". */
  poot_hash128 a = poot_hash128_of("a", 1), e = poot_hash128_of("", 0);
  assert_int_equal(a.hi, 0xd228cb696f1a8cafull);
  assert_int_equal(a.lo, 0x78912b704e4a8964ull);
  assert_int_equal(e.hi, 0x6c62272e07bb0142ull);
  assert_int_equal(e.lo, 0x62b821756295c58dull);
  assert_false(poot_hash128_equal(a, poot_hash128_mix(a, 0)));
}

static poot_status try_map_put(void *ctx) {
  (void)ctx;
  poot_map m;
  poot_map_init(&m);
  poot_status st = poot_map_put_str(&m, "a", 1);
  poot_map_deinit(&m);
  return st;
}

static void test_alloc_failure(void **state) {
  (void)state;
  poot_vec v;
  poot_vec_init(&v, 8);
  poot_alloc_fail_after(1);
  POOT_ASSERT_STATUS(poot_vec_push(&v, NULL), POOT_OUT_OF_MEMORY);
  poot_alloc_fail_after(0);
  POOT_ASSERT_OK(poot_vec_push(&v, NULL));
  poot_vec_deinit(&v);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_alloc_fail_after(1);
  poot_strbuf_puts(&sb, "x");
  poot_alloc_fail_after(0);
  POOT_ASSERT_STATUS(poot_strbuf_status(&sb), POOT_OUT_OF_MEMORY);
  poot_strbuf_deinit(&sb);
  assert_true(poot_test_oom_sweep("map put", try_map_put, NULL, 100) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena),        cmocka_unit_test(test_vec),
      cmocka_unit_test(test_strbuf),       cmocka_unit_test(test_map),        cmocka_unit_test(test_map_large_and_churn),
      cmocka_unit_test(test_hash_stable),  cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
