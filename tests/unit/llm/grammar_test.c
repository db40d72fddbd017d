/* Unit tests of GBNF grammars and the vocabulary mask (src/llm/grammar/): grammars we
 * wrote (JSON, arithmetic, a comma list) with strings they must accept and refuse, UTF-8
 * classes, repetition counts, the matcher's bounds, the mask on hand-made vocabularies with
 * exact bits (worked out by hand in the comments), and error messages with line/column. */
#include "poot_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "poot/llm/grammar.h"
#include "grammar_gbnf.h"
#include "grammar_schemas.h"

static const char *ARITH_GBNF =
    "root   ::= expr\n"
    "expr   ::= term ((\"+\" | \"-\") term)*\n"
    "term   ::= factor ((\"*\" | \"/\") factor)*\n"
    "factor ::= number | \"(\" expr \")\" | \"-\" factor\n"
    "number ::= [0-9]+\n";

static const char *LIST_GBNF =
    "root ::= item (\",\" \" \"? item)*  # a comma list\n"
    "item ::= [a-z]+\n";

static poot_grammar *compile_ok(const char *text) {
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(text, strlen(text), NULL, &g));
  return g;
}

/* True when `g` accepts all of `s` and may end there. */
static bool full_match(const poot_grammar *g, const char *s, size_t n) {
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  poot_status st = poot_grammar_matcher_accept(m, s, n);
  bool ok = !st && poot_grammar_matcher_can_end(m);
  poot_status_free(st);
  poot_grammar_matcher_destroy(m);
  return ok;
}

static void expect_all(const char *grammar, const char *const *yes, const char *const *no) {
  poot_grammar *g = compile_ok(grammar);
  for (size_t i = 0; yes[i]; i++)
    if (!full_match(g, yes[i], strlen(yes[i]))) fail_msg("should accept: '%s'", yes[i]);
  for (size_t i = 0; no[i]; i++)
    if (full_match(g, no[i], strlen(no[i]))) fail_msg("should refuse: '%s'", no[i]);
  poot_grammar_destroy(g);
}

static void test_json(void **state) {
  (void)state;
  const char *yes[] = {"{}",
                       "[]",
                       "0",
                       "-12.5e+3",
                       "\"\"",
                       "true",
                       "null",
                       "{\"a\": [1, 2, {\"b\": null}], \"c\": \"x\\n\\u00e9\"}",
                       "[\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"]",
                       " {\n  \"k\": false\n}",
                       NULL};
  const char *no[] = {"",           "{",        "{\"a\"}",       "[1,]",
                      "01",         "\"a\\q\"", "\"tab\there\"", "tru",
                      "{\"a\":1,}", "\"\xff\"", "\"\xc0\x80\"",  "\"\xed\xa0\x80\"",
                      NULL};
  expect_all(JSON_GBNF, yes, no);
}

static void test_arith_and_list(void **state) {
  (void)state;
  const char *ay[] = {"1+2*3", "(1+2)*-3", "((4))", "10/2-7", NULL};
  const char *an[] = {"1+", "(1", "1**2", "", "()", "1 + 2", NULL};
  expect_all(ARITH_GBNF, ay, an);
  const char *ly[] = {"a", "ab, cd,e", "x,y, z", NULL};
  const char *ln[] = {"a,", ",a", "a,,b", "a ,b", "A", NULL};
  expect_all(LIST_GBNF, ly, ln);
}

static void test_repetition_and_escapes(void **state) {
  (void)state;
  const char *y1[] = {"xx", "xxx", "xxxx", NULL}, *n1[] = {"x", "xxxxx", "", NULL};
  expect_all("root ::= \"x\"{2,4}", y1, n1);
  const char *y2[] = {"ababab", NULL}, *n2[] = {"abab", "abababab", NULL};
  expect_all("root ::= \"ab\"{3}", y2, n2);
  const char *y3[] = {"12", "12345", NULL}, *n3[] = {"1", "", "12a", NULL};
  expect_all("root ::= [0-9]{2,}", y3, n3);
  const char *y4[] = {"", "q", NULL}, *n4[] = {"qq", NULL};
  expect_all("root ::= \"q\"?", y4, n4);
  /* \xHH is a code point (as in llama.cpp): \xe9 is é, two bytes in UTF-8. */
  const char *y5[] = {"\xc3\xa9\xe2\x82\xac\n\t\"\\", NULL}, *n5[] = {"\xe9", NULL};
  expect_all("root ::= \"\\xe9\\u20AC\\n\\t\\\"\\\\\"", y5, n5);
  /* A negated class takes every other character of any UTF-8 length; `.` likewise. */
  const char *y6[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "b", NULL};
  const char *n6[] = {"a", "\xff", "\xc3", "", "bb", NULL};
  expect_all("root ::= [^a]", y6, n6);
  expect_all("root ::= .", (const char *[]){"a", "\xf0\x9f\x98\x80", NULL},
             (const char *[]){"\x80", "", NULL});
  /* A class of Greek letters: α β γ are CE B1 … CE B3. */
  expect_all("root ::= [α-γ]+", (const char *[]){"αβγ", "γ", NULL},
             (const char *[]){"δ", "a", "\xce", NULL});
  /* Groups, nested alternatives, comments and rules continued on the next line. */
  expect_all("root ::= (\"a\" | \"b\" (\"c\" | \"d\"))+ # c\n  \"e\"\nunused ::= \"z\"",
             (const char *[]){"ae", "bcbdae", NULL}, (const char *[]){"e", "be", NULL});
}

