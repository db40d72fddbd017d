/* graph_fixtures.c — see graph_fixtures.h. */
#include "graph_fixtures.h"

#include <math.h>
#include <string.h>

static poot_type ty(poot_dtype dt, uint32_t rank, int64_t d0, int64_t d1, int64_t d2) {
  int64_t dims[3] = {d0, d1, d2};
  return poot_type_make(dt, rank, dims);
}

/* The values the stages of graph_fixture_all_ops share, in the order the
 * stages define them. */
typedef struct fx {
  poot_graph *g;
  poot_type f23, u2;
  poot_value x, y, i, j, b; /* params */
  poot_value c3, pv, h, counter, proj, ti, att, n1, n2, cres[2];
} fx;

static poot_status fx_params(fx *f) {
  poot_graph *g = f->g;
  f->f23 = ty(POOT_DTYPE_F32, 2, 2, 3, 0);
  poot_type i23 = ty(POOT_DTYPE_I32, 2, 2, 3, 0);
  poot_type b23 = ty(POOT_DTYPE_BOOL, 2, 2, 3, 0);
  POOT_TRY(poot_graph_add_param(g, "x", &f->f23, &f->x));
  POOT_TRY(poot_graph_add_param(g, "y", &f->f23, &f->y));
  POOT_TRY(poot_graph_add_param(g, "i", &i23, &f->i));
  POOT_TRY(poot_graph_add_param(g, "j", &i23, &f->j));
  POOT_TRY(poot_graph_add_param(g, "b", &b23, &f->b));
  return NULL;
}

/* Every elementwise op, and iota. */
static poot_status fx_elementwise(fx *f) {
  poot_graph *g = f->g;
  poot_value x = f->x, y = f->y, i = f->i, j = f->j, b = f->b, v;
  static const poot_op arith[] = {POOT_OP_ADD, POOT_OP_SUB, POOT_OP_MUL, POOT_OP_DIV,
                                  POOT_OP_REM, POOT_OP_MAX, POOT_OP_MIN, POOT_OP_POW};
  for (size_t k = 0; k < sizeof arith / sizeof arith[0]; k++) {
    POOT_TRY(poot_graph_binary(g, arith[k], x, y, &v));
    POOT_TRY(poot_graph_binary(g, arith[k], i, j, &v));
  }
  static const poot_op bits[] = {POOT_OP_AND, POOT_OP_OR, POOT_OP_XOR};
  for (size_t k = 0; k < 3; k++) {
    POOT_TRY(poot_graph_binary(g, bits[k], i, j, &v));
    POOT_TRY(poot_graph_binary(g, bits[k], b, b, &v));
  }
  POOT_TRY(poot_graph_binary(g, POOT_OP_SHL, i, j, &v));
  POOT_TRY(poot_graph_binary(g, POOT_OP_SHR, i, j, &v));
  POOT_TRY(poot_graph_unary(g, POOT_OP_NEG, x, &v));
  POOT_TRY(poot_graph_unary(g, POOT_OP_ABS, i, &v));
  POOT_TRY(poot_graph_unary(g, POOT_OP_SIGN, x, &v));
  POOT_TRY(poot_graph_unary(g, POOT_OP_NOT, b, &v));
  POOT_TRY(poot_graph_unary(g, POOT_OP_NOT, i, &v));
  for (int op = POOT_OP_EXP; op <= POOT_OP_SIGMOID; op++)
    POOT_TRY(poot_graph_unary(g, (poot_op)op, x, &v));
  for (int op = POOT_OP_EQ; op <= POOT_OP_GE; op++)
    POOT_TRY(poot_graph_binary(g, (poot_op)op, x, y, &v));
  POOT_TRY(poot_graph_select(g, b, x, y, &v));
  POOT_TRY(poot_graph_convert(g, x, POOT_DTYPE_F16, &v));
  POOT_TRY(poot_graph_convert(g, v, POOT_DTYPE_BF16, &v));
  POOT_TRY(poot_graph_bitcast(g, x, POOT_DTYPE_I32, &v));
  poot_type it = ty(POOT_DTYPE_I32, 2, 4, 5, 0);
  POOT_TRY(poot_graph_iota(g, &it, 1, &v));
  return NULL;
}

