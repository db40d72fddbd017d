/* KIR's GLSL renderer and in-process SPIR-V compiler: every corpus kernel
 * renders to GLSL for the Vulkan targets, compiles to SPIR-V with the linked
 * glslang, passes `spirv-val --target-env vulkan1.2` (when installed), and
 * both steps are deterministic (byte-identical text and words). */
#include <stdlib.h>

#include "corpus.h"
#include "poot/devices.h"
#include "poot_test.h"
#include "render_ptx_ops.h"

static bool have_spirv_val(void) {
  return poot_test_system("command -v spirv-val >/dev/null 2>&1") == 0;
}

static bool write_words(const char *path, const poot_vec *w) {
  return poot_file_write_all(path, w->data, w->len * 4) == NULL;
}

/* Renders, compiles and validates every case for one target. Returns how
 * many cases were rendered; *out_unsupported counts the skipped ones. */
static size_t check_target(const char *target_name, bool validate, size_t *out_unsupported) {
  poot_kir_target t;
  POOT_ASSERT_OK(poot_device_target_by_name(target_name, &t));
  size_t n = 0, done = 0, unsupported = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  for (size_t i = 0; i < n; i++) {
    const poot_kir_corpus_case *c = &cases[i];
    poot_kir_kernel *k = NULL;
    poot_status st = c->build(c, &t, &k);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      printf("  %s on %s: unsupported (%s)\n", c->name, target_name, poot_status_message(st));
      poot_status_free(st);
      unsupported++;
      continue;
    }
    POOT_ASSERT_OK(st);
    poot_strbuf a, b;
    poot_strbuf_init(&a);
    poot_strbuf_init(&b);
    POOT_ASSERT_OK(poot_kir_render_glsl(k, &t, &a));
    POOT_ASSERT_OK(poot_kir_render_glsl(k, &t, &b));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_non_null(strstr(a.data, "#version 450"));
    if (k->has_checks) assert_non_null(strstr(a.data, "poot_err_word"));

    poot_vec w1, w2;
    poot_vec_init(&w1, 4);
    poot_vec_init(&w2, 4);
    poot_status cst = poot_kir_glsl_to_spirv(a.data, a.len, &t, &w1);
    if (cst) {
      printf("%s\n", a.data);
      POOT_ASSERT_OK(cst);
    }
    POOT_ASSERT_OK(poot_kir_compile_spirv(k, &t, &w2));
    assert_true(w1.len > 5);
    assert_int_equal(((uint32_t *)w1.data)[0], 0x07230203u); /* SPIR-V magic */
    assert_int_equal(w1.len, w2.len);
    assert_memory_equal(w1.data, w2.data, w1.len * 4);

    if (validate) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s_%s.spv", poot_test_tmpdir(), c->name, target_name);
      assert_true(write_words(path, &w1));
      int rc = poot_test_system("spirv-val --target-env vulkan1.2 '%s'", path);
      if (rc != 0) {
        printf("%s\n", a.data);
        fail_msg("spirv-val rejected %s for %s (exit %d)", c->name, target_name, rc);
      }
    }
    poot_vec_deinit(&w1);
    poot_vec_deinit(&w2);
    poot_strbuf_deinit(&a);
    poot_strbuf_deinit(&b);
    poot_kir_kernel_destroy(k);
    done++;
  }
  printf("%s: %zu of %zu corpus kernels rendered, compiled%s; %zu unsupported\n", target_name, done,
         n, validate ? " and passed spirv-val" : "", unsupported);
  *out_unsupported = unsupported;
  return done;
}

static void test_corpus_all_targets(void **state) {
  (void)state;
  bool validate = have_spirv_val();
  if (!validate) printf("note: spirv-val is not installed; SPIR-V is not validated\n");
  size_t n = 0;
  (void)poot_kir_corpus(&n);
  assert_true(n > 0);
  size_t unsupported = 0;
  /* lavapipe (subgroups of 8) and a desktop GPU with subgroups of 32 have
   * every type and op the corpus uses: every kernel must render there. */
  assert_int_equal(check_target("lavapipe", validate, &unsupported), n);
  assert_int_equal(unsupported, 0);
  assert_int_equal(check_target("vulkan-sg32", validate, &unsupported) + unsupported, n);
  /* Without subgroups the subgroup kernels are refused, the rest render. */
  size_t plain = check_target("vulkan", validate, &unsupported);
  assert_true(plain > 0);
  assert_int_equal(plain + unsupported, n);
}

/* The renderer tests' extra kernels (every op and conversion pair) also
 * compile and validate; the ones that need what lavapipe lacks (a float
 * compare-exchange) are refused by the verifier. */
