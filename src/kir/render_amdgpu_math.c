/* The f32 helper functions of the AMDGPU renderer (render_amdgpu_math.h). */
#include "render_amdgpu_math.h"

#include <inttypes.h>
#include <string.h>

#include "render_ptx_amdgpu.h"

/* Where a helper writes: operand text from the core, the module's
 * declarations, the helpers' text. */
typedef struct mctx {
  poot__kir_regs *r;
  poot__amdgpu_decls *decls;
  poot_strbuf *o;
} mctx;

void poot__amdgpu_declare(poot__amdgpu_decls *d, const char *decl) {
  for (uint32_t i = 0; i < d->count; i++)
    if (strcmp(d->text[i], decl) == 0) return;
  if (d->count < POOT__AMDGPU_MAX_DECLS) d->text[d->count++] = decl;
}

static void declare(mctx *c, const char *decl) {
  poot__amdgpu_declare(c->decls, decl);
}

/* LLVM spells a float constant as the hexadecimal double of its value. */
const char *poot__amdgpu_f32(poot__kir_regs *r, uint32_t bits) {
  float f = poot_f32_from_bits(bits);
  double d = (double)f;
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return poot__kir_regs_fmt(r, "0x%016" PRIX64, u);
}

static const char *f32c(mctx *c, uint32_t bits) {
  return poot__amdgpu_f32(c->r, bits);
}

/* sin and cos after a three-part Cody-Waite reduction by 2*pi. */
static void helper_sincos(mctx *c) {
  poot_strbuf *o = c->o;
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
                       cosine ? "cos" : "sin", cosine ? "cos" : "sin", f32c(c, POOT__KIR_INV_2PI));
    poot_strbuf_printf(o,
                       "  %%r1 = call float @llvm.fma.f32(float %%nk, float %s, float %%x)\n"
                       "  %%r2 = call float @llvm.fma.f32(float %%nk, float %s, float %%r1)\n"
                       "  %%r3 = call float @llvm.fma.f32(float %%nk, float %s, float %%r2)\n"
                       "  %%y = call float @llvm.%s.f32(float %%r3)\n"
                       "  ret float %%y\n}\n",
                       f32c(c, POOT__KIR_2PI_1), f32c(c, POOT__KIR_2PI_2), f32c(c, POOT__KIR_2PI_3),
                       cosine ? "cos" : "sin");
  }
}

/* tanh: an odd Taylor polynomial below 0.55, else 1 - 2/(exp(2|x|)+1). */
static void helper_tanh(mctx *c) {
  poot_strbuf *o = c->o;
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
    poot_strbuf_printf(o, "  %%p%d = call float @llvm.fma.f32(float %s, float %%x2, float %s)\n", i,
                       prev, f32c(c, poot__kir_tanh_coef[i]));
    prev = poot__kir_regs_fmt(c->r, "%%p%d", i);
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

/* erf: an odd Taylor polynomial below 1, else Abramowitz-Stegun 7.1.26. */
static void helper_erf(mctx *c) {
  poot_strbuf *o = c->o;
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
    poot_strbuf_printf(o, "  %%p%d = call float @llvm.fma.f32(float %s, float %%x2, float %s)\n", i,
                       prev, f32c(c, poot__kir_erf_coef[i]));
    prev = poot__kir_regs_fmt(c->r, "%%p%d", i);
  }
  poot_strbuf_printf(o,
                     "  %%small = fmul float %s, %%x\n"
                     "  %%axc = call float @llvm.minnum.f32(float %%ax, float %s)\n"
                     "  %%d = call float @llvm.fma.f32(float %%axc, float %s, float 1.0)\n"
                     "  %%t = fdiv float 1.0, %%d\n",
                     prev, f32c(c, POOT__KIR_ERF_CLAMP), f32c(c, POOT__KIR_ERF_P));
  prev = f32c(c, poot__kir_erf_as[0]);
  for (int i = 1; i < 5; i++) {
    poot_strbuf_printf(o, "  %%a%d = call float @llvm.fma.f32(float %s, float %%t, float %s)\n", i,
                       prev, f32c(c, poot__kir_erf_as[i]));
    prev = poot__kir_regs_fmt(c->r, "%%a%d", i);
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

/* pow with the C library's answers for x < 0, y == 0 and x == 1. */
static void helper_pow(mctx *c) {
  poot_strbuf *o = c->o;
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

void poot__amdgpu_helpers(poot__kir_regs *r, poot_strbuf *o, poot__amdgpu_decls *decls,
                          const poot__amdgpu_uses *uses) {
  mctx m = {r, decls, o}, *c = &m;
  if (uses->sincos) helper_sincos(c);
  if (uses->tanh) helper_tanh(c);
  if (uses->erf) helper_erf(c);
  if (uses->pow) helper_pow(c);
}
