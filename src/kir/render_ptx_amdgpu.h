/* render_ptx_amdgpu.h — private to the PTX and AMDGPU renderers of KIR.
 *
 * Both renderers build the math functions that their targets lack from the
 * same few hardware approximations, with the same constants; this header holds
 * those constants so that the two renderings (and the unit test that bounds
 * their error by replaying the formulas in C) can never disagree. It also
 * states the fault-record protocol that a failed `check` follows on both
 * targets. See docs/kir-ptx-amdgpu.md for the derivations and the bounds. */
#ifndef POOT_KIR_RENDER_PTX_AMDGPU_H
#define POOT_KIR_RENDER_PTX_AMDGPU_H

#include <stdint.h>

/* ------------------------------------------------------------- constants */

/* Every constant is the exact bit pattern of an IEEE binary32 value, so that
 * both renderers print it exactly (PTX 0fXXXXXXXX, LLVM hexadecimal double). */

/* log2(e) split so that HI + LO is log2(e) to about 48 bits: exp(x) computes
 * the rounding error of x*HI with an fma and corrects 2^(x*HI) by
 * (1 + err*ln2), keeping exp within a few ulp over the whole range. */
#define POOT__KIR_LOG2E_HI 0x3FB8AA3Bu /* 1.44269502 */
#define POOT__KIR_LOG2E_LO 0x32A57060u /* 1.92596303e-8 */
#define POOT__KIR_LN2 0x3F317218u      /* 0.693147182 */
/* exp skips its correction where |x*log2e| >= 128 or is NaN (the result is
 * then 0, infinite or NaN already, and the correction could make inf*0). */
#define POOT__KIR_EXP_CORR_LIMIT 0x43000000u /* 128 */

/* 2*pi in three floats (Cody-Waite): sin/cos reduce x to r = x - k*2pi,
 * k = rint(x/(2pi)), with three fmas before the hardware approximation, which
 * is accurate only a few periods around zero. */
#define POOT__KIR_INV_2PI 0x3E22F983u /* 0.159154937 */
#define POOT__KIR_2PI_1 0x40C90FDBu   /* 6.28318548 */
#define POOT__KIR_2PI_2 0xB43BBD2Eu   /* -1.74845553e-7 */
#define POOT__KIR_2PI_3 0xA7F72CEDu   /* -6.86049804e-15 */

/* tanh for |x| < 0.55: x * P(x^2), the Taylor series of tanh(x)/x through
 * x^16; alternating with falling terms there, so truncation leaves less than
 * the first omitted term, 5.1e-9 relative. For |x| >= 0.55:
 * sign(x) * (1 - 2 / (exp(2|x|) + 1)), which no longer cancels badly. */
#define POOT__KIR_TANH_SMALL 0x3F0CCCCDu /* 0.55 */
#define POOT__KIR_TANH_NCOEF 9
static const uint32_t poot__kir_tanh_coef[POOT__KIR_TANH_NCOEF] = {
    /* coefficients of x^16, x^14, ..., x^0 (Horner order) */
    0x3A1AAC12u, 0xBABED1B2u, 0x3B6B69E8u, 0xBC11371Bu, 0x3CB327A4u,
    0xBD5D0DD1u, 0x3E088889u, 0xBEAAAAABu, 0x3F800000u,
};

/* erf for |x| < 1: x * Q(x^2), the Taylor series (2/sqrt(pi)) sum (-1)^n
 * x^(2n+1) / (n! (2n+1)) through n = 9; alternating with falling terms,
 * truncation error < 1.4e-9. For |x| >= 1: Abramowitz & Stegun 7.1.26,
 * erf(x) = 1 - t(a1 + t(a2 + t(a3 + t(a4 + t a5)))) exp(-x^2),
 * t = 1/(1 + p|x|), absolute error <= 1.5e-7 (their bound); x^2 is split
 * exactly by an fma so that exp(-x^2) loses nothing to it. */
#define POOT__KIR_ERF_NCOEF 10
static const uint32_t poot__kir_erf_coef[POOT__KIR_ERF_NCOEF] = {
    /* n = 9 .. 0 (Horner order) */
    0xB42FBA17u, 0x35DCF365u, 0xB77A692Eu, 0x38FCD193u, 0xBA6016DAu,
    0x3BAB2DE7u, 0xBCDC1672u, 0x3DE71791u, 0xBEC093A3u, 0x3F906EBBu,
};
#define POOT__KIR_ERF_P 0x3EA7BA05u /* 0.3275911 */
/* |x| is clamped to 10 in the |x| >= 1 branch (erf(x) rounds to 1 in f32
 * from 3.92 on) so that x = inf cannot make inf - inf; NaN passes through. */
#define POOT__KIR_ERF_CLAMP 0x41200000u /* 10 */
static const uint32_t poot__kir_erf_as[5] = {
    /* a5 .. a1 (Horner order): 1.061405429, -1.453152027, 1.421413741,
     * -0.284496736, 0.254829592 */
    0x3F87DC22u, 0xBFBA00E3u, 0x3FB5F0E3u, 0xBE91A98Eu, 0x3E827906u,
};
#define POOT__KIR_F32_ONE 0x3F800000u
#define POOT__KIR_F32_TWO 0x40000000u
#define POOT__KIR_F32_HALF 0x3F000000u

/* ------------------------------------------------------------ fault record */

/* A failed check on PTX and AMDGPU writes a fault record into host-mapped
 * memory whose device address is the kernel's last parameter, then traps.
 * Layout (little-endian u32 words):
 *   [0] state: 0 empty, 1 claimed (being written), 2 complete
 *   [1] trap code of the failed check
 *   [2] kernel id (the 32-bit id the renderer was given, see the header)
 *   [3] linear workgroup id of the faulting thread (for the message)
 * The first failing thread claims the record with a system-scope
 * compare-and-swap 0 -> 1, writes words 1..3, fences at system scope, stores
 * 2 into word 0 with release semantics, fences again, and traps. A thread
 * that loses the claim waits (bounded) until the state reads 2 so that its
 * trap cannot cut the winner's writes short, then traps too. The host clears
 * the record before a step and reads it after the trap poisons the context. */
#define POOT__KIR_FAULT_STATE_COMPLETE 2u
#define POOT__KIR_FAULT_SPIN_LIMIT 1000000u

#endif
