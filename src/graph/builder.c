/* builder.c — graph creation, leaves, the generic node builder, composites'
 * begin/end, results and the read API. */
#include <string.h>

#include "graph_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
#define OOM() poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory")

/* ------------------------------------------------------------- lifecycle */

poot_status poot__graph_new_region(poot_graph *g, uint32_t parent_node, uint32_t *out_id) {
  *out_id = UINT32_MAX;
  poot__region *r = POOT_ARENA_NEW(&g->arena, poot__region);
  if (!r) return OOM();
  poot_vec_init(&r->nodes, sizeof(uint32_t));
  poot_vec_init(&r->params, sizeof(poot_value));
  r->pub.id = (uint32_t)g->regions.len;
  r->pub.parent_node = parent_node;
  poot_status st = poot_vec_push(&g->regions, &r);
  if (st) return st;
  *out_id = r->pub.id;
  return NULL;
}

static void region_free(poot__region *r) {
  poot_vec_deinit(&r->nodes);
  poot_vec_deinit(&r->params);
}

poot_status poot_graph_create(poot_graph **out_graph) {
  *out_graph = NULL;
  poot_graph *g = poot_calloc(1, sizeof *g);
  if (!g) return OOM();
  poot_arena_init(&g->arena, 0);
  poot_vec_init(&g->nodes, sizeof(poot_node *));
  poot_vec_init(&g->values, sizeof(poot__value));
  poot_vec_init(&g->regions, sizeof(poot__region *));
  poot_vec_init(&g->open, sizeof(poot__open));
  poot_vec_init(&g->states, sizeof(poot__state_rec));
  poot_vec_init(&g->env, sizeof(poot__env_rec));
  g->output = POOT_VALUE_NONE;
  uint32_t root = 0;
  poot_status st = poot__graph_new_region(g, POOT__NO_NODE, &root);
  if (st) {
    poot_graph_destroy(g);
    return st;
  }
  g->current = root;
  *out_graph = g;
  return NULL;
}

void poot_graph_destroy(poot_graph *g) {
  if (!g) return;
  for (size_t i = 0; i < g->regions.len; i++) region_free(poot__reg(g, (uint32_t)i));
  poot_vec_deinit(&g->nodes);
  poot_vec_deinit(&g->values);
  poot_vec_deinit(&g->regions);
  poot_vec_deinit(&g->open);
  poot_vec_deinit(&g->states);
  poot_vec_deinit(&g->env);
  poot_arena_deinit(&g->arena);
  poot_free(g);
}

poot_status poot__graph_new_value(poot_graph *g, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (g->values.len >= (size_t)UINT32_MAX - 1) return BAD("graph: too many values");
  poot__value v;
  memset(&v, 0, sizeof v);
  v.node = POOT__NO_NODE;
  POOT_TRY(poot_vec_push(&g->values, &v));
  *out = (poot_value)(g->values.len - 1);
  return NULL;
}

static void region_sync(poot__region *r) {
  r->pub.num_nodes = (uint32_t)r->nodes.len;
  r->pub.nodes = r->nodes.data;
  r->pub.num_params = (uint32_t)r->params.len;
  r->pub.params = r->params.data;
}

poot_status poot__graph_append(poot_graph *g, uint32_t region, const poot_node *tmpl,
                               const poot_type *types, poot_value *results,
                               poot_node **out_node) {
  if (out_node) *out_node = NULL;
  poot_node *n = POOT_ARENA_NEW(&g->arena, poot_node);
  if (!n) return OOM();
  *n = *tmpl;
  n->id = (uint32_t)g->nodes.len;
  n->region = region;
  poot_value *ops = NULL, *res = NULL;
  if (tmpl->num_operands) {
    ops = POOT_ARENA_NEW_ARRAY(&g->arena, poot_value, tmpl->num_operands);
    if (!ops) return OOM();
    memcpy(ops, tmpl->operands, tmpl->num_operands * sizeof *ops);
  }
  res = POOT_ARENA_NEW_ARRAY(&g->arena, poot_value, tmpl->num_results ? tmpl->num_results : 1);
  if (!res) return OOM();
  n->operands = ops;
  n->results = res;
  /* Reserve everything first so that a failure leaves the graph unchanged. */
  poot__region *r = poot__reg(g, region);
  uint32_t fresh = 0;
  for (uint32_t i = 0; i < tmpl->num_results; i++) fresh += results[i] == POOT_VALUE_NONE;
  POOT_TRY(poot_vec_reserve(&g->values, g->values.len + fresh));
  POOT_TRY(poot_vec_reserve(&g->nodes, g->nodes.len + 1));
  POOT_TRY(poot_vec_reserve(&r->nodes, r->nodes.len + 1));
  if (tmpl->op == POOT_OP_LEAF && tmpl->storage == POOT_STORAGE_PARAM &&
      tmpl->param_index >= r->params.len)
    POOT_TRY(poot_vec_reserve(&r->params, (size_t)tmpl->param_index + 1));
  for (uint32_t i = 0; i < tmpl->num_results; i++) {
    if (results[i] == POOT_VALUE_NONE) POOT_TRY(poot__graph_new_value(g, &results[i]));
    res[i] = results[i];
    poot__value *v = poot__val(g, results[i]);
    v->type = types[i];
    v->node = n->id;
    v->index = i;
  }
  POOT_TRY(poot_vec_push(&g->nodes, &n));
  uint32_t id = n->id;
  POOT_TRY(poot_vec_push(&r->nodes, &id));
  if (tmpl->op == POOT_OP_LEAF && tmpl->storage == POOT_STORAGE_PARAM) {
    poot_value none = POOT_VALUE_NONE;
    while (r->params.len <= tmpl->param_index) POOT_TRY(poot_vec_push(&r->params, &none));
    POOT_VEC_AT(&r->params, poot_value, tmpl->param_index) = res[0];
  }
  region_sync(r);
  if (out_node) *out_node = n;
  return NULL;
}

