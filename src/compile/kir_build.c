/* kir_build.c — the KIR-building helpers every emitter shares: a graph
 * value's type, constants and operators, the memo of emitted values,
 * multi-index arithmetic, bindings and temps, and the element loads and
 * stores of a value's storage (leaf, slot, temp or dense buffer). */
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

#define S(x) POOT_KIR_##x
#define OP(x) POOT_KIR_OP_##x

const poot_type *poot__cc_type(const pc_planner *pl, poot_value v) {
  return poot_graph_value_type(pl->g, v);
}

int64_t poot__cc_elems(const poot_shape *s) {
  int64_t n = 1;
  for (uint32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

poot_kir_scalar poot__cc_compute_scalar(poot_dtype dt) {
  switch (dt) {
    case POOT_DTYPE_F32:
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16:
      return S(F32);
    case POOT_DTYPE_I8:
    case POOT_DTYPE_I16:
    case POOT_DTYPE_I32:
      return S(I32);
    case POOT_DTYPE_U8:
    case POOT_DTYPE_U32:
      return S(U32);
    case POOT_DTYPE_I64:
      return S(I64);
    case POOT_DTYPE_BOOL:
      return S(BOOL);
    default:
      return S(U32);
  }
}

/* ------------------------------------------------------------ basics */

poot_status poot__cc_u32(pc_kctx *k, uint32_t c, poot_kir_value *out) {
  return poot_kir_const_u32(k->b, c, out);
}
poot_status poot__cc_i32(pc_kctx *k, int32_t c, poot_kir_value *out) {
  return poot_kir_const_i32(k->b, c, out);
}
poot_status poot__cc_cf32(pc_kctx *k, float c, poot_kir_value *out) {
  return poot_kir_const_f32(k->b, c, out);
}
poot_status poot__cc_scal(pc_kctx *k, poot_kir_scalar s, int64_t v, poot_kir_value *out) {
  return poot_kir_const(k->b, s, s == S(I64) ? (uint64_t)v : (uint64_t)(uint32_t)v, out);
}
poot_status poot__cc_bin(pc_kctx *k, poot_kir_op op, poot_kir_value a, poot_kir_value b,
                         poot_kir_value *out) {
  return poot_kir_binary(k->b, op, a, b, out);
}
poot_kir_scalar poot__cc_scalar_of(pc_kctx *k, poot_kir_value v) {
  return (poot_kir_scalar)poot_kir_builder_value_type(k->b, v).scalar;
}
/* a op constant (in a's type). */
poot_status poot__cc_bin_c(pc_kctx *k, poot_kir_op op, poot_kir_value a, uint32_t c,
                           poot_kir_value *out) {
  poot_kir_value cv;
  POOT_TRY(poot__cc_scal(k, poot__cc_scalar_of(k, a), (int64_t)(int32_t)c, &cv));
  if (poot__cc_scalar_of(k, a) == S(I64)) POOT_TRY(poot_kir_const(k->b, S(I64), c, &cv));
  return poot__cc_bin(k, op, a, cv, out);
}
poot_status poot__cc_un(pc_kctx *k, poot_kir_op op, poot_kir_value a, poot_kir_value *out) {
  return poot_kir_unary(k->b, op, a, out);
}
poot_status poot__cc_sel(pc_kctx *k, poot_kir_value c, poot_kir_value a, poot_kir_value b,
                         poot_kir_value *out) {
  return poot_kir_select(k->b, c, a, b, out);
}
poot_status poot__cc_cvt(pc_kctx *k, poot_kir_scalar to, poot_kir_value a, poot_kir_value *out) {
  if (poot__cc_scalar_of(k, a) == to) {
    *out = a;
    return NULL;
  }
  return poot_kir_convert(k->b, to, a, out);
}
poot_status poot__cc_bcast(pc_kctx *k, poot_kir_scalar to, poot_kir_value a, poot_kir_value *out) {
  if (poot__cc_scalar_of(k, a) == to) {
    *out = a;
    return NULL;
  }
  return poot_kir_bitcast(k->b, poot_kir_type_make(to, 1), a, out);
}

/* ------------------------------------------------------------- memo */

void poot__cc_scope_push(pc_kctx *k) {
  k->depth++;
}
void poot__cc_scope_pop(pc_kctx *k) {
  while (k->nmemo > 0 && k->memo[k->nmemo - 1].depth >= k->depth) k->nmemo--;
  k->depth--;
}

bool poot__cc_memo_get(pc_kctx *k, poot_value v, uint32_t rank, const poot_kir_value *idx,
                       poot_kir_value *out) {
  for (uint32_t i = k->nmemo; i-- > 0;) {
    const pc_memo *m = &k->memo[i];
    if (m->v != v || m->rank != rank) continue;
    if (rank && memcmp(m->idx, idx, rank * sizeof *idx) != 0) continue;
    *out = m->out;
    return true;
  }
  return false;
}

poot_status poot__cc_memo_put(pc_kctx *k, poot_value v, const poot_kir_value *idx,
                              poot_kir_value val) {
  if (k->nmemo >= PC_MAX_MEMO) return NULL; /* only a cache */
  pc_memo *m = &k->memo[k->nmemo++];
  memset(m, 0, sizeof *m);
  m->v = v;
  m->rank = poot__cc_type(k->pl, v)->shape.rank;
  if (m->rank) memcpy(m->idx, idx, m->rank * sizeof *idx);
  m->out = val;
  m->depth = k->depth;
  return NULL;
}

/* ----------------------------------------------------------- indices */

poot_status poot__cc_delinearize(pc_kctx *k, poot_kir_value lin, const poot_shape *shape,
                                 poot_kir_value *idx) {
  uint64_t stride = 1;
  for (uint32_t d = shape->rank; d-- > 0;) {
    if (shape->dims[d] == 1 || shape->dims[d] == 0) {
      POOT_TRY(poot__cc_u32(k, 0, &idx[d]));
      continue;
    }
    poot_kir_value q = lin;
    if (stride != 1) POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, (uint32_t)stride, &q));
    bool outer = true;
    for (uint32_t e = 0; e < d; e++)
      if (shape->dims[e] != 1) outer = false;
    if (!outer)
      POOT_TRY(poot__cc_bin_c(k, OP(REM), q, (uint32_t)shape->dims[d], &idx[d]));
    else
      idx[d] = q;
    stride *= (uint64_t)shape->dims[d];
  }
  return NULL;
}

