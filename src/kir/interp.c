/* The KIR interpreter: one workgroup at a time, its threads in lockstep.
 *
 * Every statement runs for all active threads before the next one starts;
 * `if` and `for` narrow a per-thread mask. Barriers and subgroup operations
 * therefore see every thread at the same point, as on a GPU. Because
 * lockstep execution would hide missing barriers, shared memory carries a
 * shadow (last writer, last reader, barrier epoch) that reports races and
 * reads of never-written elements. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "interp_impl.h"

#define LANES 4

typedef struct shadow {
  int32_t writer; /* thread, -1 never written, -3 atomic */
  int32_t reader; /* thread, -1 none, -2 several */
  uint32_t wepoch;
  uint32_t repoch;
} shadow;

typedef struct run {
  const poot_kir_kernel *k;
  const poot_kir_interp_options *o;
  uint32_t T;  /* threads per workgroup */
  uint32_t sg; /* subgroup size */
  uint32_t wg[3];
  uint64_t *vals; /* [value][thread][lane] */
  uint64_t *priv; /* [private offset + (thread * count + element)][lane] */
  size_t *priv_off;
  unsigned char **shared; /* per shared array */
  shadow **shadows;       /* per shared array element, NULL when race checks are off */
  uint32_t epoch;
  uint64_t steps, max_steps;
  bool race;
  /* Asynchronous copies issued and not yet waited for, in issue order,
   * and per thread the number of groups it has committed. */
  struct pending_copy *pend;
  size_t pend_len, pend_cap;
  uint32_t *committed;
} run;

typedef struct pending_copy {
  const poot_kir_inst *in;
  uint32_t thread;
  uint32_t group; /* the thread's commit count when it was issued */
  int64_t dst, src;
  bool valid;
} pending_copy;

static uint64_t *reg(run *r, poot_kir_value v, uint32_t t) {
  return &r->vals[((size_t)v * r->T + t) * LANES];
}

static poot_status fault(run *r, const poot_kir_inst *in, uint32_t t, poot_status_code code,
                         const char *fmt, ...) POOT_PRINTF(5, 6);
static poot_status fault(run *r, const poot_kir_inst *in, uint32_t t, poot_status_code code,
                         const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (in) poot_kir_print_inst(r->k, in, &sb);
  poot_status st = poot_status_make(
      code, "kir interp: kernel '%s': %s at statement #%u (%s) in workgroup (%u,%u,%u) thread %u",
      r->k->name, msg, in ? in->id : 0, sb.data ? sb.data : "", r->wg[0], r->wg[1], r->wg[2], t);
  poot_strbuf_deinit(&sb);
  return st;
}

/* A lane op's refusal (poot__kir_unary/binary), raised as a fault at the
 * statement and thread it happened at. */
static poot_status lane_fault(run *r, const poot_kir_inst *in, uint32_t t, poot_status why) {
  if (!why) return POOT_OK_STATUS;
  poot_status st = fault(r, in, t, poot_status_code_of(why), "%s", poot_status_message(why));
  poot_status_free(why);
  return st;
}

static bool any(const uint8_t *m, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (m[i]) return true;
  return false;
}

/* --------------------------------------------------------------- memory */

typedef struct memref {
  unsigned char *base;
  uint64_t count; /* elements */
  poot_kir_scalar elem;
  const char *name;
  shadow *sh; /* shared only */
} memref;

static poot_status resolve(run *r, const poot_kir_inst *in, uint32_t t, int64_t index,
                           uint32_t lanes, memref *m) {
  const poot_kir_kernel *k = r->k;
  if (in->space == POOT_KIR_SPACE_GLOBAL) {
    const poot_kir_binding *b = &k->bindings[in->ref];
    const poot_kir_buffer *buf = &r->o->buffers[in->ref];
    m->base = buf->data;
    m->elem = b->elem;
    m->count = buf->size / poot_kir_scalar_size(b->elem);
    m->name = b->name;
    m->sh = NULL;
  } else {
    const poot_kir_shared *s = &k->shared[in->ref];
    m->base = r->shared[in->ref];
    m->elem = s->elem;
    m->count = s->count;
    m->name = s->name;
    m->sh = r->shadows ? r->shadows[in->ref] : NULL;
  }
  if (index < 0 || (uint64_t)index + lanes > m->count || (m->count && !m->base))
    return fault(
        r, in, t, POOT_INVALID_ARGUMENT,
        "out-of-range access: element %" PRId64 " (+%u lanes) of %s '%s' with %" PRIu64 " elements",
        index, lanes, in->space == POOT_KIR_SPACE_GLOBAL ? "binding" : "shared", m->name, m->count);
  if (index % lanes)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "misaligned %u-lane access at element %" PRId64 " of '%s'", lanes, index, m->name);
  return POOT_OK_STATUS;
}

static poot_status shadow_read(run *r, const poot_kir_inst *in, uint32_t t, shadow *s,
                               const char *name, int64_t e) {
  if (s->writer == -1)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "read of shared '%s' element %" PRId64 " that no thread has written", name, e);
  if (s->wepoch == r->epoch && s->writer >= 0 && (uint32_t)s->writer != t)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "shared-memory race: '%s' element %" PRId64
                 " was written by thread %d with no barrier in between",
                 name, e, s->writer);
  if (s->repoch != r->epoch) {
    s->repoch = r->epoch;
    s->reader = (int32_t)t;
  } else if (s->reader != (int32_t)t) {
    s->reader = -2;
  }
  return POOT_OK_STATUS;
}

