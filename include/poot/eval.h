/* poot/eval.h — the CPU reference evaluator, the oracle every backend is
 * verified against (DESIGN §2, §3, §9).
 *
 * poot_eval runs a graph on the host with naive loops, one thread, no SIMD,
 * and the operation order of every float computation written down in
 * docs/eval.md:
 *  - f16/bf16 arithmetic is computed in f32 and rounded to nearest even on
 *    store; f32 arithmetic is IEEE binary32 with no fused multiply-add;
 *  - every reduction, dot and cumsum accumulates in its stated accumulation
 *    dtype in row-major index order (each step rounded to that dtype);
 *  - integer arithmetic wraps (two's complement);
 *  - converts round as poot/graph.h states (float→int: truncate toward zero,
 *    saturate, NaN → 0);
 *  - dequantize goes through poot/quant.h, rng through Philox4x32-10;
 *  - composites are evaluated through their decomposition bodies.
 *
 * The graph must have passed poot_graph_verify (poot_graph_parse and
 * poot_graph_load verify). The evaluator re-checks only what it relies on
 * to stay memory safe. */
#ifndef POOT_EVAL_H
#define POOT_EVAL_H

#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input binding: the leaf's binding name (poot_graph_leaf_name: a
 * weight's display name such as "blk.3.attn_q" or "token_embd", a state's
 * name, a slot's kind name "token"/"pos"/"slot_map"/"write_map" or a named
 * slot's name, a root param's name) and a tensor of exactly the leaf's type.
 * The tensor is borrowed for the duration of the call. */
typedef struct poot_eval_input {
  const char *name;
  const poot_tensor *tensor;
} poot_eval_input;

/* A weight bound by identity: the key of its weight leaf
 * (poot_node.weight.key), which is how a model binds its weights. The
 * tensor is borrowed for the duration of the call. */
typedef struct poot_eval_weight {
  poot_weight_key key;
  const poot_tensor *tensor;
} poot_eval_weight;

typedef struct poot_eval_inputs {
  size_t count;
  const poot_eval_input *items;
  size_t weight_count;             /* weights bound by key (may be 0) */
  const poot_eval_weight *weights; /* a leaf is bound by name or by key, not both */
} poot_eval_inputs;

/* Where a failed check happened (filled when poot_eval returns
 * KERNEL_FAULT). */
typedef struct poot_eval_fault {
  uint32_t node;           /* id of the checking node (in a body if nested) */
  poot_op op;              /* its op */
  poot_trap trap;          /* its trap code */
  uint32_t composite_node; /* innermost enclosing composite, UINT32_MAX at root */
  int64_t index;           /* the offending index or start */
  int64_t limit;           /* the bound it violated (exclusive upper bound) */
} poot_eval_fault;

typedef struct poot_eval_options {
  /* States with no binding start as all-zero bytes instead of being an
   * INVALID_ARGUMENT. Default false. */
  bool zero_missing_states;
  /* Receives the details of a failed check (may be NULL). */
  poot_eval_fault *out_fault;
} poot_eval_options;

/* The defaults (every field zero/false). */
void poot_eval_options_init(poot_eval_options *options);

/* A named result tensor. */
typedef struct poot_eval_result {
  const char *name; /* state or environment name; "output" for the primary */
  poot_tensor tensor;
} poot_eval_result;

/* The results of one evaluation; owns every tensor it holds. */
typedef struct poot_evaluation {
  bool has_output;
  poot_tensor output;        /* the primary output (when the graph sets one) */
  uint32_t num_states;       /* every State, in the graph's order */
  poot_eval_result *states;  /* new value of each State */
  uint32_t num_env;          /* the environment, in the graph's order */
  poot_eval_result *env;
} poot_evaluation;

/* Evaluates `graph` (borrowed) with `inputs` (borrowed; may be NULL when the
 * graph has no bound leaves) and `options` (NULL: defaults). On success
 * *out_evaluation is a new evaluation (poot_evaluation_destroy).
 * Errors (*out_evaluation is NULL then):
 *  INVALID_ARGUMENT  a leaf has no binding, a binding names no leaf or twice
 *                    the same leaf, a tensor's dtype/shape/size differs from
 *                    its leaf's type, or the graph is malformed;
 *  KERNEL_FAULT      a check failed: "node %N (op): check failed: trap
 *                    <trap name>: …" naming the node, op and trap code (and
 *                    the enclosing composite); options->out_fault is filled;
 *  UNSUPPORTED       an op/dtype combination the oracle does not evaluate;
 *  OUT_OF_MEMORY     a host allocation failed.
 * Never aborts. Thread safe for distinct evaluations of one graph. */
POOT_MUST_USE poot_status poot_eval(const poot_graph *graph, const poot_eval_inputs *inputs,
                                    const poot_eval_options *options,
                                    poot_evaluation **out_evaluation);
void poot_evaluation_destroy(poot_evaluation *evaluation); /* NULL-safe */

/* A state or environment result by name; NULL when absent. Borrowed. */
const poot_tensor *poot_evaluation_state(const poot_evaluation *evaluation, const char *name);
const poot_tensor *poot_evaluation_env(const poot_evaluation *evaluation, const char *name);

/* Philox4x32-10: out = philox(counter, key), ten rounds with the Random123
 * multipliers (0xD2511F53, 0xCD9E8D57) and Weyl key increments (0x9E3779B9,
 * 0xBB67AE85) added before every round but the first. Pure, thread safe. */
void poot_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);
/* A 32-bit Philox word as an f32 in [0, 1): (bits >> 8) * 2^-24. */
float poot_philox_uniform(uint32_t bits);

#ifdef __cplusplus
}
#endif

#endif /* POOT_EVAL_H */
