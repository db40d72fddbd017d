/* poot_eval: binds the inputs, walks every region in its topological order,
 * evaluates composites through their bodies, and gathers the results. */
#include "eval_impl.h"

#include <stdio.h>

/* The dispatch: each core op's reference routine, as its row in the op table
 * (poot/graph_ops.h) names it. */
static const ev_op_fn ev_ops[POOT_OP_COUNT] = {
#define X(ID, name, lo, hi, cls, rule, ref, trap) [POOT_OP_##ID] = poot__eval_##ref,
    POOT_GRAPH_OPS(X)
#undef X
};

void poot_eval_options_init(poot_eval_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

poot_status poot__eval_fault(ev_ctx *ctx, const poot_node *node, int64_t index, int64_t limit,
                             const char *what) {
  if (ctx->options && ctx->options->out_fault) {
    poot_eval_fault *f = ctx->options->out_fault;
    f->node = node->id;
    f->op = node->op;
    f->trap = node->trap;
    f->composite_node = ctx->composite;
    f->index = index;
    f->limit = limit;
  }
  char where[160] = "";
  if (ctx->composite != UINT32_MAX) {
    const poot_node *c = poot_graph_node(ctx->graph, ctx->composite);
    snprintf(where, sizeof where, " (in composite %%%u %s)", ctx->composite,
             c && c->name ? c->name : "?");
  }
  return poot_status_make(POOT_KERNEL_FAULT,
                          "node %%%u (%s): check failed: trap %s: %s %lld outside [0, %lld)%s",
                          node->id, poot_op_name(node->op), poot_trap_name(node->trap), what,
                          (long long)index, (long long)limit, where);
}

/* ------------------------------------------------------------- buffers */

static void buf_release(ev_buf *b) {
  if (b->owned) poot_free(b->data);
  b->data = NULL;
  b->owned = false;
}

static poot_status buf_alloc(ev_ctx *ctx, poot_value v, ev_buf **out) {
  *out = NULL;
  const poot_type *t = poot_graph_value_type(ctx->graph, v);
  if (!t || v >= ctx->num_values)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: value %%%u is undefined", v);
  ev_buf *b = &ctx->bufs[v];
  buf_release(b);
  size_t size = 0;
  int64_t count = 0;
  POOT_TRY(poot_type_byte_size(t->dtype, &t->shape, &size));
  POOT_TRY(poot_shape_elements(&t->shape, &count));
  b->data = poot_calloc(size ? size : 1, 1);
  if (!b->data)
    return poot_status_make(POOT_OUT_OF_MEMORY, "eval: %zu bytes for value %%%u", size, v);
  b->type = *t;
  b->size = size;
  b->count = count;
  b->owned = true;
  *out = b;
  return POOT_OK_STATUS;
}

/* Zero-size tensors may come with a NULL pointer; they borrow this instead,
 * so that "has a value" is simply data != NULL. */
static uint8_t ev_empty[8];

/* Points value v at borrowed data of its own type. */
static poot_status buf_borrow(ev_ctx *ctx, poot_value v, void *data, size_t size) {
  const poot_type *t = poot_graph_value_type(ctx->graph, v);
  if (!t || v >= ctx->num_values)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: value %%%u is undefined", v);
  ev_buf *b = &ctx->bufs[v];
  buf_release(b);
  int64_t count = 0;
  POOT_TRY(poot_shape_elements(&t->shape, &count));
  b->type = *t;
  b->data = data ? data : ev_empty;
  b->size = size;
  b->count = count;
  b->owned = false;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- binding */

/* The weights bound by key: each has a tensor and a key of its own. */
static poot_status check_weight_inputs(const poot_eval_inputs *in) {
  if (!in || !in->weight_count) return NULL;
  if (!in->weights)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: %zu weight inputs but no array",
                            in->weight_count);
  for (size_t i = 0; i < in->weight_count; i++) {
    if (!in->weights[i].tensor)
      return poot_status_make(POOT_INVALID_ARGUMENT, "eval: weight input %zu has no tensor", i);
    for (size_t j = 0; j < i; j++)
      if (in->weights[j].key == in->weights[i].key)
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "eval: weight key %016llx is bound twice (inputs %zu and %zu)",
                                (unsigned long long)in->weights[i].key, j, i);
  }
  return NULL;
}

typedef struct ev_bindings {
  const poot_eval_inputs *inputs;
  bool *used;
} ev_bindings;

/* The input that binds `node`: by name, or for a weight by its key (the
 * key bindings are marked used after the named ones). */
