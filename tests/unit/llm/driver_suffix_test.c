/* The sampling suffix alone, on fixed logit vectors, on a device (the
 * argument names it; SKIP when absent): a graph whose "logits" are a slot,
 * the suffix appended (driver_sample.c), one replay per draw.
 *  - V = 5,000 (the two-level draw over the vocabulary, top-k's 1,024 cap,
 *    top-p with top-k off over the whole vocabulary's softmax): for each kind,
 *    80 steps on fresh logits with ties and banned tokens (one kind with a
 *    full 300-entry bias list: duplicates, bans, the scatter's -1 padding);
 *    the device's id
 *    equals the reference sampler's for the same Philox number (the counter
 *    is the device's state, advanced by each replay); a flip is allowed only
 *    at a CDF boundary and counted;
 *  - a χ² test on the device: top-k 5 of 8 logits at T 0.7, 4,000 draws, the
 *    frequencies against the tempered softmax of the five survivors (4 degrees
 *    of freedom, significance 0.001, critical value 18.467). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/exec.h"
#include "poot/llm/sampling.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_impl.h"

static const char *g_spec = "vulkan";

typedef struct suffix {
  poot_device *dev;
  poot_executor *ex;
  uint32_t entry, bias_entry; /* bias_entry: the dense bias's setter */
  int64_t V;
  uint32_t kind;
  poot_exec_slot logits, f, i, seed, bias_id, bias;
} suffix;

/* The suffix of `kind` sorting sort_k candidates (0: min(V, 1,024)). */
static void suffix_open(suffix *s, int64_t V, uint32_t kind, int64_t sort_k) {
  memset(s, 0, sizeof *s);
  s->V = V;
  s->kind = kind;
  POOT_ASSERT_OK(poot_device_open(g_spec, NULL, &s->dev));
  POOT_ASSERT_OK(poot_engine_create(s->dev, &s->ex));
  POOT_ASSERT_OK(poot_exec_load_weights(s->ex, 0, NULL));
  poot_graph *g;
  POOT_ASSERT_OK(poot_graph_create(&g));
  int64_t dims[2] = {1, V};
  poot_type lt = poot_type_make(POOT_DTYPE_F32, 2, dims);
  poot_value x;
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "logits", &lt, &x));
  POOT_ASSERT_OK(poot_graph_set_output(g, x));
  driver_sample_shape sh = {
      .tokens = 1, .cap = 16, .kind = kind, .role = DRIVER_ROLE_SAMPLE, .sort_k = sort_k};
  POOT_ASSERT_OK(poot__driver_append_sampler(g, &sh));
  char sampling[48];
  snprintf(sampling, sizeof sampling, "sample:%#x:k%lld", kind, (long long)sort_k);
  poot_exec_entry_key key = {
      .program = "suffix", .step_shape = "row", .sampling = sampling, .bound_inputs = "logits"};
  POOT_ASSERT_OK(poot_exec_add_entry(s->ex, &key, g, &s->entry, NULL));
  poot_graph_destroy(g);
  POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->entry, "logits", &s->logits));
  POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->entry, "sampler.f", &s->f));
  POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->entry, "sampler.i", &s->i));
  if (kind & POOT_SAMPLER_DRAW)
    POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->entry, "sampler.seed", &s->seed));
  if (kind & POOT_SAMPLER_LOGIT_BIAS) {
    /* the list goes into the dense state through the driver's BIAS graph */
    POOT_ASSERT_OK(poot__driver_bias_graph(V, &g));
    poot_exec_entry_key bk = {
        .program = "suffix", .step_shape = "bias", .sampling = "bias", .bound_inputs = "sampler"};
    POOT_ASSERT_OK(poot_exec_add_entry(s->ex, &bk, g, &s->bias_entry, NULL));
    poot_graph_destroy(g);
    POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->bias_entry, "sampler.bias_id", &s->bias_id));
    POOT_ASSERT_OK(poot_exec_entry_slot(s->ex, s->bias_entry, "sampler.bias", &s->bias));
  }
}

static void suffix_close(suffix *s) {
  poot_executor_destroy(s->ex);
  poot_device_destroy(s->dev);
}

/* One replay: the head words {id, finite, any survivor, ...} for `logits`
 * under request r (parameters written every time: a test, not a decode
 * loop). */
