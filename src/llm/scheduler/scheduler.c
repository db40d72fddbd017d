/* The scheduler (include/poot/llm/scheduler.h): requests, the queue, step
 * results, cancellation and reports. Planning is scheduler_plan.c.
 * docs/batching.md. */
#include <string.h>

#include "scheduler_impl.h"

/* ------------------------------------------------------------------ lists */

void poot__sched_list_push_back(poot_scheduler *s, sched_list *l, int32_t r) {
  sched_req *q = &s->reqs[r];
  q->prev = l->tail;
  q->next = -1;
  if (l->tail >= 0)
    s->reqs[l->tail].next = r;
  else
    l->head = r;
  l->tail = r;
  l->n++;
}

void poot__sched_list_push_front(poot_scheduler *s, sched_list *l, int32_t r) {
  sched_req *q = &s->reqs[r];
  q->prev = -1;
  q->next = l->head;
  if (l->head >= 0)
    s->reqs[l->head].prev = r;
  else
    l->tail = r;
  l->head = r;
  l->n++;
}

void poot__sched_list_remove(poot_scheduler *s, sched_list *l, int32_t r) {
  sched_req *q = &s->reqs[r];
  if (q->prev >= 0)
    s->reqs[q->prev].next = q->next;
  else
    l->head = q->next;
  if (q->next >= 0)
    s->reqs[q->next].prev = q->prev;
  else
    l->tail = q->prev;
  q->prev = q->next = -1;
  l->n--;
}

void poot__sched_running_remove(poot_scheduler *s, int32_t r) {
  int32_t i = 0;
  while (i < s->n_running && s->running[i] != r) i++;
  if (i == s->n_running) return;
  memmove(s->running + i, s->running + i + 1, (size_t)(s->n_running - i - 1) * sizeof(int32_t));
  s->n_running--;
}

/* ------------------------------------------------------------- lifecycle */

static poot_status check_options(const poot_scheduler_options *o, const poot_kv_pool *pool) {
  poot_kv_pool_stats ks;
  poot_kv_pool_get_stats(pool, &ks);
  if (o->max_batch < 1 || o->max_requests < 1 || o->prefill_chunk < 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler: max_batch = %d and max_requests = %d must be at least 1 "
                            "and prefill_chunk = %d at least 0",
                            o->max_batch, o->max_requests, o->prefill_chunk);
  if (o->token_budget < o->max_batch)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler: token_budget = %d is below max_batch = %d (every running "
                            "sequence's decode token must fit in a step, with one token to spare "
                            "for a prompt)",
                            o->token_budget, o->max_batch);
  if (ks.seqs_open != 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler: the kv pool has %d sequences open; the scheduler needs a "
                            "pool of its own",
                            ks.seqs_open);
  return POOT_OK_STATUS;
}

static bool sched_alloc(poot_scheduler *s) {
  s->reqs = poot_calloc((size_t)s->opt.max_requests, sizeof *s->reqs);
  s->free_req = poot_calloc((size_t)s->opt.max_requests, sizeof *s->free_req);
  s->running = poot_calloc((size_t)s->opt.max_batch, sizeof *s->running);
  s->work = poot_calloc((size_t)s->opt.max_batch, sizeof *s->work);
  s->work_req = poot_calloc((size_t)s->opt.max_batch, sizeof *s->work_req);
  return s->reqs && s->free_req && s->running && s->work && s->work_req;
}

poot_status poot_scheduler_create(poot_kv_pool *pool, const poot_scheduler_options *options,
                                  poot_scheduler **out_scheduler) {
  *out_scheduler = NULL;
  poot_scheduler_options o = options ? *options : poot_scheduler_options_default();
  if (!pool) return poot_status_make(POOT_INVALID_ARGUMENT, "scheduler: no kv pool given");
  POOT_TRY(check_options(&o, pool));
  poot_kv_pool_options po;
  poot_kv_pool_get_options(pool, &po);
  if (po.max_seqs < o.max_batch)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler: max_batch = %d needs a kv pool with at least as many "
                            "sequences (max_seqs)",
                            o.max_batch);
  poot_scheduler *s = poot_calloc(1, sizeof *s);
  if (!s) return poot_status_make(POOT_OUT_OF_MEMORY, "scheduler: no memory");
  s->pool = pool;
  s->opt = o;
  if (s->opt.prefill_chunk == 0) s->opt.prefill_chunk = o.token_budget;
  if (!sched_alloc(s)) {
    poot_scheduler_destroy(s);
    return poot_status_make(POOT_OUT_OF_MEMORY, "scheduler: no memory for %d request slots",
                            o.max_requests);
  }
  s->block_size = po.block_size;
  s->limit_pool = (int64_t)po.num_blocks * po.block_size;
  s->limit = po.max_seq_len < s->limit_pool ? po.max_seq_len : s->limit_pool;
  for (int32_t i = 0; i < o.max_requests; i++) s->free_req[i] = o.max_requests - 1 - i;
  s->n_free_req = o.max_requests;
  s->queue = s->finished = (sched_list){-1, -1, 0};
  *out_scheduler = s;
  return POOT_OK_STATUS;
}

