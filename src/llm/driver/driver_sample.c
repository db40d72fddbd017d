/* driver_sample.c — the sampling suffix the driver appends to a traced step
 * (DESIGN §7 "Sampling on the device"; docs/sampling.md "The device suffix").
 *
 * The suffix is built from core graph ops, so every device runs it and
 * poot_eval is its oracle; it computes what poot_sampling_sample computes
 * (the reference sampler), in f32. Its shape depends only on the kind (which
 * samplers are on) and on capacities, never on a sampler's value: the values
 * are slots written before each replay. */
#include <math.h>
#include <string.h>

#include "driver_impl.h"
#include "driver_internal.h"

/* A builder whose first error sticks: each call returns POOT_VALUE_NONE once
 * an error is set, and the caller checks sb.st at the end. */
typedef struct sb {
  poot_graph *g;
  poot_status st;
  int64_t V; /* vocabulary (logits per row) */
  int64_t K; /* candidates a sorting kind sorts (0: min(V, 1,024)) */
  /* Row mode (poot__driver_append_sampler_rows): B > 0 rows, the suffix
   * being built for row `row`; each named slot is one slot of [B, n] for
   * every row (created by the first row that asks), and a row reads its own
   * line of it. */
  int64_t B, row;
  const char *bnames[12];
  poot_value bslots[12];
  uint32_t nb;
  /* Row mode with penalties: entries of each row's window list (the
   * sampler.pen_id / sampler.pen_n slots, poot__driver_append_sampler_rows). */
  int64_t P;
} sb;

static poot_value fail_value(sb *s, poot_status st) {
  if (!s->st)
    s->st = st;
  else
    poot_status_free(st);
  return POOT_VALUE_NONE;
}

#define SB_CALL(s, call)                  \
  do {                                    \
    if ((s)->st) return POOT_VALUE_NONE;  \
    poot_status st_ = (call);             \
    if (st_) return fail_value((s), st_); \
  } while (0)

static poot_shape shape1(int64_t n) {
  poot_shape sh = {.rank = 1, .dims = {n}};
  return sh;
}
static poot_shape shape2(int64_t a, int64_t b) {
  poot_shape sh = {.rank = 2, .dims = {a, b}};
  return sh;
}

static poot_value bin(sb *s, poot_op op, poot_value a, poot_value b) {
  poot_value o;
  SB_CALL(s, poot_graph_binary(s->g, op, a, b, &o));
  return o;
}
static poot_value un(sb *s, poot_op op, poot_value a) {
  poot_value o;
  SB_CALL(s, poot_graph_unary(s->g, op, a, &o));
  return o;
}
static poot_value sel(sb *s, poot_value p, poot_value a, poot_value b) {
  poot_value o;
  SB_CALL(s, poot_graph_select(s->g, p, a, b, &o));
  return o;
}
static poot_value cvt(sb *s, poot_value x, poot_dtype dt) {
  poot_value o;
  SB_CALL(s, poot_graph_convert(s->g, x, dt, &o));
  return o;
}
static poot_value bits(sb *s, poot_value x, poot_dtype dt) {
  poot_value o;
  SB_CALL(s, poot_graph_bitcast(s->g, x, dt, &o));
  return o;
}
static poot_value reshape(sb *s, poot_value x, poot_shape sh) {
  poot_value o;
  SB_CALL(s, poot_graph_reshape(s->g, x, &sh, &o));
  return o;
}
static poot_value fconst(sb *s, double v) {
  poot_value o;
  SB_CALL(s, poot_graph_const_f32(s->g, POOT_DTYPE_F32, v, &o));
  return o;
}
static poot_value iconst(sb *s, poot_dtype dt, int64_t v) {
  poot_value o;
  SB_CALL(s, poot_graph_const_int(s->g, dt, v, &o));
  return o;
}
/* A scalar (rank 0) or a [1] value broadcast to `sh`. */
static poot_value bcast(sb *s, poot_value x, poot_shape sh) {
  const poot_type *t = s->st ? NULL : poot_graph_value_type(s->g, x);
  if (!s->st && !t) return fail_value(s, poot_status_make(POOT_INTERNAL, "sampler: bad value"));
  poot_value o, x0 = x;
  if (!s->st && t->shape.rank == 1) x0 = reshape(s, x, (poot_shape){.rank = 0});
  SB_CALL(s, poot_graph_broadcast(s->g, x0, &sh, NULL, &o));
  return o;
}
/* x[m] broadcast along a new trailing dim: [m, n]. */
static poot_value cols_of(sb *s, poot_value x, int64_t m, int64_t n) {
  poot_value o;
  poot_shape sh = shape2(m, n);
  int64_t d[1] = {0};
  SB_CALL(s, poot_graph_broadcast(s->g, x, &sh, d, &o));
  return o;
}
static poot_value reduce(sb *s, poot_value x, poot_reduce_kind k, int64_t axis, poot_dtype acc) {
  poot_value o;
  SB_CALL(s, poot_graph_reduce(s->g, x, k, 1, &axis, acc, &o));
  return o;
}
static poot_value iota(sb *s, poot_dtype dt, poot_shape sh, int64_t axis) {
  poot_value o;
  poot_type t = poot_type_make(dt, sh.rank, sh.dims);
  SB_CALL(s, poot_graph_iota(s->g, &t, axis, &o));
  return o;
}
/* Element i of a 1-D value, as a scalar. */
static poot_value elem(sb *s, poot_value x, int64_t i) {
  poot_value o;
  int64_t st[1] = {i}, lim[1] = {i + 1};
  SB_CALL(s, poot_graph_slice(s->g, x, st, lim, NULL, &o));
  return reshape(s, o, (poot_shape){.rank = 0});
}
static poot_value slot(sb *s, const char *name, poot_dtype dt, int64_t n) {
  poot_value o;
  if (s->B == 0) {
    poot_type t = poot_type_make(dt, 1, &n);
    SB_CALL(s, poot_graph_add_slot(s->g, POOT_SLOT_NAMED, name, &t, &o));
    return o;
  }
  uint32_t i = 0;
  while (i < s->nb && strcmp(s->bnames[i], name) != 0) i++;
  if (i == s->nb) {
    if (s->nb == sizeof s->bnames / sizeof s->bnames[0])
      return fail_value(s, poot_status_make(POOT_INTERNAL, "sampler: slots"));
    int64_t d[2] = {s->B, n};
    poot_type t = poot_type_make(dt, 2, d);
    SB_CALL(s, poot_graph_add_slot(s->g, POOT_SLOT_NAMED, name, &t, &o));
    s->bnames[s->nb] = name;
    s->bslots[s->nb++] = o;
  }
  int64_t st[2] = {s->row, 0}, lim[2] = {s->row + 1, n};
  SB_CALL(s, poot_graph_slice(s->g, s->bslots[i], st, lim, NULL, &o));
  return reshape(s, o, shape1(n));
}
static poot_value state(sb *s, const char *name, poot_dtype dt, int64_t n) {
  poot_value o;
  poot_type t = poot_type_make(dt, 1, &n);
  SB_CALL(s, poot_graph_add_state(s->g, name, &t, &o));
  return o;
}
static void set_state(sb *s, poot_value st, poot_value v) {
  if (s->st) return;
  poot_status e = poot_graph_set_state_update(s->g, st, v);
  if (e) fail_value(s, e);
}
/* A scalar f32 of a [n] f32 slot; broadcast to `sh`. */
static poot_value param_f(sb *s, poot_value fp, int64_t i, poot_shape sh) {
  return bcast(s, elem(s, fp, i), sh);
}

