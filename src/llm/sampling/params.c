/* Sampling parameters: defaults, validation, the kind bitmask, the seed and
 * the CLI parsers (include/poot/llm/sampling.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "poot/llm/sampling.h"

void poot_sampling_params_init(poot_sampling_params *params) {
  memset(params, 0, sizeof *params);
  params->temperature = 0.8f;
  params->top_k = 40;
  params->top_p = 0.95f;
  params->min_p = 0.05f;
  params->typical_p = 1.0f;
  params->repeat_penalty = 1.0f;
  params->repeat_last_n = 64;
  params->presence_penalty = 0.0f;
  params->frequency_penalty = 0.0f;
  params->seed = POOT_SAMPLING_SEED_RANDOM;
  params->n_probs = 0;
  params->max_tokens = -1;
  params->ignore_eos = false;
}

static poot_status bad(const char *field, const char *fmt_value, double v, const char *why) {
  char value[64];
  snprintf(value, sizeof value, fmt_value, v);
  return poot_status_make(POOT_INVALID_ARGUMENT, "sampling parameter %s = %s: %s", field, value,
                          why);
}

/* The scalar fields: ranges as llama.cpp documents them, and finite. */
static poot_status validate_scalars(const poot_sampling_params *p) {
  if (!(p->temperature >= 0.0f) || !isfinite(p->temperature))
    return bad("temperature", "%g", p->temperature, "must be finite and >= 0 (0 = greedy)");
  if (p->top_k < 0) return bad("top_k", "%.0f", p->top_k, "must be >= 0 (0 = off)");
  if (p->top_k > POOT_SAMPLING_MAX_TOP_K)
    return bad("top_k", "%.0f", p->top_k,
               "exceeds the capacity "
               "1024"
               " (POOT_SAMPLING_MAX_TOP_K); use 0 for no limit");
  if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
    return bad("top_p", "%g", p->top_p, "must be in (0, 1] (1 = off)");
  if (!(p->min_p >= 0.0f && p->min_p <= 1.0f))
    return bad("min_p", "%g", p->min_p, "must be in [0, 1] (0 = off)");
  if (!(p->typical_p > 0.0f && p->typical_p <= 1.0f))
    return bad("typical_p", "%g", p->typical_p, "must be in (0, 1] (1 = off)");
  if (!(p->repeat_penalty > 0.0f) || !isfinite(p->repeat_penalty))
    return bad("repeat_penalty", "%g", p->repeat_penalty, "must be finite and > 0 (1 = off)");
  if (p->repeat_last_n < -1)
    return bad("repeat_last_n", "%.0f", p->repeat_last_n, "must be >= -1 (-1 = all, 0 = off)");
  if (!isfinite(p->presence_penalty))
    return bad("presence_penalty", "%g", p->presence_penalty, "must be finite");
  if (!isfinite(p->frequency_penalty))
    return bad("frequency_penalty", "%g", p->frequency_penalty, "must be finite");
  if (p->n_probs < 0 || p->n_probs > POOT_SAMPLING_MAX_PROBS)
    return bad("n_probs", "%.0f", p->n_probs, "must be in [0, 20] (POOT_SAMPLING_MAX_PROBS)");
  if (p->max_tokens < -1)
    return bad("max_tokens", "%.0f", p->max_tokens, "must be >= -1 (-1 = no limit)");
  return POOT_OK_STATUS;
}

static poot_status check_id(const char *field, uint32_t i, int32_t id, uint32_t n_vocab) {
  if (id < 0 || (n_vocab > 0 && (uint32_t)id >= n_vocab))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling parameter %s[%u] = token %d: outside the vocabulary "
                            "(%u tokens)",
                            field, i, id, n_vocab);
  return POOT_OK_STATUS;
}

