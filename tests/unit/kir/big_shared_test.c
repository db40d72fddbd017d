/* Shared memory past PTX's 48 KiB of static .shared (kir.h,
 * POOT_KIR_PTX_STATIC_SHARED_MAX):
 *   kir_big_shared        a kernel with 64 KiB of shared arrays (two f32
 *                         tiles of 32 KiB and a 12-byte array between them)
 *                         gives its real values on the interpreter; its
 *                         window is laid out at 16-byte aligned offsets; the
 *                         verifier takes it only up to the target's opt-in
 *                         amount; its PTX declares one .extern .shared window
 *                         and addresses the arrays at their offsets, where a
 *                         kernel at 48 KiB keeps its static arrays
 *   kir_big_shared_ptxas  (argument "ptxas") both PTX texts accepted by
 *                         ptxas for sm_80 and sm_90; SKIP without ptxas */
#include "poot_test.h"

#include "poot/devices.h"
#include "poot/kir.h"
#include "render_ptx_amdgpu_util.h"

#define WG 256u
#define B(expr)           \
  do {                    \
    if (!st) st = (expr); \
  } while (0)

/* out[i] = a[n-1-i] + c[i] + b[i % 3] after a[i] = in[i], c[n-1-i] = 2 in[i],
 * b[t] = t + 1: out[i] = 3 in[n-1-i] + i % 3 + 1. `n` f32 elements per tile
 * (8192: 64 KiB of tiles; 6144: 48 KiB with b). */
static poot_status build(uint32_t n, poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"big_shared", {WG, 1, 1}, 0};
  poot_kir_builder *bl = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &bl));
  poot_status st = NULL;
  uint32_t a = 0, bs = 0, c = 0, in = 0, o = 0;
  poot_kir_binding bin = {"in", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bout = {"out", 1, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  B(poot_kir_add_binding(bl, &bin, &in));
  B(poot_kir_add_binding(bl, &bout, &o));
  B(poot_kir_add_shared(bl, "a", POOT_KIR_F32, n, &a));
  B(poot_kir_add_shared(bl, "b", POOT_KIR_U32, 3, &bs));
  B(poot_kir_add_shared(bl, "c", POOT_KIR_F32, n, &c));
  poot_kir_value lid = 0, zero = 0, one = 0, three = 0, wg = 0, last = 0, steps = 0, two = 0;
  B(poot_kir_builtin_get(bl, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &lid));
  B(poot_kir_const_u32(bl, 0, &zero));
  B(poot_kir_const_u32(bl, 1, &one));
  B(poot_kir_const_u32(bl, 3, &three));
  B(poot_kir_const_u32(bl, WG, &wg));
  B(poot_kir_const_u32(bl, n - 1, &last));
  B(poot_kir_const_u32(bl, n / WG, &steps));
  B(poot_kir_const_f32(bl, 2.0f, &two));
  poot_kir_value small = 0, lid1 = 0;
  B(poot_kir_binary(bl, POOT_KIR_OP_LT, lid, three, &small));
  B(poot_kir_if_begin(bl, small));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, lid, one, &lid1));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, bs, lid, lid1));
  B(poot_kir_end(bl));
  poot_kir_value j = 0, idx = 0, rev = 0, v = 0, v2 = 0, base = 0;
  B(poot_kir_for_begin(bl, zero, steps, one, &j));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, j, wg, &base));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, base, lid, &idx));
  B(poot_kir_binary(bl, POOT_KIR_OP_SUB, last, idx, &rev));
  B(poot_kir_load(bl, POOT_KIR_SPACE_GLOBAL, in, idx, 1, &v));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, a, idx, v));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, v, two, &v2));
  B(poot_kir_store(bl, POOT_KIR_SPACE_SHARED, c, rev, v2));
  B(poot_kir_end(bl));
  B(poot_kir_barrier(bl));
  poot_kir_value j2 = 0, base2 = 0, idx2 = 0, rev2 = 0, x = 0, y = 0, m = 0, bw = 0, bf = 0, s1 = 0,
                 s2 = 0;
  B(poot_kir_for_begin(bl, zero, steps, one, &j2));
  B(poot_kir_binary(bl, POOT_KIR_OP_MUL, j2, wg, &base2));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, base2, lid, &idx2));
  B(poot_kir_binary(bl, POOT_KIR_OP_SUB, last, idx2, &rev2));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, a, rev2, 1, &x));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, c, idx2, 1, &y));
  B(poot_kir_binary(bl, POOT_KIR_OP_REM, idx2, three, &m));
  B(poot_kir_load(bl, POOT_KIR_SPACE_SHARED, bs, m, 1, &bw));
  B(poot_kir_convert(bl, POOT_KIR_F32, bw, &bf));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, x, y, &s1));
  B(poot_kir_binary(bl, POOT_KIR_OP_ADD, s1, bf, &s2));
  B(poot_kir_store(bl, POOT_KIR_SPACE_GLOBAL, o, idx2, s2));
  B(poot_kir_end(bl));
  if (st) {
    poot_kir_builder_destroy(bl);
    return st;
  }
  return poot_kir_builder_finish(bl, out);
}