poot_status poot__graph_note_state(poot_graph *g, poot_value state) {
  poot__state_rec rec = {state, POOT_VALUE_NONE};
  return poot_vec_push(&g->states, &rec);
}

/* ------------------------------------------------------------------ leaves */

static void leaf_template(poot_node *n, poot_storage storage) {
  memset(n, 0, sizeof *n);
  n->op = POOT_OP_LEAF;
  n->storage = storage;
  n->num_results = 1;
  n->id = UINT32_MAX; /* not in the graph yet */
}

static poot_status add_leaf(poot_graph *g, poot_node *tmpl, const poot_type *type,
                            poot_value *out) {
  POOT_TRY(poot__check_leaf(g, tmpl, type));
  poot_value v = POOT_VALUE_NONE;
  poot_node *node = NULL;
  POOT_TRY(poot__graph_append(g, g->current, tmpl, type, &v, &node));
  if (tmpl->storage == POOT_STORAGE_STATE) {
    poot_status st = poot__graph_note_state(g, v);
    if (st) return st; /* the leaf stays; the graph is destroyed by the caller */
  }
  *out = v;
  return NULL;
}

poot_status poot_graph_add_const(poot_graph *g, const poot_tensor *t, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!g || !t) return BAD("poot_graph_add_const: NULL argument");
  POOT_TRY(poot__check_type(&t->type, "poot_graph_add_const"));
  size_t bytes = 0;
  POOT_TRY(poot_type_byte_size(t->type.dtype, &t->type.shape, &bytes));
  if (bytes != t->size)
    return BAD("poot_graph_add_const: size %zu does not match %zu bytes of the type", t->size,
               bytes);
  if (bytes && !t->data) return BAD("poot_graph_add_const: NULL data");
  poot_tensor *c = POOT_ARENA_NEW(&g->arena, poot_tensor);
  if (!c) return OOM();
  c->type = t->type;
  c->size = bytes;
  if (bytes) {
    c->data = poot_arena_memdup(&g->arena, t->data, bytes, 16);
    if (!c->data) return OOM();
  }
  poot_node n;
  leaf_template(&n, POOT_STORAGE_CONST);
  n.constant = c;
  return add_leaf(g, &n, &t->type, out);
}

poot_status poot_graph_const_f32(poot_graph *g, poot_dtype dtype, double value, poot_value *out) {
  *out = POOT_VALUE_NONE;
  union {
    float f;
    uint16_t h;
    int64_t i;
    uint8_t b[8];
  } u;
  memset(&u, 0, sizeof u);
  poot_tensor t;
  memset(&t, 0, sizeof t);
  t.type.dtype = dtype;
  if (dtype == POOT_DTYPE_F32) {
    u.f = (float)value;
    t.size = 4;
  } else if (dtype == POOT_DTYPE_F16) {
    u.h = poot_f32_to_f16((float)value);
    t.size = 2;
  } else if (dtype == POOT_DTYPE_BF16) {
    u.h = poot_f32_to_bf16((float)value);
    t.size = 2;
  } else {
    return BAD("poot_graph_const_f32: dtype %s is not a float dtype", poot_dtype_name(dtype));
  }
  t.data = u.b;
  return poot_graph_add_const(g, &t, out);
}

poot_status poot_graph_const_int(poot_graph *g, poot_dtype dtype, int64_t value, poot_value *out) {
  *out = POOT_VALUE_NONE;
  const poot_dtype_info *info = poot_dtype_info_of(dtype);
  if (!info || !(info->is_int || dtype == POOT_DTYPE_BOOL))
    return BAD("poot_graph_const_int: dtype %s is not an integer dtype", poot_dtype_name(dtype));
  uint8_t b[8];
  uint64_t v = (uint64_t)value;
  if (dtype == POOT_DTYPE_BOOL) v = value != 0;
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i)); /* little-endian truncation */
  poot_tensor t;
  memset(&t, 0, sizeof t);
  t.type.dtype = dtype;
  t.size = info->elem_bytes;
  t.data = b;
  return poot_graph_add_const(g, &t, out);
}

