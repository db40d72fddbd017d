/* The mask walk: the vocabulary trie walked depth first with the interned stack set of each
 * prefix, the (set, byte) → set transitions cached (a dense row for the first sets, a hash
 * table past them, byte classes), and the chains that accept whole subtrees at once. */
#include <string.h>

#include "grammar_match_impl.h"

#define REP_SETS 16384u /* sets with byte classes (4 MiB) */
#define REP_STACKS 64u  /* a set of more stacks has none */
#define REP_AFTER 8u    /* classes cost about as much as 8 transitions: made at the 9th */
#define ROW_AFTER 4u    /* hash lookups before a set gets a row (corpus: 1, 4, 16, 64 tried) */
#define XMEMO_IDS ((size_t)1 << 22) /* stacks kept by the expansion memo (16 MiB) */
#define CLOSE_PAIRS 64u             /* (set, UTF-8 state) pairs a closure search visits */
#define CLOSE_NEW 16u               /* sets a closure search may make */

/* Empties the walk's cache. It costs what was used, not what was reserved: the context
 * matcher empties its cache for every cut state of a mask, and a table cleared in full
 * (4 MiB of dense transitions at most) each time was a quarter of the mask's time. */
void poot__cache_clear(poot_grammar_matcher *m) {
  uint32_t used = m->n_srec;
  m->n_rows = 0; /* (a row is zeroed when it is given) */
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
  if (m->xkeys && m->x_len) memset(m->xkeys, 0, m->x_cap * sizeof *m->xkeys);
  m->x_len = 0;
  m->n_xids = 0;
  m->n_srec = 0;
  m->n_sids = 0;
  m->t_len = 0;
  m->mc_n = 0;
  m->n_reps = 0;
}

static uint32_t hash_ids(const uint32_t *ids, uint32_t n, bool accept, bool left) {
  uint32_t h = 0x811C9DC5u ^ (accept ? 0x5bd1e995u : 0) ^ (left ? 0x27d4eb2fu : 0);
  for (uint32_t i = 0; i < n; i++) h = (h ^ ids[i]) * 0x01000193u;
  return h ^ (h >> 16);
}

