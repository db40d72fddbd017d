/* driver_step.c — one sampled step: the entry of a sampling kind (added on
 * first use, at most DRIVER_MAX_SAMPLERS kinds at once), its parameter slots
 * written once per request, the grammar mask every step, and the output
 * words read back (docs/sampling.md "The device suffix"). */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "driver_impl.h"

/* The entry of `kind` sorting `sort_k` candidates (SAMPLE, or PICK with its
 * FORWARD in *out_fwd for a MASK kind): found, or added (replacing the oldest
 * when full). */
static poot_status sampler_entry(poot_driver *d, uint32_t kind, int64_t sort_k, driver_entry **out,
                                 driver_entry **out_fwd) {
  for (uint32_t i = 0; i < d->n_samplers; i++)
    if (d->samplers[i].kind == kind && d->samplers[i].sort_k == sort_k) {
      *out = &d->samplers[i];
      *out_fwd = &d->fwd[i];
      return NULL;
    }
  if (d->n_samplers == DRIVER_MAX_SAMPLERS) {
    driver_entry *old[2] = {&d->samplers[0], &d->fwd[0]};
    for (int k = 0; k < 2; k++)
      if (old[k]->added) POOT_TRY(poot_exec_remove_entry(d->ex, old[k]->id));
    memmove(&d->samplers[0], &d->samplers[1], (DRIVER_MAX_SAMPLERS - 1) * sizeof d->samplers[0]);
    memmove(&d->fwd[0], &d->fwd[1], (DRIVER_MAX_SAMPLERS - 1) * sizeof d->fwd[0]);
    d->n_samplers--;
  }
  const uint32_t i = d->n_samplers;
  driver_entry *e = &d->samplers[i], *f = &d->fwd[i];
  memset(e, 0, sizeof *e);
  memset(f, 0, sizeof *f);
  e->kind = kind;
  e->sort_k = sort_k;
  if (kind & POOT_SAMPLER_MASK) {
    e->role = DRIVER_ROLE_PICK; /* T = 0 */
    f->role = DRIVER_ROLE_FORWARD;
    f->tokens = 1;
    f->kind = kind;
    f->sort_k = sort_k; /* its own key: entries of a pair are removed together */
    POOT_TRY(poot__driver_ensure_entry(d, f));
  } else {
    e->role = DRIVER_ROLE_SAMPLE;
    e->tokens = 1;
  }
  poot_status st = poot__driver_ensure_entry(d, e);
  if (st) {
    if (f->added) poot_status_free(poot_exec_remove_entry(d->ex, f->id));
    return st;
  }
  d->n_samplers++;
  *out = e;
  *out_fwd = f;
  return NULL;
}

/* ------------------------------------------------------ the mask worker */

struct driver_worker {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  driver_mask_fn fn; /* the job; NULL when idle */
  void *ctx;
  poot_status st;
  bool done, quit;
};

static void *worker_main(void *arg) {
  driver_worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->quit && (!w->fn || w->done)) pthread_cond_wait(&w->cv, &w->mu);
    if (w->quit) break;
    driver_mask_fn fn = w->fn;
    void *ctx = w->ctx;
    pthread_mutex_unlock(&w->mu);
    poot_status st = fn(ctx);
    pthread_mutex_lock(&w->mu);
    w->st = st;
    w->done = true;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

poot_status poot__driver_worker_start(driver_worker **out) {
  *out = NULL;
  driver_worker *w = poot_calloc(1, sizeof *w);
  if (!w) return OOM("mask worker");
  if (pthread_mutex_init(&w->mu, NULL)) {
    poot_free(w);
    return poot_status_make(POOT_OUT_OF_MEMORY, "driver: no mutex for the mask worker");
  }
  if (pthread_cond_init(&w->cv, NULL)) {
    pthread_mutex_destroy(&w->mu);
    poot_free(w);
    return poot_status_make(POOT_OUT_OF_MEMORY, "driver: no condition for the mask worker");
  }
  if (pthread_create(&w->thread, NULL, worker_main, w)) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    poot_free(w);
    return poot_status_make(POOT_OUT_OF_MEMORY, "driver: no thread for the mask worker");
  }
  *out = w;
  return NULL;
}

