/* topk_test.c — top_k over long rows: the sorting pipeline of
 * src/compile/templates/select.c (tiles, merge rounds) and the rank
 * template of short rows. Each case (rows of 1 to 128,256 elements, k from
 * 1 to 1,024, f32 and f16 (and bf16 and i32), one row or three, with many
 * ties, ±0, ±inf and NaNs of both signs, or the ends of the i32 range) is checked three ways, all
 * bit for bit:
 *  - poot_eval against a reference computed here (a stable sort by the
 *    op's order: larger first, NaN the largest, ties by the lower index);
 *  - the plan on the KIR interpreter against poot_eval, on four target
 *    profiles (the interpreter's 1 MiB of shared memory; 48 KiB with 64
 *    threads a workgroup; the WebGPU profile's 16 KiB, 32-bit storage and
 *    no subgroups; 8 KiB, where k = 1,024 does not fit and takes the rank
 *    template);
 *  - the plan on a Vulkan device (lavapipe) when one opens.
 * The dispatch counts of docs/topk.md for the H200's target (sm_90) are
 * asserted, and the interpreter's race detector checks every barrier. */
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

typedef enum { PAT_TIES = 0, PAT_SPECIAL, PAT_RANDOM } pattern;

typedef struct tk_case {
  int64_t rows; /* 0: a rank-1 input */
  int64_t n, k;
  poot_dtype dt;
  pattern pat;
  bool big; /* interpreter: the two main profiles only */
} tk_case;