static void suffix_words(suffix *s, const driver_request *r, const float *logits, int32_t *words) {
  int64_t dims[2] = {1, s->V}, nf = DRIVER_SAMPLER_FPARAMS, ni = DRIVER_SAMPLER_IPARAMS, n2 = 2;
  int64_t nb = POOT_SAMPLING_MAX_BIAS;
  poot_tensor tl = {.type = poot_type_make(POOT_DTYPE_F32, 2, dims),
                    .data = (void *)logits,
                    .size = (size_t)s->V * 4};
  poot_tensor tf = {
      .type = poot_type_make(POOT_DTYPE_F32, 1, &nf), .data = (void *)r->f, .size = sizeof r->f};
  poot_tensor ti = {
      .type = poot_type_make(POOT_DTYPE_I32, 1, &ni), .data = (void *)r->i, .size = sizeof r->i};
  poot_tensor ts = {.type = poot_type_make(POOT_DTYPE_U32, 1, &n2),
                    .data = (void *)r->seed,
                    .size = sizeof r->seed};
  poot_tensor tbi = {.type = poot_type_make(POOT_DTYPE_I32, 1, &nb),
                     .data = (void *)r->bias_id,
                     .size = sizeof r->bias_id};
  poot_tensor tb = {.type = poot_type_make(POOT_DTYPE_F32, 1, &nb),
                    .data = (void *)r->bias,
                    .size = sizeof r->bias};
  poot_exec_slot_value in[6] = {{s->logits, &tl}, {s->f, &tf}, {s->i, &ti}};
  size_t n = 3;
  if (s->kind & POOT_SAMPLER_DRAW) in[n++] = (poot_exec_slot_value){s->seed, &ts};
  if (s->kind & POOT_SAMPLER_LOGIT_BIAS) {
    poot_exec_slot_value bin[2] = {{s->bias_id, &tbi}, {s->bias, &tb}};
    poot_exec_step_io bio = {.input_count = 2, .inputs = bin};
    POOT_ASSERT_OK(poot_exec_step(s->ex, s->bias_entry, &bio));
  }
  uint32_t nw = poot__driver_sample_words(s->kind, s->V);
  poot_exec_step_io io = {
      .input_count = n, .inputs = in, .output = words, .output_size = nw * sizeof *words};
  POOT_ASSERT_OK(poot_exec_step(s->ex, s->entry, &io));
}

/* The draw for `logits` (finite, with a survivor). */
static int32_t suffix_draw(suffix *s, const driver_request *r, const float *logits) {
  int32_t words[DRIVER_SAMPLE_HEAD + 2 * POOT_SAMPLING_MAX_PROBS];
  suffix_words(s, r, logits, words);
  assert_int_equal(words[1], 1); /* finite */
  assert_int_equal(words[2], 1); /* a survivor */
  return words[0];
}

/* Logits with ties (a quarter rounded to 0.5) and a few banned tokens. */
static void random_logits(float *x, int64_t V, uint32_t *rng) {
  for (int64_t i = 0; i < V; i++) {
    *rng = *rng * 1664525u + 1013904223u;
    double u = ((*rng >> 8) + 0.5) / 16777216.0;
    *rng = *rng * 1664525u + 1013904223u;
    double w = ((*rng >> 8) + 0.5) / 16777216.0;
    double z = sqrt(-2.0 * log(u)) * cos(6.283185307179586 * w);
    x[i] = (float)(3.0 * z);
    if (i % 4 == 0) x[i] = roundf(x[i] * 2.0f) / 2.0f;
    if (i % 97 == 5) x[i] = -INFINITY;
  }
}

typedef struct kase {
  const char *name;
  float temperature, top_p, min_p, typical_p;
  int32_t top_k;
  bool bias; /* a full list: 300 entries, duplicates, bans, -1 padding after merging */
  bool wide; /* sort min(V, 1,024) candidates, not the driver's width for top_k */
} kase;

/* 300 bias entries over V: every tenth repeats an earlier token (the driver
 * sums them), every third of the rest bans its token, the others move it by
 * up to ±4.5 — enough to change which tokens are drawn. */
static void full_bias(poot_sampling_params *p, int64_t V) {
  p->n_bias = POOT_SAMPLING_MAX_BIAS;
  for (uint32_t i = 0; i < POOT_SAMPLING_MAX_BIAS; i++) {
    int32_t tok = (int32_t)((i * 17 + 3) % (uint32_t)V);
    if (i % 10 == 9) tok = p->bias[i / 2].token;
    float b = i % 3 == 0 ? -INFINITY : (float)((int)(i % 7) - 3) * 1.5f;
    p->bias[i] = (poot_sampling_bias){.token = tok, .bias = b};
  }
}

