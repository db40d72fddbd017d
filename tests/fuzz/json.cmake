poot_add_fuzzer(fuzz_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/json.c LIBS poot_base
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/json SECONDS 10)
