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
# /v1/embeddings and /v1/rerank on MiniLM and the random cross-encoder (the
# llm_encoders_setup fixture puts them in the build tree).
poot_add_script_test(serve_encoders
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/serve_encoders.py TIMEOUT 300)
set_tests_properties(serve_encoders PROPERTIES FIXTURES_REQUIRED poot_encoders)
# Images in chat completions on the seeded LLaVA test model.
poot_add_script_test(serve_vision
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/serve_vision.py TIMEOUT 300)
# The chat page in headless Chromium (selenium).
poot_add_script_test(serve_page
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/serve_page.py TIMEOUT 300)
# The batched engine (--max-seqs 4): concurrent requests equal one at a time,
# cancellation frees the sequence, unsupported fields refused.
poot_add_script_test(serve_batch
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/serve_batch.py TIMEOUT 300)
