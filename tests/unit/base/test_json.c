/* The JSON parser and writer. */
#include "poot_test.h"

static poot_json *parse(poot_arena *a, const char *text) {
  poot_json *root = NULL;
  POOT_ASSERT_OK(poot_json_parse(a, text, strlen(text), NULL, &root));
  return root;
}

static void test_values(void **state) {
  (void)state;
  poot_arena a;
  poot_arena_init(&a, 0);
  poot_json *r = parse(&a, " {\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"a\": 3} ");
  assert_int_equal(r->type, POOT_JSON_OBJECT);
  assert_int_equal(r->len, 3);
  const poot_json *arr = poot_json_get(r, "a"); /* first match */
  assert_int_equal(arr->type, POOT_JSON_ARRAY);
  assert_int_equal(arr->len, 5);
  assert_true(arr->items[0]->number == 1.0);
  assert_string_equal(arr->items[1]->str, "-2.5e3");
  assert_true(arr->items[1]->number == -2500.0);
  assert_true(arr->items[2]->boolean);
  assert_int_equal(arr->items[4]->type, POOT_JSON_NULL);
  const poot_json *s = poot_json_get(r, "s");
  assert_int_equal(s->len, 8);
  assert_memory_equal(s->str, "x\xc3\xa9\xf0\x9f\x98\x80\n", 8);
  assert_null(poot_json_get(r, "missing"));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_json_write(&sb, r, true, true);
  assert_string_equal(sb.data, "{\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"a\": 3}");
  poot_strbuf_clear(&sb);
  poot_json_write(&sb, s, false, false);
  assert_string_equal(sb.data, "\"x\xc3\xa9\xf0\x9f\x98\x80\\n\"");
  poot_strbuf_clear(&sb);
  poot_json_write_string(&sb, "\x01\"\\", 3, false);
  assert_string_equal(sb.data, "\"\\u0001\\\"\\\\\"");
  /* Invalid UTF-8 (a code point past U+10FFFF, an overlong form) becomes U+FFFD when escaping. */
  poot_strbuf_clear(&sb);
  poot_json_write_string(&sb, "\xf5\xa8\xa8\xa8\xc0\xafok", 8, true);
  assert_string_equal(sb.data, "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffdok\"");
  /* Unescaped output is UTF-8 too: each ill-formed sequence's maximal subpart is one U+FFFD
   * (a lead byte and the continuations it accepts, as Python's errors="replace"), valid
   * sequences are copied (the streamed text of a random-weight model held such bytes). */
  poot_strbuf_clear(&sb);
  poot_json_write_string(&sb, "\xd7_de\xe5\x8f T\xba\xc3\xa9\xed\xa0\x80\xf0\x9f\x98", 17, false);
  assert_string_equal(sb.data, "\"\xef\xbf\xbd_de\xef\xbf\xbd T\xef\xbf\xbd\xc3\xa9"
                               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  poot_strbuf_clear(&sb);
  poot_json_write_string(&sb, "\xe5\x8f T", 4, true);
  assert_string_equal(sb.data, "\"\\ufffd T\"");
  poot_strbuf_deinit(&sb);
  poot_json *nul = parse(&a, "\"a\\u0000b\"");
  assert_int_equal(nul->len, 3);
  poot_arena_deinit(&a);
}

static void test_errors(void **state) {
  (void)state;
  const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "tru", "\"abc", "01", "1.", "1e", "[1 2]",
                       "{\"a\":1,}", "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "[] x", "-", "{1:2}"};
  poot_arena a;
  poot_arena_init(&a, 0);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    poot_json *r = (poot_json *)1;
    poot_status st = poot_json_parse(&a, bad[i], strlen(bad[i]), NULL, &r);
    assert_null(r);
    if (poot_status_code_of(st) != POOT_FORMAT) fail_msg("'%s' was accepted", bad[i]);
    assert_non_null(strstr(poot_status_message(st), "JSON: "));
    poot_status_free(st);
  }
  POOT_ASSERT_STATUS_MSG(poot_json_parse(&a, "[1,\n  x]", 8, NULL, &(poot_json *){0}), POOT_FORMAT,
                         "line 2, column 3");
  /* Depth is bounded. */
  char deep[2001];
  memset(deep, '[', 2000);
  deep[2000] = 0;
  POOT_ASSERT_STATUS_MSG(poot_json_parse(&a, deep, 2000, NULL, &(poot_json *){0}), POOT_FORMAT,
                         "too deep");
  poot_arena_deinit(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
