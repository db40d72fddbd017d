/* poot/eval.h — the CPU reference evaluator (DESIGN §2, §3, §9). */
#ifndef POOT_EVAL_H
#define POOT_EVAL_H

#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Philox4x32-10: out = philox(counter, key), ten rounds with the Random123
 * multipliers (0xD2511F53, 0xCD9E8D57) and Weyl key increments (0x9E3779B9,
 * 0xBB67AE85). Pure and thread safe. */
void poot_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);
/* A 32-bit Philox word as a float in [0, 1): (bits >> 8) * 2^-24. */
float poot_philox_uniform(uint32_t bits);

#ifdef __cplusplus
}
#endif

#endif /* POOT_EVAL_H */
