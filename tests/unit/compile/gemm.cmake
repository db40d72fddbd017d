# The tiled GEMM template of prefill on the KIR interpreter against poot_eval.
if(TARGET poot_compile)
  poot_add_test(compile_gemm
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval poot_devices ARGS tiled TIMEOUT 900)
  # The matrix-fragment form on the interpreter (sm_80, sm_90): labelled "ref",
  # the main pass only (six minutes of CI under the sanitizers; it ran clean
  # under ASan+UBSan when the form landed).
  if(TARGET compile_gemm)
    add_test(NAME compile_gemm_mma COMMAND compile_gemm mma)
    get_test_property(compile_gemm ENVIRONMENT gemm_env)
    set_tests_properties(compile_gemm_mma PROPERTIES LABELS ref SKIP_RETURN_CODE 77 TIMEOUT 900
      ENVIRONMENT "${gemm_env}")
  endif()
endif()
# The matrix-fragment form rendered for every target and validated by each
# target's own tool (ptxas sm_80 and sm_90 for the mma kernels).
if(TARGET poot_compile)
  poot_add_script_test(compile_gemm_render
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/gemm_render.sh)
endif()
