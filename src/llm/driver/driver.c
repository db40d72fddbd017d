/* driver.c — the generation driver over an executor (poot/llm/driver.h):
 * weights loaded once, a decode and a prefill entry added on first use with
 * the greedy suffix appended, prompts fed in chunks (the generation loops
 * are in driver_generate.c).
 *
 * The executor is called through the checked poot_exec_* functions; each
 * entry's token and position slots are bound by handle when it is added. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/llm/driver.h"

#include "driver_impl.h"
#include "driver_internal.h"

#define DEFAULT_CAP_MAX 512

/* ------------------------------------------------------------ helpers */

/* Vocabularies up to this size take one argmax; larger ones are split into
 * chunks of greedy_chunk(V) logits. */
#define GREEDY_ONE 1024

/* The power of two at or above √V (at most 4096): both levels of the argmax
 * then walk about √V elements per thread. */
static int64_t greedy_chunk(int64_t vocab) {
  int64_t c = 64;
  while (c < 4096 && c * c < vocab) c *= 2;
  return c;
}

/* The shape `dims` (rank n) with the row count B in front when `rows`. */
static poot_shape lead(bool rows, int64_t B, uint32_t n, const int64_t *dims) {
  poot_shape s = {.rank = n + (rows ? 1u : 0u)};
  uint32_t k = 0;
  if (rows) s.dims[k++] = B;
  for (uint32_t i = 0; i < n; i++) s.dims[k++] = dims[i];
  return s;
}

/* The argmax of each row of logits f32[B, V]: i32[1] when B = 1 (the
 * driver's entries), i32[B, 1] for B rows (the batched runner's). Past
 * GREEDY_ONE in two levels, the same per row whatever B is: row b's ids
 * depend on row b's logits only. */
static poot_status argmax_rows(poot_graph *g, poot_value logits, int64_t B, int64_t vocab,
                               poot_value *out) {
  const bool rows = B > 1;
  int64_t axis1 = 1;
  if (vocab <= GREEDY_ONE) {
    if (!rows)
      return poot_graph_reduce(g, logits, POOT_REDUCE_ARGMAX, 1, &axis1, POOT_DTYPE_I32, out);
    poot_value am;
    POOT_TRY(poot_graph_reduce(g, logits, POOT_REDUCE_ARGMAX, 1, &axis1, POOT_DTYPE_I32, &am));
    poot_shape col = {.rank = 2, .dims = {B, 1}};
    return poot_graph_reshape(g, am, &col, out);
  }
  const int64_t chunk = greedy_chunk(vocab);
  int64_t chunks = (vocab + chunk - 1) / chunk;
  const uint32_t p = rows ? 1u : 0u; /* the row axis, when there is one */
  int64_t ax_in = p + 1, ax_top = p;
  poot_value ninf, padded = logits, grid, local, cmax, best, best1, base, kconst, kb, idx1;
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, -INFINITY, &ninf));
  if (chunks * chunk != vocab) {
    int64_t low[2] = {0, 0}, high[2] = {0, chunks * chunk - vocab};
    POOT_TRY(poot_graph_pad(g, logits, ninf, low, high, NULL, &padded));
  }
  poot_shape cs = lead(rows, B, 2, (int64_t[]){chunks, chunk});
  POOT_TRY(poot_graph_reshape(g, padded, &cs, &grid));
  POOT_TRY(poot_graph_reduce(g, grid, POOT_REDUCE_ARGMAX, 1, &ax_in, POOT_DTYPE_I32, &local));
  /* Each chunk's winning value, read at its argmax (not a max reduction,
   * whose NaN propagation a device's max instruction need not honour). */
  poot_shape col = lead(rows, B, 2, (int64_t[]){chunks, 1});
  poot_shape row = lead(rows, B, 1, (int64_t[]){chunks});
  poot_value local2, cval;
  POOT_TRY(poot_graph_reshape(g, local, &col, &local2));
  POOT_TRY(poot_graph_gather(g, grid, local2, 1 + p, 1 + p, POOT_TRAP_NONE, &cval));
  POOT_TRY(poot_graph_reshape(g, cval, &row, &cmax));
  POOT_TRY(poot_graph_reduce(g, cmax, POOT_REDUCE_ARGMAX, 1, &ax_top, POOT_DTYPE_I32, &best));
  poot_shape one = lead(rows, B, 1, (int64_t[]){1});
  POOT_TRY(poot_graph_reshape(g, best, &one, &best1));
  POOT_TRY(poot_graph_gather(g, local, best1, p, p, POOT_TRAP_NONE, &idx1));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I32, chunk, &kconst));
  POOT_TRY(poot_graph_broadcast(g, kconst, &one, NULL, &kb));
  POOT_TRY(poot_graph_binary(g, POOT_OP_MUL, best1, kb, &base));
  return poot_graph_binary(g, POOT_OP_ADD, base, idx1, out);
}