/* 64 KiB: the window is a (32,768 bytes), b at 32,768 (12 bytes), c at the
 * next 16-byte boundary, 32,784; 65,552 bytes in all. */
static void test_layout(void **state) {
  (void)state;
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build(8192, &k));
  assert_int_equal(poot_kir_kernel_shared_bytes(k), 65548);
  assert_int_equal(poot_kir_kernel_shared_offset(k, 0), 0);
  assert_int_equal(poot_kir_kernel_shared_offset(k, 1), 32768);
  assert_int_equal(poot_kir_kernel_shared_offset(k, 2), 32784);
  assert_int_equal(poot_kir_kernel_shared_offset(k, 3), 65552);
  assert_int_equal(poot_kir_ptx_dynamic_shared_bytes(k), 65552);
  poot_kir_kernel_destroy(k);
  /* 6,144 elements a tile: 24,576 + 16 + 24,576 = 49,168 > 48 KiB, dynamic;
   * 6,140: 49,136, static. */
  POOT_ASSERT_OK(build(6144, &k));
  assert_int_equal(poot_kir_ptx_dynamic_shared_bytes(k), 49168);
  poot_kir_kernel_destroy(k);
  POOT_ASSERT_OK(build(6140 / WG * WG, &k)); /* 5,888: 47,120 */
  assert_int_equal(poot_kir_ptx_dynamic_shared_bytes(k), 0);
  poot_kir_kernel_destroy(k);
}

/* The interpreter runs it (1 MiB of shared memory) with the real values. */
static void test_interp(void **state) {
  (void)state;
  enum { N = 8192 };
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build(N, &k));
  float *in = poot_malloc(N * sizeof *in), *out = poot_malloc(N * sizeof *out);
  assert_non_null(in);
  assert_non_null(out);
  for (uint32_t i = 0; i < N; i++) {
    in[i] = (float)((i * 37u) % 1000u) * 0.25f - 100.0f;
    out[i] = -1.0f;
  }
  poot_kir_buffer bufs[2] = {{in, N * sizeof *in}, {out, N * sizeof *out}};
  poot_kir_interp_options o = {0};
  o.grid[0] = 1;
  o.buffers = bufs;
  o.buffer_count = 2;
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  for (uint32_t i = 0; i < N; i++) {
    float want = 3.0f * in[N - 1 - i] + (float)(i % 3 + 1);
    if (out[i] != want) fail_msg("out[%u] = %g, want %g", i, (double)out[i], (double)want);
  }
  /* spot values, written out */
  assert_true(out[0] == 3.0f * in[N - 1] + 1.0f);
  assert_true(out[N - 1] == 3.0f * in[0] + 2.0f); /* 8191 % 3 = 1 */
  poot_free(in);
  poot_free(out);
  poot_kir_kernel_destroy(k);
}

/* The verifier takes the window up to the opt-in amount: a PTX target
 * without one refuses it, sm_80 and sm_90 of the catalogue take it, and
 * one whose opt-in is one byte short of the window refuses it. */
