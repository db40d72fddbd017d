/* hf_config.c — libFuzzer target for the Hugging Face config.json and
 * generation_config.json readers. Any input either parses or fails with
 * FORMAT (or OUT_OF_MEMORY); never a crash, leak or undefined conversion. */
#include <stdint.h>

#include "poot/llm/hf_config.h"

static void check(int ok) {
  if (!ok) __builtin_trap();
}

static void check_code(poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  check(c == POOT_OK || c == POOT_FORMAT || c == POOT_OUT_OF_MEMORY);
  poot_status_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_hf_config *c = NULL;
  check_code(poot_hf_config_parse((const char *)data, size, "fuzz", &c));
  if (c) check(c->n_eos_token_ids <= POOT_HF_MAX_EOS);
  poot_hf_config_destroy(c);
  poot_hf_generation_config *g = NULL;
  check_code(poot_hf_generation_config_parse((const char *)data, size, "fuzz", &g));
  if (g) check(g->n_eos_token_ids <= POOT_HF_MAX_EOS);
  poot_hf_generation_config_destroy(g);
  return 0;
}
