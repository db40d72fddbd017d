/* The oracle runner on a real checkpoint (stories260K, llama2.c format):
 *  - greedy from the empty prompt, 256 steps, reproduces the reference text;
 *  - paged KV (several sequences of different lengths sharing one block
 *    pool, decoded together in one B = 3 graph) is bit-identical to each
 *    sequence run alone with contiguous KV;
 *  - a position past the capacity is a POS_OUT_OF_RANGE fault, a write-map
 *    row past the pool a WRITE_MAP_OUT_OF_RANGE fault. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/convert.h"
#include "poot/llm/model.h"
#include "poot/llm/verify.h"
#include "poot_test.h"

static char g_model[4096], g_tok[4096], g_readme[4096];

static poot_model *open_stories(void) {
  poot_model_open_options o = {.tokenizer_path = g_tok};
  poot_model *m = NULL;
  POOT_ASSERT_OK(poot_model_open(g_model, &o, &m));
  return m;
}

static char *expected_text(void) {
  char *data = NULL;
  size_t size = 0;
  POOT_ASSERT_OK(poot_file_read_all(g_readme, &data, &size));
  char *sec = strstr(data, "## Expected outputs");
  assert_non_null(sec);
  char *start = strstr(sec, "```\n");
  assert_non_null(start);
  start += 4;
  char *end = strstr(start, "```");
  assert_non_null(end);
  char *out = poot_strndup(start, (size_t)(end - start));
  poot_free(data);
  return out;
}

static void test_stories_greedy(void **state) {
  (void)state;
  poot_model *m = open_stories();
  const poot_model_config *c = poot_model_get_config(m);
  assert_int_equal(c->family, POOT_MODEL_FAMILY_LLAMA);
  assert_int_equal(c->hidden_size, 64);
  assert_int_equal(c->n_layers, 5);
  assert_int_equal(c->n_heads, 8);
  assert_int_equal(c->n_kv_heads, 4);
  assert_int_equal(c->vocab_size, 512);
  assert_true(c->tied_output);
  assert_int_equal(poot_model_get_format(m), POOT_STORE_FORMAT_LLAMA2C);
  poot_token *ids = NULL;
  size_t n = 0;
  POOT_ASSERT_OK(poot_verify_encode_text(m, "", 0, &ids, &n));
  assert_int_equal(n, 1);
  assert_int_equal(ids[0], 1); /* BOS */
  poot_verify_greedy_options o = poot_verify_greedy_options_default();
  o.max_new_tokens = 256;
  o.keep_logits = 2;
  poot_verify_evaluator ev = poot_verify_oracle();
  poot_verify_greedy_result r;
  POOT_ASSERT_OK(poot_verify_greedy(m, &ev, ids, n, &o, &r));
  assert_int_equal(r.n_ids, 256);
  assert_false(r.stopped);
  assert_int_equal(r.n_logits, 2);
  for (size_t i = 0; i < r.n_ids; i++) assert_true(r.margins[i] >= 0);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_verify_decode(m, ids, n, r.ids, r.n_ids, r.stopped, &sb));
  poot_strbuf_putc(&sb, '\n'); /* run.c ends the sample with a newline */
  char *want = expected_text();
  if (strcmp(sb.data, want) != 0) fail_msg("text differs:\n%s\n---\n%s", sb.data, want);
  poot_free(want);
  poot_strbuf_deinit(&sb);
  poot_verify_greedy_result_deinit(&r);
  poot_free(ids);
  poot_model_destroy(m);
}

/* The same model converted to GGUF (f32: the llama2.c layout is GGUF's, no
 * permutation) gives bit-identical logits and the same ids; f16 weights stay
 * within the f16 rounding of the weights (docs/verification.md). */
static void greedy_of(poot_model *m, size_t n, poot_verify_greedy_result *r) {
  poot_token bos = 1;
  poot_verify_greedy_options o = poot_verify_greedy_options_default();
  o.max_new_tokens = (int64_t)n;
  o.keep_logits = 2;
  poot_verify_evaluator ev = poot_verify_oracle();
  POOT_ASSERT_OK(poot_verify_greedy(m, &ev, &bos, 1, &o, r));
}

