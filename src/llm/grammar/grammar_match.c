/* The matcher: a set of pushdown stacks over the compiled grammar, as llama.cpp's
 * grammar sampler keeps, but over bytes and with the stacks hash-consed into one node
 * pool so that equal stacks are one node id (dedup is an id compare) and stacks share
 * their tails. The pool is a stack itself: the mask walk truncates it on the way back
 * up the vocabulary trie, so a walk allocates nothing that outlives it. */
#include <string.h>

#include "grammar_impl.h"

#define NIL UINT32_MAX
#define BUCKETS (1u << 15)
#define MAX_POOL (1u << 24)
#define MAX_EXPAND 8192
#define MASK_CACHE 8
#define DENSE_SETS 4096u
#define REP_SETS 16384u /* sets with byte classes (4 MiB) */
#define REP_STACKS 64u  /* a set of more stacks has none */
#define REP_AFTER 8u    /* classes cost about as much as 8 transitions: made at the 9th */

#define KEY_MAX 4096u
#define KEY_DATA_MAX ((size_t)1 << 22) /* words: 16 MiB */
#define WIDE_BYTES 80
#define CHAIN_CAP 32u /* counts of x{m,n} past this share a context key */
#define UNC_DEEPER 1024u
#define MAX_SENTINELS 256u

enum { FAIL_NONE = 0, FAIL_CAPACITY = 1, FAIL_OOM = 2 };

typedef struct gnode {
  uint32_t pos;    /* element to match next */
  uint32_t parent; /* the stack below, NIL at the bottom */
  uint32_t next;   /* next node in the same hash bucket */
  uint32_t depth;
} gnode;

typedef struct mframe {
  uint32_t node, child, sid;
} mframe;

/* An interned stack set (the mask walk's cache): ids sids[off .. off + n), sorted. */
typedef struct srec {
  uint32_t off, n, hash;
  uint32_t bytes[8];                 /* the bytes some top takes */
  uint32_t chain_groups, chain_next; /* ASCII groups whose every byte leads to chain_next, a
                                       live set (chain_done) */
  uint32_t taken_groups;             /* the groups of the bytes some top takes (chain_done) */
  bool chain_done;
  bool u8_done, u8_loops; /* every UTF-8 character >= U+0080 leads to chain_next */
  bool accept;
  bool left;      /* a context walk only: some stack reached a cut (see mkey) on this byte */
  uint32_t key;   /* the context matcher only: this cut state's key + 1, 0 when none */
  uint32_t rep;   /* this set's byte classes (byte_reps) + 1, 0 when not made */
  uint32_t fresh; /* transitions computed from this set (byte_reps waits for REP_AFTER) */
} srec;

/* A lexical context's precomputed tokens (the mask's second cache, see key_mask): the
 * state's stacks cut at one depth, the part below replaced by opaque sentinels, walked over
 * the whole vocabulary once. The accepted part holds the tokens that some stack consumes
 * without ever reaching a sentinel (accepted whatever lies below); the uncertain part the
 * trie nodes (preorder) where a stack first reached one, or past a long count's horizon
 * (their subtrees depend on the rest and are walked in full from the real state). */
typedef struct mkey {
  uint32_t acc_off, n_acc; /* kdata: the accepted ids, or a bitset of mask words (dense) */
  uint32_t unc_off, n_unc; /* kdata: the uncertain trie nodes */
  bool dense;
  bool exact; /* false: the context walk hit the pool bound; not usable */
} mkey;

struct poot_grammar_matcher {
  const poot_grammar *g;
  gnode *nodes;
  uint32_t n_nodes, cap_nodes, compacted;
  uint32_t cache_top; /* the walk's cache refers to nodes below this */
  uint32_t *buckets;
  uint32_t *cur; /* the state: stacks whose top is a byte element */
  uint32_t n_cur;
  bool accept; /* the empty stack is in the state: the grammar may end */
  uint32_t *tmp_a, *tmp_b;
  uint32_t *flat;
  size_t flat_cap;
  mframe *frames;
  size_t frames_cap;
  /* The walk's cache: interned stack sets and the transitions (set, byte) → set. Node ids
   * are stable until the pool is emptied (reset, clone, compaction), which clears it. */
  srec *srecs;
  uint32_t n_srec, cap_srec;
  uint32_t *sids;
  size_t n_sids, cap_sids;
  uint32_t *sbuckets; /* set id + 1; 0 empty */
  uint32_t sb_cap;
  uint64_t *tkeys; /* (set id << 8 | byte) + 1; 0 empty */
  uint32_t *tvals;
  uint32_t t_cap, t_len;
  uint32_t *dense; /* transitions of the first DENSE_SETS sets: [sid * 256 + byte] = result + 2 */
  uint32_t dense_sets;
  uint8_t *reps; /* byte classes of REP_SETS sets at most, 256 a set (byte_reps) */
  uint32_t n_reps, cap_reps;
  /* Masks of the last few start sets (a state recurs often: inside a string, between
   * members); valid for one vocabulary while the cache is. */
  const poot_grammar_vocab *mc_vocab;
  uint32_t mc_sid[MASK_CACHE];
  uint32_t *mc_mask[MASK_CACHE];
  uint32_t mc_n, mc_next;
  size_t mc_words;
  /* Context keys: `ctx` is a private matcher whose pool holds the cut states. */
  poot_grammar_matcher *ctx;
  mkey *keys;
  uint32_t n_keys, cap_keys;
  uint32_t *kdata;
  size_t n_kdata, cap_kdata;
  /* A context walk's scratch: the accepted ids while they are fewer than a mask's words
   * (klist), then a mask (kacc, kept zero between walks); the uncertain nodes. */
  uint32_t *kacc, *klist, *kunc;
  size_t kacc_words, n_klist, cap_kunc;
  bool kdense;
  uint32_t hi_depth; /* the deepest node ever made in this pool (for the context matcher) */
  bool pool_full;    /* the pool hit MAX_POOL once (for the context matcher) */
  uint32_t *scratch; /* the cut positions of one stack */
  /* Long counted repetitions (see chains_find): canon[p] is the position a cut state uses
   * for p; chainy[p] marks the positions of a count >= CHAIN_CAP. NULL when there are none. */
  uint32_t *canon;
  uint8_t *chainy;
  bool chains_done, cut_chainy;
  size_t scratch_cap;
};

typedef struct ectx {
  poot_grammar_matcher *m;
  uint32_t *out;
  uint32_t n_out;
  uint32_t rec;
  bool accept;
  bool left; /* a stack reached a sentinel (a position past the grammar's elements) */
  int fail;
} ectx;

static inline uint32_t hash2(uint32_t pos, uint32_t parent) {
  uint32_t h = pos * 0x9E3779B1u ^ (parent + 0x7F4A7C15u) * 0x85EBCA77u;
  return (h ^ (h >> 15)) & (BUCKETS - 1);
}

/* Empties the walk's cache. It costs what was used, not what was reserved: the context
 * matcher empties its cache for every cut state of a mask, and a table cleared in full
 * (4 MiB of dense transitions at most) each time was a quarter of the mask's time. */
static void clear_cache(poot_grammar_matcher *m) {
  uint32_t used = m->n_srec;
  if (m->dense) { /* rows are written for existing sets only (sid < n_srec) */
    size_t rows = used < m->dense_sets ? used : m->dense_sets;
    memset(m->dense, 0, rows * 256 * sizeof *m->dense);
  }
  if (m->sbuckets && (size_t)used * 8 < m->sb_cap) {
    for (uint32_t i = 0; i < used; i++) { /* each set's slot, from its home slot */
      uint32_t k = m->srecs[i].hash & (m->sb_cap - 1);
      while (m->sbuckets[k] != i + 1) k = (k + 1) & (m->sb_cap - 1);
      m->sbuckets[k] = 0;
    }
  } else if (m->sbuckets) {
    memset(m->sbuckets, 0, m->sb_cap * sizeof *m->sbuckets);
  }
  if (m->tkeys && m->t_len) memset(m->tkeys, 0, m->t_cap * sizeof *m->tkeys);
  m->n_srec = 0;
  m->n_sids = 0;
  m->t_len = 0;
  m->mc_n = 0;
  m->n_reps = 0;
}

