/* tpl_parse.c — the chat-template parser: tokens to a syntax tree, following
 * jinja2's grammar (parser.py) production for production, so that operator
 * precedence, filter binding and tuple rules are the same. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "template_impl.h"

#define MAX_NEST 200

typedef struct parser {
  poot_arena *arena;
  const tpl_token *t;
  size_t n, pos;
  poot_status err;
  int nest;
} parser;

static const tpl_token *cur(parser *p) {
  return &p->t[p->pos];
}
static const tpl_token *look(parser *p) {
  return p->pos + 1 < p->n ? &p->t[p->pos + 1] : &p->t[p->n - 1];
}
static const tpl_token *next_tok(parser *p) {
  const tpl_token *t = &p->t[p->pos];
  if (p->pos + 1 < p->n) p->pos++;
  return t;
}

static bool is_op(const tpl_token *t, const char *op) {
  return t->kind == TK_OP && strcmp(t->text, op) == 0;
}
static bool is_name(const tpl_token *t, const char *name) {
  return t->kind == TK_NAME && strcmp(t->text, name) == 0;
}

static const char *describe(const tpl_token *t) {
  switch (t->kind) {
    case TK_EOF:
      return "end of template";
    case TK_DATA:
      return "template data";
    case TK_VAR_BEGIN:
      return "begin of print statement";
    case TK_VAR_END:
      return "end of print statement";
    case TK_BLOCK_BEGIN:
      return "begin of statement block";
    case TK_BLOCK_END:
      return "end of statement block";
    case TK_STRING:
      return "string";
    case TK_INT:
      return "integer";
    case TK_FLOAT:
      return "float";
    default:
      return t->text;
  }
}

static void *fail(parser *p, uint32_t line, poot_status_code code, const char *fmt, ...)
    POOT_PRINTF(4, 5);
static void *fail(parser *p, uint32_t line, poot_status_code code, const char *fmt, ...) {
  if (p->err) return NULL;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = poot_status_make(code, "template line %u: %s", (unsigned)line, msg);
  return NULL;
}

static void *fail_unexpected(parser *p, const char *wanted) {
  const tpl_token *t = cur(p);
  if (wanted) return fail(p, t->line, POOT_FORMAT, "expected %s, got '%s'", wanted, describe(t));
  return fail(p, t->line, POOT_FORMAT, "unexpected '%s'", describe(t));
}

static bool expect_op(parser *p, const char *op) {
  if (p->err) return false;
  if (!is_op(cur(p), op)) {
    char w[16];
    snprintf(w, sizeof w, "'%s'", op);
    fail_unexpected(p, w);
    return false;
  }
  next_tok(p);
  return true;
}

static bool expect_kind(parser *p, tpl_tok_kind kind, const char *what) {
  if (p->err) return false;
  if (cur(p)->kind != kind) {
    fail_unexpected(p, what);
    return false;
  }
  next_tok(p);
  return true;
}

static tpl_node *node_new(parser *p, tpl_node_kind kind, uint32_t line) {
  tpl_node *n = POOT_ARENA_NEW(p->arena, tpl_node);
  if (!n) {
    if (!p->err) p->err = poot__tpl_oom();
    return NULL;
  }
  n->kind = (uint8_t)kind;
  n->line = line;
  return n;
}

/* A small growable list of node pointers, copied into the arena at the end. */
typedef struct nlist {
  poot_vec v;
} nlist;
static void nl_init(nlist *l) {
  poot_vec_init(&l->v, sizeof(void *));
}
static void nl_push(parser *p, nlist *l, const void *x) {
  if (p->err) return;
  if (poot_vec_push(&l->v, &x)) p->err = poot__tpl_oom();
}
static void *nl_take(parser *p, nlist *l, size_t *out_n) {
  *out_n = l->v.len;
  void *r = NULL;
  if (!p->err && l->v.len) {
    r = poot_arena_memdup(p->arena, l->v.data, l->v.len * sizeof(void *), _Alignof(void *));
    if (!r) p->err = poot__tpl_oom();
  }
  poot_vec_deinit(&l->v);
  if (p->err) *out_n = 0;
  return r;
}

static tpl_node *parse_expression(parser *p, bool with_condexpr);
static tpl_node *parse_tuple(parser *p, bool simplified, bool with_condexpr, const char *extra_end,
                             bool explicit_parens, bool with_namespace);
static tpl_node *parse_unary(parser *p, bool with_filter);
static tpl_node *parse_primary(parser *p, bool with_namespace);
static tpl_node *parse_postfix(parser *p, tpl_node *node);
static tpl_node *parse_filter(parser *p, tpl_node *node, bool start_inline);
static void parse_call_args(parser *p, tpl_node *n);
static bool parse_statements_into(parser *p, const char *const *end, bool drop_needle,
                                  tpl_node ***out_body, size_t *out_n);

