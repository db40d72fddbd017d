/* tpl_eval.c — the chat-template interpreter: statements, expressions, scopes,
 * attribute and item access with jinja2's undefined semantics, calls of
 * macros, caller blocks and recursive loops. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "template_impl.h"

poot_status poot__tpl_err(tpl_ctx *ctx, const tpl_node *at, poot_status_code code, const char *fmt,
                          ...) {
  (void)ctx;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (at) return poot_status_make(code, "template line %u: %s", (unsigned)at->line, msg);
  return poot_status_make(code, "template: %s", msg);
}

poot_status poot__tpl_over(tpl_ctx *ctx, const tpl_node *at) {
  const poot_chat_template_render_params *p = &ctx->params;
  switch (ctx->over) {
    case TPL_OVER_OUTPUT:
      return poot__tpl_err(ctx, at, POOT_CAPACITY,
                           "the template built a text longer than max_output (%zu bytes)",
                           p->max_output);
    case TPL_OVER_MEMORY:
      return poot__tpl_err(ctx, at, POOT_CAPACITY,
                           "the template used more than max_memory (%zu bytes)", p->max_memory);
    case TPL_OVER_OOM:
      return poot__tpl_oom();
    default:
      ctx->over = TPL_OVER_STEPS;
      return poot__tpl_err(ctx, at, POOT_CAPACITY,
                           "the template ran past max_steps (%llu steps: a runaway loop, or a "
                           "value walked too often?)",
                           (unsigned long long)p->max_steps);
  }
}

poot_status poot__tpl_charge(tpl_ctx *ctx, const tpl_node *at, uint64_t units) {
  if (!tpl_tick(ctx, units) || ctx->over) return poot__tpl_over(ctx, at);
  return NULL;
}

poot_status poot__tpl_step(tpl_ctx *ctx, const tpl_node *at) {
  return poot__tpl_charge(ctx, at, 1);
}

/* ----------------------------------------------------------------- scopes */

static poot_status scope_new(tpl_ctx *ctx, tpl_scope *parent, tpl_scope **out) {
  *out = NULL;
  tpl_scope *s = POOT_ARENA_NEW(&ctx->arena, tpl_scope);
  if (!s) return poot__tpl_oom();
  s->parent = parent;
  *out = s;
  return NULL;
}

static poot_status scope_set(tpl_ctx *ctx, tpl_scope *s, const char *name, tpl_value v) {
  for (size_t i = 0; i < s->n; i++) {
    if (strcmp(s->names[i], name) == 0) {
      s->vals[i] = v;
      return NULL;
    }
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    const char **names = POOT_ARENA_NEW_ARRAY(&ctx->arena, const char *, cap);
    tpl_value *vals = POOT_ARENA_NEW_ARRAY(&ctx->arena, tpl_value, cap);
    if (!names || !vals) return poot__tpl_oom();
    if (s->n) {
      memcpy(names, s->names, s->n * sizeof *names);
      memcpy(vals, s->vals, s->n * sizeof *vals);
    }
    s->names = names;
    s->vals = vals;
    s->cap = cap;
  }
  s->names[s->n] = name;
  s->vals[s->n] = v;
  s->n++;
  return NULL;
}

static bool scope_get(const tpl_scope *s, const char *name, tpl_value *out) {
  for (; s; s = s->parent) {
    for (size_t i = 0; i < s->n; i++) {
      if (s->names[i] == name || strcmp(s->names[i], name) == 0) {
        *out = s->vals[i];
        return true;
      }
    }
  }
  return false;
}

static poot_status make_func(tpl_ctx *ctx, tpl_func_kind kind, const char *name, tpl_value *out,
                             tpl_func **out_fn) {
  if (out_fn) *out_fn = NULL;
  tpl_func *f = POOT_ARENA_NEW(&ctx->arena, tpl_func);
  if (!f) return poot__tpl_oom();
  f->kind = kind;
  f->name = name;
  *out = (tpl_value){.kind = TV_FUNC};
  out->u.func = f;
  if (out_fn) *out_fn = f;
  return NULL;
}

static poot_status lookup_name(tpl_ctx *ctx, tpl_scope *scope, const char *name, tpl_value *out) {
  if (scope_get(scope, name, out)) return NULL;
  if (poot__tpl_builtin_exists(name)) return make_func(ctx, FN_BUILTIN, name, out, NULL);
  *out = tv_undef(name);
  return NULL;
}

/* ------------------------------------------------------ attribute / items */

static poot_status undefined_error(tpl_ctx *ctx, const tpl_node *at, tpl_value u) {
  if (u.flags & TVF_HINT) return poot__tpl_err(ctx, at, POOT_FORMAT, "%s", u.u.s.p);
  if (u.flags & TVF_UNSAFE)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "access to attribute '%s' is unsafe (sandbox)",
                         u.u.s.p ? u.u.s.p : "?");
  return poot__tpl_err(ctx, at, POOT_FORMAT, "'%s' is undefined", u.u.s.p ? u.u.s.p : "value");
}

static tpl_value unsafe_undef(const char *name) {
  tpl_value v = tv_undef(name);
  v.flags = TVF_UNSAFE;
  return v;
}

