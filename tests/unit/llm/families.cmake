# Model families and the registry (src/llm/models, src/llm/registry).
poot_add_test(llm_families_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/families_test.c
  LIBS poot_llm poot_eval)
