/* rope.c — rotary embeddings with Hugging Face's scaling rules, and attention
 * with logit soft-capping (composites the graph layer does not build). */
#include <math.h>
#include <string.h>

#include "models_impl.h"

/* ------------------------------------------------------- inverse frequencies */

/* Hugging Face's default table, in f32: 1 / base^(arange(0, dims, 2) / dims). */
static void inv_freq_default(double theta, int64_t dims, float *out) {
  float base = (float)theta;
  for (int64_t i = 0; i < dims / 2; i++) {
    float ex = (float)(2 * i) / (float)dims;
    out[i] = 1.0f / powf(base, ex);
  }
}

/* transformers' _compute_yarn_parameters, in f32 where it computes in f32:
 * the interpolated (1 / (factor * base^e)) and extrapolated (1 / base^e)
 * tables mixed by a linear ramp over the pairs between the correction
 * dimensions of beta_fast and beta_slow rotations. */
static void inv_freq_yarn(const poot_model_config *c, double theta, int64_t dims, float *out) {
  double orig = (double)c->rope_original_context, base = theta;
  double beta_fast = c->rope_beta_fast > 0 ? c->rope_beta_fast : 32.0;
  double beta_slow = c->rope_beta_slow > 0 ? c->rope_beta_slow : 1.0;
  double lo = (double)dims * log(orig / (beta_fast * 2.0 * M_PI)) / (2.0 * log(base));
  double hi = (double)dims * log(orig / (beta_slow * 2.0 * M_PI)) / (2.0 * log(base));
  if (!c->rope_yarn_no_truncate) {
    lo = floor(lo);
    hi = ceil(hi);
  }
  if (lo < 0) lo = 0;
  if (hi > (double)(dims - 1)) hi = (double)(dims - 1);
  if (lo == hi) hi += 0.001;
  float fbase = (float)base, factor = (float)c->rope_factor;
  for (int64_t i = 0; i < dims / 2; i++) {
    float pos = powf(fbase, (float)(2 * i) / (float)dims);
    float extra = 1.0f / pos, inter = 1.0f / (factor * pos);
    float ramp = ((float)i - (float)lo) / (float)(hi - lo);
    ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
    float ext_factor = 1.0f - ramp;
    out[i] = inter * (1.0f - ext_factor) + extra * ext_factor;
  }
}

void poot_model_rope_inv_freq(const poot_model_config *c, bool local_layer, bool long_table,
                              float *out) {
  int64_t dims = c->rope_dims, half = dims / 2;
  double theta = local_layer && c->rope_theta_local > 0 ? c->rope_theta_local : c->rope_theta;
  poot_model_rope_scaling sc = c->rope_scaling;
  if (local_layer && c->rope_local_unscaled) sc = POOT_MODEL_ROPE_SCALING_NONE;
  switch (sc) {
    case POOT_MODEL_ROPE_SCALING_NONE:
      inv_freq_default(theta, dims, out);
      break;
    case POOT_MODEL_ROPE_SCALING_LINEAR:
      inv_freq_default(theta, dims, out);
      for (int64_t i = 0; i < half; i++) out[i] = out[i] / (float)c->rope_factor;
      break;
    case POOT_MODEL_ROPE_SCALING_FREQS:
      inv_freq_default(theta, dims, out);
      for (int64_t i = 0; i < half; i++) out[i] = out[i] / c->rope_short_factors[i];
      break;
    case POOT_MODEL_ROPE_SCALING_LLAMA3: {
      /* transformers' _compute_llama3_parameters, in f32. */
      inv_freq_default(theta, dims, out);
      float factor = (float)c->rope_factor, lo = (float)c->rope_low_freq_factor,
            hi = (float)c->rope_high_freq_factor, old = (float)c->rope_original_context;
      float lo_wl = old / lo, hi_wl = old / hi;
      for (int64_t i = 0; i < half; i++) {
        float f = out[i], wl = (float)(2.0 * M_PI) / f;
        float scaled = wl > lo_wl ? f / factor : f;
        float smooth = (old / wl - lo) / (hi - lo);
        float smoothed = (1.0f - smooth) * scaled / factor + smooth * scaled;
        bool medium = !(wl < hi_wl) && !(wl > lo_wl);
        out[i] = medium ? smoothed : scaled;
      }
      break;
    }
    case POOT_MODEL_ROPE_SCALING_YARN:
      inv_freq_yarn(c, theta, dims, out);
      break;
    case POOT_MODEL_ROPE_SCALING_DYNAMIC: /* the table at the original length */
      inv_freq_default(theta, dims, out);
      break;
    case POOT_MODEL_ROPE_SCALING_LONGROPE: {
      /* 1 / (ext * base^(arange/dims)) with ext the short or long factors. */
      const float *ext = long_table ? c->rope_long_factors : c->rope_short_factors;
      float base = (float)theta;
      for (int64_t i = 0; i < half; i++) {
        float ex = (float)(2 * i) / (float)dims;
        out[i] = 1.0f / (ext[i] * powf(base, ex));
      }
      break;
    }
  }
}

