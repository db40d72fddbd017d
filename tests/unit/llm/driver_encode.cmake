# The rest of the driver API (src/llm/driver/driver_encode.c) and the
# input_embeds step option (src/llm/models/trace.c): every family's rows on
# poot_eval; encode, prepare_encode and generate_with_inputs on the
# interpreter and on Vulkan (each SKIPs when its device is absent).
poot_add_test(llm_driver_encode_trace_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/driver_encode_trace_test.c
  LIBS poot_llm m)