/* The slot leaf of `kind` (TOKEN, POS) in the root region. */
static poot_value find_slot(const poot_graph *g, poot_slot_kind kind) {
  const poot_region *root = poot_graph_root(g);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (n->op == POOT_OP_LEAF && n->storage == POOT_STORAGE_SLOT && n->slot_kind == kind)
      return n->results[0];
  }
  return POOT_VALUE_NONE;
}

/* ------------------------------------------------------ the history */

/* counts += one-hot(tokens fed) - one-hot(tokens leaving the window) and
 * hist[pos .. pos+T) = tokens. The window's lag L is element 1 of the i32
 * parameter slot: the token fed at position p leaves at p + L (L = 0: never).
 * Tokens of the same step can leave: a lag shorter than T reads them from
 * the step's own tokens. */
static poot_value history_update(sb *s, const driver_sample_shape *sh, poot_value ip) {
  poot_value tok = find_slot(s->g, POOT_SLOT_TOKEN), pos = find_slot(s->g, POOT_SLOT_POS);
  if (!s->st && (tok == POOT_VALUE_NONE || pos == POOT_VALUE_NONE)) {
    return fail_value(s,
                      poot_status_make(POOT_INTERNAL, "sampler: the step has no token/pos slot"));
  }
  const int64_t T = sh->tokens, V = s->V, cap = sh->cap;
  poot_value counts = state(s, "sampler.counts", POOT_DTYPE_I32, V);
  poot_value hist = state(s, "sampler.hist", POOT_DTYPE_I32, cap);
  poot_value t1 = reshape(s, tok, shape1(T));
  poot_value p0 = elem(s, pos, 0);
  poot_value lag = elem(s, ip, 1);
  poot_value tT = iota(s, POOT_DTYPE_I32, shape1(T), 0);
  poot_value at = bin(s, POOT_OP_ADD, tT, bcast(s, p0, shape1(T)));    /* p = pos + t */
  poot_value from = bin(s, POOT_OP_SUB, at, bcast(s, lag, shape1(T))); /* p - L */
  poot_value lagb = bcast(s, lag, shape1(T));
  poot_value zero = bcast(s, iconst(s, POOT_DTYPE_I32, 0), shape1(T));
  poot_value valid =
      bin(s, POOT_OP_AND, bin(s, POOT_OP_GT, lagb, zero), bin(s, POOT_OP_GE, from, zero));
  /* the leaving token: from this step's tokens when from >= pos, else hist */
  poot_value in_step = bin(s, POOT_OP_GE, from, bcast(s, p0, shape1(T)));
  poot_value hi =
      bin(s, POOT_OP_MAX, zero,
          bin(s, POOT_OP_MIN, from, bcast(s, iconst(s, POOT_DTYPE_I32, cap - 1), shape1(T))));
  poot_value ti = bin(s, POOT_OP_SUB, tT, lagb);
  ti = bin(s, POOT_OP_MAX, zero,
           bin(s, POOT_OP_MIN, ti, bcast(s, iconst(s, POOT_DTYPE_I32, T - 1), shape1(T))));
  poot_value old_h, old_t;
  if (s->st) return POOT_VALUE_NONE;
  poot_status e = poot_graph_gather(s->g, hist, hi, 0, 0, POOT_TRAP_NONE, &old_h);
  if (!e) e = poot_graph_gather(s->g, t1, ti, 0, 0, POOT_TRAP_NONE, &old_t);
  if (e) return fail_value(s, e);
  poot_value old = sel(s, in_step, old_t, old_h);
  poot_value counts_new;
  if (T == 1) {
    /* One token in, at most one out: counts[tok] += 1 and counts[old] -= 1
     * (nothing when they are the same token) as a scatter of two elements,
     * which the planner writes into the state in place (a read-modify-write:
     * the gathers read only the elements the scatter writes), not a pass
     * over the vocabulary and a copy of it back into the state. The
     * leaving slot names token -1 (out of range: skipped) when none leaves. */
    poot_value one = iconst(s, POOT_DTYPE_I32, 1);
    poot_value same = bin(s, POOT_OP_AND, reshape(s, valid, (poot_shape){.rank = 0}),
                          bin(s, POOT_OP_EQ, reshape(s, old, (poot_shape){.rank = 0}),
                              reshape(s, t1, (poot_shape){.rank = 0})));
    poot_value leaves = bin(s, POOT_OP_AND, valid, bin(s, POOT_OP_NE, old, t1));
    poot_value out_id = sel(s, leaves, old, bcast(s, iconst(s, POOT_DTYPE_I32, -1), shape1(1)));
    poot_value in_delta = bin(s, POOT_OP_SUB, one, cvt(s, same, POOT_DTYPE_I32));
    poot_value pi[2] = {t1, out_id}, pd[2] = {reshape(s, in_delta, shape1(1)),
                                              reshape(s, iconst(s, POOT_DTYPE_I32, -1), shape1(1))};
    poot_value ids, delta, cur;
    if (s->st) return POOT_VALUE_NONE;
    e = poot_graph_concat(s->g, 2, pi, 0, &ids);
    if (!e) e = poot_graph_concat(s->g, 2, pd, 0, &delta);
    if (!e) e = poot_graph_gather(s->g, counts, ids, 0, 0, POOT_TRAP_NONE, &cur);
    if (!e)
      e = poot_graph_scatter_update(s->g, counts, ids, bin(s, POOT_OP_ADD, cur, delta), 0,
                                    POOT_TRAP_NONE, &counts_new);
    if (!e && s->st) return POOT_VALUE_NONE;
    if (e) return fail_value(s, e);
  } else {
    /* [T, V] one-hots summed over T */
    poot_value vid = iota(s, POOT_DTYPE_I32, shape2(T, V), 1);
    poot_value add = cvt(s, bin(s, POOT_OP_EQ, vid, cols_of(s, t1, T, V)), POOT_DTYPE_I32);
    poot_value leave = bin(s, POOT_OP_AND, bin(s, POOT_OP_EQ, vid, cols_of(s, old, T, V)),
                           cols_of(s, valid, T, V));
    poot_value delta = bin(s, POOT_OP_SUB, add, cvt(s, leave, POOT_DTYPE_I32));
    poot_value dsum = reduce(s, delta, POOT_REDUCE_SUM, 0, POOT_DTYPE_I32);
    counts_new = bin(s, POOT_OP_ADD, counts, dsum);
  }
  set_state(s, counts, counts_new);
  poot_value nh;
  if (s->st) return POOT_VALUE_NONE;
  e = poot_graph_dynamic_update_slice(s->g, hist, t1, &p0, POOT_TRAP_NONE, &nh);
  if (e) return fail_value(s, e);
  set_state(s, hist, nh);
  return counts_new;
}

/* ------------------------------------------------------ the sampler */

/* llama.cpp's penalties of logits v seen cnt times (f32[sh]; parameters 4,
 * 5, 6 of fp: repetition, presence, frequency): v · r where v ≤ 0, else
 * v / r, less cnt · frequency + presence. */
