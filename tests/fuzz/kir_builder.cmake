# The KIR builder, verifier, printer, renderers and interpreter driven by
# fuzzed sequences of builder calls.
poot_add_fuzzer(fuzz_kir_builder SOURCES ${CMAKE_CURRENT_LIST_DIR}/kir_builder.c
  LIBS poot_devices poot_kir poot_base
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/kir_builder SECONDS 10)
