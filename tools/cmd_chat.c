/* poot chat — talk to a model through its chat template (docs/chat.md):
 *   poot chat [-m MODEL] [--system TEXT] [-p TEXT] [-n N] [--cap N] [--image FILE]
 *             [sampling flags]
 * Each turn renders the whole conversation with the template, tokenizes it and
 * generates with reuse_cache, so only what follows the cached prefix is fed.
 * When the conversation outgrows the KV capacity the oldest exchanges are
 * dropped (the system prompt stays). Interactive on a terminal; otherwise one
 * user turn per line of stdin, or one turn from -p.
 *
 * SIGINT: a handler sets a flag (the one piece of mutable static state here,
 * as a signal handler needs); the token callback sees it and stops the reply,
 * which is kept in the history as far as it got. At the prompt it ends the
 * program. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "poot/runtime.h"
#include "tool.h"
#include "tool_vision.h"

#define CMD "chat"

static volatile sig_atomic_t chat_interrupted;

static void on_sigint(int sig) {
  (void)sig;
  chat_interrupted = 1;
}

/* restart: during a reply system calls restart (the device's waits go on);
 * at the prompt they do not, so reading the line ends with EINTR. */
static void install_sigint(bool restart) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(SIGINT, &sa, NULL);
}

typedef struct chat_flags {
  const char *model, *tokenizer, *device, *system, *prompt, *template_path, *kv_type, *image;
  long long n, cap, chunk;
  poot_dtype kv;
  bool stats, json, quiet;
  poot_tool_sampling sampling;
} chat_flags;

static const char synopsis[] =
    "usage: poot chat [-m MODEL] [--system TEXT] [-p TEXT] [-n N] [--cap N] [--device D]\n"
    "                 [--stats] [--json] [--temp T] [--top-k N] [--seed S] ...\n\n"
    "Talks with a model through its chat template, streaming each reply. On a\n"
    "terminal it is interactive; otherwise each line of stdin is a user turn, and\n"
    "-p TEXT runs one turn and exits. Type /reset to clear the history (the system\n"
    "prompt stays), /image FILE to attach an image to your next message (a LLaVA-\n"
    "style model), /exit or Ctrl-D to quit; Ctrl-C stops a reply, and at the\n"
    "prompt quits. Sampling flags and defaults are llama.cpp's (--temp 0: greedy).\n\n";

static const char epilog[] =
    "\nThe whole conversation is rendered each turn and the KV cache keeps the\n"
    "prefix it shares with the last one (--stats shows how much was reused). When\n"
    "the conversation with room for a reply (N, or a quarter of the capacity) no\n"
    "longer fits the KV capacity, the oldest exchanges are dropped, with a notice.\n";

enum { CHAT_OPTIONS = 14 };

static int parse_flags(int argc, char **argv, chat_flags *f) {
  *f = (chat_flags){.device = "auto", .n = -1};
  poot_tool_sampling_init(&f->sampling);
  poot_tool_option options[CHAT_OPTIONS + POOT_TOOL_SAMPLING_OPTIONS] = {
      {POOT_FLAG_MODEL, &f->model,
       "GGUF file or safetensors folder with a chat template\n"
       "(default: the bundled demo model " POOT_TOOL_DEMO_MODEL ")",
       0, 0},
      {POOT_FLAG_TOKENIZER, &f->tokenizer, "the tokenizer of a llama2.c checkpoint", 0, 0},
      {POOT_FLAG_TEMPLATE, &f->template_path, "a chat template file instead of the model's", 0, 0},
      {POOT_FLAG_SYSTEM, &f->system, "the system prompt (kept by /reset)", 0, 0},
      {POOT_FLAG_PROMPT, &f->prompt, "one user turn: print the reply and exit", 0, 0},
      {POOT_FLAG_N_PREDICT, &f->n,
       "tokens of one reply at most (default -1: until the\nend of the turn or the context)", -1,
       LLONG_MAX},
      {POOT_FLAG_DEVICE, &f->device,
       "auto (default: first present of ptx, rocm, vulkan, wgpu),\n"
       "a backend name, or backend:index",
       0, 0},
      {POOT_FLAG_CAP, &f->cap,
       "KV capacity: the context of the conversation\n"
       "(default: the model's context length, at most 512)",
       1, LLONG_MAX},
      {POOT_FLAG_CHUNK, &f->chunk, NULL, 1, LLONG_MAX},
      {POOT_FLAG_KV_TYPE, &f->kv_type, NULL, 0, 0},
      {POOT_FLAG_STATS, &f->stats,
       "per turn on stderr: prompt tokens, how many were\n"
       "reused from the KV cache, reply tokens and speed",
       0, 0},
      {POOT_FLAG_JSON, &f->json,
       "one JSON object per turn on stdout instead of the\n"
       "streamed reply: turn, reply, n_prompt, n_reused,\n"
       "n_reply, reason, dropped, seed, probs",
       0, 0},
      {POOT_FLAG_QUIET, &f->quiet, NULL, 0, 0},
      {POOT_FLAG_IMAGE, &f->image, "an image attached to the first user message (as /image)", 0, 0},
  };
  poot_tool_sampling_options(&f->sampling, options + CHAT_OPTIONS);
  const poot_tool_cli cli = {.cmd = CMD,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0],
                             .epilog = epilog};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && !poot_tool_parse_kv_type(CMD, f->kv_type, &f->kv)) rc = POOT_EXIT_USAGE;
  return rc;
}

