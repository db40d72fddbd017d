/* poot/llm/sampling.h — sampling parameters, the reference sampler and the
 * stop-string matcher (DESIGN §7, issue 15).
 *
 * The parameters are one plain struct with fixed capacities (no allocation,
 * copyable by value), so a device entry can bind them as slots. The reference
 * sampler is the host oracle every device suffix is checked against: it applies
 * llama.cpp's default chain and draws with poot's Philox under the counter
 * layout documented at poot_sampling_uniform(). See docs/sampling.md. */
#ifndef POOT_LLM_SAMPLING_H
#define POOT_LLM_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capacities. Past one of these, validation says INVALID_ARGUMENT. */
#define POOT_SAMPLING_MAX_TOP_K 1024         /* largest top_k a device must sort */
#define POOT_SAMPLING_MAX_BIAS 300           /* logit-bias entries (OpenAI's limit) */
#define POOT_SAMPLING_MAX_PROBS 20           /* top-n logprobs */
#define POOT_SAMPLING_MAX_STOPS 16           /* stop strings */
#define POOT_SAMPLING_MAX_STOP_LEN 127       /* bytes of one stop string */
#define POOT_SAMPLING_MAX_STOP_IDS 16        /* stop token ids */
#define POOT_SAMPLING_SEED_RANDOM UINT64_MAX /* "no seed given": see seed_resolve */

typedef struct poot_sampling_bias {
  int32_t token;
  float bias; /* added to the logit; -INFINITY bans the token */
} poot_sampling_bias;

typedef struct poot_sampling_stop {
  uint32_t len;
  char text[POOT_SAMPLING_MAX_STOP_LEN + 1]; /* NUL-terminated, len bytes */
} poot_sampling_stop;

/* Every sampler's parameters. "off" values are llama.cpp's. */
typedef struct poot_sampling_params {
  float temperature;       /* 0 = greedy (argmax, ties to the lowest id) */
  int32_t top_k;           /* 0 = off (whole vocabulary) */
  float top_p;             /* 1 = off; in (0, 1] */
  float min_p;             /* 0 = off; in [0, 1] */
  float typical_p;         /* 1 = off; in (0, 1] */
  float repeat_penalty;    /* 1 = off; > 0 */
  int32_t repeat_last_n;   /* tokens of history penalized: 0 = off, -1 = all */
  float presence_penalty;  /* 0 = off */
  float frequency_penalty; /* 0 = off */
  uint64_t seed;           /* POOT_SAMPLING_SEED_RANDOM = pick one */
  int32_t n_probs;         /* top-n logprobs returned, 0..POOT_SAMPLING_MAX_PROBS */
  int32_t max_tokens;      /* -1 = until a stop or the context's end */
  bool ignore_eos;         /* end-of-generation ids neither stop nor get drawn */
  uint32_t n_bias;
  poot_sampling_bias bias[POOT_SAMPLING_MAX_BIAS];
  uint32_t n_stops;
  poot_sampling_stop stops[POOT_SAMPLING_MAX_STOPS];
  uint32_t n_stop_ids;
  int32_t stop_ids[POOT_SAMPLING_MAX_STOP_IDS];
} poot_sampling_params;

/* llama.cpp's defaults (common/common.h, common_params_sampling): temp 0.8,
 * top_k 40, top_p 0.95, min_p 0.05, typical 1.0, repeat 1.0 over the last 64,
 * presence 0, frequency 0, a random seed, no logprobs, no limit, no lists. */
void poot_sampling_params_init(poot_sampling_params *params);

/* Checks every field. n_vocab > 0 also checks bias and stop ids against the
 * vocabulary (0 skips that check). Returns INVALID_ARGUMENT naming the field
 * ("top_p = 1.5: must be in (0, 1]"); OK otherwise. Pure. */
POOT_MUST_USE poot_status poot_sampling_params_validate(const poot_sampling_params *params,
                                                        uint32_t n_vocab);

