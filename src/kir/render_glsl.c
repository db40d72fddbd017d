/* KIR → GLSL 4.50 compute text for Vulkan (compiled by spirv.c).
 *
 * How each construct maps (docs/kir-glsl-wgsl.md has the full table):
 *  - values are GLSL locals named v<id>, defined where KIR defines them, so
 *    GLSL block scoping is KIR's scoping. Float values are `precise` so that
 *    no driver contracts a*b+c into an fma (KIR rounds every operation).
 *  - 8/16-bit integers live in int/uint registers and are renormalised
 *    (sign-extended or masked) after every operation that can leave their
 *    range; f16 and bf16 live in float registers holding exactly
 *    representable values, and every f16 operation is rounded back to f16
 *    with an exact integer routine (Vulkan does not promise the rounding of
 *    OpFConvert to half).
 *  - buffers are std430 SSBOs at set 0, binding = KIR binding number, with
 *    their storage element type (8/16-bit through GL_EXT_shader_8bit_storage
 *    and GL_EXT_shader_16bit_storage; f16/bf16 as uint16_t bit patterns).
 *    2- and 4-lane accesses of 32-bit buffers go through a vecN alias of the
 *    same binding, so they are real vector loads.
 *  - PUSH params are a push-constant block; SLOT params are loads.
 *  - check(cond, code) ORs 1 << code into element 0 of the error binding.
 * The output is a pure function of (kernel, target). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/kir.h"
#include "render_shader_lib.h"

typedef struct glsl_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  poot_strbuf *out;
  poot_status st; /* the first failure; rendering stops appending after it */
  int depth;
  /* What the kernel uses (a pre-pass fills these). */
  bool sg_basic, sg_arith, sg_shuffle, sg_ballot;
  bool i64, storage8, storage16, atomic_float, atomic_float2;
  bool f16, bf16, erf, tanh, fma, f2i, f2u, f2i64, frem;
  uint8_t *alias; /* per binding position: bit 1 = vec2 alias, bit 2 = vec4 alias */
} glsl_ctx;

static void fail(glsl_ctx *c, poot_status_code code, const poot_kir_inst *in, const char *why) {
  if (c->st) return;
  c->st = poot_status_make(code, "kir glsl: kernel %s, statement #%u (%s): %s", c->k->name,
                           in ? in->id : 0, in ? poot_kir_op_name(in->op) : "-", why);
}

static void put(glsl_ctx *c, const char *s) {
  poot_strbuf_puts(c->out, s);
}

static void putf(glsl_ctx *c, const char *fmt, ...) POOT_PRINTF(2, 3);
static void putf(glsl_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  poot_strbuf_vprintf(c->out, fmt, ap);
  va_end(ap);
}

static void line_start(glsl_ctx *c) {
  for (int i = 0; i < c->depth + 1; i++) put(c, "  ");
}

static poot_kir_type vtype(const glsl_ctx *c, poot_kir_value v) {
  return c->k->values[v].type;
}

/* ------------------------------------------------------------------ types */

static bool is_float(poot_kir_scalar s) {
  return s == POOT_KIR_F16 || s == POOT_KIR_BF16 || s == POOT_KIR_F32;
}
static bool is_signed_int(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_I16 || s == POOT_KIR_I32 || s == POOT_KIR_I64;
}
static unsigned scalar_bits(poot_kir_scalar s) {
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

/* The register (value) type of a scalar. */
static const char *reg_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bool";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "int";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "uint";
    case POOT_KIR_I64:
      return "int64_t";
    default:
      return "float";
  }
}

static const char *reg_vec_prefix(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bvec";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "ivec";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "uvec";
    case POOT_KIR_I64:
      return "i64vec";
    default:
      return "vec";
  }
}

/* Writes the register type name of t into buf. */
static const char *tname(poot_kir_type t, char *buf, size_t n) {
  if (t.lanes <= 1)
    snprintf(buf, n, "%s", reg_scalar(t.scalar));
  else
    snprintf(buf, n, "%s%u", reg_vec_prefix(t.scalar), (unsigned)t.lanes);
  return buf;
}

/* The storage element type of a buffer. */
static const char *storage_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
      return "int8_t";
    case POOT_KIR_U8:
      return "uint8_t";
    case POOT_KIR_I16:
      return "int16_t";
    case POOT_KIR_U16:
    case POOT_KIR_F16:
    case POOT_KIR_BF16:
      return "uint16_t";
    default:
      return reg_scalar(s);
  }
}

static const char *lane_name(unsigned i) {
  static const char *const n[4] = {"x", "y", "z", "w"};
  return n[i & 3];
}

/* --------------------------------------------------------------- pre-pass */

static void scan_type(glsl_ctx *c, poot_kir_type t) {
  if (t.scalar == POOT_KIR_I64) c->i64 = true;
  if (t.scalar == POOT_KIR_F16) c->f16 = true;
  if (t.scalar == POOT_KIR_BF16) c->bf16 = true;
}

