/* trace.c — the decoder graph every family shares (docs/families.md): token
 * embedding, pre-norm blocks (attention with KV state, MLP), final norm and
 * classifier, over a constant step shape. Family differences are config
 * fields (fused projections, biases, q/k norms, post-norms, soft-capping,
 * sliding layers, rope scaling), each traced from composites and core ops. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

typedef struct tracer {
  poot_graph *g;
  const poot_model_config *c;
  const poot_model_step *s;
  const poot_model_trace_options *o;
  int64_t B, T, N, cap, D, Hq, Hkv;
  poot_dtype kv;         /* the K/V states' dtype */
  poot_value qpos;       /* i32[N] absolute positions */
  poot_value seq_len;    /* i32[N] each token's sequence length after this step */
  poot_value rows;       /* paged: i32[B, cap] pool rows */
  poot_value *mask_full; /* per sequence bool[T, cap] */
  poot_value *mask_slide;
  poot_value *weights; /* cache: (role, layer) → leaf */
  poot_arena arena;
} tracer;

static size_t weight_slot(const tracer *t, poot_weight_role role, int32_t layer) {
  return (size_t)role * (size_t)(t->c->n_layers + 1) + (size_t)(layer + 1);
}

/* The Weight leaf of (role, layer) with `expected` shape (f32), typed as the
 * trace options say. */
static poot_status weight_raw(tracer *t, poot_weight_role role, int32_t layer, uint32_t rank,
                              const int64_t *dims, poot_value *out) {
  size_t k = weight_slot(t, role, layer);
  if (t->weights[k] != POOT_VALUE_NONE) {
    *out = t->weights[k];
    return NULL;
  }
  poot_weight_ref ref = {.role = role, .layer = layer, .name = NULL};
  poot_type expected = poot_type_make(POOT_DTYPE_F32, rank, dims), type = expected;
  if (t->o && t->o->weight_type)
    POOT_TRY(t->o->weight_type(t->o->weight_type_ctx, &ref, &expected, &type));
  if (!poot_shape_equal(&type.shape, &expected.shape)) {
    poot_strbuf a, b, r;
    poot_strbuf_init(&a);
    poot_strbuf_init(&b);
    poot_strbuf_init(&r);
    poot_type_format(&a, &type);
    poot_type_format(&b, &expected);
    poot_weight_ref_format(&r, &ref);
    poot_status st = poot_status_make(POOT_FORMAT, "weight %s is %s, the %s config needs %s",
                                      r.data, a.data, poot_model_family_name(t->c->family), b.data);
    poot_strbuf_deinit(&a);
    poot_strbuf_deinit(&b);
    poot_strbuf_deinit(&r);
    return st;
  }
  poot_strbuf name;
  poot_strbuf_init(&name);
  poot_weight_id id;
  poot_status st = poot_weight_ref_id(&ref, &name, &id);
  if (!st) st = poot_graph_add_weight(t->g, &id, &type, out);
  poot_strbuf_deinit(&name);
  POOT_TRY(st);
  t->weights[k] = *out;
  return NULL;
}

/* Any weight value → f32 (dequantize packed, convert f16/bf16). */
static poot_status to_f32(tracer *t, poot_value w, poot_value *out) {
  poot_dtype dt = poot_graph_value_type(t->g, w)->dtype;
  if (dt == POOT_DTYPE_F32) {
    *out = w;
    return NULL;
  }
  if (poot_dtype_is_packed(dt)) return poot_graph_dequantize(t->g, w, POOT_DTYPE_F32, out);
  return poot_graph_convert(t->g, w, POOT_DTYPE_F32, out);
}

static poot_status weight_f32(tracer *t, poot_weight_role role, int32_t layer, uint32_t rank,
                              const int64_t *dims, poot_value *out) {
  poot_value raw;
  POOT_TRY(weight_raw(t, role, layer, rank, dims, &raw));
  return to_f32(t, raw, out);
}

