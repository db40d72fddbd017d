/* tpl_builtins.c — jinja2's filters and tests, the str/dict/list methods the
 * sandbox allows, and the globals transformers defines (raise_exception,
 * strftime_now) besides jinja2's own (range, namespace, dict). */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "template_impl.h"
#include "tpl_ops.h"

/* --------------------------------------------------------------- arguments */

/* Looks up a dotted attribute path ("a.b", "0") the way jinja2's
 * make_attrgetter does: item access for each part. */
static poot_status attr_path(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, tpl_value path,
                             tpl_value *out) {
  if (path.kind != TV_STR) return poot__tpl_getitem(ctx, at, obj, path, out);
  const char *p = path.u.s.p;
  size_t n = path.u.s.n, b = 0;
  tpl_value cur = obj;
  while (b <= n) {
    size_t e = b;
    while (e < n && p[e] != '.') e++;
    tpl_value key;
    bool digits = e > b;
    for (size_t i = b; i < e; i++)
      if (p[i] < '0' || p[i] > '9') digits = false;
    if (digits)
      key = tv_int(strtoll(p + b, NULL, 10));
    else
      key = tv_str(p + b, e - b);
    POOT_TRY(poot__tpl_getitem(ctx, at, cur, key, &cur));
    b = e + 1;
    if (e >= n) break;
  }
  *out = cur;
  return NULL;
}

/* ------------------------------------------------------------------- tests */

static const char *const known_tests[] = {
    "defined", "undefined",   "none",     "string",  "number", "integer", "float",
    "mapping", "iterable",    "sequence", "boolean", "true",   "false",   "even",
    "odd",     "divisibleby", "eq",       "equalto", "==",     "ne",      "!=",
    "lt",      "lessthan",    "<",        "le",      "<=",     "gt",      "greaterthan",
    ">",       "ge",          ">=",       "in",      "lower",  "upper",   "callable",
    "sameas",  "escaped",     NULL};

static bool is_known_test(const char *name) {
  for (size_t i = 0; known_tests[i]; i++)
    if (!strcmp(known_tests[i], name)) return true;
  return false;
}

poot_status poot__tpl_test(tpl_ctx *ctx, const tpl_node *at, const char *name, tpl_value v,
                           const tpl_value *args, size_t nargs, bool *out) {
  *out = false;
  tpl_value a0 = nargs ? args[0] : tv_undef(NULL);
  int k = v.kind;
  if (!strcmp(name, "defined"))
    *out = k != TV_UNDEF;
  else if (!strcmp(name, "undefined"))
    *out = k == TV_UNDEF;
  else if (!strcmp(name, "none"))
    *out = k == TV_NONE;
  else if (!strcmp(name, "string"))
    *out = k == TV_STR;
  else if (!strcmp(name, "number"))
    *out = k == TV_INT || k == TV_FLOAT || k == TV_BOOL;
  else if (!strcmp(name, "integer"))
    *out = k == TV_INT;
  else if (!strcmp(name, "float"))
    *out = k == TV_FLOAT;
  else if (!strcmp(name, "mapping"))
    *out = k == TV_DICT;
  else if (!strcmp(name, "iterable"))
    *out = k == TV_STR || k == TV_LIST || k == TV_DICT || k == TV_UNDEF || k == TV_LOOP;
  else if (!strcmp(name, "sequence"))
    *out = k == TV_STR || k == TV_LIST || k == TV_DICT || k == TV_UNDEF;
  else if (!strcmp(name, "boolean"))
    *out = k == TV_BOOL;
  else if (!strcmp(name, "true"))
    *out = k == TV_BOOL && v.u.b;
  else if (!strcmp(name, "false"))
    *out = k == TV_BOOL && !v.u.b;
  else if (!strcmp(name, "callable"))
    *out = k == TV_FUNC || k == TV_LOOP;
  else if (!strcmp(name, "escaped"))
    *out = k == TV_STR && (v.flags & TVF_SAFE);
  else if (!strcmp(name, "lower") || !strcmp(name, "upper")) {
    tpl_value s;
    POOT_TRY(str_of(ctx, at, v, &s));
    bool any = false, ok = true;
    for (size_t i = 0; i < s.u.s.n;) {
      size_t len;
      uint32_t cp = poot__tpl_utf8_decode(s.u.s.p, s.u.s.n, i, &len);
      if (poot__tpl_is_cased(cp)) {
        any = true;
        if (name[0] == 'l' ? poot__tpl_lower_cp(cp) != cp : poot__tpl_upper_cp(cp) != cp)
          ok = false;
      }
      i += len;
    }
    *out = any && ok;
  } else if (!strcmp(name, "even") || !strcmp(name, "odd") || !strcmp(name, "divisibleby")) {
    tpl_value d = !strcmp(name, "divisibleby") ? a0 : tv_int(2), r;
    POOT_TRY(poot__tpl_binop(ctx, at, OP_MOD, v, d, &r));
    bool zero = !poot__tv_truthy(r);
    *out = !strcmp(name, "odd") ? !zero : zero;
  } else if (!strcmp(name, "sameas")) {
    if (k != a0.kind)
      *out = false;
    else if (k == TV_NONE || k == TV_UNDEF)
      *out = true;
    else if (k == TV_BOOL)
      *out = v.u.b == a0.u.b;
    else if (k == TV_INT)
      *out = v.u.i == a0.u.i && v.u.i >= -5 && v.u.i <= 256;
    else
      *out = memcmp(&v.u, &a0.u, sizeof v.u) == 0;
  } else if (!strcmp(name, "in")) {
    POOT_TRY(poot__tpl_contains(ctx, at, a0, v, out));
  } else {
    int op = -1;
    if (!strcmp(name, "eq") || !strcmp(name, "equalto") || !strcmp(name, "=="))
      op = OP_EQ;
    else if (!strcmp(name, "ne") || !strcmp(name, "!="))
      op = OP_NE;
    else if (!strcmp(name, "lt") || !strcmp(name, "lessthan") || !strcmp(name, "<"))
      op = OP_LT;
    else if (!strcmp(name, "le") || !strcmp(name, "<="))
      op = OP_LE;
    else if (!strcmp(name, "gt") || !strcmp(name, "greaterthan") || !strcmp(name, ">"))
      op = OP_GT;
    else if (!strcmp(name, "ge") || !strcmp(name, ">="))
      op = OP_GE;
    if (op < 0) return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "no test named '%s'", name);
    tpl_value r;
    POOT_TRY(poot__tpl_binop(ctx, at, op, v, a0, &r));
    *out = poot__tv_truthy(r);
  }
  return NULL;
}