static void scan_block(glsl_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    if (in->result) scan_type(c, in->type);
    switch (in->op) {
      case POOT_KIR_OP_BUILTIN:
        if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID) c->sg_basic = true;
        break;
      case POOT_KIR_OP_SG_REDUCE_ADD:
      case POOT_KIR_OP_SG_REDUCE_MAX:
      case POOT_KIR_OP_SG_REDUCE_MIN:
        c->sg_basic = c->sg_arith = true;
        break;
      case POOT_KIR_OP_SG_SHUFFLE:
      case POOT_KIR_OP_SG_SHUFFLE_XOR:
        c->sg_basic = c->sg_shuffle = true;
        break;
      case POOT_KIR_OP_SG_BROADCAST:
        c->sg_basic = c->sg_ballot = true;
        break;
      case POOT_KIR_OP_ERF:
        c->erf = true;
        break;
      case POOT_KIR_OP_TANH:
        c->tanh = true;
        break;
      case POOT_KIR_OP_FMA:
        c->fma = true;
        break;
      case POOT_KIR_OP_REM:
        if (is_float(in->type.scalar)) c->frem = true;
        break;
      case POOT_KIR_OP_CONVERT: {
        poot_kir_scalar from = (poot_kir_scalar)vtype(c, in->args[0]).scalar;
        scan_type(c, vtype(c, in->args[0]));
        if (is_float(from) && !is_float(in->type.scalar) && in->type.scalar != POOT_KIR_BOOL) {
          if (in->type.scalar == POOT_KIR_I64)
            c->f2i64 = true;
          else if (is_signed_int(in->type.scalar))
            c->f2i = true;
          else
            c->f2u = true;
        }
        break;
      }
      case POOT_KIR_OP_BITCAST:
        scan_type(c, vtype(c, in->args[0]));
        break;
      case POOT_KIR_OP_ATOMIC_ADD:
      case POOT_KIR_OP_ATOMIC_XCHG:
        if (in->type.scalar == POOT_KIR_F32) c->atomic_float = true;
        break;
      case POOT_KIR_OP_ATOMIC_MAX:
      case POOT_KIR_OP_ATOMIC_MIN:
        if (in->type.scalar == POOT_KIR_F32) c->atomic_float2 = true;
        break;
      case POOT_KIR_OP_LOAD:
      case POOT_KIR_OP_STORE:
        if (in->space == POOT_KIR_SPACE_GLOBAL && in->type.lanes > 1 &&
            scalar_bits((poot_kir_scalar)in->type.scalar) == 32)
          c->alias[in->ref] |= (uint8_t)(in->type.lanes == 2 ? 1 : 2);
        break;
      default:
        break;
    }
    if (in->op == POOT_KIR_OP_IF || in->op == POOT_KIR_OP_FOR) {
      scan_block(c, &in->body);
      scan_block(c, &in->else_body);
    }
  }
}

static void scan_kernel(glsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  for (uint32_t i = 0; i < k->binding_count; i++) {
    poot_kir_scalar e = k->bindings[i].elem;
    unsigned bits = scalar_bits(e);
    if (bits == 8) c->storage8 = true;
    if (bits == 16) c->storage16 = true;
    if (e == POOT_KIR_I64) c->i64 = true;
    if (e == POOT_KIR_F16) c->f16 = true;
    if (e == POOT_KIR_BF16) c->bf16 = true;
  }
  for (uint32_t i = 0; i < k->shared_count; i++)
    scan_type(c, poot_kir_type_make(k->shared[i].elem, 1));
  for (uint32_t i = 0; i < k->private_count; i++) scan_type(c, k->privates[i].type);
  scan_block(c, &k->body);
  if (c->f2i64) c->i64 = true;
}

/* ---------------------------------------------------------------- helpers */

/* ------------------------------------------------------------- expressions */

/* A float literal that reads back to exactly `bits` (decimal when that is
 * exact, else a bit pattern). */
static void float_lit(poot_strbuf *sb, uint32_t bits) {
  float f = poot_f32_from_bits(bits);
  if (isfinite(f) && !(f == 0.0f && (bits >> 31))) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)f);
    if (poot_f32_bits(strtof(buf, NULL)) == bits) {
      poot_strbuf_puts(sb, buf);
      if (!strpbrk(buf, ".en")) poot_strbuf_puts(sb, ".0");
      return;
    }
  }
  poot_strbuf_printf(sb, "uintBitsToFloat(0x%08xu)", bits);
}

static void const_lit(glsl_ctx *c, poot_kir_scalar s, uint64_t bits) {
  switch (s) {
    case POOT_KIR_BOOL:
      put(c, bits ? "true" : "false");
      break;
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32: {
      unsigned w = scalar_bits(s);
      int64_t v = (int64_t)(bits << (64 - w)) >> (64 - w);
      if (v == INT32_MIN)
        put(c, "int(0x80000000u)");
      else
        putf(c, "%lld", (long long)v);
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
      putf(c, "int64_t(0x%016llxul)", (unsigned long long)bits);
      break;
    case POOT_KIR_F16:
      float_lit(c->out, poot_f32_bits(poot_f16_to_f32((uint16_t)bits)));
      break;
    case POOT_KIR_BF16:
      float_lit(c->out, poot_f32_bits(poot_bf16_to_f32((uint16_t)bits)));
      break;
    default:
      float_lit(c->out, (uint32_t)bits);
      break;
  }
}

/* Opens "<type> v<id> = " for a value statement. */
static void def_begin(glsl_ctx *c, const poot_kir_inst *in) {
  char tb[32];
  line_start(c);
  if (is_float((poot_kir_scalar)in->type.scalar)) put(c, "precise ");
  putf(c, "%s v%u = ", tname(in->type, tb, sizeof tb), in->result);
}

/* The renormalisation wrapper of a result of type t: opens it (returns the
 * closing text). 8/16-bit integers wrap, f16 rounds. */
static const char *norm_open(glsl_ctx *c, poot_kir_type t) {
  switch (t.scalar) {
    case POOT_KIR_I8:
      put(c, "bitfieldExtract(");
      return ", 0, 8)";
    case POOT_KIR_I16:
      put(c, "bitfieldExtract(");
      return ", 0, 16)";
    case POOT_KIR_U8:
      put(c, "((");
      return ") & 0xffu)";
    case POOT_KIR_U16:
      put(c, "((");
      return ") & 0xffffu)";
    case POOT_KIR_F16:
      put(c, "poot_rf16(");
      return ")";
    case POOT_KIR_BF16:
      put(c, "poot_rbf16(");
      return ")";
    default:
      return "";
  }
}

/* A component of value v: "v3" for scalars, "v3.y" for lane i of vectors. */
static void comp(glsl_ctx *c, poot_kir_value v, unsigned i) {
  if (vtype(c, v).lanes > 1)
    putf(c, "v%u.%s", v, lane_name(i));
  else
    putf(c, "v%u", v);
}

/* The raw bits of lane i of v as a uint (or uint64_t for 64-bit lanes). */
static void lane_bits(glsl_ctx *c, poot_kir_value v, unsigned i) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  switch (s) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      comp(c, v, i);
      break;
    case POOT_KIR_I8:
      put(c, "(uint(");
      comp(c, v, i);
      put(c, ") & 0xffu)");
      break;
    case POOT_KIR_I16:
      put(c, "(uint(");
      comp(c, v, i);
      put(c, ") & 0xffffu)");
      break;
    case POOT_KIR_I32:
      put(c, "uint(");
      comp(c, v, i);
      put(c, ")");
      break;
    case POOT_KIR_I64:
      put(c, "uint64_t(");
      comp(c, v, i);
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "poot_f32_to_f16(");
      comp(c, v, i);
      put(c, ")");
      break;
    case POOT_KIR_BF16:
      put(c, "(floatBitsToUint(");
      comp(c, v, i);
      put(c, ") >> 16)");
      break;
    case POOT_KIR_F32:
      put(c, "floatBitsToUint(");
      comp(c, v, i);
      put(c, ")");
      break;
    default:
      put(c, "uint(");
      comp(c, v, i);
      put(c, ")");
      break;
  }
}

