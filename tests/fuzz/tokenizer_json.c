/* tokenizer_json.c — libFuzzer target for the tokenizer loaders: every input
 * goes to the tokenizer.json loader and the llama2.c loader, and an input
 * that starts with the GGUF magic to the GGUF metadata loader; whatever loads
 * is exercised with encode/decode (fixed strings and the input itself). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "poot/llm/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const poot_tokenizer *tok, const char *text, size_t len) {
  for (int mode = 0; mode < 2; mode++) {
    poot_tokenizer_encode_options opt = {.add_special = mode == 0, .parse_special = mode == 0};
    poot_token *ids = NULL;
    size_t n = 0;
    poot_status st = poot_tokenizer_encode(tok, text, len, &opt, &ids, &n);
    if (st) {
      poot_status_free(st);
      continue;
    }
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_tokenizer_decode_options d = {.render_special = mode == 0, .strip_prefix_space = true};
    poot_status_free(poot_tokenizer_decode(tok, ids, n, &d, &sb));
    poot_tokenizer_decoder *dec = NULL;
    if (!poot_status_is_ok(poot_tokenizer_decoder_create(tok, &d, &dec))) dec = NULL;
    for (size_t i = 0; dec && i < n; i++)
      poot_status_free(poot_tokenizer_decoder_push(dec, ids[i], &sb));
    if (dec) poot_status_free(poot_tokenizer_decoder_flush(dec, &sb));
    poot_tokenizer_decoder_destroy(dec);
    poot_strbuf_deinit(&sb);
    poot_free(ids);
  }
}

static void exercise_all(const poot_tokenizer *tok, const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_tokenizer *tok = NULL;
  poot_status st = poot_tokenizer_load_hf_json((const char *)data, size, NULL, 0, &tok);
  if (!st) exercise_all(tok, data, size);
  poot_status_free(st);
  poot_tokenizer_destroy(tok);
  tok = NULL;
  st = poot_tokenizer_load_llama2c(data, size, 0, &tok);
  if (!st) exercise_all(tok, data, size);
  poot_status_free(st);
  poot_tokenizer_destroy(tok);
  tok = NULL;
  if (size >= 4 && memcmp(data, "GGUF", 4) == 0) {
    poot_gguf *g = NULL;
    st = poot_gguf_open_memory(data, size, "fuzz", &g);
    if (!st) {
      st = poot_tokenizer_load_gguf(g, &tok);
      if (!st) exercise_all(tok, data, size);
      poot_tokenizer_destroy(tok);
    }
    poot_status_free(st);
    poot_gguf_destroy(g);
  }
  return 0;
}

static void exercise_all(const poot_tokenizer *tok, const uint8_t *data, size_t size) {
  static const char *const texts[] = {
      "",
      " ",
      "Hello world",
      "  leading\tand\ntrailing  ",
      "<s>x</s>[CLS]<unk>",
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa6\x99 1234567",
      "\xff\xfe\x80 bad utf8 \xc3",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    exercise(tok, texts[i], strlen(texts[i]));
  exercise(tok, (const char *)data, size > 2048 ? 2048 : size);
  /* Every id decodes without trouble. */
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  int32_t n = poot_tokenizer_vocab_size(tok);
  for (int32_t id = 0; id < n && id < 4096; id++) {
    poot_status_free(poot_tokenizer_token_to_piece(tok, id, true, &sb));
    poot_strbuf_clear(&sb);
  }
  poot_strbuf_deinit(&sb);
}
