/* tokenizer_unit_test.c — llama2.c's encoder on tok512.bin (expectations
 * derived by hand from llama2.c's algorithm), hand-built unigram and
 * WordPiece vocabularies, streaming decode of split UTF-8, round trips, and
 * malformed inputs. */
#include "poot_test.h"

#include <pthread.h>
#include <stdlib.h>

#include "poot/llm/gguf.h"
#include "poot/llm/tokenizer.h"

static void encode_expect(const poot_tokenizer *tok, const char *text, size_t len, bool add,
                          bool parse, const poot_token *want, size_t n_want) {
  poot_tokenizer_encode_options opt = {.add_special = add, .parse_special = parse};
  poot_token *ids = NULL;
  size_t cnt = 0;
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, len, &opt, &ids, &cnt));
  poot_strbuf a, b;
  poot_strbuf_init(&a);
  poot_strbuf_init(&b);
  for (size_t i = 0; i < cnt; i++) poot_strbuf_printf(&a, " %d", (int)ids[i]);
  for (size_t i = 0; i < n_want; i++) poot_strbuf_printf(&b, " %d", (int)want[i]);
  if (strcmp(a.data, b.data) != 0)
    fail_msg("'%.*s': got%s, expected%s", (int)len, text, a.data, b.data);
  poot_strbuf_deinit(&a);
  poot_strbuf_deinit(&b);
  poot_free(ids);
}
#define EXPECT(tok, text, add, ...)                                                   \
  do {                                                                                \
    const poot_token w_[] = {__VA_ARGS__};                                            \
    encode_expect(tok, text, strlen(text), add, false, w_, sizeof w_ / sizeof w_[0]); \
  } while (0)

static void decode_expect(const poot_tokenizer *tok, const poot_token *ids, size_t n,
                          const char *want) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_tokenizer_decode(tok, ids, n, NULL, &sb));
  assert_string_equal(sb.data, want);
  poot_strbuf_deinit(&sb);
}

static poot_tokenizer *open_data(const char *rel) {
  char path[1024];
  if (!poot_test_data_path(rel, path, sizeof path)) return NULL;
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(poot_tokenizer_open_path(path, &tok));
  return tok;
}

/* tok512.bin: ids 3..258 are <0x00>..<0xFF>, 410 is " ", scores are -rank.
 * Worked by hand from llama2.c's encode(): the dummy prefix " " is a token of
 * its own and merges like any other. */
