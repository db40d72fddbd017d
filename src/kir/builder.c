/* The KIR builder: appends statements to the innermost open block, checking
 * types and scoping as it goes. Everything lands in one arena that the
 * finished kernel owns. */
#include <string.h>

#include "kir_impl.h"

enum { FRAME_ROOT, FRAME_THEN, FRAME_ELSE, FRAME_FOR };

typedef struct frame {
  int kind;
  poot_kir_inst *owner; /* IF/FOR statement, NULL for the root */
  poot_kir_block *block;
  uint32_t values_at_open;
} frame;

struct poot_kir_builder {
  poot__kir_kernel_impl *impl; /* owns the arena; handed to the kernel */
  poot_kir_kernel *kernel;     /* allocated in the arena up front */
  poot_vec bindings;           /* poot_kir_binding */
  poot_vec params;             /* poot_kir_param */
  poot_vec shared;             /* poot_kir_shared */
  poot_vec privates;           /* poot_kir_private */
  poot_vec values;             /* poot_kir_value_info; [0] unused */
  poot_vec live;               /* uint8_t per value: still in scope */
  poot_vec frames;             /* frame */
  uint32_t next_id;
  bool failed;
};

/* poot_vec_push that reports only success; its status is dropped for ours. */
static bool push(poot_vec *v, const void *elem) {
  poot_status st = poot_vec_push(v, elem);
  if (!st) return true;
  poot_status_free(st);
  return false;
}

static bool is_ident(const char *s) {
  if (!s || !*s) return false;
  for (const char *p = s; *p; p++) {
    char c = *p;
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && p != s))) return false;
  }
  return strlen(s) <= 120;
}

poot_status poot_kir_builder_create(const poot_kir_kernel_desc *desc,
                                    poot_kir_builder **out_builder) {
  *out_builder = NULL;
  if (!desc || !is_ident(desc->name))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir: kernel name '%s' is not a C identifier (letters, digits, _)",
                            desc && desc->name ? desc->name : "(null)");
  uint64_t threads = 1;
  uint32_t wg[3];
  for (int i = 0; i < 3; i++) {
    wg[i] = desc->workgroup_size[i] ? desc->workgroup_size[i] : 1;
    threads *= wg[i];
  }
  if (threads > 4096)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir: kernel '%s': workgroup %ux%ux%u has more than 4096 threads",
                            desc->name, wg[0], wg[1], wg[2]);
  if (desc->subgroup_size && (desc->subgroup_size & (desc->subgroup_size - 1)))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir: kernel '%s': subgroup size %u is not a power of two", desc->name,
                            desc->subgroup_size);
  poot_kir_builder *b = poot_calloc(1, sizeof *b);
  if (!b) return poot_status_make(POOT_OUT_OF_MEMORY, "kir: out of memory creating a builder");
  b->impl = poot_calloc(1, sizeof *b->impl);
  if (!b->impl) goto fail_oom;
  poot_arena_init(&b->impl->arena, 0);
  poot_vec_init(&b->bindings, sizeof(poot_kir_binding));
  poot_vec_init(&b->params, sizeof(poot_kir_param));
  poot_vec_init(&b->shared, sizeof(poot_kir_shared));
  poot_vec_init(&b->privates, sizeof(poot_kir_private));
  poot_vec_init(&b->values, sizeof(poot_kir_value_info));
  poot_vec_init(&b->live, 1);
  poot_vec_init(&b->frames, sizeof(frame));
  b->kernel = POOT_ARENA_NEW(&b->impl->arena, poot_kir_kernel);
  if (!b->kernel) goto fail_oom;
  b->kernel->name = poot_arena_strdup(&b->impl->arena, desc->name);
  if (!b->kernel->name) goto fail_oom;
  memcpy(b->kernel->workgroup_size, wg, sizeof wg);
  b->kernel->subgroup_size = desc->subgroup_size;
  b->kernel->impl_ = b->impl;
  if (!push(&b->values, NULL) || !push(&b->live, NULL)) goto fail_oom_status;
  frame root = {FRAME_ROOT, NULL, &b->kernel->body, 0};
  if (!push(&b->frames, &root)) goto fail_oom_status;
  b->next_id = 1;
  *out_builder = b;
  return POOT_OK_STATUS;
