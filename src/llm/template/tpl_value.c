/* tpl_value.c — the value model of the chat-template engine with Python's
 * semantics: truthiness, equality, ordering, str() and repr(), json.dumps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_impl.h"

/* ------------------------------------------------------------------- UTF-8 */

uint32_t poot__tpl_utf8_decode(const char *p, size_t n, size_t i, size_t *out_len) {
  const unsigned char *s = (const unsigned char *)p;
  unsigned char c = s[i];
  *out_len = 1;
  if (c < 0x80) return c;
  int need = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  if (!need || i + (size_t)need >= n) return c; /* invalid or truncated: one byte */
  uint32_t cp = c & (0x3F >> need);
  for (int k = 1; k <= need; k++) {
    unsigned char d = s[i + (size_t)k];
    if ((d & 0xC0) != 0x80) return c;
    cp = (cp << 6) | (d & 0x3F);
  }
  *out_len = (size_t)need + 1;
  return cp;
}

size_t poot__tpl_utf8_next(const char *p, size_t n, size_t i) {
  size_t len = 1;
  (void)poot__tpl_utf8_decode(p, n, i, &len);
  return i + len;
}

size_t poot__tpl_utf8_len(const char *p, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; i = poot__tpl_utf8_next(p, n, i)) count++;
  return count;
}

size_t poot__tpl_utf8_offset(const char *p, size_t n, size_t k) {
  size_t i = 0;
  while (k > 0 && i < n) {
    i = poot__tpl_utf8_next(p, n, i);
    k--;
  }
  return i;
}

void poot__tpl_utf8_put(poot_strbuf *sb, uint32_t cp) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | (cp >> 6));
    b[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | (cp >> 12));
    b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  poot_strbuf_append(sb, b, n);
}

bool poot__tpl_py_isspace(uint32_t cp) {
  return cp == ' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x1f) || cp == 0x85 ||
         cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* ----------------------------------------------------------------- basics */

poot_status poot__tpl_oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory while rendering a chat template");
}

/* Render memory: refused past max_memory (ctx->over says which way it
 * failed, for mem_error). */
static void *ctx_alloc(tpl_ctx *ctx, size_t size, size_t align) {
  if (size > ctx->params.max_memory || ctx->arena.used_total > ctx->params.max_memory - size) {
    ctx->over = TPL_OVER_MEMORY;
    return NULL;
  }
  void *p = poot_arena_alloc(&ctx->arena, size, align);
  if (!p) ctx->over = TPL_OVER_OOM;
  return p;
}

static poot_status mem_error(tpl_ctx *ctx) {
  if (!ctx->over) ctx->over = TPL_OVER_OOM;
  return poot__tpl_over(ctx, NULL);
}

poot_status poot__tv_strdup(tpl_ctx *ctx, const char *p, size_t n, tpl_value *out) {
  char *d = ctx_alloc(ctx, n + 1, 1);
  if (!d) return mem_error(ctx);
  if (n) memcpy(d, p, n);
  d[n] = 0;
  *out = tv_str(d, n);
  return NULL;
}

poot_status poot__tv_from_sb(tpl_ctx *ctx, poot_strbuf *sb, tpl_value *out) {
  if (poot_strbuf_status(sb)) return poot__tpl_oom();
  poot_status st = poot__tv_strdup(ctx, sb->data, sb->len, out);
  poot_strbuf_clear(sb);
  return st;
}

poot_status poot__tv_list_new(tpl_ctx *ctx, size_t n, tpl_value *out) {
  tpl_list *l = ctx_alloc(ctx, sizeof *l, _Alignof(tpl_list));
  if (!l) return mem_error(ctx);
  size_t bytes;
  if (!poot_size_mul(n, sizeof(tpl_value), &bytes)) {
    ctx->over = TPL_OVER_MEMORY;
    return mem_error(ctx);
  }
  l->items = n ? ctx_alloc(ctx, bytes, _Alignof(tpl_value)) : NULL;
  if (n && !l->items) return mem_error(ctx);
  l->n = n;
  *out = (tpl_value){.kind = TV_LIST};
  out->u.list = l;
  return NULL;
}

poot_status poot__tv_dict_new(tpl_ctx *ctx, size_t cap, tpl_value *out) {
  tpl_dict *d = ctx_alloc(ctx, sizeof *d, _Alignof(tpl_dict));
  if (!d) return mem_error(ctx);
  if (cap) {
    d->keys = ctx_alloc(ctx, cap * sizeof(tpl_value), _Alignof(tpl_value));
    d->vals = ctx_alloc(ctx, cap * sizeof(tpl_value), _Alignof(tpl_value));
    if (!d->keys || !d->vals) return mem_error(ctx);
  }
  d->cap = cap;
  *out = (tpl_value){.kind = TV_DICT};
  out->u.dict = d;
  return NULL;
}

