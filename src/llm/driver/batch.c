/* batch.c — the batched runner (poot/llm/batch.h): one model's weights on
 * one executor, a paged KV pool and its scheduler, and the paged entries
 * (decode at B = 1, 2, 4, …, max_batch; prefill chunks at B = 1) that run a
 * scheduler plan as device steps.
 *
 * It lives beside the driver because it is the driver of many sequences:
 * it loads weights and appends the greedy suffix through the driver's own
 * helpers (driver_impl.h, driver_internal.h), and its chunk ladder is the
 * driver's (poot__driver_ladder_rung), but what it leaves for single steps
 * runs as rows of the step's batched decode replay.
 * Generating many prompts to completion is in batch_generate.c. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/batch.h"

#include "batch_impl.h"
#include "driver_internal.h"

/* A step's rows: each item's tail and its sampled row. */
_Static_assert(POOT__BATCH_STEP_ROWS(1) == BATCH_TAIL_ROWS + 1, "a step's rows");

/* ------------------------------------------------------------ entries */

/* An entry's bound inputs: the paged slots, then the sampler's or the
 * input rows' (poot_batch_request.inputs). */
#define PAGED_BOUND "token,pos,slot_map,write_map"
#define ROWS_BOUND POOT_MODEL_SLOT_EMBEDS "," POOT_MODEL_SLOT_EMBEDS_ON

/* A paged step of B rows of T tokens; suffix: 0 none (logits), 1 greedy, 2
 * the row sampler of `kind`. */
static poot_status trace_entry(const poot_batch *b, int64_t B, int64_t T, int32_t blocks,
                               int suffix, uint32_t kind, bool rows, poot_graph **out) {
  poot_model_step step = {.batch = B,
                          .tokens = T,
                          .cap = b->cap,
                          .paged = true,
                          .block_size = b->bs,
                          .num_blocks = blocks,
                          .input_embeds = rows};
  poot_model_trace_options to = poot_model_trace_options_for(b->model);
  to.kv_dtype = b->kv;
  POOT_TRY(poot_model_trace(poot_model_get_config(b->model), &step, &to, out));
  if (suffix == 0) return NULL;
  poot_status st = suffix == 1 ? poot__driver_append_greedy(*out)
                               : poot__driver_append_sampler_rows(*out, kind, b->pen_w);
  if (st) {
    poot_graph_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* The handles of a sampled entry's parameter slots. */
static poot_status bind_sampler(poot_batch *b, batch_entry *e) {
  POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.f", &e->s_f));
  POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.i", &e->s_i));
  if (e->kind & POOT_SAMPLER_DRAW) {
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.seed", &e->s_seed));
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.ctr", &e->s_ctr));
  }
  if (e->kind & POOT_SAMPLER_LOGIT_BIAS) {
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.bias_id", &e->s_bias_id));
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.bias", &e->s_bias));
  }
  if (e->kind & POOT_SAMPLER_MASK)
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.mask", &e->s_mask));
  if (e->kind & POOT_SAMPLER_PENALTIES) {
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.pen_id", &e->s_pen_id));
    POOT_TRY(poot_exec_entry_slot(b->ex, e->id, "sampler.pen_n", &e->s_pen_n));
  }
  return NULL;
}

poot_status poot__batch_ensure_entry(poot_batch *b, batch_entry *e) {
  if (e->added) return NULL;
  if (e->unsupported)
    return poot_status_make(POOT_UNSUPPORTED,
                            "batch: the decode entry of %lld rows (sampling kind %#x) does not "
                            "compile for this device",
                            (long long)e->batch, e->kind);
  poot_graph *g = NULL;
  const int suffix = e->logits ? 0 : e->kind ? 2 : 1;
  POOT_TRY(trace_entry(b, e->batch, e->tokens, b->num_blocks + 1, suffix, e->kind, e->rows, &g));
  char shape[128], sampling[32];
  snprintf(shape, sizeof shape, "paged:B=%lld:T=%lld:cap=%lld:bs=%d:blocks=%d", (long long)e->batch,
           (long long)e->tokens, (long long)b->cap, b->bs, b->num_blocks + 1);
  snprintf(sampling, sizeof sampling, "%s", e->logits ? "" : "greedy");
  if (suffix == 2) snprintf(sampling, sizeof sampling, "rows:%#x", e->kind);
  poot_exec_entry_key key = {.program = b->program,
                             .step_shape = shape,
                             .sampling = sampling,
                             .bound_inputs = suffix == 2 ? PAGED_BOUND ",sampler"
                                             : e->rows   ? PAGED_BOUND "," ROWS_BOUND
                                                         : PAGED_BOUND};
  uint32_t id = UINT32_MAX;
  poot_status st = poot_exec_add_entry(b->ex, &key, g, &id, NULL);
  poot_graph_destroy(g);
  if (st && poot_status_code_of(st) == POOT_UNSUPPORTED && e->batch > 1 && e->tokens == 1)
    e->unsupported = true;
  if (st) return st;
  e->id = id;
  st = poot_exec_entry_slot(b->ex, id, "token", &e->token);
  if (!st) st = poot_exec_entry_slot(b->ex, id, "pos", &e->pos);
  if (!st) st = poot_exec_entry_slot(b->ex, id, "slot_map", &e->table);
  if (!st) st = poot_exec_entry_slot(b->ex, id, "write_map", &e->write);
  if (!st && suffix == 2) st = bind_sampler(b, e);
  if (!st && e->rows) st = poot_exec_entry_slot(b->ex, id, POOT_MODEL_SLOT_EMBEDS, &e->s_embeds);
  if (!st && e->rows)
    st = poot_exec_entry_slot(b->ex, id, POOT_MODEL_SLOT_EMBEDS_ON, &e->s_embeds_on);
  if (st) {
    poot_status_free(poot_exec_remove_entry(b->ex, id));
    return st;
  }
  e->added = true;
  return NULL;
}

poot_status poot__batch_replay(poot_batch *b, batch_entry *e, const poot_exec_slot_value *extra,
                               size_t n_extra, void *out, size_t out_size) {
  POOT_TRY(poot__batch_ensure_entry(b, e));
  const int64_t B = e->batch, T = e->tokens, N = B * T;
  int64_t td[2] = {B, T}, tb[2] = {B, b->width};
  poot_tensor tt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, td), .data = b->tok, .size = (size_t)N * 4};
  poot_tensor pt = {
      .type = poot_type_make(POOT_DTYPE_I32, 1, &B), .data = b->pos, .size = (size_t)B * 4};
  poot_tensor st = {.type = poot_type_make(POOT_DTYPE_I32, 2, tb),
                    .data = b->table,
                    .size = (size_t)(B * b->width) * 4};
  poot_tensor wt = {
      .type = poot_type_make(POOT_DTYPE_I32, 1, &N), .data = b->write, .size = (size_t)N * 4};
  if (b->fault_armed) {
    /* poot_batch_arm_kernel_fault: an id past the vocabulary traps the gather */
    b->fault_armed = false;
    b->tok[0] = (int32_t)poot_model_get_config(b->model)->vocab_size;
  }
  poot_exec_slot_value in[16] = {{e->token, &tt}, {e->pos, &pt}, {e->table, &st}, {e->write, &wt}};
  size_t n_in = 4;
  for (size_t i = 0; i < n_extra && n_in < sizeof in / sizeof in[0]; i++) in[n_in++] = extra[i];
  poot_exec_step_io io = {
      .input_count = n_in, .inputs = in, .output = out, .output_size = out_size};
  POOT_TRY(poot_exec_step(b->ex, e->id, &io));
  b->stats.replays++;
  return NULL;
}