static poot_status shadow_write(run *r, const poot_kir_inst *in, uint32_t t, shadow *s,
                                const char *name, int64_t e) {
  if (s->wepoch == r->epoch && s->writer >= 0 && (uint32_t)s->writer != t)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "shared-memory race: '%s' element %" PRId64
                 " was also written by thread %d with no barrier in between",
                 name, e, s->writer);
  if (s->repoch == r->epoch && s->reader != -1 && s->reader != (int32_t)t)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "shared-memory race: '%s' element %" PRId64
                 " was read by another thread with no barrier in between",
                 name, e);
  s->writer = (int32_t)t;
  s->wepoch = r->epoch;
  return POOT_OK_STATUS;
}

static int64_t index_of(run *r, const poot_kir_inst *in, uint32_t t) {
  poot_kir_scalar s = (poot_kir_scalar)r->k->values[in->args[0]].type.scalar;
  return poot__kir_as_int(s, reg(r, in->args[0], t)[0]);
}

static poot_status do_load(run *r, const poot_kir_inst *in, uint32_t t) {
  uint32_t lanes = in->type.lanes;
  int64_t idx = index_of(r, in, t);
  memref m;
  POOT_TRY(resolve(r, in, t, idx, lanes, &m));
  size_t es = poot_kir_scalar_size(m.elem);
  uint64_t *dst = reg(r, in->result, t);
  for (uint32_t l = 0; l < lanes; l++) {
    if (m.sh && r->race) POOT_TRY(shadow_read(r, in, t, &m.sh[idx + l], m.name, idx + l));
    uint64_t v = 0;
    memcpy(&v, m.base + (size_t)(idx + l) * es, es);
    dst[l] = v;
  }
  return POOT_OK_STATUS;
}

static poot_status do_store(run *r, const poot_kir_inst *in, uint32_t t) {
  uint32_t lanes = in->type.lanes;
  int64_t idx = index_of(r, in, t);
  memref m;
  POOT_TRY(resolve(r, in, t, idx, lanes, &m));
  size_t es = poot_kir_scalar_size(m.elem);
  const uint64_t *src = reg(r, in->args[1], t);
  for (uint32_t l = 0; l < lanes; l++) {
    if (m.sh && r->race) POOT_TRY(shadow_write(r, in, t, &m.sh[idx + l], m.name, idx + l));
    memcpy(m.base + (size_t)(idx + l) * es, &src[l], es);
  }
  return POOT_OK_STATUS;
}

