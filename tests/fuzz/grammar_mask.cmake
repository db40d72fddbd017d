poot_add_fuzzer(fuzz_grammar_mask SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar_mask.c LIBS poot_llm
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/grammar_mask SECONDS 10)
