/* tokenizer_hostile_test.c — vocabularies built to break the tokenizer
 * models: scores that would overflow the unigram search, ids and scores
 * that the loaders must refuse, and words a model cannot split. Each case
 * comes from a fuzz finding or from the audit that followed it. */
#include "poot_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/llm/gguf.h"
#include "poot/llm/tokenizer.h"

/* tokenizer_json_fuzz's finding (tests/fuzz/corpus/tokenizer_json/
 * unigram-walk-overflow.json): a unigram vocabulary whose piece "ab" scores
 * about -4e64. As a float that is -inf, the unknown piece (lowest score - 10)
 * became -inf too, no path reached a character outside the vocabulary, and
 * the walk back indexed outside its arrays. */
static const char k_walk_overflow[] =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}], \"normalizer"
    "\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \""
    "\\u2581\", \"prepend_scheme\": \"first\", \"split\": true}, \"model\": {\"ty\177pe\": \"Un"
    "\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377]\377\377\377\377"
    "\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377"
    "\377\377\377\377\377\377\377.\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377"
    "\377\377\377\377\377\377\377\377\377\377\377\377\377\377igram\", \"unk_id\": 0, \"byte_fal"
    "lback\": false, \"vocab\": [[\"<unk>\", 5], [\"\\u2581\", -2], [\"a\", -3], [\"b\", -3], ["
    "\"ab\", -411111111111111111111111111111111111111111111111111111111111111111111111111111111"
    "11111111111111111111111111111111111111], [\"\\u2581ab\", -5]]}}";

static poot_status load_json(const char *json, poot_tokenizer **tok) {
  return poot_tokenizer_load_hf_json(json, strlen(json), NULL, 0, tok);
}

static void encode_ids(const poot_tokenizer *tok, const char *text, poot_token **ids, size_t *n) {
  poot_tokenizer_encode_options opt = {.add_special = false, .parse_special = false};
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, text, strlen(text), &opt, ids, n));
}

static void test_walk_overflow_finding(void **state) {
  (void)state;
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_STATUS_MSG(
      poot_tokenizer_load_hf_json(k_walk_overflow, sizeof k_walk_overflow - 1, NULL, 0, &tok),
      POOT_FORMAT, "piece 4 has the score");
  assert_null(tok);
}

/* Scores at the edge of the bound load, and every text still has a path:
 * the unknown piece stands for characters no piece covers. */
static void test_unigram_extreme_scores(void **state) {
  (void)state;
  const char *json =
      "{\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":"
      "[[\"<unk>\",0],[\"a\",-1e29],[\"b\",-3],[\"ab\",-2e29]]}}";
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(load_json(json, &tok));
  poot_token *ids = NULL;
  size_t n = 0;
  encode_ids(tok, "ab", &ids, &n); /* a + b (-1e29 - 3) beats ab (-2e29) */
  assert_int_equal(n, 2);
  assert_int_equal(ids[0], 1);
  assert_int_equal(ids[1], 2);
  poot_free(ids);
  encode_ids(tok, "xbx", &ids, &n); /* x is unknown; unknowns around b */
  assert_int_equal(n, 3);
  assert_int_equal(ids[0], 0);
  assert_int_equal(ids[1], 2);
  assert_int_equal(ids[2], 0);
  poot_free(ids);
  poot_tokenizer_destroy(tok);
}

/* A score outside ±1e30 (or one JSON writes as a huge exponent) is refused
 * at load, as a double, before it can round to ±inf as a float. */
static void test_unigram_scores_refused(void **state) {
  (void)state;
  const char *bad[] = {
      "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",-1e31]]}}",
      "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",1e31]]}}",
      "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",-3],[\"b\",-4e64]]}}",
      "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",1e400]]}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    poot_tokenizer *tok = NULL;
    poot_status st = load_json(bad[i], &tok);
    if (!st) fail_msg("'%s' loaded", bad[i]);
    poot_status_code c = poot_status_consume(st);
    if (c != POOT_FORMAT) fail_msg("'%s': %s, expected FORMAT", bad[i], poot_status_code_name(c));
    assert_null(tok);
  }
}

/* The same bound holds for the llama2.c format, whose scores are raw f32. */
static void put_token(uint8_t *buf, size_t *off, float score, const char *text) {
  uint32_t len = (uint32_t)strlen(text);
  memcpy(buf + *off, &score, 4);
  memcpy(buf + *off + 4, &len, 4);
  memcpy(buf + *off + 8, text, len);
  *off += 8 + len;
}

