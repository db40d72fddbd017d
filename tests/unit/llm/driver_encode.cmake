# The rest of the driver API (src/llm/driver/driver_encode.c) and the
# input_embeds step option (src/llm/models/trace.c): every family's rows on
# poot_eval; encode, prepare_encode and generate_with_inputs on Vulkan
# (lavapipe in CI) and PTX against poot_eval (each SKIPs when its device is
# absent).
poot_add_test(llm_driver_encode_trace_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_encode_trace_test.c
  LIBS poot_llm m)
if(TARGET poot_devices AND TARGET poot_exec AND TARGET poot_llm)
  get_target_property(poot_encode_devs_defs poot_devices INTERFACE_COMPILE_DEFINITIONS)
  if(poot_encode_devs_defs MATCHES "POOT_HAVE_VULKAN")
    poot_add_test(llm_driver_encode_vulkan
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_encode_test.c
      LIBS poot_llm poot_devices
      ARGS vulkan
      TIMEOUT 600)
    poot_vulkan_leak_check(llm_driver_encode_vulkan)
  endif()
endif()
# The same on a PTX GPU (SKIPs without one).
if(TARGET poot_devices AND TARGET poot_llm AND NOT POOT_FUZZ)
  poot_add_test(llm_driver_encode_ptx
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_encode_test.c
    LIBS poot_llm poot_devices
    ARGS ptx
    TIMEOUT 600)
endif()
