/* KIR → WGSL compute text for WebGPU.
 *
 * How each construct maps (docs/kir-glsl-wgsl.md has the full table):
 *  - values are `let v<id>` where KIR defines them; 8/16-bit integers live in
 *    i32/u32 and are renormalised after each operation that can leave their
 *    range; f16 and bf16 live in f32 holding exactly representable values,
 *    and every f16 operation is rounded back with an exact integer routine.
 *  - buffers are storage arrays at @group(0) @binding(KIR binding number).
 *    32-bit elements are stored as themselves. f16 is `array<f16>` behind
 *    `enable f16;` when the target has f16 arithmetic (the device feature
 *    shader-f16); otherwise f16, bf16 and the 8/16-bit integers are packed
 *    into u32 words with bit manipulation. A buffer that is stored to packed
 *    or used by an atomic is an array of atomic<u32/i32/f32>, so packed
 *    stores (atomicAnd + atomicOr of the element's bits) never lose a
 *    neighbour's concurrent write.
 *  - PUSH params are members of a uniform struct at kernel->param_binding;
 *    SLOT params are loads.
 *  - check(cond, code) ORs 1 << code into element 0 of the error binding.
 *  - subgroup builtins and operations appear only when the target has them.
 * The output is a pure function of (kernel, target). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/kir.h"
#include "render_shader_lib.h"

/* How a buffer or shared array is stored. */
enum { MEM_PLAIN = 0, MEM_F16 = 1, MEM_PACKED = 2 };

typedef struct wgsl_mem {
  uint8_t kind; /* MEM_* */
  bool atomic;  /* declared as array<atomic<...>> */
  bool written;
} wgsl_mem;

typedef struct wgsl_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  poot_strbuf *out;
  poot_status st;
  int depth;
  bool enable_f16, f16, bf16, erf, tanh, fma, f2i, f2u, f2i64, i64, subgroups;
  bool sg_lane, sg_size; /* subgroup builtins the kernel reads */
  wgsl_mem *bind;        /* per binding position */
  wgsl_mem *shared;      /* per shared array */
} wgsl_ctx;

static void fail(wgsl_ctx *c, poot_status_code code, const poot_kir_inst *in, const char *why) {
  if (c->st) return;
  c->st = poot_status_make(code, "kir wgsl: kernel %s, statement #%u (%s): %s", c->k->name,
                           in ? in->id : 0, in ? poot_kir_op_name(in->op) : "-", why);
}

static void put(wgsl_ctx *c, const char *s) {
  poot_strbuf_puts(c->out, s);
}

static void putf(wgsl_ctx *c, const char *fmt, ...) POOT_PRINTF(2, 3);
static void putf(wgsl_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  poot_strbuf_vprintf(c->out, fmt, ap);
  va_end(ap);
}

static void line_start(wgsl_ctx *c) {
  for (int i = 0; i < c->depth + 1; i++) put(c, "  ");
}

static poot_kir_type vtype(const wgsl_ctx *c, poot_kir_value v) {
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

static const char *reg_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bool";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "i32";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "u32";
    case POOT_KIR_I64:
      return "i64";
    default:
      return "f32";
  }
}

static const char *tname(poot_kir_type t, char *buf, size_t n) {
  if (t.lanes <= 1)
    snprintf(buf, n, "%s", reg_scalar(t.scalar));
  else
    snprintf(buf, n, "vec%u<%s>", (unsigned)t.lanes, reg_scalar(t.scalar));
  return buf;
}

static const char *lane_name(unsigned i) {
  static const char *const n[4] = {"x", "y", "z", "w"};
  return n[i & 3];
}

/* ---------------------------------------------------------------- pre-pass */

static wgsl_mem *mem_of(wgsl_ctx *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_SHARED ? &c->shared[ref] : &c->bind[ref];
}

static poot_kir_scalar mem_elem_type(const wgsl_ctx *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_SHARED ? c->k->shared[ref].elem : c->k->bindings[ref].elem;
}

static void scan_type(wgsl_ctx *c, poot_kir_type t) {
  if (t.scalar == POOT_KIR_I64) c->i64 = true;
  if (t.scalar == POOT_KIR_F16) c->f16 = true;
  if (t.scalar == POOT_KIR_BF16) c->bf16 = true;
}

