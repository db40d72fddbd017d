/* The input_embeds step option (poot_model_step.input_embeds,
 * src/llm/models/trace.c) for every family, on poot_eval with random
 * weights, at B = 2, T = 4:
 *  - the graph declares the named slots "embeds" f32[B, T, hidden] and
 *    "embeds_on" i32[B, T]; two traces give one structural hash, another
 *    than the plain step's;
 *  - rows equal to the tokens' own embedding rows (times √hidden for
 *    Gemma 3, whose scale Hugging Face applies inside the embedding module;
 *    unscaled for the others, Gemma and Gemma 2 included, whose models scale
 *    inputs_embeds) at placeholder tokens give the plain graph's logits bit
 *    for bit;
 *  - a row of another token's embedding gives the logits of that token;
 *  - rows whose embeds_on is 0 are ignored even when NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/model.h"
#include "poot_test.h"

static const poot_model_family all_families[] = {
    POOT_MODEL_FAMILY_LLAMA,  POOT_MODEL_FAMILY_MISTRAL, POOT_MODEL_FAMILY_QWEN2,
    POOT_MODEL_FAMILY_QWEN3,  POOT_MODEL_FAMILY_GEMMA,   POOT_MODEL_FAMILY_GEMMA2,
    POOT_MODEL_FAMILY_GEMMA3, POOT_MODEL_FAMILY_PHI3,
};
#define N_FAM (sizeof all_families / sizeof all_families[0])

enum { B = 2, T = 4, CAP = 8 };

/* A small config with each family's features (as families_test.c's). */
static void small_config(poot_model_family f, poot_model_config *c) {
  poot_model_config_init(c, f);
  c->vocab_size = 40;
  c->hidden_size = 24;
  c->intermediate_size = 20;
  c->n_layers = 2;
  c->n_heads = 4;
  c->n_kv_heads = 2;
  c->head_dim = 8;
  c->rope_dims = 8;
  switch (f) {
    case POOT_MODEL_FAMILY_MISTRAL:
      c->sliding_window = 3;
      break;
    case POOT_MODEL_FAMILY_GEMMA2:
      c->attn_softcap = 50;
      c->final_softcap = 30;
      c->sliding_window = 3;
      c->any_layer_sliding_marked = true;
      c->layer_sliding[0] = 1;
      break;
    case POOT_MODEL_FAMILY_GEMMA3:
      c->sliding_window = 3;
      c->any_layer_sliding_marked = true;
      c->layer_sliding[0] = 1;
      break;
    case POOT_MODEL_FAMILY_PHI3:
      c->rope_dims = 6; /* partial rotary */
      break;
    default:
      break;
  }
}

typedef struct weights {
  poot_eval_input items[128];
  poot_tensor tensors[128];
  char names[128][64];
  float *bufs[128];
  size_t n;
  const float *table; /* token_embd, f32[vocab, hidden] */
} weights;

static void add(weights *w, const char *name, poot_type type, void *data, size_t size) {
  assert_true(w->n < 128);
  size_t k = w->n++;
  snprintf(w->names[k], 64, "%s", name);
  w->tensors[k] = (poot_tensor){.type = type, .data = data, .size = size};
  w->items[k] = (poot_eval_input){w->names[k], &w->tensors[k]};
}

/* Random f32 weights for every Weight leaf of g (norms near 1). */
static void random_weights(weights *w, const poot_graph *g, uint64_t seed) {
  memset(w, 0, sizeof *w);
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    const poot_type *t = poot_graph_value_type(g, nd->results[0]);
    int64_t count = 0;
    POOT_ASSERT_OK(poot_shape_elements(&t->shape, &count));
    float *buf = malloc((size_t)count * sizeof(float));
    assert_non_null(buf);
    bool is_norm = t->shape.rank == 1 && strstr(nd->weight.name, "norm");
    poot_test_fill_random(buf, (size_t)count, seed + w->n, is_norm ? 0.8f : -0.5f,
                          is_norm ? 1.2f : 0.5f);
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, nd, &sb);
    if (strcmp(sb.data, "token_embd") == 0) w->table = buf;
    w->bufs[w->n] = buf;
    add(w, sb.data, *t, buf, (size_t)count * sizeof(float));
  }
  poot_strbuf_deinit(&sb);
  assert_non_null(w->table);
}

