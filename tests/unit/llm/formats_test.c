/* llama2.c checkpoints and tokenizers, safetensors, Hugging Face configs,
 * the weight store and weight maps. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/hf_config.h"
#include "poot/llm/llama2c.h"
#include "poot/llm/safetensors.h"
#include "poot/llm/store.h"
#include "poot/llm/weight_map.h"

static uint32_t bits_at(const float *p, size_t i) {
  uint32_t u;
  memcpy(&u, p + i, 4);
  return u;
}

/* ------------------------------------------------------------- llama2.c */

static void test_stories260k(void **state) {
  (void)state;
  char path[1024];
  if (!poot_test_data_path("models/stories260K/stories260K.bin", path, sizeof path)) skip();
  poot_llama2c *m = NULL;
  POOT_ASSERT_OK(poot_llama2c_open(path, &m));
  const poot_llama2c_config *c = poot_llama2c_config_of(m);
  assert_int_equal(c->dim, 64);
  assert_int_equal(c->n_layers, 5);
  assert_int_equal(c->n_heads, 8);
  assert_int_equal(c->n_kv_heads, 4);
  assert_int_equal(c->hidden_dim, 172);
  assert_int_equal(c->vocab_size, 512);
  assert_int_equal(c->seq_len, 512);
  assert_true(c->shared_classifier);
  /* Embedding, 9 per-layer tensors × 5, final norm; no separate classifier. */
  assert_int_equal(poot_llama2c_tensor_count(m), 47);
  assert_null(poot_llama2c_find(m, "output.weight"));
  const poot_llama2c_tensor *t = poot_llama2c_find(m, "tok_embeddings.weight");
  assert_int_equal(t->shape[0], 512);
  assert_int_equal(t->shape[1], 64);
  assert_int_equal(bits_at(t->data, 0), 0xbe96e950u);
  t = poot_llama2c_find(m, "layers.0.attention_norm.weight");
  assert_int_equal(t->rank, 1);
  assert_int_equal(bits_at(t->data, 0), 0x3f78e4eau);
  t = poot_llama2c_find(m, "layers.0.attention.wq.weight");
  assert_int_equal(bits_at(t->data, 0), 0x3d35d536u);
  t = poot_llama2c_find(m, "layers.1.attention.wk.weight");
  assert_int_equal(t->shape[0], 32); /* 4 kv heads × head size 8 */
  assert_int_equal(t->shape[1], 64);
  t = poot_llama2c_find(m, "layers.4.feed_forward.w2.weight");
  assert_int_equal(t->shape[0], 64);
  assert_int_equal(t->shape[1], 172);
  t = poot_llama2c_find(m, "layers.4.feed_forward.w3.weight");
  assert_int_equal(bits_at(t->data, 172 * 64 - 1), 0x3dd92746u); /* last before the norm */
  t = poot_llama2c_find(m, "norm.weight");
  assert_int_equal(bits_at(t->data, 0), 0x401d54efu);
  poot_llama2c_destroy(m);
}

