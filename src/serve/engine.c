/* The engine (serve_impl.h "The engine"): one thread owns the runtime's
 * device, engine and driver and runs the queued jobs one sequence at a time
 * (docs/serve.md "The engine"). A device fault is recovered once per
 * choice: KERNEL_FAULT / NEEDS_RESET reset the driver; POISONED,
 * DEVICE_LOST and TIMEOUT make a new device context. Then the sequence is
 * prefilled again from the token history kept here (prompt + the ids
 * generated so far) and generation goes on; a choice with a grammar is run
 * again from its prompt with the same seed instead (the driver's grammar
 * state starts at the prompt), and the text already sent is not sent twice.
 * A second fault in one choice fails its request alone. */
#include <stdio.h>
#include <string.h>

#include "poot/devices.h"
#include "serve_impl.h"

struct poot__serve_engine {
  poot_runtime *rt;
  poot__serve_metrics *metrics;
  poot__serve_engine_options o;
  int64_t cap;
  pthread_t thread;
  bool started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  poot__serve_queue queue;
  bool stopping;
  poot__serve_job *running;
  poot__serve_engine_batch *batch; /* --max-seqs > 1: every call forwards to it */
  int64_t injected; /* faults injected so far (test only) */
};

/* One choice being generated: what the token callback needs. */
typedef struct choice_run {
  poot__serve_engine *e;
  poot__serve_job *job;
  uint32_t index;
  poot__serve_ids gen; /* ids generated and reported so far */
  /* A replay (a grammar choice run again after a fault): the first
   * skip_ids ids and skip_bytes bytes were sent before and are dropped. */
  size_t skip_ids, skip_bytes;
  size_t sent_bytes;      /* bytes of text sent to the sink */
  size_t attempt_tokens;  /* ids reported in this attempt */
  bool inject_kernel;     /* the callback stopped to inject a kernel fault */
  /* The attempt's result: the driver fills its ids and logprobs as it goes,
   * so the callback reads the step's logprobs there (probs[n_ids - 1]). */
  const poot_driver_generate_result *res;
  bool oom;
} choice_run;

/* Test only: fault the step after the inject_step-th id of an attempt. */
static bool maybe_inject(choice_run *cr) {
  poot__serve_engine *e = cr->e;
  if (!e->o.inject_fault || cr->attempt_tokens != (size_t)e->o.inject_step ||
      e->injected >= e->o.inject_count)
    return false;
  e->injected++;
  if (strcmp(e->o.inject_fault, "device_lost") == 0) {
    poot_vulkan_device_inject(poot_runtime_device(e->rt), POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST);
    return false;
  }
  cr->inject_kernel = true; /* stop here; run_choice makes the device trap */
  return true;
}

static bool on_token(void *ctx, poot_token id, const char *text, size_t len) {
  choice_run *cr = ctx;
  poot__serve_job *job = cr->job;
  if (atomic_load(&job->cancelled)) return false;
  if (id >= 0) {
    cr->attempt_tokens++;
    if (cr->skip_ids) {
      cr->skip_ids--;
    } else {
      if (!poot__serve_job_token(cr->e->metrics, job, &cr->gen, id)) {
        cr->oom = true;
        return false;
      }
      const poot_driver_generate_result *r = cr->res;
      const poot_sampling_result *probs =
          r && r->probs && r->n_ids && r->ids[r->n_ids - 1] == id ? &r->probs[r->n_ids - 1] : NULL;
      job->sink.on_token(job->sink_ctx, cr->index, id, probs);
    }
  }
  if (cr->skip_bytes) {
    size_t k = len < cr->skip_bytes ? len : cr->skip_bytes;
    text += k;
    len -= k;
    cr->skip_bytes -= k;
  }
  if (len) {
    job->sink.on_text(job->sink_ctx, cr->index, text, len);
    cr->sent_bytes += len;
  }
  if (id >= 0 && maybe_inject(cr)) return false;
  return true;
}

/* After a fault: reset the driver, or make a new device context. */
static poot_status recover(poot__serve_engine *e, poot_status_code code) {
  bool rebuild = !(code == POOT_KERNEL_FAULT || code == POOT_NEEDS_RESET);
  poot_status st = NULL;
  if (!rebuild) {
    st = poot_driver_reset(poot_runtime_driver(e->rt));
    if (st && poot__serve_is_device_fault(poot_status_code_of(st))) {
      poot_status_free(st);
      st = NULL;
      rebuild = true;
    }
  }
  if (!st && rebuild) st = poot_runtime_reopen_device(e->rt);
  poot__serve_recovered(e->metrics, code, rebuild, st);
  return st;
}

static const char *finish_reason(const poot_driver_generate_result *r) {
  return r->reason == POOT_DRIVER_STOP_LENGTH || r->reason == POOT_DRIVER_STOP_CAPACITY
             ? "length"
             : "stop";
}

