# Tier 3 on a device: every family's reference model and the demo model give
# the oracle's greedy ids on Vulkan (`poot verify greedy --device vulkan`;
# flips only inside the margin rule). Skips without a Vulkan device.
poot_add_script_test(llm_verify_device_vulkan
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_device.py --device vulkan
  LABELS ref TIMEOUT 600)
# The same on wgpu (wgpu-native over lavapipe in CI; the library from PyPI's
# wgpu wheel, poot_wgpu_test). Skips without the library or an adapter.
poot_add_script_test(llm_verify_device_wgpu
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_device.py --device wgpu
  LABELS ref TIMEOUT 900)
poot_wgpu_test(llm_verify_device_wgpu)
