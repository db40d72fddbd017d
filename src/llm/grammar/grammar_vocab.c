/* The vocabulary as a byte trie in preorder, built once per tokenizer: the mask walk
 * matches a prefix shared by many tokens once. */
#include <stdlib.h>
#include <string.h>

#include "grammar_impl.h"

typedef struct tok_ref {
  const uint8_t *text;
  uint32_t len;
  int32_t id;
} tok_ref;

static int cmp_tok(const void *a, const void *b) {
  const tok_ref *x = a, *y = b;
  uint32_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->text, y->text, n) : 0;
  if (c) return c;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static poot_status check_inputs(const char *const *texts, const size_t *lens, int32_t count,
                                const int32_t *eog_ids, size_t eog_count) {
  if (count <= 0 || count > (1 << 24))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar vocab: %d tokens; the count must be in 1 … 16777216", count);
  if (!texts || !lens)
    return poot_status_make(POOT_INVALID_ARGUMENT, "grammar vocab: texts or lens is NULL");
  if (eog_count && !eog_ids)
    return poot_status_make(POOT_INVALID_ARGUMENT, "grammar vocab: eog_ids is NULL");
  for (size_t i = 0; i < eog_count; i++)
    if (eog_ids[i] < 0 || eog_ids[i] >= count)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "grammar vocab: end-of-generation id %d is outside 0 … %d",
                              eog_ids[i], count - 1);
  for (int32_t i = 0; i < count; i++) {
    if (!texts[i] && lens[i])
      return poot_status_make(POOT_INVALID_ARGUMENT, "grammar vocab: token %d's text is NULL", i);
    if (lens[i] > POOT_GRAMMAR_MAX_TOKEN)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "grammar vocab: token %d is %zu bytes; the limit is %u", i, lens[i],
                              POOT_GRAMMAR_MAX_TOKEN);
  }
  return POOT_OK_STATUS;
}

/* The length of the UTF-8 character at s (n ≥ 1 bytes left; all n when it is cut short by
 * the end), 0 when it is not well-formed (Unicode Table 3-7: no overlong forms, surrogates
 * or code points past U+10FFFF). */
static uint32_t utf8_char(const uint8_t *s, uint32_t n) {
  uint8_t b = s[0], lo = 0x80, hi = 0xBF;
  uint32_t need;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (uint32_t k = 1; k <= need; k++) {
    if (k >= n) return n;
    if (s[k] < (k == 1 ? lo : 0x80) || s[k] > (k == 1 ? hi : 0xBF)) return 0;
  }
  return need + 1;
}

/* Clears utf8_ok on the nodes of token r (path[0 .. len]) from which the rest of the token
 * is not well-formed UTF-8. `ok` has len + 1 slots. */
static void mark_utf8(gtrie_node *t, const uint32_t *path, const tok_ref *r, uint8_t *ok) {
  ok[r->len] = 1;
  for (uint32_t i = r->len; i-- > 0;) {
    uint32_t l = utf8_char(r->text + i, r->len - i);
    ok[i] = l && (i + l >= r->len || ok[i + l]);
    if (!ok[i]) t[path[i]].utf8_ok = 0;
  }
}

/* Closes node path[depth] at `end` and gives its bytes to its parent's signature. */
static void close_node(gtrie_node *t, const uint32_t *path, uint32_t depth, uint32_t end) {
  gtrie_node *x = &t[path[depth]];
  x->end = end;
  gtrie_node *up = &t[path[depth - 1]];
  up->sig |= x->sig | 1u << poot__byte_group(x->byte);
  if (x->height + 1 > up->height) up->height = (uint16_t)(x->height + 1);
}

/* Builds the preorder trie from the sorted tokens. `path` has max_len + 1 slots. */
static void build_trie(poot_grammar_vocab *v, const tok_ref *refs, uint32_t n, uint32_t *path,
                       uint8_t *ok) {
  gtrie_node *t = v->nodes;
  uint32_t nn = 1, depth = 0;
  t[0] = (gtrie_node){.utf8_ok = 1};
  path[0] = 0;
  const tok_ref *prev = NULL;
  for (uint32_t i = 0; i < n; i++) {
    const tok_ref *r = &refs[i];
    uint32_t l = 0;
    if (prev)
      while (l < prev->len && l < r->len && prev->text[l] == r->text[l]) l++;
    while (depth > l) close_node(t, path, depth--, nn); /* the nodes below the common prefix */
    for (; depth < r->len; depth++) {
      t[nn] = (gtrie_node){.byte = r->text[depth], .utf8_ok = 1, .depth = (uint16_t)(depth + 1)};
      path[depth + 1] = nn++;
    }
    gtrie_node *end = &t[path[r->len]];
    if (end->tok_n == 0) end->tok_off = i;
    end->tok_n++;
    v->tok_ids[i] = r->id;
    mark_utf8(t, path, r, ok);
    prev = r;
  }
  while (depth > 0) close_node(t, path, depth--, nn);
  t[0].end = nn;
  v->n_nodes = nn;
  v->n_trie_tokens = n;
  /* Every node's tok_off: the first token at or after it in preorder. */
  uint32_t next = n;
  for (uint32_t i = nn; i-- > 0;) {
    if (t[i].tok_n == 0) t[i].tok_off = next;
    next = t[i].tok_off;
    bool high = (t[i].sig >> POOT_BYTE_HIGH_GROUP) & 1u;
    t[i].bulk_ok = t[i].sig && (!high || t[i].utf8_ok) && t[i].height <= 256;
  }
}

