/* planner.c — from a verified graph to a plan: flatten composites, decide
 * what is materialized, group ops into kernels (epilogue fusion of
 * elementwise chains into contractions), build one kernel per group,
 * deduplicate kernels by KIR hash, plan the temporaries' memory by liveness,
 * and weigh and stage the dispatches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_impl.h"

void poot_compile_options_init(poot_compile_options *o) {
  memset(o, 0, sizeof *o);
}

const char *poot_matmul_precision_name(poot_matmul_precision p) {
  return p == POOT_MATMUL_MEDIUM ? "medium" : (p == POOT_MATMUL_HIGH ? "high" : "?");
}

poot_status poot_matmul_precision_parse(const char *s, poot_matmul_precision *out) {
  if (s && strcmp(s, "high") == 0) {
    *out = POOT_MATMUL_HIGH;
    return NULL;
  }
  if (s && strcmp(s, "medium") == 0) {
    *out = POOT_MATMUL_MEDIUM;
    return NULL;
  }
  return poot_status_make(POOT_INVALID_ARGUMENT, "matmul precision '%s': expected high or medium",
                          s ? s : "");
}

static const struct {
  const char *name;
  uint32_t bit;
} g_forms[] = {{"big-tiles", POOT_FORM_GEMM_BIG_TILES},
               {"x-emitter", POOT_FORM_GEMM_X_EMITTER},
               {"gemv-one-row", POOT_FORM_GEMV_ONE_ROW},
               {"w-emitter", POOT_FORM_GEMM_W_EMITTER},
               {"static-shared", POOT_FORM_STATIC_SHARED}};

poot_status poot_compile_forms_parse(const char *list, uint32_t *out_forms) {
  *out_forms = 0;
  if (!list || !*list || strcmp(list, "none") == 0) return NULL;
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    uint32_t bit = 0;
    for (size_t i = 0; i < sizeof g_forms / sizeof *g_forms && !bit; i++)
      if (strlen(g_forms[i].name) == n && strncmp(p, g_forms[i].name, n) == 0) bit = g_forms[i].bit;
    if (!bit)
      return poot_status_make(
          POOT_INVALID_ARGUMENT,
          "compile form '%.*s': expected a comma-separated list of "
          "big-tiles, x-emitter, gemv-one-row, w-emitter, static-shared (or none)",
          (int)n, p);
    *out_forms |= bit;
    p += n;
    if (*p == ',') p++;
  }
  return NULL;
}

const char *poot_compile_forms_name(uint32_t forms, char *buf, size_t size) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < sizeof g_forms / sizeof *g_forms; i++)
    if ((forms & g_forms[i].bit) && at < size)
      at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "", g_forms[i].name);
  if (!at && size) snprintf(buf, size, "none");
  return buf;
}

void poot_compile_options_set_forms(poot_compile_options *o, uint32_t forms) {
  o->gemm_big_tiles = forms & POOT_FORM_GEMM_BIG_TILES;
  o->gemm_x_emitter = forms & POOT_FORM_GEMM_X_EMITTER;
  o->gemv_one_row = forms & POOT_FORM_GEMV_ONE_ROW;
  o->gemm_w_emitter = forms & POOT_FORM_GEMM_W_EMITTER;
  o->shared_memory_static = forms & POOT_FORM_STATIC_SHARED;
}

const char *poot_plan_buffer_class_name(poot_plan_buffer_class c) {
  static const char *const names[] = {"temp",  "slot",  "weight", "state",
                                      "const", "input", "output"};
  return (unsigned)c < POOT_PLAN_BUFFER_CLASS_COUNT ? names[c] : "?";
}

static bool is_root_op(poot_op op) {
  return op == POOT_OP_COMPOSITE || op == POOT_OP_REDUCE || op == POOT_OP_DOT_GENERAL ||
         op == POOT_OP_TOP_K || op == POOT_OP_CUMSUM || op == POOT_OP_SCATTER_UPDATE;
}
static bool is_elementwise(poot_op op) {
  return (op >= POOT_OP_ADD && op <= POOT_OP_GE) || op == POOT_OP_SELECT || op == POOT_OP_CONVERT;
}
static bool is_expensive(poot_op op) {
  switch (op) {
    case POOT_OP_EXP:
    case POOT_OP_EXP2:
    case POOT_OP_LOG:
    case POOT_OP_LOG2:
    case POOT_OP_SIN:
    case POOT_OP_COS:
    case POOT_OP_TANH:
    case POOT_OP_ERF:
    case POOT_OP_POW:
    case POOT_OP_SIGMOID:
    case POOT_OP_RNG:
      return true;
    default:
      return false;
  }
}

static poot_value find(pc_planner *pl, poot_value v) {
  while (pl->alias[v] != v) v = pl->alias[v];
  return v;
}

bool poot__cc_lowered_composite(const pc_planner *pl, const poot_node *n) {
  if (n->op != POOT_OP_COMPOSITE || !n->name || strcmp(n->name, "poot.attention") != 0)
    return false;
  if (pl->opt->no_attention_template || n->num_operands != 4 || n->num_results != 1) return false;
  /* The template computes plain scaled attention; a variant with more
   * attributes (Gemma 2's "softcap") goes through its decomposition. */
  for (uint32_t i = 0; i < n->num_cattrs; i++)
    if (strcmp(n->cattrs[i].key, "scale") != 0) return false;
  const poot_type *q = poot_graph_value_type(pl->g, n->operands[0]);
  const poot_type *k = poot_graph_value_type(pl->g, n->operands[1]);
  const poot_type *v = poot_graph_value_type(pl->g, n->operands[2]);
  const poot_type *m = poot_graph_value_type(pl->g, n->operands[3]);
  const poot_type *o = poot_graph_value_type(pl->g, n->results[0]);
  /* f32 queries over f32, f16 or q8_0 keys and values (an f16 or q8_0 KV
   * cache: the template converts or decodes as it loads). */
  bool kv_ok = k->dtype == v->dtype && (k->dtype == POOT_DTYPE_F32 || k->dtype == POOT_DTYPE_F16 ||
                                        k->dtype == POOT_DTYPE_Q8_0);
  if (q->dtype != POOT_DTYPE_F32 || !kv_ok || o->dtype != POOT_DTYPE_F32 ||
      m->dtype != POOT_DTYPE_BOOL)
    return false;
  if (q->shape.rank != 3 || k->shape.rank != 3 || v->shape.rank != 3 || m->shape.rank != 2)
    return false;
  if (q->shape.dims[2] > 256 || q->shape.dims[2] < 1 || k->shape.dims[1] < 1 ||
      q->shape.dims[1] % k->shape.dims[1] != 0 || k->shape.dims[0] < 1)
    return false;
  return true;
}

