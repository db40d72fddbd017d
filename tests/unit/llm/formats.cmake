# Model file formats and the weight store (src/llm/format, src/llm/store).
poot_add_test(formats_gguf_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/formats_gguf_test.c
  LIBS poot_llm poot_base)
poot_add_test(formats_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/formats_test.c
  LIBS poot_llm poot_base)
