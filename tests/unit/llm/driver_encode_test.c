/* The rest of the driver API on a device (the argument names it, "vulkan" by
 * default; SKIP when absent), with the demo model (models/poot-demo.gguf):
 *  - generate_with_inputs with every prompt row replaced by the token's own
 *    embedding row (the table read through poot_model_weight_tensor and
 *    converted to f32 on poot_eval) gives generate_ids's ids, at placeholder
 *    tokens 0;
 *  - rows of other tokens at a few indices (one chunk without a row, one
 *    single decode step with one) give the ids of feeding those tokens; new
 *    row values make no new entry; a sequence recomputed at the rope restart
 *    length keeps the rows;
 *  - encode's hidden states equal poot_eval's on the same traced graph
 *    within tol of docs/verification.md; encode leaves the ids in the cache
 *    (a feed continues after them); prepare_encode adds entries once;
 *    past POOT_DRIVER_ENCODE_ENTRIES counts the least recently used goes;
 *  - the errors: unknown, repeated input, row outside the prompt or
 *    repeated, wrong width, NULL values, capacity, bad counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/llm/driver.h"
#include "poot/llm/verify.h"
#include "poot_test.h"
#include "../../../src/llm/driver/driver_impl.h"

static const char *g_spec = "vulkan";

typedef struct rig {
  poot_model *model;
  poot_device *dev;
  poot_executor *ex;
  poot_driver *drv;
  int64_t H, V;
} rig;

static bool demo_path(char *buf, size_t size) {
  snprintf(buf, size, "%s/models/poot-demo.gguf", poot_test_source_dir());
  FILE *f = fopen(buf, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void rig_open(rig *r, int64_t cap, int64_t chunk) {
  memset(r, 0, sizeof *r);
  char path[1024];
  if (!demo_path(path, sizeof path)) {
    printf("SKIP: models/poot-demo.gguf is absent\n");
    skip();
  }
  POOT_ASSERT_OK(poot_model_open(path, NULL, &r->model));
  poot_device_open_options o = {.validation = true};
  POOT_ASSERT_OK(poot_device_open(g_spec, &o, &r->dev));
  POOT_ASSERT_OK(poot_engine_create(r->dev, &r->ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = chunk;
  POOT_ASSERT_OK(poot_driver_create(r->ex, r->model, &dopt, &r->drv));
  r->H = poot_model_get_config(r->model)->hidden_size;
  r->V = poot_model_get_config(r->model)->vocab_size;
}

static void rig_close(rig *r) {
  poot_driver_destroy(r->drv);
  poot_executor_destroy(r->ex);
#ifdef POOT_HAVE_VULKAN
  if (strcmp(r->dev->caps.backend, "vulkan") == 0 && poot_vulkan_validation_enabled(r->dev))
    assert_int_equal(poot_vulkan_validation_messages(r->dev), 0);
#endif
  poot_device_destroy(r->dev);
  poot_model_destroy(r->model);
}

static uint64_t captures(const rig *r) {
  poot_exec_stats s;
  poot_exec_stats_get(r->ex, &s);
  return s.captures;
}

/* Binds every Weight leaf of g to the model's tensor (by key) into w/t. */
static size_t bind_weights(poot_model *m, const poot_graph *g, poot_eval_weight *w, poot_tensor *t,
                           size_t room) {
  const poot_region *root = poot_graph_root(g);
  size_t n = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    assert_true(n < room);
    POOT_ASSERT_OK(
        poot_model_weight_tensor(m, &nd->weight, poot_graph_value_type(g, nd->results[0]), &t[n]));
    w[n] = (poot_eval_weight){.key = nd->weight.key, .tensor = &t[n]};
    n++;
  }
  return n;
}

/* The token embedding table as f32[V, H] (poot_malloc'ed): the model's
 * token_embd tensor converted (or dequantized) to f32 on poot_eval. */
