# The reference evaluator on parsed graphs with zero inputs.
poot_add_fuzzer(fuzz_eval_graph SOURCES ${CMAKE_CURRENT_LIST_DIR}/eval_graph.c LIBS poot_eval poot_graph
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/eval_graph SECONDS 10)