static void test_matcher_state(void **state) {
  (void)state;
  poot_grammar *g = compile_ok(ARITH_GBNF);
  poot_grammar_matcher *m = NULL, *c = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  assert_false(poot_grammar_matcher_can_end(m));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "1+", 2));
  assert_false(poot_grammar_matcher_can_end(m));
  POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(c, "2", 1));
  assert_true(poot_grammar_matcher_can_end(c));
  assert_false(poot_grammar_matcher_can_end(m)); /* the original did not move */
  /* A refused token leaves the state as it was; the message gives the byte's offset. */
  POOT_ASSERT_STATUS_MSG(poot_grammar_matcher_accept(m, "2*)", 3), POOT_INVALID_ARGUMENT,
                         "byte 2 (0x29)");
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "(3)", 3));
  assert_true(poot_grammar_matcher_can_end(m));
  assert_false(poot_grammar_matcher_is_finished(m)); /* "*4" could follow */
  POOT_ASSERT_OK(poot_grammar_matcher_reset(m));
  assert_false(poot_grammar_matcher_can_end(m));
  POOT_ASSERT_STATUS(poot_grammar_matcher_accept(m, "+", 1), POOT_INVALID_ARGUMENT);
  /* Many steps: the pool is compacted and the state stays right. */
  for (int i = 0; i < 5000; i++) POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "1+(2)*", 6));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "7", 1));
  assert_true(poot_grammar_matcher_can_end(m));
  poot_grammar_matcher_destroy(c);
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  g = compile_ok("root ::= \"end\"");
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "end", 3));
  assert_true(poot_grammar_matcher_is_finished(m));
  assert_int_equal(poot_grammar_matcher_stack_count(m), 0);
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
}

static void test_bounds(void **state) {
  (void)state;
  poot_grammar_options o = poot_grammar_options_default();
  o.max_stacks = 2;
  poot_grammar *g = NULL;
  poot_grammar_matcher *m = NULL;
  /* Three ways to read "a" at the start need three stacks. */
  const char *three = "root ::= \"a\" | \"a\" \"b\" | \"a\" \"c\"";
  POOT_ASSERT_OK(poot_grammar_compile(three, strlen(three), &o, &g));
  POOT_ASSERT_STATUS_MSG(poot_grammar_matcher_create(g, &m), POOT_CAPACITY, "max_stacks");
  poot_grammar_destroy(g);
  const char *later = "root ::= \"a\" (\"b\" | \"b\" \"c\" | \"b\" \"d\")";
  POOT_ASSERT_OK(poot_grammar_compile(later, strlen(later), &o, &g));
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  POOT_ASSERT_STATUS(poot_grammar_matcher_accept(m, "a", 1), POOT_CAPACITY);
  assert_int_equal(poot_grammar_matcher_stack_count(m), 1); /* unchanged */
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  /* Depth: each "(" pushes one level; max_depth 4 allows three. */
  o = poot_grammar_options_default();
  o.max_depth = 4;
  const char *nest = "root ::= \"(\" root \")\" | \"x\"";
  POOT_ASSERT_OK(poot_grammar_compile(nest, strlen(nest), &o, &g));
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "(((", 3));
  POOT_ASSERT_STATUS_MSG(poot_grammar_matcher_accept(m, "(", 1), POOT_CAPACITY, "max_depth");
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "x)))", 4));
  assert_true(poot_grammar_matcher_is_finished(m));
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  o.max_stacks = 70000;
  POOT_ASSERT_STATUS_MSG(poot_grammar_compile(nest, strlen(nest), &o, &g), POOT_INVALID_ARGUMENT,
                         "max_stacks 70000");
}

static poot_status compile_err(const char *text) {
  poot_grammar *g = NULL;
  poot_status st = poot_grammar_compile(text, strlen(text), NULL, &g);
  assert_null(g);
  return st;
}

