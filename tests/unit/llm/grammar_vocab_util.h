/* grammar_vocab_util.h — a tokenizer's vocabulary as the grammar mask sees it,
 * for the mask benchmarks (grammar_bench_test, json_schema_mask_bench_test):
 * each token's bytes, the mask's vocabulary over them, and the check of a mask
 * against accepting each token on a clone of the matcher. */
#ifndef POOT_TESTS_GRAMMAR_VOCAB_UTIL_H
#define POOT_TESTS_GRAMMAR_VOCAB_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "poot/llm/grammar.h"
#include "poot/llm/tokenizer.h"

typedef struct pt_grammar_vocab {
  poot_tokenizer *tok;
  poot_grammar_vocab *vocab;
  char **texts; /* token i's bytes (lens[i] of them) */
  size_t *lens;
  int32_t n;
} pt_grammar_vocab;

/* Opens the tokenizer at dir and builds the mask's vocabulary over its tokens
 * (the end-of-generation ids marked); prints the trie's build time. */
void pt_grammar_vocab_load(pt_grammar_vocab *v, const char *dir);
void pt_grammar_vocab_free(pt_grammar_vocab *v);

/* Fails the test unless mask (at matcher m's state) equals accepting each
 * token on a clone of m (an empty token: an end-of-generation id where m can
 * end). `what` and `step` name the place in the message. */
void pt_grammar_check_mask(const pt_grammar_vocab *v, const poot_grammar_matcher *m,
                           const uint32_t *mask, const char *what, size_t step);

#endif