poot_status poot__cc_linearize(pc_kctx *k, const poot_kir_value *idx, const poot_shape *shape,
                               poot_kir_value *out) {
  poot_kir_value acc = 0;
  uint64_t stride = 1;
  for (uint32_t d = shape->rank; d-- > 0;) {
    if (shape->dims[d] != 1) {
      poot_kir_value term = idx[d];
      if (stride != 1) POOT_TRY(poot__cc_bin_c(k, OP(MUL), idx[d], (uint32_t)stride, &term));
      if (acc)
        POOT_TRY(poot__cc_bin(k, OP(ADD), acc, term, &acc));
      else
        acc = term;
    }
    stride *= (uint64_t)shape->dims[d];
  }
  if (!acc) POOT_TRY(poot__cc_u32(k, 0, &acc));
  *out = acc;
  return NULL;
}

/* --------------------------------------------------------- bindings */

/* A shared array for the current group: a later group of a batched kernel
 * runs in its own workgroups, so it reuses the smallest array an earlier
 * group declared with the same element type and at least `count` elements
 * (none the current group already took); else a new one. */
poot_status poot__cc_shared(pc_kctx *k, const char *base, poot_kir_scalar elem, uint32_t count,
                            uint32_t *out_ref) {
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < k->nshared; i++)
    if (k->shared[i].elem == elem && k->shared[i].count >= count && k->shared[i].tag != k->tag &&
        (best == UINT32_MAX || k->shared[i].count < k->shared[best].count))
      best = i;
  if (best != UINT32_MAX) {
    k->shared[best].tag = k->tag;
    *out_ref = k->shared[best].ref;
    return NULL;
  }
  char nm[48];
  POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, base, nm, sizeof nm), elem, count, out_ref));
  if (k->nshared < sizeof k->shared / sizeof k->shared[0])
    k->shared[k->nshared++] = (pc_shared_arr){*out_ref, count, k->tag, elem};
  return NULL;
}