static poot_status do_atomic(run *r, const poot_kir_inst *in, uint32_t t) {
  int64_t idx = index_of(r, in, t);
  memref m;
  POOT_TRY(resolve(r, in, t, idx, 1, &m));
  poot_kir_scalar s = m.elem;
  uint32_t old32 = 0;
  memcpy(&old32, m.base + (size_t)idx * 4, 4);
  uint64_t old = old32, nv = old;
  uint64_t v = reg(r, in->args[1], t)[0];
  switch (in->op) {
    case POOT_KIR_OP_ATOMIC_ADD:
      POOT_TRY(lane_fault(r, in, t, poot__kir_binary(POOT_KIR_OP_ADD, s, old, v, &nv)));
      break;
    case POOT_KIR_OP_ATOMIC_MAX:
      POOT_TRY(lane_fault(r, in, t, poot__kir_binary(POOT_KIR_OP_MAX, s, old, v, &nv)));
      break;
    case POOT_KIR_OP_ATOMIC_MIN:
      POOT_TRY(lane_fault(r, in, t, poot__kir_binary(POOT_KIR_OP_MIN, s, old, v, &nv)));
      break;
    case POOT_KIR_OP_ATOMIC_XCHG:
      nv = v;
      break;
    default: /* CAS compares bit patterns */
      if (old == v) nv = reg(r, in->args[2], t)[0];
      break;
  }
  old32 = (uint32_t)nv;
  memcpy(m.base + (size_t)idx * 4, &old32, 4);
  if (m.sh) {
    m.sh[idx].writer = -3; /* atomics never race with each other */
    m.sh[idx].wepoch = r->epoch;
  }
  reg(r, in->result, t)[0] = old;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------- per thread */

static uint32_t builtin_of(run *r, const poot_kir_inst *in, uint32_t t) {
  const uint32_t *ws = r->k->workgroup_size;
  uint32_t d = (uint32_t)(in->imm % 3);
  uint32_t lid[3] = {t % ws[0], (t / ws[0]) % ws[1], t / (ws[0] * ws[1])};
  switch ((poot_kir_builtin)in->ref) {
    case POOT_KIR_BUILTIN_WORKGROUP_ID:
      return r->wg[d];
    case POOT_KIR_BUILTIN_NUM_WORKGROUPS:
      return r->o->grid[d] ? r->o->grid[d] : 1;
    case POOT_KIR_BUILTIN_LOCAL_ID:
      return lid[d];
    case POOT_KIR_BUILTIN_LOCAL_SIZE:
      return ws[d];
    case POOT_KIR_BUILTIN_LOCAL_INDEX:
      return t;
    case POOT_KIR_BUILTIN_SUBGROUP_ID:
      return t / r->sg;
    case POOT_KIR_BUILTIN_SUBGROUP_LANE:
      return t % r->sg;
    case POOT_KIR_BUILTIN_SUBGROUP_SIZE:
      return r->sg;
    default:
      return 0;
  }
}

/* Evaluates a value statement that involves only this thread. */
/* ------------------------------------------------------ per-thread routines */

/* The interpreter's reference routine of each op class (the class is the KIR
 * op table's, poot__kir_op_class): what one thread computes for the
 * statement. */
typedef poot_status (*thread_fn)(run *r, const poot_kir_inst *in, uint32_t t);

static poot_kir_type arg_type(const run *r, const poot_kir_inst *in) {
  return in->arg_count ? r->k->values[in->args[0]].type : in->type;
}

static poot_status t_const(run *r, const poot_kir_inst *in, uint32_t t) {
  reg(r, in->result, t)[0] = in->imm;
  return POOT_OK_STATUS;
}

static poot_status t_builtin(run *r, const poot_kir_inst *in, uint32_t t) {
  reg(r, in->result, t)[0] = builtin_of(r, in, t);
  return POOT_OK_STATUS;
}

static poot_status t_param(run *r, const poot_kir_inst *in, uint32_t t) {
  const poot_kir_kernel *k = r->k;
  uint64_t *dst = reg(r, in->result, t);
  const poot_kir_param *p = &k->params[in->ref];
  if (p->kind == POOT_KIR_PARAM_PUSH) {
    dst[0] = r->o->params[in->ref];
    return POOT_OK_STATUS;
  }
  const poot_kir_buffer *buf = &r->o->buffers[p->slot_ref];
  if ((uint64_t)p->slot_index * 4 + 4 > buf->size || !buf->data)
    return fault(r, in, t, POOT_INVALID_ARGUMENT,
                 "slot param '%s' reads element %u of binding '%s' (%zu bytes)", p->name,
                 p->slot_index, k->bindings[p->slot_ref].name, buf->size);
  uint32_t v;
  memcpy(&v, (unsigned char *)buf->data + (size_t)p->slot_index * 4, 4);
  dst[0] = v;
  return POOT_OK_STATUS;
}

/* UNARY: the lane op of every lane of the operand. */
static poot_status t_unary(run *r, const poot_kir_inst *in, uint32_t t) {
  poot_kir_type at = arg_type(r, in);
  const uint64_t *a = reg(r, in->args[0], t);
  uint64_t tmp[LANES] = {0};
  poot_status why = POOT_OK_STATUS;
  for (uint32_t l = 0; l < at.lanes && !why; l++)
    why = poot__kir_unary(in->op, (poot_kir_scalar)at.scalar, a[l], &tmp[l]);
  memcpy(reg(r, in->result, t), tmp, sizeof tmp);
  return lane_fault(r, in, t, why);
}

/* BINARY and COMPARE: the lane op of every pair of lanes. */
static poot_status t_binary(run *r, const poot_kir_inst *in, uint32_t t) {
  poot_kir_type at = arg_type(r, in);
  const uint64_t *a = reg(r, in->args[0], t), *b = reg(r, in->args[1], t);
  uint64_t tmp[LANES] = {0};
  poot_status why = POOT_OK_STATUS;
  for (uint32_t l = 0; l < at.lanes && !why; l++)
    why = poot__kir_binary(in->op, (poot_kir_scalar)at.scalar, a[l], b[l], &tmp[l]);
  memcpy(reg(r, in->result, t), tmp, sizeof tmp);
  return lane_fault(r, in, t, why);
}

static poot_status t_select(run *r, const poot_kir_inst *in, uint32_t t) {
  const uint64_t *c = reg(r, in->args[0], t);
  const uint64_t *a = reg(r, in->args[1], t), *b = reg(r, in->args[2], t);
  bool scalar_cond = r->k->values[in->args[0]].type.lanes == 1;
  uint64_t tmp[LANES];
  for (uint32_t l = 0; l < in->type.lanes; l++) tmp[l] = (scalar_cond ? c[0] : c[l]) ? a[l] : b[l];
  memcpy(reg(r, in->result, t), tmp, sizeof tmp);
  return POOT_OK_STATUS;
}

static poot_status t_fma(run *r, const poot_kir_inst *in, uint32_t t) {
  poot_kir_scalar s = (poot_kir_scalar)arg_type(r, in).scalar;
  const uint64_t *a = reg(r, in->args[0], t), *b = reg(r, in->args[1], t),
                 *c = reg(r, in->args[2], t);
  uint64_t *dst = reg(r, in->result, t);
  for (uint32_t l = 0; l < in->type.lanes; l++) dst[l] = poot__kir_fma(s, a[l], b[l], c[l]);
  return POOT_OK_STATUS;
}

/* DOT4_I8: exact, wrapping as i32 arithmetic does. */
static poot_status t_dot4(run *r, const poot_kir_inst *in, uint32_t t) {
  uint32_t a = (uint32_t)reg(r, in->args[0], t)[0], b = (uint32_t)reg(r, in->args[1], t)[0];
  uint32_t sum = (uint32_t)reg(r, in->args[2], t)[0];
  for (uint32_t i = 0; i < 4; i++) {
    int32_t x = (int8_t)(uint8_t)(a >> (8 * i)), y = (int8_t)(uint8_t)(b >> (8 * i));
    sum += (uint32_t)(x * y);
  }
  reg(r, in->result, t)[0] = poot__kir_from_int(POOT_KIR_I32, sum);
  return POOT_OK_STATUS;
}

static poot_status t_convert(run *r, const poot_kir_inst *in, uint32_t t) {
  poot_kir_scalar s = (poot_kir_scalar)arg_type(r, in).scalar;
  const uint64_t *a = reg(r, in->args[0], t);
  uint64_t *dst = reg(r, in->result, t);
  for (uint32_t l = 0; l < in->type.lanes; l++)
    dst[l] = poot__kir_convert(s, (poot_kir_scalar)in->type.scalar, a[l]);
  return POOT_OK_STATUS;
}

static poot_status t_bitcast(run *r, const poot_kir_inst *in, uint32_t t) {
  uint64_t tmp[LANES];
  poot__kir_bitcast(arg_type(r, in), reg(r, in->args[0], t), in->type, tmp);
  memcpy(reg(r, in->result, t), tmp, sizeof tmp);
  return POOT_OK_STATUS;
}

/* LANES: SPLAT, VEC and EXTRACT move values between lanes. */
static poot_status t_lanes(run *r, const poot_kir_inst *in, uint32_t t) {
  uint64_t *dst = reg(r, in->result, t);
  switch (in->op) {
    case POOT_KIR_OP_SPLAT: {
      uint64_t v = reg(r, in->args[0], t)[0];
      for (uint32_t l = 0; l < in->type.lanes; l++) dst[l] = v;
      return POOT_OK_STATUS;
    }
    case POOT_KIR_OP_VEC: {
      uint64_t tmp[LANES] = {0};
      for (uint32_t l = 0; l < in->arg_count; l++) tmp[l] = reg(r, in->args[l], t)[0];
      memcpy(dst, tmp, sizeof tmp);
      return POOT_OK_STATUS;
    }
    case POOT_KIR_OP_EXTRACT:
      dst[0] = reg(r, in->args[0], t)[in->imm];
      return POOT_OK_STATUS;
    default:
      return fault(r, in, t, POOT_INVALID_ARGUMENT,
                   "lane statement not handled by the interpreter");
  }
}

static poot_status t_priv_load(run *r, const poot_kir_inst *in, uint32_t t) {
  const poot_kir_private *p = &r->k->privates[in->ref];
  memcpy(reg(r, in->result, t),
         &r->priv[(r->priv_off[in->ref] + (size_t)t * p->count + in->imm) * LANES],
         LANES * sizeof(uint64_t));
  return POOT_OK_STATUS;
}

static poot_status t_async(run *r, const poot_kir_inst *in, uint32_t t);

static const thread_fn THREAD_FN[POOT_KIR_CLASS_COUNT] = {
    [POOT_KIR_CLASS_CONST] = t_const,         [POOT_KIR_CLASS_BUILTIN] = t_builtin,
    [POOT_KIR_CLASS_PARAM] = t_param,         [POOT_KIR_CLASS_UNARY] = t_unary,
    [POOT_KIR_CLASS_BINARY] = t_binary,       [POOT_KIR_CLASS_COMPARE] = t_binary,
    [POOT_KIR_CLASS_SELECT] = t_select,       [POOT_KIR_CLASS_FMA] = t_fma,
    [POOT_KIR_CLASS_CONVERT] = t_convert,     [POOT_KIR_CLASS_BITCAST] = t_bitcast,
    [POOT_KIR_CLASS_LANES] = t_lanes,         [POOT_KIR_CLASS_LOAD] = do_load,
    [POOT_KIR_CLASS_PRIV_LOAD] = t_priv_load, [POOT_KIR_CLASS_ATOMIC] = do_atomic,
    [POOT_KIR_CLASS_STORE] = do_store,        [POOT_KIR_CLASS_ASYNC] = t_async,
    [POOT_KIR_CLASS_DOT4] = t_dot4,
};

static poot_status subgroup_op(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  for (uint32_t g0 = 0; g0 < r->T; g0 += r->sg) {
    uint32_t g1 = g0 + r->sg < r->T ? g0 + r->sg : r->T;
    uint32_t active = 0;
    for (uint32_t t = g0; t < g1; t++) active += mask[t] ? 1u : 0u;
    if (active == 0) continue;
    if (active != g1 - g0)
      return fault(r, in, g0, POOT_INVALID_ARGUMENT,
                   "subgroup operation reached by %u of the %u threads of subgroup %u", active,
                   g1 - g0, g0 / r->sg);
    if (in->op <= POOT_KIR_OP_SG_REDUCE_MIN) {
      poot_kir_op op = in->op == POOT_KIR_OP_SG_REDUCE_ADD   ? POOT_KIR_OP_ADD
                       : in->op == POOT_KIR_OP_SG_REDUCE_MAX ? POOT_KIR_OP_MAX
                                                             : POOT_KIR_OP_MIN;
      /* Lane order; GPUs use a tree, so float sums are compared with a bound. */
      uint64_t acc = reg(r, in->args[0], g0)[0];
      for (uint32_t t = g0 + 1; t < g1; t++)
        POOT_TRY(
            lane_fault(r, in, t, poot__kir_binary(op, s, acc, reg(r, in->args[0], t)[0], &acc)));
      for (uint32_t t = g0; t < g1; t++) reg(r, in->result, t)[0] = acc;
      continue;
    }
    for (uint32_t t = g0; t < g1; t++) {
      uint64_t src;
      if (in->op == POOT_KIR_OP_SG_SHUFFLE)
        src = (uint32_t)reg(r, in->args[1], t)[0];
      else if (in->op == POOT_KIR_OP_SG_SHUFFLE_XOR)
        src = ((t - g0) ^ (uint32_t)in->imm);
      else
        src = in->imm;
      if (src >= r->sg || g0 + src >= g1)
        return fault(r, in, t, POOT_INVALID_ARGUMENT,
                     "subgroup lane %" PRIu64 " does not exist (subgroup of %u lanes)", src,
                     g1 - g0);
      /* Results go to the new value; sources are the operand, so no overlap. */
      reg(r, in->result, t)[0] = reg(r, in->args[0], g0 + (uint32_t)src)[0];
    }
  }
  return POOT_OK_STATUS;
}

/* ------------------------------------------- matrix fragments, async copies */

/* The subgroup [g0, g1) is reached by all of its threads (true), by none
 * (false), or by part of it (a fault). */
static poot_status subgroup_full(run *r, const poot_kir_inst *in, const uint8_t *mask, uint32_t g0,
                                 uint32_t g1, bool *out) {
  uint32_t active = 0;
  for (uint32_t t = g0; t < g1; t++) active += mask[t] ? 1u : 0u;
  *out = active != 0;
  if (active && active != g1 - g0)
    return fault(r, in, g0, POOT_INVALID_ARGUMENT,
                 "subgroup operation reached by %u of the %u threads of subgroup %u", active,
                 g1 - g0, g0 / r->sg);
  return POOT_OK_STATUS;
}

/* ldmatrix.x4 for the subgroup starting at thread g0 (kir.h's layout). */
static poot_status mma_load(run *r, const poot_kir_inst *in, uint32_t g0) {
  const poot_kir_shared *sh = &r->k->shared[in->ref];
  const uint16_t *base = (const uint16_t *)r->shared[in->ref];
  int64_t row[32];
  for (uint32_t l = 0; l < 32; l++) {
    row[l] = index_of(r, in, g0 + l);
    if (row[l] < 0 || row[l] % 8 || (uint64_t)row[l] + 8 > sh->count)
      return fault(r, in, g0 + l,
                   POOT_INVALID_ARGUMENT,
                   "mma_load row at element %" PRId64 " of shared '%s' (%u elements) is out of "
                   "range or not a multiple of 8",
                   row[l], sh->name, sh->count);
    if (r->race && r->shadows)
      for (uint32_t e = 0; e < 8; e++)
        POOT_TRY(shadow_read(r, in, g0 + l, &r->shadows[in->ref][row[l] + e], sh->name,
                             row[l] + e));
  }
  bool trans = in->imm & 1;
  for (uint32_t t = 0; t < 32; t++) {
    uint32_t g = t / 4, q = t % 4;
    uint64_t *d = reg(r, in->result, g0 + t);
    for (uint32_t w = 0; w < 4; w++) {
      uint32_t lo, hi;
      if (!trans) {
        lo = base[row[w * 8 + g] + 2 * q];
        hi = base[row[w * 8 + g] + 2 * q + 1];
      } else {
        lo = base[row[w * 8 + 2 * q] + g];
        hi = base[row[w * 8 + 2 * q + 1] + g];
      }
      d[w] = lo | (hi << 16);
    }
  }
  return POOT_OK_STATUS;
}

static float half_of(poot_kir_scalar s, uint64_t word, uint32_t which) {
  return poot__kir_as_float(s, (word >> (16 * which)) & 0xffffu);
}

/* mma.m16n8k16 for the subgroup starting at thread g0 (kir.h's layout). */
static void mma_run(run *r, const poot_kir_inst *in, uint32_t g0) {
  poot_kir_scalar s = (poot_kir_scalar)in->imm;
  float a[16][16], b[16][8], c[16][8];
  for (uint32_t t = 0; t < 32; t++) {
    uint32_t g = t / 4, q = t % 4;
    const uint64_t *ra = reg(r, in->args[0], g0 + t), *rb = reg(r, in->args[1], g0 + t);
    const uint64_t *rc = reg(r, in->args[2], g0 + t);
    for (uint32_t w = 0; w < 4; w++)
      for (uint32_t h = 0; h < 2; h++) a[g + 8 * (w & 1)][2 * q + 8 * (w >> 1) + h] = half_of(s, ra[w], h);
    for (uint32_t w = 0; w < 2; w++)
      for (uint32_t h = 0; h < 2; h++) b[2 * q + 8 * w + h][g] = half_of(s, rb[w], h);
    for (uint32_t l = 0; l < 4; l++)
      c[g + 8 * (l >> 1)][2 * q + (l & 1)] = poot__kir_as_float(POOT_KIR_F32, rc[l]);
  }
  for (uint32_t t = 0; t < 32; t++) {
    uint32_t g = t / 4, q = t % 4;
    uint64_t *d = reg(r, in->result, g0 + t);
    for (uint32_t l = 0; l < 4; l++) {
      uint32_t m = g + 8 * (l >> 1), n = 2 * q + (l & 1);
      double acc = c[m][n];
      for (uint32_t k = 0; k < 16; k++) acc += (double)a[m][k] * (double)b[k][n];
      d[l] = poot__kir_from_float(POOT_KIR_F32, (float)acc);
    }
  }
}

static poot_status g_matrix(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  if (r->sg != 32)
    return fault(r, in, 0, POOT_INVALID_ARGUMENT,
                 "matrix fragments need subgroups of 32 lanes; this run uses %u", r->sg);
  for (uint32_t g0 = 0; g0 < r->T; g0 += 32) {
    bool full;
    if (g0 + 32 > r->T)
      return fault(r, in, g0, POOT_INVALID_ARGUMENT,
                   "matrix fragments need whole subgroups; the workgroup has %u threads", r->T);
    POOT_TRY(subgroup_full(r, in, mask, g0, g0 + 32, &full));
    if (!full) continue;
    if (in->op == POOT_KIR_OP_MMA_LOAD)
      POOT_TRY(mma_load(r, in, g0));
    else
      mma_run(r, in, g0);
  }
  return POOT_OK_STATUS;
}

/* The range checks of one copy: 16 bytes at dst of the shared array and,
 * when valid, at src of the binding. */
static poot_status copy_check(run *r, const pending_copy *p) {
  const poot_kir_inst *in = p->in;
  const poot_kir_shared *sh = &r->k->shared[in->ref];
  uint32_t n = 16 / (uint32_t)poot_kir_scalar_size(sh->elem);
  if (p->dst < 0 || p->dst % n || (uint64_t)p->dst + n > sh->count)
    return fault(r, in, p->thread, POOT_INVALID_ARGUMENT,
                 "async_copy to element %" PRId64 " of shared '%s' (%u elements): out of range "
                 "or not a multiple of %u",
                 p->dst, sh->name, sh->count, n);
  if (!p->valid) return POOT_OK_STATUS;
  const poot_kir_buffer *buf = &r->o->buffers[in->imm];
  uint64_t count = buf->size / poot_kir_scalar_size(sh->elem);
  if (p->src < 0 || p->src % n || (uint64_t)p->src + n > count || !buf->data)
    return fault(r, in, p->thread, POOT_INVALID_ARGUMENT,
                 "async_copy from element %" PRId64 " of binding '%s' (%" PRIu64
                 " elements): out of range or not a multiple of %u",
                 p->src, r->k->bindings[in->imm].name, count, n);
  return POOT_OK_STATUS;
}

/* Marks the copy's 16 destination bytes as written by its thread now. */
static poot_status copy_mark(run *r, const pending_copy *p) {
  if (!r->race || !r->shadows) return POOT_OK_STATUS;
  const poot_kir_shared *sh = &r->k->shared[p->in->ref];
  uint32_t n = 16 / (uint32_t)poot_kir_scalar_size(sh->elem);
  for (uint32_t e = 0; e < n; e++)
    POOT_TRY(shadow_write(r, p->in, p->thread, &r->shadows[p->in->ref][p->dst + e], sh->name,
                          p->dst + e));
  return POOT_OK_STATUS;
}

static poot_status copy_land(run *r, const pending_copy *p) {
  POOT_TRY(copy_mark(r, p));
  unsigned char *d = r->shared[p->in->ref] +
                     (size_t)p->dst * poot_kir_scalar_size(r->k->shared[p->in->ref].elem);
  if (!p->valid) {
    memset(d, 0, 16);
    return POOT_OK_STATUS;
  }
  const unsigned char *src = r->o->buffers[p->in->imm].data;
  memcpy(d, src + (size_t)p->src * poot_kir_scalar_size(r->k->shared[p->in->ref].elem), 16);
  return POOT_OK_STATUS;
}

static poot_status t_async(run *r, const poot_kir_inst *in, uint32_t t) {
  if (in->op == POOT_KIR_OP_ASYNC_COMMIT) {
    r->committed[t]++;
    return POOT_OK_STATUS;
  }
  if (in->op == POOT_KIR_OP_ASYNC_WAIT) {
    if (r->committed[t] < in->imm) return POOT_OK_STATUS;
    uint32_t done_below = r->committed[t] - (uint32_t)in->imm;
    size_t keep = 0;
    poot_status st = POOT_OK_STATUS;
    for (size_t i = 0; i < r->pend_len; i++) {
      pending_copy *p = &r->pend[i];
      if (!st && p->thread == t && p->group < done_below)
        st = copy_land(r, p);
      else
        r->pend[keep++] = *p;
    }
    r->pend_len = keep;
    return st;
  }
  pending_copy p = {in, t, r->committed[t], index_of(r, in, t), 0, false};
  poot_kir_scalar si = (poot_kir_scalar)r->k->values[in->args[1]].type.scalar;
  p.src = poot__kir_as_int(si, reg(r, in->args[1], t)[0]);
  p.valid = reg(r, in->args[2], t)[0] & 1;
  POOT_TRY(copy_check(r, &p));
  /* The copy may land at any time until the wait: it conflicts with other
   * threads' accesses from its issue on. */
  POOT_TRY(copy_mark(r, &p));
  if (r->pend_len == r->pend_cap) {
    size_t cap = r->pend_cap ? 2 * r->pend_cap : 256;
    pending_copy *np = poot_realloc(r->pend, cap * sizeof *np);
    if (!np) return poot_status_make(POOT_OUT_OF_MEMORY, "kir interp: out of memory");
    r->pend = np;
    r->pend_cap = cap;
  }
  r->pend[r->pend_len++] = p;
  return POOT_OK_STATUS;
}

static poot_status exec_block(run *r, const poot_kir_block *blk, const uint8_t *mask);

static poot_status exec_if(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  poot_status st = POOT_OK_STATUS;
  uint8_t *m = poot_malloc(2 * (size_t)r->T);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "kir interp: out of memory");
  uint8_t *mt = m, *me = m + r->T;
  for (uint32_t t = 0; t < r->T; t++) {
    bool c = mask[t] && (reg(r, in->args[0], t)[0] & 1);
    mt[t] = mask[t] && c;
    me[t] = mask[t] && !c;
  }
  if (any(mt, r->T)) st = exec_block(r, &in->body, mt);
  if (!st && any(me, r->T)) st = exec_block(r, &in->else_body, me);
  poot_free(m);
  return st;
}

