/* formats_harden_test.c — robustness of the model-file readers (GGUF,
 * safetensors, llama2.c, HF config, the weight store) against exhausted
 * memory and hostile inputs that fuzzing found: every failure is a typed
 * status, nothing leaks (checked under ASan), nothing aborts. */
#include "poot_test.h"

#include <math.h>
#include <stdlib.h>

#include "poot/llm/convert.h"
#include "poot/llm/gguf.h"
#include "poot/llm/hf_config.h"
#include "poot/llm/llama2c.h"
#include "poot/llm/safetensors.h"
#include "poot/llm/store.h"


/* Every sweep below checks, at each n, that the n-th allocation failing was
 * reached and reported as OUT_OF_MEMORY (tests/poot_test.h). */
#define SWEEP_LIMIT 200000

typedef struct blob {
  char *data;
  size_t size;
} blob;

static blob read_corpus(const char *rel) {
  const char *src = getenv("POOT_SOURCE_DIR");
  if (!src) src = ".";
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s", src, rel);
  blob b = {0};
  POOT_ASSERT_OK(poot_file_read_all(path, &b.data, &b.size));
  return b;
}

/* ---------------------------------------------------------------- GGUF */

static poot_status try_gguf(void *ctx) {
  blob *b = ctx;
  poot_gguf *g = NULL;
  POOT_TRY(poot_gguf_open_memory(b->data, b->size, "small.gguf", &g));
  poot_gguf_destroy(g);
  return NULL;
}

static void test_gguf_oom(void **state) {
  (void)state;
  const char *files[] = {"gguf/small.gguf", "gguf/vocab.gguf"};
  for (size_t i = 0; i < 2; i++) {
    blob b = read_corpus(files[i]);
    assert_true(poot_test_oom_sweep(files[i], try_gguf, &b, SWEEP_LIMIT) > 0);
    poot_free(b.data);
  }
}

/* ---------------------------------------------------------- safetensors */

static poot_status try_safetensors(void *ctx) {
  blob *b = ctx;
  poot_safetensors *st = NULL;
  POOT_TRY(poot_safetensors_open_memory(b->data, b->size, "small.safetensors", &st));
  poot_safetensors_destroy(st);
  return NULL;
}

static void test_safetensors_oom(void **state) {
  (void)state;
  const char *files[] = {"safetensors/small.safetensors", "safetensors/mixed.safetensors"};
  for (size_t i = 0; i < 2; i++) {
    blob b = read_corpus(files[i]);
    assert_true(poot_test_oom_sweep(files[i], try_safetensors, &b, SWEEP_LIMIT) > 0);
    poot_free(b.data);
  }
}

/* A dimension above 2^63-1 next to a zero dimension passed the element
 * count check, and the store turned it into a negative dim. FORMAT now. */
static void test_safetensors_huge_dim(void **state) {
  (void)state;
  const char *hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0,9223372036854775808],"
                    "\"data_offsets\":[0,0]}}";
  char buf[256] = {0};
  uint64_t n = strlen(hdr);
  memcpy(buf, &n, 8);
  memcpy(buf + 8, hdr, n);
  poot_safetensors *st = NULL;
  poot_status s = poot_safetensors_open_memory(buf, 8 + n, "huge.safetensors", &st);
  assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
  assert_non_null(strstr(poot_status_message(s), "'shape' dimension 1"));
  assert_null(st);
  poot_status_free(s);
  /* The largest int64 dimension is still accepted beside a zero. */
  hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0,9223372036854775807],"
        "\"data_offsets\":[0,0]}}";
  n = strlen(hdr);
  memcpy(buf, &n, 8);
  memcpy(buf + 8, hdr, n);
  POOT_ASSERT_OK(poot_safetensors_open_memory(buf, 8 + n, "max.safetensors", &st));
  assert_int_equal(poot_safetensors_tensor_at(st, 0)->shape[1], INT64_MAX);
  poot_safetensors_destroy(st);
}

