# The graph passes (canonicalize, constant-fold, CSE, DCE): hand-written cases
# and a property test on random graphs. Until src/compile has its own
# CMakeLists (and so a poot_compile library holding src/compile/passes), the
# pass sources are compiled into each test.
if(TARGET poot_compile)
  set(poot_passes_test_sources)
  set(poot_passes_test_libs poot_compile poot_eval poot_graph poot_base m)
else()
  file(GLOB poot_passes_test_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/compile/passes/*.c)
  set(poot_passes_test_libs poot_eval poot_graph poot_base m)
endif()
poot_add_test(test_passes SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_test.c
  ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c ${poot_passes_test_sources}
  LIBS ${poot_passes_test_libs})
poot_add_test(test_passes_random SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_random_test.c
  ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c ${poot_passes_test_sources} LIBS ${poot_passes_test_libs})
foreach(t test_passes test_passes_random)
  if(TARGET ${t} AND NOT TARGET poot_compile)
    target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/src/compile/passes)
  endif()
endforeach()
# The real workload: every model family's traced graphs through the pipeline.
if(TARGET poot_llm)
  poot_add_test(test_passes_families SOURCES ${CMAKE_CURRENT_LIST_DIR}/passes_families_test.c
    ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c ${poot_passes_test_sources}
    LIBS poot_llm ${poot_passes_test_libs})
endif()