static poot_status need_root(const poot_graph *g, const char *call) {
  if (g->current != 0) return BAD("%s: only allowed in the root region, not in a composite body", call);
  return NULL;
}

poot_status poot_graph_add_weight(poot_graph *g, const poot_weight_id *id, const poot_type *type,
                                  poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!g || !id || !type) return BAD("poot_graph_add_weight: NULL argument");
  POOT_TRY(need_root(g, "poot_graph_add_weight"));
  if (!id->name || !*id->name) return BAD("poot_graph_add_weight: a weight needs a display name");
  poot_node n;
  leaf_template(&n, POOT_STORAGE_WEIGHT);
  n.weight.key = id->key;
  n.weight.name = poot_arena_strdup(&g->arena, id->name);
  if (!n.weight.name) return OOM();
  return add_leaf(g, &n, type, out);
}

poot_status poot_graph_add_state(poot_graph *g, const char *name, const poot_type *type,
                                 poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!g || !name || !type) return BAD("poot_graph_add_state: NULL argument");
  POOT_TRY(need_root(g, "poot_graph_add_state"));
  poot_node n;
  leaf_template(&n, POOT_STORAGE_STATE);
  n.name = poot_arena_strdup(&g->arena, name);
  if (!n.name) return OOM();
  return add_leaf(g, &n, type, out);
}

poot_status poot_graph_add_slot(poot_graph *g, poot_slot_kind kind, const char *name,
                                const poot_type *type, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!g || !type) return BAD("poot_graph_add_slot: NULL argument");
  POOT_TRY(need_root(g, "poot_graph_add_slot"));
  poot_node n;
  leaf_template(&n, POOT_STORAGE_SLOT);
  n.slot_kind = kind;
  if (name) {
    n.name = poot_arena_strdup(&g->arena, name);
    if (!n.name) return OOM();
  }
  return add_leaf(g, &n, type, out);
}

poot_status poot_graph_add_param(poot_graph *g, const char *name, const poot_type *type,
                                 poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!g || !name || !type) return BAD("poot_graph_add_param: NULL argument");
  POOT_TRY(need_root(g, "poot_graph_add_param"));
  poot_node n;
  leaf_template(&n, POOT_STORAGE_PARAM);
  n.param_index = (uint32_t)poot__reg(g, 0)->params.len;
  n.name = poot_arena_strdup(&g->arena, name);
  if (!n.name) return OOM();
  return add_leaf(g, &n, type, out);
}

/* --------------------------------------------------------------- core ops */

static poot_status check_operand(const poot_graph *g, poot_value v, uint32_t i, poot_op op) {
  if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE)
    return BAD("%s: operand %u (%%%u) is not a value of this graph (dangling value)",
               poot_op_name(op), i, (unsigned)v);
  const poot_node *def = poot__node(g, poot__val(g, v)->node);
  if (def->region != g->current)
    return BAD("%s: operand %u (%%%u) is defined in region %u, not in the region being built "
               "(%u)",
               poot_op_name(op), i, (unsigned)v, def->region, g->current);
  return NULL;
}

poot_status poot_graph_add_node(poot_graph *g, poot_op op, uint32_t num_operands,
                                const poot_value *operands, const poot_attrs *attrs,
                                poot_trap trap, poot_value *out_results) {
  if (!g || !out_results || (num_operands && !operands))
    return BAD("poot_graph_add_node: NULL argument");
  out_results[0] = POOT_VALUE_NONE;
  if ((unsigned)op < POOT_OP_COUNT && op == POOT_OP_TOP_K) out_results[1] = POOT_VALUE_NONE;
  if ((unsigned)op >= POOT_OP_COUNT || op == POOT_OP_LEAF || op == POOT_OP_COMPOSITE)
    return BAD("poot_graph_add_node: op %d is not a core op", (int)op);
  if (num_operands > 64) return BAD("%s: too many operands (%u)", poot_op_name(op), num_operands);
  const poot_type *types[64];
  for (uint32_t i = 0; i < num_operands; i++) {
    POOT_TRY(check_operand(g, operands[i], i, op));
    types[i] = &poot__val(g, operands[i])->type;
  }
  poot_attrs zero;
  memset(&zero, 0, sizeof zero);
  poot_attrs canon;
  uint32_t rank = num_operands ? types[0]->shape.rank : 0;
  poot__attrs_canonical(op, rank, attrs ? attrs : &zero, &canon);
  poot_type out[2];
  uint32_t nres = 0;
  poot_status st = poot__op_infer(op, num_operands, types, &canon, trap, out, &nres);
  if (st)
    return poot_status_annotate(st, "node %%%u (%s)", (unsigned)g->values.len, poot_op_name(op));
  poot_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.storage = POOT_STORAGE_TEMP;
  n.num_operands = num_operands;
  n.operands = operands;
  n.num_results = nres;
  n.attrs = canon;
  n.trap = trap;
  poot_value res[2] = {POOT_VALUE_NONE, POOT_VALUE_NONE};
  POOT_TRY(poot__graph_append(g, g->current, &n, out, res, NULL));
  for (uint32_t i = 0; i < nres; i++) out_results[i] = res[i];
  return NULL;
}