static poot_status grow_cache(poot_grammar_matcher *m) {
  if (m->n_srec == m->cap_srec) {
    uint32_t cap = m->cap_srec ? m->cap_srec * 2 : 256;
    srec *r = poot_realloc_array(m->srecs, cap, sizeof *r);
    if (!r) return poot__fail_status(FAIL_OOM, "the mask cache");
    m->srecs = r;
    m->cap_srec = cap;
  }
  if (m->n_srec * 2 >= m->sb_cap) { /* rehash the set table at half full */
    uint32_t cap = m->sb_cap ? m->sb_cap * 2 : 1024;
    uint32_t *b = poot_calloc(cap, sizeof *b);
    if (!b) return poot__fail_status(FAIL_OOM, "the mask cache");
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

/* Sets bits lo .. hi of `bits` a word at a time: a string's range (20-7F, 80-BF) was a
 * loop of a hundred bytes for every new set. */
static inline void bits_set_range(uint32_t *bits, unsigned lo, unsigned hi) {
  for (unsigned w = lo >> 5; w <= hi >> 5; w++) {
    unsigned a = w == lo >> 5 ? lo & 31 : 0, b = w == hi >> 5 ? hi & 31 : 31;
    bits[w] |= (UINT32_MAX >> (31 - b)) & (UINT32_MAX << a);
  }
}

/* The id of the set `ids` (sorted here) with `accept` and `left`, interned. */
poot_status poot__set_intern(poot_grammar_matcher *m, uint32_t *ids, uint32_t n, bool accept,
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
  POOT_TRY(poot__reserve_u32(&m->sids, &m->cap_sids, m->n_sids + n + 1));
  memcpy(m->sids + m->n_sids, ids, n * sizeof *ids);
  srec *r = &m->srecs[m->n_srec];
  *r = (srec){.off = (uint32_t)m->n_sids, .n = n, .hash = h, .accept = accept, .left = left};
  for (uint32_t i = 0; i < n; i++) { /* tops are byte elements */
    const gel *e = &m->g->el[m->nodes[ids[i]].pos];
    if (e->type == GEL_SET) {
      for (int w = 0; w < 8; w++) r->bytes[w] |= m->g->sets[e->value].bits[w];
    } else {
      bits_set_range(r->bytes, e->lo, e->hi);
    }
  }
  m->n_sids += n;
  m->sbuckets[k] = ++m->n_srec;
  *out_sid = m->n_srec - 1;
  return POOT_OK_STATUS;
}

static poot_status trans_put(poot_grammar_matcher *m, uint64_t key, uint32_t val) {
  if (m->t_len * 2 >= m->t_cap) {
    uint32_t cap = m->t_cap ? m->t_cap * 2 : 4096;
    uint64_t *k = poot_calloc(cap, sizeof *k);
    uint32_t *v = poot_malloc(cap * sizeof *v);
    if (!k || !v) {
      poot_free(k);
      poot_free(v);
      return poot__fail_status(FAIL_OOM, "the mask cache");
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

static inline uint32_t memo_slot(uint32_t id, uint32_t cap) {
  return (id * 0x9E3779B1u >> 7) & (cap - 1);
}

/* Grows the expansion memo to hold one more entry and `n` more stacks; false when it cannot
 * (no memory, or past XMEMO_IDS: the memo is an optimisation, so expansions then run). */
static bool memo_reserve(poot_grammar_matcher *m, uint32_t n) {
  if (m->n_xids + n > XMEMO_IDS) return false;
  if (m->n_xids + n > m->cap_xids) {
    poot_status st = poot__reserve_u32(&m->xids, &m->cap_xids, m->n_xids + n);
    if (st) {
      poot_status_free(st);
      return false;
    }
  }
  if (m->x_len * 2 < m->x_cap) return true;
  uint32_t cap = m->x_cap ? m->x_cap * 2 : 1024;
  uint32_t *k = poot_calloc(cap, sizeof *k), *o = poot_malloc(cap * sizeof *o);
  uint16_t *xn = poot_malloc(cap * sizeof *xn);
  uint8_t *fl = poot_malloc(cap);
  if (!k || !o || !xn || !fl) {
    poot_free(k);
    poot_free(o);
    poot_free(xn);
    poot_free(fl);
    return false;
  }
  for (uint32_t i = 0; i < m->x_cap; i++) {
    if (!m->xkeys[i]) continue;
    uint32_t s = memo_slot(m->xkeys[i] - 1, cap);
    while (k[s]) s = (s + 1) & (cap - 1);
    k[s] = m->xkeys[i];
    o[s] = m->xoff[i];
    xn[s] = m->xn[i];
    fl[s] = m->xfl[i];
  }
  poot_free(m->xkeys);
  poot_free(m->xoff);
  poot_free(m->xn);
  poot_free(m->xfl);
  m->xkeys = k;
  m->xoff = o;
  m->xn = xn;
  m->xfl = fl;
  m->x_cap = cap;
  return true;
}

/* Adds an expansion's stacks and flags (1 accept, 2 left) to c, as poot__expand would:
 * poot__stack_add of the distinct stacks in their first order gives the same stacks, order and
 * capacity failure as adding them with their repeats. */
static void memo_replay(ectx *c, const uint32_t *ids, uint32_t n, uint8_t flags) {
  for (uint32_t i = 0; i < n && !c->fail; i++) poot__stack_add(c, ids[i]);
  c->accept = c->accept || (flags & 1);
  c->left = c->left || (flags & 2);
}

void poot__expand_memo(ectx *c, uint32_t id) {
  poot_grammar_matcher *m = c->m;
  if (id == NIL) { /* the empty stack */
    c->accept = true;
    return;
  }
  uint32_t s = m->x_cap ? memo_slot(id, m->x_cap) : 0;
  for (; m->x_cap && m->xkeys[s]; s = (s + 1) & (m->x_cap - 1))
    if (m->xkeys[s] == id + 1) {
      memo_replay(c, m->xn[s] ? m->xids + m->xoff[s] : NULL, m->xn[s], m->xfl[s]);
      return;
    }
  if (!m->xout) m->xout = poot_malloc(m->g->max_stacks * sizeof *m->xout);
  if (!m->xout) { /* no memory for the memo: expand in place */
    poot__expand(c, id);
    return;
  }
  ectx x = {.m = m, .out = m->xout};
  poot__expand(&x, id);
  if (x.fail) { /* past the bounds alone, so with c's stacks too (not kept: the pool may fill) */
    c->fail = x.fail;
    return;
  }
  uint8_t flags = (uint8_t)((x.accept ? 1 : 0) | (x.left ? 2 : 0));
  if (x.n_out <= UINT16_MAX && memo_reserve(m, x.n_out)) {
    s = memo_slot(id, m->x_cap);
    while (m->xkeys[s]) s = (s + 1) & (m->x_cap - 1);
    m->xkeys[s] = id + 1;
    m->xoff[s] = (uint32_t)m->n_xids;
    m->xn[s] = (uint16_t)x.n_out;
    m->xfl[s] = flags;
    if (x.n_out) memcpy(m->xids + m->n_xids, x.out, x.n_out * sizeof *x.out);
    m->n_xids += x.n_out;
    m->x_len++;
  }
  memo_replay(c, x.out, x.n_out, flags);
}

static poot_status compute_step(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  ectx c = {.m = m, .out = m->tmp_a, .memo = true};
  poot__step(&c, m->sids + m->srecs[sid].off, m->srecs[sid].n, b);
  if (c.fail == FAIL_OOM) return poot__fail_status(c.fail, "the mask");
  *out = SID_FAIL;
  if (!c.fail) POOT_TRY(poot__set_intern(m, c.out, c.n_out, c.accept, c.left, out));
  m->cache_top = m->n_nodes;
  return POOT_OK_STATUS;
}

/* The byte classes of set `sid`, made once: reps[b] is the first byte that exactly the same
 * stacks of the set take as b. poot__step() reads a byte only through which stacks take it (it
 * advances those, in order, the same way whatever the byte), so bytes of one class lead to
 * the same set and one transition serves the class: a new set costs a transition per class
 * (a JSON string's set has about a dozen) rather than one per byte the walk meets. NULL when
 * the set has more than REP_STACKS stacks or REP_SETS sets have classes already. */
static poot_status reps_make(poot_grammar_matcher *m, uint32_t sid, const uint8_t **out) {
  *out = NULL;
  const srec *r = &m->srecs[sid];
  if (r->rep) {
    *out = m->reps + (size_t)(r->rep - 1) * 256;
    return POOT_OK_STATUS;
  }
  if (r->n > REP_STACKS || m->n_reps >= REP_SETS) return POOT_OK_STATUS;
  if (m->n_reps == m->cap_reps) {
    uint32_t cap = m->cap_reps ? m->cap_reps * 2 : 64;
    uint8_t *p = poot_realloc_array(m->reps, (size_t)cap * 256, 1);
    if (!p) return poot__fail_status(FAIL_OOM, "the mask cache");
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

/* The first byte of b's class in set `sid`, or b when the set has no classes. */
static inline uint8_t class_first(const poot_grammar_matcher *m, uint32_t sid, uint8_t b) {
  uint32_t rep = m->srecs[sid].rep;
  return rep ? m->reps[(size_t)(rep - 1) * 256 + b] : b;
}

/* The byte classes of set `sid` (reps_make) once it has computed REP_AFTER transitions: a set
 * that meets fewer bytes than that is cheaper without. */
static poot_status byte_reps(poot_grammar_matcher *m, uint32_t sid, const uint8_t **out) {
  *out = NULL;
  if (!m->srecs[sid].rep && m->srecs[sid].fresh++ < REP_AFTER) return POOT_OK_STATUS;
  return reps_make(m, sid, out);
}

/* A transition not in the cache: the class's first byte's, or computed. */
static poot_status transition_new(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  const uint8_t *rp = NULL;
  POOT_TRY(byte_reps(m, sid, &rp));
  if (rp && rp[b] != b)
    return poot__transition(m, sid, rp[b], out); /* (rp[b] is its own class's) */
  return compute_step(m, sid, b, out);
}

/* Gives set `sid` a dense row (zeroed here), when one is left: its transitions are then
 * read inline (poot__transition). Those already in the hash table stay there and are copied
 * into the row as they are met. */
static poot_status row_give(poot_grammar_matcher *m, uint32_t sid) {
  if (m->n_rows == DENSE_ROWS) return POOT_OK_STATUS;
  if (m->n_rows == m->dense_rows) { /* a chunk at a time: rows are never moved */
    uint32_t *d = poot_malloc((size_t)DENSE_CHUNK * 256 * sizeof *d);
    if (!d) return poot__fail_status(FAIL_OOM, "the mask cache");
    m->dense[m->dense_rows / DENSE_CHUNK] = d;
    m->dense_rows += DENSE_CHUNK;
  }
  memset(poot__dense_entry(m, m->n_rows, 0), 0, 256 * sizeof(uint32_t));
  m->srecs[sid].row = ++m->n_rows;
  return POOT_OK_STATUS;
}

/* The hash table's entry for (sid, b), or NULL. */
static uint32_t *trans_find(const poot_grammar_matcher *m, uint64_t key) {
  if (!m->t_cap) return NULL;
  uint32_t s = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & (m->t_cap - 1);
  for (; m->tkeys[s]; s = (s + 1) & (m->t_cap - 1))
    if (m->tkeys[s] == key) return &m->tvals[s];
  return NULL;
}

/* A transition that the set's dense row (if any) does not hold: from the hash table, or
 * computed. A set gets a row once it has looked up ROW_AFTER transitions here: most sets
 * are met a few times (deep in the trie, or once per mask), and a row for every set, zeroed
 * for each new one, was 7 % of the corpus's instructions. */
poot_status poot__transition_miss(poot_grammar_matcher *m, uint32_t sid, uint8_t b, uint32_t *out) {
  uint64_t key = (((uint64_t)sid << 8) | b) + 1;
  const uint32_t *hit = trans_find(m, key);
  if (hit) {
    *out = *hit;
  } else {
    POOT_TRY(transition_new(m, sid, b, out));
    if (!m->srecs[sid].row) POOT_TRY(trans_put(m, key, *out));
  }
  srec *r = &m->srecs[sid];
  if (!r->row && ++r->looks >= ROW_AFTER) POOT_TRY(row_give(m, sid));
  if (r->row) *poot__dense_entry(m, r->row - 1, b) = *out == SID_FAIL ? 1 : *out + 2;
  return POOT_OK_STATUS;
}

void poot__set_tokens(const poot_grammar_vocab *v, const gtrie_node *t, uint32_t *mask) {
  for (uint32_t k = 0; k < t->tok_n; k++) {
    uint32_t id = (uint32_t)v->tok_ids[t->tok_off + k];
    mask[id >> 5] |= 1u << (id & 31);
  }
}

static bool u8_live(const poot_grammar_matcher *m, uint32_t sid) {
  return sid != SID_FAIL && m->srecs[sid].n && !m->srecs[sid].left;
}

/* The groups of the bytes some top of set `sid` takes, once per set. */
static uint32_t taken_groups(poot_grammar_matcher *m, uint32_t sid) {
  srec *r = &m->srecs[sid];
  if (!r->taken_done) {
    for (unsigned w = 0; w < 8; w++)
      for (uint32_t bits = r->bytes[w]; bits; bits &= bits - 1)
        r->taken_groups |= 1u << m->byte_group[w * 32 + (unsigned)__builtin_ctz(bits)];
    r->taken_done = true;
  }
  return r->taken_groups;
}

/* A set's chain start, once per set: chain_next, the live set tried first as the target of
 * 'a', '0', 'A', ' ', then of any ASCII byte (inside a string the set itself, a loop; inside
 * `x{0,120}` the next count). */
static poot_status chain_start(poot_grammar_matcher *m, uint32_t sid) {
  static const uint8_t first[] = {'a', '0', 'A', ' '};
  if (m->srecs[sid].chain_done) return POOT_OK_STATUS;
  uint32_t t = SID_FAIL;
  for (unsigned i = 0; i < 4 + 128 && t == SID_FAIL; i++) {
    uint8_t b = i < 4 ? first[i] : (uint8_t)(i - 4);
    if (!poot__set_takes(&m->srecs[sid], b)) continue;
    POOT_TRY(poot__transition(m, sid, class_first(m, sid, b), &t));
    if (!u8_live(m, t)) t = SID_FAIL;
  }
  m->srecs[sid].chain_next = t;
  m->srecs[sid].chain_done = true;
  return POOT_OK_STATUS;
}

/* Whether every byte of ASCII group `gr` leads set `sid` to its chain_next. A group of more
 * than REP_AFTER bytes makes the set's classes first (they cost less than the transitions),
 * and each byte is read as its class's first (the same transition, found in the cache). */
static poot_status group_chains(poot_grammar_matcher *m, uint32_t sid, uint32_t gr, bool *out) {
  const uint32_t *gb = m->group_bytes[gr];
  uint32_t t = m->srecs[sid].chain_next, n = m->group_n[gr];
  *out = false;
  const uint8_t *rp = NULL; /* (not kept: a later set's classes may move m->reps) */
  if (n > REP_AFTER) POOT_TRY(reps_make(m, sid, &rp));
  for (unsigned w = 0; w < 4; w++)
    for (uint32_t bits = gb[w]; bits; bits &= bits - 1) {
      uint8_t b = (uint8_t)(w * 32 + (unsigned)__builtin_ctz(bits));
      uint32_t x = SID_FAIL;
      POOT_TRY(poot__transition(m, sid, class_first(m, sid, b), &x));
      if (x != t) return POOT_OK_STATUS;
    }
  *out = true;
  return POOT_OK_STATUS;
}

/* A set's chain groups among `need` (ASCII groups), found as they are first needed and kept:
 * *groups holds those of `need` whose every byte leads to chain_next (*next, a live set);
 * the search stops at the first group of `need` that does not, which is enough for a
 * caller that needs them all. A group with a byte that no top takes settles it before any
 * transition (*next is then SID_FAIL when it was not known). */
static poot_status chain_info(poot_grammar_matcher *m, uint32_t sid, uint32_t need,
                              uint32_t *groups, uint32_t *next) {
  srec *r = &m->srecs[sid];
  *next = r->chain_done ? r->chain_next : SID_FAIL;
  *groups = r->chain_groups & need;
  if (need & r->chain_bad) return POOT_OK_STATUS;
  for (uint32_t todo = need & ~(r->chain_groups | r->chain_bad); todo; todo &= todo - 1) {
    const uint32_t *gb = m->group_bytes[__builtin_ctz(todo)];
    if ((gb[0] & ~r->bytes[0]) | (gb[1] & ~r->bytes[1]) | (gb[2] & ~r->bytes[2]) |
        (gb[3] & ~r->bytes[3])) {
      r->chain_bad |= todo & -todo;
      return POOT_OK_STATUS;
    }
  }
  /* Tested here, not in chain_start: most calls find the start known, and the call itself
   * was 8 % of the corpus's instructions. */
  if (!r->chain_done) POOT_TRY(chain_start(m, sid));
  *next = m->srecs[sid].chain_next;
  if (*next == SID_FAIL) need = 0;
  for (uint32_t todo = need & ~(m->srecs[sid].chain_groups | m->srecs[sid].chain_bad); todo;
       todo &= todo - 1) {
    uint32_t gr = (uint32_t)__builtin_ctz(todo);
    bool ok = false;
    POOT_TRY(group_chains(m, sid, gr, &ok));
    if (!ok) {
      m->srecs[sid].chain_bad |= 1u << gr;
      break;
    }
    m->srecs[sid].chain_groups |= 1u << gr;
  }
  *groups = m->srecs[sid].chain_groups & need;
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
    if (!poot__set_takes(&m->srecs[sid], (uint8_t)c)) return POOT_OK_STATUS;
    POOT_TRY(poot__transition(m, sid, (uint8_t)c, &t));
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
  POOT_TRY(chain_start(m, sid));
  uint32_t home = m->srecs[sid].chain_next;
  u8memo memo = {0};
  bool ok = home != SID_FAIL;
  for (size_t i = 0; ok && i < sizeof leads / sizeof *leads; i++)
    for (unsigned b = leads[i].first; ok && b <= leads[i].last; b++) {
      uint32_t t = SID_FAIL;
      ok = poot__set_takes(&m->srecs[sid], (uint8_t)b);
      if (ok) POOT_TRY(poot__transition(m, sid, (uint8_t)b, &t));
      ok = ok && u8_live(m, t);
      if (ok) POOT_TRY(u8_cont(m, home, t, leads[i].need, leads[i].lo, leads[i].hi, &memo, &ok));
    }
  m->srecs[sid].u8_done = true;
  m->srecs[sid].u8_loops = ok;
  *out = ok;
  return POOT_OK_STATUS;
}

/* The reading of a UTF-8 character (Unicode's table 3-7) for live_closure: state 0 is a
 * character boundary; states 1-7 wait for a continuation byte in [lo, hi], after which the
 * reading is in state `next`. */
static const struct {
  uint8_t lo, hi, next;
} u8_states[8] = {
    {0x00, 0x7F, 0}, /* 0: a boundary (ASCII here; the lead bytes in u8_lead) */
    {0x80, 0xBF, 0}, /* 1: the last continuation byte */
    {0x80, 0xBF, 1}, /* 2: two left */
    {0xA0, 0xBF, 1}, /* 3: after E0 (no overlong form) */
    {0x80, 0x9F, 1}, /* 4: after ED (no surrogate) */
    {0x90, 0xBF, 2}, /* 5: after F0 (no overlong form) */
    {0x80, 0xBF, 2}, /* 6: three left (after F1 … F3) */
    {0x80, 0x8F, 2}, /* 7: after F4 (nothing past U+10FFFF) */
};

/* The state after lead byte `b`; 0 when b leads no well-formed character. */
static uint8_t u8_lead(uint8_t b) {
  if (b >= 0xC2 && b <= 0xDF) return 1;
  if (b == 0xE0) return 3;
  if (b == 0xED) return 4;
  if (b >= 0xE1 && b <= 0xEF) return 2;
  if (b == 0xF0) return 5;
  if (b >= 0xF1 && b <= 0xF3) return 6;
  return b == 0xF4 ? 7 : 0;
}

/* Notes on set `sid` that every string of at most `len` bytes over `groups` stays live (ok)
 * or that one does not (!ok): two notes of each kind; a new one replaces one it implies,
 * else the older. */
static void closure_note(poot_grammar_matcher *m, uint32_t sid, uint32_t groups, uint32_t len,
                         bool ok) {
  srec *r = &m->srecs[sid];
  uint32_t *g = ok ? r->close_ok : r->close_bad;
  uint16_t *l = ok ? r->ok_len : r->bad_len, n = (uint16_t)(len < UINT16_MAX ? len : UINT16_MAX);
  for (int i = 0; i < 2; i++) { /* implied already */
    if (ok && g[i] && !(groups & ~g[i]) && n <= l[i]) return;
    if (!ok && g[i] && !(g[i] & ~groups) && l[i] <= n) return;
  }
  int k = 1;
  for (int i = 1; i >= 0; i--)
    if (!g[i] || (ok ? !(g[i] & ~groups) && l[i] <= n : !(groups & ~g[i]) && n <= l[i])) k = i;
  if (k == 1 && g[1] && g[0]) { /* neither is implied: the older goes */
    g[1] = g[0];
    l[1] = l[0];
    k = 0;
  }
  g[k] = groups;
  l[k] = n;
}

typedef struct cpair {
  uint32_t sid, path; /* a set, and the groups of the bytes that first reached it */
  uint8_t u;          /* the UTF-8 state there */
  uint16_t len;       /* the bytes read to reach it */
} cpair;

/* The first byte that pair `p` may read (over `ascii`, and the lead bytes when `lead`) and
 * its set does not take; -1 when it takes them all. */
static int closure_missing(const poot_grammar_matcher *m, const cpair *p, const uint32_t *ascii,
                           bool lead) {
  const srec *r = &m->srecs[p->sid];
  if (p->u) {
    for (unsigned b = u8_states[p->u].lo; b <= u8_states[p->u].hi; b++)
      if (!poot__set_takes(r, (uint8_t)b)) return (int)b;
    return -1;
  }
  for (unsigned w = 0; w < 4; w++)
    if (ascii[w] & ~r->bytes[w])
      return (int)(w * 32 + (unsigned)__builtin_ctz(ascii[w] & ~r->bytes[w]));
  for (unsigned b = 0xC2; lead && b <= 0xF4; b++)
    if (!poot__set_takes(r, (uint8_t)b)) return (int)b;
  return -1;
}

/* Stops a closure search that has made more than CLOSE_NEW sets (a count's chain, or a
 * grammar's structure, where the search would go on making sets that no token needs): the
 * sets it reached are marked close_off and searched from no more. */
static void closure_stop(poot_grammar_matcher *m, const cpair *q, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (q[i].u == 0) m->srecs[q[i].sid].close_off = true;
}

/* Whether every string of at most `len` bytes over `groups` (their ASCII bytes, and when
 * the high group is in, well-formed UTF-8 characters, whole or cut) leads set `sid` through
 * live sets only: a breadth-first search of the (set, UTF-8 state) pairs it reaches, each
 * checked to take every byte it may read when it is met (a pair met again is not searched
 * again: what follows it was searched for at least as many bytes). At most CLOSE_PAIRS
 * pairs and CLOSE_NEW new sets (closure_stop). The result is noted on `sid` (a failure with
 * the groups of the path that found it, which fails in any wider mask) and a success on
 * every set of the search at a character boundary. */
static poot_status closure_search(poot_grammar_matcher *m, uint32_t sid, uint32_t groups,
                                  uint32_t len, bool *out) {
  const uint32_t high = 1u << POOT_BYTE_HIGH_GROUP;
  uint32_t ascii[4] = {0};
  for (uint32_t g = groups & ~high; g; g &= g - 1)
    for (unsigned w = 0; w < 4; w++) ascii[w] |= m->group_bytes[__builtin_ctz(g)][w];
  bool lead = (groups & high) != 0, cut = false; /* cut: some pair was not searched (len) */
  cpair q[CLOSE_PAIRS];
  uint32_t n = 1, sets0 = m->n_srec;
  q[0] = (cpair){.sid = sid};
  *out = false;
  int miss = closure_missing(m, &q[0], ascii, lead);
  if (miss >= 0) {
    closure_note(m, sid, 1u << m->byte_group[miss], 1, false);
    return POOT_OK_STATUS;
  }
  for (uint32_t i = 0; i < n; i++) {
    const cpair p = q[i];
    if (p.len >= len) {
      cut = true;
      continue;
    }
    unsigned hi = p.u || !lead ? u8_states[p.u].hi : 0xF4;
    uint32_t last = SID_FAIL;
    uint8_t last_u = 0;
    for (unsigned b = u8_states[p.u].lo; b <= hi; b++) {
      uint8_t nu = p.u ? u8_states[p.u].next : b < 0x80 ? 0 : u8_lead((uint8_t)b);
      if (!p.u && (b < 0x80 ? !((ascii[b >> 5] >> (b & 31)) & 1) : !nu)) continue;
      uint32_t t = SID_FAIL, gb = b < 0x80 ? 1u << m->byte_group[b] : high;
      POOT_TRY(poot__transition(m, p.sid, (uint8_t)b, &t)); /* (taken: closure_missing) */
      if (!u8_live(m, t)) {
        closure_note(m, sid, p.path | gb, p.len + 1u, false);
        return POOT_OK_STATUS;
      }
      if (t == last && nu == last_u) continue; /* (a class's bytes are runs, mostly) */
      last = t;
      last_u = nu;
      uint32_t j = 0;
      while (j < n && (q[j].sid != t || q[j].u != nu)) j++;
      if (j < n) continue;
      if (n == CLOSE_PAIRS || m->n_srec - sets0 > CLOSE_NEW) {
        closure_stop(m, q, n);
        return POOT_OK_STATUS;
      }
      q[n] = (cpair){.sid = t, .path = p.path | gb, .u = nu, .len = (uint16_t)(p.len + 1)};
      miss = p.len + 1u < len ? closure_missing(m, &q[n], ascii, lead) : -1;
      if (miss >= 0) {
        closure_note(m, sid, q[n].path | 1u << m->byte_group[miss], p.len + 2u, false);
        return POOT_OK_STATUS;
      }
      n++;
    }
  }
  for (uint32_t i = 0; i < n; i++)
    if (q[i].u == 0) closure_note(m, q[i].sid, groups, cut ? len - q[i].len : UINT32_MAX, true);
  *out = true;
  return POOT_OK_STATUS;
}

/* Whether every string of at most `len` bytes over `groups` leads live set `sid` through
 * live sets only (closure_search), from the set's notes when they settle it. */
static poot_status live_closure(poot_grammar_matcher *m, uint32_t sid, uint32_t groups,
                                uint32_t len, bool *out) {
  const srec *r = &m->srecs[sid];
  *out = false;
  for (int i = 0; i < 2; i++) {
    if (r->close_ok[i] && !(groups & ~r->close_ok[i]) && len <= r->ok_len[i]) {
      *out = true;
      return POOT_OK_STATUS;
    }
    if (r->close_bad[i] && !(r->close_bad[i] & ~groups) && r->bad_len[i] <= len)
      return POOT_OK_STATUS;
  }
  return r->close_off ? POOT_OK_STATUS : closure_search(m, sid, groups, len, out);
}

/* Whether every token below node `t`, reached with live set `sid`, is accepted along the
 * set's chain: each ASCII byte below in the chain groups of the set it meets, every UTF-8
 * character >= U+0080 leading that set to the next (utf8_loops; the bytes below must be
 * well-formed), for as many characters as the subtree has bytes (a loop ends it at once).
 * When not, *upto is the chain's length h when it ends in a set that takes no byte of the
 * subtree's groups: then the tokens up to h bytes below `t` are accepted (every set of the
 * chain is live) and every longer one is refused (its byte h + 1 is not taken), as at the
 * end of `x{0,5}`; UINT32_MAX otherwise. Where the chain ends otherwise, in a context walk,
 * every token may still stay live from the set it ends in, through sets that are not one
 * chain (an unanchored pattern's partial matches beside its loop, a key's literals beside
 * the general key): live_closure. */
poot_status poot__all_loop(poot_grammar_matcher *m, const gtrie_kid *t, uint32_t sid, bool *out,
                           uint32_t *upto) {
  const uint32_t high = 1u << POOT_BYTE_HIGH_GROUP;
  *out = false;
  *upto = UINT32_MAX;
  if (!poot__kid_bulk_ok(t)) return POOT_OK_STATUS;
  uint32_t x = sid;
  for (uint32_t h = 0; h < poot__kid_height(t); h++) {
    uint32_t groups = 0, next = SID_FAIL;
    bool u8 = true;
    POOT_TRY(chain_info(m, x, t->sig & ~high, &groups, &next));
    bool chained = next != SID_FAIL && !(t->sig & ~(groups | high));
    if (chained && (t->sig & high)) { /* characters only in loops */
      chained = next == x;
      if (chained) POOT_TRY(utf8_loops(m, x, &u8));
      chained = chained && u8;
    }
    if (!chained) { /* the chain ends; the tokens may still all stay live from x */
      if (!(t->sig & taken_groups(m, x))) {
        *upto = h;
        return POOT_OK_STATUS;
      }
      /* Only in a context walk: its sets are cut states, kept across masks, and a search
       * there stops where a stack reaches a sentinel; the real state's sets are new with
       * every mask, and a search among them costs more than the walk it saves. */
      if (!m->is_ctx) return POOT_OK_STATUS;
      return live_closure(m, x, t->sig, poot__kid_height(t) - h, out);
    }
    if (next == x) break; /* a loop: the rest stays here */
    x = next;
  }
  *out = true;
  return POOT_OK_STATUS;
}

/* Every token of node i's subtree at most `upto` bytes below i (all_loop): into `mask`, or
 * with key_accept when mask is NULL. */
void poot__accept_upto(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t i,
                       uint32_t upto, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  uint32_t end = tn[i].end, limit = tn[i].depth + upto;
  for (uint32_t j = i; j < end;) {
    if (mask)
      poot__set_tokens(v, &tn[j], mask);
    else
      poot__key_accept(m, v, tn[j].tok_off, tn[j].tok_off + tn[j].tok_n);
    j = tn[j].depth < limit ? j + 1 : tn[j].end;
  }
}

/* Whether poot__all_loop may settle trie node `t` from set `r` (a live set): false where it
 * would return at once, found from what is known already (the walk meets such a node at
 * every step of a set whose chain ended, and the call cost more than the walk's own step):
 * a group below that the set is known not to chain over while some group below is taken
 * ends the chain there, and outside a context walk nothing else is tried. */
static inline bool loop_may_settle(const poot_grammar_matcher *m, const gtrie_kid *t,
                                   const srec *r) {
  if (!poot__kid_bulk_ok(t)) return false;
  return m->is_ctx || !r->taken_done || !(t->sig & r->chain_bad) || !(t->sig & r->taken_groups);
}

/* Tokens tok_ids[lo .. hi) allowed (`set`), or refused (a clearing walk). */
static inline void mask_range(const poot_grammar_vocab *v, uint32_t lo, uint32_t hi, uint32_t *mask,
                              bool set) {
  for (uint32_t k = lo; k < hi; k++) {
    uint32_t id = (uint32_t)v->tok_ids[k];
    if (set)
      mask[id >> 5] |= 1u << (id & 31);
    else
      mask[id >> 5] &= ~(1u << (id & 31));
  }
}

/* The tokens of node i's subtree more than `upto` bytes below i refused (all_loop's chain
 * end, for a clearing walk: those up to it are accepted). */
static void clear_beyond(const poot_grammar_vocab *v, uint32_t i, uint32_t upto, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  uint32_t end = tn[i].end, limit = tn[i].depth + upto;
  for (uint32_t j = i; j < end;) {
    if (tn[j].depth < limit) {
      j++;
      continue;
    }
    mask_range(v, tn[j].tok_off + tn[j].tok_n, poot__trie_tok_end(v, j), mask, false);
    j = tn[j].end;
  }
}

/* Walks the subtree of trie node `node` (whose prefix leads to set `sid`; its own tokens
 * are the caller's) depth first with the stack set of each prefix; a subtree is entered
 * only while some stack survives, so a refused prefix is refused once for all tokens.
 * Sets are interned and transitions cached, so a step seen before costs one lookup.
 * `clear`: the mask holds every token of the subtree, and the walk clears those refused
 * (where most are allowed, as inside a string, that is far fewer bit operations than
 * setting those allowed, one per token); else it holds none and the walk sets those
 * allowed. */
static inline poot_status walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t node,
                               uint32_t sid0, uint32_t *mask, const bool clear) {
  m->frames[0] =
      (mframe){.node = node, .child = v->kid_off[node], .sid = sid0, .end = v->kid_off[node + 1]};
  size_t d = 1;
  while (d) {
    mframe *f = &m->frames[d - 1];
    if (f->child >= f->end) {
      d--;
      continue;
    }
    const gtrie_kid *k = &v->kids[f->child++];
    uint32_t sid = SID_FAIL;
    if (poot__set_takes(&m->srecs[f->sid], k->byte))
      POOT_TRY(poot__transition(m, f->sid, k->byte, &sid));
    if (sid == SID_FAIL) { /* not taken, or past the bounds: these tokens are refused */
      if (clear) mask_range(v, k->tok_off, k->tok_end, mask, false);
      continue;
    }
    bool bulk = false;
    uint32_t upto = UINT32_MAX;
    if (m->srecs[sid].n && poot__kid_height(k) && loop_may_settle(m, k, &m->srecs[sid]))
      POOT_TRY(poot__all_loop(m, k, sid, &bulk, &upto));
    const srec *r = &m->srecs[sid];
    if (bulk) {
      if (!clear) mask_range(v, k->tok_off, k->tok_end, mask, true);
      continue;
    }
    if (upto != UINT32_MAX) {
      if (clear)
        clear_beyond(v, k->node, upto, mask);
      else
        poot__accept_upto(m, v, k->node, upto, mask);
      continue;
    }
    if (!clear && (r->n || r->accept)) mask_range(v, k->tok_off, k->tok_mid, mask, true);
    if (clear && !r->n && !r->accept) mask_range(v, k->tok_off, k->tok_mid, mask, false);
    if (r->n && poot__kid_height(k))
      m->frames[d++] = (mframe){
          .node = k->node, .child = k->first, .sid = sid, .end = k->first + k->n_less + 1u};
    else if (clear && poot__kid_height(k)) /* no stack left: nothing below */
      mask_range(v, k->tok_mid, k->tok_end, mask, false);
  }
  return POOT_OK_STATUS;
}

poot_status poot__walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t node,
                       uint32_t sid0, uint32_t *mask) {
  return walk(m, v, node, sid0, mask, false);
}

poot_status poot__walk_clear(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t node,
                             uint32_t sid0, uint32_t *mask) {
  return walk(m, v, node, sid0, mask, true);
}