static bool enter(parser *p) {
  if (++p->nest > MAX_NEST) {
    p->nest--;
    fail(p, cur(p)->line, POOT_CAPACITY, "template nested more than %d levels deep", MAX_NEST);
    return false;
  }
  return true;
}
static void leave(parser *p) {
  p->nest--;
}

static tpl_node *parse_condexpr(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *e1 = parse_expression(p, false);
  while (!p->err && is_name(cur(p), "if")) {
    next_tok(p);
    tpl_node *n = node_new(p, N_COND, line);
    if (!n) return NULL;
    n->b = e1;
    n->a = parse_expression(p, false);
    if (is_name(cur(p), "else")) {
      next_tok(p);
      if (!enter(p)) return NULL;
      n->c = parse_condexpr(p);
      leave(p);
    }
    e1 = n;
    line = cur(p)->line;
  }
  return p->err ? NULL : e1;
}

static tpl_node *parse_not(parser *p);

static tpl_node *parse_bool_chain(parser *p, const char *word, tpl_node_kind kind) {
  uint32_t line = cur(p)->line;
  tpl_node *left = kind == N_OR ? parse_bool_chain(p, "and", N_AND) : parse_not(p);
  while (!p->err && is_name(cur(p), word)) {
    next_tok(p);
    tpl_node *n = node_new(p, kind, line);
    if (!n) return NULL;
    n->a = left;
    n->b = kind == N_OR ? parse_bool_chain(p, "and", N_AND) : parse_not(p);
    left = n;
    line = cur(p)->line;
  }
  return p->err ? NULL : left;
}

static tpl_node *parse_math1(parser *p);

static tpl_node *parse_compare(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *expr = parse_math1(p);
  nlist operands;
  nl_init(&operands);
  uint8_t opsbuf[64];
  size_t nops = 0;
  for (;;) {
    if (p->err) break;
    const tpl_token *t = cur(p);
    int op = -1;
    if (is_op(t, "=="))
      op = OP_EQ;
    else if (is_op(t, "!="))
      op = OP_NE;
    else if (is_op(t, "<"))
      op = OP_LT;
    else if (is_op(t, "<="))
      op = OP_LE;
    else if (is_op(t, ">"))
      op = OP_GT;
    else if (is_op(t, ">="))
      op = OP_GE;
    else if (is_name(t, "in"))
      op = OP_IN;
    else if (is_name(t, "not") && is_name(look(p), "in"))
      op = OP_NOTIN;
    if (op < 0) break;
    next_tok(p);
    if (op == OP_NOTIN) next_tok(p);
    if (nops >= sizeof opsbuf) {
      fail(p, t->line, POOT_UNSUPPORTED, "more than %zu chained comparisons", sizeof opsbuf);
      break;
    }
    opsbuf[nops++] = (uint8_t)op;
    nl_push(p, &operands, parse_math1(p));
    line = cur(p)->line;
  }
  size_t nk = 0;
  tpl_node **kids = nl_take(p, &operands, &nk);
  if (p->err) return NULL;
  if (!nops) return expr;
  tpl_node *n = node_new(p, N_COMPARE, line);
  if (!n) return NULL;
  n->a = expr;
  n->kids = kids;
  n->nkids = nk;
  n->ops = poot_arena_memdup(p->arena, opsbuf, nops, 1);
  if (!n->ops) return fail(p, line, POOT_OUT_OF_MEMORY, "out of memory");
  return n;
}

static tpl_node *parse_not(parser *p) {
  if (is_name(cur(p), "not")) {
    uint32_t line = next_tok(p)->line;
    if (!enter(p)) return NULL;
    tpl_node *n = node_new(p, N_NOT, line);
    if (n) n->a = parse_not(p);
    leave(p);
    return p->err ? NULL : n;
  }
  return parse_compare(p);
}

static tpl_node *binop(parser *p, int op, tpl_node *l, tpl_node *r, uint32_t line) {
  tpl_node *n = node_new(p, N_BINOP, line);
  if (!n) return NULL;
  n->op = (uint8_t)op;
  n->a = l;
  n->b = r;
  return n;
}

static tpl_node *parse_pow(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *left = parse_unary(p, true);
  while (!p->err && is_op(cur(p), "**")) {
    next_tok(p);
    tpl_node *right = parse_unary(p, true);
    left = binop(p, OP_POW, left, right, line);
    line = cur(p)->line;
  }
  return p->err ? NULL : left;
}

