/* tpl_ops.c — Python operators (arithmetic, comparison, membership, string
 * %-formatting and str.format) and the string helpers the filters and
 * methods share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_impl.h"
#include "tpl_ops.h"

/* ------------------------------------------------------------ case mapping */

uint32_t poot__tpl_lower_cp(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
      c != 0x17F) {
    bool even_upper = (c < 0x138) || (c > 0x149 && c < 0x178);
    if (even_upper && (c % 2) == 0) return c + 1;
    if (!even_upper && c > 0x138 && c < 0x149 && (c % 2) == 1) return c + 1;
    if (c >= 0x179 && c <= 0x17E && (c % 2) == 1) return c + 1;
  }
  return c;
}

uint32_t poot__tpl_upper_cp(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xB5) return 0x39C;
  if (c == 0xFF) return 0x178;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c >= 0x100 && c <= 0x17F) {
    uint32_t l = c - 1;
    if (poot__tpl_lower_cp(l) == c) return l;
  }
  return c;
}

bool poot__tpl_is_cased(uint32_t c) {
  return poot__tpl_lower_cp(c) != c || poot__tpl_upper_cp(c) != c || c == 0xDF;
}

/* Python's final-sigma rule: a capital sigma lowers to ς when a cased letter
 * precedes it and none follows (ignoring apostrophes in between). */
static bool final_sigma(const char *p, size_t n, size_t i, size_t len) {
  bool before = false, after = false;
  size_t j = i;
  while (j > 0) {
    size_t k = j - 1;
    while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80) k--;
    size_t l;
    uint32_t c = poot__tpl_utf8_decode(p, n, k, &l);
    j = k;
    if (poot__tpl_is_cased(c)) {
      before = true;
      break;
    }
    if (c != 0x27 && c != 0x2019) break;
  }
  for (size_t k = i + len; k < n;) {
    size_t l;
    uint32_t c = poot__tpl_utf8_decode(p, n, k, &l);
    if (poot__tpl_is_cased(c)) after = true;
    if (c != 0x27 && c != 0x2019) break;
    k += l;
  }
  return before && !after;
}

/* mode: 'u' upper, 'l' lower, 't' Python str.title, 'c' capitalize. */
void poot__tpl_case(poot_strbuf *sb, const char *p, size_t n, char mode) {
  bool prev_cased = false, first = true;
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(p, n, i, &len);
    uint32_t r = cp;
    switch (mode) {
      case 'u':
        if (cp == 0xDF) {
          poot_strbuf_puts(sb, "SS");
          i += len;
          continue;
        }
        r = poot__tpl_upper_cp(cp);
        break;
      case 'l':
        r = poot__tpl_lower_cp(cp);
        if (cp == 0x3A3 && final_sigma(p, n, i, len)) r = 0x3C2;
        break;
      case 't':
        r = prev_cased ? poot__tpl_lower_cp(cp) : poot__tpl_upper_cp(cp);
        break;
      case 'c':
        r = first ? poot__tpl_upper_cp(cp) : poot__tpl_lower_cp(cp);
        break;
    }
    prev_cased = poot__tpl_is_cased(cp);
    first = false;
    if (r == cp)
      poot_strbuf_append(sb, p + i, len);
    else
      poot__tpl_utf8_put(sb, r);
    i += len;
  }
}

/* ---------------------------------------------------------------- strip */

static bool in_chars(uint32_t cp, const char *chars, size_t cn) {
  for (size_t i = 0; i < cn;) {
    size_t len;
    if (poot__tpl_utf8_decode(chars, cn, i, &len) == cp) return true;
    i += len;
  }
  return false;
}

