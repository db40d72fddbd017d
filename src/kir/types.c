/* KIR types, op table and the type rules shared by builder and verifier. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "kir_impl.h"

static const char *const scalar_names[POOT_KIR_SCALAR_COUNT] = {
    "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "f16", "bf16", "f32"};
static const uint8_t scalar_sizes[POOT_KIR_SCALAR_COUNT] = {1, 1, 1, 2, 2, 4, 4, 8, 2, 2, 4};

size_t poot_kir_scalar_size(poot_kir_scalar s) {
  return (unsigned)s < POOT_KIR_SCALAR_COUNT ? scalar_sizes[s] : 0;
}

const char *poot_kir_scalar_name(poot_kir_scalar s) {
  return (unsigned)s < POOT_KIR_SCALAR_COUNT ? scalar_names[s] : "?";
}

bool poot_kir_scalar_is_float(poot_kir_scalar s) {
  return s == POOT_KIR_F16 || s == POOT_KIR_BF16 || s == POOT_KIR_F32;
}

bool poot_kir_scalar_is_signed(poot_kir_scalar s) {
  return s == POOT_KIR_I8 || s == POOT_KIR_I16 || s == POOT_KIR_I32 || s == POOT_KIR_I64 ||
         poot_kir_scalar_is_float(s);
}

bool poot_kir_scalar_is_int(poot_kir_scalar s) {
  return s >= POOT_KIR_I8 && s <= POOT_KIR_I64;
}

bool poot_kir_scalar_from_name(const char *name, poot_kir_scalar *out) {
  for (int i = 0; i < POOT_KIR_SCALAR_COUNT; i++) {
    if (strcmp(name, scalar_names[i]) == 0) {
      *out = (poot_kir_scalar)i;
      return true;
    }
  }
  return false;
}

/* The op table: one row per POOT_KIR_OPS entry. */
static const poot__kir_op_row op_rows[POOT_KIR_OP_COUNT] = {
#define X(name, str, nargs, cls, types) {str, nargs, POOT_KIR_CLASS_##cls, POOT_KIR_TYPES_##types},
    POOT_KIR_OPS(X)
#undef X
};

const poot__kir_op_row *poot__kir_op_row_of(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? &op_rows[op] : NULL;
}

poot_kir_op_class poot__kir_op_class(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? (poot_kir_op_class)op_rows[op].cls
                                          : POOT_KIR_CLASS_COUNT;
}

const char *poot_kir_op_name(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? op_rows[op].name : "?";
}

int poot_kir_op_arg_count(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? op_rows[op].nargs : 0;
}

#define SB(s) POOT_KIR_SCALAR_BIT(POOT_KIR_##s)
/* The scalars each type rule admits, and how a message names them. */
static const struct {
  uint32_t scalars;
  const char *words;
} type_rules[POOT_KIR_TYPES_COUNT] = {
    [POOT_KIR_TYPES_ANY] = {POOT_KIR_ALL_STORAGE_TYPES | 1u, "any type"},
    [POOT_KIR_TYPES_ARITH] = {SB(I32) | SB(U32) | SB(I64) | SB(F16) | SB(F32),
                              "i32/u32/i64/f16/f32"},
    [POOT_KIR_TYPES_INT] = {SB(I32) | SB(U32) | SB(I64), "an integer"},
    [POOT_KIR_TYPES_INT_BOOL] = {SB(I32) | SB(U32) | SB(I64) | SB(BOOL), "an integer or bool"},
    [POOT_KIR_TYPES_ARITH_BOOL] = {SB(I32) | SB(U32) | SB(I64) | SB(F16) | SB(F32) | SB(BOOL),
                                   "i32/u32/i64/f16/f32 or bool"},
    [POOT_KIR_TYPES_SIGNED] = {SB(I32) | SB(I64) | SB(F16) | SB(F32), "a signed integer or float"},
    [POOT_KIR_TYPES_FLOAT] = {SB(F16) | SB(F32), "f16 or f32"},
    [POOT_KIR_TYPES_WORD] = {SB(U32) | SB(I32) | SB(F32), "a u32, i32 or f32 scalar"},
    [POOT_KIR_TYPES_BOOL] = {SB(BOOL), "bool"},
    [POOT_KIR_TYPES_INDEX] = {SB(U32) | SB(I32), "u32 or i32"},
};
#undef SB