static poot_status splat(tracer *t, poot_dtype dt, double v, const poot_shape *shape,
                         poot_value *out) {
  poot_value c;
  if (poot_dtype_is_float(dt))
    POOT_TRY(poot_graph_const_f32(t->g, dt, v, &c));
  else
    POOT_TRY(poot_graph_const_int(t->g, dt, (int64_t)v, &c));
  if (shape->rank == 0) {
    *out = c;
    return NULL;
  }
  return poot_graph_broadcast(t->g, c, shape, NULL, out);
}

static poot_status bin(tracer *t, poot_op op, poot_value a, poot_value b, poot_value *out) {
  return poot_graph_binary(t->g, op, a, b, out);
}

static poot_status reshape(tracer *t, poot_value x, poot_shape shape, poot_value *out) {
  return poot_graph_reshape(t->g, x, &shape, out);
}

/* x [N, in] f32 times weight [out, in] → [N, out] f32, plus an optional bias. */
static poot_status linear(tracer *t, poot_value x, poot_weight_role role, poot_weight_role bias,
                          int32_t layer, int64_t n_out, poot_value *out) {
  const poot_type xv = *poot_graph_value_type(t->g, x), *xt = &xv;
  int64_t n_in = xt->shape.dims[1];
  int64_t wd[2] = {n_out, n_in};
  poot_value w, y;
  POOT_TRY(weight_f32(t, role, layer, 2, wd, &w));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(t->g, x, w, &dd, POOT_DTYPE_F32, &y));
  if (bias != POOT_WEIGHT_NONE) {
    poot_value b, bb;
    POOT_TRY(weight_f32(t, bias, layer, 1, &n_out, &b));
    poot_shape s = poot_shape_of(2, xt->shape.dims[0], n_out);
    int64_t d1 = 1;
    POOT_TRY(poot_graph_broadcast(t->g, b, &s, &d1, &bb));
    POOT_TRY(bin(t, POOT_OP_ADD, y, bb, &y));
  }
  *out = y;
  return NULL;
}

/* RMSNorm over the last dim with weight role (n = last dim); Gemma's (1 + w)
 * when the config says so. */
static poot_status norm(tracer *t, poot_value x, poot_weight_role role, int32_t layer,
                        poot_value *out) {
  const poot_type xv = *poot_graph_value_type(t->g, x), *xt = &xv;
  int64_t n = xt->shape.dims[xt->shape.rank - 1];
  poot_value w;
  POOT_TRY(weight_f32(t, role, layer, 1, &n, &w));
  if (t->c->norm_plus_one) {
    poot_value one;
    poot_shape s = poot_shape_of(1, n);
    POOT_TRY(splat(t, POOT_DTYPE_F32, 1.0, &s, &one));
    POOT_TRY(bin(t, POOT_OP_ADD, one, w, &w));
  }
  return poot_graph_rms_norm(t->g, x, w, t->c->norm_eps, out);
}

static poot_status slice2(tracer *t, poot_value x, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                          poot_value *out) {
  int64_t st[2] = {r0, c0}, li[2] = {r1, c1};
  return poot_graph_slice(t->g, x, st, li, NULL, out);
}

/* Slices sequence b out of a tensor whose dim 0 is B (keeps the rest). */
static poot_status take_seq(tracer *t, poot_value x, int64_t b, poot_value *out) {
  const poot_type xv = *poot_graph_value_type(t->g, x), *xt = &xv;
  int64_t st[POOT_MAX_RANK] = {0}, li[POOT_MAX_RANK];
  for (uint32_t i = 0; i < xt->shape.rank; i++) li[i] = xt->shape.dims[i];
  st[0] = b;
  li[0] = b + 1;
  poot_value s;
  POOT_TRY(poot_graph_slice(t->g, x, st, li, NULL, &s));
  poot_shape rs = {.rank = xt->shape.rank - 1};
  for (uint32_t i = 1; i < xt->shape.rank; i++) rs.dims[i - 1] = xt->shape.dims[i];
  return reshape(t, s, rs, out);
}