/* Generates choice `index` from prompt[0..n), recovering one device fault. */
static poot_status run_choice(poot__serve_engine *e, poot__serve_job *job, const poot_token *prompt,
                              size_t n, uint32_t index, bool reuse) {
  choice_run cr = {.e = e, .job = job, .index = index};
  poot_sampling_params sp;
  POOT_TRY(poot__serve_choice_sampling(job, index, &sp));
  int64_t room = e->cap - (int64_t)n;
  int64_t want = job->max_tokens >= 0 && job->max_tokens < room ? job->max_tokens : room;
  poot_token *history = NULL;
  poot_driver_generate_result res;
  memset(&res, 0, sizeof res);
  poot_sampling_result *probs = NULL;
  size_t n_probs = 0;
  int faults = 0;
  poot_status st = NULL;
  for (;;) {
    /* the prompt, then the ids already generated (none on the first try,
     * and none when a grammar choice runs again from its prompt) */
    bool replay = job->grammar != NULL && cr.gen.n > 0;
    size_t cont = replay ? 0 : cr.gen.n;
    poot_token *h = poot_realloc(history, (n + cont) * sizeof *h);
    if (!h) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "serve: the token history");
      break;
    }
    history = h;
    memcpy(history, prompt, n * sizeof *prompt);
    if (cont) memcpy(history + n, cr.gen.ids, cont * sizeof *cr.gen.ids);
    cr.skip_ids = replay ? cr.gen.n : 0;
    cr.skip_bytes = replay ? cr.sent_bytes : 0;
    cr.attempt_tokens = 0;
    cr.inject_kernel = false;
    poot_driver_generate_options go = poot_driver_generate_options_default();
    go.max_new_tokens = want - (int64_t)cont;
    go.sampling = &sp;
    go.grammar = job->grammar;
    go.reuse_cache = reuse && faults == 0;
    go.ignore_stop = sp.ignore_eos;
    poot_driver_generate_result_deinit(&res);
    memset(&res, 0, sizeof res);
    if (go.max_new_tokens <= 0) {
      res.reason = POOT_DRIVER_STOP_LENGTH;
      break;
    }
    cr.res = &res;
    st = job->n_inputs ? poot_driver_generate_with_inputs(poot_runtime_driver(e->rt), history,
                                                          n + cont, job->inputs, job->n_inputs,
                                                          &go, on_token, &cr, &res)
                       : poot_driver_generate_ids(poot_runtime_driver(e->rt), history, n + cont,
                                                  &go, on_token, &cr, &res);
    if (cr.inject_kernel && poot_status_code_of(st) == POOT_CANCELLED &&
        !atomic_load(&job->cancelled)) {
      /* Test only: a token id past the vocabulary makes the device's gather
       * trap, the driver's documented kernel fault. */
      poot_status_free(st);
      poot_token bad = (poot_token)poot_model_get_config(poot_runtime_model(e->rt))->vocab_size;
      poot_token next;
      st = poot_driver_feed(poot_runtime_driver(e->rt), &bad, 1, &next, NULL);
      if (!st)
        st = poot_status_make(POOT_INTERNAL, "serve: the injected kernel fault did not fault");
    }
    if (cr.oom && !st) st = poot_status_make(POOT_OUT_OF_MEMORY, "serve: the generated ids");
    /* keep the logprobs of the ids this attempt added (a replay's are the
     * whole run's: taken once it succeeds, below) */
    if (res.probs && !replay && res.n_ids) {
      poot_sampling_result *p = poot_realloc(probs, (n_probs + res.n_ids) * sizeof *p);
      if (p) {
        probs = p;
        memcpy(probs + n_probs, res.probs, res.n_ids * sizeof *p);
        n_probs += res.n_ids;
      }
    }
    if (!st) break;
    poot_status_code code = poot_status_code_of(st);
    if (!poot__serve_is_device_fault(code)) break;
    faults++;
    if (faults >= 2) {
      poot__serve_metrics_recovery(e->metrics, false, true);
      st = poot_status_annotate(st, "the device faulted twice in this request");
      /* the request fails alone: the next one starts on a sound device */
      poot_status_free(recover(e, code));
      break;
    }
    poot_status_free(st);
    st = recover(e, code);
    if (st) break;
  }
  if (!st) {
    /* a replayed grammar choice: its logprobs are the whole run's */
    if (job->grammar && faults && res.probs && res.n_ids >= cr.gen.n) {
      poot_sampling_result *p = poot_realloc(probs, (cr.gen.n + 1) * sizeof *p);
      if (p) {
        probs = p;
        memcpy(probs, res.probs, cr.gen.n * sizeof *p);
        n_probs = cr.gen.n;
      }
    }
    poot__serve_choice_end end = {.index = index,
                                  .finish_reason = finish_reason(&res),
                                  .n_generated = cr.gen.n,
                                  .probs = n_probs >= cr.gen.n ? probs : NULL,
                                  .ids = cr.gen.ids};
    job->sink.on_choice_end(job->sink_ctx, &end);
  }
  poot_driver_generate_result_deinit(&res);
  poot_free(history);
  poot_free(probs);
  poot_free(cr.gen.ids);
  return st;
}

