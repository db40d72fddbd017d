/* Planning a step (poot_scheduler_step_plan, include/poot/llm/scheduler.h):
 * decode tokens, prefill chunks, admission and preemption. The rules and
 * the progress guarantee are in the header and in docs/batching.md. */
#include <string.h>

#include "scheduler_impl.h"

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* History ids of request q still to feed. */
static int64_t remaining(const sched_req *q) {
  return q->n_history - q->computed;
}

/* Rows request q can reserve now without taking blocks from anyone: the room
 * in its last block and every free block. */
static int64_t rows_that_fit(const poot_scheduler *s, const sched_req *q) {
  poot_kv_pool_stats ks;
  poot_kv_pool_get_stats(s->pool, &ks);
  return poot_kv_pool_seq_room(s->pool, q->seq) + (int64_t)ks.blocks_free * s->block_size;
}

/* Drops plan item i (its request was preempted): the budget gets its tokens
 * back and the later items move down. */
static void plan_remove_item(poot_scheduler *s, int32_t i) {
  poot_scheduler_plan *p = &s->plan;
  s->budget_left += s->work[i].n_tokens;
  p->n_tokens -= s->work[i].n_tokens;
  int32_t tail = p->n_work - i - 1;
  memmove(s->work + i, s->work + i + 1, (size_t)tail * sizeof *s->work);
  memmove(s->work_req + i, s->work_req + i + 1, (size_t)tail * sizeof *s->work_req);
  p->n_work--;
  for (int32_t k = i; k < p->n_work; k++) s->reqs[s->work_req[k]].work = k;
}

/* Preempts running request r: its blocks are released (full ones stay
 * published), its item leaves the plan, and it goes back to the front of
 * the queue with its history, to be recomputed. */
static void preempt(poot_scheduler *s, int32_t r) {
  sched_req *q = &s->reqs[r];
  if (q->work >= 0) plan_remove_item(s, q->work);
  q->work = -1;
  poot__sched_running_remove(s, r);
  poot_kv_pool_seq_close(s->pool, q->seq);
  q->seq = -1;
  q->computed = 0;
  q->state = q->info.state = POOT_SCHEDULER_QUEUED;
  q->info.preemptions++;
  poot__sched_list_push_front(s, &s->queue, r);
  s->preemptions++;
  s->plan.n_preempted++;
}

/* The newest running request newer than r (the running array is oldest
 * first), or −1. */
static int32_t newest_after(const poot_scheduler *s, int32_t r) {
  if (s->n_running == 0) return -1;
  int32_t v = s->running[s->n_running - 1];
  return s->reqs[v].arrival > s->reqs[r].arrival ? v : -1;
}

/* Reserves up to `want` rows for r, preempting newer sequences while not one
 * row fits. Returns the rows reserved (0: r waits this step). */
static poot_status reserve(poot_scheduler *s, int32_t r, int64_t want, int64_t *out_n) {
  *out_n = 0;
  sched_req *q = &s->reqs[r];
  int64_t fit = rows_that_fit(s, q);
  while (fit < 1) {
    int32_t v = newest_after(s, r);
    if (v < 0) break;
    preempt(s, v);
    fit = rows_that_fit(s, q);
  }
  int64_t n = min64(want, fit);
  if (n < 1) return POOT_OK_STATUS;
  POOT_TRY(poot_kv_pool_seq_append(s->pool, q->seq, q->history + q->computed, n));
  *out_n = n;
  return POOT_OK_STATUS;
}

/* Appends r's item of n rows (reserved) to the plan. */
static void plan_add_item(poot_scheduler *s, int32_t r, int64_t n) {
  sched_req *q = &s->reqs[r];
  poot_scheduler_plan *p = &s->plan;
  int32_t i = p->n_work++;
  bool emits = q->computed + n == q->n_history;
  s->work[i] = (poot_scheduler_work){.caller_id = q->caller_id,
                                     .seq = q->seq,
                                     .pos = q->computed,
                                     .n_tokens = (int32_t)n,
                                     .emits = emits,
                                     .prefill = !(n == 1 && emits)};
  s->work_req[i] = r;
  q->work = i;
  p->n_tokens += (int32_t)n;
  s->budget_left -= (int32_t)n;
}

/* Plans r's item of up to `want` rows. The oldest running sequence must get
 * at least one row: if it cannot, the pool and the scheduler disagree. */
static poot_status plan_running(poot_scheduler *s, int32_t r, int64_t want) {
  int64_t n = 0;
  POOT_TRY(reserve(s, r, want, &n));
  if (n > 0) {
    plan_add_item(s, r, n);
    return POOT_OK_STATUS;
  }
  if (s->n_running > 0 && s->running[0] == r)
    return poot_status_make(POOT_INTERNAL,
                            "scheduler: the oldest sequence (caller_id %llu, %lld tokens) finds "
                            "no free KV block with nothing newer running; please report this",
                            (unsigned long long)s->reqs[r].caller_id,
                            (long long)s->reqs[r].computed);
  return POOT_OK_STATUS;
}

