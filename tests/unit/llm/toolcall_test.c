/* Tool-call and reasoning parsing (src/llm/toolcall/): each format with one
 * and several calls, calls after content, malformed calls, markers in prose,
 * reasoning; the streaming property (the deltas of any split join to the
 * whole-reply result) over every split point of every case and over random
 * replies; detection from the real templates; and the request side: every
 * real template with tool support renders a conversation with a call and a
 * tool result, and the call it renders reads back through this parser. */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>

#include "poot/llm/chat_template.h"
#include "poot/llm/toolcall.h"
#include "poot_test.h"

typedef struct expect_call {
  const char *name;
  const char *arguments;
} expect_call;

typedef struct tcase {
  const char *what;
  poot_toolcall_format format;
  poot_toolcall_reasoning reasoning;
  bool starts_in_reasoning;
  const char *text;
  const char *content;
  const char *reasoning_text;
  expect_call calls[4];
} tcase;

#define WEATHER_ARGS "{\"city\":\"Zürich\",\"unit\":\"celsius\"}"
#define H POOT_TOOLCALL_FORMAT_HERMES
#define L POOT_TOOLCALL_FORMAT_LLAMA3
#define M POOT_TOOLCALL_FORMAT_MISTRAL
#define N POOT_TOOLCALL_FORMAT_NONE
#define RN POOT_TOOLCALL_REASONING_NONE
#define RT POOT_TOOLCALL_REASONING_THINK
#define RM POOT_TOOLCALL_REASONING_MISTRAL_THINK