static uint64_t rng(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Element i of a row: ties (17 levels, ±0), specials (NaN of both signs,
 * ±inf, ±0 among random values) or random values. */
static float value_at(uint64_t *s, pattern p) {
  uint64_t r = rng(s);
  float f = (float)((double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
  if (p == PAT_TIES) {
    int lv = (int)(r % 17) - 8;
    return lv == 0 && (r & 0x100) ? -0.0f : (float)lv / 4.0f;
  }
  if (p == PAT_SPECIAL) {
    switch (r % 61) {
      case 0:
        return NAN;
      case 1:
        return -NAN;
      case 2:
        return INFINITY;
      case 3:
        return -INFINITY;
      case 4:
        return 0.0f;
      case 5:
        return -0.0f;
      default:
        break;
    }
  }
  return f;
}

/* i32 rows: few levels (ties) or the whole range with its two ends. */
static int32_t int_at(uint64_t *s, pattern p) {
  uint64_t r = rng(s);
  if (p == PAT_TIES) return (int32_t)(r % 9) - 4;
  if (p == PAT_SPECIAL && r % 53 == 0) return r & 64 ? INT32_MAX : INT32_MIN;
  return (int32_t)(uint32_t)(r >> 17);
}

static void fill_x(poot_tensor *t, const tk_case *c, uint64_t seed) {
  int64_t total = (c->rows ? c->rows : 1) * c->n;
  for (int64_t i = 0; i < total; i++) {
    if (c->dt == POOT_DTYPE_I32) {
      int32_t v = int_at(&seed, c->pat);
      memcpy((uint8_t *)t->data + 4 * i, &v, 4);
      continue;
    }
    float f = value_at(&seed, c->pat);
    if (c->dt == POOT_DTYPE_F32) {
      memcpy((uint8_t *)t->data + 4 * i, &f, 4);
    } else {
      uint16_t h;
      if (c->dt == POOT_DTYPE_F16) {
        h = poot_f32_to_f16(f);
        if (isnan(f)) h = signbit(f) ? 0xfe00 : 0x7e00;
      } else {
        uint32_t b;
        memcpy(&b, &f, 4);
        h = (uint16_t)(b >> 16); /* truncation: ±inf, ±0 and NaNs stay */
        if (isnan(f)) h = signbit(f) ? 0xffc1 : 0x7fc1;
      }
      memcpy((uint8_t *)t->data + 2 * i, &h, 2);
    }
  }
}

/* Element i of a row as a double (exact for every dtype here). */
static double elem_at(const poot_tensor *t, poot_dtype dt, int64_t i) {
  const uint8_t *p = (const uint8_t *)t->data;
  if (dt == POOT_DTYPE_F32) {
    float f;
    memcpy(&f, p + 4 * i, 4);
    return f;
  }
  if (dt == POOT_DTYPE_I32) {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  uint16_t h;
  memcpy(&h, p + 2 * i, 2);
  return dt == POOT_DTYPE_F16 ? poot_f16_to_f32(h) : poot_bf16_to_f32(h);
}

/* top_k(x) with values as the output and indices as "idx"; the device form
 * has one i32 output: the values' bits, then the indices, along the row. */
static poot_graph *build(const tk_case *c, bool device_form) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type xt = c->rows ? poot_type_make(c->dt, 2, (int64_t[]){c->rows, c->n})
                         : poot_type_make(c->dt, 1, (int64_t[]){c->n});
  poot_value x = POOT_VALUE_NONE, v = POOT_VALUE_NONE, ix = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_param(g, "x", &xt, &x));
  POOT_ASSERT_OK(poot_graph_top_k(g, x, c->k, &v, &ix));
  if (!device_form) {
    POOT_ASSERT_OK(poot_graph_set_output(g, v));
    POOT_ASSERT_OK(poot_graph_add_env(g, "idx", ix));
  } else {
    poot_value bits = POOT_VALUE_NONE, cat = POOT_VALUE_NONE;
    if (c->dt == POOT_DTYPE_I32) {
      bits = v;
    } else if (c->dt == POOT_DTYPE_F32) {
      POOT_ASSERT_OK(poot_graph_bitcast(g, v, POOT_DTYPE_I32, &bits));
    } else {
      poot_value h = POOT_VALUE_NONE;
      POOT_ASSERT_OK(poot_graph_bitcast(g, v, POOT_DTYPE_I16, &h));
      POOT_ASSERT_OK(poot_graph_convert(g, h, POOT_DTYPE_I32, &bits));
    }
    POOT_ASSERT_OK(poot_graph_concat(g, 2, (poot_value[]){bits, ix}, xt.shape.rank - 1, &cat));
    POOT_ASSERT_OK(poot_graph_set_output(g, cat));
  }
  POOT_ASSERT_OK(poot_graph_verify(g));
  return g;
}

static poot_tensor *find_input(pt_inputs *in, const char *name) {
  for (size_t i = 0; i < in->count; i++)
    if (strcmp(in->names[i], name) == 0) return &in->tensors[i];
  fail_msg("no input %s", name);
  return NULL;
}

/* ------------------------------------------------ the reference order */

/* a before b: larger first, NaN largest, equal by the lower index. */
static bool ref_before(const double *row, int64_t a, int64_t b) {
  double x = row[a], y = row[b];
  if (isnan(x) || isnan(y)) {
    if (isnan(x) && isnan(y)) return a < b;
    return isnan(x);
  }
  if (x != y) return x > y;
  return a < b;
}

static void merge_sort(const double *row, int64_t *ix, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(row, ix, tmp, h);
  merge_sort(row, ix + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = ref_before(row, ix[j], ix[i]) ? ix[j++] : ix[i++];
  while (i < h) tmp[o++] = ix[i++];
  while (j < n) tmp[o++] = ix[j++];
  memcpy(ix, tmp, (size_t)n * sizeof *ix);
}

/* poot_eval's values and indices against the reference, row by row. */
static void check_eval(const tk_case *c, const poot_tensor *x, const poot_evaluation *ev) {
  int64_t rows = c->rows ? c->rows : 1, n = c->n, k = c->k;
  size_t eb = c->dt == POOT_DTYPE_F32 || c->dt == POOT_DTYPE_I32 ? 4 : 2;
  assert_int_equal(ev->num_env, 1);
  const poot_tensor *ov = &ev->output, *oi = &ev->env[0].tensor;
  double *row = malloc((size_t)n * sizeof *row);
  int64_t *ix = malloc((size_t)n * 2 * sizeof *ix);
  assert_true(row && ix);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t i = 0; i < n; i++) {
      row[i] = elem_at(x, c->dt, r * n + i);
      ix[i] = i;
    }
    merge_sort(row, ix, ix + n, n);
    for (int64_t q = 0; q < k; q++) {
      int32_t got;
      memcpy(&got, (const uint8_t *)oi->data + 4 * (size_t)(r * k + q), 4);
      if (got != ix[q])
        fail_msg("eval n=%lld k=%lld row %lld rank %lld: index %d, reference %lld", (long long)n,
                 (long long)k, (long long)r, (long long)q, got, (long long)ix[q]);
      const uint8_t *want = (const uint8_t *)x->data + (size_t)(r * n + ix[q]) * eb;
      if (memcmp((const uint8_t *)ov->data + (size_t)(r * k + q) * eb, want, eb) != 0)
        fail_msg("eval n=%lld k=%lld row %lld rank %lld: value bits differ", (long long)n,
                 (long long)k, (long long)r, (long long)q);
    }
  }
  free(row);
  free(ix);
}

/* ------------------------------------------------------ the profiles */

typedef enum { PROF_INTERP = 0, PROF_PTX_WG64, PROF_WEBGPU, PROF_SMALL, PROF_COUNT } profile;

static void profile_target(profile p, poot_kir_target *t) {
  poot_kir_target_init_interp(t, 32);
  switch (p) {
    case PROF_INTERP:
      break;
    case PROF_PTX_WG64:
      t->shared_memory_bytes = 48 * 1024;
      t->max_workgroup_size = 64;
      t->max_workgroup_dims[0] = 64;
      break;
    case PROF_WEBGPU:
      t->subgroup_ops = false;
      t->subgroup_size = 0;
      t->storage_types = POOT_KIR_SCALAR_BIT(POOT_KIR_U32) | POOT_KIR_SCALAR_BIT(POOT_KIR_I32) |
                         POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
      t->arith_types = t->storage_types | POOT_KIR_SCALAR_BIT(POOT_KIR_BOOL);
      t->max_workgroup_size = 256;
      t->shared_memory_bytes = 16 * 1024;
      break;
    default:
      t->shared_memory_bytes = 8 * 1024;
      break;
  }
}

/* The plan's dispatches that run top_k's pipeline or rank template. */
static uint32_t topk_dispatches(const poot_graph *g, const poot_kir_target *t) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  uint32_t nd = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (strstr(plan->dispatches[i].what, "topk")) nd++;
  poot_plan_destroy(plan);
  return nd;
}

