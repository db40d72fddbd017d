/* The sampling flags of `poot generate` and `poot chat` (tool.h): llama.cpp's
 * spellings and defaults, turned into a poot_sampling_params and a compiled
 * grammar. Values are checked by poot_sampling_params_validate, whose message
 * names the field. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

void poot_tool_sampling_init(poot_tool_sampling *s) {
  memset(s, 0, sizeof *s);
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  s->temp = p.temperature;
  s->top_k = p.top_k;
  s->top_p = p.top_p;
  s->min_p = p.min_p;
  s->typical = p.typical_p;
  s->repeat_penalty = p.repeat_penalty;
  s->repeat_last_n = p.repeat_last_n;
  s->presence_penalty = p.presence_penalty;
  s->frequency_penalty = p.frequency_penalty;
  s->seed = -1;
  s->n_probs = 0;
  s->logit_bias = (poot_tool_list){s->bias_items, 0, POOT_SAMPLING_MAX_BIAS};
  s->stop = (poot_tool_list){s->stop_items, 0, POOT_SAMPLING_MAX_STOPS};
}

void poot_tool_sampling_options(poot_tool_sampling *s, poot_tool_option *out) {
  const poot_tool_option o[POOT_TOOL_SAMPLING_OPTIONS] = {
      {POOT_FLAG_TEMP, &s->temp, NULL, 0, 0},
      {POOT_FLAG_TOP_K, &s->top_k, NULL, 0, INT32_MAX},
      {POOT_FLAG_TOP_P, &s->top_p, NULL, 0, 0},
      {POOT_FLAG_MIN_P, &s->min_p, NULL, 0, 0},
      {POOT_FLAG_TYPICAL, &s->typical, NULL, 0, 0},
      {POOT_FLAG_REPEAT_PENALTY, &s->repeat_penalty, NULL, 0, 0},
      {POOT_FLAG_REPEAT_LAST_N, &s->repeat_last_n, NULL, -1, INT32_MAX},
      {POOT_FLAG_PRESENCE_PENALTY, &s->presence_penalty, NULL, 0, 0},
      {POOT_FLAG_FREQUENCY_PENALTY, &s->frequency_penalty, NULL, 0, 0},
      {POOT_FLAG_SEED, &s->seed, NULL, -1, LLONG_MAX},
      {POOT_FLAG_LOGIT_BIAS, &s->logit_bias, NULL, 0, 0},
      {POOT_FLAG_GRAMMAR, &s->grammar, NULL, 0, 0},
      {POOT_FLAG_GRAMMAR_FILE, &s->grammar_file, NULL, 0, 0},
      {POOT_FLAG_JSON_SCHEMA, &s->json_schema, NULL, 0, 0},
      {POOT_FLAG_JSON_SCHEMA_FILE, &s->json_schema_file, NULL, 0, 0},
      {POOT_FLAG_STOP, &s->stop, NULL, 0, 0},
      {POOT_FLAG_N_PROBS, &s->n_probs, NULL, 0, POOT_SAMPLING_MAX_PROBS},
      {POOT_FLAG_IGNORE_EOS, &s->ignore_eos,
       "do not stop at the model's end-of-generation ids\n(with sampling they are never drawn)", 0,
       0},
  };
  memcpy(out, o, sizeof o);
}

/* A usage error from a status (its message names the field), freed. */
static int usage_status(const char *cmd, const char *flag, poot_status st) {
  int rc = flag ? poot_tool_usage_error(cmd, "%s: %s", flag, poot_status_message(st))
                : poot_tool_usage_error(cmd, "%s", poot_status_message(st));
  poot_status_free(st);
  return rc;
}

