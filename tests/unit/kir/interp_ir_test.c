/* Verifier, printer, hash and interpreter fault tests. */
#include "poot_test.h"

#include "corpus.h"

int main(void) {
  const struct CMUnitTest tests[] = {0};
  (void)tests;
  return 0;
}
