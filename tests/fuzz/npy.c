/* libFuzzer target: the .npy reader (tools/support_npy.c) on arbitrary bytes,
 * and a serialize → parse round trip of whatever it accepts. */
#include <stdint.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_npy a;
  poot_status s = poot_npy_parse(data, size, &a);
  if (s) {
    poot_status_free(s);
    return 0;
  }
  void *bytes = NULL;
  size_t n = 0;
  s = poot_npy_serialize(&a, &bytes, &n);
  if (!s) {
    poot_npy b;
    poot_status t = poot_npy_parse(bytes, n, &b);
    if (t || b.bytes != a.bytes || b.rank != a.rank || (a.bytes && memcmp(a.data, b.data, a.bytes)))
      __builtin_trap();
    poot_npy_deinit(&b);
    poot_free(bytes);
  } else {
    poot_status_free(s);
  }
  poot_npy_deinit(&a);
  return 0;
}
