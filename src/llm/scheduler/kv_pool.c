/* The KV block pool (include/poot/llm/kv_pool.h): blocks, the free LRU list,
 * the prefix table and per-sequence block tables. docs/batching.md. */
#include <string.h>

#include "kv_pool_internal.h"

/* One block's bookkeeping. Its token ids live in pool->tokens[id · bs ..]. */
typedef struct kv_block {
  uint64_t hash;        /* chain hash; valid when `hashed` */
  uint64_t parent_hash; /* the previous block's chain hash (or the root) */
  int32_t refs;         /* sequences holding the block */
  int32_t prev, next;   /* LRU links while free (refs == 0) */
  bool hashed;          /* full and committed: hash and parent_hash are set */
  bool cached;          /* published in the prefix table */
} kv_block;

typedef struct kv_seq {
  bool open;
  int64_t length;    /* rows reserved */
  int64_t committed; /* rows written */
  int32_t n_blocks;
  int32_t n_hashed; /* leading blocks whose chain hash is set */
  int32_t *blocks;  /* max_blocks_per_seq ids (a slice of pool->tables) */
  uint64_t root;    /* its first block's parent hash (the root, or salted) */
} kv_seq;

struct poot_kv_pool {
  poot_kv_pool_options opt;
  int32_t max_blocks_per_seq;
  kv_block *blocks; /* num_blocks + 1: the last is the LRU list's sentinel */
  int32_t *tokens;  /* num_blocks · bs token ids */
  int32_t *table;   /* the prefix table: block ids or −1, open addressing */
  uint32_t table_mask;
  kv_seq *seqs;      /* max_seqs */
  int32_t *tables;   /* max_seqs · max_blocks_per_seq */
  int32_t *free_seq; /* a stack of closed sequence handles */
  int32_t n_free_seq;
  int32_t in_use, cached, cached_free;
  uint64_t evictions, matched, published;
};

/* ------------------------------------------------------------------ sizing */

static poot_status fit_row_bytes(const poot_kv_pool_fit_params *p, uint64_t *out_row) {
  switch (p->kv_dtype) {
    case POOT_DTYPE_F32:
      *out_row = (uint64_t)p->head_dim * 4;
      return POOT_OK_STATUS;
    case POOT_DTYPE_F16:
      *out_row = (uint64_t)p->head_dim * 2;
      return POOT_OK_STATUS;
    case POOT_DTYPE_Q8_0:
      if (p->head_dim % 32 != 0)
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "kv pool fit: head_dim = %lld is not a multiple of 32, the "
                                "q8_0 block",
                                (long long)p->head_dim);
      *out_row = (uint64_t)(p->head_dim / 32) * 34;
      return POOT_OK_STATUS;
    default:
      return poot_status_make(POOT_UNSUPPORTED,
                              "kv pool fit: kv_dtype %s is not a KV cache type (f32, f16 or "
                              "q8_0)",
                              poot_dtype_name(p->kv_dtype));
  }
}

poot_status poot_kv_pool_fit_budget(const poot_kv_pool_fit_params *params, poot_kv_pool_fit *out) {
  memset(out, 0, sizeof *out);
  const poot_kv_pool_fit_params *p = params;
  if (p->layers < 1 || p->kv_heads < 1 || p->head_dim < 1 || p->block_size < 1)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool fit: layers = %lld, kv_heads = %lld, head_dim = %lld and "
                            "block_size = %d must all be at least 1",
                            (long long)p->layers, (long long)p->kv_heads, (long long)p->head_dim,
                            p->block_size);
  uint64_t row = 0, per_token = 0, per_block = 0;
  POOT_TRY(fit_row_bytes(p, &row));
  if (__builtin_mul_overflow(row, (uint64_t)p->kv_heads, &per_token) ||
      __builtin_mul_overflow(per_token, (uint64_t)p->layers, &per_token) ||
      __builtin_mul_overflow(per_token, (uint64_t)2, &per_token) ||
      __builtin_mul_overflow(per_token, (uint64_t)p->block_size, &per_block))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool fit: one block's size overflows 64 bits");
  uint64_t n = p->budget_bytes / per_block;
  if (n == 0)
    return poot_status_make(POOT_CAPACITY,
                            "kv pool fit: a budget of %llu bytes holds no KV block (one block "
                            "of %d tokens is %llu bytes: %llu per token)",
                            (unsigned long long)p->budget_bytes, p->block_size,
                            (unsigned long long)per_block, (unsigned long long)per_token);
  if (n > INT32_MAX) n = INT32_MAX;
  out->bytes_per_token = per_token;
  out->bytes_per_block = per_block;
  out->num_blocks = (int32_t)n;
  out->tokens = (int64_t)n * p->block_size;
  out->bytes = n * per_block;
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------- the LRU list */

