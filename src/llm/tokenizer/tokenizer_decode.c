/* tokenizer_decode.c — ids back to text, whole or streaming. */
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* "<0xXX>" → the byte, or -1. */
static int byte_token_value(const poot__tok_entry *e) {
  if (e->len != 6 || memcmp(e->text, "<0x", 3) != 0 || e->text[5] != '>') return -1;
  int hi = hexval(e->text[3]), lo = hexval(e->text[4]);
  return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

poot_status poot_tokenizer_token_to_piece(const poot_tokenizer *tok, poot_token id,
                                          bool render_special, poot_strbuf *out) {
  if (!tok || id < 0 || id >= tok->n_tokens)
    return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: token id %d is outside 0..%d",
                            (int)id, tok ? (int)tok->n_tokens - 1 : -1);
  const poot__tok_entry *e = &tok->tokens[id];
  if (e->attr & (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_UNKNOWN)) {
    if (render_special) poot_strbuf_append(out, e->text, e->len);
    return poot_strbuf_status(out);
  }
  if (e->attr & POOT_TOKEN_ATTR_USER_DEFINED) {
    poot_strbuf_append(out, e->text, e->len);
    return poot_strbuf_status(out);
  }
  if (tok->kind != POOT_TOKENIZER_WORDPIECE && !tok->byte_level) {
    int b = byte_token_value(e);
    if (b >= 0 && ((e->attr & POOT_TOKEN_ATTR_BYTE) || tok->byte_fallback ||
                   tok->kind == POOT_TOKENIZER_LLAMA2C || tok->kind == POOT_TOKENIZER_SPM)) {
      poot_strbuf_putc(out, (char)b);
      return poot_strbuf_status(out);
    }
  }
  if (tok->kind == POOT_TOKENIZER_LLAMA2C) {
    poot_strbuf_append(out, e->text, e->len);
  } else if (tok->kind == POOT_TOKENIZER_WORDPIECE && !tok->wp_phantom) {
    /* "##x" continues a word; anything else starts one. */
    if (e->len >= 2 && e->text[0] == '#' && e->text[1] == '#') {
      poot_strbuf_append(out, e->text + 2, e->len - 2);
    } else {
      poot_strbuf_putc(out, ' ');
      poot_strbuf_append(out, e->text, e->len);
    }
  } else if (tok->byte_level) {
    const uint8_t *u = (const uint8_t *)e->text;
    for (size_t i = 0; i < e->len;) {
      size_t l;
      uint32_t cp = poot__utf8_decode(u + i, e->len - i, &l);
      int b = cp == POOT__UTF8_INVALID ? -1 : poot__char_to_byte(cp);
      if (b >= 0)
        poot_strbuf_putc(out, (char)b);
      else
        poot_strbuf_append(out, e->text + i, l);
      i += l;
    }
  } else { /* SentencePiece space escape */
    const char *s = e->text;
    size_t n = e->len, i = 0;
    while (i < n) {
      const char *hit = memmem(s + i, n - i, "\xe2\x96\x81", 3);
      if (!hit) break;
      size_t at = (size_t)(hit - s);
      poot_strbuf_append(out, s + i, at - i);
      poot_strbuf_putc(out, ' ');
      i = at + 3;
    }
    poot_strbuf_append(out, s + i, n - i);
  }
  return poot_strbuf_status(out);
}

struct poot_tokenizer_decoder {
  const poot_tokenizer *tok;
  poot_tokenizer_decode_options opts;
  bool started;    /* some text was produced */
  poot_token prev; /* the previous id */
  poot_strbuf piece;
  char pending[8];
  size_t n_pending;
};

static void decoder_reset(poot_tokenizer_decoder *d) {
  d->started = false;
  d->prev = POOT_TOKEN_NONE;
  d->n_pending = 0;
}