static const tcase cases[] = {
    {"hermes plain", H, RN, false, "Hello there.\n", "Hello there.\n", "", {{0}}},
    {"hermes one call",
     H,
     RN,
     false,
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"unit\": "
     "\"celsius\"}}\n</tool_call>",
     "",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"hermes two calls",
     H,
     RN,
     false,
     "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n"
     "{\"name\": \"b\", \"arguments\": {\"y\": [1, 2.50, true, null]}}\n</tool_call>\n",
     "",
     "",
     {{"a", "{\"x\":1}"}, {"b", "{\"y\":[1,2.50,true,null]}"}}},
    {"hermes content then call",
     H,
     RN,
     false,
     "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
     "\"Zürich\", \"unit\": \"celsius\"}}\n</tool_call>",
     "Let me check.",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"hermes call then content",
     H,
     RN,
     false,
     "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>\n\nDone. ",
     "Done. ",
     "",
     {{"f", "{}"}}},
    {"hermes malformed JSON",
     H,
     RN,
     false,
     "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }}\n</tool_call>",
     "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }}\n</tool_call>",
     "",
     {{0}}},
    {"hermes no name",
     H,
     RN,
     false,
     "<tool_call>{\"arguments\": {}}</tool_call>",
     "<tool_call>{\"arguments\": {}}</tool_call>",
     "",
     {{0}}},
    {"hermes marker in prose",
     H,
     RN,
     false,
     "Wrap calls in <tool_call> tags, like <tool_call>x.",
     "Wrap calls in <tool_call> tags, like <tool_call>x.",
     "",
     {{0}}},
    {"hermes unclosed",
     H,
     RN,
     false,
     "<tool_call>{\"name\":\"f\",\"arguments\":{}}",
     "<tool_call>{\"name\":\"f\",\"arguments\":{}}",
     "",
     {{0}}},
    {"hermes marker in a string",
     H,
     RN,
     false,
     "<tool_call>{\"name\":\"f\",\"arguments\":{\"s\":\"</tool_call> \\\" {\"}}</tool_call>",
     "",
     "",
     {{"f", "{\"s\":\"</tool_call> \\\" {\"}"}}},
    {"hermes string arguments",
     H,
     RN,
     false,
     "<tool_call>{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1}\"}</tool_call>",
     "",
     "",
     {{"f", "{\"a\":1}"}}},
    {"hermes bad call between good",
     H,
     RN,
     false,
     "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call><tool_call>{oops}</tool_call>"
     "<tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
     "<tool_call>{oops}</tool_call>",
     "",
     {{"a", "{}"}, {"b", "{}"}}},
    {"qwen3 reasoning and call",
     H,
     RT,
     false,
     "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
     "\"arguments\": {\"city\": \"Zürich\", \"unit\": \"celsius\"}}\n</tool_call>",
     "",
     "The user wants the weather.",
     {{"get_weather", WEATHER_ARGS}}},
    {"qwen3 reasoning and answer",
     H,
     RT,
     false,
     "<think>\n\n</think>\n\nHi! How can I help?",
     "Hi! How can I help?",
     "",
     {{0}}},
    {"reasoning opened by the prompt",
     H,
     RT,
     true,
     "Two and two.\n</think>\n\nThe answer is 4.",
     "The answer is 4.",
     "Two and two.",
     {{0}}},
    {"reasoning never closed",
     N,
     RT,
     true,
     "Still thinking <tool_call> ",
     "",
     "Still thinking <tool_call> ",
     {{0}}},
    {"reasoning off", H, RN, false, "<think>x</think>y", "<think>x</think>y", "", {{0}}},
    {"think later is content",
     N,
     RT,
     false,
     "Hi <think>x</think>",
     "Hi <think>x</think>",
     "",
     {{0}}},
    {"call inside reasoning is not one",
     H,
     RT,
     false,
     "<think><tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call></think>ok",
     "ok",
     "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>",
     {{0}}},
    {"llama one call",
     L,
     RN,
     false,
     "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Zürich\", \"unit\": \"celsius\"}}",
     "",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"llama python tag",
     L,
     RN,
     false,
     "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Zürich\", "
     "\"unit\": \"celsius\"}}",
     "",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"llama two calls",
     L,
     RN,
     false,
     "\n{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"arguments\": {\"q\": \"x;y\"}}",
     "",
     "",
     {{"a", "{}"}, {"b", "{\"q\":\"x;y\"}"}}},
    {"llama plain", L, RN, false, "The weather is fine.", "The weather is fine.", "", {{0}}},
    {"llama JSON that is no call",
     L,
     RN,
     false,
     "{\"name\": \"Ada\", \"age\": 36}",
     "{\"name\": \"Ada\", \"age\": 36}",
     "",
     {{0}}},
    {"llama malformed",
     L,
     RN,
     false,
     " {\"name\": \"f\", \"parameters\": {\"a\": 1}",
     " {\"name\": \"f\", \"parameters\": {\"a\": 1}",
     "",
     {{0}}},
    {"llama call after content",
     L,
     RN,
     false,
     "Sure: {\"name\": \"f\", \"parameters\": {}}",
     "Sure: {\"name\": \"f\", \"parameters\": {}}",
     "",
     {{0}}},
    {"llama builtin call",
     L,
     RN,
     false,
     "<|python_tag|>brave_search.call(query=\"x\")",
     "<|python_tag|>brave_search.call(query=\"x\")",
     "",
     {{0}}},
    {"llama call then text",
     L,
     RN,
     false,
     "{\"name\": \"f\", \"parameters\": {}}\n\nI called f.",
     "I called f.",
     "",
     {{"f", "{}"}}},
    {"mistral array",
     M,
     RN,
     false,
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"unit\": "
     "\"celsius\"}, \"id\": \"abcdefghi\"}]",
     "",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"mistral array of two",
     M,
     RN,
     false,
     "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": "
     "{\"k\": \"v\"}}]</s>",
     "</s>",
     "",
     {{"a", "{}"}, {"b", "{\"k\":\"v\"}"}}},
    {"mistral named",
     M,
     RN,
     false,
     "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Zürich\", \"unit\": \"celsius\"}",
     "",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"mistral named two",
     M,
     RN,
     false,
     "[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b.c-d[CALL_ID]x1y2z3w4v[ARGS]{\"n\": -1.5e3}",
     "",
     "",
     {{"a", "{}"}, {"b.c-d", "{\"n\":-1.5e3}"}}},
    {"mistral content then call",
     M,
     RN,
     false,
     "Checking. [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Zürich\", \"unit\": \"celsius\"}",
     "Checking.",
     "",
     {{"get_weather", WEATHER_ARGS}}},
    {"mistral malformed",
     M,
     RN,
     false,
     "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}",
     "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}",
     "",
     {{0}}},
    {"mistral empty array", M, RN, false, "[TOOL_CALLS][]", "[TOOL_CALLS][]", "", {{0}}},
    {"mistral marker in prose",
     M,
     RN,
     false,
     "The token [TOOL_CALLS] starts a call.",
     "The token [TOOL_CALLS] starts a call.",
     "",
     {{0}}},
    {"mistral think and call",
     M,
     RM,
     false,
     "[THINK]Need the weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Zürich\", "
     "\"unit\": \"celsius\"}",
     "",
     "Need the weather.",
     {{"get_weather", WEATHER_ARGS}}},
    {"none format",
     N,
     RN,
     false,
     "<tool_call>{\"name\":\"f\"}</tool_call>",
     "<tool_call>{\"name\":\"f\"}</tool_call>",
     "",
     {{0}}},
    {"empty reply", H, RT, false, "", "", "", {{0}}},
    {"whitespace reply", H, RT, false, " \n ", " \n ", "", {{0}}},
    {"partial marker at end", H, RT, false, "<thi", "<thi", "", {{0}}},
    {"partial call marker at end", H, RN, false, "ok <tool_ca", "ok <tool_ca", "", {{0}}},
};

