/* src/serve/serve_impl.h — the server's parts (never leaves src/serve/ and
 * its tests). One file per part:
 *
 *   http.c      the thin wrapper over libmicrohttpd
 *   request.c   the request parser: JSON body → poot__serve_request
 *   encoder.c   /v1/embeddings and /v1/rerank: their parser and the encoder runs
 *   page.c      the chat page's static files
 *   job.c       what both engines do with jobs: the queue, a generated id, the end
 *   engine.c    the engine thread, its bounded queue and fault recovery
 *   engine_batch.c  the batched engine (--max-seqs N > 1) over poot_batch
 *   response.c  the JSON of responses, chunks and errors
 *   metrics.c   counters and histograms, Prometheus text
 *   server.c    routing, the API key, limits: glue of the above */
#ifndef POOT_SERVE_IMPL_H
#define POOT_SERVE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/driver.h"
#include "poot/llm/grammar.h"
#include "poot/llm/sampling.h"
#include "poot/llm/toolcall.h"
#include "poot/runtime.h"
#include "poot/serve.h"

/* ------------------------------------------------------------------ http */

typedef struct poot__http_server poot__http_server;

typedef struct poot__http_request {
  const char *method; /* "GET", "POST", ... */
  const char *url;    /* the path, without the query */
  const char *authorization; /* the Authorization header or NULL */
  const char *body;          /* NUL-terminated copy; "" when none */
  size_t body_len;
  bool body_too_large; /* the body passed max_body_bytes (it was not kept) */
  int fd;              /* the client's socket, to notice a hang-up */
} poot__http_request;

/* A streamed body: `read` fills buf with up to cap bytes; returns the count,
 * 0 when nothing is ready yet (called again), -1 at the end, -2 to abort.
 * `done` is called once when the response is finished or the client went
 * away (on the connection's thread). */
typedef struct poot__http_stream {
  long (*read)(void *ctx, char *buf, size_t cap);
  void (*done)(void *ctx);
  void *ctx;
} poot__http_stream;

typedef struct poot__http_response {
  unsigned status;
  const char *content_type; /* static */
  char *body;               /* poot_malloc'ed; the wrapper frees it */
  size_t body_len;
  poot__http_stream stream; /* read != NULL: a streamed body instead */
  const char *header_name, *header_value; /* one more header (static), or NULL */
} poot__http_response;

/* Called on the connection's thread once the whole body is in; fills out. */
typedef void (*poot__http_handler)(void *ctx, const poot__http_request *req,
                                   poot__http_response *out);

typedef struct poot__http_options {
  const char *host; /* IPv4 */
  uint16_t port;
  size_t max_body_bytes;
  uint32_t max_connections;
  uint32_t timeout_s;
} poot__http_options;

POOT_MUST_USE poot_status poot__http_start(const poot__http_options *options,
                                           poot__http_handler handler, void *ctx,
                                           poot__http_server **out_server);
uint16_t poot__http_port(const poot__http_server *server);
void poot__http_stop(poot__http_server *server); /* NULL-safe */
/* True when the peer of fd closed its end (a hang-up seen without reading). */
bool poot__http_peer_gone(int fd);

/* --------------------------------------------------------------- request */

typedef enum poot__serve_kind {
  POOT_SERVE_CHAT = 0,   /* /v1/chat/completions */
  POOT_SERVE_COMPLETION, /* /v1/completions */
} poot__serve_kind;

typedef struct poot__serve_limits {
  size_t max_messages;
  int64_t max_tokens; /* largest max_tokens accepted */
  uint32_t max_n;
  size_t max_prompts; /* prompts of one /v1/completions request */
} poot__serve_limits;

/* tool_choice: "auto" (the default), "none", "required", or a named function. */
typedef enum poot__serve_tool_choice {
  POOT_TOOL_CHOICE_AUTO = 0,
  POOT_TOOL_CHOICE_NONE,
  POOT_TOOL_CHOICE_REQUIRED,
  POOT_TOOL_CHOICE_FUNCTION,
} poot__serve_tool_choice;

/* An image of a chat request: its encoded bytes (PNG, JPEG, WebP) from a
 * data: URL, in the order the messages give them. */
typedef struct poot__serve_image {
  uint8_t *data;
  size_t len;
} poot__serve_image;

#define POOT_SERVE_MAX_IMAGES 16

/* One prompt of /v1/completions: text, or token ids. */
typedef struct poot__serve_prompt {
  const char *text; /* NULL when ids */
  size_t len;
  const poot_token *ids;
  size_t n_ids;
} poot__serve_prompt;