static void test_gguf_matches_llama2c(void **state) {
  (void)state;
  poot_model *m = open_stories();
  poot_verify_greedy_result ref;
  greedy_of(m, 48, &ref);
  poot_model_destroy(m);
  const char *types[2] = {"f32", "f16"};
  for (int k = 0; k < 2; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/stories-%s.gguf", poot_test_tmpdir(), types[k]);
    poot_convert_options co = {.tokenizer_path = g_tok, .type_set = true};
    POOT_ASSERT_OK(poot_gguf_type_from_name(types[k], &co.type));
    POOT_ASSERT_OK(poot_convert_to_gguf(g_model, path, &co));
    poot_model *g = NULL;
    POOT_ASSERT_OK(poot_model_open(path, NULL, &g));
    const poot_model_config *c = poot_model_get_config(g);
    assert_int_equal(c->family, POOT_MODEL_FAMILY_LLAMA);
    assert_int_equal(c->rope_mode, POOT_ROPE_NORM);
    assert_int_equal(poot_model_get_format(g), POOT_STORE_FORMAT_GGUF);
    poot_verify_greedy_result r;
    greedy_of(g, 48, &r);
    assert_int_equal(r.n_ids, ref.n_ids);
    for (size_t i = 0; i < r.n_ids; i++) assert_int_equal(r.ids[i], ref.ids[i]);
    float worst = 0, peak = 0;
    for (size_t i = 0; i < 2 * 512; i++) {
      worst = fmaxf(worst, fabsf(r.logits[i] - ref.logits[i]));
      peak = fmaxf(peak, fabsf(ref.logits[i]));
    }
    if (k == 0 && memcmp(r.logits, ref.logits, 2 * 512 * sizeof(float)) != 0)
      fail_msg("f32 GGUF logits differ from the llama2.c checkpoint's (max %g)", worst);
    /* f16 weights: relative rounding 2^-11 per weight, through 5 layers and
     * the classifier (docs/verification.md): 2^-11 * 4 * (L + 1) * peak. */
    if (k == 1 && worst > 0.00048828125f * 4 * 6 * peak)
      fail_msg("f16 GGUF logits differ by %g (peak %g)", worst, peak);
    poot_verify_greedy_result_deinit(&r);
    poot_model_destroy(g);
  }
  poot_verify_greedy_result_deinit(&ref);
}

/* ------------------------------------------------------ paged vs contiguous */

typedef struct bound {
  poot_graph *g;
  poot_eval_input items[256];
  poot_tensor tensors[256];
  char names[256][64];
  size_t n_weights, n;
} bound;

