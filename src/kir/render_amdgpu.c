/* render_amdgpu.c — KIR to LLVM IR text for amdgcn-amd-amdhsa (gfx90a,
 * gfx942, gfx1100), the input of clang/llc 19 and of comgr (DESIGN §5).
 *
 * A pure function of (kernel, target): same inputs, byte-identical text.
 *
 * Mapping (docs/kir-ptx-amdgpu.md has the full table):
 *  - KIR values are LLVM SSA values; vectors are LLVM vectors; every
 *    operation is done lane by lane on scalars (extractelement/insertelement,
 *    which instcombine folds away) so that f16 promotion, conversions and
 *    math are written once;
 *  - private arrays are allocas in address space 5 (SROA turns them into
 *    registers; they are indexed by constants only); `for` loops carry their
 *    induction value in a phi; the subgroup (wave) size comes from the target
 *    (wave64 on gfx90a/gfx942, wave32 on gfx1100 unless the target says 64);
 *  - buffers are `ptr addrspace(1)` kernel arguments, shared arrays are
 *    addrspace(3) globals, builtins are amdgcn intrinsics and the dispatch
 *    packet; a failed check branches to one fault block that fills the fault
 *    record (render_ptx_amdgpu.h) and calls llvm.trap. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kir_impl.h"
#include "poot/kir.h"
#include "render_ptx_amdgpu.h"

#define NAME_LEN 40
#define MAX_DECLS 48

typedef struct fault_edge {
  uint32_t code;
  uint32_t label; /* the ck<label>.fail block */
} fault_edge;

typedef struct amd_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  poot_strbuf *o;
  const char **vname; /* LLVM operand text of each KIR value */
  uint32_t tmp;
  uint32_t label;
  uint32_t sg;
  const char *decls[MAX_DECLS];
  uint32_t decl_count;
  bool use_tanh, use_erf, use_pow, use_sincos;
  poot_vec faults;     /* fault_edge */
  const char *lane_id; /* the wave lane (mbcnt), computed at entry */
  /* Private arrays in SSA form: the current LLVM value of every element
   * (pv[privbase[i] + e]), and the basic block the emitter is in. */
  const char **pv;
  uint32_t *privbase;
  uint32_t priv_total;
  const char *cur_label;
  poot_status err;
  poot_arena names;
  char scratch[NAME_LEN];
} amd_ctx;

#define EMIT(...) poot_strbuf_printf(c->o, __VA_ARGS__)

static void fail(amd_ctx *c, poot_status_code code, const poot_kir_inst *in, const char *why) {
  if (c->err) return;
  c->err = poot_status_make(code, "AMDGPU renderer: kernel '%s', statement #%" PRIu32 " (%s): %s",
                            c->k->name, in ? in->id : 0u, in ? poot_kir_op_name(in->op) : "-", why);
}

static char *name_buf(amd_ctx *c) {
  char *s = poot_arena_alloc(&c->names, NAME_LEN, 1);
  if (!s) {
    if (!c->err) c->err = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    return c->scratch;
  }
  return s;
}

static const char *tmp(amd_ctx *c) {
  char *s = name_buf(c);
  snprintf(s, NAME_LEN, "%%t%" PRIu32, c->tmp++);
  return s;
}

static const char *fmt(amd_ctx *c, const char *f, ...) POOT_PRINTF(2, 3);
static const char *fmt(amd_ctx *c, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = n >= 0 ? poot_arena_alloc(&c->names, (size_t)n + 1, 1) : NULL;
  if (!s) {
    if (!c->err) c->err = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    return c->scratch;
  }
  va_start(ap, f);
  vsnprintf(s, (size_t)n + 1, f, ap);
  va_end(ap);
  return s;
}

/* Declares an intrinsic once (in first-use order, so output is stable). */
static void declare(amd_ctx *c, const char *decl) {
  for (uint32_t i = 0; i < c->decl_count; i++)
    if (strcmp(c->decls[i], decl) == 0) return;
  if (c->decl_count < MAX_DECLS) c->decls[c->decl_count++] = decl;
}

/* ------------------------------------------------------------ types */

static const char *sty(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "i1";
    case POOT_KIR_I8:
    case POOT_KIR_U8:
      return "i8";
    case POOT_KIR_I16:
    case POOT_KIR_U16:
      return "i16";
    case POOT_KIR_I64:
      return "i64";
    case POOT_KIR_F16:
      return "half";
    case POOT_KIR_BF16:
      return "bfloat";
    case POOT_KIR_F32:
      return "float";
    default:
      return "i32";
  }
}

static uint32_t lanes_of(poot_kir_type t) {
  return t.lanes ? t.lanes : 1u;
}

static const char *vty(amd_ctx *c, poot_kir_type t) {
  if (lanes_of(t) == 1) return sty((poot_kir_scalar)t.scalar);
  return fmt(c, "<%u x %s>", (unsigned)t.lanes, sty((poot_kir_scalar)t.scalar));
}

static bool is_float(poot_kir_scalar s) {
  return poot_kir_scalar_is_float(s);
}
static bool is_signed_int(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_I16 || s == POOT_KIR_I32 || s == POOT_KIR_I64;
}
static uint32_t esize(poot_kir_scalar s) {
  return (uint32_t)poot_kir_scalar_size(s);
}

/* LLVM spells a float constant as the hexadecimal double of its value. */
static const char *f32c(amd_ctx *c, uint32_t bits) {
  float f = poot_f32_from_bits(bits);
  double d = (double)f;
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return fmt(c, "0x%016" PRIX64, u);
}

static poot_kir_type vtype(const amd_ctx *c, poot_kir_value v) {
  return c->k->values[v].type;
}

/* Lane l of value v as a scalar operand. */
static const char *lane(amd_ctx *c, poot_kir_value v, uint32_t l) {
  poot_kir_type t = vtype(c, v);
  if (lanes_of(t) == 1) return c->vname[v];
  const char *r = tmp(c);
  EMIT("  %s = extractelement %s %s, i32 %" PRIu32 "\n", r, vty(c, t), c->vname[v], l);
  return r;
}

/* Binds the result of `in` from per-lane scalar operands. */
static void set_lanes(amd_ctx *c, poot_kir_value v, const char *const *names) {
  poot_kir_type t = vtype(c, v);
  uint32_t n = lanes_of(t);
  if (n == 1) {
    c->vname[v] = names[0];
    return;
  }
  const char *acc = "poison";
  for (uint32_t l = 0; l < n; l++) {
    const char *r = tmp(c);
    EMIT("  %s = insertelement %s %s, %s %s, i32 %" PRIu32 "\n", r, vty(c, t), acc,
         sty((poot_kir_scalar)t.scalar), names[l], l);
    acc = r;
  }
  c->vname[v] = acc;
}

/* A float lane widened to f32. */
static const char *fsrc(amd_ctx *c, poot_kir_value v, uint32_t l) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  const char *x = lane(c, v, l);
  if (s == POOT_KIR_F32) return x;
  const char *r = tmp(c);
  EMIT("  %s = fpext %s %s to float\n", r, sty(s), x);
  return r;
}

/* An f32 result narrowed to the instruction's float type. */
static const char *fdst(amd_ctx *c, poot_kir_scalar s, const char *f) {
  if (s == POOT_KIR_F32) return f;
  const char *r = tmp(c);
  EMIT("  %s = fptrunc float %s to %s\n", r, f, sty(s));
  return r;
}

static const char *call1(amd_ctx *c, const char *fn, const char *decl, const char *a) {
  declare(c, decl);
  const char *r = tmp(c);
  EMIT("  %s = call float @%s(float %s)\n", r, fn, a);
  return r;
}

/* ---------------------------------------------------------- math (f32) */

