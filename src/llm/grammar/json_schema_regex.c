/* JSON Schema "pattern" → GBNF: a regular-expression subset (literals, classes, '.', groups,
 * alternation, * + ? {m} {m,} {m,n}, anchors ^ $ at the ends) compiled to the JSON spelling
 * of the matching strings. The semantics are Python's re.search on the decoded string: an
 * unanchored side may be preceded or followed by any characters. \d \w \s are their ASCII
 * sets (Python's are Unicode, so the grammar's language is a subset); characters are spelled
 * raw, or with the short escape JSON needs (\" \\ \n …, \u00XX for other controls). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_schema_impl.h"

#define RX_MAX_RANGES 512
#define RX_MAX_NEST 32

typedef struct rx_range {
  uint32_t lo, hi;
} rx_range;

typedef struct rx_set {
  rx_range r[RX_MAX_RANGES];
  size_t n;
} rx_set;

typedef struct rx {
  js_ctx *c;
  const char *s;
  size_t n, pos;
  int nest;
} rx;

static poot_status rx_unsupported(rx *x, const char *what) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s in the pattern (at character %zu)", what, x->pos + 1);
  return poot__js_unsupported(x->c, msg);
}

static poot_status rx_invalid(rx *x, const char *what) {
  return poot__js_err(x->c, POOT_INVALID_ARGUMENT,
                      "the pattern is not a regular expression: %s "
                      "(at character %zu)",
                      what, x->pos + 1);
}

static int rx_peek(const rx *x) {
  return x->pos < x->n ? (unsigned char)x->s[x->pos] : -1;
}

/* The next code point (the pattern is valid UTF-8: the caller checked). */
static uint32_t rx_take(rx *x) {
  const unsigned char *u = (const unsigned char *)x->s + x->pos;
  uint32_t cp = u[0];
  size_t len = 1;
  if (cp >= 0xF0) {
    cp &= 0x07u;
    len = 4;
  } else if (cp >= 0xE0) {
    cp &= 0x0Fu;
    len = 3;
  } else if (cp >= 0xC0) {
    cp &= 0x1Fu;
    len = 2;
  }
  for (size_t i = 1; i < len; i++) cp = (cp << 6) | (u[i] & 0x3Fu);
  x->pos += len;
  return cp;
}

/* ------------------------------------------------------------------ sets */

static poot_status set_add(rx *x, rx_set *s, uint32_t lo, uint32_t hi) {
  if (s->n == RX_MAX_RANGES) return rx_unsupported(x, "a character class of over 512 ranges");
  s->r[s->n++] = (rx_range){lo, hi};
  return POOT_OK_STATUS;
}

static int range_cmp(const void *a, const void *b) {
  const rx_range *p = a, *q = b;
  return p->lo < q->lo ? -1 : p->lo > q->lo;
}

static void set_normalize(rx_set *s) {
  qsort(s->r, s->n, sizeof s->r[0], range_cmp);
  size_t k = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (k && s->r[i].lo <= s->r[k - 1].hi + 1) {
      if (s->r[i].hi > s->r[k - 1].hi) s->r[k - 1].hi = s->r[i].hi;
    } else {
      s->r[k++] = s->r[i];
    }
  }
  s->n = k;
}

/* The complement over the Unicode scalar values. */
static poot_status set_negate(rx *x, rx_set *s) {
  set_normalize(s);
  rx_set out = {.n = 0};
  uint32_t next = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (s->r[i].lo > next) POOT_TRY(set_add(x, &out, next, s->r[i].lo - 1));
    next = s->r[i].hi + 1;
  }
  if (next <= 0x10FFFF) POOT_TRY(set_add(x, &out, next, 0x10FFFF));
  *s = out;
  return POOT_OK_STATUS;
}

static poot_status set_class_escape(rx *x, rx_set *s, int e, bool negated) {
  if (negated && (e == 'd' || e == 'w' || e == 's'))
    return rx_unsupported(x, "\\d, \\w or \\s inside a negated class (Python's are Unicode)");
  switch (e) {
    case 'd':
      return set_add(x, s, '0', '9');
    case 'w':
      POOT_TRY(set_add(x, s, '0', '9'));
      POOT_TRY(set_add(x, s, 'A', 'Z'));
      POOT_TRY(set_add(x, s, 'a', 'z'));
      return set_add(x, s, '_', '_');
    case 's':
      POOT_TRY(set_add(x, s, '\t', '\r'));
      return set_add(x, s, ' ', ' ');
    default:
      return rx_unsupported(x, "\\D, \\W or \\S (Python's are Unicode)");
  }
}