static void bind_graph(bound *b, poot_model *m, const poot_model_step *step) {
  memset(b, 0, sizeof *b);
  poot_model_trace_options to = poot_model_trace_options_for(m);
  /* f32 K/V for every graph here: a paged pool is f32 (f16 is not traced
   * paged yet), and the contiguous references it is compared with bit for
   * bit must hold the same values. */
  to.kv_dtype = POOT_DTYPE_F32;
  POOT_ASSERT_OK(poot_model_trace(poot_model_get_config(m), step, &to, &b->g));
  const poot_region *root = poot_graph_root(b->g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *nd = poot_graph_node(b->g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(b->g, nd, &sb);
    assert_true(b->n < 200);
    snprintf(b->names[b->n], 64, "%s", sb.data);
    POOT_ASSERT_OK(poot_model_weight_tensor(
        m, &nd->weight, poot_graph_value_type(b->g, nd->results[0]), &b->tensors[b->n]));
    b->items[b->n].name = b->names[b->n];
    b->items[b->n].tensor = &b->tensors[b->n];
    b->n++;
  }
  b->n_weights = b->n;
  poot_strbuf_deinit(&sb);
}

static void add_input(bound *b, const char *name, poot_type type, void *data, size_t size) {
  size_t k = b->n++;
  snprintf(b->names[k], 64, "%s", name);
  b->tensors[k] = (poot_tensor){.type = type, .data = data, .size = size};
  b->items[k].name = b->names[k];
  b->items[k].tensor = &b->tensors[k];
}

static poot_evaluation *eval_bound(bound *b, const poot_evaluation *prev) {
  if (prev)
    for (uint32_t i = 0; i < prev->num_states; i++)
      add_input(b, prev->states[i].name, prev->states[i].tensor.type, prev->states[i].tensor.data,
                prev->states[i].tensor.size);
  poot_eval_inputs in = {.count = b->n, .items = b->items};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = prev == NULL;
  poot_evaluation *e = NULL;
  POOT_ASSERT_OK(poot_eval(b->g, &in, &eo, &e));
  b->n = b->n_weights;
  return e;
}

static int64_t argmax(const float *x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

enum { NSEQ = 3, CAP = 16, BS = 4, NB = 14, STEPS = 6, VOCAB = 512 };
static const int prompt_len[NSEQ] = {5, 9, 3};
static const int32_t tables[NSEQ][CAP / BS] = {{0, 3, 6, 9}, {1, 4, 7, 10}, {13, 5, 8, 11}};

static void prompt_of(int s, int32_t *out) {
  out[0] = 1;
  for (int i = 1; i < prompt_len[s]; i++) out[i] = (int32_t)(17 + 31 * s + 7 * i) % VOCAB;
}

static void test_paged_matches_contiguous(void **state) {
  (void)state;
  poot_model *m = open_stories();
  static float ref[NSEQ][STEPS][VOCAB];
  int32_t ref_tok[NSEQ][STEPS];
  /* Each sequence alone, contiguous KV. */
  for (int s = 0; s < NSEQ; s++) {
    int32_t prompt[16];
    prompt_of(s, prompt);
    poot_model_step ps = {.batch = 1, .tokens = prompt_len[s], .cap = CAP};
    poot_model_step ds = {.batch = 1, .tokens = 1, .cap = CAP};
    bound pre, dec;
    bind_graph(&pre, m, &ps);
    bind_graph(&dec, m, &ds);
    int64_t td[2] = {1, prompt_len[s]}, one = 1, td1[2] = {1, 1};
    int32_t pos = 0;
    add_input(&pre, "token", poot_type_make(POOT_DTYPE_I32, 2, td), prompt,
              (size_t)prompt_len[s] * 4);
    add_input(&pre, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
    poot_evaluation *e = eval_bound(&pre, NULL);
    pos = prompt_len[s];
    for (int k = 0; k < STEPS; k++) {
      memcpy(ref[s][k], e->output.data, sizeof ref[s][k]);
      int32_t t = (int32_t)argmax(ref[s][k], VOCAB);
      ref_tok[s][k] = t;
      if (k == STEPS - 1) break;
      add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, td1), &t, 4);
      add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
      poot_evaluation *e2 = eval_bound(&dec, e);
      poot_evaluation_destroy(e);
      e = e2;
      pos++;
    }
    poot_evaluation_destroy(e);
    poot_graph_destroy(pre.g);
    poot_graph_destroy(dec.g);
  }
  /* One shared pool: each prefill alone (B = 1, paged), then all three
   * sequences decoded together (B = 3). */
  poot_evaluation *pool = NULL;
  int32_t pos[NSEQ];
  for (int s = 0; s < NSEQ; s++) {
    int32_t prompt[16], wm[16];
    prompt_of(s, prompt);
    for (int i = 0; i < prompt_len[s]; i++) wm[i] = tables[s][i / BS] * BS + i % BS;
    poot_model_step ps = {.batch = 1,
                          .tokens = prompt_len[s],
                          .cap = CAP,
                          .paged = true,
                          .block_size = BS,
                          .num_blocks = NB};
    bound pre;
    bind_graph(&pre, m, &ps);
    int64_t td[2] = {1, prompt_len[s]}, one = 1, sd[2] = {1, CAP / BS}, wn = prompt_len[s];
    int32_t p0 = 0;
    add_input(&pre, "token", poot_type_make(POOT_DTYPE_I32, 2, td), prompt,
              (size_t)prompt_len[s] * 4);
    add_input(&pre, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &p0, 4);
    add_input(&pre, "slot_map", poot_type_make(POOT_DTYPE_I32, 2, sd), (void *)tables[s],
              sizeof tables[s]);
    add_input(&pre, "write_map", poot_type_make(POOT_DTYPE_I32, 1, &wn), wm, (size_t)wn * 4);
    poot_evaluation *e = eval_bound(&pre, pool);
    if (memcmp(e->output.data, ref[s][0], sizeof ref[s][0]) != 0)
      fail_msg("sequence %d: paged prefill logits differ from contiguous", s);
    poot_evaluation_destroy(pool);
    pool = e;
    pos[s] = prompt_len[s];
    poot_graph_destroy(pre.g);
  }
  poot_model_step ds = {
      .batch = NSEQ, .tokens = 1, .cap = CAP, .paged = true, .block_size = BS, .num_blocks = NB};
  bound dec;
  bind_graph(&dec, m, &ds);
  for (int k = 1; k < STEPS; k++) {
    int32_t tok[NSEQ], wm[NSEQ];
    for (int s = 0; s < NSEQ; s++) {
      tok[s] = ref_tok[s][k - 1];
      wm[s] = tables[s][pos[s] / BS] * BS + pos[s] % BS;
    }
    int64_t td[2] = {NSEQ, 1}, nb = NSEQ, sd[2] = {NSEQ, CAP / BS};
    add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, td), tok, sizeof tok);
    add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &nb), pos, sizeof pos);
    add_input(&dec, "slot_map", poot_type_make(POOT_DTYPE_I32, 2, sd), (void *)tables,
              sizeof tables);
    add_input(&dec, "write_map", poot_type_make(POOT_DTYPE_I32, 1, &nb), wm, sizeof wm);
    poot_evaluation *e = eval_bound(&dec, pool);
    const float *out = e->output.data;
    for (int s = 0; s < NSEQ; s++)
      if (memcmp(out + (size_t)s * VOCAB, ref[s][k], sizeof ref[s][k]) != 0)
        fail_msg("sequence %d, step %d: paged batch logits differ from contiguous", s, k);
    poot_evaluation_destroy(pool);
    pool = e;
    for (int s = 0; s < NSEQ; s++) pos[s]++;
  }
  poot_evaluation_destroy(pool);
  poot_graph_destroy(dec.g);
  poot_model_destroy(m);
}

