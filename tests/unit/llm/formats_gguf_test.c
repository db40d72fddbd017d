/* GGUF reader and writer: the vocabulary files, a write → read round trip of
 * every metadata and tensor type, and malformed or truncated files. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/gguf.h"

/* ------------------------------------------------------------- helpers */

typedef struct bytes {
  uint8_t *data;
  size_t len, cap;
} bytes;

static void b_put(bytes *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->data = realloc(b->data, b->cap);
    assert_non_null(b->data);
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
}
static void b_u32(bytes *b, uint32_t v) {
  b_put(b, &v, 4);
}
static void b_u64(bytes *b, uint64_t v) {
  b_put(b, &v, 8);
}
static void b_str(bytes *b, const char *s) {
  b_u64(b, strlen(s));
  b_put(b, s, strlen(s));
}
static void b_header(bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
  b_u32(b, POOT_GGUF_MAGIC);
  b_u32(b, version);
  b_u64(b, n_tensors);
  b_u64(b, n_kv);
}

static poot_status open_bytes(const bytes *b, poot_gguf **g) {
  return poot_gguf_open_memory(b->data, b->len, "test", g);
}

static void expect_format(const bytes *b, const char *needle) {
  poot_gguf *g = NULL;
  POOT_ASSERT_STATUS_MSG(open_bytes(b, &g), POOT_FORMAT, needle);
  assert_null(g);
}

/* ------------------------------------------------------ vocabulary files */

typedef struct vocab_case {
  const char *file;
  const char *model;
  const char *arch;
  uint64_t n_tokens;
  size_t n_kv;
  int64_t bos; /* -1: absent */
  bool has_template;
  bool has_merges;
} vocab_case;

static const vocab_case vocab_cases[] = {
    {"ggml-vocab-bert-bge.gguf", "bert", "bert", 30522, 20, -1, false, false},
    {"ggml-vocab-gpt-2.gguf", "gpt2", "gpt2", 50257, 16, 50256, false, true},
    {"ggml-vocab-llama-bpe.gguf", "gpt2", "llama", 128256, 20, 128000, false, true},
    {"ggml-vocab-llama-spm.gguf", "llama", "llama", 32000, 22, 1, false, false},
    {"ggml-vocab-phi-3.gguf", "llama", "phi3", 32064, 26, 1, true, false},
    {"ggml-vocab-qwen2.gguf", "gpt2", "qwen2", 151936, 20, 151643, true, true},
};

static void test_vocab_files(void **state) {
  (void)state;
  int found = 0;
  for (size_t c = 0; c < sizeof vocab_cases / sizeof vocab_cases[0]; c++) {
    const vocab_case *vc = &vocab_cases[c];
    char path[1024], rel[256];
    snprintf(rel, sizeof rel, "vocab/%s", vc->file);
    if (!poot_test_data_path(rel, path, sizeof path)) continue;
    found++;
    poot_gguf *g = NULL;
    POOT_ASSERT_OK(poot_gguf_open(path, &g));
    assert_int_equal(poot_gguf_version(g), 3);
    assert_int_equal(poot_gguf_kv_count(g), vc->n_kv);
    assert_int_equal(poot_gguf_tensor_count(g), 0);
    const char *s;
    size_t n;
    POOT_ASSERT_OK(poot_gguf_get_string(g, "tokenizer.ggml.model", &s, &n));
    assert_int_equal(n, strlen(vc->model));
    assert_memory_equal(s, vc->model, n);
    POOT_ASSERT_OK(poot_gguf_get_string(g, "general.architecture", &s, &n));
    assert_int_equal(n, strlen(vc->arch));
    assert_memory_equal(s, vc->arch, n);
    const poot_gguf_value *toks;
    POOT_ASSERT_OK(poot_gguf_get_array(g, "tokenizer.ggml.tokens", POOT_GGUF_VALUE_STRING, &toks));
    assert_int_equal(poot_gguf_array_len(toks), vc->n_tokens);
    /* The last token can be read and lies inside the file. */
    POOT_ASSERT_OK(poot_gguf_array_get_string(toks, vc->n_tokens - 1, &s, &n));
    POOT_ASSERT_STATUS(poot_gguf_array_get_string(toks, vc->n_tokens, &s, &n),
                       POOT_INVALID_ARGUMENT);
    uint32_t bos = 0;
    poot_status st = poot_gguf_get_u32(g, "tokenizer.ggml.bos_token_id", &bos);
    if (vc->bos < 0) {
      assert_int_equal(poot_status_consume(st), POOT_NOT_FOUND);
    } else {
      POOT_ASSERT_OK(st);
      assert_int_equal(bos, (uint32_t)vc->bos);
    }
    assert_int_equal(poot_gguf_find(g, "tokenizer.chat_template") != NULL, vc->has_template);
    assert_int_equal(poot_gguf_find(g, "tokenizer.ggml.merges") != NULL, vc->has_merges);
    /* A type mismatch is FORMAT, naming the key. */
    POOT_ASSERT_STATUS_MSG(poot_gguf_get_u32(g, "tokenizer.ggml.model", &bos), POOT_FORMAT,
                           "tokenizer.ggml.model");
    POOT_ASSERT_STATUS(poot_gguf_get_u32(g, "no.such.key", &bos), POOT_NOT_FOUND);
    poot_gguf_destroy(g);
  }
  if (!found) skip();
}