static void test_ops_kernels(void **state) {
  (void)state;
  bool validate = have_spirv_val();
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &t);
  uint32_t done = 0;
  for (uint32_t i = 0; i < RENDER_OPS_KERNEL_COUNT; i++) {
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(render_ops_kernel(i, 8, &k));
    poot_vec w;
    poot_vec_init(&w, 4);
    poot_status st = poot_kir_compile_spirv(k, &t, &w);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      printf("  %s: unsupported on lavapipe (%s)\n", k->name, poot_status_message(st));
      poot_status_free(st);
    } else {
      POOT_ASSERT_OK(st);
      if (validate) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.spv", poot_test_tmpdir(), k->name);
        assert_true(write_words(path, &w));
        assert_int_equal(poot_test_system("spirv-val --target-env vulkan1.2 '%s'", path), 0);
      }
      done++;
    }
    poot_vec_deinit(&w);
    poot_kir_kernel_destroy(k);
  }
  printf("%u of %u extra op kernels compiled%s\n", done, RENDER_OPS_KERNEL_COUNT,
         validate ? " and passed spirv-val" : "");
  assert_true(done >= RENDER_OPS_KERNEL_COUNT - 1);
}

typedef struct render_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
} render_ctx;

static poot_status try_render_compile(void *ctx) {
  const render_ctx *r = ctx;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_vec w;
  poot_vec_init(&w, 4);
  poot_status st = poot_kir_render_glsl(r->k, r->t, &sb);
  if (!st) st = poot_kir_glsl_to_spirv(sb.data, sb.len, r->t, &w);
  if (!st) assert_true(w.len > 5);
  poot_vec_deinit(&w);
  poot_strbuf_deinit(&sb);
  return st;
}

/* Exhausted memory at every allocation of a render and a compile gives
 * OUT_OF_MEMORY (never a crash or a leak), and the next call works. */
static void test_out_of_memory(void **state) {
  (void)state;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("gemv_tiled_f32");
  if (!c) c = &poot_kir_corpus(&(size_t){0})[0];
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &t);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, &t, &k));
  render_ctx r = {k, &t};
  assert_true(poot_test_oom_sweep("render and compile glsl", try_render_compile, &r, 10000) > 0);
  poot_kir_kernel_destroy(k);
}

static void test_compile_error_names_line(void **state) {
  (void)state;
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &t);
  const char *bad = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  int x = y;\n}\n";
  poot_vec w;
  poot_vec_init(&w, 4);
  POOT_ASSERT_STATUS_MSG(poot_kir_glsl_to_spirv(bad, strlen(bad), &t, &w), POOT_FORMAT,
                         "0:4: 'y' : undeclared identifier");
  POOT_ASSERT_STATUS_MSG(poot_kir_glsl_to_spirv(bad, strlen(bad), &t, &w), POOT_FORMAT,
                         "    4 |   int x = y;");
  assert_int_equal(w.len, 0);
  poot_vec_deinit(&w);
}

static void test_wrong_target_language(void **state) {
  (void)state;
  size_t n = 0;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("vadd_f32");
  if (!c) c = &poot_kir_corpus(&n)[0];
  poot_kir_target lav, ptx;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &lav);
  poot_device_target_init(POOT_DEVICE_TARGET_SM80, 0, &ptx);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(c->build(c, &lav, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_STATUS(poot_kir_render_glsl(k, &ptx, &sb), POOT_INVALID_ARGUMENT);
  assert_int_equal(sb.len, 0);
  poot_strbuf_deinit(&sb);
  poot_kir_kernel_destroy(k);
}

/* A target whose device converts halves exactly gets the language's own
 * conversions (and only that direction); the others keep the routines. */
static void test_f16_native_helpers(void **state) {
  (void)state;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("arith_f16");
  assert_non_null(c);
  for (int mode = 0; mode < 4; mode++) {
    poot_kir_target t;
    poot_device_target_init(POOT_DEVICE_TARGET_VULKAN, 32, &t);
    t.f16_widen_native = mode & 1;
    t.f16_narrow_native = (mode & 2) != 0;
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(c->build(c, &t, &k));
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    POOT_ASSERT_OK(poot_kir_render_glsl(k, &t, &sb));
    assert_int_equal(strstr(sb.data, "unpackHalf2x16(h).x") != NULL, t.f16_widen_native);
    assert_int_equal(strstr(sb.data, "findMSB(m)") == NULL, t.f16_widen_native);
    assert_int_equal(strstr(sb.data, "packHalf2x16(vec2(f, 0.0))") != NULL, t.f16_narrow_native);
    assert_int_equal(strstr(sb.data, "uint hw = 1u << (sh - 1u);") == NULL, t.f16_narrow_native);
    poot_vec w;
    poot_vec_init(&w, 4);
    POOT_ASSERT_OK(poot_kir_glsl_to_spirv(sb.data, sb.len, &t, &w));
    poot_vec_deinit(&w);
    poot_strbuf_deinit(&sb);
    poot_kir_kernel_destroy(k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus_all_targets),    cmocka_unit_test(test_ops_kernels),
      cmocka_unit_test(test_out_of_memory),         cmocka_unit_test(test_compile_error_names_line),
      cmocka_unit_test(test_wrong_target_language), cmocka_unit_test(test_f16_native_helpers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
