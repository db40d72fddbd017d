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

#include "poot/kir.h"
#include "render_amdgpu_math.h"
#include "render_ptx_amdgpu.h"
#include "render_regs.h"

typedef struct fault_edge {
  uint32_t code;
  uint32_t label; /* the ck<label>.fail block */
} fault_edge;

/* One register class (render_regs.h): the SSA temporaries %t0, %t1, …; LLVM
 * allocates the machine registers. */
static const char *const tmp_prefix[1] = {"%t"};
static const poot__kir_reg_classes amd_classes = {.count = 1, .prefix = tmp_prefix};

typedef struct amd_ctx {
  /* Values by operand text (r.value_name), temporaries, operand text, the
   * first error; private arrays in SSA form: pv[r.priv_first[i] + e] is the
   * current LLVM value of element e of array i. */
  poot__kir_regs r;
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  poot_strbuf *o;
  uint32_t label;
  uint32_t sg;
  poot__amdgpu_decls decls;
  poot__amdgpu_uses uses; /* the helper functions the kernel calls */
  poot_vec faults;        /* fault_edge */
  const char *lane_id;    /* the wave lane (mbcnt), computed at entry */
  const char **pv;
  const char *cur_label; /* the basic block the emitter is in */
} amd_ctx;

#define EMIT(...) poot_strbuf_printf(c->o, __VA_ARGS__)

static void fail(amd_ctx *c, poot_status_code code, const poot_kir_inst *in, const char *why) {
  poot__kir_regs_fail(&c->r, code, in, why);
}

static const char *tmp(amd_ctx *c) {
  return poot__kir_regs_temp(&c->r, 0);
}

