# End to end: a model file through poot_model_open (config, weight map,
# tokenizer, template), then one prefill and one decode step on the oracle.
# fuzz_model_gguf takes a GGUF file; fuzz_model_folder a packed folder
# (safetensors + config.json + tokenizer.json, or a llama2.c checkpoint);
# model_open.c documents the container. Seeds: tests/fuzz/gen_model_seeds.py.
poot_add_fuzzer(fuzz_model_gguf SOURCES ${CMAKE_CURRENT_LIST_DIR}/model_open.c
  LIBS poot_llm CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/model_gguf SECONDS 15)
poot_add_fuzzer(fuzz_model_folder SOURCES ${CMAKE_CURRENT_LIST_DIR}/model_open.c
  LIBS poot_llm CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/model_folder SECONDS 15)
if(TARGET fuzz_model_folder)
  target_compile_definitions(fuzz_model_folder PRIVATE POOT_FUZZ_MODEL_FOLDER)
endif()