/* Positions and masks, shared by every layer. */
static poot_status trace_positions(tracer *t, poot_value pos) {
  poot_shape bt = poot_shape_of(2, t->B, t->T);
  poot_value pb, io, qp;
  int64_t d0 = 0;
  POOT_TRY(poot_graph_broadcast(t->g, pos, &bt, &d0, &pb));
  poot_type it = poot_type_make(POOT_DTYPE_I32, 2, bt.dims);
  POOT_TRY(poot_graph_iota(t->g, &it, 1, &io));
  POOT_TRY(bin(t, POOT_OP_ADD, pb, io, &qp));
  POOT_TRY(reshape(t, qp, poot_shape_of(1, t->N), &t->qpos));
  poot_value tn, sl;
  POOT_TRY(splat(t, POOT_DTYPE_I32, (double)t->T, &bt, &tn));
  POOT_TRY(bin(t, POOT_OP_ADD, pb, tn, &sl));
  POOT_TRY(reshape(t, sl, poot_shape_of(1, t->N), &t->seq_len));
  bool sliding = t->c->sliding_window > 0;
  poot_shape tc = poot_shape_of(2, t->T, t->cap);
  poot_type tct = poot_type_make(POOT_DTYPE_I32, 2, tc.dims);
  poot_value kidx;
  POOT_TRY(poot_graph_iota(t->g, &tct, 1, &kidx));
  for (int64_t b = 0; b < t->B; b++) {
    poot_value qb, qbb, keep;
    POOT_TRY(take_seq(t, qp, b, &qb)); /* i32[T] */
    POOT_TRY(poot_graph_broadcast(t->g, qb, &tc, &d0, &qbb));
    POOT_TRY(bin(t, POOT_OP_LE, kidx, qbb, &keep));
    t->mask_full[b] = keep;
    t->mask_slide[b] = keep;
    if (sliding) {
      /* Hugging Face keeps key j for query i when i - j < window. */
      poot_value w, lo, in, both;
      POOT_TRY(splat(t, POOT_DTYPE_I32, (double)t->c->sliding_window, &tc, &w));
      POOT_TRY(bin(t, POOT_OP_SUB, qbb, w, &lo));
      POOT_TRY(bin(t, POOT_OP_GT, kidx, lo, &in));
      POOT_TRY(bin(t, POOT_OP_AND, keep, in, &both));
      t->mask_slide[b] = both;
    }
  }
  return NULL;
}

/* Paged: the pool row of every (sequence, logical position). */
static poot_status trace_rows(tracer *t, poot_value table) {
  int64_t bs = t->s->block_size;
  poot_shape cs = poot_shape_of(1, t->cap);
  poot_type ct = poot_type_make(POOT_DTYPE_I32, 1, cs.dims);
  poot_value io, bsz, blk, off, g, gb, rows;
  POOT_TRY(poot_graph_iota(t->g, &ct, 0, &io));
  POOT_TRY(splat(t, POOT_DTYPE_I32, (double)bs, &cs, &bsz));
  POOT_TRY(bin(t, POOT_OP_DIV, io, bsz, &blk));
  POOT_TRY(bin(t, POOT_OP_REM, io, bsz, &off));
  POOT_TRY(poot_graph_gather(t->g, table, blk, 1, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &g));
  poot_shape bc = poot_shape_of(2, t->B, t->cap);
  poot_value bsb, ob;
  POOT_TRY(splat(t, POOT_DTYPE_I32, (double)bs, &bc, &bsb));
  POOT_TRY(bin(t, POOT_OP_MUL, g, bsb, &gb));
  int64_t d1 = 1;
  POOT_TRY(poot_graph_broadcast(t->g, off, &bc, &d1, &ob));
  POOT_TRY(bin(t, POOT_OP_ADD, gb, ob, &rows));
  t->rows = rows;
  return NULL;
}

/* Writes this step's K or V ([N, Hkv, D] f32, rounded or quantized to the
 * state's dtype)
 * into its state and returns, per sequence, the [cap, Hkv, D] view attention
 * reads (in the state's dtype: attention converts as it loads). */