static poot_status exec_for(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  poot_status st = POOT_OK_STATUS;
  int64_t *iv = poot_malloc(sizeof(int64_t) * 3 * (size_t)r->T);
  uint8_t *m = poot_malloc(r->T);
  if (!iv || !m) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "kir interp: out of memory");
    goto done;
  }
  int64_t *end = iv + r->T, *step = iv + 2 * (size_t)r->T;
  for (uint32_t t = 0; t < r->T; t++) {
    m[t] = mask[t];
    if (!mask[t]) continue;
    iv[t] = poot__kir_as_int(s, reg(r, in->args[0], t)[0]);
    end[t] = poot__kir_as_int(s, reg(r, in->args[1], t)[0]);
    step[t] = poot__kir_as_int(s, reg(r, in->args[2], t)[0]);
    if (step[t] <= 0 && iv[t] < end[t]) {
      st = fault(r, in, t, POOT_INVALID_ARGUMENT, "for step %" PRId64 " is not positive", step[t]);
      goto done;
    }
  }
  for (;;) {
    bool live = false;
    for (uint32_t t = 0; t < r->T; t++) {
      if (m[t] && iv[t] >= end[t]) m[t] = 0;
      if (m[t]) {
        live = true;
        reg(r, in->result, t)[0] = poot__kir_from_int(s, (uint64_t)iv[t]);
      }
    }
    if (!live) break;
    /* Each iteration counts as a statement, so that a loop whose body is
     * empty (or does nothing) is bounded by max_steps as well. */
    if (++r->steps > r->max_steps) {
      st = fault(r, in, 0, POOT_TIMEOUT, "more than %" PRIu64 " statements executed", r->max_steps);
      goto done;
    }
    st = exec_block(r, &in->body, m);
    if (st) goto done;
    /* Values are 32-bit and held in 64: a step past the type's range ends
     * the loop instead of wrapping. */
    for (uint32_t t = 0; t < r->T; t++)
      if (m[t]) iv[t] += step[t];
  }