static void declare(amd_ctx *c, const char *decl) {
  poot__amdgpu_declare(&c->decls, decl);
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
  return poot__kir_regs_fmt(&c->r, "<%u x %s>", (unsigned)t.lanes, sty((poot_kir_scalar)t.scalar));
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

static const char *f32c(amd_ctx *c, uint32_t bits) {
  return poot__amdgpu_f32(&c->r, bits);
}

static poot_kir_type vtype(const amd_ctx *c, poot_kir_value v) {
  return c->k->values[v].type;
}

/* Lane l of value v as a scalar operand. */
static const char *lane(amd_ctx *c, poot_kir_value v, uint32_t l) {
  poot_kir_type t = vtype(c, v);
  if (lanes_of(t) == 1) return c->r.value_name[v];
  const char *r = tmp(c);
  EMIT("  %s = extractelement %s %s, i32 %" PRIu32 "\n", r, vty(c, t), c->r.value_name[v], l);
  return r;
}

/* Binds the result of `in` from per-lane scalar operands. */
static void set_lanes(amd_ctx *c, poot_kir_value v, const char *const *names) {
  poot_kir_type t = vtype(c, v);
  uint32_t n = lanes_of(t);
  if (n == 1) {
    c->r.value_name[v] = names[0];
    return;
  }
  const char *acc = "poison";
  for (uint32_t l = 0; l < n; l++) {
    const char *r = tmp(c);
    EMIT("  %s = insertelement %s %s, %s %s, i32 %" PRIu32 "\n", r, vty(c, t), acc,
         sty((poot_kir_scalar)t.scalar), names[l], l);
    acc = r;
  }
  c->r.value_name[v] = acc;
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
      c->uses.sincos = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.sin(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_COS:
      c->uses.sincos = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.cos(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_TANH:
      c->uses.tanh = true;
      r = tmp(c);
      EMIT("  %s = call float @poot.tanh(float %s)\n", r, a);
      return r;
    case POOT_KIR_OP_ERF:
      c->uses.erf = true;
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
      return poot__kir_regs_fmt(&c->r, "0xH%04" PRIX32, (uint32_t)(b & 0xFFFF));
    case POOT_KIR_BF16:
      return poot__kir_regs_fmt(&c->r, "0xR%04" PRIX32, (uint32_t)(b & 0xFFFF));
    case POOT_KIR_I8:
    case POOT_KIR_U8:
      return poot__kir_regs_fmt(&c->r, "%d", (int)(int8_t)(uint8_t)b);
    case POOT_KIR_I16:
    case POOT_KIR_U16:
      return poot__kir_regs_fmt(&c->r, "%d", (int)(int16_t)(uint16_t)b);
    case POOT_KIR_I64:
      return poot__kir_regs_fmt(&c->r, "%" PRId64, (int64_t)b);
    default:
      return poot__kir_regs_fmt(&c->r, "%" PRId32, (int32_t)(uint32_t)b);
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
      r = poot__kir_regs_fmt(&c->r, "%" PRIu32, wsd);
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
      r = poot__kir_regs_fmt(&c->r, "%" PRIu32, c->sg);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
      r = "0";
  }
  c->r.value_name[in->result] = r;
}

/* Pointer to element `index` (addrspace 1 or 3). */
static const char *address(amd_ctx *c, poot_kir_space space, uint32_t ref, poot_kir_value index) {
  poot_kir_scalar elem = poot__kir_space_elem(c->k, space, ref);
  bool sidx = (poot_kir_scalar)vtype(c, index).scalar == POOT_KIR_I32;
  const char *p = tmp(c);
  if (space == POOT_KIR_SPACE_GLOBAL) {
    const char *w = tmp(c);
    EMIT("  %s = %s i32 %s to i64\n", w, sidx ? "sext" : "zext", c->r.value_name[index]);
    EMIT("  %s = getelementptr inbounds %s, ptr addrspace(1) %%b%" PRIu32 ", i64 %s\n", p,
         sty(elem), ref, w);
  } else {
    EMIT("  %s = getelementptr inbounds %s, ptr addrspace(3) @%s.s%" PRIu32 ", i32 %s\n", p,
         sty(elem), c->k->name, ref, c->r.value_name[index]);
  }
  return p;
}

static uint32_t access_align(amd_ctx *c, poot_kir_space space, uint32_t ref, uint32_t lanes) {
  poot_kir_scalar elem = poot__kir_space_elem(c->k, space, ref);
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
    EMIT("  store %s %s, ptr addrspace(%s) %s, align %" PRIu32 "\n", vty(c, t), c->r.value_name[v],
         as, p, al);
  } else {
    const char *r = tmp(c);
    EMIT("  %s = load %s, ptr addrspace(%s) %s, align %" PRIu32 "\n", r, vty(c, t), as, p, al);
    c->r.value_name[v] = r;
  }
}

static void emit_atomic(amd_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar elem = poot__kir_space_elem(c->k, in->space, in->ref);
  const char *p = address(c, in->space, in->ref, in->args[0]);
  const char *as = in->space == POOT_KIR_SPACE_GLOBAL ? "1" : "3";
  const char *scope = in->space == POOT_KIR_SPACE_GLOBAL ? "agent" : "workgroup";
  const char *ty = sty(elem);
  bool f = elem == POOT_KIR_F32;
  const char *r = tmp(c);
  if (in->op == POOT_KIR_OP_ATOMIC_CAS) {
    const char *cmp = c->r.value_name[in->args[1]], *nv = c->r.value_name[in->args[2]];
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
    c->r.value_name[in->result] = r;
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
       op, as, p, ty, c->r.value_name[in->args[1]], scope);
  c->r.value_name[in->result] = r;
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
  bool cmp = poot__kir_op_class(in->op) == POOT_KIR_CLASS_COMPARE;
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
          c->uses.pow = true;
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
        declare(c, poot__kir_regs_fmt(&c->r, "declare %s @llvm.%s.%s(%s, %s)", ty, fn, ty, ty, ty));
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

/* DOT4_I8: llvm.amdgcn.sdot4 (v_dot4_i32_i8) where the target has it
 * (dot4_native), else the four signed byte products by shifts (exact). */
static void emit_dot4(amd_ctx *c, const poot_kir_inst *in) {
  const char *a = lane(c, in->args[0], 0), *b = lane(c, in->args[1], 0);
  const char *sum = lane(c, in->args[2], 0);
  if (c->t->dot4_native) {
    const char *r = tmp(c);
    declare(c, "declare i32 @llvm.amdgcn.sdot4(i32, i32, i32, i1 immarg)");
    EMIT("  %s = call i32 @llvm.amdgcn.sdot4(i32 %s, i32 %s, i32 %s, i1 false)\n", r, a, b, sum);
    c->r.value_name[in->result] = r;
    return;
  }
  for (uint32_t i = 0; i < 4; i++) {
    const char *xs[2] = {a, b}, *ys[2];
    for (uint32_t j = 0; j < 2; j++) {
      const char *t = xs[j];
      if (i < 3) {
        t = tmp(c);
        EMIT("  %s = shl i32 %s, %u\n", t, xs[j], 24 - 8 * i);
      }
      ys[j] = tmp(c);
      EMIT("  %s = ashr i32 %s, 24\n", ys[j], t);
    }
    const char *p = tmp(c), *r = tmp(c);
    EMIT("  %s = mul i32 %s, %s\n", p, ys[0], ys[1]);
    EMIT("  %s = add i32 %s, %s\n", r, sum, p);
    sum = r;
  }
  c->r.value_name[in->result] = sum;
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
      declare(c, poot__kir_regs_fmt(&c->r, "declare %s @llvm.%s.sat.%s.f32(float)", sty(to), fn,
                                    sty(to)));
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
        res[l] = c->r.value_name[in->args[0]];
        break;
      case POOT_KIR_OP_VEC:
        res[l] = c->r.value_name[in->args[l]];
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
  uint32_t slot = c->r.priv_first[in->ref] + (uint32_t)in->imm;
  if (store)
    c->pv[slot] = c->r.value_name[in->args[0]];
  else
    c->r.value_name[in->result] = c->pv[slot];
}

static const char *priv_type(amd_ctx *c, uint32_t slot) {
  uint32_t i = 0;
  while (i + 1 < c->k->private_count && c->r.priv_first[i + 1] <= slot) i++;
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
  if (!c->r.priv_total) return NULL;
  const char **s =
      poot_arena_alloc(&c->r.names, c->r.priv_total * sizeof *s, _Alignof(const char *));
  if (!s) {
    poot__kir_regs_oom(&c->r);
    return NULL;
  }
  memcpy(s, c->pv, c->r.priv_total * sizeof *s);
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
  const char *v = c->r.value_name[in->args[0]];
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
          declare(c, poot__kir_regs_fmt(&c->r, "declare %s @llvm.%s(%s, %s)", ty, fn, ty, ty));
          EMIT("  %s = call %s @llvm.%s(%s %s, %s %s)\n", r, ty, fn, ty, acc, ty, ov);
        }
        acc = r;
      }
      c->r.value_name[in->result] = acc;
      return;
    }
    case POOT_KIR_OP_SG_SHUFFLE:
      out_bits = bpermute(c, c->r.value_name[in->args[1]], bits);
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
  c->r.value_name[in->result] = out_bits;
}

