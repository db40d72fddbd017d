/* Random well-typed graphs, random inputs and bit-exact comparison of
 * evaluations, for the graph-pass tests (passes_gen.h). */
#include "passes_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ random */

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next_u64(rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint32_t below(rng *r, uint32_t n) {
  return n ? (uint32_t)(next_u64(r) % n) : 0;
}
static bool chance(rng *r, uint32_t percent) {
  return below(r, 100) < percent;
}

static const poot_dtype k_dtypes[] = {
    POOT_DTYPE_F32, POOT_DTYPE_F16, POOT_DTYPE_BF16, POOT_DTYPE_I8,  POOT_DTYPE_U8,
    POOT_DTYPE_I16, POOT_DTYPE_I32, POOT_DTYPE_I64,  POOT_DTYPE_U32, POOT_DTYPE_BOOL};

static poot_dtype rand_dtype(rng *r) {
  /* Floats twice as often: they hold the subtle cases. */
  uint32_t k = below(r, 13);
  if (k >= 10) return k_dtypes[k - 10];
  return k_dtypes[k];
}

static int64_t elems_of(const poot_shape *s) {
  int64_t n = 1;
  for (uint32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

static poot_shape rand_shape(rng *r, uint32_t max_rank) {
  poot_shape s;
  memset(&s, 0, sizeof s);
  s.rank = below(r, max_rank + 1);
  for (uint32_t i = 0; i < s.rank; i++) s.dims[i] = chance(r, 2) ? 0 : 1 + below(r, 4);
  return s;
}

static size_t esize(poot_dtype dt) {
  return poot_dtype_info_of(dt)->elem_bytes;
}

static uint32_t float_bits_f32(rng *r) {
  uint32_t k = below(r, 100);
  uint32_t sign = (uint32_t)chance(r, 50) << 31;
  if (k < 55) {
    float f = (float)((int32_t)below(r, 2001) - 1000) / 250.0f;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
  }
  if (k < 62) return sign;                                                /* ±0 */
  if (k < 67) return sign | 0x7f800000u;                                  /* ±inf */
  if (k < 75) return sign | 0x7fc00000u | below(r, 1u << 22);             /* quiet NaN, payload */
  if (k < 83) return sign | 0x7f800000u | (1 + below(r, (1u << 22) - 1)); /* signalling */
  if (k < 88) return sign | (1 + below(r, 0x7fffff));                     /* subnormal */
  if (k < 93) return sign | 0x3f800000u;                                  /* ±1 */
  return (uint32_t)next_u64(r);                                           /* any pattern */
}

static uint16_t float_bits_16(rng *r, poot_dtype dt) {
  uint32_t k = below(r, 100);
  uint16_t sign = (uint16_t)(chance(r, 50) << 15);
  const bool h = dt == POOT_DTYPE_F16;
  if (k < 55) {
    float f = (float)((int32_t)below(r, 2001) - 1000) / 250.0f;
    return h ? poot_f32_to_f16(f) : poot_f32_to_bf16(f);
  }
  if (k < 62) return sign;
  if (k < 67) return (uint16_t)(sign | (h ? 0x7c00u : 0x7f80u));
  if (k < 75) return (uint16_t)(sign | (h ? 0x7e00u | below(r, 0x200) : 0x7fc0u | below(r, 0x40)));
  if (k < 83)
    return (uint16_t)(sign |
                      (h ? 0x7c00u | (1 + below(r, 0x1ff)) : 0x7f80u | (1 + below(r, 0x3f))));
  if (k < 88) return (uint16_t)(sign | (1 + below(r, h ? 0x3ff : 0x7f)));
  if (k < 93) return (uint16_t)(sign | (h ? 0x3c00u : 0x3f80u));
  return (uint16_t)next_u64(r);
}

static uint64_t int_bits(rng *r) {
  uint32_t k = below(r, 100);
  if (k < 60) return (uint64_t)((int64_t)below(r, 11) - 5);
  if (k < 70) return 0;
  if (k < 80) return UINT64_MAX;
  return next_u64(r);
}

static void fill_random(rng *r, const poot_type *t, uint8_t *data, int64_t n) {
  const size_t eb = esize(t->dtype);
  for (int64_t i = 0; i < n; i++) {
    uint8_t *p = data + (size_t)i * eb;
    if (t->dtype == POOT_DTYPE_F32) {
      uint32_t b = float_bits_f32(r);
      memcpy(p, &b, 4);
    } else if (t->dtype == POOT_DTYPE_F16 || t->dtype == POOT_DTYPE_BF16) {
      uint16_t b = float_bits_16(r, t->dtype);
      memcpy(p, &b, 2);
    } else if (t->dtype == POOT_DTYPE_BOOL) {
      *p = (uint8_t)chance(r, 50);
    } else {
      uint64_t v = int_bits(r);
      memcpy(p, &v, eb); /* little-endian truncation */
    }
  }
}

/* --------------------------------------------------------------- generator */

#define POOL_MAX 192

typedef struct gen {
  rng r;
  poot_graph *g;
  uint32_t skipped;
  uint32_t names; /* counter for leaf names */
  int depth;      /* composite nesting */
} gen;

typedef struct pool {
  uint32_t n;
  poot_value v[POOL_MAX];
} pool;

static const poot_type *ty(gen *G, poot_value v) {
  return poot_graph_value_type(G->g, v);
}

static void pool_add(pool *P, poot_value v) {
  if (v == POOT_VALUE_NONE) return;
  if (P->n < POOL_MAX) {
    P->v[P->n++] = v;
  } else {
    P->v[(v * 7u) % POOL_MAX] = v;
  }
}

/* Keeps going after a builder error: the generator's mistake, counted. */
static bool ok(gen *G, poot_status st) {
  if (!st) return true;
  if (getenv("POOT_PASSES_GEN_DEBUG")) fprintf(stderr, "gen: %s\n", poot_status_message(st));
  poot_status_free(st);
  G->skipped++;
  return false;
}

static poot_value pick(gen *G, const pool *P) {
  if (!P->n) return POOT_VALUE_NONE;
  /* Prefer recent values so chains form. */
  if (chance(&G->r, 50)) return P->v[P->n - 1 - below(&G->r, P->n < 6 ? P->n : 6)];
  return P->v[below(&G->r, P->n)];
}

typedef bool (*pred_fn)(const poot_type *t);
static bool p_any(const poot_type *t) {
  (void)t;
  return true;
}
static bool p_num(const poot_type *t) {
  return poot_dtype_is_float(t->dtype) || poot_dtype_is_int(t->dtype);
}
static bool p_intlike(const poot_type *t) {
  return poot_dtype_is_int(t->dtype) || t->dtype == POOT_DTYPE_BOOL;
}
static bool p_ranked(const poot_type *t) {
  return t->shape.rank >= 1;
}
static bool p_num_ranked(const poot_type *t) {
  return p_num(t) && t->shape.rank >= 1;
}

static poot_value pick_where(gen *G, const pool *P, pred_fn f) {
  for (int tries = 0; tries < 12; tries++) {
    poot_value v = pick(G, P);
    if (v != POOT_VALUE_NONE && f(ty(G, v))) return v;
  }
  for (uint32_t i = P->n; i-- > 0;)
    if (f(ty(G, P->v[i]))) return P->v[i];
  return POOT_VALUE_NONE;
}

static poot_value pick_type(gen *G, const pool *P, const poot_type *t, poot_value avoid) {
  uint32_t start = below(&G->r, P->n ? P->n : 1);
  for (uint32_t k = 0; k < P->n; k++) {
    poot_value v = P->v[(start + k) % P->n];
    if (v != avoid && poot_type_equal(ty(G, v), t)) return v;
  }
  return POOT_VALUE_NONE;
}

static poot_value add_const(gen *G, const poot_type *t, bool splat_special) {
  int64_t n = elems_of(&t->shape);
  const size_t eb = esize(t->dtype);
  uint8_t *data = poot_calloc((size_t)(n ? n : 1), eb);
  if (!data) return POOT_VALUE_NONE;
  if (splat_special && n > 0) {
    uint64_t bits = 0;
    uint32_t k = below(&G->r, 5);
    if (poot_dtype_is_float(t->dtype)) {
      const bool f32 = t->dtype == POOT_DTYPE_F32;
      const uint64_t one = f32 ? 0x3f800000u : t->dtype == POOT_DTYPE_F16 ? 0x3c00u : 0x3f80u;
      const uint64_t sgn = f32 ? 0x80000000u : 0x8000u;
      bits = k == 0 ? 0 : k == 1 ? sgn : k == 2 ? one : k == 3 ? (one | sgn) : one;
    } else if (t->dtype == POOT_DTYPE_BOOL) {
      bits = k & 1;
    } else {
      bits = k == 0 ? 0 : k == 1 ? 1 : k == 2 ? UINT64_MAX : k == 3 ? 2 : 0;
    }
    for (int64_t i = 0; i < n; i++) memcpy(data + (size_t)i * eb, &bits, eb);
  } else {
    fill_random(&G->r, t, data, n);
  }
  poot_tensor tt = {*t, data, (size_t)n * eb};
  poot_value v = POOT_VALUE_NONE;
  ok(G, poot_graph_add_const(G->g, &tt, &v));
  poot_free(data);
  return v;
}

static poot_value scalar_const(gen *G, poot_dtype dt, bool special) {
  poot_type t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  return add_const(G, &t, special);
}

static poot_value node1(gen *G, poot_op op, uint32_t n, const poot_value *ops, const poot_attrs *a,
                        poot_trap trap) {
  poot_value res[2] = {POOT_VALUE_NONE, POOT_VALUE_NONE};
  for (uint32_t i = 0; i < n; i++)
    if (ops[i] == POOT_VALUE_NONE) return POOT_VALUE_NONE;
  if (!ok(G, poot_graph_add_node(G->g, op, n, ops, a, trap, res))) return POOT_VALUE_NONE;
  return res[0];
}

static poot_value bcast_scalar(gen *G, poot_value s, const poot_shape *shape) {
  poot_attrs a;
  memset(&a, 0, sizeof a);
  a.shape = *shape;
  a.num_dims = 0;
  return node1(G, POOT_OP_BROADCAST, 1, &s, &a, POOT_TRAP_NONE);
}

/* A value of exactly type t: an existing one, a converted or broadcast one,
 * or a new constant. */
static poot_value of_type(gen *G, pool *P, const poot_type *t, poot_value avoid) {
  uint32_t k = below(&G->r, 10);
  if (k < 5) {
    poot_value v = pick_type(G, P, t, avoid);
    if (v != POOT_VALUE_NONE) return v;
  }
  if (k < 7) {
    for (uint32_t i = 0; i < P->n; i++) {
      poot_value v = P->v[(i + k) % P->n];
      if (v != avoid && poot_shape_equal(&ty(G, v)->shape, &t->shape) &&
          ty(G, v)->dtype != t->dtype) {
        poot_attrs a;
        memset(&a, 0, sizeof a);
        a.dtype = t->dtype;
        return node1(G, POOT_OP_CONVERT, 1, &v, &a, POOT_TRAP_NONE);
      }
    }
  }
  if (k < 8 || t->shape.rank == 0) return add_const(G, t, chance(&G->r, 30));
  /* broadcast of a scalar constant (special values often) */
  poot_value s = scalar_const(G, t->dtype, chance(&G->r, 60));
  return bcast_scalar(G, s, &t->shape);
}

static poot_op rand_binary(gen *G, poot_dtype dt) {
  static const poot_op fl[] = {POOT_OP_ADD, POOT_OP_SUB, POOT_OP_MUL, POOT_OP_DIV,
                               POOT_OP_REM, POOT_OP_MAX, POOT_OP_MIN, POOT_OP_POW};
  static const poot_op in[] = {POOT_OP_ADD, POOT_OP_SUB, POOT_OP_MUL, POOT_OP_DIV, POOT_OP_REM,
                               POOT_OP_MAX, POOT_OP_MIN, POOT_OP_POW, POOT_OP_AND, POOT_OP_OR,
                               POOT_OP_XOR, POOT_OP_SHL, POOT_OP_SHR};
  static const poot_op bo[] = {POOT_OP_AND, POOT_OP_OR, POOT_OP_XOR};
  if (poot_dtype_is_float(dt)) return fl[below(&G->r, 8)];
  if (dt == POOT_DTYPE_BOOL) return bo[below(&G->r, 3)];
  return in[below(&G->r, 13)];
}

static poot_op rand_unary(gen *G, poot_dtype dt) {
  if (poot_dtype_is_float(dt)) {
    uint32_t k = below(&G->r, 21);
    if (k < 3) return (poot_op)(POOT_OP_NEG + k); /* neg abs sign */
    return (poot_op)(POOT_OP_EXP + below(&G->r, POOT_OP_SIGMOID - POOT_OP_EXP + 1));
  }
  if (dt == POOT_DTYPE_BOOL) return POOT_OP_NOT;
  return (poot_op)(POOT_OP_NEG + below(&G->r, 4));
}

static void gen_ops(gen *G, pool *P, uint32_t count, bool root);

static poot_value gen_composite(gen *G, pool *P, uint64_t body_seed, uint32_t nops,
                                const poot_value *ops, uint32_t *out_nres, poot_value *out_res) {
  *out_nres = 0;
  poot_value params[4];
  poot_composite_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.key = "k";
  attr.kind = POOT_CATTR_INT;
  attr.i = (int64_t)(body_seed % 3);
  char name[32];
  snprintf(name, sizeof name, "test.c%u", (unsigned)(body_seed % 4));
  if (!ok(G, poot_graph_composite_begin(G->g, name, 1, &attr, nops, ops, params)))
    return POOT_VALUE_NONE;
  /* The body's contents depend only on body_seed, so a composite built
   * twice from one seed and the same operands is identical. */
  rng saved = G->r;
  G->r.s = body_seed;
  pool body;
  body.n = 0;
  for (uint32_t i = 0; i < nops; i++) pool_add(&body, params[i]);
  G->depth++;
  gen_ops(G, &body, 2 + below(&G->r, 5), false);
  G->depth--;
  uint32_t nres = 1 + (chance(&G->r, 30) ? 1 : 0);
  poot_value res[2];
  for (uint32_t i = 0; i < nres; i++)
    res[i] = body.v[body.n - 1 - below(&G->r, body.n < 3 ? body.n : 3)];
  G->r = saved;
  poot_value outs[2] = {POOT_VALUE_NONE, POOT_VALUE_NONE};
  if (!ok(G, poot_graph_composite_end(G->g, nres, res, outs))) {
    poot_graph_composite_abort(G->g);
    return POOT_VALUE_NONE;
  }
  (void)P;
  *out_nres = nres;
  out_res[0] = outs[0];
  out_res[1] = outs[1];
  return outs[0];
}

/* Binary elementwise. */
static poot_value gen_binary(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  poot_value y = chance(r, 10) ? x : of_type(G, P, &t, x);
  poot_op op = rand_binary(G, t.dtype);
  poot_value ops[2] = {x, y};
  if (chance(r, 40)) {
    ops[0] = y;
    ops[1] = x;
  }
  out = node1(G, op, 2, ops, NULL, POOT_TRAP_NONE);
  return out;
}

/* Unary. */
static poot_value gen_unary(gen *G, pool *P) {
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  out = node1(G, rand_unary(G, ty(G, x)->dtype), 1, &x, NULL, POOT_TRAP_NONE);
  return out;
}

/* Compare. */
static poot_value gen_compare(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  poot_value ops[2] = {x, chance(r, 15) ? x : of_type(G, P, &t, x)};
  out = node1(G, (poot_op)(POOT_OP_EQ + below(r, 6)), 2, ops, NULL, POOT_TRAP_NONE);
  return out;
}

/* Select. */
static poot_value gen_select(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  poot_type pt = {POOT_DTYPE_BOOL, t.shape};
  poot_value ops[3] = {of_type(G, P, &pt, POOT_VALUE_NONE), x,
                       chance(r, 15) ? x : of_type(G, P, &t, x)};
  out = node1(G, POOT_OP_SELECT, 3, ops, NULL, POOT_TRAP_NONE);
  return out;
}

/* Convert (sometimes a round trip). */
static poot_value gen_convert(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  a.dtype = chance(r, 15) ? ty(G, x)->dtype : rand_dtype(r);
  const poot_dtype back = ty(G, x)->dtype;
  out = node1(G, POOT_OP_CONVERT, 1, &x, &a, POOT_TRAP_NONE);
  if (out != POOT_VALUE_NONE && chance(r, 40)) {
    pool_add(P, out);
    a.dtype = back;
    out = node1(G, POOT_OP_CONVERT, 1, &out, &a, POOT_TRAP_NONE);
  }
  return out;
}

/* Bitcast. */
static poot_value gen_bitcast(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE || ty(G, x)->dtype == POOT_DTYPE_BOOL) return out;
  const uint32_t bits = poot_dtype_info_of(ty(G, x)->dtype)->bits;
  poot_dtype cands[4];
  uint32_t nc = 0;
  for (uint32_t i = 0; i < 9; i++)
    if (poot_dtype_info_of(k_dtypes[i])->bits == bits) cands[nc++] = k_dtypes[i];
  a.dtype = cands[below(r, nc)];
  out = node1(G, POOT_OP_BITCAST, 1, &x, &a, POOT_TRAP_NONE);
  return out;
}

/* Broadcast, sometimes twice. */
static poot_value gen_broadcast(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  for (int rep = 0; rep < (chance(r, 40) ? 2 : 1); rep++) {
    const poot_type t = *ty(G, x);
    if (t.shape.rank >= 4) break;
    /* Insert one new dim at a random position; expand some size-1 dims. */
    uint32_t at = below(r, t.shape.rank + 1);
    poot_shape s;
    memset(&s, 0, sizeof s);
    s.rank = t.shape.rank + (chance(r, 85) ? 1 : 0);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s.rank; i++) {
      if (s.rank > t.shape.rank && i == at) {
        s.dims[i] = 1 + below(r, 3);
        continue;
      }
      int64_t d = t.shape.dims[k];
      s.dims[i] = d == 1 && chance(r, 40) ? 2 + below(r, 2) : d;
      a.dims[k++] = i;
    }
    a.num_dims = t.shape.rank;
    a.shape = s;
    if (elems_of(&s) > 256) break;
    poot_value y = node1(G, POOT_OP_BROADCAST, 1, &x, &a, POOT_TRAP_NONE);
    if (y == POOT_VALUE_NONE) break;
    pool_add(P, y);
    x = y;
    memset(&a, 0, sizeof a);
  }
  return POOT_VALUE_NONE;
}

/* Reshape, sometimes twice. */
static poot_value gen_reshape(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  for (int rep = 0; rep < (chance(r, 40) ? 2 : 1); rep++) {
    const poot_type t = *ty(G, x);
    const int64_t n = elems_of(&t.shape);
    poot_shape s;
    memset(&s, 0, sizeof s);
    uint32_t k = below(r, 4);
    if (k == 0) {
      s.rank = 1, s.dims[0] = n;
    } else if (k == 1) {
      s.rank = 2, s.dims[0] = 1, s.dims[1] = n;
    } else if (k == 2 && n % 2 == 0 && n > 0) {
      s.rank = 2, s.dims[0] = 2, s.dims[1] = n / 2;
    } else {
      s = t.shape; /* identity reshape */
    }
    poot_value y = node1(G, POOT_OP_RESHAPE, 1, &x, &(poot_attrs){.shape = s}, POOT_TRAP_NONE);
    if (y == POOT_VALUE_NONE) break;
    pool_add(P, y);
    x = y;
  }
  return POOT_VALUE_NONE;
}

/* Transpose, sometimes twice. */
static poot_value gen_transpose(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_ranked);
  if (x == POOT_VALUE_NONE) return out;
  for (int rep = 0; rep < (chance(r, 40) ? 2 : 1); rep++) {
    const uint32_t rank = ty(G, x)->shape.rank;
    memset(&a, 0, sizeof a);
    a.num_dims = rank;
    for (uint32_t i = 0; i < rank; i++) a.dims[i] = i;
    for (uint32_t i = rank; i > 1; i--) {
      uint32_t j = below(r, i);
      int64_t tmp = a.dims[i - 1];
      a.dims[i - 1] = a.dims[j];
      a.dims[j] = tmp;
    }
    poot_value y = node1(G, POOT_OP_TRANSPOSE, 1, &x, &a, POOT_TRAP_NONE);
    if (y == POOT_VALUE_NONE) break;
    pool_add(P, y);
    x = y;
  }
  return POOT_VALUE_NONE;
}

