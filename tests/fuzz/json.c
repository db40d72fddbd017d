/* libFuzzer target: the JSON parser and writer never crash, leak or accept
 * what they cannot write back. */
#include <stdint.h>
#include <string.h>

#include "poot/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *root = NULL;
  poot_json_parse_options opts = {.max_depth = 64};
  poot_status st = poot_json_parse(&arena, (const char *)data, size, &opts, &root);
  if (!st) {
    /* What parses must serialize and parse again to the same text. */
    poot_strbuf a, b;
    poot_strbuf_init(&a);
    poot_strbuf_init(&b);
    poot_json_write(&a, root, false, true);
    poot_json *again = NULL;
    poot_status st2 = poot_json_parse(&arena, a.data, a.len, &opts, &again);
    if (st2) __builtin_trap();
    poot_json_write(&b, again, false, true);
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) __builtin_trap();
    poot_strbuf_deinit(&a);
    poot_strbuf_deinit(&b);
  }
  poot_status_free(st);
  poot_arena_deinit(&arena);
  return 0;
}
