/* render_amdgpu_math.h — private to the AMDGPU renderer: the module's
 * intrinsic declarations and the f32 helper functions (@poot.sin, @poot.cos,
 * @poot.tanh, @poot.erf, @poot.pow) that LLVM's intrinsics do not give to
 * the accuracy KIR needs, built with the constants of render_ptx_amdgpu.h.
 * The helpers are alwaysinline, so the backend's always-inline pass folds
 * them into the kernel even under llc. Errors: docs/kir-ptx-amdgpu.md. */
#ifndef POOT_KIR_RENDER_AMDGPU_MATH_H
#define POOT_KIR_RENDER_AMDGPU_MATH_H

#include "render_regs.h"

#define POOT__AMDGPU_MAX_DECLS 48

/* The intrinsics a module declares, once each, in first-use order (so the
 * output is stable). The texts are borrowed: static or in the core's arena. */
typedef struct poot__amdgpu_decls {
  const char *text[POOT__AMDGPU_MAX_DECLS];
  uint32_t count;
} poot__amdgpu_decls;

/* The helper functions a kernel calls. */
typedef struct poot__amdgpu_uses {
  bool sincos, tanh, erf, pow;
} poot__amdgpu_uses;

/* Adds a declaration unless it is there already. */
void poot__amdgpu_declare(poot__amdgpu_decls *d, const char *decl);
/* LLVM's spelling of an f32 constant: the hexadecimal double of its value. */
const char *poot__amdgpu_f32(poot__kir_regs *r, uint32_t bits);
/* Appends the definitions of the helpers in `uses` to o and declares the
 * intrinsics they call. */
void poot__amdgpu_helpers(poot__kir_regs *r, poot_strbuf *o, poot__amdgpu_decls *decls,
                          const poot__amdgpu_uses *uses);

#endif
