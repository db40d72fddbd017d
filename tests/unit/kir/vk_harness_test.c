/* The first real execution of KIR: every corpus kernel, rendered to GLSL and
 * compiled to SPIR-V in process, runs on a Vulkan device (lavapipe in CI)
 * through the minimal harness of vk_harness.c, and its outputs match both
 * the corpus's C reference and the KIR interpreter run on the same inputs
 * (bit-exact for integer and movement work, within the case's bound for
 * floats). A failed check comes back as its bit in the error word.
 * Skips (77) when there is no Vulkan loader or device. */
#include <stdlib.h>

#include "corpus.h"
#include "poot/devices.h"
#include "poot_test.h"
#include "vk_harness.h"

#define DISPATCH_TIMEOUT_NS (120ull * 1000 * 1000 * 1000)

static vkh *g_vk;

/* The KIR target for the device: lavapipe's description, narrowed to what
 * the device reports (subgroup size, features, limits). */
static void target_for_device(poot_kir_target *t) {
  const vkh_info *in = vkh_get_info(g_vk);
  /* VkSubgroupFeatureFlagBits: BASIC, ARITHMETIC, BALLOT, SHUFFLE. */
  const uint32_t need_sg = 0x1 | 0x4 | 0x8 | 0x10;
  bool sg = in->subgroup_size > 0 && (in->subgroup_ops & need_sg) == need_sg;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, sg ? in->subgroup_size : 0, t);
  t->name = "vulkan-device";
  t->max_workgroup_size = in->max_workgroup_size;
  t->shared_memory_bytes = in->max_shared_bytes;
  if (in->max_push_bytes < t->max_push_bytes) t->max_push_bytes = in->max_push_bytes;
  if (!in->atomic_float_add) {
    t->atomic_types[POOT_KIR_ATOMIC_ADD] &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
    t->atomic_types[POOT_KIR_ATOMIC_XCHG] &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
  }
  if (!in->storage_8bit)
    t->storage_types &= ~(POOT_KIR_SCALAR_BIT(POOT_KIR_I8) | POOT_KIR_SCALAR_BIT(POOT_KIR_U8));
  if (!in->storage_16bit)
    t->storage_types &= ~(POOT_KIR_SCALAR_BIT(POOT_KIR_I16) | POOT_KIR_SCALAR_BIT(POOT_KIR_U16) |
                          POOT_KIR_SCALAR_BIT(POOT_KIR_F16) | POOT_KIR_SCALAR_BIT(POOT_KIR_BF16));
  if (!in->shader_int64) {
    t->storage_types &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
    t->arith_types &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  }
}

/* Dispatches kernel k on the device over `bufs` (kernel->bindings order),
 * with PUSH params from `params`; *out_err receives the error word. */
static poot_status run_on_device(const poot_kir_kernel *k, const poot_kir_target *t,
                                 poot_kir_buffer *bufs, const uint32_t *params,
                                 const uint32_t grid[3], uint32_t *out_err) {
  poot_vec words;
  poot_vec_init(&words, 4);
  poot_status st = poot_kir_compile_spirv(k, t, &words);
  if (st) return st;
  /* The harness binds buffer i at binding i: lay the kernel's buffers out by
   * binding number, with small placeholders in any gaps. */
  uint32_t top = 0;
  for (uint32_t i = 0; i < k->binding_count; i++)
    if (k->bindings[i].binding + 1 > top) top = k->bindings[i].binding + 1;
  if (k->has_checks && k->error_binding + 1 > top) top = k->error_binding + 1;
  vkh_buffer vb[64];
  uint32_t pad[64] = {0};
  if (top > 64) {
    poot_vec_deinit(&words);
    return poot_status_make(POOT_UNSUPPORTED, "too many bindings for the harness");
  }
  for (uint32_t i = 0; i < top; i++) vb[i] = (vkh_buffer){&pad[i], 4};
  for (uint32_t i = 0; i < k->binding_count; i++)
    vb[k->bindings[i].binding] = (vkh_buffer){bufs[i].data, bufs[i].size};
  *out_err = 0;
  if (k->has_checks) vb[k->error_binding] = (vkh_buffer){out_err, 4};
  uint32_t push[64];
  uint32_t push_count = 0;
  for (uint32_t i = 0; i < k->param_count && push_count < 64; i++)
    if (k->params[i].kind == POOT_KIR_PARAM_PUSH) push[push_count++] = params[i];
  st = vkh_dispatch(g_vk, words.data, words.len, vb, top, push, push_count * 4, grid,
                    DISPATCH_TIMEOUT_NS);
  poot_vec_deinit(&words);
  return st;
}

