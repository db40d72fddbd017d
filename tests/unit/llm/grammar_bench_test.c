/* The vocabulary mask at a 128k vocabulary: the Llama-3 tokenizer (POOT_DATA_DIR
 * hf-tokenizers/llama3) and the JSON grammar, stepping through a real JSON document token
 * by token. Checks that every token of the document is in the mask, and that the mask
 * equals accepting each of the 128,256 tokens on a clone at a few steps; prints the mask
 * time per call (average, p50, p99, max) for docs/grammar.md. Times are printed, not
 * asserted: the CI machine is shared. */
#include "poot_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "poot/llm/grammar.h"
#include "poot/llm/tokenizer.h"
#include "grammar_gbnf.h"
#include "grammar_vocab_util.h"
#include "grammar_schemas.h"

static const char *DOC =
    "{\n  \"id\": \"chatcmpl-7a1eb48\",\n  \"object\": \"chat.completion\",\n"
    "  \"created\": 1764633600,\n  \"model\": \"llama-3.2-1b-instruct\",\n"
    "  \"choices\": [\n    {\n      \"index\": 0,\n      \"message\": {\n"
    "        \"role\": \"assistant\",\n"
    "        \"content\": \"Paris is the capital of France. It has about 2.1 million "
    "inhabitants (\\\"Parisiens\\\"), and the Seine runs through it \\u2014 caf\xc3\xa9s, "
    "mus\xc3\xa9"
    "es and 20 arrondissements.\"\n      },\n"
    "      \"logprobs\": null,\n      \"finish_reason\": \"stop\"\n    }\n  ],\n"
    "  \"usage\": {\"prompt_tokens\": 25, \"completion_tokens\": 41, \"total_tokens\": 66},\n"
    "  \"tags\": [\"geography\", \"europe\", \"capitals\", \"france\"],\n"
    "  \"scores\": [0.25, -1.5e-3, 3.14159, 42, -7],\n"
    "  \"nested\": {\"a\": {\"b\": {\"c\": [true, false, null, {\"d\": []}]}}},\n"
    "  \"address\": {\"street\": \"8 rue de Rivoli\", \"city\": \"Paris\", \"zip\": \"75004\", "
    "\"country\": \"FR\", \"geo\": {\"lat\": 48.8559, \"lon\": 2.3601}},\n"
    "  \"items\": [{\"sku\": \"A-100\", \"qty\": 2, \"price\": 19.99}, {\"sku\": \"B-220\", "
    "\"qty\": 1, \"price\": 5.5}, {\"sku\": \"C-314\", \"qty\": 12, \"price\": 0.75}],\n"
    "  \"note\": \"line one\\nline two\\ttabbed, \\\"quoted\\\" and a backslash \\\\ end\"\n}";

typedef pt_grammar_vocab bench;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* This thread's CPU time: on a shared machine it leaves out the time the thread waited. */
static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Prints average, p50, p99 and max of `n` times (sorted here). */
static void print_times(const char *what, const char *clock, uint64_t *ns, size_t n) {
  uint64_t total = 0;
  for (size_t s = 0; s < n; s++) total += ns[s];
  qsort(ns, n, sizeof *ns, cmp_u64);
  printf("  %-10s %-4s %4zu masks: average %7.1f us, p50 %6.1f us, p99 %7.1f us, max %7.1f us\n",
         what, clock, n, (double)total / (double)n / 1e3, (double)ns[n / 2] / 1e3,
         (double)ns[(n * 99) / 100] / 1e3, (double)ns[n - 1] / 1e3);
}

/* The times of every mask of every document (for the pooled figures). */
typedef struct pool_times {
  uint64_t wall[8192], cpu[8192];
  size_t n;
} pool_times;

/* Steps through `doc` token by token under `gbnf`, one mask per step; checks the document's
 * tokens are in their masks and, every `check_every` steps (and at the first and last), the
 * mask against per-token accepts. Prints the mask time per call. */