static void test_vocab_details(void **state) {
  (void)state;
  char path[1024];
  if (!poot_test_data_path("vocab/ggml-vocab-llama-spm.gguf", path, sizeof path)) skip();
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(poot_gguf_open(path, &g));
  const poot_gguf_value *a;
  POOT_ASSERT_OK(poot_gguf_get_array(g, "tokenizer.ggml.scores", POOT_GGUF_VALUE_F32, &a));
  assert_int_equal(poot_gguf_array_len(a), 32000);
  float f;
  POOT_ASSERT_OK(poot_gguf_array_get_f32(a, 0, &f));
  assert_true(f == 0.0f);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_I32, &a));
  int32_t tt;
  POOT_ASSERT_OK(poot_gguf_array_get_i32(a, 0, &tt));
  assert_int_equal(tt, 2); /* <unk> is UNKNOWN */
  POOT_ASSERT_OK(poot_gguf_array_get_i32(a, 1, &tt));
  assert_int_equal(tt, 3); /* <s> is CONTROL */
  POOT_ASSERT_OK(poot_gguf_array_get_i32(a, 3, &tt));
  assert_int_equal(tt, 6); /* <0x00> is BYTE */
  POOT_ASSERT_OK(poot_gguf_get_array(g, "tokenizer.ggml.tokens", POOT_GGUF_VALUE_STRING, &a));
  const char *s;
  size_t n;
  POOT_ASSERT_OK(poot_gguf_array_get_string(a, 3, &s, &n));
  assert_int_equal(n, 6);
  assert_memory_equal(s, "<0x00>", 6);
  bool b;
  POOT_ASSERT_OK(poot_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b));
  assert_true(b);
  float eps;
  POOT_ASSERT_OK(poot_gguf_get_f32(g, "llama.attention.layer_norm_rms_epsilon", &eps));
  assert_true(eps == 1e-5f);
  uint8_t u8;
  POOT_ASSERT_STATUS_MSG(poot_gguf_get_u8(g, "llama.vocab_size", &u8), POOT_FORMAT, "fit");
  int64_t i64;
  POOT_ASSERT_OK(poot_gguf_get_i64(g, "llama.vocab_size", &i64));
  assert_int_equal(i64, 32000);
  poot_gguf_destroy(g);
}

/* ----------------------------------------------------------- round trip */

static const char *const str_elems[] = {"", "a", "h\xc3\xa9llo", "with\0nul", "last"};
static const size_t str_lens[] = {0, 1, 6, 8, 4};

static void build_roundtrip(poot_gguf_writer *w, uint32_t alignment, uint8_t **tensor_bytes,
                            size_t *n_tensors) {
  POOT_ASSERT_OK(poot_gguf_writer_set_alignment(w, alignment));
  poot_gguf_value v = {0};
  v.type = POOT_GGUF_VALUE_U8, v.u = 200;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.u8", &v));
  v.type = POOT_GGUF_VALUE_I8, v.i = -100;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.i8", &v));
  v.type = POOT_GGUF_VALUE_U16, v.u = 65000;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.u16", &v));
  v.type = POOT_GGUF_VALUE_I16, v.i = -32000;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.i16", &v));
  POOT_ASSERT_OK(poot_gguf_writer_set_u32(w, "t.u32", 4000000000u));
  POOT_ASSERT_OK(poot_gguf_writer_set_i32(w, "t.i32", -2000000000));
  POOT_ASSERT_OK(poot_gguf_writer_set_f32(w, "t.f32", 1.5e-7f));
  POOT_ASSERT_OK(poot_gguf_writer_set_bool(w, "t.bool", true));
  POOT_ASSERT_OK(poot_gguf_writer_set_string(w, "t.string", "h\xc3\xa9\0x", 5));
  POOT_ASSERT_OK(poot_gguf_writer_set_string(w, "t.empty", "", 0));
  POOT_ASSERT_OK(poot_gguf_writer_set_u64(w, "t.u64", UINT64_MAX - 1));
  v.type = POOT_GGUF_VALUE_I64, v.i = INT64_MIN + 3;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.i64", &v));
  v.type = POOT_GGUF_VALUE_F64, v.f = -3.141592653589793;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "t.f64", &v));
  /* Arrays of every fixed type. */
  uint8_t u8s[3] = {1, 2, 255};
  int8_t i8s[3] = {-1, 0, 127};
  uint16_t u16s[2] = {7, 65535};
  int16_t i16s[2] = {-7, 32767};
  uint32_t u32s[2] = {0, 4294967295u};
  int32_t i32s[4] = {-1, 2, -3, 4};
  float f32s[3] = {0.5f, -2.0f, 1e30f};
  uint8_t bools[3] = {1, 0, 1};
  uint64_t u64s[2] = {1, UINT64_MAX};
  int64_t i64s[2] = {INT64_MIN, INT64_MAX};
  double f64s[2] = {1e-300, -0.0};
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.u8", POOT_GGUF_VALUE_U8, u8s, 3));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.i8", POOT_GGUF_VALUE_I8, i8s, 3));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.u16", POOT_GGUF_VALUE_U16, u16s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.i16", POOT_GGUF_VALUE_I16, i16s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.u32", POOT_GGUF_VALUE_U32, u32s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.i32", POOT_GGUF_VALUE_I32, i32s, 4));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.f32", POOT_GGUF_VALUE_F32, f32s, 3));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.bool", POOT_GGUF_VALUE_BOOL, bools, 3));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.u64", POOT_GGUF_VALUE_U64, u64s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.i64", POOT_GGUF_VALUE_I64, i64s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.f64", POOT_GGUF_VALUE_F64, f64s, 2));
  POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "a.empty", POOT_GGUF_VALUE_I32, NULL, 0));
  POOT_ASSERT_OK(poot_gguf_writer_set_string_array(w, "a.string", str_elems, str_lens, 5));
  /* Nested: [[1,2,3,4], [], [["x"], ["", "y"]]] — an array of arrays whose
   * third element is itself an array of string arrays. */
  poot_gguf_string sx[1] = {{"x", 1}}, sy[2] = {{"", 0}, {"y", 1}};
  poot_gguf_value inner[2] = {0};
  inner[0].type = POOT_GGUF_VALUE_ARRAY, inner[0].arr.elem_type = POOT_GGUF_VALUE_STRING;
  inner[0].arr.count = 1, inner[0].arr.strings = sx;
  inner[1].type = POOT_GGUF_VALUE_ARRAY, inner[1].arr.elem_type = POOT_GGUF_VALUE_STRING;
  inner[1].arr.count = 2, inner[1].arr.strings = sy;
  poot_gguf_value outer_items[3] = {0};
  outer_items[0].type = POOT_GGUF_VALUE_ARRAY, outer_items[0].arr.elem_type = POOT_GGUF_VALUE_I32;
  outer_items[0].arr.count = 4, outer_items[0].arr.raw = i32s;
  outer_items[1].type = POOT_GGUF_VALUE_ARRAY, outer_items[1].arr.elem_type = POOT_GGUF_VALUE_U8;
  outer_items[2].type = POOT_GGUF_VALUE_ARRAY, outer_items[2].arr.elem_type = POOT_GGUF_VALUE_ARRAY;
  outer_items[2].arr.count = 2, outer_items[2].arr.items = inner;
  poot_gguf_value nested = {.type = POOT_GGUF_VALUE_ARRAY};
  nested.arr.elem_type = POOT_GGUF_VALUE_ARRAY, nested.arr.count = 3,
  nested.arr.items = outer_items;
  POOT_ASSERT_OK(poot_gguf_writer_set_value(w, "a.nested", &nested));
  /* Replacing a value keeps the key's place. */
  POOT_ASSERT_OK(poot_gguf_writer_set_u32(w, "t.replaced", 1));
  POOT_ASSERT_OK(poot_gguf_writer_set_u32(w, "t.replaced", 2));

  /* One tensor of every type poot knows, with pseudo-random bytes. */
  size_t k = 0;
  uint64_t seed = 42;
  for (uint32_t t = 0; t < POOT_GGUF_TYPE_COUNT_; t++) {
    const poot_gguf_type_info *info = poot_gguf_type_info_of(t);
    if (!info) continue;
    uint64_t dims[2] = {info->block_size * 2, 3};
    uint64_t size = 0;
    assert_true(poot_gguf_row_size(t, dims[0], &size));
    size *= dims[1];
    tensor_bytes[k] = malloc(size);
    for (uint64_t i = 0; i < size; i++) tensor_bytes[k][i] = (uint8_t)poot_test_rand_u64(&seed);
    char name[64];
    snprintf(name, sizeof name, "tensor.%s", info->name);
    POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, name, t, 2, dims, tensor_bytes[k]));
    k++;
  }
  /* A 1-D and a 4-D tensor. */
  uint64_t d1[1] = {5}, d4[4] = {2, 3, 1, 2};
  tensor_bytes[k] = calloc(5, 4);
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "one_d", POOT_GGUF_TYPE_F32, 1, d1, tensor_bytes[k]));
  k++;
  tensor_bytes[k] = calloc(12, 4);
  for (int i = 0; i < 12; i++) ((float *)tensor_bytes[k])[i] = (float)i;
  POOT_ASSERT_OK(
      poot_gguf_writer_add_tensor(w, "four_d", POOT_GGUF_TYPE_F32, 4, d4, tensor_bytes[k]));
  k++;
  *n_tensors = k;
}