/* Slice. */
static poot_value gen_slice(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  a.num_dims = t.shape.rank;
  const bool full = chance(r, 25);
  for (uint32_t i = 0; i < t.shape.rank; i++) {
    int64_t d = t.shape.dims[i];
    a.start[i] = full || !d ? 0 : below(r, (uint32_t)d);
    a.limit[i] = full ? d : a.start[i] + below(r, (uint32_t)(d - a.start[i] + 1));
    a.stride[i] = full ? 1 : 1 + below(r, 2);
  }
  out = node1(G, POOT_OP_SLICE, 1, &x, &a, POOT_TRAP_NONE);
  return out;
}

/* Concat. */
static poot_value gen_concat(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_ranked);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  uint32_t n = 1 + below(r, 3);
  poot_value ops[3] = {x, x, x};
  for (uint32_t i = 1; i < n; i++) ops[i] = chance(r, 50) ? x : of_type(G, P, &t, x);
  a.axis = below(r, t.shape.rank);
  if (elems_of(&t.shape) * n > 256) n = 1;
  out = node1(G, POOT_OP_CONCAT, n, ops, &a, POOT_TRAP_NONE);
  return out;
}

/* Reduce. */
static poot_value gen_reduce(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_num);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  uint32_t kind2 = below(r, 4);
  if (kind2 == 3 && t.shape.rank > 0) {
    uint32_t d = below(r, t.shape.rank);
    if (t.shape.dims[d] < 1) return out;
    a.reduce_kind = POOT_REDUCE_ARGMAX;
    a.num_dims = 1;
    a.dims[0] = d;
    a.dtype = POOT_DTYPE_I32;
  } else {
    a.reduce_kind = (poot_reduce_kind)(POOT_REDUCE_SUM + below(r, 3));
    for (uint32_t i = 0; i < t.shape.rank; i++)
      if (chance(r, 50)) a.dims[a.num_dims++] = i;
    if (poot_dtype_is_float(t.dtype))
      a.dtype = chance(r, 50) ? POOT_DTYPE_F32 : t.dtype;
    else
      a.dtype = chance(r, 50) ? POOT_DTYPE_I32 : t.dtype;
  }
  out = node1(G, POOT_OP_REDUCE, 1, &x, &a, POOT_TRAP_NONE);
  return out;
}

