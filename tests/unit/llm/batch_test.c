/* The batched runner (poot/llm/batch.h, docs/batching.md) on the device the
 * argument names ("vulkan" by default; SKIP when it is absent), with
 * stories260K (the data folder) and the demo model (models/poot-demo.gguf);
 * each case SKIPs when its model is absent:
 *  - tier 2: every step of a scheduler run (three prompts of 5, 9 and 3 ids
 *    with blocks of 4, so positions are ragged and block tables interleave)
 *    on the device and on poot_eval over the same paged graph, slots and
 *    pool rows: each decode row's logits within the tolerance of
 *    docs/verification.md, each prefill item's id the oracle's;
 *  - batch invariance: 16 stories260K prompts (6 of the demo model), each
 *    generated alone and all together at max_batch 8 (decode entries of 1,
 *    2, 4, 8, with dummy rows) and, on stories260K, 3 (1, 2, 3): identical
 *    ids on a SIMD CPU target (lavapipe) and on targets with subgroups (the
 *    GEMV up to 8 rows); elsewhere (WebGPU without subgroups) max_batch 4
 *    must be identical and 8 is reported (the GEMM from 5 rows,
 *    docs/batching.md);
 *    the alone ids equal the contiguous driver's (f32 K/V) for four; every
 *    entry captured once, none added by a step;
 *  - prefix reuse: a prompt sharing 32 ids with an earlier one computes only
 *    the rest (counted) and gives the ids of a runner without reuse;
 *  - preemption: a pool too small for the load: every request finishes
 *    (LENGTH, or CAPACITY) with its alone ids where it finished by length,
 *    preemptions happened, and the pool's blocks are all free at the end;
 *  - recovery: a kernel fault in the middle of four requests (one sampled),
 *    recovered by an executor reset and by a move to a new executor: every
 *    request ends with its unfaulted ids, and no block stays published;
 *  - input rows (poot_batch_request.inputs): embedding-table rows in place
 *    of prompt ids give those ids' output; other rows at the same ids share
 *    no block; bad rows are refused;
 *  - option errors, and sizing from the device's memory.
 * On wgpu only the tier-2 case and the errors run (each entry compiles for
 * seconds there; the rest does not depend on the device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/llm/batch.h"
#include "poot/llm/driver.h"
#include "poot/llm/verify.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_internal.h"

static const char *g_spec = "vulkan";
/* The device's target is a SIMD CPU (lavapipe): every decode size is
 * batch invariant there; elsewhere up to 8 rows with subgroups (the GEMV),
 * 4 without (docs/batching.md). */
static bool g_simd_cpu, g_rows8;
/* One device for every case: its kernel cache serves every runner. */
static poot_device *g_dev;

typedef struct rig {
  poot_model *model;
  poot_device *dev;
  poot_executor *ex;
  poot_batch *b;
} rig;

static bool stories_paths(char *model, char *tok, size_t n) {
  return poot_test_data_path("models/stories260K/stories260K.bin", model, n) &&
         poot_test_data_path("models/stories260K/tok512.bin", tok, n);
}

/* Opens stories260K (or the demo model when `demo`); false when absent. */
static bool open_model(bool demo, poot_model **out) {
  char model[1024], tok[1024];
  if (demo) {
    snprintf(model, sizeof model, "%s/models/poot-demo.gguf", poot_test_source_dir());
    FILE *f = fopen(model, "rb");
    if (!f) return false;
    fclose(f);
    POOT_ASSERT_OK(poot_model_open(model, NULL, out));
    return true;
  }
  if (!stories_paths(model, tok, sizeof model)) return false;
  poot_model_open_options mo = {.tokenizer_path = tok};
  POOT_ASSERT_OK(poot_model_open(model, &mo, out));
  return true;
}

/* The model, or the case skips (naming it) when the model is absent. */
static poot_model *model_or_skip(bool demo, const char *what) {
  poot_model *m = NULL;
  if (!open_model(demo, &m)) {
    printf("SKIP %s: the %s model is absent\n", what, demo ? "demo" : "stories260K");
    skip();
  }
  return m;
}

/* The runner's options of these cases: prefill chunks of one block. */
static poot_batch_options small_options(int32_t max_batch, int64_t max_seq_len, int32_t block_size,
                                        int32_t num_blocks, bool prefix_cache) {
  poot_batch_options o = poot_batch_options_default();
  o.max_batch = max_batch;
  o.max_seq_len = max_seq_len;
  o.block_size = block_size;
  o.prefill_chunk = block_size;
  o.num_blocks = num_blocks;
  o.no_prefix_cache = !prefix_cache;
  return o;
}

static void rig_open(rig *r, poot_model *m, const poot_batch_options *o) {
  memset(r, 0, sizeof *r);
  r->model = m;
  r->dev = g_dev;
  POOT_ASSERT_OK(poot_engine_create(r->dev, &r->ex));
  POOT_ASSERT_OK(poot_batch_create(r->ex, m, o, &r->b));
}

static void rig_close(rig *r) {
  poot_batch_destroy(r->b);
  poot_executor_destroy(r->ex);
}

/* Deterministic prompts: BOS then ids from a seeded LCG. */
static void make_prompt(uint32_t seed, int64_t vocab, int32_t *ids, int64_t n) {
  uint32_t x = seed * 2654435761u + 12345u;
  ids[0] = 1;
  for (int64_t i = 1; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    ids[i] = (int32_t)(3 + (x >> 8) % (uint32_t)(vocab - 3));
  }
}

/* ------------------------------------------------------------ the oracle */

/* The paged graph of one step shape on poot_eval, its weights bound by
 * name; the pool's states are carried between steps by `pool`. */
typedef struct oracle_graph {
  int64_t B, T;
  poot_graph *g;
  poot_eval_input items[256];
  poot_tensor tensors[256];
  char names[256][64];
  size_t n_weights, n;
} oracle_graph;

typedef struct oracle {
  poot_model *m;
  poot_batch_info info;
  oracle_graph graphs[32];
  int n_graphs;
  poot_evaluation *pool;       /* the states after the last step (NULL: zeros) */
  const poot_kv_pool *pool_of; /* the runner's pool: the sequences' rows */
} oracle;

static oracle_graph *oracle_get(oracle *o, int64_t B, int64_t T) {
  for (int i = 0; i < o->n_graphs; i++)
    if (o->graphs[i].B == B && o->graphs[i].T == T) return &o->graphs[i];
  assert_true(o->n_graphs < 32);
  oracle_graph *g = &o->graphs[o->n_graphs++];
  memset(g, 0, sizeof *g);
  g->B = B;
  g->T = T;
  poot_model_step step = {.batch = B,
                          .tokens = T,
                          .cap = o->info.max_seq_len,
                          .paged = true,
                          .block_size = o->info.block_size,
                          .num_blocks = o->info.num_blocks + 1};
  poot_model_trace_options to = poot_model_trace_options_for(o->m);
  to.kv_dtype = o->info.kv_dtype;
  POOT_ASSERT_OK(poot_model_trace(poot_model_get_config(o->m), &step, &to, &g->g));
  const poot_region *root = poot_graph_root(g->g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *nd = poot_graph_node(g->g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g->g, nd, &sb);
    assert_true(g->n < 200);
    snprintf(g->names[g->n], 64, "%s", sb.data);
    POOT_ASSERT_OK(poot_model_weight_tensor(
        o->m, &nd->weight, poot_graph_value_type(g->g, nd->results[0]), &g->tensors[g->n]));
    g->items[g->n].name = g->names[g->n];
    g->items[g->n].tensor = &g->tensors[g->n];
    g->n++;
  }
  g->n_weights = g->n;
  poot_strbuf_deinit(&sb);
  return g;
}

static void oracle_add(oracle_graph *g, const char *name, poot_type type, const void *data,
                       size_t size) {
  size_t k = g->n++;
  snprintf(g->names[k], 64, "%s", name);
  g->tensors[k] = (poot_tensor){.type = type, .data = (void *)data, .size = size};
  g->items[k].name = g->names[k];
  g->items[k].tensor = &g->tensors[k];
}

/* One oracle step of B rows of T tokens; returns f32[B, V] (malloc'd). */
static float *oracle_step(oracle *o, int64_t B, int64_t T, const int32_t *tok, const int32_t *pos,
                          const int32_t *table, const int32_t *write) {
  oracle_graph *g = oracle_get(o, B, T);
  const int64_t W = o->info.max_seq_len / o->info.block_size, N = B * T;
  int64_t td[2] = {B, T}, sd[2] = {B, W};
  oracle_add(g, "token", poot_type_make(POOT_DTYPE_I32, 2, td), tok, (size_t)N * 4);
  oracle_add(g, "pos", poot_type_make(POOT_DTYPE_I32, 1, &B), pos, (size_t)B * 4);
  oracle_add(g, "slot_map", poot_type_make(POOT_DTYPE_I32, 2, sd), table, (size_t)(B * W) * 4);
  oracle_add(g, "write_map", poot_type_make(POOT_DTYPE_I32, 1, &N), write, (size_t)N * 4);
  if (o->pool)
    for (uint32_t i = 0; i < o->pool->num_states; i++)
      oracle_add(g, o->pool->states[i].name, o->pool->states[i].tensor.type,
                 o->pool->states[i].tensor.data, o->pool->states[i].tensor.size);
  poot_eval_inputs in = {.count = g->n, .items = g->items};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = o->pool == NULL;
  poot_evaluation *e = NULL;
  POOT_ASSERT_OK(poot_eval(g->g, &in, &eo, &e));
  g->n = g->n_weights;
  float *out = malloc(e->output.size);
  memcpy(out, e->output.data, e->output.size);
  poot_evaluation_destroy(o->pool);
  o->pool = e;
  return out;
}

