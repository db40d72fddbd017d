/* template_impl.h — private to src/llm/template/: tokens, the syntax tree, the
 * value model and the interpreter state of the chat-template engine. */
#ifndef POOT_LLM_TEMPLATE_IMPL_H
#define POOT_LLM_TEMPLATE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/llm/chat_template.h"

/* ------------------------------------------------------------------ tokens */

typedef enum tpl_tok_kind {
  TK_EOF = 0,
  TK_DATA,        /* text between tags (already whitespace-controlled) */
  TK_VAR_BEGIN,   /* {{ */
  TK_VAR_END,     /* }} */
  TK_BLOCK_BEGIN, /* {% */
  TK_BLOCK_END,   /* %} */
  TK_NAME,
  TK_STRING, /* decoded */
  TK_INT,
  TK_FLOAT,
  TK_OP /* text holds the operator */
} tpl_tok_kind;

typedef struct tpl_token {
  tpl_tok_kind kind;
  uint32_t line;
  const char *text; /* DATA/NAME/STRING/OP: bytes (arena); NUL-terminated */
  size_t len;
  int64_t ival;
  double fval;
} tpl_token;

/* Tokenizes normalized source into an array of tokens ending with TK_EOF. */
POOT_MUST_USE poot_status poot__tpl_lex(poot_arena *arena, const char *src, size_t len,
                                        tpl_token **out_tokens, size_t *out_count);

/* ---------------------------------------------------------------- the tree */

typedef struct tpl_node tpl_node;

typedef enum tpl_node_kind {
  /* expressions */
  N_CONST,
  N_NAME,
  N_NSREF, /* name.attr as an assignment target */
  N_LIST,
  N_TUPLE,
  N_DICT, /* kids: key, value, key, value, ... */
  N_GETATTR,
  N_GETITEM,
  N_SLICE, /* kids[0..2]: start, stop, step (each may be NULL) */
  N_CALL,
  N_FILTER, /* a = operand (NULL inside {% filter %}), name */
  N_TEST,
  N_BINOP,
  N_NEG,
  N_POS,
  N_NOT,
  N_AND,
  N_OR,
  N_COMPARE, /* a = first; kids = operands; ops = operators */
  N_CONCAT,
  N_COND, /* a = test, b = then, c = else (may be NULL) */
  /* statements */
  N_DATA,
  N_PRINT,
  N_IF,          /* a = test, body, else_body */
  N_FOR,         /* a = target, b = iterable, c = filter (may be NULL), body, else_body */
  N_SET,         /* a = target, b = value */
  N_SETBLOCK,    /* a = target, c = filter chain (may be NULL), body */
  N_MACRO,       /* name, params (kids = N_NAME params), defaults (b_list), body */
  N_CALLBLOCK,   /* a = the call, kids = caller params, defaults, body */
  N_FILTERBLOCK, /* a = filter chain, body */
  N_WITH,        /* kids = targets, defaults = values, body */
  N_BREAK,
  N_CONTINUE,
  N_BLOCKLIST /* body: a sequence of statements */
} tpl_node_kind;

typedef enum tpl_binop {
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_FLOORDIV,
  OP_MOD,
  OP_POW,
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE,
  OP_IN,
  OP_NOTIN
} tpl_binop;

/* ------------------------------------------------------------------ values */

typedef enum tpl_kind {
  TV_UNDEF = 0,
  TV_NONE,
  TV_BOOL,
  TV_INT,
  TV_FLOAT,
  TV_STR,
  TV_LIST, /* also tuples (flag TVF_TUPLE) */
  TV_DICT,
  TV_NS,   /* namespace(): a mutable dict of attributes */
  TV_FUNC, /* a callable: macro, builtin, bound method */
  TV_LOOP  /* the `loop` variable of a for loop */
} tpl_kind;

