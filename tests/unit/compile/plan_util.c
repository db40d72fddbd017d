/* plan_util.c — see plan_util.h. */
#include "plan_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/quant.h"

static uint64_t rng(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float rnd(uint64_t *s) {
  return (float)((double)(rng(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

void pt_inputs_free(pt_inputs *in) {
  for (size_t i = 0; i < in->count; i++) {
    poot_free(in->names[i]);
    poot_free(in->tensors[i].data);
  }
  poot_free(in->names);
  poot_free(in->tensors);
  memset(in, 0, sizeof *in);
}

static void fill(poot_tensor *t, uint64_t *s, int64_t int_hi, float scale, bool zero) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->type.shape.rank; i++) n *= t->type.shape.dims[i];
  uint8_t *p = t->data;
  if (zero) return;
  const poot_dtype_info *di = poot_dtype_info_of(t->type.dtype);
  if (di->is_packed) {
    float *f = poot_malloc((size_t)n * sizeof(float));
    if (!f) return;
    for (int64_t i = 0; i < n; i++) f[i] = rnd(s) * scale;
    const poot_quant_format *q = poot_quant_format_by_name(di->name);
    if (q && q->quantize) {
      q->quantize(f, p, (size_t)(n / di->block_elems));
    } else {
      for (size_t i = 0; i < t->size; i++) p[i] = (uint8_t)rng(s);
      /* the k-quants without a quantizer: random codes, small finite f16
       * scales (d, dmin at 0 and 2; q6_k: d at 208; q2_k: d, dmin at 80
       * and 82; q3_k: d at 108) */
      size_t bb = di->block_bytes;
      for (size_t b = 0; b + bb <= t->size; b += bb) {
        uint16_t h0 = poot_f32_to_f16(rnd(s) * 0.01f), h1 = poot_f32_to_f16(rnd(s) * 0.01f);
        if (t->type.dtype == POOT_DTYPE_Q6_K) {
          memcpy(p + b + 208, &h0, 2);
        } else if (t->type.dtype == POOT_DTYPE_Q2_K) {
          memcpy(p + b + 80, &h0, 2);
          memcpy(p + b + 82, &h1, 2);
        } else if (t->type.dtype == POOT_DTYPE_Q3_K) {
          memcpy(p + b + 108, &h0, 2);
        } else {
          memcpy(p + b, &h0, 2);
          memcpy(p + b + 2, &h1, 2);
        }
      }
    }
    poot_free(f);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    float f = rnd(s) * scale;
    int64_t iv = int_hi > 0 ? (int64_t)(rng(s) % (uint64_t)int_hi) : 0;
    switch (t->type.dtype) {
      case POOT_DTYPE_F32:
        memcpy(p + 4 * i, &f, 4);
        break;
      case POOT_DTYPE_F16: {
        uint16_t h = poot_f32_to_f16(f);
        memcpy(p + 2 * i, &h, 2);
        break;
      }
      case POOT_DTYPE_BF16: {
        uint16_t h = poot_f32_to_bf16(f);
        memcpy(p + 2 * i, &h, 2);
        break;
      }
      case POOT_DTYPE_I32:
      case POOT_DTYPE_U32: {
        int32_t v = (int32_t)iv;
        memcpy(p + 4 * i, &v, 4);
        break;
      }
      case POOT_DTYPE_I64:
        memcpy(p + 8 * i, &iv, 8);
        break;
      case POOT_DTYPE_I16: {
        int16_t v = (int16_t)iv;
        memcpy(p + 2 * i, &v, 2);
        break;
      }
      case POOT_DTYPE_I8:
      case POOT_DTYPE_U8:
        p[i] = (uint8_t)iv;
        break;
      case POOT_DTYPE_BOOL:
        p[i] = (uint8_t)(rng(s) & 1);
        break;
      default:
        break;
    }
  }
}

poot_status pt_inputs_make(const poot_graph *g, uint64_t seed, int64_t int_hi, int64_t pos,
                           float wscale, pt_inputs *out) {
  memset(out, 0, sizeof *out);
  const poot_region *root = poot_graph_root(g);
  out->names = poot_calloc(root->num_nodes + 1, sizeof(char *));
  out->tensors = poot_calloc(root->num_nodes + 1, sizeof(poot_tensor));
  if (!out->names || !out->tensors) return poot_status_make(POOT_OUT_OF_MEMORY, "oom");
  uint64_t s = seed;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (n->op != POOT_OP_LEAF || n->storage == POOT_STORAGE_CONST) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    const poot_type *ty = poot_graph_value_type(g, n->results[0]);
    size_t bytes = 0;
    POOT_TRY(poot_type_byte_size(ty->dtype, &ty->shape, &bytes));
    poot_tensor *t = &out->tensors[out->count];
    t->type = *ty;
    t->size = bytes;
    t->data = poot_calloc(bytes ? bytes : 1, 1);
    out->names[out->count] = poot_malloc(sb.len + 1);
    if (!t->data || !out->names[out->count]) return poot_status_make(POOT_OUT_OF_MEMORY, "oom");
    memcpy(out->names[out->count], sb.data, sb.len + 1);
    bool is_pos = n->storage == POOT_STORAGE_SLOT && n->slot_kind == POOT_SLOT_POS;
    fill(t, &s, is_pos ? 1 : int_hi, n->storage == POOT_STORAGE_WEIGHT ? wscale : 1.0f,
         n->storage == POOT_STORAGE_STATE);
    out->count++;
    if (is_pos) pt_inputs_set_int(out, out->names[out->count - 1], pos);
  }
  poot_strbuf_deinit(&sb);
  return NULL;
}

void pt_inputs_set_int(pt_inputs *in, const char *name, int64_t v) {
  for (size_t i = 0; i < in->count; i++) {
    if (strcmp(in->names[i], name) != 0) continue;
    poot_tensor *t = &in->tensors[i];
    size_t eb = poot_dtype_info_of(t->type.dtype)->elem_bytes;
    for (size_t o = 0; o + eb <= t->size; o += eb) {
      if (eb == 8)
        memcpy((uint8_t *)t->data + o, &v, 8);
      else {
        int32_t x = (int32_t)v;
        memcpy((uint8_t *)t->data + o, &x, eb);
      }
    }
  }
}

static double elem(const poot_tensor *t, int64_t i) {
  const uint8_t *p = t->data;
  switch (t->type.dtype) {
    case POOT_DTYPE_F32: {
      float f;
      memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case POOT_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return poot_f16_to_f32(h);
    }
    case POOT_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return poot_bf16_to_f32(h);
    }
    case POOT_DTYPE_I32: {
      int32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case POOT_DTYPE_U32: {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case POOT_DTYPE_I64: {
      int64_t v;
      memcpy(&v, p + 8 * i, 8);
      return (double)v;
    }
    case POOT_DTYPE_I16: {
      int16_t v;
      memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case POOT_DTYPE_I8:
      return (int8_t)p[i];
    default:
      return p[i];
  }
}

/* One unit in the last place of a value of magnitude |x| in a 16-bit float
 * dtype (f16: 10 fraction bits, subnormal below 2^-14; bf16: 7). */
static double ulp16(poot_dtype dt, double x) {
  int e = 0;
  (void)frexp(fabs(x), &e); /* |x| in [2^(e-1), 2^e) */
  if (dt == POOT_DTYPE_F16) return ldexp(1.0, (e - 1 > -14 ? e - 1 : -14) - 10);
  return ldexp(1.0, e - 1 - 7);
}

/* A q8_0 state (a K/V cache): both decoded; each element within the
 * tolerance, plus (`rounded`, a state the step quantizes) one quantum of its
 * block: a fresh element the device computes within tolerance of the
 * oracle's may land on the neighbouring code. */
static void compare_q8(const char *what, const poot_tensor *dev, const poot_tensor *ref,
                       double tol_rel, bool rounded, pt_result *res) {
  size_t nb = ref->size / POOT_QUANT_Q8_0_BYTES;
  float *a = poot_malloc(nb * 32 * sizeof(float)), *b = poot_malloc(nb * 32 * sizeof(float));
  if (!a || !b) {
    res->ok = false;
    snprintf(res->what, sizeof res->what, "%s: out of memory", what);
  } else {
    poot_quant_dequantize_q8_0(dev->data, a, nb);
    poot_quant_dequantize_q8_0(ref->data, b, nb);
    double mx = 0;
    for (size_t i = 0; i < nb * 32; i++)
      if (fabs(b[i]) > mx) mx = fabs(b[i]);
    double atol = tol_rel * (mx > 0 ? mx : 1.0);
    for (size_t i = 0; i < nb * 32; i++) {
      const uint8_t *bd = (const uint8_t *)dev->data + (i / 32) * POOT_QUANT_Q8_0_BYTES;
      const uint8_t *br = (const uint8_t *)ref->data + (i / 32) * POOT_QUANT_Q8_0_BYTES;
      double dd = poot_f16_to_f32((uint16_t)(bd[0] | bd[1] << 8));
      double dr = poot_f16_to_f32((uint16_t)(br[0] | br[1] << 8));
      double e = fabs((double)a[i] - (double)b[i]);
      double allow = atol + (rounded ? (dd > dr ? dd : dr) * 1.001 : 0.0);
      if (!isfinite(a[i]) || !(e <= allow)) { /* an oracle NaN fails too */
        if (res->ok)
          snprintf(res->what, sizeof res->what,
                   "%s[%zu] (q8_0): device %.9g oracle %.9g (tol %.3g)", what, i, a[i], b[i],
                   allow);
        res->ok = false;
      }
      if (e > res->max_err) {
        res->max_err = e;
        res->max_allowed = allow;
      }
    }
  }
  poot_free(a);
  poot_free(b);
}

/* `rounded`: the tensor is a State of a 16-bit float dtype that a step writes
 * by rounding f32 values (a KV cache in f16): the device's f32 value, within
 * the tolerance of the oracle's, may round to the neighbouring 16-bit value,
 * so each element may also differ by one ulp of its dtype. */
static void compare(const char *what, const poot_tensor *dev, const poot_tensor *ref, bool exact,
                    double tol_rel, bool rounded, pt_result *res) {
  if (!poot_type_equal(&dev->type, &ref->type)) {
    res->ok = false;
    snprintf(res->what, sizeof res->what, "%s: type differs", what);
    return;
  }
  if (!exact && ref->type.dtype == POOT_DTYPE_Q8_0) {
    compare_q8(what, dev, ref, tol_rel, rounded, res);
    return;
  }
  if (exact || !poot_dtype_is_float(ref->type.dtype)) {
    if (memcmp(dev->data, ref->data, ref->size) != 0) {
      res->ok = false;
      size_t i = 0;
      while (((uint8_t *)dev->data)[i] == ((uint8_t *)ref->data)[i]) i++;
      snprintf(res->what, sizeof res->what, "%s: not bit-exact at byte %zu", what, i);
    }
    return;
  }
  int64_t n = 1;
  for (uint32_t i = 0; i < ref->type.shape.rank; i++) n *= ref->type.shape.dims[i];
  double mx = 0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(elem(ref, i)) && fabs(elem(ref, i)) > mx) mx = fabs(elem(ref, i));
  double atol = tol_rel * (mx > 0 ? mx : 1.0);
  for (int64_t i = 0; i < n; i++) {
    double a = elem(dev, i), b = elem(ref, i);
    if (isnan(b) && isnan(a)) continue;
    if (!isfinite(b) && a == b) continue;
    double e = fabs(a - b);
    double allow = atol;
    if (rounded && (ref->type.dtype == POOT_DTYPE_F16 || ref->type.dtype == POOT_DTYPE_BF16))
      allow += ulp16(ref->type.dtype, fabs(a) > fabs(b) ? a : b);
    if (!isfinite(a) || !(e <= allow)) { /* a NaN oracle beside a finite device too */
      if (res->ok)
        snprintf(res->what, sizeof res->what, "%s[%lld]: device %.9g oracle %.9g (tol %.3g)", what,
                 (long long)i, a, b, atol);
      res->ok = false;
    }
    if (e > res->max_err) {
      res->max_err = e;
      res->max_allowed = atol;
    }
  }
}

poot_status pt_check(const poot_graph *g, const poot_kir_target *target, const pt_inputs *in,
                     uint32_t sg, bool exact, double tol_rel, pt_result *res) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = target;
  return pt_check_opt(g, &o, in, sg, exact, tol_rel, res);
}

poot_status pt_check_opt(const poot_graph *g, const poot_compile_options *o, const pt_inputs *in,
                         uint32_t sg, bool exact, double tol_rel, pt_result *res) {
  memset(res, 0, sizeof *res);
  res->ok = true;
  poot_plan *plan = NULL;
  POOT_TRY(poot_plan_create(g, o, &plan));
  poot_plan_run *run = NULL;
  poot_eval_input *ei = poot_calloc(in->count + 1, sizeof *ei);
  poot_plan_input *pi = poot_calloc(in->count + 1, sizeof *pi);
  poot_evaluation *ev = NULL;
  poot_status st = ei && pi ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "oom");
  for (size_t i = 0; !st && i < in->count; i++) {
    ei[i].name = pi[i].name = in->names[i];
    ei[i].tensor = pi[i].tensor = &in->tensors[i];
  }
  if (!st) {
    poot_eval_inputs eis = {.count = in->count, .items = ei};
    st = poot_eval(g, &eis, NULL, &ev);
  }
  if (!st) st = poot_plan_run_create(plan, &run);
  if (!st) st = poot_plan_run_bind(run, in->count, pi);
  poot_plan_run_options ro = {sg, false};
  if (!st) st = poot_plan_run_step(run, &ro);
  if (!st && ev->has_output) {
    poot_tensor t;
    st = poot_plan_run_output(run, &t);
    if (!st) compare("output", &t, &ev->output, exact, tol_rel, false, res);
  }
  for (uint32_t i = 0; !st && i < ev->num_states; i++) {
    poot_tensor t;
    st = poot_plan_run_state(run, ev->states[i].name, &t);
    if (!st) compare(ev->states[i].name, &t, &ev->states[i].tensor, exact, tol_rel, true, res);
  }
  for (uint32_t i = 0; !st && i < ev->num_env; i++) {
    poot_tensor t;
    st = poot_plan_run_state(run, ev->env[i].name, &t);
    if (!st) compare(ev->env[i].name, &t, &ev->env[i].tensor, exact, tol_rel, false, res);
  }
  char why[200];
  if (!st && !pt_memory_ok(plan, why, sizeof why)) {
    res->ok = false;
    snprintf(res->what, sizeof res->what, "memory plan: %s", why);
  }
  poot_evaluation_destroy(ev);
  poot_plan_run_destroy(run);
  poot_plan_destroy(plan);
  poot_free(ei);
  poot_free(pi);
  return st;
}

/* The primary output of g's plan under o, copied into *out (poot_free). */
static poot_status plan_output(const poot_graph *g, const poot_compile_options *o,
                               const pt_inputs *in, uint32_t sg, poot_tensor *out) {
  memset(out, 0, sizeof *out);
  poot_plan *plan = NULL;
  POOT_TRY(poot_plan_create(g, o, &plan));
  poot_plan_run *run = NULL;
  poot_plan_input *pi = poot_calloc(in->count + 1, sizeof *pi);
  poot_status st = pi ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "oom");
  for (size_t i = 0; !st && i < in->count; i++) {
    pi[i].name = in->names[i];
    pi[i].tensor = &in->tensors[i];
  }
  if (!st) st = poot_plan_run_create(plan, &run);
  if (!st) st = poot_plan_run_bind(run, in->count, pi);
  poot_plan_run_options ro = {sg, false};
  if (!st) st = poot_plan_run_step(run, &ro);
  poot_tensor t;
  if (!st) st = poot_plan_run_output(run, &t);
  if (!st) {
    *out = t;
    out->data = poot_malloc(t.size ? t.size : 1);
    if (!out->data)
      st = poot_status_make(POOT_OUT_OF_MEMORY, "oom");
    else
      memcpy(out->data, t.data, t.size);
  }
  poot_plan_run_destroy(run);
  poot_plan_destroy(plan);
  poot_free(pi);
  return st;
}

