/* The KIR corpus, part two: conversions at every pair of types, math,
 * arithmetic per type, vectors and bitcasts, atomics, shuffles, divergent
 * loops, 2-D/3-D grids and slot params. */
#include <math.h>
#include <string.h>

#include "corpus_impl.h"

static uint32_t div_up(uint32_t a, uint32_t b) {
  return (a + b - 1) / b;
}

/* ------------------------------------------------------------ conversions */

/* The reference conversion, written independently of the interpreter from
 * the rules in kir.h. */
static uint64_t ref_convert(poot_kir_scalar from, poot_kir_scalar to, uint64_t bits) {
  bool isf = poot_kir_scalar_is_float(from);
  double fv = 0;
  int64_t iv = 0;
  if (isf) {
    fv = kc_dec_f(from, bits);
  } else {
    switch (from) {
      case POOT_KIR_BOOL:
        iv = (int64_t)(bits & 1);
        break;
      case POOT_KIR_I8:
        iv = (int8_t)bits;
        break;
      case POOT_KIR_U8:
        iv = (uint8_t)bits;
        break;
      case POOT_KIR_I16:
        iv = (int16_t)bits;
        break;
      case POOT_KIR_U16:
        iv = (uint16_t)bits;
        break;
      case POOT_KIR_I32:
        iv = (int32_t)bits;
        break;
      case POOT_KIR_U32:
        iv = (uint32_t)bits;
        break;
      default:
        iv = (int64_t)bits;
        break;
    }
  }
  if (to == POOT_KIR_BOOL) return isf ? (fv != 0.0) : (iv != 0);
  if (poot_kir_scalar_is_float(to)) {
    float f = isf ? (float)fv : (float)iv;
    return kc_enc_f(to, f);
  }
  if (!isf) return (uint64_t)iv; /* wraps when stored (low bytes kept) */
  if (isnan(fv)) return 0;
  double t = trunc(fv);
  int64_t lo, hi;
  switch (to) {
    case POOT_KIR_I8:
      lo = -128, hi = 127;
      break;
    case POOT_KIR_U8:
      lo = 0, hi = 255;
      break;
    case POOT_KIR_I16:
      lo = -32768, hi = 32767;
      break;
    case POOT_KIR_U16:
      lo = 0, hi = 65535;
      break;
    case POOT_KIR_I32:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    case POOT_KIR_U32:
      lo = 0, hi = UINT32_MAX;
      break;
    default:
      if (t >= 9223372036854775808.0) return (uint64_t)INT64_MAX;
      if (t <= -9223372036854775808.0) return (uint64_t)INT64_MIN;
      return (uint64_t)(int64_t)t;
  }
  if (t >= (double)hi) return (uint64_t)hi;
  if (t <= (double)lo) return (uint64_t)lo;
  return (uint64_t)(int64_t)t;
}

/* arg0 = source, arg1 = destination; bool travels as u8 in memory. */
static poot_status conv_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0, d = (poot_kir_scalar)c->arg1;
  poot_kir_scalar ms = s == POOT_KIR_BOOL ? POOT_KIR_U8 : s;
  poot_kir_scalar md = d == POOT_KIR_BOOL ? POOT_KIR_U8 : d;
  uint32_t ri, ro;
  poot_kir_value n, gid, x, y;
  POOT_TRY(kc_binding(b, "src", 0, ms, POOT_KIR_ACCESS_READ, &ri));
  POOT_TRY(kc_binding(b, "dst", 1, md, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ri, gid, 1, &x));
  if (s == POOT_KIR_BOOL) POOT_TRY(poot_kir_convert(b, POOT_KIR_BOOL, x, &x));
  POOT_TRY(poot_kir_convert(b, d, x, &y));
  if (d == POOT_KIR_BOOL) POOT_TRY(poot_kir_convert(b, POOT_KIR_U8, y, &y));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, y));
  return poot_kir_end(b);
}

static poot_status conv_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, conv_body, c, t, out);
}

static const double float_specials[] = {
    0.0,          -0.0,         1.0,           -1.0,         0.5,          1.5,
    2.5,          -2.5,         0.49999997,    65504.0,      65519.99,     65520.0,
    1e10,         -1e10,        INFINITY,      -INFINITY,    NAN,          1e-8,
    6e-8,         127.9,        128.0,         255.5,        256.0,        -128.5,
    -129.0,       32767.5,      32768.0,       65535.9,      65536.0,      16777217.0,
    2147483520.0, 2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 9.2e18,
    9.3e18,       -9.3e18,      1.00048828125, 1.001953125,  1.00390625,   1.005859375,
    1.0009765625, 3.0e38,       -3.0e38,       1e-40,        -0.75,        -1.99};
static const int64_t int_specials[] = {0,
                                       1,
                                       -1,
                                       127,
                                       128,
                                       -128,
                                       -129,
                                       255,
                                       256,
                                       32767,
                                       32768,
                                       -32768,
                                       -32769,
                                       65535,
                                       65536,
                                       16777217,
                                       16777219,
                                       2147483647,
                                       -2147483647 - 1,
                                       4294967295LL,
                                       9007199254740993LL,
                                       INT64_MAX,
                                       INT64_MIN,
                                       0x123456789abcdefLL,
                                       2049,
                                       4097};

static poot_status conv_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0, d = (poot_kir_scalar)c->arg1;
  poot_kir_scalar ms = s == POOT_KIR_BOOL ? POOT_KIR_U8 : s;
  poot_kir_scalar md = d == POOT_KIR_BOOL ? POOT_KIR_U8 : d;
  POOT_TRY(kc_run_init(r, k, size));
  void *src = kc_buf(r, 0, size * poot_kir_scalar_size(ms));
  void *dst = kc_buf(r, 1, size * poot_kir_scalar_size(md));
  if (!src || !dst) return kc_oom(r);
  uint64_t st = seed;
  size_t nfs = sizeof float_specials / sizeof float_specials[0];
  size_t nis = sizeof int_specials / sizeof int_specials[0];
  for (uint32_t i = 0; i < size; i++) {
    uint64_t bits;
    if (s == POOT_KIR_BOOL)
      bits = i % 3 == 0 ? 0 : (kc_rand(&st) & 0xff) | (i % 3 == 1); /* any non-zero byte is true */
    else if (poot_kir_scalar_is_float(s))
      bits = i < nfs   ? kc_enc_f(s, (float)float_specials[i])
             : (i & 1) ? kc_rand(&st)
                       : kc_enc_f(s, kc_randf(&st, -70000.0f, 70000.0f));
    else
      bits = i < nis ? (uint64_t)int_specials[i] : kc_rand(&st);
    kc_put(ms, src, i, bits);
  }
  void *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    uint64_t in = kc_get(ms, src, i);
    uint64_t v = s == POOT_KIR_BOOL
                     ? ref_convert(POOT_KIR_BOOL, d, ref_convert(POOT_KIR_U8, POOT_KIR_BOOL, in))
                     : ref_convert(s, d, in);
    kc_put(md, e, i, v);
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------ math */

