/* poot/llm/chat_template.h — chat templates: a sandboxed interpreter for the
 * subset of Jinja that real models' chat templates use, rendering the way
 * Hugging Face transformers does (jinja2's ImmutableSandboxedEnvironment with
 * trim_blocks=True, lstrip_blocks=True and the loopcontrols extension, its own
 * `tojson` filter, `raise_exception` and `strftime_now` globals).
 *
 * A template is compiled once (create) and rendered any number of times with
 * a context built from JSON. A compiled template is immutable: renders from
 * several threads at once are safe. Every render is bounded (steps, output
 * size, memory, call depth), so a hostile template ends with an error instead
 * of hanging or exhausting the stack. docs/chat-templates.md lists what is
 * supported. */
#ifndef POOT_LLM_CHAT_TEMPLATE_H
#define POOT_LLM_CHAT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_chat_template poot_chat_template;

/* Compiles `source` (len bytes of UTF-8 template text, need not be
 * NUL-terminated). Returns:
 *  FORMAT       a syntax error; the message names the line ("line 12: ...")
 *  UNSUPPORTED  a construct this interpreter does not implement ({% include %},
 *               {% extends %}, ...); the message names it and the line
 *  OUT_OF_MEMORY
 * On failure *out_template is NULL. */
POOT_MUST_USE poot_status poot_chat_template_create(const char *source, size_t len,
                                                    poot_chat_template **out_template);
void poot_chat_template_destroy(poot_chat_template *tpl); /* NULL-safe */
/* The text the template was made from (NUL-terminated, *out_len bytes; owned by
 * the template): what poot_toolcall_params_detect reads. */
const char *poot_chat_template_source(const poot_chat_template *tpl, size_t *out_len);

/* Render parameters. Initialize with poot_chat_template_render_params_default(). */
typedef struct poot_chat_template_render_params {
  /* Overrides of the context (NULL / negative: keep what `vars` says). */
  const char *bos_token;     /* borrowed */
  const char *eos_token;     /* borrowed */
  int add_generation_prompt; /* -1 keep, 0 false, 1 true */
  /* The time strftime_now() formats, in seconds since the epoch, as UTC.
   * Negative: the current local time (what transformers does). */
  int64_t now_epoch_s;
  /* Bounds. 0 picks the default named beside each. A step is a statement,
   * an expression, a loop iteration, or one value visited (or about 64 bytes
   * of text copied) by an operation that walks a nested value: ==, <, `in`,
   * hashing a key, sorting, str(), repr(), printing, tojson. A value may hold
   * one part many times, so such a walk is charged per value it visits, not
   * per call. The real templates under test need at most about 25,000 steps
   * for a short conversation and 57 million for a 4,000-message one (Gemma's
   * template is quadratic in the message count); the default fails a
   * runaway render in well under a second. */
  uint64_t max_steps; /* 100,000,000 */
  size_t max_output;  /* bytes of rendered text (also of any string or text built); 64 MiB */
  size_t max_memory;  /* bytes of the render's values plus the text being built; 256 MiB */
  uint32_t max_depth; /* nested macro calls / recursive loops; 256 */
} poot_chat_template_render_params;

void poot_chat_template_render_params_default(poot_chat_template_render_params *params);

/* Renders `tpl` with the template variables of `vars` (a JSON object, or NULL
 * for none; every member becomes a variable: messages, tools, documents,
 * add_generation_prompt, bos_token, eos_token, enable_thinking, ...). As in
 * transformers' apply_chat_template, `tools` and `documents` are None and
 * `add_generation_prompt` is false when `vars` lacks them. `params` may be NULL
 * (defaults).
 *
 * On success *out_text is a NUL-terminated heap string (free with poot_free)
 * and *out_len its length in bytes (the text may itself contain NUL bytes).
 * Returns:
 *  INVALID_ARGUMENT  the template called raise_exception(msg), rejecting this
 *                    conversation: the message is "template raised: msg" and,
 *                    when out_raised is not NULL, *out_raised receives a heap
 *                    copy of msg alone (free with poot_free); also `vars` not an
 *                    object
 *  FORMAT            a runtime error a Python jinja2 render also fails with
 *                    (undefined attribute access, type errors, a macro called
 *                    with wrong arguments, sandbox violation); the message
 *                    names the line
 *  UNSUPPORTED       a filter, test, method or value this interpreter does not
 *                    implement (also an unknown filter name), reached at run
 *                    time; the message names it and the line
 *  CAPACITY          a bound of `params` was exceeded; the message names it
 *                    (max_steps, max_output, max_memory or max_depth)
 *  OUT_OF_MEMORY
 * On failure *out_text is NULL and *out_len 0. */
POOT_MUST_USE poot_status poot_chat_template_render(const poot_chat_template *tpl,
                                                    const poot_json *vars,
                                                    const poot_chat_template_render_params *params,
                                                    char **out_text, size_t *out_len,
                                                    char **out_raised);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_CHAT_TEMPLATE_H */