enum {
  TVF_TUPLE = 1,  /* a list that prints as a tuple */
  TVF_SAFE = 2,   /* a Markup string (|safe) */
  TVF_UNSAFE = 4, /* an undefined standing for a blocked attribute */
  TVF_GEN = 8,    /* a list standing for a Python generator (always true, no len) */
  TVF_HINT = 16   /* an undefined whose u.s.p is the whole error message */
};

typedef struct tpl_list tpl_list;
typedef struct tpl_dict tpl_dict;
typedef struct tpl_func tpl_func;
typedef struct tpl_loop tpl_loop;

typedef struct tpl_value {
  uint8_t kind;
  uint8_t flags;
  union {
    bool b;
    int64_t i;
    double f;
    struct {
      const char *p;
      size_t n;
    } s;            /* STR; UNDEF: the name it stands for (may be NULL) */
    tpl_list *list; /* LIST */
    tpl_dict *dict; /* DICT, NS */
    tpl_func *func; /* FUNC */
    tpl_loop *loop; /* LOOP */
  } u;
} tpl_value;

struct tpl_list {
  size_t n;
  tpl_value *items;
};

struct tpl_dict {
  size_t n, cap;
  tpl_value *keys;
  tpl_value *vals;
  uint32_t *index; /* open-addressing hash index (entry + 1; 0 empty) once n > 8 */
  size_t icap;     /* slots of index: a power of two, or 0 */
};

struct tpl_node {
  uint8_t kind;
  uint8_t op; /* BINOP operator */
  bool flag;  /* TEST: negated; FOR: recursive; MACRO: uses caller */
  uint32_t line;
  const char *name; /* NAME / attribute / filter / test / macro name */
  tpl_value value;  /* CONST */
  tpl_node *a, *b, *c;
  tpl_node **kids; /* args / items / params / operands */
  size_t nkids;
  const char **kwnames; /* CALL/FILTER/TEST keyword argument names */
  tpl_node **kwvals;
  size_t nkw;
  tpl_node *dyn_args, *dyn_kwargs;
  uint8_t *ops;        /* COMPARE operators */
  tpl_node **defaults; /* MACRO/CALLBLOCK: default per param (NULL = none); WITH: values */
  tpl_node **body;
  size_t nbody;
  tpl_node **else_body;
  size_t nelse;
};

/* Parses tokens into the root statement list. */
POOT_MUST_USE poot_status poot__tpl_parse(poot_arena *arena, const tpl_token *tokens, size_t count,
                                          tpl_node **out_root);

struct poot_chat_template {
  poot_arena arena; /* tokens and tree */
  tpl_node *root;
  const char *source; /* a copy of the text, NUL-terminated (arena) */
  size_t source_len;
};

/* ------------------------------------------------------------- interpreter */

typedef struct tpl_scope tpl_scope;
struct tpl_scope {
  tpl_scope *parent;
  size_t n, cap;
  const char **names;
  tpl_value *vals;
};

typedef enum tpl_func_kind {
  FN_MACRO,
  FN_BUILTIN, /* a global function: name identifies it */
  FN_METHOD,  /* a bound method: self + name */
  FN_CALLER,  /* the caller() of a {% call %} block */
  FN_UNSAFE   /* a blocked method: calling it is a security error */
} tpl_func_kind;

struct tpl_func {
  tpl_func_kind kind;
  const char *name;
  tpl_value self;       /* METHOD */
  const tpl_node *node; /* MACRO / CALLER: the definition */
  tpl_scope *closure;   /* MACRO / CALLER: where it was defined */
  tpl_value caller;     /* MACRO invoked by {% call %}: the caller function */
};

struct tpl_loop {
  size_t index0;
  size_t length;
  tpl_list *items;
  uint32_t depth0;
  const tpl_node *node; /* the for statement (for recursive loops) */
  tpl_scope *scope;     /* scope the for statement runs in */
  tpl_value last_changed;
  bool has_changed;
};

