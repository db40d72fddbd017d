/* Canonicalization: local rewrites on the graph being rebuilt, each exact
 * under the oracle's semantics (docs/passes.md gives the argument for each).
 * A node is rewritten either into an existing value (an identity), into a
 * node with reordered operands or fused attributes, or into a short new
 * sequence (an elementwise op moved before identical broadcasts). */
#include <string.h>

#include "passes_impl.h"

#define MAX_OPS 64

typedef struct canon_node {
  poot_op op;
  uint32_t n;
  poot_value ops[MAX_OPS];
  poot_attrs attrs;
  poot_trap trap;
} canon_node;

static const poot_type *vtype(const pass_rb *rb, poot_value v) {
  return poot_graph_value_type(rb->dst, v);
}

static const poot_node *vdef(const pass_rb *rb, poot_value v) {
  return poot__pass_def(rb->dst, v);
}

static bool is_elementwise(poot_op op) {
  return (op >= POOT_OP_ADD && op <= POOT_OP_GE) || op == POOT_OP_SELECT || op == POOT_OP_CONVERT ||
         op == POOT_OP_BITCAST;
}

static bool is_intlike(poot_dtype dt) {
  return poot_dtype_is_int(dt) || dt == POOT_DTYPE_BOOL;
}

/* Integer ranges, for convert round trips. */
static void int_range(poot_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case POOT_DTYPE_BOOL:
      *lo = 0, *hi = 1;
      break;
    case POOT_DTYPE_I8:
      *lo = INT8_MIN, *hi = INT8_MAX;
      break;
    case POOT_DTYPE_U8:
      *lo = 0, *hi = UINT8_MAX;
      break;
    case POOT_DTYPE_I16:
      *lo = INT16_MIN, *hi = INT16_MAX;
      break;
    case POOT_DTYPE_I32:
      *lo = INT32_MIN, *hi = INT32_MAX;
      break;
    case POOT_DTYPE_U32:
      *lo = 0, *hi = UINT32_MAX;
      break;
    default:
      *lo = INT64_MIN, *hi = INT64_MAX;
      break;
  }
}

/* True when convert(convert(x: a, b), a) gives back every (non-NaN) x of a:
 * every value of a is exactly a value of b, and converting that value back
 * returns it (convert's rules in poot/graph.h). */
static bool exact_round_trip(poot_dtype a, poot_dtype b) {
  if (a == POOT_DTYPE_BOOL) return true; /* 0/1 and back through x != 0 */
  if (b == POOT_DTYPE_BOOL) return false;
  if (poot_dtype_is_int(a)) {
    int64_t alo, ahi, blo, bhi;
    int_range(a, &alo, &ahi);
    if (poot_dtype_is_int(b)) {
      int_range(b, &blo, &bhi);
      return blo <= alo && ahi <= bhi;
    }
    /* A float of p significant bits holds every integer of magnitude ≤ 2^p. */
    const int p = b == POOT_DTYPE_F32 ? 24 : b == POOT_DTYPE_F16 ? 11 : 8;
    const int64_t lim = (int64_t)1 << p;
    return -lim <= alo && ahi <= lim;
  }
  /* f16 and bf16 widen exactly to f32; f32 rounds back to the same bits. */
  return (a == POOT_DTYPE_F16 || a == POOT_DTYPE_BF16) && b == POOT_DTYPE_F32;
}

/* Compares a splat's element with one of the constants the rules need. */
enum { K_ZERO, K_NEG_ZERO, K_ONE, K_ALL_ONES };

static bool splat_is(const pass_rb *rb, poot_value v, int what) {
  uint8_t e[8];
  if (!poot__pass_splat(rb->dst, v, e)) return false;
  const poot_dtype dt = vtype(rb, v)->dtype;
  const size_t eb = poot_dtype_info_of(dt)->elem_bytes;
  uint8_t want[8];
  memset(want, 0, sizeof want);
  uint64_t bits = 0;
  switch (what) {
    case K_ZERO:
      bits = 0;
      break;
    case K_NEG_ZERO:
      if (!poot_dtype_is_float(dt)) return false;
      bits = dt == POOT_DTYPE_F32 ? 0x80000000u : 0x8000u;
      break;
    case K_ONE:
      if (dt == POOT_DTYPE_F32)
        bits = 0x3f800000u;
      else if (dt == POOT_DTYPE_F16)
        bits = 0x3c00u;
      else if (dt == POOT_DTYPE_BF16)
        bits = 0x3f80u;
      else
        bits = 1;
      break;
    case K_ALL_ONES:
      if (poot_dtype_is_float(dt)) return false;
      bits = dt == POOT_DTYPE_BOOL ? 1 : UINT64_MAX;
      break;
  }
  for (size_t i = 0; i < eb; i++) want[i] = (uint8_t)(bits >> (8 * i));
  return memcmp(e, want, eb) == 0;
}