static void emit_param(amd_ctx *c, const poot_kir_inst *in) {
  const poot_kir_param *p = &c->k->params[in->ref];
  if (p->kind == POOT_KIR_PARAM_PUSH) {
    c->r.value_name[in->result] = poot__kir_regs_fmt(&c->r, "%%a%" PRIu32, in->ref);
    return;
  }
  const char *q = tmp(c), *r = tmp(c);
  EMIT("  %s = getelementptr inbounds %s, ptr addrspace(1) %%b%" PRIu32 ", i64 %" PRIu32 "\n", q,
       sty(p->type), p->slot_ref, p->slot_index);
  EMIT("  %s = load %s, ptr addrspace(1) %s, align 4\n", r, sty(p->type), q);
  c->r.value_name[in->result] = r;
}

static void emit_bitcast(amd_ctx *c, const poot_kir_inst *in) {
  const char *r = tmp(c);
  EMIT("  %s = bitcast %s %s to %s\n", r, vty(c, vtype(c, in->args[0])),
       c->r.value_name[in->args[0]], vty(c, in->type));
  c->r.value_name[in->result] = r;
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
  if (st && !c->r.err)
    c->r.err = st;
  else
    poot_status_free(st);
  EMIT("  br i1 %s, label %%ck%" PRIu32 ".ok, label %%ck%" PRIu32 ".fail, !prof !2\n",
       c->r.value_name[in->args[0]], n, n);
  EMIT("ck%" PRIu32 ".fail:\n  br label %%fault\n", n);
  set_label(c, poot__kir_regs_fmt(&c->r, "ck%" PRIu32 ".ok", n));
}

