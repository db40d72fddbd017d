/* tpl_lex.c — the chat-template lexer.
 *
 * It follows jinja2's lexer rule for rule, with the settings transformers
 * uses: trim_blocks (one newline after a block or comment tag is dropped),
 * lstrip_blocks (spaces and tabs before a block or comment tag at the start of
 * a line are dropped), `-` and `+` whitespace control on every tag, raw blocks,
 * \r\n and \r read as \n, and one trailing newline of the source dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_impl.h"

typedef struct lexer {
  poot_arena *arena;
  const char *src;
  size_t n;
  poot_vec toks;
  size_t line_pos; /* line counting: newlines before line_pos are counted */
  uint32_t line;
} lexer;

static uint32_t line_at(lexer *lx, size_t pos) {
  while (lx->line_pos < pos && lx->line_pos < lx->n) {
    if (lx->src[lx->line_pos] == '\n') lx->line++;
    lx->line_pos++;
  }
  return lx->line;
}

static poot_status lex_error(lexer *lx, size_t pos, const char *msg) {
  return poot_status_make(POOT_FORMAT, "template line %u: %s", (unsigned)line_at(lx, pos), msg);
}

/* Python's \s at byte i: returns the byte length of the whitespace code point
 * there, or 0. */
static size_t ws_at(const char *s, size_t n, size_t i) {
  if (i >= n) return 0;
  unsigned char c = (unsigned char)s[i];
  if (c < 0x80) return (c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f)) ? 1 : 0;
  size_t len = 0;
  uint32_t cp = poot__tpl_utf8_decode(s, n, i, &len);
  return poot__tpl_py_isspace(cp) ? len : 0;
}

static size_t skip_ws(const char *s, size_t n, size_t i) {
  size_t k;
  while ((k = ws_at(s, n, i)) > 0) i += k;
  return i;
}

static poot_status push(lexer *lx, tpl_token tok) {
  if (poot_vec_push(&lx->toks, &tok)) return poot__tpl_oom();
  return NULL;
}

static poot_status push_simple(lexer *lx, tpl_tok_kind kind, size_t pos) {
  tpl_token t = {.kind = kind, .line = line_at(lx, pos)};
  return push(lx, t);
}

/* Emits text [b, e) as DATA after applying the strip rule of the tag that
 * follows it (sign '-', '+' or 0; is_var: the tag is {{). */
static poot_status emit_data(lexer *lx, size_t b, size_t e, char sign, bool is_var,
                             bool line_starting) {
  if (sign == '-') {
    /* Python's str.rstrip(): strip whitespace code points from the end. */
    size_t k = e;
    for (;;) {
      size_t j = k;
      while (j > b && ((unsigned char)lx->src[j - 1] & 0xC0) == 0x80) j--;
      if (j > b) j--;
      if (k == b || ws_at(lx->src, e, j) != k - j) break;
      k = j;
    }
    e = k;
  } else if (sign != '+' && !is_var) {
    size_t l_pos = b;
    for (size_t i = e; i > b; i--) {
      if (lx->src[i - 1] == '\n') {
        l_pos = i;
        break;
      }
    }
    if ((l_pos > b || line_starting) && l_pos < e && skip_ws(lx->src, e, l_pos) == e) e = l_pos;
  }
  if (e <= b) return NULL;
  char *text = poot_arena_strndup(lx->arena, lx->src + b, e - b);
  if (!text) return poot__tpl_oom();
  tpl_token t = {.kind = TK_DATA, .line = line_at(lx, b), .text = text, .len = e - b};
  return push(lx, t);
}

/* Matches an end tag `X}` (block '%', comment '#') with its whitespace rules at
 * pos; returns the position after it or 0. */
