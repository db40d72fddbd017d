/* batch_invariance_test.c — is a row of a batched paged decode step
 * computed exactly as the same row alone? A synthetic Llama (random
 * weights, f32 and q8_0) traced as a paged decode step at B = 1, 4 and 5
 * over one pool (random history, ragged positions, shuffled block tables),
 * each plan made for a real target with the batched runner's compile
 * setting (no_local_reductions: poot_exec_target.batch_invariant) and run
 * on the KIR interpreter at that target's subgroup size: every row's logits
 * and the K/V it writes are compared bit for bit with those of the row run
 * alone at B = 1 (docs/batching.md "Batch invariance"). The f16 pool and
 * paged prefill tests check that attention reads the pool in place.
 *
 * lavapipe (a SIMD CPU: the generic contraction, one output per subgroup
 * whatever M is) must be invariant at 4 and 5; sm_90 and webgpu (the GEMV
 * for M ≤ 8 rows where x's tiles fit, the GEMM past that) at 4 and 5. A
 * case that differs prints the first differing value. */
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
#include "poot/llm/model.h"
#include "poot/llm/sampling.h"
#include "poot/quant.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_internal.h"

enum { CAP = 32, BS = 4, NB = 17, W = CAP / BS, MAXB = 5 };

static poot_dtype g_wtype = POOT_DTYPE_F32;

static poot_status wtype(void *ctx, const poot_weight_ref *ref, const poot_type *expected,
                         poot_type *out) {
  (void)ctx;
  (void)ref;
  *out = *expected;
  if (expected->shape.rank == 2 && expected->shape.dims[1] % 64 == 0) out->dtype = g_wtype;
  return NULL;
}

static int64_t g_hd = 16; /* head_dim: 32 for a q8_0 pool (whole blocks) */

static void tiny_config(poot_model_config *c) {
  poot_model_config_init(c, POOT_MODEL_FAMILY_LLAMA);
  c->vocab_size = 96;
  c->hidden_size = 64;
  c->intermediate_size = 128;
  c->n_layers = 2;
  c->n_heads = 4;
  c->n_kv_heads = 2;
  c->head_dim = g_hd;
  c->norm_eps = 1e-5;
  c->rope_dims = g_hd;
  c->rope_theta = 10000;
  c->rope_mode = POOT_ROPE_NEOX;
}

static poot_dtype g_kv = POOT_DTYPE_F32;

static poot_graph *trace_tokens(int64_t B, int64_t T) {
  poot_model_config c;
  tiny_config(&c);
  poot_model_step s = {
      .batch = B, .tokens = T, .cap = CAP, .paged = true, .block_size = BS, .num_blocks = NB};
  poot_model_trace_options o = {.weight_type = wtype, .kv_dtype = g_kv};
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(&c, &s, &o, &g));
  return g;
}

static poot_graph *trace(int64_t B) {
  return trace_tokens(B, 1);
}

/* The rows: token, position and block table of each; the K/V row written. */
static int32_t g_tok[MAXB], g_pos[MAXB], g_table[MAXB][W], g_write[MAXB];