static tpl_node *parse_math2(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *left = parse_pow(p);
  for (;;) {
    if (p->err) return NULL;
    const tpl_token *t = cur(p);
    int op = is_op(t, "*")    ? OP_MUL
             : is_op(t, "/")  ? OP_DIV
             : is_op(t, "//") ? OP_FLOORDIV
             : is_op(t, "%")  ? OP_MOD
                              : -1;
    if (op < 0) break;
    next_tok(p);
    tpl_node *right = parse_pow(p);
    left = binop(p, op, left, right, line);
    line = cur(p)->line;
  }
  return left;
}

static tpl_node *parse_concat(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *first = parse_math2(p);
  if (p->err || !is_op(cur(p), "~")) return first;
  nlist args;
  nl_init(&args);
  nl_push(p, &args, first);
  while (!p->err && is_op(cur(p), "~")) {
    next_tok(p);
    nl_push(p, &args, parse_math2(p));
  }
  tpl_node *n = node_new(p, N_CONCAT, line);
  size_t nk = 0;
  tpl_node **kids = nl_take(p, &args, &nk);
  if (!n || p->err) return NULL;
  n->kids = kids;
  n->nkids = nk;
  return n;
}

static tpl_node *parse_math1(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *left = parse_concat(p);
  for (;;) {
    if (p->err) return NULL;
    const tpl_token *t = cur(p);
    int op = is_op(t, "+") ? OP_ADD : is_op(t, "-") ? OP_SUB : -1;
    if (op < 0) break;
    next_tok(p);
    tpl_node *right = parse_concat(p);
    left = binop(p, op, left, right, line);
    line = cur(p)->line;
  }
  return left;
}

static tpl_node *parse_unary(parser *p, bool with_filter) {
  if (!enter(p)) return NULL;
  const tpl_token *t = cur(p);
  tpl_node *node;
  if (is_op(t, "-") || is_op(t, "+")) {
    next_tok(p);
    node = node_new(p, is_op(t, "-") ? N_NEG : N_POS, t->line);
    if (node) node->a = parse_unary(p, false);
  } else {
    node = parse_primary(p, false);
  }
  if (!p->err) node = parse_postfix(p, node);
  if (!p->err && with_filter) {
    for (;;) {
      if (p->err) break;
      const tpl_token *c = cur(p);
      if (is_op(c, "|")) {
        node = parse_filter(p, node, false);
      } else if (is_name(c, "is")) {
        /* A test. */
        uint32_t line = next_tok(p)->line;
        bool negated = false;
        if (is_name(cur(p), "not")) {
          next_tok(p);
          negated = true;
        }
        if (cur(p)->kind != TK_NAME) {
          fail_unexpected(p, "a test name");
          break;
        }
        tpl_node *tn = node_new(p, N_TEST, line);
        if (!tn) break;
        tn->name = next_tok(p)->text;
        tn->a = node;
        tn->flag = negated;
        const tpl_token *a = cur(p);
        if (is_op(a, "(")) {
          parse_call_args(p, tn);
        } else if ((a->kind == TK_NAME || a->kind == TK_STRING || a->kind == TK_INT ||
                    a->kind == TK_FLOAT || is_op(a, "[") || is_op(a, "{")) &&
                   !is_name(a, "else") && !is_name(a, "or") && !is_name(a, "and")) {
          if (is_name(a, "is")) {
            fail(p, a->line, POOT_FORMAT, "You cannot chain multiple tests with is");
            break;
          }
          tpl_node *arg = parse_primary(p, false);
          arg = parse_postfix(p, arg);
          if (p->err) break;
          tn->kids = POOT_ARENA_NEW_ARRAY(p->arena, tpl_node *, 1);
          if (!tn->kids) {
            fail(p, line, POOT_OUT_OF_MEMORY, "out of memory");
            break;
          }
          tn->kids[0] = arg;
          tn->nkids = 1;
        }
        node = tn;
      } else if (is_op(c, "(")) {
        node = parse_postfix(p, node);
      } else {
        break;
      }
    }
  }
  leave(p);
  return p->err ? NULL : node;
}