static poot_status loop_attr(tpl_ctx *ctx, tpl_loop *l, const char *name, tpl_value *out) {
  size_t i = l->index0, n = l->length;
  if (!strcmp(name, "index"))
    *out = tv_int((int64_t)i + 1);
  else if (!strcmp(name, "index0"))
    *out = tv_int((int64_t)i);
  else if (!strcmp(name, "first"))
    *out = tv_bool(i == 0);
  else if (!strcmp(name, "last"))
    *out = tv_bool(i + 1 == n);
  else if (!strcmp(name, "length"))
    *out = tv_int((int64_t)n);
  else if (!strcmp(name, "revindex"))
    *out = tv_int((int64_t)(n - i));
  else if (!strcmp(name, "revindex0"))
    *out = tv_int((int64_t)(n - i - 1));
  else if (!strcmp(name, "depth"))
    *out = tv_int((int64_t)l->depth0 + 1);
  else if (!strcmp(name, "depth0"))
    *out = tv_int((int64_t)l->depth0);
  else if (!strcmp(name, "previtem"))
    *out = i > 0 ? l->items->items[i - 1] : tv_undef("previtem");
  else if (!strcmp(name, "nextitem"))
    *out = i + 1 < n ? l->items->items[i + 1] : tv_undef("nextitem");
  else if (!strcmp(name, "cycle") || !strcmp(name, "changed")) {
    tpl_func *f = NULL;
    POOT_TRY(make_func(ctx, FN_METHOD, name, out, &f));
    f->self = (tpl_value){.kind = TV_LOOP};
    f->self.u.loop = l;
  } else {
    *out = tv_undef(name);
  }
  return NULL;
}

/* jinja2's object_type_repr. */
static void type_repr(poot_strbuf *sb, tpl_value v) {
  if (v.kind == TV_NONE)
    poot_strbuf_puts(sb, "None");
  else
    poot_strbuf_printf(sb, "%s object", poot__tv_type_name(v));
}

/* Replaces a plain miss (an undefined named `name`) by one whose message says
 * what was missing where, as jinja2's does. */
static poot_status explain_miss(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, tpl_value key,
                                tpl_value *out) {
  if (out->kind != TV_UNDEF || out->flags || obj.kind == TV_UNDEF) return NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (key.kind == TV_STR) {
    poot_strbuf_putc(&sb, '\'');
    type_repr(&sb, obj);
    poot_strbuf_puts(&sb, "' has no attribute ");
  } else {
    type_repr(&sb, obj);
    poot_strbuf_puts(&sb, " has no element ");
  }
  tpl_value msg;
  poot_status st = poot__tv_repr(ctx, at, &sb, key);
  if (!st) st = poot__tv_from_sb(ctx, &sb, &msg);
  poot_strbuf_deinit(&sb);
  if (st) return st;
  *out = tv_undef(msg.u.s.p);
  out->flags = TVF_HINT;
  return NULL;
}

static poot_status getattr_inner(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, const char *name,
                                 tpl_value *out);

poot_status poot__tpl_getattr(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, const char *name,
                              tpl_value *out) {
  POOT_TRY(getattr_inner(ctx, at, obj, name, out));
  return explain_miss(ctx, at, obj, tv_str(name, strlen(name)), out);
}

static poot_status getattr_inner(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, const char *name,
                                 tpl_value *out) {
  *out = tv_undef(name);
  if (obj.kind == TV_UNDEF) return undefined_error(ctx, at, obj);
  if (name[0] == '_') {
    *out = unsafe_undef(name);
    return NULL;
  }
  bool safe = true;
  switch (obj.kind) {
    case TV_LOOP:
      return loop_attr(ctx, obj.u.loop, name, out);
    case TV_NS: {
      long i = poot__tv_dict_find_str(obj.u.dict, name, strlen(name));
      if (i >= 0) *out = obj.u.dict->vals[i];
      return NULL;
    }
    case TV_DICT:
    case TV_STR:
    case TV_LIST:
      if (poot__tpl_method_exists(obj, name, &safe)) {
        if (!safe) {
          *out = unsafe_undef(name);
          return NULL;
        }
        tpl_func *f = NULL;
        POOT_TRY(make_func(ctx, FN_METHOD, name, out, &f));
        f->self = obj;
        return NULL;
      }
      if (obj.kind == TV_DICT) {
        long i = poot__tv_dict_find_str(obj.u.dict, name, strlen(name));
        if (i >= 0) *out = obj.u.dict->vals[i];
      }
      return NULL;
    default:
      return NULL;
  }
}

static void slice_indices(int64_t len, const tpl_value *sv, int64_t *start, int64_t *stop,
                          int64_t *step) {
  *step = sv[2].kind == TV_NONE ? 1 : sv[2].u.i;
  int64_t st = *step;
  int64_t lo = st < 0 ? -1 : 0, hi = st < 0 ? len - 1 : len;
  for (int k = 0; k < 2; k++) {
    int64_t *dst = k == 0 ? start : stop;
    if (sv[k].kind == TV_NONE) {
      *dst = k == 0 ? (st < 0 ? hi : lo) : (st < 0 ? lo : hi);
      continue;
    }
    int64_t x = sv[k].u.i;
    if (x < 0) {
      x += len;
      if (x < lo) x = lo;
    } else if (x > hi) {
      x = hi;
    }
    *dst = x;
  }
}

