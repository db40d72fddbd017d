/* The shader-text writer shared by the GLSL and WGSL renderers (see
 * render_shader.h): the structure both emit, with the language differences
 * read from a poot__shader_lang. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_shader.h"

/* ------------------------------------------------------------------ output */

void poot__shader_fail(poot__shader *c, poot_status_code code, const poot_kir_inst *in,
                       const char *why) {
  if (c->st) return;
  c->st = poot_status_make(code, "kir %s: kernel %s, statement #%u (%s): %s", c->lang->name,
                           c->k->name, in ? in->id : 0, in ? poot_kir_op_name(in->op) : "-", why);
}

void poot__shader_put(poot__shader *c, const char *s) {
  poot_strbuf_puts(c->out, s);
}

void poot__shader_putf(poot__shader *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  poot_strbuf_vprintf(c->out, fmt, ap);
  va_end(ap);
}

void poot__shader_line_start(poot__shader *c) {
  for (int i = 0; i < c->depth + 1; i++) poot__shader_put(c, "  ");
}

/* ------------------------------------------------------------------- types */

bool poot__shader_is_float(poot_kir_scalar s) {
  return s == POOT_KIR_F16 || s == POOT_KIR_BF16 || s == POOT_KIR_F32;
}

bool poot__shader_is_signed_int(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_I16 || s == POOT_KIR_I32 || s == POOT_KIR_I64;
}

bool poot__shader_is_unsigned_int(poot_kir_scalar s) {
  return s == POOT_KIR_U8 || s == POOT_KIR_U16 || s == POOT_KIR_U32;
}

unsigned poot__shader_scalar_bits(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return 1;
    case POOT_KIR_I8:
    case POOT_KIR_U8:
      return 8;
    case POOT_KIR_I16:
    case POOT_KIR_U16:
    case POOT_KIR_F16:
    case POOT_KIR_BF16:
      return 16;
    case POOT_KIR_I64:
      return 64;
    default:
      return 32;
  }
}

const char *poot__shader_lane_name(unsigned i) {
  static const char *const n[4] = {"x", "y", "z", "w"};
  return n[i & 3];
}

poot_kir_type poot__shader_vtype(const poot__shader *c, poot_kir_value v) {
  return c->k->values[v].type;
}

poot_kir_scalar poot__shader_mem_elem(const poot__shader *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_SHARED ? c->k->shared[ref].elem : c->k->bindings[ref].elem;
}

static const char *lane_suffix(const poot__shader *c, poot_kir_type t) {
  if (!c->lang->lane_suffix) return "";
  return t.lanes == 4 ? "x4" : t.lanes == 2 ? "x2" : "";
}

/* ---------------------------------------------------------------- pre-pass */

static void scan_type(poot__shader *c, poot_kir_type t) {
  if (t.scalar == POOT_KIR_I64) c->i64 = true;
  if (t.scalar == POOT_KIR_F16) c->f16 = true;
  if (t.scalar == POOT_KIR_BF16) c->bf16 = true;
}

/* A float -> integer conversion needs a saturating helper. */
static void scan_convert(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_scalar from = (poot_kir_scalar)vtype(c, in->args[0]).scalar;
  poot_kir_scalar to = (poot_kir_scalar)in->type.scalar;
  scan_type(c, vtype(c, in->args[0]));
  if (!is_float(from) || is_float(to) || to == POOT_KIR_BOOL) return;
  if (to == POOT_KIR_I64)
    c->f2i64 = true;
  else if (is_signed_int(to))
    c->f2i = true;
  else
    c->f2u = true;
}

static void scan_block(poot__shader *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    if (in->result) scan_type(c, in->type);
    if (in->op == POOT_KIR_OP_ERF) c->erf = true;
    if (in->op == POOT_KIR_OP_TANH) c->tanh = true;
    if (in->op == POOT_KIR_OP_FMA && !c->t->fma_fused) c->fma = true;
    if (in->op == POOT_KIR_OP_CONVERT) scan_convert(c, in);
    if (in->op == POOT_KIR_OP_BITCAST) scan_type(c, vtype(c, in->args[0]));
    c->lang->scan_inst(c, in);
    if (in->op == POOT_KIR_OP_IF || in->op == POOT_KIR_OP_FOR) {
      scan_block(c, &in->body);
      scan_block(c, &in->else_body);
    }
  }
}