static poot_status replay(poot_batch *b, batch_entry *e, void *out, size_t out_size) {
  return poot__batch_replay(b, e, NULL, 0, out, out_size);
}

/* Row r of the table: the item's blocks, then the scratch block (a valid id
 * the mask hides: attention reads no position past the row's own). */
static void fill_table(poot_batch *b, int64_t r, const int32_t *blocks, int32_t n_blocks) {
  int32_t *row = b->table + r * b->width;
  for (int64_t j = 0; j < b->width; j++) row[j] = j < n_blocks ? blocks[j] : b->scratch;
}

/* The pool row of position p of sequence `seq` (reserved by the plan). */
static poot_status write_row(const poot_batch *b, int32_t seq, int64_t p, int32_t *out) {
  int64_t r = poot_kv_pool_seq_row(b->pool, seq, p);
  if (r < 0)
    return poot_status_make(POOT_INTERNAL, "batch: sequence %d has no row at position %lld", seq,
                            (long long)p);
  *out = (int32_t)r;
  return NULL;
}

/* The logits variant of decode entry k (the slots filled): rows [0, n) of
 * its logits appended to the step's in b->logits_out (and which plan rows
 * they are to b->logits_rows), each row's first maximum (the first NaN)
 * and finite flag as the greedy suffix gives them. */
static poot_status decode_logits(poot_batch *b, int32_t k, const batch_row *plan_rows, int32_t n,
                                 int32_t *ids, bool *nonfinite) {
  batch_entry *e = &b->decode_logits[k];
  e->batch = b->sizes[k];
  e->tokens = 1;
  e->logits = true;
  const int64_t V = poot_model_get_config(b->model)->vocab_size;
  float *rows = poot_malloc((size_t)(e->batch * V) * sizeof *rows);
  if (!rows) return OOM("logits rows");
  poot_status st = replay(b, e, rows, (size_t)(e->batch * V) * sizeof *rows);
  float *dst = b->logits_out + (size_t)b->n_logits_rows * (size_t)V;
  if (!st) memcpy(dst, rows, (size_t)(n * V) * sizeof *rows);
  poot_free(rows);
  POOT_TRY(st);
  memcpy(b->logits_rows + b->n_logits_rows, plan_rows, (size_t)n * sizeof *plan_rows);
  b->n_logits_rows += n;
  for (int32_t i = 0; i < n; i++) {
    const float *x = dst + i * V;
    int64_t best = 0;
    bool fin = true;
    for (int64_t j = 0; j < V; j++) {
      fin = fin && x[j] - x[j] == 0.0f;
      if (x[best] != x[best]) continue;
      if (x[j] != x[j] || x[j] > x[best]) best = j;
    }
    ids[i] = (int32_t)best;
    nonfinite[i] = !fin;
  }
  return NULL;
}

/* The rows rows[0 .. n) of one kind (0: greedy) as one replay of the
 * smallest decode entry of that kind holding n rows; the rest of its rows
 * are dummies. Each row's id and flag go to its item's ids / nonfinite. */