/* Call arguments after '(' into n (kids, kwnames/kwvals, dyn_args/dyn_kwargs). */
static void parse_call_args(parser *p, tpl_node *n) {
  uint32_t line = cur(p)->line;
  if (!expect_op(p, "(")) return;
  nlist args, kwv;
  nl_init(&args);
  nl_init(&kwv);
  poot_vec kwn;
  poot_vec_init(&kwn, sizeof(char *));
  bool require_comma = false;
  while (!p->err && !is_op(cur(p), ")")) {
    if (require_comma) {
      if (!expect_op(p, ",")) break;
      if (is_op(cur(p), ")")) break;
    }
    if (cur(p)->kind == TK_EOF) {
      fail_unexpected(p, "')'");
      break;
    }
    if (is_op(cur(p), "*") || is_op(cur(p), "**")) {
      bool star2 = is_op(cur(p), "**");
      next_tok(p);
      tpl_node *e = parse_expression(p, true);
      if (star2) {
        n->dyn_kwargs = e;
      } else {
        if (n->dyn_kwargs || n->dyn_args)
          fail(p, line, POOT_FORMAT, "invalid syntax for function call expression");
        n->dyn_args = e;
      }
    } else if (cur(p)->kind == TK_NAME && is_op(look(p), "=")) {
      if (n->dyn_kwargs) fail(p, line, POOT_FORMAT, "invalid syntax for function call expression");
      const char *key = next_tok(p)->text;
      next_tok(p);
      if (poot_vec_push(&kwn, &key)) p->err = poot__tpl_oom();
      nl_push(p, &kwv, parse_expression(p, true));
    } else {
      if (n->dyn_args || n->dyn_kwargs || kwn.len)
        fail(p, line, POOT_FORMAT, "invalid syntax for function call expression");
      nl_push(p, &args, parse_expression(p, true));
    }
    require_comma = true;
  }
  expect_op(p, ")");
  n->kids = nl_take(p, &args, &n->nkids);
  n->kwvals = nl_take(p, &kwv, &n->nkw);
  if (!p->err && kwn.len) {
    n->kwnames = poot_arena_memdup(p->arena, kwn.data, kwn.len * sizeof(char *), _Alignof(char *));
    if (!n->kwnames) p->err = poot__tpl_oom();
  }
  poot_vec_deinit(&kwn);
}

static tpl_node *parse_subscribed(parser *p) {
  uint32_t line = cur(p)->line;
  tpl_node *parts[3] = {NULL, NULL, NULL};
  if (is_op(cur(p), ":")) {
    next_tok(p);
  } else {
    tpl_node *e = parse_expression(p, true);
    if (p->err || !is_op(cur(p), ":")) return e;
    next_tok(p);
    parts[0] = e;
  }
  if (!is_op(cur(p), ":") && !is_op(cur(p), "]") && !is_op(cur(p), ","))
    parts[1] = parse_expression(p, true);
  if (!p->err && is_op(cur(p), ":")) {
    next_tok(p);
    if (!is_op(cur(p), "]") && !is_op(cur(p), ",")) parts[2] = parse_expression(p, true);
  }
  tpl_node *n = node_new(p, N_SLICE, line);
  if (!n || p->err) return NULL;
  n->a = parts[0];
  n->b = parts[1];
  n->c = parts[2];
  return n;
}

static tpl_node *parse_postfix(parser *p, tpl_node *node) {
  for (;;) {
    if (p->err) return NULL;
    const tpl_token *t = cur(p);
    if (is_op(t, ".")) {
      next_tok(p);
      const tpl_token *a = cur(p);
      if (a->kind == TK_NAME) {
        next_tok(p);
        tpl_node *n = node_new(p, N_GETATTR, t->line);
        if (!n) return NULL;
        n->a = node;
        n->name = a->text;
        node = n;
      } else if (a->kind == TK_INT) {
        next_tok(p);
        tpl_node *k = node_new(p, N_CONST, a->line);
        tpl_node *n = node_new(p, N_GETITEM, t->line);
        if (!n || !k) return NULL;
        k->value = tv_int(a->ival);
        n->a = node;
        n->b = k;
        node = n;
      } else {
        return fail(p, a->line, POOT_FORMAT, "expected name or number");
      }
    } else if (is_op(t, "[")) {
      next_tok(p);
      nlist args;
      nl_init(&args);
      while (!p->err && !is_op(cur(p), "]")) {
        if (args.v.len) {
          if (!expect_op(p, ",")) break;
        }
        if (cur(p)->kind == TK_EOF) {
          fail_unexpected(p, "']'");
          break;
        }
        nl_push(p, &args, parse_subscribed(p));
      }
      expect_op(p, "]");
      size_t nk = 0;
      tpl_node **kids = nl_take(p, &args, &nk);
      if (p->err) return NULL;
      tpl_node *n = node_new(p, N_GETITEM, t->line);
      if (!n) return NULL;
      n->a = node;
      if (nk == 1) {
        n->b = kids[0];
      } else {
        tpl_node *tu = node_new(p, N_TUPLE, t->line);
        if (!tu) return NULL;
        tu->kids = kids;
        tu->nkids = nk;
        n->b = tu;
      }
      node = n;
    } else if (is_op(t, "(")) {
      tpl_node *n = node_new(p, N_CALL, t->line);
      if (!n) return NULL;
      n->a = node;
      parse_call_args(p, n);
      node = n;
    } else {
      return node;
    }
  }
}

