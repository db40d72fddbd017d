/* KIR matrix fragments and asynchronous copies (kir.h, "matrix fragments"):
 *   kir_mma        the corpus_mma.c cases on the interpreter, bit-exact
 *                  against their C reference; the verifier refuses the ops on
 *                  targets without them; malformed operands are refused
 *   kir_mma_ptxas  (argument "ptxas") their PTX for sm_80 and sm_90 is
 *                  accepted by ptxas; SKIP without ptxas on PATH
 * kir_render_ptx_cuda runs the same cases on an NVIDIA GPU. */
#include "poot_test.h"

#include "corpus.h"
#include "poot/devices.h"
#include "poot/kir.h"
#include "render_ptx_amdgpu_util.h"

static void test_interp(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus_mma(&n);
  assert_true(n >= 4);
  for (size_t i = 0; i < n; i++) {
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(cases[i].build(&cases[i], NULL, &k));
    poot_kir_corpus_run run;
    POOT_ASSERT_OK(cases[i].prepare(&cases[i], k, cases[i].sizes[0], 99 + i, &run));
    poot_kir_interp_options o = {0};
    memcpy(o.grid, run.grid, sizeof o.grid);
    o.buffers = run.buffers;
    o.buffer_count = run.buffer_count;
    POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
    POOT_ASSERT_OK(poot_kir_corpus_compare(k, &run, NULL, true));
    poot_kir_corpus_run_deinit(&run);
    poot_kir_kernel_destroy(k);
  }
}

/* Targets without the ops refuse them; PTX sm_80 and sm_90 render them. */
static void test_targets(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *c = poot_kir_corpus_mma(&n);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, NULL, &k));
  static const poot_kir_lang without[] = {POOT_KIR_LANG_GLSL, POOT_KIR_LANG_WGSL,
                                          POOT_KIR_LANG_AMDGPU, POOT_KIR_LANG_PTX};
  for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
    poot_kir_target t;
    poot_kir_target_init(&t, without[i], 32); /* PTX without sm_version: below sm_80 */
    /* so that the fragments are what fails */
    t.storage_types = POOT_KIR_ALL_STORAGE_TYPES;
    t.shared_memory_bytes = 48 * 1024;
    assert_false(poot_kir_target_has_matrix(&t));
    POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &t), POOT_UNSUPPORTED, "matrix fragments");
    POOT_ASSERT_STATUS(c->build(c, &t, &(poot_kir_kernel *){NULL}), POOT_UNSUPPORTED);
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
    assert_non_null(strstr(sb.data, "cp.async.commit_group"));
    assert_non_null(strstr(sb.data, "cp.async.wait_group \t1"));
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
  uint32_t s32, s16, g;
  POOT_ASSERT_OK(poot_kir_add_shared(b, "w", POOT_KIR_F32, 64, &s32));
  POOT_ASSERT_OK(poot_kir_add_shared(b, "h", POOT_KIR_F16, 64, &s16));
  poot_kir_binding bd = {"g", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bd, &g));
  poot_kir_value zero, yes, frag, f;
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_OK(poot_kir_const_bool(b, true, &yes));
  POOT_ASSERT_STATUS_MSG(poot_kir_mma_load(b, s32, zero, false, &frag), POOT_INVALID_ARGUMENT,
                         "16-bit");
  poot_kir_builder_destroy(b);
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  POOT_ASSERT_OK(poot_kir_add_shared(b, "h", POOT_KIR_F16, 64, &s16));
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bd, &g));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 0, &zero));
  POOT_ASSERT_OK(poot_kir_const_bool(b, true, &yes));
  POOT_ASSERT_STATUS_MSG(poot_kir_async_copy(b, s16, zero, g, zero, yes), POOT_INVALID_ARGUMENT,
                         "async_copy from f32 elements into f16");
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
  size_t n = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus_mma(&n);
  static const char *const sms[] = {"sm_80", "sm_90"};
  for (size_t i = 0; i < n; i++)
    for (size_t s = 0; s < 2; s++) {
      poot_kir_target t;
      POOT_ASSERT_OK(poot_device_target_by_name(sms[s], &t));
      poot_kir_kernel *k = NULL;
      POOT_ASSERT_OK(cases[i].build(&cases[i], &t, &k));
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
      char name[96];
      snprintf(name, sizeof name, "%s.%s.ptx", cases[i].name, sms[s]);
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
      cmocka_unit_test(test_interp),
      cmocka_unit_test(test_targets),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
