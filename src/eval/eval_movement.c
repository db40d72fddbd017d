/* Movement ops: iota, broadcast, reshape, transpose, slice, dynamic_slice,
 * dynamic_update_slice, concat, pad, gather, scatter_update. They copy
 * element bytes and never compute, so they are exact for every dtype. Each
 * walks its result (or, for scatter_update, its updates) in row-major order.
 *
 * Packed dtypes move in whole blocks: the last dim is counted in blocks, and
 * an op that would split a block is UNSUPPORTED. */
#include "eval_impl.h"

/* The "unit" view of a buffer: element size and shape in units (elements,
 * or blocks for packed dtypes). */
typedef struct unit_view {
  size_t bytes;
  poot_shape shape;
} unit_view;

static bool unit_view_of(const poot_type *t, unit_view *u) {
  const poot_dtype_info *info = poot_dtype_info_of(t->dtype);
  if (!info) return false;
  u->shape = t->shape;
  if (!info->is_packed) {
    u->bytes = info->elem_bytes;
    return true;
  }
  if (t->shape.rank == 0 || t->shape.dims[t->shape.rank - 1] % info->block_elems) return false;
  u->bytes = info->block_bytes;
  u->shape.dims[t->shape.rank - 1] /= info->block_elems;
  return true;
}

static int64_t shape_count(const poot_shape *s) {
  int64_t n = 1;
  for (uint32_t d = 0; d < s->rank; d++) n *= s->dims[d];
  return n;
}

static poot_status packed_split(const poot_node *node) {
  return poot_status_make(POOT_UNSUPPORTED,
                          "eval: node %%%u (%s) would split the blocks of a packed dtype",
                          node->id, poot_op_name(node->op));
}

/* Converts a unit count along the last dim of a packed type: false when it is
 * not a whole number of blocks. */
static bool last_dim_units(const poot_type *t, int64_t elems, int64_t *out_units) {
  const poot_dtype_info *info = poot_dtype_info_of(t->dtype);
  if (!info->is_packed) {
    *out_units = elems;
    return true;
  }
  if (elems % info->block_elems) return false;
  *out_units = elems / info->block_elems;
  return true;
}

/* Reads the scalar integer operand `b` as int64. */
static int64_t scalar_index(const ev_buf *b) { return ev_load_int(b->data, b->type.dtype, 0); }

/* ------------------------------------------------------------------ iota */

