# Messages and size arithmetic of graph types (hardening).
poot_add_test(graph_harden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_graph_harden.c
  LIBS poot_graph poot_base)