static poot_status walk_region(pc_planner *pl, const poot_region *r) {
  for (uint32_t i = 0; i < r->num_nodes; i++) {
    const poot_node *n = poot_graph_node(pl->g, r->nodes[i]);
    if (poot__cc_lowered_composite(pl, n)) {
      POOT_TRY(poot_vec_push(&pl->order, &n));
    } else if (n->op == POOT_OP_COMPOSITE) {
      POOT_TRY(walk_region(pl, n->body));
    } else if (n->op != POOT_OP_LEAF) {
      POOT_TRY(poot_vec_push(&pl->order, &n));
    }
  }
  return NULL;
}

static poot_status add_buffer(pc_planner *pl, poot_plan_buffer_class cls, const char *name,
                              const poot_type *type, uint64_t size, const void *data,
                              uint32_t *out) {
  poot_plan_buffer b;
  memset(&b, 0, sizeof b);
  b.cls = cls;
  b.name = poot_arena_strdup(&pl->arena, name);
  if (type) b.type = *type;
  b.size = (size + 3) & ~(uint64_t)3;
  if (b.size == 0) b.size = 4;
  b.align = 256;
  if (data) {
    void *p = poot_arena_alloc(&pl->arena, b.size, 16);
    if (!p) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
    memset(p, 0, b.size);
    memcpy(p, data, size);
    b.data = p;
  }
  if (!b.name) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  *out = (uint32_t)pl->buffers.len;
  return poot_vec_push(&pl->buffers, &b);
}

static poot_status type_bytes(const poot_type *t, uint64_t *out) {
  size_t n = 0;
  POOT_TRY(poot_type_byte_size(t->dtype, &t->shape, &n));
  *out = n;
  return NULL;
}

static poot_status mark_reach(pc_planner *pl, poot_value v) {
  /* iterative DFS */
  poot_vec st;
  poot_vec_init(&st, sizeof(poot_value));
  poot_status s = poot_vec_push(&st, &v);
  while (!s && st.len) {
    poot_value x = ((poot_value *)st.data)[--st.len];
    x = find(pl, x);
    if (pl->v[x].reachable) continue;
    pl->v[x].reachable = true;
    const poot_node *n = pl->v[x].node;
    for (uint32_t i = 0; n && n->op != POOT_OP_LEAF && i < n->num_operands && !s; i++)
      s = poot_vec_push(&st, &n->operands[i]);
    /* A top_k result keeps its sibling (one kernel writes both). */
    for (uint32_t i = 0; n && n->op == POOT_OP_TOP_K && i < 2 && !s; i++)
      if (!pl->v[n->results[i]].reachable) s = poot_vec_push(&st, &n->results[i]);
  }
  poot_vec_deinit(&st);
  return s;
}

/* A group of `kind` computing `out` into `dest` (dest_buffer) and nothing
 * else yet: no second output, no split, no auxiliary temp or input. */
static pc_group group_make(pg_kind kind, poot_value out, poot_value dest, uint32_t dest_buffer) {
  pc_group g;
  memset(&g, 0, sizeof g);
  g.kind = kind;
  g.out = out;
  g.dest = dest;
  g.dest_buffer = dest_buffer;
  g.out2 = POOT_VALUE_NONE;
  g.split = 1;
  g.aux_temp = UINT32_MAX;
  g.aux_in = UINT32_MAX;
  return g;
}

static poot_status add_group(pc_planner *pl, pg_kind kind, poot_value out, poot_value dest,
                             uint32_t dest_buffer) {
  pc_group g = group_make(kind, out, dest, dest_buffer);
  return poot_vec_push(&pl->groups, &g);
}

/* Is node n (by id) among the nodes in W (value ids)? */
static bool in_set(const poot_value *w, uint32_t nw, poot_value v) {
  for (uint32_t i = 0; i < nw; i++)
    if (w[i] == v) return true;
  return false;
}

/* Epilogue fusion: V (materialized, elementwise) whose elementwise tree
 * reaches contraction roots used only inside that tree. */