static void test_errors(void **state) {
  (void)state;
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\" ("), POOT_INVALID_ARGUMENT,
                         "grammar:1:15: expected ')' to close the group, got end of text");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= a\na ::= [b-"), POOT_INVALID_ARGUMENT,
                         "grammar:2:10: expected ']' to close the character class");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= foo bar\nfoo ::= \"x\""), POOT_INVALID_ARGUMENT,
                         "grammar:1:14: rule 'bar' is used but never defined");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\"\nroot ::= \"b\""), POOT_INVALID_ARGUMENT,
                         "grammar:2:1: rule 'root' is defined twice (first on line 1)");
  POOT_ASSERT_STATUS_MSG(compile_err("a ::= \"x\""), POOT_INVALID_ARGUMENT, "no rule named 'root'");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"\\q\""), POOT_INVALID_ARGUMENT,
                         "grammar:1:12: expected an escape");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"\\ud800\""), POOT_INVALID_ARGUMENT,
                         "grammar:1:11: expected a Unicode scalar value");
  POOT_ASSERT_STATUS_MSG(compile_err("root = \"a\""), POOT_INVALID_ARGUMENT,
                         "grammar:1:6: expected '::=', got '='");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\nb\""), POOT_INVALID_ARGUMENT,
                         "grammar:1:12: expected '\"' to close the literal");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= [z-a]"), POOT_INVALID_ARGUMENT,
                         "grammar:1:14: expected a range whose end is not below its start");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\"{1001}"), POOT_INVALID_ARGUMENT,
                         "at most 1000");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\"{3,2}"), POOT_INVALID_ARGUMENT, "n >= m");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= \"a\" )"), POOT_INVALID_ARGUMENT, "unbalanced ')'");
  /* Left recursion, direct, through a rule that can be empty, and a repeated empty group. */
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= expr\nexpr ::= expr \"+\" t | t\nt ::= [0-9]"),
                         POOT_INVALID_ARGUMENT, "rule 'expr' is left-recursive");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= a\na ::= b? a \"x\" | \"y\"\nb ::= \"b\""),
                         POOT_INVALID_ARGUMENT, "rule 'a' is left-recursive");
  POOT_ASSERT_STATUS_MSG(compile_err("root ::= (\"\" | \"\")*"), POOT_INVALID_ARGUMENT,
                         "rule 'root' is left-recursive");
  /* Nesting: 64 groups are fine, 65 are not. */
  char deep[200];
  size_t n = (size_t)snprintf(deep, sizeof deep, "root ::= ");
  for (int i = 0; i < 65; i++) deep[n++] = '(';
  deep[n++] = 0;
  POOT_ASSERT_STATUS_MSG(compile_err(deep), POOT_INVALID_ARGUMENT, "at most 64 nested groups");
  n = (size_t)snprintf(deep, sizeof deep, "root ::= ");
  for (int i = 0; i < 64; i++) deep[n++] = '(';
  deep[n++] = '"', deep[n++] = 'a', deep[n++] = '"';
  for (int i = 0; i < 64; i++) deep[n++] = ')';
  deep[n] = 0;
  poot_grammar *g = compile_ok(deep);
  assert_true(full_match(g, "a", 1));
  poot_grammar_destroy(g);
}

static poot_grammar_vocab *make_vocab(const char *const *t, int32_t n, const int32_t *eog,
                                      size_t ne) {
  size_t lens[64];
  for (int32_t i = 0; i < n; i++) lens[i] = strlen(t[i]);
  poot_grammar_vocab *v = NULL;
  POOT_ASSERT_OK(poot_grammar_vocab_create(t, lens, n, eog, ne, &v));
  return v;
}

static uint32_t mask_of(poot_grammar_matcher *m, const poot_grammar_vocab *v) {
  uint32_t w[2] = {0xDEADBEEF, 0xDEADBEEF};
  POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, v, w, 2));
  assert_int_equal(w[1], 0xDEADBEEF); /* a one-word vocabulary writes one word */
  return w[0];
}

static void test_mask_small(void **state) {
  (void)state;
  /*                        0    1     2      3    4     5    6   7 (EOS)  8 */
  const char *toks[] = {"a", "ab", "abc", "b", "bb", "c", "", "", "ac"};
  int32_t eos = 7;
  poot_grammar_vocab *v = make_vocab(toks, 9, &eos, 1);
  assert_int_equal(poot_grammar_vocab_mask_words(v), 1);
  poot_grammar *g = compile_ok("root ::= \"ab\" | \"ac\" | \"b\"+");
  poot_grammar_matcher *m = NULL, *m2 = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  /* Start: a, ab, b, bb, ac (not abc, c, the empty token, nor EOS). */
  assert_int_equal(mask_of(m, v), (1u << 0) | (1u << 1) | (1u << 3) | (1u << 4) | (1u << 8));
  POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &m2));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "b", 1));
  /* After "b": more b's, or the end. */
  assert_int_equal(mask_of(m, v), (1u << 3) | (1u << 4) | (1u << 7));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m2, "a", 1));
  /* After "a": b or c; nothing else, and not the end. */
  assert_int_equal(mask_of(m2, v), (1u << 3) | (1u << 5));
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m2, "c", 1));
  assert_int_equal(mask_of(m2, v), 1u << 7); /* finished: only EOS */
  uint32_t tiny = 0;
  POOT_ASSERT_STATUS_MSG(poot_grammar_matcher_fill_mask(m, v, &tiny, 0), POOT_INVALID_ARGUMENT,
                         "needs 1");
  poot_grammar_matcher_destroy(m2);
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  poot_grammar_vocab_destroy(v);
}