static bool is_elementwise(poot_op op, uint32_t arity) {
  int32_t lo = 0, hi = 0;
  poot_op_arity(op, &lo, &hi);
  return op >= POOT_OP_ADD && op <= POOT_OP_GE && lo == (int32_t)arity && hi == (int32_t)arity;
}

poot_status poot_graph_unary(poot_graph *g, poot_op op, poot_value x, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!is_elementwise(op, 1))
    return BAD("poot_graph_unary: %s is not an elementwise unary op", poot_op_name(op));
  return poot_graph_add_node(g, op, 1, &x, NULL, POOT_TRAP_NONE, out);
}

poot_status poot_graph_binary(poot_graph *g, poot_op op, poot_value a, poot_value b,
                              poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!is_elementwise(op, 2))
    return BAD("poot_graph_binary: %s is not an elementwise binary op", poot_op_name(op));
  poot_value ops[2] = {a, b};
  return poot_graph_add_node(g, op, 2, ops, NULL, POOT_TRAP_NONE, out);
}

poot_status poot_graph_select(poot_graph *g, poot_value p, poot_value t, poot_value f,
                              poot_value *out) {
  poot_value ops[3] = {p, t, f};
  return poot_graph_add_node(g, POOT_OP_SELECT, 3, ops, NULL, POOT_TRAP_NONE, out);
}

static poot_status add1(poot_graph *g, poot_op op, poot_value x, const poot_attrs *a,
                        poot_value *out) {
  return poot_graph_add_node(g, op, 1, &x, a, POOT_TRAP_NONE, out);
}

poot_status poot_graph_convert(poot_graph *g, poot_value x, poot_dtype dtype, poot_value *out) {
  poot_attrs a = {.dtype = dtype};
  return add1(g, POOT_OP_CONVERT, x, &a, out);
}

poot_status poot_graph_bitcast(poot_graph *g, poot_value x, poot_dtype dtype, poot_value *out) {
  poot_attrs a = {.dtype = dtype};
  return add1(g, POOT_OP_BITCAST, x, &a, out);
}

poot_status poot_graph_iota(poot_graph *g, const poot_type *type, int64_t axis, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!type) return BAD("poot_graph_iota: NULL type");
  poot_attrs a = {.dtype = type->dtype, .shape = type->shape, .axis = axis};
  return poot_graph_add_node(g, POOT_OP_IOTA, 0, NULL, &a, POOT_TRAP_NONE, out);
}

static poot_status copy_dims(int64_t *dst, const int64_t *src, uint32_t n, uint32_t *out_n) {
  if (n > POOT_MAX_RANK) return BAD("too many dims (%u)", n);
  for (uint32_t i = 0; i < n; i++) dst[i] = src ? src[i] : 0;
  if (out_n) *out_n = n;
  return NULL;
}

static uint32_t rank_of(const poot_graph *g, poot_value v) {
  if (!g || v >= g->values.len) return 0;
  uint32_t r = poot__val(g, v)->type.shape.rank;
  return r > POOT_MAX_RANK ? POOT_MAX_RANK : r;
}

poot_status poot_graph_broadcast(poot_graph *g, poot_value x, const poot_shape *shape,
                                 const int64_t *in_dims, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!shape || (rank_of(g, x) && !in_dims)) return BAD("poot_graph_broadcast: NULL argument");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  a.shape = *shape;
  POOT_TRY(copy_dims(a.dims, in_dims, rank_of(g, x), &a.num_dims));
  return add1(g, POOT_OP_BROADCAST, x, &a, out);
}

poot_status poot_graph_reshape(poot_graph *g, poot_value x, const poot_shape *shape,
                               poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!shape) return BAD("poot_graph_reshape: NULL shape");
  poot_attrs a = {.shape = *shape};
  return add1(g, POOT_OP_RESHAPE, x, &a, out);
}

poot_status poot_graph_transpose(poot_graph *g, poot_value x, const int64_t *perm,
                                 poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (rank_of(g, x) && !perm) return BAD("poot_graph_transpose: NULL perm");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  POOT_TRY(copy_dims(a.dims, perm, rank_of(g, x), &a.num_dims));
  return add1(g, POOT_OP_TRANSPOSE, x, &a, out);
}

