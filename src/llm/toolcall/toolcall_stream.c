/* The tool-call stream: splits generated text into content, reasoning and
 * calls as it arrives. The whole-reply parse is this stream fed once.
 *
 * Held text (`pend`) is resolved from its front by a small state machine;
 * every decision it makes holds for any text that may follow, which is what
 * makes the result independent of how the text was split. */
#include <string.h>

#include "toolcall_impl.h"

typedef enum poot__phase {
  POOT__PH_START = 0,     /* the reply's start: does reasoning open here? */
  POOT__PH_REASONING,     /* inside the reasoning block */
  POOT__PH_CONTENT_START, /* the content's start (LLAMA3 calls may begin only here) */
  POOT__PH_CONTENT,       /* content, watching for the format's call marker */
  POOT__PH_CALL,          /* held text that may be a call */
  POOT__PH_LLAMA_NEXT,    /* after a LLAMA3 call: another, or the rest is content */
  POOT__PH_PLAIN          /* the rest is content */
} poot__phase;

enum { POOT__CH_CONTENT = 0, POOT__CH_REASONING = 1, POOT__CH_COUNT = 2 };

/* One text channel: what it emitted (the result), the trailing whitespace
 * held until it is known not to touch a marker, and whether leading
 * whitespace is dropped (right after a marker or a call). */
typedef struct poot__channel {
  poot_strbuf text;
  poot_strbuf held_ws;
  bool strip_leading;
} poot__channel;

/* A delta before its pointers are fixed (buffers move while a feed runs). */
typedef struct poot__raw_delta {
  poot_toolcall_delta_kind kind;
  size_t offset, len; /* text kinds: a range of the channel's text */
  uint32_t call_index;
} poot__raw_delta;

struct poot_toolcall_stream {
  poot_toolcall_params params;
  const poot__toolcall_format_row *fmt;
  const poot__toolcall_reasoning_row *rsn;
  poot__phase phase;
  poot_strbuf pend; /* held input; pend.data[pend_off..] is unresolved */
  size_t pend_off;
  poot__channel ch[POOT__CH_COUNT];
  poot_vec calls; /* poot_toolcall */
  poot_arena call_arena;
  poot__matcher matcher;
  poot_vec raw;    /* poot__raw_delta of the current feed */
  poot_vec deltas; /* poot_toolcall_delta handed out */
  bool finished;
  poot_status_code failed; /* POOT_OK unless an earlier call failed */
};

static poot_status poot__stream_oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "tool-call parser: out of memory");
}

void poot_toolcall_stream_destroy(poot_toolcall_stream *s) {
  if (!s) return;
  poot_strbuf_deinit(&s->pend);
  for (int c = 0; c < POOT__CH_COUNT; c++) {
    poot_strbuf_deinit(&s->ch[c].text);
    poot_strbuf_deinit(&s->ch[c].held_ws);
  }
  poot_vec_deinit(&s->calls);
  poot_arena_deinit(&s->call_arena);
  poot__matcher_deinit(&s->matcher);
  poot_vec_deinit(&s->raw);
  poot_vec_deinit(&s->deltas);
  poot_free(s);
}

