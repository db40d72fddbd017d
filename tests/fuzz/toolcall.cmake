# Tool-call parser fuzzer: the whole-reply parse and the stream agree on any split.
poot_add_fuzzer(fuzz_toolcall SOURCES ${CMAKE_CURRENT_LIST_DIR}/toolcall.c LIBS poot_llm
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/toolcall SECONDS 5)
