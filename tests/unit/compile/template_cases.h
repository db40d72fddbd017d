/* template_cases.h — the catalogue of graphs that reach every op and every
 * kernel template of the compiler (and each template's modes), shared by
 * compile_templates (planned for the KIR interpreter at several subgroup
 * sizes) and the device conformance suite exec_conformance_<backend>
 * (planned for a device through the engine). Both compare with poot_eval.
 *
 * Each case states two tolerances, relative to the largest oracle magnitude
 * of each compared tensor (atol = tol * max|oracle|), 0 meaning bit-exact:
 *  - interp_tol: on the interpreter, whose math is the oracle's C library,
 *    so only reassociation (cooperative reductions) can differ;
 *  - device_tol: on every device (DESIGN §9). 0 for integer, packed-byte,
 *    movement, rng, max/min/argmax, gather/scatter/dus/top_k work; otherwise
 *    derived in template_cases.c, next to each constant, from how much the
 *    kernels reassociate and from the device math bounds of
 *    docs/kir-glsl-wgsl.md and docs/kir-ptx-amdgpu.md (docs/verification.md,
 *    "Device conformance", collects them). */
#ifndef POOT_TESTS_COMPILE_TEMPLATE_CASES_H
#define POOT_TESTS_COMPILE_TEMPLATE_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "poot/graph.h"

/* interp_tol of a case the interpreter does not run (it only exists to
 * reach a device limit, such as a grid of more than 65,535 workgroups, at a
 * size the interpreter would take minutes over). */
#define TC_DEVICE_ONLY (-1.0)

typedef struct tc_builder tc_builder; /* internal to template_cases.c */
typedef struct tc_case tc_case;

struct tc_case {
  const char *name;  /* unique; the device skip list names cases by it */
  const char *group; /* the compile_templates test that runs it */
  void (*build)(tc_builder *b, const tc_case *c);
  double interp_tol; /* 0 = bit-exact; TC_DEVICE_ONLY = not on the interpreter */
  int64_t int_hi;    /* pt_inputs_make: integer inputs uniform in [0, int_hi) */
  double device_tol; /* 0 = bit-exact on every device */
  uint32_t exec_wg;  /* the workgroup size the device runs it with (0: default) */
  bool needs_i64;    /* runs only on targets with 64-bit integers */
  /* The device suite runs it on the device's own target only (its mode
   * needs the device's subgroups; without them it would repeat another
   * case's mode, here at a cost: llvmpipe takes minutes over it). */
  bool native_only;
  /* The case exists for a form the planner picks only on GPU targets (the
   * tiled prefill attention): on a simd_cpu device (lavapipe) it would run
   * another case's form, slowly, so the device suite reports it as not
   * applicable there (neither passed nor skipped). */
  bool gpu_forms_only;
  /* The derivation of device_tol assumes max|oracle| ≥ min_ref for every
   * float tensor it compares (0: no such premise); the device suite checks
   * it. */
  double min_ref;
  /* builder parameters (their meaning is the builder's) */
  poot_dtype dtype;
  int64_t d[4];
  int kind;
  uint32_t nd;
  int64_t rdims[3];
};

extern const tc_case tc_cases[];
extern const size_t tc_case_count;

/* Builds case c into a new verified graph (*out_graph; destroy with
 * poot_graph_destroy). Returns the first failing builder call's status
 * (*out_graph is NULL then). */
POOT_MUST_USE poot_status tc_case_build(const tc_case *c, poot_graph **out_graph);

/* The case named `name`, or NULL. */
const tc_case *tc_case_find(const char *name);

#endif