poot_status poot__cc_binding_of(pc_kctx *k, uint32_t buffer, uint32_t *out_ref) {
  return poot__cc_binding_typed(k, buffer, S(U32), out_ref);
}

poot_status poot__cc_binding_typed(pc_kctx *k, uint32_t buffer, poot_kir_scalar elem,
                                   uint32_t *out_ref) {
  for (uint32_t i = 0; i < k->nbind; i++)
    if (k->bind_buf[i] == buffer && k->bind_elem[i] == elem) {
      *out_ref = i;
      return NULL;
    }
  if (k->nbind >= POOT_PLAN_MAX_BINDINGS)
    return poot_status_make(POOT_UNSUPPORTED, "compile: kernel needs more than %d bindings",
                            POOT_PLAN_MAX_BINDINGS);
  const poot_plan_buffer *pb = poot_vec_at(&k->pl->buffers, buffer);
  bool ro = pb->cls == POOT_PLAN_BUFFER_WEIGHT || pb->cls == POOT_PLAN_BUFFER_CONST ||
            pb->cls == POOT_PLAN_BUFFER_SLOT || pb->cls == POOT_PLAN_BUFFER_INPUT;
  char name[24];
  snprintf(name, sizeof name, "b%u", k->nbind);
  /* Weights and constants are written before the first step and never by
   * a kernel: they may be read before the wait for the previous kernel. */
  bool inv = pb->cls == POOT_PLAN_BUFFER_WEIGHT || pb->cls == POOT_PLAN_BUFFER_CONST;
  poot_kir_binding bd = {
      name, k->nbind, elem, ro ? POOT_KIR_ACCESS_READ : POOT_KIR_ACCESS_READ_WRITE, 16, inv};
  uint32_t ref = 0;
  POOT_TRY(poot_kir_add_binding(k->b, &bd, &ref));
  k->bind_elem[k->nbind] = elem;
  k->bind_buf[k->nbind++] = buffer;
  *out_ref = ref;
  return NULL;
}

/* The arena word offset of temp `ti` (a PUSH param). */
static poot_status temp_offset(pc_kctx *k, uint32_t ti, poot_kir_value *out) {
  for (uint32_t i = 0; i < k->npush; i++)
    if (k->push_temp[i] == ti) return poot_kir_param_get(k->b, (uint32_t)k->push_val[i], out);
  if (k->npush >= POOT_PLAN_MAX_PUSH)
    return poot_status_make(POOT_UNSUPPORTED, "compile: kernel reads more than %d temporaries",
                            POOT_PLAN_MAX_PUSH);
  char name[24];
  snprintf(name, sizeof name, "off%u", k->npush);
  poot_kir_param p = {name, S(U32), POOT_KIR_PARAM_PUSH, 0, 0};
  uint32_t pi = 0;
  POOT_TRY(poot_kir_add_param(k->b, &p, &pi));
  /* The param index is kept, not the value: a value read inside a block
   * is not visible outside it. */
  k->push_temp[k->npush] = ti;
  k->push_val[k->npush++] = pi;
  return poot_kir_param_get(k->b, pi, out);
}

void poot__cc_note_buffer(pc_kctx *k, uint32_t ref, double frac) {
  if (ref < POOT_PLAN_MAX_BINDINGS && k->buf_frac[ref] < frac) k->buf_frac[ref] = frac;
}

static void note_read(pc_kctx *k, uint32_t ti);

poot_status poot__cc_temp_base(pc_kctx *k, uint32_t ti, bool read, poot_kir_value *out) {
  if (read) note_read(k, ti);
  return temp_offset(k, ti, out);
}

static void note_read(pc_kctx *k, uint32_t ti) {
  for (uint32_t i = 0; i < k->nreads; i++)
    if (k->reads[i] == ti) return;
  if (k->nreads < 256) k->reads[k->nreads++] = ti;
}