poot_status poot__driver_argmax(poot_graph *g, poot_value logits, int64_t vocab, poot_value *out) {
  return argmax_rows(g, logits, 1, vocab, out);
}

/* Appends the greedy suffix: output = {argmax of each row of the logits, 1
 * when every logit of the row is finite else 0}: i32[2] for one row,
 * i32[B, 2] for B. */
poot_status poot__driver_append_greedy(poot_graph *g) {
  poot_value logits = poot_graph_output(g);
  const poot_type *lt = poot_graph_value_type(g, logits);
  if (!lt || lt->dtype != POOT_DTYPE_F32 || lt->shape.rank != 2 || lt->shape.dims[0] < 1)
    return poot_status_make(POOT_INTERNAL, "driver: the traced output is not f32[B, vocab]");
  const int64_t B = lt->shape.dims[0];
  int64_t axis = 1;
  poot_value am, ab, mx, big, bigb, fin, fin32, out;
  POOT_TRY(argmax_rows(g, logits, B, lt->shape.dims[1], &am));
  /* x - x is 0 for a finite x and NaN for NaN or an infinity; a sum carries
   * a NaN through on every device (a max need not), so the row is finite
   * exactly when the sum is 0. */
  POOT_TRY(poot_graph_binary(g, POOT_OP_SUB, logits, logits, &ab));
  POOT_TRY(poot_graph_reduce(g, ab, POOT_REDUCE_SUM, 1, &axis, POOT_DTYPE_F32, &mx));
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, 0.0, &big));
  poot_shape one = {.rank = 1, .dims = {B}};
  POOT_TRY(poot_graph_broadcast(g, big, &one, NULL, &bigb));
  POOT_TRY(poot_graph_binary(g, POOT_OP_EQ, mx, bigb, &fin));
  POOT_TRY(poot_graph_convert(g, fin, POOT_DTYPE_I32, &fin32));
  if (B > 1) {
    poot_shape col = {.rank = 2, .dims = {B, 1}};
    POOT_TRY(poot_graph_reshape(g, fin32, &col, &fin32));
  }
  poot_value parts[2] = {am, fin32};
  POOT_TRY(poot_graph_concat(g, 2, parts, B > 1 ? 1 : 0, &out));
  POOT_TRY(poot_graph_set_output(g, out));
  return poot_graph_verify(g);
}

