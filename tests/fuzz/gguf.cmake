poot_add_fuzzer(fuzz_gguf SOURCES ${CMAKE_CURRENT_LIST_DIR}/gguf.c LIBS poot_llm poot_base
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/gguf SECONDS 15)