/* Constants of every plain dtype, with the awkward float values. */
static poot_status fx_constants(fx *f) {
  poot_graph *g = f->g;
  poot_value v;
  float fv[6] = {1.5f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f};
  poot_tensor t = {ty(POOT_DTYPE_F32, 1, 6, 0, 0), fv, sizeof fv};
  POOT_TRY(poot_graph_add_const(g, &t, &v));
  uint16_t hv[3] = {0x3c00, 0x8000, 0x7e01};
  t = (poot_tensor){ty(POOT_DTYPE_F16, 1, 3, 0, 0), hv, sizeof hv};
  POOT_TRY(poot_graph_add_const(g, &t, &v));
  t.type.dtype = POOT_DTYPE_BF16;
  POOT_TRY(poot_graph_add_const(g, &t, &v));
  int64_t i64v[2] = {INT64_MIN, INT64_MAX};
  t = (poot_tensor){ty(POOT_DTYPE_I64, 1, 2, 0, 0), i64v, sizeof i64v};
  POOT_TRY(poot_graph_add_const(g, &t, &v));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I8, -128, &v));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_U8, 255, &v));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I16, -32768, &v));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_U32, 4294967295LL, &v));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_BOOL, 1, &v));
  float row[3] = {1, 2, 3};
  t = (poot_tensor){ty(POOT_DTYPE_F32, 1, 3, 0, 0), row, sizeof row};
  POOT_TRY(poot_graph_add_const(g, &t, &f->c3));
  return NULL;
}

/* The movement ops, the dynamic ones with and without a check. */
static poot_status fx_movement(fx *f) {
  poot_graph *g = f->g;
  poot_value x = f->x, y = f->y, v;
  int64_t d1 = 1;
  POOT_TRY(poot_graph_broadcast(g, f->c3, &f->f23.shape, &d1, &v));
  poot_shape s32 = poot_shape_of(2, 3, 2);
  POOT_TRY(poot_graph_reshape(g, x, &s32, &v));
  int64_t perm[2] = {1, 0};
  POOT_TRY(poot_graph_transpose(g, x, perm, &v));
  int64_t st[2] = {0, 1}, li[2] = {2, 3}, sr[2] = {1, 2};
  POOT_TRY(poot_graph_slice(g, x, st, li, sr, &v));
  poot_value pos, zero, starts[2];
  poot_type scalar_i32 = ty(POOT_DTYPE_I32, 0, 0, 0, 0);
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &scalar_i32, &pos));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I32, 0, &zero));
  starts[0] = zero;
  starts[1] = pos;
  int64_t sizes[2] = {1, 2};
  poot_value ds;
  POOT_TRY(poot_graph_dynamic_slice(g, x, starts, sizes, POOT_TRAP_SLICE_OUT_OF_RANGE, &ds));
  POOT_TRY(poot_graph_dynamic_update_slice(g, x, ds, starts, POOT_TRAP_NONE, &v));
  poot_value xs[2] = {x, y};
  POOT_TRY(poot_graph_concat(g, 2, xs, 0, &v));
  POOT_TRY(poot_graph_const_f32(g, POOT_DTYPE_F32, 0.0, &f->pv));
  int64_t lo[2] = {1, 0}, hi[2] = {0, 2}, in[2] = {0, 1};
  POOT_TRY(poot_graph_pad(g, x, f->pv, lo, hi, in, &v));
  return NULL;
}

/* Token embedding lookup with a check, a batched gather, and a paged KV
 * write through a write map. */
