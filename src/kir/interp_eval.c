/* The interpreter's scalar semantics: decoding, arithmetic, conversions.
 * Each function works on one lane's bit pattern; kir.h states the rules. */
#include <math.h>
#include <string.h>

#include "interp_impl.h"

/* No a*b+c expressions here: every float operation rounds on its own (the
 * build uses -std=c17, where gcc does not contract; clang contracts only
 * within one expression, and none is written). */

int64_t poot__kir_as_int(poot_kir_scalar s, uint64_t b) {
  switch (s) {
    case POOT_KIR_BOOL:
      return (int64_t)(b & 1);
    case POOT_KIR_I8:
      return (int8_t)b;
    case POOT_KIR_U8:
      return (uint8_t)b;
    case POOT_KIR_I16:
      return (int16_t)b;
    case POOT_KIR_U16:
      return (uint16_t)b;
    case POOT_KIR_I32:
      return (int32_t)b;
    case POOT_KIR_U32:
      return (uint32_t)b;
    default:
      return (int64_t)b;
  }
}

float poot__kir_as_float(poot_kir_scalar s, uint64_t b) {
  switch (s) {
    case POOT_KIR_F16:
      return poot_f16_to_f32((uint16_t)b);
    case POOT_KIR_BF16:
      return poot_bf16_to_f32((uint16_t)b);
    default:
      return poot_f32_from_bits((uint32_t)b);
  }
}

uint64_t poot__kir_from_int(poot_kir_scalar s, uint64_t v) {
  switch (s) {
    case POOT_KIR_BOOL:
      return v != 0;
    case POOT_KIR_I8:
    case POOT_KIR_U8:
      return v & 0xffu;
    case POOT_KIR_I16:
    case POOT_KIR_U16:
      return v & 0xffffu;
    case POOT_KIR_I32:
    case POOT_KIR_U32:
      return v & 0xffffffffu;
    default:
      return v;
  }
}

uint64_t poot__kir_from_float(poot_kir_scalar s, float f) {
  switch (s) {
    case POOT_KIR_F16:
      return poot_f32_to_f16(f);
    case POOT_KIR_BF16:
      return poot_f32_to_bf16(f);
    default:
      return poot_f32_bits(f);
  }
}

static void int_range(poot_kir_scalar s, double *lo, double *hi, int64_t *ilo, int64_t *ihi) {
  switch (s) {
    case POOT_KIR_I8:
      *ilo = INT8_MIN, *ihi = INT8_MAX;
      break;
    case POOT_KIR_U8:
      *ilo = 0, *ihi = UINT8_MAX;
      break;
    case POOT_KIR_I16:
      *ilo = INT16_MIN, *ihi = INT16_MAX;
      break;
    case POOT_KIR_U16:
      *ilo = 0, *ihi = UINT16_MAX;
      break;
    case POOT_KIR_I32:
      *ilo = INT32_MIN, *ihi = INT32_MAX;
      break;
    case POOT_KIR_U32:
      *ilo = 0, *ihi = UINT32_MAX;
      break;
    default:
      *ilo = INT64_MIN, *ihi = INT64_MAX;
      break;
  }
  *lo = (double)*ilo;
  *hi = (double)*ihi;
}

uint64_t poot__kir_convert(poot_kir_scalar from, poot_kir_scalar to, uint64_t b) {
  if (from == to) return b;
  bool ffloat = poot_kir_scalar_is_float(from);
  if (to == POOT_KIR_BOOL) {
    if (ffloat) return poot__kir_as_float(from, b) != 0.0f; /* NaN != 0 is true */
    return poot__kir_as_int(from, b) != 0;
  }
  if (poot_kir_scalar_is_float(to)) {
    float f;
    if (ffloat)
      f = poot__kir_as_float(from, b); /* widening is exact; narrowing rounds below */
    else if (from == POOT_KIR_U32)
      f = (float)(uint32_t)b;
    else
      f = (float)poot__kir_as_int(from, b); /* i64 → f32 rounds to nearest even */
    return poot__kir_from_float(to, f);
  }
  /* to an integer */
  if (ffloat) {
    float f = poot__kir_as_float(from, b);
    double lo, hi;
    int64_t ilo, ihi;
    int_range(to, &lo, &hi, &ilo, &ihi);
    if (isnan(f)) return 0;
    double t = trunc((double)f);
    int64_t v;
    if (t <= lo)
      v = ilo;
    else if (t >= hi) /* for i64, hi rounds up to 2^63: ≥ covers it */
      v = ihi;
    else
      v = (int64_t)t;
    return poot__kir_from_int(to, (uint64_t)v);
  }
  return poot__kir_from_int(to, (uint64_t)poot__kir_as_int(from, b));
}

