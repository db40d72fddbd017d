/* tokenizer.c — the tokenizer object: building, vocabulary queries, the
 * added-token splitter and the encode driver. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

/* ------------------------------------------------------------------ build */

poot_status poot__tok_new(poot_tokenizer_kind kind, int32_t n_tokens, poot_tokenizer **out_tok) {
  *out_tok = NULL;
  if (n_tokens <= 0) return poot_status_make(POOT_FORMAT, "tokenizer: the vocabulary is empty");
  poot_tokenizer *tok = poot_calloc(1, sizeof *tok);
  if (!tok) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  tok->kind = kind;
  poot_arena_init(&tok->arena, 1 << 20);
  tok->n_tokens = n_tokens;
  tok->tokens = poot_calloc((size_t)n_tokens, sizeof *tok->tokens);
  tok->match_ctx = pcre2_match_context_create(NULL);
  if (tok->match_ctx) {
    /* Pre-tokenizer patterns match short pieces; a pattern that needs more
     * than this is hostile, and the match fails instead of hanging. */
    pcre2_set_match_limit(tok->match_ctx, 10000000);
    pcre2_set_depth_limit(tok->match_ctx, 10000);
    pcre2_set_heap_limit(tok->match_ctx, 64 * 1024);
  }
  tok->bos = tok->eos = tok->unk = tok->sep = tok->pad = tok->eot = POOT_TOKEN_NONE;
  tok->wp_max_chars = 100;
  tok->fuse_unk = true;
  tok->strip_prefix_space = false;
  for (int i = 0; i < 256; i++) tok->byte_tokens[i] = POOT_TOKEN_NONE;
  if (!tok->tokens || !tok->match_ctx) {
    poot_tokenizer_destroy(tok);
    return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory for %d tokens",
                            (int)n_tokens);
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
}

poot_status poot__tok_set(poot_tokenizer *tok, int32_t id, const char *text, size_t len,
                          float score, uint32_t attr) {
  if (id < 0 || id >= tok->n_tokens)
    return poot_status_make(POOT_FORMAT, "tokenizer: token id %d is outside the vocabulary of %d",
                            (int)id, (int)tok->n_tokens);
  if (len > UINT32_MAX / 2)
    return poot_status_make(POOT_FORMAT, "tokenizer: token %d is too long", (int)id);
  if (!poot__tok_score_ok(score))
    return poot_status_make(POOT_FORMAT,
                            "tokenizer: token %d has the score %g; a score must be finite and "
                            "within ±%g (scores are log-probabilities or merge priorities)",
                            (int)id, (double)score, POOT__TOK_SCORE_LIMIT);
  char *copy = poot_arena_strndup(&tok->arena, text, len);
  if (!copy) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  tok->tokens[id] =
      (poot__tok_entry){copy, (uint32_t)len, score, attr ? attr : POOT_TOKEN_ATTR_NORMAL};
  return POOT_OK_STATUS;
}

