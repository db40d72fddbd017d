/* graph_text.c — libFuzzer target for the graph text form (.pgraph).
 * Any input must parse to a verified graph or fail with FORMAT or
 * INVALID_ARGUMENT; a graph that parses must print, reparse and print
 * again to the same bytes, with the same structural hash. */
#include <stdint.h>
#include <string.h>

#include "poot/graph.h"

static void check(int ok) {
  if (!ok) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_graph *g = NULL;
  poot_status st = poot_graph_parse((const char *)data, size, &g);
  poot_status_code code = poot_status_code_of(st);
  poot_status_free(st);
  check(code == POOT_OK || code == POOT_FORMAT || code == POOT_INVALID_ARGUMENT ||
        code == POOT_OUT_OF_MEMORY);
  if (!g) return 0;
  char *a = NULL, *b = NULL;
  poot_graph *g2 = NULL;
  if (poot_graph_to_text(g, &a)) goto done;
  st = poot_graph_parse(a, strlen(a), &g2);
  check(st == NULL || poot_status_code_of(st) == POOT_OUT_OF_MEMORY);
  poot_status_free(st);
  if (!g2 || poot_graph_to_text(g2, &b)) goto done;
  check(strcmp(a, b) == 0);
  uint64_t h1 = 0, h2 = 0;
  if (!poot_graph_hash(g, &h1) && !poot_graph_hash(g2, &h2)) check(h1 == h2);
done:
  poot_free(a);
  poot_free(b);
  poot_graph_destroy(g);
  poot_graph_destroy(g2);
  return 0;
}
