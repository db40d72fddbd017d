# The PTX device on an NVIDIA GPU through the device interface: a plain C
# program (no cmocka) so that scripts/gpu-check.sh can build it on a GPU
# machine that has only a compiler and the driver. Each mode is its own
# process, because a trap or a timed-out kernel poisons the CUDA context for
# the rest of the process. Every one SKIPs without libcuda.so.1 or a GPU.
if(NOT TARGET poot_device_ptx AND EXISTS ${CMAKE_SOURCE_DIR}/src/devices/ptx/CMakeLists.txt
   AND TARGET poot_exec)
  # The devices layer does not build the PTX folder (yet): build it here.
  add_subdirectory(${CMAKE_SOURCE_DIR}/src/devices/ptx ${CMAKE_BINARY_DIR}/src/devices/ptx)
endif()
if(TARGET poot_device_ptx AND NOT POOT_FUZZ)
  add_executable(ptx_device ${CMAKE_CURRENT_LIST_DIR}/ptx_test.c)
  target_include_directories(ptx_device PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                ${CMAKE_SOURCE_DIR}/src/devices/ptx)
  target_link_libraries(ptx_device PRIVATE poot_device_ptx poot_exec poot_kir m)
  foreach(mode basic fault timeout)
    if(mode STREQUAL "basic")
      set(name ptx_device)
    else()
      set(name ptx_device_${mode})
    endif()
    add_test(NAME ${name} COMMAND ptx_device ${mode})
    set_tests_properties(${name} PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120
      ENVIRONMENT "POOT_DATA_DIR=${POOT_DATA_DIR}")
  endforeach()
endif()

# The device's host-side logic against a fake libcuda.so.1 (no GPU needed;
# built only where the CUDA headers are, like the backend itself).
if(TARGET poot_device_ptx AND POOT_CUDA_INCLUDE_DIR AND POOT_BACKEND_PTX AND NOT POOT_FUZZ)
  add_library(ptx_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/ptx_fake_cuda.c)
  target_include_directories(ptx_fake_cuda SYSTEM PRIVATE ${POOT_CUDA_INCLUDE_DIR})
  set_target_properties(ptx_fake_cuda PROPERTIES PREFIX "lib" OUTPUT_NAME "cuda" SUFFIX ".so.1"
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fakecuda)
  add_executable(ptx_device_fake ${CMAKE_CURRENT_LIST_DIR}/ptx_fake_test.c)
  target_include_directories(ptx_device_fake PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                     ${CMAKE_SOURCE_DIR}/src/devices/ptx)
  target_link_libraries(ptx_device_fake PRIVATE poot_device_ptx poot_exec poot_kir ${CMAKE_DL_LIBS})
  add_dependencies(ptx_device_fake ptx_fake_cuda)
  add_test(NAME ptx_device_fake COMMAND ptx_device_fake)
  set_tests_properties(ptx_device_fake PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 60
    ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/fakecuda")
endif()

# The device conformance suite (tests/unit/exec) instantiated for PTX. It
# opens "ptx" through the registry and SKIPs while no PTX GPU can be opened.
if(TARGET poot_devices AND TARGET poot_compile_testutil AND TARGET poot_llm AND NOT POOT_FUZZ)
  poot_add_test(exec_conformance_ptx
    SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/exec/conformance_test.c
    LIBS poot_compile_testutil poot_devices poot_exec poot_eval poot_llm
    ARGS ptx
    TIMEOUT 600)
  if(TARGET exec_conformance_ptx)
    target_include_directories(exec_conformance_ptx PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/compile)
  endif()
endif()