static poot_status kv_update(tracer *t, int32_t layer, bool value, poot_value fresh,
                             poot_value write_map, poot_value pos, poot_value *per_seq) {
  char name[64];
  poot_model_kv_state_name(layer, value, name, sizeof name);
  poot_value st, nv;
  if (t->kv == POOT_DTYPE_Q8_0)
    POOT_TRY(poot_graph_quantize(t->g, fresh, t->kv, &fresh));
  else if (t->kv != POOT_DTYPE_F32)
    POOT_TRY(poot_graph_convert(t->g, fresh, t->kv, &fresh));
  if (!t->s->paged) {
    poot_type ty = poot_type_make(t->kv, 4, (int64_t[]){t->B, t->cap, t->Hkv, t->D});
    POOT_TRY(poot_graph_add_state(t->g, name, &ty, &st));
    poot_value f4, zero;
    POOT_TRY(reshape(t, fresh, poot_shape_of(4, t->B, t->T, t->Hkv, t->D), &f4));
    POOT_TRY(poot_graph_const_int(t->g, POOT_DTYPE_I32, 0, &zero));
    nv = st;
    for (int64_t b = 0; b < t->B; b++) {
      poot_value upd, bi, pb, pscalar;
      int64_t s0[4] = {b, 0, 0, 0}, l0[4] = {b + 1, t->T, t->Hkv, t->D};
      POOT_TRY(poot_graph_slice(t->g, f4, s0, l0, NULL, &upd));
      POOT_TRY(poot_graph_const_int(t->g, POOT_DTYPE_I32, b, &bi));
      int64_t ps = b, pl = b + 1;
      POOT_TRY(poot_graph_slice(t->g, pos, &ps, &pl, NULL, &pb));
      POOT_TRY(reshape(t, pb, poot_shape_of(0), &pscalar));
      poot_value starts[4] = {bi, pscalar, zero, zero};
      POOT_TRY(
          poot_graph_dynamic_update_slice(t->g, nv, upd, starts, POOT_TRAP_POS_OUT_OF_RANGE, &nv));
    }
    POOT_TRY(poot_graph_set_state_update(t->g, st, nv));
    for (int64_t b = 0; b < t->B; b++) POOT_TRY(take_seq(t, nv, b, &per_seq[b]));
    return NULL;
  }
  int64_t R = t->s->num_blocks * t->s->block_size;
  poot_type ty = poot_type_make(t->kv, 3, (int64_t[]){R, t->Hkv, t->D});
  POOT_TRY(poot_graph_add_state(t->g, name, &ty, &st));
  POOT_TRY(poot_graph_scatter_update(t->g, st, write_map, fresh, 0,
                                     POOT_TRAP_WRITE_MAP_OUT_OF_RANGE, &nv));
  POOT_TRY(poot_graph_set_state_update(t->g, st, nv));
  for (int64_t b = 0; b < t->B; b++) {
    poot_value rb;
    POOT_TRY(take_seq(t, t->rows, b, &rb));
    POOT_TRY(poot_graph_gather(t->g, nv, rb, 0, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &per_seq[b]));
  }
  return NULL;
}

/* input_embeds: declares the embeds / embeds_on slots and returns x [N,
 * hidden] with the rows whose embeds_on is nonzero taken from embeds. */
static poot_status input_rows(tracer *t, poot_value x, poot_value *out) {
  int64_t H = t->c->hidden_size;
  poot_type et = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){t->B, t->T, H});
  poot_type ot = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t->B, t->T});
  poot_value e, on, e2, on1, zero, use, useb;
  POOT_TRY(poot_graph_add_slot(t->g, POOT_SLOT_NAMED, POOT_MODEL_SLOT_EMBEDS, &et, &e));
  POOT_TRY(poot_graph_add_slot(t->g, POOT_SLOT_NAMED, POOT_MODEL_SLOT_EMBEDS_ON, &ot, &on));
  poot_shape ns = poot_shape_of(1, t->N), xs = poot_shape_of(2, t->N, H);
  POOT_TRY(reshape(t, e, xs, &e2));
  POOT_TRY(reshape(t, on, ns, &on1));
  POOT_TRY(splat(t, POOT_DTYPE_I32, 0, &ns, &zero));
  POOT_TRY(bin(t, POOT_OP_NE, on1, zero, &use));
  int64_t d0 = 0;
  POOT_TRY(poot_graph_broadcast(t->g, use, &xs, &d0, &useb));
  return poot_graph_select(t->g, useb, e2, x, out);
}

