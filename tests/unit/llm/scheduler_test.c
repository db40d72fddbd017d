/* The scheduler core (src/llm/scheduler/scheduler*.c) over a fake device.
 *
 * The fake device keeps one token id per pool row. Running an item writes
 * its tokens into the rows its block table names and "computes" the next id
 * from the rows it reads back through the table (a hash of the tokens at
 * positions [0, pos + n)). A wrong block table, a shared block overwritten,
 * a reused block of other content or a history lost in a preemption all
 * change the ids, so every test compares them with the ids of the request
 * run alone (gen_expected: the same hash over its own history). */
#include "poot_test.h"

#include <stdlib.h>

#include "poot/llm/scheduler.h"
#include "../../../src/llm/scheduler/kv_pool_internal.h"

/* ------------------------------------------------------------ the device */

typedef struct fake {
  poot_kv_pool *pool;
  poot_scheduler *sched;
  int32_t bs;
  int32_t *rows; /* the token written at each pool row, −1 when never */
  bool use_stop; /* ids ≡ 0 mod 97 stop their request */
  int64_t limit;
} fake;

static int32_t next_id(const int32_t *tokens, int64_t n) {
  return 3 + (int32_t)(poot_hash64(tokens, (size_t)n * sizeof *tokens, 7) % 500);
}

static bool stops(const fake *f, int32_t id) {
  return f->use_stop && id % 97 == 0;
}

static void fake_init(fake *f, int32_t blocks, int32_t bs, int64_t max_len, int32_t batch,
                      int32_t budget, int32_t chunk) {
  memset(f, 0, sizeof *f);
  poot_kv_pool_options po = poot_kv_pool_options_default();
  po.num_blocks = blocks;
  po.block_size = bs;
  po.max_seqs = batch;
  po.max_seq_len = max_len;
  POOT_ASSERT_OK(poot_kv_pool_create(&po, &f->pool));
  poot_scheduler_options so = poot_scheduler_options_default();
  so.max_batch = batch;
  so.token_budget = budget;
  so.prefill_chunk = chunk;
  so.max_requests = 512;
  POOT_ASSERT_OK(poot_scheduler_create(f->pool, &so, &f->sched));
  f->bs = bs;
  f->rows = malloc((size_t)blocks * (size_t)bs * sizeof *f->rows);
  for (int64_t i = 0; i < (int64_t)blocks * bs; i++) f->rows[i] = -1;
  f->limit = (int64_t)blocks * bs < max_len ? (int64_t)blocks * bs : max_len;
}

static void fake_deinit(fake *f) {
  poot_scheduler_destroy(f->sched);
  poot_kv_pool_destroy(f->pool);
  free(f->rows);
}

static int64_t row_of(const fake *f, const poot_scheduler_work *w, int64_t p) {
  assert_true(p / f->bs < w->n_blocks);
  return (int64_t)w->blocks[p / f->bs] * f->bs + p % f->bs;
}

/* Runs one item on the fake device: checks what it reads and writes, and
 * returns the id its last row gives. */
static int32_t fake_run(fake *f, const poot_scheduler_work *w) {
  const int32_t *hist = NULL;
  int64_t n_hist = 0;
  POOT_ASSERT_OK(poot_scheduler_request_tokens(f->sched, w->caller_id, &hist, &n_hist));
  assert_true(w->pos + w->n_tokens <= n_hist);
  assert_int_equal(w->n_blocks, (w->pos + w->n_tokens + f->bs - 1) / f->bs);
  int64_t end = w->pos + w->n_tokens;
  for (int64_t p = w->pos; p < end; p++) {
    assert_int_equal(w->tokens[p - w->pos], hist[p]);
    /* A row written here is in a block no other sequence holds. */
    assert_int_equal(poot_kv_pool_block_refs(f->pool, w->blocks[p / f->bs]), 1);
    assert_int_equal(poot_kv_pool_seq_row(f->pool, w->seq, p), row_of(f, w, p));
    f->rows[row_of(f, w, p)] = w->tokens[p - w->pos];
  }
  int32_t *seen = malloc((size_t)end * sizeof *seen);
  for (int64_t p = 0; p < end; p++) seen[p] = f->rows[row_of(f, w, p)];
  assert_memory_equal(seen, hist, (size_t)end * sizeof *seen);
  int32_t id = next_id(seen, end);
  free(seen);
  return id;
}

/* Plans, runs and reports one step; returns the plan's item count. The
 * plan is copied to *out_plan when given. */
static int32_t fake_step(fake *f, poot_scheduler_plan *out_plan) {
  const poot_scheduler_plan *plan = NULL;
  POOT_ASSERT_OK(poot_scheduler_step_plan(f->sched, &plan));
  assert_non_null(plan);
  if (out_plan) *out_plan = *plan;
  poot_scheduler_result res[64];
  assert_true(plan->n_work <= 64);
  int32_t sum = 0;
  for (int32_t i = 0; i < plan->n_work; i++) {
    int32_t id = fake_run(f, &plan->work[i]);
    res[i] = (poot_scheduler_result){.token = id, .stop = stops(f, id)};
    sum += plan->work[i].n_tokens;
  }
  assert_int_equal(sum, plan->n_tokens);
  int32_t n = plan->n_work;
  POOT_ASSERT_OK(poot_scheduler_step_done(f->sched, res, n));
  POOT_ASSERT_OK(poot__kv_pool_check(f->pool));
  return n;
}

