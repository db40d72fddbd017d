/* poot/serve.h — the OpenAI-compatible HTTP server (DESIGN §8; docs/serve.md).
 *
 * A server runs one model through one poot_runtime: HTTP through Debian's
 * libmicrohttpd (one thread per connection), and one engine thread that owns
 * the runtime's device, engine and driver and takes requests from a bounded
 * queue. Today the engine runs one sequence at a time (the driver's B = 1);
 * the batched scheduler replaces the engine behind the same internal
 * interface (src/serve/serve_impl.h, "The engine").
 *
 * Endpoints: POST /v1/chat/completions, POST /v1/completions, GET /v1/models,
 * GET /health, GET /metrics (Prometheus text). Errors use OpenAI's shape
 * {"error": {"message", "type", "param", "code"}}.
 *
 * Thread safety: create, start, stop and destroy from one thread; the server
 * itself runs on its own threads between start and stop. */
#ifndef POOT_SERVE_H
#define POOT_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/chat_template.h"
#include "poot/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_server poot_server;

typedef struct poot_server_options {
  const char *host;          /* an IPv4 address to bind; NULL → "127.0.0.1" (borrowed) */
  uint16_t port;             /* 0 → a free port (poot_server_port tells which) */
  const char *api_key;       /* NULL: no key; else "Authorization: Bearer KEY" (borrowed) */
  const char *model_name;    /* the id /v1/models lists (borrowed); NULL → "model" */
  /* The model's vision tower (poot_vision_open; borrowed, it must outlive
   * the server), or NULL: chat messages with image_url parts then answer
   * 400. The tower runs on the engine's thread over the runtime's device. */
  struct poot_vision *vision;
  /* The chat page's folder (borrowed): GET / serves its index.html and GET
   * /NAME its other files (names of letters, digits, '-', '_' and one '.';
   * nothing else is reachable). NULL: no page (404). */
  const char *page_dir;
  uint32_t max_queue;        /* requests waiting for the engine; 0 → 64 */
  uint32_t max_seqs;         /* sequences run at once: > 1 runs the batched engine */
  size_t max_body_bytes;     /* larger bodies are 413; 0 → 4 MiB */
  uint32_t max_messages;     /* messages of one chat request; 0 → 1,024 */
  int64_t max_tokens;        /* the largest max_tokens a request may ask; 0 → the capacity */
  uint32_t max_n;            /* choices of one request; 0 → 8 */
  uint32_t max_connections;  /* open connections (one thread each); 0 → 64 */
  uint32_t timeout_s;        /* a connection idle this long is closed; 0 → 60 */
  /* Test only: inject a fault into the step that produces generated token
   * `inject_step` (1-based) of the next `inject_count` requests:
   * "kernel_fault" (a token id past the vocabulary makes the device's
   * gather trap) or "device_lost" (the next Vulkan submission reports a lost
   * device). NULL: none. */
  const char *inject_fault;
  int64_t inject_step;
  int64_t inject_count;
} poot_server_options;

static inline poot_server_options poot_server_options_default(void) {
  poot_server_options o = {.host = NULL,
                           .port = 8080,
                           .api_key = NULL,
                           .model_name = NULL,
                           .vision = NULL,
                           .page_dir = NULL,
                           .max_queue = 0,
                           .max_seqs = 1,
                           .max_body_bytes = 0,
                           .max_messages = 0,
                           .max_tokens = 0,
                           .max_n = 0,
                           .max_connections = 0,
                           .timeout_s = 0,
                           .inject_fault = NULL,
                           .inject_step = 0,
                           .inject_count = 1};
  return o;
}

/* Creates a server over `runtime` (borrowed; it must have a driver and a
 * tokenizer, and outlive the server) with the chat template `tpl` (borrowed;
 * NULL: the model's own, and /v1/chat/completions answers 400 when the
 * model has none). Nothing listens yet. INVALID_ARGUMENT naming a bad
 * option; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_server_create(poot_runtime *runtime, const poot_chat_template *tpl,
                                             const poot_server_options *options,
                                             poot_server **out_server);

/* Starts the engine thread and listens. IO naming the address when it cannot
 * bind; INVALID_ARGUMENT for a host that is not an IPv4 address. */
POOT_MUST_USE poot_status poot_server_start(poot_server *server);

/* The port listened on (after start; the chosen one when options.port is 0). */
uint16_t poot_server_port(const poot_server *server);

/* Stops listening, cancels the queued and running requests and joins the
 * threads. Idempotent. */
void poot_server_stop(poot_server *server);

/* Stops and frees the server. NULL-safe. */
void poot_server_destroy(poot_server *server);

#ifdef __cplusplus
}
#endif

#endif /* POOT_SERVE_H */