typedef struct math_range {
  poot_kir_op op;
  float lo, hi;
} math_range;

static const math_range math_ranges[] = {
    {POOT_KIR_OP_EXP, -20.0f, 20.0f},     {POOT_KIR_OP_EXP2, -20.0f, 20.0f},
    {POOT_KIR_OP_LOG, 1e-3f, 1e3f},       {POOT_KIR_OP_LOG2, 1e-3f, 1e3f},
    {POOT_KIR_OP_SQRT, 0.0f, 1e4f},       {POOT_KIR_OP_RSQRT, 1e-3f, 1e4f},
    {POOT_KIR_OP_SIN, -10.0f, 10.0f},     {POOT_KIR_OP_COS, -10.0f, 10.0f},
    {POOT_KIR_OP_TANH, -8.0f, 8.0f},      {POOT_KIR_OP_ERF, -4.0f, 4.0f},
    {POOT_KIR_OP_FLOOR, -100.0f, 100.0f}, {POOT_KIR_OP_CEIL, -100.0f, 100.0f},
    {POOT_KIR_OP_ABS, -100.0f, 100.0f},   {POOT_KIR_OP_NEG, -100.0f, 100.0f},
    {POOT_KIR_OP_POW, 0.1f, 10.0f},
};

static const math_range *range_of(poot_kir_op op) {
  for (size_t i = 0; i < sizeof math_ranges / sizeof math_ranges[0]; i++)
    if (math_ranges[i].op == op) return &math_ranges[i];
  return &math_ranges[0];
}

/* arg0 = op, arg1 = f32 or f16. POW takes y = b[i] in [-3, 3]. */
static poot_status math_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_op op = (poot_kir_op)c->arg0;
  poot_kir_scalar s = (poot_kir_scalar)c->arg1;
  uint32_t rx, ry, ro;
  poot_kir_value n, gid, x, y, z;
  POOT_TRY(kc_binding(b, "x", 0, s, POOT_KIR_ACCESS_READ, &rx));
  POOT_TRY(kc_binding(b, "y", 1, s, POOT_KIR_ACCESS_READ, &ry));
  POOT_TRY(kc_binding(b, "out", 2, s, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, gid, 1, &x));
  if (op == POOT_KIR_OP_POW) {
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ry, gid, 1, &y));
    POOT_TRY(poot_kir_binary(b, op, x, y, &z));
  } else {
    POOT_TRY(poot_kir_unary(b, op, x, &z));
  }
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, z));
  return poot_kir_end(b);
}

static poot_status math_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, math_body, c, t, out);
}

static float ref_math(poot_kir_op op, float x, float y) {
  switch (op) {
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
    case POOT_KIR_OP_ABS:
      return fabsf(x);
    case POOT_KIR_OP_NEG:
      return -x;
    case POOT_KIR_OP_POW:
      return powf(x, y);
    default:
      return NAN;
  }
}

static poot_status math_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_op op = (poot_kir_op)c->arg0;
  poot_kir_scalar s = (poot_kir_scalar)c->arg1;
  size_t es = poot_kir_scalar_size(s);
  const math_range *mr = range_of(op);
  POOT_TRY(kc_run_init(r, k, size));
  void *x = kc_buf(r, 0, size * es), *y = kc_buf(r, 1, size * es), *o = kc_buf(r, 2, size * es);
  if (!x || !y || !o) return kc_oom(r);
  uint64_t st = seed;
  /* exp of f16 overflows past 11.09: stay clear of the edge. */
  float hi = s == POOT_KIR_F16 && op == POOT_KIR_OP_EXP ? 10.0f : mr->hi;
  for (uint32_t i = 0; i < size; i++) {
    kc_put(s, x, i, kc_enc_f(s, kc_randf(&st, mr->lo, hi)));
    kc_put(s, y, i, kc_enc_f(s, kc_randf(&st, -3.0f, 3.0f)));
  }
  /* Exact ops are exact everywhere; transcendental ones get a bound that
   * covers GPU approximations (PTX ex2/lg2/sin approx, Vulkan's precision
   * rules) relative to the value, plus an absolute floor near zero. */
  bool exact_op = op == POOT_KIR_OP_SQRT || op == POOT_KIR_OP_FLOOR || op == POOT_KIR_OP_CEIL ||
                  op == POOT_KIR_OP_ABS || op == POOT_KIR_OP_NEG;
  double rel = s == POOT_KIR_F16 ? 2e-3 : 2e-5, abs_tol = s == POOT_KIR_F16 ? 2e-3 : 2e-5;
  void *e = kc_expect(r, 2, exact_op ? POOT_KIR_CORPUS_CMP_EXACT : POOT_KIR_CORPUS_CMP_TOL, abs_tol,
                      rel, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    float xv = kc_dec_f(s, kc_get(s, x, i)), yv = kc_dec_f(s, kc_get(s, y, i));
    kc_put(s, e, i, kc_enc_f(s, ref_math(op, xv, yv)));
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------ arithmetic per type */

#define ARITH_K 16u

/* out[i*K + j] = op_j(a[i], b[i]) for the ops of the type (arg0). */
static poot_status arith_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                              const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  bool isf = poot_kir_scalar_is_float(s);
  uint32_t ra, rb, ro;
  poot_kir_value n, gid, x, y, kk, base, r[ARITH_K];
  POOT_TRY(kc_binding(b, "a", 0, s, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "b", 1, s, POOT_KIR_ACCESS_READ, &rb));
  POOT_TRY(kc_binding(b, "out", 2, s, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rb, gid, 1, &y));
  /* Compare results as a bit mask, built with selects of constants. */
  poot_kir_value mask, zero;
  POOT_TRY(poot_kir_const(b, POOT_KIR_U32, 0, &mask));
  zero = mask;
  static const poot_kir_op cmps[6] = {POOT_KIR_OP_LT, POOT_KIR_OP_LE, POOT_KIR_OP_GT,
                                      POOT_KIR_OP_GE, POOT_KIR_OP_EQ, POOT_KIR_OP_NE};
  for (uint32_t i = 0; i < 6; i++) {
    poot_kir_value cnd, bit, sel;
    POOT_TRY(poot_kir_binary(b, cmps[i], x, y, &cnd));
    POOT_TRY(kc_u32(b, 1u << i, &bit));
    POOT_TRY(poot_kir_select(b, cnd, bit, zero, &sel));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, mask, sel, &mask));
  }
  poot_kir_value lt;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_LT, x, y, &lt));
  if (isf) {
    poot_kir_value ay;
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, x, y, &r[0]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_SUB, x, y, &r[1]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, x, y, &r[2]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_DIV, x, y, &r[3]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MIN, x, y, &r[4]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MAX, x, y, &r[5]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NEG, x, &r[6]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_ABS, x, &r[7]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_FLOOR, x, &r[8]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_CEIL, x, &r[9]));
    POOT_TRY(poot_kir_fma(b, x, y, x, &r[10]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_ABS, y, &ay));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_SQRT, ay, &r[11]));
    POOT_TRY(poot_kir_convert(b, s, mask, &r[12]));
    POOT_TRY(poot_kir_select(b, lt, x, y, &r[13]));
    POOT_TRY(poot_kir_convert(b, s, gid, &r[14]));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, r[2], r[3], &r[15]));
  } else {
    poot_kir_value ff, one, yd, sh, wm;
    POOT_TRY(poot_kir_const(b, s, 0xff, &ff));
    POOT_TRY(poot_kir_const(b, s, 1, &one));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, y, ff, &yd));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, yd, one, &yd));
    POOT_TRY(poot_kir_const(b, s, poot_kir_scalar_size(s) * 8 - 1, &wm));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, y, wm, &sh));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, x, y, &r[0]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, x, y, &r[1]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, x, y, &r[2]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_DIV, x, yd, &r[3]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_REM, x, yd, &r[4]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, x, y, &r[5]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_MAX, x, y, &r[6]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, x, y, &r[7]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, x, y, &r[8]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_XOR, x, y, &r[9]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SHL, x, sh, &r[10]));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SHR, x, sh, &r[11]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NEG, x, &r[12]));
    POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_NOT, x, &r[13]));
    if (s == POOT_KIR_U32)
      POOT_TRY(poot_kir_select(b, lt, x, y, &r[14]));
    else
      POOT_TRY(poot_kir_unary(b, POOT_KIR_OP_ABS, x, &r[14]));
    POOT_TRY(poot_kir_convert(b, s, mask, &r[15]));
  }
  POOT_TRY(kc_u32(b, ARITH_K, &kk));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, gid, kk, &base));
  for (uint32_t j = 0; j < ARITH_K; j++) {
    poot_kir_value jj, idx;
    POOT_TRY(kc_u32(b, j, &jj));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, base, jj, &idx));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, r[j]));
  }
  return poot_kir_end(b);
}

