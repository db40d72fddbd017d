# Regressions found by the KIR builder fuzzer (tests/fuzz/kir_builder.c).
poot_add_test(kir_interp_harden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/interp_harden_test.c
  LIBS poot_kir poot_base)
