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
poot_add_test(json_schema_mask_bench_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_schema_mask_bench_test.c LIBS poot_llm TIMEOUT 900)
