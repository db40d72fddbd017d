# The server (src/serve/, docs/serve.md): the request parser's unit test, and
# `poot serve` end to end with the openai client on Vulkan (lavapipe in CI;
# SKIP without it).
poot_add_test(serve_request_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/request_test.c
  LIBS poot_serve)
if(TARGET serve_request_test)
  target_include_directories(serve_request_test PRIVATE ${CMAKE_SOURCE_DIR}/src/serve)
endif()
poot_add_script_test(serve_openai
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/serve_openai.py TIMEOUT 300)