typedef enum tpl_flow { FLOW_NORMAL = 0, FLOW_BREAK, FLOW_CONTINUE } tpl_flow;

/* Which bound of the render a walk of a nested value ran past (OOM: the
 * system itself ran out of memory). */
typedef enum tpl_over {
  TPL_OVER_NONE = 0,
  TPL_OVER_STEPS,
  TPL_OVER_OUTPUT,
  TPL_OVER_MEMORY,
  TPL_OVER_OOM
} tpl_over;

typedef struct tpl_ctx {
  poot_arena arena; /* every value of this render */
  poot_chat_template_render_params params;
  tpl_scope *globals;
  poot_strbuf *out;
  uint64_t steps;
  uint32_t depth;
  uint32_t nest;     /* C recursion of the interpreter */
  uint64_t captures; /* closures made so far (a captured scope is never reused) */
  char *raised;      /* raise_exception message (heap) */
  uint8_t over;      /* tpl_over: the bound a walk stopped at */
} tpl_ctx;

/* The cost model. One step is one statement, expression or loop iteration,
 * one value visited by a walk of a nested value (==, <, hashing, str(),
 * repr(), json.dumps, `in`, sorting), or about 64 bytes of text such a walk
 * copies. A value may share its parts (a list holding one list twice), so a
 * walk can visit exponentially more values than the render allocated: only
 * per-value charging bounds it. */
#define TPL_TEXT_STEP 64

/* Charges `units` of work (elements touched by a builtin) against the step
 * bound, so that no single operation on a huge value escapes it. */
POOT_MUST_USE poot_status poot__tpl_charge(tpl_ctx *ctx, const tpl_node *at, uint64_t units);

/* Charges one walk's units; false (and ctx->over set) past the step bound. */
static inline bool tpl_tick(tpl_ctx *ctx, uint64_t units) {
  ctx->steps += units;
  if (ctx->steps <= ctx->params.max_steps) return true;
  ctx->over = TPL_OVER_STEPS;
  return false;
}

/* False (and ctx->over set) once text a walk is building passes the output
 * bound, or would not fit in the memory the render's values leave. */
static inline bool tpl_text_fits(tpl_ctx *ctx, const poot_strbuf *sb) {
  if (sb->len > ctx->params.max_output) {
    ctx->over = TPL_OVER_OUTPUT;
    return false;
  }
  if (ctx->arena.used_total + sb->len > ctx->params.max_memory) {
    ctx->over = TPL_OVER_MEMORY;
    return false;
  }
  return true;
}

/* CAPACITY naming the bound of ctx->over (the step bound when none is set);
 * OUT_OF_MEMORY for TPL_OVER_OOM. */
POOT_MUST_USE poot_status poot__tpl_over(tpl_ctx *ctx, const tpl_node *at);

/* Errors carrying the line. */
POOT_MUST_USE poot_status poot__tpl_err(tpl_ctx *ctx, const tpl_node *at, poot_status_code code,
                                        const char *fmt, ...) POOT_PRINTF(4, 5);
POOT_MUST_USE poot_status poot__tpl_oom(void);

/* Value helpers (tpl_value.c). */
static inline tpl_value tv_undef(const char *name) {
  tpl_value v = {.kind = TV_UNDEF};
  v.u.s.p = name;
  return v;
}
static inline tpl_value tv_none(void) {
  return (tpl_value){.kind = TV_NONE};
}
static inline tpl_value tv_bool(bool b) {
  tpl_value v = {.kind = TV_BOOL};
  v.u.b = b;
  return v;
}
static inline tpl_value tv_int(int64_t i) {
  tpl_value v = {.kind = TV_INT};
  v.u.i = i;
  return v;
}
static inline tpl_value tv_float(double f) {
  tpl_value v = {.kind = TV_FLOAT};
  v.u.f = f;
  return v;
}
static inline tpl_value tv_str(const char *p, size_t n) {
  tpl_value v = {.kind = TV_STR};
  v.u.s.p = p;
  v.u.s.n = n;
  return v;
}
static inline bool tv_is_num(tpl_value v) {
  return v.kind == TV_INT || v.kind == TV_FLOAT || v.kind == TV_BOOL;
}