poot_status pt_same_bits(const poot_graph *g, const poot_compile_options *a,
                         const poot_compile_options *b, const pt_inputs *in, uint32_t sg,
                         bool *out_same, char *why, size_t why_size) {
  *out_same = false;
  poot_tensor ta, tb;
  POOT_TRY(plan_output(g, a, in, sg, &ta));
  poot_status st = plan_output(g, b, in, sg, &tb);
  if (st) {
    poot_free(ta.data);
    return st;
  }
  *out_same = ta.size == tb.size && memcmp(ta.data, tb.data, ta.size) == 0;
  if (!*out_same) {
    size_t i = 0;
    while (i + 4 <= ta.size && i + 4 <= tb.size &&
           memcmp((char *)ta.data + i, (char *)tb.data + i, 4) == 0)
      i += 4;
    snprintf(why, why_size, "outputs of %zu and %zu bytes differ from byte %zu", ta.size, tb.size,
             i);
  }
  poot_free(ta.data);
  poot_free(tb.data);
  return NULL;
}

bool pt_memory_ok(const poot_plan *p, char *why, size_t n) {
  for (uint32_t i = 0; i < p->temp_count; i++) {
    const poot_plan_temp *a = &p->temps[i];
    if (a->offset + a->size > p->buffers[0].size) {
      snprintf(why, n, "temp %%%u past the arena", a->value);
      return false;
    }
    for (uint32_t j = i + 1; j < p->temp_count; j++) {
      const poot_plan_temp *b = &p->temps[j];
      bool live = a->first <= b->last && b->first <= a->last;
      bool mem = a->offset < b->offset + b->size && b->offset < a->offset + a->size;
      if (live && mem) {
        snprintf(why, n, "temps %%%u and %%%u overlap while both live", a->value, b->value);
        return false;
      }
    }
  }
  return true;
}