static void oracle_deinit(oracle *o) {
  for (int i = 0; i < o->n_graphs; i++) poot_graph_destroy(o->graphs[i].g);
  poot_evaluation_destroy(o->pool);
}

static int64_t argmax(const float *x, int64_t n, float *out_margin) {
  int64_t best = 0, second = -1;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  for (int64_t i = 0; i < n; i++)
    if (i != best && (second < 0 || x[i] > x[second])) second = i;
  if (out_margin) *out_margin = second < 0 ? INFINITY : x[best] - x[second];
  return best;
}

/* ------------------------------------------------------------ tier 2 */

/* The first n tokens of plan item w as one B = 1 step on both oracles
 * (their K/V written); returns o's logits of its last token (malloc'd). */
static float *oracle_item(oracle *o, oracle *o32, const poot_scheduler_work *w, int32_t n) {
  const int64_t W = o->info.max_seq_len / o->info.block_size;
  int32_t tok[64], pos = (int32_t)w->pos, table[64], write[64];
  assert_true(n <= 64 && W <= 64);
  for (int32_t j = 0; j < n; j++) {
    tok[j] = w->tokens[j];
    write[j] = (int32_t)poot_kv_pool_seq_row(o->pool_of, w->seq, w->pos + j);
  }
  for (int64_t j = 0; j < W; j++) table[j] = j < w->n_blocks ? w->blocks[j] : o->info.num_blocks;
  free(oracle_step(o32, 1, n, tok, &pos, table, write));
  return oracle_step(o, 1, n, tok, &pos, table, write);
}

static void vs_oracle(poot_dtype kv, bool demo) {
  poot_model *m = model_or_skip(demo, "vs oracle");
  const poot_model_config *c = poot_model_get_config(m);
  const int64_t V = c->vocab_size;
  poot_batch_options bo = small_options(4, 32, 4, 40, false);
  bo.token_budget = 8; /* prefill cut by the budget too: items of 1..4 tokens */
  bo.kv_dtype = kv;
  rig r;
  rig_open(&r, m, &bo);
  oracle o = {.m = m}, o32 = {.m = m}; /* o32: an f32 cache fed the same ids */
  poot_batch_get_info(r.b, &o.info);
  assert_int_equal(o.info.kv_dtype, kv);
  o32.info = o.info;
  o32.info.kv_dtype = POOT_DTYPE_F32;
  assert_int_equal(o.info.num_blocks, 40);
  const int64_t W = o.info.max_seq_len / o.info.block_size;
  float *dev_logits = calloc((size_t)(POOT__BATCH_STEP_ROWS(4) * V), sizeof *dev_logits);
  poot__batch_set_decode_logits(r.b, dev_logits);
  enum { NREQ = 3 };
  const int64_t lens[NREQ] = {5, 9, 3};
  int32_t prompts[NREQ][16];
  for (int i = 0; i < NREQ; i++) {
    make_prompt((uint32_t)(100 + i), V, prompts[i], lens[i]);
    POOT_ASSERT_OK(poot_batch_submit(
        r.b, &(poot_batch_request){prompts[i], lens[i], 8, (uint64_t)i, NULL, NULL, NULL, 0}));
  }
  poot_scheduler *sched = poot_batch_scheduler(r.b);
  const poot_kv_pool *pool = poot_batch_pool(r.b);
  o.pool_of = o32.pool_of = pool;
  int decode_rows = 0, ragged_steps = 0, gapped_tables = 0, prefill_ids = 0, tail_rows = 0,
      mixed_steps = 0, tails_checked = 0;
  double worst = 0, worst_ratio = 0;
  while (poot_batch_busy(r.b)) {
    const poot_scheduler_plan *plan;
    POOT_ASSERT_OK(poot_scheduler_step_plan(sched, &plan));
    assert_true(plan->n_work > 0);
    int32_t ids[4];
    bool nf[4];
    POOT_ASSERT_OK(poot_batch_run_plan(r.b, plan, ids, nf, NULL));
    poot_scheduler_result res[4];
    /* The oracle, over the same slots: each longer item's tokens before its
     * rows as one B = 1 step, then the runner's rows as one B = n step
     * (one-token items and the tails of longer items, in the runner's
     * order), then each longer item with rows again as one B = 1 step of
     * all its tokens (the causal prefill: the rows' K/V written again, the
     * same values, and its last token's logits for the tail's last row). */
    int32_t items[64], offs[64], n_rows = poot__batch_logits_rows(r.b, items, offs);
    int32_t per_item[4] = {0};
    for (int32_t i = 0; i < n_rows; i++) per_item[items[i]]++;
    int32_t tok[64], pos[64], table[64 * 8], write[64];
    float *chunk_ref[4] = {0}, margins[4] = {0};
    for (int32_t i = 0; i < plan->n_work; i++) {
      const poot_scheduler_work *w = &plan->work[i];
      for (int32_t j = 1; j < w->n_blocks; j++)
        if (w->blocks[j] != w->blocks[j - 1] + 1) gapped_tables++;
      if (w->n_tokens == 1 || w->n_tokens == per_item[i]) continue;
      chunk_ref[i] = oracle_item(&o, &o32, w, w->n_tokens - per_item[i]);
      res[i] = (poot_scheduler_result){.token = (int32_t)argmax(chunk_ref[i], V, &margins[i])};
    }
    bool row_last[4] = {false}; /* the item's last token ran as a row */
    if (n_rows > 0) {
      for (int32_t i = 0; i < n_rows; i++) {
        const poot_scheduler_work *w = &plan->work[items[i]];
        tok[i] = w->tokens[offs[i]];
        pos[i] = (int32_t)(w->pos + offs[i]);
        for (int64_t j = 0; j < W; j++)
          table[i * W + j] = j < w->n_blocks ? w->blocks[j] : o.info.num_blocks;
        write[i] = (int32_t)poot_kv_pool_seq_row(pool, w->seq, w->pos + offs[i]);
        if (i > 0 && pos[i] != pos[0]) ragged_steps++;
      }
      bool tail = false, other = false;
      for (int32_t i = 0; i < plan->n_work; i++) {
        tail = tail || per_item[i] > 1;
        other = other || per_item[i] == 1;
        tail_rows += per_item[i] > 1 ? per_item[i] : 0;
      }
      mixed_steps += tail && other;
      float *ref = oracle_step(&o, n_rows, 1, tok, pos, table, write);
      float *ref32 = oracle_step(&o32, n_rows, 1, tok, pos, table, write);
      for (int32_t i = 0; i < plan->n_work; i++)
        if (per_item[i] > 0 && plan->work[i].n_tokens > 1) {
          free(chunk_ref[i]);
          chunk_ref[i] = oracle_item(&o, &o32, &plan->work[i], plan->work[i].n_tokens);
        }
      for (int32_t i = 0; i < n_rows; i++) {
        const poot_scheduler_work *w = &plan->work[items[i]];
        const float *x = ref + i * V, *y = dev_logits + i * V;
        /* With an f16 cache, the tolerance term of docs/verification.md "The
         * f16 cache" (0 for f32: both oracles agree). */
        double tol = poot_verify_tolerance(c, o.info.max_seq_len, x, V, true) +
                     poot_verify_kv16_term(x, ref32 + i * V, (size_t)V);
        double d = 0, dc = 0;
        for (int64_t j = 0; j < V; j++) d = fmax(d, fabs((double)x[j] - y[j]));
        worst = fmax(worst, d);
        worst_ratio = fmax(worst_ratio, d / tol);
        if (d > tol) fail_msg("batched row %d: |device - oracle| %.3g > tol %.3g", i, d, tol);
        if (offs[i] != w->n_tokens - 1) continue;
        row_last[items[i]] = true;
        res[items[i]] = (poot_scheduler_result){.token = (int32_t)argmax(x, V, NULL)};
        if (chunk_ref[items[i]]) { /* a tail's last row = the causal prefill, both sides */
          for (int64_t j = 0; j < V; j++) {
            dc = fmax(dc, fabs((double)chunk_ref[items[i]][j] - x[j]));
            dc = fmax(dc, fabs((double)chunk_ref[items[i]][j] - y[j]));
          }
          if (dc > tol) fail_msg("tail row %d: |rows - prefill step| %.3g > tol %.3g", i, dc, tol);
          tails_checked++;
        }
        if (w->emits) assert_int_equal(ids[items[i]], res[items[i]].token);
        decode_rows++;
      }
      free(ref);
      free(ref32);
    }
    for (int32_t i = 0; i < plan->n_work; i++) {
      if (!chunk_ref[i]) continue;
      if (plan->work[i].emits && !row_last[i]) {
        double tol = poot_verify_tolerance(c, o.info.max_seq_len, chunk_ref[i], V, true);
        if (ids[i] != res[i].token && margins[i] > 2 * tol)
          fail_msg("prefill item %d: device id %d, oracle %d (margin %.3g)", i, ids[i],
                   res[i].token, margins[i]);
        prefill_ids++;
      }
      free(chunk_ref[i]);
    }
    POOT_ASSERT_OK(poot_scheduler_step_done(sched, res, plan->n_work));
  }
  printf(
      "tier 2 (%s K/V): %d decode rows, largest |device - oracle| %.3g (%.2f of tol), %d ragged "
      "steps, %d table gaps, %d prefill ids; %d tail rows, %d steps with a tail beside another "
      "sequence's row, %d tails' last rows = the prefill step\n",
      poot_dtype_name(kv), decode_rows, worst, worst_ratio, ragged_steps, gapped_tables,
      prefill_ids, tail_rows, mixed_steps, tails_checked);
  assert_true(decode_rows >= 15);
  assert_true(tail_rows >= 3);
  assert_true(mixed_steps > 0);
  assert_true(tails_checked > 0);
  assert_true(ragged_steps > 0);
  assert_true(gapped_tables > 0);
  poot_scheduler_request_info info;
  int done = 0;
  while (poot_batch_take_finished(r.b, &info)) {
    assert_int_equal(info.finish, POOT_SCHEDULER_FINISH_LENGTH);
    assert_int_equal(info.n_generated, 8);
    done++;
  }
  assert_int_equal(done, NREQ);
  poot__batch_set_decode_logits(r.b, NULL);
  free(dev_logits);
  oracle_deinit(&o);
  oracle_deinit(&o32);
  rig_close(&r);
  poot_model_destroy(m);
}

