/* render_ptx.c — KIR to PTX text for sm_80 and sm_90 (DESIGN §5).
 *
 * A pure function of (kernel, target): the output depends on nothing else,
 * so the same inputs give byte-identical text (the kernel cache keys on it).
 *
 * Mapping (docs/kir-ptx-amdgpu.md has the full table):
 *  - every KIR value gets fresh virtual registers, one per lane, of a class
 *    chosen by its scalar type: bool .pred, f16/bf16 .b16, f32 .f32, i64 .b64
 *    and every other integer .b32 (8- and 16-bit integers are kept sign- or
 *    zero-extended to 32 bits, re-normalised after each wrapping operation);
 *  - private arrays (indexed by constants only) are registers too;
 *  - f16 arithmetic and math run in f32 and round back with cvt.rn, as KIR
 *    defines it; add/sub/mul carry an explicit .rn so that ptxas never fuses
 *    them into an fma (the interpreter rounds each one);
 *  - a failed check jumps to one fault handler per kernel that fills the
 *    fault record (render_ptx_amdgpu.h) and executes `trap`. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "poot/kir.h"
#include "render_ptx_amdgpu.h"
#include "render_ptx_math.h"
#include "render_regs.h"

/* ------------------------------------------------------------ registers */

/* The register classes (render_regs.h): bool .pred, f16/bf16 .b16, f32 .f32,
 * i64 .b64 and every other integer .b32. */
typedef enum rclass { RC_PRED = 0, RC_B16, RC_B32, RC_F32, RC_B64, RC_COUNT } rclass;

static const char *const rc_prefix[RC_COUNT] = {"%p", "%h", "%r", "%f", "%rd"};
static const char *const rc_decl[RC_COUNT] = {".pred", ".b16", ".b32", ".f32", ".b64"};

static const poot__kir_reg_classes ptx_classes = {
    .count = RC_COUNT,
    .prefix = rc_prefix,
    .of_scalar =
        {
            [POOT_KIR_BOOL] = RC_PRED,
            [POOT_KIR_I8] = RC_B32,
            [POOT_KIR_U8] = RC_B32,
            [POOT_KIR_I16] = RC_B32,
            [POOT_KIR_U16] = RC_B32,
            [POOT_KIR_I32] = RC_B32,
            [POOT_KIR_U32] = RC_B32,
            [POOT_KIR_I64] = RC_B64,
            [POOT_KIR_F16] = RC_B16,
            [POOT_KIR_BF16] = RC_B16,
            [POOT_KIR_F32] = RC_F32,
        },
};

static rclass class_of(poot_kir_scalar s) {
  return (rclass)ptx_classes.of_scalar[s];
}

typedef struct ptx_ctx {
  poot__kir_regs r; /* values, registers, operand text, the first error */
  const poot_kir_kernel *k;
  bool wait_pending; /* griddepcontrol.wait not yet issued on this path */
  const poot_kir_target *t;
  poot_strbuf *o;    /* the body, emitted before the declarations are known */
  uint32_t *basereg; /* b64 register with each binding's global address */
  uint32_t label;
  uint32_t fault_code_reg; /* b32 register holding the failed trap code */
  bool fault_used;
  uint32_t sg; /* subgroup size */
  /* Bytes of the dynamic shared window (poot_kir_ptx_dynamic_shared_bytes);
   * 0: each shared array is its own static .shared variable. */
  uint64_t dyn_shared;
} ptx_ctx;

static uint32_t new_reg(ptx_ctx *c, rclass rc, uint32_t count) {
  return poot__kir_regs_new(&c->r, rc, count);
}

static const char *rname(ptx_ctx *c, rclass rc, uint32_t n) {
  return poot__kir_regs_name(&c->r, rc, n);
}

static poot_kir_type vtype(const ptx_ctx *c, poot_kir_value v) {
  return c->k->values[v].type;
}

/* The register of lane `lane` of value v. */
static const char *vr(ptx_ctx *c, poot_kir_value v, uint32_t lane) {
  return poot__kir_regs_lane(&c->r, v, lane);
}

static void fail(ptx_ctx *c, poot_status_code code, const poot_kir_inst *in, const char *why) {
  poot__kir_regs_fail(&c->r, code, in, why);
}

#define EMIT(...) poot_strbuf_printf(c->o, __VA_ARGS__)

/* --------------------------------------------------------- type helpers */

static bool is_float(poot_kir_scalar s) {
  return poot_kir_scalar_is_float(s);
}
static bool is_signed_int(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_I16 || s == POOT_KIR_I32 || s == POOT_KIR_I64;
}
static bool is_small_int(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_U8 || s == POOT_KIR_I16 || s == POOT_KIR_U16;
}

/* The integer operation type: s32/u32/s64/u64 (8/16-bit use the 32-bit ops). */
static const char *itype(poot_kir_scalar s) {
  if (s == POOT_KIR_I64) return "s64";
  return is_signed_int(s) ? "s32" : "u32";
}
static const char *btype(poot_kir_scalar s) {
  switch (class_of(s)) {
    case RC_PRED:
      return "pred";
    case RC_B16:
      return "b16";
    case RC_B64:
      return "b64";
    default:
      return "b32";
  }
}
/* The memory type of a scalar for ld/st/atom. */
static const char *mtype(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
      return "s8";
    case POOT_KIR_U8:
      return "u8";
    case POOT_KIR_I16:
      return "s16";
    case POOT_KIR_U16:
      return "u16";
    case POOT_KIR_I32:
      return "s32";
    case POOT_KIR_U32:
      return "u32";
    case POOT_KIR_I64:
      return "u64";
    case POOT_KIR_F16:
    case POOT_KIR_BF16:
      return "b16";
    case POOT_KIR_F32:
      return "f32";
    default:
      return "b32";
  }
}
static const char *mov_type(rclass rc) {
  switch (rc) {
    case RC_PRED:
      return "pred";
    case RC_B16:
      return "b16";
    case RC_F32:
      return "f32";
    case RC_B64:
      return "b64";
    default:
      return "b32";
  }
}

/* Re-normalises an 8/16-bit integer held in a 32-bit register. */
static void normalize(ptx_ctx *c, const char *r, poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
      EMIT("\tbfe.s32 \t%s, %s, 0, 8;\n", r, r);
      break;
    case POOT_KIR_I16:
      EMIT("\tbfe.s32 \t%s, %s, 0, 16;\n", r, r);
      break;
    case POOT_KIR_U8:
      EMIT("\tand.b32 \t%s, %s, 255;\n", r, r);
      break;
    case POOT_KIR_U16:
      EMIT("\tand.b32 \t%s, %s, 65535;\n", r, r);
      break;
    default:
      break;
  }
}

/* Fresh temporaries. */
static const char *ftmp(ptx_ctx *c) {
  return poot__kir_regs_temp(&c->r, RC_F32);
}
static const char *ptmp(ptx_ctx *c) {
  return poot__kir_regs_temp(&c->r, RC_PRED);
}
static const char *rtmp(ptx_ctx *c) {
  return poot__kir_regs_temp(&c->r, RC_B32);
}
static const char *dtmp(ptx_ctx *c) {
  return poot__kir_regs_temp(&c->r, RC_B64);
}

/* An f32 register holding lane `lane` of float value v (converting f16/bf16). */
static const char *fsrc(ptx_ctx *c, poot_kir_value v, uint32_t lane) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  if (s == POOT_KIR_F32) return vr(c, v, lane);
  const char *t = ftmp(c);
  EMIT("\tcvt.f32.%s \t%s, %s;\n", s == POOT_KIR_BF16 ? "bf16" : "f16", t, vr(c, v, lane));
  return t;
}

/* Where an f32 result for lane `lane` of `in` goes: the result register for
 * f32, else a temporary that fdst_end rounds into the f16/bf16 register. */