/* The lists: lengths within their capacities, ids in the vocabulary. */
static poot_status validate_lists(const poot_sampling_params *p, uint32_t n_vocab) {
  if (p->n_bias > POOT_SAMPLING_MAX_BIAS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling parameter logit_bias has %u entries: the capacity is %d "
                            "(POOT_SAMPLING_MAX_BIAS)",
                            p->n_bias, POOT_SAMPLING_MAX_BIAS);
  for (uint32_t i = 0; i < p->n_bias; i++) {
    POOT_TRY(check_id("logit_bias", i, p->bias[i].token, n_vocab));
    float b = p->bias[i].bias;
    if (isnan(b) || b == INFINITY)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "sampling parameter logit_bias[%u] = %g for token %d: must be a "
                              "number or -inf",
                              i, (double)b, p->bias[i].token);
  }
  if (p->n_stops > POOT_SAMPLING_MAX_STOPS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling parameter stop has %u strings: the capacity is %d "
                            "(POOT_SAMPLING_MAX_STOPS)",
                            p->n_stops, POOT_SAMPLING_MAX_STOPS);
  for (uint32_t i = 0; i < p->n_stops; i++) {
    uint32_t len = p->stops[i].len;
    if (len == 0 || len > POOT_SAMPLING_MAX_STOP_LEN || memchr(p->stops[i].text, 0, len))
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "sampling parameter stop[%u] has %u bytes: must be 1..%d bytes "
                              "without NUL",
                              i, len, POOT_SAMPLING_MAX_STOP_LEN);
  }
  if (p->n_stop_ids > POOT_SAMPLING_MAX_STOP_IDS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling parameter stop_ids has %u ids: the capacity is %d "
                            "(POOT_SAMPLING_MAX_STOP_IDS)",
                            p->n_stop_ids, POOT_SAMPLING_MAX_STOP_IDS);
  for (uint32_t i = 0; i < p->n_stop_ids; i++)
    POOT_TRY(check_id("stop_ids", i, p->stop_ids[i], n_vocab));
  return POOT_OK_STATUS;
}

poot_status poot_sampling_params_validate(const poot_sampling_params *params, uint32_t n_vocab) {
  if (!params)
    return poot_status_make(POOT_INVALID_ARGUMENT, "sampling parameters: params is NULL");
  POOT_TRY(validate_scalars(params));
  return validate_lists(params, n_vocab);
}

uint32_t poot_sampling_params_kind(const poot_sampling_params *p) {
  uint32_t kind = 0;
  if (p->n_bias > 0) kind |= POOT_SAMPLER_LOGIT_BIAS;
  if (p->repeat_last_n != 0 &&
      (p->repeat_penalty != 1.0f || p->presence_penalty != 0.0f || p->frequency_penalty != 0.0f))
    kind |= POOT_SAMPLER_PENALTIES;
  if (p->n_probs > 0) kind |= POOT_SAMPLER_LOGPROBS;
  if (p->temperature > 0.0f) {
    kind |= POOT_SAMPLER_DRAW;
    if (p->top_k > 0) kind |= POOT_SAMPLER_TOP_K;
    if (p->typical_p < 1.0f) kind |= POOT_SAMPLER_TYPICAL_P;
    if (p->top_p < 1.0f) kind |= POOT_SAMPLER_TOP_P;
    if (p->min_p > 0.0f) kind |= POOT_SAMPLER_MIN_P;
  }
  return kind;
}

static bool read_urandom(void *buf, size_t len) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t got = read(fd, buf, len);
  close(fd);
  return got == (ssize_t)len;
}

poot_status poot_sampling_seed_resolve(const poot_sampling_params *params, uint64_t *out_seed) {
  *out_seed = 0;
  if (params->seed != POOT_SAMPLING_SEED_RANDOM) {
    *out_seed = params->seed;
    return POOT_OK_STATUS;
  }
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed && !read_urandom(&seed, sizeof seed))
    return poot_status_make(POOT_IO,
                            "sampling seed: no entropy source answered (getrandom and "
                            "/dev/urandom failed: %s); give a seed",
                            strerror(errno));
  /* UINT64_MAX means "random"; a resolved seed must be repeatable as given. */
  *out_seed = seed == POOT_SAMPLING_SEED_RANDOM ? 0 : seed;
  return POOT_OK_STATUS;
}