static poot_status fx_gather_scatter(fx *f) {
  poot_graph *g = f->g;
  poot_value tok, emb, v;
  poot_type tokt = ty(POOT_DTYPE_I32, 1, 3, 0, 0);
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_TOKEN, NULL, &tokt, &tok));
  poot_weight_id er = poot_weight_id_named("token_embd");
  poot_type embt = ty(POOT_DTYPE_F32, 2, 10, 4, 0);
  POOT_TRY(poot_graph_add_weight(g, &er, &embt, &emb));
  POOT_TRY(poot_graph_gather(g, emb, tok, 0, 0, POOT_TRAP_TOKEN_OUT_OF_RANGE, &f->h));
  POOT_TRY(poot_graph_gather(g, f->x, f->i, 1, 1, POOT_TRAP_NONE, &v));
  poot_value wm, pool;
  poot_type wmt = ty(POOT_DTYPE_I32, 1, 3, 0, 0), poolt = ty(POOT_DTYPE_F32, 2, 8, 4, 0);
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_WRITE_MAP, NULL, &wmt, &wm));
  POOT_TRY(poot_graph_add_state(g, "kv.pool", &poolt, &pool));
  poot_value pool2;
  POOT_TRY(
      poot_graph_scatter_update(g, pool, wm, f->h, 0, POOT_TRAP_WRITE_MAP_OUT_OF_RANGE, &pool2));
  POOT_TRY(poot_graph_set_state_update(g, pool, pool2));
  f->u2 = ty(POOT_DTYPE_U32, 1, 2, 0, 0);
  POOT_TRY(poot_graph_add_state(g, "rng.counter", &f->u2, &f->counter));
  return NULL;
}

/* Every reduce kind. */
static poot_status fx_reduce(fx *f) {
  poot_graph *g = f->g;
  poot_value v;
  int64_t dim1 = 1;
  POOT_TRY(poot_graph_reduce(g, f->x, POOT_REDUCE_SUM, 1, &dim1, POOT_DTYPE_F32, &v));
  POOT_TRY(poot_graph_reduce(g, f->x, POOT_REDUCE_MAX, 1, &dim1, POOT_DTYPE_F32, &v));
  int64_t both[2] = {1, 0};
  POOT_TRY(poot_graph_reduce(g, f->i, POOT_REDUCE_MIN, 2, both, POOT_DTYPE_I64, &v));
  POOT_TRY(poot_graph_reduce(g, f->x, POOT_REDUCE_ARGMAX, 1, &dim1, POOT_DTYPE_I32, &v));
  return NULL;
}

/* A quantized projection: dot_general(h, dequantize(w)), a quantize, and a
 * custom weight. */
static poot_status fx_projection(fx *f) {
  poot_graph *g = f->g;
  poot_value wq, v;
  poot_weight_id qr = poot_weight_id_named("blk.0.attn_q");
  poot_type wqt = ty(POOT_DTYPE_Q4_0, 2, 8, 32, 0);
  POOT_TRY(poot_graph_add_weight(g, &qr, &wqt, &wq));
  poot_value wdq, hp;
  POOT_TRY(poot_graph_dequantize(g, wq, POOT_DTYPE_F32, &wdq));
  poot_value q8; /* a q8_0 K/V cache's write: quantize (and read back) */
  POOT_TRY(poot_graph_quantize(g, wdq, POOT_DTYPE_Q8_0, &q8));
  POOT_TRY(poot_graph_dequantize(g, q8, POOT_DTYPE_F32, &q8));
  poot_weight_id cr = poot_weight_id_named("blk.2.vision.patch \"embd\"");
  poot_type ct = ty(POOT_DTYPE_F16, 2, 4, 32, 0);
  POOT_TRY(poot_graph_add_weight(g, &cr, &ct, &v));
  int64_t pl[2] = {0, 0}, ph[2] = {0, 28};
  POOT_TRY(poot_graph_pad(g, f->h, f->pv, pl, ph, NULL, &hp));
  poot_dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.num_contract = 1;
  dd.lhs_contract[0] = 1;
  dd.rhs_contract[0] = 1;
  POOT_TRY(poot_graph_dot_general(g, hp, wdq, &dd, POOT_DTYPE_F32, &f->proj));
  return NULL;
}