fail_oom_status:
fail_oom:
  poot_kir_builder_destroy(b);
  return poot_status_make(POOT_OUT_OF_MEMORY, "kir: out of memory creating a builder");
}

void poot_kir_builder_destroy(poot_kir_builder *b) {
  if (!b) return;
  if (b->impl) {
    poot_arena_deinit(&b->impl->arena);
    poot_free(b->impl);
  }
  poot_vec_deinit(&b->bindings);
  poot_vec_deinit(&b->params);
  poot_vec_deinit(&b->shared);
  poot_vec_deinit(&b->privates);
  poot_vec_deinit(&b->values);
  poot_vec_deinit(&b->live);
  poot_vec_deinit(&b->frames);
  poot_free(b);
}

static void decls_of(const poot_kir_builder *b, poot__kir_decls *d) {
  d->kernel_name = b->kernel->name;
  d->bindings = b->bindings.data;
  d->binding_count = (uint32_t)b->bindings.len;
  d->params = b->params.data;
  d->param_count = (uint32_t)b->params.len;
  d->shared = b->shared.data;
  d->shared_count = (uint32_t)b->shared.len;
  d->privates = b->privates.data;
  d->private_count = (uint32_t)b->privates.len;
  d->values = b->values.data;
  d->value_count = (uint32_t)b->values.len - 1;
}

static poot_status bfail(poot_kir_builder *b, poot_status_code code, const char *fmt, ...)
    POOT_PRINTF(3, 4);
static poot_status bfail(poot_kir_builder *b, poot_status_code code, const char *fmt, ...) {
  b->failed = true;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return poot_status_make(code, "kir: kernel '%s': %s", b->kernel->name, msg);
}

static poot_status oom(poot_kir_builder *b) {
  return bfail(b, POOT_OUT_OF_MEMORY, "out of memory while building");
}

static frame *top(poot_kir_builder *b) {
  return &POOT_VEC_AT(&b->frames, frame, b->frames.len - 1);
}

/* Checks and appends `tmpl` (a filled statement without id/result) to the
 * open block; defines its result value when the op has one. */
static poot_status emit(poot_kir_builder *b, const poot_kir_inst *tmpl, poot_kir_inst **out_inst,
                        poot_kir_value *out_value) {
  if (out_value) *out_value = 0;
  if (out_inst) *out_inst = NULL;
  if (b->failed) return bfail(b, POOT_INVALID_ARGUMENT, "an earlier builder call failed");
  uint32_t id = b->next_id;
  for (uint32_t i = 0; i < tmpl->arg_count && i < POOT_KIR_MAX_ARGS; i++) {
    poot_kir_value v = tmpl->args[i];
    if (v == 0 || v >= b->values.len || !POOT_VEC_AT(&b->live, uint8_t, v))
      return bfail(b, POOT_INVALID_ARGUMENT,
                   "statement #%u (%s): operand %u (v%u) is not a value in scope", id,
                   poot_kir_op_name(tmpl->op), i, v);
  }
  poot__kir_decls d;
  decls_of(b, &d);
  poot_kir_type t;
  char err[256];
  if (!poot__kir_infer(&d, tmpl, &t, err, sizeof err))
    return bfail(b, POOT_INVALID_ARGUMENT, "statement #%u (%s): %s", id, poot_kir_op_name(tmpl->op),
                 err);
  poot_kir_inst *in = POOT_ARENA_NEW(&b->impl->arena, poot_kir_inst);
  if (!in) return oom(b);
  *in = *tmpl;
  in->id = id;
  in->next = NULL;
  if (in->op != POOT_KIR_OP_IF && in->op != POOT_KIR_OP_CHECK && in->op != POOT_KIR_OP_BARRIER)
    in->type = t;
  if (poot__kir_op_has_result(in->op)) {
    poot_kir_value_info vi = {t, in};
    uint8_t one = 1;
    if (!push(&b->values, &vi)) return oom(b);
    if (!push(&b->live, &one)) return oom(b);
    in->result = (poot_kir_value)(b->values.len - 1);
  } else {
    in->result = 0;
  }
  poot_kir_block *blk = top(b)->block;
  if (blk->last)
    blk->last->next = in;
  else
    blk->first = in;
  blk->last = in;
  blk->count++;
  b->next_id++;
  if (in->op == POOT_KIR_OP_CHECK) b->kernel->has_checks = true;
  if (out_inst) *out_inst = in;
  if (out_value) *out_value = in->result;
  return POOT_OK_STATUS;
}

