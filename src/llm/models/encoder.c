/* encoder.c — the encoder graph (BERT; docs/encoders.md): B right-padded
 * sequences of at most T tokens in one step, no KV state.
 *
 *   x = LayerNorm(word[token] + position[0..T) + type[token_type])
 *   per layer (post-norm):
 *     a = attention(x Wq + bq, x Wk + bk, x Wv + bv; key j of sequence b
 *         visible to every query of b iff j < seq_len[b]) Wo + bo
 *     x = LayerNorm(x + a)
 *     x = LayerNorm(x + gelu(x Wup + bup) Wdown + bdown)
 *   EMBEDDING: pool x over each sequence's real tokens (mean, [CLS] or the
 *              last), then x / max(‖x‖₂, 1e-12) when normalizing;
 *   SCORES:    tanh(x[CLS] Wpool + bpool) Wcls + bcls (the pooler is skipped
 *              when the model has none: llama.cpp's GGUF rerankers).
 *
 * Padding never reaches a real token: a padded key is masked for every
 * query, and pooling weighs only positions below seq_len. The graph depends
 * on (B, T) only, so one entry serves every batch of that shape. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
/* Up to this many sequences a step, each runs its own poot.attention (the
 * tuned attention template); past it, one batched attention of core ops. */
#define PER_SEQUENCE_MAX 8

typedef struct enc {
  poot_graph *g;
  const poot_model_config *c;
  const poot_model_trace_options *o;
  int64_t B, T, N, H, Hq, D;
} enc;

/* The Weight leaf of (role, layer), typed as the trace options say, as f32. */
static poot_status weight(enc *e, poot_weight_role role, int32_t layer, uint32_t rank,
                          const int64_t *dims, bool convert, poot_value *out) {
  poot_weight_ref ref = {.role = role, .layer = layer, .name = NULL};
  poot_type expected = poot_type_make(POOT_DTYPE_F32, rank, dims), type = expected;
  if (e->o && e->o->weight_type)
    POOT_TRY(e->o->weight_type(e->o->weight_type_ctx, &ref, &expected, &type));
  if (!poot_shape_equal(&type.shape, &expected.shape)) {
    poot_strbuf r;
    poot_strbuf_init(&r);
    poot_weight_ref_format(&r, &ref);
    poot_status st = poot_status_make(POOT_FORMAT,
                                      "weight %s does not have the shape the %s "
                                      "config needs",
                                      r.data, poot_model_family_name(e->c->family));
    poot_strbuf_deinit(&r);
    return st;
  }
  poot_strbuf name;
  poot_strbuf_init(&name);
  poot_weight_id id;
  poot_value w = POOT_VALUE_NONE;
  poot_status st = poot_weight_ref_id(&ref, &name, &id);
  if (!st) st = poot_graph_add_weight(e->g, &id, &type, &w);
  poot_strbuf_deinit(&name);
  POOT_TRY(st);
  *out = w;
  if (!convert || type.dtype == POOT_DTYPE_F32) return NULL;
  if (poot_dtype_is_packed(type.dtype)) return poot_graph_dequantize(e->g, w, POOT_DTYPE_F32, out);
  return poot_graph_convert(e->g, w, POOT_DTYPE_F32, out);
}

static poot_status to_f32(enc *e, poot_value x, poot_value *out) {
  poot_dtype dt = poot_graph_value_type(e->g, x)->dtype;
  *out = x;
  if (dt == POOT_DTYPE_F32) return NULL;
  if (poot_dtype_is_packed(dt)) return poot_graph_dequantize(e->g, x, POOT_DTYPE_F32, out);
  return poot_graph_convert(e->g, x, POOT_DTYPE_F32, out);
}

static poot_status bin(enc *e, poot_op op, poot_value a, poot_value b, poot_value *out) {
  return poot_graph_binary(e->g, op, a, b, out);
}

static poot_status splat(enc *e, poot_dtype dt, double v, poot_shape shape, poot_value *out) {
  poot_value c;
  if (poot_dtype_is_float(dt))
    POOT_TRY(poot_graph_const_f32(e->g, dt, v, &c));
  else
    POOT_TRY(poot_graph_const_int(e->g, dt, (int64_t)v, &c));
  return poot_graph_broadcast(e->g, c, &shape, NULL, out);
}

