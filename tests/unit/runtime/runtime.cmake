# The runtime object (src/runtime): its errors, its stages and the one-call
# create; the device part SKIPs when no device is present.
if(TARGET poot_runtime)
  poot_add_test(runtime_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/runtime_test.c
    LIBS poot_runtime
    TIMEOUT 300)
  poot_vulkan_leak_check(runtime_test)
endif()
