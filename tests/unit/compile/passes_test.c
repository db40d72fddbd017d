#include "poot/compile_passes.h"
#include "poot_test.h"
int main(void) { return 0; }