poot_status poot__cc_load_word(pc_kctx *k, uint32_t ref, poot_kir_value idx, poot_kir_value *out) {
  return poot_kir_load(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, 1, out);
}

/* Temp/slot word format: compute-type bits (bool 0/1). */
static poot_status word_to_value(pc_kctx *k, poot_kir_value w, poot_dtype dt, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_compute_scalar(dt);
  if (s == S(BOOL)) return poot__cc_bin_c(k, OP(NE), w, 0, out);
  return poot__cc_bcast(k, s, w, out);
}
static poot_status value_to_word(pc_kctx *k, poot_kir_value v, poot_kir_value *out) {
  if (poot__cc_scalar_of(k, v) == S(BOOL)) {
    poot_kir_value one, zero;
    POOT_TRY(poot__cc_u32(k, 1, &one));
    POOT_TRY(poot__cc_u32(k, 0, &zero));
    return poot__cc_sel(k, v, one, zero, out);
  }
  return poot__cc_bcast(k, S(U32), v, out);
}

static poot_status i64_from_words(pc_kctx *k, poot_kir_value lo, poot_kir_value hi,
                                  poot_kir_value *out) {
  poot_kir_value l, h, c32;
  POOT_TRY(poot__cc_cvt(k, S(I64), lo, &l));
  POOT_TRY(poot__cc_cvt(k, S(I64), hi, &h));
  POOT_TRY(poot_kir_const(k->b, S(I64), 32, &c32));
  POOT_TRY(poot__cc_bin(k, OP(SHL), h, c32, &h));
  return poot__cc_bin(k, OP(OR), h, l, out);
}

/* ------------------------------------------------------------- loads */

poot_status poot__cc_load_value(pc_kctx *k, poot_value v, poot_kir_value lin, poot_kir_value *out) {
  pc_value *pv = &k->pl->v[v];
  poot_dtype dt = poot__cc_type(k->pl, v)->dtype;
  const poot_dtype_info *di = poot_dtype_info_of(dt);
  uint32_t ref = 0;
  poot_kir_value base = 0, w, w2, idx;
  k->bytes += di->elem_bytes ? di->elem_bytes : 1;
  if (pv->hold == PC_TEMP || pv->hold == PC_SLOT) {
    if (pv->hold == PC_TEMP) {
      POOT_TRY(poot__cc_binding_of(k, 0, &ref));
      POOT_TRY(temp_offset(k, pv->temp, &base));
      note_read(k, pv->temp);
    } else {
      POOT_TRY(poot__cc_binding_of(k, 1, &ref));
      POOT_TRY(poot__cc_u32(k, pv->slot_word, &base));
    }
    if (dt == POOT_DTYPE_I64) {
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      POOT_TRY(poot__cc_bin(k, OP(ADD), idx, base, &idx));
      POOT_TRY(poot__cc_load_word(k, ref, idx, &w));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      POOT_TRY(poot__cc_load_word(k, ref, idx, &w2));
      return i64_from_words(k, w, w2, out);
    }
    POOT_TRY(poot__cc_bin(k, OP(ADD), lin, base, &idx));
    POOT_TRY(poot__cc_load_word(k, ref, idx, &w));
    return word_to_value(k, w, dt, out);
  }
  if (pv->hold != PC_LEAFBUF && pv->hold != PC_DENSE)
    return poot_status_make(POOT_INTERNAL, "compile: value %%%u has no storage", v);
  POOT_TRY(poot__cc_binding_of(k, pv->buffer, &ref));
  poot__cc_note_buffer(k, ref, k->frac);
  switch (di->elem_bytes) {
    case 8:
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      POOT_TRY(poot__cc_load_word(k, ref, idx, &w));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      POOT_TRY(poot__cc_load_word(k, ref, idx, &w2));
      return i64_from_words(k, w, w2, out);
    case 4:
      POOT_TRY(poot__cc_load_word(k, ref, lin, &w));
      return poot__cc_from_bits(k, w, dt, out);
    case 2:
    case 1: {
      uint32_t per = 4 / (uint32_t)di->elem_bytes;
      poot_kir_value sh;
      POOT_TRY(poot__cc_bin_c(k, OP(DIV), lin, per, &idx));
      POOT_TRY(poot__cc_load_word(k, ref, idx, &w));
      POOT_TRY(poot__cc_bin_c(k, OP(REM), lin, per, &sh));
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), sh, 8 * (uint32_t)di->elem_bytes, &sh));
      POOT_TRY(poot__cc_bin(k, OP(SHR), w, sh, &w));
      POOT_TRY(poot__cc_bin_c(k, OP(AND), w, di->elem_bytes == 2 ? 0xffff : 0xff, &w));
      return poot__cc_from_bits(k, w, dt, out);
    }
    default:
      return poot_status_make(POOT_UNSUPPORTED, "compile: cannot load %s elements",
                              poot_dtype_name(dt));
  }
}