static bool try_epilogue(pc_planner *pl, poot_value V, pc_group *g) {
  poot_value w[64], roots[PG_MAX_ROOTS];
  uint32_t nw = 0, nr = 0;
  w[nw++] = V;
  for (uint32_t i = 0; i < nw; i++) {
    const poot_node *n = pl->v[w[i]].node;
    if (!is_elementwise(n->op)) return false;
    for (uint32_t j = 0; j < n->num_operands; j++) {
      poot_value o = find(pl, n->operands[j]);
      pc_value *po = &pl->v[o];
      if (in_set(w, nw, o) || in_set(roots, nr, o)) continue;
      if (po->hold == PC_INLINE && po->node->op != POOT_OP_LEAF && is_elementwise(po->node->op)) {
        if (nw >= 64) return false;
        w[nw++] = o;
      } else if (po->hold == PC_TEMP && po->node->op == POOT_OP_DOT_GENERAL) {
        if (nr >= PG_MAX_ROOTS) return false;
        roots[nr++] = o;
      } else if (po->hold == PC_TEMP && po->node->op == POOT_OP_REDUCE &&
                 po->node->attrs.reduce_kind != POOT_REDUCE_ARGMAX) {
        if (nr >= PG_MAX_ROOTS) return false;
        roots[nr++] = o;
      }
    }
  }
  if (nr == 0) return false;
  for (uint32_t i = 0; i < nr; i++)
    if (pl->v[roots[i]].result) return false;
  /* The epilogue's value is stored by the contraction: 32/64-bit elements
   * only when it lands in a dense buffer. */
  if (pl->v[V].hold == PC_DENSE && poot_dtype_info_of(poot__cc_type(pl, V)->dtype)->elem_bytes < 4)
    return false;
  /* Compatible roots: same shape as V, same contraction length and kind. */
  const poot_type *vt = poot__cc_type(pl, V);
  int64_t clen = -1;
  for (uint32_t i = 0; i < nr; i++) {
    const poot_node *n = pl->v[roots[i]].node;
    if (!poot_shape_equal(&poot__cc_type(pl, roots[i])->shape, &vt->shape)) return false;
    if (n->op != pl->v[roots[0]].node->op) return false;
    if (n->op == POOT_OP_REDUCE && nr > 1) return false;
    int64_t c = 1;
    if (n->op == POOT_OP_DOT_GENERAL) {
      const poot_shape *as = &poot__cc_type(pl, find(pl, n->operands[0]))->shape;
      for (uint32_t j = 0; j < n->attrs.dot.num_contract; j++)
        c *= as->dims[n->attrs.dot.lhs_contract[j]];
    } else {
      const poot_shape *xs = &poot__cc_type(pl, find(pl, n->operands[0]))->shape;
      for (uint32_t j = 0; j < n->attrs.num_dims; j++) c *= xs->dims[n->attrs.dims[j]];
    }
    if (clen >= 0 && c != clen) return false;
    clen = c;
  }
  /* Every user of a root and of a tree node (but V) is inside the tree. */
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = ((const poot_node **)pl->order.data)[i];
    if (!pl->v[n->results[0]].reachable) continue;
    if (in_set(w, nw, n->results[0])) continue;
    for (uint32_t j = 0; j < n->num_operands; j++) {
      poot_value o = find(pl, n->operands[j]);
      if ((o != V && in_set(w, nw, o)) || in_set(roots, nr, o)) return false;
    }
  }
  /* Outputs and states may not name a root or an inner node. */
  for (uint32_t i = 1; i < nw; i++)
    if (pl->v[w[i]].hold != PC_INLINE) return false;
  g->nroots = nr;
  memcpy(g->roots, roots, nr * sizeof *roots);
  return true;
}

/* Aliases: composite params alias their operands, results the body's; then
 * the op order of the flattened graph. */
static poot_status resolve_values(pc_planner *pl, const poot_graph *g) {
  uint32_t nv = poot_graph_value_count(g);
  pl->nvalues = nv;
  pl->alias = poot_arena_alloc(&pl->arena, (nv + 1) * sizeof(poot_value), 8);
  pl->v = poot_arena_alloc(&pl->arena, (nv + 1) * sizeof(pc_value), 8);
  if (!pl->alias || !pl->v) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  memset(pl->v, 0, (nv + 1) * sizeof(pc_value));
  for (uint32_t v = 0; v < nv; v++) {
    pl->alias[v] = v;
    pl->v[v].node = poot_graph_value_node(g, v, &pl->v[v].ri);
    pl->v[v].buffer = UINT32_MAX;
  }
  for (uint32_t i = 0; i < poot_graph_node_count(g); i++) {
    const poot_node *n = poot_graph_node(g, i);
    if (n->op != POOT_OP_COMPOSITE || poot__cc_lowered_composite(pl, n)) continue;
    for (uint32_t p = 0; p < n->body->num_params && p < n->num_operands; p++)
      pl->alias[n->body->params[p]] = n->operands[p];
    for (uint32_t r = 0; r < n->num_results && r < n->body->num_results; r++)
      pl->alias[n->results[r]] = n->body->results[r];
  }
  for (uint32_t v = 0; v < nv; v++) pl->alias[v] = find(pl, v);
  return walk_region(pl, poot_graph_root(g));
}

/* Reachability from the results, and from every op carrying a check: a
 * failed check is observable even when its result is unused (the oracle
 * reports it), so such ops are computed too. */
static poot_status mark_reachable(pc_planner *pl, const poot_graph *g) {
  poot_value out = poot_graph_output(g);
  if (out != POOT_VALUE_NONE) POOT_TRY(mark_reach(pl, out));
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = ((const poot_node **)pl->order.data)[i];
    if (n->trap != POOT_TRAP_NONE) POOT_TRY(mark_reach(pl, n->results[0]));
  }
  for (uint32_t i = 0; i < poot_graph_state_count(g); i++) {
    poot_value s, nvv;
    poot_graph_state_at(g, i, &s, &nvv);
    POOT_TRY(mark_reach(pl, s));
    POOT_TRY(mark_reach(pl, nvv));
  }
  for (uint32_t i = 0; i < poot_graph_env_count(g); i++) {
    const char *name;
    poot_value ev;
    poot_graph_env_at(g, i, &name, &ev);
    POOT_TRY(mark_reach(pl, ev));
  }
  return NULL;
}

/* The readers of every value: reachable ops, each operand counted once. */
static void count_users(pc_planner *pl) {
  const poot_node **order = pl->order.data;
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = order[i];
    if (!pl->v[n->results[0]].reachable) continue;
    for (uint32_t j = 0; j < n->num_operands; j++) {
      poot_value o = pl->alias[n->operands[j]];
      bool dup = false;
      for (uint32_t q = 0; q < j; q++)
        if (pl->alias[n->operands[q]] == o) dup = true;
      if (!dup) pl->v[o].users++;
      /* K or V of an attention template (not also its q or mask). */
      if (!dup && (j == 1 || j == 2) && poot__cc_lowered_composite(pl, n) &&
          o != pl->alias[n->operands[0]] && o != pl->alias[n->operands[3]])
        pl->v[o].attn_kv_users++;
    }
  }
}

/* The storage of one reachable leaf named `name`: a literal, a buffer of
 * its class, or words of the slot buffer. */
