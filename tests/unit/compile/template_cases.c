/* template_cases.c — see template_cases.h. The builders, then the catalogue
 * with the tolerance of each case and its derivation.
 *
 * Notation for the device tolerances (docs/verification.md, "Device
 * conformance"): u = 2^-24 (f32 unit roundoff); ε_m = 2e-5, the device math
 * bound: docs/kir-glsl-wgsl.md holds every GLSL built-in (exp, exp2, log,
 * log2, sin, cos, pow, rsqrt) and the poot_tanh/poot_erf helpers to 2e-5
 * relative plus 2e-5 absolute, and every PTX bound measured in
 * docs/kir-ptx-amdgpu.md is below it (the worst: pow at 18 ulp ≈ 1.1e-6
 * relative, sin/cos 4.7e-7 absolute). Division and square root are IEEE on
 * both (the renderer corpus demands them bit for bit), as are +, -, * (no
 * contraction: GLSL values are `precise`). An atol is tol * max|oracle| of
 * the compared tensor. */
#include "template_cases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct tc_builder {
  poot_graph *g;
  poot_status st; /* the first failure; later calls are still made, and fail */
};

/* Keeps the first failure. */
static void ok(tc_builder *b, poot_status s) {
  if (!b->st)
    b->st = s;
  else
    poot_status_free(s);
}

static poot_value P(tc_builder *b, const char *name, poot_dtype dt, uint32_t rank,
                    const int64_t *dims) {
  poot_type t = poot_type_make(dt, rank, dims);
  poot_value v = POOT_VALUE_NONE;
  ok(b, poot_graph_add_param(b->g, name, &t, &v));
  return v;
}
static poot_value W(tc_builder *b, const char *name, poot_dtype dt, uint32_t rank,
                    const int64_t *dims) {
  poot_type t = poot_type_make(dt, rank, dims);
  poot_weight_id r = poot_weight_id_named(name);
  poot_value v = POOT_VALUE_NONE;
  ok(b, poot_graph_add_weight(b->g, &r, &t, &v));
  return v;
}
static poot_value un(tc_builder *b, poot_op op, poot_value x) {
  poot_value o = POOT_VALUE_NONE;
  ok(b, poot_graph_unary(b->g, op, x, &o));
  return o;
}
static poot_value bi(tc_builder *b, poot_op op, poot_value x, poot_value y) {
  poot_value o = POOT_VALUE_NONE;
  ok(b, poot_graph_binary(b->g, op, x, y, &o));
  return o;
}
static poot_value sel(tc_builder *b, poot_value p, poot_value x, poot_value y) {
  poot_value o = POOT_VALUE_NONE;
  ok(b, poot_graph_select(b->g, p, x, y, &o));
  return o;
}
static poot_value cvt(tc_builder *b, poot_value x, poot_dtype dt) {
  poot_value o = POOT_VALUE_NONE;
  ok(b, poot_graph_convert(b->g, x, dt, &o));
  return o;
}
static const poot_shape *shape_of(tc_builder *b, poot_value v) {
  static const poot_shape none = {0};
  const poot_type *t = poot_graph_value_type(b->g, v);
  return t ? &t->shape : &none;
}
/* A float constant broadcast to shape s. */
static poot_value cst(tc_builder *b, poot_dtype dt, double v, const poot_shape *s) {
  poot_value c = POOT_VALUE_NONE, o = POOT_VALUE_NONE;
  ok(b, poot_graph_const_f32(b->g, dt, v, &c));
  int64_t none[1] = {0};
  ok(b, poot_graph_broadcast(b->g, c, s, none, &o));
  return o;
}
static poot_value icst(tc_builder *b, poot_dtype dt, int64_t v, const poot_shape *s) {
  poot_value c = POOT_VALUE_NONE, o = POOT_VALUE_NONE;
  ok(b, poot_graph_const_int(b->g, dt, v, &c));
  int64_t none[1] = {0};
  ok(b, poot_graph_broadcast(b->g, c, s, none, &o));
  return o;
}
static poot_value scalar_int(tc_builder *b, poot_dtype dt, int64_t v) {
  poot_value c = POOT_VALUE_NONE;
  ok(b, poot_graph_const_int(b->g, dt, v, &c));
  return c;
}
static void output(tc_builder *b, poot_value v) {
  ok(b, poot_graph_set_output(b->g, v));
}
static void env(tc_builder *b, const char *name, poot_value v) {
  ok(b, poot_graph_add_env(b->g, name, v));
}
/* The POS slot (i32[1]) as a scalar. */
static poot_value pos_scalar(tc_builder *b) {
  poot_type pt = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){1});
  poot_value pos = POOT_VALUE_NONE, p0 = POOT_VALUE_NONE;
  ok(b, poot_graph_add_slot(b->g, POOT_SLOT_POS, NULL, &pt, &pos));
  poot_shape s0 = poot_shape_of(0, 0);
  ok(b, poot_graph_reshape(b->g, pos, &s0, &p0));
  return p0;
}
static poot_value dot(tc_builder *b, poot_value x, poot_value w, uint32_t nb, const int64_t *lb,
                      const int64_t *rb, uint32_t nc, const int64_t *lc, const int64_t *rc) {
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_batch = nb;
  dd.num_contract = nc;
  for (uint32_t i = 0; i < nb; i++) {
    dd.lhs_batch[i] = lb[i];
    dd.rhs_batch[i] = rb[i];
  }
  for (uint32_t i = 0; i < nc; i++) {
    dd.lhs_contract[i] = lc[i];
    dd.rhs_contract[i] = rc[i];
  }
  poot_value o = POOT_VALUE_NONE;
  ok(b, poot_graph_dot_general(b->g, x, w, &dd, POOT_DTYPE_F32, &o));
  return o;
}
/* x[m, k] · w[n, k]ᵀ, the weight dequantized or converted to f32 first. */
static poot_value gemv(tc_builder *b, poot_value x, poot_value w) {
  poot_dtype wt =
      poot_graph_value_type(b->g, w) ? poot_graph_value_type(b->g, w)->dtype : POOT_DTYPE_F32;
  poot_value wf = w;
  if (poot_dtype_is_packed(wt))
    ok(b, poot_graph_dequantize(b->g, w, POOT_DTYPE_F32, &wf));
  else if (wt != POOT_DTYPE_F32)
    wf = cvt(b, w, POOT_DTYPE_F32);
  return dot(b, x, wf, 0, NULL, NULL, 1, (int64_t[]){1}, (int64_t[]){1});
}

/* ------------------------------------------------------- elementwise */

/* Every float unary and binary op of the chain, f32/f16/bf16. */
static void build_float_chain(tc_builder *b, const tc_case *c) {
  poot_dtype dt = c->dtype;
  int64_t d[2] = {c->d[0], c->d[1]};
  poot_shape s = poot_shape_make(2, d);
  poot_value x = P(b, "x", dt, 2, d), y = P(b, "y", dt, 2, d);
  poot_value one = cst(b, dt, 1.0, &s), half = cst(b, dt, 0.5, &s);
  poot_value a = bi(b, POOT_OP_ADD, x, y);
  a = bi(b, POOT_OP_MUL, a, x);
  a = bi(b, POOT_OP_SUB, a, y);
  poot_value ay = bi(b, POOT_OP_ADD, un(b, POOT_OP_ABS, y), one);
  a = bi(b, POOT_OP_DIV, a, ay);
  a = bi(b, POOT_OP_MAX, a, un(b, POOT_OP_NEG, x));
  a = bi(b, POOT_OP_MIN, a, bi(b, POOT_OP_ADD, y, one));
  poot_value e = un(b, POOT_OP_EXP, a);
  poot_value l = un(b, POOT_OP_LOG, bi(b, POOT_OP_ADD, un(b, POOT_OP_ABS, x), one));
  poot_value t = un(b, POOT_OP_TANH, bi(b, POOT_OP_MUL, e, l));
  poot_value sg = un(b, POOT_OP_SIGMOID, t);
  poot_value rs = un(b, POOT_OP_RSQRT, ay);
  poot_value sq = un(b, POOT_OP_SQRT, bi(b, POOT_OP_ADD, un(b, POOT_OP_ABS, a), half));
  poot_value fl = un(b, POOT_OP_FLOOR, bi(b, POOT_OP_MUL, x, cst(b, dt, 7.0, &s)));
  poot_value ce = un(b, POOT_OP_CEIL, bi(b, POOT_OP_MUL, y, cst(b, dt, 5.0, &s)));
  poot_value ro = un(b, POOT_OP_ROUND, bi(b, POOT_OP_MUL, x, cst(b, dt, 4.5, &s)));
  poot_value sn = un(b, POOT_OP_SIGN, y);
  poot_value pw = bi(b, POOT_OP_POW, bi(b, POOT_OP_ADD, un(b, POOT_OP_ABS, x), half), y);
  poot_value sc = bi(b, POOT_OP_ADD, un(b, POOT_OP_SIN, x), un(b, POOT_OP_COS, y));
  poot_value r = bi(b, POOT_OP_ADD, sg, rs);
  r = bi(b, POOT_OP_ADD, r, sq);
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_MUL, fl, ce));
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_MUL, ro, sn));
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_MUL, pw, cst(b, dt, 0.75, &s)));
  r = bi(b, POOT_OP_ADD, r, sc);
  /* rem (C's fmod, exact): a few binades apart, and about 22 */
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_REM, bi(b, POOT_OP_MUL, x, cst(b, dt, 7.0, &s)), ay));
  r = bi(b, POOT_OP_ADD, r,
         bi(b, POOT_OP_REM, bi(b, POOT_OP_MUL, x, cst(b, dt, 5000.0, &s)),
            bi(b, POOT_OP_MUL, ay, cst(b, dt, 0.001, &s))));
  poot_value lt = bi(b, POOT_OP_LT, x, y);
  output(b, sel(b, lt, r, un(b, POOT_OP_ERF, x)));
}

/* Every integer op (pow too: non-negative exponents, and for signed types a
 * negative one on the bases -1, 0 and 1), then through floats and back
 * (saturating). */