static bool quiet(const pass_rb *rb, poot_value v) {
  return !poot__pass_may_snan(rb->dst, v, 0);
}

/* x op c → x (and c op x → x for commutative ops) for identity constants. */
static poot_value binary_identity(const pass_rb *rb, const canon_node *c) {
  const poot_value x = c->ops[0], y = c->ops[1];
  const poot_dtype dt = vtype(rb, x)->dtype;
  if (is_intlike(dt)) {
    const bool isbool = dt == POOT_DTYPE_BOOL;
    switch (c->op) {
      case POOT_OP_ADD:
        if (isbool) return POOT_VALUE_NONE;
        /* fallthrough */
      case POOT_OP_OR:
      case POOT_OP_XOR:
        if (splat_is(rb, y, K_ZERO)) return x;
        if (splat_is(rb, x, K_ZERO)) return y;
        return POOT_VALUE_NONE;
      case POOT_OP_SUB:
      case POOT_OP_SHL:
      case POOT_OP_SHR:
        return !isbool && splat_is(rb, y, K_ZERO) ? x : POOT_VALUE_NONE;
      case POOT_OP_MUL:
        if (isbool) return POOT_VALUE_NONE;
        if (splat_is(rb, y, K_ONE)) return x;
        if (splat_is(rb, x, K_ONE)) return y;
        return POOT_VALUE_NONE;
      case POOT_OP_DIV:
        return !isbool && splat_is(rb, y, K_ONE) ? x : POOT_VALUE_NONE;
      case POOT_OP_AND:
        if (splat_is(rb, y, K_ALL_ONES)) return x;
        if (splat_is(rb, x, K_ALL_ONES)) return y;
        return POOT_VALUE_NONE;
      default:
        return POOT_VALUE_NONE;
    }
  }
  if (!poot_dtype_is_float(dt)) return POOT_VALUE_NONE;
  /* Floats: the identity holds for every number and every quiet NaN (one f32
   * operation with one NaN operand returns that NaN), not for a signalling
   * NaN, which the operation would quiet. */
  switch (c->op) {
    case POOT_OP_ADD:
      if (splat_is(rb, y, K_NEG_ZERO) && quiet(rb, x)) return x;
      if (splat_is(rb, x, K_NEG_ZERO) && quiet(rb, y)) return y;
      return POOT_VALUE_NONE;
    case POOT_OP_SUB:
      return splat_is(rb, y, K_ZERO) && quiet(rb, x) ? x : POOT_VALUE_NONE;
    case POOT_OP_MUL:
      if (splat_is(rb, y, K_ONE) && quiet(rb, x)) return x;
      if (splat_is(rb, x, K_ONE) && quiet(rb, y)) return y;
      return POOT_VALUE_NONE;
    case POOT_OP_DIV:
      return splat_is(rb, y, K_ONE) && quiet(rb, x) ? x : POOT_VALUE_NONE;
    default:
      return POOT_VALUE_NONE;
  }
}

static bool same_broadcast(const poot_node *a, const poot_node *b, const pass_rb *rb) {
  if (a->op != POOT_OP_BROADCAST || b->op != POOT_OP_BROADCAST) return false;
  if (!poot_shape_equal(&a->attrs.shape, &b->attrs.shape) || a->attrs.num_dims != b->attrs.num_dims)
    return false;
  for (uint32_t i = 0; i < a->attrs.num_dims; i++)
    if (a->attrs.dims[i] != b->attrs.dims[i]) return false;
  return poot_shape_equal(&vtype(rb, a->operands[0])->shape, &vtype(rb, b->operands[0])->shape);
}

/* op(broadcast(x1), ..., broadcast(xn)) → broadcast(op(x1, ..., xn)) when the
 * broadcasts are identical, or are broadcasts of scalars (which are then
 * broadcast to the lead source's shape instead): each output element is op
 * applied to the same source elements either way, and fewer elements are
 * computed. */