/* Contiguous batches: two sequences prefilled and decoded together (B = 2)
 * give bit for bit what each gives alone (B = 1). */
static void test_contiguous_batch_matches_single(void **state) {
  (void)state;
  poot_model *m = open_stories();
  enum { T = 4, K = 4 };
  int32_t prompts[2][T] = {{1, 403, 407, 261}, {1, 66, 300, 17}};
  static float alone[2][K][VOCAB];
  int32_t next[2][K];
  int64_t one = 1, td[2] = {1, T}, td1[2] = {1, 1};
  for (int s = 0; s < 2; s++) {
    poot_model_step ps = {.batch = 1, .tokens = T, .cap = 12};
    poot_model_step ds = {.batch = 1, .tokens = 1, .cap = 12};
    bound pre, dec;
    bind_graph(&pre, m, &ps);
    bind_graph(&dec, m, &ds);
    int32_t pos = 0;
    add_input(&pre, "token", poot_type_make(POOT_DTYPE_I32, 2, td), prompts[s], sizeof prompts[s]);
    add_input(&pre, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
    poot_evaluation *e = eval_bound(&pre, NULL);
    for (int k = 0; k < K; k++) {
      memcpy(alone[s][k], e->output.data, sizeof alone[s][k]);
      next[s][k] = (int32_t)argmax(alone[s][k], VOCAB);
      if (k == K - 1) break;
      pos = T + k;
      add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, td1), &next[s][k], 4);
      add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
      poot_evaluation *e2 = eval_bound(&dec, e);
      poot_evaluation_destroy(e);
      e = e2;
    }
    poot_evaluation_destroy(e);
    poot_graph_destroy(pre.g);
    poot_graph_destroy(dec.g);
  }
  poot_model_step ps = {.batch = 2, .tokens = T, .cap = 12};
  poot_model_step ds = {.batch = 2, .tokens = 1, .cap = 12};
  bound pre, dec;
  bind_graph(&pre, m, &ps);
  bind_graph(&dec, m, &ds);
  int64_t two = 2, bt[2] = {2, T}, b1[2] = {2, 1};
  int32_t pos2[2] = {0, 0};
  add_input(&pre, "token", poot_type_make(POOT_DTYPE_I32, 2, bt), prompts, sizeof prompts);
  add_input(&pre, "pos", poot_type_make(POOT_DTYPE_I32, 1, &two), pos2, sizeof pos2);
  poot_evaluation *e = eval_bound(&pre, NULL);
  for (int k = 0; k < K; k++) {
    for (int s = 0; s < 2; s++)
      if (memcmp((const float *)e->output.data + (size_t)s * VOCAB, alone[s][k],
                 sizeof alone[s][k]) != 0)
        fail_msg("sequence %d, step %d: the B = 2 batch differs from B = 1", s, k);
    if (k == K - 1) break;
    int32_t tok[2] = {next[0][k], next[1][k]};
    pos2[0] = pos2[1] = T + k;
    add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, b1), tok, sizeof tok);
    add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &two), pos2, sizeof pos2);
    poot_evaluation *e2 = eval_bound(&dec, e);
    poot_evaluation_destroy(e);
    e = e2;
  }
  poot_evaluation_destroy(e);
  poot_graph_destroy(pre.g);
  poot_graph_destroy(dec.g);
  poot_model_destroy(m);
}

