# Unit tests of the graph layer (src/graph).
set(_g ${CMAKE_CURRENT_LIST_DIR})
poot_add_test(graph_ops_test SOURCES ${_g}/test_graph_ops.c ${_g}/graph_fixtures.c LIBS poot_graph m)
poot_add_test(graph_verify_test SOURCES ${_g}/test_graph_verify.c LIBS poot_graph)
poot_add_test(graph_text_test SOURCES ${_g}/test_graph_text.c ${_g}/graph_fixtures.c LIBS poot_graph m)
poot_add_test(graph_dtype_test SOURCES ${_g}/test_graph_dtype.c ${_g}/graph_fixtures.c LIBS poot_graph m)