static int32_t lru_sentinel(const poot_kv_pool *pool) {
  return pool->opt.num_blocks;
}

static void lru_unlink(poot_kv_pool *pool, int32_t b) {
  kv_block *blk = &pool->blocks[b];
  pool->blocks[blk->prev].next = blk->next;
  pool->blocks[blk->next].prev = blk->prev;
  blk->prev = blk->next = -1;
}

/* Links b after `at` (the sentinel: at the least-recent end). */
static void lru_link_after(poot_kv_pool *pool, int32_t at, int32_t b) {
  kv_block *blk = &pool->blocks[b];
  blk->prev = at;
  blk->next = pool->blocks[at].next;
  pool->blocks[blk->next].prev = b;
  pool->blocks[at].next = b;
}

static void lru_push_recent(poot_kv_pool *pool, int32_t b) {
  lru_link_after(pool, pool->blocks[lru_sentinel(pool)].prev, b);
}

static void lru_push_old(poot_kv_pool *pool, int32_t b) {
  lru_link_after(pool, lru_sentinel(pool), b);
}

/* ------------------------------------------------------- the prefix table */

static const int32_t *block_tokens(const poot_kv_pool *pool, int32_t b) {
  return pool->tokens + (size_t)b * (size_t)pool->opt.block_size;
}

static uint64_t chain_hash(const poot_kv_pool *pool, uint64_t parent, const int32_t *tokens) {
  return poot_hash64(tokens, (size_t)pool->opt.block_size * sizeof *tokens, parent);
}

/* The published block equal to (parent, tokens) with chain hash `hash`, or
 * −1. Equal means: the same parent chain hash and the same token ids. */
static int32_t table_find(const poot_kv_pool *pool, uint64_t hash, uint64_t parent,
                          const int32_t *tokens) {
  size_t bytes = (size_t)pool->opt.block_size * sizeof *tokens;
  for (uint32_t i = (uint32_t)hash & pool->table_mask;; i = (i + 1) & pool->table_mask) {
    int32_t b = pool->table[i];
    if (b < 0) return -1;
    const kv_block *blk = &pool->blocks[b];
    if (blk->hash == hash && blk->parent_hash == parent &&
        memcmp(block_tokens(pool, b), tokens, bytes) == 0)
      return b;
  }
}

/* The table holds at most num_blocks entries in at least twice as many
 * slots, so a probe always ends at an empty slot. */
static void table_insert(poot_kv_pool *pool, int32_t b) {
  uint32_t i = (uint32_t)pool->blocks[b].hash & pool->table_mask;
  while (pool->table[i] >= 0) i = (i + 1) & pool->table_mask;
  pool->table[i] = b;
  pool->blocks[b].cached = true;
  pool->cached++;
  pool->published++;
}

/* Removes b by backward-shift deletion (no tombstones): every later entry of
 * the probe run that may move into the hole does. */
static void table_remove(poot_kv_pool *pool, int32_t b) {
  uint32_t mask = pool->table_mask;
  uint32_t hole = (uint32_t)pool->blocks[b].hash & mask;
  while (pool->table[hole] != b) hole = (hole + 1) & mask;
  for (uint32_t j = (hole + 1) & mask; pool->table[j] >= 0; j = (j + 1) & mask) {
    uint32_t home = (uint32_t)pool->blocks[pool->table[j]].hash & mask;
    /* The entry at j may fill the hole unless its home lies cyclically in
     * (hole, j]. */
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    pool->table[hole] = pool->table[j];
    hole = j;
  }
  pool->table[hole] = -1;
  pool->blocks[b].cached = false;
  pool->cached--;
}

