/* batch_plans_test.c — the batched runner's decode entries plan for every
 * GPU target at the batch sizes a server runs (docs/batching.md "GPU batch
 * sizes"): a Llama-3.2-1B-shaped paged decode step (hidden 2048, 32 heads
 * of 64 over 8 KV heads, FFN 8192, the real 128,256-id vocabulary with the
 * classifier tied to the f16 embedding; one layer, so it plans in
 * seconds) with the greedy suffix, as poot_batch builds it, planned with
 * the runner's setting (no_local_reductions) for sm_80, sm_90, desktop
 * Vulkan, WebGPU and gfx942 at B = 8, 16, 32 and 64: the plan is made (the
 * KIR verifier passes every kernel) and every kernel renders. On the PTX
 * targets the projections' form is asserted: the GEMV at B = 8, the GEMM
 * split over K from 16 (the classifier's 2,004 tiles unsplit).
 *
 * With arguments "print [TARGET [CAP]]" (sm_90 and 64 by default), prints
 * the plans of two layers at B = 1, 4, 8, 16, 32, 64 instead (form, grid,
 * bytes: the figures of docs/batching.md; CAP the positions of a row, in
 * blocks of 16), and with POOT_BATCH_PLANS_EMIT=DIR writes every kernel's
 * source into DIR (for ptxas -v). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "poot/compile.h"
#include "poot/devices.h"
#include "poot/llm/model.h"
#include "plan_util.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_internal.h"

static bool g_print = false;
static const char *g_print_target = "sm_90";
static int64_t g_cap = 64;

static poot_status wtype(void *ctx, const poot_weight_ref *ref, const poot_type *expected,
                         poot_type *out) {
  (void)ctx;
  (void)ref;
  *out = *expected;
  if (expected->shape.rank == 2 && expected->shape.dims[1] % 64 == 0) out->dtype = POOT_DTYPE_F16;
  return NULL;
}

static void config_1b(poot_model_config *c, int64_t layers) {
  poot_model_config_init(c, POOT_MODEL_FAMILY_LLAMA);
  c->vocab_size = 128256;
  c->hidden_size = 2048;
  c->intermediate_size = 8192;
  c->n_layers = layers;
  c->n_heads = 32;
  c->n_kv_heads = 8;
  c->head_dim = 64;
  c->norm_eps = 1e-5;
  c->rope_dims = 64;
  c->rope_theta = 500000;
  c->rope_mode = POOT_ROPE_NEOX;
  c->tied_output = true;
}

/* The runner's decode entry of B rows (poot bench -p 32 -n 16: cap 64,
 * blocks of 16, 5 blocks a row plus the scratch block; g_cap / 16 + 1 blocks
 * a row for another cap). */
static poot_graph *trace_decode(int64_t B, int64_t layers) {
  poot_model_config c;
  config_1b(&c, layers);
  poot_model_step s = {.batch = B,
                       .tokens = 1,
                       .cap = g_cap,
                       .paged = true,
                       .block_size = 16,
                       .num_blocks = (int32_t)(B * (g_cap / 16 + 1) + 1)};
  poot_model_trace_options o = {.weight_type = wtype, .kv_dtype = POOT_DTYPE_F16};
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(&c, &s, &o, &g));
  POOT_ASSERT_OK(poot__driver_append_greedy(g));
  return g;
}

static void print_plan(const poot_plan *p, const char *target, int64_t B) {
  printf("== %s B=%lld: %u dispatches, %u kernels\n", target, (long long)B, p->dispatch_count,
         p->kernel_count);
  for (uint32_t i = 0; i < p->dispatch_count; i++) {
    const poot_plan_dispatch *d = &p->dispatches[i];
    printf("  %3u grid %6u x %u x %u  %10llu B (w %10llu)  %8.1f us  %s\n", i, d->grid[0],
           d->grid[1], d->grid[2], (unsigned long long)d->bytes,
           (unsigned long long)d->weight_bytes, d->weight_us, d->what ? d->what : "");
  }
}

/* Dispatches whose description contains `what`. */
static uint32_t count_what(const poot_plan *p, const char *what) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->dispatch_count; i++)
    n += p->dispatches[i].what && strstr(p->dispatches[i].what, what) != NULL;
  return n;
}