/* Scalars of every kind, key order and the conversions' range checks. */
static void check_scalars(const poot_gguf *g, uint32_t alignment) {
  assert_int_equal(poot_gguf_version(g), 3);
  assert_int_equal(poot_gguf_alignment(g), alignment);
  uint8_t u8;
  int8_t i8;
  uint16_t u16;
  int16_t i16;
  uint32_t u32;
  int32_t i32;
  uint64_t u64;
  int64_t i64;
  float f32;
  double f64;
  bool b;
  const char *s;
  size_t n;
  POOT_ASSERT_OK(poot_gguf_get_u8(g, "t.u8", &u8));
  assert_int_equal(u8, 200);
  POOT_ASSERT_OK(poot_gguf_get_i8(g, "t.i8", &i8));
  assert_int_equal(i8, -100);
  POOT_ASSERT_OK(poot_gguf_get_u16(g, "t.u16", &u16));
  assert_int_equal(u16, 65000);
  POOT_ASSERT_OK(poot_gguf_get_i16(g, "t.i16", &i16));
  assert_int_equal(i16, -32000);
  POOT_ASSERT_OK(poot_gguf_get_u32(g, "t.u32", &u32));
  assert_int_equal(u32, 4000000000u);
  POOT_ASSERT_OK(poot_gguf_get_i32(g, "t.i32", &i32));
  assert_int_equal(i32, -2000000000);
  POOT_ASSERT_OK(poot_gguf_get_f32(g, "t.f32", &f32));
  assert_true(f32 == 1.5e-7f);
  POOT_ASSERT_OK(poot_gguf_get_bool(g, "t.bool", &b));
  assert_true(b);
  POOT_ASSERT_OK(poot_gguf_get_string(g, "t.string", &s, &n));
  assert_int_equal(n, 5);
  assert_memory_equal(s, "h\xc3\xa9\0x", 5);
  POOT_ASSERT_OK(poot_gguf_get_string(g, "t.empty", &s, &n));
  assert_int_equal(n, 0);
  POOT_ASSERT_OK(poot_gguf_get_u64(g, "t.u64", &u64));
  assert_true(u64 == UINT64_MAX - 1);
  POOT_ASSERT_OK(poot_gguf_get_i64(g, "t.i64", &i64));
  assert_true(i64 == INT64_MIN + 3);
  POOT_ASSERT_OK(poot_gguf_get_f64(g, "t.f64", &f64));
  assert_true(f64 == -3.141592653589793);
  POOT_ASSERT_OK(poot_gguf_get_u32(g, "t.replaced", &u32));
  assert_int_equal(u32, 2);
  /* Keys keep their first-set order. */
  size_t first = alignment != 32 ? 1 : 0; /* general.alignment comes first */
  if (first) assert_string_equal(poot_gguf_kv_key(g, 0), "general.alignment");
  assert_string_equal(poot_gguf_kv_key(g, first), "t.u8");
  assert_string_equal(poot_gguf_kv_key(g, first + 27), "t.replaced");
  assert_true(poot_gguf_find(g, "t.replaced") == poot_gguf_kv_value(g, first + 27));
  assert_int_equal(poot_gguf_kv_count(g), first + 28);
  /* Range checks in conversions. */
  POOT_ASSERT_STATUS(poot_gguf_get_i8(g, "t.u8", &i8), POOT_FORMAT);
  POOT_ASSERT_STATUS(poot_gguf_get_u32(g, "t.i32", &u32), POOT_FORMAT);
  POOT_ASSERT_STATUS(poot_gguf_get_i64(g, "t.u64", &i64), POOT_FORMAT);
  POOT_ASSERT_OK(poot_gguf_get_i64(g, "t.u16", &i64));
  assert_int_equal(i64, 65000);
}

