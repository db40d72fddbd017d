/* poot serve — the OpenAI-compatible HTTP server (docs/serve.md):
 *   poot serve [-m MODEL] [--host 127.0.0.1] [--port 8080] [--api-key K] [--device D]
 *              [--ctx-size N] [--max-seqs N] [--max-queue N] [--alias NAME]
 *              [--chat-template FILE] ...
 * Prints one line when it listens ("poot serve: listening on http://HOST:PORT …") and
 * runs until SIGINT or SIGTERM. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/vision.h"
#include "poot/serve.h"
#include "tool.h"

#define CMD "serve"

typedef struct serve_flags {
  const char *model, *tokenizer, *device, *host, *api_key, *alias, *template_path, *kv_type;
  const char *matmul_precision;
  const char *page_path;
  bool no_webui;
  long long port, ctx, max_seqs, max_queue, timeout, max_body, max_tokens, max_n, max_messages,
      chunk;
  poot_dtype kv;
  poot_matmul_precision mp;
  bool quiet;
} serve_flags;

static const char synopsis[] =
    "usage: poot serve [-m MODEL] [--host ADDR] [--port N] [--api-key KEY] [--device D]\n"
    "                  [--ctx-size N] [--max-seqs N] [--max-queue N] [--alias NAME]\n"
    "                  [--chat-template FILE] ...\n\n"
    "Serves the model over HTTP with OpenAI's API: /v1/chat/completions,\n"
    "/v1/completions, /v1/models, /health and /metrics (Prometheus). Prints one line\n"
    "when it listens and runs until interrupted (SIGINT, SIGTERM).\n\n";

static const char epilog[] =
    "\nOne engine thread runs the requests one sequence at a time, in the order\n"
    "they came; others wait in a queue of --max-queue (a full queue answers 429\n"
    "with Retry-After). A client that disconnects cancels its request. docs/serve.md\n"
    "lists every field and metric.\n";

enum { SERVE_OPTIONS = 22 };

static int parse_flags(int argc, char **argv, serve_flags *f) {
  *f = (serve_flags){.device = "auto",
                     .host = "127.0.0.1",
                     .port = 8080,
                     .max_seqs = 1,
                     .max_queue = 64,
                     .timeout = 60,
                     .max_body = 4 << 20,
                     .max_n = 8,
                     .max_messages = 1024};
  poot_tool_option options[SERVE_OPTIONS] = {
      {POOT_FLAG_MODEL, &f->model,
       "GGUF file, safetensors folder or llama2.c checkpoint\n"
       "(default: the bundled demo model " POOT_TOOL_DEMO_MODEL ")",
       0, 0},
      {POOT_FLAG_TOKENIZER, &f->tokenizer, NULL, 0, 0},
      {POOT_FLAG_HOST, &f->host, NULL, 0, 0},
      {POOT_FLAG_PORT, &f->port, NULL, 0, 65535},
      {POOT_FLAG_API_KEY, &f->api_key, NULL, 0, 0},
      {POOT_FLAG_DEVICE, &f->device, NULL, 0, 0},
      {POOT_FLAG_CTX_SIZE, &f->ctx, "context of a sequence: prompt + generated tokens\n"
                                    "(default: the model's context length, at most 512)",
       1, LLONG_MAX},
      {POOT_FLAG_MAX_SEQS, &f->max_seqs,
       "sequences run at once (default 1: the single engine;\n"
       "more: the batched engine over a paged KV pool)",
       1, 4096},
      {POOT_FLAG_MAX_QUEUE, &f->max_queue, "requests that may wait (default 64); one more is 429",
       1, 1 << 20},
      {POOT_FLAG_ALIAS, &f->alias, "the model's id in the API (default: the file name)", 0, 0},
      {POOT_FLAG_CHAT_TEMPLATE, &f->template_path, NULL, 0, 0},
      {POOT_FLAG_TIMEOUT, &f->timeout, "close a connection idle for S seconds (default 60)", 1,
       86400},
      {POOT_FLAG_MAX_BODY, &f->max_body, "larger request bodies are 413 (default 4 MiB)", 1,
       1ll << 30},
      {POOT_FLAG_MAX_TOKENS, &f->max_tokens,
       "the largest max_tokens a request may ask (default: the context)", 1, LLONG_MAX},
      {POOT_FLAG_MAX_N, &f->max_n, "the most choices (n) of one request (default 8)", 1, 64},
      {POOT_FLAG_MAX_MESSAGES, &f->max_messages,
       "the most messages of one chat request (default 1024)", 1, 1 << 20},
      {POOT_FLAG_CHUNK, &f->chunk, NULL, 1, LLONG_MAX},
      {POOT_FLAG_KV_TYPE, &f->kv_type, NULL, 0, 0},
      {POOT_FLAG_MATMUL_PRECISION, &f->matmul_precision, NULL, 0, 0},
      {POOT_FLAG_QUIET, &f->quiet, "no progress lines on stderr", 0, 0},
      {POOT_FLAG_PAGE_PATH, &f->page_path, NULL, 0, 0},
      {POOT_FLAG_NO_WEBUI, &f->no_webui, NULL, 0, 0},
  };
  const poot_tool_cli cli = {.cmd = CMD,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = SERVE_OPTIONS,
                             .epilog = epilog};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && !poot_tool_parse_kv_type(CMD, f->kv_type, &f->kv)) rc = POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_matmul_precision(CMD, f->matmul_precision, &f->mp))
    rc = POOT_EXIT_USAGE;
  return rc;
}

/* Test only: POOT_SERVE_INJECT_FAULT=KIND:STEP[:COUNT] (docs/serve.md "Faults"). */
static bool parse_inject(poot_server_options *o, char *buf, size_t size) {
  const char *env = getenv("POOT_SERVE_INJECT_FAULT");
  if (!env || !*env) return true;
  snprintf(buf, size, "%s", env);
  char *colon = strchr(buf, ':');
  if (!colon) return false;
  *colon = 0;
  char *end = NULL;
  o->inject_step = strtoll(colon + 1, &end, 10);
  o->inject_count = 1;
  if (*end == ':') o->inject_count = strtoll(end + 1, &end, 10);
  o->inject_fault = buf;
  return *end == 0 && o->inject_step > 0 && o->inject_count > 0;
}