poot_status poot_toolcall_stream_create(const poot_toolcall_params *params,
                                        poot_toolcall_stream **out_stream) {
  *out_stream = NULL;
  poot_toolcall_params p;
  poot_toolcall_params_default(&p);
  if (params) p = *params;
  const poot__toolcall_format_row *fmt = poot__toolcall_format_row_of(p.format);
  const poot__toolcall_reasoning_row *rsn = poot__toolcall_reasoning_row_of(p.reasoning);
  if (!fmt)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "tool-call format %d is not one of "
                            "poot_toolcall_format",
                            (int)p.format);
  if (!rsn)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "tool-call reasoning %d is not one of "
                            "poot_toolcall_reasoning",
                            (int)p.reasoning);
  if (p.max_held == 0) p.max_held = (size_t)1 << 20;
  if (p.max_calls == 0) p.max_calls = 128;
  poot_toolcall_stream *s = poot_calloc(1, sizeof *s);
  if (!s) return poot__stream_oom();
  s->params = p;
  s->fmt = fmt;
  s->rsn = rsn;
  poot_strbuf_init(&s->pend);
  for (int c = 0; c < POOT__CH_COUNT; c++) {
    poot_strbuf_init(&s->ch[c].text);
    poot_strbuf_init(&s->ch[c].held_ws);
  }
  poot_vec_init(&s->calls, sizeof(poot_toolcall));
  poot_arena_init(&s->call_arena, 4096);
  poot__matcher_init(&s->matcher);
  poot_vec_init(&s->raw, sizeof(poot__raw_delta));
  poot_vec_init(&s->deltas, sizeof(poot_toolcall_delta));
  if (!rsn->open)
    s->phase = POOT__PH_CONTENT_START;
  else if (p.starts_in_reasoning) {
    s->phase = POOT__PH_REASONING;
    s->ch[POOT__CH_REASONING].strip_leading = true;
  } else {
    s->phase = POOT__PH_START;
  }
  *out_stream = s;
  return NULL;
}

/* ---------------------------------------------------------------- emitting */

static poot_status poot__note_text(poot_toolcall_stream *s, int c, size_t offset, size_t len) {
  if (len == 0) return NULL;
  poot_toolcall_delta_kind kind =
      c == POOT__CH_CONTENT ? POOT_TOOLCALL_DELTA_CONTENT : POOT_TOOLCALL_DELTA_REASONING;
  if (s->raw.len > 0) {
    poot__raw_delta *last = &POOT_VEC_AT(&s->raw, poot__raw_delta, s->raw.len - 1);
    if (last->kind == kind && last->offset + last->len == offset) {
      last->len += len;
      return NULL;
    }
  }
  poot__raw_delta d = {.kind = kind, .offset = offset, .len = len};
  return poot_vec_push(&s->raw, &d);
}

/* Appends text to channel c: leading whitespace dropped while strip_leading,
 * trailing whitespace held back until more text follows it. */
static poot_status poot__emit(poot_toolcall_stream *s, int c, const char *text, size_t n) {
  poot__channel *ch = &s->ch[c];
  size_t i = 0;
  if (ch->strip_leading) {
    while (i < n && poot__is_ws(text[i])) i++;
    if (i == n) return NULL;
    ch->strip_leading = false;
  }
  size_t j = n;
  while (j > i && poot__is_ws(text[j - 1])) j--;
  if (j > i) {
    size_t at = ch->text.len;
    poot_strbuf_append(&ch->text, ch->held_ws.data, ch->held_ws.len);
    poot_strbuf_append(&ch->text, text + i, j - i);
    POOT_TRY(poot_strbuf_status(&ch->text));
    POOT_TRY(poot__note_text(s, c, at, ch->text.len - at));
    poot_strbuf_clear(&ch->held_ws);
  }
  poot_strbuf_append(&ch->held_ws, text + j, n - j);
  return poot_strbuf_status(&ch->held_ws);
}

/* Channel c meets a marker or a call: the whitespace before it is dropped. */
static void poot__boundary(poot_toolcall_stream *s, int c) {
  poot_strbuf_clear(&s->ch[c].held_ws);
  s->ch[c].strip_leading = true;
}

/* The reply ended: held whitespace touches no marker, so it is text. */
static poot_status poot__flush_ws(poot_toolcall_stream *s, int c) {
  poot__channel *ch = &s->ch[c];
  if (ch->held_ws.len == 0) return NULL;
  size_t at = ch->text.len;
  poot_strbuf_append(&ch->text, ch->held_ws.data, ch->held_ws.len);
  POOT_TRY(poot_strbuf_status(&ch->text));
  poot_strbuf_clear(&ch->held_ws);
  return poot__note_text(s, c, at, ch->text.len - at);
}