done:
  poot_free(iv);
  poot_free(m);
  return st;
}

/* The routines of the classes that act on the whole workgroup at once; every
 * other class runs its thread routine on each thread the mask enables. */
typedef poot_status (*group_fn)(run *r, const poot_kir_inst *in, const uint8_t *mask);

static poot_status g_barrier(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  for (uint32_t t = 0; t < r->T; t++)
    if (!mask[t])
      return fault(r, in, t, POOT_INVALID_ARGUMENT,
                   "barrier not reached by every thread of the workgroup");
  r->epoch++;
  return POOT_OK_STATUS;
}

static poot_status g_check(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  for (uint32_t t = 0; t < r->T; t++) {
    if (!mask[t] || (reg(r, in->args[0], t)[0] & 1)) continue;
    if (r->o->error_word) {
      *r->o->error_word |= 1u << (in->imm & 31);
      continue;
    }
    return fault(r, in, t, POOT_KERNEL_FAULT, "check failed with trap code %u", (unsigned)in->imm);
  }
  return POOT_OK_STATUS;
}

static poot_status g_priv_store(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  const poot_kir_private *p = &r->k->privates[in->ref];
  for (uint32_t t = 0; t < r->T; t++)
    if (mask[t])
      memcpy(&r->priv[(r->priv_off[in->ref] + (size_t)t * p->count + in->imm) * LANES],
             reg(r, in->args[0], t), LANES * sizeof(uint64_t));
  return POOT_OK_STATUS;
}

