# poot_sampling_filter against Hugging Face's logits processors on the committed
# vectors tests/data/sampling/hf_vectors.json (scripts/hf_sampling_vectors.py).
poot_add_test(llm_sampling_hf_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sampling_hf_test.c
  LIBS poot_llm m)