static poot_status run_rows(poot_batch *b, const poot_scheduler_plan *plan, const batch_row *rows,
                            int32_t n, int32_t *ids, bool *nonfinite) {
  int32_t k = 0;
  while (k < b->n_sizes - 1 && b->sizes[k] < n) k++;
  const int32_t B = b->sizes[k];
  for (int32_t i = 0; i < B; i++) {
    if (i < n) {
      const poot_scheduler_work *w = &plan->work[rows[i].item];
      const int64_t p = w->pos + rows[i].off;
      b->tok[i] = w->tokens[rows[i].off];
      b->pos[i] = (int32_t)p;
      fill_table(b, i, w->blocks, w->n_blocks);
      POOT_TRY(write_row(b, w->seq, p, &b->write[i]));
    } else {
      /* A dummy row: token 0 at position 0 of the scratch block. */
      b->tok[i] = 0;
      b->pos[i] = 0;
      fill_table(b, i, NULL, 0);
      b->write[i] = b->scratch * b->bs;
    }
  }
  if (rows[0].kind) {
    POOT_TRY(poot__batch_sample_rows(b, plan, rows, n, k));
  } else if (b->logits_out) {
    POOT_TRY(decode_logits(b, k, rows, n, b->ids_tmp, b->nonfinite_tmp));
  } else {
    POOT_TRY(replay(b, &b->decode[k], b->out, (size_t)B * 2 * 4));
    for (int32_t i = 0; i < n; i++) {
      b->ids_tmp[i] = b->out[2 * i];
      b->nonfinite_tmp[i] = b->out[2 * i + 1] == 0;
    }
  }
  for (int32_t i = 0; i < n; i++) {
    ids[rows[i].item] = b->ids_tmp[i];
    nonfinite[rows[i].item] = b->nonfinite_tmp[i];
    b->has_probs[rows[i].item] = rows[0].kind && b->has_probs_tmp[i];
    if (b->has_probs[rows[i].item]) b->probs[rows[i].item] = b->probs_tmp[i];
  }
  b->stats.decode_replays++;
  b->stats.per_size[k]++;
  b->stats.decode_rows += (uint64_t)n;
  b->stats.padded_rows += (uint64_t)(B - n);
  b->step_rows += n;
  if (B > b->step_batch) b->step_batch = B;
  return NULL;
}

/* run_rows; when the entry for n rows does not compile for the device
 * (UNSUPPORTED: a kernel past its limits, e.g. push constants), the rows
 * run as two halves through the smaller entries. Each replay run counts in
 * *replays. */
static poot_status run_rows_split(poot_batch *b, const poot_scheduler_plan *plan,
                                  const batch_row *rows, int32_t n, int32_t *ids, bool *nonfinite,
                                  int32_t *replays) {
  poot_status st = run_rows(b, plan, rows, n, ids, nonfinite);
  if (!st) {
    (*replays)++;
    return NULL;
  }
  if (poot_status_code_of(st) != POOT_UNSUPPORTED || n < 2) return st;
  poot_status_free(st);
  const int32_t h = n / 2;
  POOT_TRY(run_rows_split(b, plan, rows, h, ids, nonfinite, replays));
  return run_rows_split(b, plan, rows + h, n - h, ids, nonfinite, replays);
}

/* The greedy rows of b->brows[0 .. n) in replays of at most max_batch
 * rows, in order: a new replay where the next item's rows would not fit
 * (an item's rows are never split; the caller keeps each item's rows at
 * most max_batch). Marks them run (item −1). */
static poot_status run_greedy(poot_batch *b, const poot_scheduler_plan *plan, int32_t n,
                              int32_t *ids, bool *nonfinite, int32_t *replays) {
  int32_t ng = 0;
  for (int32_t j = 0; j < n;) {
    if (b->brows[j].kind != 0) {
      j++;
      continue;
    }
    int32_t k = j + 1; /* [j, k): this item's greedy rows */
    while (k < n && b->brows[k].kind == 0 && b->brows[k].item == b->brows[j].item) k++;
    if (ng > 0 && ng + (k - j) > b->max_batch) {
      POOT_TRY(run_rows_split(b, plan, b->grows, ng, ids, nonfinite, replays));
      ng = 0;
    }
    for (; j < k; j++) {
      b->grows[ng++] = b->brows[j];
      b->brows[j].item = -1;
    }
  }
  return ng > 0 ? run_rows_split(b, plan, b->grows, ng, ids, nonfinite, replays) : NULL;
}

/* One replay of rows entry `e` (B = 1; the token, pos, table and write
 * copies filled) with im's rows of positions [pos, pos + T) bound. */
static poot_status replay_rows(poot_batch *b, batch_entry *e, const batch_img *im, int64_t pos) {
  POOT_TRY(poot__batch_ensure_entry(b, e)); /* its slot handles */
  const int64_t T = e->tokens, H = poot_model_get_config(b->model)->hidden_size;
  poot__batch_inputs_fill(b, im, pos, T);
  int64_t ed[3] = {1, T, H}, od[2] = {1, T};
  poot_tensor et = {.type = poot_type_make(POOT_DTYPE_F32, 3, ed),
                    .data = b->emb,
                    .size = (size_t)(T * H) * sizeof *b->emb};
  poot_tensor ot = {.type = poot_type_make(POOT_DTYPE_I32, 2, od),
                    .data = b->emb_on,
                    .size = (size_t)T * sizeof *b->emb_on};
  const poot_exec_slot_value extra[2] = {{e->s_embeds, &et}, {e->s_embeds_on, &ot}};
  return poot__batch_replay(b, e, extra, 2, b->out, 2 * 4);
}

/* Tokens [from, from + n) of an item through the chunk ladder at B = 1:
 * the longest rung that fits, then single steps; the last step's pair is
 * the item's. A step that holds a position with an input row of `im`
 * (NULL: none) runs through the rows entry of its size, the rows bound. */