static poot_status serve(const serve_flags *f, const char *model_path, const sigset_t *signals) {
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = model_path;
  ro.tokenizer_path = f->tokenizer;
  ro.device = f->device;
  ro.matmul_precision = f->mp;
  poot_runtime *rt = NULL;
  poot_chat_template *tpl = NULL;
  poot_server *srv = NULL;
  poot_vision *vision = NULL;
  poot_status st = poot_runtime_open(&ro, &rt);
  if (!st && !poot_model_get_tokenizer(poot_runtime_model(rt)))
    st = poot_status_make(POOT_INVALID_ARGUMENT, "%s has no tokenizer; give --tokenizer FILE",
                          model_path);
  if (!st && f->template_path) {
    char *text = NULL;
    size_t len = 0;
    st = poot_file_read_all(f->template_path, &text, &len);
    if (!st) st = poot_chat_template_create(text, len, &tpl);
    poot_free(text);
    if (st) st = poot_status_annotate(st, "%s", f->template_path);
  }
  bool encoder = !st && poot_model_is_encoder(poot_model_get_config(poot_runtime_model(rt)));
  if (encoder) {
    /* /v1/embeddings and /v1/rerank: the encoder's entries compile on first use */
    if (!f->quiet) fprintf(stderr, "poot serve: %s is an encoder\n", model_path);
    st = poot_runtime_create_driver(rt, NULL);
  } else if (!st) {
    const poot_model_config *c = poot_model_get_config(poot_runtime_model(rt));
    poot_driver_options dopt = poot_driver_options_default();
    dopt.cap = f->ctx ? f->ctx : c->context_length > 0 && c->context_length < 512 ? c->context_length : 512;
    /* The batched engine's ladder (512, 128, 16; a chunk of the capacity
     * below 512, so a prompt of 128 tokens or more takes the middle rung).
     * Compiled now: the decode entry and the shortest rung (what a prompt
     * of 16 tokens walks; every request needs them, and they are what this
     * engine compiled before); the middle and the chunk on first use, by
     * the first request whose prompt reaches them. */
    dopt.prefill_chunk = f->chunk ? f->chunk : dopt.cap >= 512 ? 512 : dopt.cap >= 16 ? dopt.cap : 1;
    dopt.kv_dtype = f->kv;
    if (!f->quiet) fprintf(stderr, "poot serve: compiling %s…\n", model_path);
    st = poot_runtime_create_driver(rt, &dopt);
    if (!st) st = poot_driver_prepare_prompt(poot_runtime_driver(rt), 16);
  }
  if (!st && !encoder) {
    /* a LLaVA-style model's tower: chat messages may then carry images */
    st = poot_vision_open(poot_runtime_model(rt), model_path, &vision);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      poot_status_free(st);
      st = NULL;
      vision = NULL;
    } else if (!st && !f->quiet) {
      fprintf(stderr, "poot serve: the model has a vision tower: chat messages may carry images\n");
    }
  }
  /* the chat page's folder: --path, else the one next to the tree or installed */
  char page_buf[4096];
  const char *page_dir = NULL;
  if (!f->no_webui) {
    page_dir = f->page_path;
    if (!page_dir && poot_tool_find_data(POOT_TOOL_CHAT_PAGE, page_buf, sizeof page_buf))
      page_dir = page_buf;
    if (!page_dir && !f->quiet)
      fprintf(stderr, "poot serve: the chat page (" POOT_TOOL_CHAT_PAGE ") was not found: / is 404\n");
  }
  char inject[64];
  poot_server_options so = poot_server_options_default();
  if (!st && !parse_inject(&so, inject, sizeof inject))
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "POOT_SERVE_INJECT_FAULT must be KIND:STEP[:COUNT] (a test hook)");
  if (!st) {
    const char *slash = strrchr(model_path, '/');
    so.host = f->host;
    so.port = (uint16_t)f->port;
    so.api_key = f->api_key;
    so.vision = vision;
    so.page_dir = page_dir;
    so.model_name = f->alias ? f->alias : slash ? slash + 1 : model_path;
    so.max_queue = (uint32_t)f->max_queue;
    so.max_seqs = (uint32_t)f->max_seqs;
    so.max_body_bytes = (size_t)f->max_body;
    so.max_messages = (uint32_t)f->max_messages;
    so.max_tokens = f->max_tokens;
    so.max_n = (uint32_t)f->max_n;
    so.timeout_s = (uint32_t)f->timeout;
    st = poot_server_create(rt, tpl, &so, &srv);
  }
  if (!st) st = poot_server_start(srv);
  if (!st) {
    const poot_device_caps *caps = poot_runtime_device_caps(rt);
    printf("poot serve: listening on http://%s:%u (model %s, device %s, context %lld)\n", so.host,
           (unsigned)poot_server_port(srv), so.model_name, caps ? caps->name : "?",
           (long long)(encoder ? poot_model_get_config(poot_runtime_model(rt))->context_length
                               : poot_driver_cap(poot_runtime_driver(rt))));
    fflush(stdout);
    int sig = 0;
    sigwait(signals, &sig);
    if (!f->quiet) fprintf(stderr, "poot serve: stopping (signal %d)\n", sig);
  }
  poot_server_destroy(srv);
  poot_vision_destroy(vision);
  poot_chat_template_destroy(tpl);
  poot_runtime_destroy(rt);
  return st;
}

static int serve_main(int argc, char **argv) {
  serve_flags f;
  int rc = parse_flags(argc, argv, &f);
  if (rc >= 0) return rc;
  char buf[4096];
  const char *model = poot_tool_default_model(CMD, f.model, buf, sizeof buf);
  if (!model) return POOT_EXIT_FAIL;
  /* every thread made from here on leaves these signals to sigwait */
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, NULL);
  signal(SIGPIPE, SIG_IGN);
  poot_status st = serve(&f, model, &signals);
  if (st) return poot_tool_fail(CMD, st);
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_serve = {
    "serve", "an OpenAI-compatible HTTP server (chat, completions, embeddings, rerank)",
    serve_main};