static poot_status place_leaf(pc_planner *pl, const poot_node *n, const char *name) {
  poot_value v = n->results[0];
  const poot_type *ty = poot__cc_type(pl, v);
  uint64_t bytes = 0;
  POOT_TRY(type_bytes(ty, &bytes));
  int64_t ne = poot__cc_elems(&ty->shape);
  switch (n->storage) {
    case POOT_STORAGE_CONST:
      if (ne == 1 && !poot_dtype_is_packed(ty->dtype)) {
        pl->v[v].hold = PC_CONSTLIT;
        return NULL;
      }
      pl->v[v].hold = PC_LEAFBUF;
      return add_buffer(pl, POOT_PLAN_BUFFER_CONST, "const", ty, bytes, n->constant->data,
                        &pl->v[v].buffer);
    case POOT_STORAGE_WEIGHT:
    case POOT_STORAGE_STATE:
    case POOT_STORAGE_PARAM: {
      pl->v[v].hold = PC_LEAFBUF;
      POOT_TRY(add_buffer(pl,
                          n->storage == POOT_STORAGE_WEIGHT  ? POOT_PLAN_BUFFER_WEIGHT
                          : n->storage == POOT_STORAGE_STATE ? POOT_PLAN_BUFFER_STATE
                                                             : POOT_PLAN_BUFFER_INPUT,
                          name, ty, bytes, NULL, &pl->v[v].buffer));
      if (n->storage == POOT_STORAGE_WEIGHT)
        ((poot_plan_buffer *)pl->buffers.data)[pl->v[v].buffer].weight_key = n->weight.key;
      return NULL;
    }
    case POOT_STORAGE_SLOT: {
      pl->v[v].hold = PC_SLOT;
      pl->v[v].slot_word = pl->slot_words;
      poot_plan_slot s;
      s.name = poot_arena_strdup(&pl->arena, name);
      if (!s.name)
        return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory naming slot '%s'",
                                name);
      s.type = *ty;
      s.word_offset = pl->slot_words;
      pl->slot_words += (uint32_t)ne * (ty->dtype == POOT_DTYPE_I64 ? 2 : 1);
      return poot_vec_push(&pl->slots, &s);
    }
    default:
      return NULL;
  }
}

/* Buffers 0 (arena) and 1 (slots), then the root leaves in order, then the
 * constants of composite bodies, then the states no op reads. */
static poot_status place_leaves(pc_planner *pl, const poot_graph *g) {
  uint32_t bi;
  POOT_TRY(add_buffer(pl, POOT_PLAN_BUFFER_TEMP, "temp", NULL, 4, NULL, &bi));
  POOT_TRY(add_buffer(pl, POOT_PLAN_BUFFER_SLOT, "slots", NULL, 4, NULL, &bi));
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = NULL;
  uint32_t total = poot_graph_node_count(g);
  for (uint32_t i = 0; i < root->num_nodes + total && !st; i++) {
    const poot_node *n = i < root->num_nodes ? poot_graph_node(g, root->nodes[i])
                                             : poot_graph_node(g, i - root->num_nodes);
    if (n->op != POOT_OP_LEAF) continue;
    if (i >= root->num_nodes && (n->region == 0 || n->storage != POOT_STORAGE_CONST)) continue;
    if (!pl->v[n->results[0]].reachable) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    st = poot_strbuf_status(&sb); /* a truncated name would bind the wrong input */
    if (!st) st = place_leaf(pl, n, sb.data ? sb.data : "");
  }
  poot_strbuf_deinit(&sb);
  POOT_TRY(st);
  for (uint32_t i = 0; i < poot_graph_state_count(g); i++) {
    poot_value s, nvv;
    poot_graph_state_at(g, i, &s, &nvv);
    if (pl->v[s].hold == PC_INLINE) {
      /* an unused state still gets its buffer */
      uint64_t bytes = 0;
      POOT_TRY(type_bytes(poot__cc_type(pl, s), &bytes));
      poot_strbuf_init(&sb);
      poot_graph_leaf_name(g, pl->v[s].node, &sb);
      st = add_buffer(pl, POOT_PLAN_BUFFER_STATE, sb.data ? sb.data : "", poot__cc_type(pl, s),
                      bytes, NULL, &pl->v[s].buffer);
      poot_strbuf_deinit(&sb);
      POOT_TRY(st);
      pl->v[s].hold = PC_LEAFBUF;
    }
  }
  return NULL;
}

/* How many gathers of state s at the scatter's own indices (axis and index
 * value) feed the value v of its updates through elementwise values used
 * once (a read-modify-write, counts[id] + 1): each is read only by the
 * scatter thread that writes the same element (at the same update index), so
 * the scatter may still write s in place. depth bounds the walk. */
static uint32_t rmw_gathers(const pc_planner *pl, poot_value s, const poot_node *sc, poot_value v,
                            int depth) {
  const pc_value *pv = &pl->v[v];
  if (depth > 8 || pv->users != 1 || !pv->node || pv->hold != PC_INLINE) return 0;
  const poot_node *n = pv->node;
  if (n->op == POOT_OP_GATHER)
    return pl->alias[n->operands[0]] == s &&
                   pl->alias[n->operands[1]] == pl->alias[sc->operands[1]] &&
                   n->attrs.axis == sc->attrs.axis && n->attrs.batch_dims == 0
               ? 1u
               : 0u;
  if (!is_elementwise(n->op)) return 0;
  uint32_t found = 0;
  for (uint32_t j = 0; j < n->num_operands; j++) {
    bool dup = false;
    for (uint32_t q = 0; q < j; q++)
      if (pl->alias[n->operands[q]] == pl->alias[n->operands[j]]) dup = true;
    if (!dup) found += rmw_gathers(pl, s, sc, pl->alias[n->operands[j]], depth + 1);
  }
  return found;
}

/* States written in place (before materialization, so that readers of the
 * updated state see a buffer, not an expression). */