static void test_long_vocab(void **state) {
  (void)state;
  const int64_t V = 5000;
  const kase cases[] = {
      {"temperature", 1.2f, 1.0f, 0.0f, 1.0f, 0, false, false},
      {"top-k 40", 0.8f, 1.0f, 0.0f, 1.0f, 40, false, false},
      {"top-p, k off", 1.0f, 0.9f, 0.0f, 1.0f, 0, false, false},
      {"min-p", 1.0f, 1.0f, 0.08f, 1.0f, 0, false, false},
      {"typical, k 300", 1.0f, 1.0f, 0.0f, 0.8f, 300, false, false},
      {"defaults", 0.8f, 0.95f, 0.05f, 1.0f, 40, false, false},
      {"defaults + bias", 0.8f, 0.95f, 0.05f, 1.0f, 40, true, false},
      {"defaults, wide", 0.8f, 0.95f, 0.05f, 1.0f, 40, false, true},
  };
  float *x = malloc((size_t)V * sizeof *x);
  assert_non_null(x);
  int total = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    poot_sampling_params p;
    poot_sampling_params_init(&p);
    p.temperature = cases[c].temperature;
    p.top_p = cases[c].top_p;
    p.min_p = cases[c].min_p;
    p.typical_p = cases[c].typical_p;
    p.top_k = cases[c].top_k;
    p.seed = 1234 + c;
    if (cases[c].bias) full_bias(&p, V);
    driver_request r;
    poot__driver_request_init(V, &p, p.seed, &r);
    suffix s;
    const uint32_t kind = poot_sampling_params_kind(&p);
    const int64_t sort_k = cases[c].wide ? 0 : poot__driver_sort_width(kind, r.i[0], V);
    /* the driver's widths: 64 candidates for k 40, 512 for k 300 */
    if (!cases[c].wide && (kind & POOT_SAMPLER_TOP_K))
      assert_int_equal(sort_k, cases[c].top_k <= 64 ? 64 : 512);
    suffix_open(&s, V, kind, sort_k);
    uint32_t rng = 7u + (uint32_t)c;
    int diff = 0;
    for (uint64_t step = 0; step < 80; step++) {
      random_logits(x, V, &rng);
      int32_t got = suffix_draw(&s, &r, x);
      poot_sampling_step st = {
          .logits = x, .n_vocab = (uint32_t)V, .seed = p.seed, .step = step, .sequence = 0};
      poot_sampling_result want;
      POOT_ASSERT_OK(poot_sampling_sample(&p, &st, &want));
      if (got != want.token) {
        printf("  %s step %llu: device %d, reference %d (u = %.7f)\n", cases[c].name,
               (unsigned long long)step, got, want.token, poot_sampling_uniform(p.seed, step, 0));
        diff++;
      }
    }
    printf("%-16s V %lld: %d of 80 draws differ\n", cases[c].name, (long long)V, diff);
    total += diff;
    suffix_close(&s);
  }
  free(x);
  assert_true(total <= 3);
}

/* The finite flag over 5,000 logits (counted in chunks of 1,024, the last
 * padded): a NaN or a +inf anywhere, the last id included, clears it; −inf
 * (a banned token) does not. */
static void test_finite_flag(void **state) {
  (void)state;
  const int64_t V = 5000;
  float *x = malloc((size_t)V * sizeof *x);
  assert_non_null(x);
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.seed = 5;
  driver_request r;
  poot__driver_request_init(V, &p, p.seed, &r);
  const uint32_t kind = poot_sampling_params_kind(&p);
  suffix s;
  suffix_open(&s, V, kind, poot__driver_sort_width(kind, r.i[0], V));
  const int64_t at[4] = {0, 1023, 4096, V - 1};
  const float bad[2] = {NAN, INFINITY};
  int32_t words[DRIVER_SAMPLE_HEAD + 2 * POOT_SAMPLING_MAX_PROBS];
  uint32_t rng = 3;
  for (int k = 0; k < 4; k++)
    for (int b = 0; b < 2; b++) {
      random_logits(x, V, &rng);
      x[at[k]] = bad[b];
      suffix_words(&s, &r, x, words);
      if (words[1] != 0)
        fail_msg("%s at %lld: finite flag %d", b ? "+inf" : "NaN", (long long)at[k], words[1]);
    }
  random_logits(x, V, &rng);
  x[V - 1] = -INFINITY;
  suffix_words(&s, &r, x, words);
  assert_int_equal(words[1], 1);
  suffix_close(&s);
  free(x);
}

static void test_chi_square(void **state) {
  (void)state;
  const float logits[8] = {2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -0.5f, -1.0f, -1.5f};
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.temperature = 0.7f;
  p.top_k = 5;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 20261202;
  driver_request r;
  poot__driver_request_init(8, &p, p.seed, &r);
  suffix s;
  suffix_open(&s, 8, poot_sampling_params_kind(&p), 0);
  const int N = 4000;
  int count[8] = {0};
  for (int i = 0; i < N; i++) count[suffix_draw(&s, &r, logits)]++;
  suffix_close(&s);
  double w[5], z = 0;
  for (int i = 0; i < 5; i++) z += w[i] = exp((logits[i] - logits[0]) / 0.7);
  double chi = 0;
  for (int i = 0; i < 5; i++) {
    double e = N * w[i] / z;
    chi += (count[i] - e) * (count[i] - e) / e;
  }
  for (int i = 5; i < 8; i++) assert_int_equal(count[i], 0);
  printf("chi-square over %d device draws: %.3f (critical 18.467)\n", N, chi);
  assert_true(chi < 18.467);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  poot_device *d = NULL;
  poot_status st = poot_device_open(g_spec, NULL, &d);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", g_spec, poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  poot_device_destroy(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_finite_flag),
      cmocka_unit_test(test_chi_square),
      cmocka_unit_test(test_long_vocab),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
