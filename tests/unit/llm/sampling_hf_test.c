/* poot_sampling_filter against Hugging Face's logits processors, on the
 * committed vectors tests/data/sampling/hf_vectors.json (written by
 * scripts/hf_sampling_vectors.py; docs/sampling.md, "Hugging Face vectors").
 *
 * Each case gives input logits, a token history, poot's parameters, HF's
 * output logits (null = filtered) and "expect_poot", the surviving ids under
 * poot's documented rules computed by the script. Every case checks that poot
 * keeps exactly expect_poot. A case marked "equal" (definitions agree) checks
 * that poot and HF keep the same set and that every survivor's logit agrees
 * within TOL; any other mark names a difference of definition, and the case
 * checks that the difference is exactly the documented one. */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>

#include "poot/llm/sampling.h"

/* Survivors' logits: HF computes in float32 torch, poot in float32 C. The
 * repetition penalty and the temperature are one float32 operation each in
 * both, so they agree to the bit; OpenAI's penalties are two subtractions in
 * the script and `l - (count * f + p)` in poot, which may differ in the last
 * bit or two. TOL bounds that: 1e-6 relative (about 8 ulp), 1e-6 absolute
 * near 0. */
#define TOL 1e-6

typedef struct hf_file {
  poot_arena arena;
  char *text;
  const poot_json *root;
  const poot_json *vectors;
  const poot_json *cases;
} hf_file;

/* One case run through poot. Masks are "survives"; logits are per token. */
typedef struct case_run {
  const char *name;
  const char *compare;
  uint32_t n;
  float temperature;
  float *input;      /* the raw logits */
  float *poot;       /* poot_sampling_filter's output divided by temperature */
  float *hf;         /* HF's output; -INFINITY where filtered */
  bool *expect;      /* expect_poot */
  uint32_t *history; /* the whole history's counts (not only the window) */
  uint32_t *window;  /* the penalized window's counts */
  size_t n_poot, n_hf;
} case_run;

static const poot_json *member(const poot_json *obj, const char *key, poot_json_type type) {
  const poot_json *v = poot_json_get(obj, key);
  if (!v || v->type != type) fail_msg("hf_vectors.json: member '%s' missing or mistyped", key);
  return v;
}

static float number_f32(const poot_json *v) {
  if (v->type == POOT_JSON_NULL) return -INFINITY;
  if (v->type != POOT_JSON_NUMBER) fail_msg("hf_vectors.json: a non-number in a logit array");
  return strtof(v->str, NULL); /* the shortest decimal of a float32: exact */
}

static double param(const poot_json *c, const char *key) {
  return member(member(c, "params", POOT_JSON_OBJECT), key, POOT_JSON_NUMBER)->number;
}

static int setup(void **state) {
  const char *src = poot_test_source_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/sampling/hf_vectors.json", src ? src : ".");
  hf_file *f = calloc(1, sizeof *f);
  if (!f) return -1;
  size_t size;
  poot_status s = poot_file_read_all(path, &f->text, &size);
  if (s) {
    fprintf(stderr, "%s: %s\n", path, poot_status_message(s));
    poot_status_free(s);
    free(f);
    return -1;
  }
  poot_arena_init(&f->arena, 0);
  poot_json *root;
  s = poot_json_parse(&f->arena, f->text, size, NULL, &root);
  *state = f;
  if (s) {
    fprintf(stderr, "%s: %s\n", path, poot_status_message(s));
    poot_status_free(s);
    return -1;
  }
  f->root = root;
  return 0;
}

static int teardown(void **state) {
  hf_file *f = *state;
  if (f) {
    poot_arena_deinit(&f->arena);
    poot_free(f->text);
    free(f);
  }
  return 0;
}

static void float_array(const poot_json *a, float *out, uint32_t n, const char *what) {
  if (a->type != POOT_JSON_ARRAY || a->len != n)
    fail_msg("%s: %zu entries, expected %u", what, a->len, n);
  for (uint32_t i = 0; i < n; i++) out[i] = number_f32(a->items[i]);
}