static void make_rows(void) {
  /* Blocks 0..15 shuffled and dealt to the rows, two each; positions
   * ragged in [0, 8). */
  int32_t perm[NB - 1];
  for (int i = 0; i < NB - 1; i++) perm[i] = i;
  uint32_t x = 12345;
  for (int i = NB - 2; i > 0; i--) {
    x = x * 1664525u + 1013904223u;
    int j = (int)((x >> 8) % (uint32_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int r = 0; r < MAXB; r++) {
    g_tok[r] = 1 + (r * 37) % 95;
    g_pos[r] = (r * 5 + 3) % 8;
    for (int j = 0; j < W; j++) g_table[r][j] = j < 2 ? perm[2 * r + j] : NB - 1;
    g_write[r] = g_table[r][g_pos[r] / BS] * BS + g_pos[r] % BS;
  }
}

/* Runs rows[first .. first + B) as one step of the B-row plan; returns the
 * logits (B rows) and the K/V rows each row wrote in kv (per row: the
 * written pool row of every state, its bytes, concatenated). */
static poot_plan *plan_of(const poot_graph *g, const poot_kir_target *t) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  /* What the batched runner compiles with (poot_exec_target.batch_invariant). */
  o.no_local_reductions = true;
  poot_plan *plan = NULL;
  POOT_ASSERT_OK(poot_plan_create(g, &o, &plan));
  return plan;
}

static void run(const poot_plan *plan, const poot_kir_target *t, const pt_inputs *base, int64_t B,
                const int32_t *rows, float *logits, uint8_t *kv, size_t kv_per_row) {
  poot_plan_run *pr = NULL;
  POOT_ASSERT_OK(poot_plan_run_create(plan, &pr));
  poot_plan_input *in = calloc(base->count + 4, sizeof *in);
  size_t n = 0;
  for (size_t i = 0; i < base->count; i++) {
    const char *nm = base->names[i];
    if (!strcmp(nm, "token") || !strcmp(nm, "pos") || !strcmp(nm, "slot_map") ||
        !strcmp(nm, "write_map"))
      continue;
    in[n].name = nm;
    in[n].tensor = &base->tensors[i];
    n++;
  }
  int32_t tok[MAXB], pos[MAXB], table[MAXB][W], write[MAXB];
  for (int64_t b = 0; b < B; b++) {
    tok[b] = g_tok[rows[b]];
    pos[b] = g_pos[rows[b]];
    memcpy(table[b], g_table[rows[b]], sizeof table[b]);
    write[b] = g_write[rows[b]];
  }
  int64_t td[2] = {B, 1}, sd[2] = {B, W};
  poot_tensor tt = {poot_type_make(POOT_DTYPE_I32, 2, td), tok, (size_t)B * 4};
  poot_tensor pt = {poot_type_make(POOT_DTYPE_I32, 1, &B), pos, (size_t)B * 4};
  poot_tensor st = {poot_type_make(POOT_DTYPE_I32, 2, sd), table, (size_t)(B * W) * 4};
  poot_tensor wt = {poot_type_make(POOT_DTYPE_I32, 1, &B), write, (size_t)B * 4};
  in[n++] = (poot_plan_input){"token", &tt};
  in[n++] = (poot_plan_input){"pos", &pt};
  in[n++] = (poot_plan_input){"slot_map", &st};
  in[n++] = (poot_plan_input){"write_map", &wt};
  POOT_ASSERT_OK(poot_plan_run_bind(pr, n, in));
  poot_plan_run_options ro = {t->subgroup_size, false};
  POOT_ASSERT_OK(poot_plan_run_step(pr, &ro));
  poot_tensor out;
  POOT_ASSERT_OK(poot_plan_run_output(pr, &out));
  memcpy(logits, out.data, out.size);
  /* The K/V rows each row wrote, every layer. */
  poot_model_config c;
  tiny_config(&c);
  for (int64_t b = 0; b < B; b++) {
    size_t k = 0;
    for (int64_t L = 0; L < c.n_layers; L++)
      for (int v = 0; v < 2; v++) {
        char name[64];
        poot_model_kv_state_name(L, v == 1, name, sizeof name);
        poot_tensor s;
        POOT_ASSERT_OK(poot_plan_run_state(pr, name, &s));
        const size_t rb = s.size / (NB * BS); /* a pool row's bytes (f32 or q8_0) */
        memcpy(kv + (size_t)b * kv_per_row + k, (const uint8_t *)s.data + (size_t)write[b] * rb,
               rb);
        k += rb;
      }
  }
  free(in);
  poot_plan_run_destroy(pr);
}

/* A pool's history: every K/V element non-zero (f32, f16, or q8_0 codes). */
static void history(poot_tensor *t) {
  size_t n = 1;
  for (uint32_t d = 0; d < t->type.shape.rank; d++) n *= (size_t)t->type.shape.dims[d];
  float *x = malloc(n * sizeof(float));
  assert_non_null(x);
  for (size_t j = 0; j < n; j++) x[j] = (float)((j * 7919) % 201) / 200.0f - 0.5f;
  if (t->type.dtype == POOT_DTYPE_Q8_0) {
    poot_quant_quantize_q8_0(x, t->data, n / 32);
  } else if (t->type.dtype == POOT_DTYPE_F16) {
    for (size_t j = 0; j < n; j++) ((uint16_t *)t->data)[j] = poot_f32_to_f16(x[j]);
  } else {
    memcpy(t->data, x, n * sizeof(float));
  }
  free(x);
}

/* A pool row's bytes (Hkv · head_dim elements of g_kv). */
static size_t pool_row_bytes(const poot_model_config *c) {
  size_t e = (size_t)(c->n_kv_heads * c->head_dim);
  return g_kv == POOT_DTYPE_Q8_0 ? e / 32 * 34 : g_kv == POOT_DTYPE_F16 ? e * 2 : e * 4;
}

/* Whether every row of every batch size equals the row alone; prints the
 * first difference of each (target, B). */
static bool invariant(const char *target, poot_dtype wt, const int64_t *sizes, int n_sizes,
                      bool *per_size) {
  g_wtype = wt;
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name(target, &t));
  poot_graph *g8 = trace(MAXB);
  pt_inputs base;
  POOT_ASSERT_OK(pt_inputs_make(g8, 99, 95, 0, 0.3f, &base));
  /* A history in the pool: every K/V element non-zero. */
  for (size_t i = 0; i < base.count; i++)
    if (strstr(base.names[i], ".k") || strstr(base.names[i], ".v")) history(&base.tensors[i]);
  poot_model_config c;
  tiny_config(&c);
  const int64_t V = c.vocab_size;
  const size_t kvr = (size_t)(2 * c.n_layers) * pool_row_bytes(&c); /* bytes */
  static float alone[MAXB][96];
  static uint8_t alone_kv[MAXB][2 * 2 * 2 * 32 * 4];
  poot_graph *g1 = trace(1);
  poot_plan *p1 = plan_of(g1, &t);
  for (int32_t r = 0; r < MAXB; r++) run(p1, &t, &base, 1, &r, alone[r], alone_kv[r], kvr);
  poot_plan_destroy(p1);
  poot_graph_destroy(g1);
  bool all = true;
  for (int k = 0; k < n_sizes; k++) {
    const int64_t B = sizes[k];
    poot_graph *g = B == MAXB ? g8 : trace(B);
    int32_t rows[MAXB];
    for (int64_t b = 0; b < B; b++) rows[b] = (int32_t)((b * 3 + k) % MAXB);
    static float lg[MAXB * 96];
    static uint8_t kv[MAXB * 2 * 2 * 2 * 32 * 4];
    poot_plan *p = plan_of(g, &t);
    run(p, &t, &base, B, rows, lg, kv, kvr);
    poot_plan_destroy(p);
    per_size[k] = true;
    for (int64_t b = 0; b < B && per_size[k]; b++) {
      for (int64_t j = 0; j < V; j++)
        if (memcmp(&lg[b * V + j], &alone[rows[b]][j], 4) != 0) {
          printf("  %s %s B=%lld: row %lld logit %lld %.9g alone %.9g\n", target,
                 poot_dtype_name(wt), (long long)B, (long long)b, (long long)j, lg[b * V + j],
                 alone[rows[b]][j]);
          per_size[k] = false;
          break;
        }
      for (size_t j = 0; j < kvr && per_size[k]; j++)
        if (kv[(size_t)b * kvr + j] != alone_kv[rows[b]][j]) {
          printf("  %s %s B=%lld: row %lld K/V byte %zu differs\n", target, poot_dtype_name(wt),
                 (long long)B, (long long)b, j);
          per_size[k] = false;
        }
    }
    all = all && per_size[k];
    if (g != g8) poot_graph_destroy(g);
  }
  printf("%s %s (%s K/V):", target, poot_dtype_name(wt), poot_dtype_name(g_kv));
  for (int k = 0; k < n_sizes; k++)
    printf(" B=%lld %s", (long long)sizes[k], per_size[k] ? "same" : "DIFFERS");
  printf("\n");
  pt_inputs_free(&base);
  poot_graph_destroy(g8);
  return all;
}