/* Dot_general: x·x over its last dim, with a batch dim sometimes. */
static poot_value gen_dot(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_num_ranked);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  const uint32_t rk = t.shape.rank;
  if (rk >= 2 && chance(r, 50)) {
    a.dot.num_batch = 1;
    a.dot.lhs_batch[0] = 0;
    a.dot.rhs_batch[0] = 0;
  }
  a.dot.num_contract = 1;
  a.dot.lhs_contract[0] = rk - 1;
  a.dot.rhs_contract[0] = rk - 1;
  if (rk - a.dot.num_batch - 1 > 1 && 2 * (rk - 1) > 4) return out;
  a.dtype = poot_dtype_is_float(t.dtype) ? (chance(r, 50) ? POOT_DTYPE_F32 : t.dtype)
                                         : (chance(r, 50) ? POOT_DTYPE_I32 : t.dtype);
  poot_value y = chance(r, 50) ? x : of_type(G, P, &t, x);
  poot_value ops[2] = {x, y};
  out = node1(G, POOT_OP_DOT_GENERAL, 2, ops, &a, POOT_TRAP_NONE);
  return out;
}

/* Iota. */
static poot_value gen_iota(gen *G) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  a.dtype = rand_dtype(r);
  if (a.dtype == POOT_DTYPE_BOOL) a.dtype = POOT_DTYPE_I32;
  a.shape = rand_shape(r, 3);
  if (a.shape.rank == 0) a.shape.rank = 1, a.shape.dims[0] = 3;
  a.axis = below(r, a.shape.rank);
  out = node1(G, POOT_OP_IOTA, 0, NULL, &a, POOT_TRAP_NONE);
  return out;
}

