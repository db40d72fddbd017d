/* poot/llm/scheduler.h — the continuous-batching scheduler core (DESIGN §7
 * "the scheduler", §8; issue 19; docs/batching.md).
 *
 * Requests (prompt ids, a limit of new tokens, a caller id) are queued;
 * between device steps the scheduler admits them into running sequences of
 * a KV block pool (poot/llm/kv_pool.h) and plans each step's work under a
 * token budget and a batch size. The caller runs the step on the device and
 * reports the new token of each sequence that produced one. The scheduler
 * knows nothing of models, devices or sampling: it moves token ids and
 * block ids.
 *
 * A step (poot_scheduler_step_plan), in this order:
 *   1. decode: every running sequence with one token left to feed gets it,
 *      oldest first;
 *   2. prefill: every running sequence with more left feeds a chunk of it
 *      (at most prefill_chunk tokens and what the budget has left), oldest
 *      first;
 *   3. admission: queued requests, oldest first, join while the batch has
 *      room, the budget has tokens and the pool has blocks for their first
 *      chunk. A prompt is matched against the pool's published blocks first
 *      (prefix reuse): only its unmatched tail is computed. Admission stops
 *      at the first request that does not fit (no overtaking) and in a step
 *      that preempted.
 * token_budget ≥ max_batch, so the decode tokens of the running sequences
 * always fit beside at least one prefill token.
 *
 * Preemption. When a sequence needs a block and none is free, the newest
 * running sequence (the last submitted) is preempted: its blocks are
 * released (full ones stay published, so its readmission may match them),
 * and it goes back to the front of the queue with its token history
 * (prompt and the ids generated so far), to be recomputed when it is
 * admitted again. Only sequences newer than the one in need are taken; a
 * prefill chunk first shrinks to what fits.
 *
 * The progress guarantee. Sequences are ordered by submission. Running ones
 * are always older than queued ones (admission is in order; a preempted one
 * is the newest running, so it goes to the front). The oldest live request
 * is therefore running or at the front of the queue, it is never preempted,
 * and every step that has any work feeds it at least one token: its decode
 * token comes first; its prefill chunk gets at least one token of the
 * budget; a block it needs is taken from newer sequences. Each request ends
 * after finitely many tokens, so every request finishes: no livelock.
 *
 * Limits. A sequence holds at most limit = min(max_seq_len, pool tokens)
 * tokens of history; a request whose prompt + 1 does not fit is refused with
 * CAPACITY at submit; a running one that reaches the limit finishes with
 * POOT_SCHEDULER_FINISH_CAPACITY.
 *
 * The scheduler owns every sequence of its pool (the pool must have none
 * open at create and must not be used by others while the scheduler lives).
 * Not thread safe. */
#ifndef POOT_LLM_SCHEDULER_H
#define POOT_LLM_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/kv_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_scheduler poot_scheduler;

typedef struct poot_scheduler_options {
  int32_t max_batch;     /* sequences running at once (one work item each per step) ≥ 1 */
  int32_t token_budget;  /* tokens fed per step, ≥ max_batch */
  int32_t prefill_chunk; /* most prompt tokens of one sequence per step; 0 → the budget */
  int32_t max_requests;  /* requests queued, running or finished but not taken ≥ 1 */
} poot_scheduler_options;

/* A batch of 16, 512 tokens a step, chunks up to the budget, 1,024 requests. */
static inline poot_scheduler_options poot_scheduler_options_default(void) {
  poot_scheduler_options o = {
      .max_batch = 16, .token_budget = 512, .prefill_chunk = 0, .max_requests = 1024};
  return o;
}

/* Creates a scheduler over `pool` (borrowed: it must outlive the scheduler
 * and have no sequence open). options may be NULL (the defaults).
 * INVALID_ARGUMENT naming the field (also max_batch past the pool's
 * max_seqs, an open sequence); OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_scheduler_create(poot_kv_pool *pool,
                                                const poot_scheduler_options *options,
                                                poot_scheduler **out_scheduler);
/* Closes every sequence it holds and frees it. NULL-safe. */
void poot_scheduler_destroy(poot_scheduler *scheduler);