static poot_status arith_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                               poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, arith_body, c, t, out);
}

static float rf(poot_kir_scalar s, float v) {
  return kc_dec_f(s, kc_enc_f(s, v));
}

static poot_status arith_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                 uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  bool isf = poot_kir_scalar_is_float(s);
  size_t es = poot_kir_scalar_size(s);
  POOT_TRY(kc_run_init(r, k, size));
  void *a = kc_buf(r, 0, size * es), *bb = kc_buf(r, 1, size * es);
  void *o = kc_buf(r, 2, (size_t)size * ARITH_K * es);
  if (!a || !bb || !o) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) {
    if (isf) {
      kc_put(s, a, i, kc_enc_f(s, kc_randf(&st, -100.0f, 100.0f)));
      /* Every fourth pair is equal, so equality compares are exercised. */
      kc_put(s, bb, i, i % 4 == 3 ? kc_get(s, a, i) : kc_enc_f(s, kc_randf(&st, -100.0f, 100.0f)));
    } else {
      uint64_t x = kc_rand(&st), y = kc_rand(&st);
      if (i % 4 == 3) y = x;
      if (i % 8 == 1) x = (uint64_t) - (int64_t)(x & 0xffff); /* small negatives */
      kc_put(s, a, i, x);
      kc_put(s, bb, i, y);
    }
  }
  /* Every op here is correctly rounded (or exact), so results are
   * bit-exact on every target. */
  void *e = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    uint64_t res[ARITH_K];
    uint64_t ab = kc_get(s, a, i), bbv = kc_get(s, bb, i);
    if (isf) {
      float x = kc_dec_f(s, ab), y = kc_dec_f(s, bbv);
      uint32_t m =
          (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3 | (x == y) << 4 | (x != y) << 5;
      float prod = rf(s, x * y), quo = rf(s, x / y);
      float v[ARITH_K] = {
          x + y,    x - y,         prod,      quo,       fminf(x, y),   fmaxf(x, y),
          -x,       fabsf(x),      floorf(x), ceilf(x),  fmaf(x, y, x), sqrtf(fabsf(y)),
          (float)m, x < y ? x : y, (float)i,  prod * quo};
      for (uint32_t j = 0; j < ARITH_K; j++) res[j] = kc_enc_f(s, v[j]);
    } else {
      int64_t x, y;
      unsigned w = (unsigned)es * 8;
      if (s == POOT_KIR_I32)
        x = (int32_t)ab, y = (int32_t)bbv;
      else if (s == POOT_KIR_U32)
        x = (uint32_t)ab, y = (uint32_t)bbv;
      else
        x = (int64_t)ab, y = (int64_t)bbv;
      uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
      int64_t yd = (y & 0xff) | 1;
      unsigned sh = (unsigned)(uy & (w - 1));
      uint32_t m =
          (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3 | (x == y) << 4 | (x != y) << 5;
      uint64_t wmask = w == 64 ? ~0ull : ((1ull << w) - 1);
      res[0] = ux + uy;
      res[1] = ux - uy;
      res[2] = ux * uy;
      res[3] = (uint64_t)(x / yd);
      res[4] = (uint64_t)(x % yd);
      res[5] = (uint64_t)(x < y ? x : y);
      res[6] = (uint64_t)(x > y ? x : y);
      res[7] = ux & uy;
      res[8] = ux | uy;
      res[9] = ux ^ uy;
      res[10] = ux << sh;
      res[11] = s == POOT_KIR_U32 ? (ux & wmask) >> sh : (uint64_t)(x >> sh);
      res[12] = 0 - ux;
      res[13] = ~ux;
      res[14] = s == POOT_KIR_U32 ? (uint64_t)(x < y ? x : y) : (x < 0 ? 0 - ux : ux);
      res[15] = m;
    }
    for (uint32_t j = 0; j < ARITH_K; j++) kc_put(s, e, (size_t)i * ARITH_K + j, res[j]);
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------ vectors and bitcasts */

/* v = a (f32x4) * splat(s[i]); out1 = v; out2 = vec(v.w, v.z, v.y, v.x);
 * u = a as u32x4 (bitcast) xor 0x80000000; out3 = u. */
static poot_status vec_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                            const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ra, rs, r1, r2, r3;
  poot_kir_value n, gid, four, idx, a, sc, sp, v, e[4], rev, u, sign, sign4, flip;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "s", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &rs));
  POOT_TRY(kc_binding(b, "out1", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, &r1));
  POOT_TRY(kc_binding(b, "out2", 3, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, &r2));
  POOT_TRY(kc_binding(b, "out3", 4, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &r3));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(kc_u32(b, 4, &four));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, gid, four, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, idx, 4, &a));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rs, gid, 1, &sc));
  POOT_TRY(poot_kir_splat(b, 4, sc, &sp));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, a, sp, &v));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r1, idx, v));
  for (uint32_t l = 0; l < 4; l++) POOT_TRY(poot_kir_extract(b, v, 3 - l, &e[l]));
  POOT_TRY(poot_kir_vec(b, 4, e, &rev));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r2, idx, rev));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_U32, 4), a, &u));
  POOT_TRY(kc_u32(b, 0x80000000u, &sign));
  POOT_TRY(poot_kir_splat(b, 4, sign, &sign4));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_XOR, u, sign4, &flip));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r3, idx, flip));
  return poot_kir_end(b);
}