/* Rng with constant key and counter. */
static poot_value gen_rng(gen *G) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_type kt = {POOT_DTYPE_U32, poot_shape_of(1, 2)};
  poot_value ops[2] = {add_const(G, &kt, false), add_const(G, &kt, false)};
  a.shape = rand_shape(r, 2);
  if (chance(r, 50)) {
    a.rng_dist = POOT_RNG_BITS;
    a.dtype = POOT_DTYPE_U32;
  } else {
    a.rng_dist = POOT_RNG_UNIFORM;
    a.dtype = k_dtypes[below(r, 3)];
  }
  out = node1(G, POOT_OP_RNG, 2, ops, &a, POOT_TRAP_NONE);
  return out;
}

/* Pad. */
static poot_value gen_pad(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  a.num_dims = t.shape.rank;
  const bool zero = chance(r, 30);
  for (uint32_t i = 0; i < t.shape.rank; i++) {
    a.low[i] = zero ? 0 : below(r, 2);
    a.high[i] = zero ? 0 : below(r, 2);
    a.interior[i] = zero ? 0 : below(r, 2);
  }
  poot_value ops[2] = {x, scalar_const(G, t.dtype, chance(r, 50))};
  out = node1(G, POOT_OP_PAD, 2, ops, &a, POOT_TRAP_NONE);
  if (out != POOT_VALUE_NONE && elems_of(&ty(G, out)->shape) > 512) out = POOT_VALUE_NONE;
  return out;
}

