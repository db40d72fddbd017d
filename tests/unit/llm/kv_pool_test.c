/* The KV block pool (src/llm/scheduler/kv_pool.c): sizing, block tables after
 * a sequence of appends, prefix reuse by the hash chain, reference counts,
 * the LRU eviction order, the sharing rule, and a randomized run checked
 * against a shadow of every block's contents. */
#include "poot_test.h"

#include "poot/llm/kv_pool.h"
#include "../../../src/llm/scheduler/kv_pool_internal.h"

static poot_kv_pool *make_pool(int32_t blocks, int32_t bs, int32_t seqs, int64_t len) {
  poot_kv_pool_options o = poot_kv_pool_options_default();
  o.num_blocks = blocks;
  o.block_size = bs;
  o.max_seqs = seqs;
  o.max_seq_len = len;
  poot_kv_pool *pool = NULL;
  POOT_ASSERT_OK(poot_kv_pool_create(&o, &pool));
  return pool;
}

static int32_t open_seq(poot_kv_pool *pool, const int32_t *tokens, int64_t n,
                        int64_t expect_reused) {
  int32_t seq = -1;
  int64_t reused = -1;
  POOT_ASSERT_OK(poot_kv_pool_seq_open(pool, tokens, n, &seq, &reused));
  assert_int_equal(reused, expect_reused);
  return seq;
}

/* Appends tokens[from, to) and commits them. */
static void feed(poot_kv_pool *pool, int32_t seq, const int32_t *tokens, int64_t from, int64_t to) {
  POOT_ASSERT_OK(poot_kv_pool_seq_append(pool, seq, tokens + from, to - from));
  POOT_ASSERT_OK(poot_kv_pool_seq_commit(pool, seq, to));
}

static void assert_table(poot_kv_pool *pool, int32_t seq, const int32_t *want, int32_t n) {
  poot_kv_pool_seq_info si;
  POOT_ASSERT_OK(poot_kv_pool_seq_get(pool, seq, &si));
  assert_int_equal(si.n_blocks, n);
  for (int32_t i = 0; i < n; i++) assert_int_equal(si.blocks[i], want[i]);
}

static poot_kv_pool_stats stats_of(const poot_kv_pool *pool) {
  poot_kv_pool_stats st;
  poot_kv_pool_get_stats(pool, &st);
  return st;
}

static void test_fit_budget(void **state) {
  (void)state;
  poot_kv_pool_fit f;
  poot_kv_pool_fit_params p = {.layers = 2,
                               .kv_heads = 2,
                               .head_dim = 64,
                               .kv_dtype = POOT_DTYPE_F32,
                               .block_size = 16,
                               .budget_bytes = 100000};
  POOT_ASSERT_OK(poot_kv_pool_fit_budget(&p, &f));
  assert_int_equal(f.bytes_per_token, 2 * 2 * 2 * 64 * 4);
  assert_int_equal(f.bytes_per_block, 32768);
  assert_int_equal(f.num_blocks, 3);
  assert_int_equal(f.tokens, 48);
  assert_int_equal(f.bytes, 98304);
  p.kv_dtype = POOT_DTYPE_F16;
  POOT_ASSERT_OK(poot_kv_pool_fit_budget(&p, &f));
  assert_int_equal(f.bytes_per_token, 1024);
  assert_int_equal(f.num_blocks, 6);
  p.kv_dtype = POOT_DTYPE_Q8_0; /* a row of 64 is two blocks of 34 bytes */
  POOT_ASSERT_OK(poot_kv_pool_fit_budget(&p, &f));
  assert_int_equal(f.bytes_per_token, 2 * 2 * 2 * 68);
  assert_int_equal(f.num_blocks, 11);
  assert_int_equal(f.tokens, 176);
  /* Llama-3.1-8B in f16: 128 KiB a token; 16 GiB hold 131,072 tokens. */
  poot_kv_pool_fit_params l = {.layers = 32,
                               .kv_heads = 8,
                               .head_dim = 128,
                               .kv_dtype = POOT_DTYPE_F16,
                               .block_size = 16,
                               .budget_bytes = 16ull << 30};
  POOT_ASSERT_OK(poot_kv_pool_fit_budget(&l, &f));
  assert_int_equal(f.bytes_per_token, 131072);
  assert_int_equal(f.num_blocks, 8192);
  assert_int_equal(f.tokens, 131072);
  p.head_dim = 48;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_fit_budget(&p, &f), POOT_INVALID_ARGUMENT, "head_dim");
  assert_int_equal(f.num_blocks, 0);
  p.head_dim = 64;
  p.kv_dtype = POOT_DTYPE_BF16;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_fit_budget(&p, &f), POOT_UNSUPPORTED, "bf16");
  p.kv_dtype = POOT_DTYPE_F32;
  p.budget_bytes = 32767;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_fit_budget(&p, &f), POOT_CAPACITY, "32768 bytes");
  p.budget_bytes = 1 << 20;
  p.layers = 0;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_fit_budget(&p, &f), POOT_INVALID_ARGUMENT, "layers = 0");
}