static void submit(fake *f, uint64_t id, const int32_t *prompt, int64_t n, int64_t max_new) {
  poot_scheduler_request rq = {
      .prompt = prompt, .n_prompt = n, .max_new_tokens = max_new, .caller_id = id};
  POOT_ASSERT_OK(poot_scheduler_submit(f->sched, &rq));
}

/* The ids the request generates alone, and why it ends. */
static int64_t gen_expected(const fake *f, const int32_t *prompt, int64_t n, int64_t max_new,
                            int32_t *out, poot_scheduler_finish *out_finish) {
  int32_t *hist = malloc((size_t)(n + max_new + 1) * sizeof *hist);
  memcpy(hist, prompt, (size_t)n * sizeof *hist);
  int64_t len = n, gen = 0;
  for (;;) {
    int32_t id = next_id(hist, len);
    hist[len++] = id;
    out[gen++] = id;
    if (stops(f, id)) {
      *out_finish = POOT_SCHEDULER_FINISH_STOP;
      break;
    }
    if (gen == max_new) {
      *out_finish = POOT_SCHEDULER_FINISH_LENGTH;
      break;
    }
    if (len >= f->limit) {
      *out_finish = POOT_SCHEDULER_FINISH_CAPACITY;
      break;
    }
  }
  free(hist);
  return gen;
}

/* The generated ids of a request (after its prompt). */
static void assert_generated(fake *f, uint64_t id, const int32_t *prompt, int64_t n,
                             int64_t max_new) {
  const int32_t *hist = NULL;
  int64_t n_hist = 0;
  POOT_ASSERT_OK(poot_scheduler_request_tokens(f->sched, id, &hist, &n_hist));
  int32_t *want = malloc((size_t)(max_new + 1) * sizeof *want);
  poot_scheduler_finish fin;
  int64_t gen = gen_expected(f, prompt, n, max_new, want, &fin);
  assert_int_equal(n_hist, n + gen);
  assert_memory_equal(hist, prompt, (size_t)n * sizeof *hist);
  assert_memory_equal(hist + n, want, (size_t)gen * sizeof *hist);
  poot_scheduler_request_info info;
  POOT_ASSERT_OK(poot_scheduler_request_get(f->sched, id, &info));
  assert_int_equal(info.state, POOT_SCHEDULER_FINISHED);
  assert_int_equal(info.finish, fin);
  assert_int_equal(info.n_generated, gen);
  free(want);
}

static poot_scheduler_stats sched_stats(const fake *f) {
  poot_scheduler_stats st;
  poot_scheduler_get_stats(f->sched, &st);
  return st;
}

static void run_until_idle(fake *f, int max_steps) {
  int steps = 0;
  while (fake_step(f, NULL) > 0) assert_true(++steps < max_steps);
}

/* --------------------------------------------------------------- tests */

