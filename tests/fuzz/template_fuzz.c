/* libFuzzer target for the chat-template parser and renderer. The input is
 * a template, optionally followed by a NUL byte and JSON template variables.
 * Renders are bounded in steps, output, memory and depth, so every input must
 * end quickly with text or an error — never a crash, leak or hang. Steps are
 * charged per value that a comparison, hash, sort or serialization visits,
 * so the corpus's walk_* seeds (values that hold their parts twice, 2^40
 * leaves or more) end on the step or output bound within milliseconds. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/chat_template.h"

static const char DEFAULT_VARS[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"sys\"},"
    " {\"role\": \"user\", \"content\": \"h\\u00e9llo\"},"
    " {\"role\": \"assistant\", \"content\": \"ok\", \"tool_calls\": [{\"function\":"
    " {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}],"
    " \"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"add_generation_prompt\": true}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *src = (const char *)data;
  size_t src_len = size;
  const char *vars_text = DEFAULT_VARS;
  size_t vars_len = sizeof DEFAULT_VARS - 1;
  const uint8_t *nul = memchr(data, 0, size);
  if (nul) {
    src_len = (size_t)(nul - data);
    vars_text = (const char *)nul + 1;
    vars_len = size - src_len - 1;
  }
  poot_chat_template *tpl = NULL;
  poot_status st = poot_chat_template_create(src, src_len, &tpl);
  if (st) {
    poot_status_free(st);
    return 0;
  }
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *vars = NULL;
  st = poot_json_parse(&arena, vars_text, vars_len, NULL, &vars);
  if (st) {
    poot_status_free(st);
    vars = NULL;
  }
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.max_steps = 50000;
  p.max_output = 1 << 16;
  p.max_memory = 16 << 20;
  p.max_depth = 32;
  p.now_epoch_s = 0;
  char *out = NULL, *raised = NULL;
  size_t len = 0;
  st = poot_chat_template_render(tpl, vars, &p, &out, &len, &raised);
  poot_status_free(st);
  poot_free(out);
  poot_free(raised);
  poot_arena_deinit(&arena);
  poot_chat_template_destroy(tpl);
  return 0;
}