static void test_llama2c(void **state) {
  (void)state;
  poot_tokenizer *tok = open_data("models/stories260K/tok512.bin");
  if (!tok) skip();
  assert_int_equal(poot_tokenizer_get_kind(tok), POOT_TOKENIZER_LLAMA2C);
  assert_int_equal(poot_tokenizer_vocab_size(tok), 512);
  /* Empty text: BOS only, no dummy prefix. */
  EXPECT(tok, "", true, 1);
  /* " t"(0) " a"(-2) "im"(-29) "on"(-30) " u"(-59) " O"(-60) " On"(-62) "ce"(-72)
   * " up"(-91) "ime"(-110) " time"(-119) " Once"(-144) " upon"(-148). */
  EXPECT(tok, "Once upon a time", true, 1, 403, 407, 261, 378);
  /* "il"(-31) before " L"(-48), then "ily"(-51), then " Lily"(-58). */
  EXPECT(tok, "Lily", true, 1, 317);
  /* A leading space stays a token of its own: "  " is not in the vocabulary. */
  EXPECT(tok, " Lily", true, 1, 410, 317);
  /* Equal scores: the leftmost pair first; " t"+"he" → " the" both times. */
  EXPECT(tok, "the the", false, 265, 265);
  /* Byte fallback: ü (C3 BC) is not in the vocabulary → bytes + 3; byte
   * tokens never merge. */
  EXPECT(tok, "\xc3\xbc", true, 1, 410, 198, 191);
  EXPECT(tok, "\xf0\x9f\xa6\x99", true, 1, 410, 243, 162, 169, 156);
  /* é is in the vocabulary (485); newline is not (byte 0x0A → 13). */
  EXPECT(tok, "\xc3\xa9", false, 410, 485);
  EXPECT(tok, "a\nb", true, 1, 261, 13, 430);
  /* Decode: the space after BOS is dropped, byte tokens become bytes. */
  const poot_token once[] = {1, 403, 407, 261, 378};
  decode_expect(tok, once, 5, "Once upon a time");
  const poot_token u[] = {410, 198, 191};
  decode_expect(tok, u, 3, " \xc3\xbc");
  poot_tokenizer_destroy(tok);

  /* Malformed files are FORMAT errors, never crashes. */
  poot_tokenizer *bad = NULL;
  const uint8_t trunc[] = {7, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0, 'a'};
  POOT_ASSERT_STATUS(poot_tokenizer_load_llama2c(trunc, sizeof trunc, 0, &bad), POOT_FORMAT);
  assert_null(bad);
  POOT_ASSERT_STATUS(poot_tokenizer_load_llama2c(trunc, 3, 0, &bad), POOT_FORMAT);
  const uint8_t neg[] = {7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  POOT_ASSERT_STATUS(poot_tokenizer_load_llama2c(neg, sizeof neg, 0, &bad), POOT_FORMAT);
}

static const char k_unigram_json[] =
    "{\"version\":\"1.0\",\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true}],"
    "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":"
    "\"\xe2\x96\x81\","
    "\"prepend_scheme\":\"always\",\"split\":true},\"post_processor\":null,\"decoder\":null,"
    "\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"\xe2\x96\x81\",-2],"
    "[\"a\",-3],[\"b\",-3],[\"ab\",-4],[\"\xe2\x96\x81"
    "ab\",-5],[\"c\",-6],[\"abc\",-10],"
    "[\"bc\",-3.5]]}}";

/* Viterbi over scores; values checked against the Python tokenizers package. */
static void test_unigram(void **state) {
  (void)state;
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(
      poot_tokenizer_load_hf_json(k_unigram_json, strlen(k_unigram_json), NULL, 0, &tok));
  assert_int_equal(poot_tokenizer_get_kind(tok), POOT_TOKENIZER_UNIGRAM);
  EXPECT(tok, "ab", false, 5);        /* ▁ab (-5) beats ▁+ab (-6) */
  EXPECT(tok, "abc", false, 1, 2, 8); /* ▁+a+bc (-8.5) */
  EXPECT(tok, "x", false, 1, 0);      /* unknown: min score - 10 */
  EXPECT(tok, "xx", false, 1, 0);     /* consecutive unknowns fuse */
  EXPECT(tok, "ab ab", false, 5, 5);
  EXPECT(tok, "a  b", false, 1, 2, 1, 1, 3);
  const poot_token ids[] = {5, 5};
  decode_expect(tok, ids, 2, "ab ab");
  poot_tokenizer_destroy(tok);
}

static const char k_wordpiece_json[] =
    "{\"added_tokens\":[{\"id\":0,\"content\":\"[UNK]\",\"special\":true},"
    "{\"id\":1,\"content\":\"[CLS]\",\"special\":true},{\"id\":2,\"content\":\"[SEP]\",\"special\":"
    "true}],"
    "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,"
    "\"strip_accents\":null,\"lowercase\":true},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"["
    "CLS]\","
    "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},{\"SpecialToken\":{\"id\":\"[SEP]"
    "\","
    "\"type_id\":0}}]},\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\","
    "\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":100,\"vocab\":{\"[UNK]\":0,"
    "\"[CLS]\":1,\"[SEP]\":2,\"hello\":3,\"world\":4,\"##s\":5,\"un\":6,\"##aff\":7,\"##able\":8,"
    "\",\":9,\"!\":10,\"cafe\":11,\"\xe4\xb8\xad\":12}}}";

static void test_wordpiece(void **state) {
  (void)state;
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(
      poot_tokenizer_load_hf_json(k_wordpiece_json, strlen(k_wordpiece_json), NULL, 0, &tok));
  assert_int_equal(poot_tokenizer_get_kind(tok), POOT_TOKENIZER_WORDPIECE);
  /* Lowercase, accents stripped, punctuation isolated, CJK split, greedy
   * longest match with ##, an unmatchable word → [UNK]. */
  EXPECT(tok, "Hello, Worlds! unaffable CAF\xc3\x89 xyz\xe4\xb8\xad", true, 1, 3, 9, 4, 5, 10, 6, 7,
         8, 11, 0, 12, 2);
  const poot_token ids[] = {1, 3, 9, 4, 5, 10, 6, 7, 8, 2};
  decode_expect(tok, ids, 10, "hello , worlds ! unaffable");
  poot_tokenizer_destroy(tok);
}

/* Bytes of one character split over several tokens come out only once the
 * character is complete. */
static void test_streaming(void **state) {
  (void)state;
  poot_tokenizer *tok = open_data("vocab/ggml-vocab-llama-spm.gguf");
  if (!tok) skip();
  const char *text = "Hi \xf0\x9f\xa6\x99 and \xe4\xbd\xa0\xe5\xa5\xbd!";
  poot_token *ids = NULL;
  size_t n = 0;
  poot_tokenizer_encode_options opt = {.add_special = true};
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, strlen(text), &opt, &ids, &n));
  poot_tokenizer_decoder *dec = NULL;
  POOT_ASSERT_OK(poot_tokenizer_decoder_create(tok, NULL, &dec));
  poot_strbuf out;
  poot_strbuf_init(&out);
  bool held = false;
  for (size_t i = 0; i < n; i++) {
    POOT_ASSERT_OK(poot_tokenizer_decoder_push(dec, ids[i], &out));
    if (poot_tokenizer_decoder_pending(dec)) held = true;
    /* What was emitted never ends inside a character. */
    if (out.len) assert_true(((uint8_t)out.data[out.len - 1] & 0xC0) != 0xC0);
  }
  assert_true(held); /* the llama emoji is four byte tokens */
  POOT_ASSERT_OK(poot_tokenizer_decoder_flush(dec, &out));
  assert_string_equal(out.data, text);
  /* The llama alone, token by token: nothing until the last byte. */
  const poot_token llama[] = {243, 162, 169, 156}; /* <0xF0> <0x9F> <0xA6> <0x99> */
  poot_strbuf_clear(&out);
  for (int i = 0; i < 4; i++) {
    POOT_ASSERT_OK(poot_tokenizer_decoder_push(dec, llama[i], &out));
    assert_int_equal(out.len, i < 3 ? 0 : 4);
    assert_int_equal(poot_tokenizer_decoder_pending(dec), i < 3 ? (size_t)i + 1 : 0);
  }
  assert_string_equal(out.data, "\xf0\x9f\xa6\x99");
  /* An unfinished sequence comes out verbatim on flush. */
  poot_strbuf_clear(&out);
  POOT_ASSERT_OK(poot_tokenizer_decoder_push(dec, 243, &out));
  assert_int_equal(out.len, 0);
  POOT_ASSERT_OK(poot_tokenizer_decoder_flush(dec, &out));
  assert_int_equal(out.len, 1);
  assert_int_equal((uint8_t)out.data[0], 0xF0);
  POOT_ASSERT_STATUS(poot_tokenizer_decoder_push(dec, 99999, &out), POOT_INVALID_ARGUMENT);
  poot_strbuf_deinit(&out);
  poot_tokenizer_decoder_destroy(dec);
  poot_free(ids);
  poot_tokenizer_destroy(tok);
}