/* ------------------------------------------------------------ sorting */

typedef struct sort_item {
  tpl_value key;
  tpl_value val;
} sort_item;

/* Stable merge sort with Python ordering; FORMAT when keys do not order. */
static poot_status sort_items(tpl_ctx *ctx, const tpl_node *at, sort_item *a, size_t n,
                              bool reverse) {
  if (n < 2) return NULL;
  sort_item *tmp = poot_malloc(n * sizeof *tmp);
  if (!tmp) return poot__tpl_oom();
  poot_status st = NULL;
  for (size_t width = 1; width < n && !st; width *= 2) {
    for (size_t lo = 0; lo < n && !st; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        bool lt = false, ordered = false;
        tpl_value x = a[j].key, y = a[i].key;
        st = reverse ? poot__tv_less(ctx, at, y, x, &ordered, &lt)
                     : poot__tv_less(ctx, at, x, y, &ordered, &lt);
        if (st) break;
        if (!ordered) {
          st = poot__tpl_err(ctx, at, POOT_FORMAT,
                             "'<' not supported between instances of '%s' and '%s'",
                             poot__tv_type_name(x), poot__tv_type_name(y));
          break;
        }
        tmp[k++] = lt ? a[j++] : a[i++];
      }
      while (i < mid) tmp[k++] = a[i++];
      while (j < hi) tmp[k++] = a[j++];
      memcpy(a + lo, tmp + lo, (hi - lo) * sizeof *a);
    }
  }
  poot_free(tmp);
  return st;
}

static poot_status fold_case(tpl_ctx *ctx, tpl_value v, bool case_sensitive, tpl_value *out) {
  *out = v;
  if (case_sensitive || v.kind != TV_STR) return NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot__tpl_case(&sb, v.u.s.p, v.u.s.n, 'l');
  return sb_done(ctx, &sb, out);
}

/* ----------------------------------------------------------------- filters */

/* A filter's row, declared here so that a filter reads its arguments
 * through it. */
typedef struct filter_row filter_row;

/* One filter call: where it is, the name it was called by (an alias keeps
 * its own), its row and its arguments, positional and keyword. */
typedef struct filter_call {
  tpl_ctx *ctx;
  const tpl_node *at;
  const char *name;
  const filter_row *row;
  const argv_ *a;
} filter_call;

/* A filter: `v | name(args)` into *out. */
typedef poot_status (*filter_fn)(const filter_call *c, tpl_value v, tpl_value *out);

/* Every filter poot implements, by the name a template calls it (jinja2's
 * aliases are rows of their own), with the parameters it binds in jinja2's
 * order: an argument is taken by its position in the list or by its name
 * (arg()); a name with a leading '*' is keyword-only. Arguments past the
 * list are ignored, as they were before the table. */
#define FILTER_MAX_PARAMS 4
struct filter_row {
  const char *name;
  filter_fn fn;
  const char *params[FILTER_MAX_PARAMS];
};

/* The argument bound to the row's parameter `name`, by position or by name. */
static bool param(const filter_call *c, const char *name, tpl_value *out) {
  for (size_t i = 0; i < FILTER_MAX_PARAMS && c->row->params[i]; i++) {
    const char *p = c->row->params[i];
    if (p[0] == '*' && !strcmp(p + 1, name)) return arg(c->a, SIZE_MAX, name, out);
    if (!strcmp(p, name)) return arg(c->a, i, name, out);
  }
  assert(!"a filter reads a parameter its row does not list");
  return false;
}

static bool param_bool(const filter_call *c, const char *name, bool dflt) {
  tpl_value v;
  return param(c, name, &v) ? poot__tv_truthy(v) : dflt;
}

static const char *const jinja_filters_unsupported[] = {
    "batch",     "center", "filesizeformat", "forceescape", "groupby",
    "pprint",    "random", "slice",          "striptags",   "truncate",
    "urlencode", "urlize", "wordwrap",       "xmlattr",     NULL};

static poot_status select_like(tpl_ctx *ctx, const tpl_node *at, tpl_value v, const argv_ *a,
                               bool by_attr, bool keep, tpl_value *out) {
  tpl_list *items;
  if (!poot__tv_truthy(v)) v = tv_undef(NULL);
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  size_t first_test = by_attr ? 1 : 0;
  tpl_value attr = tv_none();
  if (by_attr && !arg(a, 0, NULL, &attr))
    return poot__tpl_err(ctx, at, POOT_FORMAT, "missing parameter for attribute name");
  tpl_value test = tv_none();
  bool has_test = a->nargs > first_test;
  if (has_test) {
    test = a->args[first_test];
    POOT_TRY(need_str(ctx, at, test, "a test name"));
  }
  POOT_TRY(poot__tv_list_new(ctx, items->n, out));
  size_t k = 0;
  char tname[64] = "";
  if (has_test) snprintf(tname, sizeof tname, "%.*s", (int)test.u.s.n, test.u.s.p);
  if (has_test && !is_known_test(tname))
    return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "no test named '%s'", tname);
  for (size_t i = 0; i < items->n; i++) {
    tpl_value x = items->items[i], sub = x;
    if (by_attr) POOT_TRY(attr_path(ctx, at, x, attr, &sub));
    bool r;
    if (has_test) {
      POOT_TRY(poot__tpl_test(ctx, at, tname, sub, a->args + first_test + 1,
                              a->nargs - first_test - 1, &r));
    } else {
      r = poot__tv_truthy(sub);
    }
    if (r == keep) out->u.list->items[k++] = x;
  }
  out->u.list->n = k;
  out->flags = TVF_GEN;
  return NULL;
}