static poot_status trace_step(poot_driver *d, const driver_entry *e, poot_graph **out_graph) {
  *out_graph = NULL;
  poot_model_step step = {.batch = 1, .tokens = e->tokens, .cap = d->cap};
  poot_model_trace_options to = poot_model_trace_options_for(d->model);
  to.kv_dtype = d->kv_dtype;
  poot_graph *g = NULL;
  if (e->role == DRIVER_ROLE_BIAS)
    return poot__driver_bias_graph(poot_model_get_config(d->model)->vocab_size, out_graph);
  if (e->role == DRIVER_ROLE_PICK)
    POOT_TRY(poot__driver_pick_graph(poot_model_get_config(d->model)->vocab_size, &g));
  else
    POOT_TRY(poot_model_trace(poot_model_get_config(d->model), &step, &to, &g));
  poot_status st;
  if (e->logits)
    st = poot_graph_verify(g);
  else if (e->role == DRIVER_ROLE_GREEDY)
    st = poot__driver_append_greedy(g);
  else
    st = poot__driver_append_sampler(g, &(driver_sample_shape){.tokens = e->tokens,
                                                               .cap = d->cap,
                                                               .kind = e->kind,
                                                               .role = e->role,
                                                               .sort_k = e->sort_k});
  if (st) {
    poot_graph_destroy(g);
    return st;
  }
  *out_graph = g;
  return NULL;
}

poot_status poot__driver_load_weights(poot_executor *ex, poot_model *model, const poot_graph *g) {
  const poot_region *root = poot_graph_root(g);
  size_t n = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op == POOT_OP_LEAF && node->storage == POOT_STORAGE_WEIGHT) n++;
  }
  poot_exec_weight *items = poot_calloc(n + 1, sizeof *items);
  poot_tensor *tensors = poot_calloc(n + 1, sizeof *tensors);
  poot_status st = NULL;
  size_t k = 0;
  if (!items || !tensors) {
    st = OOM("weight bindings");
    goto done;
  }
  for (uint32_t i = 0; i < root->num_nodes && k < n; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op != POOT_OP_LEAF || node->storage != POOT_STORAGE_WEIGHT) continue;
    if ((st = poot_model_weight_tensor(model, &node->weight,
                                       poot_graph_value_type(g, node->results[0]), &tensors[k])))
      goto done;
    items[k] = (poot_exec_weight){
        .key = node->weight.key, .name = node->weight.name, .tensor = &tensors[k]};
    k++;
  }
  st = poot_exec_load_weights(ex, k, items);
done:
  poot_free(tensors);
  poot_free(items);
  return st;
}

/* The handles of the sampler's slots the entry's kind declares. */
static poot_status bind_sampler_slots(poot_driver *d, driver_entry *e) {
  if (e->role == DRIVER_ROLE_GREEDY) return NULL;
  if (e->role == DRIVER_ROLE_BIAS) {
    POOT_TRY(poot_exec_entry_slot(d->ex, e->id, "sampler.bias_id", &e->s_bias_id));
    return poot_exec_entry_slot(d->ex, e->id, "sampler.bias", &e->s_bias);
  }
  if (e->role == DRIVER_ROLE_FEED || e->role == DRIVER_ROLE_FORWARD)
    return (e->kind & POOT_SAMPLER_PENALTIES)
               ? poot_exec_entry_slot(d->ex, e->id, "sampler.i", &e->s_i)
               : NULL;
  POOT_TRY(poot_exec_entry_slot(d->ex, e->id, "sampler.f", &e->s_f));
  POOT_TRY(poot_exec_entry_slot(d->ex, e->id, "sampler.i", &e->s_i));
  if (e->kind & POOT_SAMPLER_DRAW)
    POOT_TRY(poot_exec_entry_slot(d->ex, e->id, "sampler.seed", &e->s_seed));
  if (e->kind & POOT_SAMPLER_MASK)
    POOT_TRY(poot_exec_entry_slot(d->ex, e->id, "sampler.mask", &e->s_mask));
  return NULL;
}