static void test_bad_options(void **state) {
  (void)state;
  poot_kv_pool *pool = (poot_kv_pool *)&pool;
  poot_kv_pool_options o = poot_kv_pool_options_default();
  o.block_size = 0;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_create(&o, &pool), POOT_INVALID_ARGUMENT, "block_size = 0");
  assert_null(pool);
  poot_alloc_fail_after(3);
  POOT_ASSERT_STATUS(poot_kv_pool_create(NULL, &pool), POOT_OUT_OF_MEMORY);
  poot_alloc_fail_after(0);
  assert_null(pool);
  POOT_ASSERT_OK(poot_kv_pool_create(NULL, &pool));
  poot_kv_pool_stats st = stats_of(pool);
  assert_int_equal(st.num_blocks, 1024);
  assert_int_equal(st.blocks_free, 1024);
  poot_kv_pool_destroy(pool);
  poot_kv_pool_destroy(NULL);
}

/* Exact block tables: blocks are taken in id order from a fresh pool; a
 * closed sequence's unpublished blocks are reused first, lowest first. */
static void test_block_tables(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(8, 4, 2, 32);
  poot_kv_pool_options po;
  poot_kv_pool_get_options(pool, &po);
  po.prefix_cache = false; /* unpublished blocks only: the order is the free list's */
  poot_kv_pool_destroy(pool);
  POOT_ASSERT_OK(poot_kv_pool_create(&po, &pool));
  int32_t t[32];
  for (int32_t i = 0; i < 32; i++) t[i] = 100 + i;
  int32_t a = open_seq(pool, t, 0, 0);
  assert_int_equal(a, 0);
  assert_table(pool, a, NULL, 0);
  feed(pool, a, t, 0, 3);
  assert_table(pool, a, (int32_t[]){0}, 1);
  assert_int_equal(poot_kv_pool_seq_room(pool, a), 1);
  feed(pool, a, t, 3, 5);
  assert_table(pool, a, (int32_t[]){0, 1}, 2);
  int32_t b = open_seq(pool, t, 0, 0);
  assert_int_equal(b, 1);
  feed(pool, b, t, 0, 6);
  assert_table(pool, b, (int32_t[]){2, 3}, 2);
  feed(pool, a, t, 5, 9);
  assert_table(pool, a, (int32_t[]){0, 1, 4}, 3);
  assert_int_equal(poot_kv_pool_seq_row(pool, a, 5), 1 * 4 + 1);
  assert_int_equal(poot_kv_pool_seq_row(pool, a, 8), 4 * 4 + 0);
  assert_int_equal(poot_kv_pool_seq_row(pool, b, 5), 3 * 4 + 1);
  assert_int_equal(poot_kv_pool_seq_row(pool, a, 9), -1);
  assert_int_equal(poot_kv_pool_blocks_needed(pool, a, 3), 0);
  assert_int_equal(poot_kv_pool_blocks_needed(pool, a, 4), 1);
  assert_int_equal(poot_kv_pool_blocks_needed(pool, a, 8), 2);
  assert_int_equal(stats_of(pool).blocks_in_use, 5);
  poot_kv_pool_seq_close(pool, b);
  assert_int_equal(stats_of(pool).blocks_free, 5);
  /* b's blocks 2 and 3 went to the least-recent end, 2 first. */
  feed(pool, a, t, 9, 13);
  assert_table(pool, a, (int32_t[]){0, 1, 4, 2}, 4);
  b = open_seq(pool, t, 0, 0);
  feed(pool, b, t, 0, 5);
  assert_table(pool, b, (int32_t[]){3, 5}, 2);
  /* Refusals change nothing. */
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_seq_append(pool, a, t, 20), POOT_CAPACITY, "max_seq_len");
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_seq_append(pool, b, t, 13), POOT_CAPACITY, "2 of 8 are free");
  assert_table(pool, b, (int32_t[]){3, 5}, 2);
  int32_t c = -5;
  int64_t r = -5;
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_seq_open(pool, t, 4, &c, &r), POOT_CAPACITY, "max_seqs");
  assert_int_equal(c, -1);
  assert_int_equal(r, 0);
  POOT_ASSERT_STATUS(poot_kv_pool_seq_commit(pool, a, 14), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_kv_pool_seq_commit(pool, a, 12), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_seq_append(pool, 7, t, 1), POOT_INVALID_ARGUMENT, "not open");
  /* Truncate drops reserved rows and the blocks past the last row kept. */
  POOT_ASSERT_OK(poot_kv_pool_seq_append(pool, b, t + 5, 8));
  assert_table(pool, b, (int32_t[]){3, 5, 6, 7}, 4);
  POOT_ASSERT_OK(poot_kv_pool_seq_truncate(pool, b, 5));
  assert_table(pool, b, (int32_t[]){3, 5}, 2);
  POOT_ASSERT_STATUS(poot_kv_pool_seq_truncate(pool, b, 4), POOT_INVALID_ARGUMENT);
  poot_kv_pool_seq_close(pool, a);
  poot_kv_pool_seq_close(pool, b);
  poot_kv_pool_seq_close(pool, b); /* closed: ignored */
  poot_kv_pool_stats st = stats_of(pool);
  assert_int_equal(st.blocks_free, 8);
  assert_int_equal(st.blocks_cached, 0);
  assert_int_equal(st.seqs_open, 0);
  poot_kv_pool_destroy(pool);
}

