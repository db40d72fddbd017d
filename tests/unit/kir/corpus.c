/* The KIR test-kernel corpus: framework, comparison, and the kernels of
 * elementwise, reduction, GEMV, scan, histogram and scatter work. The
 * conversion, math and arithmetic cases are in corpus_ops.c. */
#include "corpus_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ framework */

uint64_t kc_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float kc_randf(uint64_t *state, float lo, float hi) {
  double u = (double)(kc_rand(state) >> 11) * (1.0 / 9007199254740992.0);
  return (float)(lo + (hi - lo) * u);
}

poot_status kc_make(const char *name, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t sg,
                    kc_body_fn body, const poot_kir_corpus_case *c, const poot_kir_target *target,
                    poot_kir_kernel **out) {
  *out = NULL;
  poot_kir_target interp;
  if (!target) {
    poot_kir_target_init_interp(&interp, 32);
    target = &interp;
  }
  poot_kir_kernel_desc d = {name, {wx, wy, wz}, sg};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&d, &b));
  poot_status st = body(b, c, target, sg);
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  poot_kir_kernel *k = NULL;
  POOT_TRY(poot_kir_builder_finish(b, &k));
  st = poot_kir_verify(k, target);
  if (st) {
    poot_kir_kernel_destroy(k);
    return st;
  }
  *out = k;
  return POOT_OK_STATUS;
}

/* The subgroup size a case builds for: the target's (32 when it has none,
 * which the verifier then rejects for cases that need subgroup ops). */
uint32_t kc_sg(const poot_kir_target *t) {
  return t && t->subgroup_size ? t->subgroup_size : 32;
}

poot_status kc_run_init(poot_kir_corpus_run *r, const poot_kir_kernel *k, uint32_t size) {
  memset(r, 0, sizeof *r);
  r->size = size;
  r->grid[0] = r->grid[1] = r->grid[2] = 1;
  r->buffer_count = k->binding_count;
  r->param_count = k->param_count;
  if (k->binding_count > POOT_KIR_CORPUS_MAX_BUFFERS || k->param_count > POOT_KIR_CORPUS_MAX_PARAMS)
    return poot_status_make(POOT_INTERNAL, "corpus: kernel '%s' has too many bindings", k->name);
  return POOT_OK_STATUS;
}

void *kc_buf(poot_kir_corpus_run *r, uint32_t i, size_t bytes) {
  r->buffers[i].size = bytes;
  r->buffers[i].data = poot_calloc(bytes ? bytes : 1, 1);
  return r->buffers[i].data;
}

void *kc_expect(poot_kir_corpus_run *r, uint32_t i, poot_kir_corpus_cmp cmp, double abs_tol,
                double rel_tol, bool interp_exact) {
  size_t n = r->buffers[i].size;
  r->expected[i] = poot_malloc(n ? n : 1);
  if (!r->expected[i]) return NULL;
  if (n) memcpy(r->expected[i], r->buffers[i].data, n);
  r->cmp[i] = cmp;
  r->abs_tol[i] = abs_tol;
  r->rel_tol[i] = rel_tol;
  r->interp_exact[i] = interp_exact;
  return r->expected[i];
}

poot_status kc_oom(poot_kir_corpus_run *r) {
  poot_kir_corpus_run_deinit(r);
  return poot_status_make(POOT_OUT_OF_MEMORY, "corpus: out of memory preparing a run");
}

void poot_kir_corpus_run_deinit(poot_kir_corpus_run *r) {
  if (!r) return;
  for (int i = 0; i < POOT_KIR_CORPUS_MAX_BUFFERS; i++) {
    poot_free(r->buffers[i].data);
    poot_free(r->expected[i]);
    r->buffers[i].data = NULL;
    r->expected[i] = NULL;
  }
}

uint32_t kc_f32u(float f) {
  return poot_f32_bits(f);
}

/* Reads element i of a buffer of `s` as a double (floats) or integer. */
static double elem_f(poot_kir_scalar s, const void *p, size_t i) {
  const unsigned char *b = p;
  uint16_t h;
  uint32_t u;
  switch (s) {
    case POOT_KIR_F16:
      memcpy(&h, b + i * 2, 2);
      return poot_f16_to_f32(h);
    case POOT_KIR_BF16:
      memcpy(&h, b + i * 2, 2);
      return poot_bf16_to_f32(h);
    default:
      memcpy(&u, b + i * 4, 4);
      return poot_f32_from_bits(u);
  }
}

static uint64_t elem_bits(poot_kir_scalar s, const void *p, size_t i) {
  size_t es = poot_kir_scalar_size(s);
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)p + i * es, es);
  return v;
}