static tpl_node *parse_filter(parser *p, tpl_node *node, bool start_inline) {
  while (!p->err && (is_op(cur(p), "|") || start_inline)) {
    if (!start_inline) next_tok(p);
    const tpl_token *t = cur(p);
    if (t->kind != TK_NAME) return fail_unexpected(p, "a filter name");
    next_tok(p);
    const char *name = t->text;
    if (is_op(cur(p), ".")) return fail(p, t->line, POOT_UNSUPPORTED, "dotted filter names");
    tpl_node *n = node_new(p, N_FILTER, t->line);
    if (!n) return NULL;
    n->name = name;
    n->a = node;
    if (is_op(cur(p), "(")) parse_call_args(p, n);
    node = n;
    start_inline = false;
  }
  return p->err ? NULL : node;
}

static tpl_node *parse_primary(parser *p, bool with_namespace) {
  if (!enter(p)) return NULL;
  const tpl_token *t = cur(p);
  tpl_node *node = NULL;
  if (t->kind == TK_NAME) {
    next_tok(p);
    const char *v = t->text;
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "false") || !strcmp(v, "False")) {
      node = node_new(p, N_CONST, t->line);
      if (node) node->value = tv_bool(v[0] == 't' || v[0] == 'T');
    } else if (!strcmp(v, "none") || !strcmp(v, "None")) {
      node = node_new(p, N_CONST, t->line);
      if (node) node->value = tv_none();
    } else if (with_namespace && is_op(cur(p), ".")) {
      next_tok(p);
      const tpl_token *a = cur(p);
      if (a->kind != TK_NAME) {
        fail_unexpected(p, "name");
      } else {
        next_tok(p);
        node = node_new(p, N_NSREF, t->line);
        if (node) {
          node->name = v;
          node->value = tv_str(a->text, a->len);
        }
      }
    } else {
      node = node_new(p, N_NAME, t->line);
      if (node) node->name = v;
    }
  } else if (t->kind == TK_STRING) {
    next_tok(p);
    node = node_new(p, N_CONST, t->line);
    if (node) {
      if (cur(p)->kind == TK_STRING) {
        poot_strbuf sb;
        poot_strbuf_init(&sb);
        poot_strbuf_append(&sb, t->text, t->len);
        while (cur(p)->kind == TK_STRING) {
          const tpl_token *s = next_tok(p);
          poot_strbuf_append(&sb, s->text, s->len);
        }
        char *d =
            poot_strbuf_status(&sb) ? NULL : poot_arena_memdup(p->arena, sb.data, sb.len + 1, 1);
        if (!d) p->err = poot__tpl_oom();
        node->value = tv_str(d, sb.len);
        poot_strbuf_deinit(&sb);
      } else {
        node->value = tv_str(t->text, t->len);
      }
    }
  } else if (t->kind == TK_INT || t->kind == TK_FLOAT) {
    next_tok(p);
    node = node_new(p, N_CONST, t->line);
    if (node) node->value = t->kind == TK_INT ? tv_int(t->ival) : tv_float(t->fval);
  } else if (is_op(t, "(")) {
    next_tok(p);
    node = parse_tuple(p, false, true, NULL, true, false);
    expect_op(p, ")");
  } else if (is_op(t, "[") || is_op(t, "{")) {
    bool dict = is_op(t, "{");
    const char *close = dict ? "}" : "]";
    next_tok(p);
    nlist items;
    nl_init(&items);
    size_t count = 0;
    while (!p->err && !is_op(cur(p), close)) {
      if (count) {
        if (!expect_op(p, ",")) break;
      }
      if (is_op(cur(p), close)) break;
      if (cur(p)->kind == TK_EOF) {
        fail_unexpected(p, close);
        break;
      }
      nl_push(p, &items, parse_expression(p, true));
      if (dict) {
        expect_op(p, ":");
        nl_push(p, &items, parse_expression(p, true));
      }
      count++;
    }
    expect_op(p, close);
    node = node_new(p, dict ? N_DICT : N_LIST, t->line);
    size_t nk = 0;
    tpl_node **kids = nl_take(p, &items, &nk);
    if (node) {
      node->kids = kids;
      node->nkids = nk;
    }
  } else {
    fail_unexpected(p, NULL);
  }
  leave(p);
  return p->err ? NULL : node;
}

static bool is_tuple_end(parser *p, const char *extra_end) {
  const tpl_token *t = cur(p);
  if (t->kind == TK_VAR_END || t->kind == TK_BLOCK_END || is_op(t, ")")) return true;
  return extra_end && is_name(t, extra_end);
}