static poot_value penalized(sb *s, poot_value v, poot_value cnt, poot_value fp, poot_shape sh) {
  poot_value rp = param_f(s, fp, 4, sh), pres = param_f(s, fp, 5, sh);
  poot_value freq = param_f(s, fp, 6, sh);
  poot_value neg = bin(s, POOT_OP_LE, v, bcast(s, fconst(s, 0.0), sh));
  poot_value l = sel(s, neg, bin(s, POOT_OP_MUL, v, rp), bin(s, POOT_OP_DIV, v, rp));
  poot_value sub =
      bin(s, POOT_OP_ADD, bin(s, POOT_OP_MUL, cvt(s, cnt, POOT_DTYPE_F32), freq), pres);
  return bin(s, POOT_OP_SUB, l, sub);
}

/* y = logits after the mask, the logit bias and the penalties (f32[V]);
 * counts: the history's counts after this step's tokens. */
static poot_value adjusted(sb *s, poot_value x, uint32_t kind, poot_value fp, poot_value counts) {
  const int64_t V = s->V;
  const poot_shape sv = shape1(V);
  poot_value y = x, ninf = bcast(s, fconst(s, -INFINITY), sv);
  if (kind & POOT_SAMPLER_MASK) {
    int64_t W = (V + 31) / 32;
    poot_value mask = slot(s, "sampler.mask", POOT_DTYPE_U32, W);
    poot_value v = iota(s, POOT_DTYPE_U32, sv, 0), word, bit;
    poot_value w = bin(s, POOT_OP_SHR, v, bcast(s, iconst(s, POOT_DTYPE_U32, 5), sv));
    if (s->st) return POOT_VALUE_NONE;
    poot_status e = poot_graph_gather(s->g, mask, w, 0, 0, POOT_TRAP_NONE, &word);
    if (e) return fail_value(s, e);
    poot_value sh = bin(s, POOT_OP_AND, v, bcast(s, iconst(s, POOT_DTYPE_U32, 31), sv));
    bit = bin(s, POOT_OP_AND, bin(s, POOT_OP_SHR, word, sh),
              bcast(s, iconst(s, POOT_DTYPE_U32, 1), sv));
    y = sel(s, bin(s, POOT_OP_NE, bit, bcast(s, iconst(s, POOT_DTYPE_U32, 0), sv)), y, ninf);
  }
  if ((kind & POOT_SAMPLER_LOGIT_BIAS) && s->B == 0) {
    /* y + the dense bias (zero where the list names no token): the list is
     * scattered into the state once per request by the BIAS entry, so a step
     * runs no scatter (whose one thread per entry checks every later entry
     * for a duplicate: 300 dependent loads) and no copy of y for it. */
    y = bin(s, POOT_OP_ADD, y, state(s, "sampler.bias_dense", POOT_DTYPE_F32, V));
  } else if (kind & POOT_SAMPLER_LOGIT_BIAS) {
    const int64_t NB = POOT_SAMPLING_MAX_BIAS;
    poot_value ids = slot(s, "sampler.bias_id", POOT_DTYPE_I32, NB);
    poot_value vals = slot(s, "sampler.bias", POOT_DTYPE_F32, NB);
    /* y[id] += bias as a scatter of y[id] + bias (ids are distinct; the
     * padding's -1 gathers y[0] and its update is skipped): one thread per
     * entry (docs/sampling.md, "How the suffix stays small"). */
    poot_value cur, o;
    if (s->st) return POOT_VALUE_NONE;
    poot_status e = poot_graph_gather(s->g, y, ids, 0, 0, POOT_TRAP_NONE, &cur);
    if (e) return fail_value(s, e);
    poot_value upd = bin(s, POOT_OP_ADD, cur, vals);
    if (s->st) return POOT_VALUE_NONE;
    if ((e = poot_graph_scatter_update(s->g, y, ids, upd, 0, POOT_TRAP_NONE, &o)))
      return fail_value(s, e);
    y = o;
  }
  if ((kind & POOT_SAMPLER_PENALTIES) && s->B > 0) {
    /* Row mode: the row's window as a list of distinct ids and their counts
     * (the host's, from the request's history; padding names token -1),
     * penalized as the dense form below does each seen token (the same f32
     * operations), written back by a scatter of P elements: a row holds
     * another sequence at every step, so no per-sequence state is kept. */
    const poot_shape sp = shape1(s->P);
    poot_value ids = slot(s, "sampler.pen_id", POOT_DTYPE_I32, s->P);
    poot_value cnt = slot(s, "sampler.pen_n", POOT_DTYPE_I32, s->P), cur, o;
    if (s->st) return POOT_VALUE_NONE;
    poot_status e = poot_graph_gather(s->g, y, ids, 0, 0, POOT_TRAP_NONE, &cur);
    if (e) return fail_value(s, e);
    poot_value upd = penalized(s, cur, cnt, fp, sp);
    if (s->st) return POOT_VALUE_NONE;
    if ((e = poot_graph_scatter_update(s->g, y, ids, upd, 0, POOT_TRAP_NONE, &o)))
      return fail_value(s, e);
    y = o;
  } else if (kind & POOT_SAMPLER_PENALTIES) {
    poot_value seen = bin(s, POOT_OP_GT, counts, bcast(s, iconst(s, POOT_DTYPE_I32, 0), sv));
    y = sel(s, seen, penalized(s, y, counts, fp, sv), y);
  }
  return y;
}

/* The max of x[n] where alive, as a scalar (-inf when none is). */
static poot_value alive_max(sb *s, poot_value x, poot_value alive, int64_t n) {
  poot_value ninf = bcast(s, fconst(s, -INFINITY), shape1(n));
  return reduce(s, sel(s, alive, x, ninf), POOT_REDUCE_MAX, 0, POOT_DTYPE_F32);
}

/* p[n] = softmax over the alive entries (0 elsewhere) at temperature 1. */
static poot_value alive_softmax(sb *s, poot_value x, poot_value alive, int64_t n) {
  poot_shape sn = shape1(n);
  poot_value m = bcast(s, alive_max(s, x, alive, n), sn);
  poot_value e =
      sel(s, alive, un(s, POOT_OP_EXP, bin(s, POOT_OP_SUB, x, m)), bcast(s, fconst(s, 0.0), sn));
  poot_value z = bcast(s, reduce(s, e, POOT_REDUCE_SUM, 0, POOT_DTYPE_F32), sn);
  return bin(s, POOT_OP_DIV, e, z);
}

static poot_value cumsum(sb *s, poot_value x) {
  poot_value o;
  SB_CALL(s, poot_graph_cumsum(s->g, x, 0, POOT_DTYPE_F32, &o));
  return o;
}

/* The exclusive prefix of an inclusive scan c[n]: 0, c0, c1, …, c[n-2]. */
static poot_value exclusive(sb *s, poot_value c, int64_t n) {
  poot_value head, o;
  int64_t st[1] = {0}, lim[1] = {n - 1}, lo[1] = {1}, hi[1] = {0};
  SB_CALL(s, poot_graph_slice(s->g, c, st, lim, NULL, &head));
  poot_value z = fconst(s, 0.0);
  SB_CALL(s, poot_graph_pad(s->g, head, z, lo, hi, NULL, &o));
  return o;
}

static poot_value gather1(sb *s, poot_value table, poot_value idx) {
  poot_value o;
  SB_CALL(s, poot_graph_gather(s->g, table, idx, 0, 0, POOT_TRAP_NONE, &o));
  return o;
}

/* The permutation of [n] sorting `key` larger first, ties to the lower
 * index (top_k's order); *out_sorted the keys in that order. */
static poot_value sort_perm(sb *s, poot_value key, int64_t n, poot_value *out_sorted) {
  poot_value v, i;
  *out_sorted = POOT_VALUE_NONE;
  SB_CALL(s, poot_graph_top_k(s->g, key, n, &v, &i));
  *out_sorted = v;
  return i;
}