bool poot__kir_type_rule_allows(poot_kir_type_rule rule, poot_kir_type t) {
  if ((unsigned)rule >= POOT_KIR_TYPES_COUNT || t.scalar >= POOT_KIR_SCALAR_COUNT) return false;
  if (!(type_rules[rule].scalars & POOT_KIR_SCALAR_BIT(t.scalar))) return false;
  /* The rules from WORD on are about one scalar; the others about lanes' scalars. */
  if (rule == POOT_KIR_TYPES_WORD) return t.lanes == 1 && t.frag == 0;
  if (rule >= POOT_KIR_TYPES_BOOL) return t.lanes == 1;
  return true;
}

const char *poot__kir_type_rule_words(poot_kir_type_rule rule) {
  return (unsigned)rule < POOT_KIR_TYPES_COUNT ? type_rules[rule].words : "?";
}

static const char *const builtin_names[POOT_KIR_BUILTIN_COUNT] = {
    "workgroup_id", "num_workgroups", "local_id",      "local_size",
    "local_index",  "subgroup_id",    "subgroup_lane", "subgroup_size"};

const char *poot_kir_builtin_name(poot_kir_builtin b) {
  return (unsigned)b < POOT_KIR_BUILTIN_COUNT ? builtin_names[b] : "?";
}

bool poot__kir_op_has_result(poot_kir_op op) {
  switch (poot__kir_op_class(op)) {
    case POOT_KIR_CLASS_STORE:
    case POOT_KIR_CLASS_PRIV_STORE:
    case POOT_KIR_CLASS_BARRIER:
    case POOT_KIR_CLASS_CHECK:
    case POOT_KIR_CLASS_IF:
    case POOT_KIR_CLASS_ASYNC:
      return false;
    default:
      return true; /* FOR defines its induction value */
  }
}

bool poot__kir_op_is_arith(poot_kir_op op) {
  poot_kir_op_class c = poot__kir_op_class(op);
  return c == POOT_KIR_CLASS_UNARY || c == POOT_KIR_CLASS_BINARY || c == POOT_KIR_CLASS_COMPARE ||
         c == POOT_KIR_CLASS_FMA;
}

bool poot__kir_op_is_subgroup(poot_kir_op op) {
  poot_kir_op_class c = poot__kir_op_class(op);
  return c == POOT_KIR_CLASS_SUBGROUP || c == POOT_KIR_CLASS_MATRIX;
}

bool poot__kir_op_is_atomic(poot_kir_op op) {
  return poot__kir_op_class(op) == POOT_KIR_CLASS_ATOMIC;
}

poot_kir_atomic poot__kir_op_atomic_kind(poot_kir_op op) {
  return (poot_kir_atomic)(op - POOT_KIR_OP_ATOMIC_ADD);
}

void poot__kir_type_print(poot_kir_type t, poot_strbuf *out) {
  poot_strbuf_puts(out, poot_kir_scalar_name((poot_kir_scalar)t.scalar));
  if (t.lanes != 1) poot_strbuf_printf(out, "x%u", (unsigned)t.lanes);
}