static void params_of(const tcase *c, poot_toolcall_params *p) {
  poot_toolcall_params_default(p);
  p->format = c->format;
  p->reasoning = c->reasoning;
  p->starts_in_reasoning = c->starts_in_reasoning;
  p->id_seed = 42;
}

/* The deltas of one stream joined. */
typedef struct joined {
  poot_strbuf content, reasoning, calls; /* calls: "id name args\n" each */
  uint32_t next_index;
} joined;

static void joined_init(joined *j) {
  poot_strbuf_init(&j->content);
  poot_strbuf_init(&j->reasoning);
  poot_strbuf_init(&j->calls);
  j->next_index = 0;
}

static void joined_deinit(joined *j) {
  poot_strbuf_deinit(&j->content);
  poot_strbuf_deinit(&j->reasoning);
  poot_strbuf_deinit(&j->calls);
}

static bool utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t k = u[i] < 0x80             ? 1
               : (u[i] & 0xe0) == 0xc0 ? 2
               : (u[i] & 0xf0) == 0xe0 ? 3
               : (u[i] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (!k || i + k > n) return false;
    for (size_t t = 1; t < k; t++)
      if ((u[i + t] & 0xc0) != 0x80) return false;
    i += k;
  }
  return true;
}

static void add_deltas(joined *j, const poot_toolcall_deltas *d, bool check_utf8) {
  for (size_t i = 0; i < d->count; i++) {
    const poot_toolcall_delta *x = &d->items[i];
    if (x->kind == POOT_TOOLCALL_DELTA_CALL) {
      assert_int_equal(x->call_index, j->next_index);
      j->next_index++;
      poot_strbuf_printf(&j->calls, "%s %s %s\n", x->call->id, x->call->name, x->call->arguments);
      continue;
    }
    assert_true(x->len > 0);
    if (check_utf8 && !utf8_valid(x->text, x->len)) fail_msg("a delta splits a UTF-8 character");
    poot_strbuf_append(x->kind == POOT_TOOLCALL_DELTA_CONTENT ? &j->content : &j->reasoning,
                       x->text, x->len);
  }
}

static void calls_text(const poot_toolcall_result *r, poot_strbuf *out) {
  for (size_t i = 0; i < r->call_count; i++)
    poot_strbuf_printf(out, "%s %s %s\n", r->calls[i].id, r->calls[i].name, r->calls[i].arguments);
}

/* Streams text cut at the given offsets (ascending) and checks the joined
 * deltas against the whole-reply result. */
static size_t streams_checked;

static void stream_check(const poot_toolcall_params *p, const char *text, size_t len,
                         const size_t *cuts, size_t ncuts, const poot_toolcall_result *whole) {
  poot_toolcall_stream *s = NULL;
  POOT_ASSERT_OK(poot_toolcall_stream_create(p, &s));
  streams_checked++;
  joined j;
  joined_init(&j);
  bool check_utf8 = utf8_valid(text, len);
  size_t at = 0;
  poot_toolcall_deltas d;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    POOT_ASSERT_OK(poot_toolcall_stream_feed(s, text + at, end - at, &d));
    add_deltas(&j, &d, check_utf8);
    at = end;
  }
  POOT_ASSERT_OK(poot_toolcall_stream_finish(s, &d));
  add_deltas(&j, &d, check_utf8);
  poot_strbuf wc;
  poot_strbuf_init(&wc);
  calls_text(whole, &wc);
  if (j.content.len != whole->content_len || memcmp(j.content.data, whole->content, j.content.len))
    fail_msg("streamed content '%s' != whole '%s' (cut at %zu of %zu)", j.content.data,
             whole->content, ncuts ? cuts[0] : len, len);
  assert_string_equal(j.reasoning.data, whole->reasoning);
  assert_string_equal(j.calls.data, wc.data);
  /* The stream's own result is the same. */
  poot_toolcall_result r;
  poot_toolcall_stream_result(s, &r);
  assert_string_equal(r.content, whole->content);
  assert_int_equal(r.call_count, whole->call_count);
  poot_strbuf_deinit(&wc);
  joined_deinit(&j);
  poot_toolcall_stream_destroy(s);
}