static void test_options(void **state) {
  (void)state;
  poot_kv_pool *pool = NULL;
  poot_kv_pool_options po = poot_kv_pool_options_default();
  po.max_seqs = 4;
  POOT_ASSERT_OK(poot_kv_pool_create(&po, &pool));
  poot_scheduler *s = (poot_scheduler *)&s;
  poot_scheduler_options so = poot_scheduler_options_default();
  so.max_batch = 4;
  so.token_budget = 3;
  POOT_ASSERT_STATUS_MSG(poot_scheduler_create(pool, &so, &s), POOT_INVALID_ARGUMENT,
                         "token_budget = 3 is below max_batch = 4");
  assert_null(s);
  so.token_budget = 64;
  so.max_batch = 5;
  POOT_ASSERT_STATUS_MSG(poot_scheduler_create(pool, &so, &s), POOT_INVALID_ARGUMENT, "max_seqs");
  so.max_batch = 4;
  int32_t seq;
  int64_t reused;
  POOT_ASSERT_OK(poot_kv_pool_seq_open(pool, NULL, 0, &seq, &reused));
  POOT_ASSERT_STATUS_MSG(poot_scheduler_create(pool, &so, &s), POOT_INVALID_ARGUMENT,
                         "sequences open");
  poot_kv_pool_seq_close(pool, seq);
  POOT_ASSERT_STATUS(poot_scheduler_create(NULL, &so, &s), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_OK(poot_scheduler_create(pool, &so, &s));
  poot_scheduler_destroy(s);
  poot_scheduler_destroy(NULL);
  poot_kv_pool_destroy(pool);
}

static void test_submit_refusals(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 4, 4, 64, 2, 8, 0); /* the whole pool: 16 tokens */
  int32_t p[32] = {0};
  poot_scheduler_request rq = {.prompt = p, .n_prompt = 16, .max_new_tokens = 1, .caller_id = 1};
  POOT_ASSERT_STATUS_MSG(poot_scheduler_submit(f.sched, &rq), POOT_CAPACITY, "cannot fit");
  rq.n_prompt = 15;
  POOT_ASSERT_OK(poot_scheduler_submit(f.sched, &rq));
  POOT_ASSERT_STATUS_MSG(poot_scheduler_submit(f.sched, &rq), POOT_INVALID_ARGUMENT,
                         "already in use");
  rq.caller_id = 2;
  rq.n_prompt = 0;
  POOT_ASSERT_STATUS(poot_scheduler_submit(f.sched, &rq), POOT_INVALID_ARGUMENT);
  rq.n_prompt = 3;
  rq.max_new_tokens = 0;
  POOT_ASSERT_STATUS(poot_scheduler_submit(f.sched, &rq), POOT_INVALID_ARGUMENT);
  assert_int_equal(sched_stats(&f).queued, 1);
  fake_deinit(&f);
  /* max_seq_len below the pool bounds a sequence too. */
  fake_init(&f, 64, 4, 10, 2, 8, 0);
  rq = (poot_scheduler_request){.prompt = p, .n_prompt = 10, .max_new_tokens = 1, .caller_id = 1};
  POOT_ASSERT_STATUS_MSG(poot_scheduler_submit(f.sched, &rq), POOT_CAPACITY, "at most 10 tokens");
  rq.n_prompt = 9;
  POOT_ASSERT_OK(poot_scheduler_submit(f.sched, &rq));
  fake_deinit(&f);
  /* The request slots. */
  poot_kv_pool *pool = NULL;
  POOT_ASSERT_OK(poot_kv_pool_create(NULL, &pool));
  poot_scheduler *s = NULL;
  poot_scheduler_options so = poot_scheduler_options_default();
  so.max_requests = 2;
  POOT_ASSERT_OK(poot_scheduler_create(pool, &so, &s));
  rq = (poot_scheduler_request){.prompt = p, .n_prompt = 3, .max_new_tokens = 1, .caller_id = 1};
  POOT_ASSERT_OK(poot_scheduler_submit(s, &rq));
  rq.caller_id = 2;
  POOT_ASSERT_OK(poot_scheduler_submit(s, &rq));
  rq.caller_id = 3;
  POOT_ASSERT_STATUS_MSG(poot_scheduler_submit(s, &rq), POOT_CAPACITY, "request slots");
  poot_scheduler_destroy(s);
  poot_kv_pool_destroy(pool);
}

static void assert_work(const poot_scheduler_plan *p, int32_t i, uint64_t id, int64_t pos,
                        int32_t n, bool emits) {
  assert_true(i < p->n_work);
  assert_int_equal(p->work[i].caller_id, id);
  assert_int_equal(p->work[i].pos, pos);
  assert_int_equal(p->work[i].n_tokens, n);
  assert_int_equal(p->work[i].emits, emits);
}

static void assert_blocks(const poot_scheduler_work *w, const int32_t *want, int32_t n) {
  assert_int_equal(w->n_blocks, n);
  for (int32_t i = 0; i < n; i++) assert_int_equal(w->blocks[i], want[i]);
}

/* Chunked prefill under a budget of 8: the running sequence's decode token
 * comes first every step, the joining prompt of 20 takes the rest in
 * chunks; the block tables are exact. */
static void test_chunked_prefill(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 64, 4, 256, 4, 8, 0);
  int32_t a[3] = {5, 6, 7}, b[20];
  for (int32_t i = 0; i < 20; i++) b[i] = 40 + i;
  submit(&f, 1, a, 3, 10);
  poot_scheduler_plan p;
  assert_int_equal(fake_step(&f, &p), 1);
  assert_work(&p, 0, 1, 0, 3, true);
  assert_true(p.work[0].prefill);
  assert_int_equal(p.n_admitted, 1);
  submit(&f, 2, b, 20, 2);
  fake_step(&f, &p);
  assert_int_equal(p.n_work, 2);
  assert_work(&p, 0, 1, 3, 1, true);
  assert_false(p.work[0].prefill);
  assert_work(&p, 1, 2, 0, 7, false);
  assert_int_equal(p.n_decode, 1);
  assert_int_equal(p.n_tokens, 8);
  assert_blocks(&p.work[0], (int32_t[]){0}, 1);
  assert_blocks(&p.work[1], (int32_t[]){1, 2}, 2);
  fake_step(&f, &p);
  assert_work(&p, 0, 1, 4, 1, true);
  assert_work(&p, 1, 2, 7, 7, false);
  assert_blocks(&p.work[0], (int32_t[]){0, 3}, 2);
  assert_blocks(&p.work[1], (int32_t[]){1, 2, 4, 5}, 4);
  fake_step(&f, &p);
  assert_work(&p, 0, 1, 5, 1, true);
  assert_work(&p, 1, 2, 14, 6, true);
  fake_step(&f, &p);
  assert_int_equal(p.n_decode, 2);
  assert_work(&p, 0, 1, 6, 1, true);
  assert_work(&p, 1, 2, 20, 1, true);
  run_until_idle(&f, 100);
  assert_generated(&f, 1, a, 3, 10);
  assert_generated(&f, 2, b, 20, 2);
  poot_scheduler_request_info info;
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 2, &info));
  assert_int_equal(info.prefill_tokens, 20);
  assert_int_equal(info.decode_tokens, 1);
  assert_int_equal(info.submit_step, 1);
  assert_int_equal(info.first_token_step, 3);
  assert_int_equal(info.finish_step, 4);
  assert_true(info.first_token_ns >= info.submit_ns && info.finish_ns >= info.first_token_ns);
  fake_deinit(&f);
  /* prefill_chunk bounds a chunk below the budget. */
  fake_init(&f, 64, 4, 256, 4, 8, 4);
  submit(&f, 2, b, 20, 1);
  fake_step(&f, &p);
  assert_work(&p, 0, 2, 0, 4, false);
  assert_int_equal(p.n_tokens, 4);
  run_until_idle(&f, 100);
  assert_generated(&f, 2, b, 20, 1);
  fake_deinit(&f);
}

