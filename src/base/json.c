/* A small JSON parser (RFC 8259) into an arena, and a writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/base.h"

typedef struct poot_json_parser {
  poot_arena *arena;
  const char *text;
  size_t len;
  size_t pos;
  size_t max_depth;
  poot_status error;
} poot_json_parser;

static void poot_json_location(const poot_json_parser *p, size_t at, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at && i < p->len; i++) {
    if (p->text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

static poot_json *poot_json_fail(poot_json_parser *p, const char *what) {
  if (!p->error) {
    size_t line, col;
    poot_json_location(p, p->pos, &line, &col);
    if (p->pos >= p->len)
      p->error = poot_status_make(POOT_FORMAT, "JSON: %s at end of input (byte %zu, line %zu)",
                                  what, p->pos, line);
    else
      p->error = poot_status_make(POOT_FORMAT, "JSON: %s at byte %zu (line %zu, column %zu)",
                                  what, p->pos, line, col);
  }
  return NULL;
}

static poot_json *poot_json_oom(poot_json_parser *p) {
  if (!p->error) p->error = poot_status_make(POOT_OUT_OF_MEMORY, "JSON: out of memory at byte %zu", p->pos);
  return NULL;
}

static void poot_json_skip_ws(poot_json_parser *p) {
  while (p->pos < p->len) {
    char c = p->text[p->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      p->pos++;
    else
      break;
  }
}

static int poot_json_hex4(const char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v * 16 + d;
  }
  return v;
}

static size_t poot_json_put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* Parses a string at p->pos (which is at the opening quote). */
static bool poot_json_string(poot_json_parser *p, const char **out, size_t *out_len) {
  size_t start = ++p->pos;
  /* The decoded form is never longer than the source. */
  size_t end = start;
  while (end < p->len && p->text[end] != '"') {
    if (p->text[end] == '\\') end++;
    end++;
  }
  if (end >= p->len) {
    poot_json_fail(p, "unterminated string");
    return false;
  }
  char *buf = poot_arena_alloc(p->arena, end - start + 1, 1);
  if (!buf) {
    poot_json_oom(p);
    return false;
  }
  size_t n = 0;
  while (p->pos < end) {
    unsigned char c = (unsigned char)p->text[p->pos];
    if (c < 0x20) {
      poot_json_fail(p, "control character in string");
      return false;
    }
    if (c != '\\') {
      buf[n++] = (char)c;
      p->pos++;
      continue;
    }
    p->pos++;
    char e = p->text[p->pos++];
    switch (e) {
      case '"': buf[n++] = '"'; break;
      case '\\': buf[n++] = '\\'; break;
      case '/': buf[n++] = '/'; break;
      case 'b': buf[n++] = '\b'; break;
      case 'f': buf[n++] = '\f'; break;
      case 'n': buf[n++] = '\n'; break;
      case 'r': buf[n++] = '\r'; break;
      case 't': buf[n++] = '\t'; break;
      case 'u': {
        if (p->pos + 4 > end) {
          p->pos--;
          poot_json_fail(p, "truncated \\u escape");
          return false;
        }
        int cp = poot_json_hex4(p->text + p->pos);
        if (cp < 0) {
          poot_json_fail(p, "bad \\u escape");
          return false;
        }
        p->pos += 4;
        uint32_t code = (uint32_t)cp;
        if (code >= 0xd800 && code <= 0xdbff && p->pos + 6 <= end && p->text[p->pos] == '\\' &&
            p->text[p->pos + 1] == 'u') {
          int lo = poot_json_hex4(p->text + p->pos + 2);
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            code = 0x10000 + ((code - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
            p->pos += 6;
          }
        }
        /* A lone surrogate decodes to U+FFFD, as Python's decoder would keep
         * it unpaired; we cannot represent it in UTF-8. */
        if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
        /* \u escapes are 6 source bytes and decode to at most 4. */
        n += poot_json_put_utf8(buf + n, code);
        break;
      }
      default:
        p->pos--;
        poot_json_fail(p, "bad escape in string");
        return false;
    }
  }
  p->pos = end + 1;
  buf[n] = 0;
  *out = buf;
  *out_len = n;
  return true;
}

static poot_json *poot_json_value(poot_json_parser *p, size_t depth);

static poot_json *poot_json_new(poot_json_parser *p, poot_json_type type) {
  poot_json *v = POOT_ARENA_NEW(p->arena, poot_json);
  if (!v) return poot_json_oom(p);
  v->type = type;
  return v;
}

static poot_json *poot_json_container(poot_json_parser *p, size_t depth, bool object) {
  poot_json *v = poot_json_new(p, object ? POOT_JSON_OBJECT : POOT_JSON_ARRAY);
  if (!v) return NULL;
  p->pos++;
  poot_vec items, keys, lens;
  poot_vec_init(&items, sizeof(poot_json *));
  poot_vec_init(&keys, sizeof(const char *));
  poot_vec_init(&lens, sizeof(size_t));
  poot_json *result = NULL;
  poot_json_skip_ws(p);
  char close = object ? '}' : ']';
  if (p->pos < p->len && p->text[p->pos] == close) {
    p->pos++;
    result = v;
    goto done;
  }
  for (;;) {
    poot_json_skip_ws(p);
    if (object) {
      if (p->pos >= p->len || p->text[p->pos] != '"') {
        poot_json_fail(p, "expected a string key");
        goto done;
      }
      const char *k;
      size_t kl;
      if (!poot_json_string(p, &k, &kl)) goto done;
      poot_json_skip_ws(p);
      if (p->pos >= p->len || p->text[p->pos] != ':') {
        poot_json_fail(p, "expected ':' after object key");
        goto done;
      }
      p->pos++;
      poot_status st = poot_vec_push(&keys, &k);
      if (!st) st = poot_vec_push(&lens, &kl);
      if (st) {
        poot_status_free(st);
        poot_json_oom(p);
        goto done;
      }
    }
    poot_json *item = poot_json_value(p, depth + 1);
    if (!item) goto done;
    poot_status st = poot_vec_push(&items, &item);
    if (st) {
      poot_status_free(st);
      poot_json_oom(p);
      goto done;
    }
    poot_json_skip_ws(p);
    if (p->pos < p->len && p->text[p->pos] == ',') {
      p->pos++;
      continue;
    }
    if (p->pos < p->len && p->text[p->pos] == close) {
      p->pos++;
      break;
    }
    poot_json_fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    goto done;
  }
  v->len = items.len;
  v->items = poot_arena_memdup(p->arena, items.data, items.len * sizeof(poot_json *), _Alignof(poot_json *));
  if (object) {
    v->keys = poot_arena_memdup(p->arena, keys.data, keys.len * sizeof(char *), _Alignof(char *));
    v->key_lens = poot_arena_memdup(p->arena, lens.data, lens.len * sizeof(size_t), _Alignof(size_t));
    if (!v->keys || !v->key_lens) {
      poot_json_oom(p);
      goto done;
    }
  }
  if (!v->items) {
    poot_json_oom(p);
    goto done;
  }
  result = v;
done:
  poot_vec_deinit(&items);
  poot_vec_deinit(&keys);
  poot_vec_deinit(&lens);
  return result;
}

static poot_json *poot_json_number(poot_json_parser *p) {
  size_t start = p->pos;
  const char *t = p->text;
  if (p->pos < p->len && t[p->pos] == '-') p->pos++;
  if (p->pos >= p->len) return poot_json_fail(p, "truncated number");
  if (t[p->pos] == '0') {
    p->pos++;
  } else if (t[p->pos] >= '1' && t[p->pos] <= '9') {
    while (p->pos < p->len && t[p->pos] >= '0' && t[p->pos] <= '9') p->pos++;
  } else {
    return poot_json_fail(p, "bad number");
  }
  if (p->pos < p->len && t[p->pos] == '.') {
    p->pos++;
    if (p->pos >= p->len || t[p->pos] < '0' || t[p->pos] > '9')
      return poot_json_fail(p, "expected a digit after '.'");
    while (p->pos < p->len && t[p->pos] >= '0' && t[p->pos] <= '9') p->pos++;
  }
  if (p->pos < p->len && (t[p->pos] == 'e' || t[p->pos] == 'E')) {
    p->pos++;
    if (p->pos < p->len && (t[p->pos] == '+' || t[p->pos] == '-')) p->pos++;
    if (p->pos >= p->len || t[p->pos] < '0' || t[p->pos] > '9')
      return poot_json_fail(p, "expected a digit in the exponent");
    while (p->pos < p->len && t[p->pos] >= '0' && t[p->pos] <= '9') p->pos++;
  }
  poot_json *v = poot_json_new(p, POOT_JSON_NUMBER);
  if (!v) return NULL;
  char *lit = poot_arena_strndup(p->arena, t + start, p->pos - start);
  if (!lit) return poot_json_oom(p);
  v->str = lit;
  v->len = p->pos - start;
  v->number = strtod(lit, NULL);
  return v;
}

static bool poot_json_word(poot_json_parser *p, const char *w) {
  size_t n = strlen(w);
  if (p->len - p->pos >= n && memcmp(p->text + p->pos, w, n) == 0) {
    p->pos += n;
    return true;
  }
  return false;
}

static poot_json *poot_json_value(poot_json_parser *p, size_t depth) {
  if (depth > p->max_depth) return poot_json_fail(p, "nesting too deep");
  poot_json_skip_ws(p);
  if (p->pos >= p->len) return poot_json_fail(p, "expected a value");
  char c = p->text[p->pos];
  if (c == '{') return poot_json_container(p, depth, true);
  if (c == '[') return poot_json_container(p, depth, false);
  if (c == '"') {
    poot_json *v = poot_json_new(p, POOT_JSON_STRING);
    if (!v) return NULL;
    if (!poot_json_string(p, &v->str, &v->len)) return NULL;
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return poot_json_number(p);
  if (poot_json_word(p, "true")) {
    poot_json *v = poot_json_new(p, POOT_JSON_BOOL);
    if (v) v->boolean = true;
    return v;
  }
  if (poot_json_word(p, "false")) return poot_json_new(p, POOT_JSON_BOOL);
  if (poot_json_word(p, "null")) return poot_json_new(p, POOT_JSON_NULL);
  return poot_json_fail(p, "expected a value");
}

poot_status poot_json_parse(poot_arena *arena, const char *text, size_t len,
                            const poot_json_parse_options *options, poot_json **out_root) {
  *out_root = NULL;
  poot_json_parser p = {.arena = arena, .text = text, .len = len};
  p.max_depth = options && options->max_depth ? options->max_depth : 512;
  poot_json *root = poot_json_value(&p, 0);
  if (root) {
    poot_json_skip_ws(&p);
    if (p.pos != p.len) poot_json_fail(&p, "unexpected text after the value");
  }
  if (p.error) return p.error;
  *out_root = root;
  return NULL;
}

const poot_json *poot_json_get(const poot_json *obj, const char *key) {
  if (!obj || obj->type != POOT_JSON_OBJECT) return NULL;
  size_t kl = strlen(key);
  for (size_t i = 0; i < obj->len; i++)
    if (obj->key_lens[i] == kl && memcmp(obj->keys[i], key, kl) == 0) return obj->items[i];
  return NULL;
}

/* Decodes one UTF-8 sequence; returns its length, or 0 for an invalid byte. */
static size_t poot_json_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  }
  size_t len = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
  if (!len || len > n) return 0;
  uint32_t c = s[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3f);
  }
  static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < min_for_len[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return len;
}

