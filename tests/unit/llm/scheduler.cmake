# The KV block pool and the scheduler core (src/llm/scheduler/): host-side
# bookkeeping of continuous batching (issue 19; docs/batching.md).
poot_add_test(llm_kv_pool_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kv_pool_test.c
  LIBS poot_llm)
poot_add_test(llm_scheduler_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/scheduler_test.c
  LIBS poot_llm)