static poot_status do_indent(const filter_call *c, tpl_value s, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  tpl_value w;
  poot_strbuf ind;
  poot_strbuf_init(&ind);
  if (param(c, "width", &w)) {
    if (w.kind == TV_STR)
      poot_strbuf_append(&ind, w.u.s.p, w.u.s.n);
    else
      for (int64_t i = 0; i < (w.kind == TV_INT ? w.u.i : 4) && i < 4096; i++)
        poot_strbuf_putc(&ind, ' ');
  } else {
    poot_strbuf_puts(&ind, "    ");
  }
  bool first = param_bool(c, "first", false), blank = param_bool(c, "blank", false);
  /* s += "\n"; lines = s.splitlines() */
  poot_strbuf text;
  poot_strbuf_init(&text);
  poot_strbuf_append(&text, s.u.s.p, s.u.s.n);
  poot_strbuf_putc(&text, '\n');
  poot_strbuf rv;
  poot_strbuf_init(&rv);
  const char *p = text.data;
  size_t n = text.len, i = 0, line_no = 0;
  if (first) poot_strbuf_append(&rv, ind.data, ind.len);
  while (i < n) {
    size_t b = i, e, next;
    poot__tpl_line_at(p, n, i, &e, &next);
    if (line_no > 0) {
      poot_strbuf_putc(&rv, '\n');
      if (blank || e > b) poot_strbuf_append(&rv, ind.data, ind.len);
    }
    poot_strbuf_append(&rv, p + b, e - b);
    line_no++;
    i = next;
  }
  poot_strbuf_deinit(&ind);
  poot_strbuf_deinit(&text);
  return sb_done(ctx, &rv, out);
}

static poot_status do_tojson(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  /* transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False) */
  bool ensure_ascii = param_bool(c, "ensure_ascii", false);
  tpl_value indent_v = tv_none(), seps = tv_none();
  (void)param(c, "indent", &indent_v);
  (void)param(c, "separators", &seps);
  bool sort_keys = param_bool(c, "sort_keys", false);
  char indent_buf[256];
  const char *indent = NULL;
  if (indent_v.kind == TV_INT || indent_v.kind == TV_BOOL) {
    int64_t w = indent_v.kind == TV_INT ? indent_v.u.i : indent_v.u.b;
    if (w < 0) w = 0;
    if (w > 255) w = 255;
    memset(indent_buf, ' ', (size_t)w);
    indent_buf[w] = 0;
    indent = indent_buf;
  } else if (indent_v.kind == TV_STR) {
    snprintf(indent_buf, sizeof indent_buf, "%.*s", (int)indent_v.u.s.n, indent_v.u.s.p);
    indent = indent_buf;
  } else if (indent_v.kind != TV_NONE) {
    return poot__tpl_err(ctx, at, POOT_FORMAT, "tojson: bad indent of type %s",
                         poot__tv_type_name(indent_v));
  }
  char item_sep[64], key_sep[64];
  snprintf(item_sep, sizeof item_sep, "%s", indent ? "," : ", ");
  snprintf(key_sep, sizeof key_sep, ": ");
  if (seps.kind == TV_LIST && seps.u.list->n == 2 && seps.u.list->items[0].kind == TV_STR &&
      seps.u.list->items[1].kind == TV_STR) {
    snprintf(item_sep, sizeof item_sep, "%.*s", (int)seps.u.list->items[0].u.s.n,
             seps.u.list->items[0].u.s.p);
    snprintf(key_sep, sizeof key_sep, "%.*s", (int)seps.u.list->items[1].u.s.n,
             seps.u.list->items[1].u.s.p);
  } else if (seps.kind != TV_NONE) {
    return poot__tpl_err(ctx, at, POOT_FORMAT, "tojson: separators must be a pair of strings");
  }
  tpl_json_style style = {.ensure_ascii = ensure_ascii,
                          .sort_keys = sort_keys,
                          .indent = indent,
                          .item_sep = item_sep,
                          .key_sep = key_sep};
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot__tv_json(ctx, at, &sb, v, &style);
  if (st) {
    poot_strbuf_deinit(&sb);
    return st;
  }
  return sb_done(ctx, &sb, out);
}

static bool parse_py_int(const char *p, size_t n, int base, int64_t *out) {
  size_t b, e;
  poot__tpl_strip(p, n, NULL, 0, true, true, &b, &e);
  if (b == e) return false;
  char buf[80];
  size_t k = 0;
  bool prev_us = true;
  for (size_t i = b; i < e; i++) {
    char c = p[i];
    if (c == '_') {
      if (prev_us) return false;
      prev_us = true;
      continue;
    }
    prev_us = (c == '+' || c == '-');
    if (k + 1 >= sizeof buf) return false;
    buf[k++] = c;
  }
  if (prev_us) return false;
  buf[k] = 0;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(buf, &end, base);
  if (!end || *end || end == buf || errno) return false;
  *out = v;
  return true;
}

static bool parse_py_float(const char *p, size_t n, double *out) {
  size_t b, e;
  poot__tpl_strip(p, n, NULL, 0, true, true, &b, &e);
  if (b == e || e - b > 300) return false;
  char buf[320];
  memcpy(buf, p + b, e - b);
  buf[e - b] = 0;
  for (char *c = buf; *c; c++)
    if (*c == 'x' || *c == 'X' || *c == 'p' || *c == 'P') return false; /* no hex floats */
  char *end = NULL;
  double v = strtod(buf, &end);
  if (!end || *end || end == buf) return false;
  *out = v;
  return true;
}