/* Every array kind, nested arrays and the element-type checks. */
static void check_arrays(const poot_gguf *g) {
  int32_t i32;
  uint64_t u64;
  int64_t i64;
  float f32;
  double f64;
  bool b;
  const char *s;
  size_t n;
  const poot_gguf_value *a;
  poot_gguf_value e;
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.u8", POOT_GGUF_VALUE_U8, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_value(a, 2, &e));
  assert_int_equal(e.u, 255);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.i8", POOT_GGUF_VALUE_I8, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_i64(a, 0, &i64));
  assert_int_equal(i64, -1);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.u16", POOT_GGUF_VALUE_U16, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_u64(a, 1, &u64));
  assert_int_equal(u64, 65535);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.i16", POOT_GGUF_VALUE_I16, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_i64(a, 0, &i64));
  assert_int_equal(i64, -7);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.u32", POOT_GGUF_VALUE_U32, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_u64(a, 1, &u64));
  assert_int_equal(u64, 4294967295u);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.i32", POOT_GGUF_VALUE_I32, &a));
  assert_int_equal(poot_gguf_array_len(a), 4);
  POOT_ASSERT_OK(poot_gguf_array_get_i32(a, 2, &i32));
  assert_int_equal(i32, -3);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.f32", POOT_GGUF_VALUE_F32, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_f32(a, 2, &f32));
  assert_true(f32 == 1e30f);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.bool", POOT_GGUF_VALUE_BOOL, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_bool(a, 1, &b));
  assert_false(b);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.u64", POOT_GGUF_VALUE_U64, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_u64(a, 1, &u64));
  assert_true(u64 == UINT64_MAX);
  POOT_ASSERT_STATUS(poot_gguf_array_get_i64(a, 1, &i64), POOT_FORMAT);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.i64", POOT_GGUF_VALUE_I64, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_i64(a, 0, &i64));
  assert_true(i64 == INT64_MIN);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.f64", POOT_GGUF_VALUE_F64, &a));
  POOT_ASSERT_OK(poot_gguf_array_get_f64(a, 0, &f64));
  assert_true(f64 == 1e-300);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.empty", POOT_GGUF_VALUE_I32, &a));
  assert_int_equal(poot_gguf_array_len(a), 0);
  POOT_ASSERT_STATUS(poot_gguf_array_get_i32(a, 0, &i32), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_gguf_get_array(g, "a.i32", POOT_GGUF_VALUE_F32, &a), POOT_FORMAT);
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.string", POOT_GGUF_VALUE_STRING, &a));
  assert_int_equal(poot_gguf_array_len(a), 5);
  for (int i = 0; i < 5; i++) {
    POOT_ASSERT_OK(poot_gguf_array_get_string(a, (uint64_t)i, &s, &n));
    assert_int_equal(n, str_lens[i]);
    if (n) assert_memory_equal(s, str_elems[i], n);
  }
  POOT_ASSERT_OK(poot_gguf_get_array(g, "a.nested", POOT_GGUF_VALUE_ARRAY, &a));
  assert_int_equal(poot_gguf_array_len(a), 3);
  const poot_gguf_value *x, *y, *z;
  POOT_ASSERT_OK(poot_gguf_array_get_array(a, 0, &x));
  assert_int_equal(poot_gguf_array_len(x), 4);
  POOT_ASSERT_OK(poot_gguf_array_get_i32(x, 3, &i32));
  assert_int_equal(i32, 4);
  POOT_ASSERT_OK(poot_gguf_array_get_array(a, 1, &x));
  assert_int_equal(poot_gguf_array_len(x), 0);
  assert_int_equal(x->arr.elem_type, POOT_GGUF_VALUE_U8);
  POOT_ASSERT_OK(poot_gguf_array_get_array(a, 2, &x));
  POOT_ASSERT_OK(poot_gguf_array_get_array(x, 1, &y));
  POOT_ASSERT_OK(poot_gguf_array_get_string(y, 1, &s, &n));
  assert_int_equal(n, 1);
  assert_memory_equal(s, "y", 1);
  POOT_ASSERT_OK(poot_gguf_array_get_array(x, 0, &z));
  POOT_ASSERT_OK(poot_gguf_array_get_string(z, 0, &s, &n));
  assert_memory_equal(s, "x", 1);
  POOT_ASSERT_STATUS(poot_gguf_array_get_string(a, 0, &s, &n), POOT_FORMAT);
}