static poot_status sink_broadcasts(pass_rb *rb, const canon_node *c, poot_value *out) {
  *out = POOT_VALUE_NONE;
  if (!is_elementwise(c->op) || c->n == 0) return NULL;
  /* The lead: a broadcast of a source of rank ≥ 1 if there is one. */
  const poot_node *lead = NULL;
  for (uint32_t i = 0; i < c->n; i++) {
    const poot_node *bi = vdef(rb, c->ops[i]);
    if (!bi || bi->op != POOT_OP_BROADCAST) return NULL;
    if (!lead || (vtype(rb, lead->operands[0])->shape.rank == 0 &&
                  vtype(rb, bi->operands[0])->shape.rank > 0))
      lead = bi;
  }
  const poot_shape *lead_shape = &vtype(rb, lead->operands[0])->shape;
  poot_value src[3];
  bool scalar[3] = {false, false, false};
  for (uint32_t i = 0; i < c->n; i++) {
    const poot_node *bi = vdef(rb, c->ops[i]);
    src[i] = bi->operands[0];
    if (same_broadcast(lead, bi, rb)) continue;
    if (vtype(rb, src[i])->shape.rank != 0) return NULL;
    scalar[i] = true;
  }
  for (uint32_t i = 0; i < c->n; i++) {
    if (!scalar[i]) continue;
    poot_attrs a;
    memset(&a, 0, sizeof a);
    a.shape = *lead_shape;
    poot_value wide = POOT_VALUE_NONE;
    POOT_TRY(
        poot_graph_add_node(rb->dst, POOT_OP_BROADCAST, 1, &src[i], &a, POOT_TRAP_NONE, &wide));
    src[i] = wide;
  }
  poot_value inner = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_add_node(rb->dst, c->op, c->n, src, &c->attrs, POOT_TRAP_NONE, &inner));
  return poot_graph_add_node(rb->dst, POOT_OP_BROADCAST, 1, &inner, &lead->attrs, POOT_TRAP_NONE,
                             out);
}

/* One round of rules on c. Sets *repl to a replacement value, or rewrites c
 * in place and sets *changed. */
/* A binary op: an identity operand, else integer operands in value order
 * (integer and bool add/mul/max/min/and/or/xor are commutative bit for bit;
 * float add/mul/max/min are not: which NaN comes out depends on the operand
 * order, so only integers are reordered). */
static void canon_binary(pass_rb *rb, canon_node *c, poot_value *repl, bool *changed) {
  const poot_value x = c->ops[0];
  *repl = binary_identity(rb, c);
  if (*repl != POOT_VALUE_NONE) return;
  if (c->op != POOT_OP_SUB && c->op != POOT_OP_DIV && c->op != POOT_OP_SHL &&
      c->op != POOT_OP_SHR && is_intlike(vtype(rb, x)->dtype) && c->ops[0] > c->ops[1]) {
    c->ops[0] = c->ops[1];
    c->ops[1] = x;
    *changed = true;
  }
}

/* eq and ne with operands in value order (IEEE equality is symmetric, NaN
 * included); gt and ge as lt and le with the operands swapped (a > b is
 * b < a, a ≥ b is b ≤ a, also unordered: both false). */
static void canon_compare(canon_node *c, bool *changed) {
  const poot_value x = c->ops[0];
  if (c->op == POOT_OP_EQ || c->op == POOT_OP_NE) {
    if (c->ops[0] > c->ops[1]) {
      c->ops[0] = c->ops[1];
      c->ops[1] = x;
      *changed = true;
    }
    return;
  }
  c->op = c->op == POOT_OP_GT ? POOT_OP_LT : POOT_OP_LE;
  c->ops[0] = c->ops[1];
  c->ops[1] = x;
  *changed = true;
}

/* neg(neg(y)) = y (f16/bf16: only when y is quiet); not(not(y)) = y;
 * abs(abs(y)) = abs(y), abs(neg(y)) = abs(y). */
static void canon_sign(pass_rb *rb, canon_node *c, poot_value *repl, bool *changed) {
  const poot_value x = c->ops[0];
  const poot_type *xt = vtype(rb, x);
  const poot_node *xd = vdef(rb, x);
  if (c->op == POOT_OP_NEG) {
    if (xd->op == POOT_OP_NEG) {
      const poot_value y = xd->operands[0];
      if (xt->dtype != POOT_DTYPE_F16 && xt->dtype != POOT_DTYPE_BF16)
        *repl = y;
      else if (quiet(rb, y))
        *repl = y;
    }
  } else if (c->op == POOT_OP_NOT) {
    if (xd->op == POOT_OP_NOT) *repl = xd->operands[0];
  } else if (xd->op == POOT_OP_ABS) {
    *repl = x;
  } else if (xd->op == POOT_OP_NEG && xt->dtype != POOT_DTYPE_U8 && xt->dtype != POOT_DTYPE_U32) {
    /* |-x| = |x| (signed wrap included: -INT_MIN = INT_MIN); not for
     * unsigned dtypes, where abs is the identity and neg is 2^n - x. */
    c->ops[0] = xd->operands[0];
    *changed = true;
  }
}

