# Tokenizer tests (src/llm/tokenizer/). Data comes from POOT_DATA_DIR; a test
# whose data or Python package is absent prints SKIP and exits 77.
poot_add_test(tokenizer_vocab_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_vocab_test.c
  LIBS poot_llm)