/* Runs one prepared case on the interpreter and on the device and compares
 * both with the reference and with each other. Returns a failure or NULL. */
static poot_status run_case(const poot_kir_corpus_case *c, const poot_kir_kernel *k,
                            const poot_kir_target *t, poot_kir_corpus_run *run) {
  poot_status st = NULL;
  /* The interpreter gets copies of the same inputs. */
  poot_kir_buffer ib[POOT_KIR_CORPUS_MAX_BUFFERS];
  memset(ib, 0, sizeof ib);
  for (size_t i = 0; i < run->buffer_count; i++) {
    ib[i].size = run->buffers[i].size;
    ib[i].data = poot_malloc(ib[i].size ? ib[i].size : 1);
    if (!ib[i].data) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "interpreter buffers");
      goto done;
    }
    memcpy(ib[i].data, run->buffers[i].data, ib[i].size);
  }
  uint32_t interp_err = 0;
  poot_kir_interp_options opt = {
      .grid = {run->grid[0], run->grid[1], run->grid[2]},
      .subgroup_size = t->subgroup_size,
      .buffers = ib,
      .buffer_count = run->buffer_count,
      .params = run->params,
      .param_count = run->param_count,
      .error_word = &interp_err,
  };
  st = poot_kir_interp_run(k, &opt);
  if (st) {
    st = poot_status_annotate(st, "%s size %u on the interpreter", c->name, run->size);
    goto done;
  }
  uint32_t err = 0;
  st = run_on_device(k, t, run->buffers, run->params, run->grid, &err);
  if (st) {
    st = poot_status_annotate(st, "%s size %u on the device", c->name, run->size);
    goto done;
  }
  st = poot_kir_corpus_compare(k, run, &err, false);
  if (st) {
    st = poot_status_annotate(st, "%s size %u, device vs reference", c->name, run->size);
    goto done;
  }
  if (err != interp_err) {
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "%s size %u: error word 0x%08x on the device, 0x%08x on the interpreter",
                          c->name, run->size, err, interp_err);
    goto done;
  }
  /* Device against interpreter: the same comparison rules, with the
   * interpreter's outputs as the expected values. */
  poot_kir_corpus_run vs = *run;
  for (size_t i = 0; i < run->buffer_count; i++)
    if (vs.expected[i]) vs.expected[i] = ib[i].data;
  st = poot_kir_corpus_compare(k, &vs, &err, false);
  if (st) st = poot_status_annotate(st, "%s size %u, device vs interpreter", c->name, run->size);
done:
  for (size_t i = 0; i < run->buffer_count; i++) poot_free(ib[i].data);
  return st;
}

/* Runs every corpus case (only those whose name has `only` in it, where
 * given) for target t; asserts that each run matches. */
static void run_corpus(const poot_kir_target *t, const char *only) {
  size_t n = 0, kernels = 0, runs = 0, matched = 0, unsupported = 0, failures = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  for (size_t i = 0; i < n; i++) {
    const poot_kir_corpus_case *c = &cases[i];
    if (only && !strstr(c->name, only)) continue;
    poot_kir_kernel *k = NULL;
    poot_status st = c->build(c, t, &k);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      printf("  %s: unsupported on this device (%s)\n", c->name, poot_status_message(st));
      poot_status_free(st);
      unsupported++;
      continue;
    }
    POOT_ASSERT_OK(st);
    kernels++;
    for (int j = 0; j < POOT_KIR_CORPUS_MAX_SIZES && c->sizes[j]; j++) {
      poot_kir_corpus_run run;
      memset(&run, 0, sizeof run);
      POOT_ASSERT_OK(c->prepare(c, k, c->sizes[j], 0x5eed0000u + (uint64_t)j, &run));
      runs++;
      st = run_case(c, k, t, &run);
      if (st) {
        failures++;
        printf("  FAIL %s\n", poot_status_message(st));
        poot_status_free(st);
      } else {
        matched++;
      }
      poot_kir_corpus_run_deinit(&run);
    }
    poot_kir_kernel_destroy(k);
  }
  printf(
      "%s (subgroup size %u%s): %zu of %zu runs of %zu corpus kernels match the reference and "
      "the interpreter; %zu kernels unsupported\n",
      vkh_get_info(g_vk)->device_name, t->subgroup_size,
      t->f16_widen_native ? ", native half conversions" : "", matched, runs, kernels, unsupported);
  assert_true(kernels > 0);
  assert_int_equal(failures, 0);
}