poot_status poot_graph_slice(poot_graph *g, poot_value x, const int64_t *start,
                             const int64_t *limit, const int64_t *stride, poot_value *out) {
  *out = POOT_VALUE_NONE;
  uint32_t r = rank_of(g, x);
  if (r && (!start || !limit)) return BAD("poot_graph_slice: NULL start or limit");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  for (uint32_t i = 0; i < r; i++) {
    a.start[i] = start[i];
    a.limit[i] = limit[i];
    a.stride[i] = stride ? stride[i] : 1;
  }
  return add1(g, POOT_OP_SLICE, x, &a, out);
}

poot_status poot_graph_dynamic_slice(poot_graph *g, poot_value x, const poot_value *starts,
                                     const int64_t *sizes, poot_trap trap, poot_value *out) {
  *out = POOT_VALUE_NONE;
  uint32_t r = rank_of(g, x);
  if (r && (!starts || !sizes)) return BAD("poot_graph_dynamic_slice: NULL starts or sizes");
  poot_value ops[1 + POOT_MAX_RANK];
  ops[0] = x;
  for (uint32_t i = 0; i < r; i++) ops[1 + i] = starts[i];
  poot_attrs a;
  memset(&a, 0, sizeof a);
  POOT_TRY(copy_dims(a.dims, sizes, r, &a.num_dims));
  return poot_graph_add_node(g, POOT_OP_DYNAMIC_SLICE, 1 + r, ops, &a, trap, out);
}

poot_status poot_graph_dynamic_update_slice(poot_graph *g, poot_value x, poot_value update,
                                            const poot_value *starts, poot_trap trap,
                                            poot_value *out) {
  *out = POOT_VALUE_NONE;
  uint32_t r = rank_of(g, x);
  if (r && !starts) return BAD("poot_graph_dynamic_update_slice: NULL starts");
  poot_value ops[2 + POOT_MAX_RANK];
  ops[0] = x;
  ops[1] = update;
  for (uint32_t i = 0; i < r; i++) ops[2 + i] = starts[i];
  return poot_graph_add_node(g, POOT_OP_DYNAMIC_UPDATE_SLICE, 2 + r, ops, NULL, trap, out);
}

poot_status poot_graph_concat(poot_graph *g, uint32_t count, const poot_value *xs, int64_t axis,
                              poot_value *out) {
  poot_attrs a = {.axis = axis};
  return poot_graph_add_node(g, POOT_OP_CONCAT, count, xs, &a, POOT_TRAP_NONE, out);
}

poot_status poot_graph_pad(poot_graph *g, poot_value x, poot_value pad_value, const int64_t *low,
                           const int64_t *high, const int64_t *interior, poot_value *out) {
  *out = POOT_VALUE_NONE;
  uint32_t r = rank_of(g, x);
  if (r && (!low || !high)) return BAD("poot_graph_pad: NULL low or high");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  for (uint32_t i = 0; i < r; i++) {
    a.low[i] = low[i];
    a.high[i] = high[i];
    a.interior[i] = interior ? interior[i] : 0;
  }
  poot_value ops[2] = {x, pad_value};
  return poot_graph_add_node(g, POOT_OP_PAD, 2, ops, &a, POOT_TRAP_NONE, out);
}

poot_status poot_graph_gather(poot_graph *g, poot_value table, poot_value indices, int64_t axis,
                              int64_t batch_dims, poot_trap trap, poot_value *out) {
  poot_attrs a = {.axis = axis, .batch_dims = batch_dims};
  poot_value ops[2] = {table, indices};
  return poot_graph_add_node(g, POOT_OP_GATHER, 2, ops, &a, trap, out);
}

poot_status poot_graph_scatter_update(poot_graph *g, poot_value target, poot_value indices,
                                      poot_value updates, int64_t axis, poot_trap trap,
                                      poot_value *out) {
  poot_attrs a = {.axis = axis};
  poot_value ops[3] = {target, indices, updates};
  return poot_graph_add_node(g, POOT_OP_SCATTER_UPDATE, 3, ops, &a, trap, out);
}

poot_status poot_graph_reduce(poot_graph *g, poot_value x, poot_reduce_kind kind,
                              uint32_t num_dims, const int64_t *dims, poot_dtype acc,
                              poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (num_dims && !dims) return BAD("poot_graph_reduce: NULL dims");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  a.reduce_kind = kind;
  a.dtype = acc;
  POOT_TRY(copy_dims(a.dims, dims, num_dims, &a.num_dims));
  return add1(g, POOT_OP_REDUCE, x, &a, out);
}

