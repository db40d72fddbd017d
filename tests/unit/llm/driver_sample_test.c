/* The sampling suffix on a device (the argument names it; SKIP when absent)
 * against the reference sampler (poot_sampling_sample), on the demo model:
 *  - for each kind of sampling (greedy with a bias list, temperature alone,
 *    top-k, top-p with top-k off, min-p, typical-p, penalties, logprobs, all
 *    at once) the device's ids over a generation equal the reference's drawn
 *    from the same logits, history and Philox numbers, step by step; a
 *    difference is allowed only where the reference's uniform lies within
 *    the logits' tolerance of a CDF boundary (counted and printed: the test
 *    requires it to be rare);
 *  - logprobs equal the reference's within 1e-4;
 *  - a seed repeats its text; values never add an entry or a capture;
 *  - a grammar's output is accepted by the grammar; a stop string cuts the
 *    text; max_tokens; invalid parameters name their field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/llm/driver.h"
#include "poot/llm/grammar.h"
#include "poot/llm/sampling.h"
#include "poot_test.h"

static const char *g_spec = "vulkan";

typedef struct rig {
  poot_model *model;
  poot_device *dev;
  poot_executor *ex;
  poot_driver *drv;
  int64_t V;
} rig;

static void rig_open(rig *r) {
  memset(r, 0, sizeof *r);
  char path[1024];
  snprintf(path, sizeof path, "%s/models/poot-demo.gguf", poot_test_source_dir());
  POOT_ASSERT_OK(poot_model_open(path, NULL, &r->model));
  POOT_ASSERT_OK(poot_device_open(g_spec, NULL, &r->dev));
  POOT_ASSERT_OK(poot_engine_create(r->dev, &r->ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 96;
  dopt.prefill_chunk = 8;
  POOT_ASSERT_OK(poot_driver_create(r->ex, r->model, &dopt, &r->drv));
  r->V = poot_model_get_config(r->model)->vocab_size;
}

static void rig_close(rig *r) {
  poot_driver_destroy(r->drv);
  poot_executor_destroy(r->ex);
  poot_device_destroy(r->dev);
  poot_model_destroy(r->model);
}

static const poot_token k_prompt[] = {1, 40, 7, 99, 3, 250, 17, 61, 8, 120, 33};
#define N_PROMPT (sizeof k_prompt / sizeof k_prompt[0])
#define N_GEN 24

/* Replays a generation on the host: the logits of every step through the
 * logits entries, the reference sampler on them with the same history and
 * step. Returns the number of steps whose id differs. */
static int replay(rig *r, const poot_sampling_params *p, const poot_driver_generate_result *g) {
  float *logits = malloc((size_t)r->V * sizeof *logits);
  uint32_t *counts = malloc((size_t)r->V * sizeof *counts);
  int32_t hist[N_PROMPT + N_GEN + 1];
  assert_non_null(logits);
  assert_non_null(counts);
  POOT_ASSERT_OK(poot_driver_reset(r->drv));
  POOT_ASSERT_OK(poot_driver_feed_logits(r->drv, k_prompt, N_PROMPT, logits));
  size_t nh = 0;
  for (size_t i = 0; i < N_PROMPT; i++) hist[nh++] = k_prompt[i];
  int diff = 0;
  for (size_t i = 0; i < g->n_ids; i++) {
    POOT_ASSERT_OK(
        poot_sampling_counts_from_history(hist, nh, p->repeat_last_n, counts, (size_t)r->V));
    poot_sampling_step st = {.logits = logits,
                             .n_vocab = (uint32_t)r->V,
                             .counts = counts,
                             .seed = g->seed,
                             .step = i,
                             .sequence = 0};
    poot_sampling_result want;
    POOT_ASSERT_OK(poot_sampling_sample(p, &st, &want));
    if (want.token != g->ids[i]) {
      printf("  step %zu: device %d, reference %d (u = %.6f)\n", i, g->ids[i], want.token,
             poot_sampling_uniform(g->seed, i, 0));
      diff++;
    }
    if (p->n_probs > 0) {
      const poot_sampling_result *got = &g->probs[i];
      assert_int_equal(got->n_top, want.n_top);
      for (uint32_t j = 0; j < want.n_top; j++) {
        assert_int_equal(got->top[j].token, want.top[j].token);
        assert_true(fabsf(got->top[j].logprob - want.top[j].logprob) < 1e-4f);
      }
      if (want.token == g->ids[i]) assert_true(fabsf(got->logprob - want.logprob) < 1e-4f);
    }
    hist[nh++] = g->ids[i];
    if (i + 1 < g->n_ids) POOT_ASSERT_OK(poot_driver_feed_logits(r->drv, &g->ids[i], 1, logits));
  }
  free(logits);
  free(counts);
  return diff;
}

