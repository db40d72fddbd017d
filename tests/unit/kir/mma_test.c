/* KIR matrix fragments and asynchronous copies (kir.h, "matrix fragments"):
 *   kir_mma        one warp multiplies a 16x32 by a 32x8 tile through
 *                  async_copy (two commit groups, a zero-filled row),
 *                  mma_load (plain and transposed) and mma, in f16 and bf16,
 *                  on the interpreter, compared exactly with a C reference of
 *                  the documented layout and rounding; the verifier rejects
 *                  the ops on targets without them and malformed operands
 *   kir_mma_ptxas  (argument "ptxas") the PTX renderings for sm_80 and sm_90
 *                  are accepted by ptxas; SKIP without ptxas on PATH */
#include "poot_test.h"

#include "poot/devices.h"
#include "poot/kir.h"
#include "render_ptx_amdgpu_util.h"

enum { M = 16, N = 8, K = 32, K_VALID = 31 };

/* B in global memory: [N][K] (weights, k contiguous: plain mma_load) or
 * [K][N] (activations, n contiguous: transposed mma_load). */
typedef struct mma_case {
  poot_kir_scalar operand;
  bool b_kn;
} mma_case;

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

/* The kernel: bindings A [M][K], B, D f32 [M][N]; one warp. */
static poot_status build_tile(const mma_case *mc, poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"mma_tile", {32, 1, 1}, 32};
  poot_kir_builder *b = NULL;
  TRY(poot_kir_builder_create(&desc, &b));
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
  return poot_kir_builder_finish(b, out);
failed:
  poot_kir_builder_destroy(b);
  return st;
}

static uint16_t to16(poot_kir_scalar s, float f) {
  return s == POOT_KIR_BF16 ? poot_f32_to_bf16(f) : poot_f32_to_f16(f);
}
static float from16(poot_kir_scalar s, uint16_t h) {
  return s == POOT_KIR_BF16 ? poot_bf16_to_f32(h) : poot_f16_to_f32(h);
}

static void run_case(const mma_case *mc) {
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build_tile(mc, &k));
  poot_kir_target t;
  poot_kir_target_init_interp(&t, 32);
  POOT_ASSERT_OK(poot_kir_verify(k, &t));
  uint16_t a[M * K], bm[N * K];
  float d[M * N];
  uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)mc->operand;
  for (int i = 0; i < M * K + N * K; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    float v = (float)((int)((seed >> 33) % 2001) - 1000) / 337.0f;
    if (i < M * K)
      a[i] = to16(mc->operand, v);
    else
      bm[i - M * K] = to16(mc->operand, v);
  }
  for (int i = 0; i < M * N; i++) d[i] = -1.0f;
  poot_kir_buffer bufs[3] = {{a, sizeof a}, {bm, sizeof bm}, {d, sizeof d}};
  poot_kir_interp_options o = {0};
  o.buffers = bufs;
  o.buffer_count = 3;
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  /* The reference: per k-step of 16, C plus the exact products summed in
   * double and rounded to f32 once (kir.h); B rows k >= K_VALID are zeros. */
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      float acc = 0.25f;
      for (int ks = 0; ks < 2; ks++) {
        double s = acc;
        for (int kk = ks * 16; kk < ks * 16 + 16; kk++) {
          float bv = 0.0f;
          if (mc->b_kn ? kk < K_VALID : (kk / 8 + 1) * 8 <= K_VALID)
            bv = from16(mc->operand, mc->b_kn ? bm[kk * N + n] : bm[n * K + kk]);
          s += (double)from16(mc->operand, a[m * K + kk]) * (double)bv;
        }
        acc = (float)s;
      }
      if (d[m * N + n] != acc)
        fail_msg("%s b_kn=%d: D[%d][%d] = %.9g, reference %.9g", poot_kir_scalar_name(mc->operand),
                 mc->b_kn, m, n, (double)d[m * N + n], (double)acc);
    }
  poot_kir_kernel_destroy(k);
}