static void history_counts(const poot_json *c, case_run *r, int32_t last_n) {
  const poot_json *h = member(c, "history", POOT_JSON_ARRAY);
  int32_t *ids = malloc((h->len + 1) * sizeof *ids);
  assert_non_null(ids);
  for (size_t i = 0; i < h->len; i++) ids[i] = (int32_t)h->items[i]->number;
  POOT_ASSERT_OK(poot_sampling_counts_from_history(ids, h->len, -1, r->history, r->n));
  POOT_ASSERT_OK(poot_sampling_counts_from_history(ids, h->len, last_n, r->window, r->n));
  free(ids);
}

static poot_sampling_params case_params(const poot_json *c) {
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.temperature = 1.0f; /* the filter never applies it; the test divides */
  p.top_k = (int32_t)param(c, "top_k");
  p.top_p = (float)param(c, "top_p");
  p.min_p = (float)param(c, "min_p");
  p.typical_p = (float)param(c, "typical_p");
  p.repeat_penalty = (float)param(c, "repeat_penalty");
  p.repeat_last_n = (int32_t)param(c, "repeat_last_n");
  p.presence_penalty = (float)param(c, "presence_penalty");
  p.frequency_penalty = (float)param(c, "frequency_penalty");
  p.seed = 0;
  /* [[id, bias], ...]; a null bias is -inf (a ban) */
  const poot_json *bias = member(c, "bias", POOT_JSON_ARRAY);
  if (bias->len > POOT_SAMPLING_MAX_BIAS) fail_msg("hf_vectors.json: %zu bias entries", bias->len);
  for (size_t i = 0; i < bias->len; i++) {
    const poot_json *e = bias->items[i];
    if (e->type != POOT_JSON_ARRAY || e->len != 2 || e->items[0]->type != POOT_JSON_NUMBER)
      fail_msg("hf_vectors.json: bias entry %zu is not [id, bias]", i);
    p.bias[p.n_bias++] = (poot_sampling_bias){.token = (int32_t)e->items[0]->number,
                                              .bias = number_f32(e->items[1])};
  }
  return p;
}

/* Reads case c and runs poot_sampling_filter on it. */
static void run_case(const hf_file *f, const poot_json *c, case_run *r) {
  r->name = member(c, "name", POOT_JSON_STRING)->str;
  r->compare = member(c, "compare", POOT_JSON_STRING)->str;
  const poot_json *vec =
      member(f->vectors, member(c, "vector", POOT_JSON_STRING)->str, POOT_JSON_ARRAY);
  r->n = (uint32_t)vec->len;
  r->temperature = (float)param(c, "temperature");
  r->input = malloc(r->n * sizeof *r->input);
  r->poot = malloc(r->n * sizeof *r->poot);
  r->hf = malloc(r->n * sizeof *r->hf);
  r->expect = calloc(r->n, sizeof *r->expect);
  r->history = malloc(r->n * sizeof *r->history);
  r->window = malloc(r->n * sizeof *r->window);
  assert_true(r->input && r->poot && r->hf && r->expect && r->history && r->window);
  float_array(vec, r->input, r->n, r->name);
  float_array(member(c, "hf_out", POOT_JSON_ARRAY), r->hf, r->n, r->name);
  const poot_json *e = member(c, "expect_poot", POOT_JSON_ARRAY);
  for (size_t i = 0; i < e->len; i++) {
    double id = e->items[i]->number;
    if (!(id >= 0 && id < r->n)) fail_msg("%s: expect_poot id %g out of range", r->name, id);
    r->expect[(uint32_t)id] = true;
  }
  poot_sampling_params p = case_params(c);
  history_counts(c, r, p.repeat_last_n);
  POOT_ASSERT_OK(poot_sampling_params_validate(&p, r->n));
  poot_sampling_step step = {.logits = r->input, .n_vocab = r->n, .counts = r->window};
  POOT_ASSERT_OK(poot_sampling_filter(&p, &step, r->poot));
  r->n_poot = r->n_hf = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    r->poot[i] /= r->temperature; /* HF's TemperatureLogitsWarper: one float32 division */
    r->n_poot += r->poot[i] > -INFINITY;
    r->n_hf += r->hf[i] > -INFINITY;
  }
}

