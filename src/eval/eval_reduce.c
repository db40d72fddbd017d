/* Reductions and the other ops with an accumulation order: reduce,
 * dot_general, cumsum, top_k, plus (de)quantize and rng.
 *
 * Accumulation (docs/eval.md): each operand element is first converted to
 * the accumulation dtype with the rules of `convert`; a float accumulator is
 * an f32 variable rounded to the accumulation dtype after every operation
 * (for f16/bf16, computing in f32 and rounding gives the correctly rounded
 * f16/bf16 result, since f32 has more than twice their precision plus two
 * bits); an integer accumulator wraps to the accumulation dtype's width. */
#include "eval_impl.h"

#include <math.h>

/* ------------------------------------------------------------ accumulators */

typedef struct acc_t {
  poot_dtype dt;
  bool is_float;
  float f;
  int64_t i;
} acc_t;

static void acc_init_zero(acc_t *a, poot_dtype dt) {
  a->dt = dt;
  a->is_float = poot_dtype_is_float(dt);
  a->f = 0.0f;
  a->i = 0;
}

static void acc_add_elem(acc_t *a, const ev_buf *b, int64_t idx) {
  if (a->is_float) {
    const float v = poot__eval_to_float(b->data, b->type.dtype, idx, a->dt);
    a->f = ev_round_to(a->dt, a->f + v);
  } else {
    const int64_t v = poot__eval_to_int(b->data, b->type.dtype, idx, a->dt);
    a->i = ev_wrap((uint64_t)a->i + (uint64_t)v, a->dt);
  }
}

static void acc_store(const acc_t *a, ev_buf *out, int64_t idx) {
  if (a->is_float)
    ev_store_float(out->data, a->dt, idx, a->f);
  else
    ev_store_int(out->data, a->dt, idx, (uint64_t)a->i);
}

static int64_t int_min_of(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_I8: return INT8_MIN;
    case POOT_DTYPE_I16: return INT16_MIN;
    case POOT_DTYPE_I32: return INT32_MIN;
    case POOT_DTYPE_I64: return INT64_MIN;
    default: return 0;
  }
}

static int64_t int_max_of(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_I8: return INT8_MAX;
    case POOT_DTYPE_U8: return UINT8_MAX;
    case POOT_DTYPE_BOOL: return 1;
    case POOT_DTYPE_I16: return INT16_MAX;
    case POOT_DTYPE_I32: return INT32_MAX;
    case POOT_DTYPE_U32: return UINT32_MAX;
    case POOT_DTYPE_I64: return INT64_MAX;
    default: return 0;
  }
}