void poot__tpl_strip(const char *p, size_t n, const char *chars, size_t cn, bool left, bool right,
                     size_t *out_b, size_t *out_e) {
  size_t b = 0, e = n;
  if (left) {
    while (b < e) {
      size_t len;
      uint32_t cp = poot__tpl_utf8_decode(p, n, b, &len);
      if (chars ? !in_chars(cp, chars, cn) : !poot__tpl_py_isspace(cp)) break;
      b += len;
    }
  }
  if (right) {
    while (e > b) {
      size_t j = e - 1;
      while (j > b && ((unsigned char)p[j] & 0xC0) == 0x80) j--;
      size_t len;
      uint32_t cp = poot__tpl_utf8_decode(p, n, j, &len);
      if (j + len != e) break;
      if (chars ? !in_chars(cp, chars, cn) : !poot__tpl_py_isspace(cp)) break;
      e = j;
    }
  }
  *out_b = b;
  *out_e = e;
}

/* ------------------------------------------------------------- operators */

static double num_f(tpl_value v) {
  return v.kind == TV_FLOAT ? v.u.f : v.kind == TV_INT ? (double)v.u.i : (double)v.u.b;
}
static int64_t num_i(tpl_value v) {
  return v.kind == TV_INT ? v.u.i : v.kind == TV_BOOL ? (int64_t)v.u.b : 0;
}

static const char *op_symbol(int op) {
  static const char *const s[] = {
      "+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "not in"};
  return op >= 0 && op <= OP_NOTIN ? s[op] : "?";
}

static poot_status type_error(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b) {
  if (a.kind == TV_UNDEF || b.kind == TV_UNDEF) {
    tpl_value u = a.kind == TV_UNDEF ? a : b;
    if (u.flags & TVF_HINT) return poot__tpl_err(ctx, at, POOT_FORMAT, "%s", u.u.s.p);
    return poot__tpl_err(ctx, at, POOT_FORMAT, "'%s' is undefined", u.u.s.p ? u.u.s.p : "value");
  }
  if (op >= OP_LT && op <= OP_GE)
    return poot__tpl_err(ctx, at, POOT_FORMAT,
                         "'%s' not supported between instances of '%s' and '%s'", op_symbol(op),
                         poot__tv_type_name(a), poot__tv_type_name(b));
  return poot__tpl_err(ctx, at, POOT_FORMAT, "unsupported operand type(s) for %s: '%s' and '%s'",
                       op_symbol(op), poot__tv_type_name(a), poot__tv_type_name(b));
}

static poot_status overflow(tpl_ctx *ctx, const tpl_node *at) {
  return poot__tpl_err(ctx, at, POOT_UNSUPPORTED,
                       "integer overflow (poot keeps integers in 64 bits)");
}

void poot__tpl_html_escape(poot_strbuf *sb, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (p[i]) {
      case '&':
        poot_strbuf_puts(sb, "&amp;");
        break;
      case '<':
        poot_strbuf_puts(sb, "&lt;");
        break;
      case '>':
        poot_strbuf_puts(sb, "&gt;");
        break;
      case '"':
        poot_strbuf_puts(sb, "&#34;");
        break;
      case '\'':
        poot_strbuf_puts(sb, "&#39;");
        break;
      default:
        poot_strbuf_putc(sb, p[i]);
    }
  }
}

poot_status poot__tpl_contains(tpl_ctx *ctx, const tpl_node *at, tpl_value hay, tpl_value needle,
                               bool *out) {
  *out = false;
  switch (hay.kind) {
    case TV_UNDEF:
      return NULL;
    case TV_LIST:
      POOT_TRY(poot__tpl_charge(ctx, at, hay.u.list->n));
      for (size_t i = 0; i < hay.u.list->n && !*out; i++)
        POOT_TRY(poot__tv_equal(ctx, at, hay.u.list->items[i], needle, out));
      return NULL;
    case TV_DICT: {
      long i;
      POOT_TRY(poot__tv_dict_find(ctx, at, hay.u.dict, needle, &i));
      *out = i >= 0;
      return NULL;
    }
    case TV_STR:
      if (needle.kind != TV_STR)
        return poot__tpl_err(ctx, at, POOT_FORMAT,
                             "'in <string>' requires string as left operand, not %s",
                             poot__tv_type_name(needle));
      POOT_TRY(poot__tpl_charge(ctx, at, hay.u.s.n / TPL_TEXT_STEP));
      if (needle.u.s.n == 0) {
        *out = true;
      } else if (needle.u.s.n <= hay.u.s.n) {
        *out = memmem(hay.u.s.p, hay.u.s.n, needle.u.s.p, needle.u.s.n) != NULL;
      }
      return NULL;
    case TV_LOOP: {
      tpl_value l = {.kind = TV_LIST};
      l.u.list = hay.u.loop->items;
      return poot__tpl_contains(ctx, at, l, needle, out);
    }
    default:
      return poot__tpl_err(ctx, at, POOT_FORMAT, "argument of type '%s' is not iterable",
                           poot__tv_type_name(hay));
  }
}

