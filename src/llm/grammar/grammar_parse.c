/* The GBNF parser: text → rules of byte elements. Character classes and `.` are
 * expanded into UTF-8 byte sequences here, so the matcher only ever sees bytes;
 * repetitions and groups become generated rules (as llama.cpp does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_impl.h"

typedef struct gb_rule {
  const char *name; /* NULL for a generated rule; points into the text */
  size_t name_len;
  gel *el; /* alternatives separated by GEL_ALT */
  uint32_t n, cap;
  bool defined;
  bool no_alts; /* a class that matches nothing */
  uint32_t use_line, use_col, def_line;
} gb_rule;

typedef struct gparser {
  const char *s;
  size_t len, pos;
  uint32_t line;
  size_t line_start;
  gb_rule *rules;
  uint32_t n_rules, cap_rules;
  poot_map names;
  gset *sets;
  uint32_t n_sets, cap_sets;
  uint32_t total_el;
} gparser;

typedef struct cp_range {
  uint32_t lo, hi;
} cp_range;

static uint32_t col_of(const gparser *p) {
  return (uint32_t)(p->pos - p->line_start + 1);
}

static poot_status perr(const gparser *p, const char *expected) {
  char got[32];
  if (p->pos >= p->len) {
    snprintf(got, sizeof got, "end of text");
  } else {
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '\n')
      snprintf(got, sizeof got, "end of line");
    else if (c >= 0x20 && c < 0x7f)
      snprintf(got, sizeof got, "'%c'", c);
    else
      snprintf(got, sizeof got, "byte 0x%02x", c);
  }
  return poot_status_make(POOT_INVALID_ARGUMENT, "grammar:%u:%u: expected %s, got %s", p->line,
                          col_of(p), expected, got);
}

static int peek(const gparser *p) {
  return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static void skip_ws(gparser *p) {
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c == ' ' || c == '\t' || c == '\r') {
      p->pos++;
    } else if (c == '\n') {
      p->pos++;
      p->line++;
      p->line_start = p->pos;
    } else if (c == '#') {
      while (p->pos < p->len && p->s[p->pos] != '\n') p->pos++;
    } else {
      break;
    }
  }
}

static bool is_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

static size_t name_len_at(const gparser *p, size_t at) {
  size_t n = 0;
  while (at + n < p->len && is_name_char((unsigned char)p->s[at + n])) n++;
  return n;
}

/* True when the text at the cursor is `name ::=`: the next rule starts here. */
static bool at_rule_start(const gparser *p) {
  size_t n = name_len_at(p, p->pos);
  if (n == 0) return false;
  size_t q = p->pos + n;
  while (q < p->len && (p->s[q] == ' ' || p->s[q] == '\t' || p->s[q] == '\r')) q++;
  return q + 3 <= p->len && memcmp(p->s + q, "::=", 3) == 0;
}

/* ---------------------------------------------------------------- building */

static poot_status new_rule(gparser *p, const char *name, size_t name_len, uint32_t *out_id) {
  if (p->n_rules >= POOT_GRAMMAR_MAX_RULES)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar:%u:%u: more than %u rules (named and generated); the "
                            "grammar is too large",
                            p->line, col_of(p), POOT_GRAMMAR_MAX_RULES);
  if (p->n_rules == p->cap_rules) {
    uint32_t cap = p->cap_rules ? p->cap_rules * 2 : 64;
    gb_rule *r = poot_realloc_array(p->rules, cap, sizeof *r);
    if (!r) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (rules)");
    p->rules = r;
    p->cap_rules = cap;
  }
  gb_rule *r = &p->rules[p->n_rules];
  memset(r, 0, sizeof *r);
  r->name = name;
  r->name_len = name_len;
  r->use_line = p->line;
  r->use_col = col_of(p);
  *out_id = p->n_rules++;
  return POOT_OK_STATUS;
}