static void scan_kernel(poot__shader *c) {
  const poot_kir_kernel *k = c->k;
  for (uint32_t i = 0; i < k->binding_count; i++)
    scan_type(c, poot_kir_type_make(k->bindings[i].elem, 1));
  for (uint32_t i = 0; i < k->shared_count; i++)
    scan_type(c, poot_kir_type_make(k->shared[i].elem, 1));
  for (uint32_t i = 0; i < k->private_count; i++) scan_type(c, k->privates[i].type);
  scan_block(c, &k->body);
  c->lang->scan_kernel(c);
}

/* ------------------------------------------------------------- expressions */

/* A float literal that reads back to exactly `bits` (decimal when that is
 * exact, else a bit pattern). */
static void float_lit(poot__shader *c, uint32_t bits) {
  float f = poot_f32_from_bits(bits);
  if (isfinite(f) && !(f == 0.0f && (bits >> 31))) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)f);
    if (poot_f32_bits(strtof(buf, NULL)) == bits) {
      put(c, buf);
      if (!strpbrk(buf, ".en")) put(c, ".0");
      put(c, c->lang->float_suffix);
      return;
    }
  }
  putf(c, c->lang->float_bits, bits);
}

static void const_lit(poot__shader *c, poot_kir_scalar s, uint64_t bits) {
  switch (s) {
    case POOT_KIR_BOOL:
      put(c, bits ? "true" : "false");
      break;
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32: {
      unsigned w = poot__shader_scalar_bits(s);
      int64_t v = (int64_t)(bits << (64 - w)) >> (64 - w);
      if (v == INT32_MIN)
        put(c, c->lang->int_min);
      else
        putf(c, "%lld%s", (long long)v, c->lang->int_suffix);
      break;
    }
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      putf(c, "%lluu",
           (unsigned long long)(bits & (s == POOT_KIR_U32   ? 0xffffffffull
                                        : s == POOT_KIR_U16 ? 0xffffull
                                                            : 0xffull)));
      break;
    case POOT_KIR_I64:
      c->lang->i64_lit(c, bits);
      break;
    case POOT_KIR_F16:
      float_lit(c, poot_f32_bits(poot_f16_to_f32((uint16_t)bits)));
      break;
    case POOT_KIR_BF16:
      float_lit(c, poot_f32_bits(poot_bf16_to_f32((uint16_t)bits)));
      break;
    default:
      float_lit(c, (uint32_t)bits);
      break;
  }
}

/* A component of value v: "v3" for scalars, "v3.y" for lane i of vectors. */
void poot__shader_comp(poot__shader *c, poot_kir_value v, unsigned i) {
  if (vtype(c, v).lanes > 1)
    putf(c, "v%u.%s", v, poot__shader_lane_name(i));
  else
    putf(c, "v%u", v);
}

/* `open` lane i of v `close`. */
static void wrap_comp(poot__shader *c, const char *open, poot_kir_value v, unsigned i,
                      const char *close) {
  put(c, open);
  comp(c, v, i);
  put(c, close);
}

/* The raw bits of lane i of v as a u32 (a 64-bit pattern for GLSL's i64). */
void poot__shader_lane_bits(poot__shader *c, poot_kir_value v, unsigned i) {
  const poot__shader_lang *L = c->lang;
  switch ((poot_kir_scalar)vtype(c, v).scalar) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      comp(c, v, i);
      break;
    case POOT_KIR_I8:
      put(c, "(");
      wrap_comp(c, L->bits_of_int, v, i, ") & 0xffu)");
      break;
    case POOT_KIR_I16:
      put(c, "(");
      wrap_comp(c, L->bits_of_int, v, i, ") & 0xffffu)");
      break;
    case POOT_KIR_I32:
      wrap_comp(c, L->bits_of_int, v, i, ")");
      break;
    case POOT_KIR_I64:
      wrap_comp(c, L->bits_of_i64, v, i, ")");
      break;
    case POOT_KIR_F16:
      wrap_comp(c, "poot_f32_to_f16(", v, i, ")");
      break;
    case POOT_KIR_BF16:
      put(c, "(");
      wrap_comp(c, L->bits_of_float, v, i, ") >> 16");
      putf(c, "%s)", L->uint_suffix);
      break;
    case POOT_KIR_F32:
      wrap_comp(c, L->bits_of_float, v, i, ")");
      break;
    default:
      putf(c, "%s(", L->reg_scalar(POOT_KIR_U32));
      wrap_comp(c, "", v, i, ")");
      break;
  }
}