/* x [M, in] times weight [out, in] plus bias → [M, out]. */
static poot_status linear(enc *e, poot_value x, poot_weight_role role, poot_weight_role bias,
                          int32_t layer, int64_t n_out, poot_value *out) {
  const poot_type xt = *poot_graph_value_type(e->g, x);
  int64_t M = xt.shape.dims[0], n_in = xt.shape.dims[1];
  int64_t wd[2] = {n_out, n_in};
  poot_value w, y, b, bb;
  POOT_TRY(weight(e, role, layer, 2, wd, true, &w));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(e->g, x, w, &dd, POOT_DTYPE_F32, &y));
  POOT_TRY(weight(e, bias, layer, 1, &n_out, true, &b));
  poot_shape s = poot_shape_of(2, M, n_out);
  int64_t d1 = 1;
  POOT_TRY(poot_graph_broadcast(e->g, b, &s, &d1, &bb));
  return bin(e, POOT_OP_ADD, y, bb, out);
}

static poot_status layer_norm(enc *e, poot_value x, poot_weight_role w_role,
                              poot_weight_role b_role, int32_t layer, poot_value *out) {
  poot_value w, b;
  POOT_TRY(weight(e, w_role, layer, 1, &e->H, true, &w));
  POOT_TRY(weight(e, b_role, layer, 1, &e->H, true, &b));
  return poot_graph_layer_norm(e->g, x, w, b, e->c->norm_eps, out);
}

/* x [N, H] from the token, position and token-type embeddings. */
static poot_status embeddings(enc *e, poot_value tok, poot_value types, poot_value *out) {
  const poot_model_config *c = e->c;
  poot_value emb, tn, x, pe, ps, pb, tt, ttn, ty;
  int64_t ed[2] = {c->vocab_size, e->H};
  POOT_TRY(weight(e, POOT_WEIGHT_TOKEN_EMBD, -1, 2, ed, false, &emb));
  if (poot_dtype_is_packed(poot_graph_value_type(e->g, emb)->dtype)) POOT_TRY(to_f32(e, emb, &emb));
  POOT_TRY(poot_graph_reshape(e->g, tok, &(poot_shape){.rank = 1, .dims = {e->N}}, &tn));
  POOT_TRY(poot_graph_gather(e->g, emb, tn, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &x));
  POOT_TRY(to_f32(e, x, &x));
  /* Positions are 0..T-1 in every sequence (right padding). */
  int64_t pd[2] = {c->context_length, e->H};
  POOT_TRY(weight(e, POOT_WEIGHT_POSITION_EMBD, -1, 2, pd, true, &pe));
  int64_t s0[2] = {0, 0}, l0[2] = {e->T, e->H};
  POOT_TRY(poot_graph_slice(e->g, pe, s0, l0, NULL, &ps));
  poot_shape bth = poot_shape_of(3, e->B, e->T, e->H);
  int64_t keep[2] = {1, 2};
  POOT_TRY(poot_graph_broadcast(e->g, ps, &bth, keep, &pb));
  POOT_TRY(poot_graph_reshape(e->g, pb, &(poot_shape){.rank = 2, .dims = {e->N, e->H}}, &pb));
  int64_t td[2] = {c->type_vocab_size, e->H};
  POOT_TRY(weight(e, POOT_WEIGHT_TOKEN_TYPES, -1, 2, td, true, &tt));
  POOT_TRY(poot_graph_reshape(e->g, types, &(poot_shape){.rank = 1, .dims = {e->N}}, &ttn));
  POOT_TRY(poot_graph_gather(e->g, tt, ttn, 0, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &ty));
  POOT_TRY(bin(e, POOT_OP_ADD, x, pb, &x));
  POOT_TRY(bin(e, POOT_OP_ADD, x, ty, &x));
  return layer_norm(e, x, POOT_WEIGHT_TOKEN_EMBD_NORM, POOT_WEIGHT_TOKEN_EMBD_NORM_BIAS, -1, out);
}