/* A parsed request; everything lives in the parse's arena. */
typedef struct poot__serve_request {
  poot__serve_kind kind;
  const char *model; /* NULL when absent */
  /* chat: the messages with each content made a string (content parts
   * joined), ready for the template; tools as given (or NULL). */
  poot_json *messages;
  /* the same with each assistant tool call's "arguments" as the client sent
   * it (a JSON string); == messages when no call had string arguments. The
   * template gets `messages` (arguments as objects, as transformers does)
   * and this when that form fails to render. */
  poot_json *messages_raw;
  const poot_json *tools; /* checked: poot_toolcall_tools_check */
  poot__serve_image images[POOT_SERVE_MAX_IMAGES]; /* image_url parts, in order */
  size_t n_images;
  poot__serve_tool_choice tool_choice; /* AUTO when absent */
  const char *tool_choice_name;        /* FUNCTION: the function's name */
  bool parallel_tool_calls;            /* default true */
  /* completions */
  poot__serve_prompt *prompts;
  size_t n_prompts;
  int64_t max_tokens; /* -1: not given */
  uint32_t n;
  bool stream, include_usage;
  bool logprobs;        /* chat: logprobs; completions: logprobs given */
  int32_t top_logprobs; /* alternatives per token */
  bool echo;            /* completions: the prompt before the text (refused today) */
  /* response_format as compact JSON text (NULL: none or "text"). */
  const char *response_format;
  size_t response_format_len;
  bool seed_given;
  poot_sampling_params sampling; /* OpenAI's defaults where not given */
} poot__serve_request;

/* Parses a request body. INVALID_ARGUMENT with a message naming the field
 * and *out_param the field's name (a static string or in the arena; NULL
 * when the body as a whole is wrong); OUT_OF_MEMORY. Unknown fields are
 * ignored. */
POOT_MUST_USE poot_status poot__serve_request_parse(poot_arena *arena, const char *body,
                                                    size_t len, poot__serve_kind kind,
                                                    const poot__serve_limits *limits,
                                                    poot__serve_request *out_request,
                                                    const char **out_param);

/* What the request parsers (request.c, encoder.c) share: a refusal is
 * INVALID_ARGUMENT with the message, *out_param set to the field's name
 * (param: static or in the arena); running out of memory while reading is
 * OUT_OF_MEMORY; a member that is absent or null counts as not given. */
POOT_MUST_USE poot_status poot__serve_bad(const char **out_param, const char *param,
                                          const char *fmt, ...) POOT_PRINTF(3, 4);
POOT_MUST_USE poot_status poot__serve_oom(void);
bool poot__serve_is_null(const poot_json *v);
/* Parses a request body that must be a JSON object (depth at most 64):
 * INVALID_ARGUMENT "the body is not valid JSON (…)" or "… must be a JSON
 * object"; OUT_OF_MEMORY. The tree lives in the arena. */
POOT_MUST_USE poot_status poot__serve_parse_object(poot_arena *arena, const char *body, size_t len,
                                                   const char **out_param,
                                                   const poot_json **out_root);
/* A list of token ids (integers in [0, 2^31), at least one) into *out (ids
 * in the arena); a refusal names `field` ("prompt", "input") and the list's
 * index. */
POOT_MUST_USE poot_status poot__serve_token_ids(poot_arena *arena, const char **out_param,
                                                const char *field, const poot_json *list,
                                                size_t index, poot__serve_prompt *out);

/* ---------------------------------------------------------------- encoder */

typedef enum poot__serve_encode_kind {
  POOT_SERVE_EMBED = 0, /* /v1/embeddings */
  POOT_SERVE_RERANK,    /* /v1/rerank */
} poot__serve_encode_kind;

/* A parsed /v1/embeddings or /v1/rerank request (everything in the arena). */
typedef struct poot__serve_encode_request {
  poot__serve_encode_kind kind;
  const char *model;           /* NULL when absent */
  poot__serve_prompt *inputs;  /* embeddings: texts or token ids; rerank: the documents */
  size_t n_inputs;
  bool base64;                 /* encoding_format "base64" */
  int64_t dimensions;          /* -1: not given */
  bool truncate;               /* cut a text past the model's positions instead of 400 */
  const char *query;           /* rerank */
  size_t query_len;
  int64_t top_n;               /* rerank: -1 all */
  bool return_documents;       /* rerank */
} poot__serve_encode_request;

/* Parses the body; errors as poot__serve_request_parse. At most max_inputs
 * inputs (documents). */