static const poot_tensor *find_binding(ev_bindings *bind, const poot_node *node, const char *name) {
  const poot_eval_inputs *in = bind->inputs;
  if (!in) return NULL;
  for (size_t i = 0; i < in->count; i++) {
    if (in->items[i].name && strcmp(in->items[i].name, name) == 0) {
      bind->used[i] = true;
      return in->items[i].tensor;
    }
  }
  for (size_t i = 0; node->storage == POOT_STORAGE_WEIGHT && i < in->weight_count; i++) {
    if (in->weights[i].key == node->weight.key) {
      bind->used[in->count + i] = true;
      return in->weights[i].tensor;
    }
  }
  return NULL;
}

static poot_status bind_root_leaf(ev_ctx *ctx, ev_bindings *bind, const poot_node *node) {
  const poot_value v = node->results[0];
  const poot_type *t = poot_graph_value_type(ctx->graph, v);
  size_t size = 0;
  POOT_TRY(poot_type_byte_size(t->dtype, &t->shape, &size));
  if (node->storage == POOT_STORAGE_CONST) {
    if (!node->constant || node->constant->size != size)
      return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u: constant of wrong size",
                              node->id);
    return buf_borrow(ctx, v, node->constant->data, size);
  }
  poot_strbuf name;
  poot_strbuf_init(&name);
  poot_graph_leaf_name(ctx->graph, node, &name);
  poot_status s = poot_strbuf_status(&name);
  if (s) goto done;
  const poot_tensor *tensor = find_binding(bind, node, name.data);
  poot_strbuf tb;
  poot_strbuf_init(&tb);
  poot_type_format(&tb, t);
  if (!tensor) {
    if (node->storage == POOT_STORAGE_STATE && ctx->options->zero_missing_states) {
      ev_buf *b = NULL;
      s = buf_alloc(ctx, v, &b);
    } else {
      s = poot_status_make(POOT_INVALID_ARGUMENT, "eval: no input binds %s '%s' (%s)",
                           poot_storage_name(node->storage), name.data, tb.data);
    }
  } else if (!poot_type_equal(&tensor->type, t) || tensor->size != size ||
             (size && !tensor->data)) {
    poot_strbuf got;
    poot_strbuf_init(&got);
    poot_type_format(&got, &tensor->type);
    s = poot_status_make(POOT_INVALID_ARGUMENT,
                         "eval: input '%s' is %s (%zu bytes), the %s expects %s (%zu bytes)",
                         name.data, got.data, tensor->size, poot_storage_name(node->storage),
                         tb.data, size);
    poot_strbuf_deinit(&got);
  } else {
    s = buf_borrow(ctx, v, tensor->data, size);
  }
  poot_strbuf_deinit(&tb);
done:
  poot_strbuf_deinit(&name);
  return s;
}

/* ------------------------------------------------------------- regions */

static poot_status eval_region(ev_ctx *ctx, const poot_region *region);

static poot_status eval_composite(ev_ctx *ctx, const poot_node *node) {
  const poot_region *body = node->body;
  if (!body || body->num_params != node->num_operands || body->num_results != node->num_results)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "eval: node %%%u (composite %s): body does not match its operands",
                            node->id, node->name ? node->name : "?");
  for (uint32_t i = 0; i < body->num_params; i++) {
    ev_buf *src = &ctx->bufs[node->operands[i]];
    POOT_TRY(buf_borrow(ctx, body->params[i], src->data, src->size));
  }
  const uint32_t saved = ctx->composite;
  ctx->composite = node->id;
  poot_status s = eval_region(ctx, body);
  ctx->composite = saved;
  for (uint32_t r = 0; !s && r < node->num_results; r++) {
    ev_buf *dst = NULL;
    const ev_buf *src = &ctx->bufs[body->results[r]];
    s = buf_alloc(ctx, node->results[r], &dst);
    if (!s && (!src->data || src->size != dst->size))
      s = poot_status_make(POOT_INVALID_ARGUMENT,
                           "eval: node %%%u (composite %s): result %u has the wrong type",
                           node->id, node->name ? node->name : "?", r);
    if (!s && dst->size) memcpy(dst->data, src->data, dst->size);
  }
  /* The body's values are local to it: release them. */
  for (uint32_t i = 0; i < body->num_nodes; i++) {
    const poot_node *n = poot_graph_node(ctx->graph, body->nodes[i]);
    for (uint32_t r = 0; n && r < n->num_results; r++) buf_release(&ctx->bufs[n->results[r]]);
  }
  return s;
}

static poot_status eval_node(ev_ctx *ctx, const poot_node *node) {
  ev_buf *in[64];
  ev_buf *out[8];
  if (node->num_operands > 64 || node->num_results > 8)
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (%s) has too many operands",
                            node->id, poot_op_name(node->op));
  for (uint32_t i = 0; i < node->num_operands; i++) {
    poot_value v = node->operands[i];
    if (v >= ctx->num_values || !ctx->bufs[v].data)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "eval: node %%%u (%s): operand %u (%%%u) has no value (run "
                              "poot_graph_verify first)",
                              node->id, poot_op_name(node->op), i, v);
    in[i] = &ctx->bufs[v];
  }
  if (node->op == POOT_OP_COMPOSITE) return eval_composite(ctx, node);
  if (node->op <= POOT_OP_LEAF || node->op >= POOT_OP_COMPOSITE || !ev_ops[node->op])
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u has an invalid op", node->id);
  for (uint32_t r = 0; r < node->num_results; r++) POOT_TRY(buf_alloc(ctx, node->results[r], &out[r]));
  return ev_ops[node->op](ctx, node, in, out);
}

