/* Unit tests of the chat-template engine (src/llm/template/): expression
 * semantics, whitespace control, loops, macros, namespaces, filters, errors
 * with line numbers, limits. Expected strings were checked against Python
 * jinja2 with transformers' settings. */
#include "poot_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "poot/llm/chat_template.h"

static const char *VARS =
    "{\"xs\": [3, 1, 2], \"d\": {\"b\": 2, \"a\": 1}, \"n\": null, \"s\": \"  hi  \","
    " \"msgs\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": "
    "\"U\"}],"
    " \"u\": \"h\\u00e9llo\", \"bos_token\": \"<s>\"}";

/* Renders src with VARS (or vars_json) and the given params; returns the
 * status, and the text in *out (heap). */
static poot_status render_full(const char *src, const char *vars_json,
                               const poot_chat_template_render_params *params, char **out,
                               char **raised) {
  *out = NULL;
  poot_chat_template *tpl = NULL;
  poot_status st = poot_chat_template_create(src, strlen(src), &tpl);
  if (st) return st;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *vars = NULL;
  if (vars_json) st = poot_json_parse(&arena, vars_json, strlen(vars_json), NULL, &vars);
  size_t len = 0;
  if (!st) st = poot_chat_template_render(tpl, vars, params, out, &len, raised);
  poot_arena_deinit(&arena);
  poot_chat_template_destroy(tpl);
  return st;
}

static void expect(const char *src, const char *want) {
  char *out = NULL;
  POOT_ASSERT_OK(render_full(src, VARS, NULL, &out, NULL));
  if (strcmp(out, want) != 0)
    fail_msg("template %s\n  rendered [%s]\n  expected [%s]", src, out, want);
  poot_free(out);
}

static void expect_status(const char *src, poot_status_code code, const char *needle) {
  char *out = NULL;
  POOT_ASSERT_STATUS_MSG(render_full(src, VARS, NULL, &out, NULL), code, needle);
  assert_null(out);
}

static void test_literals_and_printing(void **state) {
  (void)state;
  expect("{{ 1 }}|{{ 1.0 }}|{{ 1e16 }}|{{ 1.5e-7 }}|{{ 0.1 + 0.2 }}",
         "1|1.0|1e+16|1.5e-07|0.30000000000000004");
  expect("{{ true }}|{{ none }}|{{ n }}|{{ [1, 'a', none] }}|{{ (1,) }}|{{ d }}",
         "True|None|None|[1, 'a', None]|(1,)|{'b': 2, 'a': 1}");
  expect("{{ \"it's\" }}|{{ [\"it's\"] }}|{{ 'a\\tb' }}", "it's|[\"it's\"]|a\tb");
  expect("{{ undefined_thing }}[{{ d.nope }}]", "[]");
}

static void test_arithmetic(void **state) {
  (void)state;
  expect("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }}", "3 -4 2 -2 3.0");
  expect("{{ 2 ** 10 }} {{ 10 / 4 }} {{ 10 / 5 }} {{ 3 * 'ab' }} {{ 1 + 2 * 3 }}",
         "1024 2.5 2.0 ababab 7");
  expect("{{ 'a' ~ 1 ~ none ~ true ~ nothing }}", "a1NoneTrue");
  expect("{{ '%s-%d' % ('x', 3) }}", "x-3");
  expect_status("{{ 1 / 0 }}", POOT_FORMAT, "division by zero");
  expect_status("{{ 'a' + 1 }}", POOT_FORMAT, "unsupported operand");
}

static void test_logic_and_comparisons(void **state) {
  (void)state;
  expect("{{ 1 == 1.0 }} {{ 1 < 2 < 3 }} {{ 'ell' in 'hello' }} {{ 5 not in xs }} {{ 'a' in d }}",
         "True True True True True");
  expect("{{ 0 or 'x' }}|{{ 1 and 2 }}|{{ 0 and 1 / 0 }}|{{ not none }}", "x|2|0|True");
  expect("{{ 'y' if n else 'z' }}|{{ 'y' if n }}|", "z||");
  expect(
      "{{ xs is iterable }} {{ d is mapping }} {{ 1 is number }} {{ true is boolean }} "
      "{{ 9 is divisibleby 3 }} {{ n is none }} {{ q is defined }} {{ 'a' is string }}",
      "True True True True True True False True");
}