static size_t match_tag_end(lexer *lx, size_t pos, char kind) {
  const char *s = lx->src;
  size_t n = lx->n;
  if (pos + 2 < n + 0 && s[pos] == '+' && s[pos + 1] == kind && pos + 2 < n && s[pos + 2] == '}')
    return pos + 3;
  if (s[pos] == '-' && pos + 2 < n && s[pos + 1] == kind && s[pos + 2] == '}')
    return skip_ws(s, n, pos + 3);
  if (s[pos] == kind && pos + 1 < n && s[pos + 1] == '}') {
    size_t e = pos + 2;
    if (e < n && s[e] == '\n') e++; /* trim_blocks */
    return e;
  }
  return 0;
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (unsigned char)c >= 0x80;
}
static bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

/* (\d+_)*\d+ at i: end or 0. */
static size_t digits_us(const char *s, size_t n, size_t i) {
  if (i >= n || !is_digit(s[i])) return 0;
  while (i < n) {
    if (is_digit(s[i])) {
      i++;
    } else if (s[i] == '_' && i + 1 < n && is_digit(s[i + 1])) {
      i++;
    } else {
      break;
    }
  }
  return i;
}

static size_t match_float(const char *s, size_t n, size_t i) {
  if (i > 0 && s[i - 1] == '.') return 0;
  size_t e = digits_us(s, n, i);
  if (!e) return 0;
  size_t frac = 0;
  if (e < n && s[e] == '.') frac = digits_us(s, n, e + 1);
  size_t after = frac ? frac : e;
  if (after < n && (s[after] == 'e' || s[after] == 'E')) {
    size_t k = after + 1;
    if (k < n && (s[k] == '+' || s[k] == '-')) k++;
    size_t x = digits_us(s, n, k);
    if (x) return x;
  }
  return frac;
}

static poot_status lex_number(lexer *lx, size_t *pos, bool *matched) {
  const char *s = lx->src;
  size_t n = lx->n, i = *pos;
  *matched = false;
  size_t fe = match_float(s, n, i);
  char buf[128];
  if (fe) {
    size_t k = 0;
    for (size_t j = i; j < fe && k + 1 < sizeof buf; j++)
      if (s[j] != '_') buf[k++] = s[j];
    buf[k] = 0;
    tpl_token t = {.kind = TK_FLOAT, .line = line_at(lx, i), .fval = strtod(buf, NULL)};
    *pos = fe;
    *matched = true;
    return push(lx, t);
  }
  if (!is_digit(s[i])) return NULL;
  int base = 10;
  size_t j = i;
  if (s[i] == '0' && i + 1 < n && strchr("bBoOxX", s[i + 1]) && s[i + 1] != 0) {
    char b = (char)(s[i + 1] | 0x20);
    base = b == 'b' ? 2 : b == 'o' ? 8 : 16;
    j = i + 2;
  }
  uint64_t v = 0;
  bool any = false, overflow = false;
  if (base == 10 && s[i] == '0') {
    j = i + 1;
    while (j < n && (s[j] == '0' || (s[j] == '_' && j + 1 < n && s[j + 1] == '0'))) j++;
    any = true;
  } else {
    while (j < n) {
      char c = s[j];
      int d = -1;
      if (c == '_' && any && j + 1 < n) {
        j++;
        continue;
      }
      if (is_digit(c))
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      if (d < 0 || d >= base) break;
      if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = true;
      v = v * (uint64_t)base + (uint64_t)d;
      any = true;
      j++;
    }
  }
  if (!any) return NULL; /* "0x" alone: let the name/operator rules fail */
  if (overflow || v > (uint64_t)INT64_MAX)
    return lex_error(lx, i, "integer literal too large (poot keeps integers in 64 bits)");
  tpl_token t = {.kind = TK_INT, .line = line_at(lx, i), .ival = (int64_t)v};
  *pos = j;
  *matched = true;
  return push(lx, t);
}