static const group_fn GROUP_FN[POOT_KIR_CLASS_COUNT] = {
    [POOT_KIR_CLASS_IF] = exec_if,        [POOT_KIR_CLASS_FOR] = exec_for,
    [POOT_KIR_CLASS_BARRIER] = g_barrier, [POOT_KIR_CLASS_SUBGROUP] = subgroup_op,
    [POOT_KIR_CLASS_CHECK] = g_check,     [POOT_KIR_CLASS_PRIV_STORE] = g_priv_store,
    [POOT_KIR_CLASS_MATRIX] = g_matrix,
};

static poot_status exec_inst(run *r, const poot_kir_inst *in, const uint8_t *mask) {
  if (++r->steps > r->max_steps)
    return fault(r, in, 0, POOT_TIMEOUT, "more than %" PRIu64 " statements executed", r->max_steps);
  poot_kir_op_class cls = poot__kir_op_class(in->op);
  if (cls >= POOT_KIR_CLASS_COUNT || (!GROUP_FN[cls] && !THREAD_FN[cls]))
    return fault(r, in, 0, POOT_INVALID_ARGUMENT, "statement kind not handled by the interpreter");
  if (GROUP_FN[cls]) return GROUP_FN[cls](r, in, mask);
  for (uint32_t t = 0; t < r->T; t++)
    if (mask[t]) POOT_TRY(THREAD_FN[cls](r, in, t));
  return POOT_OK_STATUS;
}

