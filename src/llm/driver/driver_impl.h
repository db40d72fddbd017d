/* driver_impl.h — private to src/llm/driver: the driver object and the
 * entry helpers its files share (driver.c: creation, entries and feeding;
 * driver_generate.c: the generation loops). */
#ifndef POOT_LLM_DRIVER_IMPL_H
#define POOT_LLM_DRIVER_IMPL_H

#include "poot/llm/driver.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
#define OOM(what) poot_status_make(POOT_OUT_OF_MEMORY, "driver: %s", what)

/* The default prefill chunk: the longest of these that fits the capacity. */
#define DEFAULT_CHUNK 512
/* After the chunks, a prompt's rest runs in middle chunks of MID_CHUNK
 * tokens, then tail chunks of TAIL_CHUNK (each when the chunk is longer),
 * then one token a step (the batched runner: rows of a decode replay). */
#define MID_CHUNK 128
#define TAIL_CHUNK 16
/* The prefill ladder's rungs: the chunk, the middle chunk, the tail chunk. */
#define LADDER_RUNGS 3
/* Tokens of a step the driver copies without an allocation. */
#define STEP_TOKENS_INLINE 256

typedef struct driver_worker driver_worker;

/* What an entry's suffix does (driver_sample.c). */
typedef enum driver_role {
  DRIVER_ROLE_GREEDY = 0, /* the greedy suffix (or none: logits) */
  DRIVER_ROLE_FEED,       /* the greedy suffix plus the penalty history update */
  DRIVER_ROLE_SAMPLE,     /* the sampling suffix of `kind` */
  /* A grammar's kind runs in two entries, so the host fills the mask while
   * the device runs the model: FORWARD (the model, the history update, the
   * logits kept as the state sampler.logits) then PICK (no model, T = 0: the
   * sampling suffix over that state, the mask a slot). */
  DRIVER_ROLE_FORWARD,
  DRIVER_ROLE_PICK,
  /* No model, T = 0: the request's logit-bias list (slots) scattered into
   * the dense state sampler.bias_dense (f32[vocab]) that SAMPLE and PICK add;
   * run once per request and after every reset of the states. */
  DRIVER_ROLE_BIAS,
} driver_role;

/* The sampler's parameter slots: sampler.f f32[8] = {temperature, top_p,
 * logf(min_p), typical_p, repeat_penalty, presence, frequency, 0};
 * sampler.i i32[4] = {top-k in force, the history lag, 0, 0}. */
#define DRIVER_SAMPLER_FPARAMS 8
#define DRIVER_SAMPLER_IPARAMS 4
/* i32 words of a sample step's output before the top-n logprobs: {id,
 * finite, any survivor, logprob bits}. */
#define DRIVER_SAMPLE_HEAD 4
/* Sampling kinds with an entry at once (the oldest is replaced). */
#define DRIVER_MAX_SAMPLERS 8

typedef struct driver_sample_shape {
  int64_t tokens, cap;
  uint32_t kind; /* poot_sampler_bits */
  driver_role role;
  /* The candidates a sorting kind sorts (top_k of the adjusted logits):
   * 0 for min(vocab, POOT_SAMPLING_MAX_TOP_K); see poot__driver_sort_width. */
  int64_t sort_k;
} driver_sample_shape;

/* One entry: a step shape traced on first use. */
typedef struct driver_entry {
  int64_t tokens; /* T */
  bool logits;    /* no greedy suffix: the step reads back f32[1, vocab] */
  bool whole;     /* the whole sequence in one pass (its key is "whole:T") */
  bool added;
  driver_role role;
  uint32_t kind;  /* SAMPLE / FEED: the sampler bits */
  int64_t sort_k; /* SAMPLE / PICK / FORWARD: driver_sample_shape.sort_k */
  uint32_t id;
  poot_exec_slot token, pos; /* the entry's slots */
  /* the sampler's slots (SAMPLE; FEED has i) */
  poot_exec_slot s_f, s_i, s_seed, s_bias_id, s_bias, s_mask;
  uint64_t request; /* the request whose parameters the slots hold */
} driver_entry;