/* ------------------------------------------------------------ the conversation */

typedef struct chat_msg {
  const char *role; /* "system", "user", "assistant" (static) */
  char *content;    /* poot_malloc'ed, NUL-terminated */
  size_t len;
  char *image; /* an attached image's path (poot_malloc'ed), or NULL */
} chat_msg;

typedef struct chat {
  const chat_flags *f;
  poot_runtime *rt;
  poot_driver *drv;
  poot_chat_template *own_tpl; /* --template */
  const poot_chat_template *tpl;
  poot_sampling_params sp;
  poot_grammar *grammar;
  chat_msg *msgs;
  size_t n_msgs, msgs_cap;
  size_t turn;
  int64_t cap;
  poot_tool_vision *tv; /* opened at the first image */
  char *pending_image;  /* /image: for the next user message */
  const char **paths;   /* the rendered conversation's images, in order */
  size_t n_paths;
} chat;

static void chat_clear(chat *c, size_t keep) {
  for (size_t i = keep; i < c->n_msgs; i++) {
    poot_free(c->msgs[i].content);
    poot_free(c->msgs[i].image);
  }
  c->n_msgs = keep < c->n_msgs ? keep : c->n_msgs;
}

static void chat_deinit(chat *c) {
  chat_clear(c, 0);
  poot_free(c->msgs);
  poot_chat_template_destroy(c->own_tpl);
  poot_grammar_destroy(c->grammar);
  poot_free(c->pending_image);
  poot_free(c->paths);
  poot_tool_vision_destroy(c->tv);
  poot_runtime_destroy(c->rt);
}

static poot_status chat_add(chat *c, const char *role, const char *text, size_t len) {
  if (c->n_msgs == c->msgs_cap) {
    size_t n = c->msgs_cap ? 2 * c->msgs_cap : 8;
    chat_msg *m = poot_realloc(c->msgs, n * sizeof *m);
    if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory for the chat history");
    c->msgs = m;
    c->msgs_cap = n;
    const char **p = poot_realloc(c->paths, n * sizeof *p);
    if (!p) return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory for the chat history");
    c->paths = p;
  }
  char *s = poot_strndup(text, len);
  if (!s) return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory for a chat message");
  c->msgs[c->n_msgs++] = (chat_msg){.role = role, .content = s, .len = len};
  if (strcmp(role, "user") == 0 && c->pending_image) {
    c->msgs[c->n_msgs - 1].image = c->pending_image; /* the message owns it now */
    c->pending_image = NULL;
  }
  return NULL;
}

/* Messages before the conversation proper: the system prompt. */
static size_t chat_first(const chat *c) {
  return c->n_msgs && strcmp(c->msgs[0].role, "system") == 0 ? 1 : 0;
}

/* Drops the oldest exchange: the first user message and everything up to the
 * next user message. Never the last user message. False when nothing can go. */
static bool chat_drop_oldest(chat *c, size_t *out_dropped) {
  size_t first = chat_first(c), end = first + 1;
  while (end < c->n_msgs && strcmp(c->msgs[end].role, "user") != 0) end++;
  if (end >= c->n_msgs) return false;
  for (size_t i = first; i < end; i++) {
    poot_free(c->msgs[i].content);
    poot_free(c->msgs[i].image);
  }
  memmove(c->msgs + first, c->msgs + end, (c->n_msgs - end) * sizeof *c->msgs);
  c->n_msgs -= end - first;
  *out_dropped += end - first;
  return true;
}

