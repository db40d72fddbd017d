# The --logit-bias and stop-list parsers, the stop matcher and the sampler.
poot_add_fuzzer(sampling_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampling.c
  LIBS poot_llm poot_base CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/sampling SECONDS 15)
