/* render_ptx_math.h — private to the PTX renderer: the f32 math functions
 * PTX has no instruction for (or only an approximation too coarse for f32),
 * built from the hardware approximations with the constants of
 * render_ptx_amdgpu.h. Each writes f(a) into the f32 register d (d may be
 * an operand; temporaries are fresh registers from r) and appends the
 * instructions to o. Errors: docs/kir-ptx-amdgpu.md, "Math". */
#ifndef POOT_KIR_RENDER_PTX_MATH_H
#define POOT_KIR_RENDER_PTX_MATH_H

#include "render_regs.h"

void poot__ptx_exp(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *a);
void poot__ptx_log(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *a);
/* sin or cos after a three-part Cody-Waite reduction by 2*pi. */
void poot__ptx_sincos(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *a, bool is_cos);
void poot__ptx_tanh(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *a);
void poot__ptx_erf(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *a);
/* pow(x, y) = 2^(y log2|x|), with the C library's answers for x < 0 and
 * integral y (sign of an odd power), y == 0 and x == 1 (both 1). */
void poot__ptx_pow(poot__kir_regs *r, poot_strbuf *o, const char *d, const char *x, const char *y);

#endif
