/* ops.c — the op table of the graph IR: each core op's name, arity, class,
 * type rule and check flag, read from POOT_GRAPH_OPS (poot/graph_ops.h), and
 * the inference every builder and the verifier go through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

static bool is_plain(poot_dtype dt) {
  const poot_dtype_info *i = poot_dtype_info_of(dt);
  return i && !i->is_packed;
}
static bool is_num(poot_dtype dt) {
  return poot_dtype_is_float(dt) || poot_dtype_is_int(dt);
}

/* A packed operand moves in whole blocks: the op must keep its last dim
 * whole (`whole`); a plain one always may. */
static poot_status need_whole_blocks(const poot_type *x, bool whole) {
  if (!poot_dtype_is_packed(x->dtype) || whole) return NULL;
  return BAD("operand dtype: %s moves in whole blocks; the op must keep the last dim whole",
             poot_dtype_name(x->dtype));
}

static void type_str(char *buf, size_t n, const poot_type *t) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_type_format(&sb, t);
  snprintf(buf, n, "%s", sb.failed ? "?" : sb.data);
  poot_strbuf_deinit(&sb);
}

static poot_status need_same_types(uint32_t n, const poot_type *const *in) {
  for (uint32_t i = 1; i < n; i++) {
    if (!poot_type_equal(in[0], in[i])) {
      char a[160], b[160];
      type_str(a, sizeof a, in[0]);
      type_str(b, sizeof b, in[i]);
      return BAD("same operand types: operand %u is %s but operand 0 is %s", i, b, a);
    }
  }
  return NULL;
}

static poot_status need_dtype(const poot_type *t, bool ok, uint32_t i, const char *what) {
  if (ok) return NULL;
  return BAD("operand dtype: operand %u is %s, expected %s", i, poot_dtype_name(t->dtype), what);
}

static poot_status check_dim_list(const char *what, uint32_t n, const int64_t *d, uint32_t rank,
                                  bool distinct) {
  uint32_t seen = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (d[i] < 0 || d[i] >= (int64_t)rank)
      return BAD("bad attribute: %s[%u] = %lld is outside [0, %u)", what, i, (long long)d[i], rank);
    if (distinct) {
      if (seen & (1u << d[i]))
        return BAD("bad attribute: %s repeats dim %lld", what, (long long)d[i]);
      seen |= 1u << d[i];
    }
  }
  return NULL;
}