POOT_MUST_USE poot_status poot__serve_encode_request_parse(poot_arena *arena, const char *body,
                                                           size_t len, poot__serve_encode_kind kind,
                                                           size_t max_inputs,
                                                           poot__serve_encode_request *out,
                                                           const char **out_param);

/* Runs the request on the runtime's encoder (the caller holds the device)
 * and writes the whole response into sb. INVALID_ARGUMENT (param set) for
 * what the model cannot do (no classifier, dimensions, an id past the
 * vocabulary, a text past its positions); the driver's statuses. */
POOT_MUST_USE poot_status poot__serve_encode_run(poot_runtime *rt, const char *model_name,
                                                 const poot__serve_encode_request *r,
                                                 poot_strbuf *sb, const char **out_param);

/* ------------------------------------------------------------------- page */

/* True for a URL the page may serve: "/" or "/NAME.EXT" of a known type. */
bool poot__serve_page_path(const char *url);
/* Fills out with the file of `dir` the URL names ("/": index.html);
 * returns 200, or 404 when there is no such file (out untouched). */
unsigned poot__serve_page(const char *dir, const char *url, poot__http_response *out);

/* ---------------------------------------------------------------- metrics */

typedef enum poot__serve_outcome {
  POOT_OUTCOME_OK = 0,
  POOT_OUTCOME_CANCELLED,    /* the client went away */
  POOT_OUTCOME_CLIENT_ERROR, /* 4xx but 429 */
  POOT_OUTCOME_REJECTED,     /* 429: the queue was full */
  POOT_OUTCOME_ERROR,        /* 5xx */
  POOT_OUTCOME_COUNT
} poot__serve_outcome;

typedef enum poot__serve_endpoint {
  POOT_ENDPOINT_CHAT = 0,
  POOT_ENDPOINT_COMPLETIONS,
  POOT_ENDPOINT_MODELS,
  POOT_ENDPOINT_HEALTH,
  POOT_ENDPOINT_METRICS,
  POOT_ENDPOINT_EMBEDDINGS,
  POOT_ENDPOINT_RERANK,
  POOT_ENDPOINT_PAGE, /* the chat page's static files (GET /, /chat/…) */
  POOT_ENDPOINT_OTHER,
  POOT_ENDPOINT_COUNT
} poot__serve_endpoint;

enum { POOT_HIST_BUCKETS = 14 };

typedef struct poot__serve_hist {
  uint64_t counts[POOT_HIST_BUCKETS + 1]; /* the last: +Inf */
  double sum;
  uint64_t count;
} poot__serve_hist;

typedef struct poot__serve_metrics {
  pthread_mutex_t mu;
  uint64_t requests[POOT_ENDPOINT_COUNT][POOT_OUTCOME_COUNT];
  uint64_t prompt_tokens, generation_tokens;
  uint64_t recoveries_reset, recoveries_rebuild, faults_failed;
  poot__serve_hist ttft, itl, latency;
  atomic_uint_fast64_t queue_depth, running;
  /* the batched engine's KV pool (both 0 with the single engine) */
  atomic_uint_fast64_t kv_blocks_used, kv_blocks_free;
  atomic_uint_fast64_t prefix_tokens_reused; /* prompt tokens matched in the KV pool */
} poot__serve_metrics;

void poot__serve_metrics_init(poot__serve_metrics *m);
void poot__serve_metrics_deinit(poot__serve_metrics *m);
void poot__serve_metrics_request(poot__serve_metrics *m, poot__serve_endpoint e,
                                 poot__serve_outcome o);
void poot__serve_metrics_tokens(poot__serve_metrics *m, uint64_t prompt, uint64_t generated);
void poot__serve_metrics_observe(poot__serve_metrics *m, poot__serve_hist *h, double seconds);
void poot__serve_metrics_recovery(poot__serve_metrics *m, bool rebuild, bool failed);
/* Appends the Prometheus text exposition. */
void poot__serve_metrics_write(poot__serve_metrics *m, poot_strbuf *sb);

/* -------------------------------------------------------------------- job */

/* One generated choice, as the engine reports it when it ends. */
typedef struct poot__serve_choice_end {
  uint32_t index;
  const char *finish_reason; /* "stop", "length" */
  size_t n_generated;
  const poot_sampling_result *probs; /* n_generated entries, or NULL */
  const poot_token *ids;             /* n_generated */
} poot__serve_choice_end;

/* What the engine calls while it runs a job (on the engine thread). The
 * server formats; the engine never writes JSON. */