static const char *fdst(ptx_ctx *c, const poot_kir_inst *in, uint32_t lane) {
  if ((poot_kir_scalar)in->type.scalar == POOT_KIR_F32) return vr(c, in->result, lane);
  return ftmp(c);
}
static void fdst_end(ptx_ctx *c, const poot_kir_inst *in, uint32_t lane, const char *f) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  if (s == POOT_KIR_F32) return;
  EMIT("\tcvt.rn.%s.f32 \t%s, %s;\n", s == POOT_KIR_BF16 ? "bf16" : "f16", vr(c, in->result, lane),
       f);
}

/* ------------------------------------------------------- statements */

static void emit_block(ptx_ctx *c, const poot_kir_block *b);

static const char *const dim_name[3] = {"x", "y", "z"};

static void emit_const(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint64_t b = in->imm;
  for (uint32_t l = 0; l < (in->type.lanes ? in->type.lanes : 1u); l++) {
    const char *d = vr(c, in->result, l);
    switch (s) {
      case POOT_KIR_BOOL:
        EMIT("\tmov.pred \t%s, %u;\n", d, b ? 1u : 0u);
        break;
      case POOT_KIR_F32:
        EMIT("\tmov.f32 \t%s, 0f%08" PRIX32 ";\n", d, (uint32_t)b);
        break;
      case POOT_KIR_F16:
      case POOT_KIR_BF16:
        EMIT("\tmov.b16 \t%s, 0x%04" PRIX32 ";\n", d, (uint32_t)(b & 0xFFFF));
        break;
      case POOT_KIR_I64:
        EMIT("\tmov.b64 \t%s, 0x%016" PRIX64 ";\n", d, b);
        break;
      default: {
        uint32_t v = (uint32_t)b;
        if (s == POOT_KIR_I8) v = (uint32_t)(int32_t)(int8_t)(uint8_t)b;
        if (s == POOT_KIR_I16) v = (uint32_t)(int32_t)(int16_t)(uint16_t)b;
        if (s == POOT_KIR_U8) v &= 0xFFu;
        if (s == POOT_KIR_U16) v &= 0xFFFFu;
        EMIT("\tmov.b32 \t%s, 0x%08" PRIX32 ";\n", d, v);
      }
    }
  }
}

static void local_index(ptx_ctx *c, const char *d) {
  const uint32_t *ws = c->k->workgroup_size;
  uint32_t sx = ws[0] ? ws[0] : 1, sy = ws[1] ? ws[1] : 1, sz = ws[2] ? ws[2] : 1;
  EMIT("\tmov.u32 \t%s, %%tid.x;\n", d);
  if (sy > 1 || sz > 1) {
    const char *y = rtmp(c);
    EMIT("\tmov.u32 \t%s, %%tid.y;\n", y);
    EMIT("\tmad.lo.u32 \t%s, %s, %" PRIu32 ", %s;\n", d, y, sx, d);
  }
  if (sz > 1) {
    const char *z = rtmp(c);
    EMIT("\tmov.u32 \t%s, %%tid.z;\n", z);
    EMIT("\tmad.lo.u32 \t%s, %s, %" PRIu32 ", %s;\n", d, z, sx * sy, d);
  }
}

static uint32_t log2u(uint32_t v) {
  uint32_t n = 0;
  while ((1u << n) < v) n++;
  return n;
}

static void emit_builtin(ptx_ctx *c, const poot_kir_inst *in) {
  const char *d = vr(c, in->result, 0);
  uint32_t dim = (uint32_t)in->imm;
  if (dim > 2) dim = 0;
  const uint32_t *ws = c->k->workgroup_size;
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
      EMIT("\tmov.u32 \t%s, %%ctaid.%s;\n", d, dim_name[dim]);
      break;
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS:
      EMIT("\tmov.u32 \t%s, %%nctaid.%s;\n", d, dim_name[dim]);
      break;
    case POOT_KIR_BUILTIN_LOCAL_ID:
      EMIT("\tmov.u32 \t%s, %%tid.%s;\n", d, dim_name[dim]);
      break;
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
      EMIT("\tmov.u32 \t%s, %" PRIu32 ";\n", d, ws[dim] ? ws[dim] : 1u);
      break;
    case POOT_KIR_BUILTIN_LOCAL_INDEX:
      local_index(c, d);
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_ID:
      local_index(c, d);
      EMIT("\tshr.u32 \t%s, %s, %" PRIu32 ";\n", d, d, log2u(c->sg));
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_LANE:
      local_index(c, d);
      EMIT("\tand.b32 \t%s, %s, %" PRIu32 ";\n", d, d, c->sg - 1);
      break;
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      EMIT("\tmov.u32 \t%s, %" PRIu32 ";\n", d, c->sg);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "unknown builtin");
  }
}

static uint32_t elem_size(poot_kir_scalar s) {
  return (uint32_t)poot_kir_scalar_size(s);
}

/* The byte address of element `index` of a global binding (b64 register) or
 * a shared array (b32 register, shared window). */
static const char *address(ptx_ctx *c, poot_kir_space space, uint32_t ref, poot_kir_value index,
                           poot_kir_scalar elem) {
  uint32_t es = elem_size(elem);
  bool sidx = (poot_kir_scalar)vtype(c, index).scalar == POOT_KIR_I32;
  if (space == POOT_KIR_SPACE_GLOBAL) {
    const char *a = dtmp(c);
    EMIT("\tmul.wide.%s \t%s, %s, %" PRIu32 ";\n", sidx ? "s32" : "u32", a, vr(c, index, 0), es);
    EMIT("\tadd.s64 \t%s, %s, %s;\n", a, rname(c, RC_B64, c->basereg[ref]), a);
    return a;
  }
  const char *base = rtmp(c), *a = rtmp(c);
  if (c->dyn_shared) {
    EMIT("\tmov.u32 \t%s, dshared;\n", base);
    uint64_t off = poot_kir_kernel_shared_offset(c->k, ref);
    if (off) EMIT("\tadd.u32 \t%s, %s, %" PRIu64 ";\n", base, base, off);
  } else {
    EMIT("\tmov.u32 \t%s, s%" PRIu32 "_%s;\n", base, ref, c->k->shared[ref].name);
  }
  EMIT("\tmad.lo.s32 \t%s, %s, %" PRIu32 ", %s;\n", a, vr(c, index, 0), es, base);
  return a;
}

/* Emits `lanes` registers of value regs as "{a, b}" or "a". */
static void reglist(ptx_ctx *c, poot_strbuf *sb, poot_kir_value v, uint32_t first, uint32_t n) {
  if (n == 1) {
    poot_strbuf_puts(sb, vr(c, v, first));
    return;
  }
  poot_strbuf_putc(sb, '{');
  for (uint32_t i = 0; i < n; i++) {
    if (i) poot_strbuf_puts(sb, ", ");
    poot_strbuf_puts(sb, vr(c, v, first + i));
  }
  poot_strbuf_putc(sb, '}');
}

static void emit_load_store(ptx_ctx *c, const poot_kir_inst *in, bool store) {
  poot_kir_space space = in->space;
  poot_kir_scalar elem = poot__kir_space_elem(c->k, space, in->ref);
  poot_kir_value v = store ? in->args[1] : in->result;
  uint32_t lanes = vtype(c, v).lanes ? vtype(c, v).lanes : 1u;
  const char *a = address(c, space, in->ref, in->args[0], elem);
  bool nc = !store && space == POOT_KIR_SPACE_GLOBAL &&
            c->k->bindings[in->ref].access == POOT_KIR_ACCESS_READ;
  /* PTX vectors hold at most 128 bits here: split 4 x 64-bit into two. */
  uint32_t per = lanes;
  if (elem_size(elem) * lanes > 16) per = 16 / elem_size(elem);
  for (uint32_t first = 0; first < lanes; first += per) {
    poot_strbuf regs;
    poot_strbuf_init(&regs);
    reglist(c, &regs, v, first, per);
    if (regs.failed) poot__kir_regs_oom(&c->r);
    char vec[8] = "";
    if (per > 1) snprintf(vec, sizeof vec, ".v%" PRIu32, per);
    char off[24] = "";
    if (first) snprintf(off, sizeof off, "+%" PRIu32, first * elem_size(elem));
    const char *sp = space == POOT_KIR_SPACE_GLOBAL ? "global" : "shared";
    if (store)
      EMIT("\tst.%s%s.%s \t[%s%s], %s;\n", sp, vec, mtype(elem), a, off, regs.data);
    else
      EMIT("\tld.%s%s%s.%s \t%s, [%s%s];\n", sp, nc ? ".nc" : "", vec, mtype(elem), regs.data, a,
           off);
    poot_strbuf_deinit(&regs);
  }
}

