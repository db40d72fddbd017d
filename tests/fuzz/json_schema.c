/* libFuzzer target: JSON Schema text → GBNF. The first byte picks options (bit 0
 * strict_properties, bit 1 ignore_unknown_formats, bit 2 compact, bit 3 the text is a
 * response_format object); the rest is the text. Compiling never crashes and fails only with
 * INVALID_ARGUMENT, UNSUPPORTED, CAPACITY or OUT_OF_MEMORY and a message; any grammar it emits is
 * accepted by poot_grammar_compile and a matcher can start on it. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/grammar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  uint8_t flags = data[0];
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  poot_json_schema_options o = poot_json_schema_options_default();
  o.strict_properties = flags & 1;
  o.ignore_unknown_formats = (flags & 2) != 0;
  o.compact = (flags & 4) != 0;
  o.max_whitespace = (flags >> 4) & 7;
  char *gbnf = NULL;
  size_t glen = 0;
  poot_status st = (flags & 8) ? poot_json_response_format_to_gbnf(text, len, &o, &gbnf, &glen)
                               : poot_json_schema_to_gbnf(text, len, &o, &gbnf, &glen);
  if (st) {
    poot_status_code c = poot_status_code_of(st);
    if (gbnf || !poot_status_message(st)[0]) __builtin_trap();
    if (c != POOT_INVALID_ARGUMENT && c != POOT_UNSUPPORTED && c != POOT_OUT_OF_MEMORY &&
        c != POOT_CAPACITY)
      __builtin_trap();
    poot_status_free(st);
    return 0;
  }
  if (!gbnf) return 0; /* {"type":"text"}: no grammar */
  if (glen != strlen(gbnf)) __builtin_trap();
  poot_grammar *g = NULL;
  st = poot_grammar_compile(gbnf, glen, NULL, &g);
  if (st) {
    if (poot_status_code_of(st) != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(st);
  } else {
    poot_grammar_matcher *m = NULL;
    st = poot_grammar_matcher_create(g, &m);
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY &&
        poot_status_code_of(st) != POOT_CAPACITY)
      __builtin_trap();
    poot_status_free(st);
    poot_grammar_matcher_destroy(m);
  }
  poot_grammar_destroy(g);
  poot_free(gbnf);
  return 0;
}
