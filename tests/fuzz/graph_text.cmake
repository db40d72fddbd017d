poot_add_fuzzer(fuzz_graph_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/graph_text.c LIBS poot_graph
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/graph_text SECONDS 15)