/* ------------------------------------------------------------ fault paths */

static void test_faults(void **state) {
  (void)state;
  poot_model *m = open_stories();
  /* Contiguous: pos = cap is past the capacity. */
  poot_model_step ds = {.batch = 1, .tokens = 1, .cap = 8};
  bound dec;
  bind_graph(&dec, m, &ds);
  int64_t td[2] = {1, 1}, one = 1;
  int32_t tok = 5, pos = 8;
  add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, td), &tok, 4);
  add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
  poot_eval_inputs in = {.count = dec.n, .items = dec.items};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = true;
  poot_eval_fault fault;
  memset(&fault, 0, sizeof fault);
  eo.out_fault = &fault;
  poot_evaluation *e = NULL;
  POOT_ASSERT_STATUS(poot_eval(dec.g, &in, &eo, &e), POOT_KERNEL_FAULT);
  assert_int_equal(fault.trap, POOT_TRAP_POS_OUT_OF_RANGE);
  /* A token id outside the vocabulary. */
  pos = 0;
  tok = 512;
  memset(&fault, 0, sizeof fault);
  POOT_ASSERT_STATUS(poot_eval(dec.g, &in, &eo, &e), POOT_KERNEL_FAULT);
  assert_int_equal(fault.trap, POOT_TRAP_TOKEN_OUT_OF_RANGE);
  poot_graph_destroy(dec.g);
  /* Paged: a write-map row past the pool. */
  poot_model_step ps = {
      .batch = 1, .tokens = 1, .cap = 8, .paged = true, .block_size = 4, .num_blocks = 2};
  bind_graph(&dec, m, &ps);
  int32_t table[2] = {0, 1}, wm = 8;
  int64_t sd[2] = {1, 2};
  tok = 5;
  add_input(&dec, "token", poot_type_make(POOT_DTYPE_I32, 2, td), &tok, 4);
  add_input(&dec, "pos", poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4);
  add_input(&dec, "slot_map", poot_type_make(POOT_DTYPE_I32, 2, sd), table, sizeof table);
  add_input(&dec, "write_map", poot_type_make(POOT_DTYPE_I32, 1, &one), &wm, 4);
  in = (poot_eval_inputs){.count = dec.n, .items = dec.items};
  memset(&fault, 0, sizeof fault);
  POOT_ASSERT_STATUS(poot_eval(dec.g, &in, &eo, &e), POOT_KERNEL_FAULT);
  assert_int_equal(fault.trap, POOT_TRAP_WRITE_MAP_OUT_OF_RANGE);
  poot_graph_destroy(dec.g);
  /* The runner refuses an empty prompt and a capacity below prompt + N. */
  poot_verify_evaluator ev = poot_verify_oracle();
  poot_verify_greedy_result r;
  poot_token p1 = 1;
  POOT_ASSERT_STATUS(poot_verify_greedy(m, &ev, &p1, 0, NULL, &r), POOT_INVALID_ARGUMENT);
  poot_verify_greedy_options o = poot_verify_greedy_options_default();
  o.max_new_tokens = 10;
  o.cap = 4;
  POOT_ASSERT_STATUS(poot_verify_greedy(m, &ev, &p1, 1, &o, &r), POOT_INVALID_ARGUMENT);
  poot_model_destroy(m);
}

int main(void) {
  if (!poot_test_data_path("models/stories260K/stories260K.bin", g_model, sizeof g_model) ||
      !poot_test_data_path("models/stories260K/tok512.bin", g_tok, sizeof g_tok) ||
      !poot_test_data_path("README.md", g_readme, sizeof g_readme))
    return poot_test_skip("stories260K test data is absent");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stories_greedy),
      cmocka_unit_test(test_gguf_matches_llama2c),
      cmocka_unit_test(test_paged_matches_contiguous),
      cmocka_unit_test(test_contiguous_batch_matches_single),
      cmocka_unit_test(test_faults),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