static void run_job(poot__serve_engine *e, poot__serve_job *job) {
  poot_status st = job->prepare ? job->prepare(job) : NULL;
  for (size_t p = 0; p < job->n_prompts && !st; p++) {
    job->prompt_tokens += job->prompt_lens[p];
    for (uint32_t c = 0; c < job->n && !st; c++) {
      if (atomic_load(&job->cancelled)) {
        st = poot_status_make(POOT_CANCELLED, "serve: the client went away");
        break;
      }
      /* the n choices of one prompt share its cached prefix */
      st = run_choice(e, job, job->prompts[p], job->prompt_lens[p], (uint32_t)(p * job->n + c),
                      c > 0);
    }
  }
  poot__serve_job_end(e->metrics, job, st);
}

static void *engine_main(void *arg) {
  poot__serve_engine *e = arg;
  pthread_mutex_lock(&e->mu);
  for (;;) {
    while (!e->queue.len && !e->stopping) pthread_cond_wait(&e->cv, &e->mu);
    if (e->stopping) break;
    poot__serve_job *job = poot__serve_queue_pop(&e->queue);
    e->running = job;
    atomic_store(&e->metrics->running, 1);
    pthread_mutex_unlock(&e->mu);
    run_job(e, job);
    pthread_mutex_lock(&e->mu);
    e->running = NULL;
    atomic_store(&e->metrics->running, 0);
  }
  /* stopping: the queued jobs end without running */
  poot__serve_queue_drain(&e->queue);
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

poot_status poot__serve_engine_create(poot_runtime *runtime, poot__serve_metrics *metrics,
                                      const poot__serve_engine_options *options,
                                      poot__serve_engine **out_engine) {
  *out_engine = NULL;
  if (options->max_seqs > 1) {
    poot__serve_engine *e = poot_calloc(1, sizeof *e);
    if (!e) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the engine");
    poot_status st = poot__serve_engine_batch_create(runtime, metrics, options, &e->batch);
    if (st) {
      poot_free(e);
      return st;
    }
    *out_engine = e;
    return NULL;
  }
  poot_driver *drv = poot_runtime_driver(runtime);
  if (!drv) return poot_status_make(POOT_INVALID_ARGUMENT, "serve: the runtime has no driver");
  poot__serve_engine *e = poot_calloc(1, sizeof *e);
  if (!e) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the engine");
  e->rt = runtime;
  e->metrics = metrics;
  e->o = *options;
  e->cap = poot_driver_cap(drv);
  poot_status st = poot__serve_queue_init(&e->queue, e->o.max_queue, metrics);
  if (st) {
    poot_free(e);
    return st;
  }
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  if (pthread_create(&e->thread, NULL, engine_main, e) != 0) {
    poot__serve_engine_destroy(e);
    return poot_status_make(POOT_INTERNAL, "serve: cannot start the engine thread");
  }
  e->started = true;
  *out_engine = e;
  return NULL;
}

poot_status poot__serve_engine_submit(poot__serve_engine *e, poot__serve_job *job) {
  if (e->batch) return poot__serve_engine_batch_submit(e->batch, job);
  poot__serve_job **gone = NULL;
  size_t n_gone = 0;
  pthread_mutex_lock(&e->mu);
  /* a full queue first drops the jobs whose clients went away */
  if (e->queue.len == e->queue.cap && (gone = poot_malloc(e->queue.len * sizeof *gone)))
    n_gone = poot__serve_queue_purge_cancelled(&e->queue, gone);
  poot_status st = poot__serve_queue_push(&e->queue, job, e->stopping);
  if (!st) pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  for (size_t i = 0; i < n_gone; i++)
    gone[i]->sink.on_job_end(gone[i]->sink_ctx,
                             poot_status_make(POOT_CANCELLED, "serve: the client went away"));
  poot_free(gone);
  return st;
}

int64_t poot__serve_engine_capacity(const poot__serve_engine *e) {
  return e->batch ? poot__serve_engine_batch_capacity(e->batch) : e->cap;
}

void poot__serve_engine_stop(poot__serve_engine *e) {
  if (e && e->batch) poot__serve_engine_batch_stop(e->batch);
  if (!e || !e->started) return;
  pthread_mutex_lock(&e->mu);
  e->stopping = true;
  if (e->running) atomic_store(&e->running->cancelled, true);
  pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  pthread_join(e->thread, NULL);
  e->started = false;
}

void poot__serve_engine_destroy(poot__serve_engine *e) {
  if (!e) return;
  if (e->batch) {
    poot__serve_engine_batch_destroy(e->batch);
    poot_free(e);
    return;
  }
  poot__serve_engine_stop(e);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  poot__serve_queue_deinit(&e->queue);
  poot_free(e);
}