/* Every single split point, byte by byte, and random multi-splits. */
static void split_property(const poot_toolcall_params *p, const char *text, size_t len,
                           uint64_t seed) {
  poot_toolcall_result whole;
  POOT_ASSERT_OK(poot_toolcall_parse(p, text, len, &whole));
  for (size_t cut = 0; cut <= len; cut++) stream_check(p, text, len, &cut, 1, &whole);
  size_t *cuts = malloc((len + 1) * sizeof *cuts);
  for (size_t i = 0; i < len; i++) cuts[i] = i;
  stream_check(p, text, len, cuts, len, &whole);
  uint64_t st = seed;
  for (int round = 0; round < 20; round++) {
    size_t n = 0;
    for (size_t i = 1; i < len; i++)
      if (poot_test_rand_u64(&st) % 5 == 0) cuts[n++] = i;
    stream_check(p, text, len, cuts, n, &whole);
  }
  free(cuts);
  poot_toolcall_result_deinit(&whole);
}

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tcase *c = &cases[i];
    poot_toolcall_params p;
    params_of(c, &p);
    poot_toolcall_result r;
    POOT_ASSERT_OK(poot_toolcall_parse(&p, c->text, strlen(c->text), &r));
    if (strcmp(r.content, c->content) != 0)
      fail_msg("%s: content '%s', expected '%s'", c->what, r.content, c->content);
    if (strcmp(r.reasoning, c->reasoning_text) != 0)
      fail_msg("%s: reasoning '%s', expected '%s'", c->what, r.reasoning, c->reasoning_text);
    size_t n = 0;
    while (n < 4 && c->calls[n].name) n++;
    if (r.call_count != n) fail_msg("%s: %zu calls, expected %zu", c->what, r.call_count, n);
    for (size_t k = 0; k < n; k++) {
      assert_string_equal(r.calls[k].name, c->calls[k].name);
      assert_int_equal(r.calls[k].name_len, strlen(c->calls[k].name));
      if (strcmp(r.calls[k].arguments, c->calls[k].arguments) != 0)
        fail_msg("%s: call %zu arguments %s, expected %s", c->what, k, r.calls[k].arguments,
                 c->calls[k].arguments);
      assert_int_equal(r.calls[k].arguments_len, strlen(c->calls[k].arguments));
    }
    poot_toolcall_result_deinit(&r);
    split_property(&p, c->text, strlen(c->text), i + 1);
  }
  printf("%zu cases, %zu splits streamed\n", sizeof cases / sizeof cases[0], streams_checked);
}

/* Random replies built from the markers, JSON pieces, whitespace and UTF-8,
 * in every format and reasoning style. */
static void test_random_replies(void **state) {
  (void)state;
  static const char *parts[] = {
      "<tool_call>",
      "</tool_call>",
      "[TOOL_CALLS]",
      "[ARGS]",
      "[CALL_ID]",
      "<|python_tag|>",
      "<think>",
      "</think>",
      "[THINK]",
      "[/THINK]",
      "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
      "{\"name\": \"g\", \"parameters\": {}}",
      "[{\"name\":\"h\",\"arguments\":{}}]",
      "{",
      "}",
      "\"",
      "\\",
      ";",
      "get",
      "\n",
      " ",
      "Zür",
      "日本",
      "x",
      "<",
      "[",
      "{\"a\": \"}\"}",
  };
  uint64_t st = 7;
  char text[512];
  for (int round = 0; round < 300; round++) {
    size_t len = 0;
    size_t pieces = 1 + poot_test_rand_u64(&st) % 12;
    for (size_t i = 0; i < pieces; i++) {
      const char *part = parts[poot_test_rand_u64(&st) % (sizeof parts / sizeof parts[0])];
      size_t n = strlen(part);
      if (len + n >= sizeof text) break;
      memcpy(text + len, part, n);
      len += n;
    }
    poot_toolcall_params p;
    poot_toolcall_params_default(&p);
    p.format = (poot_toolcall_format)(round % POOT_TOOLCALL_FORMAT_COUNT);
    p.reasoning = (poot_toolcall_reasoning)((round / 4) % POOT_TOOLCALL_REASONING_COUNT);
    p.starts_in_reasoning = (round / 12) % 2;
    p.id_seed = (uint64_t)round;
    split_property(&p, text, len, (uint64_t)round + 100);
  }
  printf("300 random replies, %zu splits streamed in all\n", streams_checked);
}