static poot_status repeat(tpl_ctx *ctx, const tpl_node *at, tpl_value seq, int64_t times,
                          tpl_value *out) {
  if (times < 0) times = 0;
  if (seq.kind == TV_STR) {
    size_t total;
    if (!poot_size_mul(seq.u.s.n, (size_t)times, &total) || total > ctx->params.max_output) {
      ctx->over = TPL_OVER_OUTPUT;
      return poot__tpl_over(ctx, at);
    }
    POOT_TRY(poot__tpl_charge(ctx, at, total / TPL_TEXT_STEP));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    /* '' * 10**18 is '' at once, not 10**18 empty appends. */
    for (int64_t i = 0; seq.u.s.n && i < times; i++) poot_strbuf_append(&sb, seq.u.s.p, seq.u.s.n);
    poot_status st = poot__tv_from_sb(ctx, &sb, out);
    poot_strbuf_deinit(&sb);
    return st;
  }
  size_t total;
  if (!poot_size_mul(seq.u.list->n, (size_t)times, &total) || total > 10000000)
    return poot__tpl_err(ctx, at, POOT_CAPACITY, "a repeated list is too long");
  POOT_TRY(poot__tpl_charge(ctx, at, total));
  POOT_TRY(poot__tv_list_new(ctx, total, out));
  out->flags = seq.flags & TVF_TUPLE;
  for (size_t i = 0; i < total; i++) out->u.list->items[i] = seq.u.list->items[i % seq.u.list->n];
  return NULL;
}

/* ==, != */
static poot_status binop_equal(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b,
                               tpl_value *out) {
  bool eq = false;
  POOT_TRY(poot__tv_equal(ctx, at, a, b, &eq));
  *out = tv_bool(op == OP_EQ ? eq : !eq);
  return NULL;
}

/* <, >, <=, >= */
static poot_status binop_order(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b,
                               tpl_value *out) {
  bool ok = false, lt = false;
  if (op == OP_LT || op == OP_GE)
    POOT_TRY(poot__tv_less(ctx, at, a, b, &ok, &lt));
  else
    POOT_TRY(poot__tv_less(ctx, at, b, a, &ok, &lt));
  if (!ok) return type_error(ctx, at, op, a, b);
  /* a<b: lt; a>b: b<a; a<=b: !(b<a); a>=b: !(a<b). NaN aside, as Python. */
  if (op == OP_LT || op == OP_GT) {
    *out = tv_bool(lt);
  } else if (tv_is_num(a) && tv_is_num(b)) {
    double x = num_f(a), y = num_f(b);
    *out = tv_bool(op == OP_LE ? x <= y : x >= y);
    if (a.kind != TV_FLOAT && b.kind != TV_FLOAT)
      *out = tv_bool(op == OP_LE ? num_i(a) <= num_i(b) : num_i(a) >= num_i(b));
  } else {
    *out = tv_bool(!lt);
  }
  return NULL;
}

/* in, not in */
static poot_status binop_contains(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a,
                                  tpl_value b, tpl_value *out) {
  bool r;
  POOT_TRY(poot__tpl_contains(ctx, at, b, a, &r));
  *out = tv_bool(op == OP_IN ? r : !r);
  return NULL;
}

