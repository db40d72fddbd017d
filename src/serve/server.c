/* The server (poot/serve.h): routing, the API key, limits, and the glue
 * between a connection's thread and the engine (docs/serve.md). A request
 * becomes a `call`: the engine's job, plus what the connection's thread
 * reads back (the whole response, or server-sent events as they come). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "poot/llm/chat_template.h"
#include "poot/llm/model.h"
#include "poot/llm/batch.h"
#include "poot/llm/tokenizer.h"
#include "poot/llm/vision.h"
#include "serve_impl.h"

struct poot_server {
  poot_runtime *rt;
  const poot_chat_template *tpl;
  poot_server_options o;
  const char *model_name;
  poot__serve_limits limits;
  poot__serve_metrics metrics;
  poot__serve_engine *engine;
  poot__http_server *http;
  atomic_uint_fast64_t next_id;
  uint64_t created;
  /* the template's call format and reasoning markers (docs/toolcalls.md),
   * and the format a forced call is written in (the template's when the
   * tokenizer writes its marker as text, else LLAMA3's JSON shape) */
  poot_toolcall_params tc;
  poot_toolcall_format forced_format;
  /* an encoder model: /v1/embeddings and /v1/rerank run on the connection's
   * thread, one at a time (there is no engine) */
  bool encoder;
  pthread_mutex_t encode_mu;
  /* the vision tower (borrowed) and, made on the engine thread on first
   * use, its executor over the device it was made for */
  poot_vision *vision;
  poot_executor *vision_ex;
  poot_vision_runner *vision_runner;
  poot_device *vision_dev;
};

/* ------------------------------------------------------------------ a call */

typedef struct call {
  poot__serve_job job; /* first: the engine's view */
  poot_server *srv;
  poot__serve_kind kind;
  bool stream, include_usage, logprobs;
  int32_t top;
  char id[48];
  uint64_t created;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int refs;
  bool done;
  poot_status status; /* the job's end */
  size_t n_choices;
  poot_strbuf *texts;  /* per choice (non-streamed) */
  poot_strbuf *lps;    /* per choice: logprobs JSON or empty */
  const char **finish; /* per choice */
  bool *started;       /* per choice: the role chunk was sent (streamed) */
  /* streamed logprobs: per choice, the ids (and their logprobs) whose text
   * has not gone out yet; they ride on the next chunk */
  poot_vec *pend_ids, *pend_probs;
  poot_strbuf sse;     /* events not yet read */
  size_t sse_sent;
  uint64_t sse_last_ns; /* when the stream last sent bytes (keep-alive comments) */
  poot_grammar *grammar;
  /* chat with tools or a reasoning template: the reply goes through the
   * tool-call parser (tp); streamed, one parser per choice */
  bool parse;
  poot_toolcall_params tp;
  poot_toolcall_stream **tcs;
  poot_token **prompts;
  size_t *lens;
  int fd;
  /* images: their pixels (preprocessed on the connection's thread), their
   * first rows in the expanded prompt, and (on the engine thread) the
   * tower's rows bound as "embeds" */
  size_t n_images;
  float *pixels;
  size_t *first;
  float *rows;
  poot_driver_input_row *in_rows;
  poot_driver_input input;
} call;

static void call_free(call *c) {
  for (size_t i = 0; i < c->n_choices; i++) {
    if (c->texts) poot_strbuf_deinit(&c->texts[i]);
    if (c->lps) poot_strbuf_deinit(&c->lps[i]);
  }
  poot_free(c->texts);
  poot_free(c->lps);
  poot_free(c->finish);
  poot_free(c->started);
  for (size_t i = 0; c->tcs && i < c->n_choices; i++) poot_toolcall_stream_destroy(c->tcs[i]);
  poot_free(c->tcs);
  for (size_t i = 0; i < c->n_choices && c->pend_ids && c->pend_probs; i++) {
    poot_vec_deinit(&c->pend_ids[i]);
    poot_vec_deinit(&c->pend_probs[i]);
  }
  poot_free(c->pend_ids);
  poot_free(c->pend_probs);
  poot_strbuf_deinit(&c->sse);
  poot_grammar_destroy(c->grammar);
  for (size_t i = 0; i < c->job.n_prompts; i++) poot_free(c->prompts[i]);
  poot_free(c->prompts);
  poot_free(c->lens);
  poot_free(c->pixels);
  poot_free(c->first);
  poot_free(c->rows);
  poot_free(c->in_rows);
  poot_status_free(c->status);
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  poot_free(c);
}

static void call_release(call *c) {
  pthread_mutex_lock(&c->mu);
  bool last = --c->refs == 0;
  pthread_mutex_unlock(&c->mu);
  if (last) call_free(c);
}

static void chunk_head(call *c, poot_strbuf *sb) {
  poot_strbuf_printf(sb, "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%llu,\"model\":", c->id,
                     c->kind == POOT_SERVE_CHAT ? "chat.completion.chunk" : "text_completion",
                     (unsigned long long)c->created);
  poot_json_write_string(sb, c->srv->model_name, strlen(c->srv->model_name), false);
}

static void chunk_tail(call *c, poot_strbuf *sb) {
  if (c->include_usage) poot_strbuf_puts(sb, ",\"usage\":null");
  poot_strbuf_puts(sb, "}\n\n");
}

/* One streamed chunk of choice `index`: text, and the finish reason with the
 * logprobs at its end. */
/* The pending logprobs of choice `index` as JSON into lp (emptied). */
static void take_pending(call *c, uint32_t index, poot_strbuf *lp) {
  poot_vec *ids = &c->pend_ids[index], *probs = &c->pend_probs[index];
  if (!ids->len) return;
  poot__serve_write_logprobs(lp, poot_model_get_tokenizer(poot_runtime_model(c->srv->rt)), c->kind,
                             ids->data, probs->data, ids->len, c->top);
  poot_vec_clear(ids);
  poot_vec_clear(probs);
}

/* One streamed chunk of choice `index`: a delta (chat: `field` ("content" or
 * "reasoning_content") with text, or one tool call; completions: text), and
 * the finish reason with the logprobs at its end. */