static void emit_atomic(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar elem = poot__kir_space_elem(c->k, in->space, in->ref);
  const char *a = address(c, in->space, in->ref, in->args[0], elem);
  const char *sp = in->space == POOT_KIR_SPACE_GLOBAL ? "global" : "shared";
  const char *d = vr(c, in->result, 0);
  bool f = elem == POOT_KIR_F32;
  bool w64 = elem == POOT_KIR_I64;
  const char *op = NULL, *ty = NULL;
  switch (in->op) {
    case POOT_KIR_OP_ATOMIC_ADD:
      op = "add";
      ty = f ? "f32" : (w64 ? "u64" : "u32");
      break;
    case POOT_KIR_OP_ATOMIC_MAX:
    case POOT_KIR_OP_ATOMIC_MIN:
      op = in->op == POOT_KIR_OP_ATOMIC_MAX ? "max" : "min";
      ty = f ? "f32" : (w64 ? "s64" : (is_signed_int(elem) ? "s32" : "u32"));
      break;
    case POOT_KIR_OP_ATOMIC_XCHG:
      op = "exch";
      ty = w64 ? "b64" : "b32";
      break;
    case POOT_KIR_OP_ATOMIC_CAS:
      op = "cas";
      ty = w64 ? "b64" : "b32";
      break;
    default:
      break;
  }
  if (!op || is_small_int(elem) || elem == POOT_KIR_F16 || elem == POOT_KIR_BF16 ||
      ((in->op == POOT_KIR_OP_ATOMIC_MAX || in->op == POOT_KIR_OP_ATOMIC_MIN) && f)) {
    fail(c, POOT_UNSUPPORTED, in, "atomic operation on this element type");
    return;
  }
  if (in->op == POOT_KIR_OP_ATOMIC_CAS)
    EMIT("\tatom.%s.%s.%s \t%s, [%s], %s, %s;\n", sp, op, ty, d, a, vr(c, in->args[1], 0),
         vr(c, in->args[2], 0));
  else
    EMIT("\tatom.%s.%s.%s \t%s, [%s], %s;\n", sp, op, ty, d, a, vr(c, in->args[1], 0));
}

