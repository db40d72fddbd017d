/* Elementwise ops: arithmetic, bitwise, math, compare, select, convert and
 * bitcast. Each element is computed on its own, so the order is simply the
 * one written in each function; floats are loaded to f32 exactly, computed
 * with one correctly rounded f32 operation (or one C library call), and
 * rounded to the value's dtype on store. Integers are loaded sign- or
 * zero-extended to 64 bits, computed in uint64_t (wrapping, never undefined)
 * and stored by truncation to their width. */
#include "eval_impl.h"

#include <math.h>

/* ---------------------------------------------------------- conversions */

float poot__eval_int_to_float(int64_t v, bool is_unsigned, poot_dtype dst) {
  const int p = dst == POOT_DTYPE_F16 ? 11 : dst == POOT_DTYPE_BF16 ? 8 : 24;
  const bool neg = !is_unsigned && v < 0;
  uint64_t m = neg ? 0 - (uint64_t)v : (uint64_t)v;
  if (m == 0) return 0.0f;
  int len = 64 - __builtin_clzll(m);
  int shift = 0;
  if (len > p) {
    /* Round the magnitude to p significant bits, ties to even. */
    shift = len - p;
    const uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
    const uint64_t half = UINT64_C(1) << (shift - 1);
    m >>= shift;
    if (rem > half || (rem == half && (m & 1))) m++;
  }
  /* m ≤ 2^p is exact in f32 and the scaling by 2^shift is exact too. */
  float f = ldexpf((float)m, shift);
  f = ev_round_to(dst, f); /* only overflow (f16: ≥ 65520 → inf) changes it */
  return neg ? -f : f;
}

int64_t poot__eval_float_to_int(float v, poot_dtype dst) {
  if (dst == POOT_DTYPE_BOOL) return v != 0.0f; /* NaN != 0 is true */
  if (isnan(v)) return 0;
  const double t = trunc((double)v);
  double lo, hi;
  switch (dst) {
    case POOT_DTYPE_I8: lo = -128.0, hi = 127.0; break;
    case POOT_DTYPE_U8: lo = 0.0, hi = 255.0; break;
    case POOT_DTYPE_I16: lo = -32768.0, hi = 32767.0; break;
    case POOT_DTYPE_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case POOT_DTYPE_U32: lo = 0.0, hi = 4294967295.0; break;
    case POOT_DTYPE_I64:
      if (t >= 9223372036854775808.0) return INT64_MAX;
      if (t <= -9223372036854775808.0) return INT64_MIN;
      return (int64_t)t;
    default: return 0;
  }
  if (t <= lo) return (int64_t)lo;
  if (t >= hi) return (int64_t)hi;
  return (int64_t)t;
}

float poot__eval_to_float(const uint8_t *p, poot_dtype src, int64_t i, poot_dtype dst) {
  if (poot_dtype_is_float(src)) return ev_round_to(dst, ev_load_float(p, src, i));
  return poot__eval_int_to_float(ev_load_int(p, src, i), !ev_is_signed_int(src), dst);
}

int64_t poot__eval_to_int(const uint8_t *p, poot_dtype src, int64_t i, poot_dtype dst) {
  if (poot_dtype_is_float(src)) return poot__eval_float_to_int(ev_load_float(p, src, i), dst);
  return ev_wrap((uint64_t)ev_load_int(p, src, i), dst);
}

/* ------------------------------------------------------- binary scalars */

static float f_max(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? b : a; /* -0 < +0 */
  return a > b ? a : b;
}