/* Each sequence's key mask bool[T, T] (key j visible iff j < seq_len[b])
 * and its real positions as f32[B, T] (1 below seq_len, else 0). */
static poot_status masks(enc *e, poot_value len, poot_value *keys, poot_value *out_vis,
                         poot_value *real) {
  poot_shape btt = poot_shape_of(3, e->B, e->T, e->T), bt = poot_shape_of(2, e->B, e->T);
  poot_type btt_i = poot_type_make(POOT_DTYPE_I32, 3, btt.dims);
  poot_type bt_i = poot_type_make(POOT_DTYPE_I32, 2, bt.dims);
  poot_value kidx, lb, vis, pidx, lb2, on, one, zero;
  int64_t d0 = 0;
  POOT_TRY(poot_graph_iota(e->g, &btt_i, 2, &kidx));
  POOT_TRY(poot_graph_broadcast(e->g, len, &btt, &d0, &lb));
  POOT_TRY(bin(e, POOT_OP_LT, kidx, lb, &vis));
  *out_vis = vis;
  for (int64_t b = 0; b < e->B && e->B <= PER_SEQUENCE_MAX; b++) {
    int64_t s0[3] = {b, 0, 0}, l0[3] = {b + 1, e->T, e->T};
    poot_value m;
    POOT_TRY(poot_graph_slice(e->g, vis, s0, l0, NULL, &m));
    POOT_TRY(poot_graph_reshape(e->g, m, &(poot_shape){.rank = 2, .dims = {e->T, e->T}}, &keys[b]));
  }
  POOT_TRY(poot_graph_iota(e->g, &bt_i, 1, &pidx));
  POOT_TRY(poot_graph_broadcast(e->g, len, &bt, &d0, &lb2));
  /* min(max(seq_len - t, 0), 1) in f32 (exact for these integers): no
   * select and no integer min/max, which the contraction template's fused
   * prologue mistypes at B >= 16 (docs/encoders.md, "Open"). */
  POOT_TRY(poot_graph_convert(e->g, lb2, POOT_DTYPE_F32, &lb2));
  POOT_TRY(poot_graph_convert(e->g, pidx, POOT_DTYPE_F32, &pidx));
  POOT_TRY(bin(e, POOT_OP_SUB, lb2, pidx, &on));
  POOT_TRY(splat(e, POOT_DTYPE_F32, 0.0, bt, &zero));
  POOT_TRY(splat(e, POOT_DTYPE_F32, 1.0, bt, &one));
  POOT_TRY(bin(e, POOT_OP_MAX, on, zero, &on));
  return bin(e, POOT_OP_MIN, on, one, real);
}

/* Attention of all B sequences at once, from core ops and the softmax
 * composite: scores [B, H, T, T] by one batched contraction, masked with
 * `vis` bool[B, T, T], softmax over the keys, times V. Used past
 * PER_SEQUENCE_MAX sequences, where one poot.attention a sequence joined by
 * a concat makes the output projection's fused prologue read too many
 * temporaries to compile (docs/encoders.md, "Open"). q, k, v: [N, Hq, D];
 * out [N, Hq * D]. */
