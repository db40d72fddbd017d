/* The matcher: a set of pushdown stacks over the compiled grammar, as llama.cpp's
 * grammar sampler keeps, but over bytes and with the stacks hash-consed into one node
 * pool so that equal stacks are one node id (dedup is an id compare) and stacks share
 * their tails. The pool is a stack itself: the mask walk truncates it on the way back
 * up the vocabulary trie, so a walk allocates nothing that outlives it. */
#include <string.h>

#include "grammar_match_impl.h"

#define BUCKETS (1u << 15)
#define MAX_EXPAND 8192

static inline uint32_t hash2(uint32_t pos, uint32_t parent) {
  uint32_t h = pos * 0x9E3779B1u ^ (parent + 0x7F4A7C15u) * 0x85EBCA77u;
  return (h ^ (h >> 15)) & (BUCKETS - 1);
}

void poot__truncate_pool(poot_grammar_matcher *m, uint32_t mark) {
  if (mark < m->cache_top) {
    poot__cache_clear(m);
    m->cache_top = 0;
  }
  while (m->n_nodes > mark) {
    const gnode *n = &m->nodes[--m->n_nodes];
    m->buckets[hash2(n->pos, n->parent)] = n->next;
  }
}

/* The node for stack `parent` with `pos` pushed (interned). NIL on failure (c->fail). */
uint32_t poot__node(ectx *c, uint32_t pos, uint32_t parent) {
  poot_grammar_matcher *m = c->m;
  uint32_t h = hash2(pos, parent);
  for (uint32_t id = m->buckets[h]; id != NIL; id = m->nodes[id].next)
    if (m->nodes[id].pos == pos && m->nodes[id].parent == parent) return id;
  uint32_t depth = parent == NIL ? 1 : m->nodes[parent].depth + 1;
  if (depth > m->g->max_depth) {
    c->fail = FAIL_CAPACITY;
    return NIL;
  }
  if (m->n_nodes == m->cap_nodes) {
    if (m->cap_nodes >= MAX_POOL) {
      m->pool_full = true;
      c->fail = FAIL_CAPACITY;
      return NIL;
    }
    gnode *n = poot_realloc_array(m->nodes, (size_t)m->cap_nodes * 2, sizeof *n);
    if (!n) {
      c->fail = FAIL_OOM;
      return NIL;
    }
    m->nodes = n;
    m->cap_nodes *= 2;
  }
  uint32_t id = m->n_nodes++;
  if (depth > m->hi_depth) m->hi_depth = depth;
  m->nodes[id] = (gnode){.pos = pos, .parent = parent, .next = m->buckets[h], .depth = depth};
  m->buckets[h] = id;
  return id;
}

void poot__stack_add(ectx *c, uint32_t id) {
  for (uint32_t i = 0; i < c->n_out; i++)
    if (c->out[i] == id) return;
  if (c->n_out == c->m->g->max_stacks) {
    c->fail = FAIL_CAPACITY;
    return;
  }
  c->out[c->n_out++] = id;
}

/* Adds every stack reachable from `id` without consuming a byte whose top is a byte
 * element; the empty stack sets c->accept. Terminates: left recursion was refused. */
void poot__expand(ectx *c, uint32_t id) {
  const poot_grammar *g = c->m->g;
  if (++c->rec > MAX_EXPAND) {
    c->fail = FAIL_CAPACITY;
    return;
  }
  for (;;) {
    if (id == NIL) {
      c->accept = true;
      break;
    }
    uint32_t pos = c->m->nodes[id].pos, parent = c->m->nodes[id].parent;
    if (pos >= g->n_el) { /* a sentinel: the context walk cannot see below */
      c->left = true;
      break;
    }
    const gel *e = &g->el[pos];
    if (e->type == GEL_END) {
      id = parent;
      continue;
    }
    if (e->type != GEL_RULE) {
      poot__stack_add(c, id);
      break;
    }
    uint32_t cont = g->el[pos + 1].type == GEL_END ? parent : poot__node(c, pos + 1, parent);
    if (c->fail) break;
    for (uint32_t a = g->rule_alt[e->value]; a < g->rule_alt[e->value + 1] && !c->fail; a++) {
      uint32_t s = g->alt_start[a];
      if (g->el[s].type == GEL_END) {
        poot__expand(c, cont);
      } else {
        uint32_t x = poot__node(c, s, cont);
        if (!c->fail) poot__expand(c, x);
      }
    }
    break;
  }
  c->rec--;
}

