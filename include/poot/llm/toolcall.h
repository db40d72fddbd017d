/* poot/llm/toolcall.h — turns a model's generated text into the OpenAI chat
 * message shape: plain `content`, `reasoning_content` (what a reasoning model
 * writes inside <think> … </think>) and `tool_calls` (each with an id, the
 * function's name and its arguments as compact JSON text), both for a whole
 * reply and incrementally while it streams (docs/toolcalls.md).
 *
 * One parser serves both: the whole-reply call feeds the reply as a single
 * piece to a stream and finishes it, and a stream's result never depends on
 * how its text was split into pieces. The formats (how a model writes a call):
 *
 *   LLAMA3   the reply is a JSON object {"name": …, "parameters": …}
 *            (or "arguments"), optionally after <|python_tag|>; several may
 *            follow each other, separated by ';' or whitespace
 *   HERMES   <tool_call>{"name": …, "arguments": …}</tool_call>, anywhere in
 *            the reply, any number in a row (Qwen 2.5, Qwen 3, Hermes,
 *            Granite 4, …)
 *   MISTRAL  [TOOL_CALLS] followed by a JSON array of {"name", "arguments"},
 *            or by name[ARGS]{…} (optionally name[CALL_ID]id[ARGS]{…}),
 *            repeated for several calls
 *   NONE     no calls: everything is content
 *
 * Text that looks like a call but is not one (invalid JSON, no "name", a
 * marker inside prose) stays in the content unchanged. Thread safety: a
 * stream is used by one thread at a time; separate streams are independent. */
#ifndef POOT_LLM_TOOLCALL_H
#define POOT_LLM_TOOLCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum poot_toolcall_format {
  POOT_TOOLCALL_FORMAT_NONE = 0,
  POOT_TOOLCALL_FORMAT_LLAMA3,
  POOT_TOOLCALL_FORMAT_HERMES,
  POOT_TOOLCALL_FORMAT_MISTRAL,
  POOT_TOOLCALL_FORMAT_COUNT
} poot_toolcall_format;

/* How the model marks its reasoning. NONE turns reasoning parsing off (all
 * text is content or calls). */
typedef enum poot_toolcall_reasoning {
  POOT_TOOLCALL_REASONING_NONE = 0,
  POOT_TOOLCALL_REASONING_THINK,         /* <think> … </think> (Qwen 3, DeepSeek-R1, …) */
  POOT_TOOLCALL_REASONING_MISTRAL_THINK, /* [THINK] … [/THINK] (Magistral, Ministral 3) */
  POOT_TOOLCALL_REASONING_COUNT
} poot_toolcall_reasoning;

/* Parser parameters. Initialize with poot_toolcall_params_default(). */
typedef struct poot_toolcall_params {
  poot_toolcall_format format;       /* NONE */
  poot_toolcall_reasoning reasoning; /* NONE */
  /* The prompt already opened the reasoning block (the template's generation
   * prompt ends with <think>): the reply starts inside it and only the
   * closing marker appears. See poot_toolcall_prompt_opens_reasoning(). */
  bool starts_in_reasoning; /* false */
  /* Tool-call ids are derived from this seed and the call's index, so a
   * request that passes its own counter or seed gets the same ids on every
   * run: "call_" and 24 letters and digits (MISTRAL: 9 letters and digits,
   * the length Mistral's templates insist on when the call comes back). */
  uint64_t id_seed; /* 0 */
  /* Bounds. 0 picks the default named beside each. max_held caps the text
   * held back while it could still be a call or a marker (a whole call is
   * held until it is complete); max_calls caps the calls of one reply. */
  size_t max_held;    /* bytes; 1 MiB */
  uint32_t max_calls; /* 128 */
} poot_toolcall_params;

void poot_toolcall_params_default(poot_toolcall_params *params);

/* Sets params->format and params->reasoning from a model's chat template
 * text (len bytes, need not be NUL-terminated): the markers the template
 * renders calls and reasoning with. A template with tool support in another
 * format, or none, gives FORMAT_NONE; one without reasoning markers gives
 * REASONING_NONE. Never fails. */
void poot_toolcall_params_detect(poot_toolcall_params *params, const char *template_text,
                                 size_t len);

/* True when a rendered prompt (len bytes) ends, ignoring trailing whitespace,
 * with the reasoning open marker of params->reasoning: the reply will start
 * inside the reasoning block (set params->starts_in_reasoning). */
bool poot_toolcall_prompt_opens_reasoning(const poot_toolcall_params *params, const char *prompt,
                                          size_t len);

/* Format names for flags and logs: "none", "llama3", "hermes", "mistral"
 * ("qwen" is read as "hermes"). INVALID_ARGUMENT naming the known ones. */
const char *poot_toolcall_format_name(poot_toolcall_format format);
POOT_MUST_USE poot_status poot_toolcall_format_from_name(const char *name,
                                                         poot_toolcall_format *out_format);
const char *poot_toolcall_reasoning_name(
    poot_toolcall_reasoning reasoning); /* "none", "think", "mistral" */

/* One parsed call. Strings are NUL-terminated and owned by the stream (or
 * result) that produced them. */
typedef struct poot_toolcall {
  const char *id;   /* "call_…" */
  const char *name; /* the function name */
  size_t name_len;
  const char *arguments; /* compact JSON text of an object, re-serialized */
  size_t arguments_len;
} poot_toolcall;

/* A reply split into its parts. content and reasoning are NUL-terminated
 * (possibly empty, never NULL). Whitespace that only separated a part from a
 * marker or a call is dropped (docs/toolcalls.md, "Whitespace"). */