/* Prefix reuse: full committed blocks are matched, shared and counted; a
 * difference in one token of the second block keeps only the first; the
 * partial last block is never shared; at least one token is left. */
static void test_prefix_reuse(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(16, 4, 4, 64);
  int32_t p[20];
  for (int32_t i = 0; i < 20; i++) p[i] = 7 * i + 1;
  int32_t a = open_seq(pool, p, 14, 0);
  feed(pool, a, p, 0, 14); /* blocks 0, 1, 2 full; block 3 holds 2 rows */
  poot_kv_pool_stats st = stats_of(pool);
  assert_int_equal(st.blocks_cached, 3);
  assert_int_equal(st.published, 3);
  for (int32_t b = 0; b < 3; b++) assert_true(poot_kv_pool_block_cached(pool, b));
  assert_false(poot_kv_pool_block_cached(pool, 3));
  /* The same 12 and new ones: 3 blocks shared, appends go to a new block. */
  int32_t q[20];
  memcpy(q, p, sizeof q);
  q[12] = 999;
  q[13] = 998;
  int32_t b = open_seq(pool, q, 17, 12);
  assert_table(pool, b, (int32_t[]){0, 1, 2}, 3);
  for (int32_t k = 0; k < 3; k++) assert_int_equal(poot_kv_pool_block_refs(pool, k), 2);
  feed(pool, b, q, 12, 17);
  assert_table(pool, b, (int32_t[]){0, 1, 2, 4, 5}, 5);
  assert_int_equal(poot_kv_pool_block_refs(pool, 3), 1);
  /* One token of the second block differs: exactly one block reused. */
  int32_t c_tokens[20];
  memcpy(c_tokens, p, sizeof c_tokens);
  c_tokens[5] = -1;
  int32_t c = open_seq(pool, c_tokens, 20, 4);
  assert_table(pool, c, (int32_t[]){0}, 1);
  assert_int_equal(poot_kv_pool_block_refs(pool, 0), 3);
  poot_kv_pool_seq_close(pool, c);
  /* A prompt of exactly the 3 blocks: the last token is computed again,
   * so 2 blocks are reused. The partial block 3 never matches. */
  c = open_seq(pool, p, 12, 8);
  poot_kv_pool_seq_close(pool, c);
  c = open_seq(pool, p, 14, 12);
  assert_table(pool, c, (int32_t[]){0, 1, 2}, 3);
  poot_kv_pool_seq_close(pool, c);
  /* Refcounts as holders leave: blocks stay published and findable. */
  poot_kv_pool_seq_close(pool, a);
  for (int32_t k = 0; k < 3; k++) assert_int_equal(poot_kv_pool_block_refs(pool, k), 1);
  assert_int_equal(poot_kv_pool_block_refs(pool, 3), 0);
  poot_kv_pool_seq_close(pool, b);
  st = stats_of(pool);
  assert_int_equal(st.blocks_in_use, 0);
  assert_int_equal(st.blocks_free, 16);
  assert_int_equal(st.blocks_cached, 4); /* 0, 1, 2 and b's full block 4 */
  assert_int_equal(st.blocks_cached_free, 4);
  int32_t d = open_seq(pool, q, 20, 16);
  assert_table(pool, d, (int32_t[]){0, 1, 2, 4}, 4);
  st = stats_of(pool);
  assert_int_equal(st.blocks_cached_free, 0);
  assert_int_equal(st.blocks_in_use, 4);
  poot_kv_pool_seq_close(pool, d);
  /* With the cache off nothing is published or matched. */
  poot_kv_pool_destroy(pool);
  poot_kv_pool_options o = poot_kv_pool_options_default();
  o.prefix_cache = false;
  POOT_ASSERT_OK(poot_kv_pool_create(&o, &pool));
  a = open_seq(pool, p, 14, 0);
  feed(pool, a, p, 0, 14);
  b = open_seq(pool, p, 14, 0);
  assert_int_equal(stats_of(pool).blocks_cached, 0);
  poot_kv_pool_destroy(pool); /* with sequences open */
}