static poot_status rule_by_name(gparser *p, const char *name, size_t n, uint32_t *out_id) {
  uint64_t v = 0;
  if (poot_map_get(&p->names, name, n, &v)) {
    *out_id = (uint32_t)v;
    return POOT_OK_STATUS;
  }
  POOT_TRY(new_rule(p, name, n, out_id));
  return poot_map_put(&p->names, name, n, *out_id);
}

static poot_status push(gparser *p, uint32_t rid, gel e) {
  if (p->total_el >= POOT_GRAMMAR_MAX_ELEMS)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar:%u:%u: more than %u elements after expanding repetitions "
                            "and character classes; the grammar is too large",
                            p->line, col_of(p), POOT_GRAMMAR_MAX_ELEMS);
  gb_rule *r = &p->rules[rid];
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? r->cap * 2 : 8;
    gel *el = poot_realloc_array(r->el, cap, sizeof *el);
    if (!el) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (elements)");
    r->el = el;
    r->cap = cap;
  }
  r->el[r->n++] = e;
  p->total_el++;
  return POOT_OK_STATUS;
}

static gel el_rule(uint32_t id) {
  return (gel){.type = GEL_RULE, .value = id};
}
static gel el_byte(uint8_t b) {
  return (gel){.type = GEL_RANGE, .lo = b, .hi = b};
}
static gel el_alt(void) {
  return (gel){.type = GEL_ALT};
}