poot_value pt_param(poot_graph *g, const char *name, poot_dtype dt, int64_t d0, int64_t d1) {
  int64_t d[2] = {d0, d1};
  poot_type t = poot_type_make(dt, d1 ? 2 : 1, d);
  poot_value v = POOT_VALUE_NONE;
  poot_status st = poot_graph_add_param(g, name, &t, &v);
  if (st) {
    poot_status_free(st);
    return POOT_VALUE_NONE;
  }
  return v;
}

poot_value pt_dot_nt(poot_graph *g, poot_value x, poot_value w) {
  const poot_type *wt = poot_graph_value_type(g, w);
  if (!wt) return POOT_VALUE_NONE; /* pt_param refused the weight (e.g. not whole blocks) */
  poot_dtype dt = wt->dtype;
  poot_value wf = w, o = POOT_VALUE_NONE;
  poot_status st = NULL;
  if (poot_dtype_is_packed(dt))
    st = poot_graph_dequantize(g, w, POOT_DTYPE_F32, &wf);
  else if (dt != POOT_DTYPE_F32)
    st = poot_graph_convert(g, w, POOT_DTYPE_F32, &wf);
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  if (!st) st = poot_graph_dot_general(g, x, wf, &dd, POOT_DTYPE_F32, &o);
  if (st) {
    poot_status_free(st);
    return POOT_VALUE_NONE;
  }
  return o;
}