static void truncate_pool(poot_grammar_matcher *m, uint32_t mark) {
  if (mark < m->cache_top) {
    clear_cache(m);
    m->cache_top = 0;
  }
  while (m->n_nodes > mark) {
    const gnode *n = &m->nodes[--m->n_nodes];
    m->buckets[hash2(n->pos, n->parent)] = n->next;
  }
}

/* The node for stack `parent` with `pos` pushed (interned). NIL on failure (c->fail). */
static uint32_t mk(ectx *c, uint32_t pos, uint32_t parent) {
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

static void add(ectx *c, uint32_t id) {
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
static void expand(ectx *c, uint32_t id) {
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
      add(c, id);
      break;
    }
    uint32_t cont = g->el[pos + 1].type == GEL_END ? parent : mk(c, pos + 1, parent);
    if (c->fail) break;
    for (uint32_t a = g->rule_alt[e->value]; a < g->rule_alt[e->value + 1] && !c->fail; a++) {
      uint32_t s = g->alt_start[a];
      if (g->el[s].type == GEL_END) {
        expand(c, cont);
      } else {
        uint32_t x = mk(c, s, cont);
        if (!c->fail) expand(c, x);
      }
    }
    break;
  }
  c->rec--;
}

/* The stacks after byte `b` from stacks `in`, into c->out. */
static void step(ectx *c, const uint32_t *in, uint32_t n_in, uint8_t b) {
  const poot_grammar *g = c->m->g;
  for (uint32_t i = 0; i < n_in && !c->fail; i++) {
    uint32_t pos = c->m->nodes[in[i]].pos, parent = c->m->nodes[in[i]].parent;
    if (!poot__gel_match(g, &g->el[pos], b)) continue;
    uint32_t next = g->el[pos + 1].type == GEL_END ? parent : mk(c, pos + 1, parent);
    if (!c->fail) expand(c, next);
  }
}

static poot_status fail_status(int fail, const char *what) {
  if (fail == FAIL_OOM)
    return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (%s)", what);
  return poot_status_make(POOT_CAPACITY,
                          "grammar: %s needs more than the matcher's bounds (max_stacks live "
                          "stacks, max_depth per stack, %u nested expansions); the grammar is "
                          "too ambiguous or too deeply nested here",
                          what, MAX_EXPAND);
}

static poot_status start_state(poot_grammar_matcher *m) {
  truncate_pool(m, 0);
  const poot_grammar *g = m->g;
  ectx c = {.m = m, .out = m->cur};
  for (uint32_t a = g->rule_alt[g->root]; a < g->rule_alt[g->root + 1] && !c.fail; a++) {
    uint32_t s = g->alt_start[a];
    if (g->el[s].type == GEL_END) {
      c.accept = true;
    } else {
      uint32_t x = mk(&c, s, NIL);
      if (!c.fail) expand(&c, x);
    }
  }
  if (c.fail) return fail_status(c.fail, "the start of the grammar");
  m->n_cur = c.n_out;
  m->accept = c.accept;
  m->compacted = m->n_nodes;
  return POOT_OK_STATUS;
}

static poot_status reserve_u32(uint32_t **buf, size_t *cap, size_t need) {
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
    POOT_TRY(reserve_u32(&dst->flat, &dst->flat_cap, w + d + 1));
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
  truncate_pool(dst, 0);
  ectx c = {.m = dst};
  uint32_t n = 0;
  for (size_t w = 0; w < words;) {
    uint32_t d = dst->flat[w], id = NIL;
    for (uint32_t k = 1; k <= d && !c.fail; k++) id = mk(&c, dst->flat[w + k], id);
    if (c.fail) return fail_status(c.fail, "copying the state");
    dst->cur[n++] = id;
    w += d + 1;
  }
  dst->n_cur = n;
  dst->compacted = dst->n_nodes;
  return POOT_OK_STATUS;
}

static poot_grammar_matcher *matcher_alloc(const poot_grammar *g) {
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
  return m;
}