typedef struct poot__serve_sink {
  /* A generated id of choice `index`, with its logprobs when the request
   * asked for them (else NULL; borrowed for the call). Before its text. */
  void (*on_token)(void *ctx, uint32_t index, poot_token id, const poot_sampling_result *probs);
  void (*on_text)(void *ctx, uint32_t index, const char *text, size_t len);
  void (*on_choice_end)(void *ctx, const poot__serve_choice_end *end);
  void (*on_job_end)(void *ctx, poot_status status); /* consumes status; NULL = OK */
} poot__serve_sink;

/* A request as the engine sees it: prompts as ids, n choices each. The
 * HTTP side fills it, submits it and waits; the engine reads the inputs,
 * calls the sink and sets nothing else. `cancelled` may be set at any time
 * from any thread. */
typedef struct poot__serve_job poot__serve_job;
struct poot__serve_job {
  poot_token **prompts; /* n_prompts arrays (poot_malloc'ed by the server) */
  size_t *prompt_lens;
  size_t n_prompts;
  uint32_t n;
  int64_t max_tokens;
  poot_sampling_params sampling; /* seed resolved */
  const poot_grammar *grammar;   /* borrowed, or NULL */
  /* Optional, called once on the engine thread (which owns the device)
   * before the first choice: it may set `inputs` (an image's rows bound as
   * the prompt's "embeds", poot_driver_generate_with_inputs). A failure ends
   * the job with it. */
  poot_status (*prepare)(poot__serve_job *job);
  const poot_driver_input *inputs;
  size_t n_inputs;
  poot__serve_sink sink;
  void *sink_ctx;
  atomic_bool cancelled;
  uint64_t enqueued_ns;
  uint64_t first_token_ns; /* set by the engine */
  uint64_t last_token_ns;
  size_t prompt_tokens, generated_tokens; /* set by the engine */
};

/* Both engines' job bookkeeping (job.c). */

/* The bounded queue jobs wait in (a ring; the caller holds its engine's
 * lock). Every change publishes the depth to metrics->queue_depth. */
typedef struct poot__serve_queue {
  poot__serve_job **ring;
  size_t cap, head, len;
  poot__serve_metrics *metrics; /* borrowed */
} poot__serve_queue;

/* cap 0: 64. OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__serve_queue_init(poot__serve_queue *q, size_t cap,
                                                 poot__serve_metrics *metrics);
void poot__serve_queue_deinit(poot__serve_queue *q);
/* Appends the job and stamps its enqueued_ns. CANCELLED when `stopping`;
 * CAPACITY when full (answer 429). */
POOT_MUST_USE poot_status poot__serve_queue_push(poot__serve_queue *q, poot__serve_job *job,
                                                 bool stopping);
/* The oldest job (NULL when empty); pop also takes it out. */
poot__serve_job *poot__serve_queue_peek(const poot__serve_queue *q);
poot__serve_job *poot__serve_queue_pop(poot__serve_queue *q);
/* Takes the cancelled jobs out (a client that went away while waiting frees
 * its place) into out (room for q->len); returns their count. */
size_t poot__serve_queue_purge_cancelled(poot__serve_queue *q, poot__serve_job **out);
/* Ends every queued job CANCELLED ("the server is stopping"). */
void poot__serve_queue_drain(poot__serve_queue *q);

/* A choice's generated ids (poot_malloc'ed; the engine frees ids). */
typedef struct poot__serve_ids {
  poot_token *ids;
  size_t n, cap;
} poot__serve_ids;

/* A generated id of `job`: appended to gen, the time to the first token or
 * since the last one observed, generated_tokens counted. False (nothing
 * done) when gen cannot grow. The caller then calls sink.on_token. */
bool poot__serve_job_token(poot__serve_metrics *m, poot__serve_job *job, poot__serve_ids *gen,
                           poot_token id);
/* The end of a job: its token counts to the metrics, then sink.on_job_end
 * (which consumes status; NULL = OK). */
void poot__serve_job_end(poot__serve_metrics *m, poot__serve_job *job, poot_status status);
/* The sampler of choice `index` of a job: its parameters with the seed
 * resolved and offset by index (the n choices of a seeded request differ,
 * and repeat). IO when a random seed cannot be drawn. */
POOT_MUST_USE poot_status poot__serve_choice_sampling(const poot__serve_job *job, uint32_t index,
                                                      poot_sampling_params *out);
/* After a recovery from the fault `code` by a reset or a new device context
 * (`rebuild`): a warning line, and the recovery counted unless it failed
 * (st: its status, borrowed; NULL when it worked). */