int64_t poot_model_rope_restart_length(const poot_model_config *c) {
  return c->rope_scaling == POOT_MODEL_ROPE_SCALING_LONGROPE ? c->rope_original_context : 0;
}

int64_t poot_model_rope_whole_pass_length(const poot_model_config *c) {
  return c->rope_scaling == POOT_MODEL_ROPE_SCALING_LONGROPE ||
                 c->rope_scaling == POOT_MODEL_ROPE_SCALING_DYNAMIC
             ? c->rope_original_context
             : 0;
}

/* The cos/sin multiplier (LONGROPE's attention factor; 1 otherwise). */
static double rope_attn_factor(const poot_model_config *c, bool local_layer) {
  if (local_layer && c->rope_local_unscaled) return 1.0;
  if (c->rope_scaling == POOT_MODEL_ROPE_SCALING_YARN)
    return c->rope_attn_factor > 0 ? c->rope_attn_factor : 1.0;
  if (c->rope_scaling != POOT_MODEL_ROPE_SCALING_LONGROPE) return 1.0;
  if (c->rope_attn_factor > 0) return c->rope_attn_factor;
  if (c->rope_factor <= 1.0 || c->rope_original_context <= 1) return 1.0;
  return sqrt(1.0 + log(c->rope_factor) / log((double)c->rope_original_context));
}

/* ------------------------------------------------------------ composite body */

static poot_status bin(poot_graph *g, poot_op op, poot_value a, poot_value b, poot_value *out) {
  return poot_graph_binary(g, op, a, b, out);
}

static poot_status slice_last(poot_graph *g, poot_value x, int64_t lo, int64_t hi,
                              poot_value *out) {
  const poot_type tv = *poot_graph_value_type(g, x), *t = &tv;
  int64_t start[POOT_MAX_RANK] = {0}, limit[POOT_MAX_RANK];
  for (uint32_t i = 0; i < t->shape.rank; i++) limit[i] = t->shape.dims[i];
  start[t->shape.rank - 1] = lo;
  limit[t->shape.rank - 1] = hi;
  return poot_graph_slice(g, x, start, limit, NULL, out);
}

static poot_status const_vec(poot_graph *g, const float *v, int64_t n, poot_value *out) {
  poot_tensor tt = {.type = poot_type_make(POOT_DTYPE_F32, 1, &n),
                    .data = (void *)v,
                    .size = (size_t)n * sizeof(float)};
  return poot_graph_add_const(g, &tt, out);
}

/* o1 = x1*c - x2*s ; o2 = x2*c + x1*s (Hugging Face: x*cos + rotate_half(x)*sin). */
static poot_status rotate(poot_graph *g, poot_value x1, poot_value x2, poot_value c, poot_value s,
                          poot_value *o1, poot_value *o2) {
  poot_value a, b, d, e;
  POOT_TRY(bin(g, POOT_OP_MUL, x1, c, &a));
  POOT_TRY(bin(g, POOT_OP_MUL, x2, s, &b));
  POOT_TRY(bin(g, POOT_OP_SUB, a, b, o1));
  POOT_TRY(bin(g, POOT_OP_MUL, x2, c, &d));
  POOT_TRY(bin(g, POOT_OP_MUL, x1, s, &e));
  return bin(g, POOT_OP_ADD, d, e, o2);
}