static poot_status exec_block(run *r, const poot_kir_block *blk, const uint8_t *mask) {
  for (const poot_kir_inst *in = blk->first; in; in = in->next) POOT_TRY(exec_inst(r, in, mask));
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------------- run */

static poot_status check_options(const poot_kir_kernel *k, const poot_kir_interp_options *o,
                                 uint32_t sg) {
  if (o->buffer_count != k->binding_count || (k->binding_count && !o->buffers))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir interp: kernel '%s' has %u bindings, %zu buffers given", k->name,
                            k->binding_count, o->buffer_count);
  uint32_t push = 0;
  for (uint32_t i = 0; i < k->param_count; i++) push += k->params[i].kind == POOT_KIR_PARAM_PUSH;
  if (push && (o->param_count < k->param_count || !o->params))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir interp: kernel '%s' has %u params, %zu values given", k->name,
                            k->param_count, o->param_count);
  if (sg == 0 || sg > 128 || (sg & (sg - 1)))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir interp: subgroup size %u is not a power of two ≤ 128", sg);
  if (k->subgroup_size && o->subgroup_size && o->subgroup_size != k->subgroup_size)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir interp: kernel '%s' was built for subgroup size %u, run asks %u",
                            k->name, k->subgroup_size, o->subgroup_size);
  /* Shared arrays are allocated and cleared per workgroup: keep them to
   * what the interpreter's target description allows (1 MiB). */
  poot_kir_target interp;
  poot_kir_target_init_interp(&interp, sg);
  if (poot_kir_kernel_shared_bytes(k) > interp.shared_memory_bytes)
    return poot_status_make(POOT_UNSUPPORTED,
                            "kir interp: kernel '%s' uses %llu bytes of shared memory; the "
                            "interpreter runs at most %u",
                            k->name, (unsigned long long)poot_kir_kernel_shared_bytes(k),
                            interp.shared_memory_bytes);
  for (size_t i = 0; i < o->buffer_count; i++)
    if (o->buffers[i].size % poot_kir_scalar_size(k->bindings[i].elem))
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "kir interp: kernel '%s': buffer %zu ('%s') has %zu bytes, not a "
                              "whole number of %s elements",
                              k->name, i, k->bindings[i].name, o->buffers[i].size,
                              poot_kir_scalar_name(k->bindings[i].elem));
  return POOT_OK_STATUS;
}

