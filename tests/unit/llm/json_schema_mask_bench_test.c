/* The vocabulary mask under the JSON Schema corpus at a 128k vocabulary: the Llama-3
 * tokenizer (POOT_DATA_DIR hf-tokenizers/llama3), every corpus schema's grammar, and each of
 * its valid instances (written with ", " and ": ") tokenized and stepped token by token (at
 * most 200 steps an instance). Checks that every token of every instance is in the mask at
 * its step and that the grammar may end after the last; prints the mask time per call over
 * all steps (average, p50, p99, max; the thread's CPU time and the wall time), cold (a new
 * matcher) and prepared (after poot_grammar_matcher_prepare), for docs/grammar.md. Times are
 * printed, not asserted: the machine is shared. JSON_SCHEMA_BENCH_FILES=1 prints each
 * schema's figures, JSON_SCHEMA_BENCH_SLOW=<µs> each mask slower than that,
 * JSON_SCHEMA_BENCH_ONLY=<text> runs only the files whose names contain it,
 * JSON_SCHEMA_BENCH_STRIDE=<k> only every k-th file (a subset that callgrind runs in minutes),
 * JSON_SCHEMA_BENCH_CHECK=<k> checks every k-th prepared mask against per-token accepts too
 * (slow: for a few files). */
#include "poot_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "poot/llm/grammar.h"
#include "poot/llm/tokenizer.h"
#include "grammar_vocab_util.h"

typedef struct bench {
  pt_grammar_vocab v;
  uint64_t *ns, *cpu;
  size_t steps, cap;
  size_t allowed;
  bool prepare;               /* poot_grammar_matcher_prepare before the first mask */
  uint64_t prep_ns, prep_max; /* its total and largest CPU time */
  double slow_us;             /* JSON_SCHEMA_BENCH_SLOW: print the masks slower than this */
  uint64_t *hash;             /* the cold pass's mask at each step (a hash) */
  size_t *slowest, n_slowest; /* the cold pass's slowest step of each instance */
  size_t inst, checked;       /* instances run in this pass; masks checked per token */
  size_t check_every;         /* JSON_SCHEMA_BENCH_CHECK: every k-th prepared mask per token */
} bench;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note(bench *b, uint64_t ns, uint64_t cpu) {
  if (b->steps == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 4096;
    b->ns = realloc(b->ns, b->cap * sizeof *b->ns);
    b->cpu = realloc(b->cpu, b->cap * sizeof *b->cpu);
    b->hash = realloc(b->hash, b->cap * sizeof *b->hash);
    assert_true(b->ns && b->cpu && b->hash);
  }
  b->ns[b->steps] = ns;
  b->cpu[b->steps++] = cpu;
}

static uint64_t mask_hash(const uint32_t *mask, size_t words) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t w = 0; w < words; w++) h = (h ^ mask[w]) * 0x100000001b3ull;
  return h;
}

/* What a pass checks beyond the instance's tokens: the cold pass notes each mask (a hash)
 * and each instance's slowest step (where a new context starts); the prepared pass checks
 * that every mask equals the cold one and, at the slowest step of every eighth instance,
 * equals per-token accepts over the whole vocabulary. */
static void check_step(bench *b, const poot_grammar_matcher *m, const char *name, size_t s,
                       const uint32_t *mask, size_t words, size_t *slow_s, uint64_t *slow_c) {
  uint64_t h = mask_hash(mask, words), c = b->cpu[b->steps - 1];
  if (!b->prepare) {
    b->hash[b->steps - 1] = h;
    if (c > *slow_c) {
      *slow_c = c;
      *slow_s = s;
    }
    return;
  }
  if (b->n_slowest && b->hash[b->steps - 1] != h)
    fail_msg("%s: step %zu: the prepared mask differs from the cold one", name, s);
  if ((b->inst < b->n_slowest && b->inst % 8 == 0 && s == b->slowest[b->inst]) ||
      (b->check_every && s % b->check_every == 0)) {
    pt_grammar_check_mask(&b->v, m, mask, name, s);
    b->checked++;
  }
}

