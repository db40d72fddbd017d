# The oracle runner and `poot verify greedy` (src/llm/verify, tools/cmd_verify.c).
poot_add_test(llm_verify_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/verify_test.c
  LIBS poot_llm poot_eval)
poot_add_script_test(llm_verify_stories
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_stories.py)
# Tier 3 against Hugging Face transformers: one test per reference model in
# tests/data/reference/ (the test skips when the references are absent).
file(GLOB poot_verify_hf_refs CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/../../data/reference/*.json)
if(poot_verify_hf_refs)
  foreach(ref ${poot_verify_hf_refs})
    get_filename_component(ref_name ${ref} NAME_WE)
    get_filename_component(ref_file ${ref} NAME)
    string(REGEX REPLACE "\\.json$" "" ref_model ${ref_file})
    # The safetensors route checks the families on the oracle; the GGUF route
    # also checks `poot convert` and the GGUF tokenizer.
    foreach(route safetensors gguf)
      poot_add_script_test(llm_verify_hf_${route}_${ref_model}
        COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_hf.py --only ${route} ${ref_model}
        TIMEOUT 1500)
    endforeach()
  endforeach()
else()
  poot_add_script_test(llm_verify_hf COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_hf.py)
endif()
# The GGUF route of Mistral (window), Gemma 2/3 and Phi-3 (longrope), written the
# way llama.cpp's converter writes them, against the safetensors route.
poot_add_script_test(llm_verify_gguf_families
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_gguf_families.py TIMEOUT 900)
# The bundled demo model against transformers (tests/data/demo/).
poot_add_script_test(llm_verify_demo COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_demo.py)
# Checkpoints written by transformers itself (tests/data/hf-checkpoints/, made by
# scripts/reference/hf_checkpoints.py): one test per model, route and device —
# the safetensors folder, `poot convert`'s GGUF and llama.cpp's GGUF, on the
# oracle, and the safetensors folder on Vulkan (skipped without a Vulkan
# device). Every route loads the same graph and weights (the oracle's runs of
# the three routes show it against transformers), so a device adds nothing on
# the other two but time (on lavapipe about 100 s each for the 152k-vocabulary
# models); POOT_TEST_FULL registers them too.
file(GLOB poot_hf_ckpts CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../../data/hf-checkpoints/*.json)
foreach(ref ${poot_hf_ckpts})
  get_filename_component(ref_file ${ref} NAME)
  string(REGEX REPLACE "\\.json$" "" ref_model ${ref_file})
  foreach(route safetensors gguf llama-cpp)
    set(devs eval)
    if(route STREQUAL "safetensors" OR POOT_TEST_FULL)
      list(APPEND devs vulkan)
    endif()
    foreach(dev ${devs})
      poot_add_script_test(llm_hf_ckpt_${ref_model}_${route}_${dev}
        COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/verify_hf_checkpoints.py --route ${route}
          --device ${dev} ${ref_model}
        TIMEOUT 900)
    endforeach()
  endforeach()
endforeach()
