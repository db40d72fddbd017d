/* The rebuild walker: every pass maps an input graph to a new one by walking
 * its regions in order and re-adding each node through the builder, with a
 * hook that may substitute values. Also the small helpers the passes share:
 * Const inspection, the "may be a signalling NaN" analysis and structural
 * keys. */
#include <string.h>

#include "passes_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
#define INTERNAL(...) poot_status_make(POOT_INTERNAL, __VA_ARGS__)
#define OOM() poot_status_make(POOT_OUT_OF_MEMORY, "passes: out of memory")

static poot_status walk_region(pass_rb *rb, const poot_region *region);

/* Buffers of a few values live on the stack; more go to the heap. */
typedef struct vbuf {
  poot_value small[16];
  poot_value *p;
} vbuf;

static poot_status vbuf_get(vbuf *b, uint32_t n) {
  b->p = b->small;
  if (n <= 16) return NULL;
  b->p = poot_malloc((size_t)n * sizeof(poot_value));
  return b->p ? NULL : OOM();
}

static void vbuf_free(vbuf *b) {
  if (b->p && b->p != b->small) poot_free(b->p);
  b->p = NULL;
}

/* A composite with its body walked by rb's hook (or copied when none). */
static poot_status emit_composite(pass_rb *rb, const poot_node *node, const poot_value *ops,
                                  poot_value *out_results) {
  vbuf params, res;
  poot_status st = vbuf_get(&params, node->num_operands);
  if (st) return st;
  st = vbuf_get(&res, node->num_results);
  if (st) {
    vbuf_free(&params);
    return st;
  }
  const poot_region *body = node->body;
  st = poot_graph_composite_begin(rb->dst, node->name, node->num_cattrs, node->cattrs,
                                  node->num_operands, ops, params.p);
  if (st) goto done;
  uint32_t saved = rb->region;
  rb->region = poot_graph_region_count(rb->dst) - 1; /* begin appended the body region */
  for (uint32_t i = 0; i < body->num_params && i < node->num_operands; i++)
    rb->map[body->params[i]] = params.p[i];
  st = walk_region(rb, body);
  if (!st) {
    for (uint32_t i = 0; i < body->num_results; i++) {
      res.p[i] = rb->map[body->results[i]];
      if (res.p[i] == POOT_VALUE_NONE) {
        st = INTERNAL("passes: body result %%%u of composite %%%u was dropped",
                      (unsigned)body->results[i], (unsigned)node->results[0]);
        break;
      }
    }
  }
  if (!st) st = poot_graph_composite_end(rb->dst, body->num_results, res.p, out_results);
  if (st) poot_graph_composite_abort(rb->dst);
  rb->region = saved;
done:
  vbuf_free(&params);
  vbuf_free(&res);
  return st;
}

static poot_status copy_leaf(pass_rb *rb, const poot_node *node) {
  const poot_type *type = poot_graph_value_type(rb->src, node->results[0]);
  poot_value *out = &rb->map[node->results[0]];
  switch (node->storage) {
    case POOT_STORAGE_STATE:
    case POOT_STORAGE_PARAM:
      return NULL; /* added up front (root) or by composite_begin (bodies) */
    case POOT_STORAGE_WEIGHT:
      return poot_graph_add_weight(rb->dst, &node->weight, type, out);
    case POOT_STORAGE_SLOT:
      return poot_graph_add_slot(rb->dst, node->slot_kind,
                                 node->slot_kind == POOT_SLOT_NAMED ? node->name : NULL, type, out);
    case POOT_STORAGE_CONST: {
      bool done = false;
      if (rb->hook) POOT_TRY(rb->hook(rb, node, NULL, out, &done));
      if (done) return NULL;
      POOT_TRY(poot_graph_add_const(rb->dst, node->constant, out));
      if (rb->post) POOT_TRY(rb->post(rb, node, NULL, out));
      return NULL;
    }
    default:
      return INTERNAL("passes: leaf %%%u has storage %d", node->results[0], node->storage);
  }
}