/* A value of scalar s from raw bits held in expression `bits`. */
void poot__shader_from_bits(poot__shader *c, poot_kir_scalar s, const char *bits) {
  const poot__shader_lang *L = c->lang;
  const char *u = L->uint_suffix;
  switch (s) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      put(c, bits);
      break;
    case POOT_KIR_I8:
    case POOT_KIR_I16:
      putf(c, "%s(%s%s), 0%s, %u%s)", L->extract_bits, L->int_of_bits, bits, u,
           poot__shader_scalar_bits(s), u);
      break;
    case POOT_KIR_I32:
      putf(c, "%s%s)", L->int_of_bits, bits);
      break;
    case POOT_KIR_I64:
      putf(c, "%s(%s)", L->reg_scalar(s), bits);
      break;
    case POOT_KIR_F16:
      putf(c, "poot_f16_to_f32(%s)", bits);
      break;
    case POOT_KIR_BF16:
      putf(c, "%s(%s) << 16%s)", L->float_of_bits, bits, u);
      break;
    case POOT_KIR_F32:
      putf(c, "%s%s)", L->float_of_bits, bits);
      break;
    default:
      putf(c, L->bool_of_bits, bits);
      break;
  }
}

/* ------------------------------------------------------------- conversions */

/* float -> integer saturates through the f2i/f2u/f2i64 helpers. */
static void float_to_int(poot__shader *c, poot_kir_value v, unsigned i, poot_kir_scalar to) {
  const char *is = c->lang->int_suffix;
  switch (to) {
    case POOT_KIR_I8:
      wrap_comp(c, "poot_f2i(", v, i, "");
      putf(c, ", -128.0, 127.0, -128%s, 127%s)", is, is);
      break;
    case POOT_KIR_I16:
      wrap_comp(c, "poot_f2i(", v, i, "");
      putf(c, ", -32768.0, 32767.0, -32768%s, 32767%s)", is, is);
      break;
    case POOT_KIR_I32:
      wrap_comp(c, "poot_f2i(", v, i, "");
      putf(c, ", -2147483648.0, 2147483648.0, %s, 2147483647%s)", c->lang->int_min, is);
      break;
    case POOT_KIR_U8:
      wrap_comp(c, "poot_f2u(", v, i, ", 255.0, 255u)");
      break;
    case POOT_KIR_U16:
      wrap_comp(c, "poot_f2u(", v, i, ", 65535.0, 65535u)");
      break;
    case POOT_KIR_U32:
      wrap_comp(c, "poot_f2u(", v, i, ", 4294967296.0, 0xffffffffu)");
      break;
    case POOT_KIR_I64:
      wrap_comp(c, "poot_f2i64(", v, i, ")");
      break;
    default:
      break;
  }
}

/* Emits the conversion of lane i of v (scalar `from`) to scalar `to`. */
static void convert_lane(poot__shader *c, poot_kir_value v, unsigned i, poot_kir_scalar from,
                         poot_kir_scalar to) {
  const poot__shader_lang *L = c->lang;
  if (from == to) {
    comp(c, v, i);
    return;
  }
  if (L->convert_lane && L->convert_lane(c, v, i, from, to)) return;
  if (to == POOT_KIR_BOOL) {
    wrap_comp(c, "(", v, i, "");
    putf(c, " != %s(0))", L->reg_scalar(from));
    return;
  }
  if (is_float(from) && is_float(to)) {
    /* f16/bf16 values are exact in f32: widening is the identity. */
    if (to == POOT_KIR_F32)
      comp(c, v, i);
    else
      wrap_comp(c, to == POOT_KIR_F16 ? "poot_rf16(" : "poot_rbf16(", v, i, ")");
    return;
  }
  if (is_float(from)) {
    float_to_int(c, v, i, to);
    return;
  }
  if (is_float(to)) {
    /* integer -> f32 rounds to nearest even; f16/bf16 round again from f32. */
    if (to != POOT_KIR_F32) put(c, to == POOT_KIR_F16 ? "poot_rf16(" : "poot_rbf16(");
    putf(c, "%s(", L->reg_scalar(POOT_KIR_F32));
    wrap_comp(c, "", v, i, ")");
    if (to != POOT_KIR_F32) put(c, ")");
    return;
  }
  /* bool or integer -> integer: the register already holds the source value
   * sign- or zero-extended by the source type; convert, then wrap to the
   * destination. */
  const char *close = L->norm_open(c, poot_kir_type_make(to, 1));
  putf(c, "%s(", L->reg_scalar(to));
  comp(c, v, i);
  putf(c, ")%s", close);
}