static bool layer_is_sliding(const poot_model_config *c, int64_t layer) {
  if (c->sliding_window <= 0) return false;
  if (!c->any_layer_sliding_marked) return true;
  return c->layer_sliding[layer] != 0;
}

static poot_status trace_attention(tracer *t, int32_t L, poot_value h, poot_value write_map,
                                   poot_value pos, poot_value *out) {
  const poot_model_config *c = t->c;
  int64_t qd = t->Hq * t->D, kd = t->Hkv * t->D;
  poot_value q, k, v;
  if (c->fused_qkv) {
    poot_value qkv;
    POOT_TRY(linear(t, h, POOT_WEIGHT_ATTN_QKV,
                    c->qkv_bias ? POOT_WEIGHT_ATTN_QKV_BIAS : POOT_WEIGHT_NONE, L, qd + 2 * kd,
                    &qkv));
    POOT_TRY(slice2(t, qkv, 0, t->N, 0, qd, &q));
    POOT_TRY(slice2(t, qkv, 0, t->N, qd, qd + kd, &k));
    POOT_TRY(slice2(t, qkv, 0, t->N, qd + kd, qd + 2 * kd, &v));
  } else {
    POOT_TRY(linear(t, h, POOT_WEIGHT_ATTN_Q,
                    c->qkv_bias ? POOT_WEIGHT_ATTN_Q_BIAS : POOT_WEIGHT_NONE, L, qd, &q));
    POOT_TRY(linear(t, h, POOT_WEIGHT_ATTN_K,
                    c->qkv_bias ? POOT_WEIGHT_ATTN_K_BIAS : POOT_WEIGHT_NONE, L, kd, &k));
    POOT_TRY(linear(t, h, POOT_WEIGHT_ATTN_V,
                    c->qkv_bias ? POOT_WEIGHT_ATTN_V_BIAS : POOT_WEIGHT_NONE, L, kd, &v));
  }
  POOT_TRY(reshape(t, q, poot_shape_of(3, t->N, t->Hq, t->D), &q));
  POOT_TRY(reshape(t, k, poot_shape_of(3, t->N, t->Hkv, t->D), &k));
  POOT_TRY(reshape(t, v, poot_shape_of(3, t->N, t->Hkv, t->D), &v));
  if (c->qk_norm) {
    POOT_TRY(norm(t, q, POOT_WEIGHT_ATTN_Q_NORM, L, &q));
    POOT_TRY(norm(t, k, POOT_WEIGHT_ATTN_K_NORM, L, &k));
  }
  bool sliding = layer_is_sliding(c, L);
  POOT_TRY(poot__trace_rope(t->g, c, sliding, q, t->qpos, t->seq_len, &q));
  POOT_TRY(poot__trace_rope(t->g, c, sliding, k, t->qpos, t->seq_len, &k));

  poot_value *ks = POOT_ARENA_NEW_ARRAY(&t->arena, poot_value, (size_t)t->B);
  poot_value *vs = POOT_ARENA_NEW_ARRAY(&t->arena, poot_value, (size_t)t->B);
  poot_value *os = POOT_ARENA_NEW_ARRAY(&t->arena, poot_value, (size_t)t->B);
  if (!ks || !vs || !os) return poot_status_make(POOT_OUT_OF_MEMORY, "trace: attention arrays");
  POOT_TRY(kv_update(t, L, false, k, write_map, pos, ks));
  POOT_TRY(kv_update(t, L, true, v, write_map, pos, vs));
  double scale = c->attn_scale > 0 ? c->attn_scale : 1.0 / sqrt((double)t->D);
  for (int64_t b = 0; b < t->B; b++) {
    poot_value qb;
    int64_t s0[3] = {b * t->T, 0, 0}, l0[3] = {(b + 1) * t->T, t->Hq, t->D};
    POOT_TRY(poot_graph_slice(t->g, q, s0, l0, NULL, &qb));
    poot_value mask = sliding ? t->mask_slide[b] : t->mask_full[b];
    if (c->attn_softcap > 0)
      POOT_TRY(poot__trace_attention_softcap(t->g, qb, ks[b], vs[b], mask, scale, c->attn_softcap,
                                             &os[b]));
    else
      POOT_TRY(poot_graph_attention(t->g, qb, ks[b], vs[b], mask, scale, &os[b]));
  }
  poot_value o = os[0];
  if (t->B > 1) POOT_TRY(poot_graph_concat(t->g, (uint32_t)t->B, os, 0, &o));
  POOT_TRY(reshape(t, o, poot_shape_of(2, t->N, qd), &o));
  return linear(t, o, POOT_WEIGHT_ATTN_OUTPUT, POOT_WEIGHT_NONE, L, c->hidden_size, out);
}