static poot_status poot__add_calls(poot_toolcall_stream *s) {
  const poot__matcher *m = &s->matcher;
  for (size_t i = 0; i < m->found_count; i++) {
    if (s->calls.len >= s->params.max_calls)
      return poot_status_make(POOT_CAPACITY,
                              "tool-call parser: the reply makes more than max_calls (%u) calls",
                              (unsigned)s->params.max_calls);
    const poot__call_found *f = &m->found[i];
    uint32_t index = (uint32_t)s->calls.len;
    char id[48];
    poot__toolcall_make_id(s->fmt, s->params.id_seed, index, id);
    poot_toolcall call = {
        .id = poot_arena_strdup(&s->call_arena, id),
        .name = poot_arena_strndup(&s->call_arena, f->name, f->name_len),
        .name_len = f->name_len,
        .arguments = poot_arena_strndup(&s->call_arena, f->arguments, f->arguments_len),
        .arguments_len = f->arguments_len,
    };
    if (!call.id || !call.name || !call.arguments) return poot__stream_oom();
    POOT_TRY(poot_vec_push(&s->calls, &call));
    poot__raw_delta d = {.kind = POOT_TOOLCALL_DELTA_CALL, .call_index = index};
    POOT_TRY(poot_vec_push(&s->raw, &d));
  }
  return NULL;
}

/* ------------------------------------------------------------ the machine */

/* Bytes at the end of text that begin a UTF-8 sequence not yet complete. */
static size_t poot__utf8_unfinished(const char *text, size_t n) {
  for (size_t k = 1; k <= 3 && k <= n; k++) {
    unsigned char b = (unsigned char)text[n - k];
    if ((b & 0xc0) == 0x80) continue;
    size_t need = b >= 0xf8 ? 0 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
    return need > k ? k : 0;
  }
  return 0;
}

static void poot__consume(poot_toolcall_stream *s, size_t n) {
  s->pend_off += n;
}

static void poot__enter_call(poot_toolcall_stream *s) {
  poot__matcher_reset(&s->matcher);
  s->phase = POOT__PH_CALL;
}

/* One step on the held text t[0..n). *out_wait: nothing more can be decided
 * until more text comes (or, when final, nothing is left). */