/* Prefix reuse: a request that shares a 3-block prefix with a finished one
 * computes only its new tokens; one that differs in one token of block 2
 * reuses exactly one block; one that joins while the first is running
 * shares its live blocks. Every id equals the request's ids alone. */
static void test_prefix_reuse(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 64, 16, 1024, 4, 64, 0);
  int32_t pa[53], pb[55], pc[53];
  for (int32_t i = 0; i < 53; i++) pa[i] = 1000 + i;
  memcpy(pb, pa, 48 * sizeof *pb);
  for (int32_t i = 48; i < 55; i++) pb[i] = 2000 + i;
  memcpy(pc, pa, sizeof pc);
  pc[20] = 7; /* block 2 (tokens 16..31) */
  submit(&f, 1, pa, 53, 3);
  run_until_idle(&f, 20);
  assert_generated(&f, 1, pa, 53, 3);
  poot_scheduler_request_info info;
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 1, &info));
  assert_int_equal(info.prefill_tokens, 53);
  assert_int_equal(info.reused_tokens, 0);
  submit(&f, 2, pb, 55, 3);
  run_until_idle(&f, 20);
  assert_generated(&f, 2, pb, 55, 3);
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 2, &info));
  assert_int_equal(info.reused_tokens, 48);
  assert_int_equal(info.prefill_tokens, 7);
  submit(&f, 3, pc, 53, 3);
  run_until_idle(&f, 20);
  assert_generated(&f, 3, pc, 53, 3);
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 3, &info));
  assert_int_equal(info.reused_tokens, 16);
  assert_int_equal(info.prefill_tokens, 37);
  /* Live sharing: request 5 joins while request 4 (the same 48-token
   * prefix) is decoding; both hold the three blocks. */
  int32_t pd[50], pe[49];
  memcpy(pd, pa, 48 * sizeof *pd);
  pd[48] = 11, pd[49] = 12;
  memcpy(pe, pa, 48 * sizeof *pe);
  pe[48] = 13;
  submit(&f, 4, pd, 50, 6);
  fake_step(&f, NULL);
  submit(&f, 5, pe, 49, 6);
  poot_scheduler_plan p;
  fake_step(&f, &p);
  assert_work(&p, 1, 5, 48, 1, true);
  assert_int_equal(poot_kv_pool_block_refs(f.pool, p.work[1].blocks[0]), 2);
  assert_int_equal(p.work[1].blocks[2], p.work[0].blocks[2]);
  assert_int_not_equal(p.work[1].blocks[3], p.work[0].blocks[3]);
  run_until_idle(&f, 20);
  assert_generated(&f, 4, pd, 50, 6);
  assert_generated(&f, 5, pe, 49, 6);
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 5, &info));
  assert_int_equal(info.reused_tokens, 48);
  assert_int_equal(info.prefill_tokens, 1);
  poot_scheduler_stats st = sched_stats(&f);
  assert_int_equal(st.reused_tokens, 48 + 16 + 48 + 48);
  assert_int_equal(st.kv.blocks_in_use, 0);
  assert_int_equal(st.finished_waiting, 5);
  fake_deinit(&f);
}

/* prefix_salt: a salted prompt (its rows are not its ids' embeddings: an
 * image's) matches only blocks of its salt; an unsalted one only unsalted
 * blocks. */
