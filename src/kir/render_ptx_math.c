/* The f32 math of the PTX renderer (render_ptx_math.h). */
#include "render_ptx_math.h"

#include <inttypes.h>

#include "render_ptx_amdgpu.h"

/* Where a routine writes: registers from the core, text into the body. */
typedef struct mctx {
  poot__kir_regs *r;
  poot_strbuf *o;
} mctx;

#define EMIT(...) poot_strbuf_printf(c->o, __VA_ARGS__)

static const char *f32_lit(mctx *c, uint32_t bits) {
  return poot__kir_regs_fmt(c->r, "0f%08" PRIX32, bits);
}
/* Fresh temporaries of the f32 and the predicate class. */
static const char *ftmp(mctx *c) {
  return poot__kir_regs_temp(c->r, poot__kir_regs_class(c->r, POOT_KIR_F32));
}
static const char *ptmp(mctx *c) {
  return poot__kir_regs_temp(c->r, poot__kir_regs_class(c->r, POOT_KIR_BOOL));
}

void poot__ptx_exp(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *a) {
  mctx m = {regs, o}, *c = &m;
  const char *t = ftmp(c), *e = ftmp(c), *r = ftmp(c), *p = ptmp(c), *q = ftmp(c);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", t, a, f32_lit(c, POOT__KIR_LOG2E_HI));
  EMIT("\tneg.f32 \t%s, %s;\n", e, t);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", e, a, f32_lit(c, POOT__KIR_LOG2E_HI), e);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", e, a, f32_lit(c, POOT__KIR_LOG2E_LO), e);
  EMIT("\tex2.approx.f32 \t%s, %s;\n", r, t);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", q, e, f32_lit(c, POOT__KIR_LN2));
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", q, r, q, r);
  EMIT("\tabs.f32 \t%s, %s;\n", e, t);
  EMIT("\tsetp.lt.f32 \t%s, %s, %s;\n", p, e, f32_lit(c, POOT__KIR_EXP_CORR_LIMIT));
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", d, q, r, p);
}

void poot__ptx_log(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *a) {
  mctx m = {regs, o}, *c = &m;
  const char *t = ftmp(c);
  EMIT("\tlg2.approx.f32 \t%s, %s;\n", t, a);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", d, t, f32_lit(c, POOT__KIR_LN2));
}

void poot__ptx_sincos(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *a,
                      bool is_cos) {
  mctx m = {regs, o}, *c = &m;
  const char *k = ftmp(c), *r = ftmp(c);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", k, a, f32_lit(c, POOT__KIR_INV_2PI));
  EMIT("\tcvt.rni.f32.f32 \t%s, %s;\n", k, k);
  EMIT("\tneg.f32 \t%s, %s;\n", k, k);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", r, k, f32_lit(c, POOT__KIR_2PI_1), a);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", r, k, f32_lit(c, POOT__KIR_2PI_2), r);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", r, k, f32_lit(c, POOT__KIR_2PI_3), r);
  EMIT("\t%s.approx.f32 \t%s, %s;\n", is_cos ? "cos" : "sin", d, r);
}

void poot__ptx_tanh(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *a) {
  mctx m = {regs, o}, *c = &m;
  /* The hardware tanh (MUFU.TANH) has about 2^-11 relative error, which is
   * below the precision of f16 but not of f32; see the decision record. */
  const char *ax = ftmp(c), *x2 = ftmp(c), *p = ftmp(c), *e = ftmp(c), *q = ftmp(c),
             *small = ptmp(c);
  EMIT("\tabs.f32 \t%s, %s;\n", ax, a);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", x2, a, a);
  EMIT("\tmov.f32 \t%s, %s;\n", p, f32_lit(c, poot__kir_tanh_coef[0]));
  for (int i = 1; i < POOT__KIR_TANH_NCOEF; i++)
    EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", p, p, x2, f32_lit(c, poot__kir_tanh_coef[i]));
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", p, p, a);
  /* 1 - 2/(exp(2|x|)+1), with the sign of x copied back. */
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", e, ax, f32_lit(c, 0x4038AA3Bu)); /* 2*log2(e) */
  EMIT("\tex2.approx.f32 \t%s, %s;\n", e, e);
  EMIT("\tadd.rn.f32 \t%s, %s, %s;\n", e, e, f32_lit(c, POOT__KIR_F32_ONE));
  EMIT("\tdiv.rn.f32 \t%s, %s, %s;\n", q, f32_lit(c, POOT__KIR_F32_TWO), e);
  EMIT("\tsub.rn.f32 \t%s, %s, %s;\n", q, f32_lit(c, POOT__KIR_F32_ONE), q);
  EMIT("\tcopysign.f32 \t%s, %s, %s;\n", q, a, q);
  EMIT("\tsetp.lt.f32 \t%s, %s, %s;\n", small, ax, f32_lit(c, POOT__KIR_TANH_SMALL));
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", d, p, q, small);
}