static poot_status hex_escape(rx *x, int digits, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < digits; i++) {
    int ch = rx_peek(x);
    int d = ch >= '0' && ch <= '9'   ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
            : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                     : -1;
    if (d < 0) return rx_invalid(x, "a hex digit");
    v = v * 16 + (uint32_t)d;
    x->pos++;
  }
  if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return rx_invalid(x, "a Unicode scalar value");
  *out = v;
  return POOT_OK_STATUS;
}

/* After a backslash: a single character (*is_char) or a class escape added to `s`. */
static poot_status escape(rx *x, rx_set *s, bool in_class, bool negated, uint32_t *out_cp,
                          bool *is_char) {
  *is_char = true;
  int e = rx_peek(x);
  if (e < 0) return rx_invalid(x, "a character after '\\'");
  if (e >= 0x80) {
    *out_cp = rx_take(x);
    return POOT_OK_STATUS;
  }
  x->pos++;
  static const char simple[] = "ntrfva0";
  static const uint32_t simple_cp[] = {'\n', '\t', '\r', '\f', '\v', 7, 0};
  const char *p = strchr(simple, e);
  if (p && e) {
    *out_cp = simple_cp[p - simple];
    return POOT_OK_STATUS;
  }
  if (e == 'x') return hex_escape(x, 2, out_cp);
  if (e == 'u') return hex_escape(x, 4, out_cp);
  if (e == 'U') return hex_escape(x, 8, out_cp);
  if (in_class && e == 'b') {
    *out_cp = 8;
    return POOT_OK_STATUS;
  }
  if (strchr("dwsDWS", e)) {
    *is_char = false;
    return set_class_escape(x, s, e, negated);
  }
  if (strchr("bBAZzG", e)) return rx_unsupported(x, "the anchor or boundary escape");
  if (e >= '1' && e <= '9') return rx_unsupported(x, "a back reference");
  if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
    return rx_invalid(x, "a known escape (a letter after '\\' that Python refuses)");
  *out_cp = (uint32_t)e;
  return POOT_OK_STATUS;
}

static poot_status parse_class(rx *x, rx_set *s) {
  x->pos++; /* [ */
  bool negated = rx_peek(x) == '^';
  if (negated) x->pos++;
  bool first = true;
  while (rx_peek(x) != ']' || first) {
    if (rx_peek(x) < 0) return rx_invalid(x, "']' to close the class");
    if (rx_peek(x) == '[' && x->pos + 1 < x->n && strchr(":=.", x->s[x->pos + 1]))
      return rx_unsupported(x, "a POSIX class or set operation");
    first = false;
    uint32_t lo = 0;
    bool is_char = true;
    if (rx_peek(x) == '\\') {
      x->pos++;
      POOT_TRY(escape(x, s, true, negated, &lo, &is_char));
    } else {
      lo = rx_take(x);
    }
    if (!is_char) continue;
    uint32_t hi = lo;
    if (rx_peek(x) == '-' && x->pos + 1 < x->n && x->s[x->pos + 1] != ']') {
      x->pos++;
      if (rx_peek(x) == '\\') {
        x->pos++;
        POOT_TRY(escape(x, s, true, negated, &hi, &is_char));
        if (!is_char) return rx_invalid(x, "a character to end the range");
      } else {
        hi = rx_take(x);
      }
      if (hi < lo) return rx_invalid(x, "a range whose end is not below its start");
    }
    POOT_TRY(set_add(x, s, lo, hi));
  }
  x->pos++; /* ] */
  if (negated) POOT_TRY(set_negate(x, s));
  return POOT_OK_STATUS;
}

/* A class member: printable ASCII as itself (escaped where the class syntax needs it), other
 * code points as \uHHHH or \UHHHHHHHH. */
static void put_cp(poot_strbuf *sb, uint32_t cp) {
  if (cp > 0x20 && cp < 0x7F) {
    if (strchr("]\\^-[\"", (int)cp)) poot_strbuf_putc(sb, '\\');
    poot_strbuf_putc(sb, (char)cp);
  } else if (cp <= 0xFFFF) {
    poot_strbuf_printf(sb, "\\u%04X", cp);
  } else {
    poot_strbuf_printf(sb, "\\U%08X", cp);
  }
}

static void put_range(poot_strbuf *sb, uint32_t lo, uint32_t hi) {
  put_cp(sb, lo);
  if (hi == lo) return;
  if (hi > lo + 1) poot_strbuf_putc(sb, '-');
  put_cp(sb, hi);
}

