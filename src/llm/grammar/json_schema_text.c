/* JSON Schema → GBNF: strings (lengths, formats, patterns), numbers and integers with exact
 * decimal ranges, and object keys that avoid the declared names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_schema_impl.h"

/* ----------------------------------------------------------------- formats */

/* Each format is a list of fixed rules (the last is the format's content between the
 * quotes). They follow the checkers of Python's jsonschema: date is Python's
 * date.fromisoformat on YYYY-MM-DD (year 0001-9999, the month's days, 29 February in leap
 * years); time and date-time are RFC 3339 as rfc3339-validator reads them (no leap second,
 * 't'/'z' in either case); uuid is the 8-4-4-4-12 hex form; ipv4 is four octets without
 * leading zeros; email is a practical subset of RFC 5322 (dot-atoms @ a host name). */
static const char *const FMT_DATE[][2] = {
    {"fmt-year", "[0-9]{3} [1-9] | [0-9]{2} [1-9] \"0\" | [0-9] [1-9] \"00\" | [1-9] \"000\""},
    {"fmt-y4", "\"0\" [48] | [2468] [048] | [13579] [26]"},
    {"fmt-leap", "[0-9]{2} fmt-y4 | fmt-y4 \"00\""},
    {"fmt-d28", "\"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8]"},
    {"fmt-date",
     "fmt-year \"-\" ( (\"0\" [13578] | \"1\" [02]) \"-\" (fmt-d28 | \"29\" | \"3\" [01]) | "
     "(\"0\" [469] | \"11\") \"-\" (fmt-d28 | \"29\" | \"30\") | \"02-\" fmt-d28 ) | fmt-leap "
     "\"-02-29\""},
    {NULL, NULL}};
static const char *const FMT_TIME[][2] = {
    {"fmt-hh", "[01] [0-9] | \"2\" [0-3]"},
    {"fmt-mm", "[0-5] [0-9]"},
    {"fmt-time",
     "fmt-hh \":\" fmt-mm \":\" fmt-mm (\".\" [0-9]+)? ([Zz] | [-+] fmt-hh \":\" fmt-mm)"},
    {NULL, NULL}};
static const char *const FMT_DATE_TIME[][2] = {{"fmt-date-time", "fmt-date [Tt] fmt-time"},
                                               {NULL, NULL}};
static const char *const FMT_UUID[][2] = {
    {"fmt-uuid",
     "json-hex{8} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{12}"},
    {NULL, NULL}};
static const char *const FMT_EMAIL[][2] = {
    {"fmt-atom", "[A-Za-z0-9!#$%&'*+/=?\\^_`{|}~\\-]+"},
    {"fmt-label", "[A-Za-z0-9] ([A-Za-z0-9\\-]* [A-Za-z0-9])?"},
    {"fmt-email", "fmt-atom (\".\" fmt-atom)* \"@\" fmt-label (\".\" fmt-label)+"},
    {NULL, NULL}};
static const char *const FMT_IPV4[][2] = {
    {"fmt-octet", "\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9] [0-9] | [0-9]"},
    {"fmt-ipv4", "fmt-octet \".\" fmt-octet \".\" fmt-octet \".\" fmt-octet"},
    {NULL, NULL}};

static poot_status add_fixed_list(js_ctx *c, const char *const (*list)[2], const char **last) {
  for (size_t i = 0; list[i][0]; i++) {
    POOT_TRY(poot__js_fixed(c, list[i][0], list[i][1]));
    *last = list[i][0];
  }
  return POOT_OK_STATUS;
}

/* The content rule of a format, or *out NULL when the format is not known. */
static poot_status format_rule(js_ctx *c, const char *fmt, const char **out) {
  const char *dep = NULL;
  *out = NULL;
  if (strcmp(fmt, "date") == 0) return add_fixed_list(c, FMT_DATE, out);
  if (strcmp(fmt, "time") == 0) return add_fixed_list(c, FMT_TIME, out);
  if (strcmp(fmt, "date-time") == 0) {
    POOT_TRY(add_fixed_list(c, FMT_DATE, &dep));
    POOT_TRY(add_fixed_list(c, FMT_TIME, &dep));
    return add_fixed_list(c, FMT_DATE_TIME, out);
  }
  if (strcmp(fmt, "uuid") == 0) {
    POOT_TRY(poot__js_prim(c, "json-hex", &dep));
    return add_fixed_list(c, FMT_UUID, out);
  }
  if (strcmp(fmt, "email") == 0) return add_fixed_list(c, FMT_EMAIL, out);
  if (strcmp(fmt, "ipv4") == 0) return add_fixed_list(c, FMT_IPV4, out);
  return POOT_OK_STATUS;
}

/* ----------------------------------------------------------------- strings */

static poot_status string_kw(js_ctx *c, const poot_json *s, const char *key,
                             const poot_json **out) {
  *out = poot_json_get(s, key);
  if (*out && (*out)->type != POOT_JSON_STRING) {
    size_t old = poot__js_path_push(c, key);
    poot_status st = poot__js_err(c, POOT_INVALID_ARGUMENT, "'%s' must be a string", key);
    poot__js_path_pop(c, old);
    return st;
  }
  return POOT_OK_STATUS;
}