static void build_int_chain(tc_builder *b, const tc_case *c) {
  poot_dtype dt = c->dtype;
  int64_t d[1] = {c->d[0]};
  poot_value x = P(b, "x", dt, 1, d), y = P(b, "y", dt, 1, d), sh = P(b, "s", dt, 1, d);
  poot_value a = bi(b, POOT_OP_ADD, x, y);
  a = bi(b, POOT_OP_MUL, a, y);
  a = bi(b, POOT_OP_SUB, a, x);
  /* y has zeros */
  poot_value q = bi(b, POOT_OP_DIV, a, y);
  poot_value m = bi(b, POOT_OP_REM, a, y);
  poot_value r = bi(b, POOT_OP_XOR, bi(b, POOT_OP_AND, q, x), bi(b, POOT_OP_OR, m, y));
  r = bi(b, POOT_OP_MAX, r, bi(b, POOT_OP_MIN, x, y));
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_SHL, x, sh));
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_SHR, a, sh));
  r = bi(b, POOT_OP_ADD, r, un(b, POOT_OP_NOT, x));
  r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_POW, x, y));
  if (poot_dtype_info_of(dt)->is_signed) {
    r = bi(b, POOT_OP_ADD, r, un(b, POOT_OP_NEG, y));
    r = bi(b, POOT_OP_ADD, r, un(b, POOT_OP_ABS, a));
    r = bi(b, POOT_OP_ADD, r, un(b, POOT_OP_SIGN, a));
    r = bi(b, POOT_OP_ADD, r, bi(b, POOT_OP_POW, un(b, POOT_OP_SIGN, a), un(b, POOT_OP_NEG, y)));
  }
  poot_value ge = bi(b, POOT_OP_GE, x, y);
  poot_value o = sel(b, ge, r, a);
  poot_value f = cvt(b, o, POOT_DTYPE_F32);
  f = bi(b, POOT_OP_MUL, f, f);
  o = bi(b, POOT_OP_ADD, o, cvt(b, f, dt));
  o = bi(b, POOT_OP_ADD, o, cvt(b, ge, dt));
  output(b, o);
}

/* exp2, log2, bitcast both ways, the comparisons not in the
 * chains (eq, ne, le, gt), bool not, float → bool. */
static void build_float_ops(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t d[2] = {6, 11};
  poot_shape s = poot_shape_make(2, d);
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, d), y = P(b, "y", POOT_DTYPE_F32, 2, d);
  poot_value e2 = un(b, POOT_OP_EXP2, bi(b, POOT_OP_MUL, x, cst(b, POOT_DTYPE_F32, 3.0, &s)));
  poot_value l2 = un(b, POOT_OP_LOG2,
                     bi(b, POOT_OP_ADD, un(b, POOT_OP_ABS, y), cst(b, POOT_DTYPE_F32, 0.25, &s)));
  /* |x| through the bits: bitcast to i32, clear the sign, back */
  poot_value xi = POOT_VALUE_NONE, xa = POOT_VALUE_NONE;
  ok(b, poot_graph_bitcast(b->g, x, POOT_DTYPE_I32, &xi));
  xi = bi(b, POOT_OP_AND, xi, icst(b, POOT_DTYPE_I32, 0x7fffffff, &s));
  ok(b, poot_graph_bitcast(b->g, xi, POOT_DTYPE_F32, &xa));
  poot_value f4 = cst(b, POOT_DTYPE_F32, 4.0, &s);
  poot_value eq = bi(b, POOT_OP_EQ, un(b, POOT_OP_FLOOR, bi(b, POOT_OP_MUL, x, f4)),
                     un(b, POOT_OP_FLOOR, bi(b, POOT_OP_MUL, y, f4)));
  poot_value ne = bi(b, POOT_OP_NE, x, y), le = bi(b, POOT_OP_LE, x, y);
  poot_value gt = bi(b, POOT_OP_GT, x, cst(b, POOT_DTYPE_F32, 0.0, &s));
  poot_value nb = un(b, POOT_OP_NOT, cvt(b, bi(b, POOT_OP_MUL, x, f4), POOT_DTYPE_BOOL));
  poot_value r = bi(b, POOT_OP_ADD, e2, l2);
  r = bi(b, POOT_OP_ADD, r, xa);
  r = bi(b, POOT_OP_ADD, r, cvt(b, eq, POOT_DTYPE_F32));
  r = bi(b, POOT_OP_ADD, r,
         bi(b, POOT_OP_MUL, cvt(b, ne, POOT_DTYPE_F32), cst(b, POOT_DTYPE_F32, 0.5, &s)));
  r = bi(b, POOT_OP_ADD, r,
         bi(b, POOT_OP_MUL, cvt(b, le, POOT_DTYPE_F32), cst(b, POOT_DTYPE_F32, 0.25, &s)));
  r = bi(b, POOT_OP_ADD, r, sel(b, gt, cst(b, POOT_DTYPE_F32, 0.125, &s), un(b, POOT_OP_NEG, xa)));
  r = bi(b, POOT_OP_ADD, r, cvt(b, nb, POOT_DTYPE_F32));
  output(b, r);
  env(b, "bits", xi); /* i32, bit-exact */
}

/* Conversions between the families: f32 → f16, bf16, i8, u8, i16, i32,
 * u32, bool (saturating, NaN-free inputs), then back to f32; i32 → f16 and
 * bf16 (through f32, as KIR rounds). The narrow results are
 * environment entries of their own, so they are stored densely (several
 * elements per 32-bit word). */
static void build_convert(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t d[1] = {41};
  poot_shape s = poot_shape_make(1, d);
  poot_value x = P(b, "x", POOT_DTYPE_F32, 1, d);
  poot_value xi = P(b, "xi", POOT_DTYPE_I32, 1, d);
  poot_value xs = bi(b, POOT_OP_MUL, x, cst(b, POOT_DTYPE_F32, 300.0, &s));
  static const poot_dtype to[] = {POOT_DTYPE_F16, POOT_DTYPE_BF16, POOT_DTYPE_I8,  POOT_DTYPE_U8,
                                  POOT_DTYPE_I16, POOT_DTYPE_I32,  POOT_DTYPE_U32, POOT_DTYPE_BOOL};
  static const char *const names[] = {"f16", "bf16", "i8", "u8", "i16", "i32", "u32", "bool"};
  poot_value sum = POOT_VALUE_NONE;
  for (size_t i = 0; i < sizeof to / sizeof to[0]; i++) {
    poot_value v = cvt(b, xs, to[i]);
    if (to[i] == POOT_DTYPE_F16 || to[i] == POOT_DTYPE_I8 || to[i] == POOT_DTYPE_U8 ||
        to[i] == POOT_DTYPE_BOOL)
      env(b, names[i], v);
    poot_value f = cvt(b, v, POOT_DTYPE_F32);
    sum = i ? bi(b, POOT_OP_ADD, sum, f) : f;
  }
  poot_value big = bi(b, POOT_OP_MUL, xi, icst(b, POOT_DTYPE_I32, 40961, &s));
  env(b, "i32_to_f16", cvt(b, big, POOT_DTYPE_F16));
  sum = bi(b, POOT_OP_ADD, sum, cvt(b, cvt(b, big, POOT_DTYPE_BF16), POOT_DTYPE_F32));
  output(b, sum);
}

/* ----------------------------------------------------------- movement */

static void build_movement(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t d[3] = {3, 5, 7};
  poot_value x = P(b, "x", POOT_DTYPE_F16, 3, d);
  int64_t rd[1] = {7};
  poot_value row = P(b, "row", POOT_DTYPE_F16, 1, rd);
  poot_value t = POOT_VALUE_NONE, r = POOT_VALUE_NONE, s = POOT_VALUE_NONE, cc = POOT_VALUE_NONE,
             p = POOT_VALUE_NONE, bc = POOT_VALUE_NONE, io = POOT_VALUE_NONE, pv = POOT_VALUE_NONE,
             o = POOT_VALUE_NONE;
  ok(b, poot_graph_transpose(b->g, x, (int64_t[]){2, 0, 1}, &t)); /* [7,3,5] */
  poot_shape s21 = poot_shape_of(2, 21, 5), s15 = poot_shape_of(2, 15, 7);
  ok(b, poot_graph_reshape(b->g, t, &s21, &r));
  ok(b, poot_graph_slice(b->g, r, (int64_t[]){1, 0}, (int64_t[]){20, 5}, (int64_t[]){2, 2},
                         &s));                                     /* [10,3] */
  ok(b, poot_graph_concat(b->g, 2, (poot_value[]){s, s}, 1, &cc)); /* [10,6] */
  ok(b, poot_graph_const_f32(b->g, POOT_DTYPE_F16, -2.5, &pv));
  ok(b, poot_graph_pad(b->g, cc, pv, (int64_t[]){1, 0}, (int64_t[]){0, 2}, (int64_t[]){1, 1},
                       &p)); /* [20,13] */
  ok(b, poot_graph_reshape(b->g, x, &s15, &o));
  ok(b, poot_graph_broadcast(b->g, row, &s15, (int64_t[]){1}, &bc));
  o = bi(b, POOT_OP_ADD, o, bc);
  poot_type it = poot_type_make(POOT_DTYPE_F16, 2, (int64_t[]){15, 7});
  ok(b, poot_graph_iota(b->g, &it, 0, &io));
  o = bi(b, POOT_OP_MUL, o, io);
  output(b, p);
  env(b, "other", o);
}

/* Movement of 8-bit and bool elements (four to a 32-bit word): transpose,
 * interior padding, strided slice, a bool iota comparison. */
static void build_movement_narrow(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_I8, 3, (int64_t[]){5, 6, 7});
  poot_value t = POOT_VALUE_NONE, p = POOT_VALUE_NONE, pv = POOT_VALUE_NONE, sl = POOT_VALUE_NONE,
             i0 = POOT_VALUE_NONE, i1 = POOT_VALUE_NONE, cc = POOT_VALUE_NONE;
  ok(b, poot_graph_transpose(b->g, x, (int64_t[]){1, 2, 0}, &t)); /* [6,7,5] */
  ok(b, poot_graph_const_int(b->g, POOT_DTYPE_I8, -3, &pv));
  ok(b, poot_graph_pad(b->g, t, pv, (int64_t[]){0, 1, 0}, (int64_t[]){1, 0, 2},
                       (int64_t[]){0, 0, 1}, &p)); /* [7,8,11] */
  output(b, p);
  poot_type it = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){6, 7});
  ok(b, poot_graph_iota(b->g, &it, 1, &i1));
  ok(b, poot_graph_iota(b->g, &it, 0, &i0));
  env(b, "lower", bi(b, POOT_OP_LT, i1, i0));
  poot_value u = cvt(b, x, POOT_DTYPE_U8);
  ok(b, poot_graph_slice(b->g, u, (int64_t[]){0, 1, 0}, (int64_t[]){5, 6, 7}, (int64_t[]){2, 3, 2},
                         &sl)); /* [3,2,4] */
  ok(b, poot_graph_concat(b->g, 2, (poot_value[]){sl, sl}, 0, &cc));
  env(b, "u8", cc);
}

/* A pointwise kernel over more than 65,535 workgroups (the second grid
 * dimension), at the workgroup size the case asks for. */
static void build_big_grid(tc_builder *b, const tc_case *c) {
  int64_t d[2] = {c->d[0], c->d[1]};
  poot_shape s = poot_shape_make(2, d);
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, d);
  output(b, bi(b, POOT_OP_ADD, bi(b, POOT_OP_MUL, x, x), cst(b, POOT_DTYPE_F32, 0.5, &s)));
}

/* ------------------------------------------------------- reductions */

/* sum (with a prologue x*x and an epilogue rsqrt(sum + 1)), max, min,
 * argmax over c->nd dims. */