poot_status poot_graph_dot_general(poot_graph *g, poot_value lhs, poot_value rhs,
                                   const poot_dot_dims *dims, poot_dtype acc, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!dims) return BAD("poot_graph_dot_general: NULL dims");
  poot_attrs a;
  memset(&a, 0, sizeof a);
  a.dot = *dims;
  a.dtype = acc;
  poot_value ops[2] = {lhs, rhs};
  return poot_graph_add_node(g, POOT_OP_DOT_GENERAL, 2, ops, &a, POOT_TRAP_NONE, out);
}

poot_status poot_graph_dequantize(poot_graph *g, poot_value w, poot_dtype dtype, poot_value *out) {
  poot_attrs a = {.dtype = dtype};
  return add1(g, POOT_OP_DEQUANTIZE, w, &a, out);
}

poot_status poot_graph_quantize(poot_graph *g, poot_value x, poot_dtype dtype, poot_value *out) {
  poot_attrs a = {.dtype = dtype};
  return add1(g, POOT_OP_QUANTIZE, x, &a, out);
}

poot_status poot_graph_rng(poot_graph *g, poot_value key, poot_value counter,
                           const poot_type *type, poot_rng_dist dist, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!type) return BAD("poot_graph_rng: NULL type");
  poot_attrs a = {.dtype = type->dtype, .shape = type->shape, .rng_dist = dist};
  poot_value ops[2] = {key, counter};
  return poot_graph_add_node(g, POOT_OP_RNG, 2, ops, &a, POOT_TRAP_NONE, out);
}

poot_status poot_graph_top_k(poot_graph *g, poot_value x, int64_t k, poot_value *out_values,
                             poot_value *out_indices) {
  *out_values = POOT_VALUE_NONE;
  *out_indices = POOT_VALUE_NONE;
  poot_attrs a = {.k = k};
  poot_value res[2];
  POOT_TRY(poot_graph_add_node(g, POOT_OP_TOP_K, 1, &x, &a, POOT_TRAP_NONE, res));
  *out_values = res[0];
  *out_indices = res[1];
  return NULL;
}

poot_status poot_graph_cumsum(poot_graph *g, poot_value x, int64_t axis, poot_dtype acc,
                              poot_value *out) {
  poot_attrs a = {.axis = axis, .dtype = acc};
  return add1(g, POOT_OP_CUMSUM, x, &a, out);
}

/* -------------------------------------------------------------- composites */

static poot_status copy_cattrs(poot_graph *g, uint32_t n, const poot_composite_attr *in,
                               const poot_composite_attr **out) {
  *out = NULL;
  if (!n) return NULL;
  poot_composite_attr *c = POOT_ARENA_NEW_ARRAY(&g->arena, poot_composite_attr, n);
  if (!c) return OOM();
  for (uint32_t i = 0; i < n; i++) {
    if (!in[i].key || !poot__valid_attr_key(in[i].key))
      return BAD("composite attribute %u: bad key", i);
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(in[j].key, in[i].key) == 0)
        return BAD("composite attribute '%s' given twice", in[i].key);
    c[i] = in[i];
    c[i].key = poot_arena_strdup(&g->arena, in[i].key);
    if (!c[i].key) return OOM();
    switch (in[i].kind) {
    case POOT_CATTR_INT:
    case POOT_CATTR_FLOAT:
      c[i].s = NULL;
      c[i].ints = NULL;
      c[i].num_ints = 0;
      break;
    case POOT_CATTR_STRING:
      if (!in[i].s) return BAD("composite attribute '%s': NULL string", in[i].key);
      c[i].s = poot_arena_strdup(&g->arena, in[i].s);
      if (!c[i].s) return OOM();
      c[i].ints = NULL;
      c[i].num_ints = 0;
      break;
    case POOT_CATTR_INTS:
      if (in[i].num_ints && !in[i].ints)
        return BAD("composite attribute '%s': NULL ints", in[i].key);
      c[i].s = NULL;
      c[i].ints = in[i].num_ints ? poot_arena_memdup(&g->arena, in[i].ints,
                                                     in[i].num_ints * sizeof(int64_t), 8)
                                 : NULL;
      if (in[i].num_ints && !c[i].ints) return OOM();
      break;
    default:
      return BAD("composite attribute '%s': bad kind %d", in[i].key, (int)in[i].kind);
    }
    if (in[i].kind != POOT_CATTR_INT) c[i].i = 0;
    if (in[i].kind != POOT_CATTR_FLOAT) c[i].f = 0;
  }
  *out = c;
  return NULL;
}