poot_status poot__cc_store_value(pc_kctx *k, poot_value v, poot_kir_value lin, poot_kir_value val) {
  pc_value *pv = &k->pl->v[v];
  poot_dtype dt = poot__cc_type(k->pl, v)->dtype;
  uint32_t ref = 0;
  poot_kir_value base, idx, w;
  k->bytes += 4;
  if (pv->hold == PC_TEMP) {
    POOT_TRY(poot__cc_binding_of(k, 0, &ref));
    POOT_TRY(temp_offset(k, pv->temp, &base));
    if (dt == POOT_DTYPE_I64) {
      poot_kir_value lo, hi, c32;
      POOT_TRY(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
      POOT_TRY(poot__cc_bin(k, OP(ADD), idx, base, &idx));
      POOT_TRY(poot__cc_cvt(k, S(U32), val, &lo));
      POOT_TRY(poot_kir_const(k->b, S(I64), 32, &c32));
      POOT_TRY(poot__cc_bin(k, OP(SHR), val, c32, &hi));
      POOT_TRY(poot__cc_cvt(k, S(U32), hi, &hi));
      POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, lo));
      POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
      return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, hi);
    }
    POOT_TRY(poot__cc_bin(k, OP(ADD), lin, base, &idx));
    POOT_TRY(value_to_word(k, val, &w));
    return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, w);
  }
  if (pv->hold != PC_DENSE)
    return poot_status_make(POOT_INTERNAL, "compile: value %%%u is not stored", v);
  POOT_TRY(poot__cc_binding_of(k, pv->buffer, &ref));
  poot__cc_note_buffer(k, ref, 1.0);
  const poot_dtype_info *di = poot_dtype_info_of(dt);
  if (di->elem_bytes == 8) {
    poot_kir_value lo, hi, c32;
    POOT_TRY(poot__cc_bin_c(k, OP(MUL), lin, 2, &idx));
    POOT_TRY(poot__cc_cvt(k, S(U32), val, &lo));
    POOT_TRY(poot_kir_const(k->b, S(I64), 32, &c32));
    POOT_TRY(poot__cc_bin(k, OP(SHR), val, c32, &hi));
    POOT_TRY(poot__cc_cvt(k, S(U32), hi, &hi));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, lo));
    POOT_TRY(poot__cc_bin_c(k, OP(ADD), idx, 1, &idx));
    return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, idx, hi);
  }
  if (di->elem_bytes != 4)
    return poot_status_make(POOT_INTERNAL, "compile: element store of %s", poot_dtype_name(dt));
  POOT_TRY(poot__cc_to_bits(k, val, dt, &w));
  return poot_kir_store(k->b, POOT_KIR_SPACE_GLOBAL, ref, lin, w);
}

/* ---------------------------------------------------------- constants */

poot_status poot__cc_const_of(pc_kctx *k, poot_dtype dt, double f, int64_t i, poot_kir_value *out) {
  poot_kir_scalar s = poot__cc_compute_scalar(dt);
  if (s == S(F32)) return poot__cc_cf32(k, (float)f, out);
  if (s == S(BOOL)) return poot_kir_const_bool(k->b, i != 0, out);
  return poot__cc_scal(k, s, i, out);
}