bool pt_uses_template(const poot_graph *g, const poot_kir_target *t, const char *what) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  return pt_uses_template_opt(g, &o, what);
}

bool pt_uses_template_opt(const poot_graph *g, const poot_compile_options *o, const char *what) {
  poot_plan *plan = NULL;
  poot_status st = poot_plan_create(g, o, &plan);
  if (st) {
    poot_status_free(st);
    return false;
  }
  bool found = false;
  for (uint32_t i = 0; i < plan->dispatch_count; i++)
    if (plan->dispatches[i].what && strstr(plan->dispatches[i].what, what)) found = true;
  poot_plan_destroy(plan);
  return found;
}

poot_status pt_ffn_graph(poot_graph *g, int64_t m, int64_t h, int64_t ff, poot_dtype wt) {
  poot_value x = pt_param(g, "x", POOT_DTYPE_F32, m, h),
             nw = pt_param(g, "norm", POOT_DTYPE_F32, h, 0);
  poot_value gw = pt_param(g, "gate", wt, ff, h), uw = pt_param(g, "up", wt, ff, h),
             dw = pt_param(g, "down", wt, h, ff);
  poot_value xn, act, y;
  POOT_TRY(poot_graph_rms_norm(g, x, nw, 1e-5, &xn));
  POOT_TRY(poot_graph_swiglu(g, pt_dot_nt(g, xn, gw), pt_dot_nt(g, xn, uw), &act));
  POOT_TRY(poot_graph_binary(g, POOT_OP_ADD, pt_dot_nt(g, act, dw), x, &y));
  return poot_graph_set_output(g, y);
}

bool pt_check_projection(const poot_graph *g, const pt_inputs *in, const poot_kir_target *t,
                         uint32_t sg, int64_t k, const char *tmpl, bool want, const char *what,
                         char *why, size_t why_size) {
  if (pt_uses_template(g, t, tmpl) != want) {
    snprintf(why, why_size, "%s sg=%u: %s template %s", what, sg, tmpl, want ? "not used" : "used");
    return false;
  }
  pt_result r;
  poot_status st = pt_check(g, t, in, sg, false, (double)k * 4.8e-7 + 1e-6, &r);
  if (st) {
    snprintf(why, why_size, "%s sg=%u: %s", what, sg, poot_status_message(st));
    poot_status_free(st);
    return false;
  }
  if (!r.ok) {
    snprintf(why, why_size, "%s sg=%u: %s", what, sg, r.what);
    return false;
  }
  printf("%s sg=%u: max error %.3g (allowed %.3g)\n", what, sg, r.max_err, r.max_allowed);
  return true;
}