/* Python's float // and %: the result takes the sign of the divisor. */
static tpl_value float_divmod(int op, double fx, double fy) {
  double m = fmod(fx, fy);
  if (m != 0.0 && ((m < 0) != (fy < 0))) m += fy;
  if (op == OP_MOD) return tv_float(m == 0.0 ? copysign(0.0, fy) : m);
  /* CPython's float_floor_div. */
  double div = (fx - fmod(fx, fy)) / fy, fd;
  double mod0 = fmod(fx, fy);
  if (mod0 != 0.0 && ((fy < 0) != (mod0 < 0))) div -= 1.0;
  if (div != 0.0) {
    fd = floor(div);
    if (div - fd > 0.5) fd += 1.0;
  } else {
    fd = copysign(0.0, fx / fy);
  }
  return tv_float(fd);
}

/* Python's // and % on two numbers. */
static poot_status num_divmod(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b,
                              tpl_value *out) {
  bool fl = a.kind == TV_FLOAT || b.kind == TV_FLOAT;
  int64_t x = num_i(a), y = num_i(b);
  double fx = num_f(a), fy = num_f(b);
  if (fl ? fy == 0.0 : y == 0)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "integer division or modulo by zero");
  if (fl) {
    *out = float_divmod(op, fx, fy);
    return NULL;
  }
  if (x == INT64_MIN && y == -1) return overflow(ctx, at);
  int64_t q = x / y, m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) {
    q -= 1;
    m += y;
  }
  *out = tv_int(op == OP_MOD ? m : q);
  return NULL;
}

/* Python's ** on two numbers: exact for integers with a non-negative
 * exponent, float otherwise. */
static poot_status num_pow(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                           tpl_value *out) {
  bool fl = a.kind == TV_FLOAT || b.kind == TV_FLOAT;
  int64_t x = num_i(a), y = num_i(b);
  double fx = num_f(a), fy = num_f(b);
  if (!fl && y >= 0) {
    int64_t acc = 1, base = x;
    int64_t e = y;
    while (e > 0) {
      if (e & 1) {
        if (__builtin_mul_overflow(acc, base, &acc)) return overflow(ctx, at);
      }
      e >>= 1;
      if (e && __builtin_mul_overflow(base, base, &base)) return overflow(ctx, at);
    }
    *out = tv_int(acc);
    return NULL;
  }
  if (fx == 0.0 && fy < 0)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "0.0 cannot be raised to a negative power");
  *out = tv_float(pow(fx, fy));
  return NULL;
}

static bool is_arith_op(int op) {
  return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV || op == OP_FLOORDIV ||
         op == OP_MOD || op == OP_POW;
}

/* + - * / // % ** on two numbers (bools count as integers). */
static poot_status binop_num(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b,
                             tpl_value *out) {
  bool fl = a.kind == TV_FLOAT || b.kind == TV_FLOAT;
  int64_t x = num_i(a), y = num_i(b), r = 0;
  double fx = num_f(a), fy = num_f(b);
  bool over = false;
  switch (op) {
    case OP_ADD:
      if (fl)
        *out = tv_float(fx + fy);
      else
        over = __builtin_add_overflow(x, y, &r);
      break;
    case OP_SUB:
      if (fl)
        *out = tv_float(fx - fy);
      else
        over = __builtin_sub_overflow(x, y, &r);
      break;
    case OP_MUL:
      if (fl)
        *out = tv_float(fx * fy);
      else
        over = __builtin_mul_overflow(x, y, &r);
      break;
    case OP_DIV:
      if (fy == 0.0) return poot__tpl_err(ctx, at, POOT_FORMAT, "division by zero");
      *out = tv_float(fx / fy);
      return NULL;
    case OP_FLOORDIV:
    case OP_MOD:
      return num_divmod(ctx, at, op, a, b, out);
    default:
      return num_pow(ctx, at, a, b, out);
  }
  if (over) return overflow(ctx, at);
  if (!fl) *out = tv_int(r);
  return NULL;
}