/* A convert to the same dtype, or an exact round trip, is its operand; a
 * bitcast to the same dtype is its operand, two bitcasts are one. */
static void canon_cast(pass_rb *rb, canon_node *c, poot_value *repl, bool *changed) {
  const poot_value x = c->ops[0];
  const poot_type *xt = vtype(rb, x);
  const poot_node *xd = vdef(rb, x);
  if (c->op == POOT_OP_CONVERT) {
    const poot_dtype to = c->attrs.dtype;
    if (to == xt->dtype) {
      if ((to != POOT_DTYPE_F16 && to != POOT_DTYPE_BF16) || quiet(rb, x)) *repl = x;
      return;
    }
    if (xd->op == POOT_OP_CONVERT) {
      const poot_value y = xd->operands[0];
      const poot_dtype a = vtype(rb, y)->dtype;
      if (a == to && exact_round_trip(a, xt->dtype) && (!poot_dtype_is_float(a) || quiet(rb, y)))
        *repl = y;
    }
    return;
  }
  if (c->attrs.dtype == xt->dtype) {
    *repl = x;
  } else if (xd->op == POOT_OP_BITCAST) {
    const poot_value y = xd->operands[0];
    if (vtype(rb, y)->dtype == c->attrs.dtype) {
      *repl = y;
    } else {
      c->ops[0] = y;
      *changed = true;
    }
  }
}

/* Reshape, transpose and broadcast: the identity is the operand; two in a
 * row are one. */
static void canon_layout(pass_rb *rb, canon_node *c, poot_value *repl, bool *changed) {
  const poot_value x = c->ops[0];
  const poot_type *xt = vtype(rb, x);
  const poot_node *xd = vdef(rb, x);
  if (c->op == POOT_OP_RESHAPE) {
    if (poot_shape_equal(&c->attrs.shape, &xt->shape)) {
      *repl = x;
    } else if (xd->op == POOT_OP_RESHAPE) {
      c->ops[0] = xd->operands[0];
      *changed = true;
    }
  } else if (c->op == POOT_OP_TRANSPOSE) {
    bool ident = true;
    for (uint32_t i = 0; i < c->attrs.num_dims; i++) ident &= c->attrs.dims[i] == (int64_t)i;
    if (ident) {
      *repl = x;
    } else if (xd->op == POOT_OP_TRANSPOSE) {
      /* result dim i = x dim p2[i] = inner dim p1[p2[i]] */
      int64_t q[POOT_MAX_RANK] = {0};
      for (uint32_t i = 0; i < c->attrs.num_dims; i++) q[i] = xd->attrs.dims[c->attrs.dims[i]];
      memcpy(c->attrs.dims, q, sizeof(int64_t) * c->attrs.num_dims);
      c->ops[0] = xd->operands[0];
      *changed = true;
    }
  } else if (poot_shape_equal(&c->attrs.shape, &xt->shape)) {
    *repl = x; /* same rank and strictly increasing dims: the identity map */
  } else if (xd->op == POOT_OP_BROADCAST) {
    /* inner dim i → middle dim d1[i] → result dim d2[d1[i]] */
    int64_t q[POOT_MAX_RANK] = {0};
    for (uint32_t i = 0; i < xd->attrs.num_dims; i++) q[i] = c->attrs.dims[xd->attrs.dims[i]];
    memcpy(c->attrs.dims, q, sizeof q);
    c->attrs.num_dims = xd->attrs.num_dims;
    for (uint32_t i = c->attrs.num_dims; i < POOT_MAX_RANK; i++) c->attrs.dims[i] = 0;
    c->ops[0] = xd->operands[0];
    *changed = true;
  }
}

/* Slice, concat, pad and dynamic_slice that keep their operand whole. */
static bool window_is_identity(pass_rb *rb, const canon_node *c) {
  const poot_type *xt = vtype(rb, c->ops[0]);
  bool ident = true;
  switch (c->op) {
    case POOT_OP_SLICE:
      for (uint32_t i = 0; i < xt->shape.rank; i++)
        ident &= c->attrs.start[i] == 0 && c->attrs.limit[i] == xt->shape.dims[i] &&
                 (c->attrs.stride[i] == 1 || xt->shape.dims[i] <= 1);
      return ident;
    case POOT_OP_CONCAT:
      return c->n == 1;
    case POOT_OP_PAD:
      for (uint32_t i = 0; i < xt->shape.rank; i++)
        ident &= !c->attrs.low[i] && !c->attrs.high[i] && !c->attrs.interior[i];
      return ident;
    default: /* POOT_OP_DYNAMIC_SLICE */
      /* A full-size window without a check: every start clamps to 0. */
      ident = c->trap == POOT_TRAP_NONE;
      for (uint32_t i = 0; i < xt->shape.rank; i++) ident &= c->attrs.dims[i] == xt->shape.dims[i];
      return ident;
  }
}

