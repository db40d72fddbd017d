/* render_regs.h — private to the PTX and AMDGPU renderers of KIR: the
 * register core both are written on.
 *
 * Both renderers turn every KIR value into target operands and then print
 * their language around them. What they share lives here: the renderer's
 * checks of its arguments, the register classes chosen per KIR scalar, the
 * numbering of registers per class and their names, the first register of
 * each value (its lanes follow) or, where the renderer names a value itself,
 * the value's operand text, the slots of the private arrays, the arena that
 * keeps operand text alive for the whole render, and the first error.
 *
 * PTX declares its registers (.pred %p, .b32 %r, … counted per class);
 * AMDGPU's LLVM IR has one class of SSA temporaries (%t) and names most
 * values by text (a constant is its literal, a loop value its phi), so it
 * uses value_name and numbers its private arrays by element. See
 * docs/kir-ptx-amdgpu.md, "The register core". */
#ifndef POOT_KIR_RENDER_REGS_H
#define POOT_KIR_RENDER_REGS_H

#include "kir_impl.h"

#define POOT__KIR_REG_CLASS_MAX 8
#define POOT__KIR_REG_SCRATCH 40

/* A renderer's register classes: the class of each scalar and the prefix
 * each class's registers are named with ("%r" -> %r0, %r1, …). */
typedef struct poot__kir_reg_classes {
  uint32_t count;                           /* <= POOT__KIR_REG_CLASS_MAX */
  const char *const *prefix;                /* count entries */
  uint8_t of_scalar[POOT_KIR_SCALAR_COUNT]; /* class of each scalar */
} poot__kir_reg_classes;

typedef struct poot__kir_regs {
  const poot_kir_kernel *k;
  const char *who; /* "PTX renderer": opens every message */
  const poot__kir_reg_classes *classes;
  uint32_t used[POOT__KIR_REG_CLASS_MAX]; /* registers handed out per class */
  uint32_t *value_reg;                    /* first register of each value (lanes follow) */
  const char **value_name; /* operand text of each value (where the renderer names values) */
  uint32_t *priv_first;    /* first register or slot of each private array */
  uint32_t priv_total;     /* slots of all private arrays (element numbering) */
  poot_status err;         /* the first error; the output is discarded after it */
  poot_arena names;        /* operand text lives until the render ends */
  char scratch[POOT__KIR_REG_SCRATCH]; /* stands in for a name when the arena is exhausted */
} poot__kir_regs;

/* The checks every renderer makes before it reads the kernel: no NULL
 * argument, a target of `lang` (`what` names it: "a PTX"), a kernel that
 * verifies for the target. `fn` names the public entry in messages.
 * Returns INVALID_ARGUMENT or the verifier's status. */
POOT_MUST_USE poot_status poot__kir_render_args(const poot_kir_kernel *kernel,
                                                const poot_kir_target *target,
                                                const poot_strbuf *out, poot_kir_lang lang,
                                                const char *fn, const char *what);

/* Sets up r for kernel k (borrowed) with the renderer's classes (borrowed,
 * static); named_values adds the value_name table. Returns OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__kir_regs_init(poot__kir_regs *r, const poot_kir_kernel *k,
                                              const char *who, const poot__kir_reg_classes *classes,
                                              bool named_values);
/* Frees everything r holds, r->err included. NULL-safe fields. */
void poot__kir_regs_deinit(poot__kir_regs *r);

/* Records the first error (a later one is dropped): "<who>: kernel 'k',
 * statement #id (op): why". */
void poot__kir_regs_fail(poot__kir_regs *r, poot_status_code code, const poot_kir_inst *in,
                         const char *why);
/* Records OUT_OF_MEMORY ("<who>: out of memory") unless an error is recorded. */
void poot__kir_regs_oom(poot__kir_regs *r);
/* Formats operand text into the arena; the scratch buffer after an error. */
const char *poot__kir_regs_fmt(poot__kir_regs *r, const char *f, ...) POOT_PRINTF(2, 3);

/* Hands out `count` consecutive registers of class cls; returns the first. */
static inline uint32_t poot__kir_regs_new(poot__kir_regs *r, uint32_t cls, uint32_t count) {
  uint32_t first = r->used[cls];
  r->used[cls] += count;
  return first;
}
/* The name of register n of class cls ("%r12"). */
const char *poot__kir_regs_name(poot__kir_regs *r, uint32_t cls, uint32_t n);
/* A fresh register of class cls, by name. */
const char *poot__kir_regs_temp(poot__kir_regs *r, uint32_t cls);
/* The class of a scalar. */
static inline uint32_t poot__kir_regs_class(const poot__kir_regs *r, poot_kir_scalar s) {
  return r->classes->of_scalar[s];
}
/* Gives the result of `in` (if any) registers for each of its lanes. */
void poot__kir_regs_def(poot__kir_regs *r, const poot_kir_inst *in);
/* The register of lane `lane` of value v (given by poot__kir_regs_def). */
const char *poot__kir_regs_lane(poot__kir_regs *r, poot_kir_value v, uint32_t lane);
/* Private arrays as registers: array i gets lanes x count registers of its
 * class (in array order, after whatever was handed out before). */
void poot__kir_regs_private_registers(poot__kir_regs *r);
/* Private arrays as slots: element e of array i is slot priv_first[i] + e,
 * priv_total slots in all. */
void poot__kir_regs_private_slots(poot__kir_regs *r);

/* Whether a block (nested blocks included) has a subgroup operation. */
bool poot__kir_block_uses_subgroups(const poot_kir_block *b);

#endif