static void generate(rig *r, const poot_sampling_params *p, poot_driver_generate_result *g) {
  poot_driver_generate_options o = poot_driver_generate_options_default();
  o.max_new_tokens = N_GEN;
  o.ignore_stop = true;
  o.no_text = true;
  o.sampling = p;
  POOT_ASSERT_OK(poot_driver_generate_ids(r->drv, k_prompt, N_PROMPT, &o, NULL, NULL, g));
}

typedef struct kase {
  const char *name;
  void (*set)(poot_sampling_params *p);
} kase;

static void set_greedy_bias(poot_sampling_params *p) {
  p->temperature = 0.0f;
  p->top_k = 0;
  p->top_p = 1.0f;
  p->min_p = 0.0f;
  p->n_bias = 3;
  p->bias[0] = (poot_sampling_bias){.token = 5, .bias = 4.0f};
  p->bias[1] = (poot_sampling_bias){.token = 77, .bias = 2.5f};
  p->bias[2] = (poot_sampling_bias){.token = 5, .bias = -1.0f};
}
static void set_temp(poot_sampling_params *p) {
  p->temperature = 1.3f;
  p->top_k = 0;
  p->top_p = 1.0f;
  p->min_p = 0.0f;
}
static void set_top_k(poot_sampling_params *p) {
  p->temperature = 0.9f;
  p->top_k = 12;
  p->top_p = 1.0f;
  p->min_p = 0.0f;
}
static void set_top_p(poot_sampling_params *p) {
  p->temperature = 1.0f;
  p->top_k = 0;
  p->top_p = 0.8f;
  p->min_p = 0.0f;
}
static void set_min_p(poot_sampling_params *p) {
  p->temperature = 1.1f;
  p->top_k = 0;
  p->top_p = 1.0f;
  p->min_p = 0.1f;
}
static void set_typical(poot_sampling_params *p) {
  p->temperature = 1.0f;
  p->top_k = 50;
  p->top_p = 1.0f;
  p->min_p = 0.0f;
  p->typical_p = 0.7f;
}
static void set_penalties(poot_sampling_params *p) {
  p->temperature = 0.7f;
  p->repeat_penalty = 1.3f;
  p->repeat_last_n = 6;
  p->presence_penalty = 0.4f;
  p->frequency_penalty = 0.3f;
}
static void set_logprobs(poot_sampling_params *p) {
  p->n_probs = 5;
}
static void set_all(poot_sampling_params *p) {
  set_penalties(p);
  p->top_k = 30;
  p->top_p = 0.9f;
  p->min_p = 0.02f;
  p->typical_p = 0.95f;
  p->n_probs = 3;
  p->n_bias = 1;
  p->bias[0] = (poot_sampling_bias){.token = 9, .bias = 1.5f};
}

static void test_vs_reference(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  const kase cases[] = {{"greedy + bias", set_greedy_bias},
                        {"temperature", set_temp},
                        {"top-k", set_top_k},
                        {"top-p", set_top_p},
                        {"min-p", set_min_p},
                        {"typical-p", set_typical},
                        {"penalties", set_penalties},
                        {"logprobs", set_logprobs},
                        {"all", set_all}};
  int total = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (uint64_t seed = 1; seed <= 2; seed++) {
      poot_sampling_params p;
      poot_sampling_params_init(&p);
      cases[c].set(&p);
      p.seed = seed * 7919;
      poot_driver_generate_result g;
      generate(&r, &p, &g);
      assert_int_equal(g.n_ids, N_GEN);
      assert_int_equal(g.seed, seed * 7919);
      int diff = replay(&r, &p, &g);
      printf("%-14s seed %llu: %d of %d ids differ\n", cases[c].name, (unsigned long long)p.seed,
             diff, N_GEN);
      total += diff;
      poot_driver_generate_result_deinit(&g);
    }
  /* f32 on the device against double on the host: a flip only at a boundary */
  assert_true(total <= 2);
  rig_close(&r);
}

