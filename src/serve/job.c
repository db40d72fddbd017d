/* What both engines (engine.c, engine_batch.c) do with jobs: the bounded
 * queue they wait in, a generated id's bookkeeping, and the end of a job
 * (serve_impl.h "job"). */
#include <string.h>

#include "serve_impl.h"

/* ------------------------------------------------------------------ queue */

poot_status poot__serve_queue_init(poot__serve_queue *q, size_t cap, poot__serve_metrics *metrics) {
  memset(q, 0, sizeof *q);
  q->cap = cap ? cap : 64;
  q->metrics = metrics;
  q->ring = poot_calloc(q->cap, sizeof *q->ring);
  if (!q->ring) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the engine's queue");
  return NULL;
}

void poot__serve_queue_deinit(poot__serve_queue *q) {
  poot_free(q->ring);
  memset(q, 0, sizeof *q);
}

static void publish_depth(const poot__serve_queue *q) {
  atomic_store(&q->metrics->queue_depth, q->len);
}

poot_status poot__serve_queue_push(poot__serve_queue *q, poot__serve_job *job, bool stopping) {
  if (stopping) return poot_status_make(POOT_CANCELLED, "serve: the server is stopping");
  if (q->len == q->cap)
    return poot_status_make(POOT_CAPACITY, "the queue is full (%zu requests wait); retry later",
                            q->cap);
  job->enqueued_ns = poot_time_ns();
  q->ring[(q->head + q->len) % q->cap] = job;
  q->len++;
  publish_depth(q);
  return NULL;
}

poot__serve_job *poot__serve_queue_peek(const poot__serve_queue *q) {
  return q->len ? q->ring[q->head] : NULL;
}

poot__serve_job *poot__serve_queue_pop(poot__serve_queue *q) {
  if (!q->len) return NULL;
  poot__serve_job *job = q->ring[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  publish_depth(q);
  return job;
}

size_t poot__serve_queue_purge_cancelled(poot__serve_queue *q, poot__serve_job **out) {
  size_t kept = 0, n = 0;
  for (size_t i = 0; i < q->len; i++) {
    poot__serve_job *j = q->ring[(q->head + i) % q->cap];
    if (atomic_load(&j->cancelled))
      out[n++] = j;
    else
      q->ring[(q->head + kept++) % q->cap] = j;
  }
  q->len = kept;
  publish_depth(q);
  return n;
}

void poot__serve_queue_drain(poot__serve_queue *q) {
  for (poot__serve_job *job; (job = poot__serve_queue_pop(q));)
    job->sink.on_job_end(job->sink_ctx,
                         poot_status_make(POOT_CANCELLED, "serve: the server is stopping"));
}

/* -------------------------------------------------------------------- job */

bool poot__serve_job_token(poot__serve_metrics *m, poot__serve_job *job, poot__serve_ids *gen,
                           poot_token id) {
  if (gen->n == gen->cap) {
    size_t n = gen->cap ? 2 * gen->cap : 64;
    poot_token *g = poot_realloc(gen->ids, n * sizeof *g);
    if (!g) return false;
    gen->ids = g;
    gen->cap = n;
  }
  gen->ids[gen->n++] = id;
  uint64_t now = poot_time_ns();
  if (!job->first_token_ns) {
    job->first_token_ns = now;
    poot__serve_metrics_observe(m, &m->ttft, (double)(now - job->enqueued_ns) * 1e-9);
  } else {
    poot__serve_metrics_observe(m, &m->itl, (double)(now - job->last_token_ns) * 1e-9);
  }
  job->last_token_ns = now;
  job->generated_tokens++;
  return true;
}

void poot__serve_job_end(poot__serve_metrics *m, poot__serve_job *job, poot_status status) {
  poot__serve_metrics_tokens(m, job->prompt_tokens, job->generated_tokens);
  job->sink.on_job_end(job->sink_ctx, status);
}

poot_status poot__serve_choice_sampling(const poot__serve_job *job, uint32_t index,
                                        poot_sampling_params *out) {
  *out = job->sampling;
  uint64_t seed = 0;
  POOT_TRY(poot_sampling_seed_resolve(out, &seed));
  /* n choices of one seeded request differ, and repeat */
  out->seed = (seed + index) & 0x7fffffffffffffffull;
  return NULL;
}

void poot__serve_recovered(poot__serve_metrics *m, poot_status_code code, bool rebuild,
                           poot_status st) {
  poot_log(POOT_LOG_WARN, "serve: recovered from %s by %s%s%s", poot_status_code_name(code),
           rebuild ? "a new device context" : "a reset", st ? ": failed: " : "",
           st ? poot_status_message(st) : "");
  if (!st) poot__serve_metrics_recovery(m, rebuild, false);
}

bool poot__serve_is_device_fault(poot_status_code code) {
  return code == POOT_KERNEL_FAULT || code == POOT_NEEDS_RESET || code == POOT_POISONED ||
         code == POOT_DEVICE_LOST || code == POOT_TIMEOUT;
}
