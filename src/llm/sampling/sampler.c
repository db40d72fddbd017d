/* The reference sampler (include/poot/llm/sampling.h): llama.cpp's default
 * chain on the host, in double precision, every sort tie to the lowest id, and
 * the draw by Philox so a device can draw the same number. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/sampling.h"

typedef struct cand {
  int32_t id;
  float logit;
  double p; /* a probability, or typical-p's shifted score while it sorts */
  uint32_t rank;
} cand;

float poot_sampling_uniform(uint64_t seed, uint64_t step, uint32_t sequence) {
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  const uint32_t counter[4] = {0, 0, (uint32_t)step, sequence};
  uint32_t out[4];
  poot_philox4x32_10(counter, key, out);
  return poot_philox_uniform(out[0]);
}

poot_status poot_sampling_counts_from_history(const int32_t *history, size_t n_history,
                                              int32_t last_n, uint32_t *counts, size_t n_vocab) {
  memset(counts, 0, n_vocab * sizeof *counts);
  size_t take = last_n < 0 ? n_history : (size_t)last_n < n_history ? (size_t)last_n : n_history;
  for (size_t i = n_history - take; i < n_history; i++) {
    if (history[i] < 0 || (size_t)history[i] >= n_vocab) {
      memset(counts, 0, n_vocab * sizeof *counts);
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "sampling history[%zu] = token %d: outside the vocabulary (%zu "
                              "tokens)",
                              i, history[i], n_vocab);
    }
    counts[history[i]]++;
  }
  return POOT_OK_STATUS;
}

/* Higher logit first, then the lower id. */
static int by_logit(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->logit != y->logit) return x->logit > y->logit ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int by_id(const void *a, const void *b) {
  const cand *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Lower shifted score first, then the earlier rank (higher logit, lower id). */
static int by_shift(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->p != y->p) return x->p < y->p ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static void swap(cand *a, cand *b) {
  cand t = *a;
  *a = *b;
  *b = t;
}

/* Quickselect (median of three): afterwards c[0..k) are the k first under
 * by_logit, in no order. by_logit is a total order, so the set is exact. */
static void select_first(cand *c, size_t n, size_t k) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2, last = hi - 1, p = mid;
    if (by_logit(&c[lo], &c[mid]) < 0)
      p = by_logit(&c[mid], &c[last]) < 0 ? mid : by_logit(&c[lo], &c[last]) < 0 ? last : lo;
    else
      p = by_logit(&c[lo], &c[last]) < 0 ? lo : by_logit(&c[mid], &c[last]) < 0 ? last : mid;
    swap(&c[p], &c[last]);
    size_t store = lo;
    for (size_t i = lo; i < last; i++)
      if (by_logit(&c[i], &c[last]) < 0) swap(&c[i], &c[store++]);
    swap(&c[store], &c[last]);
    if (store == k) return;
    if (store > k)
      hi = store;
    else
      lo = store + 1;
  }
}

/* Probabilities of the candidates (any order) at temperature 1. */
static void softmax(cand *c, size_t n) {
  float max = c[0].logit;
  for (size_t i = 1; i < n; i++) max = c[i].logit > max ? c[i].logit : max;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) sum += c[i].p = exp((double)c[i].logit - (double)max);
  for (size_t i = 0; i < n; i++) c[i].p /= sum;
}

/* Logit bias, then penalties (Hugging Face's RepetitionPenaltyLogitsProcessor:
 * divide a positive logit, multiply the rest; OpenAI's presence and frequency:
 * subtract), then drop the banned (-inf). Returns the survivors' count. */
static size_t bias_and_penalize(const poot_sampling_params *p, const poot_sampling_step *s,
                                cand *c) {
  for (uint32_t i = 0; i < s->n_vocab; i++) c[i] = (cand){.id = (int32_t)i, .logit = s->logits[i]};
  for (uint32_t i = 0; i < p->n_bias; i++) c[p->bias[i].token].logit += p->bias[i].bias;
  if ((poot_sampling_params_kind(p) & POOT_SAMPLER_PENALTIES) && s->counts) {
    for (uint32_t i = 0; i < s->n_vocab; i++) {
      uint32_t count = s->counts[i];
      if (count == 0) continue;
      float l = c[i].logit;
      l = l <= 0.0f ? l * p->repeat_penalty : l / p->repeat_penalty;
      c[i].logit = l - ((float)count * p->frequency_penalty + p->presence_penalty);
    }
  }
  size_t n = 0;
  for (uint32_t i = 0; i < s->n_vocab; i++)
    if (c[i].logit > -INFINITY) c[n++] = c[i];
  return n;
}

/* Typical-p (Meister et al.): keep the tokens whose surprisal is nearest the
 * entropy until their mass exceeds p. c is sorted by logit on entry. */