/* Both rng distributions, top_k (two results) and cumsum. */
static poot_status fx_generators(fx *f) {
  poot_graph *g = f->g;
  poot_value key, r, v;
  uint32_t kv[2] = {42, 7};
  poot_tensor t = {f->u2, kv, sizeof kv};
  POOT_TRY(poot_graph_add_const(g, &t, &key));
  poot_type rt = ty(POOT_DTYPE_F32, 1, 5, 0, 0);
  POOT_TRY(poot_graph_rng(g, key, f->counter, &rt, POOT_RNG_UNIFORM, &r));
  poot_type rb = ty(POOT_DTYPE_U32, 2, 2, 2, 0);
  POOT_TRY(poot_graph_rng(g, key, f->counter, &rb, POOT_RNG_BITS, &v));
  poot_value tv;
  POOT_TRY(poot_graph_top_k(g, f->proj, 2, &tv, &f->ti));
  POOT_TRY(poot_graph_cumsum(g, f->x, 1, POOT_DTYPE_F32, &v));
  return NULL;
}

/* Every composite the builder makes. */
static poot_status fx_composites(fx *f) {
  poot_graph *g = f->g;
  poot_value x = f->x, y = f->y, v;
  poot_value w3, b3;
  poot_type v3 = ty(POOT_DTYPE_F32, 1, 3, 0, 0);
  poot_weight_id nr = poot_weight_id_named("blk.0.attn_norm"),
                 nbr = poot_weight_id_named("blk.0.attn_norm_bias");
  POOT_TRY(poot_graph_add_weight(g, &nr, &v3, &w3));
  POOT_TRY(poot_graph_add_weight(g, &nbr, &v3, &b3));
  POOT_TRY(poot_graph_rms_norm(g, x, w3, 1e-5, &f->n1));
  POOT_TRY(poot_graph_layer_norm(g, x, w3, b3, 1e-6, &f->n2));
  POOT_TRY(poot_graph_rms_norm(g, x, POOT_VALUE_NONE, 1e-6, &v));
  POOT_TRY(poot_graph_softmax(g, x, 1, &v));
  POOT_TRY(poot_graph_silu(g, x, &v));
  POOT_TRY(poot_graph_gelu(g, x, false, &v));
  POOT_TRY(poot_graph_gelu(g, x, true, &v));
  POOT_TRY(poot_graph_swiglu(g, x, y, &v));
  POOT_TRY(poot_graph_geglu(g, x, y, &v));
  poot_value q, ppos;
  poot_type qt = ty(POOT_DTYPE_F16, 3, 3, 2, 8), pt = ty(POOT_DTYPE_I32, 1, 3, 0, 0);
  POOT_TRY(poot_graph_add_param(g, "q", &qt, &q));
  POOT_TRY(poot_graph_add_param(g, "positions", &pt, &ppos));
  POOT_TRY(poot_graph_rope(g, q, ppos, 10000.0, 8, POOT_ROPE_NEOX, &v));
  POOT_TRY(poot_graph_rope(g, q, ppos, 500000.0, 4, POOT_ROPE_NORM, &v));
  poot_value k, vv, mask;
  poot_type kt = ty(POOT_DTYPE_F16, 3, 6, 1, 8), mt = ty(POOT_DTYPE_BOOL, 2, 3, 6, 0);
  POOT_TRY(poot_graph_add_param(g, "k", &kt, &k));
  POOT_TRY(poot_graph_add_param(g, "v", &kt, &vv));
  POOT_TRY(poot_graph_add_param(g, "mask", &mt, &mask));
  POOT_TRY(poot_graph_attention(g, q, k, vv, mask, 0.35355339059327373, &f->att));
  return NULL;
}

/* A hand-made composite with every attribute kind and two results. */
static poot_status fx_custom_composite(fx *f) {
  poot_graph *g = f->g;
  poot_value params[2];
  int64_t ints[3] = {1, -2, 3};
  poot_composite_attr ca[4] = {{.key = "n", .kind = POOT_CATTR_INT, .i = -7},
                               {.key = "f", .kind = POOT_CATTR_FLOAT, .f = 2.0},
                               {.key = "s", .kind = POOT_CATTR_STRING, .s = "a \"b\"\n"},
                               {.key = "l", .kind = POOT_CATTR_INTS, .ints = ints, .num_ints = 3}};
  poot_value cops[2] = {f->x, f->y};
  POOT_TRY(poot_graph_composite_begin(g, "test.pair", 4, ca, 2, cops, params));
  poot_value s1, s2;
  POOT_TRY(poot_graph_binary(g, POOT_OP_ADD, params[0], params[1], &s1));
  POOT_TRY(poot_graph_binary(g, POOT_OP_SUB, params[0], params[1], &s2));
  poot_value both_res[2] = {s1, s2};
  POOT_TRY(poot_graph_composite_end(g, 2, both_res, f->cres));
  return NULL;
}

