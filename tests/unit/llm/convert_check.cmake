# `poot convert` checks what it writes with the loader's checks
# (src/llm/format/convert_check.c, src/llm/registry/model_check.c).
poot_add_test(llm_convert_check_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/convert_check_test.c
  LIBS poot_llm)