static poot_status attention_batched(enc *e, poot_value q, poot_value k, poot_value v,
                                     poot_value vis, double scale, poot_value *out) {
  poot_shape b4 = poot_shape_of(4, e->B, e->T, e->Hq, e->D);
  poot_shape bhtt = poot_shape_of(4, e->B, e->Hq, e->T, e->T);
  poot_value q4, k4, v4, s, c, m, ninf, p, o;
  POOT_TRY(poot_graph_reshape(e->g, q, &b4, &q4));
  POOT_TRY(poot_graph_reshape(e->g, k, &b4, &k4));
  POOT_TRY(poot_graph_reshape(e->g, v, &b4, &v4));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 2;
  dd.lhs_batch[0] = 0, dd.lhs_batch[1] = 2;
  dd.rhs_batch[0] = 0, dd.rhs_batch[1] = 2;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 3;
  POOT_TRY(poot_graph_dot_general(e->g, q4, k4, &dd, POOT_DTYPE_F32, &s)); /* [B, H, T, T] */
  POOT_TRY(splat(e, POOT_DTYPE_F32, scale, bhtt, &c));
  POOT_TRY(bin(e, POOT_OP_MUL, s, c, &s));
  int64_t keep[3] = {0, 2, 3};
  POOT_TRY(poot_graph_broadcast(e->g, vis, &bhtt, keep, &m));
  POOT_TRY(splat(e, POOT_DTYPE_F32, -INFINITY, bhtt, &ninf));
  POOT_TRY(poot_graph_select(e->g, m, s, ninf, &s));
  POOT_TRY(poot_graph_softmax(e->g, s, 3, &p));
  memset(&dd, 0, sizeof dd);
  dd.num_batch = 2;
  dd.lhs_batch[0] = 0, dd.lhs_batch[1] = 1;
  dd.rhs_batch[0] = 0, dd.rhs_batch[1] = 2;
  dd.num_contract = 1;
  dd.lhs_contract[0] = 3;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(e->g, p, v4, &dd, POOT_DTYPE_F32, &o)); /* [B, H, T, D] */
  int64_t perm[4] = {0, 2, 1, 3};
  POOT_TRY(poot_graph_transpose(e->g, o, perm, &o));
  return poot_graph_reshape(e->g, o, &(poot_shape){.rank = 2, .dims = {e->N, e->Hq * e->D}}, out);
}

/* One poot.attention a sequence (B <= PER_SEQUENCE_MAX), joined by a
 * concat: out [N, Hq * D]. */
static poot_status attention_per_sequence(enc *e, poot_value q, poot_value k, poot_value v,
                                          const poot_value *keys, double scale, poot_value *out) {
  poot_value o[PER_SEQUENCE_MAX];
  for (int64_t b = 0; b < e->B; b++) {
    int64_t s0[3] = {b * e->T, 0, 0}, l0[3] = {(b + 1) * e->T, e->Hq, e->D};
    poot_value qb, kb, vb;
    POOT_TRY(poot_graph_slice(e->g, q, s0, l0, NULL, &qb));
    POOT_TRY(poot_graph_slice(e->g, k, s0, l0, NULL, &kb));
    POOT_TRY(poot_graph_slice(e->g, v, s0, l0, NULL, &vb));
    POOT_TRY(poot_graph_attention(e->g, qb, kb, vb, keys[b], scale, &o[b]));
  }
  poot_value a = o[0];
  if (e->B > 1) POOT_TRY(poot_graph_concat(e->g, (uint32_t)e->B, o, 0, &a));
  return poot_graph_reshape(e->g, a, &(poot_shape){.rank = 2, .dims = {e->N, e->Hq * e->D}}, out);
}