void poot__kir_const_print(poot_kir_scalar s, uint64_t bits, poot_strbuf *out) {
  switch (s) {
    case POOT_KIR_BOOL:
      poot_strbuf_puts(out, bits ? "true" : "false");
      return;
    case POOT_KIR_I8:
      poot_strbuf_printf(out, "%d", (int)(int8_t)bits);
      return;
    case POOT_KIR_I16:
      poot_strbuf_printf(out, "%d", (int)(int16_t)bits);
      return;
    case POOT_KIR_I32:
      poot_strbuf_printf(out, "%" PRId32, (int32_t)bits);
      return;
    case POOT_KIR_I64:
      poot_strbuf_printf(out, "%" PRId64, (int64_t)bits);
      return;
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      poot_strbuf_printf(out, "%" PRIu64, bits);
      return;
    case POOT_KIR_F16:
      /* Floats print their exact bit pattern so the text (and hash) is exact. */
      poot_strbuf_printf(out, "0x%04x", (unsigned)(bits & 0xffff));
      return;
    case POOT_KIR_BF16:
      poot_strbuf_printf(out, "0x%04x", (unsigned)(bits & 0xffff));
      return;
    case POOT_KIR_F32:
      poot_strbuf_printf(out, "0x%08x", (unsigned)(bits & 0xffffffffu));
      return;
    default:
      poot_strbuf_puts(out, "?");
  }
}

void poot__kir_decls_from_kernel(const poot_kir_kernel *k, poot__kir_decls *out) {
  out->kernel_name = k->name;
  out->bindings = k->bindings;
  out->binding_count = k->binding_count;
  out->params = k->params;
  out->param_count = k->param_count;
  out->shared = k->shared;
  out->shared_count = k->shared_count;
  out->privates = k->privates;
  out->private_count = k->private_count;
  out->values = k->values;
  out->value_count = k->value_count;
}

/* ------------------------------------------------------------ type rules */

static bool fail(char *err, size_t n, const char *fmt, ...) POOT_PRINTF(3, 4);
static bool fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return false;
}

static const char *tname(poot_kir_type t, char *buf, size_t n) {
  if (t.lanes == 1)
    snprintf(buf, n, "%s", poot_kir_scalar_name((poot_kir_scalar)t.scalar));
  else
    snprintf(buf, n, "%sx%u", poot_kir_scalar_name((poot_kir_scalar)t.scalar), (unsigned)t.lanes);
  return buf;
}

static bool is_index(poot_kir_type t) {
  return poot__kir_type_rule_allows(POOT_KIR_TYPES_INDEX, t);
}
static bool valid_type(poot_kir_type t) {
  return t.scalar < POOT_KIR_SCALAR_COUNT && (t.lanes == 1 || t.lanes == 2 || t.lanes == 4) &&
         t.frag == 0;
}

/* Memory reference shared by LOAD/STORE/ATOMIC: returns the element type. */
static bool mem_ref(const poot__kir_decls *d, const poot_kir_inst *in, bool write, bool read,
                    poot_kir_scalar *elem, uint32_t *align, char *err, size_t n) {
  *elem = (poot_kir_scalar)0;
  *align = 0;
  if (in->space == POOT_KIR_SPACE_GLOBAL) {
    if (in->ref >= d->binding_count)
      return fail(err, n, "binding position %u out of range (%u bindings)", in->ref,
                  d->binding_count);
    const poot_kir_binding *bd = &d->bindings[in->ref];
    if (write && !(bd->access & POOT_KIR_ACCESS_WRITE))
      return fail(err, n, "binding '%s' is read-only", bd->name);
    if (read && !(bd->access & POOT_KIR_ACCESS_READ))
      return fail(err, n, "binding '%s' is write-only", bd->name);
    *elem = bd->elem;
    *align = bd->align;
    return true;
  }
  if (in->space == POOT_KIR_SPACE_SHARED) {
    if (in->ref >= d->shared_count)
      return fail(err, n, "shared array %u out of range (%u shared arrays)", in->ref,
                  d->shared_count);
    *elem = d->shared[in->ref].elem;
    *align = 16;
    return true;
  }
  return fail(err, n, "unknown memory space %d", (int)in->space);
}

/* What one inference reads and writes: the inst, its operands' types and
 * the message buffer. */
typedef struct infer_ctx {
  const poot__kir_decls *d;
  const poot_kir_inst *in;
  poot_kir_type at[POOT_KIR_MAX_ARGS]; /* operand types */
  poot_kir_type t0;                    /* operand 0's type (all zero without operands) */
  poot_kir_scalar s0;
  poot_kir_type *out;
  char *err;
  size_t n;
  char b1[32], b2[32], b3[32]; /* type names for messages */
} infer_ctx;