static void test_seed_and_entries(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.seed = 42;
  poot_driver_generate_result a, b, c;
  generate(&r, &p, &a);
  poot_exec_stats s0;
  poot_exec_stats_get(r.ex, &s0);
  generate(&r, &p, &b);
  assert_memory_equal(a.ids, b.ids, N_GEN * sizeof *a.ids);
  /* other values of one kind: no new entry, no capture */
  p.seed = 43;
  p.temperature = 1.7f;
  p.top_k = 3;
  p.top_p = 0.5f;
  p.min_p = 0.2f;
  generate(&r, &p, &c);
  poot_exec_stats s1;
  poot_exec_stats_get(r.ex, &s1);
  assert_int_equal(s1.entries, s0.entries);
  assert_int_equal(s1.captures, s0.captures);
  assert_memory_not_equal(a.ids, c.ids, N_GEN * sizeof *a.ids);
  poot_driver_generate_result_deinit(&a);
  poot_driver_generate_result_deinit(&b);
  poot_driver_generate_result_deinit(&c);
  rig_close(&r);
}

static void test_grammar_and_stops(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  const char *gbnf = "root ::= \"[\" item (\",\" item)* \"]\"\nitem ::= [a-z]+ | [0-9]{1,3}\n";
  poot_grammar *gr;
  POOT_ASSERT_OK(poot_grammar_compile(gbnf, strlen(gbnf), NULL, &gr));
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  poot_driver_generate_options o = poot_driver_generate_options_default();
  o.max_new_tokens = 40;
  o.sampling = &p;
  o.grammar = gr;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    p.seed = seed;
    poot_driver_generate_result g;
    POOT_ASSERT_OK(poot_driver_generate(r.drv, "Hello", 5, &o, NULL, NULL, &g));
    poot_grammar_matcher *m;
    POOT_ASSERT_OK(poot_grammar_matcher_create(gr, &m));
    POOT_ASSERT_OK(poot_grammar_matcher_accept(m, g.text, g.text_len));
    printf("grammar seed %llu: %.*s (%s)\n", (unsigned long long)seed, (int)g.text_len, g.text,
           g.reason == POOT_DRIVER_STOP_GRAMMAR ? "finished" : "length");
    assert_true(g.text_len > 0 && g.text[0] == '[');
    if (g.reason == POOT_DRIVER_STOP_GRAMMAR || g.reason == POOT_DRIVER_STOP_ID)
      assert_true(poot_grammar_matcher_can_end(m));
    poot_grammar_matcher_destroy(m);
    poot_driver_generate_result_deinit(&g);
  }
  /* a stop string: the text ends before it */
  o.grammar = NULL;
  p.seed = 5;
  poot_driver_generate_result full, cut;
  POOT_ASSERT_OK(poot_driver_generate(r.drv, "Hello", 5, &o, NULL, NULL, &full));
  assert_true(full.text_len > 4);
  POOT_ASSERT_OK(poot_sampling_add_stop(&p, full.text + 2, 2));
  POOT_ASSERT_OK(poot_driver_generate(r.drv, "Hello", 5, &o, NULL, NULL, &cut));
  assert_int_equal(cut.reason, POOT_DRIVER_STOP_STRING);
  assert_true(cut.text_len <= 2);
  assert_memory_equal(cut.text, full.text, cut.text_len);
  poot_driver_generate_result_deinit(&full);
  poot_driver_generate_result_deinit(&cut);
  /* max_tokens caps the generation; a bad value names its field */
  p.n_stops = 0;
  p.max_tokens = 3;
  POOT_ASSERT_OK(poot_driver_generate(r.drv, "Hello", 5, &o, NULL, NULL, &cut));
  assert_true(cut.n_ids <= 3);
  poot_driver_generate_result_deinit(&cut);
  p.top_p = 1.5f;
  poot_status bad = poot_driver_generate(r.drv, "Hello", 5, &o, NULL, NULL, &cut);
  assert_int_equal(poot_status_code_of(bad), POOT_INVALID_ARGUMENT);
  assert_non_null(strstr(poot_status_message(bad), "top_p"));
  poot_status_free(bad);
  poot_driver_generate_result_deinit(&cut);
  poot_grammar_destroy(gr);
  rig_close(&r);
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
      cmocka_unit_test(test_vs_reference),
      cmocka_unit_test(test_seed_and_entries),
      cmocka_unit_test(test_grammar_and_stops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