static poot_status run_item(poot_batch *b, const poot_scheduler_work *w, const batch_img *im,
                            int64_t from, int64_t n, int32_t *id, bool *nonfinite,
                            int32_t *replays) {
  for (int64_t i = from; i < from + n;) {
    const int s = poot__driver_ladder_rung(b->ladder, from + n - i);
    batch_entry *e = s >= 0 ? &b->prefill[s] : &b->decode[0];
    const int64_t T = e->tokens;
    const bool rows = poot__batch_inputs_any(im, w->pos + i, T);
    if (rows) e = s >= 0 ? &b->prefill_rows[s] : &b->decode_rows;
    for (int64_t j = 0; j < T; j++) {
      b->tok[j] = w->tokens[i + j];
      POOT_TRY(write_row(b, w->seq, w->pos + i + j, &b->write[j]));
    }
    b->pos[0] = (int32_t)(w->pos + i);
    fill_table(b, 0, w->blocks, w->n_blocks);
    POOT_TRY(rows ? replay_rows(b, e, im, w->pos + i) : replay(b, e, b->out, 2 * 4));
    (*replays)++;
    i += T;
  }
  *id = b->out[0];
  *nonfinite = b->out[1] == 0;
  return NULL;
}

/* ------------------------------------------------------------ creation */

static poot_status size_pool(poot_batch *b, const poot_batch_options *o, const poot_model_config *c,
                             int32_t *out_blocks) {
  if (o->num_blocks < 0) return BAD("batch: num_blocks %d < 0", o->num_blocks);
  if (o->num_blocks > 0) {
    *out_blocks = o->num_blocks;
    return NULL;
  }
  poot_kv_pool_fit_params fp = {.layers = c->n_layers,
                                .kv_heads = c->n_kv_heads,
                                .head_dim = c->head_dim,
                                .kv_dtype = b->kv,
                                .block_size = b->bs,
                                .budget_bytes = o->kv_budget_bytes};
  if (fp.budget_bytes == 0) {
    poot_exec_stats s;
    poot_exec_stats_get(b->ex, &s);
    if (s.memory_bytes == 0)
      return BAD(
          "batch: the executor reports no device memory; give num_blocks or "
          "kv_budget_bytes");
    uint64_t used = s.weight_bytes + s.state_bytes;
    uint64_t left = s.memory_bytes > used ? s.memory_bytes - used : 0;
    poot_kv_pool_fit one;
    fp.budget_bytes = UINT64_MAX / 2;
    POOT_TRY(poot_kv_pool_fit_budget(&fp, &one));
    uint64_t most =
        one.bytes_per_token * (uint64_t)b->cap * BATCH_BUDGET_SEQS_PER_ROW * (uint64_t)b->max_batch;
    fp.budget_bytes = left / 2 < most ? left / 2 : most;
  }
  poot_kv_pool_fit fit;
  POOT_TRY(poot_kv_pool_fit_budget(&fp, &fit));
  if (fit.num_blocks < 2)
    return poot_status_make(POOT_CAPACITY,
                            "batch: a K/V budget of %llu bytes holds %d blocks of %llu bytes; "
                            "the pool needs one block and the scratch block",
                            (unsigned long long)fp.budget_bytes, fit.num_blocks,
                            (unsigned long long)fit.bytes_per_block);
  *out_blocks = fit.num_blocks - 1; /* one is the scratch block */
  return NULL;
}

/* Sets the runner's compile target on its executor and loads the weights
 * there (create, and recover onto a new executor). */
static poot_status bind_executor(poot_batch *b) {
  if (!b->keep_target) {
    poot_exec_target t; /* the caller's settings (matmul precision, …) kept */
    poot_exec_target_get(b->ex, &t);
    t.batch_invariant = true;
    POOT_TRY(poot_exec_target_set(b->ex, &t));
  }
  /* The weights do not depend on the pool's size: one block will do. */
  poot_graph *g = NULL;
  POOT_TRY(trace_entry(b, 1, 1, 1, 0, 0, false, &g));
  poot_status st = poot__driver_load_weights(b->ex, b->model, g);
  poot_graph_destroy(g);
  return st;
}

static poot_status check_options(const poot_batch_options *o, const poot_model_config *c,
                                 poot_batch *b) {
  b->max_batch = o->max_batch ? o->max_batch : BATCH_DEFAULT_MAX;
  if (b->max_batch < 1 || b->max_batch > POOT_BATCH_MAX_BATCH)
    return BAD("batch: max_batch %d is outside [1, %d]", b->max_batch, POOT_BATCH_MAX_BATCH);
  b->bs = o->block_size ? o->block_size : BATCH_DEFAULT_BS;
  if (b->bs < 1 || b->bs > 4096) return BAD("batch: block_size %d is outside [1, 4096]", b->bs);
  const int64_t ctx = c->context_length;
  int64_t cap = o->max_seq_len;
  if (cap < 0) return BAD("batch: max_seq_len %lld < 0", (long long)cap);
  if (cap == 0) cap = ctx > 0 && ctx < BATCH_DEFAULT_CAP_MAX ? ctx : BATCH_DEFAULT_CAP_MAX;
  cap = (cap + b->bs - 1) / b->bs * b->bs;
  if (ctx > 0 && cap > ctx && o->max_seq_len > 0)
    return BAD(
        "batch: max_seq_len %lld (rounded to blocks of %d: %lld) exceeds the model's "
        "context length %lld",
        (long long)o->max_seq_len, b->bs, (long long)cap, (long long)ctx);
  if (cap > (1 << 24)) return BAD("batch: max_seq_len %lld is too large", (long long)cap);
  b->cap = cap;
  b->width = cap / b->bs;
  int64_t chunk = o->prefill_chunk;
  if (chunk == 0) chunk = cap >= DEFAULT_CHUNK ? DEFAULT_CHUNK : cap >= TAIL_CHUNK ? TAIL_CHUNK : 1;
  if (chunk < 1 || chunk > cap)
    return BAD("batch: prefill_chunk %lld is outside [1, max_seq_len %lld]", (long long)chunk,
               (long long)cap);
  b->chunk = chunk;
  poot__driver_ladder_make(chunk, b->ladder);
  int64_t budget = o->token_budget ? o->token_budget : (int64_t)b->max_batch * chunk;
  if (budget > INT32_MAX / 2) budget = INT32_MAX / 2;
  if (budget < b->max_batch)
    return BAD("batch: token_budget %lld is below max_batch %d", (long long)budget, b->max_batch);
  b->token_budget = (int32_t)budget;
  b->kv = o->kv_dtype ? o->kv_dtype : poot_model_kv_dtype_default(true);
  if (!poot_model_kv_dtype_ok(b->kv))
    return BAD("batch: kv_dtype %s is not a KV cache type (f32, f16 or q8_0)",
               poot_dtype_name(b->kv));
  if (o->max_requests < 0) return BAD("batch: max_requests %d < 0", o->max_requests);
  /* Decode sizes: powers of two below max_batch, then max_batch. */
  b->n_sizes = 0;
  for (int32_t s = 1; s < b->max_batch; s *= 2) b->sizes[b->n_sizes++] = s;
  b->sizes[b->n_sizes++] = b->max_batch;
  return NULL;
}

