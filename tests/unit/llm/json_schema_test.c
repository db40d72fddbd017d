/* Unit tests of JSON Schema → GBNF (src/llm/grammar/json_schema*.c): one grammar checked
 * line by line, integer and decimal ranges against arithmetic over every value of a grid,
 * date against the calendar, additional-key exclusion, the white-space bound, draft 4/7
 * forms, response_format, error codes and messages naming the JSON pointer, and an
 * out-of-memory sweep. */
#include "poot_test.h"

#include <stdio.h>
#include <stdlib.h>

#include "poot/llm/grammar.h"

static poot_status to_gbnf(const char *schema, const poot_json_schema_options *o, char **out) {
  size_t n = 0;
  return poot_json_schema_to_gbnf(schema, strlen(schema), o, out, &n);
}

static poot_grammar *compile_schema(const char *schema, const poot_json_schema_options *o) {
  char *text = NULL;
  POOT_ASSERT_OK(to_gbnf(schema, o, &text));
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(text, strlen(text), NULL, &g));
  poot_free(text);
  return g;
}

static bool full_match(const poot_grammar *g, const char *s) {
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  poot_status st = poot_grammar_matcher_accept(m, s, strlen(s));
  bool ok = !st && poot_grammar_matcher_can_end(m);
  poot_status_free(st);
  poot_grammar_matcher_destroy(m);
  return ok;
}

static void expect(const poot_grammar *g, const char *s, bool want) {
  if (full_match(g, s) != want) fail_msg("should %s: '%s'", want ? "accept" : "refuse", s);
}

/* The grammar of a small object, rule by rule: n is required and comes first, s is optional;
 * n's range -5..12 is "-" 1..5, one digit, or 1 followed by 0..2. */
static void test_exact_grammar(void **state) {
  (void)state;
  const char *schema =
      "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":-5,"
      "\"maximum\":12},\"s\":{\"enum\":[\"x\",\"y\"]}},\"required\":[\"n\"],"
      "\"additionalProperties\":false}";
  const char *want =
      "root ::= ws value ws\n"
      "ws ::= [ \\t]{0,20} ((\"\\n\" | \"\\r\\n\") [ \\t]{0,20})?\n"
      "n-int ::= \"-\" [1-5] | [0-9] | \"1\" [0-2]\n"
      "n-kv ::= \"\\\"n\\\"\" ws \":\" ws n-int\n"
      "s ::= \"\\\"x\\\"\" | \"\\\"y\\\"\"\n"
      "s-kv ::= \"\\\"s\\\"\" ws \":\" ws s\n"
      "value-rest ::= ( \",\" ws s-kv ws  )?\n"
      "value-rest2 ::= n-kv ws value-rest\n"
      "value ::= \"{\" ws value-rest2 \"}\"\n";
  char *text = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_json_schema_to_gbnf(schema, strlen(schema), NULL, &text, &len));
  assert_string_equal(text, want);
  assert_int_equal(len, strlen(want));
  poot_free(text);
  poot_grammar *g = compile_schema(schema, NULL);
  expect(g, "{\"n\":12}", true);
  expect(g, "{ \"n\" : -5 , \"s\" : \"y\" }", true);
  expect(g, "{\"n\":13}", false);
  expect(g, "{\"n\":-0}", false); /* canonical integers only */
  expect(g, "{\"n\":007}", false);
  expect(g, "{\"s\":\"x\",\"n\":1}", false); /* the schema's order */
  expect(g, "{\"n\":1,\"t\":1}", false);
  poot_grammar_destroy(g);
}

