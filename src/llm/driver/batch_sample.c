/* batch_sample.c — per-request sampling in the batched runner
 * (poot/llm/batch.h, poot_batch_request.sampling): each sampled request's
 * slot values, kept by caller id; the decode entries of each sampling kind
 * (the driver's sampling suffix on every row, driver_sample.c row mode);
 * and one replay of a kind's rows with their parameter slots written, read
 * back as ids, flags and (a LOGPROBS kind) each row's logprobs.
 *
 * A row's Philox counter is {ids the request has generated, 0}: a request
 * draws the same numbers whatever rows it shares a step with, after a
 * preemption (its generated ids are kept, not redrawn), and as the driver's
 * state counter gives them from a reset.
 *
 * Penalties and grammars keep nothing on the device either: before each
 * replay the host writes a penalized row's window (the distinct ids of the
 * last repeat_last_n of the request's history and their counts, from the
 * scheduler's history: what the driver's counts state holds after the same
 * token) and a grammar row's mask (its matcher's, which accepts each new id
 * after the step). A row holds another sequence at every step; a request
 * preempted or recomputed after a fault keeps its history and its matcher,
 * so both are right whatever happened to its K/V rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch_impl.h"

poot_status poot__batch_sample_init(poot_batch *b) {
  const size_t R = (size_t)b->max_batch;
  poot_map_init(&b->req_index);
  b->reqs = poot_calloc((size_t)b->max_requests, sizeof *b->reqs);
  b->sf = poot_calloc(R * DRIVER_SAMPLER_FPARAMS, sizeof *b->sf);
  b->si = poot_calloc(R * DRIVER_SAMPLER_IPARAMS, sizeof *b->si);
  b->sseed = poot_calloc(R * 2, sizeof *b->sseed);
  b->sctr = poot_calloc(R * 2, sizeof *b->sctr);
  b->sbias_id = poot_calloc(R * POOT_SAMPLING_MAX_BIAS, sizeof *b->sbias_id);
  b->sbias = poot_calloc(R * POOT_SAMPLING_MAX_BIAS, sizeof *b->sbias);
  const int64_t V = poot_model_get_config(b->model)->vocab_size;
  b->mask_words = (V + 31) / 32;
  b->pen_w = b->cap < V ? b->cap : V;
  b->smask = poot_calloc(R * (size_t)b->mask_words, sizeof *b->smask);
  b->spen_id = poot_calloc(R * (size_t)b->pen_w, sizeof *b->spen_id);
  b->spen_n = poot_calloc(R * (size_t)b->pen_w, sizeof *b->spen_n);
  b->pen_rows = poot_malloc(R * sizeof *b->pen_rows);
  poot_strbuf_init(&b->piece);
  if (!b->reqs || !b->sf || !b->si || !b->sseed || !b->sctr || !b->sbias_id || !b->sbias ||
      !b->smask || !b->spen_id || !b->spen_n || !b->pen_rows)
    return OOM("sampler rows");
  for (size_t r = 0; r < R; r++) /* all of it padded on first use */
    b->pen_rows[r] = (pen_row){.stamp = 0, .m = b->pen_w};
  return NULL;
}

void poot__batch_sample_deinit(poot_batch *b) {
  for (uint32_t k = 0; k < b->n_kinds; k++)
    for (int32_t i = 0; i < b->n_sizes; i++)
      if (b->kinds[k].decode[i].added)
        poot_status_free(poot_exec_remove_entry(b->ex, b->kinds[k].decode[i].id));
  b->n_kinds = 0;
  for (int32_t i = 0; b->reqs && i < b->max_requests; i++)
    if (b->reqs[i].used) poot__batch_sample_free(&b->reqs[i]);
  if (b->reqs) poot_map_deinit(&b->req_index);
  poot__batch_masks_destroy(b->masks);
  b->masks = NULL;
  poot_grammar_vocab_destroy(b->gvocab);
  b->gvocab = NULL;
  poot_free(b->smask);
  poot_free(b->spen_id);
  poot_free(b->spen_n);
  poot_free(b->pen_rows);
  b->smask = NULL;
  b->spen_id = b->spen_n = NULL;
  b->pen_rows = NULL;
  poot_strbuf_deinit(&b->piece);
  poot_free(b->reqs);
  poot_free(b->sf);
  poot_free(b->si);
  poot_free(b->sseed);
  poot_free(b->sctr);
  poot_free(b->sbias_id);
  poot_free(b->sbias);
  b->reqs = NULL;
  b->sf = b->sbias = NULL;
  b->si = b->sbias_id = NULL;
  b->sseed = b->sctr = NULL;
}

