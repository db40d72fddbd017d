# Tool-call and reasoning parsing (src/llm/toolcall/, docs/toolcalls.md).
poot_add_test(llm_toolcall_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/toolcall_test.c LIBS poot_llm)
# Forced calls: the grammar built from a tools list (src/llm/toolcall/toolcall_grammar.c).
poot_add_test(llm_toolcall_grammar_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/toolcall_grammar_test.c
  LIBS poot_llm)