poot_status poot_grammar_matcher_create(const poot_grammar *grammar,
                                        poot_grammar_matcher **out_matcher) {
  if (!out_matcher) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: out_matcher is NULL");
  *out_matcher = NULL;
  if (!grammar) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: grammar is NULL");
  poot_grammar_matcher *m = matcher_alloc(grammar);
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
  poot_grammar_matcher *m = matcher_alloc(src->g);
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
  poot_free(m->dense);
  poot_free(m->reps);
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
    step(&c, in, n_in, b[i]);
    if (c.fail) {
      truncate_pool(m, mark);
      return fail_status(c.fail, "this text");
    }
    if (c.n_out == 0 && !c.accept) {
      truncate_pool(m, mark);
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

/* ------------------------------------------------------------- the mask */

static uint32_t hash_ids(const uint32_t *ids, uint32_t n, bool accept, bool left) {
  uint32_t h = 0x811C9DC5u ^ (accept ? 0x5bd1e995u : 0) ^ (left ? 0x27d4eb2fu : 0);
  for (uint32_t i = 0; i < n; i++) h = (h ^ ids[i]) * 0x01000193u;
  return h ^ (h >> 16);
}

static poot_status grow_cache(poot_grammar_matcher *m) {
  if (m->n_srec == m->cap_srec) {
    uint32_t cap = m->cap_srec ? m->cap_srec * 2 : 256;
    srec *r = poot_realloc_array(m->srecs, cap, sizeof *r);
    if (!r) return fail_status(FAIL_OOM, "the mask cache");
    m->srecs = r;
    m->cap_srec = cap;
  }
  if (m->n_srec * 2 >= m->sb_cap) { /* rehash the set table at half full */
    uint32_t cap = m->sb_cap ? m->sb_cap * 2 : 1024;
    uint32_t *b = poot_calloc(cap, sizeof *b);
    if (!b) return fail_status(FAIL_OOM, "the mask cache");
    for (uint32_t i = 0; i < m->n_srec; i++) {
      uint32_t k = m->srecs[i].hash & (cap - 1);
      while (b[k]) k = (k + 1) & (cap - 1);
      b[k] = i + 1;
    }
    poot_free(m->sbuckets);
    m->sbuckets = b;
    m->sb_cap = cap;
  }
  return POOT_OK_STATUS;
}

/* The id of the set `ids` (sorted here) with `accept` and `left`, interned. */
static poot_status intern(poot_grammar_matcher *m, uint32_t *ids, uint32_t n, bool accept,
                          bool left, uint32_t *out_sid) {
  for (uint32_t i = 1; i < n; i++) /* insertion sort: sets are small */
    for (uint32_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
      uint32_t t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
  POOT_TRY(grow_cache(m));
  uint32_t h = hash_ids(ids, n, accept, left), k = h & (m->sb_cap - 1);
  for (; m->sbuckets[k]; k = (k + 1) & (m->sb_cap - 1)) {
    const srec *r = &m->srecs[m->sbuckets[k] - 1];
    if (r->hash == h && r->n == n && r->accept == accept && r->left == left &&
        (n == 0 || memcmp(m->sids + r->off, ids, n * sizeof *ids) == 0)) {
      *out_sid = m->sbuckets[k] - 1;
      return POOT_OK_STATUS;
    }
  }
  POOT_TRY(reserve_u32(&m->sids, &m->cap_sids, m->n_sids + n + 1));
  memcpy(m->sids + m->n_sids, ids, n * sizeof *ids);
  srec *r = &m->srecs[m->n_srec];
  *r = (srec){.off = (uint32_t)m->n_sids, .n = n, .hash = h, .accept = accept, .left = left};
  for (uint32_t i = 0; i < n; i++) { /* tops are byte elements */
    const gel *e = &m->g->el[m->nodes[ids[i]].pos];
    if (e->type == GEL_SET) {
      for (int w = 0; w < 8; w++) r->bytes[w] |= m->g->sets[e->value].bits[w];
    } else {
      for (unsigned b = e->lo; b <= e->hi; b++) r->bytes[b >> 5] |= 1u << (b & 31);
    }
  }
  m->n_sids += n;
  m->sbuckets[k] = ++m->n_srec;
  *out_sid = m->n_srec - 1;
  return POOT_OK_STATUS;
}

#define SID_FAIL UINT32_MAX

static poot_status trans_put(poot_grammar_matcher *m, uint64_t key, uint32_t val) {
  if (m->t_len * 2 >= m->t_cap) {
    uint32_t cap = m->t_cap ? m->t_cap * 2 : 4096;
    uint64_t *k = poot_calloc(cap, sizeof *k);
    uint32_t *v = poot_malloc(cap * sizeof *v);
    if (!k || !v) {
      poot_free(k);
      poot_free(v);
      return fail_status(FAIL_OOM, "the mask cache");
    }
    for (uint32_t i = 0; i < m->t_cap; i++) {
      if (!m->tkeys[i]) continue;
      uint32_t s = (uint32_t)(m->tkeys[i] * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
      while (k[s]) s = (s + 1) & (cap - 1);
      k[s] = m->tkeys[i];
      v[s] = m->tvals[i];
    }
    poot_free(m->tkeys);
    poot_free(m->tvals);
    m->tkeys = k;
    m->tvals = v;
    m->t_cap = cap;
  }
  uint32_t s = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & (m->t_cap - 1);
  while (m->tkeys[s]) s = (s + 1) & (m->t_cap - 1);
  m->tkeys[s] = key;
  m->tvals[s] = val;
  m->t_len++;
  return POOT_OK_STATUS;
}

static poot_status compute_step(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  ectx c = {.m = m, .out = m->tmp_a};
  step(&c, m->sids + m->srecs[sid].off, m->srecs[sid].n, b);
  if (c.fail == FAIL_OOM) return fail_status(c.fail, "the mask");
  *out = SID_FAIL;
  if (!c.fail) POOT_TRY(intern(m, c.out, c.n_out, c.accept, c.left, out));
  m->cache_top = m->n_nodes;
  return POOT_OK_STATUS;
}

/* The byte classes of set `sid`, made once: reps[b] is the first byte that exactly the same
 * stacks of the set take as b. step() reads a byte only through which stacks take it (it
 * advances those, in order, the same way whatever the byte), so bytes of one class lead to
 * the same set and one transition serves the class: a new set costs a transition per class
 * (a JSON string's set has about a dozen) rather than one per byte the walk meets. NULL when
 * the set has more than REP_STACKS stacks or REP_SETS sets have classes already. */
static poot_status byte_reps(poot_grammar_matcher *m, uint32_t sid, const uint8_t **out) {
  *out = NULL;
  const srec *r = &m->srecs[sid];
  if (r->rep) {
    *out = m->reps + (size_t)(r->rep - 1) * 256;
    return POOT_OK_STATUS;
  }
  if (r->n > REP_STACKS || m->n_reps >= REP_SETS || m->srecs[sid].fresh++ < REP_AFTER)
    return POOT_OK_STATUS;
  if (m->n_reps == m->cap_reps) {
    uint32_t cap = m->cap_reps ? m->cap_reps * 2 : 64;
    uint8_t *p = poot_realloc_array(m->reps, (size_t)cap * 256, 1);
    if (!p) return fail_status(FAIL_OOM, "the mask cache");
    m->reps = p;
    m->cap_reps = cap;
  }
  uint64_t sig[256] = {0}, cls[256];
  for (uint32_t i = 0; i < r->n; i++) { /* tops are byte elements */
    const gel *e = &m->g->el[m->nodes[m->sids[r->off + i]].pos];
    if (e->type == GEL_RANGE) {
      for (unsigned b = e->lo; b <= e->hi; b++) sig[b] |= 1ull << i;
      continue;
    }
    for (unsigned w = 0; w < 8; w++)
      for (uint32_t bits = m->g->sets[e->value].bits[w]; bits; bits &= bits - 1)
        sig[w * 32 + (unsigned)__builtin_ctz(bits)] |= 1ull << i;
  }
  uint8_t *rp = m->reps + (size_t)m->n_reps * 256, first[256];
  unsigned nc = 0;
  for (unsigned b = 0; b < 256; b++) {
    if (b && sig[b] == sig[b - 1]) { /* inside a range */
      rp[b] = rp[b - 1];
      continue;
    }
    unsigned j = 0;
    while (j < nc && cls[j] != sig[b]) j++;
    if (j == nc) {
      cls[nc] = sig[b];
      first[nc++] = (uint8_t)b;
    }
    rp[b] = first[j];
  }
  m->srecs[sid].rep = ++m->n_reps;
  *out = rp;
  return POOT_OK_STATUS;
}

/* A transition not in the cache: the class's first byte's, or computed. */
static poot_status transition(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out);
static poot_status transition_new(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  const uint8_t *rp = NULL;
  POOT_TRY(byte_reps(m, sid, &rp));
  if (rp && rp[b] != b) return transition(m, sid, rp[b], out); /* (rp[b] is its own class's) */
  return compute_step(m, sid, b, out);
}

/* A transition of one of the first DENSE_SETS sets: computed once into the dense table. */
static poot_status transition_slow(poot_grammar_matcher *m, uint32_t sid, uint8_t b,
                                   uint32_t *out) {
  if (sid >= m->dense_sets) {
    uint32_t n = m->dense_sets ? m->dense_sets * 2 : 64;
    while (n <= sid) n *= 2;
    if (n > DENSE_SETS) n = DENSE_SETS;
    uint32_t *d = poot_realloc_array(m->dense, (size_t)n * 256, sizeof *d);
    if (!d) return fail_status(FAIL_OOM, "the mask cache");
    memset(d + (size_t)m->dense_sets * 256, 0, (size_t)(n - m->dense_sets) * 256 * sizeof *d);
    m->dense = d;
    m->dense_sets = n;
  }
  POOT_TRY(transition_new(m, sid, b, out));
  m->dense[(size_t)sid * 256 + b] = *out == SID_FAIL ? 1 : *out + 2;
  return POOT_OK_STATUS;
}

/* The set after byte `b` from set `sid` (SID_FAIL past the bounds), through the cache. */
static poot_status transition(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  if (sid < m->dense_sets && m->dense[(size_t)sid * 256 + b]) {
    uint32_t v = m->dense[(size_t)sid * 256 + b];
    *out = v == 1 ? SID_FAIL : v - 2;
    return POOT_OK_STATUS;
  }
  uint64_t key = (((uint64_t)sid << 8) | b) + 1;
  if (sid < DENSE_SETS) return transition_slow(m, sid, b, out);
  if (m->t_cap) {
    uint32_t s = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & (m->t_cap - 1);
    for (; m->tkeys[s]; s = (s + 1) & (m->t_cap - 1))
      if (m->tkeys[s] == key) {
        *out = m->tvals[s];
        return POOT_OK_STATUS;
      }
  }
  POOT_TRY(transition_new(m, sid, b, out));
  return trans_put(m, key, *out);
}

static void set_tokens(const poot_grammar_vocab *v, const gtrie_node *t, uint32_t *mask) {
  for (uint32_t k = 0; k < t->tok_n; k++) {
    uint32_t id = (uint32_t)v->tok_ids[t->tok_off + k];
    mask[id >> 5] |= 1u << (id & 31);
  }
}

/* Every token of node i's subtree, i's own included. */
static void set_subtree(const poot_grammar_vocab *v, uint32_t i, uint32_t *mask) {
  for (uint32_t k = v->nodes[i].tok_off, e = poot__trie_tok_end(v, i); k < e; k++) {
    uint32_t id = (uint32_t)v->tok_ids[k];
    mask[id >> 5] |= 1u << (id & 31);
  }
}

static inline bool set_takes(const srec *r, uint8_t b) {
  return (r->bytes[b >> 5] >> (b & 31)) & 1u;
}

static bool u8_live(const poot_grammar_matcher *m, uint32_t sid) {
  return sid != SID_FAIL && m->srecs[sid].n && !m->srecs[sid].left;
}

/* A set's chain, once per set: the ASCII byte groups whose every byte leads to one live set,
 * chain_next (tried first: the target of 'a', '0', 'A', ' ', then any byte). Inside a string
 * chain_next is the set itself (a loop); inside `x{0,120}` it is the next count. */
static poot_status chain_info(poot_grammar_matcher *m, uint32_t sid, uint32_t *groups,
                              uint32_t *next) {
  static const uint8_t first[] = {'a', '0', 'A', ' '};
  if (!m->srecs[sid].chain_done) {
    uint32_t t = SID_FAIL, ok = 0;
    for (unsigned i = 0; i < 4 + 128 && t == SID_FAIL; i++) {
      uint8_t b = i < 4 ? first[i] : (uint8_t)(i - 4);
      if (!set_takes(&m->srecs[sid], b)) continue;
      POOT_TRY(transition(m, sid, b, &t));
      if (!u8_live(m, t)) t = SID_FAIL;
    }
    if (t != SID_FAIL) {
      ok = (1u << POOT_BYTE_HIGH_GROUP) - 1;
      for (unsigned b = 0; b < 128; b++) {
        uint32_t gb = 1u << poot__byte_group((uint8_t)b), x = SID_FAIL;
        if (!(ok & gb)) continue;
        if (set_takes(&m->srecs[sid], (uint8_t)b)) POOT_TRY(transition(m, sid, (uint8_t)b, &x));
        if (x != t) ok &= ~gb;
      }
    }
    uint32_t taken = 0;
    for (unsigned w = 0; w < 8; w++)
      for (uint32_t bits = m->srecs[sid].bytes[w]; bits; bits &= bits - 1)
        taken |= 1u << poot__byte_group((uint8_t)(w * 32 + (unsigned)__builtin_ctz(bits)));
    m->srecs[sid].taken_groups = taken;
    m->srecs[sid].chain_groups = ok;
    m->srecs[sid].chain_next = t;
    m->srecs[sid].chain_done = true;
  }
  *groups = m->srecs[sid].chain_groups;
  *next = m->srecs[sid].chain_next;
  return POOT_OK_STATUS;
}

/* Sets from which every run of continuation bytes was seen to lead home (u8_cont). */
typedef struct u8memo {
  uint32_t sid[3][16];
  uint32_t n[3];
} u8memo;

/* Whether from `sid` every `k` continuation bytes (the first in [lo, hi], the rest in
 * 80 … BF) lead back to `home` through live sets. */
static poot_status u8_cont(poot_grammar_matcher *m, uint32_t home, uint32_t sid, uint32_t k,
                           uint8_t lo, uint8_t hi, u8memo *memo, bool *ok) {
  bool plain = lo == 0x80 && hi == 0xBF;
  for (uint32_t i = 0; plain && i < memo->n[k - 1]; i++)
    if (memo->sid[k - 1][i] == sid) {
      *ok = true;
      return POOT_OK_STATUS;
    }
  *ok = false;
  for (unsigned c = lo; c <= hi; c++) {
    uint32_t t = SID_FAIL;
    if (!set_takes(&m->srecs[sid], (uint8_t)c)) return POOT_OK_STATUS;
    POOT_TRY(transition(m, sid, (uint8_t)c, &t));
    if (k == 1 ? t != home : !u8_live(m, t)) return POOT_OK_STATUS;
    if (k > 1) {
      POOT_TRY(u8_cont(m, home, t, k - 1, 0x80, 0xBF, memo, ok));
      if (!*ok) return POOT_OK_STATUS;
    }
  }
  if (plain && memo->n[k - 1] < 16) memo->sid[k - 1][memo->n[k - 1]++] = sid;
  *ok = true;
  return POOT_OK_STATUS;
}

/* Whether every well-formed UTF-8 character >= U+0080 leads set `sid` to its chain_next
 * (itself, for a loop) through live sets, once per set. */
static poot_status utf8_loops(poot_grammar_matcher *m, uint32_t sid, bool *out) {
  static const struct {
    uint8_t first, last, need, lo, hi;
  } leads[] = {{0xC2, 0xDF, 1, 0x80, 0xBF}, {0xE0, 0xE0, 2, 0xA0, 0xBF},
               {0xE1, 0xEC, 2, 0x80, 0xBF}, {0xED, 0xED, 2, 0x80, 0x9F},
               {0xEE, 0xEF, 2, 0x80, 0xBF}, {0xF0, 0xF0, 3, 0x90, 0xBF},
               {0xF1, 0xF3, 3, 0x80, 0xBF}, {0xF4, 0xF4, 3, 0x80, 0x8F}};
  if (m->srecs[sid].u8_done) {
    *out = m->srecs[sid].u8_loops;
    return POOT_OK_STATUS;
  }
  uint32_t groups = 0, home = SID_FAIL;
  POOT_TRY(chain_info(m, sid, &groups, &home));
  u8memo memo = {0};
  bool ok = home != SID_FAIL;
  for (size_t i = 0; ok && i < sizeof leads / sizeof *leads; i++)
    for (unsigned b = leads[i].first; ok && b <= leads[i].last; b++) {
      uint32_t t = SID_FAIL;
      ok = set_takes(&m->srecs[sid], (uint8_t)b);
      if (ok) POOT_TRY(transition(m, sid, (uint8_t)b, &t));
      ok = ok && u8_live(m, t);
      if (ok) POOT_TRY(u8_cont(m, home, t, leads[i].need, leads[i].lo, leads[i].hi, &memo, &ok));
    }
  m->srecs[sid].u8_done = true;
  m->srecs[sid].u8_loops = ok;
  *out = ok;
  return POOT_OK_STATUS;
}

/* Whether every token below node `t`, reached with live set `sid`, is accepted along the
 * set's chain: each ASCII byte below in the chain groups of the set it meets, every UTF-8
 * character >= U+0080 leading that set to the next (utf8_loops; the bytes below must be
 * well-formed), for as many characters as the subtree has bytes (a loop ends it at once).
 * When not, *upto is the chain's length h when it ends in a set that takes no byte of the
 * subtree's groups: then the tokens up to h bytes below `t` are accepted (every set of the
 * chain is live) and every longer one is refused (its byte h + 1 is not taken), as at the
 * end of `x{0,5}`; UINT32_MAX otherwise. */
static poot_status all_loop(poot_grammar_matcher *m, const gtrie_node *t, uint32_t sid, bool *out,
                            uint32_t *upto) {
  const uint32_t high = 1u << POOT_BYTE_HIGH_GROUP;
  *out = false;
  *upto = UINT32_MAX;
  if (!t->sig || ((t->sig & high) && !t->utf8_ok) || t->height > 256) return POOT_OK_STATUS;
  uint32_t x = sid;
  for (uint32_t h = 0; h < t->height; h++) {
    uint32_t groups = 0, next = SID_FAIL;
    bool u8 = true;
    POOT_TRY(chain_info(m, x, &groups, &next));
    bool chained = next != SID_FAIL && !(t->sig & ~(groups | high));
    if (chained && (t->sig & high)) { /* characters only in loops */
      chained = next == x;
      if (chained) POOT_TRY(utf8_loops(m, x, &u8));
      chained = chained && u8;
    }
    if (!chained) {
      if (!(t->sig & m->srecs[x].taken_groups)) *upto = h;
      return POOT_OK_STATUS;
    }
    if (next == x) break; /* a loop: the rest stays here */
    x = next;
  }
  *out = true;
  return POOT_OK_STATUS;
}

/* Every token of node i's subtree at most `upto` bytes below i (all_loop): into `mask`, or
 * with key_accept when mask is NULL. */
static void key_accept(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lo,
                       uint32_t hi);
static void accept_upto(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t i,
                        uint32_t upto, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  uint32_t end = tn[i].end, limit = tn[i].depth + upto;
  for (uint32_t j = i; j < end;) {
    if (mask)
      set_tokens(v, &tn[j], mask);
    else
      key_accept(m, v, tn[j].tok_off, tn[j].tok_off + tn[j].tok_n);
    j = tn[j].depth < limit ? j + 1 : tn[j].end;
  }
}

/* Walks the subtree of trie node `node` (whose prefix leads to set `sid`; its own tokens
 * are the caller's) depth first with the stack set of each prefix; a subtree is entered
 * only while some stack survives, so a refused prefix is refused once for all tokens.
 * Sets are interned and transitions cached, so a step seen before costs one lookup. */
static poot_status walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t node,
                        uint32_t sid0, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  m->frames[0] = (mframe){.node = node, .child = node + 1, .sid = sid0};
  size_t d = 1;
  while (d) {
    mframe *f = &m->frames[d - 1];
    if (f->child >= tn[f->node].end) {
      d--;
      continue;
    }
    uint32_t ch = f->child, sid = 0;
    f->child = tn[ch].end;
    if (!set_takes(&m->srecs[f->sid], tn[ch].byte)) continue;
    POOT_TRY(transition(m, f->sid, tn[ch].byte, &sid));
    if (sid == SID_FAIL) continue; /* past the bounds: these tokens are refused */
    bool bulk = false;
    uint32_t upto = UINT32_MAX;
    if (m->srecs[sid].n && ch + 1 < tn[ch].end) POOT_TRY(all_loop(m, &tn[ch], sid, &bulk, &upto));
    const srec *r = &m->srecs[sid];
    if (bulk) {
      set_subtree(v, ch, mask);
      continue;
    }
    if (upto != UINT32_MAX) {
      accept_upto(m, v, ch, upto, mask);
      continue;
    }
    if (r->n || r->accept) set_tokens(v, &tn[ch], mask);
    if (r->n && ch + 1 < tn[ch].end)
      m->frames[d++] = (mframe){.node = ch, .child = ch + 1, .sid = sid};
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------ lexical-context keys
 *
 * Most of a mask's cost is a state never seen before whose stacks let most of the
 * vocabulary through: inside a string, the state differs with every enclosing object, yet
 * what the tokens do inside the string does not. So the state is cut: every stack keeps
 * its nodes deeper than `cut` (one level above the shallowest top; two when that leaves more
 * than UNC_DEEPER uncertain nodes, as right after the quote of `x{1,40}`), and the nodes
 * at depth `cut` become opaque sentinels. The cut state is walked over the vocabulary once
 * (in the private matcher `ctx`, whose sets carry `left` when a stack reached a sentinel on
 * that byte) into a key: the tokens that some stack consumes without reaching a sentinel
 * are accepted whatever lies below; a prefix on which no stack survives or reaches one is
 * refused; the subtrees where one first reached a sentinel are uncertain and walked in full
 * from the real state. The cut keeps the stacks' count (distinct nodes stay distinct: the
 * cut is at one depth for all), their expansions and failures, so the key is exact as long
 * as the real depths stay inside max_depth, which is checked (hi_depth). */

static void ctx_drop(poot_grammar_matcher *m) {
  poot_grammar_matcher_destroy(m->ctx);
  m->ctx = NULL;
  m->n_keys = 0;
  m->n_kdata = 0;
}

/* Stacks in a canonical order: by their positions above the cut, top first. */
static int cmp_stacks(const gnode *nodes, uint32_t a, uint32_t b, uint32_t cut) {
  while (a != NIL && b != NIL && nodes[a].depth > cut && nodes[b].depth > cut) {
    if (nodes[a].pos != nodes[b].pos) return nodes[a].pos < nodes[b].pos ? -1 : 1;
    a = nodes[a].parent;
    b = nodes[b].parent;
  }
  bool ea = a == NIL || nodes[a].depth <= cut, eb = b == NIL || nodes[b].depth <= cut;
  return ea == eb ? 0 : ea ? -1 : 1;
}

/* One stack's part above the cut into the context matcher, over sentinel `sent`. */
static poot_status cut_stack(poot_grammar_matcher *m, ectx *c, uint32_t id, uint32_t cut,
                             uint32_t base) {
  uint32_t n = 0;
  for (uint32_t x = id; x != NIL && m->nodes[x].depth > cut; x = m->nodes[x].parent) n++;
  POOT_TRY(reserve_u32(&m->scratch, &m->scratch_cap, n));
  n = 0;
  for (uint32_t x = id; x != NIL && m->nodes[x].depth > cut; x = m->nodes[x].parent)
    m->scratch[n++] = m->nodes[x].pos;
  uint32_t y = base;
  while (n && !c->fail) {
    uint32_t pos = m->scratch[--n];
    if (m->canon) {
      m->cut_chainy = m->cut_chainy || m->chainy[pos];
      pos = m->canon[pos];
    }
    y = mk(c, pos, y);
  }
  if (!c->fail) add(c, y);
  return POOT_OK_STATUS;
}

/* The state cut at `*out_cut` as a set of the context matcher; SID_FAIL when it cannot be
 * (too many distinct sentinels, bounds). */
static poot_status cut_state(poot_grammar_matcher *m, uint32_t levels, uint32_t *out_lsid,
                             uint32_t *out_cut) {
  poot_grammar_matcher *cm = m->ctx;
  uint32_t min_d = UINT32_MAX, *st = m->tmp_b, n = m->n_cur;
  m->cut_chainy = false;
  *out_lsid = SID_FAIL;
  for (uint32_t i = 0; i < n; i++)
    if (m->nodes[m->cur[i]].depth < min_d) min_d = m->nodes[m->cur[i]].depth;
  uint32_t cut = min_d > levels ? min_d - levels : 0;
  *out_cut = cut;
  memcpy(st, m->cur, n * sizeof *st);
  for (uint32_t i = 1; i < n; i++) /* insertion sort: states are small */
    for (uint32_t j = i; j > 0 && cmp_stacks(m->nodes, st[j - 1], st[j], cut) > 0; j--) {
      uint32_t t = st[j];
      st[j] = st[j - 1];
      st[j - 1] = t;
    }
  uint32_t sent[MAX_SENTINELS], n_sent = 0;
  ectx c = {.m = cm, .out = cm->tmp_a};
  for (uint32_t i = 0; i < n && !c.fail; i++) {
    uint32_t base = NIL;
    if (cut) {
      uint32_t x = st[i], j = 0;
      while (m->nodes[x].depth > cut) x = m->nodes[x].parent;
      while (j < n_sent && sent[j] != x) j++;
      if (j == MAX_SENTINELS) return POOT_OK_STATUS;
      if (j == n_sent) sent[n_sent++] = x;
      base = mk(&c, m->g->n_el + j, NIL);
      if (c.fail) break;
    }
    POOT_TRY(cut_stack(m, &c, st[i], cut, base));
  }
  if (c.fail == FAIL_OOM) return fail_status(c.fail, "the mask");
  if (c.fail) return POOT_OK_STATUS;
  return intern(cm, c.out, c.n_out, m->accept, false, out_lsid);
}

/* Tokens tok_ids[lo .. hi) are accepted in the context walk. */
static void key_accept(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lo,
                       uint32_t hi) {
  if (!m->kdense && m->n_klist + (hi - lo) >= m->kacc_words) { /* the list would be larger */
    for (size_t i = 0; i < m->n_klist; i++) m->kacc[m->klist[i] >> 5] |= 1u << (m->klist[i] & 31);
    m->kdense = true;
  }
  for (uint32_t k = lo; k < hi; k++) {
    uint32_t id = (uint32_t)v->tok_ids[k];
    if (m->kdense)
      m->kacc[id >> 5] |= 1u << (id & 31);
    else
      m->klist[m->n_klist++] = id;
  }
}

/* The context walk of cut state `lsid` over the whole vocabulary (see above): the accepted
 * tokens into klist or kacc, the uncertain nodes into m->kunc (*n_unc). */
static poot_status key_walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lsid,
                            uint32_t horizon, uint32_t *n_unc) {
  poot_grammar_matcher *cm = m->ctx;
  const gtrie_node *tn = v->nodes;
  m->frames[0] = (mframe){.node = 0, .child = 1, .sid = lsid};
  size_t d = 1;
  *n_unc = 0;
  while (d) {
    mframe *f = &m->frames[d - 1];
    if (f->child >= tn[f->node].end) {
      d--;
      continue;
    }
    uint32_t ch = f->child, sid = 0;
    f->child = tn[ch].end;
    if (d > horizon) { /* past the horizon the cut state may differ from the real one */
      POOT_TRY(reserve_u32(&m->kunc, &m->cap_kunc, *n_unc + 1));
      m->kunc[(*n_unc)++] = ch;
      continue;
    }
    if (!set_takes(&cm->srecs[f->sid], tn[ch].byte)) continue;
    POOT_TRY(transition(cm, f->sid, tn[ch].byte, &sid));
    if (sid == SID_FAIL) continue; /* as in the real state: the same stacks fail */
    bool bulk = false;
    uint32_t upto = UINT32_MAX;
    if (!cm->srecs[sid].left && cm->srecs[sid].n && ch + 1 < tn[ch].end &&
        d + tn[ch].height <= horizon)
      POOT_TRY(all_loop(cm, &tn[ch], sid, &bulk, &upto));
    if (bulk) {
      key_accept(m, v, tn[ch].tok_off, poot__trie_tok_end(v, ch));
      continue;
    }
    if (upto != UINT32_MAX) {
      accept_upto(m, v, ch, upto, NULL);
      continue;
    }
    const srec *r = &cm->srecs[sid];
    if (r->left) {
      POOT_TRY(reserve_u32(&m->kunc, &m->cap_kunc, *n_unc + 1));
      m->kunc[(*n_unc)++] = ch;
      continue;
    }
    if (r->n || r->accept) key_accept(m, v, tn[ch].tok_off, tn[ch].tok_off + tn[ch].tok_n);
    if (r->n && ch + 1 < tn[ch].end)
      m->frames[d++] = (mframe){.node = ch, .child = ch + 1, .sid = sid};
  }
  return POOT_OK_STATUS;
}

/* The uncertain subtrees of `k`, walked in full from the real state `root`: a descent
 * from the trie's root to each (they are in preorder), then the subtree. */
static poot_status guided_walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t root,
                               const mkey *k, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  mframe *path = m->frames + m->frames_cap / 2;
  path[0] = (mframe){.node = 0, .child = 1, .sid = root};
  size_t d = 1;
  const uint32_t *unc = m->kdata + k->unc_off;
  for (uint32_t i = 0; i < k->n_unc; i++) {
    uint32_t u = unc[i];
    while (d > 1 && !(path[d - 1].node < u && u < tn[path[d - 1].node].end)) d--;
    for (;;) {
      mframe *f = &path[d - 1];
      if (f->sid == SID_FAIL) break; /* no stack continues this prefix */
      uint32_t ch = f->child, sid = SID_FAIL;
      while (tn[ch].end <= u) ch = tn[ch].end;
      f->child = tn[ch].end;
      if (set_takes(&m->srecs[f->sid], tn[ch].byte))
        POOT_TRY(transition(m, f->sid, tn[ch].byte, &sid));
      if (ch == u) {
        if (sid == SID_FAIL) break;
        const srec *r = &m->srecs[sid];
        bool more = r->n != 0;
        if (r->n || r->accept) set_tokens(v, &tn[u], mask);
        if (more && u + 1 < tn[u].end) POOT_TRY(walk(m, v, u, sid, mask));
        break;
      }
      if (sid != SID_FAIL && m->srecs[sid].n == 0) sid = SID_FAIL;
      path[d++] = (mframe){.node = ch, .child = ch + 1, .sid = sid};
    }
  }
  return POOT_OK_STATUS;
}

/* Stores the walk's result (m->kacc, m->kunc) as the key of `lsid`: the accepted tokens as
 * a list when that is smaller than a mask. */
static poot_status store_key(poot_grammar_matcher *m, uint32_t lsid, size_t words, uint32_t n_unc) {
  bool dense = m->kdense;
  size_t acc_len = dense ? words : m->n_klist;
  if (m->n_keys == m->cap_keys) {
    uint32_t cap = m->cap_keys ? m->cap_keys * 2 : 64;
    mkey *k = poot_realloc_array(m->keys, cap, sizeof *k);
    if (!k) return fail_status(FAIL_OOM, "the mask's context cache");
    m->keys = k;
    m->cap_keys = cap;
  }
  POOT_TRY(reserve_u32(&m->kdata, &m->cap_kdata, m->n_kdata + acc_len + n_unc + 1));
  mkey *k = &m->keys[m->n_keys];
  *k = (mkey){.acc_off = (uint32_t)m->n_kdata,
              .n_acc = (uint32_t)acc_len,
              .dense = dense,
              .exact = !m->ctx->pool_full};
  uint32_t *out = m->kdata + m->n_kdata;
  if (dense) {
    memcpy(out, m->kacc, words * sizeof *out);
    memset(m->kacc, 0, words * sizeof *m->kacc);
  } else {
    if (m->n_klist) memcpy(out, m->klist, m->n_klist * sizeof *out);
  }
  k->unc_off = (uint32_t)(m->n_kdata + acc_len);
  k->n_unc = n_unc;
  if (n_unc) memcpy(m->kdata + k->unc_off, m->kunc, n_unc * sizeof *m->kunc);
  m->n_kdata += acc_len + n_unc;
  m->ctx->srecs[lsid].key = ++m->n_keys;
  return POOT_OK_STATUS;
}

/* The key of cut state `lsid`, made by a context walk when it has none. NULL when the walk
 * could not be exact. */
static poot_status find_key(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lsid,
                            uint32_t horizon, size_t words, const mkey **out) {
  *out = NULL;
  uint32_t key = m->ctx->srecs[lsid].key;
  if (!key) {
    if (m->kacc_words != words) {
      poot_free(m->kacc);
      poot_free(m->klist);
      m->kacc = poot_calloc(words ? words : 1, sizeof *m->kacc);
      m->klist = poot_malloc((words ? words : 1) * sizeof *m->klist);
      m->kacc_words = m->kacc && m->klist ? words : 0;
      if (!m->kacc_words) return fail_status(FAIL_OOM, "the mask's context cache");
    }
    m->n_klist = 0;
    m->kdense = false;
    uint32_t n_unc = 0;
    poot_status st = key_walk(m, v, lsid, horizon, &n_unc);
    if (!st) st = store_key(m, lsid, words, n_unc);
    if (st) {
      if (m->kdense) memset(m->kacc, 0, words * sizeof *m->kacc); /* kept zero between walks */
      return st;
    }
    key = m->n_keys;
  }
  if (m->keys[key - 1].exact) *out = &m->keys[key - 1];
  return POOT_OK_STATUS;
}

/* Whether element `e` surely consumes a byte: a byte element, or a rule whose every
 * alternative starts with such an element (`depth` bounds the search; left recursion was
 * refused, so it ends anyway). */
static bool consumes(const poot_grammar *g, const gel *e, int depth) {
  if (e->type == GEL_RANGE || e->type == GEL_SET) return true;
  if (e->type != GEL_RULE || depth == 0) return false;
  for (uint32_t a = g->rule_alt[e->value]; a < g->rule_alt[e->value + 1]; a++)
    if (!consumes(g, &g->el[g->alt_start[a]], depth - 1)) return false;
  return true;
}

/* Whether rule `r` is one count of a repetition, `O ::= x O' | ε` or `O ::= x | ε` (the
 * parser's x{m,n}) with x one element that consumes a byte: *full is the position of x,
 * *next the rule O' (NIL at the last count). */
static bool count_rule(const poot_grammar *g, uint32_t r, uint32_t *full, uint32_t *next) {
  uint32_t a = g->rule_alt[r];
  if (g->rule_alt[r + 1] - a != 2) return false;
  uint32_t s0 = g->alt_start[a], s1 = g->alt_start[a + 1];
  if (g->el[s0].type != GEL_END && g->el[s1].type != GEL_END) return false;
  uint32_t f = g->el[s0].type == GEL_END ? s1 : s0;
  const gel *e = &g->el[f], *e2 = &g->el[f + 1];
  if (e->type == GEL_END || !consumes(g, e, 8)) return false;
  *full = f;
  if (e2->type == GEL_END) {
    *next = NIL;
    return true;
  }
  *next = e2->value;
  return e2->type == GEL_RULE && g->el[f + 2].type == GEL_END;
}

static bool same_gel(const gel *a, const gel *b) {
  return a->type == b->type && a->lo == b->lo && a->hi == b->hi && a->value == b->value;
}

/* Inline copies (x{1000} is 1,000 x in one alternative): a position with more than
 * CHAIN_CAP copies of its element left counts as the one with CHAIN_CAP left, as the counts
 * below do. Marks m->canon and m->chainy when `mark`; returns whether there are any. */
static bool copies_map(poot_grammar_matcher *m, bool mark) {
  const poot_grammar *g = m->g;
  bool any = false;
  for (uint32_t p = 0; p < g->n_el;) {
    uint32_t q = p + 1;
    if (g->el[p].type == GEL_END || !consumes(g, &g->el[p], 8)) {
      p = q;
      continue;
    }
    while (q < g->n_el && same_gel(&g->el[p], &g->el[q])) q++;
    if (q - p > CHAIN_CAP) {
      any = true;
      for (uint32_t i = p; mark && i + CHAIN_CAP <= q; i++) {
        m->canon[i] = q - CHAIN_CAP;
        m->chainy[i] = 1;
      }
    }
    p = q;
  }
  return any;
}

/* Maps the counts of long repetitions onto one: every count `O_k ::= x O_(k-1) | ε` with
 * k > CHAIN_CAP counts as O_CHAIN_CAP in a cut state. A token of fewer than CHAIN_CAP bytes
 * takes fewer than CHAIN_CAP more x (each takes a byte), so from O_k and from O_CHAIN_CAP it
 * meets the same stacks, one for one; the context walk of such a cut state stops at
 * CHAIN_CAP - 1 bytes and leaves longer tokens uncertain (walked from the real state). */
static poot_status chains_find(poot_grammar_matcher *m) {
  const poot_grammar *g = m->g;
  m->chains_done = true;
  uint32_t *count = poot_calloc(g->n_rules, sizeof *count); /* a count's k; 0: not a count */
  if (!count) return fail_status(FAIL_OOM, "the grammar's repetition counts");
  bool any = false;
  for (uint32_t r = 0; r < g->n_rules; r++) {
    uint32_t f0 = 0, x = NIL, k = 1;
    if (!count_rule(g, r, &f0, &x)) continue;
    while (x != NIL && k) { /* down the chain to its last count */
      uint32_t f = 0, nx = NIL;
      bool same = k <= g->n_rules && count_rule(g, x, &f, &nx) && same_gel(&g->el[f0], &g->el[f]);
      k = same ? k + 1 : 0; /* not one x all the way down, or a cycle (x* written so) */
      x = nx;
    }
    count[r] = k;
    any = any || k > CHAIN_CAP;
  }
  any = any || copies_map(m, false);
  poot_status st = POOT_OK_STATUS;
  if (any) {
    m->canon = poot_malloc((size_t)g->n_el * sizeof *m->canon);
    m->chainy = poot_calloc(g->n_el, 1);
    if (!m->canon || !m->chainy) {
      poot_free(m->canon);
      poot_free(m->chainy);
      m->canon = NULL;
      m->chainy = NULL;
      st = fail_status(FAIL_OOM, "the grammar's repetition counts");
    }
  }
  if (any && !st) {
    for (uint32_t p = 0; p < g->n_el; p++) m->canon[p] = p;
    (void)copies_map(m, true);
    for (uint32_t r = 0; r < g->n_rules; r++) {
      if (count[r] < CHAIN_CAP) continue;
      uint32_t full = 0, next = NIL, c = r;
      for (uint32_t k = count[r]; k > CHAIN_CAP; k--) { /* down to the count CHAIN_CAP */
        (void)count_rule(g, c, &full, &next);
        c = next;
      }
      uint32_t fr = 0, fc = 0;
      (void)count_rule(g, r, &fr, &next);
      (void)count_rule(g, c, &fc, &next);
      for (uint32_t i = 0; i < 2 && g->el[fr + i].type != GEL_END; i++) {
        m->canon[fr + i] = fc + i;
        m->chainy[fr + i] = 1;
      }
    }
  }
  poot_free(count);
  return st;
}

/* The context matcher, made or started afresh when its caches are past their bounds. */
static poot_status ctx_ready(poot_grammar_matcher *m) {
  if (!m->chains_done) POOT_TRY(chains_find(m));
  poot_grammar_matcher *cm = m->ctx;
  if (cm && (cm->n_srec > (1u << 20) || cm->n_sids > (1u << 23) || cm->n_nodes > MAX_POOL / 2 ||
             cm->pool_full || m->n_keys >= KEY_MAX || m->n_kdata > KEY_DATA_MAX))
    ctx_drop(m);
  if (!m->ctx) {
    m->ctx = matcher_alloc(m->g);
    if (!m->ctx) return fail_status(FAIL_OOM, "the mask's context matcher");
  }
  return POOT_OK_STATUS;
}

/* The key of `t`'s state cut with m's context (t is m, or prepare's scratch matcher): cut one
 * level above the shallowest stack, or two when one leaves most tokens uncertain. NULL when
 * none applies. */
static poot_status state_key(poot_grammar_matcher *m, poot_grammar_matcher *t,
                             const poot_grammar_vocab *v, size_t words, const mkey **out,
                             uint32_t *out_cut) {
  *out = NULL;
  uint32_t first = SID_FAIL; /* the cut state whose key is in *out */
  for (uint32_t levels = 1; levels <= 2; levels++) {
    uint32_t lsid = SID_FAIL, cut = 0;
    const mkey *k = NULL;
    if (t != m) {
      t->ctx = m->ctx;
      t->canon = m->canon;
      t->chainy = m->chainy;
    }
    poot_status st = cut_state(t, levels, &lsid, &cut);
    if (t != m) {
      t->ctx = NULL;
      t->canon = NULL;
      t->chainy = NULL;
    }
    POOT_TRY(st);
    if (lsid != SID_FAIL)
      POOT_TRY(find_key(m, v, lsid, t->cut_chainy ? CHAIN_CAP - 1 : UINT32_MAX, words, &k));
    if (!k) break; /* keep the one-level key, if any */
    *out = k;
    *out_cut = cut;
    first = lsid;
    if (k->n_unc <= UNC_DEEPER || t->cut_chainy) return POOT_OK_STATUS; /* (its horizon) */
  }
  if (*out && first != SID_FAIL) /* find_key may have moved the keys */
    *out = &m->keys[m->ctx->srecs[first].key - 1];
  return POOT_OK_STATUS;
}

/* The mask through the state's context key; *done false when it does not apply. */
static poot_status key_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t root,
                            uint32_t *mask, size_t words, bool *done) {
  *done = false;
  if (m->n_cur == 0) return POOT_OK_STATUS;
  POOT_TRY(ctx_ready(m));
  uint32_t cut = 0;
  const mkey *k = NULL;
  POOT_TRY(state_key(m, m, v, words, &k, &cut));
  /* The real depths are the context's less one (its sentinels) plus the cut. */
  if (!k || (cut && m->ctx->hi_depth - 1 + cut > m->g->max_depth)) return POOT_OK_STATUS;
  const uint32_t *acc = m->kdata + k->acc_off;
  if (k->dense) {
    memcpy(mask, acc, words * sizeof *mask);
  } else {
    memset(mask, 0, words * sizeof *mask);
    for (uint32_t i = 0; i < k->n_acc; i++) mask[acc[i] >> 5] |= 1u << (acc[i] & 31);
  }
  POOT_TRY(guided_walk(m, v, root, k, mask));
  *done = true;
  return POOT_OK_STATUS;
}

static poot_status prepare_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v, size_t need) {
  size_t levels = (size_t)v->max_len + 2;
  if (m->frames_cap < 2 * levels) {
    mframe *f = poot_realloc_array(m->frames, 2 * levels, sizeof *f);
    if (!f) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (mask walk)");
    m->frames = f;
    m->frames_cap = 2 * levels;
  }
  /* The cache grows with the distinct sets seen; start afresh past a few million. */
  if (m->n_srec > (1u << 20) || m->n_sids > (1u << 23)) clear_cache(m);
  if (m->mc_vocab != v || m->mc_words != need) {
    for (uint32_t i = 0; i < MASK_CACHE; i++) {
      poot_free(m->mc_mask[i]);
      m->mc_mask[i] = NULL;
    }
    m->mc_n = 0;
    ctx_drop(m); /* the keys hold token ids and trie nodes of the old vocabulary */
  }
  m->mc_vocab = v;
  m->mc_words = need;
  return POOT_OK_STATUS;
}