poot_status poot_kir_corpus_compare(const poot_kir_kernel *k, const poot_kir_corpus_run *r,
                                    const uint32_t *error_word, bool exact) {
  if (error_word && *error_word != r->expected_error_bits)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "corpus: kernel '%s': error word 0x%08x, expected 0x%08x", k->name,
                            *error_word, r->expected_error_bits);
  for (size_t i = 0; i < r->buffer_count; i++) {
    if (r->cmp[i] == POOT_KIR_CORPUS_CMP_NONE || !r->expected[i]) continue;
    poot_kir_scalar s = k->bindings[i].elem;
    size_t es = poot_kir_scalar_size(s);
    size_t n = r->buffers[i].size / es;
    bool isf = poot_kir_scalar_is_float(s);
    bool bitwise = r->cmp[i] == POOT_KIR_CORPUS_CMP_EXACT || (exact && r->interp_exact[i]);
    for (size_t e = 0; e < n; e++) {
      uint64_t gb = elem_bits(s, r->buffers[i].data, e), wb = elem_bits(s, r->expected[i], e);
      if (gb == wb) continue;
      if (isf) {
        double g = elem_f(s, r->buffers[i].data, e), w = elem_f(s, r->expected[i], e);
        if (isnan(g) && isnan(w)) continue; /* any NaN matches any NaN */
        if (!bitwise && !isnan(g) && !isnan(w) && !isinf(w) &&
            fabs(g - w) <= r->abs_tol[i] + r->rel_tol[i] * fabs(w))
          continue;
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "corpus: kernel '%s' size %u: binding '%s' element %zu: got %.9g "
                                "(0x%llx), expected %.9g (0x%llx)%s",
                                k->name, r->size, k->bindings[i].name, e, g, (unsigned long long)gb,
                                w, (unsigned long long)wb, bitwise ? " bit-exact" : "");
      }
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "corpus: kernel '%s' size %u: binding '%s' element %zu: got %lld "
                              "(0x%llx), expected %lld (0x%llx)",
                              k->name, r->size, k->bindings[i].name, e, (long long)gb,
                              (unsigned long long)gb, (long long)wb, (unsigned long long)wb);
    }
  }
  return POOT_OK_STATUS;
}

/* Encodes/decodes a float of a storage type. */
uint64_t kc_enc_f(poot_kir_scalar s, float f) {
  if (s == POOT_KIR_F16) return poot_f32_to_f16(f);
  if (s == POOT_KIR_BF16) return poot_f32_to_bf16(f);
  return poot_f32_bits(f);
}

float kc_dec_f(poot_kir_scalar s, uint64_t b) {
  if (s == POOT_KIR_F16) return poot_f16_to_f32((uint16_t)b);
  if (s == POOT_KIR_BF16) return poot_bf16_to_f32((uint16_t)b);
  return poot_f32_from_bits((uint32_t)b);
}

void kc_put(poot_kir_scalar s, void *p, size_t i, uint64_t bits) {
  size_t es = poot_kir_scalar_size(s);
  memcpy((unsigned char *)p + i * es, &bits, es);
}

uint64_t kc_get(poot_kir_scalar s, const void *p, size_t i) {
  return elem_bits(s, p, i);
}

/* Common kernel pieces. */
poot_status kc_binding(poot_kir_builder *b, const char *name, uint32_t binding,
                       poot_kir_scalar elem, poot_kir_access access, uint32_t *out_ref) {
  poot_kir_binding d = {name, binding, elem, access, 16, false};
  return poot_kir_add_binding(b, &d, out_ref);
}

poot_status kc_push(poot_kir_builder *b, const char *name, poot_kir_scalar type,
                    poot_kir_value *out) {
  uint32_t idx;
  poot_kir_param p = {name, type, POOT_KIR_PARAM_PUSH, 0, 0};
  POOT_TRY(poot_kir_add_param(b, &p, &idx));
  return poot_kir_param_get(b, idx, out);
}

poot_status kc_u32(poot_kir_builder *b, uint32_t v, poot_kir_value *out) {
  return poot_kir_const_u32(b, v, out);
}

poot_status kc_bin(poot_kir_builder *b, poot_kir_op op, poot_kir_value x, poot_kir_value y,
                   poot_kir_value *out) {
  return poot_kir_binary(b, op, x, y, out);
}

/* if (gid < n) — opens a block the caller ends. */
poot_status kc_guard(poot_kir_builder *b, poot_kir_value gid, poot_kir_value n) {
  poot_kir_value c;
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_LT, gid, n, &c));
  return poot_kir_if_begin(b, c);
}

static uint32_t div_up(uint32_t a, uint32_t b) {
  return (a + b - 1) / b;
}

/* ------------------------------------------------------------ vadd_<T> */

static poot_kir_scalar wide_of(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
    case POOT_KIR_I16:
      return POOT_KIR_I32;
    case POOT_KIR_U8:
    case POOT_KIR_U16:
      return POOT_KIR_U32;
    case POOT_KIR_BF16:
      return POOT_KIR_F32;
    default:
      return s;
  }
}

static poot_status vadd_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t lanes = c->arg1 ? c->arg1 : 1;
  uint32_t ra, rb, ro;
  poot_kir_value n, gid, x, y, z, idx, lanesv;
  POOT_TRY(kc_binding(b, "a", 0, s, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "b", 1, s, POOT_KIR_ACCESS_READ, &rb));
  POOT_TRY(kc_binding(b, "out", 2, s, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n)); /* in vectors of `lanes` */
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(kc_u32(b, lanes, &lanesv));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, gid, lanesv, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, idx, lanes, &x));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rb, idx, lanes, &y));
  poot_kir_scalar w = wide_of(s);
  if (w != s) {
    POOT_TRY(poot_kir_convert(b, w, x, &x));
    POOT_TRY(poot_kir_convert(b, w, y, &y));
  }
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, x, y, &z));
  if (w != s) POOT_TRY(poot_kir_convert(b, s, z, &z));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, z));
  return poot_kir_end(b);
}

static poot_status vadd_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, vadd_body, c, t, out);
}