static void chunk(call *c, uint32_t index, const char *field, const char *text, size_t len,
                  const poot_toolcall_delta *tool, const char *finish, const poot_strbuf *lp) {
  poot_strbuf *sb = &c->sse;
  chunk_head(c, sb);
  poot_strbuf_printf(sb, ",\"choices\":[{\"index\":%u,", index);
  if (c->kind == POOT_SERVE_CHAT) {
    poot_strbuf_puts(sb, "\"delta\":{");
    bool comma = false;
    if (!c->started[index]) {
      poot_strbuf_puts(sb, "\"role\":\"assistant\"");
      c->started[index] = true;
      comma = true;
    }
    if (text) {
      if (comma) poot_strbuf_putc(sb, ',');
      poot_strbuf_printf(sb, "\"%s\":", field);
      poot_json_write_string(sb, text, len, false);
    } else if (tool) {
      if (comma) poot_strbuf_putc(sb, ',');
      poot_strbuf_puts(sb, "\"tool_calls\":[");
      poot__serve_write_tool_call(sb, tool->call, (long)tool->call_index);
      poot_strbuf_putc(sb, ']');
    }
    poot_strbuf_puts(sb, "},");
  } else {
    poot_strbuf_puts(sb, "\"text\":");
    poot_json_write_string(sb, text ? text : "", text ? len : 0, false);
    poot_strbuf_putc(sb, ',');
  }
  poot_strbuf_puts(sb, "\"logprobs\":");
  if (lp && lp->len)
    poot_strbuf_append(sb, lp->data, lp->len);
  else
    poot_strbuf_puts(sb, "null");
  poot_strbuf_puts(sb, ",\"finish_reason\":");
  if (finish)
    poot_strbuf_printf(sb, "\"%s\"", finish);
  else
    poot_strbuf_puts(sb, "null");
  poot_strbuf_puts(sb, "}]");
  chunk_tail(c, sb);
}

/* The parser's deltas as chunks; the pending logprobs ride on the first. */
static void chunk_deltas(call *c, uint32_t index, const poot_toolcall_deltas *d) {
  for (size_t i = 0; i < d->count; i++) {
    const poot_toolcall_delta *x = &d->items[i];
    poot_strbuf lp;
    poot_strbuf_init(&lp);
    if (c->logprobs && i == 0) take_pending(c, index, &lp);
    if (x->kind == POOT_TOOLCALL_DELTA_CALL)
      chunk(c, index, NULL, NULL, 0, x, NULL, &lp);
    else
      chunk(c, index, x->kind == POOT_TOOLCALL_DELTA_REASONING ? "reasoning_content" : "content",
            x->text, x->len, NULL, NULL, &lp);
    poot_strbuf_deinit(&lp);
  }
}

/* Feeds a streamed choice's text to its parser (made on first use). A
 * parser that fails (a bound passed) is dropped: the rest of the reply goes
 * out as content. */
static void parse_text(call *c, uint32_t index, const char *text, size_t len, bool finish) {
  poot_status st = NULL;
  if (!c->tcs[index] && !finish) st = poot_toolcall_stream_create(&c->tp, &c->tcs[index]);
  poot_toolcall_deltas d = {0};
  if (!st && c->tcs[index])
    st = finish ? poot_toolcall_stream_finish(c->tcs[index], &d)
                : poot_toolcall_stream_feed(c->tcs[index], text, len, &d);
  if (st) {
    poot_log(POOT_LOG_WARN, "serve: the tool-call parser stopped: %s", poot_status_message(st));
    poot_status_free(st);
    poot_toolcall_stream_destroy(c->tcs[index]);
    c->tcs[index] = NULL;
    c->parse = false;
    if (len) {
      poot_toolcall_delta x = {.kind = POOT_TOOLCALL_DELTA_CONTENT, .text = text, .len = len};
      d = (poot_toolcall_deltas){.items = &x, .count = 1};
      chunk_deltas(c, index, &d);
    }
    return;
  }
  chunk_deltas(c, index, &d);
}

static void write_usage(call *c, poot_strbuf *sb) {
  poot_strbuf_printf(sb,
                     "\"usage\":{\"prompt_tokens\":%zu,\"completion_tokens\":%zu,"
                     "\"total_tokens\":%zu}",
                     c->job.prompt_tokens, c->job.generated_tokens,
                     c->job.prompt_tokens + c->job.generated_tokens);
}

static void on_token(void *ctx, uint32_t index, poot_token id, const poot_sampling_result *probs) {
  call *c = ctx;
  if (!c->stream || !c->logprobs || !probs) return;
  pthread_mutex_lock(&c->mu);
  poot_status st = poot_vec_push(&c->pend_ids[index], &id);
  if (!st) st = poot_vec_push(&c->pend_probs[index], probs);
  if (st) { /* out of memory: this token's logprobs are left out */
    poot_status_free(st);
    c->pend_ids[index].len = c->pend_probs[index].len;
  }
  pthread_mutex_unlock(&c->mu);
}