/* Typical-p on the sorted candidates cv[n] (alive mask): keep while the
 * mass before a token, in order of |-log p - H| (ties: earlier rank), is ≤ p. */
static poot_value typical(sb *s, poot_value cv, poot_value alive, poot_value fp, int64_t n) {
  poot_shape sn = shape1(n);
  poot_value p = alive_softmax(s, cv, alive, n);
  poot_value zero = bcast(s, fconst(s, 0.0), sn);
  poot_value pos = bin(s, POOT_OP_GT, p, zero);
  poot_value lp = un(s, POOT_OP_LOG, sel(s, pos, p, bcast(s, fconst(s, 1.0), sn)));
  poot_value ent = un(
      s, POOT_OP_NEG,
      reduce(s, sel(s, pos, bin(s, POOT_OP_MUL, p, lp), zero), POOT_REDUCE_SUM, 0, POOT_DTYPE_F32));
  poot_value shift =
      un(s, POOT_OP_ABS, bin(s, POOT_OP_SUB, un(s, POOT_OP_NEG, lp), bcast(s, ent, sn)));
  shift = sel(s, pos, shift, bcast(s, fconst(s, INFINITY), sn));
  /* sorted by (shift, rank): top_k of -shift; the mass before each in that
   * order keeps a prefix (mass-before ≤ p grows with the position), so a
   * candidate is kept when it sorts before the first one cut, (cs, cr) */
  poot_value ks, perm = sort_perm(s, un(s, POOT_OP_NEG, shift), n, &ks);
  poot_value mass = exclusive(s, cumsum(s, gather1(s, p, perm)), n);
  poot_value keep = bin(s, POOT_OP_LE, mass, param_f(s, fp, 3, sn));
  poot_value m = reduce(s, cvt(s, keep, POOT_DTYPE_I32), POOT_REDUCE_SUM, 0, POOT_DTYPE_I32);
  poot_value mc = bin(s, POOT_OP_MIN, m, iconst(s, POOT_DTYPE_I32, n - 1)), cs, cr;
  if (s->st) return POOT_VALUE_NONE;
  int64_t one = 1;
  poot_status e = poot_graph_dynamic_slice(s->g, ks, &mc, &one, POOT_TRAP_NONE, &cs);
  if (!e) e = poot_graph_dynamic_slice(s->g, perm, &mc, &one, POOT_TRAP_NONE, &cr);
  if (e) return fail_value(s, e);
  cs = bcast(s, un(s, POOT_OP_NEG, cs), sn);
  cr = bcast(s, cr, sn);
  poot_value ii = iota(s, POOT_DTYPE_I32, sn, 0);
  poot_value before =
      bin(s, POOT_OP_OR, bin(s, POOT_OP_LT, shift, cs),
          bin(s, POOT_OP_AND, bin(s, POOT_OP_EQ, shift, cs), bin(s, POOT_OP_LT, ii, cr)));
  poot_value all = bcast(s, bin(s, POOT_OP_GE, m, iconst(s, POOT_DTYPE_I32, n)), sn);
  return bin(s, POOT_OP_AND, alive, bin(s, POOT_OP_OR, all, before));
}

/* The max of the alive x[n] as a scalar: mx when given (the candidates'
 * first value, when the alive ones are a prefix of the sorted candidates),
 * else a reduction. */
static poot_value max_or(sb *s, poot_value mx, poot_value x, poot_value alive, int64_t n) {
  return mx != POOT_VALUE_NONE ? mx : alive_max(s, x, alive, n);
}

/* Top-p on the sorted candidates: keep while the mass before a token is < p,
 * as Σ_{j<i} e_j < p·z with e = exp(x - max) (0 where dead) and one scan of e.
 * z (a scalar, or NONE): the sum of exp(x - max) over the whole vocabulary
 * the candidates came from; NONE: over the candidates (the scan's last). */
static poot_value top_p(sb *s, poot_value cv, poot_value alive, poot_value fp, int64_t n,
                        poot_value mx, poot_value z) {
  poot_shape sn = shape1(n);
  poot_value m = bcast(s, max_or(s, mx, cv, alive, n), sn);
  poot_value e =
      sel(s, alive, un(s, POOT_OP_EXP, bin(s, POOT_OP_SUB, cv, m)), bcast(s, fconst(s, 0.0), sn));
  poot_value c = cumsum(s, e);
  if (z == POOT_VALUE_NONE) z = elem(s, c, n - 1);
  poot_value mass = exclusive(s, c, n);
  poot_value cut = bin(s, POOT_OP_MUL, param_f(s, fp, 1, sn), bcast(s, z, sn));
  return bin(s, POOT_OP_AND, alive, bin(s, POOT_OP_LT, mass, cut));
}

/* Min-p: keep logit >= max + log(min_p) (log(min_p) is parameter 2). */
static poot_value min_p(sb *s, poot_value cv, poot_value alive, poot_value fp, int64_t n,
                        poot_value mx) {
  poot_shape sn = shape1(n);
  poot_value floor =
      bin(s, POOT_OP_ADD, bcast(s, max_or(s, mx, cv, alive, n), sn), param_f(s, fp, 2, sn));
  return bin(s, POOT_OP_AND, alive, bin(s, POOT_OP_GE, cv, floor));
}

/* Tempered weights of the alive candidates: exp((x - max) / T), 0 elsewhere. */
static poot_value weights(sb *s, poot_value x, poot_value alive, poot_value fp, int64_t n,
                          poot_value mx) {
  poot_shape sn = shape1(n);
  poot_value m = bcast(s, max_or(s, mx, x, alive, n), sn);
  poot_value t = bin(s, POOT_OP_DIV, bin(s, POOT_OP_SUB, x, m), param_f(s, fp, 0, sn));
  return sel(s, alive, un(s, POOT_OP_EXP, t), bcast(s, fconst(s, 0.0), sn));
}

/* The draw among candidates (ids ci[n], weights w[n], alive): the first id
 * (in id order) whose cumulative weight passes u·Σw; when rounding leaves
 * none, the largest alive id. The candidates are put in id order by a
 * top_k of -id (one dispatch at n ≤ 2,048), the cumulative weights are a
 * scan, Σw its last. Returns an i32 scalar. */
static poot_value draw_candidates(sb *s, poot_value ci, poot_value w, poot_value alive,
                                  poot_value u, int64_t n) {
  poot_shape sn = shape1(n);
  poot_value nid, perm = sort_perm(s, un(s, POOT_OP_NEG, ci), n, &nid);
  poot_value ws = gather1(s, w, perm), as = gather1(s, alive, perm);
  poot_value cum = cumsum(s, ws);
  poot_value target = bin(s, POOT_OP_MUL, u, elem(s, cum, n - 1));
  poot_value past = bin(s, POOT_OP_AND, as, bin(s, POOT_OP_GT, cum, bcast(s, target, sn)));
  poot_value big = bcast(s, iconst(s, POOT_DTYPE_I32, INT32_MAX), sn);
  poot_value ids = un(s, POOT_OP_NEG, nid);
  poot_value first = reduce(s, sel(s, past, ids, big), POOT_REDUCE_MIN, 0, POOT_DTYPE_I32);
  poot_value last = reduce(s, sel(s, alive, ci, bcast(s, iconst(s, POOT_DTYPE_I32, -1), sn)),
                           POOT_REDUCE_MAX, 0, POOT_DTYPE_I32);
  poot_value none = bin(s, POOT_OP_EQ, first, iconst(s, POOT_DTYPE_I32, INT32_MAX));
  return sel(s, none, last, first);
}

