# KIR's PTX and AMDGPU renderers: rendering, determinism and golden checks,
# then acceptance by the targets' own tools (ptxas; llc-19 and ld.lld-19),
# which SKIP where the tool is absent. The math bounds test replays the
# renderers' composite math in C. The corpus library comes from kir.cmake.
set(poot_kir_render_util ${CMAKE_CURRENT_LIST_DIR}/render_ptx_amdgpu_util.c
                         ${CMAKE_CURRENT_LIST_DIR}/render_ptx_ops.c)
poot_add_test(kir_render_ptx
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_ptx_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_render_ptx_ptxas
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_ptx_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base
  ARGS ptxas TIMEOUT 900)
poot_add_test(kir_render_amdgpu
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_amdgpu_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_render_amdgpu_llc
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_amdgpu_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base
  ARGS llc TIMEOUT 900)
# Runs the PTX-rendered corpus on an NVIDIA GPU (SKIP without libcuda.so.1):
# the device scripts of the PTX backend run it; CI skips it.
add_executable(kir_render_ptx_cuda ${CMAKE_CURRENT_LIST_DIR}/render_ptx_cuda_test.c)
target_link_libraries(kir_render_ptx_cuda PRIVATE poot_kir_corpus poot_devices poot_kir poot_base m
                      ${CMAKE_DL_LIBS})
add_test(NAME kir_render_ptx_cuda COMMAND kir_render_ptx_cuda)
set_tests_properties(kir_render_ptx_cuda PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
poot_add_test(kir_render_math_bounds
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/render_ptx_math_test.c
  LIBS poot_base m)
if(TARGET kir_render_math_bounds)
  target_include_directories(kir_render_math_bounds PRIVATE ${CMAKE_SOURCE_DIR}/src/kir)
endif()
# Matrix fragments and asynchronous copies: exact on the interpreter, refused
# where the target lacks them, and the PTX accepted by ptxas (SKIP without).
poot_add_test(kir_mma
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mma_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_mma_ptxas
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mma_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base
  ARGS ptxas)
# Shared memory past PTX's 48 KiB of static .shared: the 64 KiB kernel's
# values on the interpreter, its window's layout, the verifier's opt-in
# limit, the .extern window against the static arrays, and both accepted by
# ptxas (SKIP without).
poot_add_test(kir_big_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/big_shared_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base)
poot_add_test(kir_big_shared_ptxas
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/big_shared_test.c ${poot_kir_render_util}
  LIBS poot_kir_corpus poot_devices poot_kir poot_base
  ARGS ptxas)
