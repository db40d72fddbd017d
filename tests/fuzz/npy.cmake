# The .npy reader of `poot eval` (tools/npy.h).
poot_add_fuzzer(fuzz_npy SOURCES ${CMAKE_CURRENT_LIST_DIR}/npy.c ${CMAKE_SOURCE_DIR}/tools/support_npy.c
  LIBS poot_base CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/npy SECONDS 10)
if(TARGET fuzz_npy)
  target_include_directories(fuzz_npy PRIVATE ${CMAKE_SOURCE_DIR}/tools)
endif()