static void test_verify(void **state) {
  (void)state;
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build(8192, &k));
  poot_kir_target t;
  poot_kir_target_init(&t, POOT_KIR_LANG_PTX, 32);
  t.sm_version = 90;
  assert_int_equal(t.shared_memory_optin_bytes, 0);
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &t), POOT_UNSUPPORTED,
                         "shared memory of 65548 bytes exceeds the target's 49152");
  t.shared_memory_optin_bytes = 65551;
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &t), POOT_UNSUPPORTED,
                         "65552 bytes exceeds the target's 65551 bytes per workgroup, opt-in "
                         "included");
  t.shared_memory_optin_bytes = 65552;
  POOT_ASSERT_OK(poot_kir_verify(k, &t));
  static const struct {
    const char *name;
    uint32_t optin;
  } cat[] = {{"sm_80", 166912}, {"sm_90", 232448}};
  for (size_t i = 0; i < 2; i++) {
    POOT_ASSERT_OK(poot_device_target_by_name(cat[i].name, &t));
    assert_int_equal(t.shared_memory_bytes, 48 * 1024);
    assert_int_equal(t.shared_memory_optin_bytes, cat[i].optin);
    POOT_ASSERT_OK(poot_kir_verify(k, &t));
  }
  /* the other languages have none */
  static const char *const others[] = {"vulkan", "lavapipe", "webgpu", "gfx90a", "interp"};
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    POOT_ASSERT_OK(poot_device_target_by_name(others[i], &t));
    assert_int_equal(t.shared_memory_optin_bytes, 0);
  }
  poot_kir_kernel_destroy(k);
}

static char *render(uint32_t n, const char *sm) {
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(build(n, &k));
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name(sm, &t));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
  poot_kir_kernel_destroy(k);
  char *text = poot_strbuf_take(&sb); /* the caller frees it */
  assert_non_null(text);
  return text;
}

/* Over 48 KiB: one .extern window, the arrays at their offsets; at or
 * under: the static arrays as before, no window. */
static void test_render(void **state) {
  (void)state;
  char *big = render(8192, "sm_90");
  assert_non_null(strstr(big, "\n.extern .shared .align 16 .b8 dshared[];\n"));
  assert_null(strstr(big, ".shared .align 16 .b8 \ts0_a"));
  assert_non_null(strstr(big, "\tmov.u32 \t%r"));
  assert_non_null(strstr(big, ", dshared;\n"));
  assert_non_null(strstr(big, ", 32768;\n")); /* b */
  assert_non_null(strstr(big, ", 32784;\n")); /* c */
  poot_free(big);
  char *small = render(5888, "sm_90");
  assert_null(strstr(small, "dshared"));
  assert_non_null(strstr(small, "\t.shared .align 16 .b8 \ts0_a[23552];\n"));
  assert_non_null(strstr(small, "\t.shared .align 16 .b8 \ts1_b[12];\n"));
  assert_non_null(strstr(small, "\t.shared .align 16 .b8 \ts2_c[23552];\n"));
  poot_free(small);
}

static void test_ptxas(void **state) {
  (void)state;
  char ptxas[1024];
  if (!render_find_tool("ptxas", ptxas, sizeof ptxas)) {
    printf("SKIP: ptxas (CUDA toolkit) is not on PATH\n");
    skip();
  }
  const char *dir = poot_test_tmpdir();
  static const char *const sms[] = {"sm_80", "sm_90"};
  static const uint32_t sizes[] = {8192, 5888};
  for (size_t s = 0; s < 2; s++)
    for (size_t z = 0; z < 2; z++) {
      char *text = render(sizes[z], sms[s]);
      char name[64];
      snprintf(name, sizeof name, "big_shared_%u.%s.ptx", sizes[z], sms[s]);
      assert_true(render_write_file(dir, name, text, strlen(text)));
      poot_free(text);
      int rc = poot_test_system("'%s' -arch=%s '%s/%s' -o '%s/%s.cubin'", ptxas, sms[s], dir, name,
                                dir, name);
      if (rc != 0) fail_msg("ptxas -arch=%s rejected %s/%s", sms[s], dir, name);
    }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ptxas") == 0) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ptxas)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_interp),
      cmocka_unit_test(test_verify),
      cmocka_unit_test(test_render),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
