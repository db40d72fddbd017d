/* The batched engine (serve_impl.h "The engine", docs/serve.md "The two
 * engines"): one thread owns a batched runner (poot/llm/batch.h) on its own
 * executor over the runtime's device. Between steps it admits queued jobs
 * (each choice of each prompt one runner request; prefix reuse shares a
 * prompt's blocks among its choices), steps the runner, streams each
 * request's ids (with their logprobs when asked: poot_batch_logprobs) and
 * text to its sink through the tokenizer's streaming decoder and the
 * stop-string matcher (the ones the driver uses), cancels
 * the requests of a job whose client went away, and ends a job when its
 * last choice is taken finished.
 *
 * A job with images runs the vision tower first (its prepare hook, as the
 * single engine does); the rows go with each of its requests
 * (poot_batch_request.inputs), which the runner keeps until the request
 * ends.
 *
 * A step that fails with a device fault is recovered as the single engine
 * recovers (engine.c): KERNEL_FAULT / NEEDS_RESET reset the runner's
 * executor; POISONED, DEVICE_LOST and TIMEOUT make a new device context
 * (poot_runtime_reopen_device) and a new executor for the runner. Then
 * poot_batch_recover forgets the pool's contents and requeues every running
 * sequence, which the runner prefills again from its history (prompt and
 * generated ids) before it goes on: the text continues where it was. Every
 * sequence running in a faulted step counts a fault; a request with one
 * that faulted twice fails alone (500), the others go on. Another error
 * fails every job in flight with it. */
#include <stdio.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/llm/batch.h"
#include "poot/llm/tokenizer.h"
#include "serve_impl.h"

/* One job in flight. */
typedef struct bjob {
  poot__serve_job *job;
  size_t n_left; /* choices not taken finished */
  poot_status status;
  bool cancelled; /* its requests were cancelled in the runner */
} bjob;

/* One runner request: one choice of one job. */
typedef struct bseq {
  bool live;
  bool submitted; /* the runner holds it (it ends through take_finished) */
  uint64_t id; /* caller_id */
  bjob *bj;
  uint32_t index;
  poot_tokenizer_decoder *dec;
  poot_stop_matcher *stops;
  bool stopped_string; /* a stop string ended it */
  poot__serve_ids gen;
  poot_sampling_result *probs; /* with logprobs: one per id of gen */
  size_t n_probs, cap_probs;
  poot_strbuf piece;
  int faults;     /* faulted steps it ran in */
  size_t attempt; /* ids since it last started (fault injection counts them) */
} bseq;

struct poot__serve_engine_batch {
  poot_runtime *rt;
  poot__serve_metrics *metrics;
  poot__serve_engine_options o;
  poot_executor *ex;
  poot_batch *b;
  poot_batch_info info;
  const poot_tokenizer *tok;
  pthread_t thread;
  bool started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  poot__serve_queue queue;
  bool stopping;
  bjob **jobs; /* in flight */
  size_t n_jobs, cap_jobs;
  bseq *seqs; /* max_seqs slots */
  size_t n_seqs, n_live;
  uint64_t next_id;
  int64_t injected;    /* faults injected so far (test only) */
  bool inject_pending; /* inject one before the next step */
};

static bseq *seq_of(poot__serve_engine_batch *e, uint64_t id) {
  for (size_t i = 0; i < e->n_seqs; i++)
    if (e->seqs[i].live && e->seqs[i].id == id) return &e->seqs[i];
  return NULL;
}

static void seq_free(poot__serve_engine_batch *e, bseq *s) {
  poot_tokenizer_decoder_destroy(s->dec);
  poot_stop_matcher_destroy(s->stops);
  poot_free(s->gen.ids);
  poot_free(s->probs);
  poot_strbuf_deinit(&s->piece);
  memset(s, 0, sizeof *s);
  e->n_live--;
}

