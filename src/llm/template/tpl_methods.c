/* tpl_methods.c — the str, dict, list and loop methods the sandbox allows
 * (Python semantics: split, strip, startswith, replace, format, get, items,
 * ...); mutating methods are blocked by the sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_impl.h"
#include "tpl_ops.h"

/* ----------------------------------------------------------------- methods */

static const char *const str_methods[] = {
    "strip",        "lstrip",     "rstrip",     "split",     "rsplit",       "splitlines",
    "startswith",   "endswith",   "replace",    "upper",     "lower",        "title",
    "capitalize",   "format",     "find",       "rfind",     "index",        "count",
    "join",         "isdigit",    "isalpha",    "isalnum",   "isspace",      "islower",
    "isupper",      "isnumeric",  "isdecimal",  "swapcase",  "casefold",     "zfill",
    "ljust",        "rjust",      "center",     "partition", "rpartition",   "removeprefix",
    "removesuffix", "encode",     "expandtabs", "istitle",   "isidentifier", "isprintable",
    "isascii",      "format_map", "maketrans",  "translate", "rindex",       NULL};
static const char *const str_methods_impl[] = {
    "strip",    "lstrip",  "rstrip",  "split",        "rsplit",       "splitlines", "startswith",
    "endswith", "replace", "upper",   "lower",        "title",        "capitalize", "format",
    "find",     "rfind",   "count",   "join",         "isdigit",      "isalpha",    "isalnum",
    "isspace",  "islower", "isupper", "removeprefix", "removesuffix", "casefold",   NULL};
static const char *const dict_methods[] = {"items", "keys", "values", "get", "copy", NULL};
static const char *const dict_unsafe[] = {"pop",   "popitem",  "setdefault", "update",
                                          "clear", "fromkeys", NULL};
static const char *const list_methods[] = {"index", "count", "copy", NULL};
static const char *const list_unsafe[] = {"append", "pop",     "insert", "remove", "extend",
                                          "sort",   "reverse", "clear",  NULL};

static bool in_list(const char *const *l, const char *name) {
  for (size_t i = 0; l[i]; i++)
    if (!strcmp(l[i], name)) return true;
  return false;
}

bool poot__tpl_method_exists(tpl_value self, const char *name, bool *out_safe) {
  *out_safe = true;
  if (self.kind == TV_STR) return in_list(str_methods, name);
  if (self.kind == TV_DICT) {
    if (in_list(dict_unsafe, name)) {
      *out_safe = false;
      return true;
    }
    return in_list(dict_methods, name);
  }
  if (self.kind == TV_LIST) {
    if (in_list(list_unsafe, name)) {
      *out_safe = false;
      return true;
    }
    return in_list(list_methods, name);
  }
  return false;
}