static poot_status process_node(pass_rb *rb, const poot_node *node) {
  if (node->op == POOT_OP_LEAF) return copy_leaf(rb, node);
  vbuf ops, res;
  poot_status st = vbuf_get(&ops, node->num_operands);
  if (st) return st;
  st = vbuf_get(&res, node->num_results);
  if (st) {
    vbuf_free(&ops);
    return st;
  }
  for (uint32_t i = 0; i < node->num_operands; i++) {
    ops.p[i] = rb->map[node->operands[i]];
    if (ops.p[i] == POOT_VALUE_NONE) {
      st = INTERNAL("passes: operand %u of %%%u (%s) was dropped", i, (unsigned)node->results[0],
                    poot_op_name(node->op));
      goto done;
    }
  }
  for (uint32_t i = 0; i < node->num_results; i++) res.p[i] = POOT_VALUE_NONE;
  bool handled = false;
  if (rb->hook) {
    st = rb->hook(rb, node, ops.p, res.p, &handled);
    if (st) goto done;
  }
  if (!handled) {
    if (node->op == POOT_OP_COMPOSITE)
      st = emit_composite(rb, node, ops.p, res.p);
    else
      st = poot_graph_add_node(rb->dst, node->op, node->num_operands, ops.p, &node->attrs,
                               node->trap, res.p);
    if (st) goto done;
    if (rb->post) {
      st = rb->post(rb, node, ops.p, res.p);
      if (st) goto done;
    }
  }
  for (uint32_t i = 0; i < node->num_results; i++) rb->map[node->results[i]] = res.p[i];
done:
  vbuf_free(&ops);
  vbuf_free(&res);
  return st;
}

static poot_status walk_region(pass_rb *rb, const poot_region *region) {
  for (uint32_t i = 0; i < region->num_nodes; i++) {
    const poot_node *node = poot_graph_node(rb->src, region->nodes[i]);
    if (!node) return INTERNAL("passes: region %u lists a bad node", region->id);
    if (rb->drop && rb->drop[node->id]) continue;
    POOT_TRY(process_node(rb, node));
  }
  return NULL;
}

static poot_status rebuild_root(pass_rb *rb) {
  const poot_graph *src = rb->src;
  poot_graph *dst = rb->dst;
  /* The interface first, in the input's order: States (eval reports their
   * new values in this order) and root Params (bound by index order). */
  const uint32_t ns = poot_graph_state_count(src);
  for (uint32_t i = 0; i < ns; i++) {
    poot_value sv = POOT_VALUE_NONE, nv = POOT_VALUE_NONE;
    poot_graph_state_at(src, i, &sv, &nv);
    const poot_node *n = poot__pass_def(src, sv);
    if (!n) return INTERNAL("passes: state %u has no leaf", i);
    POOT_TRY(poot_graph_add_state(dst, n->name, poot_graph_value_type(src, sv), &rb->map[sv]));
  }
  const poot_region *root = poot_graph_root(src);
  for (uint32_t i = 0; i < root->num_params; i++) {
    poot_value p = root->params[i];
    const poot_node *n = poot__pass_def(src, p);
    if (!n) return INTERNAL("passes: root param %u has no leaf", i);
    POOT_TRY(poot_graph_add_param(dst, n->name ? n->name : "", poot_graph_value_type(src, p),
                                  &rb->map[p]));
  }
  POOT_TRY(walk_region(rb, root));
  poot_value out = poot_graph_output(src);
  if (out != POOT_VALUE_NONE) POOT_TRY(poot_graph_set_output(dst, rb->map[out]));
  for (uint32_t i = 0; i < ns; i++) {
    poot_value sv = POOT_VALUE_NONE, nv = POOT_VALUE_NONE;
    poot_graph_state_at(src, i, &sv, &nv);
    if (nv != sv) POOT_TRY(poot_graph_set_state_update(dst, rb->map[sv], rb->map[nv]));
  }
  const uint32_t ne = poot_graph_env_count(src);
  for (uint32_t i = 0; i < ne; i++) {
    const char *name = NULL;
    poot_value v = POOT_VALUE_NONE;
    poot_graph_env_at(src, i, &name, &v);
    POOT_TRY(poot_graph_add_env(dst, name, rb->map[v]));
  }
  return NULL;
}