static void place_states_in_place(pc_planner *pl, const poot_graph *g) {
  for (uint32_t i = 0; i < poot_graph_state_count(g); i++) {
    poot_value s, nvv;
    poot_graph_state_at(g, i, &s, &nvv);
    s = pl->alias[s];
    nvv = pl->alias[nvv];
    if (nvv == s) continue;
    size_t eb = poot_dtype_info_of(poot__cc_type(pl, s)->dtype)->elem_bytes;
    const bool q8 = poot__cc_type(pl, s)->dtype == POOT_DTYPE_Q8_0; /* a q8_0 K/V cache */
    if (eb != 2 && eb != 4 && eb != 8 && !q8) continue;
    /* A scatter_update of the state (a paged K/V write through the write
     * map, the penalty counts' two elements) whose old value nothing else
     * reads, but the gathers of a read-modify-write at its own indices: the
     * updates are stored into the state's buffer, never a copy of the whole
     * state. 16-bit elements when the template writes them in word pairs
     * (whole even rows). */
    const pc_value *pv = &pl->v[nvv];
    const bool scatter = pv->node && pv->node->op == POOT_OP_SCATTER_UPDATE;
    /* A read-modify-write only where each element is written by one thread
     * (a target that is only the axis, one thread per index, duplicates left
     * to the last): the template that walks the indices in one thread would
     * read an earlier duplicate's update instead of the old value. */
    const bool one_writer =
        scatter && poot__cc_type(pl, s)->shape.rank == 1 &&
        poot__cc_elems(&poot__cc_type(pl, pl->alias[pv->node->operands[1]])->shape) <=
            PC_SCATTER_PAR_MAX;
    const uint32_t rmw =
        one_writer ? rmw_gathers(pl, s, pv->node, pl->alias[pv->node->operands[2]], 0) : 0;
    if (pl->v[s].users != 1 + rmw) continue;
    if (scatter && pv->hold == PC_INLINE && pl->alias[pv->node->operands[0]] == s &&
        (eb != 2 || poot__cc_scatter_word_pairs(pl, pv->node)) &&
        (!q8 || poot__cc_q8_scatter_ok(pl, pv->node))) {
      pc_value *pn = &pl->v[nvv];
      pn->hold = PC_DENSE;
      pn->buffer = pl->v[s].buffer;
      pn->inplace = true;
      continue;
    }
    /* A chain DUS(DUS(… DUS(S) …)) (one update per sequence of a batch),
     * every intermediate read only by the next: all written in place, in
     * order (the groups write one buffer, so they never share a level). */
    poot_value chain[64];
    uint32_t nc = 0;
    poot_value cur = nvv;
    bool ok = false;
    while (nc < 64) {
      const pc_value *pc = &pl->v[cur];
      if (!pc->node || pc->node->op != POOT_OP_DYNAMIC_UPDATE_SLICE || pc->hold != PC_INLINE) break;
      if (cur != nvv && pc->users != 1) break;
      if (eb == 2 && !poot__cc_dus_word_pairs(pl, pc->node)) break;
      if (q8 && !poot__cc_q8_dus_ok(pl, pc->node)) break;
      chain[nc++] = cur;
      cur = pl->alias[pc->node->operands[0]];
      if (cur == s) {
        ok = true;
        break;
      }
    }
    for (uint32_t c = 0; ok && c < nc; c++) {
      pc_value *pn = &pl->v[chain[c]];
      pn->hold = PC_DENSE;
      pn->buffer = pl->v[s].buffer;
      pn->inplace = true;
    }
  }
}

/* Whether an inline value of node n is materialized into a temporary. */
static bool should_materialize(pc_planner *pl, const poot_node *n, poot_value v, pc_value *pv) {
  if (n->op == POOT_OP_CONCAT && n->num_operands > PC_CONCAT_PART) {
    /* A wide concat (a batched step's B attention outputs) is stored, in
     * parts (group_value): inlined, its reader would read every operand,
     * past a target's push params or bindings. */
    return true;
  }
  if (n->op == POOT_OP_GATHER && pv->users && pv->attn_kv_users == pv->users &&
      poot__cc_attn_kv_gather(pl, v)) {
    /* Rows of a pool read only as attention's K/V (a paged step's
     * per-sequence view): the template reads each row in place through the
     * row map, and checks the whole index itself (poot__cc_attn_kv_checks),
     * so no [cap, Hkv, D] copy is made. */
    pv->cost = 1;
    return false;
  }
  if (poot_dtype_is_packed(poot__cc_type(pl, v)->dtype)) {
    /* A packed value (a q8_0 K/V state's views, the quantized rows its
     * write reads) is never a temporary: readers decode it where it is
     * stored, and the in-place write quantizes its update itself. */
    return false;
  }
  if (n->trap != POOT_TRAP_NONE) {
    /* A checked op is computed whole (into a temporary): inlined, only the
     * elements its readers use would be checked, while the oracle checks
     * them all. */
    return true;
  }
  /* Residual-style values: an elementwise value over a single-use GEMV
   * (residual add, bias) is materialized for free as that GEMV's epilogue,
   * so residual streams never grow into long inline chains. */
  if (is_elementwise(n->op)) {
    bool over_gemv = false;
    for (uint32_t j = 0; j < n->num_operands; j++) {
      const pc_value *po = &pl->v[pl->alias[n->operands[j]]];
      if (po->hold == PC_TEMP && po->node->op == POOT_OP_DOT_GENERAL && po->users == 1)
        over_gemv = true;
    }
    if (over_gemv) return true;
  }
  uint32_t cost = 1;
  bool exp = is_expensive(n->op);
  for (uint32_t j = 0; j < n->num_operands; j++) {
    pc_value *po = &pl->v[pl->alias[n->operands[j]]];
    if (po->hold == PC_INLINE) {
      cost += po->cost;
      exp = exp || po->expensive;
    }
  }
  pv->cost = cost > 100000 ? 100000 : cost;
  pv->expensive = exp;
  if ((pv->users >= 2 && (cost > 32 || (exp && cost > 8))) || cost > 48) {
    if (getenv("POOT_COMPILE_DEBUG"))
      fprintf(stderr, "materialize %%%u (%s): users %u cost %u\n", v, poot_op_name(n->op),
              pv->users, cost);
    return true;
  }
  return false;
}

/* Materialization: roots, checked ops and values too costly to recompute
 * become temporaries; so do expensive operands of contractions. */
static void materialize(pc_planner *pl) {
  const poot_node **order = pl->order.data;
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = order[i];
    for (uint32_t r = 0; r < n->num_results; r++) {
      poot_value v = n->results[r];
      pc_value *pv = &pl->v[v];
      if (!pv->reachable || pl->alias[v] != v) continue;
      if (is_root_op(n->op)) {
        if (!pv->inplace) pv->hold = PC_TEMP; /* an in-place scatter stays in its state */
        continue;
      }
      if (pv->hold != PC_INLINE) continue;
      if (should_materialize(pl, n, v, pv)) pv->hold = PC_TEMP;
    }
  }
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = order[i];
    if ((n->op != POOT_OP_DOT_GENERAL && n->op != POOT_OP_COMPOSITE) ||
        !pl->v[n->results[0]].reachable)
      continue;
    for (uint32_t j = 0; j < (n->op == POOT_OP_COMPOSITE ? 3u : 2u); j++) {
      pc_value *po = &pl->v[pl->alias[n->operands[j]]];
      if (po->hold == PC_INLINE && po->expensive) po->hold = PC_TEMP;
    }
  }
}

