/* render_ptx_ops.h — extra KIR kernels for the PTX and AMDGPU renderer tests.
 *
 * The shared corpus (corpus.h) exercises the constructs that real kernels
 * use; these kernels add every op and type pair that a renderer must lower
 * (each math function on f32 and f16, every conversion pair, bitcasts,
 * atomics on both spaces, every subgroup op, bool logic, SLOT and PUSH
 * params, checks inside loops), so that the target compilers see them all. */
#ifndef POOT_TESTS_KIR_RENDER_PTX_OPS_H
#define POOT_TESTS_KIR_RENDER_PTX_OPS_H

#include "poot/kir.h"

#define RENDER_OPS_KERNEL_COUNT 4

/* Builds kernel i (0 <= i < RENDER_OPS_KERNEL_COUNT) for subgroup size sg
 * (0 = any); the caller destroys it. */
POOT_MUST_USE poot_status render_ops_kernel(uint32_t i, uint32_t sg, poot_kir_kernel **out);

#endif