poot_status poot__driver_ensure_entry(poot_driver *d, driver_entry *e) {
  if (e->added) return NULL;
  poot_graph *g = NULL;
  POOT_TRY(trace_step(d, e, &g));
  char shape[64], sampling[48];
  if (e->whole) /* never the prefill entry's key, whatever its length */
    snprintf(shape, sizeof shape, "whole:%lld:cap=%lld", (long long)e->tokens, (long long)d->cap);
  else if (e->tokens == 1)
    snprintf(shape, sizeof shape, "decode:cap=%lld", (long long)d->cap);
  else
    snprintf(shape, sizeof shape, "prefill:%lld:cap=%lld", (long long)e->tokens, (long long)d->cap);
  static const char *const role_names[] = {"greedy",  "greedy+history", "sample",
                                           "forward", "pick",           "bias"};
  if (e->role == DRIVER_ROLE_PICK) snprintf(shape, sizeof shape, "pick:vocab");
  if (e->role == DRIVER_ROLE_BIAS) snprintf(shape, sizeof shape, "bias:vocab");
  if (e->role == DRIVER_ROLE_BIAS)
    snprintf(sampling, sizeof sampling, "bias");
  else if (e->role >= DRIVER_ROLE_SAMPLE && e->sort_k > 0)
    snprintf(sampling, sizeof sampling, "%s:%#x:k%lld", role_names[e->role], e->kind,
             (long long)e->sort_k);
  else if (e->role >= DRIVER_ROLE_SAMPLE)
    snprintf(sampling, sizeof sampling, "%s:%#x", role_names[e->role], e->kind);
  else
    snprintf(sampling, sizeof sampling, "%s",
             e->logits                     ? ""
             : e->role == DRIVER_ROLE_FEED ? "greedy+history"
                                           : "greedy");
  poot_exec_entry_key key = {.program = d->program,
                             .step_shape = shape,
                             .sampling = sampling,
                             .bound_inputs = e->role == DRIVER_ROLE_GREEDY ? "token,pos"
                                             : e->role == DRIVER_ROLE_BIAS ? "sampler"
                                                                           : "token,pos,sampler"};
  uint32_t id = UINT32_MAX;
  poot_status st = poot_exec_add_entry(d->ex, &key, g, &id, NULL);
  poot_graph_destroy(g);
  if (st) return st;
  e->id = id;
  if (e->role != DRIVER_ROLE_PICK && e->role != DRIVER_ROLE_BIAS) {
    st = poot_exec_entry_slot(d->ex, id, "token", &e->token);
    if (!st) st = poot_exec_entry_slot(d->ex, id, "pos", &e->pos);
  }
  if (!st) st = bind_sampler_slots(d, e);
  if (st) {
    poot_status_free(poot_exec_remove_entry(d->ex, id));
    return st;
  }
  e->added = true;
  e->request = 0;
  return NULL;
}

static poot_status run_step(poot_driver *d, driver_entry *e, const poot_token *tokens, void *out,
                            size_t out_size) {
  return poot__driver_run_step(d, e, tokens, NULL, 0, out, out_size);
}

/* One step of entry `e` on tokens[0..T) at the current position. */
static poot_status run_io(poot_driver *d, driver_entry *e, const poot_token *tokens,
                          const poot_exec_slot_value *extra, size_t n_extra, void *out,
                          size_t out_size, bool queue) {
  POOT_TRY(poot__driver_ensure_entry(d, e));
  int32_t tok[STEP_TOKENS_INLINE];
  int64_t T = e->tokens;
  int32_t *tp = tok;
  if (T > (int64_t)(sizeof tok / sizeof tok[0])) {
    tp = poot_malloc((size_t)T * sizeof *tp);
    if (!tp) return OOM("token slot");
  }
  for (int64_t i = 0; i < T; i++) tp[i] = (int32_t)tokens[i];
  int64_t tdims[2] = {1, T}, one = 1;
  int32_t p32 = (int32_t)d->pos;
  poot_tensor tt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, tdims), .data = tp, .size = (size_t)T * 4};
  poot_tensor pt = {.type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &p32, .size = 4};
  poot_exec_slot_value in[10] = {{e->token, &tt}, {e->pos, &pt}};
  size_t n_in = T > 0 ? 2 : 0; /* PICK (T = 0) has no token and no position */
  for (size_t i = 0; i < n_extra && n_in < sizeof in / sizeof in[0]; i++) in[n_in++] = extra[i];
  poot_exec_step_io io = {.input_count = n_in,
                          .inputs = in,
                          .output = out,
                          .output_size = out_size,
                          .eager = d->eager,
                          .on_dispatch = d->hook,
                          .on_dispatch_ctx = d->hook_ctx,
                          .queue = queue};
  poot_status st = poot_exec_step(d->ex, e->id, &io);
  if (tp != tok) poot_free(tp);
  if (!st && T > 0) {
    memcpy(d->history + d->pos, tokens, (size_t)T * sizeof *tokens);
    d->pos += T;
  }
  return st;
}

