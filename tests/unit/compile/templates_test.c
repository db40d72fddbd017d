/* templates_test.c — every kernel template at several shapes (odd and
 * non-power-of-two included), planned and run on the KIR interpreter
 * against poot_eval on random inputs: bit-exact for integer, packed-byte
 * and movement work and for elementwise float chains (the interpreter uses
 * the oracle's C math), within the reassociation bound of docs/compiler.md
 * for cooperative float contractions; at subgroup sizes 8, 32 and 64 and on
 * a target with no subgroup operations and 32-bit storage only (the WebGPU
 * profile: shared-memory tree reductions, manual f16/bf16 rounding). The
 * graphs are the shared catalogue of template_cases.c, which the device
 * conformance suite runs too. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot_test.h"
#include "template_cases.h"

/* Runs g on every target profile; `tol` 0 means bit-exact. A case that
 * needs 64-bit integers skips the profile without them. */
static void check_all(poot_graph *g, double tol, int64_t int_hi, bool needs_i64, const char *what) {
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 42, int_hi, 3, 1.0f, &in));
  const uint32_t sgs[] = {8, 32, 64, 0};
  for (int i = 0; i < 4; i++) {
    poot_kir_target t;
    poot_kir_target_init_interp(&t, sgs[i] ? sgs[i] : 32);
    if (!sgs[i]) {
      /* the WebGPU profile without subgroups */
      t.subgroup_ops = false;
      t.subgroup_size = 0;
      t.storage_types = POOT_KIR_SCALAR_BIT(POOT_KIR_U32) | POOT_KIR_SCALAR_BIT(POOT_KIR_I32) |
                        POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
      t.arith_types = t.storage_types | POOT_KIR_SCALAR_BIT(POOT_KIR_BOOL);
      t.max_workgroup_size = 256;
    }
    if (needs_i64 && !(t.arith_types & POOT_KIR_SCALAR_BIT(POOT_KIR_I64))) continue;
    pt_result r;
    poot_status st = pt_check(g, &t, &in, sgs[i] ? sgs[i] : 32, tol == 0, tol, &r);
    if (st) fail_msg("%s sg=%u: %s", what, sgs[i], poot_status_message(st));
    if (!r.ok) fail_msg("%s sg=%u: %s", what, sgs[i], r.what);
  }
  pt_inputs_free(&in);
}

/* Every case of the catalogue's `group` the interpreter runs. */
static void run_group(const char *group) {
  size_t n = 0;
  for (size_t i = 0; i < tc_case_count; i++) {
    const tc_case *c = &tc_cases[i];
    if (strcmp(c->group, group) != 0 || c->interp_tol == TC_DEVICE_ONLY) continue;
    poot_graph *g = NULL;
    POOT_ASSERT_OK(tc_case_build(c, &g));
    check_all(g, c->interp_tol, c->int_hi, c->needs_i64, c->name);
    poot_graph_destroy(g);
    n++;
  }
  assert_true(n > 0);
}

static void test_elementwise_float(void **state) {
  (void)state;
  run_group("elementwise_float");
}
static void test_elementwise_int(void **state) {
  (void)state;
  run_group("elementwise_int");
}
static void test_movement(void **state) {
  (void)state;
  run_group("movement");
}
static void test_reduce(void **state) {
  (void)state;
  run_group("reduce");
}
static void test_gemv_gemm(void **state) {
  (void)state;
  run_group("gemv_gemm");
}
/* The dequantized weights themselves, bit for bit. */
static void test_dequantize(void **state) {
  (void)state;
  run_group("dequantize");
}
static void test_gather_dus_slice(void **state) {
  (void)state;
  run_group("gather_dus_slice");
}
static void test_topk_cumsum_scatter(void **state) {
  (void)state;
  run_group("topk_cumsum_scatter");
}
/* Philox: bits and uniform floats (f32, f16, bf16), bit for bit. */
static void test_rng(void **state) {
  (void)state;
  run_group("rng");
}
/* Composites: rms_norm, rope (both modes), softmax, attention, swiglu. */
static void test_composites(void **state) {
  (void)state;
  run_group("composites");
}
/* The remaining ops: exp2/log2/rem/bitcast/compares, conversions and int
 * pow, i64, activations and layer_norm, narrow movement, more indexing,
 * state updates. */
static void test_ops(void **state) {
  (void)state;
  run_group("ops");
}
/* Template modes: integer and 16-bit reductions, 3-D and long reductions,
 * batched dots, fused FFN epilogues with the local prologue, attention
 * decode, split + combine, over a KV state, and its decomposition. */
static void test_modes(void **state) {
  (void)state;
  run_group("modes");
}

/* Prefill attention: the tiled form (T >= 16 under a causal mask) and a
 * full mask's per-row form. */
static void test_attention_tile(void **state) {
  (void)state;
  run_group("attention_tile");
}

/* The plans choose the tiled form for the causal cases (the interpreter,
 * sm_90, Vulkan GPUs) and keep the per-row form for the full mask and on
 * lavapipe (a SIMD CPU, as the GEMM does). */
static void test_attention_tile_chosen(void **state) {
  (void)state;
  static const char *const targets[] = {"interp", "sm_90", "vulkan", "lavapipe"};
  for (size_t i = 0; i < tc_case_count; i++) {
    const tc_case *c = &tc_cases[i];
    if (strcmp(c->group, "attention_tile") != 0) continue;
    poot_graph *g = NULL;
    POOT_ASSERT_OK(tc_case_build(c, &g));
    for (int ti = 0; ti < 4; ti++) {
      poot_kir_target t;
      if (ti == 0)
        poot_kir_target_init_interp(&t, 32);
      else
        POOT_ASSERT_OK(poot_device_target_by_name(targets[ti], &t));
      bool want = c->kind == 0 && ti != 3;
      if (pt_uses_template(g, &t, "attention") != true || pt_uses_template(g, &t, "tiled") != want)
        fail_msg("%s on %s: the tiled form %s", c->name, targets[ti],
                 want ? "not chosen" : "chosen");
    }
    poot_graph_destroy(g);
  }
}

/* Every case has a unique name (the device skip list names them). */
static void test_catalogue_names(void **state) {
  (void)state;
  for (size_t i = 0; i < tc_case_count; i++) {
    assert_ptr_equal(tc_case_find(tc_cases[i].name), &tc_cases[i]);
    assert_true(tc_cases[i].device_tol >= 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention_tile),
      cmocka_unit_test(test_attention_tile_chosen),
      cmocka_unit_test(test_elementwise_float),
      cmocka_unit_test(test_elementwise_int),
      cmocka_unit_test(test_movement),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_gemv_gemm),
      cmocka_unit_test(test_dequantize),
      cmocka_unit_test(test_gather_dus_slice),
      cmocka_unit_test(test_topk_cumsum_scatter),
      cmocka_unit_test(test_composites),
      cmocka_unit_test(test_rng),
      cmocka_unit_test(test_ops),
      cmocka_unit_test(test_modes),
      cmocka_unit_test(test_catalogue_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