/* only >= 0: that profile alone (the vocabulary rows: CI time) */
static void run_interp(const tk_case *c, int only) {
  poot_graph *g = build(c, false);
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  fill_x(find_input(&in, "x"), c, (uint64_t)(c->n * 131 + c->k * 7 + c->pat));
  poot_eval_input ei = {"x", find_input(&in, "x")};
  poot_eval_inputs eis = {.count = 1, .items = &ei};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  check_eval(c, find_input(&in, "x"), ev);
  poot_evaluation_destroy(ev);
  for (int p = 0; p < PROF_COUNT; p++) {
    /* the rank template (8 KiB, k = 1,024) is n² work: short rows only */
    if (c->big && p != PROF_INTERP && p != PROF_WEBGPU) continue;
    if (p == PROF_SMALL && c->n > 5000) continue;
    if (only >= 0 && p != only) continue;
    poot_kir_target t;
    profile_target((profile)p, &t);
    pt_result r;
    POOT_ASSERT_OK(pt_check(g, &t, &in, 32, true, 0, &r));
    if (!r.ok)
      fail_msg("n=%lld k=%lld rows=%lld %s profile %d: %s", (long long)c->n, (long long)c->k,
               (long long)c->rows, poot_dtype_name(c->dt), p, r.what);
  }
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

#define F32 POOT_DTYPE_F32
#define F16 POOT_DTYPE_F16
#define BF16 POOT_DTYPE_BF16
#define I32 POOT_DTYPE_I32

static const tk_case cases_short[] = {
    {0, 1, 1, F32, PAT_RANDOM, false},     {3, 1, 1, F16, PAT_SPECIAL, false},
    {0, 100, 1, F32, PAT_SPECIAL, false},  {3, 100, 20, F32, PAT_TIES, false},
    {3, 100, 40, F16, PAT_SPECIAL, false}, {0, 100, 100, F32, PAT_TIES, false},
    {0, 2048, 1, F32, PAT_TIES, false},    {3, 2048, 20, F32, PAT_SPECIAL, false},
    {0, 2048, 40, F16, PAT_TIES, false},   {0, 2048, 1000, F32, PAT_SPECIAL, false},
    {3, 2048, 1024, F32, PAT_TIES, false}, {0, 2048, 2048, F16, PAT_SPECIAL, false},
};
static const tk_case cases_long[] = {
    {0, 4097, 1, F32, PAT_SPECIAL, false},    {3, 4097, 20, F16, PAT_TIES, false},
    {0, 4097, 40, F32, PAT_TIES, false},      {3, 4097, 1000, F32, PAT_SPECIAL, false},
    {0, 4097, 1024, F16, PAT_SPECIAL, false}, {3, 4097, 40, BF16, PAT_SPECIAL, false},
    {0, 4097, 1000, I32, PAT_TIES, false},    {3, 5000, 20, I32, PAT_SPECIAL, false},
    {0, 32000, 1, F16, PAT_SPECIAL, true},    {3, 32000, 40, F32, PAT_SPECIAL, true},
    {0, 32000, 1024, F32, PAT_TIES, true},
};
static const tk_case cases_vocab[] = {
    {0, 128256, 20, F32, PAT_RANDOM, true},
    {3, 128256, 40, F32, PAT_SPECIAL, true},
    {0, 128256, 1000, F16, PAT_TIES, true},
    {3, 128256, 1024, F32, PAT_SPECIAL, true},
};

/* top_k of an inline chain, -(x + x): stage 1 and the last round's value
 * reads both compute it from x (no temp between). */
static void test_fused_input(void **state) {
  (void)state;
  tk_case c = {3, 5000, 40, F32, PAT_SPECIAL, false};
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type xt = poot_type_make(F32, 2, (int64_t[]){c.rows, c.n});
  poot_value x = POOT_VALUE_NONE, s = POOT_VALUE_NONE, y = POOT_VALUE_NONE;
  poot_value v = POOT_VALUE_NONE, ix = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_param(g, "x", &xt, &x));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, x, x, &s));
  POOT_ASSERT_OK(poot_graph_unary(g, POOT_OP_NEG, s, &y));
  POOT_ASSERT_OK(poot_graph_top_k(g, y, c.k, &v, &ix));
  POOT_ASSERT_OK(poot_graph_set_output(g, v));
  POOT_ASSERT_OK(poot_graph_add_env(g, "idx", ix));
  POOT_ASSERT_OK(poot_graph_verify(g));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  fill_x(find_input(&in, "x"), &c, 99);
  for (int p = 0; p < PROF_COUNT; p++) {
    poot_kir_target t;
    profile_target((profile)p, &t);
    pt_result r;
    POOT_ASSERT_OK(pt_check(g, &t, &in, 32, true, 0, &r));
    if (!r.ok) fail_msg("fused input, profile %d: %s", p, r.what);
  }
  /* the chain is not materialized: two dispatches, both top_k's */
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("sm_90", &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  assert_int_equal(plan->dispatch_count, 2);
  assert_int_equal(topk_dispatches(g, &t), 2);
  poot_plan_destroy(plan);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* ------------------------------------------- scatter into a vector */

/* scatter_update of a target that is only the axis (the sampling suffix's
 * logit bias): one thread per index, a write skipped when a later index
 * names the same element or the index is out of range. Indices: distinct
 * ones, duplicates (the last write wins), -1 padding and past the end; on
 * the interpreter's profiles against poot_eval, bit for bit; the parallel
 * form up to 4,096 indices (one dispatch of ⌈ni / wg⌉ workgroups), the
 * serial one past it (one workgroup). */
static void scatter_case(int64_t n, int64_t ni, poot_trap trap, uint32_t want_groups) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_type tt = poot_type_make(F32, 1, &n), it = poot_type_make(I32, 1, &ni);
  poot_type ut = poot_type_make(F32, 1, &ni);
  poot_value tgt = POOT_VALUE_NONE, ids = POOT_VALUE_NONE, upd = POOT_VALUE_NONE;
  poot_value sc = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_param(g, "tgt", &tt, &tgt));
  POOT_ASSERT_OK(poot_graph_add_param(g, "ids", &it, &ids));
  POOT_ASSERT_OK(poot_graph_add_param(g, "upd", &ut, &upd));
  POOT_ASSERT_OK(poot_graph_scatter_update(g, tgt, ids, upd, 0, trap, &sc));
  POOT_ASSERT_OK(poot_graph_set_output(g, sc));
  POOT_ASSERT_OK(poot_graph_verify(g));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 3, 10, 0, 1.0f, &in));
  poot_tensor *ti = find_input(&in, "ids"), *tu = find_input(&in, "upd");
  int32_t *id = ti->data;
  float *u = tu->data;
  uint64_t seed = (uint64_t)(n * 7 + ni);
  for (int64_t i = 0; i < ni; i++) {
    uint64_t r = rng(&seed);
    u[i] = (float)(int64_t)(r % 2001) / 8.0f - 125.0f;
    if (i % 5 == 4 && i > 0)
      id[i] = id[r % (uint64_t)i]; /* a duplicate of an earlier index */
    else if (trap == POOT_TRAP_NONE && i % 7 == 3)
      id[i] = i % 2 ? -1 : (int32_t)(n + (int64_t)(r % 3)); /* padding, past the end */
    else
      id[i] = (int32_t)((i * 7919 + (int64_t)(r % 13)) % n);
  }
  poot_eval_input ei[3] = {{"tgt", find_input(&in, "tgt")}, {"ids", ti}, {"upd", tu}};
  poot_eval_inputs eis = {.count = 3, .items = ei};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  /* the oracle: the serial order, by hand */
  const float *t0 = find_input(&in, "tgt")->data, *out = ev->output.data;
  float *want = malloc((size_t)n * sizeof *want);
  assert_non_null(want);
  memcpy(want, t0, (size_t)n * sizeof *want);
  for (int64_t i = 0; i < ni; i++)
    if (id[i] >= 0 && id[i] < n) want[id[i]] = u[i];
  assert_memory_equal(out, want, (size_t)n * sizeof *want);
  free(want);
  poot_evaluation_destroy(ev);
  for (int p = 0; p < PROF_COUNT; p++) {
    poot_kir_target t;
    profile_target((profile)p, &t);
    pt_result r;
    POOT_ASSERT_OK(pt_check(g, &t, &in, 32, true, 0, &r));
    if (!r.ok)
      fail_msg("scatter n=%lld ni=%lld profile %d: %s", (long long)n, (long long)ni, p, r.what);
  }
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("sm_90", &t));
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  uint32_t found = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (strstr(plan->dispatches[i].what, "scatter")) {
      const uint32_t *gr = plan->dispatches[i].grid;
      assert_int_equal(gr[0] * gr[1] * gr[2], want_groups);
      found++;
    }
  assert_int_equal(found, 1);
  poot_plan_destroy(plan);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_scatter_vector(void **state) {
  (void)state;
  scatter_case(128256, 300, POOT_TRAP_NONE, 2); /* the logit bias: 256 threads a group */
  scatter_case(5000, 4096, POOT_TRAP_NONE, 16);
  scatter_case(5000, 1000, POOT_TRAP_INDEX_OUT_OF_RANGE, 4);
  scatter_case(5000, 4097, POOT_TRAP_NONE, 1); /* past the parallel form: serial */
}