static void emit_text(bseq *s, const char *text, size_t len) {
  poot__serve_job *job = s->bj->job;
  if (s->stops && !s->stopped_string) {
    poot_stop_output so;
    poot_status st = poot_stop_matcher_feed(s->stops, text, len, &so);
    if (st) {
      if (!s->bj->status) s->bj->status = st;
      else poot_status_free(st);
      return;
    }
    if (so.len) job->sink.on_text(job->sink_ctx, s->index, so.text, so.len);
    if (so.stopped) s->stopped_string = true;
    return;
  }
  if (!s->stopped_string && len) job->sink.on_text(job->sink_ctx, s->index, text, len);
}

static bool is_stop_id(const poot__serve_engine_batch *e, const poot_sampling_params *sp,
                       poot_token id) {
  for (uint32_t i = 0; i < sp->n_stop_ids; i++)
    if (sp->stop_ids[i] == id) return true;
  return !sp->ignore_eos && poot_model_is_stop(poot_runtime_model(e->rt), id);
}

/* Keeps an id's logprobs (the runner's, valid during its callback). */
static bool keep_probs(bseq *s, const poot_sampling_result *pr) {
  if (s->n_probs == s->cap_probs) {
    size_t n = s->cap_probs ? 2 * s->cap_probs : 16;
    poot_sampling_result *p = poot_realloc(s->probs, n * sizeof *p);
    if (!p) return false;
    s->probs = p;
    s->cap_probs = n;
  }
  s->probs[s->n_probs++] = *pr;
  return true;
}

/* The runner's token callback: records, streams, says whether it stops. */
static bool on_token(void *ctx, uint64_t caller_id, int32_t token, bool nonfinite) {
  (void)nonfinite;
  poot__serve_engine_batch *e = ctx;
  bseq *s = seq_of(e, caller_id);
  if (!s) return true;
  poot__serve_job *job = s->bj->job;
  const poot_sampling_result *pr = poot_batch_logprobs(e->b, -1);
  if (!poot__serve_job_token(e->metrics, job, &s->gen, token) || (pr && !keep_probs(s, pr))) {
    if (!s->bj->status)
      s->bj->status = poot_status_make(POOT_OUT_OF_MEMORY, "serve: the generated ids");
    return true;
  }
  /* Test only: a fault before the step after the inject_step-th id. */
  if (e->o.inject_fault && ++s->attempt == (size_t)e->o.inject_step &&
      e->injected < e->o.inject_count)
    e->inject_pending = true;
  job->sink.on_token(job->sink_ctx, s->index, token, pr);
  /* a stop id is generated and has no text (as the driver does) */
  if (is_stop_id(e, &job->sampling, token)) return true;
  poot_strbuf_clear(&s->piece);
  poot_status st = poot_tokenizer_decoder_push(s->dec, token, &s->piece);
  if (st) {
    if (!s->bj->status) s->bj->status = st;
    else poot_status_free(st);
    return true;
  }
  emit_text(s, s->piece.data ? s->piece.data : "", s->piece.len);
  return s->stopped_string || s->bj->status != NULL;
}

static void job_end(poot__serve_engine_batch *e, bjob *bj) {
  poot__serve_job_end(e->metrics, bj->job, bj->status);
  for (size_t i = 0; i < e->n_jobs; i++)
    if (e->jobs[i] == bj) {
      e->jobs[i] = e->jobs[--e->n_jobs];
      break;
    }
  poot_free(bj);
}