static void build_reduce(tc_builder *b, const tc_case *c) {
  int64_t d[3] = {c->d[0], c->d[1], c->d[2]};
  poot_reduce_kind kind = (poot_reduce_kind)c->kind;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 3, d);
  poot_value sq = bi(b, POOT_OP_MUL, x, x);
  poot_value in = kind == POOT_REDUCE_SUM ? sq : x;
  poot_value r = POOT_VALUE_NONE, o;
  ok(b, poot_graph_reduce(b->g, in, kind, c->nd, c->rdims,
                          kind == POOT_REDUCE_ARGMAX ? POOT_DTYPE_I32 : POOT_DTYPE_F32, &r));
  if (kind == POOT_REDUCE_SUM)
    o = un(b, POOT_OP_RSQRT, bi(b, POOT_OP_ADD, r, cst(b, POOT_DTYPE_F32, 1.0, shape_of(b, r))));
  else
    o = r;
  output(b, o);
}

static poot_value reduce(tc_builder *b, poot_value x, poot_reduce_kind k, uint32_t nd,
                         const int64_t *dims, poot_dtype acc) {
  poot_value r = POOT_VALUE_NONE;
  ok(b, poot_graph_reduce(b->g, x, k, nd, dims, acc, &r));
  return r;
}

/* Integer and 16-bit reductions, bit-exact: i32 sum/max/argmax (the
 * cooperative modes reassociate integer sums, which wrap alike), u8 min in
 * u8, bf16 max in bf16. */
static void build_reduce_types(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value xi = P(b, "xi", POOT_DTYPE_I32, 2, (int64_t[]){4, 100});
  poot_value xu = P(b, "xu", POOT_DTYPE_U8, 2, (int64_t[]){4, 70});
  poot_value xb = P(b, "xb", POOT_DTYPE_BF16, 2, (int64_t[]){3, 90});
  int64_t one[1] = {1};
  output(b, reduce(b, xi, POOT_REDUCE_MAX, 1, one, POOT_DTYPE_I32));
  env(b, "sum_i32", reduce(b, xi, POOT_REDUCE_SUM, 1, one, POOT_DTYPE_I32));
  env(b, "argmax_i32", reduce(b, xi, POOT_REDUCE_ARGMAX, 1, one, POOT_DTYPE_I32));
  env(b, "min_u8", reduce(b, xu, POOT_REDUCE_MIN, 1, one, POOT_DTYPE_U8));
  env(b, "max_bf16", reduce(b, xb, POOT_REDUCE_MAX, 1, one, POOT_DTYPE_BF16));
}

/* Sums over all three dims (a scalar result, under rsqrt(s + 1)) and of
 * f16 squares (converted in the loads) into f32. */
static void build_reduce_3d_sum(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 3, (int64_t[]){6, 7, 9});
  poot_value xh = P(b, "xh", POOT_DTYPE_F16, 2, (int64_t[]){3, 80});
  poot_value s =
      reduce(b, bi(b, POOT_OP_MUL, x, x), POOT_REDUCE_SUM, 3, (int64_t[]){0, 1, 2}, POOT_DTYPE_F32);
  output(b,
         un(b, POOT_OP_RSQRT, bi(b, POOT_OP_ADD, s, cst(b, POOT_DTYPE_F32, 1.0, shape_of(b, s)))));
  env(b, "sumsq_f16",
      reduce(b, bi(b, POOT_OP_MUL, xh, xh), POOT_REDUCE_SUM, 1, (int64_t[]){1}, POOT_DTYPE_F32));
}

/* max over two non-adjacent dims, min over the middle one: bit-exact. */
static void build_reduce_3d_minmax(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 3, (int64_t[]){6, 17, 9});
  output(b, reduce(b, x, POOT_REDUCE_MAX, 2, (int64_t[]){0, 2}, POOT_DTYPE_F32));
  env(b, "min1", reduce(b, x, POOT_REDUCE_MIN, 1, (int64_t[]){1}, POOT_DTYPE_F32));
}

/* --------------------------------------------------------- GEMV/GEMM */

static void build_dot(tc_builder *b, const tc_case *c) {
  int64_t m = c->d[0], n = c->d[1], k = c->d[2];
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, (int64_t[]){m, k});
  poot_value w = P(b, "w", c->dtype, 2, (int64_t[]){n, k});
  output(b, gemv(b, x, w));
}

/* Batched dot_general, a contraction over a non-last rhs dim, and one over
 * two dims at once. */
static void build_dot_batched(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value a = P(b, "a", POOT_DTYPE_F32, 3, (int64_t[]){2, 3, 70});
  poot_value bb = P(b, "b", POOT_DTYPE_F32, 3, (int64_t[]){2, 4, 70});
  poot_value e = P(b, "e", POOT_DTYPE_F32, 3, (int64_t[]){2, 5, 24});
  poot_value f = P(b, "f", POOT_DTYPE_F32, 3, (int64_t[]){2, 24, 3});
  poot_value g = P(b, "g", POOT_DTYPE_F32, 3, (int64_t[]){3, 8, 12});
  poot_value h = P(b, "h", POOT_DTYPE_F32, 3, (int64_t[]){5, 8, 12});
  output(b, dot(b, a, bb, 1, (int64_t[]){0}, (int64_t[]){0}, 1, (int64_t[]){2}, (int64_t[]){2}));
  env(b, "strided",
      dot(b, e, f, 1, (int64_t[]){0}, (int64_t[]){0}, 1, (int64_t[]){2}, (int64_t[]){1}));
  env(b, "two_dims", dot(b, g, h, 0, NULL, NULL, 2, (int64_t[]){1, 2}, (int64_t[]){1, 2}));
}

/* The dequantized weights themselves, bit for bit. */
static void build_dequantize(tc_builder *b, const tc_case *c) {
  int64_t k = poot_dtype_info_of(c->dtype)->block_elems == 256 ? 512 : 96;
  poot_value w = P(b, "w", c->dtype, 2, (int64_t[]){3, k}), o = POOT_VALUE_NONE;
  ok(b, poot_graph_dequantize(b->g, w, c->kind ? POOT_DTYPE_F16 : POOT_DTYPE_F32, &o));
  output(b, o);
}

/* A feed-forward block: RMSNorm statistics recomputed inside the GEMV (the
 * local prologue), gate (c->dtype) and up (bf16) GEMVs sharing their input
 * with a SwiGLU epilogue over both (one kernel, two weight dtypes), and the
 * down GEMV (q4_0) with the residual add as its epilogue. (Two q4_0 or q8_0
 * roots in one GEMV kernel take llvmpipe 15 s to compile; these take 6.) */
static void build_ffn(tc_builder *b, const tc_case *c) {
  int64_t h = c->d[0], f = c->d[1];
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, (int64_t[]){1, h});
  poot_value wn = W(b, "blk.0.ffn_norm", POOT_DTYPE_F32, 1, (int64_t[]){h});
  poot_value wg = W(b, "blk.0.ffn_gate", c->dtype, 2, (int64_t[]){f, h});
  poot_value wu = W(b, "blk.0.ffn_up", POOT_DTYPE_BF16, 2, (int64_t[]){f, h});
  poot_value wd = W(b, "blk.0.ffn_down", POOT_DTYPE_Q4_0, 2, (int64_t[]){h, f});
  poot_value n = POOT_VALUE_NONE, a = POOT_VALUE_NONE;
  ok(b, poot_graph_rms_norm(b->g, x, wn, 1e-5, &n));
  ok(b, poot_graph_swiglu(b->g, gemv(b, n, wg), gemv(b, n, wu), &a));
  output(b, bi(b, POOT_OP_ADD, x, gemv(b, a, wd)));
}

/* RMSNorm read by a pointwise kernel (its statistics as that kernel's local
 * prologue) and by a GEMV with a bias epilogue. */
static void build_norm_gemv(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t h = 256, n = 40;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, (int64_t[]){2, h});
  poot_value wn = W(b, "blk.0.attn_norm", POOT_DTYPE_F32, 1, (int64_t[]){h});
  poot_value wq = W(b, "blk.0.attn_q", POOT_DTYPE_Q4_K, 2, (int64_t[]){n, h});
  poot_value bq = W(b, "blk.0.attn_q_bias", POOT_DTYPE_F32, 1, (int64_t[]){n});
  poot_value nm = POOT_VALUE_NONE, bb = POOT_VALUE_NONE;
  ok(b, poot_graph_rms_norm(b->g, x, wn, 1e-6, &nm));
  poot_shape os = poot_shape_of(2, 2, n);
  ok(b, poot_graph_broadcast(b->g, bq, &os, (int64_t[]){1}, &bb));
  output(b, bi(b, POOT_OP_ADD, gemv(b, nm, wq), bb));
  env(b, "normed", bi(b, POOT_OP_MUL, nm, cst(b, POOT_DTYPE_F32, 2.0, shape_of(b, nm))));
}

/* ------------------------------------------------- indexing and more */

static void build_gather_dus_slice(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value table = P(b, "table", POOT_DTYPE_F16, 2, (int64_t[]){11, 6});
  poot_value ids = P(b, "ids", POOT_DTYPE_I32, 2, (int64_t[]){2, 3});
  poot_value ga = POOT_VALUE_NONE, st = POOT_VALUE_NONE, ds = POOT_VALUE_NONE,
             dus = POOT_VALUE_NONE, dus2 = POOT_VALUE_NONE;
  ok(b, poot_graph_gather(b->g, table, ids, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &ga)); /* [2,3,6] */
  poot_type stt = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 5});
  ok(b, poot_graph_add_state(b->g, "cache", &stt, &st));
  poot_value upd = P(b, "upd", POOT_DTYPE_F32, 3, (int64_t[]){1, 2, 5});
  poot_value p0 = pos_scalar(b), z = scalar_int(b, POOT_DTYPE_I32, 0);
  ok(b, poot_graph_dynamic_update_slice(b->g, st, upd, (poot_value[]){p0, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &dus));
  ok(b, poot_graph_set_state_update(b->g, st, dus));
  ok(b, poot_graph_dynamic_slice(b->g, dus, (poot_value[]){p0, z, z}, (int64_t[]){3, 2, 5},
                                 POOT_TRAP_SLICE_OUT_OF_RANGE, &ds));
  poot_value sum =
      reduce(b, cvt(b, ga, POOT_DTYPE_F32), POOT_REDUCE_SUM, 1, (int64_t[]){0}, POOT_DTYPE_F32);
  /* dynamic_update_slice inline (not a State): a 2-D window */
  poot_value base = P(b, "base", POOT_DTYPE_F16, 2, (int64_t[]){6, 7});
  poot_value win = P(b, "win", POOT_DTYPE_F16, 2, (int64_t[]){2, 3});
  poot_value one = scalar_int(b, POOT_DTYPE_I32, 1);
  ok(b, poot_graph_dynamic_update_slice(b->g, base, win, (poot_value[]){p0, one}, POOT_TRAP_NONE,
                                        &dus2));
  output(b, ds);
  env(b, "sum", sum);
  env(b, "dus2", cvt(b, dus2, POOT_DTYPE_F32));
}