/* max/min with NaN propagation and -0 < +0 (as the elementwise ops). */
static float fmax_prop(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

static float fmin_prop(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* ------------------------------------------------------------------ reduce */

poot_status poot__eval_reduce(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  (void)ctx;
  const ev_buf *x = in[0];
  const poot_shape *xs = &x->type.shape;
  const poot_dtype src = x->type.dtype, acc_dt = out[0]->type.dtype;
  if (poot_dtype_is_packed(src))
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (reduce) of a packed dtype",
                            node->id);
  bool reduced[POOT_MAX_RANK] = {false};
  for (uint32_t k = 0; k < node->attrs.num_dims; k++) reduced[node->attrs.dims[k]] = true;
  /* Kept and reduced dims, each in ascending order. */
  poot_shape kept = {0}, red = {0};
  uint32_t kept_dim[POOT_MAX_RANK], red_dim[POOT_MAX_RANK];
  for (uint32_t d = 0; d < xs->rank; d++) {
    if (reduced[d]) {
      red_dim[red.rank] = d;
      red.dims[red.rank++] = xs->dims[d];
    } else {
      kept_dim[kept.rank] = d;
      kept.dims[kept.rank++] = xs->dims[d];
    }
  }
  int64_t n_red = 1;
  for (uint32_t d = 0; d < red.rank; d++) n_red *= red.dims[d];
  int64_t strides[POOT_MAX_RANK], kc[POOT_MAX_RANK], rc[POOT_MAX_RANK];
  ev_strides(xs, strides);
  const poot_reduce_kind kind = node->attrs.reduce_kind;
  for (int64_t o = 0; o < out[0]->count; o++) {
    ev_unflatten(&kept, o, kc);
    int64_t base = 0;
    for (uint32_t d = 0; d < kept.rank; d++) base += kc[d] * strides[kept_dim[d]];
    acc_t acc;
    acc_init_zero(&acc, acc_dt);
    if (kind == POOT_REDUCE_MAX) {
      acc.f = -INFINITY;
      acc.i = int_min_of(acc_dt);
    } else if (kind == POOT_REDUCE_MIN) {
      acc.f = INFINITY;
      acc.i = int_max_of(acc_dt);
    }
    int64_t best = 0;
    bool best_nan = false;
    float best_f = 0.0f;
    int64_t best_i = 0;
    for (int64_t r = 0; r < n_red; r++) {
      ev_unflatten(&red, r, rc);
      int64_t idx = base;
      for (uint32_t d = 0; d < red.rank; d++) idx += rc[d] * strides[red_dim[d]];
      switch (kind) {
        case POOT_REDUCE_SUM: acc_add_elem(&acc, x, idx); break;
        case POOT_REDUCE_MAX:
        case POOT_REDUCE_MIN:
          if (acc.is_float) {
            const float v = poot__eval_to_float(x->data, src, idx, acc_dt);
            acc.f = kind == POOT_REDUCE_MAX ? fmax_prop(acc.f, v) : fmin_prop(acc.f, v);
          } else {
            const int64_t v = poot__eval_to_int(x->data, src, idx, acc_dt);
            acc.i = kind == POOT_REDUCE_MAX ? (v > acc.i ? v : acc.i) : (v < acc.i ? v : acc.i);
          }
          break;
        case POOT_REDUCE_ARGMAX:
          /* The first index of the maximum; NaN beats any number, and the
           * first NaN wins. */
          if (poot_dtype_is_float(src)) {
            const float v = ev_load_float(x->data, src, idx);
            if (r == 0 || (!best_nan && (isnan(v) || v > best_f))) {
              best = r;
              best_f = v;
              best_nan = isnan(v);
            }
          } else {
            const int64_t v = ev_load_int(x->data, src, idx);
            if (r == 0 || v > best_i) {
              best = r;
              best_i = v;
            }
          }
          break;
        default:
          return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u: reduce kind %d", node->id,
                                  (int)kind);
      }
    }
    if (kind == POOT_REDUCE_ARGMAX)
      ev_store_int(out[0]->data, acc_dt, o, (uint64_t)best);
    else
      acc_store(&acc, out[0], o);
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- dot_general */

poot_status poot__eval_dot_general(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                   ev_buf *const *out) {
  (void)ctx;
  const ev_buf *l = in[0], *r = in[1];
  const poot_dot_dims *dd = &node->attrs.dot;
  const poot_dtype acc_dt = out[0]->type.dtype;
  const poot_shape *ls = &l->type.shape, *rs = &r->type.shape;
  if (poot_dtype_is_packed(l->type.dtype) || poot_dtype_is_packed(r->type.dtype))
    return poot_status_make(POOT_UNSUPPORTED,
                            "eval: node %%%u (dot_general) of a packed dtype (dequantize first)",
                            node->id);
  /* Free dims of each side, in order. */
  bool l_used[POOT_MAX_RANK] = {false}, r_used[POOT_MAX_RANK] = {false};
  for (uint32_t k = 0; k < dd->num_batch; k++) l_used[dd->lhs_batch[k]] = r_used[dd->rhs_batch[k]] = true;
  for (uint32_t k = 0; k < dd->num_contract; k++)
    l_used[dd->lhs_contract[k]] = r_used[dd->rhs_contract[k]] = true;
  uint32_t l_free[POOT_MAX_RANK], r_free[POOT_MAX_RANK], nlf = 0, nrf = 0;
  for (uint32_t d = 0; d < ls->rank; d++)
    if (!l_used[d]) l_free[nlf++] = d;
  for (uint32_t d = 0; d < rs->rank; d++)
    if (!r_used[d]) r_free[nrf++] = d;
  poot_shape contract = {.rank = dd->num_contract};
  for (uint32_t k = 0; k < dd->num_contract; k++) contract.dims[k] = ls->dims[dd->lhs_contract[k]];
  int64_t n_contract = 1;
  for (uint32_t k = 0; k < contract.rank; k++) n_contract *= contract.dims[k];
  int64_t lst[POOT_MAX_RANK], rst[POOT_MAX_RANK], oc[POOT_MAX_RANK], cc[POOT_MAX_RANK];
  ev_strides(ls, lst);
  ev_strides(rs, rst);
  const bool is_float = poot_dtype_is_float(acc_dt);
  for (int64_t o = 0; o < out[0]->count; o++) {
    ev_unflatten(&out[0]->type.shape, o, oc);
    int64_t lb = 0, rb = 0;
    uint32_t c = 0;
    for (uint32_t k = 0; k < dd->num_batch; k++, c++) {
      lb += oc[c] * lst[dd->lhs_batch[k]];
      rb += oc[c] * rst[dd->rhs_batch[k]];
    }
    for (uint32_t k = 0; k < nlf; k++, c++) lb += oc[c] * lst[l_free[k]];
    for (uint32_t k = 0; k < nrf; k++, c++) rb += oc[c] * rst[r_free[k]];
    float acc_f = 0.0f;
    uint64_t acc_i = 0;
    for (int64_t t = 0; t < n_contract; t++) {
      ev_unflatten(&contract, t, cc);
      int64_t li = lb, ri = rb;
      for (uint32_t k = 0; k < contract.rank; k++) {
        li += cc[k] * lst[dd->lhs_contract[k]];
        ri += cc[k] * rst[dd->rhs_contract[k]];
      }
      if (is_float) {
        const float a = poot__eval_to_float(l->data, l->type.dtype, li, acc_dt);
        const float b = poot__eval_to_float(r->data, r->type.dtype, ri, acc_dt);
        const float p = ev_round_to(acc_dt, a * b);
        acc_f = ev_round_to(acc_dt, acc_f + p);
      } else {
        const int64_t a = poot__eval_to_int(l->data, l->type.dtype, li, acc_dt);
        const int64_t b = poot__eval_to_int(r->data, r->type.dtype, ri, acc_dt);
        acc_i = (uint64_t)ev_wrap(acc_i + (uint64_t)ev_wrap((uint64_t)a * (uint64_t)b, acc_dt), acc_dt);
      }
    }
    if (is_float)
      ev_store_float(out[0]->data, acc_dt, o, acc_f);
    else
      ev_store_int(out[0]->data, acc_dt, o, acc_i);
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------ cumsum */

poot_status poot__eval_cumsum(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  (void)ctx;
  const ev_buf *x = in[0];
  const poot_shape *s = &x->type.shape;
  if (poot_dtype_is_packed(x->type.dtype))
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (cumsum) of a packed dtype",
                            node->id);
  const int64_t axis = node->attrs.axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= s->dims[d];
  for (uint32_t d = (uint32_t)axis + 1; d < s->rank; d++) inner *= s->dims[d];
  const int64_t len = s->dims[axis];
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      acc_t acc;
      acc_init_zero(&acc, out[0]->type.dtype);
      for (int64_t k = 0; k < len; k++) {
        const int64_t idx = (o * len + k) * inner + i;
        acc_add_elem(&acc, x, idx);
        acc_store(&acc, out[0], idx);
      }
    }
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------- top_k */

typedef struct topk_row {
  const ev_buf *x;
  int64_t base;
  bool is_float;
} topk_row;

/* True when element a comes strictly before element b: larger value first,
 * NaN above every number (NaNs equal among themselves). */
static bool topk_before(const topk_row *row, int64_t a, int64_t b) {
  if (row->is_float) {
    const float va = ev_load_float(row->x->data, row->x->type.dtype, row->base + a);
    const float vb = ev_load_float(row->x->data, row->x->type.dtype, row->base + b);
    if (isnan(va) || isnan(vb)) return isnan(va) && !isnan(vb);
    return va > vb;
  }
  return ev_load_int(row->x->data, row->x->type.dtype, row->base + a) >
         ev_load_int(row->x->data, row->x->type.dtype, row->base + b);
}

/* A stable bottom-up merge sort of idx[0..n): equal elements keep ascending
 * index order. */
static void topk_sort(const topk_row *row, int64_t *idx, int64_t *tmp, int64_t n) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = topk_before(row, idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

poot_status poot__eval_top_k(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                             ev_buf *const *out) {
  (void)ctx;
  const ev_buf *x = in[0];
  const poot_shape *s = &x->type.shape;
  const size_t eb = ev_elem_bytes(x->type.dtype);
  if (!eb || s->rank == 0)
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (top_k) on %s", node->id,
                            poot_dtype_name(x->type.dtype));
  const int64_t n = s->dims[s->rank - 1], k = node->attrs.k;
  const int64_t rows = n ? x->count / n : 0;
  int64_t *idx = poot_malloc((size_t)(n ? n : 1) * sizeof *idx);
  int64_t *tmp = poot_malloc((size_t)(n ? n : 1) * sizeof *tmp);
  if (!idx || !tmp) {
    poot_free(idx);
    poot_free(tmp);
    return poot_status_make(POOT_OUT_OF_MEMORY, "eval: top_k over %lld elements", (long long)n);
  }
  for (int64_t row = 0; row < rows; row++) {
    topk_row tr = {x, row * n, poot_dtype_is_float(x->type.dtype)};
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    topk_sort(&tr, idx, tmp, n);
    for (int64_t j = 0; j < k; j++) {
      memcpy(out[0]->data + (size_t)(row * k + j) * eb, x->data + (size_t)(row * n + idx[j]) * eb,
             eb);
      ev_store_int(out[1]->data, POOT_DTYPE_I32, row * k + j, (uint64_t)idx[j]);
    }
  }
  poot_free(idx);
  poot_free(tmp);
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------------- dequantize */

poot_status poot__eval_dequantize(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                  ev_buf *const *out) {
  (void)ctx;
  const poot_quant_format *f = poot_quant_format_of_dtype(in[0]->type.dtype);
  const poot_dtype dst = out[0]->type.dtype;
  if (!f || !poot_dtype_is_float(dst))
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (dequantize) %s to %s", node->id,
                            poot_dtype_name(in[0]->type.dtype), poot_dtype_name(dst));
  const size_t n_blocks = in[0]->size / f->block_bytes;
  if ((int64_t)(n_blocks * f->block_elems) != out[0]->count)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u (dequantize): sizes differ",
                            node->id);
  /* One block at a time through an f32 staging row, rounded on store. */
  float row[POOT_QUANT_QK_K];
  for (size_t b = 0; b < n_blocks; b++) {
    f->dequantize(in[0]->data + b * f->block_bytes, row, 1);
    for (uint32_t j = 0; j < f->block_elems; j++)
      ev_store_float(out[0]->data, dst, (int64_t)(b * f->block_elems + j), row[j]);
  }
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- quantize */

/* GGUF's reference quantizer (poot/quant.h), block by block along the last
 * dim: the one definition the device's K/V write matches. */
poot_status poot__eval_quantize(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                ev_buf *const *out) {
  (void)ctx;
  const poot_quant_format *f = poot_quant_format_of_dtype(out[0]->type.dtype);
  if (!f || !f->quantize || in[0]->type.dtype != POOT_DTYPE_F32)
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (quantize) %s to %s", node->id,
                            poot_dtype_name(in[0]->type.dtype),
                            poot_dtype_name(out[0]->type.dtype));
  const size_t n_blocks = out[0]->size / f->block_bytes;
  if ((int64_t)(n_blocks * f->block_elems) != in[0]->count)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u (quantize): sizes differ",
                            node->id);
  f->quantize((const float *)(const void *)in[0]->data, out[0]->data, n_blocks);
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------------- rng */

poot_status poot__eval_rng(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                           ev_buf *const *out) {
  (void)ctx;
  const poot_dtype dt = out[0]->type.dtype;
  if (in[0]->type.dtype != POOT_DTYPE_U32 || in[1]->type.dtype != POOT_DTYPE_U32 ||
      in[0]->count != 2 || in[1]->count != 2)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u (rng): key and counter are u32[2]",
                            node->id);
  const uint32_t key[2] = {(uint32_t)ev_load_int(in[0]->data, POOT_DTYPE_U32, 0),
                           (uint32_t)ev_load_int(in[0]->data, POOT_DTYPE_U32, 1)};
  const uint32_t c2 = (uint32_t)ev_load_int(in[1]->data, POOT_DTYPE_U32, 0);
  const uint32_t c3 = (uint32_t)ev_load_int(in[1]->data, POOT_DTYPE_U32, 1);
  const int m = dt == POOT_DTYPE_F32 ? 24 : dt == POOT_DTYPE_F16 ? 11 : 8;
  uint32_t block[4] = {0};
  for (int64_t i = 0; i < out[0]->count; i++) {
    if (i % 4 == 0) {
      const uint64_t b = (uint64_t)i / 4;
      const uint32_t ctr[4] = {(uint32_t)b, (uint32_t)(b >> 32), c2, c3};
      poot_philox4x32_10(ctr, key, block);
    }
    const uint32_t w = block[i % 4];
    if (node->attrs.rng_dist == POOT_RNG_BITS) {
      ev_store_int(out[0]->data, dt, i, w);
    } else if (node->attrs.rng_dist == POOT_RNG_UNIFORM && poot_dtype_is_float(dt)) {
      /* (w >> (32 - m)) * 2^-m: exact in the target dtype. */
      ev_store_float(out[0]->data, dt, i, ldexpf((float)(w >> (32 - m)), -m));
    } else {
      return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (rng) %s to %s", node->id,
                              poot_rng_dist_name(node->attrs.rng_dist), poot_dtype_name(dt));
    }
  }
  return POOT_OK_STATUS;
}
