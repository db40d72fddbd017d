# The reference evaluator, the GGUF block codecs, Philox and the .npy support.
poot_add_test(test_quant SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_quant.c LIBS poot_graph poot_base m)
poot_add_test(test_philox SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_philox.c LIBS poot_eval poot_base)
poot_add_test(test_npy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_npy.c ${CMAKE_SOURCE_DIR}/tools/support_npy.c
  LIBS poot_base)
if(TARGET test_npy)
  target_include_directories(test_npy PRIVATE ${CMAKE_SOURCE_DIR}/tools)
endif()
poot_add_test(test_eval_elementwise SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_elementwise.c
  LIBS poot_eval poot_graph poot_base m)
poot_add_test(test_eval_structure SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_structure.c
  LIBS poot_eval poot_graph poot_base m)
poot_add_test(test_eval_composite SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_composite.c
  LIBS poot_eval poot_graph poot_base m)
poot_add_test(test_eval_numpy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_numpy.c
  ${CMAKE_SOURCE_DIR}/tools/support_npy.c LIBS poot_eval poot_graph poot_base m)
if(TARGET test_eval_numpy)
  target_include_directories(test_eval_numpy PRIVATE ${CMAKE_SOURCE_DIR}/tools)
endif()
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  poot_add_script_test(test_eval_cli COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/../../ref/eval_cli.py)
endif()