void poot__ptx_erf(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *a) {
  mctx m = {regs, o}, *c = &m;
  const char *ax = ftmp(c), *x2 = ftmp(c), *p = ftmp(c), *t = ftmp(c), *q = ftmp(c), *hi = ftmp(c),
             *lo = ftmp(c), *e = ftmp(c), *small = ptmp(c);
  EMIT("\tabs.f32 \t%s, %s;\n", ax, a);
  /* |x| < 1: x * Q(x^2) */
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", x2, a, a);
  EMIT("\tmov.f32 \t%s, %s;\n", p, f32_lit(c, poot__kir_erf_coef[0]));
  for (int i = 1; i < POOT__KIR_ERF_NCOEF; i++)
    EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", p, p, x2, f32_lit(c, poot__kir_erf_coef[i]));
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", p, p, a);
  /* |x| >= 1: 1 - t*A(t)*exp(-x^2), t = 1/(1+p|x|), x^2 = hi + lo exactly;
   * |x| is clamped to 10 (erf is 1 in f32 from 3.92 on) so that infinity
   * cannot make inf - inf; NaN is passed through at the end. */
  EMIT("\tmin.f32 \t%s, %s, %s;\n", ax, ax, f32_lit(c, POOT__KIR_ERF_CLAMP));
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", t, ax, f32_lit(c, POOT__KIR_ERF_P),
       f32_lit(c, POOT__KIR_F32_ONE));
  EMIT("\trcp.rn.f32 \t%s, %s;\n", t, t);
  EMIT("\tmov.f32 \t%s, %s;\n", q, f32_lit(c, poot__kir_erf_as[0]));
  for (int i = 1; i < 5; i++)
    EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", q, q, t, f32_lit(c, poot__kir_erf_as[i]));
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", q, q, t);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", hi, ax, ax);
  EMIT("\tneg.f32 \t%s, %s;\n", lo, hi);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", lo, ax, ax, lo);
  EMIT("\tneg.f32 \t%s, %s;\n", hi, hi);
  poot__ptx_exp(c->r, c->o, e, hi);
  EMIT("\tneg.f32 \t%s, %s;\n", lo, lo);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", e, e, lo, e);
  EMIT("\tneg.f32 \t%s, %s;\n", q, q);
  EMIT("\tfma.rn.f32 \t%s, %s, %s, %s;\n", q, q, e, f32_lit(c, POOT__KIR_F32_ONE));
  EMIT("\tcopysign.f32 \t%s, %s, %s;\n", q, a, q);
  EMIT("\tsetp.lt.f32 \t%s, %s, %s;\n", small, ax, f32_lit(c, POOT__KIR_F32_ONE));
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", q, p, q, small);
  EMIT("\tsetp.nan.f32 \t%s, %s, %s;\n", small, a, a);
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", d, a, q, small);
}

void poot__ptx_pow(poot__kir_regs *regs, poot_strbuf *o, const char *d, const char *x,
                   const char *y) {
  mctx m = {regs, o}, *c = &m;
  const char *ax = ftmp(c), *l = ftmp(c), *r = ftmp(c), *yi = ftmp(c), *h = ftmp(c), *hi = ftmp(c),
             *neg = ptmp(c), *isint = ptmp(c), *odd = ptmp(c), *one = ptmp(c), *nr = ftmp(c);
  EMIT("\tabs.f32 \t%s, %s;\n", ax, x);
  EMIT("\tlg2.approx.f32 \t%s, %s;\n", l, ax);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", l, l, y);
  EMIT("\tex2.approx.f32 \t%s, %s;\n", r, l);
  EMIT("\tcvt.rzi.f32.f32 \t%s, %s;\n", yi, y);
  EMIT("\tsetp.eq.f32 \t%s, %s, %s;\n", isint, yi, y);
  EMIT("\tmul.rn.f32 \t%s, %s, %s;\n", h, y, f32_lit(c, POOT__KIR_F32_HALF));
  EMIT("\tcvt.rzi.f32.f32 \t%s, %s;\n", hi, h);
  EMIT("\tsetp.ne.and.f32 \t%s, %s, %s, %s;\n", odd, hi, h, isint);
  EMIT("\tneg.f32 \t%s, %s;\n", nr, r);
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", nr, nr, r, odd);
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", nr, nr, f32_lit(c, 0x7FFFFFFFu), isint);
  EMIT("\tsetp.lt.f32 \t%s, %s, %s;\n", neg, x, f32_lit(c, 0));
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", r, nr, r, neg);
  EMIT("\tsetp.eq.f32 \t%s, %s, %s;\n", one, y, f32_lit(c, 0));
  EMIT("\tsetp.eq.or.f32 \t%s, %s, %s, %s;\n", one, x, f32_lit(c, POOT__KIR_F32_ONE), one);
  EMIT("\tselp.f32 \t%s, %s, %s, %s;\n", d, f32_lit(c, POOT__KIR_F32_ONE), r, one);
}