POOT_MUST_USE poot_status poot__tv_list_new(tpl_ctx *ctx, size_t n, tpl_value *out);
POOT_MUST_USE poot_status poot__tv_dict_new(tpl_ctx *ctx, size_t cap, tpl_value *out);
/* Sets key to val (replacing an equal key). */
POOT_MUST_USE poot_status poot__tv_dict_set(tpl_ctx *ctx, tpl_dict *d, tpl_value key,
                                            tpl_value val);
/* *out_index: the index of the key, or -1. */
POOT_MUST_USE poot_status poot__tv_dict_find(tpl_ctx *ctx, const tpl_node *at, const tpl_dict *d,
                                             tpl_value key, long *out_index);
/* The index of a string key or -1 (costs no steps: one string compare). */
long poot__tv_dict_find_str(const tpl_dict *d, const char *key, size_t n);
POOT_MUST_USE poot_status poot__tv_from_json(tpl_ctx *ctx, const poot_json *j, tpl_value *out);

bool poot__tv_truthy(tpl_value v);

/* The walks below charge steps per value visited (see the cost model above)
 * and return CAPACITY naming the bound once one is exhausted. */

/* Python ==. */
POOT_MUST_USE poot_status poot__tv_equal(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                                         bool *out_eq);
/* Python <: *out_ordered false when the types do not order, else *out_lt. */
POOT_MUST_USE poot_status poot__tv_less(tpl_ctx *ctx, const tpl_node *at, tpl_value a, tpl_value b,
                                        bool *out_ordered, bool *out_lt);
/* str(v) and repr(v) appended to sb. str of an undefined is "". Text past
 * max_output is CAPACITY. */
POOT_MUST_USE poot_status poot__tv_str(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb,
                                       tpl_value v);
POOT_MUST_USE poot_status poot__tv_repr(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb,
                                        tpl_value v);
/* str(v) as a value (the same value when it is already a string). */
POOT_MUST_USE poot_status poot__tv_to_str(tpl_ctx *ctx, const tpl_node *at, tpl_value v,
                                          tpl_value *out);
/* Python's float repr. */
void poot__tv_float_repr(poot_strbuf *sb, double f);

/* json.dumps options: indent NULL for none, else the indent unit text. */
typedef struct tpl_json_style {
  bool ensure_ascii;
  bool sort_keys;
  const char *indent;
  const char *item_sep;
  const char *key_sep;
} tpl_json_style;

/* json.dumps(v) appended to sb. FORMAT (naming the type) when v holds
 * something JSON cannot encode or keys that do not sort. */
POOT_MUST_USE poot_status poot__tv_json(tpl_ctx *ctx, const tpl_node *at, poot_strbuf *sb,
                                        tpl_value v, const tpl_json_style *style);
const char *poot__tv_type_name(tpl_value v);
/* Copies bytes into the render arena. */
POOT_MUST_USE poot_status poot__tv_strdup(tpl_ctx *ctx, const char *p, size_t n, tpl_value *out);
/* Moves a strbuf's contents into a string value (the strbuf is cleared). */
POOT_MUST_USE poot_status poot__tv_from_sb(tpl_ctx *ctx, poot_strbuf *sb, tpl_value *out);

/* UTF-8 helpers. */
size_t poot__tpl_utf8_len(const char *p, size_t n);            /* code points */
size_t poot__tpl_utf8_next(const char *p, size_t n, size_t i); /* byte after the code point at i */
/* Byte offset of code point index k (clamped to n). */
size_t poot__tpl_utf8_offset(const char *p, size_t n, size_t k);
/* Decodes the code point at i; *out_len = its byte length. */
uint32_t poot__tpl_utf8_decode(const char *p, size_t n, size_t i, size_t *out_len);
/* The line of p[0, n) that starts at i, as Python's str.splitlines sees it:
 * *out_end is where its text ends, *out_next where the next line starts (past
 * the break: \n, \r, \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029), n when
 * it is the last. */
