# top_k over long rows (templates/select.c): poot_eval against a reference
# sort, the plan on the KIR interpreter (four target profiles) and on a
# Vulkan device when one opens, all bit for bit; dispatch counts; rendering
# for every target (topk_test), and the rendered kernels validated by each
# target's own tool (topk_render).
if(TARGET poot_compile AND TARGET poot_exec AND TARGET poot_devices)
  # Labelled "ref" (the main pass only): under the sanitizers it takes six
  # minutes of CI; it was run clean under ASan+UBSan when the pipeline landed.
  poot_add_test(compile_topk
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/topk_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval poot_devices poot_exec m
    LABELS ref
    TIMEOUT 900)
  poot_vulkan_leak_check(compile_topk)
endif()
if(TARGET poot_compile)
  poot_add_script_test(compile_topk_render
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/topk_render.sh)
endif()
# The benchmark of docs/topk.md (device time per step and per stage); built,
# not run by ctest.
if(TARGET poot_compile AND TARGET poot_exec AND TARGET poot_devices AND NOT POOT_FUZZ)
  add_executable(compile_topk_bench ${CMAKE_CURRENT_LIST_DIR}/topk_bench.c
                                    ${CMAKE_CURRENT_LIST_DIR}/plan_util.c)
  target_include_directories(compile_topk_bench PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(compile_topk_bench PRIVATE poot_compile poot_eval poot_devices poot_exec m)
endif()
# cumsum over long rows (templates/scan.c): integers bit for bit, floats
# within the reassociation bound, on the interpreter and a Vulkan device.
if(TARGET poot_compile AND TARGET poot_exec AND TARGET poot_devices)
  poot_add_test(compile_topk_cumsum
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/topk_cumsum_test.c ${CMAKE_CURRENT_LIST_DIR}/plan_util.c
    LIBS poot_compile poot_eval poot_devices poot_exec m)
  poot_vulkan_leak_check(compile_topk_cumsum)
endif()
