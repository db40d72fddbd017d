# Sampling (src/llm/sampling/): parameters and parsers, the reference sampler,
# the stop-string matcher.
poot_add_test(llm_sampling_params_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampling_params_test.c
  LIBS poot_llm)
poot_add_test(llm_sampling_sampler_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampling_sampler_test.c
  LIBS poot_llm m)
poot_add_test(llm_sampling_stop_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampling_stop_test.c
  LIBS poot_llm)