static int hexval(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A string literal at *pos (quote there). Decodes Python escapes. */
static poot_status lex_string(lexer *lx, size_t *pos, bool *matched) {
  const char *s = lx->src;
  size_t n = lx->n, i = *pos;
  char q = s[i];
  *matched = false;
  size_t j = i + 1;
  while (j < n && s[j] != q) {
    if (s[j] == '\\') j++;
    j++;
  }
  if (j >= n) return NULL; /* unterminated: not a string token (jinja2 then fails on it) */
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = NULL;
  for (size_t k = i + 1; k < j; k++) {
    char c = s[k];
    if (c != '\\') {
      poot_strbuf_putc(&sb, c);
      continue;
    }
    char e = s[++k];
    switch (e) {
      case '\n':
        break;
      case '\\':
        poot_strbuf_putc(&sb, '\\');
        break;
      case '\'':
        poot_strbuf_putc(&sb, '\'');
        break;
      case '"':
        poot_strbuf_putc(&sb, '"');
        break;
      case 'a':
        poot_strbuf_putc(&sb, '\a');
        break;
      case 'b':
        poot_strbuf_putc(&sb, '\b');
        break;
      case 'f':
        poot_strbuf_putc(&sb, '\f');
        break;
      case 'n':
        poot_strbuf_putc(&sb, '\n');
        break;
      case 'r':
        poot_strbuf_putc(&sb, '\r');
        break;
      case 't':
        poot_strbuf_putc(&sb, '\t');
        break;
      case 'v':
        poot_strbuf_putc(&sb, '\v');
        break;
      case 'x':
      case 'u':
      case 'U': {
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (int d = 0; d < digits; d++) {
          int h = k + 1 + (size_t)d < j ? hexval(s[k + 1 + (size_t)d]) : -1;
          if (h < 0) {
            st = lex_error(lx, i, "truncated \\x, \\u or \\U escape in a string literal");
            goto done;
          }
          cp = cp * 16 + (uint32_t)h;
        }
        k += (size_t)digits;
        if (cp > 0x10FFFF) {
          st = lex_error(lx, i, "illegal Unicode character in a string literal");
          goto done;
        }
        poot__tpl_utf8_put(&sb, cp);
        break;
      }
      case 'N':
        st = poot_status_make(POOT_UNSUPPORTED,
                              "template line %u: \\N{...} escapes are not supported",
                              (unsigned)line_at(lx, i));
        goto done;
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = (uint32_t)(e - '0');
          for (int d = 0; d < 2 && k + 1 < j && s[k + 1] >= '0' && s[k + 1] <= '7'; d++)
            cp = cp * 8 + (uint32_t)(s[++k] - '0');
          poot__tpl_utf8_put(&sb, cp);
        } else {
          poot_strbuf_putc(&sb, '\\');
          poot_strbuf_putc(&sb, e);
        }
    }
  }
  if (poot_strbuf_status(&sb)) {
    st = poot__tpl_oom();
    goto done;
  }
  {
    char *text = poot_arena_memdup(lx->arena, sb.data, sb.len + 1, 1);
    if (!text) {
      st = poot__tpl_oom();
      goto done;
    }
    tpl_token t = {.kind = TK_STRING, .line = line_at(lx, i), .text = text, .len = sb.len};
    st = push(lx, t);
    *pos = j + 1;
    *matched = true;
  }
done:
  poot_strbuf_deinit(&sb);
  return st;
}

static const char *const two_char_ops[] = {"//", "**", "==", "!=", ">=", "<="};