static void test_tile_interp(void **state) {
  (void)state;
  static const mma_case cases[] = {
      {POOT_KIR_F16, false}, {POOT_KIR_F16, true}, {POOT_KIR_BF16, false}, {POOT_KIR_BF16, true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* Targets without the ops reject them; the interpreter and PTX sm_80+ accept. */
static void test_targets(void **state) {
  (void)state;
  mma_case mc = {POOT_KIR_F16, false};
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build_tile(&mc, &k));
  static const poot_kir_lang without[] = {POOT_KIR_LANG_GLSL, POOT_KIR_LANG_WGSL,
                                          POOT_KIR_LANG_AMDGPU, POOT_KIR_LANG_PTX};
  for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
    poot_kir_target t;
    poot_kir_target_init(&t, without[i], 32); /* PTX without sm_version: below sm_80 */
    t.storage_types = POOT_KIR_ALL_STORAGE_TYPES; /* so that the fragments are what fails */
    t.shared_memory_bytes = 48 * 1024;
    assert_false(poot_kir_target_has_matrix(&t));
    POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &t), POOT_UNSUPPORTED, "matrix fragments");
  }
  static const char *const with[] = {"sm_80", "sm_90"};
  for (size_t i = 0; i < 2; i++) {
    poot_kir_target t;
    POOT_ASSERT_OK(poot_device_target_by_name(with[i], &t));
    assert_true(poot_kir_target_has_matrix(&t));
    POOT_ASSERT_OK(poot_kir_verify(k, &t));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
    assert_non_null(strstr(sb.data, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    assert_non_null(strstr(sb.data, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    assert_non_null(strstr(sb.data, "cp.async.cg.shared.global"));
    assert_non_null(strstr(sb.data, "cp.async.wait_group"));
    poot_strbuf_deinit(&sb);
  }
  poot_kir_kernel_destroy(k);
}

/* Malformed operands are refused by the builder with a message. */
static void test_malformed(void **state) {
  (void)state;
  poot_kir_kernel_desc desc = {"bad", {32, 1, 1}, 32};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  uint32_t s32, s16;
  POOT_ASSERT_OK(poot_kir_add_shared(b, "w", POOT_KIR_F32, 64, &s32));
  POOT_ASSERT_OK(poot_kir_add_shared(b, "h", POOT_KIR_F16, 64, &s16));
  poot_kir_value zero, frag, f;
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_STATUS_MSG(poot_kir_mma_load(b, s32, zero, false, &frag), POOT_INVALID_ARGUMENT,
                         "16-bit");
  poot_kir_builder_destroy(b);
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  POOT_ASSERT_OK(poot_kir_add_shared(b, "h", POOT_KIR_F16, 64, &s16));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_OK(poot_kir_mma_load(b, s16, zero, false, &frag));
  POOT_ASSERT_STATUS_MSG(poot_kir_mma(b, POOT_KIR_F16, frag, frag, frag, &f),
                         POOT_INVALID_ARGUMENT, "u32x4, u32x2, f32x4");
  poot_kir_builder_destroy(b);
}

static void test_ptxas(void **state) {
  (void)state;
  char ptxas[1024];
  if (!render_find_tool("ptxas", ptxas, sizeof ptxas)) {
    printf("SKIP: ptxas (CUDA toolkit) is not on PATH\n");
    skip();
  }
  const char *dir = poot_test_tmpdir();
  static const mma_case cases[] = {{POOT_KIR_F16, false}, {POOT_KIR_BF16, true}};
  static const char *const sms[] = {"sm_80", "sm_90"};
  for (size_t i = 0; i < 2; i++)
    for (size_t s = 0; s < 2; s++) {
      poot_kir_kernel *k = NULL;
      POOT_ASSERT_OK(build_tile(&cases[i], &k));
      poot_kir_target t;
      POOT_ASSERT_OK(poot_device_target_by_name(sms[s], &t));
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
      char name[64];
      snprintf(name, sizeof name, "mma_%zu_%s.ptx", i, sms[s]);
      assert_true(render_write_file(dir, name, sb.data, sb.len));
      int rc = poot_test_system("'%s' -arch=%s '%s/%s' -o '%s/%s.cubin'", ptxas, sms[s], dir,
                                name, dir, name);
      if (rc != 0) fail_msg("ptxas -arch=%s rejected %s/%s", sms[s], dir, name);
      poot_strbuf_deinit(&sb);
      poot_kir_kernel_destroy(k);
    }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ptxas") == 0) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ptxas)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tile_interp),
      cmocka_unit_test(test_targets),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
