# The oracle runner and `poot verify greedy` (src/llm/verify, tools/cmd_verify.c).
poot_add_test(llm_verify_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/verify_test.c
  LIBS poot_llm poot_eval poot_graph poot_base)
poot_add_script_test(llm_verify_stories
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_stories.py)
