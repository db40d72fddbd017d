# KIR's GLSL (SPIR-V through glslang) and WGSL renderers, and the Vulkan
# harness that runs the GLSL-rendered corpus on a real device (lavapipe).
# The corpus library (poot_kir_corpus) comes from kir.cmake.
poot_add_test(kir_render_glsl
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_glsl_test.c ${CMAKE_CURRENT_LIST_DIR}/render_ptx_ops.c
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_render_wgsl
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_wgsl_test.c ${CMAKE_CURRENT_LIST_DIR}/render_ptx_ops.c
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_glsl_lavapipe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/vk_harness_test.c ${CMAKE_CURRENT_LIST_DIR}/vk_harness.c
  LIBS poot_kir_corpus poot_devices poot_kir poot_base ${CMAKE_DL_LIBS})
poot_vulkan_leak_check(kir_glsl_lavapipe)
# The WGSL renderings dispatched by PyPI's wgpu and compared like the above.
poot_add_test(kir_wgsl_wgpu
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_wgsl_run_test.c
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
