/* Small KIR kernels for the device tests; see vk_kernels.h. */
#include "vk_kernels.h"

#define T(expr)        \
  do {                 \
    st = (expr);       \
    if (st) goto fail; \
  } while (0)

static poot_status begin(const char *name, uint32_t wg, poot_kir_builder **b) {
  poot_kir_kernel_desc desc = {.name = name, .workgroup_size = {wg, 1, 1}, .subgroup_size = 0};
  return poot_kir_builder_create(&desc, b);
}

static poot_status bind(poot_kir_builder *b, const char *name, uint32_t n, poot_kir_scalar t,
                        poot_kir_access a, uint32_t *ref) {
  poot_kir_binding d = {.name = name, .binding = n, .elem = t, .access = a, .align = 16};
  return poot_kir_add_binding(b, &d, ref);
}

poot_status vkt_build_affine(uint32_t slot_index, poot_kir_kernel **out) {
  poot_kir_builder *b = NULL;
  poot_status st = begin("affine_slot", 64, &b);
  if (st) return st;
  uint32_t in, o, slots, pn, pbias;
  T(bind(b, "in", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &in));
  T(bind(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &o));
  T(bind(b, "slots", 2, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &slots));
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  poot_kir_param bias = {.name = "bias",
                         .type = POOT_KIR_U32,
                         .kind = POOT_KIR_PARAM_SLOT,
                         .slot_ref = slots,
                         .slot_index = slot_index};
  T(poot_kir_add_param(b, &n, &pn));
  T(poot_kir_add_param(b, &bias, &pbias));
  poot_kir_value gid, vn, vb, lt, x, three, m, y;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_param_get(b, pbias, &vb));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, in, gid, 1, &x));
  T(poot_kir_const_u32(b, 3, &three));
  T(poot_kir_binary(b, POOT_KIR_OP_MUL, x, three, &m));
  T(poot_kir_binary(b, POOT_KIR_OP_ADD, m, vb, &y));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, o, gid, y));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

poot_status vkt_build_float(poot_kir_kernel **out) {
  poot_kir_builder *b = NULL;
  poot_status st = begin("float_chain", 64, &b);
  if (st) return st;
  uint32_t xr, yr, slots, pn, ps;
  T(bind(b, "x", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &xr));
  T(bind(b, "y", 1, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, &yr));
  T(bind(b, "slots", 2, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &slots));
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  poot_kir_param s = {.name = "s",
                      .type = POOT_KIR_F32,
                      .kind = POOT_KIR_PARAM_SLOT,
                      .slot_ref = slots,
                      .slot_index = 0};
  T(poot_kir_add_param(b, &n, &pn));
  T(poot_kir_add_param(b, &s, &ps));
  poot_kir_value gid, vn, vs, lt, x, e, es, xx, nxx, xs, y;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_param_get(b, ps, &vs));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, xr, gid, 1, &x));
  T(poot_kir_binary(b, POOT_KIR_OP_MUL, x, x, &xx));
  T(poot_kir_unary(b, POOT_KIR_OP_NEG, xx, &nxx));
  T(poot_kir_unary(b, POOT_KIR_OP_EXP, nxx, &e));
  T(poot_kir_binary(b, POOT_KIR_OP_MUL, e, vs, &es));
  T(poot_kir_binary(b, POOT_KIR_OP_MUL, x, vs, &xs));
  T(poot_kir_binary(b, POOT_KIR_OP_ADD, es, xs, &y));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, yr, gid, y));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

poot_status vkt_build_checked(uint32_t trap, poot_kir_kernel **out) {
  poot_kir_builder *b = NULL;
  poot_status st = begin("gather_checked", 64, &b);
  if (st) return st;
  uint32_t in, o, slots, pn, plim;
  T(bind(b, "in", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &in));
  T(bind(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &o));
  T(bind(b, "slots", 2, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &slots));
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  poot_kir_param lim = {.name = "limit",
                        .type = POOT_KIR_U32,
                        .kind = POOT_KIR_PARAM_SLOT,
                        .slot_ref = slots,
                        .slot_index = 0};
  T(poot_kir_add_param(b, &n, &pn));
  T(poot_kir_add_param(b, &lim, &plim));
  poot_kir_value gid, vn, vl, lt, x, ok;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_param_get(b, plim, &vl));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, in, gid, 1, &x));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, x, vl, &ok));
  T(poot_kir_check(b, ok, trap));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, o, gid, x));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