/* A value of scalar s from raw bits held in expression `bits`. */
static void from_bits(glsl_ctx *c, poot_kir_scalar s, const char *bits) {
  switch (s) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      put(c, bits);
      break;
    case POOT_KIR_I8:
      putf(c, "bitfieldExtract(int(%s), 0, 8)", bits);
      break;
    case POOT_KIR_I16:
      putf(c, "bitfieldExtract(int(%s), 0, 16)", bits);
      break;
    case POOT_KIR_I32:
      putf(c, "int(%s)", bits);
      break;
    case POOT_KIR_I64:
      putf(c, "int64_t(%s)", bits);
      break;
    case POOT_KIR_F16:
      putf(c, "poot_f16_to_f32(%s)", bits);
      break;
    case POOT_KIR_BF16:
      putf(c, "uintBitsToFloat((%s) << 16)", bits);
      break;
    case POOT_KIR_F32:
      putf(c, "uintBitsToFloat(%s)", bits);
      break;
    default:
      putf(c, "bool(%s)", bits);
      break;
  }
}

/* Emits the conversion of lane i of v (scalar `from`) to scalar `to`. */
static void convert_lane(glsl_ctx *c, poot_kir_value v, unsigned i, poot_kir_scalar from,
                         poot_kir_scalar to) {
  if (from == to) {
    comp(c, v, i);
    return;
  }
  if (to == POOT_KIR_BOOL) {
    put(c, "(");
    comp(c, v, i);
    putf(c, " != %s(0))", reg_scalar(from));
    return;
  }
  if (from == POOT_KIR_BOOL) {
    const char *close = norm_open(c, poot_kir_type_make(to, 1));
    putf(c, "%s(", reg_scalar(to));
    comp(c, v, i);
    putf(c, ")%s", close);
    return;
  }
  if (is_float(from) && is_float(to)) {
    /* f16/bf16 values are exact in f32: widening is the identity. */
    if (to == POOT_KIR_F32) {
      comp(c, v, i);
    } else {
      put(c, to == POOT_KIR_F16 ? "poot_rf16(" : "poot_rbf16(");
      comp(c, v, i);
      put(c, ")");
    }
    return;
  }
  if (is_float(from)) {
    switch (to) {
      case POOT_KIR_I8:
        put(c, "poot_f2i(");
        comp(c, v, i);
        put(c, ", -128.0, 127.0, -128, 127)");
        break;
      case POOT_KIR_I16:
        put(c, "poot_f2i(");
        comp(c, v, i);
        put(c, ", -32768.0, 32767.0, -32768, 32767)");
        break;
      case POOT_KIR_I32:
        put(c, "poot_f2i(");
        comp(c, v, i);
        put(c, ", -2147483648.0, 2147483648.0, int(0x80000000u), 2147483647)");
        break;
      case POOT_KIR_U8:
        put(c, "poot_f2u(");
        comp(c, v, i);
        put(c, ", 255.0, 255u)");
        break;
      case POOT_KIR_U16:
        put(c, "poot_f2u(");
        comp(c, v, i);
        put(c, ", 65535.0, 65535u)");
        break;
      case POOT_KIR_U32:
        put(c, "poot_f2u(");
        comp(c, v, i);
        put(c, ", 4294967296.0, 0xffffffffu)");
        break;
      case POOT_KIR_I64:
        put(c, "poot_f2i64(");
        comp(c, v, i);
        put(c, ")");
        break;
      default:
        break;
    }
    return;
  }
  if (is_float(to)) {
    /* integer -> f32 rounds to nearest even; f16/bf16 round again from f32. */
    if (to != POOT_KIR_F32) put(c, to == POOT_KIR_F16 ? "poot_rf16(" : "poot_rbf16(");
    put(c, "float(");
    comp(c, v, i);
    put(c, ")");
    if (to != POOT_KIR_F32) put(c, ")");
    return;
  }
  /* integer -> integer: the register already holds the source value sign- or
   * zero-extended by the source type; convert, then wrap to the destination. */
  const char *close = norm_open(c, poot_kir_type_make(to, 1));
  putf(c, "%s(", reg_scalar(to));
  comp(c, v, i);
  putf(c, ")%s", close);
}

static void emit_convert(glsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  def_begin(c, in);
  char tb[32];
  if (in->type.lanes > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < in->type.lanes; i++) {
    if (i) put(c, ", ");
    convert_lane(c, in->args[0], i, (poot_kir_scalar)ft.scalar, (poot_kir_scalar)in->type.scalar);
  }
  if (in->type.lanes > 1) put(c, ")");
  put(c, ";\n");
}

