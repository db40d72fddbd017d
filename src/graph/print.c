/* print.c — the canonical text form (.pgraph) and the structural hash.
 * The grammar is in docs/graph.md; parse.c reads what this file writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"

void poot__format_string(poot_strbuf *sb, const char *s) {
  poot_strbuf_putc(sb, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      poot_strbuf_putc(sb, '\\');
      poot_strbuf_putc(sb, (char)c);
    } else if (c == '\n') {
      poot_strbuf_puts(sb, "\\n");
    } else if (c == '\t') {
      poot_strbuf_puts(sb, "\\t");
    } else if (c < 0x20 || c == 0x7f) {
      poot_strbuf_printf(sb, "\\x%02x", c);
    } else {
      poot_strbuf_putc(sb, (char)c);
    }
  }
  poot_strbuf_putc(sb, '"');
}

/* Shortest %.Ng (N = 1..9) whose strtof reading maps back to `bits` through
 * `back` (identity for f32, the RNE narrowing for f16/bf16). */
static void format_float_value(poot_strbuf *sb, float f, uint32_t bits, int kind) {
  char buf[64];
  for (int prec = 1; prec <= 9; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
    float r = strtof(buf, NULL);
    uint32_t rb = kind == 0 ? poot_f32_bits(r) : kind == 1 ? poot_f32_to_f16(r) : poot_f32_to_bf16(r);
    if (rb == bits) break;
  }
  poot_strbuf_puts(sb, buf);
}

/* f32 (kind 0), f16 (1), bf16 (2) element given its bit pattern. */
void poot__format_float_bits(poot_strbuf *sb, uint32_t bits, int kind) {
  float f;
  uint32_t qnan, sign;
  if (kind == 0) {
    f = poot_f32_from_bits(bits);
    qnan = 0x7fc00000u;
    sign = 0x80000000u;
  } else if (kind == 1) {
    f = poot_f16_to_f32((uint16_t)bits);
    qnan = 0x7e00u;
    sign = 0x8000u;
  } else {
    f = poot_bf16_to_f32((uint16_t)bits);
    qnan = 0x7fc0u;
    sign = 0x8000u;
  }
  if (isnan(f)) {
    if (bits == qnan)
      poot_strbuf_puts(sb, "nan");
    else if (bits == (qnan | sign))
      poot_strbuf_puts(sb, "-nan");
    else
      poot_strbuf_printf(sb, kind == 0 ? "nan(0x%08x)" : "nan(0x%04x)", (unsigned)bits);
    return;
  }
  if (isinf(f)) {
    poot_strbuf_puts(sb, f < 0 ? "-inf" : "inf");
    return;
  }
  format_float_value(sb, f, bits, kind);
}

/* A double that always reads back as a float (has '.', 'e', "inf" or "nan"). */
static void format_double(poot_strbuf *sb, double d) {
  if (isnan(d)) {
    poot_strbuf_puts(sb, signbit(d) ? "-nan" : "nan");
    return;
  }
  if (isinf(d)) {
    poot_strbuf_puts(sb, d < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d && signbit(strtod(buf, NULL)) == signbit(d)) break;
  }
  poot_strbuf_puts(sb, buf);
  if (!strpbrk(buf, ".e")) poot_strbuf_puts(sb, ".0");
}

typedef struct printer {
  const poot_graph *g;
  poot_strbuf *sb;
  uint32_t *num; /* value id → printed number (UINT32_MAX: not yet) */
  uint32_t next;
} printer;

static void put_value(printer *p, poot_value v) {
  if (v >= p->g->values.len) {
    poot_strbuf_printf(p->sb, "%%bad%u", (unsigned)v);
    return;
  }
  if (p->num[v] == UINT32_MAX) p->num[v] = p->next++;
  poot_strbuf_printf(p->sb, "%%%u", p->num[v]);
}

static void put_list(poot_strbuf *sb, uint32_t n, const int64_t *d) {
  poot_strbuf_putc(sb, '[');
  for (uint32_t i = 0; i < n; i++) poot_strbuf_printf(sb, i ? ",%lld" : "%lld", (long long)d[i]);
  poot_strbuf_putc(sb, ']');
}