/* Salted sequences (poot_kv_pool_seq_open_salted: rows that are not the
 * ids' embeddings) match only blocks of the same salt; salt 0 is unsalted. */
static void test_salted(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(16, 4, 4, 64);
  int32_t p[13];
  for (int32_t i = 0; i < 13; i++) p[i] = i % 3 ? 32000 : i; /* placeholder ids */
  assert_true(poot_kv_pool_root_hash(0) == POOT_KV_POOL_ROOT_HASH);
  assert_true(poot_kv_pool_root_hash(5) != POOT_KV_POOL_ROOT_HASH);
  assert_true(poot_kv_pool_root_hash(5) != poot_kv_pool_root_hash(6));
  int32_t a = -1, b = -1;
  int64_t reused = -1;
  POOT_ASSERT_OK(poot_kv_pool_seq_open_salted(pool, p, 13, 5, &a, &reused));
  assert_int_equal(reused, 0);
  feed(pool, a, p, 0, 13);
  assert_int_equal(stats_of(pool).blocks_cached, 3);
  /* the same ids unsalted, or with another salt: nothing matches */
  b = open_seq(pool, p, 13, 0);
  poot_kv_pool_seq_close(pool, b);
  POOT_ASSERT_OK(poot_kv_pool_seq_open_salted(pool, p, 13, 6, &b, &reused));
  assert_int_equal(reused, 0);
  poot_kv_pool_seq_close(pool, b);
  /* the same salt: the three full blocks */
  POOT_ASSERT_OK(poot_kv_pool_seq_open_salted(pool, p, 13, 5, &b, &reused));
  assert_int_equal(reused, 12);
  assert_table(pool, b, (int32_t[]){0, 1, 2}, 3);
  poot_kv_pool_seq_close(pool, b);
  /* salt 0 is seq_open: an unsalted sequence's blocks match it */
  poot_kv_pool_seq_close(pool, a);
  int32_t q[13];
  for (int32_t i = 0; i < 13; i++) q[i] = 100 + i;
  a = open_seq(pool, q, 13, 0);
  feed(pool, a, q, 0, 13);
  POOT_ASSERT_OK(poot_kv_pool_seq_open_salted(pool, q, 13, 0, &b, &reused));
  assert_int_equal(reused, 12);
  poot_kv_pool_destroy(pool);
}

/* Two sequences computing the same blocks at once: the first to commit
 * publishes, the second keeps private copies; both release cleanly. */
static void test_duplicate_blocks(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(8, 2, 2, 16);
  int32_t t[5] = {1, 2, 3, 4, 5};
  int32_t a = open_seq(pool, t, 5, 0);
  int32_t b = open_seq(pool, t, 5, 0);
  feed(pool, a, t, 0, 5);
  feed(pool, b, t, 0, 5);
  assert_table(pool, a, (int32_t[]){0, 1, 2}, 3);
  assert_table(pool, b, (int32_t[]){3, 4, 5}, 3);
  assert_true(poot_kv_pool_block_cached(pool, 0));
  assert_true(poot_kv_pool_block_cached(pool, 1));
  assert_false(poot_kv_pool_block_cached(pool, 3));
  assert_false(poot_kv_pool_block_cached(pool, 4));
  assert_int_equal(stats_of(pool).blocks_cached, 2);
  poot_kv_pool_seq_close(pool, a);
  poot_kv_pool_seq_close(pool, b);
  assert_int_equal(stats_of(pool).blocks_free, 8);
  int32_t c = open_seq(pool, t, 5, 4);
  assert_table(pool, c, (int32_t[]){0, 1}, 2);
  poot_kv_pool_destroy(pool);
}