static void test_mask_utf8_and_two_words(void **state) {
  (void)state;
  /* Tokens that split a character: α is CE B1, δ is CE B4. Ids 32+ are in word 1. */
  const char *toks[34];
  for (int i = 0; i < 34; i++) toks[i] = "z";
  toks[0] = "\xce";
  toks[1] = "\xb1";
  toks[2] = "\xce\xb1";
  toks[3] = "\xce\xb4";
  toks[33] = "\xce\xb2\xce";
  poot_grammar_vocab *v = make_vocab(toks, 34, NULL, 0);
  poot_grammar *g = compile_ok("root ::= [α-γ]+");
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  uint32_t w[2] = {0};
  POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, v, w, 2));
  assert_int_equal(w[0], (1u << 0) | (1u << 2)); /* the lead byte alone, or α */
  assert_int_equal(w[1], 1u << 1);               /* β and a lead byte */
  POOT_ASSERT_OK(poot_grammar_matcher_accept(m, "\xce", 1));
  POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, v, w, 2));
  assert_int_equal(w[0], 1u << 1); /* only the trail byte B1 (B4 is δ) */
  assert_int_equal(w[1], 0);
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  poot_grammar_vocab_destroy(v);
  size_t len = 5000;
  const char *big = "x";
  POOT_ASSERT_STATUS_MSG(poot_grammar_vocab_create(&big, &len, 1, NULL, 0, &v),
                         POOT_INVALID_ARGUMENT, "limit is 4096");
  int32_t bad = 3;
  len = 1;
  POOT_ASSERT_STATUS_MSG(poot_grammar_vocab_create(&big, &len, 1, &bad, 1, &v),
                         POOT_INVALID_ARGUMENT, "id 3 is outside");
}

/* The mask equals accepting each token on a clone, for every prefix of a JSON text. */
static void test_mask_matches_accept(void **state) {
  (void)state;
  const char *toks[] = {"{",     "}",  "\"",   "\":",  " ",  "a",    "1",  "12",  ",",
                        "\"a\"", "[",  "]",    "tr",   "ue", "null", "\n", "\\",  "\\u",
                        "00",    "e9", "\xc3", "\xa9", "-",  ".5",   "}}", "\"}", ""};
  int32_t n = (int32_t)(sizeof toks / sizeof *toks), eos = n - 1;
  poot_grammar_vocab *v = make_vocab(toks, n, &eos, 1);
  poot_grammar *g = compile_ok(JSON_GBNF);
  const char *doc = "{\"a\": [12, -1.5, true, null, \"\\u00e9\xc3\xa9\"], \"b\": {}}";
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  for (size_t i = 0; doc[i]; i++) {
    uint32_t w = 0;
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, v, &w, 1));
    for (int32_t t = 0; t < n; t++) {
      bool want;
      if (t == eos) {
        want = poot_grammar_matcher_can_end(m);
      } else {
        poot_grammar_matcher *c = NULL;
        POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
        poot_status st = poot_grammar_matcher_accept(c, toks[t], strlen(toks[t]));
        want = !st && strlen(toks[t]) > 0;
        poot_status_free(st);
        poot_grammar_matcher_destroy(c);
      }
      if (want != ((w >> t) & 1))
        fail_msg("offset %zu token %d: mask %d, accept %d", i, t, (int)((w >> t) & 1), want);
    }
    POOT_ASSERT_OK(poot_grammar_matcher_accept(m, doc + i, 1));
  }
  assert_true(poot_grammar_matcher_can_end(m));
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
  poot_grammar_vocab_destroy(v);
}

/* A vocabulary cut from a document: every substring of 1 … 4 bytes starting at each
 * offset (distinct), so that the strings, keys, numbers and their neighbours all appear
 * with tokens that cross from one into the next, and at every fifth offset the substrings
 * of 30 … 34 bytes (past the 31-byte horizon of a long count's context key); the last token
 * is an empty EOS. */
typedef struct doc_vocab {
  char **texts;
  size_t *lens;
  int32_t n, eos;
  poot_grammar_vocab *v;
} doc_vocab;