/* BITCAST: split the source into lane bit patterns and regroup them. */
static void emit_bitcast(glsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  unsigned sb = scalar_bits((poot_kir_scalar)ft.scalar),
           db = scalar_bits((poot_kir_scalar)in->type.scalar);
  unsigned n = in->type.lanes;
  char tb[32];
  bool wide = sb == 64 || db == 64;
  const char *ut = wide ? "uint64_t" : "uint";
  /* The source lanes as raw bits, in temporaries named v<id>_b<i>. */
  for (unsigned i = 0; i < ft.lanes; i++) {
    line_start(c);
    putf(c, "%s v%u_b%u = %s(", ut, in->result, i, ut);
    lane_bits(c, in->args[0], i);
    put(c, ");\n");
  }
  def_begin(c, in);
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned d = 0; d < n; d++) {
    if (d) put(c, ", ");
    char expr[256];
    if (db >= sb) {
      /* Combine db/sb source lanes, lowest first (little-endian). */
      unsigned per = db / sb, off = 0;
      char acc[200] = "";
      for (unsigned j = 0; j < per; j++) {
        char term[64];
        snprintf(term, sizeof term, "%s(v%u_b%u << %u)", j ? " | " : "", in->result, d * per + j,
                 off);
        strncat(acc, term, sizeof acc - strlen(acc) - 1);
        off += sb;
      }
      snprintf(expr, sizeof expr, "(%s)", acc);
    } else {
      unsigned per = sb / db;
      unsigned src = d / per, sh = (d % per) * db;
      snprintf(expr, sizeof expr, "((v%u_b%u >> %u) & %s(0x%llx))", in->result, src, sh, ut,
               (unsigned long long)((db == 64) ? ~0ull : ((1ull << db) - 1)));
    }
    if (wide && db != 64) {
      char tmp[300];
      snprintf(tmp, sizeof tmp, "uint(%s)", expr);
      from_bits(c, (poot_kir_scalar)in->type.scalar, tmp);
    } else {
      from_bits(c, (poot_kir_scalar)in->type.scalar, expr);
    }
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

/* The lvalue of element `index_expr` of a global binding or shared array. */
static void mem_elem(glsl_ctx *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  if (space == POOT_KIR_SPACE_SHARED)
    putf(c, "s%u[%s]", ref, index_expr);
  else
    putf(c, "b%u.d[%s]", ref, index_expr);
}

static poot_kir_scalar mem_elem_type(const glsl_ctx *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_SHARED ? c->k->shared[ref].elem : c->k->bindings[ref].elem;
}

/* A load of one element, converted to its register value. */
static void load_elem(glsl_ctx *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  if (space == POOT_KIR_SPACE_SHARED) {
    mem_elem(c, space, ref, index_expr);
    return;
  }
  switch (e) {
    case POOT_KIR_I8:
    case POOT_KIR_I16:
      put(c, "int(");
      break;
    case POOT_KIR_U8:
    case POOT_KIR_U16:
      put(c, "uint(");
      break;
    case POOT_KIR_F16:
      put(c, "poot_f16_to_f32(uint(");
      break;
    case POOT_KIR_BF16:
      put(c, "uintBitsToFloat(uint(");
      break;
    default:
      break;
  }
  mem_elem(c, space, ref, index_expr);
  switch (e) {
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_U8:
    case POOT_KIR_U16:
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "))");
      break;
    case POOT_KIR_BF16:
      put(c, ") << 16)");
      break;
    default:
      break;
  }
}