static poot_status together(js_ctx *c, const char *a, const char *b) {
  char what[96];
  snprintf(what, sizeof what, "'%s' together with '%s'", a, b);
  return poot__js_unsupported(c, what);
}

poot_status poot__js_string(js_ctx *c, const poot_json *s, const char *hint,
                            const char **out_name) {
  uint64_t min = 0, max = JS_INF;
  const poot_json *pattern = NULL, *format = NULL;
  *out_name = NULL;
  POOT_TRY(poot__js_count(c, s, "minLength", 0, &min));
  POOT_TRY(poot__js_count(c, s, "maxLength", JS_INF, &max));
  POOT_TRY(string_kw(c, s, "pattern", &pattern));
  POOT_TRY(string_kw(c, s, "format", &format));
  bool lengths = min > 0 || max != JS_INF;
  const char *content = NULL;
  if (format) {
    POOT_TRY(format_rule(c, format->str, &content));
    if (!content && !c->ignore_formats) {
      char what[96];
      snprintf(what, sizeof what, "format '%.48s'", format->str);
      size_t old = poot__js_path_push(c, "format");
      poot_status st = poot__js_unsupported(c, what);
      poot__js_path_pop(c, old);
      return st;
    }
  }
  if (content && pattern) return together(c, "format", "pattern");
  if (content && lengths) return together(c, "format", lengths && min ? "minLength" : "maxLength");
  if (pattern && lengths) return together(c, "pattern", min ? "minLength" : "maxLength");
  if (min > max) return POOT_OK_STATUS;
  if (!content && !pattern && !lengths) return poot__js_prim(c, "json-string", out_name);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "\"\\\"\" ");
  poot_status st = POOT_OK_STATUS;
  if (content) {
    poot_strbuf_puts(&sb, content);
  } else if (pattern) {
    size_t old = poot__js_path_push(c, "pattern");
    st = poot__js_pattern(c, pattern->str, pattern->len, hint, &sb);
    poot__js_path_pop(c, old);
  } else {
    const char *ch = NULL;
    st = poot__js_prim(c, "json-char", &ch);
    if (!st) st = poot__js_repeat(c, ch, min, max, hint, &sb);
  }
  poot_strbuf_puts(&sb, " \"\\\"\"");
  if (!st) st = poot__js_rule_sb(c, hint, &sb, out_name);
  poot_strbuf_deinit(&sb);
  return st;
}

/* -------------------------------------------------------------- decimals */

/* A decimal: sign, integer digits without leading zeros ("0" for zero), fraction digits
 * without trailing zeros. Arena strings. */
typedef struct js_dec {
  bool neg;
  const char *ip, *fp;
} js_dec;

typedef struct js_bound {
  bool set, incl;
  js_dec v;
} js_bound;

static poot_status dec_make(js_ctx *c, bool neg, const char *digits, size_t n, long point,
                            js_dec *out) {
  /* value = 0.digits × 10^point */
  if (n + (size_t)labs(point) > JS_MAX_DIGITS)
    return poot__js_err(c, POOT_UNSUPPORTED, "a numeric bound with more than %d digits",
                        JS_MAX_DIGITS);
  char *ip = poot_arena_alloc(&c->arena, JS_MAX_DIGITS * 2 + 4, 1);
  char *fp = poot_arena_alloc(&c->arena, JS_MAX_DIGITS * 2 + 4, 1);
  if (!ip || !fp) return poot__js_oom();
  size_t ni = 0, nf = 0;
  for (long i = 0; i < point; i++) ip[ni++] = (size_t)i < n ? digits[i] : '0';
  for (long i = point < 0 ? point : 0; i < 0; i++) fp[nf++] = '0';
  for (size_t i = point > 0 ? (size_t)point : 0; i < n; i++) fp[nf++] = digits[i];
  size_t lead = 0;
  while (lead < ni && ip[lead] == '0') lead++;
  memmove(ip, ip + lead, ni - lead);
  ni -= lead;
  if (ni == 0) ip[ni++] = '0';
  ip[ni] = '\0';
  while (nf > 0 && fp[nf - 1] == '0') nf--;
  fp[nf] = '\0';
  out->neg = neg && !(ni == 1 && ip[0] == '0' && nf == 0);
  out->ip = ip;
  out->fp = fp;
  return POOT_OK_STATUS;
}

/* A bound as Python reads it: an integer literal exactly, anything else as the nearest
 * double (its shortest decimal form). */
static poot_status dec_from_json(js_ctx *c, const poot_json *v, js_dec *out) {
  const char *t = v->str ? v->str : "";
  bool neg = t[0] == '-';
  if (!strpbrk(t, ".eE")) {
    const char *d = t + (neg ? 1 : 0);
    return dec_make(c, neg, d, strlen(d), (long)strlen(d), out);
  }
  double x = v->number;
  if (!isfinite(x)) return poot__js_err(c, POOT_INVALID_ARGUMENT, "a numeric bound is not finite");
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
    if (strtod(buf, NULL) == x) break;
  }
  /* buf: [-]d[.ddd]e±XX */
  char digits[32];
  size_t n = 0;
  const char *p = buf + (buf[0] == '-' ? 1 : 0);
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9') digits[n++] = *p;
  long exp10 = strtol(p + 1, NULL, 10);
  return dec_make(c, x < 0, digits, n, exp10 + 1, out);
}

