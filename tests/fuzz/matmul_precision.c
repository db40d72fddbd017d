/* libFuzzer target: poot_matmul_precision_parse on arbitrary text (NUL-
 * terminated), and the name round trip of whatever it accepts. */
#include <stdint.h>
#include <string.h>

#include "poot/compile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[64];
  if (size >= sizeof text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  poot_matmul_precision p;
  poot_status s = poot_matmul_precision_parse(text, &p);
  if (s) {
    if (!poot_status_message(s)) __builtin_trap();
    poot_status_free(s);
    return 0;
  }
  if (strcmp(poot_matmul_precision_name(p), text) != 0) __builtin_trap();
  return 0;
}