struct poot_driver {
  poot_executor *ex;
  poot_model *model;
  int64_t cap, chunk, pos;
  poot_dtype kv_dtype; /* the K/V states' dtype (never NONE) */
  char *program;
  bool eager;
  poot_exec_dispatch_fn hook;
  void *hook_ctx;
  /* The prefill ladder: rung lengths (0: none), and an entry per rung. */
  int64_t ladder[LADDER_RUNGS];
  driver_entry decode, prefill[LADDER_RUNGS];
  driver_entry decode_logits, prefill_logits[LADDER_RUNGS]; /* added only by feed_logits */
  /* The whole sequence in one pass, once it grows past the model's restart
   * length (poot_model_rope_restart_length); T is that sequence's length. */
  driver_entry restart, restart_logits;
  int64_t restart_at;    /* 0: never */
  int64_t whole_pass_at; /* a feed past this length runs in one pass (0: never) */
  poot_token *history;   /* the tokens at positions [0, pos) */
  /* Penalty history: feed entries (the ladder's rungs, T = 1) and sample
   * entries. */
  driver_entry feed_prefill[LADDER_RUNGS], feed_decode;
  driver_entry samplers[DRIVER_MAX_SAMPLERS]; /* SAMPLE, or PICK with fwd[i] */
  driver_entry fwd[DRIVER_MAX_SAMPLERS];      /* FORWARD of a PICK kind */
  uint32_t n_samplers;
  driver_entry bias;          /* DRIVER_ROLE_BIAS (added on first use) */
  uint64_t bias_request;      /* the request whose bias the state holds (0: none) */
  bool counts_valid;          /* every cached token went through a history entry */
  uint64_t request;           /* generation requests so far */
  poot_grammar_vocab *gvocab; /* the tokenizer's pieces, built on first grammar use */
  driver_worker *worker;      /* the mask thread of a grammar request (else NULL) */
  /* driver_encode.c: the encode and input-row entries (NULL until used). */
  struct poot__driver_encode *enc;
  /* driver_embed.c: the encoder entries (NULL until used). */
  struct poot__driver_embed *emb;
};

/* One request's sampler slot values (driver_step.c). */
typedef struct driver_request {
  uint64_t id; /* d->request when it began */
  uint32_t kind;
  int32_t n_probs;
  float f[DRIVER_SAMPLER_FPARAMS];
  int32_t i[DRIVER_SAMPLER_IPARAMS];
  uint32_t seed[2];
  int32_t bias_id[POOT_SAMPLING_MAX_BIAS];
  float bias[POOT_SAMPLING_MAX_BIAS];
  uint64_t wait_ns; /* time waited for masks after the model's step returned */
} driver_request;

/* driver_generate.c: the grammar vocabulary of `model` (its tokenizer's
 * pieces and end-of-generation ids). INVALID_ARGUMENT without a tokenizer;
 * OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__driver_grammar_vocab(const poot_model *model,
                                                     poot_grammar_vocab **out);

/* The slot values of parameters `p` (validated) for a vocabulary of V and a
 * resolved seed; kind and id are left for the caller. */
void poot__driver_request_init(int64_t V, const poot_sampling_params *p, uint64_t seed,
                               driver_request *r);
/* Fills the mask for the next step (a MASK kind); the driver runs it on a
 * second thread while the device runs the model. */
typedef poot_status (*driver_mask_fn)(void *ctx);

/* One sampled step: feeds `last` through the entry of r->kind and returns
 * the choice. A MASK kind calls fill(fill_ctx) to write `mask` (the
 * grammar's mask words) while the device runs the model (on a worker
 * thread when `threaded`). INVALID_ARGUMENT when every token is banned. */
POOT_MUST_USE poot_status poot__driver_sample_step(poot_driver *d, driver_request *r,
                                                   poot_token last, driver_mask_fn fill,
                                                   void *fill_ctx, const uint32_t *mask,
                                                   poot_sampling_result *out);

/* A worker thread that runs one mask job at a time (driver_step.c). */
POOT_MUST_USE poot_status poot__driver_worker_start(driver_worker **out);
void poot__driver_worker_stop(driver_worker *w); /* NULL-safe */
/* Hands the worker a job (it must be idle: after start or a wait). */
void poot__driver_worker_post(driver_worker *w, driver_mask_fn fn, void *ctx);
/* Waits for the job and returns its status. */
POOT_MUST_USE poot_status poot__driver_worker_wait(driver_worker *w);

/* The prefill ladder of a chunk of `chunk` tokens (the driver's and the
 * batched runner's): out[0] the chunk, out[1] MID_CHUNK, out[2] TAIL_CHUNK,
 * each rung below the chunk only when the chunk is longer; 0 marks a rung
 * that is absent (and out[0] is 0 for a chunk of one token). */
void poot__driver_ladder_make(int64_t chunk, int64_t out[LADDER_RUNGS]);
/* The rung that takes the next step with `left` tokens to feed (the
 * longest that fits), or -1: a single token (a decode step). */
int poot__driver_ladder_rung(const int64_t ladder[LADDER_RUNGS], int64_t left);
/* Of n tokens, how many the rungs leave for single steps (fewer than the
 * shortest rung; n when the ladder has none). */
int64_t poot__driver_ladder_rest(const int64_t ladder[LADDER_RUNGS], int64_t n);

/* Adds entry `e` (trace, compile, capture) unless it was added. */
POOT_MUST_USE poot_status poot__driver_ensure_entry(poot_driver *d, driver_entry *e);
/* One step of `e` on tokens[0..T) at the current position, with extra slot
 * values; advances the position. */
POOT_MUST_USE poot_status poot__driver_run_step(poot_driver *d, driver_entry *e,
                                                const poot_token *tokens,
                                                const poot_exec_slot_value *extra, size_t n_extra,
                                                void *out, size_t out_size);
/* poot__driver_run_step that does not wait and reads nothing: the next step
 * is queued behind it on the device (poot_exec_step_io.queue), and a fault
 * of this one is reported by that step. */