/* The draw over the whole vocabulary in id order, in two levels: chunks of
 * L weights (a prefix sum over the chunk sums picks the chunk), then the
 * prefix inside the chunk. Returns an i32 scalar. */
static poot_value draw_vocab(sb *s, poot_value w, poot_value alive, poot_value u) {
  const int64_t V = s->V;
  int64_t L = 64;
  while (L < 4096 && L * L < V) L *= 2;
  const int64_t C = (V + L - 1) / L;
  poot_value wp = w, ap = alive;
  if (C * L != V) {
    int64_t lo[1] = {0}, hi[1] = {C * L - V};
    if (s->st) return POOT_VALUE_NONE;
    poot_value z = fconst(s, 0.0), f = POOT_VALUE_NONE, pa;
    poot_status e = poot_graph_const_int(s->g, POOT_DTYPE_BOOL, 0, &f);
    if (!e) e = poot_graph_pad(s->g, w, z, lo, hi, NULL, &pa);
    if (!e) wp = pa, e = poot_graph_pad(s->g, alive, f, lo, hi, NULL, &ap);
    if (e) return fail_value(s, e);
  }
  poot_value grid = reshape(s, wp, shape2(C, L)), agrid = reshape(s, ap, shape2(C, L));
  poot_value csum = reduce(s, grid, POOT_REDUCE_SUM, 1, POOT_DTYPE_F32);
  poot_value cum, lcum, row, arow;
  if (s->st) return POOT_VALUE_NONE;
  poot_status e = poot_graph_cumsum(s->g, csum, 0, POOT_DTYPE_F32, &cum);
  if (e) return fail_value(s, e);
  poot_value total = elem(s, cum, C - 1);
  poot_value target = bin(s, POOT_OP_MUL, u, total);
  /* the chunk: how many chunk prefixes stay at or below the target */
  poot_value le = cvt(s, bin(s, POOT_OP_LE, cum, bcast(s, target, shape1(C))), POOT_DTYPE_I32);
  poot_value c = reduce(s, le, POOT_REDUCE_SUM, 0, POOT_DTYPE_I32);
  c = bin(s, POOT_OP_MIN, c, iconst(s, POOT_DTYPE_I32, C - 1));
  poot_value base = fconst(s, 0.0);
  {
    poot_value cm1 = bin(s, POOT_OP_MAX, bin(s, POOT_OP_SUB, c, iconst(s, POOT_DTYPE_I32, 1)),
                         iconst(s, POOT_DTYPE_I32, 0));
    poot_value prev;
    if (s->st) return POOT_VALUE_NONE;
    int64_t one = 1;
    e = poot_graph_dynamic_slice(s->g, cum, &cm1, &one, POOT_TRAP_NONE, &prev);
    if (e) return fail_value(s, e);
    poot_value has = bin(s, POOT_OP_GT, c, iconst(s, POOT_DTYPE_I32, 0));
    base = sel(s, has, reshape(s, prev, (poot_shape){.rank = 0}), base);
  }
  poot_value z0 = iconst(s, POOT_DTYPE_I32, 0), starts[2] = {c, z0};
  int64_t sz[2] = {1, L};
  if (s->st) return POOT_VALUE_NONE;
  e = poot_graph_dynamic_slice(s->g, grid, starts, sz, POOT_TRAP_NONE, &row);
  if (!e) e = poot_graph_dynamic_slice(s->g, agrid, starts, sz, POOT_TRAP_NONE, &arow);
  if (e) return fail_value(s, e);
  row = reshape(s, row, shape1(L));
  arow = reshape(s, arow, shape1(L));
  if (s->st) return POOT_VALUE_NONE;
  e = poot_graph_cumsum(s->g, row, 0, POOT_DTYPE_F32, &lcum);
  if (e) return fail_value(s, e);
  poot_value past = bin(s, POOT_OP_AND, arow,
                        bin(s, POOT_OP_GT, bin(s, POOT_OP_ADD, bcast(s, base, shape1(L)), lcum),
                            bcast(s, target, shape1(L))));
  poot_value j = iota(s, POOT_DTYPE_I32, shape1(L), 0);
  poot_value first = reduce(s, sel(s, past, j, bcast(s, iconst(s, POOT_DTYPE_I32, L), shape1(L))),
                            POOT_REDUCE_MIN, 0, POOT_DTYPE_I32);
  poot_value id = bin(s, POOT_OP_ADD, bin(s, POOT_OP_MUL, c, iconst(s, POOT_DTYPE_I32, L)), first);
  poot_value vid = iota(s, POOT_DTYPE_I32, shape1(V), 0);
  poot_value last =
      reduce(s, sel(s, alive, vid, bcast(s, iconst(s, POOT_DTYPE_I32, -1), shape1(V))),
             POOT_REDUCE_MAX, 0, POOT_DTYPE_I32);
  poot_value none = bin(s, POOT_OP_EQ, first, iconst(s, POOT_DTYPE_I32, L));
  return sel(s, none, last, id);
}