static poot_status poot__step(poot_toolcall_stream *s, const char *t, size_t n, bool final,
                              bool *out_wait) {
  *out_wait = false;
  switch (s->phase) {
    case POOT__PH_START: {
      size_t p = 0;
      while (p < n && poot__is_ws(t[p])) p++;
      size_t m = strlen(s->rsn->open);
      size_t have = n - p < m ? n - p : m;
      if (memcmp(t + p, s->rsn->open, have) == 0) {
        if (have == m) {
          poot__consume(s, p + m);
          s->phase = POOT__PH_REASONING;
          s->ch[POOT__CH_REASONING].strip_leading = true;
          return NULL;
        }
        if (!final) {
          *out_wait = true;
          return NULL;
        }
      }
      s->phase = POOT__PH_CONTENT_START;
      return NULL;
    }
    case POOT__PH_REASONING: {
      size_t at = poot__marker_find(t, n, s->rsn->close);
      if (at != SIZE_MAX) {
        POOT_TRY(poot__emit(s, POOT__CH_REASONING, t, at));
        poot__consume(s, at + strlen(s->rsn->close));
        poot__boundary(s, POOT__CH_REASONING);
        s->ch[POOT__CH_CONTENT].strip_leading = true;
        s->phase = POOT__PH_CONTENT_START;
        return NULL;
      }
      size_t keep = final ? 0 : poot__marker_tail(t, n, s->rsn->close);
      POOT_TRY(poot__emit(s, POOT__CH_REASONING, t, n - keep));
      poot__consume(s, n - keep);
      *out_wait = true;
      return NULL;
    }
    case POOT__PH_CONTENT_START: {
      if (s->fmt->format != POOT_TOOLCALL_FORMAT_LLAMA3) {
        s->phase = s->fmt->open ? POOT__PH_CONTENT : POOT__PH_PLAIN;
        return NULL;
      }
      size_t p = 0;
      while (p < n && poot__is_ws(t[p])) p++;
      if (p == n && !final) {
        *out_wait = true;
        return NULL;
      }
      if (p < n && (t[p] == '{' || t[p] == '<'))
        poot__enter_call(s);
      else
        s->phase = POOT__PH_PLAIN;
      return NULL;
    }
    case POOT__PH_CONTENT: {
      size_t at = poot__marker_find(t, n, s->fmt->open);
      if (at != SIZE_MAX) {
        POOT_TRY(poot__emit(s, POOT__CH_CONTENT, t, at));
        poot__consume(s, at);
        poot__enter_call(s);
        return NULL;
      }
      size_t keep = final ? 0 : poot__marker_tail(t, n, s->fmt->open);
      POOT_TRY(poot__emit(s, POOT__CH_CONTENT, t, n - keep));
      poot__consume(s, n - keep);
      *out_wait = true;
      return NULL;
    }
    case POOT__PH_CALL: {
      poot__match_kind kind;
      size_t used = 0;
      POOT_TRY(poot__toolcall_match(&s->matcher, s->fmt->format, t, n, final, &kind, &used));
      if (kind == POOT__MATCH_MORE) {
        *out_wait = true;
        return NULL;
      }
      if (kind == POOT__MATCH_YES) {
        POOT_TRY(poot__add_calls(s));
        poot__consume(s, used);
        poot__boundary(s, POOT__CH_CONTENT);
        s->phase = s->fmt->open ? POOT__PH_CONTENT : POOT__PH_LLAMA_NEXT;
      } else if (s->fmt->open) {
        /* Not a call: its marker is content, and the search goes on after it. */
        size_t m = strlen(s->fmt->open);
        POOT_TRY(poot__emit(s, POOT__CH_CONTENT, t, m));
        poot__consume(s, m);
        s->phase = POOT__PH_CONTENT;
      } else {
        s->phase = POOT__PH_PLAIN;
      }
      poot__matcher_reset(&s->matcher);
      return NULL;
    }
    case POOT__PH_LLAMA_NEXT: {
      size_t p = 0;
      while (p < n && (poot__is_ws(t[p]) || t[p] == ';')) p++;
      poot__consume(s, p);
      if (p == n) {
        *out_wait = true;
        return NULL;
      }
      if (t[p] == '{' || t[p] == '<')
        poot__enter_call(s);
      else
        s->phase = POOT__PH_PLAIN;
      return NULL;
    }
    case POOT__PH_PLAIN:
      POOT_TRY(poot__emit(s, POOT__CH_CONTENT, t, n));
      poot__consume(s, n);
      *out_wait = true;
      return NULL;
  }
  return poot_status_make(POOT_INTERNAL, "tool-call parser: unknown state %d", (int)s->phase);
}

static poot_status poot__run(poot_toolcall_stream *s, bool final) {
  for (;;) {
    const char *t = s->pend.data + s->pend_off;
    size_t n = s->pend.len - s->pend_off;
    if (!final) n -= poot__utf8_unfinished(t, n);
    bool wait = false;
    POOT_TRY(poot__step(s, t, n, final, &wait));
    if (wait) break;
  }
  /* Drop what was resolved, so held text never grows past what is held. */
  size_t left = s->pend.len - s->pend_off;
  if (s->pend_off > 0) {
    memmove(s->pend.data, s->pend.data + s->pend_off, left);
    s->pend.len = left;
    s->pend.data[left] = '\0';
    s->pend_off = 0;
  }
  /* The matcher's offsets are relative to the held text's start, which a
   * call candidate never moves: it stays at offset 0 while it is held. */
  size_t held = left + s->ch[0].held_ws.len + s->ch[1].held_ws.len;
  if (held > s->params.max_held)
    return poot_status_make(POOT_CAPACITY,
                            "tool-call parser: %zu bytes held back (a call or marker not yet "
                            "complete) pass max_held (%zu)",
                            held, s->params.max_held);
  return NULL;
}

