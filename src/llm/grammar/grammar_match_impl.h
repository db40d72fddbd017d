/* Private to the matcher's files (grammar_match.c: the stacks and the matcher; grammar_walk.c:
 * the mask walk and its cache; grammar_mask.c: the context keys, fill_mask and prepare). */
#ifndef POOT_LLM_GRAMMAR_MATCH_IMPL_H
#define POOT_LLM_GRAMMAR_MATCH_IMPL_H

#include "grammar_impl.h"

#define NIL UINT32_MAX
#define SID_FAIL UINT32_MAX
#define MAX_POOL (1u << 24)
#define MASK_CACHE 8
#define DENSE_ROWS 4096u
#define DENSE_CHUNK 64u

enum { FAIL_NONE = 0, FAIL_CAPACITY = 1, FAIL_OOM = 2 };

typedef struct gnode {
  uint32_t pos;    /* element to match next */
  uint32_t parent; /* the stack below, NIL at the bottom */
  uint32_t next;   /* next node in the same hash bucket */
  uint32_t depth;
} gnode;

/* A walk's frame: trie node `node` reached with set `sid`; the walks read its children
 * v->kids[child .. end) (guided_walk's path: `child` is the next child node, end unused). */
typedef struct mframe {
  uint32_t node, child, sid, end;
} mframe;

/* An interned stack set (the mask walk's cache): ids sids[off .. off + n), sorted. */
typedef struct srec {
  uint32_t off, n, hash;
  uint32_t bytes[8];                /* the bytes some top takes */
  uint32_t chain_next;              /* a live set (chain_done; chain_info) */
  uint32_t chain_groups, chain_bad; /* ASCII groups found to lead, every byte, to chain_next,
                                       and found not to (chain_info) */
  uint32_t taken_groups;            /* the groups of the bytes some top takes (taken_done) */
  bool chain_done, taken_done;
  bool u8_done, u8_loops; /* every UTF-8 character >= U+0080 leads to chain_next */
  bool accept;
  bool close_off;        /* a closure search from here stopped at its bound: none is made again */
  bool left;             /* a context walk only: some stack reached a cut (see mkey) on this byte */
  bool met;              /* the context matcher only: met once by fill_mask without a key */
  uint32_t key;          /* the context matcher only: this cut state's key + 1, 0 when none */
  uint32_t close_ok[2];  /* groups (bit POOT_BYTE_HIGH_GROUP: UTF-8 characters) over which
                            every string of at most ok_len bytes was found to stay live */
  uint32_t close_bad[2]; /* groups over which a string of bad_len bytes was found not to */
  uint16_t ok_len[2], bad_len[2];
  uint32_t rep;   /* this set's byte classes (byte_reps) + 1, 0 when not made */
  uint32_t fresh; /* transitions computed from this set (byte_reps waits for REP_AFTER) */
  uint32_t row;   /* this set's dense transition row + 1, 0 when it has none */
  uint32_t looks; /* transitions looked up in the hash table (a row waits for ROW_AFTER) */
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
  /* Dense transition rows, given to the sets looked up most (at most DENSE_ROWS), DENSE_CHUNK
   * rows a chunk: dense[row / DENSE_CHUNK][row % DENSE_CHUNK * 256 + byte] = result + 2, 0
   * unknown (then the hash table may still hold it). */
  uint32_t *dense[DENSE_ROWS / DENSE_CHUNK];
  uint32_t n_rows, dense_rows; /* rows given out, rows allocated */
  /* Expansions (poot__expand_memo): xkeys[slot] = node id + 1 (0 empty), its stacks
   * xids[xoff[slot] .. + xn[slot]) and flags xfl[slot] (1 accept, 2 left). */
  uint32_t *xkeys, *xoff, *xids, *xout;
  uint16_t *xn;
  uint8_t *xfl;
  uint32_t x_cap, x_len;
  size_t n_xids, cap_xids;
  uint8_t byte_group[256];                   /* poot__byte_group of every byte */
  uint32_t group_bytes[POOT_BYTE_GROUPS][4]; /* the ASCII bytes of each group */
  uint8_t group_n[POOT_BYTE_GROUPS];         /* how many (a popcount is a libgcc call here) */
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
  bool is_ctx;       /* this is a context matcher (its sets are cut states, kept across masks) */
  uint32_t *scratch; /* the cut positions of one stack */
  /* Long counted repetitions (see chains_find): canon[p] is the position a cut state uses
   * for p; chainy[p] marks the positions of a count >= CHAIN_CAP. NULL when there are none. */
  uint32_t *canon;
  uint8_t *chainy;
  bool chains_done, cut_chainy;
  size_t scratch_cap;
  /* Long counts shifted in the real state (grammar_shift.c): for element p of a count or a
   * run of copies with more than sh_min counts, sh_k[p] its count (0: none) and sh_fam[p]
   * its chain; sh_pos[sh_off[f] + k] is the position of chain f's count k (its x). */
  uint32_t *sh_k, *sh_fam, *sh_pos, *sh_off;
  uint32_t sh_min; /* the smallest count a state is shifted to; 0 before the tables are made */
  uint32_t *sh_cur, n_sh; /* the shifted state */
};