/* The stacks after byte `b` from stacks `in`, into c->out. */
void poot__step(ectx *c, const uint32_t *in, uint32_t n_in, uint8_t b) {
  const poot_grammar *g = c->m->g;
  for (uint32_t i = 0; i < n_in && !c->fail; i++) {
    uint32_t pos = c->m->nodes[in[i]].pos, parent = c->m->nodes[in[i]].parent;
    if (!poot__gel_match(g, &g->el[pos], b)) continue;
    uint32_t next = g->el[pos + 1].type == GEL_END ? parent : poot__node(c, pos + 1, parent);
    if (!c->fail && c->memo)
      poot__expand_memo(c, next);
    else if (!c->fail)
      poot__expand(c, next);
  }
}

poot_status poot__fail_status(int fail, const char *what) {
  if (fail == FAIL_OOM)
    return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (%s)", what);
  return poot_status_make(POOT_CAPACITY,
                          "grammar: %s needs more than the matcher's bounds (max_stacks live "
                          "stacks, max_depth per stack, %u nested expansions); the grammar is "
                          "too ambiguous or too deeply nested here",
                          what, MAX_EXPAND);
}

static poot_status start_state(poot_grammar_matcher *m) {
  poot__truncate_pool(m, 0);
  const poot_grammar *g = m->g;
  ectx c = {.m = m, .out = m->cur};
  for (uint32_t a = g->rule_alt[g->root]; a < g->rule_alt[g->root + 1] && !c.fail; a++) {
    uint32_t s = g->alt_start[a];
    if (g->el[s].type == GEL_END) {
      c.accept = true;
    } else {
      uint32_t x = poot__node(&c, s, NIL);
      if (!c.fail) poot__expand(&c, x);
    }
  }
  if (c.fail) return poot__fail_status(c.fail, "the start of the grammar");
  m->n_cur = c.n_out;
  m->accept = c.accept;
  m->compacted = m->n_nodes;
  return POOT_OK_STATUS;
}

poot_status poot__reserve_u32(uint32_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return POOT_OK_STATUS;
  size_t n = *cap ? *cap : 256;
  while (n < need) n *= 2;
  uint32_t *b = poot_realloc_array(*buf, n, sizeof *b);
  if (!b) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (matcher scratch)");
  *buf = b;
  *cap = n;
  return POOT_OK_STATUS;
}

/* Writes `src`'s stacks into dst->flat as [len, bottom … top] records; returns words. */
static poot_status flatten(poot_grammar_matcher *dst, const poot_grammar_matcher *src,
                           const uint32_t *ids, uint32_t n, size_t *out_words) {
  size_t w = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t d = src->nodes[ids[i]].depth;
    POOT_TRY(poot__reserve_u32(&dst->flat, &dst->flat_cap, w + d + 1));
    dst->flat[w] = d;
    uint32_t k = d;
    for (uint32_t id = ids[i]; id != NIL; id = src->nodes[id].parent)
      dst->flat[w + k--] = src->nodes[id].pos;
    w += d + 1;
  }
  *out_words = w;
  return POOT_OK_STATUS;
}

/* Interns dst->flat's stacks into dst's (emptied) pool as its state. */
static poot_status load_flat(poot_grammar_matcher *dst, size_t words) {
  poot__truncate_pool(dst, 0);
  ectx c = {.m = dst};
  uint32_t n = 0;
  for (size_t w = 0; w < words;) {
    uint32_t d = dst->flat[w], id = NIL;
    for (uint32_t k = 1; k <= d && !c.fail; k++) id = poot__node(&c, dst->flat[w + k], id);
    if (c.fail) return poot__fail_status(c.fail, "copying the state");
    dst->cur[n++] = id;
    w += d + 1;
  }
  dst->n_cur = n;
  dst->compacted = dst->n_nodes;
  return POOT_OK_STATUS;
}

poot_grammar_matcher *poot__matcher_alloc(const poot_grammar *g) {
  poot_grammar_matcher *m = poot_calloc(1, sizeof *m);
  if (!m) return NULL;
  m->g = g;
  m->cap_nodes = 4096;
  m->nodes = poot_malloc(m->cap_nodes * sizeof *m->nodes);
  m->buckets = poot_malloc(BUCKETS * sizeof *m->buckets);
  m->cur = poot_malloc(g->max_stacks * sizeof *m->cur);
  m->tmp_a = poot_malloc(g->max_stacks * sizeof *m->tmp_a);
  m->tmp_b = poot_malloc(g->max_stacks * sizeof *m->tmp_b);
  if (!m->nodes || !m->buckets || !m->cur || !m->tmp_a || !m->tmp_b) {
    poot_grammar_matcher_destroy(m);
    return NULL;
  }
  memset(m->buckets, 0xFF, BUCKETS * sizeof *m->buckets);
  for (unsigned b = 0; b < 256; b++) {
    m->byte_group[b] = (uint8_t)poot__byte_group((uint8_t)b);
    if (b < 128) {
      m->group_bytes[m->byte_group[b]][b >> 5] |= 1u << (b & 31);
      m->group_n[m->byte_group[b]]++;
    }
  }
  return m;
}