static poot_status new_set(gparser *p, const gset *s, uint32_t *out_id) {
  if (p->n_sets == p->cap_sets) {
    uint32_t cap = p->cap_sets ? p->cap_sets * 2 : 16;
    gset *n = poot_realloc_array(p->sets, cap, sizeof *n);
    if (!n) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (classes)");
    p->sets = n;
    p->cap_sets = cap;
  }
  p->sets[p->n_sets] = *s;
  *out_id = p->n_sets++;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------ UTF-8 */

static int utf8_encode(uint32_t cp, uint8_t out[4]) {
  if (cp < 0x80) {
    out[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (uint8_t)(0xC0 | (cp >> 6));
    out[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (cp >> 12));
    out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (cp >> 18));
  out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* Decodes one UTF-8 character of the grammar text at the cursor. */
static poot_status utf8_take(gparser *p, uint32_t *out_cp) {
  const unsigned char *s = (const unsigned char *)p->s + p->pos;
  size_t left = p->len - p->pos;
  uint32_t cp = s[0];
  int n = cp < 0x80 ? 1 : (cp >> 5) == 6 ? 2 : (cp >> 4) == 14 ? 3 : (cp >> 3) == 30 ? 4 : 0;
  if (n == 0 || (size_t)n > left) return perr(p, "a valid UTF-8 character");
  if (n > 1) cp &= 0xFFu >> (n + 1);
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return perr(p, "a valid UTF-8 character");
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return perr(p, "a valid UTF-8 character");
  p->pos += (size_t)n;
  *out_cp = cp;
  return POOT_OK_STATUS;
}

static poot_status hex_digits(gparser *p, int n, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++) {
    int c = peek(p);
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return perr(p, "a hexadecimal digit");
    v = v * 16 + (uint32_t)d;
    p->pos++;
  }
  *out = v;
  return POOT_OK_STATUS;
}

/* One character of a literal or class: an escape or a UTF-8 character. */
static poot_status take_char(gparser *p, uint32_t *out_cp) {
  if (peek(p) == '\n') return perr(p, "a character (literals and classes end on their line)");
  if (peek(p) != '\\') return utf8_take(p, out_cp);
  size_t at = p->pos++;
  int c = peek(p);
  p->pos++;
  switch (c) {
    case 'n':
      *out_cp = '\n';
      return POOT_OK_STATUS;
    case 't':
      *out_cp = '\t';
      return POOT_OK_STATUS;
    case 'r':
      *out_cp = '\r';
      return POOT_OK_STATUS;
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-':
    case '^':
    case '/':
      *out_cp = (uint32_t)c;
      return POOT_OK_STATUS;
    case 'x':
      POOT_TRY(hex_digits(p, 2, out_cp));
      break;
    case 'u':
      POOT_TRY(hex_digits(p, 4, out_cp));
      break;
    case 'U':
      POOT_TRY(hex_digits(p, 8, out_cp));
      break;
    default:
      p->pos = at + 1;
      return perr(p, "an escape (\\n \\t \\r \\\\ \\\" \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH)");
  }
  if (*out_cp > 0x10FFFF || (*out_cp >= 0xD800 && *out_cp <= 0xDFFF)) {
    p->pos = at;
    return perr(p, "a Unicode scalar value (not a surrogate, at most U+10FFFF)");
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------- character classes */

static int cmp_range(const void *a, const void *b) {
  const cp_range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges ranges, removes surrogates, complements when `negate`. */
static size_t normalize_ranges(cp_range *r, size_t n, bool negate, cp_range *out) {
  qsort(r, n, sizeof *r, cmp_range);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && r[i].lo <= r[m - 1].hi + 1) {
      if (r[i].hi > r[m - 1].hi) r[m - 1].hi = r[i].hi;
    } else {
      r[m++] = r[i];
    }
  }
  size_t k = 0;
  if (negate) {
    uint32_t next = 0;
    for (size_t i = 0; i < m; i++) {
      if (r[i].lo > next) out[k++] = (cp_range){next, r[i].lo - 1};
      next = r[i].hi + 1;
    }
    if (next <= 0x10FFFF) out[k++] = (cp_range){next, 0x10FFFF};
  } else {
    memcpy(out, r, m * sizeof *r);
    k = m;
  }
  /* Cut the surrogates out of every range. */
  size_t w = 0;
  cp_range tmp[2];
  for (size_t i = 0; i < k; i++) {
    cp_range x = out[i];
    size_t t = 0;
    if (x.hi < 0xD800 || x.lo > 0xDFFF) {
      tmp[t++] = x;
    } else {
      if (x.lo < 0xD800) tmp[t++] = (cp_range){x.lo, 0xD7FF};
      if (x.hi > 0xDFFF) tmp[t++] = (cp_range){0xE000, x.hi};
    }
    for (size_t j = 0; j < t; j++) out[w++] = tmp[j];
  }
  return w;
}

/* Appends one alternative per UTF-8 byte-range sequence covering [lo, hi] (all
 * characters of one encoded length), as the regex-syntax crate's Utf8Sequences. */
static poot_status utf8_seqs(gparser *p, uint32_t rid, uint32_t lo, uint32_t hi, int depth) {
  static const uint32_t bounds[3] = {0x7F, 0x7FF, 0xFFFF};
  for (int i = 0; i < 3; i++) {
    if (lo <= bounds[i] && hi > bounds[i]) {
      POOT_TRY(utf8_seqs(p, rid, lo, bounds[i], depth + 1));
      return utf8_seqs(p, rid, bounds[i] + 1, hi, depth + 1);
    }
  }
  uint8_t a[4], b[4];
  int n = utf8_encode(lo, a);
  utf8_encode(hi, b);
  for (int i = 1; i < n; i++) {
    uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        POOT_TRY(utf8_seqs(p, rid, lo, lo | m, depth + 1));
        return utf8_seqs(p, rid, (lo | m) + 1, hi, depth + 1);
      }
      if ((hi & m) != m) {
        POOT_TRY(utf8_seqs(p, rid, lo, (hi & ~m) - 1, depth + 1));
        return utf8_seqs(p, rid, hi & ~m, hi, depth + 1);
      }
    }
  }
  if (p->rules[rid].n) POOT_TRY(push(p, rid, el_alt()));
  for (int i = 0; i < n; i++)
    POOT_TRY(push(p, rid, (gel){.type = GEL_RANGE, .lo = a[i], .hi = b[i]}));
  return POOT_OK_STATUS;
}

/* Appends to `rid` the element(s) matching one character of the ranges. */
static poot_status emit_class(gparser *p, uint32_t rid, const cp_range *r, size_t n) {
  gset ascii = {{0}};
  bool has_ascii = false, has_wide = false;
  for (size_t i = 0; i < n; i++) {
    for (uint32_t c = r[i].lo; c <= r[i].hi && c < 0x80; c++) {
      ascii.bits[c >> 5] |= 1u << (c & 31);
      has_ascii = true;
    }
    if (r[i].hi >= 0x80) has_wide = true;
  }
  uint32_t set_id = 0;
  if (has_ascii) POOT_TRY(new_set(p, &ascii, &set_id));
  gel set_el = {.type = GEL_SET, .value = set_id};
  if (!has_wide && has_ascii) return push(p, rid, set_el);
  /* A class that matches nothing (or has wide characters) gets a rule of its own. */
  uint32_t cls = 0;
  POOT_TRY(new_rule(p, NULL, 0, &cls));
  p->rules[cls].no_alts = !has_ascii && !has_wide;
  if (has_ascii) POOT_TRY(push(p, cls, set_el));
  for (size_t i = 0; i < n; i++) {
    if (r[i].hi < 0x80) continue;
    uint32_t lo = r[i].lo < 0x80 ? 0x80 : r[i].lo;
    POOT_TRY(utf8_seqs(p, cls, lo, r[i].hi, 0));
  }
  return push(p, rid, el_rule(cls));
}

static poot_status parse_class(gparser *p, uint32_t rid) {
  p->pos++; /* [ */
  bool negate = peek(p) == '^';
  if (negate) p->pos++;
  size_t n = 0, cap = 8;
  cp_range *r = poot_malloc(cap * sizeof *r);
  cp_range *norm = NULL;
  poot_status st = POOT_OK_STATUS;
  if (!r) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (class)");
  while (peek(p) != ']') {
    if (peek(p) < 0) {
      st = perr(p, "']' to close the character class");
      goto done;
    }
    uint32_t lo = 0, hi = 0;
    if ((st = take_char(p, &lo))) goto done;
    hi = lo;
    if (peek(p) == '-' && p->pos + 1 < p->len && p->s[p->pos + 1] != ']') {
      p->pos++;
      if ((st = take_char(p, &hi))) goto done;
      if (hi < lo) {
        st = perr(p, "a range whose end is not below its start");
        goto done;
      }
    }
    if (n == cap) {
      cp_range *g = poot_realloc_array(r, cap * 2, sizeof *r);
      if (!g) {
        st = poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (class)");
        goto done;
      }
      r = g;
      cap *= 2;
    }
    r[n++] = (cp_range){lo, hi};
  }
  p->pos++; /* ] */
  norm = poot_malloc((n + 1) * 2 * sizeof *norm);
  if (!norm) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (class)");
    goto done;
  }
  size_t m = normalize_ranges(r, n, negate, norm);
  st = emit_class(p, rid, norm, m);
done:
  poot_free(norm);
  poot_free(r);
  return st;
}