/* Tensors: bytes, shapes, alignment. */
static void check_tensors(const poot_gguf *g, uint32_t alignment, uint8_t **tensor_bytes,
                          size_t n_tensors) {
  assert_int_equal(poot_gguf_tensor_count(g), n_tensors);
  size_t size = 0;
  const uint8_t *base = poot_gguf_file_data(g, &size);
  assert_int_equal(poot_gguf_data_offset(g) % alignment, 0);
  size_t k = 0;
  for (uint32_t t = 0; t < POOT_GGUF_TYPE_COUNT_; t++) {
    const poot_gguf_type_info *info = poot_gguf_type_info_of(t);
    if (!info) continue;
    char name[64];
    snprintf(name, sizeof name, "tensor.%s", info->name);
    const poot_gguf_tensor *tensor = poot_gguf_find_tensor(g, name);
    assert_non_null(tensor);
    assert_int_equal(tensor->type, t);
    assert_int_equal(tensor->n_dims, 2);
    assert_int_equal(tensor->dims[0], info->block_size * 2);
    assert_int_equal(tensor->dims[1], 3);
    assert_int_equal(tensor->n_elements, info->block_size * 6);
    assert_int_equal(tensor->size, (uint64_t)info->type_size * 6);
    assert_int_equal((size_t)(tensor->data - base) % alignment, 0);
    assert_memory_equal(tensor->data, tensor_bytes[k], tensor->size);
    k++;
  }
  const poot_gguf_tensor *t4 = poot_gguf_find_tensor(g, "four_d");
  assert_non_null(t4);
  assert_int_equal(t4->n_dims, 4);
  assert_int_equal(t4->dims[3], 2);
  assert_int_equal(t4->n_elements, 12);
  float last;
  memcpy(&last, t4->data + 44, 4);
  assert_true(last == 11.0f);
  assert_null(poot_gguf_find_tensor(g, "absent"));
}

static void roundtrip(uint32_t alignment) {
  poot_gguf_writer *w = NULL;
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  uint8_t *tensor_bytes[64] = {0};
  size_t n_tensors = 0;
  build_roundtrip(w, alignment, tensor_bytes, &n_tensors);
  char path[1024];
  snprintf(path, sizeof path, "%s/roundtrip-%u.gguf", poot_test_tmpdir(), alignment);
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, path));
  poot_gguf_writer_destroy(w);
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(poot_gguf_open(path, &g));
  check_scalars(g, alignment);
  check_arrays(g);
  check_tensors(g, alignment, tensor_bytes, n_tensors);
  poot_gguf_destroy(g);
  for (size_t i = 0; i < n_tensors; i++) free(tensor_bytes[i]);
}

static void test_roundtrip_default_alignment(void **state) {
  (void)state;
  roundtrip(32);
}

static void test_roundtrip_alignment_64(void **state) {
  (void)state;
  roundtrip(64);
}

/* The writer can stream tensor data from a callback. */
static poot_status fill_source(void *ctx, size_t index, void *dst, uint64_t size) {
  (void)ctx;
  memset(dst, (int)(index + 1), (size_t)size);
  return NULL;
}

static void test_writer_source(void **state) {
  (void)state;
  poot_gguf_writer *w = NULL;
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  uint64_t dims[2] = {64, 2};
  POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, "a", POOT_GGUF_TYPE_Q8_0, 2, dims, NULL));
  POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, "b", POOT_GGUF_TYPE_F16, 2, dims, NULL));
  POOT_ASSERT_STATUS(poot_gguf_writer_add_tensor(w, "a", POOT_GGUF_TYPE_F16, 2, dims, NULL),
                     POOT_INVALID_ARGUMENT);
  uint64_t bad[1] = {33};
  POOT_ASSERT_STATUS(poot_gguf_writer_add_tensor(w, "c", POOT_GGUF_TYPE_Q4_0, 1, bad, NULL),
                     POOT_INVALID_ARGUMENT);
  char path[1024];
  snprintf(path, sizeof path, "%s/nosource.gguf", poot_test_tmpdir());
  POOT_ASSERT_STATUS(poot_gguf_writer_write_file(w, path), POOT_INVALID_ARGUMENT);
  poot_gguf_writer_set_source(w, fill_source, NULL);
  snprintf(path, sizeof path, "%s/source.gguf", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, path));
  poot_gguf_writer_destroy(w);
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(poot_gguf_open(path, &g));
  const poot_gguf_tensor *a = poot_gguf_find_tensor(g, "a"), *b = poot_gguf_find_tensor(g, "b");
  assert_int_equal(a->size, 2 * 2 * 34);
  assert_int_equal(b->size, 64 * 2 * 2);
  for (uint64_t i = 0; i < a->size; i++) assert_int_equal(a->data[i], 1);
  for (uint64_t i = 0; i < b->size; i++) assert_int_equal(b->data[i], 2);
  poot_gguf_destroy(g);
}

/* ------------------------------------------------------------ malformed */

/* A small valid file: two keys (one a string array), two tensors, the last
 * one ending exactly at the end of the file. */
static bytes small_file(void) {
  bytes b = {0};
  b_header(&b, 3, 2, 2);
  b_str(&b, "general.architecture");
  b_u32(&b, POOT_GGUF_VALUE_STRING);
  b_str(&b, "llama");
  b_str(&b, "tokenizer.ggml.tokens");
  b_u32(&b, POOT_GGUF_VALUE_ARRAY);
  b_u32(&b, POOT_GGUF_VALUE_STRING);
  b_u64(&b, 2);
  b_str(&b, "ab");
  b_str(&b, "c");
  b_str(&b, "w");
  b_u32(&b, 2);
  b_u64(&b, 4);
  b_u64(&b, 2);
  b_u32(&b, POOT_GGUF_TYPE_F32);
  b_u64(&b, 0);
  b_str(&b, "v");
  b_u32(&b, 1);
  b_u64(&b, 8);
  b_u32(&b, POOT_GGUF_TYPE_F32);
  b_u64(&b, 32);
  while (b.len % 32) b_put(&b, "\0", 1);
  for (int i = 0; i < 16; i++) {
    float f = (float)i;
    b_put(&b, &f, 4);
  }
  return b;
}

