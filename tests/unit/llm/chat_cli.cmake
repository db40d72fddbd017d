# `poot chat` (tools/cmd_chat.c) and the sampling flags of `poot generate`
# (tools/support_sampling.c), driven through the binary on Vulkan (lavapipe in
# CI); each SKIPs when no Vulkan device is present.
poot_add_script_test(llm_chat_cli
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/chat_cli.py TIMEOUT 600)
poot_add_script_test(llm_generate_sampling_cli
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/driver_cli.py --sampling TIMEOUT 600)