static void on_text(void *ctx, uint32_t index, const char *text, size_t len) {
  call *c = ctx;
  pthread_mutex_lock(&c->mu);
  if (c->stream && c->parse) {
    parse_text(c, index, text, len, false);
  } else if (c->stream) {
    poot_strbuf lp;
    poot_strbuf_init(&lp);
    if (c->logprobs) take_pending(c, index, &lp);
    chunk(c, index, "content", text, len, NULL, NULL, &lp);
    poot_strbuf_deinit(&lp);
  } else
    poot_strbuf_append(&c->texts[index], text, len);
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static void on_choice_end(void *ctx, const poot__serve_choice_end *end) {
  call *c = ctx;
  pthread_mutex_lock(&c->mu);
  c->finish[end->index] = end->finish_reason;
  if (c->stream && c->parse && c->tcs[end->index]) {
    parse_text(c, end->index, NULL, 0, true);
    poot_toolcall_result tr;
    if (c->tcs[end->index]) {
      poot_toolcall_stream_result(c->tcs[end->index], &tr);
      if (tr.call_count && strcmp(end->finish_reason, "stop") == 0)
        c->finish[end->index] = "tool_calls";
    }
  }
  if (c->logprobs && c->stream)
    take_pending(c, end->index, &c->lps[end->index]); /* what no chunk carried yet */
  else if (c->logprobs)
    poot__serve_write_logprobs(&c->lps[end->index],
                               poot_model_get_tokenizer(poot_runtime_model(c->srv->rt)), c->kind,
                               end->ids, end->probs, end->n_generated, c->top);
  if (c->stream)
    chunk(c, end->index, NULL, NULL, 0, NULL, c->finish[end->index], &c->lps[end->index]);
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static poot__serve_endpoint endpoint_of(const call *c) {
  return c->kind == POOT_SERVE_CHAT ? POOT_ENDPOINT_CHAT : POOT_ENDPOINT_COMPLETIONS;
}

/* The HTTP status and OpenAI error type of a failed job. */
static unsigned status_http(poot_status_code code, const char **type) {
  switch (code) {
    case POOT_INVALID_ARGUMENT:
    case POOT_CAPACITY:
      *type = "invalid_request_error";
      return 400;
    default: *type = "server_error"; return 500;
  }
}

static void on_job_end(void *ctx, poot_status st) {
  call *c = ctx;
  poot__serve_metrics *m = &c->srv->metrics;
  poot__serve_metrics_observe(m, &m->latency, (double)(poot_time_ns() - c->job.enqueued_ns) * 1e-9);
  pthread_mutex_lock(&c->mu);
  c->done = true;
  c->status = st;
  if (c->stream) {
    /* a streamed request's outcome is known only here (the 200 is sent) */
    poot_status_code code = poot_status_code_of(st);
    poot__serve_outcome o = !st ? POOT_OUTCOME_OK
                            : code == POOT_CANCELLED ? POOT_OUTCOME_CANCELLED
                                                     : POOT_OUTCOME_ERROR;
    poot__serve_metrics_request(m, endpoint_of(c), o);
    if (!st) {
      if (c->include_usage) {
        chunk_head(c, &c->sse);
        poot_strbuf_puts(&c->sse, ",\"choices\":[],");
        write_usage(c, &c->sse);
        poot_strbuf_puts(&c->sse, "}\n\n");
      }
      poot_strbuf_puts(&c->sse, "data: [DONE]\n\n");
    } else if (code != POOT_CANCELLED) {
      const char *type;
      (void)status_http(code, &type);
      poot_strbuf_puts(&c->sse, "data: ");
      poot__serve_write_error(&c->sse, poot_status_message(st), type, NULL,
                              poot_status_code_name(code));
      poot_strbuf_puts(&c->sse, "\n\n");
    }
  }
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  call_release(c);
}

/* ---------------------------------------------------------- responses */

static void respond(poot__http_response *out, unsigned status, poot_strbuf *sb) {
  out->status = status;
  out->content_type = "application/json";
  out->body_len = sb->len;
  out->body = poot_strbuf_take(sb);
}

static void respond_error(poot_server *srv, poot__serve_endpoint ep, poot__http_response *out,
                          unsigned status, const char *message, const char *type,
                          const char *param, const char *code) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot__serve_write_error(&sb, message, type, param, code);
  respond(out, status, &sb);
  poot__serve_outcome o = status == 429   ? POOT_OUTCOME_REJECTED
                          : status == 499 ? POOT_OUTCOME_CANCELLED
                          : status >= 500 ? POOT_OUTCOME_ERROR
                                          : POOT_OUTCOME_CLIENT_ERROR;
  poot__serve_metrics_request(&srv->metrics, ep, o);
}

/* The whole response of a finished, non-streamed call. */
static void respond_call(call *c, poot__http_response *out) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  bool chat = c->kind == POOT_SERVE_CHAT;
  poot_strbuf_printf(&sb, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%llu,\"model\":", c->id,
                     chat ? "chat.completion" : "text_completion", (unsigned long long)c->created);
  poot_json_write_string(&sb, c->srv->model_name, strlen(c->srv->model_name), false);
  poot_strbuf_puts(&sb, ",\"choices\":[");
  for (size_t i = 0; i < c->n_choices; i++) {
    poot_strbuf_printf(&sb, "%s{\"index\":%zu,", i ? "," : "", i);
    if (chat) {
      poot_strbuf_puts(&sb, "\"message\":{\"role\":\"assistant\"");
      bool calls = false;
      poot__serve_write_message_fields(&sb, c->parse ? &c->tp : NULL, c->texts[i].data,
                                       c->texts[i].len, &calls);
      if (calls && c->finish[i] && strcmp(c->finish[i], "stop") == 0) c->finish[i] = "tool_calls";
      poot_strbuf_puts(&sb, "},");
    } else {
      poot_strbuf_puts(&sb, "\"text\":");
      poot_json_write_string(&sb, c->texts[i].data, c->texts[i].len, false);
      poot_strbuf_putc(&sb, ',');
    }
    poot_strbuf_puts(&sb, "\"logprobs\":");
    if (c->lps[i].len)
      poot_strbuf_append(&sb, c->lps[i].data, c->lps[i].len);
    else
      poot_strbuf_puts(&sb, "null");
    poot_strbuf_printf(&sb, ",\"finish_reason\":\"%s\"}", c->finish[i] ? c->finish[i] : "stop");
  }
  poot_strbuf_puts(&sb, "],");
  write_usage(c, &sb);
  poot_strbuf_puts(&sb, ",\"system_fingerprint\":null}");
  respond(out, 200, &sb);
}

static long stream_read(void *ctx, char *buf, size_t cap) {
  call *c = ctx;
  pthread_mutex_lock(&c->mu);
  long n = 0;
  for (int waits = 0; c->sse_sent == c->sse.len && !c->done && waits < 10; waits++) {
    if (poot__http_peer_gone(c->fd)) {
      atomic_store(&c->job.cancelled, true);
      pthread_mutex_unlock(&c->mu);
      return -2;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
  }
  /* A stream waiting in the queue sends an SSE comment now and then, so that
   * libmicrohttpd's idle timeout (--timeout) does not close it before its
   * turn; clients skip comment lines. */
  uint64_t now = poot_time_ns();
  if (!c->sse_last_ns) c->sse_last_ns = now;
  if (c->sse_sent == c->sse.len && !c->done && now - c->sse_last_ns > 5000000000ull)
    poot_strbuf_puts(&c->sse, ": keep-alive\n\n");
  if (c->sse_sent < c->sse.len) {
    c->sse_last_ns = now;
    size_t k = c->sse.len - c->sse_sent;
    if (k > cap) k = cap;
    memcpy(buf, c->sse.data + c->sse_sent, k);
    c->sse_sent += k;
    if (c->sse_sent == c->sse.len) {
      poot_strbuf_clear(&c->sse);
      c->sse_sent = 0;
    }
    n = (long)k;
  } else if (c->done) {
    n = -1;
  }
  pthread_mutex_unlock(&c->mu);
  return n;
}

/* The connection is finished or gone: a running job stops at its next token. */
static void stream_done(void *ctx) {
  call *c = ctx;
  atomic_store(&c->job.cancelled, true);
  call_release(c);
}

/* ------------------------------------------------------------- prompts */

/* The image tokens of the rendered prompt expanded to the tower's rows
 * (LLaVA's processor); one token per image. */
static poot_status expand_images(poot_server *srv, call *c, poot_token **ids, size_t *n) {
  const poot_vision_config *vc = poot_vision_get_config(srv->vision);
  size_t found = 0;
  for (size_t i = 0; i < *n; i++) found += (*ids)[i] == (poot_token)vc->image_token_id;
  if (found != c->n_images)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the rendered prompt has %zu image token(s) for %zu image(s): the "
                            "chat template places one per {\"type\": \"image\"} part",
                            found, c->n_images);
  poot_token *out = NULL;
  size_t count = 0, images = 0;
  POOT_TRY(poot_vision_expand_prompt(vc, *ids, *n, &out, &count, &c->first, &images));
  poot_free(*ids);
  *ids = out;
  *n = count;
  return NULL;
}

