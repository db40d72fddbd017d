/* `poot bench --sample` (bench_sample.h): the cost of sampling on the device
 * and of a grammar's mask, per decode step, against greedy in the same loop. */
#include <string.h>

#include "bench_sample.h"

/* The benchmark's start rule over poot_json_grammar_any's rules: an array of
 * JSON values that never closes, so every step has a mask to compute. */
static const char BENCH_RULE[] = "\nbench ::= \"[\" ws json-value (ws \",\" ws json-value)*\n";

/* One run: µs per step after the first token (the prompt's). */
static poot_status run(poot_driver *drv, const poot_token *prompt, size_t n_prompt, long long nd,
                       const poot_sampling_params *p, const poot_grammar *g, double *us,
                       poot_driver_generate_result *out) {
  poot_driver_generate_options o = poot_driver_generate_options_default();
  o.max_new_tokens = nd + 1;
  o.ignore_stop = true;
  o.no_text = true;
  o.sampling = p;
  o.grammar = g;
  POOT_TRY(poot_driver_generate_ids(drv, prompt, n_prompt, &o, NULL, NULL, out));
  *us = out->n_ids > 1 ? out->decode_s * 1e6 / (double)(out->n_ids - 1) : 0.0;
  return NULL;
}

/* The benchmark's sampling: llama.cpp's defaults plus penalties. */
static void bench_params(poot_sampling_params *p) {
  poot_sampling_params_init(p);
  p->seed = 1;
  p->repeat_penalty = 1.1f;
  p->presence_penalty = 0.1f;
  p->frequency_penalty = 0.1f;
  p->ignore_eos = true;
}

static poot_status bench_grammar(poot_grammar **out) {
  char *any = NULL;
  size_t n = 0;
  POOT_TRY(poot_json_grammar_any(&any, &n));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_append(&sb, any, n);
  poot_strbuf_append(&sb, BENCH_RULE, sizeof BENCH_RULE - 1);
  poot_free(any);
  poot_status st = poot_strbuf_status(&sb);
  poot_grammar_options go = poot_grammar_options_default();
  go.start_rule = "bench";
  if (!st) st = poot_grammar_compile(sb.data, sb.len, &go, out);
  poot_strbuf_deinit(&sb);
  return st;
}

poot_status poot_bench_sample_profile(poot_driver *drv, const poot_token *prompt, size_t n_prompt,
                                      long long prof_n, poot_exec_dispatch_fn hook,
                                      void *ctx_sample, void *ctx_grammar) {
  poot_sampling_params p;
  bench_params(&p);
  poot_grammar *g = NULL;
  POOT_TRY(bench_grammar(&g));
  poot_driver_generate_result r;
  double us;
  poot_driver_set_eager(drv, true);
  poot_driver_set_dispatch_hook(drv, hook, ctx_sample);
  poot_status st = run(drv, prompt, n_prompt, prof_n - 1, &p, NULL, &us, &r);
  poot_driver_generate_result_deinit(&r);
  poot_driver_set_dispatch_hook(drv, hook, ctx_grammar);
  if (!st) st = run(drv, prompt, n_prompt, prof_n - 1, &p, g, &us, &r);
  poot_driver_generate_result_deinit(&r);
  poot_driver_set_dispatch_hook(drv, NULL, NULL);
  poot_driver_set_eager(drv, false);
  poot_grammar_destroy(g);
  return st;
}

poot_status poot_bench_sample(poot_driver *drv, const poot_token *prompt, size_t n_prompt,
                              long long nd, bench_sample *out) {
  memset(out, 0, sizeof *out);
  out->steps = nd;
  poot_sampling_params p;
  bench_params(&p);
  poot_grammar *g = NULL;
  POOT_TRY(bench_grammar(&g));
  poot_driver_generate_result r;
  poot_status st = NULL;
  /* one warm-up of each (entries added, masks' caches warm), then the runs */
  for (int pass = 0; pass < 2 && !st; pass++) {
    memset(&r, 0, sizeof r);
    st = run(drv, prompt, n_prompt, nd, NULL, NULL, &out->greedy_us, &r);
    poot_driver_generate_result_deinit(&r);
    if (!st) st = run(drv, prompt, n_prompt, nd, &p, NULL, &out->sample_us, &r);
    poot_driver_generate_result_deinit(&r);
    if (!st) st = run(drv, prompt, n_prompt, nd, &p, g, &out->grammar_us, &r);
    if (!st && r.n_ids > 1) {
      out->grammar_steps = (long long)r.n_ids - 1;
      out->mask_us = r.mask_s * 1e6 / (double)r.n_ids;
      out->mask_wait_us = r.mask_wait_s * 1e6 / (double)r.n_ids;
    }
    poot_driver_generate_result_deinit(&r);
  }
  poot_grammar_destroy(g);
  return st;
}