static float *embedding_table(const rig *r) {
  poot_model_step step = {.batch = 1, .tokens = 1, .cap = 4};
  poot_model_trace_options to = poot_model_trace_options_for(r->model);
  poot_graph *g = NULL, *t = NULL;
  POOT_ASSERT_OK(poot_model_trace(poot_model_get_config(r->model), &step, &to, &g));
  const poot_region *root = poot_graph_root(g);
  const poot_node *emb = NULL;
  for (uint32_t i = 0; i < root->num_nodes && !emb; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    poot_weight_ref ref;
    POOT_ASSERT_OK(poot_weight_map_find(poot_model_get_weight_map(r->model), nd->weight.key,
                                        nd->weight.name, &ref));
    if (ref.role == POOT_WEIGHT_TOKEN_EMBD) emb = nd;
  }
  assert_non_null(emb);
  const poot_type ty = *poot_graph_value_type(g, emb->results[0]);
  poot_tensor wt;
  POOT_ASSERT_OK(poot_model_weight_tensor(r->model, &emb->weight, &ty, &wt));
  const size_t bytes = (size_t)(r->V * r->H) * sizeof(float);
  float *table = poot_malloc(bytes);
  assert_non_null(table);
  if (ty.dtype == POOT_DTYPE_F32) {
    assert_int_equal(wt.size, bytes);
    memcpy(table, wt.data, bytes);
  } else {
    poot_value w, x;
    POOT_ASSERT_OK(poot_graph_create(&t));
    POOT_ASSERT_OK(poot_graph_add_weight(t, &emb->weight, &ty, &w));
    if (poot_dtype_is_packed(ty.dtype))
      POOT_ASSERT_OK(poot_graph_dequantize(t, w, POOT_DTYPE_F32, &x));
    else
      POOT_ASSERT_OK(poot_graph_convert(t, w, POOT_DTYPE_F32, &x));
    POOT_ASSERT_OK(poot_graph_set_output(t, x));
    POOT_ASSERT_OK(poot_graph_verify(t));
    poot_eval_weight ew = {.key = emb->weight.key, .tensor = &wt};
    poot_eval_inputs in = {.weight_count = 1, .weights = &ew};
    poot_evaluation *ev = NULL;
    POOT_ASSERT_OK(poot_eval(t, &in, NULL, &ev));
    assert_int_equal(ev->output.size, bytes);
    memcpy(table, ev->output.data, bytes);
    poot_evaluation_destroy(ev);
  }
  printf("token_embd: %s [%lld, %lld]\n", poot_dtype_name(ty.dtype), (long long)r->V,
         (long long)r->H);
  poot_graph_destroy(t);
  poot_graph_destroy(g);
  return table;
}

static void prompt_ids(const rig *r, const char *text, poot_token **ids, size_t *n) {
  POOT_ASSERT_OK(poot_verify_encode_text(r->model, text, strlen(text), ids, n));
}

static poot_driver_generate_options gen_options(void) {
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = 16;
  go.no_text = true;
  go.ignore_stop = true;
  return go;
}

static void assert_same_ids(const poot_driver_generate_result *a,
                            const poot_driver_generate_result *b) {
  assert_int_equal(a->n_ids, b->n_ids);
  for (size_t i = 0; i < a->n_ids; i++)
    if (a->ids[i] != b->ids[i])
      fail_msg("step %zu: id %d with rows, %d with tokens", i, (int)a->ids[i], (int)b->ids[i]);
}

/* ------------------------------------------------------- own rows */