poot_status poot__pass_rebuild(pass_rb *rb, poot_graph **out_graph) {
  *out_graph = NULL;
  rb->dst = NULL;
  rb->region = 0;
  rb->changes = 0;
  const uint32_t nv = poot_graph_value_count(rb->src);
  rb->map = poot_malloc((size_t)(nv ? nv : 1) * sizeof(poot_value));
  if (!rb->map) return OOM();
  memset(rb->map, 0xff, (size_t)(nv ? nv : 1) * sizeof(poot_value)); /* POOT_VALUE_NONE */
  poot_status st = poot_graph_create(&rb->dst);
  if (!st) st = rebuild_root(rb);
  if (!st) {
    st = poot_graph_verify(rb->dst);
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) {
      poot_status wrapped =
          INTERNAL("passes: the rewritten graph does not verify: %s", poot_status_message(st));
      poot_status_free(st);
      st = wrapped;
    }
  }
  poot_free(rb->map);
  rb->map = NULL;
  if (st) {
    poot_graph_destroy(rb->dst);
    rb->dst = NULL;
    return st;
  }
  *out_graph = rb->dst;
  return NULL;
}

poot_status poot__pass_copy_node(poot_graph *to, const poot_graph *from, const poot_node *node,
                                 const poot_value *ops, poot_value *scratch,
                                 poot_value *out_results) {
  if (node->op != POOT_OP_COMPOSITE)
    return poot_graph_add_node(to, node->op, node->num_operands, ops, &node->attrs, node->trap,
                               out_results);
  pass_rb rb;
  memset(&rb, 0, sizeof rb);
  rb.src = from;
  rb.dst = to;
  rb.map = scratch;
  return emit_composite(&rb, node, ops, out_results);
}

/* ----------------------------------------------------------------- helpers */

const poot_node *poot__pass_def(const poot_graph *g, poot_value v) {
  return poot_graph_value_node(g, v, NULL);
}

bool poot__pass_is_const(const poot_graph *g, poot_value v) {
  const poot_node *n = poot__pass_def(g, v);
  return n && n->op == POOT_OP_LEAF && n->storage == POOT_STORAGE_CONST;
}

bool poot__pass_splat(const poot_graph *g, poot_value v, uint8_t out_elem[8]) {
  for (int depth = 0; depth < 16; depth++) {
    const poot_node *n = poot__pass_def(g, v);
    if (!n) return false;
    if (n->op == POOT_OP_BROADCAST) {
      v = n->operands[0];
      continue;
    }
    if (n->op != POOT_OP_LEAF || n->storage != POOT_STORAGE_CONST) return false;
    const poot_tensor *t = n->constant;
    const poot_dtype_info *info = poot_dtype_info_of(t->type.dtype);
    if (!info || info->is_packed || info->elem_bytes == 0 || info->elem_bytes > 8) return false;
    const size_t eb = info->elem_bytes;
    if (t->size < eb) return false;
    const uint8_t *d = t->data;
    for (size_t off = eb; off + eb <= t->size; off += eb)
      if (memcmp(d + off, d, eb) != 0) return false;
    memset(out_elem, 0, 8);
    memcpy(out_elem, d, eb);
    return true;
  }
  return false;
}

static bool elem_is_snan(const uint8_t *p, poot_dtype dt) {
  if (dt == POOT_DTYPE_F32) {
    uint32_t x;
    memcpy(&x, p, 4);
    return (x & 0x7f800000u) == 0x7f800000u && (x & 0x007fffffu) && !(x & 0x00400000u);
  }
  uint16_t h;
  memcpy(&h, p, 2);
  if (dt == POOT_DTYPE_F16) return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) && !(h & 0x0200u);
  return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) && !(h & 0x0040u); /* bf16 */
}