poot_status poot_batch_create(poot_executor *executor, poot_model *model,
                              const poot_batch_options *options, poot_batch **out_batch) {
  *out_batch = NULL;
  if (!executor || !model) return BAD("poot_batch_create: NULL executor or model");
  poot_batch_options dflt = poot_batch_options_default();
  const poot_batch_options *o = options ? options : &dflt;
  const poot_model_config *c = poot_model_get_config(model);
  if (poot_model_is_encoder(c))
    return BAD("batch: %s is an encoder; the batched runner generates", c->architecture);
  poot_batch *b = poot_calloc(1, sizeof *b);
  if (!b) return OOM("batch runner");
  b->ex = executor;
  b->model = model;
  poot_map_init(&b->img_index);
  poot_status st = check_options(o, c, b);
  if (st) goto fail;
  b->program = poot_strdup(o->program ? o->program : "model");
  if (!b->program) {
    st = OOM("program name");
    goto fail;
  }
  b->keep_target = o->keep_target;
  if ((st = bind_executor(b))) goto unload;
  if ((st = size_pool(b, o, c, &b->num_blocks))) goto unload;
  if (b->num_blocks > INT32_MAX - 1 || (int64_t)(b->num_blocks + 1) * b->bs > (int64_t)INT32_MAX) {
    st = BAD("batch: %d blocks of %d rows exceed 32-bit row ids", b->num_blocks, b->bs);
    goto unload;
  }
  b->scratch = b->num_blocks;
  b->kv_bytes = 2 * (uint64_t)c->n_layers * (uint64_t)c->n_kv_heads * (uint64_t)c->head_dim *
                poot_dtype_info_of(b->kv)->elem_bytes * (uint64_t)(b->num_blocks + 1) *
                (uint64_t)b->bs;
  poot_kv_pool_options po = poot_kv_pool_options_default();
  po.num_blocks = b->num_blocks;
  po.block_size = b->bs;
  po.max_seqs = b->max_batch;
  po.max_seq_len = b->cap;
  po.prefix_cache = !o->no_prefix_cache;
  if ((st = poot_kv_pool_create(&po, &b->pool))) goto unload;
  poot_scheduler_options so = poot_scheduler_options_default();
  so.max_batch = b->max_batch;
  so.token_budget = b->token_budget;
  so.prefill_chunk = (int32_t)b->chunk;
  b->max_requests = o->max_requests ? o->max_requests : BATCH_DEFAULT_REQUESTS;
  so.max_requests = b->max_requests;
  if ((st = poot_scheduler_create(b->pool, &so, &b->sched))) goto unload;
  for (int32_t i = 0; i < b->n_sizes; i++)
    b->decode[i] = (batch_entry){.batch = b->sizes[i], .tokens = 1};
  for (int i = 0; i < LADDER_RUNGS; i++) {
    b->prefill[i] = (batch_entry){.batch = 1, .tokens = b->ladder[i]};
    b->prefill_rows[i] = (batch_entry){.batch = 1, .tokens = b->ladder[i], .rows = true};
  }
  b->decode_rows = (batch_entry){.batch = 1, .tokens = 1, .rows = true};
  const int64_t rows = b->max_batch > b->chunk ? b->max_batch : b->chunk;
  b->tok = poot_calloc((size_t)rows, sizeof *b->tok);
  b->write = poot_calloc((size_t)rows, sizeof *b->write);
  b->pos = poot_calloc((size_t)b->max_batch, sizeof *b->pos);
  b->out = poot_calloc((size_t)b->max_batch * (DRIVER_SAMPLE_HEAD + 2 * POOT_SAMPLING_MAX_PROBS),
                       sizeof *b->out);
  b->table = poot_calloc((size_t)(b->max_batch * b->width), sizeof *b->table);
  b->ids = poot_calloc((size_t)b->max_batch, sizeof *b->ids);
  b->brows = poot_calloc((size_t)POOT__BATCH_STEP_ROWS(b->max_batch), sizeof *b->brows);
  b->grows = poot_calloc((size_t)b->max_batch, sizeof *b->grows);
  b->logits_rows = poot_calloc((size_t)POOT__BATCH_STEP_ROWS(b->max_batch), sizeof *b->logits_rows);
  b->ids_tmp = poot_calloc((size_t)b->max_batch, sizeof *b->ids_tmp);
  b->nonfinite_tmp = poot_calloc((size_t)b->max_batch, sizeof *b->nonfinite_tmp);
  b->nonfinite = poot_calloc((size_t)b->max_batch, sizeof *b->nonfinite);
  b->results = poot_calloc((size_t)b->max_batch, sizeof *b->results);
  b->probs = poot_calloc((size_t)b->max_batch, sizeof *b->probs);
  b->probs_tmp = poot_calloc((size_t)b->max_batch, sizeof *b->probs_tmp);
  b->has_probs = poot_calloc((size_t)b->max_batch, sizeof *b->has_probs);
  b->has_probs_tmp = poot_calloc((size_t)b->max_batch, sizeof *b->has_probs_tmp);
  b->cur_item = -1;
  if (!b->tok || !b->write || !b->pos || !b->out || !b->table || !b->ids || !b->nonfinite ||
      !b->results || !b->brows || !b->grows || !b->logits_rows || !b->ids_tmp ||
      !b->nonfinite_tmp || !b->probs || !b->probs_tmp || !b->has_probs || !b->has_probs_tmp) {
    st = OOM("step buffers");
    goto unload;
  }
  if ((st = poot__batch_sample_init(b))) goto unload;
  *out_batch = b;
  return NULL;
unload:
  poot_exec_unload(b->ex);
fail:
  poot__batch_sample_deinit(b);
  poot__batch_inputs_deinit(b);
  poot_scheduler_destroy(b->sched);
  poot_kv_pool_destroy(b->pool);
  poot_free(b->tok);
  poot_free(b->write);
  poot_free(b->pos);
  poot_free(b->out);
  poot_free(b->table);
  poot_free(b->ids);
  poot_free(b->brows);
  poot_free(b->grows);
  poot_free(b->logits_rows);
  poot_free(b->ids_tmp);
  poot_free(b->nonfinite_tmp);
  poot_free(b->nonfinite);
  poot_free(b->results);
  poot_free(b->probs);
  poot_free(b->probs_tmp);
  poot_free(b->has_probs);
  poot_free(b->has_probs_tmp);
  poot_free(b->program);
  poot_free(b);
  return st;
}

