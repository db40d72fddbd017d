/* The reference sampler (src/llm/sampling/sampler.c): each sampler alone and
 * chained on small logit vectors whose surviving probabilities were computed
 * by hand (and checked with Python's math module), a chi-squared test of the
 * draw, the Philox counter layout against an independent Random123 Philox,
 * greedy ties, logprobs, and the cost at a 128k vocabulary. */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "poot/llm/sampling.h"

/* Every sampler off, temperature 1, a fixed seed. */
static poot_sampling_params plain(void) {
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.temperature = 1.0f;
  p.seed = 1234;
  return p;
}

static poot_sampling_result sample(const poot_sampling_params *p, const float *logits, uint32_t n,
                                   const uint32_t *counts, uint64_t step) {
  POOT_ASSERT_OK(poot_sampling_params_validate(p, n));
  poot_sampling_step s = {
      .logits = logits, .n_vocab = n, .counts = counts, .seed = p->seed, .step = step};
  poot_sampling_result r;
  POOT_ASSERT_OK(poot_sampling_sample(p, &s, &r));
  return r;
}

/* Over 300 steps, the drawn id is the one the hand-computed distribution
 * (survivor ids in id order with their probabilities) gives for that step's
 * uniform: this pins the surviving set, the probabilities and the draw. */
static void expect_distribution(const poot_sampling_params *p, const float *logits, uint32_t n,
                                const uint32_t *counts, const int32_t *ids, const double *probs,
                                size_t n_survivors) {
  for (uint64_t step = 0; step < 300; step++) {
    double u = poot_sampling_uniform(p->seed, step, 0), cum = 0.0;
    int32_t want = ids[n_survivors - 1];
    for (size_t i = 0; i < n_survivors; i++) {
      cum += probs[i];
      if (u < cum) {
        want = ids[i];
        break;
      }
      /* A uniform this close to a boundary would test rounding, not semantics. */
      assert_true(fabs(u - cum) > 1e-6);
    }
    poot_sampling_result r = sample(p, logits, n, counts, step);
    if (r.token != want)
      fail_msg("step %llu: u = %.7f drew %d, expected %d", (unsigned long long)step, u, r.token,
               want);
  }
}

/* The counter layout against a Python Philox4x32-10 that reproduces
 * Random123's known answers (ctr 0, key 0 -> 6627e8d5 ...). */
static void test_uniform_layout(void **state) {
  (void)state;
  assert_float_equal(poot_sampling_uniform(1, 0, 0), 0.8902591466903687, 0);
  assert_float_equal(poot_sampling_uniform(42, 7, 3), 0.032142043113708496, 0);
  /* the step is taken mod 2^32 */
  assert_float_equal(poot_sampling_uniform(0xDEADBEEFCAFEull, (1ull << 33) + 5, 1), 0.9624150991439819,
                     0);
}

static void test_greedy(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.temperature = 0.0f;
  p.n_probs = 3;
  const float logits[] = {1.0f, 3.0f, 3.0f, 2.0f, -INFINITY};
  poot_sampling_result r = sample(&p, logits, 5, NULL, 0);
  assert_int_equal(r.token, 1); /* the tie between 1 and 2 goes to the lower id */
  /* log-softmax: lse = ln(e + 2e^3 + e^2) = 3.9175757955891974 */
  assert_float_equal(r.logprob, -0.9175757955891974, 1e-6);
  assert_int_equal(r.n_top, 3);
  assert_int_equal(r.top[0].token, 1);
  assert_int_equal(r.top[1].token, 2);
  assert_int_equal(r.top[2].token, 3);
  assert_float_equal(r.top[0].logprob, -0.9175757955891974, 1e-6);
  assert_float_equal(r.top[2].logprob, -1.9175757955891974, 1e-6);
  /* The truncations never change the argmax, whatever the seed. */
  p.top_k = 1, p.top_p = 0.1f, p.min_p = 0.9f, p.typical_p = 0.2f, p.seed = 99;
  assert_int_equal(sample(&p, logits, 5, NULL, 17).token, 1);
}

