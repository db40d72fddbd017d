/* The readable text form of a kernel. Deterministic: the content hash is
 * computed over it, so everything that changes a kernel's meaning appears
 * here, and nothing else (no pointers, no addresses). */
#include "kir_impl.h"

static const char dims[3] = {'x', 'y', 'z'};

/* "v<id>", the most printed piece of a kernel's text, without a printf:
 * planning prints every kernel it builds. */
static void value(poot_strbuf *o, uint32_t id) {
  char buf[16], *p = buf + sizeof buf;
  do {
    *--p = (char)('0' + id % 10);
    id /= 10;
  } while (id);
  *--p = 'v';
  poot_strbuf_append(o, p, (size_t)(buf + sizeof buf - p));
}

static void indent(poot_strbuf *o, int depth) {
  for (int i = 0; i < depth; i++) poot_strbuf_puts(o, "  ");
}

static const char *access_name(poot_kir_access a) {
  switch (a) {
    case POOT_KIR_ACCESS_READ:
      return "read";
    case POOT_KIR_ACCESS_WRITE:
      return "write";
    case POOT_KIR_ACCESS_READ_WRITE:
      return "read_write";
  }
  return "?";
}

static void mem(const poot_kir_kernel *k, const poot_kir_inst *in, poot_strbuf *o) {
  if (in->space == POOT_KIR_SPACE_GLOBAL) {
    poot_strbuf_puts(o, "global ");
    poot_strbuf_puts(o, in->ref < k->binding_count ? k->bindings[in->ref].name : "?");
  } else {
    poot_strbuf_puts(o, "shared ");
    poot_strbuf_puts(o, in->ref < k->shared_count ? k->shared[in->ref].name : "?");
  }
  poot_strbuf_putc(o, '[');
  value(o, in->args[0]);
  poot_strbuf_putc(o, ']');
}

void poot_kir_print_inst(const poot_kir_kernel *k, const poot_kir_inst *in, poot_strbuf *o) {
  if (in->result && in->op != POOT_KIR_OP_FOR) {
    value(o, in->result);
    poot_strbuf_puts(o, " = ");
    poot_strbuf_puts(o, poot_kir_op_name(in->op));
    poot_strbuf_putc(o, ' ');
    poot__kir_type_print(in->type, o);
  } else {
    poot_strbuf_puts(o, poot_kir_op_name(in->op));
  }
  switch (in->op) {
    case POOT_KIR_OP_CONST:
      poot_strbuf_putc(o, ' ');
      poot__kir_const_print((poot_kir_scalar)in->type.scalar, in->imm, o);
      return;
    case POOT_KIR_OP_BUILTIN:
      poot_strbuf_printf(o, " %s", poot_kir_builtin_name((poot_kir_builtin)in->ref));
      if (in->ref <= POOT_KIR_BUILTIN_LOCAL_SIZE) poot_strbuf_printf(o, ".%c", dims[in->imm % 3]);
      return;
    case POOT_KIR_OP_PARAM:
      poot_strbuf_printf(o, " %s", in->ref < k->param_count ? k->params[in->ref].name : "?");
      return;
    case POOT_KIR_OP_EXTRACT:
      poot_strbuf_printf(o, " v%u, %llu", in->args[0], (unsigned long long)in->imm);
      return;
    case POOT_KIR_OP_LOAD:
      poot_strbuf_putc(o, ' ');
      mem(k, in, o);
      return;
    case POOT_KIR_OP_STORE:
      poot_strbuf_putc(o, ' ');
      mem(k, in, o);
      poot_strbuf_puts(o, ", ");
      value(o, in->args[1]);
      return;
    case POOT_KIR_OP_ATOMIC_ADD:
    case POOT_KIR_OP_ATOMIC_MAX:
    case POOT_KIR_OP_ATOMIC_MIN:
    case POOT_KIR_OP_ATOMIC_XCHG:
    case POOT_KIR_OP_ATOMIC_CAS:
      poot_strbuf_putc(o, ' ');
      mem(k, in, o);
      for (uint32_t i = 1; i < in->arg_count; i++) poot_strbuf_printf(o, ", v%u", in->args[i]);
      return;
    case POOT_KIR_OP_PRIV_LOAD:
      poot_strbuf_printf(o, " %s[%llu]",
                         in->ref < k->private_count ? k->privates[in->ref].name : "?",
                         (unsigned long long)in->imm);
      return;
    case POOT_KIR_OP_PRIV_STORE:
      poot_strbuf_printf(o, " %s[%llu], v%u",
                         in->ref < k->private_count ? k->privates[in->ref].name : "?",
                         (unsigned long long)in->imm, in->args[0]);
      return;
    case POOT_KIR_OP_SG_SHUFFLE_XOR:
    case POOT_KIR_OP_SG_BROADCAST:
    case POOT_KIR_OP_CHECK:
      poot_strbuf_printf(o, " v%u, %llu", in->args[0], (unsigned long long)in->imm);
      return;
    case POOT_KIR_OP_MMA_LOAD:
      poot_strbuf_putc(o, ' ');
      mem(k, in, o);
      if (in->imm & 1) poot_strbuf_puts(o, " trans");
      return;
    case POOT_KIR_OP_MMA:
      poot_strbuf_printf(o, " %s v%u, v%u, v%u", poot_kir_scalar_name((poot_kir_scalar)in->imm),
                         in->args[0], in->args[1], in->args[2]);
      return;
    case POOT_KIR_OP_ASYNC_COPY:
      poot_strbuf_printf(o, " %s[v%u], %s[v%u] if v%u",
                         in->ref < k->shared_count ? k->shared[in->ref].name : "?", in->args[0],
                         in->imm < k->binding_count ? k->bindings[in->imm].name : "?",
                         in->args[1], in->args[2]);
      return;
    case POOT_KIR_OP_ASYNC_WAIT:
      poot_strbuf_printf(o, " %llu", (unsigned long long)in->imm);
      return;
    case POOT_KIR_OP_FOR:
      poot_strbuf_printf(o, " v%u: ", in->result);
      poot__kir_type_print(in->type, o);
      poot_strbuf_printf(o, " = v%u to v%u step v%u", in->args[0], in->args[1], in->args[2]);
      return;
    default:
      break;
  }
  for (uint32_t i = 0; i < in->arg_count && i < POOT_KIR_MAX_ARGS; i++) {
    poot_strbuf_puts(o, i ? ", " : " ");
    value(o, in->args[i]);
  }
}

