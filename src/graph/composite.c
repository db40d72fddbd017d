/* composite.c — the composites poot builds and their decompositions into
 * core ops (poot/graph.h, docs/graph.md). Each builder opens a body, builds
 * it from the body's params, and closes it; on any failure the open body is
 * dropped and the graph is left as it was. */
#include <math.h>
#include <string.h>

#include "graph_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

static const poot_type *vtype(poot_graph *g, poot_value v) {
  return poot_graph_value_type(g, v);
}

static poot_status need_value(poot_graph *g, poot_value v, const char *call, const char *what) {
  if (!g) return BAD("%s: NULL graph", call);
  if (!vtype(g, v)) return BAD("%s: %s %%%u is not a value of this graph", call, what, (unsigned)v);
  return NULL;
}

/* A scalar float constant broadcast to `shape`. */
static poot_status splat(poot_graph *g, poot_dtype dt, double value, const poot_shape *shape,
                         poot_value *out) {
  poot_value c = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_const_f32(g, dt, value, &c));
  if (shape->rank == 0) {
    *out = c;
    return NULL;
  }
  return poot_graph_broadcast(g, c, shape, NULL, out);
}

static poot_status conv(poot_graph *g, poot_value x, poot_dtype dt, poot_value *out) {
  if (vtype(g, x)->dtype == dt) {
    *out = x;
    return NULL;
  }
  return poot_graph_convert(g, x, dt, out);
}

static poot_status bin(poot_graph *g, poot_op op, poot_value a, poot_value b, poot_value *out) {
  return poot_graph_binary(g, op, a, b, out);
}

/* Broadcasts x (rank r) to `shape` keeping its dims at positions dims[]. */
static poot_status expand(poot_graph *g, poot_value x, const poot_shape *shape,
                          const int64_t *dims, poot_value *out) {
  return poot_graph_broadcast(g, x, shape, dims, out);
}

/* Reduces the last dim (sum, f32) and broadcasts the result back to x's shape. */
static poot_status row_sum_back(poot_graph *g, poot_value x, poot_value *out) {
  const poot_type *t = vtype(g, x);
  poot_shape shape = t->shape;
  int64_t last = (int64_t)shape.rank - 1;
  poot_value s = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_reduce(g, x, POOT_REDUCE_SUM, 1, &last, POOT_DTYPE_F32, &s));
  int64_t dims[POOT_MAX_RANK];
  for (int64_t i = 0; i < last; i++) dims[i] = i;
  return expand(g, s, &shape, dims, out);
}

static poot_status finish(poot_graph *g, poot_status st, poot_value result, poot_value *out) {
  if (!st) st = poot_graph_composite_end(g, 1, &result, out);
  if (st) poot_graph_composite_abort(g);
  return st;
}

/* ---------------------------------------------------------------- norms */

static poot_status check_norm_args(poot_graph *g, const char *call, poot_value x, poot_value w,
                                   poot_value b) {
  POOT_TRY(need_value(g, x, call, "x"));
  const poot_type *t = vtype(g, x);
  if (!poot_dtype_is_float(t->dtype) || t->shape.rank == 0)
    return BAD("%s: x must be a float tensor of rank >= 1", call);
  int64_t n = t->shape.dims[t->shape.rank - 1];
  poot_value wb[2] = {w, b};
  for (int i = 0; i < 2; i++) {
    if (wb[i] == POOT_VALUE_NONE) continue;
    POOT_TRY(need_value(g, wb[i], call, i ? "b" : "w"));
    const poot_type *wt = vtype(g, wb[i]);
    if (!poot_dtype_is_float(wt->dtype) || wt->shape.rank != 1 || wt->shape.dims[0] != n)
      return BAD("%s: %s must be a float vector of %lld elements", call, i ? "b" : "w",
                 (long long)n);
  }
  return NULL;
}

/* y = y * w (w broadcast along the last dim), in f32. */
static poot_status scale_by(poot_graph *g, poot_value y, poot_value w, bool add, poot_value *out) {
  const poot_type *t = vtype(g, y);
  poot_shape shape = t->shape;
  int64_t last = (int64_t)shape.rank - 1;
  poot_value wf = POOT_VALUE_NONE, wb = POOT_VALUE_NONE;
  POOT_TRY(conv(g, w, POOT_DTYPE_F32, &wf));
  POOT_TRY(expand(g, wf, &shape, &last, &wb));
  return bin(g, add ? POOT_OP_ADD : POOT_OP_MUL, y, wb, out);
}

