# poot_model_open's checks between a model's parts (src/llm/registry).
poot_add_test(llm_registry_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/registry_test.c
  LIBS poot_llm)
