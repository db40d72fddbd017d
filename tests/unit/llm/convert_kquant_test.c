/* convert_kquant_test.c — `poot convert --type q4_k_m` (and q5_k_m, q6_k)
 * end to end (src/llm/format/convert_mix.c, the k-quant quantizers of
 * src/graph/quant.c):
 *  - the bundled demo model (hidden 256, FFN 512, 6 layers, tied embedding)
 *    to q4_k_m, q5_k_m and q6_k: every tensor's type is the rule's
 *    (token_embd q6_k as it is the output; attn_v and ffn_down q6_k in
 *    layers 2 and 5, the layers of use_more_bits for 6 layers), and
 *    general.file_type 15, 17, 18;
 *  - stories260K (dim 64, FFN 172: no row is a multiple of 256) to q4_k_m:
 *    the fallbacks q5_0 (q4_k), q8_0 (q6_k) and f16 (172 columns);
 *  - a one-layer Hugging Face llama of hidden 256 with and without lm_head:
 *    output q6_k and embedding q4_k, or (tied) the embedding q6_k;
 *  - greedy generation from the q4_k_m files on the oracle (poot_eval) and
 *    on the device the argument names ("vulkan": lavapipe in CI) gives the
 *    same ids (a flip allowed only where the oracle's top-two margin is
 *    inside 2·tol, driver_test.c's bound), and the logits after the prompt
 *    agree within tol. SKIP without the device;
 *  - the same on the demo model with ffn_up as q2_k and ffn_gate as q3_k
 *    (random blocks): GGUF types 10 and 11 load and run on both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/llm/convert.h"
#include "poot/llm/driver.h"
#include "poot/llm/store.h"
#include "poot/llm/verify.h"
#include "poot_test.h"

static const char *g_spec = "vulkan";

static bool exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

typedef struct expect {
  const char *suffix; /* the end of a tensor name; NULL: every other 2-D tensor */
  int layer;          /* -1: any */
  poot_gguf_type type;
} expect;

/* The type the rule table gives `name` (the first match). */
static poot_gguf_type expected(const expect *rules, const char *name) {
  for (const expect *r = rules;; r++) {
    if (!r->suffix) return r->type;
    /* The suffix is whole name parts: "output.weight" is not in
     * "blk.0.attn_output.weight". */
    size_t n = strlen(name), m = strlen(r->suffix);
    if (n < m || strcmp(name + n - m, r->suffix) != 0 || (n > m && name[n - m - 1] != '.'))
      continue;
    if (r->layer >= 0) {
      char prefix[32];
      snprintf(prefix, sizeof prefix, "blk.%d.", r->layer);
      if (strncmp(name, prefix, strlen(prefix)) != 0) continue;
    }
    return r->type;
  }
}

/* Converts `in` with --type `type` to `out` and checks each tensor against
 * `rules` (1-D tensors f32) and general.file_type. */
static void convert_and_check(const char *in, const char *tok, const char *type, const char *out,
                              const expect *rules, uint32_t file_type) {
  poot_convert_options o = {.tokenizer_path = tok, .type_set = true};
  POOT_ASSERT_OK(poot_convert_type_from_name(type, &o.type, &o.mixture));
  POOT_ASSERT_OK(poot_convert_to_gguf(in, out, &o));
  poot_store *store = NULL;
  POOT_ASSERT_OK(poot_store_open(out, &store));
  size_t n = poot_store_tensor_count(store), k_quants = 0;
  for (size_t i = 0; i < n; i++) {
    const poot_store_tensor *t = poot_store_tensor_at(store, i);
    poot_gguf_type want = t->shape.rank == 1 ? POOT_GGUF_TYPE_F32 : expected(rules, t->name);
    if (t->gguf_type != (int32_t)want)
      fail_msg("%s: %s is %s, the rule says %s", type, t->name, t->type_name,
               poot_gguf_type_info_of(want)->name);
    if (want == POOT_GGUF_TYPE_Q4_K || want == POOT_GGUF_TYPE_Q5_K || want == POOT_GGUF_TYPE_Q6_K)
      k_quants++;
  }
  uint32_t ft = 0;
  POOT_ASSERT_OK(poot_gguf_get_u32(poot_store_gguf(store), "general.file_type", &ft));
  assert_int_equal(ft, file_type);
  printf("%s: %zu tensors as the rule says, %zu of them k-quants, file type %u\n", type, n,
         k_quants, ft);
  poot_store_destroy(store);
}

