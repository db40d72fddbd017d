/* libFuzzer target for the mask's caches: one option byte, GBNF text, a NUL, an input. The
 * option byte picks tight stack bounds (so that the context keys meet max_stacks and
 * max_depth); at every byte of the input the masks of a cold matcher and a prepared one
 * both equal accepting each token on a clone, over a vocabulary of tokens that cross from
 * strings, numbers and UTF-8 characters into what follows them. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/grammar.h"

static const char *const TOKS[] = {
    "a",      "ab",   "\"",   "{",    "}",        "[",   "]",  ",",     " ",
    "0",      "12",   "\xc3", "\xa9", "\xc3\xa9", "x",   "\n", "a\"",   "\",",
    "\":",    "\"}",  "\\",   "\\\"", "\\n",      "1.",  "1,", "e\xc3", "\xe2\x82\xac",
    "\xa9\"", "ab\"", "a b",  "\x80", "\xed\xa0", "\"a", ""};
#define N_TOKS ((int32_t)(sizeof TOKS / sizeof *TOKS))

static void check_mask(poot_grammar_matcher *m, poot_grammar_matcher *mp,
                       const poot_grammar_vocab *v) {
  uint32_t w[2] = {0, 0}, wp[2] = {0, 0};
  poot_status st = poot_grammar_matcher_fill_mask(m, v, w, 2);
  poot_status sp = poot_grammar_matcher_fill_mask(mp, v, wp, 2);
  if (st || sp) { /* only memory can fail here */
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) __builtin_trap();
    if (sp && poot_status_code_of(sp) != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(st);
    poot_status_free(sp);
    return;
  }
  if (w[0] != wp[0] || w[1] != wp[1]) __builtin_trap();
  for (int32_t t = 0; t < N_TOKS; t++) {
    bool want;
    if (t == N_TOKS - 1) {
      want = poot_grammar_matcher_can_end(m);
    } else {
      poot_grammar_matcher *c = NULL;
      if (poot_grammar_matcher_clone(m, &c)) return; /* the clone's start may pass the bounds */
      poot_status s2 = poot_grammar_matcher_accept(c, TOKS[t], strlen(TOKS[t]));
      want = s2 == NULL;
      poot_status_free(s2);
      poot_grammar_matcher_destroy(c);
    }
    if (want != (bool)((w[t >> 5] >> (t & 31)) & 1)) __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const uint32_t stacks[4] = {4, 16, 64, 256}, depths[4] = {4, 12, 40, 1024};
  poot_grammar_options o = poot_grammar_options_default();
  o.max_stacks = stacks[data[0] & 3];
  o.max_depth = depths[(data[0] >> 2) & 3];
  data++;
  size--;
  const uint8_t *nul = memchr(data, 0, size);
  size_t glen = nul ? (size_t)(nul - data) : size;
  const uint8_t *in = nul ? nul + 1 : data + size;
  size_t in_len = nul ? size - glen - 1 : 0;
  poot_grammar *g = NULL;
  poot_status st = poot_grammar_compile((const char *)data, glen, &o, &g);
  if (st) {
    poot_status_free(st);
    return 0;
  }
  size_t lens[N_TOKS];
  for (int32_t i = 0; i < N_TOKS; i++) lens[i] = strlen(TOKS[i]);
  int32_t eos = N_TOKS - 1;
  poot_grammar_vocab *v = NULL;
  poot_grammar_matcher *m = NULL, *mp = NULL;
  if (poot_grammar_vocab_create(TOKS, lens, N_TOKS, &eos, 1, &v)) __builtin_trap();
  poot_status a = poot_grammar_matcher_create(g, &m);
  poot_status b = a ? NULL : poot_grammar_matcher_create(g, &mp);
  poot_status c = a || b ? NULL : poot_grammar_matcher_prepare(mp, v);
  if (c && poot_status_code_of(c) != POOT_OUT_OF_MEMORY) __builtin_trap();
  if (!a && !b && !c) {
    for (size_t i = 0; i <= in_len; i++) {
      check_mask(m, mp, v);
      if (i == in_len) break;
      poot_status s1 = poot_grammar_matcher_accept(m, in + i, 1);
      poot_status s2 = poot_grammar_matcher_accept(mp, in + i, 1);
      bool ok = s1 == NULL;
      if (ok != (s2 == NULL)) __builtin_trap();
      poot_status_free(s1);
      poot_status_free(s2);
      if (!ok) break;
    }
  }
  poot_status_free(a);
  poot_status_free(b);
  poot_status_free(c);
  poot_grammar_matcher_destroy(m);
  poot_grammar_matcher_destroy(mp);
  poot_grammar_vocab_destroy(v);
  poot_grammar_destroy(g);
  return 0;
}