static poot_status parse_literal(gparser *p, uint32_t rid) {
  p->pos++; /* " */
  while (peek(p) != '"') {
    if (peek(p) < 0) return perr(p, "'\"' to close the literal");
    if (peek(p) != '\\') { /* raw bytes are copied as they are (validated as UTF-8) */
      size_t at = p->pos;
      uint32_t cp = 0;
      if (peek(p) == '\n') return perr(p, "'\"' to close the literal before the end of line");
      POOT_TRY(utf8_take(p, &cp));
      for (size_t i = at; i < p->pos; i++) POOT_TRY(push(p, rid, el_byte((uint8_t)p->s[i])));
      continue;
    }
    uint32_t cp = 0;
    uint8_t b[4];
    POOT_TRY(take_char(p, &cp));
    int n = utf8_encode(cp, b);
    for (int i = 0; i < n; i++) POOT_TRY(push(p, rid, el_byte(b[i])));
  }
  p->pos++;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- repetition */

static poot_status parse_count(gparser *p, uint32_t *out) {
  if (peek(p) < '0' || peek(p) > '9') return perr(p, "a repetition count");
  uint32_t v = 0;
  while (peek(p) >= '0' && peek(p) <= '9') {
    v = v * 10 + (uint32_t)(peek(p) - '0');
    if (v > POOT_GRAMMAR_MAX_REPEAT) return perr(p, "a repetition count of at most 1000");
    p->pos++;
  }
  *out = v;
  return POOT_OK_STATUS;
}

/* A generated rule `R ::= x R | ε` (star) or `R ::= x inner | ε` (optional chain). */
static poot_status rep_rule(gparser *p, gel x, bool star, uint32_t inner, bool has_inner,
                            uint32_t *out_id) {
  uint32_t r = 0;
  POOT_TRY(new_rule(p, NULL, 0, &r));
  POOT_TRY(push(p, r, x));
  if (star) POOT_TRY(push(p, r, el_rule(r)));
  if (!star && has_inner) POOT_TRY(push(p, r, el_rule(inner)));
  POOT_TRY(push(p, r, el_alt()));
  *out_id = r;
  return POOT_OK_STATUS;
}

/* Applies x{min,max} (max == UINT32_MAX: unbounded) at the end of rule `rid`. */
static poot_status apply_repeat(gparser *p, uint32_t rid, gel x, uint32_t min, uint32_t max) {
  for (uint32_t i = 0; i < min; i++) POOT_TRY(push(p, rid, x));
  uint32_t id = 0;
  if (max == UINT32_MAX) {
    POOT_TRY(rep_rule(p, x, true, 0, false, &id));
    return push(p, rid, el_rule(id));
  }
  bool have = false;
  for (uint32_t i = min; i < max; i++) {
    POOT_TRY(rep_rule(p, x, false, id, have, &id));
    have = true;
  }
  return have ? push(p, rid, el_rule(id)) : POOT_OK_STATUS;
}

static poot_status parse_repeat(gparser *p, uint32_t rid, uint32_t item_start) {
  int c = peek(p);
  uint32_t min = 0, max = 0;
  if (c == '*' || c == '+' || c == '?') {
    p->pos++;
    min = c == '+' ? 1 : 0;
    max = c == '?' ? 1 : UINT32_MAX;
  } else {
    p->pos++; /* { */
    skip_ws(p);
    POOT_TRY(parse_count(p, &min));
    skip_ws(p);
    max = min;
    if (peek(p) == ',') {
      p->pos++;
      skip_ws(p);
      max = UINT32_MAX;
      if (peek(p) != '}') POOT_TRY(parse_count(p, &max));
      skip_ws(p);
    }
    if (peek(p) != '}') return perr(p, "'}' to close the repetition");
    if (max < min) return perr(p, "a repetition {m,n} with n >= m");
    p->pos++;
  }
  gb_rule *r = &p->rules[rid];
  uint32_t n = r->n - item_start;
  if (n == 0) return POOT_OK_STATUS; /* a repeated empty literal matches empty */
  gel x = r->el[item_start];
  if (n > 1) { /* several elements: move them into a rule of their own */
    uint32_t w = 0;
    POOT_TRY(new_rule(p, NULL, 0, &w));
    r = &p->rules[rid];
    for (uint32_t i = item_start; i < r->n; i++) POOT_TRY(push(p, w, p->rules[rid].el[i]));
    x = el_rule(w);
  }
  p->total_el -= n;
  p->rules[rid].n = item_start;
  return apply_repeat(p, rid, x, min, max);
}

/* --------------------------------------------------------------- sequences */

static poot_status parse_alternatives(gparser *p, uint32_t rid, int depth);

static poot_status parse_primary(gparser *p, uint32_t rid, int depth) {
  int c = peek(p);
  if (c == '"') return parse_literal(p, rid);
  if (c == '[') return parse_class(p, rid);
  if (c == '.') {
    p->pos++;
    cp_range any[2] = {{0, 0xD7FF}, {0xE000, 0x10FFFF}};
    return emit_class(p, rid, any, 2);
  }
  if (c == '(') {
    if (depth >= POOT_GRAMMAR_MAX_NESTING)
      return perr(p, "at most 64 nested groups (the parser's nesting bound)");
    p->pos++;
    uint32_t g = 0;
    POOT_TRY(new_rule(p, NULL, 0, &g));
    POOT_TRY(parse_alternatives(p, g, depth + 1));
    if (peek(p) != ')') return perr(p, "')' to close the group");
    p->pos++;
    return push(p, rid, el_rule(g));
  }
  size_t n = name_len_at(p, p->pos);
  if (n == 0) return perr(p, "a literal, a character class, '.', '(' or a rule name");
  uint32_t ref = 0;
  POOT_TRY(rule_by_name(p, p->s + p->pos, n, &ref));
  p->pos += n;
  return push(p, rid, el_rule(ref));
}

static poot_status parse_sequence(gparser *p, uint32_t rid, int depth) {
  for (;;) {
    skip_ws(p);
    int c = peek(p);
    if (c < 0 || c == '|' || c == ')') return POOT_OK_STATUS;
    if (depth == 0 && at_rule_start(p)) return POOT_OK_STATUS;
    uint32_t start = p->rules[rid].n;
    POOT_TRY(parse_primary(p, rid, depth));
    c = peek(p);
    if (c == '*' || c == '+' || c == '?' || c == '{') POOT_TRY(parse_repeat(p, rid, start));
  }
}

static poot_status parse_alternatives(gparser *p, uint32_t rid, int depth) {
  POOT_TRY(parse_sequence(p, rid, depth));
  while (peek(p) == '|') {
    p->pos++;
    POOT_TRY(push(p, rid, el_alt()));
    POOT_TRY(parse_sequence(p, rid, depth));
  }
  return POOT_OK_STATUS;
}

static poot_status parse_rule(gparser *p) {
  size_t n = name_len_at(p, p->pos);
  if (n == 0) return perr(p, "a rule name");
  uint32_t line = p->line, col = col_of(p);
  uint32_t rid = 0;
  POOT_TRY(rule_by_name(p, p->s + p->pos, n, &rid));
  if (p->rules[rid].defined)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar:%u:%u: rule '%.*s' is defined twice (first on line %u)", line,
                            col, (int)n, p->s + p->pos, p->rules[rid].def_line);
  p->rules[rid].defined = true;
  p->rules[rid].def_line = line;
  p->pos += n;
  skip_ws(p);
  if (p->pos + 3 > p->len || memcmp(p->s + p->pos, "::=", 3) != 0) return perr(p, "'::='");
  p->pos += 3;
  POOT_TRY(parse_alternatives(p, rid, 0));
  if (peek(p) == ')') return perr(p, "a rule name or the end of the text (unbalanced ')')");
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------------- finishing */

static poot_status layout(gparser *p, poot_grammar *g) {
  uint32_t n_alt = 0, n_el = 0;
  for (uint32_t r = 0; r < p->n_rules; r++) {
    gb_rule *b = &p->rules[r];
    uint32_t alts = 1;
    for (uint32_t i = 0; i < b->n; i++) alts += b->el[i].type == GEL_ALT;
    if (b->no_alts) alts = 0;
    n_alt += alts;
    n_el += b->n + 2;
  }
  g->el = poot_calloc(n_el, sizeof *g->el);
  g->alt_start = poot_calloc(n_alt + 1, sizeof *g->alt_start);
  g->rule_alt = poot_calloc(p->n_rules + 1, sizeof *g->rule_alt);
  if (!g->el || !g->alt_start || !g->rule_alt)
    return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (compiled rules)");
  uint32_t e = 0, a = 0;
  for (uint32_t r = 0; r < p->n_rules; r++) {
    gb_rule *b = &p->rules[r];
    g->rule_alt[r] = a;
    if (b->no_alts) continue;
    g->alt_start[a++] = e;
    for (uint32_t i = 0; i < b->n; i++) {
      if (b->el[i].type == GEL_ALT) {
        g->el[e++] = (gel){.type = GEL_END};
        g->alt_start[a++] = e;
      } else {
        g->el[e++] = b->el[i];
      }
    }
    g->el[e++] = (gel){.type = GEL_END};
  }
  g->rule_alt[p->n_rules] = a;
  g->n_rules = p->n_rules;
  g->n_el = e;
  g->sets = p->sets;
  g->n_sets = p->n_sets;
  p->sets = NULL;
  return POOT_OK_STATUS;
}

static poot_status finish(gparser *p, const char *start, poot_grammar *g) {
  for (uint32_t r = 0; r < p->n_rules; r++) {
    gb_rule *b = &p->rules[r];
    if (b->name && !b->defined)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "grammar:%u:%u: rule '%.*s' is used but never defined", b->use_line,
                              b->use_col, (int)b->name_len, b->name);
  }
  uint64_t root = 0;
  if (!poot_map_get(&p->names, start, strlen(start), &root))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar: no rule named '%s' (the start rule) is defined", start);
  g->root = (uint32_t)root;
  POOT_TRY(layout(p, g));
  const char **names = poot_calloc(p->n_rules, sizeof *names);
  if (!names) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory");
  char *buf = NULL;
  size_t total = 0;
  for (uint32_t r = 0; r < p->n_rules; r++) total += p->rules[r].name_len + 1;
  buf = poot_malloc(total + 1);
  poot_status st = POOT_OK_STATUS;
  if (!buf) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory");
  } else {
    char *w = buf;
    for (uint32_t r = 0; r < p->n_rules; r++) {
      if (!p->rules[r].name) continue;
      memcpy(w, p->rules[r].name, p->rules[r].name_len);
      w[p->rules[r].name_len] = 0;
      names[r] = w;
      w += p->rules[r].name_len + 1;
    }
    st = poot__grammar_check_left_recursion(g, names);
  }
  poot_free(buf);
  poot_free(names);
  return st;
}

