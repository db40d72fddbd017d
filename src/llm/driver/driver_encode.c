/* driver_encode.c — the rest of the driver API (poot/llm/driver.h, "The rest
 * of the driver API"): encode (a decoder's hidden states of every position,
 * one entry per token count) and generation with input rows ("embeds")
 * written per step into slots of entries traced with
 * poot_model_step.input_embeds.
 *
 * The entries here share the driver's K/V states by name, so both encode and
 * a prompt with rows run from position 0 of the driver's one sequence. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/driver.h"

#include "driver_impl.h"
#include "driver_internal.h"

#define ROWS_BOUND "token,pos," POOT_MODEL_SLOT_EMBEDS "," POOT_MODEL_SLOT_EMBEDS_ON

/* An entry that binds the input-row slots besides token and pos. */
typedef struct rows_entry {
  driver_entry e;
  poot_exec_slot embeds, embeds_on;
} rows_entry;

typedef struct encode_entry {
  driver_entry e;
  uint64_t used; /* the clock at its last use */
} encode_entry;

struct poot__driver_encode {
  encode_entry encode[POOT_DRIVER_ENCODE_ENTRIES];
  size_t n_encode;
  uint64_t clock;
  rows_entry decode, prefill[LADDER_RUNGS], whole; /* T = 1, the ladder's rungs, a whole prompt */
  /* The rows of the prompt being generated from: the row of each position
   * below row_at_len (-1: the token's own embedding) and their values. */
  int32_t *row_at;
  size_t row_at_len;
  float *rows; /* n_rows × hidden */
  size_t n_rows;
};

static int64_t hidden_size(const poot_driver *d) {
  return poot_model_get_config(d->model)->hidden_size;
}

static poot_status get_enc(poot_driver *d, struct poot__driver_encode **out) {
  if (!d->enc) {
    d->enc = poot_calloc(1, sizeof *d->enc);
    if (!d->enc) return OOM("encode entries");
    d->enc->decode.e.tokens = 1;
    for (int i = 0; i < LADDER_RUNGS; i++) d->enc->prefill[i].e.tokens = d->ladder[i];
  }
  *out = d->enc;
  return NULL;
}

static void drop_entry(poot_driver *d, driver_entry *e) {
  if (e->added) poot_status_free(poot_exec_remove_entry(d->ex, e->id));
  e->added = false;
}

static void clear_rows(struct poot__driver_encode *enc) {
  poot_free(enc->row_at);
  poot_free(enc->rows);
  enc->row_at = NULL;
  enc->rows = NULL;
  enc->row_at_len = enc->n_rows = 0;
}

void poot__driver_inputs_clear(poot_driver *d) {
  if (d->enc) clear_rows(d->enc);
}

void poot__driver_encode_release(poot_driver *d) {
  struct poot__driver_encode *enc = d->enc;
  if (!enc) return;
  for (size_t i = 0; i < enc->n_encode; i++) drop_entry(d, &enc->encode[i].e);
  drop_entry(d, &enc->decode.e);
  for (int i = 0; i < LADDER_RUNGS; i++) drop_entry(d, &enc->prefill[i].e);
  drop_entry(d, &enc->whole.e);
  clear_rows(enc);
  poot_free(enc);
  d->enc = NULL;
}

/* ------------------------------------------------------------ entries */

/* Traces T tokens at the driver's capacity: hidden states, or logits with
 * the greedy suffix (and the row slots when `rows`). */
static poot_status trace(poot_driver *d, int64_t T, bool hidden, bool rows, poot_graph **out) {
  *out = NULL;
  poot_model_step step = {.batch = 1,
                          .tokens = T,
                          .cap = d->cap,
                          .output = hidden ? POOT_MODEL_OUTPUT_HIDDEN : POOT_MODEL_OUTPUT_LOGITS,
                          .input_embeds = rows};
  poot_model_trace_options to = poot_model_trace_options_for(d->model);
  to.kv_dtype = d->kv_dtype;
  poot_graph *g = NULL;
  POOT_TRY(poot_model_trace(poot_model_get_config(d->model), &step, &to, &g));
  poot_status st = hidden ? NULL : poot__driver_append_greedy(g);
  if (st) {
    poot_graph_destroy(g);
    return st;
  }
  *out = g;
  return NULL;
}

/* Adds `g` under the key (shape, sampling, bound) as entry `e` and looks up
 * its token and pos slots and, when `r` is e's rows_entry, its row slots. */