poot_status poot_grammar_matcher_create(const poot_grammar *grammar,
                                        poot_grammar_matcher **out_matcher) {
  if (!out_matcher) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: out_matcher is NULL");
  *out_matcher = NULL;
  if (!grammar) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: grammar is NULL");
  poot_grammar_matcher *m = poot__matcher_alloc(grammar);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (matcher)");
  poot_status st = start_state(m);
  if (st) {
    poot_grammar_matcher_destroy(m);
    return st;
  }
  *out_matcher = m;
  return POOT_OK_STATUS;
}

poot_status poot_grammar_matcher_clone(const poot_grammar_matcher *src,
                                       poot_grammar_matcher **out_matcher) {
  if (!out_matcher) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: out_matcher is NULL");
  *out_matcher = NULL;
  if (!src) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher is NULL");
  poot_grammar_matcher *m = poot__matcher_alloc(src->g);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (matcher)");
  size_t words = 0;
  poot_status st = flatten(m, src, src->cur, src->n_cur, &words);
  if (!st) st = load_flat(m, words);
  if (st) {
    poot_grammar_matcher_destroy(m);
    return st;
  }
  m->accept = src->accept;
  *out_matcher = m;
  return POOT_OK_STATUS;
}

poot_status poot_grammar_matcher_reset(poot_grammar_matcher *m) {
  if (!m) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher is NULL");
  return start_state(m);
}

void poot_grammar_matcher_destroy(poot_grammar_matcher *m) {
  if (!m) return;
  poot_free(m->nodes);
  poot_free(m->buckets);
  poot_free(m->cur);
  poot_free(m->tmp_a);
  poot_free(m->tmp_b);
  poot_free(m->flat);
  poot_free(m->frames);
  poot_free(m->srecs);
  poot_free(m->sids);
  poot_free(m->sbuckets);
  poot_free(m->tkeys);
  poot_free(m->tvals);
  for (uint32_t c = 0; c < DENSE_ROWS / DENSE_CHUNK; c++) poot_free(m->dense[c]);
  poot_free(m->reps);
  poot_free(m->xkeys);
  poot_free(m->xoff);
  poot_free(m->xids);
  poot_free(m->xout);
  poot_free(m->xn);
  poot_free(m->xfl);
  for (uint32_t i = 0; i < MASK_CACHE; i++) poot_free(m->mc_mask[i]);
  poot_free(m->keys);
  poot_free(m->kdata);
  poot_free(m->kacc);
  poot_free(m->klist);
  poot_free(m->kunc);
  poot_grammar_matcher_destroy(m->ctx);
  poot_free(m->scratch);
  poot_free(m->canon);
  poot_free(m->chainy);
  poot__shift_free(m);
  poot_free(m);
}

bool poot_grammar_matcher_can_end(const poot_grammar_matcher *m) {
  return m && m->accept;
}
bool poot_grammar_matcher_is_finished(const poot_grammar_matcher *m) {
  return m && m->accept && m->n_cur == 0;
}
uint32_t poot_grammar_matcher_stack_count(const poot_grammar_matcher *m) {
  return m ? m->n_cur : 0;
}

/* Drops the garbage of past steps when the pool has grown well past the live state. */
static poot_status maybe_compact(poot_grammar_matcher *m) {
  if (m->n_nodes <= (1u << 18) + 2 * m->compacted) return POOT_OK_STATUS;
  size_t words = 0;
  POOT_TRY(flatten(m, m, m->cur, m->n_cur, &words));
  return load_flat(m, words);
}

poot_status poot_grammar_matcher_accept(poot_grammar_matcher *m, const void *bytes, size_t len) {
  if (!m) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher is NULL");
  if (!bytes && len) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: bytes is NULL");
  if (len == 0) return POOT_OK_STATUS;
  const uint8_t *b = bytes;
  uint32_t mark = m->n_nodes;
  uint32_t *in = m->cur, n_in = m->n_cur;
  uint32_t *bufs[2] = {m->tmp_a, m->tmp_b};
  ectx c = {.m = m};
  for (size_t i = 0; i < len; i++) {
    c = (ectx){.m = m, .out = bufs[i & 1]};
    poot__step(&c, in, n_in, b[i]);
    if (c.fail) {
      poot__truncate_pool(m, mark);
      return poot__fail_status(c.fail, "this text");
    }
    if (c.n_out == 0 && !c.accept) {
      poot__truncate_pool(m, mark);
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "grammar: byte %zu (0x%02x) of the text is not allowed here", i,
                              b[i]);
    }
    in = c.out;
    n_in = c.n_out;
  }
  memcpy(m->cur, in, n_in * sizeof *in);
  m->n_cur = n_in;
  m->accept = c.accept;
  return maybe_compact(m);
}