static size_t typical(cand *c, size_t n, float p) {
  softmax(c, n);
  double entropy = 0.0;
  for (size_t i = 0; i < n; i++)
    if (c[i].p > 0.0) entropy -= c[i].p * log(c[i].p);
  double *prob = malloc(n * sizeof *prob);
  if (!prob) return 0;
  for (size_t i = 0; i < n; i++) {
    c[i].rank = (uint32_t)i;
    prob[i] = c[i].p;
    c[i].p = c[i].p > 0.0 ? fabs(-log(c[i].p) - entropy) : INFINITY;
  }
  qsort(c, n, sizeof *c, by_shift);
  double cum = 0.0;
  size_t keep = n;
  for (size_t i = 0; i < n; i++) {
    cum += prob[c[i].rank];
    if (cum > (double)p) {
      keep = i + 1;
      break;
    }
  }
  free(prob);
  qsort(c, keep, sizeof *c, by_logit);
  return keep;
}

/* Top-p: the smallest head (by logit) whose mass reaches p. c is sorted.
 * z > 0: the probabilities are exp(logit - max) / z (the softmax of a larger
 * set the head was taken from), else the softmax of c. */
static size_t top_p(cand *c, size_t n, float p, float max, double z) {
  if (z > 0.0)
    for (size_t i = 0; i < n; i++) c[i].p = exp((double)c[i].logit - (double)max) / z;
  else
    softmax(c, n);
  double cum = 0.0;
  for (size_t i = 0; i < n; i++) {
    cum += c[i].p;
    if (cum >= (double)p) return i + 1;
  }
  return n;
}

/* Min-p: keep logit >= max + log(p), computed in f32 as llama.cpp does. */
static size_t min_p(cand *c, size_t n, float p) {
  const float min_logit = c[0].logit + logf(p);
  size_t keep = 1;
  while (keep < n && c[keep].logit >= min_logit) keep++;
  return keep;
}

/* The tempered draw: inverse CDF over the survivors in id order. */
static int32_t draw(cand *c, size_t n, float temperature, float u) {
  qsort(c, n, sizeof *c, by_id);
  float max = c[0].logit;
  for (size_t i = 1; i < n; i++) max = c[i].logit > max ? c[i].logit : max;
  double total = 0.0;
  for (size_t i = 0; i < n; i++)
    total += c[i].p = exp(((double)c[i].logit - (double)max) / (double)temperature);
  double target = (double)u * total, cum = 0.0;
  for (size_t i = 0; i < n; i++) {
    cum += c[i].p;
    if (cum > target) return c[i].id;
  }
  return c[n - 1].id; /* only when rounding left cum a hair below target */
}

/* The chosen token's and the top-n logprobs, over the raw logits. */
static void logprobs(const poot_sampling_params *p, const poot_sampling_step *s,
                     poot_sampling_result *r) {
  float max = -INFINITY;
  for (uint32_t i = 0; i < s->n_vocab; i++) max = s->logits[i] > max ? s->logits[i] : max;
  double sum = 0.0;
  for (uint32_t i = 0; i < s->n_vocab; i++) sum += exp((double)s->logits[i] - (double)max);
  const double lse = (double)max + log(sum);
  r->logprob = (float)((double)s->logits[r->token] - lse);
  uint32_t want = (uint32_t)p->n_probs < s->n_vocab ? (uint32_t)p->n_probs : s->n_vocab;
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->n_vocab && want > 0; i++) {
    float l = s->logits[i];
    if (n == want && !(l > s->logits[r->top[n - 1].token])) continue;
    uint32_t j = n < want ? n++ : n - 1;
    while (j > 0 && l > s->logits[r->top[j - 1].token]) {
      r->top[j] = r->top[j - 1];
      j--;
    }
    r->top[j].token = (int32_t)i;
  }
  for (uint32_t i = 0; i < n; i++)
    r->top[i].logprob = (float)((double)s->logits[r->top[i].token] - lse);
  r->n_top = n;
}

static poot_status check_step(const poot_sampling_params *p, const poot_sampling_step *s) {
  if (!s->logits || s->n_vocab == 0)
    return poot_status_make(POOT_INVALID_ARGUMENT, "sampling: no logits (n_vocab = %u)",
                            s->n_vocab);
  for (uint32_t i = 0; i < p->n_bias; i++)
    if (p->bias[i].token < 0 || (uint32_t)p->bias[i].token >= s->n_vocab)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "sampling parameter logit_bias[%u] = token %d: outside the "
                              "vocabulary (%u tokens)",
                              i, p->bias[i].token, s->n_vocab);
  return POOT_OK_STATUS;
}

/* The k of top-k in force: top_k, or POOT_SAMPLING_MAX_TOP_K when top_k is
 * off and a sorting sampler (typical-p, top-p) is on — those see at most the
 * capacity's most likely tokens (docs/sampling.md, "Capacities"). 0: no top-k. */