static void test_ids(void **state) {
  (void)state;
  const char *text =
      "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>"
      "<tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>";
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  p.format = POOT_TOOLCALL_FORMAT_HERMES;
  p.id_seed = 1234;
  poot_toolcall_result r1, r2, r3;
  POOT_ASSERT_OK(poot_toolcall_parse(&p, text, strlen(text), &r1));
  POOT_ASSERT_OK(poot_toolcall_parse(&p, text, strlen(text), &r2));
  p.id_seed = 1235;
  POOT_ASSERT_OK(poot_toolcall_parse(&p, text, strlen(text), &r3));
  assert_int_equal(r1.call_count, 2);
  for (size_t i = 0; i < 2; i++) {
    const char *id = r1.calls[i].id;
    assert_int_equal(strlen(id), 5 + 24);
    assert_memory_equal(id, "call_", 5);
    for (size_t k = 5; id[k]; k++) assert_true(isalnum((unsigned char)id[k]));
    assert_string_equal(id, r2.calls[i].id);     /* deterministic */
    assert_string_not_equal(id, r3.calls[i].id); /* per seed */
  }
  assert_string_not_equal(r1.calls[0].id, r1.calls[1].id);
  poot_toolcall_result_deinit(&r1);
  poot_toolcall_result_deinit(&r2);
  poot_toolcall_result_deinit(&r3);
  p.format = POOT_TOOLCALL_FORMAT_MISTRAL;
  const char *m = "[TOOL_CALLS]f[ARGS]{}";
  POOT_ASSERT_OK(poot_toolcall_parse(&p, m, strlen(m), &r1));
  assert_int_equal(r1.call_count, 1);
  assert_int_equal(strlen(r1.calls[0].id), 9);
  for (size_t k = 0; k < 9; k++) assert_true(isalnum((unsigned char)r1.calls[0].id[k]));
  poot_toolcall_result_deinit(&r1);
}

static void test_limits_and_errors(void **state) {
  (void)state;
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  p.format = POOT_TOOLCALL_FORMAT_HERMES;
  p.max_calls = 2;
  const char *three =
      "<tool_call>{\"name\":\"a\"}</tool_call><tool_call>{\"name\":\"b\"}</tool_call>"
      "<tool_call>{\"name\":\"c\"}</tool_call>";
  poot_toolcall_result r;
  POOT_ASSERT_STATUS_MSG(poot_toolcall_parse(&p, three, strlen(three), &r), POOT_CAPACITY,
                         "max_calls");
  assert_int_equal(r.call_count, 0);
  assert_string_equal(r.content, "");
  poot_toolcall_result_deinit(&r); /* an empty result is safe to deinit */

  /* A call that never ends is held back only up to max_held. */
  p.max_calls = 0;
  p.max_held = 64;
  poot_toolcall_stream *s = NULL;
  POOT_ASSERT_OK(poot_toolcall_stream_create(&p, &s));
  poot_toolcall_deltas d;
  POOT_ASSERT_OK(
      poot_toolcall_stream_feed(s, "hi <tool_call>{\"name\": \"f\", \"arguments\": {",
                                strlen("hi <tool_call>{\"name\": \"f\", \"arguments\": {"), &d));
  assert_int_equal(d.count, 1);
  assert_int_equal(d.items[0].kind, POOT_TOOLCALL_DELTA_CONTENT);
  assert_int_equal(d.items[0].len, 2); /* "hi": the space may touch a call */
  const char *more = "\"text\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  POOT_ASSERT_STATUS_MSG(poot_toolcall_stream_feed(s, more, strlen(more), &d), POOT_CAPACITY,
                         "max_held");
  assert_int_equal(d.count, 0);
  POOT_ASSERT_STATUS_MSG(poot_toolcall_stream_feed(s, "x", 1, &d), POOT_INVALID_ARGUMENT,
                         "failed earlier");
  POOT_ASSERT_STATUS(poot_toolcall_stream_finish(s, &d), POOT_INVALID_ARGUMENT);
  poot_toolcall_stream_destroy(s);

  POOT_ASSERT_OK(poot_toolcall_stream_create(NULL, &s));
  POOT_ASSERT_OK(poot_toolcall_stream_finish(s, &d));
  POOT_ASSERT_STATUS_MSG(poot_toolcall_stream_feed(s, "x", 1, &d), POOT_INVALID_ARGUMENT,
                         "finished");
  poot_toolcall_stream_destroy(s);
  poot_toolcall_stream_destroy(NULL);

  p.format = (poot_toolcall_format)99;
  POOT_ASSERT_STATUS(poot_toolcall_stream_create(&p, &s), POOT_INVALID_ARGUMENT);
  assert_null(s);

  poot_toolcall_format f;
  POOT_ASSERT_OK(poot_toolcall_format_from_name("qwen", &f));
  assert_int_equal(f, POOT_TOOLCALL_FORMAT_HERMES);
  POOT_ASSERT_OK(poot_toolcall_format_from_name("llama3", &f));
  assert_int_equal(f, POOT_TOOLCALL_FORMAT_LLAMA3);
  POOT_ASSERT_STATUS_MSG(poot_toolcall_format_from_name("xml", &f), POOT_INVALID_ARGUMENT,
                         "mistral");
  assert_string_equal(poot_toolcall_format_name(POOT_TOOLCALL_FORMAT_MISTRAL), "mistral");
  assert_string_equal(poot_toolcall_reasoning_name(POOT_TOOLCALL_REASONING_THINK), "think");
}

