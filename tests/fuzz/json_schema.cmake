poot_add_fuzzer(fuzz_json_schema SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_schema.c LIBS poot_llm
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/json_schema SECONDS 10)
