/* libFuzzer target: the --logit-bias and stop-list parsers, the stop matcher
 * and the reference sampler never crash or leak, and keep their contracts.
 * Input: line 1 is space-separated --logit-bias values, line 2 a stop list,
 * the rest streamed text (split at 0x01 bytes), also read as logits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/sampling.h"

static char *line(const char **p, const char *end) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  const char *stop = nl ? nl : end;
  size_t n = (size_t)(stop - *p);
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, *p, n);
  s[n] = '\0';
  *p = nl ? nl + 1 : end;
  return s;
}

static void parse_biases(poot_sampling_params *p, char *text) {
  char *save = NULL;
  for (char *tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    uint32_t before = p->n_bias;
    poot_status st = poot_sampling_parse_logit_bias(p, tok);
    if (st && p->n_bias != before) __builtin_trap();
    poot_status_free(st);
  }
}

/* What comes out is a prefix of the text; all of it unless a stop matched,
 * and then a stop string follows. */
static void stream(const poot_sampling_params *p, const char *text, size_t len) {
  poot_stop_matcher *m = NULL;
  if (poot_status_consume(poot_stop_matcher_create(p, &m)) != POOT_OK) return;
  char *out = malloc(len + 1);
  size_t n = 0, at = 0;
  poot_stop_output o = {0};
  while (out && at < len) {
    const char *cut = memchr(text + at, 1, len - at);
    size_t k = cut ? (size_t)(cut - (text + at)) + 1 : len - at;
    if (poot_status_consume(poot_stop_matcher_feed(m, text + at, k, &o)) != POOT_OK) break;
    if (n + o.len > len || memcmp(text + n, o.text, o.len) != 0) __builtin_trap();
    memcpy(out + n, o.text, o.len);
    n += o.len;
    at += k;
  }
  if (out && at == len) {
    poot_stop_matcher_finish(m, &o);
    if (n + o.len > len || memcmp(text + n, o.text, o.len) != 0) __builtin_trap();
    n += o.len;
    if (!o.stopped && n != len) __builtin_trap();
    if (o.stopped) {
      const poot_sampling_stop *s = &p->stops[o.stop_index];
      if (n + s->len > len || memcmp(text + n, s->text, s->len) != 0) __builtin_trap();
    }
  }
  free(out);
  poot_stop_matcher_destroy(m);
}

static void sample(poot_sampling_params *p, const unsigned char *bytes, size_t len) {
  if (len == 0 || len > 4096) return;
  float *logits = malloc(len * sizeof *logits);
  if (!logits) return;
  for (size_t i = 0; i < len; i++) logits[i] = ((float)bytes[i] - 128.0f) / 8.0f;
  p->temperature = (float)(bytes[0] % 4) / 2.0f;
  p->top_k = bytes[len - 1] % 8;
  p->typical_p = bytes[0] & 0x10 ? 0.7f : 1.0f;
  p->repeat_penalty = 1.3f;
  p->n_probs = bytes[len - 1] % 21;
  uint32_t *counts = calloc(len, sizeof *counts);
  poot_sampling_step st = {.logits = logits, .n_vocab = (uint32_t)len, .counts = counts, .seed = 3};
  poot_sampling_result r;
  poot_status vs = poot_sampling_params_validate(p, (uint32_t)len);
  if (!vs && counts) {
    poot_status s = poot_sampling_sample(p, &st, &r);
    if (!s && (r.token < 0 || (uint32_t)r.token >= len || r.n_top > (uint32_t)p->n_probs))
      __builtin_trap();
    poot_status_free(s);
  }
  poot_status_free(vs);
  free(counts);
  free(logits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data, *end = p + size;
  poot_sampling_params params;
  poot_sampling_params_init(&params);
  char *biases = line(&p, end), *stops = line(&p, end);
  if (biases && stops) {
    parse_biases(&params, biases);
    uint32_t before = params.n_stops;
    poot_status st = poot_sampling_parse_stop_list(&params, stops);
    if (st && params.n_stops != before) __builtin_trap();
    poot_status_free(st);
    /* What the parsers accept validates. */
    if (poot_status_consume(poot_sampling_params_validate(&params, 0)) != POOT_OK) __builtin_trap();
    stream(&params, p, (size_t)(end - p));
    sample(&params, (const unsigned char *)p, (size_t)(end - p));
  }
  free(biases);
  free(stops);
  return 0;
}
