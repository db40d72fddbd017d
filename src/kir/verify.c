/* The verifier: types, scoping, uniform control flow for barriers and
 * subgroup operations, and the limits of a target. */
#include <stdarg.h>
#include <string.h>

#include "kir_impl.h"

enum { VARYING = 0, SUBGROUP_UNIFORM = 1, UNIFORM = 2 };

typedef struct vctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t; /* may be NULL */
  poot__kir_decls decls;
  uint8_t *defined; /* per value: in scope now */
  uint8_t *seen;    /* per value: defined somewhere already */
  uint8_t *level;   /* per value: uniformity */
  uint8_t *priv_level;
  bool priv_changed;
  poot_status status;
} vctx;

static poot_status vfail(vctx *c, const poot_kir_inst *in, poot_status_code code, const char *fmt,
                         ...) POOT_PRINTF(4, 5);
static poot_status vfail(vctx *c, const poot_kir_inst *in, poot_status_code code, const char *fmt,
                         ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!in)
    return poot_status_make(code, "kir: kernel '%s'%s%s: %s", c->k->name,
                            c->t ? " for target " : "", c->t && c->t->name ? c->t->name : "", msg);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_kir_print_inst(c->k, in, &sb);
  poot_status st = poot_status_make(
      code, "kir: kernel '%s'%s%s: statement #%u (%s): %s", c->k->name, c->t ? " for target " : "",
      c->t && c->t->name ? c->t->name : "", in->id, sb.data ? sb.data : "", msg);
  poot_strbuf_deinit(&sb);
  return st;
}

static uint8_t min8(uint8_t a, uint8_t b) {
  return a < b ? a : b;
}

static uint8_t builtin_level(const poot_kir_kernel *k, const poot_kir_inst *in) {
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS:
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      return UNIFORM;
    case POOT_KIR_BUILTIN_SUBGROUP_ID:
      return SUBGROUP_UNIFORM;
    case POOT_KIR_BUILTIN_LOCAL_ID:
      return k->workgroup_size[in->imm % 3] == 1 ? UNIFORM : VARYING;
    default:
      return VARYING;
  }
}

static const char *level_name(uint8_t l) {
  return l == UNIFORM            ? "workgroup-uniform"
         : l == SUBGROUP_UNIFORM ? "subgroup-uniform"
                                 : "varying";
}

static bool scalar_ok(const poot_kir_target *t, poot_kir_scalar s) {
  return s == POOT_KIR_BOOL || poot_kir_target_has_storage(t, s) || poot_kir_target_has_arith(t, s);
}

/* Target-specific checks of one statement. */
static poot_status check_target(vctx *c, const poot_kir_inst *in) {
  const poot_kir_target *t = c->t;
  const poot_kir_kernel *k = c->k;
  if (in->type.lanes > t->max_vector_lanes)
    return vfail(c, in, POOT_UNSUPPORTED, "%u-lane vectors exceed the target's %u",
                 (unsigned)in->type.lanes, t->max_vector_lanes);
  if (in->type.lanes && !scalar_ok(t, (poot_kir_scalar)in->type.scalar))
    return vfail(c, in, POOT_UNSUPPORTED, "type %s is not supported by the target",
                 poot_kir_scalar_name((poot_kir_scalar)in->type.scalar));
  if (poot__kir_op_is_arith(in->op)) {
    poot_kir_scalar s = (poot_kir_scalar)k->values[in->args[0]].type.scalar;
    if (s != POOT_KIR_BOOL && !poot_kir_target_has_arith(t, s))
      return vfail(c, in, POOT_UNSUPPORTED, "the target has no %s arithmetic",
                   poot_kir_scalar_name(s));
  }
  if (in->op == POOT_KIR_OP_CONVERT || in->op == POOT_KIR_OP_BITCAST) {
    poot_kir_scalar s = (poot_kir_scalar)k->values[in->args[0]].type.scalar;
    if (!scalar_ok(t, s))
      return vfail(c, in, POOT_UNSUPPORTED, "type %s is not supported by the target",
                   poot_kir_scalar_name(s));
  }
  if (poot__kir_op_is_atomic(in->op)) {
    poot_kir_atomic a = poot__kir_op_atomic_kind(in->op);
    if (!poot_kir_target_has_atomic(t, a, (poot_kir_scalar)in->type.scalar))
      return vfail(c, in, POOT_UNSUPPORTED, "the target has no %s on %s", poot_kir_op_name(in->op),
                   poot_kir_scalar_name((poot_kir_scalar)in->type.scalar));
  }
  poot_kir_op_class cls = poot__kir_op_class(in->op);
  if ((cls == POOT_KIR_CLASS_MATRIX || cls == POOT_KIR_CLASS_ASYNC) &&
      !poot_kir_target_has_matrix(t))
    return vfail(c, in, POOT_UNSUPPORTED,
                 "target '%s' has no matrix fragments or asynchronous copies (PTX sm_80 and "
                 "later only); use the form without them",
                 t->name ? t->name : "?");
  if (cls == POOT_KIR_CLASS_MATRIX) {
    uint32_t sg = k->subgroup_size ? k->subgroup_size : t->subgroup_size;
    if (sg != 32)
      return vfail(c, in, POOT_UNSUPPORTED,
                   "matrix fragments need subgroups of 32 lanes; the kernel runs %u", sg);
  }
  if (poot__kir_op_is_subgroup(in->op) ||
      (in->op == POOT_KIR_OP_BUILTIN && in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID)) {
    if (!t->subgroup_ops)
      return vfail(c, in, POOT_UNSUPPORTED, "the target has no subgroup operations");
    uint32_t sg = k->subgroup_size ? k->subgroup_size : t->subgroup_size;
    if ((in->op == POOT_KIR_OP_SG_SHUFFLE_XOR || in->op == POOT_KIR_OP_SG_BROADCAST) && sg &&
        in->imm >= sg)
      return vfail(c, in, POOT_UNSUPPORTED, "lane/mask %llu is outside a subgroup of %u",
                   (unsigned long long)in->imm, sg);
  }
  return POOT_OK_STATUS;
}