static poot_status split_impl(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const argv_ *a,
                              bool from_right, tpl_value *out) {
  tpl_value sep = tv_none(), maxv = tv_int(-1);
  (void)arg(a, 0, "sep", &sep);
  (void)arg(a, 1, "maxsplit", &maxv);
  int64_t maxsplit = maxv.kind == TV_INT ? maxv.u.i : -1;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  poot_vec parts;
  poot_vec_init(&parts, sizeof(tpl_value));
  poot_status st = NULL;
  if (sep.kind == TV_NONE) {
    /* Whitespace split: runs of whitespace, no empty strings. */
    size_t i = 0, e = n;
    int64_t splits = 0;
    if (!from_right) {
      while (i < n) {
        size_t len;
        while (i < n && poot__tpl_py_isspace(poot__tpl_utf8_decode(p, n, i, &len))) i += len;
        if (i >= n) break;
        if (maxsplit >= 0 && splits >= maxsplit) {
          size_t b2, e2;
          poot__tpl_strip(p + i, n - i, NULL, 0, false, true, &b2, &e2);
          tpl_value t = tv_str(p + i, e2);
          if (poot_vec_push(&parts, &t)) st = poot__tpl_oom();
          break;
        }
        size_t b = i;
        while (i < n && !poot__tpl_py_isspace(poot__tpl_utf8_decode(p, n, i, &len))) i += len;
        tpl_value t = tv_str(p + b, i - b);
        if (poot_vec_push(&parts, &t)) st = poot__tpl_oom();
        splits++;
      }
    } else {
      /* rsplit(None): scan from the right. */
      tpl_value tmp[1024];
      size_t nt = 0;
      while (e > 0 && nt < 1024) {
        size_t b, ee;
        poot__tpl_strip(p, e, NULL, 0, false, true, &b, &ee);
        e = ee;
        if (e == 0) break;
        if (maxsplit >= 0 && (int64_t)nt >= maxsplit) {
          size_t b2, e2;
          poot__tpl_strip(p, e, NULL, 0, true, false, &b2, &e2);
          tmp[nt++] = tv_str(p + b2, e - b2);
          break;
        }
        size_t k = e;
        while (k > 0) {
          size_t j = k - 1;
          while (j > 0 && ((unsigned char)p[j] & 0xC0) == 0x80) j--;
          size_t len;
          if (poot__tpl_py_isspace(poot__tpl_utf8_decode(p, n, j, &len))) break;
          k = j;
        }
        tmp[nt++] = tv_str(p + k, e - k);
        e = k;
      }
      for (size_t i2 = nt; i2 > 0; i2--)
        if (poot_vec_push(&parts, &tmp[i2 - 1])) st = poot__tpl_oom();
    }
  } else {
    if (sep.kind != TV_STR) {
      poot_vec_deinit(&parts);
      return need_str(ctx, at, sep, "the separator");
    }
    if (sep.u.s.n == 0) {
      poot_vec_deinit(&parts);
      return poot__tpl_err(ctx, at, POOT_FORMAT, "empty separator");
    }
    const char *q = sep.u.s.p;
    size_t m = sep.u.s.n;
    if (!from_right) {
      size_t b = 0;
      int64_t splits = 0;
      for (;;) {
        const char *hit = q && (maxsplit < 0 || splits < maxsplit) && n - b >= m
                              ? memmem(p + b, n - b, q, m)
                              : NULL;
        if (!hit) {
          tpl_value t = tv_str(p + b, n - b);
          if (poot_vec_push(&parts, &t)) st = poot__tpl_oom();
          break;
        }
        size_t h = (size_t)(hit - p);
        tpl_value t = tv_str(p + b, h - b);
        if (poot_vec_push(&parts, &t)) st = poot__tpl_oom();
        b = h + m;
        splits++;
      }
    } else {
      poot_vec rev;
      poot_vec_init(&rev, sizeof(tpl_value));
      size_t e = n;
      int64_t splits = 0;
      for (;;) {
        size_t h = SIZE_MAX;
        if ((maxsplit < 0 || splits < maxsplit) && e >= m) {
          for (size_t k = e - m + 1; k > 0; k--) {
            if (memcmp(p + k - 1, q, m) == 0) {
              h = k - 1;
              break;
            }
          }
        }
        if (h == SIZE_MAX) {
          tpl_value t = tv_str(p, e);
          if (poot_vec_push(&rev, &t)) st = poot__tpl_oom();
          break;
        }
        tpl_value t = tv_str(p + h + m, e - h - m);
        if (poot_vec_push(&rev, &t)) st = poot__tpl_oom();
        e = h;
        splits++;
      }
      for (size_t i = rev.len; i > 0 && !st; i--)
        if (poot_vec_push(&parts, &POOT_VEC_AT(&rev, tpl_value, i - 1))) st = poot__tpl_oom();
      poot_vec_deinit(&rev);
    }
  }
  if (!st) st = poot__tv_list_new(ctx, parts.len, out);
  if (!st && parts.len) memcpy(out->u.list->items, parts.data, parts.len * sizeof(tpl_value));
  poot_vec_deinit(&parts);
  return st;
}

static bool affix_match(tpl_value s, tpl_value affix, bool end) {
  if (affix.kind != TV_STR || affix.u.s.n > s.u.s.n) return false;
  const char *p = end ? s.u.s.p + s.u.s.n - affix.u.s.n : s.u.s.p;
  return memcmp(p, affix.u.s.p, affix.u.s.n) == 0;
}