poot_status poot__tpl_items_of(tpl_ctx *ctx, const tpl_node *at, tpl_value v, tpl_value *out) {
  if (v.kind == TV_UNDEF) return poot__tv_list_new(ctx, 0, out);
  if (v.kind != TV_DICT)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "can only get item pairs from a mapping");
  POOT_TRY(poot__tv_list_new(ctx, v.u.dict->n, out));
  for (size_t i = 0; i < v.u.dict->n; i++) {
    tpl_value t;
    POOT_TRY(poot__tv_list_new(ctx, 2, &t));
    t.flags = TVF_TUPLE;
    t.u.list->items[0] = v.u.dict->keys[i];
    t.u.list->items[1] = v.u.dict->vals[i];
    out->u.list->items[i] = t;
  }
  return NULL;
}

static poot_status len_of(tpl_ctx *ctx, const tpl_node *at, tpl_value v, int64_t *out) {
  *out = 0;
  switch (v.kind) {
    case TV_UNDEF:
      *out = 0;
      return NULL;
    case TV_STR:
      *out = (int64_t)poot__tpl_utf8_len(v.u.s.p, v.u.s.n);
      return NULL;
    case TV_LIST:
      if (v.flags & TVF_GEN) break;
      *out = (int64_t)v.u.list->n;
      return NULL;
    case TV_DICT:
      *out = (int64_t)v.u.dict->n;
      return NULL;
    case TV_LOOP:
      *out = (int64_t)v.u.loop->length;
      return NULL;
    default:
      break;
  }
  return poot__tpl_err(ctx, at, POOT_FORMAT, "object of type '%s' has no len()",
                       poot__tv_type_name(v));
}

static poot_status filter_default(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_value dflt = tv_str("", 0);
  (void)param(c, "default_value", &dflt);
  bool boolean = param_bool(c, "boolean", false);
  *out = (v.kind == TV_UNDEF || (boolean && !poot__tv_truthy(v))) ? dflt : v;
  return NULL;
}

static poot_status filter_length(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  int64_t n = 0;
  POOT_TRY(len_of(ctx, at, v, &n));
  *out = tv_int(n);
  return NULL;
}

static poot_status filter_tojson(const filter_call *c, tpl_value v, tpl_value *out) {
  return do_tojson(c, v, out);
}

static poot_status filter_safe(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  POOT_TRY(str_of(ctx, at, v, out));
  out->flags |= TVF_SAFE;
  return NULL;
}

static poot_status filter_escape(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value x;
  if (v.kind == TV_STR && (v.flags & TVF_SAFE)) {
    *out = v;
    return NULL;
  }
  POOT_TRY(str_of(ctx, at, v, &x));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot__tpl_html_escape(&sb, x.u.s.p, x.u.s.n);
  POOT_TRY(sb_done(ctx, &sb, out));
  out->flags |= TVF_SAFE;
  return NULL;
}

static poot_status filter_string(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  if (v.kind == TV_STR) {
    *out = v;
    return NULL;
  }
  return str_of(ctx, at, v, out);
}

static poot_status filter_trim(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  tpl_value chars = tv_none();
  (void)param(c, "chars", &chars);
  if (chars.kind != TV_NONE) POOT_TRY(need_str(ctx, at, chars, "trim chars"));
  size_t b, e;
  poot__tpl_strip(x.u.s.p, x.u.s.n, chars.kind == TV_STR ? chars.u.s.p : NULL,
                  chars.kind == TV_STR ? chars.u.s.n : 0, true, true, &b, &e);
  *out = tv_str(x.u.s.p + b, e - b);
  out->flags = x.flags & TVF_SAFE;
  return NULL;
}

static poot_status filter_case(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  const char *name = c->name;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (name[0] == 't') {
    /* jinja2's title: split on runs of [-\s({[<] and capitalize each piece. */
    const char *p = x.u.s.p;
    size_t n = x.u.s.n;
    bool at_start = true;
    for (size_t i = 0; i < n;) {
      size_t len;
      uint32_t cp = poot__tpl_utf8_decode(p, n, i, &len);
      bool delim =
          poot__tpl_py_isspace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
      if (delim) {
        poot_strbuf_append(&sb, p + i, len);
        at_start = true;
      } else {
        if (at_start && cp == 0xDF)
          poot_strbuf_puts(&sb, "SS");
        else
          poot__tpl_utf8_put(&sb, at_start ? poot__tpl_upper_cp(cp) : poot__tpl_lower_cp(cp));
        at_start = false;
      }
      i += len;
    }
  } else {
    poot__tpl_case(&sb, x.u.s.p, x.u.s.n, name[0] == 'u' ? 'u' : name[0] == 'l' ? 'l' : 'c');
  }
  return sb_done(ctx, &sb, out);
}

static poot_status filter_replace(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  tpl_value m_args[3];
  size_t m_n = 0;
  for (size_t i = 0; i < 3; i++) {
    static const char *const kn[] = {"old", "new", "count"};
    if (!param(c, kn[i], &m_args[i])) break;
    m_n++;
  }
  if (m_n == 3 && m_args[2].kind == TV_NONE) m_n = 2;
  for (size_t i = 0; i < m_n && i < 2; i++) POOT_TRY(str_of(ctx, at, m_args[i], &m_args[i]));
  return poot__tpl_call_method(ctx, at, x, "replace", m_args, m_n, NULL, NULL, 0, out);
}

