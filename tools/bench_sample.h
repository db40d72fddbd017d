/* bench_sample.h — `poot bench --sample`: sampled decode beside greedy
 * (support_bench_sample.c). */
#ifndef POOT_TOOLS_BENCH_SAMPLE_H
#define POOT_TOOLS_BENCH_SAMPLE_H

#include "poot/llm/driver.h"

typedef struct bench_sample {
  long long steps;         /* decode steps of each run */
  double greedy_us;        /* per step, greedy through the generation loop */
  double sample_us;        /* llama.cpp's default chain plus penalties */
  double grammar_us;       /* the same with a JSON grammar's mask */
  double mask_us;          /* mask time per step (on the mask thread) */
  double mask_wait_us;     /* per step, what the mask added after the model's step */
  long long grammar_steps; /* steps of the grammar run */
} bench_sample;

/* Generates `nd` tokens after `prompt` three times — greedy, sampled,
 * sampled under a JSON grammar (an array of JSON values that never closes, so
 * the mask runs every step) — and reports µs per decode step. With hook
 * non-NULL, then `prof_n` eager steps of the sampled and the grammar runs
 * report each dispatch to hook(ctx_sample) and hook(ctx_grammar). */
POOT_MUST_USE poot_status poot_bench_sample(poot_driver *drv, const poot_token *prompt,
                                            size_t n_prompt, long long nd, bench_sample *out);
POOT_MUST_USE poot_status poot_bench_sample_profile(poot_driver *drv, const poot_token *prompt,
                                                    size_t n_prompt, long long prof_n,
                                                    poot_exec_dispatch_fn hook, void *ctx_sample,
                                                    void *ctx_grammar);

#endif /* POOT_TOOLS_BENCH_SAMPLE_H */
