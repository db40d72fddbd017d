/* tests/unit/kir/corpus.h — the corpus of KIR test kernels, shared by the
 * interpreter tests, the renderer tests and the Vulkan harness.
 *
 * Each case builds a kernel for a target (UNSUPPORTED when the target lacks
 * a type, atomic or subgroup op the case needs: the caller skips that case),
 * then prepares a run for a problem size: the buffers (inputs filled from a
 * seed, outputs initialised), the grid, the PUSH param values, and the
 * expected outputs computed by a plain C reference. A runner dispatches the
 * kernel over run.buffers (run.buffers[i] binds kernel->bindings[i]) with
 * run.grid and run.params, then calls poot_kir_corpus_compare.
 *
 * Typical use:
 *   size_t n; const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
 *   for each case c, for each c->sizes[j] != 0:
 *     poot_kir_kernel *k; st = c->build(c, &target, &k);   // UNSUPPORTED → skip
 *     poot_kir_corpus_run run; c->prepare(c, k, c->sizes[j], seed, &run);
 *     dispatch(k, run.grid, run.buffers, run.params [, error word]);
 *     poot_kir_corpus_compare(k, &run, error_word, exact_floats);
 *     poot_kir_corpus_run_deinit(&run); poot_kir_kernel_destroy(k);
 *
 * Checks: a case with run.expected_error_bits != 0 makes checks fail on
 * purpose. On an error-word target the word must equal those bits after the
 * dispatch (and the outputs still match, because such kernels guard their
 * own accesses); on a trap target the dispatch must fault with trap code
 * lowest_set_bit(expected_error_bits), and outputs are not compared. */
#ifndef POOT_TESTS_KIR_CORPUS_H
#define POOT_TESTS_KIR_CORPUS_H

#include "poot/kir.h"

#define POOT_KIR_CORPUS_MAX_BUFFERS 8
#define POOT_KIR_CORPUS_MAX_PARAMS 8
#define POOT_KIR_CORPUS_MAX_SIZES 4

typedef enum poot_kir_corpus_cmp {
  POOT_KIR_CORPUS_CMP_NONE = 0, /* an input: not compared */
  POOT_KIR_CORPUS_CMP_EXACT,    /* bit-exact on every target */
  /* floats: |got - want| <= abs_tol + rel_tol * |want| (elements decoded to
   * double; NaN must match NaN, infinities must match exactly). When
   * interp_exact is set the interpreter must match bit for bit (the
   * reference replays the kernel's operation order). */
  POOT_KIR_CORPUS_CMP_TOL,
} poot_kir_corpus_cmp;

typedef struct poot_kir_corpus_run {
  uint32_t size;                                        /* the problem size it was prepared for */
  uint32_t grid[3];                                     /* workgroups per dimension */
  size_t buffer_count;                                  /* == kernel->binding_count */
  poot_kir_buffer buffers[POOT_KIR_CORPUS_MAX_BUFFERS]; /* owned */
  void *expected[POOT_KIR_CORPUS_MAX_BUFFERS];          /* owned; NULL when not compared */
  poot_kir_corpus_cmp cmp[POOT_KIR_CORPUS_MAX_BUFFERS];
  double abs_tol[POOT_KIR_CORPUS_MAX_BUFFERS];
  double rel_tol[POOT_KIR_CORPUS_MAX_BUFFERS];
  bool interp_exact[POOT_KIR_CORPUS_MAX_BUFFERS];
  uint32_t params[POOT_KIR_CORPUS_MAX_PARAMS]; /* PUSH values as bits, by param index */
  size_t param_count;                          /* == kernel->param_count */
  uint32_t expected_error_bits;                /* see top */
} poot_kir_corpus_run;

typedef struct poot_kir_corpus_case poot_kir_corpus_case;
struct poot_kir_corpus_case {
  const char *name;    /* unique, identifier-like ("vadd_f16") */
  const char *about;   /* one line */
  uint32_t arg0, arg1; /* case-specific (e.g. source and destination types) */
  /* Builds the kernel for `target` (uses target->subgroup_size where the
   * kernel needs a subgroup size; NULL target = the interpreter at 32), then
   * verifies it against the target. UNSUPPORTED: skip the case there. */
  POOT_MUST_USE poot_status (*build)(const poot_kir_corpus_case *c, const poot_kir_target *target,
                                     poot_kir_kernel **out_kernel);
  /* Prepares inputs, grid, params and expected outputs for `size`. */
  POOT_MUST_USE poot_status (*prepare)(const poot_kir_corpus_case *c, const poot_kir_kernel *kernel,
                                       uint32_t size, uint64_t seed, poot_kir_corpus_run *out_run);
  uint32_t sizes[POOT_KIR_CORPUS_MAX_SIZES]; /* problem sizes; 0 ends the list */
};

/* The corpus (static storage; *out_count entries). */
const poot_kir_corpus_case *poot_kir_corpus(size_t *out_count);
/* The cases that need matrix fragments (corpus_mma.c): only for targets
 * where poot_kir_target_has_matrix, at subgroup size 32; not in the list
 * above. Static storage. */
const poot_kir_corpus_case *poot_kir_corpus_mma(size_t *out_count);
/* The case named `name`, or NULL. */
const poot_kir_corpus_case *poot_kir_corpus_find(const char *name);
void poot_kir_corpus_run_deinit(poot_kir_corpus_run *run); /* NULL-safe; frees buffers */
/* Compares run->buffers with run->expected. error_word: the dispatch's error
 * word (ignored when NULL). exact: also demand bit-exact floats where
 * interp_exact is set (the interpreter). INVALID_ARGUMENT naming the case's
 * kernel, binding, element, got and expected values on a mismatch. */
POOT_MUST_USE poot_status poot_kir_corpus_compare(const poot_kir_kernel *kernel,
                                                  const poot_kir_corpus_run *run,
                                                  const uint32_t *error_word, bool exact);

#endif
