/* registry_test.c — poot_model_open's agreement checks between the model's
 * parts: a tokenizer with more tokens than the embedding has rows is refused
 * at open, naming both numbers; one with fewer (the embedding padded, as
 * Hugging Face checkpoints do) opens (docs/models.md). Uses the bundled demo
 * model (1998 tokens and rows) with other tokenizers from the shared data. */
#include "poot_test.h"

#include "poot/llm/model.h"
#include "poot/llm/tokenizer.h"

static bool demo_path(char *buf, size_t size) {
  snprintf(buf, size, "%s/models/poot-demo.gguf", poot_test_source_dir());
  FILE *f = fopen(buf, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void test_tokenizer_larger_than_embedding(void **state) {
  (void)state;
  char model[1024], tok[1024];
  if (!demo_path(model, sizeof model) ||
      !poot_test_data_path("vocab/ggml-vocab-llama-spm.gguf", tok, sizeof tok)) {
    printf("SKIP: the demo model or the shared data (vocab/) is absent\n");
    skip();
  }
  poot_model_open_options o = {.tokenizer_path = tok};
  poot_model *m = (poot_model *)1;
  POOT_ASSERT_STATUS_MSG(poot_model_open(model, &o, &m), POOT_INVALID_ARGUMENT,
                         "has 32000 tokens but the model's embedding has 1998 rows");
  assert_null(m);
  POOT_ASSERT_STATUS_MSG(poot_model_open(model, &o, &m), POOT_INVALID_ARGUMENT, tok);
  /* Its own tokenizer agrees. */
  POOT_ASSERT_OK(poot_model_open(model, NULL, &m));
  assert_int_equal(poot_tokenizer_vocab_size(poot_model_get_tokenizer(m)), 1998);
  assert_int_equal(poot_model_get_config(m)->vocab_size, 1998);
  poot_model_destroy(m);
}

static void test_tokenizer_smaller_than_embedding(void **state) {
  (void)state;
  char model[1024], tok[1024];
  if (!demo_path(model, sizeof model) ||
      !poot_test_data_path("models/stories260K/tok512.bin", tok, sizeof tok)) {
    printf("SKIP: the demo model or the shared data (stories260K) is absent\n");
    skip();
  }
  poot_model_open_options o = {.tokenizer_path = tok};
  poot_model *m = NULL;
  POOT_ASSERT_OK(poot_model_open(model, &o, &m));
  assert_int_equal(poot_tokenizer_vocab_size(poot_model_get_tokenizer(m)), 512);
  assert_int_equal(poot_model_get_config(m)->vocab_size, 1998);
  poot_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokenizer_larger_than_embedding),
      cmocka_unit_test(test_tokenizer_smaller_than_embedding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