#define T1(t) tname((t), x->b1, sizeof x->b1)
#define T2(t) tname((t), x->b2, sizeof x->b2)
#define T3(t) tname((t), x->b3, sizeof x->b3)

static poot_kir_type_rule rule_of(const infer_ctx *x) {
  return (poot_kir_type_rule)poot__kir_op_row_of(x->in->op)->types;
}
static const char *op_name(const infer_ctx *x) {
  return poot_kir_op_name(x->in->op);
}

static bool infer_const(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (!valid_type(in->type) || in->type.lanes != 1)
    return fail(x->err, x->n, "constant must have a scalar type");
  size_t bits = poot_kir_scalar_size((poot_kir_scalar)in->type.scalar) * 8;
  if (in->type.scalar == POOT_KIR_BOOL) bits = 1;
  if (bits < 64 && (in->imm >> bits) != 0)
    return fail(x->err, x->n, "constant bits 0x%llx do not fit %s", (unsigned long long)in->imm,
                T1(in->type));
  *x->out = in->type;
  return true;
}

static bool infer_builtin(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (in->ref >= POOT_KIR_BUILTIN_COUNT) return fail(x->err, x->n, "unknown builtin %u", in->ref);
  if (in->ref <= POOT_KIR_BUILTIN_LOCAL_SIZE ? in->imm > 2 : in->imm != 0)
    return fail(x->err, x->n, "builtin %s has no dimension %llu",
                poot_kir_builtin_name((poot_kir_builtin)in->ref), (unsigned long long)in->imm);
  *x->out = poot_kir_type_make(POOT_KIR_U32, 1);
  return true;
}

static bool infer_param(infer_ctx *x) {
  if (x->in->ref >= x->d->param_count)
    return fail(x->err, x->n, "param %u out of range (%u params)", x->in->ref, x->d->param_count);
  *x->out = poot_kir_type_make(x->d->params[x->in->ref].type, 1);
  return true;
}

static bool infer_unary(infer_ctx *x) {
  if (!poot__kir_type_rule_allows(rule_of(x), x->t0))
    return fail(x->err, x->n, "%s needs %s, got %s", op_name(x),
                poot__kir_type_rule_words(rule_of(x)), T1(x->t0));
  *x->out = x->t0;
  return true;
}

/* BINARY and COMPARE: two operands of one type. */
static bool infer_binary(infer_ctx *x) {
  if (!poot_kir_type_eq(x->at[0], x->at[1]))
    return fail(x->err, x->n, "type mismatch in %s: %s vs %s", op_name(x), T1(x->at[0]),
                T2(x->at[1]));
  if (!poot__kir_type_rule_allows(rule_of(x), x->t0))
    return fail(x->err, x->n, "%s is not defined on %s", op_name(x), T1(x->t0));
  if (poot__kir_op_class(x->in->op) == POOT_KIR_CLASS_COMPARE)
    *x->out = poot_kir_type_make(POOT_KIR_BOOL, x->t0.lanes);
  else
    *x->out = x->t0;
  return true;
}

static bool infer_select(infer_ctx *x) {
  const poot_kir_type *at = x->at;
  if (at[0].scalar != POOT_KIR_BOOL || (at[0].lanes != 1 && at[0].lanes != at[1].lanes))
    return fail(x->err, x->n,
                "select condition must be bool or bool x lanes of the operands, got %s", T1(at[0]));
  if (!poot_kir_type_eq(at[1], at[2]))
    return fail(x->err, x->n, "type mismatch in select: %s vs %s", T1(at[1]), T2(at[2]));
  *x->out = at[1];
  return true;
}

static bool infer_fma(infer_ctx *x) {
  const poot_kir_type *at = x->at;
  if (!poot_kir_type_eq(at[0], at[1]) || !poot_kir_type_eq(at[0], at[2]))
    return fail(x->err, x->n, "type mismatch in fma: %s, %s, %s", T1(at[0]), T2(at[1]), T3(at[2]));
  return infer_unary(x);
}