/* Dynamic_slice / dynamic_update_slice with constant or slot starts. */
static poot_value gen_dynamic_slice(gen *G, pool *P, bool update) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_ranked);
  if (x == POOT_VALUE_NONE) return out;
  if (chance(r, 30)) x = add_const(G, ty(G, x), false); /* foldable, may fault */
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  const poot_trap trap = chance(r, 40) ? POOT_TRAP_SLICE_OUT_OF_RANGE : POOT_TRAP_NONE;
  poot_value ops[2 + POOT_MAX_RANK];
  uint32_t first = update ? 2 : 1;
  poot_shape sz = t.shape;
  for (uint32_t i = 0; i < t.shape.rank; i++)
    sz.dims[i] = chance(r, 30) ? t.shape.dims[i] : below(r, (uint32_t)t.shape.dims[i] + 1);
  for (uint32_t i = 0; i < t.shape.rank; i++) {
    int64_t room = t.shape.dims[i] - sz.dims[i];
    int64_t s = chance(r, 90) ? (int64_t)below(r, (uint32_t)room + 1) : room + 1 + below(r, 2);
    if (chance(r, 3)) s = -1;
    ops[first + i] = POOT_VALUE_NONE;
    ok(G, poot_graph_const_int(G->g, POOT_DTYPE_I32, s, &ops[first + i]));
  }
  ops[0] = x;
  if (update) {
    poot_type ut = {t.dtype, sz};
    ops[1] = of_type(G, P, &ut, POOT_VALUE_NONE);
  } else {
    a.num_dims = t.shape.rank;
    for (uint32_t i = 0; i < t.shape.rank; i++) a.dims[i] = sz.dims[i];
  }
  out = node1(G, update ? POOT_OP_DYNAMIC_UPDATE_SLICE : POOT_OP_DYNAMIC_SLICE,
              first + t.shape.rank, ops, &a, trap);
  return out;
}

/* Gather with constant indices. */
static poot_value gen_gather(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_ranked);
  if (x == POOT_VALUE_NONE) return out;
  if (chance(r, 30)) x = add_const(G, ty(G, x), false); /* foldable, may fault */
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  a.axis = below(r, t.shape.rank);
  const int64_t d = t.shape.dims[a.axis];
  /* A gather from an empty axis has no element to clamp to (the oracle
     reads out of bounds there: reported); never generate one. */
  if (d < 1) return out;
  const poot_trap trap = chance(r, 40) ? POOT_TRAP_INDEX_OUT_OF_RANGE : POOT_TRAP_NONE;
  poot_type it = {POOT_DTYPE_I32, poot_shape_of(1, 1 + below(r, 3))};
  int32_t idx[4];
  for (int64_t i = 0; i < it.shape.dims[0]; i++)
    idx[i] =
        chance(r, 93) && d > 0 ? (int32_t)below(r, (uint32_t)d) : (int32_t)d + (int32_t)below(r, 2);
  poot_tensor tt = {it, idx, (size_t)it.shape.dims[0] * 4};
  poot_value ops[2] = {x, POOT_VALUE_NONE};
  ok(G, poot_graph_add_const(G->g, &tt, &ops[1]));
  out = node1(G, POOT_OP_GATHER, 2, ops, &a, trap);
  return out;
}

/* Scatter_update with constant indices (sometimes out of range). */
static poot_value gen_scatter(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_ranked);
  if (x == POOT_VALUE_NONE) return out;
  if (chance(r, 30)) x = add_const(G, ty(G, x), false);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  a.axis = below(r, t.shape.rank);
  const int64_t d = t.shape.dims[a.axis];
  const poot_trap trap = chance(r, 40) ? POOT_TRAP_WRITE_MAP_OUT_OF_RANGE : POOT_TRAP_NONE;
  poot_type it = {POOT_DTYPE_I32, poot_shape_of(1, 1 + below(r, 3))};
  int32_t idx[4];
  for (int64_t i = 0; i < it.shape.dims[0]; i++)
    idx[i] =
        chance(r, 90) && d > 0 ? (int32_t)below(r, (uint32_t)d) : (chance(r, 50) ? -1 : (int32_t)d);
  poot_tensor tt = {it, idx, (size_t)it.shape.dims[0] * 4};
  poot_value ops[3] = {x, POOT_VALUE_NONE, POOT_VALUE_NONE};
  ok(G, poot_graph_add_const(G->g, &tt, &ops[1]));
  poot_type ut;
  memset(&ut, 0, sizeof ut);
  ut.dtype = t.dtype;
  for (int64_t i = 0; i < a.axis; i++) ut.shape.dims[ut.shape.rank++] = t.shape.dims[i];
  ut.shape.dims[ut.shape.rank++] = it.shape.dims[0];
  for (uint32_t i = (uint32_t)a.axis + 1; i < t.shape.rank; i++)
    ut.shape.dims[ut.shape.rank++] = t.shape.dims[i];
  ops[2] = of_type(G, P, &ut, POOT_VALUE_NONE);
  out = node1(G, POOT_OP_SCATTER_UPDATE, 3, ops, &a, trap);
  return out;
}