static poot_status do_slice(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, const tpl_value *sv,
                            tpl_value *out) {
  for (int k = 0; k < 3; k++) {
    if (sv[k].kind == TV_BOOL) continue;
    if (sv[k].kind != TV_NONE && sv[k].kind != TV_INT)
      return poot__tpl_err(ctx, at, POOT_FORMAT, "slice indices must be integers or None");
  }
  tpl_value s2[3];
  for (int k = 0; k < 3; k++) s2[k] = sv[k].kind == TV_BOOL ? tv_int(sv[k].u.b) : sv[k];
  if (s2[2].kind == TV_INT && s2[2].u.i == 0)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "slice step cannot be zero");
  if (obj.kind == TV_LIST || obj.kind == TV_STR) {
    bool is_str = obj.kind == TV_STR;
    const char *p = is_str ? obj.u.s.p : NULL;
    size_t n = is_str ? obj.u.s.n : obj.u.list->n;
    size_t len = is_str ? poot__tpl_utf8_len(p, n) : n;
    POOT_TRY(poot__tpl_charge(ctx, at, is_str ? n : 0));
    int64_t start, stop, step;
    slice_indices((int64_t)len, s2, &start, &stop, &step);
    /* The element count, computed without overflow for any step. */
    uint64_t cnt = 0;
    if (step > 0 && stop > start) cnt = ((uint64_t)(stop - start) - 1) / (uint64_t)step + 1;
    if (step < 0 && stop < start)
      cnt = ((uint64_t)(start - stop) - 1) / ((uint64_t)(-(step + 1)) + 1) + 1;
    POOT_TRY(poot__tpl_charge(ctx, at, cnt));
    if (!is_str) {
      POOT_TRY(poot__tv_list_new(ctx, (size_t)cnt, out));
      out->flags = obj.flags & TVF_TUPLE;
      for (uint64_t k = 0; k < cnt; k++)
        out->u.list->items[k] = obj.u.list->items[start + (int64_t)k * step];
      return NULL;
    }
    if (step == 1) {
      size_t b = poot__tpl_utf8_offset(p, n, (size_t)start);
      size_t e = cnt ? poot__tpl_utf8_offset(p, n, (size_t)stop) : b;
      *out = tv_str(p + b, e - b);
      return NULL;
    }
    /* Byte offsets of every code point, then pick. */
    size_t *offs = poot_malloc((len + 1) * sizeof(size_t));
    if (!offs) return poot__tpl_oom();
    for (size_t i = 0, k = 0; k <= len; k++) {
      offs[k] = i;
      if (i < n) i = poot__tpl_utf8_next(p, n, i);
    }
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    for (uint64_t k = 0; k < cnt; k++) {
      size_t i = (size_t)(start + (int64_t)k * step);
      poot_strbuf_append(&sb, p + offs[i], offs[i + 1] - offs[i]);
    }
    poot_free(offs);
    poot_status st = poot__tv_from_sb(ctx, &sb, out);
    poot_strbuf_deinit(&sb);
    return st;
  }
  if (obj.kind == TV_UNDEF) return undefined_error(ctx, at, obj);
  *out = tv_undef("slice");
  return NULL;
}

static poot_status getitem_inner(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, tpl_value key,
                                 tpl_value *out);

poot_status poot__tpl_getitem(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, tpl_value key,
                              tpl_value *out) {
  POOT_TRY(getitem_inner(ctx, at, obj, key, out));
  return explain_miss(ctx, at, obj, key, out);
}

static poot_status getitem_inner(tpl_ctx *ctx, const tpl_node *at, tpl_value obj, tpl_value key,
                                 tpl_value *out) {
  *out = tv_undef(NULL);
  switch (obj.kind) {
    case TV_UNDEF:
      return undefined_error(ctx, at, obj);
    case TV_DICT: {
      long i;
      POOT_TRY(poot__tv_dict_find(ctx, at, obj.u.dict, key, &i));
      if (i >= 0) {
        *out = obj.u.dict->vals[i];
        return NULL;
      }
      break;
    }
    case TV_LIST:
    case TV_STR:
      if (key.kind == TV_INT || key.kind == TV_BOOL) {
        int64_t k = key.kind == TV_INT ? key.u.i : key.u.b;
        if (obj.kind == TV_STR) POOT_TRY(poot__tpl_charge(ctx, at, obj.u.s.n / 16));
        size_t len = obj.kind == TV_LIST ? obj.u.list->n : poot__tpl_utf8_len(obj.u.s.p, obj.u.s.n);
        if (k < 0) k += (int64_t)len;
        if (k < 0 || (size_t)k >= len) return NULL;
        if (obj.kind == TV_LIST) {
          *out = obj.u.list->items[k];
        } else {
          size_t b = poot__tpl_utf8_offset(obj.u.s.p, obj.u.s.n, (size_t)k);
          size_t e = poot__tpl_utf8_next(obj.u.s.p, obj.u.s.n, b);
          *out = tv_str(obj.u.s.p + b, e - b);
        }
        return NULL;
      }
      break;
    case TV_LOOP:
    case TV_NS:
      break;
    default:
      break;
  }
  if (key.kind == TV_STR) {
    /* jinja2 falls back to the attribute of that name. */
    char *name = poot_arena_strndup(&ctx->arena, key.u.s.p, key.u.s.n);
    if (!name) return poot__tpl_oom();
    if (obj.kind == TV_NS || obj.kind == TV_LOOP) {
      /* Namespace and loop objects support no item access. */
      *out = tv_undef(name);
      return NULL;
    }
    if (obj.kind == TV_DICT || obj.kind == TV_STR || obj.kind == TV_LIST) {
      bool safe = true;
      if (name[0] == '_') {
        *out = unsafe_undef(name);
        return NULL;
      }
      if (poot__tpl_method_exists(obj, name, &safe))
        return poot__tpl_getattr(ctx, at, obj, name, out);
    }
    *out = tv_undef(name);
  }
  return NULL;
}