void poot_scheduler_destroy(poot_scheduler *s) {
  if (!s) return;
  for (int32_t i = 0; s->reqs && i < s->opt.max_requests; i++) {
    if (s->reqs[i].seq >= 0 && s->reqs[i].state == POOT_SCHEDULER_RUNNING)
      poot_kv_pool_seq_close(s->pool, s->reqs[i].seq);
    poot_free(s->reqs[i].history);
  }
  poot_free(s->reqs);
  poot_free(s->free_req);
  poot_free(s->running);
  poot_free(s->work);
  poot_free(s->work_req);
  poot_free(s);
}

/* --------------------------------------------------------------- requests */

static int32_t find_req(const poot_scheduler *s, uint64_t caller_id) {
  for (int32_t i = 0; i < s->opt.max_requests; i++)
    if (s->reqs[i].state != 0 && s->reqs[i].caller_id == caller_id) return i;
  return -1;
}

static poot_status check_request(const poot_scheduler *s, const poot_scheduler_request *rq) {
  if (rq->n_prompt < 1 || !rq->prompt || rq->max_new_tokens < 1)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler submit %llu: n_prompt = %lld (prompt %s) and "
                            "max_new_tokens = %lld must be at least 1",
                            (unsigned long long)rq->caller_id, (long long)rq->n_prompt,
                            rq->prompt ? "given" : "NULL", (long long)rq->max_new_tokens);
  if (rq->n_prompt >= s->limit)
    return poot_status_make(POOT_CAPACITY,
                            "scheduler submit %llu: a prompt of %lld tokens and one new token "
                            "cannot fit: a sequence holds at most %lld tokens (the smaller of "
                            "max_seq_len and the pool's %lld)",
                            (unsigned long long)rq->caller_id, (long long)rq->n_prompt,
                            (long long)s->limit, (long long)s->limit_pool);
  if (find_req(s, rq->caller_id) >= 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler submit: caller_id %llu is already in use (queued, running "
                            "or finished and not taken)",
                            (unsigned long long)rq->caller_id);
  if (s->n_free_req == 0)
    return poot_status_make(POOT_CAPACITY,
                            "scheduler submit %llu: all %d request slots are held (take finished "
                            "requests or raise max_requests)",
                            (unsigned long long)rq->caller_id, s->opt.max_requests);
  return POOT_OK_STATUS;
}

static void info_init(poot_scheduler_request_info *info, uint64_t caller_id, int64_t n_prompt,
                      uint64_t step) {
  memset(info, 0, sizeof *info);
  info->caller_id = caller_id;
  info->state = POOT_SCHEDULER_QUEUED;
  info->n_prompt = n_prompt;
  info->submit_step = step;
  info->first_token_step = info->finish_step = UINT64_MAX;
  info->submit_ns = poot_time_ns();
}

poot_status poot_scheduler_submit(poot_scheduler *s, const poot_scheduler_request *rq) {
  POOT_TRY(check_request(s, rq));
  int64_t cap =
      rq->max_new_tokens > s->limit - rq->n_prompt ? s->limit : rq->n_prompt + rq->max_new_tokens;
  int32_t *history = poot_malloc((size_t)cap * sizeof *history);
  if (!history)
    return poot_status_make(POOT_OUT_OF_MEMORY,
                            "scheduler submit %llu: no memory for a history of %lld tokens",
                            (unsigned long long)rq->caller_id, (long long)cap);
  int32_t r = s->free_req[--s->n_free_req];
  sched_req *q = &s->reqs[r];
  *q = (sched_req){.state = POOT_SCHEDULER_QUEUED,
                   .caller_id = rq->caller_id,
                   .arrival = s->next_arrival++,
                   .history = history,
                   .n_history = rq->n_prompt,
                   .cap_history = cap,
                   .n_prompt = rq->n_prompt,
                   .max_new = rq->max_new_tokens,
                   .prefix_salt = rq->prefix_salt,
                   .seq = -1,
                   .work = -1};
  memcpy(history, rq->prompt, (size_t)rq->n_prompt * sizeof *history);
  info_init(&q->info, rq->caller_id, rq->n_prompt, s->steps);
  poot__sched_list_push_back(s, &s->queue, r);
  s->submitted++;
  return POOT_OK_STATUS;
}

