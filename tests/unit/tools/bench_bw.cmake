# poot bench's bandwidth probes (tools/support_bench_bw.c): the stream
# kernel on the KIR interpreter (every word read once, nothing out of range),
# then both probes and the fallback on Vulkan (SKIP without a device).
if(TARGET poot_devices AND NOT POOT_FUZZ)
  poot_add_test(tools_bench_bw
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_bw_test.c ${CMAKE_SOURCE_DIR}/tools/support_bench_bw.c
    LIBS poot_devices poot_exec poot_kir poot_base)
  target_include_directories(tools_bench_bw PRIVATE ${CMAKE_SOURCE_DIR}/tools)
  poot_vulkan_leak_check(tools_bench_bw)
endif()
