/* batch_impl.h — private to src/llm/driver: the batched runner's object
 * (batch.c: creation, entries, running a plan; batch_sample.c: per-request
 * sampling rows; batch_generate.c: many prompts to completion). */
#ifndef POOT_LLM_BATCH_IMPL_H
#define POOT_LLM_BATCH_IMPL_H

#include "poot/llm/batch.h"

#include "driver_impl.h"
#include "pen_window.h"

#define BATCH_DEFAULT_MAX 8
#define BATCH_DEFAULT_BS 16
#define BATCH_DEFAULT_CAP_MAX 512
#define BATCH_DEFAULT_REQUESTS 1024
/* The device budget's share of the memory left after the weights, and the
 * most it takes: this many full sequences per decode row. */
#define BATCH_BUDGET_SEQS_PER_ROW 4

/* The most rows a prompt's tail takes in a step's greedy replays (one
 * below the tail chunk: what the ladder leaves; a longer rest, from a
 * chunk of one token, runs as single steps). */
#define BATCH_TAIL_ROWS (TAIL_CHUNK - 1)

/* Mask worker threads at most (batch_masks.c; the machine's cores less
 * one, the runner's thread joining them). */
#define BATCH_MASK_WORKERS 4

typedef struct batch_masks batch_masks;

/* Sampling kinds with decode entries at once (the least recently used is
 * removed for a new one). */
#define BATCH_MAX_KINDS 4

/* One paged entry: B sequences of T tokens. */
typedef struct batch_entry {
  int64_t batch, tokens;
  bool logits;   /* no greedy suffix: the step reads back f32[B, vocab] (tests) */
  bool rows;     /* traced with the embeds / embeds_on slots (input rows) */
  uint32_t kind; /* 0: the greedy suffix; else the row sampler of this kind */
  bool added;
  /* Its compile said UNSUPPORTED (a limit of the device): not tried again;
   * its rows run as two replays of the smaller entries instead. */
  bool unsupported;
  uint32_t id;
  poot_exec_slot token, pos, table, write;
  poot_exec_slot s_f, s_i, s_seed, s_ctr, s_bias_id, s_bias; /* kind != 0 */
  poot_exec_slot s_mask;                                     /* a MASK kind */
  poot_exec_slot s_pen_id, s_pen_n;                          /* a PENALTIES kind */
  poot_exec_slot s_embeds, s_embeds_on;                      /* rows */
} batch_entry;

/* A request's input rows (poot_batch_request.inputs; batch_inputs.c):
 * the row of each prompt position (−1: the id's own embedding) and their
 * values, owned, kept until the request is taken finished. */
typedef struct batch_img {
  int64_t n_prompt;
  int32_t *row_at; /* n_prompt */
  float *rows;     /* n_rows × hidden */
  size_t n_rows;
  uint64_t salt; /* a hash of the rows and their positions (never 0) */
} batch_img;

/* The decode entries of one sampling kind (created on first use). */
typedef struct batch_kind {
  uint32_t kind;
  uint64_t used; /* the replay count when it last ran (LRU) */
  batch_entry decode[POOT_BATCH_MAX_SIZES];
} batch_kind;

/* A sampled request's slot values (as poot__driver_request_init fills
 * them; r.i[1] is the penalty window's lag, 0 = the whole history), its
 * grammar's matcher (owned; NULL without a grammar) and, with penalties, its
 * window (owned; kept one id a step from the scheduler's history). */
typedef struct batch_req {
  bool used;
  uint64_t caller_id;
  int64_t n_prompt; /* a row's Philox counter: its history's length less this */
  driver_request r;
  poot_grammar_matcher *gm;
  /* With a grammar: its next mask (owned, mask_words), filled by a mask
   * worker at the start of a step (mask_ready) and cleared when the
   * matcher accepts the step's id. */
  uint32_t *mask;
  bool mask_ready;
  pen_window pw; /* zeroed without penalties */
} batch_req;

/* One row of a batched step: plan item `item`, its token at offset `off`. */
typedef struct batch_row {
  int32_t item;
  int32_t off;
  uint32_t kind;  /* 0: greedy */
  batch_req *req; /* kind != 0 (its penalty window moves on) */
} batch_row;