/* --------------------------------------------------------------- blocks */

/* Takes the least-recently-used free block (evicting it when published).
 * The caller has checked that one is free. */
static int32_t block_take(poot_kv_pool *pool) {
  int32_t b = pool->blocks[lru_sentinel(pool)].next;
  lru_unlink(pool, b);
  kv_block *blk = &pool->blocks[b];
  if (blk->cached) {
    table_remove(pool, b);
    pool->cached_free--;
    pool->evictions++;
  }
  blk->hashed = false;
  blk->hash = blk->parent_hash = 0;
  blk->refs = 1;
  pool->in_use++;
  return b;
}

static void block_retain(poot_kv_pool *pool, int32_t b) {
  kv_block *blk = &pool->blocks[b];
  if (blk->refs++ > 0) return;
  lru_unlink(pool, b);
  pool->in_use++;
  if (blk->cached) pool->cached_free--;
}

static void block_release(poot_kv_pool *pool, int32_t b) {
  kv_block *blk = &pool->blocks[b];
  if (--blk->refs > 0) return;
  pool->in_use--;
  if (blk->cached) {
    pool->cached_free++;
    lru_push_recent(pool, b);
  } else {
    lru_push_old(pool, b);
  }
}

/* ------------------------------------------------------------ lifecycle */

static poot_status check_options(const poot_kv_pool_options *o) {
  if (o->num_blocks < 1 || o->block_size < 1 || o->max_seqs < 1 || o->max_seq_len < 1)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool: num_blocks = %d, block_size = %d, max_seqs = %d and "
                            "max_seq_len = %lld must all be at least 1",
                            o->num_blocks, o->block_size, o->max_seqs, (long long)o->max_seq_len);
  if (o->num_blocks > (1 << 29))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool: num_blocks = %d is past the limit of 2^29 blocks",
                            o->num_blocks);
  int64_t per_seq = (o->max_seq_len + o->block_size - 1) / o->block_size;
  if (per_seq > INT32_MAX || (uint64_t)per_seq * (uint64_t)o->max_seqs > (1ull << 28))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool: block tables of %d sequences of %lld positions are too "
                            "large (%lld blocks each)",
                            o->max_seqs, (long long)o->max_seq_len, (long long)per_seq);
  return POOT_OK_STATUS;
}

static bool pool_alloc(poot_kv_pool *pool) {
  const poot_kv_pool_options *o = &pool->opt;
  uint32_t slots = 2;
  while (slots < 2u * (uint32_t)o->num_blocks) slots <<= 1;
  pool->table_mask = slots - 1;
  pool->blocks = poot_calloc((size_t)o->num_blocks + 1, sizeof *pool->blocks);
  pool->tokens = poot_calloc((size_t)o->num_blocks * (size_t)o->block_size, sizeof(int32_t));
  pool->table = poot_malloc((size_t)slots * sizeof(int32_t));
  pool->seqs = poot_calloc((size_t)o->max_seqs, sizeof *pool->seqs);
  pool->tables =
      poot_calloc((size_t)o->max_seqs * (size_t)pool->max_blocks_per_seq, sizeof(int32_t));
  pool->free_seq = poot_calloc((size_t)o->max_seqs, sizeof(int32_t));
  return pool->blocks && pool->tokens && pool->table && pool->seqs && pool->tables &&
         pool->free_seq;
}

static void pool_init_lists(poot_kv_pool *pool) {
  const poot_kv_pool_options *o = &pool->opt;
  int32_t s = lru_sentinel(pool);
  pool->blocks[s].prev = pool->blocks[s].next = s;
  for (int32_t b = 0; b < o->num_blocks; b++) lru_push_recent(pool, b);
  memset(pool->table, 0xff, ((size_t)pool->table_mask + 1) * sizeof(int32_t));
  for (int32_t i = 0; i < o->max_seqs; i++) {
    pool->seqs[i].blocks = pool->tables + (size_t)i * (size_t)pool->max_blocks_per_seq;
    pool->free_seq[i] = o->max_seqs - 1 - i; /* handle 0 is opened first */
  }
  pool->n_free_seq = o->max_seqs;
}

