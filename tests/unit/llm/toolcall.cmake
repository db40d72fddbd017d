# Tool-call and reasoning parsing (src/llm/toolcall/, docs/toolcalls.md).
poot_add_test(llm_toolcall_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/toolcall_test.c LIBS poot_llm)