typedef struct ectx {
  poot_grammar_matcher *m;
  uint32_t *out;
  uint32_t n_out;
  uint32_t rec;
  bool accept;
  bool left; /* a stack reached a sentinel (a position past the grammar's elements) */
  bool memo; /* poot__step expands through poot__expand_memo (the walk's cache) */
  int fail;
} ectx;

/* ---- grammar_match.c: the node pool and the stacks */

/* The node for stack `parent` with `pos` pushed (interned); NIL on failure (c->fail). */
uint32_t poot__node(ectx *c, uint32_t pos, uint32_t parent);
/* Adds stack `id` to c->out once; CAPACITY past max_stacks. */
void poot__stack_add(ectx *c, uint32_t id);
/* Adds every stack reachable from `id` without consuming a byte whose top is a byte element
 * (the empty stack sets c->accept, a sentinel c->left). */
void poot__expand(ectx *c, uint32_t id);
/* The stacks after byte `b` from stacks `in`, into c->out. */
void poot__step(ectx *c, const uint32_t *in, uint32_t n_in, uint8_t b);
/* Drops the pool's nodes from `mark` on (and the walk's cache when it refers to them). */
void poot__truncate_pool(poot_grammar_matcher *m, uint32_t mark);
/* The status for a FAIL_* code while doing `what`. */
POOT_MUST_USE poot_status poot__fail_status(int fail, const char *what);
/* Grows *buf (capacity *cap words) to at least `need` words; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__reserve_u32(uint32_t **buf, size_t *cap, size_t need);
/* A matcher with an empty pool and no state; NULL when out of memory. */
poot_grammar_matcher *poot__matcher_alloc(const poot_grammar *g);

/* ---- grammar_walk.c: the mask walk */

/* Empties the walk's cache (sets, transitions, byte classes, cached masks). */
void poot__cache_clear(poot_grammar_matcher *m);
/* poot__expand(c, id) at the top level (c->rec 0), through a memo of each node's expansion
 * kept with the walk's cache: the same stacks are added in the same order, with the same
 * flags and failures. */
void poot__expand_memo(ectx *c, uint32_t id);
/* The id of the set `ids` (sorted here) with `accept` and `left`, interned. */
POOT_MUST_USE poot_status poot__set_intern(poot_grammar_matcher *m, uint32_t *ids, uint32_t n,
                                           bool accept, bool left, uint32_t *out_sid);
/* poot__transition when the dense table has no entry for (sid, b). */
POOT_MUST_USE poot_status poot__transition_miss(poot_grammar_matcher *m, uint32_t sid, uint8_t b,
                                                uint32_t *out);