static poot_status trace_mlp(tracer *t, int32_t L, poot_value h, poot_value *out) {
  const poot_model_config *c = t->c;
  int64_t ff = c->intermediate_size;
  poot_value gate, up, act;
  if (c->fused_gate_up) {
    poot_value gu;
    POOT_TRY(linear(t, h, POOT_WEIGHT_FFN_UP, POOT_WEIGHT_NONE, L, 2 * ff, &gu));
    POOT_TRY(slice2(t, gu, 0, t->N, 0, ff, &gate));
    POOT_TRY(slice2(t, gu, 0, t->N, ff, 2 * ff, &up));
  } else {
    POOT_TRY(linear(t, h, POOT_WEIGHT_FFN_GATE, POOT_WEIGHT_NONE, L, ff, &gate));
    POOT_TRY(linear(t, h, POOT_WEIGHT_FFN_UP, POOT_WEIGHT_NONE, L, ff, &up));
  }
  if (c->activation == POOT_MODEL_ACT_GELU_TANH)
    POOT_TRY(poot_graph_geglu(t->g, gate, up, &act));
  else
    POOT_TRY(poot_graph_swiglu(t->g, gate, up, &act));
  return linear(t, act, POOT_WEIGHT_FFN_DOWN, POOT_WEIGHT_NONE, L, c->hidden_size, out);
}