/* ------------------------------------------------------------- llama2.c */

/* The fuzz corpus files start with one selector byte. */
static blob read_llama2c(const char *rel) {
  blob b = read_corpus(rel);
  assert_true(b.size > 1);
  memmove(b.data, b.data + 1, b.size - 1);
  b.size--;
  return b;
}

static poot_status try_llama2c(void *ctx) {
  blob *b = ctx;
  poot_llama2c *m = NULL;
  POOT_TRY(poot_llama2c_open_memory(b->data, b->size, "stories.bin", &m));
  poot_llama2c_destroy(m);
  return NULL;
}

static poot_status try_llama2c_vocab(void *ctx) {
  blob *b = ctx;
  poot_llama2c_vocab *v = NULL;
  POOT_TRY(poot_llama2c_vocab_parse(b->data + 4, b->size - 4, 3, "tokenizer.bin", &v));
  poot_llama2c_vocab_destroy(v);
  return NULL;
}

static void test_llama2c_oom(void **state) {
  (void)state;
  blob b = read_llama2c("llama2c/shared");
  assert_true(poot_test_oom_sweep("llama2c shared", try_llama2c, &b, SWEEP_LIMIT) > 0);
  poot_free(b.data);
  b = read_llama2c("llama2c/separate");
  assert_true(poot_test_oom_sweep("llama2c separate", try_llama2c, &b, SWEEP_LIMIT) > 0);
  poot_free(b.data);
  b = read_llama2c("llama2c/vocab");
  assert_true(poot_test_oom_sweep("llama2c vocab", try_llama2c_vocab, &b, SWEEP_LIMIT) > 0);
  poot_free(b.data);
}

/* A header whose sizes are valid but whose file is one float short is
 * FORMAT naming both sizes; a header with n_heads 0 names the field. */
static void test_llama2c_bad_headers(void **state) {
  (void)state;
  blob b = read_llama2c("llama2c/shared");
  poot_llama2c *m = NULL;
  POOT_ASSERT_STATUS(poot_llama2c_open_memory(b.data, b.size - 4, "x", &m), POOT_FORMAT);
  assert_null(m);
  int32_t zero = 0;
  memcpy(b.data + 12, &zero, 4);
  poot_status s = poot_llama2c_open_memory(b.data, b.size, "x", &m);
  assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
  assert_non_null(strstr(poot_status_message(s), "n_heads"));
  poot_status_free(s);
  assert_false(poot_llama2c_probe(b.data, b.size));
  /* Every prefix shorter than the header is FORMAT (not a read past it). */
  for (size_t n = 0; n < 28; n++) {
    POOT_ASSERT_STATUS(poot_llama2c_open_memory(b.data, n, "x", &m), POOT_FORMAT);
    assert_false(poot_llama2c_probe(b.data, n));
  }
  poot_free(b.data);
}

/* ------------------------------------------------------------ HF config */

typedef struct text_ctx {
  const char *text;
} text_ctx;

static poot_status try_hf_config(void *ctx) {
  text_ctx *t = ctx;
  poot_hf_config *c = NULL;
  POOT_TRY(poot_hf_config_parse(t->text, strlen(t->text), "config.json", &c));
  poot_hf_config_destroy(c);
  poot_hf_generation_config *g = NULL;
  POOT_TRY(poot_hf_generation_config_parse(t->text, strlen(t->text), "gen.json", &g));
  poot_hf_generation_config_destroy(g);
  return NULL;
}

static void test_hf_config_oom(void **state) {
  (void)state;
  blob b = read_corpus("hf_config/llama.json");
  text_ctx t = {b.data};
  assert_true(poot_test_oom_sweep("config.json", try_hf_config, &t, SWEEP_LIMIT) > 0);
  poot_free(b.data);
}

