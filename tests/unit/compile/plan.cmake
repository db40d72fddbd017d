# The planner: whole synthetic Llama steps on the KIR interpreter against
# poot_eval, checks, memory plan (plan_test); every kernel rendered and
# validated by each target's own tool (plan_render_test).
if(TARGET poot_compile AND TARGET poot_llm)
  add_library(poot_compile_testutil STATIC ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
                                           ${CMAKE_CURRENT_LIST_DIR}/template_cases.c)
  target_include_directories(poot_compile_testutil PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(poot_compile_testutil PUBLIC poot_compile poot_eval)
  poot_add_test(compile_plan
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/plan_test.c
    LIBS poot_compile_testutil poot_devices poot_llm)
endif()
if(TARGET poot_compile)
  poot_add_script_test(compile_plan_render
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/plan_render.sh)
endif()
# The benchmark of docs/PERFORMANCE.md ("Compiler"); built, not run by ctest.
if(TARGET poot_compile AND TARGET poot_llm AND NOT POOT_FUZZ)
  add_executable(compile_plan_bench ${CMAKE_CURRENT_LIST_DIR}/plan_bench.c)
  target_link_libraries(compile_plan_bench PRIVATE poot_devices poot_llm poot_compile)
endif()
# The planner on the passes' random graphs, bit for bit against poot_eval.
if(TARGET poot_compile AND EXISTS ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c)
  poot_add_test(compile_plan_random
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/plan_random_test.c ${CMAKE_CURRENT_LIST_DIR}/passes_gen.c
    LIBS poot_compile poot_eval
    ARGS 400 1)
endif()
# Every kernel rendered for the demo model (f16, q8_0, q4_0), stories260K and a
# Llama-3.2-1B-shaped model, decode and prefill, on every target, hashed against
# tests/data/kernels/hashes.txt: a change of any kernel shows here. After a
# change meant to alter kernels, rewrite the file with --write and commit it.
poot_add_script_test(compile_kernel_hashes
  COMMAND python3 ${CMAKE_SOURCE_DIR}/scripts/kernel_hashes.py --poot $<TARGET_FILE:poot>
    --data ${POOT_DATA_DIR} --check ${CMAKE_SOURCE_DIR}/tests/data/kernels/hashes.txt)
# Batch invariance of the paged decode step on the interpreter, per target
# (docs/batching.md "Batch invariance").
if(TARGET poot_compile AND TARGET poot_llm)
  poot_add_test(compile_batch_invariance
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/batch_invariance_test.c
    LIBS poot_compile_testutil poot_devices poot_llm)
endif()
# The batched runner's decode entries at B = 1 .. 64 plan and render for every
# GPU target (a Llama-3.2-1B-shaped step of two layers; docs/batching.md).
if(TARGET poot_compile AND TARGET poot_llm)
  poot_add_test(compile_batch_plans
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/batch_plans_test.c
    LIBS poot_compile_testutil poot_devices poot_llm)
endif()