static void test_vs_oracle(void **state) {
  (void)state;
  vs_oracle(POOT_DTYPE_F32, false);
}

/* The default paged K/V: f16 rows, scattered as 32-bit words of two halves. */
static void test_vs_oracle_f16(void **state) {
  (void)state;
  vs_oracle(POOT_DTYPE_F16, false);
}

/* A q8_0 pool (the demo model: head_dim 32, stories260K's 8 is no block):
 * rows quantized as they are scattered, read in place by attention. The
 * oracle quantizes identically; the tolerance takes the same term as f16's
 * (a fresh element on the neighbouring code, docs/verification.md). */
static void test_vs_oracle_q8_0(void **state) {
  (void)state;
  vs_oracle(POOT_DTYPE_Q8_0, true);
}

/* ------------------------------------------------------------ invariance */

typedef struct prompt_set {
  int n;
  int32_t ids[64][40];
  poot_batch_prompt p[64];
} prompt_set;

static void make_prompts(prompt_set *s, int n, int64_t vocab, int max_len, int max_new) {
  s->n = n;
  for (int i = 0; i < n; i++) {
    int64_t len = 1 + (int64_t)((i * 7 + 3) % max_len);
    make_prompt((uint32_t)(1000 + i), vocab, s->ids[i], len);
    s->p[i] =
        (poot_batch_prompt){s->ids[i], len, max_new - i % 4, NULL, NULL, NULL, 0}; /* ragged ends */
  }
}

/* Generates every prompt alone on one runner (fresh pool contents per
 * request do not matter: no prefix cache). */
static void generate_alone(rig *r, const prompt_set *s, poot_batch_output *outs) {
  for (int i = 0; i < s->n; i++)
    POOT_ASSERT_OK(poot_batch_generate(r->b, &s->p[i], 1, NULL, &outs[i]));
}

static void expect_same(const poot_batch_output *a, const poot_batch_output *b, int n,
                        const char *what) {
  for (int i = 0; i < n; i++) {
    assert_int_equal(a[i].finish, b[i].finish);
    if (a[i].n != b[i].n || memcmp(a[i].ids, b[i].ids, (size_t)a[i].n * 4) != 0) {
      int j = 0;
      while (j < a[i].n && j < b[i].n && a[i].ids[j] == b[i].ids[j]) j++;
      fail_msg("%s: request %d differs at id %d", what, i, j);
    }
  }
}

static void invariance(bool demo, int n, int max_len, int max_new, bool with_b3) {
  poot_model *m = model_or_skip(demo, "invariance");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  static prompt_set s;
  make_prompts(&s, n, V, max_len, max_new);
  poot_batch_options bo = small_options(1, 64, 16, 64, false);
  static poot_batch_output alone[64], b8[64], b3[64];
  rig r;
  rig_open(&r, m, &bo);
  uint64_t t0 = poot_time_ns();
  generate_alone(&r, &s, alone);
  double t_alone = (double)(poot_time_ns() - t0) / 1e9;
  rig_close(&r);

  bo.max_batch = 8;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_prepare(r.b));
  poot_exec_stats es;
  poot_exec_stats_get(r.ex, &es);
  const uint64_t captures = es.captures;
  t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_batch_generate(r.b, s.p, (size_t)n, NULL, b8));
  double t8 = (double)(poot_time_ns() - t0) / 1e9;
  poot_batch_stats st;
  poot_batch_get_stats(r.b, &st);
  poot_batch_info info;
  poot_batch_get_info(r.b, &info);
  assert_int_equal(info.n_sizes, 4);
  int ran = 0; /* decode sizes that ran */
  for (int k = 0; k < info.n_sizes; k++) ran += st.per_size[k] > 0;
  assert_true(ran >= 2);
  assert_true(st.per_size[info.n_sizes - 1] > 0);
  assert_true(st.padded_rows > 0);
  poot_exec_stats_get(r.ex, &es);
  assert_int_equal(captures, (uint64_t)info.n_sizes + 1); /* 4 decode sizes, the chunk */
  assert_int_equal(es.captures, captures);                /* none added by any step */
  printf(
      "invariance (%s): %d prompts alone %.2f s, at max_batch 8 %.2f s (%llu decode replays, "
      "%llu rows, %llu padded; replays at B = 1, 2, 4, 8: %llu %llu %llu %llu)\n",
      demo ? "demo" : "stories260K", n, t_alone, t8, (unsigned long long)st.decode_replays,
      (unsigned long long)st.decode_rows, (unsigned long long)st.padded_rows,
      (unsigned long long)st.per_size[0], (unsigned long long)st.per_size[1],
      (unsigned long long)st.per_size[2], (unsigned long long)st.per_size[3]);
  rig_close(&r);
  if (g_simd_cpu || g_rows8) {
    expect_same(alone, b8, n, "max_batch 8");
  } else { /* the GEMM from 5 rows: reported, not required */
    int differ = 0;
    for (int i = 0; i < n; i++)
      differ += alone[i].n != b8[i].n || memcmp(alone[i].ids, b8[i].ids, (size_t)alone[i].n * 4);
    printf("invariance at max_batch 8 on %s: %d of %d requests differ from alone\n", g_spec, differ,
           n);
  }

  if (with_b3) {
    bo.max_batch = g_simd_cpu ? 3 : 4; /* elsewhere invariant up to 4 rows */
    rig_open(&r, m, &bo);
    POOT_ASSERT_OK(poot_batch_generate(r.b, s.p, (size_t)n, NULL, b3));
    rig_close(&r);
    expect_same(alone, b3, n, g_simd_cpu ? "max_batch 3" : "max_batch 4");
  }
  for (int i = 0; i < n; i++) assert_int_equal(alone[i].n, s.p[i].max_new_tokens);

  /* The contiguous driver (the same K/V type, f16) on the first prompts
   * gives the same. */
  poot_device *dev;
  poot_executor *ex;
  dev = g_dev;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64;
  dopt.prefill_chunk = 16;
  dopt.kv_dtype = info.kv_dtype;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  for (int i = 0; i < 4 && i < n; i++) {
    POOT_ASSERT_OK(poot_driver_reset(d));
    poot_token ids[40], next;
    for (int64_t j = 0; j < s.p[i].n; j++) ids[j] = s.ids[i][j];
    POOT_ASSERT_OK(poot_driver_feed(d, ids, (size_t)s.p[i].n, &next, NULL));
    for (int64_t j = 0; j < alone[i].n; j++) {
      assert_int_equal(next, alone[i].ids[j]);
      poot_token t = next;
      if (j + 1 < alone[i].n) POOT_ASSERT_OK(poot_driver_feed(d, &t, 1, &next, NULL));
    }
  }
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_batch_outputs_free(alone, (size_t)n);
  poot_batch_outputs_free(b8, (size_t)n);
  if (with_b3) poot_batch_outputs_free(b3, (size_t)n);
  poot_model_destroy(m);
}

static void test_invariance_stories(void **state) {
  (void)state;
  invariance(false, 16, 40, 8, true);
}

static void test_invariance_demo(void **state) {
  (void)state;
  invariance(true, 6, 20, 5, false);
}

/* ------------------------------------------------------------ prefix reuse */