/* Every integer in [-1200, 1200] against the bounds by arithmetic. */
static void test_integer_ranges(void **state) {
  (void)state;
  static const struct {
    const char *kw;
    long lo, hi; /* inclusive; LONG_MIN/LONG_MAX: open */
  } cases[] = {
      {"\"minimum\":0,\"maximum\":100", 0, 100},
      {"\"minimum\":-999,\"maximum\":-10", -999, -10},
      {"\"minimum\":-17,\"maximum\":1001", -17, 1001},
      {"\"exclusiveMinimum\":9,\"exclusiveMaximum\":1000", 10, 999},
      {"\"minimum\":7", 7, 1L << 40},
      {"\"maximum\":-101", -(1L << 40), -101},
      {"\"minimum\":2.5,\"exclusiveMaximum\":99.5", 3, 99},
      {"\"minimum\":-0.5,\"maximum\":0.5", 0, 0},
      {"\"exclusiveMinimum\":-1,\"maximum\":0", 0, 0},
      {"\"minimum\":190,\"maximum\":1109", 190, 1109},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char schema[256];
    snprintf(schema, sizeof schema, "{\"type\":\"integer\",%s}", cases[k].kw);
    poot_grammar *g = compile_schema(schema, NULL);
    for (long v = -1200; v <= 1200; v++) {
      char s[32];
      snprintf(s, sizeof s, "%ld", v);
      bool want = v >= cases[k].lo && v <= cases[k].hi;
      if (full_match(g, s) != want)
        fail_msg("%s: %ld should be %s", schema, v, want ? "in" : "out");
    }
    poot_grammar_destroy(g);
  }
  /* Bounds past 64 bits are exact (integer literals are read as digits). */
  poot_grammar *g = compile_schema(
      "{\"type\":\"integer\",\"minimum\":-18446744073709551617,\"maximum\":"
      "99999999999999999999}",
      NULL);
  expect(g, "-18446744073709551617", true);
  expect(g, "-18446744073709551618", false);
  expect(g, "99999999999999999999", true);
  expect(g, "100000000000000000000", false);
  poot_grammar_destroy(g);
}

/* Decimals k/100 (written with two, one or no fraction digits, and with trailing zeros)
 * against bounds by arithmetic in hundredths. */
static void test_number_ranges(void **state) {
  (void)state;
  static const struct {
    const char *kw;
    long lo, hi; /* hundredths */
    bool lo_in, hi_in;
  } cases[] = {
      {"\"minimum\":-1.5,\"maximum\":2.25", -150, 225, true, true},
      {"\"exclusiveMinimum\":-1.5,\"exclusiveMaximum\":2.25", -150, 225, false, false},
      {"\"minimum\":0.25,\"maximum\":0.75", 25, 75, true, true},
      {"\"exclusiveMinimum\":0,\"maximum\":10", 0, 1000, false, true},
      {"\"minimum\":-3.05,\"exclusiveMaximum\":-0.5", -305, -50, true, false},
      {"\"minimum\":1.11,\"maximum\":1.19", 111, 119, true, true},
      {"\"exclusiveMinimum\":-0.01,\"exclusiveMaximum\":0.01", -1, 1, false, false},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char schema[256];
    snprintf(schema, sizeof schema, "{\"type\":\"number\",%s}", cases[k].kw);
    poot_grammar *g = compile_schema(schema, NULL);
    for (long v = -400; v <= 1100; v++) {
      bool want = (cases[k].lo_in ? v >= cases[k].lo : v > cases[k].lo) &&
                  (cases[k].hi_in ? v <= cases[k].hi : v < cases[k].hi);
      long a = labs(v);
      const char *sign = v < 0 ? "-" : "";
      char forms[4][48];
      snprintf(forms[0], sizeof forms[0], "%s%ld.%02ld", sign, a / 100, a % 100);
      snprintf(forms[1], sizeof forms[1], "%s%ld.%02ld000", sign, a / 100, a % 100);
      int nf = 2;
      if (a % 10 == 0)
        snprintf(forms[nf++], sizeof forms[0], "%s%ld.%ld", sign, a / 100, a % 100 / 10);
      if (a % 100 == 0) snprintf(forms[nf++], sizeof forms[0], "%s%ld", sign, a / 100);
      for (int f = 0; f < nf; f++) {
        if (full_match(g, forms[f]) != want)
          fail_msg("%s: %s should be %s", schema, forms[f], want ? "in" : "out");
      }
    }
    poot_grammar_destroy(g);
  }
  poot_grammar *g = compile_schema("{\"type\":\"number\",\"minimum\":0}", NULL);
  expect(g, "1e3", false);  /* a bounded number is written without exponent */
  expect(g, "-0.0", false); /* nor as a negative zero */
  expect(g, "0.0", true);
  poot_grammar_destroy(g);
  g = compile_schema("{\"type\":\"number\"}", NULL);
  expect(g, "-1.5E+30", true);
  expect(g, ".5", false);
  poot_grammar_destroy(g);
}

static int days_in(int y, int m) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : d[m - 1];
}

