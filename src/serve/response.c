/* The JSON the server writes that is not a whole response: OpenAI's error
 * object, the assistant message's fields and logprobs (docs/serve.md). */
#include <math.h>
#include <string.h>

#include "poot/llm/tokenizer.h"
#include "serve_impl.h"

static void put_str(poot_strbuf *sb, const char *s) {
  if (s)
    poot_json_write_string(sb, s, strlen(s), false);
  else
    poot_strbuf_puts(sb, "null");
}

void poot__serve_write_error(poot_strbuf *sb, const char *message, const char *type,
                             const char *param, const char *code) {
  poot_strbuf_puts(sb, "{\"error\":{\"message\":");
  put_str(sb, message);
  poot_strbuf_puts(sb, ",\"type\":");
  put_str(sb, type);
  poot_strbuf_puts(sb, ",\"param\":");
  put_str(sb, param);
  poot_strbuf_puts(sb, ",\"code\":");
  put_str(sb, code);
  poot_strbuf_puts(sb, "}}");
}

void poot__serve_write_tool_call(poot_strbuf *sb, const poot_toolcall *call, long index) {
  poot_strbuf_putc(sb, '{');
  if (index >= 0) poot_strbuf_printf(sb, "\"index\":%ld,", index);
  poot_strbuf_puts(sb, "\"id\":");
  put_str(sb, call->id);
  poot_strbuf_puts(sb, ",\"type\":\"function\",\"function\":{\"name\":");
  poot_json_write_string(sb, call->name, call->name_len, false);
  poot_strbuf_puts(sb, ",\"arguments\":");
  poot_json_write_string(sb, call->arguments, call->arguments_len, false);
  poot_strbuf_puts(sb, "}}");
}

void poot__serve_write_message_fields(poot_strbuf *sb, const poot_toolcall_params *params,
                                      const char *text, size_t len, bool *out_calls) {
  *out_calls = false;
  poot_toolcall_result r;
  poot_status st = params ? poot_toolcall_parse(params, text, len, &r) : NULL;
  if (!params || st) {
    poot_status_free(st); /* a bound passed: the reply stays whole as the content */
    poot_strbuf_puts(sb, ",\"content\":");
    poot_json_write_string(sb, text, len, false);
    return;
  }
  poot_strbuf_puts(sb, ",\"content\":");
  if (r.call_count && !r.content_len)
    poot_strbuf_puts(sb, "null");
  else
    poot_json_write_string(sb, r.content, r.content_len, false);
  if (r.reasoning_len) {
    poot_strbuf_puts(sb, ",\"reasoning_content\":");
    poot_json_write_string(sb, r.reasoning, r.reasoning_len, false);
  }
  if (r.call_count) {
    *out_calls = true;
    poot_strbuf_puts(sb, ",\"tool_calls\":[");
    for (size_t i = 0; i < r.call_count; i++) {
      if (i) poot_strbuf_putc(sb, ',');
      poot__serve_write_tool_call(sb, &r.calls[i], -1);
    }
    poot_strbuf_putc(sb, ']');
  }
  poot_toolcall_result_deinit(&r);
}

static void put_logprob(poot_strbuf *sb, float lp) {
  /* JSON has no -Infinity: a banned alternative reads as a very small number */
  if (!isfinite(lp)) lp = -9999.0f;
  poot_strbuf_printf(sb, "%.9g", (double)lp);
}

/* The token's bytes: "token" (invalid UTF-8 as U+FFFD) and, for chat,
 * "bytes". */
static void put_token(poot_strbuf *sb, const poot_tokenizer *tok, poot_token id, bool bytes,
                      poot_strbuf *scratch) {
  poot_strbuf_clear(scratch);
  poot_status st = poot_tokenizer_token_to_piece(tok, id, false, scratch);
  poot_status_free(st);
  poot_strbuf_puts(sb, "\"token\":");
  poot_json_write_string(sb, scratch->data, scratch->len, true);
  if (!bytes) return;
  poot_strbuf_puts(sb, ",\"bytes\":[");
  for (size_t i = 0; i < scratch->len; i++)
    poot_strbuf_printf(sb, "%s%u", i ? "," : "", (unsigned)(unsigned char)scratch->data[i]);
  poot_strbuf_putc(sb, ']');
}