/* States updated three ways: an f16 state (not written in place: through a
 * temporary and a dense copy-back), and two updates of one f32 state in a
 * chain (in place, windows provably disjoint); the output reads both. */
static void build_state_updates(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value a = POOT_VALUE_NONE, s = POOT_VALUE_NONE;
  poot_type at = poot_type_make(POOT_DTYPE_F16, 2, (int64_t[]){8, 6});
  poot_type st = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){8, 2, 4});
  ok(b, poot_graph_add_state(b->g, "a16", &at, &a));
  ok(b, poot_graph_add_state(b->g, "kv", &st, &s));
  poot_value ua = P(b, "ua", POOT_DTYPE_F16, 2, (int64_t[]){1, 6});
  poot_value u0 = P(b, "u0", POOT_DTYPE_F32, 3, (int64_t[]){1, 1, 4});
  poot_value u1 = P(b, "u1", POOT_DTYPE_F32, 3, (int64_t[]){1, 1, 4});
  poot_value p0 = pos_scalar(b), z = scalar_int(b, POOT_DTYPE_I32, 0),
             one = scalar_int(b, POOT_DTYPE_I32, 1);
  poot_value an = POOT_VALUE_NONE, s1 = POOT_VALUE_NONE, s2 = POOT_VALUE_NONE;
  ok(b, poot_graph_dynamic_update_slice(b->g, a, ua, (poot_value[]){p0, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &an));
  ok(b, poot_graph_dynamic_update_slice(b->g, s, u0, (poot_value[]){p0, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &s1));
  ok(b, poot_graph_dynamic_update_slice(b->g, s1, u1, (poot_value[]){p0, one, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &s2));
  ok(b, poot_graph_set_state_update(b->g, a, an));
  ok(b, poot_graph_set_state_update(b->g, s, s2));
  /* serial sums (8 terms, index order): bit-exact */
  poot_value ra =
      reduce(b, cvt(b, an, POOT_DTYPE_F32), POOT_REDUCE_SUM, 1, (int64_t[]){0}, POOT_DTYPE_F32);
  poot_value rs = reduce(b, s2, POOT_REDUCE_SUM, 2, (int64_t[]){0, 1}, POOT_DTYPE_F32);
  poot_value cc = POOT_VALUE_NONE;
  ok(b, poot_graph_concat(b->g, 2, (poot_value[]){ra, rs}, 0, &cc));
  output(b, cc);
}

/* A read-modify-write of a state at a few indices (the penalty counts'
 * form: c[ids] += d), which the planner writes in place: the scatter of the
 * state whose other reader is the gather at its own indices. Indices past
 * the end are skipped (no trap) and may repeat (the last wins); the output
 * reads the updated state. */
static void build_state_rmw_scatter(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value s = POOT_VALUE_NONE, cur = POOT_VALUE_NONE, ns = POOT_VALUE_NONE;
  poot_type st = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){40});
  ok(b, poot_graph_add_state(b->g, "counts", &st, &s));
  poot_value ids = P(b, "ids", POOT_DTYPE_I32, 1, (int64_t[]){3});
  poot_value dl = P(b, "dl", POOT_DTYPE_I32, 1, (int64_t[]){3});
  ok(b, poot_graph_gather(b->g, s, ids, 0, 0, POOT_TRAP_NONE, &cur));
  poot_value upd = POOT_VALUE_NONE;
  ok(b, poot_graph_binary(b->g, POOT_OP_ADD, cur, dl, &upd));
  ok(b, poot_graph_scatter_update(b->g, s, ids, upd, 0, POOT_TRAP_NONE, &ns));
  ok(b, poot_graph_set_state_update(b->g, s, ns));
  poot_value twice = POOT_VALUE_NONE;
  ok(b, poot_graph_binary(b->g, POOT_OP_ADD, ns, ns, &twice));
  output(b, twice);
}

static void build_topk_cumsum_scatter(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, (int64_t[]){3, 37});
  poot_value tv = POOT_VALUE_NONE, ti = POOT_VALUE_NONE, cs = POOT_VALUE_NONE, sc = POOT_VALUE_NONE;
  ok(b, poot_graph_top_k(b->g, x, 5, &tv, &ti));
  ok(b, poot_graph_cumsum(b->g, x, 1, POOT_DTYPE_F32, &cs));
  poot_value tgt = P(b, "tgt", POOT_DTYPE_I32, 2, (int64_t[]){7, 4});
  poot_value ids = P(b, "ids", POOT_DTYPE_I32, 1, (int64_t[]){5});
  poot_value upd = P(b, "upd", POOT_DTYPE_I32, 2, (int64_t[]){5, 4});
  ok(b, poot_graph_scatter_update(b->g, tgt, ids, upd, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &sc));
  output(b, tv);
  env(b, "idx", ti);
  env(b, "cumsum", cs);
  env(b, "scatter", sc);
}

/* top_k of f16 (ties likely), an integer cumsum along the first axis, a
 * float scatter along axis 1, a gather with batch dims along axis 1. */
static void build_index_more(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_F16, 2, (int64_t[]){2, 50});
  poot_value xi = P(b, "xi", POOT_DTYPE_I32, 2, (int64_t[]){3, 20});
  poot_value tgt = P(b, "tgt", POOT_DTYPE_F32, 2, (int64_t[]){4, 9});
  poot_value ids = P(b, "ids", POOT_DTYPE_I32, 1, (int64_t[]){3});
  poot_value upd = P(b, "upd", POOT_DTYPE_F32, 2, (int64_t[]){4, 3});
  poot_value table = P(b, "table", POOT_DTYPE_F32, 3, (int64_t[]){3, 10, 4});
  poot_value gi = P(b, "gi", POOT_DTYPE_I32, 2, (int64_t[]){3, 5});
  poot_value tv = POOT_VALUE_NONE, ti = POOT_VALUE_NONE, cs = POOT_VALUE_NONE, sc = POOT_VALUE_NONE,
             ga = POOT_VALUE_NONE;
  ok(b, poot_graph_top_k(b->g, x, 7, &tv, &ti));
  ok(b, poot_graph_cumsum(b->g, xi, 0, POOT_DTYPE_I32, &cs));
  ok(b, poot_graph_scatter_update(b->g, tgt, ids, upd, 1, POOT_TRAP_INDEX_OUT_OF_RANGE, &sc));
  ok(b, poot_graph_gather(b->g, table, gi, 1, 1, POOT_TRAP_INDEX_OUT_OF_RANGE, &ga));
  output(b, tv);
  env(b, "idx", ti);
  env(b, "cumsum", cs);
  env(b, "scatter", sc);
  env(b, "gather", ga);
}

/* Philox: bits and uniform floats (f32, f16, bf16), bit for bit. */
static void build_rng(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value key = P(b, "key", POOT_DTYPE_U32, 1, (int64_t[]){2});
  poot_value ctr = P(b, "ctr", POOT_DTYPE_U32, 1, (int64_t[]){2});
  poot_type tb = poot_type_make(POOT_DTYPE_U32, 2, (int64_t[]){3, 7});
  poot_type tf = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){13});
  poot_type th = poot_type_make(POOT_DTYPE_F16, 1, (int64_t[]){9});
  poot_type tbf = poot_type_make(POOT_DTYPE_BF16, 1, (int64_t[]){5});
  poot_value v[4] = {POOT_VALUE_NONE, POOT_VALUE_NONE, POOT_VALUE_NONE, POOT_VALUE_NONE};
  ok(b, poot_graph_rng(b->g, key, ctr, &tb, POOT_RNG_BITS, &v[0]));
  ok(b, poot_graph_rng(b->g, key, ctr, &tf, POOT_RNG_UNIFORM, &v[1]));
  ok(b, poot_graph_rng(b->g, key, ctr, &th, POOT_RNG_UNIFORM, &v[2]));
  ok(b, poot_graph_rng(b->g, key, ctr, &tbf, POOT_RNG_UNIFORM, &v[3]));
  output(b, v[0]);
  env(b, "f32", v[1]);
  env(b, "f16", v[2]);
  env(b, "bf16", v[3]);
}

/* ---------------------------------------------------------- composites */

/* rms_norm, rope (both modes), softmax, attention (prefill, T = 3),
 * swiglu. */
static void build_composites(tc_builder *b, const tc_case *c) {
  (void)c;
  poot_value x = P(b, "x", POOT_DTYPE_F32, 3, (int64_t[]){3, 4, 10});
  poot_value w = P(b, "w", POOT_DTYPE_F32, 1, (int64_t[]){10});
  poot_value pos = P(b, "pos", POOT_DTYPE_I32, 1, (int64_t[]){3});
  poot_value n = POOT_VALUE_NONE, r1 = POOT_VALUE_NONE, r2 = POOT_VALUE_NONE, sm = POOT_VALUE_NONE,
             att = POOT_VALUE_NONE, sw = POOT_VALUE_NONE;
  ok(b, poot_graph_rms_norm(b->g, x, w, 1e-5, &n));
  ok(b, poot_graph_rope(b->g, n, pos, 10000.0, 10, POOT_ROPE_NEOX, &r1));
  ok(b, poot_graph_rope(b->g, r1, pos, 500.0, 6, POOT_ROPE_NORM, &r2));
  ok(b, poot_graph_softmax(b->g, r2, 2, &sm));
  poot_value k = P(b, "k", POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 10});
  poot_value v = P(b, "v", POOT_DTYPE_F32, 3, (int64_t[]){9, 2, 10});
  poot_value mask = P(b, "mask", POOT_DTYPE_BOOL, 2, (int64_t[]){3, 9});
  ok(b, poot_graph_attention(b->g, sm, k, v, mask, 0.3, &att));
  ok(b, poot_graph_swiglu(b->g, att, x, &sw));
  output(b, bi(b, POOT_OP_ADD, sw, n));
}

/* gelu (erf and tanh), silu, geglu, layer_norm (statistics of 96). */
static void build_activations(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t d[2] = {3, 96};
  poot_value x = P(b, "x", POOT_DTYPE_F32, 2, d), y = P(b, "y", POOT_DTYPE_F32, 2, d);
  poot_value w = P(b, "w", POOT_DTYPE_F32, 1, (int64_t[]){96});
  poot_value bb = P(b, "bias", POOT_DTYPE_F32, 1, (int64_t[]){96});
  poot_value ln = POOT_VALUE_NONE, ge = POOT_VALUE_NONE, gt = POOT_VALUE_NONE, si = POOT_VALUE_NONE,
             gg = POOT_VALUE_NONE;
  ok(b, poot_graph_layer_norm(b->g, x, w, bb, 1e-5, &ln));
  ok(b, poot_graph_gelu(b->g, x, false, &ge));
  ok(b, poot_graph_gelu(b->g, y, true, &gt));
  ok(b, poot_graph_silu(b->g, x, &si));
  ok(b, poot_graph_geglu(b->g, x, y, &gg));
  output(b, ln);
  env(b, "gelu", ge);
  env(b, "gelu_tanh", gt);
  env(b, "silu", si);
  env(b, "geglu", gg);
}

