/* poot/llm/driver.h — the generation driver, first part (DESIGN §7 "Driver",
 * §6; docs/driver.md).
 *
 * A driver binds one model to one executor: it loads the model's weights
 * once as one executable, and adds the entries it needs on first use — a
 * decode entry (B = 1, T = 1) and a prefill entry (B = 1, T = chunk), both
 * over one KV capacity — each reused for every position. Entries are keyed
 * by program (the model), step shape ("decode:cap=C", "prefill:T:cap=C"),
 * sampling suffix ("greedy") and the carried inputs they bind ("token,pos"):
 * a token, a position or a sampler value never makes a new entry.
 *
 * Greedy decoding appends an on-device argmax (reduce argmax, i32) and a
 * non-finite flag (any logit NaN or infinite) to each traced graph, so a
 * step reads back two i32 words — the chosen id and the flag — never the
 * full logits.
 *
 * A prompt is run as whole prefill chunks followed by its remaining tokens
 * one at a time through the decode entry (so no prompt length makes a new
 * entry); the last step's argmax is the first generated token.
 *
 * Faults come back as the executor's typed statuses, never an abort:
 * KERNEL_FAULT (naming the kernel and trap code; e.g. a token id past the
 * vocabulary faults in the gather kernel), then NEEDS_RESET for every step
 * until poot_driver_reset; TIMEOUT / DEVICE_LOST, then POISONED.
 *
 * Not thread safe: one driver is used from one thread at a time. */
#ifndef POOT_LLM_DRIVER_H
#define POOT_LLM_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/llm/grammar.h"
#include "poot/llm/model.h"
#include "poot/llm/sampling.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_driver poot_driver;

typedef struct poot_driver_options {
  /* KV capacity per sequence (positions); 0 → the model's context length,
   * at most 512. Must not exceed the model's context length when known. */
  int64_t cap;
  /* Tokens per prefill chunk; 0 → 512, or 16 when the capacity is below
   * 512 (1 below 16); 1 → no prefill entry (every prompt token goes through
   * the decode entry). A chunk longer than 16 has a tail chunk of 16: a
   * prompt runs in chunks, then chunks of 16, then one token a step. */
  int64_t prefill_chunk;
  /* The entry keys' program name; NULL → "model". */
  const char *program;
  /* The KV cache's element type: POOT_DTYPE_F16 (half the bytes a step
   * reads) or POOT_DTYPE_F32; POOT_DTYPE_NONE takes the model's default
   * (poot_model_kv_dtype_default: f16; docs/driver.md). INVALID_ARGUMENT
   * naming kv_dtype for any other. */
  poot_dtype kv_dtype;
} poot_driver_options;

static inline poot_driver_options poot_driver_options_default(void) {
  poot_driver_options o = {.cap = 0, .prefill_chunk = 0, .program = NULL};
  return o;
}

/* Creates a driver over `executor` and `model` (both borrowed; they must
 * outlive the driver): traces the decode graph, binds its weights by name
 * and loads them with poot_exec_load_weights (once). The executor must have
 * no weights loaded. options may be NULL. INVALID_ARGUMENT (a bad capacity
 * or chunk); errors of tracing and of the executor. */
POOT_MUST_USE poot_status poot_driver_create(poot_executor *executor, poot_model *model,
                                             const poot_driver_options *options,
                                             poot_driver **out_driver);
/* Removes the driver's entries and unloads the executor. NULL-safe. */
void poot_driver_destroy(poot_driver *driver);

/* The ids in the KV cache (positions [0, pos)); borrowed until the next
 * call that feeds or resets. */
const poot_token *poot_driver_cached_ids(const poot_driver *driver);

/* The KV capacity and the prefill chunk in use. */
int64_t poot_driver_cap(const poot_driver *driver);
/* The KV cache's element type in use (f16 or f32) and its size in bytes
 * (K and V of every layer at every position of the capacity). */
poot_dtype poot_driver_kv_dtype(const poot_driver *driver);
uint64_t poot_driver_kv_bytes(const poot_driver *driver);
int64_t poot_driver_prefill_chunk(const poot_driver *driver);
/* The next position (tokens already in the KV cache). */
int64_t poot_driver_pos(const poot_driver *driver);