static void test_prefix_reuse(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "prefix reuse");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  int32_t a[40], b2[40];
  make_prompt(7, V, a, 40);
  memcpy(b2, a, 32 * sizeof *a);
  make_prompt(8, V, b2 + 32, 8); /* its own last 8 ids (the first is BOS) */
  poot_batch_prompt pa = {a, 40, 6, NULL, NULL, NULL, 0}, pb = {b2, 40, 6, NULL, NULL, NULL, 0};
  poot_batch_options bo = small_options(4, 64, 16, 16, true);
  poot_batch_output ra, rb, na, nb;
  rig r;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, &pa, 1, NULL, &ra));
  POOT_ASSERT_OK(poot_batch_generate(r.b, &pb, 1, NULL, &rb));
  assert_int_equal(ra.reused_tokens, 0);
  assert_int_equal(ra.prefill_tokens, 40);
  assert_int_equal(rb.reused_tokens, 32); /* two blocks of 16 */
  assert_int_equal(rb.prefill_tokens, 8); /* only its own ids */
  poot_batch_stats st;
  poot_batch_get_stats(r.b, &st);
  /* Prefill tokens fed to the device: 40 + 8 (+ the ids fed back). */
  assert_int_equal(st.prefill_tokens, 48);
  rig_close(&r);
  bo.no_prefix_cache = true;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, &pa, 1, NULL, &na));
  POOT_ASSERT_OK(poot_batch_generate(r.b, &pb, 1, NULL, &nb));
  assert_int_equal(nb.reused_tokens, 0);
  assert_int_equal(nb.prefill_tokens, 40);
  rig_close(&r);
  expect_same(&ra, &na, 1, "first prompt, reuse on and off");
  expect_same(&rb, &nb, 1, "second prompt, reuse on and off");
  poot_batch_outputs_free(&ra, 1);
  poot_batch_outputs_free(&rb, 1);
  poot_batch_outputs_free(&na, 1);
  poot_batch_outputs_free(&nb, 1);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ preemption */

static void test_preemption(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "preemption");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  static prompt_set s;
  make_prompts(&s, 8, V, 12, 14);
  s.p[7].n = 30; /* with 14 new ids: past the pool (24 tokens) → CAPACITY at submit */
  make_prompt(77, V, s.ids[7], 30);
  /* 6 blocks of 4: 24 tokens for four sequences of up to 26 */
  poot_batch_options bo = small_options(4, 32, 4, 6, true);
  rig r;
  rig_open(&r, m, &bo);
  poot_batch_output outs[8];
  POOT_ASSERT_OK(poot_batch_generate(r.b, s.p, 8, NULL, outs));
  poot_scheduler_stats ss;
  poot_scheduler_get_stats(poot_batch_scheduler(r.b), &ss);
  printf("preemption: %llu preemptions, %llu steps\n", (unsigned long long)ss.preemptions,
         (unsigned long long)ss.steps);
  assert_true(ss.preemptions > 0);
  int length = 0, capacity = 0;
  for (int i = 0; i < 8; i++) {
    if (outs[i].finish == POOT_SCHEDULER_FINISH_LENGTH) {
      assert_int_equal(outs[i].n, s.p[i].max_new_tokens);
      length++;
    } else {
      assert_int_equal(outs[i].finish, POOT_SCHEDULER_FINISH_CAPACITY);
      capacity++;
    }
  }
  assert_int_equal(outs[7].finish, POOT_SCHEDULER_FINISH_CAPACITY);
  assert_int_equal(outs[7].n, 0);
  assert_true(length >= 4);
  poot_kv_pool_stats ps;
  poot_kv_pool_get_stats(poot_batch_pool(r.b), &ps);
  assert_int_equal(ps.blocks_free, 6);
  assert_int_equal(ps.blocks_in_use, 0);
  assert_int_equal(ps.seqs_open, 0);
  assert_false(poot_batch_busy(r.b));
  rig_close(&r);
  poot_batch_outputs_free(outs, 8);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ sampling */

/* Sampled requests (llama.cpp's chain at two seeds, a temperature-only draw
 * over the whole vocabulary, a greedy one with a logit bias) beside greedy
 * ones: each gives the same ids alone and batched at max_batch 4, and the
 * ids of the contiguous driver sampling with the same parameters and seed
 * (the driver's state counter and the runner's {generated, 0} agree). */
static void test_sampling(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "sampling");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { N = 6, NEW = 8 };
  poot_sampling_params sp[4];
  for (int i = 0; i < 4; i++) poot_sampling_params_init(&sp[i]);
  sp[0].seed = 42; /* temp 0.8, top-k 40, top-p 0.95, min-p 0.05 */
  sp[1].seed = 7;
  sp[2].top_k = 0, sp[2].top_p = 1.0f, sp[2].min_p = 0.0f,
  sp[2].seed = 3; /* the whole vocabulary */
  sp[2].temperature = 1.0f;
  sp[3].temperature = 0.0f, sp[3].n_bias = 1; /* greedy with a bias: a sampled kind */
  sp[3].bias[0] = (poot_sampling_bias){.token = 261, .bias = 2.0f};
  static int32_t ids[N][32];
  poot_batch_prompt p[N];
  for (int i = 0; i < N; i++) {
    int64_t len = 3 + (i * 5) % 17;
    make_prompt((uint32_t)(500 + i), V, ids[i], len);
    p[i] = (poot_batch_prompt){ids[i], len, NEW, i < 4 ? &sp[i] : NULL, NULL, NULL, 0};
  }
  poot_batch_options bo = small_options(1, 64, 16, 32, false);
  poot_batch_output alone[N], together[N];
  rig r;
  rig_open(&r, m, &bo);
  for (int i = 0; i < N; i++) POOT_ASSERT_OK(poot_batch_generate(r.b, &p[i], 1, NULL, &alone[i]));
  rig_close(&r);
  bo.max_batch = 4;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, p, N, NULL, together));
  poot_batch_info info;
  poot_batch_get_info(r.b, &info);
  rig_close(&r);
  expect_same(alone, together, N, "sampled, max_batch 4");
  /* The sampled runs differ from greedy and between seeds. */
  assert_true(memcmp(alone[0].ids, alone[1].ids, NEW * 4) != 0);
  /* The driver, same K/V type, same parameters. */
  poot_device *dev;
  poot_executor *ex;
  dev = g_dev;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64;
  dopt.prefill_chunk = 16;
  dopt.kv_dtype = info.kv_dtype;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  for (int i = 0; i < 4; i++) {
    poot_token pt[32];
    for (int64_t j = 0; j < p[i].n; j++) pt[j] = ids[i][j];
    poot_driver_generate_options go = poot_driver_generate_options_default();
    go.max_new_tokens = NEW;
    go.ignore_stop = true;
    go.no_text = true;
    go.sampling = &sp[i];
    poot_driver_generate_result res;
    POOT_ASSERT_OK(poot_driver_generate_ids(d, pt, (size_t)p[i].n, &go, NULL, NULL, &res));
    assert_int_equal(res.n_ids, NEW);
    for (int j = 0; j < NEW; j++)
      if (res.ids[j] != alone[i].ids[j])
        fail_msg("sampler %d: id %d: driver %d, runner %d", i, j, res.ids[j], alone[i].ids[j]);
    poot_driver_generate_result_deinit(&res);
  }
  printf("sampling: 4 sampled and 2 greedy requests alone = batched = the driver's ids\n");
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_batch_outputs_free(alone, N);
  poot_batch_outputs_free(together, N);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ penalties, grammars */

/* Penalized and grammar-constrained requests (greedy with llama.cpp's
 * three penalties over a window of 6, the presence one a reward; the
 * llama.cpp chain with penalties over the whole history and ignore_eos; a
 * grammar alone, greedy; a grammar that ends early with the chain and
 * penalties) beside two greedy ones: each gives
 * the same ids alone (the whole-history one reusing a prompt block it
 * never fed), batched at max_batch 4 in a pool small enough to
 * preempt (the penalty windows come from the histories and the matchers
 * keep their state, so a recomputed request goes on as it was), and the
 * contiguous driver's ids (its counts state, its grammar path) with the
 * same parameters, grammar and seed, stopping where it stops. */
