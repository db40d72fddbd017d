/* llama2c.c — libFuzzer target for the llama2.c checkpoint and tokenizer
 * readers. The first byte picks the reader; a checkpoint that opens must
 * expose tensors inside the input, and the tokenizer reader is asked for a
 * token count taken from the next four bytes. Every rejection is a typed
 * status (FORMAT, INVALID_ARGUMENT or OUT_OF_MEMORY). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/llama2c.h"

static volatile uint64_t sink;

static void check(int ok) {
  if (!ok) __builtin_trap();
}

static void check_code(poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  check(c == POOT_FORMAT || c == POOT_INVALID_ARGUMENT || c == POOT_OUT_OF_MEMORY);
  poot_status_free(st);
}

static void fuzz_checkpoint(const uint8_t *data, size_t size) {
  /* The reader hands out float pointers into the buffer: give it an
   * aligned copy, as a mapping would be. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return;
  memcpy(copy, data, size);
  bool probed = poot_llama2c_probe(copy, size);
  poot_llama2c *m = NULL;
  poot_status st = poot_llama2c_open_memory(copy, size, "fuzz", &m);
  check(probed == (st == NULL));
  if (st) {
    check_code(st);
    free(copy);
    return;
  }
  const poot_llama2c_config *c = poot_llama2c_config_of(m);
  check(c->vocab_size > 0 && c->dim > 0);
  for (size_t i = 0; i < poot_llama2c_tensor_count(m); i++) {
    const poot_llama2c_tensor *t = poot_llama2c_tensor_at(m, i);
    const uint8_t *p = (const uint8_t *)t->data;
    check(p >= copy + 28 && t->size <= size && (size_t)(p - copy) <= size - t->size);
    if (t->size) sink += p[0] + p[t->size - 1];
    check(poot_llama2c_find(m, t->name) == t);
  }
  poot_llama2c_destroy(m);
  free(copy);
}

static void fuzz_vocab(const uint8_t *data, size_t size) {
  if (size < 4) return;
  int32_t n = 0;
  memcpy(&n, data, 4);
  poot_llama2c_vocab *v = NULL;
  poot_status st = poot_llama2c_vocab_parse(data + 4, size - 4, n, "fuzz", &v);
  if (st) {
    check_code(st);
    return;
  }
  check(v->n_tokens == n);
  for (int32_t i = 0; i < v->n_tokens; i++) {
    check(v->tokens[i][v->token_lens[i]] == '\0');
    if (v->token_lens[i]) sink += (uint8_t)v->tokens[i][0];
  }
  poot_llama2c_vocab_destroy(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1)
    fuzz_vocab(data + 1, size - 1);
  else
    fuzz_checkpoint(data + 1, size - 1);
  return 0;
}