/* The conversation rendered with the template (add_generation_prompt) and
 * tokenized as transformers' apply_chat_template does: special tokens parsed,
 * none added. */
static poot_status chat_render(chat *c, poot_token **out_ids, size_t *out_n) {
  poot_model *model = poot_runtime_model(c->rt);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "{\"messages\":[");
  c->n_paths = 0;
  for (size_t i = 0; i < c->n_msgs; i++) {
    poot_strbuf_printf(&sb, "%s{\"role\":\"%s\",\"content\":", i ? "," : "", c->msgs[i].role);
    /* A message with an image is a content list, as transformers' processors
     * pass it: the template writes its image placeholder. */
    if (c->msgs[i].image) {
      poot_strbuf_puts(&sb, "[{\"type\":\"image\"},{\"type\":\"text\",\"text\":");
      c->paths[c->n_paths++] = c->msgs[i].image;
    }
    poot_json_write_string(&sb, c->msgs[i].content, c->msgs[i].len, false);
    poot_strbuf_puts(&sb, c->msgs[i].image ? "}]}" : "}");
  }
  poot_strbuf_puts(&sb, "],\"add_generation_prompt\":true}");
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *vars = NULL;
  char *text = NULL;
  size_t len = 0;
  poot_status st = poot_strbuf_status(&sb);
  if (!st) st = poot_json_parse(&arena, sb.data, sb.len, NULL, &vars);
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.bos_token = poot_model_get_bos_text(model);
  p.eos_token = poot_model_get_eos_text(model);
  p.add_generation_prompt = 1;
  if (!st) st = poot_chat_template_render(c->tpl, vars, &p, &text, &len, NULL);
  poot_tokenizer_encode_options eo = {.add_special = false, .parse_special = true};
  if (!st)
    st = poot_tokenizer_encode(poot_model_get_tokenizer(model), text, len, &eo, out_ids, out_n);
  if (!st && *out_n == 0)
    st = poot_status_make(POOT_INVALID_ARGUMENT, "the chat template rendered an empty prompt");
  if (!st && c->n_paths) {
    poot_token *ids = *out_ids;
    st = poot_tool_vision_expand(c->tv, ids, *out_n, c->n_paths, out_ids, out_n);
    if (st)
      *out_ids = ids;
    else
      poot_free(ids);
  }
  poot_free(text);
  poot_arena_deinit(&arena);
  poot_strbuf_deinit(&sb);
  return st;
}

/* Room kept for a reply: -n, at most half the capacity, or a quarter of it. */
static int64_t reply_room(const chat *c) {
  if (c->f->n > 0) return c->f->n < c->cap / 2 ? c->f->n : c->cap / 2;
  return c->cap / 4 > 1 ? c->cap / 4 : 1;
}

/* Renders the conversation so that it fits with room for a reply, dropping
 * the oldest exchanges (with a notice) when it does not. CAPACITY, with the
 * last user message taken back, when even the system prompt and that message
 * alone do not fit. */
static poot_status chat_fit(chat *c, poot_token **ids, size_t *n, size_t *dropped) {
  const int64_t room = reply_room(c);
  for (;;) {
    poot_status st = chat_render(c, ids, n);
    if (st) {
      chat_clear(c, c->n_msgs - 1); /* the message the template refused */
      return st;
    }
    if ((int64_t)*n + room <= c->cap) return NULL;
    size_t before = *dropped;
    bool can = chat_drop_oldest(c, dropped);
    fprintf(stderr,
            "poot %s: the conversation (%zu tokens, and %lld for a reply) no longer fits the "
            "context of %lld tokens; %s\n",
            CMD, *n, (long long)room, (long long)c->cap,
            can ? "dropping the oldest exchange (/reset starts over, --cap sets a larger context)"
                : "/reset to start over, or give a shorter message or a larger --cap");
    if (can && !c->f->quiet)
      fprintf(stderr, "poot %s: dropped %zu message(s) of the history\n", CMD, *dropped - before);
    poot_free(*ids);
    *ids = NULL;
    if (!can) {
      chat_clear(c, c->n_msgs - 1); /* the message that cannot fit */
      return poot_status_make(POOT_CAPACITY, "the message does not fit the context of %lld tokens",
                              (long long)c->cap);
    }
  }
}

/* ------------------------------------------------------------ one turn */

