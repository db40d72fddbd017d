/* vision_trace.c — the CLIP / SigLIP tower and LLaVA's projector as one
 * graph (docs/vision.md "The tower"): pixels (a slot) → patches unfolded and
 * multiplied by the patch embedding (the convolution of stride = kernel as
 * one matmul), CLIP's class token, learned positions, CLIP's pre-layernorm,
 * pre-norm encoder layers up to the layer LLaVA reads, the class token
 * dropped or kept, then linear → GELU → linear. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vision_internal.h"

typedef struct vtracer {
  poot_graph *g;
  const poot_vision_config *c;
  poot_model_trace_options o;
  int64_t N; /* tokens through the encoder */
} vtracer;

static poot_status bin(vtracer *t, poot_op op, poot_value a, poot_value b, poot_value *out) {
  return poot_graph_binary(t->g, op, a, b, out);
}

/* The weight named `name` (the 4.x tensor name the registry binds as a
 * CUSTOM role) of f32 shape dims, typed as the store holds it, then f32. */
static poot_status weight(vtracer *t, const char *name, uint32_t rank, const int64_t *dims,
                          poot_value *out) {
  poot_weight_ref ref = {.role = POOT_WEIGHT_CUSTOM, .layer = -1, .name = name};
  poot_type expected = poot_type_make(POOT_DTYPE_F32, rank, dims), type = expected;
  if (t->o.weight_type) POOT_TRY(t->o.weight_type(t->o.weight_type_ctx, &ref, &expected, &type));
  if (!poot_shape_equal(&type.shape, &expected.shape)) {
    poot_strbuf a, b;
    poot_strbuf_init(&a);
    poot_strbuf_init(&b);
    poot_type_format(&a, &type);
    poot_type_format(&b, &expected);
    poot_status st = poot_status_make(POOT_FORMAT, "weight %s is %s, the vision config needs %s",
                                      name, a.data, b.data);
    poot_strbuf_deinit(&a);
    poot_strbuf_deinit(&b);
    return st;
  }
  if (type.dtype != POOT_DTYPE_F32 && type.dtype != POOT_DTYPE_F16 && type.dtype != POOT_DTYPE_BF16)
    return poot_status_make(POOT_UNSUPPORTED, "weight %s is %s (the tower reads f32, f16, bf16)",
                            name, poot_dtype_name(type.dtype));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_weight_id id;
  poot_value w = POOT_VALUE_NONE;
  poot_status st = poot_weight_ref_id(&ref, &sb, &id);
  if (!st) st = poot_graph_add_weight(t->g, &id, &type, &w);
  poot_strbuf_deinit(&sb);
  POOT_TRY(st);
  if (type.dtype != POOT_DTYPE_F32) return poot_graph_convert(t->g, w, POOT_DTYPE_F32, out);
  *out = w;
  return NULL;
}

static poot_status vec_weight(vtracer *t, const char *name, int64_t n, poot_value *out) {
  return weight(t, name, 1, &n, out);
}

/* x [rows, in] · W[out, in]ᵀ + b → [rows, out]. */
static poot_status linear(vtracer *t, poot_value x, const char *prefix, int64_t n_out, bool bias,
                          poot_value *out) {
  const poot_type *xt = poot_graph_value_type(t->g, x);
  int64_t rows = xt->shape.dims[0], n_in = xt->shape.dims[1];
  char name[256];
  snprintf(name, sizeof name, "%s.weight", prefix);
  poot_value w, y;
  POOT_TRY(weight(t, name, 2, (int64_t[]){n_out, n_in}, &w));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(t->g, x, w, &dd, POOT_DTYPE_F32, &y));
  if (bias) {
    poot_value b, bb;
    snprintf(name, sizeof name, "%s.bias", prefix);
    POOT_TRY(vec_weight(t, name, n_out, &b));
    poot_shape s = poot_shape_of(2, rows, n_out);
    POOT_TRY(poot_graph_broadcast(t->g, b, &s, (int64_t[]){1}, &bb));
    POOT_TRY(bin(t, POOT_OP_ADD, y, bb, &y));
  }
  *out = y;
  return NULL;
}

static poot_status layer_norm(vtracer *t, poot_value x, const char *prefix, poot_value *out) {
  char wn[256], bn[256];
  snprintf(wn, sizeof wn, "%s.weight", prefix);
  snprintf(bn, sizeof bn, "%s.bias", prefix);
  int64_t H = t->c->hidden_size;
  poot_value w, b;
  POOT_TRY(vec_weight(t, wn, H, &w));
  POOT_TRY(vec_weight(t, bn, H, &b));
  return poot_graph_layer_norm(t->g, x, w, b, t->c->norm_eps, out);
}