static poot_status check_shape(const poot_shape *s, const char *what) {
  if (s->rank > POOT_MAX_RANK)
    return BAD("bad attribute: %s rank %u > %d", what, s->rank, POOT_MAX_RANK);
  int64_t n = 0;
  poot_status st = poot_shape_elements(s, &n);
  if (st) return poot_status_annotate(st, "bad attribute: %s", what);
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void poot__attrs_canonical(poot_op op, uint32_t rank, const poot_attrs *in, poot_attrs *out) {
  memset(out, 0, sizeof *out);
  if (rank > POOT_MAX_RANK) rank = POOT_MAX_RANK;
  switch (op) {
    case POOT_OP_CONVERT:
    case POOT_OP_BITCAST:
    case POOT_OP_DEQUANTIZE:
    case POOT_OP_QUANTIZE:
      out->dtype = in->dtype;
      break;
    case POOT_OP_IOTA:
      out->dtype = in->dtype;
      out->shape = in->shape;
      out->axis = in->axis;
      break;
    case POOT_OP_RNG:
      out->dtype = in->dtype;
      out->shape = in->shape;
      out->rng_dist = in->rng_dist;
      break;
    case POOT_OP_BROADCAST:
    case POOT_OP_TRANSPOSE:
    case POOT_OP_DYNAMIC_SLICE:
      if (op == POOT_OP_BROADCAST) out->shape = in->shape;
      memcpy(out->dims, in->dims, sizeof out->dims);
      out->num_dims = in->num_dims;
      break;
    case POOT_OP_RESHAPE:
      out->shape = in->shape;
      break;
    case POOT_OP_SLICE:
      out->num_dims = rank;
      for (uint32_t i = 0; i < rank; i++) {
        out->start[i] = in->start[i];
        out->limit[i] = in->limit[i];
        out->stride[i] = in->stride[i];
      }
      break;
    case POOT_OP_PAD:
      out->num_dims = rank;
      for (uint32_t i = 0; i < rank; i++) {
        out->low[i] = in->low[i];
        out->high[i] = in->high[i];
        out->interior[i] = in->interior[i];
      }
      break;
    case POOT_OP_CONCAT:
    case POOT_OP_SCATTER_UPDATE:
      out->axis = in->axis;
      break;
    case POOT_OP_GATHER:
      out->axis = in->axis;
      out->batch_dims = in->batch_dims;
      break;
    case POOT_OP_REDUCE:
      out->reduce_kind = in->reduce_kind;
      out->dtype = in->dtype;
      out->num_dims = in->num_dims;
      memcpy(out->dims, in->dims, sizeof out->dims);
      if (out->num_dims <= POOT_MAX_RANK) qsort(out->dims, out->num_dims, sizeof(int64_t), cmp_i64);
      break;
    case POOT_OP_DOT_GENERAL:
      out->dot = in->dot;
      out->dtype = in->dtype;
      break;
    case POOT_OP_TOP_K:
      out->k = in->k;
      break;
    case POOT_OP_CUMSUM:
      out->axis = in->axis;
      out->dtype = in->dtype;
      break;
    default:
      break;
  }
}

void poot__attrs_from_result(poot_op op, const poot_type *r, poot_attrs *a) {
  switch (op) {
    case POOT_OP_CONVERT:
    case POOT_OP_BITCAST:
    case POOT_OP_DEQUANTIZE:
    case POOT_OP_QUANTIZE:
    case POOT_OP_REDUCE:
    case POOT_OP_DOT_GENERAL:
    case POOT_OP_CUMSUM:
      a->dtype = r->dtype;
      break;
    case POOT_OP_IOTA:
    case POOT_OP_RNG:
      a->dtype = r->dtype;
      a->shape = r->shape;
      break;
    case POOT_OP_BROADCAST:
    case POOT_OP_RESHAPE:
      a->shape = r->shape;
      break;
    case POOT_OP_DYNAMIC_SLICE:
      a->num_dims = r->shape.rank;
      for (uint32_t i = 0; i < r->shape.rank && i < POOT_MAX_RANK; i++)
        a->dims[i] = r->shape.dims[i];
      break;
    default:
      break;
  }
}

/* ------------------------------------------------------------ type rules */

/* What a type rule reads and writes: the operands (already checked against
 * the op's arity and each a well-formed type) and attributes, and up to two
 * result types with their count (one unless the rule says otherwise). */
typedef struct op_query {
  poot_op op;
  uint32_t n;
  const poot_type *const *in;
  const poot_attrs *a;
  poot_type *out;
  uint32_t num_results;
} op_query;

typedef poot_status (*op_rule)(op_query *q);

static poot_status rule_arith(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_same_types(2, q->in));
  POOT_TRY(need_dtype(x, is_num(x->dtype), 0, "an integer or float dtype"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_bitwise(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_same_types(2, q->in));
  POOT_TRY(need_dtype(x, poot_dtype_is_int(x->dtype) || x->dtype == POOT_DTYPE_BOOL, 0,
                      "an integer or bool dtype"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_shift(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_same_types(2, q->in));
  POOT_TRY(need_dtype(x, poot_dtype_is_int(x->dtype), 0, "an integer dtype"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_num_unary(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, is_num(x->dtype), 0, "an integer or float dtype"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_not(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, poot_dtype_is_int(x->dtype) || x->dtype == POOT_DTYPE_BOOL, 0,
                      "an integer or bool dtype"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_math(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, poot_dtype_is_float(x->dtype), 0, "a float dtype (f32, f16, bf16)"));
  q->out[0] = *x;
  return NULL;
}

static poot_status rule_compare(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_same_types(2, q->in));
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  q->out[0].dtype = POOT_DTYPE_BOOL;
  q->out[0].shape = x->shape;
  return NULL;
}

static poot_status rule_select(op_query *q) {
  const poot_type *const *in = q->in;
  POOT_TRY(need_dtype(in[0], in[0]->dtype == POOT_DTYPE_BOOL, 0, "bool"));
  POOT_TRY(need_same_types(2, in + 1));
  POOT_TRY(need_dtype(in[1], is_plain(in[1]->dtype), 1, "a non-packed dtype"));
  if (!poot_shape_equal(&in[0]->shape, &in[1]->shape)) {
    char p[160], t[160];
    type_str(p, sizeof p, in[0]);
    type_str(t, sizeof t, in[1]);
    return BAD("same shapes: predicate %s does not match %s", p, t);
  }
  q->out[0] = *in[1];
  return NULL;
}

/* Convert and bitcast both take a non-packed operand to a non-packed dtype. */
static poot_status need_plain_cast(const op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  if (!is_plain(q->a->dtype))
    return BAD("bad attribute: dtype %s must be a non-packed dtype", poot_dtype_name(q->a->dtype));
  return NULL;
}

static poot_status rule_convert(op_query *q) {
  POOT_TRY(need_plain_cast(q));
  q->out[0].dtype = q->a->dtype;
  q->out[0].shape = q->in[0]->shape;
  return NULL;
}

static poot_status rule_bitcast(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  POOT_TRY(need_plain_cast(q));
  if (x->dtype == POOT_DTYPE_BOOL || a->dtype == POOT_DTYPE_BOOL)
    return BAD("bad attribute: bitcast cannot involve bool");
  if (poot_dtype_info_of(x->dtype)->bits != poot_dtype_info_of(a->dtype)->bits)
    return BAD("bad attribute: bitcast from %s to %s changes the element size",
               poot_dtype_name(x->dtype), poot_dtype_name(a->dtype));
  q->out[0].dtype = a->dtype;
  q->out[0].shape = x->shape;
  return NULL;
}

static poot_status rule_dequantize(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, poot_dtype_is_packed(x->dtype), 0, "a packed dtype"));
  if (!poot_dtype_is_float(q->a->dtype))
    return BAD("bad attribute: dequantize dtype %s must be f32, f16 or bf16",
               poot_dtype_name(q->a->dtype));
  q->out[0].dtype = q->a->dtype;
  q->out[0].shape = x->shape;
  return NULL;
}

/* quantize(x: f32) {dtype: q8_0}: whole blocks along the last dim. */
static poot_status rule_quantize(op_query *q) {
  const poot_type *x = q->in[0];
  POOT_TRY(need_dtype(x, x->dtype == POOT_DTYPE_F32, 0, "f32"));
  if (q->a->dtype != POOT_DTYPE_Q8_0)
    return BAD("bad attribute: quantize dtype %s must be q8_0", poot_dtype_name(q->a->dtype));
  int64_t be = poot_dtype_info_of(q->a->dtype)->block_elems;
  if (x->shape.rank == 0 || x->shape.dims[x->shape.rank - 1] % be)
    return BAD("shape mismatch: quantize to %s needs a last dim that is a multiple of %lld",
               poot_dtype_name(q->a->dtype), (long long)be);
  q->out[0].dtype = q->a->dtype;
  q->out[0].shape = x->shape;
  return NULL;
}

static poot_status rule_iota(op_query *q) {
  const poot_attrs *a = q->a;
  if (!is_num(a->dtype))
    return BAD("bad attribute: iota dtype %s must be an integer or float dtype",
               poot_dtype_name(a->dtype));
  POOT_TRY(check_shape(&a->shape, "shape"));
  if (a->shape.rank == 0) return BAD("bad attribute: iota needs rank >= 1");
  if (a->axis < 0 || a->axis >= (int64_t)a->shape.rank)
    return BAD("bad attribute: axis %lld is outside [0, %u)", (long long)a->axis, a->shape.rank);
  q->out[0].dtype = a->dtype;
  q->out[0].shape = a->shape;
  return NULL;
}

static poot_status rule_rng(op_query *q) {
  const poot_attrs *a = q->a;
  for (uint32_t i = 0; i < 2; i++) {
    const poot_type *t = q->in[i];
    if (t->dtype != POOT_DTYPE_U32 || t->shape.rank != 1 || t->shape.dims[0] != 2)
      return BAD("operand type: rng %s must be u32[2]", i ? "counter" : "key");
  }
  if (a->rng_dist == POOT_RNG_BITS) {
    if (a->dtype != POOT_DTYPE_U32) return BAD("bad attribute: rng bits needs dtype u32");
  } else if (a->rng_dist == POOT_RNG_UNIFORM) {
    if (!poot_dtype_is_float(a->dtype))
      return BAD("bad attribute: rng uniform needs a float dtype");
  } else {
    return BAD("bad attribute: rng dist %d is not bits or uniform", (int)a->rng_dist);
  }
  POOT_TRY(check_shape(&a->shape, "shape"));
  q->out[0].dtype = a->dtype;
  q->out[0].shape = a->shape;
  return NULL;
}

static poot_status rule_broadcast(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  POOT_TRY(check_shape(&a->shape, "shape"));
  if (a->num_dims != x->shape.rank)
    return BAD("bad attribute: dims has %u entries, operand rank is %u", a->num_dims,
               x->shape.rank);
  for (uint32_t i = 0; i < a->num_dims; i++) {
    int64_t d = a->dims[i];
    if (d < 0 || d >= (int64_t)a->shape.rank)
      return BAD("bad attribute: dims[%u] = %lld is outside [0, %u)", i, (long long)d,
                 a->shape.rank);
    if (i > 0 && d <= a->dims[i - 1]) return BAD("bad attribute: dims must be strictly increasing");
    if (x->shape.dims[i] != 1 && x->shape.dims[i] != a->shape.dims[d])
      return BAD("shape mismatch: operand dim %u (%lld) is neither 1 nor result dim %lld (%lld)", i,
                 (long long)x->shape.dims[i], (long long)d, (long long)a->shape.dims[d]);
  }
  q->out[0].dtype = x->dtype;
  q->out[0].shape = a->shape;
  return NULL;
}

static poot_status rule_reshape(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  POOT_TRY(check_shape(&a->shape, "shape"));
  POOT_TRY(need_whole_blocks(
      x, x->shape.rank > 0 && a->shape.rank > 0 &&
             x->shape.dims[x->shape.rank - 1] == a->shape.dims[a->shape.rank - 1]));
  int64_t n0 = 0, n1 = 0;
  POOT_TRY(poot_shape_elements(&x->shape, &n0));
  POOT_TRY(poot_shape_elements(&a->shape, &n1));
  if (n0 != n1)
    return BAD("shape mismatch: reshape of %lld elements to %lld elements", (long long)n0,
               (long long)n1);
  q->out[0].dtype = x->dtype;
  q->out[0].shape = a->shape;
  return NULL;
}

static poot_status rule_transpose(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  if (a->num_dims != x->shape.rank)
    return BAD("bad attribute: dims has %u entries, operand rank is %u", a->num_dims,
               x->shape.rank);
  POOT_TRY(check_dim_list("dims", a->num_dims, a->dims, x->shape.rank, true));
  out->dtype = x->dtype;
  out->shape.rank = x->shape.rank;
  for (uint32_t i = 0; i < x->shape.rank; i++) out->shape.dims[i] = x->shape.dims[a->dims[i]];
  return NULL;
}

static poot_status rule_slice(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  if (a->num_dims != x->shape.rank)
    return BAD("bad attribute: start/limit/stride have %u entries, operand rank is %u", a->num_dims,
               x->shape.rank);
  uint32_t lr = x->shape.rank - 1;
  POOT_TRY(need_whole_blocks(x, x->shape.rank > 0 && a->start[lr] == 0 &&
                                    a->limit[lr] == x->shape.dims[lr] && a->stride[lr] == 1));
  out->dtype = x->dtype;
  out->shape.rank = x->shape.rank;
  for (uint32_t i = 0; i < x->shape.rank; i++) {
    int64_t s = a->start[i], l = a->limit[i], st = a->stride[i];
    if (s < 0 || s > l || l > x->shape.dims[i] || st < 1)
      return BAD(
          "bad attribute: dim %u needs 0 <= start (%lld) <= limit (%lld) <= %lld and "
          "stride (%lld) >= 1",
          i, (long long)s, (long long)l, (long long)x->shape.dims[i], (long long)st);
    out->shape.dims[i] = (l - s + st - 1) / st;
  }
  return NULL;
}

/* The dynamic slices take one integer scalar start operand per dim of the
 * operand, from operand `first` on, all of one dtype. The result starts as
 * the operand's type. */
static poot_status need_start_operands(op_query *q, uint32_t first) {
  const poot_type *x = q->in[0];
  const poot_type *const *in = q->in;
  uint32_t n = q->n;
  if (n != first + x->shape.rank)
    return BAD("arity: %s of a rank-%u operand takes %u operands, got %u", poot_op_name(q->op),
               x->shape.rank, first + x->shape.rank, n);
  for (uint32_t i = first; i < n; i++) {
    if (in[i]->shape.rank != 0 || !poot_dtype_is_int(in[i]->dtype))
      return BAD("operand dtype: start operand %u must be an integer scalar", i);
    if (in[i]->dtype != in[first]->dtype)
      return BAD("same operand types: start operands must share one dtype");
  }
  q->out[0].dtype = x->dtype;
  q->out[0].shape = x->shape;
  return NULL;
}

static poot_status rule_dynamic_slice(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  POOT_TRY(need_start_operands(q, 1));
  if (a->num_dims != x->shape.rank)
    return BAD("bad attribute: sizes has %u entries, operand rank is %u", a->num_dims,
               x->shape.rank);
  for (uint32_t i = 0; i < x->shape.rank; i++) {
    if (a->dims[i] < 0 || a->dims[i] > x->shape.dims[i])
      return BAD("bad attribute: sizes[%u] = %lld is outside [0, %lld]", i, (long long)a->dims[i],
                 (long long)x->shape.dims[i]);
    q->out[0].shape.dims[i] = a->dims[i];
  }
  uint32_t lr = x->shape.rank - 1;
  return need_whole_blocks(x, x->shape.rank > 0 && a->dims[lr] == x->shape.dims[lr]);
}

static poot_status rule_dynamic_update_slice(op_query *q) {
  const poot_type *x = q->in[0], *u = q->in[1];
  POOT_TRY(need_start_operands(q, 2));
  if (u->dtype != x->dtype || u->shape.rank != x->shape.rank)
    return BAD("type mismatch: update must have the operand's dtype and rank");
  for (uint32_t i = 0; i < x->shape.rank; i++)
    if (u->shape.dims[i] > x->shape.dims[i])
      return BAD("shape mismatch: update dim %u (%lld) exceeds operand dim (%lld)", i,
                 (long long)u->shape.dims[i], (long long)x->shape.dims[i]);
  uint32_t lr = x->shape.rank - 1;
  return need_whole_blocks(x, x->shape.rank > 0 && u->shape.dims[lr] == x->shape.dims[lr]);
}

static poot_status rule_concat(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_type *const *in = q->in;
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  if (x->shape.rank == 0) return BAD("operand rank: concat needs rank >= 1");
  if (a->axis < 0 || a->axis >= (int64_t)x->shape.rank)
    return BAD("bad attribute: axis %lld is outside [0, %u)", (long long)a->axis, x->shape.rank);
  *out = *x;
  for (uint32_t i = 1; i < q->n; i++) {
    if (in[i]->dtype != x->dtype || in[i]->shape.rank != x->shape.rank)
      return BAD("type mismatch: operand %u must have operand 0's dtype and rank", i);
    for (uint32_t d = 0; d < x->shape.rank; d++)
      if ((int64_t)d != a->axis && in[i]->shape.dims[d] != x->shape.dims[d])
        return BAD("shape mismatch: operand %u dim %u is %lld, operand 0 has %lld", i, d,
                   (long long)in[i]->shape.dims[d], (long long)x->shape.dims[d]);
    if (__builtin_add_overflow(out->shape.dims[a->axis], in[i]->shape.dims[a->axis],
                               &out->shape.dims[a->axis]))
      return BAD("shape mismatch: concat size overflows");
  }
  return NULL;
}

static poot_status rule_pad(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(x, is_plain(x->dtype), 0, "a non-packed dtype"));
  if (a->num_dims != x->shape.rank)
    return BAD("bad attribute: low/high/interior have %u entries, operand rank is %u", a->num_dims,
               x->shape.rank);
  if (q->in[1]->dtype != x->dtype || q->in[1]->shape.rank != 0)
    return BAD("type mismatch: the pad value must be a %s scalar", poot_dtype_name(x->dtype));
  out->dtype = x->dtype;
  out->shape.rank = x->shape.rank;
  for (uint32_t i = 0; i < x->shape.rank; i++) {
    int64_t lo = a->low[i], hi = a->high[i], in_ = a->interior[i], s = x->shape.dims[i];
    if (lo < 0 || hi < 0 || in_ < 0 || lo > INT32_MAX || hi > INT32_MAX || in_ > INT32_MAX)
      return BAD("bad attribute: dim %u needs 0 <= low, high, interior < 2^31", i);
    int64_t r = lo + hi + s + (s > 0 ? (s - 1) * in_ : 0);
    out->shape.dims[i] = r;
  }
  POOT_TRY(check_shape(&out->shape, "padded shape"));
  return NULL;
}

static poot_status rule_gather(op_query *q) {
  const poot_type *t = q->in[0], *idx = q->in[1];
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(idx, poot_dtype_is_int(idx->dtype), 1, "an integer dtype"));
  int64_t b = a->batch_dims, ax = a->axis;
  POOT_TRY(need_whole_blocks(t, ax + 1 < (int64_t)t->shape.rank));
  if (t->shape.rank == 0) return BAD("operand rank: gather needs a table of rank >= 1");
  if (b < 0 || b > ax || ax >= (int64_t)t->shape.rank || b > (int64_t)idx->shape.rank)
    return BAD(
        "bad attribute: needs 0 <= batch_dims (%lld) <= axis (%lld) < %u and "
        "batch_dims <= indices rank %u",
        (long long)b, (long long)ax, t->shape.rank, idx->shape.rank);
  for (int64_t i = 0; i < b; i++)
    if (idx->shape.dims[i] != t->shape.dims[i])
      return BAD("shape mismatch: batch dim %lld of indices (%lld) and table (%lld) differ",
                 (long long)i, (long long)idx->shape.dims[i], (long long)t->shape.dims[i]);
  uint32_t r = (uint32_t)ax + (idx->shape.rank - (uint32_t)b) + (t->shape.rank - (uint32_t)ax - 1);
  if (r > POOT_MAX_RANK) return BAD("shape mismatch: result rank %u exceeds %d", r, POOT_MAX_RANK);
  out->dtype = t->dtype;
  out->shape.rank = r;
  uint32_t k = 0;
  for (int64_t i = 0; i < ax; i++) out->shape.dims[k++] = t->shape.dims[i];
  for (uint32_t i = (uint32_t)b; i < idx->shape.rank; i++)
    out->shape.dims[k++] = idx->shape.dims[i];
  for (uint32_t i = (uint32_t)ax + 1; i < t->shape.rank; i++)
    out->shape.dims[k++] = t->shape.dims[i];
  return NULL;
}

static poot_status rule_scatter_update(op_query *q) {
  const poot_type *t = q->in[0], *idx = q->in[1], *u = q->in[2];
  POOT_TRY(need_dtype(idx, poot_dtype_is_int(idx->dtype), 1, "an integer dtype"));
  if (t->shape.rank == 0) return BAD("operand rank: scatter_update needs a target of rank >= 1");
  int64_t ax = q->a->axis;
  POOT_TRY(need_whole_blocks(t, ax + 1 < (int64_t)t->shape.rank));
  if (ax < 0 || ax >= (int64_t)t->shape.rank)
    return BAD("bad attribute: axis %lld is outside [0, %u)", (long long)ax, t->shape.rank);
  poot_shape want;
  memset(&want, 0, sizeof want);
  uint32_t r = t->shape.rank - 1 + idx->shape.rank;
  if (r > POOT_MAX_RANK) return BAD("shape mismatch: updates rank %u exceeds %d", r, POOT_MAX_RANK);
  uint32_t k = 0;
  for (int64_t i = 0; i < ax; i++) want.dims[k++] = t->shape.dims[i];
  for (uint32_t i = 0; i < idx->shape.rank; i++) want.dims[k++] = idx->shape.dims[i];
  for (uint32_t i = (uint32_t)ax + 1; i < t->shape.rank; i++) want.dims[k++] = t->shape.dims[i];
  want.rank = r;
  if (u->dtype != t->dtype || !poot_shape_equal(&u->shape, &want)) {
    poot_type wt = {t->dtype, want};
    char w[160], g[160];
    type_str(w, sizeof w, &wt);
    type_str(g, sizeof g, u);
    return BAD("type mismatch: updates are %s, expected %s", g, w);
  }
  q->out[0] = *t;
  return NULL;
}

/* The reduce kind decides which accumulation dtypes are allowed. */
static poot_status need_reduce_kind(const poot_type *x, const poot_attrs *a) {
  if (a->reduce_kind == POOT_REDUCE_ARGMAX) {
    if (a->num_dims != 1) return BAD("bad attribute: argmax reduces exactly one dim");
    if (x->shape.dims[a->dims[0]] < 1) return BAD("bad attribute: argmax over an empty dim");
    if (a->dtype != POOT_DTYPE_I32)
      return BAD("bad attribute: argmax dtype must be i32, got %s", poot_dtype_name(a->dtype));
  } else if (a->reduce_kind == POOT_REDUCE_SUM || a->reduce_kind == POOT_REDUCE_MAX ||
             a->reduce_kind == POOT_REDUCE_MIN) {
    if (!is_num(a->dtype))
      return BAD("bad attribute: accumulation dtype %s must be an integer or float dtype",
                 poot_dtype_name(a->dtype));
  } else {
    return BAD("bad attribute: reduce kind %d is not sum, max, min or argmax", (int)a->reduce_kind);
  }
  return NULL;
}

static poot_status rule_reduce(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(x, is_num(x->dtype), 0, "an integer or float dtype"));
  if (a->num_dims > x->shape.rank)
    return BAD("bad attribute: %u reduce dims for rank %u", a->num_dims, x->shape.rank);
  POOT_TRY(check_dim_list("dims", a->num_dims, a->dims, x->shape.rank, true));
  POOT_TRY(need_reduce_kind(x, a));
  out->dtype = a->dtype;
  out->shape.rank = 0;
  for (uint32_t i = 0; i < x->shape.rank; i++) {
    bool reduced = false;
    for (uint32_t j = 0; j < a->num_dims; j++) reduced |= a->dims[j] == (int64_t)i;
    if (!reduced) out->shape.dims[out->shape.rank++] = x->shape.dims[i];
  }
  return NULL;
}

static poot_status rule_cumsum(op_query *q) {
  const poot_type *x = q->in[0];
  const poot_attrs *a = q->a;
  POOT_TRY(need_dtype(x, is_num(x->dtype), 0, "an integer or float dtype"));
  if (x->shape.rank == 0) return BAD("operand rank: cumsum needs rank >= 1");
  if (a->axis < 0 || a->axis >= (int64_t)x->shape.rank)
    return BAD("bad attribute: axis %lld is outside [0, %u)", (long long)a->axis, x->shape.rank);
  if (!is_num(a->dtype))
    return BAD("bad attribute: accumulation dtype %s must be an integer or float dtype",
               poot_dtype_name(a->dtype));
  q->out[0].dtype = a->dtype;
  q->out[0].shape = x->shape;
  return NULL;
}

static poot_status rule_top_k(op_query *q) {
  const poot_type *x = q->in[0];
  poot_type *out = q->out;
  POOT_TRY(need_dtype(x, is_num(x->dtype), 0, "an integer or float dtype"));
  if (x->shape.rank == 0) return BAD("operand rank: top_k needs rank >= 1");
  int64_t last = x->shape.dims[x->shape.rank - 1];
  if (q->a->k < 0 || q->a->k > last)
    return BAD("bad attribute: k = %lld is outside [0, %lld]", (long long)q->a->k, (long long)last);
  out[0] = *x;
  out[0].shape.dims[x->shape.rank - 1] = q->a->k;
  out[1] = out[0];
  out[1].dtype = POOT_DTYPE_I32;
  q->num_results = 2;
  return NULL;
}

/* Checks the batch and contracting dims of a dot_general and lists them, lhs
 * dims in `ll`, the matching rhs dims in `rl`, batch dims first. */
static poot_status dot_dim_lists(const poot_type *l, const poot_type *r, const poot_dot_dims *d,
                                 int64_t *ll, int64_t *rl, uint32_t *out_nl) {
  if (d->num_batch > POOT_MAX_RANK || d->num_contract > POOT_MAX_RANK)
    return BAD("bad attribute: too many batch or contracting dims");
  uint32_t nl = 0;
  for (uint32_t i = 0; i < d->num_batch; i++, nl++) {
    ll[nl] = d->lhs_batch[i];
    rl[nl] = d->rhs_batch[i];
  }
  for (uint32_t i = 0; i < d->num_contract; i++, nl++) {
    ll[nl] = d->lhs_contract[i];
    rl[nl] = d->rhs_contract[i];
  }
  *out_nl = nl;
  if (nl > l->shape.rank || nl > r->shape.rank)
    return BAD("bad attribute: more batch and contracting dims than the operand rank");
  POOT_TRY(check_dim_list("lhs batch/contracting dims", nl, ll, l->shape.rank, true));
  POOT_TRY(check_dim_list("rhs batch/contracting dims", nl, rl, r->shape.rank, true));
  for (uint32_t i = 0; i < nl; i++)
    if (l->shape.dims[ll[i]] != r->shape.dims[rl[i]])
      return BAD("shape mismatch: lhs dim %lld (%lld) and rhs dim %lld (%lld) differ",
                 (long long)ll[i], (long long)l->shape.dims[ll[i]], (long long)rl[i],
                 (long long)r->shape.dims[rl[i]]);
  return NULL;
}

static poot_status rule_dot_general(op_query *q) {
  const poot_type *l = q->in[0], *r = q->in[1];
  const poot_dot_dims *d = &q->a->dot;
  poot_type *out = q->out;
  POOT_TRY(need_dtype(l, is_num(l->dtype), 0, "an integer or float dtype"));
  if (l->dtype != r->dtype)
    return BAD("same operand dtypes: lhs is %s, rhs is %s", poot_dtype_name(l->dtype),
               poot_dtype_name(r->dtype));
  if (!is_num(q->a->dtype))
    return BAD("bad attribute: accumulation dtype %s must be an integer or float dtype",
               poot_dtype_name(q->a->dtype));
  int64_t ll[2 * POOT_MAX_RANK], rl[2 * POOT_MAX_RANK];
  uint32_t nl = 0;
  POOT_TRY(dot_dim_lists(l, r, d, ll, rl, &nl));
  uint32_t rank = d->num_batch + (l->shape.rank - nl) + (r->shape.rank - nl);
  if (rank > POOT_MAX_RANK)
    return BAD("shape mismatch: result rank %u exceeds %d", rank, POOT_MAX_RANK);
  out->dtype = q->a->dtype;
  out->shape.rank = 0;
  for (uint32_t i = 0; i < d->num_batch; i++)
    out->shape.dims[out->shape.rank++] = l->shape.dims[d->lhs_batch[i]];
  for (uint32_t side = 0; side < 2; side++) {
    const poot_type *t = side ? r : l;
    const int64_t *used = side ? rl : ll;
    for (uint32_t i = 0; i < t->shape.rank; i++) {
      bool u = false;
      for (uint32_t j = 0; j < nl; j++) u |= used[j] == (int64_t)i;
      if (!u) out->shape.dims[out->shape.rank++] = t->shape.dims[i];
    }
  }
  return NULL;
}

/* --------------------------------------------------------------- op table */

/* One row per op, built from POOT_GRAPH_OPS: everything the graph layer
 * knows about an op by its enum value. */
typedef struct op_row {
  const char *name;
  int32_t lo, hi;
  poot_op_class cls;
  op_rule rule; /* NULL for a leaf and a composite */
  bool trap;
} op_row;

static const op_row op_rows[POOT_OP_COUNT] = {
    [POOT_OP_LEAF] = {"leaf", 0, 0, POOT_OP_CLASS_NONE, NULL, false},
#define X(ID, name, lo, hi, cls, rule, ref, trap) \
  [POOT_OP_##ID] = {#name, lo, hi, POOT_OP_CLASS_##cls, rule_##rule, trap},
    POOT_GRAPH_OPS(X)
#undef X
        [POOT_OP_COMPOSITE] = {"composite", 0, -1, POOT_OP_CLASS_NONE, NULL, false},
};

const char *poot_op_name(poot_op op) {
  if ((unsigned)op >= POOT_OP_COUNT) return "?";
  return op_rows[op].name;
}

bool poot_op_from_name(const char *name, size_t len, poot_op *out_op) {
  *out_op = POOT_OP_LEAF;
  for (int i = 0; i < POOT_OP_COUNT; i++) {
    if (strlen(op_rows[i].name) == len && memcmp(op_rows[i].name, name, len) == 0) {
      *out_op = (poot_op)i;
      return true;
    }
  }
  return false;
}

void poot_op_arity(poot_op op, int32_t *out_min, int32_t *out_max) {
  if ((unsigned)op >= POOT_OP_COUNT) {
    *out_min = 0;
    *out_max = 0;
    return;
  }
  *out_min = op_rows[op].lo;
  *out_max = op_rows[op].hi;
}

poot_op_class poot_op_class_of(poot_op op) {
  if ((unsigned)op >= POOT_OP_COUNT) return POOT_OP_CLASS_NONE;
  return op_rows[op].cls;
}

bool poot__op_has_check(poot_op op) {
  return (unsigned)op < POOT_OP_COUNT && op_rows[op].trap;
}

/* -------------------------------------------------------------- inference */

poot_status poot__op_infer(poot_op op, uint32_t n, const poot_type *const *in, const poot_attrs *a,
                           poot_trap trap, poot_type *out, uint32_t *out_n) {
  memset(out, 0, 2 * sizeof *out);
  *out_n = 0;
  if ((unsigned)op >= POOT_OP_COUNT || op == POOT_OP_LEAF || op == POOT_OP_COMPOSITE)
    return BAD("unknown op: %d is not a core op", (int)op);
  int32_t lo = 0, hi = 0;
  poot_op_arity(op, &lo, &hi);
  if ((int64_t)n < lo || (hi >= 0 && (int64_t)n > hi)) {
    if (hi < 0) return BAD("arity: takes at least %d operands, got %u", lo, n);
    if (lo == hi) return BAD("arity: takes %d operands, got %u", lo, n);
    return BAD("arity: takes %d to %d operands, got %u", lo, hi, n);
  }
  if ((unsigned)trap >= POOT_TRAP_COUNT) return BAD("bad check: trap code %d", (int)trap);
  if (trap != POOT_TRAP_NONE && !poot__op_has_check(op))
    return BAD("bad check: %s cannot carry a check", poot_op_name(op));
  for (uint32_t i = 0; i < n; i++) POOT_TRY(poot__check_type(in[i], "operand type"));
  op_query q = {op, n, in, a, out, 1};
  *out_n = 1;
  POOT_TRY(op_rows[op].rule(&q));
  *out_n = q.num_results;
  for (uint32_t i = 0; i < *out_n; i++) POOT_TRY(poot__check_type(&out[i], "result type"));
  return NULL;
}