/* The escapes of the set's special characters: the letters of the short escapes (\" \\ \b
 * \t \n \f \r) and, for the other controls, the hex digits after \u000 and \u001 (either
 * case). */
typedef struct rx_escapes {
  char letters[16];
  size_t n_letters;
  char hex[2][48]; /* class text of the last digit, for \u000X and \u001X */
  size_t n_hex[2];
} rx_escapes;

static void escape_of(rx_escapes *e, uint32_t cp) {
  static const char short_esc[14] = {[8] = 'b', [9] = 't', [10] = 'n', [12] = 'f', [13] = 'r'};
  char letter = cp == '"' ? '"' : cp == '\\' ? '\\' : cp < 14 ? short_esc[cp] : 0;
  if (letter) {
    if (letter == '"' || letter == '\\') e->letters[e->n_letters++] = '\\';
    e->letters[e->n_letters++] = letter;
    return;
  }
  int d = (int)(cp & 15), row = (int)(cp >> 4);
  char *h = e->hex[row];
  if (d < 10) {
    h[e->n_hex[row]++] = (char)('0' + d);
  } else {
    h[e->n_hex[row]++] = (char)('a' + d - 10);
    h[e->n_hex[row]++] = (char)('A' + d - 10);
  }
}

/* Appends the escape alternatives ("\\" [letters] | "\\u00" (…)) and counts them. */
static size_t put_escapes(rx_escapes *e, poot_strbuf *sb, bool first) {
  size_t n = 0;
  if (e->n_letters) {
    e->letters[e->n_letters] = '\0';
    poot_strbuf_printf(sb, "%s\"\\\\\" [%s]", first ? "" : " | ", e->letters);
    n++;
  }
  if (e->n_hex[0] || e->n_hex[1]) {
    poot_strbuf_printf(sb, "%s\"\\\\u00\" (", first && !n ? "" : " | ");
    for (int row = 0; row < 2; row++) {
      if (!e->n_hex[row]) continue;
      e->hex[row][e->n_hex[row]] = '\0';
      poot_strbuf_printf(sb, "%s\"%d\" [%s]", row && e->n_hex[0] ? " | " : "", row, e->hex[row]);
    }
    poot_strbuf_puts(sb, ")");
    n++;
  }
  return n;
}

/* Appends the JSON spellings of the set's characters as one GBNF primary: a class of the
 * characters written raw, and the escapes of '"', '\' and the controls. */
static poot_status emit_set(rx *x, rx_set *s, poot_strbuf *sb) {
  set_normalize(s);
  poot_strbuf cls;
  poot_strbuf_init(&cls);
  rx_escapes e = {.n_letters = 0};
  for (size_t i = 0; i < s->n; i++) {
    uint32_t lo = s->r[i].lo, hi = s->r[i].hi;
    for (uint32_t cp = lo; cp <= hi && cp < 0x20; cp++) escape_of(&e, cp);
    if (hi < 0x20) continue;
    if (lo < 0x20) lo = 0x20;
    /* '"' and '\' are escaped; surrogates are not characters */
    uint32_t cut[][2] = {{'"', '"'}, {'\\', '\\'}, {0xD800, 0xDFFF}};
    uint32_t start = lo;
    for (size_t k = 0; k < 3 && start <= hi; k++) {
      if (cut[k][1] < start || cut[k][0] > hi) continue;
      if (cut[k][0] > start) put_range(&cls, start, cut[k][0] - 1);
      if (k < 2) escape_of(&e, cut[k][0]);
      start = cut[k][1] + 1;
    }
    if (start <= hi) put_range(&cls, start, hi);
  }
  poot_strbuf alts;
  poot_strbuf_init(&alts);
  size_t n_alts = put_escapes(&e, &alts, true);
  poot_status st = cls.failed || alts.failed ? poot__js_oom() : POOT_OK_STATUS;
  if (!st && cls.len == 0 && n_alts == 0) st = rx_unsupported(x, "a class that matches nothing");
  if (!st) {
    bool group = n_alts + (cls.len ? 1 : 0) > 1;
    poot_strbuf_puts(sb, group ? "(" : "");
    if (cls.len) poot_strbuf_printf(sb, "[%s]%s", cls.data, n_alts ? " | " : "");
    poot_strbuf_puts(sb, alts.data);
    poot_strbuf_puts(sb, group ? ")" : "");
  }
  poot_strbuf_deinit(&cls);
  poot_strbuf_deinit(&alts);
  return st;
}