static poot_status add_entry(poot_driver *d, const char *shape, const char *sampling,
                             const char *bound, const poot_graph *g, driver_entry *e,
                             rows_entry *r) {
  poot_exec_entry_key key = {
      .program = d->program, .step_shape = shape, .sampling = sampling, .bound_inputs = bound};
  uint32_t id = UINT32_MAX;
  POOT_TRY(poot_exec_add_entry(d->ex, &key, g, &id, NULL));
  poot_status st = poot_exec_entry_slot(d->ex, id, "token", &e->token);
  if (!st) st = poot_exec_entry_slot(d->ex, id, "pos", &e->pos);
  if (!st && r) st = poot_exec_entry_slot(d->ex, id, POOT_MODEL_SLOT_EMBEDS, &r->embeds);
  if (!st && r) st = poot_exec_entry_slot(d->ex, id, POOT_MODEL_SLOT_EMBEDS_ON, &r->embeds_on);
  if (st) {
    poot_status_free(poot_exec_remove_entry(d->ex, id));
    return st;
  }
  e->id = id;
  e->added = true;
  return NULL;
}

/* The encode entry of T tokens, added now when absent (the least recently
 * used one removed when all POOT_DRIVER_ENCODE_ENTRIES are taken). */
static poot_status encode_entry_for(poot_driver *d, int64_t T, encode_entry **out) {
  *out = NULL;
  struct poot__driver_encode *enc = NULL;
  POOT_TRY(get_enc(d, &enc));
  encode_entry *slot = NULL;
  for (size_t i = 0; i < enc->n_encode; i++) {
    encode_entry *x = &enc->encode[i];
    if (x->e.added && x->e.tokens == T) {
      x->used = ++enc->clock;
      *out = x;
      return NULL;
    }
    if (!x->e.added && !slot) slot = x;
  }
  if (!slot && enc->n_encode < POOT_DRIVER_ENCODE_ENTRIES) slot = &enc->encode[enc->n_encode++];
  if (!slot) {
    slot = &enc->encode[0];
    for (size_t i = 1; i < enc->n_encode; i++)
      if (enc->encode[i].used < slot->used) slot = &enc->encode[i];
    drop_entry(d, &slot->e);
  }
  poot_graph *g = NULL;
  POOT_TRY(trace(d, T, true, false, &g));
  char shape[64];
  snprintf(shape, sizeof shape, "encode:%lld:cap=%lld", (long long)T, (long long)d->cap);
  slot->e.tokens = T;
  poot_status st = add_entry(d, shape, "", "token,pos", g, &slot->e, NULL);
  poot_graph_destroy(g);
  POOT_TRY(st);
  slot->used = ++enc->clock;
  *out = slot;
  return NULL;
}

/* Row entry `r` for T tokens (the whole-prompt entry is replaced when T
 * changes). */
static poot_status ensure_rows_entry(poot_driver *d, rows_entry *r, int64_t T) {
  if (r->e.added && r->e.tokens == T) return NULL;
  drop_entry(d, &r->e);
  char shape[64];
  if (r == &d->enc->whole)
    snprintf(shape, sizeof shape, "whole:%lld:cap=%lld", (long long)T, (long long)d->cap);
  else if (T == 1)
    snprintf(shape, sizeof shape, "decode:cap=%lld", (long long)d->cap);
  else
    snprintf(shape, sizeof shape, "prefill:%lld:cap=%lld", (long long)T, (long long)d->cap);
  poot_graph *g = NULL;
  POOT_TRY(trace(d, T, false, true, &g));
  r->e.tokens = T;
  poot_status st = add_entry(d, shape, "greedy", ROWS_BOUND, g, &r->e, r);
  poot_graph_destroy(g);
  return st;
}

/* -------------------------------------------------------------- steps */

/* The embeds / embeds_on values of positions [pos, pos + T): the kept rows
 * where there are some, zeros (and 0, the token's own row) elsewhere. */
static void fill_rows(const poot_driver *d, int64_t pos, int64_t T, float *embeds, int32_t *on) {
  const struct poot__driver_encode *enc = d->enc;
  const int64_t H = hidden_size(d);
  memset(embeds, 0, (size_t)(T * H) * sizeof *embeds);
  for (int64_t i = 0; i < T; i++) {
    int64_t p = pos + i;
    int32_t r = p < (int64_t)enc->row_at_len ? enc->row_at[p] : -1;
    on[i] = r >= 0;
    if (r >= 0)
      memcpy(embeds + i * H, enc->rows + (size_t)r * (size_t)H, (size_t)H * sizeof *embeds);
  }
}

