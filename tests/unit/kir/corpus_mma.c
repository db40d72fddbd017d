/* corpus_mma.c — corpus cases that need matrix fragments and asynchronous
 * copies (kir.h, "matrix fragments"): one warp multiplies a 16x32 by a 32x8
 * tile through async_copy (two commit groups, a zero-filled chunk),
 * mma_load and mma, in f16 and bf16, with B as N x K (weights, plain
 * mma_load) or K x N (activations, transposed mma_load). They run only where
 * poot_kir_target_has_matrix (PTX sm_80+, the interpreter at subgroup 32),
 * so they are not in poot_kir_corpus, whose walkers run every case on every
 * target and subgroup size. The reference replays the interpreter's
 * rounding (per mma: C plus exact products in double, rounded once), so the
 * interpreter matches bit for bit and a GPU within a tolerance. */
#include "corpus_impl.h"

typedef struct tile_case {
  poot_kir_scalar operand;
  bool b_kn;
} tile_case;

#define TRY(e) POOT_TRY(e)

enum { M = 16, N = 8, K = 32, K_VALID = 31 };

#define TRY(e) POOT_TRY(e)

static poot_status u32c(poot_kir_builder *b, uint32_t v, poot_kir_value *out) {
  return poot_kir_const_u32(b, v, out);
}

/* v = x * m + a (u32). */
static poot_status mad(poot_kir_builder *b, poot_kir_value x, uint32_t m, uint32_t a,
                       poot_kir_value *out) {
  poot_kir_value cm, ca, p;
  TRY(u32c(b, m, &cm));
  TRY(u32c(b, a, &ca));
  TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, x, cm, &p));
  return poot_kir_binary(b, POOT_KIR_OP_ADD, p, ca, out);
}

static poot_status bin_imm(poot_kir_builder *b, poot_kir_op op, poot_kir_value x, uint32_t imm,
                           poot_kir_value *out) {
  poot_kir_value c;
  TRY(u32c(b, imm, &c));
  return poot_kir_binary(b, op, x, c, out);
}