/* LRU order: unpublished free blocks go first; then published ones in the
 * order their last holder released them, a sequence's tail before its
 * head; a block matched again becomes the most recent. */
static void test_lru_eviction(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(4, 2, 4, 16);
  int32_t ta[5] = {1, 2, 3, 4, 0}, tb[4] = {5, 6, 7, 8}, tc[8] = {9, 10, 11, 12, 13, 14, 15, 16};
  int32_t a = open_seq(pool, ta, 4, 0);
  feed(pool, a, ta, 0, 4); /* blocks 0, 1 */
  poot_kv_pool_seq_close(pool, a);
  int32_t b = open_seq(pool, tb, 4, 0);
  feed(pool, b, tb, 0, 4); /* blocks 2, 3: the unpublished free ones before 0, 1 */
  assert_table(pool, b, (int32_t[]){2, 3}, 2);
  poot_kv_pool_seq_close(pool, b);
  poot_kv_pool_stats st = stats_of(pool);
  assert_int_equal(st.blocks_cached_free, 4);
  assert_int_equal(st.evictions, 0);
  /* LRU, least recent first: 1 (a's tail), 0, 3 (b's tail), 2. */
  int32_t c = open_seq(pool, tc, 0, 0);
  feed(pool, c, tc, 0, 2);
  assert_table(pool, c, (int32_t[]){1}, 1);
  assert_int_equal(stats_of(pool).evictions, 1);
  /* a's tail is gone, its head still findable; matching it makes it the
   * most recent. */
  int32_t a2 = open_seq(pool, ta, 5, 2);
  assert_table(pool, a2, (int32_t[]){0}, 1);
  poot_kv_pool_seq_close(pool, a2);
  /* Now: 3, 2, 0. */
  feed(pool, c, tc, 2, 4);
  assert_table(pool, c, (int32_t[]){1, 3}, 2);
  feed(pool, c, tc, 4, 6);
  assert_table(pool, c, (int32_t[]){1, 3, 2}, 3);
  assert_true(poot_kv_pool_block_cached(pool, 0));
  feed(pool, c, tc, 6, 8);
  assert_table(pool, c, (int32_t[]){1, 3, 2, 0}, 4);
  st = stats_of(pool);
  assert_int_equal(st.evictions, 4);
  assert_int_equal(st.blocks_free, 0);
  assert_int_equal(st.blocks_cached, 4); /* c's own four blocks, published */
  /* The pool is full: an append is refused, a match still works. */
  int32_t d = open_seq(pool, tc, 7, 6);
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_seq_append(pool, d, tc + 6, 1), POOT_CAPACITY,
                         "0 of 4 are free");
  poot_kv_pool_seq_close(pool, d);
  poot_kv_pool_seq_close(pool, c);
  assert_int_equal(stats_of(pool).blocks_free, 4);
  poot_kv_pool_destroy(pool);
}

/* ------------------------------------------------------------ randomized */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#define R_BLOCKS 24
#define R_BS 3
#define R_SEQS 6
#define R_LEN 40

typedef struct rseq {
  bool open;
  int32_t handle;
  int32_t tokens[R_LEN];
  int64_t n_prompt; /* tokens[0, n_prompt) is the prompt; later ids are drawn as appended */
  int64_t len, committed;
} rseq;

/* Every invariant the pool promises, against the test's own records: each
 * block's holders, the counts, and each row's token. */
static void check_pool(const poot_kv_pool *pool, const rseq *seqs, int32_t shadow[][R_BS]) {
  POOT_ASSERT_OK(poot__kv_pool_check(pool));
  int32_t refs[R_BLOCKS] = {0};
  for (int32_t i = 0; i < R_SEQS; i++) {
    if (!seqs[i].open) continue;
    poot_kv_pool_seq_info si;
    POOT_ASSERT_OK(poot_kv_pool_seq_get(pool, seqs[i].handle, &si));
    assert_int_equal(si.length, seqs[i].len);
    assert_int_equal(si.committed, seqs[i].committed);
    assert_int_equal(si.n_blocks, (seqs[i].len + R_BS - 1) / R_BS);
    for (int32_t k = 0; k < si.n_blocks; k++) refs[si.blocks[k]]++;
    for (int64_t p = 0; p < seqs[i].len; p++)
      assert_int_equal(shadow[si.blocks[p / R_BS]][p % R_BS], seqs[i].tokens[p]);
  }
  int32_t in_use = 0, cached_free = 0;
  for (int32_t b = 0; b < R_BLOCKS; b++) {
    assert_int_equal(poot_kv_pool_block_refs(pool, b), refs[b]);
    in_use += refs[b] > 0;
    cached_free += refs[b] == 0 && poot_kv_pool_block_cached(pool, b);
  }
  poot_kv_pool_stats st = stats_of(pool);
  assert_int_equal(st.blocks_in_use, in_use);
  assert_int_equal(st.blocks_free, R_BLOCKS - in_use);
  assert_int_equal(st.blocks_cached_free, cached_free);
}