static void test_top_k(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.top_k = 2;
  const float logits[] = {0.0f, 1.0f, 2.0f, 3.0f};
  /* softmax over {2, 3}: 1/(1+e), e/(1+e) */
  const int32_t ids[] = {2, 3};
  const double probs[] = {0.2689414213699951, 0.7310585786300049};
  expect_distribution(&p, logits, 4, NULL, ids, probs, 2);
}

/* logits = ln {0.1, 0.2, 0.3, 0.4}, so softmax gives those numbers back. */
static const float PLOGITS[] = {-2.302585093f, -1.609437912f, -1.203972804f, -0.916290732f};

static void test_top_p(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.top_p = 0.65f; /* 0.4 < 0.65 <= 0.4 + 0.3 */
  const int32_t ids[] = {2, 3};
  const double probs[] = {0.3 / 0.7, 0.4 / 0.7};
  expect_distribution(&p, PLOGITS, 4, NULL, ids, probs, 2);
}

static void test_min_p(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.min_p = 0.4f; /* keeps p >= 0.16 */
  const int32_t ids[] = {1, 2, 3};
  const double probs[] = {0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9};
  expect_distribution(&p, PLOGITS, 4, NULL, ids, probs, 3);
}

static void test_typical(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  /* H = 1.27985; |surprisal - H| = 1.0227, 0.3296, 0.0759, 0.3636: ids 2, 1
   * come first and their mass 0.5 exceeds 0.45 */
  p.typical_p = 0.45f;
  const int32_t ids[] = {1, 2};
  const double probs[] = {0.4, 0.6};
  expect_distribution(&p, PLOGITS, 4, NULL, ids, probs, 2);
}

static void test_temperature(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.temperature = 2.0f; /* {0, ln 4} / 2 = {0, ln 2}: 1/3, 2/3 */
  const float logits[] = {0.0f, 1.386294361f};
  const int32_t ids[] = {0, 1};
  const double probs[] = {1.0 / 3.0, 2.0 / 3.0};
  expect_distribution(&p, logits, 2, NULL, ids, probs, 2);
}

/* Top-k on 1,000 logits with many ties (ten values): the survivors are the k
 * highest, ties to the lower id, found here by repeated maximum search. */
static void test_top_k_ties(void **state) {
  (void)state;
  enum { V = 1000, K = 7 };
  static float logits[V];
  uint64_t x = 12345;
  for (size_t i = 0; i < V; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    logits[i] = (float)(x % 10) * 0.5f;
  }
  bool taken[V] = {false};
  int32_t ids[K];
  for (size_t j = 0; j < K; j++) {
    int32_t best = -1;
    for (int32_t i = 0; i < V; i++)
      if (!taken[i] && (best < 0 || logits[i] > logits[best])) best = i;
    taken[best] = true;
    ids[j] = best;
  }
  /* All K share the top value 4.5 here, so they are equally likely. */
  for (size_t j = 0; j < K; j++) assert_float_equal(logits[ids[j]], 4.5f, 0);
  for (size_t a = 0; a < K; a++) /* id order for expect_distribution */
    for (size_t b = a + 1; b < K; b++)
      if (ids[b] < ids[a]) {
        int32_t t = ids[a];
        ids[a] = ids[b], ids[b] = t;
      }
  double probs[K];
  for (size_t j = 0; j < K; j++) probs[j] = 1.0 / K;
  poot_sampling_params p = plain();
  p.top_k = K;
  expect_distribution(&p, logits, V, NULL, ids, probs, K);
}

static void test_logit_bias(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "0-inf"));
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "1+0.6931471806"));
  const float logits[] = {5.0f, 0.0f, 0.0f};
  const int32_t ids[] = {1, 2};
  const double probs[] = {2.0 / 3.0, 1.0 / 3.0};
  expect_distribution(&p, logits, 3, NULL, ids, probs, 2);
}