static poot_status splat_f32(poot_graph *g, double v, const poot_shape *shape, poot_value *out) {
  poot_value c;
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, v, &c));
  return poot_graph_broadcast(g, c, shape, NULL, out);
}

/* Dynamic NTK (transformers' _compute_dynamic_ntk_parameters with the
 * sequence length of each token's forward pass, as its KV-cached generation
 * recomputes the table whenever the sequence grows past the original
 * length): L = max(seq_len, orig), base' = base * (factor * L / orig -
 * (factor - 1))^(dims / (dims - 2)), inverse frequency i = 1 / base'^(2i /
 * dims). [N, half]. */
static poot_status dynamic_inv_freq(poot_graph *g, const poot_model_config *c, bool local_layer,
                                    poot_value seq_len, const poot_shape *nh, poot_value *out) {
  int64_t N = nh->dims[0], half = nh->dims[1], dims = c->rope_dims;
  double theta = local_layer && c->rope_theta_local > 0 ? c->rope_theta_local : c->rope_theta;
  double orig = (double)c->rope_original_context, factor = c->rope_factor;
  poot_shape ns = poot_shape_of(1, N);
  poot_value L, k, t, b, base, e, eb, bb, pw, one;
  POOT_TRY(poot_graph_convert(g, seq_len, POOT_DTYPE_F32, &L));
  POOT_TRY(splat_f32(g, orig, &ns, &k));
  POOT_TRY(bin(g, POOT_OP_MAX, L, k, &L));
  POOT_TRY(splat_f32(g, factor / orig, &ns, &k));
  POOT_TRY(bin(g, POOT_OP_MUL, L, k, &t));
  POOT_TRY(splat_f32(g, factor - 1.0, &ns, &k));
  POOT_TRY(bin(g, POOT_OP_SUB, t, k, &t));
  POOT_TRY(splat_f32(g, (double)dims / (double)(dims - 2), &ns, &k));
  POOT_TRY(bin(g, POOT_OP_POW, t, k, &b));
  POOT_TRY(splat_f32(g, theta, &ns, &k));
  POOT_TRY(bin(g, POOT_OP_MUL, b, k, &base));
  float ex[POOT_MODEL_MAX_ROPE_PAIRS];
  for (int64_t i = 0; i < half; i++) ex[i] = (float)(2 * i) / (float)dims;
  int64_t d0 = 0, d1 = 1;
  POOT_TRY(const_vec(g, ex, half, &e));
  POOT_TRY(poot_graph_broadcast(g, e, nh, &d1, &eb));
  POOT_TRY(poot_graph_broadcast(g, base, nh, &d0, &bb));
  POOT_TRY(bin(g, POOT_OP_POW, bb, eb, &pw));
  POOT_TRY(splat_f32(g, 1.0, nh, &one));
  return bin(g, POOT_OP_DIV, one, pw, out);
}