static poot_status vadd_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t lanes = c->arg1 ? c->arg1 : 1;
  size_t es = poot_kir_scalar_size(s);
  uint32_t vecs = size;
  size_t n = (size_t)vecs * lanes;
  POOT_TRY(kc_run_init(r, k, size));
  void *a = kc_buf(r, 0, n * es), *bb = kc_buf(r, 1, n * es), *o = kc_buf(r, 2, n * es);
  if (!a || !bb || !o) return kc_oom(r);
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++) {
    if (poot_kir_scalar_is_float(s)) {
      kc_put(s, a, i, kc_enc_f(s, kc_randf(&st, -100.0f, 100.0f)));
      kc_put(s, bb, i, kc_enc_f(s, kc_randf(&st, -100.0f, 100.0f)));
    } else {
      kc_put(s, a, i, kc_rand(&st));
      kc_put(s, bb, i, kc_rand(&st));
    }
  }
  void *e = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (size_t i = 0; i < n; i++) {
    uint64_t x = kc_get(s, a, i), y = kc_get(s, bb, i), z;
    if (poot_kir_scalar_is_float(s)) {
      float fx = kc_dec_f(s, x), fy = kc_dec_f(s, y);
      float fz = fx + fy;
      z = kc_enc_f(s, fz);
    } else {
      z = x + y; /* wraps; kc_put keeps the low bytes */
    }
    kc_put(s, e, i, z);
  }
  r->params[0] = vecs;
  r->grid[0] = div_up(vecs, 64);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------- tree reduction (shared) */

#define RED_WG 128u
#define RED_ITEMS 4u

static poot_status reduce_wg_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                  const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t rx, ro, sh, acc;
  poot_kir_value n, tid, wgid, base, chunk, zero, one, j, idx, x, a0, a1, cmp, wgsz, cnt;
  POOT_TRY(kc_binding(b, "x", 0, s, POOT_KIR_ACCESS_READ, &rx));
  POOT_TRY(kc_binding(b, "partial", 1, s, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_add_shared(b, "sums", s, RED_WG, &sh));
  POOT_TRY(poot_kir_add_private(b, "acc", poot_kir_type_make(s, 1), 1, &acc));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &tid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wgid));
  POOT_TRY(kc_u32(b, RED_WG * RED_ITEMS, &chunk));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, wgid, chunk, &base));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, base, tid, &base));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(kc_u32(b, RED_ITEMS, &cnt));
  POOT_TRY(kc_u32(b, RED_WG, &wgsz));
  /* acc = sum over j of x[base + j*wg] for the elements that exist. */
  POOT_TRY(poot_kir_for_begin(b, zero, cnt, one, &j));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, j, wgsz, &idx));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, base, idx, &idx));
  POOT_TRY(kc_guard(b, idx, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, idx, 1, &x));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a0));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, a0, x, &a1));
  POOT_TRY(poot_kir_priv_store(b, acc, 0, a1));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a0));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, tid, a0));
  POOT_TRY(poot_kir_barrier(b));
  /* Tree: for k in 0..log2(wg): s = wg/2 >> k; if tid < s: sums[tid] += sums[tid+s]. */
  poot_kir_value steps, k, half, stride, other, mine, sum;
  uint32_t log2wg = 0;
  while ((1u << log2wg) < RED_WG) log2wg++;
  POOT_TRY(kc_u32(b, log2wg, &steps));
  POOT_TRY(kc_u32(b, RED_WG / 2, &half));
  POOT_TRY(poot_kir_for_begin(b, zero, steps, one, &k));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SHR, half, k, &stride));
  POOT_TRY(kc_guard(b, tid, stride));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, tid, stride, &other));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, tid, 1, &mine));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, other, 1, &other));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, mine, other, &sum));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, tid, sum));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_barrier(b));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_EQ, tid, zero, &cmp));
  POOT_TRY(poot_kir_if_begin(b, cmp));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, zero, 1, &sum));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, wgid, sum));
  return poot_kir_end(b);
}

static poot_status reduce_wg_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                   poot_kir_kernel **out) {
  return kc_make(c->name, RED_WG, 1, 1, 0, reduce_wg_body, c, t, out);
}

static poot_status reduce_wg_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                     uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t groups = div_up(size, RED_WG * RED_ITEMS);
  POOT_TRY(kc_run_init(r, k, size));
  void *x = kc_buf(r, 0, (size_t)size * 4), *o = kc_buf(r, 1, (size_t)groups * 4);
  if (!x || !o) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++)
    kc_put(s, x, i, s == POOT_KIR_F32 ? kc_f32u(kc_randf(&st, -1.0f, 1.0f)) : kc_rand(&st) >> 40);
  void *e = kc_expect(r, 1, s == POOT_KIR_F32 ? POOT_KIR_CORPUS_CMP_TOL : POOT_KIR_CORPUS_CMP_EXACT,
                      1e-4, 1e-5, true);
  if (!e) return kc_oom(r);
  for (uint32_t g = 0; g < groups; g++) {
    uint64_t sums[RED_WG];
    for (uint32_t t = 0; t < RED_WG; t++) {
      uint64_t acc = 0;
      for (uint32_t j = 0; j < RED_ITEMS; j++) {
        uint32_t i = g * RED_WG * RED_ITEMS + t + j * RED_WG;
        if (i >= size) continue;
        uint64_t v = kc_get(s, x, i);
        if (s == POOT_KIR_F32) {
          float f = poot_f32_from_bits((uint32_t)acc) + poot_f32_from_bits((uint32_t)v);
          acc = poot_f32_bits(f);
        } else {
          acc = (uint32_t)(acc + v);
        }
      }
      sums[t] = acc;
    }
    for (uint32_t stride = RED_WG / 2; stride > 0; stride >>= 1)
      for (uint32_t t = 0; t < stride; t++) {
        if (s == POOT_KIR_F32) {
          float f = poot_f32_from_bits((uint32_t)sums[t]) +
                    poot_f32_from_bits((uint32_t)sums[t + stride]);
          sums[t] = poot_f32_bits(f);
        } else {
          sums[t] = (uint32_t)(sums[t] + sums[t + stride]);
        }
      }
    kc_put(s, e, g, sums[0]);
  }
  r->params[0] = size;
  r->grid[0] = groups;
  return POOT_OK_STATUS;
}