/* Every node's children side by side (gtrie_kid), in the order of the nodes. */
static void kids_make(poot_grammar_vocab *v) {
  const gtrie_node *t = v->nodes;
  uint32_t n = 0;
  for (uint32_t i = 0; i < v->n_nodes; i++) {
    v->kid_off[i] = n;
    for (uint32_t c = i + 1; c < t[i].end; c = t[c].end)
      v->kids[n++] = (gtrie_kid){.node = c,
                                 .sig = t[c].sig,
                                 .tok_off = t[c].tok_off,
                                 .tok_mid = t[c].tok_off + t[c].tok_n,
                                 .tok_end = poot__trie_tok_end(v, c),
                                 .height = (uint16_t)(t[c].height | (t[c].bulk_ok ? 0x8000u : 0)),
                                 .byte = t[c].byte};
  }
  v->kid_off[v->n_nodes] = n;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t c = v->kids[k].node;
    v->kids[k].first = v->kid_off[c];
    v->kids[k].n_less = (uint8_t)(v->kid_off[c + 1] - v->kid_off[c] - 1); /* (unread when none) */
  }
}

poot_status poot_grammar_vocab_create(const char *const *texts, const size_t *lens, int32_t count,
                                      const int32_t *eog_ids, size_t eog_count,
                                      poot_grammar_vocab **out_vocab) {
  if (!out_vocab) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar vocab: out is NULL");
  *out_vocab = NULL;
  POOT_TRY(check_inputs(texts, lens, count, eog_ids, eog_count));
  uint8_t *is_eog = poot_calloc((size_t)count, 1);
  tok_ref *refs = poot_malloc((size_t)count * sizeof *refs);
  poot_grammar_vocab *v = poot_calloc(1, sizeof *v);
  uint32_t *path = NULL;
  uint8_t *ok = NULL;
  poot_status st = POOT_OK_STATUS;
  if (!is_eog || !refs || !v) goto oom;
  for (size_t i = 0; i < eog_count; i++) is_eog[eog_ids[i]] = 1;
  /* Tokens in the trie: everything that has text and is not end-of-generation. */
  uint32_t n = 0;
  size_t total = 1;
  for (int32_t i = 0; i < count; i++) {
    if (is_eog[i] || lens[i] == 0) continue;
    refs[n++] = (tok_ref){.text = (const uint8_t *)texts[i], .len = (uint32_t)lens[i], .id = i};
    total += lens[i];
    if (lens[i] > v->max_len) v->max_len = (uint32_t)lens[i];
  }
  if (total > UINT32_MAX - 1) {
    st = poot_status_make(POOT_INVALID_ARGUMENT, "grammar vocab: more than 4 GiB of token text");
    goto fail;
  }
  qsort(refs, n, sizeof *refs, cmp_tok);
  v->n_tokens = count;
  v->nodes = poot_malloc(total * sizeof *v->nodes);
  v->tok_ids = poot_malloc((n ? n : 1) * sizeof *v->tok_ids);
  v->eog = poot_malloc((eog_count ? eog_count : 1) * sizeof *v->eog);
  path = poot_malloc(((size_t)v->max_len + 1) * sizeof *path);
  ok = poot_malloc((size_t)v->max_len + 1);
  if (!v->nodes || !v->tok_ids || !v->eog || !path || !ok) goto oom;
  if (eog_count) memcpy(v->eog, eog_ids, eog_count * sizeof *v->eog);
  v->n_eog = eog_count;
  build_trie(v, refs, n, path, ok);
  v->all = poot_calloc(poot_grammar_vocab_mask_words(v) + 1, sizeof *v->all);
  v->kids = poot_malloc((size_t)v->n_nodes * sizeof *v->kids);
  v->kid_off = poot_malloc(((size_t)v->n_nodes + 1) * sizeof *v->kid_off);
  if (!v->all || !v->kids || !v->kid_off) goto oom;
  kids_make(v);
  for (uint32_t k = 0; k < n; k++) v->all[v->tok_ids[k] >> 5] |= 1u << (v->tok_ids[k] & 31);
  /* Shrink to the nodes used (shared prefixes make far fewer than the total bytes). */
  gtrie_node *shrunk = poot_realloc_array(v->nodes, v->n_nodes, sizeof *shrunk);
  if (shrunk) v->nodes = shrunk;
  goto done;
oom:
  st = poot_status_make(POOT_OUT_OF_MEMORY, "grammar vocab: out of memory (%d tokens)", count);
fail:
  poot_grammar_vocab_destroy(v);
  v = NULL;
done:
  poot_free(path);
  poot_free(ok);
  poot_free(refs);
  poot_free(is_eog);
  *out_vocab = v;
  return st;
}

void poot_grammar_vocab_destroy(poot_grammar_vocab *v) {
  if (!v) return;
  poot_free(v->nodes);
  poot_free(v->tok_ids);
  poot_free(v->eog);
  poot_free(v->all);
  poot_free(v->kids);
  poot_free(v->kid_off);
  poot_free(v);
}

int32_t poot_grammar_vocab_size(const poot_grammar_vocab *v) {
  return v ? v->n_tokens : 0;
}

size_t poot_grammar_vocab_mask_words(const poot_grammar_vocab *v) {
  return v ? ((size_t)v->n_tokens + 31) / 32 : 0;
}