/* Appends the text of one token, applying the prefix-space rules. */
static poot_status decode_one(poot_tokenizer_decoder *d, poot_token id, poot_strbuf *out) {
  const poot_tokenizer *tok = d->tok;
  poot_strbuf_clear(&d->piece);
  if (id >= (poot_token)tok->n_tokens && id < d->opts.vocab_rows) return NULL; /* padding */
  POOT_TRY(poot_tokenizer_token_to_piece(tok, id, d->opts.render_special, &d->piece));
  const char *p = d->piece.data;
  size_t n = d->piece.len;
  if (d->opts.strip_prefix_space && n && p[0] == ' ') {
    if (tok->llama2c_prefix ? (d->prev == tok->bos && tok->bos != POOT_TOKEN_NONE)
                            : (tok->strip_prefix_space && !d->started)) {
      p++;
      n--;
    }
  }
  d->prev = id;
  if (d->piece.len) d->started = true;
  poot_strbuf_append(out, p, n);
  return poot_strbuf_status(out);
}

poot_status poot_tokenizer_decode(const poot_tokenizer *tok, const poot_token *ids, size_t count,
                                  const poot_tokenizer_decode_options *options, poot_strbuf *out) {
  if (!tok || (!ids && count))
    return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: decode needs a tokenizer and ids");
  poot_tokenizer_decoder d = {.tok = tok};
  d.opts = options ? *options : poot_tokenizer_decode_options_default();
  decoder_reset(&d);
  poot_strbuf_init(&d.piece);
  poot_status st = POOT_OK_STATUS;
  for (size_t i = 0; i < count && !st; i++) st = decode_one(&d, ids[i], out);
  poot_strbuf_deinit(&d.piece);
  return st;
}

poot_status poot_tokenizer_decoder_create(const poot_tokenizer *tok,
                                          const poot_tokenizer_decode_options *options,
                                          poot_tokenizer_decoder **out_decoder) {
  *out_decoder = NULL;
  if (!tok) return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: decoder needs a tokenizer");
  poot_tokenizer_decoder *d = poot_calloc(1, sizeof *d);
  if (!d) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
  d->tok = tok;
  d->opts = options ? *options : poot_tokenizer_decode_options_default();
  poot_strbuf_init(&d->piece);
  decoder_reset(d);
  *out_decoder = d;
  return POOT_OK_STATUS;
}

/* How many bytes at the end of s[0..n) start a UTF-8 sequence that is not
 * complete yet (0 when the end is complete or cannot be completed). */
static size_t incomplete_tail(const char *s, size_t n) {
  for (size_t back = 1; back <= 4 && back <= n; back++) {
    uint8_t c = (uint8_t)s[n - back];
    if ((c & 0xC0) == 0x80) continue; /* a continuation byte: keep looking */
    if (c < 0xC0 || c >= 0xF8) return 0;
    size_t need = poot__utf8_len(c);
    return back < need ? back : 0;
  }
  return 0;
}

poot_status poot_tokenizer_decoder_push(poot_tokenizer_decoder *d, poot_token id,
                                        poot_strbuf *out) {
  poot_strbuf text;
  poot_strbuf_init(&text);
  poot_strbuf_append(&text, d->pending, d->n_pending);
  poot_status st = decode_one(d, id, &text);
  if (!st) {
    size_t keep = incomplete_tail(text.data, text.len);
    poot_strbuf_append(out, text.data, text.len - keep);
    memcpy(d->pending, text.data + text.len - keep, keep);
    d->n_pending = keep;
    st = poot_strbuf_status(out);
  }
  poot_strbuf_deinit(&text);
  return st;
}

poot_status poot_tokenizer_decoder_flush(poot_tokenizer_decoder *d, poot_strbuf *out) {
  poot_strbuf_append(out, d->pending, d->n_pending);
  decoder_reset(d);
  return poot_strbuf_status(out);
}

size_t poot_tokenizer_decoder_pending(const poot_tokenizer_decoder *d) {
  return d->n_pending;
}

void poot_tokenizer_decoder_destroy(poot_tokenizer_decoder *d) {
  if (!d) return;
  poot_strbuf_deinit(&d->piece);
  poot_free(d);
}