static poot_status block(enc *e, int32_t L, poot_value x, const poot_value *keys, poot_value vis,
                         poot_value *out) {
  const int64_t H = e->H, QD = e->Hq * e->D;
  poot_value q, k, v, a, y, f;
  POOT_TRY(linear(e, x, POOT_WEIGHT_ATTN_Q, POOT_WEIGHT_ATTN_Q_BIAS, L, QD, &q));
  POOT_TRY(linear(e, x, POOT_WEIGHT_ATTN_K, POOT_WEIGHT_ATTN_K_BIAS, L, QD, &k));
  POOT_TRY(linear(e, x, POOT_WEIGHT_ATTN_V, POOT_WEIGHT_ATTN_V_BIAS, L, QD, &v));
  poot_shape heads = poot_shape_of(3, e->N, e->Hq, e->D);
  POOT_TRY(poot_graph_reshape(e->g, q, &heads, &q));
  POOT_TRY(poot_graph_reshape(e->g, k, &heads, &k));
  POOT_TRY(poot_graph_reshape(e->g, v, &heads, &v));
  double scale = 1.0 / sqrt((double)e->D);
  if (e->B > PER_SEQUENCE_MAX)
    POOT_TRY(attention_batched(e, q, k, v, vis, scale, &a));
  else
    POOT_TRY(attention_per_sequence(e, q, k, v, keys, scale, &a));
  POOT_TRY(linear(e, a, POOT_WEIGHT_ATTN_OUTPUT, POOT_WEIGHT_ATTN_OUTPUT_BIAS, L, H, &a));
  POOT_TRY(bin(e, POOT_OP_ADD, x, a, &y));
  POOT_TRY(
      layer_norm(e, y, POOT_WEIGHT_ATTN_OUTPUT_NORM, POOT_WEIGHT_ATTN_OUTPUT_NORM_BIAS, L, &x));
  POOT_TRY(
      linear(e, x, POOT_WEIGHT_FFN_UP, POOT_WEIGHT_FFN_UP_BIAS, L, e->c->intermediate_size, &f));
  POOT_TRY(poot_graph_gelu(e->g, f, e->c->activation == POOT_MODEL_ACT_GELU_TANH, &f));
  POOT_TRY(linear(e, f, POOT_WEIGHT_FFN_DOWN, POOT_WEIGHT_FFN_DOWN_BIAS, L, H, &f));
  POOT_TRY(bin(e, POOT_OP_ADD, x, f, &y));
  return layer_norm(e, y, POOT_WEIGHT_LAYER_OUTPUT_NORM, POOT_WEIGHT_LAYER_OUTPUT_NORM_BIAS, L,
                    out);
}

/* The first token's state of each sequence: [B, H]. */
static poot_status first_token(enc *e, poot_value x3, poot_value *out) {
  int64_t s0[3] = {0, 0, 0}, l0[3] = {e->B, 1, e->H};
  poot_value s;
  POOT_TRY(poot_graph_slice(e->g, x3, s0, l0, NULL, &s));
  return poot_graph_reshape(e->g, s, &(poot_shape){.rank = 2, .dims = {e->B, e->H}}, out);
}

/* sum_t x3[b, t] * w[b, t] over t: [B, H]. */
static poot_status weighted_sum(enc *e, poot_value x3, poot_value w, poot_value *out) {
  poot_shape bth = poot_shape_of(3, e->B, e->T, e->H);
  int64_t keep[2] = {0, 1}, axis = 1;
  poot_value wb, p;
  POOT_TRY(poot_graph_broadcast(e->g, w, &bth, keep, &wb));
  POOT_TRY(bin(e, POOT_OP_MUL, x3, wb, &p));
  return poot_graph_reduce(e->g, p, POOT_REDUCE_SUM, 1, &axis, POOT_DTYPE_F32, out);
}

static poot_status pool(enc *e, poot_model_pooling how, poot_value x3, poot_value len,
                        poot_value real, poot_value *out) {
  poot_shape bh = poot_shape_of(2, e->B, e->H);
  int64_t d0 = 0;
  if (how == POOT_MODEL_POOLING_CLS) return first_token(e, x3, out);
  if (how == POOT_MODEL_POOLING_MEAN) {
    poot_value s, lf, lb;
    POOT_TRY(weighted_sum(e, x3, real, &s));
    POOT_TRY(poot_graph_convert(e->g, len, POOT_DTYPE_F32, &lf));
    POOT_TRY(poot_graph_broadcast(e->g, lf, &bh, &d0, &lb));
    return bin(e, POOT_OP_DIV, s, lb, out);
  }
  /* LAST: the one-hot weight of position seq_len - 1. */
  poot_shape bt = poot_shape_of(2, e->B, e->T);
  poot_type bt_i = poot_type_make(POOT_DTYPE_I32, 2, bt.dims);
  poot_value idx, one_i, lm1, lb, dist, one, w;
  POOT_TRY(poot_graph_iota(e->g, &bt_i, 1, &idx));
  POOT_TRY(splat(e, POOT_DTYPE_I32, 1, poot_shape_of(1, e->B), &one_i));
  POOT_TRY(bin(e, POOT_OP_SUB, len, one_i, &lm1));
  POOT_TRY(poot_graph_broadcast(e->g, lm1, &bt, &d0, &lb));
  /* 1 - min(|t - (seq_len - 1)|, 1): the one-hot of the last real token. */
  POOT_TRY(bin(e, POOT_OP_SUB, idx, lb, &dist));
  POOT_TRY(poot_graph_unary(e->g, POOT_OP_ABS, dist, &dist));
  POOT_TRY(splat(e, POOT_DTYPE_I32, 1, bt, &one));
  POOT_TRY(bin(e, POOT_OP_MIN, dist, one, &dist));
  POOT_TRY(bin(e, POOT_OP_SUB, one, dist, &w));
  POOT_TRY(poot_graph_convert(e->g, w, POOT_DTYPE_F32, &w));
  return weighted_sum(e, x3, w, out);
}