/* The kernel: bindings A [M][K], B, D f32 [M][N]; one warp (kir.h's layouts). */
static poot_status tile_body(poot_kir_builder *b, const poot_kir_corpus_case *c,
                             const poot_kir_target *t, uint32_t sg) {
  (void)t, (void)sg;
  tile_case tc = {(poot_kir_scalar)c->arg0, c->arg1 != 0};
  const tile_case *mc = &tc;
  poot_status st = NULL;
  uint32_t ga, gb, gd, sa, sb;
  poot_kir_binding ba = {"a", 0, mc->operand, POOT_KIR_ACCESS_READ, 16, true};
  poot_kir_binding bb = {"b", 1, mc->operand, POOT_KIR_ACCESS_READ, 16, true};
  poot_kir_binding bd = {"d", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
#define B(e)              \
  do {                    \
    st = (e);             \
    if (st) goto failed;  \
  } while (0)
  B(poot_kir_add_binding(b, &ba, &ga));
  B(poot_kir_add_binding(b, &bb, &gb));
  B(poot_kir_add_binding(b, &bd, &gd));
  B(poot_kir_add_shared(b, "sa", mc->operand, M * K, &sa));
  /* B's tile and a 16-row pad the zero-filling copies of lanes 16..31 write. */
  B(poot_kir_add_shared(b, "sb", mc->operand, N * K + 16 * 8, &sb));
  poot_kir_value lane, half, row2, tlt16, kvalid, yes;
  B(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_SUBGROUP_LANE, 0, &lane));
  B(bin_imm(b, POOT_KIR_OP_AND, lane, 1, &half));
  B(bin_imm(b, POOT_KIR_OP_SHR, lane, 1, &row2));
  B(bin_imm(b, POOT_KIR_OP_LT, lane, 16, &tlt16));
  B(poot_kir_const_bool(b, true, &yes));
  for (uint32_t ks = 0; ks < 2; ks++) {
    /* A: lane copies row lane/2, columns ks*16 + (lane%2)*8 .. +8. */
    poot_kir_value col, ia;
    B(mad(b, half, 8, ks * 16, &col));
    B(mad(b, row2, K, 0, &ia));
    B(poot_kir_binary(b, POOT_KIR_OP_ADD, ia, col, &ia));
    B(poot_kir_async_copy(b, sa, ia, ga, ia, yes));
    poot_kir_value ib, dst, valid, pad;
    if (mc->b_kn) {
      /* Lanes 0..15 copy row k = ks*16 + lane (8 n); row K_VALID and up is zeros. */
      poot_kir_value k;
      B(bin_imm(b, POOT_KIR_OP_ADD, lane, ks * 16, &k));
      B(mad(b, k, N, 0, &ib));
      B(bin_imm(b, POOT_KIR_OP_LT, k, K_VALID, &kvalid));
    } else {
      /* Lanes 0..15 copy row n = lane/2, k = ks*16 + (lane%2)*8 .. +8; the
       * chunk holding k = K_VALID is zeros. */
      B(mad(b, row2, K, 0, &ib));
      B(poot_kir_binary(b, POOT_KIR_OP_ADD, ib, col, &ib));
      poot_kir_value kend;
      B(bin_imm(b, POOT_KIR_OP_ADD, col, 8, &kend));
      B(bin_imm(b, POOT_KIR_OP_LE, kend, K_VALID, &kvalid));
    }
    B(mad(b, lane, 8, N * K - 16 * 8, &pad)); /* lanes 16..31: the pad rows */
    B(poot_kir_select(b, tlt16, ib, pad, &dst));
    B(poot_kir_binary(b, POOT_KIR_OP_AND, kvalid, tlt16, &valid));
    B(poot_kir_async_copy(b, sb, dst, gb, ib, valid));
    B(poot_kir_async_commit(b));
  }
  poot_kir_value acc, quarter;
  B(poot_kir_const_f32(b, 0.25f, &quarter));
  B(poot_kir_splat(b, 4, quarter, &acc));
  poot_kir_value mat, r8;
  B(bin_imm(b, POOT_KIR_OP_SHR, lane, 3, &mat));
  B(bin_imm(b, POOT_KIR_OP_AND, lane, 7, &r8));
  for (uint32_t ks = 0; ks < 2; ks++) {
    B(poot_kir_async_wait(b, 1 - ks));
    B(poot_kir_barrier(b));
    /* A: matrix i = lane/8 holds rows 8*(i&1) + lane%8, columns 8*(i>>1). */
    poot_kir_value i1, i2, arow, acol, ia, afrag;
    B(bin_imm(b, POOT_KIR_OP_AND, mat, 1, &i1));
    B(bin_imm(b, POOT_KIR_OP_SHR, mat, 1, &i2));
    B(mad(b, i1, 8, 0, &arow));
    B(poot_kir_binary(b, POOT_KIR_OP_ADD, arow, r8, &arow));
    B(mad(b, i2, 8, ks * 16, &acol));
    B(mad(b, arow, K, 0, &ia));
    B(poot_kir_binary(b, POOT_KIR_OP_ADD, ia, acol, &ia));
    B(poot_kir_mma_load(b, sa, ia, false, &afrag));
    /* B: word w covers k = ks*16 + 8w .. +8 (lanes 16..31 repeat 0..15). */
    poot_kir_value w, ib, bx4, b0, b1, bfrag;
    B(bin_imm(b, POOT_KIR_OP_AND, mat, 1, &w));
    if (mc->b_kn) {
      poot_kir_value k;
      B(mad(b, w, 8, ks * 16, &k));
      B(poot_kir_binary(b, POOT_KIR_OP_ADD, k, r8, &k));
      B(mad(b, k, N, 0, &ib));
    } else {
      poot_kir_value kc;
      B(mad(b, w, 8, ks * 16, &kc));
      B(mad(b, r8, K, 0, &ib));
      B(poot_kir_binary(b, POOT_KIR_OP_ADD, ib, kc, &ib));
    }
    B(poot_kir_mma_load(b, sb, ib, mc->b_kn, &bx4));
    B(poot_kir_extract(b, bx4, 0, &b0));
    B(poot_kir_extract(b, bx4, 1, &b1));
    poot_kir_value pair[2] = {b0, b1};
    B(poot_kir_vec(b, 2, pair, &bfrag));
    B(poot_kir_mma(b, mc->operand, afrag, bfrag, acc, &acc));
  }
  /* D: lanes 0,1 of the accumulator are row g, 2,3 row g+8; columns 2q, 2q+1. */
  poot_kir_value g, q, d0, d1, l0, l1, l2, l3, lo, hi, v01, v23;
  B(bin_imm(b, POOT_KIR_OP_SHR, lane, 2, &g));
  B(bin_imm(b, POOT_KIR_OP_AND, lane, 3, &q));
  B(mad(b, g, N, 0, &d0));
  B(mad(b, q, 2, 0, &lo));
  B(poot_kir_binary(b, POOT_KIR_OP_ADD, d0, lo, &d0));
  B(bin_imm(b, POOT_KIR_OP_ADD, d0, 8 * N, &d1));
  B(poot_kir_extract(b, acc, 0, &l0));
  B(poot_kir_extract(b, acc, 1, &l1));
  B(poot_kir_extract(b, acc, 2, &l2));
  B(poot_kir_extract(b, acc, 3, &l3));
  poot_kir_value e01[2] = {l0, l1}, e23[2] = {l2, l3};
  B(poot_kir_vec(b, 2, e01, &v01));
  B(poot_kir_vec(b, 2, e23, &v23));
  (void)hi;
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, gd, d0, v01));
  B(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, gd, d1, v23));