static void test_own_rows(void **state) {
  (void)state;
  rig r;
  rig_open(&r, 64, 5);
  poot_token *ids = NULL;
  size_t np = 0;
  prompt_ids(&r, "Tom and his dog went to the park to play.", &ids, &np);
  assert_true(np > 10 && np % 5 != 0); /* whole chunks and single steps */
  float *table = embedding_table(&r);
  poot_driver_generate_options go = gen_options();
  poot_driver_generate_result want, got;
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, ids, np, &go, NULL, NULL, &want));
  uint64_t c0 = captures(&r);
  poot_driver_input_row *rows = poot_calloc(np, sizeof *rows);
  poot_token *zeros = poot_calloc(np, sizeof *zeros);
  assert_true(rows && zeros);
  for (size_t i = 0; i < np; i++)
    rows[i] = (poot_driver_input_row){.index = (int64_t)(np - 1 - i), /* any order */
                                      .values = table + (size_t)ids[np - 1 - i] * (size_t)r.H,
                                      .n_values = (size_t)r.H};
  poot_driver_input in = {.name = "embeds", .rows = rows, .n_rows = np};
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, zeros, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  assert_int_equal(got.n_prompt, np);
  assert_int_equal(got.nonfinite, 0);
  /* The row entries: one prefill chunk and one decode step. */
  assert_int_equal(captures(&r), c0 + 2);
  printf("own rows: %zu prompt rows, %zu ids equal generate_ids's\n", np, got.n_ids);
  /* Once more, entries made: the prompt's time against generate_ids's. */
  poot_driver_generate_result_deinit(&got);
  poot_driver_generate_result_deinit(&want);
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, ids, np, &go, NULL, NULL, &want));
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, zeros, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  printf("own rows: prompt %.2f ms with rows, %.2f ms with ids; decode %.2f / %.2f ms a token\n",
         got.prefill_s * 1e3, want.prefill_s * 1e3, got.decode_s * 1e3 / (double)(got.n_ids - 1),
         want.decode_s * 1e3 / (double)(want.n_ids - 1));
  poot_driver_generate_result_deinit(&got);
  poot_driver_generate_result_deinit(&want);
  poot_free(rows);
  poot_free(zeros);
  poot_free(table);
  poot_free(ids);
  rig_close(&r);
}

/* ------------------------------------------------------- other rows */

static void test_other_rows(void **state) {
  (void)state;
  rig r;
  rig_open(&r, 64, 5);
  poot_token *ids = NULL;
  size_t np = 0;
  prompt_ids(&r, "Once upon a time, there was a little girl named", &ids, &np);
  assert_true(np > 10 && np % 5 != 0);
  float *table = embedding_table(&r);
  /* Rows at 1 (chunk 0), np - 1 (a single step); chunk 1 has none. */
  const size_t at[2] = {1, np - 1};
  const poot_token other[2] = {(poot_token)(ids[1] + 17) % 400,
                               (poot_token)(ids[np - 1] + 5) % 400};
  poot_token *swapped = poot_malloc(np * sizeof *swapped);
  assert_non_null(swapped);
  memcpy(swapped, ids, np * sizeof *ids);
  poot_driver_input_row rows[2];
  for (int k = 0; k < 2; k++) {
    swapped[at[k]] = other[k];
    rows[k] = (poot_driver_input_row){.index = (int64_t)at[k],
                                      .values = table + (size_t)other[k] * (size_t)r.H,
                                      .n_values = (size_t)r.H};
  }
  poot_driver_generate_options go = gen_options();
  poot_driver_generate_result want, got, plain, got2;
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, swapped, np, &go, NULL, NULL, &want));
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, ids, np, &go, NULL, NULL, &plain));
  poot_driver_input in = {.name = "embeds", .rows = rows, .n_rows = 2};
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  bool differs = false; /* the rows changed something */
  for (size_t i = 0; i < plain.n_ids && !differs; i++) differs = plain.ids[i] != want.ids[i];
  assert_true(differs);
  poot_driver_generate_result_deinit(&got);

  /* New row values (the first row now the prompt token's own): no new
   * entry, and the ids of that prompt. */
  uint64_t c0 = captures(&r);
  swapped[at[0]] = ids[at[0]];
  rows[0].values = table + (size_t)ids[at[0]] * (size_t)r.H;
  poot_driver_generate_result_deinit(&want);
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, swapped, np, &go, NULL, NULL, &want));
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  assert_int_equal(captures(&r), c0);
  poot_driver_generate_result_deinit(&got);

  /* A restart length inside the generation: the sequence is run again in
   * one pass with the rows in place (a llama's ids do not change). */
  r.drv->restart_at = (int64_t)np + 3;
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  assert_int_equal(captures(&r), c0 + 1); /* the whole-sequence entry */
  r.drv->restart_at = 0;
  poot_driver_generate_result_deinit(&got);

  /* A prompt past the whole-pass length runs in one pass, rows in place:
   * the ids of feeding the tokens in one pass. */
  r.drv->whole_pass_at = 4;
  poot_driver_generate_result_deinit(&want);
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, swapped, np, &go, NULL, NULL, &want));
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &want);
  r.drv->whole_pass_at = 0;
  poot_driver_generate_result_deinit(&got);

  /* No rows: generate_ids's ids, and no entry added. */
  c0 = captures(&r);
  in.n_rows = 0;
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, &in, 1, &go, NULL, NULL, &got));
  assert_same_ids(&got, &plain);
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, ids, np, NULL, 0, &go, NULL, NULL, &got2));
  assert_same_ids(&got2, &plain);
  assert_int_equal(captures(&r), c0);
  poot_driver_generate_result_deinit(&got2);
  printf("other rows: rows at %zu and %zu give the ids of their tokens (%zu ids)\n", at[0], at[1],
         got.n_ids);
  poot_driver_generate_result_deinit(&got);
  poot_driver_generate_result_deinit(&want);
  poot_driver_generate_result_deinit(&plain);
  poot_free(swapped);
  poot_free(table);
  poot_free(ids);
  rig_close(&r);
}