/* ---------------------------------------------------- subgroup reductions */

#define SG_WG 64u

/* arg0: element type; arg1: 0 = sg_reduce_add, 1 = max and min, 2 = xor butterfly. */
static poot_status reduce_sg_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                  const poot_kir_target *t, uint32_t sg) {
  (void)t;
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t rx, ro, ro2 = 0;
  poot_kir_value n, gid, lane, sgid, wgid, x, v, last, idx, zero, isz, per, cond, ident, ident2;
  POOT_TRY(kc_binding(b, "x", 0, s, POOT_KIR_ACCESS_READ, &rx));
  POOT_TRY(kc_binding(b, "out", 1, s, POOT_KIR_ACCESS_WRITE, &ro));
  if (c->arg1 == 1) POOT_TRY(kc_binding(b, "out_min", 2, s, POOT_KIR_ACCESS_WRITE, &ro2));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  /* Out-of-range threads still take part (subgroup ops need every lane):
   * they read a clamped element and contribute the identity. */
  POOT_TRY(kc_u32(b, 1, &v));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, n, v, &last));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, gid, last, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, idx, 1, &x));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, gid, n, &cond));
  if (c->arg1 == 1) {
    POOT_TRY(poot_kir_const(b, s, s == POOT_KIR_I32 ? 0x80000000u : 0, &ident));
    POOT_TRY(poot_kir_const(b, s, s == POOT_KIR_I32 ? 0x7fffffffu : 0xffffffffu, &ident2));
  } else {
    POOT_TRY(poot_kir_const(b, s, 0, &ident));
    ident2 = ident;
  }
  poot_kir_value v1, v2 = 0, r1, r2 = 0;
  POOT_TRY(poot_kir_select(b, cond, x, ident, &v1));
  if (c->arg1 == 0) {
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, v1, &r1));
  } else if (c->arg1 == 1) {
    POOT_TRY(poot_kir_select(b, cond, x, ident2, &v2));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MAX, v1, &r1));
    POOT_TRY(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_MIN, v2, &r2));
  } else {
    r1 = v1;
    for (uint32_t m = sg / 2; m >= 1; m /= 2) {
      poot_kir_value o;
      POOT_TRY(poot_kir_subgroup_shuffle_xor(b, r1, m, &o));
      POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, r1, o, &r1));
    }
  }
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_ID, 0, &sgid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wgid));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, SG_WG / sg, &per));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, wgid, per, &isz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, isz, sgid, &isz));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_EQ, lane, zero, &cond));
  POOT_TRY(poot_kir_if_begin(b, cond));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, isz, r1));
  if (c->arg1 == 1) POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro2, isz, r2));
  return poot_kir_end(b);
}

static poot_status reduce_sg_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                   poot_kir_kernel **out) {
  uint32_t sg = kc_sg(t);
  if (sg > SG_WG)
    return poot_status_make(POOT_UNSUPPORTED, "corpus: %s needs a subgroup of at most %u lanes",
                            c->name, SG_WG);
  return kc_make(c->name, SG_WG, 1, 1, sg, reduce_sg_body, c, t, out);
}

static uint64_t ref_op(poot_kir_scalar s, int op, uint64_t a, uint64_t b) {
  if (s == POOT_KIR_F32) {
    float x = poot_f32_from_bits((uint32_t)a), y = poot_f32_from_bits((uint32_t)b);
    float z = x + y;
    return poot_f32_bits(z);
  }
  if (op == 0) return (uint32_t)(a + b);
  int64_t x = s == POOT_KIR_I32 ? (int32_t)a : (int64_t)(uint32_t)a;
  int64_t y = s == POOT_KIR_I32 ? (int32_t)b : (int64_t)(uint32_t)b;
  if (op == 1) return x > y ? a : b;
  return x < y ? a : b;
}