void poot__tpl_line_at(const char *p, size_t n, size_t i, size_t *out_end, size_t *out_next);
void poot__tpl_utf8_put(poot_strbuf *sb, uint32_t cp);
bool poot__tpl_py_isspace(uint32_t cp);

/* Iteration: materializes an iterable value as a list (dict → keys, string →
 * characters, undefined → empty). FORMAT when it is not iterable. */
POOT_MUST_USE poot_status poot__tv_iterate(tpl_ctx *ctx, const tpl_node *at, tpl_value v,
                                           tpl_list **out_list);

/* Interpreter entry points (tpl_eval.c). */
POOT_MUST_USE poot_status poot__tpl_eval(tpl_ctx *ctx, tpl_scope *scope, const tpl_node *n,
                                         tpl_value *out);
POOT_MUST_USE poot_status poot__tpl_exec_body(tpl_ctx *ctx, tpl_scope *scope, tpl_node *const *body,
                                              size_t n, tpl_flow *flow);
POOT_MUST_USE poot_status poot__tpl_getattr(tpl_ctx *ctx, const tpl_node *at, tpl_value obj,
                                            const char *name, tpl_value *out);
POOT_MUST_USE poot_status poot__tpl_getitem(tpl_ctx *ctx, const tpl_node *at, tpl_value obj,
                                            tpl_value key, tpl_value *out);
/* Calls any callable with evaluated arguments. */
POOT_MUST_USE poot_status poot__tpl_call(tpl_ctx *ctx, const tpl_node *at, tpl_value fn,
                                         const tpl_value *args, size_t nargs,
                                         const char *const *kwnames, const tpl_value *kwvals,
                                         size_t nkw, tpl_value *out);
POOT_MUST_USE poot_status poot__tpl_step(tpl_ctx *ctx, const tpl_node *at);

/* Builtins (tpl_builtins.c). */
POOT_MUST_USE poot_status poot__tpl_filter(tpl_ctx *ctx, const tpl_node *at, const char *name,
                                           tpl_value operand, const tpl_value *args, size_t nargs,
                                           const char *const *kwnames, const tpl_value *kwvals,
                                           size_t nkw, tpl_value *out);
POOT_MUST_USE poot_status poot__tpl_test(tpl_ctx *ctx, const tpl_node *at, const char *name,
                                         tpl_value operand, const tpl_value *args, size_t nargs,
                                         bool *out);
/* A builtin global function by name (range, namespace, dict, ...), or false. */
bool poot__tpl_builtin_exists(const char *name);
POOT_MUST_USE poot_status poot__tpl_call_builtin(tpl_ctx *ctx, const tpl_node *at, const char *name,
                                                 const tpl_value *args, size_t nargs,
                                                 const char *const *kwnames,
                                                 const tpl_value *kwvals, size_t nkw,
                                                 tpl_value *out);
/* A method of str/dict/list: true when `name` is one (and sets *out_safe to
 * false when it is a mutating method the sandbox blocks). */
bool poot__tpl_method_exists(tpl_value self, const char *name, bool *out_safe);
POOT_MUST_USE poot_status poot__tpl_call_method(tpl_ctx *ctx, const tpl_node *at, tpl_value self,
                                                const char *name, const tpl_value *args,
                                                size_t nargs, const char *const *kwnames,
                                                const tpl_value *kwvals, size_t nkw,
                                                tpl_value *out);
/* Binary arithmetic with Python semantics. */
POOT_MUST_USE poot_status poot__tpl_binop(tpl_ctx *ctx, const tpl_node *at, int op, tpl_value a,
                                          tpl_value b, tpl_value *out);

#endif
