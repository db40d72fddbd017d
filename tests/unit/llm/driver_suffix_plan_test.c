/* driver_suffix_plan_test.c — the sampling suffix's plan at the
 * Llama-3.2-1B vocabulary (128,256) for sm_90, behind a head GEMV as in a
 * decode step: how many dispatches each entry of the driver runs after the
 * head (a replayed step pays each in sequence; docs/driver.md "What a
 * sampled step costs over greedy"), and that the penalty counts, the Philox
 * counter and the grammar's kept logits are written into their states in
 * place (no temporary of their size, no copy back). Planning only: no
 * device, a few milliseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "poot/compile.h"
#include "poot/compile_passes.h"
#include "poot/devices.h"
#include "poot/llm/sampling.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_impl.h"
#include "../../../src/llm/driver/driver_internal.h"

#define V 128256
#define H 2048

/* token and pos slots, h f32[1, H], logits = h · head^T (head f16[V, H]). */
static poot_graph *head_graph(void) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type tt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){1, 1});
  poot_type pt = poot_type_make(POOT_DTYPE_I32, 1, (int64_t[]){1});
  poot_type ht = poot_type_make(POOT_DTYPE_F32, 2, (int64_t[]){1, H});
  poot_type wt = poot_type_make(POOT_DTYPE_F16, 2, (int64_t[]){V, H});
  poot_value tok, pos, h, w, wf, x;
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_TOKEN, NULL, &tt, &tok));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &pt, &pos));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "h", &ht, &h));
  POOT_ASSERT_OK(poot_graph_add_param(g, "head", &wt, &w));
  POOT_ASSERT_OK(poot_graph_convert(g, w, POOT_DTYPE_F32, &wf));
  poot_dot_dims dd = {.num_contract = 1, .lhs_contract = {1}, .rhs_contract = {1}};
  POOT_ASSERT_OK(poot_graph_dot_general(g, h, wf, &dd, POOT_DTYPE_F32, &x));
  POOT_ASSERT_OK(poot_graph_set_output(g, x));
  return g;
}

/* The sm_90 plan of g after the default passes (g is destroyed). */
static poot_plan *plan_of(poot_graph *g) {
  poot_graph *og = NULL;
  POOT_ASSERT_OK(poot_pass_run_default(g, NULL, &og, NULL));
  poot_graph_destroy(g);
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_SM90, 0, &t);
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(og, &o, &plan));
  poot_graph_destroy(og);
  return plan;
}

static poot_plan *suffix_plan(uint32_t kind, driver_role role, int64_t sort_k) {
  poot_graph *g = NULL;
  if (role == DRIVER_ROLE_PICK) {
    POOT_ASSERT_OK(poot__driver_pick_graph(V, &g));
  } else {
    g = head_graph();
  }
  if (role == DRIVER_ROLE_GREEDY) {
    POOT_ASSERT_OK(poot__driver_append_greedy(g));
  } else {
    driver_sample_shape sh = {.tokens = role == DRIVER_ROLE_PICK ? 0 : 1,
                              .cap = 64,
                              .kind = kind,
                              .role = role,
                              .sort_k = sort_k};
    POOT_ASSERT_OK(poot__driver_append_sampler(g, &sh));
  }
  return plan_of(g);
}

/* No temporary as large as a [V] state: the states are updated in place. */
static void assert_no_state_copy(const poot_plan *plan) {
  for (uint32_t i = 0; i < plan->temp_count; i++)
    if (plan->temps[i].size >= (uint64_t)V * 4 && plan->temps[i].type.shape.rank == 1)
      fail_msg("a temporary of %llu bytes (a state's copy?)",
               (unsigned long long)plan->temps[i].size);
}

static void test_dispatch_counts(void **state) {
  (void)state;
  /* llama.cpp's chain plus penalties and a bias list (poot bench --sample) */
  const uint32_t kind = POOT_SAMPLER_LOGIT_BIAS | POOT_SAMPLER_PENALTIES | POOT_SAMPLER_TOP_K |
                        POOT_SAMPLER_TOP_P | POOT_SAMPLER_MIN_P | POOT_SAMPLER_DRAW;
  const int64_t K = poot__driver_sort_width(kind, 40, V);
  assert_int_equal(K, 64);
  assert_int_equal(poot__driver_sort_width(kind, 65, V), 128);
  assert_int_equal(poot__driver_sort_width(kind, 1000, V), 0); /* the 1,024 of old */
  assert_int_equal(poot__driver_sort_width(kind & ~POOT_SAMPLER_TOP_K, 40, V), 0);
  assert_int_equal(poot__driver_sort_width(kind, 40, 50), 0); /* a vocabulary under 64 */
  poot_plan *p = suffix_plan(0, DRIVER_ROLE_GREEDY, 0);
  const uint32_t greedy = p->dispatch_count;
  printf("greedy: %u dispatches with the head\n", greedy);
  assert_int_equal(greedy, 4);
  poot_plan_destroy(p);
  /* sampled: the counts and history, top_k tiles and merge, the id-order
   * sort with a scan, a scan, the output (the counter beside the head) */
  p = suffix_plan(kind, DRIVER_ROLE_SAMPLE, K);
  printf("sampled at k 40: %u dispatches with the head\n", p->dispatch_count);
  assert_int_equal(p->dispatch_count, 7);
  assert_no_state_copy(p);
  poot_plan_destroy(p);
  p = suffix_plan(kind, DRIVER_ROLE_SAMPLE, 0);
  printf("sampled, 1,024 wide: %u dispatches with the head\n", p->dispatch_count);
  assert_true(p->dispatch_count > 7);
  poot_plan_destroy(p);
  /* the grammar's pair: FORWARD adds one dispatch to the model, PICK is
   * the suffix with y (the mask) computed once */
  p = suffix_plan(kind | POOT_SAMPLER_MASK, DRIVER_ROLE_FORWARD, K);
  printf("grammar FORWARD: %u dispatches with the head\n", p->dispatch_count);
  assert_int_equal(p->dispatch_count, 2);
  assert_no_state_copy(p);
  poot_plan_destroy(p);
  p = suffix_plan(kind | POOT_SAMPLER_MASK, DRIVER_ROLE_PICK, K);
  printf("grammar PICK: %u dispatches\n", p->dispatch_count);
  assert_int_equal(p->dispatch_count, 6);
  poot_plan_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatch_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
