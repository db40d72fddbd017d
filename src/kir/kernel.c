/* A finished kernel's accessors and destruction. */
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