/* The remaining slot kinds, the output and the environment. */
static poot_status fx_outputs(fx *f) {
  poot_graph *g = f->g;
  poot_value sl, v;
  poot_type named = ty(POOT_DTYPE_F32, 0, 0, 0, 0);
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_NAMED, "temperature", &named, &sl));
  poot_type smt = ty(POOT_DTYPE_I32, 2, 1, 4, 0);
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_SLOT_MAP, NULL, &smt, &v));
  POOT_TRY(poot_graph_set_output(g, f->ti));
  POOT_TRY(poot_graph_add_env(g, "attention", f->att));
  POOT_TRY(poot_graph_add_env(g, "pair.sum", f->cres[0]));
  POOT_TRY(poot_graph_add_env(g, "pair.diff", f->cres[1]));
  POOT_TRY(poot_graph_add_env(g, "rms", f->n1));
  POOT_TRY(poot_graph_add_env(g, "ln", f->n2));
  return NULL;
}

poot_status graph_fixture_all_ops(poot_graph *g) {
  fx f;
  memset(&f, 0, sizeof f);
  f.g = g;
  POOT_TRY(fx_params(&f));
  POOT_TRY(fx_elementwise(&f));
  POOT_TRY(fx_constants(&f));
  POOT_TRY(fx_movement(&f));
  POOT_TRY(fx_gather_scatter(&f));
  POOT_TRY(fx_reduce(&f));
  POOT_TRY(fx_projection(&f));
  POOT_TRY(fx_generators(&f));
  POOT_TRY(fx_composites(&f));
  POOT_TRY(fx_custom_composite(&f));
  POOT_TRY(fx_outputs(&f));
  return NULL;
}

poot_status graph_fixture_attention_step(poot_graph *g, int64_t cap, int64_t heads,
                                         int64_t head_dim) {
  poot_type qt = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){1, heads, head_dim});
  poot_type kvt = poot_type_make(POOT_DTYPE_F32, 3, (int64_t[]){cap, heads, head_dim});
  poot_type post = poot_type_make(POOT_DTYPE_I32, 0, NULL);
  poot_value pos, q, knew, vnew, kc, vc, zero, k2, v2, iota, pb, mask, att;
  POOT_TRY(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &post, &pos));
  POOT_TRY(poot_graph_add_param(g, "q", &qt, &q));
  POOT_TRY(poot_graph_add_param(g, "k", &qt, &knew));
  POOT_TRY(poot_graph_add_param(g, "v", &qt, &vnew));
  POOT_TRY(poot_graph_add_state(g, "k_cache", &kvt, &kc));
  POOT_TRY(poot_graph_add_state(g, "v_cache", &kvt, &vc));
  POOT_TRY(poot_graph_const_int(g, POOT_DTYPE_I32, 0, &zero));
  poot_value starts[3] = {pos, zero, zero};
  POOT_TRY(poot_graph_dynamic_update_slice(g, kc, knew, starts, POOT_TRAP_POS_OUT_OF_RANGE, &k2));
  POOT_TRY(poot_graph_dynamic_update_slice(g, vc, vnew, starts, POOT_TRAP_POS_OUT_OF_RANGE, &v2));
  poot_type mt = poot_type_make(POOT_DTYPE_I32, 2, (int64_t[]){1, cap});
  POOT_TRY(poot_graph_iota(g, &mt, 1, &iota));
  POOT_TRY(poot_graph_broadcast(g, pos, &mt.shape, NULL, &pb));
  POOT_TRY(poot_graph_binary(g, POOT_OP_LE, iota, pb, &mask));
  POOT_TRY(poot_graph_attention(g, q, k2, v2, mask, 1.0 / sqrt((double)head_dim), &att));
  POOT_TRY(poot_graph_set_output(g, att));
  POOT_TRY(poot_graph_set_state_update(g, kc, k2));
  POOT_TRY(poot_graph_set_state_update(g, vc, v2));
  return NULL;
}