/* Top_k or cumsum. */
static poot_value gen_topk_cumsum(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_num_ranked);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  if (chance(r, 50)) {
    a.k = below(r, (uint32_t)t.shape.dims[t.shape.rank - 1] + 1);
    poot_value res[2];
    if (!ok(G, poot_graph_add_node(G->g, POOT_OP_TOP_K, 1, &x, &a, POOT_TRAP_NONE, res)))
      return out;
    pool_add(P, res[0]);
    out = res[1];
  } else {
    a.axis = below(r, t.shape.rank);
    a.dtype = poot_dtype_is_float(t.dtype) ? POOT_DTYPE_F32 : POOT_DTYPE_I32;
    out = node1(G, POOT_OP_CUMSUM, 1, &x, &a, POOT_TRAP_NONE);
  }
  return out;
}

/* Identity chains for canonicalize. */
static poot_value gen_identity_chain(gen *G, pool *P) {
  rng *r = &G->r;
  poot_attrs a;
  memset(&a, 0, sizeof a);
  poot_value out = POOT_VALUE_NONE;
  poot_value x = pick_where(G, P, p_any);
  if (x == POOT_VALUE_NONE) return out;
  const poot_type t = *ty(G, x);
  uint32_t k = below(r, 4);
  if (k == 0 && t.dtype != POOT_DTYPE_BOOL) { /* x op splat */
    poot_value s = scalar_const(G, t.dtype, true);
    poot_value y = t.shape.rank ? bcast_scalar(G, s, &t.shape) : s;
    poot_value ops[2] = {x, y};
    if (chance(r, 50)) ops[0] = y, ops[1] = x;
    static const poot_op idops[] = {POOT_OP_ADD, POOT_OP_SUB, POOT_OP_MUL, POOT_OP_DIV};
    out = node1(G, idops[below(r, 4)], 2, ops, NULL, POOT_TRAP_NONE);
  } else if (k == 1 && p_num(&t)) { /* neg(neg x) / abs(neg x) */
    poot_value y = node1(G, POOT_OP_NEG, 1, &x, NULL, POOT_TRAP_NONE);
    out = node1(G, chance(r, 50) ? POOT_OP_NEG : POOT_OP_ABS, 1, &y, NULL, POOT_TRAP_NONE);
  } else if (k == 2 && p_intlike(&t)) { /* not(not x), x | 0, x & ~0 */
    poot_value y = node1(G, POOT_OP_NOT, 1, &x, NULL, POOT_TRAP_NONE);
    out = node1(G, POOT_OP_NOT, 1, &y, NULL, POOT_TRAP_NONE);
  } else { /* select with a constant predicate or equal branches */
    poot_type pt = {POOT_DTYPE_BOOL, t.shape};
    poot_value p = add_const(G, &pt, true);
    poot_value ops[3] = {p, x, chance(r, 30) ? x : of_type(G, P, &t, x)};
    out = node1(G, POOT_OP_SELECT, 3, ops, NULL, POOT_TRAP_NONE);
  }
  return out;
}

/* A duplicate of an earlier op node of this region. */
static poot_value gen_duplicate(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  for (int tries = 0; tries < 6 && out == POOT_VALUE_NONE; tries++) {
    poot_value v = pick(G, P);
    if (v == POOT_VALUE_NONE) break;
    const poot_node *n = poot_graph_value_node(G->g, v, NULL);
    if (!n || n->op == POOT_OP_LEAF || n->op == POOT_OP_COMPOSITE || n->num_operands > 8) continue;
    poot_value ops[8];
    if (n->num_operands) memcpy(ops, n->operands, n->num_operands * sizeof(poot_value));
    poot_attrs na = n->attrs;
    poot_op op = n->op;
    /* Mirror the commutative and ordered compares too. */
    if (n->num_operands == 2 && chance(r, 50) &&
        (op == POOT_OP_ADD || op == POOT_OP_MUL || op == POOT_OP_EQ || op == POOT_OP_LT ||
         op == POOT_OP_GT || op == POOT_OP_MAX || op == POOT_OP_AND)) {
      poot_value tmp = ops[0];
      ops[0] = ops[1];
      ops[1] = tmp;
      if (op == POOT_OP_LT)
        op = POOT_OP_GT;
      else if (op == POOT_OP_GT)
        op = POOT_OP_LT;
    }
    poot_value res[2];
    if (!ok(G, poot_graph_add_node(G->g, op, n->num_operands, ops, &na, n->trap, res))) break;
    out = res[0];
  }
  return out;
}

/* Composite (sometimes twice from the same seed). */
static poot_value gen_composites(gen *G, pool *P) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  if (G->depth >= 2) return out;
  uint32_t nops = 1 + below(r, 3);
  poot_value ops[3];
  for (uint32_t i = 0; i < nops; i++) ops[i] = pick(G, P);
  if (ops[0] == POOT_VALUE_NONE) return out;
  uint64_t seed = next_u64(r);
  int times = chance(r, 35) ? 2 : 1;
  for (int k = 0; k < times; k++) {
    uint32_t nres = 0;
    poot_value res[2];
    gen_composite(G, P, seed, nops, ops, &nres, res);
    for (uint32_t i = 0; i < nres; i++) pool_add(P, res[i]);
  }
  return POOT_VALUE_NONE;
}

/* A new constant (or parameter at the root). */
static poot_value gen_leaf(gen *G, bool root) {
  rng *r = &G->r;
  poot_value out = POOT_VALUE_NONE;
  poot_type t = {rand_dtype(r), rand_shape(r, 3)};
  if (root && chance(r, 40)) {
    char name[16];
    snprintf(name, sizeof name, "p%u", G->names++);
    ok(G, poot_graph_add_param(G->g, name, &t, &out));
  } else {
    out = add_const(G, &t, chance(r, 30));
  }
  return out;
}

