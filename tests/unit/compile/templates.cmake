# Every kernel template against poot_eval on the KIR interpreter.
if(TARGET poot_compile)
  poot_add_test(compile_templates
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/templates_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
            ${CMAKE_CURRENT_LIST_DIR}/template_cases.c
    LIBS poot_compile poot_eval poot_devices)
endif()