static void emit_convert(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  char tb[32];
  c->lang->def_begin(c, in);
  if (in->type.lanes > 1) putf(c, "%s(", c->lang->tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < in->type.lanes; i++) {
    if (i) put(c, ", ");
    convert_lane(c, in->args[0], i, (poot_kir_scalar)ft.scalar, (poot_kir_scalar)in->type.scalar);
  }
  if (in->type.lanes > 1) put(c, ")");
  put(c, ";\n");
}

/* ----------------------------------------------------------------- bitcast */

/* The lanes of one bit pattern regrouped: result lane d from the source
 * temporaries v<id>_b<i> (little-endian), as an expression of `ut` bits. */
static void regroup_lane(poot__shader *c, const poot_kir_inst *in, unsigned d, unsigned sb,
                         unsigned db, const char *ut, char *expr, size_t n) {
  const char *u = c->lang->uint_suffix;
  if (db >= sb) {
    /* Combine db/sb source lanes, lowest first. */
    unsigned per = db / sb, off = 0;
    char acc[200] = "";
    for (unsigned j = 0; j < per; j++) {
      char term[64];
      snprintf(term, sizeof term, "%s(v%u_b%u << %u%s)", j ? " | " : "", in->result, d * per + j,
               off, u);
      strncat(acc, term, sizeof acc - strlen(acc) - 1);
      off += sb;
    }
    snprintf(expr, n, "(%s)", acc);
    return;
  }
  unsigned per = sb / db;
  unsigned long long mask = db == 64 ? ~0ull : (1ull << db) - 1;
  char lit[48];
  if (c->lang->cast_masks)
    snprintf(lit, sizeof lit, "%s(0x%llx)", ut, mask);
  else
    snprintf(lit, sizeof lit, "0x%llxu", mask);
  snprintf(expr, n, "((v%u_b%u >> %u%s) & %s)", in->result, d / per, (d % per) * db, u, lit);
}

/* BITCAST: split the source into lane bit patterns and regroup them. A
 * language with a bitcast_wide hook writes those that involve 64 bits. */
