# The image decoders and the BICUBIC resize of the vision tower (src/llm/vision).
poot_add_fuzzer(fuzz_image SOURCES ${CMAKE_CURRENT_LIST_DIR}/image.c
  LIBS poot_llm CORPUS ${CMAKE_CURRENT_LIST_DIR}/corpus/image SECONDS 10)