static void put_const(printer *p, const poot_tensor *c) {
  poot_strbuf *sb = p->sb;
  const poot_dtype_info *info = poot_dtype_info_of(c->type.dtype);
  if (!info) return;
  if (info->is_packed) {
    poot_strbuf_puts(sb, "0x");
    const uint8_t *b = c->data;
    for (size_t i = 0; i < c->size; i++) poot_strbuf_printf(sb, "%02x", b[i]);
    return;
  }
  size_t n = info->elem_bytes ? c->size / info->elem_bytes : 0;
  const uint8_t *d = c->data;
  poot_strbuf_putc(sb, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) poot_strbuf_puts(sb, ", ");
    const uint8_t *e = d + i * info->elem_bytes;
    switch (c->type.dtype) {
    case POOT_DTYPE_F32: {
      uint32_t u;
      memcpy(&u, e, 4);
      poot__format_float_bits(sb, u, 0);
      break;
    }
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16: {
      uint16_t u;
      memcpy(&u, e, 2);
      poot__format_float_bits(sb, u, c->type.dtype == POOT_DTYPE_F16 ? 1 : 2);
      break;
    }
    case POOT_DTYPE_I8:
      poot_strbuf_printf(sb, "%d", (int)(int8_t)e[0]);
      break;
    case POOT_DTYPE_U8:
      poot_strbuf_printf(sb, "%u", (unsigned)e[0]);
      break;
    case POOT_DTYPE_BOOL:
      poot_strbuf_puts(sb, e[0] ? "true" : "false");
      break;
    case POOT_DTYPE_I16: {
      int16_t v;
      memcpy(&v, e, 2);
      poot_strbuf_printf(sb, "%d", (int)v);
      break;
    }
    case POOT_DTYPE_I32: {
      int32_t v;
      memcpy(&v, e, 4);
      poot_strbuf_printf(sb, "%ld", (long)v);
      break;
    }
    case POOT_DTYPE_U32: {
      uint32_t v;
      memcpy(&v, e, 4);
      poot_strbuf_printf(sb, "%lu", (unsigned long)v);
      break;
    }
    case POOT_DTYPE_I64: {
      int64_t v;
      memcpy(&v, e, 8);
      poot_strbuf_printf(sb, "%lld", (long long)v);
      break;
    }
    default:
      break;
    }
  }
  poot_strbuf_putc(sb, ']');
}

static void put_attrs(printer *p, const poot_node *n) {
  poot_strbuf *sb = p->sb;
  const poot_attrs *a = &n->attrs;
  switch (n->op) {
  case POOT_OP_IOTA:
  case POOT_OP_CONCAT:
  case POOT_OP_SCATTER_UPDATE:
  case POOT_OP_CUMSUM:
    poot_strbuf_printf(sb, " {axis=%lld}", (long long)a->axis);
    break;
  case POOT_OP_BROADCAST:
  case POOT_OP_TRANSPOSE:
    poot_strbuf_puts(sb, " {dims=");
    put_list(sb, a->num_dims, a->dims);
    poot_strbuf_putc(sb, '}');
    break;
  case POOT_OP_SLICE:
    poot_strbuf_puts(sb, " {start=");
    put_list(sb, a->num_dims, a->start);
    poot_strbuf_puts(sb, ", limit=");
    put_list(sb, a->num_dims, a->limit);
    poot_strbuf_puts(sb, ", stride=");
    put_list(sb, a->num_dims, a->stride);
    poot_strbuf_putc(sb, '}');
    break;
  case POOT_OP_PAD:
    poot_strbuf_puts(sb, " {low=");
    put_list(sb, a->num_dims, a->low);
    poot_strbuf_puts(sb, ", high=");
    put_list(sb, a->num_dims, a->high);
    poot_strbuf_puts(sb, ", interior=");
    put_list(sb, a->num_dims, a->interior);
    poot_strbuf_putc(sb, '}');
    break;
  case POOT_OP_GATHER:
    poot_strbuf_printf(sb, " {axis=%lld, batch_dims=%lld}", (long long)a->axis,
                       (long long)a->batch_dims);
    break;
  case POOT_OP_REDUCE:
    poot_strbuf_printf(sb, " {kind=%s, dims=", poot_reduce_kind_name(a->reduce_kind));
    put_list(sb, a->num_dims, a->dims);
    poot_strbuf_putc(sb, '}');
    break;
  case POOT_OP_DOT_GENERAL:
    poot_strbuf_puts(sb, " {lhs_batch=");
    put_list(sb, a->dot.num_batch, a->dot.lhs_batch);
    poot_strbuf_puts(sb, ", rhs_batch=");
    put_list(sb, a->dot.num_batch, a->dot.rhs_batch);
    poot_strbuf_puts(sb, ", lhs_contract=");
    put_list(sb, a->dot.num_contract, a->dot.lhs_contract);
    poot_strbuf_puts(sb, ", rhs_contract=");
    put_list(sb, a->dot.num_contract, a->dot.rhs_contract);
    poot_strbuf_putc(sb, '}');
    break;
  case POOT_OP_RNG:
    poot_strbuf_printf(sb, " {dist=%s}", poot_rng_dist_name(a->rng_dist));
    break;
  case POOT_OP_TOP_K:
    poot_strbuf_printf(sb, " {k=%lld}", (long long)a->k);
    break;
  default:
    break;
  }
}