/* Attention (the fused template for f32, its decomposition for f16):
 * d = {T, Hq, Hkv, D}, the capacity in rdims[0]; the v rows are shifted into
 * [1, 3), so every output (a convex combination of them) is ≥ 1. kind 1:
 * the mask keeps only every 16th position (of the random ones), so that each
 * kept position moves the output measurably. */
static void build_attention(tc_builder *b, const tc_case *c) {
  int64_t t = c->d[0], hq = c->d[1], hkv = c->d[2], dd = c->d[3], cap = c->rdims[0];
  poot_dtype dt = c->dtype;
  poot_value q = P(b, "q", dt, 3, (int64_t[]){t, hq, dd});
  poot_value k = P(b, "k", dt, 3, (int64_t[]){cap, hkv, dd});
  poot_value v = P(b, "v", dt, 3, (int64_t[]){cap, hkv, dd});
  poot_value mask = P(b, "mask", POOT_DTYPE_BOOL, 2, (int64_t[]){t, cap});
  poot_value o = POOT_VALUE_NONE;
  if (c->kind == 1) {
    poot_type it = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t, cap});
    poot_value io = POOT_VALUE_NONE;
    ok(b, poot_graph_iota(b->g, &it, 1, &io));
    poot_value r = bi(b, POOT_OP_REM, io, icst(b, POOT_DTYPE_I32, 16, &it.shape));
    mask = bi(b, POOT_OP_AND, mask, bi(b, POOT_OP_EQ, r, icst(b, POOT_DTYPE_I32, 0, &it.shape)));
  }
  v = bi(b, POOT_OP_ADD, v, cst(b, dt, 2.0, shape_of(b, v))); /* rows in [1, 3) */
  ok(b, poot_graph_attention(b->g, q, k, v, mask, 1.0 / sqrt((double)dd), &o));
  output(b, o);
}

/* Decode under a causal mask at position pos + 700 over a long cache: the
 * attention is split and its splits share the 701.. visible positions at
 * run time (three of them, ≤ 256 each); the others do nothing and the
 * combine skips their stale records. d = {1, Hq, Hkv, D}, the capacity in
 * rdims[0]. */
static void build_attention_causal(tc_builder *b, const tc_case *c) {
  int64_t hq = c->d[1], hkv = c->d[2], dd = c->d[3], cap = c->rdims[0];
  poot_value q = P(b, "q", POOT_DTYPE_F32, 3, (int64_t[]){1, hq, dd});
  poot_value k = P(b, "k", POOT_DTYPE_F32, 3, (int64_t[]){cap, hkv, dd});
  poot_value v = P(b, "v", POOT_DTYPE_F32, 3, (int64_t[]){cap, hkv, dd});
  poot_value p = bi(b, POOT_OP_ADD, pos_scalar(b), scalar_int(b, POOT_DTYPE_I32, 700));
  poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){1, cap});
  poot_value io = POOT_VALUE_NONE, pb = POOT_VALUE_NONE, o = POOT_VALUE_NONE;
  ok(b, poot_graph_iota(b->g, &mt, 1, &io));
  int64_t none[1] = {0};
  ok(b, poot_graph_broadcast(b->g, p, &mt.shape, none, &pb));
  v = bi(b, POOT_OP_ADD, v, cst(b, POOT_DTYPE_F32, 2.0, shape_of(b, v))); /* rows in [1, 3) */
  ok(b, poot_graph_attention(b->g, q, k, v, bi(b, POOT_OP_LE, io, pb), 1.0 / sqrt((double)dd), &o));
  output(b, o);
}

/* Decode over a KV cache held in States: the new k/v rows written at the
 * position in place, the causal mask computed from the position, then the
 * fused attention reading the updated caches. */
static void build_attention_kv(tc_builder *b, const tc_case *c) {
  (void)c;
  int64_t cap = 64, hq = 4, hkv = 2, dd = 8;
  poot_type ct = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){cap, hkv, dd});
  poot_value kc = POOT_VALUE_NONE, vc = POOT_VALUE_NONE;
  ok(b, poot_graph_add_state(b->g, "k_cache", &ct, &kc));
  ok(b, poot_graph_add_state(b->g, "v_cache", &ct, &vc));
  poot_value q = P(b, "q", POOT_DTYPE_F32, 3, (int64_t[]){1, hq, dd});
  poot_value kn = P(b, "k_new", POOT_DTYPE_F32, 3, (int64_t[]){1, hkv, dd});
  poot_value vn = P(b, "v_new", POOT_DTYPE_F32, 3, (int64_t[]){1, hkv, dd});
  poot_value p0 = pos_scalar(b), z = scalar_int(b, POOT_DTYPE_I32, 0);
  poot_value k2 = POOT_VALUE_NONE, v2 = POOT_VALUE_NONE, io = POOT_VALUE_NONE, pb = POOT_VALUE_NONE,
             o = POOT_VALUE_NONE;
  ok(b, poot_graph_dynamic_update_slice(b->g, kc, kn, (poot_value[]){p0, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &k2));
  ok(b, poot_graph_dynamic_update_slice(b->g, vc, vn, (poot_value[]){p0, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, &v2));
  ok(b, poot_graph_set_state_update(b->g, kc, k2));
  ok(b, poot_graph_set_state_update(b->g, vc, v2));
  poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){1, cap});
  ok(b, poot_graph_iota(b->g, &mt, 1, &io));
  int64_t none[1] = {0};
  ok(b, poot_graph_broadcast(b->g, p0, &mt.shape, none, &pb));
  v2 = bi(b, POOT_OP_ADD, v2, cst(b, POOT_DTYPE_F32, 2.0, &ct.shape)); /* rows in [1, 3) */
  ok(b, poot_graph_attention(b->g, q, k2, v2, bi(b, POOT_OP_LE, io, pb), 0.25, &o));
  output(b, o);
}

/* The f16 caches of an f16-KV decode: kind 0, States written as the model
 * trace writes them (the fresh f32 k/v rows rounded to f16 and written at
 * position p in place; the States start zero); kind 1, random f16 leaves. */
static void kv16_caches(tc_builder *b, const tc_case *c, poot_value p, poot_value *k,
                        poot_value *v) {
  int64_t hkv = c->d[2], dd = c->d[3], cap = c->rdims[0];
  poot_type ct = poot_type_make(POOT_DTYPE_F16, 3, (int64_t[]){cap, hkv, dd});
  if (c->kind == 1) {
    *k = P(b, "k", POOT_DTYPE_F16, 3, ct.shape.dims);
    *v = P(b, "v", POOT_DTYPE_F16, 3, ct.shape.dims);
    return;
  }
  poot_value kc = POOT_VALUE_NONE, vc = POOT_VALUE_NONE, z = scalar_int(b, POOT_DTYPE_I32, 0);
  ok(b, poot_graph_add_state(b->g, "k_cache", &ct, &kc));
  ok(b, poot_graph_add_state(b->g, "v_cache", &ct, &vc));
  poot_value kn = cvt(b, P(b, "k_new", POOT_DTYPE_F32, 3, (int64_t[]){1, hkv, dd}), POOT_DTYPE_F16);
  poot_value vn = cvt(b, P(b, "v_new", POOT_DTYPE_F32, 3, (int64_t[]){1, hkv, dd}), POOT_DTYPE_F16);
  ok(b, poot_graph_dynamic_update_slice(b->g, kc, kn, (poot_value[]){p, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, k));
  ok(b, poot_graph_dynamic_update_slice(b->g, vc, vn, (poot_value[]){p, z, z},
                                        POOT_TRAP_POS_OUT_OF_RANGE, v));
  ok(b, poot_graph_set_state_update(b->g, kc, *k));
  ok(b, poot_graph_set_state_update(b->g, vc, *v));
}

/* Decode over f16 K/V (kv16_caches) at position p = pos + rdims[1] under a
 * causal mask, the fused attention reading the f16 caches directly (the
 * wide form where the target's subgroups allow it: 8 halves per lane per
 * 16-byte load). d = {1, Hq, Hkv, D}, the capacity in rdims[0]. */
static void build_attention_kv16(tc_builder *b, const tc_case *c) {
  int64_t hq = c->d[1], dd = c->d[3], cap = c->rdims[0];
  poot_value q = P(b, "q", POOT_DTYPE_F32, 3, (int64_t[]){1, hq, dd});
  poot_value p0 = bi(b, POOT_OP_ADD, pos_scalar(b), scalar_int(b, POOT_DTYPE_I32, c->rdims[1]));
  poot_value k = POOT_VALUE_NONE, v = POOT_VALUE_NONE, io = POOT_VALUE_NONE, pb = POOT_VALUE_NONE,
             o = POOT_VALUE_NONE;
  kv16_caches(b, c, p0, &k, &v);
  poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){1, cap});
  ok(b, poot_graph_iota(b->g, &mt, 1, &io));
  int64_t none[1] = {0};
  ok(b, poot_graph_broadcast(b->g, p0, &mt.shape, none, &pb));
  ok(b, poot_graph_attention(b->g, q, k, v, bi(b, POOT_OP_LE, io, pb), 1.0 / sqrt((double)dd), &o));
  output(b, o);
}

/* Prefill attention (the tiled form where the target takes it): T query
 * rows at positions p0 .. p0 + T - 1 (p0 = rdims[1], a second chunk after
 * an earlier one) over a cache of rdims[0] ≥ p0 + T positions, K/V in
 * c->dtype (f32 or f16) and q f32; kind 0: the causal mask le(iota, p0 +
 * t); kind 1: a full (non-causal) mask parameter, which keeps the per-row
 * form. d = {T, Hq, Hkv, D}; the v rows are shifted into [1, 3). */
static void build_attention_prefill(tc_builder *b, const tc_case *c) {
  int64_t t = c->d[0], hq = c->d[1], hkv = c->d[2], dd = c->d[3], cap = c->rdims[0];
  poot_value q = P(b, "q", POOT_DTYPE_F32, 3, (int64_t[]){t, hq, dd});
  poot_value k = P(b, "k", c->dtype, 3, (int64_t[]){cap, hkv, dd});
  poot_value v = P(b, "v", c->dtype, 3, (int64_t[]){cap, hkv, dd});
  v = bi(b, POOT_OP_ADD, v, cst(b, c->dtype, 2.0, shape_of(b, v))); /* rows in [1, 3) */
  poot_value mask = POOT_VALUE_NONE, o = POOT_VALUE_NONE;
  if (c->kind == 1) {
    mask = P(b, "mask", POOT_DTYPE_BOOL, 2, (int64_t[]){t, cap});
  } else {
    poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t, cap});
    poot_type pt = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){t});
    poot_value io = POOT_VALUE_NONE, ti = POOT_VALUE_NONE, pb = POOT_VALUE_NONE;
    ok(b, poot_graph_iota(b->g, &mt, 1, &io));
    ok(b, poot_graph_iota(b->g, &pt, 0, &ti));
    poot_value pos = bi(b, POOT_OP_ADD, ti, icst(b, POOT_DTYPE_I32, c->rdims[1], &pt.shape));
    int64_t d0[1] = {0};
    ok(b, poot_graph_broadcast(b->g, pos, &mt.shape, d0, &pb));
    mask = bi(b, POOT_OP_LE, io, pb);
  }
  ok(b, poot_graph_attention(b->g, q, k, v, mask, 1.0 / sqrt((double)dd), &o));
  output(b, o);
}

