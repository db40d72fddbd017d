# The wgpu device against the device interface (wgpu-native over lavapipe in
# CI; the library comes from PyPI's wgpu wheel through POOT_WGPU_LIBRARY,
# poot_wgpu_test in cmake/poot.cmake). Skips without the library or an
# adapter.
if(TARGET poot_devices)
  get_target_property(poot_devices_defs_wg poot_devices INTERFACE_COMPILE_DEFINITIONS)
  if(poot_devices_defs_wg MATCHES "POOT_HAVE_WGPU")
    poot_add_test(devices_wgpu
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/wgpu_device_test.c ${CMAKE_CURRENT_LIST_DIR}/vk_kernels.c
      LIBS poot_devices poot_exec poot_kir
      TIMEOUT 300)
    poot_wgpu_test(devices_wgpu)
    # Our declarations of the WebGPU C API against the header of the library
    # it is tested with, field by field (only where the wheel's headers are).
    if(POOT_WGPU_WHEEL_DIR AND EXISTS "${POOT_WGPU_WHEEL_DIR}/webgpu.h"
       AND EXISTS "${POOT_WGPU_WHEEL_DIR}/wgpu.h")
      poot_add_test(devices_wgpu_abi
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/wgpu_abi_test.c
        LIBS poot_base
        TIMEOUT 30)
      target_include_directories(devices_wgpu_abi PRIVATE ${CMAKE_SOURCE_DIR}/src/devices/wgpu)
      target_compile_definitions(devices_wgpu_abi PRIVATE
        "POOT_WGPU_HEADER_DIR=\"${POOT_WGPU_WHEEL_DIR}\"")
      # The vendor header, from its own folder, as a system header.
      target_include_directories(devices_wgpu_abi SYSTEM PRIVATE ${POOT_WGPU_WHEEL_DIR})
      target_link_libraries(devices_wgpu_abi PRIVATE ${CMAKE_DL_LIBS})
      poot_wgpu_test(devices_wgpu_abi)
    endif()
  endif()
endif()
# `poot devices`, `poot generate` and `poot bench` on wgpu; `poot devices`
# lists the wgpu adapter too.
poot_add_script_test(devices_wgpu_cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/wgpu_cli.sh)
poot_wgpu_test(devices_wgpu_cli)
poot_wgpu_test(devices_cli)