typedef struct reply_ctx {
  bool quiet; /* --json: nothing streamed */
  size_t printed;
} reply_ctx;

static bool on_token(void *ctx, poot_token id, const char *text, size_t len) {
  (void)id;
  reply_ctx *r = ctx;
  if (!r->quiet && len) {
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    r->printed += len;
  }
  return !chat_interrupted;
}

static void print_stats(const chat *c, const poot_driver_generate_result *res, bool cancelled) {
  size_t gen = res->n_ids;
  fprintf(stderr,
          "poot %s: turn %zu: prompt %zu tokens (%zu reused from the cache) in %.3f s; reply %zu "
          "tokens in %.3f s (%.1f tok/s), %s; %lld of %lld context tokens in use\n",
          CMD, c->turn, res->n_prompt, res->n_reused, res->prefill_s, gen, res->decode_s,
          res->decode_s > 0 && gen > 1 ? (double)(gen - 1) / res->decode_s : 0.0,
          cancelled ? "stopped by Ctrl-C" : poot_tool_stop_reason_name(res->reason),
          (long long)poot_driver_pos(c->drv), (long long)c->cap);
}

static poot_status print_json(const chat *c, const poot_driver_generate_result *res, size_t dropped,
                              bool cancelled) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_printf(&sb, "{\"turn\":%zu,\"reply\":", c->turn);
  poot_json_write_string(&sb, res->text ? res->text : "", res->text_len, false);
  poot_strbuf_printf(&sb,
                     ",\"n_prompt\":%zu,\"n_reused\":%zu,\"n_reply\":%zu,\"reason\":\"%s\","
                     "\"cancelled\":%s,\"dropped\":%zu,\"seed\":%llu,\"probs\":",
                     res->n_prompt, res->n_reused, res->n_ids,
                     poot_tool_stop_reason_name(res->reason), cancelled ? "true" : "false", dropped,
                     (unsigned long long)c->sp.seed);
  poot_tool_write_probs(&sb, res);
  poot_strbuf_puts(&sb, "}\n");
  poot_status st = poot_strbuf_status(&sb);
  if (!st) fwrite(sb.data, 1, sb.len, stdout);
  fflush(stdout);
  poot_strbuf_deinit(&sb);
  return st;
}

/* The user said `text`: fit the conversation, stream the reply, keep it. A
 * reply stopped by Ctrl-C is kept as far as it got. CAPACITY when the message
 * cannot fit (it is not kept); the driver's statuses. */
static poot_status chat_turn(chat *c, const char *text, size_t len) {
  POOT_TRY(chat_add(c, "user", text, len));
  c->turn++;
  poot_token *ids = NULL;
  size_t n = 0, dropped = 0;
  POOT_TRY(chat_fit(c, &ids, &n, &dropped));
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = c->f->n > 0 ? c->f->n : c->cap; /* else the capacity stops it */
  go.sampling = &c->sp;
  go.grammar = c->grammar;
  go.reuse_cache = true;
  go.ignore_stop = c->sp.ignore_eos;
  reply_ctx rc = {.quiet = c->f->json};
  poot_driver_generate_result res;
  chat_interrupted = 0;
  install_sigint(true);
  poot_status st = NULL;
  if (c->n_paths) {
    /* Rows of every image in the conversation; such a turn starts over (the
     * driver's rows entry point reuses no cache). */
    poot_driver_input image;
    st = poot_tool_vision_rows(c->tv, c->paths, c->n_paths, &image);
    if (!st)
      st = poot_driver_generate_with_inputs(c->drv, ids, n, &image, 1, &go, on_token, &rc, &res);
    else
      memset(&res, 0, sizeof res);
  } else {
    st = poot_driver_generate_ids(c->drv, ids, n, &go, on_token, &rc, &res);
  }
  install_sigint(false);
  chat_interrupted = 0;
  poot_free(ids);
  bool cancelled = poot_status_code_of(st) == POOT_CANCELLED;
  if (cancelled) {
    poot_status_free(st);
    st = NULL;
  }
  if (st)
    chat_clear(c, c->n_msgs - 1); /* unanswered: the message is not kept */
  else
    st = chat_add(c, "assistant", res.text ? res.text : "", res.text_len);
  if (!st && c->f->json) st = print_json(c, &res, dropped, cancelled);
  if (!st && !c->f->json) {
    fputc('\n', stdout);
    fflush(stdout);
  }
  if (!st && cancelled && !c->f->quiet) fprintf(stderr, "poot %s: [reply stopped]\n", CMD);
  if (!st && res.reason == POOT_DRIVER_STOP_CAPACITY && !cancelled)
    fprintf(stderr,
            "poot %s: the reply reached the end of the context (%lld tokens); the next turn "
            "drops the oldest exchanges\n",
            CMD, (long long)c->cap);
  if (!st && c->f->stats) print_stats(c, &res, cancelled);
  poot_driver_generate_result_deinit(&res);
  return st;
}