poot_status poot__driver_run_step(poot_driver *d, driver_entry *e, const poot_token *tokens,
                                  const poot_exec_slot_value *extra, size_t n_extra, void *out,
                                  size_t out_size) {
  return run_io(d, e, tokens, extra, n_extra, out, out_size, false);
}

poot_status poot__driver_queue_step(poot_driver *d, driver_entry *e, const poot_token *tokens,
                                    const poot_exec_slot_value *extra, size_t n_extra) {
  return run_io(d, e, tokens, extra, n_extra, NULL, 0, true);
}

/* True when feeding `count` tokens takes a sequence computed at or below
 * the restart length past it. */
static bool crosses_restart(const poot_driver *d, size_t count) {
  return d->restart_at > 0 && d->pos <= d->restart_at && d->pos + (int64_t)count > d->restart_at;
}

/* True when a multi-token feed reaches past the whole-pass length: it runs
 * in one pass, not in chunks. */
static bool needs_whole_pass(const poot_driver *d, size_t count) {
  return d->whole_pass_at > 0 && count > 1 && d->pos + (int64_t)count > d->whole_pass_at;
}

/* Runs ids[0..count) in one pass of an entry of that length at the current
 * position. */
static poot_status whole_pass_step(poot_driver *d, driver_entry *e, const poot_token *ids,
                                   size_t count, void *out, size_t out_size) {
  if (e->added && e->tokens != (int64_t)count) {
    POOT_TRY(poot_exec_remove_entry(d->ex, e->id));
    e->added = false;
  }
  e->tokens = (int64_t)count;
  return run_step(d, e, ids, out, out_size);
}

/* Runs the sequence so far plus ids[0..count) again from position 0 in one
 * pass of an entry of that length (the KV cache recomputed). */
static poot_status restart_step(poot_driver *d, driver_entry *e, const poot_token *ids,
                                size_t count, void *out, size_t out_size) {
  int64_t L = d->pos + (int64_t)count;
  poot_token *seq = poot_malloc((size_t)L * sizeof *seq);
  if (!seq) return OOM("restart tokens");
  memcpy(seq, d->history, (size_t)d->pos * sizeof *seq);
  memcpy(seq + d->pos, ids, count * sizeof *seq);
  poot_status st = poot__driver_reset_states(d);
  if (!st) {
    d->pos = 0;
    st = whole_pass_step(d, e, seq, (size_t)L, out, out_size);
  }
  poot_free(seq);
  return st;
}

/* ------------------------------------------------------------ public */