poot_status poot__eval_iota(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                            ev_buf *const *out) {
  (void)ctx, (void)in;
  const poot_shape *s = &out[0]->type.shape;
  const poot_dtype dt = out[0]->type.dtype;
  const int64_t axis = node->attrs.axis;
  int64_t coord[POOT_MAX_RANK];
  for (int64_t i = 0; i < out[0]->count; i++) {
    ev_unflatten(s, i, coord);
    const int64_t v = coord[axis];
    if (poot_dtype_is_float(dt))
      ev_store_float(out[0]->data, dt, i, poot__eval_int_to_float(v, false, dt));
    else
      ev_store_int(out[0]->data, dt, i, (uint64_t)v);
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- broadcast */

poot_status poot__eval_broadcast(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                 ev_buf *const *out) {
  (void)ctx;
  unit_view ui, uo;
  if (!unit_view_of(&in[0]->type, &ui) || !unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  if (poot_dtype_is_packed(in[0]->type.dtype) &&
      (in[0]->type.shape.rank == 0 ||
       node->attrs.dims[in[0]->type.shape.rank - 1] != (int64_t)out[0]->type.shape.rank - 1 ||
       in[0]->type.shape.dims[in[0]->type.shape.rank - 1] !=
           out[0]->type.shape.dims[out[0]->type.shape.rank - 1]))
    return packed_split(node);
  int64_t in_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ui.shape, in_strides);
  const int64_t n = shape_count(&uo.shape);
  for (int64_t i = 0; i < n; i++) {
    ev_unflatten(&uo.shape, i, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < ui.shape.rank; d++) {
      const int64_t c = ui.shape.dims[d] == 1 ? 0 : coord[node->attrs.dims[d]];
      src += c * in_strides[d];
    }
    memcpy(out[0]->data + (size_t)i * uo.bytes, in[0]->data + (size_t)src * ui.bytes, uo.bytes);
  }
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- reshape */

poot_status poot__eval_reshape(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                               ev_buf *const *out) {
  (void)ctx;
  if (in[0]->size != out[0]->size)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u (reshape): sizes differ",
                            node->id);
  if (out[0]->size) memcpy(out[0]->data, in[0]->data, out[0]->size);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- transpose */

poot_status poot__eval_transpose(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                 ev_buf *const *out) {
  (void)ctx;
  unit_view ui, uo;
  if (!unit_view_of(&in[0]->type, &ui) || !unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  const uint32_t r = ui.shape.rank;
  if (poot_dtype_is_packed(in[0]->type.dtype) && node->attrs.dims[r - 1] != (int64_t)r - 1)
    return packed_split(node);
  int64_t in_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ui.shape, in_strides);
  const int64_t n = shape_count(&uo.shape);
  for (int64_t i = 0; i < n; i++) {
    ev_unflatten(&uo.shape, i, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < r; d++) src += coord[d] * in_strides[node->attrs.dims[d]];
    memcpy(out[0]->data + (size_t)i * uo.bytes, in[0]->data + (size_t)src * ui.bytes, uo.bytes);
  }
  return POOT_OK_STATUS;
}

/* ----------------------------------------------------------------- slice */

poot_status poot__eval_slice(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                             ev_buf *const *out) {
  (void)ctx;
  unit_view ui, uo;
  if (!unit_view_of(&in[0]->type, &ui) || !unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  const uint32_t r = ui.shape.rank;
  int64_t start[POOT_MAX_RANK], stride[POOT_MAX_RANK];
  for (uint32_t d = 0; d < r; d++) {
    start[d] = node->attrs.start[d];
    stride[d] = node->attrs.stride[d] ? node->attrs.stride[d] : 1;
  }
  if (poot_dtype_is_packed(in[0]->type.dtype) &&
      (stride[r - 1] != 1 || !last_dim_units(&in[0]->type, start[r - 1], &start[r - 1])))
    return packed_split(node);
  int64_t in_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ui.shape, in_strides);
  const int64_t n = shape_count(&uo.shape);
  for (int64_t i = 0; i < n; i++) {
    ev_unflatten(&uo.shape, i, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < r; d++) src += (start[d] + coord[d] * stride[d]) * in_strides[d];
    memcpy(out[0]->data + (size_t)i * uo.bytes, in[0]->data + (size_t)src * ui.bytes, uo.bytes);
  }
  return POOT_OK_STATUS;
}

/* Resolves the start operands of dynamic_(update_)slice: clamped into
 * [0, dim - size], or a fault when the node carries a check. Starts are in
 * elements; for packed dtypes the last one must be whole blocks. */
static poot_status dynamic_starts(ev_ctx *ctx, const poot_node *node, ev_buf *const *starts,
                                  const poot_shape *full, const poot_shape *window,
                                  int64_t *out_start) {
  for (uint32_t d = 0; d < full->rank; d++) {
    const int64_t s = scalar_index(starts[d]);
    const int64_t hi = full->dims[d] - window->dims[d]; /* ≥ 0 by the shape rule */
    if (s < 0 || s > hi) {
      if (node->trap != POOT_TRAP_NONE) return poot__eval_fault(ctx, node, s, hi + 1, "start");
      out_start[d] = s < 0 ? 0 : hi;
    } else {
      out_start[d] = s;
    }
  }
  return POOT_OK_STATUS;
}

poot_status poot__eval_dynamic_slice(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                     ev_buf *const *out) {
  int64_t start[POOT_MAX_RANK];
  POOT_TRY(dynamic_starts(ctx, node, in + 1, &in[0]->type.shape, &out[0]->type.shape, start));
  unit_view ui, uo;
  if (!unit_view_of(&in[0]->type, &ui) || !unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  const uint32_t r = ui.shape.rank;
  if (r && poot_dtype_is_packed(in[0]->type.dtype) &&
      !last_dim_units(&in[0]->type, start[r - 1], &start[r - 1]))
    return packed_split(node);
  int64_t in_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ui.shape, in_strides);
  const int64_t n = shape_count(&uo.shape);
  for (int64_t i = 0; i < n; i++) {
    ev_unflatten(&uo.shape, i, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < r; d++) src += (start[d] + coord[d]) * in_strides[d];
    memcpy(out[0]->data + (size_t)i * uo.bytes, in[0]->data + (size_t)src * ui.bytes, uo.bytes);
  }
  return POOT_OK_STATUS;
}

poot_status poot__eval_dynamic_update_slice(ev_ctx *ctx, const poot_node *node,
                                            ev_buf *const *in, ev_buf *const *out) {
  int64_t start[POOT_MAX_RANK];
  POOT_TRY(dynamic_starts(ctx, node, in + 2, &in[0]->type.shape, &in[1]->type.shape, start));
  unit_view ux, uu;
  if (!unit_view_of(&in[0]->type, &ux) || !unit_view_of(&in[1]->type, &uu)) return packed_split(node);
  const uint32_t r = ux.shape.rank;
  if (r && poot_dtype_is_packed(in[0]->type.dtype) &&
      !last_dim_units(&in[0]->type, start[r - 1], &start[r - 1]))
    return packed_split(node);
  if (out[0]->size) memcpy(out[0]->data, in[0]->data, out[0]->size);
  int64_t x_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ux.shape, x_strides);
  const int64_t n = shape_count(&uu.shape);
  for (int64_t i = 0; i < n; i++) {
    ev_unflatten(&uu.shape, i, coord);
    int64_t dst = 0;
    for (uint32_t d = 0; d < r; d++) dst += (start[d] + coord[d]) * x_strides[d];
    memcpy(out[0]->data + (size_t)dst * ux.bytes, in[1]->data + (size_t)i * uu.bytes, ux.bytes);
  }
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- concat */

poot_status poot__eval_concat(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  (void)ctx;
  unit_view uo;
  if (!unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  const int64_t axis = node->attrs.axis;
  /* The result is, for each index of the dims before `axis`, the operands'
   * rows (dims axis..) one after the other. */
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; d++) outer *= uo.shape.dims[d];
  size_t off = 0;
  for (int64_t o = 0; o < outer; o++) {
    for (uint32_t k = 0; k < node->num_operands; k++) {
      unit_view ui;
      if (!unit_view_of(&in[k]->type, &ui)) return packed_split(node);
      int64_t row = 1;
      for (uint32_t d = (uint32_t)axis; d < ui.shape.rank; d++) row *= ui.shape.dims[d];
      const size_t bytes = (size_t)row * ui.bytes;
      if (bytes) memcpy(out[0]->data + off, in[k]->data + (size_t)o * bytes, bytes);
      off += bytes;
    }
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------- pad */

poot_status poot__eval_pad(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                           ev_buf *const *out) {
  (void)ctx;
  const size_t eb = ev_elem_bytes(out[0]->type.dtype);
  if (!eb) return packed_split(node);
  const poot_shape *xs = &in[0]->type.shape;
  for (int64_t i = 0; i < out[0]->count; i++) memcpy(out[0]->data + (size_t)i * eb, in[1]->data, eb);
  int64_t out_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&out[0]->type.shape, out_strides);
  for (int64_t i = 0; i < in[0]->count; i++) {
    ev_unflatten(xs, i, coord);
    int64_t dst = 0;
    for (uint32_t d = 0; d < xs->rank; d++)
      dst += (node->attrs.low[d] + coord[d] * (node->attrs.interior[d] + 1)) * out_strides[d];
    memcpy(out[0]->data + (size_t)dst * eb, in[0]->data + (size_t)i * eb, eb);
  }
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- gather */

poot_status poot__eval_gather(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  unit_view ut, uo;
  if (!unit_view_of(&in[0]->type, &ut) || !unit_view_of(&out[0]->type, &uo)) return packed_split(node);
  const int64_t axis = node->attrs.axis, b = node->attrs.batch_dims;
  if (poot_dtype_is_packed(in[0]->type.dtype) && axis == (int64_t)ut.shape.rank - 1)
    return packed_split(node);
  const ev_buf *idx = in[1];
  const uint32_t ir = idx->type.shape.rank;
  const int64_t limit = ut.shape.dims[axis];
  int64_t t_strides[POOT_MAX_RANK], i_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ut.shape, t_strides);
  ev_strides(&idx->type.shape, i_strides);
  const int64_t n = shape_count(&uo.shape);
  /* Result coords: p = [0, axis), i = [axis, axis + ir - b), s = the rest. */
  for (int64_t e = 0; e < n; e++) {
    ev_unflatten(&uo.shape, e, coord);
    int64_t ii = 0;
    for (int64_t d = 0; d < b; d++) ii += coord[d] * i_strides[d];
    for (uint32_t d = (uint32_t)b; d < ir; d++) ii += coord[axis + (d - b)] * i_strides[d];
    int64_t k = ev_load_int(idx->data, idx->type.dtype, ii);
    if (k < 0 || k >= limit) {
      if (node->trap != POOT_TRAP_NONE) return poot__eval_fault(ctx, node, k, limit, "index");
      if (limit == 0) {
        /* An empty axis has nothing to clamp to: the element is zero. */
        memset(out[0]->data + (size_t)e * uo.bytes, 0, uo.bytes);
        continue;
      }
      k = k < 0 ? 0 : limit - 1;
    }
    int64_t src = 0;
    for (int64_t d = 0; d < axis; d++) src += coord[d] * t_strides[d];
    src += k * t_strides[axis];
    for (uint32_t d = (uint32_t)axis + 1; d < ut.shape.rank; d++)
      src += coord[d - axis - 1 + axis + (ir - b)] * t_strides[d];
    memcpy(out[0]->data + (size_t)e * uo.bytes, in[0]->data + (size_t)src * ut.bytes, uo.bytes);
  }
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------- scatter_update */

poot_status poot__eval_scatter_update(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                      ev_buf *const *out) {
  unit_view ut, uu;
  if (!unit_view_of(&in[0]->type, &ut) || !unit_view_of(&in[2]->type, &uu)) return packed_split(node);
  const int64_t axis = node->attrs.axis;
  if (poot_dtype_is_packed(in[0]->type.dtype) && axis == (int64_t)ut.shape.rank - 1)
    return packed_split(node);
  const ev_buf *idx = in[1];
  const uint32_t ir = idx->type.shape.rank;
  const int64_t limit = ut.shape.dims[axis];
  if (out[0]->size) memcpy(out[0]->data, in[0]->data, out[0]->size);
  /* With a check, every index is validated before anything is written. */
  if (node->trap != POOT_TRAP_NONE) {
    for (int64_t j = 0; j < idx->count; j++) {
      const int64_t k = ev_load_int(idx->data, idx->type.dtype, j);
      if (k < 0 || k >= limit) return poot__eval_fault(ctx, node, k, limit, "index");
    }
  }
  int64_t t_strides[POOT_MAX_RANK], i_strides[POOT_MAX_RANK], coord[POOT_MAX_RANK];
  ev_strides(&ut.shape, t_strides);
  ev_strides(&idx->type.shape, i_strides);
  const int64_t n = shape_count(&uu.shape);
  /* Updates coords: p = [0, axis), i = [axis, axis + ir), s = the rest;
   * walked in row-major order, so for each target element the last index
   * (in row-major order of i) that writes it wins. */
  for (int64_t e = 0; e < n; e++) {
    ev_unflatten(&uu.shape, e, coord);
    int64_t ii = 0;
    for (uint32_t d = 0; d < ir; d++) ii += coord[axis + d] * i_strides[d];
    const int64_t k = ev_load_int(idx->data, idx->type.dtype, ii);
    if (k < 0 || k >= limit) continue; /* fallback: skip */
    int64_t dst = 0;
    for (int64_t d = 0; d < axis; d++) dst += coord[d] * t_strides[d];
    dst += k * t_strides[axis];
    for (uint32_t d = (uint32_t)axis + 1; d < ut.shape.rank; d++)
      dst += coord[d + ir - 1] * t_strides[d];
    memcpy(out[0]->data + (size_t)dst * ut.bytes, in[2]->data + (size_t)e * uu.bytes, ut.bytes);
  }
  return POOT_OK_STATUS;
}
