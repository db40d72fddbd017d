/* kir_impl.h — private to src/kir: shared helpers of the builder, verifier,
 * printer and interpreter. Never included from outside this folder. */
#ifndef POOT_KIR_IMPL_H
#define POOT_KIR_IMPL_H

#include <stdio.h>

#include "poot/kir.h"

/* The declarations an inst is checked against (a view over a builder's
 * growing arrays or a finished kernel's). */
typedef struct poot__kir_decls {
  const char *kernel_name;
  const poot_kir_binding *bindings;
  uint32_t binding_count;
  const poot_kir_param *params;
  uint32_t param_count;
  const poot_kir_shared *shared;
  uint32_t shared_count;
  const poot_kir_private *privates;
  uint32_t private_count;
  const poot_kir_value_info *values;
  uint32_t value_count;
} poot__kir_decls;

/* Computes the result type of `inst` from its operands and fields (result
 * type for value ops; for STORE/PRIV_STORE the stored type; for others an
 * all-zero type). On a malformed inst writes a reason into err and returns
 * false. Does not look at scoping or targets. */
bool poot__kir_infer(const poot__kir_decls *decls, const poot_kir_inst *inst,
                     poot_kir_type *out_type, char *err, size_t err_size);

/* The private storage of a finished kernel. */
typedef struct poot__kir_kernel_impl {
  poot_arena arena; /* owns the kernel and everything it points to */
} poot__kir_kernel_impl;

/* One row of the op table (POOT_KIR_OPS): every per-op fact the builder,
 * verifier, printer, inference and renderers read. */
typedef struct poot__kir_op_row {
  const char *name; /* printed name, "add" */
  int8_t nargs;     /* fixed operand count, -1 when variable (VEC) */
  uint8_t cls;      /* poot_kir_op_class */
  uint8_t types;    /* poot_kir_type_rule */
} poot__kir_op_row;

/* The row of an op; NULL when op is not a poot_kir_op. */
const poot__kir_op_row *poot__kir_op_row_of(poot_kir_op op);
/* The class of an op; POOT_KIR_CLASS_COUNT when op is not a poot_kir_op
 * (renderers switch on it and fail in their default case). */
poot_kir_op_class poot__kir_op_class(poot_kir_op op);
/* Whether type t meets a type rule: for the rules up to SIGNED, t's scalar
 * is in the rule's set (any lanes); WORD, BOOL and INDEX also need a scalar. */
bool poot__kir_type_rule_allows(poot_kir_type_rule rule, poot_kir_type t);
/* How a message names what a rule admits ("f16 or f32"). */
const char *poot__kir_type_rule_words(poot_kir_type_rule rule);

/* Whether an op produces a value. */
bool poot__kir_op_has_result(poot_kir_op op);
/* Whether an op is arithmetic/compare/math (types must be arith types). */
bool poot__kir_op_is_arith(poot_kir_op op);
bool poot__kir_op_is_subgroup(poot_kir_op op);
bool poot__kir_op_is_atomic(poot_kir_op op);
poot_kir_atomic poot__kir_op_atomic_kind(poot_kir_op op);

/* Appends a type as text ("f32", "f32x4"). */
void poot__kir_type_print(poot_kir_type t, poot_strbuf *out);
/* Appends a constant's value as text for its type. */
void poot__kir_const_print(poot_kir_scalar s, uint64_t bits, poot_strbuf *out);

/* Whether statement `in` of kernel k reads only invariant bindings,
 * registers, private arrays and shared memory and writes no global memory,
 * so that it may run before the wait for the kernel before (kernel.c). */
bool poot__kir_runs_before_wait(const poot_kir_kernel *k, const poot_kir_inst *in);

/* Fills a decls view from a finished kernel. */
void poot__kir_decls_from_kernel(const poot_kir_kernel *k, poot__kir_decls *out);

#endif