/* str + str; Markup + str escapes the plain side, as markupsafe does. */
static poot_status str_concat(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                              tpl_value *out) {
  bool safe = (a.flags | b.flags) & TVF_SAFE;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (safe && !(a.flags & TVF_SAFE))
    poot__tpl_html_escape(&sb, a.u.s.p, a.u.s.n);
  else
    poot_strbuf_append(&sb, a.u.s.p, a.u.s.n);
  if (safe && !(b.flags & TVF_SAFE))
    poot__tpl_html_escape(&sb, b.u.s.p, b.u.s.n);
  else
    poot_strbuf_append(&sb, b.u.s.p, b.u.s.n);
  poot_status st = poot__tpl_charge(ctx, at, sb.len / TPL_TEXT_STEP);
  if (!st && !tpl_text_fits(ctx, &sb)) st = poot__tpl_over(ctx, at);
  if (!st) st = poot__tv_from_sb(ctx, &sb, out);
  poot_strbuf_deinit(&sb);
  if (!st && safe) out->flags |= TVF_SAFE;
  return st;
}

/* list + list, tuple + tuple. */
static poot_status list_concat(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                               tpl_value *out) {
  POOT_TRY(poot__tpl_charge(ctx, at, a.u.list->n + b.u.list->n));
  POOT_TRY(poot__tv_list_new(ctx, a.u.list->n + b.u.list->n, out));
  out->flags = a.flags & TVF_TUPLE;
  if (a.u.list->n) memcpy(out->u.list->items, a.u.list->items, a.u.list->n * sizeof(tpl_value));
  if (b.u.list->n)
    memcpy(out->u.list->items + a.u.list->n, b.u.list->items, b.u.list->n * sizeof(tpl_value));
  return NULL;
}

/* The operators on sequences: concatenation, repetition and %-formatting. */
static poot_status binop_sequence(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a,
                                  tpl_value b, tpl_value *out) {
  if (op == OP_ADD && a.kind == TV_STR && b.kind == TV_STR) return str_concat(ctx, at, a, b, out);
  if (op == OP_ADD && a.kind == TV_LIST && b.kind == TV_LIST &&
      (a.flags & TVF_TUPLE) == (b.flags & TVF_TUPLE))
    return list_concat(ctx, at, a, b, out);
  if (op == OP_MUL) {
    if ((a.kind == TV_STR || a.kind == TV_LIST) && (b.kind == TV_INT || b.kind == TV_BOOL))
      return repeat(ctx, at, a, num_i(b), out);
    if ((b.kind == TV_STR || b.kind == TV_LIST) && (a.kind == TV_INT || a.kind == TV_BOOL))
      return repeat(ctx, at, b, num_i(a), out);
  }
  if (op == OP_MOD && a.kind == TV_STR && b.kind != TV_UNDEF)
    return poot__tpl_percent_format(ctx, at, a, b, out);
  return type_error(ctx, at, op, a, b);
}

poot_status poot__tpl_binop(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a, tpl_value b,
                            tpl_value *out) {
  *out = tv_none();
  switch (op) {
    case OP_EQ:
    case OP_NE:
      return binop_equal(ctx, at, op, a, b, out);
    case OP_LT:
    case OP_GT:
    case OP_LE:
    case OP_GE:
      return binop_order(ctx, at, op, a, b, out);
    case OP_IN:
    case OP_NOTIN:
      return binop_contains(ctx, at, op, a, b, out);
    default:
      break;
  }
  if (tv_is_num(a) && tv_is_num(b) && is_arith_op(op)) return binop_num(ctx, at, op, a, b, out);
  return binop_sequence(ctx, at, op, a, b, out);
}

/* ---------------------------------------------------- %-style formatting */