static const int64_t k_sizes[] = {4, 5};

/* lavapipe: invariant at every size (what llm_batch_vulkan checks end to
 * end on the device). */
static void test_lavapipe(void **state) {
  (void)state;
  bool ok[2];
  assert_true(invariant("lavapipe", POOT_DTYPE_F32, k_sizes, 2, ok));
  assert_true(invariant("lavapipe", POOT_DTYPE_Q8_0, k_sizes, 2, ok));
  /* A q8_0 pool (head_dim 32: whole blocks): the quantizing write and the
   * decoding reads are per row too. */
  g_hd = 32;
  g_kv = POOT_DTYPE_Q8_0;
  assert_true(invariant("lavapipe", POOT_DTYPE_F32, k_sizes, 2, ok));
  g_hd = 16;
  g_kv = POOT_DTYPE_F32;
}

/* GPU targets: invariant up to 8 rows (the GEMV treats each row alike);
 * past 8 the projections take the GEMM, whose sums run in another order
 * (docs/batching.md; test_gemv_rows prints M = 9). */
static void test_gpu_targets(void **state) {
  (void)state;
  const char *targets[] = {"sm_90", "webgpu"};
  for (int i = 0; i < 2; i++) {
    bool ok[2];
    (void)invariant(targets[i], i ? POOT_DTYPE_F32 : POOT_DTYPE_Q8_0, k_sizes, 2, ok);
    assert_true(ok[0]);             /* B = 4 */
    if (i == 0) assert_true(ok[1]); /* B = 5 on sm_90 (webgpu has no subgroups: the GEMM) */
  }
}

/* No temporary holds a sequence's [cap, Hkv, D] view of the pool (nor, in
 * decode (`sized`), anything as large): attention reads the pool in place. */
static void assert_no_view_temp(const poot_plan *plan, const char *what, bool sized) {
  const uint64_t view = (uint64_t)CAP * 2 * (uint64_t)g_hd * 4; /* 32-bit temp elements */
  for (uint32_t i = 0; i < plan->temp_count; i++) {
    const poot_type *ty = &plan->temps[i].type;
    bool is_view = ty->shape.rank == 3 && ty->shape.dims[0] == CAP && ty->shape.dims[1] == 2 &&
                   ty->shape.dims[2] == g_hd;
    if (is_view || (sized && plan->temps[i].size >= view))
      fail_msg("%s: temporary %u (%%%u, %llu bytes): a gathered K/V view", what, i,
               plan->temps[i].value, (unsigned long long)plan->temps[i].size);
  }
}

/* A table entry out of the pool in a block no row can see yet (row 0's
 * last block): the plan faults with the oracle's trap, although attention
 * reads only the visible rows (the row map is checked whole). */
