/* The vocabulary mask under the JSON Schema corpus at a 128k vocabulary: the Llama-3
 * tokenizer (POOT_DATA_DIR hf-tokenizers/llama3), every corpus schema's grammar, and each of
 * its valid instances (written with ", " and ": ") tokenized and stepped token by token (at
 * most 200 steps an instance). Checks that every token of every instance is in the mask at
 * its step and that the grammar may end after the last; prints the mask time per call over
 * all steps (average, p50, p99, max) for docs/json_schema.md. Times are printed, not
 * asserted: the machine is shared. */
#include "poot_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "poot/llm/grammar.h"
#include "poot/llm/tokenizer.h"

typedef struct bench {
  poot_tokenizer *tok;
  poot_grammar_vocab *vocab;
  char **texts;
  size_t *lens;
  int32_t n;
  uint64_t *ns;
  size_t steps, cap;
  size_t allowed;
} bench;

static void load_vocab(bench *b, const char *dir) {
  POOT_ASSERT_OK(poot_tokenizer_open_path(dir, &b->tok));
  b->n = poot_tokenizer_vocab_size(b->tok);
  b->texts = calloc((size_t)b->n, sizeof *b->texts);
  b->lens = calloc((size_t)b->n, sizeof *b->lens);
  int32_t *eog = calloc((size_t)b->n, sizeof *eog);
  assert_true(b->texts && b->lens && eog);
  size_t n_eog = 0;
  for (int32_t i = 0; i < b->n; i++) {
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_tokenizer_token_to_piece(b->tok, i, false, &sb));
    b->lens[i] = sb.len;
    b->texts[i] = poot_strbuf_take(&sb);
    if (poot_tokenizer_is_end_of_generation(b->tok, i)) eog[n_eog++] = i;
  }
  POOT_ASSERT_OK(poot_grammar_vocab_create((const char *const *)b->texts, b->lens, b->n, eog, n_eog,
                                           &b->vocab));
  free(eog);
}

static void note(bench *b, uint64_t ns) {
  if (b->steps == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 4096;
    b->ns = realloc(b->ns, b->cap * sizeof *b->ns);
    assert_non_null(b->ns);
  }
  b->ns[b->steps++] = ns;
}

/* Steps one instance through the grammar, timing each mask. */
static void run_instance(bench *b, const poot_grammar *g, const char *name, const char *text,
                         size_t len, uint32_t *mask, size_t words) {
  poot_token *ids = NULL;
  size_t n_ids = 0;
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  eo.add_special = false;
  POOT_ASSERT_OK(poot_tokenizer_encode(b->tok, text, len, &eo, &ids, &n_ids));
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  size_t limit = n_ids < 200 ? n_ids : 200;
  for (size_t s = 0; s <= limit; s++) {
    uint64_t t0 = poot_time_ns();
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, b->vocab, mask, words));
    note(b, poot_time_ns() - t0);
    for (size_t w = 0; w < words; w++) b->allowed += (size_t)__builtin_popcount(mask[w]);
    if (s == limit) break;
    poot_token t = ids[s];
    if (!((mask[t >> 5] >> (t & 31)) & 1))
      fail_msg("%s: step %zu: the instance's token %d ('%s') is masked", name, s, t, b->texts[t]);
    POOT_ASSERT_OK(poot_grammar_matcher_accept(m, b->texts[t], b->lens[t]));
  }
  if (limit == n_ids && !poot_grammar_matcher_can_end(m)) fail_msg("%s: cannot end", name);
  poot_grammar_matcher_destroy(m);
  poot_free(ids);
}