/* ------------------------------------------------------------ the loop */

/* One line from stdin without its line end; false at EOF or on Ctrl-C. */
static bool read_line(char **line, size_t *size, size_t *len) {
  errno = 0;
  ssize_t n = getline(line, size, stdin);
  if (n < 0) return false;
  while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r')) n--;
  (*line)[n] = 0;
  *len = (size_t)n;
  return true;
}

/* /image FILE: checks that the model sees images and that the file decodes,
 * then keeps it for the next user message. A bad image is reported and the
 * conversation goes on. */
static poot_status chat_attach(chat *c, const char *path) {
  while (*path == ' ') path++;
  poot_status st = NULL;
  if (!c->tv) st = poot_tool_vision_open(c->rt, c->f->model, &c->tv);
  poot_image img = {0};
  if (!st) st = poot_image_load(path, &img);
  poot_image_deinit(&img);
  if (!st) {
    char *p = poot_strdup(path);
    if (!p) return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory for an image path");
    poot_free(c->pending_image);
    c->pending_image = p;
    if (!c->f->quiet) fprintf(stderr, "poot %s: %s is attached to your next message\n", CMD, path);
    return NULL;
  }
  poot_status_code code = poot_status_code_of(st);
  if (code == POOT_OUT_OF_MEMORY || code == POOT_DEVICE_LOST || code == POOT_POISONED) return st;
  fprintf(stderr, "poot %s: %s\n", CMD, poot_status_message(st));
  poot_status_free(st);
  return NULL;
}

/* A line is a command (/reset, /exit) or a user turn. *quit at /exit. A
 * message that does not fit is reported and the loop goes on. */
static poot_status chat_line(chat *c, const char *line, size_t len, bool *quit) {
  if (len == 0) return NULL;
  if (!strcmp(line, "/exit") || !strcmp(line, "/quit")) {
    *quit = true;
    return NULL;
  }
  if (!strncmp(line, "/image ", 7)) return chat_attach(c, line + 7);
  if (!strcmp(line, "/reset")) {
    chat_clear(c, chat_first(c));
    if (!c->f->quiet) fprintf(stderr, "poot %s: the conversation is cleared\n", CMD);
    return NULL;
  }
  if (line[0] == '/' && !strchr(line, ' ')) {
    fprintf(stderr,
            "poot %s: unknown command %s (/reset clears the history, /image FILE attaches an "
            "image, /exit quits)\n",
            CMD, line);
    return NULL;
  }
  poot_status st = chat_turn(c, line, len);
  /* A message the context or the template cannot take is not kept, and the
   * conversation goes on; a device's error ends it. */
  poot_status_code code = poot_status_code_of(st);
  if (code == POOT_CAPACITY || code == POOT_INVALID_ARGUMENT || code == POOT_FORMAT ||
      code == POOT_UNSUPPORTED) {
    if (code != POOT_CAPACITY) fprintf(stderr, "poot %s: %s\n", CMD, poot_status_message(st));
    poot_status_free(st);
    st = NULL;
  }
  return st;
}

static poot_status chat_loop(chat *c) {
  bool tty = isatty(STDIN_FILENO);
  if (tty && !c->f->quiet)
    fprintf(stderr,
            "poot %s: /reset clears the history, /exit or Ctrl-D quits, Ctrl-C stops a reply\n",
            CMD);
  char *line = NULL;
  size_t size = 0, len = 0;
  poot_status st = NULL;
  install_sigint(false);
  for (bool quit = false; !st && !quit;) {
    if (tty) {
      fputs("> ", stdout);
      fflush(stdout);
    }
    if (!read_line(&line, &size, &len)) {
      if (tty) fputc('\n', stdout);
      break;
    }
    st = chat_line(c, line, len, &quit);
  }
  free(line);
  return st;
}

/* ------------------------------------------------------------ setup */