/* ------------------------------------------------------------ encode */

/* The oracle: the HIDDEN graph of T = count at the driver's capacity on
 * poot_eval from zeroed states. */
static float *oracle_hidden(const rig *r, const poot_token *ids, size_t count, int64_t cap) {
  poot_model_step step = {
      .batch = 1, .tokens = (int64_t)count, .cap = cap, .output = POOT_MODEL_OUTPUT_HIDDEN};
  poot_model_trace_options to = poot_model_trace_options_for(r->model);
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(poot_model_get_config(r->model), &step, &to, &g));
  enum { ROOM = 4 + 16 * POOT_MODEL_MAX_LAYERS };
  static poot_eval_weight w[ROOM];
  static poot_tensor t[ROOM];
  size_t nw = bind_weights(r->model, g, w, t, ROOM);
  int32_t *tok = poot_malloc(count * sizeof *tok);
  assert_non_null(tok);
  for (size_t i = 0; i < count; i++) tok[i] = (int32_t)ids[i];
  int64_t td[2] = {1, (int64_t)count}, one = 1;
  int32_t p0 = 0;
  poot_tensor tt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, td), .data = tok, .size = count * sizeof *tok};
  poot_tensor pt = {.type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &p0, .size = 4};
  poot_eval_input items[2] = {{"token", &tt}, {"pos", &pt}};
  poot_eval_inputs in = {.count = 2, .items = items, .weight_count = nw, .weights = w};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = true;
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &in, &eo, &ev));
  assert_int_equal(ev->output.size, count * (size_t)r->H * sizeof(float));
  float *out = poot_malloc(ev->output.size);
  assert_non_null(out);
  memcpy(out, ev->output.data, ev->output.size);
  poot_evaluation_destroy(ev);
  poot_free(tok);
  poot_graph_destroy(g);
  return out;
}