/* The storage form of a register value (for stores). */
static void store_value(glsl_ctx *c, poot_kir_space space, uint32_t ref, poot_kir_value v,
                        unsigned lane) {
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  if (space == POOT_KIR_SPACE_SHARED) {
    comp(c, v, lane);
    return;
  }
  switch (e) {
    case POOT_KIR_I8:
      put(c, "int8_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_U8:
      put(c, "uint8_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_I16:
      put(c, "int16_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_U16:
      put(c, "uint16_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "uint16_t(poot_f32_to_f16(");
      comp(c, v, lane);
      put(c, "))");
      break;
    case POOT_KIR_BF16:
      put(c, "uint16_t(poot_f32_to_bf16(");
      comp(c, v, lane);
      put(c, "))");
      break;
    default:
      comp(c, v, lane);
      break;
  }
}

static void emit_load(glsl_ctx *c, const poot_kir_inst *in) {
  unsigned n = in->type.lanes;
  char idx[64];
  snprintf(idx, sizeof idx, "v%u", in->args[0]);
  def_begin(c, in);
  if (n > 1 && in->space == POOT_KIR_SPACE_GLOBAL &&
      scalar_bits((poot_kir_scalar)in->type.scalar) == 32) {
    /* A real vector load through the vecN alias of the binding. */
    putf(c, "b%u_v%u.d[uint(v%u) >> %u];\n", in->ref, n, in->args[0], n == 2 ? 1 : 2);
    return;
  }
  char tb[32];
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < n; i++) {
    if (i) put(c, ", ");
    if (i) snprintf(idx, sizeof idx, "v%u + %u", in->args[0], i);
    load_elem(c, in->space, in->ref, idx);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void emit_store(glsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value v = in->args[1];
  unsigned n = vtype(c, v).lanes;
  if (n > 1 && in->space == POOT_KIR_SPACE_GLOBAL &&
      scalar_bits((poot_kir_scalar)vtype(c, v).scalar) == 32) {
    line_start(c);
    putf(c, "b%u_v%u.d[uint(v%u) >> %u] = v%u;\n", in->ref, n, in->args[0], n == 2 ? 1 : 2, v);
    return;
  }
  for (unsigned i = 0; i < n; i++) {
    char idx[64];
    if (i)
      snprintf(idx, sizeof idx, "v%u + %u", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "v%u", in->args[0]);
    line_start(c);
    mem_elem(c, in->space, in->ref, idx);
    put(c, " = ");
    store_value(c, in->space, in->ref, v, i);
    put(c, ";\n");
  }
}

static void emit_atomic(glsl_ctx *c, const poot_kir_inst *in) {
  const char *fn = "atomicAdd";
  switch (in->op) {
    case POOT_KIR_OP_ATOMIC_MAX:
      fn = "atomicMax";
      break;
    case POOT_KIR_OP_ATOMIC_MIN:
      fn = "atomicMin";
      break;
    case POOT_KIR_OP_ATOMIC_XCHG:
      fn = "atomicExchange";
      break;
    case POOT_KIR_OP_ATOMIC_CAS:
      fn = "atomicCompSwap";
      break;
    default:
      break;
  }
  poot_kir_scalar e = mem_elem_type(c, in->space, in->ref);
  if (e != POOT_KIR_U32 && e != POOT_KIR_I32 && e != POOT_KIR_F32 &&
      !(e == POOT_KIR_I64 && in->space == POOT_KIR_SPACE_GLOBAL)) {
    fail(c, POOT_UNSUPPORTED, in, "GLSL atomics need 32-bit (or 64-bit) elements");
    return;
  }
  if (e == POOT_KIR_F32 && in->op == POOT_KIR_OP_ATOMIC_CAS) {
    fail(c, POOT_UNSUPPORTED, in, "GLSL has no compare-exchange on floats");
    return;
  }
  char idx[32];
  snprintf(idx, sizeof idx, "v%u", in->args[0]);
  def_begin(c, in);
  putf(c, "%s(", fn);
  mem_elem(c, in->space, in->ref, idx);
  if (in->op == POOT_KIR_OP_ATOMIC_CAS)
    putf(c, ", v%u, v%u);\n", in->args[1], in->args[2]);
  else
    putf(c, ", v%u);\n", in->args[1]);
}

static const char *compare_fn(poot_kir_op op, bool vector) {
  switch (op) {
    case POOT_KIR_OP_EQ:
      return vector ? "equal" : "==";
    case POOT_KIR_OP_NE:
      return vector ? "notEqual" : "!=";
    case POOT_KIR_OP_LT:
      return vector ? "lessThan" : "<";
    case POOT_KIR_OP_LE:
      return vector ? "lessThanEqual" : "<=";
    case POOT_KIR_OP_GT:
      return vector ? "greaterThan" : ">";
    default:
      return vector ? "greaterThanEqual" : ">=";
  }
}

static void emit_binary(glsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0], b = in->args[1];
  poot_kir_type t = in->type;
  poot_kir_scalar s = (poot_kir_scalar)t.scalar;
  char tb[32];
  def_begin(c, in);
  if (s == POOT_KIR_BOOL &&
      (in->op == POOT_KIR_OP_AND || in->op == POOT_KIR_OP_OR || in->op == POOT_KIR_OP_XOR)) {
    const char *op = in->op == POOT_KIR_OP_AND ? "&" : in->op == POOT_KIR_OP_OR ? "|" : "^";
    if (t.lanes > 1) {
      /* GLSL has no bitwise operators on bvec: go through uvec. */
      putf(c, "%s(uvec%u(v%u) %s uvec%u(v%u));\n", tname(t, tb, sizeof tb), t.lanes, a, op, t.lanes,
           b);
    } else {
      const char *lop = in->op == POOT_KIR_OP_AND ? "&&" : in->op == POOT_KIR_OP_OR ? "||" : "^^";
      putf(c, "v%u %s v%u;\n", a, lop, b);
    }
    return;
  }
  const char *close = norm_open(c, t);
  switch (in->op) {
    case POOT_KIR_OP_ADD:
      putf(c, "v%u + v%u", a, b);
      break;
    case POOT_KIR_OP_SUB:
      putf(c, "v%u - v%u", a, b);
      break;
    case POOT_KIR_OP_MUL:
      putf(c, "v%u * v%u", a, b);
      break;
    case POOT_KIR_OP_DIV:
      putf(c, "v%u / v%u", a, b);
      break;
    case POOT_KIR_OP_REM:
      if (is_float(s))
        putf(c, "v%u - v%u * trunc(v%u / v%u)", a, b, a, b);
      else if (is_signed_int(s))
        putf(c, "v%u - (v%u / v%u) * v%u", a, a, b, b); /* C: sign of a */
      else
        putf(c, "v%u %% v%u", a, b);
      break;
    case POOT_KIR_OP_MIN:
      putf(c, "min(v%u, v%u)", a, b);
      break;
    case POOT_KIR_OP_MAX:
      putf(c, "max(v%u, v%u)", a, b);
      break;
    case POOT_KIR_OP_AND:
      putf(c, "v%u & v%u", a, b);
      break;
    case POOT_KIR_OP_OR:
      putf(c, "v%u | v%u", a, b);
      break;
    case POOT_KIR_OP_XOR:
      putf(c, "v%u ^ v%u", a, b);
      break;
    case POOT_KIR_OP_SHL:
      putf(c, "v%u << v%u", a, b);
      break;
    case POOT_KIR_OP_SHR:
      putf(c, "v%u >> v%u", a, b);
      break;
    case POOT_KIR_OP_POW:
      putf(c, "pow(v%u, v%u)", a, b);
      break;
    default:
      break;
  }
  putf(c, "%s;\n", close);
}

static void emit_unary(glsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0];
  poot_kir_type t = in->type;
  poot_kir_scalar s = (poot_kir_scalar)t.scalar;
  def_begin(c, in);
  if (in->op == POOT_KIR_OP_NOT && s == POOT_KIR_BOOL) {
    if (t.lanes > 1)
      putf(c, "not(v%u);\n", a);
    else
      putf(c, "!v%u;\n", a);
    return;
  }
  if (in->op == POOT_KIR_OP_ABS && (s == POOT_KIR_U8 || s == POOT_KIR_U16 || s == POOT_KIR_U32)) {
    putf(c, "v%u;\n", a);
    return;
  }
  const char *close = norm_open(c, t);
  const char *fn = NULL;
  switch (in->op) {
    case POOT_KIR_OP_NEG:
      putf(c, "-v%u", a);
      break;
    case POOT_KIR_OP_NOT:
      putf(c, "~v%u", a);
      break;
    case POOT_KIR_OP_ABS:
      fn = "abs";
      break;
    case POOT_KIR_OP_EXP:
      fn = "exp";
      break;
    case POOT_KIR_OP_EXP2:
      fn = "exp2";
      break;
    case POOT_KIR_OP_LOG:
      fn = "log";
      break;
    case POOT_KIR_OP_LOG2:
      fn = "log2";
      break;
    case POOT_KIR_OP_SQRT:
      fn = "sqrt";
      break;
    case POOT_KIR_OP_RSQRT:
      fn = "inversesqrt";
      break;
    case POOT_KIR_OP_SIN:
      fn = "sin";
      break;
    case POOT_KIR_OP_COS:
      fn = "cos";
      break;
    case POOT_KIR_OP_TANH:
      fn = "poot_tanh";
      break;
    case POOT_KIR_OP_ERF:
      fn = "poot_erf";
      break;
    case POOT_KIR_OP_FLOOR:
      fn = "floor";
      break;
    case POOT_KIR_OP_CEIL:
      fn = "ceil";
      break;
    default:
      break;
  }
  if (fn) putf(c, "%s(v%u)", fn, a);
  putf(c, "%s;\n", close);
}

static void emit_builtin(glsl_ctx *c, const poot_kir_inst *in) {
  def_begin(c, in);
  unsigned d = (unsigned)in->imm;
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
      putf(c, "gl_WorkGroupID.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS:
      putf(c, "gl_NumWorkGroups.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_LOCAL_ID:
      putf(c, "gl_LocalInvocationID.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
      putf(c, "%uu;\n", c->k->workgroup_size[d < 3 ? d : 0]);
      break;
    case POOT_KIR_BUILTIN_LOCAL_INDEX:
      put(c, "gl_LocalInvocationIndex;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_ID:
      put(c, "gl_SubgroupID;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_LANE:
      put(c, "gl_SubgroupInvocationID;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      put(c, "gl_SubgroupSize;\n");
      break;
    default:
      put(c, "0u;\n");
      fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
      break;
  }
}

static void emit_block(glsl_ctx *c, const poot_kir_block *b);

static void emit_inst(glsl_ctx *c, const poot_kir_inst *in) {
  char tb[32];
  switch (in->op) {
    case POOT_KIR_OP_CONST:
      def_begin(c, in);
      const_lit(c, (poot_kir_scalar)in->type.scalar, in->imm);
      put(c, ";\n");
      break;
    case POOT_KIR_OP_BUILTIN:
      emit_builtin(c, in);
      break;
    case POOT_KIR_OP_PARAM: {
      const poot_kir_param *p = &c->k->params[in->ref];
      def_begin(c, in);
      if (p->kind == POOT_KIR_PARAM_PUSH) {
        putf(c, "poot_pc.p%u;\n", in->ref);
      } else {
        char idx[32];
        snprintf(idx, sizeof idx, "%uu", p->slot_index);
        load_elem(c, POOT_KIR_SPACE_GLOBAL, p->slot_ref, idx);
        put(c, ";\n");
      }
      break;
    }
    case POOT_KIR_OP_NEG:
    case POOT_KIR_OP_NOT:
    case POOT_KIR_OP_ABS:
    case POOT_KIR_OP_EXP:
    case POOT_KIR_OP_EXP2:
    case POOT_KIR_OP_LOG:
    case POOT_KIR_OP_LOG2:
    case POOT_KIR_OP_SQRT:
    case POOT_KIR_OP_RSQRT:
    case POOT_KIR_OP_SIN:
    case POOT_KIR_OP_COS:
    case POOT_KIR_OP_TANH:
    case POOT_KIR_OP_ERF:
    case POOT_KIR_OP_FLOOR:
    case POOT_KIR_OP_CEIL:
      emit_unary(c, in);
      break;
    case POOT_KIR_OP_ADD:
    case POOT_KIR_OP_SUB:
    case POOT_KIR_OP_MUL:
    case POOT_KIR_OP_DIV:
    case POOT_KIR_OP_REM:
    case POOT_KIR_OP_MIN:
    case POOT_KIR_OP_MAX:
    case POOT_KIR_OP_AND:
    case POOT_KIR_OP_OR:
    case POOT_KIR_OP_XOR:
    case POOT_KIR_OP_SHL:
    case POOT_KIR_OP_SHR:
    case POOT_KIR_OP_POW:
      emit_binary(c, in);
      break;
    case POOT_KIR_OP_EQ:
    case POOT_KIR_OP_NE:
    case POOT_KIR_OP_LT:
    case POOT_KIR_OP_LE:
    case POOT_KIR_OP_GT:
    case POOT_KIR_OP_GE: {
      bool vec = vtype(c, in->args[0]).lanes > 1;
      def_begin(c, in);
      if (vec)
        putf(c, "%s(v%u, v%u);\n", compare_fn(in->op, true), in->args[0], in->args[1]);
      else
        putf(c, "v%u %s v%u;\n", in->args[0], compare_fn(in->op, false), in->args[1]);
      break;
    }
    case POOT_KIR_OP_SELECT: {
      def_begin(c, in);
      if (vtype(c, in->args[0]).lanes > 1)
        putf(c, "mix(v%u, v%u, v%u);\n", in->args[2], in->args[1], in->args[0]);
      else
        putf(c, "v%u ? v%u : v%u;\n", in->args[0], in->args[1], in->args[2]);
      break;
    }
    case POOT_KIR_OP_FMA: {
      def_begin(c, in);
      const char *close = norm_open(c, in->type);
      putf(c, "poot_fma(v%u, v%u, v%u)%s;\n", in->args[0], in->args[1], in->args[2], close);
      break;
    }
    case POOT_KIR_OP_CONVERT:
      emit_convert(c, in);
      break;
    case POOT_KIR_OP_BITCAST:
      emit_bitcast(c, in);
      break;
    case POOT_KIR_OP_SPLAT:
      def_begin(c, in);
      putf(c, "%s(v%u);\n", tname(in->type, tb, sizeof tb), in->args[0]);
      break;
    case POOT_KIR_OP_VEC:
      def_begin(c, in);
      putf(c, "%s(", tname(in->type, tb, sizeof tb));
      for (uint32_t i = 0; i < in->arg_count; i++) putf(c, "%sv%u", i ? ", " : "", in->args[i]);
      put(c, ");\n");
      break;
    case POOT_KIR_OP_EXTRACT:
      def_begin(c, in);
      putf(c, "v%u.%s;\n", in->args[0], lane_name((unsigned)in->imm));
      break;
    case POOT_KIR_OP_LOAD:
      emit_load(c, in);
      break;
    case POOT_KIR_OP_STORE:
      emit_store(c, in);
      break;
    case POOT_KIR_OP_PRIV_LOAD:
      def_begin(c, in);
      putf(c, "p%u[%llu];\n", in->ref, (unsigned long long)in->imm);
      break;
    case POOT_KIR_OP_PRIV_STORE:
      line_start(c);
      putf(c, "p%u[%llu] = v%u;\n", in->ref, (unsigned long long)in->imm, in->args[0]);
      break;
    case POOT_KIR_OP_ATOMIC_ADD:
    case POOT_KIR_OP_ATOMIC_MAX:
    case POOT_KIR_OP_ATOMIC_MIN:
    case POOT_KIR_OP_ATOMIC_XCHG:
    case POOT_KIR_OP_ATOMIC_CAS:
      emit_atomic(c, in);
      break;
    case POOT_KIR_OP_SG_REDUCE_ADD:
      def_begin(c, in);
      putf(c, "subgroupAdd(v%u);\n", in->args[0]);
      break;
    case POOT_KIR_OP_SG_REDUCE_MAX:
      def_begin(c, in);
      putf(c, "subgroupMax(v%u);\n", in->args[0]);
      break;
    case POOT_KIR_OP_SG_REDUCE_MIN:
      def_begin(c, in);
      putf(c, "subgroupMin(v%u);\n", in->args[0]);
      break;
    case POOT_KIR_OP_SG_SHUFFLE:
      def_begin(c, in);
      putf(c, "subgroupShuffle(v%u, uint(v%u));\n", in->args[0], in->args[1]);
      break;
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
      def_begin(c, in);
      putf(c, "subgroupShuffleXor(v%u, %lluu);\n", in->args[0], (unsigned long long)in->imm);
      break;
    case POOT_KIR_OP_SG_BROADCAST:
      def_begin(c, in);
      putf(c, "subgroupBroadcast(v%u, %lluu);\n", in->args[0], (unsigned long long)in->imm);
      break;
    case POOT_KIR_OP_BARRIER:
      line_start(c);
      put(c, "memoryBarrierShared();\n");
      line_start(c);
      put(c, "memoryBarrierBuffer();\n");
      line_start(c);
      put(c, "barrier();\n");
      break;
    case POOT_KIR_OP_CHECK:
      line_start(c);
      putf(c, "if (!v%u) atomicOr(poot_err_word[0], 1u << %lluu);\n", in->args[0],
           (unsigned long long)in->imm);
      break;
    case POOT_KIR_OP_IF:
      line_start(c);
      putf(c, "if (v%u) {\n", in->args[0]);
      c->depth++;
      emit_block(c, &in->body);
      c->depth--;
      if (in->else_body.first) {
        line_start(c);
        put(c, "} else {\n");
        c->depth++;
        emit_block(c, &in->else_body);
        c->depth--;
      }
      line_start(c);
      put(c, "}\n");
      break;
    case POOT_KIR_OP_FOR: {
      const char *it = reg_scalar((poot_kir_scalar)in->type.scalar);
      line_start(c);
      putf(c, "for (%s v%u = v%u; v%u < v%u; v%u += v%u) {\n", it, in->result, in->args[0],
           in->result, in->args[1], in->result, in->args[2]);
      c->depth++;
      emit_block(c, &in->body);
      c->depth--;
      line_start(c);
      put(c, "}\n");
      break;
    }
    default:
      fail(c, POOT_UNSUPPORTED, in, "the GLSL renderer does not know this op");
      break;
  }
}

static void emit_block(glsl_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in && !c->st; in = in->next) emit_inst(c, in);
}

/* ----------------------------------------------------------- declarations */

static void emit_header(glsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  const poot_kir_target *t = c->t;
  put(c, "#version 450\n");
  if (c->sg_basic) put(c, "#extension GL_KHR_shader_subgroup_basic : require\n");
  if (c->sg_arith) put(c, "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
  if (c->sg_shuffle) put(c, "#extension GL_KHR_shader_subgroup_shuffle : require\n");
  if (c->sg_ballot) put(c, "#extension GL_KHR_shader_subgroup_ballot : require\n");
  if (c->storage16) put(c, "#extension GL_EXT_shader_16bit_storage : require\n");
  if (c->storage8) put(c, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (c->i64) put(c, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (c->atomic_float) put(c, "#extension GL_EXT_shader_atomic_float : require\n");
  if (c->atomic_float2) put(c, "#extension GL_EXT_shader_atomic_float2 : require\n");
  putf(c, "// KIR kernel %s for target %s (kernel hash %016llx)\n", k->name,
       t->name ? t->name : "?", (unsigned long long)k->hash);
  putf(c, "layout(local_size_x = %u, local_size_y = %u, local_size_z = %u) in;\n",
       k->workgroup_size[0] ? k->workgroup_size[0] : 1,
       k->workgroup_size[1] ? k->workgroup_size[1] : 1,
       k->workgroup_size[2] ? k->workgroup_size[2] : 1);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const poot_kir_binding *bd = &k->bindings[i];
    const char *q = bd->access == POOT_KIR_ACCESS_READ ? "readonly " : "";
    putf(c, "layout(std430, set = 0, binding = %u) %sbuffer PootB%u { %s d[]; } b%u; // %s: %s\n",
         bd->binding, q, i, storage_scalar(bd->elem), i, bd->name ? bd->name : "",
         poot_kir_scalar_name(bd->elem));
    for (unsigned lanes = 2; lanes <= 4; lanes += 2) {
      if (!(c->alias[i] & (lanes == 2 ? 1 : 2))) continue;
      char tb[32];
      putf(c, "layout(std430, set = 0, binding = %u) %sbuffer PootB%uV%u { %s d[]; } b%u_v%u;\n",
           bd->binding, q, i, lanes, tname(poot_kir_type_make(bd->elem, lanes), tb, sizeof tb), i,
           lanes);
    }
  }
  if (k->has_checks)
    putf(c, "layout(std430, set = 0, binding = %u) buffer poot_err { uint poot_err_word[]; };\n",
         k->error_binding);
  bool any_push = false;
  for (uint32_t i = 0; i < k->param_count; i++) {
    if (k->params[i].kind != POOT_KIR_PARAM_PUSH) continue;
    if (!any_push) put(c, "layout(push_constant, std430) uniform PootParams {\n");
    any_push = true;
    putf(c, "  %s p%u; // %s\n", reg_scalar(k->params[i].type), i,
         k->params[i].name ? k->params[i].name : "");
  }
  if (any_push) put(c, "} poot_pc;\n");
  for (uint32_t i = 0; i < k->shared_count; i++) {
    putf(c, "shared %s s%u[%u]; // %s: %s\n", reg_scalar(k->shared[i].elem), i, k->shared[i].count,
         k->shared[i].name ? k->shared[i].name : "", poot_kir_scalar_name(k->shared[i].elem));
  }
  if (c->f16) put(c, poot__kir_glsl_f16_helpers);
  if (c->bf16) put(c, poot__kir_glsl_bf16_helpers);
  if (c->tanh) put(c, poot__kir_glsl_tanh_helper);
  if (c->erf) put(c, poot__kir_glsl_erf_helper);
  if (c->fma) put(c, poot__kir_glsl_fma_helper);
  if (c->f2i) put(c, poot__kir_glsl_f2i_helper);
  if (c->f2u) put(c, poot__kir_glsl_f2u_helper);
  if (c->f2i64) put(c, poot__kir_glsl_f2i64_helper);
}

static void emit_main(glsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  put(c, "void main() {\n");
  for (uint32_t i = 0; i < k->private_count; i++) {
    const poot_kir_private *p = &k->privates[i];
    char tb[32];
    tname(p->type, tb, sizeof tb);
    putf(c, "  %s p%u[%u]; // %s\n", tb, i, p->count, p->name ? p->name : "");
    /* KIR private arrays start zeroed; GLSL locals do not. */
    putf(c, "  for (int i = 0; i < %u; i++) p%u[i] = %s(0);\n", p->count, i, tb);
  }
  emit_block(c, &k->body);
  put(c, "}\n");
}

poot_status poot_kir_render_glsl(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                 poot_strbuf *out) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir glsl: NULL kernel, target or output");
  if (target->lang != POOT_KIR_LANG_GLSL)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir glsl: target %s is not a GLSL target",
                            target->name ? target->name : "?");
  POOT_TRY(poot_kir_verify(kernel, target));
  glsl_ctx c;
  memset(&c, 0, sizeof c);
  c.k = kernel;
  c.t = target;
  c.out = out;
  c.alias = poot_calloc(kernel->binding_count ? kernel->binding_count : 1, 1);
  if (!c.alias) return poot_status_make(POOT_OUT_OF_MEMORY, "kir glsl: kernel %s", kernel->name);
  scan_kernel(&c);
  if (c.i64 && !poot_kir_target_has_arith(target, POOT_KIR_I64) &&
      !poot_kir_target_has_storage(target, POOT_KIR_I64))
    fail(&c, POOT_UNSUPPORTED, NULL, "64-bit integers need shaderInt64, which the target lacks");
  /* Shared arrays of 8/16-bit elements are held in 32-bit words here, so
   * the shader needs more shared memory than KIR counts. */
  uint64_t shared_bytes = 0;
  for (uint32_t i = 0; i < kernel->shared_count; i++)
    shared_bytes +=
        (uint64_t)kernel->shared[i].count * (kernel->shared[i].elem == POOT_KIR_I64 ? 8 : 4);
  if (!c.st && target->shared_memory_bytes && shared_bytes > target->shared_memory_bytes)
    fail(&c, POOT_UNSUPPORTED, NULL,
         "shared arrays take more than the target's shared memory once widened to 32-bit words");
  size_t start = out->len;
  if (!c.st) emit_header(&c);
  if (!c.st) emit_main(&c);
  poot_free(c.alias);
  if (!c.st) c.st = poot_strbuf_status(out);
  if (c.st && out->len > start && !out->failed) {
    /* Leave the caller's buffer as it was. */
    out->len = start;
    out->data[start] = 0;
  }
  return c.st;
}