static poot_status vec_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                             poot_kir_kernel **out) {
  return kc_make(c->name, 32, 1, 1, 0, vec_body, c, t, out);
}

static poot_status vec_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                               uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  size_t n4 = (size_t)size * 4;
  float *a = kc_buf(r, 0, n4 * 4), *s = kc_buf(r, 1, size * 4u);
  float *o1 = kc_buf(r, 2, n4 * 4), *o2 = kc_buf(r, 3, n4 * 4);
  uint32_t *o3 = kc_buf(r, 4, n4 * 4);
  if (!a || !s || !o1 || !o2 || !o3) return kc_oom(r);
  uint64_t st = seed;
  for (size_t i = 0; i < n4; i++) a[i] = kc_randf(&st, -10.0f, 10.0f);
  for (uint32_t i = 0; i < size; i++) s[i] = kc_randf(&st, -2.0f, 2.0f);
  float *e1 = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  float *e2 = kc_expect(r, 3, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *e3 = kc_expect(r, 4, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e1 || !e2 || !e3) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++)
    for (uint32_t l = 0; l < 4; l++) {
      float v = a[i * 4 + l] * s[i];
      e1[i * 4 + l] = v;
      e2[i * 4 + 3 - l] = v;
      e3[i * 4 + l] = poot_f32_bits(a[i * 4 + l]) ^ 0x80000000u;
    }
  r->params[0] = size;
  r->grid[0] = div_up(size, 32);
  return POOT_OK_STATUS;
}

/* u32 → f16x2 (swap lanes) → u32; u32 → u16x2 (swap) → u32; u32 → f32 → u32. */
static poot_status bitcast_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ra, r1, r2, r3;
  poot_kir_value n, gid, a, h, h0, h1, hv[2], hs, u, u0, u1, uv[2], us, f, fu, o1, o2;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "out_f16", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &r1));
  POOT_TRY(kc_binding(b, "out_u16", 2, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &r2));
  POOT_TRY(kc_binding(b, "out_f32", 3, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &r3));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &a));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_F16, 2), a, &h));
  POOT_TRY(poot_kir_extract(b, h, 0, &h0));
  POOT_TRY(poot_kir_extract(b, h, 1, &h1));
  hv[0] = h1, hv[1] = h0;
  POOT_TRY(poot_kir_vec(b, 2, hv, &hs));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_U32, 1), hs, &o1));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r1, gid, o1));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_U16, 2), a, &u));
  POOT_TRY(poot_kir_extract(b, u, 0, &u0));
  POOT_TRY(poot_kir_extract(b, u, 1, &u1));
  uv[0] = u1, uv[1] = u0;
  POOT_TRY(poot_kir_vec(b, 2, uv, &us));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_U32, 1), us, &o2));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r2, gid, o2));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_F32, 1), a, &f));
  POOT_TRY(poot_kir_bitcast(b, poot_kir_type_make(POOT_KIR_U32, 1), f, &fu));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r3, gid, fu));
  return poot_kir_end(b);
}

static poot_status bitcast_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                 poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, bitcast_body, c, t, out);
}

static poot_status bitcast_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                   uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, size * 4u);
  if (!a || !kc_buf(r, 1, size * 4u) || !kc_buf(r, 2, size * 4u) || !kc_buf(r, 3, size * 4u))
    return kc_oom(r);
  uint64_t st = seed;
  /* Finite float patterns only: NaN payloads may be canonicalised by a GPU
   * moving a value through a float register. */
  for (uint32_t i = 0; i < size; i++) {
    uint32_t v = (uint32_t)kc_rand(&st);
    if (((v >> 23) & 0xff) == 0xff) v ^= 0x40000000u;
    if (((v >> 10) & 0x1f) == 0x1f) v ^= 0x00004000u;
    if (((v >> 26) & 0x1f) == 0x1f) v ^= 0x10000000u;
    a[i] = v;
  }
  uint32_t *e1 = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *e2 = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *e3 = kc_expect(r, 3, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e1 || !e2 || !e3) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    e1[i] = e2[i] = (a[i] >> 16) | (a[i] << 16);
    e3[i] = a[i];
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- dot4_i8 */

/* out0 = dot4_i8(a (u32), b (i32), c), out1 = dot4_i8(b, a, out0): the four
 * signed byte products, every byte pattern including -128 · -128, and
 * accumulators near the i32 limits (the sum wraps). */
static poot_status dot4_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ra, rb, rc, r0, r1;
  poot_kir_value n, gid, a, bv, cv, o0, o1;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "b", 1, POOT_KIR_I32, POOT_KIR_ACCESS_READ, &rb));
  POOT_TRY(kc_binding(b, "c", 2, POOT_KIR_I32, POOT_KIR_ACCESS_READ, &rc));
  POOT_TRY(kc_binding(b, "out0", 3, POOT_KIR_I32, POOT_KIR_ACCESS_WRITE, &r0));
  POOT_TRY(kc_binding(b, "out1", 4, POOT_KIR_I32, POOT_KIR_ACCESS_WRITE, &r1));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &a));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rb, gid, 1, &bv));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rc, gid, 1, &cv));
  POOT_TRY(poot_kir_dot4_i8(b, a, bv, cv, &o0));
  POOT_TRY(poot_kir_dot4_i8(b, bv, a, o0, &o1));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r0, gid, o0));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, r1, gid, o1));
  return poot_kir_end(b);
}