void poot__driver_worker_stop(driver_worker *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->quit = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  poot_status_free(w->st);
  poot_free(w);
}

void poot__driver_worker_post(driver_worker *w, driver_mask_fn fn, void *ctx) {
  pthread_mutex_lock(&w->mu);
  w->fn = fn;
  w->ctx = ctx;
  w->done = false;
  w->st = NULL;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

poot_status poot__driver_worker_wait(driver_worker *w) {
  pthread_mutex_lock(&w->mu);
  while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
  poot_status st = w->st;
  w->st = NULL;
  w->fn = NULL;
  pthread_mutex_unlock(&w->mu);
  return st;
}

void poot__driver_request_init(int64_t V, const poot_sampling_params *p, uint64_t seed,
                               driver_request *r) {
  const int32_t kc = V < POOT_SAMPLING_MAX_TOP_K ? (int32_t)V : POOT_SAMPLING_MAX_TOP_K;
  memset(r, 0, sizeof *r);
  r->f[0] = p->temperature;
  r->f[1] = p->top_p;
  r->f[2] = p->min_p > 0.0f ? logf(p->min_p) : -INFINITY;
  r->f[3] = p->typical_p;
  r->f[4] = p->repeat_penalty;
  r->f[5] = p->presence_penalty;
  r->f[6] = p->frequency_penalty;
  r->i[0] = p->top_k > 0 && p->top_k < kc ? p->top_k : kc;
  r->i[1] = p->repeat_last_n > 0 ? p->repeat_last_n : 0;
  r->seed[0] = (uint32_t)seed;
  r->seed[1] = (uint32_t)(seed >> 32);
  /* The bias list: one entry per token (duplicates add up, in order, as the
   * reference does), then padding that names token -1 (no token). */
  uint32_t n = 0;
  int32_t ids[POOT_SAMPLING_MAX_BIAS];
  float vals[POOT_SAMPLING_MAX_BIAS];
  for (uint32_t i = 0; i < p->n_bias; i++) {
    uint32_t j = 0;
    while (j < n && ids[j] != p->bias[i].token) j++;
    if (j == n) ids[n] = p->bias[i].token, vals[n++] = 0.0f;
    vals[j] += p->bias[i].bias;
  }
  for (uint32_t i = 0; i < POOT_SAMPLING_MAX_BIAS; i++) {
    r->bias_id[i] = i < n ? ids[i] : -1;
    r->bias[i] = i < n ? vals[i] : 0.0f;
  }
}

static poot_tensor vec(poot_dtype dt, int64_t *n, void *data, size_t elem) {
  poot_tensor t = {.type = poot_type_make(dt, 1, n), .data = data, .size = (size_t)*n * elem};
  return t;
}

/* The model step of a MASK kind (FORWARD on `last`), queued on the device
 * (nothing of it is read: PICK is queued behind it, with no host round trip
 * between the two replays), with the mask filled meanwhile on the worker
 * when there is one. Returns once the mask is ready; FORWARD may still run. */
static poot_status forward_with_mask(poot_driver *d, driver_entry *f, driver_request *r,
                                     poot_token last, driver_mask_fn fill, void *fill_ctx) {
  int64_t ni = DRIVER_SAMPLER_IPARAMS;
  poot_tensor ti = vec(POOT_DTYPE_I32, &ni, r->i, 4);
  poot_exec_slot_value in[1] = {{f->s_i, &ti}};
  const size_t n = (r->kind & POOT_SAMPLER_PENALTIES) ? 1 : 0;
  if (!d->worker) {
    POOT_TRY(fill(fill_ctx));
    return poot__driver_queue_step(d, f, &last, in, n);
  }
  poot__driver_worker_post(d->worker, fill, fill_ctx);
  poot_status st = poot__driver_queue_step(d, f, &last, in, n);
  uint64_t t0 = poot_time_ns();
  poot_status ms = poot__driver_worker_wait(d->worker);
  r->wait_ns += poot_time_ns() - t0;
  if (st) {
    poot_status_free(ms);
    return st;
  }
  return ms;
}

poot_status poot__driver_sample_step(poot_driver *d, driver_request *r, poot_token last,
                                     driver_mask_fn fill, void *fill_ctx, const uint32_t *mask,
                                     poot_sampling_result *out) {
  driver_entry *e, *f;
  const int64_t V = poot_model_get_config(d->model)->vocab_size;
  POOT_TRY(sampler_entry(d, r->kind, poot__driver_sort_width(r->kind, r->i[0], V), &e, &f));
  int64_t nf = DRIVER_SAMPLER_FPARAMS, ni = DRIVER_SAMPLER_IPARAMS, n2 = 2;
  int64_t nb = POOT_SAMPLING_MAX_BIAS, nw = (V + 31) / 32;
  poot_tensor tf = vec(POOT_DTYPE_F32, &nf, r->f, 4), ti = vec(POOT_DTYPE_I32, &ni, r->i, 4);
  poot_tensor ts = vec(POOT_DTYPE_U32, &n2, r->seed, 4);
  poot_tensor tbi = vec(POOT_DTYPE_I32, &nb, r->bias_id, 4);
  poot_tensor tb = vec(POOT_DTYPE_F32, &nb, r->bias, 4);
  poot_tensor tm = vec(POOT_DTYPE_U32, &nw, (void *)mask, 4);
  poot_exec_slot_value in[6];
  size_t n = 0;
  /* The parameters are written once per request: a slot keeps its value. */
  if (e->request != r->id) {
    in[n++] = (poot_exec_slot_value){e->s_f, &tf};
    in[n++] = (poot_exec_slot_value){e->s_i, &ti};
    if (r->kind & POOT_SAMPLER_DRAW) in[n++] = (poot_exec_slot_value){e->s_seed, &ts};
  }
  /* The bias list goes into the dense state once per request (and again
   * after a reset zeroed it). */
  if ((r->kind & POOT_SAMPLER_LOGIT_BIAS) && d->bias_request != r->id) {
    driver_entry *b = &d->bias;
    if (!b->added) {
      memset(b, 0, sizeof *b);
      b->role = DRIVER_ROLE_BIAS; /* T = 0 */
      POOT_TRY(poot__driver_ensure_entry(d, b));
    }
    poot_exec_slot_value bin[2] = {{b->s_bias_id, &tbi}, {b->s_bias, &tb}};
    POOT_TRY(poot__driver_run_step(d, b, NULL, bin, 2, NULL, 0));
    d->bias_request = r->id;
  }
  if (r->kind & POOT_SAMPLER_MASK) {
    POOT_TRY(forward_with_mask(d, f, r, last, fill, fill_ctx));
    in[n++] = (poot_exec_slot_value){e->s_mask, &tm};
  }
  int32_t words[DRIVER_SAMPLE_HEAD + 2 * POOT_SAMPLING_MAX_PROBS];
  const uint32_t nwords = poot__driver_sample_words(r->kind, V);
  POOT_TRY(poot__driver_run_step(d, e, &last, in, n, words, nwords * sizeof *words));
  e->request = r->id;
  memset(out, 0, sizeof *out);
  out->token = words[0];
  out->non_finite = words[1] == 0;
  if (!out->non_finite && words[2] == 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "sampling: every token of %lld has logit -inf after the grammar "
                            "mask, the logit bias and the penalties; nothing can be drawn",
                            (long long)V);
  if (out->token < 0 || out->token >= V) {
    if (out->non_finite) return NULL; /* nothing was drawn: the caller reports it */
    return poot_status_make(POOT_INTERNAL, "sampling: the device drew id %d of %lld", out->token,
                            (long long)V);
  }
  if (r->kind & POOT_SAMPLER_LOGPROBS) {
    memcpy(&out->logprob, &words[3], sizeof out->logprob);
    const uint32_t np = (nwords - DRIVER_SAMPLE_HEAD) / 2;
    out->n_top = (uint32_t)r->n_probs < np ? (uint32_t)r->n_probs : np;
    for (uint32_t i = 0; i < out->n_top; i++) {
      out->top[i].token = words[DRIVER_SAMPLE_HEAD + i];
      memcpy(&out->top[i].logprob, &words[DRIVER_SAMPLE_HEAD + np + i], sizeof(float));
    }
  }
  return NULL;
}