/* The demo model's rules: layers 2 and 5 use more bits (n = 6). */
#define DEMO_RULES(base, more)                                                               \
  {                                                                                          \
    {"token_embd.weight", -1, more}, {"attn_v.weight", 2, more}, {"attn_v.weight", 5, more}, \
        {"ffn_down.weight", 2, more}, {"ffn_down.weight", 5, more}, {                        \
      NULL, -1, base                                                                         \
    }                                                                                        \
  }

static bool demo_path(char *buf, size_t size) {
  snprintf(buf, size, "%s/models/poot-demo.gguf", poot_test_source_dir());
  return exists(buf);
}

static void test_demo_types(void **state) {
  (void)state;
  char in[1024], out[1100];
  if (!demo_path(in, sizeof in)) skip();
  const expect q4km[] = DEMO_RULES(POOT_GGUF_TYPE_Q4_K, POOT_GGUF_TYPE_Q6_K);
  const expect q5km[] = DEMO_RULES(POOT_GGUF_TYPE_Q5_K, POOT_GGUF_TYPE_Q6_K);
  const expect q6k[] = {{NULL, -1, POOT_GGUF_TYPE_Q6_K}};
  snprintf(out, sizeof out, "%s/demo-q5_k_m.gguf", poot_test_tmpdir());
  convert_and_check(in, NULL, "q5_k_m", out, q5km, 17);
  snprintf(out, sizeof out, "%s/demo-q6_k.gguf", poot_test_tmpdir());
  convert_and_check(in, NULL, "Q6_K", out, q6k, 18);
  snprintf(out, sizeof out, "%s/demo-q4_k_m.gguf", poot_test_tmpdir());
  convert_and_check(in, NULL, "q4_k_m", out, q4km, 15);
  /* Not a type convert writes: the message lists the ones it does. */
  poot_gguf_type t;
  poot_convert_mixture m;
  POOT_ASSERT_STATUS_MSG(poot_convert_type_from_name("q3_k_m", &t, &m), POOT_INVALID_ARGUMENT,
                         "q4_k_m q5_k_m");
}

/* stories260K: layers 2 and 4 use more bits (n = 5); output.weight is
 * written (a shared classifier), so token_embd takes the base type. */
static void test_stories_types(void **state) {
  (void)state;
  char in[1024], tok[1024], out[1100];
  if (!poot_test_data_path("models/stories260K/stories260K.bin", in, sizeof in) ||
      !poot_test_data_path("models/stories260K/tok512.bin", tok, sizeof tok)) {
    printf("SKIP stories260K: the data files are absent\n");
    skip();
  }
  const expect rules[] = {{"output.weight", -1, POOT_GGUF_TYPE_Q8_0},
                          {"ffn_down.weight", -1, POOT_GGUF_TYPE_F16},
                          {"attn_v.weight", 2, POOT_GGUF_TYPE_Q8_0},
                          {"attn_v.weight", 4, POOT_GGUF_TYPE_Q8_0},
                          {NULL, -1, POOT_GGUF_TYPE_Q5_0}};
  snprintf(out, sizeof out, "%s/stories-q4_k_m.gguf", poot_test_tmpdir());
  convert_and_check(in, tok, "q4_k_m", out, rules, 15);
}

/* A one-layer Hugging Face llama folder of hidden size 256 (every row a
 * k-quant block), with lm_head.weight (tied false) or without it (tied). */
