# The tokenizer.json loader, and encode/decode on what it loads.
poot_add_fuzzer(tokenizer_json_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_json.c
  LIBS poot_llm poot_base CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/tokenizer_json SECONDS 15)
