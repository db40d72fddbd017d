# GBNF grammars and the vocabulary mask (src/llm/grammar/). The benchmark reads the
# Llama-3 vocabulary from POOT_DATA_DIR and prints SKIP when it is absent.
poot_add_test(grammar_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar_test.c LIBS poot_llm)
poot_add_test(grammar_bench_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar_bench_test.c
  LIBS poot_llm)
