/* grammar_vocab_util.c — see grammar_vocab_util.h. */
#include "grammar_vocab_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "poot_test.h"

void pt_grammar_vocab_load(pt_grammar_vocab *v, const char *dir) {
  POOT_ASSERT_OK(poot_tokenizer_open_path(dir, &v->tok));
  v->n = poot_tokenizer_vocab_size(v->tok);
  v->texts = calloc((size_t)v->n, sizeof *v->texts);
  v->lens = calloc((size_t)v->n, sizeof *v->lens);
  int32_t *eog = calloc((size_t)v->n, sizeof *eog);
  assert_true(v->texts && v->lens && eog);
  size_t n_eog = 0;
  for (int32_t i = 0; i < v->n; i++) {
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_tokenizer_token_to_piece(v->tok, i, false, &sb));
    v->lens[i] = sb.len;
    v->texts[i] = poot_strbuf_take(&sb);
    if (poot_tokenizer_is_end_of_generation(v->tok, i)) eog[n_eog++] = i;
  }
  double t0 = poot_time_s();
  POOT_ASSERT_OK(poot_grammar_vocab_create((const char *const *)v->texts, v->lens, v->n, eog, n_eog,
                                           &v->vocab));
  printf("vocab: %d tokens, %zu end-of-generation, trie built in %.1f ms\n", v->n, n_eog,
         (poot_time_s() - t0) * 1e3);
  free(eog);
}

void pt_grammar_vocab_free(pt_grammar_vocab *v) {
  poot_grammar_vocab_destroy(v->vocab);
  for (int32_t i = 0; i < v->n; i++) poot_free(v->texts[i]);
  free(v->texts);
  free(v->lens);
  poot_tokenizer_destroy(v->tok);
}

/* A failed accept leaves the clone unchanged, so a fresh clone is needed only
 * after a token that was accepted. */
void pt_grammar_check_mask(const pt_grammar_vocab *v, const poot_grammar_matcher *m,
                           const uint32_t *mask, const char *what, size_t step) {
  poot_grammar_matcher *c = NULL;
  POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
  for (int32_t t = 0; t < v->n; t++) {
    bool got = (mask[t >> 5] >> (t & 31)) & 1, want;
    if (v->lens[t] == 0) {
      want = poot_tokenizer_is_end_of_generation(v->tok, t) && poot_grammar_matcher_can_end(m);
    } else {
      poot_status st = poot_grammar_matcher_accept(c, v->texts[t], v->lens[t]);
      want = st == NULL;
      poot_status_free(st);
      if (want) {
        poot_grammar_matcher_destroy(c);
        POOT_ASSERT_OK(poot_grammar_matcher_clone(m, &c));
      }
    }
    if (got != want)
      fail_msg("%s, step %zu, token %d: mask %d, accept %d", what, step, t, got, want);
  }
  poot_grammar_matcher_destroy(c);
}
