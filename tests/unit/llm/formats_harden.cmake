# Robustness of the model-file readers: allocation-failure sweeps and the
# regressions found by fuzzing (inputs from tests/fuzz/corpus).
poot_add_test(formats_harden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/formats_harden_test.c
  LIBS poot_llm poot_base)
