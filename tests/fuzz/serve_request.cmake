# The server's request parser (src/serve/request.c; docs/serve.md).
poot_add_fuzzer(serve_request_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/serve_request.c
  LIBS poot_serve poot_base CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/serve_request SECONDS 10)
if(TARGET serve_request_fuzz)
  target_include_directories(serve_request_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/src/serve)
endif()