/* ------------------------------------------------------------ requests */

poot_status poot__batch_sample_make(poot_batch *b, const poot_sampling_params *p,
                                    const poot_grammar *grammar, batch_req *out) {
  memset(out, 0, sizeof *out);
  if (!p && !grammar) return NULL;
  const int64_t V = poot_model_get_config(b->model)->vocab_size;
  poot_sampling_params *q = poot_malloc(sizeof *q); /* the copy the bans go to */
  if (!q) return OOM("sampling parameters");
  if (p) {
    *q = *p;
  } else { /* a grammar alone runs greedy, as the driver's */
    poot_sampling_params_init(q);
    q->temperature = 0.0f;
  }
  poot_status st = poot_sampling_params_validate(q, (uint32_t)V);
  /* ignore_eos: the end ids banned (llama.cpp's "--logit-bias EOS-inf"), as
   * the driver bans them */
  for (int32_t i = 0; !st && q->ignore_eos && i < V; i++)
    if (poot_model_is_stop(b->model, i)) st = poot_sampling_params_ban_ids(q, &i, 1);
  const uint32_t kind = poot_sampling_params_kind(q) | (grammar ? POOT_SAMPLER_MASK : 0u);
  uint64_t seed = 0;
  if (!st && (kind & POOT_SAMPLER_DRAW)) st = poot_sampling_seed_resolve(q, &seed);
  if (!st && kind) {
    poot__driver_request_init(V, q, seed, &out->r);
    out->r.kind = kind;
    out->r.n_probs = q->n_probs;
  }
  poot_free(q);
  POOT_TRY(st);
  if (kind == 0) return NULL; /* greedy: the greedy entries */
  if (kind & POOT_SAMPLER_PENALTIES)
    POOT_TRY(poot__pen_window_init(&out->pw, out->r.i[1], b->cap, V));
  if (grammar) {
    if (!b->gvocab) st = poot__driver_grammar_vocab(b->model, &b->gvocab);
    if (!st && !b->masks) st = poot__batch_masks_create(b->max_batch, &b->masks);
    if (!st) st = poot_grammar_matcher_create(grammar, &out->gm);
    if (!st) {
      out->mask = poot_malloc((size_t)b->mask_words * sizeof *out->mask);
      if (!out->mask) st = OOM("a grammar request's mask");
    }
    if (st) {
      poot__batch_sample_free(out);
      return st;
    }
  }
  out->used = true;
  return NULL;
}

void poot__batch_sample_free(batch_req *r) {
  poot_grammar_matcher_destroy(r->gm);
  r->gm = NULL;
  poot_free(r->mask);
  r->mask = NULL;
  r->mask_ready = false;
  poot__pen_window_deinit(&r->pw);
}

void poot__batch_sample_accept(poot_batch *b, uint64_t caller_id, int32_t token, bool *out_end) {
  *out_end = false;
  batch_req *q = poot__batch_sample_get(b, caller_id);
  if (!q || !q->gm) return;
  q->mask_ready = false; /* the matcher moves on (or the request ends) */
  const poot_tokenizer *tok = poot_model_get_tokenizer(b->model);
  poot_strbuf_clear(&b->piece);
  poot_status st = poot_tokenizer_token_to_piece(tok, token, false, &b->piece);
  if (!st && b->piece.len) st = poot_grammar_matcher_accept(q->gm, b->piece.data, b->piece.len);
  if (st) {
    poot_log(POOT_LOG_WARN, "batch: request %llu: its grammar refuses id %d (%s); it ends there",
             (unsigned long long)caller_id, token, poot_status_message(st));
    poot_status_free(st);
    *out_end = true;
    return;
  }
  *out_end = poot_grammar_matcher_is_finished(q->gm) ||
             (b->piece.len == 0 && poot_grammar_matcher_can_end(q->gm));
}