static uint64_t str_hash(const char *p, size_t n) {
  return poot_hash64(p, n, 0x9e3779b97f4a7c15ull);
}

/* A hash consistent with Python equality for the hashable values (1, 1.0 and
 * True hash alike); 0 for values that cannot be keys. Charges a step per
 * value it visits (a tuple key may nest). */
static uint64_t key_hash(tpl_ctx *ctx, tpl_value k, int depth) {
  if (!tpl_tick(ctx, 1)) return 0;
  switch (k.kind) {
    case TV_STR:
      if (!tpl_tick(ctx, k.u.s.n / TPL_TEXT_STEP)) return 0;
      return str_hash(k.u.s.p, k.u.s.n);
    case TV_BOOL:
      return poot_hash64_mix(1, (uint64_t)k.u.b);
    case TV_INT:
      return poot_hash64_mix(1, (uint64_t)k.u.i);
    case TV_FLOAT:
      if (k.u.f == floor(k.u.f) && fabs(k.u.f) < 9.2e18)
        return poot_hash64_mix(1, (uint64_t)(int64_t)k.u.f);
      {
        uint64_t bits;
        double f = k.u.f;
        memcpy(&bits, &f, sizeof bits);
        return poot_hash64_mix(2, bits);
      }
    case TV_NONE:
      return 3;
    case TV_LIST: {
      uint64_t h = 4;
      if (depth < 8)
        for (size_t i = 0; i < k.u.list->n && !ctx->over; i++)
          h = poot_hash64_mix(h, key_hash(ctx, k.u.list->items[i], depth + 1));
      return h;
    }
    default:
      return 0;
  }
}

static bool equal_walk(tpl_ctx *ctx, tpl_value a, tpl_value b, int depth);

/* The entry of key in d's hash index, or -1; also -1 (with ctx->over set)
 * when the comparisons ran out of steps. */
static long index_probe(tpl_ctx *ctx, const tpl_dict *d, uint64_t h, tpl_value key) {
  size_t mask = d->icap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    uint32_t e = d->index[i];
    if (!e) return -1;
    if (equal_walk(ctx, d->keys[e - 1], key, 0)) return (long)(e - 1);
    if (ctx->over) return -1;
  }
}

static long dict_find(tpl_ctx *ctx, const tpl_dict *d, tpl_value key) {
  if (d->index) {
    uint64_t h = key_hash(ctx, key, 0);
    return ctx->over ? -1 : index_probe(ctx, d, h, key);
  }
  for (size_t i = 0; i < d->n && !ctx->over; i++)
    if (equal_walk(ctx, d->keys[i], key, 0)) return (long)i;
  return -1;
}

poot_status poot__tv_dict_find(tpl_ctx *ctx, const tpl_node *at, const tpl_dict *d, tpl_value key,
                               long *out_index) {
  *out_index = dict_find(ctx, d, key);
  if (ctx->over) {
    *out_index = -1;
    return poot__tpl_over(ctx, at);
  }
  return NULL;
}

static bool is_str_key(const tpl_value *k, const char *key, size_t n) {
  return k->kind == TV_STR && k->u.s.n == n && memcmp(k->u.s.p, key, n) == 0;
}

long poot__tv_dict_find_str(const tpl_dict *d, const char *key, size_t n) {
  if (d->index) {
    /* A string equals only a string, so only string entries can match. */
    size_t mask = d->icap - 1;
    for (size_t i = (size_t)str_hash(key, n) & mask;; i = (i + 1) & mask) {
      uint32_t e = d->index[i];
      if (!e) return -1;
      if (is_str_key(&d->keys[e - 1], key, n)) return (long)(e - 1);
    }
  }
  for (size_t i = 0; i < d->n; i++)
    if (is_str_key(&d->keys[i], key, n)) return (long)i;
  return -1;
}

static void index_insert(tpl_ctx *ctx, tpl_dict *d, size_t entry) {
  size_t mask = d->icap - 1;
  size_t i = (size_t)key_hash(ctx, d->keys[entry], 0) & mask;
  while (d->index[i]) i = (i + 1) & mask;
  d->index[i] = (uint32_t)(entry + 1);
}