/* Adds the decode and (when chunk > 1) prefill entries now instead of on
 * first use (compilation and capture), so that later steps only run. */
POOT_MUST_USE poot_status poot_driver_prepare(poot_driver *driver);
/* Adds the decode entry and the prefill rungs a prompt of n_prompt tokens
 * runs through (down the ladder: chunk, middle, tail), no others: a prompt
 * of 40 tokens at chunk 512 compiles the decode and the 16-token entries,
 * not the 512 or 128 ones (those are added on first use, as every entry
 * is). The executor's statuses. */
POOT_MUST_USE poot_status poot_driver_prepare_prompt(poot_driver *driver, size_t n_prompt);

/* Eager mode (for benchmarks and tests): later steps submit their
 * dispatches one by one (poot_exec_step_io.eager) instead of replaying the
 * recording. Off by default. */
void poot_driver_set_eager(poot_driver *driver, bool eager);
/* Per-dispatch profile of eager steps (poot_exec_step_io.on_dispatch); fn
 * NULL turns it off. */
void poot_driver_set_dispatch_hook(poot_driver *driver, poot_exec_dispatch_fn fn, void *ctx);

/* Zeroes the KV cache (poot_exec_reset_state; clears NEEDS_RESET) and sets
 * the position to 0. POISONED, DEVICE_LOST. */
POOT_MUST_USE poot_status poot_driver_reset(poot_driver *driver);

/* Appends `count` ≥ 1 tokens at the current position (prefill chunks, then
 * single decode steps) and returns the greedy choice after the last one.
 * Ids are passed to the device unchecked (an id past the vocabulary is the
 * device's KERNEL_FAULT). out_nonfinite (may be NULL) is set when the last
 * step's logits held a NaN or an infinity (the id is then the first NaN's
 * index, as argmax defines it). CAPACITY when the tokens do not fit in the
 * capacity; the executor's statuses otherwise. On failure the position is
 * unchanged only when nothing ran; reset before reuse. */
POOT_MUST_USE poot_status poot_driver_feed(poot_driver *driver, const poot_token *ids, size_t count,
                                           poot_token *out_next, bool *out_nonfinite);

/* As poot_driver_feed, through entries without the greedy suffix (sampling
 * key ""; added on first use): out_logits receives the vocab logits of the
 * last position (f32[vocab]). For verification against the oracle; a
 * generation loop never needs it. Shares the KV cache and position with
 * poot_driver_feed. */
POOT_MUST_USE poot_status poot_driver_feed_logits(poot_driver *driver, const poot_token *ids,
                                                  size_t count, float *out_logits);

/* Streaming callback: `text` (len bytes, complete UTF-8) is the new text
 * after token `id` (id -1: text released at the end); return false to stop
 * generation (CANCELLED). */
typedef bool (*poot_driver_token_fn)(void *ctx, poot_token id, const char *text, size_t len);

typedef struct poot_driver_generate_options {
  int64_t max_new_tokens; /* N ≥ 0 */
  bool ignore_stop;       /* do not stop at the model's stop ids */
  bool add_bos;           /* tokenize with the model's specials (BOS) */
  bool no_text;           /* do not detokenize (callback text is empty) */
  /* Sampling parameters (borrowed; validated against the vocabulary). NULL:
   * greedy, through the greedy entries. Their stops, stop ids, max_tokens
   * (when ≥ 0, it caps max_new_tokens) and ignore_eos apply. */
  const poot_sampling_params *sampling;
  /* A grammar the output must follow (borrowed): its mask is applied on the
   * device before sampling, and generation ends when it is finished. */
  const poot_grammar *grammar;
  /* Keep the cached tokens the prompt starts with instead of resetting:
   * only the rest of the prompt is fed (at least its last token). With
   * penalties on, a cache not fed through the history entries is reset. */
  bool reuse_cache;
} poot_driver_generate_options;

