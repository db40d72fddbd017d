/* tokenizer_vocab_test.c — every .gguf.inp/.gguf.out pair of the shared
 * vocab folder reproduces exactly. The .out ids were made without BOS and
 * without parsing special tokens (add_special = parse_special = false); the
 * Llama 3 and Qwen3 tokenizer.json files give the same ids on the same pairs
 * as their GGUF counterparts. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/tokenizer.h"

static const char *const k_vocabs[] = {"llama-spm", "llama-bpe", "qwen2",
                                       "gpt-2",     "bert-bge",  "phi-3"};

/* Runs one pair file against a tokenizer; returns the number of cases. */
static int run_pairs(const poot_tokenizer *tok, const char *inp_path, const char *out_path) {
  char *inp = NULL, *outp = NULL;
  size_t il = 0, ol = 0;
  POOT_ASSERT_OK(poot_file_read_all(inp_path, &inp, &il));
  POOT_ASSERT_OK(poot_file_read_all(out_path, &outp, &ol));
  const char *sep = "\n__ggml_vocab_test__\n";
  char *p = inp, *o = outp;
  int n = 0;
  for (;;) {
    char *e = strstr(p, sep);
    if (!e) break;
    char *oe = strchr(o, '\n');
    assert_non_null(oe);
    *oe = 0;
    poot_tokenizer_encode_options opt = {.add_special = false, .parse_special = false};
    poot_token *ids = NULL;
    size_t cnt = 0;
    POOT_ASSERT_OK(poot_tokenizer_encode(tok, p, (size_t)(e - p), &opt, &ids, &cnt));
    poot_strbuf got;
    poot_strbuf_init(&got);
    for (size_t i = 0; i < cnt; i++) poot_strbuf_printf(&got, " %d", (int)ids[i]);
    if (strcmp(got.data, o) != 0)
      fail_msg("%s case %d '%.*s':\n got:%s\n expected:%s", inp_path, n, (int)(e - p), p, got.data,
               o);
    poot_strbuf_deinit(&got);
    poot_free(ids);
    n++;
    p = e + strlen(sep);
    o = oe + 1;
  }
  poot_free(inp);
  poot_free(outp);
  return n;
}

static void test_gguf_pairs(void **state) {
  (void)state;
  for (size_t v = 0; v < sizeof k_vocabs / sizeof k_vocabs[0]; v++) {
    char rel[256], gguf[1024], inp[1100], out[1100];
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", k_vocabs[v]);
    assert_true(poot_test_data_path(rel, gguf, sizeof gguf));
    snprintf(inp, sizeof inp, "%s.inp", gguf);
    snprintf(out, sizeof out, "%s.out", gguf);
    poot_tokenizer *tok = NULL;
    POOT_ASSERT_OK(poot_tokenizer_open_path(gguf, &tok));
    int n = run_pairs(tok, inp, out);
    assert_int_equal(n, 46);
    poot_tokenizer_destroy(tok);
  }
}

static void test_json_pairs(void **state) {
  (void)state;
  static const char *const pairs[][2] = {{"llama3", "llama-bpe"}, {"qwen3", "qwen2"}};
  for (size_t v = 0; v < 2; v++) {
    char rel[256], dir[1024], gguf[1024], inp[1100], out[1100];
    snprintf(rel, sizeof rel, "hf-tokenizers/%s/tokenizer.json", pairs[v][0]);
    assert_true(poot_test_data_path(rel, dir, sizeof dir));
    *strrchr(dir, '/') = 0; /* open the folder */
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", pairs[v][1]);
    assert_true(poot_test_data_path(rel, gguf, sizeof gguf));
    snprintf(inp, sizeof inp, "%s.inp", gguf);
    snprintf(out, sizeof out, "%s.out", gguf);
    poot_tokenizer *tok = NULL;
    POOT_ASSERT_OK(poot_tokenizer_open_path(dir, &tok));
    assert_int_equal(poot_tokenizer_get_kind(tok), POOT_TOKENIZER_BPE);
    assert_int_equal(run_pairs(tok, inp, out), 46);
    poot_tokenizer_destroy(tok);
  }
}