POOT_MUST_USE poot_status poot__driver_queue_step(poot_driver *d, driver_entry *e,
                                                  const poot_token *tokens,
                                                  const poot_exec_slot_value *extra,
                                                  size_t n_extra);
/* As poot_driver_feed; hist: through the history entries (penalties). */
POOT_MUST_USE poot_status poot__driver_feed(poot_driver *d, const poot_token *ids, size_t count,
                                            bool hist, const poot_tensor *hist_i,
                                            poot_token *out_next, bool *out_nonfinite);

/* Binds every Weight leaf of `g` to the model's tensor of its key and loads
 * them into `ex` once (the driver's and the batched runner's weights). */
POOT_MUST_USE poot_status poot__driver_load_weights(poot_executor *ex, poot_model *model,
                                                    const poot_graph *g);

/* The argmax over logits f32[1, V] as i32[1] (two levels past 1,024). */
POOT_MUST_USE poot_status poot__driver_argmax(poot_graph *g, poot_value logits, int64_t vocab,
                                              poot_value *out);
/* Appends the suffix of `sh` to a traced step (driver_sample.c) and
 * verifies the graph. */
POOT_MUST_USE poot_status poot__driver_append_sampler(poot_graph *g, const driver_sample_shape *sh);
/* The candidates a request of `kind` with top_k `k` in force sorts: with
 * top-k on, the power of two at or above k, at least 64, below
 * min(vocab, POOT_SAMPLING_MAX_TOP_K); else 0 (that width). Part of the
 * entry's key: values of k in one such bucket share an entry. */
int64_t poot__driver_sort_width(uint32_t kind, int32_t k, int64_t vocab);
/* The graph of the BIAS role: sampler.bias_dense = the list scattered into
 * zeros. */
POOT_MUST_USE poot_status poot__driver_bias_graph(int64_t vocab, poot_graph **out_graph);
/* poot_exec_reset_state, and what the driver keeps of the states' contents
 * forgotten (the dense bias). Every reset of the driver goes through it. */
POOT_MUST_USE poot_status poot__driver_reset_states(poot_driver *d);
/* The PICK entry's graph before its suffix: the state sampler.logits
 * f32[vocab] as the output f32[1, vocab]. */
POOT_MUST_USE poot_status poot__driver_pick_graph(int64_t vocab, poot_graph **out_graph);
/* The generation loop (driver_generate.c) over a prompt, with input rows
 * (n_inputs > 0: generate_with_inputs) or without. */
POOT_MUST_USE poot_status poot__driver_generate(poot_driver *d, const poot_token *prompt,
                                                size_t count, const poot_driver_input *inputs,
                                                size_t n_inputs,
                                                const poot_driver_generate_options *options,
                                                poot_driver_token_fn fn, void *fn_ctx,
                                                poot_driver_generate_result *out);
/* INVALID_ARGUMENT when `id` is a row that only pads the tokenizer's
 * vocabulary; `what` and `at` say where it came from. */
POOT_MUST_USE poot_status poot__driver_check_token_known(const poot_driver *d, poot_token id,
                                                         const char *what, size_t at);
/* i32 words of a sample step's output. */
uint32_t poot__driver_sample_words(uint32_t kind, int64_t vocab);

/* driver_encode.c: removes its entries and frees d->enc (destroy calls it
 * before unloading). */
void poot__driver_encode_release(poot_driver *d);

/* driver_encode.c: resets and feeds `prompt` from position 0 with the rows
 * of `inputs` (checked as poot_driver_generate_with_inputs says; copied and
 * kept for poot__driver_feed_next until poot__driver_inputs_clear or the next
 * call) and returns the greedy choice after it. */
POOT_MUST_USE poot_status poot__driver_feed_inputs(poot_driver *d, const poot_token *prompt,
                                                   size_t count, const poot_driver_input *inputs,
                                                   size_t n_inputs, poot_token *out_next,
                                                   bool *out_nonfinite);

/* driver_encode.c: poot_driver_feed of one generated id after
 * poot__driver_feed_inputs; a sequence recomputed at the rope restart
 * length keeps the prompt's rows. */
POOT_MUST_USE poot_status poot__driver_feed_next(poot_driver *d, poot_token id,
                                                 poot_token *out_next, bool *out_nonfinite);

/* driver_encode.c: forgets the rows poot__driver_feed_inputs kept (a
 * generation's end). */
void poot__driver_inputs_clear(poot_driver *d);

/* driver_embed.c: removes the encoder entries and frees d->emb (destroy
 * calls it before unloading). */
void poot__driver_embed_release(poot_driver *d);

/* driver_embed.c: the graph whose weights an encoder driver loads at
 * creation (one sequence of one token; with the classifier when the model
 * has one). */
POOT_MUST_USE poot_status poot__driver_embed_weights_graph(poot_driver *d, poot_graph **out_graph);

/* batch.c: the runner's model (borrowed), for batch_generate.c. */
struct poot_batch;
const poot_model *poot__batch_model(const struct poot_batch *batch);

#endif /* POOT_LLM_DRIVER_IMPL_H */