static void block(const poot_kir_kernel *k, const poot_kir_block *b, int depth, poot_strbuf *o) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    indent(o, depth);
    poot_kir_print_inst(k, in, o);
    if (in->op == POOT_KIR_OP_IF || in->op == POOT_KIR_OP_FOR) {
      poot_strbuf_puts(o, " {\n");
      block(k, &in->body, depth + 1, o);
      indent(o, depth);
      poot_strbuf_putc(o, '}');
      if (in->op == POOT_KIR_OP_IF && in->else_body.first) {
        poot_strbuf_puts(o, " else {\n");
        block(k, &in->else_body, depth + 1, o);
        indent(o, depth);
        poot_strbuf_putc(o, '}');
      }
    }
    poot_strbuf_putc(o, '\n');
  }
}

void poot_kir_print(const poot_kir_kernel *k, poot_strbuf *o) {
  poot_strbuf_printf(o, "kernel %s workgroup(%u, %u, %u) subgroup(%u)\n", k->name,
                     k->workgroup_size[0], k->workgroup_size[1], k->workgroup_size[2],
                     k->subgroup_size);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const poot_kir_binding *b = &k->bindings[i];
    poot_strbuf_printf(o, "  binding %s: %u %s %s align %u%s\n", b->name, b->binding,
                       poot_kir_scalar_name(b->elem), access_name(b->access), b->align,
                       b->invariant ? " invariant" : "");
  }
  for (uint32_t i = 0; i < k->param_count; i++) {
    const poot_kir_param *p = &k->params[i];
    poot_strbuf_printf(o, "  param %s: %s ", p->name, poot_kir_scalar_name(p->type));
    if (p->kind == POOT_KIR_PARAM_SLOT)
      poot_strbuf_printf(o, "slot %s[%u]\n",
                         p->slot_ref < k->binding_count ? k->bindings[p->slot_ref].name : "?",
                         p->slot_index);
    else
      poot_strbuf_puts(o, "push\n");
  }
  for (uint32_t i = 0; i < k->shared_count; i++)
    poot_strbuf_printf(o, "  shared %s: %s[%u]\n", k->shared[i].name,
                       poot_kir_scalar_name(k->shared[i].elem), k->shared[i].count);
  for (uint32_t i = 0; i < k->private_count; i++) {
    poot_strbuf_printf(o, "  private %s: ", k->privates[i].name);
    poot__kir_type_print(k->privates[i].type, o);
    poot_strbuf_printf(o, "[%u]\n", k->privates[i].count);
  }
  if (k->has_checks) poot_strbuf_printf(o, "  error_binding %u\n", k->error_binding);
  poot_strbuf_puts(o, "{\n");
  block(k, &k->body, 1, o);
  poot_strbuf_puts(o, "}\n");
}