poot_status poot__batch_sample_put(poot_batch *b, uint64_t caller_id, const batch_req *r) {
  int32_t i = 0;
  while (i < b->max_requests && b->reqs[i].used) i++;
  if (i == b->max_requests) /* the scheduler holds at most max_requests */
    return poot_status_make(POOT_INTERNAL, "batch: no free sampler record");
  POOT_TRY(poot_map_put(&b->req_index, &caller_id, sizeof caller_id, (uint64_t)i + 1));
  b->reqs[i] = *r;
  b->reqs[i].used = true;
  b->reqs[i].caller_id = caller_id;
  return NULL;
}

batch_req *poot__batch_sample_get(const poot_batch *b, uint64_t caller_id) {
  uint64_t v = 0;
  if (!b->reqs || !poot_map_get(&b->req_index, &caller_id, sizeof caller_id, &v) || v == 0)
    return NULL;
  return &b->reqs[v - 1];
}

void poot__batch_sample_drop(poot_batch *b, uint64_t caller_id) {
  uint64_t v = 0;
  if (!b->reqs || !poot_map_get(&b->req_index, &caller_id, sizeof caller_id, &v) || v == 0) return;
  poot__batch_sample_free(&b->reqs[v - 1]);
  b->reqs[v - 1].used = false;
  poot_map_remove(&b->req_index, &caller_id, sizeof caller_id);
}

/* ------------------------------------------------------------ steps */

/* The kind's entry set: found, or made (replacing the least recently used
 * kind's entries when all BATCH_MAX_KINDS are taken). */
static poot_status kind_set(poot_batch *b, uint32_t kind, batch_kind **out) {
  for (uint32_t k = 0; k < b->n_kinds; k++)
    if (b->kinds[k].kind == kind) {
      *out = &b->kinds[k];
      return NULL;
    }
  uint32_t k = b->n_kinds;
  if (k == BATCH_MAX_KINDS) {
    k = 0;
    for (uint32_t j = 1; j < b->n_kinds; j++)
      if (b->kinds[j].used < b->kinds[k].used) k = j;
    for (int32_t i = 0; i < b->n_sizes; i++)
      if (b->kinds[k].decode[i].added)
        POOT_TRY(poot_exec_remove_entry(b->ex, b->kinds[k].decode[i].id));
  } else {
    b->n_kinds++;
  }
  batch_kind *s = &b->kinds[k];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  for (int32_t i = 0; i < b->n_sizes; i++)
    s->decode[i] = (batch_entry){.batch = b->sizes[i], .tokens = 1, .kind = kind};
  *out = s;
  return NULL;
}

static poot_tensor mat(poot_dtype dt, int64_t rows, int64_t cols, void *data) {
  int64_t d[2] = {rows, cols};
  poot_tensor t = {
      .type = poot_type_make(dt, 2, d), .data = data, .size = (size_t)(rows * cols) * 4};
  return t;
}

/* Row r's parameter slot values: the request's, or a dummy row's (a greedy
 * argmax of its ignored logits: temperature 1, nothing truncated, no bias). */
static void fill_params(poot_batch *b, int32_t r, const batch_req *q, uint32_t ctr) {
  float *f = b->sf + r * DRIVER_SAMPLER_FPARAMS;
  int32_t *i = b->si + r * DRIVER_SAMPLER_IPARAMS;
  int32_t *bid = b->sbias_id + r * POOT_SAMPLING_MAX_BIAS;
  float *bv = b->sbias + r * POOT_SAMPLING_MAX_BIAS;
  if (q) {
    memcpy(f, q->r.f, sizeof q->r.f);
    memcpy(i, q->r.i, sizeof q->r.i);
    memcpy(b->sseed + 2 * r, q->r.seed, sizeof q->r.seed);
    memcpy(bid, q->r.bias_id, sizeof q->r.bias_id);
    memcpy(bv, q->r.bias, sizeof q->r.bias);
  } else {
    const int64_t V = poot_model_get_config(b->model)->vocab_size;
    const float fd[DRIVER_SAMPLER_FPARAMS] = {1.0f, 1.0f, -INFINITY, 1.0f, 1.0f, 0, 0, 0};
    memcpy(f, fd, sizeof fd);
    memset(i, 0, DRIVER_SAMPLER_IPARAMS * sizeof *i);
    i[0] = V < POOT_SAMPLING_MAX_TOP_K ? (int32_t)V : POOT_SAMPLING_MAX_TOP_K;
    b->sseed[2 * r] = b->sseed[2 * r + 1] = 0;
    for (int j = 0; j < POOT_SAMPLING_MAX_BIAS; j++) bid[j] = -1, bv[j] = 0.0f;
  }
  b->sctr[2 * r] = ctr;
  b->sctr[2 * r + 1] = 0;
}