poot_status poot_driver_create(poot_executor *executor, poot_model *model,
                               const poot_driver_options *options, poot_driver **out_driver) {
  *out_driver = NULL;
  if (!executor || !model) return BAD("poot_driver_create: NULL executor or model");
  poot_driver_options dflt = poot_driver_options_default();
  const poot_driver_options *o = options ? options : &dflt;
  const poot_model_config *c = poot_model_get_config(model);
  int64_t ctx = c->context_length;
  int64_t cap = o->cap;
  if (cap < 0) return BAD("driver: capacity %lld < 0", (long long)cap);
  if (cap == 0) cap = ctx > 0 && ctx < DEFAULT_CAP_MAX ? ctx : DEFAULT_CAP_MAX;
  if (ctx > 0 && cap > ctx)
    return BAD("driver: capacity %lld exceeds the model's context length %lld", (long long)cap,
               (long long)ctx);
  poot_dtype kv = o->kv_dtype ? o->kv_dtype : poot_model_kv_dtype_default(false);
  if (!poot_model_kv_dtype_ok(kv))
    return BAD("driver: kv_dtype %s is not a KV cache type (f32, f16 or q8_0)",
               poot_dtype_name(kv));
  int64_t chunk = o->prefill_chunk;
  if (chunk == 0) chunk = cap >= DEFAULT_CHUNK ? DEFAULT_CHUNK : cap >= TAIL_CHUNK ? TAIL_CHUNK : 1;
  if (chunk < 1 || chunk > cap)
    return BAD("driver: prefill chunk %lld is outside [1, capacity %lld]", (long long)chunk,
               (long long)cap);
  poot_driver *d = poot_calloc(1, sizeof *d);
  if (!d) return OOM("driver");
  d->ex = executor;
  d->model = model;
  d->cap = cap;
  d->chunk = chunk;
  poot__driver_ladder_make(chunk, d->ladder);
  d->kv_dtype = kv;
  d->decode.tokens = d->decode_logits.tokens = d->feed_decode.tokens = 1;
  for (int i = 0; i < LADDER_RUNGS; i++) {
    const int64_t T = d->ladder[i];
    d->prefill[i].tokens = d->prefill_logits[i].tokens = d->feed_prefill[i].tokens = T;
    d->feed_prefill[i].role = DRIVER_ROLE_FEED;
    d->feed_prefill[i].kind = POOT_SAMPLER_PENALTIES;
    d->prefill_logits[i].logits = true;
  }
  d->feed_decode.role = DRIVER_ROLE_FEED;
  d->feed_decode.kind = POOT_SAMPLER_PENALTIES;
  d->decode_logits.logits = d->restart_logits.logits = true;
  d->restart.whole = d->restart_logits.whole = true;
  d->restart_at = poot_model_rope_restart_length(c);
  d->whole_pass_at = poot_model_rope_whole_pass_length(c);
  d->history = poot_calloc((size_t)cap, sizeof *d->history);
  d->program = poot_strdup(o->program ? o->program : "model");
  poot_graph *g = NULL;
  poot_status st = NULL;
  if (!d->program || !d->history) {
    st = OOM("program name and history");
    goto fail;
  }
  if (poot_model_is_encoder(c))
    st = poot__driver_embed_weights_graph(d, &g);
  else
    st = trace_step(d, &d->decode, &g);
  if (st) goto fail;
  if ((st = poot__driver_load_weights(d->ex, d->model, g))) goto fail;
  poot_graph_destroy(g);
  *out_driver = d;
  return NULL;
fail:
  poot_graph_destroy(g);
  poot_free(d->history);
  poot_free(d->program);
  poot_free(d);
  return st;
}

void poot_driver_destroy(poot_driver *d) {
  if (!d) return;
  driver_entry *entries[] = {&d->decode, &d->decode_logits, &d->restart, &d->restart_logits,
                             &d->feed_decode};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (entries[i]->added) poot_status_free(poot_exec_remove_entry(d->ex, entries[i]->id));
  for (int i = 0; i < LADDER_RUNGS; i++) {
    driver_entry *rung[3] = {&d->prefill[i], &d->prefill_logits[i], &d->feed_prefill[i]};
    for (int j = 0; j < 3; j++)
      if (rung[j]->added) poot_status_free(poot_exec_remove_entry(d->ex, rung[j]->id));
  }
  for (uint32_t i = 0; i < d->n_samplers; i++) {
    if (d->samplers[i].added) poot_status_free(poot_exec_remove_entry(d->ex, d->samplers[i].id));
    if (d->fwd[i].added) poot_status_free(poot_exec_remove_entry(d->ex, d->fwd[i].id));
  }
  poot__driver_encode_release(d);
  poot__driver_embed_release(d);
  poot_exec_unload(d->ex);
  poot_grammar_vocab_destroy(d->gvocab);
  poot_free(d->history);
  poot_free(d->program);
  poot_free(d);
}