static void test_prefix_salt(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 64, 16, 1024, 4, 64, 0);
  int32_t pa[40];
  for (int32_t i = 0; i < 40; i++) pa[i] = 1000 + i;
  const uint64_t salts[5] = {7, 8, 0, 7, 0};
  const int64_t reused[5] = {0, 0, 0, 32, 32};
  for (uint64_t id = 1; id <= 5; id++) {
    poot_scheduler_request rq = {.prompt = pa,
                                 .n_prompt = 40,
                                 .max_new_tokens = 2,
                                 .caller_id = id,
                                 .prefix_salt = salts[id - 1]};
    POOT_ASSERT_OK(poot_scheduler_submit(f.sched, &rq));
    run_until_idle(&f, 20);
    assert_generated(&f, id, pa, 40, 2);
    poot_scheduler_request_info info;
    POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, id, &info));
    assert_int_equal(info.reused_tokens, reused[id - 1]);
  }
  fake_deinit(&f);
}

/* The id of the oldest request not finished, from the test's own list. */
static int64_t oldest_live(fake *f, const uint64_t *ids, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    poot_scheduler_request_info info;
    poot_status st = poot_scheduler_request_get(f->sched, ids[i], &info);
    if (st) {
      poot_status_free(st);
      continue;
    }
    if (info.state != POOT_SCHEDULER_FINISHED) return (int64_t)ids[i];
  }
  return -1;
}

/* Plans one step and checks the progress guarantee: with anything live the
 * plan is not empty, and the oldest live request is in it and was not
 * preempted. Then runs it. */
static int32_t step_checked(fake *f, const uint64_t *ids, int32_t n) {
  int64_t oldest = oldest_live(f, ids, n);
  poot_scheduler_request_info before = {0};
  if (oldest >= 0) POOT_ASSERT_OK(poot_scheduler_request_get(f->sched, (uint64_t)oldest, &before));
  poot_scheduler_plan p;
  int32_t got = fake_step(f, &p);
  if (p.n_preempted > 0) assert_int_equal(p.n_admitted, 0); /* no admission under pressure */
  if (oldest < 0) return got;
  assert_true(got > 0);
  bool in_plan = false;
  for (int32_t i = 0; i < p.n_work; i++) in_plan |= p.work[i].caller_id == (uint64_t)oldest;
  assert_true(in_plan);
  poot_scheduler_request_info after;
  POOT_ASSERT_OK(poot_scheduler_request_get(f->sched, (uint64_t)oldest, &after));
  assert_int_equal(after.preemptions, before.preemptions);
  return got;
}

/* Four requests that need 64 tokens of KV between them share a pool of 24:
 * the newest are preempted and recomputed, the oldest always progresses,
 * and every request ends with its own ids. */
static void test_preemption_progress(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 6, 4, 64, 4, 16, 0);
  int32_t prompts[4][4];
  uint64_t ids[4] = {10, 11, 12, 13};
  for (int32_t r = 0; r < 4; r++) {
    for (int32_t i = 0; i < 4; i++) prompts[r][i] = 100 * r + i;
    submit(&f, ids[r], prompts[r], 4, 12);
  }
  int steps = 0;
  while (step_checked(&f, ids, 4) > 0) assert_true(++steps < 500);
  poot_scheduler_stats st = sched_stats(&f);
  assert_true(st.preemptions > 0);
  int32_t preempted = 0;
  for (int32_t r = 0; r < 4; r++) {
    assert_generated(&f, ids[r], prompts[r], 4, 12);
    poot_scheduler_request_info info;
    POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, ids[r], &info));
    preempted += info.preemptions;
  }
  assert_int_equal(preempted, (int32_t)st.preemptions);
  poot_scheduler_request_info info;
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, ids[0], &info));
  assert_int_equal(info.preemptions, 0);
  assert_int_equal(st.kv.blocks_free, 6);
  assert_int_equal(st.kv.seqs_open, 0);
  fake_deinit(&f);
}

/* The tightest budget (token_budget = max_batch): the oldest request's
 * prompt is fed a token a step while three newer ones decode beside it; it
 * gets its token every step. */
static void test_budget_edge(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 64, 4, 256, 4, 4, 1);
  int32_t big[30], small[3][1] = {{1}, {2}, {3}};
  for (int32_t i = 0; i < 30; i++) big[i] = 300 + i;
  uint64_t ids[4] = {1, 2, 3, 4};
  submit(&f, 1, big, 30, 3);
  for (int32_t r = 0; r < 3; r++) submit(&f, ids[r + 1], small[r], 1, 20);
  int steps = 0, shared_steps = 0;
  for (;;) {
    poot_scheduler_request_info o;
    POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 1, &o));
    int32_t n = step_checked(&f, ids, 4);
    if (n == 0) break;
    assert_true(++steps < 200);
    assert_true(n <= 4);
    shared_steps += o.n_generated == 0 && n == 4;
  }
  assert_true(shared_steps > 5); /* the prompt really ran beside three decoders */
  assert_generated(&f, 1, big, 30, 3);
  for (int32_t r = 0; r < 3; r++) assert_generated(&f, ids[r + 1], small[r], 1, 20);
  fake_deinit(&f);
}