static poot_status activation(vtracer *t, poot_vision_act act, poot_value x, poot_value *out) {
  if (act == POOT_VISION_ACT_GELU) return poot_graph_gelu(t->g, x, false, out);
  if (act == POOT_VISION_ACT_GELU_TANH) return poot_graph_gelu(t->g, x, true, out);
  /* quick_gelu: x * sigmoid(1.702 * x), as transformers' QuickGELUActivation. */
  const poot_type *xt = poot_graph_value_type(t->g, x);
  poot_value k, kb, kx, s;
  POOT_TRY(poot_graph_const_f32(t->g, POOT_DTYPE_F32, 1.702, &k));
  POOT_TRY(poot_graph_broadcast(t->g, k, &xt->shape, NULL, &kb));
  POOT_TRY(bin(t, POOT_OP_MUL, kb, x, &kx));
  POOT_TRY(poot_graph_unary(t->g, POOT_OP_SIGMOID, kx, &s));
  return bin(t, POOT_OP_MUL, x, s, out);
}

/* pixels f32 [1, 3, S, S] → embeddings [N, H] (class token and positions). */
static poot_status embeddings(vtracer *t, poot_value px, poot_value *out) {
  const poot_vision_config *c = t->c;
  int64_t P = c->patch_size, G = c->grid, H = c->hidden_size, K = 3 * P * P;
  const char *e = "vision_tower.vision_model.embeddings";
  char name[256];
  poot_value x, w, y;
  POOT_TRY(poot_graph_reshape(t->g, px, &(poot_shape){.rank = 5, .dims = {3, G, P, G, P}}, &x));
  POOT_TRY(poot_graph_transpose(t->g, x, (int64_t[]){1, 3, 0, 2, 4}, &x)); /* [G, G, 3, P, P] */
  POOT_TRY(poot_graph_reshape(t->g, x, &(poot_shape){.rank = 2, .dims = {G * G, K}}, &x));
  snprintf(name, sizeof name, "%s.patch_embedding.weight", e);
  POOT_TRY(weight(t, name, 4, (int64_t[]){H, 3, P, P}, &w));
  POOT_TRY(poot_graph_reshape(t->g, w, &(poot_shape){.rank = 2, .dims = {H, K}}, &w));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(t->g, x, w, &dd, POOT_DTYPE_F32, &y)); /* [G², H] */
  if (c->tower == POOT_VISION_TOWER_SIGLIP) {
    poot_value b, bb;
    snprintf(name, sizeof name, "%s.patch_embedding.bias", e);
    POOT_TRY(vec_weight(t, name, H, &b));
    POOT_TRY(poot_graph_broadcast(t->g, b, &(poot_shape){.rank = 2, .dims = {G * G, H}},
                                  (int64_t[]){1}, &bb));
    POOT_TRY(bin(t, POOT_OP_ADD, y, bb, &y));
  } else {
    poot_value cls, parts[2];
    snprintf(name, sizeof name, "%s.class_embedding", e);
    POOT_TRY(vec_weight(t, name, H, &cls));
    POOT_TRY(poot_graph_reshape(t->g, cls, &(poot_shape){.rank = 2, .dims = {1, H}}, &parts[0]));
    parts[1] = y;
    POOT_TRY(poot_graph_concat(t->g, 2, parts, 0, &y));
  }
  poot_value pos;
  snprintf(name, sizeof name, "%s.position_embedding.weight", e);
  POOT_TRY(weight(t, name, 2, (int64_t[]){t->N, H}, &pos));
  POOT_TRY(bin(t, POOT_OP_ADD, y, pos, &y));
  if (c->tower == POOT_VISION_TOWER_CLIP)
    POOT_TRY(layer_norm(t, y, "vision_tower.vision_model.pre_layrnorm", &y));
  *out = y;
  return NULL;
}