/* Two tensors: "w" [4, 4] of type w_type at offset 0, then "v" (8 f32) at
 * v_offset; the data section holds 64 + 32 bytes (w as f16 fills 32). */
static bytes two_tensors(uint32_t w_type, uint64_t v_offset) {
  bytes b = {0};
  b_header(&b, 3, 2, 0);
  b_str(&b, "w");
  b_u32(&b, 2);
  b_u64(&b, 4);
  b_u64(&b, 4);
  b_u32(&b, w_type);
  b_u64(&b, 0);
  b_str(&b, "v");
  b_u32(&b, 1);
  b_u64(&b, 8);
  b_u32(&b, POOT_GGUF_TYPE_F32);
  b_u64(&b, v_offset);
  while (b.len % 32) b_put(&b, "\0", 1);
  for (int i = 0; i < 24; i++) {
    float f = (float)i;
    b_put(&b, &f, 4);
  }
  return b;
}

/* Tensors may not share bytes (llama.cpp refuses these files too): a copied
 * offset, or an f16 tensor relabelled f32 that runs into its neighbour. */
static void test_overlapping_tensors(void **state) {
  (void)state;
  poot_gguf *g = NULL;
  bytes b = two_tensors(POOT_GGUF_TYPE_F16, 32); /* the well-formed file */
  POOT_ASSERT_OK(open_bytes(&b, &g));
  assert_int_equal(poot_gguf_find_tensor(g, "w")->size, 32);
  poot_gguf_destroy(g);
  free(b.data);
  b = two_tensors(POOT_GGUF_TYPE_F16, 0); /* v copies w's offset */
  expect_format(&b, "tensor 'v' has offset 0, expected at least 32: tensor 'w'");
  expect_format(&b, "may not overlap");
  free(b.data);
  b = two_tensors(POOT_GGUF_TYPE_F32, 32); /* w relabelled f32: 64 bytes */
  expect_format(&b, "tensor 'v' has offset 32, expected at least 64: tensor 'w' (f32, 64 bytes");
  free(b.data);
  /* v relabelled to run past the data section's end. */
  b = two_tensors(POOT_GGUF_TYPE_F16, 96);
  expect_format(&b, "tensor 'v': data [96, +32)");
  free(b.data);
}

static void test_truncated_everywhere(void **state) {
  (void)state;
  bytes b = small_file();
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(open_bytes(&b, &g));
  assert_int_equal(poot_gguf_tensor_count(g), 2);
  const poot_gguf_tensor *v = poot_gguf_find_tensor(g, "v");
  float f;
  memcpy(&f, v->data + 28, 4);
  assert_true(f == 15.0f);
  poot_gguf_destroy(g);
  for (size_t n = 0; n < b.len; n++) {
    bytes t = {b.data, n, n};
    poot_status st = open_bytes(&t, &g);
    if (poot_status_code_of(st) != POOT_FORMAT)
      fail_msg("truncated at %zu: %s %s", n, poot_status_code_name(poot_status_code_of(st)),
               poot_status_message(st));
    if (!strstr(poot_status_message(st), "offset"))
      fail_msg("truncated at %zu: message lacks the offset: %s", n, poot_status_message(st));
    poot_status_free(st);
    assert_null(g);
  }
  free(b.data);
}

/* Patches bytes of a copy of the small file at `at`. */
static bytes patched(size_t at, const void *p, size_t n) {
  bytes b = small_file();
  memcpy(b.data + at, p, n);
  return b;
}