static poot_status filter_join(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  tpl_value sep = tv_str("", 0), attr = tv_none();
  (void)param(c, "d", &sep);
  (void)param(c, "attribute", &attr);
  POOT_TRY(str_of(ctx, at, sep, &sep));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (size_t i = 0; i < items->n; i++) {
    tpl_value it = items->items[i];
    if (attr.kind != TV_NONE) {
      poot_status st = attr_path(ctx, at, it, attr, &it);
      if (st) {
        poot_strbuf_deinit(&sb);
        return st;
      }
    }
    if (i) poot_strbuf_append(&sb, sep.u.s.p, sep.u.s.n);
    poot_status st = poot__tv_str(ctx, at, &sb, it);
    if (st) {
      poot_strbuf_deinit(&sb);
      return st;
    }
  }
  return sb_done(ctx, &sb, out);
}

static poot_status filter_items(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  POOT_TRY(poot__tpl_items_of(ctx, at, v, out));
  out->flags = TVF_GEN;
  return NULL;
}

static poot_status filter_list(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  POOT_TRY(poot__tv_list_new(ctx, items->n, out));
  if (items->n) memcpy(out->u.list->items, items->items, items->n * sizeof(tpl_value));
  return NULL;
}

static poot_status filter_first(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  *out = items->n ? items->items[0] : tv_undef("first");
  return NULL;
}

static poot_status filter_last(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  *out = items->n ? items->items[items->n - 1] : tv_undef("last");
  return NULL;
}

static poot_status filter_reverse(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  if (v.kind == TV_STR) {
    tpl_list *items;
    POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    for (size_t i = items->n; i > 0; i--)
      poot_strbuf_append(&sb, items->items[i - 1].u.s.p, items->items[i - 1].u.s.n);
    return sb_done(ctx, &sb, out);
  }
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  POOT_TRY(poot__tv_list_new(ctx, items->n, out));
  for (size_t i = 0; i < items->n; i++) out->u.list->items[i] = items->items[items->n - 1 - i];
  out->flags = TVF_GEN;
  return NULL;
}

static poot_status filter_int(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_value dflt = tv_int(0), basev = tv_int(10);
  (void)param(c, "default", &dflt);
  (void)param(c, "base", &basev);
  int base = basev.kind == TV_INT ? (int)basev.u.i : 10;
  int64_t r;
  double f;
  if (v.kind == TV_INT)
    *out = v;
  else if (v.kind == TV_BOOL)
    *out = tv_int(v.u.b);
  else if (v.kind == TV_FLOAT && isfinite(v.u.f) && fabs(v.u.f) < 9.2e18)
    *out = tv_int((int64_t)v.u.f);
  else if (v.kind == TV_STR && parse_py_int(v.u.s.p, v.u.s.n, base, &r))
    *out = tv_int(r);
  else if (v.kind == TV_STR && parse_py_float(v.u.s.p, v.u.s.n, &f) && isfinite(f) &&
           fabs(f) < 9.2e18)
    *out = tv_int((int64_t)f);
  else
    *out = dflt;
  return NULL;
}

static poot_status filter_float(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_value dflt = tv_float(0.0);
  (void)param(c, "default", &dflt);
  double f;
  if (v.kind == TV_FLOAT)
    *out = v;
  else if (v.kind == TV_INT || v.kind == TV_BOOL)
    *out = tv_float(v.kind == TV_INT ? (double)v.u.i : v.u.b);
  else if (v.kind == TV_STR && parse_py_float(v.u.s.p, v.u.s.n, &f))
    *out = tv_float(f);
  else
    *out = dflt;
  return NULL;
}

static poot_status filter_abs(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  if (v.kind == TV_INT) {
    if (v.u.i == INT64_MIN) return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "integer overflow");
    *out = tv_int(v.u.i < 0 ? -v.u.i : v.u.i);
  } else if (v.kind == TV_FLOAT)
    *out = tv_float(fabs(v.u.f));
  else if (v.kind == TV_BOOL)
    *out = tv_int(v.u.b);
  else
    return poot__tpl_err(ctx, at, POOT_FORMAT, "bad operand type for abs(): '%s'",
                         poot__tv_type_name(v));
  return NULL;
}

static poot_status filter_round(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value prec_v = tv_int(0), method = tv_str("common", 6);
  (void)param(c, "precision", &prec_v);
  (void)param(c, "method", &method);
  if (!tv_is_num(v))
    return poot__tpl_err(ctx, at, POOT_FORMAT, "round() needs a number, not %s",
                         poot__tv_type_name(v));
  int64_t prec = prec_v.kind == TV_INT ? prec_v.u.i : 0;
  if (prec < -20 || prec > 20)
    return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "round precision out of range");
  bool common = method.kind == TV_STR && method.u.s.n == 6 && !memcmp(method.u.s.p, "common", 6);
  bool ceil_m = method.kind == TV_STR && method.u.s.n == 4 && !memcmp(method.u.s.p, "ceil", 4);
  bool floor_m = method.kind == TV_STR && method.u.s.n == 5 && !memcmp(method.u.s.p, "floor", 5);
  if (!common && !ceil_m && !floor_m)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "method must be common, ceil or floor");
  if (common && v.kind != TV_FLOAT) {
    *out = tv_int(v.kind == TV_INT ? v.u.i : v.u.b);
    if (prec >= 0) return NULL;
  }
  double f = v.kind == TV_FLOAT ? v.u.f : v.kind == TV_INT ? (double)v.u.i : v.u.b;
  if (common) {
    if (prec >= 0 && isfinite(f)) {
      char buf[400];
      snprintf(buf, sizeof buf, "%.*f", (int)prec, f);
      *out = tv_float(strtod(buf, NULL));
    } else {
      double m = pow(10.0, (double)-prec);
      double r = nearbyint(f / m) * m;
      *out = v.kind == TV_FLOAT ? tv_float(r) : tv_int((int64_t)r);
    }
  } else {
    double m = pow(10.0, (double)prec);
    *out = tv_float((ceil_m ? ceil(f * m) : floor(f * m)) / m);
  }
  return NULL;
}

static poot_status filter_indent(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  return do_indent(c, x, out);
}