static void expect_table_fault(const poot_plan *plan, const poot_kir_target *t, poot_eval_input *ei,
                               size_t n, poot_graph *g, int32_t (*table)[W]) {
  int32_t saved = table[0][W - 1];
  table[0][W - 1] = 1000;
  poot_eval_fault f;
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.out_fault = &f;
  poot_evaluation *ev = NULL;
  poot_eval_inputs eis = {.count = n, .items = ei};
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &eis, &eo, &ev), POOT_KERNEL_FAULT, "");
  assert_int_equal(f.trap, POOT_TRAP_INDEX_OUT_OF_RANGE);
  poot_plan_run *pr = NULL;
  POOT_ASSERT_OK(poot_plan_run_create(plan, &pr));
  poot_plan_input *pi = calloc(n, sizeof *pi);
  for (size_t i = 0; i < n; i++) pi[i] = (poot_plan_input){ei[i].name, ei[i].tensor};
  POOT_ASSERT_OK(poot_plan_run_bind(pr, n, pi));
  poot_plan_run_options ro = {t->subgroup_size, false};
  poot_status st = poot_plan_run_step(pr, &ro);
  assert_int_equal(poot_status_code_of(st), POOT_KERNEL_FAULT);
  char code[32];
  snprintf(code, sizeof code, "trap code %d", (int)POOT_TRAP_INDEX_OUT_OF_RANGE);
  if (!strstr(poot_status_message(st), code))
    fail_msg("fault without the index trap: %s", poot_status_message(st));
  poot_status_free(st);
  free(pi);
  poot_plan_run_destroy(pr);
  table[0][W - 1] = saved;
}

/* f16 paged K/V (the default): the scatter writes each new row as 32-bit
 * words of two halves, in place (no temporary as large as a state);
 * attention reads each sequence's rows in place through its row map (no
 * temporary as large as a sequence's [cap, Hkv, D] view); and the plan at
 * B = 4 matches poot_eval: logits within 1e-4 of the largest, every pool
 * row the step does not write bit for bit, the written rows within an f16
 * ulp (the device rounds its own f32 values, within tier 2 of the
 * oracle's). sm_90 (the wide form through the row map), lavapipe and
 * webgpu (the per-thread form, the gather inlined in its loads). */