static void emit_bitcast(poot__shader *c, const poot_kir_inst *in) {
  const poot__shader_lang *L = c->lang;
  poot_kir_type ft = vtype(c, in->args[0]);
  unsigned sb = scalar_bits((poot_kir_scalar)ft.scalar),
           db = scalar_bits((poot_kir_scalar)in->type.scalar);
  unsigned n = in->type.lanes;
  bool wide = sb == 64 || db == 64;
  if (wide && L->bitcast_wide) {
    L->bitcast_wide(c, in);
    return;
  }
  const char *ut = wide ? L->u64 : L->reg_scalar(POOT_KIR_U32);
  /* The source lanes as raw bits, in temporaries named v<id>_b<i>. */
  for (unsigned i = 0; i < ft.lanes; i++) {
    line_start(c);
    L->bits_temp_open(c, in->result, i, ut);
    lane_bits(c, in->args[0], i);
    put(c, L->bits_temp_close);
  }
  char tb[32];
  L->def_begin(c, in);
  if (n > 1) putf(c, "%s(", L->tname(in->type, tb, sizeof tb));
  for (unsigned d = 0; d < n; d++) {
    if (d) put(c, ", ");
    char expr[256];
    regroup_lane(c, in, d, sb, db, ut, expr, sizeof expr);
    if (wide && db != 64) {
      char tmp[300];
      snprintf(tmp, sizeof tmp, "%s(%s)", L->reg_scalar(POOT_KIR_U32), expr);
      from_bits(c, (poot_kir_scalar)in->type.scalar, tmp);
    } else {
      from_bits(c, (poot_kir_scalar)in->type.scalar, expr);
    }
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

/* -------------------------------------------------------------- arithmetic */

static void emit_binary(poot__shader *c, const poot_kir_inst *in) {
  const poot__shader_lang *L = c->lang;
  poot_kir_value a = in->args[0], b = in->args[1];
  L->def_begin(c, in);
  if (in->type.scalar == POOT_KIR_BOOL) {
    /* Only and, or and xor take bools (types.c). */
    L->bool_logic(c, in);
    return;
  }
  const char *close = L->norm_open(c, in->type);
  static const char *const infix[POOT_KIR_OP_COUNT] = {
      [POOT_KIR_OP_ADD] = "+", [POOT_KIR_OP_SUB] = "-", [POOT_KIR_OP_MUL] = "*",
      [POOT_KIR_OP_DIV] = "/", [POOT_KIR_OP_AND] = "&", [POOT_KIR_OP_OR] = "|",
      [POOT_KIR_OP_XOR] = "^",
  };
  static const char *const call[POOT_KIR_OP_COUNT] = {
      [POOT_KIR_OP_MIN] = "min",
      [POOT_KIR_OP_MAX] = "max",
      [POOT_KIR_OP_POW] = "pow",
  };
  if (infix[in->op])
    putf(c, "v%u %s v%u", a, infix[in->op], b);
  else if (call[in->op])
    putf(c, "%s(v%u, v%u)", call[in->op], a, b);
  else if (in->op == POOT_KIR_OP_REM)
    L->rem(c, in);
  else
    L->shift(c, in);
  putf(c, "%s;\n", close);
}

static void emit_unary(poot__shader *c, const poot_kir_inst *in) {
  const poot__shader_lang *L = c->lang;
  poot_kir_value a = in->args[0];
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  L->def_begin(c, in);
  if (in->op == POOT_KIR_OP_NOT && s == POOT_KIR_BOOL) {
    L->not_bool(c, in);
    return;
  }
  if (in->op == POOT_KIR_OP_ABS && is_unsigned_int(s)) {
    putf(c, "v%u;\n", a);
    return;
  }
  const char *close = L->norm_open(c, in->type);
  static const char *const fn[POOT_KIR_OP_COUNT] = {
      [POOT_KIR_OP_ABS] = "abs",   [POOT_KIR_OP_EXP] = "exp",        [POOT_KIR_OP_EXP2] = "exp2",
      [POOT_KIR_OP_LOG] = "log",   [POOT_KIR_OP_LOG2] = "log2",      [POOT_KIR_OP_SQRT] = "sqrt",
      [POOT_KIR_OP_SIN] = "sin",   [POOT_KIR_OP_COS] = "cos",        [POOT_KIR_OP_FLOOR] = "floor",
      [POOT_KIR_OP_CEIL] = "ceil", [POOT_KIR_OP_TANH] = "poot_tanh", [POOT_KIR_OP_ERF] = "poot_erf",
  };
  if (in->op == POOT_KIR_OP_NEG)
    L->neg(c, in);
  else if (in->op == POOT_KIR_OP_NOT)
    putf(c, "~v%u", a);
  else if (in->op == POOT_KIR_OP_RSQRT)
    putf(c, "%s(v%u)", L->rsqrt, a);
  else if (in->op == POOT_KIR_OP_TANH || in->op == POOT_KIR_OP_ERF)
    putf(c, "%s%s(v%u)", fn[in->op], lane_suffix(c, in->type), a);
  else
    putf(c, "%s(v%u)", fn[in->op], a);
  putf(c, "%s;\n", close);
}

static void emit_compare(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  c->lang->compare(c, in);
}

static void emit_select(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  c->lang->select(c, in);
}

static void emit_fma(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  const char *close = c->lang->norm_open(c, in->type);
  /* GLSL's and WGSL's fma() take every float vector type. */
  if (c->t->fma_fused)
    putf(c, "fma(v%u, v%u, v%u)%s;\n", in->args[0], in->args[1], in->args[2], close);
  else
    putf(c, "poot_fma%s(v%u, v%u, v%u)%s;\n", lane_suffix(c, in->type), in->args[0], in->args[1],
         in->args[2], close);
}

/* DOT4_I8: neither Debian 12's glslang nor every WebGPU implementation has
 * the packed integer dot product, so the four signed byte products are
 * written out (exact: each byte sign-extended by a left and an arithmetic
 * right shift of the i32 bits; the sum wraps as i32 arithmetic does). */
static void signed_byte(poot__shader *c, poot_kir_value v, unsigned i) {
  const poot__shader_lang *L = c->lang;
  bool word_signed = vtype(c, v).scalar == POOT_KIR_I32;
  put(c, "((");
  if (word_signed)
    putf(c, "v%u", v);
  else
    putf(c, "%sv%u)", L->int_of_bits, v);
  if (i < 3) putf(c, " << %u%s", 24 - 8 * i, L->uint_suffix);
  putf(c, ") >> 24%s)", L->uint_suffix);
}

static void emit_dot4(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  putf(c, "v%u", in->args[2]);
  for (unsigned i = 0; i < 4; i++) {
    put(c, " + ");
    signed_byte(c, in->args[0], i);
    put(c, " * ");
    signed_byte(c, in->args[1], i);
  }
  put(c, ";\n");
}

/* ------------------------------------------------------------------ values */

static void emit_const(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  const_lit(c, (poot_kir_scalar)in->type.scalar, in->imm);
  put(c, ";\n");
}

static void emit_builtin(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  unsigned d = (unsigned)in->imm;
  if (in->ref == POOT_KIR_BUILTIN_LOCAL_SIZE) {
    putf(c, "%uu;\n", c->k->workgroup_size[d < 3 ? d : 0]);
  } else if (in->ref < POOT_KIR_BUILTIN_COUNT) {
    c->lang->builtin(c, in);
  } else {
    put(c, "0u;\n");
    fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
  }
  if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID && c->no_subgroups)
    fail(c, POOT_UNSUPPORTED, in, "the target has no subgroups");
}

static void emit_param(poot__shader *c, const poot_kir_inst *in) {
  const poot_kir_param *p = &c->k->params[in->ref];
  c->lang->def_begin(c, in);
  if (p->kind == POOT_KIR_PARAM_PUSH) {
    putf(c, "poot_pc.p%u;\n", in->ref);
  } else {
    char idx[32];
    snprintf(idx, sizeof idx, "%uu", p->slot_index);
    c->lang->load_elem(c, POOT_KIR_SPACE_GLOBAL, p->slot_ref, idx);
    put(c, ";\n");
  }
}

static void emit_splat(poot__shader *c, const poot_kir_inst *in) {
  char tb[32];
  c->lang->def_begin(c, in);
  putf(c, "%s(v%u);\n", c->lang->tname(in->type, tb, sizeof tb), in->args[0]);
}

static void emit_vec(poot__shader *c, const poot_kir_inst *in) {
  char tb[32];
  c->lang->def_begin(c, in);
  putf(c, "%s(", c->lang->tname(in->type, tb, sizeof tb));
  for (uint32_t i = 0; i < in->arg_count; i++) putf(c, "%sv%u", i ? ", " : "", in->args[i]);
  put(c, ");\n");
}

static void emit_extract(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  putf(c, "v%u.%s;\n", in->args[0], poot__shader_lane_name((unsigned)in->imm));
}

static void emit_priv_load(poot__shader *c, const poot_kir_inst *in) {
  c->lang->def_begin(c, in);
  putf(c, "p%u[%llu];\n", in->ref, (unsigned long long)in->imm);
}

static void emit_priv_store(poot__shader *c, const poot_kir_inst *in) {
  line_start(c);
  putf(c, "p%u[%llu] = v%u;\n", in->ref, (unsigned long long)in->imm, in->args[0]);
}

/* --------------------------------------------------------------- subgroups */

static void emit_subgroup(poot__shader *c, const poot_kir_inst *in) {
  if (c->no_subgroups) {
    fail(c, POOT_UNSUPPORTED, in, "the target has no subgroups");
    return;
  }
  poot_kir_value a = in->args[0];
  unsigned long long imm = (unsigned long long)in->imm;
  c->lang->def_begin(c, in);
  switch (in->op) {
    case POOT_KIR_OP_SG_REDUCE_ADD:
      putf(c, "subgroupAdd(v%u);\n", a);
      break;
    case POOT_KIR_OP_SG_REDUCE_MAX:
      putf(c, "subgroupMax(v%u);\n", a);
      break;
    case POOT_KIR_OP_SG_REDUCE_MIN:
      putf(c, "subgroupMin(v%u);\n", a);
      break;
    case POOT_KIR_OP_SG_SHUFFLE:
      putf(c, "subgroupShuffle(v%u, %s(v%u));\n", a, c->lang->reg_scalar(POOT_KIR_U32),
           in->args[1]);
      break;
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
      putf(c, "subgroupShuffleXor(v%u, %lluu);\n", a, imm);
      break;
    default:
      putf(c, "subgroupBroadcast(v%u, %lluu);\n", a, imm);
      break;
  }
}

/* ------------------------------------------------------------ control flow */

static void emit_barrier(poot__shader *c, const poot_kir_inst *in) {
  (void)in;
  for (const char *const *s = c->lang->barrier; *s; s++) {
    line_start(c);
    put(c, *s);
  }
}

static void emit_check(poot__shader *c, const poot_kir_inst *in) {
  line_start(c);
  putf(c, c->lang->check, in->args[0], (unsigned long long)in->imm);
}

/* A nested block, one level deeper. */
static void emit_body(poot__shader *c, const poot_kir_block *b) {
  c->depth++;
  poot__shader_emit_block(c, b);
  c->depth--;
}

static void emit_if(poot__shader *c, const poot_kir_inst *in) {
  line_start(c);
  putf(c, "if (v%u) {\n", in->args[0]);
  emit_body(c, &in->body);
  if (in->else_body.first) {
    line_start(c);
    put(c, "} else {\n");
    emit_body(c, &in->else_body);
  }
  line_start(c);
  put(c, "}\n");
}

static void emit_for(poot__shader *c, const poot_kir_inst *in) {
  line_start(c);
  c->lang->for_header(c, in);
  emit_body(c, &in->body);
  line_start(c);
  put(c, "}\n");
}

/* ----------------------------------------------------------------- atomics */

const char *poot__shader_atomic_fn(poot_kir_op op) {
  switch (op) {
    case POOT_KIR_OP_ATOMIC_MAX:
      return "atomicMax";
    case POOT_KIR_OP_ATOMIC_MIN:
      return "atomicMin";
    case POOT_KIR_OP_ATOMIC_XCHG:
      return "atomicExchange";
    default:
      return "atomicAdd";
  }
}

/* --------------------------------------------------------------- dispatch */

typedef void (*emit_fn)(poot__shader *c, const poot_kir_inst *in);

static void emit_load(poot__shader *c, const poot_kir_inst *in) {
  c->lang->load(c, in);
}
static void emit_store(poot__shader *c, const poot_kir_inst *in) {
  c->lang->store(c, in);
}
static void emit_atomic(poot__shader *c, const poot_kir_inst *in) {
  c->lang->atomic(c, in);
}

/* SPLAT, VEC and EXTRACT move values between lanes. */
static void emit_lanes(poot__shader *c, const poot_kir_inst *in) {
  if (in->op == POOT_KIR_OP_SPLAT)
    emit_splat(c, in);
  else if (in->op == POOT_KIR_OP_VEC)
    emit_vec(c, in);
  else
    emit_extract(c, in);
}

/* One writer per op class (the class column of POOT_KIR_OPS). */
static const emit_fn k_emit[POOT_KIR_CLASS_COUNT] = {
    [POOT_KIR_CLASS_CONST] = emit_const,
    [POOT_KIR_CLASS_BUILTIN] = emit_builtin,
    [POOT_KIR_CLASS_PARAM] = emit_param,
    [POOT_KIR_CLASS_UNARY] = emit_unary,
    [POOT_KIR_CLASS_BINARY] = emit_binary,
    [POOT_KIR_CLASS_COMPARE] = emit_compare,
    [POOT_KIR_CLASS_SELECT] = emit_select,
    [POOT_KIR_CLASS_FMA] = emit_fma,
    [POOT_KIR_CLASS_CONVERT] = emit_convert,
    [POOT_KIR_CLASS_BITCAST] = emit_bitcast,
    [POOT_KIR_CLASS_LANES] = emit_lanes,
    [POOT_KIR_CLASS_LOAD] = emit_load,
    [POOT_KIR_CLASS_STORE] = emit_store,
    [POOT_KIR_CLASS_PRIV_LOAD] = emit_priv_load,
    [POOT_KIR_CLASS_PRIV_STORE] = emit_priv_store,
    [POOT_KIR_CLASS_ATOMIC] = emit_atomic,
    [POOT_KIR_CLASS_SUBGROUP] = emit_subgroup,
    [POOT_KIR_CLASS_BARRIER] = emit_barrier,
    [POOT_KIR_CLASS_CHECK] = emit_check,
    [POOT_KIR_CLASS_IF] = emit_if,
    [POOT_KIR_CLASS_FOR] = emit_for,
    [POOT_KIR_CLASS_DOT4] = emit_dot4,
};

static void emit_inst(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_op_class cls = poot__kir_op_class(in->op);
  emit_fn fn = cls < POOT_KIR_CLASS_COUNT ? k_emit[cls] : NULL;
  if (fn) {
    fn(c, in);
    return;
  }
  char why[64];
  snprintf(why, sizeof why, "the %s renderer does not know this op", c->lang->title);
  fail(c, POOT_UNSUPPORTED, in, why);
}

void poot__shader_emit_block(poot__shader *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in && !c->st; in = in->next) emit_inst(c, in);
}

