poot_add_fuzzer(fuzz_safetensors SOURCES ${CMAKE_CURRENT_LIST_DIR}/safetensors.c
  LIBS poot_llm poot_base CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/safetensors SECONDS 15)