static poot_status load_template(chat *c) {
  if (c->f->template_path) {
    char *text = NULL;
    size_t len = 0;
    POOT_TRY(poot_file_read_all(c->f->template_path, &text, &len));
    poot_status st = poot_chat_template_create(text, len, &c->own_tpl);
    poot_free(text);
    if (st) return poot_status_annotate(st, "%s", c->f->template_path);
    c->tpl = c->own_tpl;
    return NULL;
  }
  c->tpl = poot_model_get_chat_template(poot_runtime_model(c->rt));
  if (!c->tpl)
    return poot_status_make(POOT_UNSUPPORTED, "%s has no chat template; give --template FILE.jinja",
                            c->f->model);
  return NULL;
}

static poot_status chat_open(chat *c) {
  const chat_flags *f = c->f;
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = f->model;
  ro.tokenizer_path = f->tokenizer;
  ro.device = f->device;
  uint64_t t0 = poot_time_ns();
  POOT_TRY(poot_runtime_open(&ro, &c->rt));
  poot_model *model = poot_runtime_model(c->rt);
  if (!poot_model_get_tokenizer(model))
    return poot_status_make(POOT_INVALID_ARGUMENT, "%s has no tokenizer", f->model);
  POOT_TRY(load_template(c));
  const poot_model_config *cfg = poot_model_get_config(model);
  if (!f->quiet)
    fprintf(stderr, "poot: loaded %s (%s, %lld layers, vocab %lld) in %.0f ms\n", f->model,
            poot_model_family_name(cfg->family), (long long)cfg->n_layers,
            (long long)cfg->vocab_size, (double)(poot_time_ns() - t0) * 1e-6);
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = f->cap;
  dopt.prefill_chunk = f->chunk;
  dopt.kv_dtype = f->kv;
  POOT_TRY(poot_runtime_create_driver(c->rt, &dopt));
  c->drv = poot_runtime_driver(c->rt);
  c->cap = poot_driver_cap(c->drv);
  const poot_device_caps *caps = poot_runtime_device_caps(c->rt);
  if (!f->quiet) {
    fprintf(stderr, "poot: compiling for %s (%s), context %lld tokens…", caps->backend, caps->name,
            (long long)c->cap);
    fflush(stderr);
  }
  t0 = poot_time_ns();
  POOT_TRY(poot_driver_prepare(c->drv));
  if (!f->quiet) fprintf(stderr, " done in %.0f ms\n", (double)(poot_time_ns() - t0) * 1e-6);
  return NULL;
}

static int chat_main(int argc, char **argv) {
  chat_flags f;
  int rc = parse_flags(argc, argv, &f);
  if (rc >= 0) return rc;
  chat c = {.f = &f};
  if ((rc = poot_tool_sampling_params(CMD, &f.sampling, 0, &c.sp)) >= 0) return rc;
  if ((rc = poot_tool_sampling_grammar(CMD, &f.sampling, &c.grammar)) >= 0) return rc;
  char demo[PATH_MAX + 64];
  if (!(f.model = poot_tool_default_model(CMD, f.model, demo, sizeof demo))) {
    chat_deinit(&c);
    return POOT_EXIT_FAIL;
  }
  poot_status st = chat_open(&c);
  if (!st) {
    uint32_t vocab = (uint32_t)poot_model_get_config(poot_runtime_model(c.rt))->vocab_size;
    poot_status bad = poot_sampling_params_validate(&c.sp, vocab);
    if (bad) {
      rc = poot_tool_usage_error(CMD, "%s", poot_status_message(bad));
      poot_status_free(bad);
      chat_deinit(&c);
      return rc;
    }
  }
  if (!st) st = poot_tool_sampling_seed(CMD, &c.sp, f.quiet);
  if (!st && f.system) st = chat_add(&c, "system", f.system, strlen(f.system));
  if (!st && f.image) {
    st = poot_tool_vision_open(c.rt, f.model, &c.tv);
    if (!st) c.pending_image = poot_strdup(f.image);
    if (!st && !c.pending_image) st = poot_status_make(POOT_OUT_OF_MEMORY, "image path");
  }
  if (!st && f.prompt) {
    st = chat_turn(&c, f.prompt, strlen(f.prompt));
  } else if (!st) {
    st = chat_loop(&c);
  }
  rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  chat_deinit(&c);
  return rc;
}

const poot_tool_command poot_tool_cmd_chat = {
    "chat", "talk with a model through its chat template (interactive or scripted)", chat_main};
