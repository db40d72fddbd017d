/* corpus_impl.h — helpers shared by corpus.c and corpus_ops.c (tests only). */
#ifndef POOT_TESTS_KIR_CORPUS_IMPL_H
#define POOT_TESTS_KIR_CORPUS_IMPL_H

#include "corpus.h"

typedef poot_status (*kc_body_fn)(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                  const poot_kir_target *t, uint32_t sg);

uint64_t kc_rand(uint64_t *state);
float kc_randf(uint64_t *state, float lo, float hi);
/* Creates a builder, runs body, finishes and verifies against the target. */
POOT_MUST_USE poot_status kc_make(const char *name, uint32_t wx, uint32_t wy, uint32_t wz,
                                  uint32_t sg, kc_body_fn body, const poot_kir_corpus_case *c,
                                  const poot_kir_target *target, poot_kir_kernel **out);
uint32_t kc_sg(const poot_kir_target *t);
POOT_MUST_USE poot_status kc_run_init(poot_kir_corpus_run *r, const poot_kir_kernel *k,
                                      uint32_t size);
void *kc_buf(poot_kir_corpus_run *r, uint32_t i, size_t bytes);
/* Allocates expected[i] as a copy of the buffer's initial contents. */
void *kc_expect(poot_kir_corpus_run *r, uint32_t i, poot_kir_corpus_cmp cmp, double abs_tol,
                double rel_tol, bool interp_exact);
POOT_MUST_USE poot_status kc_oom(poot_kir_corpus_run *r);
uint32_t kc_f32u(float f);
uint64_t kc_enc_f(poot_kir_scalar s, float f);
float kc_dec_f(poot_kir_scalar s, uint64_t b);
void kc_put(poot_kir_scalar s, void *p, size_t i, uint64_t bits);
uint64_t kc_get(poot_kir_scalar s, const void *p, size_t i);
POOT_MUST_USE poot_status kc_binding(poot_kir_builder *b, const char *name, uint32_t binding,
                                     poot_kir_scalar elem, poot_kir_access access,
                                     uint32_t *out_ref);
POOT_MUST_USE poot_status kc_push(poot_kir_builder *b, const char *name, poot_kir_scalar type,
                                  poot_kir_value *out);
POOT_MUST_USE poot_status kc_u32(poot_kir_builder *b, uint32_t v, poot_kir_value *out);
POOT_MUST_USE poot_status kc_bin(poot_kir_builder *b, poot_kir_op op, poot_kir_value x,
                                 poot_kir_value y, poot_kir_value *out);
POOT_MUST_USE poot_status kc_guard(poot_kir_builder *b, poot_kir_value gid, poot_kir_value n);

/* The generated cases of corpus_ops.c (static storage). */
const poot_kir_corpus_case *poot__kir_corpus_ops(size_t *out_count);
/* K of the tiled GEMV for M rows. */
uint32_t poot__kir_corpus_gemv_k(uint32_t m);

#endif
