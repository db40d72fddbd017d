/* poot/llm/batch.h — the batched runner: many sequences of one model over a
 * paged KV pool on one executor (DESIGN §1, §7 "the scheduler"; issue 19;
 * docs/batching.md "The batched runner").
 *
 * A runner binds one model's weights once on one executor (as the driver
 * does, poot/llm/driver.h), owns a KV block pool (poot/llm/kv_pool.h) sized
 * from a byte budget and the scheduler over it (poot/llm/scheduler.h), and
 * adds the paged entries it steps with, each compiled and captured once:
 *   - decode at B = 1, 2, 4, 8, … up to max_batch (and max_batch itself),
 *     T = 1: every decoding sequence of a step in one replay, the step padded
 *     to the next size with dummy rows (their K/V written to a scratch block
 *     no sequence owns, their output ignored);
 *   - prefill at B = 1, T = prefill_chunk and, when the chunk is longer,
 *     T = 128 (the middle chunk) and T = 16 (the tail chunk): a prompt chunk
 *     runs down the driver's ladder, and its last tokens fewer than the
 *     shortest chunk run as rows of the step's decode replay (when they fit
 *     max_batch; else single steps through the B = 1 decode entry).
 * Each step writes the block tables into `slot_map` and the pool row of
 * every new token into `write_map` (poot/llm/model.h): no table, position or
 * prompt length ever adds an entry. The choice is made on the device: each
 * row's argmax, or its request's sampler (poot_batch_request.sampling; one
 * entry set per sampling kind), and a non-finite flag are read back (with
 * logprobs, the row's top-n beside them), never the logits.
 *
 * A server loop:
 *   poot_batch_submit(b, &(poot_batch_request){ids, n, max_new, caller_id});
 *   while (poot_batch_busy(b)) {
 *     poot_batch_step(b, on_token, ctx, NULL);  // on_token: each new id; true stops it
 *     poot_scheduler_request_info done;
 *     while (poot_batch_take_finished(b, &done)) { ... }
 *   }
 *
 * The executor is the runner's alone: its K/V states are the pool's
 * (f32[(num_blocks + 1)·bs, Hkv, D] per layer and K/V, the last block the
 * scratch), which a driver's contiguous states could not share.
 *
 * Faults come back as the executor's statuses (a failed step is rolled back
 * in the scheduler: the next step feeds the same tokens); KERNEL_FAULT
 * leaves the executor NEEDS_RESET. poot_batch_recover (below, "Faults")
 * resets the executor or moves the runner to a new one, and recomputes
 * every running request from its history. Not thread safe. */
#ifndef POOT_LLM_BATCH_H
#define POOT_LLM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/llm/driver.h"
#include "poot/llm/grammar.h"
#include "poot/llm/kv_pool.h"
#include "poot/llm/model.h"
#include "poot/llm/sampling.h"
#include "poot/llm/scheduler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_batch poot_batch;

/* Most decode entries a runner has (sizes 1, 2, 4, … 2^12 and max_batch). */
#define POOT_BATCH_MAX_SIZES 14
/* The largest max_batch. */
#define POOT_BATCH_MAX_BATCH 4096

typedef struct poot_batch_options {
  /* The entry keys' program name; NULL → "model". */
  const char *program;
  /* Sequences decoding together, 1..POOT_BATCH_MAX_BATCH (0 → 8). */
  int32_t max_batch;
  /* Positions of one sequence (the block table's span); 0 → the model's
   * context length, at most 512. Rounded up to a multiple of block_size;
   * INVALID_ARGUMENT past the model's context length. */
  int64_t max_seq_len;
  /* Tokens per KV block (0 → 16). */
  int32_t block_size;
  /* Blocks in the pool; 0 → as many as kv_budget_bytes holds. */
  int32_t num_blocks;
  /* Bytes for K/V when num_blocks is 0; 0 → half the device memory the
   * executor reports left after the weights (poot_exec_stats.memory_bytes),
   * at most what 4 · max_batch full sequences need; an executor that reports
   * no memory needs num_blocks or this (INVALID_ARGUMENT). */
  uint64_t kv_budget_bytes;
  /* Tokens per prefill chunk; 0 → 512, or 16 when max_seq_len is below 512.
   * Must be ≥ 1 and ≤ max_seq_len. */
  int64_t prefill_chunk;
  /* Tokens fed per step (the scheduler's token_budget); 0 → max_batch ·
   * prefill_chunk, which never cuts a chunk short, so a prompt is cut at the
   * same positions whatever else runs (docs/batching.md "Batch
   * invariance"). Must be ≥ max_batch. */
  int32_t token_budget;
  /* Requests held at once (0 → 1,024). */
  int32_t max_requests;
  /* The K/V states' type; POOT_DTYPE_NONE → poot_model_kv_dtype_default
   * (paged). */
  poot_dtype kv_dtype;
  /* Do not publish or match blocks (prefix reuse off). */
  bool no_prefix_cache;
  /* Leave the executor's compile target as it is. By default the runner
   * sets poot_exec_target.batch_invariant (and nothing else) so a row's
   * numerics do not depend on the rows beside it where the compiler can
   * promise it (docs/batching.md "Batch invariance"). */
  bool keep_target;
} poot_batch_options;