static void test_access_and_methods(void **state) {
  (void)state;
  expect("{{ d.a }}{{ d['b'] }}{{ xs[-1] }}{{ xs[10] }}{{ msgs[1].role }}", "122user");
  expect("{{ xs[1:] }}|{{ xs[::-1] }}|{{ u[1:3] }}|{{ u | length }}", "[1, 2]|[2, 1, 3]|él|5");
  expect("[{{ s.strip() }}]{{ 'a,b'.split(',') }}{{ 'Hi'.startswith('H') }}{{ 'x y'.title() }}",
         "[hi]['a', 'b']TrueX Y");
  expect("{{ '{} {}'.format(1, 'a') }}|{{ d.get('zz', 'dflt') }}|{{ d.items() | list }}",
         "1 a|dflt|[('b', 2), ('a', 1)]");
  expect_status("{{ nothing.attr }}", POOT_FORMAT, "line 1");
  expect_status("{{ xs.append(1) }}", POOT_FORMAT, "sandbox");
}

static void test_whitespace_control(void **state) {
  (void)state;
  /* trim_blocks drops the newline after a block tag; lstrip_blocks the indent before it. */
  expect("a\n  {% if true %}\n  b\n  {% endif %}\nc", "a\n  b\nc");
  expect("a  {%- if true -%}  b  {%- endif -%}  c", "abc");
  expect("a\n  {%+ if true +%}\nb{% endif %}", "a\n  \nb");
  expect("x  {{- 1 -}}  y", "x1y");
  expect("  {# comment #}\nz", "z");
  expect("{% raw %}{{ kept }}{% endraw %}", "{{ kept }}");
  expect("one\n", "one");                 /* a single trailing newline is dropped */
  expect("a\r\nb\r\n\r\n", "a\nb\n");     /* \r\n read as \n */
  expect("{{ 'v' }}\n{{ 'w' }}", "v\nw"); /* no trimming after {{ }} */
}

static void test_loops(void **state) {
  (void)state;
  expect(
      "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
      "{{ loop.length }}{{ loop.revindex }};{% endfor %}",
      "10TrueFalse33;21FalseFalse32;32FalseTrue31;");
  expect("{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}", "-1;3-2;1-;");
  expect("{% for x in xs if x > 1 %}{{ x }}/{{ loop.length }};{% endfor %}", "3/2;2/2;");
  expect("{% for x in [] %}x{% else %}empty{% endfor %}", "empty");
  expect("{% for k, v in d | dictsort %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;");
  expect("{% for x in xs %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}", "3");
  expect("{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}", "32");
  expect(
      "{% set t = [{'n': 'a', 'c': [{'n': 'b', 'c': []}]}] %}"
      "{% for e in t recursive %}{{ e.n }}{{ loop.depth }}({{ loop(e.c) }}){% endfor %}",
      "a1(b2())");
  expect("{% set x = 1 %}{% for i in xs %}{% set x = i %}{% endfor %}{{ x }}", "1");
}

static void test_macros(void **state) {
  (void)state;
  expect(
      "{% macro m(a, b='d') %}[{{ a }}|{{ b }}]{% endmacro %}{{ m(1) }}{{ m(1, 2) }}{{ m(b=3, a=4) "
      "}}",
      "[1|d][1|2][4|3]");
  expect("{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, k=2) }}", "(1,){'k': 2}");
  expect("{% macro o() %}<{{ caller() }}>{% endmacro %}{% call o() %}in{% endcall %}", "<in>");
  expect(
      "{% macro l(xs) %}{% for i in xs %}{{ caller(i) }}{% endfor %}{% endmacro %}"
      "{% call(i) l([1, 2]) %}[{{ i }}]{% endcall %}",
      "[1][2]");
  expect("{% macro m() %}{{ z }}{% endmacro %}{% set z = 1 %}{{ m() }}{% set z = 2 %}{{ m() }}",
         "12");
}

static void test_namespace_and_set(void **state) {
  (void)state;
  expect(
      "{% set ns = namespace(found=false) %}{% for x in xs %}{% if x == 1 %}"
      "{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
      "True");
  expect("{% set a, b = 1, 2 %}{{ a + b }}|{% set blk %}B{{ 1 }}{% endset %}{{ blk }}", "3|B1");
  expect("{% filter upper %}up {{ 'x' }}{% endfilter %}", "UP X");
  expect_status("{% set n.x = 1 %}", POOT_FORMAT, "namespace");
}