typedef struct oom_ctx {
  poot_toolcall_result r;
} oom_ctx;

static poot_status oom_attempt(void *ctx) {
  oom_ctx *c = ctx;
  static const char text[] =
      "<think>hmm</think>Sure.\n<tool_call>{\"name\":\"a\",\"arguments\":{\"x\":[1,2]}}"
      "</tool_call>\n<tool_call>{\"name\":\"b\",\"arguments\":\"{}\"}</tool_call>";
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  p.format = POOT_TOOLCALL_FORMAT_HERMES;
  p.reasoning = POOT_TOOLCALL_REASONING_THINK;
  poot_status st = poot_toolcall_parse(&p, text, sizeof text - 1, &c->r);
  if (!st) {
    assert_int_equal(c->r.call_count, 2);
    assert_string_equal(c->r.content, "Sure.");
  }
  poot_toolcall_result_deinit(&c->r);
  return st;
}

static void test_out_of_memory(void **state) {
  (void)state;
  oom_ctx c;
  assert_true(poot_test_oom_sweep("toolcall parse", oom_attempt, &c, 2000) > 10);
}

/* ---------------------------------------------------- the real templates */

static char *read_template(const char *name, size_t *len) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "chat-templates/%s", name);
  if (!poot_test_data_path(rel, path, sizeof path)) return NULL;
  char *text = NULL;
  POOT_ASSERT_OK(poot_file_read_all(path, &text, len));
  return text;
}

static void test_detect(void **state) {
  (void)state;
  static const struct {
    const char *file;
    poot_toolcall_format format;
    poot_toolcall_reasoning reasoning;
  } rows[] = {
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", L, RN},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", L, RN},
      {"Qwen-Qwen2.5-7B-Instruct.jinja", H, RN},
      {"Qwen-Qwen3-0.6B.jinja", H, RT},
      {"Qwen-QwQ-32B.jinja", H, RT},
      {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", H, RN},
      {"ibm-granite-granite-4.0.jinja", H, RN},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", M, RN},
      {"Mistral-Small-3.2-24B-Instruct-2506.jinja", M, RN},
      {"mistralai-Ministral-3-14B-Reasoning-2512.jinja", M, RM},
      {"unsloth-mistral-Devstral-Small-2507.jinja", M, RN},
      {"Qwen3-Coder.jinja", N, RN},
      {"GLM-4.6.jinja", N, RT},
      {"unsloth-Apriel-1.5.jinja", N, RN},
      {"meetkai-functionary-medium-v3.1.jinja", N, RN},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", N, RT},
      {"google-gemma-2-2b-it.jinja", N, RN},
  };
  if (!poot_test_data_dir()) skip();
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    size_t len;
    char *text = read_template(rows[i].file, &len);
    if (!text) fail_msg("%s is missing from the data folder", rows[i].file);
    poot_toolcall_params p;
    poot_toolcall_params_default(&p);
    poot_toolcall_params_detect(&p, text, len);
    if (p.format != rows[i].format || p.reasoning != rows[i].reasoning)
      fail_msg("%s: detected %s/%s, expected %s/%s", rows[i].file,
               poot_toolcall_format_name(p.format), poot_toolcall_reasoning_name(p.reasoning),
               poot_toolcall_format_name(rows[i].format),
               poot_toolcall_reasoning_name(rows[i].reasoning));
    poot_free(text);
  }
  /* QwQ's generation prompt opens <think>; Qwen 3's does not. */
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  p.reasoning = RT;
  const char *qwq = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n";
  const char *qwen3 = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  assert_true(poot_toolcall_prompt_opens_reasoning(&p, qwq, strlen(qwq)));
  assert_false(poot_toolcall_prompt_opens_reasoning(&p, qwen3, strlen(qwen3)));
  p.reasoning = RN;
  assert_false(poot_toolcall_prompt_opens_reasoning(&p, qwq, strlen(qwq)));
}