static void test_llama2c_separate_and_malformed(void **state) {
  (void)state;
  /* dim 4, hidden 6, 1 layer, 2 heads, 1 kv head, vocab -3 (separate), seq 2. */
  int32_t h[7] = {4, 6, 1, 2, 1, -3, 2};
  size_t floats = 3 * 4 + 4 + 16 + 2 * 2 * 4 + 16 + 4 + 3 * 6 * 4 + 4 + 2 * 2 + 3 * 4;
  size_t size = 28 + floats * 4;
  uint8_t *buf = calloc(1, size + 4);
  memcpy(buf, h, 28);
  float *f = (float *)(void *)(buf + 28);
  for (size_t i = 0; i < floats; i++) f[i] = (float)i;
  assert_true(poot_llama2c_probe(buf, size));
  poot_llama2c *m = NULL;
  POOT_ASSERT_OK(poot_llama2c_open_memory(buf, size, "tiny", &m));
  assert_false(poot_llama2c_config_of(m)->shared_classifier);
  assert_int_equal(poot_llama2c_config_of(m)->vocab_size, 3);
  const poot_llama2c_tensor *out = poot_llama2c_find(m, "output.weight");
  assert_non_null(out);
  assert_true(out->data[0] == (float)(floats - 12));
  assert_true(out->data[11] == (float)(floats - 1));
  const poot_llama2c_tensor *norm = poot_llama2c_find(m, "norm.weight");
  assert_true(norm->data[0] == (float)(floats - 12 - 4 - 4));
  poot_llama2c_destroy(m);
  /* One byte too many or too few. */
  assert_false(poot_llama2c_probe(buf, size + 4));
  POOT_ASSERT_STATUS_MSG(poot_llama2c_open_memory(buf, size - 4, "tiny", &m), POOT_FORMAT, "needs");
  assert_null(m);
  /* A bad header field names itself and its offset. */
  int32_t bad = 0;
  memcpy(buf + 12, &bad, 4);
  POOT_ASSERT_STATUS_MSG(poot_llama2c_open_memory(buf, size, "tiny", &m), POOT_FORMAT,
                         "offset 12: header field 'n_heads' is 0");
  POOT_ASSERT_STATUS_MSG(poot_llama2c_open_memory(buf, 10, "tiny", &m), POOT_FORMAT,
                         "header field 'n_layers'");
  free(buf);
}

static void test_llama2c_tokenizer(void **state) {
  (void)state;
  char path[1024];
  if (!poot_test_data_path("models/stories260K/tok512.bin", path, sizeof path)) skip();
  poot_llama2c_vocab *v = NULL;
  POOT_ASSERT_OK(poot_llama2c_vocab_load(path, 512, &v));
  assert_int_equal(v->max_token_length, 7);
  assert_int_equal(v->n_tokens, 512);
  assert_string_equal(v->tokens[0], "<unk>");
  assert_string_equal(v->tokens[1], "\n<s>\n");
  assert_string_equal(v->tokens[2], "\n</s>\n");
  assert_string_equal(v->tokens[3], "<0x00>");
  assert_string_equal(v->tokens[259], " t");
  assert_string_equal(v->tokens[260], "he");
  assert_true(v->scores[260] == -1.0f);
  assert_int_equal(v->token_lens[511], 3);
  assert_memory_equal(v->tokens[511], "\xe2\x80\x8a", 3);
  assert_true(v->scores[511] == -252.0f);
  poot_llama2c_vocab_destroy(v);
  /* The wrong vocabulary size, and truncation at every byte. */
  POOT_ASSERT_STATUS_MSG(poot_llama2c_vocab_load(path, 500, &v), POOT_FORMAT, "follow the last");
  POOT_ASSERT_STATUS(poot_llama2c_vocab_load(path, 513, &v), POOT_FORMAT);
  poot_file_map map;
  POOT_ASSERT_OK(poot_file_map_open(path, &map));
  for (size_t n = 0; n < map.size; n += 7) {
    poot_status s = poot_llama2c_vocab_parse(map.data, n, 512, "tok", &v);
    assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
    poot_status_free(s);
    assert_null(v);
  }
  poot_file_map_close(&map);
}

/* ---------------------------------------------------------- safetensors */

typedef struct st_buf {
  uint8_t *data;
  size_t size;
} st_buf;

/* Builds a safetensors file from a header and `data_size` bytes of data
 * (byte i = i & 255). */
static st_buf make_st(const char *header, size_t data_size) {
  size_t n = strlen(header);
  st_buf b = {malloc(8 + n + data_size), 8 + n + data_size};
  uint64_t len = n;
  memcpy(b.data, &len, 8);
  memcpy(b.data + 8, header, n);
  for (size_t i = 0; i < data_size; i++) b.data[8 + n + i] = (uint8_t)i;
  return b;
}

static void expect_st(const char *header, size_t data_size, poot_status_code code,
                      const char *needle) {
  st_buf b = make_st(header, data_size);
  poot_safetensors *st = NULL;
  POOT_ASSERT_STATUS_MSG(poot_safetensors_open_memory(b.data, b.size, "t.safetensors", &st), code,
                         needle);
  assert_null(st);
  free(b.data);
}