poot_status poot__tpl_percent_format(tpl_ctx *ctx, const tpl_node *at, tpl_value fmt,
                                     tpl_value args, tpl_value *out) {
  const tpl_value *av = &args;
  size_t an = 1, ai = 0;
  if (args.kind == TV_LIST && (args.flags & TVF_TUPLE)) {
    av = args.u.list->items;
    an = args.u.list->n;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = NULL;
  const char *p = fmt.u.s.p;
  size_t n = fmt.u.s.n;
  for (size_t i = 0; i < n && !st; i++) {
    if (p[i] != '%') {
      poot_strbuf_putc(&sb, p[i]);
      continue;
    }
    size_t j = i + 1;
    char spec[48];
    size_t sl = 0;
    spec[sl++] = '%';
    while (j < n && strchr("-+ #0", p[j]) && sl < 20) spec[sl++] = p[j++];
    /* Width and precision are bounded: at most 4 digits each. */
    size_t wd = 0, pd = 0;
    while (j < n && p[j] >= '0' && p[j] <= '9') {
      if (++wd > 4) break;
      spec[sl++] = p[j++];
    }
    if (j < n && p[j] == '.') {
      spec[sl++] = p[j++];
      while (j < n && p[j] >= '0' && p[j] <= '9') {
        if (++pd > 3) break;
        spec[sl++] = p[j++];
      }
    }
    if (wd > 4 || pd > 3) {
      st = poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "a %%-format width or precision that large");
      break;
    }
    if (j >= n) {
      st = poot__tpl_err(ctx, at, POOT_FORMAT, "incomplete format");
      break;
    }
    char conv = p[j];
    i = j;
    if (conv == '%') {
      poot_strbuf_putc(&sb, '%');
      continue;
    }
    if (ai >= an) {
      st = poot__tpl_err(ctx, at, POOT_FORMAT, "not enough arguments for format string");
      break;
    }
    tpl_value v = av[ai++];
    spec[sl] = 0;
    switch (conv) {
      case 's':
      case 'r': {
        poot_strbuf tmp;
        poot_strbuf_init(&tmp);
        st = conv == 's' ? poot__tv_str(ctx, at, &tmp, v) : poot__tv_repr(ctx, at, &tmp, v);
        if (st) {
          poot_strbuf_deinit(&tmp);
          break;
        }
        spec[sl++] = 's';
        spec[sl] = 0;
        poot_strbuf_printf(&sb, spec, tmp.data);
        poot_strbuf_deinit(&tmp);
        break;
      }
      case 'd':
      case 'i':
      case 'x':
      case 'X':
      case 'o':
        if (!tv_is_num(v)) {
          st = poot__tpl_err(ctx, at, POOT_FORMAT, "%%%c format: a number is required, not %s",
                             conv, poot__tv_type_name(v));
          break;
        }
        spec[sl++] = 'l';
        spec[sl++] = 'l';
        spec[sl++] = conv == 'i' ? 'd' : conv;
        spec[sl] = 0;
        poot_strbuf_printf(&sb, spec, (long long)(v.kind == TV_FLOAT ? (int64_t)v.u.f : num_i(v)));
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        if (!tv_is_num(v)) {
          st = poot__tpl_err(ctx, at, POOT_FORMAT, "must be real number, not %s",
                             poot__tv_type_name(v));
          break;
        }
        spec[sl++] = conv;
        spec[sl] = 0;
        poot_strbuf_printf(&sb, spec, num_f(v));
        break;
      case 'c':
        if (v.kind == TV_STR)
          poot_strbuf_append(&sb, v.u.s.p, v.u.s.n);
        else if (v.kind == TV_INT && v.u.i >= 0 && v.u.i < 0x110000)
          poot__tpl_utf8_put(&sb, (uint32_t)v.u.i);
        else
          st = poot__tpl_err(ctx, at, POOT_FORMAT,
                             "%%c requires an int in range(0x110000) or a char");
        break;
      default:
        st = poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "unsupported format character '%c'", conv);
    }
  }
  if (!st && ai < an && an > 0 && args.kind == TV_LIST && (args.flags & TVF_TUPLE))
    st =
        poot__tpl_err(ctx, at, POOT_FORMAT, "not all arguments converted during string formatting");
  if (!st) st = poot__tv_from_sb(ctx, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* --------------------------------------------------------- str.format() */

static poot_status apply_spec(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb, tpl_value v,
                              const char *spec, size_t sn) {
  if (sn == 0) return poot__tv_str(ctx, at, sb, v);
  /* [[fill]align][sign][#][0][width][,][.precision][type] */
  size_t i = 0;
  uint32_t fill = ' ';
  char align = 0;
  if (sn >= 2) {
    size_t cl;
    uint32_t cp = poot__tpl_utf8_decode(spec, sn, 0, &cl);
    if (cl < sn && strchr("<>^=", spec[cl])) {
      fill = cp;
      align = spec[cl];
      i = cl + 1;
    }
  }
  if (!align && i < sn && strchr("<>^=", spec[i])) align = spec[i++];
  char sign = 0;
  if (i < sn && strchr("+- ", spec[i])) sign = spec[i++];
  if (i < sn && spec[i] == '#') i++;
  if (i < sn && spec[i] == '0') {
    if (!align) {
      fill = '0';
      align = '=';
    }
    i++;
  }
  size_t width = 0;
  while (i < sn && spec[i] >= '0' && spec[i] <= '9') {
    width = width * 10 + (size_t)(spec[i++] - '0');
    if (width > 100000)
      return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "a format width that large");
  }
  if (i < sn && (spec[i] == ',' || spec[i] == '_'))
    return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "thousands separators in format specs");
  int prec = -1;
  if (i < sn && spec[i] == '.') {
    i++;
    prec = 0;
    while (i < sn && spec[i] >= '0' && spec[i] <= '9') {
      prec = prec * 10 + (spec[i++] - '0');
      if (prec > 1000)
        return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "a format precision that large");
    }
  }
  char type = i < sn ? spec[i++] : 0;
  if (i != sn) return poot__tpl_err(ctx, at, POOT_FORMAT, "invalid format specifier");
  poot_strbuf body;
  poot_strbuf_init(&body);
  poot_status st = NULL;
  if (v.kind == TV_STR && (type == 0 || type == 's')) {
    size_t n = v.u.s.n;
    if (prec >= 0) n = poot__tpl_utf8_offset(v.u.s.p, v.u.s.n, (size_t)prec);
    poot_strbuf_append(&body, v.u.s.p, n);
    if (!align) align = '<';
  } else if (tv_is_num(v) && (type == 0 || strchr("dfFeEgG%", type))) {
    if (!align) align = '>';
    char f[32];
    bool is_int = v.kind != TV_FLOAT;
    if (type == 'd' || (type == 0 && is_int && prec < 0)) {
      if (!is_int) {
        st = poot__tpl_err(ctx, at, POOT_FORMAT,
                           "unknown format code 'd' for object of type 'float'");
      } else {
        snprintf(f, sizeof f, "%%%s%s", sign == '+' ? "+" : sign == ' ' ? " " : "", "lld");
        poot_strbuf_printf(&body, f, (long long)num_i(v));
      }
    } else if (type == 0 && prec < 0) {
      poot__tv_float_repr(&body, num_f(v));
    } else {
      double x = num_f(v);
      char t = type ? type : 'g';
      if (t == '%') {
        x *= 100;
        t = 'f';
      }
      snprintf(f, sizeof f, "%%%s.%d%c",
               sign == '+'   ? "+"
               : sign == ' ' ? " "
                             : "",
               prec < 0 ? 6 : prec, t);
      poot_strbuf_printf(&body, f, x);
      if (type == '%') poot_strbuf_putc(&body, '%');
    }
  } else {
    st = poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "format spec '%.*s' for a %s value", (int)sn,
                       spec, poot__tv_type_name(v));
  }
  if (!st) {
    size_t len = poot__tpl_utf8_len(body.data, body.len);
    size_t pad = width > len ? width - len : 0;
    size_t left = align == '<' ? 0 : align == '^' ? pad / 2 : pad;
    size_t right = pad - left;
    if (align == '=' && body.len && (body.data[0] == '-' || body.data[0] == '+')) {
      poot_strbuf_putc(sb, body.data[0]);
      for (size_t k = 0; k < left; k++) poot__tpl_utf8_put(sb, fill);
      poot_strbuf_append(sb, body.data + 1, body.len - 1);
    } else {
      for (size_t k = 0; k < left; k++) poot__tpl_utf8_put(sb, fill);
      poot_strbuf_append(sb, body.data, body.len);
    }
    for (size_t k = 0; k < right; k++) poot__tpl_utf8_put(sb, fill);
  }
  poot_strbuf_deinit(&body);
  return st;
}