static void emit_if(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  bool has_else = in->else_body.first != NULL;
  const char *from = c->cur_label;
  const char **before = priv_save(c);
  EMIT("  br i1 %s, label %%if%" PRIu32 ".then, label %%if%" PRIu32 ".%s\n",
       c->r.value_name[in->args[0]], n, n, has_else ? "else" : "end");
  set_label(c, poot__kir_regs_fmt(&c->r, "if%" PRIu32 ".then", n));
  emit_block(c, &in->body);
  EMIT("  br label %%if%" PRIu32 ".end\n", n);
  const char *then_end = c->cur_label;
  const char **after_then = priv_save(c);
  const char *else_end = from;
  if (has_else) {
    if (before) memcpy(c->pv, before, c->r.priv_total * sizeof *c->pv);
    set_label(c, poot__kir_regs_fmt(&c->r, "if%" PRIu32 ".else", n));
    emit_block(c, &in->else_body);
    EMIT("  br label %%if%" PRIu32 ".end\n", n);
    else_end = c->cur_label;
  }
  const char **after_else = has_else ? priv_save(c) : before;
  set_label(c, poot__kir_regs_fmt(&c->r, "if%" PRIu32 ".end", n));
  for (uint32_t e = 0; e < c->r.priv_total && after_then && after_else; e++) {
    if (after_then[e] == after_else[e]) {
      c->pv[e] = after_then[e];
      continue;
    }
    const char *r = poot__kir_regs_fmt(&c->r, "%%if%" PRIu32 ".p%" PRIu32, n, e);
    EMIT("  %s = phi %s [ %s, %%%s ], [ %s, %%%s ]\n", r, priv_type(c, e), after_then[e], then_end,
         after_else[e], else_end);
    c->pv[e] = r;
  }
}

static void emit_for(amd_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  bool sg = (poot_kir_scalar)vtype(c, in->args[0]).scalar == POOT_KIR_I32;
  const char *i = poot__kir_regs_fmt(&c->r, "%%for%" PRIu32 ".i", n);
  const char *pre = poot__kir_regs_fmt(&c->r, "for%" PRIu32 ".pre", n);
  c->r.value_name[in->result] = i;
  EMIT("  br label %%%s\n", pre);
  set_label(c, pre);
  EMIT("  br label %%for%" PRIu32 ".head\n", n);
  /* The header's phis need the values at the end of the body, so the
   * body is emitted first, into a buffer of its own, with every private
   * element named by its header phi. */
  const char **entry_vals = priv_save(c);
  for (uint32_t e = 0; e < c->r.priv_total; e++)
    c->pv[e] = poot__kir_regs_fmt(&c->r, "%%for%" PRIu32 ".p%" PRIu32, n, e);
  poot_strbuf body;
  poot_strbuf_init(&body);
  poot_strbuf *outer = c->o;
  c->o = &body;
  set_label(c, poot__kir_regs_fmt(&c->r, "for%" PRIu32 ".body", n));
  emit_block(c, &in->body);
  EMIT("  br label %%for%" PRIu32 ".latch\n", n);
  set_label(c, poot__kir_regs_fmt(&c->r, "for%" PRIu32 ".latch", n));
  EMIT("  %%for%" PRIu32 ".next = add i32 %s, %s\n", n, i, c->r.value_name[in->args[2]]);
  EMIT("  br label %%for%" PRIu32 ".head\n", n);
  const char **latch_vals = priv_save(c);
  c->o = outer;
  EMIT("for%" PRIu32 ".head:\n", n);
  EMIT("  %s = phi i32 [ %s, %%%s ], [ %%for%" PRIu32 ".next, %%for%" PRIu32 ".latch ]\n", i,
       c->r.value_name[in->args[0]], pre, n, n);
  for (uint32_t e = 0; e < c->r.priv_total && entry_vals && latch_vals; e++)
    EMIT("  %%for%" PRIu32 ".p%" PRIu32 " = phi %s [ %s, %%%s ], [ %s, %%for%" PRIu32 ".latch ]\n",
         n, e, priv_type(c, e), entry_vals[e], pre, latch_vals[e], n);
  EMIT("  %%for%" PRIu32 ".c = icmp %s i32 %s, %s\n", n, sg ? "slt" : "ult", i,
       c->r.value_name[in->args[1]]);
  EMIT("  br i1 %%for%" PRIu32 ".c, label %%for%" PRIu32 ".body, label %%for%" PRIu32 ".end\n", n,
       n, n);
  poot_strbuf_append(c->o, body.data, body.len);
  if (body.failed) poot__kir_regs_oom(&c->r);
  poot_strbuf_deinit(&body);
  /* After the loop (exited from the header) the elements are the phis. */
  for (uint32_t e = 0; e < c->r.priv_total; e++)
    c->pv[e] = poot__kir_regs_fmt(&c->r, "%%for%" PRIu32 ".p%" PRIu32, n, e);
  set_label(c, poot__kir_regs_fmt(&c->r, "for%" PRIu32 ".end", n));
}

