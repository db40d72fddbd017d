# The weight-streaming GEMV template on the KIR interpreter against poot_eval.
if(TARGET poot_compile)
  poot_add_test(compile_gemv
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemv_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval)
endif()
# The block-format GEMVs rendered for every target and validated by each
# target's own tool.
if(TARGET poot_compile)
  poot_add_script_test(compile_gemv_render
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/gemv_render.sh)
endif()