static void parser_deinit(gparser *p) {
  for (uint32_t r = 0; r < p->n_rules; r++) poot_free(p->rules[r].el);
  poot_free(p->rules);
  poot_free(p->sets);
  poot_map_deinit(&p->names);
}

void poot_grammar_destroy(poot_grammar *g) {
  if (!g) return;
  poot_free(g->el);
  poot_free(g->alt_start);
  poot_free(g->rule_alt);
  poot_free(g->sets);
  poot_free(g);
}

uint32_t poot_grammar_rule_count(const poot_grammar *g) {
  return g ? g->n_rules : 0;
}

static poot_status check_options(const poot_grammar_options *o, poot_grammar *g) {
  g->max_stacks = o->max_stacks ? o->max_stacks : 256;
  g->max_depth = o->max_depth ? o->max_depth : 1024;
  if (g->max_stacks > 65536)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar: max_stacks %u is above the limit 65536", g->max_stacks);
  if (g->max_depth > 65536)
    return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: max_depth %u is above the limit 65536",
                            g->max_depth);
  return POOT_OK_STATUS;
}

poot_status poot_grammar_compile(const char *text, size_t len, const poot_grammar_options *options,
                                 poot_grammar **out_grammar) {
  if (!out_grammar) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: out_grammar is NULL");
  *out_grammar = NULL;
  if (!text && len) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: text is NULL");
  if (len > POOT_GRAMMAR_MAX_TEXT)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar: the text is %zu bytes; the limit is %zu", len,
                            POOT_GRAMMAR_MAX_TEXT);
  poot_grammar_options o = options ? *options : poot_grammar_options_default();
  poot_grammar *g = poot_calloc(1, sizeof *g);
  if (!g) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory");
  gparser p = {.s = text ? text : "", .len = len, .line = 1};
  poot_map_init(&p.names);
  poot_status st = check_options(&o, g);
  if (!st) {
    skip_ws(&p);
    while (!st && p.pos < p.len) {
      st = parse_rule(&p);
      if (!st) skip_ws(&p);
    }
  }
  if (!st) st = finish(&p, o.start_rule ? o.start_rule : "root", g);
  parser_deinit(&p);
  if (st) {
    poot_grammar_destroy(g);
    return st;
  }
  *out_grammar = g;
  return POOT_OK_STATUS;
}
