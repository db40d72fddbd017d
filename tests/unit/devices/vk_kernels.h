/* Small KIR kernels for the device tests (built with the KIR builder). */
#ifndef POOT_TESTS_DEVICES_VK_KERNELS_H
#define POOT_TESTS_DEVICES_VK_KERNELS_H

#include "poot/kir.h"

/* out[i] = in[i] * 3 + slots[slot_index] for i < n (push param 0); the slot
 * value is read from binding 2 at run time (a SLOT param).
 * Bindings: 0 in (u32 read), 1 out (u32 write), 2 slots (u32 read).
 * Workgroup 64. */
POOT_MUST_USE poot_status vkt_build_affine(uint32_t slot_index, poot_kir_kernel **out);

/* y[i] = exp(-x[i]^2) * s + x[i] * s for i < n (push 0), s = f32 slot 0 of
 * binding 2. Bindings: 0 x (f32 read), 1 y (f32 write), 2 slots (f32 read).
 * Chains can feed y into the next x. Workgroup 64. */
POOT_MUST_USE poot_status vkt_build_float(poot_kir_kernel **out);

/* out[i] = in[i] for i < n (push 0), with check(in[i] < limit, trap) where
 * limit is u32 slot 0 of binding 2: a gather-like bounds check. */
POOT_MUST_USE poot_status vkt_build_checked(uint32_t trap, poot_kir_kernel **out);

/* Dispatched over VKT_SPIN_GRID workgroups of one thread, each doing 60000
 * atomic increments of ctl[1] (minutes in all on lavapipe) unless ctl[0]
 * (binding 0, u32, read through an atomic) is non-zero when the workgroup
 * starts: then the rest of the grid drains in well under a second. Writes
 * an accumulator to out[0] (binding 1). */
#define VKT_SPIN_GRID_X 65535u
#define VKT_SPIN_GRID_Y 4u
POOT_MUST_USE poot_status vkt_build_spin(poot_kir_kernel **out);

/* out[i] = fma(a[i], b[i], c[i]) for i < n (push 0). Bindings: 0 a, 1 b,
 * 2 c (f32 read), 3 out (f32 write). Workgroup 64. */
POOT_MUST_USE poot_status vkt_build_fma(poot_kir_kernel **out);

#endif