static void doc_vocab_make(doc_vocab *dv, const char *doc) {
  size_t len = strlen(doc), cap = 9 * len + 1;
  dv->texts = calloc(cap, sizeof *dv->texts);
  dv->lens = calloc(cap, sizeof *dv->lens);
  assert_non_null(dv->texts);
  assert_non_null(dv->lens);
  dv->n = 0;
  for (size_t i = 0; i < len; i++)
    for (size_t l = 1; l <= 34 && i + l <= len; l = l == 4 ? (i % 5 ? 35 : 30) : l + 1) {
      bool seen = false;
      for (int32_t t = 0; t < dv->n && !seen; t++)
        seen = dv->lens[t] == l && memcmp(dv->texts[t], doc + i, l) == 0;
      if (seen) continue;
      dv->texts[dv->n] = (char *)doc + i;
      dv->lens[dv->n++] = l;
    }
  dv->eos = dv->n;
  dv->texts[dv->n] = (char *)"";
  dv->lens[dv->n++] = 0;
  POOT_ASSERT_OK(poot_grammar_vocab_create((const char *const *)dv->texts, dv->lens, dv->n,
                                           &dv->eos, 1, &dv->v));
}

static void doc_vocab_free(doc_vocab *dv) {
  poot_grammar_vocab_destroy(dv->v);
  free(dv->texts);
  free(dv->lens);
}

/* The mask equals accepting each token on a clone of `m` (the reference). */
static void expect_mask_is_accepts(const poot_grammar_matcher *m, const doc_vocab *dv,
                                   const uint32_t *mask, const char *what, size_t at) {
  poot_grammar_matcher *c = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
  for (int32_t t = 0; t < dv->n; t++) {
    bool want, got = (mask[t >> 5] >> (t & 31)) & 1;
    if (t == dv->eos) {
      want = poot_grammar_matcher_can_end(m);
    } else {
      poot_status st = poot_grammar_matcher_accept(c, dv->texts[t], dv->lens[t]);
      want = st == NULL;
      poot_status_free(st);
      if (want) { /* accepted: the clone moved; take a fresh one */
        poot_grammar_matcher_destroy(c);
        POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
      }
    }
    if (got != want)
      fail_msg("%s, offset %zu, token %d '%.*s': mask %d, accept %d", what, at, t, (int)dv->lens[t],
               dv->texts[t], got, want);
  }
  poot_grammar_matcher_destroy(c);
}

/* Every schema-shaped grammar: at every byte of its document, the mask over the document's
 * own substrings equals per-token accepts (exercises the context keys: states inside
 * strings, numbers and enums at several depths share a key and differ below the cut). */
static void test_mask_schemas_every_step(void **state) {
  (void)state;
  for (size_t s = 0; s < GRAMMAR_SCHEMA_COUNT; s++) {
    const grammar_schema *sc = &GRAMMAR_SCHEMAS[s];
    doc_vocab dv = {0};
    doc_vocab_make(&dv, sc->doc);
    poot_grammar *g = compile_ok(sc->gbnf);
    poot_grammar_matcher *m = NULL, *mp = NULL; /* mp: prepared */
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &mp));
    POOT_ASSERT_OK(poot_grammar_matcher_prepare(mp, dv.v));
    POOT_ASSERT_STATUS_MSG(poot_grammar_matcher_prepare(mp, NULL), POOT_INVALID_ARGUMENT,
                           "matcher or vocab is NULL");
    size_t words = poot_grammar_vocab_mask_words(dv.v);
    uint32_t *mask = calloc(words, sizeof *mask), *mask_p = calloc(words, sizeof *mask_p);
    assert_non_null(mask);
    assert_non_null(mask_p);
    size_t len = strlen(sc->doc), allowed = 0;
    for (size_t i = 0; i <= len; i++) {
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, dv.v, mask, words));
      expect_mask_is_accepts(m, &dv, mask, sc->name, i);
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(mp, dv.v, mask_p, words));
      assert_memory_equal(mask, mask_p, words * sizeof *mask);
      for (size_t w = 0; w < words; w++) allowed += (size_t)__builtin_popcount(mask[w]);
      if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(m, sc->doc + i, 1));
      if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(mp, sc->doc + i, 1));
    }
    assert_true(poot_grammar_matcher_can_end(m));
    assert_true(allowed > len); /* the masks are not trivially empty */
    free(mask);
    free(mask_p);
    poot_grammar_matcher_destroy(m);
    poot_grammar_matcher_destroy(mp);
    poot_grammar_destroy(g);
    doc_vocab_free(&dv);
  }
}

/* A cut state gets its context key at its second sighting while masks are filled; the first
 * is a plain walk, the later ones go through the key. Strings, keys and numbers at five
 * depths of one document meet each inner context with a different state below it once,
 * twice and more. At every byte the mask of a matcher that filled every mask before (keys
 * made and used) equals per-token accepts, the mask of a fresh clone (every cut state met
 * for the first time: plain walks only), filled twice (the second from its mask cache), and
 * a prepared matcher's. */