/* A result buffer for value val: the value is computed into it (dense) or,
 * when it is a leaf or a narrow root, copied into it at the end (a pair
 * (value, buffer) in copies). */
static poot_status result_buffer(pc_planner *pl, poot_value val, poot_plan_buffer_class cls,
                                 const char *name, poot_vec *copies, uint32_t *outb) {
  poot_value rv = pl->alias[val];
  uint64_t bytes = 0;
  POOT_TRY(type_bytes(poot__cc_type(pl, rv), &bytes));
  POOT_TRY(add_buffer(pl, cls, name, poot__cc_type(pl, rv), bytes, NULL, outb));
  pc_value *pr = &pl->v[rv];
  size_t ebytes = poot_dtype_info_of(poot__cc_type(pl, rv)->dtype)->elem_bytes;
  bool root = pr->node && is_root_op(pr->node->op);
  if (pr->hold == PC_INLINE || (pr->hold == PC_TEMP && (!root || ebytes >= 4))) {
    pr->hold = PC_DENSE;
    pr->buffer = *outb;
    return NULL;
  }
  if (pr->hold == PC_INLINE) pr->hold = PC_TEMP;
  pr->result = true;
  uint32_t pair[2] = {rv, *outb};
  return poot_vec_push(copies, pair);
}

/* Results: the primary output, environment and states. */
static poot_status place_results(pc_planner *pl, const poot_graph *g, poot_vec *copies) {
  poot_value out = poot_graph_output(g);
  uint32_t out_buf = UINT32_MAX;
  poot_status st = NULL;
  if (out != POOT_VALUE_NONE)
    st = result_buffer(pl, out, POOT_PLAN_BUFFER_OUTPUT, "output", copies, &out_buf);
  pl->out_buffer = out_buf;
  for (uint32_t i = 0; i < poot_graph_env_count(g) && !st; i++) {
    const char *name;
    poot_value ev;
    uint32_t eb = 0;
    poot_graph_env_at(g, i, &name, &ev);
    st = result_buffer(pl, ev, POOT_PLAN_BUFFER_OUTPUT, name, copies, &eb);
    if (!st) st = poot_vec_push(&pl->env_buffers, &eb);
  }
  for (uint32_t i = 0; i < poot_graph_state_count(g) && !st; i++) {
    poot_value s, nvv;
    poot_graph_state_at(g, i, &s, &nvv);
    s = pl->alias[s];
    nvv = pl->alias[nvv];
    if (nvv == s) continue;
    pc_value *pn = &pl->v[nvv];
    if (pn->inplace) continue;
    if (pn->hold == PC_INLINE) pn->hold = PC_TEMP;
    pn->result = true;
    uint32_t pair[2] = {nvv, pl->v[s].buffer};
    st = poot_vec_push(copies, pair);
  }
  return st;
}

/* The attention composite's group: few query rows over a long cache are
 * split across workgroups over [cap] (partials in a temporary), then
 * combined in the next dispatch. */
static poot_status group_attention(pc_planner *pl, const poot_node *n, poot_value v) {
  const poot_shape *qs = &poot__cc_type(pl, pl->alias[n->operands[0]])->shape;
  int64_t rows = qs->dims[0] * qs->dims[1];
  int64_t cap = poot__cc_type(pl, pl->alias[n->operands[1]])->shape.dims[0];
  int64_t split = 1;
  pc_attn_tile ts;
  if (poot__cc_attn_tile_shape(pl, n, &ts)) {
    POOT_TRY(add_group(pl, PG_ATTENTION, v, v, UINT32_MAX));
    ((pc_group *)poot_vec_at(&pl->groups, pl->groups.len - 1))->tile = true;
    return NULL;
  }
  if (rows < 256 && cap >= 512) {
    /* About 256 workgroups, at most one per 256 positions of the cache.
     * Under a causal mask the kernel shares the visible positions among as
     * many splits as hold 256 each (one for a short context: the others
     * exit at once). Measured on the 1B shape (H200): a decode after 4,000
     * tokens of context takes 4.3 ms unsplit, 1.6 ms with 8 or 16 splits;
     * from an empty context the split costs about 90 µs per step (the
     * combine dispatches). */
    split = 256 / rows;
    if (split > (cap + 255) / 256) split = (cap + 255) / 256;
    if (split > 64) split = 64;
  }
  if (split <= 1) return add_group(pl, PG_ATTENTION, v, v, UINT32_MAX);
  poot_plan_temp t;
  memset(&t, 0, sizeof t);
  t.value = POOT_VALUE_NONE;
  t.type = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){rows * split * (qs->dims[2] + 2)});
  t.size = (uint64_t)(rows * split * (qs->dims[2] + 2)) * 4;
  t.first = UINT32_MAX;
  POOT_TRY(poot_vec_push(&pl->temps, &t));
  POOT_TRY(add_group(pl, PG_ATTENTION, v, POOT_VALUE_NONE, UINT32_MAX));
  pc_group *ga = poot_vec_at(&pl->groups, pl->groups.len - 1);
  ga->split = (uint32_t)split;
  ga->aux_temp = (uint32_t)pl->temps.len - 1;
  POOT_TRY(add_group(pl, PG_ATTN_COMBINE, v, v, UINT32_MAX));
  pc_group *gc = poot_vec_at(&pl->groups, pl->groups.len - 1);
  gc->split = (uint32_t)split;
  gc->aux_temp = (uint32_t)pl->temps.len - 1;
  return NULL;
}

/* An elementwise value: a contraction group with the contractions it
 * fuses as its epilogue (their own groups dropped), else a pointwise
 * group. */