static void test_corpus_runs_on_device(void **state) {
  (void)state;
  poot_kir_target t;
  target_for_device(&t);
  run_corpus(&t, NULL);
}

/* The f16 cases (NaN, infinities, zeros, subnormals and every rounding tie
 * of their inputs) rendered with the language's own half conversions, as a
 * device whose probe found them exact gets them (lavapipe's are): the same
 * bits as the interpreter. */
static void test_corpus_f16_native(void **state) {
  (void)state;
  poot_kir_target t;
  target_for_device(&t);
  t.f16_widen_native = t.f16_narrow_native = true;
  run_corpus(&t, "f16");
}

/* A kernel whose check fails in some threads sets exactly its trap bit, and
 * the threads whose check passed still write their results. */
static void test_check_sets_error_bit(void **state) {
  (void)state;
  poot_kir_target t;
  target_for_device(&t);
  poot_kir_kernel_desc d = {.name = "check_bit", .workgroup_size = {32, 1, 1}};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&d, &b));
  poot_kir_binding out = {
      .name = "out", .binding = 0, .elem = POOT_KIR_U32, .access = POOT_KIR_ACCESS_WRITE};
  uint32_t ref;
  POOT_ASSERT_OK(poot_kir_add_binding(b, &out, &ref));
  poot_kir_value gid, lim, ok, one, val;
  POOT_ASSERT_OK(poot_kir_global_id(b, 0, &gid));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 40, &lim));
  POOT_ASSERT_OK(poot_kir_binary(b, POOT_KIR_OP_LT, gid, lim, &ok));
  POOT_ASSERT_OK(poot_kir_check(b, ok, 13));
  POOT_ASSERT_OK(poot_kir_const_u32(b, 1000, &one));
  POOT_ASSERT_OK(poot_kir_binary(b, POOT_KIR_OP_ADD, gid, one, &val));
  POOT_ASSERT_OK(poot_kir_if_begin(b, ok));
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ref, gid, val));
  POOT_ASSERT_OK(poot_kir_end(b));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  assert_true(k->has_checks);
  uint32_t data[64] = {0};
  poot_kir_buffer buf = {data, sizeof data};
  const uint32_t grid[3] = {2, 1, 1};
  uint32_t err = 0xdeadbeefu;
  POOT_ASSERT_OK(run_on_device(k, &t, &buf, NULL, grid, &err));
  assert_int_equal(err, 1u << 13);
  for (uint32_t i = 0; i < 64; i++) assert_int_equal(data[i], i < 40 ? 1000 + i : 0);
  /* A passing dispatch leaves the word zero. */
  const uint32_t one_group[3] = {1, 1, 1};
  POOT_ASSERT_OK(run_on_device(k, &t, &buf, NULL, one_group, &err));
  assert_int_equal(err, 0);
  poot_kir_kernel_destroy(k);
}

int main(void) {
  poot_status st = vkh_create(&g_vk);
  if (poot_status_code_of(st) == POOT_NO_DEVICE) {
    int rc = poot_test_skip("no Vulkan device: %s", poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  if (st) {
    printf("vulkan harness: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  const vkh_info *in = vkh_get_info(g_vk);
  printf(
      "device: %s, subgroup size %u, robustBufferAccess %s, 8/16-bit storage %d/%d, "
      "float atomic add %d\n",
      in->device_name, in->subgroup_size, in->robust_buffer_access ? "on" : "absent",
      in->storage_8bit, in->storage_16bit, in->atomic_float_add);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_sets_error_bit),
      cmocka_unit_test(test_corpus_runs_on_device),
      cmocka_unit_test(test_corpus_f16_native),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  vkh_destroy(g_vk);
  return rc;
}
