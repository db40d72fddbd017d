# The Hugging Face config.json and generation_config.json readers.
poot_add_fuzzer(fuzz_hf_config SOURCES ${CMAKE_CURRENT_LIST_DIR}/hf_config.c LIBS poot_llm poot_base
  CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/hf_config SECONDS 10)