static poot_status filter_map(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  const argv_ *a = c->a;
  const tpl_value *args = a->args;
  size_t nargs = a->nargs;
  const char *const *kwnames = a->kwn;
  const tpl_value *kwvals = a->kwv;
  size_t nkw = a->nkw;
  tpl_list *items;
  if (!poot__tv_truthy(v)) v = tv_undef(NULL);
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  tpl_value attr, dflt = tv_undef(NULL);
  bool has_default = param(c, "default", &dflt);
  POOT_TRY(poot__tv_list_new(ctx, items->n, out));
  out->flags = TVF_GEN;
  if (param(c, "attribute", &attr)) {
    for (size_t i = 0; i < items->n; i++) {
      tpl_value r;
      POOT_TRY(attr_path(ctx, at, items->items[i], attr, &r));
      if (r.kind == TV_UNDEF && has_default) r = dflt;
      out->u.list->items[i] = r;
    }
    return NULL;
  }
  if (nargs < 1 || args[0].kind != TV_STR)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "map requires a filter argument");
  char fname[64];
  snprintf(fname, sizeof fname, "%.*s", (int)args[0].u.s.n, args[0].u.s.p);
  for (size_t i = 0; i < items->n; i++)
    POOT_TRY(poot__tpl_filter(ctx, at, fname, items->items[i], args + 1, nargs - 1, kwnames, kwvals,
                              nkw, &out->u.list->items[i]));
  return NULL;
}

static poot_status filter_select(const filter_call *c, tpl_value v, tpl_value *out) {
  return select_like(c->ctx, c->at, v, c->a, false, true, out);
}

static poot_status filter_reject(const filter_call *c, tpl_value v, tpl_value *out) {
  return select_like(c->ctx, c->at, v, c->a, false, false, out);
}

static poot_status filter_selectattr(const filter_call *c, tpl_value v, tpl_value *out) {
  return select_like(c->ctx, c->at, v, c->a, true, true, out);
}

static poot_status filter_rejectattr(const filter_call *c, tpl_value v, tpl_value *out) {
  return select_like(c->ctx, c->at, v, c->a, true, false, out);
}

static poot_status filter_attr(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value nm;
  if (!param(c, "name", &nm) || nm.kind != TV_STR)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "attr needs a name");
  char *s = poot_arena_strndup(&ctx->arena, nm.u.s.p, nm.u.s.n);
  if (!s) return poot__tpl_oom();
  return poot__tpl_getattr(ctx, at, v, s, out);
}

static poot_status filter_dictsort(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  bool cs = param_bool(c, "case_sensitive", false);
  tpl_value by = tv_str("key", 3);
  (void)param(c, "by", &by);
  bool reverse = param_bool(c, "reverse", false);
  if (v.kind != TV_DICT)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "dictsort needs a mapping, not %s",
                         poot__tv_type_name(v));
  bool by_value = by.kind == TV_STR && by.u.s.n == 5 && !memcmp(by.u.s.p, "value", 5);
  tpl_value pairs;
  POOT_TRY(poot__tpl_items_of(ctx, at, v, &pairs));
  size_t n = pairs.u.list->n;
  sort_item *si = POOT_ARENA_NEW_ARRAY(&ctx->arena, sort_item, n + 1);
  if (!si) return poot__tpl_oom();
  for (size_t i = 0; i < n; i++) {
    tpl_value pr = pairs.u.list->items[i];
    POOT_TRY(fold_case(ctx, pr.u.list->items[by_value ? 1 : 0], cs, &si[i].key));
    si[i].val = pr;
  }
  POOT_TRY(poot__tpl_charge(ctx, at, (uint64_t)n * 20));
  POOT_TRY(sort_items(ctx, at, si, n, reverse));
  for (size_t i = 0; i < n; i++) pairs.u.list->items[i] = si[i].val;
  *out = pairs;
  return NULL;
}

/* The items of `v` with their sort keys: the `attribute` path of each item
 * if given, case-folded unless `case_sensitive`. jinja2's sort takes
 * (reverse, case_sensitive, attribute), unique, min and max
 * (case_sensitive, attribute): `first` is the position of case_sensitive. */
static poot_status keyed_items(const filter_call *c, tpl_value v, sort_item **out_si,
                               size_t *out_n) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  *out_si = NULL;
  *out_n = 0;
  bool cs = param_bool(c, "case_sensitive", false);
  tpl_value attr = tv_none();
  (void)param(c, "attribute", &attr);
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  size_t n = items->n;
  sort_item *si = POOT_ARENA_NEW_ARRAY(&ctx->arena, sort_item, n + 1);
  if (!si) return poot__tpl_oom();
  for (size_t i = 0; i < n; i++) {
    tpl_value key = items->items[i];
    if (attr.kind != TV_NONE) POOT_TRY(attr_path(ctx, at, key, attr, &key));
    POOT_TRY(fold_case(ctx, key, cs, &si[i].key));
    si[i].val = items->items[i];
  }
  *out_si = si;
  *out_n = n;
  return NULL;
}

static poot_status filter_sort(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  bool reverse = param_bool(c, "reverse", false);
  sort_item *si;
  size_t n;
  POOT_TRY(keyed_items(c, v, &si, &n));
  POOT_TRY(poot__tpl_charge(ctx, at, (uint64_t)n * 20));
  POOT_TRY(sort_items(ctx, at, si, n, reverse));
  POOT_TRY(poot__tv_list_new(ctx, n, out));
  for (size_t i = 0; i < n; i++) out->u.list->items[i] = si[i].val;
  return NULL;
}