/* decode(encode(s)) == s over the shared test strings, for every lossless
 * vocabulary (WordPiece lowercases, so bert-bge is left out). */
static void test_round_trips(void **state) {
  (void)state;
  static const char *const vocabs[] = {"llama-spm", "phi-3", "llama-bpe", "qwen2", "gpt-2"};
  for (size_t v = 0; v < sizeof vocabs / sizeof vocabs[0]; v++) {
    char rel[256];
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", vocabs[v]);
    poot_tokenizer *tok = open_data(rel);
    if (!tok) skip();
    char path[1024];
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf.inp", vocabs[v]);
    assert_true(poot_test_data_path(rel, path, sizeof path));
    char *inp = NULL;
    size_t il = 0;
    POOT_ASSERT_OK(poot_file_read_all(path, &inp, &il));
    const char *sep = "\n__ggml_vocab_test__\n";
    int cases = 0;
    for (char *p = inp, *e; (e = strstr(p, sep)); p = e + strlen(sep), cases++) {
      size_t len = (size_t)(e - p);
      poot_token *ids = NULL;
      size_t n = 0;
      POOT_ASSERT_OK(poot_tokenizer_encode(tok, p, len, NULL, &ids, &n));
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_tokenizer_decode(tok, ids, n, NULL, &sb));
      if (sb.len != len || memcmp(sb.data, p, len) != 0)
        fail_msg("%s: round trip of '%.*s' gave '%s'", vocabs[v], (int)len, p, sb.data);
      poot_strbuf_deinit(&sb);
      poot_free(ids);
    }
    assert_int_equal(cases, 46);
    poot_free(inp);
    poot_tokenizer_destroy(tok);
  }
}

/* A vocabulary with a token that spans a word start ("a▁b"): merging must not
 * go word by word there. */