static poot_status walk(vctx *c, const poot_kir_block *blk, uint8_t ctl, const poot_kir_inst *why);

static poot_status visit(vctx *c, const poot_kir_inst *in, uint8_t ctl, const poot_kir_inst *why) {
  const poot_kir_kernel *k = c->k;
  poot_kir_type t;
  char err[256];
  for (uint32_t i = 0; i < in->arg_count && i < POOT_KIR_MAX_ARGS; i++) {
    poot_kir_value v = in->args[i];
    if (v == 0 || v > k->value_count || !c->defined[v])
      return vfail(c, in, POOT_INVALID_ARGUMENT, "operand %u (v%u) is not a value in scope", i, v);
  }
  if (!poot__kir_infer(&c->decls, in, &t, err, sizeof err))
    return vfail(c, in, POOT_INVALID_ARGUMENT, "%s", err);
  bool typed =
      in->op != POOT_KIR_OP_IF && in->op != POOT_KIR_OP_CHECK && in->op != POOT_KIR_OP_BARRIER;
  if (typed && !poot_kir_type_eq(t, in->type))
    return vfail(c, in, POOT_INVALID_ARGUMENT, "recorded type differs from the inferred type");
  if (poot__kir_op_has_result(in->op)) {
    poot_kir_value r = in->result;
    if (r == 0 || r > k->value_count || c->seen[r] || k->values[r].def != in ||
        !poot_kir_type_eq(k->values[r].type, t))
      return vfail(c, in, POOT_INVALID_ARGUMENT, "result v%u is malformed or defined twice", r);
    c->seen[r] = 1;
  } else if (in->result != 0) {
    return vfail(c, in, POOT_INVALID_ARGUMENT, "statement defines a value but has no result");
  }

  uint8_t args_level = UNIFORM;
  for (uint32_t i = 0; i < in->arg_count; i++) args_level = min8(args_level, c->level[in->args[i]]);
  uint8_t lv = args_level;
  switch (in->op) {
    case POOT_KIR_OP_BUILTIN:
      lv = builtin_level(k, in);
      break;
    case POOT_KIR_OP_SG_REDUCE_ADD:
    case POOT_KIR_OP_SG_REDUCE_MAX:
    case POOT_KIR_OP_SG_REDUCE_MIN:
    case POOT_KIR_OP_SG_BROADCAST:
      lv = args_level == UNIFORM ? UNIFORM : SUBGROUP_UNIFORM;
      break;
    case POOT_KIR_OP_ATOMIC_ADD:
    case POOT_KIR_OP_ATOMIC_MAX:
    case POOT_KIR_OP_ATOMIC_MIN:
    case POOT_KIR_OP_ATOMIC_XCHG:
    case POOT_KIR_OP_ATOMIC_CAS:
    case POOT_KIR_OP_MMA_LOAD: /* each lane holds its own part of the fragment */
    case POOT_KIR_OP_MMA:
      lv = VARYING;
      break;
    case POOT_KIR_OP_PRIV_LOAD:
      lv = c->priv_level[in->ref];
      break;
    case POOT_KIR_OP_PRIV_STORE: {
      uint8_t nl = min8(args_level, ctl);
      if (nl < c->priv_level[in->ref]) {
        c->priv_level[in->ref] = nl;
        c->priv_changed = true;
      }
      break;
    }
    default:
      break;
  }
  if (in->result) c->level[in->result] = lv;

  if (in->op == POOT_KIR_OP_BARRIER && ctl != UNIFORM)
    return vfail(c, in, POOT_INVALID_ARGUMENT,
                 "barrier in non-uniform control flow: the %s at statement #%u depends on a %s "
                 "value, so not every thread of the workgroup reaches the barrier",
                 why ? poot_kir_op_name(why->op) : "?", why ? why->id : 0, level_name(ctl));
  if (poot__kir_op_is_subgroup(in->op) && ctl == VARYING)
    return vfail(c, in, POOT_INVALID_ARGUMENT,
                 "subgroup operation in divergent control flow: the %s at statement #%u depends "
                 "on a varying value",
                 why ? poot_kir_op_name(why->op) : "?", why ? why->id : 0);
  if (c->t) POOT_TRY(check_target(c, in));

  if (in->op == POOT_KIR_OP_IF) {
    uint8_t inner = min8(ctl, args_level);
    const poot_kir_inst *w = inner < ctl ? in : why;
    POOT_TRY(walk(c, &in->body, inner, w));
    POOT_TRY(walk(c, &in->else_body, inner, w));
  } else if (in->op == POOT_KIR_OP_FOR) {
    uint8_t inner = min8(ctl, args_level);
    const poot_kir_inst *w = inner < ctl ? in : why;
    c->defined[in->result] = 1;
    POOT_TRY(walk(c, &in->body, inner, w));
    c->defined[in->result] = 0;
  } else if (in->result) {
    c->defined[in->result] = 1;
  }
  if (in->op != POOT_KIR_OP_IF && in->op != POOT_KIR_OP_FOR &&
      (in->body.first || in->else_body.first))
    return vfail(c, in, POOT_INVALID_ARGUMENT, "only if and for have nested blocks");
  return POOT_OK_STATUS;
}

