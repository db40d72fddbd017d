# The matmul precision's name parser (poot_matmul_precision_parse, compile.h).
poot_add_fuzzer(fuzz_matmul_precision SOURCES ${CMAKE_CURRENT_LIST_DIR}/matmul_precision.c
  LIBS poot_compile CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/matmul_precision SECONDS 2)
