/* The scheduler's private state (include/poot/llm/scheduler.h), shared by
 * scheduler.c (requests, step results, reports) and scheduler_plan.c
 * (admission, chunking, preemption). Never leaves src/llm/scheduler/. */
#ifndef POOT_LLM_SCHEDULER_IMPL_H
#define POOT_LLM_SCHEDULER_IMPL_H

#include "poot/llm/scheduler.h"

/* A doubly linked list of request slots (by index; −1 ends it). */
typedef struct sched_list {
  int32_t head, tail, n;
} sched_list;

/* One request slot. state 0 is a free slot. */
typedef struct sched_req {
  poot_scheduler_state state;
  uint64_t caller_id;
  uint64_t arrival; /* submission order: smaller is older */
  int32_t *history; /* prompt, then the generated ids; cap_history ids */
  int64_t n_history, cap_history;
  int64_t n_prompt, max_new;
  uint64_t prefix_salt; /* poot_scheduler_request.prefix_salt */
  int64_t computed; /* history ids whose K/V rows are committed */
  int32_t seq;      /* the pool sequence while running, else −1 */
  int32_t prev, next;
  int32_t work; /* its item in the plan in flight, else −1 */
  bool cancel_pending;
  poot_scheduler_request_info info;
} sched_req;

struct poot_scheduler {
  poot_kv_pool *pool; /* borrowed */
  poot_scheduler_options opt;
  int64_t limit;      /* history tokens one request may hold */
  int64_t limit_pool; /* tokens of the whole pool */
  int32_t block_size;
  sched_req *reqs; /* max_requests slots */
  int32_t *free_req;
  int32_t n_free_req;
  sched_list queue;    /* oldest first */
  sched_list finished; /* in finishing order */
  int32_t *running;    /* max_batch slot indices, oldest first */
  int32_t n_running;
  poot_scheduler_work *work; /* max_batch items of the plan */
  int32_t *work_req;         /* the request slot of each item */
  poot_scheduler_plan plan;
  bool in_step;
  int32_t budget_left; /* while planning */
  uint64_t next_arrival, steps;
  uint64_t submitted, n_finished, cancelled, preemptions;
  uint64_t prefill_tokens, decode_tokens, reused_tokens;
};

void poot__sched_list_push_back(poot_scheduler *s, sched_list *l, int32_t r);
void poot__sched_list_push_front(poot_scheduler *s, sched_list *l, int32_t r);
void poot__sched_list_remove(poot_scheduler *s, sched_list *l, int32_t r);

/* Removes slot r from the running array (keeping the order). */
void poot__sched_running_remove(poot_scheduler *s, int32_t r);

/* Ends request r with `reason`: closes its sequence, leaves the queue or the
 * running array, joins the finished list. */
void poot__sched_finish(poot_scheduler *s, int32_t r, poot_scheduler_finish reason);

#endif /* POOT_LLM_SCHEDULER_IMPL_H */