static poot_status walk(vctx *c, const poot_kir_block *blk, uint8_t ctl, const poot_kir_inst *why) {
  uint32_t n = 0;
  for (const poot_kir_inst *in = blk->first; in; in = in->next) {
    POOT_TRY(visit(c, in, ctl, why));
    if (++n > c->k->inst_count + 1)
      return vfail(c, in, POOT_INVALID_ARGUMENT, "statement list is cyclic");
  }
  /* Values defined in this block leave scope. */
  for (const poot_kir_inst *in = blk->first; in; in = in->next)
    if (in->result) c->defined[in->result] = 0;
  return POOT_OK_STATUS;
}

static bool ident(const char *s) {
  if (!s || !*s) return false;
  for (const char *p = s; *p; p++) {
    char ch = *p;
    bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
    if (!(alpha || (ch >= '0' && ch <= '9' && p != s))) return false;
  }
  return true;
}

static poot_status check_kernel_target(vctx *c) {
  const poot_kir_kernel *k = c->k;
  const poot_kir_target *t = c->t;
  uint32_t threads = poot_kir_kernel_threads(k);
  if (threads > t->max_workgroup_size)
    return vfail(c, NULL, POOT_UNSUPPORTED, "workgroup of %u threads exceeds the target's %u",
                 threads, t->max_workgroup_size);
  for (int i = 0; i < 3; i++)
    if (k->workgroup_size[i] > t->max_workgroup_dims[i])
      return vfail(c, NULL, POOT_UNSUPPORTED, "workgroup size %u in dimension %d exceeds %u",
                   k->workgroup_size[i], i, t->max_workgroup_dims[i]);
  /* Past shared_memory_bytes, a target with an opt-in amount takes the
   * kernel's whole window (its arrays at aligned offsets) up to it. */
  uint64_t shared = poot_kir_kernel_shared_bytes(k);
  uint64_t window = poot_kir_kernel_shared_offset(k, k->shared_count);
  if (shared > t->shared_memory_bytes &&
      (window > t->shared_memory_optin_bytes || !t->shared_memory_optin_bytes))
    return t->shared_memory_optin_bytes
               ? vfail(c, NULL, POOT_UNSUPPORTED,
                       "shared memory of %llu bytes exceeds the target's %u bytes per "
                       "workgroup, opt-in included",
                       (unsigned long long)window, t->shared_memory_optin_bytes)
               : vfail(c, NULL, POOT_UNSUPPORTED,
                       "shared memory of %llu bytes exceeds the target's %u bytes per workgroup",
                       (unsigned long long)shared, t->shared_memory_bytes);
  uint32_t nb = k->binding_count + (k->has_checks && !t->has_trap ? 1u : 0u);
  if (nb > t->max_bindings)
    return vfail(c, NULL, POOT_UNSUPPORTED, "%u storage bindings exceed the target's %u", nb,
                 t->max_bindings);
  uint32_t push = 0;
  for (uint32_t i = 0; i < k->param_count; i++)
    if (k->params[i].kind == POOT_KIR_PARAM_PUSH) push += 4;
  if (push > t->max_push_bytes)
    return vfail(c, NULL, POOT_UNSUPPORTED, "%u bytes of push params exceed the target's %u", push,
                 t->max_push_bytes);
  for (uint32_t i = 0; i < k->binding_count; i++)
    if (!poot_kir_target_has_storage(t, k->bindings[i].elem))
      return vfail(c, NULL, POOT_UNSUPPORTED, "binding '%s': the target cannot store %s",
                   k->bindings[i].name, poot_kir_scalar_name(k->bindings[i].elem));
  for (uint32_t i = 0; i < k->shared_count; i++)
    if (!poot_kir_target_has_storage(t, k->shared[i].elem))
      return vfail(c, NULL, POOT_UNSUPPORTED, "shared '%s': the target cannot store %s",
                   k->shared[i].name, poot_kir_scalar_name(k->shared[i].elem));
  for (uint32_t i = 0; i < k->private_count; i++)
    if (!scalar_ok(t, (poot_kir_scalar)k->privates[i].type.scalar) ||
        k->privates[i].type.lanes > t->max_vector_lanes)
      return vfail(c, NULL, POOT_UNSUPPORTED, "private '%s': type not supported by the target",
                   k->privates[i].name);
  if (k->subgroup_size && t->subgroup_ops &&
      (k->subgroup_size < t->subgroup_size_min || k->subgroup_size > t->subgroup_size_max))
    return vfail(c, NULL, POOT_UNSUPPORTED,
                 "kernel built for subgroup size %u; the target runs %u..%u", k->subgroup_size,
                 t->subgroup_size_min, t->subgroup_size_max);
  return POOT_OK_STATUS;
}