/* One step of entry `e` on tokens[0..T) at the current position (with the
 * kept rows when `r` is e's rows_entry); the output into out. */
static poot_status run_step(poot_driver *d, driver_entry *e, const rows_entry *r,
                            const poot_token *tokens, void *out, size_t out_size) {
  const int64_t T = e->tokens, H = hidden_size(d);
  int32_t *tok = poot_malloc((size_t)T * sizeof *tok * 2);
  float *emb = r ? poot_malloc((size_t)(T * H) * sizeof *emb) : NULL;
  if (!tok || (r && !emb)) {
    poot_free(tok);
    poot_free(emb);
    return OOM("step inputs");
  }
  int32_t *on = tok + T;
  for (int64_t i = 0; i < T; i++) tok[i] = (int32_t)tokens[i];
  if (r) fill_rows(d, d->pos, T, emb, on);
  int64_t tdims[2] = {1, T}, edims[3] = {1, T, H}, one = 1;
  int32_t p32 = (int32_t)d->pos;
  poot_tensor tt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, tdims), .data = tok, .size = (size_t)T * 4};
  poot_tensor pt = {.type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &p32, .size = 4};
  poot_tensor et = {.type = poot_type_make(POOT_DTYPE_F32, 3, edims),
                    .data = emb,
                    .size = (size_t)(T * H) * sizeof(float)};
  poot_tensor ot = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, tdims), .data = on, .size = (size_t)T * 4};
  poot_exec_slot_value in[4] = {{e->token, &tt}, {e->pos, &pt}};
  if (r) {
    in[2] = (poot_exec_slot_value){r->embeds, &et};
    in[3] = (poot_exec_slot_value){r->embeds_on, &ot};
  }
  poot_exec_step_io io = {.input_count = r ? 4 : 2,
                          .inputs = in,
                          .output = out,
                          .output_size = out_size,
                          .eager = d->eager,
                          .on_dispatch = d->hook,
                          .on_dispatch_ctx = d->hook_ctx};
  poot_status st = poot_exec_step(d->ex, e->id, &io);
  poot_free(tok);
  poot_free(emb);
  if (!st) {
    memcpy(d->history + d->pos, tokens, (size_t)T * sizeof *tokens);
    d->pos += T;
  }
  return st;
}

/* Feeds ids[0..T) at the current position: through row entry `r` when a
 * kept row falls among them, else through poot_driver_feed (T is 1 or
 * a rung of the ladder, so that is one decode or prefill step). */
static poot_status feed_span(poot_driver *d, rows_entry *r, const poot_token *ids, int64_t T,
                             int32_t words[2]) {
  const struct poot__driver_encode *enc = d->enc;
  bool any = false;
  for (int64_t p = d->pos; p < d->pos + T && p < (int64_t)enc->row_at_len; p++)
    any = any || enc->row_at[p] >= 0;
  if (any) {
    POOT_TRY(ensure_rows_entry(d, r, T));
    return run_step(d, &r->e, r, ids, words, 2 * sizeof *words);
  }
  poot_token next = -1;
  bool nf = false;
  POOT_TRY(poot_driver_feed(d, ids, (size_t)T, &next, &nf));
  words[0] = next;
  words[1] = !nf;
  return NULL;
}

/* ------------------------------------------------------------- inputs */

/* Checks `inputs` against a prompt of `count` ids and makes the rows of
 * each position (row_at) and their values (rows). */