static void test_safetensors_memory(void **state) {
  (void)state;
  const char *header =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[16,28]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
      "\"flag\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[28,31]},"
      "\"scalar\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[32,40]},"
      "\"empty\":{\"dtype\":\"I8\",\"shape\":[0,4],\"data_offsets\":[40,40]}}";
  st_buf b = make_st(header, 40);
  poot_safetensors *st = NULL;
  POOT_ASSERT_OK(poot_safetensors_open_memory(b.data, b.size, "t.safetensors", &st));
  assert_int_equal(poot_safetensors_tensor_count(st), 5);
  /* Sorted by name. */
  assert_string_equal(poot_safetensors_tensor_at(st, 0)->name, "a");
  assert_string_equal(poot_safetensors_tensor_at(st, 4)->name, "scalar");
  const poot_safetensors_tensor *t = poot_safetensors_find(st, "b");
  assert_int_equal(t->dtype, POOT_SAFETENSORS_BF16);
  assert_int_equal(t->rank, 2);
  assert_int_equal(t->shape[1], 3);
  assert_int_equal(t->size, 12);
  assert_int_equal(t->data[0], 16);
  t = poot_safetensors_find(st, "scalar");
  assert_int_equal(t->rank, 0);
  assert_int_equal(t->n_elements, 1);
  t = poot_safetensors_find(st, "empty");
  assert_int_equal(t->n_elements, 0);
  const poot_json *meta = poot_safetensors_metadata(st);
  assert_non_null(meta);
  assert_string_equal(poot_json_get(meta, "format")->str, "pt");
  assert_null(poot_safetensors_find(st, "__metadata__"));
  poot_safetensors_destroy(st);
  free(b.data);
}

static void test_safetensors_malformed(void **state) {
  (void)state;
  /* Header length beyond the file. */
  uint8_t small[12] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
  poot_safetensors *st = NULL;
  POOT_ASSERT_STATUS_MSG(poot_safetensors_open_memory(small, sizeof small, "s", &st), POOT_FORMAT,
                         "offset 0: header length 65535 exceeds");
  POOT_ASSERT_STATUS_MSG(poot_safetensors_open_memory(small, 5, "s", &st), POOT_FORMAT, "offset 0");
  expect_st("[1,2]", 0, POOT_FORMAT, "not a JSON object");
  expect_st("{\"a\":", 0, POOT_FORMAT, "header JSON");
  expect_st("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
            POOT_UNSUPPORTED, "F8_E4M3");
  expect_st("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, POOT_FORMAT, "'dtype'");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8, POOT_FORMAT,
            "need 8");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 8, POOT_FORMAT,
            "'shape'");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 8, POOT_FORMAT,
            "'shape'");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,12]}}", 8, POOT_FORMAT,
            "'data_offsets'");
  expect_st(
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
      "\"data_offsets\":[0,4]}}",
      8, POOT_FORMAT, "overflows");
  expect_st(
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
      8, POOT_FORMAT, "overlap");
  expect_st(
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
      8, POOT_FORMAT, "duplicate tensor 'a'");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
            POOT_FORMAT, "'shape'");
}

static void write_file(const char *dir, const char *name, const void *data, size_t size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  POOT_ASSERT_OK(poot_file_write_all(path, data, size));
}