/* Keeps the hash index at most half full; built once a dict passes 8 keys. */
static poot_status index_update(tpl_ctx *ctx, tpl_dict *d) {
  if (d->n <= 8 || d->n > UINT32_MAX / 2) return NULL;
  if (d->index && d->n * 2 <= d->icap) {
    index_insert(ctx, d, d->n - 1);
    return ctx->over ? poot__tpl_over(ctx, NULL) : NULL;
  }
  size_t icap = 32;
  while (icap < d->n * 4) icap *= 2;
  uint32_t *index = ctx_alloc(ctx, icap * sizeof(uint32_t), _Alignof(uint32_t));
  if (!index) return mem_error(ctx);
  memset(index, 0, icap * sizeof(uint32_t));
  d->index = index;
  d->icap = icap;
  for (size_t e = 0; e < d->n; e++) index_insert(ctx, d, e);
  return ctx->over ? poot__tpl_over(ctx, NULL) : NULL;
}

poot_status poot__tv_dict_set(tpl_ctx *ctx, tpl_dict *d, tpl_value key, tpl_value val) {
  long at;
  POOT_TRY(poot__tv_dict_find(ctx, NULL, d, key, &at));
  if (at >= 0) {
    d->vals[at] = val;
    return NULL;
  }
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 4;
    tpl_value *k = ctx_alloc(ctx, cap * sizeof(tpl_value), _Alignof(tpl_value));
    tpl_value *v = ctx_alloc(ctx, cap * sizeof(tpl_value), _Alignof(tpl_value));
    if (!k || !v) return mem_error(ctx);
    if (d->n) {
      memcpy(k, d->keys, d->n * sizeof(tpl_value));
      memcpy(v, d->vals, d->n * sizeof(tpl_value));
    }
    d->keys = k;
    d->vals = v;
    d->cap = cap;
  }
  d->keys[d->n] = key;
  d->vals[d->n] = val;
  d->n++;
  return index_update(ctx, d);
}

poot_status poot__tv_from_json(tpl_ctx *ctx, const poot_json *j, tpl_value *out) {
  *out = tv_none();
  if (!j) return NULL;
  switch (j->type) {
    case POOT_JSON_NULL:
      *out = tv_none();
      return NULL;
    case POOT_JSON_BOOL:
      *out = tv_bool(j->boolean);
      return NULL;
    case POOT_JSON_NUMBER: {
      const char *t = j->str;
      bool is_int = t && !strpbrk(t, ".eE");
      if (is_int) {
        char *end = NULL;
        long long v = strtoll(t, &end, 10);
        if (end && *end == 0 && fabs(j->number) < 9.2e18) {
          *out = tv_int(v);
          return NULL;
        }
      }
      *out = tv_float(j->number);
      return NULL;
    }
    case POOT_JSON_STRING:
      return poot__tv_strdup(ctx, j->str, j->len, out);
    case POOT_JSON_ARRAY: {
      POOT_TRY(poot__tv_list_new(ctx, j->len, out));
      for (size_t i = 0; i < j->len; i++)
        POOT_TRY(poot__tv_from_json(ctx, j->items[i], &out->u.list->items[i]));
      return NULL;
    }
    case POOT_JSON_OBJECT: {
      POOT_TRY(poot__tv_dict_new(ctx, j->len, out));
      for (size_t i = 0; i < j->len; i++) {
        tpl_value k, v;
        POOT_TRY(poot__tv_strdup(ctx, j->keys[i], j->key_lens[i], &k));
        POOT_TRY(poot__tv_from_json(ctx, j->items[i], &v));
        POOT_TRY(poot__tv_dict_set(ctx, out->u.dict, k, v));
      }
      return NULL;
    }
  }
  return NULL;
}

bool poot__tv_truthy(tpl_value v) {
  switch (v.kind) {
    case TV_UNDEF:
    case TV_NONE:
      return false;
    case TV_BOOL:
      return v.u.b;
    case TV_INT:
      return v.u.i != 0;
    case TV_FLOAT:
      return v.u.f != 0.0;
    case TV_STR:
      return v.u.s.n != 0;
    case TV_LIST:
      return (v.flags & TVF_GEN) || v.u.list->n != 0;
    case TV_DICT:
      return v.u.dict->n != 0;
    default:
      return true;
  }
}

static double num_f(tpl_value v) {
  return v.kind == TV_FLOAT ? v.u.f : v.kind == TV_INT ? (double)v.u.i : (double)v.u.b;
}
static int64_t num_i(tpl_value v) {
  return v.kind == TV_INT ? v.u.i : v.kind == TV_BOOL ? (int64_t)v.u.b : 0;
}

/* Comparisons recurse into lists and dicts; past this depth (a value nested
 * by a template loop) they give up, as Python raises RecursionError. */
#define CMP_DEPTH 400

