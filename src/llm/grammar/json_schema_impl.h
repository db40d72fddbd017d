/* JSON Schema → GBNF, private to src/llm/grammar/json_schema*.c.
 *
 * The compiler walks the schema once and writes one GBNF rule per schema (and per helper
 * language: digit ranges, formats, key exclusions). Rules are deduplicated by their body, so
 * equal sub-schemas share a rule; `$ref` targets get their rule reserved before they are
 * compiled, so recursive references name each other. Value rules never consume white space
 * around themselves: the containers place `ws` after `{ [ , :` and before `, } ] :`. */
#ifndef POOT_LLM_JSON_SCHEMA_IMPL_H
#define POOT_LLM_JSON_SCHEMA_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/grammar.h"

#define JS_MAX_DEPTH 128       /* schema nesting, $ref chains included */
#define JS_MAX_REPEAT 1000     /* the GBNF parser's repetition bound */
#define JS_MAX_LENGTH 1000000u /* largest finite minLength/maxLength/minItems/maxItems */
#define JS_MAX_DIGITS 400      /* digits of a numeric bound, integer and fraction */
#define JS_MAX_PREFIX 1000     /* prefixItems (one rule each, compiled recursively) */
#define JS_MAX_TEXT (1u << 20) /* the GBNF parser's text bound */
#define JS_INF UINT64_MAX      /* an unbounded count */

typedef struct js_rule {
  const char *name; /* arena */
  const char *body; /* arena; NULL while reserved */
  uint32_t nest;    /* a reserved $ref rule: the container nesting when it was reserved */
} js_rule;

typedef struct js_ctx {
  poot_arena arena;
  const poot_json *root;
  bool strict;         /* unspecified additionalProperties means false */
  bool ignore_formats; /* an unknown format is a plain string */
  uint32_t max_ws;     /* 0 with compact */
  bool compact;
  poot_vec rules;    /* js_rule */
  poot_map by_name;  /* rule name → index (UINT64_MAX: reserved for a primitive) */
  poot_map by_body;  /* finished body → index */
  poot_map refs;     /* "#/…" → rule index */
  poot_map suffixes; /* rule name base → the last numeric suffix given */
  poot_strbuf path;  /* JSON pointer of the schema being compiled */
  uint32_t depth;
  uint32_t nest;     /* objects and arrays entered (a $ref cycle must enter one) */
  size_t text_bytes; /* rule text so far */
} js_ctx;

/* " ws " between tokens, or " " when compact. */
static inline const char *js_ws(const js_ctx *c) {
  return c->compact ? " " : " ws ";
}

/* An error naming the current JSON pointer: "json schema: <what> at /a/b …". `fmt` gives the
 * sentence with a %s where the pointer goes first. */
POOT_MUST_USE poot_status poot__js_err(js_ctx *c, poot_status_code code, const char *fmt, ...)
    POOT_PRINTF(3, 4);
POOT_MUST_USE poot_status poot__js_unsupported(js_ctx *c, const char *what);
POOT_MUST_USE poot_status poot__js_oom(void);

/* A rule with `body` (n bytes): an existing rule with the same body, or a new rule named after
 * `hint` (made unique). *out_name is arena memory. */
POOT_MUST_USE poot_status poot__js_rule(js_ctx *c, const char *hint, const char *body, size_t n,
                                        const char **out_name);
POOT_MUST_USE poot_status poot__js_rule_sb(js_ctx *c, const char *hint, poot_strbuf *body,
                                           const char **out_name);
/* Reserves a rule name (its body comes later, through poot__js_rule_set). */
POOT_MUST_USE poot_status poot__js_rule_reserve(js_ctx *c, const char *hint, size_t *out_index);
js_rule *poot__js_rule_at(js_ctx *c, size_t index);
POOT_MUST_USE poot_status poot__js_rule_set(js_ctx *c, size_t index, const char *body, size_t n);
const char *poot__js_rule_name(const js_ctx *c, size_t index);
/* A primitive rule by name ("json-value", "json-string", "json-char", "ws", …), added once. */
POOT_MUST_USE poot_status poot__js_prim(js_ctx *c, const char *name, const char **out_name);

/* A rule with a fixed name (reserved at start, see PRIM_NAMES in json_schema.c), added once. */
POOT_MUST_USE poot_status poot__js_fixed(js_ctx *c, const char *name, const char *body);

/* Appends a GBNF literal "…" for the bytes s[0..n) (valid UTF-8; INVALID_ARGUMENT otherwise). */
POOT_MUST_USE poot_status poot__js_literal(js_ctx *c, poot_strbuf *sb, const char *s, size_t n);
/* A rule with a fixed name (reserved at start, see PRIM_NAMES in json_schema.c), added once. */
POOT_MUST_USE poot_status poot__js_fixed(js_ctx *c, const char *name, const char *body);

/* Appends a GBNF literal of the compact JSON text of `v`. */
POOT_MUST_USE poot_status poot__js_json_literal(js_ctx *c, poot_strbuf *sb, const poot_json *v);
bool poot__js_utf8_valid(const char *s, size_t n);

/* Appends `unit` repeated min..max times (max JS_INF: unbounded) as a GBNF expression, using
 * chunk rules past the parser's repetition bound. UNSUPPORTED past JS_MAX_LENGTH. */
POOT_MUST_USE poot_status poot__js_repeat(js_ctx *c, const char *unit, uint64_t min, uint64_t max,
                                          const char *hint, poot_strbuf *sb);
/* Reads a non-negative integer keyword of `schema` (absent: *out = dflt). */
POOT_MUST_USE poot_status poot__js_count(js_ctx *c, const poot_json *schema, const char *key,
                                         uint64_t dflt, uint64_t *out);

/* The string, number and key languages (json_schema_text.c). *out_name NULL: no value. */
POOT_MUST_USE poot_status poot__js_string(js_ctx *c, const poot_json *schema, const char *hint,
                                          const char **out_name);
POOT_MUST_USE poot_status poot__js_number(js_ctx *c, const poot_json *schema, bool integer,
                                          const char *hint, const char **out_name);
/* A JSON string literal whose text is none of keys[i] (their JSON spellings, quotes excluded,
 * as poot_json_write_string writes them). */
POOT_MUST_USE poot_status poot__js_key_not_in(js_ctx *c, const char *const *keys,
                                              const size_t *lens, size_t n, const char *hint,
                                              const char **out_name);

/* The body of a string (between the quotes) matching the regular expression `re`
 * (json_schema_regex.c): Python `re.search` semantics over the decoded string. */
POOT_MUST_USE poot_status poot__js_pattern(js_ctx *c, const char *re, size_t n, const char *hint,
                                           poot_strbuf *sb);

/* Path helpers: push "/key" (escaped as a JSON pointer) or "/index"; pop restores a length. */
size_t poot__js_path_push(js_ctx *c, const char *key);
size_t poot__js_path_push_index(js_ctx *c, size_t index);
void poot__js_path_pop(js_ctx *c, size_t len);

#endif /* POOT_LLM_JSON_SCHEMA_IMPL_H */