/* A str method: `s.name(args)` into *out. */
typedef poot_status (*str_method_fn)(tpl_ctx *ctx, const tpl_node *at, tpl_value s,
                                     const char *name, const argv_ *a, tpl_value *out);

static poot_status str_strip(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                             const argv_ *a, tpl_value *out) {
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  tpl_value chars = tv_none();
  (void)arg(a, 0, "chars", &chars);
  if (chars.kind != TV_NONE) POOT_TRY(need_str(ctx, at, chars, "strip arg"));
  size_t b, e;
  poot__tpl_strip(p, n, chars.kind == TV_STR ? chars.u.s.p : NULL,
                  chars.kind == TV_STR ? chars.u.s.n : 0, name[0] != 'r', name[0] != 'l', &b, &e);
  *out = tv_str(p + b, e - b);
  return NULL;
}

static poot_status str_split(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                             const argv_ *a, tpl_value *out) {
  (void)name;
  return split_impl(ctx, at, s, a, false, out);
}

static poot_status str_rsplit(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                              const argv_ *a, tpl_value *out) {
  (void)name;
  return split_impl(ctx, at, s, a, true, out);
}

void poot__tpl_line_at(const char *p, size_t n, size_t i, size_t *out_end, size_t *out_next) {
  size_t e = i;
  while (e < n) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(p, n, e, &len);
    if (cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c || (cp >= 0x1c && cp <= 0x1e) ||
        cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
      size_t next = e + len;
      if (cp == '\r' && next < n && p[next] == '\n') next++;
      *out_end = e;
      *out_next = next;
      return;
    }
    e += len;
  }
  *out_end = n;
  *out_next = n;
}

static poot_status str_splitlines(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                                  const argv_ *a, tpl_value *out) {
  (void)at;
  (void)s;
  (void)name;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  bool keep = arg_bool(a, 0, "keepends", false);
  poot_vec parts;
  poot_vec_init(&parts, sizeof(tpl_value));
  size_t i = 0;
  while (i < n) {
    size_t b = i, e, next;
    poot__tpl_line_at(p, n, i, &e, &next);
    tpl_value t = tv_str(p + b, (keep ? next : e) - b);
    if (poot_vec_push(&parts, &t)) {
      poot_vec_deinit(&parts);
      return poot__tpl_oom();
    }
    i = next;
  }
  poot_status st = poot__tv_list_new(ctx, parts.len, out);
  if (!st && parts.len) memcpy(out->u.list->items, parts.data, parts.len * sizeof(tpl_value));
  poot_vec_deinit(&parts);
  return st;
}

static poot_status str_affix_test(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                                  const argv_ *a, tpl_value *out) {
  tpl_value affix;
  if (!arg(a, 0, NULL, &affix))
    return poot__tpl_err(ctx, at, POOT_FORMAT, "%s takes an argument", name);
  if (a->nargs > 1) return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "%s with start/end", name);
  bool end = name[0] == 'e', r = false;
  if (affix.kind == TV_LIST && (affix.flags & TVF_TUPLE)) {
    for (size_t i = 0; i < affix.u.list->n && !r; i++) {
      if (affix.u.list->items[i].kind != TV_STR)
        return need_str(ctx, at, affix.u.list->items[i], "tuple for startswith");
      r = affix_match(s, affix.u.list->items[i], end);
    }
  } else {
    if (affix.kind != TV_STR)
      return poot__tpl_err(ctx, at, POOT_FORMAT,
                           "%s first arg must be str or a tuple of str, not %s", name,
                           poot__tv_type_name(affix));
    r = affix_match(s, affix, end);
  }
  *out = tv_bool(r);
  return NULL;
}

static poot_status str_remove_affix(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                                    const argv_ *a, tpl_value *out) {
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  tpl_value affix;
  if (!arg(a, 0, NULL, &affix) || affix.kind != TV_STR)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "%s takes a string", name);
  bool end = name[6] == 's';
  *out = s;
  if (affix_match(s, affix, end)) *out = tv_str(end ? p : p + affix.u.s.n, n - affix.u.s.n);
  return NULL;
}