/* The length of the ill-formed sequence at s (s does not start a valid
 * sequence): its maximal subpart, as Unicode's "U+FFFD substitution of
 * maximal subparts" (and Python's errors="replace") counts it, so that
 * "\xe5\x8f " is one replacement and a space. */
static size_t utf8_bad_len(const unsigned char *s, size_t n) {
  const unsigned char c = s[0];
  size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (!len) return 1;
  size_t i = 1;
  for (; i < len && i < n; i++) {
    unsigned char lo = 0x80, hi = 0xbf;
    if (i == 1) { /* the second byte's range depends on the first */
      if (c == 0xe0) lo = 0xa0;
      else if (c == 0xed) hi = 0x9f;
      else if (c == 0xf0) lo = 0x90;
      else if (c == 0xf4) hi = 0x8f;
    }
    if (s[i] < lo || s[i] > hi) break;
  }
  return i;
}

void poot_json_write_string(poot_strbuf *sb, const char *s, size_t n, bool ensure_ascii) {
  poot_strbuf_putc(sb, '"');
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    switch (c) {
      case '"': poot_strbuf_puts(sb, "\\\""); i++; continue;
      case '\\': poot_strbuf_puts(sb, "\\\\"); i++; continue;
      case '\n': poot_strbuf_puts(sb, "\\n"); i++; continue;
      case '\r': poot_strbuf_puts(sb, "\\r"); i++; continue;
      case '\t': poot_strbuf_puts(sb, "\\t"); i++; continue;
      case '\b': poot_strbuf_puts(sb, "\\b"); i++; continue;
      case '\f': poot_strbuf_puts(sb, "\\f"); i++; continue;
      default: break;
    }
    if (c < 0x20) {
      poot_strbuf_printf(sb, "\\u%04x", c);
      i++;
      continue;
    }
    if (c < 0x80) {
      poot_strbuf_putc(sb, (char)c);
      i++;
      continue;
    }
    uint32_t cp;
    size_t len = poot_json_utf8_decode(u + i, n - i, &cp);
    if (!len) { /* JSON text is UTF-8: an ill-formed sequence is U+FFFD */
      poot_strbuf_puts(sb, ensure_ascii ? "\\ufffd" : "\xef\xbf\xbd");
      i += utf8_bad_len(u + i, n - i);
      continue;
    }
    if (!ensure_ascii) {
      poot_strbuf_append(sb, s + i, len);
      i += len;
      continue;
    }
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      poot_strbuf_printf(sb, "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
    } else {
      poot_strbuf_printf(sb, "\\u%04x", cp);
    }
    i += len;
  }
  poot_strbuf_putc(sb, '"');
}