/* Compares magnitudes. */
static int int_cmp(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  if (na != nb) return na < nb ? -1 : 1;
  int r = strcmp(a, b);
  return r < 0 ? -1 : r > 0;
}

/* Compares fraction digit strings as 0.a and 0.b (the shorter is padded with zeros). */
static int frac_cmp(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b), n = na > nb ? na : nb;
  for (size_t i = 0; i < n; i++) {
    char x = i < na ? a[i] : '0', y = i < nb ? b[i] : '0';
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

static int mag_cmp(const js_dec *a, const js_dec *b) {
  int r = int_cmp(a->ip, b->ip);
  return r ? r : frac_cmp(a->fp, b->fp);
}

static int dec_cmp(const js_dec *a, const js_dec *b) {
  if (a->neg != b->neg) return a->neg ? -1 : 1;
  int r = mag_cmp(a, b);
  return a->neg ? -r : r;
}

/* Magnitude ± 1 (integers). */
static poot_status int_add1(js_ctx *c, const char *a, int delta, const char **out) {
  size_t n = strlen(a);
  char *r = poot_arena_alloc(&c->arena, n + 2, 1);
  if (!r) return poot__js_oom();
  memcpy(r + 1, a, n + 1);
  r[0] = '0';
  for (size_t i = n; i > 0; i--) {
    int d = r[i] - '0' + delta;
    if (d >= 0 && d <= 9) {
      r[i] = (char)('0' + d);
      break;
    }
    r[i] = delta > 0 ? '0' : '9';
  }
  if (delta > 0 && r[1] == '0' && n > 0 && a[0] == '9') r[0] = '1';
  const char *s = r;
  while (s[0] == '0' && s[1]) s++;
  *out = s;
  return POOT_OK_STATUS;
}

/* Signed integer successor (+1) or predecessor (-1). */
static poot_status int_step(js_ctx *c, js_dec *x, int delta) {
  bool zero = strcmp(x->ip, "0") == 0;
  if (zero) {
    x->neg = delta < 0;
    x->ip = "1";
    return POOT_OK_STATUS;
  }
  int mag_delta = x->neg ? -delta : delta;
  POOT_TRY(int_add1(c, x->ip, mag_delta, &x->ip));
  if (strcmp(x->ip, "0") == 0) x->neg = false;
  return POOT_OK_STATUS;
}

/* ----------------------------------------------------------------- bounds */

static poot_status read_bound(js_ctx *c, const poot_json *s, const char *key, const char *ex_key,
                              bool lower, js_bound *b) {
  const poot_json *v = poot_json_get(s, key), *ex = poot_json_get(s, ex_key);
  b->set = false;
  if (v && v->type != POOT_JSON_NUMBER) {
    size_t old = poot__js_path_push(c, key);
    poot_status st = poot__js_err(c, POOT_INVALID_ARGUMENT, "'%s' must be a number", key);
    poot__js_path_pop(c, old);
    return st;
  }
  if (ex && ex->type != POOT_JSON_NUMBER && ex->type != POOT_JSON_BOOL) {
    size_t old = poot__js_path_push(c, ex_key);
    poot_status st = poot__js_err(c, POOT_INVALID_ARGUMENT, "'%s' must be a number", ex_key);
    poot__js_path_pop(c, old);
    return st;
  }
  if (v) {
    POOT_TRY(dec_from_json(c, v, &b->v));
    b->set = true;
    b->incl = !(ex && ex->type == POOT_JSON_BOOL && ex->boolean); /* draft 4 */
  }
  if (ex && ex->type == POOT_JSON_NUMBER) {
    js_dec e;
    POOT_TRY(dec_from_json(c, ex, &e));
    int r = b->set ? dec_cmp(&e, &b->v) : 0;
    if (!b->set || (lower ? r >= 0 : r <= 0)) { /* the exclusive bound is as tight or tighter */
      b->v = e;
      b->incl = false;
      b->set = true;
    }
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------- integer ranges */

/* A digit-range body as an expression: inline when it has no alternatives, else a rule. The
 * returned text is arena memory. */
static poot_status range_expr(js_ctx *c, const char *hint, poot_strbuf *body, const char **out) {
  if (body->failed) return poot__js_oom();
  if (!strstr(body->data, " | ")) {
    char *t = poot_arena_strndup(&c->arena, body->data, body->len);
    if (!t) return poot__js_oom();
    *out = t;
    return POOT_OK_STATUS;
  }
  return poot__js_rule_sb(c, hint, body, out);
}

static char digit_at(const char *s, size_t i, char dflt) {
  return s ? s[i] : dflt;
}

/* The digit strings a..b of length n (a ≤ b; a NULL is 00…0, b NULL is 99…9), as an
 * expression; each level past the common prefix is a rule, so groups never nest. */
static poot_status same_len(js_ctx *c, const char *a, const char *b, size_t n, const char *hint,
                            poot_strbuf *sb) {
  size_t p = 0;
  while (p < n && digit_at(a, p, '0') == digit_at(b, p, '9')) p++;
  if (p) {
    poot_strbuf_putc(sb, '"');
    for (size_t i = 0; i < p; i++) poot_strbuf_putc(sb, digit_at(a, i, '0'));
    poot_strbuf_puts(sb, "\" ");
  }
  if (p == n) return POOT_OK_STATUS;
  if (a) a += p;
  if (b) b += p;
  n -= p;
  size_t rest = n - 1;
  char a0 = digit_at(a, 0, '0'), b0 = digit_at(b, 0, '9');
  bool lo_zeros = !a || strspn(a + 1, "0") >= rest, hi_nines = !b || strspn(b + 1, "9") >= rest;
  char d_lo = lo_zeros ? a0 : (char)(a0 + 1), d_hi = hi_nines ? b0 : (char)(b0 - 1);
  poot_strbuf body;
  poot_strbuf_init(&body);
  poot_status st = POOT_OK_STATUS;
  bool any = false;
  if (!lo_zeros) {
    poot_strbuf_printf(&body, "\"%c\" ", a0);
    st = same_len(c, a + 1, NULL, rest, hint, &body);
    any = true;
  }
  if (!st && d_lo <= d_hi) {
    if (any) poot_strbuf_puts(&body, " | ");
    poot_strbuf_printf(&body, "[%c-%c]", d_lo, d_hi);
    if (rest) poot_strbuf_printf(&body, " [0-9]{%zu}", rest);
    any = true;
  }
  if (!st && !hi_nines) {
    if (any) poot_strbuf_puts(&body, " | ");
    poot_strbuf_printf(&body, "\"%c\" ", b0);
    st = same_len(c, NULL, b + 1, rest, hint, &body);
  }
  const char *name = NULL;
  if (!st) st = range_expr(c, hint, &body, &name);
  if (!st) poot_strbuf_puts(sb, name);
  poot_strbuf_deinit(&body);
  return st;
}

/* Canonical decimal integers in [a, b] (b NULL: unbounded), as alternatives. */
static poot_status int_range(js_ctx *c, const char *a, const char *b, const char *hint,
                             poot_strbuf *sb, bool *any) {
  size_t la = strlen(a), lb = b ? strlen(b) : 0;
  if (b && int_cmp(a, b) > 0) return POOT_OK_STATUS;
  char buf[JS_MAX_DIGITS + 2];
  size_t top = b ? lb : la;
  for (size_t len = la; len <= top; len++) {
    if (len > la && len < top) { /* every number of the middle lengths */
      poot_strbuf_printf(sb, "%s[1-9] [0-9]{%zu,%zu}", *any ? " | " : "", la, top - 2);
      *any = true;
      len = top - 1;
      continue;
    }
    const char *lo = a;
    if (len > la) {
      memset(buf, '0', len);
      buf[0] = '1';
      buf[len] = '\0';
      lo = poot_arena_strdup(&c->arena, buf);
      if (!lo) return poot__js_oom();
    }
    const char *hi = b && len == lb ? b : NULL;
    if (*any) poot_strbuf_puts(sb, " | ");
    POOT_TRY(same_len(c, lo, hi, len, hint, sb));
    *any = true;
  }
  if (!b) {
    poot_strbuf_printf(sb, "%s[1-9] [0-9]{%zu,}", *any ? " | " : "", la);
    *any = true;
  }
  return POOT_OK_STATUS;
}

static poot_status integer_rule(js_ctx *c, js_bound lo, js_bound hi, const char *hint,
                                poot_strbuf *sb, bool *any) {
  /* integer bounds: ceil(lo) (+1 when exclusive and integral), floor(hi) (−1 likewise) */
  if (lo.set) {
    bool frac = lo.v.fp[0] != '\0';
    lo.v.fp = "";
    if (frac && !lo.v.neg) POOT_TRY(int_step(c, &lo.v, 1));
    if (frac && lo.v.neg && strcmp(lo.v.ip, "0") == 0) lo.v.neg = false;
    if (!frac && !lo.incl) POOT_TRY(int_step(c, &lo.v, 1));
  }
  if (hi.set) {
    bool frac = hi.v.fp[0] != '\0';
    hi.v.fp = "";
    if (frac && hi.v.neg) POOT_TRY(int_step(c, &hi.v, -1));
    if (frac && !hi.v.neg) { /* floor of a positive number is its integer part */
    }
    if (!frac && !hi.incl) POOT_TRY(int_step(c, &hi.v, -1));
  }
  if (lo.set && hi.set && dec_cmp(&lo.v, &hi.v) > 0) return POOT_OK_STATUS;
  if (!lo.set || lo.v.neg) { /* negatives: magnitudes max(1, -hi) .. -lo */
    const char *a = hi.set && hi.v.neg ? hi.v.ip : "1";
    const char *b = lo.set ? lo.v.ip : NULL;
    if (!b || int_cmp(a, b) <= 0) {
      poot_strbuf body;
      poot_strbuf_init(&body);
      bool inner = false;
      poot_status st = int_range(c, a, b, hint, &body, &inner);
      const char *name = NULL;
      if (!st && inner) st = range_expr(c, hint, &body, &name);
      poot_strbuf_deinit(&body);
      POOT_TRY(st);
      if (name) {
        poot_strbuf_printf(sb, "%s\"-\" %s", *any ? " | " : "", name);
        *any = true;
      }
    }
  }
  if (!hi.set || !hi.v.neg) {
    const char *a = lo.set && !lo.v.neg ? lo.v.ip : "0";
    POOT_TRY(int_range(c, a, hi.set ? hi.v.ip : NULL, hint, sb, any));
  }
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------- fraction ranges */

/* The fraction digits f (after the '.') with 0.f within the remaining bounds. A side is free
 * (already decided by an earlier digit) or tight: the bound's digits from `pos` on, with its
 * inclusiveness. */
typedef struct js_fside {
  bool free;
  size_t pos;
  bool incl;
} js_fside;

typedef struct js_frac {
  js_ctx *c;
  const char *lo, *hi; /* fraction digits of the bounds */
  size_t nlo, nhi;
  poot_map memo; /* state → rule index */
  const char *hint;
} js_frac;

static const char *rest_of(const char *s, size_t n, size_t pos) {
  return pos < n ? s + pos : "";
}

/* Whether a digit string (maybe empty) fits: lo ≤ 0.f ≤ hi with the sides' flags. */
static bool frac_nonempty(const js_frac *f, js_fside lo, js_fside hi) {
  if (hi.free) return true; /* f may be anything from lo up (lo < 1) */
  const char *l = lo.free ? "" : rest_of(f->lo, f->nlo, lo.pos);
  const char *h = rest_of(f->hi, f->nhi, hi.pos);
  int r = frac_cmp(l, h);
  return r < 0 || (r == 0 && (lo.free || lo.incl) && hi.incl);
}

static bool frac_eps(const js_frac *f, js_fside lo, js_fside hi) {
  bool lo_ok = lo.free || (!rest_of(f->lo, f->nlo, lo.pos)[0] && lo.incl);
  bool hi_ok = hi.free || rest_of(f->hi, f->nhi, hi.pos)[0] || hi.incl;
  return lo_ok && hi_ok;
}

/* The side after digit d: free, tight one position on, or NULL-like (ok false). */
static js_fside frac_step(const char *s, size_t n, js_fside side, char d, bool lower, bool *ok) {
  *ok = true;
  if (side.free) return (js_fside){.free = true};
  char b = side.pos < n ? s[side.pos] : '0';
  js_fside next = side;
  if (d == b) {
    next.pos = side.pos < n ? side.pos + 1 : side.pos;
  } else if (lower ? d > b : d < b) {
    next = (js_fside){.free = true};
  } else {
    *ok = false;
  }
  return next;
}

static poot_status frac_expr(js_frac *f, js_fside lo, js_fside hi, bool eps, poot_strbuf *out);

static bool side_eq(js_fside a, js_fside b) {
  return a.free == b.free && (a.free || (a.pos == b.pos && a.incl == b.incl));
}

/* A digit-class alternative "[a-b] child" for the digits a..b that lead to one state. */
static poot_status frac_alt(js_frac *f, char a, char b, js_fside lo, js_fside hi, poot_strbuf *body,
                            bool *any) {
  poot_strbuf child;
  poot_strbuf_init(&child);
  poot_status st = POOT_OK_STATUS;
  st = frac_expr(f, lo, hi, true, &child);
  if (!st && !child.failed) {
    poot_strbuf_printf(body, "%s[%c-%c]%s%s", *any ? " | " : "", a, b, child.len ? " " : "",
                       child.data);
    *any = true;
  }
  if (!st && child.failed) st = poot__js_oom();
  poot_strbuf_deinit(&child);
  return st;
}

/* Appends to `out` an expression for the state's language ("" for ε alone); eps false drops
 * the empty string. The state must be non-empty. */
static poot_status frac_expr(js_frac *f, js_fside lo, js_fside hi, bool eps, poot_strbuf *out) {
  if (!lo.free && lo.incl && lo.pos >= f->nlo) lo.free = true; /* ≥ 0: no constraint left */
  if (lo.free) lo = (js_fside){.free = true};
  if (hi.free) hi = (js_fside){.free = true};
  if (lo.free && hi.free) {
    poot_strbuf_puts(out, eps ? "[0-9]*" : "[0-9]+");
    return POOT_OK_STATUS;
  }
  bool has_eps = eps && frac_eps(f, lo, hi);
  char key[96];
  snprintf(key, sizeof key, "%d,%zu,%d|%d,%zu,%d|%d", lo.free, lo.pos, lo.incl, hi.free, hi.pos,
           hi.incl, has_eps);
  uint64_t idx = 0;
  if (poot_map_get_str(&f->memo, key, &idx)) {
    poot_strbuf_puts(out, poot__js_rule_name(f->c, idx));
    return POOT_OK_STATUS;
  }
  size_t index = 0;
  POOT_TRY(poot__js_rule_reserve(f->c, f->hint, &index));
  POOT_TRY(poot_map_put_str(&f->memo, key, index));
  poot_strbuf body;
  poot_strbuf_init(&body);
  poot_status st = POOT_OK_STATUS;
  bool any = false;
  int start = -1;
  js_fside slo = lo, shi = hi;
  for (int d = 0; d <= 10 && !st; d++) {
    bool ok_lo = false, ok_hi = false;
    js_fside nlo = lo, nhi = hi;
    if (d < 10) {
      nlo = frac_step(f->lo, f->nlo, lo, (char)('0' + d), true, &ok_lo);
      nhi = frac_step(f->hi, f->nhi, hi, (char)('0' + d), false, &ok_hi);
    }
    bool ok = d < 10 && ok_lo && ok_hi && frac_nonempty(f, nlo, nhi);
    bool same = ok && start >= 0 && side_eq(nlo, slo) && side_eq(nhi, shi);
    if (start >= 0 && !same) {
      st = frac_alt(f, (char)('0' + start), (char)('0' + d - 1), slo, shi, &body, &any);
      start = -1;
    }
    if (ok && start < 0) {
      start = d;
      slo = nlo;
      shi = nhi;
    }
  }
  if (!st && !any && !has_eps)
    st = poot_status_make(POOT_INTERNAL, "json schema: an empty fraction range");
  if (!st) {
    if (!any) {
      poot_strbuf_clear(&body);
    } else if (has_eps) {
      poot_strbuf_printf(&body, " | \"\"");
    }
    st = body.failed ? poot__js_oom()
                     : poot__js_rule_set(f->c, index, body.len ? body.data : "\"\"",
                                         body.len ? body.len : 2);
  }
  poot_strbuf_deinit(&body);
  if (!st) poot_strbuf_puts(out, poot__js_rule_name(f->c, index));
  return st;
}

/* Appends int_literal ("." fraction)? for the fractions allowed by the two sides, or nothing
 * (and *ok false) when none is. */
static poot_status with_fraction(js_ctx *c, const char *int_lit_or_rule, bool literal,
                                 const char *flo, bool lo_free, bool lo_incl, const char *fhi,
                                 bool hi_free, bool hi_incl, const char *hint, poot_strbuf *sb,
                                 bool *any) {
  js_frac f = {.c = c, .lo = flo, .hi = fhi, .nlo = strlen(flo), .nhi = strlen(fhi), .hint = hint};
  js_fside lo = {.free = lo_free, .pos = 0, .incl = lo_incl};
  js_fside hi = {.free = hi_free, .pos = 0, .incl = hi_incl};
  if (!frac_nonempty(&f, lo, hi)) return POOT_OK_STATUS;
  bool eps = frac_eps(&f, lo, hi);
  /* digits after the point: the language without ε (a '.' needs a digit) */
  poot_strbuf digits;
  poot_strbuf_init(&digits);
  poot_map_init(&f.memo);
  poot_status st = POOT_OK_STATUS;
  bool nonempty_digits = false;
  for (int d = 0; d < 10 && !nonempty_digits; d++) {
    bool a = false, b = false;
    js_fside nlo = frac_step(flo, f.nlo, lo, (char)('0' + d), true, &a);
    js_fside nhi = frac_step(fhi, f.nhi, hi, (char)('0' + d), false, &b);
    nonempty_digits = a && b && frac_nonempty(&f, nlo, nhi);
  }
  if (nonempty_digits) st = frac_expr(&f, lo, hi, false, &digits);
  poot_map_deinit(&f.memo);
  if (!st) {
    poot_strbuf_printf(sb, "%s", *any ? " | " : "");
    if (literal)
      poot_strbuf_printf(sb, "\"%s\"", int_lit_or_rule);
    else
      poot_strbuf_puts(sb, int_lit_or_rule);
    if (nonempty_digits)
      poot_strbuf_printf(sb, " %s\".\" %s%s", eps ? "( " : "", digits.data, eps ? " )?" : "");
    *any = true;
  }
  if (!st && digits.failed) st = poot__js_oom();
  poot_strbuf_deinit(&digits);
  return st;
}

/* Magnitudes (no sign) in the interval lo..hi (hi NULL: unbounded), written I ("." F)?. */
static poot_status mag_range(js_ctx *c, const js_dec *lo, bool lo_incl, const js_dec *hi,
                             bool hi_incl, const char *hint, poot_strbuf *sb, bool *any) {
  if (hi) {
    int r = mag_cmp(lo, hi);
    if (r > 0 || (r == 0 && !(lo_incl && hi_incl))) return POOT_OK_STATUS;
  }
  if (hi && strcmp(lo->ip, hi->ip) == 0)
    return with_fraction(c, lo->ip, true, lo->fp, false, lo_incl, hi->fp, false, hi_incl, hint, sb,
                         any);
  POOT_TRY(with_fraction(c, lo->ip, true, lo->fp, false, lo_incl, "", true, false, hint, sb, any));
  const char *mid_lo = NULL, *mid_hi = NULL;
  POOT_TRY(int_add1(c, lo->ip, 1, &mid_lo));
  if (hi) POOT_TRY(int_add1(c, hi->ip, -1, &mid_hi));
  if (!hi || int_cmp(mid_lo, mid_hi) <= 0) {
    poot_strbuf mid;
    poot_strbuf_init(&mid);
    bool inner = false;
    poot_status st = int_range(c, mid_lo, mid_hi, hint, &mid, &inner);
    const char *name = NULL;
    if (!st && inner) st = range_expr(c, hint, &mid, &name);
    poot_strbuf_deinit(&mid);
    POOT_TRY(st);
    if (name) {
      poot_strbuf_printf(sb, "%s%s (\".\" [0-9]+)?", *any ? " | " : "", name);
      *any = true;
    }
  }
  if (hi)
    POOT_TRY(with_fraction(c, hi->ip, true, "", true, true, hi->fp, false, hi_incl, hint, sb, any));
  return POOT_OK_STATUS;
}

/* A bounded number: −m for the negative part, then the non-negative part, without exponent. */
static poot_status number_range(js_ctx *c, const js_bound *lo, const js_bound *hi, const char *hint,
                                poot_strbuf *sb, bool *any) {
  static const js_dec zero = {.neg = false, .ip = "0", .fp = ""};
  if (!lo->set || lo->v.neg) { /* m in [max(0, -hi), -lo], m > 0 */
    js_dec mlo = zero, mhi = {0};
    bool mlo_incl = false;
    if (hi->set && hi->v.neg) {
      mlo = hi->v;
      mlo.neg = false;
      mlo_incl = hi->incl;
    }
    if (lo->set) {
      mhi = lo->v;
      mhi.neg = false;
    }
    poot_strbuf neg;
    poot_strbuf_init(&neg);
    bool inner = false;
    poot_status st =
        mag_range(c, &mlo, mlo_incl, lo->set ? &mhi : NULL, lo->incl, hint, &neg, &inner);
    const char *name = NULL;
    if (!st && inner) st = range_expr(c, hint, &neg, &name);
    poot_strbuf_deinit(&neg);
    POOT_TRY(st);
    if (name) {
      poot_strbuf_printf(sb, "%s\"-\" %s", *any ? " | " : "", name);
      *any = true;
    }
  }
  if (!hi->set || !hi->v.neg) {
    js_dec plo = zero;
    bool plo_incl = true;
    if (lo->set && !lo->v.neg) {
      plo = lo->v;
      plo_incl = lo->incl;
    }
    POOT_TRY(mag_range(c, &plo, plo_incl, hi->set ? &hi->v : NULL, hi->incl, hint, sb, any));
  }
  return POOT_OK_STATUS;
}

poot_status poot__js_number(js_ctx *c, const poot_json *s, bool integer, const char *hint,
                            const char **out_name) {
  js_bound lo = {0}, hi = {0};
  *out_name = NULL;
  POOT_TRY(read_bound(c, s, "minimum", "exclusiveMinimum", true, &lo));
  POOT_TRY(read_bound(c, s, "maximum", "exclusiveMaximum", false, &hi));
  if (!lo.set && !hi.set) return poot__js_prim(c, integer ? "json-int" : "json-number", out_name);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  bool any = false;
  char h[64];
  snprintf(h, sizeof h, "%s-%s", hint, integer ? "int" : "num");
  poot_status st =
      integer ? integer_rule(c, lo, hi, h, &sb, &any) : number_range(c, &lo, &hi, h, &sb, &any);
  if (!st && any) st = poot__js_rule_sb(c, h, &sb, out_name);
  poot_strbuf_deinit(&sb);
  return st;
}

/* --------------------------------------------------------------- key trie */

/* Additional members' keys are spelled with raw characters and the short escapes \" \\ \b
 * \f \n \r \t only (never \/ or \u), so every key has one spelling and a trie over the
 * declared keys' spellings can exclude them exactly. */
typedef struct js_tnode {
  uint32_t first_child, next_sibling;
  char unit[8]; /* the unit leading here (UTF-8 character or a 2-byte escape) */
  uint8_t unit_len;
  bool terminal;
} js_tnode;

typedef struct js_trie {
  js_tnode *n;
  uint32_t len, cap;
} js_trie;

static poot_status trie_child(js_ctx *c, js_trie *t, uint32_t at, const char *u, uint8_t n,
                              uint32_t *out) {
  for (uint32_t k = t->n[at].first_child; k; k = t->n[k].next_sibling)
    if (t->n[k].unit_len == n && memcmp(t->n[k].unit, u, n) == 0) {
      *out = k;
      return POOT_OK_STATUS;
    }
  if (t->len == t->cap) {
    uint32_t ncap = t->cap ? t->cap * 2 : 64;
    js_tnode *nn = poot_arena_alloc(&c->arena, ncap * sizeof *nn, 8);
    if (!nn) return poot__js_oom();
    if (t->n) memcpy(nn, t->n, t->len * sizeof *nn);
    t->n = nn;
    t->cap = ncap;
  }
  js_tnode *node = &t->n[t->len];
  memset(node, 0, sizeof *node);
  memcpy(node->unit, u, n);
  node->unit_len = n;
  node->next_sibling = t->n[at].first_child;
  t->n[at].first_child = t->len;
  *out = t->len++;
  return POOT_OK_STATUS;
}

static uint8_t unit_len(const unsigned char *s, size_t left) {
  if (s[0] == '\\') return left >= 2 && s[1] != 'u' && s[1] != '/' ? 2 : 0;
  uint8_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : 4;
  return n <= left ? n : 0;
}

static poot_status trie_add(js_ctx *c, js_trie *t, const char *key, size_t klen) {
  poot_strbuf sp;
  poot_strbuf_init(&sp);
  poot_json_write_string(&sp, key, klen, false);
  poot_status st = sp.failed ? poot__js_oom() : POOT_OK_STATUS;
  if (!st && !poot__js_utf8_valid(key, klen))
    st = poot__js_err(c, POOT_INVALID_ARGUMENT, "a property name is not valid UTF-8");
  uint32_t at = 0;
  const unsigned char *s = (const unsigned char *)sp.data + 1;
  size_t left = st ? 0 : sp.len - 2;
  while (!st && left) {
    uint8_t n = unit_len(s, left);
    if (!n) break; /* a spelling additional keys cannot use: nothing to exclude */
    st = trie_child(c, t, at, (const char *)s, n, &at);
    s += n;
    left -= n;
  }
  if (!st && !left) t->n[at].terminal = true;
  poot_strbuf_deinit(&sp);
  return st;
}

/* The rule after the units leading to node `at`: the close quote unless a key ends here, each
 * child's unit, or any other unit followed by anything. */
static poot_status trie_rule(js_ctx *c, const js_trie *t, uint32_t at, const char *hint,
                             const char **out) {
  poot_strbuf sb, raw, esc;
  poot_strbuf_init(&sb);
  poot_strbuf_init(&raw);
  poot_strbuf_init(&esc);
  const char *tail = NULL;
  poot_status st = poot__js_prim(c, "json-key-tail", &tail);
  bool any = false;
  if (!t->n[at].terminal) {
    poot_strbuf_puts(&sb, "\"\\\"\"");
    any = true;
  }
  poot_strbuf_puts(&esc, "\"\\\\bfnrt");
  for (uint32_t k = t->n[at].first_child; k && !st; k = t->n[k].next_sibling) {
    const char *child = NULL;
    st = trie_rule(c, t, k, hint, &child);
    if (st) break;
    poot_strbuf_puts(&sb, any ? " | " : "");
    st = poot__js_literal(c, &sb, t->n[k].unit, t->n[k].unit_len);
    poot_strbuf_printf(&sb, " %s", child);
    any = true;
    if (t->n[k].unit[0] == '\\') { /* drop the escape letter from the "other" escapes */
      char *p = memchr(esc.data, t->n[k].unit[1], esc.len);
      if (p) *p = ' ';
    } else {
      uint32_t cp = 0;
      const unsigned char *u = (const unsigned char *)t->n[k].unit;
      uint8_t n = t->n[k].unit_len;
      cp = n == 1 ? u[0] : n == 2 ? (u[0] & 0x1Fu) : n == 3 ? (u[0] & 0x0Fu) : (u[0] & 0x07u);
      for (uint8_t i = 1; i < n; i++) cp = (cp << 6) | (u[i] & 0x3Fu);
      poot_strbuf_printf(&raw, "\\U%08X", cp);
    }
  }
  if (!st) {
    poot_strbuf_printf(&sb, "%s[^\"\\\\\\x00-\\x1F%s] %s", any ? " | " : "", raw.data, tail);
    size_t letters = 0;
    poot_strbuf other;
    poot_strbuf_init(&other);
    for (size_t i = 0; i < esc.len; i++) {
      if (esc.data[i] == ' ') continue;
      letters++;
      if (esc.data[i] == '"' || esc.data[i] == '\\') poot_strbuf_putc(&other, '\\');
      poot_strbuf_putc(&other, esc.data[i]);
    }
    if (letters) poot_strbuf_printf(&sb, " | \"\\\\\" [%s] %s", other.data, tail);
    poot_strbuf_deinit(&other);
    if (raw.failed || esc.failed) st = poot__js_oom();
  }
  if (!st) st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  poot_strbuf_deinit(&raw);
  poot_strbuf_deinit(&esc);
  return st;
}

poot_status poot__js_key_not_in(js_ctx *c, const char *const *keys, const size_t *lens, size_t n,
                                const char *hint, const char **out_name) {
  if (n == 0) return poot__js_prim(c, "json-string", out_name);
  js_trie t = {.n = POOT_ARENA_NEW_ARRAY(&c->arena, js_tnode, 64), .len = 1, .cap = 64};
  if (!t.n) return poot__js_oom(); /* node 0, zeroed, is the root */
  for (size_t i = 0; i < n; i++) {
    if (lens[i] > 1000)
      return poot__js_err(c, POOT_UNSUPPORTED,
                          "a property name longer than 1,000 bytes with additional properties");
    POOT_TRY(trie_add(c, &t, keys[i], lens[i]));
  }
  const char *first = NULL;
  POOT_TRY(trie_rule(c, &t, 0, hint, &first));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_printf(&sb, "\"\\\"\" %s", first);
  poot_status st = poot__js_rule_sb(c, hint, &sb, out_name);
  poot_strbuf_deinit(&sb);
  return st;
}