static void emit_inst(amd_ctx *c, const poot_kir_inst *in) {
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_CONST:
      c->r.value_name[in->result] = const_text(c, (poot_kir_scalar)in->type.scalar, in->imm);
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
    case POOT_KIR_CLASS_DOT4:
      emit_dot4(c, in);
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
  for (const poot_kir_inst *in = b->first; in && !c->r.err; in = in->next) emit_inst(c, in);
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
  words[1] = poot__kir_regs_fmt(&c->r, "%" PRId32, (int32_t)(uint32_t)c->k->hash);
  words[2] = poot__kir_regs_fmt(&c->r, "%" PRId32, (int32_t)(uint32_t)(c->k->hash >> 32));
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

static const char *const amdgpu_datalayout =
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:"
    "128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-"
    "v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";

/* The entry block: private elements at zero, the wave lane where subgroup
 * operations need it. */
static void emit_prologue(amd_ctx *c, bool sgops) {
  const poot_kir_kernel *kernel = c->k;
  for (uint32_t i = 0; i < kernel->private_count; i++)
    for (uint32_t e = 0; e < kernel->privates[i].count; e++)
      c->pv[c->r.priv_first[i] + e] = zero_of(kernel->privates[i].type); /* zero at entry */
  set_label(c, "entry");
  if (!sgops) return;
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

/* Module header, shared arrays and the kernel's signature. */
static void print_signature(const amd_ctx *c, poot_strbuf *out) {
  const poot_kir_kernel *kernel = c->k;
  const poot_kir_target *target = c->t;
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
}

/* The module: signature, body, helpers, declarations, attributes, metadata. */
static void print_module(const amd_ctx *c, const poot_strbuf *body, const poot_strbuf *helpers,
                         poot_strbuf *out) {
  const poot_kir_kernel *kernel = c->k;
  const poot_kir_target *target = c->t;
  uint32_t threads = poot_kir_kernel_threads(kernel);
  print_signature(c, out);
  poot_strbuf_append(out, body->data, body->len);
  poot_strbuf_puts(out, "}\n");
  poot_strbuf_append(out, helpers->data, helpers->len);
  poot_strbuf_puts(out, "\n");
  for (uint32_t i = 0; i < c->decls.count; i++) poot_strbuf_printf(out, "%s\n", c->decls.text[i]);
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
}

poot_status poot_kir_render_amdgpu(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                   poot_strbuf *out) {
  POOT_TRY(poot__kir_render_args(kernel, target, out, POOT_KIR_LANG_AMDGPU,
                                 "poot_kir_render_amdgpu", "an AMDGPU"));
  amd_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  amd_ctx *c = &ctx;
  c->k = kernel;
  c->t = target;
  c->sg = target->subgroup_size ? target->subgroup_size : 64u;
  poot_vec_init(&c->faults, sizeof(fault_edge));
  poot_strbuf body, helpers;
  poot_strbuf_init(&body);
  poot_strbuf_init(&helpers);
  poot_status st = poot__kir_regs_init(&c->r, kernel, "AMDGPU renderer", &amd_classes, true);
  if (st) goto done;
  uint32_t threads = poot_kir_kernel_threads(kernel);
  bool sgops = poot__kir_block_uses_subgroups(&kernel->body);
  if (sgops && threads % c->sg != 0) {
    st = poot_status_make(POOT_UNSUPPORTED,
                          "AMDGPU renderer: kernel '%s' uses subgroup operations with %" PRIu32
                          " threads per workgroup; it needs whole waves of %" PRIu32,
                          kernel->name, threads, c->sg);
    goto done;
  }
  poot__kir_regs_private_slots(&c->r);
  c->pv = poot_calloc((size_t)c->r.priv_total + 1, sizeof *c->pv);
  if (!c->pv) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "AMDGPU renderer: out of memory");
    goto done;
  }
  c->o = &body;
  emit_prologue(c, sgops);
  emit_block(c, &kernel->body);
  EMIT("  ret void\n");
  if (!c->r.err && c->faults.len) emit_fault(c);
  c->o = &helpers;
  if (!c->r.err) poot__amdgpu_helpers(&c->r, c->o, &c->decls, &c->uses);
  if (c->r.err) {
    st = c->r.err;
    c->r.err = NULL;
    goto done;
  }
  st = poot_strbuf_status(&body);
  if (!st) st = poot_strbuf_status(&helpers);
  if (st) goto done;
  print_module(c, &body, &helpers, out);
  st = poot_strbuf_status(out);

done:
  poot_free(c->pv);
  poot_vec_deinit(&c->faults);
  poot__kir_regs_deinit(&c->r);
  poot_strbuf_deinit(&body);
  poot_strbuf_deinit(&helpers);
  return st;
}
