/* batch_masks.c — the grammar rows' masks of a step, filled in parallel and
 * off the critical path (docs/batching.md "Penalties and grammars per
 * row"). At the start of poot_batch_run_plan every emitting request with a
 * grammar is handed to the runner's mask workers (the driver's worker
 * threads, driver_step.c; as many as the machine has cores less one, at
 * most BATCH_MASK_WORKERS, started with the first grammar request), which
 * fill each request's own mask from its matcher while the runner's thread
 * replays the step's prompt chunks and greedy rows; then the runner's
 * thread joins in, and waits for the workers before the first replay of a
 * kind with a mask. A mask is a function of its matcher alone (different
 * matchers may run on different threads, poot/llm/grammar.h), so the masks,
 * and the ids, are those of one thread. */
#include <stdatomic.h>
#include <unistd.h>

#include "batch_impl.h"

struct batch_masks {
  driver_worker *workers[BATCH_MASK_WORKERS];
  int n_workers;
  /* The step's job: its requests, the next one to take, whether posted. */
  batch_req **reqs;
  int32_t n;
  atomic_int next;
  bool posted;
  const poot_grammar_vocab *vocab;
  int64_t words;
};

poot_status poot__batch_masks_create(int32_t max_rows, batch_masks **out) {
  *out = NULL;
  batch_masks *m = poot_calloc(1, sizeof *m);
  if (!m) return OOM("mask workers");
  m->reqs = poot_calloc((size_t)max_rows, sizeof *m->reqs);
  if (!m->reqs) {
    poot_free(m);
    return OOM("mask workers");
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int want = cores > 1 ? (int)(cores - 1) : 1;
  if (want > BATCH_MASK_WORKERS) want = BATCH_MASK_WORKERS;
  for (int i = 0; i < want; i++) {
    poot_status st = poot__driver_worker_start(&m->workers[i]);
    if (st) {
      poot__batch_masks_destroy(m);
      return st;
    }
    m->n_workers++;
  }
  *out = m;
  return NULL;
}

void poot__batch_masks_destroy(batch_masks *m) {
  if (!m) return;
  for (int i = 0; i < m->n_workers; i++) poot__driver_worker_stop(m->workers[i]);
  poot_free(m->reqs);
  poot_free(m);
}

/* Takes requests until none is left (on each worker and the runner's
 * thread); the first failure is returned, the other masks still filled. */
static poot_status fill_job(void *ctx) {
  batch_masks *m = ctx;
  poot_status first = NULL;
  for (;;) {
    const int i = atomic_fetch_add(&m->next, 1);
    if (i >= m->n) break;
    batch_req *q = m->reqs[i];
    poot_status st = poot_grammar_matcher_fill_mask(q->gm, m->vocab, q->mask, (size_t)m->words);
    if (!st) {
      q->mask_ready = true;
    } else if (!first) {
      first = st;
    } else {
      poot_status_free(st);
    }
  }
  return first;
}

void poot__batch_masks_post(poot_batch *b, const poot_scheduler_plan *plan) {
  batch_masks *m = b->masks;
  if (!m) return;
  m->n = 0;
  for (int32_t i = 0; i < plan->n_work; i++) {
    batch_req *q = plan->work[i].emits ? poot__batch_sample_get(b, plan->work[i].caller_id) : NULL;
    if (q && q->gm && !q->mask_ready) m->reqs[m->n++] = q;
  }
  if (m->n == 0) return;
  b->stats.grammar_masks += (uint64_t)m->n;
  if ((uint64_t)m->n > b->stats.grammar_masks_max) b->stats.grammar_masks_max = (uint64_t)m->n;
  m->vocab = b->gvocab;
  m->words = b->mask_words;
  atomic_store(&m->next, 0);
  /* no more workers than masks: one mask is one worker's */
  const int k = m->n < m->n_workers ? m->n : m->n_workers;
  for (int i = 0; i < k; i++) poot__driver_worker_post(m->workers[i], fill_job, m);
  m->posted = true;
}

poot_status poot__batch_masks_wait(poot_batch *b) {
  batch_masks *m = b->masks;
  if (!m || !m->posted) return NULL;
  const uint64_t t0 = poot_time_ns();
  poot_status first = fill_job(m); /* the runner's thread joins in */
  const int k = m->n < m->n_workers ? m->n : m->n_workers;
  for (int i = 0; i < k; i++) {
    poot_status st = poot__driver_worker_wait(m->workers[i]);
    if (st && !first) {
      first = st;
    } else {
      poot_status_free(st);
    }
  }
  m->posted = false;
  m->n = 0;
  b->stats.sample_host_ns += poot_time_ns() - t0;
  return first;
}