static poot_status reduce_sg_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                     uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  uint32_t sg = k->subgroup_size;
  uint32_t groups = div_up(size, SG_WG);
  uint32_t outs = groups * (SG_WG / sg);
  POOT_TRY(kc_run_init(r, k, size));
  void *x = kc_buf(r, 0, (size_t)size * 4), *o = kc_buf(r, 1, (size_t)outs * 4);
  void *o2 = c->arg1 == 1 ? kc_buf(r, 2, (size_t)outs * 4) : (void *)1;
  if (!x || !o || !o2) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++)
    kc_put(s, x, i, s == POOT_KIR_F32 ? kc_f32u(kc_randf(&st, -1.0f, 1.0f)) : kc_rand(&st));
  bool isf = s == POOT_KIR_F32;
  /* Reductions have no fixed order on GPUs; the butterfly (arg1 == 2) does. */
  void *e = kc_expect(r, 1, isf ? POOT_KIR_CORPUS_CMP_TOL : POOT_KIR_CORPUS_CMP_EXACT, 1e-5 * sg,
                      1e-5, true);
  void *e2 = c->arg1 == 1 ? kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true) : (void *)1;
  if (!e || !e2) return kc_oom(r);
  for (uint32_t g = 0; g < outs; g++) {
    uint64_t vals[128] = {0}, vals2[128] = {0};
    for (uint32_t l = 0; l < sg; l++) {
      uint32_t i = g * sg + l;
      bool in = i < size;
      uint64_t xv = kc_get(s, x, in ? i : size - 1);
      uint64_t id1 = c->arg1 == 1 && s == POOT_KIR_I32 ? 0x80000000u : 0;
      uint64_t id2 = s == POOT_KIR_I32 ? 0x7fffffffu : 0xffffffffu;
      vals[l] = in ? xv : id1;
      vals2[l] = in ? xv : id2;
    }
    uint64_t r1 = vals[0], r2 = vals2[0];
    if (c->arg1 == 2) {
      for (uint32_t m = sg / 2; m >= 1; m /= 2) {
        uint64_t nv[128];
        for (uint32_t l = 0; l < sg; l++) nv[l] = ref_op(s, 0, vals[l], vals[l ^ m]);
        memcpy(vals, nv, sizeof(uint64_t) * sg);
      }
      r1 = vals[0];
    } else {
      for (uint32_t l = 1; l < sg; l++) {
        r1 = ref_op(s, c->arg1 == 1 ? 1 : 0, r1, vals[l]);
        r2 = ref_op(s, 2, r2, vals2[l]);
      }
    }
    kc_put(s, e, g, r1);
    if (c->arg1 == 1) kc_put(s, e2, g, r2);
  }
  if (c->arg1 == 2) r->cmp[1] = POOT_KIR_CORPUS_CMP_EXACT; /* fixed order: exact everywhere */
  r->params[0] = size;
  r->grid[0] = groups;
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------ tiled GEMV */

#define GEMV_WG 64u
#define GEMV_ROWS 4u
#define GEMV_TK (GEMV_WG * 4u)

/* y[r] = sum_k W[r*K + k] * x[k]: a workgroup computes GEMV_ROWS rows; x is
 * staged through shared memory in tiles of GEMV_TK; each thread takes four
 * consecutive k of a tile (vec4 loads) for every row, issuing the four row
 * loads before the FMAs; partial sums are reduced by a tree in shared
 * memory. K is a multiple of GEMV_TK. */
static poot_status gemv_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t rw, rx, ry, xs, red, acc;
  poot_kir_value M, K, tid, wgid, r0, zero, one, four, tk, last, t4, kt, xv, xk;
  POOT_TRY(kc_binding(b, "w", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &rw));
  POOT_TRY(kc_binding(b, "x", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ, &rx));
  POOT_TRY(kc_binding(b, "y", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, &ry));
  POOT_TRY(kc_push(b, "m", POOT_KIR_U32, &M));
  POOT_TRY(kc_push(b, "k", POOT_KIR_U32, &K));
  POOT_TRY(poot_kir_add_shared(b, "xs", POOT_KIR_F32, GEMV_TK, &xs));
  POOT_TRY(poot_kir_add_shared(b, "red", POOT_KIR_F32, GEMV_ROWS * GEMV_WG, &red));
  POOT_TRY(poot_kir_add_private(b, "acc", poot_kir_type_make(POOT_KIR_F32, 1), GEMV_ROWS, &acc));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &tid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_WORKGROUP_ID, 0, &wgid));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(kc_u32(b, 4, &four));
  POOT_TRY(kc_u32(b, GEMV_TK, &tk));
  POOT_TRY(kc_u32(b, GEMV_ROWS, &r0));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, wgid, r0, &r0));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, M, one, &last));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, tid, four, &t4));
  POOT_TRY(poot_kir_for_begin(b, zero, K, tk, &kt));
  {
    poot_kir_value xi, col, rowoff[GEMV_ROWS], w[GEMV_ROWS];
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, kt, t4, &xi));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, xi, 4, &xv));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, xs, t4, xv));
    POOT_TRY(poot_kir_barrier(b));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, xs, t4, 4, &xk));
    col = xi;
    /* Four row loads in flight before any arithmetic. Rows past M read the
     * last row (their result is never stored). */
    for (uint32_t r = 0; r < GEMV_ROWS; r++) {
      poot_kir_value rr, row, off;
      POOT_TRY(kc_u32(b, r, &rr));
      POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, r0, rr, &row));
      POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, row, last, &row));
      POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, row, K, &off));
      POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, off, col, &rowoff[r]));
      POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rw, rowoff[r], 4, &w[r]));
    }
    poot_kir_value xl[4];
    for (uint32_t l = 0; l < 4; l++) POOT_TRY(poot_kir_extract(b, xk, l, &xl[l]));
    for (uint32_t r = 0; r < GEMV_ROWS; r++) {
      poot_kir_value a;
      POOT_TRY(poot_kir_priv_load(b, acc, r, &a));
      for (uint32_t l = 0; l < 4; l++) {
        poot_kir_value wl;
        POOT_TRY(poot_kir_extract(b, w[r], l, &wl));
        POOT_TRY(poot_kir_fma(b, wl, xl[l], a, &a));
      }
      POOT_TRY(poot_kir_priv_store(b, acc, r, a));
    }
    POOT_TRY(poot_kir_barrier(b));
  }
  POOT_TRY(poot_kir_end(b));
  /* red[r*WG + tid] = acc[r]; tree over tid. */
  poot_kir_value wgv, slot[GEMV_ROWS];
  POOT_TRY(kc_u32(b, GEMV_WG, &wgv));
  for (uint32_t r = 0; r < GEMV_ROWS; r++) {
    poot_kir_value rr, a;
    POOT_TRY(kc_u32(b, r * GEMV_WG, &rr));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, rr, tid, &slot[r]));
    POOT_TRY(poot_kir_priv_load(b, acc, r, &a));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, red, slot[r], a));
  }
  POOT_TRY(poot_kir_barrier(b));
  poot_kir_value steps, k, half, stride;
  POOT_TRY(kc_u32(b, 6, &steps)); /* log2(GEMV_WG) */
  POOT_TRY(kc_u32(b, GEMV_WG / 2, &half));
  POOT_TRY(poot_kir_for_begin(b, zero, steps, one, &k));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SHR, half, k, &stride));
  POOT_TRY(kc_guard(b, tid, stride));
  for (uint32_t r = 0; r < GEMV_ROWS; r++) {
    poot_kir_value other, mine, theirs, sum;
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, slot[r], stride, &other));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, red, slot[r], 1, &mine));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, red, other, 1, &theirs));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, mine, theirs, &sum));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, red, slot[r], sum));
  }
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_barrier(b));
  POOT_TRY(poot_kir_end(b));
  /* Thread r < ROWS writes row r0 + r. */
  poot_kir_value nrows, row, src, val;
  POOT_TRY(kc_u32(b, GEMV_ROWS, &nrows));
  POOT_TRY(kc_guard(b, tid, nrows));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, r0, tid, &row));
  POOT_TRY(kc_guard(b, row, M));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, tid, wgv, &src));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, red, src, 1, &val));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ry, row, val));
  POOT_TRY(poot_kir_end(b));
  return poot_kir_end(b);
}