static void test_filters(void **state) {
  (void)state;
  expect(
      "{{ s | trim }}|{{ xs | length }}|{{ 'ab' | upper }}|{{ 'aXb' | replace('X', '-') }}|"
      "{{ xs | join(',') }}|{{ q | default('D') }}|{{ xs | first }}{{ xs | last }}",
      "hi|3|AB|a-b|3,1,2|D|32");
  expect(
      "{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}|"
      "{{ msgs | rejectattr('role', 'eq', 'user') | list | length }}",
      "['U']|1");
  expect(
      "{{ '42' | int }} {{ 'x' | int }} {{ '4.5' | float }} {{ 2.5 | round }} {{ -3 | abs }} "
      "{{ xs | sort | list }} {{ ['b', 'A', 'a'] | unique | list }}",
      "42 0 4.5 2.0 3 [1, 2, 3] ['b', 'A']");
  expect("{{ d | tojson }}|{{ 'é\"' | tojson }}|{{ [1, {'k': none}] | tojson(indent=2) }}",
         "{\"b\": 2, \"a\": 1}|\"é\\\"\"|[\n  1,\n  {\n    \"k\": null\n  }\n]");
  expect("{{ 'é' | tojson(ensure_ascii=true) }}|{{ d | tojson(sort_keys=true) }}",
         "\"\\u00e9\"|{\"a\": 1, \"b\": 2}");
  expect("{{ 'a\\nb' | indent(2, true) }}|{{ 'x' | capitalize }}{{ 3 | string }}", "  a\n  b|X3");
  expect_status("{{ xs | no_such_filter }}", POOT_UNSUPPORTED, "no_such_filter");
  expect("{% if false %}{{ xs | no_such_filter }}{% endif %}ok", "ok");
}

static void test_errors_with_lines(void **state) {
  (void)state;
  expect_status("line1\n{% if x %}\nno end", POOT_FORMAT, "line 3");
  expect_status("a\nb\n{{ 1 + }}", POOT_FORMAT, "line 3");
  expect_status("\n{% unknown_tag %}", POOT_FORMAT, "line 2");
  expect_status("x\n\n\n{% include 'other.jinja' %}", POOT_UNSUPPORTED, "line 4");
  expect_status("{% extends 'base' %}", POOT_UNSUPPORTED, "extends");
  expect_status("\n\n{{ nothing.attr }}", POOT_FORMAT, "line 3");
  /* raise_exception is its own outcome, carrying the message. */
  char *out = NULL, *raised = NULL;
  POOT_ASSERT_STATUS_MSG(
      render_full("{{ raise_exception('roles must alternate') }}", VARS, NULL, &out, &raised),
      POOT_INVALID_ARGUMENT, "roles must alternate");
  assert_non_null(raised);
  assert_string_equal(raised, "roles must alternate");
  poot_free(raised);
}

static void test_limits(void **state) {
  (void)state;
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.max_steps = 100000;
  char *out = NULL;
  POOT_ASSERT_STATUS(render_full("{% for i in range(100000) %}{% for j in range(100000) %}"
                                 "{% endfor %}{% endfor %}",
                                 VARS, &p, &out, NULL),
                     POOT_CAPACITY);
  poot_chat_template_render_params_default(&p);
  POOT_ASSERT_STATUS_MSG(
      render_full("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", VARS, &p, &out, NULL),
      POOT_CAPACITY, "nested");
  p.max_output = 1000;
  POOT_ASSERT_STATUS(render_full("{% for i in range(2000) %}xx{% endfor %}", VARS, &p, &out, NULL),
                     POOT_CAPACITY);
  POOT_ASSERT_STATUS(render_full("{% set s = 'x' * 600 %}{{ s ~ s }}", VARS, &p, &out, NULL),
                     POOT_CAPACITY);
  /* A namespace holding itself twice would print an exponential tree. */
  poot_chat_template_render_params_default(&p);
  p.max_output = 1 << 20;
  POOT_ASSERT_STATUS(render_full("{% set ns = namespace() %}{% set ns.a = ns %}{% set ns.b = ns %}"
                                 "{{ ns }}",
                                 VARS, &p, &out, NULL),
                     POOT_CAPACITY);
  /* Work inside one builtin counts against the step bound. */
  poot_chat_template_render_params_default(&p);
  p.max_steps = 200000;
  POOT_ASSERT_STATUS(render_full("{% set big = range(100000) | list %}{% for i in range(1000) %}"
                                 "{{ i in big }}{% endfor %}",
                                 VARS, &p, &out, NULL),
                     POOT_CAPACITY);
  /* Deeply nested syntax is refused at compile time, not by the C stack. */
  char deep[4096];
  size_t k = 0;
  k += (size_t)snprintf(deep + k, sizeof deep - k, "{{ ");
  for (int i = 0; i < 1000; i++) deep[k++] = '(';
  deep[k++] = '1';
  for (int i = 0; i < 1000; i++) deep[k++] = ')';
  snprintf(deep + k, sizeof deep - k, " }}");
  poot_chat_template *tpl = NULL;
  POOT_ASSERT_STATUS(poot_chat_template_create(deep, strlen(deep), &tpl), POOT_CAPACITY);
  assert_null(tpl);
}

