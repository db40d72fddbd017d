/* The property test of the graph passes (DESIGN §4.1): on a few thousand
 * random well-typed graphs with random inputs, every pass and the default
 * pipeline leave poot_eval's results bit-identical (output, states, env,
 * NaN payloads included; or the same fault), produce graphs that verify and
 * whose text form round-trips, and leave their input untouched.
 *
 * POOT_PASSES_RANDOM_COUNT (default 3000; 1000 under
 * AddressSanitizer) and POOT_PASSES_RANDOM_SEED
 * (default 1) select the graphs; a failure prints the seed and the graphs. */
#include <stdlib.h>

#include "poot/compile_passes.h"
#include "poot_test.h"
#include "passes_gen.h"

typedef poot_status (*pass_fn)(const poot_graph *, const poot_pass_options *, poot_graph **,
                               uint32_t *);

static poot_status run_default(const poot_graph *g, const poot_pass_options *o, poot_graph **out,
                               uint32_t *changes) {
  poot_pass_report rep;
  poot_status st = poot_pass_run_default(g, o, out, &rep);
  *changes = rep.canonicalized + rep.folded + rep.merged + rep.removed;
  return st;
}

static const struct {
  const char *name;
  pass_fn fn;
} k_passes[] = {{"canonicalize", poot_pass_canonicalize},
                {"constant_fold", poot_pass_constant_fold},
                {"cse", poot_pass_cse},
                {"dce", poot_pass_dce},
                {"run_default", run_default}};
#define NPASSES (sizeof k_passes / sizeof k_passes[0])

/* Sanitizer builds run a third of the graphs (they are several times slower). */
#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_COUNT 1000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEFAULT_COUNT 1000
#endif
#endif
#ifndef DEFAULT_COUNT
#define DEFAULT_COUNT 3000
#endif

static uint64_t env_u64(const char *name, uint64_t def) {
  const char *s = getenv(name);
  return s && *s ? strtoull(s, NULL, 10) : def;
}

static void dump(const char *what, const poot_graph *g) {
  char *t = NULL;
  poot_status st = poot_graph_to_text(g, &t);
  if (!st) fprintf(stderr, "--- %s:\n%s", what, t);
  poot_status_free(st);
  poot_free(t);
}

static void test_random_graphs(void **state) {
  (void)state;
  const uint64_t count = env_u64("POOT_PASSES_RANDOM_COUNT", DEFAULT_COUNT);
  const uint64_t seed0 = env_u64("POOT_PASSES_RANDOM_SEED", 1);
  uint64_t changes[NPASSES] = {0}, faults = 0, unsupported = 0, nodes_in = 0, nodes_out = 0;
  uint32_t skipped_total = 0, failures = 0;
  poot_pass_options opt;
  poot_pass_options_init(&opt);
  const uint64_t t0 = poot_time_ns();
  for (uint64_t i = 0; i < count && failures < 3; i++) {
    const uint64_t seed = seed0 + i;
    poot_graph *g = NULL;
    uint32_t skipped = 0;
    POOT_ASSERT_OK(pg_random_graph(seed, &g, &skipped));
    skipped_total += skipped;
    nodes_in += poot_graph_node_count(g);
    uint64_t hash_before = 0, hash_after = 0;
    POOT_ASSERT_OK(poot_graph_hash(g, &hash_before));
    pg_inputs in[2];
    POOT_ASSERT_OK(pg_make_inputs(g, seed, &in[0]));
    POOT_ASSERT_OK(pg_make_inputs(g, seed + 0x1000000, &in[1]));
    /* Small fold limits sometimes, to exercise the size rule. */
    opt.fold_max_bytes = (seed % 5 == 0) ? 8 : 65536;
    opt.fold_generators = (seed % 3 == 0);
    for (size_t p = 0; p < NPASSES; p++) {
      poot_graph *out = NULL;
      uint32_t c = 0;
      POOT_ASSERT_OK(k_passes[p].fn(g, &opt, &out, &c));
      changes[p] += c;
      if (p == NPASSES - 1) nodes_out += poot_graph_node_count(out);
      char *m = NULL;
      poot_status st = poot_graph_verify(out);
      if (st) {
        m = poot_strdup(poot_status_message(st));
        poot_status_free(st);
      }
      if (!m) m = pg_check_text(out);
      for (int k = 0; k < 2 && !m; k++) {
        poot_status_code code = POOT_OK;
        m = pg_compare(g, out, &in[k], &code);
        if (!m && p == 0) {
          faults += code == POOT_KERNEL_FAULT;
          unsupported += code == POOT_UNSUPPORTED;
        }
      }
      if (!m && p == NPASSES - 1) {
        /* The pipeline stops at a fixed point: a second run changes nothing. */
        poot_graph *again = NULL;
        uint32_t c2 = 0;
        POOT_ASSERT_OK(run_default(out, &opt, &again, &c2));
        if (c2) {
          m = poot_strdup("run_default is not at a fixed point");
          dump("second run", again);
        }
        poot_graph_destroy(again);
      }
      if (m) {
        fprintf(stderr, "seed %llu, pass %s: %s\n", (unsigned long long)seed, k_passes[p].name, m);
        dump("input graph", g);
        dump("output graph", out);
        failures++;
        poot_free(m);
      }
      poot_graph_destroy(out);
    }
    POOT_ASSERT_OK(poot_graph_hash(g, &hash_after));
    assert_true(hash_before == hash_after); /* the input is untouched */
    pg_inputs_free(&in[0]);
    pg_inputs_free(&in[1]);
    poot_graph_destroy(g);
  }
  const double secs = (double)(poot_time_ns() - t0) / 1e9;
  printf("random graphs: %llu (seeds %llu..), %.1f s; nodes %llu -> %llu after run_default\n",
         (unsigned long long)count, (unsigned long long)seed0, secs, (unsigned long long)nodes_in,
         (unsigned long long)nodes_out);
  printf("changes: canonicalize %llu, constant_fold %llu, cse %llu, dce %llu, run_default %llu\n",
         (unsigned long long)changes[0], (unsigned long long)changes[1],
         (unsigned long long)changes[2], (unsigned long long)changes[3],
         (unsigned long long)changes[4]);
  printf("evaluations that fault: %llu, unsupported: %llu; generator calls dropped: %u\n",
         (unsigned long long)faults, (unsigned long long)unsupported, skipped_total);
  assert_int_equal(failures, 0);
  /* The generator must reach every pass's rules, or the test proves little. */
  for (size_t p = 0; p < NPASSES; p++) assert_true(changes[p] > count / 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_graphs)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
