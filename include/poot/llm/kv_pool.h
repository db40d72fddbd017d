/* poot/llm/kv_pool.h — the KV block pool: paged KV blocks, per-sequence block
 * tables and prefix reuse (DESIGN §7 "the scheduler", §8; issue 19;
 * docs/batching.md).
 *
 * The pool is the host-side bookkeeping of a paged KV cache: N blocks of
 * `block_size` token rows each (block b holds the pool rows [b·bs, (b+1)·bs)
 * of every layer's K and V state, the `slot_map` / `write_map` layout of
 * poot/llm/model.h). It never touches device memory; it says which block
 * each token of each sequence lives in.
 *
 * A sequence is an ordered list of block ids (its block table) that grows
 * as tokens are appended. Rows are first *reserved* (seq_append: the block
 * exists, the token id is recorded, the device has not written the row yet)
 * and then *committed* (seq_commit: the device step that writes them has
 * finished).
 *
 * Prefix reuse. A block whose bs rows are all committed is *full*; its chain
 * hash is poot_hash64(its token ids, seed = the previous block's chain hash;
 * the first block's seed is POOT_KV_POOL_ROOT_HASH). Full blocks are
 * published in the pool's prefix table; seq_open matches a new sequence's
 * tokens block by block against it, and every matched block is shared
 * (reference counted) instead of recomputed. A match is checked by content:
 * the block's own token ids and its parent's chain hash must be equal.
 *
 * The sharing rule (why no copy-on-write is needed): only full, committed
 * blocks are ever published or matched, and a sequence only writes rows at
 * positions at or past its own length. A sequence's length is a multiple of
 * bs right after seq_open, so its first append opens a new private block;
 * its last, partly filled block is never published. So a block held by two
 * sequences is never written by either.
 *
 * Eviction. A block no sequence holds is *free*. Free blocks sit in one LRU
 * list: a published block goes to the most-recent end when its last holder
 * releases it (a sequence releases its blocks last to first, so a chain's
 * tail is evicted before its head), an unpublished one to the
 * least-recent end (it holds nothing worth keeping). A new block is taken
 * from the least-recent end; a published block taken there is evicted
 * (removed from the prefix table). Until then it stays findable. All of
 * this is O(1) per block.
 *
 * Memory. Everything is allocated by poot_kv_pool_create: no later call
 * allocates, so no later call fails for memory.
 *
 * Not thread safe: one pool is used from one thread at a time. */
#ifndef POOT_LLM_KV_POOL_H
#define POOT_LLM_KV_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seed of the first block's chain hash. */
#define POOT_KV_POOL_ROOT_HASH 0x706f6f742e6b7631ull /* "poot.kv1" */

typedef struct poot_kv_pool poot_kv_pool;

/* ------------------------------------------------------------------ sizing */

typedef struct poot_kv_pool_fit_params {
  int64_t layers;      /* ≥ 1 */
  int64_t kv_heads;    /* Hkv ≥ 1 */
  int64_t head_dim;    /* D ≥ 1; a multiple of 32 for q8_0 */
  poot_dtype kv_dtype; /* POOT_DTYPE_F32, POOT_DTYPE_F16 or POOT_DTYPE_Q8_0 */
  int32_t block_size;  /* tokens per block ≥ 1 */
  uint64_t budget_bytes;
} poot_kv_pool_fit_params;

typedef struct poot_kv_pool_fit {
  uint64_t bytes_per_token; /* K and V of every layer: 2 · layers · Hkv · row(D) */
  uint64_t bytes_per_block; /* bytes_per_token · block_size */
  int32_t num_blocks;       /* whole blocks in the budget (at most INT32_MAX) */
  int64_t tokens;           /* num_blocks · block_size */
  uint64_t bytes;           /* num_blocks · bytes_per_block (≤ budget_bytes) */
} poot_kv_pool_fit;

/* How many blocks of `params->block_size` tokens fit in the byte budget,
 * and how many tokens that is. A row of D elements is D · 4 bytes in f32,
 * D · 2 in f16 and D / 32 · 34 in q8_0 (GGUF's block of 32). Pure.
 * INVALID_ARGUMENT naming the field (a count < 1, D not a multiple of 32 for
 * q8_0); UNSUPPORTED for another kv_dtype; CAPACITY when the budget holds
 * no block (naming both sizes). *out is zeroed first. */