/* for k in 0..end: ctl[1] += 1 (an atomic: a side effect no compiler may
 * drop or fold) and acc = acc * 3 + k. */
static poot_status spin_inner(poot_kir_builder *b, uint32_t ctl, uint32_t acc, poot_kir_value zero,
                              poot_kir_value one, poot_kir_value end) {
  poot_status st;
  poot_kir_value k, a, three, m, s, s2, old;
  T(poot_kir_for_begin(b, zero, end, one, &k));
  T(poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, ctl, one, one, &old));
  T(poot_kir_priv_load(b, acc, 0, &a));
  T(poot_kir_const_u32(b, 3, &three));
  T(poot_kir_binary(b, POOT_KIR_OP_MUL, a, three, &m));
  T(poot_kir_binary(b, POOT_KIR_OP_ADD, m, k, &s));
  T(poot_kir_binary(b, POOT_KIR_OP_ADD, s, old, &s2));
  T(poot_kir_priv_store(b, acc, 0, s2));
  T(poot_kir_end(b));
fail:
  return st;
}

/* end = ctl[0] == 0 ? big : 0, re-read through an atomic each time. */
static poot_status spin_bound(poot_kir_builder *b, uint32_t ctl, poot_kir_value zero,
                              poot_kir_value big, poot_kir_value *end) {
  poot_status st;
  poot_kir_value f, z;
  T(poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, ctl, zero, zero, &f));
  T(poot_kir_binary(b, POOT_KIR_OP_EQ, f, zero, &z));
  T(poot_kir_select(b, z, big, zero, end));
fail:
  return st;
}

poot_status vkt_build_spin(poot_kir_kernel **out) {
  poot_kir_builder *b = NULL;
  poot_status st = begin("test_spin_forever", 1, &b);
  if (st) return st;
  uint32_t ctl, o, acc;
  T(bind(b, "ctl", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, &ctl));
  T(bind(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &o));
  T(poot_kir_add_private(b, "acc", poot_kir_type_make(POOT_KIR_U32, 1), 1, &acc));
  poot_kir_value zero, one, big, iend, a;
  T(poot_kir_const_u32(b, 0, &zero));
  T(poot_kir_const_u32(b, 1, &one));
  /* llvmpipe stops any loop after 65535 iterations, so the length comes
   * from the grid (VKT_SPIN_GRID workgroups) rather than from nested loops. */
  T(poot_kir_const_u32(b, 60000, &big));
  T(spin_bound(b, ctl, zero, big, &iend));
  T(spin_inner(b, ctl, acc, zero, one, iend));
  T(poot_kir_priv_load(b, acc, 0, &a));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, o, zero, a));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}

poot_status vkt_build_fma(poot_kir_kernel **out) {
  poot_kir_builder *b = NULL;
  poot_status st = begin("fma3", 64, &b);
  if (st) return st;
  static const char *const names[4] = {"a", "b", "c", "out"};
  uint32_t refs[4], pn;
  for (uint32_t i = 0; i < 4; i++)
    T(bind(b, names[i], i, POOT_KIR_F32, i < 3 ? POOT_KIR_ACCESS_READ : POOT_KIR_ACCESS_WRITE,
           &refs[i]));
  poot_kir_param n = {.name = "n", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  T(poot_kir_add_param(b, &n, &pn));
  poot_kir_value gid, vn, lt, x[3], y;
  T(poot_kir_global_id(b, 0, &gid));
  T(poot_kir_param_get(b, pn, &vn));
  T(poot_kir_binary(b, POOT_KIR_OP_LT, gid, vn, &lt));
  T(poot_kir_if_begin(b, lt));
  for (uint32_t i = 0; i < 3; i++)
    T(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, refs[i], gid, 1, &x[i]));
  T(poot_kir_fma(b, x[0], x[1], x[2], &y));
  T(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, refs[3], gid, y));
  T(poot_kir_end(b));
  return poot_kir_builder_finish(b, out);
fail:
  poot_kir_builder_destroy(b);
  return st;
}