static void pool_vs_oracle(poot_dtype kv, const char *const *targets, int n_targets) {
  g_kv = kv;
  g_wtype = POOT_DTYPE_Q8_0;
  for (int ti = 0; ti < n_targets; ti++) {
    poot_kir_target t;
    POOT_ASSERT_OK(poot_device_target_by_name(targets[ti], &t));
    poot_graph *g = trace(4);
    pt_inputs base;
    POOT_ASSERT_OK(pt_inputs_make(g, 7, 95, 0, 0.3f, &base));
    for (size_t i = 0; i < base.count; i++)
      if (strstr(base.names[i], ".k") || strstr(base.names[i], ".v")) {
        assert_int_equal(base.tensors[i].type.dtype, kv);
        history(&base.tensors[i]);
      }
    poot_plan *plan = plan_of(g, &t);
    uint64_t largest_state = 0;
    for (uint32_t i = 0; i < plan->buffer_count; i++)
      if (plan->buffers[i].cls == POOT_PLAN_BUFFER_STATE && plan->buffers[i].size > largest_state)
        largest_state = plan->buffers[i].size;
    for (uint32_t i = 0; i < plan->temp_count; i++)
      assert_true(plan->temps[i].size < largest_state); /* no copy of a state */
    assert_no_view_temp(plan, targets[ti], true);
    /* Every kernel renders for the target (PTX, GLSL). */
    for (uint32_t i = 0; i < plan->kernel_count; i++) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_plan_render_kernel(plan, i, &t, &sb));
      assert_true(sb.len > 0);
      poot_strbuf_deinit(&sb);
    }
    static float lg[4 * 96];
    /* The oracle on the same inputs. */
    poot_eval_input *ei = calloc(base.count + 4, sizeof *ei);
    size_t n = 0;
    for (size_t i = 0; i < base.count; i++) {
      const char *nm = base.names[i];
      if (!strcmp(nm, "token") || !strcmp(nm, "pos") || !strcmp(nm, "slot_map") ||
          !strcmp(nm, "write_map"))
        continue;
      ei[n].name = nm;
      ei[n].tensor = &base.tensors[i];
      n++;
    }
    int32_t tok[4], pos[4], table[4][W], write[4];
    for (int b = 0; b < 4; b++) {
      tok[b] = g_tok[b];
      pos[b] = g_pos[b];
      memcpy(table[b], g_table[b], sizeof table[b]);
      write[b] = g_write[b];
    }
    int64_t B = 4, td[2] = {4, 1}, sd[2] = {4, W};
    poot_tensor tt = {poot_type_make(POOT_DTYPE_I32, 2, td), tok, 16};
    poot_tensor pt = {poot_type_make(POOT_DTYPE_I32, 1, &B), pos, 16};
    poot_tensor st = {poot_type_make(POOT_DTYPE_I32, 2, sd), table, sizeof table};
    poot_tensor wt = {poot_type_make(POOT_DTYPE_I32, 1, &B), write, 16};
    ei[n++] = (poot_eval_input){"token", &tt};
    ei[n++] = (poot_eval_input){"pos", &pt};
    ei[n++] = (poot_eval_input){"slot_map", &st};
    ei[n++] = (poot_eval_input){"write_map", &wt};
    poot_evaluation *ev = NULL;
    poot_eval_inputs eis = {.count = n, .items = ei};
    POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
    /* The device side: the plan on the interpreter (run() binds the same). */
    poot_plan_run *pr = NULL;
    POOT_ASSERT_OK(poot_plan_run_create(plan, &pr));
    poot_plan_input *pi = calloc(n, sizeof *pi);
    for (size_t i = 0; i < n; i++) pi[i] = (poot_plan_input){ei[i].name, ei[i].tensor};
    POOT_ASSERT_OK(poot_plan_run_bind(pr, n, pi));
    poot_plan_run_options ro = {t.subgroup_size, false};
    POOT_ASSERT_OK(poot_plan_run_step(pr, &ro));
    poot_tensor out;
    POOT_ASSERT_OK(poot_plan_run_output(pr, &out));
    memcpy(lg, out.data, out.size);
    const float *ref = ev->output.data;
    double big = 0, err = 0;
    for (size_t j = 0; j < out.size / 4; j++) {
      big = fmax(big, fabs(ref[j]));
      err = fmax(err, fabs((double)ref[j] - lg[j]));
    }
    printf("%s pool on %s: logits max |plan - oracle| %.3g of %.3g\n", poot_dtype_name(kv),
           targets[ti], err, big);
    assert_true(err <= 1e-4 * big);
    int written = 0;
    poot_model_config c;
    tiny_config(&c);
    const size_t rb = pool_row_bytes(&c), rowe = (size_t)(c.n_kv_heads * c.head_dim);
    for (uint32_t si = 0; si < ev->num_states; si++) {
      poot_tensor s;
      POOT_ASSERT_OK(poot_plan_run_state(pr, ev->states[si].name, &s));
      const uint8_t *a = s.data, *e = ev->states[si].tensor.data;
      for (size_t r = 0; r < s.size / rb; r++) {
        bool w = false;
        for (int b = 0; b < 4; b++) w = w || write[b] == (int32_t)r;
        if (!w) {
          if (memcmp(a + r * rb, e + r * rb, rb) != 0)
            fail_msg("%s: row %zu (not written) changed", ev->states[si].name, r);
          continue;
        }
        for (size_t j = 0; j < rowe; j++, written++) {
          float fx, fy, allow;
          if (kv == POOT_DTYPE_Q8_0) { /* within one quantum of the block (the larger scale) */
            const uint8_t *bx = a + r * rb + j / 32 * 34, *by = e + r * rb + j / 32 * 34;
            float dx = poot_f16_to_f32((uint16_t)(bx[0] | bx[1] << 8));
            float dy = poot_f16_to_f32((uint16_t)(by[0] | by[1] << 8));
            fx = dx * (float)(int8_t)bx[2 + j % 32];
            fy = dy * (float)(int8_t)by[2 + j % 32];
            allow = fmaxf(dx, dy) * 1.001f + 1e-6f;
          } else { /* within an f16 ulp */
            uint16_t x, y;
            memcpy(&x, a + r * rb + 2 * j, 2);
            memcpy(&y, e + r * rb + 2 * j, 2);
            fx = poot_f16_to_f32(x);
            fy = poot_f16_to_f32(y);
            allow = fabsf(fy) * 0x1p-10f + 0x1p-24f;
          }
          if (fabsf(fx - fy) > allow)
            fail_msg("%s: written row %zu element %zu: %g vs %g", ev->states[si].name, r, j, fx,
                     fy);
        }
      }
    }
    assert_int_equal(written, 4 * 2 * 2 * (int)rowe); /* 4 rows of every K and V state */
    expect_table_fault(plan, &t, ei, n, g, table);
    free(pi);
    free(ei);
    poot_plan_run_destroy(pr);
    poot_evaluation_destroy(ev);
    poot_plan_destroy(plan);
    pt_inputs_free(&base);
    poot_graph_destroy(g);
  }
  g_kv = POOT_DTYPE_F32;
}

static void test_f16_pool(void **state) {
  (void)state;
  static const char *const targets[] = {"sm_90", "lavapipe", "webgpu"};
  pool_vs_oracle(POOT_DTYPE_F16, targets, 3);
}

/* The same with a q8_0 pool (head_dim 32): the write quantizes each new
 * row in place (a thread per pair of blocks), attention decodes the rows in
 * place through the row map (sm_90: the subgroup form, the wide form being
 * f16's; webgpu: the per-thread form, lavapipe's too), and the written rows
 * are within one quantum of the oracle's (which quantizes identically). */
static void test_q8_pool(void **state) {
  (void)state;
  g_hd = 32;
  static const char *const targets[] = {"sm_90", "webgpu"};
  pool_vs_oracle(POOT_DTYPE_Q8_0, targets, 2);
  g_hd = 16;
}

