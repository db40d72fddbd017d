poot_add_fuzzer(fuzz_grammar SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar.c LIBS poot_llm
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/grammar SECONDS 10)