/* A choice taken finished: the held text, its end, and the job's when last. */
static void seq_finish(poot__serve_engine_batch *e, bseq *s, poot_scheduler_finish finish) {
  bjob *bj = s->bj;
  poot__serve_job *job = bj->job;
  if (!bj->status && !bj->cancelled) {
    if (!s->stopped_string) {
      poot_strbuf_clear(&s->piece);
      poot_status st = poot_tokenizer_decoder_flush(s->dec, &s->piece);
      if (!st && s->piece.len) emit_text(s, s->piece.data, s->piece.len);
      if (st) bj->status = st;
      if (s->stops && !s->stopped_string) {
        poot_stop_output so;
        poot_stop_matcher_finish(s->stops, &so);
        if (so.len) job->sink.on_text(job->sink_ctx, s->index, so.text, so.len);
      }
    }
    bool length = finish == POOT_SCHEDULER_FINISH_LENGTH || finish == POOT_SCHEDULER_FINISH_CAPACITY;
    poot__serve_choice_end end = {.index = s->index,
                                  .finish_reason = length ? "length" : "stop",
                                  .n_generated = s->gen.n,
                                  .probs = s->n_probs && s->n_probs == s->gen.n ? s->probs : NULL,
                                  .ids = s->gen.ids};
    if (!bj->status) job->sink.on_choice_end(job->sink_ctx, &end);
  }
  seq_free(e, s);
  if (--bj->n_left == 0) job_end(e, bj);
}

/* Cancels a job's requests (its client went away, or it failed). */
static void job_cancel(poot__serve_engine_batch *e, bjob *bj, poot_status why) {
  if (!bj->status) bj->status = why;
  else poot_status_free(why);
  bj->cancelled = true;
  for (size_t i = 0; i < e->n_seqs; i++)
    if (e->seqs[i].live && e->seqs[i].bj == bj) poot_status_free(poot_batch_cancel(e->b, e->seqs[i].id));
}

/* Submits one choice; a choice with no room ends at once ("length"). */
static poot_status admit_choice_in(poot__serve_engine_batch *e, bjob *bj, const poot_token *prompt,
                                size_t n, uint32_t index) {
  poot__serve_job *job = bj->job;
  bseq *s = NULL;
  for (size_t i = 0; i < e->n_seqs && !s; i++)
    if (!e->seqs[i].live) s = &e->seqs[i];
  if (!s) return poot_status_make(POOT_INTERNAL, "serve: no free sequence slot");
  memset(s, 0, sizeof *s);
  s->live = true;
  e->n_live++;
  s->id = e->next_id++;
  s->bj = bj;
  s->index = index;
  bj->n_left++;
  poot_strbuf_init(&s->piece);
  int64_t room = e->info.max_seq_len - (int64_t)n;
  int64_t want = job->max_tokens >= 0 && job->max_tokens < room ? job->max_tokens : room;
  if (n == 0 || room < 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the prompt has %zu tokens; a sequence holds %lld here", n,
                            (long long)e->info.max_seq_len);
  poot_tokenizer_decode_options dopt = poot_tokenizer_decode_options_default();
  dopt.vocab_rows = poot_model_get_config(poot_runtime_model(e->rt))->vocab_size;
  POOT_TRY(poot_tokenizer_decoder_create(e->tok, &dopt, &s->dec));
  POOT_TRY(poot_tokenizer_decoder_push(s->dec, prompt[n - 1], &s->piece)); /* the context */
  if (job->sampling.n_stops) POOT_TRY(poot_stop_matcher_create(&job->sampling, &s->stops));
  if (want <= 0) {
    seq_finish(e, s, POOT_SCHEDULER_FINISH_LENGTH);
    return NULL;
  }
  poot_sampling_params sp; /* as the single engine draws */
  POOT_TRY(poot__serve_choice_sampling(job, index, &sp));
  poot_batch_request rq = {
      .prompt = prompt,
      .n_prompt = (int64_t)n,
      .max_new_tokens = want,
      .caller_id = s->id,
      .sampling = &sp,         /* greedy without a bias, penalties or logprobs: kind 0 */
      .grammar = job->grammar, /* response_format, a forced tool call */
      .inputs = job->inputs,   /* an image's rows (job->prepare) */
      .n_inputs = job->n_inputs};
  POOT_TRY(poot_batch_submit(e->b, &rq));
  s->submitted = true;
  return NULL;
}

/* admit_choice_in; a choice that failed before the runner held it is
 * dropped here (the runner will never report it). */
