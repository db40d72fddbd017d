/* Constant folding through the oracle. A core op or composite whose
 * operands are all Const leaves is evaluated by poot_eval on a graph made of
 * just those Consts and a copy of the node, and replaced by Consts holding
 * the results: the folded bytes are the oracle's bytes by construction.
 * Operands may also be *generated* constants: an iota, or a broadcast of a
 * constant; their chain is copied into the small graph too. Kept as they
 * are: nodes whose check fails on these operands (the fault stays where it
 * was), op/dtype combinations the oracle does not evaluate, results larger
 * than fold_max_bytes, and (unless fold_generators) iota and broadcast
 * themselves, which are cheaper to compute than to store. */
#include <stdio.h>
#include <string.h>

#include "poot/eval.h"
#include "passes_impl.h"

typedef struct fold_ctx {
  poot_value *scratch; /* per src value, for copying composite bodies */
} fold_ctx;

/* True when v (a value of g) is a Const, an iota, or a broadcast of such a
 * value: a value known without any input. */
static bool const_valued(const poot_graph *g, poot_value v, int depth) {
  const poot_node *n = poot__pass_def(g, v);
  if (!n || depth > 8) return false;
  if (n->op == POOT_OP_LEAF) return n->storage == POOT_STORAGE_CONST;
  if (n->op == POOT_OP_IOTA) return true;
  if (n->op == POOT_OP_BROADCAST) return const_valued(g, n->operands[0], depth + 1);
  return false;
}

/* Copies the chain of a const_valued value of `from` into `to`. */
static poot_status copy_chain(poot_graph *to, const poot_graph *from, poot_value v,
                              poot_value *out) {
  const poot_node *n = poot__pass_def(from, v);
  if (n->op == POOT_OP_LEAF) return poot_graph_add_const(to, n->constant, out);
  poot_value op = POOT_VALUE_NONE;
  if (n->op == POOT_OP_BROADCAST) POOT_TRY(copy_chain(to, from, n->operands[0], &op));
  return poot_graph_add_node(to, n->op, n->num_operands, &op, &n->attrs, POOT_TRAP_NONE, out);
}

/* Evaluates a copy of `node` on constant-valued operands; *out_folded is
 * false when the node must stay. */
static poot_status fold_node(pass_rb *rb, const poot_node *node, const poot_value *ops,
                             poot_value *out_results, bool *out_folded) {
  fold_ctx *ctx = rb->user;
  *out_folded = false;
  poot_graph *t = NULL;
  poot_evaluation *ev = NULL;
  poot_value *vals =
      poot_malloc(((size_t)node->num_operands + node->num_results + 1) * sizeof(poot_value));
  if (!vals) return poot_status_make(POOT_OUT_OF_MEMORY, "constant_fold: out of memory");
  poot_value *tops = vals, *tres = vals + node->num_operands;
  poot_status st = poot_graph_create(&t);
  for (uint32_t i = 0; !st && i < node->num_operands; i++)
    st = copy_chain(t, rb->dst, ops[i], &tops[i]);
  if (!st) st = poot__pass_copy_node(t, rb->src, node, tops, ctx->scratch, tres);
  for (uint32_t i = 0; !st && i < node->num_results; i++) {
    char name[24];
    snprintf(name, sizeof name, "r%u", i);
    st = poot_graph_add_env(t, name, tres[i]);
  }
  if (!st) st = poot_graph_set_output(t, tres[0]);
  if (!st) st = poot_graph_verify(t);
  if (!st) {
    st = poot_eval(t, NULL, NULL, &ev);
    const poot_status_code code = poot_status_code_of(st);
    if (code == POOT_KERNEL_FAULT || code == POOT_UNSUPPORTED) {
      poot_status_free(st); /* not foldable: the node stays and faults at run time */
      st = NULL;
      goto done;
    }
  }
  if (!st && ev->num_env != node->num_results)
    st = poot_status_make(POOT_INTERNAL, "constant_fold: %u results, expected %u", ev->num_env,
                          node->num_results);
  for (uint32_t i = 0; !st && i < node->num_results; i++)
    st = poot_graph_add_const(rb->dst, &ev->env[i].tensor, &out_results[i]);
  if (!st) *out_folded = true;
done:
  poot_evaluation_destroy(ev);
  poot_graph_destroy(t);
  poot_free(vals);
  return st;
}

static poot_status fold_hook(pass_rb *rb, const poot_node *node, const poot_value *ops,
                             poot_value *out_results, bool *out_done) {
  *out_done = false;
  if (node->op == POOT_OP_LEAF) return NULL;
  if (!rb->opt->fold_generators && (node->op == POOT_OP_IOTA || node->op == POOT_OP_BROADCAST))
    return NULL;
  for (uint32_t i = 0; i < node->num_operands; i++)
    if (!const_valued(rb->dst, ops[i], 0)) return NULL;
  for (uint32_t i = 0; i < node->num_results; i++) {
    const poot_type *ty = poot_graph_value_type(rb->src, node->results[i]);
    size_t bytes = 0;
    poot_status st = poot_type_byte_size(ty->dtype, &ty->shape, &bytes);
    if (st) {
      poot_status_free(st);
      return NULL;
    }
    if (bytes > rb->opt->fold_max_bytes) return NULL;
  }
  POOT_TRY(fold_node(rb, node, ops, out_results, out_done));
  if (*out_done) rb->changes++;
  return NULL;
}

poot_status poot_pass_constant_fold(const poot_graph *graph, const poot_pass_options *options,
                                    poot_graph **out_graph, uint32_t *out_changes) {
  if (out_graph) *out_graph = NULL;
  if (out_changes) *out_changes = 0;
  if (!graph || !out_graph)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_pass_constant_fold: NULL argument");
  poot_pass_options defaults;
  poot_pass_options_init(&defaults);
  fold_ctx ctx;
  const uint32_t nv = poot_graph_value_count(graph);
  ctx.scratch = poot_malloc((size_t)(nv ? nv : 1) * sizeof(poot_value));
  if (!ctx.scratch)
    return poot_status_make(POOT_OUT_OF_MEMORY, "poot_pass_constant_fold: out of memory");
  pass_rb rb;
  memset(&rb, 0, sizeof rb);
  rb.src = graph;
  rb.opt = options ? options : &defaults;
  rb.hook = fold_hook;
  rb.user = &ctx;
  poot_status st = poot__pass_rebuild(&rb, out_graph);
  if (!st && out_changes) *out_changes = rb.changes;
  poot_free(ctx.scratch);
  return st;
}