static void free_case(case_run *r) {
  free(r->input);
  free(r->poot);
  free(r->hf);
  free(r->expect);
  free(r->history);
  free(r->window);
}

static bool kept(const float *v, uint32_t i) {
  return v[i] > -INFINITY;
}

/* poot keeps exactly the ids the script computed from poot's definitions. */
static void check_expect(const case_run *r) {
  for (uint32_t i = 0; i < r->n; i++)
    if (kept(r->poot, i) != r->expect[i])
      fail_msg("%s: token %u is %s by poot, the script's poot rules %s it", r->name, i,
               kept(r->poot, i) ? "kept" : "dropped", r->expect[i] ? "keep" : "drop");
}

/* Tokens both keep have the same logit (HF's as is, poot's divided by T).
 * Returns the largest difference seen, relative to max(1, |HF|). */
static double check_values(const case_run *r, const bool *skip) {
  double worst = 0.0;
  for (uint32_t i = 0; i < r->n; i++) {
    if (!kept(r->poot, i) || !kept(r->hf, i) || (skip && skip[i])) continue;
    const double d =
        fabs((double)r->poot[i] - (double)r->hf[i]) / fmax(1.0, fabs((double)r->hf[i]));
    worst = fmax(worst, d);
    if (!(d <= TOL))
      fail_msg("%s: token %u: poot %.9g, HF %.9g (tolerance %g relative)", r->name, i,
               (double)r->poot[i], (double)r->hf[i], TOL);
  }
  return worst;
}

/* The smallest logit poot keeps. */
static float poot_min(const case_run *r) {
  float m = INFINITY;
  for (uint32_t i = 0; i < r->n; i++)
    if (kept(r->poot, i) && r->poot[i] < m) m = r->poot[i];
  return m;
}

/* Whether a ⊆ b (as masks of survivors). */
static bool subset(const float *a, const float *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (kept(a, i) && !kept(b, i)) return false;
  return true;
}

static void check_equal_sets(const case_run *r) {
  for (uint32_t i = 0; i < r->n; i++)
    if (kept(r->poot, i) != kept(r->hf, i))
      fail_msg("%s: token %u (logit %.9g) is %s by poot and %s by HF", r->name, i,
               (double)r->input[i], kept(r->poot, i) ? "kept" : "dropped",
               kept(r->hf, i) ? "kept" : "dropped");
}

/* HF's top-k keeps every token tied with the k-th; poot keeps exactly k, ties
 * to the lower id. */
static void check_top_k_ties(const case_run *r, const poot_json *c) {
  const int32_t k = (int32_t)param(c, "top_k");
  assert_int_equal(r->n_poot, (size_t)k);
  assert_true(subset(r->poot, r->hf, r->n));
  assert_true(r->n_hf > r->n_poot);
  const float cut = poot_min(r);
  for (uint32_t i = 0; i < r->n; i++)
    if (kept(r->hf, i) && !kept(r->poot, i)) {
      assert_true(r->hf[i] == cut);
      /* poot kept the lower ids of the tie */
      for (uint32_t j = i + 1; j < r->n; j++) assert_false(kept(r->poot, j) && r->poot[j] == cut);
    }
}

/* Inside a tie at top-p's cut, HF keeps the tied tokens its sort put last
 * (torch.sort is not stable), poot the lower ids: the same count, and the sets
 * differ only among tokens at the cut's logit. */
static void check_top_p_ties(const case_run *r, const poot_json *c) {
  (void)c;
  assert_int_equal(r->n_poot, r->n_hf);
  const float cut = poot_min(r);
  for (uint32_t i = 0; i < r->n; i++)
    if (kept(r->hf, i) != kept(r->poot, i)) assert_true(r->input[i] == cut);
}