/* A paged prefill of 16 tokens (one sequence from position 4, f16 pool,
 * blocks scattered) on sm_90: the tiled attention form reads the pool in
 * place through the row map too (no [cap, Hkv, D] temporary), the logits
 * are within 1e-4 of the largest of poot_eval's, and a bad entry in a
 * block past the prompt faults as the oracle does. */
static void test_paged_prefill(void **state) {
  (void)state;
  enum { T = 16, P0 = 4 };
  g_kv = POOT_DTYPE_F16;
  g_wtype = POOT_DTYPE_F32;
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("sm_90", &t));
  poot_graph *g = trace_tokens(1, T);
  pt_inputs base;
  POOT_ASSERT_OK(pt_inputs_make(g, 11, 95, 0, 0.3f, &base));
  for (size_t i = 0; i < base.count; i++)
    if (strstr(base.names[i], ".k") || strstr(base.names[i], ".v")) {
      uint16_t *h = base.tensors[i].data;
      for (size_t j = 0; j < base.tensors[i].size / 2; j++)
        h[j] = poot_f32_to_f16((float)((j * 7919) % 201) / 200.0f - 0.5f);
    }
  poot_plan *plan = plan_of(g, &t);
  uint32_t tiled = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    tiled += plan->dispatches[i].what && strstr(plan->dispatches[i].what, "tiled") != NULL;
  assert_true(tiled > 0);
  assert_no_view_temp(plan, "sm_90 prefill", false);
  int32_t tok[T], pos = P0, table[1][W], write[T];
  const int32_t blocks[W] = {9, 2, 14, 5, 11, 0, 7, 16};
  for (int j = 0; j < W; j++) table[0][j] = blocks[j];
  for (int i = 0; i < T; i++) {
    tok[i] = 1 + (i * 29) % 95;
    write[i] = table[0][(P0 + i) / BS] * BS + (P0 + i) % BS;
  }
  int64_t one = 1, td[2] = {1, T}, sd[2] = {1, W}, wd = T;
  poot_tensor tt = {poot_type_make(POOT_DTYPE_I32, 2, td), tok, sizeof tok};
  poot_tensor pt = {poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4};
  poot_tensor st = {poot_type_make(POOT_DTYPE_I32, 2, sd), table, sizeof table};
  poot_tensor wt = {poot_type_make(POOT_DTYPE_I32, 1, &wd), write, sizeof write};
  poot_eval_input *ei = calloc(base.count + 4, sizeof *ei);
  size_t n = 0;
  for (size_t i = 0; i < base.count; i++) {
    const char *nm = base.names[i];
    if (!strcmp(nm, "token") || !strcmp(nm, "pos") || !strcmp(nm, "slot_map") ||
        !strcmp(nm, "write_map"))
      continue;
    ei[n].name = nm;
    ei[n].tensor = &base.tensors[i];
    n++;
  }
  ei[n++] = (poot_eval_input){"token", &tt};
  ei[n++] = (poot_eval_input){"pos", &pt};
  ei[n++] = (poot_eval_input){"slot_map", &st};
  ei[n++] = (poot_eval_input){"write_map", &wt};
  poot_evaluation *ev = NULL;
  poot_eval_inputs eis = {.count = n, .items = ei};
  POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
  poot_plan_run *pr = NULL;
  POOT_ASSERT_OK(poot_plan_run_create(plan, &pr));
  poot_plan_input *pi = calloc(n, sizeof *pi);
  for (size_t i = 0; i < n; i++) pi[i] = (poot_plan_input){ei[i].name, ei[i].tensor};
  POOT_ASSERT_OK(poot_plan_run_bind(pr, n, pi));
  poot_plan_run_options ro = {t.subgroup_size, false};
  POOT_ASSERT_OK(poot_plan_run_step(pr, &ro));
  poot_tensor out;
  POOT_ASSERT_OK(poot_plan_run_output(pr, &out));
  assert_int_equal(out.size, ev->output.size);
  const float *ref = ev->output.data, *got = out.data;
  double big = 0, err = 0;
  for (size_t j = 0; j < out.size / 4; j++) {
    big = fmax(big, fabs(ref[j]));
    err = fmax(err, fabs((double)ref[j] - got[j]));
  }
  printf("paged prefill on sm_90 (tiled): logits max |plan - oracle| %.3g of %.3g\n", err, big);
  assert_true(big > 0 && err <= 1e-4 * big);
  expect_table_fault(plan, &t, ei, n, g, table); /* block 7: positions 28.. unseen */
  free(pi);
  free(ei);
  poot_plan_run_destroy(pr);
  poot_evaluation_destroy(ev);
  poot_plan_destroy(plan);
  pt_inputs_free(&base);
  poot_graph_destroy(g);
  g_kv = POOT_DTYPE_F32;
}

/* The projections alone at a real length (K = 4096, N = 64): rows of x at
 * M = 2, 4, 5 and 8 (the GEMV) sum as the row alone (M = 1), although x is
 * staged in tiles of K from M = 2 on (the tiles are whole multiples of sg
 * chunks, so each chunk stays its lane's); at M = 9 the GEMM takes the rows
 * and they differ (printed), but equal the rows at M = 20 and 40 (f16: the
 * skinny tile and 64 × 64). f16 and q8_0 weights, sm_90. */
