/* support_bench_batch.c — `poot bench --batch B` (bench_batch.h): decode
 * throughput of B sequences stepping together through poot_batch. */
#include <string.h>

#include "bench_batch.h"

poot_status poot_bench_batch(poot_executor *ex, poot_model *model, int32_t batch,
                             const int32_t *prompt, long long n, long long nd, poot_dtype kv_dtype,
                             bool sample, bench_batch *out) {
  memset(out, 0, sizeof *out);
  if (batch < 1 || batch > POOT_BATCH_MAX_BATCH)
    return poot_status_make(POOT_INVALID_ARGUMENT, "bench: --batch %d is outside [1, %d]", batch,
                            POOT_BATCH_MAX_BATCH);
  if (n < 1 || nd < 1) return poot_status_make(POOT_INVALID_ARGUMENT, "bench: empty prompt or -n");
  const poot_model_config *c = poot_model_get_config(model);
  poot_batch_options o = poot_batch_options_default();
  o.max_batch = batch;
  o.max_seq_len = (n + nd + 1 + 15) / 16 * 16;
  if (c->context_length > 0 && o.max_seq_len > c->context_length)
    return poot_status_make(POOT_CAPACITY,
                            "bench: -p %lld and -n %lld need %lld positions; the "
                            "model has %lld",
                            n, nd, (long long)o.max_seq_len, (long long)c->context_length);
  o.prefill_chunk = n >= 16 ? 16 : 1;
  if (n >= 512 && o.max_seq_len >= 512) o.prefill_chunk = 512;
  o.kv_dtype = kv_dtype;
  o.no_prefix_cache = true;
  /* Every sequence's blocks, plus one spare each. */
  o.num_blocks = batch * (int32_t)(o.max_seq_len / 16 + 1);
  o.program = "bench";
  poot_batch *b = NULL;
  POOT_TRY(poot_batch_create(ex, model, &o, &b));
  poot_status st = NULL;
  int32_t *ids = poot_calloc((size_t)n, sizeof *ids);
  if (!ids) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "bench: prompt");
    goto done;
  }
  uint64_t t0 = poot_time_ns();
  if ((st = poot_batch_prepare(b))) goto done;
  out->capture_s = (double)(poot_time_ns() - t0) * 1e-9;
  for (int32_t i = 0; i < batch; i++) {
    memcpy(ids, prompt, (size_t)n * sizeof *ids);
    ids[0] = (int32_t)((ids[0] + i) % c->vocab_size);
    poot_sampling_params sp;
    poot_sampling_params_init(&sp);
    sp.seed = 1 + (uint64_t)i;
    sp.repeat_penalty = 1.1f;
    sp.presence_penalty = 0.1f;
    sp.frequency_penalty = 0.1f;
    sp.repeat_last_n = -1; /* the whole history: the widest window */
    sp.ignore_eos = true;  /* every sequence decodes every timed step */
    poot_batch_request r = {.prompt = ids,
                            .n_prompt = n,
                            .max_new_tokens = nd + 1,
                            .caller_id = (uint64_t)i,
                            .sampling = sample ? &sp : NULL};
    if ((st = poot_batch_submit(b, &r))) goto done;
  }
  /* The prompts: until every sequence decodes. */
  t0 = poot_time_ns();
  poot_batch_step_info info;
  do {
    if ((st = poot_batch_step(b, NULL, NULL, &info))) goto done;
  } while (!info.idle && info.n_decode < batch);
  out->prefill_s = (double)(poot_time_ns() - t0) * 1e-9;
  out->decode_batch = info.decode_batch;
  poot_exec_stats s0, s1;
  poot_exec_stats_get(ex, &s0);
  poot_batch_stats b0, b1;
  poot_batch_get_stats(b, &b0);
  t0 = poot_time_ns();
  long long steps = 0;
  while (steps < nd - 1 && poot_batch_busy(b)) {
    if ((st = poot_batch_step(b, NULL, NULL, &info))) goto done;
    if (info.n_decode != batch) break; /* someone finished */
    steps++;
  }
  const double wall = (double)(poot_time_ns() - t0) * 1e-9;
  poot_exec_stats_get(ex, &s1);
  poot_batch_get_stats(b, &b1);
  out->sampled = sample;
  out->sample_host_us =
      steps ? (double)(b1.sample_host_ns - b0.sample_host_ns) / 1e3 / (double)steps : 0;
  out->batch = batch;
  out->n_prompt = n;
  out->steps = steps;
  out->step_ms = steps ? wall * 1e3 / (double)steps : 0;
  out->tok_s = wall > 0 ? (double)(batch * steps) / wall : 0;
  out->device_ms = steps && s1.device_timed
                       ? (double)(s1.device_ns_total - s0.device_ns_total) / 1e6 / (double)steps
                       : 0;
  poot_batch_info bi;
  poot_batch_get_info(b, &bi);
  out->num_blocks = bi.num_blocks;
  out->block_size = bi.block_size;
  out->kv_bytes = bi.kv_bytes;
  out->kv_dtype = bi.kv_dtype;
done:
  poot_free(ids);
  poot_batch_destroy(b);
  return st;
}