poot_status poot_kv_pool_create(const poot_kv_pool_options *options, poot_kv_pool **out_pool) {
  *out_pool = NULL;
  poot_kv_pool_options o = options ? *options : poot_kv_pool_options_default();
  POOT_TRY(check_options(&o));
  poot_kv_pool *pool = poot_calloc(1, sizeof *pool);
  if (!pool) return poot_status_make(POOT_OUT_OF_MEMORY, "kv pool: no memory for the pool");
  pool->opt = o;
  pool->max_blocks_per_seq = (int32_t)((o.max_seq_len + o.block_size - 1) / o.block_size);
  if (!pool_alloc(pool)) {
    poot_kv_pool_destroy(pool);
    return poot_status_make(POOT_OUT_OF_MEMORY,
                            "kv pool: no memory for %d blocks of %d tokens and %d block tables",
                            o.num_blocks, o.block_size, o.max_seqs);
  }
  pool_init_lists(pool);
  *out_pool = pool;
  return POOT_OK_STATUS;
}

void poot_kv_pool_destroy(poot_kv_pool *pool) {
  if (!pool) return;
  poot_free(pool->blocks);
  poot_free(pool->tokens);
  poot_free(pool->table);
  poot_free(pool->seqs);
  poot_free(pool->tables);
  poot_free(pool->free_seq);
  poot_free(pool);
}

void poot_kv_pool_get_options(const poot_kv_pool *pool, poot_kv_pool_options *out) {
  *out = pool->opt;
}

/* ------------------------------------------------------------ sequences */

static kv_seq *seq_of(const poot_kv_pool *pool, int32_t seq) {
  if (seq < 0 || seq >= pool->opt.max_seqs || !pool->seqs[seq].open) return NULL;
  return &pool->seqs[seq];
}

static poot_status bad_seq(const char *what, int32_t seq) {
  return poot_status_make(POOT_INVALID_ARGUMENT, "kv pool %s: sequence %d is not open", what, seq);
}

/* The number of leading blocks of tokens[0, n) that are published, at most
 * `limit`; their ids go to out_blocks. */
static int32_t match_prefix(const poot_kv_pool *pool, uint64_t root, const int32_t *tokens,
                            int32_t limit, int32_t *out_blocks) {
  uint64_t parent = root;
  int32_t bs = pool->opt.block_size;
  int32_t n = 0;
  while (n < limit) {
    const int32_t *t = tokens + (size_t)n * (size_t)bs;
    uint64_t h = chain_hash(pool, parent, t);
    int32_t b = table_find(pool, h, parent, t);
    if (b < 0) break;
    out_blocks[n++] = b;
    parent = h;
  }
  return n;
}

poot_status poot_kv_pool_seq_open(poot_kv_pool *pool, const int32_t *tokens, int64_t n,
                                  int32_t *out_seq, int64_t *out_reused) {
  return poot_kv_pool_seq_open_salted(pool, tokens, n, 0, out_seq, out_reused);
}

uint64_t poot_kv_pool_root_hash(uint64_t salt) {
  return salt ? poot_hash64(&salt, sizeof salt, POOT_KV_POOL_ROOT_HASH) : POOT_KV_POOL_ROOT_HASH;
}