/* ------------------------------------------------------------------ driver */

/* The helper functions the kernel needs, each once, in a fixed order. */
static void emit_library(poot__shader *c) {
  const bool used[POOT__SHADER_LIB_COUNT] = {
      [POOT__SHADER_LIB_F16_NARROW] = c->f16, [POOT__SHADER_LIB_F16_WIDEN] = c->f16,
      [POOT__SHADER_LIB_F16_ROUND] = c->f16,  [POOT__SHADER_LIB_BF16] = c->bf16,
      [POOT__SHADER_LIB_TANH] = c->tanh,      [POOT__SHADER_LIB_ERF] = c->erf,
      [POOT__SHADER_LIB_FMA] = c->fma,        [POOT__SHADER_LIB_F2I] = c->f2i,
      [POOT__SHADER_LIB_F2U] = c->f2u,        [POOT__SHADER_LIB_F2I64] = c->f2i64,
  };
  const bool native[POOT__SHADER_LIB_COUNT] = {
      [POOT__SHADER_LIB_F16_NARROW] = c->t->f16_narrow_native,
      [POOT__SHADER_LIB_F16_WIDEN] = c->t->f16_widen_native,
  };
  for (int i = 0; i < POOT__SHADER_LIB_COUNT; i++) {
    if (!used[i]) continue;
    put(c, native[i] && c->lang->lib_native[i] ? c->lang->lib_native[i] : c->lang->lib[i]);
  }
}

