/* convert_check_test.c — `poot convert` never writes a GGUF that poot itself
 * refuses: the output is checked with the loader's checks before it takes
 * its name (src/llm/format/convert_check.c). A tiny Hugging Face llama folder
 * converts and loads; with a million layers, a negative rope_theta, an empty
 * vocabulary or a missing q_proj the conversion fails with the loader's typed
 * error and leaves no file. */
#include "poot_test.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "poot/llm/convert.h"
#include "poot/llm/model.h"

enum { HIDDEN = 8, VOCAB = 4 };

typedef struct tensor_spec {
  const char *name;
  int64_t rows, cols; /* rows 0: a vector of cols */
} tensor_spec;

static const tensor_spec llama_tensors[] = {
    {"model.embed_tokens.weight", VOCAB, HIDDEN},
    {"model.layers.0.input_layernorm.weight", 0, HIDDEN},
    {"model.layers.0.self_attn.q_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.self_attn.k_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.self_attn.v_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.self_attn.o_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.post_attention_layernorm.weight", 0, HIDDEN},
    {"model.layers.0.mlp.gate_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.mlp.up_proj.weight", HIDDEN, HIDDEN},
    {"model.layers.0.mlp.down_proj.weight", HIDDEN, HIDDEN},
    {"model.norm.weight", 0, HIDDEN},
    {"lm_head.weight", VOCAB, HIDDEN},
};

static void write_file(const char *dir, const char *name, const void *data, size_t size) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  POOT_ASSERT_OK(poot_file_write_all(path, data, size));
}

/* model.safetensors with every tensor but `skip` (NULL: none), f32 zeros
 * except small values so the model is not degenerate. */
static void write_safetensors(const char *dir, const char *skip) {
  poot_strbuf h;
  poot_strbuf_init(&h);
  poot_strbuf_puts(&h, "{");
  uint64_t off = 0;
  bool first = true;
  for (size_t i = 0; i < sizeof llama_tensors / sizeof llama_tensors[0]; i++) {
    const tensor_spec *t = &llama_tensors[i];
    if (skip && strstr(t->name, skip)) continue;
    uint64_t bytes = (uint64_t)(t->rows ? t->rows * t->cols : t->cols) * 4;
    if (t->rows)
      poot_strbuf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],", first ? "" : ",",
                         t->name, (long long)t->rows, (long long)t->cols);
    else
      poot_strbuf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],", first ? "" : ",",
                         t->name, (long long)t->cols);
    poot_strbuf_printf(&h, "\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                       (unsigned long long)(off + bytes));
    off += bytes;
    first = false;
  }
  poot_strbuf_puts(&h, "}");
  POOT_ASSERT_OK(poot_strbuf_status(&h));
  size_t size = 8 + h.len + (size_t)off;
  char *buf = calloc(1, size);
  assert_non_null(buf);
  uint64_t n = h.len;
  memcpy(buf, &n, 8);
  memcpy(buf + 8, h.data, h.len);
  float *w = (float *)(buf + 8 + h.len);
  for (size_t i = 0; i < (size_t)off / 4; i++) w[i] = 0.01f * (float)(i % 7);
  write_file(dir, "model.safetensors", buf, size);
  free(buf);
  poot_strbuf_deinit(&h);
}

/* The config.json fields a case changes. */
typedef struct config_fields {
  const char *layers, *rope_theta, *vocab_size;
} config_fields;

static const config_fields good_config = {"1", "10000.0", "4"};

/* A llama folder with config.json's fields `cf`, tensors without `skip`,
 * and the tokenizer `vocab` (a JSON object). */