poot_status poot_kv_pool_seq_open_salted(poot_kv_pool *pool, const int32_t *tokens, int64_t n,
                                         uint64_t salt, int32_t *out_seq, int64_t *out_reused) {
  *out_seq = -1;
  *out_reused = 0;
  if (n < 0 || (n > 0 && !tokens))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool seq_open: %lld tokens (%s): n must be ≥ 0 and tokens "
                            "given when n > 0",
                            (long long)n, tokens ? "given" : "NULL");
  if (pool->n_free_seq == 0)
    return poot_status_make(POOT_CAPACITY,
                            "kv pool seq_open: all %d sequences are open (max_seqs); close one "
                            "or create the pool with more",
                            pool->opt.max_seqs);
  int32_t id = pool->free_seq[--pool->n_free_seq];
  kv_seq *s = &pool->seqs[id];
  *s = (kv_seq){.open = true, .blocks = s->blocks, .root = poot_kv_pool_root_hash(salt)};
  int64_t limit = n > 0 ? (n - 1) / pool->opt.block_size : 0;
  if (limit > pool->max_blocks_per_seq) limit = pool->max_blocks_per_seq;
  int32_t matched =
      pool->opt.prefix_cache ? match_prefix(pool, s->root, tokens, (int32_t)limit, s->blocks) : 0;
  for (int32_t i = 0; i < matched; i++) block_retain(pool, s->blocks[i]);
  s->n_blocks = s->n_hashed = matched;
  s->length = s->committed = (int64_t)matched * pool->opt.block_size;
  pool->matched += (uint64_t)matched;
  *out_seq = id;
  *out_reused = s->length;
  return POOT_OK_STATUS;
}

/* Releases the sequence's blocks from index `keep` on, last to first. */
static void seq_release_from(poot_kv_pool *pool, kv_seq *s, int32_t keep) {
  for (int32_t i = s->n_blocks - 1; i >= keep; i--) block_release(pool, s->blocks[i]);
  s->n_blocks = keep;
}

void poot_kv_pool_seq_close(poot_kv_pool *pool, int32_t seq) {
  kv_seq *s = pool ? seq_of(pool, seq) : NULL;
  if (!s) return;
  seq_release_from(pool, s, 0);
  s->open = false;
  pool->free_seq[pool->n_free_seq++] = seq;
}

static int64_t seq_room(const poot_kv_pool *pool, const kv_seq *s) {
  return (int64_t)s->n_blocks * pool->opt.block_size - s->length;
}

int64_t poot_kv_pool_seq_room(const poot_kv_pool *pool, int32_t seq) {
  const kv_seq *s = seq_of(pool, seq);
  return s ? seq_room(pool, s) : 0;
}

int32_t poot_kv_pool_blocks_needed(const poot_kv_pool *pool, int32_t seq, int64_t n) {
  const kv_seq *s = seq_of(pool, seq);
  if (!s || n <= 0) return 0;
  int64_t past = n - seq_room(pool, s);
  if (past <= 0) return 0;
  int64_t need = (past + pool->opt.block_size - 1) / pool->opt.block_size;
  return need > INT32_MAX ? INT32_MAX : (int32_t)need;
}

poot_status poot_kv_pool_seq_append(poot_kv_pool *pool, int32_t seq, const int32_t *tokens,
                                    int64_t n) {
  kv_seq *s = seq_of(pool, seq);
  if (!s) return bad_seq("seq_append", seq);
  if (n < 0 || (n > 0 && !tokens))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool seq_append: %lld tokens: n must be ≥ 0 and tokens given",
                            (long long)n);
  if (n > pool->opt.max_seq_len - s->length)
    return poot_status_make(POOT_CAPACITY,
                            "kv pool seq_append: sequence %d holds %lld tokens; %lld more pass "
                            "max_seq_len = %lld",
                            seq, (long long)s->length, (long long)n,
                            (long long)pool->opt.max_seq_len);
  int32_t need = poot_kv_pool_blocks_needed(pool, seq, n);
  int32_t free_blocks = pool->opt.num_blocks - pool->in_use;
  if (need > free_blocks)
    return poot_status_make(POOT_CAPACITY,
                            "kv pool seq_append: %lld tokens need %d new blocks of %d tokens; "
                            "%d of %d are free (close or preempt a sequence, or give the pool "
                            "more blocks)",
                            (long long)n, need, pool->opt.block_size, free_blocks,
                            pool->opt.num_blocks);
  int32_t bs = pool->opt.block_size;
  for (int64_t i = 0; i < n; i++, s->length++) {
    int64_t off = s->length % bs;
    if (off == 0) s->blocks[s->n_blocks++] = block_take(pool);
    int32_t b = s->blocks[s->n_blocks - 1];
    pool->tokens[(size_t)b * (size_t)bs + (size_t)off] = tokens[i];
  }
  return POOT_OK_STATUS;
}