/* The request's images decoded and preprocessed (no device needed). */
static poot_status decode_images(poot_server *srv, const poot__serve_request *r, call *c) {
  const poot_vision_config *vc = poot_vision_get_config(srv->vision);
  size_t per = (size_t)(3 * vc->image_size * vc->image_size);
  c->pixels = poot_malloc(r->n_images * per * sizeof *c->pixels);
  if (!c->pixels) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the images");
  c->n_images = r->n_images;
  for (size_t i = 0; i < r->n_images; i++) {
    char name[32];
    snprintf(name, sizeof name, "image %zu", i);
    poot_image img = {0};
    poot_status st = poot_image_decode(r->images[i].data, r->images[i].len, name, &img);
    if (!st) st = poot_vision_preprocess_image(&vc->preprocess, &img, c->pixels + per * i);
    poot_image_deinit(&img);
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) {
      poot_status bad = poot_status_make(POOT_INVALID_ARGUMENT, "%s", poot_status_message(st));
      poot_status_free(st);
      return bad;
    }
    POOT_TRY(st);
  }
  return NULL;
}

/* The job's prepare hook (engine thread): the tower's rows of each image,
 * bound to the expanded prompt's image rows. */
static poot_status vision_prepare(poot__serve_job *job) {
  call *c = (call *)job;
  poot_server *srv = c->srv;
  const poot_vision_config *vc = poot_vision_get_config(srv->vision);
  poot_device *dev = poot_runtime_device(srv->rt);
  if (srv->vision_dev != dev) { /* first use, or a new device context after a fault */
    poot_vision_runner_destroy(srv->vision_runner);
    poot_executor_destroy(srv->vision_ex);
    srv->vision_runner = NULL;
    srv->vision_ex = NULL;
    srv->vision_dev = NULL;
    POOT_TRY(poot_engine_create(dev, &srv->vision_ex));
    POOT_TRY(poot_vision_runner_create(srv->vision, srv->vision_ex, &srv->vision_runner));
    srv->vision_dev = dev;
  }
  size_t per_px = (size_t)(3 * vc->image_size * vc->image_size);
  size_t rows = (size_t)vc->rows, width = (size_t)vc->text_hidden;
  c->rows = poot_malloc(c->n_images * rows * width * sizeof *c->rows);
  c->in_rows = poot_malloc(c->n_images * rows * sizeof *c->in_rows);
  if (!c->rows || !c->in_rows) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: image rows");
  for (size_t i = 0; i < c->n_images; i++) {
    float *out = c->rows + i * rows * width;
    POOT_TRY(poot_vision_runner_encode(srv->vision_runner, c->pixels + per_px * i, out));
    for (size_t k = 0; k < rows; k++)
      c->in_rows[i * rows + k] = (poot_driver_input_row){
          .index = (int64_t)(c->first[i] + k), .values = out + k * width, .n_values = width};
  }
  c->input = (poot_driver_input){
      .name = POOT_MODEL_SLOT_EMBEDS, .rows = c->in_rows, .n_rows = c->n_images * rows};
  job->inputs = &c->input;
  job->n_inputs = 1;
  return NULL;
}

/* The chat template over the request's messages, tokenized as
 * transformers' apply_chat_template does (special tokens parsed, none
 * added). */
static poot_status render_chat(poot_server *srv, poot_arena *arena, const poot__serve_request *r,
                               call *c, poot_token **out_ids, size_t *out_n) {
  poot_model *model = poot_runtime_model(srv->rt);
  poot_json *vars = POOT_ARENA_NEW(arena, poot_json);
  poot_json *yes = POOT_ARENA_NEW(arena, poot_json);
  poot_json **items = POOT_ARENA_NEW_ARRAY(arena, poot_json *, 3);
  const char **keys = POOT_ARENA_NEW_ARRAY(arena, const char *, 3);
  size_t *lens = POOT_ARENA_NEW_ARRAY(arena, size_t, 3);
  if (!vars || !yes || !items || !keys || !lens)
    return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the template's variables");
  yes->type = POOT_JSON_BOOL;
  yes->boolean = true;
  vars->type = POOT_JSON_OBJECT;
  vars->items = items;
  vars->keys = keys;
  vars->key_lens = lens;
  items[0] = r->messages, keys[0] = "messages", lens[0] = 8;
  items[1] = yes, keys[1] = "add_generation_prompt", lens[1] = 21;
  vars->len = 2;
  if (r->tools) items[2] = (poot_json *)r->tools, keys[2] = "tools", lens[2] = 5, vars->len = 3;
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.bos_token = poot_model_get_bos_text(model);
  p.eos_token = poot_model_get_eos_text(model);
  p.add_generation_prompt = 1;
  char *text = NULL;
  size_t len = 0;
  poot_status rs = poot_chat_template_render(srv->tpl, vars, &p, &text, &len, NULL);
  if (rs && r->messages_raw != r->messages && poot_status_code_of(rs) != POOT_OUT_OF_MEMORY) {
    /* a template that wants the arguments as the client's JSON string */
    poot_status_free(rs);
    items[0] = r->messages_raw;
    rs = poot_chat_template_render(srv->tpl, vars, &p, &text, &len, NULL);
  }
  POOT_TRY(rs);
  c->tp.starts_in_reasoning = poot_toolcall_prompt_opens_reasoning(&c->tp, text, len);
  poot_tokenizer_encode_options eo = {.add_special = false, .parse_special = true};
  poot_status st =
      poot_tokenizer_encode(poot_model_get_tokenizer(model), text, len, &eo, out_ids, out_n);
  poot_free(text);
  if (!st && c->n_images) st = expand_images(srv, c, out_ids, out_n);
  return st;
}

