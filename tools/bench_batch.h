/* bench_batch.h — `poot bench --batch B`: B sequences decoding together
 * through the batched runner (support_bench_batch.c; docs/batching.md
 * "Benchmarking"). */
#ifndef POOT_TOOLS_BENCH_BATCH_H
#define POOT_TOOLS_BENCH_BATCH_H

#include "poot/exec.h"
#include "poot/llm/batch.h"
#include "poot/llm/model.h"

typedef struct bench_batch {
  int32_t batch;        /* B sequences */
  int32_t decode_batch; /* the decode entry that ran them (≥ B) */
  long long n_prompt;   /* prompt ids per sequence */
  long long steps;      /* timed decode steps (every sequence decoding) */
  double capture_s;     /* the runner's entries compiled and captured */
  double prefill_s;     /* the B prompts until each had its first id */
  double step_ms;       /* wall time per timed decode step */
  double tok_s;         /* B · steps / their wall time */
  double device_ms;     /* device time per timed step (0: the device cannot time) */
  int32_t num_blocks, block_size;
  uint64_t kv_bytes;
  poot_dtype kv_dtype;
  bool sampled;          /* --sample: every sequence sampled and penalized */
  double sample_host_us; /* host time of the sampled rows per timed step (poot_batch_stats) */
} bench_batch;

/* Creates a runner on `ex` (no weights loaded; unloaded after), B sequences
 * of the prompt `prompt` (n ids; row b's first id is varied so no prefix is
 * shared), nd + 1 new ids each: the prompts run first, then nd decode
 * steps of all B together are timed. With `sample` every sequence samples
 * (llama.cpp's defaults, seed 1 + b, ignore_eos) with the three penalties
 * over its whole history (the widest window), so the steps run the sampled
 * kind's rows. INVALID_ARGUMENT for B < 1; the runner's errors. */
POOT_MUST_USE poot_status poot_bench_batch(poot_executor *ex, poot_model *model, int32_t batch,
                                           const int32_t *prompt, long long n, long long nd,
                                           poot_dtype kv_dtype, bool sample, bench_batch *out);

#endif /* POOT_TOOLS_BENCH_BATCH_H */