static void test_safetensors_sharded(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/sharded", poot_test_tmpdir());
  assert_int_equal(poot_test_system("mkdir -p '%s'", dir), 0);
  st_buf a = make_st("{\"x\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4);
  st_buf b = make_st(
      "{\"y\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]},"
      "\"z\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[4,7]}}",
      7);
  write_file(dir, "model-00001-of-00002.safetensors", a.data, a.size);
  write_file(dir, "model-00002-of-00002.safetensors", b.data, b.size);
  const char *index =
      "{\"metadata\":{\"total_size\":11},\"weight_map\":{"
      "\"x\":\"model-00001-of-00002.safetensors\","
      "\"y\":\"model-00002-of-00002.safetensors\","
      "\"z\":\"model-00002-of-00002.safetensors\"}}";
  write_file(dir, "model.safetensors.index.json", index, strlen(index));
  poot_safetensors *st = NULL;
  POOT_ASSERT_OK(poot_safetensors_open(dir, &st));
  assert_int_equal(poot_safetensors_file_count(st), 2);
  assert_int_equal(poot_safetensors_tensor_count(st), 3);
  const poot_safetensors_tensor *z = poot_safetensors_find(st, "z");
  assert_non_null(z);
  assert_int_equal(z->data[2], 6);
  assert_non_null(strstr(z->file, "00002"));
  poot_safetensors_destroy(st);
  /* The store sees the same tensors. */
  poot_store *store = NULL;
  POOT_ASSERT_OK(poot_store_open(dir, &store));
  assert_int_equal(poot_store_format_of(store), POOT_STORE_FORMAT_SAFETENSORS);
  const poot_store_tensor *t = NULL;
  POOT_ASSERT_OK(poot_store_find(store, "x", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_F16);
  assert_int_equal(t->shape.rank, 1);
  assert_int_equal(t->shape.dims[0], 2);
  POOT_ASSERT_STATUS(poot_store_find(store, "w", &t), POOT_NOT_FOUND);
  poot_store_destroy(store);
  /* An index naming the wrong shard. */
  const char *wrong = "{\"weight_map\":{\"x\":\"model-00002-of-00002.safetensors\"}}";
  write_file(dir, "model.safetensors.index.json", wrong, strlen(wrong));
  POOT_ASSERT_STATUS_MSG(poot_safetensors_open(dir, &st), POOT_FORMAT, "tensor 'x' is not in");
  const char *escape = "{\"weight_map\":{\"x\":\"../x.safetensors\"}}";
  write_file(dir, "model.safetensors.index.json", escape, strlen(escape));
  POOT_ASSERT_STATUS(poot_safetensors_open(dir, &st), POOT_FORMAT);
  free(a.data);
  free(b.data);
}

/* ------------------------------------------------------------ HF config */

static void test_hf_config(void **state) {
  (void)state;
  const char *text =
      "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\","
      "\"hidden_size\":64,\"intermediate_size\":172,\"num_hidden_layers\":5,"
      "\"num_attention_heads\":8,\"num_key_value_heads\":4,"
      "\"max_position_embeddings\":512,\"rms_norm_eps\":1e-05,"
      "\"rope_theta\":500000.0,\"vocab_size\":512,\"tie_word_embeddings\":true,"
      "\"bos_token_id\":1,\"eos_token_id\":[2,7],\"torch_dtype\":\"bfloat16\","
      "\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0}}";
  poot_hf_config *c = NULL;
  POOT_ASSERT_OK(poot_hf_config_parse(text, strlen(text), "config.json", &c));
  assert_string_equal(c->model_type, "llama");
  assert_string_equal(c->architecture, "LlamaForCausalLM");
  assert_string_equal(c->torch_dtype, "bfloat16");
  assert_int_equal(c->hidden_size, 64);
  assert_int_equal(c->intermediate_size, 172);
  assert_int_equal(c->num_hidden_layers, 5);
  assert_int_equal(c->num_attention_heads, 8);
  assert_int_equal(c->num_key_value_heads, 4);
  assert_int_equal(c->head_dim, 8);
  assert_int_equal(c->max_position_embeddings, 512);
  assert_true(c->rms_norm_eps == 1e-5);
  assert_true(c->rope_theta == 500000.0);
  assert_true(c->tie_word_embeddings);
  assert_int_equal(c->bos_token_id, 1);
  assert_int_equal(c->n_eos_token_ids, 2);
  assert_int_equal(c->eos_token_ids[1], 7);
  assert_int_equal(c->pad_token_id, -1);
  assert_non_null(c->rope_scaling);
  assert_true(poot_json_get(c->rope_scaling, "factor")->number == 8.0);
  assert_non_null(poot_json_get(c->root, "vocab_size"));
  poot_hf_config_destroy(c);
  /* Defaults. */
  const char *minimal = "{\"hidden_size\":32,\"num_attention_heads\":4}";
  POOT_ASSERT_OK(poot_hf_config_parse(minimal, strlen(minimal), NULL, &c));
  assert_int_equal(c->num_key_value_heads, 4);
  assert_int_equal(c->head_dim, 8);
  assert_true(c->rope_theta == 10000.0);
  assert_null(c->model_type);
  poot_hf_config_destroy(c);
  /* transformers 5: "dtype" and "rope_parameters" carry what used to be
   * "torch_dtype", "rope_theta" and "rope_scaling". */
  const char *v5 =
      "{\"hidden_size\":32,\"num_attention_heads\":4,\"dtype\":\"float32\","
      "\"rope_parameters\":{\"rope_type\":\"linear\",\"factor\":2.0,\"rope_theta\":500000.0}}";
  POOT_ASSERT_OK(poot_hf_config_parse(v5, strlen(v5), NULL, &c));
  assert_string_equal(c->torch_dtype, "float32");
  assert_true(c->rope_theta == 500000.0);
  assert_non_null(c->rope_scaling);
  assert_true(poot_json_get(c->rope_scaling, "factor")->number == 2.0);
  poot_hf_config_destroy(c);
  const char *v5d = "{\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":1e6}}";
  POOT_ASSERT_OK(poot_hf_config_parse(v5d, strlen(v5d), NULL, &c));
  assert_true(c->rope_theta == 1e6);
  assert_null(c->rope_scaling);
  poot_hf_config_destroy(c);
  const char *bad = "{\"hidden_size\":\"big\"}";
  POOT_ASSERT_STATUS_MSG(poot_hf_config_parse(bad, strlen(bad), "c.json", &c), POOT_FORMAT,
                         "'hidden_size'");
  POOT_ASSERT_STATUS(poot_hf_config_parse("{", 1, "c.json", &c), POOT_FORMAT);
  assert_null(c);

  const char *gen =
      "{\"bos_token_id\":128000,\"eos_token_id\":128001,\"do_sample\":true,"
      "\"temperature\":0.6,\"top_p\":0.9}";
  poot_hf_generation_config *g = NULL;
  POOT_ASSERT_OK(poot_hf_generation_config_parse(gen, strlen(gen), NULL, &g));
  assert_int_equal(g->bos_token_id, 128000);
  assert_int_equal(g->n_eos_token_ids, 1);
  assert_int_equal(g->eos_token_ids[0], 128001);
  assert_true(g->do_sample);
  assert_true(g->temperature == 0.6);
  assert_true(g->top_p == 0.9);
  assert_int_equal(g->top_k, -1);
  assert_true(g->repetition_penalty == -1);
  poot_hf_generation_config_destroy(g);
}