static void gemv_rows(poot_dtype wt, int64_t M, float *out) {
  enum { K = 4096, N = 64 };
  poot_graph *g;
  POOT_ASSERT_OK(poot_graph_create(&g));
  poot_value w = pt_param(g, "w", wt, N, K), x = pt_param(g, "x", POOT_DTYPE_F32, M, K);
  POOT_ASSERT_OK(poot_graph_set_output(g, pt_dot_nt(g, x, w)));
  POOT_ASSERT_OK(poot_graph_verify(g));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 5, 10, 0, 0.3f, &in)); /* w first: the same at every M */
  for (size_t i = 0; i < in.count; i++)
    if (!strcmp(in.names[i], "x")) {
      float *f = in.tensors[i].data;
      for (int64_t j = 0; j < M * K; j++)
        f[j] = (float)(((j % K) * 7919 + (j / K) * 13) % 2001) / 1000.0f - 1.0f;
    }
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("sm_90", &t));
  poot_plan *p = plan_of(g, &t);
  poot_plan_run *r;
  POOT_ASSERT_OK(poot_plan_run_create(p, &r));
  poot_plan_input pi[2];
  for (size_t i = 0; i < in.count; i++) pi[i] = (poot_plan_input){in.names[i], &in.tensors[i]};
  POOT_ASSERT_OK(poot_plan_run_bind(r, in.count, pi));
  poot_plan_run_options ro = {t.subgroup_size, false};
  POOT_ASSERT_OK(poot_plan_run_step(r, &ro));
  poot_tensor ot;
  POOT_ASSERT_OK(poot_plan_run_output(r, &ot));
  memcpy(out, ot.data, N * sizeof *out); /* row 0 */
  poot_plan_run_destroy(r);
  poot_plan_destroy(p);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

static void test_gemv_rows(void **state) {
  (void)state;
  const poot_dtype wts[] = {POOT_DTYPE_F16, POOT_DTYPE_Q8_0};
  for (int i = 0; i < 2; i++) {
    float alone[64], rows[64], nine[64];
    gemv_rows(wts[i], 1, alone);
    const int64_t ms[] = {2, 4, 5, 8, 9, 20, 40};
    for (int k = 0; k < (i ? 5 : 7); k++) { /* q8_0: 64 × 64 at every M, no 20 and 40 */
      gemv_rows(wts[i], ms[k], rows);
      int differ = 0;
      for (int j = 0; j < 64; j++) differ += memcmp(&rows[j], &alone[j], 4) != 0;
      printf("projection %s K=4096 M=%lld: %d of 64 outputs of row 0 differ from M=1\n",
             poot_dtype_name(wts[i]), (long long)ms[k], differ);
      if (ms[k] <= 8) assert_int_equal(differ, 0);
      if (ms[k] == 9) memcpy(nine, rows, sizeof nine);
      /* the GEMM's rows from 9 on sum in one order whatever M is: the same
       * split (one row of tiles), each row's mma in the same order on the
       * 32 × 64 tile (f16, M <= 32) and the 64 × 64 one */
      if (ms[k] > 9) assert_memory_equal(rows, nine, sizeof nine);
    }
  }
}

/* The batched runner's sampled decode entry (the row sampler on B = 4 rows
 * of an f16 paged step: llama.cpp's chain, a logit bias and logprobs) plans
 * and renders for sm_90, webgpu and lavapipe, and on the interpreter draws
 * an id in the vocabulary for every row, flagged finite, with its logprob
 * and the top 20 in order: the PTX path the CPU machines cannot run is at
 * least compiled; and so do the rows of a kind with penalties and a grammar. */