/* HF's typical-p keeps every token whose score equals the cut's; poot cuts
 * inside the group. Tied logits have equal scores. */
static void check_typical_ties(const case_run *r, const poot_json *c) {
  (void)c;
  assert_true(subset(r->poot, r->hf, r->n));
  assert_true(r->n_hf > r->n_poot);
  for (uint32_t i = 0; i < r->n; i++) {
    if (!kept(r->hf, i) || kept(r->poot, i)) continue;
    bool tied = false;
    for (uint32_t j = 0; j < r->n && !tied; j++) tied = kept(r->poot, j) && r->input[j] == r->hf[i];
    if (!tied) fail_msg("%s: HF keeps token %u, tied with nothing poot keeps", r->name, i);
  }
}

/* HF's generate() tempers before truncating; poot truncates at temperature 1.
 * A temperature below 1 sharpens the distribution, so HF keeps a strict
 * subset (both keep a head of the same logit order); above 1, a superset. */
static void check_temperature_first(const case_run *r, const poot_json *c) {
  (void)c;
  if (r->temperature < 1.0f) {
    assert_true(subset(r->hf, r->poot, r->n));
    assert_true(r->n_hf < r->n_poot);
  } else {
    assert_true(subset(r->poot, r->hf, r->n));
    assert_true(r->n_hf > r->n_poot);
  }
}

/* HF's repetition penalty has no window: every id of input_ids is
 * penalized. poot penalizes the last repeat_last_n. The tokens seen only
 * before the window are where the two differ. */
static void check_no_window(const case_run *r, const poot_json *c) {
  const float penalty = (float)param(c, "repeat_penalty");
  bool *old = calloc(r->n, sizeof *old);
  assert_non_null(old);
  size_t n_old = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    if (r->history[i] == 0 || r->window[i] > 0) continue;
    old[i] = true;
    n_old++;
    const float l = r->input[i];
    assert_true(r->poot[i] == l);
    assert_true(r->hf[i] == (l < 0.0f ? l * penalty : l / penalty));
  }
  assert_true(n_old > 0);
  check_equal_sets(r);
  (void)check_values(r, old);
  free(old);
}

/* generate() runs top-p before typical-p; poot typical-p first. */
static void check_generate_order(const case_run *r, const poot_json *c) {
  (void)c;
  bool differ = false;
  for (uint32_t i = 0; i < r->n; i++) differ |= kept(r->poot, i) != kept(r->hf, i);
  assert_true(differ);
}

/* top_k = 0 with top-p: poot keeps at most the 1,024 most likely tokens
 * (its mass is the whole vocabulary's softmax, as HF's); HF keeps more when
 * more than 1,024 are needed to reach p. */
static void check_top_k_capacity(const case_run *r, const poot_json *c) {
  (void)c;
  assert_true(r->n_poot == POOT_SAMPLING_MAX_TOP_K);
  assert_true(subset(r->poot, r->hf, r->n));
  assert_true(r->n_hf > r->n_poot);
}

/* Every difference of definition the script may mark, with its check
 * (docs/sampling.md's table). */
static const struct difference {
  const char *mark;
  void (*check)(const case_run *r, const poot_json *c);
  bool values_differ; /* the check compares the logits itself */
} DIFFERENCES[] = {
    {"top_k_ties", check_top_k_ties, false},
    {"top_p_ties", check_top_p_ties, false},
    {"typical_ties", check_typical_ties, false},
    {"temperature_first", check_temperature_first, false},
    {"generate_order", check_generate_order, false},
    {"top_k_capacity", check_top_k_capacity, false},
    {"no_window", check_no_window, true},
};
#define N_DIFFERENCES (sizeof DIFFERENCES / sizeof DIFFERENCES[0])

static const struct difference *difference_of(const char *name, const char *mark) {
  for (size_t i = 0; i < N_DIFFERENCES; i++)
    if (strcmp(mark, DIFFERENCES[i].mark) == 0) return &DIFFERENCES[i];
  fail_msg("%s: unknown compare mark '%s' (update the test with the script)", name, mark);
  return NULL;
}

