# Model file formats and the weight store (src/llm/format, src/llm/store).
poot_add_test(formats_gguf_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/formats_gguf_test.c
  LIBS poot_llm poot_base)
poot_add_test(formats_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/formats_test.c
  LIBS poot_llm poot_base)
# Reference checks against the Python gguf package (tests/ref/formats_convert.py).
set(poot_formats_ref ${CMAKE_CURRENT_LIST_DIR}/../../ref/formats_convert.py)
poot_add_script_test(formats_ref_llama2c COMMAND python3 ${poot_formats_ref} llama2c)
poot_add_script_test(formats_ref_safetensors COMMAND python3 ${poot_formats_ref} safetensors)
poot_add_script_test(formats_ref_gguf COMMAND python3 ${poot_formats_ref} gguf)
poot_add_script_test(formats_ref_tokenizers COMMAND python3 ${poot_formats_ref} tokenizers)
poot_add_script_test(formats_ref_cli COMMAND python3 ${poot_formats_ref} cli)
foreach(v bert-bge gpt-2 llama-bpe llama-spm phi-3 qwen2)
  poot_add_script_test(formats_ref_vocab_${v} COMMAND python3 ${poot_formats_ref} vocab ggml-vocab-${v}.gguf)
endforeach()
# Every family's conversion against llama.cpp's conventions (gguf-py).
poot_add_script_test(formats_ref_families
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../../ref/formats_families.py)
