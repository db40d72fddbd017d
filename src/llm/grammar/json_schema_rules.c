/* JSON Schema → GBNF: the rule table, errors, JSON pointers, primitives and literals. */
#include <stdio.h>
#include <string.h>

#include "json_schema_impl.h"

/* ------------------------------------------------------------------ errors */

poot_status poot__js_oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "json schema: out of memory");
}

static const char *at_of(const js_ctx *c) {
  return c->path.len ? c->path.data : "the root";
}

poot_status poot__js_err(js_ctx *c, poot_status_code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return poot_status_make(code, "json schema: %s at %s", msg, at_of(c));
}

poot_status poot__js_unsupported(js_ctx *c, const char *what) {
  return poot_status_make(POOT_UNSUPPORTED, "json schema: %s at %s is not supported", what,
                          at_of(c));
}

/* ------------------------------------------------------------------- paths */

size_t poot__js_path_push(js_ctx *c, const char *key) {
  size_t old = c->path.len;
  poot_strbuf_putc(&c->path, '/');
  for (const char *k = key; *k; k++) {
    if (*k == '~')
      poot_strbuf_puts(&c->path, "~0");
    else if (*k == '/')
      poot_strbuf_puts(&c->path, "~1");
    else
      poot_strbuf_putc(&c->path, *k);
  }
  return old;
}

size_t poot__js_path_push_index(js_ctx *c, size_t index) {
  size_t old = c->path.len;
  poot_strbuf_printf(&c->path, "/%zu", index);
  return old;
}

void poot__js_path_pop(js_ctx *c, size_t len) {
  if (c->path.failed) return;
  c->path.len = len;
  c->path.data[len] = '\0';
}

/* ------------------------------------------------------------------- rules */

/* A rule name from a hint: [A-Za-z0-9-] only, at most 40 bytes, never empty. */
static void sanitize(const char *hint, char *out, size_t cap) {
  size_t n = 0;
  for (const char *h = hint ? hint : ""; *h && n + 1 < cap && n < 40; h++) {
    char ch = *h;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!ok) ch = '-';
    if (ch == '-' && (n == 0 || out[n - 1] == '-')) continue;
    out[n++] = ch;
  }
  while (n > 0 && out[n - 1] == '-') n--;
  if (n == 0) out[n++] = 'r';
  out[n] = '\0';
}

static poot_status unique_name(js_ctx *c, const char *hint, const char **out) {
  char base[48], name[64];
  sanitize(hint, base, sizeof base);
  snprintf(name, sizeof name, "%s", base);
  /* The next suffix to try is remembered per base, so many rules of one hint stay linear. */
  uint64_t k = 1;
  poot_map_get_str(&c->suffixes, base, &k);
  while (poot_map_get_str(&c->by_name, name, NULL))
    snprintf(name, sizeof name, "%s%llu", base, (unsigned long long)++k);
  POOT_TRY(poot_map_put_str(&c->suffixes, base, k));
  const char *a = poot_arena_strdup(&c->arena, name);
  if (!a) return poot__js_oom();
  *out = a;
  return POOT_OK_STATUS;
}

static poot_status add_entry(js_ctx *c, const char *name, const char *body, size_t *out_index) {
  js_rule r = {.name = name, .body = body, .nest = c->nest};
  size_t index = c->rules.len;
  if (index >= 65536)
    return poot__js_err(c, POOT_CAPACITY,
                        "the grammar needs more than 65,536 rules (the GBNF bound)");
  POOT_TRY(poot_vec_push(&c->rules, &r));
  POOT_TRY(poot_map_put_str(&c->by_name, name, index));
  c->text_bytes += strlen(name) + 6;
  *out_index = index;
  return POOT_OK_STATUS;
}

