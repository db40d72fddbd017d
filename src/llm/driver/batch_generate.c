/* batch_generate.c — many prompts to completion through the batched runner
 * (poot_batch_generate, poot/llm/batch.h): tests and `poot bench --batch`. */
#include <string.h>

#include "poot/llm/batch.h"

#include "driver_impl.h"

typedef struct gen_ctx {
  const poot_batch *b;
  poot_batch_output *outs;
  size_t n;
  size_t *room; /* ids allocated per output */
  const poot_model *model;
  bool stop_at_eos;
  poot_status st; /* the first allocation failure */
} gen_ctx;

static bool on_token(void *ctx, uint64_t caller_id, int32_t token, bool nonfinite) {
  gen_ctx *g = ctx;
  if (caller_id >= g->n || g->st) return false;
  poot_batch_output *o = &g->outs[caller_id];
  const poot_sampling_result *pr = poot_batch_logprobs(g->b, -1);
  if ((size_t)o->n == g->room[caller_id]) {
    size_t room = g->room[caller_id] ? 2 * g->room[caller_id] : 16;
    int32_t *ids = poot_realloc(o->ids, room * sizeof *ids);
    if (ids) o->ids = ids;
    poot_sampling_result *probs = ids && pr ? poot_realloc(o->probs, room * sizeof *probs) : NULL;
    if (probs) o->probs = probs;
    if (!ids || (pr && !probs)) {
      g->st = OOM("generated ids");
      return true;
    }
    g->room[caller_id] = room;
  }
  if (pr && o->probs) o->probs[o->n] = *pr;
  o->ids[o->n++] = token;
  if (nonfinite) o->nonfinite++;
  return g->stop_at_eos && poot_model_is_stop(g->model, token);
}

static void take_all(poot_batch *b, gen_ctx *g) {
  poot_scheduler_request_info info;
  while (poot_batch_take_finished(b, &info)) {
    if (info.caller_id >= g->n) continue;
    poot_batch_output *o = &g->outs[info.caller_id];
    o->finish = info.finish;
    o->reused_tokens = info.reused_tokens;
    o->prefill_tokens = info.prefill_tokens;
    o->preemptions = info.preemptions;
  }
}

void poot_batch_outputs_free(poot_batch_output *outs, size_t n) {
  if (!outs) return;
  for (size_t i = 0; i < n; i++) {
    poot_free(outs[i].ids);
    poot_free(outs[i].probs);
    outs[i].ids = NULL;
    outs[i].probs = NULL;
    outs[i].n = 0;
  }
}

poot_status poot_batch_generate(poot_batch *b, const poot_batch_prompt *prompts, size_t n,
                                const poot_batch_generate_options *options,
                                poot_batch_output *outs) {
  if (n > 0 && (!prompts || !outs)) return BAD("batch: generate needs prompts and outputs");
  if (poot_batch_busy(b)) return BAD("batch: generate needs a runner with no live request");
  memset(outs, 0, n * sizeof *outs);
  for (size_t i = 0; i < n; i++)
    if (!prompts[i].ids || prompts[i].n < 1 || prompts[i].max_new_tokens < 1)
      return BAD("batch: prompt %zu needs at least one id and max_new_tokens >= 1", i);
  size_t *room = poot_calloc(n + 1, sizeof *room);
  if (!room) return OOM("generate");
  gen_ctx g = {.b = b,
               .outs = outs,
               .n = n,
               .room = room,
               .model = poot__batch_model(b),
               .stop_at_eos = options && options->stop_at_eos};
  poot_scheduler *sched = poot_batch_scheduler(b);
  poot_status st = NULL;
  size_t next = 0; /* the next prompt to submit */
  poot_batch_info bi;
  poot_batch_get_info(b, &bi);
  for (;;) {
    /* Submit while the scheduler holds fewer requests than it may; a prompt
     * that can never fit finishes at once with CAPACITY. */
    while (next < n) {
      poot_scheduler_stats s;
      poot_scheduler_get_stats(sched, &s);
      const int32_t held = s.queued + s.running + s.finished_waiting;
      if (held >= bi.max_requests) break; /* submit more after some finish */
      poot_batch_request r = {.prompt = prompts[next].ids,
                              .n_prompt = prompts[next].n,
                              .max_new_tokens = prompts[next].max_new_tokens,
                              .caller_id = next,
                              .sampling = prompts[next].sampling,
                              .grammar = prompts[next].grammar,
                              .inputs = prompts[next].inputs,
                              .n_inputs = prompts[next].n_inputs};
      st = poot_batch_submit(b, &r);
      if (st && poot_status_code_of(st) == POOT_CAPACITY) {
        poot_status_free(st);
        st = NULL;
        outs[next].finish = POOT_SCHEDULER_FINISH_CAPACITY;
      } else if (st) {
        goto fail;
      }
      next++;
    }
    if (!poot_batch_busy(b) && next == n) break;
    poot_batch_step_info info;
    if ((st = poot_batch_step(b, on_token, &g, &info))) goto fail;
    if (g.st) {
      st = g.st;
      g.st = NULL;
      goto fail;
    }
    take_all(b, &g);
    if (info.idle && next == n && poot_batch_busy(b)) {
      st = poot_status_make(POOT_INTERNAL, "batch: requests are live but nothing is runnable");
      goto fail;
    }
  }
  take_all(b, &g);
  poot_free(room);
  return NULL;
fail:
  for (size_t i = 0; i < next; i++) poot_status_free(poot_batch_cancel(b, i));
  take_all(b, &g);
  poot_batch_outputs_free(outs, n);
  poot_free(room);
  return st;
}
