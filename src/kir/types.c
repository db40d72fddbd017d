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

static const char *const op_names[POOT_KIR_OP_COUNT] = {
#define X(name, str, nargs) str,
    POOT_KIR_OPS(X)
#undef X
};
static const int8_t op_nargs[POOT_KIR_OP_COUNT] = {
#define X(name, str, nargs) nargs,
    POOT_KIR_OPS(X)
#undef X
};

const char *poot_kir_op_name(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? op_names[op] : "?";
}

int poot_kir_op_arg_count(poot_kir_op op) {
  return (unsigned)op < POOT_KIR_OP_COUNT ? op_nargs[op] : 0;
}

static const char *const builtin_names[POOT_KIR_BUILTIN_COUNT] = {
    "workgroup_id", "num_workgroups", "local_id",      "local_size",
    "local_index",  "subgroup_id",    "subgroup_lane", "subgroup_size"};

const char *poot_kir_builtin_name(poot_kir_builtin b) {
  return (unsigned)b < POOT_KIR_BUILTIN_COUNT ? builtin_names[b] : "?";
}

bool poot__kir_op_has_result(poot_kir_op op) {
  switch (op) {
    case POOT_KIR_OP_STORE:
    case POOT_KIR_OP_PRIV_STORE:
    case POOT_KIR_OP_BARRIER:
    case POOT_KIR_OP_CHECK:
    case POOT_KIR_OP_IF:
      return false;
    default:
      return true; /* FOR defines its induction value */
  }
}

bool poot__kir_op_is_arith(poot_kir_op op) {
  return (op >= POOT_KIR_OP_NEG && op <= POOT_KIR_OP_GE) || op == POOT_KIR_OP_FMA;
}

bool poot__kir_op_is_subgroup(poot_kir_op op) {
  return op >= POOT_KIR_OP_SG_REDUCE_ADD && op <= POOT_KIR_OP_SG_BROADCAST;
}