static poot_status dot4_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, dot4_body, c, t, out);
}

static uint32_t ref_dot4(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t s = c;
  for (int i = 0; i < 4; i++) {
    int32_t x = (int8_t)(a >> (8 * i)), y = (int8_t)(b >> (8 * i));
    s += (uint32_t)(x * y);
  }
  return s;
}

static poot_status dot4_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, size * 4u), *b = kc_buf(r, 1, size * 4u),
           *cc = kc_buf(r, 2, size * 4u);
  if (!a || !b || !cc || !kc_buf(r, 3, size * 4u) || !kc_buf(r, 4, size * 4u)) return kc_oom(r);
  uint64_t st = seed;
  static const uint32_t edge[] = {0x80808080u, 0x7f7f7f7fu, 0xffffffffu, 0x01ff80u, 0};
  for (uint32_t i = 0; i < size; i++) {
    a[i] = i < 5 ? edge[i] : (uint32_t)kc_rand(&st);
    b[i] = i < 5 ? edge[(i + 1) % 5] ^ (i == 0 ? 0 : 0x00800000u) : (uint32_t)kc_rand(&st);
    if (i == 0) b[i] = 0x80808080u; /* -128 · -128 four times */
    cc[i] = i % 3 == 0 ? 0x7fffff00u + (i & 0xff) : (uint32_t)kc_rand(&st);
  }
  uint32_t *e0 = kc_expect(r, 3, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *e1 = kc_expect(r, 4, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e0 || !e1) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    e0[i] = ref_dot4(a[i], b[i], cc[i]);
    e1[i] = ref_dot4(b[i], a[i], e0[i]);
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- atomics */

/* arg0: u32, i32 or f32. Integer types: max/min/add into acc[0..2],
 * exchange at a per-thread slot (old value written out), compare-exchange
 * that succeeds on odd threads. f32: add (of small integers, so the sum is
 * exact in any order) and exchange. */
static poot_status atomics_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  bool isf = s == POOT_KIR_F32;
  uint32_t ra, racc, rx, rxo, rc = 0, rco = 0;
  poot_kir_value n, gid, v, i0, i1, i2, old;
  POOT_TRY(kc_binding(b, "a", 0, s, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "acc", 1, s, POOT_KIR_ACCESS_READ_WRITE, &racc));
  POOT_TRY(kc_binding(b, "xb", 2, s, POOT_KIR_ACCESS_READ_WRITE, &rx));
  POOT_TRY(kc_binding(b, "xo", 3, s, POOT_KIR_ACCESS_WRITE, &rxo));
  if (!isf) {
    POOT_TRY(kc_binding(b, "cb", 4, s, POOT_KIR_ACCESS_READ_WRITE, &rc));
    POOT_TRY(kc_binding(b, "co", 5, s, POOT_KIR_ACCESS_WRITE, &rco));
  }
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &v));
  POOT_TRY(kc_u32(b, 0, &i0));
  POOT_TRY(kc_u32(b, 1, &i1));
  POOT_TRY(kc_u32(b, 2, &i2));
  if (isf) {
    POOT_TRY(
        poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, racc, i0, v, &old));
  } else {
    POOT_TRY(
        poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_MAX, POOT_KIR_SPACE_GLOBAL, racc, i0, v, &old));
    POOT_TRY(
        poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_MIN, POOT_KIR_SPACE_GLOBAL, racc, i1, v, &old));
    POOT_TRY(
        poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, racc, i2, v, &old));
  }
  POOT_TRY(
      poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_XCHG, POOT_KIR_SPACE_GLOBAL, rx, gid, v, &old));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, rxo, gid, old));
  if (!isf) {
    poot_kir_value seven, init, odd, cmpv, plus, gs, old2;
    POOT_TRY(kc_u32(b, 7, &seven));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, gid, seven, &init));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, gid, i1, &odd));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_EQ, odd, i1, &odd));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, init, i1, &plus));
    POOT_TRY(poot_kir_select(b, odd, init, plus, &cmpv));
    gs = cmpv;
    if (s != POOT_KIR_U32) POOT_TRY(poot_kir_convert(b, s, cmpv, &gs));
    POOT_TRY(poot_kir_atomic_cas(b, POOT_KIR_SPACE_GLOBAL, rc, gid, gs, v, &old2));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, rco, gid, old2));
  }
  return poot_kir_end(b);
}

static poot_status atomics_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                 poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, atomics_body, c, t, out);
}