static void test_penalties(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  p.repeat_penalty = 2.0f, p.presence_penalty = 0.5f, p.frequency_penalty = 0.25f;
  /* id0: 2/2 - (0.25 + 0.5) = 0.25; id1: -1*2 - (0.5 + 0.5) = -3;
   * id2 unseen: 1; id3: 0.5/2 - (0.75 + 0.5) = -1 */
  const float logits[] = {2.0f, -1.0f, 1.0f, 0.5f};
  const uint32_t counts[] = {1, 2, 0, 3};
  const int32_t ids[] = {0, 1, 2, 3};
  const double probs[] = {0.2905052129158928, 0.01126410950179948, 0.6149995405690136,
                          0.08323113701329415};
  expect_distribution(&p, logits, 4, counts, ids, probs, 4);
  /* Greedy sees the penalty too: 2 / 2 = 1 falls below 1.5. */
  p.temperature = 0.0f, p.presence_penalty = 0.0f, p.frequency_penalty = 0.0f;
  const float two[] = {2.0f, 1.5f};
  const uint32_t seen[] = {1, 0};
  assert_int_equal(sample(&p, two, 2, seen, 0).token, 1);
  /* The bias comes first (llama.cpp's order): (1 - 2) * 2 = -2, so
   * p0 = e^-2 / (1 + e^-2); penalizing first would give 1/2 - 2 = -1.5. */
  {
    poot_sampling_params q = plain();
    q.repeat_penalty = 2.0f;
    POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&q, "0-2"));
    const float lg[] = {1.0f, 0.0f};
    const int32_t both[] = {0, 1};
    const double pr[] = {0.11920292202211755, 0.8807970779778823};
    expect_distribution(&q, lg, 2, seen, both, pr, 2);
  }
  /* repeat_last_n = 0 turns the penalties off. */
  p.repeat_last_n = 0;
  assert_int_equal(sample(&p, two, 2, seen, 0).token, 0);
}

static void test_chain(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  /* top-k 4 drops id 0; top-p 0.9 over e^{1..4}: 0.6439 + 0.2369 + 0.0871 >=
   * 0.9 keeps {2, 3, 4}; min-p 0.2 keeps logit >= 4 + ln 0.2 = 2.39: {3, 4};
   * temperature 0.5: {6, 8} -> 1/(1+e^2), e^2/(1+e^2). */
  p.top_k = 4, p.top_p = 0.9f, p.min_p = 0.2f, p.temperature = 0.5f;
  const float logits[] = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f};
  const int32_t ids[] = {3, 4};
  const double probs[] = {0.11920292202211755, 0.8807970779778823};
  expect_distribution(&p, logits, 5, NULL, ids, probs, 2);
}

/* Chi-squared over 20,000 draws of the truncated, tempered softmax: top-k 5
 * of 8 at temperature 0.7 keeps ids {0, 1, 3, 4, 7} (logits 0.5 1 2 1.5 1.2)
 * with probabilities softmax(l / 0.7) below. 4 degrees of freedom; the
 * critical value at significance 0.001 is 18.467. The seeds are fixed, so the
 * test is deterministic. */
static void test_chi_squared(void **state) {
  (void)state;
  const float logits[] = {0.5f, 1.0f, -0.3f, 2.0f, 1.5f, 0.0f, -1.0f, 1.2f};
  const int32_t ids[] = {0, 1, 3, 4, 7};
  const double expect[] = {0.054178520438483924, 0.11067193032665856, 0.46180451363725594,
                           0.22607254799687385, 0.1472724876007278};
  const uint64_t seeds[] = {42, 7777};
  enum { N = 20000 };
  for (size_t s = 0; s < 2; s++) {
    poot_sampling_params p = plain();
    p.top_k = 5, p.temperature = 0.7f, p.seed = seeds[s];
    unsigned seen[8] = {0};
    poot_sampling_step st = {.logits = logits, .n_vocab = 8, .seed = p.seed};
    for (uint64_t i = 0; i < N; i++) {
      poot_sampling_result r;
      st.step = i;
      POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &r));
      seen[r.token]++;
    }
    double chi2 = 0.0;
    unsigned total = 0;
    for (size_t i = 0; i < 5; i++) {
      double e = expect[i] * N;
      chi2 += (seen[ids[i]] - e) * (seen[ids[i]] - e) / e;
      total += seen[ids[i]];
    }
    assert_int_equal(total, N); /* nothing outside the top 5 */
    printf("chi2 (seed %llu) = %.3f (critical 18.467)\n", (unsigned long long)seeds[s], chi2);
    assert_true(chi2 < 18.467);
  }
}