static poot_status note_body(js_ctx *c, size_t index, const char *body, size_t n) {
  c->text_bytes += n;
  if (c->text_bytes > JS_MAX_TEXT)
    return poot__js_err(c, POOT_CAPACITY, "the grammar would pass 1 MiB of text (the GBNF bound)");
  return poot_map_put(&c->by_body, body, n, index);
}

poot_status poot__js_rule(js_ctx *c, const char *hint, const char *body, size_t n,
                          const char **out_name) {
  uint64_t found = 0;
  if (poot_map_get(&c->by_body, body, n, &found)) {
    *out_name = POOT_VEC_AT(&c->rules, js_rule, found).name;
    return POOT_OK_STATUS;
  }
  const char *name = NULL;
  POOT_TRY(unique_name(c, hint, &name));
  char *b = poot_arena_strndup(&c->arena, body, n);
  if (!b) return poot__js_oom();
  size_t index = 0;
  POOT_TRY(add_entry(c, name, b, &index));
  POOT_TRY(note_body(c, index, b, n));
  *out_name = name;
  return POOT_OK_STATUS;
}

poot_status poot__js_rule_sb(js_ctx *c, const char *hint, poot_strbuf *body,
                             const char **out_name) {
  if (body->failed) return poot__js_oom();
  return poot__js_rule(c, hint, body->data, body->len, out_name);
}

poot_status poot__js_rule_reserve(js_ctx *c, const char *hint, size_t *out_index) {
  const char *name = NULL;
  POOT_TRY(unique_name(c, hint, &name));
  return add_entry(c, name, NULL, out_index);
}

poot_status poot__js_rule_set(js_ctx *c, size_t index, const char *body, size_t n) {
  char *b = poot_arena_strndup(&c->arena, body, n);
  if (!b) return poot__js_oom();
  POOT_VEC_AT(&c->rules, js_rule, index).body = b;
  c->text_bytes += n;
  if (c->text_bytes > JS_MAX_TEXT)
    return poot__js_err(c, POOT_CAPACITY, "the grammar would pass 1 MiB of text (the GBNF bound)");
  return POOT_OK_STATUS;
}

js_rule *poot__js_rule_at(js_ctx *c, size_t index) {
  return &POOT_VEC_AT(&c->rules, js_rule, index);
}

const char *poot__js_rule_name(const js_ctx *c, size_t index) {
  return POOT_VEC_AT(&c->rules, js_rule, index).name;
}

/* ------------------------------------------------------------- primitives */

/* The shared rules. "ws" is written by the caller (its bound is an option). A string's
 * character: anything but '"', '\' and controls, or an escape; \u escapes of surrogates are
 * left out so that one grammar character is one code point (Python counts code points). */
static const struct {
  const char *name, *body;
} PRIMS[] = {
    {"json-hex", "[0-9a-fA-F]"},
    {"json-u4", "[0-9a-cA-Ce-fE-F] json-hex json-hex json-hex | [dD] [0-7] json-hex json-hex"},
    {"json-char", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" json-u4)"},
    {"json-string", "\"\\\"\" json-char* \"\\\"\""},
    {"json-int", "\"-\"? (\"0\" | [1-9] [0-9]*)"},
    {"json-number", "json-int (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)?"},
    {"json-kchar", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" [\"\\\\bfnrt]"},
    {"json-key-tail", "json-kchar* \"\\\"\""},
    {"json-bool", "\"true\" | \"false\""},
    {"json-null", "\"null\""},
    {"json-value", "json-object | json-array | json-string | json-number | json-bool | json-null"},
    {"json-kv", "json-string@\":\"@json-value"},
    {"json-object", "\"{\"@( json-kv@( \",\"@json-kv@)* )? \"}\""},
    {"json-array", "\"[\"@( json-value@( \",\"@json-value@)* )? \"]\""},
};