/* The dense table's entry for (row `row` < n_rows, byte `b`). */
static inline uint32_t *poot__dense_entry(const poot_grammar_matcher *m, uint32_t row, uint8_t b) {
  return &m->dense[row / DENSE_CHUNK][(row % DENSE_CHUNK) * 256 + b];
}

/* The set after byte `b` from set `sid` (SID_FAIL past the bounds), through the cache: the
 * dense table's hit inline, everything else in poot__transition_miss. */
POOT_MUST_USE static inline poot_status poot__transition(poot_grammar_matcher *m, uint32_t sid,
                                                         uint8_t b, uint32_t *out) {
  uint32_t row = m->srecs[sid].row;
  uint32_t v = row ? *poot__dense_entry(m, row - 1, b) : 0;
  if (!v) return poot__transition_miss(m, sid, b, out);
  *out = v == 1 ? SID_FAIL : v - 2;
  return POOT_OK_STATUS;
}
/* The tokens that end at trie node `t`, into `mask`. */
void poot__set_tokens(const poot_grammar_vocab *v, const gtrie_node *t, uint32_t *mask);
/* Whether every token below trie node `t`, reached with live set `sid`, is accepted along the
 * set's chain (*out); else *upto, when not UINT32_MAX, the depth up to which they are. */
POOT_MUST_USE poot_status poot__all_loop(poot_grammar_matcher *m, const gtrie_kid *t, uint32_t sid,
                                         bool *out, uint32_t *upto);
/* Every token of node i's subtree at most `upto` bytes below i: into `mask`, or with
 * poot__key_accept when mask is NULL. */
void poot__accept_upto(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t i,
                       uint32_t upto, uint32_t *mask);
/* The tokens below trie node `node` (its prefix leads to set `sid0`) allowed, into `mask`. */
POOT_MUST_USE poot_status poot__walk(poot_grammar_matcher *m, const poot_grammar_vocab *v,
                                     uint32_t node, uint32_t sid0, uint32_t *mask);
/* The same where `mask` holds every token below `node`: those refused are cleared. */
POOT_MUST_USE poot_status poot__walk_clear(poot_grammar_matcher *m, const poot_grammar_vocab *v,
                                           uint32_t node, uint32_t sid0, uint32_t *mask);

static inline bool poot__set_takes(const srec *r, uint8_t b) {
  return (r->bytes[b >> 5] >> (b & 31)) & 1u;
}

/* ---- grammar_mask.c: the context keys */

/* Whether element `e` surely consumes a byte (`depth` bounds the search). */
bool poot__consumes(const poot_grammar *g, const gel *e, int depth);
/* Whether rule `r` has the shape of one count of a repetition, `O ::= x O' | ε` or
 * `O ::= x | ε`, with x one element: *full is the position of x, *next the rule O' (NIL at
 * the last count). Whether x surely consumes a byte is poot__count_lengths's to ask. */
bool poot__count_shape(const poot_grammar *g, uint32_t r, uint32_t *full, uint32_t *next);
bool poot__same_gel(const gel *a, const gel *b);

/* Tokens tok_ids[lo .. hi) are accepted in the context walk. */
void poot__key_accept(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lo,
                      uint32_t hi);

/* ---- grammar_shift.c: long counts shifted */

/* The real state with its long counts shifted down (m->sh_cur, m->n_sh), a state with the
 * same mask over `v`; *out false when there is nothing to shift. */
POOT_MUST_USE poot_status poot__shift_state(poot_grammar_matcher *m, const poot_grammar_vocab *v,
                                            bool *out);
/* len[r]: the k of count rule r (O_k, its chain one x that surely consumes a byte all the
 * way down to O_1; each rule looked at once), POOT_NOT_COUNT for any other rule (a loop,
 * `x*` written so, included).
 * `path` has room for every rule. */
#define POOT_NOT_COUNT UINT32_MAX
void poot__count_lengths(const poot_grammar *g, uint32_t *len, uint32_t *path);
/* Frees the shift tables. */
void poot__shift_free(poot_grammar_matcher *m);

#endif /* POOT_LLM_GRAMMAR_MATCH_IMPL_H */
