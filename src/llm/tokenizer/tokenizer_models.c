/* tokenizer_models.c — the models that turn one normalized, pre-tokenized
 * piece into ids: SentencePiece BPE by scores, merge-rank BPE, unigram,
 * WordPiece and llama2.c's encoder. Merging runs on a binary heap over a
 * linked list of symbols, so a long word costs O(n log n), never O(n²). */
#include <math.h>
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

typedef struct sym {
  int32_t prev, next;
  uint32_t off, n; /* bytes of the piece this symbol covers (n == 0: merged away) */
  poot_token id;
} sym;

typedef struct bigram {
  uint64_t key; /* smaller pops first */
  int32_t left, right;
  poot_token a, b; /* the ids expected on each side (BPE, llama2.c) */
  uint32_t size;   /* the merged byte length expected (SPM) */
  poot_token merged;
} bigram;

typedef struct heap {
  bigram *v;
  size_t len, cap;
} heap;

static poot_status heap_push(heap *h, bigram b) {
  if (h->len == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    bigram *v = poot_realloc_array(h->v, cap, sizeof *v);
    if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    h->v = v;
    h->cap = cap;
  }
  size_t i = h->len++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h->v[p].key <= b.key) break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = b;
  return POOT_OK_STATUS;
}

static bigram heap_pop(heap *h) {
  bigram top = h->v[0];
  bigram last = h->v[--h->len];
  size_t i = 0, n = h->len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && h->v[c + 1].key < h->v[c].key) c++;
    if (last.key <= h->v[c].key) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (n) h->v[i] = last;
  return top;
}

/* Maps a float so that a higher score gives a smaller key. */
static uint32_t score_key_desc(float f) {
  uint32_t u = poot_f32_bits(f);
  uint32_t asc = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ~asc;
}

static poot_status push_id(poot_vec *out, poot_token id) {
  return poot_vec_push(out, &id);
}

static poot_status push_bytes(const poot_tokenizer *tok, const char *s, size_t n, poot_vec *out) {
  for (size_t i = 0; i < n; i++) {
    poot_token id = tok->byte_tokens[(uint8_t)s[i]];
    if (id == POOT_TOKEN_NONE) id = tok->unk;
    if (id != POOT_TOKEN_NONE) POOT_TRY(push_id(out, id));
  }
  return POOT_OK_STATUS;
}