int64_t poot_driver_cap(const poot_driver *d) {
  return d->cap;
}
int64_t poot_driver_prefill_chunk(const poot_driver *d) {
  return d->chunk;
}
poot_dtype poot_driver_kv_dtype(const poot_driver *d) {
  return d->kv_dtype;
}
uint64_t poot_driver_kv_bytes(const poot_driver *d) {
  const poot_model_config *c = poot_model_get_config(d->model);
  /* A head's row of head_dim elements (q8_0: head_dim / 32 blocks of 34 bytes). */
  poot_shape row = poot_shape_of(1, c->head_dim);
  size_t row_bytes = 0;
  poot_status st = poot_type_byte_size(d->kv_dtype, &row, &row_bytes);
  if (st) { /* not whole blocks: the trace refuses such a cache */
    poot_status_free(st);
    return 0;
  }
  uint64_t per_pos = 2 * (uint64_t)c->n_layers * (uint64_t)c->n_kv_heads * (uint64_t)row_bytes;
  return per_pos * (uint64_t)d->cap;
}
int64_t poot_driver_pos(const poot_driver *d) {
  return d->pos;
}

void poot_driver_set_eager(poot_driver *d, bool eager) {
  d->eager = eager;
}

void poot_driver_set_dispatch_hook(poot_driver *d, poot_exec_dispatch_fn fn, void *ctx) {
  d->hook = fn;
  d->hook_ctx = ctx;
}

/* Every rung of the ladder, the middle one included: a prompt of
 * MID_CHUNK tokens or more (a chat's system prompt) needs it, and compiling
 * it here keeps that compile out of the first such request's latency. */
poot_status poot_driver_prepare(poot_driver *d) {
  POOT_TRY(poot__driver_ensure_entry(d, &d->decode));
  for (int i = 0; i < LADDER_RUNGS; i++)
    if (d->ladder[i] > 1) POOT_TRY(poot__driver_ensure_entry(d, &d->prefill[i]));
  return NULL;
}

/* The rungs the prompt walks down, each once (the same walk as the feeds). */
poot_status poot_driver_prepare_prompt(poot_driver *d, size_t n_prompt) {
  POOT_TRY(poot__driver_ensure_entry(d, &d->decode));
  int64_t left = (int64_t)n_prompt;
  int s;
  while ((s = poot__driver_ladder_rung(d->ladder, left)) >= 0) {
    POOT_TRY(poot__driver_ensure_entry(d, &d->prefill[s]));
    left -= d->ladder[s];
  }
  return NULL;
}

void poot__driver_ladder_make(int64_t chunk, int64_t out[LADDER_RUNGS]) {
  out[0] = chunk > 1 ? chunk : 0;
  out[1] = chunk > MID_CHUNK ? MID_CHUNK : 0;
  out[2] = chunk > TAIL_CHUNK ? TAIL_CHUNK : 0;
}

int poot__driver_ladder_rung(const int64_t ladder[LADDER_RUNGS], int64_t left) {
  for (int i = 0; i < LADDER_RUNGS; i++)
    if (ladder[i] > 1 && left >= ladder[i]) return i;
  return -1;
}

int64_t poot__driver_ladder_rest(const int64_t ladder[LADDER_RUNGS], int64_t n) {
  int s;
  while ((s = poot__driver_ladder_rung(ladder, n)) >= 0) n -= ladder[s];
  return n;
}

poot_status poot__driver_reset_states(poot_driver *d) {
  d->bias_request = 0; /* the dense bias is zeroes now */
  return poot_exec_reset_state(d->ex);
}

