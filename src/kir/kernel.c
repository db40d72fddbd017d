/* A finished kernel's accessors, destruction and statement queries. */
#include "kir_impl.h"

void poot_kir_kernel_destroy(poot_kir_kernel *kernel) {
  if (!kernel) return;
  poot__kir_kernel_impl *impl = kernel->impl_;
  /* The kernel itself lives in the arena. */
  poot_arena_deinit(&impl->arena);
  poot_free(impl);
}

uint32_t poot_kir_kernel_threads(const poot_kir_kernel *k) {
  return k->workgroup_size[0] * k->workgroup_size[1] * k->workgroup_size[2];
}

uint64_t poot_kir_kernel_shared_bytes(const poot_kir_kernel *k) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < k->shared_count; i++)
    total += (uint64_t)k->shared[i].count * poot_kir_scalar_size(k->shared[i].elem);
  return total;
}

uint64_t poot_kir_kernel_shared_offset(const poot_kir_kernel *k, uint32_t index) {
  uint64_t at = 0;
  for (uint32_t i = 0; i < k->shared_count && i < index; i++) {
    at = (at + 15) & ~(uint64_t)15;
    at += (uint64_t)k->shared[i].count * poot_kir_scalar_size(k->shared[i].elem);
  }
  return index < k->shared_count ? (at + 15) & ~(uint64_t)15 : at;
}

int poot_kir_kernel_find_binding(const poot_kir_kernel *k, uint32_t binding) {
  for (uint32_t i = 0; i < k->binding_count; i++)
    if (k->bindings[i].binding == binding) return (int)i;
  return -1;
}

bool poot_kir_kernel_const_bits(const poot_kir_kernel *k, poot_kir_value v, uint64_t *out_bits) {
  if (out_bits) *out_bits = 0;
  if (v == 0 || v > k->value_count) return false;
  const poot_kir_inst *def = k->values[v].def;
  if (!def || def->op != POOT_KIR_OP_CONST) return false;
  if (out_bits) *out_bits = def->imm;
  return true;
}

poot_kir_scalar poot__kir_space_elem(const poot_kir_kernel *k, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_GLOBAL ? k->bindings[ref].elem : k->shared[ref].elem;
}

/* Reads of invariant bindings (weights, constants), registers, private
 * arrays and shared memory only; no global store, atomic, check, barrier or
 * slot parameter (the PTX renderer's griddepcontrol.wait placement). */
bool poot__kir_runs_before_wait(const poot_kir_kernel *k, const poot_kir_inst *in) {
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_LOAD:
      return in->space == POOT_KIR_SPACE_SHARED ||
             (in->space == POOT_KIR_SPACE_GLOBAL && in->ref < k->binding_count &&
              k->bindings[in->ref].invariant);
    case POOT_KIR_CLASS_STORE:
      return in->space == POOT_KIR_SPACE_SHARED;
    case POOT_KIR_CLASS_PARAM:
      return in->ref < k->param_count && k->params[in->ref].kind == POOT_KIR_PARAM_PUSH;
    case POOT_KIR_CLASS_ASYNC: /* a copy reads global memory; commit/wait order it */
      return in->op == POOT_KIR_OP_ASYNC_COPY && in->imm < k->binding_count &&
             k->bindings[in->imm].invariant;
    case POOT_KIR_CLASS_ATOMIC:
    case POOT_KIR_CLASS_BARRIER:
    case POOT_KIR_CLASS_CHECK:
      return false;
    case POOT_KIR_CLASS_IF:
    case POOT_KIR_CLASS_FOR:
      for (const poot_kir_inst *s = in->body.first; s; s = s->next)
        if (!poot__kir_runs_before_wait(k, s)) return false;
      for (const poot_kir_inst *s = in->else_body.first; s; s = s->next)
        if (!poot__kir_runs_before_wait(k, s)) return false;
      return true;
    default:
      return true;
  }
}