static void write_hf_folder(const char *dir, bool tied) {
  enum { H = 256, V = 4 };
  static const char *const names[] = {"model.embed_tokens.weight",
                                      "model.layers.0.input_layernorm.weight",
                                      "model.layers.0.self_attn.q_proj.weight",
                                      "model.layers.0.self_attn.k_proj.weight",
                                      "model.layers.0.self_attn.v_proj.weight",
                                      "model.layers.0.self_attn.o_proj.weight",
                                      "model.layers.0.post_attention_layernorm.weight",
                                      "model.layers.0.mlp.gate_proj.weight",
                                      "model.layers.0.mlp.up_proj.weight",
                                      "model.layers.0.mlp.down_proj.weight",
                                      "model.norm.weight",
                                      "lm_head.weight"};
  size_t count = sizeof names / sizeof names[0] - (tied ? 1 : 0);
  assert_int_equal(poot_test_system("rm -rf '%s' && mkdir -p '%s'", dir, dir), 0);
  poot_strbuf h;
  poot_strbuf_init(&h);
  poot_strbuf_puts(&h, "{");
  uint64_t off = 0;
  for (size_t i = 0; i < count; i++) {
    bool vec = strstr(names[i], "norm") != NULL;
    int64_t rows = vec ? 0 : strstr(names[i], "embed") || strstr(names[i], "lm_head") ? V : H;
    uint64_t bytes = (uint64_t)(vec ? H : rows * H) * 4;
    if (vec)
      poot_strbuf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%d],", i ? "," : "", names[i],
                         H);
    else
      poot_strbuf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%d],", i ? "," : "",
                         names[i], (long long)rows, H);
    poot_strbuf_printf(&h, "\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                       (unsigned long long)(off + bytes));
    off += bytes;
  }
  poot_strbuf_puts(&h, "}");
  POOT_ASSERT_OK(poot_strbuf_status(&h));
  size_t size = 8 + h.len + (size_t)off;
  char *buf = calloc(1, size);
  assert_non_null(buf);
  uint64_t hl = h.len;
  memcpy(buf, &hl, 8);
  memcpy(buf + 8, h.data, h.len);
  /* The data follow the header at any byte offset: copied, not stored as
   * floats. */
  for (size_t i = 0; i < (size_t)off / 4; i++) {
    float v = 0.01f * (float)((i * 7919u) % 13) - 0.06f;
    memcpy(buf + 8 + h.len + 4 * i, &v, 4);
  }
  char path[1200];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  POOT_ASSERT_OK(poot_file_write_all(path, buf, size));
  free(buf);
  poot_strbuf_deinit(&h);
  char config[1024];
  snprintf(config, sizeof config,
           "{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], "
           "\"vocab_size\": %d, \"hidden_size\": %d, \"intermediate_size\": %d, "
           "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 2, "
           "\"rms_norm_eps\": 1e-5, \"rope_theta\": 10000.0, \"max_position_embeddings\": 64, "
           "\"tie_word_embeddings\": %s, \"bos_token_id\": 0, \"eos_token_id\": 1}",
           V, H, H, tied ? "true" : "false");
  snprintf(path, sizeof path, "%s/config.json", dir);
  POOT_ASSERT_OK(poot_file_write_all(path, config, strlen(config)));
  static const char tok[] =
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3}, "
      "\"merges\": []}}";
  snprintf(path, sizeof path, "%s/tokenizer.json", dir);
  POOT_ASSERT_OK(poot_file_write_all(path, tok, strlen(tok)));
}

/* Hugging Face input: with lm_head the output is q6_k and the embedding
 * q4_k; tied (no lm_head) the embedding is q6_k. One layer uses more bits
 * (7·1/8 = 0). */
static void test_hf_types(void **state) {
  (void)state;
  char dir[1024], out[1100];
  const expect untied[] = {{"output.weight", -1, POOT_GGUF_TYPE_Q6_K},
                           {"attn_v.weight", 0, POOT_GGUF_TYPE_Q6_K},
                           {"ffn_down.weight", 0, POOT_GGUF_TYPE_Q6_K},
                           {NULL, -1, POOT_GGUF_TYPE_Q4_K}};
  const expect tied[] = {{"token_embd.weight", -1, POOT_GGUF_TYPE_Q6_K},
                         {"attn_v.weight", 0, POOT_GGUF_TYPE_Q6_K},
                         {"ffn_down.weight", 0, POOT_GGUF_TYPE_Q6_K},
                         {NULL, -1, POOT_GGUF_TYPE_Q4_K}};
  for (int t = 0; t < 2; t++) {
    snprintf(dir, sizeof dir, "%s/hf-%s", poot_test_tmpdir(), t ? "tied" : "untied");
    snprintf(out, sizeof out, "%s.gguf", dir);
    write_hf_folder(dir, t == 1);
    convert_and_check(dir, NULL, "q4_k_m", out, t ? tied : untied, 15);
    poot_store *store = NULL;
    POOT_ASSERT_OK(poot_store_open(out, &store));
    const poot_store_tensor *o = NULL;
    poot_status st = poot_store_find(store, "output.weight", &o);
    assert_int_equal(st == NULL, t == 0);
    poot_status_free(st);
    poot_store_destroy(store);
  }
}