void poot_json_write(poot_strbuf *sb, const poot_json *v, bool python_style, bool ensure_ascii) {
  if (!v) {
    poot_strbuf_puts(sb, "null");
    return;
  }
  switch (v->type) {
    case POOT_JSON_NULL: poot_strbuf_puts(sb, "null"); break;
    case POOT_JSON_BOOL: poot_strbuf_puts(sb, v->boolean ? "true" : "false"); break;
    case POOT_JSON_NUMBER:
      if (v->str) {
        poot_strbuf_append(sb, v->str, v->len);
      } else if (isfinite(v->number) && v->number == (double)(long long)v->number &&
                 fabs(v->number) < 1e15) {
        poot_strbuf_printf(sb, "%lld", (long long)v->number);
      } else {
        poot_strbuf_printf(sb, "%.17g", v->number);
      }
      break;
    case POOT_JSON_STRING: poot_json_write_string(sb, v->str, v->len, ensure_ascii); break;
    case POOT_JSON_ARRAY:
      poot_strbuf_putc(sb, '[');
      for (size_t i = 0; i < v->len; i++) {
        if (i) poot_strbuf_puts(sb, python_style ? ", " : ",");
        poot_json_write(sb, v->items[i], python_style, ensure_ascii);
      }
      poot_strbuf_putc(sb, ']');
      break;
    case POOT_JSON_OBJECT:
      poot_strbuf_putc(sb, '{');
      for (size_t i = 0; i < v->len; i++) {
        if (i) poot_strbuf_puts(sb, python_style ? ", " : ",");
        poot_json_write_string(sb, v->keys[i], v->key_lens[i], ensure_ascii);
        poot_strbuf_puts(sb, python_style ? ": " : ":");
        poot_json_write(sb, v->items[i], python_style, ensure_ascii);
      }
      poot_strbuf_putc(sb, '}');
      break;
  }
}