void poot_batch_destroy(poot_batch *b) {
  if (!b) return;
  if (!b->ex) poot_batch_release_executor(b); /* nothing to remove */
  for (int32_t i = 0; i < b->n_sizes; i++) {
    if (b->decode[i].added) poot_status_free(poot_exec_remove_entry(b->ex, b->decode[i].id));
    if (b->decode_logits[i].added)
      poot_status_free(poot_exec_remove_entry(b->ex, b->decode_logits[i].id));
  }
  for (int i = 0; i < LADDER_RUNGS; i++) {
    if (b->prefill[i].added) poot_status_free(poot_exec_remove_entry(b->ex, b->prefill[i].id));
    if (b->prefill_rows[i].added)
      poot_status_free(poot_exec_remove_entry(b->ex, b->prefill_rows[i].id));
  }
  if (b->decode_rows.added) poot_status_free(poot_exec_remove_entry(b->ex, b->decode_rows.id));
  poot__batch_sample_deinit(b);
  poot__batch_inputs_deinit(b);
  if (b->ex) poot_exec_unload(b->ex);
  poot_scheduler_destroy(b->sched);
  poot_kv_pool_destroy(b->pool);
  poot_free(b->tok);
  poot_free(b->write);
  poot_free(b->pos);
  poot_free(b->out);
  poot_free(b->table);
  poot_free(b->ids);
  poot_free(b->brows);
  poot_free(b->grows);
  poot_free(b->logits_rows);
  poot_free(b->ids_tmp);
  poot_free(b->nonfinite_tmp);
  poot_free(b->nonfinite);
  poot_free(b->results);
  poot_free(b->probs);
  poot_free(b->probs_tmp);
  poot_free(b->has_probs);
  poot_free(b->has_probs_tmp);
  poot_free(b->program);
  poot_free(b);
}

/* DEVICE_LOST while the runner holds no executor. */
static poot_status check_executor(const poot_batch *b) {
  if (b->ex) return NULL;
  return poot_status_make(POOT_DEVICE_LOST,
                          "batch: the runner has no executor (its device was lost); "
                          "poot_batch_recover gives it a new one");
}

/* Every rung, the middle one included (as poot_driver_prepare: a prompt
 * of MID_CHUNK tokens or more would otherwise pay its compile). */
poot_status poot_batch_prepare(poot_batch *b) {
  POOT_TRY(check_executor(b));
  for (int32_t i = 0; i < b->n_sizes; i++) POOT_TRY(poot__batch_ensure_entry(b, &b->decode[i]));
  for (int i = 0; i < LADDER_RUNGS; i++)
    if (b->ladder[i] > 1) POOT_TRY(poot__batch_ensure_entry(b, &b->prefill[i]));
  return NULL;
}

void poot_batch_get_info(const poot_batch *b, poot_batch_info *out) {
  memset(out, 0, sizeof *out);
  out->max_batch = b->max_batch;
  out->max_seq_len = b->cap;
  out->block_size = b->bs;
  out->num_blocks = b->num_blocks;
  out->prefill_chunk = b->chunk;
  out->mid_chunk = b->ladder[1];
  out->tail_chunk = b->ladder[2];
  out->token_budget = b->token_budget;
  out->max_requests = b->max_requests;
  out->kv_dtype = b->kv;
  out->kv_bytes = b->kv_bytes;
  out->n_sizes = b->n_sizes;
  memcpy(out->sizes, b->sizes, sizeof out->sizes);
}

