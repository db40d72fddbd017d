/* verify.c — the graph verifier: structure, acyclicity, leaves, op rules,
 * composites and results. */
#include <string.h>

#include "graph_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
#define OOM() poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory")

bool poot__valid_composite_name(const char *name) {
  if (!name || !*name) return false;
  for (const char *p = name; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  }
  return true;
}

bool poot__valid_attr_key(const char *key) {
  if (!key || !*key) return false;
  if (!((key[0] >= 'a' && key[0] <= 'z') || key[0] == '_')) return false;
  for (const char *p = key; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

static unsigned node_label(const poot_node *n) {
  return n->num_results ? (unsigned)n->results[0] : 0u;
}

static bool same_str(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

/* Whether two leaves of the root bind the same thing. */
static bool leaf_collides(const poot_node *a, const poot_node *b) {
  if (a->storage != b->storage) return false;
  switch (a->storage) {
  case POOT_STORAGE_WEIGHT:
    /* The key binds the weight and the name stands for it in the text form:
     * each is one weight's. */
    return a->weight.key == b->weight.key || same_str(a->weight.name, b->weight.name);
  case POOT_STORAGE_STATE:
    return same_str(a->name, b->name);
  case POOT_STORAGE_SLOT:
    if (a->slot_kind != b->slot_kind) return false;
    return a->slot_kind != POOT_SLOT_NAMED || same_str(a->name, b->name);
  case POOT_STORAGE_PARAM:
    return a->param_index == b->param_index || same_str(a->name, b->name);
  default:
    return false;
  }
}

poot_status poot__check_leaf(const poot_graph *g, const poot_node *n, const poot_type *type) {
  const char *what = poot_storage_name(n->storage);
  POOT_TRY(poot__check_type(type, what));
  uint32_t region = n->id == UINT32_MAX ? g->current : n->region;
  if (n->num_operands != 0 || n->num_results != 1)
    return BAD("%s leaf: arity: a leaf has no operands and one result", what);
  switch (n->storage) {
  case POOT_STORAGE_CONST: {
    const poot_tensor *c = n->constant;
    if (!c) return BAD("const leaf: no data");
    if (!poot_type_equal(&c->type, type)) return BAD("const leaf: type mismatch with its data");
    size_t bytes = 0;
    POOT_TRY(poot_type_byte_size(type->dtype, &type->shape, &bytes));
    if (c->size != bytes || (bytes && !c->data))
      return BAD("const leaf: %zu bytes of data for a type of %zu bytes", c->size, bytes);
    return NULL;
  }
  case POOT_STORAGE_WEIGHT:
    if (!n->weight.name || !*n->weight.name)
      return BAD("weight leaf: a weight needs a display name");
    break;
  case POOT_STORAGE_STATE:
    if (!n->name || !*n->name) return BAD("state leaf: needs a name");
    if (poot_dtype_is_packed(type->dtype) && type->dtype != POOT_DTYPE_Q8_0)
      return BAD("state leaf: a packed state must be q8_0 (a K/V cache), not %s",
                 poot_dtype_name(type->dtype));
    break;
  case POOT_STORAGE_SLOT:
    if (n->slot_kind == POOT_SLOT_NAMED) {
      if (!n->name || !*n->name) return BAD("slot leaf: a named slot needs a name");
      if (poot_dtype_is_packed(type->dtype)) return BAD("slot leaf: a slot cannot be packed");
    } else if (n->slot_kind > POOT_SLOT_NONE && n->slot_kind < POOT_SLOT_NAMED) {
      if (n->name) return BAD("slot leaf: a %s slot takes no name", poot_slot_kind_name(n->slot_kind));
      if (!poot_dtype_is_int(type->dtype))
        return BAD("slot leaf: a %s slot needs an integer dtype, got %s",
                   poot_slot_kind_name(n->slot_kind), poot_dtype_name(type->dtype));
    } else {
      return BAD("slot leaf: bad slot kind %d", (int)n->slot_kind);
    }
    break;
  case POOT_STORAGE_PARAM:
    if (region == 0 && (!n->name || !*n->name)) return BAD("param leaf: a root param needs a name");
    break;
  default:
    return BAD("leaf: bad storage class %d", (int)n->storage);
  }
  if (n->storage != POOT_STORAGE_PARAM && n->storage != POOT_STORAGE_CONST && region != 0)
    return BAD("%s leaf: only allowed in the root region", what);
  /* Uniqueness among the leaves of the region. */
  const poot_region *r = &poot__reg(g, region)->pub;
  for (uint32_t i = 0; i < r->num_nodes; i++) {
    const poot_node *o = poot__node(g, r->nodes[i]);
    if (o->id >= n->id || o->op != POOT_OP_LEAF) continue; /* report the later one */
    if (leaf_collides(o, n)) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      poot_graph_leaf_name(g, o, &sb);
      poot_status st = BAD("%s leaf: duplicate %s \"%s\" (already %%%u)", what, what,
                           sb.failed ? "?" : sb.data, node_label(o));
      poot_strbuf_deinit(&sb);
      return st;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ verify */

static poot_status node_error(poot_status st, const poot_node *n) {
  if (!st) return NULL;
  return poot_status_annotate(st, "node %%%u (%s)", node_label(n), poot_op_name(n->op));
}

/* Orders the region's nodes topologically (stable: the existing order when
 * it already is one), rejecting dangling operands, operands from other
 * regions and cycles. */
static poot_status order_region(poot_graph *g, poot__region *r, uint8_t *mark, uint32_t *stack,
                                uint32_t *pos) {
  poot_vec order;
  poot_vec_init(&order, sizeof(uint32_t));
  poot_status st = poot_vec_reserve(&order, r->nodes.len);
  if (st) return st;
  uint32_t rid = r->pub.id;
  /* Check operands first. */
  for (size_t i = 0; i < r->nodes.len && !st; i++) {
    const poot_node *n = poot__node(g, POOT_VEC_AT(&r->nodes, uint32_t, i));
    if (n->region != rid) {
      st = node_error(BAD("structure: listed in region %u but belongs to region %u", rid,
                          n->region), n);
      break;
    }
    for (uint32_t k = 0; k < n->num_operands; k++) {
      poot_value v = n->operands[k];
      if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE) {
        st = node_error(BAD("dangling value: operand %u (%%%u) is never defined", k, (unsigned)v), n);
        break;
      }
      const poot_node *d = poot__node(g, poot__val(g, v)->node);
      if (d->region != rid) {
        st = node_error(BAD("region isolation: operand %u (%%%u) is defined outside this "
                            "node's region",
                            k, (unsigned)v),
                        n);
        break;
      }
    }
  }
  /* Iterative DFS; post-order is a topological order. */
  for (size_t i = 0; i < r->nodes.len && !st; i++) {
    uint32_t root = POOT_VEC_AT(&r->nodes, uint32_t, i);
    if (mark[root] == 2) continue;
    size_t sp = 0;
    stack[sp] = root;
    pos[root] = 0;
    mark[root] = 1;
    sp++;
    while (sp && !st) {
      uint32_t id = stack[sp - 1];
      const poot_node *n = poot__node(g, id);
      if (pos[id] < n->num_operands) {
        uint32_t dep = poot__val(g, n->operands[pos[id]++])->node;
        if (mark[dep] == 1) {
          st = node_error(BAD("cycle: the node depends on itself through %%%u",
                              node_label(poot__node(g, dep))),
                          n);
        } else if (mark[dep] == 0) {
          mark[dep] = 1;
          pos[dep] = 0;
          stack[sp++] = dep;
        }
      } else {
        mark[id] = 2;
        sp--;
        st = poot_vec_push(&order, &id);
      }
    }
  }
  if (!st) {
    if (order.len) memcpy(r->nodes.data, order.data, order.len * sizeof(uint32_t));
    r->pub.nodes = r->nodes.data;
    r->pub.num_nodes = (uint32_t)r->nodes.len;
  }
  poot_vec_deinit(&order);
  return st;
}

static poot_status verify_node(poot_graph *g, const poot_node *n) {
  if (n->num_results == 0) return node_error(BAD("arity: a node needs at least one result"), n);
  for (uint32_t i = 0; i < n->num_results; i++) {
    poot_value v = n->results[i];
    if (v >= g->values.len || poot__val(g, v)->node != n->id || poot__val(g, v)->index != i)
      return node_error(BAD("structure: result %u is not bound to this node", i), n);
  }
  const poot_type *rt = &poot__val(g, n->results[0])->type;
  if (n->op == POOT_OP_LEAF) return node_error(poot__check_leaf(g, n, rt), n);
  if (n->storage != POOT_STORAGE_TEMP)
    return node_error(BAD("storage: an op result must be temp"), n);
  const poot_type *types[64];
  if (n->num_operands > 64) return node_error(BAD("arity: too many operands (%u)", n->num_operands), n);
  for (uint32_t i = 0; i < n->num_operands; i++) types[i] = &poot__val(g, n->operands[i])->type;
  if (n->op == POOT_OP_COMPOSITE) {
    if (!poot__valid_composite_name(n->name))
      return node_error(BAD("bad attribute: composite name is not [a-z0-9_.]+"), n);
    const poot_region *b = n->body;
    if (!b || b->id >= g->regions.len || &poot__reg(g, b->id)->pub != b || b->parent_node != n->id)
      return node_error(BAD("structure: composite has no body of its own"), n);
    if (b->num_params != n->num_operands)
      return node_error(BAD("arity: body has %u params for %u operands", b->num_params,
                            n->num_operands),
                        n);
    for (uint32_t i = 0; i < b->num_params; i++) {
      if (b->params[i] == POOT_VALUE_NONE || b->params[i] >= g->values.len)
        return node_error(BAD("structure: body param %u is missing", i), n);
      if (!poot_type_equal(&poot__val(g, b->params[i])->type, types[i]))
        return node_error(BAD("type mismatch: body param %u does not have operand %u's type", i, i), n);
    }
    if (b->num_results != n->num_results)
      return node_error(BAD("arity: body returns %u values for %u results", b->num_results,
                            n->num_results),
                        n);
    for (uint32_t i = 0; i < b->num_results; i++) {
      poot_value v = b->results[i];
      if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE)
        return node_error(BAD("dangling value: body result %u (%%%u) is never defined", i, (unsigned)v), n);
      if (poot__node(g, poot__val(g, v)->node)->region != b->id)
        return node_error(BAD("region isolation: body result %u is not a body value", i), n);
      if (!poot_type_equal(&poot__val(g, v)->type, &poot__val(g, n->results[i])->type))
        return node_error(BAD("type mismatch: body result %u does not have result %u's type", i, i), n);
    }
    for (uint32_t i = 0; i < n->num_cattrs; i++) {
      if (!poot__valid_attr_key(n->cattrs[i].key))
        return node_error(BAD("bad attribute: composite attribute key"), n);
      for (uint32_t j = 0; j < i; j++)
        if (strcmp(n->cattrs[j].key, n->cattrs[i].key) == 0)
          return node_error(BAD("bad attribute: '%s' given twice", n->cattrs[i].key), n);
    }
    return NULL;
  }
  poot_type out[2];
  uint32_t nres = 0;
  POOT_TRY(node_error(poot__op_infer(n->op, n->num_operands, types, &n->attrs, n->trap, out, &nres), n));
  if (nres != n->num_results)
    return node_error(BAD("arity: the op has %u results, the node declares %u", nres,
                          n->num_results),
                      n);
  for (uint32_t i = 0; i < nres; i++) {
    const poot_type *d = &poot__val(g, n->results[i])->type;
    if (!poot_type_equal(d, &out[i])) {
      poot_strbuf a, b;
      poot_strbuf_init(&a);
      poot_strbuf_init(&b);
      poot_type_format(&a, d);
      poot_type_format(&b, &out[i]);
      poot_status st = node_error(BAD("type mismatch: result %u is declared %s but the shape rule "
                                      "gives %s",
                                      i, a.failed ? "?" : a.data, b.failed ? "?" : b.data),
                                  n);
      poot_strbuf_deinit(&a);
      poot_strbuf_deinit(&b);
      return st;
    }
  }
  return NULL;
}

static poot_status verify_results(poot_graph *g) {
  if (g->output != POOT_VALUE_NONE) {
    poot_value v = g->output;
    if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE)
      return BAD("results: output %%%u is never defined (dangling value)", (unsigned)v);
    if (poot__node(g, poot__val(g, v)->node)->region != 0)
      return BAD("results: output %%%u is inside a composite body", (unsigned)v);
  }
  for (size_t i = 0; i < g->states.len; i++) {
    const poot__state_rec *r = &POOT_VEC_AT(&g->states, poot__state_rec, i);
    const poot_node *s = poot__node(g, poot__val(g, r->state)->node);
    if (s->op != POOT_OP_LEAF || s->storage != POOT_STORAGE_STATE)
      return BAD("results: update target %%%u is not a State", (unsigned)r->state);
    for (size_t j = 0; j < i; j++)
      if (POOT_VEC_AT(&g->states, poot__state_rec, j).state == r->state)
        return BAD("results: state %%%u is listed twice", (unsigned)r->state);
    if (r->update == POOT_VALUE_NONE) continue;
    if (r->update >= g->values.len || poot__val(g, r->update)->node == POOT__NO_NODE)
      return BAD("results: update of state \"%s\" is %%%u, never defined (dangling value)",
                 s->name, (unsigned)r->update);
    if (poot__node(g, poot__val(g, r->update)->node)->region != 0)
      return BAD("results: update of state \"%s\" is inside a composite body", s->name);
    if (!poot_type_equal(&poot__val(g, r->update)->type, &poot__val(g, r->state)->type))
      return BAD("results: type mismatch: update %%%u of state \"%s\" does not have the state's "
                 "type",
                 (unsigned)r->update, s->name);
  }
  for (size_t i = 0; i < g->env.len; i++) {
    const poot__env_rec *e = &POOT_VEC_AT(&g->env, poot__env_rec, i);
    if (e->value >= g->values.len || poot__val(g, e->value)->node == POOT__NO_NODE)
      return BAD("results: env \"%s\" is %%%u, never defined (dangling value)", e->name,
                 (unsigned)e->value);
    if (poot__node(g, poot__val(g, e->value)->node)->region != 0)
      return BAD("results: env \"%s\" is inside a composite body", e->name);
    for (size_t j = 0; j < i; j++)
      if (strcmp(POOT_VEC_AT(&g->env, poot__env_rec, j).name, e->name) == 0)
        return BAD("results: env name \"%s\" is used twice", e->name);
  }
  return NULL;
}

poot_status poot_graph_verify(poot_graph *g) {
  if (!g) return BAD("poot_graph_verify: NULL graph");
  if (g->open.len) return BAD("structure: a composite body is still open");
  size_t nn = g->nodes.len;
  uint8_t *mark = poot_calloc(nn ? nn : 1, 1);
  uint32_t *stack = poot_calloc(nn ? nn : 1, sizeof(uint32_t));
  uint32_t *pos = poot_calloc(nn ? nn : 1, sizeof(uint32_t));
  poot_status st = NULL;
  if (!mark || !stack || !pos) {
    st = OOM();
    goto done;
  }
  for (size_t r = 0; r < g->regions.len && !st; r++) {
    poot__region *reg = poot__reg(g, (uint32_t)r);
    if (r > 0) {
      uint32_t p = reg->pub.parent_node;
      if (p >= nn || poot__node(g, p)->op != POOT_OP_COMPOSITE || poot__node(g, p)->body != &reg->pub) {
        st = BAD("structure: region %zu belongs to no composite", r);
        break;
      }
    }
    st = order_region(g, reg, mark, stack, pos);
  }
  /* Every node must be listed in exactly one region. */
  if (!st) {
    size_t listed = 0;
    for (size_t r = 0; r < g->regions.len; r++) listed += poot__reg(g, (uint32_t)r)->nodes.len;
    if (listed != nn) st = BAD("structure: %zu nodes but %zu listed in regions", nn, listed);
  }
  for (size_t r = 0; r < g->regions.len && !st; r++) {
    const poot__region *reg = poot__reg(g, (uint32_t)r);
    for (size_t i = 0; i < reg->params.len && !st; i++)
      if (POOT_VEC_AT(&reg->params, poot_value, i) == POOT_VALUE_NONE)
        st = BAD("structure: region %zu lacks param %zu (params are numbered from 0)", r, i);
    for (size_t i = 0; i < reg->nodes.len && !st; i++)
      st = verify_node(g, poot__node(g, POOT_VEC_AT(&reg->nodes, uint32_t, i)));
  }
  if (!st) st = verify_results(g);
done:
  poot_free(mark);
  poot_free(stack);
  poot_free(pos);
  return st;
}