poot_status poot_kir_interp_run(const poot_kir_kernel *k, const poot_kir_interp_options *o) {
  if (!k || !o)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir interp: NULL kernel or options");
  uint32_t sg = o->subgroup_size ? o->subgroup_size : (k->subgroup_size ? k->subgroup_size : 32);
  POOT_TRY(check_options(k, o, sg));
  run r;
  memset(&r, 0, sizeof r);
  r.k = k;
  r.o = o;
  r.T = poot_kir_kernel_threads(k);
  r.sg = sg;
  r.race = !o->no_race_check;
  r.max_steps = o->max_steps ? o->max_steps : 1000000000ull;
  poot_status st = POOT_OK_STATUS;
  size_t priv_elems = 0;
  r.priv_off = poot_calloc(k->private_count + 1, sizeof(size_t));
  r.shared = poot_calloc(k->shared_count + 1, sizeof(unsigned char *));
  r.shadows = r.race ? poot_calloc(k->shared_count + 1, sizeof(shadow *)) : NULL;
  r.vals = poot_calloc(((size_t)k->value_count + 1) * r.T * LANES, sizeof(uint64_t));
  r.committed = poot_calloc(r.T, sizeof(uint32_t));
  if (!r.priv_off || !r.shared || (r.race && !r.shadows) || !r.vals || !r.committed) goto oom;
  for (uint32_t i = 0; i < k->private_count; i++) {
    r.priv_off[i] = priv_elems;
    priv_elems += (size_t)k->privates[i].count * r.T;
  }
  r.priv = poot_calloc(priv_elems + 1, LANES * sizeof(uint64_t));
  if (!r.priv) goto oom;
  for (uint32_t i = 0; i < k->shared_count; i++) {
    r.shared[i] = poot_calloc(k->shared[i].count, poot_kir_scalar_size(k->shared[i].elem));
    if (!r.shared[i]) goto oom;
    if (r.race) {
      r.shadows[i] = poot_calloc(k->shared[i].count, sizeof(shadow));
      if (!r.shadows[i]) goto oom;
    }
  }
  uint8_t *full = poot_malloc(r.T);
  if (!full) goto oom;
  memset(full, 1, r.T);
  uint32_t grid[3];
  for (int d = 0; d < 3; d++) grid[d] = o->grid[d] ? o->grid[d] : 1;
  for (uint32_t z = 0; z < grid[2] && !st; z++)
    for (uint32_t y = 0; y < grid[1] && !st; y++)
      for (uint32_t x = 0; x < grid[0] && !st; x++) {
        r.wg[0] = x, r.wg[1] = y, r.wg[2] = z;
        /* Each workgroup counts as a statement, so that a large grid over
         * an empty (or short) body is bounded by max_steps too. */
        if (++r.steps > r.max_steps) {
          st = fault(&r, NULL, 0, POOT_TIMEOUT,
                     "more than %" PRIu64 " statements executed (grid %ux%ux%u)", r.max_steps,
                     grid[0], grid[1], grid[2]);
          break;
        }
        /* Fresh per workgroup: private arrays start at zero; shared memory
         * starts unwritten (reads of it are reported). */
        memset(r.priv, 0, (priv_elems + 1) * LANES * sizeof(uint64_t));
        for (uint32_t i = 0; i < k->shared_count; i++) {
          memset(r.shared[i], 0, k->shared[i].count * poot_kir_scalar_size(k->shared[i].elem));
          if (r.race)
            for (uint32_t e = 0; e < k->shared[i].count; e++)
              r.shadows[i][e] = (shadow){-1, -1, 0, 0};
        }
        r.epoch = 1;
        /* Copies never waited for die with the workgroup's shared memory. */
        r.pend_len = 0;
        memset(r.committed, 0, r.T * sizeof(uint32_t));
        st = exec_block(&r, &k->body, full);
      }
  poot_free(full);
  goto done;
oom:
  st = poot_status_make(POOT_OUT_OF_MEMORY, "kir interp: out of memory running '%s'", k->name);
done:
  if (r.shared)
    for (uint32_t i = 0; i < k->shared_count; i++) poot_free(r.shared[i]);
  if (r.shadows)
    for (uint32_t i = 0; i < k->shared_count; i++) poot_free(r.shadows[i]);
  poot_free(r.shared);
  poot_free(r.shadows);
  poot_free(r.priv_off);
  poot_free(r.priv);
  poot_free(r.vals);
  poot_free(r.pend);
  poot_free(r.committed);
  return st;
}