static poot_status filter_unique(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  sort_item *si;
  size_t n;
  POOT_TRY(keyed_items(c, v, &si, &n));
  POOT_TRY(poot__tv_list_new(ctx, n, out));
  size_t k = 0;
  /* A set of the keys seen, as Python's unique does (O(n)). */
  tpl_value seen;
  POOT_TRY(poot__tv_dict_new(ctx, 0, &seen));
  for (size_t i = 0; i < n; i++) {
    tpl_value key = si[i].key;
    if ((key.kind == TV_LIST && !(key.flags & TVF_TUPLE)) || key.kind == TV_DICT ||
        key.kind == TV_NS || key.kind == TV_UNDEF)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "unhashable type: '%s'", poot__tv_type_name(key));
    long found;
    POOT_TRY(poot__tv_dict_find(ctx, at, seen.u.dict, key, &found));
    if (found >= 0) continue;
    POOT_TRY(poot__tv_dict_set(ctx, seen.u.dict, key, tv_none()));
    out->u.list->items[k++] = si[i].val;
  }
  out->u.list->n = k;
  out->flags = TVF_GEN;
  return NULL;
}

/* min and max (c->name says which): the first item whose key no other
 * item's key beats. */
static poot_status filter_min_max(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  const char *name = c->name;
  sort_item *si;
  size_t n;
  POOT_TRY(keyed_items(c, v, &si, &n));
  if (!n) {
    *out = tv_undef(name);
    return NULL;
  }
  size_t best = 0;
  for (size_t i = 1; i < n; i++) {
    bool lt_ib, lt_bi, ordered_ib, ordered_bi;
    POOT_TRY(poot__tv_less(ctx, at, si[i].key, si[best].key, &ordered_ib, &lt_ib));
    POOT_TRY(poot__tv_less(ctx, at, si[best].key, si[i].key, &ordered_bi, &lt_bi));
    if (!ordered_ib || !ordered_bi)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "values do not order");
    if (name[1] == 'i' ? lt_ib : lt_bi) best = i;
  }
  *out = si[best].val;
  return NULL;
}

static poot_status filter_sum(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value attr = tv_none(), acc = tv_int(0);
  (void)param(c, "attribute", &attr);
  (void)param(c, "start", &acc);
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, v, &items));
  for (size_t i = 0; i < items->n; i++) {
    tpl_value it = items->items[i];
    if (attr.kind != TV_NONE) POOT_TRY(attr_path(ctx, at, it, attr, &it));
    POOT_TRY(poot__tpl_binop(ctx, at, OP_ADD, acc, it, &acc));
  }
  *out = acc;
  return NULL;
}

static poot_status filter_format(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  const argv_ *a = c->a;
  const tpl_value *args = a->args;
  size_t nargs = a->nargs;
  size_t nkw = a->nkw;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  tpl_value t;
  if (nkw) {
    return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "format filter with keyword arguments");
  }
  POOT_TRY(poot__tv_list_new(ctx, nargs, &t));
  t.flags = TVF_TUPLE;
  if (nargs) memcpy(t.u.list->items, args, nargs * sizeof(tpl_value));
  return poot__tpl_percent_format(ctx, at, x, t, out);
}

static poot_status filter_wordcount(const filter_call *c, tpl_value v, tpl_value *out) {
  tpl_ctx *ctx = c->ctx;
  const tpl_node *at = c->at;
  tpl_value x;
  POOT_TRY(str_of(ctx, at, v, &x));
  int64_t words = 0;
  bool in = false;
  for (size_t i = 0; i < x.u.s.n;) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(x.u.s.p, x.u.s.n, i, &len);
    bool w = cp >= 0x80 || (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
             (cp >= 'A' && cp <= 'Z') || cp == '_';
    if (w && !in) words++;
    in = w;
    i += len;
  }
  *out = tv_int(words);
  return NULL;
}

static const filter_row filters[] = {
    {"default", filter_default, {"default_value", "boolean"}},
    {"d", filter_default, {"default_value", "boolean"}},
    {"length", filter_length, {NULL}},
    {"count", filter_length, {NULL}},
    {"tojson", filter_tojson, {"ensure_ascii", "indent", "separators", "sort_keys"}},
    {"safe", filter_safe, {NULL}},
    {"escape", filter_escape, {NULL}},
    {"e", filter_escape, {NULL}},
    {"string", filter_string, {NULL}},
    {"trim", filter_trim, {"chars"}},
    {"upper", filter_case, {NULL}},
    {"lower", filter_case, {NULL}},
    {"capitalize", filter_case, {NULL}},
    {"title", filter_case, {NULL}},
    {"replace", filter_replace, {"old", "new", "count"}},
    {"join", filter_join, {"d", "attribute"}},
    {"items", filter_items, {NULL}},
    {"list", filter_list, {NULL}},
    {"first", filter_first, {NULL}},
    {"last", filter_last, {NULL}},
    {"reverse", filter_reverse, {NULL}},
    {"int", filter_int, {"default", "base"}},
    {"float", filter_float, {"default"}},
    {"abs", filter_abs, {NULL}},
    {"round", filter_round, {"precision", "method"}},
    {"indent", filter_indent, {"width", "first", "blank"}},
    {"map", filter_map, {"*attribute", "*default"}},
    {"select", filter_select, {NULL}},
    {"reject", filter_reject, {NULL}},
    {"selectattr", filter_selectattr, {NULL}},
    {"rejectattr", filter_rejectattr, {NULL}},
    {"attr", filter_attr, {"name"}},
    {"dictsort", filter_dictsort, {"case_sensitive", "by", "reverse"}},
    {"sort", filter_sort, {"reverse", "case_sensitive", "attribute"}},
    {"unique", filter_unique, {"case_sensitive", "attribute"}},
    {"min", filter_min_max, {"case_sensitive", "attribute"}},
    {"max", filter_min_max, {"case_sensitive", "attribute"}},
    {"sum", filter_sum, {"attribute", "start"}},
    {"format", filter_format, {NULL}},
    {"wordcount", filter_wordcount, {NULL}},
};