static poot_status group_elementwise(pc_planner *pl, const poot_node *n, poot_value v) {
  pc_group gg;
  memset(&gg, 0, sizeof gg);
  if (!is_elementwise(n->op) || !try_epilogue(pl, v, &gg))
    return add_group(pl, PG_POINTWISE, v, v, UINT32_MAX);
  for (uint32_t r = 0; r < gg.nroots; r++) {
    /* drop the root's own group (it was added earlier) */
    for (size_t q = pl->groups.len; q-- > 0;) {
      pc_group *og = poot_vec_at(&pl->groups, q);
      if (og->kind == PG_CONTRACT && og->out == gg.roots[r]) {
        memmove(og, og + 1, (pl->groups.len - q - 1) * sizeof *og);
        pl->groups.len--;
        break;
      }
    }
    pl->v[gg.roots[r]].hold = PC_FUSED;
  }
  gg.kind = PG_CONTRACT;
  gg.out = gg.dest = v;
  gg.dest_buffer = UINT32_MAX;
  gg.out2 = POOT_VALUE_NONE;
  gg.split = 1;
  gg.aux_temp = UINT32_MAX;
  return poot_vec_push(&pl->groups, &gg);
}

/* The group of one materialized value, by the op that defines it. */
static poot_status group_value(pc_planner *pl, const poot_node *n, poot_value v) {
  switch (n->op) {
    case POOT_OP_DOT_GENERAL:
    case POOT_OP_REDUCE: {
      POOT_TRY(add_group(pl, PG_CONTRACT, v, v, UINT32_MAX));
      pc_group *gg = poot_vec_at(&pl->groups, pl->groups.len - 1);
      gg->nroots = 1;
      gg->roots[0] = v;
      return NULL;
    }
    case POOT_OP_TOP_K:
      /* both results written through temps (then copied when dense) */
      if (pl->v[n->results[1]].hold == PC_INLINE) pl->v[n->results[1]].hold = PC_TEMP;
      return poot__cc_group_topk(pl, n, v);
    case POOT_OP_COMPOSITE:
      return group_attention(pl, n, v);
    case POOT_OP_CUMSUM:
      return add_group(pl, PG_CUMSUM, v, v, UINT32_MAX);
    case POOT_OP_SCATTER_UPDATE:
      /* In place (place_states_in_place): the target is the state's buffer
       * already; else the target is copied first. */
      if (!pl->v[v].inplace)
        POOT_TRY(add_group(pl, PG_POINTWISE, pl->alias[n->operands[0]], v, UINT32_MAX));
      return add_group(pl, PG_SCATTER, v, v, UINT32_MAX);
    case POOT_OP_DYNAMIC_UPDATE_SLICE:
      if (pl->v[v].inplace) return add_group(pl, PG_DUS, v, v, UINT32_MAX);
      return group_elementwise(pl, n, v);
    case POOT_OP_CONCAT:
      if (n->num_operands > PC_CONCAT_PART &&
          poot_dtype_info_of(poot__cc_type(pl, v)->dtype)->elem_bytes == 4) {
        for (uint32_t lo = 0; lo < n->num_operands; lo += PC_CONCAT_PART) {
          POOT_TRY(add_group(pl, PG_POINTWISE, v, v, UINT32_MAX));
          pc_group *gg = poot_vec_at(&pl->groups, pl->groups.len - 1);
          gg->cat_lo = lo;
          gg->cat_hi =
              lo + PC_CONCAT_PART < n->num_operands ? lo + PC_CONCAT_PART : n->num_operands;
        }
        return NULL;
      }
      return group_elementwise(pl, n, v);
    default:
      return group_elementwise(pl, n, v);
  }
}

/* Epilogue fusion and groups in topological order, then the result copies:
 * they read old values, so the ones copying a leaf (a state's old value
 * becoming another state's new value) go first, before any copy-back
 * overwrites a state buffer. (A cycle of such copies, a swap, is not
 * ordered correctly: see docs/compiler.md.) */
static poot_status form_groups(pc_planner *pl, const poot_vec *copies) {
  const poot_node **order = pl->order.data;
  for (size_t i = 0; i < pl->order.len; i++) {
    const poot_node *n = order[i];
    poot_value v = n->results[0];
    pc_value *pv = &pl->v[v];
    if (!pv->reachable || pl->alias[v] != v) continue;
    if (pv->hold != PC_TEMP && pv->hold != PC_DENSE) continue;
    POOT_TRY(group_value(pl, n, v));
  }
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < copies->len; i++) {
      const uint32_t *pair = (const uint32_t *)copies->data + 2 * i;
      bool leaf = pl->v[pair[0]].hold == PC_LEAFBUF || pl->v[pair[0]].hold == PC_SLOT;
      if (leaf == (pass == 0)) POOT_TRY(add_group(pl, PG_POINTWISE, pair[0], pair[0], pair[1]));
    }
  return NULL;
}

/* Split-K: a GEMM group whose output tiles are a small grid (a batched
 * decode's projections: M of 9 to 64 rows, N / 64 tiles) sums K in
 * poot__cc_gemm_split parts, each split's raw sums into a partials temp
 * [splits, roots, M, N] (f32), and a combine group right after it adds
 * them in split order and runs the group's epilogue. */
static poot_status split_gemms(pc_planner *pl) {
  for (size_t i = 0; i < pl->groups.len; i++) {
    pc_group *g = poot_vec_at(&pl->groups, i);
    if (g->kind != PG_CONTRACT || g->aux_temp != UINT32_MAX) continue;
    uint32_t S = poot__cc_gemm_split(pl, g);
    if (S <= 1) continue;
    const poot_shape *os = &poot__cc_type(pl, g->roots[0])->shape;
    int64_t words = (int64_t)S * g->nroots * poot__cc_elems(os);
    poot_plan_temp t;
    memset(&t, 0, sizeof t);
    t.value = POOT_VALUE_NONE;
    t.type = poot_type_make(POOT_DTYPE_F32, 1, &words);
    t.size = (uint64_t)words * 4;
    t.first = UINT32_MAX;
    POOT_TRY(poot_vec_push(&pl->temps, &t));
    pc_group c = *g;
    c.kind = PG_GEMM_COMBINE;
    c.split = S;
    c.aux_temp = (uint32_t)pl->temps.len - 1;
    c.nlocal = 0; /* the combine reads no x: its locals stay the GEMM's */
    POOT_TRY(poot_vec_push(&pl->groups, &c));
    g = poot_vec_at(&pl->groups, i);
    pc_group *base = poot_vec_at(&pl->groups, 0);
    memmove(base + i + 2, base + i + 1, (pl->groups.len - i - 2) * sizeof *base);
    base[i + 1] = c;
    g->split = S;
    g->aux_temp = c.aux_temp;
    g->dest = POOT_VALUE_NONE; /* the combine writes the result */
    g->dest_buffer = UINT32_MAX;
    i++;
  }
  return NULL;
}