/* An eos id list entry outside the int64 range was converted with
 * undefined behaviour (found by fuzz_hf_config); it is FORMAT now, naming
 * the field and index, like a scalar id of that size. */
static void test_hf_config_huge_eos(void **state) {
  (void)state;
  const char *cases[] = {"{\"eos_token_id\": [1, 1e300]}", "{\"eos_token_id\": [-1e19]}",
                         "{\"eos_token_id\": 1e300}"};
  for (size_t i = 0; i < 3; i++) {
    poot_hf_config *c = NULL;
    poot_status s = poot_hf_config_parse(cases[i], strlen(cases[i]), "config.json", &c);
    assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
    assert_non_null(strstr(poot_status_message(s), "eos_token_id"));
    assert_null(c);
    poot_status_free(s);
    poot_hf_generation_config *g = NULL;
    s = poot_hf_generation_config_parse(cases[i], strlen(cases[i]), "gen.json", &g);
    assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
    assert_null(g);
    poot_status_free(s);
  }
  const char *ok = "{\"eos_token_id\": [2, 9000000000000]}";
  poot_hf_config *c = NULL;
  POOT_ASSERT_OK(poot_hf_config_parse(ok, strlen(ok), "config.json", &c));
  assert_int_equal(c->n_eos_token_ids, 2);
  assert_int_equal(c->eos_token_ids[1], 9000000000000LL);
  poot_hf_config_destroy(c);
}

/* ------------------------------------------------------------- convert */

static void write_text(const char *dir, const char *name, const char *text, size_t len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  POOT_ASSERT_OK(poot_file_write_all(path, text, len));
}

/* The vocabulary table was sized by the largest token id (or vocab_size),
 * so one added token with id 999,999,999 in a 300-byte tokenizer.json
 * asked for ~24 GB. It is FORMAT now, naming the size and the limit. */
static void test_convert_huge_token_id(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/huge_id", poot_test_tmpdir());
  assert_int_equal(poot_test_system("mkdir -p '%s'", dir), 0);
  const char *config =
      "{\"model_type\": \"llama\", \"vocab_size\": 1000000000, \"hidden_size\": 4, \"intermediate_size\": 4, "
      "\"num_hidden_layers\": 1, \"num_attention_heads\": 1, \"num_key_value_heads\": 1}";
  write_text(dir, "config.json", config, strlen(config));
  const char *hdr = "{\"model.embed_tokens.weight\":{\"dtype\":\"F32\",\"shape\":[1,4],"
                    "\"data_offsets\":[0,16]}}";
  size_t n = strlen(hdr);
  char st[256] = {0};
  uint64_t n64 = n;
  memcpy(st, &n64, 8);
  memcpy(st + 8, hdr, n);
  write_text(dir, "model.safetensors", st, 8 + n + 16);
  const char *cases[] = {
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, "
      "\"added_tokens\": [{\"id\": 999999999, \"content\": \"<x>\"}]}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 900000000}, "
      "\"merges\": []}}"};
  char out[1100];
  snprintf(out, sizeof out, "%s/out.gguf", dir);
  for (size_t i = 0; i < 2; i++) {
    write_text(dir, "tokenizer.json", cases[i], strlen(cases[i]));
    poot_convert_options o;
    memset(&o, 0, sizeof o);
    poot_status s = poot_convert_to_gguf(dir, out, &o);
    assert_int_equal(poot_status_code_of(s), POOT_FORMAT);
    assert_non_null(strstr(poot_status_message(s), "exceeds poot's limit"));
    poot_status_free(s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gguf_oom),
      cmocka_unit_test(test_safetensors_oom),
      cmocka_unit_test(test_safetensors_huge_dim),
      cmocka_unit_test(test_llama2c_oom),
      cmocka_unit_test(test_llama2c_bad_headers),
      cmocka_unit_test(test_hf_config_oom),
      cmocka_unit_test(test_hf_config_huge_eos),
      cmocka_unit_test(test_convert_huge_token_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
