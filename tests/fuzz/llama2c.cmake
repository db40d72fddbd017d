# The llama2.c checkpoint and tokenizer readers.
poot_add_fuzzer(fuzz_llama2c SOURCES ${CMAKE_CURRENT_LIST_DIR}/llama2c.c LIBS poot_llm poot_base
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/llama2c SECONDS 10)