static poot_status trace_all(tracer *t) {
  const poot_model_config *c = t->c;
  const poot_model_step *s = t->s;
  poot_graph *g = t->g;
  poot_type tokt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t->B, t->T});
  poot_type post = poot_type_make(POOT_DTYPE_I32, 1, &t->B);
  poot_value tok, pos, write_map = POOT_VALUE_NONE;
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_TOKEN, NULL, &tokt, &tok));
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &post, &pos));
  if (s->paged) {
    poot_type smt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t->B, t->cap / s->block_size});
    poot_type wmt = poot_type_make(POOT_DTYPE_I32, 1, &t->N);
    poot_value table;
    POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_SLOT_MAP, NULL, &smt, &table));
    POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_WRITE_MAP, NULL, &wmt, &write_map));
    POOT_TRY(trace_rows(t, table));
  }
  POOT_TRY(trace_positions(t, pos));

  /* Token embedding: gather rows, then f32 (a packed table is dequantized
   * first: gather reads only plain dtypes). */
  poot_value emb, tokn, x;
  int64_t ed[2] = {c->vocab_size, c->hidden_size};
  POOT_TRY(weight_raw(t, POOT_WEIGHT_TOKEN_EMBD, -1, 2, ed, &emb));
  if (poot_dtype_is_packed(poot_graph_value_type(g, emb)->dtype)) POOT_TRY(to_f32(t, emb, &emb));
  POOT_TRY(reshape(t, tok, poot_shape_of(1, t->N), &tokn));
  POOT_TRY(poot_graph_gather(g, emb, tokn, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &x));
  POOT_TRY(to_f32(t, x, &x));
  /* Hugging Face's inputs_embeds replace the table's rows before Gemma's and
   * Gemma 2's scale (their models multiply inputs_embeds by the normalizer),
   * but after Gemma 3's, which its embedding module applies. */
  bool rows_scaled = c->family == POOT_MODEL_FAMILY_GEMMA3;
  if (s->input_embeds && !rows_scaled) POOT_TRY(input_rows(t, x, &x));
  if (c->embed_scale) {
    /* Hugging Face: hidden * tensor(sqrt(hidden_size), dtype) — rounded to f32. */
    poot_value sc;
    poot_shape xs = poot_shape_of(2, t->N, c->hidden_size);
    POOT_TRY(splat(t, POOT_DTYPE_F32, sqrt((double)c->hidden_size), &xs, &sc));
    POOT_TRY(bin(t, POOT_OP_MUL, x, sc, &x));
  }
  if (s->input_embeds && rows_scaled) POOT_TRY(input_rows(t, x, &x));

  for (int32_t L = 0; L < (int32_t)c->n_layers; L++) {
    poot_value h, a, m;
    POOT_TRY(norm(t, x, POOT_WEIGHT_ATTN_NORM, L, &h));
    POOT_TRY(trace_attention(t, L, h, write_map, pos, &a));
    if (c->post_norms) POOT_TRY(norm(t, a, POOT_WEIGHT_ATTN_POST_NORM, L, &a));
    POOT_TRY(bin(t, POOT_OP_ADD, x, a, &x));
    POOT_TRY(norm(t, x, POOT_WEIGHT_FFN_NORM, L, &h));
    POOT_TRY(trace_mlp(t, L, h, &m));
    if (c->post_norms) POOT_TRY(norm(t, m, POOT_WEIGHT_FFN_POST_NORM, L, &m));
    POOT_TRY(bin(t, POOT_OP_ADD, x, m, &x));
  }

  poot_value y;
  if (s->output == POOT_MODEL_OUTPUT_HIDDEN) {
    POOT_TRY(norm(t, x, POOT_WEIGHT_OUTPUT_NORM, -1, &y));
    POOT_TRY(reshape(t, y, poot_shape_of(3, t->B, t->T, c->hidden_size), &y));
    return poot_graph_set_output(g, y);
  }
  poot_value x3, last;
  POOT_TRY(reshape(t, x, poot_shape_of(3, t->B, t->T, c->hidden_size), &x3));
  int64_t s0[3] = {0, t->T - 1, 0}, l0[3] = {t->B, t->T, c->hidden_size};
  POOT_TRY(poot_graph_slice(g, x3, s0, l0, NULL, &last));
  POOT_TRY(reshape(t, last, poot_shape_of(2, t->B, c->hidden_size), &last));
  POOT_TRY(norm(t, last, POOT_WEIGHT_OUTPUT_NORM, -1, &y));
  POOT_TRY(linear(t, y, c->tied_output ? POOT_WEIGHT_TOKEN_EMBD : POOT_WEIGHT_OUTPUT,
                  POOT_WEIGHT_NONE, -1, c->vocab_size, &y));
  if (c->final_softcap > 0) {
    /* Hugging Face: logits / cap, tanh, * cap. */
    poot_shape ls = poot_shape_of(2, t->B, c->vocab_size);
    poot_value cap, d, th;
    POOT_TRY(splat(t, POOT_DTYPE_F32, c->final_softcap, &ls, &cap));
    POOT_TRY(bin(t, POOT_OP_DIV, y, cap, &d));
    POOT_TRY(poot_graph_unary(g, POOT_OP_TANH, d, &th));
    POOT_TRY(bin(t, POOT_OP_MUL, th, cap, &y));
  }
  return poot_graph_set_output(g, y);
}

void poot_model_kv_state_name(int64_t layer, bool value, char *buf, size_t buf_size) {
  snprintf(buf, buf_size, "blk.%lld.%s", (long long)layer, value ? "v" : "k");
}

