# The tiled GEMM template of prefill on the KIR interpreter against poot_eval.
if(TARGET poot_compile)
  poot_add_test(compile_gemm
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval poot_devices TIMEOUT 900)
endif()
# The matrix-fragment form rendered for every target and validated by each
# target's own tool (ptxas sm_80 and sm_90 for the mma kernels).
if(TARGET poot_compile)
  poot_add_script_test(compile_gemm_render
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/gemm_render.sh)
endif()
