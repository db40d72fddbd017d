# JSON Schema → GBNF (src/llm/grammar/json_schema*.c): unit cases with hand-checked
# grammars and errors, the corpus of tests/data/json_schema/ (valid instances accepted,
# invalid refused), and a Python check that confirms the corpus labels and validates random
# walks of every corpus grammar with the jsonschema package (scripts/deps/pip-json-schema.txt).
poot_add_test(json_schema_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_schema_test.c
  LIBS poot_llm)
poot_add_test(json_schema_corpus_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_schema_corpus_test.c
  LIBS poot_llm)
poot_add_script_test(json_schema_check
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/json_schema_check.py
    $<TARGET_FILE:json_schema_corpus_test>)
# The mask at Llama-3's 128k vocabulary over every corpus instance (prints the figures of
# docs/json_schema.md; SKIP without POOT_DATA_DIR's hf-tokenizers).
# Labelled "ref": the main pass only (too slow under the sanitizers).
poot_add_test(json_schema_mask_bench_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_schema_mask_bench_test.c
    ${CMAKE_CURRENT_LIST_DIR}/grammar_vocab_util.c LIBS poot_llm TIMEOUT 900
  LABELS ref)
# Generations of the demo model (compact grammars, up to 160 tokens) under the corpus schemas
# on Vulkan (greedy, and every eighth schema sampled too), each validated with jsonschema
# (json_schema_generate.py); SKIP without a Vulkan device. The corpus is cut in eight parts
# (schema i in part i mod 8); CI runs part 0 (an eighth of the corpus, each schema greedy
# and sampled: 36 generations, at least 13 complete: the whole corpus took 340 s of CI's
# CPU, and CI's 30 minutes are spent), and the other seven run by hand (docs/json_schema.md). The runner is built, not run on its own.
if(TARGET poot_devices AND TARGET poot_exec AND NOT POOT_FUZZ)
  add_executable(llm_json_schema_generate ${CMAKE_CURRENT_LIST_DIR}/json_schema_generate.c)
  target_include_directories(llm_json_schema_generate PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                              ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(llm_json_schema_generate PRIVATE poot_llm poot_devices poot_testlib)
  foreach(shard 0)
    poot_add_script_test(llm_json_schema_generate_vulkan_${shard}
      COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/json_schema_generate.py
        $<TARGET_FILE:llm_json_schema_generate> vulkan ${shard} 8
      TIMEOUT 1200)
  endforeach()
endif()