poot_status poot_sampling_parse_logit_bias(poot_sampling_params *params, const char *text) {
  const char *s = text;
  char *end = NULL;
  if (*s < '0' || *s > '9') goto fail;
  errno = 0;
  long long id = strtoll(s, &end, 10);
  if (errno || id > INT32_MAX || (*end != '+' && *end != '-')) goto fail;
  char sign = *end++;
  if (*end == '\0' || *end == '+' || *end == '-' || isspace((unsigned char)*end)) goto fail;
  const char *num = end;
  float bias = strtof(num, &end);
  if (end == num || *end != '\0' || isnan(bias)) goto fail;
  if (sign == '-') bias = -bias;
  if (bias == INFINITY) goto fail;
  if (params->n_bias >= POOT_SAMPLING_MAX_BIAS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "--logit-bias %s: the list is full (%d entries, "
                            "POOT_SAMPLING_MAX_BIAS)",
                            text, POOT_SAMPLING_MAX_BIAS);
  params->bias[params->n_bias++] = (poot_sampling_bias){.token = (int32_t)id, .bias = bias};
  return POOT_OK_STATUS;
fail:
  return poot_status_make(POOT_INVALID_ARGUMENT,
                          "--logit-bias '%s': expected TOKEN_ID(+|-)BIAS, e.g. 15043+1, "
                          "15043-0.5 or 2-inf",
                          text);
}

poot_status poot_sampling_add_stop(poot_sampling_params *params, const char *text, size_t len) {
  if (len == 0 || len > POOT_SAMPLING_MAX_STOP_LEN || memchr(text, 0, len))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "stop string of %zu bytes: must be 1..%d bytes without NUL", len,
                            POOT_SAMPLING_MAX_STOP_LEN);
  if (params->n_stops >= POOT_SAMPLING_MAX_STOPS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "stop strings: the list is full (%d, POOT_SAMPLING_MAX_STOPS)",
                            POOT_SAMPLING_MAX_STOPS);
  poot_sampling_stop *stop = &params->stops[params->n_stops++];
  memcpy(stop->text, text, len);
  stop->text[len] = '\0';
  stop->len = (uint32_t)len;
  return POOT_OK_STATUS;
}

/* One unescaped entry of a stop list into buf; *pos moves past its comma. */
static poot_status stop_entry(const char *text, size_t *pos, char *buf, size_t *out_len,
                              bool *out_more) {
  size_t n = 0, i = *pos;
  for (; text[i] && text[i] != ','; i++) {
    char c = text[i];
    if (c == '\\') {
      char e = text[++i];
      if (e == '\0')
        return poot_status_make(POOT_INVALID_ARGUMENT, "stop list '%s': ends inside an escape",
                                text);
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      if (e != 'n' && e != 't' && e != 'r' && e != '\\' && e != ',')
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "stop list '%s': byte %zu: unknown escape (use \\, \\\\ \\n \\t "
                                "\\r)",
                                text, i);
    }
    if (n >= POOT_SAMPLING_MAX_STOP_LEN)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "stop list '%s': an entry is longer than %d bytes", text,
                              POOT_SAMPLING_MAX_STOP_LEN);
    buf[n++] = c;
  }
  if (n == 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "stop list '%s': byte %zu: empty entry (escape a comma as \\,)", text,
                            i);
  *out_more = text[i] == ',';
  *pos = text[i] ? i + 1 : i;
  *out_len = n;
  return POOT_OK_STATUS;
}

poot_status poot_sampling_parse_stop_list(poot_sampling_params *params, const char *text) {
  uint32_t n_before = params->n_stops;
  size_t pos = 0;
  char buf[POOT_SAMPLING_MAX_STOP_LEN];
  poot_status st = POOT_OK_STATUS;
  bool more = true;
  while (!st && more) {
    size_t len = 0;
    st = stop_entry(text, &pos, buf, &len, &more);
    if (!st) st = poot_sampling_add_stop(params, buf, len);
  }
  if (st) params->n_stops = n_before;
  return st;
}

poot_status poot_sampling_params_ban_ids(poot_sampling_params *params, const int32_t *ids,
                                         size_t n_ids) {
  uint32_t n_before = params->n_bias;
  for (size_t i = 0; i < n_ids; i++) {
    bool present = false;
    for (uint32_t j = 0; j < params->n_bias && !present; j++)
      present = params->bias[j].token == ids[i] && params->bias[j].bias == -INFINITY;
    if (present) continue;
    if (params->n_bias >= POOT_SAMPLING_MAX_BIAS) {
      params->n_bias = n_before;
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "ignore_eos: no room to ban token %d, the logit-bias list is full "
                              "(%d entries, POOT_SAMPLING_MAX_BIAS)",
                              ids[i], POOT_SAMPLING_MAX_BIAS);
    }
    params->bias[params->n_bias++] = (poot_sampling_bias){.token = ids[i], .bias = -INFINITY};
  }
  return POOT_OK_STATUS;
}