/* A conversation with a call and its result; the argument and the result
 * appear nowhere else, so finding them proves both messages were rendered.
 * Templates disagree on the assistant message's shape: most take the
 * arguments as an object (transformers' convention), some only as the JSON
 * string the OpenAI API sends (DeepSeek), and some need content null rather
 * than "". The first of the four shapes that renders is used. */
static const char conversation_fmt[] =
    "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
    "\"description\": \"Get the current weather in a city.\", \"parameters\": {\"type\": "
    "\"object\", \"properties\": {\"city\": {\"type\": \"string\", \"description\": \"The "
    "city.\"}}, \"required\": "
    "[\"city\"]}}}],"
    " \"messages\": [{\"role\": \"user\", \"content\": \"What is the weather like?\"},"
    " {\"role\": \"assistant\", \"content\": %s, \"tool_calls\": [{\"id\": \"call00001\", "
    "\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": %s}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"call00001\", \"name\": \"get_weather\", "
    "\"content\": \"sunny-17C\"}]}";
static const char *const shapes[4][2] = {
    {"\"\"", "{\"city\": \"Reykjavik\"}"},
    {"null", "{\"city\": \"Reykjavik\"}"},
    {"\"\"", "\"{\\\"city\\\": \\\"Reykjavik\\\"}\""},
    {"null", "\"{\\\"city\\\": \\\"Reykjavik\\\"}\""},
};

/* Renders tpl with the first conversation shape it accepts; NULL if none
 * (errors then says why each failed). */
static char *render_call(const poot_chat_template *tpl, poot_arena *arena, int *out_shape,
                         poot_strbuf *errors) {
  for (int k = 0; k < 4; k++) {
    char conv[2048];
    snprintf(conv, sizeof conv, conversation_fmt, shapes[k][0], shapes[k][1]);
    poot_json *vars = NULL;
    POOT_ASSERT_OK(poot_json_parse(arena, conv, strlen(conv), NULL, &vars));
    poot_chat_template_render_params rp;
    poot_chat_template_render_params_default(&rp);
    rp.add_generation_prompt = 1;
    rp.now_epoch_s = 0;
    rp.bos_token = "<s>";
    rp.eos_token = "</s>";
    char *out = NULL, *raised = NULL;
    size_t out_len = 0;
    poot_status st = poot_chat_template_render(tpl, vars, &rp, &out, &out_len, &raised);
    poot_free(raised);
    if (!st && strstr(out, "get_weather") && strstr(out, "Reykjavik") && strstr(out, "sunny-17C")) {
      *out_shape = k;
      return out;
    }
    poot_strbuf_printf(errors, "  shape %d: %s\n", k, st ? poot_status_message(st) : out);
    poot_status_free(st);
    poot_free(out);
  }
  return NULL;
}

/* Templates with tool support that cannot render an OpenAI-shaped
 * conversation with a call, and why (transformers fails on them too). */
static const char *const render_exceptions[][2] = {
    {"fireworks-ai-llama-3-firefunction-v2.jinja",
     "takes its tools in a `functions` variable, not `tools`"},
    {"Kimi-K2-Thinking.jinja",
     "calls list.append when it renders a call, which the immutable sandbox refuses"},
    {"Kimi-K2-Instruct.jinja",
     "calls list.append when it renders a call, which the immutable sandbox refuses"},
    {"llama-cpp-deepseek-r1.jinja",
     "passes a map() generator to tojson, which Python's json.dumps refuses"},
};