poot_status poot_graph_composite_begin(poot_graph *g, const char *name, uint32_t num_attrs,
                                       const poot_composite_attr *attrs, uint32_t num_operands,
                                       const poot_value *operands, poot_value *out_params) {
  if (!g || !name || (num_attrs && !attrs) || (num_operands && (!operands || !out_params)))
    return BAD("poot_graph_composite_begin: NULL argument");
  for (uint32_t i = 0; i < num_operands; i++) out_params[i] = POOT_VALUE_NONE;
  if (!poot__valid_composite_name(name))
    return BAD("poot_graph_composite_begin: bad composite name '%s'", name);
  /* The text form reads at most this depth back. */
  if (g->open.len >= 32) return BAD("poot_graph_composite_begin: composites nest at most 32 deep");
  for (uint32_t i = 0; i < num_operands; i++) POOT_TRY(check_operand(g, operands[i], i, POOT_OP_COMPOSITE));
  poot__open o;
  memset(&o, 0, sizeof o);
  o.parent = g->current;
  o.node_mark = (uint32_t)g->nodes.len;
  o.value_mark = (uint32_t)g->values.len;
  o.region_mark = (uint32_t)g->regions.len;
  o.name = poot_arena_strdup(&g->arena, name);
  if (!o.name) return OOM();
  POOT_TRY(copy_cattrs(g, num_attrs, attrs, &o.attrs));
  o.num_attrs = num_attrs;
  o.num_operands = num_operands;
  if (num_operands) {
    o.operands = poot_arena_memdup(&g->arena, operands, num_operands * sizeof(poot_value), 4);
    if (!o.operands) return OOM();
  }
  POOT_TRY(poot_vec_reserve(&g->open, g->open.len + 1));
  poot_status st = poot__graph_new_region(g, POOT__NO_NODE, &o.region);
  if (st) return st;
  POOT_TRY(poot_vec_push(&g->open, &o));
  g->current = o.region;
  for (uint32_t i = 0; i < num_operands; i++) {
    poot_node n;
    leaf_template(&n, POOT_STORAGE_PARAM);
    n.param_index = i;
    poot_type t = poot__val(g, operands[i])->type;
    poot_value v = POOT_VALUE_NONE;
    st = poot__graph_append(g, o.region, &n, &t, &v, NULL);
    if (st) {
      poot_graph_composite_abort(g);
      return st;
    }
    out_params[i] = v;
  }
  return NULL;
}

void poot_graph_composite_abort(poot_graph *g) {
  if (!g || g->open.len == 0) return;
  poot__open o = POOT_VEC_AT(&g->open, poot__open, g->open.len - 1);
  g->open.len--;
  for (size_t i = o.region_mark; i < g->regions.len; i++) region_free(poot__reg(g, (uint32_t)i));
  g->regions.len = o.region_mark;
  g->nodes.len = o.node_mark;
  g->values.len = o.value_mark;
  g->current = o.parent;
}

poot_status poot_graph_composite_end(poot_graph *g, uint32_t num_results,
                                     const poot_value *results, poot_value *out_results) {
  if (!g || !num_results || !results || !out_results)
    return BAD("poot_graph_composite_end: NULL argument or no results");
  for (uint32_t i = 0; i < num_results; i++) out_results[i] = POOT_VALUE_NONE;
  if (g->open.len == 0) return BAD("poot_graph_composite_end: no composite is open");
  poot__open *o = &POOT_VEC_AT(&g->open, poot__open, g->open.len - 1);
  for (uint32_t i = 0; i < num_results; i++)
    POOT_TRY(check_operand(g, results[i], i, POOT_OP_COMPOSITE));
  poot__region *body = poot__reg(g, o->region);
  poot_value *res = poot_arena_memdup(&g->arena, results, num_results * sizeof(poot_value), 4);
  poot_type *types = POOT_ARENA_NEW_ARRAY(&g->arena, poot_type, num_results);
  if (!res || !types) return OOM();
  for (uint32_t i = 0; i < num_results; i++) types[i] = poot__val(g, results[i])->type;
  poot_node n;
  memset(&n, 0, sizeof n);
  n.op = POOT_OP_COMPOSITE;
  n.storage = POOT_STORAGE_TEMP;
  n.num_operands = o->num_operands;
  n.operands = o->operands;
  n.num_results = num_results;
  n.name = o->name;
  n.num_cattrs = o->num_attrs;
  n.cattrs = o->attrs;
  n.body = &body->pub;
  poot_node *node = NULL;
  POOT_TRY(poot__graph_append(g, o->parent, &n, types, out_results, &node));
  body->pub.results = res;
  body->pub.num_results = num_results;
  body->pub.parent_node = node->id;
  g->current = o->parent;
  g->open.len--;
  return NULL;
}

/* ---------------------------------------------------------------- results */

static poot_status check_root_value(const poot_graph *g, poot_value v, const char *call) {
  if (!g) return BAD("%s: NULL graph", call);
  if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE)
    return BAD("%s: %%%u is not a value of this graph", call, (unsigned)v);
  if (poot__node(g, poot__val(g, v)->node)->region != 0)
    return BAD("%s: %%%u is inside a composite body", call, (unsigned)v);
  return NULL;
}

poot_status poot_graph_set_output(poot_graph *g, poot_value v) {
  POOT_TRY(check_root_value(g, v, "poot_graph_set_output"));
  g->output = v;
  return NULL;
}