static const char *math1(amd_ctx *c, const poot_kir_inst *in, const char *a) {
  const char *r;
  switch (in->op) {
    case POOT_KIR_OP_NEG:
      r = tmp(c);
      EMIT("  %s = fneg float %s\n", r, a);
      return r;
    case POOT_KIR_OP_ABS:
      return call1(c, "llvm.fabs.f32", "declare float @llvm.fabs.f32(float)", a);
    case POOT_KIR_OP_EXP:
      return call1(c, "llvm.exp.f32", "declare float @llvm.exp.f32(float)", a);
    case POOT_KIR_OP_EXP2:
      return call1(c, "llvm.exp2.f32", "declare float @llvm.exp2.f32(float)", a);
    case POOT_KIR_OP_LOG:
      return call1(c, "llvm.log.f32", "declare float @llvm.log.f32(float)", a);
    case POOT_KIR_OP_LOG2:
      return call1(c, "llvm.log2.f32", "declare float @llvm.log2.f32(float)", a);
    case POOT_KIR_OP_SQRT:
      return call1(c, "llvm.sqrt.f32", "declare float @llvm.sqrt.f32(float)", a);
    case POOT_KIR_OP_RSQRT:
      return call1(c, "llvm.amdgcn.rsq.f32", "declare float @llvm.amdgcn.rsq.f32(float)", a);
    case POOT_KIR_OP_SIN:
      c->use_sincos = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.sin(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_COS:
      c->use_sincos = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.cos(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_TANH:
      c->use_tanh = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.tanh(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_ERF:
      c->use_erf = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.erf(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_FLOOR:
      return call1(c, "llvm.floor.f32", "declare float @llvm.floor.f32(float)", a);
    case POOT_KIR_OP_CEIL:
      return call1(c, "llvm.ceil.f32", "declare float @llvm.ceil.f32(float)", a);
    default:
      fail(c, POOT_UNSUPPORTED, in, "unary operation on a float");
      return "0.0";
  }
}

/* The helper functions, emitted once each when used; alwaysinline, so the
 * backend's always-inline pass folds them into the kernel even under llc. */
static void emit_helpers(amd_ctx *c) {
  poot_strbuf *o = c->o;
  if (c->use_sincos) {
    declare(c, "declare float @llvm.rint.f32(float)");
    declare(c, "declare float @llvm.fma.f32(float, float, float)");
    declare(c, "declare float @llvm.sin.f32(float)");
    declare(c, "declare float @llvm.cos.f32(float)");
    for (int cosine = 0; cosine < 2; cosine++) {
      poot_strbuf_printf(o,
                         "\n; %s(x) after a three-part Cody-Waite reduction by 2*pi\n"
                         "define internal float @poot.%s(float %%x) #1 {\n"
                         "  %%q = fmul float %%x, %s\n"
                         "  %%k = call float @llvm.rint.f32(float %%q)\n"
                         "  %%nk = fneg float %%k\n",
                         cosine ? "cos" : "sin", cosine ? "cos" : "sin",
                         f32c(c, POOT__KIR_INV_2PI));
      poot_strbuf_printf(o,
                         "  %%r1 = call float @llvm.fma.f32(float %%nk, float %s, float %%x)\n"
                         "  %%r2 = call float @llvm.fma.f32(float %%nk, float %s, float %%r1)\n"
                         "  %%r3 = call float @llvm.fma.f32(float %%nk, float %s, float %%r2)\n"
                         "  %%y = call float @llvm.%s.f32(float %%r3)\n"
                         "  ret float %%y\n}\n",
                         f32c(c, POOT__KIR_2PI_1), f32c(c, POOT__KIR_2PI_2),
                         f32c(c, POOT__KIR_2PI_3), cosine ? "cos" : "sin");
    }
  }
  if (c->use_tanh) {
    declare(c, "declare float @llvm.fabs.f32(float)");
    declare(c, "declare float @llvm.fma.f32(float, float, float)");
    declare(c, "declare float @llvm.exp2.f32(float)");
    declare(c, "declare float @llvm.copysign.f32(float, float)");
    poot_strbuf_printf(o,
                       "\n; tanh: odd Taylor polynomial below 0.55, else 1 - 2/(exp(2|x|)+1)\n"
                       "define internal float @poot.tanh(float %%x) #1 {\n"
                       "  %%ax = call float @llvm.fabs.f32(float %%x)\n"
                       "  %%x2 = fmul float %%x, %%x\n");
    const char *prev = f32c(c, poot__kir_tanh_coef[0]);
    for (int i = 1; i < POOT__KIR_TANH_NCOEF; i++) {
      poot_strbuf_printf(o, "  %%p%d = call float @llvm.fma.f32(float %s, float %%x2, float %s)\n",
                         i, prev, f32c(c, poot__kir_tanh_coef[i]));
      prev = fmt(c, "%%p%d", i);
    }
    poot_strbuf_printf(o,
                       "  %%small = fmul float %s, %%x\n"
                       "  %%t = fmul float %%ax, %s\n"
                       "  %%e = call float @llvm.exp2.f32(float %%t)\n"
                       "  %%e1 = fadd float %%e, 1.0\n"
                       "  %%q = fdiv float 2.0, %%e1\n"
                       "  %%big = fsub float 1.0, %%q\n"
                       "  %%sbig = call float @llvm.copysign.f32(float %%big, float %%x)\n"
                       "  %%is = fcmp olt float %%ax, %s\n"
                       "  %%r = select i1 %%is, float %%small, float %%sbig\n"
                       "  ret float %%r\n}\n",
                       prev, f32c(c, 0x4038AA3Bu), f32c(c, POOT__KIR_TANH_SMALL));
  }
  if (c->use_erf) {
    declare(c, "declare float @llvm.fabs.f32(float)");
    declare(c, "declare float @llvm.minnum.f32(float, float)");
    declare(c, "declare float @llvm.fma.f32(float, float, float)");
    declare(c, "declare float @llvm.exp.f32(float)");
    declare(c, "declare float @llvm.copysign.f32(float, float)");
    poot_strbuf_printf(o,
                       "\n; erf: odd Taylor polynomial below 1, else Abramowitz-Stegun 7.1.26\n"
                       "define internal float @poot.erf(float %%x) #1 {\n"
                       "  %%ax = call float @llvm.fabs.f32(float %%x)\n"
                       "  %%x2 = fmul float %%x, %%x\n");
    const char *prev = f32c(c, poot__kir_erf_coef[0]);
    for (int i = 1; i < POOT__KIR_ERF_NCOEF; i++) {
      poot_strbuf_printf(o, "  %%p%d = call float @llvm.fma.f32(float %s, float %%x2, float %s)\n",
                         i, prev, f32c(c, poot__kir_erf_coef[i]));
      prev = fmt(c, "%%p%d", i);
    }
    poot_strbuf_printf(o,
                       "  %%small = fmul float %s, %%x\n"
                       "  %%axc = call float @llvm.minnum.f32(float %%ax, float %s)\n"
                       "  %%d = call float @llvm.fma.f32(float %%axc, float %s, float 1.0)\n"
                       "  %%t = fdiv float 1.0, %%d\n",
                       prev, f32c(c, POOT__KIR_ERF_CLAMP), f32c(c, POOT__KIR_ERF_P));
    prev = f32c(c, poot__kir_erf_as[0]);
    for (int i = 1; i < 5; i++) {
      poot_strbuf_printf(o, "  %%a%d = call float @llvm.fma.f32(float %s, float %%t, float %s)\n",
                         i, prev, f32c(c, poot__kir_erf_as[i]));
      prev = fmt(c, "%%a%d", i);
    }
    poot_strbuf_printf(o,
                       "  %%q = fmul float %s, %%t\n"
                       "  %%hi = fmul float %%axc, %%axc\n"
                       "  %%nhi = fneg float %%hi\n"
                       "  %%lo = call float @llvm.fma.f32(float %%axc, float %%axc, float %%nhi)\n"
                       "  %%e0 = call float @llvm.exp.f32(float %%nhi)\n"
                       "  %%nlo = fneg float %%lo\n"
                       "  %%e = call float @llvm.fma.f32(float %%e0, float %%nlo, float %%e0)\n"
                       "  %%nq = fneg float %%q\n"
                       "  %%big = call float @llvm.fma.f32(float %%nq, float %%e, float 1.0)\n"
                       "  %%sbig = call float @llvm.copysign.f32(float %%big, float %%x)\n"
                       "  %%is = fcmp olt float %%ax, 1.0\n"
                       "  %%r0 = select i1 %%is, float %%small, float %%sbig\n"
                       "  %%nan = fcmp uno float %%x, 0.0\n"
                       "  %%r = select i1 %%nan, float %%x, float %%r0\n"
                       "  ret float %%r\n}\n",
                       prev);
  }
  if (c->use_pow) {
    declare(c, "declare float @llvm.fabs.f32(float)");
    declare(c, "declare float @llvm.log2.f32(float)");
    declare(c, "declare float @llvm.exp2.f32(float)");
    declare(c, "declare float @llvm.trunc.f32(float)");
    poot_strbuf_printf(
        o,
        "\n; pow(x, y) = 2^(y log2|x|), with C's answers for x < 0 (integral y), y == 0, x == 1\n"
        "define internal float @poot.pow(float %%x, float %%y) #1 {\n"
        "  %%ax = call float @llvm.fabs.f32(float %%x)\n"
        "  %%l = call float @llvm.log2.f32(float %%ax)\n"
        "  %%ly = fmul float %%l, %%y\n"
        "  %%r = call float @llvm.exp2.f32(float %%ly)\n"
        "  %%yi = call float @llvm.trunc.f32(float %%y)\n"
        "  %%isint = fcmp oeq float %%yi, %%y\n"
        "  %%h = fmul float %%y, 0.5\n"
        "  %%hi = call float @llvm.trunc.f32(float %%h)\n"
        "  %%hodd = fcmp one float %%hi, %%h\n"
        "  %%odd = and i1 %%hodd, %%isint\n"
        "  %%nr = fneg float %%r\n"
        "  %%sr = select i1 %%odd, float %%nr, float %%r\n"
        "  %%nn = select i1 %%isint, float %%sr, float 0x7FF8000000000000\n"
        "  %%neg = fcmp olt float %%x, 0.0\n"
        "  %%r2 = select i1 %%neg, float %%nn, float %%r\n"
        "  %%y0 = fcmp oeq float %%y, 0.0\n"
        "  %%x1 = fcmp oeq float %%x, 1.0\n"
        "  %%one = or i1 %%y0, %%x1\n"
        "  %%res = select i1 %%one, float 1.0, float %%r2\n"
        "  ret float %%res\n}\n");
  }
}

/* ------------------------------------------------------- statements */

static void emit_block(amd_ctx *c, const poot_kir_block *b);

static const char *const dimc[3] = {"x", "y", "z"};

static const char *const_text(amd_ctx *c, poot_kir_scalar s, uint64_t b) {
  switch (s) {
    case POOT_KIR_BOOL:
      return b ? "true" : "false";
    case POOT_KIR_F32:
      return f32c(c, (uint32_t)b);
    case POOT_KIR_F16:
      return fmt(c, "0xH%04" PRIX32, (uint32_t)(b & 0xFFFF));
    case POOT_KIR_BF16:
      return fmt(c, "0xR%04" PRIX32, (uint32_t)(b & 0xFFFF));
    case POOT_KIR_I8:
    case POOT_KIR_U8:
      return fmt(c, "%d", (int)(int8_t)(uint8_t)b);
    case POOT_KIR_I16:
    case POOT_KIR_U16:
      return fmt(c, "%d", (int)(int16_t)(uint16_t)b);
    case POOT_KIR_I64:
      return fmt(c, "%" PRId64, (int64_t)b);
    default:
      return fmt(c, "%" PRId32, (int32_t)(uint32_t)b);
  }
}

static const char *local_index(amd_ctx *c) {
  const uint32_t *ws = c->k->workgroup_size;
  uint32_t sx = ws[0] ? ws[0] : 1, sy = ws[1] ? ws[1] : 1, sz = ws[2] ? ws[2] : 1;
  declare(c, "declare i32 @llvm.amdgcn.workitem.id.x()");
  const char *x = tmp(c);
  EMIT("  %s = call i32 @llvm.amdgcn.workitem.id.x()\n", x);
  if (sy > 1 || sz > 1) {
    declare(c, "declare i32 @llvm.amdgcn.workitem.id.y()");
    const char *y = tmp(c), *m = tmp(c), *a = tmp(c);
    EMIT("  %s = call i32 @llvm.amdgcn.workitem.id.y()\n", y);
    EMIT("  %s = mul nuw i32 %s, %" PRIu32 "\n", m, y, sx);
    EMIT("  %s = add nuw i32 %s, %s\n", a, m, x);
    x = a;
  }
  if (sz > 1) {
    declare(c, "declare i32 @llvm.amdgcn.workitem.id.z()");
    const char *z = tmp(c), *m = tmp(c), *a = tmp(c);
    EMIT("  %s = call i32 @llvm.amdgcn.workitem.id.z()\n", z);
    EMIT("  %s = mul nuw i32 %s, %" PRIu32 "\n", m, z, sx * sy);
    EMIT("  %s = add nuw i32 %s, %s\n", a, m, x);
    x = a;
  }
  return x;
}

static void emit_builtin(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t dim = (uint32_t)in->imm;
  if (dim > 2) dim = 0;
  const uint32_t *ws = c->k->workgroup_size;
  uint32_t wsd = ws[dim] ? ws[dim] : 1u;
  const char *r = NULL;
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
      declare(c, dim == 0   ? "declare i32 @llvm.amdgcn.workgroup.id.x()"
                 : dim == 1 ? "declare i32 @llvm.amdgcn.workgroup.id.y()"
                            : "declare i32 @llvm.amdgcn.workgroup.id.z()");
      r = tmp(c);
      EMIT("  %s = call i32 @llvm.amdgcn.workgroup.id.%s()\n", r, dimc[dim]);
      break;
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS: {
      /* grid_size_{x,y,z} of the HSA dispatch packet (offset 12 + 4*dim) over
       * the (fixed) workgroup size, rounded up. */
      declare(c, "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()");
      const char *dp = tmp(c), *gp = tmp(c), *g = tmp(c), *a = tmp(c);
      r = tmp(c);
      EMIT("  %s = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n", dp);
      EMIT("  %s = getelementptr inbounds i8, ptr addrspace(4) %s, i64 %" PRIu32 "\n", gp, dp,
           12 + 4 * dim);
      EMIT("  %s = load i32, ptr addrspace(4) %s, align 4, !invariant.load !1\n", g, gp);
      EMIT("  %s = add i32 %s, %" PRIu32 "\n", a, g, wsd - 1);
      EMIT("  %s = udiv i32 %s, %" PRIu32 "\n", r, a, wsd);
      break;
    }
    case POOT_KIR_BUILTIN_LOCAL_ID:
      declare(c, dim == 0   ? "declare i32 @llvm.amdgcn.workitem.id.x()"
                 : dim == 1 ? "declare i32 @llvm.amdgcn.workitem.id.y()"
                            : "declare i32 @llvm.amdgcn.workitem.id.z()");
      r = tmp(c);
      EMIT("  %s = call i32 @llvm.amdgcn.workitem.id.%s()\n", r, dimc[dim]);
      break;
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
      r = fmt(c, "%" PRIu32, wsd);
      break;
    case POOT_KIR_BUILTIN_LOCAL_INDEX:
      r = local_index(c);
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_ID: {
      const char *li = local_index(c);
      r = tmp(c);
      EMIT("  %s = udiv i32 %s, %" PRIu32 "\n", r, li, c->sg);
      break;
    }
    case POOT_KIR_BUILTIN_SUBGROUP_LANE: {
      const char *li = local_index(c);
      r = tmp(c);
      EMIT("  %s = urem i32 %s, %" PRIu32 "\n", r, li, c->sg);
      break;
    }
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      r = fmt(c, "%" PRIu32, c->sg);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
      r = "0";
  }
  c->vname[in->result] = r;
}

static poot_kir_scalar space_elem(amd_ctx *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_GLOBAL ? c->k->bindings[ref].elem : c->k->shared[ref].elem;
}

/* Pointer to element `index` (addrspace 1 or 3). */
static const char *address(amd_ctx *c, poot_kir_space space, uint32_t ref, poot_kir_value index) {
  poot_kir_scalar elem = space_elem(c, space, ref);
  bool sidx = (poot_kir_scalar)vtype(c, index).scalar == POOT_KIR_I32;
  const char *p = tmp(c);
  if (space == POOT_KIR_SPACE_GLOBAL) {
    const char *w = tmp(c);
    EMIT("  %s = %s i32 %s to i64\n", w, sidx ? "sext" : "zext", c->vname[index]);
    EMIT("  %s = getelementptr inbounds %s, ptr addrspace(1) %%b%" PRIu32 ", i64 %s\n", p,
         sty(elem), ref, w);
  } else {
    EMIT("  %s = getelementptr inbounds %s, ptr addrspace(3) @%s.s%" PRIu32 ", i32 %s\n", p,
         sty(elem), c->k->name, ref, c->vname[index]);
  }
  return p;
}

static uint32_t access_align(amd_ctx *c, poot_kir_space space, uint32_t ref, uint32_t lanes) {
  poot_kir_scalar elem = space_elem(c, space, ref);
  uint32_t base = 16;
  if (space == POOT_KIR_SPACE_GLOBAL && c->k->bindings[ref].align) base = c->k->bindings[ref].align;
  uint32_t want = esize(elem) * lanes;
  return want < base ? want : base;
}

static void emit_load_store(amd_ctx *c, const poot_kir_inst *in, bool store) {
  poot_kir_value v = store ? in->args[1] : in->result;
  poot_kir_type t = vtype(c, v);
  const char *p = address(c, in->space, in->ref, in->args[0]);
  const char *as = in->space == POOT_KIR_SPACE_GLOBAL ? "1" : "3";
  uint32_t al = access_align(c, in->space, in->ref, lanes_of(t));
  if (store) {
    EMIT("  store %s %s, ptr addrspace(%s) %s, align %" PRIu32 "\n", vty(c, t), c->vname[v], as, p,
         al);
  } else {
    const char *r = tmp(c);
    EMIT("  %s = load %s, ptr addrspace(%s) %s, align %" PRIu32 "\n", r, vty(c, t), as, p, al);
    c->vname[v] = r;
  }
}

static void emit_atomic(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar elem = space_elem(c, in->space, in->ref);
  const char *p = address(c, in->space, in->ref, in->args[0]);
  const char *as = in->space == POOT_KIR_SPACE_GLOBAL ? "1" : "3";
  const char *scope = in->space == POOT_KIR_SPACE_GLOBAL ? "agent" : "workgroup";
  const char *ty = sty(elem);
  bool f = elem == POOT_KIR_F32;
  const char *r = tmp(c);
  if (in->op == POOT_KIR_OP_ATOMIC_CAS) {
    const char *cmp = c->vname[in->args[1]], *nv = c->vname[in->args[2]];
    if (f) {
      /* cmpxchg works on integers: compare bit patterns, as PTX atom.cas.b32 does. */
      const char *ci = tmp(c), *ni = tmp(c);
      EMIT("  %s = bitcast float %s to i32\n", ci, cmp);
      EMIT("  %s = bitcast float %s to i32\n", ni, nv);
      cmp = ci;
      nv = ni;
    }
    const char *pair = tmp(c);
    EMIT(
        "  %s = cmpxchg ptr addrspace(%s) %s, i32 %s, i32 %s syncscope(\"%s\") monotonic "
        "monotonic, align 4\n",
        pair, as, p, cmp, nv, scope);
    if (f) {
      const char *oi = tmp(c);
      EMIT("  %s = extractvalue { i32, i1 } %s, 0\n", oi, pair);
      EMIT("  %s = bitcast i32 %s to float\n", r, oi);
    } else {
      EMIT("  %s = extractvalue { i32, i1 } %s, 0\n", r, pair);
    }
    c->vname[in->result] = r;
    return;
  }
  const char *op = NULL;
  bool s = is_signed_int(elem);
  switch (in->op) {
    case POOT_KIR_OP_ATOMIC_ADD:
      op = f ? "fadd" : "add";
      break;
    case POOT_KIR_OP_ATOMIC_MAX:
      op = f ? NULL : (s ? "max" : "umax");
      break;
    case POOT_KIR_OP_ATOMIC_MIN:
      op = f ? NULL : (s ? "min" : "umin");
      break;
    case POOT_KIR_OP_ATOMIC_XCHG:
      op = "xchg";
      break;
    default:
      break;
  }
  if (!op) {
    fail(c, POOT_UNSUPPORTED, in, "atomic operation on this element type");
    return;
  }
  EMIT("  %s = atomicrmw %s ptr addrspace(%s) %s, %s %s syncscope(\"%s\") monotonic, align 4\n", r,
       op, as, p, ty, c->vname[in->args[1]], scope);
  c->vname[in->result] = r;
}

static void emit_unary(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t n = lanes_of(in->type);
  const char *res[4];
  for (uint32_t l = 0; l < n; l++) {
    if (is_float(s)) {
      res[l] = fdst(c, s, math1(c, in, fsrc(c, in->args[0], l)));
      continue;
    }
    const char *a = lane(c, in->args[0], l);
    const char *r = tmp(c);
    const char *ty = sty(s);
    switch (in->op) {
      case POOT_KIR_OP_NOT:
        EMIT("  %s = xor %s %s, %s\n", r, ty, a, s == POOT_KIR_BOOL ? "true" : "-1");
        break;
      case POOT_KIR_OP_NEG:
        EMIT("  %s = sub %s 0, %s\n", r, ty, a);
        break;
      case POOT_KIR_OP_ABS:
        if (s == POOT_KIR_I64) {
          declare(c, "declare i64 @llvm.abs.i64(i64, i1)");
          EMIT("  %s = call i64 @llvm.abs.i64(i64 %s, i1 false)\n", r, a);
        } else {
          declare(c, "declare i32 @llvm.abs.i32(i32, i1)");
          EMIT("  %s = call i32 @llvm.abs.i32(i32 %s, i1 false)\n", r, a);
        }
        break;
      default:
        fail(c, POOT_UNSUPPORTED, in, "unary operation on an integer");
    }
    res[l] = r;
  }
  set_lanes(c, in->result, res);
}

static void emit_binary(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_type at = vtype(c, in->args[0]);
  poot_kir_scalar s = (poot_kir_scalar)at.scalar;
  uint32_t n = lanes_of(at);
  const char *res[4];
  bool cmp = in->op >= POOT_KIR_OP_EQ && in->op <= POOT_KIR_OP_GE;
  int k = (int)in->op - (int)POOT_KIR_OP_EQ;
  for (uint32_t l = 0; l < n; l++) {
    const char *r = tmp(c);
    if (is_float(s)) {
      const char *a = fsrc(c, in->args[0], l), *b = fsrc(c, in->args[1], l);
      if (cmp) {
        static const char *const fop[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
        EMIT("  %s = fcmp %s float %s, %s\n", r, fop[k], a, b);
        res[l] = r;
        continue;
      }
      switch (in->op) {
        case POOT_KIR_OP_ADD:
          EMIT("  %s = fadd float %s, %s\n", r, a, b);
          break;
        case POOT_KIR_OP_SUB:
          EMIT("  %s = fsub float %s, %s\n", r, a, b);
          break;
        case POOT_KIR_OP_MUL:
          EMIT("  %s = fmul float %s, %s\n", r, a, b);
          break;
        case POOT_KIR_OP_DIV:
          EMIT("  %s = fdiv float %s, %s\n", r, a, b);
          break;
        case POOT_KIR_OP_MIN:
          declare(c, "declare float @llvm.minnum.f32(float, float)");
          EMIT("  %s = call float @llvm.minnum.f32(float %s, float %s)\n", r, a, b);
          break;
        case POOT_KIR_OP_MAX:
          declare(c, "declare float @llvm.maxnum.f32(float, float)");
          EMIT("  %s = call float @llvm.maxnum.f32(float %s, float %s)\n", r, a, b);
          break;
        case POOT_KIR_OP_POW:
          c->use_pow = true;
          EMIT("  %s = call float @poot.pow(float %s, float %s)\n", r, a, b);
          break;
        default:
          fail(c, POOT_UNSUPPORTED, in, "binary operation on a float");
      }
      res[l] = fdst(c, s, r);
      continue;
    }
    const char *a = lane(c, in->args[0], l), *b = lane(c, in->args[1], l);
    const char *ty = sty(s);
    bool sg = is_signed_int(s);
    if (cmp) {
      static const char *const sop[] = {"eq", "ne", "slt", "sle", "sgt", "sge"};
      static const char *const uop[] = {"eq", "ne", "ult", "ule", "ugt", "uge"};
      EMIT("  %s = icmp %s %s %s, %s\n", r, sg ? sop[k] : uop[k], ty, a, b);
      res[l] = r;
      continue;
    }
    switch (in->op) {
      case POOT_KIR_OP_ADD:
        EMIT("  %s = add %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_SUB:
        EMIT("  %s = sub %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_MUL:
        EMIT("  %s = mul %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_DIV:
        EMIT("  %s = %s %s %s, %s\n", r, sg ? "sdiv" : "udiv", ty, a, b);
        break;
      case POOT_KIR_OP_REM:
        EMIT("  %s = %s %s %s, %s\n", r, sg ? "srem" : "urem", ty, a, b);
        break;
      case POOT_KIR_OP_AND:
        EMIT("  %s = and %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_OR:
        EMIT("  %s = or %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_XOR:
        EMIT("  %s = xor %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_SHL:
        EMIT("  %s = shl %s %s, %s\n", r, ty, a, b);
        break;
      case POOT_KIR_OP_SHR:
        EMIT("  %s = %s %s %s, %s\n", r, sg ? "ashr" : "lshr", ty, a, b);
        break;
      case POOT_KIR_OP_MIN:
      case POOT_KIR_OP_MAX: {
        const char *fn =
            in->op == POOT_KIR_OP_MIN ? (sg ? "smin" : "umin") : (sg ? "smax" : "umax");
        declare(c, fmt(c, "declare %s @llvm.%s.%s(%s, %s)", ty, fn, ty, ty, ty));
        EMIT("  %s = call %s @llvm.%s.%s(%s %s, %s %s)\n", r, ty, fn, ty, ty, a, ty, b);
        break;
      }
      default:
        fail(c, POOT_UNSUPPORTED, in, "binary operation on an integer");
    }
    res[l] = r;
  }
  set_lanes(c, in->result, res);
}

static void emit_fma(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t n = lanes_of(in->type);
  const char *res[4];
  declare(c, "declare float @llvm.fma.f32(float, float, float)");
  for (uint32_t l = 0; l < n; l++) {
    const char *a = fsrc(c, in->args[0], l), *b = fsrc(c, in->args[1], l),
               *e = fsrc(c, in->args[2], l);
    const char *r = tmp(c);
    EMIT("  %s = call float @llvm.fma.f32(float %s, float %s, float %s)\n", r, a, b, e);
    res[l] = fdst(c, s, r);
  }
  set_lanes(c, in->result, res);
}

static void emit_select(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t n = lanes_of(in->type);
  uint32_t cl = lanes_of(vtype(c, in->args[0]));
  const char *res[4];
  for (uint32_t l = 0; l < n; l++) {
    const char *p = lane(c, in->args[0], cl == 1 ? 0 : l);
    const char *a = lane(c, in->args[1], l), *b = lane(c, in->args[2], l);
    const char *r = tmp(c);
    EMIT("  %s = select i1 %s, %s %s, %s %s\n", r, p, sty(s), a, sty(s), b);
    res[l] = r;
  }
  set_lanes(c, in->result, res);
}

static const char *convert_lane(amd_ctx *c, poot_kir_scalar to, poot_kir_scalar from,
                                const char *a) {
  const char *r;
  if (from == to) return a;
  if (from == POOT_KIR_BOOL) {
    r = tmp(c);
    const char *one = is_float(to) ? (to == POOT_KIR_F32   ? "1.0"
                                      : to == POOT_KIR_F16 ? "0xH3C00"
                                                           : "0xR3F80")
                                   : "1";
    const char *zero = is_float(to) ? (to == POOT_KIR_F32   ? "0.0"
                                       : to == POOT_KIR_F16 ? "0xH0000"
                                                            : "0xR0000")
                                    : "0";
    EMIT("  %s = select i1 %s, %s %s, %s %s\n", r, a, sty(to), one, sty(to), zero);
    return r;
  }
  if (to == POOT_KIR_BOOL) {
    r = tmp(c);
    if (is_float(from)) {
      const char *f = a;
      if (from != POOT_KIR_F32) {
        f = tmp(c);
        EMIT("  %s = fpext %s %s to float\n", f, sty(from), a);
      }
      EMIT("  %s = fcmp une float %s, 0.0\n", r, f);
    } else {
      EMIT("  %s = icmp ne %s %s, 0\n", r, sty(from), a);
    }
    return r;
  }
  if (is_float(from)) {
    const char *f = a;
    if (from != POOT_KIR_F32) {
      f = tmp(c);
      EMIT("  %s = fpext %s %s to float\n", f, sty(from), a);
    }
    if (to == POOT_KIR_F32) return f;
    r = tmp(c);
    if (is_float(to)) {
      EMIT("  %s = fptrunc float %s to %s\n", r, f, sty(to));
    } else {
      /* Truncate toward zero, saturate, NaN -> 0. */
      const char *fn = is_signed_int(to) ? "fptosi" : "fptoui";
      declare(c, fmt(c, "declare %s @llvm.%s.sat.%s.f32(float)", sty(to), fn, sty(to)));
      EMIT("  %s = call %s @llvm.%s.sat.%s.f32(float %s)\n", r, sty(to), fn, sty(to), f);
    }
    return r;
  }
  /* integer source */
  if (is_float(to)) {
    const char *f = tmp(c);
    EMIT("  %s = %s %s %s to float\n", f, is_signed_int(from) ? "sitofp" : "uitofp", sty(from), a);
    if (to == POOT_KIR_F32) return f;
    r = tmp(c);
    EMIT("  %s = fptrunc float %s to %s\n", r, f, sty(to));
    return r;
  }
  uint32_t fs = esize(from), ts = esize(to);
  if (fs == ts) return a; /* same LLVM integer type: the bits are the value */
  r = tmp(c);
  if (ts < fs)
    EMIT("  %s = trunc %s %s to %s\n", r, sty(from), a, sty(to));
  else
    EMIT("  %s = %s %s %s to %s\n", r, is_signed_int(from) ? "sext" : "zext", sty(from), a,
         sty(to));
  return r;
}

static void emit_convert(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar to = (poot_kir_scalar)in->type.scalar;
  poot_kir_scalar from = (poot_kir_scalar)vtype(c, in->args[0]).scalar;
  uint32_t n = lanes_of(in->type);
  const char *res[4];
  for (uint32_t l = 0; l < n; l++) res[l] = convert_lane(c, to, from, lane(c, in->args[0], l));
  set_lanes(c, in->result, res);
}

static void emit_move_lanes(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = lanes_of(in->type);
  const char *res[4];
  for (uint32_t l = 0; l < n; l++) {
    switch (in->op) {
      case POOT_KIR_OP_SPLAT:
        res[l] = c->vname[in->args[0]];
        break;
      case POOT_KIR_OP_VEC:
        res[l] = c->vname[in->args[l]];
        break;
      default:
        res[l] = lane(c, in->args[0], (uint32_t)in->imm);
        break;
    }
  }
  set_lanes(c, in->result, res);
}

/* Private arrays are kept in SSA form by the renderer itself (KIR's control
 * flow is structured, so this is simple): a load reads the element's current
 * value, a store replaces it, `if` joins merge with phis, and every loop
 * header carries a phi per element. No allocas: the IR needs no SROA or
 * mem2reg to keep private state in registers (llc runs neither). */
static void emit_priv(amd_ctx *c, const poot_kir_inst *in, bool store) {
  uint32_t slot = c->privbase[in->ref] + (uint32_t)in->imm;
  if (store)
    c->pv[slot] = c->vname[in->args[0]];
  else
    c->vname[in->result] = c->pv[slot];
}

static const char *priv_type(amd_ctx *c, uint32_t slot) {
  uint32_t i = 0;
  while (i + 1 < c->k->private_count && c->privbase[i + 1] <= slot) i++;
  return vty(c, c->k->privates[i].type);
}

static const char *zero_of(poot_kir_type t) {
  if (lanes_of(t) > 1) return "zeroinitializer";
  switch ((poot_kir_scalar)t.scalar) {
    case POOT_KIR_BOOL:
      return "false";
    case POOT_KIR_F32:
      return "0.0";
    case POOT_KIR_F16:
      return "0xH0000";
    case POOT_KIR_BF16:
      return "0xR0000";
    default:
      return "0";
  }
}

/* A copy of the current private values (arena-allocated). */
static const char **priv_save(amd_ctx *c) {
  if (!c->priv_total) return NULL;
  const char **s = poot_arena_alloc(&c->names, c->priv_total * sizeof *s, _Alignof(const char *));
  if (!s) {
    if (!c->err) c->err = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    return NULL;
  }
  memcpy(s, c->pv, c->priv_total * sizeof *s);
  return s;
}

static void set_label(amd_ctx *c, const char *label) {
  EMIT("%s:\n", label);
  c->cur_label = label;
}

/* ds_bpermute reads `value` from the lane whose index*4 is `addr`. */
static const char *bpermute(amd_ctx *c, const char *lane_idx, const char *bits) {
  declare(c, "declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)");
  const char *a = tmp(c), *r = tmp(c);
  EMIT("  %s = shl i32 %s, 2\n", a, lane_idx);
  EMIT("  %s = call i32 @llvm.amdgcn.ds.bpermute(i32 %s, i32 %s)\n", r, a, bits);
  return r;
}

static void emit_subgroup(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  bool f = s == POOT_KIR_F32;
  const char *v = c->vname[in->args[0]];
  const char *bits = v;
  if (f) {
    bits = tmp(c);
    EMIT("  %s = bitcast float %s to i32\n", bits, v);
  }
  const char *out_bits = NULL;
  switch (in->op) {
    case POOT_KIR_OP_SG_REDUCE_ADD:
    case POOT_KIR_OP_SG_REDUCE_MAX:
    case POOT_KIR_OP_SG_REDUCE_MIN: {
      const char *acc = v;
      bool sg = is_signed_int(s);
      for (uint32_t off = c->sg / 2; off >= 1; off /= 2) {
        const char *ab = acc;
        if (f) {
          ab = tmp(c);
          EMIT("  %s = bitcast float %s to i32\n", ab, acc);
        }
        const char *partner = tmp(c);
        EMIT("  %s = xor i32 %s, %" PRIu32 "\n", partner, c->lane_id, off);
        const char *o = bpermute(c, partner, ab);
        const char *ov = o;
        if (f) {
          ov = tmp(c);
          EMIT("  %s = bitcast i32 %s to float\n", ov, o);
        }
        const char *r = tmp(c);
        if (in->op == POOT_KIR_OP_SG_REDUCE_ADD) {
          EMIT("  %s = %s %s %s, %s\n", r, f ? "fadd" : "add", f ? "float" : "i32", acc, ov);
        } else {
          const char *fn = in->op == POOT_KIR_OP_SG_REDUCE_MAX ? (f    ? "maxnum.f32"
                                                                  : sg ? "smax.i32"
                                                                       : "umax.i32")
                                                               : (f    ? "minnum.f32"
                                                                  : sg ? "smin.i32"
                                                                       : "umin.i32");
          const char *ty = f ? "float" : "i32";
          declare(c, fmt(c, "declare %s @llvm.%s(%s, %s)", ty, fn, ty, ty));
          EMIT("  %s = call %s @llvm.%s(%s %s, %s %s)\n", r, ty, fn, ty, acc, ty, ov);
        }
        acc = r;
      }
      c->vname[in->result] = acc;
      return;
    }
    case POOT_KIR_OP_SG_SHUFFLE:
      out_bits = bpermute(c, c->vname[in->args[1]], bits);
      break;
    case POOT_KIR_OP_SG_SHUFFLE_XOR: {
      const char *partner = tmp(c);
      EMIT("  %s = xor i32 %s, %" PRIu64 "\n", partner, c->lane_id, in->imm);
      out_bits = bpermute(c, partner, bits);
      break;
    }
    case POOT_KIR_OP_SG_BROADCAST:
      declare(c, "declare i32 @llvm.amdgcn.readlane(i32, i32)");
      out_bits = tmp(c);
      EMIT("  %s = call i32 @llvm.amdgcn.readlane(i32 %s, i32 %" PRIu64 ")\n", out_bits, bits,
           in->imm);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "subgroup operation");
      return;
  }
  if (f) {
    const char *r = tmp(c);
    EMIT("  %s = bitcast i32 %s to float\n", r, out_bits);
    out_bits = r;
  }
  c->vname[in->result] = out_bits;
}

static void emit_param(amd_ctx *c, const poot_kir_inst *in) {
  const poot_kir_param *p = &c->k->params[in->ref];
  if (p->kind == POOT_KIR_PARAM_PUSH) {
    c->vname[in->result] = fmt(c, "%%a%" PRIu32, in->ref);
    return;
  }
  const char *q = tmp(c), *r = tmp(c);
  EMIT("  %s = getelementptr inbounds %s, ptr addrspace(1) %%b%" PRIu32 ", i64 %" PRIu32 "\n", q,
       sty(p->type), p->slot_ref, p->slot_index);
  EMIT("  %s = load %s, ptr addrspace(1) %s, align 4\n", r, sty(p->type), q);
  c->vname[in->result] = r;
}

static void emit_bitcast(amd_ctx *c, const poot_kir_inst *in) {
  const char *r = tmp(c);
  EMIT("  %s = bitcast %s %s to %s\n", r, vty(c, vtype(c, in->args[0])), c->vname[in->args[0]],
       vty(c, in->type));
  c->vname[in->result] = r;
}

static void emit_barrier(amd_ctx *c) {
  declare(c, "declare void @llvm.amdgcn.s.barrier()");
  EMIT("  fence syncscope(\"workgroup\") release\n");
  EMIT("  call void @llvm.amdgcn.s.barrier()\n");
  EMIT("  fence syncscope(\"workgroup\") acquire\n");
}

static void emit_check(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  fault_edge e = {(uint32_t)in->imm, n};
  poot_status st = poot_vec_push(&c->faults, &e);
  if (st && !c->err)
    c->err = st;
  else
    poot_status_free(st);
  EMIT("  br i1 %s, label %%ck%" PRIu32 ".ok, label %%ck%" PRIu32 ".fail, !prof !2\n",
       c->vname[in->args[0]], n, n);
  EMIT("ck%" PRIu32 ".fail:\n  br label %%fault\n", n);
  set_label(c, fmt(c, "ck%" PRIu32 ".ok", n));
}

static void emit_if(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  bool has_else = in->else_body.first != NULL;
  const char *from = c->cur_label;
  const char **before = priv_save(c);
  EMIT("  br i1 %s, label %%if%" PRIu32 ".then, label %%if%" PRIu32 ".%s\n", c->vname[in->args[0]],
       n, n, has_else ? "else" : "end");
  set_label(c, fmt(c, "if%" PRIu32 ".then", n));
  emit_block(c, &in->body);
  EMIT("  br label %%if%" PRIu32 ".end\n", n);
  const char *then_end = c->cur_label;
  const char **after_then = priv_save(c);
  const char *else_end = from;
  if (has_else) {
    if (before) memcpy(c->pv, before, c->priv_total * sizeof *c->pv);
    set_label(c, fmt(c, "if%" PRIu32 ".else", n));
    emit_block(c, &in->else_body);
    EMIT("  br label %%if%" PRIu32 ".end\n", n);
    else_end = c->cur_label;
  }
  const char **after_else = has_else ? priv_save(c) : before;
  set_label(c, fmt(c, "if%" PRIu32 ".end", n));
  for (uint32_t e = 0; e < c->priv_total && after_then && after_else; e++) {
    if (after_then[e] == after_else[e]) {
      c->pv[e] = after_then[e];
      continue;
    }
    const char *r = fmt(c, "%%if%" PRIu32 ".p%" PRIu32, n, e);
    EMIT("  %s = phi %s [ %s, %%%s ], [ %s, %%%s ]\n", r, priv_type(c, e), after_then[e], then_end,
         after_else[e], else_end);
    c->pv[e] = r;
  }
}

static void emit_for(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  bool sg = (poot_kir_scalar)vtype(c, in->args[0]).scalar == POOT_KIR_I32;
  const char *i = fmt(c, "%%for%" PRIu32 ".i", n);
  const char *pre = fmt(c, "for%" PRIu32 ".pre", n);
  c->vname[in->result] = i;
  EMIT("  br label %%%s\n", pre);
  set_label(c, pre);
  EMIT("  br label %%for%" PRIu32 ".head\n", n);
  /* The header's phis need the values at the end of the body, so the
   * body is emitted first, into a buffer of its own, with every private
   * element named by its header phi. */
  const char **entry_vals = priv_save(c);
  for (uint32_t e = 0; e < c->priv_total; e++)
    c->pv[e] = fmt(c, "%%for%" PRIu32 ".p%" PRIu32, n, e);
  poot_strbuf body;
  poot_strbuf_init(&body);
  poot_strbuf *outer = c->o;
  c->o = &body;
  set_label(c, fmt(c, "for%" PRIu32 ".body", n));
  emit_block(c, &in->body);
  EMIT("  br label %%for%" PRIu32 ".latch\n", n);
  set_label(c, fmt(c, "for%" PRIu32 ".latch", n));
  EMIT("  %%for%" PRIu32 ".next = add i32 %s, %s\n", n, i, c->vname[in->args[2]]);
  EMIT("  br label %%for%" PRIu32 ".head\n", n);
  const char **latch_vals = priv_save(c);
  c->o = outer;
  EMIT("for%" PRIu32 ".head:\n", n);
  EMIT("  %s = phi i32 [ %s, %%%s ], [ %%for%" PRIu32 ".next, %%for%" PRIu32 ".latch ]\n", i,
       c->vname[in->args[0]], pre, n, n);
  for (uint32_t e = 0; e < c->priv_total && entry_vals && latch_vals; e++)
    EMIT("  %%for%" PRIu32 ".p%" PRIu32 " = phi %s [ %s, %%%s ], [ %s, %%for%" PRIu32 ".latch ]\n",
         n, e, priv_type(c, e), entry_vals[e], pre, latch_vals[e], n);
  EMIT("  %%for%" PRIu32 ".c = icmp %s i32 %s, %s\n", n, sg ? "slt" : "ult", i,
       c->vname[in->args[1]]);
  EMIT("  br i1 %%for%" PRIu32 ".c, label %%for%" PRIu32 ".body, label %%for%" PRIu32 ".end\n", n,
       n, n);
  poot_strbuf_append(c->o, body.data, body.len);
  if (body.failed && !c->err)
    c->err = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
  poot_strbuf_deinit(&body);
  /* After the loop (exited from the header) the elements are the phis. */
  for (uint32_t e = 0; e < c->priv_total; e++)
    c->pv[e] = fmt(c, "%%for%" PRIu32 ".p%" PRIu32, n, e);
  set_label(c, fmt(c, "for%" PRIu32 ".end", n));
}

static void emit_inst(amd_ctx *c, const poot_kir_inst *in) {
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_CONST:
      c->vname[in->result] = const_text(c, (poot_kir_scalar)in->type.scalar, in->imm);
      break;
    case POOT_KIR_CLASS_BUILTIN:
      emit_builtin(c, in);
      break;
    case POOT_KIR_CLASS_PARAM:
      emit_param(c, in);
      break;
    case POOT_KIR_CLASS_UNARY:
      emit_unary(c, in);
      break;
    case POOT_KIR_CLASS_BINARY:
    case POOT_KIR_CLASS_COMPARE:
      emit_binary(c, in);
      break;
    case POOT_KIR_CLASS_SELECT:
      emit_select(c, in);
      break;
    case POOT_KIR_CLASS_FMA:
      emit_fma(c, in);
      break;
    case POOT_KIR_CLASS_CONVERT:
      emit_convert(c, in);
      break;
    case POOT_KIR_CLASS_BITCAST:
      emit_bitcast(c, in);
      break;
    case POOT_KIR_CLASS_LANES:
      emit_move_lanes(c, in);
      break;
    case POOT_KIR_CLASS_LOAD:
      emit_load_store(c, in, false);
      break;
    case POOT_KIR_CLASS_STORE:
      emit_load_store(c, in, true);
      break;
    case POOT_KIR_CLASS_PRIV_LOAD:
      emit_priv(c, in, false);
      break;
    case POOT_KIR_CLASS_PRIV_STORE:
      emit_priv(c, in, true);
      break;
    case POOT_KIR_CLASS_ATOMIC:
      emit_atomic(c, in);
      break;
    case POOT_KIR_CLASS_SUBGROUP:
      emit_subgroup(c, in);
      break;
    case POOT_KIR_CLASS_BARRIER:
      emit_barrier(c);
      break;
    case POOT_KIR_CLASS_CHECK:
      emit_check(c, in);
      break;
    case POOT_KIR_CLASS_IF:
      emit_if(c, in);
      break;
    case POOT_KIR_CLASS_FOR:
      emit_for(c, in);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "operation not known to the AMDGPU renderer");
  }
}

static void emit_block(amd_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in && !c->err; in = in->next) emit_inst(c, in);
}

/* The fault block: fills the record (render_ptx_amdgpu.h) and traps. */
static void emit_fault(amd_ctx *c) {
  declare(c, "declare void @llvm.trap()");
  declare(c, "declare void @llvm.amdgcn.s.sleep(i32)");
  declare(c, "declare i32 @llvm.amdgcn.workgroup.id.x()");
  declare(c, "declare i32 @llvm.amdgcn.workgroup.id.y()");
  declare(c, "declare i32 @llvm.amdgcn.workgroup.id.z()");
  EMIT("\nfault:                 ; a check failed: record (kernel, trap code), then trap\n");
  EMIT("  %%code = phi i32 ");
  for (size_t i = 0; i < c->faults.len; i++) {
    fault_edge *e = poot_vec_at(&c->faults, i);
    EMIT("%s[ %" PRIu32 ", %%ck%" PRIu32 ".fail ]", i ? ", " : "", e->code, e->label);
  }
  EMIT("\n  %%bit = shl i32 1, %%code\n");
  EMIT("  %%err = atomicrmw or ptr addrspace(1) %%fault_record, i32 %%bit monotonic, align 4\n");
  EMIT("  %%st = getelementptr inbounds i32, ptr addrspace(1) %%fault_record, i64 1\n");
  EMIT("  %%claim = cmpxchg ptr addrspace(1) %%st, i32 0, i32 1 monotonic monotonic, align 4\n");
  EMIT("  %%won = extractvalue { i32, i1 } %%claim, 1\n");
  EMIT("  br i1 %%won, label %%fault.own, label %%fault.wait\n");
  EMIT("fault.own:\n");
  const char *words[7] = {"%code", NULL, NULL, "%wgx", "%wgy", "%wgz", "%lid"};
  words[1] = fmt(c, "%" PRId32, (int32_t)(uint32_t)c->k->hash);
  words[2] = fmt(c, "%" PRId32, (int32_t)(uint32_t)(c->k->hash >> 32));
  EMIT("  %%wgx = call i32 @llvm.amdgcn.workgroup.id.x()\n");
  EMIT("  %%wgy = call i32 @llvm.amdgcn.workgroup.id.y()\n");
  EMIT("  %%wgz = call i32 @llvm.amdgcn.workgroup.id.z()\n");
  const char *li = local_index(c);
  words[6] = li;
  for (int w = 0; w < 7; w++) {
    EMIT("  %%fw%d = getelementptr inbounds i32, ptr addrspace(1) %%fault_record, i64 %d\n", w,
         w + 2);
    EMIT("  store atomic i32 %s, ptr addrspace(1) %%fw%d monotonic, align 4\n", words[w], w);
  }
  EMIT("  fence seq_cst\n");
  EMIT("  store atomic i32 %u, ptr addrspace(1) %%st release, align 4\n",
       POOT__KIR_FAULT_STATE_COMPLETE);
  EMIT("  fence seq_cst\n");
  EMIT("  call void @llvm.trap()\n  unreachable\n");
  EMIT("fault.wait:            ; another thread owns the record: let it finish first\n");
  EMIT("  %%n = phi i32 [ %u, %%fault ], [ %%n1, %%fault.wait ]\n", POOT__KIR_FAULT_SPIN_LIMIT);
  EMIT("  call void @llvm.amdgcn.s.sleep(i32 1)\n");
  EMIT("  %%s = load atomic i32, ptr addrspace(1) %%st acquire, align 4\n");
  EMIT("  %%done = icmp eq i32 %%s, %u\n", POOT__KIR_FAULT_STATE_COMPLETE);
  EMIT("  %%n1 = sub i32 %%n, 1\n");
  EMIT("  %%out = icmp eq i32 %%n1, 0\n");
  EMIT("  %%stop = or i1 %%done, %%out\n");
  EMIT("  br i1 %%stop, label %%fault.trap, label %%fault.wait\n");
  EMIT("fault.trap:\n  call void @llvm.trap()\n  unreachable\n");
}

static bool uses_subgroups(const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    if (in->op >= POOT_KIR_OP_SG_REDUCE_ADD && in->op <= POOT_KIR_OP_SG_BROADCAST) return true;
    if (uses_subgroups(&in->body) || uses_subgroups(&in->else_body)) return true;
  }
  return false;
}

static const char *const amdgpu_datalayout =
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:"
    "128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-"
    "v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";

poot_status poot_kir_render_amdgpu(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                   poot_strbuf *out) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_kir_render_amdgpu: NULL argument");
  if (target->lang != POOT_KIR_LANG_AMDGPU || !target->amdgpu_arch)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "poot_kir_render_amdgpu: target '%s' is not an AMDGPU target",
                            target->name ? target->name : "?");
  POOT_TRY(poot_kir_verify(kernel, target));

  amd_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  amd_ctx *c = &ctx;
  c->k = kernel;
  c->t = target;
  c->sg = target->subgroup_size ? target->subgroup_size : 64u;
  poot_arena_init(&c->names, 0);
  poot_vec_init(&c->faults, sizeof(fault_edge));
  poot_strbuf body, helpers;
  poot_strbuf_init(&body);
  poot_strbuf_init(&helpers);
  poot_status st = NULL;
  uint32_t threads = poot_kir_kernel_threads(kernel);
  bool sgops = uses_subgroups(&kernel->body);
  if (sgops && threads % c->sg != 0) {
    st = poot_status_make(POOT_UNSUPPORTED,
                          "AMDGPU renderer: kernel '%s' uses subgroup operations with %" PRIu32
                          " threads per workgroup; it needs whole waves of %" PRIu32,
                          kernel->name, threads, c->sg);
    goto done;
  }
  c->vname = poot_calloc((size_t)kernel->value_count + 1, sizeof *c->vname);
  if (!c->vname) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    goto done;
  }
  c->privbase = poot_calloc((size_t)kernel->private_count + 1, sizeof *c->privbase);
  for (uint32_t i = 0; c->privbase && i < kernel->private_count; i++) {
    c->privbase[i] = c->priv_total;
    c->priv_total += kernel->privates[i].count;
  }
  c->pv = poot_calloc((size_t)c->priv_total + 1, sizeof *c->pv);
  if (!c->privbase || !c->pv) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < kernel->private_count; i++)
    for (uint32_t e = 0; e < kernel->privates[i].count; e++)
      c->pv[c->privbase[i] + e] = zero_of(kernel->privates[i].type); /* zero at entry */
  c->o = &body;
  set_label(c, "entry");
  if (sgops) {
    declare(c, "declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)");
    const char *lo = tmp(c);
    EMIT("  %s = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)\n", lo);
    c->lane_id = lo;
    if (c->sg == 64) {
      declare(c, "declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)");
      const char *hi = tmp(c);
      EMIT("  %s = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %s)\n", hi, lo);
      c->lane_id = hi;
    }
  }
  emit_block(c, &kernel->body);
  EMIT("  ret void\n");
  if (!c->err && c->faults.len) emit_fault(c);
  c->o = &helpers;
  if (!c->err) emit_helpers(c);
  if (c->err) {
    st = c->err;
    c->err = NULL;
    goto done;
  }
  st = poot_strbuf_status(&body);
  if (!st) st = poot_strbuf_status(&helpers);
  if (st) goto done;

  /* Module header, kernel signature, then body, helpers and declarations. */
  poot_strbuf_printf(out,
                     "; Generated by poot from KIR kernel '%s' (hash %016" PRIx64
                     ") for %s\n"
                     "target datalayout = \"%s\"\ntarget triple = \"amdgcn-amd-amdhsa\"\n\n",
                     kernel->name, kernel->hash, target->name ? target->name : target->amdgpu_arch,
                     amdgpu_datalayout);
  for (uint32_t i = 0; i < kernel->shared_count; i++) {
    const poot_kir_shared *s = &kernel->shared[i];
    poot_strbuf_printf(out,
                       "@%s.s%" PRIu32 " = internal addrspace(3) global [%" PRIu32
                       " x %s] poison, align 16 ; shared '%s'\n",
                       kernel->name, i, s->count, sty(s->elem), s->name);
  }
  if (kernel->shared_count) poot_strbuf_puts(out, "\n");
  poot_strbuf_printf(out, "define amdgpu_kernel void @%s(", kernel->name);
  uint32_t np = 0;
  for (uint32_t i = 0; i < kernel->binding_count; i++, np++) {
    const poot_kir_binding *b = &kernel->bindings[i];
    poot_strbuf_printf(out, "%sptr addrspace(1) %salign %" PRIu32 " %%b%" PRIu32, np ? ", " : "",
                       b->access == POOT_KIR_ACCESS_READ ? "readonly " : "",
                       b->align ? b->align : 16u, i);
  }
  for (uint32_t i = 0; i < kernel->param_count; i++) {
    const poot_kir_param *p = &kernel->params[i];
    if (p->kind != POOT_KIR_PARAM_PUSH) continue;
    poot_strbuf_printf(out, "%s%s %%a%" PRIu32, np ? ", " : "", sty(p->type), i);
    np++;
  }
  if (kernel->has_checks) {
    poot_strbuf_printf(out, "%sptr addrspace(1) align 16 %%fault_record", np ? ", " : "");
    np++;
  }
  poot_strbuf_printf(out, ") #0 !reqd_work_group_size !0 {\n");
  poot_strbuf_append(out, body.data, body.len);
  poot_strbuf_puts(out, "}\n");
  poot_strbuf_append(out, helpers.data, helpers.len);
  poot_strbuf_puts(out, "\n");
  for (uint32_t i = 0; i < c->decl_count; i++) poot_strbuf_printf(out, "%s\n", c->decls[i]);
  const uint32_t *ws = kernel->workgroup_size;
  poot_strbuf_printf(out,
                     "\nattributes #0 = { nounwind \"amdgpu-flat-work-group-size\"=\"%" PRIu32
                     ",%" PRIu32
                     "\" \"uniform-work-group-size\"=\"true\" \"target-cpu\"=\"%s\"%s }\n"
                     "attributes #1 = { alwaysinline nounwind memory(none) }\n\n",
                     threads, threads, target->amdgpu_arch,
                     c->sg == 64 && strncmp(target->amdgpu_arch, "gfx1", 4) == 0
                         ? " \"target-features\"=\"+wavefrontsize64\""
                     : c->sg == 32 ? " \"target-features\"=\"+wavefrontsize32\""
                                   : "");
  poot_strbuf_printf(out,
                     "!llvm.module.flags = !{!3}\n"
                     "!0 = !{i32 %" PRIu32 ", i32 %" PRIu32 ", i32 %" PRIu32
                     "}\n"
                     "!1 = !{}\n"
                     "!2 = !{!\"branch_weights\", i32 1048575, i32 1}\n"
                     "!3 = !{i32 1, !\"amdhsa_code_object_version\", i32 500}\n",
                     ws[0] ? ws[0] : 1u, ws[1] ? ws[1] : 1u, ws[2] ? ws[2] : 1u);
  st = poot_strbuf_status(out);

done:
  poot_status_free(c->err);
  poot_free(c->vname);
  poot_free(c->pv);
  poot_free(c->privbase);
  poot_vec_deinit(&c->faults);
  poot_strbuf_deinit(&body);
  poot_strbuf_deinit(&helpers);
  poot_arena_deinit(&c->names);
  return st;
}