static void free_weights(weights *w) {
  for (size_t i = 0; i < w->n; i++) free(w->bufs[i]);
}

/* Evaluates g (weights w, then tokens, pos 0 for both sequences, and the
 * row slots when embeds is not NULL) from zeroed states; the logits into
 * out[B * vocab]. */
static void eval_logits(const poot_graph *g, weights *w, const int32_t *tokens, const float *embeds,
                        const int32_t *on, int64_t H, int64_t V, float *out) {
  size_t nw = w->n;
  int64_t td[2] = {B, T}, ed[3] = {B, T, H}, two = B;
  int32_t pos[B] = {0, 0};
  add(w, "token", poot_type_make(POOT_DTYPE_I32, 2, td), (void *)tokens, B * T * 4);
  add(w, "pos", poot_type_make(POOT_DTYPE_I32, 1, &two), pos, sizeof pos);
  if (embeds) {
    add(w, POOT_MODEL_SLOT_EMBEDS, poot_type_make(POOT_DTYPE_F32, 3, ed), (void *)embeds,
        (size_t)(B * T * H) * sizeof(float));
    add(w, POOT_MODEL_SLOT_EMBEDS_ON, poot_type_make(POOT_DTYPE_I32, 2, td), (void *)on, B * T * 4);
  }
  poot_eval_inputs ei = {.count = w->n, .items = w->items};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = true;
  poot_evaluation *e = NULL;
  POOT_ASSERT_OK(poot_eval(g, &ei, &eo, &e));
  assert_int_equal(e->output.size, (size_t)(B * V) * sizeof(float));
  memcpy(out, e->output.data, e->output.size);
  poot_evaluation_destroy(e);
  w->n = nw;
}

/* The graph's leaf named `name` must be a named slot of type `want`. */
static void expect_slot(const poot_graph *g, const char *name, const poot_type *want) {
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  bool found = false;
  for (uint32_t i = 0; i < root->num_nodes && !found; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_SLOT) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, nd, &sb);
    if (strcmp(sb.data, name) != 0) continue;
    found = true;
    assert_int_equal(nd->slot_kind, POOT_SLOT_NAMED);
    assert_true(poot_type_equal(poot_graph_value_type(g, nd->results[0]), want));
  }
  poot_strbuf_deinit(&sb);
  if (!found) fail_msg("no slot '%s'", name);
}

static uint64_t hash_of(const poot_model_config *c, const poot_model_step *s) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(c, s, NULL, &g));
  uint64_t h = 0;
  POOT_ASSERT_OK(poot_graph_hash(g, &h));
  poot_graph_destroy(g);
  return h;
}

static void assert_same_logits(const char *fam, const char *what, const float *a, const float *b,
                               size_t n) {
  for (size_t k = 0; k < n; k++)
    if (memcmp(&a[k], &b[k], sizeof a[k]) != 0)
      fail_msg("%s, %s: logit %zu is %.9g, the tokens' %.9g", fam, what, k, a[k], b[k]);
}