static void test_short_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases_short / sizeof *cases_short; i++)
    run_interp(&cases_short[i], -1);
}
static void test_long_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases_long / sizeof *cases_long; i++)
    run_interp(&cases_long[i], -1);
}
static void test_vocab_rows(void **state) {
  (void)state;
  /* each case on one of the two profiles the big rows take, alternately */
  for (size_t i = 0; i < sizeof cases_vocab / sizeof *cases_vocab; i++)
    run_interp(&cases_vocab[i], i % 2 ? PROF_WEBGPU : PROF_INTERP);
}

/* The dispatch counts of docs/topk.md on the H200's target: tiles of 2,048
 * (63 a row of 128,256), merges of 4,096 pairs (4 runs of 1,024, 64 of 64,
 * 128 of 32). */
static void test_dispatches(void **state) {
  (void)state;
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("sm_90", &t));
  const struct {
    int64_t n, k;
    uint32_t want;
  } w[] = {{128256, 1024, 4}, {128256, 1000, 4}, {128256, 40, 2}, {128256, 20, 2},
           {128256, 1, 2},    {32000, 1024, 3},  {32000, 40, 2},  {2048, 1024, 1},
           {4097, 1024, 2},   {100, 20, 1},      {64, 20, 1}};
  for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
    tk_case c = {1, w[i].n, w[i].k, F32, PAT_RANDOM, false};
    poot_graph *g = build(&c, false);
    uint32_t nd = topk_dispatches(g, &t);
    if (nd != w[i].want)
      fail_msg("n=%lld k=%lld: %u dispatches, expected %u", (long long)w[i].n, (long long)w[i].k,
               nd, w[i].want);
    poot_graph_destroy(g);
  }
}