/* Row r's penalty window: the distinct ids of the last lag (0: all) of the
 * first n ids of the request's history (the ids up to and including the
 * one this row feeds, as the driver's counts hold them after its step) and
 * their counts, padded with token -1; NULL q: an empty window. The request's
 * window moves on by the ids fed since its last row (one, decoding); the
 * history only grows (a preempted or recovered request keeps its ids), so a
 * window built at its first row stays right across preemptions and faults,
 * and one that went back is rebuilt from the history. The order of the ids
 * does not matter: the suffix gathers each listed logit, penalizes it alone
 * and scatters it back to its own (distinct) index. */
static poot_status fill_window(poot_batch *b, int32_t r, batch_req *q, const int32_t *h, int64_t nh,
                               int64_t n) {
  int32_t *id = b->spen_id + r * b->pen_w, *cnt = b->spen_n + r * b->pen_w;
  if (q) {
    if (n > nh || n > b->cap)
      return poot_status_make(POOT_INTERNAL, "batch: a row at position %lld of a history of %lld",
                              (long long)(n - 1), (long long)nh);
    POOT_TRY(poot__pen_window_advance(&q->pw, h, n));
    if (q->pw.m > b->pen_w) /* more distinct ids than the vocabulary or the context */
      return poot_status_make(POOT_INTERNAL, "batch: a penalty window past its width");
  }
  poot__pen_window_write(q ? &q->pw : NULL, id, cnt, b->pen_w, &b->pen_rows[r], ++b->pen_stamp);
  return NULL;
}

/* Row r's grammar mask: its matcher's (the previous ids accepted; filled by
 * a mask worker at the start of the step, here when none did), or every
 * token allowed (a dummy row). */
static poot_status fill_mask(poot_batch *b, int32_t r, batch_req *q) {
  uint32_t *m = b->smask + r * b->mask_words;
  if (q && q->gm) {
    if (!q->mask_ready) {
      POOT_TRY(poot_grammar_matcher_fill_mask(q->gm, b->gvocab, q->mask, (size_t)b->mask_words));
      q->mask_ready = true;
    }
    memcpy(m, q->mask, (size_t)b->mask_words * sizeof *m);
    return NULL;
  }
  memset(m, 0xff, (size_t)b->mask_words * sizeof *m);
  return NULL;
}

/* A row's logprobs from its sample words {id, finite, any, logprob bits,
 * top ids[np], top logprob bits[np]}, as the driver reads its own
 * (driver_step.c): the first n_probs of the top np. */
static void read_probs(const int32_t *w, uint32_t words, int32_t n_probs,
                       poot_sampling_result *out) {
  memset(out, 0, sizeof *out);
  out->token = w[0];
  out->non_finite = w[1] == 0;
  memcpy(&out->logprob, &w[3], sizeof out->logprob);
  const uint32_t np = (words - DRIVER_SAMPLE_HEAD) / 2;
  out->n_top = (uint32_t)n_probs < np ? (uint32_t)n_probs : np;
  for (uint32_t i = 0; i < out->n_top; i++) {
    out->top[i].token = w[DRIVER_SAMPLE_HEAD + i];
    memcpy(&out->top[i].logprob, &w[DRIVER_SAMPLE_HEAD + np + i], sizeof(float));
  }
}