static poot_status atomics_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                   uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  bool isf = s == POOT_KIR_F32;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, size * 4u), *acc = kc_buf(r, 1, 3 * 4u);
  uint32_t *xb = kc_buf(r, 2, size * 4u), *xo = kc_buf(r, 3, size * 4u);
  uint32_t *cb = isf ? (uint32_t *)1 : kc_buf(r, 4, size * 4u);
  uint32_t *co = isf ? (uint32_t *)1 : kc_buf(r, 5, size * 4u);
  if (!a || !acc || !xb || !xo || !cb || !co) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) {
    a[i] = isf ? kc_f32u((float)(int)(kc_rand(&st) % 200) - 100.0f) : (uint32_t)kc_rand(&st);
    xb[i] = isf ? kc_f32u((float)i * 0.5f) : i * 3u + 1u;
    if (!isf) cb[i] = i * 7u;
  }
  if (isf) {
    acc[0] = kc_f32u(0.25f);
  } else {
    acc[0] = s == POOT_KIR_I32 ? 0x80000000u : 0;
    acc[1] = s == POOT_KIR_I32 ? 0x7fffffffu : 0xffffffffu;
    acc[2] = 5;
  }
  uint32_t *eacc = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *exb = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *exo = kc_expect(r, 3, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *ecb = isf ? (uint32_t *)1 : kc_expect(r, 4, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *eco = isf ? (uint32_t *)1 : kc_expect(r, 5, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!eacc || !exb || !exo || !ecb || !eco) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) {
    if (isf) {
      float sum = poot_f32_from_bits(eacc[0]) + poot_f32_from_bits(a[i]);
      eacc[0] = poot_f32_bits(sum);
    } else if (s == POOT_KIR_I32) {
      if ((int32_t)a[i] > (int32_t)eacc[0]) eacc[0] = a[i];
      if ((int32_t)a[i] < (int32_t)eacc[1]) eacc[1] = a[i];
      eacc[2] += a[i];
    } else {
      if (a[i] > eacc[0]) eacc[0] = a[i];
      if (a[i] < eacc[1]) eacc[1] = a[i];
      eacc[2] += a[i];
    }
    exo[i] = xb[i];
    exb[i] = a[i];
    if (!isf) {
      eco[i] = cb[i];
      if (i & 1) ecb[i] = a[i];
    }
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- shuffles */

#define SHUF_WG 64u
#define SHUF_K 5u

/* Every thread of every workgroup takes part (size = workgroups). */
static poot_status shuffle_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t;
  uint32_t ra, ro;
  poot_kir_value gid, x, lane, sgid, sgsz, five, three, mask, src, r[SHUF_K], kk, base;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sgid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_SIZE, 0, &sgsz));
  POOT_TRY(kc_u32(b, 5, &five));
  POOT_TRY(kc_u32(b, 3, &three));
  POOT_TRY(kc_u32(b, sg - 1, &mask));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, lane, five, &src));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, src, three, &src));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, src, mask, &src));
  POOT_TRY(poot_kir_subgroup_shuffle(b, x, src, &r[0]));
  POOT_TRY(poot_kir_subgroup_shuffle_xor(b, x, 1, &r[1]));
  POOT_TRY(poot_kir_subgroup_shuffle_xor(b, x, sg / 2, &r[2]));
  POOT_TRY(poot_kir_subgroup_broadcast(b, x, sg - 1, &r[3]));
  /* builtins: size * 1e6 + subgroup id * 1000 + lane */
  poot_kir_value mil, th, p1, p2;
  POOT_TRY(kc_u32(b, 1000000, &mil));
  POOT_TRY(kc_u32(b, 1000, &th));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, sgsz, mil, &p1));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, sgid, th, &p2));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, p1, p2, &p1));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, p1, lane, &r[4]));
  POOT_TRY(kc_u32(b, SHUF_K, &kk));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, gid, kk, &base));
  for (uint32_t j = 0; j < SHUF_K; j++) {
    poot_kir_value jj, idx;
    POOT_TRY(kc_u32(b, j, &jj));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, base, jj, &idx));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, r[j]));
  }
  return POOT_OK_STATUS;
}

static poot_status shuffle_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                 poot_kir_kernel **out) {
  uint32_t sg = kc_sg(t);
  if (sg > SHUF_WG || sg < 2)
    return poot_status_make(POOT_UNSUPPORTED, "corpus: %s needs 2..%u lanes", c->name, SHUF_WG);
  return kc_make(c->name, SHUF_WG, 1, 1, sg, shuffle_body, c, t, out);
}

static poot_status shuffle_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                   uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  uint32_t sg = k->subgroup_size, n = size * SHUF_WG;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, n * 4u), *o = kc_buf(r, 1, n * SHUF_K * 4u);
  if (!a || !o) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < n; i++) a[i] = (uint32_t)kc_rand(&st);
  uint32_t *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t local = i % SHUF_WG, lane = local % sg, g0 = i - lane;
    e[i * SHUF_K + 0] = a[g0 + ((lane * 5 + 3) & (sg - 1))];
    e[i * SHUF_K + 1] = a[g0 + (lane ^ 1)];
    e[i * SHUF_K + 2] = a[g0 + (lane ^ (sg / 2))];
    e[i * SHUF_K + 3] = a[g0 + sg - 1];
    e[i * SHUF_K + 4] = sg * 1000000u + (local / sg) * 1000u + lane;
  }
  r->grid[0] = size;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------ divergent loops */

/* acc = 0; for i < a[gid] % 17: { if (i & 1) acc += 3i else acc ^= i + gid;
 * for j < i % 3: acc += j }  — per-thread trip counts and branches. */
static poot_status loops_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                              const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ra, ro, acc;
  poot_kir_value n, gid, x, cnt, m17, zero, one, three, i, odd, a, a2, tmp, j, jn;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_add_private(b, "acc", poot_kir_type_make(POOT_KIR_U32, 1), 1, &acc));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_TRY(kc_u32(b, 17, &m17));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(kc_u32(b, 3, &three));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_REM, x, m17, &cnt));
  POOT_TRY(poot_kir_for_begin(b, zero, cnt, one, &i));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, i, one, &odd));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_EQ, odd, one, &odd));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a));
  POOT_TRY(poot_kir_if_begin(b, odd));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, i, three, &tmp));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, a, tmp, &a2));
  POOT_TRY(poot_kir_priv_store(b, acc, 0, a2));
  POOT_TRY(poot_kir_else_begin(b));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, i, gid, &tmp));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_XOR, a, tmp, &a2));
  POOT_TRY(poot_kir_priv_store(b, acc, 0, a2));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_REM, i, three, &jn));
  POOT_TRY(poot_kir_for_begin(b, zero, jn, one, &j));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, a, j, &a2));
  POOT_TRY(poot_kir_priv_store(b, acc, 0, a2));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, a));
  return poot_kir_end(b);
}

static poot_status loops_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                               poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, loops_body, c, t, out);
}

