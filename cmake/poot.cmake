# Helpers shared by every layer's CMakeLists.

# poot_add_layer(NAME SOURCES... DEPS...) — a static library for one layer.
function(poot_add_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT L_SOURCES)
    # A layer whose first files have not landed yet: an empty interface target
    # keeps the rest of the build configurable.
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(${name} INTERFACE ${L_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${L_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/include
                                     PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${L_DEPS} PRIVATE ${L_PRIVATE_DEPS})
endfunction()

# poot_add_test(NAME SOURCES... LIBS... [LABELS...] [ARGS...] [ENV...])
# A test exits 0 on pass, 77 when skipped (it prints SKIP and why), else fails.
# Every test carries the label "unit" unless LABELS says otherwise; the
# sanitizer run executes the "unit" label.
function(poot_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS;ENV" ${ARGN})
  if(POOT_FUZZ)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${T_LIBS} poot_testlib)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" SKIP_RETURN_CODE 77
    TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "POOT_DATA_DIR=${POOT_DATA_DIR};POOT_SOURCE_DIR=${CMAKE_SOURCE_DIR};POOT_BINARY_DIR=${CMAKE_BINARY_DIR};${T_ENV}")
endfunction()

# poot_vulkan_leak_check(NAME) — a test that drives the Vulkan loader and its
# drivers: under the sanitizers it checks leaks with lsan_vulkan.supp (scoped
# to the driver stack's own modules) and keeps dlclose'd libraries mapped so
# their frames can be named (tests/unit/devices/keep_loaded.c;
# docs/decisions/0002-lsan-vulkan-drivers.md). Every other test runs without
# suppressions.
function(poot_vulkan_leak_check name)
  if(POOT_FUZZ OR NOT TARGET ${name})
    return()
  endif()
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/unit/devices/lsan_vulkan.supp")
  if(POOT_SANITIZE)
    target_sources(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/devices/keep_loaded.c)
  endif()
endfunction()

# The wgpu tests need libwgpu_native.so. The library never asks Python where
# it is; the build does, once, at configure time: PyPI's `wgpu` wheel
# (installed by scripts/deps.sh) ships it with its headers. Empty when absent
# (the tests then look for the standard names and skip without it).
if(NOT DEFINED POOT_WGPU_WHEEL_DIR)
  execute_process(
    COMMAND python3 -c "import wgpu, os; print(os.path.join(os.path.dirname(wgpu.__file__), 'resources'))"
    OUTPUT_VARIABLE poot_wgpu_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE poot_wgpu_rc
    ERROR_QUIET)
  if(NOT poot_wgpu_rc EQUAL 0 OR NOT EXISTS "${poot_wgpu_dir}")
    set(poot_wgpu_dir "")
  endif()
  set(POOT_WGPU_WHEEL_DIR "${poot_wgpu_dir}" CACHE PATH
      "Folder of the wgpu wheel's libwgpu_native and webgpu.h (tests only)")
endif()
set(POOT_WGPU_TEST_LIBRARY "")
if(POOT_WGPU_WHEEL_DIR AND EXISTS "${POOT_WGPU_WHEEL_DIR}/libwgpu_native-release.so")
  set(POOT_WGPU_TEST_LIBRARY "${POOT_WGPU_WHEEL_DIR}/libwgpu_native-release.so")
endif()

# poot_wgpu_test(NAME) — a test that drives wgpu-native: it gets the wheel's
# library through POOT_WGPU_LIBRARY (unless the environment already names
# one), and under the sanitizers the Vulkan tests' leak treatment with
# wgpu-native's own module added (lsan_wgpu.supp).
function(poot_wgpu_test name)
  if(POOT_FUZZ OR NOT TEST ${name})
    return()
  endif()
  if(POOT_WGPU_TEST_LIBRARY AND NOT DEFINED ENV{POOT_WGPU_LIBRARY})
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
      "POOT_WGPU_LIBRARY=${POOT_WGPU_TEST_LIBRARY}")
  endif()
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/unit/devices/lsan_wgpu.supp")
  if(POOT_SANITIZE AND TARGET ${name})
    target_sources(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/devices/keep_loaded.c)
  endif()
endfunction()

# poot_add_script_test(NAME COMMAND... [LABELS...]) — a test run as a command
# (a Python reference script, a CLI round trip). Exit 77 means skipped.
# Script tests carry the label "ref" unless LABELS says otherwise: they run in
# the main test pass, not again under the sanitizers (CI time).
function(poot_add_script_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(POOT_FUZZ)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  if(NOT T_LABELS)
    set(T_LABELS ref)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" SKIP_RETURN_CODE 77
    TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "POOT_DATA_DIR=${POOT_DATA_DIR};POOT_SOURCE_DIR=${CMAKE_SOURCE_DIR};POOT_BINARY_DIR=${CMAKE_BINARY_DIR};POOT=$<TARGET_FILE:poot>;${T_ENV}")
endfunction()

# poot_add_fuzzer(NAME SOURCES... LIBS... CORPUS dir [SECONDS n])
# Built only with POOT_FUZZ; registered as a test labelled "fuzz" that runs
# libFuzzer over the corpus for a bounded time.
function(poot_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS;SECONDS" "SOURCES;LIBS" ${ARGN})
  if(NOT POOT_FUZZ)
    return()
  endif()
  if(NOT F_SECONDS)
    set(F_SECONDS 20)
  endif()
  add_executable(${name} ${F_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set(work ${CMAKE_BINARY_DIR}/fuzz-work/${name})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
      sh -c "rm -rf '${work}' && mkdir -p '${work}/corpus' && exec \"$0\" -max_total_time=${F_SECONDS} -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 -artifact_prefix='${work}/' '${work}/corpus'  '${F_CORPUS}'"
      $<TARGET_FILE:${name}>)
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()