static poot_status eval_region(ev_ctx *ctx, const poot_region *region) {
  for (uint32_t i = 0; i < region->num_nodes; i++) {
    const poot_node *node = poot_graph_node(ctx->graph, region->nodes[i]);
    if (!node) return poot_status_make(POOT_INVALID_ARGUMENT, "eval: bad node id in a region");
    if (node->op == POOT_OP_LEAF) {
      if (region->parent_node == UINT32_MAX) continue; /* bound up front */
      if (node->storage == POOT_STORAGE_CONST) {
        size_t size = 0;
        const poot_type *t = poot_graph_value_type(ctx->graph, node->results[0]);
        POOT_TRY(poot_type_byte_size(t->dtype, &t->shape, &size));
        if (!node->constant || node->constant->size != size)
          return poot_status_make(POOT_INVALID_ARGUMENT,
                                  "eval: node %%%u: constant of wrong size", node->id);
        POOT_TRY(buf_borrow(ctx, node->results[0], node->constant->data, size));
      } else if (node->storage != POOT_STORAGE_PARAM) {
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "eval: node %%%u: a %s leaf inside a composite body", node->id,
                                poot_storage_name(node->storage));
      }
      continue;
    }
    POOT_TRY(eval_node(ctx, node));
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- results */

static poot_status copy_out(const ev_buf *b, poot_tensor *out) {
  out->type = b->type;
  out->size = b->size;
  out->data = poot_malloc(b->size ? b->size : 1);
  if (!out->data) return poot_status_make(POOT_OUT_OF_MEMORY, "eval: %zu bytes of result", b->size);
  if (b->size) memcpy(out->data, b->data, b->size);
  return POOT_OK_STATUS;
}

void poot_evaluation_destroy(poot_evaluation *ev) {
  if (!ev) return;
  poot_free(ev->output.data);
  for (uint32_t i = 0; i < ev->num_states; i++) {
    poot_free((char *)ev->states[i].name);
    poot_free(ev->states[i].tensor.data);
  }
  for (uint32_t i = 0; i < ev->num_env; i++) {
    poot_free((char *)ev->env[i].name);
    poot_free(ev->env[i].tensor.data);
  }
  poot_free(ev->states);
  poot_free(ev->env);
  poot_free(ev);
}

static const poot_tensor *find_result(const poot_eval_result *r, uint32_t n, const char *name) {
  for (uint32_t i = 0; name && i < n; i++)
    if (strcmp(r[i].name, name) == 0) return &r[i].tensor;
  return NULL;
}

const poot_tensor *poot_evaluation_state(const poot_evaluation *ev, const char *name) {
  return ev ? find_result(ev->states, ev->num_states, name) : NULL;
}

const poot_tensor *poot_evaluation_env(const poot_evaluation *ev, const char *name) {
  return ev ? find_result(ev->env, ev->num_env, name) : NULL;
}

static poot_status collect(ev_ctx *ctx, poot_evaluation *ev) {
  const poot_graph *g = ctx->graph;
  poot_value out = poot_graph_output(g);
  if (out != POOT_VALUE_NONE) {
    if (out >= ctx->num_values || !ctx->bufs[out].data)
      return poot_status_make(POOT_INVALID_ARGUMENT, "eval: the output %%%u has no value", out);
    POOT_TRY(copy_out(&ctx->bufs[out], &ev->output));
    ev->has_output = true;
  }
  uint32_t ns = poot_graph_state_count(g), ne = poot_graph_env_count(g);
  ev->states = poot_calloc(ns ? ns : 1, sizeof *ev->states);
  ev->env = poot_calloc(ne ? ne : 1, sizeof *ev->env);
  if (!ev->states || !ev->env) return poot_status_make(POOT_OUT_OF_MEMORY, "eval: results");
  for (uint32_t i = 0; i < ns; i++) {
    poot_value sv = POOT_VALUE_NONE, nv = POOT_VALUE_NONE;
    poot_graph_state_at(g, i, &sv, &nv);
    const poot_node *leaf = poot_graph_value_node(g, sv, NULL);
    if (nv >= ctx->num_values || !ctx->bufs[nv].data || !leaf)
      return poot_status_make(POOT_INVALID_ARGUMENT, "eval: state %u has no new value", i);
    ev->states[i].name = poot_strdup(leaf->name ? leaf->name : "");
    ev->num_states = i + 1;
    if (!ev->states[i].name) return poot_status_make(POOT_OUT_OF_MEMORY, "eval: results");
    POOT_TRY(copy_out(&ctx->bufs[nv], &ev->states[i].tensor));
  }
  for (uint32_t i = 0; i < ne; i++) {
    const char *name = NULL;
    poot_value v = POOT_VALUE_NONE;
    poot_graph_env_at(g, i, &name, &v);
    if (v >= ctx->num_values || !ctx->bufs[v].data)
      return poot_status_make(POOT_INVALID_ARGUMENT, "eval: env '%s' has no value",
                              name ? name : "?");
    ev->env[i].name = poot_strdup(name ? name : "");
    ev->num_env = i + 1;
    if (!ev->env[i].name) return poot_status_make(POOT_OUT_OF_MEMORY, "eval: results");
    POOT_TRY(copy_out(&ctx->bufs[v], &ev->env[i].tensor));
  }
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- entry */

poot_status poot_eval(const poot_graph *graph, const poot_eval_inputs *inputs,
                      const poot_eval_options *options, poot_evaluation **out_evaluation) {
  if (out_evaluation) *out_evaluation = NULL;
  if (!graph || !out_evaluation)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: graph and out_evaluation are required");
  poot_eval_options defaults;
  poot_eval_options_init(&defaults);
  if (!options) options = &defaults;
  if (inputs && inputs->count && !inputs->items)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: inputs has a count but no items");

  poot_status s = POOT_OK_STATUS;
  ev_ctx ctx = {.graph = graph, .options = options, .composite = UINT32_MAX};
  ev_bindings bind = {.inputs = inputs};
  poot_evaluation *ev = NULL;
  ctx.num_values = poot_graph_value_count(graph);
  ctx.bufs = poot_calloc(ctx.num_values ? ctx.num_values : 1, sizeof *ctx.bufs);
  const size_t n_inputs = inputs ? inputs->count : 0;
  const size_t n_weights = inputs ? inputs->weight_count : 0;
  bind.used = poot_calloc(n_inputs + n_weights + 1, sizeof *bind.used);
  if (!ctx.bufs || !bind.used) {
    s = poot_status_make(POOT_OUT_OF_MEMORY, "eval: value table");
    goto fail;
  }
  for (size_t i = 0; i < n_inputs; i++) {
    const poot_eval_input *a = &inputs->items[i];
    if (!a->name || !a->tensor) {
      s = poot_status_make(POOT_INVALID_ARGUMENT, "eval: input %zu has no name or tensor", i);
      goto fail;
    }
    for (size_t j = 0; j < i; j++) {
      if (strcmp(inputs->items[j].name, a->name) == 0) {
        s = poot_status_make(POOT_INVALID_ARGUMENT, "eval: input '%s' is bound twice", a->name);
        goto fail;
      }
    }
  }

  s = check_weight_inputs(inputs);
  if (s) goto fail;

  /* Bind every leaf of the root region first, so that a missing or bad
   * binding is reported before any work. */
  const poot_region *root = poot_graph_root(graph);
  if (!root) {
    s = poot_status_make(POOT_INVALID_ARGUMENT, "eval: the graph has no root region");
    goto fail;
  }
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *node = poot_graph_node(graph, root->nodes[i]);
    if (node && node->op == POOT_OP_LEAF) {
      s = bind_root_leaf(&ctx, &bind, node);
      if (s) goto fail;
    }
  }
  for (size_t i = 0; i < n_inputs; i++) {
    if (!bind.used[i]) {
      s = poot_status_make(POOT_INVALID_ARGUMENT, "eval: input '%s' names no leaf of the graph",
                           inputs->items[i].name);
      goto fail;
    }
  }
  for (size_t i = 0; i < n_weights; i++) {
    if (!bind.used[n_inputs + i]) {
      s = poot_status_make(POOT_INVALID_ARGUMENT,
                           "eval: weight input %zu has key %016llx, which no weight leaf of the "
                           "graph has",
                           i, (unsigned long long)inputs->weights[i].key);
      goto fail;
    }
  }

  s = eval_region(&ctx, root);
  if (s) goto fail;

  ev = poot_calloc(1, sizeof *ev);
  if (!ev) {
    s = poot_status_make(POOT_OUT_OF_MEMORY, "eval: evaluation");
    goto fail;
  }
  s = collect(&ctx, ev);
  if (s) goto fail;
  *out_evaluation = ev;
  ev = NULL;

fail:
  poot_evaluation_destroy(ev);
  if (ctx.bufs)
    for (uint32_t i = 0; i < ctx.num_values; i++) buf_release(&ctx.bufs[i]);
  poot_free(ctx.bufs);
  poot_free(bind.used);
  return s;
}