/* ------------------------------------------------------------- catalogue */

/* Tolerance constants (see the notation at the top of the file). A device
 * tolerance tol is relative: atol = tol * max|oracle| per compared tensor.
 * Where an error is bounded absolutely (A), tol = A / min_ref, and the case
 * states min_ref: the suite checks that max|oracle| ≥ min_ref holds for its
 * fixed inputs, so the derivation's premise is tested too. */
#define U_F32 5.9604644775390625e-08 /* u = 2^-24 */
#define ULP_F16 9.765625e-04         /* 2^-10: one f16 ulp at [1, 2), relative */
#define ULP_BF16 7.8125e-03          /* 2^-7: one bf16 ulp at [1, 2), relative */
#define EPS_M 2e-5                   /* ε_m, the device math bound */

/* Interpreter bounds (unchanged from compile_templates): a length-n f32 sum
 * of non-negative terms is within n·2^-24·sum; a dot product of length k
 * within k·eps·Σ|terms|, with Σ|terms| ≤ 4·max|output| for these inputs. */
#define INTERP_SUM(n) ((double)(n)*6e-8 + 1e-6)
#define INTERP_DOT(k) ((double)(k)*1.2e-7 * 4)

/* Device, a sum of n non-negative terms in index order on the oracle and in
 * lanes plus a tree (or a shared-memory tree) on the device: each is within
 * (n-1)·u·sum of the exact sum (Higham, "Accuracy and Stability of Numerical
 * Algorithms", §4.2), so they differ by at most 2n·u relatively, at every
 * element, hence also against max|oracle|. */
#define DEV_SUM(n) (2 * (double)(n)*U_F32)
/* The same sum under rsqrt(sum + 1): rsqrt halves the relative error of its
 * argument, the + 1 rounds once (u), rsqrt itself errs by ε_m. */
#define DEV_SUMSQ_RSQRT(n) ((double)(n)*U_F32 + U_F32 + EPS_M)
/* Device, a dot product of length k of independent zero-mean terms t (x is
 * uniform in [-1, 1); the weights of any distribution): each side is within
 * λ·√k·u·Σ|t| of the exact sum except with probability 2·exp(-λ²/2)
 * (Higham and Mary, "A new approach to probabilistic rounding error
 * analysis", 2019), λ = 6 (below 10^-7); they differ by at most
 * λ·√(2k)·u·Σ|t|. E|t| ≤ σ_t, so Σ|t| ≈ k·E|t| ≤ √k·(√k·σ_t), and the
 * largest output is at least one standard deviation √k·σ_t: tol =
 * λ·√2·k·u ≈ 8.5·k·u. The products are rounded alike (weights dequantize
 * exactly in f32 on every device); the GEMV template's d·Σ q·x per quant
 * block adds one rounding per term, which λ covers. */
#define DEV_DOT(k) (8.5 * (double)(k)*U_F32)

/* Device, the float chain in f32, per element: the inexact calls and the
 * absolute error each leaves in the result (|a| < 2, so e = exp(a) < 7.4,
 * l = log(|x| + 1) ≤ 0.7, e·l < 5.2):
 *   exp into e·l: 7.4·0.7·ε_m = 5.2ε_m; log into e·l: 7.4·ε_m (absolute
 *   near 1); tanh (slope ≤ 1) adds 2ε_m, sigmoid (slope ≤ 1/4) 2ε_m:
 *   (5.2 + 7.4 + 2)/4 + 2 ≈ 5.7ε_m; rsqrt(ay) ≤ 1: 2ε_m; pow ≤ 2, scaled
 *   by 0.75: 3ε_m; sin, cos: 4ε_m; (erf, the other branch: 2ε_m);
 * A ≈ 15ε_m; with min_ref 1/2: 30ε_m, plus the 7 additions of terms that
 * differ, each rounding differently (u of a running sum ≤ max|oracle|). */
#define DEV_CHAIN_F32 (30 * EPS_M + 7 * U_F32)
/* f16/bf16 chains: every op rounds to the half type, so a device result
 * within ε_m of the oracle's may round to the neighbouring half value: one
 * half ulp (relative 2^-10, bf16 2^-7) at an inexact call, carried to the
 * result with the amplifications above (15 units, absolute), and each of
 * the 7 additions may then re-round to a neighbouring half value of the
 * running sum (≤ max|oracle|). min_ref 8 (the floor·ceil terms reach ±35):
 * tol = (15/8 + 7) ulp. The comparison adds one ulp of the output dtype. */
#define DEV_CHAIN_HALF(ulp) ((15.0 / 8 + 7) * (ulp))
/* exp2(3x) < 8 and log2(|y| + 1/4) (|·| ≤ 2): A = 8ε_m + 2ε_m; the rest is
 * exact; min_ref 1. */
#define DEV_FLOAT_OPS (10 * EPS_M)
/* Composites, per element of swiglu(attention(softmax(rope(rope(rms_norm
 * x))))) + rms_norm(x), inputs in [-1, 1):
 *   rms_norm: the sum of 10 squares is serial (bit-equal); rsqrt ε_m
 *   relative on |n| ≤ √10: 3.2ε_m;
 *   rope (neox, then norm): the frequency's pow errs ε_m relatively on an
 *   angle ≤ 6 rad, sin/cos add 2ε_m: 8ε_m on each of c, s; a rotation of
 *   |x| ≤ 3.2: 2·3.2·8ε_m + √2·(input error): 56ε_m, then 130ε_m;
 *   softmax over 10 (Lipschitz 1/2 in the max-norm) plus exp: 67ε_m on
 *   [0, 1];
 *   attention: scores 0.3·Σ₁₀ q·k: 200ε_m; its softmax (1/2) times the
 *   spread of v (2), plus the template's own exps (as DEV_ATTENTION,
 *   ≤ 4·2·4·EPS_EXP < 12ε_m): 212ε_m;
 *   swiglu: silu slope ≤ 1.1 times |x| < 1, sigmoid 2ε_m: 235ε_m; + n.
 * A ≈ 240ε_m; min_ref 1 (the rms_norm term alone exceeds 1). */
#define DEV_COMPOSITES (240 * EPS_M)
/* gelu (erf, tanh), silu (sigmoid), geglu (tanh gelu times up): one inexact
 * call each on |x| < 1, A ≤ 2ε_m, min_ref 1/2 (each output's largest
 * element: gelu(1) = 0.84, silu(1) = 0.73): 4ε_m. layer_norm of 96: mean and
 * variance reassociated (2·96u each, relative), the mean's error over
 * σ ≈ 0.58, rsqrt ε_m, |x - mean|/σ ≤ 2: ≤ 2ε_m + 600u. */
#define DEV_ACTIVATIONS (4 * EPS_M + 600 * U_F32)
/* exp in the attention template: Vulkan's precision rules (the Vulkan
 * specification, "Precision and Operation of SPIR-V Instructions", which
 * docs/kir-glsl-wgsl.md cites for division) bound exp(x) by 3 + 2|x| ulp;
 * the attention cases' arguments stay within |x| ≤ 18 (scores ≤ √D with
 * q, k in [-1, 1) and scale 1/√D, D ≤ 81): 39 ulp; PTX measures 2.53 ulp. */
#define EPS_EXP (39 * 2 * U_F32)
/* The fused attention template against the decomposition (the oracle) over
 * C positions, head dimension D: the weight of a position passes through
 * its own exp, one rescaling exp per later block of positions its subgroup
 * or thread visits (blocks of 4 positions over ≥ 4 subgroups, or single
 * positions over 256 threads: ≤ ⌈C/16⌉), the subgroup or thread combine
 * factor and, split, the split combine's: δ_e = (⌈C/16⌉ + 3)·EPS_EXP
 * relative. The subgroup form sums q·k across lanes (reassociated: ≤
 * 2D·u·Σ|q·k|·scale ≤ 2D·√D·u on the score, hence relatively on the
 * weight). A convex combination of v rows moves by at most 2δ times their
 * spread (rows shifted into [1, 3): 2); the sums of the weights and of the
 * weighted rows (values ≤ 3) reassociate: λ·√(2C)·u each, λ = 6, as in
 * DEV_DOT. A = 4δ + 36·√(2C)·u; min_ref 1/2 (outputs ≥ 1; the KV-state
 * case's caches ≥ 1/2): tol = 2A. rt2c = √(2C), d15 = D·√D (constant
 * expressions). */
/* The f16-KV cases' premise (max|oracle| ≥ KV16_MIN_REF, checked by the
 * device suite) and DEV_ATTENTION's scaling for it (derived for 1/2). */
#define KV16_MIN_REF 0.04 /* measured: 0.048 (the States case: v_new / 24), 0.10, 0.43 */
#define KV16_SCALE (0.5 / KV16_MIN_REF)
#define DEV_ATTENTION(c, rt2c, d15)                                               \
  (2 * (4 * ((double)(((c) + 15) / 16 + 3) * EPS_EXP + 2 * (double)(d15)*U_F32) + \
        36 * (double)(rt2c)*U_F32))
/* The tiled prefill form (attention_tile.c) over C visible positions: a
 * weight passes through its own exp and one rescale per later block of 16
 * or 32 (≤ ⌈C/16⌉ + 3, DEV_ATTENTION's count), the score is one
 * index-order sum (D·√D·u, within DEV_ATTENTION's 2D·√D·u), and the sums
 * of the weights and weighted rows are serial (λ·C·u each, λ = 6, in
 * place of λ·√(2C)·u): A = 4δ + 36·C·u; min_ref 1/2, tol = 2A (for f16
 * K/V the rows are f16 values: the conversion is exact). */
#define DEV_ATTENTION_TILE(c, d15)                                                \
  (2 * (4 * ((double)(((c) + 15) / 16 + 3) * EPS_EXP + 2 * (double)(d15)*U_F32) + \
        36 * (double)(c)*U_F32))
/* The feed-forward block: the RMSNorm's error is a common scale of the
 * normalized row (reassociated sum of h squares, rsqrt: ε_m + h·u); the
 * gate and up dots err by DEV_DOT(h) each and sigmoid by ε_m independently
 * per element, and those independent errors of the down dot's input are
 * amplified by at most √f (the DEV_DOT argument: Σ|t| ≤ √f·max|out|); the
 * down dot itself adds DEV_DOT(f). */