/* Random opens (prompts from a tiny vocabulary, so blocks repeat), appends,
 * commits, truncates and closes on a small pool: after every operation the
 * tables, the counts and every row's content agree with the shadow. */
static void test_random_ops(void **state) {
  (void)state;
  poot_kv_pool *pool = make_pool(R_BLOCKS, R_BS, R_SEQS, R_LEN);
  static int32_t shadow[R_BLOCKS][R_BS];
  rseq seqs[R_SEQS] = {0};
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  uint64_t reused_total = 0;
  for (int iter = 0; iter < 20000; iter++) {
    rseq *s = &seqs[rng_next(&rng) % R_SEQS];
    uint64_t op = rng_next(&rng) % 10;
    if (!s->open) {
      int64_t n = 1 + (int64_t)(rng_next(&rng) % (R_LEN - 1));
      for (int64_t i = 0; i < n; i++) s->tokens[i] = (int32_t)(rng_next(&rng) % 2);
      int64_t reused = 0;
      POOT_ASSERT_OK(poot_kv_pool_seq_open(pool, s->tokens, n, &s->handle, &reused));
      assert_true(reused % R_BS == 0 && reused < n);
      reused_total += (uint64_t)reused;
      s->open = true;
      s->len = s->committed = reused;
      s->n_prompt = n;
    } else if (op < 5 && s->len < R_LEN - 1) {
      int64_t n = 1 + (int64_t)(rng_next(&rng) % 7);
      if (n > R_LEN - 1 - s->len) n = R_LEN - 1 - s->len;
      for (int64_t i = s->len; i < s->len + n; i++)
        if (i >= s->n_prompt) s->tokens[i] = (int32_t)(rng_next(&rng) % 2);
      poot_status st = poot_kv_pool_seq_append(pool, s->handle, s->tokens + s->len, n);
      if (st) {
        assert_int_equal(poot_status_consume(st), POOT_CAPACITY);
        assert_true(poot_kv_pool_blocks_needed(pool, s->handle, n) > stats_of(pool).blocks_free);
      } else {
        poot_kv_pool_seq_info si;
        POOT_ASSERT_OK(poot_kv_pool_seq_get(pool, s->handle, &si));
        for (int64_t p = s->len; p < s->len + n; p++)
          shadow[si.blocks[p / R_BS]][p % R_BS] = s->tokens[p];
        s->len += n;
      }
    } else if (op < 8) {
      int64_t n = s->committed + (int64_t)(rng_next(&rng) % (uint64_t)(s->len - s->committed + 1));
      POOT_ASSERT_OK(poot_kv_pool_seq_commit(pool, s->handle, n));
      s->committed = n;
    } else if (op < 9) {
      POOT_ASSERT_OK(poot_kv_pool_seq_truncate(pool, s->handle, s->committed));
      s->len = s->committed;
    } else {
      poot_kv_pool_seq_close(pool, s->handle);
      s->open = false;
    }
    check_pool(pool, seqs, shadow);
  }
  poot_kv_pool_stats st = stats_of(pool);
  assert_true(reused_total > 1000); /* the test did exercise reuse */
  assert_true(st.evictions > 100);
  for (int32_t i = 0; i < R_SEQS; i++)
    if (seqs[i].open) poot_kv_pool_seq_close(pool, seqs[i].handle);
  st = stats_of(pool);
  assert_int_equal(st.blocks_free, R_BLOCKS);
  assert_int_equal(st.seqs_open, 0);
  poot_kv_pool_destroy(pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fit_budget),       cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_block_tables),     cmocka_unit_test(test_prefix_reuse),
      cmocka_unit_test(test_duplicate_blocks), cmocka_unit_test(test_lru_eviction),
      cmocka_unit_test(test_random_ops),       cmocka_unit_test(test_salted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