/* Renders src with the default bounds and checks it fails on the bound
 * `needle` names; prints the CPU time the failure took. */
static void expect_bounded(const char *what, const char *src, const char *needle) {
  char *out = NULL;
  clock_t t0 = clock();
  poot_status st = render_full(src, VARS, NULL, &out, NULL);
  double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("  %-28s %.3f s CPU: %s\n", what, cpu, st ? poot_status_message(st) : "(rendered)");
  POOT_ASSERT_STATUS_MSG(st, POOT_CAPACITY, needle);
  assert_null(out);
}

/* Issue #13: a value that shares its parts (each level holds the previous
 * one twice) is tiny in memory but exponential to walk; every walk is charged
 * per value visited, so each of these ends on a bound within the default
 * budget instead of running for minutes or growing to gigabytes. */
#define NEST(levels, body)                                      \
  "{% set x = namespace(a=1, b=1) %}{% for i in range(" #levels \
  ") %}"                                                        \
  "{% set x.a = [x.a, x.a] %}{% set x.b = [x.b, x.b] %}{% endfor %}" body

static void test_walk_bounds(void **state) {
  (void)state;
  expect_bounded("40 levels ==", NEST(40, "{{ x.a == x.a }}"), "max_steps");
  expect_bounded("40 levels != (two trees)", NEST(40, "{{ x.a != x.b }}"), "max_steps");
  expect_bounded("40 levels <", NEST(40, "{{ x.a < x.b }}"), "max_steps");
  expect_bounded("100 levels |tojson", NEST(100, "{{ x.a | tojson }}"), "max_");
  expect_bounded("100 levels |string", NEST(100, "{{ x.a | string | length }}"), "max_");
  expect_bounded("100 levels print", NEST(100, "{{ x.a }}"), "max_");
  expect_bounded("100 levels ~", NEST(100, "{{ (x.a ~ '') | length }}"), "max_");
  expect_bounded("40 levels in", NEST(40, "{{ x.a in [x.b] }}"), "max_steps");
  expect_bounded("40 levels dict key", NEST(40, "{{ {(x.b,): 1}[(x.a,)] }}"), "max_steps");
  expect_bounded("40 levels sort", NEST(40, "{{ [x.a, x.b] | sort | length }}"), "max_steps");
  expect_bounded("40 levels unique", NEST(40, "{{ [(x.a,), (x.b,)] | unique | list | length }}"),
                 "max_steps");
  expect_bounded("40 levels count", NEST(40, "{{ [x.a, x.b].count(x.b) }}"), "max_steps");
  expect_bounded("40 levels %r", NEST(40, "{{ '%r' % (x.a,) }}"), "max_");
  expect_bounded("40 levels changed",
                 NEST(40,
                      "{% for k in [1, 2] %}{{ loop.changed(x.a if k == 1 else x.b) }}"
                      "{% endfor %}"),
                 "max_steps");
  /* Text: doubling by concatenation, repetition, and a long loop. */
  expect_bounded("string doubling ~",
                 "{% set s = namespace(v='x') %}{% for i in range(100) %}"
                 "{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v | length }}",
                 "max_output");
  expect_bounded("string doubling +",
                 "{% set s = namespace(v='x') %}{% for i in range(100) %}"
                 "{% set s.v = s.v + s.v %}{% endfor %}{{ s.v | length }}",
                 "max_output");
  expect_bounded("'x' * 10**12", "{{ ('x' * 10**12) | length }}", "max_output");
  /* range(10**9) is refused at once, as jinja2's sandbox does; 10**10
   * iterations of nested loops run into the step bound. */
  expect_status("{% for i in range(10**9) %}{% endfor %}", POOT_FORMAT, "MAX_RANGE");
  expect_bounded("10**10 loop iterations",
                 "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                 "{% endfor %}",
                 "max_");
  expect_bounded("10**10 iterations, one list",
                 "{% set r = range(100000) | list %}{% for i in r %}{% for j in r %}{% endfor %}"
                 "{% endfor %}",
                 "max_steps");
  expect_bounded("list doubling",
                 "{% set s = namespace(v=[1]) %}{% for i in range(100) %}"
                 "{% set s.v = s.v + s.v %}{% endfor %}{{ s.v | length }}",
                 "max_");
  /* An empty string repeated any number of times is empty, at once. */
  expect("{{ ('' * 10**18) | length }}", "0");
  /* The bounds are the caller's to set; the message names the one hit. */
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.max_memory = 1 << 20;
  char *out = NULL;
  POOT_ASSERT_STATUS_MSG(render_full("{{ (range(100000) | list + range(100000) | list) | length }}",
                                     VARS, &p, &out, NULL),
                         POOT_CAPACITY, "max_memory");
  poot_chat_template_render_params_default(&p);
  p.max_steps = 1000;
  POOT_ASSERT_STATUS_MSG(render_full(NEST(12, "{{ x.a == x.b }}"), VARS, &p, &out, NULL),
                         POOT_CAPACITY, "max_steps (1000 steps");
  /* ... and a walk within them gives Python's answer. */
  p.max_steps = 100000;
  POOT_ASSERT_OK(render_full(NEST(12, "{{ x.a == x.b }} {{ (x.a | tojson | length) }}"), VARS, &p,
                             &out, NULL));
  assert_string_equal(out, "True 20476");
  poot_free(out);
}