/* v / max(‖v‖₂, 1e-12) per row (torch.nn.functional.normalize). */
static poot_status l2_normalize(enc *e, poot_value v, poot_value *out) {
  poot_shape bh = poot_shape_of(2, e->B, e->H);
  int64_t axis = 1, d0 = 0;
  poot_value sq, ss, n, eps, nb;
  POOT_TRY(bin(e, POOT_OP_MUL, v, v, &sq));
  POOT_TRY(poot_graph_reduce(e->g, sq, POOT_REDUCE_SUM, 1, &axis, POOT_DTYPE_F32, &ss));
  POOT_TRY(poot_graph_unary(e->g, POOT_OP_SQRT, ss, &n));
  POOT_TRY(splat(e, POOT_DTYPE_F32, 1e-12, poot_shape_of(1, e->B), &eps));
  POOT_TRY(bin(e, POOT_OP_MAX, n, eps, &n));
  POOT_TRY(poot_graph_broadcast(e->g, n, &bh, &d0, &nb));
  return bin(e, POOT_OP_DIV, v, nb, out);
}

static poot_status scores(enc *e, poot_value x3, bool pooler, poot_value *out) {
  poot_value cls, p;
  POOT_TRY(first_token(e, x3, &cls));
  if (pooler) {
    POOT_TRY(linear(e, cls, POOT_WEIGHT_CLS, POOT_WEIGHT_CLS_BIAS, -1, e->H, &p));
    POOT_TRY(poot_graph_unary(e->g, POOT_OP_TANH, p, &cls));
  }
  return linear(e, cls, POOT_WEIGHT_CLS_OUT, POOT_WEIGHT_CLS_OUT_BIAS, -1, e->c->n_labels, out);
}

/* Whether the model has the pooler's dense layer (a HF BertForSequence-
 * Classification always does; llama.cpp's converter drops it). */
static bool has_pooler(enc *e) {
  if (!e->o || !e->o->weight_type) return true;
  poot_weight_ref ref = {.role = POOT_WEIGHT_CLS, .layer = -1};
  int64_t d[2] = {e->H, e->H};
  poot_type expected = poot_type_make(POOT_DTYPE_F32, 2, d), t = expected;
  poot_status st = e->o->weight_type(e->o->weight_type_ctx, &ref, &expected, &t);
  bool ok = st == NULL;
  poot_status_free(st);
  return ok;
}