bool poot__kir_op_is_atomic(poot_kir_op op) {
  return op >= POOT_KIR_OP_ATOMIC_ADD && op <= POOT_KIR_OP_ATOMIC_CAS;
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

static bool is_arith_scalar(poot_kir_scalar s) {
  return s == POOT_KIR_I32 || s == POOT_KIR_U32 || s == POOT_KIR_I64 || s == POOT_KIR_F16 ||
         s == POOT_KIR_F32;
}

static bool is_float_arith(poot_kir_scalar s) {
  return s == POOT_KIR_F16 || s == POOT_KIR_F32;
}
static bool is_int_arith(poot_kir_scalar s) {
  return s == POOT_KIR_I32 || s == POOT_KIR_U32 || s == POOT_KIR_I64;
}
static bool is_index(poot_kir_type t) {
  return t.lanes == 1 && (t.scalar == POOT_KIR_U32 || t.scalar == POOT_KIR_I32);
}
static bool is_word(poot_kir_type t) {
  return t.lanes == 1 && t.frag == 0 &&
         (t.scalar == POOT_KIR_U32 || t.scalar == POOT_KIR_I32 || t.scalar == POOT_KIR_F32);
}
static bool valid_type(poot_kir_type t) {
  return t.scalar < POOT_KIR_SCALAR_COUNT && (t.lanes == 1 || t.lanes == 2 || t.lanes == 4) &&
         t.frag == 0;
}

/* Memory reference shared by LOAD/STORE/ATOMIC: returns the element type. */
static bool mem_ref(const poot__kir_decls *d, const poot_kir_inst *in, bool write, bool read,
                    poot_kir_scalar *elem, uint32_t *align, char *err, size_t n) {
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

bool poot__kir_infer(const poot__kir_decls *d, const poot_kir_inst *in, poot_kir_type *out,
                     char *err, size_t n) {
  poot_kir_type none = {0, 0, 0};
  *out = none;
  char b1[32], b2[32], b3[32];
  if ((unsigned)in->op >= POOT_KIR_OP_COUNT) return fail(err, n, "unknown op %d", (int)in->op);
  int want = op_nargs[in->op];
  if (want >= 0 && in->arg_count != (uint32_t)want)
    return fail(err, n, "%s takes %d operands, got %u", poot_kir_op_name(in->op), want, in->arg_count);
  if (in->arg_count > POOT_KIR_MAX_ARGS)
    return fail(err, n, "%s has %u operands (max %d)", poot_kir_op_name(in->op), in->arg_count,
                POOT_KIR_MAX_ARGS);
  poot_kir_type at[POOT_KIR_MAX_ARGS];
  for (uint32_t i = 0; i < in->arg_count; i++) {
    poot_kir_value v = in->args[i];
    if (v == 0 || v > d->value_count || !d->values[v].def)
      return fail(err, n, "operand %u is not a defined value (v%u)", i, v);
    at[i] = d->values[v].type;
  }
  poot_kir_type t0 = in->arg_count > 0 ? at[0] : none;
  poot_kir_scalar s0 = (poot_kir_scalar)t0.scalar;

  switch (in->op) {
    case POOT_KIR_OP_CONST: {
      if (!valid_type(in->type) || in->type.lanes != 1)
        return fail(err, n, "constant must have a scalar type");
      size_t bits = poot_kir_scalar_size((poot_kir_scalar)in->type.scalar) * 8;
      if (in->type.scalar == POOT_KIR_BOOL) bits = 1;
      if (bits < 64 && (in->imm >> bits) != 0)
        return fail(err, n, "constant bits 0x%llx do not fit %s", (unsigned long long)in->imm,
                    tname(in->type, b1, sizeof b1));
      *out = in->type;
      return true;
    }
    case POOT_KIR_OP_BUILTIN:
      if (in->ref >= POOT_KIR_BUILTIN_COUNT) return fail(err, n, "unknown builtin %u", in->ref);
      if (in->ref <= POOT_KIR_BUILTIN_LOCAL_SIZE ? in->imm > 2 : in->imm != 0)
        return fail(err, n, "builtin %s has no dimension %llu",
                    poot_kir_builtin_name((poot_kir_builtin)in->ref), (unsigned long long)in->imm);
      *out = poot_kir_type_make(POOT_KIR_U32, 1);
      return true;
    case POOT_KIR_OP_PARAM:
      if (in->ref >= d->param_count)
        return fail(err, n, "param %u out of range (%u params)", in->ref, d->param_count);
      *out = poot_kir_type_make(d->params[in->ref].type, 1);
      return true;
    case POOT_KIR_OP_NEG:
      if (!is_arith_scalar(s0))
        return fail(err, n, "neg needs i32/u32/i64/f16/f32, got %s", tname(t0, b1, sizeof b1));
      *out = t0;
      return true;
    case POOT_KIR_OP_NOT:
      if (!is_int_arith(s0) && s0 != POOT_KIR_BOOL)
        return fail(err, n, "not needs an integer or bool, got %s", tname(t0, b1, sizeof b1));
      *out = t0;
      return true;
    case POOT_KIR_OP_ABS:
      if (!(is_float_arith(s0) || s0 == POOT_KIR_I32 || s0 == POOT_KIR_I64))
        return fail(err, n, "abs needs a signed integer or float, got %s",
                    tname(t0, b1, sizeof b1));
      *out = t0;
      return true;
    case POOT_KIR_OP_EXP:
    case POOT_KIR_OP_EXP2:
    case POOT_KIR_OP_LOG:
    case POOT_KIR_OP_LOG2:
    case POOT_KIR_OP_SQRT:
    case POOT_KIR_OP_RSQRT:
    case POOT_KIR_OP_SIN:
    case POOT_KIR_OP_COS:
    case POOT_KIR_OP_TANH:
    case POOT_KIR_OP_ERF:
    case POOT_KIR_OP_FLOOR:
    case POOT_KIR_OP_CEIL:
      if (!is_float_arith(s0))
        return fail(err, n, "%s needs f16 or f32, got %s", poot_kir_op_name(in->op),
                    tname(t0, b1, sizeof b1));
      *out = t0;
      return true;
    case POOT_KIR_OP_ADD:
    case POOT_KIR_OP_SUB:
    case POOT_KIR_OP_MUL:
    case POOT_KIR_OP_DIV:
    case POOT_KIR_OP_REM:
    case POOT_KIR_OP_MIN:
    case POOT_KIR_OP_MAX:
    case POOT_KIR_OP_AND:
    case POOT_KIR_OP_OR:
    case POOT_KIR_OP_XOR:
    case POOT_KIR_OP_SHL:
    case POOT_KIR_OP_SHR:
    case POOT_KIR_OP_POW:
    case POOT_KIR_OP_EQ:
    case POOT_KIR_OP_NE:
    case POOT_KIR_OP_LT:
    case POOT_KIR_OP_LE:
    case POOT_KIR_OP_GT:
    case POOT_KIR_OP_GE: {
      if (!poot_kir_type_eq(at[0], at[1]))
        return fail(err, n, "type mismatch in %s: %s vs %s", poot_kir_op_name(in->op),
                    tname(at[0], b1, sizeof b1), tname(at[1], b2, sizeof b2));
      bool ok;
      switch (in->op) {
        case POOT_KIR_OP_REM:
        case POOT_KIR_OP_SHL:
        case POOT_KIR_OP_SHR:
          ok = is_int_arith(s0);
          break;
        case POOT_KIR_OP_AND:
        case POOT_KIR_OP_OR:
        case POOT_KIR_OP_XOR:
          ok = is_int_arith(s0) || s0 == POOT_KIR_BOOL;
          break;
        case POOT_KIR_OP_POW:
          ok = is_float_arith(s0);
          break;
        case POOT_KIR_OP_EQ:
        case POOT_KIR_OP_NE:
          ok = is_arith_scalar(s0) || s0 == POOT_KIR_BOOL;
          break;
        default:
          ok = is_arith_scalar(s0);
      }
      if (!ok)
        return fail(err, n, "%s is not defined on %s", poot_kir_op_name(in->op), tname(t0, b1, sizeof b1));
      if (in->op >= POOT_KIR_OP_EQ)
        *out = poot_kir_type_make(POOT_KIR_BOOL, t0.lanes);
      else
        *out = t0;
      return true;
    }
    case POOT_KIR_OP_SELECT:
      if (at[0].scalar != POOT_KIR_BOOL || (at[0].lanes != 1 && at[0].lanes != at[1].lanes))
        return fail(err, n, "select condition must be bool or bool x lanes of the operands, got %s",
                    tname(at[0], b1, sizeof b1));
      if (!poot_kir_type_eq(at[1], at[2]))
        return fail(err, n, "type mismatch in select: %s vs %s", tname(at[1], b1, sizeof b1),
                    tname(at[2], b2, sizeof b2));
      *out = at[1];
      return true;
    case POOT_KIR_OP_FMA:
      if (!poot_kir_type_eq(at[0], at[1]) || !poot_kir_type_eq(at[0], at[2]))
        return fail(err, n, "type mismatch in fma: %s, %s, %s", tname(at[0], b1, sizeof b1),
                    tname(at[1], b2, sizeof b2), tname(at[2], b3, sizeof b3));
      if (!is_float_arith(s0))
        return fail(err, n, "fma needs f16 or f32, got %s", tname(t0, b1, sizeof b1));
      *out = t0;
      return true;
    case POOT_KIR_OP_CONVERT:
      if (!valid_type(in->type) || in->type.lanes != t0.lanes)
        return fail(err, n, "convert to %s from %s: lanes must match",
                    tname(in->type, b1, sizeof b1), tname(t0, b2, sizeof b2));
      *out = in->type;
      return true;
    case POOT_KIR_OP_BITCAST: {
      if (!valid_type(in->type)) return fail(err, n, "bitcast to an invalid type");
      if (in->type.scalar == POOT_KIR_BOOL || s0 == POOT_KIR_BOOL)
        return fail(err, n, "bitcast of bool is not defined");
      size_t a = poot_kir_scalar_size(s0) * t0.lanes;
      size_t c = poot_kir_scalar_size((poot_kir_scalar)in->type.scalar) * in->type.lanes;
      if (a != c)
        return fail(err, n, "bitcast from %s (%zu bytes) to %s (%zu bytes): sizes differ",
                    tname(t0, b1, sizeof b1), a, tname(in->type, b2, sizeof b2), c);
      *out = in->type;
      return true;
    }
    case POOT_KIR_OP_SPLAT:
      if (t0.lanes != 1)
        return fail(err, n, "splat needs a scalar, got %s", tname(t0, b1, sizeof b1));
      if (in->type.lanes != 2 && in->type.lanes != 4)
        return fail(err, n, "splat to %u lanes (2 or 4)", (unsigned)in->type.lanes);
      *out = poot_kir_type_make(s0, in->type.lanes);
      return true;
    case POOT_KIR_OP_VEC:
      if (in->arg_count != 2 && in->arg_count != 4)
        return fail(err, n, "vec takes 2 or 4 scalars, got %u", in->arg_count);
      for (uint32_t i = 0; i < in->arg_count; i++)
        if (at[i].lanes != 1 || at[i].scalar != s0)
          return fail(err, n, "vec element %u is %s, expected %s", i, tname(at[i], b1, sizeof b1),
                      poot_kir_scalar_name(s0));
      *out = poot_kir_type_make(s0, in->arg_count);
      return true;
    case POOT_KIR_OP_EXTRACT:
      if (t0.lanes == 1 || in->imm >= t0.lanes)
        return fail(err, n, "extract of lane %llu from %s", (unsigned long long)in->imm,
                    tname(t0, b1, sizeof b1));
      *out = poot_kir_type_make(s0, 1);
      return true;
    case POOT_KIR_OP_LOAD:
    case POOT_KIR_OP_STORE: {
      bool st = in->op == POOT_KIR_OP_STORE;
      poot_kir_scalar elem;
      uint32_t align;
      if (!mem_ref(d, in, st, !st, &elem, &align, err, n)) return false;
      if (!is_index(at[0]))
        return fail(err, n, "index must be u32 or i32, got %s", tname(at[0], b1, sizeof b1));
      uint32_t lanes = st ? at[1].lanes : in->type.lanes;
      if (lanes != 1 && lanes != 2 && lanes != 4)
        return fail(err, n, "%s of %u lanes (1, 2 or 4)", poot_kir_op_name(in->op), lanes);
      if (st && at[1].scalar != elem)
        return fail(err, n, "store of %s into %s elements", tname(at[1], b1, sizeof b1),
                    poot_kir_scalar_name(elem));
      if (!st && in->type.scalar != elem)
        return fail(err, n, "load of %s from %s elements", tname(in->type, b1, sizeof b1),
                    poot_kir_scalar_name(elem));
      if (align && align < lanes * poot_kir_scalar_size(elem))
        return fail(err, n, "a %u-lane access needs %zu-byte alignment; the binding has %u", lanes,
                    lanes * poot_kir_scalar_size(elem), align);
      *out = poot_kir_type_make(elem, lanes);
      return true;
    }
    case POOT_KIR_OP_PRIV_LOAD:
    case POOT_KIR_OP_PRIV_STORE: {
      if (in->ref >= d->private_count)
        return fail(err, n, "private array %u out of range (%u)", in->ref, d->private_count);
      const poot_kir_private *p = &d->privates[in->ref];
      if (in->imm >= p->count)
        return fail(err, n, "element %llu of private '%s' out of range (%u elements)",
                    (unsigned long long)in->imm, p->name, p->count);
      if (in->op == POOT_KIR_OP_PRIV_STORE && !poot_kir_type_eq(at[0], p->type))
        return fail(err, n, "store of %s into private '%s' of %s", tname(at[0], b1, sizeof b1),
                    p->name, tname(p->type, b2, sizeof b2));
      *out = p->type;
      return true;
    }
    case POOT_KIR_OP_ATOMIC_ADD:
    case POOT_KIR_OP_ATOMIC_MAX:
    case POOT_KIR_OP_ATOMIC_MIN:
    case POOT_KIR_OP_ATOMIC_XCHG:
    case POOT_KIR_OP_ATOMIC_CAS: {
      poot_kir_scalar elem;
      uint32_t align;
      if (!mem_ref(d, in, true, true, &elem, &align, err, n)) return false;
      if (!is_index(at[0]))
        return fail(err, n, "index must be u32 or i32, got %s", tname(at[0], b1, sizeof b1));
      poot_kir_type et = poot_kir_type_make(elem, 1);
      if (!is_word(et))
        return fail(err, n, "atomics need u32, i32 or f32 elements, got %s",
                    poot_kir_scalar_name(elem));
      for (uint32_t i = 1; i < in->arg_count; i++)
        if (!poot_kir_type_eq(at[i], et))
          return fail(err, n, "atomic operand %u is %s, expected %s", i,
                      tname(at[i], b1, sizeof b1), poot_kir_scalar_name(elem));
      *out = et;
      return true;
    }
    case POOT_KIR_OP_SG_REDUCE_ADD:
    case POOT_KIR_OP_SG_REDUCE_MAX:
    case POOT_KIR_OP_SG_REDUCE_MIN:
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
    case POOT_KIR_OP_SG_BROADCAST:
    case POOT_KIR_OP_SG_SHUFFLE:
      if (!is_word(t0))
        return fail(err, n, "%s needs a u32, i32 or f32 scalar, got %s", poot_kir_op_name(in->op),
                    tname(t0, b1, sizeof b1));
      if (in->op == POOT_KIR_OP_SG_SHUFFLE && !(at[1].lanes == 1 && at[1].scalar == POOT_KIR_U32))
        return fail(err, n, "shuffle lane must be u32, got %s", tname(at[1], b1, sizeof b1));
      if ((in->op == POOT_KIR_OP_SG_SHUFFLE_XOR || in->op == POOT_KIR_OP_SG_BROADCAST) &&
          in->imm >= 128)
        return fail(err, n, "%s lane/mask %llu out of range (< 128)", poot_kir_op_name(in->op),
                    (unsigned long long)in->imm);
      *out = t0;
      return true;
    case POOT_KIR_OP_BARRIER:
      return true;
    case POOT_KIR_OP_CHECK:
    case POOT_KIR_OP_IF:
      if (!(t0.lanes == 1 && s0 == POOT_KIR_BOOL))
        return fail(err, n, "%s condition must be bool, got %s", poot_kir_op_name(in->op),
                    tname(t0, b1, sizeof b1));
      if (in->op == POOT_KIR_OP_CHECK && in->imm > 31)
        return fail(err, n, "trap code %llu out of range (0..31)", (unsigned long long)in->imm);
      return true;
    case POOT_KIR_OP_FOR:
      if (!is_index(at[0]) || !poot_kir_type_eq(at[0], at[1]) || !poot_kir_type_eq(at[0], at[2]))
        return fail(err, n, "for bounds must share one type, u32 or i32: %s, %s, %s",
                    tname(at[0], b1, sizeof b1), tname(at[1], b2, sizeof b2),
                    tname(at[2], b3, sizeof b3));
      *out = at[0];
      return true;
    default:
      break;
  }
  return fail(err, n, "op %s has no type rule", poot_kir_op_name(in->op));
}