static const char k_span_json[] =
    "{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\","
    "\"prepend\":\"\xe2\x96\x81\"},{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},"
    "\"content\":\"\xe2\x96\x81\"}]},\"model\":{\"type\":\"BPE\",\"vocab\":{\"\xe2\x96\x81\":0,"
    "\"a\":1,\"b\":2,\"\xe2\x96\x81"
    "a\":3,\"\xe2\x96\x81"
    "a\xe2\x96\x81\":4,"
    "\"\xe2\x96\x81"
    "a\xe2\x96\x81"
    "b\":5,\"\xe2\x96\x81"
    "b\":6},\"merges\":["
    "\"\xe2\x96\x81 a\",\"\xe2\x96\x81"
    "a \xe2\x96\x81\",\"\xe2\x96\x81"
    "a\xe2\x96\x81 b\","
    "\"\xe2\x96\x81 b\"]}}";

static void test_cross_word_merge(void **state) {
  (void)state;
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(poot_tokenizer_load_hf_json(k_span_json, strlen(k_span_json), NULL, 0, &tok));
  EXPECT(tok, "a b", false, 5);
  EXPECT(tok, "b a", false, 6, 3);
  const poot_token ids[] = {5};
  decode_expect(tok, ids, 1, "a b");
  poot_tokenizer_destroy(tok);
}

/* Every tokenizer.ggml.pre value llama.cpp knows loads (its regexes compile
 * under PCRE2) and tokenizes; an unknown one falls back to 'default'. */
static void test_gguf_pre_names(void **state) {
  (void)state;
  static const char *const names[] = {"default",
                                      "llama3",
                                      "llama-v3",
                                      "llama-bpe",
                                      "falcon3",
                                      "falcon-h1",
                                      "pixtral",
                                      "midm-2.0",
                                      "lfm2",
                                      "dbrx",
                                      "smaug-bpe",
                                      "glm4",
                                      "chatglm-bpe",
                                      "qwen2",
                                      "deepseek-r1-qwen",
                                      "kormo",
                                      "megrez",
                                      "stablelm2",
                                      "hunyuan",
                                      "grok-2",
                                      "gpt-2",
                                      "phi-2",
                                      "jina-es",
                                      "jina-de",
                                      "gigachat",
                                      "jina-v2-es",
                                      "jina-v2-de",
                                      "a.x-4.0",
                                      "mellum",
                                      "mpt",
                                      "olmo",
                                      "jais",
                                      "trillion",
                                      "granite-docling",
                                      "exaone4",
                                      "jina-v1-en",
                                      "jina-v2-code",
                                      "roberta-bpe",
                                      "gpt-4o",
                                      "llama4",
                                      "minimax-m2",
                                      "falcon",
                                      "starcoder",
                                      "refact",
                                      "command-r",
                                      "smollm",
                                      "codeshell",
                                      "exaone",
                                      "minerva-7b",
                                      "tekken",
                                      "poro-chat",
                                      "bloom",
                                      "gpt3-finnish",
                                      "viking",
                                      "bailingmoe",
                                      "bailingmoe2",
                                      "llada-moe",
                                      "seed-coder",
                                      "deepseek-llm",
                                      "deepseek-coder",
                                      "deepseek-v3",
                                      "hunyuan-dense",
                                      "chameleon",
                                      "no-such-pre"};
  /* A byte-level vocabulary: every printable ASCII byte character, "Ġ" and a merge. */
  const char *toks[100];
  char store[100][4];
  size_t n = 0;
  for (int c = '!'; c <= '~'; c++, n++) {
    store[n][0] = (char)c;
    store[n][1] = 0;
    toks[n] = store[n];
  }
  toks[n++] = "\xc4\xa0"; /* Ġ, the space byte */
  toks[n++] = "ab";
  toks[n++] = "<s>";
  const char *merges[] = {"a b"};
  int32_t types[100];
  for (size_t i = 0; i < n; i++) types[i] = i + 1 == n ? 3 : 1;
  char path[1100];
  snprintf(path, sizeof path, "%s/pre.gguf", poot_test_tmpdir());
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    poot_gguf_writer *w = NULL;
    POOT_ASSERT_OK(poot_gguf_writer_create(&w));
    POOT_ASSERT_OK(poot_gguf_writer_set_string(w, "tokenizer.ggml.model", "gpt2", 4));
    POOT_ASSERT_OK(
        poot_gguf_writer_set_string(w, "tokenizer.ggml.pre", names[k], strlen(names[k])));
    POOT_ASSERT_OK(poot_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", toks, NULL, n));
    POOT_ASSERT_OK(
        poot_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_I32, types, n));
    POOT_ASSERT_OK(poot_gguf_writer_set_string_array(w, "tokenizer.ggml.merges", merges, NULL, 1));
    POOT_ASSERT_OK(poot_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)n - 1));
    POOT_ASSERT_OK(poot_gguf_writer_write_file(w, path));
    poot_gguf_writer_destroy(w);
    poot_tokenizer *tok = NULL;
    POOT_ASSERT_OK(poot_tokenizer_open_path(path, &tok));
    poot_tokenizer_encode_options opt = {.add_special = false, .parse_special = true};
    const char *text = "ab ab, 12345 <s>x\n\n";
    poot_token *ids = NULL;
    size_t cnt = 0;
    POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, strlen(text), &opt, &ids, &cnt));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_tokenizer_decode(tok, ids, cnt, NULL, &sb));
    /* "\n" is not in this vocabulary: it is dropped, the rest comes back. */
    if (strcmp(sb.data, "ab ab, 12345 x") != 0) fail_msg("%s: decoded '%s'", names[k], sb.data);
    assert_int_equal(ids[0], (int)n - 2); /* "ab" merged */
    poot_strbuf_deinit(&sb);
    poot_free(ids);
    poot_tokenizer_specials s = poot_tokenizer_get_specials(tok);
    assert_int_equal(s.bos, (int)n - 1); /* the key wins over glm4's "no BOS" */
    poot_tokenizer_destroy(tok);
  }
}