static void test_mask_keys_on_recurrence(void **state) {
  (void)state;
  static const char doc[] =
      "{\"a\": \"xy\", \"b\": [\"xy\", {\"c\": \"xy\", \"d\": [[\"xy\", 12]]}], "
      "\"e\": [[[\"xy\", {\"a\": 12}]]], \"f\": \"xy\"}";
  doc_vocab dv = {0};
  doc_vocab_make(&dv, doc);
  poot_grammar *g = compile_ok(JSON_GBNF);
  poot_grammar_matcher *m = NULL, *mp = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &mp));
  POOT_ASSERT_OK(poot_grammar_matcher_prepare(mp, dv.v));
  size_t words = poot_grammar_vocab_mask_words(dv.v);
  uint32_t *mask = calloc(words, sizeof *mask), *other = calloc(words, sizeof *other);
  assert_true(mask && other);
  for (size_t i = 0, len = strlen(doc); i <= len; i++) {
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, dv.v, mask, words));
    expect_mask_is_accepts(m, &dv, mask, "keys on recurrence", i);
    poot_grammar_matcher *c = NULL;
    POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
    for (int k = 0; k < 2; k++) {
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(c, dv.v, other, words));
      assert_memory_equal(mask, other, words * sizeof *mask);
    }
    poot_grammar_matcher_destroy(c);
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(mp, dv.v, other, words));
    assert_memory_equal(mask, other, words * sizeof *mask);
    if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(m, doc + i, 1));
    if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(mp, doc + i, 1));
  }
  assert_true(poot_grammar_matcher_can_end(m));
  free(mask);
  free(other);
  poot_grammar_matcher_destroy(m);
  poot_grammar_matcher_destroy(mp);
  poot_grammar_destroy(g);
  doc_vocab_free(&dv);
}

/* Every string of 1 … 3 bytes over a 13-byte alphabet and of 4 … 6 bytes over "abc" (so
 * that some subtrees hold only letters: 3,432 tokens), and an empty EOS. */
static void alphabet_vocab_make(doc_vocab *dv) {
  static const char alpha[] = "abcdef\",12-90";
  const size_t na = sizeof alpha - 1, cap = 4096;
  dv->texts = calloc(cap, sizeof *dv->texts);
  dv->lens = calloc(cap, sizeof *dv->lens);
  char *buf = calloc(cap, 6);
  assert_true(dv->texts && dv->lens && buf);
  dv->n = 0;
  for (size_t l = 1; l <= 6; l++) {
    size_t base = l <= 3 ? na : 3, n = 1;
    for (size_t j = 0; j < l; j++) n *= base;
    for (size_t k = 0; k < n; k++) {
      char *t = buf + 6 * (size_t)dv->n;
      for (size_t j = 0, x = k; j < l; j++, x /= base) t[j] = alpha[x % base];
      dv->texts[dv->n] = t;
      dv->lens[dv->n++] = l;
    }
  }
  dv->eos = dv->n;
  dv->texts[dv->n] = buf + 6 * (size_t)dv->n;
  dv->lens[dv->n++] = 0;
  POOT_ASSERT_OK(poot_grammar_vocab_create((const char *const *)dv->texts, dv->lens, dv->n,
                                           &dv->eos, 1, &dv->v));
}

static int32_t alphabet_token(const doc_vocab *dv, const char *text) {
  for (int32_t t = 0; t < dv->n; t++)
    if (dv->lens[t] == strlen(text) && memcmp(dv->texts[t], text, dv->lens[t]) == 0) return t;
  fail_msg("no token '%s'", text);
  return -1;
}

/* Short bounded repetitions, where each count is its own position: the end of a bounded
 * string (all_loop's chain that ends in a set taking none of the bytes below), a date's
 * digit counts, inline copies, and overlapping classes (byte classes: bytes that the same
 * stacks take share a transition). At every byte of each document the masks of a cold and
 * a prepared matcher over that vocabulary equal per-token accepts. */