static bool const_has_snan(const poot_tensor *t) {
  const size_t eb = poot_dtype_info_of(t->type.dtype)->elem_bytes;
  for (size_t off = 0; off + eb <= t->size; off += eb)
    if (elem_is_snan((const uint8_t *)t->data + off, t->type.dtype)) return true;
  return false;
}

bool poot__pass_may_snan(const poot_graph *g, poot_value v, int depth) {
  const poot_type *ty = poot_graph_value_type(g, v);
  if (!ty || !poot_dtype_is_float(ty->dtype)) return false;
  const poot_node *n = poot__pass_def(g, v);
  if (!n || depth > 12) return true;
  const poot_value *o = n->operands;
#define MAY(i) poot__pass_may_snan(g, o[(i)], depth + 1)
  if (n->op == POOT_OP_LEAF) return n->storage != POOT_STORAGE_CONST || const_has_snan(n->constant);
  switch (n->op) {
    /* Ops that copy elements byte for byte. */
    case POOT_OP_SELECT:
      return MAY(1) || MAY(2);
    case POOT_OP_BROADCAST:
    case POOT_OP_RESHAPE:
    case POOT_OP_TRANSPOSE:
    case POOT_OP_SLICE:
    case POOT_OP_DYNAMIC_SLICE:
    case POOT_OP_GATHER:
    case POOT_OP_TOP_K:
      return MAY(0);
    case POOT_OP_DYNAMIC_UPDATE_SLICE:
    case POOT_OP_PAD:
      return MAY(0) || MAY(1);
    case POOT_OP_SCATTER_UPDATE:
      return MAY(0) || MAY(2);
    case POOT_OP_CONCAT:
      for (uint32_t i = 0; i < n->num_operands; i++)
        if (MAY(i)) return true;
      return false;
    case POOT_OP_BITCAST:
    case POOT_OP_COMPOSITE:
    case POOT_OP_DEQUANTIZE:
    case POOT_OP_QUANTIZE:
      return true;
    default:
      break;
  }
  /* Every other op computes in f32 and stores through the f16/bf16 rounding,
   * which quiets NaNs. */
  if (ty->dtype != POOT_DTYPE_F32) return false;
  switch (n->op) {
    /* Sign-bit operations, selections and rounding-to-integer keep a
     * signalling NaN (or may: floor/ceil/round are treated conservatively). */
    case POOT_OP_NEG:
    case POOT_OP_ABS:
    case POOT_OP_SIGN:
    case POOT_OP_FLOOR:
    case POOT_OP_CEIL:
    case POOT_OP_ROUND:
      return MAY(0);
    case POOT_OP_MAX:
    case POOT_OP_MIN:
      return MAY(0) || MAY(1);
    case POOT_OP_CONVERT:
      return MAY(0); /* widening f16/bf16 keeps the pattern */
    case POOT_OP_REDUCE:
      return n->attrs.reduce_kind != POOT_REDUCE_SUM && MAY(0);
    default:
      return false; /* IEEE arithmetic never returns a signalling NaN */
  }
#undef MAY
}

/* ------------------------------------------------------------------- keys */

static void put_u64(poot_strbuf *sb, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  poot_strbuf_append(sb, (const char *)b, 8);
}

static void put_i64s(poot_strbuf *sb, const int64_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) put_u64(sb, (uint64_t)v[i]);
}

static void put_str(poot_strbuf *sb, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u64(sb, s ? n : UINT64_MAX);
  if (n) poot_strbuf_append(sb, s, n);
}