/* The walks return an arbitrary result once ctx->over is set; the public
 * wrappers turn that into the status. */
static bool equal_walk(tpl_ctx *ctx, tpl_value a, tpl_value b, int depth) {
  if (depth > CMP_DEPTH || !tpl_tick(ctx, 1)) return false;
  if (tv_is_num(a) && tv_is_num(b)) {
    if (a.kind == TV_FLOAT || b.kind == TV_FLOAT) return num_f(a) == num_f(b);
    return num_i(a) == num_i(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case TV_UNDEF:
    case TV_NONE:
      return true;
    case TV_STR:
      if (a.u.s.n != b.u.s.n || !tpl_tick(ctx, a.u.s.n / TPL_TEXT_STEP)) return false;
      return memcmp(a.u.s.p, b.u.s.p, a.u.s.n) == 0;
    case TV_LIST: {
      if ((a.flags & TVF_TUPLE) != (b.flags & TVF_TUPLE)) return false;
      if (a.u.list->n != b.u.list->n) return false;
      for (size_t i = 0; i < a.u.list->n; i++)
        if (!equal_walk(ctx, a.u.list->items[i], b.u.list->items[i], depth + 1)) return false;
      return true;
    }
    case TV_DICT: {
      if (a.u.dict->n != b.u.dict->n) return false;
      for (size_t i = 0; i < a.u.dict->n; i++) {
        long j = dict_find(ctx, b.u.dict, a.u.dict->keys[i]);
        if (j < 0 || !equal_walk(ctx, a.u.dict->vals[i], b.u.dict->vals[j], depth + 1))
          return false;
      }
      return true;
    }
    case TV_NS:
      return a.u.dict == b.u.dict;
    case TV_FUNC:
      return a.u.func == b.u.func;
    case TV_LOOP:
      return a.u.loop == b.u.loop;
    default:
      return false;
  }
}

static bool less_walk(tpl_ctx *ctx, tpl_value a, tpl_value b, bool *out_lt, int depth) {
  *out_lt = false;
  if (depth > CMP_DEPTH || !tpl_tick(ctx, 1)) return false;
  if (tv_is_num(a) && tv_is_num(b)) {
    if (a.kind == TV_FLOAT || b.kind == TV_FLOAT)
      *out_lt = num_f(a) < num_f(b);
    else
      *out_lt = num_i(a) < num_i(b);
    return true;
  }
  if (a.kind == TV_STR && b.kind == TV_STR) {
    size_t m = a.u.s.n < b.u.s.n ? a.u.s.n : b.u.s.n;
    if (!tpl_tick(ctx, m / TPL_TEXT_STEP)) return false;
    int c = memcmp(a.u.s.p, b.u.s.p, m);
    *out_lt = c < 0 || (c == 0 && a.u.s.n < b.u.s.n);
    return true;
  }
  if (a.kind == TV_LIST && b.kind == TV_LIST && (a.flags & TVF_TUPLE) == (b.flags & TVF_TUPLE)) {
    size_t m = a.u.list->n < b.u.list->n ? a.u.list->n : b.u.list->n;
    for (size_t i = 0; i < m; i++) {
      tpl_value x = a.u.list->items[i], y = b.u.list->items[i];
      if (equal_walk(ctx, x, y, depth + 1)) continue;
      if (ctx->over) return false;
      return less_walk(ctx, x, y, out_lt, depth + 1);
    }
    *out_lt = a.u.list->n < b.u.list->n;
    return true;
  }
  return false;
}

poot_status poot__tv_equal(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                           bool *out_eq) {
  *out_eq = equal_walk(ctx, a, b, 0);
  if (ctx->over) {
    *out_eq = false;
    return poot__tpl_over(ctx, at);
  }
  return NULL;
}

poot_status poot__tv_less(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                          bool *out_ordered, bool *out_lt) {
  *out_ordered = less_walk(ctx, a, b, out_lt, 0);
  if (ctx->over) {
    *out_ordered = false;
    *out_lt = false;
    return poot__tpl_over(ctx, at);
  }
  return NULL;
}

const char *poot__tv_type_name(tpl_value v) {
  switch (v.kind) {
    case TV_UNDEF:
      return "Undefined";
    case TV_NONE:
      return "NoneType";
    case TV_BOOL:
      return "bool";
    case TV_INT:
      return "int";
    case TV_FLOAT:
      return "float";
    case TV_STR:
      return "str";
    case TV_LIST:
      return (v.flags & TVF_GEN) ? "generator" : (v.flags & TVF_TUPLE) ? "tuple" : "list";
    case TV_DICT:
      return "dict";
    case TV_NS:
      return "Namespace";
    case TV_FUNC:
      return "function";
    case TV_LOOP:
      return "LoopContext";
    default:
      return "object";
  }
}

/* ----------------------------------------------------------- str and repr */

/* Appends the decimal digits of i: a walk prints many small integers, and
 * printf costs an order of magnitude more than the rest of a visit. */
static void put_int(poot_strbuf *sb, int64_t i) {
  char buf[24];
  size_t k = sizeof buf;
  uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
  do {
    buf[--k] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (i < 0) buf[--k] = '-';
  poot_strbuf_append(sb, buf + k, sizeof buf - k);
}

void poot__tv_float_repr(poot_strbuf *sb, double f) {
  if (isnan(f)) {
    poot_strbuf_puts(sb, "nan");
    return;
  }
  if (isinf(f)) {
    poot_strbuf_puts(sb, f < 0 ? "-inf" : "inf");
    return;
  }
  /* Shortest digits that round-trip, then Python's layout rules. */
  char buf[64];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
    if (strtod(buf, NULL) == f) break;
  }
  /* buf: [-]d.ddde[+-]XX */
  char digits[32];
  size_t nd = 0;
  const char *s = buf;
  bool neg = false;
  if (*s == '-') {
    neg = true;
    s++;
  }
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') digits[nd++] = *s;
  int exp = atoi(s + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (neg) poot_strbuf_putc(sb, '-');
  if (exp >= -5 + 1 && exp < 16) {
    if (exp < 0) {
      poot_strbuf_puts(sb, "0.");
      for (int i = 0; i < -exp - 1; i++) poot_strbuf_putc(sb, '0');
      poot_strbuf_append(sb, digits, nd);
    } else {
      size_t intlen = (size_t)exp + 1;
      for (size_t i = 0; i < intlen; i++) poot_strbuf_putc(sb, i < nd ? digits[i] : '0');
      poot_strbuf_putc(sb, '.');
      if (nd > intlen)
        poot_strbuf_append(sb, digits + intlen, nd - intlen);
      else
        poot_strbuf_putc(sb, '0');
    }
  } else {
    poot_strbuf_putc(sb, digits[0]);
    if (nd > 1) {
      poot_strbuf_putc(sb, '.');
      poot_strbuf_append(sb, digits + 1, nd - 1);
    }
    poot_strbuf_printf(sb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  }
}

static bool py_printable(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7f) return false;
  if (cp >= 0x80 && cp < 0xa0) return false;
  if (cp == 0xad) return false;
  if (poot__tpl_py_isspace(cp) && cp != ' ') return false;
  if (cp >= 0xd800 && cp < 0xe000) return false;
  if (cp == 0x200b || cp == 0x200c || cp == 0x200d || cp == 0x200e || cp == 0x200f ||
      cp == 0xfeff || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfff9 || cp == 0xfffa ||
      cp == 0xfffb)
    return false;
  if (cp >= 0xe000 && cp < 0xf900) return false; /* private use */
  return true;
}

static void repr_string(poot_strbuf *sb, const char *p, size_t n) {
  bool has_sq = memchr(p, '\'', n) != NULL, has_dq = memchr(p, '"', n) != NULL;
  char q = (has_sq && !has_dq) ? '"' : '\'';
  poot_strbuf_putc(sb, q);
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(p, n, i, &len);
    if (cp == (uint32_t)q || cp == '\\') {
      poot_strbuf_putc(sb, '\\');
      poot_strbuf_putc(sb, (char)cp);
    } else if (cp == '\n') {
      poot_strbuf_puts(sb, "\\n");
    } else if (cp == '\r') {
      poot_strbuf_puts(sb, "\\r");
    } else if (cp == '\t') {
      poot_strbuf_puts(sb, "\\t");
    } else if (!py_printable(cp)) {
      if (cp < 0x100)
        poot_strbuf_printf(sb, "\\x%02x", cp);
      else if (cp < 0x10000)
        poot_strbuf_printf(sb, "\\u%04x", cp);
      else
        poot_strbuf_printf(sb, "\\U%08x", cp);
    } else {
      poot_strbuf_append(sb, p + i, len);
    }
    i += len;
  }
  poot_strbuf_putc(sb, q);
}

/* repr() of v: stops (with ctx->over set) once it runs out of steps or its
 * text passes the output bound, as a namespace that holds itself twice would
 * print an exponential tree. */
static void repr_walk(tpl_ctx *ctx, poot_strbuf *sb, tpl_value v, int depth) {
  if (ctx->over || !tpl_tick(ctx, 1) || !tpl_text_fits(ctx, sb)) return;
  if (depth > 200) {
    poot_strbuf_puts(sb, "...");
    return;
  }
  switch (v.kind) {
    case TV_UNDEF:
      return;
    case TV_NONE:
      poot_strbuf_puts(sb, "None");
      return;
    case TV_BOOL:
      poot_strbuf_puts(sb, v.u.b ? "True" : "False");
      return;
    case TV_INT:
      put_int(sb, v.u.i);
      return;
    case TV_FLOAT:
      poot__tv_float_repr(sb, v.u.f);
      return;
    case TV_STR:
      if (!tpl_tick(ctx, v.u.s.n / TPL_TEXT_STEP)) return;
      if (v.flags & TVF_SAFE) poot_strbuf_puts(sb, "Markup(");
      repr_string(sb, v.u.s.p, v.u.s.n);
      if (v.flags & TVF_SAFE) poot_strbuf_putc(sb, ')');
      return;
    case TV_LIST: {
      if (v.flags & TVF_GEN) {
        poot_strbuf_puts(sb, "<generator object>");
        return;
      }
      bool tuple = v.flags & TVF_TUPLE;
      poot_strbuf_putc(sb, tuple ? '(' : '[');
      for (size_t i = 0; i < v.u.list->n && !ctx->over; i++) {
        if (i) poot_strbuf_puts(sb, ", ");
        repr_walk(ctx, sb, v.u.list->items[i], depth + 1);
      }
      if (tuple && v.u.list->n == 1) poot_strbuf_putc(sb, ',');
      poot_strbuf_putc(sb, tuple ? ')' : ']');
      return;
    }
    case TV_DICT:
    case TV_NS: {
      if (v.kind == TV_NS) poot_strbuf_puts(sb, "<Namespace ");
      poot_strbuf_putc(sb, '{');
      for (size_t i = 0; i < v.u.dict->n && !ctx->over; i++) {
        if (i) poot_strbuf_puts(sb, ", ");
        repr_walk(ctx, sb, v.u.dict->keys[i], depth + 1);
        poot_strbuf_puts(sb, ": ");
        repr_walk(ctx, sb, v.u.dict->vals[i], depth + 1);
      }
      poot_strbuf_putc(sb, '}');
      if (v.kind == TV_NS) poot_strbuf_putc(sb, '>');
      return;
    }
    case TV_FUNC:
      if (v.u.func->kind == FN_MACRO)
        poot_strbuf_printf(sb, "<Macro '%s'>", v.u.func->name);
      else if (v.u.func->kind == FN_CALLER)
        poot_strbuf_puts(sb, "<Macro anonymous>");
      else
        poot_strbuf_printf(sb, "<function %s>", v.u.func->name ? v.u.func->name : "?");
      return;
    case TV_LOOP:
      poot_strbuf_puts(sb, "<LoopContext>");
      return;
    default:
      return;
  }
}

poot_status poot__tv_str(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb, tpl_value v) {
  if (v.kind == TV_UNDEF) return NULL;
  if (v.kind == TV_STR) {
    if (!tpl_tick(ctx, v.u.s.n / TPL_TEXT_STEP)) return poot__tpl_over(ctx, at);
    poot_strbuf_append(sb, v.u.s.p, v.u.s.n);
    return tpl_text_fits(ctx, sb) ? NULL : poot__tpl_over(ctx, at);
  }
  return poot__tv_repr(ctx, at, sb, v);
}

poot_status poot__tv_repr(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb, tpl_value v) {
  repr_walk(ctx, sb, v, 0);
  if (!ctx->over) (void)tpl_text_fits(ctx, sb);
  return ctx->over ? poot__tpl_over(ctx, at) : NULL;
}

poot_status poot__tv_to_str(tpl_ctx *ctx, const tpl_node *at, tpl_value v, tpl_value *out) {
  if (v.kind == TV_STR) {
    *out = v;
    return NULL;
  }
  if (v.kind == TV_UNDEF) {
    *out = tv_str("", 0);
    return NULL;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot__tv_str(ctx, at, &sb, v);
  if (!st) st = poot__tv_from_sb(ctx, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* ------------------------------------------------------------------- JSON */

static void json_string(poot_strbuf *sb, const char *p, size_t n, bool ensure_ascii) {
  poot_strbuf_putc(sb, '"');
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = poot__tpl_utf8_decode(p, n, i, &len);
    switch (cp) {
      case '"':
        poot_strbuf_puts(sb, "\\\"");
        break;
      case '\\':
        poot_strbuf_puts(sb, "\\\\");
        break;
      case '\n':
        poot_strbuf_puts(sb, "\\n");
        break;
      case '\r':
        poot_strbuf_puts(sb, "\\r");
        break;
      case '\t':
        poot_strbuf_puts(sb, "\\t");
        break;
      case '\b':
        poot_strbuf_puts(sb, "\\b");
        break;
      case '\f':
        poot_strbuf_puts(sb, "\\f");
        break;
      default:
        if (cp < 0x20) {
          poot_strbuf_printf(sb, "\\u%04x", cp);
        } else if (ensure_ascii && cp >= 0x7f) {
          if (cp >= 0x10000) {
            uint32_t c = cp - 0x10000;
            poot_strbuf_printf(sb, "\\u%04x\\u%04x", 0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF));
          } else {
            poot_strbuf_printf(sb, "\\u%04x", cp);
          }
        } else {
          poot_strbuf_append(sb, p + i, len);
        }
    }
    i += len;
  }
  poot_strbuf_putc(sb, '"');
}

static void json_newline(poot_strbuf *sb, const char *indent, int level) {
  poot_strbuf_putc(sb, '\n');
  for (int i = 0; i < level; i++) poot_strbuf_puts(sb, indent);
}

static bool json_key(poot_strbuf *sb, tpl_value k, bool ensure_ascii, tpl_value *out_bad) {
  switch (k.kind) {
    case TV_STR:
      json_string(sb, k.u.s.p, k.u.s.n, ensure_ascii);
      return true;
    case TV_INT:
      poot_strbuf_printf(sb, "\"%lld\"", (long long)k.u.i);
      return true;
    case TV_BOOL:
      poot_strbuf_puts(sb, k.u.b ? "\"true\"" : "\"false\"");
      return true;
    case TV_NONE:
      poot_strbuf_puts(sb, "\"null\"");
      return true;
    case TV_FLOAT:
      poot_strbuf_putc(sb, '"');
      if (isnan(k.u.f))
        poot_strbuf_puts(sb, "NaN");
      else if (isinf(k.u.f))
        poot_strbuf_puts(sb, k.u.f < 0 ? "-Infinity" : "Infinity");
      else
        poot__tv_float_repr(sb, k.u.f);
      poot_strbuf_putc(sb, '"');
      return true;
    default:
      *out_bad = k;
      return false;
  }
}

/* The order json.dumps writes d's entries in (insertion order, or sorted
 * keys) into order[0..n). False when keys do not order (*out_bad set) or the
 * comparisons ran out of steps. */
static bool json_order(tpl_ctx *ctx, const tpl_dict *d, bool sort_keys, size_t *order,
                       tpl_value *out_bad) {
  for (size_t i = 0; i < d->n; i++) order[i] = i;
  if (!sort_keys) return true;
  for (size_t i = 1; i < d->n; i++) {
    size_t x = order[i], j = i;
    while (j > 0) {
      bool lt = false;
      if (!less_walk(ctx, d->keys[x], d->keys[order[j - 1]], &lt, 0)) {
        *out_bad = d->keys[x];
        return false;
      }
      if (!lt) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = x;
  }
  return true;
}

static bool json_walk(tpl_ctx *ctx, poot_strbuf *sb, tpl_value v, const tpl_json_style *st,
                      int depth, tpl_value *out_bad);

static bool json_dict(tpl_ctx *ctx, poot_strbuf *sb, tpl_dict *d, const tpl_json_style *st,
                      int depth, tpl_value *out_bad) {
  if (!d->n) {
    poot_strbuf_puts(sb, "{}");
    return true;
  }
  size_t order_buf[64];
  size_t *order = d->n <= 64 ? order_buf : poot_malloc(d->n * sizeof(size_t));
  if (!order) {
    ctx->over = TPL_OVER_OOM;
    return false;
  }
  bool ok = json_order(ctx, d, st->sort_keys, order, out_bad);
  if (ok) poot_strbuf_putc(sb, '{');
  for (size_t k = 0; k < d->n && ok; k++) {
    size_t i = order[k];
    if (k) poot_strbuf_puts(sb, st->item_sep);
    if (st->indent) json_newline(sb, st->indent, depth + 1);
    ok = json_key(sb, d->keys[i], st->ensure_ascii, out_bad);
    if (!ok) break;
    poot_strbuf_puts(sb, st->key_sep);
    ok = json_walk(ctx, sb, d->vals[i], st, depth + 1, out_bad);
  }
  if (order != order_buf) poot_free(order);
  if (!ok) return false;
  if (st->indent) json_newline(sb, st->indent, depth);
  poot_strbuf_putc(sb, '}');
  return true;
}

static bool json_walk(tpl_ctx *ctx, poot_strbuf *sb, tpl_value v, const tpl_json_style *st,
                      int depth, tpl_value *out_bad) {
  if (!tpl_tick(ctx, 1) || !tpl_text_fits(ctx, sb)) return false;
  if (depth > 500) {
    *out_bad = v;
    return false;
  }
  switch (v.kind) {
    case TV_NONE:
      poot_strbuf_puts(sb, "null");
      return true;
    case TV_BOOL:
      poot_strbuf_puts(sb, v.u.b ? "true" : "false");
      return true;
    case TV_INT:
      put_int(sb, v.u.i);
      return true;
    case TV_FLOAT:
      if (isnan(v.u.f))
        poot_strbuf_puts(sb, "NaN");
      else if (isinf(v.u.f))
        poot_strbuf_puts(sb, v.u.f < 0 ? "-Infinity" : "Infinity");
      else
        poot__tv_float_repr(sb, v.u.f);
      return true;
    case TV_STR:
      if (!tpl_tick(ctx, v.u.s.n / TPL_TEXT_STEP)) return false;
      json_string(sb, v.u.s.p, v.u.s.n, st->ensure_ascii);
      return true;
    case TV_LIST: {
      tpl_list *l = v.u.list;
      if (v.flags & TVF_GEN) {
        *out_bad = v;
        return false;
      }
      if (!l->n) {
        poot_strbuf_puts(sb, "[]");
        return true;
      }
      poot_strbuf_putc(sb, '[');
      for (size_t i = 0; i < l->n; i++) {
        if (i) poot_strbuf_puts(sb, st->item_sep);
        if (st->indent) json_newline(sb, st->indent, depth + 1);
        if (!json_walk(ctx, sb, l->items[i], st, depth + 1, out_bad)) return false;
      }
      if (st->indent) json_newline(sb, st->indent, depth);
      poot_strbuf_putc(sb, ']');
      return true;
    }
    case TV_DICT:
      return json_dict(ctx, sb, v.u.dict, st, depth, out_bad);
    default:
      *out_bad = v;
      return false;
  }
}

poot_status poot__tv_json(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb, tpl_value v,
                          const tpl_json_style *style) {
  tpl_value bad = tv_none();
  bool ok = json_walk(ctx, sb, v, style, 0, &bad);
  if (ok) ok = tpl_text_fits(ctx, sb);
  if (ctx->over) return poot__tpl_over(ctx, at);
  if (ok) return NULL;
  return poot__tpl_err(ctx, at, POOT_FORMAT, "Object of type %s is not JSON serializable",
                       bad.kind == TV_UNDEF ? "Undefined" : poot__tv_type_name(bad));
}

/* -------------------------------------------------------------- iteration */

poot_status poot__tv_iterate(tpl_ctx *ctx, const tpl_node *at, tpl_value v, tpl_list **out_list) {
  static tpl_list empty = {0, NULL};
  *out_list = &empty;
  if (v.kind == TV_LIST) POOT_TRY(poot__tpl_charge(ctx, at, v.u.list->n));
  if (v.kind == TV_DICT) POOT_TRY(poot__tpl_charge(ctx, at, v.u.dict->n));
  if (v.kind == TV_STR) POOT_TRY(poot__tpl_charge(ctx, at, v.u.s.n));
  switch (v.kind) {
    case TV_UNDEF:
      return NULL;
    case TV_LIST:
      *out_list = v.u.list;
      return NULL;
    case TV_DICT: {
      tpl_value l;
      POOT_TRY(poot__tv_list_new(ctx, v.u.dict->n, &l));
      for (size_t i = 0; i < v.u.dict->n; i++) l.u.list->items[i] = v.u.dict->keys[i];
      *out_list = l.u.list;
      return NULL;
    }
    case TV_STR: {
      size_t n = poot__tpl_utf8_len(v.u.s.p, v.u.s.n);
      tpl_value l;
      POOT_TRY(poot__tv_list_new(ctx, n, &l));
      size_t i = 0;
      for (size_t k = 0; k < n; k++) {
        size_t e = poot__tpl_utf8_next(v.u.s.p, v.u.s.n, i);
        l.u.list->items[k] = tv_str(v.u.s.p + i, e - i);
        i = e;
      }
      *out_list = l.u.list;
      return NULL;
    }
    case TV_LOOP:
      *out_list = v.u.loop->items;
      return NULL;
    default:
      return poot__tpl_err(ctx, at, POOT_FORMAT, "'%s' object is not iterable",
                           poot__tv_type_name(v));
  }
}