static poot_status rms_body(poot_graph *g, const poot_value *p, bool has_w, double eps,
                            poot_value *out) {
  poot_value x = p[0];
  const poot_type *t = vtype(g, x);
  poot_dtype dt = t->dtype;
  poot_shape shape = t->shape;
  double n = (double)shape.dims[shape.rank - 1];
  poot_value xf, sq, s, nb, mean, eb, me, r, y;
  POOT_TRY(conv(g, x, POOT_DTYPE_F32, &xf));
  POOT_TRY(bin(g, POOT_OP_MUL, xf, xf, &sq));
  POOT_TRY(row_sum_back(g, sq, &s));
  POOT_TRY(splat(g, POOT_DTYPE_F32, n, &shape, &nb));
  POOT_TRY(bin(g, POOT_OP_DIV, s, nb, &mean));
  POOT_TRY(splat(g, POOT_DTYPE_F32, eps, &shape, &eb));
  POOT_TRY(bin(g, POOT_OP_ADD, mean, eb, &me));
  POOT_TRY(poot_graph_unary(g, POOT_OP_RSQRT, me, &r));
  POOT_TRY(bin(g, POOT_OP_MUL, xf, r, &y));
  if (has_w) POOT_TRY(scale_by(g, y, p[1], false, &y));
  return conv(g, y, dt, out);
}