/* The prompts as ids into c->prompts; a 400 naming the field on failure. */
static poot_status make_prompts(poot_server *srv, poot_arena *arena, const poot__serve_request *r,
                                call *c, const char **param, const char **code) {
  poot_model *model = poot_runtime_model(srv->rt);
  size_t n = r->kind == POOT_SERVE_CHAT ? 1 : r->n_prompts;
  c->prompts = poot_calloc(n, sizeof *c->prompts);
  c->lens = poot_calloc(n, sizeof *c->lens);
  if (!c->prompts || !c->lens) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the prompts");
  c->job.n_prompts = n;
  int64_t vocab = poot_model_get_config(model)->vocab_size;
  int64_t cap = poot__serve_engine_capacity(srv->engine);
  *param = r->kind == POOT_SERVE_CHAT ? "messages" : "prompt";
  for (size_t i = 0; i < n; i++) {
    if (r->kind == POOT_SERVE_CHAT) {
      poot_status st = render_chat(srv, arena, r, c, &c->prompts[i], &c->lens[i]);
      if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) {
        poot_status bad = poot_status_make(
            POOT_INVALID_ARGUMENT, "the chat template cannot render these messages: %s",
            poot_status_message(st));
        poot_status_free(st);
        return bad;
      }
      POOT_TRY(st);
    } else if (r->prompts[i].text) {
      poot_tokenizer_encode_options eo = {.add_special = true, .parse_special = false};
      POOT_TRY(poot_tokenizer_encode(poot_model_get_tokenizer(model), r->prompts[i].text,
                                     r->prompts[i].len, &eo, &c->prompts[i], &c->lens[i]));
    } else {
      for (size_t k = 0; k < r->prompts[i].n_ids; k++)
        if (r->prompts[i].ids[k] >= vocab)
          return poot_status_make(POOT_INVALID_ARGUMENT,
                                  "prompt %zu: token id %d is past the vocabulary (%lld ids)", i,
                                  r->prompts[i].ids[k], (long long)vocab);
      c->prompts[i] = poot_malloc(r->prompts[i].n_ids * sizeof(poot_token));
      if (!c->prompts[i]) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the prompts");
      memcpy(c->prompts[i], r->prompts[i].ids, r->prompts[i].n_ids * sizeof(poot_token));
      c->lens[i] = r->prompts[i].n_ids;
    }
    if (c->lens[i] == 0)
      return poot_status_make(POOT_INVALID_ARGUMENT, "prompt %zu is empty after tokenization", i);
    if ((int64_t)c->lens[i] >= cap) {
      *code = "context_length_exceeded";
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "the prompt has %zu tokens, but the context holds %lld: at most "
                              "%lld prompt tokens leave room for one generated token",
                              c->lens[i], (long long)cap, (long long)cap - 1);
    }
  }
  return NULL;
}

static bool forced(const poot__serve_request *r) {
  return r->kind == POOT_SERVE_CHAT && r->tools &&
         (r->tool_choice == POOT_TOOL_CHOICE_REQUIRED || r->tool_choice == POOT_TOOL_CHOICE_FUNCTION);
}

/* The reply's parser: the template's call format when the request offers
 * tools (none with tool_choice "none"; the forced format when the grammar
 * writes the calls), its reasoning markers always. */
static void setup_toolcalls(poot_server *srv, const poot__serve_request *r, call *c) {
  if (r->kind != POOT_SERVE_CHAT) return;
  c->tp = srv->tc;
  if (!r->tools || r->tool_choice == POOT_TOOL_CHOICE_NONE)
    c->tp.format = POOT_TOOLCALL_FORMAT_NONE;
  else if (forced(r))
    c->tp.format = srv->forced_format;
  c->tp.id_seed = r->seed_given ? r->sampling.seed : atomic_fetch_add(&srv->next_id, 1);
  c->parse = c->tp.format != POOT_TOOLCALL_FORMAT_NONE ||
             c->tp.reasoning != POOT_TOOLCALL_REASONING_NONE;
}

/* The grammar of a forced call (the tools' schemas in the call format). */
static poot_status make_tool_grammar(poot_server *srv, const poot__serve_request *r, call *c) {
  poot_toolcall_grammar_options o = {
      .function = r->tool_choice == POOT_TOOL_CHOICE_FUNCTION ? r->tool_choice_name : NULL,
      .max_calls = r->parallel_tool_calls ? 0 : 1};
  char *gbnf = NULL;
  size_t len = 0;
  POOT_TRY(poot_toolcall_grammar(srv->forced_format, r->tools, &o, &gbnf, &len));
  poot_status st = poot_grammar_compile(gbnf, len, NULL, &c->grammar);
  poot_free(gbnf);
  return st;
}

static poot_status make_grammar(poot_server *srv, const poot__serve_request *r, call *c) {
  if (forced(r)) return make_tool_grammar(srv, r, c);
  if (!r->response_format) return NULL;
  char *gbnf = NULL;
  size_t len = 0;
  poot_json_schema_options so = poot_json_schema_options_default();
  so.ignore_unknown_formats = true;
  so.compact = true; /* no white space between tokens: a small model fills it otherwise */
  POOT_TRY(poot_json_response_format_to_gbnf(r->response_format, r->response_format_len, &so,
                                             &gbnf, &len));
  poot_status st = NULL;
  if (gbnf) st = poot_grammar_compile(gbnf, len, NULL, &c->grammar);
  poot_free(gbnf);
  return st;
}

/* --------------------------------------------------------- generation */

static call *call_new(poot_server *srv, const poot__serve_request *r) {
  call *c = poot_calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  poot_strbuf_init(&c->sse);
  c->srv = srv;
  c->kind = r->kind;
  c->stream = r->stream;
  c->include_usage = r->stream && r->include_usage;
  c->logprobs = r->logprobs;
  c->top = r->top_logprobs;
  c->refs = 1;
  c->created = (uint64_t)time(NULL);
  snprintf(c->id, sizeof c->id, "%s-%llx%04llx", r->kind == POOT_SERVE_CHAT ? "chatcmpl" : "cmpl",
           (unsigned long long)c->created,
           (unsigned long long)(atomic_fetch_add(&srv->next_id, 1) & 0xffff));
  size_t n = (r->kind == POOT_SERVE_CHAT ? 1 : r->n_prompts) * r->n;
  c->n_choices = n;
  c->texts = poot_calloc(n, sizeof *c->texts);
  c->lps = poot_calloc(n, sizeof *c->lps);
  c->finish = poot_calloc(n, sizeof *c->finish);
  c->started = poot_calloc(n, sizeof *c->started);
  c->pend_ids = poot_calloc(n, sizeof *c->pend_ids);
  c->pend_probs = poot_calloc(n, sizeof *c->pend_probs);
  c->tcs = poot_calloc(n, sizeof *c->tcs);
  if (!c->tcs || !c->texts || !c->lps || !c->finish || !c->started || !c->pend_ids || !c->pend_probs) {
    call_free(c);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_init(&c->texts[i]);
    poot_strbuf_init(&c->lps[i]);
    poot_vec_init(&c->pend_ids[i], sizeof(poot_token));
    poot_vec_init(&c->pend_probs[i], sizeof(poot_sampling_result));
  }
  c->job.n = r->n;
  c->job.max_tokens = r->max_tokens;
  c->job.sampling = r->sampling;
  c->job.sink = (poot__serve_sink){on_token, on_text, on_choice_end, on_job_end};
  c->job.sink_ctx = c;
  atomic_init(&c->job.cancelled, false);
  return c;
}