/* Every day of a few years, months 00..13 and days 00..32, against the calendar. */
static void test_format_date(void **state) {
  (void)state;
  poot_grammar *g = compile_schema("{\"type\":\"string\",\"format\":\"date\"}", NULL);
  static const int years[] = {0, 1, 4, 100, 1900, 1996, 2000, 2023, 2024, 2100, 2400, 9999};
  for (size_t i = 0; i < sizeof years / sizeof years[0]; i++)
    for (int m = 0; m <= 13; m++)
      for (int d = 0; d <= 32; d++) {
        char s[32];
        snprintf(s, sizeof s, "\"%04d-%02d-%02d\"", years[i], m, d);
        bool want = years[i] >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= days_in(years[i], m);
        if (full_match(g, s) != want) fail_msg("%s should be %s", s, want ? "a date" : "refused");
      }
  poot_grammar_destroy(g);
  g = compile_schema("{\"type\":\"string\",\"format\":\"date-time\"}", NULL);
  expect(g, "\"2024-02-29T23:59:59.123456-07:00\"", true);
  expect(g, "\"2024-02-29t00:00:00z\"", true);
  expect(g, "\"2024-02-29T24:00:00Z\"", false);
  expect(g, "\"2024-02-29T12:00:00\"", false);
  poot_grammar_destroy(g);
}

/* Keys of additional members avoid the declared names in every spelling the grammar allows;
 * the escapes \/ and \u are not used in them. */
static void test_additional_keys(void **state) {
  (void)state;
  poot_grammar *g = compile_schema(
      "{\"type\":\"object\",\"properties\":{\"a/b\":{\"type\":\"integer\"},\"ab\":{\"type\":"
      "\"integer\"},\"q\\\"\":{\"type\":\"integer\"}},\"additionalProperties\":{\"type\":"
      "\"string\"}}",
      NULL);
  expect(g, "{\"a/b\":1,\"ab\":2,\"q\\\"\":3}", true);
  expect(g, "{\"a/b\":\"x\"}", false);
  expect(g, "{\"a\\/b\":\"x\"}", false);
  expect(g, "{\"\\u0061b\":\"x\"}", false);
  expect(g, "{\"q\\\"\":\"x\"}", false);
  expect(g, "{\"a/c\":\"x\",\"abc\":\"y\",\"a\":\"\",\"q\":\"z\",\"q\\\"r\":\"w\"}", true);
  expect(g, "{\"ab\":1,\"x\":2}", false);
  poot_grammar_destroy(g);
}

static void test_whitespace_bound(void **state) {
  (void)state;
  poot_json_schema_options o = poot_json_schema_options_default();
  o.max_whitespace = 3;
  poot_grammar *g = compile_schema("{\"type\":\"array\"}", &o);
  expect(g, "[   ]", true);
  expect(g, "[    ]", false);
  expect(g, "\n\t [ 1 ,\r\n 2 ] \n", true);
  poot_grammar_destroy(g);
  o = poot_json_schema_options_default();
  o.compact = true;
  g = compile_schema("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\"}}}", &o);
  expect(g, "{\"a\":[1,{\"b\":2}]}", true);
  expect(g, "{\"a\": []}", false);
  poot_grammar_destroy(g);
  o.max_whitespace = 1001;
  o.compact = false;
  char *text = NULL;
  POOT_ASSERT_STATUS_MSG(to_gbnf("true", &o, &text), POOT_INVALID_ARGUMENT, "max_whitespace");
  assert_null(text);
}

/* Draft 4's boolean exclusiveMinimum and draft 7's tuple items; oneOf as anyOf; $ref to the
 * root; strict_properties. */
static void test_forms(void **state) {
  (void)state;
  poot_grammar *g = compile_schema(
      "{\"type\":\"integer\",\"minimum\":0,\"exclusiveMinimum\":true,\"maximum\":3}", NULL);
  expect(g, "0", false);
  expect(g, "3", true);
  poot_grammar_destroy(g);
  g = compile_schema(
      "{\"type\":\"array\",\"items\":[{\"type\":\"string\"},{\"type\":\"null\"}],"
      "\"additionalItems\":false}",
      NULL);
  expect(g, "[\"a\",null]", true);
  expect(g, "[\"a\"]", true);
  expect(g, "[\"a\",null,1]", false);
  expect(g, "[null]", false);
  poot_grammar_destroy(g);
  g = compile_schema(
      "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"}},\"additionalProperties\":"
      "false}",
      NULL);
  expect(g, "{\"next\":{\"next\":{}}}", true);
  expect(g, "{\"next\":1}", false);
  poot_grammar_destroy(g);
  poot_json_schema_options o = poot_json_schema_options_default();
  o.strict_properties = true;
  g = compile_schema("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\"}}}", &o);
  expect(g, "{\"a\":{\"z\":1}}", true); /* no properties: any object, even when strict */
  expect(g, "{\"a\":{},\"b\":1}", false);
  poot_grammar_destroy(g);
}