/* ------------------------------------------------------------ expressions */

static poot_status eval_args(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n,
                             tpl_value **out_args, size_t *out_nargs, const char ***out_kwn,
                             tpl_value **out_kwv, size_t *out_nkw, size_t extra_kw) {
  size_t nargs = n->nkids, nkw = n->nkw;
  tpl_value dyn = tv_none(), dynkw = tv_none();
  if (n->dyn_args) {
    POOT_TRY(poot__tpl_eval(ctx, scope, n->dyn_args, &dyn));
    if (dyn.kind != TV_LIST)
      return poot__tpl_err(ctx, n, POOT_FORMAT, "argument after * must be an iterable");
    nargs += dyn.u.list->n;
  }
  if (n->dyn_kwargs) {
    POOT_TRY(poot__tpl_eval(ctx, scope, n->dyn_kwargs, &dynkw));
    if (dynkw.kind != TV_DICT)
      return poot__tpl_err(ctx, n, POOT_FORMAT, "argument after ** must be a mapping");
    nkw += dynkw.u.dict->n;
  }
  tpl_value *args = POOT_ARENA_NEW_ARRAY(&ctx->arena, tpl_value, nargs + 1);
  const char **kwn = POOT_ARENA_NEW_ARRAY(&ctx->arena, const char *, nkw + extra_kw + 1);
  tpl_value *kwv = POOT_ARENA_NEW_ARRAY(&ctx->arena, tpl_value, nkw + extra_kw + 1);
  if (!args || !kwn || !kwv) return poot__tpl_oom();
  size_t k = 0;
  for (size_t i = 0; i < n->nkids; i++)
    POOT_TRY(poot__tpl_eval(ctx, scope, n->kids[i], &args[k++]));
  if (dyn.kind == TV_LIST)
    for (size_t i = 0; i < dyn.u.list->n; i++) args[k++] = dyn.u.list->items[i];
  size_t m = 0;
  for (size_t i = 0; i < n->nkw; i++) {
    kwn[m] = n->kwnames[i];
    POOT_TRY(poot__tpl_eval(ctx, scope, n->kwvals[i], &kwv[m]));
    m++;
  }
  if (dynkw.kind == TV_DICT) {
    for (size_t i = 0; i < dynkw.u.dict->n; i++) {
      tpl_value key = dynkw.u.dict->keys[i];
      if (key.kind != TV_STR) return poot__tpl_err(ctx, n, POOT_FORMAT, "keywords must be strings");
      kwn[m] = poot_arena_strndup(&ctx->arena, key.u.s.p, key.u.s.n);
      if (!kwn[m]) return poot__tpl_oom();
      kwv[m++] = dynkw.u.dict->vals[i];
    }
  }
  *out_args = args;
  *out_nargs = k;
  *out_kwn = kwn;
  *out_kwv = kwv;
  *out_nkw = m;
  return NULL;
}

static poot_status eval_filter_chain(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n,
                                     tpl_value base, tpl_value *out);

static poot_status eval_compare(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_value *out) {
  tpl_value left;
  POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &left));
  for (size_t i = 0; i < n->nkids; i++) {
    tpl_value right, r;
    POOT_TRY(poot__tpl_eval(ctx, scope, n->kids[i], &right));
    POOT_TRY(poot__tpl_binop(ctx, n, n->ops[i], left, right, &r));
    if (!poot__tv_truthy(r)) {
      *out = tv_bool(false);
      return NULL;
    }
    left = right;
  }
  *out = tv_bool(true);
  return NULL;
}

/* The C recursion of the interpreter (expressions, statements, calls) is
 * bounded, so that a hostile template cannot exhaust the stack even when its
 * nesting and its macro recursion are each within their own limits. */
#define MAX_C_NEST 2500

static poot_status eval_inner(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_value *out);

poot_status poot__tpl_eval(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_value *out) {
  *out = tv_undef(NULL);
  if (ctx->nest >= MAX_C_NEST)
    return poot__tpl_err(ctx, n, POOT_CAPACITY,
                         "the template nests calls and expressions too deeply");
  ctx->nest++;
  poot_status st = eval_inner(ctx, scope, n, out);
  ctx->nest--;
  return st;
}

