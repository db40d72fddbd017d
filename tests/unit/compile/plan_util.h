/* plan_util.h — shared by the compile tests: random inputs for a graph's
 * leaves, plan-on-interpreter versus poot_eval comparison. */
#ifndef POOT_TESTS_COMPILE_PLAN_UTIL_H
#define POOT_TESTS_COMPILE_PLAN_UTIL_H

#include "poot/compile.h"
#include "poot/eval.h"
#include "poot/graph.h"

typedef struct pt_inputs {
  size_t count;
  char **names;
  poot_tensor *tensors;
} pt_inputs;

/* Random inputs for every root leaf: floats uniform in [-1, 1) (weights
 * scaled by `wscale`), packed weights quantized from such floats, integer
 * slots/params uniform in [0, int_hi), "pos" = pos, states zero. */
poot_status pt_inputs_make(const poot_graph *g, uint64_t seed, int64_t int_hi, int64_t pos,
                           float wscale, pt_inputs *out);
void pt_inputs_free(pt_inputs *in);
/* Sets every element of input `name` to v (integers). */
void pt_inputs_set_int(pt_inputs *in, const char *name, int64_t v);

typedef struct pt_result {
  bool ok;
  double max_err;     /* max |device - oracle| over every compared element */
  double max_allowed; /* the tolerance at that element */
  char what[256];
} pt_result;

/* Plans g for target, binds `in`, runs `steps` steps on the interpreter
 * (subgroup size sg), evaluates with poot_eval, and compares the primary
 * output, every state and every environment entry: exact when `exact`, else within
 * atol = tol_rel * max|oracle| per tensor. Returns the status of the first
 * failing call (plan, run or eval). */
poot_status pt_check(const poot_graph *g, const poot_kir_target *target, const pt_inputs *in,
                     uint32_t sg, bool exact, double tol_rel, pt_result *res);
/* The same with compile options o (o->target the target). */
poot_status pt_check_opt(const poot_graph *g, const poot_compile_options *o, const pt_inputs *in,
                         uint32_t sg, bool exact, double tol_rel, pt_result *res);

/* Graph pieces of the projection tests (gemv_test.c, gemm_test.c); they
 * return POOT_VALUE_NONE on a failed call (the graph's verify then fails). */
/* A param [d0, d1] (d1 = 0: [d0]). */
poot_value pt_param(poot_graph *g, const char *name, poot_dtype dt, int64_t d0, int64_t d1);
/* x [M, K] times w [N, K] (dequantized or converted to f32 inline). */
poot_value pt_dot_nt(poot_graph *g, poot_value x, poot_value w);
/* The FFN of a decoder layer as g's output: y = x + down(swiglu(gate(xn),
 * up(xn))), xn = rms_norm(x), x [m, h] f32, weights of dtype wt (ff rows for
 * gate and up). NULL, or the first failed call's status. */
poot_status pt_ffn_graph(poot_graph *g, int64_t m, int64_t h, int64_t ff, poot_dtype wt);
/* The projection tests' check on one interpreter target t (subgroup size
 * sg): g's plan runs template `tmpl` exactly when `want`, and its outputs
 * match poot_eval within the dot cases' bound, k · 4.8e-7 of the largest
 * output (a length-k f32 sum, terms bounded by the largest weight). false
 * with the reason in why otherwise; prints the error on success. */
bool pt_check_projection(const poot_graph *g, const pt_inputs *in, const poot_kir_target *t,
                         uint32_t sg, int64_t k, const char *tmpl, bool want, const char *what,
                         char *why, size_t why_size);
/* Whether a dispatch of g's plan for target t ran template `what`
 * ("gemv", "gemm", …: the plan's dispatch names). */
bool pt_uses_template(const poot_graph *g, const poot_kir_target *t, const char *what);
bool pt_uses_template_opt(const poot_graph *g, const poot_compile_options *o, const char *what);

/* Runs g's plans under options a and b (one step each on the interpreter,
 * subgroup size sg) and compares their primary outputs byte for byte:
 * *out_same, and in why the first differing element when not. */
poot_status pt_same_bits(const poot_graph *g, const poot_compile_options *a,
                         const poot_compile_options *b, const pt_inputs *in, uint32_t sg,
                         bool *out_same, char *why, size_t why_size);

/* The plan's memory: no two temporaries with overlapping lifetimes overlap
 * in the arena, and every one fits. */
bool pt_memory_ok(const poot_plan *plan, char *why, size_t why_size);

#endif