void poot__sched_finish(poot_scheduler *s, int32_t r, poot_scheduler_finish reason) {
  sched_req *q = &s->reqs[r];
  if (q->state == POOT_SCHEDULER_QUEUED) poot__sched_list_remove(s, &s->queue, r);
  if (q->state == POOT_SCHEDULER_RUNNING) poot__sched_running_remove(s, r);
  if (q->seq >= 0) poot_kv_pool_seq_close(s->pool, q->seq);
  q->seq = -1;
  q->work = -1;
  q->cancel_pending = false;
  q->state = POOT_SCHEDULER_FINISHED;
  q->info.state = POOT_SCHEDULER_FINISHED;
  q->info.finish = reason;
  q->info.finish_step = s->steps;
  q->info.finish_ns = poot_time_ns();
  poot__sched_list_push_back(s, &s->finished, r);
  s->n_finished++;
  if (reason == POOT_SCHEDULER_FINISH_CANCELLED) s->cancelled++;
}

poot_status poot_scheduler_cancel(poot_scheduler *s, uint64_t caller_id) {
  int32_t r = find_req(s, caller_id);
  if (r < 0 || s->reqs[r].state == POOT_SCHEDULER_FINISHED)
    return poot_status_make(POOT_NOT_FOUND,
                            "scheduler cancel: no queued or running request has caller_id %llu",
                            (unsigned long long)caller_id);
  sched_req *q = &s->reqs[r];
  /* A sequence in the step in flight keeps its rows until the step is
   * reported: the device may be writing them now. */
  if (s->in_step && q->work >= 0) {
    q->cancel_pending = true;
    return POOT_OK_STATUS;
  }
  poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_CANCELLED);
  return POOT_OK_STATUS;
}

/* ----------------------------------------------------------- step results */

/* Counts the rows an item fed: prompt positions are prefill, the rest are
 * generated ids fed back (decode, or their recomputation). */
static void count_fed(poot_scheduler *s, sched_req *q, const poot_scheduler_work *w) {
  int64_t end = w->pos + w->n_tokens;
  int64_t prompt_end = end < q->n_prompt ? end : q->n_prompt;
  int64_t prefill = prompt_end > w->pos ? prompt_end - w->pos : 0;
  q->info.prefill_tokens += prefill;
  q->info.decode_tokens += w->n_tokens - prefill;
  s->prefill_tokens += (uint64_t)prefill;
  s->decode_tokens += (uint64_t)(w->n_tokens - prefill);
}

/* Appends an emitted id and finishes the request when it is done. */
static void take_token(poot_scheduler *s, int32_t r, const poot_scheduler_result *res) {
  sched_req *q = &s->reqs[r];
  q->history[q->n_history++] = res->token;
  q->info.n_generated++;
  if (q->info.first_token_step == UINT64_MAX) {
    q->info.first_token_step = s->steps;
    q->info.first_token_ns = poot_time_ns();
  }
  if (res->stop)
    poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_STOP);
  else if (q->info.n_generated >= q->max_new)
    poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_LENGTH);
  else if (q->n_history >= s->limit)
    poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_CAPACITY);
}

static void step_end(poot_scheduler *s) {
  for (int32_t i = 0; i < s->plan.n_work; i++) {
    sched_req *q = &s->reqs[s->work_req[i]];
    if (q->state == POOT_SCHEDULER_RUNNING) q->work = -1;
  }
  s->plan.n_work = 0;
  s->in_step = false;
}