static poot_status check_step(const poot_model_config *c, const poot_model_step *s) {
  if (s->batch < 1 || s->tokens < 1 || s->cap < s->tokens)
    return BAD(
        "trace: step shape needs batch >= 1, tokens >= 1 and cap >= tokens (got %lld, "
        "%lld, %lld)",
        (long long)s->batch, (long long)s->tokens, (long long)s->cap);
  if (s->batch > 4096 || s->tokens > (1 << 20) || s->cap > (1 << 24))
    return BAD("trace: step shape too large");
  if (s->paged) {
    if (s->block_size < 1 || s->cap % s->block_size || s->num_blocks < 1)
      return BAD("trace: paged step needs block_size dividing cap (%lld) and num_blocks >= 1",
                 (long long)s->cap);
  }
  if (s->output != POOT_MODEL_OUTPUT_LOGITS && s->output != POOT_MODEL_OUTPUT_HIDDEN)
    return BAD("trace: unknown output kind %d", (int)s->output);
  (void)c;
  return NULL;
}

/* The K/V states' dtype of `o` for `s` (NONE: poot_model_kv_dtype_default). */
static poot_status kv_dtype_of(const poot_model_trace_options *o, const poot_model_config *c,
                               const poot_model_step *s, poot_dtype *out) {
  poot_dtype dt = o ? o->kv_dtype : POOT_DTYPE_NONE;
  if (dt == POOT_DTYPE_NONE) dt = poot_model_kv_dtype_default(s->paged);
  if (!poot_model_kv_dtype_ok(dt))
    return BAD("trace: kv_dtype %s is not a KV cache type (f32, f16 or q8_0)", poot_dtype_name(dt));
  if (dt == POOT_DTYPE_Q8_0 && c->head_dim % 32)
    return BAD("trace: kv_dtype q8_0 needs a head_dim that is a multiple of 32, not %lld",
               (long long)c->head_dim);
  *out = dt;
  return NULL;
}

poot_status poot_model_trace(const poot_model_config *config, const poot_model_step *step,
                             const poot_model_trace_options *options, poot_graph **out_graph) {
  *out_graph = NULL;
  if (!config || !step) return BAD("poot_model_trace: NULL config or step");
  POOT_TRY(poot_model_config_validate(config));
  if (poot_model_is_encoder(config) ||
      (step->output == POOT_MODEL_OUTPUT_EMBEDDING || step->output == POOT_MODEL_OUTPUT_SCORES))
    return poot__encoder_trace(config, step, options, out_graph);
  POOT_TRY(check_step(config, step));
  tracer t;
  memset(&t, 0, sizeof t);
  POOT_TRY(kv_dtype_of(options, config, step, &t.kv));
  t.c = config;
  t.s = step;
  t.o = options;
  t.B = step->batch;
  t.T = step->tokens;
  t.N = t.B * t.T;
  t.cap = step->cap;
  t.D = config->head_dim;
  t.Hq = config->n_heads;
  t.Hkv = config->n_kv_heads;
  t.rows = POOT_VALUE_NONE;
  poot_arena_init(&t.arena, 0);
  poot_status st = NULL;
  size_t nw = (size_t)POOT_WEIGHT_ROLE_COUNT * (size_t)(config->n_layers + 1);
  t.weights = POOT_ARENA_NEW_ARRAY(&t.arena, poot_value, nw);
  t.mask_full = POOT_ARENA_NEW_ARRAY(&t.arena, poot_value, (size_t)t.B);
  t.mask_slide = POOT_ARENA_NEW_ARRAY(&t.arena, poot_value, (size_t)t.B);
  if (!t.weights || !t.mask_full || !t.mask_slide) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "trace: bookkeeping");
    goto done;
  }
  for (size_t i = 0; i < nw; i++) t.weights[i] = POOT_VALUE_NONE;
  if ((st = poot_graph_create(&t.g))) goto done;
  if ((st = trace_all(&t))) goto done;
  if ((st = poot_graph_verify(t.g))) goto done;
  *out_graph = t.g;
  t.g = NULL;
done:
  if (st)
    st = poot_status_annotate(
        st, "tracing %s (B=%lld, T=%lld, cap=%lld%s%s)", poot_model_family_name(config->family),
        (long long)step->batch, (long long)step->tokens, (long long)step->cap,
        step->paged ? ", paged" : "", step->input_embeds ? ", input embeds" : "");
  poot_graph_destroy(t.g);
  poot_arena_deinit(&t.arena);
  return st;
}