POOT_MUST_USE poot_status poot_kv_pool_fit_budget(const poot_kv_pool_fit_params *params,
                                                  poot_kv_pool_fit *out);

/* -------------------------------------------------------------- lifecycle */

typedef struct poot_kv_pool_options {
  int32_t num_blocks;  /* blocks in the pool ≥ 1 */
  int32_t block_size;  /* tokens per block ≥ 1 */
  int32_t max_seqs;    /* sequences open at once ≥ 1 */
  int64_t max_seq_len; /* positions of one sequence (the capacity `cap`) ≥ 1 */
  bool prefix_cache;   /* publish full blocks and match prompts against them */
} poot_kv_pool_options;

/* 1,024 blocks of 16 tokens, 64 sequences of up to 4,096 positions, prefix
 * reuse on. */
static inline poot_kv_pool_options poot_kv_pool_options_default(void) {
  poot_kv_pool_options o = {.num_blocks = 1024,
                            .block_size = 16,
                            .max_seqs = 64,
                            .max_seq_len = 4096,
                            .prefix_cache = true};
  return o;
}

/* Creates a pool (every block free, nothing published). options may be
 * NULL (the defaults). INVALID_ARGUMENT naming the field; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_kv_pool_create(const poot_kv_pool_options *options,
                                              poot_kv_pool **out_pool);
/* Frees the pool and every sequence still open. NULL-safe. */
void poot_kv_pool_destroy(poot_kv_pool *pool);
/* The options the pool was created with. */
void poot_kv_pool_get_options(const poot_kv_pool *pool, poot_kv_pool_options *out);

/* -------------------------------------------------------------- sequences */

/* Opens a sequence and matches `tokens` (n ids, borrowed, read during the
 * call only; may be NULL when n is 0) against the published blocks: the
 * longest chain of whole blocks equal to tokens' leading blocks, at most
 * (n − 1) / bs blocks (so at least one token is left to compute: the step
 * that feeds it gives the next token's logits). The matched blocks are
 * shared and count as committed: the sequence starts with
 * *out_reused = matched · bs tokens. Nothing is appended; the caller appends
 * tokens[*out_reused ..] next. With prefix_cache off nothing matches.
 * CAPACITY when max_seqs sequences are open; INVALID_ARGUMENT for n < 0.
 * *out_seq is −1 and *out_reused 0 on failure. */
POOT_MUST_USE poot_status poot_kv_pool_seq_open(poot_kv_pool *pool, const int32_t *tokens,
                                                int64_t n, int32_t *out_seq, int64_t *out_reused);

/* As poot_kv_pool_seq_open, with the sequence's chain hashes seeded by
 * `salt` (0: unsalted, as seq_open): the first block's parent hash is
 * poot_kv_pool_root_hash(salt), so its blocks match only blocks published
 * by a sequence of the same salt. How rows that are not the token ids'
 * (input embeddings: an image's rows at its placeholder ids) keep a prompt
 * from matching blocks computed from other rows: the salt is a hash of
 * those rows. */
POOT_MUST_USE poot_status poot_kv_pool_seq_open_salted(poot_kv_pool *pool, const int32_t *tokens,
                                                       int64_t n, uint64_t salt, int32_t *out_seq,
                                                       int64_t *out_reused);
/* The first block's parent hash of a sequence opened with `salt`:
 * POOT_KV_POOL_ROOT_HASH for 0, else poot_hash64(salt, seed = the root). */
uint64_t poot_kv_pool_root_hash(uint64_t salt);

/* Releases the sequence's blocks (last to first; see Eviction) and closes
 * it. The handle may be reused by a later seq_open. An invalid or closed
 * handle is ignored. */
void poot_kv_pool_seq_close(poot_kv_pool *pool, int32_t seq);

