/* Forced tool calls (src/llm/toolcall/toolcall_grammar.c, docs/toolcalls.md
 * "Forced calls"): the grammar built from a tools list accepts exactly the
 * calls whose arguments validate against the function's schema, in each
 * format's syntax, and what it accepts reads back through the format's
 * parser with the same name and arguments; a named function allows only
 * that function, once; bad tools and unsupported schemas are refused; the
 * multi-schema compiler keeps each schema's $refs in its own document. */
#include "poot/llm/grammar.h"
#include "poot/llm/toolcall.h"
#include "poot_test.h"

static const char TOOLS[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":20},"
    "\"unit\":{\"enum\":[\"celsius\",\"fahrenheit\"]}},\"required\":[\"city\"],"
    "\"additionalProperties\":false}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"add\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/n\"},\"b\":{\"$ref\":"
    "\"#/$defs/n\"}},\"required\":[\"a\",\"b\"],\"additionalProperties\":false,"
    "\"$defs\":{\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":99}}}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"now\"}}]";

static poot_json *parse_json(poot_arena *a, const char *text) {
  poot_json *v = NULL;
  POOT_ASSERT_OK(poot_json_parse(a, text, strlen(text), NULL, &v));
  return v;
}

/* Whether the grammar accepts `text` whole and may end there. */
static bool accepts(const poot_grammar *g, const char *text) {
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  poot_status st = poot_grammar_matcher_accept(m, text, strlen(text));
  bool ok = !st && poot_grammar_matcher_can_end(m);
  poot_status_free(st);
  poot_grammar_matcher_destroy(m);
  return ok;
}

static poot_grammar *build(poot_toolcall_format f, const poot_json *tools, const char *fn,
                           uint32_t max_calls) {
  poot_toolcall_grammar_options o = {.function = fn, .max_calls = max_calls};
  char *gbnf = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_toolcall_grammar(f, tools, &o, &gbnf, &len));
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(gbnf, len, NULL, &g));
  poot_free(gbnf);
  return g;
}

/* The text parses as `format` into exactly the calls given (name, args). */
static void reads_back(poot_toolcall_format f, const char *text, size_t n_calls,
                       const char *const *names, const char *const *args) {
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  p.format = f == POOT_TOOLCALL_FORMAT_NONE ? POOT_TOOLCALL_FORMAT_LLAMA3 : f;
  poot_toolcall_result r;
  POOT_ASSERT_OK(poot_toolcall_parse(&p, text, strlen(text), &r));
  assert_int_equal(r.call_count, n_calls);
  assert_string_equal(r.content, "");
  for (size_t i = 0; i < n_calls; i++) {
    assert_string_equal(r.calls[i].name, names[i]);
    assert_string_equal(r.calls[i].arguments, args[i]);
  }
  poot_toolcall_result_deinit(&r);
}

static void test_hermes(void **state) {
  (void)state;
  poot_arena a;
  poot_arena_init(&a, 0);
  poot_json *tools = parse_json(&a, TOOLS);
  poot_grammar *g = build(POOT_TOOLCALL_FORMAT_HERMES, tools, NULL, 2);
  const char *one = "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}"
                    "\n</tool_call>";
  const char *two = "<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":40}}\n"
                    "</tool_call>\n<tool_call>\n{\"name\":\"now\",\"arguments\":{\"x\":[1]}}\n"
                    "</tool_call>";
  assert_true(accepts(g, one));
  assert_true(accepts(g, two));
  reads_back(POOT_TOOLCALL_FORMAT_HERMES, one, 1, (const char *[]){"get_weather"},
             (const char *[]){"{\"city\":\"Paris\"}"});
  reads_back(POOT_TOOLCALL_FORMAT_HERMES, two, 2, (const char *[]){"add", "now"},
             (const char *[]){"{\"a\":2,\"b\":40}", "{\"x\":[1]}"});
  /* arguments that do not validate, an unknown function, no call, too many */
  const char *refused[] = {
      "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>",
      "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"P\",\"x\":1}}\n"
      "</tool_call>",
      "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"P\",\"unit\":\"K\"}}\n"
      "</tool_call>",
      "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":"
      "\"123456789012345678901\"}}\n</tool_call>",
      "<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":100}}\n</tool_call>",
      "<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":-1,\"b\":1}}\n</tool_call>",
      "<tool_call>\n{\"name\":\"rm\",\"arguments\":{}}\n</tool_call>",
      "",
      "Sure!",
      "<tool_call>\n{\"name\":\"now\",\"arguments\":{}}\n</tool_call>\n<tool_call>\n{\"name\":"
      "\"now\",\"arguments\":{}}\n</tool_call>\n<tool_call>\n{\"name\":\"now\",\"arguments\":"
      "{}}\n</tool_call>",
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    if (accepts(g, refused[i])) fail_msg("accepted refused[%zu]: %s", i, refused[i]);
  }
  poot_grammar_destroy(g);
  poot_arena_deinit(&a);
}