/* ------------------------------------------------- store and weight maps */

static void test_store_llama2c_and_map(void **state) {
  (void)state;
  char path[1024];
  if (!poot_test_data_path("models/stories260K/stories260K.bin", path, sizeof path)) skip();
  poot_store *store = NULL;
  POOT_ASSERT_OK(poot_store_open(path, &store));
  assert_int_equal(poot_store_format_of(store), POOT_STORE_FORMAT_LLAMA2C);
  assert_non_null(poot_store_llama2c(store));
  assert_null(poot_store_gguf(store));
  assert_int_equal(poot_store_tensor_count(store), 47);
  assert_int_equal(poot_weight_naming_of_store(store), POOT_WEIGHT_NAMING_LLAMA2C);

  poot_weight_map_llama_options o = {.n_layers = 5, .tied_output = true};
  poot_weight_map *map = NULL;
  POOT_ASSERT_OK(poot_weight_map_llama(POOT_WEIGHT_NAMING_LLAMA2C, &o, &map));
  assert_int_equal(poot_weight_map_count(map), 3 + 9 * 5);
  const poot_store_tensor *t = NULL;
  poot_weight_ref ref = {POOT_WEIGHT_ATTN_K, 2, NULL};
  POOT_ASSERT_OK(poot_weight_map_resolve(map, store, &ref, &t));
  assert_string_equal(t->name, "layers.2.attention.wk.weight");
  assert_int_equal(t->dtype, POOT_DTYPE_F32);
  assert_int_equal(t->shape.rank, 2);
  assert_int_equal(t->shape.dims[0], 32);
  assert_int_equal(t->shape.dims[1], 64);
  assert_int_equal(t->size, 32 * 64 * 4);
  ref = (poot_weight_ref){POOT_WEIGHT_FFN_UP, 4, NULL};
  POOT_ASSERT_OK(poot_weight_map_resolve(map, store, &ref, &t));
  assert_string_equal(t->name, "layers.4.feed_forward.w3.weight");
  /* The shared classifier is the embedding, as the format says. */
  ref = (poot_weight_ref){POOT_WEIGHT_OUTPUT, -1, NULL};
  POOT_ASSERT_OK(poot_weight_map_resolve(map, store, &ref, &t));
  assert_string_equal(t->name, "tok_embeddings.weight");
  /* Unbound roles stay unbound, even where a tensor of a similar name
   * exists; a layer past the map is unbound too. */
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_Q_BIAS, 0, NULL};
  POOT_ASSERT_STATUS_MSG(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND,
                         "not bound");
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_Q, 5, NULL};
  POOT_ASSERT_STATUS(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND);
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_Q, 0, NULL};
  poot_weight_map_unbind(map, &ref);
  assert_int_equal(poot_weight_map_count(map), 3 + 9 * 5 - 1);
  POOT_ASSERT_STATUS(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND);
  /* A binding to a name the store lacks. */
  POOT_ASSERT_OK(poot_weight_map_bind(map, &ref, "nope.weight"));
  POOT_ASSERT_STATUS_MSG(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND,
                         "nope.weight");
  /* Layer indices must fit the role. */
  ref = (poot_weight_ref){POOT_WEIGHT_OUTPUT, 0, NULL};
  POOT_ASSERT_STATUS(poot_weight_map_bind(map, &ref, "x"), POOT_INVALID_ARGUMENT);
  ref = (poot_weight_ref){POOT_WEIGHT_FFN_UP, -1, NULL};
  POOT_ASSERT_STATUS(poot_weight_map_bind(map, &ref, "x"), POOT_INVALID_ARGUMENT);
  /* Custom roles are keyed by name. */
  ref = (poot_weight_ref){POOT_WEIGHT_CUSTOM, -1, "vision.patch"};
  POOT_ASSERT_OK(poot_weight_map_bind(map, &ref, "norm.weight"));
  POOT_ASSERT_OK(poot_weight_map_resolve(map, store, &ref, &t));
  assert_string_equal(t->name, "norm.weight");
  ref.name = "vision.other";
  POOT_ASSERT_STATUS(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND);
  poot_weight_map_destroy(map);

  /* llama2.c has no biases. */
  o.attn_qkv_bias = true;
  POOT_ASSERT_STATUS(poot_weight_map_llama(POOT_WEIGHT_NAMING_LLAMA2C, &o, &map),
                     POOT_INVALID_ARGUMENT);
  poot_store_destroy(store);
}