poot_status poot__batch_sample_rows(poot_batch *b, const poot_scheduler_plan *plan,
                                    const batch_row *rows, int32_t n, int32_t k) {
  batch_kind *s = NULL;
  POOT_TRY(kind_set(b, rows[0].kind, &s));
  s->used = b->stats.replays + 1;
  batch_entry *e = &s->decode[k];
  const int32_t B = b->sizes[k];
  const uint64_t t0 = poot_time_ns();
  for (int32_t r = 0; r < B; r++) {
    batch_req *q = r < n ? rows[r].req : NULL;
    uint32_t ctr = 0;
    const int32_t *h = NULL;
    int64_t nh = 0;
    if (q) {
      /* The item's tokens are its history from pos on, which the emitting
       * row ends: the history and its length without asking the scheduler
       * (a lookup by caller id per row was most of a 64-row step's host
       * time). */
      const poot_scheduler_work *w = &plan->work[rows[r].item];
      h = w->tokens - w->pos;
      nh = w->pos + w->n_tokens;
      ctr = (uint32_t)(nh - q->n_prompt); /* the draw this row makes: the next id's */
    }
    fill_params(b, r, q, ctr);
    if (e->kind & POOT_SAMPLER_PENALTIES)
      POOT_TRY(fill_window(b, r, q, h, nh, (int64_t)b->pos[r] + 1));
    if (e->kind & POOT_SAMPLER_MASK) POOT_TRY(fill_mask(b, r, q));
  }
  b->stats.sample_host_ns += poot_time_ns() - t0;
  POOT_TRY(poot__batch_ensure_entry(b, e));
  poot_tensor tf = mat(POOT_DTYPE_F32, B, DRIVER_SAMPLER_FPARAMS, b->sf);
  poot_tensor ti = mat(POOT_DTYPE_I32, B, DRIVER_SAMPLER_IPARAMS, b->si);
  poot_tensor ts = mat(POOT_DTYPE_U32, B, 2, b->sseed);
  poot_tensor tc = mat(POOT_DTYPE_U32, B, 2, b->sctr);
  poot_tensor tbi = mat(POOT_DTYPE_I32, B, POOT_SAMPLING_MAX_BIAS, b->sbias_id);
  poot_tensor tb = mat(POOT_DTYPE_F32, B, POOT_SAMPLING_MAX_BIAS, b->sbias);
  poot_tensor tm = mat(POOT_DTYPE_U32, B, b->mask_words, b->smask);
  poot_tensor tpi = mat(POOT_DTYPE_I32, B, b->pen_w, b->spen_id);
  poot_tensor tpn = mat(POOT_DTYPE_I32, B, b->pen_w, b->spen_n);
  poot_exec_slot_value in[9] = {{e->s_f, &tf}, {e->s_i, &ti}};
  size_t n_in = 2;
  if (e->kind & POOT_SAMPLER_DRAW) {
    in[n_in++] = (poot_exec_slot_value){e->s_seed, &ts};
    in[n_in++] = (poot_exec_slot_value){e->s_ctr, &tc};
  }
  if (e->kind & POOT_SAMPLER_LOGIT_BIAS) {
    in[n_in++] = (poot_exec_slot_value){e->s_bias_id, &tbi};
    in[n_in++] = (poot_exec_slot_value){e->s_bias, &tb};
  }
  if (e->kind & POOT_SAMPLER_MASK) in[n_in++] = (poot_exec_slot_value){e->s_mask, &tm};
  if (e->kind & POOT_SAMPLER_PENALTIES) {
    in[n_in++] = (poot_exec_slot_value){e->s_pen_id, &tpi};
    in[n_in++] = (poot_exec_slot_value){e->s_pen_n, &tpn};
  }
  const int64_t V = poot_model_get_config(b->model)->vocab_size;
  const uint32_t words = poot__driver_sample_words(e->kind, V);
  POOT_TRY(poot__batch_replay(b, e, in, n_in, b->out, (size_t)B * words * 4));
  for (int32_t r = 0; r < n; r++) {
    const int32_t *w = b->out + r * words;
    const bool ok = w[0] >= 0 && w[0] < V && w[2] != 0; /* drawn, not every token banned */
    b->ids_tmp[r] = ok ? w[0] : 0;
    b->nonfinite_tmp[r] = w[1] == 0 || !ok;
    b->has_probs_tmp[r] = (e->kind & POOT_SAMPLER_LOGPROBS) && rows[r].req->r.n_probs > 0;
    if (b->has_probs_tmp[r]) read_probs(w, words, rows[r].req->r.n_probs, &b->probs_tmp[r]);
  }
  return NULL;
}