static inline poot_driver_generate_options poot_driver_generate_options_default(void) {
  poot_driver_generate_options o = {.max_new_tokens = 64,
                                    .ignore_stop = false,
                                    .add_bos = true,
                                    .no_text = false,
                                    .sampling = NULL,
                                    .grammar = NULL,
                                    .reuse_cache = false};
  return o;
}

typedef enum poot_driver_stop_reason {
  POOT_DRIVER_STOP_LENGTH = 0, /* max_new_tokens */
  POOT_DRIVER_STOP_ID,         /* a stop id (end of generation or params' stop_ids) */
  POOT_DRIVER_STOP_STRING,     /* a stop string matched (it is not in the text) */
  POOT_DRIVER_STOP_CAPACITY,   /* the KV capacity is full */
  POOT_DRIVER_STOP_GRAMMAR,    /* the grammar cannot continue */
} poot_driver_stop_reason;

typedef struct poot_driver_generate_result {
  poot_token *ids; /* generated ids (a final stop id included); poot_malloc'ed */
  size_t n_ids;
  size_t n_prompt; /* prompt ids after tokenization */
  size_t n_reused; /* prompt ids found in the cache (reuse_cache) */
  bool stopped;    /* the last id is a stop id */
  bool hit_cap;    /* stopped because the KV capacity was full */
  poot_driver_stop_reason reason;
  int32_t stop_index; /* the stop string's index, -1 if none */
  size_t nonfinite;   /* steps whose logits held a NaN or an infinity */
  uint64_t seed;      /* the seed used (sampling) */
  /* With sampling->n_probs > 0: one entry per generated id; poot_malloc'ed. */
  poot_sampling_result *probs;
  char *text; /* the streamed text (stop strings cut); poot_malloc'ed, NUL-terminated */
  size_t text_len;
  double prefill_s; /* wall time of the prompt (to the first token) */
  double decode_s;  /* wall time of the decode steps after it */
  /* With a grammar: host time filling masks (on the mask thread, overlapped
   * with the model's step), and the part of it the host waited for after it
   * had queued the model's step (the device runs that step meanwhile, so the
   * mask delays the step only by what it takes past the model's run). */
  double mask_s, mask_wait_s;
} poot_driver_generate_result;

void poot_driver_generate_result_deinit(poot_driver_generate_result *result); /* NULL-safe */

/* Resets (unless reuse_cache), tokenizes `prompt` (add_bos: the
 * tokenizer's specials; an empty prompt without a BOS is INVALID_ARGUMENT),
 * feeds it and decodes — greedily, or with options->sampling on the device —
 * until a stop id (unless ignore_stop), a stop string, the grammar's end, N
 * tokens, or the capacity. Each generated token is passed to `fn` (may be
 * NULL) with its text from a streaming decoder (a final stop id renders
 * nothing; the space after BOS is stripped; text that could begin a stop
 * string is held back until it cannot). A fault returns its status with the
 * ids produced so far in *out_result. INVALID_ARGUMENT for sampling
 * parameters that do not validate (naming the field), or when every token is
 * banned. */
POOT_MUST_USE poot_status poot_driver_generate(poot_driver *driver, const char *prompt,
                                               size_t prompt_len,
                                               const poot_driver_generate_options *options,
                                               poot_driver_token_fn fn, void *fn_ctx,
                                               poot_driver_generate_result *out_result);

/* As poot_driver_generate from prompt ids (no tokenization; count ≥ 1). */
POOT_MUST_USE poot_status poot_driver_generate_ids(poot_driver *driver, const poot_token *prompt,
                                                   size_t count,
                                                   const poot_driver_generate_options *options,
                                                   poot_driver_token_fn fn, void *fn_ctx,
                                                   poot_driver_generate_result *out_result);

