/* Common-subexpression elimination. Values are hash-consed per region on
 * the rewritten graph: a node whose key (region, op, mapped operands,
 * attributes, check; Const type and bytes; composite name, attributes,
 * operands and body) equals an earlier node's is replaced by that node's
 * results. Every op is a pure function of its operands in the oracle (rng
 * included: it is counter-based), so equal keys mean equal results; a
 * duplicate check fails exactly when the earlier, identical one already
 * failed. */
#include <string.h>

#include "passes_impl.h"

typedef struct cse_ctx {
  poot_map seen; /* key -> dst node id */
  poot_strbuf key;
  uint32_t *scratch; /* per src value, for body keys */
} cse_ctx;

static void put_u32(poot_strbuf *sb, uint32_t v) {
  poot_strbuf_append(sb, (const char *)&v, 4);
}

/* Builds the key of `node` (a Const leaf, core op or composite) in ctx->key.
 * Returns false for nodes that are never merged. */
static bool make_key(pass_rb *rb, cse_ctx *ctx, const poot_node *node, const poot_value *ops) {
  poot_strbuf *sb = &ctx->key;
  poot_strbuf_clear(sb);
  put_u32(sb, rb->region);
  if (node->op == POOT_OP_LEAF) {
    if (node->storage != POOT_STORAGE_CONST) return false;
    const poot_tensor *t = node->constant;
    put_u32(sb, 0xC0C0C0C0u);
    put_u32(sb, (uint32_t)t->type.dtype);
    put_u32(sb, t->type.shape.rank);
    poot_strbuf_append(sb, (const char *)t->type.shape.dims, sizeof(int64_t) * t->type.shape.rank);
    if (t->size) poot_strbuf_append(sb, t->data, t->size);
    return true;
  }
  put_u32(sb, node->num_operands);
  for (uint32_t i = 0; i < node->num_operands; i++) put_u32(sb, ops[i]);
  if (node->op == POOT_OP_COMPOSITE) {
    put_u32(sb, 0xC0DEC0DEu);
    poot__pass_cattrs_key(node, sb);
    put_u32(sb, node->num_results);
    poot__pass_region_key(rb->src, node->body, ctx->scratch, sb);
  } else {
    poot__pass_attrs_key(node, sb);
  }
  return true;
}

static poot_status cse_hook(pass_rb *rb, const poot_node *node, const poot_value *ops,
                            poot_value *out_results, bool *out_done) {
  cse_ctx *ctx = rb->user;
  *out_done = false;
  if (!make_key(rb, ctx, node, ops)) return NULL;
  POOT_TRY(poot_strbuf_status(&ctx->key));
  uint64_t id = 0;
  if (!poot_map_get(&ctx->seen, ctx->key.data, ctx->key.len, &id)) return NULL;
  const poot_node *prev = poot_graph_node(rb->dst, (uint32_t)id);
  if (!prev || prev->num_results != node->num_results)
    return poot_status_make(POOT_INTERNAL, "cse: key collision on %%%u", node->results[0]);
  for (uint32_t i = 0; i < node->num_results; i++) out_results[i] = prev->results[i];
  rb->changes++;
  *out_done = true;
  return NULL;
}

static poot_status cse_post(pass_rb *rb, const poot_node *node, const poot_value *ops,
                            const poot_value *results) {
  cse_ctx *ctx = rb->user;
  if (!make_key(rb, ctx, node, ops)) return NULL;
  POOT_TRY(poot_strbuf_status(&ctx->key));
  const poot_node *n = poot__pass_def(rb->dst, results[0]);
  if (!n) return poot_status_make(POOT_INTERNAL, "cse: new value has no node");
  return poot_map_put(&ctx->seen, ctx->key.data, ctx->key.len, n->id);
}

poot_status poot_pass_cse(const poot_graph *graph, const poot_pass_options *options,
                          poot_graph **out_graph, uint32_t *out_changes) {
  if (out_graph) *out_graph = NULL;
  if (out_changes) *out_changes = 0;
  if (!graph || !out_graph)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_pass_cse: NULL argument");
  poot_pass_options defaults;
  poot_pass_options_init(&defaults);
  cse_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  poot_map_init(&ctx.seen);
  poot_strbuf_init(&ctx.key);
  const uint32_t nv = poot_graph_value_count(graph);
  ctx.scratch = poot_calloc(nv ? nv : 1, sizeof(uint32_t));
  poot_status st = NULL;
  if (!ctx.scratch) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "poot_pass_cse: out of memory");
  } else {
    pass_rb rb;
    memset(&rb, 0, sizeof rb);
    rb.src = graph;
    rb.opt = options ? options : &defaults;
    rb.hook = cse_hook;
    rb.post = cse_post;
    rb.user = &ctx;
    st = poot__pass_rebuild(&rb, out_graph);
    if (!st && out_changes) *out_changes = rb.changes;
  }
  poot_free(ctx.scratch);
  poot_strbuf_deinit(&ctx.key);
  poot_map_deinit(&ctx.seen);
  return st;
}