static poot_status collect_rows(const poot_driver *d, size_t count, const poot_driver_input *inputs,
                                size_t n_inputs, int32_t **out_row_at, float **out_rows,
                                size_t *out_n) {
  *out_row_at = NULL;
  *out_rows = NULL;
  *out_n = 0;
  const int64_t H = hidden_size(d);
  if (n_inputs && !inputs) return BAD("driver: %zu inputs but no input array", n_inputs);
  size_t n = 0;
  for (size_t k = 0; k < n_inputs; k++) {
    const char *name = inputs[k].name;
    if (!name) return BAD("driver: input %zu has no name", k);
    if (strcmp(name, POOT_MODEL_SLOT_EMBEDS) != 0)
      return BAD("driver: input '%s' is not an input of this model (a decoder declares '%s')", name,
                 POOT_MODEL_SLOT_EMBEDS);
    for (size_t j = 0; j < k; j++)
      if (strcmp(inputs[j].name, name) == 0) return BAD("driver: input '%s' is given twice", name);
    if (inputs[k].n_rows && !inputs[k].rows)
      return BAD("driver: input '%s' has %zu rows but no row array", name, inputs[k].n_rows);
    if (inputs[k].n_rows > count - n)
      return BAD("driver: input '%s' has %zu rows, more than the prompt's %zu ids", name,
                 inputs[k].n_rows, count);
    n += inputs[k].n_rows;
  }
  int32_t *row_at = poot_malloc(count * sizeof *row_at);
  float *rows = poot_malloc((n ? n : 1) * (size_t)H * sizeof *rows);
  if (!row_at || !rows) {
    poot_free(row_at);
    poot_free(rows);
    return OOM("input rows");
  }
  for (size_t i = 0; i < count; i++) row_at[i] = -1;
  poot_status st = NULL;
  size_t m = 0;
  for (size_t k = 0; k < n_inputs && !st; k++) {
    for (size_t j = 0; j < inputs[k].n_rows && !st; j++) {
      const poot_driver_input_row *row = &inputs[k].rows[j];
      const char *name = inputs[k].name;
      if (row->index < 0 || row->index >= (int64_t)count)
        st = BAD("driver: input '%s' row %zu has prompt index %lld, outside the prompt's %zu ids",
                 name, j, (long long)row->index, count);
      else if (row_at[row->index] >= 0)
        st = BAD("driver: input '%s' row %zu: prompt index %lld is given twice", name, j,
                 (long long)row->index);
      else if (!row->values)
        st = BAD("driver: input '%s' row %zu has no values", name, j);
      else if (row->n_values != (size_t)H)
        st =
            BAD("driver: input '%s' row %zu has %zu values; the model's rows have hidden_size "
                "%lld",
                name, j, row->n_values, (long long)H);
      if (st) break;
      memcpy(rows + m * (size_t)H, row->values, (size_t)H * sizeof *rows);
      row_at[row->index] = (int32_t)m++;
    }
  }
  if (st) {
    poot_free(row_at);
    poot_free(rows);
    return st;
  }
  *out_row_at = row_at;
  *out_rows = rows;
  *out_n = n;
  return NULL;
}

/* True when a prompt of `count` ids from position 0 runs in one pass (as
 * poot_driver_feed decides: past the restart or the whole-pass length). */
static bool prompt_in_one_pass(const poot_driver *d, size_t count) {
  return (d->restart_at > 0 && (int64_t)count > d->restart_at) ||
         (d->whole_pass_at > 0 && count > 1 && (int64_t)count > d->whole_pass_at);
}

poot_status poot__driver_feed_inputs(poot_driver *d, const poot_token *prompt, size_t count,
                                     const poot_driver_input *inputs, size_t n_inputs,
                                     poot_token *out_next, bool *out_nonfinite) {
  *out_next = -1;
  if (out_nonfinite) *out_nonfinite = false;
  if (!prompt || count < 1) return BAD("driver: the prompt needs at least one id");
  if ((int64_t)count > d->cap)
    return poot_status_make(POOT_CAPACITY,
                            "driver: a prompt of %zu ids exceeds the KV capacity %lld", count,
                            (long long)d->cap);
  struct poot__driver_encode *enc = NULL;
  POOT_TRY(get_enc(d, &enc));
  int32_t *row_at = NULL;
  float *rows = NULL;
  size_t n = 0;
  POOT_TRY(collect_rows(d, count, inputs, n_inputs, &row_at, &rows, &n));
  clear_rows(enc);
  enc->row_at = row_at;
  enc->row_at_len = count;
  enc->rows = rows;
  enc->n_rows = n;
  POOT_TRY(poot_driver_reset(d));
  int32_t words[2] = {-1, 1};
  if (n == 0) return poot_driver_feed(d, prompt, count, out_next, out_nonfinite);
  if (prompt_in_one_pass(d, count)) {
    POOT_TRY(feed_span(d, &enc->whole, prompt, (int64_t)count, words));
  } else {
    for (size_t i = 0; i < count;) {
      const int s = poot__driver_ladder_rung(d->ladder, (int64_t)(count - i));
      rows_entry *r = s < 0 ? &enc->decode : &enc->prefill[s];
      POOT_TRY(feed_span(d, r, prompt + i, r->e.tokens, words));
      i += (size_t)r->e.tokens;
    }
  }
  *out_next = words[0];
  if (out_nonfinite) *out_nonfinite = words[1] == 0;
  return NULL;
}