/* Greedy ids of `path` from `prompt` on the oracle and the device. */
static void greedy_both(const char *path, const char *prompt, int64_t n) {
  const int64_t cap = 64;
  poot_model *model = NULL;
  POOT_ASSERT_OK(poot_model_open(path, NULL, &model));
  poot_device *dev = NULL;
  poot_device_open_options dopts = {.validation = true};
  poot_status s = poot_device_open(g_spec, &dopts, &dev);
  if (s) {
    printf("SKIP %s: %s\n", g_spec, poot_status_message(s));
    poot_status_free(s);
    poot_model_destroy(model);
    skip();
  }
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(dev, &ex));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = 4;
  poot_driver *drv = NULL;
  POOT_ASSERT_OK(poot_driver_create(ex, model, &dopt, &drv));

  poot_token *ids = NULL;
  size_t np = 0;
  POOT_ASSERT_OK(poot_verify_encode_text(model, prompt, strlen(prompt), &ids, &np));
  poot_verify_greedy_options vo = poot_verify_greedy_options_default();
  vo.max_new_tokens = n;
  vo.cap = cap;
  vo.ignore_stop = true;
  vo.keep_logits = 1;
  poot_verify_evaluator ev = poot_verify_oracle();
  poot_verify_greedy_result ref;
  POOT_ASSERT_OK(poot_verify_greedy(model, &ev, ids, np, &vo, &ref));
  double tol = poot_verify_tolerance(poot_model_get_config(model), cap, ref.logits,
                                     poot_model_get_config(model)->vocab_size, true);
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = n;
  go.no_text = true;
  go.ignore_stop = true;
  poot_driver_generate_result res;
  POOT_ASSERT_OK(poot_driver_generate_ids(drv, ids, np, &go, NULL, NULL, &res));
  assert_int_equal(ref.n_ids, (size_t)n);
  size_t m = res.n_ids < ref.n_ids ? res.n_ids : ref.n_ids, i = 0;
  for (; i < m && res.ids[i] == ref.ids[i]; i++) {
  }
  if (i < m) {
    if (ref.margins[i] > 2.0 * tol)
      fail_msg("%s: step %zu device id %d, oracle id %d, margin %g > 2·tol %g", path, i,
               (int)res.ids[i], (int)ref.ids[i], (double)ref.margins[i], 2.0 * tol);
    printf("%s: allowed flip at step %zu (margin %g, 2·tol %g)\n", path, i, (double)ref.margins[i],
           2.0 * tol);
  } else {
    assert_int_equal(res.n_ids, ref.n_ids);
  }
  printf("%s: %zu of %zu greedy ids on %s equal the oracle's (first ids %d %d %d)\n", path, i,
         (size_t)n, g_spec, (int)ref.ids[0], (int)ref.ids[1], (int)ref.ids[2]);
  /* The logits after the prompt against the oracle's, within tol. */
  int64_t vocab = poot_model_get_config(model)->vocab_size;
  float *lg = poot_malloc((size_t)vocab * sizeof *lg);
  assert_non_null(lg);
  POOT_ASSERT_OK(poot_driver_reset(drv));
  POOT_ASSERT_OK(poot_driver_feed_logits(drv, ids, np, lg));
  double maxd = 0, spread = 0;
  for (int64_t v = 0; v < vocab; v++) {
    double dd = fabs((double)lg[v] - (double)ref.logits[v]);
    if (!(dd <= maxd)) maxd = dd;
    spread = fmax(spread, fabs((double)ref.logits[v] - (double)ref.logits[0]));
  }
  printf("%s: logits max |device - oracle| %.3g (tol %.3g, spread %.3g)\n", path, maxd, tol,
         spread);
  assert_true(maxd <= tol);
  assert_true(spread > 0.1);
  poot_free(lg);
  poot_driver_generate_result_deinit(&res);
  poot_verify_greedy_result_deinit(&ref);
  poot_free(ids);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