static poot_status encoder_layer(vtracer *t, int64_t L, poot_value mask, poot_value x,
                                 poot_value *out) {
  const poot_vision_config *c = t->c;
  int64_t H = c->hidden_size, nh = c->n_heads, D = H / nh, N = t->N;
  char p[160], n[224];
  snprintf(p, sizeof p, "vision_tower.vision_model.encoder.layers.%lld", (long long)L);
  poot_value h, q, k, v, a, m;
  snprintf(n, sizeof n, "%s.layer_norm1", p);
  POOT_TRY(layer_norm(t, x, n, &h));
  snprintf(n, sizeof n, "%s.self_attn.q_proj", p);
  POOT_TRY(linear(t, h, n, H, true, &q));
  snprintf(n, sizeof n, "%s.self_attn.k_proj", p);
  POOT_TRY(linear(t, h, n, H, true, &k));
  snprintf(n, sizeof n, "%s.self_attn.v_proj", p);
  POOT_TRY(linear(t, h, n, H, true, &v));
  poot_shape s3 = poot_shape_of(3, N, nh, D), s2 = poot_shape_of(2, N, H);
  POOT_TRY(poot_graph_reshape(t->g, q, &s3, &q));
  POOT_TRY(poot_graph_reshape(t->g, k, &s3, &k));
  POOT_TRY(poot_graph_reshape(t->g, v, &s3, &v));
  POOT_TRY(poot_graph_attention(t->g, q, k, v, mask, 1.0 / sqrt((double)D), &a));
  POOT_TRY(poot_graph_reshape(t->g, a, &s2, &a));
  snprintf(n, sizeof n, "%s.self_attn.out_proj", p);
  POOT_TRY(linear(t, a, n, H, true, &a));
  POOT_TRY(bin(t, POOT_OP_ADD, x, a, &x));
  snprintf(n, sizeof n, "%s.layer_norm2", p);
  POOT_TRY(layer_norm(t, x, n, &h));
  snprintf(n, sizeof n, "%s.mlp.fc1", p);
  POOT_TRY(linear(t, h, n, c->intermediate_size, true, &m));
  POOT_TRY(activation(t, c->act, m, &m));
  snprintf(n, sizeof n, "%s.mlp.fc2", p);
  POOT_TRY(linear(t, m, n, H, true, &m));
  return bin(t, POOT_OP_ADD, x, m, out);
}

static poot_status trace_all(vtracer *t) {
  const poot_vision_config *c = t->c;
  int64_t S = c->image_size;
  poot_type pt = poot_type_make(POOT_DTYPE_F32, 4, (int64_t[]){1, 3, S, S});
  poot_value px, x, mask;
  POOT_TRY(poot_graph_add_slot(t->g, POOT_SLOT_NAMED, POOT_VISION_SLOT_PIXELS, &pt, &px));
  POOT_TRY(embeddings(t, px, &x));
  /* Every token sees every token: the mask is all true (0 <= column). */
  poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){t->N, t->N});
  poot_value io, zero, zb;
  POOT_TRY(poot_graph_iota(t->g, &mt, 1, &io));
  POOT_TRY(poot_graph_const_int(t->g, POOT_DTYPE_I32, 0, &zero));
  POOT_TRY(poot_graph_broadcast(t->g, zero, &mt.shape, NULL, &zb));
  POOT_TRY(bin(t, POOT_OP_GE, io, zb, &mask));
  for (int64_t L = 0; L < c->feature_layer; L++) POOT_TRY(encoder_layer(t, L, mask, x, &x));
  if (c->drop_cls) {
    int64_t s0[2] = {1, 0}, l0[2] = {t->N, c->hidden_size};
    POOT_TRY(poot_graph_slice(t->g, x, s0, l0, NULL, &x));
  }
  poot_value y;
  POOT_TRY(linear(t, x, "multi_modal_projector.linear_1", c->text_hidden, c->projector_bias, &y));
  POOT_TRY(activation(t, c->projector_act, y, &y));
  POOT_TRY(linear(t, y, "multi_modal_projector.linear_2", c->text_hidden, c->projector_bias, &y));
  return poot_graph_set_output(t->g, y);
}

poot_status poot_vision_trace(const poot_vision *v, poot_graph **out) {
  *out = NULL;
  if (!v) return poot_status_make(POOT_INVALID_ARGUMENT, "poot_vision_trace: NULL vision");
  vtracer t = {.c = &v->cfg, .o = poot_model_trace_options_for(v->model)};
  t.N = v->cfg.grid * v->cfg.grid + (v->cfg.tower == POOT_VISION_TOWER_CLIP ? 1 : 0);
  POOT_TRY(poot_graph_create(&t.g));
  poot_status st = trace_all(&t);
  if (!st) st = poot_graph_verify(t.g);
  if (st) {
    poot_graph_destroy(t.g);
    return poot_status_annotate(st, "tracing the %s vision tower",
                                v->cfg.tower == POOT_VISION_TOWER_CLIP ? "CLIP" : "SigLIP");
  }
  *out = t.g;
  return NULL;
}