static void scan_block(wgsl_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    if (in->result) scan_type(c, in->type);
    switch (in->op) {
      case POOT_KIR_OP_ERF:
        c->erf = true;
        break;
      case POOT_KIR_OP_TANH:
        c->tanh = true;
        break;
      case POOT_KIR_OP_FMA:
        c->fma = true;
        break;
      case POOT_KIR_OP_BUILTIN:
        if (in->ref == POOT_KIR_BUILTIN_SUBGROUP_LANE) c->sg_lane = true;
        if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID) c->sg_size = true;
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
      case POOT_KIR_OP_STORE:
        mem_of(c, in->space, in->ref)->written = true;
        break;
      case POOT_KIR_OP_ATOMIC_ADD:
      case POOT_KIR_OP_ATOMIC_MAX:
      case POOT_KIR_OP_ATOMIC_MIN:
      case POOT_KIR_OP_ATOMIC_XCHG:
      case POOT_KIR_OP_ATOMIC_CAS:
        mem_of(c, in->space, in->ref)->atomic = true;
        mem_of(c, in->space, in->ref)->written = true;
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

static void scan_kernel(wgsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  bool native_f16 = poot_kir_target_has_arith(c->t, POOT_KIR_F16);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    poot_kir_scalar e = k->bindings[i].elem;
    scan_type(c, poot_kir_type_make(e, 1));
    if (e == POOT_KIR_F16 && native_f16)
      c->bind[i].kind = MEM_F16;
    else if (scalar_bits(e) < 32)
      c->bind[i].kind = MEM_PACKED;
  }
  for (uint32_t i = 0; i < k->shared_count; i++)
    scan_type(c, poot_kir_type_make(k->shared[i].elem, 1));
  for (uint32_t i = 0; i < k->private_count; i++) scan_type(c, k->privates[i].type);
  scan_block(c, &k->body);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    if (c->bind[i].kind == MEM_F16) c->enable_f16 = true;
    /* Packed stores are read-modify-write of a shared word: atomics keep
     * neighbouring elements written by other threads intact. */
    if (c->bind[i].kind == MEM_PACKED && c->bind[i].written) c->bind[i].atomic = true;
  }
  c->subgroups = c->t->subgroup_ops;
}

/* ---------------------------------------------------------------- helpers */

/* ------------------------------------------------------------- expressions */

static void float_lit(poot_strbuf *sb, uint32_t bits) {
  float f = poot_f32_from_bits(bits);
  if (isfinite(f) && !(f == 0.0f && (bits >> 31))) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)f);
    if (poot_f32_bits(strtof(buf, NULL)) == bits) {
      poot_strbuf_puts(sb, buf);
      if (!strpbrk(buf, ".en")) poot_strbuf_puts(sb, ".0");
      poot_strbuf_puts(sb, "f");
      return;
    }
  }
  poot_strbuf_printf(sb, "bitcast<f32>(0x%08xu)", bits);
}

static void const_lit(wgsl_ctx *c, poot_kir_scalar s, uint64_t bits) {
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
        put(c, "bitcast<i32>(0x80000000u)");
      else
        putf(c, "%lldi", (long long)v);
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
      if ((int64_t)bits == INT64_MIN)
        put(c, "(-9223372036854775807li - 1li)");
      else
        putf(c, "%lldli", (long long)(int64_t)bits);
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

static void def_begin(wgsl_ctx *c, const poot_kir_inst *in) {
  char tb[32];
  line_start(c);
  putf(c, "let v%u: %s = ", in->result, tname(in->type, tb, sizeof tb));
}

/* A splatted constant of t's register type ("0xffu" or "vec2<u32>(0xffu)"). */
static void splat_lit(wgsl_ctx *c, poot_kir_type t, const char *lit) {
  char tb[32];
  if (t.lanes > 1)
    putf(c, "%s(%s)", tname(t, tb, sizeof tb), lit);
  else
    put(c, lit);
}

/* Opens the renormalisation of a result of type t; returns the closing text. */
static const char *norm_open(wgsl_ctx *c, poot_kir_type t) {
  switch (t.scalar) {
    case POOT_KIR_I8:
      put(c, "extractBits(");
      return ", 0u, 8u)";
    case POOT_KIR_I16:
      put(c, "extractBits(");
      return ", 0u, 16u)";
    case POOT_KIR_U8:
      put(c, "extractBits(");
      return ", 0u, 8u)";
    case POOT_KIR_U16:
      put(c, "extractBits(");
      return ", 0u, 16u)";
    case POOT_KIR_F16:
      put(c, t.lanes == 4 ? "poot_rf16x4(" : t.lanes == 2 ? "poot_rf16x2(" : "poot_rf16(");
      return ")";
    case POOT_KIR_BF16:
      put(c, t.lanes == 4 ? "poot_rbf16x4(" : t.lanes == 2 ? "poot_rbf16x2(" : "poot_rbf16(");
      return ")";
    default:
      return "";
  }
}

static void comp(wgsl_ctx *c, poot_kir_value v, unsigned i) {
  if (vtype(c, v).lanes > 1)
    putf(c, "v%u.%s", v, lane_name(i));
  else
    putf(c, "v%u", v);
}

/* The raw bits of lane i of v as a u32. */
static void lane_bits(wgsl_ctx *c, poot_kir_value v, unsigned i) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  switch (s) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      comp(c, v, i);
      break;
    case POOT_KIR_I8:
      put(c, "(bitcast<u32>(");
      comp(c, v, i);
      put(c, ") & 0xffu)");
      break;
    case POOT_KIR_I16:
      put(c, "(bitcast<u32>(");
      comp(c, v, i);
      put(c, ") & 0xffffu)");
      break;
    case POOT_KIR_I32:
      put(c, "bitcast<u32>(");
      comp(c, v, i);
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "poot_f32_to_f16(");
      comp(c, v, i);
      put(c, ")");
      break;
    case POOT_KIR_BF16:
      put(c, "(bitcast<u32>(");
      comp(c, v, i);
      put(c, ") >> 16u)");
      break;
    case POOT_KIR_F32:
      put(c, "bitcast<u32>(");
      comp(c, v, i);
      put(c, ")");
      break;
    default:
      put(c, "u32(");
      comp(c, v, i);
      put(c, ")");
      break;
  }
}