static size_t effective_top_k(const poot_sampling_params *p) {
  if (p->top_k > 0) return (size_t)p->top_k;
  if (p->typical_p < 1.0f || p->top_p < 1.0f) return POOT_SAMPLING_MAX_TOP_K;
  return 0;
}

/* The truncations on the n survivors: afterwards c[0..return) are the
 * survivors sorted by logit; 0 when a workspace allocation failed. */
static size_t truncate_survivors(const poot_sampling_params *p, cand *c, size_t n) {
  size_t k = effective_top_k(p);
  /* Top-p over the whole vocabulary (top-k and typical-p off): its mass is
   * of the softmax of every survivor, though only the capacity's most likely
   * tokens can be kept. */
  float max = -INFINITY;
  double z = 0.0;
  if (p->top_k <= 0 && p->typical_p >= 1.0f && p->top_p < 1.0f) {
    for (size_t i = 0; i < n; i++) max = c[i].logit > max ? c[i].logit : max;
    for (size_t i = 0; i < n; i++) z += exp((double)c[i].logit - (double)max);
  }
  if (k > 0 && k < n) {
    select_first(c, n, k);
    n = k;
  }
  qsort(c, n, sizeof *c, by_logit);
  if (p->typical_p < 1.0f && (n = typical(c, n, p->typical_p)) == 0) return 0;
  if (p->top_p < 1.0f) n = top_p(c, n, p->top_p, max, z);
  if (p->min_p > 0.0f) n = min_p(c, n, p->min_p);
  return n;
}

/* The truncations and the draw on the n survivors; returns the chosen id or
 * -1 when a workspace allocation failed. */
static int32_t truncate_and_draw(const poot_sampling_params *p, const poot_sampling_step *s,
                                 cand *c, size_t n) {
  if ((n = truncate_survivors(p, c, n)) == 0) return -1;
  return draw(c, n, p->temperature, poot_sampling_uniform(s->seed, s->step, s->sequence));
}

/* Bias, penalties and the non-finite check; *out_c the survivors (caller
 * frees). */
static poot_status prepare(const poot_sampling_params *params, const poot_sampling_step *step,
                           cand **out_c, size_t *out_n, bool *out_non_finite) {
  *out_c = NULL;
  *out_n = 0;
  *out_non_finite = false;
  POOT_TRY(check_step(params, step));
  for (uint32_t i = 0; i < step->n_vocab; i++)
    if (isnan(step->logits[i]) || step->logits[i] == INFINITY) {
      *out_non_finite = true;
      return POOT_OK_STATUS;
    }
  cand *c = malloc((size_t)step->n_vocab * sizeof *c);
  if (!c)
    return poot_status_make(POOT_OUT_OF_MEMORY, "sampling: no memory for %u candidates",
                            step->n_vocab);
  size_t n = bias_and_penalize(params, step, c);
  if (n == 0) {
    free(c);
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling: every token of %u has logit -inf after the logit bias "
                            "and penalties; nothing can be drawn",
                            step->n_vocab);
  }
  *out_c = c;
  *out_n = n;
  return POOT_OK_STATUS;
}

poot_status poot_sampling_filter(const poot_sampling_params *params, const poot_sampling_step *step,
                                 float *out_logits) {
  cand *c;
  size_t n;
  bool nf;
  POOT_TRY(prepare(params, step, &c, &n, &nf));
  for (uint32_t i = 0; i < step->n_vocab; i++) out_logits[i] = nf ? NAN : -INFINITY;
  if (nf) return POOT_OK_STATUS;
  if ((n = truncate_survivors(params, c, n)) == 0) {
    free(c);
    return poot_status_make(POOT_OUT_OF_MEMORY, "sampling: no memory for typical-p's scores");
  }
  for (size_t i = 0; i < n; i++) out_logits[c[i].id] = c[i].logit;
  free(c);
  return POOT_OK_STATUS;
}

poot_status poot_sampling_sample(const poot_sampling_params *params, const poot_sampling_step *step,
                                 poot_sampling_result *out) {
  memset(out, 0, sizeof *out);
  out->token = -1;
  cand *c;
  size_t n;
  POOT_TRY(prepare(params, step, &c, &n, &out->non_finite));
  if (out->non_finite) return POOT_OK_STATUS;
  int32_t token;
  if (params->temperature <= 0.0f) {
    token = c[0].id; /* c is in id order: the first maximum is the lowest id */
    float best = c[0].logit;
    for (size_t i = 1; i < n; i++)
      if (c[i].logit > best) best = c[i].logit, token = c[i].id;
  } else {
    token = truncate_and_draw(params, step, c, n);
  }
  free(c);
  if (token < 0)
    return poot_status_make(POOT_OUT_OF_MEMORY, "sampling: no memory for typical-p's scores");
  out->token = token;
  logprobs(params, step, out);
  return POOT_OK_STATUS;
}