/* Fixes the current feed's deltas' pointers into *out. */
static poot_status poot__publish(poot_toolcall_stream *s, poot_toolcall_deltas *out) {
  poot_vec_clear(&s->deltas);
  POOT_TRY(poot_vec_reserve(&s->deltas, s->raw.len));
  for (size_t i = 0; i < s->raw.len; i++) {
    const poot__raw_delta *r = &POOT_VEC_AT(&s->raw, poot__raw_delta, i);
    poot_toolcall_delta d = {.kind = r->kind, .call_index = r->call_index};
    if (r->kind == POOT_TOOLCALL_DELTA_CALL) {
      d.call = &POOT_VEC_AT(&s->calls, poot_toolcall, r->call_index);
    } else {
      const poot_strbuf *text = &s->ch[r->kind == POOT_TOOLCALL_DELTA_CONTENT ? 0 : 1].text;
      d.text = text->data + r->offset;
      d.len = r->len;
    }
    POOT_TRY(poot_vec_push(&s->deltas, &d));
  }
  poot_vec_clear(&s->raw);
  out->items = s->deltas.data;
  out->count = s->deltas.len;
  return NULL;
}

static poot_status poot__check_usable(const poot_toolcall_stream *s) {
  if (!s) return poot_status_make(POOT_INVALID_ARGUMENT, "tool-call parser: no stream given");
  if (s->failed != POOT_OK)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "tool-call parser: the stream failed earlier (%s); destroy it",
                            poot_status_code_name(s->failed));
  if (s->finished)
    return poot_status_make(POOT_INVALID_ARGUMENT, "tool-call parser: the stream was finished");
  return NULL;
}

static poot_status poot__fail(poot_toolcall_stream *s, poot_status st) {
  if (st) {
    s->failed = poot_status_code_of(st);
    poot_vec_clear(&s->raw);
  }
  return st;
}

poot_status poot_toolcall_stream_feed(poot_toolcall_stream *s, const char *piece, size_t len,
                                      poot_toolcall_deltas *out) {
  out->items = NULL;
  out->count = 0;
  POOT_TRY(poot__check_usable(s));
  if (len > 0 && !piece)
    return poot_status_make(POOT_INVALID_ARGUMENT, "tool-call parser: NULL piece of %zu bytes",
                            len);
  if (len > 0) poot_strbuf_append(&s->pend, piece, len);
  poot_status st = poot_strbuf_status(&s->pend);
  if (!st) st = poot__run(s, false);
  if (!st) st = poot__publish(s, out);
  return poot__fail(s, st);
}

poot_status poot_toolcall_stream_finish(poot_toolcall_stream *s, poot_toolcall_deltas *out) {
  out->items = NULL;
  out->count = 0;
  POOT_TRY(poot__check_usable(s));
  s->finished = true;
  poot_status st = poot__run(s, true);
  for (int c = 0; c < POOT__CH_COUNT && !st; c++) st = poot__flush_ws(s, c);
  if (!st) st = poot__publish(s, out);
  return poot__fail(s, st);
}

void poot_toolcall_stream_result(const poot_toolcall_stream *s, poot_toolcall_result *out) {
  memset(out, 0, sizeof *out);
  out->content = s->ch[POOT__CH_CONTENT].text.data;
  out->content_len = s->ch[POOT__CH_CONTENT].text.len;
  out->reasoning = s->ch[POOT__CH_REASONING].text.data;
  out->reasoning_len = s->ch[POOT__CH_REASONING].text.len;
  out->calls = s->calls.data;
  out->call_count = s->calls.len;
}

poot_status poot_toolcall_parse(const poot_toolcall_params *params, const char *text, size_t len,
                                poot_toolcall_result *out) {
  memset(out, 0, sizeof *out);
  out->content = out->reasoning = "";
  poot_toolcall_stream *s = NULL;
  POOT_TRY(poot_toolcall_stream_create(params, &s));
  poot_toolcall_deltas d;
  poot_status st = poot_toolcall_stream_feed(s, text, len, &d);
  if (!st) st = poot_toolcall_stream_finish(s, &d);
  if (st) {
    poot_toolcall_stream_destroy(s);
    return st;
  }
  poot_toolcall_stream_result(s, out);
  out->owner_ = s;
  return NULL;
}

void poot_toolcall_result_deinit(poot_toolcall_result *result) {
  if (!result) return;
  poot_toolcall_stream_destroy(result->owner_);
  memset(result, 0, sizeof *result);
  result->content = result->reasoning = "";
}