static poot_status str_replace(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                               const argv_ *a, tpl_value *out) {
  (void)name;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  tpl_value old, nw, cnt = tv_int(-1);
  if (!arg(a, 0, "old", &old) || !arg(a, 1, "new", &nw))
    return poot__tpl_err(ctx, at, POOT_FORMAT, "replace takes two arguments");
  (void)arg(a, 2, "count", &cnt);
  POOT_TRY(need_str(ctx, at, old, "replace arg 1"));
  POOT_TRY(need_str(ctx, at, nw, "replace arg 2"));
  int64_t count = cnt.kind == TV_INT ? cnt.u.i : -1;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  int64_t done = 0;
  if (old.u.s.n == 0) {
    size_t i = 0;
    for (;;) {
      if (count < 0 || done < count) {
        poot_strbuf_append(&sb, nw.u.s.p, nw.u.s.n);
        done++;
      } else {
        poot_strbuf_append(&sb, p + i, n - i);
        break;
      }
      if (i >= n) break;
      size_t e = poot__tpl_utf8_next(p, n, i);
      poot_strbuf_append(&sb, p + i, e - i);
      i = e;
      if (sb.len > ctx->params.max_output) break;
    }
  } else {
    size_t i = 0;
    while (i <= n) {
      const char *hit = (count < 0 || done < count) && n - i >= old.u.s.n
                            ? memmem(p + i, n - i, old.u.s.p, old.u.s.n)
                            : NULL;
      if (!hit) {
        poot_strbuf_append(&sb, p + i, n - i);
        break;
      }
      size_t h = (size_t)(hit - p);
      poot_strbuf_append(&sb, p + i, h - i);
      poot_strbuf_append(&sb, nw.u.s.p, nw.u.s.n);
      i = h + old.u.s.n;
      done++;
      if (sb.len > ctx->params.max_output) break;
    }
  }
  if (sb.len > ctx->params.max_output) {
    poot_strbuf_deinit(&sb);
    ctx->over = TPL_OVER_OUTPUT;
    return poot__tpl_over(ctx, at);
  }
  return sb_done(ctx, &sb, out);
}

static poot_status str_case(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                            const argv_ *a, tpl_value *out) {
  (void)a;
  (void)at;
  (void)s;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  char mode = name[0] == 'u'                     ? 'u'
              : name[0] == 't'                   ? 't'
              : name[1] == 'a' && name[2] == 'p' ? 'c'
                                                 : 'l';
  poot__tpl_case(&sb, p, n, mode);
  return sb_done(ctx, &sb, out);
}

static poot_status str_format(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                              const argv_ *a, tpl_value *out) {
  (void)name;
  return poot__tpl_str_format(ctx, at, s, a->args, a->nargs, a->kwn, a->kwv, a->nkw, out);
}

static poot_status str_find(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                            const argv_ *a, tpl_value *out) {
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  tpl_value sub;
  if (!arg(a, 0, NULL, &sub) || sub.kind != TV_STR)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "%s takes a string", name);
  if (a->nargs > 1) return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "%s with start/end", name);
  if (name[0] == 'c') {
    int64_t c = 0;
    if (sub.u.s.n == 0) {
      c = (int64_t)poot__tpl_utf8_len(p, n) + 1;
    } else {
      size_t i = 0;
      const char *h;
      while (i + sub.u.s.n <= n && (h = memmem(p + i, n - i, sub.u.s.p, sub.u.s.n))) {
        c++;
        i = (size_t)(h - p) + sub.u.s.n;
      }
    }
    *out = tv_int(c);
    return NULL;
  }
  long pos = -1;
  if (name[0] == 'f') {
    const char *h = sub.u.s.n <= n ? memmem(p, n, sub.u.s.p, sub.u.s.n) : NULL;
    if (sub.u.s.n == 0)
      pos = 0;
    else if (h)
      pos = (long)(h - p);
  } else if (sub.u.s.n <= n) {
    for (size_t k = n - sub.u.s.n + 1; k > 0; k--)
      if (memcmp(p + k - 1, sub.u.s.p, sub.u.s.n) == 0) {
        pos = (long)(k - 1);
        break;
      }
  }
  *out = tv_int(pos < 0 ? -1 : (int64_t)poot__tpl_utf8_len(p, (size_t)pos));
  return NULL;
}