static void test_sampler_rows(void **state) {
  (void)state;
  g_kv = POOT_DTYPE_F16;
  g_wtype = POOT_DTYPE_F32;
  const uint32_t kind = POOT_SAMPLER_DRAW | POOT_SAMPLER_TOP_K | POOT_SAMPLER_TOP_P |
                        POOT_SAMPLER_MIN_P | POOT_SAMPLER_LOGIT_BIAS | POOT_SAMPLER_LOGPROBS;
  const char *targets[] = {"sm_90", "webgpu", "lavapipe"};
  for (int ti = 0; ti < 3; ti++) {
    poot_graph *g = trace(4);
    POOT_ASSERT_OK(poot__driver_append_sampler_rows(g, kind, 0));
    poot_kir_target t;
    POOT_ASSERT_OK(poot_device_target_by_name(targets[ti], &t));
    poot_plan *plan = plan_of(g, &t);
    for (uint32_t i = 0; i < plan->kernel_count; i++) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_plan_render_kernel(plan, i, &t, &sb));
      poot_strbuf_deinit(&sb);
    }
    if (ti == 0) { /* sm_90 on the interpreter: every row draws */
      pt_inputs in;
      POOT_ASSERT_OK(pt_inputs_make(g, 11, 95, 0, 0.3f, &in));
      for (size_t i = 0; i < in.count; i++) {
        const char *nm = in.names[i];
        if (!strcmp(nm, "sampler.f")) {
          float *f = in.tensors[i].data;
          for (int r = 0; r < 4; r++) {
            const float row[8] = {0.8f, 0.95f, logf(0.05f), 1.0f, 1.0f, 0, 0, 0};
            memcpy(f + 8 * r, row, sizeof row);
          }
        } else if (!strcmp(nm, "sampler.i")) {
          int32_t *v = in.tensors[i].data;
          for (int r = 0; r < 4; r++) v[4 * r] = 40, v[4 * r + 1] = v[4 * r + 2] = v[4 * r + 3] = 0;
        } else if (!strcmp(nm, "sampler.bias_id")) {
          int32_t *v = in.tensors[i].data;
          for (size_t j = 0; j < in.tensors[i].size / 4; j++) v[j] = -1;
        } else if (!strcmp(nm, "slot_map")) {
          int32_t *v = in.tensors[i].data;
          for (size_t j = 0; j < in.tensors[i].size / 4; j++) v[j] = (int32_t)(j % (NB - 1));
        } else if (!strcmp(nm, "write_map") || !strcmp(nm, "pos")) {
          int32_t *v = in.tensors[i].data;
          for (size_t j = 0; j < in.tensors[i].size / 4; j++) v[j] = (int32_t)j;
        }
      }
      poot_plan_run *r;
      POOT_ASSERT_OK(poot_plan_run_create(plan, &r));
      poot_plan_input *pi = calloc(in.count, sizeof *pi);
      for (size_t i = 0; i < in.count; i++) pi[i] = (poot_plan_input){in.names[i], &in.tensors[i]};
      POOT_ASSERT_OK(poot_plan_run_bind(r, in.count, pi));
      poot_plan_run_options ro = {t.subgroup_size, false};
      POOT_ASSERT_OK(poot_plan_run_step(r, &ro));
      poot_tensor out;
      POOT_ASSERT_OK(poot_plan_run_output(r, &out));
      /* 4 rows of {id, finite, any, logprob, top ids[20], top logprobs[20]} */
      enum { W = 4 + 2 * 20 };
      assert_int_equal(out.size, 4 * W * 4);
      const int32_t *w = out.data;
      for (int row = 0; row < 4; row++) {
        const int32_t *x = w + W * row;
        assert_true(x[0] >= 0 && x[0] < 96);
        assert_int_equal(x[1], 1);
        assert_int_equal(x[2], 1);
        float lp, top[20];
        memcpy(&lp, &x[3], sizeof lp);
        memcpy(top, &x[24], sizeof top);
        assert_true(lp <= top[0] && isfinite(lp)); /* the draw may lie past the top 20 */
        for (int j = 0; j < 20; j++) assert_true(x[4 + j] >= 0 && x[4 + j] < 96);
        for (int j = 1; j < 20; j++) assert_true(top[j] <= top[j - 1]);
        assert_true(top[0] <= 0.0f);
      }
      free(pi);
      poot_plan_run_destroy(r);
      pt_inputs_free(&in);
    }
    poot_plan_destroy(plan);
    poot_graph_destroy(g);
  }
  /* The runner's default max_batch, 8 rows, with logprobs (no bias) plans
   * for lavapipe's 128 bytes of push constants too. */
  poot_graph *g = trace(8);
  POOT_ASSERT_OK(poot__driver_append_sampler_rows(g, kind & ~(uint32_t)POOT_SAMPLER_LOGIT_BIAS, 0));
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name("lavapipe", &t));
  poot_plan *plan = plan_of(g, &t);
  poot_plan_destroy(plan);
  poot_graph_destroy(g);
  /* Penalties (each row's window list, 16 wide) and a grammar's mask on the
   * chain's rows plan and render for every target too. */
  const uint32_t pk = POOT_SAMPLER_DRAW | POOT_SAMPLER_TOP_K | POOT_SAMPLER_TOP_P |
                      POOT_SAMPLER_MIN_P | POOT_SAMPLER_PENALTIES | POOT_SAMPLER_MASK;
  for (int ti = 0; ti < 3; ti++) {
    g = trace(4);
    POOT_ASSERT_OK(poot__driver_append_sampler_rows(g, pk, 16));
    POOT_ASSERT_OK(poot_device_target_by_name(targets[ti], &t));
    plan = plan_of(g, &t);
    for (uint32_t i = 0; i < plan->kernel_count; i++) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_plan_render_kernel(plan, i, &t, &sb));
      poot_strbuf_deinit(&sb);
    }
    poot_plan_destroy(plan);
    poot_graph_destroy(g);
  }
  g_kv = POOT_DTYPE_F32;
}

int main(void) {
  make_rows();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lavapipe),      cmocka_unit_test(test_gpu_targets),
      cmocka_unit_test(test_f16_pool),      cmocka_unit_test(test_q8_pool),
      cmocka_unit_test(test_paged_prefill), cmocka_unit_test(test_gemv_rows),
      cmocka_unit_test(test_sampler_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