/* Which samplers are on: the key a device entry is chosen by. Only whether a
 * sampler is on counts, never its value (temperature 0.7 and 0.8 have one
 * kind). With temperature 0 the truncations cannot change the argmax, so their
 * bits are left off. Host-side features (stops, max_tokens, seed) are not in it. */
typedef enum poot_sampler_bits {
  POOT_SAMPLER_LOGIT_BIAS = 1u << 0,
  POOT_SAMPLER_PENALTIES = 1u << 1,
  POOT_SAMPLER_TOP_K = 1u << 2,
  POOT_SAMPLER_TYPICAL_P = 1u << 3,
  POOT_SAMPLER_TOP_P = 1u << 4,
  POOT_SAMPLER_MIN_P = 1u << 5,
  POOT_SAMPLER_DRAW = 1u << 6, /* temperature > 0: a tempered random draw */
  POOT_SAMPLER_LOGPROBS = 1u << 7,
  /* A vocabulary mask (a grammar) before everything else: set by the caller
   * that has a grammar, never by poot_sampling_params_kind. */
  POOT_SAMPLER_MASK = 1u << 8,
} poot_sampler_bits;
uint32_t poot_sampling_params_kind(const poot_sampling_params *params);

/* Resolves the seed: params->seed unless it is POOT_SAMPLING_SEED_RANDOM, in
 * which case 64 bits from the system's entropy (getrandom, else /dev/urandom;
 * never UINT64_MAX). Report the result so a run can be repeated.
 * IO when no entropy source answers. */
POOT_MUST_USE poot_status poot_sampling_seed_resolve(const poot_sampling_params *params,
                                                     uint64_t *out_seed);

/* Appends one bias entry from llama.cpp's CLI spelling TOKEN(+|-)BIAS
 * ("15043+1", "2-inf", "7+0.5"). INVALID_ARGUMENT (naming --logit-bias and the
 * text) on a bad form or a full list; params is unchanged then. */
POOT_MUST_USE poot_status poot_sampling_parse_logit_bias(poot_sampling_params *params,
                                                         const char *text);

/* Appends stop strings from a comma-separated list: "\n\n,User:,a\,b" where
 * \, \\ \n \t \r escape. Empty entries are INVALID_ARGUMENT, as are a full list
 * and an entry past POOT_SAMPLING_MAX_STOP_LEN; params is unchanged then. */
POOT_MUST_USE poot_status poot_sampling_parse_stop_list(poot_sampling_params *params,
                                                        const char *text);
/* Appends one stop string of len bytes (any bytes but NUL). */
POOT_MUST_USE poot_status poot_sampling_add_stop(poot_sampling_params *params, const char *text,
                                                 size_t len);

/* ignore_eos as llama.cpp does it: a -INFINITY bias for each end-of-generation
 * id (appended unless already present). INVALID_ARGUMENT when the list is full. */
POOT_MUST_USE poot_status poot_sampling_params_ban_ids(poot_sampling_params *params,
                                                       const int32_t *ids, size_t n_ids);

/* ---- The reference sampler ---------------------------------------------- */

/* The Philox draw of one step. key = {seed bits 0..31, seed bits 32..63};
 * counter = {0, 0, step mod 2^32, sequence}; the uniform is
 * poot_philox_uniform(out[0]) in [0, 1) — element 0 of the graph op
 * rng(key, {step, sequence}) with the f32 uniform distribution, so a device
 * draws it with the same op. step counts the draws made for the sequence since
 * the driver's last reset (0 for the first); sequence is the batch row. Pure. */
float poot_sampling_uniform(uint64_t seed, uint64_t step, uint32_t sequence);

/* Token counts over the penalized history: counts[id] = occurrences of id in
 * the last last_n entries of history (-1 = all, 0 = none). counts has n_vocab
 * entries and is overwritten. INVALID_ARGUMENT for an id outside the vocabulary. */
