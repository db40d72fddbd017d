# The vision tower (src/llm/vision, docs/vision.md): decoding, preprocessing
# against Pillow and the committed transformers pixels, the tower and the
# projector on poot_eval against an independent numpy implementation and
# transformers' rows, on every present device against poot_eval, and greedy
# captions (oracle and `poot generate --image` on each device) against the
# committed transformers ids. Each part SKIPs when its data or device is
# absent.
if(NOT POOT_FUZZ)
  add_executable(vision_probe ${CMAKE_CURRENT_LIST_DIR}/vision_probe.c)
  target_include_directories(vision_probe PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(vision_probe PRIVATE poot_llm poot_devices poot_eval)
  poot_add_script_test(llm_vision
    COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/vision_check.py $<TARGET_FILE:vision_probe>
    TIMEOUT 900)
  poot_wgpu_test(llm_vision)
  # serve_vision writes the same models into the build tree when they are missing.
  set_tests_properties(llm_vision PROPERTIES RESOURCE_LOCK poot_vision_models)
endif()
# The parts that need no model (decoding, Pillow's resize, the processor
# configs, the prompt expansion), also under the sanitizers.
poot_add_test(llm_vision_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/vision_test.c LIBS poot_llm)