/* A request whose history reaches the limit ends with CAPACITY. */
static void test_capacity_finish(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 4, 4, 64, 2, 8, 0);
  int32_t p[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  submit(&f, 1, p, 10, 100);
  run_until_idle(&f, 50);
  assert_generated(&f, 1, p, 10, 100);
  poot_scheduler_request_info info;
  assert_true(poot_scheduler_take_finished(f.sched, &info));
  assert_int_equal(info.finish, POOT_SCHEDULER_FINISH_CAPACITY);
  assert_int_equal(info.n_generated, 6);
  assert_false(poot_scheduler_take_finished(f.sched, &info));
  POOT_ASSERT_STATUS(poot_scheduler_request_get(f.sched, 1, &info), POOT_NOT_FOUND);
  fake_deinit(&f);
}

/* Cancellation of a queued request, of a running one between steps, and of
 * one in the step in flight (its result is dropped); a finished or unknown
 * request is NOT_FOUND. */
static void test_cancel(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 16, 4, 64, 2, 8, 0);
  int32_t p[6] = {1, 2, 3, 4, 5, 6};
  submit(&f, 1, p, 6, 20);
  submit(&f, 2, p, 6, 20);
  submit(&f, 3, p, 6, 20);
  POOT_ASSERT_OK(poot_scheduler_cancel(f.sched, 3)); /* queued */
  assert_int_equal(sched_stats(&f).queued, 2);
  fake_step(&f, NULL);
  fake_step(&f, NULL);
  int32_t in_use = sched_stats(&f).kv.blocks_in_use;
  assert_true(in_use > 0);
  POOT_ASSERT_OK(poot_scheduler_cancel(f.sched, 2)); /* running, between steps */
  poot_scheduler_stats st = sched_stats(&f);
  assert_int_equal(st.running, 1);
  assert_true(st.kv.blocks_in_use < in_use);
  const poot_scheduler_plan *plan = NULL;
  POOT_ASSERT_OK(poot_scheduler_step_plan(f.sched, &plan));
  assert_int_equal(plan->n_work, 1);
  const int32_t *hist;
  int64_t n_before, n_after;
  POOT_ASSERT_OK(poot_scheduler_request_tokens(f.sched, 1, &hist, &n_before));
  POOT_ASSERT_OK(poot_scheduler_cancel(f.sched, 1)); /* in the step in flight */
  poot_scheduler_request_info info;
  POOT_ASSERT_OK(poot_scheduler_request_get(f.sched, 1, &info));
  assert_int_equal(info.state, POOT_SCHEDULER_RUNNING);
  poot_scheduler_result res = {.token = 42};
  POOT_ASSERT_OK(poot_scheduler_step_done(f.sched, &res, 1));
  POOT_ASSERT_OK(poot_scheduler_request_tokens(f.sched, 1, &hist, &n_after));
  assert_int_equal(n_after, n_before);
  POOT_ASSERT_STATUS(poot_scheduler_cancel(f.sched, 1), POOT_NOT_FOUND);
  POOT_ASSERT_STATUS(poot_scheduler_cancel(f.sched, 99), POOT_NOT_FOUND);
  st = sched_stats(&f);
  assert_int_equal(st.cancelled, 3);
  assert_int_equal(st.running + st.queued, 0);
  assert_int_equal(st.kv.blocks_in_use, 0);
  uint64_t order[3];
  for (int32_t i = 0; i < 3; i++) {
    assert_true(poot_scheduler_take_finished(f.sched, &info));
    assert_int_equal(info.finish, POOT_SCHEDULER_FINISH_CANCELLED);
    order[i] = info.caller_id;
  }
  assert_int_equal(order[0], 3);
  assert_int_equal(order[1], 2);
  assert_int_equal(order[2], 1);
  assert_false(poot_scheduler_take_finished(f.sched, &info));
  fake_deinit(&f);
}

/* The step protocol: one plan at a time, results of the plan's size, and an
 * aborted step planned again as it was. */
static void test_step_protocol(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 16, 4, 64, 2, 8, 0);
  POOT_ASSERT_OK(poot_scheduler_step_done(f.sched, NULL, 0)); /* nothing in flight */
  const poot_scheduler_plan *plan = NULL;
  POOT_ASSERT_OK(poot_scheduler_step_plan(f.sched, &plan));
  assert_int_equal(plan->n_work, 0);
  int32_t p[6] = {1, 2, 3, 4, 5, 6};
  submit(&f, 1, p, 6, 4);
  POOT_ASSERT_OK(poot_scheduler_step_plan(f.sched, &plan));
  assert_int_equal(plan->n_work, 1);
  assert_int_equal(plan->step, 0);
  POOT_ASSERT_STATUS_MSG(poot_scheduler_step_plan(f.sched, &plan), POOT_INVALID_ARGUMENT,
                         "in flight");
  poot_scheduler_result res[2] = {{0}};
  POOT_ASSERT_STATUS(poot_scheduler_step_done(f.sched, res, 2), POOT_INVALID_ARGUMENT);
  assert_int_equal(sched_stats(&f).kv.blocks_in_use, 2);
  POOT_ASSERT_OK(poot_scheduler_step_abort(f.sched));
  assert_int_equal(sched_stats(&f).kv.blocks_in_use, 0);
  POOT_ASSERT_STATUS(poot_scheduler_step_abort(f.sched), POOT_INVALID_ARGUMENT);
  poot_scheduler_plan again;
  fake_step(&f, &again);
  assert_int_equal(again.step, 0);
  assert_work(&again, 0, 1, 0, 6, true);
  run_until_idle(&f, 20);
  assert_generated(&f, 1, p, 6, 4);
  assert_int_equal(sched_stats(&f).steps, 4);
  fake_deinit(&f);
}