/* Splits s into one symbol per UTF-8 character (llama.cpp's lengths). */
static poot_status split_chars(const char *s, size_t n, sym **out_syms, size_t *out_count) {
  sym *v = poot_malloc((n ? n : 1) * sizeof *v);
  if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  size_t count = 0, off = 0;
  while (off < n) {
    size_t l = poot__utf8_len((uint8_t)s[off]);
    if (l > n - off) l = n - off;
    v[count] = (sym){(int32_t)count - 1, -1, (uint32_t)off, (uint32_t)l, POOT_TOKEN_NONE};
    off += l;
    if (off < n) v[count].next = (int32_t)count + 1;
    count++;
  }
  *out_syms = v;
  *out_count = count;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------ SentencePiece BPE */

static poot_status spm_try(const poot_tokenizer *tok, const char *s, sym *v, int32_t l, int32_t r,
                           heap *h) {
  if (l < 0 || r < 0) return POOT_OK_STATUS;
  uint32_t size = v[l].n + v[r].n;
  poot_token id = poot__tok_lookup(tok, s + v[l].off, size);
  if (id == POOT_TOKEN_NONE) return POOT_OK_STATUS;
  bigram b = {.key = ((uint64_t)score_key_desc(tok->tokens[id].score) << 32) | (uint32_t)l,
              .left = l,
              .right = r,
              .size = size,
              .merged = id};
  return heap_push(h, b);
}

poot_status poot__model_spm(const poot_tokenizer *tok, const char *s, size_t n, poot_vec *out) {
  sym *v = NULL;
  size_t count = 0;
  heap h = {0};
  POOT_TRY(split_chars(s, n, &v, &count));
  poot_status st = POOT_OK_STATUS;
  for (size_t i = 1; i < count && !st; i++) st = spm_try(tok, s, v, (int32_t)i - 1, (int32_t)i, &h);
  while (!st && h.len) {
    bigram b = heap_pop(&h);
    sym *L = &v[b.left], *R = &v[b.right];
    if (L->n == 0 || R->n == 0 || L->n + R->n != b.size) continue;
    L->n += R->n;
    R->n = 0;
    L->next = R->next;
    if (R->next >= 0) v[R->next].prev = b.left;
    st = spm_try(tok, s, v, L->prev, b.left, &h);
    if (!st) st = spm_try(tok, s, v, b.left, L->next, &h);
  }
  for (int32_t i = count ? 0 : -1; i != -1 && !st; i = v[i].next) {
    poot_token id = poot__tok_lookup(tok, s + v[i].off, v[i].n);
    if (id != POOT_TOKEN_NONE)
      st = push_id(out, id);
    else
      st = push_bytes(tok, s + v[i].off, v[i].n, out);
  }
  poot_free(h.v);
  poot_free(v);
  return st;
}

/* --------------------------------------------------------- merge-rank BPE */

static poot_status bpe_try(const poot_tokenizer *tok, sym *v, int32_t l, int32_t r, heap *h) {
  if (l < 0 || r < 0) return POOT_OK_STATUS;
  poot_token key[2] = {v[l].id, v[r].id};
  uint64_t m;
  if (key[0] < 0 || key[1] < 0 || !poot__tok_merge_get(tok, key[0], key[1], &m))
    return POOT_OK_STATUS;
  bigram b = {.key = ((m >> 32) << 32) | (uint32_t)l,
              .left = l,
              .right = r,
              .a = key[0],
              .b = key[1],
              .merged = (poot_token)(uint32_t)m};
  return heap_push(h, b);
}

poot_status poot__model_bpe(const poot_tokenizer *tok, const char *s, size_t n, poot_vec *out) {
  poot_status st = POOT_OK_STATUS;
  sym stack_syms[64];
  sym *v = stack_syms;
  heap h = {0};
  size_t count = 0;
  if (tok->byte_level) {
    /* The piece as GPT-2 byte characters; every byte is one symbol. */
    char stackbuf[256];
    char *mapped = n * 2 <= sizeof stackbuf ? stackbuf : poot_malloc(n * 2);
    if (!mapped) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    size_t ml = 0;
    for (size_t i = 0; i < n; i++)
      ml += poot__utf8_encode(poot__byte_to_char((uint8_t)s[i]), mapped + ml);
    poot_token whole =
        (tok->ignore_merges || n == 1) ? poot__tok_lookup(tok, mapped, ml) : POOT_TOKEN_NONE;
    if (mapped != stackbuf) poot_free(mapped);
    if (whole != POOT_TOKEN_NONE) return push_id(out, whole);
    if (n > 64) {
      v = poot_malloc(n * sizeof *v);
      if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
      poot_token id = tok->byte_tokens[(uint8_t)s[i]];
      v[count] = (sym){(int32_t)count - 1, -1, (uint32_t)i, 1, id};
      if (i + 1 < n) v[count].next = (int32_t)count + 1;
      count++;
    }
  } else {
    if (tok->ignore_merges) {
      poot_token whole = poot__tok_lookup(tok, s, n);
      if (whole != POOT_TOKEN_NONE) return push_id(out, whole);
    }
    if (n > 64) {
      v = poot_malloc(n * sizeof *v);
      if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    }
    /* One symbol per character; an unknown character becomes its byte
     * tokens (byte fallback) or the unknown token (fused with a previous one). */
    for (size_t off = 0; off < n;) {
      size_t l;
      if (poot__utf8_decode((const uint8_t *)s + off, n - off, &l) == POOT__UTF8_INVALID) l = 1;
      poot_token id = poot__tok_lookup(tok, s + off, l);
      if (id != POOT_TOKEN_NONE) {
        v[count++] = (sym){0, 0, (uint32_t)off, (uint32_t)l, id};
      } else if (tok->byte_fallback) {
        bool all = true;
        for (size_t k = 0; k < l; k++)
          all &= tok->byte_tokens[(uint8_t)s[off + k]] != POOT_TOKEN_NONE;
        if (all) {
          for (size_t k = 0; k < l; k++)
            v[count++] = (sym){0, 0, (uint32_t)(off + k), 1, tok->byte_tokens[(uint8_t)s[off + k]]};
        } else if (tok->unk != POOT_TOKEN_NONE) {
          v[count++] = (sym){0, 0, (uint32_t)off, (uint32_t)l, tok->unk};
        }
      } else if (tok->unk != POOT_TOKEN_NONE) {
        if (!(tok->fuse_unk && count && v[count - 1].id == tok->unk))
          v[count++] = (sym){0, 0, (uint32_t)off, (uint32_t)l, tok->unk};
      }
      off += l;
    }
    for (size_t i = 0; i < count; i++) {
      v[i].prev = (int32_t)i - 1;
      v[i].next = i + 1 < count ? (int32_t)i + 1 : -1;
    }
  }
  for (size_t i = 1; i < count && !st; i++) st = bpe_try(tok, v, (int32_t)i - 1, (int32_t)i, &h);
  while (!st && h.len) {
    bigram b = heap_pop(&h);
    sym *L = &v[b.left], *R = &v[b.right];
    if (L->n == 0 || R->n == 0 || L->next != b.right || L->id != b.a || R->id != b.b) continue;
    L->n += R->n;
    L->id = b.merged;
    R->n = 0;
    L->next = R->next;
    if (R->next >= 0) v[R->next].prev = b.left;
    st = bpe_try(tok, v, L->prev, b.left, &h);
    if (!st) st = bpe_try(tok, v, b.left, L->next, &h);
  }
  for (int32_t i = count ? 0 : -1; i != -1 && !st; i = v[i].next) {
    if (v[i].id != POOT_TOKEN_NONE)
      st = push_id(out, v[i].id);
    else if (tok->unk != POOT_TOKEN_NONE)
      st = push_id(out, tok->unk);
  }
  poot_free(h.v);
  if (v != stack_syms) poot_free(v);
  return st;
}

/* ---------------------------------------------------------------- unigram */

poot_status poot__model_unigram(const poot_tokenizer *tok, const char *s, size_t n, poot_vec *out) {
  double *best = poot_malloc((n + 1) * sizeof *best);
  int32_t *from = poot_malloc((n + 1) * sizeof *from);
  poot_token *via = poot_malloc((n + 1) * sizeof *via);
  poot_token *ids = poot_malloc((n + 1) * sizeof *ids);
  int32_t *starts = poot_malloc((n + 1) * sizeof *starts);
  poot_status st = POOT_OK_STATUS;
  if (!best || !from || !via || !ids || !starts) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    goto done;
  }
  for (size_t i = 0; i <= n; i++) best[i] = -INFINITY, from[i] = -1, via[i] = POOT_TOKEN_NONE;
  best[0] = 0;
  const uint32_t skip = POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_UNKNOWN | POOT_TOKEN_ATTR_UNUSED;
  for (size_t i = 0; i < n; i++) {
    if (best[i] == -INFINITY) continue;
    size_t cl;
    if (poot__utf8_decode((const uint8_t *)s + i, n - i, &cl) == POOT__UTF8_INVALID) cl = 1;
    bool single = false;
    size_t maxl = n - i < tok->max_token_len ? n - i : tok->max_token_len;
    for (size_t l = 1; l <= maxl; l++) {
      if (i + l < n && ((uint8_t)s[i + l] & 0xC0) == 0x80) continue; /* not a boundary */
      poot_token id = poot__tok_lookup(tok, s + i, l);
      if (id == POOT_TOKEN_NONE || (tok->tokens[id].attr & skip)) continue;
      if (l == cl) single = true;
      double sc = best[i] + tok->tokens[id].score;
      if (sc > best[i + l]) best[i + l] = sc, from[i + l] = (int32_t)i, via[i + l] = id;
    }
    /* SentencePiece's unknown piece: a character no single piece covers
     * still has a path through it, so every position after a reachable one
     * is reachable and the walk back below always ends at 0. */
    if (!single || best[i + cl] == -INFINITY) {
      double sc = best[i] + tok->unigram_unk_score;
      if (sc > best[i + cl])
        best[i + cl] = sc, from[i + cl] = (int32_t)i, via[i + cl] = POOT_TOKEN_NONE;
    }
  }
  /* Walk back from the end (ids[] and starts[] in reverse), then emit in order. */
  size_t k = 0;
  for (size_t i = n; i > 0; i = (size_t)from[i]) {
    /* Unreachable with finite scores (the loaders check them); kept so a
     * broken invariant is an error, not a walk outside the arrays. */
    if (from[i] < 0 || (size_t)from[i] >= i) {
      st = poot_status_make(POOT_INTERNAL,
                            "tokenizer: the unigram search found no path to byte %zu of a "
                            "%zu-byte piece",
                            i, n);
      goto done;
    }
    ids[k] = via[i];
    starts[k] = from[i];
    k++;
  }
  bool prev_unk = false;
  for (size_t j = k; j-- > 0;) {
    size_t a = (size_t)starts[j], b = j ? (size_t)starts[j - 1] : n;
    poot_token id = ids[j];
    if (id != POOT_TOKEN_NONE) {
      prev_unk = false;
      if ((st = push_id(out, id))) goto done;
    } else if (tok->byte_fallback) {
      if ((st = push_bytes(tok, s + a, b - a, out))) goto done;
    } else if (!(tok->fuse_unk && prev_unk) && tok->unk != POOT_TOKEN_NONE) {
      prev_unk = true;
      if ((st = push_id(out, tok->unk))) goto done;
    }
  }
done:
  poot_free(best);
  poot_free(from);
  poot_free(via);
  poot_free(ids);
  poot_free(starts);
  return st;
}