static poot_status str_join(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                            const argv_ *a, tpl_value *out) {
  (void)name;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  tpl_value seq;
  if (!arg(a, 0, NULL, &seq)) return poot__tpl_err(ctx, at, POOT_FORMAT, "join takes an iterable");
  tpl_list *items;
  POOT_TRY(poot__tv_iterate(ctx, at, seq, &items));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (size_t i = 0; i < items->n; i++) {
    if (items->items[i].kind != TV_STR) {
      poot_strbuf_deinit(&sb);
      return poot__tpl_err(ctx, at, POOT_FORMAT,
                           "sequence item %zu: expected str instance, %s found", i,
                           poot__tv_type_name(items->items[i]));
    }
    if (i) poot_strbuf_append(&sb, p, n);
    poot_strbuf_append(&sb, items->items[i].u.s.p, items->items[i].u.s.n);
  }
  return sb_done(ctx, &sb, out);
}

static poot_status str_is(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                          const argv_ *a, tpl_value *out) {
  (void)a;
  (void)ctx;
  (void)at;
  (void)s;
  const char *p = s.u.s.p;
  size_t n = s.u.s.n;
  bool any = false, all = true, cased = false, lower_ok = true, upper_ok = true;
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(p, n, i, &len);
    bool digit = cp >= '0' && cp <= '9';
    bool alpha = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
                 (cp >= 0x80 && poot__tpl_is_cased(cp));
    bool ok = !strcmp(name, "isdigit")   ? digit
              : !strcmp(name, "isalpha") ? alpha
              : !strcmp(name, "isalnum") ? alpha || digit
              : !strcmp(name, "isspace") ? poot__tpl_py_isspace(cp)
                                         : true;
    if (poot__tpl_is_cased(cp)) {
      cased = true;
      if (poot__tpl_lower_cp(cp) != cp) lower_ok = false;
      if (poot__tpl_upper_cp(cp) != cp) upper_ok = false;
    }
    any = true;
    if (!ok) all = false;
    i += len;
  }
  if (!strcmp(name, "islower"))
    *out = tv_bool(cased && lower_ok);
  else if (!strcmp(name, "isupper"))
    *out = tv_bool(cased && upper_ok);
  else
    *out = tv_bool(any && all);
  return NULL;
}

/* Every str method the sandbox allows, by name; the is*() predicates share
 * one routine (str_is), which every other name beginning with "is" reaches
 * too. */
typedef struct str_method_row {
  const char *name;
  str_method_fn fn;
} str_method_row;

static const str_method_row str_method_rows[] = {
    {"strip", str_strip},
    {"lstrip", str_strip},
    {"rstrip", str_strip},
    {"split", str_split},
    {"rsplit", str_rsplit},
    {"splitlines", str_splitlines},
    {"startswith", str_affix_test},
    {"endswith", str_affix_test},
    {"removeprefix", str_remove_affix},
    {"removesuffix", str_remove_affix},
    {"replace", str_replace},
    {"upper", str_case},
    {"lower", str_case},
    {"title", str_case},
    {"capitalize", str_case},
    {"casefold", str_case},
    {"format", str_format},
    {"find", str_find},
    {"rfind", str_find},
    {"count", str_find},
    {"join", str_join},
};

static poot_status str_method(tpl_ctx *ctx, const tpl_node *at, tpl_value s, const char *name,
                              const argv_ *a, tpl_value *out) {
  POOT_TRY(poot__tpl_charge(ctx, at, s.u.s.n / 16));
  for (size_t i = 0; i < sizeof str_method_rows / sizeof str_method_rows[0]; i++)
    if (!strcmp(str_method_rows[i].name, name))
      return str_method_rows[i].fn(ctx, at, s, name, a, out);
  if (!strncmp(name, "is", 2)) return str_is(ctx, at, s, name, a, out);
  return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "the str method '%s' is not supported", name);
}