/* What the target cannot hold, found before any text is written. */
static void check_target(poot__shader *c) {
  const poot_kir_kernel *k = c->k;
  if (c->i64 && !c->lang->has_i64(c->t)) fail(c, POOT_UNSUPPORTED, NULL, c->lang->no_i64);
  /* Shared arrays of 8/16-bit elements are held in 32-bit words here, so
   * the shader needs more shared memory than KIR counts. */
  uint64_t shared_bytes = 0;
  for (uint32_t i = 0; i < k->shared_count; i++)
    shared_bytes += (uint64_t)k->shared[i].count * (k->shared[i].elem == POOT_KIR_I64 ? 8 : 4);
  if (!c->st && c->t->shared_memory_bytes && shared_bytes > c->t->shared_memory_bytes)
    fail(c, POOT_UNSUPPORTED, NULL,
         "shared arrays take more than the target's shared memory once widened to 32-bit words");
}

poot_status poot__shader_render(const poot__shader_lang *lang, const poot_kir_kernel *kernel,
                                const poot_kir_target *target, poot_strbuf *out) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir %s: NULL kernel, target or output",
                            lang->name);
  if (target->lang != lang->lang)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir %s: target %s is not a %s target",
                            lang->name, target->name ? target->name : "?", lang->title);
  POOT_TRY(poot_kir_verify(kernel, target));
  poot__shader *c = poot_calloc(1, lang->state_size);
  if (!c)
    return poot_status_make(POOT_OUT_OF_MEMORY, "kir %s: kernel %s", lang->name, kernel->name);
  c->lang = lang;
  c->k = kernel;
  c->t = target;
  c->out = out;
  if (!lang->init(c)) {
    lang->deinit(c); /* what init allocated before it failed */
    poot_free(c);
    return poot_status_make(POOT_OUT_OF_MEMORY, "kir %s: kernel %s", lang->name, kernel->name);
  }
  scan_kernel(c);
  check_target(c);
  size_t start = out->len;
  if (!c->st) lang->declarations(c);
  if (!c->st) emit_library(c);
  if (!c->st) lang->entry(c);
  lang->deinit(c);
  poot_status st = c->st;
  poot_free(c);
  if (!st) st = poot_strbuf_status(out);
  if (st && out->len > start && !out->failed) {
    /* Leave the caller's buffer as it was. */
    out->len = start;
    out->data[start] = 0;
  }
  return st;
}