#define DEV_FFN(h, f, sqrt_f) \
  (DEV_DOT(f) + (sqrt_f) * (2 * DEV_DOT(h) + 2 * EPS_M) + EPS_M + (double)(h)*U_F32)
/* RMSNorm then a GEMV and a bias: the norm's error is a common scale
 * (ε_m + h·u), the GEMV adds DEV_DOT(h). */
#define DEV_NORM_GEMV(h) (DEV_DOT(h) + EPS_M + (double)(h)*U_F32)

#define TC_ALL(name_, group_, fn_, itol_, ihi_, dtol_)                               \
  .name = name_, .group = group_, .build = fn_, .interp_tol = itol_, .int_hi = ihi_, \
  .device_tol = dtol_

const tc_case tc_cases[] = {
    /* elementwise */
    {TC_ALL("float_chain_f32_7x13", "elementwise_float", build_float_chain, 0, 0, DEV_CHAIN_F32),
     .dtype = POOT_DTYPE_F32, .d = {7, 13}, .min_ref = 0.5},
    {TC_ALL("float_chain_f16_5x33", "elementwise_float", build_float_chain, 0, 0,
            DEV_CHAIN_HALF(ULP_F16)),
     .dtype = POOT_DTYPE_F16, .d = {5, 33}, .min_ref = 8},
    {TC_ALL("float_chain_bf16_3x17", "elementwise_float", build_float_chain, 0, 0,
            DEV_CHAIN_HALF(ULP_BF16)),
     .dtype = POOT_DTYPE_BF16, .d = {3, 17}, .min_ref = 8},
    {TC_ALL("float_chain_f32_1x1", "elementwise_float", build_float_chain, 0, 0, DEV_CHAIN_F32),
     .dtype = POOT_DTYPE_F32, .d = {1, 1}, .min_ref = 0.5},
    {TC_ALL("int_chain_i32_37", "elementwise_int", build_int_chain, 0, 11, 0),
     .dtype = POOT_DTYPE_I32, .d = {37}},
    {TC_ALL("int_chain_i8_29", "elementwise_int", build_int_chain, 0, 11, 0),
     .dtype = POOT_DTYPE_I8, .d = {29}},
    {TC_ALL("int_chain_u8_31", "elementwise_int", build_int_chain, 0, 11, 0),
     .dtype = POOT_DTYPE_U8, .d = {31}},
    {TC_ALL("int_chain_u32_19", "elementwise_int", build_int_chain, 0, 11, 0),
     .dtype = POOT_DTYPE_U32, .d = {19}},
    {TC_ALL("int_chain_i16_23", "elementwise_int", build_int_chain, 0, 11, 0),
     .dtype = POOT_DTYPE_I16, .d = {23}},
    /* movement */
    {TC_ALL("movement", "movement", build_movement, 0, 0, 0)},
    /* reductions: sum with prologue and epilogue, max, min, argmax */
    {TC_ALL("reduce_sum_5x37x3_d1", "reduce", build_reduce, INTERP_SUM(37), 0, DEV_SUMSQ_RSQRT(37)),
     .d = {5, 37, 3}, .kind = POOT_REDUCE_SUM, .nd = 1, .rdims = {1}},
    {TC_ALL("reduce_sum_3x130x1_d1", "reduce", build_reduce, INTERP_SUM(130), 0,
            DEV_SUMSQ_RSQRT(130)),
     .d = {3, 130, 1}, .kind = POOT_REDUCE_SUM, .nd = 1, .rdims = {1}},
    {TC_ALL("reduce_sum_2x77x3_d12", "reduce", build_reduce, INTERP_SUM(231), 0,
            DEV_SUMSQ_RSQRT(231)),
     .d = {2, 77, 3}, .kind = POOT_REDUCE_SUM, .nd = 2, .rdims = {1, 2}},
    {TC_ALL("reduce_max_4x100x1_d1", "reduce", build_reduce, 0, 0, 0), .d = {4, 100, 1},
     .kind = POOT_REDUCE_MAX, .nd = 1, .rdims = {1}},
    {TC_ALL("reduce_min_4x9x65_d2", "reduce", build_reduce, 0, 0, 0), .d = {4, 9, 65},
     .kind = POOT_REDUCE_MIN, .nd = 1, .rdims = {2}},
    {TC_ALL("reduce_argmax_3x71x1_d1", "reduce", build_reduce, 0, 0, 0), .d = {3, 71, 1},
     .kind = POOT_REDUCE_ARGMAX, .nd = 1, .rdims = {1}},
    /* GEMV/GEMM in every weight dtype: {m, n, k} */
    /* prefill shapes: the tiled GEMM (several 64 x 64 tiles, ragged each
     * way, K not whole 16-steps for f16) */
    {TC_ALL("gemm_f16_70x130x88", "gemv_gemm", build_dot, INTERP_DOT(88), 0, DEV_DOT(88)),
     .dtype = POOT_DTYPE_F16, .d = {70, 130, 88}},
    {TC_ALL("gemm_q4_0_9x65x128", "gemv_gemm", build_dot, INTERP_DOT(128), 0, DEV_DOT(128)),
     .dtype = POOT_DTYPE_Q4_0, .d = {9, 65, 128}},
    /* K >= 1024: the matrix-fragment form where the target has mma (PTX
     * sm_80+, the interpreter at subgroup 32); K not whole 32-steps */
    {TC_ALL("gemm_f16_70x130x1040", "gemv_gemm", build_dot, INTERP_DOT(1040), 0, DEV_DOT(1040)),
     .dtype = POOT_DTYPE_F16, .d = {70, 130, 1040}},
    /* a batched decode's rows past the GEMV's 8 over one or two tiles:
     * split over K (2 splits of the scalar form; 4 of the mma form on PTX),
     * the partials added by a gemm_combine dispatch */
    {TC_ALL("gemm_q8_0_12x40x512", "gemv_gemm", build_dot, INTERP_DOT(512), 0, DEV_DOT(512)),
     .dtype = POOT_DTYPE_Q8_0, .d = {12, 40, 512}},
    {TC_ALL("gemm_f16_16x96x1024", "gemv_gemm", build_dot, INTERP_DOT(1024), 0, DEV_DOT(1024)),
     .dtype = POOT_DTYPE_F16, .d = {16, 96, 1024}},
    /* raw bf16 rows copied asynchronously on PTX (gemm_mma raw), the last
     * 32-step one live 16-byte copy in four */
    {TC_ALL("gemm_bf16_16x72x1064", "gemv_gemm", build_dot, INTERP_DOT(1064), 0, DEV_DOT(1064)),
     .dtype = POOT_DTYPE_BF16, .d = {16, 72, 1064}},
    {TC_ALL("dot_f32_1x7x131", "gemv_gemm", build_dot, INTERP_DOT(131), 0, DEV_DOT(131)),
     .dtype = POOT_DTYPE_F32, .d = {1, 7, 131}},
    {TC_ALL("dot_f32_3x5x40", "gemv_gemm", build_dot, INTERP_DOT(40), 0, DEV_DOT(40)),
     .dtype = POOT_DTYPE_F32, .d = {3, 5, 40}},
    {TC_ALL("dot_f16_1x9x96", "gemv_gemm", build_dot, INTERP_DOT(96), 0, DEV_DOT(96)),
     .dtype = POOT_DTYPE_F16, .d = {1, 9, 96}},
    {TC_ALL("dot_bf16_2x3x70", "gemv_gemm", build_dot, INTERP_DOT(70), 0, DEV_DOT(70)),
     .dtype = POOT_DTYPE_BF16, .d = {2, 3, 70}},
    {TC_ALL("dot_q8_0_1x5x128", "gemv_gemm", build_dot, INTERP_DOT(128), 0, DEV_DOT(128)),
     .dtype = POOT_DTYPE_Q8_0, .d = {1, 5, 128}},
    {TC_ALL("dot_q4_0_1x3x96", "gemv_gemm", build_dot, INTERP_DOT(96), 0, DEV_DOT(96)),
     .dtype = POOT_DTYPE_Q4_0, .d = {1, 3, 96}},
    {TC_ALL("dot_q4_1_2x3x64", "gemv_gemm", build_dot, INTERP_DOT(64), 0, DEV_DOT(64)),
     .dtype = POOT_DTYPE_Q4_1, .d = {2, 3, 64}},
    {TC_ALL("dot_q5_0_1x4x160", "gemv_gemm", build_dot, INTERP_DOT(160), 0, DEV_DOT(160)),
     .dtype = POOT_DTYPE_Q5_0, .d = {1, 4, 160}},
    {TC_ALL("dot_q5_1_1x3x64", "gemv_gemm", build_dot, INTERP_DOT(64), 0, DEV_DOT(64)),
     .dtype = POOT_DTYPE_Q5_1, .d = {1, 3, 64}},
    {TC_ALL("dot_q8_k_1x3x256", "gemv_gemm", build_dot, INTERP_DOT(256), 0, DEV_DOT(256)),
     .dtype = POOT_DTYPE_Q8_K, .d = {1, 3, 256}},
    {TC_ALL("dot_q4_k_1x3x256", "gemv_gemm", build_dot, INTERP_DOT(256), 0, DEV_DOT(256)),
     .dtype = POOT_DTYPE_Q4_K, .d = {1, 3, 256}},
    {TC_ALL("dot_q5_k_2x2x512", "gemv_gemm", build_dot, INTERP_DOT(512), 0, DEV_DOT(512)),
     .dtype = POOT_DTYPE_Q5_K, .d = {2, 2, 512}},
    {TC_ALL("dot_q6_k_1x3x256", "gemv_gemm", build_dot, INTERP_DOT(256), 0, DEV_DOT(256)),
     .dtype = POOT_DTYPE_Q6_K, .d = {1, 3, 256}},
    {TC_ALL("dot_q2_k_1x3x256", "gemv_gemm", build_dot, INTERP_DOT(256), 0, DEV_DOT(256)),
     .dtype = POOT_DTYPE_Q2_K, .d = {1, 3, 256}},
    {TC_ALL("dot_q3_k_2x2x512", "gemv_gemm", build_dot, INTERP_DOT(512), 0, DEV_DOT(512)),
     .dtype = POOT_DTYPE_Q3_K, .d = {2, 2, 512}},
    /* dequantize alone (f16 output for every second format) */
    {TC_ALL("dequantize_q8_0", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q8_0,
     .kind = 0},
    {TC_ALL("dequantize_q4_0", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q4_0,
     .kind = 1},
    {TC_ALL("dequantize_q4_1", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q4_1,
     .kind = 0},
    {TC_ALL("dequantize_q5_0", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q5_0,
     .kind = 1},
    {TC_ALL("dequantize_q5_1", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q5_1,
     .kind = 0},
    {TC_ALL("dequantize_q8_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q8_K,
     .kind = 1},
    {TC_ALL("dequantize_q4_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q4_K,
     .kind = 0},
    {TC_ALL("dequantize_q5_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q5_K,
     .kind = 1},
    {TC_ALL("dequantize_q6_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q6_K,
     .kind = 0},
    {TC_ALL("dequantize_q2_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q2_K,
     .kind = 1},
    {TC_ALL("dequantize_q3_k", "dequantize", build_dequantize, 0, 0, 0), .dtype = POOT_DTYPE_Q3_K,
     .kind = 0},
    /* indexing, states, rng, composites (the "sum" environment entry is a
     * serial 2-term sum: exact in any order of two terms) */
    {TC_ALL("gather_dus_slice", "gather_dus_slice", build_gather_dus_slice, 0, 11, 0)},
    {TC_ALL("topk_cumsum_scatter", "topk_cumsum_scatter", build_topk_cumsum_scatter, 0, 7, 0)},
    {TC_ALL("rng", "rng", build_rng, 0, 1000000007, 0)},
    {TC_ALL("composites", "composites", build_composites, 1e-5, 7, DEV_COMPOSITES), .min_ref = 1},

    /* Beyond the cases above: the remaining ops, and the template modes a
     * device must run (docs/verification.md lists which case reaches
     * which). */
    {TC_ALL("float_ops", "ops", build_float_ops, 0, 0, DEV_FLOAT_OPS), .min_ref = 1},
    {TC_ALL("convert", "ops", build_convert, 0, 1000, 0)},
    {TC_ALL("int_chain_i64_17", "ops", build_int_chain, 0, 11, 0), .dtype = POOT_DTYPE_I64,
     .d = {17}, .needs_i64 = true},
    {TC_ALL("activations", "ops", build_activations, 2 * INTERP_SUM(96), 0, DEV_ACTIVATIONS),
     .min_ref = 0.5},
    {TC_ALL("movement_narrow", "ops", build_movement_narrow, 0, 0, 0)},
    {TC_ALL("index_more", "ops", build_index_more, 0, 9, 0)},
    {TC_ALL("state_updates", "ops", build_state_updates, 0, 0, 0)},
    {TC_ALL("state_rmw_scatter", "ops", build_state_rmw_scatter, 0, 45, 0)},
    {TC_ALL("reduce_types", "modes", build_reduce_types, 0, 1000, 0)},
    /* the f16 squares' sum is DEV_SUM(80) < DEV_SUMSQ_RSQRT(378) */
    {TC_ALL("reduce_3d_sum", "modes", build_reduce_3d_sum, INTERP_SUM(378), 0,
            DEV_SUMSQ_RSQRT(378))},
    {TC_ALL("reduce_3d_minmax", "modes", build_reduce_3d_minmax, 0, 0, 0)},
    {TC_ALL("reduce_sum_2x3001x1_d1", "modes", build_reduce, INTERP_SUM(3001), 0,
            DEV_SUMSQ_RSQRT(3001)),
     .d = {2, 3001, 1}, .kind = POOT_REDUCE_SUM, .nd = 1, .rdims = {1}},
    /* the weight-streaming GEMV in the weight dtypes it takes (K a multiple
     * of 64; q8_0 at M = 1 is dot_q8_0_1x5x128 above; f16 + bf16 roots with
     * a SwiGLU epilogue and q4_0 with a residual one are the FFN case) */
    {TC_ALL("gemv_f32_2x24x128", "modes", build_dot, INTERP_DOT(128), 0, DEV_DOT(128)),
     .dtype = POOT_DTYPE_F32, .d = {2, 24, 128}},
    {TC_ALL("gemv_f16_4x24x128", "modes", build_dot, INTERP_DOT(128), 0, DEV_DOT(128)),
     .dtype = POOT_DTYPE_F16, .d = {4, 24, 128}},
    {TC_ALL("gemv_bf16_2x24x128", "modes", build_dot, INTERP_DOT(128), 0, DEV_DOT(128)),
     .dtype = POOT_DTYPE_BF16, .d = {2, 24, 128}},
    {TC_ALL("dot_batched", "modes", build_dot_batched, INTERP_DOT(96), 0, DEV_DOT(96))},
    {TC_ALL("ffn_swiglu_residual", "modes", build_ffn, 2 * INTERP_DOT(128), 0,
            DEV_FFN(128, 128, 11.32)),
     .dtype = POOT_DTYPE_F16, .d = {128, 128}},
    {TC_ALL("norm_gemv_q4_k_bias", "modes", build_norm_gemv, INTERP_DOT(256), 0,
            DEV_NORM_GEMV(256))},
    /* attention: decode split over C = 512 (8 splits, the combine
     * unrolled), a long split (32 splits, the combine looped; a sparse
     * mask, so that one position weighs), over KV States, a head dimension
     * above 8 subgroups of lanes (lavapipe: the per-thread form with a
     * subgroup combine), and the f16 decomposition */
    {TC_ALL("attention_decode", "modes", build_attention, 1e-5, 0, DEV_ATTENTION(512, 32.0, 22.63)),
     .dtype = POOT_DTYPE_F32, .d = {1, 8, 2, 8}, .rdims = {512}, .min_ref = 0.5},
    {TC_ALL("attention_split_combine", "modes", build_attention, 1e-5, 0,
            DEV_ATTENTION(2048, 64.0, 8.0)),
     .dtype = POOT_DTYPE_F32, .d = {1, 2, 1, 4}, .rdims = {2048}, .kind = 1, .min_ref = 0.5},
    /* causal decode at position ~700: splits sharing the visible range at
     * run time, with the combine unrolled (8 splits) and looped (32) */
    {TC_ALL("attention_causal_split", "modes", build_attention_causal, 1e-5, 0,
            DEV_ATTENTION(1024, 45.25, 8.0)),
     .d = {1, 2, 1, 4}, .rdims = {2048}, .min_ref = 0.5},
    {TC_ALL("attention_causal_split_long", "modes", build_attention_causal, 1e-5, 0,
            DEV_ATTENTION(1024, 45.25, 8.0)),
     .d = {1, 2, 1, 4}, .rdims = {8192}, .min_ref = 0.5},
    {TC_ALL("attention_kv_state", "modes", build_attention_kv, 1e-5, 0,
            DEV_ATTENTION(64, 11.32, 22.63)),
     .min_ref = 0.5},
    {TC_ALL("attention_wide_head", "modes", build_attention, 1e-5, 0,
            DEV_ATTENTION(16, 5.66, 610.9)),
     .dtype = POOT_DTYPE_F32, .d = {1, 2, 1, 72}, .rdims = {16}, .min_ref = 0.5,
     .native_only = true},
    /* f16 K/V (the model's default cache): States written in place, D = 32
     * (4 lanes a position in the wide form); random f16 caches, D = 32 split
     * at position ~300 and D = 64 (8 lanes a position). Native only: the
     * per-thread form over f16 rows compiles slowly on lavapipe. The v rows
     * are the caches themselves (not shifted), so min_ref is the smallest
     * largest output these inputs give, and the tolerance scales
     * DEV_ATTENTION's (derived for 1/2) by 1 / (2 min_ref) */
    {TC_ALL("attention_kv16_d32", "modes", build_attention_kv16, 1e-5, 0,
            DEV_ATTENTION(64, 11.32, 181.0) * KV16_SCALE),
     .d = {1, 8, 2, 32}, .rdims = {64, 20}, .min_ref = KV16_MIN_REF, .native_only = true},
    {TC_ALL("attention_kv16_d32_split", "modes", build_attention_kv16, 1e-5, 0,
            DEV_ATTENTION(512, 32.0, 181.0) * KV16_SCALE),
     .d = {1, 4, 1, 32}, .rdims = {512, 300}, .kind = 1, .min_ref = KV16_MIN_REF,
     .native_only = true},
    {TC_ALL("attention_kv16_d64_random", "modes", build_attention_kv16, 1e-5, 0,
            DEV_ATTENTION(64, 11.32, 512.0) * KV16_SCALE),
     .d = {1, 8, 2, 64}, .rdims = {64, 20}, .kind = 1, .min_ref = KV16_MIN_REF,
     .native_only = true},
    {TC_ALL("attention_f16_decomposed", "modes", build_attention, 1e-5, 0,
            DEV_ATTENTION(12, 4.9, 22.63)),
     .dtype = POOT_DTYPE_F16, .d = {2, 4, 2, 8}, .rdims = {12}, .min_ref = 0.5},
    /* prefill attention, the tiled form: T = 17, 64, 100 under causal masks,
     * GQA 1, 4 and 8, D = 64, 128 and 80, f32 and f16 K/V, a second chunk
     * (p0 > 0) over a larger cache; a full mask keeps the per-row form */
    {TC_ALL("attention_tile_t17_g4_d64", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION_TILE(17, 512.0)),
     .dtype = POOT_DTYPE_F32, .d = {17, 8, 2, 64}, .rdims = {17, 0}, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("attention_tile_t64_g1_d128_p0", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION_TILE(100, 1448.2)),
     .dtype = POOT_DTYPE_F32, .d = {64, 2, 2, 128}, .rdims = {120, 36}, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("attention_tile_t100_g8_d64_f16", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION_TILE(140, 512.0)),
     .dtype = POOT_DTYPE_F16, .d = {100, 8, 1, 64}, .rdims = {160, 40}, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("attention_tile_t17_g4_d80_f16_p0", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION_TILE(50, 715.5)),
     .dtype = POOT_DTYPE_F16, .d = {17, 4, 1, 80}, .rdims = {64, 33}, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("attention_tile_t64_g4_d128_f16", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION_TILE(64, 1448.2)),
     .dtype = POOT_DTYPE_F16, .d = {64, 4, 1, 128}, .rdims = {64, 0}, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("attention_tile_full_mask", "attention_tile", build_attention_prefill, 1e-5, 0,
            DEV_ATTENTION(32, 8.0, 512.0)),
     .dtype = POOT_DTYPE_F32, .d = {17, 4, 2, 64}, .rdims = {32, 0}, .kind = 1, .min_ref = 0.5,
     .gpu_forms_only = true},
    {TC_ALL("pointwise_big_grid", "modes", build_big_grid, TC_DEVICE_ONLY, 0, 0), .d = {2, 131100},
     .exec_wg = 4},
};
const size_t tc_case_count = sizeof tc_cases / sizeof tc_cases[0];

poot_status tc_case_build(const tc_case *c, poot_graph **out_graph) {
  *out_graph = NULL;
  tc_builder b = {NULL, NULL};
  POOT_TRY(poot_graph_create(&b.g));
  c->build(&b, c);
  if (!b.st) b.st = poot_graph_verify(b.g);
  if (b.st) {
    poot_status wrapped = poot_status_make(poot_status_code_of(b.st), "case %s: %s", c->name,
                                           poot_status_message(b.st));
    poot_status_free(b.st);
    poot_graph_destroy(b.g);
    return wrapped;
  }
  *out_graph = b.g;
  return NULL;
}

const tc_case *tc_case_find(const char *name) {
  for (size_t i = 0; i < tc_case_count; i++)
    if (strcmp(tc_cases[i].name, name) == 0) return &tc_cases[i];
  return NULL;
}