static void test_response_format(void **state) {
  (void)state;
  char *text = (char *)"x";
  size_t len = 7;
  const char *rf = "{\"type\":\"text\"}";
  POOT_ASSERT_OK(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len));
  assert_null(text);
  assert_int_equal(len, 0);
  rf = "{\"type\":\"json_object\"}";
  POOT_ASSERT_OK(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len));
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(text, len, NULL, &g));
  poot_free(text);
  expect(g, "{\"a\":[1,2,{}]}", true);
  expect(g, "[1]", false);
  expect(g, "\"s\"", false);
  poot_grammar_destroy(g);
  rf = "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\",\"strict\":true,\"schema\":"
       "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"boolean\"}},\"required\":[\"a\"]}}}";
  POOT_ASSERT_OK(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len));
  POOT_ASSERT_OK(poot_grammar_compile(text, len, NULL, &g));
  poot_free(text);
  expect(g, "{\"a\":true}", true);
  expect(g, "{\"a\":true,\"b\":1}", false); /* strict: no other members */
  poot_grammar_destroy(g);
  rf = "{\"type\":\"yaml\"}";
  POOT_ASSERT_STATUS_MSG(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len),
                         POOT_INVALID_ARGUMENT, "unknown type \"yaml\"");
  rf = "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\"}}";
  POOT_ASSERT_STATUS_MSG(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len),
                         POOT_INVALID_ARGUMENT, "/json_schema/schema");
  rf = "{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"not\":{}}}}";
  POOT_ASSERT_STATUS_MSG(poot_json_response_format_to_gbnf(rf, strlen(rf), NULL, &text, &len),
                         POOT_UNSUPPORTED, "'not' at the root is not supported");
  POOT_ASSERT_OK(poot_json_grammar_any(&text, &len));
  POOT_ASSERT_OK(poot_grammar_compile(text, len, NULL, &g));
  poot_free(text);
  expect(g, " [1, \"a\", {\"b\": null}, true, -0.5e3] ", true);
  expect(g, "{\"a\" 1}", false);
  expect(g, "", false);
  poot_grammar_destroy(g);
}