void poot__batch_set_decode_logits(poot_batch *b, float *out) {
  b->logits_out = out;
  b->n_logits_rows = 0;
}

int32_t poot__batch_logits_rows(const poot_batch *b, int32_t *items, int32_t *offs) {
  for (int32_t i = 0; i < b->n_logits_rows; i++) {
    items[i] = b->logits_rows[i].item;
    offs[i] = b->logits_rows[i].off;
  }
  return b->n_logits_rows;
}

const poot_model *poot__batch_model(const poot_batch *b) {
  return b->model;
}

poot_scheduler *poot_batch_scheduler(poot_batch *b) {
  return b->sched;
}
const poot_kv_pool *poot_batch_pool(const poot_batch *b) {
  return b->pool;
}

const poot_sampling_result *poot_batch_logprobs(const poot_batch *b, int32_t item) {
  if (item < 0) item = b->cur_item;
  if (item < 0 || item >= b->max_batch || !b->has_probs[item]) return NULL;
  return &b->probs[item];
}

void poot_batch_get_stats(const poot_batch *b, poot_batch_stats *out) {
  *out = b->stats;
}

/* ------------------------------------------------------------ requests */

poot_status poot_batch_submit(poot_batch *b, const poot_batch_request *r) {
  if (!r) return BAD("batch: NULL request");
  batch_img *im = NULL;
  POOT_TRY(poot__batch_inputs_make(b, r, &im));
  batch_req rec;
  poot_status st = poot__batch_sample_make(b, r->sampling, r->grammar, &rec);
  if (st) {
    poot__batch_inputs_free(im);
    return st;
  }
  poot_scheduler_request sr = {.prompt = r->prompt,
                               .n_prompt = r->n_prompt,
                               .max_new_tokens = r->max_new_tokens,
                               .caller_id = r->caller_id,
                               .prefix_salt = im ? im->salt : 0};
  st = poot_scheduler_submit(b->sched, &sr);
  if (st) {
    poot__batch_sample_free(&rec);
    poot__batch_inputs_free(im);
    return st;
  }
  if (im && (st = poot__batch_inputs_put(b, r->caller_id, im))) {
    poot__batch_inputs_free(im);
  } else if (rec.r.kind == 0) {
    poot__batch_sample_free(&rec);
    return NULL;
  } else {
    rec.n_prompt = r->n_prompt;
    st = poot__batch_sample_put(b, r->caller_id, &rec);
  }
  if (st) { /* the request then finishes cancelled; the caller takes it */
    poot__batch_sample_free(&rec);
    poot_status_free(poot_scheduler_cancel(b->sched, r->caller_id));
  }
  return st;
}

poot_status poot_batch_cancel(poot_batch *b, uint64_t caller_id) {
  return poot_scheduler_cancel(b->sched, caller_id);
}

bool poot_batch_take_finished(poot_batch *b, poot_scheduler_request_info *out) {
  if (!poot_scheduler_take_finished(b->sched, out)) return false;
  poot__batch_sample_drop(b, out->caller_id);
  poot__batch_inputs_drop(b, out->caller_id);
  return true;
}

bool poot_batch_busy(const poot_batch *b) {
  poot_scheduler_stats s;
  poot_scheduler_get_stats(b->sched, &s);
  return s.queued > 0 || s.running > 0;
}

/* ------------------------------------------------------------ steps */

/* The plan's rows (poot_batch_run_plan, after the checks and with the
 * grammar masks posted to the workers). Each replay run counts in *replays. */
static poot_status run_plan_rows(poot_batch *b, const poot_scheduler_plan *plan, int32_t *ids,
                                 bool *nonfinite, int32_t *replays) {
  /* Each item's rungs run first (B = 1); the tokens they leave (fewer than
   * the shortest rung) are greedy rows, in position order, its last row the
   * item's id; the last token of an emitting item that samples is a row of
   * its kind's replay (drawn by the row sampler, as the driver feeds a
   * prompt's last id through its sample entry). A tail longer than
   * max_batch or BATCH_TAIL_ROWS runs as single steps. */
  int32_t n_rows = 0;
  for (int32_t i = 0; i < plan->n_work; i++) {
    const poot_scheduler_work *w = &plan->work[i];
    batch_req *rq = w->emits ? poot__batch_sample_get(b, w->caller_id) : NULL;
    const int64_t fed = w->n_tokens - (rq ? 1 : 0); /* not the sampled row */
    const batch_img *im = poot__batch_inputs_get(b, w->caller_id);
    int64_t rest = poot__driver_ladder_rest(b->ladder, fed);
    if (rest > b->max_batch || rest > BATCH_TAIL_ROWS) rest = 0; /* single steps */
    /* an item with input rows runs all at B = 1: its rows stay out of the
     * decode replays, whose entries have no embeds slots */
    if (poot__batch_inputs_any(im, w->pos, fed)) rest = 0;
    if (fed > rest) POOT_TRY(run_item(b, w, im, 0, fed - rest, &ids[i], &nonfinite[i], replays));
    for (int64_t off = fed - rest; off < fed; off++)
      b->brows[n_rows++] = (batch_row){.item = i, .off = (int32_t)off};
    if (rq)
      b->brows[n_rows++] =
          (batch_row){.item = i, .off = w->n_tokens - 1, .kind = rq->r.kind, .req = rq};
    if (w->n_tokens > 1) b->stats.prefill_tokens += (uint64_t)w->n_tokens;
  }
  /* The greedy rows first (a sampled row must see its item's earlier rows
   * in the pool), then one replay per sampled kind, in the order kinds
   * first appear; the masks are all filled before the first of them. */
  POOT_TRY(run_greedy(b, plan, n_rows, ids, nonfinite, replays));
  POOT_TRY(poot__batch_masks_wait(b));
  for (int32_t first = 0; first < n_rows; first++) {
    if (b->brows[first].item < 0) continue;
    const uint32_t kind = b->brows[first].kind;
    int32_t ng = 0;
    for (int32_t j = first; j < n_rows; j++)
      if (b->brows[j].item >= 0 && b->brows[j].kind == kind) {
        b->grows[ng++] = b->brows[j];
        b->brows[j].item = -1;
      }
    POOT_TRY(run_rows_split(b, plan, b->grows, ng, ids, nonfinite, replays));
  }
  return NULL;
}