/* ------------------------------------------------------------- structure */

static poot_status parse_alt(rx *x, poot_strbuf *sb, bool *nullable, size_t *branches);

static bool parse_uint(rx *x, uint32_t *out) {
  if (rx_peek(x) < '0' || rx_peek(x) > '9') return false;
  uint64_t v = 0;
  while (rx_peek(x) >= '0' && rx_peek(x) <= '9') {
    v = v * 10 + (uint64_t)(rx_peek(x) - '0');
    if (v > 100000) v = 100000;
    x->pos++;
  }
  *out = (uint32_t)v;
  return true;
}

/* A quantifier {m}, {m,}, {m,n}, {,n}, {,}; false (position unchanged) when '{' is a literal. */
static bool parse_braces(rx *x, uint32_t *min, uint32_t *max) {
  size_t at = x->pos;
  x->pos++;
  bool has_min = parse_uint(x, min);
  if (!has_min) *min = 0;
  *max = *min;
  if (rx_peek(x) == ',') {
    x->pos++;
    if (!parse_uint(x, max)) *max = UINT32_MAX;
  } else if (!has_min) {
    x->pos = at;
    return false;
  }
  if (rx_peek(x) != '}') { /* as Python: {,} is {0,} and {,n} is {0,n} */
    x->pos = at;
    return false;
  }
  x->pos++;
  return true;
}

static poot_status parse_quant(rx *x, poot_strbuf *sb, bool atom_nullable, bool *nullable) {
  int q = rx_peek(x);
  uint32_t min = 0, max = 0;
  if (q == '*' || q == '+' || q == '?') {
    x->pos++;
    min = q == '+' ? 1 : 0;
    max = q == '?' ? 1 : UINT32_MAX;
  } else if (q == '{' && parse_braces(x, &min, &max)) {
  } else {
    return POOT_OK_STATUS;
  }
  if (rx_peek(x) == '?') x->pos++; /* lazy: the same language */
  if (rx_peek(x) == '+') return rx_unsupported(x, "a possessive quantifier");
  if (max != UINT32_MAX && min > max)
    return rx_invalid(x, "a repetition whose minimum is above its maximum");
  if (min > JS_MAX_REPEAT || (max != UINT32_MAX && max > JS_MAX_REPEAT))
    return rx_unsupported(x, "a repetition count above 1000");
  if (atom_nullable && max > 1)
    return rx_unsupported(x, "repeating something that can match the empty string");
  if (max == UINT32_MAX)
    poot_strbuf_printf(sb, min == 0 ? "*" : min == 1 ? "+" : "{%u,}", min);
  else if (min == 0 && max == 1)
    poot_strbuf_puts(sb, "?");
  else if (min == max)
    poot_strbuf_printf(sb, "{%u}", min);
  else
    poot_strbuf_printf(sb, "{%u,%u}", min, max);
  if (min == 0) *nullable = true;
  return POOT_OK_STATUS;
}

static poot_status parse_group(rx *x, poot_strbuf *sb, bool *nullable) {
  x->pos++; /* ( */
  if (rx_peek(x) == '?') {
    x->pos++;
    int k = rx_peek(x);
    if (k == ':') {
      x->pos++;
    } else if ((k == 'P' && x->pos + 1 < x->n && x->s[x->pos + 1] == '<') || k == '<') {
      if (k == 'P') x->pos++;
      if (x->pos + 1 < x->n && (x->s[x->pos + 1] == '=' || x->s[x->pos + 1] == '!'))
        return rx_unsupported(x, "a lookbehind");
      while (rx_peek(x) >= 0 && rx_peek(x) != '>') x->pos++;
      if (rx_peek(x) != '>') return rx_invalid(x, "'>' to end the group name");
      x->pos++;
    } else if (k == '=' || k == '!') {
      return rx_unsupported(x, "a lookahead");
    } else {
      return rx_unsupported(x, "a group extension '(?…' (flags, comments, conditionals)");
    }
  }
  if (++x->nest > RX_MAX_NEST) return rx_unsupported(x, "groups nested deeper than 32");
  size_t branches = 0;
  poot_strbuf_puts(sb, "(");
  POOT_TRY(parse_alt(x, sb, nullable, &branches));
  poot_strbuf_puts(sb, ")");
  x->nest--;
  if (rx_peek(x) != ')') return rx_invalid(x, "')' to close the group");
  x->pos++;
  return POOT_OK_STATUS;
}