static poot_status rope_body(poot_graph *g, const poot_model_config *c, bool local_layer,
                             poot_value x, poot_value pos, poot_value seq_len, poot_value *out) {
  const poot_type tv = *poot_graph_value_type(g, x), *t = &tv;
  poot_dtype dt = t->dtype;
  int64_t N = t->shape.dims[0], H = t->shape.dims[1], D = t->shape.dims[2];
  int64_t dims = c->rope_dims, half = dims / 2;
  float tab[POOT_MODEL_MAX_ROPE_PAIRS], tab_long[POOT_MODEL_MAX_ROPE_PAIRS];
  poot_model_rope_inv_freq(c, local_layer, false, tab);
  poot_shape nh = poot_shape_of(2, N, half), nhh = poot_shape_of(3, N, H, half);
  int64_t d0 = 0, d1 = 1;
  poot_value inv, invb, pf, pb, ang, cs, sn;
  POOT_TRY(const_vec(g, tab, half, &inv));
  POOT_TRY(poot_graph_broadcast(g, inv, &nh, &d1, &invb));
  bool longrope = c->rope_scaling == POOT_MODEL_ROPE_SCALING_LONGROPE &&
                  !(local_layer && c->rope_local_unscaled);
  if (longrope) {
    /* transformers switches to the long factors for a whole forward pass
     * once its sequence length (largest position + 1) passes the original
     * context: seq_len holds that length for each token's sequence. */
    poot_model_rope_inv_freq(c, local_layer, true, tab_long);
    poot_value il, ilb, orig, cond, condb;
    POOT_TRY(const_vec(g, tab_long, half, &il));
    POOT_TRY(poot_graph_broadcast(g, il, &nh, &d1, &ilb));
    poot_shape ns = poot_shape_of(1, N);
    POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I32, c->rope_original_context, &orig));
    POOT_TRY(poot_graph_broadcast(g, orig, &ns, NULL, &orig));
    POOT_TRY(bin(g, POOT_OP_GT, seq_len, orig, &cond));
    POOT_TRY(poot_graph_broadcast(g, cond, &nh, &d0, &condb));
    POOT_TRY(poot_graph_select(g, condb, ilb, invb, &invb));
  }
  bool dynamic = c->rope_scaling == POOT_MODEL_ROPE_SCALING_DYNAMIC &&
                 !(local_layer && c->rope_local_unscaled);
  if (dynamic) POOT_TRY(dynamic_inv_freq(g, c, local_layer, seq_len, &nh, &invb));
  POOT_TRY(poot_graph_convert(g, pos, POOT_DTYPE_F32, &pf));
  POOT_TRY(poot_graph_broadcast(g, pf, &nh, &d0, &pb));
  POOT_TRY(bin(g, POOT_OP_MUL, pb, invb, &ang));
  POOT_TRY(poot_graph_unary(g, POOT_OP_COS, ang, &cs));
  POOT_TRY(poot_graph_unary(g, POOT_OP_SIN, ang, &sn));
  double af = rope_attn_factor(c, local_layer);
  if (af != 1.0) {
    poot_value f;
    POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, af, &f));
    POOT_TRY(poot_graph_broadcast(g, f, &nh, NULL, &f));
    POOT_TRY(bin(g, POOT_OP_MUL, cs, f, &cs));
    POOT_TRY(bin(g, POOT_OP_MUL, sn, f, &sn));
  }
  int64_t keep[2] = {0, 2};
  POOT_TRY(poot_graph_broadcast(g, cs, &nhh, keep, &cs));
  POOT_TRY(poot_graph_broadcast(g, sn, &nhh, keep, &sn));
  poot_value xf = x, xr, rot, o1, o2;
  if (dt != POOT_DTYPE_F32) POOT_TRY(poot_graph_convert(g, x, POOT_DTYPE_F32, &xf));
  POOT_TRY(slice_last(g, xf, 0, dims, &xr));
  if (c->rope_mode == POOT_ROPE_NEOX) {
    poot_value x1, x2;
    POOT_TRY(slice_last(g, xr, 0, half, &x1));
    POOT_TRY(slice_last(g, xr, half, dims, &x2));
    POOT_TRY(rotate(g, x1, x2, cs, sn, &o1, &o2));
    poot_value parts[2] = {o1, o2};
    POOT_TRY(poot_graph_concat(g, 2, parts, 2, &rot));
  } else {
    poot_shape pairs = poot_shape_of(4, N, H, half, 2);
    poot_value xp, r1, r2, x1, x2, q1, q2, cat;
    POOT_TRY(poot_graph_reshape(g, xr, &pairs, &xp));
    int64_t st[4] = {0, 0, 0, 0}, l1[4] = {N, H, half, 1}, st2[4] = {0, 0, 0, 1},
            l2[4] = {N, H, half, 2};
    POOT_TRY(poot_graph_slice(g, xp, st, l1, NULL, &r1));
    POOT_TRY(poot_graph_slice(g, xp, st2, l2, NULL, &r2));
    POOT_TRY(poot_graph_reshape(g, r1, &nhh, &x1));
    POOT_TRY(poot_graph_reshape(g, r2, &nhh, &x2));
    POOT_TRY(rotate(g, x1, x2, cs, sn, &o1, &o2));
    poot_shape col = poot_shape_of(4, N, H, half, 1);
    POOT_TRY(poot_graph_reshape(g, o1, &col, &q1));
    POOT_TRY(poot_graph_reshape(g, o2, &col, &q2));
    poot_value parts[2] = {q1, q2};
    POOT_TRY(poot_graph_concat(g, 2, parts, 3, &cat));
    poot_shape back = poot_shape_of(3, N, H, dims);
    POOT_TRY(poot_graph_reshape(g, cat, &back, &rot));
  }
  if (dims < D) {
    poot_value pass, parts[2];
    POOT_TRY(slice_last(g, xf, dims, D, &pass));
    parts[0] = rot;
    parts[1] = pass;
    POOT_TRY(poot_graph_concat(g, 2, parts, 2, &rot));
  }
  if (dt != POOT_DTYPE_F32) return poot_graph_convert(g, rot, dt, out);
  *out = rot;
  return NULL;
}