/* Tokens inside {% %} or {{ }} until the end tag. */
static poot_status lex_tag(lexer *lx, size_t *pos, bool is_block, bool *line_starting) {
  const char *s = lx->src;
  size_t n = lx->n, i = *pos;
  char balance[256];
  size_t depth = 0;
  for (;;) {
    if (i >= n) return lex_error(lx, i, "unexpected end of template inside a tag");
    if (depth == 0) {
      size_t e = 0;
      if (is_block) {
        e = match_tag_end(lx, i, '%');
      } else if (s[i] == '-' && i + 2 < n + 0 && s[i + 1] == '}' && s[i + 2] == '}') {
        e = skip_ws(s, n, i + 3);
      } else if (s[i] == '}' && i + 1 < n && s[i + 1] == '}') {
        e = i + 2;
      }
      if (e) {
        POOT_TRY(push_simple(lx, is_block ? TK_BLOCK_END : TK_VAR_END, i));
        *line_starting = s[e - 1] == '\n';
        *pos = e;
        return NULL;
      }
    }
    size_t w = skip_ws(s, n, i);
    if (w > i) {
      i = w;
      continue;
    }
    bool matched = false;
    POOT_TRY(lex_number(lx, &i, &matched));
    if (matched) continue;
    char c = s[i];
    if (is_name_start(c)) {
      size_t j = i;
      while (j < n && is_name_char(s[j])) j++;
      char *text = poot_arena_strndup(lx->arena, s + i, j - i);
      if (!text) return poot__tpl_oom();
      tpl_token t = {.kind = TK_NAME, .line = line_at(lx, i), .text = text, .len = j - i};
      POOT_TRY(push(lx, t));
      i = j;
      continue;
    }
    if (c == '\'' || c == '"') {
      POOT_TRY(lex_string(lx, &i, &matched));
      if (matched) continue;
    }
    size_t oplen = 0;
    for (size_t k = 0; k < sizeof two_char_ops / sizeof two_char_ops[0]; k++) {
      if (i + 1 < n && s[i] == two_char_ops[k][0] && s[i + 1] == two_char_ops[k][1]) oplen = 2;
    }
    if (!oplen && c && strchr("+-/*%~[](){}><=.:|,;", c)) oplen = 1;
    if (!oplen) {
      char msg[64];
      snprintf(msg, sizeof msg, "unexpected char '%c'", c);
      return lex_error(lx, i, msg);
    }
    if (oplen == 1 && (c == '(' || c == '[' || c == '{')) {
      if (depth >= sizeof balance)
        return poot_status_make(POOT_CAPACITY,
                                "template line %u: brackets nested more than %zu deep",
                                (unsigned)line_at(lx, i), sizeof balance);
      balance[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (oplen == 1 && (c == ')' || c == ']' || c == '}')) {
      if (depth == 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "unexpected '%c'", c);
        return lex_error(lx, i, msg);
      }
      if (balance[--depth] != c) {
        char msg[64];
        snprintf(msg, sizeof msg, "unexpected '%c', expected '%c'", c, balance[depth]);
        return lex_error(lx, i, msg);
      }
    }
    char *text = poot_arena_strndup(lx->arena, s + i, oplen);
    if (!text) return poot__tpl_oom();
    tpl_token t = {.kind = TK_OP, .line = line_at(lx, i), .text = text, .len = oplen};
    POOT_TRY(push(lx, t));
    i += oplen;
  }
}

/* `{%(-|+|)\s*raw\s*(-%}\s*|%})` at i: end or 0. */
static size_t match_raw_begin(lexer *lx, size_t i, const char *word) {
  const char *s = lx->src;
  size_t n = lx->n, wl = strlen(word);
  if (i + 1 >= n || s[i] != '{' || s[i + 1] != '%') return 0;
  size_t j = i + 2;
  if (j < n && (s[j] == '-' || s[j] == '+')) j++;
  j = skip_ws(s, n, j);
  if (j + wl > n || memcmp(s + j, word, wl) != 0) return 0;
  j = skip_ws(s, n, j + wl);
  return j;
}

static poot_status lex_all(lexer *lx) {
  const char *s = lx->src;
  size_t n = lx->n, pos = 0;
  bool line_starting = true;
  while (pos < n) {
    /* Find the next tag opening. */
    size_t i = pos;
    int kind = 0; /* '%', '{', '#', 'r' (raw) */
    size_t raw_end = 0;
    while (i + 1 < n) {
      if (s[i] == '{' && (s[i + 1] == '%' || s[i + 1] == '{' || s[i + 1] == '#')) {
        if (s[i + 1] == '%') {
          size_t j = match_raw_begin(lx, i, "raw");
          if (j) {
            if (j + 2 < n + 0 && s[j] == '-' && s[j + 1] == '%' && s[j + 2] == '}') {
              raw_end = skip_ws(s, n, j + 3);
            } else if (j + 1 < n && s[j] == '%' && s[j + 1] == '}') {
              raw_end = j + 2;
            }
          }
        }
        kind = raw_end ? 'r' : s[i + 1];
        break;
      }
      i++;
    }
    if (!kind) {
      POOT_TRY(emit_data(lx, pos, n, '+', true, line_starting));
      return NULL;
    }
    char sign = (i + 2 < n && (s[i + 2] == '-' || s[i + 2] == '+')) ? s[i + 2] : 0;
    POOT_TRY(emit_data(lx, pos, i, sign, kind == '{', line_starting));
    size_t after = i + 2 + (sign ? 1 : 0);
    if (kind == '#') {
      size_t j = after, e = 0;
      for (; j < n; j++) {
        if ((e = match_tag_end(lx, j, '#')) != 0) break;
      }
      if (!e) return lex_error(lx, i, "missing end of comment tag");
      line_starting = s[e - 1] == '\n';
      pos = e;
    } else if (kind == 'r') {
      size_t start = raw_end;
      bool ls = s[raw_end - 1] == '\n';
      size_t j = start, end_e = 0;
      char esign = 0;
      for (; j + 1 < n; j++) {
        size_t k = match_raw_begin(lx, j, "endraw");
        if (!k) continue;
        size_t e = match_tag_end(lx, k, '%');
        if (e) {
          end_e = e;
          esign = (s[j + 2] == '-' || s[j + 2] == '+') ? s[j + 2] : 0;
          break;
        }
      }
      if (!end_e) return lex_error(lx, i, "missing end of raw directive");
      POOT_TRY(emit_data(lx, start, j, esign, false, ls));
      line_starting = s[end_e - 1] == '\n';
      pos = end_e;
    } else {
      POOT_TRY(push_simple(lx, kind == '%' ? TK_BLOCK_BEGIN : TK_VAR_BEGIN, i));
      pos = after;
      POOT_TRY(lex_tag(lx, &pos, kind == '%', &line_starting));
    }
  }
  return NULL;
}

poot_status poot__tpl_lex(poot_arena *arena, const char *src, size_t len, tpl_token **out_tokens,
                          size_t *out_count) {
  *out_tokens = NULL;
  *out_count = 0;
  /* Normalize newlines and drop one trailing newline, as jinja2 does. */
  char *norm = poot_arena_alloc(arena, len + 1, 1);
  if (!norm) return poot__tpl_oom();
  size_t m = 0;
  for (size_t i = 0; i < len; i++) {
    if (src[i] == '\r') {
      norm[m++] = '\n';
      if (i + 1 < len && src[i + 1] == '\n') i++;
    } else {
      norm[m++] = src[i];
    }
  }
  if (m > 0 && norm[m - 1] == '\n') m--;
  norm[m] = 0;
  lexer lx = {.arena = arena, .src = norm, .n = m, .line = 1};
  poot_vec_init(&lx.toks, sizeof(tpl_token));
  poot_status st = lex_all(&lx);
  if (!st) st = push_simple(&lx, TK_EOF, m);
  if (!st) {
    tpl_token *t = poot_arena_memdup(arena, lx.toks.data, lx.toks.len * sizeof(tpl_token),
                                     _Alignof(tpl_token));
    if (!t) {
      st = poot__tpl_oom();
    } else {
      *out_tokens = t;
      *out_count = lx.toks.len;
    }
  }
  poot_vec_deinit(&lx.toks);
  return st;
}