static void from_bits(wgsl_ctx *c, poot_kir_scalar s, const char *bits) {
  switch (s) {
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      put(c, bits);
      break;
    case POOT_KIR_I8:
      putf(c, "extractBits(bitcast<i32>(%s), 0u, 8u)", bits);
      break;
    case POOT_KIR_I16:
      putf(c, "extractBits(bitcast<i32>(%s), 0u, 16u)", bits);
      break;
    case POOT_KIR_I32:
      putf(c, "bitcast<i32>(%s)", bits);
      break;
    case POOT_KIR_F16:
      putf(c, "poot_f16_to_f32(%s)", bits);
      break;
    case POOT_KIR_BF16:
      putf(c, "bitcast<f32>((%s) << 16u)", bits);
      break;
    case POOT_KIR_F32:
      putf(c, "bitcast<f32>(%s)", bits);
      break;
    default:
      putf(c, "((%s) != 0u)", bits);
      break;
  }
}

static void convert_lane(wgsl_ctx *c, poot_kir_value v, unsigned i, poot_kir_scalar from,
                         poot_kir_scalar to) {
  if (from == to) {
    comp(c, v, i);
    return;
  }
  if (to == POOT_KIR_BOOL) {
    if (is_float(from)) {
      /* By the bits: NaN is true, -0.0 false, and WGSL may assume no NaN
       * in float comparisons. */
      put(c, "((bitcast<u32>(");
      comp(c, v, i);
      put(c, ") & 0x7fffffffu) != 0u)");
      return;
    }
    put(c, "(");
    comp(c, v, i);
    putf(c, " != %s(0))", reg_scalar(from));
    return;
  }
  if (from == POOT_KIR_BOOL) {
    if (to == POOT_KIR_I64) {
      put(c, "select(0li, 1li, ");
      comp(c, v, i);
      put(c, ")");
      return;
    }
    putf(c, "%s(", reg_scalar(to));
    comp(c, v, i);
    put(c, ")");
    return;
  }
  if (is_float(from) && is_float(to)) {
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
        put(c, ", -128.0, 127.0, -128i, 127i)");
        break;
      case POOT_KIR_I16:
        put(c, "poot_f2i(");
        comp(c, v, i);
        put(c, ", -32768.0, 32767.0, -32768i, 32767i)");
        break;
      case POOT_KIR_I32:
        put(c, "poot_f2i(");
        comp(c, v, i);
        put(c, ", -2147483648.0, 2147483648.0, bitcast<i32>(0x80000000u), 2147483647i)");
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
    if (to != POOT_KIR_F32) put(c, to == POOT_KIR_F16 ? "poot_rf16(" : "poot_rbf16(");
    put(c, "f32(");
    comp(c, v, i);
    put(c, ")");
    if (to != POOT_KIR_F32) put(c, ")");
    return;
  }
  if (to == POOT_KIR_I64 && !is_signed_int(from)) {
    /* naga sign-extends u32 -> i64; the mask restores zero extension. */
    put(c, "(i64(");
    comp(c, v, i);
    put(c, ") & 0xffffffffli)");
    return;
  }
  /* integer -> integer: i32(u32)/u32(i32) reinterpret the bits, which holds
   * the source sign- or zero-extended; then wrap to the destination. */
  const char *close = norm_open(c, poot_kir_type_make(to, 1));
  putf(c, "%s(", reg_scalar(to));
  comp(c, v, i);
  putf(c, ")%s", close);
}