static void gen_one(gen *G, pool *P, bool root) {
  const uint32_t kind = below(&G->r, 32);
  poot_value out = POOT_VALUE_NONE;
  switch (kind) {
    case 0:
    case 1:
    case 2:
    case 3:
      out = gen_binary(G, P);
      break;
    case 4:
    case 5:
      out = gen_unary(G, P);
      break;
    case 6:
      out = gen_compare(G, P);
      break;
    case 7:
      out = gen_select(G, P);
      break;
    case 8:
    case 9:
      out = gen_convert(G, P);
      break;
    case 10:
      out = gen_bitcast(G, P);
      break;
    case 11:
      out = gen_broadcast(G, P);
      break;
    case 12:
      out = gen_reshape(G, P);
      break;
    case 13:
      out = gen_transpose(G, P);
      break;
    case 14:
      out = gen_slice(G, P);
      break;
    case 15:
      out = gen_concat(G, P);
      break;
    case 16:
      out = gen_reduce(G, P);
      break;
    case 17:
      out = gen_dot(G, P);
      break;
    case 18:
      out = gen_iota(G);
      break;
    case 19:
      out = gen_rng(G);
      break;
    case 20:
      out = gen_pad(G, P);
      break;
    case 21:
    case 22:
      out = gen_dynamic_slice(G, P, kind == 22);
      break;
    case 23:
      out = gen_gather(G, P);
      break;
    case 30:
      out = gen_scatter(G, P);
      break;
    case 24:
      out = gen_topk_cumsum(G, P);
      break;
    case 25:
      out = gen_identity_chain(G, P);
      break;
    case 26:
      out = gen_duplicate(G, P);
      break;
    case 27:
    case 28:
      out = gen_composites(G, P);
      break;
    default:
      out = gen_leaf(G, root);
      break;
  }
  pool_add(P, out);
}

static void gen_ops(gen *G, pool *P, uint32_t count, bool root) {
  if (!P->n) {
    poot_type t = {rand_dtype(&G->r), rand_shape(&G->r, 2)};
    pool_add(P, add_const(G, &t, false));
  }
  for (uint32_t i = 0; i < count; i++) gen_one(G, P, root);
}

poot_status pg_random_graph(uint64_t seed, poot_graph **out_graph, uint32_t *out_skipped) {
  *out_graph = NULL;
  if (out_skipped) *out_skipped = 0;
  gen G;
  memset(&G, 0, sizeof G);
  G.r.s = seed * 0x2545F4914F6CDD1Dull + 1;
  POOT_TRY(poot_graph_create(&G.g));
  pool P;
  P.n = 0;
  /* The interface: params, states, a pos slot, a weight. */
  const uint32_t nparams = 1 + below(&G.r, 3);
  for (uint32_t i = 0; i < nparams; i++) {
    poot_type t = {rand_dtype(&G.r), rand_shape(&G.r, 3)};
    char name[16];
    snprintf(name, sizeof name, "p%u", G.names++);
    poot_value v = POOT_VALUE_NONE;
    ok(&G, poot_graph_add_param(G.g, name, &t, &v));
    pool_add(&P, v);
  }
  poot_value states[3];
  const uint32_t nstates = below(&G.r, 3);
  for (uint32_t i = 0; i < nstates; i++) {
    poot_type t = {rand_dtype(&G.r), rand_shape(&G.r, 2)};
    char name[16];
    snprintf(name, sizeof name, "s%u", i);
    states[i] = POOT_VALUE_NONE;
    ok(&G, poot_graph_add_state(G.g, name, &t, &states[i]));
    pool_add(&P, states[i]);
  }
  if (chance(&G.r, 40)) {
    poot_type t = {POOT_DTYPE_I32, poot_shape_of(0, 0)};
    poot_value v = POOT_VALUE_NONE;
    ok(&G, poot_graph_add_slot(G.g, POOT_SLOT_POS, NULL, &t, &v));
    pool_add(&P, v);
  }
  if (chance(&G.r, 30)) {
    poot_weight_id w = poot_weight_id_named("w");
    poot_type t = {k_dtypes[below(&G.r, 3)], rand_shape(&G.r, 2)};
    poot_value v = POOT_VALUE_NONE;
    ok(&G, poot_graph_add_weight(G.g, &w, &t, &v));
    pool_add(&P, v);
  }
  gen_ops(&G, &P, 6 + below(&G.r, 22), true);
  /* Results. */
  poot_value out = P.v[P.n - 1];
  if (chance(&G.r, 30)) out = pick(&G, &P);
  ok(&G, poot_graph_set_output(G.g, out));
  for (uint32_t i = 0; i < nstates; i++) {
    if (states[i] == POOT_VALUE_NONE || chance(&G.r, 20)) continue;
    poot_type t = *ty(&G, states[i]);
    poot_value v = of_type(&G, &P, &t, states[i]);
    if (v != POOT_VALUE_NONE) ok(&G, poot_graph_set_state_update(G.g, states[i], v));
  }
  const uint32_t nenv = below(&G.r, 3);
  for (uint32_t i = 0; i < nenv; i++) {
    char name[16];
    snprintf(name, sizeof name, "e%u", i);
    ok(&G, poot_graph_add_env(G.g, name, pick(&G, &P)));
  }
  poot_status st = poot_graph_verify(G.g);
  if (st) {
    poot_graph_destroy(G.g);
    return st;
  }
  *out_graph = G.g;
  if (out_skipped) *out_skipped = G.skipped;
  return NULL;
}

/* ------------------------------------------------------------------ inputs */