/* The drawn id (i32 scalar) from the adjusted logits y[V]. */
static poot_value drawn(sb *s, poot_value y, uint32_t kind, poot_value fp, poot_value ip) {
  const int64_t V = s->V;
  poot_value seed = slot(s, "sampler.seed", POOT_DTYPE_U32, 2), r;
  /* The counter: a state the step advances (one sequence), or in row mode
   * the slot sampler.ctr the host writes per row (the row's request draws
   * so far, and 0: rows change sequences from step to step). */
  poot_value step = s->B ? slot(s, "sampler.ctr", POOT_DTYPE_U32, 2)
                         : state(s, "sampler.step", POOT_DTYPE_U32, 2);
  if (s->st) return POOT_VALUE_NONE;
  poot_status e = NULL;
  if (!s->B) {
    /* step[0] += 1 as a scatter of that element over its gather, which the
     * planner writes into the state in place (a read-modify-write), and the
     * draw reads the new value minus one: no copy of the counter back into
     * its state after the draw, which would be a dispatch of its own at the
     * end of the step. */
    poot_value at, cur, nstep, counter;
    int64_t one = 1, two = 2;
    int32_t at_word = 0;
    uint32_t dec_words[2] = {1, 0};
    poot_tensor at_t = {
        .type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &at_word, .size = sizeof at_word};
    poot_tensor dec_t = {.type = poot_type_make(POOT_DTYPE_U32, 1, &two),
                         .data = dec_words,
                         .size = sizeof dec_words};
    poot_value dec;
    e = poot_graph_add_const(s->g, &at_t, &at);
    if (!e) e = poot_graph_add_const(s->g, &dec_t, &dec);
    if (!e) e = poot_graph_gather(s->g, step, at, 0, 0, POOT_TRAP_NONE, &cur);
    poot_value upd =
        e ? POOT_VALUE_NONE
          : bin(s, POOT_OP_ADD, cur, reshape(s, iconst(s, POOT_DTYPE_U32, 1), shape1(1)));
    if (!e && s->st) return POOT_VALUE_NONE;
    if (!e) e = poot_graph_scatter_update(s->g, step, at, upd, 0, POOT_TRAP_NONE, &nstep);
    if (e) return fail_value(s, e);
    set_state(s, step, nstep);
    counter = bin(s, POOT_OP_SUB, nstep, dec);
    if (s->st) return POOT_VALUE_NONE;
    step = counter;
  }
  poot_type ut = poot_type_make(POOT_DTYPE_F32, 1, (int64_t[]){1});
  e = poot_graph_rng(s->g, seed, step, &ut, POOT_RNG_UNIFORM, &r);
  if (e) return fail_value(s, e);
  poot_value u = reshape(s, r, (poot_shape){.rank = 0});
  const uint32_t sorting = POOT_SAMPLER_TOP_K | POOT_SAMPLER_TOP_P | POOT_SAMPLER_TYPICAL_P;
  if (!(kind & sorting)) {
    poot_value alive = bin(s, POOT_OP_GT, y, bcast(s, fconst(s, -INFINITY), shape1(V)));
    if (kind & POOT_SAMPLER_MIN_P) alive = min_p(s, y, alive, fp, V, POOT_VALUE_NONE);
    return draw_vocab(s, weights(s, y, alive, fp, V, POOT_VALUE_NONE), alive, u);
  }
  int64_t K = V < POOT_SAMPLING_MAX_TOP_K ? V : POOT_SAMPLING_MAX_TOP_K;
  if (s->K > 0 && s->K < K) K = s->K;
  poot_value cv, ci;
  if (s->st) return POOT_VALUE_NONE;
  if ((e = poot_graph_top_k(s->g, y, K, &cv, &ci))) return fail_value(s, e);
  poot_shape sk = shape1(K);
  poot_value rank = iota(s, POOT_DTYPE_I32, sk, 0);
  poot_value alive = bin(s, POOT_OP_AND, bin(s, POOT_OP_LT, rank, bcast(s, elem(s, ip, 0), sk)),
                         bin(s, POOT_OP_GT, cv, bcast(s, fconst(s, -INFINITY), sk)));
  /* Without typical-p every narrowing keeps a prefix of the sorted
   * candidates holding the first: the max of the alive ones is cv[0]. */
  poot_value mx = POOT_VALUE_NONE;
  if (kind & POOT_SAMPLER_TYPICAL_P)
    alive = typical(s, cv, alive, fp, K);
  else
    mx = elem(s, cv, 0);
  if (kind & POOT_SAMPLER_TOP_P) {
    /* top-p over the whole vocabulary: the mass of the full softmax, whose
     * max is cv[0] */
    poot_value z = POOT_VALUE_NONE;
    if (!(kind & (POOT_SAMPLER_TOP_K | POOT_SAMPLER_TYPICAL_P))) {
      poot_shape sv = shape1(V);
      poot_value all = bin(s, POOT_OP_GT, y, bcast(s, fconst(s, -INFINITY), sv));
      poot_value m = bcast(s, mx, sv);
      poot_value e =
          sel(s, all, un(s, POOT_OP_EXP, bin(s, POOT_OP_SUB, y, m)), bcast(s, fconst(s, 0.0), sv));
      z = reduce(s, e, POOT_REDUCE_SUM, 0, POOT_DTYPE_F32);
    }
    alive = top_p(s, cv, alive, fp, K, mx, z);
  }
  if (kind & POOT_SAMPLER_MIN_P) alive = min_p(s, cv, alive, fp, K, mx);
  return draw_candidates(s, ci, weights(s, cv, alive, fp, K, mx), alive, u, K);
}

/* The chosen id's logprob and the top-n (ids, logprobs) over the raw logits
 * x[V]: three i32 values (logprob bits [1], ids [n], logprob bits [n]). */
static void logprobs(sb *s, poot_value x, poot_value id, poot_value out[3]) {
  const int64_t V = s->V, n = V < POOT_SAMPLING_MAX_PROBS ? V : POOT_SAMPLING_MAX_PROBS;
  poot_shape sv = shape1(V);
  poot_value mx = reduce(s, x, POOT_REDUCE_MAX, 0, POOT_DTYPE_F32);
  poot_value z = reduce(s, un(s, POOT_OP_EXP, bin(s, POOT_OP_SUB, x, bcast(s, mx, sv))),
                        POOT_REDUCE_SUM, 0, POOT_DTYPE_F32);
  poot_value lse = bin(s, POOT_OP_ADD, mx, un(s, POOT_OP_LOG, z)), xi, tv, ti;
  if (s->st) return;
  int64_t one = 1;
  poot_status e = poot_graph_dynamic_slice(s->g, x, &id, &one, POOT_TRAP_NONE, &xi);
  if (!e) e = poot_graph_top_k(s->g, x, n, &tv, &ti);
  if (e) {
    fail_value(s, e);
    return;
  }
  out[0] = bits(s, bin(s, POOT_OP_SUB, xi, bcast(s, lse, shape1(1))), POOT_DTYPE_I32);
  out[1] = ti;
  out[2] = bits(s, bin(s, POOT_OP_SUB, tv, bcast(s, lse, shape1(n))), POOT_DTYPE_I32);
}

int64_t poot__driver_sort_width(uint32_t kind, int32_t k, int64_t vocab) {
  if (!(kind & POOT_SAMPLER_DRAW) || !(kind & POOT_SAMPLER_TOP_K)) return 0;
  const int64_t most = vocab < POOT_SAMPLING_MAX_TOP_K ? vocab : POOT_SAMPLING_MAX_TOP_K;
  int64_t K = 64;
  while (K < k) K *= 2;
  return K < most ? K : 0;
}

uint32_t poot__driver_sample_words(uint32_t kind, int64_t vocab) {
  int64_t n = vocab < POOT_SAMPLING_MAX_PROBS ? vocab : POOT_SAMPLING_MAX_PROBS;
  return DRIVER_SAMPLE_HEAD + ((kind & POOT_SAMPLER_LOGPROBS) ? (uint32_t)(2 * n) : 0);
}

/* How many elements of the bool row b[V] are true, as an i32 scalar. A
 * row longer than 4,096 is counted in chunks of 1,024 first: a reduction of
 * one output is computed by the workgroup of the kernel that reads it (the
 * sampler's output, one workgroup: 501 dependent loads a thread over
 * 128,256 ids), while the chunks' counts spread over a workgroup each, beside
 * the other work that follows the head. */
static poot_value count_true(sb *s, poot_value b) {
  const int64_t V = s->V, L = 1024;
  poot_value n = cvt(s, b, POOT_DTYPE_I32);
  if (V <= 4 * L) return reduce(s, n, POOT_REDUCE_SUM, 0, POOT_DTYPE_I32);
  const int64_t C = (V + L - 1) / L;
  if (C * L != V) {
    int64_t lo[1] = {0}, hi[1] = {C * L - V};
    poot_value z = iconst(s, POOT_DTYPE_I32, 0), p;
    if (s->st) return POOT_VALUE_NONE;
    poot_status e = poot_graph_pad(s->g, n, z, lo, hi, NULL, &p);
    if (e) return fail_value(s, e);
    n = p;
  }
  poot_value chunks = reduce(s, reshape(s, n, shape2(C, L)), POOT_REDUCE_SUM, 1, POOT_DTYPE_I32);
  return reduce(s, chunks, POOT_REDUCE_SUM, 0, POOT_DTYPE_I32);
}

/* The sample role's words of one row of logits into *out: i32[words] =
 * {id, finite, any survivor, logprob bits, top ids..., top logprob
 * bits...}. */
