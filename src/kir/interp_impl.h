/* interp_impl.h — private to src/kir: the interpreter's lane semantics. */
#ifndef POOT_KIR_INTERP_IMPL_H
#define POOT_KIR_INTERP_IMPL_H

#include "kir_impl.h"

/* A lane holds its scalar's bit pattern, zero-extended to 64 bits. */
int64_t poot__kir_as_int(poot_kir_scalar s, uint64_t bits); /* sign/zero extended */
float poot__kir_as_float(poot_kir_scalar s, uint64_t bits); /* f16/bf16/f32 → f32 */
uint64_t poot__kir_from_int(poot_kir_scalar s, uint64_t v); /* wraps to the width */
uint64_t poot__kir_from_float(poot_kir_scalar s, float f);  /* rounds to nearest even */
/* CONVERT of one lane (kir.h's rules). */
uint64_t poot__kir_convert(poot_kir_scalar from, poot_kir_scalar to, uint64_t bits);
/* Unary/binary ops of one lane: OK, or INVALID_ARGUMENT saying why the op
 * is undefined there (integer division by zero, a shift past the width, an
 * op the type lacks). */
POOT_MUST_USE poot_status poot__kir_unary(poot_kir_op op, poot_kir_scalar s, uint64_t a,
                                          uint64_t *out);
POOT_MUST_USE poot_status poot__kir_binary(poot_kir_op op, poot_kir_scalar s, uint64_t a,
                                           uint64_t b, uint64_t *out);
uint64_t poot__kir_fma(poot_kir_scalar s, uint64_t a, uint64_t b, uint64_t c);
void poot__kir_bitcast(poot_kir_type from, const uint64_t *in, poot_kir_type to, uint64_t *out);

#endif