static void test_penalties_grammar(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "penalties and grammars");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { N = 6, NEW = 10 };
  poot_sampling_params sp[4];
  for (int i = 0; i < 4; i++) poot_sampling_params_init(&sp[i]);
  /* a negative presence penalty (a reward; stories260K's logits are far
   * apart, -3 changes nothing) makes the window's ids win, so which ids are
   * in it and how often (the window of 6 moving) decides the output */
  sp[0].temperature = 0.0f, sp[0].repeat_penalty = 1.5f, sp[0].presence_penalty = -30.0f,
  sp[0].frequency_penalty = 0.5f, sp[0].repeat_last_n = 6;
  sp[1].seed = 11, sp[1].repeat_penalty = 1.2f, sp[1].frequency_penalty = 0.5f,
  sp[1].repeat_last_n = -1, sp[1].ignore_eos = true; /* the end ids banned, as the driver does */
  sp[3].seed = 5, sp[3].presence_penalty = 0.7f, sp[3].repeat_last_n = 8;
  static const char g_long[] = "root ::= [ a-z]{4,60}\n", g_short[] = "root ::= [ a-z]{2,12}\n",
                    g_word[] = "root ::= [a-m]+ \" \" [n-z ]{1,40}\n";
  poot_grammar *gl = NULL, *gs = NULL, *gw = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(g_long, sizeof g_long - 1, NULL, &gl));
  POOT_ASSERT_OK(poot_grammar_compile(g_short, sizeof g_short - 1, NULL, &gs));
  POOT_ASSERT_OK(poot_grammar_compile(g_word, sizeof g_word - 1, NULL, &gw));
  static int32_t ids[N][32];
  poot_batch_prompt p[N];
  for (int i = 0; i < N; i++) {
    int64_t len = 4 + (i * 7) % 19;
    make_prompt((uint32_t)(700 + i), V, ids[i], len);
    p[i] = (poot_batch_prompt){ids[i],
                               len,
                               NEW,
                               i < 2    ? &sp[i]
                               : i == 3 ? &sp[3]
                                        : NULL,
                               i == 2   ? gl
                               : i == 3 ? gs
                               : i == 5 ? gw /* a third grammar row beside 2 and 3 */
                                        : NULL,
                               NULL,
                               0};
  }
  /* request 1 (penalties over the whole history) starts with request 0's
   * prompt, a block it reuses alone: ids it never fed count in its window */
  memcpy(ids[1], ids[0], 4 * sizeof ids[0][0]);
  poot_batch_output alone[N], together[N];
  rig r;
  poot_batch_options bo = small_options(1, 64, 4, 64, true);
  rig_open(&r, m, &bo);
  for (int i = 0; i < N; i++) POOT_ASSERT_OK(poot_batch_generate(r.b, &p[i], 1, NULL, &alone[i]));
  rig_close(&r);
  assert_int_equal(alone[1].reused_tokens, 4);
  bo = small_options(4, 64, 4, 14, true); /* 56 rows for four sequences of up to 32 */
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, p, N, NULL, together));
  poot_scheduler_stats ss;
  poot_scheduler_get_stats(poot_batch_scheduler(r.b), &ss);
  poot_batch_stats bs;
  poot_batch_get_stats(r.b, &bs);
  /* the grammar rows' masks filled on the mask workers, several in a step */
  assert_true(bs.grammar_masks_max >= 2);
  assert_true(bs.grammar_masks >= (uint64_t)(alone[2].n + alone[3].n + alone[5].n));
  poot_batch_info info;
  poot_batch_get_info(r.b, &info);
  rig_close(&r);
  assert_true(ss.preemptions > 0);
  expect_same(alone, together, N, "penalties and grammars, max_batch 4, preempted");
  /* The penalties change the greedy ids; the short grammar ends early. */
  assert_true(alone[3].n < NEW);
  poot_executor *ex;
  POOT_ASSERT_OK(poot_engine_create(g_dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64;
  dopt.prefill_chunk = 4;
  dopt.kv_dtype = info.kv_dtype;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  for (int i = 0; i < 4; i++) {
    poot_token pt[32];
    for (int64_t j = 0; j < p[i].n; j++) pt[j] = ids[i][j];
    poot_driver_generate_options go = poot_driver_generate_options_default();
    go.max_new_tokens = NEW;
    go.ignore_stop = true;
    go.no_text = true;
    go.sampling = p[i].sampling;
    go.grammar = p[i].grammar;
    poot_driver_generate_result res;
    POOT_ASSERT_OK(poot_driver_generate_ids(d, pt, (size_t)p[i].n, &go, NULL, NULL, &res));
    if ((int64_t)res.n_ids != alone[i].n)
      fail_msg("request %d: the driver gave %zu ids, the runner %lld", i, res.n_ids,
               (long long)alone[i].n);
    for (int64_t j = 0; j < alone[i].n; j++)
      if (res.ids[j] != alone[i].ids[j])
        fail_msg("request %d: id %lld: driver %d, runner %d", i, (long long)j, res.ids[j],
                 alone[i].ids[j]);
    poot_driver_generate_result_deinit(&res);
  }
  /* Without its penalties request 0 is request 0 greedy: other ids. */
  poot_batch_prompt g0 = {ids[0], p[0].n, NEW, NULL, NULL, NULL, 0};
  poot_batch_output plain;
  bo = small_options(1, 64, 4, 64, false);
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, &g0, 1, NULL, &plain));
  rig_close(&r);
  assert_true(memcmp(plain.ids, alone[0].ids, NEW * 4) != 0);
  printf(
      "penalties and grammars: 2 penalized, 3 grammar (one ending after %lld ids) and 1 "
      "greedy requests alone = batched with %llu preemptions (%llu masks on the workers, up to "
      "%llu in a step; %.1f us of sampled-row host work a step) = the driver's ids\n",
      (long long)alone[3].n, (unsigned long long)ss.preemptions,
      (unsigned long long)bs.grammar_masks, (unsigned long long)bs.grammar_masks_max,
      bs.steps ? (double)bs.sample_host_ns / 1e3 / (double)bs.steps : 0.0);
  poot_batch_outputs_free(&plain, 1);
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_batch_outputs_free(alone, N);
  poot_batch_outputs_free(together, N);
  poot_grammar_destroy(gl);
  poot_grammar_destroy(gs);
  poot_grammar_destroy(gw);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ logprobs */

/* The largest |a − b| over two runs' logprobs (the chosen id's and the
 * top-n), failing when the ids, counts or top-n ids differ. */
static float probs_diff(const poot_sampling_result *a, const poot_sampling_result *b, int64_t n,
                        const char *what) {
  float worst = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    if (a[j].token != b[j].token || a[j].n_top != b[j].n_top)
      fail_msg("%s: id %lld: token %d / %d, n_top %u / %u", what, (long long)j, a[j].token,
               b[j].token, a[j].n_top, b[j].n_top);
    float d = fabsf(a[j].logprob - b[j].logprob);
    worst = d > worst ? d : worst;
    for (uint32_t t = 0; t < a[j].n_top; t++) {
      if (a[j].top[t].token != b[j].top[t].token)
        fail_msg("%s: id %lld: top %u is %d / %d", what, (long long)j, t, a[j].top[t].token,
                 b[j].top[t].token);
      d = fabsf(a[j].top[t].logprob - b[j].top[t].logprob);
      worst = d > worst ? d : worst;
    }
  }
  return worst;
}

/* Logprobs of a greedy row (top 5), a sampled row (llama.cpp's chain, top
 * 20) and a temperature-only row (top 1) beside a greedy row without them,
 * with f32 K/V: alone (max_batch 1) and batched (max_batch 4) they are
 * bit-identical (the batch-invariant target); against the B = 1 driver
 * (contiguous K/V where the runner's are paged: the same math through other
 * kernels) the ids and top-n ids are equal and the values within 4·τ, τ the
 * tier-2 tolerance of a logit (docs/verification.md; poot_verify_tolerance
 * with rms taken as 1, which only makes it smaller): each run's logits are
 * within τ of the oracle's, so 2·τ of each other, and a logprob x_i − lse(x)
 * moves by at most |Δx_i| + max|Δx|. (With the default f16 K/V the rounding
 * of a K/V row to f16 can differ between the two by an f16 ulp: 8.3e-4 apart
 * on lavapipe, the f16 cache term of docs/verification.md, not checked here.) */