static void write_chat(poot_strbuf *sb, const poot_tokenizer *tok, const poot_token *ids,
                       const poot_sampling_result *probs, size_t n, int32_t top,
                       poot_strbuf *scratch) {
  poot_strbuf_puts(sb, "{\"content\":[");
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_puts(sb, i ? ",{" : "{");
    put_token(sb, tok, ids[i], true, scratch);
    poot_strbuf_puts(sb, ",\"logprob\":");
    put_logprob(sb, probs[i].logprob);
    poot_strbuf_puts(sb, ",\"top_logprobs\":[");
    uint32_t k = probs[i].n_top < (uint32_t)top ? probs[i].n_top : (uint32_t)top;
    for (uint32_t j = 0; j < k; j++) {
      poot_strbuf_puts(sb, j ? ",{" : "{");
      put_token(sb, tok, probs[i].top[j].token, true, scratch);
      poot_strbuf_puts(sb, ",\"logprob\":");
      put_logprob(sb, probs[i].top[j].logprob);
      poot_strbuf_putc(sb, '}');
    }
    poot_strbuf_puts(sb, "]}");
  }
  poot_strbuf_puts(sb, "],\"refusal\":null}");
}

static void write_completion(poot_strbuf *sb, const poot_tokenizer *tok, const poot_token *ids,
                             const poot_sampling_result *probs, size_t n, int32_t top,
                             poot_strbuf *scratch) {
  poot_strbuf_puts(sb, "{\"tokens\":[");
  size_t offset = 0;
  poot_strbuf offsets;
  poot_strbuf_init(&offsets);
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_clear(scratch);
    poot_status_free(poot_tokenizer_token_to_piece(tok, ids[i], false, scratch));
    if (i) poot_strbuf_putc(sb, ',');
    poot_json_write_string(sb, scratch->data, scratch->len, true);
    poot_strbuf_printf(&offsets, "%s%zu", i ? "," : "", offset);
    offset += scratch->len;
  }
  poot_strbuf_puts(sb, "],\"token_logprobs\":[");
  for (size_t i = 0; i < n; i++) {
    if (i) poot_strbuf_putc(sb, ',');
    put_logprob(sb, probs[i].logprob);
  }
  poot_strbuf_puts(sb, "],\"top_logprobs\":[");
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_puts(sb, i ? ",{" : "{");
    uint32_t k = probs[i].n_top < (uint32_t)top ? probs[i].n_top : (uint32_t)top;
    for (uint32_t j = 0; j < k; j++) {
      poot_strbuf_clear(scratch);
      poot_status_free(poot_tokenizer_token_to_piece(tok, probs[i].top[j].token, false, scratch));
      if (j) poot_strbuf_putc(sb, ',');
      poot_json_write_string(sb, scratch->data, scratch->len, true);
      poot_strbuf_putc(sb, ':');
      put_logprob(sb, probs[i].top[j].logprob);
    }
    poot_strbuf_putc(sb, '}');
  }
  poot_strbuf_puts(sb, "],\"text_offset\":[");
  poot_strbuf_append(sb, offsets.data, offsets.len);
  poot_strbuf_puts(sb, "]}");
  poot_strbuf_deinit(&offsets);
}

void poot__serve_write_logprobs(poot_strbuf *sb, const poot_tokenizer *tok, poot__serve_kind kind,
                                const poot_token *ids, const poot_sampling_result *probs,
                                size_t n, int32_t top) {
  if (!probs) {
    poot_strbuf_puts(sb, "null");
    return;
  }
  poot_strbuf scratch;
  poot_strbuf_init(&scratch);
  if (kind == POOT_SERVE_CHAT)
    write_chat(sb, tok, ids, probs, n, top, &scratch);
  else
    write_completion(sb, tok, ids, probs, n, top, &scratch);
  poot_strbuf_deinit(&scratch);
}