static void bench_doc(const bench *b, const char *what, const char *gbnf, const char *doc,
                      size_t check_every, bool prepare, pool_times *pool) {
  poot_token *ids = NULL;
  size_t n_ids = 0;
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  eo.add_special = false;
  POOT_ASSERT_OK(poot_tokenizer_encode(b->tok, doc, strlen(doc), &eo, &ids, &n_ids));
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(gbnf, strlen(gbnf), NULL, &g));
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  if (prepare) {
    uint64_t t0 = poot_time_ns();
    POOT_ASSERT_OK(poot_grammar_matcher_prepare(m, b->vocab));
    printf("%s: prepared in %.1f us\n", what, (double)(poot_time_ns() - t0) / 1e3);
  }
  size_t words = poot_grammar_vocab_mask_words(b->vocab);
  uint32_t *mask = calloc(words, sizeof *mask);
  uint64_t *ns = calloc(n_ids + 1, sizeof *ns), *cpu = calloc(n_ids + 1, sizeof *cpu);
  assert_non_null(mask);
  assert_non_null(ns);
  assert_non_null(cpu);
  size_t allowed_sum = 0, checked = 0;
  for (size_t s = 0; s <= n_ids; s++) {
    uint64_t t0 = poot_time_ns(), c0 = cpu_ns();
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, b->vocab, mask, words));
    cpu[s] = cpu_ns() - c0;
    ns[s] = poot_time_ns() - t0;
    for (size_t w = 0; w < words; w++) allowed_sum += (size_t)__builtin_popcount(mask[w]);
    if (check_every && (s % check_every == 0 || s == n_ids)) {
      pt_grammar_check_mask(b, m, mask, what, s);
      checked++;
    }
    if (s == n_ids) break;
    poot_token t = ids[s];
    if (!((mask[t >> 5] >> (t & 31)) & 1))
      fail_msg("%s, step %zu: the document's token %d is masked", what, s, t);
    POOT_ASSERT_OK(poot_grammar_matcher_accept(m, b->texts[t], b->lens[t]));
  }
  assert_true(poot_grammar_matcher_can_end(m));
  size_t steps = n_ids + 1;
  printf(
      "%s: %zu tokens of a %zu-byte document, %.0f of %d tokens allowed on average, %zu "
      "masks checked against per-token accepts\n",
      what, n_ids, strlen(doc), (double)allowed_sum / (double)steps, b->n, checked);
  for (size_t s = 0; s < steps && pool && pool->n < 8192; s++, pool->n++) {
    pool->wall[pool->n] = ns[s];
    pool->cpu[pool->n] = cpu[s];
  }
  print_times(what, "wall", ns, steps);
  print_times(what, "cpu", cpu, steps);
  free(cpu);
  free(ns);
  free(mask);
  poot_free(ids);
  poot_grammar_matcher_destroy(m);
  poot_grammar_destroy(g);
}

static void test_llama3_json(void **state) {
  (void)state;
  char dir[1024];
  assert_true(poot_test_data_path("hf-tokenizers/llama3", dir, sizeof dir));
  bench b = {0};
  pt_grammar_vocab_load(&b, dir);
  pool_times *pool = calloc(1, sizeof *pool);
  assert_non_null(pool);
  for (int prepare = 0; prepare < 2; prepare++) { /* checked, then prepared (not checked) */
    printf("---- %s\n", prepare ? "after poot_grammar_matcher_prepare" : "cold matchers");
    bench_doc(&b, "json", JSON_GBNF, DOC, prepare ? 0 : 16, prepare, NULL);
    pool->n = 0;
    for (size_t i = 0; i < GRAMMAR_SCHEMA_COUNT; i++)
      bench_doc(&b, GRAMMAR_SCHEMAS[i].name, GRAMMAR_SCHEMAS[i].gbnf, GRAMMAR_SCHEMAS[i].doc,
                prepare ? 0 : 8, prepare, pool);
    printf("all schema-shaped documents:\n");
    print_times("schemas", "wall", pool->wall, pool->n);
    print_times("schemas", "cpu", pool->cpu, pool->n);
  }
  free(pool);
  pt_grammar_vocab_free(&b);
}

int main(void) {
  char probe[1024];
  if (!poot_test_data_path("hf-tokenizers/llama3/tokenizer.json", probe, sizeof probe))
    return poot_test_skip("hf-tokenizers is absent (POOT_DATA_DIR)");
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_llama3_json)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