static poot_status apply(pass_rb *rb, canon_node *c, poot_value *repl, bool *changed) {
  *repl = POOT_VALUE_NONE;
  *changed = false;
  POOT_TRY(sink_broadcasts(rb, c, repl));
  if (*repl != POOT_VALUE_NONE) return NULL;
  switch (c->op) {
    case POOT_OP_ADD:
    case POOT_OP_MUL:
    case POOT_OP_MAX:
    case POOT_OP_MIN:
    case POOT_OP_AND:
    case POOT_OP_OR:
    case POOT_OP_XOR:
    case POOT_OP_SUB:
    case POOT_OP_DIV:
    case POOT_OP_SHL:
    case POOT_OP_SHR:
      canon_binary(rb, c, repl, changed);
      return NULL;
    case POOT_OP_EQ:
    case POOT_OP_NE:
    case POOT_OP_GT:
    case POOT_OP_GE:
      canon_compare(c, changed);
      return NULL;
    case POOT_OP_NEG:
    case POOT_OP_NOT:
    case POOT_OP_ABS:
      canon_sign(rb, c, repl, changed);
      return NULL;
    case POOT_OP_CONVERT:
    case POOT_OP_BITCAST:
      canon_cast(rb, c, repl, changed);
      return NULL;
    case POOT_OP_RESHAPE:
    case POOT_OP_TRANSPOSE:
    case POOT_OP_BROADCAST:
      canon_layout(rb, c, repl, changed);
      return NULL;
    case POOT_OP_SLICE:
    case POOT_OP_CONCAT:
    case POOT_OP_PAD:
    case POOT_OP_DYNAMIC_SLICE:
      if (window_is_identity(rb, c)) *repl = c->ops[0];
      return NULL;
    case POOT_OP_SELECT: {
      uint8_t e[8];
      if (c->ops[1] == c->ops[2])
        *repl = c->ops[1];
      else if (poot__pass_splat(rb->dst, c->ops[0], e))
        *repl = e[0] ? c->ops[1] : c->ops[2];
      return NULL;
    }
    default:
      return NULL;
  }
}

static poot_status canon_hook(pass_rb *rb, const poot_node *node, const poot_value *ops,
                              poot_value *out_results, bool *out_done) {
  *out_done = false;
  if (node->op == POOT_OP_LEAF || node->op == POOT_OP_COMPOSITE || node->num_results != 1 ||
      node->num_operands > MAX_OPS)
    return NULL;
  canon_node c;
  c.op = node->op;
  c.n = node->num_operands;
  memcpy(c.ops, ops, sizeof(poot_value) * c.n);
  c.attrs = node->attrs;
  c.trap = node->trap;
  bool any = false;
  poot_value repl = POOT_VALUE_NONE;
  for (int round = 0; round < 8; round++) {
    bool changed = false;
    POOT_TRY(apply(rb, &c, &repl, &changed));
    if (repl != POOT_VALUE_NONE) break;
    if (!changed) break;
    any = true;
  }
  if (repl != POOT_VALUE_NONE) {
    out_results[0] = repl;
  } else if (any) {
    POOT_TRY(poot_graph_add_node(rb->dst, c.op, c.n, c.ops, &c.attrs, c.trap, out_results));
  } else {
    return NULL;
  }
  rb->changes++;
  *out_done = true;
  return NULL;
}

poot_status poot_pass_canonicalize(const poot_graph *graph, const poot_pass_options *options,
                                   poot_graph **out_graph, uint32_t *out_changes) {
  if (out_graph) *out_graph = NULL;
  if (out_changes) *out_changes = 0;
  if (!graph || !out_graph)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_pass_canonicalize: NULL argument");
  poot_pass_options defaults;
  poot_pass_options_init(&defaults);
  pass_rb rb;
  memset(&rb, 0, sizeof rb);
  rb.src = graph;
  rb.opt = options ? options : &defaults;
  rb.hook = canon_hook;
  poot_status st = poot__pass_rebuild(&rb, out_graph);
  if (!st && out_changes) *out_changes = rb.changes;
  return st;
}