/* DOT4_I8: two u32/i32 words of four signed bytes, an i32 accumulator. */
static bool infer_dot4(infer_ctx *x) {
  const poot_kir_type *at = x->at;
  poot_kir_type i32 = poot_kir_type_make(POOT_KIR_I32, 1);
  if (!poot__kir_type_rule_allows(rule_of(x), at[0]) ||
      !poot__kir_type_rule_allows(rule_of(x), at[1]) || !poot_kir_type_eq(at[2], i32))
    return fail(x->err, x->n, "dot4_i8 needs two u32/i32 words and an i32 sum, got %s, %s, %s",
                T1(at[0]), T2(at[1]), T3(at[2]));
  *x->out = i32;
  return true;
}

static bool infer_convert(infer_ctx *x) {
  if (!valid_type(x->in->type) || x->in->type.lanes != x->t0.lanes)
    return fail(x->err, x->n, "convert to %s from %s: lanes must match", T1(x->in->type),
                T2(x->t0));
  *x->out = x->in->type;
  return true;
}

static bool infer_bitcast(infer_ctx *x) {
  poot_kir_type to = x->in->type;
  if (!valid_type(to)) return fail(x->err, x->n, "bitcast to an invalid type");
  if (to.scalar == POOT_KIR_BOOL || x->s0 == POOT_KIR_BOOL)
    return fail(x->err, x->n, "bitcast of bool is not defined");
  size_t a = poot_kir_scalar_size(x->s0) * x->t0.lanes;
  size_t c = poot_kir_scalar_size((poot_kir_scalar)to.scalar) * to.lanes;
  if (a != c)
    return fail(x->err, x->n, "bitcast from %s (%zu bytes) to %s (%zu bytes): sizes differ",
                T1(x->t0), a, T2(to), c);
  *x->out = to;
  return true;
}

/* SPLAT, VEC, EXTRACT. */
static bool infer_lanes(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  switch (in->op) {
    case POOT_KIR_OP_SPLAT:
      if (x->t0.lanes != 1) return fail(x->err, x->n, "splat needs a scalar, got %s", T1(x->t0));
      if (in->type.lanes != 2 && in->type.lanes != 4)
        return fail(x->err, x->n, "splat to %u lanes (2 or 4)", (unsigned)in->type.lanes);
      *x->out = poot_kir_type_make(x->s0, in->type.lanes);
      return true;
    case POOT_KIR_OP_VEC:
      if (in->arg_count != 2 && in->arg_count != 4)
        return fail(x->err, x->n, "vec takes 2 or 4 scalars, got %u", in->arg_count);
      for (uint32_t i = 0; i < in->arg_count; i++)
        if (x->at[i].lanes != 1 || x->at[i].scalar != x->s0)
          return fail(x->err, x->n, "vec element %u is %s, expected %s", i, T1(x->at[i]),
                      poot_kir_scalar_name(x->s0));
      *x->out = poot_kir_type_make(x->s0, in->arg_count);
      return true;
    default: /* EXTRACT */
      if (x->t0.lanes == 1 || in->imm >= x->t0.lanes)
        return fail(x->err, x->n, "extract of lane %llu from %s", (unsigned long long)in->imm,
                    T1(x->t0));
      *x->out = poot_kir_type_make(x->s0, 1);
      return true;
  }
}

