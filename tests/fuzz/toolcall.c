/* libFuzzer target: the tool-call parser (src/llm/toolcall/). The whole-reply
 * parse and a stream fed the same text cut at fuzzer-chosen points must give
 * the same content, reasoning and calls; any mismatch traps.
 * Input: byte 0 picks the format, the reasoning markers, whether the reply
 * starts inside reasoning and a small or the default max_held; the rest is
 * the reply, cut into pieces at 0x01 bytes (which are not part of it). */
#include <stdlib.h>
#include <string.h>

#include "poot/llm/toolcall.h"

typedef struct joined {
  poot_strbuf content, reasoning, calls;
  uint32_t next_index;
} joined;

static void put_call(poot_strbuf *sb, const poot_toolcall *c) {
  if (strlen(c->id) == 0 || strlen(c->name) != c->name_len ||
      strlen(c->arguments) != c->arguments_len)
    __builtin_trap();
  poot_strbuf_printf(sb, "%s\x02%s\x02%s\x03", c->id, c->name, c->arguments);
}

static void add(joined *j, const poot_toolcall_deltas *d) {
  for (size_t i = 0; i < d->count; i++) {
    const poot_toolcall_delta *x = &d->items[i];
    if (x->kind == POOT_TOOLCALL_DELTA_CALL) {
      if (x->call_index != j->next_index++) __builtin_trap();
      put_call(&j->calls, x->call);
      continue;
    }
    if (x->len == 0) __builtin_trap();
    poot_strbuf_append(x->kind == POOT_TOOLCALL_DELTA_CONTENT ? &j->content : &j->reasoning,
                       x->text, x->len);
  }
}

/* Every call's arguments are a JSON object that writes back to itself. */
static void check_arguments(const poot_toolcall_result *r) {
  for (size_t i = 0; i < r->call_count; i++) {
    poot_arena arena;
    poot_arena_init(&arena, 0);
    poot_json *v = NULL;
    poot_status st =
        poot_json_parse(&arena, r->calls[i].arguments, r->calls[i].arguments_len, NULL, &v);
    if (st && poot_status_code_of(st) != POOT_OUT_OF_MEMORY) __builtin_trap();
    if (!st) {
      if (v->type != POOT_JSON_OBJECT) __builtin_trap();
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      poot_json_write(&sb, v, false, false);
      if (!sb.failed && (sb.len != r->calls[i].arguments_len ||
                         memcmp(sb.data, r->calls[i].arguments, sb.len) != 0))
        __builtin_trap();
      poot_strbuf_deinit(&sb);
    }
    poot_status_free(st);
    poot_arena_deinit(&arena);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  uint8_t cfg = data[0];
  p.format = (poot_toolcall_format)(cfg % POOT_TOOLCALL_FORMAT_COUNT);
  p.reasoning = (poot_toolcall_reasoning)((cfg / 4) % POOT_TOOLCALL_REASONING_COUNT);
  p.starts_in_reasoning = (cfg / 12) % 2;
  if (cfg >= 128) p.max_held = 48;
  p.max_calls = 16;
  p.id_seed = size;

  const char *in = (const char *)data + 1;
  size_t n = size - 1;
  char *text = malloc(n + 1);
  size_t *cuts = malloc((n + 1) * sizeof *cuts);
  if (!text || !cuts) goto out;
  size_t len = 0, ncuts = 0;
  for (size_t i = 0; i < n; i++) {
    if (in[i] == 1)
      cuts[ncuts++] = len;
    else
      text[len++] = in[i];
  }

  poot_toolcall_result whole;
  poot_status wst = poot_toolcall_parse(&p, text, len, &whole);
  poot_status_code wcode = poot_status_code_of(wst);
  poot_status_free(wst);
  if (wcode != POOT_OK && wcode != POOT_CAPACITY && wcode != POOT_OUT_OF_MEMORY) __builtin_trap();

  poot_toolcall_stream *s = NULL;
  poot_status st = poot_toolcall_stream_create(&p, &s);
  poot_status_code scode = poot_status_code_of(st);
  poot_status_free(st);
  joined j;
  poot_strbuf_init(&j.content);
  poot_strbuf_init(&j.reasoning);
  poot_strbuf_init(&j.calls);
  j.next_index = 0;
  poot_toolcall_deltas d;
  size_t at = 0;
  for (size_t i = 0; scode == POOT_OK && i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    st = poot_toolcall_stream_feed(s, text + at, end - at, &d);
    scode = poot_status_code_of(st);
    poot_status_free(st);
    if (scode == POOT_OK) add(&j, &d);
    at = end;
  }
  if (scode == POOT_OK) {
    st = poot_toolcall_stream_finish(s, &d);
    scode = poot_status_code_of(st);
    poot_status_free(st);
    if (scode == POOT_OK) add(&j, &d);
  }
  if (scode != POOT_OK && scode != POOT_CAPACITY && scode != POOT_OUT_OF_MEMORY) __builtin_trap();

  bool oom = wcode == POOT_OUT_OF_MEMORY || scode == POOT_OUT_OF_MEMORY || j.content.failed ||
             j.reasoning.failed || j.calls.failed;
  if (!oom) {
    /* A reply the whole parse refuses is refused streamed too; the stream
     * may also refuse one it had to hold back more of (max_held). */
    if (wcode == POOT_CAPACITY && scode != POOT_CAPACITY) __builtin_trap();
    if (wcode == POOT_OK && scode == POOT_OK) {
      if (j.content.len != whole.content_len ||
          memcmp(j.content.data, whole.content, whole.content_len) != 0)
        __builtin_trap();
      if (j.reasoning.len != whole.reasoning_len ||
          memcmp(j.reasoning.data, whole.reasoning, whole.reasoning_len) != 0)
        __builtin_trap();
      poot_strbuf wc;
      poot_strbuf_init(&wc);
      for (size_t i = 0; i < whole.call_count; i++) put_call(&wc, &whole.calls[i]);
      if (!wc.failed && (wc.len != j.calls.len || memcmp(wc.data, j.calls.data, wc.len) != 0))
        __builtin_trap();
      poot_strbuf_deinit(&wc);
      if (whole.content_len + whole.reasoning_len > len) __builtin_trap();
      check_arguments(&whole);
    }
  }
  if (wcode == POOT_OK) poot_toolcall_result_deinit(&whole);
  poot_strbuf_deinit(&j.content);
  poot_strbuf_deinit(&j.reasoning);
  poot_strbuf_deinit(&j.calls);
  poot_toolcall_stream_destroy(s);
out:
  free(text);
  free(cuts);
  return 0;
}