/* Steps one instance through the grammar, timing each mask. */
static void run_instance(bench *b, const poot_grammar *g, const char *name, const char *text,
                         size_t len, uint32_t *mask, size_t words) {
  poot_token *ids = NULL;
  size_t n_ids = 0;
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  eo.add_special = false;
  POOT_ASSERT_OK(poot_tokenizer_encode(b->v.tok, text, len, &eo, &ids, &n_ids));
  poot_grammar_matcher *m = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_create(g, &m));
  if (b->prepare) {
    uint64_t c0 = cpu_ns();
    POOT_ASSERT_OK(poot_grammar_matcher_prepare(m, b->v.vocab));
    uint64_t c = cpu_ns() - c0;
    b->prep_ns += c;
    if (c > b->prep_max) b->prep_max = c;
  }
  size_t limit = n_ids < 200 ? n_ids : 200, off = 0, slow_s = 0;
  uint64_t slow_c = 0;
  for (size_t s = 0; s <= limit; s++) {
    uint64_t t0 = poot_time_ns(), c0 = cpu_ns();
    POOT_ASSERT_OK(poot_grammar_matcher_fill_mask(m, b->v.vocab, mask, words));
    uint64_t c = cpu_ns() - c0;
    note(b, poot_time_ns() - t0, c);
    check_step(b, m, name, s, mask, words, &slow_s, &slow_c);
    if (b->slow_us > 0 && (double)c / 1e3 > b->slow_us) /* where the slow masks are */
      printf("slow %s step %zu: %.0f us after '%.*s'\n", strrchr(name, '/') + 1, s, (double)c / 1e3,
             (int)(off < 40 ? off : 40), text + (off < 40 ? 0 : off - 40));
    for (size_t w = 0; w < words; w++) b->allowed += (size_t)__builtin_popcount(mask[w]);
    if (s == limit) break;
    poot_token t = ids[s];
    if (!((mask[t >> 5] >> (t & 31)) & 1))
      fail_msg("%s: step %zu: the instance's token %d ('%s') is masked", name, s, t, b->v.texts[t]);
    POOT_ASSERT_OK(poot_grammar_matcher_accept(m, b->v.texts[t], b->v.lens[t]));
    off += b->v.lens[t];
  }
  if (limit == n_ids && !poot_grammar_matcher_can_end(m)) fail_msg("%s: cannot end", name);
  if (!b->prepare) {
    b->slowest = realloc(b->slowest, (b->inst + 1) * sizeof *b->slowest);
    assert_non_null(b->slowest);
    b->slowest[b->inst] = slow_s;
  }
  b->inst++;
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
      sum += b->cpu[s];
      if (b->cpu[s] > max) max = b->cpu[s];
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

static double pct_us(const uint64_t *sorted, size_t n, size_t num, size_t den) {
  return (double)sorted[n * num / den < n ? n * num / den : n - 1] / 1e3;
}

/* Whether JSON_SCHEMA_BENCH_SKIP (names' parts, separated by commas) names this file. */
static bool skipped(const char *path) {
  const char *skip = getenv("JSON_SCHEMA_BENCH_SKIP");
  while (skip && *skip) {
    size_t n = strcspn(skip, ",");
    for (const char *p = path; n && (p = strstr(p, "/")) != NULL; p++)
      if (strncmp(p + 1, skip, n) == 0) return true;
    skip += n + (skip[n] == ',');
  }
  return false;
}