static void test_named_and_formats(void **state) {
  (void)state;
  poot_arena a;
  poot_arena_init(&a, 0);
  poot_json *tools = parse_json(&a, TOOLS);
  /* a named function: only it, once */
  poot_grammar *g = build(POOT_TOOLCALL_FORMAT_HERMES, tools, "add", 0);
  const char *add = "<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}\n</tool_call>";
  assert_true(accepts(g, add));
  assert_false(accepts(g, "<tool_call>\n{\"name\":\"now\",\"arguments\":{}}\n</tool_call>"));
  char twice[256];
  snprintf(twice, sizeof twice, "%s\n%s", add, add);
  assert_false(accepts(g, twice));
  poot_grammar_destroy(g);
  /* LLAMA3 (and NONE): the JSON object with "parameters", ';' between */
  for (int f = POOT_TOOLCALL_FORMAT_NONE; f <= POOT_TOOLCALL_FORMAT_LLAMA3; f++) {
    g = build((poot_toolcall_format)f, tools, NULL, 0);
    const char *t = "{\"name\":\"add\",\"parameters\":{\"a\":1,\"b\":2}};{\"name\":\"now\","
                    "\"parameters\":{}}";
    assert_true(accepts(g, t));
    assert_false(accepts(g, "{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}"));
    reads_back((poot_toolcall_format)f, t, 2, (const char *[]){"add", "now"},
               (const char *[]){"{\"a\":1,\"b\":2}", "{}"});
    poot_grammar_destroy(g);
  }
  /* MISTRAL: the marker and a JSON array */
  g = build(POOT_TOOLCALL_FORMAT_MISTRAL, tools, NULL, 0);
  const char *m = "[TOOL_CALLS][{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\","
                  "\"unit\":\"celsius\"}},{\"name\":\"now\",\"arguments\":{}}]";
  assert_true(accepts(g, m));
  reads_back(POOT_TOOLCALL_FORMAT_MISTRAL, m, 2, (const char *[]){"get_weather", "now"},
             (const char *[]){"{\"city\":\"Rome\",\"unit\":\"celsius\"}", "{}"});
  poot_grammar_destroy(g);
  poot_arena_deinit(&a);
}

static void test_errors(void **state) {
  (void)state;
  poot_arena a;
  poot_arena_init(&a, 0);
  char *gbnf = NULL;
  size_t len = 0;
  poot_toolcall_grammar_options named = {.function = "nope"};
  POOT_ASSERT_STATUS(poot_toolcall_grammar(POOT_TOOLCALL_FORMAT_HERMES, parse_json(&a, TOOLS),
                                           &named, &gbnf, &len),
                     POOT_INVALID_ARGUMENT);
  const char *bad[] = {"{}", "[]", "[1]", "[{\"type\":\"function\"}]",
                       "[{\"function\":{\"name\":\"\"}}]",
                       "[{\"function\":{\"name\":\"f\",\"parameters\":3}}]",
                       "[{\"type\":\"code\",\"function\":{\"name\":\"f\"}}]"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    POOT_ASSERT_STATUS(poot_toolcall_grammar(POOT_TOOLCALL_FORMAT_HERMES, parse_json(&a, bad[i]),
                                             NULL, &gbnf, &len),
                       POOT_INVALID_ARGUMENT);
    assert_null(gbnf);
  }
  POOT_ASSERT_STATUS(
      poot_toolcall_grammar(POOT_TOOLCALL_FORMAT_HERMES,
                            parse_json(&a, "[{\"function\":{\"name\":\"f\",\"parameters\":{"
                                           "\"patternProperties\":{\"a\":{}}}}}]"),
                            NULL, &gbnf, &len),
      POOT_UNSUPPORTED);
  /* the multi-schema compiler: a caller's name that is a primitive's, or twice */
  poot_json_schema_rule r[2] = {{"ws", "{}", 2}, {"x", "{}", 2}};
  POOT_ASSERT_STATUS(poot_json_schemas_to_gbnf(r, 1, "x", NULL, &gbnf, &len),
                     POOT_INVALID_ARGUMENT);
  r[0].name = "x";
  POOT_ASSERT_STATUS(poot_json_schemas_to_gbnf(r, 2, "x", NULL, &gbnf, &len),
                     POOT_INVALID_ARGUMENT);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_STATUS(poot_gbnf_literal(&sb, "\xff", 1), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_OK(poot_gbnf_literal(&sb, "a\"\\\n\x01", 5));
  assert_string_equal(sb.data, "\"a\\\"\\\\\\n\\x01\"");
  poot_strbuf_deinit(&sb);
  poot_arena_deinit(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hermes),
      cmocka_unit_test(test_named_and_formats),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