struct poot_batch {
  poot_executor *ex; /* NULL after poot_batch_release_executor */
  poot_model *model;
  char *program;
  bool keep_target; /* poot_batch_options.keep_target */
  bool fault_armed; /* poot_batch_arm_kernel_fault: the next replay traps */
  int32_t max_batch, bs, num_blocks, token_budget, max_requests;
  int32_t scratch; /* the block dummy rows write: num_blocks (the pool never hands it out) */
  int64_t cap, width, chunk;    /* width: blocks per table (cap / bs) */
  int64_t ladder[LADDER_RUNGS]; /* poot__driver_ladder_make of chunk */
  poot_dtype kv;
  uint64_t kv_bytes;
  int32_t n_sizes;
  int32_t sizes[POOT_BATCH_MAX_SIZES];
  batch_entry decode[POOT_BATCH_MAX_SIZES]; /* decode[i]: B = sizes[i], T = 1 */
  batch_entry prefill[LADDER_RUNGS];        /* B = 1, T = ladder[i] */
  /* With input rows (batch_inputs.c): the B = 1 entries of the chunks that
   * hold one, their requests' rows (caller id → batch_img *) and a step's
   * embeds / embeds_on values (made with the first request that has rows). */
  batch_entry prefill_rows[LADDER_RUNGS], decode_rows;
  poot_map img_index;
  float *emb;
  int32_t *emb_on;
  /* poot__batch_set_decode_logits: decode through the logits variants. */
  batch_entry decode_logits[POOT_BATCH_MAX_SIZES];
  float *logits_out;
  batch_row *logits_rows; /* the plan rows of the step's logits replays (as brows) */
  int32_t n_logits_rows;
  poot_kv_pool *pool;
  poot_scheduler *sched;
  /* Host copies of one step's slots, sized for the largest entry. */
  int32_t *tok, *pos, *table, *write;
  int32_t *out; /* a replay's output: max_batch rows of the widest sample words */
  /* Per plan item (at most max_batch): the ids, flags and results; a batched
   * replay's rows' ids and flags. */
  int32_t *ids, *ids_tmp;
  bool *nonfinite, *nonfinite_tmp;
  /* Per plan item / per batched row: the logprobs of a request that asks
   * for them (has_probs[i]; poot_batch_logprobs); cur_item: the item the
   * step's token callback is called for (-1 outside it). */
  poot_sampling_result *probs, *probs_tmp;
  bool *has_probs, *has_probs_tmp;
  int32_t cur_item;
  poot_scheduler_result *results;
  poot_batch_stats stats;
  /* The last run_plan's rows in batched replays, and its largest entry. */
  int32_t step_rows, step_batch;
  /* Sampling (batch_sample.c): the kinds' entries, the sampled requests. */
  batch_kind kinds[BATCH_MAX_KINDS];
  uint32_t n_kinds;
  batch_req *reqs;    /* max_requests records */
  poot_map req_index; /* caller id → 1 + index in reqs */
  batch_row *brows;   /* a step's rows (POOT__BATCH_STEP_ROWS) */
  batch_row *grows;   /* one kind's rows */
  /* Host copies of the sampler slots, max_batch rows. */
  float *sf, *sbias;
  int32_t *si, *sbias_id;
  uint32_t *sseed, *sctr;
  /* Grammars: the model's vocabulary for masks (built on the first grammar
   * request), mask words per row and the rows' masks (max_batch rows). */
  poot_grammar_vocab *gvocab;
  int64_t mask_words;
  uint32_t *smask;
  batch_masks *masks; /* the mask workers (started with the first grammar) */
  /* Penalties: the window lists' width (min(max_seq_len, vocab): a window
   * holds at most that many distinct ids), the rows' lists, what each row's
   * lists hold (max_batch; poot__pen_window_write rewrites only what
   * changed) and the last write's stamp. */
  int64_t pen_w;
  int32_t *spen_id, *spen_n;
  pen_row *pen_rows;
  uint64_t pen_stamp;
  poot_strbuf piece; /* a generated id's text for its grammar */
};

/* batch.c: adds entry `e` (traced with the greedy suffix, the row sampler of
 * e->kind, or none for logits; compiled; captured) unless it was added. */
POOT_MUST_USE poot_status poot__batch_ensure_entry(poot_batch *b, batch_entry *e);
/* batch.c: one replay of `e` with the host slot copies (token, pos, tables,
 * write rows) and `extra` slot values; the output into out. */
POOT_MUST_USE poot_status poot__batch_replay(poot_batch *b, batch_entry *e,
                                             const poot_exec_slot_value *extra, size_t n_extra,
                                             void *out, size_t out_size);

/* batch_sample.c: allocates the request records and slot copies (create). */
POOT_MUST_USE poot_status poot__batch_sample_init(poot_batch *b);
/* batch_sample.c: removes the kinds' entries and frees the records. */
void poot__batch_sample_deinit(poot_batch *b);
/* batch_sample.c: a request's record from its sampling parameters
 * (validated against the vocabulary; the seed resolved; with ignore_eos the
 * model's end ids banned, as the driver does) and its grammar (NULL: none;
 * with NULL parameters it runs greedy, as the driver's); kind 0 (greedy
 * without a bias, penalties, logprobs or a grammar) needs none.
 * INVALID_ARGUMENT naming the field, or a grammar without a tokenizer; IO
 * when a random seed cannot be drawn; OUT_OF_MEMORY. A record made is
 * handed to poot__batch_sample_put or freed by poot__batch_sample_free. */