static void test_context(void **state) {
  (void)state;
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.bos_token = "[B]";
  p.eos_token = "[E]";
  p.add_generation_prompt = 1;
  p.now_epoch_s = 1741964966;
  char *out = NULL;
  POOT_ASSERT_OK(
      render_full("{{ bos_token }}{{ eos_token }}{{ add_generation_prompt }}"
                  "{{ tools is none }}{{ documents is none }}{{ strftime_now('%Y-%m-%d') }}",
                  VARS, &p, &out, NULL));
  assert_string_equal(out, "[B][E]TrueTrueTrue2025-03-14");
  poot_free(out);
  POOT_ASSERT_OK(
      render_full("{{ add_generation_prompt }}{{ messages is defined }}", NULL, NULL, &out, NULL));
  assert_string_equal(out, "FalseFalse");
  poot_free(out);
  POOT_ASSERT_STATUS(render_full("x", "[1]", NULL, &out, NULL), POOT_INVALID_ARGUMENT);
}

/* A real template: Llama 3.1's, checked by hand against transformers. */
static void test_real_template(void **state) {
  (void)state;
  char path[4096];
  if (!poot_test_data_path("chat-templates/meta-llama-Llama-3.1-8B-Instruct.jinja", path,
                           sizeof path))
    skip();
  char *src = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &src, &len));
  poot_chat_template *tpl = NULL;
  POOT_ASSERT_OK(poot_chat_template_create(src, len, &tpl));
  poot_arena arena;
  poot_arena_init(&arena, 0);
  const char *vj =
      "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}],"
      " \"bos_token\": \"<|begin_of_text|>\", \"date_string\": \"14 Mar 2025\"}";
  poot_json *vars = NULL;
  POOT_ASSERT_OK(poot_json_parse(&arena, vj, strlen(vj), NULL, &vars));
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.add_generation_prompt = 1;
  char *out = NULL;
  size_t n = 0;
  POOT_ASSERT_OK(poot_chat_template_render(tpl, vars, &p, &out, &n, NULL));
  assert_string_equal(out,
                      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                      "Cutting Knowledge Date: December 2023\nToday Date: 14 Mar 2025\n\n"
                      "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                      "<|start_header_id|>assistant<|end_header_id|>\n\n");
  assert_int_equal(n, strlen(out));
  poot_free(out);
  poot_arena_deinit(&arena);
  poot_chat_template_destroy(tpl);
  poot_free(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_literals_and_printing),
      cmocka_unit_test(test_arithmetic),
      cmocka_unit_test(test_logic_and_comparisons),
      cmocka_unit_test(test_access_and_methods),
      cmocka_unit_test(test_whitespace_control),
      cmocka_unit_test(test_loops),
      cmocka_unit_test(test_macros),
      cmocka_unit_test(test_namespace_and_set),
      cmocka_unit_test(test_filters),
      cmocka_unit_test(test_errors_with_lines),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_walk_bounds),
      cmocka_unit_test(test_context),
      cmocka_unit_test(test_real_template),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