poot_status poot_scheduler_step_done(poot_scheduler *s, const poot_scheduler_result *results,
                                     int32_t n_results) {
  if (!s->in_step && n_results == 0) return POOT_OK_STATUS;
  if (!s->in_step || n_results != s->plan.n_work || (n_results > 0 && !results))
    return poot_status_make(POOT_INVALID_ARGUMENT, "scheduler step_done: %d results for %s",
                            n_results,
                            s->in_step ? "a plan of a different size" : "no plan in flight");
  for (int32_t i = 0; i < s->plan.n_work; i++) {
    int32_t r = s->work_req[i];
    sched_req *q = &s->reqs[r];
    const poot_scheduler_work *w = &s->work[i];
    q->work = -1;
    if (q->cancel_pending) {
      poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_CANCELLED);
      continue;
    }
    poot_status st = poot_kv_pool_seq_commit(s->pool, q->seq, w->pos + w->n_tokens);
    if (st) return poot_status_annotate(st, "scheduler step_done (internal)");
    q->computed = w->pos + w->n_tokens;
    count_fed(s, q, w);
    if (w->emits) take_token(s, r, &results[i]);
  }
  step_end(s);
  s->steps++;
  return POOT_OK_STATUS;
}

poot_status poot_scheduler_step_abort(poot_scheduler *s) {
  if (!s->in_step)
    return poot_status_make(POOT_INVALID_ARGUMENT, "scheduler step_abort: no plan in flight");
  for (int32_t i = 0; i < s->plan.n_work; i++) {
    int32_t r = s->work_req[i];
    sched_req *q = &s->reqs[r];
    q->work = -1;
    if (q->cancel_pending) {
      poot__sched_finish(s, r, POOT_SCHEDULER_FINISH_CANCELLED);
      continue;
    }
    poot_status st = poot_kv_pool_seq_truncate(s->pool, q->seq, q->computed);
    if (st) return poot_status_annotate(st, "scheduler step_abort (internal)");
  }
  step_end(s);
  return POOT_OK_STATUS;
}

poot_status poot_scheduler_requeue_running(poot_scheduler *s) {
  if (s->in_step)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler requeue_running: a plan is in flight (step %llu); report "
                            "it with step_done or step_abort first",
                            (unsigned long long)s->plan.step);
  /* newest first, each to the front: the queue starts with the oldest */
  while (s->n_running > 0) {
    int32_t r = s->running[--s->n_running];
    sched_req *q = &s->reqs[r];
    poot_kv_pool_seq_close(s->pool, q->seq);
    q->seq = -1;
    q->computed = 0;
    q->work = -1;
    q->state = q->info.state = POOT_SCHEDULER_QUEUED;
    poot__sched_list_push_front(s, &s->queue, r);
  }
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- reports */

poot_status poot_scheduler_request_get(const poot_scheduler *s, uint64_t caller_id,
                                       poot_scheduler_request_info *out) {
  memset(out, 0, sizeof *out);
  int32_t r = find_req(s, caller_id);
  if (r < 0)
    return poot_status_make(POOT_NOT_FOUND, "scheduler: no request has caller_id %llu",
                            (unsigned long long)caller_id);
  *out = s->reqs[r].info;
  return POOT_OK_STATUS;
}

poot_status poot_scheduler_request_tokens(const poot_scheduler *s, uint64_t caller_id,
                                          const int32_t **out_tokens, int64_t *out_n) {
  *out_tokens = NULL;
  *out_n = 0;
  int32_t r = find_req(s, caller_id);
  if (r < 0)
    return poot_status_make(POOT_NOT_FOUND, "scheduler: no request has caller_id %llu",
                            (unsigned long long)caller_id);
  *out_tokens = s->reqs[r].history;
  *out_n = s->reqs[r].n_history;
  return POOT_OK_STATUS;
}

bool poot_scheduler_take_finished(poot_scheduler *s, poot_scheduler_request_info *out) {
  memset(out, 0, sizeof *out);
  int32_t r = s->finished.head;
  if (r < 0) return false;
  poot__sched_list_remove(s, &s->finished, r);
  sched_req *q = &s->reqs[r];
  *out = q->info;
  poot_free(q->history);
  *q = (sched_req){.seq = -1, .work = -1, .prev = -1, .next = -1};
  s->free_req[s->n_free_req++] = r;
  return true;
}

void poot_scheduler_get_stats(const poot_scheduler *s, poot_scheduler_stats *out) {
  memset(out, 0, sizeof *out);
  out->queued = s->queue.n;
  out->running = s->n_running;
  out->finished_waiting = s->finished.n;
  poot_kv_pool_get_stats(s->pool, &out->kv);
  out->steps = s->steps;
  out->submitted = s->submitted;
  out->finished = s->n_finished;
  out->cancelled = s->cancelled;
  out->preemptions = s->preemptions;
  out->prefill_tokens = s->prefill_tokens;
  out->decode_tokens = s->decode_tokens;
  out->reused_tokens = s->reused_tokens;
}
