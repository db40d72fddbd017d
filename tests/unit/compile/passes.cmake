# The graph passes (canonicalize, constant-fold, CSE, DCE): hand-written cases
# and a property test on random graphs.
poot_add_test(test_passes SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_test.c
  ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c LIBS poot_compile poot_eval)
poot_add_test(test_passes_random SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_random_test.c
  ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c LIBS poot_compile poot_eval)
# The real workload: every model family's traced graphs through the pipeline.
poot_add_test(test_passes_families SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_families_test.c
  ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c LIBS poot_llm poot_compile poot_eval)