static void test_weight_names(void **state) {
  (void)state;
  char name[128];
  poot_weight_ref ref = {POOT_WEIGHT_ATTN_Q, 3, NULL};
  assert_true(poot_weight_name_llama(POOT_WEIGHT_NAMING_GGUF, &ref, name, sizeof name));
  assert_string_equal(name, "blk.3.attn_q.weight");
  assert_true(poot_weight_name_llama(POOT_WEIGHT_NAMING_HF, &ref, name, sizeof name));
  assert_string_equal(name, "model.layers.3.self_attn.q_proj.weight");
  ref = (poot_weight_ref){POOT_WEIGHT_FFN_DOWN, 0, NULL};
  assert_true(poot_weight_name_llama(POOT_WEIGHT_NAMING_LLAMA2C, &ref, name, sizeof name));
  assert_string_equal(name, "layers.0.feed_forward.w2.weight");
  ref = (poot_weight_ref){POOT_WEIGHT_TOKEN_EMBD, -1, NULL};
  assert_true(poot_weight_name_llama(POOT_WEIGHT_NAMING_HF, &ref, name, sizeof name));
  assert_string_equal(name, "model.embed_tokens.weight");
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_K_NORM, 1, NULL};
  assert_true(poot_weight_name_llama(POOT_WEIGHT_NAMING_GGUF, &ref, name, sizeof name));
  assert_string_equal(name, "blk.1.attn_k_norm.weight");
  assert_false(poot_weight_name_llama(POOT_WEIGHT_NAMING_LLAMA2C, &ref, name, sizeof name));
  ref = (poot_weight_ref){POOT_WEIGHT_CLS, -1, NULL};
  assert_false(poot_weight_name_llama(POOT_WEIGHT_NAMING_GGUF, &ref, name, sizeof name));
  poot_weight_map_llama_options o = {.n_layers = 2, .attn_qkv_bias = true, .attn_qk_norm = true};
  poot_weight_map *map = NULL;
  POOT_ASSERT_OK(poot_weight_map_llama(POOT_WEIGHT_NAMING_HF, &o, &map));
  assert_int_equal(poot_weight_map_count(map), 3 + 14 * 2);
  const char *n = NULL;
  ref = (poot_weight_ref){POOT_WEIGHT_OUTPUT, -1, NULL};
  POOT_ASSERT_OK(poot_weight_map_lookup(map, &ref, &n));
  assert_string_equal(n, "lm_head.weight");
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_V_BIAS, 1, NULL};
  POOT_ASSERT_OK(poot_weight_map_lookup(map, &ref, &n));
  assert_string_equal(n, "model.layers.1.self_attn.v_proj.bias");
  poot_weight_ref r0;
  poot_weight_map_at(map, 0, &r0, &n);
  assert_int_equal(r0.role, POOT_WEIGHT_TOKEN_EMBD);
  poot_weight_map_destroy(map);
}