static poot_status eval_inner(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_value *out) {
  POOT_TRY(poot__tpl_step(ctx, n));
  switch (n->kind) {
    case N_CONST:
      *out = n->value;
      return NULL;
    case N_NAME:
      return lookup_name(ctx, scope, n->name, out);
    case N_LIST:
    case N_TUPLE: {
      POOT_TRY(poot__tv_list_new(ctx, n->nkids, out));
      if (n->kind == N_TUPLE) out->flags = TVF_TUPLE;
      for (size_t i = 0; i < n->nkids; i++)
        POOT_TRY(poot__tpl_eval(ctx, scope, n->kids[i], &out->u.list->items[i]));
      return NULL;
    }
    case N_DICT: {
      POOT_TRY(poot__tv_dict_new(ctx, n->nkids / 2, out));
      for (size_t i = 0; i + 1 < n->nkids; i += 2) {
        tpl_value k, v;
        POOT_TRY(poot__tpl_eval(ctx, scope, n->kids[i], &k));
        POOT_TRY(poot__tpl_eval(ctx, scope, n->kids[i + 1], &v));
        if (k.kind == TV_LIST && !(k.flags & TVF_TUPLE))
          return poot__tpl_err(ctx, n, POOT_FORMAT, "unhashable type: 'list'");
        if (k.kind == TV_DICT || k.kind == TV_NS)
          return poot__tpl_err(ctx, n, POOT_FORMAT, "unhashable type: '%s'", poot__tv_type_name(k));
        POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, k, v));
      }
      return NULL;
    }
    case N_GETATTR: {
      tpl_value obj;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &obj));
      return poot__tpl_getattr(ctx, n, obj, n->name, out);
    }
    case N_GETITEM: {
      tpl_value obj;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &obj));
      if (n->b->kind == N_SLICE) {
        tpl_value sv[3] = {tv_none(), tv_none(), tv_none()};
        const tpl_node *parts[3] = {n->b->a, n->b->b, n->b->c};
        for (int k = 0; k < 3; k++)
          if (parts[k]) POOT_TRY(poot__tpl_eval(ctx, scope, parts[k], &sv[k]));
        return do_slice(ctx, n, obj, sv, out);
      }
      tpl_value key;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->b, &key));
      return poot__tpl_getitem(ctx, n, obj, key, out);
    }
    case N_CALL: {
      tpl_value fn;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &fn));
      tpl_value *args;
      size_t nargs, nkw;
      const char **kwn;
      tpl_value *kwv;
      POOT_TRY(eval_args(ctx, scope, n, &args, &nargs, &kwn, &kwv, &nkw, 0));
      return poot__tpl_call(ctx, n, fn, args, nargs, kwn, kwv, nkw, out);
    }
    case N_FILTER:
      return eval_filter_chain(ctx, scope, n, tv_undef(NULL), out);
    case N_TEST: {
      tpl_value v;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &v));
      tpl_value *args;
      size_t nargs, nkw;
      const char **kwn;
      tpl_value *kwv;
      POOT_TRY(eval_args(ctx, scope, n, &args, &nargs, &kwn, &kwv, &nkw, 0));
      bool r = false;
      POOT_TRY(poot__tpl_test(ctx, n, n->name, v, args, nargs, &r));
      *out = tv_bool(n->flag ? !r : r);
      return NULL;
    }
    case N_BINOP: {
      tpl_value a, b;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &a));
      POOT_TRY(poot__tpl_eval(ctx, scope, n->b, &b));
      return poot__tpl_binop(ctx, n, n->op, a, b, out);
    }
    case N_NEG:
    case N_POS: {
      tpl_value a;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &a));
      if (a.kind == TV_BOOL) a = tv_int(a.u.b);
      if (a.kind == TV_INT) {
        if (n->kind == N_NEG && a.u.i == INT64_MIN)
          return poot__tpl_err(ctx, n, POOT_UNSUPPORTED, "integer overflow");
        *out = tv_int(n->kind == N_NEG ? -a.u.i : a.u.i);
        return NULL;
      }
      if (a.kind == TV_FLOAT) {
        *out = tv_float(n->kind == N_NEG ? -a.u.f : a.u.f);
        return NULL;
      }
      if (a.kind == TV_UNDEF) return undefined_error(ctx, n, a);
      return poot__tpl_err(ctx, n, POOT_FORMAT, "bad operand type for unary %c: '%s'",
                           n->kind == N_NEG ? '-' : '+', poot__tv_type_name(a));
    }
    case N_NOT: {
      tpl_value a;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &a));
      *out = tv_bool(!poot__tv_truthy(a));
      return NULL;
    }
    case N_AND:
    case N_OR: {
      tpl_value a;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &a));
      bool t = poot__tv_truthy(a);
      if ((n->kind == N_AND && !t) || (n->kind == N_OR && t)) {
        *out = a;
        return NULL;
      }
      return poot__tpl_eval(ctx, scope, n->b, out);
    }
    case N_COMPARE:
      return eval_compare(ctx, scope, n, out);
    case N_CONCAT: {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      poot_status st = NULL;
      for (size_t i = 0; i < n->nkids && !st; i++) {
        tpl_value v;
        st = poot__tpl_eval(ctx, scope, n->kids[i], &v);
        if (!st) st = poot__tv_str(ctx, n, &sb, v);
      }
      if (!st) st = poot__tv_from_sb(ctx, &sb, out);
      poot_strbuf_deinit(&sb);
      return st;
    }
    case N_COND: {
      tpl_value t;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &t));
      if (poot__tv_truthy(t)) return poot__tpl_eval(ctx, scope, n->b, out);
      if (n->c) return poot__tpl_eval(ctx, scope, n->c, out);
      *out = tv_undef(NULL);
      return NULL;
    }
    default:
      return poot__tpl_err(ctx, n, POOT_INTERNAL, "node kind %d is not an expression", n->kind);
  }
}

/* Applies a filter node (and the filters beneath it) to `base` (used when the
 * innermost filter has no operand: {% filter %} and {% set x | f %}). */
static poot_status eval_filter_chain(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n,
                                     tpl_value base, tpl_value *out) {
  tpl_value v;
  if (!n->a) {
    v = base;
  } else if (n->a->kind == N_FILTER) {
    POOT_TRY(eval_filter_chain(ctx, scope, n->a, base, &v));
  } else {
    POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &v));
  }
  tpl_value *args;
  size_t nargs, nkw;
  const char **kwn;
  tpl_value *kwv;
  POOT_TRY(eval_args(ctx, scope, n, &args, &nargs, &kwn, &kwv, &nkw, 0));
  return poot__tpl_filter(ctx, n, n->name, v, args, nargs, kwn, kwv, nkw, out);
}