/* Phase 1 and 2: decode tokens of every running sequence, then prefill
 * chunks, each oldest first. Preemption only removes sequences newer than
 * the one being planned, which sit after it in the running array. */
static poot_status plan_decode(poot_scheduler *s) {
  for (int32_t i = 0; i < s->n_running; i++) {
    int32_t r = s->running[i];
    if (remaining(&s->reqs[r]) == 1) POOT_TRY(plan_running(s, r, 1));
  }
  return POOT_OK_STATUS;
}

static poot_status plan_prefill(poot_scheduler *s) {
  for (int32_t i = 0; i < s->n_running && s->budget_left > 0; i++) {
    int32_t r = s->running[i];
    const sched_req *q = &s->reqs[r];
    if (q->work >= 0 || remaining(q) <= 1) continue;
    int64_t want = min64(min64(remaining(q), s->opt.prefill_chunk), s->budget_left);
    POOT_TRY(plan_running(s, r, want));
  }
  return POOT_OK_STATUS;
}

/* Phase 3: admits the queue's front request if its first chunk fits in the
 * free blocks (after its prefix match). *out_admitted false: stop. */
static poot_status admit_one(poot_scheduler *s, bool *out_admitted) {
  *out_admitted = false;
  int32_t r = s->queue.head;
  sched_req *q = &s->reqs[r];
  int64_t reused = 0;
  POOT_TRY(poot_kv_pool_seq_open_salted(s->pool, q->history, q->n_history, q->prefix_salt, &q->seq,
                                        &reused));
  q->computed = reused;
  int64_t want = min64(min64(remaining(q), s->opt.prefill_chunk), s->budget_left);
  int64_t n = min64(want, rows_that_fit(s, q));
  if (n < 1) {
    poot_kv_pool_seq_close(s->pool, q->seq);
    q->seq = -1;
    q->computed = 0;
    return POOT_OK_STATUS;
  }
  POOT_TRY(poot_kv_pool_seq_append(s->pool, q->seq, q->history + q->computed, n));
  poot__sched_list_remove(s, &s->queue, r);
  s->running[s->n_running++] = r;
  q->state = q->info.state = POOT_SCHEDULER_RUNNING;
  q->info.reused_tokens += reused;
  s->reused_tokens += (uint64_t)reused;
  s->plan.n_admitted++;
  plan_add_item(s, r, n);
  *out_admitted = true;
  return POOT_OK_STATUS;
}

static poot_status plan_admit(poot_scheduler *s) {
  while (s->queue.n > 0 && s->n_running < s->opt.max_batch && s->budget_left > 0 &&
         s->plan.n_preempted == 0) {
    bool admitted = false;
    POOT_TRY(admit_one(s, &admitted));
    if (!admitted) break;
  }
  return POOT_OK_STATUS;
}

/* Fills the borrowed pointers once every item is final. */
static poot_status plan_finalize(poot_scheduler *s) {
  poot_scheduler_plan *p = &s->plan;
  p->n_decode = 0;
  for (int32_t i = 0; i < p->n_work; i++) {
    poot_scheduler_work *w = &s->work[i];
    const sched_req *q = &s->reqs[s->work_req[i]];
    poot_kv_pool_seq_info si;
    POOT_TRY(poot_kv_pool_seq_get(s->pool, w->seq, &si));
    w->tokens = q->history + w->pos;
    w->blocks = si.blocks;
    w->n_blocks = si.n_blocks;
    if (!w->prefill) p->n_decode++;
  }
  p->work = s->work;
  return POOT_OK_STATUS;
}

static poot_status plan_build(poot_scheduler *s) {
  POOT_TRY(plan_decode(s));
  POOT_TRY(plan_prefill(s));
  POOT_TRY(plan_admit(s));
  return plan_finalize(s);
}

poot_status poot_scheduler_step_plan(poot_scheduler *s, const poot_scheduler_plan **out_plan) {
  *out_plan = NULL;
  if (s->in_step)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "scheduler step_plan: the previous plan (step %llu) is in flight; "
                            "report it with step_done or step_abort first",
                            (unsigned long long)s->plan.step);
  s->plan = (poot_scheduler_plan){.work = s->work, .step = s->steps};
  s->budget_left = s->opt.token_budget;
  poot_status st = plan_build(s);
  /* Whatever was reserved is in the plan, so an abort rolls it back. */
  s->in_step = s->plan.n_work > 0;
  if (st) {
    poot_status abort_st = s->in_step ? poot_scheduler_step_abort(s) : POOT_OK_STATUS;
    poot_status_free(abort_st);
    return st;
  }
  *out_plan = &s->plan;
  return POOT_OK_STATUS;
}
