# KIR: the interpreter over the test-kernel corpus, verifier, printer, hash.
add_library(poot_kir_corpus STATIC ${CMAKE_CURRENT_LIST_DIR}/corpus.c
                                   ${CMAKE_CURRENT_LIST_DIR}/corpus_ops.c
                                   ${CMAKE_CURRENT_LIST_DIR}/corpus_mma.c)
target_include_directories(poot_kir_corpus PUBLIC ${CMAKE_SOURCE_DIR}/include
                                                  ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(poot_kir_corpus PUBLIC poot_kir m)

poot_add_test(kir_interp_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/interp_test.c
              LIBS poot_kir_corpus poot_kir m)
poot_add_test(kir_ir_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/interp_ir_test.c
              LIBS poot_kir_corpus poot_devices poot_kir m)