/* ------------------------------------------------------------- statements */

static poot_status emit(tpl_ctx *ctx, const tpl_node *at, const char *p, size_t n) {
  poot_strbuf_append(ctx->out, p, n);
  if (ctx->out->failed) return poot__tpl_oom();
  if (ctx->out->len > ctx->params.max_output) {
    ctx->over = TPL_OVER_OUTPUT;
    return poot__tpl_over(ctx, at);
  }
  return NULL;
}

static poot_status assign(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *target, tpl_value v) {
  if (target->kind == N_NAME) return scope_set(ctx, scope, target->name, v);
  if (target->kind == N_NSREF) {
    tpl_value ns;
    POOT_TRY(lookup_name(ctx, scope, target->name, &ns));
    if (ns.kind != TV_NS)
      return poot__tpl_err(ctx, target, POOT_FORMAT,
                           "cannot assign attribute on non-namespace object");
    return poot__tv_dict_set(ctx, ns.u.dict, target->value, v);
  }
  /* A tuple of names: unpack. */
  tpl_list *items;
  if (v.kind == TV_LIST) {
    items = v.u.list;
  } else if (v.kind == TV_STR || v.kind == TV_DICT) {
    POOT_TRY(poot__tv_iterate(ctx, target, v, &items));
  } else {
    return poot__tpl_err(ctx, target, POOT_FORMAT, "cannot unpack non-iterable %s object",
                         poot__tv_type_name(v));
  }
  if (items->n != target->nkids)
    return poot__tpl_err(ctx, target, POOT_FORMAT, "%s values to unpack (expected %zu, got %zu)",
                         items->n < target->nkids ? "not enough" : "too many", target->nkids,
                         items->n);
  for (size_t i = 0; i < target->nkids; i++)
    POOT_TRY(assign(ctx, scope, target->kids[i], items->items[i]));
  return NULL;
}