static void test_store_gguf_and_unknown(void **state) {
  (void)state;
  char path[1024];
  if (poot_test_data_path("vocab/ggml-vocab-llama-spm.gguf", path, sizeof path)) {
    poot_store *store = NULL;
    POOT_ASSERT_OK(poot_store_open(path, &store));
    assert_int_equal(poot_store_format_of(store), POOT_STORE_FORMAT_GGUF);
    assert_int_equal(poot_store_tensor_count(store), 0);
    assert_non_null(poot_store_gguf(store));
    poot_store_destroy(store);
  }
  /* A GGUF with tensors: shapes come out row-major. */
  poot_gguf_writer *w = NULL;
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  uint64_t dims[2] = {64, 3};
  static uint8_t q[3 * 2 * 34];
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "blk.0.attn_q.weight", POOT_GGUF_TYPE_Q8_0, 2, dims, q));
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "odd", POOT_GGUF_TYPE_IQ4_XS, 1, (uint64_t[]){256}, q));
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "k2", POOT_GGUF_TYPE_Q2_K, 1, (uint64_t[]){256}, q));
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "k3", POOT_GGUF_TYPE_Q3_K, 1, (uint64_t[]){256}, q));
  snprintf(path, sizeof path, "%s/store.gguf", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, path));
  poot_gguf_writer_destroy(w);
  poot_store *store = NULL;
  POOT_ASSERT_OK(poot_store_open(path, &store));
  const poot_store_tensor *t = NULL;
  POOT_ASSERT_OK(poot_store_find(store, "blk.0.attn_q.weight", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_Q8_0);
  assert_string_equal(t->type_name, "q8_0");
  assert_int_equal(t->shape.dims[0], 3);
  assert_int_equal(t->shape.dims[1], 64);
  assert_int_equal(t->size, 3 * 2 * 34);
  POOT_ASSERT_OK(poot_store_find(store, "odd", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_NONE);
  assert_string_equal(t->type_name, "iq4_xs");
  /* q2_k and q3_k are computed with (dtype.c, quant.c). */
  POOT_ASSERT_OK(poot_store_find(store, "k2", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_Q2_K);
  assert_int_equal(t->size, 84);
  POOT_ASSERT_OK(poot_store_find(store, "k3", &t));
  assert_int_equal(t->dtype, POOT_DTYPE_Q3_K);
  assert_int_equal(t->size, 110);
  poot_weight_map_llama_options o = {.n_layers = 1};
  poot_weight_map *map = NULL;
  POOT_ASSERT_OK(poot_weight_map_llama(poot_weight_naming_of_store(store), &o, &map));
  poot_weight_ref ref = {POOT_WEIGHT_ATTN_Q, 0, NULL};
  POOT_ASSERT_OK(poot_weight_map_resolve(map, store, &ref, &t));
  ref = (poot_weight_ref){POOT_WEIGHT_ATTN_K, 0, NULL};
  POOT_ASSERT_STATUS_MSG(poot_weight_map_resolve(map, store, &ref, &t), POOT_NOT_FOUND,
                         "blk.0.attn_k.weight");
  poot_weight_map_destroy(map);
  poot_store_destroy(store);

  /* Neither format. */
  snprintf(path, sizeof path, "%s/junk.bin", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_file_write_all(path, "hello world, not a model", 24));
  POOT_ASSERT_STATUS(poot_store_open(path, &store), POOT_FORMAT);
  assert_null(store);
  snprintf(path, sizeof path, "%s/absent.gguf", poot_test_tmpdir());
  POOT_ASSERT_STATUS(poot_store_open(path, &store), POOT_NOT_FOUND);
}

/* Weight references (the model's roles) print their display names and
 * parse back; the id a graph leaf carries is the text form's key of that
 * name. */
static void test_weight_refs(void **state) {
  (void)state;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (int r = 1; r < POOT_WEIGHT_CUSTOM; r++) {
    poot_weight_ref ref = {(poot_weight_role)r,
                           poot_weight_role_is_per_layer((poot_weight_role)r) ? 17 : -1, NULL};
    poot_strbuf_clear(&sb);
    poot_weight_ref_format(&sb, &ref);
    poot_weight_ref back;
    assert_true(poot_weight_ref_parse(sb.data, sb.len, &back));
    assert_int_equal(back.role, r);
    assert_int_equal(back.layer, ref.layer);
  }
  poot_weight_ref ref = {POOT_WEIGHT_FFN_DOWN, 3, NULL};
  poot_strbuf_clear(&sb);
  poot_weight_ref_format(&sb, &ref);
  assert_string_equal(sb.data, "blk.3.ffn_down");
  poot_weight_ref back;
  assert_false(poot_weight_ref_parse("blk.3.output", 12, &back));
  assert_false(poot_weight_ref_parse("ffn_down", 8, &back));
  assert_false(poot_weight_ref_parse("blk.x.ffn_down", 14, &back));
  assert_true(poot_weight_ref_parse("token_embd", 10, &back));
  assert_int_equal(back.role, POOT_WEIGHT_TOKEN_EMBD);
  poot_weight_id id;
  POOT_ASSERT_OK(poot_weight_ref_id(&ref, &sb, &id));
  assert_string_equal(id.name, "blk.3.ffn_down");
  assert_true(id.key == poot_weight_key_of_name("blk.3.ffn_down", 14));
  poot_weight_ref bad = {POOT_WEIGHT_OUTPUT, 2, NULL};
  POOT_ASSERT_STATUS(poot_weight_ref_id(&bad, &sb, &id), POOT_INVALID_ARGUMENT);
  poot_strbuf_deinit(&sb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weight_refs),
      cmocka_unit_test(test_stories260k),
      cmocka_unit_test(test_llama2c_separate_and_malformed),
      cmocka_unit_test(test_llama2c_tokenizer),
      cmocka_unit_test(test_safetensors_memory),
      cmocka_unit_test(test_safetensors_malformed),
      cmocka_unit_test(test_safetensors_sharded),
      cmocka_unit_test(test_hf_config),
      cmocka_unit_test(test_store_llama2c_and_map),
      cmocka_unit_test(test_weight_names),
      cmocka_unit_test(test_store_gguf_and_unknown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