/* Waits for a non-streamed call; a client that hangs up cancels it. */
static void wait_call(call *c) {
  pthread_mutex_lock(&c->mu);
  while (!c->done) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    if (!c->done && poot__http_peer_gone(c->fd)) atomic_store(&c->job.cancelled, true);
  }
  pthread_mutex_unlock(&c->mu);
}

static void generate(poot_server *srv, const poot__http_request *req, poot__serve_kind kind,
                     poot__http_response *out) {
  poot__serve_endpoint ep = kind == POOT_SERVE_CHAT ? POOT_ENDPOINT_CHAT : POOT_ENDPOINT_COMPLETIONS;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot__serve_request r;
  const char *param = NULL, *code = NULL;
  call *c = NULL;
  poot_status st = poot__serve_request_parse(&arena, req->body, req->body_len, kind, &srv->limits,
                                             &r, &param);
  if (!st && kind == POOT_SERVE_CHAT && !srv->tpl) {
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "the model has no chat template; start the server with "
                          "--chat-template FILE or use /v1/completions");
    param = "messages";
  }
  if (!st && r.model && strcmp(r.model, srv->model_name) != 0) {
    char msg[512];
    snprintf(msg, sizeof msg, "the model '%.200s' does not exist here; this server runs '%.200s'",
             r.model, srv->model_name);
    respond_error(srv, ep, out, 404, msg, "invalid_request_error", "model", "model_not_found");
    goto done;
  }
  if (!st && !(c = call_new(srv, &r)))
    st = poot_status_make(POOT_OUT_OF_MEMORY, "serve: the request");
  if (!st && r.n_images) {
    param = "messages";
    st = srv->vision ? decode_images(srv, &r, c)
                     : poot_status_make(POOT_INVALID_ARGUMENT,
                                        "the model '%s' has no vision tower: image_url parts need "
                                        "a vision model (LLaVA-style)",
                                        srv->model_name);
    if (!st) c->job.prepare = vision_prepare;
  }
  if (!st) setup_toolcalls(srv, &r, c);
  if (!st) st = make_prompts(srv, &arena, &r, c, &param, &code);
  if (!st && c->parse && forced(&r)) c->tp.starts_in_reasoning = false; /* the grammar writes calls */
  if (!st) {
    st = make_grammar(srv, &r, c);
    if (st) param = forced(&r) ? "tools" : "response_format";
  }
  if (st) {
    poot_status_code sc = poot_status_code_of(st);
    bool client = sc == POOT_INVALID_ARGUMENT || sc == POOT_UNSUPPORTED || sc == POOT_CAPACITY;
    respond_error(srv, ep, out, client ? 400 : 500, poot_status_message(st),
                  client ? "invalid_request_error" : "server_error", client ? param : NULL,
                  client ? code : poot_status_code_name(sc));
    poot_status_free(st);
    goto done;
  }
  c->job.prompts = c->prompts;
  c->job.prompt_lens = c->lens;
  c->job.grammar = c->grammar;
  c->fd = req->fd;
  c->refs = 2; /* this thread (or the stream) and the engine */
  st = poot__serve_engine_submit(srv->engine, &c->job);
  if (st) {
    c->refs = 1;
    bool full = poot_status_code_of(st) == POOT_CAPACITY;
    respond_error(srv, ep, out, full ? 429 : 503, poot_status_message(st),
                  full ? "rate_limit_error" : "server_error", NULL,
                  full ? "queue_full" : "unavailable");
    if (full) out->header_name = "Retry-After", out->header_value = "1";
    poot_status_free(st);
    goto done;
  }
  if (c->stream) {
    out->status = 200;
    out->content_type = "text/event-stream";
    out->stream = (poot__http_stream){.read = stream_read, .done = stream_done, .ctx = c};
    c = NULL; /* the stream holds this thread's reference */
    goto done;
  }
  wait_call(c);
  if (!c->status) {
    respond_call(c, out);
    poot__serve_metrics_request(&srv->metrics, ep, POOT_OUTCOME_OK);
  } else if (poot_status_code_of(c->status) == POOT_CANCELLED) {
    respond_error(srv, ep, out, 499, "the client closed the request", "invalid_request_error",
                  NULL, "cancelled");
  } else {
    const char *type;
    poot_status_code sc = poot_status_code_of(c->status);
    unsigned http = status_http(sc, &type);
    respond_error(srv, ep, out, http, poot_status_message(c->status), type, NULL,
                  poot_status_code_name(sc));
  }
done:
  if (c) call_release(c);
  poot_arena_deinit(&arena);
}

/* ------------------------------------------------------------- routing */

/* The key is compared in time independent of where it differs. */
static bool authorized(const poot_server *srv, const char *header) {
  if (!srv->o.api_key) return true;
  const char *key = srv->o.api_key;
  size_t kl = strlen(key);
  if (!header || strncmp(header, "Bearer ", 7) != 0) return false;
  const char *given = header + 7;
  size_t gl = strlen(given);
  unsigned diff = (unsigned)(gl ^ kl);
  for (size_t i = 0; i < kl; i++) diff |= (unsigned char)key[i] ^ (unsigned char)given[i < gl ? i : 0];
  return diff == 0;
}

