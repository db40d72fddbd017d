# GBNF grammars and the vocabulary mask (src/llm/grammar/). The benchmark reads the
# Llama-3 vocabulary from POOT_DATA_DIR and prints SKIP when it is absent.
poot_add_test(grammar_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar_test.c LIBS poot_llm)
# The benchmark's per-step checks against per-token accepts over 128k tokens
# are too slow under the sanitizers: it is labelled "ref" (the main pass only).
poot_add_test(grammar_bench_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/grammar_bench_test.c
    ${CMAKE_CURRENT_LIST_DIR}/grammar_vocab_util.c
  LIBS poot_llm LABELS ref)
