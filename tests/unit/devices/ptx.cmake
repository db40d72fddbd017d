# The PTX device on an NVIDIA GPU through the device interface. Each mode is
# its own process (a trap or a timed-out kernel poisons the CUDA context for
# the rest of the process). Every one SKIPs without libcuda.so.1 or a GPU.
if(NOT TARGET poot_device_ptx AND EXISTS ${CMAKE_SOURCE_DIR}/src/devices/ptx/CMakeLists.txt
   AND TARGET poot_exec)
  # The devices layer does not build the PTX folder (yet): build it here.
  add_subdirectory(${CMAKE_SOURCE_DIR}/src/devices/ptx ${CMAKE_BINARY_DIR}/src/devices/ptx)
endif()
if(TARGET poot_device_ptx)
  poot_add_test(ptx_device
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/ptx_test.c
    LIBS poot_device_ptx poot_exec poot_kir poot_base m
    TIMEOUT 120)
  if(TARGET ptx_device)
    target_include_directories(ptx_device PRIVATE ${CMAKE_SOURCE_DIR}/src/devices/ptx)
    foreach(mode fault timeout)
      add_test(NAME ptx_device_${mode} COMMAND ptx_device ${mode})
      set_tests_properties(ptx_device_${mode} PROPERTIES LABELS unit SKIP_RETURN_CODE 77
        TIMEOUT 60)
    endforeach()
  endif()
endif()
