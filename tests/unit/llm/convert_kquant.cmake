# `poot convert --type q4_k_m` end to end: the mixture's types, and greedy ids
# of the converted files on the oracle and on Vulkan (lavapipe in CI; SKIP
# without it).
if(TARGET poot_devices AND TARGET poot_exec AND TARGET poot_llm)
  get_target_property(poot_kquant_devs_defs poot_devices INTERFACE_COMPILE_DEFINITIONS)
  if(poot_kquant_devs_defs MATCHES "POOT_HAVE_VULKAN")
    poot_add_test(llm_convert_kquant_vulkan
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/convert_kquant_test.c
      LIBS poot_llm poot_devices
      ARGS vulkan
      TIMEOUT 120)
    poot_vulkan_leak_check(llm_convert_kquant_vulkan)
  endif()
endif()