static poot_status admit_choice(poot__serve_engine_batch *e, bjob *bj, const poot_token *prompt,
                                size_t n, uint32_t index) {
  uint64_t id = e->next_id;
  poot_status st = admit_choice_in(e, bj, prompt, n, index);
  bseq *s = st ? seq_of(e, id) : NULL;
  if (s && !s->submitted) {
    seq_free(e, s);
    bj->n_left--;
  }
  return st;
}

/* Starts a job: every choice of every prompt becomes a runner request. */
static void admit(poot__serve_engine_batch *e, poot__serve_job *job) {
  bjob *bj = poot_calloc(1, sizeof *bj);
  if (bj && e->n_jobs == e->cap_jobs) {
    size_t n = e->cap_jobs ? 2 * e->cap_jobs : 16;
    bjob **j = poot_realloc(e->jobs, n * sizeof *j);
    if (j) e->jobs = j, e->cap_jobs = n;
  }
  if (!bj || e->n_jobs == e->cap_jobs) {
    poot_free(bj);
    job->sink.on_job_end(job->sink_ctx, poot_status_make(POOT_OUT_OF_MEMORY, "serve: the job"));
    return;
  }
  bj->job = job;
  e->jobs[e->n_jobs++] = bj;
  bj->n_left = 1; /* held while admitting */
  /* the vision tower's rows of the job's images (bound as the prompt's
   * "embeds"), on this thread over the runtime's device, once for all its
   * choices; each runner request keeps a copy until it ends */
  poot_status st = job->prepare ? job->prepare(job) : NULL;
  for (size_t p = 0; p < job->n_prompts && !st; p++) {
    job->prompt_tokens += job->prompt_lens[p];
    for (uint32_t c = 0; c < job->n && !st; c++)
      st = admit_choice(e, bj, job->prompts[p], job->prompt_lens[p], (uint32_t)(p * job->n + c));
  }
  if (st) job_cancel(e, bj, st);
  if (--bj->n_left == 0) job_end(e, bj);
}

/* A failed step that is not recovered: every job in flight fails with it. */
static void fail_all(poot__serve_engine_batch *e, poot_status st) {
  poot_log(POOT_LOG_WARN, "serve: a batched step failed (%s); the %zu requests in flight fail",
           poot_status_message(st), e->n_jobs);
  poot__serve_metrics_recovery(e->metrics, false, true);
  for (size_t i = e->n_jobs; i-- > 0;)
    job_cancel(e, e->jobs[i], poot_status_make(poot_status_code_of(st), "%s", poot_status_message(st)));
  poot_status_free(st);
}

/* Test only: the injected fault, before the step it faults. */
static void inject(poot__serve_engine_batch *e) {
  e->inject_pending = false;
  e->injected++;
  if (strcmp(e->o.inject_fault, "device_lost") == 0)
    poot_vulkan_device_inject(poot_runtime_device(e->rt), POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST);
  else
    poot_batch_arm_kernel_fault(e->b);
}

/* Makes the runner usable after the fault `code`: a reset of its executor,
 * or (a device fault there too, or a lost device) a new device context and
 * a new executor; its running sequences are requeued either way. */
static poot_status recover(poot__serve_engine_batch *e, poot_status_code code) {
  bool rebuild = !(code == POOT_KERNEL_FAULT || code == POOT_NEEDS_RESET);
  poot_status st = NULL;
  if (!rebuild) {
    st = poot_batch_recover(e->b, NULL);
    if (st && poot__serve_is_device_fault(poot_status_code_of(st))) {
      poot_status_free(st);
      st = NULL;
      rebuild = true;
    }
  }
  if (!st && rebuild) {
    /* the runner lets go first: its executor dies with the device */
    poot_batch_release_executor(e->b);
    poot_executor_destroy(e->ex);
    e->ex = NULL;
    st = poot_runtime_reopen_device(e->rt);
    if (!st) st = poot_engine_create(poot_runtime_device(e->rt), &e->ex);
    /* its entries are compiled and captured again on first use */
    if (!st) st = poot_batch_recover(e->b, e->ex);
  }
  poot__serve_recovered(e->metrics, code, rebuild, st);
  return st;
}