poot_status poot_kir_verify(const poot_kir_kernel *k, const poot_kir_target *t) {
  if (!k) return poot_status_make(POOT_INVALID_ARGUMENT, "kir: verify of a NULL kernel");
  vctx c;
  memset(&c, 0, sizeof c);
  c.k = k;
  c.t = t;
  if (!ident(k->name)) return vfail(&c, NULL, POOT_INVALID_ARGUMENT, "name is not an identifier");
  for (int i = 0; i < 3; i++)
    if (k->workgroup_size[i] == 0)
      return vfail(&c, NULL, POOT_INVALID_ARGUMENT, "workgroup size is zero in dimension %d", i);
  for (uint32_t i = 0; i < k->param_count; i++) {
    const poot_kir_param *p = &k->params[i];
    if (p->kind == POOT_KIR_PARAM_SLOT &&
        (p->slot_ref >= k->binding_count || k->bindings[p->slot_ref].elem != p->type))
      return vfail(&c, NULL, POOT_INVALID_ARGUMENT, "param '%s': bad slot binding", p->name);
  }
  for (uint32_t i = 0; i < k->binding_count; i++)
    for (uint32_t j = i + 1; j < k->binding_count; j++)
      if (k->bindings[i].binding == k->bindings[j].binding)
        return vfail(&c, NULL, POOT_INVALID_ARGUMENT, "binding number %u used twice",
                     k->bindings[i].binding);
  if (k->has_checks)
    for (uint32_t i = 0; i < k->binding_count; i++)
      if (k->bindings[i].binding == k->error_binding)
        return vfail(&c, NULL, POOT_INVALID_ARGUMENT, "error binding %u collides with '%s'",
                     k->error_binding, k->bindings[i].name);
  if (t) POOT_TRY(check_kernel_target(&c));
  poot__kir_decls_from_kernel(k, &c.decls);
  size_t nv = (size_t)k->value_count + 1;
  c.defined = poot_calloc(nv, 1);
  c.seen = poot_calloc(nv, 1);
  c.level = poot_calloc(nv, 1);
  c.priv_level = poot_calloc(k->private_count + 1, 1);
  poot_status st = POOT_OK_STATUS;
  if (!c.defined || !c.seen || !c.level || !c.priv_level) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "kir: out of memory verifying '%s'", k->name);
    goto done;
  }
  memset(c.priv_level, UNIFORM, k->private_count + 1);
  /* Private arrays' uniformity is a fixed point over the stores into them:
   * it only ever goes down, so a few passes settle it. */
  for (uint32_t pass = 0; pass < 2 * k->private_count + 2; pass++) {
    memset(c.defined, 0, nv);
    memset(c.seen, 0, nv);
    c.priv_changed = false;
    st = walk(&c, &k->body, UNIFORM, NULL);
    if (st) {
      /* A uniformity error may vanish or change only while private levels
       * are still settling; type and scope errors are final. */
      if (!c.priv_changed) goto done;
      poot_status_free(st);
      st = POOT_OK_STATUS;
    }
    if (!c.priv_changed) break;
  }
done:
  poot_free(c.defined);
  poot_free(c.seen);
  poot_free(c.level);
  poot_free(c.priv_level);
  return st;
}
