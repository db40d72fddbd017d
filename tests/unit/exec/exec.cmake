# The device conformance suite, written once against the executor and
# instantiated per backend (the argument is the device spec). It reuses the
# compile tests' input generator (poot_compile_testutil) and the families
# layer's tracer for its llama step.
if(TARGET poot_devices AND TARGET poot_compile_testutil AND TARGET poot_llm)
  get_target_property(poot_devices_defs poot_devices INTERFACE_COMPILE_DEFINITIONS)
  if(poot_devices_defs MATCHES "POOT_HAVE_VULKAN")
    poot_add_test(exec_conformance_vulkan
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/conformance_test.c
      LIBS poot_compile_testutil poot_devices poot_exec poot_eval poot_llm
      ARGS vulkan
      TIMEOUT 600)
    poot_vulkan_leak_check(exec_conformance_vulkan)
    target_include_directories(exec_conformance_vulkan PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/compile)
  endif()
  if(poot_devices_defs MATCHES "POOT_HAVE_WGPU")
    poot_add_test(exec_conformance_wgpu
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/conformance_test.c
      LIBS poot_compile_testutil poot_devices poot_exec poot_eval poot_llm
      ARGS wgpu
      TIMEOUT 900)
    poot_wgpu_test(exec_conformance_wgpu)
    target_include_directories(exec_conformance_wgpu PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/compile)
  endif()
endif()
# The engine benchmark (replay versus eager, one run); built, not run by ctest.
if(TARGET poot_devices AND TARGET poot_compile_testutil AND TARGET poot_llm AND NOT POOT_FUZZ)
  add_executable(exec_bench ${CMAKE_CURRENT_LIST_DIR}/exec_bench.c)
  target_include_directories(exec_bench PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                ${CMAKE_SOURCE_DIR}/tests/unit/compile)
  target_link_libraries(exec_bench PRIVATE poot_compile_testutil poot_devices poot_exec poot_llm)
endif()