/* Rules a primitive needs, by name. */
static const char *const PRIM_DEPS[][8] = {
    {"json-hex", NULL},
    {"json-u4", "json-hex", NULL},
    {"json-char", "json-u4", NULL},
    {"json-string", "json-char", NULL},
    {"json-int", NULL},
    {"json-number", "json-int", NULL},
    {"json-kchar", NULL},
    {"json-key-tail", "json-kchar", NULL},
    {"json-bool", NULL},
    {"json-null", NULL},
    {"json-value", "json-object", "json-array", "json-string", "json-number", "json-bool",
     "json-null", NULL},
    {"json-kv", "json-string", "json-value", NULL},
    {"json-object", "json-kv", "ws", NULL},
    {"json-array", "json-value", "ws", NULL},
};

static poot_status add_prim_body(js_ctx *c, const char *name, const char *tmpl) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (const char *t = tmpl; *t; t++) {
    if (*t == '@')
      poot_strbuf_puts(&sb, js_ws(c));
    else
      poot_strbuf_putc(&sb, *t);
  }
  poot_status st = POOT_OK_STATUS;
  size_t index = 0;
  if (sb.failed) {
    st = poot__js_oom();
  } else {
    char *b = poot_arena_strndup(&c->arena, sb.data, sb.len);
    st = b ? add_entry(c, name, b, &index) : poot__js_oom();
    if (!st) c->text_bytes += sb.len;
  }
  poot_strbuf_deinit(&sb);
  return st;
}

poot_status poot__js_prim(js_ctx *c, const char *name, const char **out_name) {
  uint64_t index = 0;
  *out_name = name;
  if (poot_map_get_str(&c->by_name, name, &index) && index != UINT64_MAX) return POOT_OK_STATUS;
  if (strcmp(name, "ws") == 0) {
    if (c->compact) return POOT_OK_STATUS;
    /* at most one line break, with at most max_ws spaces or tabs before and after it (a
     * model that loves new lines cannot fill the output with them) */
    char body[96];
    snprintf(body, sizeof body, "[ \\t]{0,%u} ((\"\\n\" | \"\\r\\n\") [ \\t]{0,%u})?", c->max_ws,
             c->max_ws);
    char *b = poot_arena_strdup(&c->arena, body);
    if (!b) return poot__js_oom();
    size_t at = 0;
    return add_entry(c, "ws", b, &at);
  }
  for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++) {
    if (strcmp(PRIMS[i].name, name) != 0) continue;
    POOT_TRY(add_prim_body(c, name, PRIMS[i].body));
    const char *dep = NULL;
    for (size_t d = 1; d < 8 && PRIM_DEPS[i][d]; d++)
      POOT_TRY(poot__js_prim(c, PRIM_DEPS[i][d], &dep));
    return POOT_OK_STATUS;
  }
  return poot_status_make(POOT_INTERNAL, "json schema: no primitive rule '%s'", name);
}

