# The poot command's refusals of bad input (tests/unit/llm/cli_harden_test.sh).
poot_add_script_test(cli_harden_test
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_harden_test.sh)