poot_status poot__tpl_call_method(tpl_ctx *ctx, const tpl_node *at, tpl_value self,
                                  const char *name, const tpl_value *args, size_t nargs,
                                  const char *const *kwnames, const tpl_value *kwvals, size_t nkw,
                                  tpl_value *out) {
  argv_ A = {args, nargs, kwnames, kwvals, nkw};
  *out = tv_none();
  if (self.kind == TV_STR) {
    if (!in_list(str_methods_impl, name))
      return poot__tpl_err(ctx, at, POOT_UNSUPPORTED, "the str method '%s' is not supported", name);
    return str_method(ctx, at, self, name, &A, out);
  }
  if (self.kind == TV_DICT) {
    tpl_dict *d = self.u.dict;
    if (!strcmp(name, "items")) return poot__tpl_items_of(ctx, at, self, out);
    if (!strcmp(name, "keys") || !strcmp(name, "values")) {
      POOT_TRY(poot__tpl_charge(ctx, at, d->n));
      POOT_TRY(poot__tv_list_new(ctx, d->n, out));
      for (size_t i = 0; i < d->n; i++)
        out->u.list->items[i] = name[0] == 'k' ? d->keys[i] : d->vals[i];
      return NULL;
    }
    if (!strcmp(name, "get")) {
      tpl_value key, dflt = tv_none();
      if (!arg(&A, 0, NULL, &key))
        return poot__tpl_err(ctx, at, POOT_FORMAT, "get expected at least 1 argument");
      (void)arg(&A, 1, NULL, &dflt);
      long i;
      POOT_TRY(poot__tv_dict_find(ctx, at, d, key, &i));
      *out = i >= 0 ? d->vals[i] : dflt;
      return NULL;
    }
    if (!strcmp(name, "copy")) {
      POOT_TRY(poot__tpl_charge(ctx, at, d->n));
      POOT_TRY(poot__tv_dict_new(ctx, d->n, out));
      for (size_t i = 0; i < d->n; i++)
        POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, d->keys[i], d->vals[i]));
      return NULL;
    }
  }
  if (self.kind == TV_LIST) {
    tpl_list *l = self.u.list;
    tpl_value x;
    if (!strcmp(name, "copy")) {
      POOT_TRY(poot__tpl_charge(ctx, at, l->n));
      POOT_TRY(poot__tv_list_new(ctx, l->n, out));
      if (l->n) memcpy(out->u.list->items, l->items, l->n * sizeof(tpl_value));
      return NULL;
    }
    if (!arg(&A, 0, NULL, &x))
      return poot__tpl_err(ctx, at, POOT_FORMAT, "%s takes an argument", name);
    if (!strcmp(name, "count")) {
      int64_t c = 0;
      for (size_t i = 0; i < l->n; i++) {
        bool eq;
        POOT_TRY(poot__tv_equal(ctx, at, l->items[i], x, &eq));
        c += eq;
      }
      *out = tv_int(c);
      return NULL;
    }
    if (!strcmp(name, "index")) {
      for (size_t i = 0; i < l->n; i++) {
        bool eq;
        POOT_TRY(poot__tv_equal(ctx, at, l->items[i], x, &eq));
        if (eq) {
          *out = tv_int((int64_t)i);
          return NULL;
        }
      }
      return poot__tpl_err(ctx, at, POOT_FORMAT, "value is not in list");
    }
  }
  if (self.kind == TV_LOOP) {
    tpl_loop *l = self.u.loop;
    if (!strcmp(name, "cycle")) {
      if (!nargs) return poot__tpl_err(ctx, at, POOT_FORMAT, "no items for cycling given");
      *out = args[l->index0 % nargs];
      return NULL;
    }
    if (!strcmp(name, "changed")) {
      tpl_value t;
      POOT_TRY(poot__tv_list_new(ctx, nargs, &t));
      if (nargs) memcpy(t.u.list->items, args, nargs * sizeof(tpl_value));
      bool same = false;
      if (l->has_changed) POOT_TRY(poot__tv_equal(ctx, at, l->last_changed, t, &same));
      bool changed = !same;
      l->last_changed = t;
      l->has_changed = true;
      *out = tv_bool(changed);
      return NULL;
    }
  }
  return poot__tpl_err(ctx, at, POOT_FORMAT, "calling '%s' on a %s is not allowed (sandbox)", name,
                       poot__tv_type_name(self));
}
