/* tokenizer_hf_test.c — the Llama 2, Llama 3 and Qwen3 tokenizer.json files
 * give the same ids as the Python `tokenizers` package over a few hundred
 * generated strings (tests/ref/tokenizer_hf_ref.py writes them with their
 * reference ids), with special tokens split and with them treated as text;
 * Llama 3 and Qwen3 also agree with their GGUF vocabularies (llama-bpe,
 * qwen2) on the same strings, and decode(encode(s)) gives s back. */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/tokenizer.h"

typedef struct hf_case {
  const char *name; /* folder under hf-tokenizers/ */
  const char *gguf; /* the matching GGUF vocabulary, or NULL */
  bool lossless;    /* decode(encode(s)) == s (NFC text for NFC normalizers) */
} hf_case;

static const hf_case k_cases[] = {
    {"llama2", NULL, true}, /* a 32000-token SentencePiece BPE with its own ids */
    {"llama3", "llama-bpe", true},
    {"qwen3", "qwen2", true},
};

static void ids_to_str(poot_strbuf *sb, const poot_token *ids, size_t n) {
  poot_strbuf_clear(sb);
  for (size_t i = 0; i < n; i++) poot_strbuf_printf(sb, " %d", (int)ids[i]);
}

static void json_ids_to_str(poot_strbuf *sb, const poot_json *arr) {
  poot_strbuf_clear(sb);
  for (size_t i = 0; arr && i < arr->len; i++)
    poot_strbuf_printf(sb, " %d", (int)arr->items[i]->number);
}

static int g_skipped;

/* Runs the reference script; `synthetic` names a normalizer to test alone
 * (the script writes that tokenizer.json to json_path first). */
static void run_case_at(const hf_case *c, const char *synthetic, char *json_path) {
  char ref[1200], rel[256];
  snprintf(ref, sizeof ref, "%s/%s.json", poot_test_tmpdir(), c->name);
  /* POOT_TOKENIZER_HF_CASES asks for more strings (default 300). */
  const char *cases_env = getenv("POOT_TOKENIZER_HF_CASES");
  int cases = cases_env ? atoi(cases_env) : 300;
  if (cases < 300) cases = 300;
  int rc;
  if (synthetic)
    rc = poot_test_system("python3 '%s/tests/ref/tokenizer_hf_ref.py' --synthetic %s '%s' '%s' %d",
                          poot_test_source_dir(), synthetic, json_path, ref, cases);
  else
    rc = poot_test_system("python3 '%s/tests/ref/tokenizer_hf_ref.py' '%s' '%s' %d",
                          poot_test_source_dir(), json_path, ref, cases);
  if (rc == 77) {
    g_skipped = 1;
    return;
  }
  assert_int_equal(rc, 0);
  char *text = NULL;
  size_t len = 0;
  POOT_ASSERT_OK(poot_file_read_all(ref, &text, &len));
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *root = NULL;
  POOT_ASSERT_OK(poot_json_parse(&arena, text, len, NULL, &root));
  assert_int_equal(root->type, POOT_JSON_ARRAY);
  assert_true(root->len >= 300);

  poot_tokenizer *tok = NULL, *gg = NULL;
  if (!synthetic) *strrchr(json_path, '/') = 0; /* open the folder */
  POOT_ASSERT_OK(poot_tokenizer_open_path(json_path, &tok));
  if (c->gguf) {
    char gp[1024];
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", c->gguf);
    assert_true(poot_test_data_path(rel, gp, sizeof gp));
    POOT_ASSERT_OK(poot_tokenizer_open_path(gp, &gg));
  }
  poot_strbuf got, want, dec;
  poot_strbuf_init(&got);
  poot_strbuf_init(&want);
  poot_strbuf_init(&dec);
  size_t gguf_compared = 0, round_trips = 0;
  for (size_t i = 0; i < root->len; i++) {
    const poot_json *e = root->items[i];
    const poot_json *t = poot_json_get(e, "text");
    for (int mode = 0; mode < 2; mode++) {
      poot_tokenizer_encode_options opt = {.add_special = false, .parse_special = mode == 0};
      poot_token *ids = NULL;
      size_t n = 0;
      POOT_ASSERT_OK(poot_tokenizer_encode(tok, t->str, t->len, &opt, &ids, &n));
      ids_to_str(&got, ids, n);
      json_ids_to_str(&want, poot_json_get(e, mode == 0 ? "ids" : "ids_plain"));
      if (strcmp(got.data, want.data) != 0)
        fail_msg("%s (parse_special=%d) case %zu '%.*s':\n poot:  %s\n python:%s", c->name,
                 mode == 0, i, (int)t->len, t->str, got.data, want.data);
      bool nfc = poot_json_get(e, "nfc")->boolean;
      if (mode == 1 && gg && nfc) {
        /* The GGUF vocabulary, as llama.cpp runs it (no NFC step). */
        poot_token *g2 = NULL;
        size_t n2 = 0;
        POOT_ASSERT_OK(poot_tokenizer_encode(gg, t->str, t->len, &opt, &g2, &n2));
        poot_strbuf gs;
        poot_strbuf_init(&gs);
        ids_to_str(&gs, g2, n2);
        if (strcmp(gs.data, got.data) != 0)
          fail_msg("%s vs %s case %zu '%.*s':\n gguf:%s\n json:%s", c->gguf, c->name, i,
                   (int)t->len, t->str, gs.data, got.data);
        poot_strbuf_deinit(&gs);
        poot_free(g2);
        gguf_compared++;
      }
      if (mode == 1 && c->lossless && nfc) {
        poot_strbuf_clear(&dec);
        poot_tokenizer_decode_options d = {.render_special = true, .strip_prefix_space = true};
        POOT_ASSERT_OK(poot_tokenizer_decode(tok, ids, n, &d, &dec));
        if (dec.len != t->len || memcmp(dec.data, t->str, t->len) != 0)
          fail_msg("%s: round trip of '%.*s' gave '%s'", c->name, (int)t->len, t->str, dec.data);
        round_trips++;
      }
      poot_free(ids);
    }
  }
  if (c->gguf) assert_true(gguf_compared > 200);
  if (c->lossless) assert_true(round_trips > 200);
  poot_strbuf_deinit(&got);
  poot_strbuf_deinit(&want);
  poot_strbuf_deinit(&dec);
  poot_tokenizer_destroy(tok);
  poot_tokenizer_destroy(gg);
  poot_arena_deinit(&arena);
  poot_free(text);
}