static void test_malformed_fields(void **state) {
  (void)state;
  /* Offsets in the small file. */
  const size_t at_version = 4, at_ntensors = 8, at_nkv = 16, at_key0_len = 24;
  const size_t at_type0 = at_key0_len + 8 + 20;
  const size_t at_arr_type = at_type0 + 4 + 8 + 5 + 8 + 21 + 4;
  const size_t at_arr_count = at_arr_type + 4;
  const size_t at_t0 = at_arr_count + 8 + 10 + 9;
  const size_t at_t0_ndims = at_t0 + 9;
  const size_t at_t0_dim0 = at_t0_ndims + 4;
  const size_t at_t0_type = at_t0_dim0 + 16;
  const size_t at_t0_offset = at_t0_type + 4;
  const size_t at_t1_offset = at_t0_offset + 8 + 9 + 4 + 8 + 4;
  bytes b;
  uint32_t u32;
  uint64_t u64;
  char msg[128];

  b = patched(0, "GGUX", 4);
  expect_format(&b, "magic");
  free(b.data);

  u32 = 1;
  b = patched(at_version, &u32, 4);
  poot_gguf *g = NULL;
  POOT_ASSERT_STATUS_MSG(open_bytes(&b, &g), POOT_UNSUPPORTED, "version 1");
  free(b.data);
  u32 = 0x03000000u;
  b = patched(at_version, &u32, 4);
  POOT_ASSERT_STATUS_MSG(open_bytes(&b, &g), POOT_UNSUPPORTED, "big-endian");
  free(b.data);
  /* Version 2 has the same layout. */
  u32 = 2;
  b = patched(at_version, &u32, 4);
  POOT_ASSERT_OK(open_bytes(&b, &g));
  assert_int_equal(poot_gguf_version(g), 2);
  poot_gguf_destroy(g);
  free(b.data);

  u64 = UINT64_MAX;
  b = patched(at_ntensors, &u64, 8);
  snprintf(msg, sizeof msg, "offset %zu: tensor count", at_ntensors);
  expect_format(&b, msg);
  free(b.data);
  b = patched(at_nkv, &u64, 8);
  snprintf(msg, sizeof msg, "offset %zu: metadata count", at_nkv);
  expect_format(&b, msg);
  free(b.data);
  u64 = UINT64_MAX / 2;
  b = patched(at_key0_len, &u64, 8);
  snprintf(msg, sizeof msg, "offset %zu", at_key0_len);
  expect_format(&b, msg);
  free(b.data);
  u32 = 13;
  b = patched(at_type0, &u32, 4);
  snprintf(msg, sizeof msg, "offset %zu: value type 13 of key 'general.architecture'", at_type0);
  expect_format(&b, msg);
  free(b.data);
  b = patched(at_arr_type, &u32, 4);
  expect_format(&b, "array element type 13");
  free(b.data);
  u64 = 1ull << 62;
  b = patched(at_arr_count, &u64, 8);
  snprintf(msg, sizeof msg, "offset %zu: array of key 'tokenizer.ggml.tokens' claims",
           at_arr_count);
  expect_format(&b, msg);
  free(b.data);
  u32 = 5;
  b = patched(at_t0_ndims, &u32, 4);
  expect_format(&b, "tensor 'w' has 5 dimensions");
  free(b.data);
  u64 = 1ull << 40;
  b = patched(at_t0_dim0, &u64, 8);
  expect_format(&b, "runs past the end");
  free(b.data);
  u64 = UINT64_MAX;
  b = patched(at_t0_dim0, &u64, 8);
  expect_format(&b, "overflows");
  free(b.data);
  u32 = 4; /* a retired type id */
  b = patched(at_t0_type, &u32, 4);
  POOT_ASSERT_STATUS_MSG(open_bytes(&b, &g), POOT_UNSUPPORTED, "type id 4");
  free(b.data);
  u32 = POOT_GGUF_TYPE_Q4_0; /* 4 is not a multiple of 32 */
  b = patched(at_t0_type, &u32, 4);
  expect_format(&b, "block size 32");
  free(b.data);
  u64 = 16;
  b = patched(at_t0_offset, &u64, 8);
  expect_format(&b, "not a multiple of the alignment");
  free(b.data);
  u64 = 64;
  b = patched(at_t1_offset, &u64, 8);
  expect_format(&b, "tensor 'v'");
  free(b.data);
  /* A duplicate key and a duplicate tensor name. */
  b = patched(at_key0_len + 8, "tokenizer.ggml.token", 20);
  POOT_ASSERT_OK(open_bytes(&b, &g)); /* differs from "tokens" */
  poot_gguf_destroy(g);
  free(b.data);
  b = patched(at_t0 + 8, "v", 1);
  expect_format(&b, "duplicate tensor name 'v'");
  free(b.data);
}

static void test_hostile_headers(void **state) {
  (void)state;
  bytes b = {0};
  /* general.alignment of the wrong type, zero, and not a power of two. */
  b_header(&b, 3, 0, 1);
  b_str(&b, "general.alignment");
  b_u32(&b, POOT_GGUF_VALUE_U64);
  b_u64(&b, 32);
  expect_format(&b, "general.alignment");
  b.len = 0;
  b_header(&b, 3, 0, 1);
  b_str(&b, "general.alignment");
  b_u32(&b, POOT_GGUF_VALUE_U32);
  b_u32(&b, 48);
  expect_format(&b, "power of two");
  b.len = 0;
  /* A duplicate key. */
  b_header(&b, 3, 0, 2);
  b_str(&b, "k");
  b_u32(&b, POOT_GGUF_VALUE_U8);
  b_put(&b, "\1", 1);
  b_str(&b, "k");
  b_u32(&b, POOT_GGUF_VALUE_U8);
  b_put(&b, "\2", 1);
  expect_format(&b, "duplicate metadata key 'k'");
  b.len = 0;
  /* A key with a NUL byte (keys are handed out NUL-terminated). */
  b_header(&b, 3, 0, 1);
  b_u64(&b, 3);
  b_put(&b, "a\0b", 3);
  b_u32(&b, POOT_GGUF_VALUE_U8);
  b_put(&b, "\1", 1);
  expect_format(&b, "offset 24: metadata key 0 contains a NUL byte");
  b.len = 0;
  /* Arrays nested deeper than the limit. */
  b_header(&b, 3, 0, 1);
  b_str(&b, "deep");
  b_u32(&b, POOT_GGUF_VALUE_ARRAY);
  for (int i = 0; i < 40; i++) {
    b_u32(&b, POOT_GGUF_VALUE_ARRAY);
    b_u64(&b, 1);
  }
  expect_format(&b, "nested deeper");
  b.len = 0;
  /* A nested array of many empty arrays is fine when the bytes are there. */
  b_header(&b, 3, 0, 1);
  b_str(&b, "many");
  b_u32(&b, POOT_GGUF_VALUE_ARRAY);
  b_u32(&b, POOT_GGUF_VALUE_ARRAY);
  b_u64(&b, 1000);
  for (int i = 0; i < 1000; i++) {
    b_u32(&b, POOT_GGUF_VALUE_F64);
    b_u64(&b, 0);
  }
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(open_bytes(&b, &g));
  assert_int_equal(poot_gguf_array_len(poot_gguf_find(g, "many")), 1000);
  poot_gguf_destroy(g);
  /* …and claiming one more than there are fails without a big allocation. */
  uint64_t more = 1001;
  memcpy(b.data + 24 + 8 + 4 + 4 + 4, &more, 8);
  expect_format(&b, "claims 1001 elements");
  b.len = 0;
  /* Huge string lengths inside a string array. */
  b_header(&b, 3, 0, 1);
  b_str(&b, "s");
  b_u32(&b, POOT_GGUF_VALUE_ARRAY);
  b_u32(&b, POOT_GGUF_VALUE_STRING);
  b_u64(&b, 2);
  b_str(&b, "ok");
  b_u64(&b, UINT64_MAX);
  expect_format(&b, "string 1 of key 's'");
  b.len = 0;
  /* Empty input and a lone magic. */
  expect_format(&b, "offset 0");
  b_u32(&b, POOT_GGUF_MAGIC);
  expect_format(&b, "offset 4: file truncated reading the version");
  free(b.data);
}

