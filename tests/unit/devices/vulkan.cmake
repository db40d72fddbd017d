# The Vulkan device against the device interface (lavapipe in CI). Leak
# checking under ASan ignores what the Vulkan loader and Mesa's drivers keep
# (lsan_vulkan.supp, through poot_vulkan_leak_check); every poot allocation is
# still checked.
if(TARGET poot_devices)
  poot_add_test(devices_vulkan
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/vulkan_device_test.c ${CMAKE_CURRENT_LIST_DIR}/vk_kernels.c
    LIBS poot_devices poot_exec poot_kir
    TIMEOUT 300)
  poot_vulkan_leak_check(devices_vulkan)
  poot_add_test(devices_vulkan_cache
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/vulkan_cache_test.c ${CMAKE_CURRENT_LIST_DIR}/vk_kernels.c
    LIBS poot_devices poot_exec poot_kir
    TIMEOUT 120)
  poot_vulkan_leak_check(devices_vulkan_cache)
endif()
poot_add_script_test(devices_cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/devices_cli.sh)