#ifdef POOT_HAVE_VULKAN
  if (strcmp(dev->caps.backend, "vulkan") == 0 && poot_vulkan_validation_enabled(dev))
    assert_int_equal(poot_vulkan_validation_messages(dev), 0);
#endif
  poot_device_destroy(dev);
  poot_model_destroy(model);
}

/* The demo model with ffn_up as q2_k and ffn_gate as q3_k blocks (random
 * codes and scales, f16 d ≈ 1e-3 / 4e-4: weights of a few hundredths), every
 * other tensor and key copied: the store, the planner and the device
 * decoders of both formats on a whole model. */
static void write_q23_model(const char *demo, const char *out) {
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(poot_gguf_open(demo, &g));
  poot_gguf_writer *w = NULL;
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  for (size_t i = 0; i < poot_gguf_kv_count(g); i++)
    POOT_ASSERT_OK(poot_gguf_writer_set_value(w, poot_gguf_kv_key(g, i), poot_gguf_kv_value(g, i)));
  size_t n = poot_gguf_tensor_count(g);
  uint8_t **bufs = calloc(n, sizeof *bufs);
  assert_non_null(bufs);
  uint32_t seed = 2026;
  for (size_t i = 0; i < n; i++) {
    const poot_gguf_tensor *t = poot_gguf_tensor_at(g, i);
    bool up = strstr(t->name, "ffn_up.weight") != NULL;
    bool gate = strstr(t->name, "ffn_gate.weight") != NULL;
    if (!up && !gate) {
      POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->dims, t->data));
      continue;
    }
    poot_gguf_type type = up ? POOT_GGUF_TYPE_Q2_K : POOT_GGUF_TYPE_Q3_K;
    uint64_t row = 0;
    assert_true(poot_gguf_row_size(type, t->dims[0], &row));
    size_t bytes = (size_t)(row * t->dims[1]), bb = up ? 84 : 110;
    bufs[i] = malloc(bytes);
    assert_non_null(bufs[i]);
    for (size_t b = 0; b < bytes; b++) {
      seed = seed * 1664525u + 1013904223u;
      bufs[i][b] = (uint8_t)(seed >> 24);
    }
    for (size_t b = 0; b < bytes; b += bb) {
      uint16_t d = poot_f32_to_f16(up ? 1e-3f : 4e-4f), dmin = poot_f32_to_f16(1e-3f);
      memcpy(bufs[i] + b + (up ? 80 : 108), &d, 2);
      if (up) memcpy(bufs[i] + b + 82, &dmin, 2);
    }
    POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, t->name, type, t->n_dims, t->dims, bufs[i]));
  }
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, out));
  poot_gguf_writer_destroy(w);
  for (size_t i = 0; i < n; i++) free(bufs[i]);
  free(bufs);
  poot_gguf_destroy(g);
}

static void test_q2_q3_model(void **state) {
  (void)state;
  char demo[1024], out[1100];
  if (!demo_path(demo, sizeof demo)) skip();
  snprintf(out, sizeof out, "%s/demo-q2q3.gguf", poot_test_tmpdir());
  write_q23_model(demo, out);
  poot_store *store = NULL;
  POOT_ASSERT_OK(poot_store_open(out, &store));
  const poot_store_tensor *t = NULL;
  POOT_ASSERT_OK(poot_store_find(store, "blk.0.ffn_up.weight", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_Q2_K);
  POOT_ASSERT_OK(poot_store_find(store, "blk.5.ffn_gate.weight", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_Q3_K);
  poot_store_destroy(store);
  greedy_both(out, "", 6);
}

static void test_generate(void **state) {
  (void)state;
  char path[1100];
  snprintf(path, sizeof path, "%s/demo-q4_k_m.gguf", poot_test_tmpdir());
  if (!exists(path)) skip();
  greedy_both(path, "", 10);
  snprintf(path, sizeof path, "%s/stories-q4_k_m.gguf", poot_test_tmpdir());
  if (exists(path)) greedy_both(path, "", 10);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_demo_types),  cmocka_unit_test(test_stories_types),
      cmocka_unit_test(test_hf_types),    cmocka_unit_test(test_generate),
      cmocka_unit_test(test_q2_q3_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
