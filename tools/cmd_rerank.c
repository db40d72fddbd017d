/* poot rerank — cross-encoder scores (docs/encoders.md):
 *   poot rerank -m MODEL -q QUERY [--device D] [--batch N] [--truncate] [--json]
 * Documents on stdin, one a line; one score per document out, in input order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/model.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot rerank -m MODEL -q QUERY [--device D] [--batch N] [--truncate] [--json]\n"
    "\n"
    "Reads documents on standard input, one a line (an empty line is an error),\n"
    "and scores each against QUERY with a cross-encoder (a BERT\n"
    "BertForSequenceClassification, or a GGUF 'bert' file with a rank head): the\n"
    "pair [CLS] QUERY [SEP] DOCUMENT [SEP] through the model, the pooler over\n"
    "[CLS], then the classifier; the score is its first logit. Prints one score a\n"
    "line in input order, or with --json one object: {\"query\", \"results\":\n"
    "[{\"index\", \"score\"}, ...]} sorted by score, highest first.\n"
    "\n";

typedef struct scored {
  size_t index;
  float score;
} scored;

static int by_score(const void *a, const void *b) {
  const scored *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static poot_status print(const char *query, const float *v, size_t n, size_t width, bool json) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (!json) {
    for (size_t i = 0; i < n; i++) poot_strbuf_printf(&sb, "%.9g\n", (double)v[i * width]);
  } else {
    scored *s = poot_malloc((n ? n : 1) * sizeof *s);
    if (!s) {
      poot_strbuf_deinit(&sb);
      return poot_status_make(POOT_OUT_OF_MEMORY, "scores");
    }
    for (size_t i = 0; i < n; i++) s[i] = (scored){i, v[i * width]};
    qsort(s, n, sizeof *s, by_score);
    poot_strbuf_puts(&sb, "{\"query\":");
    poot_json_write_string(&sb, query, strlen(query), false);
    poot_strbuf_puts(&sb, ",\"results\":[");
    for (size_t i = 0; i < n; i++)
      poot_strbuf_printf(&sb, "%s{\"index\":%zu,\"score\":%.9g}", i ? "," : "", s[i].index,
                         (double)s[i].score);
    poot_strbuf_puts(&sb, "]}\n");
    poot_free(s);
  }
  poot_status st = poot_strbuf_status(&sb);
  if (!st && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
    st = poot_status_make(POOT_IO, "writing standard output failed");
  poot_strbuf_deinit(&sb);
  return st;
}

static int rerank_main(int argc, char **argv) {
  const char *cmd = "rerank";
  const char *model = NULL, *device = "auto", *query = NULL;
  bool truncate = false, json = false;
  long long batch = 32;
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &model,
       "a cross-encoder: a BertForSequenceClassification\nfolder or a GGUF bert file with a rank "
       "head",
       0, 0},
      {POOT_FLAG_QUERY, &query, NULL, 0, 0},
      {POOT_FLAG_DEVICE, &device, NULL, 0, 0},
      {POOT_FLAG_SEQUENCES, &batch, "pairs per step, a power of two (default 32)", 1, 4096},
      {POOT_FLAG_TRUNCATE, &truncate, NULL, 0, 0},
      {POOT_FLAG_JSON, &json, "one JSON object, results sorted by score", 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (!model) return poot_tool_usage_error(cmd, "-m MODEL is required");
  if (!query || !*query) return poot_tool_usage_error(cmd, "-q QUERY is required");
  if (batch & (batch - 1))
    return poot_tool_usage_error(cmd, "--batch %lld is not a power of two", batch);
  poot_driver_embed_options o = poot_driver_embed_options_default();
  o.scores = true;
  o.max_batch = (size_t)batch;
  char *text = NULL, **lines = NULL;
  size_t n = 0;
  poot_status st = poot_tool_read_lines(&text, &lines, &n);
  poot_runtime *rt = NULL;
  if (!st) st = poot_tool_open_encoder(model, device, &rt);
  poot_driver_sequence *seqs = NULL;
  float *out = NULL;
  size_t width = 0;
  if (!st) {
    poot_driver *d = poot_runtime_driver(rt);
    width = poot_driver_embed_width(d, &o);
    if (width == 0)
      st = poot_status_make(POOT_UNSUPPORTED,
                            "'%s' has no classification head: it embeds, it cannot rerank (use "
                            "poot embed)",
                            model);
  }
  if (!st) st = poot_tool_sequences(poot_runtime_model(rt), query, lines, n, truncate, &seqs);
  if (!st) {
    out = poot_malloc((n ? n : 1) * width * sizeof *out);
    if (!out) st = poot_status_make(POOT_OUT_OF_MEMORY, "scores");
  }
  if (!st) st = poot_driver_embed(poot_runtime_driver(rt), seqs, n, &o, out);
  if (!st) st = print(query, out, n, width, json);
  poot_tool_sequences_free(seqs, n);
  poot_free(out);
  poot_runtime_destroy(rt);
  poot_free(lines);
  poot_free(text);
  if (!st && fflush(stdout) != 0) st = poot_status_make(POOT_IO, "writing standard output failed");
  return st ? poot_tool_fail(cmd, st) : POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_rerank = {"rerank", "cross-encoder scores of documents",
                                                rerank_main};
