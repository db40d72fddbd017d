# The tiled GEMM template of prefill on the KIR interpreter against poot_eval.
if(TARGET poot_compile)
  poot_add_test(compile_gemm
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval poot_devices)
endif()