static tpl_node *parse_tuple(parser *p, bool simplified, bool with_condexpr, const char *extra_end,
                             bool explicit_parens, bool with_namespace) {
  uint32_t line = cur(p)->line;
  nlist args;
  nl_init(&args);
  bool is_tuple = false;
  for (;;) {
    if (p->err) break;
    if (args.v.len && !expect_op(p, ",")) break;
    if (is_tuple_end(p, extra_end)) break;
    tpl_node *e =
        simplified ? parse_primary(p, with_namespace) : parse_expression(p, with_condexpr);
    nl_push(p, &args, e);
    if (is_op(cur(p), ",")) {
      is_tuple = true;
    } else {
      break;
    }
    line = cur(p)->line;
  }
  size_t nk = 0;
  tpl_node **kids = nl_take(p, &args, &nk);
  if (p->err) return NULL;
  if (!is_tuple) {
    if (nk) return kids[0];
    if (!explicit_parens)
      return fail(p, cur(p)->line, POOT_FORMAT, "expected an expression, got '%s'",
                  describe(cur(p)));
  }
  tpl_node *n = node_new(p, N_TUPLE, line);
  if (!n) return NULL;
  n->kids = kids;
  n->nkids = nk;
  return n;
}

static tpl_node *parse_expression(parser *p, bool with_condexpr) {
  if (!enter(p)) return NULL;
  tpl_node *n = with_condexpr ? parse_condexpr(p) : parse_bool_chain(p, "or", N_OR);
  leave(p);
  return n;
}

static bool can_assign(const tpl_node *n) {
  if (!n) return false;
  if (n->kind == N_NAME || n->kind == N_NSREF) return true;
  if (n->kind == N_TUPLE) {
    for (size_t i = 0; i < n->nkids; i++)
      if (!n->kids[i] || n->kids[i]->kind != N_NAME) return false;
    return true;
  }
  return false;
}

static tpl_node *parse_assign_target(parser *p, bool with_tuple, bool name_only,
                                     const char *extra_end, bool with_namespace) {
  const tpl_token *t = cur(p);
  tpl_node *target;
  if (name_only) {
    if (t->kind != TK_NAME) return fail_unexpected(p, "name");
    next_tok(p);
    target = node_new(p, N_NAME, t->line);
    if (target) target->name = t->text;
    return target;
  }
  target = with_tuple ? parse_tuple(p, true, true, extra_end, false, with_namespace)
                      : parse_primary(p, with_namespace);
  if (p->err) return NULL;
  if (!can_assign(target)) return fail(p, t->line, POOT_FORMAT, "can't assign to this expression");
  return target;
}

/* Macro / call-block signature "(a, b=1)". */
static void parse_signature(parser *p, tpl_node *n) {
  expect_op(p, "(");
  nlist params, defs;
  nl_init(&params);
  nl_init(&defs);
  bool any_default = false;
  while (!p->err && !is_op(cur(p), ")")) {
    if (params.v.len && !expect_op(p, ",")) break;
    tpl_node *arg = parse_assign_target(p, false, true, NULL, false);
    tpl_node *def = NULL;
    if (!p->err && is_op(cur(p), "=")) {
      next_tok(p);
      def = parse_expression(p, true);
      any_default = true;
    } else if (any_default) {
      fail(p, cur(p)->line, POOT_FORMAT, "non-default argument follows default argument");
    }
    nl_push(p, &params, arg);
    nl_push(p, &defs, def);
  }
  expect_op(p, ")");
  n->kids = nl_take(p, &params, &n->nkids);
  size_t nd = 0;
  n->defaults = nl_take(p, &defs, &nd);
}

/* Which of the special names varargs, kwargs and caller a macro body uses
 * (jinja2 decides from this whether a macro accepts extra arguments). */
enum { USES_VARARGS = 1, USES_KWARGS = 2, USES_CALLER = 4 };

static uint8_t uses_special(const tpl_node *n, int depth) {
  if (!n || depth > 1000) return 0;
  uint8_t r = 0;
  if (n->kind == N_NAME) {
    if (!strcmp(n->name, "varargs"))
      r |= USES_VARARGS;
    else if (!strcmp(n->name, "kwargs"))
      r |= USES_KWARGS;
    else if (!strcmp(n->name, "caller"))
      r |= USES_CALLER;
  }
  r |= uses_special(n->a, depth + 1) | uses_special(n->b, depth + 1) |
       uses_special(n->c, depth + 1) | uses_special(n->dyn_args, depth + 1) |
       uses_special(n->dyn_kwargs, depth + 1);
  for (size_t i = 0; i < n->nkids; i++) r |= uses_special(n->kids[i], depth + 1);
  for (size_t i = 0; i < n->nkw; i++) r |= uses_special(n->kwvals[i], depth + 1);
  if (n->defaults && (n->kind == N_MACRO || n->kind == N_CALLBLOCK || n->kind == N_WITH))
    for (size_t i = 0; i < n->nkids; i++) r |= uses_special(n->defaults[i], depth + 1);
  for (size_t i = 0; i < n->nbody; i++) r |= uses_special(n->body[i], depth + 1);
  for (size_t i = 0; i < n->nelse; i++) r |= uses_special(n->else_body[i], depth + 1);
  return r;
}