static void put_cattrs(printer *p, const poot_node *n) {
  poot_strbuf *sb = p->sb;
  if (!n->num_cattrs) return;
  poot_strbuf_puts(sb, " {");
  for (uint32_t i = 0; i < n->num_cattrs; i++) {
    const poot_composite_attr *c = &n->cattrs[i];
    if (i) poot_strbuf_puts(sb, ", ");
    poot_strbuf_printf(sb, "%s=", c->key);
    switch (c->kind) {
    case POOT_CATTR_INT:
      poot_strbuf_printf(sb, "%lld", (long long)c->i);
      break;
    case POOT_CATTR_FLOAT:
      format_double(sb, c->f);
      break;
    case POOT_CATTR_STRING:
      poot__format_string(sb, c->s ? c->s : "");
      break;
    case POOT_CATTR_INTS:
      put_list(sb, c->num_ints, c->ints);
      break;
    default:
      poot_strbuf_puts(sb, "?");
      break;
    }
  }
  poot_strbuf_putc(sb, '}');
}

static void indent(poot_strbuf *sb, int depth) {
  for (int i = 0; i < depth; i++) poot_strbuf_puts(sb, "  ");
}

static void put_types(printer *p, const poot_node *n) {
  poot_strbuf_puts(p->sb, " : ");
  for (uint32_t i = 0; i < n->num_results; i++) {
    if (i) poot_strbuf_puts(p->sb, ", ");
    if (n->results[i] < p->g->values.len)
      poot_type_format(p->sb, &poot__val(p->g, n->results[i])->type);
  }
}

static void put_region(printer *p, const poot_region *r, int depth);

static void put_node(printer *p, const poot_node *n, int depth) {
  poot_strbuf *sb = p->sb;
  indent(sb, depth);
  for (uint32_t i = 0; i < n->num_results; i++) {
    if (i) poot_strbuf_puts(sb, ", ");
    put_value(p, n->results[i]);
  }
  poot_strbuf_puts(sb, " = ");
  if (n->op == POOT_OP_LEAF) {
    switch (n->storage) {
    case POOT_STORAGE_CONST:
      poot_strbuf_puts(sb, "const ");
      if (n->constant) put_const(p, n->constant);
      break;
    case POOT_STORAGE_WEIGHT:
      poot_strbuf_puts(sb, "weight ");
      poot_weight_name_format(sb, n->weight.name);
      break;
    case POOT_STORAGE_STATE:
      poot_strbuf_puts(sb, "state ");
      poot__format_string(sb, n->name ? n->name : "");
      break;
    case POOT_STORAGE_SLOT:
      poot_strbuf_puts(sb, "slot ");
      if (n->slot_kind == POOT_SLOT_NAMED)
        poot__format_string(sb, n->name ? n->name : "");
      else
        poot_strbuf_puts(sb, poot_slot_kind_name(n->slot_kind));
      break;
    case POOT_STORAGE_PARAM:
      poot_strbuf_printf(sb, "param %u", n->param_index);
      if (n->name) {
        poot_strbuf_putc(sb, ' ');
        poot__format_string(sb, n->name);
      }
      break;
    default:
      poot_strbuf_puts(sb, "?");
      break;
    }
    put_types(p, n);
    poot_strbuf_putc(sb, '\n');
    return;
  }
  if (n->op == POOT_OP_COMPOSITE) {
    poot_strbuf_puts(sb, "composite ");
    poot__format_string(sb, n->name ? n->name : "");
    poot_strbuf_puts(sb, " (");
    for (uint32_t i = 0; i < n->num_operands; i++) {
      if (i) poot_strbuf_puts(sb, ", ");
      put_value(p, n->operands[i]);
    }
    poot_strbuf_putc(sb, ')');
    put_cattrs(p, n);
    put_types(p, n);
    poot_strbuf_puts(sb, " {\n");
    if (n->body) put_region(p, n->body, depth + 1);
    indent(sb, depth + 1);
    poot_strbuf_puts(sb, "return");
    for (uint32_t i = 0; n->body && i < n->body->num_results; i++) {
      poot_strbuf_puts(sb, i ? ", " : " ");
      put_value(p, n->body->results[i]);
    }
    poot_strbuf_putc(sb, '\n');
    indent(sb, depth);
    poot_strbuf_puts(sb, "}\n");
    return;
  }
  poot_strbuf_puts(sb, poot_op_name(n->op));
  for (uint32_t i = 0; i < n->num_operands; i++) {
    poot_strbuf_puts(sb, i ? ", " : " ");
    put_value(p, n->operands[i]);
  }
  put_attrs(p, n);
  if (n->trap != POOT_TRAP_NONE) poot_strbuf_printf(sb, " check %s", poot_trap_name(n->trap));
  put_types(p, n);
  poot_strbuf_putc(sb, '\n');
}