static float f_min(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

static float float_binary(poot_op op, float a, float b) {
  switch (op) {
    case POOT_OP_ADD: return a + b;
    case POOT_OP_SUB: return a - b;
    case POOT_OP_MUL: return a * b;
    case POOT_OP_DIV: return a / b;
    case POOT_OP_REM: return fmodf(a, b);
    case POOT_OP_MAX: return f_max(a, b);
    case POOT_OP_MIN: return f_min(a, b);
    case POOT_OP_POW: return powf(a, b);
    default: return 0.0f;
  }
}

/* Integer power by squaring, wrapping modulo 2^64 (the same as repeated
 * multiplication). */
static uint64_t int_pow(int64_t base, int64_t e, bool is_signed) {
  if (is_signed && e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? (uint64_t)-1 : 1;
    return 0;
  }
  uint64_t r = 1, b = (uint64_t)base, k = (uint64_t)e;
  while (k) {
    if (k & 1) r *= b;
    b *= b;
    k >>= 1;
  }
  return r;
}

static uint64_t int_binary(poot_op op, int64_t a, int64_t b, poot_dtype dt) {
  const bool sgn = ev_is_signed_int(dt);
  const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  const int64_t bits = ev_int_bits(dt);
  switch (op) {
    case POOT_OP_ADD: return ua + ub;
    case POOT_OP_SUB: return ua - ub;
    case POOT_OP_MUL: return ua * ub;
    case POOT_OP_DIV:
      if (b == 0) return UINT64_MAX;   /* all bits set */
      if (b == -1) return 0 - ua;      /* INT_MIN / -1 = INT_MIN (wraps) */
      return (uint64_t)(a / b);        /* C: truncation toward zero */
    case POOT_OP_REM:
      if (b == 0) return ua;
      if (b == -1) return 0;
      return (uint64_t)(a % b);        /* C: sign of the dividend */
    case POOT_OP_MAX: return a > b ? ua : ub;
    case POOT_OP_MIN: return a < b ? ua : ub;
    case POOT_OP_POW: return int_pow(a, b, sgn);
    case POOT_OP_AND: return ua & ub;
    case POOT_OP_OR: return ua | ub;
    case POOT_OP_XOR: return ua ^ ub;
    case POOT_OP_SHL:
      if (b < 0 || b >= bits) return 0;
      return ua << b;
    case POOT_OP_SHR:
      if (b < 0 || b >= bits) return (sgn && a < 0) ? UINT64_MAX : 0;
      if (sgn && a < 0) return ~(~ua >> b); /* arithmetic shift */
      return ua >> b;
    default: return 0;
  }
}

static poot_status binary(const poot_node *node, ev_buf *const *in, ev_buf *const *out) {
  const poot_dtype dt = in[0]->type.dtype;
  const int64_t n = out[0]->count;
  if (poot_dtype_is_float(dt)) {
    for (int64_t i = 0; i < n; i++) {
      const float a = ev_load_float(in[0]->data, dt, i), b = ev_load_float(in[1]->data, dt, i);
      ev_store_float(out[0]->data, dt, i, float_binary(node->op, a, b));
    }
  } else if (poot_dtype_is_int(dt) || dt == POOT_DTYPE_BOOL) {
    for (int64_t i = 0; i < n; i++) {
      const int64_t a = ev_load_int(in[0]->data, dt, i), b = ev_load_int(in[1]->data, dt, i);
      ev_store_int(out[0]->data, dt, i, int_binary(node->op, a, b, dt));
    }
  } else {
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (%s) on %s", node->id,
                            poot_op_name(node->op), poot_dtype_name(dt));
  }
  return POOT_OK_STATUS;
}

/* The reference routine of every op of this class (poot/graph_ops.h). */
poot_status poot__eval_binary(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  (void)ctx;
  return binary(node, in, out);
}

/* -------------------------------------------------------- unary scalars */

static float float_unary(poot_op op, float x) {
  switch (op) {
    case POOT_OP_NEG: return -x;
    case POOT_OP_ABS: return fabsf(x);
    case POOT_OP_SIGN:
      if (isnan(x) || x == 0.0f) return x; /* NaN stays, ±0 keep their sign */
      return x > 0.0f ? 1.0f : -1.0f;
    case POOT_OP_EXP: return expf(x);
    case POOT_OP_EXP2: return exp2f(x);
    case POOT_OP_LOG: return logf(x);
    case POOT_OP_LOG2: return log2f(x);
    case POOT_OP_SQRT: return sqrtf(x);
    case POOT_OP_RSQRT: {
      const float r = sqrtf(x);
      return 1.0f / r;
    }
    case POOT_OP_SIN: return sinf(x);
    case POOT_OP_COS: return cosf(x);
    case POOT_OP_TANH: return tanhf(x);
    case POOT_OP_ERF: return erff(x);
    case POOT_OP_FLOOR: return floorf(x);
    case POOT_OP_CEIL: return ceilf(x);
    case POOT_OP_ROUND: return roundf(x);
    case POOT_OP_SIGMOID: {
      const float e = expf(-x);
      const float d = 1.0f + e;
      return 1.0f / d;
    }
    default: return 0.0f;
  }
}

static uint64_t int_unary(poot_op op, int64_t a, poot_dtype dt) {
  const uint64_t ua = (uint64_t)a;
  switch (op) {
    case POOT_OP_NEG: return 0 - ua;
    case POOT_OP_ABS: return a < 0 ? 0 - ua : ua;
    case POOT_OP_SIGN: return a < 0 ? UINT64_MAX : a > 0 ? 1 : 0;
    case POOT_OP_NOT: return dt == POOT_DTYPE_BOOL ? (uint64_t)(a == 0) : ~ua;
    default: return 0;
  }
}