static void test_mask_short_counts(void **state) {
  (void)state;
  static const struct {
    const char *gbnf, *doc;
  } cases[] = {
      {"root ::= \"\\\"\" [a-f]{0,3} \"\\\"\" (\",\" [12]{2})?", "\"abc\",12"},
      {"root ::= \"\\\"\" [a-f]{2,5} \"\\\"\"", "\"abcde\""},
      {"root ::= [12] [0-9]{3} \"-\" [01] [0-9] \"-\" [0-2] [0-9]", "1999-12-20"},
      {"root ::= \"\\\"\" ([a-f] | \"\\\"\\\"\"){0,4} \"\\\"\" | ([a-c] \"1\" | [b-e] \"2\" | "
       "[c-f]+ \",\"){1,5}",
       "\"a\"\"b\""},
      {"root ::= \"\\\"\" ([a-f] | \"\\\"\\\"\"){0,4} \"\\\"\" | ([a-c] \"1\" | [b-e] \"2\" | "
       "[c-f]+ \",\"){1,5}",
       "a1e2cdf,b1"},
  };
  doc_vocab dv = {0};
  alphabet_vocab_make(&dv);
  size_t words = poot_grammar_vocab_mask_words(dv.v);
  uint32_t *mask = calloc(words, sizeof *mask), *mask_p = calloc(words, sizeof *mask_p);
  assert_true(mask && mask_p);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    poot_grammar *g = compile_ok(cases[c].gbnf);
    poot_grammar_matcher *m = NULL, *mp = NULL;
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &mp));
    POOT_ASSERT_OK(poot_grammar_matcher_prepare(mp, dv.v));
    for (size_t i = 0, len = strlen(cases[c].doc); i <= len; i++) {
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, dv.v, mask, words));
      expect_mask_is_accepts(m, &dv, mask, cases[c].gbnf, i);
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(mp, dv.v, mask_p, words));
      assert_memory_equal(mask, mask_p, words * sizeof *mask);
      if (c == 0 && i == 4) { /* after '"abc', by hand: only '"', '",', '",1' and '",2' */
        size_t n = 0;
        for (size_t w = 0; w < words; w++) n += (size_t)__builtin_popcount(mask[w]);
        assert_int_equal(n, 4);
        const char *want[] = {"\"", "\",", "\",1", "\",2"};
        for (size_t k = 0; k < 4; k++) {
          int32_t t = alphabet_token(&dv, want[k]);
          assert_true((mask[t >> 5] >> (t & 31)) & 1);
        }
      }
      if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(m, cases[c].doc + i, 1));
      if (i < len) POOT_ASSERT_OK(poot_grammar_matcher_accept(mp, cases[c].doc + i, 1));
    }
    assert_true(poot_grammar_matcher_can_end(m));
    poot_grammar_matcher_destroy(m);
    poot_grammar_matcher_destroy(mp);
    poot_grammar_destroy(g);
  }
  free(mask);
  free(mask_p);
  free((char *)dv.texts[0]);
  doc_vocab_free(&dv);
}

/* Long counts and runs of copies (longer than the vocabulary's longest token, 6 bytes, plus
 * 2), which fill_mask shifts down to a state with the same mask: a bounded string, copies
 * followed by more, a count below the top of the stacks (each item two bytes or more), and
 * an ambiguous count whose stacks sit at several counts of one chain at once (`"a" | "aa"`,
 * with tight stack bounds: merging them would change which tokens pass the bound). At every
 * byte, cold and prepared, the mask equals per-token accepts. */
static void test_mask_long_counts(void **state) {
  (void)state;
  static const struct {
    const char *gbnf, *doc;
    uint32_t max_stacks;
  } cases[] = {
      {"root ::= \"\\\"\" [a-f]{0,16} \"\\\"\" (\",\" [12]{2})?", "\"abcdefabcdefab\",12", 0},
      {"root ::= \"\\\"\" [a-f]{12} [a-c]{0,4} \"\\\"\"", "\"abcdefabcdefab\"", 0},
      {"root ::= \"\\\"\" (\"a\" [0-9] | \"bc\" [12]){0,14} \"\\\"\"", "\"a1bc2a9a0bc1a1\"", 0},
      {"root ::= [a-c]? [a-f]{0,14} \",\" [12]", "abcabcab,1", 0},
      {"root ::= (\"a\" | \"aa\"){0,20} \",\"", "aaaaaaaaaaaaaaaa,", 6},
      {"root ::= (\"a\" | \"aa\"){0,20} \",\"", "aaaaaaaaaaaaaaaa,", 13},
  };
  doc_vocab dv = {0};
  alphabet_vocab_make(&dv);
  size_t words = poot_grammar_vocab_mask_words(dv.v);
  uint32_t *mask = calloc(words, sizeof *mask), *mask_p = calloc(words, sizeof *mask_p);
  assert_true(mask && mask_p);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    poot_grammar_options o = poot_grammar_options_default();
    o.max_stacks = cases[c].max_stacks;
    poot_grammar *g = NULL;
    POOT_ASSERT_OK(poot_grammar_compile(cases[c].gbnf, strlen(cases[c].gbnf), &o, &g));
    poot_grammar_matcher *m = NULL, *mp = NULL;
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
    POOT_ASSERT_OK(poot_grammar_matcher_create(g, &mp));
    POOT_ASSERT_OK(poot_grammar_matcher_prepare(mp, dv.v));
    size_t len = strlen(cases[c].doc), i = 0;
    for (; i <= len; i++) {
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, dv.v, mask, words));
      expect_mask_is_accepts(m, &dv, mask, cases[c].gbnf, i);
      POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(mp, dv.v, mask_p, words));
      assert_memory_equal(mask, mask_p, words * sizeof *mask);
      if (i == len) break;
      poot_status st = poot_grammar_matcher_accept(m, cases[c].doc + i, 1);
      if (st && cases[c].max_stacks) { /* the bound is reached: the masks up to it are checked */
        poot_status_free(st);
        break;
      }
      POOT_ASSERT_OK(st);
      POOT_ASSERT_OK(poot_grammar_matcher_accept(mp, cases[c].doc + i, 1));
    }
    if (!cases[c].max_stacks) assert_true(poot_grammar_matcher_can_end(m));
    if (cases[c].max_stacks == 6) assert_true(i < len); /* the bound was met */
    poot_grammar_matcher_destroy(m);
    poot_grammar_matcher_destroy(mp);
    poot_grammar_destroy(g);
  }
  free(mask);
  free(mask_p);
  free((char *)dv.texts[0]);
  doc_vocab_free(&dv);
}