POOT_MUST_USE poot_status poot_sampling_counts_from_history(const int32_t *history,
                                                            size_t n_history, int32_t last_n,
                                                            uint32_t *counts, size_t n_vocab);

typedef struct poot_sampling_logprob {
  int32_t token;
  float logprob;
} poot_sampling_logprob;

typedef struct poot_sampling_result {
  int32_t token;   /* the chosen id; -1 when non_finite */
  float logprob;   /* its log-softmax over the raw logits */
  bool non_finite; /* a logit was NaN or +inf: nothing was drawn */
  uint32_t n_top;  /* = params->n_probs (or n_vocab if smaller) */
  poot_sampling_logprob top[POOT_SAMPLING_MAX_PROBS]; /* highest raw logits first */
} poot_sampling_result;

/* What one step of the reference sampler reads. */
typedef struct poot_sampling_step {
  const float *logits; /* n_vocab raw logits, borrowed */
  uint32_t n_vocab;
  const uint32_t *counts; /* n_vocab history counts, borrowed; NULL = no history */
  uint64_t seed;          /* resolved (not POOT_SAMPLING_SEED_RANDOM) */
  uint64_t step;
  uint32_t sequence;
} poot_sampling_step;

/* Samples one token: logit bias → penalties → top-k → typical-p → top-p →
 * min-p → temperature → draw (llama.cpp's common_sampler_init order), ties in
 * every sort to the lowest id, the draw by inverse CDF over the survivors in
 * id order. Logprobs are of the raw logits (as llama.cpp's server and OpenAI
 * report them). params must have passed validate. Returns INVALID_ARGUMENT
 * when every token is banned, OUT_OF_MEMORY when the workspace cannot be
 * allocated. Thread safe (no state). */
POOT_MUST_USE poot_status poot_sampling_sample(const poot_sampling_params *params,
                                               const poot_sampling_step *step,
                                               poot_sampling_result *out_result);

/* The chain without the draw: out_logits[i] (n_vocab entries) is token i's
 * logit after the logit bias and the penalties when it survives every
 * truncation (top-k, typical-p, top-p, min-p, computed at temperature 1 as the
 * sampler does; temperature is not applied), else -INFINITY; every entry NaN
 * when the logits are non-finite. The truncations apply whatever the
 * temperature. The statuses of poot_sampling_sample. */
POOT_MUST_USE poot_status poot_sampling_filter(const poot_sampling_params *params,
                                               const poot_sampling_step *step,
                                               float *out_logits);

/* ---- The stop-string matcher ------------------------------------------- */

typedef struct poot_stop_matcher poot_stop_matcher;

typedef struct poot_stop_output {
  const char *text; /* may be emitted now; borrowed until the next call */
  size_t len;
  bool stopped;       /* a stop string matched; text ends before it */
  int32_t stop_index; /* which one (index in params->stops), -1 if none */
} poot_stop_output;

/* Copies params' stop strings. OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_stop_matcher_create(const poot_sampling_params *params,
                                                   poot_stop_matcher **out_matcher);
void poot_stop_matcher_destroy(poot_stop_matcher *matcher); /* NULL-safe */

/* Feeds one streamed piece. Text that could still begin a stop string, and an
 * unfinished UTF-8 sequence at the end, is held back. A match is the one that
 * ends first (then the longest), so the result never depends on how the text
 * was split. After a stop, further pieces emit nothing. OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_stop_matcher_feed(poot_stop_matcher *matcher, const char *piece,
                                                 size_t len, poot_stop_output *out);
/* The stream ended: emits what was held back. */
void poot_stop_matcher_finish(poot_stop_matcher *matcher, poot_stop_output *out);
/* Forgets the text and the stop, keeping the stop strings. */
void poot_stop_matcher_reset(poot_stop_matcher *matcher);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_SAMPLING_H */