typedef struct poot_toolcall_result {
  const char *content;
  size_t content_len;
  const char *reasoning;
  size_t reasoning_len;
  const poot_toolcall *calls;
  size_t call_count;
  struct poot_toolcall_stream *owner_; /* private: what poot_toolcall_result_deinit frees */
} poot_toolcall_result;

typedef struct poot_toolcall_stream poot_toolcall_stream;

/* What one feed (or the finish) adds, in order: content pieces, reasoning
 * pieces and complete calls (OpenAI's streamed deltas). Consecutive text of
 * one kind comes as one piece. */
typedef enum poot_toolcall_delta_kind {
  POOT_TOOLCALL_DELTA_CONTENT = 0,
  POOT_TOOLCALL_DELTA_REASONING,
  POOT_TOOLCALL_DELTA_CALL
} poot_toolcall_delta_kind;

typedef struct poot_toolcall_delta {
  poot_toolcall_delta_kind kind;
  const char *text; /* CONTENT / REASONING: the piece (not NUL-terminated) */
  size_t len;
  uint32_t call_index;       /* CALL: the call's index in the reply (0, 1, …) */
  const poot_toolcall *call; /* CALL: the complete call (id, name, arguments) */
} poot_toolcall_delta;

/* Borrowed from the stream until its next feed, finish or destroy. */
typedef struct poot_toolcall_deltas {
  const poot_toolcall_delta *items;
  size_t count;
} poot_toolcall_deltas;

/* Copies params (NULL: defaults). INVALID_ARGUMENT for a format or reasoning
 * value out of range; OUT_OF_MEMORY. On failure *out_stream is NULL. */
POOT_MUST_USE poot_status poot_toolcall_stream_create(const poot_toolcall_params *params,
                                                      poot_toolcall_stream **out_stream);
void poot_toolcall_stream_destroy(poot_toolcall_stream *stream); /* NULL-safe */

/* Feeds one generated piece (any split: text that could still begin a
 * marker or a call, an unfinished call and an unfinished UTF-8 sequence at
 * the end are held back until they cannot). A call is emitted once, whole,
 * when its text is complete and valid. Returns:
 *  CAPACITY          the held-back text passed max_held, or the reply made
 *                    more than max_calls calls; the message names the bound
 *  INVALID_ARGUMENT  the stream was finished, or failed earlier
 *  OUT_OF_MEMORY
 * After a failure the stream accepts nothing more (destroy it; what was
 * emitted before stays valid). *out is empty on failure. */
POOT_MUST_USE poot_status poot_toolcall_stream_feed(poot_toolcall_stream *stream, const char *piece,
                                                    size_t len, poot_toolcall_deltas *out);
/* The reply ended: resolves what was held back (an unfinished call or marker
 * becomes content) and emits it. The same statuses as feed. */
POOT_MUST_USE poot_status poot_toolcall_stream_finish(poot_toolcall_stream *stream,
                                                      poot_toolcall_deltas *out);
/* Everything emitted so far, joined (after finish: the whole reply's
 * result). Borrowed until the next feed, finish or destroy; owner_ is NULL
 * (do not deinit it). */
void poot_toolcall_stream_result(const poot_toolcall_stream *stream, poot_toolcall_result *out);

/* The whole-reply parse: text (len bytes) → content, reasoning and calls.
 * params NULL: defaults. The statuses of feed. On success the caller owns
 * *out and frees it with poot_toolcall_result_deinit(); on failure *out is
 * empty. */
POOT_MUST_USE poot_status poot_toolcall_parse(const poot_toolcall_params *params, const char *text,
                                              size_t len, poot_toolcall_result *out);
void poot_toolcall_result_deinit(poot_toolcall_result *result); /* NULL-safe, idempotent */

/* ------------------------------------------------------------ forced calls */

/* Checks an OpenAI `tools` list: each item {"type":"function","function":
 * {"name": non-empty string, "parameters": object or absent}}.
 * INVALID_ARGUMENT naming the item. */
POOT_MUST_USE poot_status poot_toolcall_tools_check(const poot_json *tools);

typedef struct poot_toolcall_grammar_options {
  const char *function; /* NULL: calls of any tool; else exactly one call of this function */
  uint32_t max_calls;   /* calls at most when function is NULL; 0 → 8 (at most 128) */
  bool strict;          /* the schemas' strict_properties (OpenAI's strict mode) */
} poot_toolcall_grammar_options;

/* The GBNF that makes a model write tool calls — what tool_choice
 * "required" or a named function needs (docs/toolcalls.md "Forced calls"):
 * one call or more in `format`'s syntax, compact, whose arguments validate
 * against the function's "parameters" schema (absent: any object):
 *   HERMES   <tool_call>\n{"name":…,"arguments":…}\n</tool_call>, "\n" between
 *   MISTRAL  [TOOL_CALLS][{"name":…,"arguments":…},…]
 *   LLAMA3, NONE  {"name":…,"parameters":…}, ";" between (parse NONE's
 *            output as LLAMA3)
 * *out_gbnf is poot_malloc'ed (free with poot_free). INVALID_ARGUMENT for a
 * bad tools list or a function it does not have; the JSON-schema compiler's
 * errors (UNSUPPORTED naming the keyword) annotated; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_toolcall_grammar(poot_toolcall_format format, const poot_json *tools,
                                                const poot_toolcall_grammar_options *options,
                                                char **out_gbnf, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_TOOLCALL_H */