static const char *render_exception(const char *file) {
  for (size_t i = 0; i < sizeof render_exceptions / sizeof render_exceptions[0]; i++)
    if (strcmp(file, render_exceptions[i][0]) == 0) return render_exceptions[i][1];
  return NULL;
}

/* Where the rendered call starts, for the formats this parser reads. */
static const char *call_start(poot_toolcall_format format, const char *text) {
  const char *needle = format == H   ? "<tool_call>"
                       : format == M ? "[TOOL_CALLS]"
                                     : "{\"name\": \"get_weather\"";
  const char *last = NULL;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) last = p;
  return last;
}

static void test_render_templates(void **state) {
  (void)state;
  char path[1024];
  if (!poot_test_data_dir() || !poot_test_data_path("chat-templates", path, sizeof path)) skip();
  DIR *d = opendir(path);
  assert_non_null(d);
  poot_arena arena;
  poot_arena_init(&arena, 0);
  size_t rendered = 0, read_back = 0, by_shape[4] = {0};
  poot_strbuf failures;
  poot_strbuf_init(&failures);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t nlen = strlen(e->d_name);
    if (nlen < 7 || strcmp(e->d_name + nlen - 6, ".jinja") != 0) continue;
    size_t len;
    char *src = read_template(e->d_name, &len);
    assert_non_null(src);
    /* Tool support: the template renders an assistant's tool_calls. */
    if (!strstr(src, "tool_calls")) {
      poot_free(src);
      continue;
    }
    poot_chat_template *tpl = NULL;
    POOT_ASSERT_OK(poot_chat_template_create(src, len, &tpl));
    poot_strbuf errors;
    poot_strbuf_init(&errors);
    int shape = -1;
    char *out = render_call(tpl, &arena, &shape, &errors);
    const char *why = render_exception(e->d_name);
    if (why) {
      if (out)
        poot_strbuf_printf(&failures, "%s renders now: drop it from the exceptions\n", e->d_name);
      printf("%s: not rendered: %s\n", e->d_name, why);
      poot_free(out);
      out = NULL;
    }
    if (!out && !why) {
      poot_strbuf_printf(&failures,
                         "%s: no conversation shape renders the tool, the call's "
                         "argument and the tool result:\n%s",
                         e->d_name, errors.data);
    }
    if (!out) {
      poot_strbuf_deinit(&errors);
      poot_chat_template_destroy(tpl);
      poot_free(src);
      continue;
    }
    poot_strbuf_deinit(&errors);
    rendered++;
    by_shape[shape]++;
    poot_toolcall_params p;
    poot_toolcall_params_default(&p);
    poot_toolcall_params_detect(&p, src, len);
    printf("%-52s %-8s %-8s shape %d\n", e->d_name, poot_toolcall_format_name(p.format),
           poot_toolcall_reasoning_name(p.reasoning), shape);
    if (p.format != N) {
      /* The call the template rendered reads back through the parser. */
      const char *at = call_start(p.format, out);
      if (!at)
        fail_msg("%s: no %s call in:\n%s", e->d_name, poot_toolcall_format_name(p.format), out);
      p.reasoning = RN;
      poot_toolcall_result r;
      POOT_ASSERT_OK(poot_toolcall_parse(&p, at, strlen(at), &r));
      if (r.call_count < 1) fail_msg("%s: the rendered call did not parse:\n%s", e->d_name, at);
      assert_string_equal(r.calls[0].name, "get_weather");
      assert_string_equal(r.calls[0].arguments, "{\"city\":\"Reykjavik\"}");
      poot_toolcall_result_deinit(&r);
      read_back++;
    }
    poot_free(out);
    poot_chat_template_destroy(tpl);
    poot_free(src);
  }
  closedir(d);
  poot_arena_deinit(&arena);
  if (failures.len) fail_msg("%s", failures.data);
  poot_strbuf_deinit(&failures);
  printf(
      "rendered %zu templates with tools (arguments as an object: %zu with content \"\", "
      "%zu with null; as a string: %zu, %zu); %zu calls read back\n",
      rendered, by_shape[0], by_shape[1], by_shape[2], by_shape[3], read_back);
  assert_true(rendered >= 40);
  assert_true(read_back >= 14);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_random_replies),
      cmocka_unit_test(test_ids),
      cmocka_unit_test(test_limits_and_errors),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_detect),
      cmocka_unit_test(test_render_templates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