/* -------------------------------------------------------------- WordPiece */

/* A word WordPiece cannot split becomes the unknown token; without one in
 * the vocabulary that is an error, as in Hugging Face tokenizers (pushing
 * POOT_TOKEN_NONE would hand the model an id outside its embedding). */
static poot_status push_unk_word(const poot_tokenizer *tok, const char *s, size_t n,
                                 poot_vec *out) {
  if (tok->unk != POOT_TOKEN_NONE) return push_id(out, tok->unk);
  return poot_status_make(POOT_FORMAT,
                          "tokenizer: WordPiece cannot split the word '%.*s' and the "
                          "vocabulary has no unknown token (unk_token) to stand for it",
                          (int)(n > 64 ? 64 : n), s);
}

poot_status poot__model_wordpiece(const poot_tokenizer *tok, const char *s, size_t n,
                                  poot_vec *out) {
  size_t chars = 0;
  for (size_t i = 0; i < n; i++) chars += ((uint8_t)s[i] & 0xC0) != 0x80;
  if (chars > tok->wp_max_chars) return push_unk_word(tok, s, n, out);
  size_t mark = out->len;
  size_t cap = tok->max_token_len + 8;
  char stackbuf[512];
  char *buf = cap <= sizeof stackbuf ? stackbuf : poot_malloc(cap);
  if (!buf) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  poot_status st = POOT_OK_STATUS;
  size_t start = 0;
  while (start < n) {
    const char *prefix =
        start == 0 ? (tok->wp_phantom ? "\xe2\x96\x81" : "") : (tok->wp_phantom ? "" : "##");
    size_t pl = strlen(prefix);
    size_t end = n - start > tok->max_token_len ? start + tok->max_token_len : n;
    while (end > start && end < n && ((uint8_t)s[end] & 0xC0) == 0x80) end--;
    poot_token found = POOT_TOKEN_NONE;
    while (end > start) {
      if (pl + end - start <= cap) {
        memcpy(buf, prefix, pl);
        memcpy(buf + pl, s + start, end - start);
        found = poot__tok_lookup(tok, buf, pl + end - start);
        if (found != POOT_TOKEN_NONE) break;
      }
      end--;
      while (end > start && ((uint8_t)s[end] & 0xC0) == 0x80) end--;
    }
    if (found == POOT_TOKEN_NONE) {
      out->len = mark;
      st = push_unk_word(tok, s, n, out);
      break;
    }
    if ((st = push_id(out, found))) break;
    start = end;
  }
  if (buf != stackbuf) poot_free(buf);
  return st;
}