static void run_file(bench *b, const char *path, uint32_t *mask, size_t words, size_t *n_inst) {
  char *text = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &text, &len));
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *doc = NULL;
  POOT_ASSERT_OK(poot_json_parse(&arena, text, len, NULL, &doc));
  poot_json_schema_options o = poot_json_schema_options_default();
  const poot_json *opts = poot_json_get(doc, "options");
  if (opts && poot_json_get(opts, "strict"))
    o.strict_properties = poot_json_get(opts, "strict")->boolean;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_json_write(&sb, poot_json_get(doc, "schema"), false, false);
  char *gbnf = NULL;
  size_t glen = 0;
  POOT_ASSERT_OK(poot_json_schema_to_gbnf(sb.data, sb.len, &o, &gbnf, &glen));
  poot_grammar *g = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(gbnf, glen, NULL, &g));
  const poot_json *valid = poot_json_get(doc, "valid");
  size_t first = b->steps;
  for (size_t i = 0; valid && i < valid->len; i++) {
    poot_strbuf_clear(&sb);
    poot_json_write(&sb, valid->items[i], true, false);
    run_instance(b, g, path, sb.data, sb.len, mask, words);
    (*n_inst)++;
  }
  if (getenv("JSON_SCHEMA_BENCH_FILES")) { /* per schema, for finding the slow grammars */
    uint64_t sum = 0, max = 0;
    for (size_t s = first; s < b->steps; s++) {
      sum += b->ns[s];
      if (b->ns[s] > max) max = b->ns[s];
    }
    printf("%s: %zu steps, average %.1f us, max %.1f us\n", strrchr(path, '/') + 1,
           b->steps - first, (double)sum / (double)(b->steps - first) / 1e3, (double)max / 1e3);
  }
  poot_grammar_destroy(g);
  poot_free(gbnf);
  poot_strbuf_deinit(&sb);
  poot_arena_deinit(&arena);
  poot_free(text);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_corpus_masks(void **state) {
  (void)state;
  char dir[1024], corpus[1024];
  assert_true(poot_test_data_path("hf-tokenizers/llama3", dir, sizeof dir));
  snprintf(corpus, sizeof corpus, "%s/tests/data/json_schema", poot_test_source_dir());
  bench b = {0};
  load_vocab(&b, dir);
  size_t words = poot_grammar_vocab_mask_words(b.vocab);
  uint32_t *mask = calloc(words, sizeof *mask);
  assert_non_null(mask);
  DIR *d = opendir(corpus);
  assert_non_null(d);
  char *names[1024];
  size_t nf = 0;
  struct dirent *e;
  while ((e = readdir(d)) && nf < 1024) {
    size_t l = strlen(e->d_name);
    if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
      names[nf] = malloc(strlen(corpus) + l + 2);
      sprintf(names[nf++], "%s/%s", corpus, e->d_name);
    }
  }
  closedir(d);
  qsort(names, nf, sizeof *names, cmp_str);
  size_t n_inst = 0;
  for (size_t i = 0; i < nf; i++) {
    run_file(&b, names[i], mask, words, &n_inst);
    free(names[i]);
  }
  uint64_t total = 0;
  for (size_t s = 0; s < b.steps; s++) total += b.ns[s];
  qsort(b.ns, b.steps, sizeof *b.ns, cmp_u64);
  printf(
      "corpus masks: %zu schemas, %zu instances, %zu steps at %d tokens; %.1f tokens allowed "
      "on average\n",
      nf, n_inst, b.steps, b.n, (double)b.allowed / (double)b.steps);
  printf("mask time: average %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n",
         (double)total / (double)b.steps / 1e3, (double)b.ns[b.steps / 2] / 1e3,
         (double)b.ns[(b.steps * 99) / 100] / 1e3, (double)b.ns[b.steps - 1] / 1e3);
  free(b.ns);
  free(mask);
  poot_grammar_vocab_destroy(b.vocab);
  for (int32_t i = 0; i < b.n; i++) poot_free(b.texts[i]);
  free(b.texts);
  free(b.lens);
  poot_tokenizer_destroy(b.tok);
}

int main(void) {
  char probe[1024];
  if (!poot_test_data_path("hf-tokenizers/llama3/tokenizer.json", probe, sizeof probe))
    return poot_test_skip("hf-tokenizers is absent (POOT_DATA_DIR)");
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_corpus_masks)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