static void emit_convert(wgsl_ctx *c, const poot_kir_inst *in) {
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

/* BITCAST involving i64: through 32-bit words (little-endian): the source
 * is split or combined into words v<id>_w<i>, the result built from them. */
static void emit_bitcast_words(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  unsigned sb = scalar_bits((poot_kir_scalar)ft.scalar),
           db = scalar_bits((poot_kir_scalar)in->type.scalar);
  unsigned words = ft.lanes * sb / 32, n = in->type.lanes;
  char tb[32];
  for (unsigned w = 0; w < words; w++) {
    line_start(c);
    putf(c, "let v%u_w%u: u32 = ", in->result, w);
    if (sb == 64) {
      put(c, "u32((");
      comp(c, in->args[0], w / 2);
      put(c, w % 2 ? " >> 32u) & 0xffffffffli)" : ") & 0xffffffffli)");
    } else if (sb == 32) {
      lane_bits(c, in->args[0], w);
    } else {
      unsigned per = 32 / sb;
      for (unsigned j = 0; j < per; j++) {
        put(c, j ? " | (" : "(");
        lane_bits(c, in->args[0], w * per + j);
        putf(c, " << %uu)", j * sb);
      }
    }
    put(c, ";\n");
  }
  def_begin(c, in);
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned d = 0; d < n; d++) {
    if (d) put(c, ", ");
    char expr[128];
    if (db == 64) {
      putf(c, "((i64(v%u_w%u) << 32u) | (i64(v%u_w%u) & 0xffffffffli))", in->result, 2 * d + 1,
           in->result, 2 * d);
      continue;
    }
    if (db == 32) {
      snprintf(expr, sizeof expr, "v%u_w%u", in->result, d);
    } else {
      unsigned per = 32 / db;
      snprintf(expr, sizeof expr, "((v%u_w%u >> %uu) & 0x%xu)", in->result, d / per, (d % per) * db,
               (1u << db) - 1u);
    }
    from_bits(c, (poot_kir_scalar)in->type.scalar, expr);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void emit_bitcast(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  unsigned sb = scalar_bits((poot_kir_scalar)ft.scalar),
           db = scalar_bits((poot_kir_scalar)in->type.scalar);
  unsigned n = in->type.lanes;
  char tb[32];
  if (sb == 64 || db == 64) {
    emit_bitcast_words(c, in);
    return;
  }
  for (unsigned i = 0; i < ft.lanes; i++) {
    line_start(c);
    putf(c, "let v%u_b%u: u32 = ", in->result, i);
    lane_bits(c, in->args[0], i);
    put(c, ";\n");
  }
  def_begin(c, in);
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned d = 0; d < n; d++) {
    if (d) put(c, ", ");
    char expr[256];
    if (db >= sb) {
      unsigned per = db / sb, off = 0;
      char acc[200] = "";
      for (unsigned j = 0; j < per; j++) {
        char term[64];
        snprintf(term, sizeof term, "%s(v%u_b%u << %uu)", j ? " | " : "", in->result, d * per + j,
                 off);
        strncat(acc, term, sizeof acc - strlen(acc) - 1);
        off += sb;
      }
      snprintf(expr, sizeof expr, "(%s)", acc);
    } else {
      unsigned per = sb / db;
      snprintf(expr, sizeof expr, "((v%u_b%u >> %uu) & 0x%xu)", in->result, d / per, (d % per) * db,
               (1u << db) - 1u);
    }
    from_bits(c, (poot_kir_scalar)in->type.scalar, expr);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

/* ------------------------------------------------------------------ memory */

/* A load of one element (index_expr is a u32 expression) as a register value. */
static void load_elem(wgsl_ctx *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  wgsl_mem *m = mem_of(c, space, ref);
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  char arr[32];
  if (space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", ref);
  else
    snprintf(arr, sizeof arr, "b%u", ref);
  if (m->kind == MEM_PACKED && space == POOT_KIR_SPACE_GLOBAL) {
    unsigned bits = scalar_bits(e);
    unsigned per = 32 / bits;
    char word[160];
    if (m->atomic)
      snprintf(word, sizeof word, "atomicLoad(&%s[(%s) / %uu])", arr, index_expr, per);
    else
      snprintf(word, sizeof word, "%s[(%s) / %uu]", arr, index_expr, per);
    char raw[400];
    snprintf(raw, sizeof raw, "extractBits(%s, ((%s) %% %uu) * %uu, %uu)", word, index_expr, per,
             bits, bits);
    from_bits(c, e, raw);
    return;
  }
  if (m->kind == MEM_F16 && space == POOT_KIR_SPACE_GLOBAL) {
    putf(c, "f32(%s[%s])", arr, index_expr);
    return;
  }
  if (m->atomic)
    putf(c, "atomicLoad(&%s[%s])", arr, index_expr);
  else
    putf(c, "%s[%s]", arr, index_expr);
}

static void store_elem(wgsl_ctx *c, poot_kir_space space, uint32_t ref, const char *index_expr,
                       poot_kir_value v, unsigned lane) {
  wgsl_mem *m = mem_of(c, space, ref);
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  char arr[32];
  if (space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", ref);
  else
    snprintf(arr, sizeof arr, "b%u", ref);
  line_start(c);
  if (m->kind == MEM_PACKED && space == POOT_KIR_SPACE_GLOBAL) {
    unsigned bits = scalar_bits(e);
    unsigned per = 32 / bits;
    unsigned mask = (1u << bits) - 1u;
    put(c, "{\n");
    c->depth++;
    line_start(c);
    putf(c, "let i = %s;\n", index_expr);
    line_start(c);
    putf(c, "let sh = (i %% %uu) * %uu;\n", per, bits);
    line_start(c);
    put(c, "let bits = (");
    lane_bits(c, v, lane);
    putf(c, " & 0x%xu) << sh;\n", mask);
    line_start(c);
    putf(c, "atomicAnd(&%s[i / %uu], ~(0x%xu << sh));\n", arr, per, mask);
    line_start(c);
    putf(c, "atomicOr(&%s[i / %uu], bits);\n", arr, per);
    c->depth--;
    line_start(c);
    put(c, "}\n");
    return;
  }
  if (m->atomic)
    putf(c, "atomicStore(&%s[%s], ", arr, index_expr);
  else
    putf(c, "%s[%s] = ", arr, index_expr);
  if (m->kind == MEM_F16 && space == POOT_KIR_SPACE_GLOBAL) {
    put(c, "f16(");
    comp(c, v, lane);
    put(c, ")");
  } else {
    comp(c, v, lane);
  }
  put(c, m->atomic ? ");\n" : ";\n");
}

static void emit_load(wgsl_ctx *c, const poot_kir_inst *in) {
  unsigned n = in->type.lanes;
  char idx[64];
  def_begin(c, in);
  char tb[32];
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < n; i++) {
    if (i) put(c, ", ");
    if (i)
      snprintf(idx, sizeof idx, "u32(v%u) + %uu", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "u32(v%u)", in->args[0]);
    load_elem(c, in->space, in->ref, idx);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void emit_store(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value v = in->args[1];
  unsigned n = vtype(c, v).lanes;
  for (unsigned i = 0; i < n; i++) {
    char idx[64];
    if (i)
      snprintf(idx, sizeof idx, "u32(v%u) + %uu", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "u32(v%u)", in->args[0]);
    store_elem(c, in->space, in->ref, idx, v, i);
  }
}

static void emit_atomic(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar e = mem_elem_type(c, in->space, in->ref);
  if (e != POOT_KIR_U32 && e != POOT_KIR_I32 && e != POOT_KIR_F32) {
    fail(c, POOT_UNSUPPORTED, in, "WGSL atomics need 32-bit elements");
    return;
  }
  if (e == POOT_KIR_F32 && in->op != POOT_KIR_OP_ATOMIC_ADD && in->op != POOT_KIR_OP_ATOMIC_XCHG) {
    fail(c, POOT_UNSUPPORTED, in, "WGSL float atomics are add and exchange only");
    return;
  }
  char arr[32];
  if (in->space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", in->ref);
  else
    snprintf(arr, sizeof arr, "b%u", in->ref);
  def_begin(c, in);
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
      putf(c, "atomicCompareExchangeWeak(&%s[u32(v%u)], v%u, v%u).old_value;\n", arr, in->args[0],
           in->args[1], in->args[2]);
      return;
    default:
      break;
  }
  putf(c, "%s(&%s[u32(v%u)], v%u);\n", fn, arr, in->args[0], in->args[1]);
}

/* ---------------------------------------------------------------- arith */

static void emit_binary(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0], b = in->args[1];
  poot_kir_type t = in->type;
  poot_kir_scalar s = (poot_kir_scalar)t.scalar;
  def_begin(c, in);
  if (s == POOT_KIR_BOOL) {
    switch (in->op) {
      case POOT_KIR_OP_AND:
        putf(c, "v%u & v%u;\n", a, b);
        return;
      case POOT_KIR_OP_OR:
        putf(c, "v%u | v%u;\n", a, b);
        return;
      default:
        putf(c, "v%u != v%u;\n", a, b);
        return; /* XOR */
    }
  }
  const char *close = norm_open(c, t);
  char tb[32];
  poot_kir_type ut = poot_kir_type_make(POOT_KIR_U32, t.lanes);
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
      putf(c, "v%u %% v%u", a, b);
      break; /* truncated, as C */
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
    case POOT_KIR_OP_SHR: {
      const char *op = in->op == POOT_KIR_OP_SHL ? "<<" : ">>";
      if (s == POOT_KIR_I64)
        putf(c, "v%u %s %s(v%u)", a, op, tname(ut, tb, sizeof tb), b);
      else if (is_signed_int(s))
        putf(c, "v%u %s bitcast<%s>(v%u)", a, op, tname(ut, tb, sizeof tb), b);
      else
        putf(c, "v%u %s v%u", a, op, b);
      break;
    }
    case POOT_KIR_OP_POW:
      putf(c, "pow(v%u, v%u)", a, b);
      break;
    default:
      break;
  }
  putf(c, "%s;\n", close);
}

static void emit_unary(wgsl_ctx *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0];
  poot_kir_type t = in->type;
  poot_kir_scalar s = (poot_kir_scalar)t.scalar;
  def_begin(c, in);
  if (in->op == POOT_KIR_OP_NOT && s == POOT_KIR_BOOL) {
    putf(c, "!v%u;\n", a);
    return;
  }
  if (in->op == POOT_KIR_OP_ABS && (s == POOT_KIR_U8 || s == POOT_KIR_U16 || s == POOT_KIR_U32)) {
    putf(c, "v%u;\n", a);
    return;
  }
  const char *close = norm_open(c, t);
  const char *fn = NULL;
  const char *sfx = t.lanes == 4 ? "x4" : t.lanes == 2 ? "x2" : "";
  switch (in->op) {
    case POOT_KIR_OP_NEG:
      if (s == POOT_KIR_U8 || s == POOT_KIR_U16 || s == POOT_KIR_U32) {
        splat_lit(c, t, "0u");
        putf(c, " - v%u", a);
      } else {
        putf(c, "-v%u", a);
      }
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
      fn = "inverseSqrt";
      break;
    case POOT_KIR_OP_SIN:
      fn = "sin";
      break;
    case POOT_KIR_OP_COS:
      fn = "cos";
      break;
    case POOT_KIR_OP_TANH:
      putf(c, "poot_tanh%s(v%u)", sfx, a);
      break;
    case POOT_KIR_OP_ERF:
      putf(c, "poot_erf%s(v%u)", sfx, a);
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

static const char *compare_op(poot_kir_op op) {
  switch (op) {
    case POOT_KIR_OP_EQ:
      return "==";
    case POOT_KIR_OP_NE:
      return "!=";
    case POOT_KIR_OP_LT:
      return "<";
    case POOT_KIR_OP_LE:
      return "<=";
    case POOT_KIR_OP_GT:
      return ">";
    default:
      return ">=";
  }
}

/* naga accepts subgroup_invocation_id only with one-dimensional workgroups;
 * otherwise the lane is computed from the linear index (KIR's definition). */
static bool lane_builtin_ok(const wgsl_ctx *c) {
  return c->k->workgroup_size[1] <= 1 && c->k->workgroup_size[2] <= 1;
}

static void emit_builtin(wgsl_ctx *c, const poot_kir_inst *in) {
  def_begin(c, in);
  unsigned d = (unsigned)in->imm;
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
      putf(c, "poot_wg.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS:
      putf(c, "poot_nwg.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_LOCAL_ID:
      putf(c, "poot_lid.%s;\n", lane_name(d));
      break;
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
      putf(c, "%uu;\n", c->k->workgroup_size[d < 3 ? d : 0]);
      break;
    case POOT_KIR_BUILTIN_LOCAL_INDEX:
      put(c, "poot_lix;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_ID:
      put(c, "poot_lix / poot_sgs;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_LANE:
      put(c, lane_builtin_ok(c) ? "poot_sgl;\n" : "poot_lix % poot_sgs;\n");
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      put(c, "poot_sgs;\n");
      break;
    default:
      put(c, "0u;\n");
      fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
      break;
  }
  if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID && !c->subgroups)
    fail(c, POOT_UNSUPPORTED, in, "the target has no subgroups");
}

static void emit_block(wgsl_ctx *c, const poot_kir_block *b);

static void emit_inst(wgsl_ctx *c, const poot_kir_inst *in) {
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
    case POOT_KIR_OP_GE:
      def_begin(c, in);
      putf(c, "v%u %s v%u;\n", in->args[0], compare_op(in->op), in->args[1]);
      break;
    case POOT_KIR_OP_SELECT:
      def_begin(c, in);
      putf(c, "select(v%u, v%u, v%u);\n", in->args[2], in->args[1], in->args[0]);
      break;
    case POOT_KIR_OP_FMA: {
      def_begin(c, in);
      const char *close = norm_open(c, in->type);
      const char *sfx = in->type.lanes == 4 ? "x4" : in->type.lanes == 2 ? "x2" : "";
      putf(c, "poot_fma%s(v%u, v%u, v%u)%s;\n", sfx, in->args[0], in->args[1], in->args[2], close);
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
    case POOT_KIR_OP_SG_REDUCE_MAX:
    case POOT_KIR_OP_SG_REDUCE_MIN:
    case POOT_KIR_OP_SG_SHUFFLE:
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
    case POOT_KIR_OP_SG_BROADCAST:
      if (!c->subgroups) {
        fail(c, POOT_UNSUPPORTED, in, "the target has no subgroups");
        break;
      }
      def_begin(c, in);
      if (in->op == POOT_KIR_OP_SG_REDUCE_ADD)
        putf(c, "subgroupAdd(v%u);\n", in->args[0]);
      else if (in->op == POOT_KIR_OP_SG_REDUCE_MAX)
        putf(c, "subgroupMax(v%u);\n", in->args[0]);
      else if (in->op == POOT_KIR_OP_SG_REDUCE_MIN)
        putf(c, "subgroupMin(v%u);\n", in->args[0]);
      else if (in->op == POOT_KIR_OP_SG_SHUFFLE)
        putf(c, "subgroupShuffle(v%u, u32(v%u));\n", in->args[0], in->args[1]);
      else if (in->op == POOT_KIR_OP_SG_SHUFFLE_XOR)
        putf(c, "subgroupShuffleXor(v%u, %lluu);\n", in->args[0], (unsigned long long)in->imm);
      else
        putf(c, "subgroupBroadcast(v%u, %lluu);\n", in->args[0], (unsigned long long)in->imm);
      break;
    case POOT_KIR_OP_BARRIER:
      line_start(c);
      put(c, "storageBarrier();\n");
      line_start(c);
      put(c, "workgroupBarrier();\n");
      break;
    case POOT_KIR_OP_CHECK:
      line_start(c);
      putf(c, "if (!v%u) { atomicOr(&poot_err[0], 1u << %lluu); }\n", in->args[0],
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
      putf(c, "for (var v%u: %s = v%u; v%u < v%u; v%u = v%u + v%u) {\n", in->result, it,
           in->args[0], in->result, in->args[1], in->result, in->result, in->args[2]);
      c->depth++;
      emit_block(c, &in->body);
      c->depth--;
      line_start(c);
      put(c, "}\n");
      break;
    }
    default:
      fail(c, POOT_UNSUPPORTED, in, "the WGSL renderer does not know this op");
      break;
  }
}

static void emit_block(wgsl_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in && !c->st; in = in->next) emit_inst(c, in);
}

/* ----------------------------------------------------------- declarations */

static void mem_type(wgsl_ctx *c, const wgsl_mem *m, poot_kir_scalar e, char *buf, size_t n) {
  (void)c;
  const char *base;
  if (m->kind == MEM_PACKED)
    base = "u32";
  else if (m->kind == MEM_F16)
    base = "f16";
  else
    base = reg_scalar(e);
  if (m->atomic)
    snprintf(buf, n, "atomic<%s>", base);
  else
    snprintf(buf, n, "%s", base);
}

static void emit_header(wgsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  if (c->enable_f16) put(c, "enable f16;\n");
  putf(c, "// KIR kernel %s for target %s (kernel hash %016llx)\n", k->name,
       c->t->name ? c->t->name : "?", (unsigned long long)k->hash);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const poot_kir_binding *bd = &k->bindings[i];
    char et[32];
    mem_type(c, &c->bind[i], bd->elem, et, sizeof et);
    bool ro = bd->access == POOT_KIR_ACCESS_READ && !c->bind[i].atomic;
    putf(c, "@group(0) @binding(%u) var<storage, %s> b%u: array<%s>; // %s: %s%s\n", bd->binding,
         ro ? "read" : "read_write", i, et, bd->name ? bd->name : "",
         poot_kir_scalar_name(bd->elem), c->bind[i].kind == MEM_PACKED ? " (packed in u32)" : "");
  }
  if (k->has_checks)
    putf(c, "@group(0) @binding(%u) var<storage, read_write> poot_err: array<atomic<u32>>;\n",
         k->error_binding);
  bool any_push = false;
  for (uint32_t i = 0; i < k->param_count; i++) {
    if (k->params[i].kind != POOT_KIR_PARAM_PUSH) continue;
    if (!any_push) put(c, "struct PootParams {\n");
    any_push = true;
    putf(c, "  p%u: %s, // %s\n", i, reg_scalar(k->params[i].type),
         k->params[i].name ? k->params[i].name : "");
  }
  if (any_push) {
    put(c, "}\n");
    putf(c, "@group(0) @binding(%u) var<uniform> poot_pc: PootParams;\n", k->param_binding);
  }
  for (uint32_t i = 0; i < k->shared_count; i++) {
    char et[32];
    wgsl_mem plain = c->shared[i];
    plain.kind = MEM_PLAIN;
    mem_type(c, &plain, k->shared[i].elem, et, sizeof et);
    putf(c, "var<workgroup> s%u: array<%s, %u>; // %s: %s\n", i, et, k->shared[i].count,
         k->shared[i].name ? k->shared[i].name : "", poot_kir_scalar_name(k->shared[i].elem));
  }
  if (c->f16) put(c, poot__kir_wgsl_f16_helpers);
  if (c->bf16) put(c, poot__kir_wgsl_bf16_helpers);
  if (c->tanh) put(c, poot__kir_wgsl_tanh_helper);
  if (c->erf) put(c, poot__kir_wgsl_erf_helper);
  if (c->fma) put(c, poot__kir_wgsl_fma_helper);
  if (c->f2i) put(c, poot__kir_wgsl_f2i_helper);
  if (c->f2u) put(c, poot__kir_wgsl_f2u_helper);
  if (c->f2i64) put(c, poot__kir_wgsl_f2i64_helper);
}

static void emit_entry(wgsl_ctx *c) {
  const poot_kir_kernel *k = c->k;
  putf(c, "@compute @workgroup_size(%u, %u, %u)\n", k->workgroup_size[0] ? k->workgroup_size[0] : 1,
       k->workgroup_size[1] ? k->workgroup_size[1] : 1,
       k->workgroup_size[2] ? k->workgroup_size[2] : 1);
  putf(c, "fn %s(@builtin(workgroup_id) poot_wg: vec3<u32>,\n", k->name);
  put(c, "    @builtin(num_workgroups) poot_nwg: vec3<u32>,\n");
  put(c, "    @builtin(local_invocation_id) poot_lid: vec3<u32>,\n");
  put(c, "    @builtin(local_invocation_index) poot_lix: u32");
  if (c->subgroups && c->sg_size) put(c, ",\n    @builtin(subgroup_size) poot_sgs: u32");
  if (c->subgroups && c->sg_lane && lane_builtin_ok(c))
    put(c, ",\n    @builtin(subgroup_invocation_id) poot_sgl: u32");
  put(c, ") {\n");
  /* Keep every builtin statically used so that the interface is stable. */
  put(c, "  _ = poot_wg; _ = poot_nwg; _ = poot_lid; _ = poot_lix;\n");
  for (uint32_t i = 0; i < k->private_count; i++) {
    char tb[32];
    putf(c, "  var p%u: array<%s, %u>; // %s (zeroed)\n", i,
         tname(k->privates[i].type, tb, sizeof tb), k->privates[i].count,
         k->privates[i].name ? k->privates[i].name : "");
  }
  emit_block(c, &k->body);
  put(c, "}\n");
}

poot_status poot_kir_render_wgsl(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                 poot_strbuf *out) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir wgsl: NULL kernel, target or output");
  if (target->lang != POOT_KIR_LANG_WGSL)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir wgsl: target %s is not a WGSL target",
                            target->name ? target->name : "?");
  POOT_TRY(poot_kir_verify(kernel, target));
  wgsl_ctx c;
  memset(&c, 0, sizeof c);
  c.k = kernel;
  c.t = target;
  c.out = out;
  c.bind = poot_calloc(kernel->binding_count + 1, sizeof *c.bind);
  c.shared = poot_calloc(kernel->shared_count + 1, sizeof *c.shared);
  if (!c.bind || !c.shared) {
    poot_free(c.bind);
    poot_free(c.shared);
    return poot_status_make(POOT_OUT_OF_MEMORY, "kir wgsl: kernel %s", kernel->name);
  }
  scan_kernel(&c);
  /* i64 is not WebGPU: it is naga's `shader-int64` extension, used only
   * when the target declares 64-bit integers. */
  if (c.i64 && !poot_kir_target_has_arith(target, POOT_KIR_I64))
    fail(&c, POOT_UNSUPPORTED, NULL,
         "64-bit integers need naga's shader-int64, which the target lacks");
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
  if (!c.st) emit_entry(&c);
  poot_free(c.bind);
  poot_free(c.shared);
  if (!c.st) c.st = poot_strbuf_status(out);
  if (c.st && out->len > start && !out->failed) {
    out->len = start;
    out->data[start] = 0;
  }
  return c.st;
}
