/* libFuzzer target: the safetensors header reader never crashes, leaks,
 * reads out of bounds or allocates without bound. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/safetensors.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_safetensors *st = NULL;
  poot_status s = poot_safetensors_open_memory(data, size, "fuzz", &st);
  if (s) {
    poot_status_code c = poot_status_code_of(s);
    if (c != POOT_FORMAT && c != POOT_UNSUPPORTED && c != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(s);
    return 0;
  }
  for (size_t i = 0; i < poot_safetensors_tensor_count(st); i++) {
    const poot_safetensors_tensor *t = poot_safetensors_tensor_at(st, i);
    if (t->size) sink += t->data[0] + t->data[t->size - 1];
    if (t->size != t->n_elements * poot_safetensors_dtype_size(t->dtype)) __builtin_trap();
    /* Shapes fit the store's signed dims. */
    for (uint32_t d = 0; d < t->rank; d++)
      if (t->shape[d] > (uint64_t)INT64_MAX) __builtin_trap();
    if (poot_safetensors_find(st, t->name) != t) __builtin_trap();
  }
  poot_safetensors_destroy(st);
  return 0;
}
