/* The JSON Schema corpus (tests/data/json_schema/, one JSON file each: a schema, valid and invalid
 * instances whose labels json_schema_check.py confirms with Python's jsonschema): every schema
 * compiles to GBNF that poot_grammar_compile accepts, every valid instance (written compact
 * and with Python's ", " / ": " separators) is accepted whole with can_end true, and every
 * invalid one is refused.
 *
 *   json_schema_corpus_test                     the corpus check (a ctest)
 *   json_schema_corpus_test --gbnf FILE         print FILE's grammar
 *   json_schema_corpus_test --check DIR         the corpus check over DIR's files
 *   json_schema_corpus_test --generate N SEED OUT [DIR]
 *       walk each corpus grammar (or each of DIR's schemas) N times with random allowed
 *       bytes (a seeded xorshift) and write {"file":…,"text":…} lines to OUT for
 *       json_schema_check.py to validate. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/base.h"
#include "poot/llm/grammar.h"

typedef struct corpus_file {
  char *path, *name;
  char *text;
  size_t len;
  poot_arena arena;
  poot_json *doc;
  poot_json_schema_options opts;
} corpus_file;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The corpus files in name order. */
static char **list_corpus(const char *dir, size_t *out_n) {
  DIR *d = opendir(dir);
  if (!d) return NULL;
  size_t n = 0, cap = 256;
  char **names = calloc(cap, sizeof *names);
  struct dirent *e;
  while (names && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
    if (n == cap) {
      char **nn = realloc(names, (cap *= 2) * sizeof *names);
      if (!nn) break;
      names = nn;
    }
    names[n] = malloc(strlen(dir) + l + 2);
    if (names[n]) sprintf(names[n++], "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (names) qsort(names, n, sizeof *names, cmp_str);
  *out_n = n;
  return names;
}

static int load(const char *path, corpus_file *f) {
  memset(f, 0, sizeof *f);
  f->path = (char *)path;
  const char *slash = strrchr(path, '/');
  f->name = (char *)(slash ? slash + 1 : path);
  poot_arena_init(&f->arena, 0);
  poot_status st = poot_file_read_all(path, &f->text, &f->len);
  if (!st) st = poot_json_parse(&f->arena, f->text, f->len, NULL, &f->doc);
  if (st) {
    fprintf(stderr, "%s: %s\n", f->name, poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  f->opts = poot_json_schema_options_default();
  const poot_json *o = poot_json_get(f->doc, "options");
  const poot_json *strict = o ? poot_json_get(o, "strict") : NULL;
  if (strict && strict->type == POOT_JSON_BOOL) f->opts.strict_properties = strict->boolean;
  return 0;
}

static void unload(corpus_file *f) {
  poot_free(f->text);
  poot_arena_deinit(&f->arena);
}

/* Conversion and compile figures over the corpus (printed by the check). */
typedef struct figures {
  double to_gbnf_ms, to_gbnf_max, compile_ms, compile_max;
  size_t bytes, bytes_max, rules, rules_max, n;
} figures;

static void note(double *sum, double *max, double v) {
  *sum += v;
  if (v > *max) *max = v;
}

/* The schema's grammar, compiled. */
static int compile(const corpus_file *f, char **out_gbnf, poot_grammar **out_g, figures *fig) {
  const poot_json *schema = poot_json_get(f->doc, "schema");
  if (!schema) {
    fprintf(stderr, "%s: no \"schema\"\n", f->name);
    return 1;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_json_write(&sb, schema, false, false);
  size_t len = 0;
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_json_schema_to_gbnf(sb.data, sb.len, &f->opts, out_gbnf, &len);
  uint64_t t1 = poot_time_ns();
  poot_strbuf_deinit(&sb);
  if (!st) st = poot_grammar_compile(*out_gbnf, len, NULL, out_g);
  if (!st && fig) {
    figures *g = fig;
    note(&g->to_gbnf_ms, &g->to_gbnf_max, (double)(t1 - t0) * 1e-6);
    note(&g->compile_ms, &g->compile_max, (double)(poot_time_ns() - t1) * 1e-6);
    size_t rules = poot_grammar_rule_count(*out_g);
    g->bytes += len;
    g->rules += rules;
    if (len > g->bytes_max) g->bytes_max = len;
    if (rules > g->rules_max) g->rules_max = rules;
    g->n++;
  }
  if (st) {
    fprintf(stderr, "%s: %s: %s\n", f->name, poot_status_code_name(poot_status_code_of(st)),
            poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  return 0;
}

static bool full_match(const poot_grammar *g, const char *s, size_t n) {
  poot_grammar_matcher *m = NULL;
  poot_status st = poot_grammar_matcher_create(g, &m);
  if (!st) st = poot_grammar_matcher_accept(m, s, n);
  bool ok = !st && poot_grammar_matcher_can_end(m);
  poot_status_free(st);
  poot_grammar_matcher_destroy(m);
  return ok;
}

static int check_file(const char *path, size_t *n_valid, size_t *n_invalid, figures *fig) {
  corpus_file f;
  if (load(path, &f)) return 1;
  char *gbnf = NULL;
  poot_grammar *g = NULL;
  int fails = compile(&f, &gbnf, &g, fig);
  static const char *const kinds[] = {"valid", "invalid"};
  for (int k = 0; k < 2 && !fails; k++) {
    const poot_json *list = poot_json_get(f.doc, kinds[k]);
    for (size_t i = 0; list && i < list->len; i++) {
      for (int style = 0; style < 2; style++) {
        poot_strbuf sb;
        poot_strbuf_init(&sb);
        poot_json_write(&sb, list->items[i], style == 1, false);
        bool ok = full_match(g, sb.data, sb.len);
        if (ok != (k == 0)) {
          fprintf(stderr, "%s: %s instance %zu %s: %s\n", f.name, kinds[k], i,
                  ok ? "accepted" : "refused", sb.data);
          fails++;
        }
        poot_strbuf_deinit(&sb);
      }
      if (k == 0)
        (*n_valid)++;
      else
        (*n_invalid)++;
    }
  }
  poot_grammar_destroy(g);
  poot_free(gbnf);
  unload(&f);
  return fails;
}

/* ------------------------------------------------------------ generation */

static uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* One random sentence: each step picks an allowed byte (structural bytes weighted up so that
 * values close) or ends when the grammar may end (probability 1/2). 0 when it ran long. */
static size_t walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint64_t *rng, char *out,
                   size_t cap) {
  uint32_t mask[9];
  size_t n = 0;
  while (n < cap) {
    if (poot_grammar_matcher_fill_mask(m, v, mask, 9)) return 0;
    bool can_end = (mask[8] & 1) != 0;
    if (can_end && (xorshift(rng) & 1)) return n;
    uint32_t weight[256], total = 0;
    for (int b = 0; b < 256; b++) {
      bool ok = (mask[b / 32] >> (b % 32)) & 1;
      uint32_t w = 0;
      if (ok) w = strchr("\"}],", b) && b ? 40 : (b >= 0x20 && b < 0x7f) ? 4 : 1;
      weight[b] = w;
      total += w;
    }
    if (total == 0) return can_end ? n : 0;
    uint32_t r = (uint32_t)(xorshift(rng) % total);
    int b = 0;
    while (r >= weight[b]) r -= weight[b++];
    char byte = (char)b;
    if (poot_grammar_matcher_accept(m, &byte, 1)) return 0;
    out[n++] = byte;
  }
  return 0;
}

static int generate(int want, uint64_t seed, const char *out_path, char **files, size_t nf) {
  char *texts[257];
  size_t lens[257];
  char bytes[256];
  for (int b = 0; b < 256; b++) {
    bytes[b] = (char)b;
    texts[b] = &bytes[b];
    lens[b] = 1;
  }
  texts[256] = "";
  lens[256] = 0;
  int32_t eog = 256;
  poot_grammar_vocab *v = NULL;
  poot_status st = poot_grammar_vocab_create((const char *const *)texts, lens, 257, &eog, 1, &v);
  if (st) return fprintf(stderr, "%s\n", poot_status_message(st)), poot_status_free(st), 1;
  FILE *out = fopen(out_path, "w");
  if (!out) return poot_grammar_vocab_destroy(v), 1;
  int fails = 0;
  char *buf = malloc(1 << 16);
  for (size_t i = 0; i < nf && buf; i++) {
    corpus_file f;
    char *gbnf = NULL;
    poot_grammar *g = NULL;
    if (load(files[i], &f) || compile(&f, &gbnf, &g, NULL)) {
      fails++;
      continue;
    }
    const poot_json *walkable = poot_json_get(f.doc, "walk");
    if (walkable && walkable->type == POOT_JSON_BOOL && !walkable->boolean) {
      poot_grammar_destroy(g);
      poot_free(gbnf);
      unload(&f);
      continue;
    }
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + i + 1;
    uint64_t t0 = poot_time_ns();
    const poot_json *walks = poot_json_get(f.doc, "walks");
    int count = walks && walks->type == POOT_JSON_NUMBER && walks->number < want
                    ? (int)walks->number
                    : want;
    int made = 0;
    for (int tries = 0; made < count && tries < count * 20; tries++) {
      poot_grammar_matcher *m = NULL;
      if (poot_grammar_matcher_create(g, &m)) break;
      size_t n = walk(m, v, &rng, buf, 4096);
      poot_grammar_matcher_destroy(m);
      if (!n) continue;
      poot_strbuf line;
      poot_strbuf_init(&line);
      poot_strbuf_puts(&line, "{\"file\":");
      poot_json_write_string(&line, f.name, strlen(f.name), true);
      poot_strbuf_puts(&line, ",\"text\":");
      poot_json_write_string(&line, buf, n, true);
      poot_strbuf_puts(&line, "}\n");
      fwrite(line.data, 1, line.len, out);
      poot_strbuf_deinit(&line);
      made++;
    }
    if (getenv("JSON_SCHEMA_WALK_TIMES"))
      fprintf(stderr, "%s: %.1f ms\n", f.name, (double)(poot_time_ns() - t0) * 1e-6);
    if (made < count) {
      fprintf(stderr, "%s: made %d of %d strings\n", f.name, made, count);
      fails++;
    }
    poot_grammar_destroy(g);
    poot_free(gbnf);
    unload(&f);
  }
  free(buf);
  fclose(out);
  poot_grammar_vocab_destroy(v);
  return fails != 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--gbnf") == 0) {
    corpus_file f;
    char *gbnf = NULL;
    poot_grammar *g = NULL;
    if (load(argv[2], &f)) return 1;
    int r = compile(&f, &gbnf, &g, NULL);
    if (gbnf) fputs(gbnf, stdout);
    poot_grammar_destroy(g);
    poot_free(gbnf);
    unload(&f);
    return r;
  }
  const char *src = getenv("POOT_SOURCE_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/data/json_schema", src ? src : ".");
  if (argc >= 6 && strcmp(argv[1], "--generate") == 0) snprintf(dir, sizeof dir, "%s", argv[5]);
  if (argc == 3 && strcmp(argv[1], "--check") == 0) snprintf(dir, sizeof dir, "%s", argv[2]);
  size_t n = 0;
  char **files = list_corpus(dir, &n);
  if (!files || n == 0) return fprintf(stderr, "no corpus in %s\n", dir), 1;
  int rc = 0;
  if (argc >= 5 && strcmp(argv[1], "--generate") == 0) {
    rc = generate(atoi(argv[2]), strtoull(argv[3], NULL, 10), argv[4], files, n);
  } else {
    size_t fails = 0, nv = 0, ni = 0;
    figures fig = {0};
    for (size_t i = 0; i < n; i++) fails += (size_t)check_file(files[i], &nv, &ni, &fig);
    printf("json schema corpus: %zu schemas, %zu valid and %zu invalid instances, %zu failures\n",
           n, nv, ni, fails);
    rc = fails != 0;
    if (fig.n)
      printf(
          "per schema: to GBNF %.3f ms average (max %.3f), GBNF %zu bytes average (max %zu), "
          "%zu compiled rules average (max %zu), grammar compile %.3f ms average (max %.3f)\n",
          fig.to_gbnf_ms / (double)fig.n, fig.to_gbnf_max, fig.bytes / fig.n, fig.bytes_max,
          fig.rules / fig.n, fig.rules_max, fig.compile_ms / (double)fig.n, fig.compile_max);
  }
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  return rc;
}
