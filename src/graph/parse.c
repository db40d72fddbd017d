/* parse.c — the reader of the text form (.pgraph). Hostile input is
 * expected: every error is FORMAT "line L:C: expected X, got Y", nothing is
 * trusted until poot_graph_verify has passed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"

#define MAX_DEPTH 32
#define MAX_RESULTS 64
#define MAX_OPERANDS 64
#define MAX_PARAM_INDEX 65535

typedef enum tkind { T_EOF, T_VAL, T_STR, T_WORD, T_PUNCT, T_BAD } tkind;

typedef struct tok {
  tkind kind;
  const char *s; /* VAL: name without '%'; STR: with quotes; else the text */
  size_t n;
  uint32_t line, col;
} tok;

typedef struct pending_update {
  poot_value state, value;
  uint32_t line, col;
} pending_update;

typedef struct parser {
  const char *text;
  size_t len, pos;
  uint32_t line, col;
  tok cur;
  poot_graph *g;
  poot_map names;
  poot_vec updates; /* pending_update */
  bool have_output;
} parser;

/* ------------------------------------------------------------------ lexer */

static bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '+' || c == '-';
}

static void adv(parser *p) {
  if (p->text[p->pos] == '\n') {
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
  p->pos++;
}

static void lex(parser *p) {
  for (;;) {
    while (p->pos < p->len && (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
                               p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
      adv(p);
    if (p->pos < p->len && p->text[p->pos] == '#') {
      while (p->pos < p->len && p->text[p->pos] != '\n') adv(p);
      continue;
    }
    break;
  }
  tok *t = &p->cur;
  t->line = p->line;
  t->col = p->col;
  t->s = p->text + p->pos;
  t->n = 0;
  if (p->pos >= p->len) {
    t->kind = T_EOF;
    return;
  }
  char c = p->text[p->pos];
  if (c == '%') {
    adv(p);
    t->s = p->text + p->pos;
    while (p->pos < p->len) {
      char d = p->text[p->pos];
      if (!((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9') || d == '_'))
        break;
      adv(p);
      t->n++;
    }
    t->kind = t->n ? T_VAL : T_BAD;
    return;
  }
  if (c == '"') {
    adv(p);
    while (p->pos < p->len && p->text[p->pos] != '"' && p->text[p->pos] != '\n') {
      if (p->text[p->pos] == '\\' && p->pos + 1 < p->len && p->text[p->pos + 1] != '\n') adv(p);
      adv(p);
    }
    if (p->pos >= p->len || p->text[p->pos] != '"') {
      t->kind = T_BAD;
      t->n = (size_t)(p->text + p->pos - t->s);
      return;
    }
    adv(p);
    t->kind = T_STR;
    t->n = (size_t)(p->text + p->pos - t->s);
    return;
  }
  if (c && strchr("=,:(){}[]", c)) {
    adv(p);
    t->kind = T_PUNCT;
    t->n = 1;
    return;
  }
  if (word_char(c)) {
    while (p->pos < p->len && word_char(p->text[p->pos])) adv(p);
    t->kind = T_WORD;
    t->n = (size_t)(p->text + p->pos - t->s);
    return;
  }
  adv(p);
  t->kind = T_BAD;
  t->n = 1;
}

static poot_status err_at(const tok *t, const char *expected) {
  if (t->kind == T_BAD && t->n && t->s[0] == '"')
    return poot_status_make(POOT_FORMAT, "line %u:%u: unterminated string (expected %s)", t->line,
                            t->col, expected);
  char shown[48];
  size_t k = 0;
  if (t->kind == T_EOF) {
    snprintf(shown, sizeof shown, "end of input");
  } else {
    const char *s = t->kind == T_VAL ? t->s - 1 : t->s;
    size_t n = t->kind == T_VAL ? t->n + 1 : t->n;
    shown[k++] = '\'';
    for (size_t i = 0; i < n && k < 40; i++) {
      unsigned char c = (unsigned char)s[i];
      shown[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n > 38) {
      shown[k++] = '.';
      shown[k++] = '.';
    }
    shown[k++] = '\'';
    shown[k] = 0;
  }
  return poot_status_make(POOT_FORMAT, "line %u:%u: expected %s, got %s", t->line, t->col,
                          expected, shown);
}

static poot_status err_msg(const tok *t, const char *msg) {
  return poot_status_make(POOT_FORMAT, "line %u:%u: %s", t->line, t->col, msg);
}

static bool is_punct(const parser *p, char c) {
  return p->cur.kind == T_PUNCT && p->cur.s[0] == c;
}
static bool is_word(const parser *p, const char *w) {
  return p->cur.kind == T_WORD && strlen(w) == p->cur.n && memcmp(p->cur.s, w, p->cur.n) == 0;
}

static poot_status expect_punct(parser *p, char c) {
  if (!is_punct(p, c)) {
    char what[8] = {'\'', c, '\'', 0};
    return err_at(&p->cur, what);
  }
  lex(p);
  return NULL;
}

/* ----------------------------------------------------------- small parts */

static bool tok_int(const tok *t, int64_t *out) {
  if (t->kind != T_WORD || t->n == 0 || t->n > 24) return false;
  char buf[32];
  memcpy(buf, t->s, t->n);
  buf[t->n] = 0;
  const char *b = buf;
  if (*b == '-') b++;
  if (!*b) return false;
  for (const char *q = b; *q; q++)
    if (*q < '0' || *q > '9') return false;
  errno = 0;
  long long v = strtoll(buf, NULL, 10);
  if (errno) return false;
  *out = v;
  return true;
}

static poot_status parse_int(parser *p, int64_t *out, const char *what) {
  if (!tok_int(&p->cur, out)) return err_at(&p->cur, what);
  lex(p);
  return NULL;
}

static poot_status parse_int_list(parser *p, int64_t *out, uint32_t *out_n) {
  *out_n = 0;
  POOT_TRY(expect_punct(p, '['));
  if (is_punct(p, ']')) {
    lex(p);
    return NULL;
  }
  for (;;) {
    if (*out_n >= POOT_MAX_RANK) return err_msg(&p->cur, "a list has at most 8 entries");
    POOT_TRY(parse_int(p, &out[*out_n], "an integer"));
    (*out_n)++;
    if (is_punct(p, ']')) {
      lex(p);
      return NULL;
    }
    POOT_TRY(expect_punct(p, ','));
  }
}

static poot_status parse_type(parser *p, poot_type *out) {
  memset(out, 0, sizeof *out);
  if (p->cur.kind != T_WORD || !poot_dtype_from_name(p->cur.s, p->cur.n, &out->dtype))
    return err_at(&p->cur, "a dtype");
  lex(p);
  POOT_TRY(expect_punct(p, '['));
  if (is_punct(p, ']')) {
    lex(p);
    return NULL;
  }
  for (;;) {
    if (out->shape.rank >= POOT_MAX_RANK) return err_msg(&p->cur, "rank exceeds 8");
    int64_t d = 0;
    tok at = p->cur;
    POOT_TRY(parse_int(p, &d, "a dim"));
    if (d < 0) return err_at(&at, "a dim >= 0");
    out->shape.dims[out->shape.rank++] = d;
    if (is_punct(p, ']')) {
      lex(p);
      return NULL;
    }
    POOT_TRY(expect_punct(p, ','));
  }
}

/* Decodes a string token into the graph's arena. */
static poot_status decode_string(parser *p, const tok *t, const char **out) {
  *out = NULL;
  char *buf = poot_arena_alloc(&p->g->arena, t->n + 1, 1);
  if (!buf) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
  size_t k = 0;
  for (size_t i = 1; i + 1 < t->n; i++) {
    char c = t->s[i];
    if (c != '\\') {
      buf[k++] = c;
      continue;
    }
    char e = t->s[++i];
    if (e == 'n') {
      buf[k++] = '\n';
    } else if (e == 't') {
      buf[k++] = '\t';
    } else if (e == '"' || e == '\\') {
      buf[k++] = e;
    } else if (e == 'x' && i + 2 < t->n - 1) {
      unsigned v = 0;
      for (int j = 1; j <= 2; j++) {
        char h = t->s[i + j];
        v <<= 4;
        if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
        else return err_msg(t, "bad \\x escape in string");
      }
      if (v == 0) return err_msg(t, "a string cannot contain NUL");
      buf[k++] = (char)v;
      i += 2;
    } else {
      return err_msg(t, "bad escape in string (\\n \\t \\\" \\\\ \\xHH)");
    }
  }
  buf[k] = 0;
  *out = buf;
  return NULL;
}

static poot_status parse_string(parser *p, const char **out, const char *what) {
  if (p->cur.kind != T_STR) return err_at(&p->cur, what);
  POOT_TRY(decode_string(p, &p->cur, out));
  lex(p);
  return NULL;
}

/* A weight's display name: a plain word ("blk.3.attn_q"), a quoted string,
 * or a word ending in '.' followed by a quoted string (the two joined:
 * blk.2."x" is "blk.2.x"). Its key is the one the text form gives a name. */
static poot_status parse_weight_name(parser *p, poot_weight_id *out) {
  tok prefix = {0};
  if (p->cur.kind == T_WORD && p->cur.n > 0 && p->cur.s[p->cur.n - 1] == '.') {
    prefix = p->cur;
    lex(p);
  } else if (p->cur.kind == T_WORD) {
    char *w = poot_arena_alloc(&p->g->arena, p->cur.n + 1, 1);
    if (!w) return poot_status_make(POOT_OUT_OF_MEMORY, "graph text: weight name");
    memcpy(w, p->cur.s, p->cur.n);
    w[p->cur.n] = '\0';
    lex(p);
    *out = poot_weight_id_named(w);
    return NULL;
  }
  const char *rest = NULL;
  POOT_TRY(parse_string(p, &rest, prefix.n ? "a quoted weight name" : "a weight name"));
  size_t rn = strlen(rest);
  char *name = poot_arena_alloc(&p->g->arena, prefix.n + rn + 1, 1);
  if (!name) return poot_status_make(POOT_OUT_OF_MEMORY, "graph text: weight name");
  if (prefix.n) memcpy(name, prefix.s, prefix.n);
  memcpy(name + prefix.n, rest, rn + 1);
  *out = poot_weight_id_named(name);
  return NULL;
}

/* A value name: the id already given to it, or a fresh one. */
static poot_status value_of(parser *p, const tok *t, poot_value *out) {
  uint64_t id = 0;
  if (poot_map_get(&p->names, t->s, t->n, &id)) {
    *out = (poot_value)id;
    return NULL;
  }
  POOT_TRY(poot__graph_new_value(p->g, out));
  return poot_map_put(&p->names, t->s, t->n, *out);
}

static poot_status parse_value(parser *p, poot_value *out) {
  if (p->cur.kind != T_VAL) return err_at(&p->cur, "a value (%name)");
  POOT_TRY(value_of(p, &p->cur, out));
  lex(p);
  return NULL;
}

/* ------------------------------------------------------------- constants */

static bool hexval(char h, unsigned *v) {
  if (h >= '0' && h <= '9') *v = (unsigned)(h - '0');
  else if (h >= 'a' && h <= 'f') *v = (unsigned)(h - 'a' + 10);
  else if (h >= 'A' && h <= 'F') *v = (unsigned)(h - 'A' + 10);
  else return false;
  return true;
}

/* One element token (with an optional "(0x...)" payload token for nan). */
typedef struct elem {
  tok t;
  tok payload; /* kind T_EOF when absent */
} elem;

static poot_status decode_float(const elem *e, poot_dtype dt, uint8_t *dst) {
  int kind = dt == POOT_DTYPE_F32 ? 0 : dt == POOT_DTYPE_F16 ? 1 : 2;
  uint32_t bits = 0;
  if (e->payload.kind != T_EOF) {
    const tok *t = &e->payload;
    if (t->n < 3 || t->n > 10 || t->s[0] != '0' || t->s[1] != 'x')
      return err_at(t, "a hex bit pattern 0x...");
    for (size_t i = 2; i < t->n; i++) {
      unsigned v;
      if (!hexval(t->s[i], &v)) return err_at(t, "a hex bit pattern 0x...");
      bits = bits << 4 | v;
    }
    float f = kind == 0 ? poot_f32_from_bits(bits)
                        : kind == 1 ? poot_f16_to_f32((uint16_t)bits) : poot_bf16_to_f32((uint16_t)bits);
    if ((kind && bits > 0xffff) || !isnan(f)) return err_at(t, "the bit pattern of a NaN");
  } else {
    char buf[64];
    if (e->t.n >= sizeof buf) return err_at(&e->t, "a float");
    memcpy(buf, e->t.s, e->t.n);
    buf[e->t.n] = 0;
    float f;
    if (strcmp(buf, "nan") == 0) {
      f = NAN;
      bits = kind == 0 ? 0x7fc00000u : kind == 1 ? 0x7e00u : 0x7fc0u;
    } else if (strcmp(buf, "-nan") == 0) {
      bits = kind == 0 ? 0xffc00000u : kind == 1 ? 0xfe00u : 0xffc0u;
    } else {
      char *end = NULL;
      f = strtof(buf, &end);
      if (!end || *end || end == buf || isnan(f)) return err_at(&e->t, "a float");
      bits = kind == 0 ? poot_f32_bits(f) : kind == 1 ? poot_f32_to_f16(f) : poot_f32_to_bf16(f);
    }
  }
  if (kind == 0) {
    memcpy(dst, &bits, 4);
  } else {
    uint16_t h = (uint16_t)bits;
    memcpy(dst, &h, 2);
  }
  return NULL;
}

static poot_status decode_int(const elem *e, poot_dtype dt, uint8_t *dst) {
  if (dt == POOT_DTYPE_BOOL) {
    if (e->t.n == 4 && memcmp(e->t.s, "true", 4) == 0) dst[0] = 1;
    else if (e->t.n == 5 && memcmp(e->t.s, "false", 5) == 0) dst[0] = 0;
    else return err_at(&e->t, "true or false");
    return NULL;
  }
  if (e->payload.kind != T_EOF) return err_at(&e->payload, "an integer element");
  int64_t v = 0;
  bool u64ok = false;
  uint64_t uv = 0;
  if (dt == POOT_DTYPE_U32 || dt == POOT_DTYPE_U8) {
    if (!tok_int(&e->t, &v)) return err_at(&e->t, "an integer");
    uv = (uint64_t)v;
    u64ok = v >= 0;
  } else if (!tok_int(&e->t, &v)) {
    return err_at(&e->t, "an integer");
  }
  switch (dt) {
  case POOT_DTYPE_I8:
    if (v < INT8_MIN || v > INT8_MAX) return err_at(&e->t, "an i8 integer");
    dst[0] = (uint8_t)(int8_t)v;
    break;
  case POOT_DTYPE_U8:
    if (!u64ok || uv > UINT8_MAX) return err_at(&e->t, "a u8 integer");
    dst[0] = (uint8_t)uv;
    break;
  case POOT_DTYPE_I16: {
    if (v < INT16_MIN || v > INT16_MAX) return err_at(&e->t, "an i16 integer");
    int16_t x = (int16_t)v;
    memcpy(dst, &x, 2);
    break;
  }
  case POOT_DTYPE_I32: {
    if (v < INT32_MIN || v > INT32_MAX) return err_at(&e->t, "an i32 integer");
    int32_t x = (int32_t)v;
    memcpy(dst, &x, 4);
    break;
  }
  case POOT_DTYPE_U32: {
    if (!u64ok || uv > UINT32_MAX) return err_at(&e->t, "a u32 integer");
    uint32_t x = (uint32_t)uv;
    memcpy(dst, &x, 4);
    break;
  }
  case POOT_DTYPE_I64:
    memcpy(dst, &v, 8);
    break;
  default:
    return err_at(&e->t, "an element of a plain dtype");
  }
  return NULL;
}

/* Parses "[e, e, ...]" or "0xHEX" and then ": type"; builds the tensor. */
static poot_status parse_const(parser *p, poot_tensor **out_c, poot_type *out_type) {
  *out_c = NULL;
  poot_vec elems;
  poot_vec_init(&elems, sizeof(elem));
  poot_status st = NULL;
  tok hex = {T_EOF, NULL, 0, 0, 0};
  tok data_at = p->cur;
  if (p->cur.kind == T_WORD && p->cur.n >= 2 && p->cur.s[0] == '0' && p->cur.s[1] == 'x') {
    hex = p->cur;
    lex(p);
  } else {
    st = expect_punct(p, '[');
    while (!st && !is_punct(p, ']')) {
      if (elems.len) st = expect_punct(p, ',');
      if (st) break;
      elem e;
      memset(&e, 0, sizeof e);
      e.payload.kind = T_EOF;
      if (p->cur.kind != T_WORD) {
        st = err_at(&p->cur, "a constant element");
        break;
      }
      e.t = p->cur;
      lex(p);
      if (is_punct(p, '(')) {
        lex(p);
        if (p->cur.kind != T_WORD) {
          st = err_at(&p->cur, "a hex bit pattern 0x...");
          break;
        }
        e.payload = p->cur;
        lex(p);
        st = expect_punct(p, ')');
      }
      if (!st) st = poot_vec_push(&elems, &e);
    }
    if (!st) lex(p); /* ']' */
  }
  if (!st) st = expect_punct(p, ':');
  tok type_at = p->cur;
  if (!st) st = parse_type(p, out_type);
  size_t bytes = 0;
  if (!st) {
    poot_status ts = poot_type_byte_size(out_type->dtype, &out_type->shape, &bytes);
    if (ts) {
      poot_status_free(ts);
      st = err_at(&type_at, "a constant type whose byte size is valid");
    }
  }
  const poot_dtype_info *info = st ? NULL : poot_dtype_info_of(out_type->dtype);
  poot_tensor *c = NULL;
  if (!st) {
    c = POOT_ARENA_NEW(&p->g->arena, poot_tensor);
    if (!c) st = poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
  }
  if (!st && info->is_packed) {
    if (hex.kind != T_WORD) {
      st = err_at(&data_at, "packed constant data as 0x<hex bytes>");
    } else if ((hex.n - 2) != 2 * bytes) {
      st = err_msg(&hex, "packed constant: hex data does not match the byte size of its type");
    }
  } else if (!st) {
    if (hex.kind == T_WORD) st = err_at(&hex, "'[' (hex data is only for packed dtypes)");
    else if (elems.len * info->elem_bytes != bytes)
      st = err_msg(&data_at, "constant: element count does not match its type");
  }
  if (!st) {
    c->type = *out_type;
    c->size = bytes;
    c->data = bytes ? poot_arena_alloc(&p->g->arena, bytes, 16) : NULL;
    if (bytes && !c->data) st = poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
  }
  if (!st && info->is_packed) {
    uint8_t *d = c->data;
    for (size_t i = 0; i < bytes && !st; i++) {
      unsigned hi, lo;
      if (!hexval(hex.s[2 + 2 * i], &hi) || !hexval(hex.s[3 + 2 * i], &lo))
        st = err_at(&hex, "hex digits");
      else
        d[i] = (uint8_t)(hi << 4 | lo);
    }
  } else if (!st) {
    for (size_t i = 0; i < elems.len && !st; i++) {
      const elem *e = &POOT_VEC_AT(&elems, elem, i);
      uint8_t *dst = (uint8_t *)c->data + i * info->elem_bytes;
      st = info->is_float ? decode_float(e, out_type->dtype, dst) : decode_int(e, out_type->dtype, dst);
    }
  }
  poot_vec_deinit(&elems);
  if (!st) *out_c = c;
  return st;
}

/* --------------------------------------------------------- attributes */

typedef struct attr_state {
  uint32_t seen; /* bit per key */
  uint32_t n_start, n_limit, n_stride, n_low, n_high, n_interior;
  uint32_t n_lb, n_rb, n_lc, n_rc;
} attr_state;

enum {
  K_AXIS, K_BATCH_DIMS, K_DIMS, K_START, K_LIMIT, K_STRIDE, K_LOW, K_HIGH, K_INTERIOR, K_KIND,
  K_LHS_BATCH, K_RHS_BATCH, K_LHS_CONTRACT, K_RHS_CONTRACT, K_DIST, K_K, K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "axis", "batch_dims", "dims", "start", "limit", "stride", "low", "high", "interior",
    "kind", "lhs_batch", "rhs_batch", "lhs_contract", "rhs_contract", "dist", "k"};

static uint32_t op_keys(poot_op op) {
#define B(k) (1u << (k))
  switch (op) {
  case POOT_OP_IOTA:
  case POOT_OP_CONCAT:
  case POOT_OP_SCATTER_UPDATE:
  case POOT_OP_CUMSUM:
    return B(K_AXIS);
  case POOT_OP_BROADCAST:
  case POOT_OP_TRANSPOSE:
    return B(K_DIMS);
  case POOT_OP_SLICE:
    return B(K_START) | B(K_LIMIT) | B(K_STRIDE);
  case POOT_OP_PAD:
    return B(K_LOW) | B(K_HIGH) | B(K_INTERIOR);
  case POOT_OP_GATHER:
    return B(K_AXIS) | B(K_BATCH_DIMS);
  case POOT_OP_REDUCE:
    return B(K_KIND) | B(K_DIMS);
  case POOT_OP_DOT_GENERAL:
    return B(K_LHS_BATCH) | B(K_RHS_BATCH) | B(K_LHS_CONTRACT) | B(K_RHS_CONTRACT);
  case POOT_OP_RNG:
    return B(K_DIST);
  case POOT_OP_TOP_K:
    return B(K_K);
  default:
    return 0;
  }
#undef B
}

static poot_status parse_attr(parser *p, poot_op op, poot_attrs *a, attr_state *s) {
  if (p->cur.kind != T_WORD) return err_at(&p->cur, "an attribute name");
  tok key = p->cur;
  int k = -1;
  for (int i = 0; i < K_COUNT; i++)
    if (strlen(key_names[i]) == key.n && memcmp(key_names[i], key.s, key.n) == 0) k = i;
  if (k < 0 || !(op_keys(op) & (1u << k))) {
    char msg[96];
    snprintf(msg, sizeof msg, "an attribute of %s", poot_op_name(op));
    return err_at(&key, msg);
  }
  if (s->seen & (1u << k)) return err_msg(&key, "attribute given twice");
  s->seen |= 1u << k;
  lex(p);
  POOT_TRY(expect_punct(p, '='));
  switch (k) {
  case K_AXIS:
    return parse_int(p, &a->axis, "an integer");
  case K_BATCH_DIMS:
    return parse_int(p, &a->batch_dims, "an integer");
  case K_K:
    return parse_int(p, &a->k, "an integer");
  case K_DIMS:
    return parse_int_list(p, a->dims, &a->num_dims);
  case K_START:
    return parse_int_list(p, a->start, &s->n_start);
  case K_LIMIT:
    return parse_int_list(p, a->limit, &s->n_limit);
  case K_STRIDE:
    return parse_int_list(p, a->stride, &s->n_stride);
  case K_LOW:
    return parse_int_list(p, a->low, &s->n_low);
  case K_HIGH:
    return parse_int_list(p, a->high, &s->n_high);
  case K_INTERIOR:
    return parse_int_list(p, a->interior, &s->n_interior);
  case K_LHS_BATCH:
    return parse_int_list(p, a->dot.lhs_batch, &s->n_lb);
  case K_RHS_BATCH:
    return parse_int_list(p, a->dot.rhs_batch, &s->n_rb);
  case K_LHS_CONTRACT:
    return parse_int_list(p, a->dot.lhs_contract, &s->n_lc);
  case K_RHS_CONTRACT:
    return parse_int_list(p, a->dot.rhs_contract, &s->n_rc);
  case K_KIND:
    for (int r = POOT_REDUCE_SUM; r < POOT_REDUCE_KIND_COUNT; r++)
      if (is_word(p, poot_reduce_kind_name((poot_reduce_kind)r))) {
        a->reduce_kind = (poot_reduce_kind)r;
        lex(p);
        return NULL;
      }
    return err_at(&p->cur, "sum, max, min or argmax");
  case K_DIST:
    for (int r = POOT_RNG_BITS; r < POOT_RNG_DIST_COUNT; r++)
      if (is_word(p, poot_rng_dist_name((poot_rng_dist)r))) {
        a->rng_dist = (poot_rng_dist)r;
        lex(p);
        return NULL;
      }
    return err_at(&p->cur, "bits or uniform");
  default:
    return err_at(&key, "an attribute name");
  }
}

static poot_status parse_attrs(parser *p, poot_op op, poot_attrs *a) {
  attr_state s;
  memset(&s, 0, sizeof s);
  tok open = p->cur;
  if (is_punct(p, '{')) {
    lex(p);
    if (!is_punct(p, '}')) {
      for (;;) {
        POOT_TRY(parse_attr(p, op, a, &s));
        if (is_punct(p, '}')) break;
        POOT_TRY(expect_punct(p, ','));
      }
    }
    lex(p);
  }
  uint32_t need = op_keys(op);
  if ((s.seen & need) != need) {
    for (int k = 0; k < K_COUNT; k++)
      if ((need & ~s.seen) & (1u << k)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s needs attribute '%s'", poot_op_name(op), key_names[k]);
        return err_msg(&open, msg);
      }
  }
  if (op == POOT_OP_SLICE) {
    if (s.n_start != s.n_limit || s.n_start != s.n_stride)
      return err_msg(&open, "start, limit and stride need the same length");
    a->num_dims = s.n_start;
  } else if (op == POOT_OP_PAD) {
    if (s.n_low != s.n_high || s.n_low != s.n_interior)
      return err_msg(&open, "low, high and interior need the same length");
    a->num_dims = s.n_low;
  } else if (op == POOT_OP_DOT_GENERAL) {
    if (s.n_lb != s.n_rb || s.n_lc != s.n_rc)
      return err_msg(&open, "lhs and rhs dim lists need the same length");
    a->dot.num_batch = s.n_lb;
    a->dot.num_contract = s.n_lc;
  }
  return NULL;
}

static poot_status parse_cattr_value(parser *p, poot_composite_attr *c) {
  if (p->cur.kind == T_STR) {
    c->kind = POOT_CATTR_STRING;
    return parse_string(p, &c->s, "a string");
  }
  if (is_punct(p, '[')) {
    int64_t tmp[POOT_MAX_RANK];
    uint32_t n = 0;
    POOT_TRY(parse_int_list(p, tmp, &n));
    c->kind = POOT_CATTR_INTS;
    c->num_ints = n;
    c->ints = n ? poot_arena_memdup(&p->g->arena, tmp, n * sizeof(int64_t), 8) : NULL;
    if (n && !c->ints) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
    return NULL;
  }
  if (tok_int(&p->cur, &c->i)) {
    c->kind = POOT_CATTR_INT;
    lex(p);
    return NULL;
  }
  if (p->cur.kind == T_WORD && p->cur.n < 64) {
    char buf[64];
    memcpy(buf, p->cur.s, p->cur.n);
    buf[p->cur.n] = 0;
    c->kind = POOT_CATTR_FLOAT;
    if (strcmp(buf, "nan") == 0) {
      c->f = NAN;
    } else if (strcmp(buf, "-nan") == 0) {
      c->f = -NAN;
    } else {
      char *end = NULL;
      c->f = strtod(buf, &end);
      if (!end || *end || end == buf || isnan(c->f)) return err_at(&p->cur, "an attribute value");
    }
    lex(p);
    return NULL;
  }
  return err_at(&p->cur, "an attribute value");
}

static poot_status parse_cattrs(parser *p, uint32_t *out_n, const poot_composite_attr **out) {
  *out_n = 0;
  *out = NULL;
  if (!is_punct(p, '{')) return NULL;
  lex(p);
  poot_composite_attr tmp[32];
  uint32_t n = 0;
  while (!is_punct(p, '}')) {
    if (n) POOT_TRY(expect_punct(p, ','));
    if (n >= 32) return err_msg(&p->cur, "at most 32 composite attributes");
    memset(&tmp[n], 0, sizeof tmp[n]);
    if (p->cur.kind != T_WORD || p->cur.n > 63) return err_at(&p->cur, "an attribute name");
    char *key = poot_arena_strndup(&p->g->arena, p->cur.s, p->cur.n);
    if (!key) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
    if (!poot__valid_attr_key(key)) return err_at(&p->cur, "an attribute name [a-z_][a-z0-9_]*");
    for (uint32_t j = 0; j < n; j++)
      if (strcmp(tmp[j].key, key) == 0) return err_msg(&p->cur, "attribute given twice");
    tmp[n].key = key;
    lex(p);
    POOT_TRY(expect_punct(p, '='));
    POOT_TRY(parse_cattr_value(p, &tmp[n]));
    n++;
  }
  lex(p);
  if (n) {
    *out = poot_arena_memdup(&p->g->arena, tmp, n * sizeof tmp[0], _Alignof(poot_composite_attr));
    if (!*out) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
  }
  *out_n = n;
  return NULL;
}

/* ------------------------------------------------------------------ nodes */

static poot_status parse_region(parser *p, uint32_t region, int depth);

static poot_status parse_types(parser *p, uint32_t want, poot_type *types) {
  POOT_TRY(expect_punct(p, ':'));
  for (uint32_t i = 0; i < want; i++) {
    if (i) POOT_TRY(expect_punct(p, ','));
    POOT_TRY(parse_type(p, &types[i]));
  }
  if (is_punct(p, ',')) return err_msg(&p->cur, "more types than results");
  return NULL;
}

static poot_status bind_check(parser *p, const tok *at, uint32_t n, const poot_value *res) {
  for (uint32_t i = 0; i < n; i++) {
    if (poot__val(p->g, res[i])->node != POOT__NO_NODE) return err_msg(at, "value defined twice");
    for (uint32_t j = 0; j < i; j++)
      if (res[j] == res[i]) return err_msg(at, "value defined twice");
  }
  return NULL;
}

/* A comma-separated list of values, at least one: the results of a node or
 * of a composite body. */
static poot_status parse_value_list(parser *p, poot_value *vals, uint32_t *out_n) {
  uint32_t n = 0;
  *out_n = 0;
  for (;;) {
    if (n >= MAX_RESULTS) return err_msg(&p->cur, "too many results");
    POOT_TRY(parse_value(p, &vals[n]));
    n++;
    *out_n = n;
    if (!is_punct(p, ',')) break;
    lex(p);
  }
  return NULL;
}

/* The left-hand side of a node line: where it starts and the values it
 * defines, with the types its tail declares. */
typedef struct node_lhs {
  const tok *start;
  poot_value *res;
  poot_type *types;
  uint32_t nres;
} node_lhs;

/* A leaf, after its kind and payload: the declared type (a constant's comes
 * from its payload) and the append. */
static poot_status finish_leaf(parser *p, uint32_t region, poot_node *n, const node_lhs *lhs) {
  n->op = POOT_OP_LEAF;
  if (lhs->nres != 1) return err_msg(lhs->start, "a leaf has exactly one result");
  if (n->storage != POOT_STORAGE_CONST) POOT_TRY(parse_types(p, 1, lhs->types));
  poot_node *node = NULL;
  POOT_TRY(poot__graph_append(p->g, region, n, lhs->types, lhs->res, &node));
  if (n->storage == POOT_STORAGE_STATE) POOT_TRY(poot__graph_note_state(p->g, lhs->res[0]));
  return NULL;
}

/* `composite "name"(operands) {attrs} : types { body return values }`,
 * from the word "composite" on. */
static poot_status parse_composite(parser *p, uint32_t region, int depth, const tok *optok,
                                   poot_node *n, const node_lhs *lhs) {
  poot_value ops[MAX_OPERANDS];
  if (depth >= MAX_DEPTH) return err_msg(optok, "composites nested too deeply");
  lex(p);
  n->op = POOT_OP_COMPOSITE;
  POOT_TRY(parse_string(p, &n->name, "a quoted composite name"));
  POOT_TRY(expect_punct(p, '('));
  while (!is_punct(p, ')')) {
    if (n->num_operands) POOT_TRY(expect_punct(p, ','));
    if (n->num_operands >= MAX_OPERANDS) return err_msg(&p->cur, "too many operands");
    POOT_TRY(parse_value(p, &ops[n->num_operands]));
    n->num_operands++;
  }
  lex(p);
  POOT_TRY(parse_cattrs(p, &n->num_cattrs, &n->cattrs));
  POOT_TRY(parse_types(p, lhs->nres, lhs->types));
  POOT_TRY(expect_punct(p, '{'));
  uint32_t body = 0;
  POOT_TRY(poot__graph_new_region(p->g, POOT__NO_NODE, &body));
  POOT_TRY(parse_region(p, body, depth + 1));
  /* parse_region stopped at "return". */
  lex(p);
  poot_value br[MAX_RESULTS];
  uint32_t nbr = 0;
  POOT_TRY(parse_value_list(p, br, &nbr));
  POOT_TRY(expect_punct(p, '}'));
  POOT_TRY(bind_check(p, lhs->start, lhs->nres, lhs->res));
  poot__region *r = poot__reg(p->g, body);
  poot_value *brs = poot_arena_memdup(&p->g->arena, br, nbr * sizeof(poot_value), 4);
  if (!brs) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory parsing");
  n->body = &r->pub;
  n->operands = ops;
  poot_node *node = NULL;
  POOT_TRY(poot__graph_append(p->g, region, n, lhs->types, lhs->res, &node));
  r->pub.parent_node = node->id;
  r->pub.results = brs;
  r->pub.num_results = nbr;
  return NULL;
}

/* `op operands {attrs} [check trap] : types`, from the op name on. */
static poot_status parse_core_op(parser *p, uint32_t region, poot_node *n, const node_lhs *lhs) {
  poot_value ops[MAX_OPERANDS];
  poot_op op = POOT_OP_LEAF;
  if (!poot_op_from_name(p->cur.s, p->cur.n, &op) || op == POOT_OP_LEAF || op == POOT_OP_COMPOSITE)
    return err_at(&p->cur, "an op name");
  lex(p);
  n->op = op;
  while (p->cur.kind == T_VAL || (n->num_operands && is_punct(p, ','))) {
    if (n->num_operands) POOT_TRY(expect_punct(p, ','));
    if (n->num_operands >= MAX_OPERANDS) return err_msg(&p->cur, "too many operands");
    POOT_TRY(parse_value(p, &ops[n->num_operands]));
    n->num_operands++;
  }
  POOT_TRY(parse_attrs(p, op, &n->attrs));
  if (is_word(p, "check")) {
    lex(p);
    if (p->cur.kind != T_WORD || !poot_trap_from_name(p->cur.s, p->cur.n, &n->trap) ||
        n->trap == POOT_TRAP_NONE)
      return err_at(&p->cur, "a trap code");
    lex(p);
  }
  POOT_TRY(parse_types(p, lhs->nres, lhs->types));
  poot__attrs_from_result(op, &lhs->types[0], &n->attrs);
  if (op == POOT_OP_REDUCE) {
    /* Canonical order, as the builder stores them. */
    poot_attrs canon;
    poot__attrs_canonical(op, 0, &n->attrs, &canon);
    n->attrs = canon;
  }
  n->operands = ops;
  return poot__graph_append(p->g, region, n, lhs->types, lhs->res, NULL);
}

/* One node line: its results, then a leaf, a composite or a core op. */
static poot_status parse_node(parser *p, uint32_t region, int depth) {
  tok start = p->cur;
  poot_value res[MAX_RESULTS];
  poot_type types[MAX_RESULTS];
  uint32_t nres = 0;
  POOT_TRY(parse_value_list(p, res, &nres));
  POOT_TRY(bind_check(p, &start, nres, res));
  POOT_TRY(expect_punct(p, '='));
  poot_node n;
  memset(&n, 0, sizeof n);
  n.num_results = nres;
  n.storage = POOT_STORAGE_TEMP;
  if (p->cur.kind != T_WORD) return err_at(&p->cur, "an op name");
  tok optok = p->cur;
  bool leaf = true;
  if (is_word(p, "const")) {
    lex(p);
    n.storage = POOT_STORAGE_CONST;
    poot_tensor *c = NULL;
    POOT_TRY(parse_const(p, &c, &types[0]));
    n.constant = c;
  } else if (is_word(p, "weight")) {
    lex(p);
    n.storage = POOT_STORAGE_WEIGHT;
    POOT_TRY(parse_weight_name(p, &n.weight));
  } else if (is_word(p, "state")) {
    lex(p);
    n.storage = POOT_STORAGE_STATE;
    POOT_TRY(parse_string(p, &n.name, "a quoted state name"));
  } else if (is_word(p, "slot")) {
    lex(p);
    n.storage = POOT_STORAGE_SLOT;
    if (p->cur.kind == T_STR) {
      n.slot_kind = POOT_SLOT_NAMED;
      POOT_TRY(parse_string(p, &n.name, "a slot name"));
    } else if (p->cur.kind == T_WORD &&
               poot_slot_kind_from_name(p->cur.s, p->cur.n, &n.slot_kind) &&
               n.slot_kind != POOT_SLOT_NAMED) {
      lex(p);
    } else {
      return err_at(&p->cur, "token, pos, slot_map, write_map or a quoted slot name");
    }
  } else if (is_word(p, "param")) {
    lex(p);
    n.storage = POOT_STORAGE_PARAM;
    int64_t idx = 0;
    tok at = p->cur;
    POOT_TRY(parse_int(p, &idx, "a param index"));
    if (idx < 0 || idx > MAX_PARAM_INDEX) return err_at(&at, "a param index in [0, 65535]");
    n.param_index = (uint32_t)idx;
    if (p->cur.kind == T_STR) POOT_TRY(parse_string(p, &n.name, "a param name"));
  } else {
    leaf = false;
  }
  const node_lhs lhs = {&start, res, types, nres};
  if (leaf) return finish_leaf(p, region, &n, &lhs);
  if (is_word(p, "composite")) return parse_composite(p, region, depth, &optok, &n, &lhs);
  return parse_core_op(p, region, &n, &lhs);
}

static poot_status parse_results_line(parser *p) {
  tok at = p->cur;
  if (is_word(p, "output")) {
    lex(p);
    if (p->have_output) return err_msg(&at, "output given twice");
    p->have_output = true;
    return parse_value(p, &p->g->output);
  }
  if (is_word(p, "update")) {
    lex(p);
    pending_update u = {POOT_VALUE_NONE, POOT_VALUE_NONE, at.line, at.col};
    POOT_TRY(parse_value(p, &u.state));
    POOT_TRY(expect_punct(p, '='));
    POOT_TRY(parse_value(p, &u.value));
    return poot_vec_push(&p->updates, &u);
  }
  /* env */
  lex(p);
  poot__env_rec e = {NULL, POOT_VALUE_NONE};
  POOT_TRY(parse_string(p, &e.name, "a quoted env name"));
  POOT_TRY(expect_punct(p, '='));
  POOT_TRY(parse_value(p, &e.value));
  return poot_vec_push(&p->g->env, &e);
}

static poot_status parse_region(parser *p, uint32_t region, int depth) {
  for (;;) {
    if (p->cur.kind == T_VAL) {
      POOT_TRY(parse_node(p, region, depth));
      continue;
    }
    if (depth == 0 && (is_word(p, "output") || is_word(p, "update") || is_word(p, "env"))) {
      POOT_TRY(parse_results_line(p));
      continue;
    }
    if (depth > 0 && is_word(p, "return")) return NULL;
    if (depth == 0 && p->cur.kind == T_EOF) return NULL;
    return err_at(&p->cur, depth ? "a node or 'return'" : "a node, output, update or env");
  }
}

static poot_status resolve_updates(parser *p) {
  poot_graph *g = p->g;
  for (size_t i = 0; i < p->updates.len; i++) {
    const pending_update *u = &POOT_VEC_AT(&p->updates, pending_update, i);
    tok at = {T_WORD, NULL, 0, u->line, u->col};
    poot__state_rec *hit = NULL;
    for (size_t j = 0; j < g->states.len; j++) {
      poot__state_rec *r = &POOT_VEC_AT(&g->states, poot__state_rec, j);
      if (r->state == u->state) hit = r;
    }
    if (!hit) return err_msg(&at, "update target is not a state");
    if (hit->update != POOT_VALUE_NONE) return err_msg(&at, "state updated twice");
    hit->update = u->value;
  }
  return NULL;
}

poot_status poot_graph_parse(const char *text, size_t len, poot_graph **out_graph) {
  *out_graph = NULL;
  if (!text && len) return poot_status_make(POOT_INVALID_ARGUMENT, "poot_graph_parse: NULL text");
  parser p;
  memset(&p, 0, sizeof p);
  p.text = text ? text : "";
  p.len = len;
  p.line = 1;
  p.col = 1;
  poot_map_init(&p.names);
  poot_vec_init(&p.updates, sizeof(pending_update));
  poot_status st = poot_graph_create(&p.g);
  if (!st) {
    lex(&p);
    if (!is_word(&p, "pgraph")) st = err_at(&p.cur, "the header 'pgraph 1'");
  }
  if (!st) {
    lex(&p);
    int64_t version = 0;
    tok at = p.cur;
    st = parse_int(&p, &version, "the format version 1");
    if (!st && version != 1) st = err_at(&at, "the format version 1");
  }
  if (!st) st = parse_region(&p, 0, 0);
  if (!st) st = resolve_updates(&p);
  if (!st) st = poot_graph_verify(p.g);
  poot_map_deinit(&p.names);
  poot_vec_deinit(&p.updates);
  if (st) {
    poot_graph_destroy(p.g);
    return st;
  }
  *out_graph = p.g;
  return NULL;
}

poot_status poot_graph_load(const char *path, poot_graph **out_graph) {
  *out_graph = NULL;
  char *data = NULL;
  size_t size = 0;
  POOT_TRY(poot_file_read_all(path, &data, &size));
  poot_status st = poot_graph_parse(data, size, out_graph);
  poot_free(data);
  return poot_status_annotate(st, "%s", path);
}