void poot__serve_recovered(poot__serve_metrics *m, poot_status_code code, bool rebuild,
                           poot_status st);
/* A status the engines recover from: KERNEL_FAULT, NEEDS_RESET (a reset);
 * POISONED, DEVICE_LOST, TIMEOUT (a new device context). */
bool poot__serve_is_device_fault(poot_status_code code);

/* ----------------------------------------------------------------- engine
 *
 * The engine: the one object that runs jobs on the device, behind five
 * calls: a thread over the runtime's driver, one sequence at a time
 * (engine.c), or over a batched runner at max_seqs > 1 (engine_batch.c).
 * Both recover device faults (docs/serve.md "Faults"). */

typedef struct poot__serve_engine poot__serve_engine;

typedef struct poot__serve_engine_options {
  uint32_t max_queue;
  uint32_t max_seqs;   /* > 1: the batched engine (engine_batch.c) */
  int64_t max_seq_len; /* the batched engine's positions per sequence (0: its default) */
  const char *inject_fault; /* see poot_server_options */
  int64_t inject_step, inject_count;
} poot__serve_engine_options;

POOT_MUST_USE poot_status poot__serve_engine_create(poot_runtime *runtime,
                                                    poot__serve_metrics *metrics,
                                                    const poot__serve_engine_options *options,
                                                    poot__serve_engine **out_engine);
/* Queues a job (borrowed until its sink's on_job_end). CAPACITY when the
 * queue is full (answer 429); CANCELLED after stop. */
POOT_MUST_USE poot_status poot__serve_engine_submit(poot__serve_engine *engine,
                                                    poot__serve_job *job);
/* The KV capacity a sequence has (prompt + generated). */
int64_t poot__serve_engine_capacity(const poot__serve_engine *engine);
/* Ends the thread: queued jobs end CANCELLED, the running one is cancelled. */
void poot__serve_engine_stop(poot__serve_engine *engine);
void poot__serve_engine_destroy(poot__serve_engine *engine); /* NULL-safe; stops */

/* The batched engine behind the same five calls (engine.c forwards to it
 * when max_seqs > 1). It runs what poot_batch runs: every sampling field,
 * penalties and grammars (response_format, forced tool calls) included, but
 * no images (the server answers those 400 before they come). */
typedef struct poot__serve_engine_batch poot__serve_engine_batch;
POOT_MUST_USE poot_status poot__serve_engine_batch_create(poot_runtime *runtime,
                                                          poot__serve_metrics *metrics,
                                                          const poot__serve_engine_options *options,
                                                          poot__serve_engine_batch **out_engine);
POOT_MUST_USE poot_status poot__serve_engine_batch_submit(poot__serve_engine_batch *engine,
                                                          poot__serve_job *job);
int64_t poot__serve_engine_batch_capacity(const poot__serve_engine_batch *engine);
void poot__serve_engine_batch_stop(poot__serve_engine_batch *engine);
void poot__serve_engine_batch_destroy(poot__serve_engine_batch *engine); /* NULL-safe */

/* --------------------------------------------------------------- response */

/* OpenAI's error object. type: "invalid_request_error", "authentication_error",
 * "rate_limit_error", "server_error"... param and code may be NULL. */
void poot__serve_write_error(poot_strbuf *sb, const char *message, const char *type,
                             const char *param, const char *code);
/* The assistant message's fields after "role" (",\"content\":…"): the one
 * place where a whole reply becomes the message. With `params` (NULL: the
 * text is the content) the tool-call and reasoning parser splits it into
 * "content" (null when empty and there are calls), "reasoning_content" (when
 * any) and "tool_calls"; *out_calls says whether there were calls. A parse
 * that fails (a bound passed) leaves the whole text as the content. */
void poot__serve_write_message_fields(poot_strbuf *sb, const poot_toolcall_params *params,
                                      const char *text, size_t len, bool *out_calls);
/* One tool call as OpenAI writes it: {"index":i,"id":…,"type":"function",
 * "function":{"name":…,"arguments":"…"}} ("index" only when index ≥ 0). */
void poot__serve_write_tool_call(poot_strbuf *sb, const poot_toolcall *call, long index);
/* Logprobs of generated ids: chat's {"content":[…]} or completions' object. */
void poot__serve_write_logprobs(poot_strbuf *sb, const poot_tokenizer *tok, poot__serve_kind kind,
                                const poot_token *ids, const poot_sampling_result *probs,
                                size_t n, int32_t top);

#endif /* POOT_SERVE_IMPL_H */
