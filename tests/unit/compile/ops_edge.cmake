# Algorithmic elementwise templates (float rem, integer pow) on edge inputs.
if(TARGET poot_compile)
  poot_add_test(compile_ops_edge
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/ops_edge_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval)
endif()
