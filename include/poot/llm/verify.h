/* poot/llm/verify.h — the oracle runner behind `poot verify greedy`
 * (DESIGN §9 tier 3; docs/verification.md).
 *
 * A greedy generation traced as the driver will trace it — one prefill graph
 * (B = 1, T = prompt length) and one decode graph (B = 1, T = 1), both over
 * one KV capacity — and evaluated step by step. The evaluator is passed in
 * (poot_verify_evaluator): the llm layer does not link the oracle itself, so
 * callers hand it poot_eval (poot_verify_oracle() below, a header inline that
 * the caller's binary links). States carry across steps as the graphs say.
 *
 * Not thread safe: one run at a time per model handle. */
#ifndef POOT_LLM_VERIFY_H
#define POOT_LLM_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/eval.h"
#include "poot/llm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a graph is evaluated: poot_eval's signature and its destroy. */
typedef struct poot_verify_evaluator {
  poot_status (*eval)(const poot_graph *graph, const poot_eval_inputs *inputs,
                      const poot_eval_options *options, poot_evaluation **out_evaluation);
  void (*destroy)(poot_evaluation *evaluation);
} poot_verify_evaluator;

/* The CPU oracle (links poot_eval into the caller). */
static inline poot_verify_evaluator poot_verify_oracle(void) {
  poot_verify_evaluator e = {poot_eval, poot_evaluation_destroy};
  return e;
}

typedef struct poot_verify_greedy_options {
  int64_t max_new_tokens; /* N ≥ 0: generated tokens at most */
  int64_t cap;            /* KV capacity; 0: prompt + N (rounded up to a block) */
  bool paged;             /* KV in a block pool (block_size rows a block) */
  int64_t block_size;     /* paged: 0 → 16 */
  bool ignore_stop;       /* do not stop at the model's stop ids */
  size_t keep_logits;     /* keep the logits of the first K generated steps */
  poot_dtype kv_dtype;    /* the KV cache's type, as the driver's (NONE: its default) */
  /* Teacher forcing (optional): when non-NULL, generated step k feeds
   * follow[k] instead of its argmax, for at most n_follow steps; the result's
   * ids are the fed ids, its margins and logits the steps' own. Borrowed. */
  const poot_token *follow;
  size_t n_follow;
} poot_verify_greedy_options;

static inline poot_verify_greedy_options poot_verify_greedy_options_default(void) {
  poot_verify_greedy_options o = {.max_new_tokens = 16};
  return o;
}

typedef struct poot_verify_greedy_result {
  poot_token *ids; /* generated ids (a final stop id included); poot_malloc'ed */
  size_t n_ids;
  bool stopped;   /* the last id is a stop id */
  float *margins; /* per generated id: top-1 minus top-2 logit */
  float *logits;  /* [n_logits, vocab] of the first generated steps */
  size_t n_logits;
  int64_t vocab;
  double seconds; /* wall time of the evaluations */
} poot_verify_greedy_result;

/* Frees the arrays and zeroes the struct (NULL-safe). */
void poot_verify_greedy_result_deinit(poot_verify_greedy_result *result);

/* The tier-2 tolerance of docs/verification.md for a device's f32 values
 * against the oracle's (both reading the same stored weights) at the end of
 * a decoder step of `config` at KV capacity `cap`: tol = κ·ε·max(1, rms) with
 * ε = λ·u·√(2S), λ = 6, κ = 8, u = 2^-24, S the sum of the reduction lengths
 * on a value's path (per layer 4·hidden + head_dim + 2·cap + heads·head_dim +
 * intermediate, then the final norm, and the classifier when
 * `with_classifier`), rms the root mean square of the finite ones of the n
 * reference values (0 when there are none). */
double poot_verify_tolerance(const poot_model_config *config, int64_t cap, const float *values,
                             int64_t n, bool with_classifier);

/* The tolerance term of an f16 K/V cache (docs/verification.md, "The f16
 * cache"): 2·max |l16 − l32| over the finite pairs of the oracle's logits of
 * the same steps with an f16 cache (l16) and with an f32 cache fed the same
 * ids (l32), n values each; 0 when n is 0. A device's fresh K/V element
 * within tier-2 error of the oracle's may round to the other f16 neighbour
 * (one ulp, where the oracle's f32-to-f16 rounding moved every element by up
 * to half an ulp), so the oracle's own f16-against-f32 difference, doubled,
 * bounds what such flips move the logits, in the statistical sense of the
 * tier-2 bound. */
double poot_verify_kv16_term(const float *l16, const float *l32, size_t n);

/* Runs prefill on `prompt` (n_prompt ≥ 1 ids) then greedy decode steps
 * (argmax, the first index on ties). `model` must have been opened with its
 * weights (the tokenizer is not needed). INVALID_ARGUMENT for an empty prompt
 * or a capacity below prompt + N; KERNEL_FAULT from a failed graph check;
 * errors of tracing and of the evaluator. On failure *out_result is zeroed. */
POOT_MUST_USE poot_status poot_verify_greedy(poot_model *model, const poot_verify_evaluator *ev,
                                             const poot_token *prompt, size_t n_prompt,
                                             const poot_verify_greedy_options *options,
                                             poot_verify_greedy_result *out_result);

/* The prompt ids of `text` (the tokenizer's specials added: BOS when the
 * model's tokenizer adds one). *out_ids is poot_malloc'ed. */
POOT_MUST_USE poot_status poot_verify_encode_text(const poot_model *model, const char *text,
                                                  size_t len, poot_token **out_ids,
                                                  size_t *out_count);

/* The prompt of a conversation: `messages_json` is a JSON array of
 * {"role", "content"} objects (or an object with a "messages" array), rendered
 * through the model's chat template with add_generation_prompt and the BOS/EOS
 * texts, then tokenized as transformers' apply_chat_template does (special
 * tokens parsed, none added). *out_text (may be NULL) receives the rendered
 * prompt (poot_free). UNSUPPORTED when the model has no chat template; FORMAT
 * for malformed JSON; errors of the template. */
POOT_MUST_USE poot_status poot_verify_encode_chat(const poot_model *model,
                                                  const char *messages_json, size_t len,
                                                  poot_token **out_ids, size_t *out_count,
                                                  char **out_text);

/* The text of generated ids, as `poot verify greedy` prints it: a final stop
 * id dropped, special tokens not rendered, the prefix space after BOS
 * stripped. Appends to `out`. */
POOT_MUST_USE poot_status poot_verify_decode(const poot_model *model, const poot_token *prompt,
                                             size_t n_prompt, const poot_token *ids, size_t n_ids,
                                             bool stopped, poot_strbuf *out);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_VERIFY_H */