static void test_llama2c_scores(void **state) {
  (void)state;
  const float bad[] = {NAN, INFINITY, -INFINITY, -2e30f};
  for (size_t k = 0; k <= sizeof bad / sizeof bad[0]; k++) {
    uint8_t buf[128];
    uint32_t max_len = 8;
    memcpy(buf, &max_len, 4);
    size_t off = 4;
    put_token(buf, &off, 0, "<unk>");
    put_token(buf, &off, 0, "<s>");
    put_token(buf, &off, 0, "</s>");
    put_token(buf, &off, k < sizeof bad / sizeof bad[0] ? bad[k] : -1e9f, "ab");
    poot_tokenizer *tok = NULL;
    poot_status st = poot_tokenizer_load_llama2c(buf, off, 0, &tok);
    if (k == sizeof bad / sizeof bad[0]) { /* -1e9, as real vocabularies write */
      POOT_ASSERT_OK(st);
      assert_int_equal(poot_tokenizer_vocab_size(tok), 4);
      poot_tokenizer_destroy(tok);
    } else {
      POOT_ASSERT_STATUS_MSG(st, POOT_FORMAT, "token 3 has the score");
      assert_null(tok);
    }
  }
}

/* And for GGUF's tokenizer.ggml.scores. */
static void test_gguf_scores(void **state) {
  (void)state;
  const char *toks[] = {"<unk>", "<s>", "</s>",
                        "\xe2\x96\x81"
                        "a"};
  const float good[] = {0, 0, 0, -1e9f}, bad[] = {0, 0, 0, NAN};
  char path[1100];
  snprintf(path, sizeof path, "%s/scores.gguf", poot_test_tmpdir());
  for (int k = 0; k < 2; k++) {
    poot_gguf_writer *w = NULL;
    POOT_ASSERT_OK(poot_gguf_writer_create(&w));
    POOT_ASSERT_OK(poot_gguf_writer_set_string(w, "tokenizer.ggml.model", "llama", 5));
    POOT_ASSERT_OK(poot_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", toks, NULL, 4));
    POOT_ASSERT_OK(poot_gguf_writer_set_array(w, "tokenizer.ggml.scores", POOT_GGUF_VALUE_F32,
                                              k ? bad : good, 4));
    POOT_ASSERT_OK(poot_gguf_writer_write_file(w, path));
    poot_gguf_writer_destroy(w);
    poot_tokenizer *tok = NULL;
    if (k) {
      POOT_ASSERT_STATUS_MSG(poot_tokenizer_open_path(path, &tok), POOT_FORMAT,
                             "token 3 has the score nan");
      assert_null(tok);
    } else {
      POOT_ASSERT_OK(poot_tokenizer_open_path(path, &tok));
      poot_token *ids = NULL;
      size_t n = 0;
      encode_ids(tok, "a", &ids, &n);
      assert_int_equal(n, 1);
      assert_int_equal(ids[0], 3);
      poot_free(ids);
      poot_tokenizer_destroy(tok);
    }
  }
}

/* WordPiece without an unknown token: a word it cannot split is an error,
 * never the id POOT_TOKEN_NONE handed on to the model. */
static void test_wordpiece_without_unk(void **state) {
  (void)state;
  const char *json =
      "{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0,\"##b\":1},"
      "\"max_input_chars_per_word\":4},"
      "\"pre_tokenizer\":{\"type\":\"WhitespaceSplit\"}}";
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(load_json(json, &tok));
  poot_token *ids = NULL;
  size_t n = 0;
  encode_ids(tok, "ab a", &ids, &n);
  assert_int_equal(n, 3);
  assert_int_equal(ids[0], 0);
  assert_int_equal(ids[1], 1);
  assert_int_equal(ids[2], 0);
  poot_free(ids);
  poot_tokenizer_encode_options opt = {0};
  POOT_ASSERT_STATUS_MSG(poot_tokenizer_encode(tok, "ax", 2, &opt, &ids, &n), POOT_FORMAT,
                         "cannot split the word 'ax'");
  assert_null(ids);
  POOT_ASSERT_STATUS_MSG(poot_tokenizer_encode(tok, "abbbb", 5, &opt, &ids, &n), POOT_FORMAT,
                         "no unknown token");
  poot_tokenizer_destroy(tok);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_walk_overflow_finding),
      cmocka_unit_test(test_unigram_extreme_scores),
      cmocka_unit_test(test_unigram_scores_refused),
      cmocka_unit_test(test_llama2c_scores),
      cmocka_unit_test(test_gguf_scores),
      cmocka_unit_test(test_wordpiece_without_unk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