/* Every kernel of the long-row plans renders for the four real targets
 * (each renderer verifies against its target's limits: shared memory,
 * workgroup size, storage types); tools validate in topk_render.sh. */
static void test_render(void **state) {
  (void)state;
  const char *targets[] = {"sm_80", "sm_90", "vulkan-sg32", "webgpu", "gfx942"};
  const tk_case cs[] = {{3, 128256, 1024, F32, PAT_RANDOM, false},
                        {1, 32000, 40, F16, PAT_RANDOM, false},
                        {1, 100, 20, F32, PAT_RANDOM, false}};
  for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
    poot_graph *g = build(&cs[ci], false);
    for (size_t ti = 0; ti < sizeof targets / sizeof *targets; ti++) {
      poot_kir_target rt;
      POOT_ASSERT_OK(poot_device_target_by_name(targets[ti], &rt));
      poot_compile_options o;
      poot_compile_options_init(&o);
      o.target = &rt;
      poot_plan *plan = NULL;
      POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      for (uint32_t k = 0; k < plan->kernel_count; k++) {
        poot_strbuf_clear(&sb);
        POOT_ASSERT_OK(poot_plan_render_kernel(plan, k, &rt, &sb));
        assert_true(sb.len > 0);
      }
      poot_strbuf_deinit(&sb);
      poot_plan_destroy(plan);
    }
    poot_graph_destroy(g);
  }
}