static float fop1(poot_kir_op op, float x) {
  switch (op) {
    case POOT_KIR_OP_NEG:
      return -x;
    case POOT_KIR_OP_ABS:
      return fabsf(x);
    case POOT_KIR_OP_EXP:
      return expf(x);
    case POOT_KIR_OP_EXP2:
      return exp2f(x);
    case POOT_KIR_OP_LOG:
      return logf(x);
    case POOT_KIR_OP_LOG2:
      return log2f(x);
    case POOT_KIR_OP_SQRT:
      return sqrtf(x);
    case POOT_KIR_OP_RSQRT:
      return 1.0f / sqrtf(x);
    case POOT_KIR_OP_SIN:
      return sinf(x);
    case POOT_KIR_OP_COS:
      return cosf(x);
    case POOT_KIR_OP_TANH:
      return tanhf(x);
    case POOT_KIR_OP_ERF:
      return erff(x);
    case POOT_KIR_OP_FLOOR:
      return floorf(x);
    case POOT_KIR_OP_CEIL:
      return ceilf(x);
    default:
      return NAN;
  }
}

/* An op a lane cannot evaluate: INVALID_ARGUMENT with the reason (the
 * interpreter adds the kernel, statement and thread). */
static poot_status undefined(const char *why) {
  return poot_status_make(POOT_INVALID_ARGUMENT, "%s", why);
}

poot_status poot__kir_unary(poot_kir_op op, poot_kir_scalar s, uint64_t a, uint64_t *out) {
  if (s == POOT_KIR_F16 || s == POOT_KIR_F32 || s == POOT_KIR_BF16) {
    *out = poot__kir_from_float(s, fop1(op, poot__kir_as_float(s, a)));
    return POOT_OK_STATUS;
  }
  if (s == POOT_KIR_BOOL) {
    *out = op == POOT_KIR_OP_NOT ? !(a & 1) : a;
    return POOT_OK_STATUS;
  }
  int64_t v = poot__kir_as_int(s, a);
  switch (op) {
    case POOT_KIR_OP_NEG:
      *out = poot__kir_from_int(s, 0u - (uint64_t)v);
      return POOT_OK_STATUS;
    case POOT_KIR_OP_NOT:
      *out = poot__kir_from_int(s, ~(uint64_t)v);
      return POOT_OK_STATUS;
    case POOT_KIR_OP_ABS:
      *out = poot__kir_from_int(s, v < 0 ? 0u - (uint64_t)v : (uint64_t)v);
      return POOT_OK_STATUS;
    default:
      return undefined("unary op not defined on integers");
  }
}

static unsigned width_of(poot_kir_scalar s) {
  return (unsigned)poot_kir_scalar_size(s) * 8u;
}