poot_status poot_batch_run_plan(poot_batch *b, const poot_scheduler_plan *plan, int32_t *ids,
                                bool *nonfinite, int32_t *out_replays) {
  if (out_replays) *out_replays = 0;
  POOT_TRY(check_executor(b));
  if (!plan || plan->n_work < 0 || plan->n_work > b->max_batch ||
      (plan->n_work && (!ids || !nonfinite)))
    return BAD("batch: run_plan needs a plan of at most %d items and output arrays", b->max_batch);
  for (int32_t i = 0; i < plan->n_work; i++) {
    ids[i] = -1;
    nonfinite[i] = false;
    b->has_probs[i] = false;
  }
  b->step_rows = b->step_batch = b->n_logits_rows = 0;
  /* The grammar rows' masks are filled on the mask workers while the
   * rungs and the greedy rows replay (batch_masks.c). */
  poot__batch_masks_post(b, plan);
  int32_t replays = 0;
  poot_status st = run_plan_rows(b, plan, ids, nonfinite, &replays);
  poot_status sw = poot__batch_masks_wait(b); /* the workers are idle after a failure too */
  if (!st) {
    st = sw;
  } else {
    poot_status_free(sw);
  }
  if (out_replays) *out_replays = replays;
  if (st) return st;
  for (int32_t i = 0; i < plan->n_work; i++)
    if (!plan->work[i].emits) ids[i] = -1, nonfinite[i] = false, b->has_probs[i] = false;
  return NULL;
}

poot_status poot_batch_step(poot_batch *b, poot_batch_token_fn fn, void *ctx,
                            poot_batch_step_info *out) {
  poot_batch_step_info info = {0};
  if (out) *out = info;
  const poot_scheduler_plan *plan = NULL;
  POOT_TRY(check_executor(b));
  POOT_TRY(poot_scheduler_step_plan(b->sched, &plan));
  if (plan->n_work == 0) {
    info.idle = true;
    if (out) *out = info;
    return NULL;
  }
  info.n_work = plan->n_work;
  info.n_tokens = plan->n_tokens;
  info.n_preempted = plan->n_preempted;
  for (int32_t i = 0; i < plan->n_work; i++)
    info.n_decode += plan->work[i].n_tokens == 1 && !plan->work[i].prefill;
  poot_status st = poot_batch_run_plan(b, plan, b->ids, b->nonfinite, &info.replays);
  info.n_rows = b->step_rows;
  info.decode_batch = b->step_batch;
  if (st) {
    poot_status_free(poot_scheduler_step_abort(b->sched));
    return st;
  }
  for (int32_t i = 0; i < plan->n_work; i++) {
    const poot_scheduler_work *w = &plan->work[i];
    b->results[i] = (poot_scheduler_result){.token = b->ids[i], .stop = false};
    if (!w->emits) continue;
    info.n_emitted++;
    bool grammar_end = false;
    poot__batch_sample_accept(b, w->caller_id, b->ids[i], &grammar_end);
    b->cur_item = i;
    if (fn) b->results[i].stop = fn(ctx, w->caller_id, b->ids[i], b->nonfinite[i]);
    b->results[i].stop = b->results[i].stop || grammar_end;
    b->cur_item = -1;
  }
  POOT_TRY(poot_scheduler_step_done(b->sched, b->results, plan->n_work));
  b->stats.steps++;
  if (out) *out = info;
  return NULL;
}

/* ------------------------------------------------------------ faults */

void poot_batch_release_executor(poot_batch *b) {
  for (int32_t i = 0; i < b->n_sizes; i++) {
    b->decode[i].added = b->decode_logits[i].added = false;
    b->decode[i].unsupported = b->decode_logits[i].unsupported = false; /* another device */
  }
  for (int i = 0; i < LADDER_RUNGS; i++) b->prefill[i].added = b->prefill_rows[i].added = false;
  b->decode_rows.added = false;
  b->n_kinds = 0; /* the sampling kinds' entries: made again on first use */
  b->ex = NULL;
}

poot_status poot_batch_recover(poot_batch *b, poot_executor *executor) {
  /* The running requests first: nothing of the executor is touched when a
   * plan is still in flight. */
  POOT_TRY(poot_scheduler_requeue_running(b->sched));
  POOT_TRY(poot_kv_pool_forget(b->pool));
  b->fault_armed = false;
  if (!executor || executor == b->ex) {
    POOT_TRY(check_executor(b));
    return poot_exec_reset_state(b->ex);
  }
  poot_batch_release_executor(b);
  b->ex = executor;
  return bind_executor(b);
}

void poot_batch_arm_kernel_fault(poot_batch *b) {
  b->fault_armed = true;
}