static void expect_error(const char *schema, poot_status_code code, const char *needle) {
  char *text = (char *)"x";
  POOT_ASSERT_STATUS_MSG(to_gbnf(schema, NULL, &text), code, needle);
  assert_null(text);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("{\"type\":\"object\",\"properties\":{\"a\":{\"patternProperties\":{}}}}",
               POOT_UNSUPPORTED,
               "json schema: 'patternProperties' at /properties/a is not supported");
  expect_error("{\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":-1}}}",
               POOT_INVALID_ARGUMENT,
               "'minLength' must be a non-negative integer at /properties/name/minLength");
  expect_error("{\"type\":\"strin\"}", POOT_INVALID_ARGUMENT, "'type' must be a type name");
  expect_error("{\"type\":", POOT_INVALID_ARGUMENT, "json schema: not JSON");
  expect_error("{\"items\":{\"$ref\":\"#/$defs/missing\"}}", POOT_INVALID_ARGUMENT,
               "'$ref' '#/$defs/missing' points at nothing at /items/$ref");
  expect_error("{\"$ref\":\"https://example.com/s.json\"}", POOT_UNSUPPORTED,
               "'$ref' to 'https://example.com/s.json'");
  expect_error("{\"type\":\"string\",\"pattern\":\"^(?=a)b$\"}", POOT_UNSUPPORTED,
               "a lookahead in the pattern (at character 4) at /pattern is not supported");
  expect_error("{\"type\":\"string\",\"pattern\":\"(a\\\\1)\"}", POOT_UNSUPPORTED,
               "a back reference");
  expect_error("{\"type\":\"string\",\"pattern\":\"a**\"}", POOT_INVALID_ARGUMENT,
               "something to repeat");
  expect_error("{\"type\":\"string\",\"pattern\":\"(a*)*\"}", POOT_UNSUPPORTED,
               "repeating something that can match the empty string");
  expect_error("{\"type\":\"string\",\"format\":\"uri\"}", POOT_UNSUPPORTED,
               "format 'uri' at /format is not supported");
  expect_error(
      "{\"$defs\":{\"a\":{\"anyOf\":[{\"$ref\":\"#/$defs/a\"},{\"type\":\"null\"}]}},"
      "\"$ref\":\"#/$defs/a\"}",
      POOT_INVALID_ARGUMENT, "refers to itself without an object or array");
  expect_error("{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", POOT_INVALID_ARGUMENT,
               "the schema accepts no value");
  expect_error("false", POOT_INVALID_ARGUMENT, "accepts no value");
  expect_error("{\"allOf\":[{\"minLength\":1},{\"minLength\":2}]}", POOT_UNSUPPORTED,
               "'allOf' whose members both give 'minLength'");
  expect_error("{\"type\":\"array\",\"uniqueItems\":true}", POOT_UNSUPPORTED, "'uniqueItems'");
  expect_error("{\"type\":\"string\",\"maxLength\":2000000}", POOT_UNSUPPORTED, "above 1000000");
  expect_error("{\"type\":\"string\",\"maxLength\":4.6e85}", POOT_UNSUPPORTED, "above 1000000");
  expect_error("{\"type\":\"array\",\"minItems\":1.5}", POOT_INVALID_ARGUMENT,
               "'minItems' must be a non-negative integer at /minItems");
  expect_error("{\"enum\":[1],\"minimum\":0}", POOT_UNSUPPORTED,
               "'enum' or 'const' together with 'minimum'");
  expect_error("{\"properties\":{\"a\":false},\"required\":[\"a\"]}", POOT_INVALID_ARGUMENT,
               "accepts no value");
  expect_error("{\"properties\":{\"a\":{}},\"required\":[\"b\"],\"additionalProperties\":false}",
               POOT_INVALID_ARGUMENT, "required property 'b' is not allowed");
  char *text = NULL;
  size_t len = 0;
  POOT_ASSERT_STATUS(poot_json_schema_to_gbnf(NULL, 3, NULL, &text, &len), POOT_INVALID_ARGUMENT);
  /* 80 strings of different maxLength near 1,000: the parser would need 72,000 rules. */
  poot_strbuf big;
  poot_strbuf_init(&big);
  poot_strbuf_puts(&big, "{\"properties\":{");
  for (int i = 0; i < 80; i++)
    poot_strbuf_printf(&big, "%s\"p%d\":{\"type\":\"string\",\"maxLength\":%d}", i ? "," : "", i,
                       900 + i);
  poot_strbuf_puts(&big, "}}");
  POOT_ASSERT_STATUS_MSG(poot_json_schema_to_gbnf(big.data, big.len, NULL, &text, &len),
                         POOT_CAPACITY, "the grammar passes the GBNF bounds");
  assert_null(text);
  poot_strbuf_deinit(&big);
  /* A long maxLength is chunked: one shared rule for the last 999, so it stays small. */
  poot_grammar *lg = compile_schema("{\"type\":\"string\",\"maxLength\":412020}", NULL);
  expect(lg, "\"abc\"", true);
  poot_grammar_destroy(lg);
  /* An unknown format is a plain string when asked. */
  poot_json_schema_options o = poot_json_schema_options_default();
  o.ignore_unknown_formats = true;
  poot_grammar *g = compile_schema("{\"type\":\"string\",\"format\":\"uri\"}", &o);
  expect(g, "\"anything\"", true);
  poot_grammar_destroy(g);
}

static poot_status oom_attempt(void *ctx) {
  const char *schema = ctx;
  char *text = NULL;
  size_t len = 0;
  poot_status st = poot_json_schema_to_gbnf(schema, strlen(schema), NULL, &text, &len);
  if (!st) assert_true(len > 0 && text[len - 1] == '\n');
  poot_free(text);
  return st;
}

static void test_oom(void **state) {
  (void)state;
  const char *schema =
      "{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"number\","
      "\"minimum\":-1.5,\"maximum\":20},\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":"
      "\"#/$defs/n\"},\"maxItems\":3},\"d\":{\"type\":\"string\",\"format\":\"date\"},"
      "\"p\":{\"type\":\"string\",\"pattern\":\"^[a-z]+\\\\d?$\"},\"e\":{\"enum\":[[1],{\"a\":"
      "2}]}},\"required\":[\"v\"]}},\"allOf\":[{\"$ref\":\"#/$defs/n\"}]}";
  assert_true(poot_test_oom_sweep("json_schema_to_gbnf", oom_attempt, (void *)schema, 100000) > 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_grammar),   cmocka_unit_test(test_integer_ranges),
      cmocka_unit_test(test_number_ranges),   cmocka_unit_test(test_format_date),
      cmocka_unit_test(test_additional_keys), cmocka_unit_test(test_whitespace_bound),
      cmocka_unit_test(test_forms),           cmocka_unit_test(test_response_format),
      cmocka_unit_test(test_errors),          cmocka_unit_test(test_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