/* LOAD and STORE. */
static bool infer_memory(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  bool st = poot__kir_op_class(in->op) == POOT_KIR_CLASS_STORE;
  poot_kir_scalar elem;
  uint32_t align;
  if (!mem_ref(x->d, in, st, !st, &elem, &align, x->err, x->n)) return false;
  if (!is_index(x->at[0]))
    return fail(x->err, x->n, "index must be u32 or i32, got %s", T1(x->at[0]));
  uint32_t lanes = st ? x->at[1].lanes : in->type.lanes;
  if (lanes != 1 && lanes != 2 && lanes != 4)
    return fail(x->err, x->n, "%s of %u lanes (1, 2 or 4)", op_name(x), lanes);
  if (st && x->at[1].scalar != elem)
    return fail(x->err, x->n, "store of %s into %s elements", T1(x->at[1]),
                poot_kir_scalar_name(elem));
  if (!st && in->type.scalar != elem)
    return fail(x->err, x->n, "load of %s from %s elements", T1(in->type),
                poot_kir_scalar_name(elem));
  if (align && align < lanes * poot_kir_scalar_size(elem))
    return fail(x->err, x->n, "a %u-lane access needs %zu-byte alignment; the binding has %u",
                lanes, lanes * poot_kir_scalar_size(elem), align);
  *x->out = poot_kir_type_make(elem, lanes);
  return true;
}

/* PRIV_LOAD and PRIV_STORE. */
static bool infer_priv(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (in->ref >= x->d->private_count)
    return fail(x->err, x->n, "private array %u out of range (%u)", in->ref, x->d->private_count);
  const poot_kir_private *p = &x->d->privates[in->ref];
  if (in->imm >= p->count)
    return fail(x->err, x->n, "element %llu of private '%s' out of range (%u elements)",
                (unsigned long long)in->imm, p->name, p->count);
  if (in->op == POOT_KIR_OP_PRIV_STORE && !poot_kir_type_eq(x->at[0], p->type))
    return fail(x->err, x->n, "store of %s into private '%s' of %s", T1(x->at[0]), p->name,
                T2(p->type));
  *x->out = p->type;
  return true;
}

static bool infer_atomic(infer_ctx *x) {
  poot_kir_scalar elem;
  uint32_t align;
  if (!mem_ref(x->d, x->in, true, true, &elem, &align, x->err, x->n)) return false;
  if (!is_index(x->at[0]))
    return fail(x->err, x->n, "index must be u32 or i32, got %s", T1(x->at[0]));
  poot_kir_type et = poot_kir_type_make(elem, 1);
  if (!poot__kir_type_rule_allows(rule_of(x), et))
    return fail(x->err, x->n, "atomics need u32, i32 or f32 elements, got %s",
                poot_kir_scalar_name(elem));
  for (uint32_t i = 1; i < x->in->arg_count; i++)
    if (!poot_kir_type_eq(x->at[i], et))
      return fail(x->err, x->n, "atomic operand %u is %s, expected %s", i, T1(x->at[i]),
                  poot_kir_scalar_name(elem));
  *x->out = et;
  return true;
}

static bool infer_subgroup(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (!poot__kir_type_rule_allows(rule_of(x), x->t0))
    return fail(x->err, x->n, "%s needs %s, got %s", op_name(x),
                poot__kir_type_rule_words(rule_of(x)), T1(x->t0));
  if (in->op == POOT_KIR_OP_SG_SHUFFLE && !(x->at[1].lanes == 1 && x->at[1].scalar == POOT_KIR_U32))
    return fail(x->err, x->n, "shuffle lane must be u32, got %s", T1(x->at[1]));
  if ((in->op == POOT_KIR_OP_SG_SHUFFLE_XOR || in->op == POOT_KIR_OP_SG_BROADCAST) &&
      in->imm >= 128)
    return fail(x->err, x->n, "%s lane/mask %llu out of range (< 128)", op_name(x),
                (unsigned long long)in->imm);
  *x->out = x->t0;
  return true;
}

static bool infer_barrier(infer_ctx *x) {
  (void)x;
  return true;
}

/* CHECK and IF. */
static bool infer_cond(infer_ctx *x) {
  if (!poot__kir_type_rule_allows(rule_of(x), x->t0))
    return fail(x->err, x->n, "%s condition must be bool, got %s", op_name(x), T1(x->t0));
  if (x->in->op == POOT_KIR_OP_CHECK && x->in->imm > 31)
    return fail(x->err, x->n, "trap code %llu out of range (0..31)",
                (unsigned long long)x->in->imm);
  return true;
}