static uint8_t body_uses_special(const tpl_node *n) {
  uint8_t r = 0;
  for (size_t i = 0; i < n->nbody; i++) r |= uses_special(n->body[i], 0);
  return r;
}

static tpl_node *parse_statement(parser *p) {
  const tpl_token *t = cur(p);
  if (t->kind != TK_NAME) return fail(p, t->line, POOT_FORMAT, "tag name expected");
  const char *w = t->text;
  uint32_t line = t->line;
  if (!enter(p)) return NULL;
  tpl_node *n = NULL;
  if (!strcmp(w, "for")) {
    next_tok(p);
    n = node_new(p, N_FOR, line);
    if (!n) goto out;
    n->a = parse_assign_target(p, true, false, "in", false);
    if (!p->err && !is_name(cur(p), "in")) {
      fail_unexpected(p, "'in'");
      goto out;
    }
    next_tok(p);
    n->b = parse_tuple(p, false, false, "recursive", false, false);
    if (!p->err && is_name(cur(p), "if")) {
      next_tok(p);
      n->c = parse_expression(p, true);
    }
    if (!p->err && is_name(cur(p), "recursive")) {
      next_tok(p);
      n->flag = true;
    }
    static const char *const end1[] = {"endfor", "else", NULL};
    if (!parse_statements_into(p, end1, false, &n->body, &n->nbody)) goto out;
    if (is_name(next_tok(p), "else")) {
      static const char *const end2[] = {"endfor", NULL};
      parse_statements_into(p, end2, true, &n->else_body, &n->nelse);
    }
  } else if (!strcmp(w, "if")) {
    next_tok(p);
    n = node_new(p, N_IF, line);
    tpl_node *node = n;
    while (node && !p->err) {
      node->a = parse_tuple(p, false, false, NULL, false, false);
      static const char *const end1[] = {"elif", "else", "endif", NULL};
      if (!parse_statements_into(p, end1, false, &node->body, &node->nbody)) break;
      const tpl_token *e = next_tok(p);
      if (is_name(e, "elif")) {
        tpl_node *sub = node_new(p, N_IF, cur(p)->line);
        if (!sub) break;
        node->else_body = POOT_ARENA_NEW_ARRAY(p->arena, tpl_node *, 1);
        if (!node->else_body) {
          fail(p, line, POOT_OUT_OF_MEMORY, "out of memory");
          break;
        }
        node->else_body[0] = sub;
        node->nelse = 1;
        node = sub;
        continue;
      }
      if (is_name(e, "else")) {
        static const char *const end2[] = {"endif", NULL};
        parse_statements_into(p, end2, true, &node->else_body, &node->nelse);
      }
      break;
    }
  } else if (!strcmp(w, "set")) {
    next_tok(p);
    tpl_node *target = parse_assign_target(p, true, false, NULL, true);
    if (p->err) goto out;
    if (is_op(cur(p), "=")) {
      next_tok(p);
      n = node_new(p, N_SET, line);
      if (!n) goto out;
      n->a = target;
      n->b = parse_tuple(p, false, true, NULL, false, false);
    } else {
      n = node_new(p, N_SETBLOCK, line);
      if (!n) goto out;
      n->a = target;
      n->c = parse_filter(p, NULL, false);
      static const char *const end[] = {"endset", NULL};
      parse_statements_into(p, end, true, &n->body, &n->nbody);
    }
  } else if (!strcmp(w, "macro")) {
    next_tok(p);
    n = node_new(p, N_MACRO, line);
    if (!n) goto out;
    tpl_node *name = parse_assign_target(p, false, true, NULL, false);
    if (p->err) goto out;
    n->name = name->name;
    parse_signature(p, n);
    static const char *const end[] = {"endmacro", NULL};
    parse_statements_into(p, end, true, &n->body, &n->nbody);
    if (!p->err) n->op = body_uses_special(n);
  } else if (!strcmp(w, "call")) {
    next_tok(p);
    n = node_new(p, N_CALLBLOCK, line);
    if (!n) goto out;
    if (is_op(cur(p), "(")) parse_signature(p, n);
    n->a = parse_expression(p, true);
    if (!p->err && (!n->a || n->a->kind != N_CALL)) {
      fail(p, line, POOT_FORMAT, "expected call");
      goto out;
    }
    static const char *const end[] = {"endcall", NULL};
    parse_statements_into(p, end, true, &n->body, &n->nbody);
    if (!p->err) n->op = body_uses_special(n);
  } else if (!strcmp(w, "filter")) {
    next_tok(p);
    n = node_new(p, N_FILTERBLOCK, line);
    if (!n) goto out;
    n->a = parse_filter(p, NULL, true);
    static const char *const end[] = {"endfilter", NULL};
    parse_statements_into(p, end, true, &n->body, &n->nbody);
  } else if (!strcmp(w, "with")) {
    next_tok(p);
    n = node_new(p, N_WITH, line);
    if (!n) goto out;
    nlist targets, values;
    nl_init(&targets);
    nl_init(&values);
    while (!p->err && cur(p)->kind != TK_BLOCK_END) {
      if (targets.v.len && !expect_op(p, ",")) break;
      tpl_node *tg = parse_assign_target(p, true, false, NULL, false);
      nl_push(p, &targets, tg);
      expect_op(p, "=");
      nl_push(p, &values, parse_expression(p, true));
    }
    n->kids = nl_take(p, &targets, &n->nkids);
    size_t nv = 0;
    n->defaults = nl_take(p, &values, &nv);
    static const char *const end[] = {"endwith", NULL};
    parse_statements_into(p, end, true, &n->body, &n->nbody);
  } else if (!strcmp(w, "generation")) {
    /* transformers' AssistantTracker tag: renders its body unchanged. */
    next_tok(p);
    n = node_new(p, N_BLOCKLIST, line);
    if (!n) goto out;
    static const char *const end[] = {"endgeneration", NULL};
    parse_statements_into(p, end, true, &n->body, &n->nbody);
  } else if (!strcmp(w, "break") || !strcmp(w, "continue")) {
    next_tok(p);
    n = node_new(p, w[0] == 'b' ? N_BREAK : N_CONTINUE, line);
  } else if (!strcmp(w, "block") || !strcmp(w, "extends") || !strcmp(w, "include") ||
             !strcmp(w, "import") || !strcmp(w, "from") || !strcmp(w, "autoescape")) {
    fail(p, line, POOT_UNSUPPORTED, "the {%% %s %%} statement is not supported", w);
  } else {
    fail(p, line, POOT_FORMAT, "Encountered unknown tag '%s'", w);
  }
out:
  leave(p);
  return p->err ? NULL : n;
}

