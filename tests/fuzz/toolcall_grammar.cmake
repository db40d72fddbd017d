poot_add_fuzzer(fuzz_toolcall_grammar SOURCES ${CMAKE_CURRENT_LIST_DIR}/toolcall_grammar.c
  LIBS poot_llm CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/toolcall_grammar SECONDS 10)