poot_status poot_graph_set_state_update(poot_graph *g, poot_value state, poot_value v) {
  POOT_TRY(check_root_value(g, state, "poot_graph_set_state_update"));
  POOT_TRY(check_root_value(g, v, "poot_graph_set_state_update"));
  for (size_t i = 0; i < g->states.len; i++) {
    poot__state_rec *r = &POOT_VEC_AT(&g->states, poot__state_rec, i);
    if (r->state != state) continue;
    if (!poot_type_equal(&poot__val(g, state)->type, &poot__val(g, v)->type))
      return BAD("poot_graph_set_state_update: state update type mismatch: %%%u does not have "
                 "the type of state %%%u",
                 (unsigned)v, (unsigned)state);
    r->update = v;
    return NULL;
  }
  return BAD("poot_graph_set_state_update: %%%u is not a State", (unsigned)state);
}

poot_status poot_graph_add_env(poot_graph *g, const char *name, poot_value v) {
  if (!name) return BAD("poot_graph_add_env: NULL name");
  POOT_TRY(check_root_value(g, v, "poot_graph_add_env"));
  for (size_t i = 0; i < g->env.len; i++)
    if (strcmp(POOT_VEC_AT(&g->env, poot__env_rec, i).name, name) == 0)
      return BAD("poot_graph_add_env: duplicate environment name \"%s\"", name);
  poot__env_rec r = {poot_arena_strdup(&g->arena, name), v};
  if (!r.name) return OOM();
  return poot_vec_push(&g->env, &r);
}

/* ----------------------------------------------------------------- reading */

uint32_t poot_graph_node_count(const poot_graph *g) { return (uint32_t)g->nodes.len; }
const poot_node *poot_graph_node(const poot_graph *g, uint32_t id) {
  return id < g->nodes.len ? poot__node(g, id) : NULL;
}
uint32_t poot_graph_region_count(const poot_graph *g) { return (uint32_t)g->regions.len; }
const poot_region *poot_graph_region(const poot_graph *g, uint32_t id) {
  return id < g->regions.len ? &poot__reg(g, id)->pub : NULL;
}
const poot_region *poot_graph_root(const poot_graph *g) { return &poot__reg(g, 0)->pub; }
uint32_t poot_graph_value_count(const poot_graph *g) { return (uint32_t)g->values.len; }
const poot_type *poot_graph_value_type(const poot_graph *g, poot_value v) {
  if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE) return NULL;
  return &poot__val(g, v)->type;
}
const poot_node *poot_graph_value_node(const poot_graph *g, poot_value v, uint32_t *out_index) {
  if (out_index) *out_index = 0;
  if (v >= g->values.len || poot__val(g, v)->node == POOT__NO_NODE) return NULL;
  if (out_index) *out_index = poot__val(g, v)->index;
  return poot__node(g, poot__val(g, v)->node);
}
poot_value poot_graph_output(const poot_graph *g) { return g->output; }
uint32_t poot_graph_state_count(const poot_graph *g) { return (uint32_t)g->states.len; }
void poot_graph_state_at(const poot_graph *g, uint32_t i, poot_value *out_state,
                         poot_value *out_new) {
  *out_state = POOT_VALUE_NONE;
  *out_new = POOT_VALUE_NONE;
  if (i >= g->states.len) return;
  const poot__state_rec *r = &POOT_VEC_AT(&g->states, poot__state_rec, i);
  *out_state = r->state;
  *out_new = r->update == POOT_VALUE_NONE ? r->state : r->update;
}
uint32_t poot_graph_env_count(const poot_graph *g) { return (uint32_t)g->env.len; }
void poot_graph_env_at(const poot_graph *g, uint32_t i, const char **out_name,
                       poot_value *out_value) {
  *out_name = NULL;
  *out_value = POOT_VALUE_NONE;
  if (i >= g->env.len) return;
  const poot__env_rec *r = &POOT_VEC_AT(&g->env, poot__env_rec, i);
  *out_name = r->name;
  *out_value = r->value;
}

void poot_graph_leaf_name(const poot_graph *g, const poot_node *n, poot_strbuf *sb) {
  (void)g;
  if (n->op != POOT_OP_LEAF) return;
  switch (n->storage) {
  case POOT_STORAGE_WEIGHT:
    poot_strbuf_puts(sb, n->weight.name ? n->weight.name : "");
    break;
  case POOT_STORAGE_SLOT:
    poot_strbuf_puts(sb, n->slot_kind == POOT_SLOT_NAMED ? (n->name ? n->name : "")
                                                         : poot_slot_kind_name(n->slot_kind));
    break;
  case POOT_STORAGE_STATE:
  case POOT_STORAGE_PARAM:
    poot_strbuf_puts(sb, n->name ? n->name : "");
    break;
  default:
    break;
  }
}