poot_status poot_graph_rms_norm(poot_graph *g, poot_value x, poot_value w, double eps,
                                poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(check_norm_args(g, "poot_graph_rms_norm", x, w, POOT_VALUE_NONE));
  poot_composite_attr a = {.key = "eps", .kind = POOT_CATTR_FLOAT, .f = eps};
  poot_value ops[2] = {x, w}, p[2];
  bool has_w = w != POOT_VALUE_NONE;
  POOT_TRY(poot_graph_composite_begin(g, "poot.rms_norm", 1, &a, has_w ? 2 : 1, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = rms_body(g, p, has_w, eps, &y);
  return finish(g, st, y, out);
}

static poot_status layer_body(poot_graph *g, const poot_value *p, bool has_w, bool has_b,
                              double eps, poot_value *out) {
  poot_value x = p[0];
  const poot_type *t = vtype(g, x);
  poot_dtype dt = t->dtype;
  poot_shape shape = t->shape;
  double n = (double)shape.dims[shape.rank - 1];
  poot_value xf, s, nb, mean, d, sq, vs, var, eb, ve, r, y;
  POOT_TRY(conv(g, x, POOT_DTYPE_F32, &xf));
  POOT_TRY(row_sum_back(g, xf, &s));
  POOT_TRY(splat(g, POOT_DTYPE_F32, n, &shape, &nb));
  POOT_TRY(bin(g, POOT_OP_DIV, s, nb, &mean));
  POOT_TRY(bin(g, POOT_OP_SUB, xf, mean, &d));
  POOT_TRY(bin(g, POOT_OP_MUL, d, d, &sq));
  POOT_TRY(row_sum_back(g, sq, &vs));
  POOT_TRY(bin(g, POOT_OP_DIV, vs, nb, &var));
  POOT_TRY(splat(g, POOT_DTYPE_F32, eps, &shape, &eb));
  POOT_TRY(bin(g, POOT_OP_ADD, var, eb, &ve));
  POOT_TRY(poot_graph_unary(g, POOT_OP_RSQRT, ve, &r));
  POOT_TRY(bin(g, POOT_OP_MUL, d, r, &y));
  uint32_t k = 1;
  if (has_w) POOT_TRY(scale_by(g, y, p[k++], false, &y));
  if (has_b) POOT_TRY(scale_by(g, y, p[k++], true, &y));
  return conv(g, y, dt, out);
}

poot_status poot_graph_layer_norm(poot_graph *g, poot_value x, poot_value w, poot_value b,
                                  double eps, poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(check_norm_args(g, "poot_graph_layer_norm", x, w, b));
  poot_composite_attr a = {.key = "eps", .kind = POOT_CATTR_FLOAT, .f = eps};
  poot_value ops[3], p[3];
  uint32_t n = 0;
  ops[n++] = x;
  if (w != POOT_VALUE_NONE) ops[n++] = w;
  if (b != POOT_VALUE_NONE) ops[n++] = b;
  POOT_TRY(poot_graph_composite_begin(g, "poot.layer_norm", 1, &a, n, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = layer_body(g, p, w != POOT_VALUE_NONE, b != POOT_VALUE_NONE, eps, &y);
  return finish(g, st, y, out);
}

/* ----------------------------------------------------------------- rope */

static poot_status slice_last(poot_graph *g, poot_value x, int64_t lo, int64_t hi,
                              poot_value *out) {
  const poot_type *t = vtype(g, x);
  int64_t start[POOT_MAX_RANK] = {0}, limit[POOT_MAX_RANK];
  for (uint32_t i = 0; i < t->shape.rank; i++) limit[i] = t->shape.dims[i];
  start[t->shape.rank - 1] = lo;
  limit[t->shape.rank - 1] = hi;
  return poot_graph_slice(g, x, start, limit, NULL, out);
}

/* o1 = x1*c - x2*s ; o2 = x2*c + x1*s */
static poot_status rotate(poot_graph *g, poot_value x1, poot_value x2, poot_value c, poot_value s,
                          poot_value *o1, poot_value *o2) {
  poot_value a, b, d, e;
  POOT_TRY(bin(g, POOT_OP_MUL, x1, c, &a));
  POOT_TRY(bin(g, POOT_OP_MUL, x2, s, &b));
  POOT_TRY(bin(g, POOT_OP_SUB, a, b, o1));
  POOT_TRY(bin(g, POOT_OP_MUL, x2, c, &d));
  POOT_TRY(bin(g, POOT_OP_MUL, x1, s, &e));
  return bin(g, POOT_OP_ADD, d, e, o2);
}

static poot_status rope_body(poot_graph *g, const poot_value *p, double theta, int64_t dims,
                             poot_rope_mode mode, poot_value *out) {
  poot_value x = p[0], pos = p[1];
  const poot_type *t = vtype(g, x);
  poot_dtype dt = t->dtype;
  int64_t T = t->shape.dims[0], H = t->shape.dims[1], D = t->shape.dims[2], half = dims / 2;
  poot_type it = poot_type_make(POOT_DTYPE_F32, 1, &half);
  poot_shape hs = poot_shape_of(1, half);
  poot_shape th = poot_shape_of(2, T, half);
  poot_shape thh = poot_shape_of(3, T, H, half);
  poot_value idx, two, e2, dn, ex, tb, pw, one, inv, pf, pb, ib, ang, c, s, cb, sb;
  /* inv_freq[i] = 1 / theta^(2i / dims) (Hugging Face's formulation). */
  POOT_TRY(poot_graph_iota(g, &it, 0, &idx));
  POOT_TRY(splat(g, POOT_DTYPE_F32, 2.0, &hs, &two));
  POOT_TRY(bin(g, POOT_OP_MUL, idx, two, &e2));
  POOT_TRY(splat(g, POOT_DTYPE_F32, (double)dims, &hs, &dn));
  POOT_TRY(bin(g, POOT_OP_DIV, e2, dn, &ex));
  POOT_TRY(splat(g, POOT_DTYPE_F32, theta, &hs, &tb));
  POOT_TRY(bin(g, POOT_OP_POW, tb, ex, &pw));
  POOT_TRY(splat(g, POOT_DTYPE_F32, 1.0, &hs, &one));
  POOT_TRY(bin(g, POOT_OP_DIV, one, pw, &inv));
  /* angle[t, i] = pos[t] * inv_freq[i] */
  POOT_TRY(conv(g, pos, POOT_DTYPE_F32, &pf));
  int64_t d0 = 0, d1 = 1;
  POOT_TRY(expand(g, pf, &th, &d0, &pb));
  POOT_TRY(expand(g, inv, &th, &d1, &ib));
  POOT_TRY(bin(g, POOT_OP_MUL, pb, ib, &ang));
  POOT_TRY(poot_graph_unary(g, POOT_OP_COS, ang, &c));
  POOT_TRY(poot_graph_unary(g, POOT_OP_SIN, ang, &s));
  int64_t keep[2] = {0, 2};
  POOT_TRY(expand(g, c, &thh, keep, &cb));
  POOT_TRY(expand(g, s, &thh, keep, &sb));
  poot_value xf, xr, rot, o1, o2;
  POOT_TRY(conv(g, x, POOT_DTYPE_F32, &xf));
  POOT_TRY(slice_last(g, xf, 0, dims, &xr));
  if (mode == POOT_ROPE_NEOX) {
    poot_value x1, x2;
    POOT_TRY(slice_last(g, xr, 0, half, &x1));
    POOT_TRY(slice_last(g, xr, half, dims, &x2));
    POOT_TRY(rotate(g, x1, x2, cb, sb, &o1, &o2));
    poot_value parts[2] = {o1, o2};
    POOT_TRY(poot_graph_concat(g, 2, parts, 2, &rot));
  } else {
    poot_shape pairs = poot_shape_of(4, T, H, half, 2);
    poot_value xp, x1, x2, r1, r2, q1, q2, cat;
    POOT_TRY(poot_graph_reshape(g, xr, &pairs, &xp));
    int64_t st[4] = {0, 0, 0, 0}, l1[4] = {T, H, half, 1}, st2[4] = {0, 0, 0, 1},
            l2[4] = {T, H, half, 2};
    POOT_TRY(poot_graph_slice(g, xp, st, l1, NULL, &r1));
    POOT_TRY(poot_graph_slice(g, xp, st2, l2, NULL, &r2));
    POOT_TRY(poot_graph_reshape(g, r1, &thh, &x1));
    POOT_TRY(poot_graph_reshape(g, r2, &thh, &x2));
    POOT_TRY(rotate(g, x1, x2, cb, sb, &o1, &o2));
    poot_shape col = poot_shape_of(4, T, H, half, 1);
    POOT_TRY(poot_graph_reshape(g, o1, &col, &q1));
    POOT_TRY(poot_graph_reshape(g, o2, &col, &q2));
    poot_value parts[2] = {q1, q2};
    POOT_TRY(poot_graph_concat(g, 2, parts, 3, &cat));
    poot_shape back = poot_shape_of(3, T, H, dims);
    POOT_TRY(poot_graph_reshape(g, cat, &back, &rot));
  }
  if (dims < D) {
    poot_value pass, parts[2];
    POOT_TRY(slice_last(g, xf, dims, D, &pass));
    parts[0] = rot;
    parts[1] = pass;
    POOT_TRY(poot_graph_concat(g, 2, parts, 2, &rot));
  }
  return conv(g, rot, dt, out);
}

poot_status poot_graph_rope(poot_graph *g, poot_value x, poot_value pos, double theta,
                            int64_t dims, poot_rope_mode mode, poot_value *out) {
  *out = POOT_VALUE_NONE;
  const char *call = "poot_graph_rope";
  POOT_TRY(need_value(g, x, call, "x"));
  POOT_TRY(need_value(g, pos, call, "pos"));
  const poot_type *t = vtype(g, x), *pt = vtype(g, pos);
  if (!poot_dtype_is_float(t->dtype) || t->shape.rank != 3)
    return BAD("%s: x must be a float tensor [T, heads, head_dim]", call);
  if (!poot_dtype_is_int(pt->dtype) || pt->shape.rank != 1 || pt->shape.dims[0] != t->shape.dims[0])
    return BAD("%s: pos must be an integer vector of T = %lld positions", call,
               (long long)t->shape.dims[0]);
  if (dims <= 0 || dims % 2 || dims > t->shape.dims[2])
    return BAD("%s: dims %lld must be even, > 0 and <= head_dim %lld", call, (long long)dims,
               (long long)t->shape.dims[2]);
  if (mode != POOT_ROPE_NORM && mode != POOT_ROPE_NEOX)
    return BAD("%s: bad mode %d", call, (int)mode);
  if (!(theta > 0) || !isfinite(theta)) return BAD("%s: theta must be finite and > 0", call);
  poot_composite_attr a[3] = {{.key = "theta", .kind = POOT_CATTR_FLOAT, .f = theta},
                              {.key = "dims", .kind = POOT_CATTR_INT, .i = dims},
                              {.key = "mode", .kind = POOT_CATTR_INT, .i = (int64_t)mode}};
  poot_value ops[2] = {x, pos}, p[2];
  POOT_TRY(poot_graph_composite_begin(g, "poot.rope", 3, a, 2, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = rope_body(g, p, theta, dims, mode, &y);
  return finish(g, st, y, out);
}

/* -------------------------------------------------------------- softmax */

static poot_status softmax_body(poot_graph *g, poot_value x, int64_t axis, poot_value *out) {
  const poot_type *t = vtype(g, x);
  poot_dtype dt = t->dtype;
  poot_shape shape = t->shape;
  int64_t keep[POOT_MAX_RANK];
  uint32_t k = 0;
  for (uint32_t i = 0; i < shape.rank; i++)
    if ((int64_t)i != axis) keep[k++] = i;
  poot_value xf, m, mb, d, e, s, sb;
  POOT_TRY(conv(g, x, POOT_DTYPE_F32, &xf));
  POOT_TRY(poot_graph_reduce(g, xf, POOT_REDUCE_MAX, 1, &axis, POOT_DTYPE_F32, &m));
  POOT_TRY(expand(g, m, &shape, keep, &mb));
  POOT_TRY(bin(g, POOT_OP_SUB, xf, mb, &d));
  POOT_TRY(poot_graph_unary(g, POOT_OP_EXP, d, &e));
  POOT_TRY(poot_graph_reduce(g, e, POOT_REDUCE_SUM, 1, &axis, POOT_DTYPE_F32, &s));
  POOT_TRY(expand(g, s, &shape, keep, &sb));
  POOT_TRY(bin(g, POOT_OP_DIV, e, sb, &d));
  return conv(g, d, dt, out);
}

poot_status poot_graph_softmax(poot_graph *g, poot_value x, int64_t axis, poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(need_value(g, x, "poot_graph_softmax", "x"));
  const poot_type *t = vtype(g, x);
  if (!poot_dtype_is_float(t->dtype) || t->shape.rank == 0 || axis < 0 ||
      axis >= (int64_t)t->shape.rank)
    return BAD("poot_graph_softmax: x must be a float tensor and axis %lld one of its dims",
               (long long)axis);
  poot_composite_attr a = {.key = "axis", .kind = POOT_CATTR_INT, .i = axis};
  poot_value p = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_composite_begin(g, "poot.softmax", 1, &a, 1, &x, &p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = softmax_body(g, p, axis, &y);
  return finish(g, st, y, out);
}

/* ------------------------------------------------------------ attention */

/* A K or V operand in f32: converted, or dequantized from a q8_0 cache. */
static poot_status kv_f32(poot_graph *g, poot_value x, poot_value *out) {
  if (vtype(g, x)->dtype == POOT_DTYPE_Q8_0)
    return poot_graph_dequantize(g, x, POOT_DTYPE_F32, out);
  return conv(g, x, POOT_DTYPE_F32, out);
}

static poot_status attention_body(poot_graph *g, const poot_value *p, double scale,
                                  poot_value *out) {
  const poot_type *qt = vtype(g, p[0]), *kt = vtype(g, p[1]);
  poot_dtype dt = qt->dtype;
  int64_t T = qt->shape.dims[0], Hq = qt->shape.dims[1], D = qt->shape.dims[2];
  int64_t C = kt->shape.dims[0], Hkv = kt->shape.dims[1], G = Hq / Hkv;
  poot_value qf, kf, vf, q4, sc, scl, ss, mb, ninf, sm, pr, o, ot, of;
  POOT_TRY(conv(g, p[0], POOT_DTYPE_F32, &qf));
  POOT_TRY(kv_f32(g, p[1], &kf));
  POOT_TRY(kv_f32(g, p[2], &vf));
  poot_shape s4 = poot_shape_of(4, T, Hkv, G, D);
  POOT_TRY(poot_graph_reshape(g, qf, &s4, &q4));
  /* scores[h, t, j, c] = sum_d q[t, h, j, d] * k[c, h, d] */
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 1;
  dd.lhs_batch[0] = 1;
  dd.rhs_batch[0] = 1;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 2;
  POOT_TRY(poot_graph_dot_general(g, q4, kf, &dd, POOT_DTYPE_F32, &sc));
  poot_shape ss4 = poot_shape_of(4, Hkv, T, G, C);
  POOT_TRY(splat(g, POOT_DTYPE_F32, scale, &ss4, &scl));
  POOT_TRY(bin(g, POOT_OP_MUL, sc, scl, &ss));
  int64_t md[2] = {1, 3};
  POOT_TRY(expand(g, p[3], &ss4, md, &mb));
  POOT_TRY(splat(g, POOT_DTYPE_F32, -INFINITY, &ss4, &ninf));
  POOT_TRY(poot_graph_select(g, mb, ss, ninf, &sm));
  POOT_TRY(poot_graph_softmax(g, sm, 3, &pr));
  /* out[h, t, j, d] = sum_c p[h, t, j, c] * v[c, h, d] */
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 1;
  dd.lhs_batch[0] = 0;
  dd.rhs_batch[0] = 1;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 0;
  POOT_TRY(poot_graph_dot_general(g, pr, vf, &dd, POOT_DTYPE_F32, &o));
  int64_t perm[4] = {1, 0, 2, 3};
  POOT_TRY(poot_graph_transpose(g, o, perm, &ot));
  poot_shape s3 = poot_shape_of(3, T, Hq, D);
  POOT_TRY(poot_graph_reshape(g, ot, &s3, &of));
  return conv(g, of, dt, out);
}

poot_status poot_graph_attention(poot_graph *g, poot_value q, poot_value k, poot_value v,
                                 poot_value mask, double scale, poot_value *out) {
  *out = POOT_VALUE_NONE;
  const char *call = "poot_graph_attention";
  POOT_TRY(need_value(g, q, call, "q"));
  POOT_TRY(need_value(g, k, call, "k"));
  POOT_TRY(need_value(g, v, call, "v"));
  POOT_TRY(need_value(g, mask, call, "mask"));
  const poot_type *qt = vtype(g, q), *kt = vtype(g, k), *vt = vtype(g, v), *mt = vtype(g, mask);
  if (!poot_dtype_is_float(qt->dtype) || qt->shape.rank != 3)
    return BAD("%s: q must be a float tensor [T, Hq, D]", call);
  bool kq = kt->dtype == POOT_DTYPE_Q8_0;
  if (!(poot_dtype_is_float(kt->dtype) || kq) || kt->shape.rank != 3 || !poot_type_equal(kt, vt))
    return BAD("%s: k and v must be float or q8_0 tensors [C, Hkv, D] of one type", call);
  int64_t T = qt->shape.dims[0], Hq = qt->shape.dims[1], D = qt->shape.dims[2];
  int64_t C = kt->shape.dims[0], Hkv = kt->shape.dims[1];
  if (kt->shape.dims[2] != D || Hkv <= 0 || Hq % Hkv)
    return BAD("%s: k/v head_dim must equal q's (%lld) and Hq (%lld) be a multiple of Hkv (%lld)",
               call, (long long)D, (long long)Hq, (long long)Hkv);
  if (mt->dtype != POOT_DTYPE_BOOL || mt->shape.rank != 2 || mt->shape.dims[0] != T ||
      mt->shape.dims[1] != C)
    return BAD("%s: mask must be bool[%lld, %lld]", call, (long long)T, (long long)C);
  poot_composite_attr a = {.key = "scale", .kind = POOT_CATTR_FLOAT, .f = scale};
  poot_value ops[4] = {q, k, v, mask}, p[4];
  POOT_TRY(poot_graph_composite_begin(g, "poot.attention", 1, &a, 4, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = attention_body(g, p, scale, &y);
  return finish(g, st, y, out);
}

/* ----------------------------------------------------------- activations */

static poot_status silu_of(poot_graph *g, poot_value x, poot_value *out) {
  poot_value s;
  POOT_TRY(poot_graph_unary(g, POOT_OP_SIGMOID, x, &s));
  return bin(g, POOT_OP_MUL, x, s, out);
}

/* gelu, exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static poot_status gelu_of(poot_graph *g, poot_value x, bool tanh_approx, poot_value *out) {
  const poot_type *t = vtype(g, x);
  poot_dtype dt = t->dtype;
  poot_shape shape = t->shape;
  poot_value half, one, inner, f, sum, hx;
  if (tanh_approx) {
    poot_value x2, x3, c, cx3, xs, k, kx;
    POOT_TRY(bin(g, POOT_OP_MUL, x, x, &x2));
    POOT_TRY(bin(g, POOT_OP_MUL, x2, x, &x3));
    POOT_TRY(splat(g, dt, 0.044715, &shape, &c));
    POOT_TRY(bin(g, POOT_OP_MUL, c, x3, &cx3));
    POOT_TRY(bin(g, POOT_OP_ADD, x, cx3, &xs));
    POOT_TRY(splat(g, dt, 0.7978845608028654, &shape, &k));
    POOT_TRY(bin(g, POOT_OP_MUL, k, xs, &kx));
    POOT_TRY(poot_graph_unary(g, POOT_OP_TANH, kx, &f));
  } else {
    poot_value r;
    POOT_TRY(splat(g, dt, 0.7071067811865476, &shape, &r));
    POOT_TRY(bin(g, POOT_OP_MUL, x, r, &inner));
    POOT_TRY(poot_graph_unary(g, POOT_OP_ERF, inner, &f));
  }
  POOT_TRY(splat(g, dt, 1.0, &shape, &one));
  POOT_TRY(bin(g, POOT_OP_ADD, one, f, &sum));
  POOT_TRY(splat(g, dt, 0.5, &shape, &half));
  POOT_TRY(bin(g, POOT_OP_MUL, half, x, &hx));
  return bin(g, POOT_OP_MUL, hx, sum, out);
}

static poot_status need_float(poot_graph *g, poot_value x, const char *call, const char *what) {
  POOT_TRY(need_value(g, x, call, what));
  if (!poot_dtype_is_float(vtype(g, x)->dtype)) return BAD("%s: %s must be a float tensor", call, what);
  return NULL;
}

poot_status poot_graph_silu(poot_graph *g, poot_value x, poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(need_float(g, x, "poot_graph_silu", "x"));
  poot_value p = POOT_VALUE_NONE, y = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_composite_begin(g, "poot.silu", 0, NULL, 1, &x, &p));
  poot_status st = silu_of(g, p, &y);
  return finish(g, st, y, out);
}

poot_status poot_graph_gelu(poot_graph *g, poot_value x, bool tanh_approx, poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(need_float(g, x, "poot_graph_gelu", "x"));
  poot_composite_attr a = {.key = "approximate", .kind = POOT_CATTR_INT, .i = tanh_approx};
  poot_value p = POOT_VALUE_NONE, y = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_composite_begin(g, "poot.gelu", 1, &a, 1, &x, &p));
  poot_status st = gelu_of(g, p, tanh_approx, &y);
  return finish(g, st, y, out);
}

static poot_status glu(poot_graph *g, const char *name, const char *call, poot_value gate,
                       poot_value up, bool gelu, poot_value *out) {
  *out = POOT_VALUE_NONE;
  POOT_TRY(need_float(g, gate, call, "gate"));
  POOT_TRY(need_float(g, up, call, "up"));
  if (!poot_type_equal(vtype(g, gate), vtype(g, up)))
    return BAD("%s: gate and up must have one type", call);
  poot_value ops[2] = {gate, up}, p[2], act = POOT_VALUE_NONE, y = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_composite_begin(g, name, 0, NULL, 2, ops, p));
  poot_status st = gelu ? gelu_of(g, p[0], true, &act) : silu_of(g, p[0], &act);
  if (!st) st = bin(g, POOT_OP_MUL, act, p[1], &y);
  return finish(g, st, y, out);
}

poot_status poot_graph_swiglu(poot_graph *g, poot_value gate, poot_value up, poot_value *out) {
  return glu(g, "poot.swiglu", "poot_graph_swiglu", gate, up, false, out);
}

poot_status poot_graph_geglu(poot_graph *g, poot_value gate, poot_value up, poot_value *out) {
  return glu(g, "poot.geglu", "poot_graph_geglu", gate, up, true, out);
}