static inline poot_batch_options poot_batch_options_default(void) {
  poot_batch_options o = {.program = NULL, .max_batch = 0};
  return o;
}

/* Creates a runner over `executor` and `model` (borrowed; they must outlive
 * it; the executor must have no weights loaded and be used by nothing
 * else): traces a paged decode step, loads its weights, sizes and creates
 * the pool and the scheduler. options may be NULL. INVALID_ARGUMENT naming
 * the option; CAPACITY when the budget holds no block; the errors of
 * tracing and of the executor; OUT_OF_MEMORY. Entries are added on first
 * use (or by poot_batch_prepare). */
POOT_MUST_USE poot_status poot_batch_create(poot_executor *executor, poot_model *model,
                                            const poot_batch_options *options,
                                            poot_batch **out_batch);
/* Removes its entries, unloads the executor and frees it. NULL-safe. */
void poot_batch_destroy(poot_batch *batch);

/* Adds every entry now (trace, compile, capture): the decode sizes and the
 * prefill chunks (the middle one included). The executor's errors. */
POOT_MUST_USE poot_status poot_batch_prepare(poot_batch *batch);

/* What the runner was made with (after defaults and rounding). */
typedef struct poot_batch_info {
  int32_t max_batch;
  int64_t max_seq_len;
  int32_t block_size;
  int32_t num_blocks; /* the pool's (the scratch block not counted) */
  int64_t prefill_chunk;
  int64_t mid_chunk;  /* the ladder's middle rung (0: none) */
  int64_t tail_chunk; /* 0: none */
  int32_t token_budget;
  int32_t max_requests;
  poot_dtype kv_dtype;
  uint64_t kv_bytes;                   /* the K/V states on the device, scratch block included */
  int32_t n_sizes;                     /* decode entries */
  int32_t sizes[POOT_BATCH_MAX_SIZES]; /* their batch sizes, increasing */
} poot_batch_info;

void poot_batch_get_info(const poot_batch *batch, poot_batch_info *out);

/* Borrowed: valid until poot_batch_destroy. Use the scheduler for stats,
 * request states and histories; submit, cancel and take through the calls
 * below (the runner keeps no per-request state of its own). */
poot_scheduler *poot_batch_scheduler(poot_batch *batch);
const poot_kv_pool *poot_batch_pool(const poot_batch *batch);

/* ------------------------------------------------------------- requests */

typedef struct poot_batch_request {
  const int32_t *prompt;  /* borrowed for the call */
  int64_t n_prompt;       /* ≥ 1 */
  int64_t max_new_tokens; /* ≥ 1 */
  uint64_t caller_id;     /* unique among the caller's live requests */
  /* NULL: greedy. Else the request's sampler (borrowed for the call; its
   * values are copied): temperature, top-k, top-p, min-p, typical-p, the
   * logit bias and the seed, drawn on the device per row with the Philox
   * counter {ids generated so far, 0}, so a request draws the same numbers
   * alone, batched or after a preemption, and as the driver does with the
   * same seed. n_probs > 0 asks for each id's logprobs (poot_batch_logprobs):
   * computed on the device beside the draw, over the raw logits, as the
   * driver reports them. Repetition, presence and frequency penalties over
   * the last repeat_last_n ids of the request's history (prompt included),
   * as the driver counts them; ignore_eos bans the model's end ids, as the
   * driver does. Stops, stop strings and max_tokens are the caller's (its
   * token callback). */
  const poot_sampling_params *sampling;
  /* NULL: none. Else a grammar the output follows (borrowed until the
   * request is taken finished): each step's row is masked by the request's
   * matcher, which accepts each new id; the request stops when the grammar
   * is complete and cannot grow, or at an id with no text where it may end
   * (the driver's POOT_DRIVER_STOP_GRAMMAR). With sampling NULL it runs
   * greedy. Needs the model's tokenizer. */
  const poot_grammar *grammar;
  /* Input rows (n_inputs 0: none): as poot_driver_generate_with_inputs's,
   * the one input a decoder declares, "embeds" (an image's rows from the
   * vision tower, docs/vision.md), each row replacing the embedding of the
   * prompt id at its index. Borrowed for the call: the rows are copied and
   * kept with the request until it is taken finished, so a preempted or
   * recovered request is prefilled again with them. A prompt chunk that
   * holds a row runs through the B = 1 prefill entries traced with the
   * embeds slots (its tail included: never a row of the greedy decode
   * replays); the request's blocks are salted with a hash of the rows
   * (poot_scheduler_request.prefix_salt), so its prompt never matches
   * blocks computed from other rows at the same placeholder ids. The last
   * prompt id cannot have a row (its step samples the first new id). */
  const poot_driver_input *inputs;
  size_t n_inputs;
} poot_batch_request;