static void test_encode(void **state) {
  (void)state;
  const int64_t cap = 64;
  rig r;
  rig_open(&r, cap, 4);
  poot_token *ids = NULL;
  size_t np = 0;
  prompt_ids(&r, "Tom and his dog went to the park to play.", &ids, &np);
  uint64_t c0 = captures(&r);
  const int64_t counts[3] = {(int64_t)np, 5, (int64_t)np};
  uint64_t p0 = poot_time_ns();
  POOT_ASSERT_OK(poot_driver_prepare_encode(r.drv, counts, 3));
  printf("prepare_encode: 2 entries in %.0f ms\n", (double)(poot_time_ns() - p0) * 1e-6);
  assert_int_equal(captures(&r), c0 + 2);
  float *got = poot_malloc((np + POOT_DRIVER_ENCODE_ENTRIES + 2) * (size_t)r.H * sizeof *got);
  assert_non_null(got);
  uint64_t t0 = poot_time_ns();
  POOT_ASSERT_OK(poot_driver_encode(r.drv, ids, np, got));
  uint64_t t1 = poot_time_ns();
  assert_int_equal(captures(&r), c0 + 2); /* prepared: nothing compiled */
  assert_int_equal(poot_driver_pos(r.drv), (int64_t)np);
  float *want = oracle_hidden(&r, ids, np, cap);
  const size_t n = np * (size_t)r.H;
  double tol = poot_verify_tolerance(poot_model_get_config(r.model), cap, want, (int64_t)n, false),
         maxd = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= maxd)) maxd = d;
  }
  printf("encode: %zu x %lld hidden in %.2f ms, max |device - oracle| %.3g (tol %.3g)\n", np,
         (long long)r.H, (double)(t1 - t0) * 1e-6, maxd, tol);
  assert_true(maxd <= tol);

  /* The ids stay in the cache: encoding all but the last and feeding it
   * gives generate_ids's first id. */
  poot_driver_generate_options go = gen_options();
  go.max_new_tokens = 1;
  poot_driver_generate_result ref;
  POOT_ASSERT_OK(poot_driver_generate_ids(r.drv, ids, np, &go, NULL, NULL, &ref));
  POOT_ASSERT_OK(poot_driver_encode(r.drv, ids, np - 1, got));
  assert_int_equal(poot_driver_pos(r.drv), (int64_t)np - 1);
  poot_token next = -1;
  POOT_ASSERT_OK(poot_driver_feed(r.drv, ids + np - 1, 1, &next, NULL));
  assert_int_equal(next, ref.ids[0]);
  poot_driver_generate_result_deinit(&ref);

  /* Past POOT_DRIVER_ENCODE_ENTRIES counts the least recently used goes:
   * the live entries stay bounded, and a count used again works. */
  poot_exec_stats s0, s1;
  poot_exec_stats_get(r.ex, &s0);
  poot_token many[POOT_DRIVER_ENCODE_ENTRIES + 2];
  for (size_t i = 0; i < POOT_DRIVER_ENCODE_ENTRIES + 2; i++) many[i] = ids[i % np];
  for (int64_t T = 1; T <= POOT_DRIVER_ENCODE_ENTRIES + 2; T++)
    POOT_ASSERT_OK(poot_driver_encode(r.drv, many, (size_t)T, got));
  poot_exec_stats_get(r.ex, &s1);
  assert_true(s1.entries <= s0.entries - 3 + POOT_DRIVER_ENCODE_ENTRIES);
  POOT_ASSERT_OK(poot_driver_encode(r.drv, ids, np, got));
  maxd = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= maxd)) maxd = d;
  }
  assert_true(maxd <= tol);
  poot_free(want);
  poot_free(got);
  poot_free(ids);
  rig_close(&r);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void **state) {
  (void)state;
  rig r;
  rig_open(&r, 32, 4);
  const poot_token prompt[6] = {0, 17, 362, 40, 9, 100};
  float *row = poot_calloc((size_t)r.H + 1, sizeof *row);
  assert_non_null(row);
  poot_driver_generate_options go = gen_options();
  poot_driver_generate_result res;
  poot_driver_input_row rows[2] = {{.index = 2, .values = row, .n_values = (size_t)r.H},
                                   {.index = 4, .values = row, .n_values = (size_t)r.H}};
  poot_driver_input in[2] = {{.name = "embeds", .rows = rows, .n_rows = 2},
                             {.name = "embeds", .rows = rows, .n_rows = 1}};
#define EXPECT(call, code, text)              \
  do {                                        \
    POOT_ASSERT_STATUS_MSG(call, code, text); \
    poot_driver_generate_result_deinit(&res); \
  } while (0)
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 2, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "input 'embeds' is given twice");
  in[0].name = "pixels";
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "input 'pixels' is not an input of this model");
  in[0].name = "embeds";
  rows[1].index = 6;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "row 1 has prompt index 6, outside the prompt's 6 ids");
  rows[1].index = -1;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "prompt index -1");
  rows[1].index = 2;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "row 1: prompt index 2 is given twice");
  rows[1].index = 4;
  rows[1].n_values = (size_t)r.H + 1;
  char msg[160];
  snprintf(msg, sizeof msg, "row 1 has %lld values; the model's rows have hidden_size %lld",
           (long long)r.H + 1, (long long)r.H);
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, msg);
  rows[1].n_values = (size_t)r.H;
  rows[0].values = NULL;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "row 0 has no values");
  rows[0].values = row;
  in[0].n_rows = 7;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "has 7 rows, more than the prompt's 6 ids");
  in[0].n_rows = 2;
  EXPECT(poot_driver_generate_with_inputs(r.drv, prompt, 0, in, 1, &go, NULL, NULL, &res),
         POOT_INVALID_ARGUMENT, "the prompt needs at least one id");
  poot_token big[40] = {0};
  EXPECT(poot_driver_generate_with_inputs(r.drv, big, 40, in, 1, &go, NULL, NULL, &res),
         POOT_CAPACITY, "exceeds the KV capacity 32");
  /* Nothing was added by the refusals; the driver still generates. */
  assert_int_equal(captures(&r), 0);
  POOT_ASSERT_OK(poot_driver_generate_with_inputs(r.drv, prompt, 6, in, 1, &go, NULL, NULL, &res));
  assert_int_equal(res.n_ids, 16);
  poot_driver_generate_result_deinit(&res);

  float out[4];
  POOT_ASSERT_STATUS_MSG(poot_driver_encode(r.drv, big, 33, out), POOT_CAPACITY,
                         "encode of 33 ids exceeds the KV capacity 32");
  POOT_ASSERT_STATUS(poot_driver_encode(r.drv, big, 0, out), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_driver_encode(r.drv, big, 1, NULL), POOT_INVALID_ARGUMENT);
  const int64_t bad0[1] = {0}, bad_cap[1] = {33};
  POOT_ASSERT_STATUS_MSG(poot_driver_prepare_encode(r.drv, bad0, 1), POOT_INVALID_ARGUMENT,
                         "count 0 is 0 (< 1)");
  POOT_ASSERT_STATUS_MSG(poot_driver_prepare_encode(r.drv, bad_cap, 1), POOT_CAPACITY,
                         "count 0 is 33, above the KV capacity 32");
  int64_t many[POOT_DRIVER_ENCODE_ENTRIES + 1];
  for (int i = 0; i <= POOT_DRIVER_ENCODE_ENTRIES; i++) many[i] = i + 1;
  POOT_ASSERT_STATUS_MSG(poot_driver_prepare_encode(r.drv, many, POOT_DRIVER_ENCODE_ENTRIES + 1),
                         POOT_INVALID_ARGUMENT, "distinct counts");
  POOT_ASSERT_OK(poot_driver_prepare_encode(r.drv, NULL, 0));
#undef EXPECT
  poot_free(row);
  rig_close(&r);
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
  poot_device_destroy(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_own_rows),
      cmocka_unit_test(test_other_rows),
      cmocka_unit_test(test_encode),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