static void make_folder(const char *dir, const config_fields *cf, const char *skip,
                        const char *vocab) {
  assert_int_equal(poot_test_system("rm -rf '%s' && mkdir -p '%s'", dir, dir), 0);
  char config[1024];
  snprintf(config, sizeof config,
           "{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], "
           "\"vocab_size\": %s, \"hidden_size\": %d, \"intermediate_size\": %d, "
           "\"num_hidden_layers\": %s, \"num_attention_heads\": 2, \"num_key_value_heads\": 2, "
           "\"rms_norm_eps\": 1e-5, \"rope_theta\": %s, \"max_position_embeddings\": 64, "
           "\"bos_token_id\": 0, \"eos_token_id\": 1}",
           cf->vocab_size, HIDDEN, HIDDEN, cf->layers, cf->rope_theta);
  write_file(dir, "config.json", config, strlen(config));
  char tok[512];
  snprintf(tok, sizeof tok, "{\"model\": {\"type\": \"BPE\", \"vocab\": %s, \"merges\": []}}",
           vocab);
  write_file(dir, "tokenizer.json", tok, strlen(tok));
  write_safetensors(dir, skip);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static const char good_vocab[] = "{\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3}";

static void test_good_folder_converts_and_loads(void **state) {
  (void)state;
  char dir[1024], out[1100];
  snprintf(dir, sizeof dir, "%s/good", poot_test_tmpdir());
  snprintf(out, sizeof out, "%s/good.gguf", poot_test_tmpdir());
  make_folder(dir, &good_config, NULL, good_vocab);
  POOT_ASSERT_OK(poot_convert_to_gguf(dir, out, NULL));
  assert_true(exists(out));
  POOT_ASSERT_OK(poot_model_check_file(out));
  char tmp[1200];
  snprintf(tmp, sizeof tmp, "%s.unchecked", out);
  assert_false(exists(tmp));
}

/* Converts a folder that must be refused; no output (or temporary) file. */
static void expect_refused(const char *what, const config_fields *cf, const char *skip,
                           const char *vocab, poot_status_code code, const char *needle) {
  char dir[1024], out[1100], tmp[1200];
  snprintf(dir, sizeof dir, "%s/%s", poot_test_tmpdir(), what);
  snprintf(out, sizeof out, "%s/%s.gguf", poot_test_tmpdir(), what);
  snprintf(tmp, sizeof tmp, "%s.unchecked", out);
  make_folder(dir, cf, skip, vocab);
  poot_status s = poot_convert_to_gguf(dir, out, NULL);
  printf("%s: %s: %s\n", what, poot_status_code_name(poot_status_code_of(s)),
         poot_status_message(s));
  POOT_ASSERT_STATUS_MSG(s, code, needle);
  assert_false(exists(out));
  assert_false(exists(tmp));
}

static void test_million_layers(void **state) {
  (void)state;
  config_fields cf = good_config;
  cf.layers = "1000000";
  expect_refused("layers", &cf, NULL, good_vocab, POOT_UNSUPPORTED,
                 "1000000 layers (at most 256)");
}

static void test_negative_rope_theta(void **state) {
  (void)state;
  config_fields cf = good_config;
  cf.rope_theta = "-1.0";
  expect_refused("theta", &cf, NULL, good_vocab, POOT_INVALID_ARGUMENT,
                 "rope_theta must be > 0");
}

static void test_empty_vocabulary(void **state) {
  (void)state;
  config_fields cf = good_config;
  cf.vocab_size = "0";
  /* The config's own reading refuses it before a tokenizer is converted. */
  expect_refused("vocab", &cf, NULL, "{}", POOT_FORMAT, "vocab_size 0,");
}

static void test_missing_q_proj(void **state) {
  (void)state;
  expect_refused("noq", &good_config, "q_proj", good_vocab, POOT_NOT_FOUND,
                 "has no tensor 'blk.0.attn_q.weight'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_folder_converts_and_loads),
      cmocka_unit_test(test_million_layers),
      cmocka_unit_test(test_negative_rope_theta),
      cmocka_unit_test(test_empty_vocabulary),
      cmocka_unit_test(test_missing_q_proj),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
