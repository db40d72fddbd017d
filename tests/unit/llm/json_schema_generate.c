/* Generations of the demo model under JSON Schema grammars, for
 * json_schema_generate.py (which validates each with Python's jsonschema):
 *
 *   llm_json_schema_generate DEVICE DIR OUT.jsonl [EVERY]
 *
 * For every .json file in DIR (a schema; sorted by name) the schema is compiled to
 * compact GBNF (poot_json_schema_to_gbnf) and the demo model generates up to
 * 160 tokens under it on
 * DEVICE greedily, and every EVERY-th schema (default 4) also sampled (temperature 0.9,
 * seed 1), from the prompt "Once upon a time"; each generation is one line
 * of OUT.jsonl:
 * {"file", "mode", "reason", "text"}. Exits 77 (SKIP) when the device is
 * absent. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/llm/driver.h"
#include "poot/llm/grammar.h"
#include "poot_test.h"

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put_json_string(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static const char *reason_name(poot_driver_stop_reason r) {
  switch (r) {
    case POOT_DRIVER_STOP_GRAMMAR:
      return "grammar";
    case POOT_DRIVER_STOP_ID:
      return "stop_id";
    case POOT_DRIVER_STOP_STRING:
      return "stop_string";
    case POOT_DRIVER_STOP_CAPACITY:
      return "capacity";
    default:
      return "length";
  }
}

static int run_failed(poot_status st, const char *what) {
  fprintf(stderr, "FAIL %s: %s\n", what, poot_status_message(st));
  poot_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  int every = argc == 5 ? atoi(argv[4]) : 4;
  if ((argc != 4 && argc != 5) || every < 1) {
    fprintf(stderr, "usage: %s DEVICE DIR OUT.jsonl [EVERY]\n", argv[0]);
    return 2;
  }
  poot_device *dev = NULL;
  poot_status st = poot_device_open(argv[1], NULL, &dev);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", argv[1], poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/models/poot-demo.gguf", poot_test_source_dir());
  poot_model *model = NULL;
  poot_executor *ex = NULL;
  poot_driver *drv = NULL;
  if ((st = poot_model_open(path, NULL, &model))) return run_failed(st, "model");
  if ((st = poot_engine_create(dev, &ex))) return run_failed(st, "engine");
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 320;
  if ((st = poot_driver_create(ex, model, &dopt, &drv))) return run_failed(st, "driver");
  DIR *dir = opendir(argv[2]);
  if (!dir) {
    fprintf(stderr, "FAIL: cannot open %s\n", argv[2]);
    return 1;
  }
  char *names[1024];
  size_t n = 0;
  for (struct dirent *e; (e = readdir(dir)) && n < 1024;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, n, sizeof *names, by_name);
  FILE *out = fopen(argv[3], "w");
  if (!out) {
    fprintf(stderr, "FAIL: cannot write %s\n", argv[3]);
    return 1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    snprintf(path, sizeof path, "%s/%s", argv[2], names[i]);
    /* compact: no white space between tokens (this model loves new lines; the
     * white-space rule is tested on its own in json_schema_test) */
    poot_json_schema_options jo = poot_json_schema_options_default();
    jo.compact = true;
    char *schema = NULL, *gbnf = NULL;
    size_t len = 0, glen = 0;
    poot_grammar *g = NULL;
    if ((st = poot_file_read_all(path, &schema, &len)) ||
        (st = poot_json_schema_to_gbnf(schema, len, &jo, &gbnf, &glen)) ||
        (st = poot_grammar_compile(gbnf, glen, NULL, &g))) {
      rc = run_failed(st, names[i]);
    }
    for (int mode = 0; mode < (i % (size_t)every == 0 ? 2 : 1) && rc == 0; mode++) {
      poot_sampling_params p;
      poot_sampling_params_init(&p);
      p.temperature = mode == 0 ? 0.0f : 0.9f;
      p.top_k = 0;
      p.top_p = 1.0f;
      p.min_p = 0.0f;
      p.seed = (uint64_t)mode;
      poot_driver_generate_options o = poot_driver_generate_options_default();
      o.max_new_tokens = 160;
      o.sampling = &p;
      o.grammar = g;
      poot_driver_generate_result r;
      if ((st = poot_driver_generate(drv, "Once upon a time", 16, &o, NULL, NULL, &r))) {
        rc = run_failed(st, names[i]);
      } else {
        fprintf(out, "{\"file\":\"%s\",\"mode\":\"%s\",\"reason\":\"%s\",\"text\":", names[i],
                mode == 0 ? "greedy" : "seed=1", reason_name(r.reason));
        put_json_string(out, r.text, r.text_len);
        fputs("}\n", out);
      }
      poot_driver_generate_result_deinit(&r);
    }
    poot_grammar_destroy(g);
    poot_free(gbnf);
    poot_free(schema);
    free(names[i]);
  }
  fclose(out);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(model);
  return rc;
}