poot_status poot__tpl_str_format(tpl_ctx *ctx, const tpl_node *at, tpl_value fmt,
                                 const tpl_value *args, size_t nargs, const char *const *kwn,
                                 const tpl_value *kwv, size_t nkw, tpl_value *out) {
  const char *p = fmt.u.s.p;
  size_t n = fmt.u.s.n, auto_idx = 0;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    char c = p[i];
    if (c == '}') {
      if (i + 1 < n && p[i + 1] == '}')
        i++;
      else {
        st = poot__tpl_err(ctx, at, POOT_FORMAT, "Single '}' encountered in format string");
        break;
      }
      poot_strbuf_putc(&sb, '}');
      continue;
    }
    if (c != '{') {
      poot_strbuf_putc(&sb, c);
      continue;
    }
    if (i + 1 < n && p[i + 1] == '{') {
      poot_strbuf_putc(&sb, '{');
      i++;
      continue;
    }
    size_t j = i + 1;
    while (j < n && p[j] != '}' && p[j] != ':' && p[j] != '!') j++;
    size_t fb = i + 1, fe = j;
    char conv = 0;
    if (j < n && p[j] == '!') {
      if (j + 1 < n) conv = p[j + 1];
      j += 2;
    }
    size_t sb_ = j, se = j;
    if (j < n && p[j] == ':') {
      sb_ = j + 1;
      se = sb_;
      while (se < n && p[se] != '}') se++;
      j = se;
    }
    if (j >= n || p[j] != '}') {
      st = poot__tpl_err(ctx, at, POOT_FORMAT, "expected '}' before end of string");
      break;
    }
    tpl_value v;
    if (fe == fb) {
      if (auto_idx >= nargs) {
        st = poot__tpl_err(ctx, at, POOT_FORMAT, "Replacement index %zu out of range", auto_idx);
        break;
      }
      v = args[auto_idx++];
    } else if (p[fb] >= '0' && p[fb] <= '9') {
      size_t k = 0;
      for (size_t q = fb; q < fe; q++) {
        if (p[q] < '0' || p[q] > '9') {
          st = poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "attribute or index in a format field");
          break;
        }
        k = k * 10 + (size_t)(p[q] - '0');
      }
      if (st) break;
      if (k >= nargs) {
        st = poot__tpl_err(ctx, at, POOT_FORMAT, "Replacement index %zu out of range", k);
        break;
      }
      v = args[k];
    } else {
      bool found = false;
      for (size_t k = 0; k < nkw; k++) {
        if (strlen(kwn[k]) == fe - fb && memcmp(kwn[k], p + fb, fe - fb) == 0) {
          v = kwv[k];
          found = true;
        }
      }
      if (!found) {
        st = poot__tpl_err(ctx, at, POOT_FORMAT, "format field '%.*s' has no argument",
                           (int)(fe - fb), p + fb);
        break;
      }
    }
    if (conv == 'r') {
      poot_strbuf tmp;
      poot_strbuf_init(&tmp);
      st = poot__tv_repr(ctx, at, &tmp, v);
      if (!st) st = poot__tv_from_sb(ctx, &tmp, &v);
      poot_strbuf_deinit(&tmp);
      if (st) break;
    }
    st = apply_spec(ctx, at, &sb, v, p + sb_, se - sb_);
    i = j;
  }
  if (!st) st = poot__tv_from_sb(ctx, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}