static bool name_in(const tpl_token *t, const char *const *end) {
  if (!end || t->kind != TK_NAME) return false;
  for (size_t i = 0; end[i]; i++)
    if (!strcmp(t->text, end[i])) return true;
  return false;
}

/* Parses statements until a block whose tag name is in `end` (NULL: until
 * the end of the template). The stream is left at that name. */
static bool subparse(parser *p, const char *const *end, tpl_node ***out_body, size_t *out_n) {
  nlist body;
  nl_init(&body);
  bool found_end = false;
  while (!p->err) {
    const tpl_token *t = cur(p);
    if (t->kind == TK_EOF) break;
    if (t->kind == TK_DATA) {
      next_tok(p);
      tpl_node *n = node_new(p, N_DATA, t->line);
      if (n) n->value = tv_str(t->text, t->len);
      nl_push(p, &body, n);
    } else if (t->kind == TK_VAR_BEGIN) {
      next_tok(p);
      tpl_node *n = node_new(p, N_PRINT, t->line);
      if (n) n->a = parse_tuple(p, false, true, NULL, false, false);
      expect_kind(p, TK_VAR_END, "'}}'");
      nl_push(p, &body, n);
    } else if (t->kind == TK_BLOCK_BEGIN) {
      next_tok(p);
      if (name_in(cur(p), end)) {
        found_end = true;
        break;
      }
      tpl_node *n = parse_statement(p);
      expect_kind(p, TK_BLOCK_END, "'%}'");
      nl_push(p, &body, n);
    } else {
      fail_unexpected(p, NULL);
    }
  }
  *out_body = nl_take(p, &body, out_n);
  if (!p->err && end && !found_end)
    fail(p, cur(p)->line, POOT_FORMAT, "unexpected end of template: expected '%s'", end[0]);
  return !p->err;
}

static bool parse_statements_into(parser *p, const char *const *end, bool drop_needle,
                                  tpl_node ***out_body, size_t *out_n) {
  *out_body = NULL;
  *out_n = 0;
  if (p->err) return false;
  if (is_op(cur(p), ":")) next_tok(p);
  if (!expect_kind(p, TK_BLOCK_END, "'%}'")) return false;
  if (!subparse(p, end, out_body, out_n)) return false;
  if (drop_needle) next_tok(p);
  return true;
}

poot_status poot__tpl_parse(poot_arena *arena, const tpl_token *tokens, size_t count,
                            tpl_node **out_root) {
  *out_root = NULL;
  parser p = {.arena = arena, .t = tokens, .n = count};
  tpl_node *root = node_new(&p, N_BLOCKLIST, 1);
  if (root) subparse(&p, NULL, &root->body, &root->nbody);
  if (p.err) return p.err;
  *out_root = root;
  return NULL;
}