/* ---------------------------------------------------------------- requests */

typedef struct poot_scheduler_request {
  const int32_t *prompt;  /* borrowed for the call: the ids are copied */
  int64_t n_prompt;       /* ≥ 1 */
  int64_t max_new_tokens; /* ≥ 1 */
  uint64_t caller_id;     /* the caller's name for it; unique among its requests */
  /* 0: none. Else its blocks' chain hashes are salted with it
   * (poot_kv_pool_seq_open_salted): its prompt matches only blocks of
   * requests with the same salt (rows other than the ids' embeddings). */
  uint64_t prefix_salt;
} poot_scheduler_request;

/* Queues a request (at the back). INVALID_ARGUMENT for n_prompt or
 * max_new_tokens < 1, or a caller_id already queued, running or finished
 * and not taken; CAPACITY when the prompt + 1 token cannot ever fit (past
 * max_seq_len or the whole pool: the message gives both) or max_requests
 * are held; OUT_OF_MEMORY. Nothing is queued on failure. */
POOT_MUST_USE poot_status poot_scheduler_submit(poot_scheduler *scheduler,
                                                const poot_scheduler_request *request);

/* Cancels a request: a queued one leaves the queue, a running one releases
 * its blocks (at once between steps; at step_done / step_abort when it is
 * in the current step, whose result for it is dropped). It finishes with
 * POOT_SCHEDULER_FINISH_CANCELLED. NOT_FOUND when no queued or running
 * request has this id (a finished one is not cancelled again). */
POOT_MUST_USE poot_status poot_scheduler_cancel(poot_scheduler *scheduler, uint64_t caller_id);

/* -------------------------------------------------------------------- steps */

typedef struct poot_scheduler_work {
  uint64_t caller_id;
  int32_t seq;           /* the pool sequence (poot_kv_pool_seq_row gives write rows) */
  int64_t pos;           /* position of the first token fed */
  int32_t n_tokens;      /* 1 for a decode step, else a prefill chunk */
  const int32_t *tokens; /* the n_tokens ids to feed (history[pos ..]); borrowed */
  const int32_t *blocks; /* the block table, n_blocks ids covering [0, pos + n_tokens); borrowed */
  int32_t n_blocks;
  bool emits;   /* the step's last token gives this sequence's next id */
  bool prefill; /* not a decode step (one token that emits): a chunk or a recomputation */
} poot_scheduler_work;

typedef struct poot_scheduler_plan {
  const poot_scheduler_work *work; /* n_work items: decode first, then prefill chunks */
  int32_t n_work;
  int32_t n_tokens;    /* Σ n_tokens ≤ token_budget */
  int32_t n_decode;    /* decode items: one token that emits */
  int32_t n_admitted;  /* requests that joined in this step */
  int32_t n_preempted; /* sequences preempted in this step */
  uint64_t step;       /* the step's number (from 0) */
} poot_scheduler_plan;

/* Plans the next step. The plan (borrowed: it stays valid until step_done or
 * step_abort) may be empty (nothing queued or runnable); an empty plan needs
 * no step_done. INVALID_ARGUMENT when the previous plan is neither done nor
 * aborted; INTERNAL if the pool is inconsistent with the scheduler (a bug). */
POOT_MUST_USE poot_status poot_scheduler_step_plan(poot_scheduler *scheduler,
                                                   const poot_scheduler_plan **out_plan);

typedef struct poot_scheduler_result {
  int32_t token; /* the sequence's next id (read only for items that emit) */
  bool stop;     /* the caller ends the request here (an end id, a stop string) */
} poot_scheduler_result;

/* Reports the device step of the last plan: results[i] belongs to
 * plan->work[i] (n_results = plan->n_work). Commits the fed rows, appends
 * each emitted id to its request's history, and finishes requests that stop
 * (the caller's `stop`), reach max_new_tokens or reach the limit.
 * INVALID_ARGUMENT (nothing changes) without a plan in flight or for a
 * count other than n_work. */