static bool infer_for(infer_ctx *x) {
  const poot_kir_type *at = x->at;
  if (!is_index(at[0]) || !poot_kir_type_eq(at[0], at[1]) || !poot_kir_type_eq(at[0], at[2]))
    return fail(x->err, x->n, "for bounds must share one type, u32 or i32: %s, %s, %s", T1(at[0]),
                T2(at[1]), T3(at[2]));
  *x->out = at[0];
  return true;
}

static bool is_b16(poot_kir_scalar s) {
  return s == POOT_KIR_F16 || s == POOT_KIR_BF16 || s == POOT_KIR_U16 || s == POOT_KIR_I16;
}

static bool type_is(poot_kir_type t, poot_kir_scalar s, uint32_t lanes) {
  return t.frag == 0 && t.scalar == s && t.lanes == lanes;
}

/* MMA_LOAD and MMA (kir.h, "matrix fragments"). */
static bool infer_matrix(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (in->op == POOT_KIR_OP_MMA_LOAD) {
    if (in->space != POOT_KIR_SPACE_SHARED)
      return fail(x->err, x->n, "mma_load reads shared memory only");
    poot_kir_scalar elem;
    uint32_t align;
    if (!mem_ref(x->d, in, false, true, &elem, &align, x->err, x->n)) return false;
    if (!is_b16(elem))
      return fail(x->err, x->n, "mma_load needs a shared array of 16-bit elements, got %s",
                  poot_kir_scalar_name(elem));
    if (!is_index(x->at[0]))
      return fail(x->err, x->n, "index must be u32 or i32, got %s", T1(x->at[0]));
    if (in->imm > 1) return fail(x->err, x->n, "mma_load flags %llu (0 or 1)",
                                 (unsigned long long)in->imm);
    *x->out = poot_kir_type_make(POOT_KIR_U32, 4);
    return true;
  }
  if (in->imm != POOT_KIR_F16 && in->imm != POOT_KIR_BF16)
    return fail(x->err, x->n, "mma operands are f16 or bf16, not %s",
                poot_kir_scalar_name((poot_kir_scalar)in->imm));
  if (!type_is(x->at[0], POOT_KIR_U32, 4) || !type_is(x->at[1], POOT_KIR_U32, 2) ||
      !type_is(x->at[2], POOT_KIR_F32, 4))
    return fail(x->err, x->n, "mma takes (u32x4, u32x2, f32x4), got (%s, %s, %s)", T1(x->at[0]),
                T2(x->at[1]), T3(x->at[2]));
  *x->out = poot_kir_type_make(POOT_KIR_F32, 4);
  return true;
}

/* ASYNC_COPY, ASYNC_COMMIT and ASYNC_WAIT. */
static bool infer_async(infer_ctx *x) {
  const poot_kir_inst *in = x->in;
  if (in->op == POOT_KIR_OP_ASYNC_COMMIT) return true;
  if (in->op == POOT_KIR_OP_ASYNC_WAIT) {
    if (in->imm > 7)
      return fail(x->err, x->n, "async_wait of %llu pending groups (0..7)",
                  (unsigned long long)in->imm);
    return true;
  }
  if (in->ref >= x->d->shared_count)
    return fail(x->err, x->n, "shared array %u out of range (%u shared arrays)", in->ref,
                x->d->shared_count);
  if (in->imm >= x->d->binding_count)
    return fail(x->err, x->n, "binding position %llu out of range (%u bindings)",
                (unsigned long long)in->imm, x->d->binding_count);
  const poot_kir_binding *bd = &x->d->bindings[in->imm];
  poot_kir_scalar elem = x->d->shared[in->ref].elem;
  if (!(bd->access & POOT_KIR_ACCESS_READ))
    return fail(x->err, x->n, "binding '%s' is write-only", bd->name);
  if (bd->elem != elem || poot_kir_scalar_size(elem) > 8)
    return fail(x->err, x->n, "async_copy from %s elements into %s elements", 
                poot_kir_scalar_name(bd->elem), poot_kir_scalar_name(elem));
  if (bd->align && bd->align < 16)
    return fail(x->err, x->n, "async_copy needs 16-byte alignment; binding '%s' has %u", bd->name,
                bd->align);
  if (!is_index(x->at[0]) || !is_index(x->at[1]))
    return fail(x->err, x->n, "indices must be u32 or i32, got %s, %s", T1(x->at[0]),
                T2(x->at[1]));
  if (!type_is(x->at[2], POOT_KIR_BOOL, 1))
    return fail(x->err, x->n, "async_copy valid flag must be bool, got %s", T3(x->at[2]));
  return true;
}