static void check_family(poot_model_family f) {
  poot_model_config c;
  small_config(f, &c);
  const char *fam = poot_model_family_name(f);
  const int64_t H = c.hidden_size, V = c.vocab_size;
  poot_model_step plain = {.batch = B, .tokens = T, .cap = CAP};
  poot_model_step rows = plain;
  rows.input_embeds = true;
  assert_true(hash_of(&c, &rows) == hash_of(&c, &rows));
  assert_true(hash_of(&c, &rows) != hash_of(&c, &plain));
  poot_graph *gp = NULL, *gr = NULL;
  POOT_ASSERT_OK(poot_model_trace(&c, &plain, NULL, &gp));
  POOT_ASSERT_OK(poot_model_trace(&c, &rows, NULL, &gr));
  poot_type et = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){B, T, H});
  poot_type ot = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){B, T});
  expect_slot(gr, POOT_MODEL_SLOT_EMBEDS, &et);
  expect_slot(gr, POOT_MODEL_SLOT_EMBEDS_ON, &ot);
  weights wp, wr;
  random_weights(&wp, gp, 4242);
  random_weights(&wr, gr, 4242); /* the same leaves in the same order: the same values */
  assert_int_equal(wp.n, wr.n);
  for (size_t k = 0; k < wp.n; k++) {
    assert_string_equal(wp.names[k], wr.names[k]);
    assert_memory_equal(wp.bufs[k], wr.bufs[k], wp.tensors[k].size);
  }
  /* Gemma 3's rows are taken as scaled (HF: the scale is in its embedding). */
  const float scale = f == POOT_MODEL_FAMILY_GEMMA3 ? (float)sqrt((double)H) : 1.0f;

  const int32_t toks[B * T] = {1, 5, 9, 2, 33, 7, 3, 11};
  float *want = malloc((size_t)(B * V) * sizeof(float));
  float *got = malloc((size_t)(B * V) * sizeof(float));
  float *emb = malloc((size_t)(B * T * H) * sizeof(float));
  assert_true(want && got && emb);
  eval_logits(gp, &wp, toks, NULL, NULL, H, V, want);

  /* (a) Every row its own embedding, at placeholder tokens 0. */
  int32_t zeros[B * T] = {0}, on[B * T];
  for (int i = 0; i < B * T; i++) {
    on[i] = 1;
    for (int64_t h = 0; h < H; h++) emb[i * H + h] = wr.table[toks[i] * H + h] * scale;
  }
  eval_logits(gr, &wr, zeros, emb, on, H, V, got);
  assert_same_logits(fam, "every row replaced", got, want, (size_t)(B * V));

  /* (b) Rows off (NaN where off): the tokens' own embeddings. */
  for (int64_t i = 0; i < B * T * H; i++) emb[i] = NAN;
  memset(on, 0, sizeof on);
  eval_logits(gr, &wr, toks, emb, on, H, V, got);
  assert_same_logits(fam, "rows off", got, want, (size_t)(B * V));

  /* (c) Token 20's row at (1, 2) and (0, 0): the logits of those tokens. */
  int32_t other[B * T];
  memcpy(other, toks, sizeof other);
  other[1 * T + 2] = 20;
  other[0] = 20;
  eval_logits(gp, &wp, other, NULL, NULL, H, V, want);
  const int at[2] = {1 * T + 2, 0};
  for (int k = 0; k < 2; k++) {
    on[at[k]] = 1;
    for (int64_t h = 0; h < H; h++) emb[at[k] * H + h] = wr.table[20 * H + h] * scale;
  }
  eval_logits(gr, &wr, toks, emb, on, H, V, got);
  assert_same_logits(fam, "two rows of token 20", got, want, (size_t)(B * V));
  printf("%s: input rows give the tokens' logits bit for bit\n", fam);

  free(want);
  free(got);
  free(emb);
  free_weights(&wp);
  free_weights(&wr);
  poot_graph_destroy(gp);
  poot_graph_destroy(gr);
}

static void test_every_family(void **state) {
  (void)state;
  for (size_t i = 0; i < N_FAM; i++) check_family(all_families[i]);
}

/* The paged step and the hidden-state output trace with rows too. */
static void test_paged_and_hidden(void **state) {
  (void)state;
  for (size_t i = 0; i < N_FAM; i++) {
    poot_model_config c;
    small_config(all_families[i], &c);
    poot_model_step s = {.batch = B,
                         .tokens = T,
                         .cap = CAP,
                         .paged = true,
                         .block_size = 4,
                         .num_blocks = 4,
                         .input_embeds = true};
    poot_graph *g = NULL;
    POOT_ASSERT_OK(poot_model_trace(&c, &s, NULL, &g));
    poot_type et = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){B, T, c.hidden_size});
    expect_slot(g, POOT_MODEL_SLOT_EMBEDS, &et);
    poot_graph_destroy(g);
    s.paged = false;
    s.output = POOT_MODEL_OUTPUT_HIDDEN;
    POOT_ASSERT_OK(poot_model_trace(&c, &s, NULL, &g));
    expect_slot(g, POOT_MODEL_SLOT_EMBEDS, &et);
    poot_graph_destroy(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_family),
      cmocka_unit_test(test_paged_and_hidden),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