static void run_case(const hf_case *c) {
  char rel[256], json_path[1024];
  snprintf(rel, sizeof rel, "hf-tokenizers/%s/tokenizer.json", c->name);
  if (!poot_test_data_path(rel, json_path, sizeof json_path)) fail_msg("%s is absent", rel);
  run_case_at(c, NULL, json_path);
}

/* One normalizer at a time, on byte-level ids: NFC, NFD, NFKC, NFKD and BERT's
 * (clean, CJK padding, NFD + strip accents, lowercase, with its pre-tokenizer). */
static void test_normalizers(void **state) {
  (void)state;
  static const char *const names[] = {"nfc", "nfd", "nfkc", "nfkd", "bert"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/synthetic-%s.tokenizer.json", poot_test_tmpdir(), names[i]);
    /* Lossless except where the normalizer changes the text. */
    hf_case c = {names[i], NULL, false};
    run_case_at(&c, names[i], path);
  }
}

static void test_llama2(void **state) {
  (void)state;
  run_case(&k_cases[0]);
}
static void test_llama3(void **state) {
  (void)state;
  run_case(&k_cases[1]);
}
static void test_qwen3(void **state) {
  (void)state;
  run_case(&k_cases[2]);
}

/* BOS/EOS from the post-processor and tokenizer_config.json. */
static void test_bos_rules(void **state) {
  (void)state;
  char p[1024];
  assert_true(poot_test_data_path("hf-tokenizers/llama2/tokenizer.json", p, sizeof p));
  poot_tokenizer *tok = NULL;
  POOT_ASSERT_OK(poot_tokenizer_open_path(p, &tok));
  poot_tokenizer_specials s = poot_tokenizer_get_specials(tok);
  assert_int_equal(s.bos, 1);
  assert_true(s.add_bos);
  assert_false(s.add_eos);
  poot_token *ids = NULL;
  size_t n = 0;
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, "Hello", 5, NULL, &ids, &n));
  assert_true(n >= 2);
  assert_int_equal(ids[0], 1);
  poot_free(ids);
  poot_tokenizer_destroy(tok);
  /* Qwen3: no BOS (tokenizer_config.json says add_bos_token false). */
  assert_true(poot_test_data_path("hf-tokenizers/qwen3", p, sizeof p));
  POOT_ASSERT_OK(poot_tokenizer_open_path(p, &tok));
  s = poot_tokenizer_get_specials(tok);
  assert_false(s.add_bos);
  POOT_ASSERT_OK(poot_tokenizer_encode(tok, "Hello", 5, NULL, &ids, &n));
  assert_int_equal(n, 1);
  assert_int_equal(ids[0], 9707);
  poot_free(ids);
  poot_tokenizer_destroy(tok);
}

int main(void) {
  char probe[1024];
  if (!poot_test_data_path("hf-tokenizers/llama3/tokenizer.json", probe, sizeof probe))
    return poot_test_skip("hf-tokenizers is absent (POOT_DATA_DIR)");
  if (poot_test_system("python3 -c 'import tokenizers' >/dev/null 2>&1") != 0)
    return poot_test_skip("the Python package 'tokenizers' is not installed");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_llama2),      cmocka_unit_test(test_llama3),
      cmocka_unit_test(test_qwen3),       cmocka_unit_test(test_bos_rules),
      cmocka_unit_test(test_normalizers),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (rc == 0 && g_skipped) return poot_test_skip("the reference script skipped");
  return rc;
}