static poot_status sample_words(sb *s, poot_value logits, uint32_t kind, poot_value ip,
                                poot_value counts, poot_value *out) {
  const int64_t V = s->V;
  poot_shape sv = shape1(V);
  poot_value x = reshape(s, logits, sv);
  poot_value fp = slot(s, "sampler.f", POOT_DTYPE_F32, DRIVER_SAMPLER_FPARAMS);
  /* finite: no NaN and no +inf (a -inf logit is a banned token, as the
   * reference sampler takes it) */
  poot_value bad = bin(s, POOT_OP_OR, bin(s, POOT_OP_NE, x, x),
                       bin(s, POOT_OP_EQ, x, bcast(s, fconst(s, INFINITY), sv)));
  poot_value nbad = count_true(s, bad);
  poot_value finite =
      cvt(s, bin(s, POOT_OP_EQ, nbad, iconst(s, POOT_DTYPE_I32, 0)), POOT_DTYPE_I32);
  poot_value y = adjusted(s, x, kind, fp, counts);
  poot_value id;
  if (kind & POOT_SAMPLER_DRAW) {
    id = drawn(s, y, kind, fp, ip);
  } else {
    if (s->st) return s->st;
    POOT_TRY(poot__driver_argmax(s->g, reshape(s, y, shape2(1, V)), V, &id));
    id = reshape(s, id, (poot_shape){.rank = 0});
  }
  /* any survivor: the chosen token's adjusted logit is finite (a draw or an
   * argmax over only banned tokens lands on one of them) — one element, not a
   * second pass over the vocabulary */
  poot_value yid;
  if (s->st) return s->st;
  int64_t one = 1;
  POOT_TRY(poot_graph_dynamic_slice(s->g, y, &id, &one, POOT_TRAP_NONE, &yid));
  poot_value any =
      cvt(s, bin(s, POOT_OP_GT, yid, bcast(s, fconst(s, -INFINITY), shape1(1))), POOT_DTYPE_I32);
  poot_value parts[7] = {reshape(s, id, shape1(1)), reshape(s, finite, shape1(1)), any,
                         POOT_VALUE_NONE};
  uint32_t np = 4;
  if (kind & POOT_SAMPLER_LOGPROBS) {
    poot_value lp[3] = {POOT_VALUE_NONE, POOT_VALUE_NONE, POOT_VALUE_NONE};
    logprobs(s, x, id, lp);
    parts[3] = lp[0], parts[4] = lp[1], parts[5] = lp[2];
    np = 6;
  } else {
    parts[3] = reshape(s, iconst(s, POOT_DTYPE_I32, 0), shape1(1));
  }
  if (s->st) return s->st;
  return poot_graph_concat(s->g, np, parts, 0, out);
}

static poot_status sample_suffix(sb *s, poot_value logits, uint32_t kind, poot_value ip,
                                 poot_value counts) {
  poot_value out;
  POOT_TRY(sample_words(s, logits, kind, ip, counts, &out));
  POOT_TRY(poot_graph_set_output(s->g, out));
  return poot_graph_verify(s->g);
}

/* Row mode's logprobs: each row's words as the B = 1 suffix writes them
 * (logprobs() above: the chosen id's log-softmax over the raw logits, then
 * the top n = min(V, 20) ids and logprobs), computed over the logits
 * f32[B, V] at once from the chosen ids i32[B], written over the heads
 * i32[B, 4] (each row's {id, finite, any, 0}) padded to *out = i32[B, 4 +
 * 2n]. Per row, as the B = 1 suffix does, the output's kernel would read
 * more than 64 temporaries at B = 8. The heads' kernel still reads a few
 * per row and one more to write (33 offsets at B = 8 with a logit bias:
 * past a device with 128 bytes of push constants, which then answers
 * UNSUPPORTED for that entry; lavapipe and the catalogue's targets at B =
 * 4 fit). */
static poot_status rows_logprobs(sb *s, poot_value logits, poot_value heads, poot_value id,
                                 poot_value *out) {
  const int64_t B = s->B, V = s->V, n = V < POOT_SAMPLING_MAX_PROBS ? V : POOT_SAMPLING_MAX_PROBS;
  const int64_t W = DRIVER_SAMPLE_HEAD + 2 * n;
  poot_graph *g = s->g;
  poot_value zero = iconst(s, POOT_DTYPE_I32, 0), three = iconst(s, POOT_DTYPE_I32, 3);
  poot_value mx = reduce(s, logits, POOT_REDUCE_MAX, 1, POOT_DTYPE_F32);
  poot_value z = reduce(s, un(s, POOT_OP_EXP, bin(s, POOT_OP_SUB, logits, cols_of(s, mx, B, V))),
                        POOT_REDUCE_SUM, 1, POOT_DTYPE_F32);
  poot_value lse = bin(s, POOT_OP_ADD, mx, un(s, POOT_OP_LOG, z)); /* [B] */
  /* the chosen id's logit: flat[b·V + id_b], the id clamped as the B = 1
   * suffix's dynamic slice clamps it */
  poot_shape sb1 = shape1(B);
  id = bin(s, POOT_OP_MAX, bcast(s, zero, sb1),
           bin(s, POOT_OP_MIN, id, bcast(s, iconst(s, POOT_DTYPE_I32, V - 1), sb1)));
  poot_value at = bin(s, POOT_OP_ADD, id,
                      bin(s, POOT_OP_MUL, iota(s, POOT_DTYPE_I32, sb1, 0),
                          bcast(s, iconst(s, POOT_DTYPE_I32, V), sb1)));
  poot_value flat = reshape(s, logits, shape1(B * V)), xi, tv, ti, blk, o1;
  if (s->st) return s->st;
  POOT_TRY(poot_graph_gather(g, flat, at, 0, 0, POOT_TRAP_NONE, &xi));
  POOT_TRY(poot_graph_top_k(g, logits, n, &tv, &ti));
  poot_value lp = bits(s, reshape(s, bin(s, POOT_OP_SUB, xi, lse), shape2(B, 1)), POOT_DTYPE_I32);
  poot_value tb = bits(s, bin(s, POOT_OP_SUB, tv, cols_of(s, lse, B, n)), POOT_DTYPE_I32);
  if (s->st) return s->st;
  poot_value parts[3] = {lp, ti, tb}, at3[2] = {zero, three};
  POOT_TRY(poot_graph_concat(g, 3, parts, 1, &blk));
  int64_t lo[2] = {0, 0}, hi[2] = {0, W - DRIVER_SAMPLE_HEAD};
  POOT_TRY(poot_graph_pad(g, heads, zero, lo, hi, NULL, &o1));
  return poot_graph_dynamic_update_slice(g, o1, blk, at3, POOT_TRAP_NONE, out);
}