const char *poot_model_rope_scaling_name(poot_model_rope_scaling s) {
  switch (s) {
    case POOT_MODEL_ROPE_SCALING_NONE:
      return "none";
    case POOT_MODEL_ROPE_SCALING_LINEAR:
      return "linear";
    case POOT_MODEL_ROPE_SCALING_LLAMA3:
      return "llama3";
    case POOT_MODEL_ROPE_SCALING_LONGROPE:
      return "longrope";
    case POOT_MODEL_ROPE_SCALING_FREQS:
      return "freqs";
    case POOT_MODEL_ROPE_SCALING_YARN:
      return "yarn";
    case POOT_MODEL_ROPE_SCALING_DYNAMIC:
      return "dynamic";
  }
  return "?";
}

poot_status poot__trace_rope(poot_graph *g, const poot_model_config *c, bool local_layer,
                             poot_value x, poot_value pos, poot_value seq_len, poot_value *out) {
  *out = POOT_VALUE_NONE;
  double theta = local_layer && c->rope_theta_local > 0 ? c->rope_theta_local : c->rope_theta;
  poot_model_rope_scaling sc = c->rope_scaling;
  if (local_layer && c->rope_local_unscaled) sc = POOT_MODEL_ROPE_SCALING_NONE;
  if (sc == POOT_MODEL_ROPE_SCALING_NONE)
    return poot_graph_rope(g, x, pos, theta, c->rope_dims, c->rope_mode, out);
  poot_composite_attr a[5] = {
      {.key = "theta", .kind = POOT_CATTR_FLOAT, .f = theta},
      {.key = "dims", .kind = POOT_CATTR_INT, .i = c->rope_dims},
      {.key = "mode", .kind = POOT_CATTR_INT, .i = (int64_t)c->rope_mode},
      {.key = "scaling", .kind = POOT_CATTR_STRING, .s = poot_model_rope_scaling_name(sc)},
      {.key = "factor", .kind = POOT_CATTR_FLOAT, .f = c->rope_factor},
  };
  /* LONGROPE and DYNAMIC read a third operand: each token's sequence length. */
  bool longrope = sc == POOT_MODEL_ROPE_SCALING_LONGROPE || sc == POOT_MODEL_ROPE_SCALING_DYNAMIC;
  poot_value ops[3] = {x, pos, seq_len}, p[3];
  POOT_TRY(poot_graph_composite_begin(g, "poot.rope", 5, a, longrope ? 3 : 2, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = rope_body(g, c, local_layer, p[0], p[1], longrope ? p[2] : POOT_VALUE_NONE, &y);
  if (!st) st = poot_graph_composite_end(g, 1, &y, out);
  if (st) poot_graph_composite_abort(g);
  return st;
}

/* ------------------------------------------------- soft-capped attention */

static poot_status softcap_body(poot_graph *g, const poot_value *p, double scale, double softcap,
                                poot_value *out) {
  const poot_type qv = *poot_graph_value_type(g, p[0]), kv = *poot_graph_value_type(g, p[1]);
  const poot_type *qt = &qv, *kt = &kv;
  poot_dtype dt = qt->dtype;
  int64_t T = qt->shape.dims[0], Hq = qt->shape.dims[1], D = qt->shape.dims[2];
  int64_t C = kt->shape.dims[0], Hkv = kt->shape.dims[1], G = Hq / Hkv;
  poot_value qf = p[0], kf = p[1], vf = p[2], q4, sc, scl, ss, capv, d, th, mb, ninf, sm, pr, o, ot,
             of;
  if (dt != POOT_DTYPE_F32) POOT_TRY(poot_graph_convert(g, p[0], POOT_DTYPE_F32, &qf));
  if (kt->dtype == POOT_DTYPE_Q8_0) { /* a q8_0 K/V cache */
    POOT_TRY(poot_graph_dequantize(g, p[1], POOT_DTYPE_F32, &kf));
    POOT_TRY(poot_graph_dequantize(g, p[2], POOT_DTYPE_F32, &vf));
  } else if (kt->dtype != POOT_DTYPE_F32) {
    POOT_TRY(poot_graph_convert(g, p[1], POOT_DTYPE_F32, &kf));
    POOT_TRY(poot_graph_convert(g, p[2], POOT_DTYPE_F32, &vf));
  }
  poot_shape s4 = poot_shape_of(4, T, Hkv, G, D);
  POOT_TRY(poot_graph_reshape(g, qf, &s4, &q4));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 1;
  dd.lhs_batch[0] = 1;
  dd.rhs_batch[0] = 1;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 2;
  POOT_TRY(poot_graph_dot_general(g, q4, kf, &dd, POOT_DTYPE_F32, &sc)); /* [Hkv, T, G, C] */
  poot_shape ss4 = poot_shape_of(4, Hkv, T, G, C);
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, scale, &scl));
  POOT_TRY(poot_graph_broadcast(g, scl, &ss4, NULL, &scl));
  POOT_TRY(bin(g, POOT_OP_MUL, sc, scl, &ss));
  /* Gemma 2: scores / cap, tanh, * cap (before the mask). */
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, softcap, &capv));
  POOT_TRY(poot_graph_broadcast(g, capv, &ss4, NULL, &capv));
  POOT_TRY(bin(g, POOT_OP_DIV, ss, capv, &d));
  POOT_TRY(poot_graph_unary(g, POOT_OP_TANH, d, &th));
  POOT_TRY(bin(g, POOT_OP_MUL, th, capv, &ss));
  int64_t md[2] = {1, 3};
  POOT_TRY(poot_graph_broadcast(g, p[3], &ss4, md, &mb));
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, -INFINITY, &ninf));
  POOT_TRY(poot_graph_broadcast(g, ninf, &ss4, NULL, &ninf));
  POOT_TRY(poot_graph_select(g, mb, ss, ninf, &sm));
  POOT_TRY(poot_graph_softmax(g, sm, 3, &pr));
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 1;
  dd.lhs_batch[0] = 0;
  dd.rhs_batch[0] = 1;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 0;
  POOT_TRY(poot_graph_dot_general(g, pr, vf, &dd, POOT_DTYPE_F32, &o)); /* [Hkv, T, G, D] */
  int64_t perm[4] = {1, 0, 2, 3};
  POOT_TRY(poot_graph_transpose(g, o, perm, &ot));
  poot_shape s3 = poot_shape_of(3, T, Hq, D);
  POOT_TRY(poot_graph_reshape(g, ot, &s3, &of));
  if (dt != POOT_DTYPE_F32) return poot_graph_convert(g, of, dt, out);
  *out = of;
  return NULL;
}

poot_status poot__trace_attention_softcap(poot_graph *g, poot_value q, poot_value k, poot_value v,
                                          poot_value mask, double scale, double softcap,
                                          poot_value *out) {
  *out = POOT_VALUE_NONE;
  poot_composite_attr a[2] = {{.key = "scale", .kind = POOT_CATTR_FLOAT, .f = scale},
                              {.key = "softcap", .kind = POOT_CATTR_FLOAT, .f = softcap}};
  poot_value ops[4] = {q, k, v, mask}, p[4];
  POOT_TRY(poot_graph_composite_begin(g, "poot.attention", 2, a, 4, ops, p));
  poot_value y = POOT_VALUE_NONE;
  poot_status st = softcap_body(g, p, scale, softcap, &y);
  if (!st) st = poot_graph_composite_end(g, 1, &y, out);
  if (st) poot_graph_composite_abort(g);
  return st;
}
