# Tokenizer tests (src/llm/tokenizer/). Data comes from POOT_DATA_DIR; a test
# whose data or Python package is absent prints SKIP and exits 77.
poot_add_test(tokenizer_vocab_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_vocab_test.c
  LIBS poot_llm)
poot_add_test(tokenizer_unit_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_unit_test.c
  LIBS poot_llm Threads::Threads)
poot_add_test(tokenizer_hf_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_hf_test.c
  LIBS poot_llm)
# The CLI: tokenize/detokenize round trips on every kind of model file.
poot_add_script_test(tokenizer_cli_test
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tokenizer_cli_test.sh)
# Hostile vocabularies: fuzz findings and the loaders' bounds on scores and ids.
poot_add_test(tokenizer_hostile_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_hostile_test.c
  LIBS poot_llm)
