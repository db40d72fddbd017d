/* libFuzzer target: GBNF text plus an input. The input is split at the first NUL byte:
 * grammar text before it, the bytes to match after it. Compiling never crashes; a
 * compiled grammar's matcher accepts the input byte by byte exactly as it accepts it whole,
 * and the mask over a small vocabulary agrees with accepting each token on a clone. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/grammar.h"

static const char *const TOKS[] = {"a", "ab", "\"",   "{",    "}",        "[", "]",  ",", " ",
                                   "0", "12", "\xc3", "\xa9", "\xc3\xa9", "x", "\n", ""};
#define N_TOKS ((int32_t)(sizeof TOKS / sizeof *TOKS))

static void check_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v) {
  uint32_t w = 0;
  poot_status st = poot_grammar_matcher_fill_mask(m, v, &w, 1);
  if (st) { /* only memory can fail here */
    if (poot_status_code_of(st) != POOT_OUT_OF_MEMORY) __builtin_trap();
    poot_status_free(st);
    return;
  }
  for (int32_t t = 0; t < N_TOKS; t++) {
    bool want;
    if (t == N_TOKS - 1) {
      want = poot_grammar_matcher_can_end(m);
    } else {
      poot_grammar_matcher *c = NULL;
      if (poot_grammar_matcher_clone(m, &c)) __builtin_trap();
      poot_status s2 = poot_grammar_matcher_accept(c, TOKS[t], strlen(TOKS[t]));
      /* A token past the bounds is refused by both. */
      want = s2 == NULL;
      poot_status_free(s2);
      poot_grammar_matcher_destroy(c);
    }
    if (want != (bool)((w >> t) & 1)) __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t glen = nul ? (size_t)(nul - data) : size;
  const uint8_t *in = nul ? nul + 1 : data + size;
  size_t in_len = nul ? size - glen - 1 : 0;
  poot_grammar_options o = poot_grammar_options_default();
  o.max_stacks = 64;
  o.max_depth = 128;
  poot_grammar *g = NULL;
  poot_status st = poot_grammar_compile((const char *)data, glen, &o, &g);
  if (st) {
    if (g || !poot_status_message(st)[0]) __builtin_trap();
    poot_status_free(st);
    return 0;
  }
  size_t lens[N_TOKS];
  for (int32_t i = 0; i < N_TOKS; i++) lens[i] = strlen(TOKS[i]);
  int32_t eos = N_TOKS - 1;
  poot_grammar_vocab *v = NULL;
  poot_grammar_matcher *whole = NULL, *bytes = NULL;
  if (poot_grammar_vocab_create(TOKS, lens, N_TOKS, &eos, 1, &v)) __builtin_trap();
  poot_status a = poot_grammar_matcher_create(g, &whole);
  poot_status b = poot_grammar_matcher_create(g, &bytes);
  if (!a && !b) {
    poot_status sw = poot_grammar_matcher_accept(whole, in, in_len);
    bool ok = true;
    for (size_t i = 0; i < in_len && ok; i++) {
      check_mask(bytes, v);
      poot_status s1 = poot_grammar_matcher_accept(bytes, in + i, 1);
      ok = s1 == NULL;
      poot_status_free(s1);
    }
    /* Refusals agree; past the bounds the whole-text call may stop first. */
    if (ok && sw && poot_status_code_of(sw) == POOT_INVALID_ARGUMENT) __builtin_trap();
    if (ok && !sw) {
      if (poot_grammar_matcher_can_end(whole) != poot_grammar_matcher_can_end(bytes))
        __builtin_trap();
      check_mask(bytes, v);
    }
    poot_status_free(sw);
  }
  poot_status_free(a);
  poot_status_free(b);
  poot_grammar_matcher_destroy(whole);
  poot_grammar_matcher_destroy(bytes);
  poot_grammar_vocab_destroy(v);
  poot_grammar_destroy(g);
  return 0;
}