poot_kir_type poot_kir_builder_value_type(const poot_kir_builder *b, poot_kir_value v) {
  poot_kir_type none = {0, 0, 0};
  if (!b || v == 0 || v >= b->values.len) return none;
  return POOT_VEC_AT(&b->values, poot_kir_value_info, v).type;
}

/* ------------------------------------------------------------ declarations */

poot_status poot_kir_add_binding(poot_kir_builder *b, const poot_kir_binding *desc,
                                 uint32_t *out_ref) {
  *out_ref = 0;
  if (!desc || !is_ident(desc->name))
    return bfail(b, POOT_INVALID_ARGUMENT, "binding name '%s' is not an identifier",
                 desc && desc->name ? desc->name : "(null)");
  if ((unsigned)desc->elem >= POOT_KIR_SCALAR_COUNT || desc->elem == POOT_KIR_BOOL)
    return bfail(b, POOT_INVALID_ARGUMENT, "binding '%s': element type must be a non-bool scalar",
                 desc->name);
  if (desc->access < POOT_KIR_ACCESS_READ || desc->access > POOT_KIR_ACCESS_READ_WRITE)
    return bfail(b, POOT_INVALID_ARGUMENT, "binding '%s': bad access %d", desc->name,
                 (int)desc->access);
  if (desc->invariant && desc->access != POOT_KIR_ACCESS_READ)
    return bfail(b, POOT_INVALID_ARGUMENT,
                 "binding '%s': an invariant binding is never written, so it must be read-only",
                 desc->name);
  uint32_t align = desc->align ? desc->align : 16;
  if ((align & (align - 1)) || align < poot_kir_scalar_size(desc->elem))
    return bfail(b, POOT_INVALID_ARGUMENT,
                 "binding '%s': alignment %u is not a power of two ≥ the element size", desc->name,
                 align);
  for (size_t i = 0; i < b->bindings.len; i++) {
    const poot_kir_binding *o = &POOT_VEC_AT(&b->bindings, poot_kir_binding, i);
    if (o->binding == desc->binding)
      return bfail(b, POOT_INVALID_ARGUMENT, "binding number %u used by '%s' and '%s'",
                   desc->binding, o->name, desc->name);
  }
  poot_kir_binding nb = *desc;
  nb.align = align;
  nb.name = poot_arena_strdup(&b->impl->arena, desc->name);
  if (!nb.name || !push(&b->bindings, &nb)) return oom(b);
  *out_ref = (uint32_t)b->bindings.len - 1;
  return POOT_OK_STATUS;
}