/* ---------------------------------------------------------------- llama2.c */

/* llama2.c's encode(): the dummy prefix " ", one token per UTF-8 character
 * (bytes + 3 when the character is not in the vocabulary), then repeatedly
 * merge the adjacent pair whose concatenation is the best-scoring token
 * (ties: the leftmost). A heap gives the same choices as its full rescans. */
static poot_status l2c_try(const poot_tokenizer *tok, sym *v, int32_t l, int32_t r,
                           poot_strbuf *buf, heap *h) {
  if (l < 0 || r < 0) return POOT_OK_STATUS;
  const poot__tok_entry *a = &tok->tokens[v[l].id], *b = &tok->tokens[v[r].id];
  poot_strbuf_clear(buf);
  poot_strbuf_append(buf, a->text, a->len);
  poot_strbuf_append(buf, b->text, b->len);
  POOT_TRY(poot_strbuf_status(buf));
  poot_token id = poot__tok_lookup(tok, buf->data, buf->len);
  if (id == POOT_TOKEN_NONE || !(tok->tokens[id].score > -1e10f)) return POOT_OK_STATUS;
  bigram g = {.key = ((uint64_t)score_key_desc(tok->tokens[id].score) << 32) | (uint32_t)l,
              .left = l,
              .right = r,
              .a = v[l].id,
              .b = v[r].id,
              .merged = id};
  return heap_push(h, g);
}