/* Reserves rows for n more tokens (ids borrowed, copied into the blocks'
 * records), taking new blocks as the sequence crosses block boundaries
 * (evicting the least-recently-used published free block when no
 * unpublished one is left). All or nothing: CAPACITY when the pool has
 * fewer free blocks than the append needs (poot_kv_pool_blocks_needed), or
 * when the sequence would pass max_seq_len; nothing changes then.
 * INVALID_ARGUMENT for a bad handle or n < 0. */
POOT_MUST_USE poot_status poot_kv_pool_seq_append(poot_kv_pool *pool, int32_t seq,
                                                  const int32_t *tokens, int64_t n);

/* Marks the sequence's first n rows written (the device step finished):
 * every block that becomes full gets its chain hash and, with prefix_cache
 * on, is published unless an equal block already is (the sequence then keeps
 * its own copy private). INVALID_ARGUMENT unless committed ≤ n ≤ length. */
POOT_MUST_USE poot_status poot_kv_pool_seq_commit(poot_kv_pool *pool, int32_t seq, int64_t n);

/* Drops reserved rows past n (a step that did not run), releasing the
 * blocks past the last row kept. INVALID_ARGUMENT unless committed ≤ n ≤
 * length. */
POOT_MUST_USE poot_status poot_kv_pool_seq_truncate(poot_kv_pool *pool, int32_t seq, int64_t n);

/* New blocks an append of n tokens to the sequence would take (0 for a bad
 * handle or n ≤ 0). */
int32_t poot_kv_pool_blocks_needed(const poot_kv_pool *pool, int32_t seq, int64_t n);
/* Tokens the sequence can append with no new block (room in its last block). */
int64_t poot_kv_pool_seq_room(const poot_kv_pool *pool, int32_t seq);

typedef struct poot_kv_pool_seq_info {
  int64_t length;        /* tokens reserved (committed or not) */
  int64_t committed;     /* tokens whose rows are written */
  int32_t n_blocks;      /* ceil(length / bs) */
  const int32_t *blocks; /* the block table: n_blocks ids; borrowed until the
                          * next call that changes this sequence */
} poot_kv_pool_seq_info;

/* The sequence's state. INVALID_ARGUMENT for a bad handle (*out zeroed). */
POOT_MUST_USE poot_status poot_kv_pool_seq_get(const poot_kv_pool *pool, int32_t seq,
                                               poot_kv_pool_seq_info *out);

/* The pool row of the sequence's position pos (block · bs + pos mod bs: the
 * value write_map takes), or −1 for a bad handle or pos outside
 * [0, length). */
int64_t poot_kv_pool_seq_row(const poot_kv_pool *pool, int32_t seq, int64_t pos);

/* Forgets every block's contents (the device lost or zeroed the K/V rows:
 * a fault, a reset, a new device context): the prefix table empties and no
 * block is published until full blocks are committed again, so no later
 * prompt matches rows that are gone. Every block stays free; the counters
 * over the pool's life are kept. INVALID_ARGUMENT while a sequence is open
 * (close them first: the scheduler's poot_scheduler_requeue_running). */
POOT_MUST_USE poot_status poot_kv_pool_forget(poot_kv_pool *pool);

/* ------------------------------------------------------------------ report */

typedef struct poot_kv_pool_stats {
  int32_t num_blocks, block_size;
  int32_t blocks_in_use;      /* held by at least one sequence */
  int32_t blocks_free;        /* held by none (num_blocks − in use) */
  int32_t blocks_cached;      /* published (findable), held or free */
  int32_t blocks_cached_free; /* published and free: evictable, still findable */
  int32_t seqs_open;
  uint64_t evictions;      /* published blocks taken for new content */
  uint64_t matched_blocks; /* blocks shared by seq_open, over the pool's life */
  uint64_t published;      /* blocks published, over the pool's life */
} poot_kv_pool_stats;

void poot_kv_pool_get_stats(const poot_kv_pool *pool, poot_kv_pool_stats *out);

/* Introspection (tests, metrics): the block's holders (0 when free; −1 for
 * an id outside the pool) and whether it is published. */
int32_t poot_kv_pool_block_refs(const poot_kv_pool *pool, int32_t block);
bool poot_kv_pool_block_cached(const poot_kv_pool *pool, int32_t block);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_KV_POOL_H */