poot_status poot__tpl_filter(tpl_ctx *ctx, const tpl_node *at, const char *name, tpl_value v,
                             const tpl_value *args, size_t nargs, const char *const *kwnames,
                             const tpl_value *kwvals, size_t nkw, tpl_value *out) {
  argv_ A = {args, nargs, kwnames, kwvals, nkw};
  *out = tv_undef(NULL);
  for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
    if (strcmp(filters[i].name, name)) continue;
    const filter_call c = {ctx, at, name, &filters[i], &A};
    return filters[i].fn(&c, v, out);
  }
  for (size_t i = 0; jinja_filters_unsupported[i]; i++)
    if (!strcmp(jinja_filters_unsupported[i], name))
      return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "the '%s' filter is not supported", name);
  return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "no filter named '%s'", name);
}

/* ----------------------------------------------------------------- globals */

static const char *const builtins[] = {"range",           "namespace",    "dict",
                                       "raise_exception", "strftime_now", "lipsum",
                                       "cycler",          "joiner",       NULL};

bool poot__tpl_builtin_exists(const char *name) {
  for (size_t i = 0; builtins[i]; i++)
    if (!strcmp(builtins[i], name)) return true;
  return false;
}

poot_status poot__tpl_call_builtin(tpl_ctx *ctx, const tpl_node *at, const char *name,
                                   const tpl_value *args, size_t nargs, const char *const *kwnames,
                                   const tpl_value *kwvals, size_t nkw, tpl_value *out) {
  *out = tv_none();
  if (!strcmp(name, "raise_exception")) {
    tpl_value msg = nargs ? args[0] : tv_str("", 0);
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_status st = poot__tv_str(ctx, at, &sb, msg);
    if (!st) st = poot_strbuf_status(&sb);
    if (st) {
      poot_strbuf_deinit(&sb);
      return st;
    }
    poot_free(ctx->raised);
    ctx->raised = poot_strbuf_take(&sb);
    return poot_status_make(POOT_INVALID_ARGUMENT, "template raised: %s",
                            ctx->raised ? ctx->raised : "");
  }
  if (!strcmp(name, "range")) {
    int64_t v[3] = {0, 0, 1};
    for (size_t i = 0; i < nargs; i++) {
      tpl_value x = args[i];
      if (x.kind == TV_BOOL) x = tv_int(x.u.b);
      if (x.kind != TV_INT)
        return poot__tpl_err(ctx, at, POOT_FORMAT,
                             "'%s' object cannot be interpreted as an integer",
                             poot__tv_type_name(args[i]));
      if (nargs == 1)
        v[1] = x.u.i;
      else
        v[i] = x.u.i;
    }
    if (nargs < 1 || nargs > 3 || nkw)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "range expected 1 to 3 integer arguments");
    if (v[2] == 0) return poot__tpl_err(ctx, at, POOT_FORMAT, "range() arg 3 must not be zero");
    uint64_t count = 0; /* computed without overflow for any bounds */
    if (v[2] > 0 && v[1] > v[0]) count = ((uint64_t)v[1] - (uint64_t)v[0] - 1) / (uint64_t)v[2] + 1;
    if (v[2] < 0 && v[1] < v[0])
      count = ((uint64_t)v[0] - (uint64_t)v[1] - 1) / ((uint64_t)(-(v[2] + 1)) + 1) + 1;
    if (count > 100000)
      return poot__tpl_err(
          ctx, at, POOT_FORMAT,
          "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    POOT_TRY(poot__tpl_charge(ctx, at, count));
    POOT_TRY(poot__tv_list_new(ctx, (size_t)count, out));
    for (uint64_t i = 0; i < count; i++)
      out->u.list->items[i] = tv_int((int64_t)((uint64_t)v[0] + i * (uint64_t)v[2]));
    return NULL;
  }
  if (!strcmp(name, "namespace") || !strcmp(name, "dict")) {
    POOT_TRY(poot__tv_dict_new(ctx, nkw + 4, out));
    if (nargs > 1)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "%s takes at most one positional argument", name);
    if (nargs == 1) {
      if (args[0].kind == TV_DICT) {
        for (size_t i = 0; i < args[0].u.dict->n; i++)
          POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, args[0].u.dict->keys[i],
                                     args[0].u.dict->vals[i]));
      } else if (args[0].kind == TV_LIST) {
        for (size_t i = 0; i < args[0].u.list->n; i++) {
          tpl_value pr = args[0].u.list->items[i];
          if (pr.kind != TV_LIST || pr.u.list->n != 2)
            return poot__tpl_err(ctx, at, POOT_FORMAT, "%s: sequence elements must be pairs", name);
          POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, pr.u.list->items[0], pr.u.list->items[1]));
        }
      } else {
        return poot__tpl_err(ctx, at, POOT_FORMAT, "%s: cannot convert a %s", name,
                             poot__tv_type_name(args[0]));
      }
    }
    for (size_t i = 0; i < nkw; i++) {
      tpl_value k;
      POOT_TRY(poot__tv_strdup(ctx, kwnames[i], strlen(kwnames[i]), &k));
      POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, k, kwvals[i]));
    }
    if (name[0] == 'n') out->kind = TV_NS;
    return NULL;
  }
  if (!strcmp(name, "strftime_now")) {
    if (nargs < 1 || args[0].kind != TV_STR)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "strftime_now takes a format string");
    char fmt[256];
    if (args[0].u.s.n >= sizeof fmt)
      return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "strftime_now format too long");
    memcpy(fmt, args[0].u.s.p, args[0].u.s.n);
    fmt[args[0].u.s.n] = 0;
    time_t t = ctx->params.now_epoch_s >= 0 ? (time_t)ctx->params.now_epoch_s : time(NULL);
    struct tm tmv;
    if (ctx->params.now_epoch_s >= 0)
      gmtime_r(&t, &tmv);
    else
      localtime_r(&t, &tmv);
    char buf[1024];
    size_t len = fmt[0] ? strftime(buf, sizeof buf, fmt, &tmv) : 0;
    return poot__tv_strdup(ctx, buf, len, out);
  }
  return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "the global function '%s' is not supported",
                       name);
}