/* ------------------------------------------- The rest of the driver API
 *
 * Hidden states and input rows (DESIGN §7 "Driver"; docs/driver.md
 * "Encode and input rows").
 *
 * encode runs a decoder over a whole sequence in one pass and reads back the
 * final-normalized hidden state of every position (POOT_MODEL_OUTPUT_HIDDEN):
 * one entry per token count T (step shape "encode:T:cap=C", sampling "",
 * bound inputs "token,pos"), added by prepare_encode or on first use. At most
 * POOT_DRIVER_ENCODE_ENTRIES are kept; adding one more removes the least
 * recently used.
 *
 * The K/V states are shared by name and type across a driver's entries (one
 * sequence at the driver's capacity), so encode replaces the sequence: it zeroes the cache, runs
 * the ids from position 0 and leaves them in the cache (the position is then `count`; a later feed
 * continues after them, a generate starts over).
 *
 * generate_with_inputs gives values for the model's declared inputs; a
 * decoder declares "embeds": rows of hidden_size floats used in place of
 * some prompt tokens' embeddings (POOT_MODEL_SLOT_EMBEDS; the family's
 * embedding scale applies as poot_model_step.input_embeds says). The rows
 * are written per step into slots of entries that bind
 * "token,pos,embeds,embeds_on" (decode:cap=C, prefill:T:cap=C and, for a
 * prompt that runs in one pass, whole:T:cap=C; sampling "greedy"): no row
 * value makes a new entry. Prompt chunks without a row run through the
 * ordinary entries. */

#define POOT_DRIVER_ENCODE_ENTRIES 16 /* encode entries kept at once */

/* Adds the encode entries for the token counts row_counts[0..n) now
 * (compile and capture), so that poot_driver_encode with those counts only
 * runs. Counts already added are skipped. INVALID_ARGUMENT for a count < 1
 * or more than POOT_DRIVER_ENCODE_ENTRIES distinct counts; CAPACITY for a
 * count above the driver's capacity; the executor's statuses. */
POOT_MUST_USE poot_status poot_driver_prepare_encode(poot_driver *driver, const int64_t *row_counts,
                                                     size_t n);

/* The final-normalized hidden states of ids[0..count) (count ≥ 1) from
 * position 0 in one pass, into out_hidden: count × hidden_size floats,
 * row-major (f32[count, hidden]). Replaces the driver's sequence (above):
 * position count afterwards. Ids are passed unchecked, as poot_driver_feed
 * does. INVALID_ARGUMENT (NULL ids or buffer, count 0); CAPACITY when count
 * exceeds the capacity (nothing runs); the executor's statuses (after a
 * failed step the position is 0 and, for a fault, the executor wants
 * poot_driver_reset). */
POOT_MUST_USE poot_status poot_driver_encode(poot_driver *driver, const poot_token *ids,
                                             size_t count, float *out_hidden);

/* One row of an input: the prompt index it replaces and its values
 * (borrowed for the call). */
typedef struct poot_driver_input_row {
  int64_t index;       /* in [0, prompt count) */
  const float *values; /* n_values floats */
  size_t n_values;     /* the input's row width: hidden_size for "embeds" */
} poot_driver_input_row;

/* Values for one declared input, by name ("embeds"). */
typedef struct poot_driver_input {
  const char *name;
  const poot_driver_input_row *rows; /* n_rows rows, distinct indices, any order */
  size_t n_rows;
} poot_driver_input;

/* As poot_driver_generate_ids, with inputs[0..n_inputs) bound while the
 * prompt is fed: the prompt id at a row's index is still given (any id the
 * model has, e.g. 0) and its embedding gathered, but the row's values are
 * used in its place. Generation after the prompt is as generate_ids's.
 * INVALID_ARGUMENT naming the input for an unknown or repeated name, a row
 * index outside the prompt or repeated, a row of another width, NULL
 * values; the statuses of poot_driver_generate_ids. The rows are kept (copied)
 * while the call runs, so a sequence recomputed past the rope restart
 * length (poot_model_rope_restart_length) keeps them. */
POOT_MUST_USE poot_status poot_driver_generate_with_inputs(
    poot_driver *driver, const poot_token *prompt, size_t count, const poot_driver_input *inputs,
    size_t n_inputs, const poot_driver_generate_options *options, poot_driver_token_fn fn,
    void *fn_ctx, poot_driver_generate_result *out_result);

