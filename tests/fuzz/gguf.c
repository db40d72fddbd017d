/* libFuzzer target: the GGUF reader never crashes, leaks, reads out of
 * bounds or allocates without bound, and every value it accepts can be read
 * back through the accessors. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/gguf.h"

static volatile uint64_t sink;

static void touch(const poot_gguf_value *v, unsigned depth) {
  if (v->type == POOT_GGUF_VALUE_STRING) {
    if (v->str.len) sink += (uint8_t)v->str.data[v->str.len - 1];
    return;
  }
  if (v->type != POOT_GGUF_VALUE_ARRAY) {
    sink += v->u;
    return;
  }
  if (depth > POOT_GGUF_MAX_NESTING) __builtin_trap();
  uint64_t n = poot_gguf_array_len(v);
  for (uint64_t i = 0; i < n; i++) {
    if (v->arr.elem_type == POOT_GGUF_VALUE_STRING) {
      const char *s;
      size_t len;
      if (poot_gguf_array_get_string(v, i, &s, &len)) __builtin_trap();
      if (len) sink += (uint8_t)s[len - 1];
    } else if (v->arr.elem_type == POOT_GGUF_VALUE_ARRAY) {
      const poot_gguf_value *inner;
      if (poot_gguf_array_get_array(v, i, &inner)) __builtin_trap();
      touch(inner, depth + 1);
    } else {
      poot_gguf_value e;
      if (poot_gguf_array_get_value(v, i, &e)) __builtin_trap();
      sink += e.u;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_gguf *g = NULL;
  poot_status st = poot_gguf_open_memory(data, size, "fuzz", &g);
  if (st) {
    /* Every rejection is FORMAT, UNSUPPORTED or OUT_OF_MEMORY. */
    poot_status_code c = poot_status_code_of(st);
    if (c != POOT_FORMAT && c != POOT_UNSUPPORTED && c != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(st);
    return 0;
  }
  for (size_t i = 0; i < poot_gguf_kv_count(g); i++) {
    const poot_gguf_value *v = poot_gguf_kv_value(g, i);
    if (poot_gguf_find(g, poot_gguf_kv_key(g, i)) != v) __builtin_trap();
    touch(v, 0);
    uint64_t u;
    poot_status_free(poot_gguf_get_u64(g, poot_gguf_kv_key(g, i), &u));
  }
  for (size_t i = 0; i < poot_gguf_tensor_count(g); i++) {
    const poot_gguf_tensor *t = poot_gguf_tensor_at(g, i);
    if (t->size) sink += t->data[0] + t->data[t->size - 1];
    if (poot_gguf_find_tensor(g, t->name) != t) __builtin_trap();
  }
  poot_gguf_destroy(g);
  return 0;
}