static void test_non_finite_and_banned(void **state) {
  (void)state;
  poot_sampling_params p = plain();
  float logits[] = {0.0f, NAN, 1.0f};
  poot_sampling_step st = {.logits = logits, .n_vocab = 3, .seed = 1};
  poot_sampling_result r;
  POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &r));
  assert_true(r.non_finite);
  assert_int_equal(r.token, -1);
  logits[1] = INFINITY;
  POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &r));
  assert_true(r.non_finite);
  logits[1] = 0.0f;
  const int32_t all[] = {0, 1, 2};
  POOT_ASSERT_OK(poot_sampling_params_ban_ids(&p, all, 3));
  POOT_ASSERT_STATUS_MSG(poot_sampling_sample(&p, &st, &r), POOT_INVALID_ARGUMENT, "-inf");
  p.n_bias = 1, p.bias[0].token = 3;
  POOT_ASSERT_STATUS_MSG(poot_sampling_sample(&p, &st, &r), POOT_INVALID_ARGUMENT, "logit_bias");
}

static void test_counts_from_history(void **state) {
  (void)state;
  const int32_t history[] = {4, 1, 1, 2, 4, 4};
  uint32_t counts[5];
  POOT_ASSERT_OK(poot_sampling_counts_from_history(history, 6, 4, counts, 5));
  const uint32_t last4[] = {0, 1, 1, 0, 2}; /* 1 2 4 4 */
  assert_memory_equal(counts, last4, sizeof last4);
  POOT_ASSERT_OK(poot_sampling_counts_from_history(history, 6, -1, counts, 5));
  const uint32_t all[] = {0, 2, 1, 0, 3};
  assert_memory_equal(counts, all, sizeof all);
  POOT_ASSERT_OK(poot_sampling_counts_from_history(history, 6, 0, counts, 5));
  const uint32_t none[] = {0, 0, 0, 0, 0};
  assert_memory_equal(counts, none, sizeof none);
  POOT_ASSERT_STATUS_MSG(poot_sampling_counts_from_history(history, 6, 64, counts, 4),
                         POOT_INVALID_ARGUMENT, "history[0]");
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The cost at a 128k vocabulary with llama.cpp's defaults and with every
 * sampler on (printed for docs/sampling.md); asserts only the determinism. */
static void test_cost_128k(void **state) {
  (void)state;
  enum { V = 128256, ROUNDS = 20 };
  float *logits = malloc(V * sizeof *logits);
  uint32_t *counts = calloc(V, sizeof *counts);
  assert_non_null(logits);
  assert_non_null(counts);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < V; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    logits[i] = (float)((x >> 40) % 20000) / 1000.0f - 10.0f;
  }
  for (size_t i = 0; i < 64; i++) counts[(i * 7919) % V]++;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.seed = 5;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) p.typical_p = 0.9f, p.repeat_penalty = 1.1f, p.n_probs = 20;
    poot_sampling_step st = {.logits = logits, .n_vocab = V, .counts = counts, .seed = 5};
    poot_sampling_result r, again;
    double t0 = now_us();
    for (int i = 0; i < ROUNDS; i++) {
      st.step = (uint64_t)i;
      POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &r));
    }
    double per = (now_us() - t0) / ROUNDS;
    POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &again));
    assert_int_equal(r.token, again.token);
    printf("128k vocabulary, %s: %.0f us per token\n",
           pass ? "all samplers + 20 logprobs" : "llama.cpp defaults", per);
  }
  free(logits);
  free(counts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_uniform_layout),
      cmocka_unit_test(test_greedy),
      cmocka_unit_test(test_top_k),
      cmocka_unit_test(test_top_k_ties),
      cmocka_unit_test(test_top_p),
      cmocka_unit_test(test_min_p),
      cmocka_unit_test(test_typical),
      cmocka_unit_test(test_temperature),
      cmocka_unit_test(test_logit_bias),
      cmocka_unit_test(test_penalties),
      cmocka_unit_test(test_chain),
      cmocka_unit_test(test_chi_squared),
      cmocka_unit_test(test_non_finite_and_banned),
      cmocka_unit_test(test_counts_from_history),
      cmocka_unit_test(test_cost_128k),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
