# Tier 3 on a device: every family's reference model and the demo model give
# the oracle's greedy ids on Vulkan (`poot verify greedy --device vulkan`;
# flips only inside the margin rule). Skips without a Vulkan device.
poot_add_script_test(llm_verify_device_vulkan
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_device.py --device vulkan
  LABELS ref TIMEOUT 600)
