/* Private to src/eval: the evaluator's buffers, element access and the op
 * routines' shared signature. */
#ifndef POOT_EVAL_IMPL_H
#define POOT_EVAL_IMPL_H

#include <stdint.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/quant.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* A value's storage during evaluation. */
typedef struct ev_buf {
  poot_type type;
  uint8_t *data; /* NULL until computed */
  size_t size;   /* bytes */
  int64_t count; /* elements */
  bool owned;    /* data is ours (poot_free) rather than borrowed */
} ev_buf;

/* The state of one poot_eval call. */
typedef struct ev_ctx {
  const poot_graph *graph;
  ev_buf *bufs; /* indexed by value id */
  uint32_t num_values;
  const poot_eval_options *options;
  uint32_t composite; /* innermost composite node being evaluated, or UINT32_MAX */
} ev_ctx;

/* Every op routine: computes the results of `node` from its operand buffers
 * into its result buffers, which the driver has already allocated (zeroed)
 * with the result types. */
typedef poot_status (*ev_op_fn)(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                                ev_buf *const *out);

/* The reference routines the op table names (poot/graph_ops.h, column
 * `ref`). A routine several ops share is declared once per op; the
 * declarations are identical, so C allows the repetition. */
#define X(ID, name, lo, hi, cls, rule, ref, trap)                                                  \
  poot_status poot__eval_##ref(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,              \
                               ev_buf *const *out);
POOT_GRAPH_OPS(X)
#undef X

/* A failed check: fills options->out_fault and returns KERNEL_FAULT. */
poot_status poot__eval_fault(ev_ctx *ctx, const poot_node *node, int64_t index, int64_t limit,
                             const char *what);

/* ------------------------------------------------------- element access */

static inline size_t ev_elem_bytes(poot_dtype dt) {
  const poot_dtype_info *info = poot_dtype_info_of(dt);
  return info ? info->elem_bytes : 0;
}

static inline bool ev_is_signed_int(poot_dtype dt) {
  return dt == POOT_DTYPE_I8 || dt == POOT_DTYPE_I16 || dt == POOT_DTYPE_I32 ||
         dt == POOT_DTYPE_I64;
}

static inline uint32_t ev_int_bits(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_I8:
    case POOT_DTYPE_U8:
    case POOT_DTYPE_BOOL: return 8;
    case POOT_DTYPE_I16: return 16;
    case POOT_DTYPE_I32:
    case POOT_DTYPE_U32: return 32;
    case POOT_DTYPE_I64: return 64;
    default: return 0;
  }
}

/* An integer or bool element, sign- or zero-extended to 64 bits. */
static inline int64_t ev_load_int(const uint8_t *p, poot_dtype dt, int64_t i) {
  switch (dt) {
    case POOT_DTYPE_I8: return ((const int8_t *)p)[i];
    case POOT_DTYPE_U8:
    case POOT_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    case POOT_DTYPE_I16: {
      int16_t v;
      memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case POOT_DTYPE_I32: {
      int32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case POOT_DTYPE_U32: {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case POOT_DTYPE_I64: {
      int64_t v;
      memcpy(&v, p + 8 * i, 8);
      return v;
    }
    default: return 0;
  }
}

/* Stores the low bits of v (wrapping). Bool stores v != 0. */
static inline void ev_store_int(uint8_t *p, poot_dtype dt, int64_t i, uint64_t v) {
  switch (dt) {
    case POOT_DTYPE_I8:
    case POOT_DTYPE_U8: p[i] = (uint8_t)v; break;
    case POOT_DTYPE_BOOL: p[i] = v != 0; break;
    case POOT_DTYPE_I16: {
      uint16_t w = (uint16_t)v;
      memcpy(p + 2 * i, &w, 2);
      break;
    }
    case POOT_DTYPE_I32:
    case POOT_DTYPE_U32: {
      uint32_t w = (uint32_t)v;
      memcpy(p + 4 * i, &w, 4);
      break;
    }
    case POOT_DTYPE_I64: memcpy(p + 8 * i, &v, 8); break;
    default: break;
  }
}

/* Sign-extends the low `bits` of v (the value an integer of that width and
 * signedness holds). */
static inline int64_t ev_wrap(uint64_t v, poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_I8: return (int8_t)(uint8_t)v;
    case POOT_DTYPE_U8: return (uint8_t)v;
    case POOT_DTYPE_BOOL: return v != 0;
    case POOT_DTYPE_I16: return (int16_t)(uint16_t)v;
    case POOT_DTYPE_I32: return (int32_t)(uint32_t)v;
    case POOT_DTYPE_U32: return (uint32_t)v;
    case POOT_DTYPE_I64: return (int64_t)v;
    default: return 0;
  }
}

/* A float element (f32/f16/bf16) as f32 (exact). */
static inline float ev_load_float(const uint8_t *p, poot_dtype dt, int64_t i) {
  switch (dt) {
    case POOT_DTYPE_F32: {
      float v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case POOT_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return poot_f16_to_f32(h);
    }
    case POOT_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return poot_bf16_to_f32(h);
    }
    default: return 0.0f;
  }
}

/* Stores an f32, rounding to nearest even for f16/bf16. */
static inline void ev_store_float(uint8_t *p, poot_dtype dt, int64_t i, float v) {
  switch (dt) {
    case POOT_DTYPE_F32: memcpy(p + 4 * i, &v, 4); break;
    case POOT_DTYPE_F16: {
      uint16_t h = poot_f32_to_f16(v);
      memcpy(p + 2 * i, &h, 2);
      break;
    }
    case POOT_DTYPE_BF16: {
      uint16_t h = poot_f32_to_bf16(v);
      memcpy(p + 2 * i, &h, 2);
      break;
    }
    default: break;
  }
}

/* Rounds an f32 to the precision of a float dtype (identity for f32). */
static inline float ev_round_to(poot_dtype dt, float v) {
  if (dt == POOT_DTYPE_F16) return poot_f16_to_f32(poot_f32_to_f16(v));
  if (dt == POOT_DTYPE_BF16) return poot_bf16_to_f32(poot_f32_to_bf16(v));
  return v;
}

/* Scalar conversions with the rules of `convert` (defined in eval_convert.c).
 * ev_to_float: element i of (p, src) as a value of float dtype `dst`, i.e.
 * rounded once to nearest even to dst's precision, returned as f32.
 * ev_to_int: element i as integer dtype `dst` (wrapped or saturated),
 * sign-extended. */
float poot__eval_to_float(const uint8_t *p, poot_dtype src, int64_t i, poot_dtype dst);
int64_t poot__eval_to_int(const uint8_t *p, poot_dtype src, int64_t i, poot_dtype dst);
/* Integer to float dtype, one rounding to nearest even. */
float poot__eval_int_to_float(int64_t v, bool is_unsigned, poot_dtype dst);
/* Float to integer dtype: truncate, saturate, NaN → 0. */
int64_t poot__eval_float_to_int(float v, poot_dtype dst);

/* Row-major strides (in elements) of a shape. */
static inline void ev_strides(const poot_shape *s, int64_t *strides) {
  int64_t acc = 1;
  for (int d = (int)s->rank - 1; d >= 0; d--) {
    strides[d] = acc;
    acc *= s->dims[d];
  }
}

/* Splits a row-major flat index into coordinates. */
static inline void ev_unflatten(const poot_shape *s, int64_t flat, int64_t *coord) {
  for (int d = (int)s->rank - 1; d >= 0; d--) {
    int64_t n = s->dims[d];
    coord[d] = n ? flat % n : 0;
    flat = n ? flat / n : 0;
  }
}

#endif /* POOT_EVAL_IMPL_H */