/* Checks the sampler (INVALID_ARGUMENT naming the field; a grammar without
 * a tokenizer) and the input rows (INVALID_ARGUMENT naming the input: an
 * unknown or repeated name, a row index outside the prompt, repeated or
 * the last, a row of another width than hidden_size, NULL values), then
 * poot_scheduler_submit's statuses; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_batch_submit(poot_batch *batch, const poot_batch_request *request);
/* poot_scheduler_cancel's statuses. */
POOT_MUST_USE poot_status poot_batch_cancel(poot_batch *batch, uint64_t caller_id);
/* poot_scheduler_take_finished. */
bool poot_batch_take_finished(poot_batch *batch, poot_scheduler_request_info *out);
/* True while a request is queued or running. */
bool poot_batch_busy(const poot_batch *batch);

/* ---------------------------------------------------------------- steps */

/* Called for each new id of a step, in the plan's order; `nonfinite` when
 * the row's logits held a NaN or an infinity (the id is then the argmax's
 * first NaN). Returning true ends the request there (an end id, a stop
 * string: the caller's rule). */
typedef bool (*poot_batch_token_fn)(void *ctx, uint64_t caller_id, int32_t token, bool nonfinite);

/* The logprobs of a new id (its request's sampling->n_probs > 0; else NULL):
 * the chosen id's log-softmax over the row's raw logits and the n_probs
 * highest (n_top of POOT_SAMPLING_MAX_PROBS at most), as the driver's
 * poot_driver_generate_result.probs. item < 0: the id the step's token
 * callback is being called with (valid only inside it); item ≥ 0: plan
 * item `item` of the last poot_batch_run_plan (valid until the next). */
const poot_sampling_result *poot_batch_logprobs(const poot_batch *batch, int32_t item);

typedef struct poot_batch_step_info {
  bool idle;            /* nothing was runnable: no device step ran */
  int32_t n_work;       /* the plan's items */
  int32_t n_decode;     /* decode items (a generated id fed back) */
  int32_t n_rows;       /* rows of batched decode replays (one-token items, prompt tails) */
  int32_t decode_batch; /* the largest decode entry they ran in (0: none) */
  int32_t n_tokens;     /* tokens fed */
  int32_t n_emitted;    /* new ids */
  int32_t replays;      /* device steps run */
  int32_t n_preempted;
} poot_batch_step_info;

/* Plans a step (poot_scheduler_step_plan), runs it on the device
 * (poot_batch_run_plan) and reports it (poot_scheduler_step_done with each
 * emitting item's id and fn's stop). fn may be NULL (nothing stops but the
 * limits). out may be NULL. On a device error the plan is aborted
 * (poot_scheduler_step_abort) and the status returned. */
POOT_MUST_USE poot_status poot_batch_step(poot_batch *batch, poot_batch_token_fn fn, void *ctx,
                                          poot_batch_step_info *out);

/* Runs `plan` (the scheduler's, in flight) on the device: each longer
 * item's chunk steps (B = 1), then its last tokens fewer than the shortest
 * chunk and every one-token item (decode, and prefill of one token) as rows
 * of one replay per sampling kind, of the smallest decode entry that holds
 * them (an item's rows that no longer fit max_batch: single steps); writes out_ids[i] /
 * out_nonfinite[i] for each emitting item i (−1 / false for the others; arrays of plan->n_work).
 * Does not report the plan, nor have a grammar accept its ids (poot_batch_step does both).
 * out_replays (may be NULL) gets the device steps run. The executor's errors. */
POOT_MUST_USE poot_status poot_batch_run_plan(poot_batch *batch, const poot_scheduler_plan *plan,
                                              int32_t *out_ids, bool *out_nonfinite,
                                              int32_t *out_replays);

/* --------------------------------------------------------------- faults
 *
 * After a failed step (KERNEL_FAULT, NEEDS_RESET: reset; DEVICE_LOST,
 * POISONED, TIMEOUT: a new device context):
 *   reset:   poot_batch_recover(b, NULL);
 *   rebuild: poot_batch_release_executor(b); destroy the executor; make a
 *            new device and executor; poot_batch_recover(b, new_executor);
 * then step on: every request keeps its caller id, its generated ids and
 * its sampler's counter, so it continues with the ids it would have had. */