static poot_status parse_atom(rx *x, poot_strbuf *sb, bool *nullable) {
  int ch = rx_peek(x);
  rx_set set = {.n = 0};
  *nullable = false;
  if (ch == '(') return parse_group(x, sb, nullable);
  if (ch == '[') {
    POOT_TRY(parse_class(x, &set));
    return emit_set(x, &set, sb);
  }
  if (ch == '.') {
    x->pos++;
    POOT_TRY(set_add(x, &set, 0, '\n' - 1));
    POOT_TRY(set_add(x, &set, '\n' + 1, 0x10FFFF));
    return emit_set(x, &set, sb);
  }
  if (ch == '*' || ch == '+' || ch == '?') return rx_invalid(x, "something to repeat");
  if (ch == '{') {
    uint32_t a = 0, b = 0;
    size_t at = x->pos;
    if (parse_braces(x, &a, &b)) {
      x->pos = at;
      return rx_invalid(x, "something to repeat");
    }
  }
  if (ch == '^' || ch == '$') return rx_unsupported(x, "an anchor that is not at an end");
  uint32_t cp = 0;
  bool is_char = true;
  if (ch == '\\') {
    x->pos++;
    POOT_TRY(escape(x, &set, false, false, &cp, &is_char));
  } else {
    cp = rx_take(x);
  }
  if (is_char) POOT_TRY(set_add(x, &set, cp, cp));
  return emit_set(x, &set, sb);
}

static poot_status parse_seq(rx *x, poot_strbuf *sb, bool *nullable) {
  *nullable = true;
  bool any = false;
  while (rx_peek(x) >= 0 && rx_peek(x) != '|' && rx_peek(x) != ')') {
    if (rx_peek(x) == '$' && x->pos + 1 == x->n && x->nest == 0) break; /* the end anchor */
    bool atom_nullable = false;
    poot_strbuf_puts(sb, any ? " " : "");
    POOT_TRY(parse_atom(x, sb, &atom_nullable));
    bool q_nullable = atom_nullable;
    POOT_TRY(parse_quant(x, sb, atom_nullable, &q_nullable));
    if (!q_nullable) *nullable = false;
    any = true;
  }
  if (!any) poot_strbuf_puts(sb, "\"\"");
  return POOT_OK_STATUS;
}

static poot_status parse_alt(rx *x, poot_strbuf *sb, bool *nullable, size_t *branches) {
  *nullable = false;
  *branches = 0;
  for (;;) {
    bool n = false;
    POOT_TRY(parse_seq(x, sb, &n));
    if (n) *nullable = true;
    (*branches)++;
    if (rx_peek(x) != '|') return POOT_OK_STATUS;
    x->pos++;
    poot_strbuf_puts(sb, " | ");
  }
}

poot_status poot__js_pattern(js_ctx *c, const char *re, size_t n, const char *hint,
                             poot_strbuf *sb) {
  (void)hint;
  rx x = {.c = c, .s = re, .n = n, .pos = 0, .nest = 0};
  if (!poot__js_utf8_valid(re, n)) return rx_invalid(&x, "valid UTF-8");
  const char *ch = NULL;
  POOT_TRY(poot__js_prim(c, "json-char", &ch));
  bool start = n > 0 && re[0] == '^';
  if (start) x.pos++;
  poot_strbuf body;
  poot_strbuf_init(&body);
  bool nullable = false;
  size_t branches = 0;
  poot_status st = parse_alt(&x, &body, &nullable, &branches);
  bool end = false;
  if (!st && rx_peek(&x) == '$' && x.pos + 1 == x.n) {
    end = true;
    x.pos++;
  }
  if (!st && rx_peek(&x) == ')') st = rx_invalid(&x, "a '(' before this ')'");
  if (!st && x.pos != x.n) st = rx_invalid(&x, "the end of the pattern");
  if (!st && (start || end) && branches > 1)
    st = rx_unsupported(&x, "an anchor on one alternative (wrap the alternatives in a group)");
  if (!st && body.failed) st = poot__js_oom();
  /* Python's $ also matches before a newline that ends the string. */
  if (!st)
    poot_strbuf_printf(sb, "%s%s(%s)%s%s", start ? "" : ch, start ? "" : "* ", body.data,
                       end ? " \"\\\\n\"?" : " ", end ? "" : ch);
  if (!st && !end) poot_strbuf_puts(sb, "*");
  poot_strbuf_deinit(&body);
  return st;
}