poot_status poot__model_llama2c(const poot_tokenizer *tok, const char *s, size_t n, poot_vec *out) {
  /* The BOS pushed just before takes part in merging, as in llama2.c. */
  size_t first = out->len;
  if (first && tok->bos != POOT_TOKEN_NONE && POOT_VEC_AT(out, poot_token, first - 1) == tok->bos)
    first--;
  if (n > 0) {
    poot_token dummy = poot__tok_lookup(tok, " ", 1);
    if (dummy != POOT_TOKEN_NONE)
      POOT_TRY(push_id(out, dummy));
    else if (' ' + 3 < tok->n_tokens)
      POOT_TRY(push_id(out, ' ' + 3));
  }
  char cbuf[8];
  size_t clen = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = (uint8_t)s[i];
    if ((c & 0xC0) != 0x80) clen = 0;
    cbuf[clen++] = (char)c;
    uint8_t next = i + 1 < n ? (uint8_t)s[i + 1] : 0;
    if ((next & 0xC0) == 0x80 && clen < 4) continue;
    poot_token id = poot__tok_lookup(tok, cbuf, clen);
    if (id != POOT_TOKEN_NONE) {
      POOT_TRY(push_id(out, id));
    } else {
      for (size_t k = 0; k < clen; k++) {
        poot_token b = (poot_token)(uint8_t)cbuf[k] + 3;
        POOT_TRY(
            push_id(out, b < tok->n_tokens ? b : (tok->unk != POOT_TOKEN_NONE ? tok->unk : 0)));
      }
    }
    clen = 0;
  }
  size_t count = out->len - first;
  if (count < 2) return POOT_OK_STATUS;
  poot_token *ids = (poot_token *)out->data + first;
  sym *v = poot_malloc(count * sizeof *v);
  if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  heap h = {0};
  poot_strbuf buf;
  poot_strbuf_init(&buf);
  poot_status st = POOT_OK_STATUS;
  size_t w = 0;
  /* Merge word by word when that is exact (see chunk_marker): a word starts
   * at a token beginning with ' ' whose left neighbour does not end with one. */
  for (size_t a = 0; a < count && !st;) {
    size_t b = a + 1;
    if (tok->chunk_marker) {
      while (b < count) {
        const poot__tok_entry *cur = &tok->tokens[ids[b]], *prev = &tok->tokens[ids[b - 1]];
        if (cur->len && cur->text[0] == ' ' && !(prev->len && prev->text[prev->len - 1] == ' '))
          break;
        b++;
      }
    } else {
      b = count;
    }
    size_t m = b - a;
    for (size_t i = 0; i < m; i++)
      v[i] = (sym){(int32_t)i - 1, i + 1 < m ? (int32_t)i + 1 : -1, 0, 1, ids[a + i]};
    h.len = 0;
    for (size_t i = 1; i < m && !st; i++)
      st = l2c_try(tok, v, (int32_t)i - 1, (int32_t)i, &buf, &h);
    while (!st && h.len) {
      bigram g = heap_pop(&h);
      sym *L = &v[g.left], *R = &v[g.right];
      if (L->n == 0 || R->n == 0 || L->next != g.right || L->id != g.a || R->id != g.b) continue;
      L->id = g.merged;
      R->n = 0;
      L->next = R->next;
      if (R->next >= 0) v[R->next].prev = g.left;
      st = l2c_try(tok, v, L->prev, g.left, &buf, &h);
      if (!st) st = l2c_try(tok, v, g.left, L->next, &buf, &h);
    }
    /* Compacting in place is safe: w never passes a. */
    for (int32_t i = 0; i != -1 && !st; i = v[i].next) ids[w++] = v[i].id;
    a = b;
  }
  out->len = first + w;
  poot_strbuf_deinit(&buf);
  poot_free(h.v);
  poot_free(v);
  return st;
}