poot_status poot_grammar_matcher_fill_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v,
                                           uint32_t *mask, size_t mask_words) {
  if (!m || !v || !mask)
    return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher, vocab or mask is NULL");
  size_t need = poot_grammar_vocab_mask_words(v);
  if (mask_words < need)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar: the mask has %zu words; the vocabulary of %d tokens needs "
                            "%zu",
                            mask_words, v->n_tokens, need);
  POOT_TRY(prepare_mask(m, v, need));
  uint32_t root = 0;
  memcpy(m->tmp_b, m->cur, m->n_cur * sizeof *m->cur);
  POOT_TRY(intern(m, m->tmp_b, m->n_cur, m->accept, false, &root));
  m->cache_top = m->n_nodes;
  uint32_t hit = 0;
  while (hit < m->mc_n && m->mc_sid[hit] != root) hit++;
  if (hit < m->mc_n) {
    memcpy(mask, m->mc_mask[hit], need * sizeof *mask);
  } else {
    bool done = false;
    POOT_TRY(key_mask(m, v, root, mask, need, &done));
    if (!done) {
      memset(mask, 0, need * sizeof *mask);
      POOT_TRY(walk(m, v, 0, root, mask));
    }
    uint32_t slot = m->mc_n < MASK_CACHE ? m->mc_n : m->mc_next++ % MASK_CACHE;
    if (!m->mc_mask[slot]) m->mc_mask[slot] = poot_malloc((need ? need : 1) * sizeof *mask);
    if (m->mc_mask[slot]) { /* the cache is an optimisation: no memory, no entry */
      memcpy(m->mc_mask[slot], mask, need * sizeof *mask);
      m->mc_sid[slot] = root;
      if (m->mc_n < MASK_CACHE) m->mc_n++;
    }
  }
  if (m->accept)
    for (size_t i = 0; i < v->n_eog; i++) {
      uint32_t id = (uint32_t)v->eog[i];
      mask[id >> 5] |= 1u << (id & 31);
    }
  return POOT_OK_STATUS;
}