static void test_logprobs(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "logprobs");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { N = 4, NEW = 8 };
  poot_sampling_params sp[3];
  for (int i = 0; i < 3; i++) poot_sampling_params_init(&sp[i]);
  sp[0].temperature = 0.0f, sp[0].n_probs = 5;
  sp[1].seed = 11, sp[1].n_probs = POOT_SAMPLING_MAX_PROBS, sp[1].n_bias = 1;
  sp[1].bias[0] = (poot_sampling_bias){.token = 261, .bias = 2.0f};
  sp[2].top_k = 0, sp[2].top_p = 1.0f, sp[2].min_p = 0.0f, sp[2].temperature = 1.0f;
  sp[2].seed = 5, sp[2].n_probs = 1;
  static int32_t ids[N][32];
  poot_batch_prompt p[N];
  for (int i = 0; i < N; i++) {
    int64_t len = 2 + (i * 7) % 19;
    make_prompt((uint32_t)(900 + i), V, ids[i], len);
    p[i] = (poot_batch_prompt){ids[i], len, NEW, i < 3 ? &sp[i] : NULL, NULL, NULL, 0};
  }
  poot_batch_options bo = small_options(1, 64, 16, 32, false);
  bo.kv_dtype = POOT_DTYPE_F32;
  poot_batch_output alone[N], together[N];
  rig r;
  rig_open(&r, m, &bo);
  for (int i = 0; i < N; i++) POOT_ASSERT_OK(poot_batch_generate(r.b, &p[i], 1, NULL, &alone[i]));
  rig_close(&r);
  bo.max_batch = 4;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, p, N, NULL, together));
  poot_batch_info info;
  poot_batch_get_info(r.b, &info);
  rig_close(&r);
  expect_same(alone, together, N, "logprobs, max_batch 4");
  /* Six copies of the biased one at max_batch 8: where the B = 8 entry of
   * that kind does not compile (lavapipe: 33 push offsets of 32), the rows
   * run as two halves through the B = 4 entry; the same ids and logprobs. */
  enum { N8 = 6 };
  poot_batch_prompt p8[N8];
  poot_batch_output eight[N8];
  for (int i = 0; i < N8; i++) p8[i] = p[1];
  bo.max_batch = 8;
  rig_open(&r, m, &bo);
  POOT_ASSERT_OK(poot_batch_generate(r.b, p8, N8, NULL, eight));
  poot_batch_stats bs;
  poot_batch_get_stats(r.b, &bs);
  rig_close(&r);
  for (int i = 0; i < N8; i++) {
    expect_same(&alone[1], &eight[i], 1, "logprobs with a bias, max_batch 8");
    if (memcmp(alone[1].probs, eight[i].probs, (size_t)alone[1].n * sizeof *alone[1].probs))
      fail_msg("logprobs with a bias, max_batch 8, copy %d: alone and batched differ", i);
  }
  printf(
      "logprobs: 6 rows of a biased kind at max_batch 8 = alone (%llu replays of 8 rows, "
      "%llu of 4)\n",
      (unsigned long long)bs.per_size[3], (unsigned long long)bs.per_size[2]);
  poot_batch_outputs_free(eight, N8);
  assert_null(alone[3].probs);
  assert_null(together[3].probs);
  for (int i = 0; i < 3; i++) {
    assert_non_null(together[i].probs);
    assert_int_equal(together[i].probs[0].n_top, (uint32_t)sp[i].n_probs);
    for (int64_t j = 0; j < together[i].n; j++) {
      const poot_sampling_result *q = &together[i].probs[j];
      assert_int_equal(q->token, together[i].ids[j]);
      assert_true(q->logprob <= 0.0f && isfinite(q->logprob));
      for (uint32_t t = 1; t < q->n_top; t++)
        assert_true(q->top[t].logprob <= q->top[t - 1].logprob);
      if (i == 0) /* greedy: the chosen id is the most likely */
        assert_true(q->top[0].token == q->token && q->top[0].logprob == q->logprob);
    }
    if (memcmp(alone[i].probs, together[i].probs, (size_t)alone[i].n * sizeof *alone[i].probs))
      fail_msg("logprobs %d: alone and batched differ", i);
  }
  /* The driver, same K/V type, same parameters. */
  poot_executor *ex;
  POOT_ASSERT_OK(poot_engine_create(g_dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64;
  dopt.prefill_chunk = 16;
  dopt.kv_dtype = info.kv_dtype;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  const double tol =
      4 * poot_verify_tolerance(poot_model_get_config(m), info.max_seq_len, NULL, 0, true);
  float worst = 0.0f;
  for (int i = 0; i < 3; i++) {
    poot_token pt[32];
    for (int64_t j = 0; j < p[i].n; j++) pt[j] = ids[i][j];
    poot_driver_generate_options go = poot_driver_generate_options_default();
    go.max_new_tokens = NEW;
    go.ignore_stop = true;
    go.no_text = true;
    go.sampling = &sp[i];
    poot_driver_generate_result res;
    POOT_ASSERT_OK(poot_driver_generate_ids(d, pt, (size_t)p[i].n, &go, NULL, NULL, &res));
    assert_int_equal(res.n_ids, together[i].n);
    assert_non_null(res.probs);
    float w = probs_diff(res.probs, together[i].probs, together[i].n, "driver vs batched");
    worst = w > worst ? w : worst;
    poot_driver_generate_result_deinit(&res);
  }
  printf(
      "logprobs (f32 K/V): greedy and sampled rows alone = batched (bit for bit); the "
      "driver's within 4·tau = %.3g (at most %.3g apart)\n",
      tol, (double)worst);
  assert_true(worst <= tol);
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_batch_outputs_free(alone, N);
  poot_batch_outputs_free(together, N);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ input rows */

/* Rows of the token embedding table (stories260K's is f32) at positions
 * [5, 13) of a prompt whose ids there are 0 give the ids of the prompt with
 * those tokens (the rows equal their gathers); two such requests with
 * other rows at the same placeholder ids share no block (salted); a row at
 * the last index, of another width or twice at one index is refused; a
 * request with rows cancelled before it runs frees them. */
static void test_input_rows(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "input rows");
  const poot_model_config *c = poot_model_get_config(m);
  const int64_t V = c->vocab_size, H = c->hidden_size, N = 30, NEW = 6;
  poot_model_step step = {.batch = 1, .tokens = 1, .cap = 4};
  poot_model_trace_options to = poot_model_trace_options_for(m);
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(c, &step, &to, &g));
  const poot_region *root = poot_graph_root(g);
  poot_tensor table = {0};
  for (uint32_t i = 0; i < root->num_nodes && !table.data; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    poot_weight_ref ref;
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    POOT_ASSERT_OK(
        poot_weight_map_find(poot_model_get_weight_map(m), nd->weight.key, nd->weight.name, &ref));
    if (ref.role != POOT_WEIGHT_TOKEN_EMBD) continue;
    assert_int_equal(poot_graph_value_type(g, nd->results[0])->dtype, POOT_DTYPE_F32);
    POOT_ASSERT_OK(
        poot_model_weight_tensor(m, &nd->weight, poot_graph_value_type(g, nd->results[0]), &table));
  }
  poot_graph_destroy(g);
  assert_non_null(table.data);
  int32_t p[2][30], q[30];
  make_prompt(21, V, p[0], N);
  make_prompt(22, V, p[1], N);
  memcpy(p[1], p[0], 5 * sizeof *q); /* the same ids but at the rows' places */
  memcpy(p[1] + 13, p[0] + 13, (size_t)(N - 13) * sizeof *q);
  memcpy(q, p[0], sizeof q);
  poot_driver_input_row rows[2][8];
  poot_driver_input in[2];
  for (int k = 0; k < 2; k++) {
    for (int64_t i = 0; i < 8; i++)
      rows[k][i] = (poot_driver_input_row){.index = 5 + i,
                                           .values = (const float *)table.data + p[k][5 + i] * H,
                                           .n_values = (size_t)H};
    in[k] = (poot_driver_input){.name = POOT_MODEL_SLOT_EMBEDS, .rows = rows[k], .n_rows = 8};
  }
  for (int64_t i = 5; i < 13; i++) q[i] = 0;
  poot_batch_options bo = small_options(4, 64, 4, 32, true);
  rig r;
  rig_open(&r, m, &bo);
  poot_batch_prompt plain[2] = {{p[0], N, NEW, NULL, NULL, NULL, 0},
                                {p[1], N, NEW, NULL, NULL, NULL, 0}};
  poot_batch_prompt with[3] = {{q, N, NEW, NULL, NULL, &in[0], 1},
                               {q, N, NEW, NULL, NULL, &in[1], 1},
                               {q, N, NEW, NULL, NULL, &in[0], 1}};
  poot_batch_output want[2], got[3];
  POOT_ASSERT_OK(poot_batch_generate(r.b, plain, 2, NULL, want));
  rig_close(&r);
  rig_open(&r, m, &bo); /* a fresh pool: the plain prompts' blocks gone */
  for (int i = 0; i < 3; i++) POOT_ASSERT_OK(poot_batch_generate(r.b, &with[i], 1, NULL, &got[i]));
  expect_same(&got[0], &want[0], 1, "rows of the first prompt's tokens");
  expect_same(&got[1], &want[1], 1, "rows of the second prompt's tokens");
  expect_same(&got[2], &want[0], 1, "the first rows again");
  assert_int_equal(got[1].reused_tokens, 0);  /* salted: none of the first rows' blocks */
  assert_int_equal(got[2].reused_tokens, 28); /* its own 7 blocks of 4 */
  poot_batch_outputs_free(want, 2);
  poot_batch_outputs_free(got, 3);
  /* refusals, and rows freed by a cancel */
  poot_batch_request rq = {.prompt = q,
                           .n_prompt = N,
                           .max_new_tokens = 2,
                           .caller_id = 5,
                           .inputs = &in[0],
                           .n_inputs = 1};
  rows[0][7].index = N - 1;
  POOT_ASSERT_STATUS_MSG(poot_batch_submit(r.b, &rq), POOT_INVALID_ARGUMENT, "last id");
  rows[0][7].index = 5;
  POOT_ASSERT_STATUS_MSG(poot_batch_submit(r.b, &rq), POOT_INVALID_ARGUMENT, "two rows");
  rows[0][7].index = 12;
  rows[0][0].n_values = (size_t)H - 1;
  POOT_ASSERT_STATUS(poot_batch_submit(r.b, &rq), POOT_INVALID_ARGUMENT);
  rows[0][0].n_values = (size_t)H;
  in[0].name = "pixels";
  POOT_ASSERT_STATUS(poot_batch_submit(r.b, &rq), POOT_INVALID_ARGUMENT);
  in[0].name = POOT_MODEL_SLOT_EMBEDS;
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  POOT_ASSERT_OK(poot_batch_cancel(r.b, 5));
  poot_scheduler_request_info info;
  assert_true(poot_batch_take_finished(r.b, &info));
  assert_int_equal(info.finish, POOT_SCHEDULER_FINISH_CANCELLED);
  rq.caller_id = 6; /* held when the runner is destroyed: freed then */
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  rig_close(&r);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ recovery */

/* Each caller id's ids, as the step callback reports them. */
typedef struct recorded {
  int32_t ids[4][16];
  int n[4];
} recorded;

static bool record_id(void *ctx, uint64_t caller_id, int32_t token, bool nonfinite) {
  (void)nonfinite;
  recorded *rec = ctx;
  assert_true(caller_id < 4 && rec->n[caller_id] < 16);
  rec->ids[caller_id][rec->n[caller_id]++] = token;
  return false;
}

/* Submits p[0..4) (caller ids 0..3), steps until request 0 has `faulted`
 * ids, faults a step (the armed trap: KERNEL_FAULT; the next step is
 * NEEDS_RESET), recovers (a reset, or a new executor) and steps to the end. */
static void run_faulted(rig *r, const poot_batch_prompt *p, int faulted, bool new_executor,
                        recorded *rec, bool *out_skipped) {
  memset(rec, 0, sizeof *rec);
  *out_skipped = false;
  for (uint64_t i = 0; i < 4; i++)
    POOT_ASSERT_OK(
        poot_batch_submit(r->b, &(poot_batch_request){p[i].ids, p[i].n, p[i].max_new_tokens, i,
                                                      p[i].sampling, p[i].grammar, NULL, 0}));
  while (rec->n[0] < faulted) POOT_ASSERT_OK(poot_batch_step(r->b, record_id, rec, NULL));
  poot_batch_arm_kernel_fault(r->b);
  POOT_ASSERT_STATUS(poot_batch_step(r->b, record_id, rec, NULL), POOT_KERNEL_FAULT);
  /* Vulkan stages a kernel's fault and the executor can be reset; on PTX a
   * trap poisons the CUDA context, so only a new device recovers. */
  const poot_status_code after = poot_status_consume(poot_batch_step(r->b, record_id, rec, NULL));
  const bool poisoned = after == POOT_POISONED;
  if (!poisoned) assert_int_equal(after, POOT_NEEDS_RESET);
  if (new_executor ||
      poisoned) { /* as after a lost device: the old executor is never called again */
    poot_batch_release_executor(r->b);
    poot_executor_destroy(r->ex);
    POOT_ASSERT_STATUS(poot_batch_step(r->b, record_id, rec, NULL), POOT_DEVICE_LOST);
    if (poisoned) { /* the last test: the other tests are done with g_dev */
      poot_device_destroy(g_dev);
      g_dev = NULL;
      poot_status st = poot_device_open(g_spec, NULL, &g_dev);
      if (poot_status_code_of(st) == POOT_DEVICE_LOST) {
        /* CUDA: a trap leaves the process's driver a sticky error; only a
         * new process gets the GPU back (the server's supervisor restarts) */
        printf("recover: %s\n", poot_status_message(st));
        poot_status_free(st);
        *out_skipped = true;
        return;
      }
      POOT_ASSERT_OK(st);
      r->dev = g_dev;
    }
    POOT_ASSERT_OK(poot_engine_create(r->dev, &r->ex));
    new_executor = true;
  }
  POOT_ASSERT_OK(poot_batch_recover(r->b, new_executor ? r->ex : NULL));
  poot_kv_pool_stats ps;
  poot_kv_pool_get_stats(poot_batch_pool(r->b), &ps);
  assert_int_equal(ps.blocks_cached, 0); /* nothing left to match */
  assert_int_equal(ps.seqs_open, 0);
  while (poot_batch_busy(r->b)) POOT_ASSERT_OK(poot_batch_step(r->b, record_id, rec, NULL));
  poot_scheduler_request_info info;
  for (int i = 0; i < 4; i++) assert_true(poot_batch_take_finished(r->b, &info));
}

/* A fault in the middle of four requests (one sampled, one penalized, one
 * with a grammar; prompts sharing a block with an earlier run's published
 * ones): after a reset, and after a
 * move to a new executor, every request ends with the ids it has without
 * the fault. */
static void test_recover(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "recover");
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { NEW = 10 };
  poot_sampling_params sp, pen;
  poot_sampling_params_init(&sp);
  sp.seed = 42;
  poot_sampling_params_init(&pen); /* greedy, penalized (test_penalties_grammar) */
  pen.temperature = 0.0f, pen.repeat_penalty = 1.5f, pen.presence_penalty = -30.0f,
  pen.frequency_penalty = 0.5f, pen.repeat_last_n = 6;
  static const char gtext[] = "root ::= [ a-z]{4,60}\n";
  poot_grammar *gr = NULL;
  POOT_ASSERT_OK(poot_grammar_compile(gtext, sizeof gtext - 1, NULL, &gr));
  static int32_t ids[4][24];
  poot_batch_prompt p[4];
  for (int i = 0; i < 4; i++) {
    make_prompt(900, V, ids[i], 20); /* the first block of 16 is shared */
    make_prompt((uint32_t)(901 + i), V, ids[i] + 16, 4);
    p[i] = (poot_batch_prompt){
        ids[i], 20, NEW, i == 1 ? &sp : i == 2 ? &pen : NULL, i == 3 ? gr : NULL, NULL, 0};
  }
  poot_batch_options bo = small_options(4, 64, 16, 16, true);
  rig r;
  rig_open(&r, m, &bo);
  poot_batch_output want[4];
  POOT_ASSERT_OK(poot_batch_generate(r.b, p, 4, NULL, want));
  recorded rec;
  for (int k = 0; k < 2; k++) {
    bool skipped;
    run_faulted(&r, p, 4, k == 1, &rec, &skipped);
    if (skipped) {
      poot_batch_destroy(r.b); /* its executor is gone with the device */
      poot_batch_outputs_free(want, 4);
      poot_grammar_destroy(gr);
      poot_model_destroy(m);
      skip();
    }
    for (int i = 0; i < 4; i++) {
      assert_int_equal(rec.n[i], want[i].n);
      if (memcmp(rec.ids[i], want[i].ids, (size_t)want[i].n * 4) != 0)
        fail_msg("recovery by %s: request %d differs", k ? "a new executor" : "a reset", i);
    }
  }
  printf(
      "recover: four requests (one sampled, one penalized, one with a grammar) through a "
      "kernel fault = unfaulted, after a reset (a new device where the fault poisons the "
      "context) and on a new executor\n");
  rig_close(&r);
  poot_batch_outputs_free(want, 4);
  poot_grammar_destroy(gr);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ errors */

/* ------------------------------------------------------------ tail rows */

/* One step (asserting its replays, rows and entry size), its ids recorded. */
static void step_expect(poot_batch *b, recorded *rec, int32_t replays, int32_t rows,
                        int32_t decode_batch) {
  poot_batch_step_info info;
  POOT_ASSERT_OK(poot_batch_step(b, record_id, rec, &info));
  assert_int_equal(info.replays, replays);
  assert_int_equal(info.n_rows, rows);
  assert_int_equal(info.decode_batch, decode_batch);
}

/* A prompt's tail (fewer tokens than the chunk) runs as rows of the step's
 * decode replay beside another sequence's decode row; rows past max_batch
 * go to a second replay (an item's rows together); a tail longer than
 * max_batch runs as single steps; the ids are the contiguous driver's. */
static void test_tail_rows(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "tail rows");
  const double t0 = poot_time_s();
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { NP = 4, NEW = 8 };
  const int64_t lens[NP] = {3, 19, 21, 3};
  int32_t prompts[NP][24];
  for (int i = 0; i < NP; i++) make_prompt((uint32_t)(300 + i), V, prompts[i], lens[i]);
  poot_batch_options bo = small_options(4, 64, 16, 32, false); /* chunk 16: no lower rung */
  rig r;
  rig_open(&r, m, &bo);
  recorded rec = {0};
  poot_batch_request rq = {prompts[0], lens[0], NEW, 0, NULL, NULL, NULL, 0};
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  step_expect(r.b, &rec, 1, 3, 4); /* 3 tokens: one replay of 3 rows (was 3 replays) */
  rq = (poot_batch_request){prompts[1], lens[1], NEW, 1, NULL, NULL, NULL, 0};
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  step_expect(r.b, &rec, 2, 1, 1); /* 1's chunk of 16 (the scheduler's cut), 0's decode row */
  /* 1's tail of 3 beside 0's decode row: one replay (was 4) */
  step_expect(r.b, &rec, 1, 4, 4);
  rq = (poot_batch_request){prompts[2], lens[2], NEW, 2, NULL, NULL, NULL, 0};
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  step_expect(r.b, &rec, 2, 2, 2); /* 2's chunk, the decode rows of 0 and 1 */
  /* 2's tail of 5 does not fit the 2 rows left: 5 single steps, then the
   * decode rows */
  step_expect(r.b, &rec, 6, 2, 2);
  rq = (poot_batch_request){prompts[3], lens[3], NEW, 3, NULL, NULL, NULL, 0};
  POOT_ASSERT_OK(poot_batch_submit(r.b, &rq));
  /* 3 decode rows and 3's 3 rows: two replays of at most 4 rows, 3's rows
   * together (was 4 replays) */
  step_expect(r.b, &rec, 2, 6, 4);
  poot_batch_stats st;
  poot_batch_get_stats(r.b, &st);
  assert_int_equal(st.prefill_tokens, 3 + 19 + 21 + 3);
  assert_int_equal(st.decode_rows, 3 + 1 + 4 + 2 + 2 + 6);
  while (poot_batch_busy(r.b)) POOT_ASSERT_OK(poot_batch_step(r.b, record_id, &rec, NULL));
  rig_close(&r);

  poot_executor *ex;
  POOT_ASSERT_OK(poot_engine_create(g_dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 64;
  dopt.prefill_chunk = 16;
  dopt.kv_dtype = bo.kv_dtype ? bo.kv_dtype : poot_model_kv_dtype_default(true);
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  for (int i = 0; i < NP; i++) {
    POOT_ASSERT_OK(poot_driver_reset(d));
    poot_token ids[24], next;
    for (int64_t j = 0; j < lens[i]; j++) ids[j] = prompts[i][j];
    POOT_ASSERT_OK(poot_driver_feed(d, ids, (size_t)lens[i], &next, NULL));
    assert_int_equal(rec.n[i], NEW);
    for (int j = 0; j < NEW; j++) {
      assert_int_equal(rec.ids[i][j], next);
      poot_token t = next;
      if (j + 1 < NEW) POOT_ASSERT_OK(poot_driver_feed(d, &t, 1, &next, NULL));
    }
  }
  printf(
      "tail rows: a tail of 3 beside a decode row in one replay, a tail of 5 past max_batch 4 "
      "as single steps, 6 rows as two replays of at most 4: the driver's ids (%.2f s)\n",
      poot_time_s() - t0);
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_model_destroy(m);
}

/* A chunk past 128 has a middle rung: a 131-token prompt at chunk 144 is
 * one chunk of 128 and 3 rows (2 replays; 11 before), with the ids of the
 * contiguous driver, whose ladder is the same (its middle chunk and 3
 * single steps, the chunk of 144 never compiled). */
static void test_middle_rung(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "middle rung");
  const double t0 = poot_time_s();
  const int64_t V = poot_model_get_config(m)->vocab_size;
  enum { NPROMPT = 131, NEW = 4 };
  int32_t prompt[NPROMPT];
  make_prompt(400, V, prompt, NPROMPT);
  poot_batch_options bo = small_options(4, 144, 16, 12, false);
  bo.prefill_chunk = 144;
  rig r;
  rig_open(&r, m, &bo);
  poot_batch_info info;
  poot_batch_get_info(r.b, &info);
  assert_int_equal(info.prefill_chunk, 144);
  assert_int_equal(info.mid_chunk, 128);
  assert_int_equal(info.tail_chunk, 16);
  recorded rec = {0};
  POOT_ASSERT_OK(
      poot_batch_submit(r.b, &(poot_batch_request){prompt, NPROMPT, NEW, 0, NULL, NULL, NULL, 0}));
  step_expect(r.b, &rec, 2, 3, 4); /* 128, then 3 rows */
  while (poot_batch_busy(r.b)) POOT_ASSERT_OK(poot_batch_step(r.b, record_id, &rec, NULL));
  rig_close(&r);
  assert_int_equal(rec.n[0], NEW);

  poot_executor *ex;
  POOT_ASSERT_OK(poot_engine_create(g_dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = 144;
  dopt.prefill_chunk = 144;
  dopt.kv_dtype = info.kv_dtype;
  poot_driver *d;
  POOT_ASSERT_OK(poot_driver_create(ex, m, &dopt, &d));
  poot_token ids[NPROMPT], next;
  for (int j = 0; j < NPROMPT; j++) ids[j] = prompt[j];
  POOT_ASSERT_OK(poot_driver_feed(d, ids, NPROMPT, &next, NULL));
  poot_exec_stats es;
  poot_exec_stats_get(ex, &es);
  assert_int_equal(es.entries, 2); /* the middle chunk and decode: never the chunk of 144 */
  assert_int_equal(es.steps, 1 + 3);
  for (int j = 0; j < NEW; j++) {
    assert_int_equal(rec.ids[0][j], next);
    poot_token t = next;
    if (j + 1 < NEW) POOT_ASSERT_OK(poot_driver_feed(d, &t, 1, &next, NULL));
  }
  printf("middle rung: 131 tokens as 128 + 3 rows (2 replays), the driver's ids (%.2f s)\n",
         poot_time_s() - t0);
  poot_driver_destroy(d);
  poot_executor_destroy(ex);
  poot_model_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  poot_model *m = model_or_skip(false, "errors");
  poot_device *dev;
  poot_executor *ex;
  dev = g_dev;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_batch *b = NULL;
  poot_batch_options bo = poot_batch_options_default();
  bo.max_batch = -1;
  POOT_ASSERT_STATUS_MSG(poot_batch_create(ex, m, &bo, &b), POOT_INVALID_ARGUMENT, "max_batch");
  bo = poot_batch_options_default();
  bo.kv_dtype = POOT_DTYPE_BF16;
  POOT_ASSERT_STATUS_MSG(poot_batch_create(ex, m, &bo, &b), POOT_INVALID_ARGUMENT, "kv_dtype bf16");
  bo = poot_batch_options_default();
  bo.max_batch = 8;
  bo.token_budget = 4;
  POOT_ASSERT_STATUS_MSG(poot_batch_create(ex, m, &bo, &b), POOT_INVALID_ARGUMENT, "token_budget");
  bo = poot_batch_options_default();
  bo.max_seq_len = 64;
  bo.kv_budget_bytes = 100; /* not one block */
  POOT_ASSERT_STATUS(poot_batch_create(ex, m, &bo, &b), POOT_CAPACITY);
  assert_null(b);
  /* Sized from the device's memory: some blocks, at most 4 · max_batch
   * sequences' worth (minus the scratch block). */
  bo = poot_batch_options_default();
  bo.max_seq_len = 64;
  bo.max_batch = 2;
  poot_exec_stats es;
  poot_exec_stats_get(ex, &es);
  if (es.memory_bytes == 0) { /* wgpu: the device does not say */
    POOT_ASSERT_STATUS_MSG(poot_batch_create(ex, m, &bo, &b), POOT_INVALID_ARGUMENT,
                           "kv_budget_bytes");
    bo.kv_budget_bytes = 1 << 20;
  }
  POOT_ASSERT_OK(poot_batch_create(ex, m, &bo, &b));
  poot_batch_info info;
  poot_batch_get_info(b, &info);
  if (es.memory_bytes) { /* at most 4 · max_batch sequences, less the scratch block */
    assert_true(info.num_blocks >= 1);
    assert_true(info.num_blocks <= 4 * 2 * 64 / 16 - 1);
  } else { /* 1 MiB of blocks of 16 tokens of 2 · 5 layers · 4 heads · 8 · 2 bytes (f16) */
    assert_int_equal(info.num_blocks, (1 << 20) / (16 * 2 * 5 * 4 * 8 * 2) - 1);
  }
  assert_int_equal(info.prefill_chunk, 16);
  assert_int_equal(info.token_budget, 2 * 16);
  int32_t ids[2] = {1, 5};
  POOT_ASSERT_STATUS(poot_batch_submit(b, &(poot_batch_request){ids, 0, 4, 1, NULL, NULL, NULL, 0}),
                     POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_batch_cancel(b, 99), POOT_NOT_FOUND);
  poot_batch_destroy(b);
  poot_executor_destroy(ex);
  poot_model_destroy(m);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  poot_device *d = NULL;
  poot_status st = poot_device_open(g_spec, NULL, &d);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", g_spec, poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  g_simd_cpu = d->caps.target.simd_cpu;
  g_rows8 = d->caps.target.subgroup_ops;
  g_dev = d;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vs_oracle),
      cmocka_unit_test(test_vs_oracle_f16),
      cmocka_unit_test(test_vs_oracle_q8_0),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_invariance_stories),
      cmocka_unit_test(test_invariance_demo),
      cmocka_unit_test(test_prefix_reuse),
      cmocka_unit_test(test_preemption),
      cmocka_unit_test(test_tail_rows),
      cmocka_unit_test(test_middle_rung),
      cmocka_unit_test(test_sampling),
      cmocka_unit_test(test_logprobs),
      cmocka_unit_test(test_penalties_grammar),
      cmocka_unit_test(test_input_rows),
      /* last: on PTX its trapped kernel leaves the process's CUDA driver unusable */
      cmocka_unit_test(test_recover),
  };
  /* wgpu compiles each entry through naga (seconds each on lavapipe): the
   * tier-2 comparison and the errors only (CI time); the rest is the
   * device-independent runner, checked on Vulkan. */
  const size_t n = strcmp(g_spec, "wgpu") == 0 ? 3 : sizeof tests / sizeof tests[0];
  const int rc = poot_test_finish(_cmocka_run_group_tests("tests", tests, n, NULL, NULL));
  poot_device_destroy(g_dev);
  return rc;
}