/* Every allocation failure during open is OUT_OF_MEMORY, never a crash or a
 * leak (ASan checks the latter). */
static poot_status try_open(void *ctx) {
  poot_gguf *g = NULL;
  poot_status st = open_bytes(ctx, &g);
  assert_true(st ? g == NULL : g != NULL);
  poot_gguf_destroy(g);
  return st;
}

static void test_out_of_memory(void **state) {
  (void)state;
  bytes b = small_file();
  assert_true(poot_test_oom_sweep("open small gguf", try_open, &b, 200) > 0);
  free(b.data);
}

static void test_missing_file(void **state) {
  (void)state;
  poot_gguf *g = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/absent.gguf", poot_test_tmpdir());
  poot_status st = poot_gguf_open(path, &g);
  assert_true(poot_status_code_of(st) == POOT_NOT_FOUND || poot_status_code_of(st) == POOT_IO);
  poot_status_free(st);
  assert_null(g);
}

/* Copying every value of a file into a writer reproduces the file byte for
 * byte; a file without tensors ends right after its metadata. */
static void test_rewrite_identity(void **state) {
  (void)state;
  poot_gguf_writer *w = NULL;
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  uint8_t *tensor_bytes[64] = {0};
  size_t n_tensors = 0;
  build_roundtrip(w, 64, tensor_bytes, &n_tensors);
  char a[1024], b[1024];
  snprintf(a, sizeof a, "%s/identity-a.gguf", poot_test_tmpdir());
  snprintf(b, sizeof b, "%s/identity-b.gguf", poot_test_tmpdir());
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, a));
  poot_gguf_writer_destroy(w);
  poot_gguf *g = NULL;
  POOT_ASSERT_OK(poot_gguf_open(a, &g));
  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  for (size_t i = 0; i < poot_gguf_kv_count(g); i++)
    POOT_ASSERT_OK(poot_gguf_writer_set_value(w, poot_gguf_kv_key(g, i), poot_gguf_kv_value(g, i)));
  POOT_ASSERT_OK(poot_gguf_writer_set_alignment(w, poot_gguf_alignment(g)));
  for (size_t i = 0; i < poot_gguf_tensor_count(g); i++) {
    const poot_gguf_tensor *t = poot_gguf_tensor_at(g, i);
    POOT_ASSERT_OK(poot_gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->dims, t->data));
  }
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, b));
  poot_gguf_writer_destroy(w);
  poot_gguf_destroy(g);
  char *da = NULL, *db = NULL;
  size_t na = 0, nb = 0;
  POOT_ASSERT_OK(poot_file_read_all(a, &da, &na));
  POOT_ASSERT_OK(poot_file_read_all(b, &db, &nb));
  assert_int_equal(na, nb);
  assert_memory_equal(da, db, na);
  poot_free(da);
  poot_free(db);
  for (size_t i = 0; i < n_tensors; i++) free(tensor_bytes[i]);

  POOT_ASSERT_OK(poot_gguf_writer_create(&w));
  POOT_ASSERT_OK(poot_gguf_writer_set_u32(w, "k", 7));
  POOT_ASSERT_OK(poot_gguf_writer_write_file(w, a));
  poot_gguf_writer_destroy(w);
  POOT_ASSERT_OK(poot_file_read_all(a, &da, &na));
  assert_int_equal(na, 24 + 8 + 1 + 4 + 4); /* header, key, type, value */
  poot_free(da);
}

static void test_type_table(void **state) {
  (void)state;
  poot_gguf_type t;
  POOT_ASSERT_OK(poot_gguf_type_from_name("Q8_0", &t));
  assert_int_equal(t, POOT_GGUF_TYPE_Q8_0);
  POOT_ASSERT_OK(poot_gguf_type_from_name("bf16", &t));
  assert_int_equal(t, 30);
  POOT_ASSERT_STATUS(poot_gguf_type_from_name("q9_9", &t), POOT_NOT_FOUND);
  assert_null(poot_gguf_type_info_of(4));
  assert_null(poot_gguf_type_info_of(1000));
  const poot_gguf_type_info *q6 = poot_gguf_type_info_of(POOT_GGUF_TYPE_Q6_K);
  assert_int_equal(q6->block_size, 256);
  assert_int_equal(q6->type_size, 210);
  assert_true(q6->computable);
  uint64_t bytes_ = 0;
  assert_true(poot_gguf_row_size(POOT_GGUF_TYPE_Q4_K, 512, &bytes_));
  assert_int_equal(bytes_, 288);
  assert_false(poot_gguf_row_size(POOT_GGUF_TYPE_Q4_K, 100, &bytes_));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vocab_files),
      cmocka_unit_test(test_vocab_details),
      cmocka_unit_test(test_roundtrip_default_alignment),
      cmocka_unit_test(test_roundtrip_alignment_64),
      cmocka_unit_test(test_writer_source),
      cmocka_unit_test(test_truncated_everywhere),
      cmocka_unit_test(test_malformed_fields),
      cmocka_unit_test(test_hostile_headers),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_overlapping_tensors),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_rewrite_identity),
      cmocka_unit_test(test_type_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