/* The state at position `p` (a byte element or a rule to expand), everything below cut by a
 * sentinel, into `t`'s (emptied) pool as its state; false when it is empty or past the
 * bounds. */
static bool state_at(poot_grammar_matcher *t, uint32_t p) {
  const poot_grammar *g = t->g;
  truncate_pool(t, 0);
  ectx c = {.m = t, .out = t->cur};
  uint32_t base = mk(&c, g->n_el, NIL);
  uint32_t x = c.fail ? NIL : mk(&c, p, base);
  if (!c.fail) expand(&c, x);
  if (c.fail || c.n_out == 0) return false;
  t->n_cur = c.n_out;
  t->accept = c.accept;
  return true;
}

/* Whether the stacks of `t`'s state take at least WIDE_BYTES distinct bytes. */
static bool state_is_wide(const poot_grammar_matcher *t) {
  const poot_grammar *g = t->g;
  uint32_t bytes[8] = {0}, n = 0;
  for (uint32_t i = 0; i < t->n_cur; i++) {
    const gel *e = &g->el[t->nodes[t->cur[i]].pos];
    for (unsigned b = 0; b < 256; b++)
      if (poot__gel_match(g, e, (uint8_t)b)) bytes[b >> 5] |= 1u << (b & 31);
  }
  for (int w = 0; w < 8; w++) n += (uint32_t)__builtin_popcount(bytes[w]);
  return n >= WIDE_BYTES;
}