static void encode_expect(const poot_tokenizer *tok, const char *text, bool add_special,
                          bool parse_special, const poot_token *want, size_t n_want) {
  poot_tokenizer_encode_options opt = {.add_special = add_special, .parse_special = parse_special};
  poot_token *ids = NULL;
  size_t cnt = 0;
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, strlen(text), &opt, &ids, &cnt));
  poot_strbuf a, b;
  poot_strbuf_init(&a);
  poot_strbuf_init(&b);
  for (size_t i = 0; i < cnt; i++) poot_strbuf_printf(&a, " %d", (int)ids[i]);
  for (size_t i = 0; i < n_want; i++) poot_strbuf_printf(&b, " %d", (int)want[i]);
  if (strcmp(a.data, b.data) != 0) fail_msg("'%s': got%s, expected%s", text, a.data, b.data);
  poot_strbuf_deinit(&a);
  poot_strbuf_deinit(&b);
  poot_free(ids);
}
#define EXPECT(tok, text, add, parse, ...)                              \
  do {                                                                  \
    const poot_token w_[] = {__VA_ARGS__};                              \
    encode_expect(tok, text, add, parse, w_, sizeof w_ / sizeof w_[0]); \
  } while (0)

static poot_tokenizer *open_vocab(const char *name) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", name);
  assert_true(poot_test_data_path(rel, path, sizeof path));
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(poot_tokenizer_open_path(path, &tok));
  return tok;
}

/* BOS/EOS from metadata, and special tokens only with parse_special. */
static void test_specials(void **state) {
  (void)state;
  poot_tokenizer *spm = open_vocab("llama-spm");
  poot_tokenizer_specials s = poot_tokenizer_get_specials(spm);
  assert_int_equal(s.bos, 1);
  assert_int_equal(s.eos, 2);
  assert_true(s.add_bos);
  assert_false(s.add_eos);
  assert_int_equal(poot_tokenizer_get_kind(spm), POOT_TOKENIZER_SPM);
  EXPECT(spm, "Hello world", true, false, 1, 15043, 3186);
  EXPECT(spm, "Hello world", false, false, 15043, 3186);
  EXPECT(spm, "", true, false, 1);
  /* "<s>" is text unless parse_special; after a special token the leading
   * space is added again. */
  EXPECT(spm, "<s>Hi", false, true, 1, 6324);
  EXPECT(spm, "<s>Hi", false, false, 529, 29879, 29958, 18567);
  poot_tokenizer_destroy(spm);

  poot_tokenizer *l3 = open_vocab("llama-bpe");
  s = poot_tokenizer_get_specials(l3);
  assert_int_equal(s.bos, 128000);
  assert_true(s.add_bos);
  EXPECT(l3, "Hello", true, false, 128000, 9906);
  EXPECT(l3, "<|begin_of_text|>Hello", false, true, 128000, 9906);
  EXPECT(l3, "<|begin_of_text|>Hello", false, false, 27, 91, 7413, 3659, 4424, 91, 29, 9906);
  /* End of generation: EOS and <|eot_id|> (128009), not BOS or text. */
  assert_true(poot_tokenizer_is_end_of_generation(l3, 128001));
  assert_true(poot_tokenizer_is_end_of_generation(l3, 128009));
  assert_int_equal(poot_tokenizer_get_specials(l3).eot, 128009);
  assert_false(poot_tokenizer_is_end_of_generation(l3, 128000));
  assert_false(poot_tokenizer_is_end_of_generation(l3, 9906));
  poot_tokenizer_destroy(l3);

  poot_tokenizer *q = open_vocab("qwen2");
  s = poot_tokenizer_get_specials(q);
  assert_false(s.add_bos);         /* Qwen2 adds no BOS */
  assert_int_equal(s.eot, 151645); /* <|im_end|> */
  assert_true(poot_tokenizer_is_end_of_generation(q, 151645));
  assert_true(poot_tokenizer_is_end_of_generation(q, 151643));
  EXPECT(q, "Hello", true, false, 9707);
  poot_tokenizer_destroy(q);

  poot_tokenizer *bert = open_vocab("bert-bge");
  s = poot_tokenizer_get_specials(bert);
  assert_int_equal(s.bos, 101); /* [CLS] */
  assert_int_equal(s.sep, 102);
  EXPECT(bert, "Hello world", true, false, 101, 7592, 2088, 102);
  EXPECT(bert, "[CLS] hi", false, true, 101, 7632);
  poot_tokenizer_destroy(bert);

  /* Phi-3: added tokens eat the whitespace that follows them. */
  poot_tokenizer *phi = open_vocab("phi-3");
  EXPECT(phi, "<|user|>\nHi", false, true, 32010, 6324);
  poot_tokenizer_destroy(phi);
}

int main(void) {
  char probe[1024];
  if (!poot_test_data_path("vocab/ggml-vocab-llama-spm.gguf", probe, sizeof probe))
    return poot_test_skip("the shared vocab folder is absent (POOT_DATA_DIR)");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gguf_pairs),
      cmocka_unit_test(test_json_pairs),
      cmocka_unit_test(test_specials),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