poot_status poot__kir_binary(poot_kir_op op, poot_kir_scalar s, uint64_t a, uint64_t b,
                             uint64_t *out) {
  if (s == POOT_KIR_F16 || s == POOT_KIR_F32 || s == POOT_KIR_BF16) {
    float x = poot__kir_as_float(s, a), y = poot__kir_as_float(s, b);
    float r;
    switch (op) {
      case POOT_KIR_OP_ADD:
        r = x + y;
        break;
      case POOT_KIR_OP_SUB:
        r = x - y;
        break;
      case POOT_KIR_OP_MUL:
        r = x * y;
        break;
      case POOT_KIR_OP_DIV:
        r = x / y;
        break;
      case POOT_KIR_OP_MIN:
        r = fminf(x, y);
        break;
      case POOT_KIR_OP_MAX:
        r = fmaxf(x, y);
        break;
      case POOT_KIR_OP_POW:
        r = powf(x, y);
        break;
      case POOT_KIR_OP_EQ:
        *out = x == y;
        return POOT_OK_STATUS;
      case POOT_KIR_OP_NE:
        *out = x != y;
        return POOT_OK_STATUS;
      case POOT_KIR_OP_LT:
        *out = x < y;
        return POOT_OK_STATUS;
      case POOT_KIR_OP_LE:
        *out = x <= y;
        return POOT_OK_STATUS;
      case POOT_KIR_OP_GT:
        *out = x > y;
        return POOT_OK_STATUS;
      case POOT_KIR_OP_GE:
        *out = x >= y;
        return POOT_OK_STATUS;
      default:
        return undefined("binary op not defined on floats");
    }
    *out = poot__kir_from_float(s, r);
    return POOT_OK_STATUS;
  }
  bool sg = poot_kir_scalar_is_signed(s);
  int64_t x = poot__kir_as_int(s, a), y = poot__kir_as_int(s, b);
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  /* Unsigned values are zero-extended, so signed compares work for u32. */
  switch (op) {
    case POOT_KIR_OP_ADD:
      *out = poot__kir_from_int(s, ux + uy);
      return POOT_OK_STATUS;
    case POOT_KIR_OP_SUB:
      *out = poot__kir_from_int(s, ux - uy);
      return POOT_OK_STATUS;
    case POOT_KIR_OP_MUL:
      *out = poot__kir_from_int(s, ux * uy);
      return POOT_OK_STATUS;
    case POOT_KIR_OP_DIV:
    case POOT_KIR_OP_REM: {
      if (y == 0) return undefined("integer division by zero");
      if (sg) {
        int64_t mn = s == POOT_KIR_I32 ? INT32_MIN : INT64_MIN;
        if (x == mn && y == -1) return undefined("signed division overflow (MIN / -1)");
        *out = poot__kir_from_int(s, (uint64_t)(op == POOT_KIR_OP_DIV ? x / y : x % y));
      } else {
        *out = poot__kir_from_int(s, op == POOT_KIR_OP_DIV ? ux / uy : ux % uy);
      }
      return POOT_OK_STATUS;
    }
    case POOT_KIR_OP_MIN:
    case POOT_KIR_OP_MAX: {
      bool less = (sg || s == POOT_KIR_U32) ? x < y : ux < uy;
      if (!sg && s == POOT_KIR_I64) less = x < y;
      bool pick_x = op == POOT_KIR_OP_MIN ? less : !less;
      *out = pick_x ? a : b;
      return POOT_OK_STATUS;
    }
    case POOT_KIR_OP_AND:
      *out = a & b;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_OR:
      *out = a | b;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_XOR:
      *out = a ^ b;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_SHL:
    case POOT_KIR_OP_SHR: {
      uint64_t amount = poot__kir_from_int(s, uy);
      if (amount >= width_of(s)) return undefined("shift amount out of range (>= bit width)");
      if (op == POOT_KIR_OP_SHL)
        *out = poot__kir_from_int(s, ux << amount);
      else if (sg)
        *out = poot__kir_from_int(s, (uint64_t)(x >> amount));
      else
        *out = poot__kir_from_int(s, poot__kir_from_int(s, ux) >> amount);
      return POOT_OK_STATUS;
    }
    case POOT_KIR_OP_EQ:
      *out = x == y;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_NE:
      *out = x != y;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_LT:
      *out = x < y;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_LE:
      *out = x <= y;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_GT:
      *out = x > y;
      return POOT_OK_STATUS;
    case POOT_KIR_OP_GE:
      *out = x >= y;
      return POOT_OK_STATUS;
    default:
      return undefined("binary op not defined on integers");
  }
}

uint64_t poot__kir_fma(poot_kir_scalar s, uint64_t a, uint64_t b, uint64_t c) {
  float r = fmaf(poot__kir_as_float(s, a), poot__kir_as_float(s, b), poot__kir_as_float(s, c));
  return poot__kir_from_float(s, r);
}

void poot__kir_bitcast(poot_kir_type from, const uint64_t *in, poot_kir_type to, uint64_t *out) {
  unsigned char bytes[32];
  size_t fs = poot_kir_scalar_size((poot_kir_scalar)from.scalar);
  size_t ts = poot_kir_scalar_size((poot_kir_scalar)to.scalar);
  for (uint32_t l = 0; l < from.lanes; l++) memcpy(bytes + l * fs, &in[l], fs); /* little endian */
  for (uint32_t l = 0; l < to.lanes; l++) {
    uint64_t v = 0;
    memcpy(&v, bytes + l * ts, ts);
    out[l] = v;
  }
}