static poot_status trace_all(enc *e, const poot_model_step *s) {
  const poot_model_config *c = e->c;
  poot_graph *g = e->g;
  poot_type bt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){e->B, e->T});
  poot_type b1 = poot_type_make(POOT_DTYPE_I32, 1, &e->B);
  poot_value tok, len, types, x;
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_TOKEN, NULL, &bt, &tok));
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_NAMED, POOT_MODEL_SLOT_SEQ_LEN, &b1, &len));
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_NAMED, POOT_MODEL_SLOT_TOKEN_TYPE, &bt, &types));
  POOT_TRY(embeddings(e, tok, types, &x));
  poot_value keys[1], *kv = keys, real;
  poot_value *heap = NULL;
  if (e->B > 1 && e->B <= PER_SEQUENCE_MAX) {
    heap = poot_malloc((size_t)e->B * sizeof *heap);
    if (!heap) return poot_status_make(POOT_OUT_OF_MEMORY, "encoder trace: masks");
    kv = heap;
  }
  poot_value vis = POOT_VALUE_NONE;
  poot_status st = masks(e, len, kv, &vis, &real);
  for (int32_t L = 0; L < (int32_t)c->n_layers && !st; L++) st = block(e, L, x, kv, vis, &x);
  poot_free(heap);
  POOT_TRY(st);
  poot_value x3, y;
  POOT_TRY(poot_graph_reshape(g, x, &(poot_shape){.rank = 3, .dims = {e->B, e->T, e->H}}, &x3));
  if (s->output == POOT_MODEL_OUTPUT_SCORES) {
    POOT_TRY(scores(e, x3, has_pooler(e), &y));
    return poot_graph_set_output(g, y);
  }
  poot_model_pooling how = s->pooling != POOT_MODEL_POOLING_DEFAULT ? s->pooling : c->pooling;
  if (how == POOT_MODEL_POOLING_DEFAULT) how = POOT_MODEL_POOLING_MEAN;
  POOT_TRY(pool(e, how, x3, len, real, &y));
  bool norm = s->normalize > 0 || (s->normalize == 0 && c->normalize);
  if (norm) POOT_TRY(l2_normalize(e, y, &y));
  return poot_graph_set_output(g, y);
}

static poot_status check(const poot_model_config *c, const poot_model_step *s) {
  const char *fam = poot_model_family_name(c->family);
  bool enc_out = s->output == POOT_MODEL_OUTPUT_EMBEDDING || s->output == POOT_MODEL_OUTPUT_SCORES;
  if (!poot_model_is_encoder(c))
    return poot_status_make(POOT_UNSUPPORTED,
                            "%s is a decoder: embeddings and scores need an encoder model (BERT)",
                            fam);
  if (!enc_out)
    return poot_status_make(POOT_UNSUPPORTED,
                            "%s is an encoder: it has no logits or decode steps (embed or rerank "
                            "with it)",
                            fam);
  if (s->output == POOT_MODEL_OUTPUT_SCORES && c->n_labels < 1)
    return poot_status_make(POOT_UNSUPPORTED,
                            "this %s model has no classification head (a cross-encoder is a "
                            "BertForSequenceClassification): it embeds, it does not rerank",
                            fam);
  if (s->batch < 1 || s->tokens < 1 || s->batch > 4096)
    return BAD("encoder trace: batch %lld and tokens %lld must be >= 1 (batch <= 4096)",
               (long long)s->batch, (long long)s->tokens);
  if (c->context_length < 1 || s->tokens > c->context_length)
    return poot_status_make(POOT_CAPACITY,
                            "encoder trace: %lld tokens exceed the model's %lld positions "
                            "(max_position_embeddings)",
                            (long long)s->tokens, (long long)c->context_length);
  if (c->n_kv_heads != c->n_heads || c->head_dim * c->n_heads != c->hidden_size)
    return poot_status_make(POOT_UNSUPPORTED,
                            "encoder: heads %lld x head_dim %lld must equal hidden %lld with as "
                            "many key/value heads",
                            (long long)c->n_heads, (long long)c->head_dim,
                            (long long)c->hidden_size);
  if (c->type_vocab_size < 1) return BAD("encoder: type_vocab_size must be >= 1");
  return NULL;
}

poot_status poot__encoder_trace(const poot_model_config *c, const poot_model_step *s,
                                const poot_model_trace_options *o, poot_graph **out_graph) {
  *out_graph = NULL;
  POOT_TRY(check(c, s));
  enc e = {.c = c,
           .o = o,
           .B = s->batch,
           .T = s->tokens,
           .N = s->batch * s->tokens,
           .H = c->hidden_size,
           .Hq = c->n_heads,
           .D = c->head_dim};
  POOT_TRY(poot_graph_create(&e.g));
  poot_status st = trace_all(&e, s);
  if (!st) st = poot_graph_verify(e.g);
  if (st) {
    poot_graph_destroy(e.g);
    return poot_status_annotate(st, "tracing %s encoder (B=%lld, T=%lld)",
                                poot_model_family_name(c->family), (long long)s->batch,
                                (long long)s->tokens);
  }
  *out_graph = e.g;
  return NULL;
}