POOT_MUST_USE poot_status poot__batch_sample_make(poot_batch *b, const poot_sampling_params *p,
                                                  const poot_grammar *grammar, batch_req *out);
/* batch_sample.c: frees what a record owns (its matcher). */
void poot__batch_sample_free(batch_req *r);
/* batch_sample.c: after a step, the new id `token` of a request with a
 * grammar is accepted by its matcher; *out_end when the grammar is complete
 * and cannot grow, or the id has no text and the grammar may end (the
 * driver's POOT_DRIVER_STOP_GRAMMAR), or the matcher refuses the id (only a
 * row whose every token was banned can draw one: it is flagged
 * non-finite). Nothing for a request without one. */
void poot__batch_sample_accept(poot_batch *b, uint64_t caller_id, int32_t token, bool *out_end);
/* batch_sample.c: keeps the record for the request `caller_id` (submitted).
 * OUT_OF_MEMORY from the index (the records themselves are preallocated). */
POOT_MUST_USE poot_status poot__batch_sample_put(poot_batch *b, uint64_t caller_id,
                                                 const batch_req *r);
/* batch_sample.c: the request's record, or NULL (greedy). */
batch_req *poot__batch_sample_get(const poot_batch *b, uint64_t caller_id);
/* batch_sample.c: forgets the request's record (finished). */
void poot__batch_sample_drop(poot_batch *b, uint64_t caller_id);
/* batch_sample.c: the rows of one sampled kind of the plan (the caller filled the host
 * copies of token, pos, tables and write rows for rows[0..n) and dummies up
 * to the entry size sizes[k]) as one replay of that kind's decode entry;
 * each row's id and flag into ids_tmp / nonfinite_tmp [0..n), and with a
 * LOGPROBS kind its logprobs into probs_tmp / has_probs_tmp. An id outside
 * the vocabulary (every token banned) comes back as 0, flagged. */
POOT_MUST_USE poot_status poot__batch_sample_rows(poot_batch *b, const poot_scheduler_plan *plan,
                                                  const batch_row *rows, int32_t n, int32_t k);

/* batch_inputs.c: a request's rows from its inputs (checked against the
 * model's hidden size and the prompt: INVALID_ARGUMENT naming the input),
 * owned by *out (NULL when there are none). OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__batch_inputs_make(poot_batch *b, const poot_batch_request *r,
                                                  batch_img **out);
void poot__batch_inputs_free(batch_img *im); /* NULL-safe */
/* batch_inputs.c: keeps `im` (owned from then on) for the request. */
POOT_MUST_USE poot_status poot__batch_inputs_put(poot_batch *b, uint64_t caller_id, batch_img *im);
/* batch_inputs.c: the request's rows, or NULL. */
const batch_img *poot__batch_inputs_get(const poot_batch *b, uint64_t caller_id);
/* batch_inputs.c: frees the request's rows (taken finished). */
void poot__batch_inputs_drop(poot_batch *b, uint64_t caller_id);
/* batch_inputs.c: frees every request's rows and the step buffers. */
void poot__batch_inputs_deinit(poot_batch *b);
/* batch_inputs.c: whether a position in [pos, pos + n) has a row. */
bool poot__batch_inputs_any(const batch_img *im, int64_t pos, int64_t n);
/* batch_inputs.c: the embeds / embeds_on values of positions [pos, pos +
 * T) into b->emb / b->emb_on (zeros, 0 where there is no row). */
void poot__batch_inputs_fill(poot_batch *b, const batch_img *im, int64_t pos, int64_t T);

/* batch_masks.c: starts the mask workers (rows: the most masks a step
 * fills, max_batch). OUT_OF_MEMORY when a thread cannot start. */
POOT_MUST_USE poot_status poot__batch_masks_create(int32_t max_rows, batch_masks **out);
void poot__batch_masks_destroy(batch_masks *m); /* NULL-safe; idle workers */
/* batch_masks.c: hands the masks of the plan's emitting grammar requests
 * (those not ready) to the workers; nothing without workers. Every post is
 * followed by poot__batch_masks_wait before the plan's requests change. */
void poot__batch_masks_post(poot_batch *b, const poot_scheduler_plan *plan);
/* batch_masks.c: fills what the workers have not taken on this thread, then
 * waits for them; the first failure of a fill (the others are still
 * filled). Nothing when nothing was posted. */
POOT_MUST_USE poot_status poot__batch_masks_wait(poot_batch *b);

#endif /* POOT_LLM_BATCH_IMPL_H */