/* Two threads, two matchers of one grammar, one vocabulary: each fills the masks of a whole
 * document while the other does; the masks equal those of one thread alone. */
typedef struct mask_job {
  const poot_grammar *g;
  const doc_vocab *dv;
  const char *doc;
  uint32_t *masks; /* (strlen(doc) + 1) masks of `words` words */
  size_t words;
  bool ok;
} mask_job;

static void *mask_job_run(void *arg) {
  mask_job *j = arg;
  poot_grammar_matcher *m = NULL;
  j->ok = false;
  if (poot_grammar_matcher_create(j->g, &m)) return NULL;
  size_t len = strlen(j->doc);
  for (size_t i = 0; i <= len; i++) {
    poot_status st = poot_grammar_matcher_fill_mask(m, j->dv->v, j->masks + i * j->words, j->words);
    if (!st && i < len) st = poot_grammar_matcher_accept(m, j->doc + i, 1);
    if (st) {
      poot_status_free(st);
      poot_grammar_matcher_destroy(m);
      return NULL;
    }
  }
  poot_grammar_matcher_destroy(m);
  j->ok = true;
  return NULL;
}

static void test_mask_two_threads(void **state) {
  (void)state;
  const grammar_schema *sc = &GRAMMAR_SCHEMAS[1]; /* order: strings, enums, numbers, arrays */
  doc_vocab dv = {0};
  doc_vocab_make(&dv, sc->doc);
  poot_grammar *g = compile_ok(sc->gbnf);
  size_t words = poot_grammar_vocab_mask_words(dv.v), steps = strlen(sc->doc) + 1;
  mask_job jobs[3];
  for (int k = 0; k < 3; k++) {
    jobs[k] = (mask_job){.g = g, .dv = &dv, .doc = sc->doc, .words = words};
    jobs[k].masks = calloc(steps * words, sizeof(uint32_t));
    assert_non_null(jobs[k].masks);
  }
  mask_job_run(&jobs[2]); /* alone: the reference */
  assert_true(jobs[2].ok);
  pthread_t th[2];
  for (int k = 0; k < 2; k++)
    assert_int_equal(pthread_create(&th[k], NULL, mask_job_run, &jobs[k]), 0);
  for (int k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
  for (int k = 0; k < 2; k++) {
    assert_true(jobs[k].ok);
    assert_memory_equal(jobs[k].masks, jobs[2].masks, steps * words * sizeof(uint32_t));
  }
  /* The masks are real: the first step allows exactly the tokens that are a prefix of the
   * document (its first key must be "id"; the grammar allows no space before it here): the
   * four short ones {  {"  {"i  {"id and the five of 30 … 34 bytes cut at offset 0. */
  size_t n_first = 0;
  for (int32_t t = 0; t < dv.n; t++) {
    bool got = (jobs[2].masks[t >> 5] >> (t & 31)) & 1;
    bool want = dv.lens[t] > 0 && memcmp(dv.texts[t], sc->doc, dv.lens[t]) == 0;
    assert_int_equal(got, want);
    n_first += got;
  }
  assert_int_equal(n_first, 9);
  for (int k = 0; k < 3; k++) free(jobs[k].masks);
  poot_grammar_destroy(g);
  doc_vocab_free(&dv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_arith_and_list),
      cmocka_unit_test(test_repetition_and_escapes),
      cmocka_unit_test(test_matcher_state),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_mask_small),
      cmocka_unit_test(test_mask_utf8_and_two_words),
      cmocka_unit_test(test_mask_matches_accept),
      cmocka_unit_test(test_mask_schemas_every_step),
      cmocka_unit_test(test_mask_keys_on_recurrence),
      cmocka_unit_test(test_mask_short_counts),
      cmocka_unit_test(test_mask_long_counts),
      cmocka_unit_test(test_mask_two_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