poot_status pg_make_inputs(const poot_graph *graph, uint64_t seed, pg_inputs *out) {
  memset(out, 0, sizeof *out);
  const poot_region *root = poot_graph_root(graph);
  rng r = {seed ^ 0xA5A5A5A5DEADBEEFull};
  out->items = poot_calloc(root->num_nodes + 1, sizeof(poot_eval_input));
  out->tensors = poot_calloc(root->num_nodes + 1, sizeof(poot_tensor));
  out->names = poot_calloc(root->num_nodes + 1, sizeof(char *));
  if (!out->items || !out->tensors || !out->names) {
    pg_inputs_free(out);
    return poot_status_make(POOT_OUT_OF_MEMORY, "pg_make_inputs");
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(graph, root->nodes[i]);
    if (n->op != POOT_OP_LEAF || n->storage == POOT_STORAGE_CONST) continue;
    const poot_type *t = poot_graph_value_type(graph, n->results[0]);
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(graph, n, &sb);
    size_t k = out->count++;
    out->names[k] = poot_strdup(sb.data);
    int64_t count = elems_of(&t->shape);
    size_t bytes = (size_t)count * esize(t->dtype);
    out->tensors[k].type = *t;
    out->tensors[k].size = bytes;
    out->tensors[k].data = poot_malloc(bytes ? bytes : 1);
    if (!out->names[k] || !out->tensors[k].data) {
      poot_strbuf_deinit(&sb);
      pg_inputs_free(out);
      return poot_status_make(POOT_OUT_OF_MEMORY, "pg_make_inputs");
    }
    if (n->storage == POOT_STORAGE_SLOT) { /* positions: mostly in range */
      for (int64_t e = 0; e < count; e++) {
        int32_t v = chance(&r, 90) ? (int32_t)below(&r, 4) : (int32_t)below(&r, 9) - 2;
        memcpy((uint8_t *)out->tensors[k].data + 4 * e, &v, 4);
      }
    } else {
      fill_random(&r, t, out->tensors[k].data, count);
    }
    out->items[k].name = out->names[k];
    out->items[k].tensor = &out->tensors[k];
  }
  poot_strbuf_deinit(&sb);
  return NULL;
}

void pg_inputs_free(pg_inputs *in) {
  if (!in) return;
  for (size_t i = 0; i < in->count; i++) {
    if (in->names) poot_free(in->names[i]);
    if (in->tensors) poot_free(in->tensors[i].data);
  }
  poot_free(in->items);
  poot_free(in->tensors);
  poot_free(in->names);
  memset(in, 0, sizeof *in);
}

/* -------------------------------------------------------------- comparison */

static char *msg(const char *fmt, ...) POOT_PRINTF(1, 2);
static char *msg(const char *fmt, ...) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  va_list ap;
  va_start(ap, fmt);
  poot_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  return poot_strbuf_take(&sb);
}

static char *cmp_tensor(const char *what, const poot_tensor *a, const poot_tensor *b) {
  if (!poot_type_equal(&a->type, &b->type) || a->size != b->size)
    return msg("%s: types differ", what);
  if (a->size && memcmp(a->data, b->data, a->size) != 0) {
    size_t i = 0;
    while (((const uint8_t *)a->data)[i] == ((const uint8_t *)b->data)[i]) i++;
    return msg("%s: bytes differ at byte %zu (%02x vs %02x)", what, i,
               ((const uint8_t *)a->data)[i], ((const uint8_t *)b->data)[i]);
  }
  return NULL;
}

char *pg_compare(const poot_graph *ga, const poot_graph *gb, const pg_inputs *in,
                 poot_status_code *out_code) {
  poot_eval_inputs inputs = {.count = in->count, .items = in->items};
  poot_eval_fault fa, fb;
  memset(&fa, 0, sizeof fa);
  memset(&fb, 0, sizeof fb);
  poot_eval_options oa, ob;
  poot_eval_options_init(&oa);
  poot_eval_options_init(&ob);
  oa.out_fault = &fa;
  ob.out_fault = &fb;
  poot_evaluation *ea = NULL, *eb = NULL;
  poot_status sa = poot_eval(ga, &inputs, &oa, &ea);
  poot_status sb = poot_eval(gb, &inputs, &ob, &eb);
  const poot_status_code ca = poot_status_code_of(sa), cb = poot_status_code_of(sb);
  if (out_code) *out_code = ca;
  char *m = NULL;
  if (ca != cb) {
    m = msg("status differs: %s (%s) vs %s (%s)", poot_status_code_name(ca),
            poot_status_message(sa), poot_status_code_name(cb), poot_status_message(sb));
  } else if (ca == POOT_KERNEL_FAULT) {
    if (fa.op != fb.op || fa.trap != fb.trap || fa.index != fb.index || fa.limit != fb.limit)
      m = msg("faults differ: %s vs %s", poot_status_message(sa), poot_status_message(sb));
  } else if (ca == POOT_OK) {
    if (ea->has_output != eb->has_output) m = msg("has_output differs");
    if (!m && ea->has_output) m = cmp_tensor("output", &ea->output, &eb->output);
    if (!m && ea->num_states != eb->num_states) m = msg("state counts differ");
    for (uint32_t i = 0; !m && i < ea->num_states; i++) {
      if (strcmp(ea->states[i].name, eb->states[i].name) != 0)
        m = msg("state %u name differs", i);
      else
        m = cmp_tensor(ea->states[i].name, &ea->states[i].tensor, &eb->states[i].tensor);
    }
    if (!m && ea->num_env != eb->num_env) m = msg("env counts differ");
    for (uint32_t i = 0; !m && i < ea->num_env; i++) {
      if (strcmp(ea->env[i].name, eb->env[i].name) != 0)
        m = msg("env %u name differs", i);
      else
        m = cmp_tensor(ea->env[i].name, &ea->env[i].tensor, &eb->env[i].tensor);
    }
  }
  poot_status_free(sa);
  poot_status_free(sb);
  poot_evaluation_destroy(ea);
  poot_evaluation_destroy(eb);
  return m;
}

char *pg_check_text(const poot_graph *g) {
  char *t1 = NULL, *t2 = NULL, *m = NULL;
  poot_graph *p = NULL;
  poot_status st = poot_graph_to_text(g, &t1);
  if (!st) st = poot_graph_parse(t1, strlen(t1), &p);
  if (!st) st = poot_graph_to_text(p, &t2);
  if (st)
    m = msg("text round trip failed: %s", poot_status_message(st));
  else if (strcmp(t1, t2) != 0)
    m = msg("print -> parse -> print differs:\n%s\n---\n%s", t1, t2);
  poot_status_free(st);
  poot_free(t1);
  poot_free(t2);
  poot_graph_destroy(p);
  return m;
}

static uint32_t count_region(const poot_graph *g, const poot_region *r, poot_op op) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < r->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, r->nodes[i]);
    if (n->op == op) c++;
    if (n->op == POOT_OP_COMPOSITE) c += count_region(g, n->body, op);
  }
  return c;
}

uint32_t pg_count_op(const poot_graph *g, poot_op op) {
  return count_region(g, poot_graph_root(g), op);
}