/* A step failed with st (consumed): a device fault is recovered and charged
 * to the sequences that ran in it; a request with one at two faults fails
 * alone. Anything else, or a recovery that fails, fails every job. */
static void step_failed(poot__serve_engine_batch *e, poot_status st) {
  const poot_status_code code = poot_status_code_of(st);
  if (!poot__serve_is_device_fault(code)) {
    fail_all(e, st);
    return;
  }
  for (size_t i = 0; i < e->n_seqs; i++) {
    bseq *s = &e->seqs[i];
    if (!s->live || !s->submitted) continue;
    poot_scheduler_request_info ri;
    poot_status gst = poot_scheduler_request_get(poot_batch_scheduler(e->b), s->id, &ri);
    if (!gst && ri.state == POOT_SCHEDULER_RUNNING) s->faults++;
    poot_status_free(gst);
    s->attempt = 0;
  }
  poot_status rst = recover(e, code);
  if (rst) {
    poot_status_free(st);
    fail_all(e, poot_status_annotate(rst, "serve: recovering from a device fault"));
    return;
  }
  for (size_t i = 0; i < e->n_seqs; i++) {
    bseq *s = &e->seqs[i];
    if (!s->live || s->faults < 2 || s->bj->cancelled) continue;
    poot__serve_metrics_recovery(e->metrics, false, true);
    job_cancel(e, s->bj,
               poot_status_make(code, "the device faulted twice in this request: %s",
                                poot_status_message(st)));
  }
  poot_status_free(st);
}

static void take_finished(poot__serve_engine_batch *e) {
  poot_scheduler_request_info info;
  while (poot_batch_take_finished(e->b, &info)) {
    bseq *s = seq_of(e, info.caller_id);
    if (s) seq_finish(e, s, info.finish);
  }
}


static void *engine_main(void *arg) {
  poot__serve_engine_batch *e = arg;
  pthread_mutex_lock(&e->mu);
  for (;;) {
    while (!e->queue.len && !e->n_jobs && !e->stopping) pthread_cond_wait(&e->cv, &e->mu);
    if (e->stopping) break;
    poot__serve_job *admitted[64];
    size_t n_admitted = 0, taken = e->n_live;
    /* a job starts when all its choices fit in the free sequence slots */
    for (poot__serve_job *job; n_admitted < 64 && (job = poot__serve_queue_peek(&e->queue)) &&
                               taken + job->n_prompts * job->n <= e->n_seqs;) {
      admitted[n_admitted++] = poot__serve_queue_pop(&e->queue);
      taken += job->n_prompts * job->n;
    }
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < n_admitted; i++) admit(e, admitted[i]);
    for (size_t i = 0; i < e->n_jobs; i++)
      if (!e->jobs[i]->cancelled && atomic_load(&e->jobs[i]->job->cancelled))
        job_cancel(e, e->jobs[i], poot_status_make(POOT_CANCELLED, "serve: the client went away"));
    if (poot_batch_busy(e->b)) {
      if (e->inject_pending) inject(e);
      poot_status st = poot_batch_step(e->b, on_token, e, NULL);
      if (st) step_failed(e, st);
    }
    take_finished(e);
    atomic_store(&e->metrics->running, e->n_live);
    poot_kv_pool_stats ps;
    poot_kv_pool_get_stats(poot_batch_pool(e->b), &ps);
    atomic_store(&e->metrics->kv_blocks_used, (uint64_t)ps.blocks_in_use);
    atomic_store(&e->metrics->kv_blocks_free, (uint64_t)ps.blocks_free);
    poot_scheduler_stats ss;
    poot_scheduler_get_stats(poot_batch_scheduler(e->b), &ss);
    atomic_store(&e->metrics->prefix_tokens_reused, (uint64_t)ss.reused_tokens);
    pthread_mutex_lock(&e->mu);
  }
  pthread_mutex_unlock(&e->mu);
  /* stopping: the jobs in flight are cancelled, the queued ones end */
  for (size_t i = e->n_jobs; i-- > 0;)
    job_cancel(e, e->jobs[i], poot_status_make(POOT_CANCELLED, "serve: the server is stopping"));
  take_finished(e);
  pthread_mutex_lock(&e->mu);
  poot__serve_queue_drain(&e->queue);
  atomic_store(&e->metrics->running, 0);
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

