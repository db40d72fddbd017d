/* tpl_ops.h — private: string helpers and formatting shared by tpl_ops.c and
 * tpl_builtins.c. */
#ifndef POOT_LLM_TEMPLATE_OPS_H
#define POOT_LLM_TEMPLATE_OPS_H

#include <string.h>

#include "template_impl.h"

uint32_t poot__tpl_lower_cp(uint32_t c);
uint32_t poot__tpl_upper_cp(uint32_t c);
bool poot__tpl_is_cased(uint32_t c);
/* Appends p[0..n) case-mapped: 'u' upper, 'l' lower, 't' str.title, 'c' str.capitalize. */
void poot__tpl_case(poot_strbuf *sb, const char *p, size_t n, char mode);
/* Python strip: [*out_b, *out_e) of p without leading/trailing chars (NULL:
 * whitespace). */
void poot__tpl_strip(const char *p, size_t n, const char *chars, size_t cn, bool left, bool right,
                     size_t *out_b, size_t *out_e);
void poot__tpl_html_escape(poot_strbuf *sb, const char *p, size_t n);
/* needle in hay, Python semantics. */
POOT_MUST_USE poot_status poot__tpl_contains(tpl_ctx *ctx, const tpl_node *at, tpl_value hay,
                                             tpl_value needle, bool *out);
/* fmt % args. */
POOT_MUST_USE poot_status poot__tpl_percent_format(tpl_ctx *ctx, const tpl_node *at, tpl_value fmt,
                                                   tpl_value args, tpl_value *out);
/* fmt.format(*args, **kw). */
POOT_MUST_USE poot_status poot__tpl_str_format(tpl_ctx *ctx, const tpl_node *at, tpl_value fmt,
                                               const tpl_value *args, size_t nargs,
                                               const char *const *kwn, const tpl_value *kwv,
                                               size_t nkw, tpl_value *out);

/* Filter and method arguments: positional and keyword. */
typedef struct argv_ {
  const tpl_value *args;
  size_t nargs;
  const char *const *kwn;
  const tpl_value *kwv;
  size_t nkw;
} argv_;

/* The argument at position `pos` or keyword `name`. */
static inline bool arg(const argv_ *a, size_t pos, const char *name, tpl_value *out) {
  if (pos < a->nargs) {
    *out = a->args[pos];
    return true;
  }
  for (size_t i = 0; name && i < a->nkw; i++) {
    if (strcmp(a->kwn[i], name) == 0) {
      *out = a->kwv[i];
      return true;
    }
  }
  return false;
}

static inline bool arg_bool(const argv_ *a, size_t pos, const char *name, bool dflt) {
  tpl_value v;
  return arg(a, pos, name, &v) ? poot__tv_truthy(v) : dflt;
}

static inline poot_status need_str(tpl_ctx *ctx, const tpl_node *at, tpl_value v,
                                   const char *what) {
  if (v.kind == TV_STR) return NULL;
  return poot__tpl_err(ctx, at, POOT_FORMAT, "%s must be a string, not %s", what,
                       poot__tv_type_name(v));
}

static inline poot_status str_of(tpl_ctx *ctx, const tpl_node *at, tpl_value v, tpl_value *out) {
  return poot__tv_to_str(ctx, at, v, out);
}

static inline poot_status sb_done(tpl_ctx *ctx, poot_strbuf *sb, tpl_value *out) {
  poot_status st = poot__tv_from_sb(ctx, sb, out);
  poot_strbuf_deinit(sb);
  return st;
}

/* dict.items() as a list of (key, value) tuples; undefined gives []. */
POOT_MUST_USE poot_status poot__tpl_items_of(tpl_ctx *ctx, const tpl_node *at, tpl_value v,
                                             tpl_value *out);

#endif
