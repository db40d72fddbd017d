# Chat templates (src/llm/template/): unit tests and the jinja2 reference check.
poot_add_script_test(llm_template_ref
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/template_ref.py
          --convs ${CMAKE_CURRENT_LIST_DIR}/../../data/template)
poot_add_script_test(llm_template_semantics_ref
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/template_semantics_ref.py)
poot_add_test(llm_template_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/template_test.c LIBS poot_llm)
poot_add_script_test(llm_template_cli
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/template_cli_test.py)
poot_add_script_test(llm_template_random_ref
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/template_random_ref.py)