/* ------------------------------------------------------- the device */

static void run_device(poot_device *d, const tk_case *c) {
  poot_graph *g = build(c, true);
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  poot_tensor *x = find_input(&in, "x");
  fill_x(x, c, (uint64_t)(c->n * 131 + c->k * 7 + c->pat));
  poot_eval_input ei = {"x", x};
  poot_eval_inputs eis = {.count = 1, .items = &ei};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lld k%lld %s", (long long)c->rows, (long long)c->n,
           (long long)c->k, poot_dtype_name(c->dt));
  poot_exec_entry_key key = {"topk", shape, "", ""};
  uint32_t entry = 0;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  poot_exec_slot_value sv;
  POOT_ASSERT_OK(poot_exec_entry_slot(ex, entry, "x", &sv.slot));
  sv.tensor = x;
  void *out = malloc(ev->output.size);
  assert_non_null(out);
  poot_exec_step_io io = {
      .input_count = 1, .inputs = &sv, .output = out, .output_size = ev->output.size};
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  if (memcmp(out, ev->output.data, ev->output.size) != 0) {
    size_t i = 0;
    while (((uint8_t *)out)[i] == ((uint8_t *)ev->output.data)[i]) i++;
    fail_msg("%s on %s: not bit-exact at byte %zu", shape, d->caps.backend, i);
  }
  poot_exec_stats s;
  poot_exec_stats_get(ex, &s);
  printf("%s on %s: %llu dispatches, %.1f us device%s\n", shape, d->caps.backend,
         (unsigned long long)s.dispatches_per_step, s.device_us_per_step,
         s.device_timed ? "" : " (not timed)");
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
  const tk_case cs[] = {
      {3, 128256, 1024, F32, PAT_SPECIAL, false}, {0, 128256, 40, F16, PAT_TIES, false},
      {3, 32000, 20, F32, PAT_TIES, false},       {0, 4097, 1000, F16, PAT_SPECIAL, false},
      {3, 2048, 1024, F32, PAT_SPECIAL, false},   {0, 100, 40, F32, PAT_TIES, false},
      {3, 1, 1, F16, PAT_SPECIAL, false},         {3, 4097, 40, BF16, PAT_SPECIAL, false},
      {0, 32000, 1000, I32, PAT_SPECIAL, false},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_device(d, &cs[i]);
#ifdef POOT_HAVE_VULKAN
  if (strcmp(d->caps.backend, "vulkan") == 0 && poot_vulkan_validation_enabled(d))
    assert_int_equal(poot_vulkan_validation_messages(d), 0);
#endif
  poot_device_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatches),  cmocka_unit_test(test_render),
      cmocka_unit_test(test_fused_input), cmocka_unit_test(test_short_rows),
      cmocka_unit_test(test_long_rows),   cmocka_unit_test(test_vocab_rows),
      cmocka_unit_test(test_vulkan),      cmocka_unit_test(test_scatter_vector),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