poot_status poot__js_fixed(js_ctx *c, const char *name, const char *body) {
  uint64_t index = 0;
  if (poot_map_get_str(&c->by_name, name, &index) && index != UINT64_MAX) return POOT_OK_STATUS;
  char *b = poot_arena_strdup(&c->arena, body);
  if (!b) return poot__js_oom();
  size_t at = 0;
  POOT_TRY(add_entry(c, name, b, &at));
  c->text_bytes += strlen(body);
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------------------- literals */

bool poot__js_utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char b = u[i];
    size_t len = b < 0x80             ? 1
                 : (b & 0xE0) == 0xC0 ? 2
                 : (b & 0xF0) == 0xE0 ? 3
                 : (b & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (!len || i + len > n) return false;
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (size_t k = 1; k < len; k++) {
      if ((u[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (u[i + k] & 0x3Fu);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

poot_status poot_gbnf_literal(poot_strbuf *sb, const char *s, size_t n) {
  if (!poot__js_utf8_valid(s, n))
    return poot_status_make(POOT_INVALID_ARGUMENT, "gbnf: a literal is not valid UTF-8");
  poot_strbuf_putc(sb, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char b = (unsigned char)s[i];
    if (b == '"' || b == '\\') {
      poot_strbuf_putc(sb, '\\');
      poot_strbuf_putc(sb, (char)b);
    } else if (b == '\n') {
      poot_strbuf_puts(sb, "\\n");
    } else if (b == '\r') {
      poot_strbuf_puts(sb, "\\r");
    } else if (b == '\t') {
      poot_strbuf_puts(sb, "\\t");
    } else if (b < 0x20 || b == 0x7F) {
      poot_strbuf_printf(sb, "\\x%02X", b);
    } else {
      poot_strbuf_putc(sb, (char)b);
    }
  }
  poot_strbuf_putc(sb, '"');
  return POOT_OK_STATUS;
}

poot_status poot__js_literal(js_ctx *c, poot_strbuf *sb, const char *s, size_t n) {
  if (!poot__js_utf8_valid(s, n))
    return poot__js_err(c, POOT_INVALID_ARGUMENT,
                        "a string is not valid UTF-8 (a lone surrogate escape?)");
  return poot_gbnf_literal(sb, s, n);
}

/* Scalars as their compact text; arrays and objects token by token with white space between
 * (members in the value's order). */
poot_status poot__js_json_literal(js_ctx *c, poot_strbuf *sb, const poot_json *v) {
  const char *w = js_ws(c);
  if (v->type == POOT_JSON_ARRAY || v->type == POOT_JSON_OBJECT) {
    bool obj = v->type == POOT_JSON_OBJECT;
    if (c->depth + 1 >= JS_MAX_DEPTH)
      return poot__js_err(c, POOT_UNSUPPORTED, "a const or enum value nested deeper than %d",
                          JS_MAX_DEPTH);
    c->depth++;
    poot_strbuf_printf(sb, "\"%c\"%s", obj ? '{' : '[', w);
    poot_status st = POOT_OK_STATUS;
    for (size_t i = 0; i < v->len && !st; i++) {
      if (i) poot_strbuf_printf(sb, "\",\"%s", w);
      if (obj) {
        poot_json key = {.type = POOT_JSON_STRING, .str = v->keys[i], .len = v->key_lens[i]};
        st = poot__js_json_literal(c, sb, &key);
        if (!st) poot_strbuf_printf(sb, "%s\":\"%s", w, w);
      }
      if (!st) st = poot__js_json_literal(c, sb, v->items[i]);
      poot_strbuf_puts(sb, w);
    }
    poot_strbuf_printf(sb, "\"%c\"", obj ? '}' : ']');
    c->depth--;
    return st;
  }
  poot_strbuf text;
  poot_strbuf_init(&text);
  poot_json_write(&text, v, false, false);
  poot_status st = text.failed ? poot__js_oom() : poot__js_literal(c, sb, text.data, text.len);
  poot_strbuf_deinit(&text);
  return st;
}

/* ------------------------------------------------------------- repetition */

poot_status poot__js_count(js_ctx *c, const poot_json *schema, const char *key, uint64_t dflt,
                           uint64_t *out) {
  *out = dflt;
  const poot_json *v = poot_json_get(schema, key);
  if (!v) return POOT_OK_STATUS;
  /* Past 10^18 every double is integral; such a count is kept as 10^18, which the length
   * and item bounds then refuse as UNSUPPORTED (no cast of an out-of-range double). */
  bool huge = v->type == POOT_JSON_NUMBER && v->number > 1e18;
  if (v->type != POOT_JSON_NUMBER || !(v->number >= 0) ||
      (!huge && v->number != (double)(uint64_t)v->number)) {
    size_t old = poot__js_path_push(c, key);
    poot_status st =
        poot__js_err(c, POOT_INVALID_ARGUMENT, "'%s' must be a non-negative integer", key);
    poot__js_path_pop(c, old);
    return st;
  }
  *out = huge ? 1000000000000000000ull : (uint64_t)v->number;
  return POOT_OK_STATUS;
}

static void put_count(poot_strbuf *sb, const char *unit, uint64_t min, uint64_t max) {
  if (max == 0) return;
  if (min == 0 && max == JS_INF)
    poot_strbuf_printf(sb, " %s*", unit);
  else if (min == 1 && max == JS_INF)
    poot_strbuf_printf(sb, " %s+", unit);
  else if (min == 0 && max == 1)
    poot_strbuf_printf(sb, " %s?", unit);
  else if (min == 1 && max == 1)
    poot_strbuf_printf(sb, " %s", unit);
  else if (max == JS_INF)
    poot_strbuf_printf(sb, " %s{%llu,}", unit, (unsigned long long)min);
  else if (min == max)
    poot_strbuf_printf(sb, " %s{%llu}", unit, (unsigned long long)min);
  else
    poot_strbuf_printf(sb, " %s{%llu,%llu}", unit, (unsigned long long)min,
                       (unsigned long long)max);
}

/* Up to n more units (n > JS_MAX_REPEAT): G(n) ::= chunk G(n - 1000) | unit{0,999}. A text
 * of length L ≤ n takes the first alternative exactly when L ≥ 1000, so the rule is exact. */
static poot_status upto_rule(js_ctx *c, const char *unit, const char *chunk, uint64_t n,
                             const char *hint, const char **out_name) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  if (n <= JS_MAX_REPEAT) {
    put_count(&sb, unit, 0, n);
  } else {
    const char *rest = NULL, *tail = NULL;
    st = upto_rule(c, unit, chunk, n - JS_MAX_REPEAT, hint, &rest);
    put_count(&sb, unit, 0, JS_MAX_REPEAT - 1); /* one shared rule: the parser expands it */
    if (!st) st = poot__js_rule_sb(c, hint, &sb, &tail);
    poot_strbuf_clear(&sb);
    if (!st) poot_strbuf_printf(&sb, "%s %s | %s", chunk, rest, tail);
  }
  if (!st) st = poot__js_rule_sb(c, hint, &sb, out_name);
  poot_strbuf_deinit(&sb);
  return st;
}

poot_status poot__js_repeat(js_ctx *c, const char *unit, uint64_t min, uint64_t max,
                            const char *hint, poot_strbuf *sb) {
  if (min > JS_MAX_LENGTH || (max != JS_INF && max > JS_MAX_LENGTH))
    return poot__js_err(c, POOT_UNSUPPORTED,
                        "a length or item count above %u (finite bounds up to %u are supported)",
                        JS_MAX_LENGTH, JS_MAX_LENGTH);
  if (min <= JS_MAX_REPEAT && (max == JS_INF || max <= JS_MAX_REPEAT)) {
    put_count(sb, unit, min, max);
    return POOT_OK_STATUS;
  }
  poot_strbuf body;
  poot_strbuf_init(&body);
  put_count(&body, unit, JS_MAX_REPEAT, JS_MAX_REPEAT);
  char chunk_hint[64];
  snprintf(chunk_hint, sizeof chunk_hint, "%s-1000", hint);
  const char *chunk = NULL;
  poot_status st = poot__js_rule_sb(c, chunk_hint, &body, &chunk);
  poot_strbuf_deinit(&body);
  POOT_TRY(st);
  put_count(sb, chunk, min / JS_MAX_REPEAT, min / JS_MAX_REPEAT);
  put_count(sb, unit, min % JS_MAX_REPEAT, min % JS_MAX_REPEAT);
  if (max == JS_INF) {
    put_count(sb, unit, 0, JS_INF);
  } else if (max > min) {
    const char *upto = NULL;
    POOT_TRY(upto_rule(c, unit, chunk, max - min, hint, &upto));
    poot_strbuf_printf(sb, " %s", upto);
  }
  return POOT_OK_STATUS;
}