#undef B
failed:
  return st;
}

static poot_status tile_build(const poot_kir_corpus_case *c, const poot_kir_target *t,
                              poot_kir_kernel **out) {
  return kc_make(c->name, 32, 1, 1, 32, tile_body, c, t, out);
}

static poot_status tile_prepare(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                                uint32_t size, uint64_t seed, poot_kir_corpus_run *r) {
  poot_kir_scalar s = (poot_kir_scalar)c->arg0;
  bool b_kn = c->arg1 != 0;
  POOT_TRY(kc_run_init(r, k, size));
  uint16_t *a = kc_buf(r, 0, M * K * 2), *bm = kc_buf(r, 1, N * K * 2);
  float *d = kc_buf(r, 2, M * N * 4);
  if (!a || !bm || !d) return kc_oom(r);
  uint64_t st = seed;
  for (int i = 0; i < M * K; i++) a[i] = (uint16_t)kc_enc_f(s, kc_randf(&st, -3.0f, 3.0f));
  for (int i = 0; i < N * K; i++) bm[i] = (uint16_t)kc_enc_f(s, kc_randf(&st, -3.0f, 3.0f));
  for (int i = 0; i < M * N; i++) d[i] = -1.0f;
  /* Hardware sums the products in its own order and precision: a layout
   * error moves results by O(1), rounding by ~1e-6 of the sum. */
  float *want = kc_expect(r, 2, POOT_KIR_CORPUS_CMP_TOL, 1e-4, 1e-4, true);
  if (!want) return kc_oom(r);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      float acc = 0.25f;
      for (int ks = 0; ks < 2; ks++) {
        double sum = acc;
        for (int kk = ks * 16; kk < ks * 16 + 16; kk++) {
          /* The zero-filled copies: B row k = K_VALID (K x N), the 8-wide
           * chunk holding it (N x K). */
          bool live = b_kn ? kk < K_VALID : (kk / 8 + 1) * 8 <= K_VALID;
          float bv = live ? kc_dec_f(s, b_kn ? bm[kk * N + n] : bm[n * K + kk]) : 0.0f;
          sum += (double)kc_dec_f(s, a[m * K + kk]) * (double)bv;
        }
        acc = (float)sum;
      }
      want[m * N + n] = acc;
    }
  return POOT_OK_STATUS;
}

static const poot_kir_corpus_case mma_cases[] = {
    {"mma_tile_f16_nk", "m16n8k16 f16, B as N x K, two async groups", POOT_KIR_F16, 0, tile_build,
     tile_prepare, {1}},
    {"mma_tile_f16_kn", "m16n8k16 f16, B as K x N (transposed mma_load)", POOT_KIR_F16, 1,
     tile_build, tile_prepare, {1}},
    {"mma_tile_bf16_nk", "m16n8k16 bf16, B as N x K", POOT_KIR_BF16, 0, tile_build, tile_prepare,
     {1}},
    {"mma_tile_bf16_kn", "m16n8k16 bf16, B as K x N", POOT_KIR_BF16, 1, tile_build, tile_prepare,
     {1}},
};

const poot_kir_corpus_case *poot_kir_corpus_mma(size_t *out_count) {
  *out_count = sizeof mma_cases / sizeof mma_cases[0];
  return mma_cases;
}