poot_status poot_kir_add_param(poot_kir_builder *b, const poot_kir_param *desc,
                               uint32_t *out_index) {
  *out_index = 0;
  if (!desc || !is_ident(desc->name))
    return bfail(b, POOT_INVALID_ARGUMENT, "param name '%s' is not an identifier",
                 desc && desc->name ? desc->name : "(null)");
  if (desc->type != POOT_KIR_U32 && desc->type != POOT_KIR_I32 && desc->type != POOT_KIR_F32)
    return bfail(b, POOT_INVALID_ARGUMENT, "param '%s': type must be u32, i32 or f32", desc->name);
  if (desc->kind == POOT_KIR_PARAM_SLOT) {
    if (desc->slot_ref >= b->bindings.len)
      return bfail(b, POOT_INVALID_ARGUMENT, "param '%s': slot binding position %u not declared",
                   desc->name, desc->slot_ref);
    const poot_kir_binding *sb = &POOT_VEC_AT(&b->bindings, poot_kir_binding, desc->slot_ref);
    if (sb->elem != desc->type || !(sb->access & POOT_KIR_ACCESS_READ))
      return bfail(b, POOT_INVALID_ARGUMENT,
                   "param '%s': slot binding '%s' must be readable with %s elements", desc->name,
                   sb->name, poot_kir_scalar_name(desc->type));
  } else if (desc->kind != POOT_KIR_PARAM_PUSH) {
    return bfail(b, POOT_INVALID_ARGUMENT, "param '%s': bad kind %d", desc->name, (int)desc->kind);
  }
  poot_kir_param np = *desc;
  np.name = poot_arena_strdup(&b->impl->arena, desc->name);
  if (!np.name || !push(&b->params, &np)) return oom(b);
  *out_index = (uint32_t)b->params.len - 1;
  return POOT_OK_STATUS;
}

poot_status poot_kir_add_shared(poot_kir_builder *b, const char *name, poot_kir_scalar elem,
                                uint32_t count, uint32_t *out_ref) {
  *out_ref = 0;
  if (!is_ident(name))
    return bfail(b, POOT_INVALID_ARGUMENT, "shared name '%s' is not an identifier",
                 name ? name : "(null)");
  if ((unsigned)elem >= POOT_KIR_SCALAR_COUNT || elem == POOT_KIR_BOOL || count == 0)
    return bfail(b, POOT_INVALID_ARGUMENT,
                 "shared '%s': needs a non-bool element type and a count > 0", name);
  poot_kir_shared s = {poot_arena_strdup(&b->impl->arena, name), elem, count};
  if (!s.name || !push(&b->shared, &s)) return oom(b);
  *out_ref = (uint32_t)b->shared.len - 1;
  return POOT_OK_STATUS;
}

poot_status poot_kir_add_private(poot_kir_builder *b, const char *name, poot_kir_type type,
                                 uint32_t count, uint32_t *out_ref) {
  *out_ref = 0;
  if (!is_ident(name))
    return bfail(b, POOT_INVALID_ARGUMENT, "private name '%s' is not an identifier",
                 name ? name : "(null)");
  if (type.scalar >= POOT_KIR_SCALAR_COUNT ||
      (type.lanes != 1 && type.lanes != 2 && type.lanes != 4) || type.frag || count == 0 ||
      count > 4096)
    return bfail(b, POOT_INVALID_ARGUMENT, "private '%s': bad type or count %u (1..4096)", name,
                 count);
  poot_kir_private p = {poot_arena_strdup(&b->impl->arena, name), type, count};
  if (!p.name || !push(&b->privates, &p)) return oom(b);
  *out_ref = (uint32_t)b->privates.len - 1;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------ values */

static poot_kir_inst mk(poot_kir_op op, uint32_t n, poot_kir_value a0, poot_kir_value a1,
                        poot_kir_value a2) {
  poot_kir_inst in;
  memset(&in, 0, sizeof in);
  in.op = op;
  in.arg_count = n;
  in.args[0] = a0;
  in.args[1] = a1;
  in.args[2] = a2;
  return in;
}

poot_status poot_kir_const(poot_kir_builder *b, poot_kir_scalar type, uint64_t bits,
                           poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_CONST, 0, 0, 0, 0);
  in.type = poot_kir_type_make(type, 1);
  in.imm = bits;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_const_u32(poot_kir_builder *b, uint32_t v, poot_kir_value *out) {
  return poot_kir_const(b, POOT_KIR_U32, v, out);
}

poot_status poot_kir_const_i32(poot_kir_builder *b, int32_t v, poot_kir_value *out) {
  return poot_kir_const(b, POOT_KIR_I32, (uint32_t)v, out);
}

poot_status poot_kir_const_f32(poot_kir_builder *b, float v, poot_kir_value *out) {
  return poot_kir_const(b, POOT_KIR_F32, poot_f32_bits(v), out);
}

poot_status poot_kir_const_bool(poot_kir_builder *b, bool v, poot_kir_value *out) {
  return poot_kir_const(b, POOT_KIR_BOOL, v ? 1 : 0, out);
}

poot_status poot_kir_builtin_get(poot_kir_builder *b, poot_kir_builtin which, uint32_t dim,
                                 poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_BUILTIN, 0, 0, 0, 0);
  in.ref = (uint32_t)which;
  in.imm = dim;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_global_id(poot_kir_builder *b, uint32_t dim, poot_kir_value *out) {
  *out = 0;
  poot_kir_value wg, sz, lid;
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, dim, &wg));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_SIZE, dim, &sz));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_ID, dim, &lid));
  poot_kir_value base;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, wg, sz, &base));
  return poot_kir_binary(b, POOT_KIR_OP_ADD, base, lid, out);
}