static poot_status loops_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                 uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, size * 4u), *o = kc_buf(r, 1, size * 4u);
  if (!a || !o) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) a[i] = (uint32_t)kc_rand(&st);
  uint32_t *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t g = 0; g < size; g++) {
    uint32_t acc = 0;
    for (uint32_t i = 0; i < a[g] % 17; i++) {
      if (i & 1)
        acc += i * 3;
      else
        acc ^= i + g;
      for (uint32_t j = 0; j < i % 3; j++) acc += j;
    }
    e[g] = acc;
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------ 2-D and 3-D grids */

#define TR 8u

/* out (W x H) = transpose of in (H x W), through an 8x9 shared tile. */
static poot_status transpose_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                  const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ri, ro, tile;
  poot_kir_value W, H, lx, ly, wx, wy, tr, pitch, x, y, inr, inc, ok, idx, zero, one, lastw, lasth,
      cx, cy, v, sel, ti, ox, oy, ok2, okx, oidx, tv;
  POOT_TRY(kc_binding(b, "src", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ri));
  POOT_TRY(kc_binding(b, "dst", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "w", POOT_KIR_U32, &W));
  POOT_TRY(kc_push(b, "h", POOT_KIR_U32, &H));
  POOT_TRY(poot_kir_add_shared(b, "tile", POOT_KIR_U32, TR * (TR + 1), &tile));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_ID, 0, &lx));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_ID, 1, &ly));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wx));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 1, &wy));
  POOT_TRY(kc_u32(b, TR, &tr));
  POOT_TRY(kc_u32(b, TR + 1, &pitch));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(poot_kir_global_id(b, 0, &x));
  POOT_TRY(poot_kir_global_id(b, 1, &y));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, x, W, &inc));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, y, H, &inr));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, inc, inr, &ok));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, W, one, &lastw));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, H, one, &lasth));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, x, lastw, &cx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, y, lasth, &cy));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, cy, W, &idx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, idx, cx, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ri, idx, 1, &v));
  POOT_TRY(poot_kir_select(b, ok, v, zero, &sel));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, ly, pitch, &ti));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, ti, lx, &ti));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, tile, ti, sel));
  POOT_TRY(poot_kir_barrier(b));
  /* dst[ox][oy] with ox = wy*8 + lx (a row of src), oy = wx*8 + ly. */
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, wy, tr, &ox));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, ox, lx, &ox));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, wx, tr, &oy));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, oy, ly, &oy));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, ox, H, &okx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, oy, W, &ok2));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, okx, ok2, &ok2));
  POOT_TRY(poot_kir_if_begin(b, ok2));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, lx, pitch, &ti));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, ti, ly, &ti));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, tile, ti, 1, &tv));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, oy, H, &oidx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, oidx, ox, &oidx));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, oidx, tv));
  return poot_kir_end(b);
}

static poot_status transpose_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                   poot_kir_kernel **out) {
  return kc_make(c->name, TR, TR, 1, 0, transpose_body, c, t, out);
}

static poot_status transpose_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                     uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  uint32_t W = size, H = 2 * size + 1;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *s = kc_buf(r, 0, (size_t)W * H * 4), *d = kc_buf(r, 1, (size_t)W * H * 4);
  if (!s || !d) return kc_oom(r);
  uint64_t st = seed;
  for (size_t i = 0; i < (size_t)W * H; i++) s[i] = (uint32_t)kc_rand(&st);
  uint32_t *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t y = 0; y < H; y++)
    for (uint32_t x = 0; x < W; x++) e[(size_t)x * H + y] = s[(size_t)y * W + x];
  r->params[0] = W;
  r->params[1] = H;
  r->grid[0] = div_up(W, TR);
  r->grid[1] = div_up(H, TR);
  return POOT_OK_STATUS;
}

/* out[(Z*H + Y)*W + X] = X | Y << 10 | Z << 20 over a 3-D grid of 4x2x2
 * workgroups; out2 = local index | num_workgroups.z << 16. */
static poot_status iota3_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                              const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ro, ro2;
  poot_kir_value X, Y, Z, W, H, nw, sz, idx, v, s10, s20, s16, li, nz, v2;
  POOT_TRY(kc_binding(b, "out", 0, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_binding(b, "out2", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro2));
  POOT_TRY(poot_kir_global_id(b, 0, &X));
  POOT_TRY(poot_kir_global_id(b, 1, &Y));
  POOT_TRY(poot_kir_global_id(b, 2, &Z));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 0, &nw));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_SIZE, 0, &sz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, nw, sz, &W));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 1, &nw));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_SIZE, 1, &sz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, nw, sz, &H));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, Z, H, &idx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, idx, Y, &idx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, idx, W, &idx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, idx, X, &idx));
  POOT_TRY(kc_u32(b, 10, &s10));
  POOT_TRY(kc_u32(b, 20, &s20));
  POOT_TRY(kc_u32(b, 16, &s16));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SHL, Y, s10, &Y));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SHL, Z, s20, &Z));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, X, Y, &v));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, v, Z, &v));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, v));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &li));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 2, &nz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SHL, nz, s16, &nz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_OR, li, nz, &v2));
  return poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro2, idx, v2);
}

static poot_status iota3_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                               poot_kir_kernel **out) {
  return kc_make(c->name, 4, 2, 2, 0, iota3_body, c, t, out);
}

static poot_status iota3_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                 uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c, (void)seed;
  uint32_t gx = size, gy = 3, gz = 2, W = gx * 4, H = gy * 2, D = gz * 2;
  size_t n = (size_t)W * H * D;
  POOT_TRY(kc_run_init(r, k, size));
  if (!kc_buf(r, 0, n * 4) || !kc_buf(r, 1, n * 4)) return kc_oom(r);
  uint32_t *e = kc_expect(r, 0, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  uint32_t *e2 = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e || !e2) return kc_oom(r);
  for (uint32_t z = 0; z < D; z++)
    for (uint32_t y = 0; y < H; y++)
      for (uint32_t x = 0; x < W; x++) {
        size_t i = ((size_t)z * H + y) * W + x;
        e[i] = x | y << 10 | z << 20;
        e2[i] = ((x % 4) + (y % 2) * 4 + (z % 2) * 8) | gz << 16;
      }
  r->grid[0] = gx;
  r->grid[1] = gy;
  r->grid[2] = gz;
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- slot params */

/* out[i] = a[i] * scale + f32(pos + i) for i < min(n, len), where pos and
 * len are SLOT params read from the slot buffer and scale a PUSH param. */
static poot_status slot_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t rs, ra, ro, ip, il;
  poot_kir_value n, scale, pos, len, gid, lim, x, y, p, pf;
  POOT_TRY(kc_binding(b, "slots", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &rs));
  POOT_TRY(kc_binding(b, "a", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "out", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(kc_push(b, "scale", POOT_KIR_F32, &scale));
  poot_kir_param pp = {"pos", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, rs, 2};
  poot_kir_param pl = {"len", POOT_KIR_U32, POOT_KIR_PARAM_SLOT, rs, 3};
  POOT_TRY(poot_kir_add_param(b, &pp, &ip));
  POOT_TRY(poot_kir_add_param(b, &pl, &il));
  POOT_TRY(poot_kir_param_get(b, ip, &pos));
  POOT_TRY(poot_kir_param_get(b, il, &len));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, n, len, &lim));
  POOT_TRY(kc_guard(b, gid, lim));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, x, scale, &y));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, pos, gid, &p));
  POOT_TRY(poot_kir_convert(b, POOT_KIR_F32, p, &pf));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, y, pf, &y));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, y));
  return poot_kir_end(b);
}

static poot_status slot_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, slot_body, c, t, out);
}

