/* render_shader_lib.h — private to src/kir: the helper functions that the
 * GLSL and WGSL renderers paste into a kernel when it needs them (exact
 * f16/bf16 rounding, exact fma, tanh, erf, saturating float -> integer).
 * Each is GLSL or WGSL source text, NUL-terminated; the renderers emit each
 * at most once, after the declarations and before the entry point. */
#ifndef POOT_KIR_RENDER_SHADER_LIB_H
#define POOT_KIR_RENDER_SHADER_LIB_H

extern const char poot__kir_glsl_f16_narrow_helper[];
extern const char poot__kir_glsl_f16_widen_helper[];
extern const char poot__kir_glsl_f16_round_helpers[];
extern const char poot__kir_glsl_f16_narrow_native[];
extern const char poot__kir_glsl_f16_widen_native[];
extern const char poot__kir_glsl_bf16_helpers[];
extern const char poot__kir_glsl_tanh_helper[];
extern const char poot__kir_glsl_erf_helper[];
extern const char poot__kir_glsl_fma_helper[];
extern const char poot__kir_glsl_f2i_helper[];
extern const char poot__kir_glsl_f2u_helper[];
extern const char poot__kir_glsl_f2i64_helper[];

extern const char poot__kir_wgsl_f16_narrow_helper[];
extern const char poot__kir_wgsl_f16_widen_helper[];
extern const char poot__kir_wgsl_f16_round_helpers[];
extern const char poot__kir_wgsl_bf16_helpers[];
extern const char poot__kir_wgsl_tanh_helper[];
extern const char poot__kir_wgsl_erf_helper[];
extern const char poot__kir_wgsl_fma_helper[];
extern const char poot__kir_wgsl_f2i_helper[];
extern const char poot__kir_wgsl_f2i64_helper[];
extern const char poot__kir_wgsl_f2u_helper[];

#endif