/* Float unary op on f32 registers. */
static void funary(ptx_ctx *c, const poot_kir_inst *in, const char *d, const char *a) {
  switch (in->op) {
    case POOT_KIR_OP_NEG:
      EMIT("\tneg.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_ABS:
      EMIT("\tabs.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_EXP:
      poot__ptx_exp(&c->r, c->o, d, a);
      break;
    case POOT_KIR_OP_EXP2:
      EMIT("\tex2.approx.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_LOG:
      poot__ptx_log(&c->r, c->o, d, a);
      break;
    case POOT_KIR_OP_LOG2:
      EMIT("\tlg2.approx.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_SQRT:
      EMIT("\tsqrt.rn.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_RSQRT:
      EMIT("\trsqrt.approx.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_SIN:
      poot__ptx_sincos(&c->r, c->o, d, a, false);
      break;
    case POOT_KIR_OP_COS:
      poot__ptx_sincos(&c->r, c->o, d, a, true);
      break;
    case POOT_KIR_OP_TANH:
      if ((poot_kir_scalar)in->type.scalar == POOT_KIR_F32)
        poot__ptx_tanh(&c->r, c->o, d, a);
      else
        EMIT("\ttanh.approx.f32 \t%s, %s;\n", d, a); /* below f16 precision */
      break;
    case POOT_KIR_OP_ERF:
      poot__ptx_erf(&c->r, c->o, d, a);
      break;
    case POOT_KIR_OP_FLOOR:
      EMIT("\tcvt.rmi.f32.f32 \t%s, %s;\n", d, a);
      break;
    case POOT_KIR_OP_CEIL:
      EMIT("\tcvt.rpi.f32.f32 \t%s, %s;\n", d, a);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "unary operation on a float");
  }
}

static void emit_unary(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    if (is_float(s)) {
      const char *a = fsrc(c, in->args[0], l);
      const char *d = fdst(c, in, l);
      funary(c, in, d, a);
      fdst_end(c, in, l, d);
      continue;
    }
    const char *d = vr(c, in->result, l), *a = vr(c, in->args[0], l);
    if (s == POOT_KIR_BOOL) {
      if (in->op != POOT_KIR_OP_NOT) fail(c, POOT_UNSUPPORTED, in, "unary operation on bool");
      EMIT("\tnot.pred \t%s, %s;\n", d, a);
      continue;
    }
    const char *w = s == POOT_KIR_I64 ? "64" : "32";
    switch (in->op) {
      case POOT_KIR_OP_NEG:
        EMIT("\tneg.s%s \t%s, %s;\n", w, d, a);
        break;
      case POOT_KIR_OP_NOT:
        EMIT("\tnot.b%s \t%s, %s;\n", w, d, a);
        break;
      case POOT_KIR_OP_ABS:
        if (is_signed_int(s))
          EMIT("\tabs.s%s \t%s, %s;\n", w, d, a);
        else
          EMIT("\tmov.b%s \t%s, %s;\n", w, d, a);
        break;
      default:
        fail(c, POOT_UNSUPPORTED, in, "unary operation on an integer");
    }
    normalize(c, d, s);
  }
}

static bool is_compare(poot_kir_op op) {
  return poot__kir_op_class(op) == POOT_KIR_CLASS_COMPARE;
}

static void emit_compare(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_type at = vtype(c, in->args[0]);
  poot_kir_scalar s = (poot_kir_scalar)at.scalar;
  uint32_t lanes = at.lanes ? at.lanes : 1u;
  static const char *const iop[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  /* Ordered compares except NE, which is true for NaN as in C. */
  static const char *const fop[] = {"eq", "neu", "lt", "le", "gt", "ge"};
  int k = (int)in->op - (int)POOT_KIR_OP_EQ;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *d = vr(c, in->result, l);
    if (s == POOT_KIR_BOOL) {
      const char *a = vr(c, in->args[0], l), *b = vr(c, in->args[1], l);
      if (in->op == POOT_KIR_OP_NE) {
        EMIT("\txor.pred \t%s, %s, %s;\n", d, a, b);
      } else if (in->op == POOT_KIR_OP_EQ) {
        EMIT("\txor.pred \t%s, %s, %s;\n", d, a, b);
        EMIT("\tnot.pred \t%s, %s;\n", d, d);
      } else {
        /* false < true: compare as 0/1. */
        const char *x = rtmp(c), *y = rtmp(c);
        EMIT("\tselp.u32 \t%s, 1, 0, %s;\n", x, a);
        EMIT("\tselp.u32 \t%s, 1, 0, %s;\n", y, b);
        EMIT("\tsetp.%s.u32 \t%s, %s, %s;\n", iop[k], d, x, y);
      }
    } else if (is_float(s)) {
      const char *a = fsrc(c, in->args[0], l), *b = fsrc(c, in->args[1], l);
      EMIT("\tsetp.%s.f32 \t%s, %s, %s;\n", fop[k], d, a, b);
    } else {
      EMIT("\tsetp.%s.%s \t%s, %s, %s;\n", iop[k], itype(s), d, vr(c, in->args[0], l),
           vr(c, in->args[1], l));
    }
  }
}

/* The AND defining v when v is a 32-bit integer AND, else
 * NULL. */
static const poot_kir_inst *and32_def(const ptx_ctx *c, poot_kir_value v) {
  const poot_kir_inst *d = c->k->values[v].def;
  if (!d || d->op != POOT_KIR_OP_AND) return NULL;
  poot_kir_scalar s = (poot_kir_scalar)d->type.scalar;
  return s == POOT_KIR_U32 || s == POOT_KIR_I32 ? d : NULL;
}

/* Whether v is a constant; its bits. */
static bool const_bits(const ptx_ctx *c, poot_kir_value v, uint64_t *out) {
  const poot_kir_inst *d = c->k->values[v].def;
  if (!d || d->op != POOT_KIR_OP_CONST) return false;
  *out = d->imm;
  return true;
}

/* Whether the AND e's second operand is the constant ~m (32 bits). */
static bool ands_complement(const ptx_ctx *c, const poot_kir_inst *e, uint64_t m) {
  uint64_t k;
  return const_bits(c, e->args[1], &k) && (uint32_t)k == (uint32_t)~(uint32_t)m;
}

/* (a & b) | e as one lop3: ptxas keeps an and.b32 followed by an or.b32
 * with constants as two LOP3s (the block decoders mask a code into a
 * float's mantissa this way once per weight element). Every value has its
 * own register, written only by its definition, so the AND's operands
 * still hold their values here; the AND itself stays (dead when this was
 * its only use, and ptxas drops it). */
static bool emit_and_or(ptx_ctx *c, const poot_kir_inst *in, uint32_t l) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  if (in->op != POOT_KIR_OP_OR || (s != POOT_KIR_U32 && s != POOT_KIR_I32)) return false;
  uint32_t side = and32_def(c, in->args[0]) ? 0 : 1;
  const poot_kir_inst *a = and32_def(c, in->args[side]);
  if (!a) return false;
  const poot_kir_inst *e = and32_def(c, in->args[1 - side]);
  uint64_t m;
  if (e && const_bits(c, a->args[1], &m) && ands_complement(c, e, m)) {
    /* (x & m) | (y & ~m): a bit select, also one lop3 */
    EMIT("\tlop3.b32 \t%s, %s, %s, %s, 0xE2;\n", vr(c, in->result, l), vr(c, a->args[0], l),
         vr(c, a->args[1], l), vr(c, e->args[0], l));
    return true;
  }
  EMIT("\tlop3.b32 \t%s, %s, %s, %s, 0xEA;\n", vr(c, in->result, l), vr(c, a->args[0], l),
       vr(c, a->args[1], l), vr(c, in->args[1 - side], l));
  return true;
}

static void emit_binary(ptx_ctx *c, const poot_kir_inst *in) {
  if (is_compare(in->op)) {
    emit_compare(c, in);
    return;
  }
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    if (is_float(s)) {
      const char *a = fsrc(c, in->args[0], l), *b = fsrc(c, in->args[1], l);
      const char *d = fdst(c, in, l);
      switch (in->op) {
        case POOT_KIR_OP_ADD:
          EMIT("\tadd.rn.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_SUB:
          EMIT("\tsub.rn.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_MUL:
          EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_DIV:
          EMIT("\tdiv.rn.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_MIN:
          EMIT("\tmin.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_MAX:
          EMIT("\tmax.f32 \t%s, %s, %s;\n", d, a, b);
          break;
        case POOT_KIR_OP_POW:
          poot__ptx_pow(&c->r, c->o, d, a, b);
          break;
        default:
          fail(c, POOT_UNSUPPORTED, in, "binary operation on a float");
      }
      fdst_end(c, in, l, d);
      continue;
    }
    const char *d = vr(c, in->result, l), *a = vr(c, in->args[0], l), *b = vr(c, in->args[1], l);
    if (s == POOT_KIR_BOOL) {
      const char *op = in->op == POOT_KIR_OP_AND   ? "and"
                       : in->op == POOT_KIR_OP_OR  ? "or"
                       : in->op == POOT_KIR_OP_XOR ? "xor"
                                                   : NULL;
      if (!op) {
        fail(c, POOT_UNSUPPORTED, in, "binary operation on bool");
        return;
      }
      EMIT("\t%s.pred \t%s, %s, %s;\n", op, d, a, b);
      continue;
    }
    if (emit_and_or(c, in, l)) continue;
    const char *it = itype(s);
    const char *bw = s == POOT_KIR_I64 ? "b64" : "b32";
    const char *amt = b;
    if ((in->op == POOT_KIR_OP_SHL || in->op == POOT_KIR_OP_SHR) && s == POOT_KIR_I64) {
      amt = rtmp(c);
      EMIT("\tcvt.u32.u64 \t%s, %s;\n", amt, b);
    }
    switch (in->op) {
      case POOT_KIR_OP_ADD:
        EMIT("\tadd.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_SUB:
        EMIT("\tsub.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_MUL:
        EMIT("\tmul.lo.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_DIV:
        EMIT("\tdiv.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_REM:
        EMIT("\trem.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_MIN:
        EMIT("\tmin.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_MAX:
        EMIT("\tmax.%s \t%s, %s, %s;\n", it, d, a, b);
        break;
      case POOT_KIR_OP_AND:
        EMIT("\tand.%s \t%s, %s, %s;\n", bw, d, a, b);
        break;
      case POOT_KIR_OP_OR:
        EMIT("\tor.%s \t%s, %s, %s;\n", bw, d, a, b);
        break;
      case POOT_KIR_OP_XOR:
        EMIT("\txor.%s \t%s, %s, %s;\n", bw, d, a, b);
        break;
      case POOT_KIR_OP_SHL:
        EMIT("\tshl.%s \t%s, %s, %s;\n", bw, d, a, amt);
        break;
      case POOT_KIR_OP_SHR:
        EMIT("\tshr.%s \t%s, %s, %s;\n", it, d, a, amt);
        break;
      default:
        fail(c, POOT_UNSUPPORTED, in, "binary operation on an integer");
    }
    normalize(c, d, s);
  }
}

static void emit_fma(ptx_ctx *c, const poot_kir_inst *in) {
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *a = fsrc(c, in->args[0], l), *b = fsrc(c, in->args[1], l),
               *e = fsrc(c, in->args[2], l);
    const char *d = fdst(c, in, l);
    EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", d, a, b, e);
    fdst_end(c, in, l, d);
  }
}

/* DOT4_I8: one dp4a (sm_61 and later; every PTX target is sm_80+). */
static void emit_dot4(ptx_ctx *c, const poot_kir_inst *in) {
  EMIT("\tdp4a.s32.s32 \t%s, %s, %s, %s;\n", vr(c, in->result, 0), vr(c, in->args[0], 0),
       vr(c, in->args[1], 0), vr(c, in->args[2], 0));
}

static void emit_select(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  uint32_t clanes = vtype(c, in->args[0]).lanes ? vtype(c, in->args[0]).lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *p = vr(c, in->args[0], clanes == 1 ? 0 : l);
    const char *d = vr(c, in->result, l), *a = vr(c, in->args[1], l), *b = vr(c, in->args[2], l);
    if (s == POOT_KIR_BOOL) {
      const char *x = ptmp(c), *y = ptmp(c);
      EMIT("\tand.pred \t%s, %s, %s;\n", x, p, a);
      EMIT("\tnot.pred \t%s, %s;\n", y, p);
      EMIT("\tand.pred \t%s, %s, %s;\n", y, y, b);
      EMIT("\tor.pred \t%s, %s, %s;\n", d, x, y);
    } else {
      EMIT("\tselp.%s \t%s, %s, %s, %s;\n", btype(s), d, a, b, p);
    }
  }
}

/* Integer-to-integer conversion on registers (wraps; extends by the source's
 * signedness, which the 32-bit representation already carries). */
static void convert_int(ptx_ctx *c, const char *d, poot_kir_scalar to, const char *a,
                        poot_kir_scalar from) {
  bool w64f = from == POOT_KIR_I64, w64t = to == POOT_KIR_I64;
  if (w64f && w64t) {
    EMIT("\tmov.b64 \t%s, %s;\n", d, a);
  } else if (w64t) {
    EMIT("\tcvt.%s.%s \t%s, %s;\n", is_signed_int(from) ? "s64" : "u64",
         is_signed_int(from) ? "s32" : "u32", d, a);
  } else if (w64f) {
    EMIT("\tcvt.u32.u64 \t%s, %s;\n", d, a);
    normalize(c, d, to);
  } else {
    EMIT("\tmov.b32 \t%s, %s;\n", d, a);
    normalize(c, d, to);
  }
}

static const char *cvt_int_type(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
      return "s8";
    case POOT_KIR_U8:
      return "u8";
    case POOT_KIR_I16:
      return "s16";
    case POOT_KIR_U16:
      return "u16";
    case POOT_KIR_I32:
      return "s32";
    case POOT_KIR_U32:
      return "u32";
    case POOT_KIR_I64:
      return "s64";
    default:
      return "u32";
  }
}

static void emit_convert(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar to = (poot_kir_scalar)in->type.scalar;
  poot_kir_scalar from = (poot_kir_scalar)vtype(c, in->args[0]).scalar;
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *d = vr(c, in->result, l);
    if (from == POOT_KIR_BOOL) {
      const char *p = vr(c, in->args[0], l);
      switch (to) {
        case POOT_KIR_BOOL:
          EMIT("\tmov.pred \t%s, %s;\n", d, p);
          break;
        case POOT_KIR_F32:
          EMIT("\tselp.f32 \t%s, 0f3F800000, 0f00000000, %s;\n", d, p);
          break;
        case POOT_KIR_F16:
          EMIT("\tselp.b16 \t%s, 0x3C00, 0x0000, %s;\n", d, p);
          break;
        case POOT_KIR_BF16:
          EMIT("\tselp.b16 \t%s, 0x3F80, 0x0000, %s;\n", d, p);
          break;
        case POOT_KIR_I64:
          EMIT("\tselp.b64 \t%s, 1, 0, %s;\n", d, p);
          break;
        default:
          EMIT("\tselp.b32 \t%s, 1, 0, %s;\n", d, p);
      }
      continue;
    }
    if (to == POOT_KIR_BOOL) {
      if (is_float(from))
        EMIT("\tsetp.neu.f32 \t%s, %s, 0f00000000;\n", d, fsrc(c, in->args[0], l));
      else
        EMIT("\tsetp.ne.%s \t%s, %s, 0;\n", from == POOT_KIR_I64 ? "b64" : "b32", d,
             vr(c, in->args[0], l));
      continue;
    }
    if (is_float(from)) {
      const char *a = fsrc(c, in->args[0], l);
      if (to == POOT_KIR_F32) {
        EMIT("\tmov.f32 \t%s, %s;\n", d, a);
      } else if (to == POOT_KIR_F16 || to == POOT_KIR_BF16) {
        EMIT("\tcvt.rn.%s.f32 \t%s, %s;\n", to == POOT_KIR_F16 ? "f16" : "bf16", d, a);
      } else {
        /* Truncate, saturate, NaN -> 0: cvt.rzi to an integer type clamps,
         * and gives 0 for NaN up to 32 bits; to 64 bits the hardware gives
         * INT64_MIN for NaN (seen on sm_90), so NaN is selected away. */
        EMIT("\tcvt.rzi.sat.%s.f32 \t%s, %s;\n", cvt_int_type(to), d, a);
        if (to == POOT_KIR_I64) {
          const char *nan = ptmp(c);
          EMIT("\tsetp.nan.f32 \t%s, %s, %s;\n", nan, a, a);
          EMIT("\tselp.b64 \t%s, 0, %s, %s;\n", d, d, nan);
        }
        if (to == POOT_KIR_U8 || to == POOT_KIR_U16 || to == POOT_KIR_I8 || to == POOT_KIR_I16)
          normalize(c, d, to);
      }
      continue;
    }
    /* integer source */
    const char *a = vr(c, in->args[0], l);
    if (is_float(to)) {
      const char *ft = to == POOT_KIR_F32 ? d : ftmp(c);
      EMIT("\tcvt.rn.f32.%s \t%s, %s;\n", from == POOT_KIR_I64 ? "s64" : itype(from), ft, a);
      if (to != POOT_KIR_F32)
        EMIT("\tcvt.rn.%s.f32 \t%s, %s;\n", to == POOT_KIR_F16 ? "f16" : "bf16", d, ft);
      continue;
    }
    convert_int(c, d, to, a, from);
  }
}

/* Raw bits of lane `l` of v in a b32 (or b64 for 8-byte scalars) register,
 * zero-extended from the scalar's size. */
static const char *raw_bits(ptx_ctx *c, poot_kir_value v, uint32_t l) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  const char *r = vr(c, v, l);
  switch (class_of(s)) {
    case RC_B64:
      return r;
    case RC_F32: {
      const char *t = rtmp(c);
      EMIT("\tmov.b32 \t%s, %s;\n", t, r);
      return t;
    }
    case RC_B16: {
      const char *t = rtmp(c);
      EMIT("\tcvt.u32.u16 \t%s, %s;\n", t, r);
      return t;
    }
    default: {
      const char *t = rtmp(c);
      EMIT("\tmov.b32 \t%s, %s;\n", t, r);
      if (s == POOT_KIR_I8) EMIT("\tand.b32 \t%s, %s, 255;\n", t, t);
      if (s == POOT_KIR_I16) EMIT("\tand.b32 \t%s, %s, 65535;\n", t, t);
      return t;
    }
  }
}

/* Writes raw bits (b32, or b64 when the scalar is 8 bytes) into lane l. */
static void from_bits(ptx_ctx *c, poot_kir_value v, uint32_t l, const char *bits) {
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, v).scalar;
  const char *d = vr(c, v, l);
  switch (class_of(s)) {
    case RC_B64:
      EMIT("\tmov.b64 \t%s, %s;\n", d, bits);
      break;
    case RC_F32:
      EMIT("\tmov.b32 \t%s, %s;\n", d, bits);
      break;
    case RC_B16:
      EMIT("\tcvt.u16.u32 \t%s, %s;\n", d, bits);
      break;
    default:
      EMIT("\tmov.b32 \t%s, %s;\n", d, bits);
      normalize(c, d, s);
  }
}

static void emit_bitcast(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_type st = vtype(c, in->args[0]), dt = in->type;
  uint32_t sl = st.lanes ? st.lanes : 1u, dl = dt.lanes ? dt.lanes : 1u;
  uint32_t ss = elem_size((poot_kir_scalar)st.scalar), ds = elem_size((poot_kir_scalar)dt.scalar);
  if (st.scalar == POOT_KIR_BOOL || dt.scalar == POOT_KIR_BOOL || ss * sl != ds * dl) {
    fail(c, POOT_UNSUPPORTED, in, "bitcast between these types");
    return;
  }
  if (ds >= ss) {
    /* Each destination lane gathers ds/ss source lanes, low lane first. */
    uint32_t per = ds / ss;
    for (uint32_t l = 0; l < dl; l++) {
      const char *acc = NULL;
      for (uint32_t i = 0; i < per; i++) {
        const char *bits = raw_bits(c, in->args[0], l * per + i);
        if (ds == 8 && ss < 8) {
          const char *w = dtmp(c);
          EMIT("\tcvt.u64.u32 \t%s, %s;\n", w, bits);
          bits = w;
        }
        if (i == 0) {
          acc = bits;
          continue;
        }
        const char *t = ds == 8 ? dtmp(c) : rtmp(c);
        EMIT("\tshl.b%d \t%s, %s, %" PRIu32 ";\n", ds == 8 ? 64 : 32, t, bits, i * ss * 8);
        EMIT("\tor.b%d \t%s, %s, %s;\n", ds == 8 ? 64 : 32, t, t, acc);
        acc = t;
      }
      from_bits(c, in->result, l, acc);
    }
  } else {
    /* Each source lane splits into ss/ds destination lanes. */
    uint32_t per = ss / ds;
    for (uint32_t l = 0; l < sl; l++) {
      const char *bits = raw_bits(c, in->args[0], l);
      for (uint32_t i = 0; i < per; i++) {
        const char *t = rtmp(c);
        if (ss == 8) {
          const char *w = dtmp(c);
          EMIT("\tshr.u64 \t%s, %s, %" PRIu32 ";\n", w, bits, i * ds * 8);
          EMIT("\tcvt.u32.u64 \t%s, %s;\n", t, w);
        } else {
          EMIT("\tshr.u32 \t%s, %s, %" PRIu32 ";\n", t, bits, i * ds * 8);
        }
        if (ds < 4) EMIT("\tand.b32 \t%s, %s, %u;\n", t, t, ds == 1 ? 0xFFu : 0xFFFFu);
        from_bits(c, in->result, l * per + i, t);
      }
    }
  }
}

static void emit_move_lanes(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  const char *mt = mov_type(class_of(s));
  uint32_t lanes = in->type.lanes ? in->type.lanes : 1u;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *src = NULL;
    switch (in->op) {
      case POOT_KIR_OP_SPLAT:
        src = vr(c, in->args[0], 0);
        break;
      case POOT_KIR_OP_VEC:
        src = vr(c, in->args[l], 0);
        break;
      case POOT_KIR_OP_EXTRACT:
        src = vr(c, in->args[0], (uint32_t)in->imm);
        break;
      default:
        break;
    }
    EMIT("\tmov.%s \t%s, %s;\n", mt, vr(c, in->result, l), src);
  }
}

static void emit_priv(ptx_ctx *c, const poot_kir_inst *in, bool store) {
  const poot_kir_private *p = &c->k->privates[in->ref];
  uint32_t lanes = p->type.lanes ? p->type.lanes : 1u;
  rclass rc = class_of((poot_kir_scalar)p->type.scalar);
  uint32_t first = c->r.priv_first[in->ref] + (uint32_t)in->imm * lanes;
  for (uint32_t l = 0; l < lanes; l++) {
    const char *pr = rname(c, rc, first + l);
    if (store)
      EMIT("\tmov.%s \t%s, %s;\n", mov_type(rc), pr, vr(c, in->args[0], l));
    else
      EMIT("\tmov.%s \t%s, %s;\n", mov_type(rc), vr(c, in->result, l), pr);
  }
}

static void emit_subgroup(ptx_ctx *c, const poot_kir_inst *in) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  const char *d = vr(c, in->result, 0), *v = vr(c, in->args[0], 0);
  const char *clamp = "31"; /* c operand: segment mask 0, clamp 31 */
  switch (in->op) {
    case POOT_KIR_OP_SG_REDUCE_ADD:
    case POOT_KIR_OP_SG_REDUCE_MAX:
    case POOT_KIR_OP_SG_REDUCE_MIN: {
      const char *op = in->op == POOT_KIR_OP_SG_REDUCE_ADD ? (s == POOT_KIR_F32 ? "add.rn" : "add")
                       : in->op == POOT_KIR_OP_SG_REDUCE_MAX ? "max"
                                                             : "min";
      const char *ty = s == POOT_KIR_F32 ? "f32" : itype(s);
      EMIT("\tmov.b32 \t%s, %s;\n", d, v);
      for (uint32_t off = c->sg / 2; off >= 1; off /= 2) {
        const char *t = s == POOT_KIR_F32 ? ftmp(c) : rtmp(c);
        EMIT("\tshfl.sync.bfly.b32 \t%s, %s, %" PRIu32 ", %s, -1;\n", t, d, off, clamp);
        EMIT("\t%s.%s \t%s, %s, %s;\n", op, ty, d, d, t);
      }
      break;
    }
    case POOT_KIR_OP_SG_SHUFFLE:
      EMIT("\tshfl.sync.idx.b32 \t%s, %s, %s, %s, -1;\n", d, v, vr(c, in->args[1], 0), clamp);
      break;
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
      EMIT("\tshfl.sync.bfly.b32 \t%s, %s, %" PRIu32 ", %s, -1;\n", d, v, (uint32_t)in->imm, clamp);
      break;
    case POOT_KIR_OP_SG_BROADCAST:
      EMIT("\tshfl.sync.idx.b32 \t%s, %s, %" PRIu32 ", %s, -1;\n", d, v, (uint32_t)in->imm, clamp);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "subgroup operation");
  }
}

/* MMA_LOAD (ldmatrix.x4) and MMA (mma.sync m16n8k16) on the fragment
 * layout of kir.h, which is PTX's own: the registers are the values' lanes. */
static void emit_matrix(ptx_ctx *c, const poot_kir_inst *in) {
  poot_strbuf regs;
  poot_strbuf_init(&regs);
  if (in->op == POOT_KIR_OP_MMA_LOAD) {
    char a[32];
    snprintf(a, sizeof a, "%s",
             address(c, POOT_KIR_SPACE_SHARED, in->ref, in->args[0],
                     poot__kir_space_elem(c->k, POOT_KIR_SPACE_SHARED, in->ref)));
    reglist(c, &regs, in->result, 0, 4);
    if (regs.failed) poot__kir_regs_oom(&c->r);
    EMIT("\tldmatrix.sync.aligned.m8n8.x4%s.shared.b16 \t%s, [%s];\n", (in->imm & 1) ? ".trans" : "",
         regs.data, a);
  } else {
    const char *ab = (poot_kir_scalar)in->imm == POOT_KIR_BF16 ? "bf16" : "f16";
    reglist(c, &regs, in->result, 0, 4);
    poot_strbuf_puts(&regs, ", ");
    reglist(c, &regs, in->args[0], 0, 4);
    poot_strbuf_puts(&regs, ", ");
    reglist(c, &regs, in->args[1], 0, 2);
    poot_strbuf_puts(&regs, ", ");
    reglist(c, &regs, in->args[2], 0, 4);
    if (regs.failed) poot__kir_regs_oom(&c->r);
    EMIT("\tmma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 \t%s;\n", ab, ab, regs.data);
  }
  poot_strbuf_deinit(&regs);
}

/* ASYNC_COPY (cp.async.cg, 16 bytes; src-size 0 fills zeros), commit and wait. */
static void emit_async(ptx_ctx *c, const poot_kir_inst *in) {
  if (in->op == POOT_KIR_OP_ASYNC_COMMIT) {
    EMIT("\tcp.async.commit_group;\n");
    return;
  }
  if (in->op == POOT_KIR_OP_ASYNC_WAIT) {
    EMIT("\tcp.async.wait_group \t%" PRIu64 ";\n", in->imm);
    return;
  }
  poot_kir_scalar elem = poot__kir_space_elem(c->k, POOT_KIR_SPACE_SHARED, in->ref);
  char d[32], src[32], n[32];
  snprintf(d, sizeof d, "%s", address(c, POOT_KIR_SPACE_SHARED, in->ref, in->args[0], elem));
  snprintf(src, sizeof src, "%s",
           address(c, POOT_KIR_SPACE_GLOBAL, (uint32_t)in->imm, in->args[1], elem));
  snprintf(n, sizeof n, "%s", rtmp(c));
  EMIT("\tselp.u32 \t%s, 16, 0, %s;\n", n, vr(c, in->args[2], 0));
  EMIT("\tcp.async.cg.shared.global \t[%s], [%s], 16, %s;\n", d, src, n);
}

static void emit_param(ptx_ctx *c, const poot_kir_inst *in) {
  const poot_kir_param *p = &c->k->params[in->ref];
  const char *d = vr(c, in->result, 0);
  const char *ty = p->type == POOT_KIR_F32 ? "f32" : (p->type == POOT_KIR_I32 ? "s32" : "u32");
  if (p->kind == POOT_KIR_PARAM_PUSH) {
    EMIT("\tld.param.%s \t%s, [%s_param_%" PRIu32 "];\n", ty, d, c->k->name,
         c->k->binding_count + in->ref);
    return;
  }
  /* SLOT: element slot_index of a bound buffer, read when the statement runs. */
  const char *a = dtmp(c);
  EMIT("\tadd.s64 \t%s, %s, %" PRIu64 ";\n", a, rname(c, RC_B64, c->basereg[p->slot_ref]),
       (uint64_t)p->slot_index * 4u);
  EMIT("\tld.global.%s \t%s, [%s];\n", ty, d, a);
}

static void emit_check(ptx_ctx *c, const poot_kir_inst *in) {
  const char *p = vr(c, in->args[0], 0);
  c->fault_used = true;
  EMIT("\t@!%s mov.u32 \t%s, %" PRIu64 ";\n", p, rname(c, RC_B32, c->fault_code_reg), in->imm);
  EMIT("\t@!%s bra \t$L__fault;\n", p);
}

static void emit_if(ptx_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  const char *p = vr(c, in->args[0], 0);
  bool has_else = in->else_body.first != NULL;
  bool pending = c->wait_pending;
  EMIT("\t@!%s bra \t$L__%s%" PRIu32 ";\n", p, has_else ? "else" : "endif", n);
  emit_block(c, &in->body);
  if (has_else) {
    EMIT("\tbra.uni \t$L__endif%" PRIu32 ";\n", n);
    EMIT("$L__else%" PRIu32 ":\n", n);
    c->wait_pending = pending;
    emit_block(c, &in->else_body);
  }
  EMIT("$L__endif%" PRIu32 ":\n", n);
}

static void emit_for(ptx_ctx *c, const poot_kir_inst *in) {
  uint32_t n = c->label++;
  poot_kir_scalar s = (poot_kir_scalar)vtype(c, in->args[0]).scalar;
  const char *ty = s == POOT_KIR_I32 ? "s32" : "u32";
  const char *i = vr(c, in->result, 0);
  const char *p = ptmp(c);
  EMIT("\tmov.b32 \t%s, %s;\n", i, vr(c, in->args[0], 0));
  EMIT("$L__for%" PRIu32 ":\n", n);
  EMIT("\tsetp.ge.%s \t%s, %s, %s;\n", ty, p, i, vr(c, in->args[1], 0));
  EMIT("\t@%s bra \t$L__endfor%" PRIu32 ";\n", p, n);
  emit_block(c, &in->body);
  EMIT("\tadd.%s \t%s, %s, %s;\n", ty, i, i, vr(c, in->args[2], 0));
  EMIT("\tbra.uni \t$L__for%" PRIu32 ";\n", n);
  EMIT("$L__endfor%" PRIu32 ":\n", n);
}

static void emit_inst(ptx_ctx *c, const poot_kir_inst *in) {
  poot__kir_regs_def(&c->r, in);
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_CONST:
      emit_const(c, in);
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
      EMIT("\tbar.sync \t0;\n");
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
    case POOT_KIR_CLASS_MATRIX:
      emit_matrix(c, in);
      break;
    case POOT_KIR_CLASS_ASYNC:
      emit_async(c, in);
      break;
    default:
      fail(c, POOT_UNSUPPORTED, in, "operation not known to the PTX renderer");
  }
}

/* A block; where a wait for the previous kernel is pending (grid_dependency
 * targets), griddepcontrol.wait goes before the first statement that must
 * not run ahead of it. An IF is entered still pending (its branches wait
 * where they need to: a batched kernel's groups each run their weight loads
 * first) and leaves the wait pending again, so a path that skipped both
 * branches waits later; a second wait on one path returns at once. */
static void emit_block(ptx_ctx *c, const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in && !c->r.err; in = in->next) {
    if (c->wait_pending && in->op != POOT_KIR_OP_IF && !poot__kir_runs_before_wait(c->k, in)) {
      EMIT("\tgriddepcontrol.wait;\n");
      c->wait_pending = false;
    }
    bool was = c->wait_pending;
    emit_inst(c, in);
    if (in->op == POOT_KIR_OP_IF && was) c->wait_pending = true;
  }
}

/* The kernel body with griddepcontrol.wait (grid_dependency targets) before
 * the first statement that must not run ahead of the kernel before this one
 * (emit_block), and at the end where a path has not waited: every thread
 * waits, so no kernel finishes before its predecessor. No launch_dependents
 * (measured slower: docs/backends-ptx.md, design notes). */
static void emit_body(ptx_ctx *c, const poot_kir_target *t) {
  c->wait_pending = t->grid_dependency && t->sm_version >= 90;
  emit_block(c, &c->k->body);
  if (c->wait_pending) EMIT("\tgriddepcontrol.wait;\n");
  c->wait_pending = false;
}

/* The fault handler: fills the record (render_ptx_amdgpu.h) and traps. */
static void emit_fault_handler(ptx_ctx *c) {
  const char *tc = rname(c, RC_B32, c->fault_code_reg);
  const char *rec = dtmp(c), *bit = rtmp(c), *old = rtmp(c), *p = ptmp(c), *x = rtmp(c),
             *n = rtmp(c);
  EMIT("$L__fault:\n");
  EMIT("\t// a check failed: record (kernel, trap code) in host memory, then trap\n");
  EMIT("\tld.param.u64 \t%s, [%s_fault];\n", rec, c->k->name);
  EMIT("\tcvta.to.global.u64 \t%s, %s;\n", rec, rec);
  EMIT("\tshl.b32 \t%s, 1, %s;\n", bit, tc);
  EMIT("\tred.relaxed.sys.global.or.b32 \t[%s], %s;\n", rec, bit);
  EMIT("\tatom.relaxed.sys.global.cas.b32 \t%s, [%s+4], 0, 1;\n", old, rec);
  EMIT("\tsetp.ne.u32 \t%s, %s, 0;\n", p, old);
  EMIT("\t@%s bra \t$L__fault_wait;\n", p);
  EMIT("\tst.relaxed.sys.global.u32 \t[%s+8], %s;\n", rec, tc);
  EMIT("\tst.relaxed.sys.global.u32 \t[%s+12], 0x%08" PRIX32 ";\n", rec, (uint32_t)c->k->hash);
  EMIT("\tst.relaxed.sys.global.u32 \t[%s+16], 0x%08" PRIX32 ";\n", rec,
       (uint32_t)(c->k->hash >> 32));
  for (int dmn = 0; dmn < 3; dmn++) {
    EMIT("\tmov.u32 \t%s, %%ctaid.%s;\n", x, dim_name[dmn]);
    EMIT("\tst.relaxed.sys.global.u32 \t[%s+%d], %s;\n", rec, 20 + 4 * dmn, x);
  }
  local_index(c, x);
  EMIT("\tst.relaxed.sys.global.u32 \t[%s+32], %s;\n", rec, x);
  EMIT("\tfence.sc.sys;\n");
  EMIT("\tst.release.sys.global.u32 \t[%s+4], %u;\n", rec, POOT__KIR_FAULT_STATE_COMPLETE);
  EMIT("\tfence.sc.sys;\n");
  EMIT("\ttrap;\n");
  EMIT("$L__fault_wait:\n");
  EMIT("\t// another thread owns the record: let it finish before trapping\n");
  EMIT("\tmov.u32 \t%s, %u;\n", n, POOT__KIR_FAULT_SPIN_LIMIT);
  EMIT("$L__fault_spin:\n");
  EMIT("\tld.acquire.sys.global.u32 \t%s, [%s+4];\n", old, rec);
  EMIT("\tsetp.eq.u32 \t%s, %s, %u;\n", p, old, POOT__KIR_FAULT_STATE_COMPLETE);
  EMIT("\t@%s bra \t$L__fault_trap;\n", p);
  EMIT("\tnanosleep.u32 \t64;\n");
  EMIT("\tsub.u32 \t%s, %s, 1;\n", n, n);
  EMIT("\tsetp.ne.u32 \t%s, %s, 0;\n", p, n);
  EMIT("\t@%s bra \t$L__fault_spin;\n", p);
  EMIT("$L__fault_trap:\n");
  EMIT("\ttrap;\n");
  EMIT("\tret;\n");
}

/* The registers every kernel starts with: the fault code, each binding's
 * global base address, the private arrays (zeroed). */
static void emit_prologue(ptx_ctx *c) {
  const poot_kir_kernel *kernel = c->k;
  c->fault_code_reg = new_reg(c, RC_B32, 1);
  for (uint32_t i = 0; i < kernel->binding_count; i++) {
    c->basereg[i] = new_reg(c, RC_B64, 1);
    const char *r = rname(c, RC_B64, c->basereg[i]);
    EMIT("\tld.param.u64 \t%s, [%s_param_%" PRIu32 "];\n", r, kernel->name, i);
    EMIT("\tcvta.to.global.u64 \t%s, %s;\n", r, r);
  }
  poot__kir_regs_private_registers(&c->r);
  for (uint32_t i = 0; i < kernel->private_count; i++) {
    const poot_kir_private *p = &kernel->privates[i];
    uint32_t lanes = p->type.lanes ? p->type.lanes : 1u;
    rclass rc = class_of((poot_kir_scalar)p->type.scalar);
    for (uint32_t j = 0; j < lanes * p->count; j++) {
      const char *r = rname(c, rc, c->r.priv_first[i] + j);
      switch (rc) {
        case RC_PRED:
          EMIT("\tmov.pred \t%s, 0;\n", r);
          break;
        case RC_F32:
          EMIT("\tmov.f32 \t%s, 0f00000000;\n", r);
          break;
        default:
          EMIT("\tmov.%s \t%s, 0;\n", mov_type(rc), r);
      }
    }
  }
}

/* The entry's parameters: binding pointers, PUSH params, the fault record. */
static void print_params(const poot_kir_kernel *kernel, poot_strbuf *out) {
  uint32_t np = 0;
  for (uint32_t i = 0; i < kernel->binding_count; i++, np++) {
    const poot_kir_binding *bd = &kernel->bindings[i];
    poot_strbuf_printf(out, "%s\t// binding %" PRIu32 " '%s' (%s, %s)\n", np ? ",\n" : "",
                       bd->binding, bd->name, poot_kir_scalar_name(bd->elem),
                       bd->access == POOT_KIR_ACCESS_READ    ? "read"
                       : bd->access == POOT_KIR_ACCESS_WRITE ? "write"
                                                             : "read_write");
    poot_strbuf_printf(out, "\t.param .u64 .ptr .global .align %" PRIu32 " %s_param_%" PRIu32,
                       bd->align ? bd->align : 16u, kernel->name, i);
  }
  for (uint32_t i = 0; i < kernel->param_count; i++) {
    const poot_kir_param *p = &kernel->params[i];
    if (p->kind != POOT_KIR_PARAM_PUSH) continue;
    poot_strbuf_printf(out, "%s\t// push param '%s'\n", np ? ",\n" : "", p->name);
    poot_strbuf_printf(out, "\t.param .%s %s_param_%" PRIu32,
                       p->type == POOT_KIR_F32 ? "f32" : (p->type == POOT_KIR_I32 ? "s32" : "u32"),
                       kernel->name, kernel->binding_count + i);
    np++;
  }
  if (kernel->has_checks) {
    poot_strbuf_printf(out, "%s\t// fault record (host-mapped)\n", np ? ",\n" : "");
    poot_strbuf_printf(out, "\t.param .u64 .ptr .global .align 16 %s_fault", kernel->name);
    np++;
  }
}

/* Header, entry, register and shared declarations, then the body. */
static void print_kernel(ptx_ctx *c, const poot_strbuf *body, poot_strbuf *out) {
  const poot_kir_kernel *kernel = c->k;
  const poot_kir_target *target = c->t;
  uint32_t pv = target->ptx_version ? target->ptx_version : 78u;
  poot_strbuf_printf(
      out, "//\n// Generated by poot from KIR kernel '%s' (hash %016" PRIx64 ") for %s\n//\n\n",
      kernel->name, kernel->hash, target->name ? target->name : "ptx");
  poot_strbuf_printf(
      out, ".version %" PRIu32 ".%" PRIu32 "\n.target sm_%" PRIu32 "\n.address_size 64\n\n",
      pv / 10, pv % 10, target->sm_version ? target->sm_version : 80u);
  /* Past 48 KiB: one dynamic window (module scope), each array at its
   * offset in it (every launch passes the window's size). */
  if (c->dyn_shared) {
    for (uint32_t i = 0; i < kernel->shared_count; i++)
      poot_strbuf_printf(out, "// dshared+%" PRIu64 ": s%" PRIu32 "_%s[%" PRIu64 "]\n",
                         poot_kir_kernel_shared_offset(kernel, i), i, kernel->shared[i].name,
                         (uint64_t)kernel->shared[i].count * elem_size(kernel->shared[i].elem));
    poot_strbuf_puts(out, ".extern .shared .align 16 .b8 dshared[];\n\n");
  }
  poot_strbuf_printf(out, ".visible .entry %s(\n", kernel->name);
  print_params(kernel, out);
  poot_strbuf_printf(out, "\n)\n.reqntid %" PRIu32 ", %" PRIu32 ", %" PRIu32 "\n{\n",
                     kernel->workgroup_size[0] ? kernel->workgroup_size[0] : 1u,
                     kernel->workgroup_size[1] ? kernel->workgroup_size[1] : 1u,
                     kernel->workgroup_size[2] ? kernel->workgroup_size[2] : 1u);
  for (int rc = 0; rc < RC_COUNT; rc++)
    if (c->r.used[rc])
      poot_strbuf_printf(out, "\t.reg %s \t%s<%" PRIu32 ">;\n", rc_decl[rc], rc_prefix[rc],
                         c->r.used[rc]);
  for (uint32_t i = 0; i < kernel->shared_count && !c->dyn_shared; i++) {
    const poot_kir_shared *s = &kernel->shared[i];
    poot_strbuf_printf(out, "\t.shared .align 16 .b8 \ts%" PRIu32 "_%s[%" PRIu64 "];\n", i, s->name,
                       (uint64_t)s->count * elem_size(s->elem));
  }
  poot_strbuf_puts(out, "\n");
  poot_strbuf_append(out, body->data, body->len);
  poot_strbuf_puts(out, "}\n");
}

uint64_t poot_kir_ptx_dynamic_shared_bytes(const poot_kir_kernel *kernel) {
  uint64_t window = poot_kir_kernel_shared_offset(kernel, kernel->shared_count);
  return window > POOT_KIR_PTX_STATIC_SHARED_MAX ? window : 0;
}

poot_status poot_kir_render_ptx(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                poot_strbuf *out) {
  POOT_TRY(poot__kir_render_args(kernel, target, out, POOT_KIR_LANG_PTX, "poot_kir_render_ptx",
                                 "a PTX"));
  ptx_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ptx_ctx *c = &ctx;
  c->k = kernel;
  c->t = target;
  c->sg = target->subgroup_size ? target->subgroup_size : 32u;
  c->dyn_shared = poot_kir_ptx_dynamic_shared_bytes(kernel);
  poot_strbuf body;
  poot_strbuf_init(&body);
  c->o = &body;
  poot_status st = poot__kir_regs_init(&c->r, kernel, "PTX renderer", &ptx_classes, false);
  if (st) goto done;

  uint32_t threads = poot_kir_kernel_threads(kernel);
  if (poot__kir_block_uses_subgroups(&kernel->body) && (c->sg != 32 || threads % c->sg != 0)) {
    st = poot_status_make(POOT_UNSUPPORTED,
                          "PTX renderer: kernel '%s' uses subgroup operations with %" PRIu32
                          " threads per workgroup; PTX needs whole warps of 32",
                          kernel->name, threads);
    goto done;
  }
  c->basereg = poot_calloc((size_t)kernel->binding_count + 1, sizeof *c->basereg);
  if (!c->basereg) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "PTX renderer: out of memory");
    goto done;
  }
  emit_prologue(c);
  emit_body(c, target);
  if (c->r.err) {
    st = c->r.err;
    c->r.err = NULL;
    goto done;
  }
  EMIT("\tret;\n");
  if (c->fault_used) emit_fault_handler(c);
  st = poot_strbuf_status(&body);
  if (st) goto done;
  print_kernel(c, &body, out);
  st = poot_strbuf_status(out);

done:
  poot_free(c->basereg);
  poot__kir_regs_deinit(&c->r);
  poot_strbuf_deinit(&body);
  return st;
}
