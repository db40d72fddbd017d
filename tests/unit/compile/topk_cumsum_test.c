/* topk_cumsum_test.c — cumsum over long rows (templates/scan.c: one
 * workgroup a row, chunk sums, a shared-memory scan, a second walk), next
 * to top_k's pipeline in docs/topk.md. Against poot_eval on the KIR
 * interpreter (three target profiles: 1,024, 64 and 256 threads) and on a
 * Vulkan device when one opens:
 *  - i32 and u32 sums (wrapping, inputs over the whole range): bit for bit;
 *  - f32 sums (f32 and f16 inputs, along the last axis and along axis 0):
 *    every output within (2c + log2 wg + 2) · 2^-24 · Σ_{j≤i} |x_j| of the
 *    exact sum (the oracle's serial sum within (i + 2) · 2^-24 · Σ|x_j|), c = ⌈n / wg⌉ the chunk a
 * thread sums (tier 2: the depth of the reassociated sum), and finite. Rows of 64 or fewer keep the
 * serial template: bit-exact there. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot/exec.h"
#include "poot_test.h"

typedef struct cs_case {
  int64_t d0, d1; /* x [d0, d1] */
  int64_t axis;
  poot_dtype xd, acc;
} cs_case;

static uint64_t rng(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static poot_graph *build(const cs_case *c) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type xt = poot_type_make(c->xd, 2, (int64_t[]){c->d0, c->d1});
  poot_value x = POOT_VALUE_NONE, y = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_param(g, "x", &xt, &x));
  POOT_ASSERT_OK(poot_graph_cumsum(g, x, c->axis, c->acc, &y));
  POOT_ASSERT_OK(poot_graph_set_output(g, y));
  POOT_ASSERT_OK(poot_graph_verify(g));
  return g;
}

/* Floats in [-1, 1) (a few large ones), integers over the whole range. */
static void fill(poot_tensor *t, const cs_case *c) {
  uint64_t s = (uint64_t)(c->d0 * 1000 + c->d1 + c->axis);
  for (int64_t i = 0; i < c->d0 * c->d1; i++) {
    uint64_t r = rng(&s);
    float f = (float)((double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
    if (r % 97 == 0) f *= 1000.0f;
    if (c->xd == POOT_DTYPE_F32) {
      memcpy((uint8_t *)t->data + 4 * i, &f, 4);
    } else if (c->xd == POOT_DTYPE_F16) {
      uint16_t h = poot_f32_to_f16(f);
      memcpy((uint8_t *)t->data + 2 * i, &h, 2);
    } else {
      uint32_t v = (uint32_t)(r >> 7);
      memcpy((uint8_t *)t->data + 4 * i, &v, 4);
    }
  }
}

static double x_at(const poot_tensor *t, poot_dtype dt, int64_t i) {
  if (dt == POOT_DTYPE_F16) {
    uint16_t h;
    memcpy(&h, (const uint8_t *)t->data + 2 * i, 2);
    return poot_f16_to_f32(h);
  }
  float f;
  memcpy(&f, (const uint8_t *)t->data + 4 * i, 4);
  return f;
}

/* The scan's workgroup size on target t (the template's rule). */
static uint32_t scan_wg(const poot_kir_target *t, int64_t n) {
  uint32_t cap = t->max_workgroup_size < 1024 ? t->max_workgroup_size : 1024;
  if (t->simd_cpu && cap > 256) cap = 256;
  uint32_t wg = 32;
  while (wg < cap && wg < n) wg *= 2;
  return wg > cap ? cap : wg;
}

/* dev against the oracle: bit for bit for integers and short rows, else
 * the tier-2 bound of the file comment. */
static void compare(const cs_case *c, const poot_kir_target *t, const poot_tensor *x,
                    const void *dev, const poot_tensor *ref, const char *where) {
  int64_t n = c->axis ? c->d1 : c->d0;
  bool exact = c->acc != POOT_DTYPE_F32 || n <= 64;
  if (exact) {
    if (memcmp(dev, ref->data, ref->size) != 0)
      fail_msg("cumsum %lldx%lld axis %lld on %s: not bit-exact", (long long)c->d0,
               (long long)c->d1, (long long)c->axis, where);
    return;
  }
  uint32_t wg = scan_wg(t, n), lw = 0;
  while ((1u << lw) < wg) lw++;
  double gamma = (2.0 * (double)((n + wg - 1) / wg) + lw + 2) * 0x1p-24;
  int64_t rows = c->axis ? c->d0 : c->d1;
  for (int64_t r = 0; r < rows; r++) {
    double mag = 0, sum = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t e = c->axis ? r * c->d1 + i : i * c->d1 + r;
      double xe = x_at(x, c->xd, e);
      mag += fabs(xe);
      sum += xe; /* the exact prefix, within 1e-16 of it relative to mag */
      float a, b;
      memcpy(&a, (const uint8_t *)dev + 4 * e, 4);
      memcpy(&b, (const uint8_t *)ref->data + 4 * e, 4);
      /* the oracle's serial sum has depth i + 1 */
      if (fabs((double)b - sum) > (double)(i + 2) * 0x1p-24 * mag)
        fail_msg("cumsum oracle [%lld]: %.9g, exact %.9g", (long long)e, (double)b, sum);
      if (!isfinite(a) || fabs((double)a - sum) > gamma * mag)
        fail_msg(
            "cumsum %lldx%lld axis %lld on %s [%lld]: %.9g, exact %.9g (oracle %.9g), "
            "bound %.3g",
            (long long)c->d0, (long long)c->d1, (long long)c->axis, where, (long long)e, (double)a,
            sum, (double)b, gamma * mag);
    }
  }
}

/* The plan of g on target t uses the scan exactly when the row is long. */
static void check_mode(const poot_graph *g, const poot_kir_target *t, int64_t n) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  bool scan = false;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (strstr(plan->dispatches[i].what, "cumsum") && strstr(plan->dispatches[i].what, "scan"))
      scan = true;
  assert_int_equal(scan, n > 64);
  poot_plan_destroy(plan);
}