static poot_status check_range(const char *what, const kv_seq *s, int32_t seq, int64_t n) {
  if (n < s->committed || n > s->length)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool %s: sequence %d: n = %lld is outside [committed = %lld, "
                            "length = %lld]",
                            what, seq, (long long)n, (long long)s->committed, (long long)s->length);
  return POOT_OK_STATUS;
}

/* Hashes (and publishes) the sequence's blocks that n committed rows fill. */
static void seq_hash_full_blocks(poot_kv_pool *pool, kv_seq *s) {
  int32_t full = (int32_t)(s->committed / pool->opt.block_size);
  for (; s->n_hashed < full; s->n_hashed++) {
    int32_t i = s->n_hashed;
    int32_t b = s->blocks[i];
    kv_block *blk = &pool->blocks[b];
    uint64_t parent = i > 0 ? pool->blocks[s->blocks[i - 1]].hash : s->root;
    const int32_t *t = block_tokens(pool, b);
    blk->parent_hash = parent;
    blk->hash = chain_hash(pool, parent, t);
    blk->hashed = true;
    if (pool->opt.prefix_cache && table_find(pool, blk->hash, parent, t) < 0) table_insert(pool, b);
  }
}

poot_status poot_kv_pool_seq_commit(poot_kv_pool *pool, int32_t seq, int64_t n) {
  kv_seq *s = seq_of(pool, seq);
  if (!s) return bad_seq("seq_commit", seq);
  POOT_TRY(check_range("seq_commit", s, seq, n));
  s->committed = n;
  seq_hash_full_blocks(pool, s);
  return POOT_OK_STATUS;
}

poot_status poot_kv_pool_seq_truncate(poot_kv_pool *pool, int32_t seq, int64_t n) {
  kv_seq *s = seq_of(pool, seq);
  if (!s) return bad_seq("seq_truncate", seq);
  POOT_TRY(check_range("seq_truncate", s, seq, n));
  int32_t bs = pool->opt.block_size;
  seq_release_from(pool, s, (int32_t)((n + bs - 1) / bs));
  s->length = n;
  return POOT_OK_STATUS;
}

poot_status poot_kv_pool_seq_get(const poot_kv_pool *pool, int32_t seq,
                                 poot_kv_pool_seq_info *out) {
  memset(out, 0, sizeof *out);
  const kv_seq *s = seq_of(pool, seq);
  if (!s) return bad_seq("seq_get", seq);
  out->length = s->length;
  out->committed = s->committed;
  out->n_blocks = s->n_blocks;
  out->blocks = s->blocks;
  return POOT_OK_STATUS;
}

int64_t poot_kv_pool_seq_row(const poot_kv_pool *pool, int32_t seq, int64_t pos) {
  const kv_seq *s = seq_of(pool, seq);
  if (!s || pos < 0 || pos >= s->length) return -1;
  int32_t bs = pool->opt.block_size;
  return (int64_t)s->blocks[pos / bs] * bs + pos % bs;
}