#undef T1
#undef T2
#undef T3

/* The type rule of each class. */
static bool (*const class_infer[POOT_KIR_CLASS_COUNT])(infer_ctx *) = {
    [POOT_KIR_CLASS_CONST] = infer_const,       [POOT_KIR_CLASS_BUILTIN] = infer_builtin,
    [POOT_KIR_CLASS_PARAM] = infer_param,       [POOT_KIR_CLASS_UNARY] = infer_unary,
    [POOT_KIR_CLASS_BINARY] = infer_binary,     [POOT_KIR_CLASS_COMPARE] = infer_binary,
    [POOT_KIR_CLASS_SELECT] = infer_select,     [POOT_KIR_CLASS_FMA] = infer_fma,
    [POOT_KIR_CLASS_CONVERT] = infer_convert,   [POOT_KIR_CLASS_BITCAST] = infer_bitcast,
    [POOT_KIR_CLASS_LANES] = infer_lanes,       [POOT_KIR_CLASS_LOAD] = infer_memory,
    [POOT_KIR_CLASS_STORE] = infer_memory,      [POOT_KIR_CLASS_PRIV_LOAD] = infer_priv,
    [POOT_KIR_CLASS_PRIV_STORE] = infer_priv,   [POOT_KIR_CLASS_ATOMIC] = infer_atomic,
    [POOT_KIR_CLASS_SUBGROUP] = infer_subgroup, [POOT_KIR_CLASS_BARRIER] = infer_barrier,
    [POOT_KIR_CLASS_CHECK] = infer_cond,        [POOT_KIR_CLASS_IF] = infer_cond,
    [POOT_KIR_CLASS_FOR] = infer_for,           [POOT_KIR_CLASS_MATRIX] = infer_matrix,
    [POOT_KIR_CLASS_ASYNC] = infer_async,       [POOT_KIR_CLASS_DOT4] = infer_dot4,
};

bool poot__kir_infer(const poot__kir_decls *d, const poot_kir_inst *in, poot_kir_type *out,
                     char *err, size_t n) {
  poot_kir_type none = {0, 0, 0};
  *out = none;
  if ((unsigned)in->op >= POOT_KIR_OP_COUNT) return fail(err, n, "unknown op %d", (int)in->op);
  int want = op_rows[in->op].nargs;
  if (want >= 0 && in->arg_count != (uint32_t)want)
    return fail(err, n, "%s takes %d operands, got %u", poot_kir_op_name(in->op), want,
                in->arg_count);
  if (in->arg_count > POOT_KIR_MAX_ARGS)
    return fail(err, n, "%s has %u operands (max %d)", poot_kir_op_name(in->op), in->arg_count,
                POOT_KIR_MAX_ARGS);
  infer_ctx x = {.d = d, .in = in, .out = out, .err = err, .n = n};
  for (uint32_t i = 0; i < in->arg_count; i++) {
    poot_kir_value v = in->args[i];
    if (v == 0 || v > d->value_count || !d->values[v].def)
      return fail(err, n, "operand %u is not a defined value (v%u)", i, v);
    x.at[i] = d->values[v].type;
  }
  x.t0 = in->arg_count > 0 ? x.at[0] : none;
  x.s0 = (poot_kir_scalar)x.t0.scalar;
  return class_infer[op_rows[in->op].cls](&x);
}
