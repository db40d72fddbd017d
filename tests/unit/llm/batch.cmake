# The batched runner (src/llm/driver/batch*.c, docs/batching.md) on a device:
# tier 2 against poot_eval, batch invariance, prefix reuse and preemption end
# to end. Vulkan (lavapipe in CI), wgpu (wgpu-native over lavapipe) and PTX;
# each SKIPs without its device.
if(TARGET poot_devices AND TARGET poot_exec AND TARGET poot_llm AND TARGET poot_eval)
  poot_add_test(llm_batch_vulkan
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/batch_test.c
    LIBS poot_llm poot_eval poot_devices
    ARGS vulkan
    TIMEOUT 300)
  poot_vulkan_leak_check(llm_batch_vulkan)
  foreach(dev wgpu ptx)
    add_test(NAME llm_batch_${dev} COMMAND llm_batch_vulkan ${dev})
    set_tests_properties(llm_batch_${dev} PROPERTIES LABELS unit SKIP_RETURN_CODE 77
      TIMEOUT 300
      ENVIRONMENT "POOT_DATA_DIR=${POOT_DATA_DIR};POOT_SOURCE_DIR=${CMAKE_SOURCE_DIR};POOT_BINARY_DIR=${CMAKE_BINARY_DIR}")
  endforeach()
  poot_wgpu_test(llm_batch_wgpu)
endif()
# The runner's penalty window kept one id a step against the sorting
# reference it replaced, and the host time of both at 64 rows (printed).
poot_add_test(llm_pen_window_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pen_window_test.c
  LIBS poot_llm)