POOT_MUST_USE poot_status poot_scheduler_step_done(poot_scheduler *scheduler,
                                                   const poot_scheduler_result *results,
                                                   int32_t n_results);

/* The device step of the last plan did not run (a fault): its reserved rows
 * are dropped, so the next plan feeds the same tokens again. The sequences
 * keep what earlier steps committed (a caller whose device lost the cache
 * then calls poot_scheduler_requeue_running). INVALID_ARGUMENT without a
 * plan in flight. */
POOT_MUST_USE poot_status poot_scheduler_step_abort(poot_scheduler *scheduler);

/* The device lost the K/V rows of every running sequence (a fault, a reset,
 * a new device context): each running request goes back to the front of the
 * queue, oldest first, with its history (prompt and generated ids) and its
 * blocks released, as a preemption does (not counted as one); when admitted
 * again its whole history is recomputed and it emits its next id. Queued
 * requests stay behind them, so the order and the progress guarantee hold.
 * The caller then forgets the pool's contents (poot_kv_pool_forget).
 * INVALID_ARGUMENT while a plan is in flight (abort it first). */
POOT_MUST_USE poot_status poot_scheduler_requeue_running(poot_scheduler *scheduler);

/* ----------------------------------------------------------------- reports */

typedef enum poot_scheduler_state {
  POOT_SCHEDULER_QUEUED = 1,
  POOT_SCHEDULER_RUNNING,
  POOT_SCHEDULER_FINISHED,
} poot_scheduler_state;

typedef enum poot_scheduler_finish {
  POOT_SCHEDULER_FINISH_NONE = 0, /* not finished */
  POOT_SCHEDULER_FINISH_STOP,     /* the caller's stop flag */
  POOT_SCHEDULER_FINISH_LENGTH,   /* max_new_tokens generated */
  POOT_SCHEDULER_FINISH_CAPACITY, /* the history reached the limit */
  POOT_SCHEDULER_FINISH_CANCELLED,
} poot_scheduler_finish;

typedef struct poot_scheduler_request_info {
  uint64_t caller_id;
  poot_scheduler_state state;
  poot_scheduler_finish finish;
  int64_t n_prompt;
  int64_t n_generated;
  int64_t prefill_tokens; /* prompt tokens computed (recomputations included) */
  int64_t decode_tokens;  /* generated ids fed back (recomputations included) */
  int64_t reused_tokens;  /* tokens matched in the pool instead of computed, over admissions */
  int32_t preemptions;
  uint64_t submit_step, first_token_step, finish_step; /* step numbers; UINT64_MAX: not yet */
  uint64_t submit_ns, first_token_ns, finish_ns;       /* poot_time_ns(); 0: not yet */
} poot_scheduler_request_info;

/* The request's counts and state (queued, running or finished and not yet
 * taken). NOT_FOUND otherwise. *out is zeroed first. */
POOT_MUST_USE poot_status poot_scheduler_request_get(const poot_scheduler *scheduler,
                                                     uint64_t caller_id,
                                                     poot_scheduler_request_info *out);
/* The request's history (prompt, then the generated ids), borrowed until the
 * next call that changes the scheduler. NOT_FOUND as above. */
POOT_MUST_USE poot_status poot_scheduler_request_tokens(const poot_scheduler *scheduler,
                                                        uint64_t caller_id,
                                                        const int32_t **out_tokens, int64_t *out_n);

/* Takes the oldest finished request's record (in finishing order) and
 * forgets the request; false when none is waiting. */
bool poot_scheduler_take_finished(poot_scheduler *scheduler, poot_scheduler_request_info *out);

typedef struct poot_scheduler_stats {
  int32_t queued, running, finished_waiting;
  poot_kv_pool_stats kv; /* blocks in use, free, cached */
  uint64_t steps;
  uint64_t submitted, finished, cancelled, preemptions;
  uint64_t prefill_tokens, decode_tokens, reused_tokens;
} poot_scheduler_stats;

void poot_scheduler_get_stats(const poot_scheduler *scheduler, poot_scheduler_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_SCHEDULER_H */