static poot_status gemv_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, GEMV_WG, 1, 1, 0, gemv_body, c, t, out);
}

uint32_t poot__kir_corpus_gemv_k(uint32_t m) {
  return GEMV_TK * (1 + m % 4);
}

static poot_status gemv_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k, uint32_t M,
                                uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  uint32_t K = poot__kir_corpus_gemv_k(M);
  POOT_TRY(kc_run_init(r, k, M));
  float *w = kc_buf(r, 0, (size_t)M * K * 4), *x = kc_buf(r, 1, (size_t)K * 4);
  float *y = kc_buf(r, 2, (size_t)M * 4);
  if (!w || !x || !y) return kc_oom(r);
  uint64_t st = seed;
  for (size_t i = 0; i < (size_t)M * K; i++) w[i] = kc_randf(&st, -1.0f, 1.0f);
  for (uint32_t i = 0; i < K; i++) x[i] = kc_randf(&st, -1.0f, 1.0f);
  float *e = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_TOL, 1e-4, 1e-5, true);
  if (!e) return kc_oom(r);
  for (uint32_t row = 0; row < M; row++) {
    float red[GEMV_WG];
    for (uint32_t t = 0; t < GEMV_WG; t++) {
      float a = 0.0f;
      for (uint32_t kt = 0; kt < K; kt += GEMV_TK)
        for (uint32_t l = 0; l < 4; l++) {
          uint32_t kk = kt + t * 4 + l;
          a = fmaf(w[(size_t)row * K + kk], x[kk], a);
        }
      red[t] = a;
    }
    for (uint32_t s = GEMV_WG / 2; s > 0; s >>= 1)
      for (uint32_t t = 0; t < s; t++) red[t] = red[t] + red[t + s];
    e[row] = red[0];
  }
  r->params[0] = M;
  r->params[1] = K;
  r->grid[0] = div_up(M, GEMV_ROWS);
  return POOT_OK_STATUS;
}

/* ----------------------------------------------------------- prefix sum */

#define SCAN_WG 64u

/* Inclusive scan of each workgroup's 64 elements (Hillis–Steele, double
 * buffered in shared memory). */
static poot_status scan_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ra, ro, sh;
  poot_kir_value n, gid, tid, one, zero, last, idx, x, cond, v, steps, k, off, pin, pout, wgv;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_add_shared(b, "buf", POOT_KIR_U32, 2 * SCAN_WG, &sh));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_ID, 0, &tid));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(kc_u32(b, 0, &zero));
  POOT_TRY(kc_u32(b, SCAN_WG, &wgv));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, n, one, &last));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_MIN, gid, last, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, idx, 1, &x));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, gid, n, &cond));
  POOT_TRY(poot_kir_select(b, cond, x, zero, &v));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, tid, v));
  POOT_TRY(poot_kir_barrier(b));
  POOT_TRY(kc_u32(b, 6, &steps));
  POOT_TRY(poot_kir_for_begin(b, zero, steps, one, &k));
  {
    poot_kir_value parity, cur, has, src, other, add, sum, dst;
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SHL, one, k, &off));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, k, one, &parity));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_MUL, parity, wgv, &pin));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, wgv, pin, &pout));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, pin, tid, &src));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, src, 1, &cur));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_GE, tid, off, &has));
    POOT_TRY(poot_kir_if_begin(b, has));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_SUB, src, off, &other));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, other, 1, &add));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, cur, add, &sum));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, pout, tid, &dst));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, dst, sum));
    POOT_TRY(poot_kir_else_begin(b));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_ADD, pout, tid, &dst));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, dst, cur));
    POOT_TRY(poot_kir_end(b));
    POOT_TRY(poot_kir_barrier(b));
  }
  POOT_TRY(poot_kir_end(b));
  /* Six steps end in the first half. */
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, tid, 1, &v));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, v));
  return poot_kir_end(b);
}

static poot_status scan_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, SCAN_WG, 1, 1, 0, scan_body, c, t, out);
}

