/* A growable NUL-terminated byte string. */
#include <stdio.h>
#include <string.h>

#include "poot/base.h"

static char poot_strbuf_empty[1];

void poot_strbuf_init(poot_strbuf *sb) {
  sb->data = poot_strbuf_empty;
  sb->len = 0;
  sb->cap = 0;
  sb->failed = false;
}

void poot_strbuf_deinit(poot_strbuf *sb) {
  if (!sb) return;
  if (sb->cap) poot_free(sb->data);
  poot_strbuf_init(sb);
}

static bool poot_strbuf_grow(poot_strbuf *sb, size_t extra) {
  if (sb->failed) return false;
  size_t need;
  if (!poot_size_add(sb->len, extra, &need) || !poot_size_add(need, 1, &need)) {
    sb->failed = true;
    return false;
  }
  if (need <= sb->cap) return true;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *d = poot_realloc(sb->cap ? sb->data : NULL, cap);
  if (!d) {
    sb->failed = true;
    return false;
  }
  if (!sb->cap) d[0] = 0;
  sb->data = d;
  sb->cap = cap;
  return true;
}

void poot_strbuf_append(poot_strbuf *sb, const char *s, size_t n) {
  if (!poot_strbuf_grow(sb, n)) return;
  if (n) memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = 0;
}

void poot_strbuf_puts(poot_strbuf *sb, const char *s) { poot_strbuf_append(sb, s, strlen(s)); }

void poot_strbuf_putc(poot_strbuf *sb, char c) { poot_strbuf_append(sb, &c, 1); }

/* One vsnprintf where the text fits the free capacity (the common case: a
 * kernel's text is printed a short piece at a time, and measuring each piece
 * first doubled the cost of planning's printing); a second into the grown
 * buffer where it does not. */
void poot_strbuf_vprintf(poot_strbuf *sb, const char *fmt, va_list ap) {
  if (sb->failed) return;
  size_t room = sb->cap ? sb->cap - sb->len : 0; /* free bytes, the NUL's included */
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(room ? sb->data + sb->len : NULL, room, fmt, ap2);
  va_end(ap2);
  if (n >= 0 && (size_t)n < room) {
    sb->len += (size_t)n;
    return;
  }
  if (room) sb->data[sb->len] = 0; /* a truncated attempt leaves nothing */
  if (n < 0) {
    sb->failed = true;
    return;
  }
  if (!poot_strbuf_grow(sb, (size_t)n)) return;
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void poot_strbuf_printf(poot_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  poot_strbuf_vprintf(sb, fmt, ap);
  va_end(ap);
}

void poot_strbuf_clear(poot_strbuf *sb) {
  sb->len = 0;
  if (sb->cap) sb->data[0] = 0;
  sb->failed = false;
}

poot_status poot_strbuf_status(const poot_strbuf *sb) {
  if (sb->failed) return poot_status_make(POOT_OUT_OF_MEMORY, "building a string of %zu bytes", sb->len);
  return NULL;
}

char *poot_strbuf_take(poot_strbuf *sb) {
  char *d;
  if (sb->cap) {
    d = sb->data;
  } else {
    d = poot_malloc(1);
    if (d) d[0] = 0;
  }
  poot_strbuf_init(sb);
  return d;
}
