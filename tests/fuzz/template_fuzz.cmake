# Chat-template parser and renderer fuzzer.
poot_add_fuzzer(template_fuzz
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/template_fuzz.c
  LIBS poot_llm
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/template_fuzz
  SECONDS 20)