static poot_status unary(const poot_node *node, ev_buf *const *in, ev_buf *const *out) {
  const poot_dtype dt = in[0]->type.dtype;
  const int64_t n = out[0]->count;
  if (poot_dtype_is_float(dt) && node->op != POOT_OP_NOT) {
    for (int64_t i = 0; i < n; i++)
      ev_store_float(out[0]->data, dt, i, float_unary(node->op, ev_load_float(in[0]->data, dt, i)));
  } else if ((poot_dtype_is_int(dt) || dt == POOT_DTYPE_BOOL) &&
             (node->op == POOT_OP_NEG || node->op == POOT_OP_ABS || node->op == POOT_OP_SIGN ||
              node->op == POOT_OP_NOT)) {
    for (int64_t i = 0; i < n; i++)
      ev_store_int(out[0]->data, dt, i, int_unary(node->op, ev_load_int(in[0]->data, dt, i), dt));
  } else {
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (%s) on %s", node->id,
                            poot_op_name(node->op), poot_dtype_name(dt));
  }
  return POOT_OK_STATUS;
}

/* The reference routine of every op of this class (poot/graph_ops.h). */
poot_status poot__eval_unary(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                             ev_buf *const *out) {
  (void)ctx;
  return unary(node, in, out);
}

/* -------------------------------------------------------------- compare */

static bool cmp_result(poot_op op, int c, bool unordered) {
  /* c: -1, 0, +1 for ordered operands. */
  if (unordered) return op == POOT_OP_NE;
  switch (op) {
    case POOT_OP_EQ: return c == 0;
    case POOT_OP_NE: return c != 0;
    case POOT_OP_LT: return c < 0;
    case POOT_OP_LE: return c <= 0;
    case POOT_OP_GT: return c > 0;
    case POOT_OP_GE: return c >= 0;
    default: return false;
  }
}

static poot_status compare(const poot_node *node, ev_buf *const *in, ev_buf *const *out) {
  const poot_dtype dt = in[0]->type.dtype;
  const int64_t n = out[0]->count;
  if (poot_dtype_is_packed(dt))
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (%s) on %s", node->id,
                            poot_op_name(node->op), poot_dtype_name(dt));
  for (int64_t i = 0; i < n; i++) {
    int c = 0;
    bool unordered = false;
    if (poot_dtype_is_float(dt)) {
      const float a = ev_load_float(in[0]->data, dt, i), b = ev_load_float(in[1]->data, dt, i);
      unordered = isnan(a) || isnan(b);
      c = a < b ? -1 : a > b ? 1 : 0; /* -0 == +0 */
    } else {
      const int64_t a = ev_load_int(in[0]->data, dt, i), b = ev_load_int(in[1]->data, dt, i);
      c = a < b ? -1 : a > b ? 1 : 0;
    }
    out[0]->data[i] = cmp_result(node->op, c, unordered);
  }
  return POOT_OK_STATUS;
}

/* The reference routine of every op of this class (poot/graph_ops.h). */
poot_status poot__eval_compare(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                               ev_buf *const *out) {
  (void)ctx;
  return compare(node, in, out);
}

/* ------------------------------------------------- select, convert, bitcast */

poot_status poot__eval_select(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                              ev_buf *const *out) {
  (void)ctx;
  const size_t eb = ev_elem_bytes(out[0]->type.dtype);
  if (!eb)
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (select) on a packed dtype",
                            node->id);
  for (int64_t i = 0; i < out[0]->count; i++) {
    const ev_buf *src = in[0]->data[i] ? in[1] : in[2];
    memcpy(out[0]->data + (size_t)i * eb, src->data + (size_t)i * eb, eb);
  }
  return POOT_OK_STATUS;
}

poot_status poot__eval_convert(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                               ev_buf *const *out) {
  (void)ctx;
  const poot_dtype src = in[0]->type.dtype, dst = out[0]->type.dtype;
  if (poot_dtype_is_packed(src) || poot_dtype_is_packed(dst))
    return poot_status_make(POOT_UNSUPPORTED, "eval: node %%%u (convert) of a packed dtype",
                            node->id);
  for (int64_t i = 0; i < out[0]->count; i++) {
    if (poot_dtype_is_float(dst)) {
      ev_store_float(out[0]->data, dst, i, poot__eval_to_float(in[0]->data, src, i, dst));
    } else {
      ev_store_int(out[0]->data, dst, i, (uint64_t)poot__eval_to_int(in[0]->data, src, i, dst));
    }
  }
  return POOT_OK_STATUS;
}

poot_status poot__eval_bitcast(ev_ctx *ctx, const poot_node *node, ev_buf *const *in,
                               ev_buf *const *out) {
  (void)ctx;
  if (in[0]->size != out[0]->size)
    return poot_status_make(POOT_INVALID_ARGUMENT, "eval: node %%%u (bitcast): sizes differ",
                            node->id);
  if (out[0]->size) memcpy(out[0]->data, in[0]->data, out[0]->size);
  return POOT_OK_STATUS;
}