static int cmp_special(const void *pa, const void *pb, void *ctx) {
  const poot_tokenizer *tok = ctx;
  const poot__special *a = pa, *b = pb;
  const poot__tok_entry *ta = &tok->tokens[a->id], *tb = &tok->tokens[b->id];
  uint8_t fa = (uint8_t)ta->text[0], fb = (uint8_t)tb->text[0];
  if (fa != fb) return fa < fb ? -1 : 1;
  if (ta->len != tb->len) return ta->len > tb->len ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static size_t pow2_at_least(size_t n) {
  size_t c = 16;
  while (c < n) c *= 2;
  return c;
}

poot_status poot__tok_finish(poot_tokenizer *tok) {
  poot_free(tok->text_slots);
  tok->text_cap = pow2_at_least((size_t)tok->n_tokens * 2);
  tok->text_slots = poot_calloc(tok->text_cap, sizeof *tok->text_slots);
  if (!tok->text_slots) {
    tok->text_cap = 0;
    return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
  size_t n_special = 0;
  for (int32_t id = 0; id < tok->n_tokens; id++) {
    poot__tok_entry *e = &tok->tokens[id];
    if (!e->text) { /* a hole in the vocabulary: keep it unmatchable */
      e->text = "";
      e->len = 0;
      e->attr = POOT_TOKEN_ATTR_UNUSED;
      continue;
    }
    if (e->len > tok->max_token_len) tok->max_token_len = e->len;
    /* A text held by several ids maps to the last, as llama.cpp's map does. */
    size_t mask = tok->text_cap - 1, i = poot__tok_hash(e->text, e->len) & mask;
    while (tok->text_slots[i]) {
      const poot__tok_entry *o = &tok->tokens[tok->text_slots[i] - 1];
      if (o->len == e->len && memcmp(o->text, e->text, e->len) == 0) break;
      i = (i + 1) & mask;
    }
    tok->text_slots[i] = (uint32_t)id + 1;
    if (tok->kind != POOT_TOKENIZER_LLAMA2C && e->len > 0 &&
        (e->attr &
         (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_USER_DEFINED | POOT_TOKEN_ATTR_UNKNOWN)))
      n_special++;
  }
  /* Byte tokens. */
  for (int b = 0; b < 256; b++) {
    char buf[8];
    poot_token id = POOT_TOKEN_NONE;
    if (tok->byte_level) {
      size_t l = poot__utf8_encode(poot__byte_to_char((uint8_t)b), buf);
      id = poot__tok_lookup(tok, buf, l);
    } else {
      snprintf(buf, sizeof buf, "<0x%02X>", b);
      id = poot__tok_lookup(tok, buf, 6);
      if (id == POOT_TOKEN_NONE && tok->kind != POOT_TOKENIZER_LLAMA2C) {
        buf[0] = (char)b;
        id = poot__tok_lookup(tok, buf, 1);
      }
    }
    tok->byte_tokens[b] = id;
  }
  /* Added tokens, grouped by first byte, longest first. */
  poot_free(tok->specials);
  tok->specials = NULL;
  tok->n_specials = 0;
  if (n_special) {
    tok->specials = poot_malloc(n_special * sizeof *tok->specials);
    if (!tok->specials) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    for (int32_t id = 0; id < tok->n_tokens; id++) {
      const poot__tok_entry *e = &tok->tokens[id];
      if (tok->kind != POOT_TOKENIZER_LLAMA2C && e->len > 0 &&
          (e->attr &
           (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_USER_DEFINED | POOT_TOKEN_ATTR_UNKNOWN)))
        tok->specials[tok->n_specials++] = (poot__special){
            id, (e->attr & (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_UNKNOWN)) != 0};
    }
    qsort_r(tok->specials, tok->n_specials, sizeof *tok->specials, cmp_special, tok);
  }
  size_t k = 0;
  for (int b = 0; b < 256; b++) {
    tok->special_first[b] = (uint32_t)k;
    while (k < tok->n_specials && (uint8_t)tok->tokens[tok->specials[k].id].text[0] == b) k++;
  }
  tok->special_first[256] = (uint32_t)k;
  /* Defaults (llama.cpp's fixed ids) that a small vocabulary does not reach. */
  poot_token *ids[] = {&tok->bos, &tok->eos, &tok->unk, &tok->sep, &tok->pad, &tok->eot};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    if (*ids[i] >= tok->n_tokens) *ids[i] = POOT_TOKEN_NONE;
  /* Word-by-word merging is exact when no token holds the marker after
   * another character (see chunk_marker). */
  tok->chunk_marker = NULL;
  tok->chunk_marker_len = 0;
  const char *marker = tok->kind == POOT_TOKENIZER_LLAMA2C ? " " : "\xe2\x96\x81";
  size_t ml = strlen(marker);
  bool chunkable = tok->kind == POOT_TOKENIZER_SPM || tok->kind == POOT_TOKENIZER_LLAMA2C ||
                   (tok->kind == POOT_TOKENIZER_BPE && !tok->byte_level);
  for (int32_t id = 0; chunkable && id < tok->n_tokens; id++) {
    const poot__tok_entry *e = &tok->tokens[id];
    for (size_t i = 1; i + ml <= e->len; i++) {
      if (memcmp(e->text + i, marker, ml) != 0) continue;
      if (i < ml || memcmp(e->text + i - ml, marker, ml) != 0) {
        chunkable = false;
        break;
      }
    }
  }
  if (chunkable) {
    tok->chunk_marker = marker;
    tok->chunk_marker_len = ml;
  }
  /* The end-of-turn token, when the metadata names none (llama.cpp's list). */
  static const char *const k_eot[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                      "<EOT>"};
  for (size_t i = 0; tok->eot == POOT_TOKEN_NONE && i < sizeof k_eot / sizeof k_eot[0]; i++) {
    poot_token id = poot__tok_lookup(tok, k_eot[i], strlen(k_eot[i]));
    if (id != POOT_TOKEN_NONE && (tok->tokens[id].attr & POOT_TOKEN_ATTR_CONTROL)) tok->eot = id;
  }
  return POOT_OK_STATUS;
}

poot_status poot__tok_add_merge(poot_tokenizer *tok, const char *a, size_t a_len, const char *b,
                                size_t b_len, uint32_t rank) {
  poot_token ia = poot__tok_lookup(tok, a, a_len), ib = poot__tok_lookup(tok, b, b_len);
  if (ia == POOT_TOKEN_NONE || ib == POOT_TOKEN_NONE) return POOT_OK_STATUS;
  char stackbuf[256];
  char *buf = stackbuf;
  size_t n = a_len + b_len;
  if (n > sizeof stackbuf) {
    buf = poot_malloc(n);
    if (!buf) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
  memcpy(buf, a, a_len);
  memcpy(buf + a_len, b, b_len);
  poot_token im = poot__tok_lookup(tok, buf, n);
  if (buf != stackbuf) poot_free(buf);
  if (im == POOT_TOKEN_NONE) return POOT_OK_STATUS;
  uint64_t old;
  if (poot__tok_merge_get(tok, ia, ib, &old)) return POOT_OK_STATUS; /* the first rank wins */
  if ((tok->merge_len + 1) * 2 > tok->merge_cap) {
    size_t cap = pow2_at_least((tok->merge_len + 1) * 4);
    poot__merge_slot *fresh = poot_malloc(cap * sizeof *fresh);
    if (!fresh) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory for merges");
    for (size_t i = 0; i < cap; i++) fresh[i].key = UINT64_MAX;
    for (size_t j = 0; j < tok->merge_cap; j++) {
      poot__merge_slot sl = tok->merge_slots[j];
      if (sl.key == UINT64_MAX) continue;
      size_t i = (size_t)((sl.key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
      while (fresh[i].key != UINT64_MAX) i = (i + 1) & (cap - 1);
      fresh[i] = sl;
    }
    poot_free(tok->merge_slots);
    tok->merge_slots = fresh;
    tok->merge_cap = cap;
  }
  uint64_t key = (uint64_t)(uint32_t)ia << 32 | (uint32_t)ib;
  size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (tok->merge_cap - 1);
  while (tok->merge_slots[i].key != UINT64_MAX) i = (i + 1) & (tok->merge_cap - 1);
  tok->merge_slots[i] = (poot__merge_slot){key, ((uint64_t)rank << 32) | (uint32_t)im};
  tok->merge_len++;
  return POOT_OK_STATUS;
}

poot_status poot__tok_compile_regex(const char *pattern, size_t len, pcre2_code **out_re) {
  *out_re = NULL;
  int err = 0;
  PCRE2_SIZE erroff = 0;
  pcre2_code *re =
      pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err,
                    &erroff, NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return poot_status_make(POOT_UNSUPPORTED,
                            "tokenizer: the pre-tokenizer regex '%.*s' does not compile at offset "
                            "%zu: %s",
                            (int)(len > 200 ? 200 : len), pattern, (size_t)erroff, (char *)msg);
  }
  (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* the interpreter is the fallback */
  *out_re = re;
  return POOT_OK_STATUS;
}

poot__norm_op *poot__tok_add_norm(poot_tokenizer *tok, poot__norm_type type) {
  if (tok->n_norm >= POOT__MAX_OPS) return NULL;
  poot__norm_op *op = &tok->norm[tok->n_norm++];
  memset(op, 0, sizeof *op);
  op->type = type;
  return op;
}

poot__pre_op *poot__tok_add_pre(poot_tokenizer *tok, poot__pre_type type) {
  if (tok->n_pre >= POOT__MAX_OPS) return NULL;
  poot__pre_op *op = &tok->pre[tok->n_pre++];
  memset(op, 0, sizeof *op);
  op->type = type;
  return op;
}

poot_status poot__tok_add_split(poot_tokenizer *tok, const char *pattern) {
  poot__pre_op *op = poot__tok_add_pre(tok, POOT__PRE_SPLIT);
  if (!op) return poot_status_make(POOT_UNSUPPORTED, "tokenizer: too many pre-tokenizer steps");
  return poot__tok_compile_regex(pattern, strlen(pattern), &op->re);
}

void poot_tokenizer_destroy(poot_tokenizer *tok) {
  if (!tok) return;
  for (size_t i = 0; i < tok->n_pre; i++) pcre2_code_free(tok->pre[i].re);
  pcre2_match_context_free(tok->match_ctx);
  poot_free(tok->text_slots);
  poot_free(tok->merge_slots);
  poot_free(tok->specials);
  poot_free(tok->tokens);
  poot_arena_deinit(&tok->arena);
  poot_free(tok);
}

/* -------------------------------------------------------------- vocabulary */

poot_tokenizer_kind poot_tokenizer_get_kind(const poot_tokenizer *tok) {
  return tok->kind;
}

const char *poot_tokenizer_kind_name(poot_tokenizer_kind kind) {
  switch (kind) {
    case POOT_TOKENIZER_SPM:
      return "spm";
    case POOT_TOKENIZER_BPE:
      return "bpe";
    case POOT_TOKENIZER_UNIGRAM:
      return "unigram";
    case POOT_TOKENIZER_WORDPIECE:
      return "wordpiece";
    case POOT_TOKENIZER_LLAMA2C:
      return "llama2c";
    default:
      return "?";
  }
}

int32_t poot_tokenizer_vocab_size(const poot_tokenizer *tok) {
  return tok->n_tokens;
}

const char *poot_tokenizer_token_text(const poot_tokenizer *tok, poot_token id, size_t *out_len) {
  if (out_len) *out_len = 0;
  if (id < 0 || id >= tok->n_tokens) return NULL;
  if (out_len) *out_len = tok->tokens[id].len;
  return tok->tokens[id].text;
}

float poot_tokenizer_token_score(const poot_tokenizer *tok, poot_token id) {
  return (id < 0 || id >= tok->n_tokens) ? 0.0f : tok->tokens[id].score;
}

uint32_t poot_tokenizer_token_attr(const poot_tokenizer *tok, poot_token id) {
  return (id < 0 || id >= tok->n_tokens) ? 0u : tok->tokens[id].attr;
}

poot_token poot_tokenizer_find(const poot_tokenizer *tok, const char *text, size_t len) {
  return poot__tok_lookup(tok, text, len);
}

poot_tokenizer_specials poot_tokenizer_get_specials(const poot_tokenizer *tok) {
  poot_tokenizer_specials s = {tok->bos, tok->eos,     tok->unk,     tok->sep,    tok->pad,
                               tok->eot, tok->add_bos, tok->add_eos, tok->add_sep};
  return s;
}

bool poot_tokenizer_is_end_of_generation(const poot_tokenizer *tok, poot_token id) {
  if (!tok || id < 0 || id >= tok->n_tokens) return false;
  if (id == tok->eos || id == tok->eot) return true;
  const poot__tok_entry *e = &tok->tokens[id];
  if (!(e->attr & POOT_TOKEN_ATTR_CONTROL)) return false;
  static const char *const k_eog[] = {
      "<|eot_id|>",
      "<|im_end|>",
      "<|end|>",
      "<end_of_turn>",
      "<|endoftext|>",
      "<|eom_id|>",
      "<EOT>",
      "_<EOT>",
      "<|end_of_text|>",
      "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>",
      "<end_of_utterance>"};
  for (size_t i = 0; i < sizeof k_eog / sizeof k_eog[0]; i++)
    if (strlen(k_eog[i]) == e->len && memcmp(k_eog[i], e->text, e->len) == 0) return true;
  return false;
}

/* ------------------------------------------------------------------ encode */

size_t poot__tok_chunk_len(const poot_tokenizer *tok, const char *s, size_t n) {
  const char *m = tok->chunk_marker;
  size_t ml = tok->chunk_marker_len;
  if (!m) return n;
  for (size_t i = 1; i + ml <= n; i++) {
    if (s[i] != m[0] || memcmp(s + i, m, ml) != 0) continue;
    if (i < ml || memcmp(s + i - ml, m, ml) != 0) return i;
  }
  return n;
}

/* A cache of the ids of words already merged during one encode call: text
 * repeats its words, and a hit skips the merge entirely. It lives only as
 * long as the call, so encoding stays free of shared mutable state. */
enum { WC_MAX_ENTRIES = 1 << 16, WC_MAX_KEY = 64 };

typedef struct wc_entry {
  uint64_t hash;
  uint32_t key_off, key_len, ids_off, ids_len;
} wc_entry;

typedef struct word_cache {
  uint32_t *slots; /* entry index + 1; 0 is empty */
  size_t cap;
  poot_vec entries; /* wc_entry */
  poot_strbuf keys;
  poot_vec ids; /* poot_token */
} word_cache;

static void wc_init(word_cache *wc) {
  memset(wc, 0, sizeof *wc);
  poot_vec_init(&wc->entries, sizeof(wc_entry));
  poot_strbuf_init(&wc->keys);
  poot_vec_init(&wc->ids, sizeof(poot_token));
}

static void wc_deinit(word_cache *wc) {
  poot_free(wc->slots);
  poot_vec_deinit(&wc->entries);
  poot_strbuf_deinit(&wc->keys);
  poot_vec_deinit(&wc->ids);
}

static const wc_entry *wc_find(const word_cache *wc, const char *s, size_t n, uint64_t h) {
  if (!wc->cap) return NULL;
  for (size_t i = h & (wc->cap - 1);; i = (i + 1) & (wc->cap - 1)) {
    uint32_t v = wc->slots[i];
    if (!v) return NULL;
    const wc_entry *e = &POOT_VEC_AT(&wc->entries, wc_entry, v - 1);
    if (e->hash == h && e->key_len == n && memcmp(wc->keys.data + e->key_off, s, n) == 0) return e;
  }
}

/* Remembers s → ids; silently does nothing when full or out of memory. */
static void wc_add(word_cache *wc, const char *s, size_t n, uint64_t h, const poot_token *ids,
                   size_t count) {
  if (wc->entries.len >= WC_MAX_ENTRIES) return;
  if ((wc->entries.len + 1) * 2 > wc->cap) {
    size_t cap = wc->cap ? wc->cap * 2 : 1024;
    uint32_t *fresh = poot_calloc(cap, sizeof *fresh);
    if (!fresh) return;
    for (size_t k = 0; k < wc->entries.len; k++) {
      size_t i = POOT_VEC_AT(&wc->entries, wc_entry, k).hash & (cap - 1);
      while (fresh[i]) i = (i + 1) & (cap - 1);
      fresh[i] = (uint32_t)k + 1;
    }
    poot_free(wc->slots);
    wc->slots = fresh;
    wc->cap = cap;
  }
  wc_entry e = {h, (uint32_t)wc->keys.len, (uint32_t)n, (uint32_t)wc->ids.len, (uint32_t)count};
  poot_strbuf_append(&wc->keys, s, n);
  if (wc->keys.failed) return;
  for (size_t k = 0; k < count; k++)
    if (poot_vec_push(&wc->ids, &ids[k])) {
      poot_status_free(poot_vec_resize(&wc->ids, e.ids_off));
      return;
    }
  poot_status st = poot_vec_push(&wc->entries, &e);
  if (st) {
    poot_status_free(st);
    return;
  }
  size_t i = h & (wc->cap - 1);
  while (wc->slots[i]) i = (i + 1) & (wc->cap - 1);
  wc->slots[i] = (uint32_t)wc->entries.len;
}

typedef struct encode_ctx {
  const poot_tokenizer *tok;
  poot_strbuf norm, scratch;
  poot_vec pieces; /* poot__piece */
  poot_vec *out;   /* poot_token */
  word_cache cache;
} encode_ctx;

static poot_status push_id(poot_vec *out, poot_token id) {
  return poot_vec_push(out, &id);
}

/* The model on one word (BPE, or SentencePiece on a word-sized chunk),
 * through the word cache. */
static poot_status run_model(encode_ctx *c, const char *s, size_t n) {
  return c->tok->kind == POOT_TOKENIZER_SPM ? poot__model_spm(c->tok, s, n, c->out)
                                            : poot__model_bpe(c->tok, s, n, c->out);
}

static poot_status cached_word(encode_ctx *c, const char *s, size_t n) {
  if (n > WC_MAX_KEY) return run_model(c, s, n);
  uint64_t h = poot__tok_hash(s, n);
  const wc_entry *e = wc_find(&c->cache, s, n, h);
  if (e) {
    for (uint32_t k = 0; k < e->ids_len; k++)
      POOT_TRY(push_id(c->out, POOT_VEC_AT(&c->cache.ids, poot_token, e->ids_off + k)));
    return POOT_OK_STATUS;
  }
  size_t before = c->out->len;
  POOT_TRY(run_model(c, s, n));
  size_t added = c->out->len - before;
  wc_add(&c->cache, s, n, h, added ? (const poot_token *)c->out->data + before : NULL, added);
  return POOT_OK_STATUS;
}

static poot_status encode_fragment(encode_ctx *c, const char *s, size_t n, bool first) {
  const poot_tokenizer *tok = c->tok;
  if (n == 0) return POOT_OK_STATUS;
  if (tok->kind == POOT_TOKENIZER_LLAMA2C) return poot__model_llama2c(tok, s, n, c->out);
  poot_strbuf_clear(&c->norm);
  poot__tok_normalize(tok, s, n, &c->norm);
  POOT_TRY(poot_strbuf_status(&c->norm));
  poot_vec_clear(&c->pieces);
  POOT_TRY(poot__tok_pretokenize(tok, &c->norm, first, &c->pieces));
  const poot__piece *pc = c->pieces.data;
  for (size_t i = 0; i < c->pieces.len; i++) {
    const char *p = c->norm.data + pc[i].off;
    size_t pn = pc[i].len;
    if (pn == 0) continue;
    switch (tok->kind) {
      case POOT_TOKENIZER_SPM:
        for (size_t k = 0; k < pn;) {
          size_t cl = poot__tok_chunk_len(tok, p + k, pn - k);
          POOT_TRY(tok->chunk_marker ? cached_word(c, p + k, cl)
                                     : poot__model_spm(tok, p + k, cl, c->out));
          k += cl;
        }
        break;
      case POOT_TOKENIZER_BPE:
        for (size_t k = 0; k < pn;) {
          size_t cl = poot__tok_chunk_len(tok, p + k, pn - k);
          POOT_TRY(cached_word(c, p + k, cl));
          k += cl;
        }
        break;
      case POOT_TOKENIZER_UNIGRAM:
        POOT_TRY(poot__model_unigram(tok, p, pn, c->out));
        break;
      case POOT_TOKENIZER_WORDPIECE:
        POOT_TRY(poot__model_wordpiece(tok, p, pn, c->out));
        break;
      default:
        return poot_status_make(POOT_INTERNAL, "tokenizer: unknown kind %d", (int)tok->kind);
    }
  }
  return POOT_OK_STATUS;
}

static bool is_space_byte(char ch) {
  return isspace((unsigned char)ch) != 0;
}

/* Splits out added tokens (leftmost, longest first) and encodes the text
 * between them. */
static poot_status encode_text(encode_ctx *c, const char *text, size_t len, bool parse_special) {
  const poot_tokenizer *tok = c->tok;
  size_t start = 0, i = 0;
  while (i < len) {
    uint8_t b = (uint8_t)text[i];
    uint32_t k0 = tok->special_first[b], k1 = tok->special_first[b + 1];
    poot_token match = POOT_TOKEN_NONE;
    for (uint32_t k = k0; k < k1; k++) {
      const poot__special *sp = &tok->specials[k];
      if (sp->special && !parse_special) continue;
      const poot__tok_entry *e = &tok->tokens[sp->id];
      if (e->len <= len - i && memcmp(text + i, e->text, e->len) == 0) {
        match = sp->id;
        break;
      }
    }
    if (match == POOT_TOKEN_NONE) {
      i++;
      continue;
    }
    const poot__tok_entry *e = &tok->tokens[match];
    size_t seg_end = i;
    if (e->attr & POOT_TOKEN_ATTR_LSTRIP)
      while (seg_end > start && is_space_byte(text[seg_end - 1])) seg_end--;
    POOT_TRY(encode_fragment(c, text + start, seg_end - start, start == 0));
    POOT_TRY(push_id(c->out, match));
    i += e->len;
    if (e->attr & POOT_TOKEN_ATTR_RSTRIP)
      while (i < len && is_space_byte(text[i])) i++;
    start = i;
  }
  return encode_fragment(c, text + start, len - start, start == 0);
}

poot_status poot_tokenizer_encode(const poot_tokenizer *tok, const char *text, size_t len,
                                  const poot_tokenizer_encode_options *options,
                                  poot_token **out_ids, size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  if (!tok || (!text && len))
    return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: encode needs a tokenizer and text");
  poot_tokenizer_encode_options opts = options ? *options : poot_tokenizer_encode_options_default();
  poot_vec out;
  poot_vec_init(&out, sizeof(poot_token));
  encode_ctx c = {.tok = tok, .out = &out};
  poot_strbuf_init(&c.norm);
  poot_strbuf_init(&c.scratch);
  poot_vec_init(&c.pieces, sizeof(poot__piece));
  wc_init(&c.cache);
  poot_status st = POOT_OK_STATUS;
  if (opts.add_special && tok->add_bos && tok->bos != POOT_TOKEN_NONE) {
    st = push_id(&out, tok->bos);
    if (st) goto done;
  }
  st = encode_text(&c, text, len, opts.parse_special);
  if (st) goto done;
  if (opts.add_special && tok->add_eos && tok->eos != POOT_TOKEN_NONE) {
    st = push_id(&out, tok->eos);
    if (st) goto done;
  }
  if (opts.add_special && tok->add_sep && tok->sep != POOT_TOKEN_NONE) {
    st = push_id(&out, tok->sep);
    if (st) goto done;
  }
  *out_ids = out.data;
  *out_count = out.len;
  out.data = NULL;
  out.len = out.cap = 0;
done:
  poot_vec_deinit(&out);
  poot_vec_deinit(&c.pieces);
  poot_strbuf_deinit(&c.norm);
  poot_strbuf_deinit(&c.scratch);
  wc_deinit(&c.cache);
  return st;
}