poot_status poot__serve_engine_batch_create(poot_runtime *rt, poot__serve_metrics *metrics,
                                            const poot__serve_engine_options *options,
                                            poot__serve_engine_batch **out_engine) {
  *out_engine = NULL;
  poot_model *model = poot_runtime_model(rt);
  poot_device *dev = poot_runtime_device(rt);
  if (!model || !dev || !poot_model_get_tokenizer(model))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "serve: the batched engine needs a model with a tokenizer and a device");
  poot__serve_engine_batch *e = poot_calloc(1, sizeof *e);
  if (!e) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the engine");
  e->rt = rt;
  e->metrics = metrics;
  e->o = *options;
  e->tok = poot_model_get_tokenizer(model);
  e->n_seqs = e->o.max_seqs;
  e->seqs = poot_calloc(e->n_seqs, sizeof *e->seqs);
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  poot_status st = poot__serve_queue_init(&e->queue, e->o.max_queue, metrics);
  if (!st && !e->seqs) st = poot_status_make(POOT_OUT_OF_MEMORY, "serve: the engine's sequences");
  if (!st) st = poot_engine_create(dev, &e->ex);
  if (!st) {
    poot_batch_options bo = poot_batch_options_default();
    bo.max_batch = (int32_t)e->o.max_seqs;
    bo.max_seq_len = e->o.max_seq_len;
    /* the single engine's K/V type (--kv-type): both engines compute alike */
    const poot_driver *d = poot_runtime_driver(rt);
    if (d) bo.kv_dtype = poot_driver_kv_dtype(d);
    st = poot_batch_create(e->ex, model, &bo, &e->b);
  }
  if (!st) st = poot_batch_prepare(e->b);
  if (!st) {
    poot_batch_get_info(e->b, &e->info);
    atomic_store(&e->metrics->kv_blocks_free, (uint64_t)e->info.num_blocks);
    if (pthread_create(&e->thread, NULL, engine_main, e) != 0)
      st = poot_status_make(POOT_INTERNAL, "serve: cannot start the engine thread");
    else
      e->started = true;
  }
  if (st) {
    poot__serve_engine_batch_destroy(e);
    return poot_status_annotate(st, "serve: the batched engine (--max-seqs %u)", options->max_seqs);
  }
  *out_engine = e;
  return NULL;
}

poot_status poot__serve_engine_batch_submit(poot__serve_engine_batch *e, poot__serve_job *job) {
  if (job->n_prompts * job->n > e->n_seqs)
    return poot_status_make(POOT_CAPACITY,
                            "the request has %zu choices; this server runs %zu sequences at once",
                            job->n_prompts * job->n, e->n_seqs);
  pthread_mutex_lock(&e->mu);
  poot_status st = poot__serve_queue_push(&e->queue, job, e->stopping);
  if (!st) pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  return st;
}

int64_t poot__serve_engine_batch_capacity(const poot__serve_engine_batch *e) {
  return e->info.max_seq_len;
}

void poot__serve_engine_batch_stop(poot__serve_engine_batch *e) {
  if (!e || !e->started) return;
  pthread_mutex_lock(&e->mu);
  e->stopping = true;
  pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  pthread_join(e->thread, NULL);
  e->started = false;
}

void poot__serve_engine_batch_destroy(poot__serve_engine_batch *e) {
  if (!e) return;
  poot__serve_engine_batch_stop(e);
  poot_batch_destroy(e->b);
  poot_executor_destroy(e->ex);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  poot__serve_queue_deinit(&e->queue);
  poot_free(e->seqs);
  poot_free(e->jobs);
  poot_free(e);
}
