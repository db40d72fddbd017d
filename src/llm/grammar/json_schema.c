/* JSON Schema (a draft 2020-12 subset) → GBNF: the schema walk, objects, arrays, the
 * combinators and $ref, and the public calls. docs/json_schema.md gives the subset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_schema_impl.h"

static poot_status visit(js_ctx *c, const poot_json *s, const char *hint, const char **out);

/* ---------------------------------------------------------------- keywords */

typedef enum { KW_ANNOTATION, KW_SUPPORTED, KW_UNSUPPORTED } kw_class;

static const char *const SUPPORTED[] = {"type",
                                        "properties",
                                        "required",
                                        "additionalProperties",
                                        "items",
                                        "prefixItems",
                                        "additionalItems",
                                        "enum",
                                        "const",
                                        "anyOf",
                                        "oneOf",
                                        "allOf",
                                        "$ref",
                                        "minLength",
                                        "maxLength",
                                        "pattern",
                                        "format",
                                        "minItems",
                                        "maxItems",
                                        "minimum",
                                        "maximum",
                                        "exclusiveMinimum",
                                        "exclusiveMaximum",
                                        NULL};
static const char *const UNSUPPORTED[] = {"not",
                                          "if",
                                          "then",
                                          "else",
                                          "dependentRequired",
                                          "dependentSchemas",
                                          "dependencies",
                                          "patternProperties",
                                          "propertyNames",
                                          "minProperties",
                                          "maxProperties",
                                          "unevaluatedProperties",
                                          "unevaluatedItems",
                                          "contains",
                                          "minContains",
                                          "maxContains",
                                          "uniqueItems",
                                          "multipleOf",
                                          "$dynamicRef",
                                          "$dynamicAnchor",
                                          "$recursiveRef",
                                          "$recursiveAnchor",
                                          NULL};

static bool in_list(const char *const *list, const char *k) {
  for (; *list; list++)
    if (strcmp(*list, k) == 0) return true;
  return false;
}

/* Keywords that are not in the vocabulary are annotations, as the specification says. */
static kw_class classify(const char *k) {
  if (in_list(SUPPORTED, k)) return KW_SUPPORTED;
  if (in_list(UNSUPPORTED, k)) return KW_UNSUPPORTED;
  return KW_ANNOTATION;
}

/* A keyword whose value makes it a no-op is accepted (uniqueItems false, minProperties 0,
 * multipleOf 1 on integers is left to the number code). */
static bool trivial(const char *k, const poot_json *v) {
  if (strcmp(k, "uniqueItems") == 0) return v->type == POOT_JSON_BOOL && !v->boolean;
  if (strcmp(k, "minProperties") == 0) return v->type == POOT_JSON_NUMBER && v->number == 0;
  return false;
}

static poot_status check_keywords(js_ctx *c, const poot_json *s) {
  for (size_t i = 0; i < s->len; i++) {
    if (classify(s->keys[i]) != KW_UNSUPPORTED || trivial(s->keys[i], s->items[i])) continue;
    char what[96];
    snprintf(what, sizeof what, "'%.64s'", s->keys[i]);
    return poot__js_unsupported(c, what);
  }
  return POOT_OK_STATUS;
}

/* True when `s` has a keyword other than annotations and those in `except`. */
static bool has_other(const poot_json *s, const char *const *except, const char **out_key) {
  for (size_t i = 0; i < s->len; i++) {
    if (classify(s->keys[i]) == KW_ANNOTATION || in_list(except, s->keys[i])) continue;
    if (out_key) *out_key = s->keys[i];
    return true;
  }
  return false;
}

static poot_status wrong_type(js_ctx *c, const char *key, const char *want) {
  size_t old = poot__js_path_push(c, key);
  poot_status st = poot__js_err(c, POOT_INVALID_ARGUMENT, "'%s' must be %s", key, want);
  poot__js_path_pop(c, old);
  return st;
}

static poot_status nothing(js_ctx *c) {
  return poot__js_err(c, POOT_INVALID_ARGUMENT,
                      "the schema accepts no value (a false schema, an empty enum or "
                      "contradicting bounds)");
}

/* ------------------------------------------------------------------- types */

enum {
  T_NULL = 1,
  T_BOOL = 2,
  T_OBJECT = 4,
  T_ARRAY = 8,
  T_NUMBER = 16,
  T_STRING = 32,
  T_INTEGER = 64,
  T_ALL = 127
};

static int type_bit(const char *name) {
  static const char *const names[] = {"null",   "boolean", "object", "array",
                                      "number", "string",  "integer"};
  for (int i = 0; i < 7; i++)
    if (strcmp(names[i], name) == 0) return 1 << i;
  return 0;
}

static poot_status type_set(js_ctx *c, const poot_json *s, int *out) {
  *out = T_ALL;
  const poot_json *t = poot_json_get(s, "type");
  if (!t) return POOT_OK_STATUS;
  const char *want = "a type name or an array of them";
  if (t->type == POOT_JSON_STRING) {
    *out = type_bit(t->str);
    if (!*out) return wrong_type(c, "type", want);
    return POOT_OK_STATUS;
  }
  if (t->type != POOT_JSON_ARRAY || t->len == 0) return wrong_type(c, "type", want);
  *out = 0;
  for (size_t i = 0; i < t->len; i++) {
    int b = t->items[i]->type == POOT_JSON_STRING ? type_bit(t->items[i]->str) : 0;
    if (!b) return wrong_type(c, "type", want);
    *out |= b;
  }
  return POOT_OK_STATUS;
}

/* The JSON type of a value as type bits (an integral number is both). */
static int value_bits(const poot_json *v) {
  switch (v->type) {
    case POOT_JSON_NULL:
      return T_NULL;
    case POOT_JSON_BOOL:
      return T_BOOL;
    case POOT_JSON_OBJECT:
      return T_OBJECT;
    case POOT_JSON_ARRAY:
      return T_ARRAY;
    case POOT_JSON_STRING:
      return T_STRING;
    case POOT_JSON_NUMBER: {
      bool integral = v->str && !strpbrk(v->str, ".eE");
      return T_NUMBER | (integral ? T_INTEGER : 0);
    }
  }
  return 0;
}

/* -------------------------------------------------------------- enum/const */

/* Equal compact texts (enough for enum ∩ const, which is rare). */
static bool same_json(const poot_json *a, const poot_json *b) {
  poot_strbuf x, y;
  poot_strbuf_init(&x);
  poot_strbuf_init(&y);
  poot_json_write(&x, a, false, false);
  poot_json_write(&y, b, false, false);
  bool eq = !x.failed && !y.failed && x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
  poot_strbuf_deinit(&x);
  poot_strbuf_deinit(&y);
  return eq;
}