static void plan_target(const char *target, int64_t B, poot_graph *g) {
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name(target, &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  o.no_local_reductions = true; /* poot_exec_target.batch_invariant, as the runner */
  poot_plan *p = NULL;
  poot_status st = poot_plan_create(g, &o, &p);
  if (st && getenv("DUMP")) {
    printf("%s B=%lld failed\n", target, (long long)B);
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_graph_print(g, &sb));
    FILE *f = fopen(getenv("DUMP"), "w");
    fwrite(sb.data, 1, sb.len, f);
    fclose(f);
  }
  if (st) fail_msg("%s B=%lld: %s", target, (long long)B, poot_status_message(st));
  if (g_print) {
    print_plan(p, target, B);
    const char *dir = getenv("POOT_BATCH_PLANS_EMIT"); /* each kernel's source there */
    for (uint32_t i = 0; dir && i < p->kernel_count; i++) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_plan_render_kernel(p, i, &t, &sb));
      char path[512];
      snprintf(path, sizeof path, "%s/%s-B%lld-k%02u_%s.%s", dir, target, (long long)B, i,
               p->kernels[i]->name, poot_kir_renderer_for(t.lang)->file_extension);
      FILE *f = fopen(path, "wb");
      assert_non_null(f);
      assert_int_equal(fwrite(sb.data, 1, sb.len, f), sb.len);
      fclose(f);
      poot_strbuf_deinit(&sb);
    }
  } else {
    if (t.lang == POOT_KIR_LANG_PTX) {
      /* one layer: Q, K, V, O, gate + up, down and the classifier (Q, K and
       * V share a split dispatch: a batched kernel's groups reuse each
       * other's shared arrays) */
      uint32_t gemv = count_what(p, " gemv"), split = count_what(p, "gemm_mma split");
      if (B <= 8 && (gemv != 7 || count_what(p, "gemm") != 0))
        fail_msg("%s B=%lld: %u GEMV dispatches of 7", target, (long long)B, gemv);
      if (B > 8 && (gemv != 0 || split != 4 || count_what(p, "gemm_combine") == 0))
        fail_msg("%s B=%lld: %u split GEMM dispatches of 4", target, (long long)B, split);
    }
    for (uint32_t i = 0; i < p->kernel_count; i++) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_plan_render_kernel(p, i, &t, &sb));
      assert_true(sb.len > 0);
      poot_strbuf_deinit(&sb);
    }
  }
  poot_plan_destroy(p);
}

static const int64_t k_batches[] = {8, 16, 32, 64};
static const char *const k_targets[] = {"sm_80", "sm_90", "vulkan", "webgpu", "gfx942"};

static const int64_t k_print_batches[] = {1, 4, 8, 16, 32, 64};

static void test_plans(void **state) {
  (void)state;
  const int64_t *bs = g_print ? k_print_batches : k_batches;
  size_t nb = g_print ? 6 : sizeof k_batches / sizeof k_batches[0];
  for (size_t bi = 0; bi < nb; bi++) {
    poot_graph *g = trace_decode(bs[bi], g_print ? 2 : 1);
    for (size_t ti = 0; ti < sizeof k_targets / sizeof k_targets[0]; ti++)
      if (!g_print || !strcmp(k_targets[ti], g_print_target)) plan_target(k_targets[ti], bs[bi], g);
    poot_graph_destroy(g);
  }
}

/* A wide concat (more than PC_CONCAT_PART = 8 stored operands) is stored
 * in parts, each part a kernel reading at most 8 operands, disjoint parts in
 * one dispatch: 20 operands of [r, 3] (r = 1 + j % 3) computed as x_j + j,
 * concatenated on axis 0, read by a pointwise and a contraction (a sum per
 * row), on the interpreter against poot_eval bit for bit; and 12 operands
 * on axis 1. The dispatches are parts of the concat, at most 8 operands
 * each. */
static void wide_concat(uint32_t nops, uint32_t axis) {
  poot_graph *g;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_value parts[20];
  for (uint32_t j = 0; j < nops; j++) {
    char name[16];
    snprintf(name, sizeof name, "x%u", j);
    int64_t r = 1 + j % 3;
    poot_value x = axis == 0 ? pt_param(g, name, POOT_DTYPE_F32, r, 3)
                             : pt_param(g, name, POOT_DTYPE_F32, 3, r),
               c, cb;
    POOT_ASSERT_OK(poot_graph_const_f32(g, POOT_DTYPE_F32, (double)j, &c));
    POOT_ASSERT_OK(poot_graph_broadcast(g, c, &poot_graph_value_type(g, x)->shape, NULL, &cb));
    POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, x, cb, &parts[j]));
  }
  poot_value cat, sq, sum;
  int64_t ax = 1 - (int64_t)axis;
  POOT_ASSERT_OK(poot_graph_concat(g, nops, parts, axis, &cat));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_MUL, cat, cat, &sq));
  POOT_ASSERT_OK(poot_graph_reduce(g, sq, POOT_REDUCE_SUM, 1, &ax, POOT_DTYPE_F32, &sum));
  POOT_ASSERT_OK(poot_graph_set_output(g, sum));
  POOT_ASSERT_OK(poot_graph_verify(g));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 3, 10, 0, 1.0f, &in));
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("interp", &t));
  pt_result res;
  POOT_ASSERT_OK(pt_check(g, &t, &in, 32, true, 0, &res));
  if (!res.ok) fail_msg("wide concat of %u on axis %u: %s", nops, axis, res.what);
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  poot_plan *p = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &p));
  uint32_t nparts = 0;
  for (uint32_t i = 0; i < p->dispatch_count; i++)
    for (const char *w = strstr(p->dispatches[i].what, " part"); w; w = strstr(w + 1, " part"))
      nparts++;
  assert_int_equal(nparts, (nops + 7) / 8);
  poot_plan_destroy(p);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_wide_concat(void **state) {
  (void)state;
  wide_concat(20, 0);
  wide_concat(12, 1);
}

int main(int argc, char **argv) {
  g_print = argc > 1 && !strcmp(argv[1], "print");
  if (g_print && argc > 2) g_print_target = argv[2];
  if (g_print && argc > 3) g_cap = atoll(argv[3]);
  if (g_cap < 16 || g_cap % 16) {
    fprintf(stderr, "CAP must be a positive multiple of 16\n");
    return 2;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_wide_concat),
                                     cmocka_unit_test(test_plans)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