static poot_status slot_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *slots = kc_buf(r, 0, 4 * 4);
  float *a = kc_buf(r, 1, size * 4u), *o = kc_buf(r, 2, size * 4u);
  if (!slots || !a || !o) return kc_oom(r);
  uint64_t st = seed;
  uint32_t pos = 1000 + size, len = size - size / 3;
  slots[0] = 0xdead, slots[1] = 0xbeef, slots[2] = pos, slots[3] = len;
  for (uint32_t i = 0; i < size; i++) {
    a[i] = kc_randf(&st, -4.0f, 4.0f);
    o[i] = -1.0f;
  }
  float scale = 1.5f;
  /* mul then add: exact in KIR; a GPU compiler that contracts them into an
   * fma (which renderers must prevent) would still pass within the bound. */
  float *e = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_TOL, 1e-5, 1e-6, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < len && i < size; i++) {
    float y = a[i] * scale;
    e[i] = y + (float)(pos + i);
  }
  r->params[0] = size;
  r->params[1] = kc_f32u(scale);
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------------- the table */

#define CONV(S, s, D, d)                                                                  \
  {"convert_" #s "_" #d, "convert " #s " to " #d, POOT_KIR_##S, POOT_KIR_##D, conv_build, \
   conv_prepare,         {64, 200, 0, 0}},
#define CONV_ROW(S, s)                                                                      \
  CONV(S, s, I8, i8)                                                                        \
  CONV(S, s, U8, u8) CONV(S, s, I16, i16) CONV(S, s, U16, u16) CONV(S, s, I32, i32)         \
      CONV(S, s, U32, u32) CONV(S, s, I64, i64) CONV(S, s, F16, f16) CONV(S, s, BF16, bf16) \
          CONV(S, s, F32, f32) CONV(S, s, BOOL, bool)
#define MATH(OP, op, T, t)                                            \
  {"math_" #op "_" #t, #op " in " #t, POOT_KIR_OP_##OP, POOT_KIR_##T, \
   math_build,         math_prepare,  {1, 63, 300, 0}},

static const poot_kir_corpus_case ops_cases[] = {
    CONV_ROW(I8, i8) CONV_ROW(U8, u8) CONV_ROW(I16, i16) CONV_ROW(U16, u16) CONV_ROW(I32, i32)
        CONV_ROW(U32, u32) CONV_ROW(I64, i64) CONV_ROW(F16, f16) CONV_ROW(BF16, bf16) CONV_ROW(
            F32, f32) CONV_ROW(BOOL, bool) MATH(EXP, exp, F32, f32) MATH(EXP2, exp2, F32, f32)
            MATH(LOG, log, F32, f32) MATH(LOG2, log2, F32, f32) MATH(SQRT, sqrt, F32, f32)
                MATH(RSQRT, rsqrt, F32, f32) MATH(SIN, sin, F32, f32) MATH(COS, cos, F32, f32) MATH(
                    TANH, tanh, F32, f32) MATH(ERF, erf, F32, f32) MATH(FLOOR, floor, F32, f32)
                    MATH(CEIL, ceil, F32, f32) MATH(ABS, abs, F32, f32) MATH(NEG, neg, F32, f32)
                        MATH(POW, pow, F32, f32) MATH(EXP, exp, F16, f16) MATH(LOG, log, F16, f16)
                            MATH(SQRT, sqrt, F16, f16) MATH(TANH, tanh, F16, f16)
                                MATH(SIN, sin, F16, f16){"arith_i32",
                                                         "integer ops, compares, select in i32",
                                                         POOT_KIR_I32,
                                                         0,
                                                         arith_build,
                                                         arith_prepare,
                                                         {1, 63, 300, 0}},
    {"arith_u32",
     "integer ops, compares, select in u32",
     POOT_KIR_U32,
     0,
     arith_build,
     arith_prepare,
     {1, 63, 300, 0}},
    {"arith_i64",
     "integer ops, compares, select in i64",
     POOT_KIR_I64,
     0,
     arith_build,
     arith_prepare,
     {1, 63, 300, 0}},
    {"arith_f32",
     "float ops, fma, compares, select in f32",
     POOT_KIR_F32,
     0,
     arith_build,
     arith_prepare,
     {1, 63, 300, 0}},
    {"arith_f16",
     "float ops, fma, compares, select in f16",
     POOT_KIR_F16,
     0,
     arith_build,
     arith_prepare,
     {1, 63, 300, 0}},
    {"vector_ops_f32",
     "splat, vector mul, extract, vec, vector bitcast",
     0,
     0,
     vec_build,
     vec_prepare,
     {1, 33, 100, 0}},
    {"bitcast_16x2",
     "u32 <-> f16x2 / u16x2 and f32 bitcasts",
     0,
     0,
     bitcast_build,
     bitcast_prepare,
     {1, 63, 300, 0}},
    {"dot4_i8",
     "4 x int8 dot-accumulate, u32 and i32 words, wrapping sums",
     0,
     0,
     dot4_build,
     dot4_prepare,
     {1, 63, 300, 0}},
    {"atomics_u32",
     "atomic max/min/add/xchg/cas on u32",
     POOT_KIR_U32,
     0,
     atomics_build,
     atomics_prepare,
     {1, 63, 1000, 0}},
    {"atomics_i32",
     "atomic max/min/add/xchg/cas on i32",
     POOT_KIR_I32,
     0,
     atomics_build,
     atomics_prepare,
     {1, 63, 1000, 0}},
    {"atomics_f32",
     "atomic add/xchg on f32",
     POOT_KIR_F32,
     0,
     atomics_build,
     atomics_prepare,
     {1, 63, 1000, 0}},
    {"shuffle_sg_u32",
     "subgroup shuffle, shuffle_xor, broadcast, subgroup builtins",
     0,
     0,
     shuffle_build,
     shuffle_prepare,
     {1, 3, 7, 0}},
    {"divergent_loops_u32",
     "per-thread loop bounds, nested if/else and for",
     0,
     0,
     loops_build,
     loops_prepare,
     {1, 63, 500, 0}},
    {"transpose_2d_u32",
     "2-D grid, shared tile with barrier",
     0,
     0,
     transpose_build,
     transpose_prepare,
     {1, 9, 17, 40}},
    {"iota_3d_u32",
     "3-D workgroups and grid, builtins",
     0,
     0,
     iota3_build,
     iota3_prepare,
     {1, 3, 5, 0}},
    {"param_slot_f32",
     "PUSH params and SLOT params read from a slot buffer",
     0,
     0,
     slot_build,
     slot_prepare,
     {1, 63, 1000, 0}},
};

const poot_kir_corpus_case *poot__kir_corpus_ops(size_t *out_count) {
  *out_count = sizeof ops_cases / sizeof ops_cases[0];
  return ops_cases;
}