/* Runs `body` with output captured into a new string value. */
static poot_status capture(tpl_ctx *ctx, tpl_scope *scope, tpl_node *const *body, size_t n,
                           tpl_value *out) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf *saved = ctx->out;
  ctx->out = &sb;
  tpl_flow flow = FLOW_NORMAL;
  poot_status st = poot__tpl_exec_body(ctx, scope, body, n, &flow);
  ctx->out = saved;
  if (!st) st = poot__tv_from_sb(ctx, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

static poot_status run_for(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_value iterable,
                           uint32_t depth0) {
  tpl_list *src;
  POOT_TRY(poot__tv_iterate(ctx, n->b, iterable, &src));
  tpl_list *items = src;
  if (n->c) {
    tpl_value filtered;
    POOT_TRY(poot__tv_list_new(ctx, src->n, &filtered));
    size_t k = 0;
    tpl_scope *fs = NULL;
    uint64_t fs_captures = 0;
    for (size_t i = 0; i < src->n; i++) {
      /* One scope serves every item unless something captured it. */
      if (!fs || ctx->captures != fs_captures) {
        POOT_TRY(scope_new(ctx, scope, &fs));
        fs_captures = ctx->captures;
      } else {
        fs->n = 0;
      }
      POOT_TRY(assign(ctx, fs, n->a, src->items[i]));
      tpl_value t;
      POOT_TRY(poot__tpl_eval(ctx, fs, n->c, &t));
      if (poot__tv_truthy(t)) filtered.u.list->items[k++] = src->items[i];
    }
    filtered.u.list->n = k;
    items = filtered.u.list;
  }
  if (items->n == 0) {
    tpl_flow flow = FLOW_NORMAL;
    return poot__tpl_exec_body(ctx, scope, n->else_body, n->nelse, &flow);
  }
  tpl_loop *loop = POOT_ARENA_NEW(&ctx->arena, tpl_loop);
  if (!loop) return poot__tpl_oom();
  loop->items = items;
  loop->length = items->n;
  loop->depth0 = depth0;
  loop->node = n;
  loop->scope = scope;
  tpl_value lv = {.kind = TV_LOOP};
  lv.u.loop = loop;
  tpl_scope *is = NULL;
  uint64_t is_captures = 0;
  for (size_t i = 0; i < items->n; i++) {
    POOT_TRY(poot__tpl_step(ctx, n));
    loop->index0 = i;
    /* Each iteration starts from a fresh scope (a set in the body does not
     * survive into the next iteration); the storage is reused unless a macro
     * or caller defined in the body captured it. */
    if (!is || ctx->captures != is_captures) {
      POOT_TRY(scope_new(ctx, scope, &is));
      is_captures = ctx->captures;
    } else {
      is->n = 0;
    }
    POOT_TRY(scope_set(ctx, is, "loop", lv));
    POOT_TRY(assign(ctx, is, n->a, items->items[i]));
    tpl_flow flow = FLOW_NORMAL;
    POOT_TRY(poot__tpl_exec_body(ctx, is, n->body, n->nbody, &flow));
    if (flow == FLOW_BREAK) break;
  }
  return NULL;
}

static poot_status call_macro(tpl_ctx *ctx, const tpl_node *at, tpl_func *fn, const tpl_value *args,
                              size_t nargs, const char *const *kwnames, const tpl_value *kwvals,
                              size_t nkw, tpl_value *out) {
  const tpl_node *def = fn->node;
  if (ctx->depth >= ctx->params.max_depth)
    return poot__tpl_err(ctx, at, POOT_CAPACITY, "macro calls nested deeper than max_depth (%u)",
                         (unsigned)ctx->params.max_depth);
  tpl_scope *ms = NULL;
  POOT_TRY(scope_new(ctx, fn->closure, &ms));
  bool *used = nkw ? POOT_ARENA_NEW_ARRAY(&ctx->arena, bool, nkw) : NULL;
  if (nkw && !used) return poot__tpl_oom();
  for (size_t i = 0; i < def->nkids; i++) {
    const char *pname = def->kids[i]->name;
    tpl_value v = tv_undef(pname);
    bool have = false;
    if (i < nargs) {
      v = args[i];
      have = true;
    }
    for (size_t k = 0; k < nkw && !have; k++) {
      if (!used[k] && strcmp(kwnames[k], pname) == 0) {
        v = kwvals[k];
        used[k] = true;
        have = true;
      }
    }
    if (!have && def->defaults && def->defaults[i])
      POOT_TRY(poot__tpl_eval(ctx, ms, def->defaults[i], &v));
    POOT_TRY(scope_set(ctx, ms, pname, v));
  }
  /* jinja2's Macro.__call__: extra arguments only where the body uses
   * varargs / kwargs; caller only where it uses caller. */
  bool uses_varargs = def->op & 1, uses_kwargs = def->op & 2, uses_caller = def->op & 4;
  const char *mname = def->kind == N_MACRO ? def->name : "caller";
  size_t extra = nargs > def->nkids ? nargs - def->nkids : 0;
  if (extra && !uses_varargs)
    return poot__tpl_err(ctx, at, POOT_FORMAT, "macro '%s' takes not more than %zu argument(s)",
                         mname, def->nkids);
  tpl_value varargs;
  POOT_TRY(poot__tv_list_new(ctx, extra, &varargs));
  varargs.flags = TVF_TUPLE;
  for (size_t i = 0; i < extra; i++) varargs.u.list->items[i] = args[def->nkids + i];
  tpl_value kwargs;
  POOT_TRY(poot__tv_dict_new(ctx, 0, &kwargs));
  tpl_value caller = tv_undef("caller");
  for (size_t k = 0; k < nkw; k++) {
    if (used[k]) continue;
    if (strcmp(kwnames[k], "caller") == 0 && uses_caller) {
      caller = kwvals[k];
      continue;
    }
    if (!uses_kwargs) {
      if (strcmp(kwnames[k], "caller") == 0)
        return poot__tpl_err(ctx, at, POOT_FORMAT,
                             "macro '%s' was invoked with two values for the special caller "
                             "argument",
                             mname);
      return poot__tpl_err(ctx, at, POOT_FORMAT, "macro '%s' takes no keyword argument '%s'", mname,
                           kwnames[k]);
    }
    tpl_value key;
    POOT_TRY(poot__tv_strdup(ctx, kwnames[k], strlen(kwnames[k]), &key));
    POOT_TRY(poot__tv_dict_set(ctx, kwargs.u.dict, key, kwvals[k]));
  }
  POOT_TRY(scope_set(ctx, ms, "varargs", varargs));
  POOT_TRY(scope_set(ctx, ms, "kwargs", kwargs));
  if (uses_caller) POOT_TRY(scope_set(ctx, ms, "caller", caller));
  ctx->depth++;
  poot_status st = capture(ctx, ms, def->body, def->nbody, out);
  ctx->depth--;
  return st;
}

poot_status poot__tpl_call(tpl_ctx *ctx, const tpl_node *at, tpl_value fn, const tpl_value *args,
                           size_t nargs, const char *const *kwnames, const tpl_value *kwvals,
                           size_t nkw, tpl_value *out) {
  *out = tv_undef(NULL);
  if (fn.kind == TV_FUNC) {
    tpl_func *f = fn.u.func;
    switch (f->kind) {
      case FN_MACRO:
      case FN_CALLER:
        return call_macro(ctx, at, f, args, nargs, kwnames, kwvals, nkw, out);
      case FN_BUILTIN:
        return poot__tpl_call_builtin(ctx, at, f->name, args, nargs, kwnames, kwvals, nkw, out);
      case FN_METHOD:
        return poot__tpl_call_method(ctx, at, f->self, f->name, args, nargs, kwnames, kwvals, nkw,
                                     out);
      case FN_UNSAFE:
        return poot__tpl_err(ctx, at, POOT_FORMAT, "calling '%s' is not allowed (sandbox)",
                             f->name);
    }
  }
  if (fn.kind == TV_LOOP) {
    tpl_loop *l = fn.u.loop;
    if (!l->node->flag)
      return poot__tpl_err(ctx, at, POOT_FORMAT,
                           "the loop is not recursive: add 'recursive' to call loop()");
    if (nargs != 1) return poot__tpl_err(ctx, at, POOT_FORMAT, "loop() takes one argument");
    if (ctx->depth >= ctx->params.max_depth)
      return poot__tpl_err(ctx, at, POOT_CAPACITY,
                           "recursive loops nested deeper than max_depth (%u)",
                           (unsigned)ctx->params.max_depth);
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_strbuf *saved = ctx->out;
    ctx->out = &sb;
    ctx->depth++;
    poot_status st = run_for(ctx, l->scope, l->node, args[0], l->depth0 + 1);
    ctx->depth--;
    ctx->out = saved;
    if (!st) st = poot__tv_from_sb(ctx, &sb, out);
    poot_strbuf_deinit(&sb);
    return st;
  }
  if (fn.kind == TV_UNDEF) return undefined_error(ctx, at, fn);
  return poot__tpl_err(ctx, at, POOT_FORMAT, "'%s' object is not callable", poot__tv_type_name(fn));
}

static poot_status exec_inner(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_flow *flow);

static poot_status exec_node(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_flow *flow) {
  if (ctx->nest >= MAX_C_NEST)
    return poot__tpl_err(ctx, n, POOT_CAPACITY,
                         "the template nests calls and statements too deeply");
  ctx->nest++;
  poot_status st = exec_inner(ctx, scope, n, flow);
  ctx->nest--;
  return st;
}

static poot_status exec_inner(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n, tpl_flow *flow) {
  POOT_TRY(poot__tpl_step(ctx, n));
  switch (n->kind) {
    case N_DATA:
      return emit(ctx, n, n->value.u.s.p, n->value.u.s.n);
    case N_PRINT: {
      tpl_value v;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &v));
      if (v.kind == TV_STR) return emit(ctx, n, v.u.s.p, v.u.s.n);
      POOT_TRY(poot__tv_str(ctx, n, ctx->out, v));
      return emit(ctx, n, "", 0);
    }
    case N_IF: {
      tpl_value t;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->a, &t));
      if (poot__tv_truthy(t)) return poot__tpl_exec_body(ctx, scope, n->body, n->nbody, flow);
      return poot__tpl_exec_body(ctx, scope, n->else_body, n->nelse, flow);
    }
    case N_FOR: {
      tpl_value it;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->b, &it));
      return run_for(ctx, scope, n, it, 0);
    }
    case N_SET: {
      tpl_value v;
      POOT_TRY(poot__tpl_eval(ctx, scope, n->b, &v));
      return assign(ctx, scope, n->a, v);
    }
    case N_SETBLOCK: {
      tpl_value v;
      POOT_TRY(capture(ctx, scope, n->body, n->nbody, &v));
      if (n->c) POOT_TRY(eval_filter_chain(ctx, scope, n->c, v, &v));
      return assign(ctx, scope, n->a, v);
    }
    case N_MACRO: {
      tpl_value v;
      tpl_func *f = NULL;
      POOT_TRY(make_func(ctx, FN_MACRO, n->name, &v, &f));
      f->node = n;
      f->closure = scope;
      ctx->captures++;
      return scope_set(ctx, scope, n->name, v);
    }
    case N_CALLBLOCK: {
      tpl_value caller;
      tpl_func *cf = NULL;
      POOT_TRY(make_func(ctx, FN_CALLER, "caller", &caller, &cf));
      cf->node = n;
      cf->closure = scope;
      ctx->captures++;
      const tpl_node *call = n->a;
      tpl_value fn;
      POOT_TRY(poot__tpl_eval(ctx, scope, call->a, &fn));
      tpl_value *args;
      size_t nargs, nkw;
      const char **kwn;
      tpl_value *kwv;
      POOT_TRY(eval_args(ctx, scope, call, &args, &nargs, &kwn, &kwv, &nkw, 1));
      kwn[nkw] = "caller";
      kwv[nkw] = caller;
      nkw++;
      tpl_value r;
      POOT_TRY(poot__tpl_call(ctx, call, fn, args, nargs, kwn, kwv, nkw, &r));
      tpl_value s;
      POOT_TRY(poot__tv_to_str(ctx, n, r, &s));
      return emit(ctx, n, s.u.s.p, s.u.s.n);
    }
    case N_FILTERBLOCK: {
      tpl_value v;
      POOT_TRY(capture(ctx, scope, n->body, n->nbody, &v));
      POOT_TRY(eval_filter_chain(ctx, scope, n->a, v, &v));
      tpl_value s;
      POOT_TRY(poot__tv_to_str(ctx, n, v, &s));
      return emit(ctx, n, s.u.s.p, s.u.s.n);
    }
    case N_WITH: {
      tpl_scope *ws = NULL;
      POOT_TRY(scope_new(ctx, scope, &ws));
      for (size_t i = 0; i < n->nkids; i++) {
        tpl_value v;
        POOT_TRY(poot__tpl_eval(ctx, scope, n->defaults[i], &v));
        POOT_TRY(assign(ctx, ws, n->kids[i], v));
      }
      return poot__tpl_exec_body(ctx, ws, n->body, n->nbody, flow);
    }
    case N_BREAK:
      *flow = FLOW_BREAK;
      return NULL;
    case N_CONTINUE:
      *flow = FLOW_CONTINUE;
      return NULL;
    case N_BLOCKLIST:
      return poot__tpl_exec_body(ctx, scope, n->body, n->nbody, flow);
    default:
      return poot__tpl_err(ctx, n, POOT_INTERNAL, "node kind %d is not a statement", n->kind);
  }
}

poot_status poot__tpl_exec_body(tpl_ctx *ctx, tpl_scope *scope, tpl_node *const *body, size_t n,
                                tpl_flow *flow) {
  for (size_t i = 0; i < n; i++) {
    POOT_TRY(exec_node(ctx, scope, body[i], flow));
    if (*flow != FLOW_NORMAL) return NULL;
  }
  return NULL;
}