static poot_status scan_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, (size_t)size * 4), *o = kc_buf(r, 1, (size_t)size * 4);
  if (!a || !o) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) a[i] = (uint32_t)kc_rand(&st);
  uint32_t *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  uint32_t run = 0;
  for (uint32_t i = 0; i < size; i++) {
    if (i % SCAN_WG == 0) run = 0;
    run += a[i];
    e[i] = run;
  }
  r->params[0] = size;
  r->grid[0] = div_up(size, SCAN_WG);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------------ histograms */

#define HIST_BINS 64u

/* arg0: 0 = global atomics, 1 = shared-memory histogram then global. */
static poot_status hist_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  uint32_t ra, rh, lh = 0;
  poot_kir_value n, gid, tid, x, bin, mask, one, old, zero;
  POOT_TRY(kc_binding(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ra));
  POOT_TRY(kc_binding(b, "hist", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, &rh));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &tid));
  POOT_TRY(kc_u32(b, HIST_BINS - 1, &mask));
  POOT_TRY(kc_u32(b, 1, &one));
  POOT_TRY(kc_u32(b, 0, &zero));
  poot_kir_space sp = POOT_KIR_SPACE_GLOBAL;
  uint32_t href = rh;
  if (c->arg0 == 1) {
    POOT_TRY(poot_kir_add_shared(b, "local_hist", POOT_KIR_U32, HIST_BINS, &lh));
    POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_SHARED, lh, tid, zero));
    POOT_TRY(poot_kir_barrier(b));
    sp = POOT_KIR_SPACE_SHARED;
    href = lh;
  }
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_AND, x, mask, &bin));
  POOT_TRY(poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, sp, href, bin, one, &old));
  POOT_TRY(poot_kir_end(b));
  if (c->arg0 == 1) {
    poot_kir_value cnt, nz;
    POOT_TRY(poot_kir_barrier(b));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_SHARED, lh, tid, 1, &cnt));
    POOT_TRY(kc_bin(b, POOT_KIR_OP_NE, cnt, zero, &nz));
    POOT_TRY(poot_kir_if_begin(b, nz));
    POOT_TRY(
        poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_ADD, POOT_KIR_SPACE_GLOBAL, rh, tid, cnt, &old));
    POOT_TRY(poot_kir_end(b));
  }
  return POOT_OK_STATUS;
}

static poot_status hist_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, HIST_BINS, 1, 1, 0, hist_body, c, t, out);
}

static poot_status hist_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  (void)c;
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t *a = kc_buf(r, 0, (size_t)size * 4), *h = kc_buf(r, 1, HIST_BINS * 4);
  if (!a || !h) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) a[i] = (uint32_t)(kc_rand(&st) % 1000u); /* skewed bins */
  for (uint32_t i = 0; i < HIST_BINS; i++) h[i] = i; /* accumulates onto existing counts */
  uint32_t *e = kc_expect(r, 1, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++) e[a[i] & (HIST_BINS - 1)]++;
  r->params[0] = size;
  r->grid[0] = div_up(size, HIST_BINS);
  return POOT_OK_STATUS;
}

/* ------------------------------------------------------ checked scatter */

#define SCATTER_TRAP 7u

/* out[idx[i]] = val[i] for i < n, with check(idx[i] < m, 7); the store is
 * guarded so that error-word targets stay in bounds. arg0: 1 = some
 * indices are out of range on purpose. */
static poot_status scatter_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                                const poot_kir_target *t, uint32_t sg) {
  (void)c, (void)t, (void)sg;
  uint32_t ri, rv, ro;
  poot_kir_value n, m, gid, idx, val, ok;
  POOT_TRY(kc_binding(b, "idx", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &ri));
  POOT_TRY(kc_binding(b, "val", 1, POOT_KIR_U32, POOT_KIR_ACCESS_READ, &rv));
  POOT_TRY(kc_binding(b, "out", 2, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE, &ro));
  POOT_TRY(kc_push(b, "n", POOT_KIR_U32, &n));
  POOT_TRY(kc_push(b, "m", POOT_KIR_U32, &m));
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(kc_guard(b, gid, n));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ri, gid, 1, &idx));
  POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rv, gid, 1, &val));
  POOT_TRY(kc_bin(b, POOT_KIR_OP_LT, idx, m, &ok));
  POOT_TRY(poot_kir_check(b, ok, SCATTER_TRAP));
  POOT_TRY(poot_kir_if_begin(b, ok));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, val));
  POOT_TRY(poot_kir_end(b));
  return poot_kir_end(b);
}

static poot_status scatter_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                                 poot_kir_kernel **out) {
  return kc_make(c->name, 64, 1, 1, 0, scatter_body, c, t, out);
}

static poot_status scatter_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                   uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  POOT_TRY(kc_run_init(r, k, size));
  uint32_t m = size;
  uint32_t *idx = kc_buf(r, 0, (size_t)size * 4), *val = kc_buf(r, 1, (size_t)size * 4);
  uint32_t *out = kc_buf(r, 2, (size_t)m * 4);
  if (!idx || !val || !out) return kc_oom(r);
  uint64_t st = seed;
  for (uint32_t i = 0; i < size; i++) {
    idx[i] = i;
    val[i] = (uint32_t)kc_rand(&st);
    out[i] = 0xdeadbeefu;
  }
  for (uint32_t i = size - 1; i > 0; i--) { /* a permutation: no two threads share a slot */
    uint32_t j = (uint32_t)(kc_rand(&st) % (i + 1));
    uint32_t tmp = idx[i];
    idx[i] = idx[j];
    idx[j] = tmp;
  }
  if (c->arg0 == 1)
    for (uint32_t i = 0; i < size; i += 5) idx[i] = m + (uint32_t)(kc_rand(&st) % 1000u);
  uint32_t *e = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_EXACT, 0, 0, true);
  if (!e) return kc_oom(r);
  for (uint32_t i = 0; i < size; i++)
    if (idx[i] < m) e[idx[i]] = val[i];
  r->expected_error_bits = c->arg0 == 1 ? 1u << SCATTER_TRAP : 0;
  r->params[0] = size;
  r->params[1] = m;
  r->grid[0] = div_up(size, 64);
  return POOT_OK_STATUS;
}

