# Chat templates (src/llm/template/): unit tests and the jinja2 reference check.
poot_add_script_test(llm_template_ref
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/template_ref.py
          --convs ${CMAKE_CURRENT_LIST_DIR}/../../data/template)