void poot__pass_attrs_key(const poot_node *node, poot_strbuf *sb) {
  const poot_attrs *a = &node->attrs;
  put_u64(sb, (uint64_t)node->op);
  put_u64(sb, (uint64_t)node->trap);
  put_u64(sb, (uint64_t)a->dtype);
  put_u64(sb, a->shape.rank);
  put_i64s(sb, a->shape.dims, POOT_MAX_RANK);
  put_u64(sb, (uint64_t)a->axis);
  put_u64(sb, (uint64_t)a->batch_dims);
  put_u64(sb, (uint64_t)a->k);
  put_u64(sb, (uint64_t)a->reduce_kind);
  put_u64(sb, (uint64_t)a->rng_dist);
  put_u64(sb, a->num_dims);
  put_i64s(sb, a->dims, POOT_MAX_RANK);
  put_i64s(sb, a->start, POOT_MAX_RANK);
  put_i64s(sb, a->limit, POOT_MAX_RANK);
  put_i64s(sb, a->stride, POOT_MAX_RANK);
  put_i64s(sb, a->low, POOT_MAX_RANK);
  put_i64s(sb, a->high, POOT_MAX_RANK);
  put_i64s(sb, a->interior, POOT_MAX_RANK);
  put_u64(sb, a->dot.num_batch);
  put_i64s(sb, a->dot.lhs_batch, POOT_MAX_RANK);
  put_i64s(sb, a->dot.rhs_batch, POOT_MAX_RANK);
  put_u64(sb, a->dot.num_contract);
  put_i64s(sb, a->dot.lhs_contract, POOT_MAX_RANK);
  put_i64s(sb, a->dot.rhs_contract, POOT_MAX_RANK);
}

void poot__pass_cattrs_key(const poot_node *node, poot_strbuf *sb) {
  put_str(sb, node->name);
  put_u64(sb, node->num_cattrs);
  for (uint32_t i = 0; i < node->num_cattrs; i++) {
    const poot_composite_attr *c = &node->cattrs[i];
    put_str(sb, c->key);
    put_u64(sb, (uint64_t)c->kind);
    switch (c->kind) {
      case POOT_CATTR_INT:
        put_u64(sb, (uint64_t)c->i);
        break;
      case POOT_CATTR_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &c->f, 8);
        put_u64(sb, bits);
        break;
      }
      case POOT_CATTR_STRING:
        put_str(sb, c->s);
        break;
      case POOT_CATTR_INTS:
        put_u64(sb, c->num_ints);
        put_i64s(sb, c->ints, c->num_ints);
        break;
    }
  }
}

static void type_key(poot_strbuf *sb, const poot_type *t) {
  put_u64(sb, (uint64_t)t->dtype);
  put_u64(sb, t->shape.rank);
  put_i64s(sb, t->shape.dims, t->shape.rank);
}

void poot__pass_region_key(const poot_graph *g, const poot_region *region, uint32_t *scratch,
                           poot_strbuf *sb) {
  uint32_t next = 0;
  put_u64(sb, region->num_nodes);
  for (uint32_t i = 0; i < region->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, region->nodes[i]);
    put_u64(sb, (uint64_t)n->op);
    put_u64(sb, (uint64_t)n->storage);
    put_u64(sb, n->num_operands);
    for (uint32_t k = 0; k < n->num_operands; k++) put_u64(sb, scratch[n->operands[k]]);
    if (n->op == POOT_OP_LEAF) {
      type_key(sb, poot_graph_value_type(g, n->results[0]));
      if (n->storage == POOT_STORAGE_PARAM) {
        put_u64(sb, n->param_index);
      } else if (n->storage == POOT_STORAGE_CONST) {
        put_u64(sb, n->constant->size);
        poot_strbuf_append(sb, n->constant->data, n->constant->size);
      } else {
        put_u64(sb, n->id); /* interface leaves never occur in bodies; unique anyway */
      }
    } else if (n->op == POOT_OP_COMPOSITE) {
      poot__pass_cattrs_key(n, sb);
      put_u64(sb, n->num_results);
      poot__pass_region_key(g, n->body, scratch, sb);
    } else {
      poot__pass_attrs_key(n, sb);
    }
    for (uint32_t k = 0; k < n->num_results; k++) scratch[n->results[k]] = next++;
  }
  put_u64(sb, region->num_results);
  for (uint32_t i = 0; i < region->num_results; i++) put_u64(sb, scratch[region->results[i]]);
}