/* The device loses every row (a fault) while three requests run and one
 * waits: requeue_running and kv_pool_forget, and each request recomputes its
 * history and ends with its own ids; no prompt matches a block of the lost
 * rows (the fake device would read −1 there), and the order holds (the
 * oldest is planned first). */
static void test_requeue_after_fault(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 32, 4, 64, 3, 12, 4);
  int32_t p[4][10];
  for (int32_t i = 0; i < 4; i++)
    for (int32_t j = 0; j < 10; j++) p[i][j] = j < 8 ? 100 + j : 200 + 10 * i + j;
  submit(&f, 9, p[0], 10, 2); /* publishes the shared 8-token prefix */
  run_until_idle(&f, 20);
  assert_true(sched_stats(&f).kv.blocks_cached >= 2);
  for (uint64_t i = 0; i < 4; i++) submit(&f, i, p[i], 10, 8);
  for (int k = 0; k < 3; k++) fake_step(&f, NULL);
  assert_int_equal(sched_stats(&f).running, 3);
  const poot_scheduler_plan *plan = NULL;
  POOT_ASSERT_OK(poot_scheduler_step_plan(f.sched, &plan));
  POOT_ASSERT_STATUS_MSG(poot_scheduler_requeue_running(f.sched), POOT_INVALID_ARGUMENT,
                         "in flight");
  POOT_ASSERT_OK(poot_scheduler_step_abort(f.sched)); /* the faulted step */
  POOT_ASSERT_STATUS_MSG(poot_kv_pool_forget(f.pool), POOT_INVALID_ARGUMENT, "open");
  for (int64_t r = 0; r < 32 * 4; r++) f.rows[r] = -1; /* every row is gone */
  POOT_ASSERT_OK(poot_scheduler_requeue_running(f.sched));
  POOT_ASSERT_OK(poot_kv_pool_forget(f.pool));
  poot_scheduler_stats st = sched_stats(&f);
  assert_int_equal(st.running, 0);
  assert_int_equal(st.queued, 4);
  assert_int_equal(st.kv.blocks_cached, 0);
  assert_int_equal(st.kv.blocks_in_use, 0);
  POOT_ASSERT_OK(poot__kv_pool_check(f.pool));
  poot_scheduler_plan first;
  fake_step(&f, &first);
  assert_int_equal(first.work[0].caller_id, 0);
  assert_int_equal(first.work[0].pos, 0); /* nothing reused: recomputed from 0 */
  run_until_idle(&f, 60);
  for (uint64_t i = 0; i < 4; i++) assert_generated(&f, i, p[i], 10, 8);
  assert_int_equal(sched_stats(&f).preemptions, 0); /* a requeue is not a preemption */
  fake_deinit(&f);
}

/* Every allocation of create and submit can fail: OUT_OF_MEMORY, nothing
 * leaked, nothing queued. Steps never allocate. */
static poot_status oom_attempt(void *ctx) {
  (void)ctx;
  poot_kv_pool *pool = NULL;
  poot_scheduler *s = NULL;
  poot_kv_pool_options po = poot_kv_pool_options_default();
  po.num_blocks = 8;
  po.max_seqs = 16;
  poot_status st = poot_kv_pool_create(&po, &pool);
  if (!st) st = poot_scheduler_create(pool, NULL, &s);
  int32_t p[5] = {1, 2, 3, 4, 5};
  poot_scheduler_request rq = {.prompt = p, .n_prompt = 5, .max_new_tokens = 3, .caller_id = 1};
  if (!st) st = poot_scheduler_submit(s, &rq);
  if (!st) {
    poot_scheduler_stats ss;
    poot_scheduler_get_stats(s, &ss);
    assert_int_equal(ss.queued, 1);
    uint64_t before = poot_alloc_count_since_set();
    const poot_scheduler_plan *plan = NULL;
    st = poot_scheduler_step_plan(s, &plan);
    if (!st) st = poot_scheduler_step_done(s, (poot_scheduler_result[]){{.token = 9}}, 1);
    assert_int_equal(poot_alloc_count_since_set(), before);
  } else if (s) {
    poot_scheduler_stats ss;
    poot_scheduler_get_stats(s, &ss);
    assert_int_equal(ss.queued, 0);
  }
  poot_scheduler_destroy(s);
  poot_kv_pool_destroy(pool);
  return st;
}

static void test_out_of_memory(void **state) {
  (void)state;
  assert_true(poot_test_oom_sweep("scheduler", oom_attempt, NULL, 100) >= 8);
}

