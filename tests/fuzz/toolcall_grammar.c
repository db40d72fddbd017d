/* libFuzzer target: a tools list → the grammar of forced calls
 * (poot_toolcall_grammar). The first byte picks the format (low 2 bits), a
 * named function (bit 2: the first tool's name, if any) and one call at most
 * (bit 3); the rest is the tools JSON. It never crashes, fails only with
 * INVALID_ARGUMENT, UNSUPPORTED, CAPACITY or OUT_OF_MEMORY and a message,
 * and any grammar it emits compiles. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/grammar.h"
#include "poot/llm/toolcall.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  uint8_t flags = data[0];
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *tools = NULL;
  poot_json_parse_options jo = {.max_depth = 64};
  poot_status st = poot_json_parse(&arena, (const char *)data + 1, size - 1, &jo, &tools);
  if (st) {
    poot_status_free(st);
    poot_arena_deinit(&arena);
    return 0;
  }
  poot_toolcall_grammar_options o = {.max_calls = (flags & 8) ? 1 : 0};
  if ((flags & 4) && tools->type == POOT_JSON_ARRAY && tools->len) {
    const poot_json *fn = poot_json_get(tools->items[0], "function");
    const poot_json *name = fn ? poot_json_get(fn, "name") : NULL;
    if (name && name->type == POOT_JSON_STRING) o.function = name->str;
  }
  char *gbnf = NULL;
  size_t len = 0;
  st = poot_toolcall_grammar((poot_toolcall_format)(flags & 3), tools, &o, &gbnf, &len);
  if (st) {
    poot_status_code c = poot_status_code_of(st);
    if (gbnf || !poot_status_message(st)[0]) __builtin_trap();
    if (c != POOT_INVALID_ARGUMENT && c != POOT_UNSUPPORTED && c != POOT_OUT_OF_MEMORY &&
        c != POOT_CAPACITY)
      __builtin_trap();
    poot_status_free(st);
  } else {
    if (!gbnf || len != strlen(gbnf)) __builtin_trap();
    poot_grammar *g = NULL;
    st = poot_grammar_compile(gbnf, len, NULL, &g);
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(st);
    poot_grammar_destroy(g);
    poot_free(gbnf);
  }
  poot_arena_deinit(&arena);
  return 0;
}