/* One pass over the corpus, cold or prepared; prints the CPU-time and wall figures. */
static void run_corpus(bench *b, char **names, size_t nf, uint32_t *mask, size_t words) {
  size_t n_inst = 0;
  b->steps = 0;
  b->allowed = 0;
  b->prep_ns = b->prep_max = 0;
  b->inst = b->checked = 0;
  const char *only = getenv("JSON_SCHEMA_BENCH_ONLY"); /* a part of the file names to run */
  const char *stride_env = getenv("JSON_SCHEMA_BENCH_STRIDE");
  size_t n_run = 0, stride = stride_env && atoi(stride_env) > 0 ? (size_t)atoi(stride_env) : 1;
  for (size_t i = 0; i < nf; i++)
    if (i % stride == 0 && (!only || strstr(names[i], only)) && !skipped(names[i])) {
      run_file(b, names[i], mask, words, &n_inst);
      n_run++;
    }
  uint64_t total = 0, wall = 0;
  for (size_t s = 0; s < b->steps; s++) {
    total += b->cpu[s];
    wall += b->ns[s];
  }
  if (!b->prepare) b->n_slowest = b->inst;
  if (b->prepare && b->n_slowest)
    printf("prepared masks equal the cold ones at all %zu steps; %zu equal per-token accepts\n",
           b->steps, b->checked);
  size_t steps = b->steps;
  uint64_t *cpu = malloc(steps * sizeof *cpu), *ns = malloc(steps * sizeof *ns);
  assert_true(cpu && ns);
  memcpy(cpu, b->cpu, steps * sizeof *cpu);
  memcpy(ns, b->ns, steps * sizeof *ns);
  qsort(ns, steps, sizeof *ns, cmp_u64);
  qsort(cpu, steps, sizeof *cpu, cmp_u64);
  const char *mode = b->prepare ? "prepared" : "cold";
  printf(
      "corpus masks (%s): %zu schemas, %zu instances, %zu steps at %d tokens; %.1f tokens "
      "allowed on average\n",
      mode, n_run, n_inst, b->steps, b->v.n, (double)b->allowed / (double)b->steps);
  printf("%s mask CPU time: average %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n", mode,
         (double)total / (double)b->steps / 1e3, pct_us(cpu, steps, 1, 2),
         pct_us(cpu, steps, 99, 100), (double)cpu[steps - 1] / 1e3);
  printf("%s mask wall time: average %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n", mode,
         (double)wall / (double)b->steps / 1e3, pct_us(ns, steps, 1, 2), pct_us(ns, steps, 99, 100),
         (double)ns[steps - 1] / 1e3);
  free(cpu);
  free(ns);
  if (b->prepare)
    printf("prepare CPU time: average %.2f ms, max %.2f ms over %zu matchers\n",
           (double)b->prep_ns / (double)n_inst / 1e6, (double)b->prep_max / 1e6, n_inst);
}

/* JSON_SCHEMA_BENCH_MODE: cold, prepared or both (the default). */
static void test_corpus_masks(void **state) {
  (void)state;
  char dir[1024], corpus[1024];
  assert_true(poot_test_data_path("hf-tokenizers/llama3", dir, sizeof dir));
  snprintf(corpus, sizeof corpus, "%s/tests/data/json_schema", poot_test_source_dir());
  bench b = {0};
  const char *slow = getenv("JSON_SCHEMA_BENCH_SLOW"), *mode = getenv("JSON_SCHEMA_BENCH_MODE");
  b.slow_us = slow ? atof(slow) : 0;
  const char *check = getenv("JSON_SCHEMA_BENCH_CHECK");
  b.check_every = check && atoi(check) > 0 ? (size_t)atoi(check) : 0;
  pt_grammar_vocab_load(&b.v, dir);
  size_t words = poot_grammar_vocab_mask_words(b.v.vocab);
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
  if (!mode || strcmp(mode, "prepared") != 0) {
    b.prepare = false;
    run_corpus(&b, names, nf, mask, words);
  }
  if (!mode || strcmp(mode, "cold") != 0) {
    b.prepare = true;
    run_corpus(&b, names, nf, mask, words);
  }
  for (size_t i = 0; i < nf; i++) free(names[i]);
  free(b.ns);
  free(b.cpu);
  free(b.hash);
  free(b.slowest);
  free(mask);
  pt_grammar_vocab_free(&b.v);
}

int main(void) {
  char probe[1024];
  if (!poot_test_data_path("hf-tokenizers/llama3/tokenizer.json", probe, sizeof probe))
    return poot_test_skip("hf-tokenizers is absent (POOT_DATA_DIR)");
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_corpus_masks)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