static void put_region(printer *p, const poot_region *r, int depth) {
  for (uint32_t i = 0; i < r->num_nodes; i++) put_node(p, poot__node(p->g, r->nodes[i]), depth);
}

poot_status poot_graph_print(const poot_graph *g, poot_strbuf *sb) {
  if (!g || !sb) return poot_status_make(POOT_INVALID_ARGUMENT, "poot_graph_print: NULL argument");
  printer p = {g, sb, NULL, 0};
  size_t nv = g->values.len;
  p.num = poot_malloc((nv ? nv : 1) * sizeof(uint32_t));
  if (!p.num) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory printing");
  for (size_t i = 0; i < nv; i++) p.num[i] = UINT32_MAX;
  poot_strbuf_puts(sb, "pgraph 1\n");
  put_region(&p, poot_graph_root(g), 0);
  if (g->output != POOT_VALUE_NONE) {
    poot_strbuf_puts(sb, "output ");
    put_value(&p, g->output);
    poot_strbuf_putc(sb, '\n');
  }
  for (size_t i = 0; i < g->states.len; i++) {
    const poot__state_rec *r = &POOT_VEC_AT(&g->states, poot__state_rec, i);
    if (r->update == POOT_VALUE_NONE) continue;
    poot_strbuf_puts(sb, "update ");
    put_value(&p, r->state);
    poot_strbuf_puts(sb, " = ");
    put_value(&p, r->update);
    poot_strbuf_putc(sb, '\n');
  }
  for (size_t i = 0; i < g->env.len; i++) {
    const poot__env_rec *e = &POOT_VEC_AT(&g->env, poot__env_rec, i);
    poot_strbuf_puts(sb, "env ");
    poot__format_string(sb, e->name);
    poot_strbuf_puts(sb, " = ");
    put_value(&p, e->value);
    poot_strbuf_putc(sb, '\n');
  }
  poot_free(p.num);
  return poot_strbuf_status(sb);
}

poot_status poot_graph_to_text(const poot_graph *g, char **out_text) {
  *out_text = NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot_graph_print(g, &sb);
  if (st) {
    poot_strbuf_deinit(&sb);
    return st;
  }
  *out_text = poot_strbuf_take(&sb);
  if (!*out_text) return poot_status_make(POOT_OUT_OF_MEMORY, "graph: out of memory printing");
  return NULL;
}

poot_status poot_graph_hash(const poot_graph *g, uint64_t *out_hash) {
  *out_hash = 0;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot_graph_print(g, &sb);
  if (!st) *out_hash = poot_hash64(sb.data, sb.len, 0x706f6f7467726168ull /* "pootgrah" */);
  poot_strbuf_deinit(&sb);
  return st;
}
