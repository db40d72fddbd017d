# The reference evaluator, the GGUF block codecs, Philox and the .npy support.
poot_add_test(test_quant SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_quant.c LIBS poot_graph poot_base m)