/* The key of `t`'s state (made by state_at) when it is wide, cut with m's context. */
static poot_status prepare_state(poot_grammar_matcher *m, poot_grammar_matcher *t,
                                 const poot_grammar_vocab *v, size_t need) {
  if (!state_is_wide(t)) return POOT_OK_STATUS;
  const mkey *k = NULL;
  uint32_t cut = 0;
  return state_key(m, t, v, need, &k, &cut);
}

poot_status poot_grammar_matcher_prepare(poot_grammar_matcher *m, const poot_grammar_vocab *v) {
  if (!m || !v) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher or vocab is NULL");
  size_t need = poot_grammar_vocab_mask_words(v);
  POOT_TRY(prepare_mask(m, v, need));
  POOT_TRY(ctx_ready(m));
  poot_grammar_matcher *t = matcher_alloc(m->g);
  if (!t) return fail_status(FAIL_OOM, "preparing the mask");
  const poot_grammar *g = m->g;
  poot_status st = POOT_OK_STATUS;
  for (uint32_t p = 0; p < g->n_el && !st; p++) {
    uint8_t type = g->el[p].type;
    uint32_t full = 0, next = NIL;
    if ((type == GEL_RANGE || type == GEL_SET) && g->el[p + 1].type != GEL_END) {
      if (state_at(t, p + 1)) st = prepare_state(m, t, v, need); /* right after the byte */
    } else if (type == GEL_RULE && m->canon && count_rule(g, g->el[p].value, &full, &next) &&
               m->chainy[full]) {
      if (state_at(t, p)) st = prepare_state(m, t, v, need); /* a long count's first step */
    }
  }
  poot_grammar_matcher_destroy(t);
  return st;
}