/* -------------------------------------------------------------- the table */

#define VADD(T, t)                                          \
  {                                                         \
      "vadd_" #t,         "out = a + b elementwise in " #t, \
      POOT_KIR_##T,       1,                                \
      vadd_build,         vadd_prepare,                     \
      {1, 63, 1000, 4099}},

static const poot_kir_corpus_case base_cases[] = {
    VADD(I8, i8) VADD(U8, u8) VADD(I16, i16) VADD(U16, u16) VADD(I32, i32) VADD(U32, u32) VADD(
        I64, i64) VADD(F16, f16) VADD(BF16, bf16) VADD(F32, f32){"vadd_f32x4",
                                                                 "vec4 loads and stores of f32",
                                                                 POOT_KIR_F32,
                                                                 4,
                                                                 vadd_build,
                                                                 vadd_prepare,
                                                                 {1, 63, 1025, 0}},
    {"vadd_f16x2",
     "vec2 loads and stores of f16",
     POOT_KIR_F16,
     2,
     vadd_build,
     vadd_prepare,
     {1, 65, 1000, 0}},
    {"vadd_u8x4",
     "vec4 loads of u8, widened to u32x4",
     POOT_KIR_U8,
     4,
     vadd_build,
     vadd_prepare,
     {1, 63, 777, 0}},
    {"reduce_wg_f32",
     "workgroup tree reduction through shared memory",
     POOT_KIR_F32,
     0,
     reduce_wg_build,
     reduce_wg_prepare,
     {1, 511, 1000, 5000}},
    {"reduce_wg_u32",
     "workgroup tree reduction through shared memory",
     POOT_KIR_U32,
     0,
     reduce_wg_build,
     reduce_wg_prepare,
     {1, 513, 1000, 5000}},
    {"reduce_sg_f32",
     "subgroup add reduction",
     POOT_KIR_F32,
     0,
     reduce_sg_build,
     reduce_sg_prepare,
     {1, 63, 1000, 0}},
    {"reduce_sg_u32",
     "subgroup add reduction",
     POOT_KIR_U32,
     0,
     reduce_sg_build,
     reduce_sg_prepare,
     {1, 65, 1000, 0}},
    {"reduce_sg_maxmin_i32",
     "subgroup max and min reductions",
     POOT_KIR_I32,
     1,
     reduce_sg_build,
     reduce_sg_prepare,
     {1, 63, 1000, 0}},
    {"reduce_sg_maxmin_u32",
     "subgroup max and min reductions",
     POOT_KIR_U32,
     1,
     reduce_sg_build,
     reduce_sg_prepare,
     {1, 63, 1000, 0}},
    {"butterfly_sg_f32",
     "xor-shuffle butterfly sum (fixed order)",
     POOT_KIR_F32,
     2,
     reduce_sg_build,
     reduce_sg_prepare,
     {1, 63, 1000, 0}},
    {"gemv_tiled_f32",
     "tiled GEMV: shared x tile, vec4 loads, 4 rows in flight",
     0,
     0,
     gemv_build,
     gemv_prepare,
     {1, 7, 33, 0}},
    {"prefix_sum_u32",
     "inclusive scan per workgroup (Hillis-Steele)",
     0,
     0,
     scan_build,
     scan_prepare,
     {1, 63, 1000, 4097}},
    {"hist_global_u32",
     "histogram with global atomics",
     0,
     0,
     hist_build,
     hist_prepare,
     {1, 63, 1000, 4099}},
    {"hist_shared_u32",
     "histogram in shared memory, then global atomics",
     1,
     0,
     hist_build,
     hist_prepare,
     {1, 63, 1000, 4099}},
    {"scatter_checked",
     "scatter with a bounds check (all in range)",
     0,
     0,
     scatter_build,
     scatter_prepare,
     {1, 63, 1000, 0}},
    {"scatter_checked_oob",
     "scatter with a bounds check that fails (trap 7)",
     1,
     0,
     scatter_build,
     scatter_prepare,
     {1, 63, 1000, 0}},
};

static poot_kir_corpus_case *g_cases;
static size_t g_count;

const poot_kir_corpus_case *poot_kir_corpus(size_t *out_count) {
  /* Built once: the base table, then the generated cases of corpus_ops.c.
   * Not thread safe on the first call (tests call it from one thread). */
  if (!g_cases) {
    size_t nb = sizeof base_cases / sizeof base_cases[0];
    size_t no = 0;
    const poot_kir_corpus_case *ops = poot__kir_corpus_ops(&no);
    poot_kir_corpus_case *all = poot_calloc(nb + no, sizeof *all);
    if (!all) {
      *out_count = 0;
      return NULL;
    }
    memcpy(all, base_cases, sizeof base_cases);
    memcpy(all + nb, ops, no * sizeof *all);
    g_cases = all;
    g_count = nb + no;
  }
  *out_count = g_count;
  return g_cases;
}

const poot_kir_corpus_case *poot_kir_corpus_find(const char *name) {
  size_t n;
  const poot_kir_corpus_case *c = poot_kir_corpus(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(c[i].name, name) == 0) return &c[i];
  return NULL;
}