poot_status poot_driver_reset(poot_driver *d) {
  POOT_TRY(poot__driver_reset_states(d));
  d->pos = 0;
  d->counts_valid = true;
  return NULL;
}

const poot_token *poot_driver_cached_ids(const poot_driver *d) {
  return d->history;
}

poot_status poot__driver_feed(poot_driver *d, const poot_token *ids, size_t count, bool hist,
                              const poot_tensor *hist_i, poot_token *out_next,
                              bool *out_nonfinite) {
  *out_next = -1;
  if (out_nonfinite) *out_nonfinite = false;
  if (!ids || count < 1) return BAD("driver: feed needs at least one id");
  if (d->pos + (int64_t)count > d->cap)
    return poot_status_make(POOT_CAPACITY,
                            "driver: %zu tokens at position %lld exceed the KV capacity %lld",
                            count, (long long)d->pos, (long long)d->cap);
  int32_t words[2] = {-1, 1};
  size_t i = 0;
  if (hist && (crosses_restart(d, count) || needs_whole_pass(d, count)))
    return poot_status_make(POOT_UNSUPPORTED,
                            "driver: repetition penalties past the model's rope restart length "
                            "(%lld) are not supported yet",
                            (long long)(d->restart_at ? d->restart_at : d->whole_pass_at));
  if (!hist && crosses_restart(d, count)) {
    POOT_TRY(restart_step(d, &d->restart, ids, count, words, sizeof words));
    i = count;
  } else if (!hist && needs_whole_pass(d, count)) {
    POOT_TRY(whole_pass_step(d, &d->restart, ids, count, words, sizeof words));
    i = count;
  }
  if (!hist) d->counts_valid = false;
  driver_entry *pre = hist ? d->feed_prefill : d->prefill;
  driver_entry *dec = hist ? &d->feed_decode : &d->decode;
  size_t nx = hist ? 1 : 0;
  while (i < count) {
    const int s = poot__driver_ladder_rung(d->ladder, (int64_t)(count - i));
    driver_entry *e = s < 0 ? dec : &pre[s];
    POOT_TRY(poot__driver_ensure_entry(d, e));
    poot_exec_slot_value x = {e->s_i, hist_i};
    POOT_TRY(poot__driver_run_step(d, e, ids + i, &x, nx, words, sizeof words));
    i += (size_t)e->tokens;
  }
  *out_next = words[0];
  if (out_nonfinite) *out_nonfinite = words[1] == 0;
  return NULL;
}

poot_status poot_driver_feed(poot_driver *d, const poot_token *ids, size_t count,
                             poot_token *out_next, bool *out_nonfinite) {
  return poot__driver_feed(d, ids, count, false, NULL, out_next, out_nonfinite);
}

poot_status poot_driver_feed_logits(poot_driver *d, const poot_token *ids, size_t count,
                                    float *out_logits) {
  if (!ids || count < 1 || !out_logits) return BAD("driver: feed_logits needs ids and a buffer");
  if (d->pos + (int64_t)count > d->cap)
    return poot_status_make(POOT_CAPACITY,
                            "driver: %zu tokens at position %lld exceed the KV capacity %lld",
                            count, (long long)d->pos, (long long)d->cap);
  size_t bytes = (size_t)poot_model_get_config(d->model)->vocab_size * sizeof(float);
  if (crosses_restart(d, count))
    return restart_step(d, &d->restart_logits, ids, count, out_logits, bytes);
  if (needs_whole_pass(d, count))
    return whole_pass_step(d, &d->restart_logits, ids, count, out_logits, bytes);
  for (size_t i = 0; i < count;) {
    const int s = poot__driver_ladder_rung(d->ladder, (int64_t)(count - i));
    driver_entry *e = s < 0 ? &d->decode_logits : &d->prefill_logits[s];
    POOT_TRY(run_step(d, e, ids + i, out_logits, bytes));
    i += (size_t)e->tokens;
  }
  return NULL;
}