/* ------------------------------------------------------------- Encoders
 *
 * Sentence embeddings and cross-encoder scores of an encoder model
 * (poot_model_is_encoder: BERT; docs/encoders.md). A batch of sequences of
 * different lengths runs in one step: each entry is traced for B sequences
 * of T tokens (step shape "embed:B:T", sampling the output's form, e.g.
 * "mean+norm" or "scores", bound inputs "token,seq_len,token_type"),
 * compiled once; the sequences are right-padded to T, their lengths and
 * token types bound as slots, so padding is masked in attention and never
 * counted in pooling. B is the power of two at or above the batch (at most
 * max_batch), T the multiple of 16 at or above the longest sequence (at
 * most the model's positions), so a handful of entries serves any input. At
 * most POOT_DRIVER_EMBED_ENTRIES are kept; adding one more removes the least
 * recently used. */

#define POOT_DRIVER_EMBED_ENTRIES 16 /* encoder entries kept at once */

/* One sequence: ids[0..count) with the model's specials ([CLS] … [SEP], as
 * poot_driver_encoder_tokenize makes them) and their token types (segment
 * ids; NULL: all 0). Borrowed for the call. */
typedef struct poot_driver_sequence {
  const poot_token *ids;
  const int32_t *types;
  size_t count;
} poot_driver_sequence;

typedef struct poot_driver_embed_options {
  bool scores;                /* the classifier's scores (rerank) instead of embeddings */
  poot_model_pooling pooling; /* DEFAULT: the model's (sentence-transformers' Pooling) */
  int normalize;              /* 0: as the model says (a Normalize module), 1: yes, -1: no */
  size_t max_batch;           /* sequences a step at most (0: 32); a power of two */
} poot_driver_embed_options;

static inline poot_driver_embed_options poot_driver_embed_options_default(void) {
  poot_driver_embed_options o = {
      .scores = false, .pooling = POOT_MODEL_POOLING_DEFAULT, .normalize = 0, .max_batch = 32};
  return o;
}

/* The width of one output row: hidden_size for embeddings, n_labels for
 * scores (0 when the model is not an encoder or has no classifier). */
size_t poot_driver_embed_width(const poot_driver *driver, const poot_driver_embed_options *options);

/* Runs seqs[0..n) through the encoder in steps of at most max_batch
 * sequences — longest first when there is more than one step, as
 * sentence-transformers batches, so each step pads only to its own longest —
 * and writes one row per sequence into out (n × width floats, row-major, in
 * input order). Does not touch the driver's decoder sequence.
 * UNSUPPORTED when the model is a decoder, or for scores when it has no
 * classifier; INVALID_ARGUMENT for an empty sequence, NULL ids or output, a
 * max_batch that is not a power of two; CAPACITY naming the sequence for
 * one longer than the model's positions (nothing runs); the executor's
 * statuses (a token id past the vocabulary is the embedding gather's
 * KERNEL_FAULT, as for decoders). */
POOT_MUST_USE poot_status poot_driver_embed(poot_driver *driver, const poot_driver_sequence *seqs,
                                            size_t n, const poot_driver_embed_options *options,
                                            float *out);

/* Tokenizes `text` (and `pair`, when not NULL: a cross-encoder's document)
 * as the model's tokenizer does (no driver needed) with its specials: [CLS] text [SEP] (pair
 * [SEP], type 1). With `truncate`, a sequence longer than the model's
 * positions is cut to fit (the text's, then the pair's tail first: the
 * longest-first rule of Hugging Face for the one that is longer), its
 * closing [SEP] kept; without, it is CAPACITY naming the lengths. On
 * success *out_ids and *out_types are poot_malloc'ed (free with poot_free).
 * INVALID_ARGUMENT for an empty text; UNSUPPORTED for a model without a
 * tokenizer or a [SEP]. */
POOT_MUST_USE poot_status poot_driver_encoder_tokenize(const poot_model *model, const char *text,
                                                       const char *pair, bool truncate,
                                                       poot_token **out_ids, int32_t **out_types,
                                                       size_t *out_count);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_DRIVER_H */