poot_status poot_kir_param_get(poot_kir_builder *b, uint32_t index, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_PARAM, 0, 0, 0, 0);
  in.ref = index;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_unary(poot_kir_builder *b, poot_kir_op op, poot_kir_value a,
                           poot_kir_value *out) {
  *out = 0;
  if (!(op >= POOT_KIR_OP_NEG && op <= POOT_KIR_OP_CEIL))
    return bfail(b, POOT_INVALID_ARGUMENT, "%s is not a unary op", poot_kir_op_name(op));
  poot_kir_inst in = mk(op, 1, a, 0, 0);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_binary(poot_kir_builder *b, poot_kir_op op, poot_kir_value a, poot_kir_value c,
                            poot_kir_value *out) {
  *out = 0;
  if (!(op >= POOT_KIR_OP_ADD && op <= POOT_KIR_OP_GE))
    return bfail(b, POOT_INVALID_ARGUMENT, "%s is not a binary op", poot_kir_op_name(op));
  poot_kir_inst in = mk(op, 2, a, c, 0);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_fma(poot_kir_builder *b, poot_kir_value a, poot_kir_value c, poot_kir_value d,
                         poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_FMA, 3, a, c, d);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_dot4_i8(poot_kir_builder *b, poot_kir_value a, poot_kir_value c,
                             poot_kir_value acc, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_DOT4_I8, 3, a, c, acc);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_select(poot_kir_builder *b, poot_kir_value cond, poot_kir_value a,
                            poot_kir_value c, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_SELECT, 3, cond, a, c);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_convert(poot_kir_builder *b, poot_kir_scalar to, poot_kir_value a,
                             poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_CONVERT, 1, a, 0, 0);
  poot_kir_type at = poot_kir_builder_value_type(b, a);
  in.type = poot_kir_type_make(to, at.lanes ? at.lanes : 1);
  if ((unsigned)to >= POOT_KIR_SCALAR_COUNT) in.type.lanes = 0;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_bitcast(poot_kir_builder *b, poot_kir_type to, poot_kir_value a,
                             poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_BITCAST, 1, a, 0, 0);
  in.type = to;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_splat(poot_kir_builder *b, uint32_t lanes, poot_kir_value a,
                           poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_SPLAT, 1, a, 0, 0);
  in.type.lanes = (uint8_t)(lanes > 255 ? 0 : lanes);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_vec(poot_kir_builder *b, uint32_t count, const poot_kir_value *elems,
                         poot_kir_value *out) {
  *out = 0;
  if (count != 2 && count != 4)
    return bfail(b, POOT_INVALID_ARGUMENT, "vec takes 2 or 4 elements, got %u", count);
  poot_kir_inst in = mk(POOT_KIR_OP_VEC, count, 0, 0, 0);
  for (uint32_t i = 0; i < count; i++) in.args[i] = elems[i];
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_extract(poot_kir_builder *b, poot_kir_value v, uint32_t lane,
                             poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_EXTRACT, 1, v, 0, 0);
  in.imm = lane;
  return emit(b, &in, NULL, out);
}

/* ------------------------------------------------------------------ memory */

poot_status poot_kir_load(poot_kir_builder *b, poot_kir_space space, uint32_t ref,
                          poot_kir_value index, uint32_t lanes, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_LOAD, 1, index, 0, 0);
  in.space = space;
  in.ref = ref;
  poot_kir_scalar elem = POOT_KIR_U32;
  if (space == POOT_KIR_SPACE_GLOBAL && ref < b->bindings.len)
    elem = POOT_VEC_AT(&b->bindings, poot_kir_binding, ref).elem;
  else if (space == POOT_KIR_SPACE_SHARED && ref < b->shared.len)
    elem = POOT_VEC_AT(&b->shared, poot_kir_shared, ref).elem;
  in.type = poot_kir_type_make(elem, lanes > 255 ? 0 : lanes);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_store(poot_kir_builder *b, poot_kir_space space, uint32_t ref,
                           poot_kir_value index, poot_kir_value value) {
  poot_kir_inst in = mk(POOT_KIR_OP_STORE, 2, index, value, 0);
  in.space = space;
  in.ref = ref;
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_priv_load(poot_kir_builder *b, uint32_t ref, uint32_t element,
                               poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_PRIV_LOAD, 0, 0, 0, 0);
  in.ref = ref;
  in.imm = element;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_priv_store(poot_kir_builder *b, uint32_t ref, uint32_t element,
                                poot_kir_value value) {
  poot_kir_inst in = mk(POOT_KIR_OP_PRIV_STORE, 1, value, 0, 0);
  in.ref = ref;
  in.imm = element;
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_atomic_rmw(poot_kir_builder *b, poot_kir_op op, poot_kir_space space,
                                uint32_t ref, poot_kir_value index, poot_kir_value value,
                                poot_kir_value *out_old) {
  *out_old = 0;
  if (!(op >= POOT_KIR_OP_ATOMIC_ADD && op <= POOT_KIR_OP_ATOMIC_XCHG))
    return bfail(b, POOT_INVALID_ARGUMENT, "%s is not an atomic op (use poot_kir_atomic_cas)",
                 poot_kir_op_name(op));
  poot_kir_inst in = mk(op, 2, index, value, 0);
  in.space = space;
  in.ref = ref;
  return emit(b, &in, NULL, out_old);
}

poot_status poot_kir_atomic_cas(poot_kir_builder *b, poot_kir_space space, uint32_t ref,
                                poot_kir_value index, poot_kir_value compare, poot_kir_value value,
                                poot_kir_value *out_old) {
  poot_kir_inst in = mk(POOT_KIR_OP_ATOMIC_CAS, 3, index, compare, value);
  in.space = space;
  in.ref = ref;
  return emit(b, &in, NULL, out_old);
}

/* ------------------------------------------------------ sync and subgroups */

poot_status poot_kir_barrier(poot_kir_builder *b) {
  poot_kir_inst in = mk(POOT_KIR_OP_BARRIER, 0, 0, 0, 0);
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_subgroup_reduce(poot_kir_builder *b, poot_kir_op op, poot_kir_value v,
                                     poot_kir_value *out) {
  *out = 0;
  if (!(op >= POOT_KIR_OP_SG_REDUCE_ADD && op <= POOT_KIR_OP_SG_REDUCE_MIN))
    return bfail(b, POOT_INVALID_ARGUMENT, "%s is not a subgroup reduction", poot_kir_op_name(op));
  poot_kir_inst in = mk(op, 1, v, 0, 0);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_subgroup_shuffle(poot_kir_builder *b, poot_kir_value v, poot_kir_value lane,
                                      poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_SG_SHUFFLE, 2, v, lane, 0);
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_subgroup_shuffle_xor(poot_kir_builder *b, poot_kir_value v, uint32_t mask,
                                          poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_SG_SHUFFLE_XOR, 1, v, 0, 0);
  in.imm = mask;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_subgroup_broadcast(poot_kir_builder *b, poot_kir_value v, uint32_t lane,
                                        poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_SG_BROADCAST, 1, v, 0, 0);
  in.imm = lane;
  return emit(b, &in, NULL, out);
}

/* ------------------------------------------- matrix fragments, async copies */

poot_status poot_kir_mma_load(poot_kir_builder *b, uint32_t ref, poot_kir_value row,
                              bool transposed, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_MMA_LOAD, 1, row, 0, 0);
  in.space = POOT_KIR_SPACE_SHARED;
  in.ref = ref;
  in.imm = transposed ? 1u : 0u;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_mma(poot_kir_builder *b, poot_kir_scalar operand, poot_kir_value a,
                         poot_kir_value bfrag, poot_kir_value c, poot_kir_value *out) {
  poot_kir_inst in = mk(POOT_KIR_OP_MMA, 3, a, bfrag, c);
  in.imm = (uint64_t)operand;
  return emit(b, &in, NULL, out);
}

poot_status poot_kir_async_copy(poot_kir_builder *b, uint32_t shared, poot_kir_value dst,
                                uint32_t binding, poot_kir_value src, poot_kir_value valid) {
  poot_kir_inst in = mk(POOT_KIR_OP_ASYNC_COPY, 3, dst, src, valid);
  in.ref = shared;
  in.imm = binding;
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_async_commit(poot_kir_builder *b) {
  poot_kir_inst in = mk(POOT_KIR_OP_ASYNC_COMMIT, 0, 0, 0, 0);
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_async_wait(poot_kir_builder *b, uint32_t pending) {
  poot_kir_inst in = mk(POOT_KIR_OP_ASYNC_WAIT, 0, 0, 0, 0);
  in.imm = pending;
  return emit(b, &in, NULL, NULL);
}

poot_status poot_kir_check(poot_kir_builder *b, poot_kir_value cond, uint32_t trap_code) {
  poot_kir_inst in = mk(POOT_KIR_OP_CHECK, 1, cond, 0, 0);
  in.imm = trap_code;
  return emit(b, &in, NULL, NULL);
}

/* ------------------------------------------------------------ control flow */

static poot_status push_frame(poot_kir_builder *b, int kind, poot_kir_inst *owner,
                              poot_kir_block *blk, uint32_t values_at_open) {
  frame f = {kind, owner, blk, values_at_open};
  if (!push(&b->frames, &f)) return oom(b);
  return POOT_OK_STATUS;
}

/* Values defined in the closing block go out of scope. */
static void close_scope(poot_kir_builder *b, uint32_t values_at_open) {
  for (size_t v = values_at_open + 1; v < b->live.len; v++) POOT_VEC_AT(&b->live, uint8_t, v) = 0;
}

poot_status poot_kir_if_begin(poot_kir_builder *b, poot_kir_value cond) {
  poot_kir_inst tmpl = mk(POOT_KIR_OP_IF, 1, cond, 0, 0);
  poot_kir_inst *in;
  POOT_TRY(emit(b, &tmpl, &in, NULL));
  return push_frame(b, FRAME_THEN, in, &in->body, (uint32_t)b->values.len - 1);
}

poot_status poot_kir_else_begin(poot_kir_builder *b) {
  frame *f = top(b);
  if (f->kind != FRAME_THEN)
    return bfail(b, POOT_INVALID_ARGUMENT, "else without an open if (statement #%u)", b->next_id);
  close_scope(b, f->values_at_open);
  f->kind = FRAME_ELSE;
  f->block = &f->owner->else_body;
  f->values_at_open = (uint32_t)b->values.len - 1;
  return POOT_OK_STATUS;
}

poot_status poot_kir_for_begin(poot_kir_builder *b, poot_kir_value start, poot_kir_value end,
                               poot_kir_value step, poot_kir_value *out_index) {
  *out_index = 0;
  poot_kir_inst tmpl = mk(POOT_KIR_OP_FOR, 3, start, end, step);
  poot_kir_inst *in;
  POOT_TRY(emit(b, &tmpl, &in, out_index));
  /* The induction value belongs to the body's scope. */
  return push_frame(b, FRAME_FOR, in, &in->body, in->result - 1);
}

poot_status poot_kir_end(poot_kir_builder *b) {
  if (b->frames.len <= 1)
    return bfail(b, POOT_INVALID_ARGUMENT, "end without an open if or for (statement #%u)",
                 b->next_id);
  frame *f = top(b);
  close_scope(b, f->values_at_open);
  b->frames.len--;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------ finish */

static void *arena_copy(poot_arena *a, const poot_vec *v) {
  if (v->len == 0) return NULL;
  return poot_arena_memdup(a, v->data, v->len * v->elem_size, 16);
}

poot_status poot_kir_builder_finish(poot_kir_builder *b, poot_kir_kernel **out_kernel) {
  *out_kernel = NULL;
  poot_status st = POOT_OK_STATUS;
  if (b->failed) {
    st = bfail(b, POOT_INVALID_ARGUMENT, "cannot finish: an earlier builder call failed");
    goto done;
  }
  if (b->frames.len != 1) {
    st = bfail(b, POOT_INVALID_ARGUMENT, "cannot finish: %zu if/for block(s) still open",
               b->frames.len - 1);
    goto done;
  }
  poot_kir_kernel *k = b->kernel;
  poot_arena *a = &b->impl->arena;
  k->bindings = arena_copy(a, &b->bindings);
  k->binding_count = (uint32_t)b->bindings.len;
  k->params = arena_copy(a, &b->params);
  k->param_count = (uint32_t)b->params.len;
  k->shared = arena_copy(a, &b->shared);
  k->shared_count = (uint32_t)b->shared.len;
  k->privates = arena_copy(a, &b->privates);
  k->private_count = (uint32_t)b->privates.len;
  k->values = arena_copy(a, &b->values);
  k->value_count = (uint32_t)b->values.len - 1;
  k->inst_count = b->next_id - 1;
  if ((b->bindings.len && !k->bindings) || (b->params.len && !k->params) ||
      (b->shared.len && !k->shared) || (b->privates.len && !k->privates) || !k->values) {
    st = oom(b);
    goto done;
  }
  uint32_t max_binding = 0;
  bool any = false;
  for (uint32_t i = 0; i < k->binding_count; i++) {
    if (!any || k->bindings[i].binding > max_binding) max_binding = k->bindings[i].binding;
    any = true;
  }
  k->error_binding = any ? max_binding + 1 : 0;
  k->param_binding = k->error_binding + 1;
  st = poot_kir_verify(k, NULL);
  if (st) goto done;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_kir_print(k, &sb);
  st = poot_strbuf_status(&sb);
  if (!st) {
    k->hash = poot_hash64(sb.data, sb.len, 0x6b69722d68617368ull);
    k->hash128 = poot_hash128_of(sb.data, sb.len);
    k->text = poot_arena_strndup(a, sb.data, sb.len);
    k->text_len = sb.len;
    if (!k->text) st = oom(b);
  }
  poot_strbuf_deinit(&sb);
  if (st) goto done;
  /* Hand the arena to the kernel. */
  b->impl = NULL;
  *out_kernel = k;
done:
  poot_kir_builder_destroy(b);
  return st;
}