static void run_interp(const cs_case *c, poot_kir_target *t, const char *where) {
  poot_graph *g = build(c);
  check_mode(g, t, c->axis ? c->d1 : c->d0);
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  fill(&in.tensors[0], c);
  poot_eval_input ei = {"x", &in.tensors[0]};
  poot_eval_inputs eis = {.count = 1, .items = &ei};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  poot_plan_run *run = NULL;
  POOT_ASSERT_OK(poot_plan_run_create(plan, &run));
  poot_plan_input pi = {"x", &in.tensors[0]};
  POOT_ASSERT_OK(poot_plan_run_bind(run, 1, &pi));
  poot_plan_run_options ro = {32, false};
  POOT_ASSERT_OK(poot_plan_run_step(run, &ro));
  poot_tensor out;
  POOT_ASSERT_OK(poot_plan_run_output(run, &out));
  compare(c, t, &in.tensors[0], out.data, &ev->output, where);
  poot_plan_run_destroy(run);
  poot_plan_destroy(plan);
  poot_evaluation_destroy(ev);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

#define F32 POOT_DTYPE_F32
#define F16 POOT_DTYPE_F16
#define I32 POOT_DTYPE_I32
#define U32 POOT_DTYPE_U32

static const cs_case cases[] = {
    {3, 64, 1, F32, F32},     {3, 65, 1, F32, F32},    {2, 100, 1, F16, F32},
    {3, 1000, 1, F32, F32},   {1, 1024, 1, F32, F32},  {3, 1025, 1, I32, I32},
    {2, 4097, 1, U32, U32},   {1, 32000, 1, F32, F32}, {1, 128256, 1, F32, F32},
    {1, 128256, 1, I32, I32}, {1000, 3, 0, F32, F32},  {300, 2, 0, I32, I32},
};

static void test_interp(void **state) {
  (void)state;
  for (int p = 0; p < 3; p++) {
    poot_kir_target t;
    poot_kir_target_init_interp(&t, 32);
    if (p == 1) t.max_workgroup_size = t.max_workgroup_dims[0] = 64;
    if (p == 2) {
      t.max_workgroup_size = 256;
      t.subgroup_ops = false;
      t.subgroup_size = 0;
      t.shared_memory_bytes = 16 * 1024;
    }
    const char *names[] = {"interp", "interp-wg64", "interp-webgpu"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      if (p && cases[i].d1 > 40000) continue; /* the long rows once */
      run_interp(&cases[i], &t, names[p]);
    }
  }
}

static void run_device(poot_device *d, const cs_case *c) {
  poot_graph *g = build(c);
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  fill(&in.tensors[0], c);
  poot_eval_input ei = {"x", &in.tensors[0]};
  poot_eval_inputs eis = {.count = 1, .items = &ei};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lld a%lld %s", (long long)c->d0, (long long)c->d1,
           (long long)c->axis, poot_dtype_name(c->acc));
  poot_exec_entry_key key = {"cumsum", shape, "", ""};
  uint32_t entry = 0;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  poot_exec_slot_value sv;
  POOT_ASSERT_OK(poot_exec_entry_slot(ex, entry, "x", &sv.slot));
  sv.tensor = &in.tensors[0];
  void *out = malloc(ev->output.size);
  assert_non_null(out);
  poot_exec_step_io io = {
      .input_count = 1, .inputs = &sv, .output = out, .output_size = ev->output.size};
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  compare(c, &d->caps.target, &in.tensors[0], out, &ev->output, d->caps.backend);
  free(out);
  poot_executor_destroy(ex);
  poot_evaluation_destroy(ev);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_vulkan(void **state) {
  (void)state;
  poot_device_open_options o = {.validation = true};
  poot_device *d = NULL;
  poot_status st = poot_device_open("vulkan", &o, &d);
  if (st) {
    printf("SKIP: no Vulkan device: %s\n", poot_status_message(st));
    poot_status_free(st);
    skip();
    return;
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_device(d, &cases[i]);
#ifdef POOT_HAVE_VULKAN
  if (strcmp(d->caps.backend, "vulkan") == 0 && poot_vulkan_validation_enabled(d))
    assert_int_equal(poot_vulkan_validation_messages(d), 0);
#endif
  poot_device_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_interp),
      cmocka_unit_test(test_vulkan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