/* A staging group (PG_GEMM_X, PG_GEMM_W) of the GEMM root `root` with its
 * own temp of `bytes` (form one, ty), inserted before group i: *out_temp. */
static poot_status insert_staging(pc_planner *pl, size_t i, pg_kind kind, poot_value out,
                                  poot_value root, bool one, poot_kir_scalar ty, uint64_t bytes,
                                  uint32_t *out_temp) {
  poot_plan_temp t;
  memset(&t, 0, sizeof t);
  t.value = POOT_VALUE_NONE;
  int64_t words = (int64_t)(bytes / 4);
  t.type = poot_type_make(POOT_DTYPE_F32, 1, &words);
  t.size = bytes;
  t.first = UINT32_MAX;
  POOT_TRY(poot_vec_push(&pl->temps, &t));
  *out_temp = (uint32_t)pl->temps.len - 1;
  pc_group c = group_make(kind, out, POOT_VALUE_NONE, UINT32_MAX);
  c.nroots = 1;
  c.roots[0] = root;
  c.aux_temp = *out_temp;
  c.xone = one;
  c.xty = ty;
  POOT_TRY(poot_vec_push(&pl->groups, &c));
  pc_group *base = poot_vec_at(&pl->groups, 0);
  memmove(base + i + 1, base + i, (pl->groups.len - i - 1) * sizeof *base);
  base[i] = c;
  return NULL;
}

/* The mma GEMM's x staged once: before every GEMM group whose raw path
 * copies x (poot__cc_gemm_x_staged), a PG_GEMM_X group writes x in the
 * 16-bit form the mma reads into a temp (M · K · 4 bytes at `high`: bf16 hi
 * and lo; M · K · 2 at `medium`), and the GEMM copies its tiles from there
 * like the weights' instead of computing every element of x through the
 * emitter once per column tile. GEMMs of one x in one form (the Q, K and V
 * projections) share the first one's temp. */
static poot_status stage_gemm_xs(pc_planner *pl) {
  for (size_t i = 0; i < pl->groups.len; i++) {
    pc_group *g = poot_vec_at(&pl->groups, i);
    bool one = false;
    poot_kir_scalar ty = POOT_KIR_BF16;
    uint64_t bytes = 0;
    if (!poot__cc_gemm_x_staged(pl, g, &one, &ty, &bytes)) continue;
    const poot_value x = pl->alias[pl->v[g->roots[0]].node->operands[0]];
    uint32_t ti = UINT32_MAX;
    for (size_t j = 0; j < i; j++) {
      const pc_group *o = poot_vec_at(&pl->groups, j);
      if (o->kind == PG_GEMM_X && o->out == x && o->xone == one && o->xty == ty) ti = o->aux_temp;
    }
    if (ti == UINT32_MAX)
      POOT_TRY(insert_staging(pl, i++, PG_GEMM_X, x, g->roots[0], one, ty, bytes, &ti));
    ((pc_group *)poot_vec_at(&pl->groups, i))->x_temp1 = ti + 1;
  }
  return NULL;
}

/* The mma GEMM's weights staged once: before every GEMM group whose raw
 * path would copy its weights from temps (poot__cc_gemm_w_staged: some
 * weight is not a 16-bit leaf), a PG_GEMM_W group per root writes that
 * root's weight in the 16-bit form the mma reads (N · K · 4 bytes at
 * `high`: bf16 hi and lo; N · K · 2 at `medium`) into a temp of its own,
 * and the GEMM copies its tiles from there instead of dequantizing every
 * element once per row tile. The temps live from their group to the GEMM
 * (the arena reuses them layer after layer). */
static poot_status stage_gemm_ws(pc_planner *pl) {
  for (size_t i = 0; i < pl->groups.len; i++) {
    const pc_group *g = poot_vec_at(&pl->groups, i);
    bool one = false;
    poot_kir_scalar ty = POOT_KIR_BF16;
    uint64_t bytes = 0;
    if (!poot__cc_gemm_w_staged(pl, g, &one, &ty, &bytes)) continue;
    for (uint32_t r = 0, nr = g->nroots; r < nr; r++) {
      const poot_value root = ((const pc_group *)poot_vec_at(&pl->groups, i))->roots[r];
      uint32_t ti;
      POOT_TRY(insert_staging(pl, i++, PG_GEMM_W, root, root, one, ty, bytes, &ti));
      ((pc_group *)poot_vec_at(&pl->groups, i))->w_temp1[r] = ti + 1;
    }
  }
  return NULL;
}

/* A temporary for every value held as one. */
static poot_status add_temps(pc_planner *pl) {
  for (uint32_t v = 0; v < pl->nvalues; v++) {
    if (pl->v[v].hold != PC_TEMP) continue;
    poot_plan_temp t;
    memset(&t, 0, sizeof t);
    t.value = v;
    t.type = *poot__cc_type(pl, v);
    t.size = (uint64_t)poot__cc_elems(&t.type.shape) * (t.type.dtype == POOT_DTYPE_I64 ? 8 : 4);
    if (t.size == 0) t.size = 4;
    t.first = UINT32_MAX;
    t.last = 0;
    pl->v[v].temp = (uint32_t)pl->temps.len;
    POOT_TRY(poot_vec_push(&pl->temps, &t));
  }
  return NULL;
}

poot_status poot__cc_plan_build(pc_planner *pl, const poot_graph *g) {
  POOT_TRY(resolve_values(pl, g));
  POOT_TRY(mark_reachable(pl, g));
  count_users(pl);
  POOT_TRY(place_leaves(pl, g));
  place_states_in_place(pl, g);
  materialize(pl);
  poot_vec copies; /* pairs (value, buffer) copied at the end */
  poot_vec_init(&copies, sizeof(uint32_t) * 2);
  poot_status st = place_results(pl, g, &copies);
  if (!st) st = form_groups(pl, &copies);
  if (!st) st = split_gemms(pl);
  if (!st) st = stage_gemm_ws(pl);
  if (!st) st = stage_gemm_xs(pl);
  poot_vec_deinit(&copies);
  POOT_TRY(st);
  return add_temps(pl);
}