int poot_tool_sampling_params(const char *cmd, const poot_tool_sampling *s, uint32_t n_vocab,
                              poot_sampling_params *p) {
  poot_sampling_params_init(p);
  p->temperature = (float)s->temp;
  p->top_k = (int32_t)s->top_k;
  p->top_p = (float)s->top_p;
  p->min_p = (float)s->min_p;
  p->typical_p = (float)s->typical;
  p->repeat_penalty = (float)s->repeat_penalty;
  p->repeat_last_n = (int32_t)s->repeat_last_n;
  p->presence_penalty = (float)s->presence_penalty;
  p->frequency_penalty = (float)s->frequency_penalty;
  p->seed = s->seed < 0 ? POOT_SAMPLING_SEED_RANDOM : (uint64_t)s->seed;
  p->n_probs = (int32_t)s->n_probs;
  p->ignore_eos = s->ignore_eos;
  for (size_t i = 0; i < s->logit_bias.n; i++) {
    poot_status st = poot_sampling_parse_logit_bias(p, s->logit_bias.items[i]);
    if (st) return usage_status(cmd, NULL, st);
  }
  for (size_t i = 0; i < s->stop.n; i++) {
    poot_status st = poot_sampling_parse_stop_list(p, s->stop.items[i]);
    if (st) return usage_status(cmd, "--stop", st);
  }
  poot_status st = poot_sampling_params_validate(p, n_vocab);
  if (st) return usage_status(cmd, NULL, st);
  return -1;
}

/* The text of a flag's value or of the file it names (*owned: to free). */
static int flag_text(const char *cmd, const char *value, const char *file, const char *file_flag,
                     const char **text, size_t *len, char **owned) {
  *owned = NULL;
  if (file) {
    poot_status st = poot_file_read_all(file, owned, len);
    if (st) return poot_tool_fail(cmd, poot_status_annotate(st, "%s", file_flag));
    *text = *owned;
  } else {
    *text = value;
    *len = strlen(value);
  }
  return -1;
}

int poot_tool_sampling_grammar(const char *cmd, const poot_tool_sampling *s, poot_grammar **out) {
  *out = NULL;
  const bool schema = s->json_schema || s->json_schema_file;
  const bool gbnf = s->grammar || s->grammar_file;
  if ((s->grammar && s->grammar_file) || (s->json_schema && s->json_schema_file) ||
      (schema && gbnf))
    return poot_tool_usage_error(cmd,
                                 "give one of --grammar, --grammar-file, --json-schema and "
                                 "--json-schema-file, not both");
  if (!schema && !gbnf) return -1;
  const char *text = NULL;
  size_t len = 0;
  char *owned = NULL, *compiled = NULL;
  int rc = schema
               ? flag_text(cmd, s->json_schema, s->json_schema_file, "--json-schema-file", &text,
                           &len, &owned)
               : flag_text(cmd, s->grammar, s->grammar_file, "--grammar-file", &text, &len, &owned);
  if (rc >= 0) return rc;
  const char *what = schema ? (s->json_schema_file ? s->json_schema_file : "--json-schema")
                            : (s->grammar_file ? s->grammar_file : "--grammar");
  poot_status st = NULL;
  if (schema) {
    /* the schema compiled to GBNF, then the grammar as any other */
    st = poot_json_schema_to_gbnf(text, len, NULL, &compiled, &len);
    text = compiled;
  }
  if (!st) st = poot_grammar_compile(text, len, NULL, out);
  poot_free(compiled);
  poot_free(owned);
  if (st) return usage_status(cmd, what, st);
  return -1;
}

poot_status poot_tool_sampling_seed(const char *cmd, poot_sampling_params *p, bool quiet) {
  if (p->seed != POOT_SAMPLING_SEED_RANDOM) return NULL;
  uint64_t seed = 0;
  POOT_TRY(poot_sampling_seed_resolve(p, &seed));
  /* 63 bits, so that --seed (a signed flag value) can give it back. */
  p->seed = seed & (uint64_t)LLONG_MAX;
  if (!quiet && p->temperature > 0)
    fprintf(stderr, "poot %s: seed %llu (--seed %llu repeats this run)\n", cmd,
            (unsigned long long)p->seed, (unsigned long long)p->seed);
  return NULL;
}