poot_status poot__driver_feed_next(poot_driver *d, poot_token id, poot_token *out_next,
                                   bool *out_nonfinite) {
  const struct poot__driver_encode *enc = d->enc;
  if (!enc || enc->n_rows == 0 || d->restart_at <= 0 || d->pos != d->restart_at ||
      d->pos + 1 > d->cap)
    return poot_driver_feed(d, &id, 1, out_next, out_nonfinite);
  /* The sequence grows past the restart length: run it all again in one
   * pass (as poot_driver_feed does) with the prompt's rows in place. */
  *out_next = -1;
  if (out_nonfinite) *out_nonfinite = false;
  int64_t L = d->pos + 1;
  poot_token *seq = poot_malloc((size_t)L * sizeof *seq);
  if (!seq) return OOM("restart tokens");
  memcpy(seq, d->history, (size_t)d->pos * sizeof *seq);
  seq[L - 1] = id;
  int32_t words[2] = {-1, 1};
  poot_status st = poot__driver_reset_states(d);
  if (!st) {
    d->pos = 0;
    st = feed_span(d, &d->enc->whole, seq, L, words);
  }
  poot_free(seq);
  POOT_TRY(st);
  *out_next = words[0];
  if (out_nonfinite) *out_nonfinite = words[1] == 0;
  return NULL;
}

/* ------------------------------------------------------------- encode */

poot_status poot_driver_prepare_encode(poot_driver *d, const int64_t *row_counts, size_t n) {
  if (!d || (n && !row_counts)) return BAD("driver: prepare_encode needs a driver and counts");
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++) {
    if (row_counts[i] < 1)
      return BAD("driver: prepare_encode count %zu is %lld (< 1)", i, (long long)row_counts[i]);
    if (row_counts[i] > d->cap)
      return poot_status_make(POOT_CAPACITY,
                              "driver: prepare_encode count %zu is %lld, above the KV capacity "
                              "%lld",
                              i, (long long)row_counts[i], (long long)d->cap);
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) seen = row_counts[j] == row_counts[i];
    distinct += !seen;
  }
  if (distinct > POOT_DRIVER_ENCODE_ENTRIES)
    return BAD(
        "driver: prepare_encode got %zu distinct counts; at most %d encode entries are "
        "kept (POOT_DRIVER_ENCODE_ENTRIES)",
        distinct, POOT_DRIVER_ENCODE_ENTRIES);
  for (size_t i = 0; i < n; i++) {
    encode_entry *e = NULL;
    POOT_TRY(encode_entry_for(d, row_counts[i], &e));
  }
  return NULL;
}

poot_status poot_driver_encode(poot_driver *d, const poot_token *ids, size_t count,
                               float *out_hidden) {
  if (!d || !ids || count < 1 || !out_hidden)
    return BAD("driver: encode needs at least one id and an output buffer");
  if ((int64_t)count > d->cap)
    return poot_status_make(POOT_CAPACITY, "driver: encode of %zu ids exceeds the KV capacity %lld",
                            count, (long long)d->cap);
  encode_entry *e = NULL;
  POOT_TRY(encode_entry_for(d, (int64_t)count, &e));
  POOT_TRY(poot_driver_reset(d));
  size_t bytes = count * (size_t)hidden_size(d) * sizeof(float);
  return run_step(d, &e->e, NULL, ids, out_hidden, bytes);
}

/* ---------------------------------------------------------- generation */

poot_status poot_driver_generate_with_inputs(poot_driver *d, const poot_token *prompt, size_t count,
                                             const poot_driver_input *inputs, size_t n_inputs,
                                             const poot_driver_generate_options *options,
                                             poot_driver_token_fn fn, void *fn_ctx,
                                             poot_driver_generate_result *out) {
  memset(out, 0, sizeof *out);
  poot_driver_generate_options dflt = poot_driver_generate_options_default();
  const poot_driver_generate_options *o = options ? options : &dflt;
  poot_status st = NULL;
  if (o->max_new_tokens == 0 && prompt && count > 0) {
    /* Nothing runs, but the inputs are still checked. */
    int32_t *row_at = NULL;
    float *rows = NULL;
    size_t n = 0;
    st = collect_rows(d, count, inputs, n_inputs, &row_at, &rows, &n);
    poot_free(row_at);
    poot_free(rows);
    if (st) return st;
  }
  st = poot__driver_generate(d, prompt, count, inputs, n_inputs, o, fn, fn_ctx, out);
  poot__driver_inputs_clear(d);
  return st;
}