/* /v1/embeddings, /v1/rerank: an encoder model runs them; a decoder says so. */
static void encode(poot_server *srv, const poot__http_request *req, poot__serve_encode_kind kind,
                   poot__http_response *out) {
  poot__serve_endpoint ep = kind == POOT_SERVE_EMBED ? POOT_ENDPOINT_EMBEDDINGS : POOT_ENDPOINT_RERANK;
  if (!srv->encoder) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "this server runs a decoder ('%.100s'): %s needs an encoder model (poot serve -m a "
             "sentence-transformers folder or a GGUF bert file)",
             srv->model_name, kind == POOT_SERVE_EMBED ? "/v1/embeddings" : "/v1/rerank");
    respond_error(srv, ep, out, 400, msg, "invalid_request_error", "model", "model_not_supported");
    return;
  }
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot__serve_encode_request r;
  const char *param = NULL;
  poot_status st = poot__serve_encode_request_parse(&arena, req->body, req->body_len, kind, 2048,
                                                    &r, &param);
  if (!st && r.model && strcmp(r.model, srv->model_name) != 0) {
    char msg[512];
    snprintf(msg, sizeof msg, "the model '%.200s' does not exist here; this server runs '%.200s'",
             r.model, srv->model_name);
    respond_error(srv, ep, out, 404, msg, "invalid_request_error", "model", "model_not_found");
    poot_arena_deinit(&arena);
    return;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (!st) {
    pthread_mutex_lock(&srv->encode_mu);
    st = poot__serve_encode_run(srv->rt, srv->model_name, &r, &sb, &param);
    pthread_mutex_unlock(&srv->encode_mu);
  }
  if (!st) st = poot_strbuf_status(&sb);
  if (!st) {
    respond(out, 200, &sb);
    poot__serve_metrics_request(&srv->metrics, ep, POOT_OUTCOME_OK);
  } else {
    poot_status_code sc = poot_status_code_of(st);
    bool client = sc == POOT_INVALID_ARGUMENT || sc == POOT_UNSUPPORTED || sc == POOT_CAPACITY;
    respond_error(srv, ep, out, client ? 400 : 500, poot_status_message(st),
                  client ? "invalid_request_error" : "server_error", client ? param : NULL,
                  client ? NULL : poot_status_code_name(sc));
    poot_status_free(st);
  }
  poot_strbuf_deinit(&sb);
  poot_arena_deinit(&arena);
}

/* The context a request may fill: the driver's, or an encoder's positions. */
static int64_t capacity(const poot_server *srv) {
  if (srv->encoder) return poot_model_get_config(poot_runtime_model(srv->rt))->context_length;
  return poot__serve_engine_capacity(srv->engine);
}

static void models(poot_server *srv, poot__http_response *out) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "{\"object\":\"list\",\"data\":[{\"id\":");
  poot_json_write_string(&sb, srv->model_name, strlen(srv->model_name), false);
  poot_strbuf_printf(&sb,
                     ",\"object\":\"model\",\"created\":%llu,\"owned_by\":\"poot\","
                     "\"max_model_len\":%lld}]}",
                     (unsigned long long)srv->created,
                     (long long)capacity(srv));
  respond(out, 200, &sb);
}

static void handle(void *ctx, const poot__http_request *req, poot__http_response *out) {
  poot_server *srv = ctx;
  const char *url = req->url;
  bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
  poot__serve_endpoint ep = POOT_ENDPOINT_OTHER;
  if (strcmp(url, "/v1/chat/completions") == 0) ep = POOT_ENDPOINT_CHAT;
  else if (strcmp(url, "/v1/completions") == 0) ep = POOT_ENDPOINT_COMPLETIONS;
  else if (strcmp(url, "/v1/models") == 0) ep = POOT_ENDPOINT_MODELS;
  else if (strcmp(url, "/health") == 0) ep = POOT_ENDPOINT_HEALTH;
  else if (strcmp(url, "/metrics") == 0) ep = POOT_ENDPOINT_METRICS;
  else if (strcmp(url, "/v1/embeddings") == 0 || strcmp(url, "/embeddings") == 0)
    ep = POOT_ENDPOINT_EMBEDDINGS;
  else if (strcmp(url, "/v1/rerank") == 0 || strcmp(url, "/rerank") == 0)
    ep = POOT_ENDPOINT_RERANK;
  if (req->body_too_large) {
    char msg[160];
    snprintf(msg, sizeof msg, "the request body is larger than this server accepts (%zu bytes)",
             srv->o.max_body_bytes);
    respond_error(srv, ep, out, 413, msg, "invalid_request_error", NULL, "body_too_large");
    return;
  }
  /* the chat page: public (a browser cannot send the key with a page load;
   * the page asks for it and sends it with its API calls) */
  if (ep == POOT_ENDPOINT_OTHER && get && poot__serve_page_path(url)) {
    unsigned status = poot__serve_page(srv->o.page_dir, url, out);
    if (status == 200)
      poot__serve_metrics_request(&srv->metrics, POOT_ENDPOINT_PAGE, POOT_OUTCOME_OK);
    else
      respond_error(srv, POOT_ENDPOINT_PAGE, out, 404,
                    srv->o.page_dir ? "no such file" : "this server has no chat page (--no-webui, "
                                                       "or its folder was not found)",
                    "invalid_request_error", NULL, "not_found");
    return;
  }
  if (ep != POOT_ENDPOINT_HEALTH && !authorized(srv, req->authorization)) {
    respond_error(srv, ep, out, 401, "a valid API key is needed: Authorization: Bearer KEY",
                  "authentication_error", NULL, "invalid_api_key");
    out->header_name = "WWW-Authenticate", out->header_value = "Bearer";
    return;
  }
  bool want_post = ep == POOT_ENDPOINT_CHAT || ep == POOT_ENDPOINT_COMPLETIONS ||
                   ep == POOT_ENDPOINT_EMBEDDINGS || ep == POOT_ENDPOINT_RERANK;
  if (ep == POOT_ENDPOINT_OTHER) {
    respond_error(srv, ep, out, 404, "no such endpoint", "invalid_request_error", NULL,
                  "not_found");
    return;
  }
  if ((want_post && !post) || (!want_post && !get)) {
    respond_error(srv, ep, out, 405, want_post ? "use POST" : "use GET", "invalid_request_error",
                  NULL, "method_not_allowed");
    out->header_name = "Allow", out->header_value = want_post ? "POST" : "GET";
    return;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (srv->encoder && (ep == POOT_ENDPOINT_CHAT || ep == POOT_ENDPOINT_COMPLETIONS)) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "this server runs an encoder ('%.100s'): it answers /v1/embeddings and /v1/rerank, "
             "not %s",
             srv->model_name, url);
    respond_error(srv, ep, out, 400, msg, "invalid_request_error", "model", "model_not_supported");
    poot_strbuf_deinit(&sb);
    return;
  }
  switch (ep) {
    case POOT_ENDPOINT_EMBEDDINGS: encode(srv, req, POOT_SERVE_EMBED, out); return;
    case POOT_ENDPOINT_RERANK: encode(srv, req, POOT_SERVE_RERANK, out); return;
    case POOT_ENDPOINT_CHAT: generate(srv, req, POOT_SERVE_CHAT, out); return;
    case POOT_ENDPOINT_COMPLETIONS: generate(srv, req, POOT_SERVE_COMPLETION, out); return;
    case POOT_ENDPOINT_MODELS: models(srv, out); break;
    case POOT_ENDPOINT_HEALTH:
      poot_strbuf_puts(&sb, "{\"status\":\"ok\"}");
      respond(out, 200, &sb);
      break;
    case POOT_ENDPOINT_METRICS:
      poot__serve_metrics_request(&srv->metrics, ep, POOT_OUTCOME_OK);
      poot__serve_metrics_write(&srv->metrics, &sb);
      respond(out, 200, &sb);
      out->content_type = "text/plain; version=0.0.4";
      return;
    default: break;
  }
  poot_strbuf_deinit(&sb);
  poot__serve_metrics_request(&srv->metrics, ep, POOT_OUTCOME_OK);
}