static poot_status enum_rule(js_ctx *c, const poot_json *s, const char *hint, const char **out) {
  static const char *const allowed[] = {"enum", "const", "type", NULL};
  const char *other = NULL;
  if (has_other(s, allowed, &other)) {
    char what[128];
    snprintf(what, sizeof what, "'enum' or 'const' together with '%.64s'", other);
    return poot__js_unsupported(c, what);
  }
  int types = T_ALL;
  POOT_TRY(type_set(c, s, &types));
  const poot_json *e = poot_json_get(s, "enum");
  const poot_json *k = poot_json_get(s, "const");
  if (e && e->type != POOT_JSON_ARRAY) return wrong_type(c, "enum", "an array");
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  size_t n = e ? e->len : 1;
  bool any = false;
  for (size_t i = 0; i < n && !st; i++) {
    const poot_json *v = e ? e->items[i] : k;
    if (k && e && !same_json(v, k)) continue;
    if (!(value_bits(v) & types)) continue;
    if (any) poot_strbuf_puts(&sb, " | ");
    st = poot__js_json_literal(c, &sb, v);
    any = true;
  }
  if (!st && any) st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* ----------------------------------------------------------------- objects */

typedef struct js_prop {
  const char *kv; /* rule name of `"key" ws ":" ws value` */
  bool required;
} js_prop;

static bool is_required(const poot_json *req, const char *key, size_t klen) {
  for (size_t i = 0; req && i < req->len; i++)
    if (req->items[i]->len == klen && memcmp(req->items[i]->str, key, klen) == 0) return true;
  return false;
}

static bool has_key(const poot_json *obj, const char *key, size_t klen) {
  for (size_t i = 0; obj && i < obj->len; i++)
    if (obj->key_lens[i] == klen && memcmp(obj->keys[i], key, klen) == 0) return true;
  return false;
}

/* `"key" ws ":" ws value` as a rule. */
static poot_status kv_rule(js_ctx *c, const char *key, size_t klen, const char *value,
                           const char *hint, const char **out) {
  poot_strbuf text, sb;
  poot_strbuf_init(&text);
  poot_strbuf_init(&sb);
  poot_json_write_string(&text, key, klen, false);
  poot_status st = text.failed ? poot__js_oom() : poot__js_literal(c, &sb, text.data, text.len);
  if (!st) {
    poot_strbuf_printf(&sb, "%s\":\"%s%s", js_ws(c), js_ws(c), value);
    char h[64];
    snprintf(h, sizeof h, "%s-kv", hint);
    st = poot__js_rule_sb(c, h, &sb, out);
  }
  poot_strbuf_deinit(&text);
  poot_strbuf_deinit(&sb);
  return st;
}

/* An expression as a rule (or "" when empty). */
static poot_status expr_rule(js_ctx *c, const char *hint, poot_strbuf *sb, const char **out) {
  if (sb->failed) return poot__js_oom();
  if (sb->len == 0) {
    *out = "";
    return POOT_OK_STATUS;
  }
  return poot__js_rule_sb(c, hint, sb, out);
}

/* The members after property i given that one was written (rest) or not (first):
 * rest(i)  = "," ws kv_i ws rest(i+1)  [| rest(i+1) when i is optional]
 * first(i) = kv_i ws rest(i+1)         [| first(i+1) when i is optional]
 * and past the last property the additional members, so the language is every subsequence
 * in the schema's order that holds the required members. */
static poot_status member_chain(js_ctx *c, const js_prop *p, size_t n, const char *add,
                                const char *hint, const char **out_first) {
  const char *w = js_ws(c);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  char h[64];
  snprintf(h, sizeof h, "%s-rest", hint);
  const char *rest = "", *first = "";
  size_t first_req = n;
  for (size_t i = 0; i < n; i++)
    if (p[i].required && first_req == n) first_req = i;
  poot_status st = POOT_OK_STATUS;
  if (add) {
    poot_strbuf_printf(&sb, "( \",\"%s%s%s)*", w, add, w);
    st = expr_rule(c, h, &sb, &rest);
    poot_strbuf_clear(&sb);
    if (!st && first_req == n) {
      poot_strbuf_printf(&sb, "( %s%s%s )?", add, w, rest);
      st = expr_rule(c, h, &sb, &first);
      poot_strbuf_clear(&sb);
    }
  }
  for (size_t i = n; i-- > 0 && !st;) {
    const char *next_rest = rest, *next_first = first;
    if (i <= first_req) {
      bool opt_empty = !p[i].required && !next_first[0];
      poot_strbuf_printf(&sb, "%s%s%s%s%s", opt_empty ? "( " : "", p[i].kv, w, next_rest,
                         opt_empty ? " )?" : "");
      if (!p[i].required && next_first[0]) poot_strbuf_printf(&sb, " | %s", next_first);
      st = expr_rule(c, h, &sb, &first);
      poot_strbuf_clear(&sb);
    }
    if (!st && i > 0) {
      bool opt_empty = !p[i].required && !next_rest[0];
      poot_strbuf_printf(&sb, "%s\",\"%s%s%s%s%s", opt_empty ? "( " : "", w, p[i].kv, w, next_rest,
                         opt_empty ? " )?" : "");
      if (!p[i].required && next_rest[0]) poot_strbuf_printf(&sb, " | %s", next_rest);
      st = expr_rule(c, h, &sb, &rest);
      poot_strbuf_clear(&sb);
    }
  }
  poot_strbuf_deinit(&sb);
  *out_first = first;
  return st;
}

/* The additional members' "key" ws ":" ws value rule, or NULL when none are allowed. */
static poot_status additional_rule(js_ctx *c, const poot_json *s, const poot_json *props,
                                   const poot_json *extra_keys, const char *hint,
                                   const char **out) {
  *out = NULL;
  const poot_json *ap = poot_json_get(s, "additionalProperties");
  bool allowed = ap ? !(ap->type == POOT_JSON_BOOL && !ap->boolean) : !(c->strict && props);
  if (!allowed) return POOT_OK_STATUS;
  const char *value = NULL;
  if (ap) {
    size_t old = poot__js_path_push(c, "additionalProperties");
    char h[64];
    snprintf(h, sizeof h, "%s-additional", hint);
    poot_status st = visit(c, ap, h, &value);
    poot__js_path_pop(c, old);
    POOT_TRY(st);
    if (!value) return POOT_OK_STATUS;
  } else {
    POOT_TRY(poot__js_prim(c, "json-value", &value));
  }
  /* The key must not be a declared one (its value would escape the declared schema). */
  size_t nk = (props ? props->len : 0) + (extra_keys ? extra_keys->len : 0);
  const char **keys = POOT_ARENA_NEW_ARRAY(&c->arena, const char *, nk + 1);
  size_t *lens = POOT_ARENA_NEW_ARRAY(&c->arena, size_t, nk + 1);
  if (!keys || !lens) return poot__js_oom();
  size_t k = 0;
  for (size_t i = 0; props && i < props->len; i++, k++) {
    keys[k] = props->keys[i];
    lens[k] = props->key_lens[i];
  }
  for (size_t i = 0; extra_keys && i < extra_keys->len; i++, k++) {
    keys[k] = extra_keys->items[i]->str;
    lens[k] = extra_keys->items[i]->len;
  }
  const char *key = NULL;
  char h[64];
  snprintf(h, sizeof h, "%s-key", hint);
  POOT_TRY(poot__js_key_not_in(c, keys, lens, k, h, &key));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_printf(&sb, "%s%s\":\"%s%s", key, js_ws(c), js_ws(c), value);
  snprintf(h, sizeof h, "%s-additional-kv", hint);
  poot_status st = poot__js_rule_sb(c, h, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

static poot_status check_required(js_ctx *c, const poot_json *req) {
  if (!req) return POOT_OK_STATUS;
  if (req->type != POOT_JSON_ARRAY) return wrong_type(c, "required", "an array of strings");
  for (size_t i = 0; i < req->len; i++)
    if (req->items[i]->type != POOT_JSON_STRING)
      return wrong_type(c, "required", "an array of strings");
  return POOT_OK_STATUS;
}

/* The declared members, then the required names that are not declared (their value is
 * additionalProperties' schema). */
static poot_status declared_props(js_ctx *c, const poot_json *s, const poot_json *props,
                                  const poot_json *req, const char *hint, js_prop *p,
                                  size_t *out_n) {
  (void)hint;
  size_t n = 0;
  for (size_t i = 0; props && i < props->len; i++) {
    size_t old = poot__js_path_push(c, "properties");
    poot__js_path_push(c, props->keys[i]);
    const char *value = NULL;
    poot_status st = visit(c, props->items[i], props->keys[i], &value);
    bool req_i = is_required(req, props->keys[i], props->key_lens[i]);
    if (!st && !value && req_i) st = nothing(c);
    if (!st && value)
      st = kv_rule(c, props->keys[i], props->key_lens[i], value, props->keys[i], &p[n].kv);
    poot__js_path_pop(c, old);
    POOT_TRY(st);
    if (value) p[n++].required = req_i;
  }
  const poot_json *ap = poot_json_get(s, "additionalProperties");
  for (size_t i = 0; req && i < req->len; i++) {
    const poot_json *key = req->items[i];
    if (has_key(props, key->str, key->len)) continue;
    const char *value = NULL;
    size_t old = poot__js_path_push(c, "additionalProperties");
    poot_status st = POOT_OK_STATUS;
    if (ap)
      st = visit(c, ap, key->str, &value);
    else if (!(c->strict && props))
      st = poot__js_prim(c, "json-value", &value);
    poot__js_path_pop(c, old);
    POOT_TRY(st);
    if (!value) {
      old = poot__js_path_push(c, "required");
      st = poot__js_err(c, POOT_INVALID_ARGUMENT,
                        "required property '%.64s' is not allowed by additionalProperties",
                        key->str);
      poot__js_path_pop(c, old);
      return st;
    }
    POOT_TRY(kv_rule(c, key->str, key->len, value, key->str, &p[n].kv));
    p[n++].required = true;
  }
  *out_n = n;
  return POOT_OK_STATUS;
}

static poot_status object_rule(js_ctx *c, const poot_json *s, const char *hint, const char **out) {
  const poot_json *props = poot_json_get(s, "properties");
  const poot_json *req = poot_json_get(s, "required");
  if (props && props->type != POOT_JSON_OBJECT) return wrong_type(c, "properties", "an object");
  POOT_TRY(check_required(c, req));
  const poot_json *ap = poot_json_get(s, "additionalProperties");
  if (ap && ap->type != POOT_JSON_BOOL && ap->type != POOT_JSON_OBJECT)
    return wrong_type(c, "additionalProperties", "a schema (an object or a boolean)");
  if (!props && !req && (!ap || (ap->type == POOT_JSON_BOOL && ap->boolean)))
    return poot__js_prim(c, "json-object", out);
  size_t cap = (props ? props->len : 0) + (req ? req->len : 0) + 1;
  js_prop *p = POOT_ARENA_NEW_ARRAY(&c->arena, js_prop, cap);
  if (!p) return poot__js_oom();
  size_t n = 0;
  POOT_TRY(declared_props(c, s, props, req, hint, p, &n));
  const char *add = NULL, *first = NULL;
  POOT_TRY(additional_rule(c, s, props, req, hint, &add));
  POOT_TRY(member_chain(c, p, n, add, hint, &first));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_printf(&sb, "\"{\"%s%s \"}\"", js_ws(c), first);
  poot_status st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* ------------------------------------------------------------------ arrays */

typedef struct js_items {
  const char **prefix; /* rule names of the first k items */
  size_t k;
  const char *rest; /* later items; NULL: none allowed */
  uint64_t min, max;
} js_items;

static poot_status item_schemas(js_ctx *c, const poot_json *s, const char *hint, js_items *it) {
  const poot_json *prefix = poot_json_get(s, "prefixItems");
  const poot_json *items = poot_json_get(s, "items");
  const char *rest_key = "items", *prefix_key = "prefixItems";
  if (!prefix && items && items->type == POOT_JSON_ARRAY) { /* draft 7's tuple form */
    prefix = items;
    prefix_key = "items";
    rest_key = "additionalItems";
    items = poot_json_get(s, "additionalItems");
  }
  if (prefix && prefix->type != POOT_JSON_ARRAY) return wrong_type(c, prefix_key, "an array");
  if (prefix && prefix->len > JS_MAX_PREFIX)
    return poot__js_err(c, POOT_UNSUPPORTED, "'%s' with more than %d schemas", prefix_key,
                        JS_MAX_PREFIX);
  if (items && items->type != POOT_JSON_OBJECT && items->type != POOT_JSON_BOOL)
    return wrong_type(c, rest_key, "a schema (an object or a boolean)");
  it->prefix = POOT_ARENA_NEW_ARRAY(&c->arena, const char *, prefix ? prefix->len + 1 : 1);
  if (!it->prefix) return poot__js_oom();
  char h[64];
  for (size_t j = 0; prefix && j < prefix->len; j++) {
    size_t old = poot__js_path_push(c, prefix_key);
    poot__js_path_push_index(c, j);
    snprintf(h, sizeof h, "%s-%zu", hint, j);
    poot_status st = visit(c, prefix->items[j], h, &it->prefix[j]);
    poot__js_path_pop(c, old);
    POOT_TRY(st);
    if (!it->prefix[j]) { /* no value fits item j: the array is shorter */
      it->max = it->max < j ? it->max : j;
      it->rest = NULL;
      it->k = j;
      return POOT_OK_STATUS;
    }
    it->k = j + 1;
  }
  it->rest = NULL;
  if (!items) return poot__js_prim(c, "json-value", &it->rest);
  size_t old = poot__js_path_push(c, rest_key);
  snprintf(h, sizeof h, "%s-item", hint);
  poot_status st = visit(c, items, h, &it->rest);
  poot__js_path_pop(c, old);
  return st;
}

/* After i items: "," ws item_i ws after(i+1) for i < k (optional once i ≥ min), then the
 * repeated rest. */
static poot_status items_after(js_ctx *c, const js_items *it, size_t i, const char *hint,
                               const char **out) {
  const char *w = js_ws(c);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  char h[64];
  snprintf(h, sizeof h, "%s-after", hint);
  if (i >= it->k) {
    if (it->rest && (it->max == JS_INF || it->max > i)) {
      poot_strbuf_printf(&sb, "\",\"%s%s%s", w, it->rest, w);
      const char *unit = NULL;
      char uh[64];
      snprintf(uh, sizeof uh, "%s-next", hint);
      st = poot__js_rule_sb(c, uh, &sb, &unit);
      poot_strbuf_clear(&sb);
      uint64_t lo = it->min > i ? it->min - i : 0;
      uint64_t hi = it->max == JS_INF ? JS_INF : it->max - i;
      if (!st) st = poot__js_repeat(c, unit, lo, hi, h, &sb);
    }
  } else if (it->max > i) {
    const char *next = NULL;
    st = items_after(c, it, i + 1, hint, &next);
    bool opt = i >= it->min;
    if (!st)
      poot_strbuf_printf(&sb, "%s\",\"%s%s%s%s%s", opt ? "( " : "", w, it->prefix[i], w, next,
                         opt ? " )?" : "");
  }
  if (!st) st = expr_rule(c, h, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

static poot_status array_rule(js_ctx *c, const poot_json *s, const char *hint, const char **out) {
  js_items it = {0};
  POOT_TRY(poot__js_count(c, s, "minItems", 0, &it.min));
  POOT_TRY(poot__js_count(c, s, "maxItems", JS_INF, &it.max));
  POOT_TRY(item_schemas(c, s, hint, &it));
  if (!it.rest && it.max > it.k) it.max = it.k;
  *out = NULL;
  if (it.min > it.max) return POOT_OK_STATUS;
  const char *w = js_ws(c);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  if (it.max == 0) {
    poot_strbuf_printf(&sb, "\"[\"%s\"]\"", w);
  } else {
    const char *after = NULL;
    st = items_after(c, &it, 1, hint, &after);
    const char *first = it.k ? it.prefix[0] : it.rest;
    bool opt = it.min == 0;
    if (!st)
      poot_strbuf_printf(&sb, "\"[\"%s%s%s%s%s%s \"]\"", w, opt ? "( " : "", first, w, after,
                         opt ? " )?" : "");
  }
  if (!st) st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* -------------------------------------------------------------------- $ref */

static poot_status resolve(js_ctx *c, const poot_json *ref, const poot_json **out) {
  if (ref->type != POOT_JSON_STRING) return wrong_type(c, "$ref", "a string");
  const char *r = ref->str;
  if (r[0] != '#' || (r[1] && r[1] != '/')) {
    char what[160];
    snprintf(what, sizeof what, "'$ref' to '%.80s' (only references into the document, '#/…')", r);
    return poot__js_unsupported(c, what);
  }
  const poot_json *cur = c->root;
  char seg[256];
  for (const char *p = r + 1; *p;) {
    p++; /* '/' */
    size_t n = 0;
    for (; *p && *p != '/'; p++) {
      char ch = *p;
      if (ch == '~' && (p[1] == '0' || p[1] == '1')) ch = *++p == '0' ? '~' : '/';
      if (n + 1 < sizeof seg) seg[n++] = ch;
    }
    seg[n] = '\0';
    const poot_json *next = NULL;
    if (cur->type == POOT_JSON_OBJECT) {
      for (size_t i = 0; i < cur->len && !next; i++)
        if (cur->key_lens[i] == n && memcmp(cur->keys[i], seg, n) == 0) next = cur->items[i];
    } else if (cur->type == POOT_JSON_ARRAY) {
      char *end = NULL;
      unsigned long long k = strtoull(seg, &end, 10);
      if (n && *end == '\0' && k < cur->len) next = cur->items[k];
    }
    if (!next) {
      size_t old = poot__js_path_push(c, "$ref");
      poot_status st =
          poot__js_err(c, POOT_INVALID_ARGUMENT, "'$ref' '%.80s' points at nothing", r);
      poot__js_path_pop(c, old);
      return st;
    }
    cur = next;
  }
  *out = cur;
  return POOT_OK_STATUS;
}

static const char *last_segment(const char *r) {
  const char *s = strrchr(r, '/');
  return s && s[1] ? s + 1 : "root";
}

/* A rule per reference, reserved before its target is compiled so that a recursive
 * reference names it. A cycle that enters no object or array would be left recursion. */
static poot_status ref_rule(js_ctx *c, const poot_json *ref, const char **out) {
  uint64_t idx = 0;
  if (poot_map_get(&c->refs, ref->str, ref->len, &idx)) {
    js_rule *r = poot__js_rule_at(c, idx);
    if (!r->body && r->nest == c->nest)
      return poot__js_err(c, POOT_INVALID_ARGUMENT,
                          "'$ref' '%.80s' refers to itself without an object or array in "
                          "between (the schema would never end)",
                          ref->str);
    *out = r->name;
    return POOT_OK_STATUS;
  }
  const poot_json *target = NULL;
  POOT_TRY(resolve(c, ref, &target));
  size_t index = 0;
  POOT_TRY(poot__js_rule_reserve(c, last_segment(ref->str), &index));
  POOT_TRY(poot_map_put(&c->refs, ref->str, ref->len, index));
  char *saved = poot_arena_strndup(&c->arena, c->path.data, c->path.len);
  if (!saved) return poot__js_oom();
  poot_strbuf_clear(&c->path);
  poot_strbuf_puts(&c->path, ref->str + 1);
  const char *name = NULL;
  poot_status st = visit(c, target, last_segment(ref->str), &name);
  if (!st && !name) st = nothing(c);
  poot_strbuf_clear(&c->path);
  poot_strbuf_puts(&c->path, saved);
  POOT_TRY(st);
  POOT_TRY(poot__js_rule_set(c, index, name, strlen(name)));
  *out = poot__js_rule_name(c, index);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------- allOf */

typedef struct js_pair {
  const char *key;
  size_t len;
  poot_json *val;
} js_pair;

typedef struct js_merge {
  js_pair *kw, *props;
  size_t n, cap, pn, pcap;
  poot_json **req;
  size_t rn, rcap;
  int types;
  uint32_t with_props;
  poot_json *ap;
} js_merge;

static poot_status grow(js_ctx *c, void **arr, size_t elem, size_t *cap, size_t need) {
  if (need <= *cap) return POOT_OK_STATUS;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *n = poot_arena_alloc(&c->arena, ncap * elem, 8);
  if (!n) return poot__js_oom();
  if (*arr) memcpy(n, *arr, *cap * elem);
  *arr = n;
  *cap = ncap;
  return POOT_OK_STATUS;
}

static poot_status merge_conflict(js_ctx *c, const char *key) {
  char what[160];
  snprintf(what, sizeof what, "'allOf' whose members both give '%.64s'", key);
  return poot__js_unsupported(c, what);
}

static int expand_types(int t) {
  return (t & T_NUMBER) ? (t | T_INTEGER) : t;
}

static poot_status merge_props(js_ctx *c, js_merge *m, const poot_json *props) {
  if (props->type != POOT_JSON_OBJECT) return wrong_type(c, "properties", "an object");
  m->with_props++;
  for (size_t i = 0; i < props->len; i++) {
    for (size_t j = 0; j < m->pn; j++)
      if (m->props[j].len == props->key_lens[i] &&
          memcmp(m->props[j].key, props->keys[i], m->props[j].len) == 0) {
        char what[64];
        snprintf(what, sizeof what, "property %.40s", props->keys[i]);
        return merge_conflict(c, what);
      }
    POOT_TRY(grow(c, (void **)&m->props, sizeof *m->props, &m->pcap, m->pn + 1));
    m->props[m->pn++] = (js_pair){props->keys[i], props->key_lens[i], props->items[i]};
  }
  return POOT_OK_STATUS;
}

static poot_status merge_key(js_ctx *c, js_merge *m, const char *key, poot_json *v) {
  if (strcmp(key, "properties") == 0) return merge_props(c, m, v);
  if (strcmp(key, "required") == 0) {
    POOT_TRY(check_required(c, v));
    POOT_TRY(grow(c, (void **)&m->req, sizeof *m->req, &m->rcap, m->rn + v->len));
    for (size_t i = 0; i < v->len; i++) m->req[m->rn++] = v->items[i];
    return POOT_OK_STATUS;
  }
  if (strcmp(key, "type") == 0) {
    poot_json tmp = {.type = POOT_JSON_OBJECT, .len = 1, .items = &v, .keys = &key};
    size_t klen = 4;
    tmp.key_lens = &klen;
    int t = 0;
    POOT_TRY(type_set(c, &tmp, &t));
    m->types &= expand_types(t);
    return POOT_OK_STATUS;
  }
  if (strcmp(key, "additionalProperties") == 0) {
    if (m->ap) return merge_conflict(c, key);
    m->ap = v;
    return POOT_OK_STATUS;
  }
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->kw[i].key, key) == 0) return merge_conflict(c, key);
  POOT_TRY(grow(c, (void **)&m->kw, sizeof *m->kw, &m->cap, m->n + 1));
  m->kw[m->n++] = (js_pair){key, strlen(key), v};
  return POOT_OK_STATUS;
}

/* Folds one allOf member (its $ref and nested allOf included) into `m`. */
static poot_status collect(js_ctx *c, const poot_json *part, js_merge *m, uint32_t depth) {
  if (depth > JS_MAX_DEPTH)
    return poot__js_err(c, POOT_INVALID_ARGUMENT,
                        "'allOf' and '$ref' nest deeper than %d (a reference cycle?)",
                        JS_MAX_DEPTH);
  if (part->type == POOT_JSON_BOOL) {
    if (!part->boolean) m->types = 0;
    return POOT_OK_STATUS;
  }
  if (part->type != POOT_JSON_OBJECT)
    return poot__js_err(c, POOT_INVALID_ARGUMENT, "an 'allOf' member must be a schema");
  POOT_TRY(check_keywords(c, part));
  for (size_t i = 0; i < part->len; i++) {
    const char *k = part->keys[i];
    poot_json *v = part->items[i];
    if (classify(k) == KW_ANNOTATION) continue;
    if (strcmp(k, "$ref") == 0) {
      const poot_json *target = NULL;
      POOT_TRY(resolve(c, v, &target));
      POOT_TRY(collect(c, target, m, depth + 1));
    } else if (strcmp(k, "allOf") == 0) {
      if (v->type != POOT_JSON_ARRAY || v->len == 0)
        return wrong_type(c, "allOf", "a non-empty array of schemas");
      for (size_t j = 0; j < v->len; j++) POOT_TRY(collect(c, v->items[j], m, depth + 1));
    } else {
      POOT_TRY(merge_key(c, m, k, v));
    }
  }
  return POOT_OK_STATUS;
}

static poot_json *new_json(js_ctx *c, poot_json_type type, size_t n) {
  poot_json *j = POOT_ARENA_NEW(&c->arena, poot_json);
  if (!j) return NULL;
  j->type = type;
  j->len = n;
  j->items = POOT_ARENA_NEW_ARRAY(&c->arena, poot_json *, n + 1);
  if (type == POOT_JSON_OBJECT) {
    j->keys = POOT_ARENA_NEW_ARRAY(&c->arena, const char *, n + 1);
    j->key_lens = POOT_ARENA_NEW_ARRAY(&c->arena, size_t, n + 1);
    if (!j->keys || !j->key_lens) return NULL;
  }
  return j->items ? j : NULL;
}

static poot_json *type_json(js_ctx *c, int types) {
  static const char *const names[] = {"null",   "boolean", "object", "array",
                                      "number", "string",  "integer"};
  if (types & T_NUMBER) types &= ~T_INTEGER;
  size_t n = 0;
  for (int b = 0; b < 7; b++) n += (types >> b) & 1;
  poot_json *arr = new_json(c, POOT_JSON_ARRAY, n);
  if (!arr) return NULL;
  size_t k = 0;
  for (int b = 0; b < 7; b++) {
    if (!((types >> b) & 1)) continue;
    poot_json *s = new_json(c, POOT_JSON_STRING, strlen(names[b]));
    if (!s) return NULL;
    s->str = names[b];
    arr->items[k++] = s;
  }
  return arr;
}

/* The merged schema as a JSON object. The members' additionalProperties would refuse each
 * other's properties, so it is kept only when one member declares properties. */
static poot_status merged_json(js_ctx *c, const js_merge *m, poot_json **out) {
  if (m->ap && m->with_props > 1 && !(m->ap->type == POOT_JSON_BOOL && m->ap->boolean))
    return poot__js_unsupported(
        c, "'allOf' whose 'additionalProperties' would refuse another member's properties");
  poot_json *o = new_json(c, POOT_JSON_OBJECT, m->n + 4);
  if (!o) return poot__js_oom();
  size_t k = 0;
  for (size_t i = 0; i < m->n; i++, k++) {
    o->keys[k] = m->kw[i].key;
    o->key_lens[k] = m->kw[i].len;
    o->items[k] = m->kw[i].val;
  }
  if (m->with_props) {
    poot_json *p = new_json(c, POOT_JSON_OBJECT, m->pn);
    if (!p) return poot__js_oom();
    for (size_t i = 0; i < m->pn; i++) {
      p->keys[i] = m->props[i].key;
      p->key_lens[i] = m->props[i].len;
      p->items[i] = m->props[i].val;
    }
    o->keys[k] = "properties";
    o->key_lens[k] = 10;
    o->items[k++] = p;
  }
  if (m->rn) {
    poot_json *r = new_json(c, POOT_JSON_ARRAY, m->rn);
    if (!r) return poot__js_oom();
    memcpy(r->items, m->req, m->rn * sizeof *m->req);
    o->keys[k] = "required";
    o->key_lens[k] = 8;
    o->items[k++] = r;
  }
  if (m->ap) {
    o->keys[k] = "additionalProperties";
    o->key_lens[k] = 20;
    o->items[k++] = m->ap;
  }
  if (m->types != T_ALL) {
    poot_json *t = type_json(c, m->types);
    if (!t) return poot__js_oom();
    o->keys[k] = "type";
    o->key_lens[k] = 4;
    o->items[k++] = t;
  }
  o->len = k;
  *out = o;
  return POOT_OK_STATUS;
}

/* Merges `a` (may be NULL) and `b` as allOf [a, b]; *out NULL when no value fits. */
static poot_status merge2(js_ctx *c, const poot_json *a, const poot_json *b, poot_json **out) {
  js_merge m = {.types = T_ALL};
  *out = NULL;
  if (a) POOT_TRY(collect(c, a, &m, 0));
  POOT_TRY(collect(c, b, &m, 0));
  if (!(expand_types(m.types) & T_ALL) || m.types == 0) return POOT_OK_STATUS;
  return merged_json(c, &m, out);
}

/* `s` without the keywords of `drop` (a NULL-terminated list). */
static poot_status without(js_ctx *c, const poot_json *s, const char *const *drop,
                           poot_json **out) {
  poot_json *o = new_json(c, POOT_JSON_OBJECT, s->len);
  if (!o) return poot__js_oom();
  size_t k = 0;
  for (size_t i = 0; i < s->len; i++) {
    if (in_list(drop, s->keys[i])) continue;
    o->keys[k] = s->keys[i];
    o->key_lens[k] = s->key_lens[i];
    o->items[k++] = s->items[i];
  }
  o->len = k;
  *out = o;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------ anyOf/oneOf */

/* oneOf is compiled as anyOf: the grammar cannot refuse a value that two members accept. The
 * schema's other keywords apply to every member (they are merged into each). */
static poot_status alt_rule(js_ctx *c, const poot_json *s, const char *key, const char *hint,
                            const char **out) {
  const poot_json *alts = poot_json_get(s, key);
  if (alts->type != POOT_JSON_ARRAY || alts->len == 0)
    return wrong_type(c, key, "a non-empty array of schemas");
  static const char *const self[] = {"anyOf", "oneOf", NULL};
  poot_json *base = NULL;
  if (has_other(s, self, NULL)) POOT_TRY(without(c, s, self, &base));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  bool any = false;
  char h[64];
  for (size_t i = 0; i < alts->len && !st; i++) {
    size_t old = poot__js_path_push(c, key);
    poot__js_path_push_index(c, i);
    const poot_json *member = alts->items[i];
    poot_json *merged = NULL;
    if (base) {
      st = merge2(c, base, member, &merged);
      member = merged;
    }
    const char *name = NULL;
    snprintf(h, sizeof h, "%s-%zu", hint, i);
    if (!st && member) st = visit(c, member, h, &name);
    poot__js_path_pop(c, old);
    if (st || !name) continue;
    poot_strbuf_printf(&sb, "%s%s", any ? " | " : "", name);
    any = true;
  }
  *out = NULL;
  if (!st && any) st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* ------------------------------------------------------------------ typed */

static poot_status typed_rule(js_ctx *c, const poot_json *s, const char *hint, const char **out) {
  int types = T_ALL;
  POOT_TRY(type_set(c, s, &types));
  if (types & T_NUMBER) types &= ~T_INTEGER;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = POOT_OK_STATUS;
  size_t count = 0;
  const char *one = NULL;
  for (int b = 0; b < 7 && !st; b++) {
    int t = 1 << b;
    if (!(types & t)) continue;
    const char *name = NULL;
    switch (t) {
      case T_NULL:
        st = poot__js_prim(c, "json-null", &name);
        break;
      case T_BOOL:
        st = poot__js_prim(c, "json-bool", &name);
        break;
      case T_OBJECT:
        c->nest++;
        st = object_rule(c, s, hint, &name);
        c->nest--;
        break;
      case T_ARRAY:
        c->nest++;
        st = array_rule(c, s, hint, &name);
        c->nest--;
        break;
      case T_NUMBER:
        st = poot__js_number(c, s, false, hint, &name);
        break;
      case T_STRING:
        st = poot__js_string(c, s, hint, &name);
        break;
      default:
        st = poot__js_number(c, s, true, hint, &name);
        break;
    }
    if (st || !name) continue;
    poot_strbuf_printf(&sb, "%s%s", count ? " | " : "", name);
    one = name;
    count++;
  }
  *out = NULL;
  if (!st && count == 1) *out = one;
  if (!st && count > 1) st = poot__js_rule_sb(c, hint, &sb, out);
  poot_strbuf_deinit(&sb);
  return st;
}

/* ------------------------------------------------------------------ visit */

/* Compiles schema `s` to a rule; *out NULL when no value validates. */
static poot_status visit(js_ctx *c, const poot_json *s, const char *hint, const char **out) {
  *out = NULL;
  if (s->type == POOT_JSON_BOOL) {
    if (!s->boolean) return POOT_OK_STATUS;
    return poot__js_prim(c, "json-value", out);
  }
  if (s->type != POOT_JSON_OBJECT)
    return poot__js_err(c, POOT_INVALID_ARGUMENT, "a schema must be an object or a boolean");
  if (c->depth >= JS_MAX_DEPTH)
    return poot__js_err(c, POOT_UNSUPPORTED, "a schema nested deeper than %d", JS_MAX_DEPTH);
  c->depth++;
  poot_status st = check_keywords(c, s);
  const poot_json *ref = poot_json_get(s, "$ref");
  static const char *const ref_only[] = {"$ref", NULL};
  if (st) {
  } else if (ref && !has_other(s, ref_only, NULL)) {
    if (ref->type != POOT_JSON_STRING)
      st = wrong_type(c, "$ref", "a string");
    else
      st = ref_rule(c, ref, out);
  } else if (ref || poot_json_get(s, "allOf")) {
    const poot_json *all = poot_json_get(s, "allOf");
    if (all && (all->type != POOT_JSON_ARRAY || all->len == 0)) {
      st = wrong_type(c, "allOf", "a non-empty array of schemas");
    } else {
      poot_json *merged = NULL;
      st = merge2(c, NULL, s, &merged);
      if (!st && merged) st = visit(c, merged, hint, out);
    }
  } else if (poot_json_get(s, "anyOf") && poot_json_get(s, "oneOf")) {
    st = poot__js_unsupported(c, "'anyOf' together with 'oneOf'");
  } else if (poot_json_get(s, "anyOf")) {
    st = alt_rule(c, s, "anyOf", hint, out);
  } else if (poot_json_get(s, "oneOf")) {
    st = alt_rule(c, s, "oneOf", hint, out);
  } else if (poot_json_get(s, "enum") || poot_json_get(s, "const")) {
    st = enum_rule(c, s, hint, out);
  } else {
    st = typed_rule(c, s, hint, out);
  }
  c->depth--;
  return st;
}

/* -------------------------------------------------------------------- API */

static const char *const PRIM_NAMES[] = {
    "root",          "ws",          "json-hex",    "json-u4",       "json-char", "json-string",
    "json-int",      "json-number", "json-kchar",  "json-key-tail", "json-bool", "json-null",
    "json-value",    "json-kv",     "json-object", "json-array",    "fmt-year",  "fmt-y4",
    "fmt-leap",      "fmt-d28",     "fmt-date",    "fmt-hh",        "fmt-mm",    "fmt-time",
    "fmt-date-time", "fmt-uuid",    "fmt-atom",    "fmt-label",     "fmt-email", "fmt-octet",
    "fmt-ipv4",      NULL};

static poot_status ctx_init(js_ctx *c, const poot_json_schema_options *opts) {
  memset(c, 0, sizeof *c);
  poot_arena_init(&c->arena, 0);
  poot_vec_init(&c->rules, sizeof(js_rule));
  poot_map_init(&c->by_name);
  poot_map_init(&c->by_body);
  poot_map_init(&c->refs);
  poot_map_init(&c->suffixes);
  poot_strbuf_init(&c->path);
  poot_json_schema_options o = opts ? *opts : poot_json_schema_options_default();
  c->strict = o.strict_properties;
  c->ignore_formats = o.ignore_unknown_formats;
  c->compact = o.compact;
  c->max_ws = o.max_whitespace ? o.max_whitespace : 20;
  if (o.max_whitespace > JS_MAX_REPEAT)
    return poot_status_make(POOT_INVALID_ARGUMENT, "json schema: max_whitespace %u is above %d",
                            o.max_whitespace, JS_MAX_REPEAT);
  for (size_t i = 0; PRIM_NAMES[i]; i++)
    POOT_TRY(poot_map_put_str(&c->by_name, PRIM_NAMES[i], UINT64_MAX));
  return POOT_OK_STATUS;
}

static void ctx_deinit(js_ctx *c) {
  poot_strbuf_deinit(&c->path);
  poot_map_deinit(&c->suffixes);
  poot_map_deinit(&c->refs);
  poot_map_deinit(&c->by_body);
  poot_map_deinit(&c->by_name);
  poot_vec_deinit(&c->rules);
  poot_arena_deinit(&c->arena);
}

/* root ::= ws value ws, then every rule in the order it was made. */
static poot_status emit(js_ctx *c, const char *value, char **out, size_t *out_len) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (c->compact)
    poot_strbuf_printf(&sb, "root ::= %s\n", value);
  else
    poot_strbuf_printf(&sb, "root ::= ws %s ws\n", value);
  for (size_t i = 0; i < c->rules.len; i++) {
    const js_rule *r = &POOT_VEC_AT(&c->rules, js_rule, i);
    if (!r->body) {
      poot_strbuf_deinit(&sb);
      return poot_status_make(POOT_INTERNAL, "json schema: rule '%s' was never defined", r->name);
    }
    poot_strbuf_printf(&sb, "%s ::= %s\n", r->name, r->body);
  }
  if (sb.failed) {
    poot_strbuf_deinit(&sb);
    return poot__js_oom();
  }
  *out_len = sb.len;
  *out = poot_strbuf_take(&sb);
  return *out ? POOT_OK_STATUS : poot__js_oom();
}

/* The GBNF parser expands repetitions and classes into rules of its own, so the text is
 * compiled once here: a grammar past the parser's bounds is CAPACITY, never handed out. */
static poot_status check_compiles(char **text, size_t len) {
  poot_grammar *g = NULL;
  poot_status st = poot_grammar_compile(*text, len, NULL, &g);
  poot_grammar_destroy(g);
  if (!st) return POOT_OK_STATUS;
  poot_free(*text);
  *text = NULL;
  if (poot_status_code_of(st) == POOT_OUT_OF_MEMORY) return st;
  poot_status cap = poot_status_make(
      POOT_CAPACITY, "json schema: the grammar passes the GBNF bounds (docs/grammar.md): %s",
      poot_status_message(st));
  poot_status_free(st);
  return cap;
}

/* Compiles a parsed schema. */
static poot_status compile_json(const poot_json *schema, const poot_json *doc_root,
                                const poot_json_schema_options *opts, char **out, size_t *out_len) {
  js_ctx c;
  poot_status st = ctx_init(&c, opts);
  const char *value = NULL;
  c.root = doc_root;
  if (!st) st = poot__js_prim(&c, "ws", &value);
  if (!st) st = visit(&c, schema, "value", &value);
  if (!st && !value) st = nothing(&c);
  if (!st && c.path.failed) st = poot__js_oom();
  if (!st) st = emit(&c, value, out, out_len);
  ctx_deinit(&c);
  if (!st) st = check_compiles(out, *out_len);
  return st;
}

static poot_status parse_doc(poot_arena *arena, const char *text, size_t len, const char *what,
                             poot_json **out) {
  if (!text && len) return poot_status_make(POOT_INVALID_ARGUMENT, "%s: the text is NULL", what);
  poot_json_parse_options po = {.max_depth = 256};
  poot_status st = poot_json_parse(arena, text ? text : "", len, &po, out);
  if (!st || poot_status_code_of(st) == POOT_OUT_OF_MEMORY) return st;
  poot_status inv =
      poot_status_make(POOT_INVALID_ARGUMENT, "%s: not JSON: %s", what, poot_status_message(st));
  poot_status_free(st);
  return inv;
}

poot_status poot_json_schema_to_gbnf(const char *schema_json, size_t len,
                                     const poot_json_schema_options *opts, char **out_gbnf,
                                     size_t *out_len) {
  if (!out_gbnf || !out_len)
    return poot_status_make(POOT_INVALID_ARGUMENT, "json schema: out_gbnf and out_len are NULL");
  *out_gbnf = NULL;
  *out_len = 0;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *root = NULL;
  poot_status st = parse_doc(&arena, schema_json, len, "json schema", &root);
  if (!st) st = compile_json(root, root, opts, out_gbnf, out_len);
  poot_arena_deinit(&arena);
  return st;
}

/* A rule name the caller may give: [a-z0-9-]+, not a primitive's. */
static bool caller_name_ok(const char *name) {
  if (!name || !*name) return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) return false;
  for (size_t i = 0; PRIM_NAMES[i]; i++)
    if (strcmp(PRIM_NAMES[i], name) == 0) return false;
  return true;
}

/* Each schema compiled in one context (shared rules deduplicated), its $refs resolved in its
 * own document; then "root ::= <root_body>" and "name_i ::= value_i". */
static poot_status compile_many(js_ctx *c, poot_arena *arena, const poot_json_schema_rule *rules,
                                size_t n, const char *root_body, char **out, size_t *out_len) {
  const char **values = POOT_ARENA_NEW_ARRAY(arena, const char *, n ? n : 1);
  if (!values) return poot__js_oom();
  const char *ws = NULL;
  POOT_TRY(poot__js_prim(c, "ws", &ws));
  for (size_t i = 0; i < n; i++) {
    poot_json *doc = NULL;
    POOT_TRY(parse_doc(arena, rules[i].schema, rules[i].len, "json schema", &doc));
    poot_map_deinit(&c->refs); /* "#/…" means this document now */
    poot_map_init(&c->refs);
    poot_strbuf_clear(&c->path);
    c->root = doc;
    poot_status st = visit(c, doc, "value", &values[i]);
    if (!st && !values[i]) st = nothing(c);
    if (st) return poot_status_annotate(st, "schema %zu ('%s')", i, rules[i].name);
  }
  if (c->path.failed) return poot__js_oom();
  /* emit() writes "root ::= value" first; here root is the caller's body */
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(emit(c, root_body, &text, &len));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_append(&sb, text, len);
  poot_free(text);
  for (size_t i = 0; i < n; i++) poot_strbuf_printf(&sb, "%s ::= %s\n", rules[i].name, values[i]);
  if (sb.failed) {
    poot_strbuf_deinit(&sb);
    return poot__js_oom();
  }
  *out_len = sb.len;
  *out = poot_strbuf_take(&sb);
  return *out ? POOT_OK_STATUS : poot__js_oom();
}

poot_status poot_json_schemas_to_gbnf(const poot_json_schema_rule *rules, size_t n,
                                      const char *root_body, const poot_json_schema_options *opts,
                                      char **out_gbnf, size_t *out_len) {
  if (!out_gbnf || !out_len)
    return poot_status_make(POOT_INVALID_ARGUMENT, "json schema: out_gbnf and out_len are NULL");
  *out_gbnf = NULL;
  *out_len = 0;
  if (!root_body || (n && !rules))
    return poot_status_make(POOT_INVALID_ARGUMENT, "json schema: no root body or no rules");
  js_ctx c;
  poot_status st = ctx_init(&c, opts);
  /* the caller's names are taken before any generated rule could take them */
  for (size_t i = 0; i < n && !st; i++) {
    if (!caller_name_ok(rules[i].name))
      st = poot_status_make(POOT_INVALID_ARGUMENT,
                            "json schema: rule name '%.64s' must be [a-z0-9-]+ and not a "
                            "primitive's",
                            rules[i].name ? rules[i].name : "(null)");
    uint64_t seen = 0;
    if (!st && poot_map_get_str(&c.by_name, rules[i].name, &seen))
      st = poot_status_make(POOT_INVALID_ARGUMENT, "json schema: rule name '%.64s' given twice",
                            rules[i].name);
    if (!st) st = poot_map_put_str(&c.by_name, rules[i].name, UINT64_MAX);
  }
  poot_arena arena;
  poot_arena_init(&arena, 0);
  if (!st) st = compile_many(&c, &arena, rules, n, root_body, out_gbnf, out_len);
  poot_arena_deinit(&arena);
  ctx_deinit(&c);
  if (!st) st = check_compiles(out_gbnf, *out_len);
  return st;
}

poot_status poot_json_grammar_any(char **out_gbnf, size_t *out_len) {
  return poot_json_schema_to_gbnf("true", 4, NULL, out_gbnf, out_len);
}

static poot_status rf_error(const char *fmt, const char *arg) {
  return poot_status_make(POOT_INVALID_ARGUMENT, fmt, arg);
}

poot_status poot_json_response_format_to_gbnf(const char *response_format_json, size_t len,
                                              const poot_json_schema_options *opts, char **out_gbnf,
                                              size_t *out_len) {
  if (!out_gbnf || !out_len)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "response_format: out_gbnf and out_len are NULL");
  *out_gbnf = NULL;
  *out_len = 0;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *rf = NULL;
  poot_status st = parse_doc(&arena, response_format_json, len, "response_format", &rf);
  const poot_json *type = st ? NULL : poot_json_get(rf, "type");
  if (st) {
  } else if (rf->type != POOT_JSON_OBJECT || !type || type->type != POOT_JSON_STRING) {
    st = rf_error("response_format: expected an object with a string \"type\"%s", "");
  } else if (strcmp(type->str, "text") == 0) {
  } else if (strcmp(type->str, "json_object") == 0) {
    st = poot_json_schema_to_gbnf("{\"type\":\"object\"}", 17, opts, out_gbnf, out_len);
  } else if (strcmp(type->str, "json_schema") == 0) {
    const poot_json *js = poot_json_get(rf, "json_schema");
    const poot_json *schema =
        js && js->type == POOT_JSON_OBJECT ? poot_json_get(js, "schema") : NULL;
    const poot_json *strict =
        js && js->type == POOT_JSON_OBJECT ? poot_json_get(js, "strict") : NULL;
    poot_json_schema_options o = opts ? *opts : poot_json_schema_options_default();
    if (!schema) {
      st = rf_error("response_format: type \"json_schema\" needs /json_schema/schema%s", "");
    } else if (strict && strict->type != POOT_JSON_BOOL) {
      st = rf_error("response_format: /json_schema/strict must be a boolean%s", "");
    } else {
      if (strict && strict->boolean) o.strict_properties = true;
      st = compile_json(schema, schema, &o, out_gbnf, out_len);
      if (st) st = poot_status_annotate(st, "response_format /json_schema/schema");
    }
  } else {
    st = rf_error(
        "response_format: unknown type \"%.64s\" (expected \"text\", \"json_object\" or "
        "\"json_schema\")",
        type->str);
  }
  poot_arena_deinit(&arena);
  return st;
}
