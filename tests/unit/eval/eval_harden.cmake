# Robustness of the graph parser/printer and the evaluator: allocation-failure
# sweeps and regressions found by fuzzing (inputs from tests/fuzz/corpus).
poot_add_test(test_eval_harden SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_harden.c
  LIBS poot_eval poot_graph poot_base)
