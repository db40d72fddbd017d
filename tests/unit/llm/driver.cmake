# The generation driver on a device (src/llm/driver, tools/cmd_generate.c,
# tools/cmd_bench.c): tier 3 on Vulkan (lavapipe in CI), faults at the driver
# level, and the CLI round trips. Each SKIPs when no Vulkan device is present.
if(TARGET poot_devices AND TARGET poot_exec AND TARGET poot_llm)
  get_target_property(poot_driver_devs_defs poot_devices INTERFACE_COMPILE_DEFINITIONS)
  if(poot_driver_devs_defs MATCHES "POOT_HAVE_VULKAN")
    poot_add_test(llm_driver_vulkan
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_test.c
      LIBS poot_llm poot_devices
      ARGS vulkan
      TIMEOUT 300)
    poot_vulkan_leak_check(llm_driver_vulkan)
  endif()
endif()
poot_add_script_test(llm_driver_cli
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/driver_cli.py TIMEOUT 300)
# The sampling suffix's sm_90 plan at the Llama-3.2-1B vocabulary: dispatches
# per entry and states written in place (planning only, no device).
poot_add_test(llm_driver_suffix_plan
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_suffix_plan_test.c
  LIBS poot_llm poot_devices)
# The sampling suffix against the reference sampler (driver_sample_test.c: the
# demo model; driver_suffix_test.c: fixed logits, V = 5,000, and a χ² test), on
# Vulkan (lavapipe in CI) and on PTX where present; each SKIPs without its device.
if(TARGET poot_devices AND TARGET poot_exec AND TARGET poot_llm)
  foreach(dev vulkan ptx)
    poot_add_test(llm_driver_sample_${dev}
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_sample_test.c
      LIBS poot_llm poot_devices
      ARGS ${dev}
      TIMEOUT 600)
    poot_add_test(llm_driver_suffix_${dev}
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_suffix_test.c
      LIBS poot_llm poot_devices
      ARGS ${dev}
      TIMEOUT 600)
    poot_vulkan_leak_check(llm_driver_sample_${dev})
    poot_vulkan_leak_check(llm_driver_suffix_${dev})
  endforeach()
endif()