poot_status poot__driver_append_sampler_rows(poot_graph *g, uint32_t kind, int64_t pen_width) {
  poot_value logits = poot_graph_output(g);
  const poot_type *lt = poot_graph_value_type(g, logits);
  if (!lt || lt->dtype != POOT_DTYPE_F32 || lt->shape.rank != 2)
    return poot_status_make(POOT_INTERNAL, "driver: the traced output is not f32[B, vocab]");
  if ((kind & POOT_SAMPLER_PENALTIES) && pen_width < 1)
    return poot_status_make(POOT_INTERNAL, "driver: a penalized row kind needs a window width");
  const int64_t B = lt->shape.dims[0], V = lt->shape.dims[1];
  poot_value *rows = poot_calloc((size_t)B, sizeof *rows),
             *ids = poot_calloc((size_t)B, sizeof *ids);
  if (!rows || !ids) {
    poot_free(rows);
    poot_free(ids);
    return OOM("sampler rows");
  }
  sb s = {.g = g, .st = NULL, .V = V, .B = B, .P = pen_width};
  poot_status st = NULL;
  /* Each row its head; the logprobs of every row at once after them
   * (rows_logprobs). */
  const uint32_t row_kind = kind & ~(uint32_t)POOT_SAMPLER_LOGPROBS;
  const uint32_t words = poot__driver_sample_words(row_kind, V);
  for (int64_t b = 0; b < B && !st; b++) {
    s.row = b;
    poot_value x, w;
    int64_t st0[2] = {b, 0}, lim[2] = {b + 1, V};
    st = poot_graph_slice(g, logits, st0, lim, NULL, &x);
    poot_value ip =
        st ? POOT_VALUE_NONE : slot(&s, "sampler.i", POOT_DTYPE_I32, DRIVER_SAMPLER_IPARAMS);
    if (!st && s.st) st = s.st, s.st = NULL;
    if (!st) st = sample_words(&s, x, row_kind, ip, POOT_VALUE_NONE, &w);
    if (!st) {
      poot_shape r1 = shape2(1, words);
      st = poot_graph_reshape(g, w, &r1, &rows[b]);
    }
    if (!st) { /* the row's id, its first word */
      int64_t i0[1] = {0}, i1[1] = {1};
      st = poot_graph_slice(g, w, i0, i1, NULL, &ids[b]);
    }
  }
  poot_value out, id;
  if (!st) st = poot_graph_concat(g, (uint32_t)B, rows, 0, &out);
  if (!st && (kind & POOT_SAMPLER_LOGPROBS)) {
    st = poot_graph_concat(g, (uint32_t)B, ids, 0, &id);
    if (!st) st = rows_logprobs(&s, logits, out, id, &out);
  }
  if (!st) st = poot_graph_set_output(g, out);
  if (!st) st = poot_graph_verify(g);
  poot_free(rows);
  poot_free(ids);
  return st;
}

poot_status poot__driver_append_sampler(poot_graph *g, const driver_sample_shape *sh) {
  poot_value logits = poot_graph_output(g);
  const poot_type *lt = poot_graph_value_type(g, logits);
  if (!lt || lt->dtype != POOT_DTYPE_F32 || lt->shape.rank != 2 || lt->shape.dims[0] != 1)
    return poot_status_make(POOT_INTERNAL, "driver: the traced output is not f32[1, vocab]");
  sb s = {.g = g, .st = NULL, .V = lt->shape.dims[1], .K = sh->sort_k};
  const bool pen = (sh->kind & POOT_SAMPLER_PENALTIES) != 0;
  const bool forward = sh->role == DRIVER_ROLE_FEED || sh->role == DRIVER_ROLE_FORWARD;
  poot_value ip = POOT_VALUE_NONE, counts = POOT_VALUE_NONE;
  if (!forward || pen) ip = slot(&s, "sampler.i", POOT_DTYPE_I32, DRIVER_SAMPLER_IPARAMS);
  if (pen && sh->role == DRIVER_ROLE_PICK)
    counts = state(&s, "sampler.counts", POOT_DTYPE_I32, s.V); /* FORWARD updated it */
  else if (pen)
    counts = history_update(&s, sh, ip);
  if (sh->role == DRIVER_ROLE_FORWARD) {
    /* The kept logits are logits + 0 (−0 becomes +0, equal in every later
     * use): a state written with the head's dot itself makes the planner
     * recompute that dot inline in each of its readers instead of running the
     * GEMV once (measured: 2 × 320 µs at Llama-3.2-1B on an H200). Written as
     * an update of the whole state at 0, which the planner stores into the
     * state's buffer in place (no temporary and no copy back). */
    poot_value kept = bin(&s, POOT_OP_ADD, reshape(&s, logits, shape1(s.V)),
                          bcast(&s, fconst(&s, 0.0), shape1(s.V)));
    poot_value kst = state(&s, "sampler.logits", POOT_DTYPE_F32, s.V),
               at0 = iconst(&s, POOT_DTYPE_I32, 0), upd;
    if (s.st) return s.st;
    POOT_TRY(poot_graph_dynamic_update_slice(g, kst, kept, &at0, POOT_TRAP_NONE, &upd));
    set_state(&s, kst, upd);
    /* The host reads nothing of FORWARD (PICK draws and checks the kept
     * logits; the step is queued): its output is two words from the token
     * slot, which the planner computes beside the first dispatch, not the
     * greedy suffix's argmax and finiteness (two passes over the vocabulary)
     * or a dispatch after the logits. */
    poot_value tok = find_slot(g, POOT_SLOT_TOKEN);
    if (tok == POOT_VALUE_NONE)
      return poot_status_make(POOT_INTERNAL, "sampler: the step has no token slot");
    poot_value parts[2] = {reshape(&s, tok, shape1(1)),
                           reshape(&s, iconst(&s, POOT_DTYPE_I32, 0), shape1(1))};
    poot_value out;
    if (s.st) return s.st;
    POOT_TRY(poot_graph_concat(g, 2, parts, 0, &out));
    POOT_TRY(poot_graph_set_output(g, out));
    return poot_graph_verify(g);
  }
  if (s.st) return s.st;
  if (forward) return poot__driver_append_greedy(g);
  return sample_suffix(&s, logits, sh->kind, ip, counts);
}

poot_status poot__driver_bias_graph(int64_t vocab, poot_graph **out_graph) {
  *out_graph = NULL;
  poot_graph *g = NULL;
  POOT_TRY(poot_graph_create(&g));
  sb s = {.g = g, .st = NULL, .V = vocab};
  const int64_t NB = POOT_SAMPLING_MAX_BIAS;
  poot_value ids = slot(&s, "sampler.bias_id", POOT_DTYPE_I32, NB);
  poot_value vals = slot(&s, "sampler.bias", POOT_DTYPE_F32, NB);
  poot_value dense = state(&s, "sampler.bias_dense", POOT_DTYPE_F32, vocab);
  poot_value zeros = bcast(&s, fconst(&s, 0.0), shape1(vocab)), nb;
  /* ids are distinct (the driver sums duplicates); the padding's -1 is out
   * of range, so its entry is skipped */
  poot_status st = s.st;
  if (!st) st = poot_graph_scatter_update(g, zeros, ids, vals, 0, POOT_TRAP_NONE, &nb);
  if (!st) {
    set_state(&s, dense, nb);
    st = s.st;
  }
  poot_value out = st ? POOT_VALUE_NONE : reshape(&s, elem(&s, ids, 0), shape1(1));
  if (!st) st = s.st;
  if (!st) st = poot_graph_set_output(g, out);
  if (!st) st = poot_graph_verify(g);
  if (st) {
    poot_graph_destroy(g);
    return st;
  }
  *out_graph = g;
  return NULL;
}

poot_status poot__driver_pick_graph(int64_t vocab, poot_graph **out_graph) {
  *out_graph = NULL;
  poot_graph *g = NULL;
  POOT_TRY(poot_graph_create(&g));
  poot_type t = poot_type_make(POOT_DTYPE_F32, 1, &vocab);
  poot_value lv, row;
  poot_shape sh = shape2(1, vocab);
  poot_status st = poot_graph_add_state(g, "sampler.logits", &t, &lv);
  if (!st) st = poot_graph_reshape(g, lv, &sh, &row);
  if (!st) st = poot_graph_set_output(g, row);
  if (st) {
    poot_graph_destroy(g);
    return st;
  }
  *out_graph = g;
  return NULL;
}