/* Runs every case whose compare mark is "equal" (equal = true) or every
 * other case (false); returns how many ran, counts each difference's cases
 * in seen (when not NULL) and the largest logit difference in out_worst. */
static size_t run_cases(const hf_file *f, bool equal, size_t *seen, double *out_worst) {
  size_t ran = 0;
  *out_worst = 0.0;
  for (size_t ci = 0; ci < f->cases->len; ci++) {
    const poot_json *c = f->cases->items[ci];
    const char *compare = member(c, "compare", POOT_JSON_STRING)->str;
    if ((strcmp(compare, "equal") == 0) != equal) continue;
    case_run r;
    run_case(f, c, &r);
    check_expect(&r);
    if (equal) {
      check_equal_sets(&r);
      *out_worst = fmax(*out_worst, check_values(&r, NULL));
    } else {
      const struct difference *d = difference_of(r.name, compare);
      d->check(&r, c);
      if (!d->values_differ) *out_worst = fmax(*out_worst, check_values(&r, NULL));
      if (seen) seen[d - DIFFERENCES]++;
      printf("  %-40s %-18s poot keeps %zu, HF %zu\n", r.name, compare, r.n_poot, r.n_hf);
    }
    free_case(&r);
    ran++;
  }
  return ran;
}

static void test_file(void **state) {
  hf_file *f = *state;
  const poot_json *src = member(f->root, "source", POOT_JSON_STRING);
  printf("  vectors from %s: %s\n", src->str, member(f->root, "label", POOT_JSON_STRING)->str);
  const poot_json *v = member(f->root, "versions", POOT_JSON_OBJECT);
  for (size_t i = 0; i < v->len; i++) printf("  %s %s\n", v->keys[i], v->items[i]->str);
  if (strcmp(src->str, "transformers") == 0) {
    member(v, "torch", POOT_JSON_STRING);
    member(v, "transformers", POOT_JSON_STRING);
  } else {
    assert_string_equal(src->str, "numpy");
  }
  /* The vocabulary sizes the script promises: 50, 1,000 and 32,000. */
  size_t sizes[3] = {0};
  for (size_t i = 0; i < f->vectors->len; i++) {
    size_t n = f->vectors->items[i]->len;
    sizes[0] += n == 50, sizes[1] += n == 1000, sizes[2] += n == 32000;
  }
  assert_true(sizes[0] >= 4 && sizes[1] >= 2 && sizes[2] >= 1);
  assert_true(f->cases->len >= 40);
}

static void test_equal(void **state) {
  double worst;
  size_t ran = run_cases(*state, true, NULL, &worst);
  printf(
      "  %zu cases where HF's and poot's definitions agree: equal survivors; logits within "
      "%.3g relative (tolerance %g)\n",
      ran, worst, TOL);
  assert_true(ran >= 30);
}

static void test_differences(void **state) {
  double worst;
  size_t seen[N_DIFFERENCES] = {0};
  assert_true(run_cases(*state, false, seen, &worst) >= N_DIFFERENCES);
  for (size_t i = 0; i < N_DIFFERENCES; i++)
    if (seen[i] == 0) fail_msg("no case shows the difference '%s'", DIFFERENCES[i].mark);
  printf("  survivors both keep: logits within %.3g relative\n", worst);
}

static int setup_members(void **state) {
  if (setup(state)) return -1;
  hf_file *f = *state;
  const poot_json *v = poot_json_get(f->root, "vectors");
  const poot_json *c = poot_json_get(f->root, "cases");
  if (!v || v->type != POOT_JSON_OBJECT || !c || c->type != POOT_JSON_ARRAY) return -1;
  f->vectors = v;
  f->cases = c;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file),
      cmocka_unit_test(test_equal),
      cmocka_unit_test(test_differences),
  };
  return cmocka_run_group_tests(tests, setup_members, teardown);
}