/* ------------------------------------------------------------- stress */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#define S_REQUESTS 300

typedef struct sreq {
  int32_t prompt[128];
  int64_t n, max_new;
  bool submitted, refused, done;
} sreq;

/* Requests arrive over time, with shared prefixes, under a pool too small
 * for the load; some stop early, some are cancelled, some cannot fit. Every
 * step checks the progress guarantee; every request ends exactly once, with
 * its own ids or a typed refusal; the pool is whole at the end. */
static void test_stress(void **state) {
  (void)state;
  fake f;
  fake_init(&f, 24, 4, 128, 6, 12, 8); /* limit 96 tokens */
  f.use_stop = true;
  static sreq reqs[S_REQUESTS];
  static uint64_t ids[S_REQUESTS];
  uint64_t rng = 0x2545f4914f6cdd1dull;
  int32_t prefixes[3][40];
  for (int32_t k = 0; k < 3; k++)
    for (int32_t i = 0; i < 40; i++) prefixes[k][i] = 600 + 40 * k + i;
  for (int32_t r = 0; r < S_REQUESTS; r++) {
    sreq *q = &reqs[r];
    q->n = 1 + (int64_t)(rng_next(&rng) % 100); /* some past the limit */
    int64_t shared = (int64_t)(rng_next(&rng) % 41);
    const int32_t *pre = prefixes[rng_next(&rng) % 3];
    for (int64_t i = 0; i < q->n; i++)
      q->prompt[i] = i < shared ? pre[i] : (int32_t)(rng_next(&rng) % 50);
    q->max_new = 1 + (int64_t)(rng_next(&rng) % 40);
    ids[r] = 1000 + (uint64_t)r;
  }
  int32_t next = 0, lo = 0, n_done = 0, n_refused = 0, n_cancelled = 0;
  int steps = 0;
  while (n_done < S_REQUESTS) {
    assert_true(++steps < 20000); /* no livelock */
    for (int32_t k = (int32_t)(rng_next(&rng) % 3); k > 0 && next < S_REQUESTS; k--, next++) {
      sreq *q = &reqs[next];
      poot_scheduler_request rq = {.prompt = q->prompt,
                                   .n_prompt = q->n,
                                   .max_new_tokens = q->max_new,
                                   .caller_id = ids[next]};
      poot_status st = poot_scheduler_submit(f.sched, &rq);
      q->submitted = true;
      if (st) {
        assert_int_equal(poot_status_consume(st), POOT_CAPACITY);
        assert_true(q->n >= f.limit);
        q->refused = q->done = true;
        n_done++, n_refused++;
      }
    }
    if (next > 0 && rng_next(&rng) % 20 == 0) {
      int32_t victim = (int32_t)(rng_next(&rng) % (uint64_t)next);
      poot_status st = poot_scheduler_cancel(f.sched, ids[victim]);
      if (st)
        assert_int_equal(poot_status_consume(st), POOT_NOT_FOUND);
      else
        n_cancelled++;
    }
    while (lo < next && reqs[lo].done) lo++;
    step_checked(&f, ids + lo, next - lo);
    poot_scheduler_request_info info;
    while (poot_scheduler_take_finished(f.sched, &info)) {
      int32_t r = (int32_t)(info.caller_id - 1000);
      assert_true(r >= 0 && r < next && !reqs[r].done);
      if (info.finish != POOT_SCHEDULER_FINISH_CANCELLED) {
        int32_t want[64];
        poot_scheduler_finish fin;
        int64_t gen = gen_expected(&f, reqs[r].prompt, reqs[r].n, reqs[r].max_new, want, &fin);
        assert_int_equal(info.finish, fin);
        assert_int_equal(info.n_generated, gen);
      }
      assert_true(info.prefill_tokens + info.reused_tokens >=
                  (info.n_generated > 0 ? reqs[r].n : 0));
      reqs[r].done = true;
      n_done++;
    }
  }
  poot_scheduler_stats st = sched_stats(&f);
  assert_int_equal(st.queued + st.running + st.finished_waiting, 0);
  assert_int_equal(st.kv.blocks_free, 24);
  assert_int_equal(st.kv.blocks_in_use, 0);
  assert_int_equal(st.kv.seqs_open, 0);
  assert_int_equal(st.submitted, S_REQUESTS - n_refused);
  assert_int_equal(st.cancelled, n_cancelled);
  assert_true(st.preemptions > 10);
  assert_true(st.reused_tokens > 100);
  assert_true(n_refused > 0 && n_cancelled > 0);
  fake_deinit(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_submit_refusals),
      cmocka_unit_test(test_chunked_prefill),
      cmocka_unit_test(test_prefix_reuse),
      cmocka_unit_test(test_preemption_progress),
      cmocka_unit_test(test_capacity_finish),
      cmocka_unit_test(test_cancel),
      cmocka_unit_test(test_step_protocol),
      cmocka_unit_test(test_requeue_after_fault),
      cmocka_unit_test(test_budget_edge),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_stress),
      cmocka_unit_test(test_prefix_salt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