/* Lets go of the executor whose device was lost, without calling it: the
 * runner forgets its entries and weights there (the caller may then destroy
 * the executor and its device). Until poot_batch_recover gives it another,
 * steps and prepare fail with DEVICE_LOST and destroy touches no executor. */
void poot_batch_release_executor(poot_batch *batch);

/* Recovers from a device fault, keeping every request: each running one
 * goes back to the front of the queue to be recomputed from its history
 * (prompt and generated ids; poot_scheduler_requeue_running) and the pool
 * forgets every block's contents (poot_kv_pool_forget: no later prompt
 * matches rows that are gone). Then, with executor NULL (or the runner's
 * own), the executor is reset (poot_exec_reset_state: its K/V states
 * zeroed, NEEDS_RESET cleared); else the runner moves to `executor` (new,
 * borrowed as at create: no weights loaded, used by nothing else), loading
 * its weights there; the entries are added again on first use (or by
 * poot_batch_prepare). INVALID_ARGUMENT while a step is in flight; the
 * executor's statuses (a reset that fails with a device fault asks for a
 * new executor); DEVICE_LOST with NULL after a release. */
POOT_MUST_USE poot_status poot_batch_recover(poot_batch *batch, poot_executor *executor);

/* Test hook: the next device step feeds its first row a token id past the
 * vocabulary, so the device's gather traps (KERNEL_FAULT; the executor is
 * then NEEDS_RESET). How the server's fault injection tests recovery. */
void poot_batch_arm_kernel_fault(poot_batch *batch);

/* ------------------------------------------------------- generate many */

typedef struct poot_batch_prompt {
  const int32_t *ids; /* borrowed for the call */
  int64_t n;
  int64_t max_new_tokens;
  const poot_sampling_params *sampling; /* NULL: greedy (poot_batch_request.sampling) */
  const poot_grammar *grammar;          /* NULL: none (poot_batch_request.grammar) */
  const poot_driver_input *inputs;      /* n_inputs: poot_batch_request.inputs */
  size_t n_inputs;
} poot_batch_prompt;

typedef struct poot_batch_output {
  int32_t *ids; /* the generated ids (poot_free them; poot_batch_outputs_free) */
  int64_t n;
  poot_scheduler_finish finish;
  int64_t reused_tokens;  /* prompt tokens matched in the pool */
  int64_t prefill_tokens; /* prompt tokens computed */
  int32_t preemptions;
  int32_t nonfinite; /* steps whose logits were not all finite */
  /* With sampling->n_probs > 0: one entry per id (poot_batch_logprobs);
   * else NULL. Freed with the ids. */
  poot_sampling_result *probs;
} poot_batch_output;

typedef struct poot_batch_generate_options {
  /* A model stop id (poot_model_is_stop) ends a request (it is kept as its
   * last id). */
  bool stop_at_eos;
} poot_batch_generate_options;

/* Submits n prompts (caller ids 0..n−1; the runner must hold no request),
 * steps until every one finishes and fills outs[0..n) (zeroed first).
 * options may be NULL (stop_at_eos off). INVALID_ARGUMENT (a live request,
 * a bad prompt); the errors of submit and step (the outputs are freed then). */
POOT_MUST_USE poot_status poot_batch_generate(poot_batch *batch, const poot_batch_prompt *prompts,
                                              size_t n, const poot_batch_generate_options *options,
                                              poot_batch_output *outs);
void poot_batch_outputs_free(poot_batch_output *outs, size_t n); /* NULL-safe */

/* ----------------------------------------------------------------- stats */

typedef struct poot_batch_stats {
  uint64_t steps;          /* poot_batch_step calls that ran */
  uint64_t replays;        /* device steps */
  uint64_t decode_replays; /* of replays: batched decode steps */
  uint64_t decode_rows;    /* rows run in batched steps: one-token items, prompt tails (padding
                              excluded) */
  uint64_t padded_rows;    /* dummy rows run */
  uint64_t prefill_tokens; /* tokens fed by items of two or more tokens (chunks and rows) */
  uint64_t per_size[POOT_BATCH_MAX_SIZES]; /* decode replays per entry size (info.sizes) */
  /* Grammar masks filled on the mask workers (one per grammar row of a
   * step), and the most one step filled at once. */
  uint64_t grammar_masks, grammar_masks_max;
  /* Host time of the sampled rows: their slot values (parameters, penalty
   * windows, masks copied) and the wait for the mask workers, in ns. */
  uint64_t sample_host_ns;
} poot_batch_stats;

void poot_batch_get_stats(const poot_batch *batch, poot_batch_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_BATCH_H */
