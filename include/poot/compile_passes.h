/* poot/compile_passes.h — the graph passes of the compiler (DESIGN §4.1):
 * canonicalize, constant-fold, CSE and DCE, and the default pipeline that
 * runs them to a fixed point.
 *
 * Every pass is a function from a graph to a NEW graph: the input (borrowed,
 * never modified) must have passed poot_graph_verify; the output is built
 * with the graph builder, verified, and owned by the caller
 * (poot_graph_destroy). Every pass leaves poot_eval's results bit-identical
 * for every binding of the inputs: the primary output, the new value of
 * every State (in the same order) and the environment, NaN payloads
 * included, and a failed check still fails with the same op, trap code,
 * index and bound. The graph's interface is kept: every Weight, State, Slot
 * and root Param leaf stays (with its name, type and order), so the same
 * eval bindings (and weight maps) apply to the output. The rules each pass
 * applies, and why each is exact under the oracle's semantics, are in
 * docs/passes.md.
 *
 * Each pass also runs inside composite bodies (recursively). *out_changes
 * (may be NULL) receives the number of rewrites made; a pass that makes none
 * returns an equivalent copy and 0.
 *
 * Errors: INVALID_ARGUMENT (NULL arguments, an unset or malformed graph),
 * OUT_OF_MEMORY, INTERNAL (a pass built a graph the verifier rejects: a
 * bug). On failure *out_graph is NULL and *out_changes 0.
 * Thread safety: distinct calls may run concurrently, also on one input. */
#ifndef POOT_COMPILE_PASSES_H
#define POOT_COMPILE_PASSES_H

#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_pass_options {
  /* constant_fold: the largest result (bytes, per result) a folded node may
   * materialise as a Const; bigger results stay computed. Default 65536. */
  size_t fold_max_bytes;
  /* constant_fold: also fold `iota` and `broadcast` of a constant, which
   * trade a cheap computation for a stored tensor. Default false. */
  bool fold_generators;
  /* run_default: the most rounds of the four passes. Default 8. */
  uint32_t max_rounds;
} poot_pass_options;

/* The defaults above. */
void poot_pass_options_init(poot_pass_options *options);

/* Local rewrites toward one canonical form (operand order of commutative
 * ops, gt/ge as lt/le, identities such as x*1, double negation, convert
 * round trips, chains of reshape/transpose/broadcast/bitcast, identity
 * movement, elementwise ops of identical broadcasts computed before the
 * broadcast). options may be NULL (defaults). */
POOT_MUST_USE poot_status poot_pass_canonicalize(const poot_graph *graph,
                                                 const poot_pass_options *options,
                                                 poot_graph **out_graph, uint32_t *out_changes);

/* Replaces every core op or composite whose operands are all Const leaves by
 * Const leaves holding its results, computed by poot_eval on a graph of just
 * that node (so folding is bit-exact by construction). Nodes whose check
 * would fail, whose results exceed options->fold_max_bytes, or that the
 * oracle does not evaluate are kept. Generators: see fold_generators. */
POOT_MUST_USE poot_status poot_pass_constant_fold(const poot_graph *graph,
                                                  const poot_pass_options *options,
                                                  poot_graph **out_graph, uint32_t *out_changes);

/* Common-subexpression elimination: in each region, a node identical to an
 * earlier one (op, operands, attributes, check; Const leaves by type and
 * bytes; composites by name, attributes, operands and body) is replaced by
 * the earlier one. Weight, State, Slot and Param leaves are never merged. */
POOT_MUST_USE poot_status poot_pass_cse(const poot_graph *graph, const poot_pass_options *options,
                                        poot_graph **out_graph, uint32_t *out_changes);

/* Dead-code elimination: drops nodes whose results reach neither the
 * output, a State update nor the environment (in bodies: the body's
 * results), except nodes carrying a check (a failed check is observable)
 * and the interface leaves (Weight, State, Slot, Param). Unused Consts go. */
POOT_MUST_USE poot_status poot_pass_dce(const poot_graph *graph, const poot_pass_options *options,
                                        poot_graph **out_graph, uint32_t *out_changes);

/* What poot_pass_run_default did. */
typedef struct poot_pass_report {
  uint32_t rounds;        /* rounds run (the last one made no change unless
                             max_rounds was reached) */
  uint32_t canonicalized; /* rewrites per pass, summed over rounds */
  uint32_t folded;
  uint32_t merged;
  uint32_t removed;
} poot_pass_report;

/* Runs canonicalize, constant_fold, cse and dce in that order, round after
 * round, until a round changes nothing or options->max_rounds rounds ran.
 * out_report may be NULL. */
POOT_MUST_USE poot_status poot_pass_run_default(const poot_graph *graph,
                                                const poot_pass_options *options,
                                                poot_graph **out_graph,
                                                poot_pass_report *out_report);

#ifdef __cplusplus
}
#endif

#endif /* POOT_COMPILE_PASSES_H */