/* True when the tokenizer writes `marker` as text (not one control token,
 * which a grammar cannot match: docs/grammar.md). */
static bool marker_is_text(const poot_tokenizer *tok, const char *marker) {
  poot_tokenizer_encode_options eo = {.add_special = false, .parse_special = true};
  poot_token *ids = NULL;
  size_t n = 0;
  poot_status st = poot_tokenizer_encode(tok, marker, strlen(marker), &eo, &ids, &n);
  bool text = !st;
  for (size_t i = 0; text && i < n; i++)
    text = !(poot_tokenizer_token_attr(tok, ids[i]) & POOT_TOKEN_ATTR_CONTROL);
  poot_status_free(st);
  poot_free(ids);
  return text;
}

/* The template's call format and reasoning markers. */
static void detect_toolcalls(poot_server *srv, const poot_tokenizer *tok) {
  poot_toolcall_params_default(&srv->tc);
  srv->forced_format = POOT_TOOLCALL_FORMAT_LLAMA3;
  if (!srv->tpl) return;
  size_t len = 0;
  const char *text = poot_chat_template_source(srv->tpl, &len);
  poot_toolcall_params_detect(&srv->tc, text, len);
  if ((srv->tc.format == POOT_TOOLCALL_FORMAT_HERMES && marker_is_text(tok, "<tool_call>")) ||
      (srv->tc.format == POOT_TOOLCALL_FORMAT_MISTRAL && marker_is_text(tok, "[TOOL_CALLS]")))
    srv->forced_format = srv->tc.format;
}

/* -------------------------------------------------------------- public */

poot_status poot_server_create(poot_runtime *runtime, const poot_chat_template *tpl,
                               const poot_server_options *options, poot_server **out_server) {
  *out_server = NULL;
  poot_server_options o = options ? *options : poot_server_options_default();
  poot_model *model = runtime ? poot_runtime_model(runtime) : NULL;
  poot_driver *drv = runtime ? poot_runtime_driver(runtime) : NULL;
  if (!model || !drv || !poot_model_get_tokenizer(model))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "serve: the runtime needs a model with a tokenizer and a driver");
  if (o.max_seqs > POOT_BATCH_MAX_BATCH)
    return poot_status_make(POOT_INVALID_ARGUMENT, "serve: max_seqs = %u: at most %d", o.max_seqs,
                            POOT_BATCH_MAX_BATCH);
  if (o.inject_fault && strcmp(o.inject_fault, "kernel_fault") != 0 &&
      strcmp(o.inject_fault, "device_lost") != 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "serve: inject_fault '%s' is not kernel_fault or device_lost",
                            o.inject_fault);
  if (!o.host) o.host = "127.0.0.1";
  if (!o.max_queue) o.max_queue = 64;
  if (!o.max_body_bytes) o.max_body_bytes = 4u << 20;
  if (!o.max_messages) o.max_messages = 1024;
  if (!o.max_n) o.max_n = 8;
  if (!o.max_connections) o.max_connections = 64;
  if (!o.timeout_s) o.timeout_s = 60;
  int64_t cap = poot_driver_cap(drv);
  if (o.max_tokens <= 0 || o.max_tokens > cap) o.max_tokens = cap;
  poot_server *srv = poot_calloc(1, sizeof *srv);
  if (!srv) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the server");
  srv->rt = runtime;
  srv->vision = o.vision;
  srv->encoder = poot_model_is_encoder(poot_model_get_config(model));
  pthread_mutex_init(&srv->encode_mu, NULL);
  srv->tpl = tpl ? tpl : poot_model_get_chat_template(model);
  srv->o = o;
  srv->created = (uint64_t)time(NULL);
  atomic_init(&srv->next_id, 0);
  srv->model_name = o.model_name ? o.model_name : "model";
  detect_toolcalls(srv, poot_model_get_tokenizer(model));
  srv->limits = (poot__serve_limits){.max_messages = o.max_messages,
                                     .max_tokens = o.max_tokens,
                                     .max_n = o.max_n,
                                     .max_prompts = 16};
  poot__serve_metrics_init(&srv->metrics);
  *out_server = srv;
  return NULL;
}

poot_status poot_server_start(poot_server *srv) {
  poot__serve_engine_options eo = {.max_queue = srv->o.max_queue,
                                   .max_seqs = srv->o.max_seqs,
                                   .inject_fault = srv->o.inject_fault,
                                   .inject_step = srv->o.inject_step,
                                   .inject_count = srv->o.inject_count};
  if (!srv->encoder)
    POOT_TRY(poot__serve_engine_create(srv->rt, &srv->metrics, &eo, &srv->engine));
  poot__http_options ho = {.host = srv->o.host,
                           .port = srv->o.port,
                           .max_body_bytes = srv->o.max_body_bytes,
                           .max_connections = srv->o.max_connections,
                           .timeout_s = srv->o.timeout_s};
  poot_status st = poot__http_start(&ho, handle, srv, &srv->http);
  if (st) {
    poot__serve_engine_destroy(srv->engine);
    srv->engine = NULL;
  }
  return st;
}

uint16_t poot_server_port(const poot_server *srv) {
  return srv->http ? poot__http_port(srv->http) : 0;
}

void poot_server_stop(poot_server *srv) {
  if (!srv) return;
  /* the engine first: waiting connections then see their calls end */
  poot__serve_engine_stop(srv->engine);
  poot__http_stop(srv->http);
  srv->http = NULL;
  poot__serve_engine_destroy(srv->engine);
  srv->engine = NULL;
  /* the engine thread is joined: the tower's executor can go */
  poot_vision_runner_destroy(srv->vision_runner);
  poot_executor_destroy(srv->vision_ex);
  srv->vision_runner = NULL;
  srv->vision_ex = NULL;
  srv->vision_dev = NULL;
}

void poot_server_destroy(poot_server *srv) {
  if (!srv) return;
  poot_server_stop(srv);
  poot__serve_metrics_deinit(&srv->metrics);
  pthread_mutex_destroy(&srv->encode_mu);
  poot_free(srv);
}