poot_status poot_kv_pool_forget(poot_kv_pool *pool) {
  const int32_t open = pool->opt.max_seqs - pool->n_free_seq;
  if (open != 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kv pool forget: %d sequences are open; close them first (their "
                            "blocks would keep rows the device no longer holds)",
                            open);
  for (int32_t b = 0; b < pool->opt.num_blocks; b++) {
    kv_block *blk = &pool->blocks[b];
    blk->cached = blk->hashed = false;
    blk->hash = blk->parent_hash = 0;
  }
  memset(pool->table, 0xff, ((size_t)pool->table_mask + 1) * sizeof(int32_t));
  pool->cached = pool->cached_free = 0;
  return POOT_OK_STATUS;
}

/* --------------------------------------------------------------- report */

void poot_kv_pool_get_stats(const poot_kv_pool *pool, poot_kv_pool_stats *out) {
  memset(out, 0, sizeof *out);
  out->num_blocks = pool->opt.num_blocks;
  out->block_size = pool->opt.block_size;
  out->blocks_in_use = pool->in_use;
  out->blocks_free = pool->opt.num_blocks - pool->in_use;
  out->blocks_cached = pool->cached;
  out->blocks_cached_free = pool->cached_free;
  out->seqs_open = pool->opt.max_seqs - pool->n_free_seq;
  out->evictions = pool->evictions;
  out->matched_blocks = pool->matched;
  out->published = pool->published;
}

int32_t poot_kv_pool_block_refs(const poot_kv_pool *pool, int32_t block) {
  if (block < 0 || block >= pool->opt.num_blocks) return -1;
  return pool->blocks[block].refs;
}

bool poot_kv_pool_block_cached(const poot_kv_pool *pool, int32_t block) {
  if (block < 0 || block >= pool->opt.num_blocks) return false;
  return pool->blocks[block].cached;
}

/* ------------------------------------------------------------ self-check */

static poot_status check_lru(const poot_kv_pool *pool) {
  int32_t sent = lru_sentinel(pool), n = 0, cached = 0;
  for (int32_t b = pool->blocks[sent].next, prev = sent; b != sent;
       prev = b, b = pool->blocks[b].next) {
    if (b < 0 || b >= pool->opt.num_blocks || pool->blocks[b].prev != prev ||
        ++n > pool->opt.num_blocks)
      return poot_status_make(POOT_INTERNAL, "kv pool check: the LRU list is broken at %d", b);
    if (pool->blocks[b].refs != 0)
      return poot_status_make(POOT_INTERNAL, "kv pool check: block %d is held (%d) and free", b,
                              pool->blocks[b].refs);
    cached += pool->blocks[b].cached;
  }
  if (n != pool->opt.num_blocks - pool->in_use || cached != pool->cached_free)
    return poot_status_make(POOT_INTERNAL,
                            "kv pool check: the LRU list holds %d blocks (%d published); the "
                            "counters say %d (%d)",
                            n, cached, pool->opt.num_blocks - pool->in_use, pool->cached_free);
  return POOT_OK_STATUS;
}

static poot_status check_blocks(const poot_kv_pool *pool) {
  int32_t in_use = 0, cached = 0;
  for (int32_t b = 0; b < pool->opt.num_blocks; b++) {
    const kv_block *blk = &pool->blocks[b];
    in_use += blk->refs > 0;
    cached += blk->cached;
    if (blk->refs < 0 || (blk->cached && !blk->hashed))
      return poot_status_make(POOT_INTERNAL,
                              "kv pool check: block %d: refs %d, cached %d, "
                              "hashed %d",
                              b, blk->refs, blk->cached, blk->hashed);
    if (blk->cached && table_find(pool, blk->hash, blk->parent_hash, block_tokens(pool, b)) != b)
      return poot_status_make(POOT_INTERNAL,
                              "kv pool check: published block %d is not found by its content", b);
  }
  int32_t entries = 0;
  for (uint32_t i = 0; i <= pool->table_mask; i++) {
    int32_t b = pool->table[i];
    if (b < 0) continue;
    entries++;
    if (b >= pool->opt.num_blocks || !pool->blocks[b].cached)
      return poot_status_make(POOT_INTERNAL,
                              "kv pool check: table slot %u holds %d, not a "
                              "published block",
                              i, b);
  }
  if (in_use != pool->in_use || cached != pool->cached || entries != cached)
    return poot_status_make(POOT_INTERNAL,
                            "kv pool check: %d blocks held, %d published, %d table entries; the "
                            "counters say %d held, %d published",
                            in_use, cached, entries, pool->in_use, pool->cached);
  return POOT_OK_STATUS;
}

poot_status poot__kv_pool_check(const poot_kv_pool *pool) {
  POOT_TRY(check_lru(pool));
  return check_blocks(pool);
}