/* One tokenizer, many threads: encode is read-only on the tokenizer. */
typedef struct thread_job {
  const poot_tokenizer *tok;
  const char *text;
  size_t len;
  poot_token *ids;
  size_t n;
  int failed;
} thread_job;

static void *encode_thread(void *arg) {
  thread_job *j = arg;
  for (int rep = 0; rep < 20; rep++) {
    poot_token *ids = NULL;
    size_t n = 0;
    poot_status st = poot_tokenizer_encode(j->tok, j->text, j->len, NULL, &ids, &n);
    if (st) {
      poot_status_free(st);
      j->failed = 1;
      return NULL;
    }
    if (n != j->n || memcmp(ids, j->ids, n * sizeof *ids) != 0) j->failed = 1;
    poot_free(ids);
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  poot_tokenizer *tok = open_data("vocab/ggml-vocab-llama-bpe.gguf");
  if (!tok) skip();
  char path[1024];
  assert_true(poot_test_data_path("vocab/ggml-vocab-llama-bpe.gguf.inp", path, sizeof path));
  char *text = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_file_read_all(path, &text, &len));
  poot_token *ids = NULL;
  size_t n = 0;
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, len, NULL, &ids, &n));
  thread_job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){tok, text, len, ids, n, 0};
    assert_int_equal(pthread_create(&th[i], NULL, encode_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].failed, 0);
  }
  poot_free(ids);
  poot_free(text);
  poot_tokenizer_destroy(tok);
}

static void test_bad_json(void **state) {
  (void)state;
  poot_tokenizer *tok = NULL;
  static const char *const bad[] = {
      "",
      "[]",
      "{}",
      "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}}}",
      "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}}",
      "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":99999999},\"merges\":[]}}",
      "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\"]]}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    poot_status st = poot_tokenizer_load_hf_json(bad[i], strlen(bad[i]), NULL, 0, &tok);
    if (!st) fail_msg("'%s' loaded", bad[i]);
    assert_int_equal(poot_status_consume(st), POOT_FORMAT);
    assert_null(tok);
  }
  const char *unsup = "{\"model\":{\"type\":\"Mystery\",\"vocab\":{}}}";
  POOT_ASSERT_STATUS_MSG(poot_tokenizer_load_hf_json(unsup, strlen(unsup), NULL, 0, &tok),
                         POOT_UNSUPPORTED, "Mystery");
  POOT_ASSERT_STATUS(poot_tokenizer_open_path("/nonexistent/tokenizer", &tok), POOT_NOT_FOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_llama2c),          cmocka_unit_test(test_unigram),
      cmocka_unit_test(test_wordpiece),        cmocka_unit_test(test_streaming),
      cmocka_unit_test(test_round_trips),      cmocka_unit_test(test_bad_json),
      cmocka_unit_test(test_cross_word_merge), cmocka_unit_test(test_gguf_pre_names),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
