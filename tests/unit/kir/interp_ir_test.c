/* KIR: builder and verifier rejections, printer and hash stability, target
 * descriptions, and the interpreter's fault reporting. */
#include "poot/devices.h"
#include "poot_test.h"

#include "corpus.h"

static poot_kir_builder *new_builder(const char *name, uint32_t wg) {
  poot_kir_kernel_desc d = {name, {wg, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&d, &b));
  return b;
}

static uint32_t add_buf(poot_kir_builder *b, const char *name, uint32_t binding, poot_kir_scalar s,
                        poot_kir_access access) {
  uint32_t ref;
  poot_kir_binding d = {name, binding, s, access, 16, false};
  POOT_ASSERT_OK(poot_kir_add_binding(b, &d, &ref));
  return ref;
}

static poot_kir_value u32c(poot_kir_builder *b, uint32_t v) {
  poot_kir_value out;
  POOT_ASSERT_OK(poot_kir_const_u32(b, v, &out));
  return out;
}

static poot_kir_value builtin(poot_kir_builder *b, poot_kir_builtin which) {
  poot_kir_value out;
  POOT_ASSERT_OK(poot_kir_builtin_get(b, which, 0, &out));
  return out;
}

static poot_kir_value bin(poot_kir_builder *b, poot_kir_op op, poot_kir_value x, poot_kir_value y) {
  poot_kir_value out;
  POOT_ASSERT_OK(poot_kir_binary(b, op, x, y, &out));
  return out;
}

/* ------------------------------------------------------------- verifier */

static void test_type_mismatch(void **state) {
  (void)state;
  poot_kir_builder *b = new_builder("mismatch", 32);
  poot_kir_value f, u, out;
  POOT_ASSERT_OK(poot_kir_const_f32(b, 1.0f, &f));
  u = u32c(b, 2);
  POOT_ASSERT_STATUS_MSG(poot_kir_binary(b, POOT_KIR_OP_ADD, f, u, &out), POOT_INVALID_ARGUMENT,
                         "kernel 'mismatch': statement #3 (add): type mismatch in add: f32 vs u32");
  assert_int_equal(out, 0);
  /* The builder refuses to finish after a failed call. */
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT,
                         "earlier builder call failed");
  assert_null(k);
}

static void test_other_rejections(void **state) {
  (void)state;
  poot_kir_value v, bf, out, c;
  /* bf16 is a storage type: no arithmetic on it. */
  poot_kir_builder *b = new_builder("no_bf16_math", 32);
  POOT_ASSERT_OK(poot_kir_const(b, POOT_KIR_BF16, 0x3f80, &bf));
  POOT_ASSERT_STATUS_MSG(poot_kir_binary(b, POOT_KIR_OP_MUL, bf, bf, &out), POOT_INVALID_ARGUMENT,
                         "mul is not defined on bf16");
  poot_kir_builder_destroy(b);

  /* Stores into a read-only binding. */
  b = new_builder("ro_store", 32);
  uint32_t ra = add_buf(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ);
  v = u32c(b, 0);
  POOT_ASSERT_STATUS_MSG(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ra, v, v), POOT_INVALID_ARGUMENT,
                         "binding 'a' is read-only");
  poot_kir_builder_destroy(b);

  /* A value defined in an if block is out of scope after it. */
  b = new_builder("scope", 32);
  POOT_ASSERT_OK(poot_kir_const_bool(b, true, &c));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  v = u32c(b, 7);
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_STATUS_MSG(poot_kir_binary(b, POOT_KIR_OP_ADD, v, v, &out), POOT_INVALID_ARGUMENT,
                         "not a value in scope");
  poot_kir_builder_destroy(b);

  /* Trap codes are 0..31; bool conditions only. */
  b = new_builder("trap_range", 32);
  POOT_ASSERT_OK(poot_kir_const_bool(b, true, &c));
  POOT_ASSERT_STATUS_MSG(poot_kir_check(b, c, 32), POOT_INVALID_ARGUMENT,
                         "trap code 32 out of range");
  poot_kir_builder_destroy(b);
  b = new_builder("bad_cond", 32);
  v = u32c(b, 1);
  POOT_ASSERT_STATUS_MSG(poot_kir_if_begin(b, v), POOT_INVALID_ARGUMENT, "condition must be bool");
  poot_kir_builder_destroy(b);

  /* A 4-lane load needs the binding's alignment. */
  b = new_builder("align", 32);
  poot_kir_binding d = {"x", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 4, false};
  uint32_t rx;
  POOT_ASSERT_OK(poot_kir_add_binding(b, &d, &rx));
  v = u32c(b, 0);
  POOT_ASSERT_STATUS_MSG(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, v, 4, &out),
                         POOT_INVALID_ARGUMENT, "needs 16-byte alignment");
  poot_kir_builder_destroy(b);

  /* Unclosed blocks, duplicate binding numbers, bad names. */
  b = new_builder("unclosed", 32);
  POOT_ASSERT_OK(poot_kir_const_bool(b, true, &c));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT, "still open");
  b = new_builder("dup", 32);
  add_buf(b, "a", 3, POOT_KIR_U32, POOT_KIR_ACCESS_READ);
  poot_kir_binding d2 = {"b", 3, POOT_KIR_U32, POOT_KIR_ACCESS_READ, 16, false};
  POOT_ASSERT_STATUS_MSG(poot_kir_add_binding(b, &d2, &rx), POOT_INVALID_ARGUMENT,
                         "binding number 3 used by 'a' and 'b'");
  poot_kir_builder_destroy(b);
  poot_kir_kernel_desc bad = {"9lives", {32, 1, 1}, 0};
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_create(&bad, &b), POOT_INVALID_ARGUMENT,
                         "not a C identifier");
}

static void test_barrier_divergent(void **state) {
  (void)state;
  /* if (local_id < 5) barrier — rejected at finish. */
  poot_kir_builder *b = new_builder("div_barrier", 64);
  poot_kir_value lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  poot_kir_value c = bin(b, POOT_KIR_OP_LT, lid, u32c(b, 5));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  POOT_ASSERT_OK(poot_kir_barrier(b));
  POOT_ASSERT_OK(poot_kir_end(b));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT,
                         "kernel 'div_barrier': statement #5 (barrier): barrier in non-uniform "
                         "control flow: the if at statement #4");
  /* The same under a workgroup-uniform condition is fine. */
  b = new_builder("uni_barrier", 64);
  poot_kir_value wg = builtin(b, POOT_KIR_BUILTIN_WORKGROUP_ID);
  c = bin(b, POOT_KIR_OP_LT, wg, u32c(b, 5));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  POOT_ASSERT_OK(poot_kir_barrier(b));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_kernel_destroy(k);
  /* Varying loop bounds make the body divergent. */
  b = new_builder("loop_barrier", 64);
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  poot_kir_value i;
  POOT_ASSERT_OK(poot_kir_for_begin(b, u32c(b, 0), lid, u32c(b, 1), &i));
  POOT_ASSERT_OK(poot_kir_barrier(b));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT,
                         "barrier in non-uniform control flow: the for");
  /* A private variable assigned a varying value makes a branch on it divergent. */
  b = new_builder("priv_barrier", 64);
  uint32_t var;
  POOT_ASSERT_OK(poot_kir_add_private(b, "v", poot_kir_type_make(POOT_KIR_U32, 1), 1, &var));
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  poot_kir_value x;
  POOT_ASSERT_OK(poot_kir_priv_load(b, var, 0, &x));
  c = bin(b, POOT_KIR_OP_EQ, x, u32c(b, 3));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  POOT_ASSERT_OK(poot_kir_barrier(b));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_priv_store(b, var, 0, lid));
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT,
                         "barrier in non-uniform control flow");
  /* Subgroup operations need at least subgroup-uniform control flow. */
  b = new_builder("div_shuffle", 64);
  lid = builtin(b, POOT_KIR_BUILTIN_SUBGROUP_LANE);
  c = bin(b, POOT_KIR_OP_LT, lid, u32c(b, 2));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  poot_kir_value s;
  POOT_ASSERT_OK(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, lid, &s));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_STATUS_MSG(poot_kir_builder_finish(b, &k), POOT_INVALID_ARGUMENT,
                         "subgroup operation in divergent control flow");
  /* …but a subgroup-uniform branch (on the subgroup id) is allowed for them. */
  b = new_builder("sg_uniform", 64);
  lid = builtin(b, POOT_KIR_BUILTIN_SUBGROUP_ID);
  c = bin(b, POOT_KIR_OP_EQ, lid, u32c(b, 0));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  POOT_ASSERT_OK(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, lid, &s));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_kernel_destroy(k);
}

static void test_target_limits(void **state) {
  (void)state;
  poot_kir_target sm80, web, vk;
  poot_device_target_init(POOT_DEVICE_TARGET_SM80, 0, &sm80);
  poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 0, &web);
  poot_device_target_init(POOT_DEVICE_TARGET_VULKAN, 32, &vk);
  /* Shared memory over the target's limit: 64 KiB is over sm_80's 48 KiB
   * of static shared memory but within its opt-in amount (163 KiB); a
   * target without the opt-in refuses it, and 256 KiB is over both. */
  poot_kir_builder *b = new_builder("big_shared", 64);
  uint32_t sh;
  POOT_ASSERT_OK(poot_kir_add_shared(b, "tile", POOT_KIR_F32, 16384, &sh));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_OK(poot_kir_verify(k, &sm80));
  poot_kir_target sm80_static = sm80;
  sm80_static.shared_memory_optin_bytes = 0;
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &sm80_static), POOT_UNSUPPORTED,
                         "kernel 'big_shared' for target sm_80: shared memory of 65536 bytes "
                         "exceeds the target's 49152 bytes");
  poot_kir_kernel_destroy(k);
  b = new_builder("big_shared", 64);
  POOT_ASSERT_OK(poot_kir_add_shared(b, "tile", POOT_KIR_F32, 65536, &sh));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &sm80), POOT_UNSUPPORTED,
                         "kernel 'big_shared' for target sm_80: shared memory of 262144 bytes "
                         "exceeds the target's 166912 bytes per workgroup, opt-in included");
  poot_kir_target interp;
  poot_kir_target_init_interp(&interp, 32);
  POOT_ASSERT_OK(poot_kir_verify(k, &interp));
  poot_kir_kernel_destroy(k);
  /* An atomic the target lacks. */
  b = new_builder("fmax", 64);
  uint32_t ra = add_buf(b, "a", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ_WRITE);
  poot_kir_value f, old;
  POOT_ASSERT_OK(poot_kir_const_f32(b, 1.0f, &f));
  POOT_ASSERT_OK(poot_kir_atomic_rmw(b, POOT_KIR_OP_ATOMIC_MAX, POOT_KIR_SPACE_GLOBAL, ra,
                                     u32c(b, 0), f, &old));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &sm80), POOT_UNSUPPORTED,
                         "the target has no atomic_max on f32");
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &vk), POOT_UNSUPPORTED, "atomic_max on f32");
  poot_kir_kernel_destroy(k);
  /* Types, subgroups and workgroup size on WebGPU. */
  const poot_kir_corpus_case *c = poot_kir_corpus_find("vadd_i8");
  assert_non_null(c);
  POOT_ASSERT_STATUS_MSG(c->build(c, &web, &k), POOT_UNSUPPORTED, "cannot store i8");
  c = poot_kir_corpus_find("reduce_sg_u32");
  POOT_ASSERT_STATUS_MSG(c->build(c, &web, &k), POOT_UNSUPPORTED, "no subgroup operations");
  c = poot_kir_corpus_find("vadd_f32");
  POOT_ASSERT_OK(c->build(c, &web, &k));
  poot_kir_kernel_destroy(k);
  poot_kir_kernel_desc d = {"wide", {512, 1, 1}, 0};
  POOT_ASSERT_OK(poot_kir_builder_create(&d, &b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_verify(k, &web), POOT_UNSUPPORTED,
                         "workgroup of 512 threads exceeds the target's 256");
  poot_kir_kernel_destroy(k);
}

/* ------------------------------------------------------- printer and hash */

static const char small_text[] =
    "kernel small workgroup(32, 1, 1) subgroup(0)\n"
    "  binding a: 0 f32 read align 16\n"
    "  binding out: 1 f32 write align 16\n"
    "  param n: u32 push\n"
    "  error_binding 2\n"
    "{\n"
    "  v1 = param u32 n\n"
    "  v2 = builtin u32 workgroup_id.x\n"
    "  v3 = builtin u32 local_size.x\n"
    "  v4 = builtin u32 local_id.x\n"
    "  v5 = mul u32 v2, v3\n"
    "  v6 = add u32 v5, v4\n"
    "  v7 = lt bool v6, v1\n"
    "  check v7, 3\n"
    "  if v7 {\n"
    "    v8 = load f32 global a[v6]\n"
    "    v9 = const f32 0x3fc00000\n"
    "    v10 = mul f32 v8, v9\n"
    "    store global out[v6], v10\n"
    "  }\n"
    "}\n";

static poot_kir_kernel *build_small(void) {
  poot_kir_builder *b = new_builder("small", 32);
  uint32_t ra = add_buf(b, "a", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ);
  uint32_t ro = add_buf(b, "out", 1, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE);
  uint32_t pi;
  poot_kir_param p = {"n", POOT_KIR_U32, POOT_KIR_PARAM_PUSH, 0, 0};
  POOT_ASSERT_OK(poot_kir_add_param(b, &p, &pi));
  poot_kir_value n, gid, c, x, h, y;
  POOT_ASSERT_OK(poot_kir_param_get(b, pi, &n));
  POOT_ASSERT_OK(poot_kir_global_id(b, 0, &gid));
  c = bin(b, POOT_KIR_OP_LT, gid, n);
  POOT_ASSERT_OK(poot_kir_check(b, c, 3));
  POOT_ASSERT_OK(poot_kir_if_begin(b, c));
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, gid, 1, &x));
  POOT_ASSERT_OK(poot_kir_const_f32(b, 1.5f, &h));
  y = bin(b, POOT_KIR_OP_MUL, x, h);
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, y));
  POOT_ASSERT_OK(poot_kir_end(b));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  return k;
}

static void test_printer_and_hash(void **state) {
  (void)state;
  poot_kir_kernel *k1 = build_small(), *k2 = build_small();
  poot_strbuf s1, s2;
  poot_strbuf_init(&s1);
  poot_strbuf_init(&s2);
  poot_kir_print(k1, &s1);
  poot_kir_print(k2, &s2);
  assert_string_equal(s1.data, small_text);
  assert_string_equal(s1.data, s2.data);
  assert_true(k1->has_checks);
  assert_int_equal(k1->error_binding, 2);
  assert_int_equal(k1->param_binding, 3);
  assert_int_equal(k1->inst_count, 13);
  /* The hash is a function of the text only: the same on every run and
   * machine (poot_hash64 is stable), and it equals this golden value. */
  assert_int_equal(k1->hash, k2->hash);
  assert_int_equal(k1->hash, poot_hash64(small_text, strlen(small_text), 0x6b69722d68617368ull));
  poot_kir_target a, b;
  poot_device_target_init(POOT_DEVICE_TARGET_SM80, 0, &a);
  poot_device_target_init(POOT_DEVICE_TARGET_SM90, 0, &b);
  assert_false(poot_hash128_equal(poot_kir_cache_key(k1, &a), poot_kir_cache_key(k1, &b)));
  assert_true(poot_hash128_equal(poot_kir_cache_key(k1, &a), poot_kir_cache_key(k2, &a)));
  assert_true(poot_kir_kernel_same(k1, k2));
  assert_true(poot_hash128_equal(k1->hash128, poot_hash128_of(small_text, strlen(small_text))));
  assert_int_equal(k1->text_len, strlen(small_text));
  assert_memory_equal(k1->text, small_text, k1->text_len);
  /* Every corpus kernel prints identically twice and hashes distinctly. */
  size_t n;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  uint64_t *hashes = poot_calloc(n, sizeof(uint64_t));
  assert_non_null(hashes);
  for (size_t i = 0; i < n; i++) {
    poot_kir_kernel *x = NULL, *y = NULL;
    POOT_ASSERT_OK(cases[i].build(&cases[i], NULL, &x));
    POOT_ASSERT_OK(cases[i].build(&cases[i], NULL, &y));
    poot_strbuf_clear(&s1);
    poot_strbuf_clear(&s2);
    poot_kir_print(x, &s1);
    poot_kir_print(y, &s2);
    assert_string_equal(s1.data, s2.data);
    assert_int_equal(x->hash, y->hash);
    hashes[i] = x->hash;
    for (size_t j = 0; j < i; j++) assert_int_not_equal(hashes[j], hashes[i]);
    poot_kir_kernel_destroy(x);
    poot_kir_kernel_destroy(y);
  }
  poot_free(hashes);
  poot_strbuf_deinit(&s1);
  poot_strbuf_deinit(&s2);
  poot_kir_kernel_destroy(k1);
  poot_kir_kernel_destroy(k2);
}

static void test_targets(void **state) {
  (void)state;
  static const char *names[] = {
      "interp",       "interp-sg8", "sm_80",       "sm_90",  "vulkan", "vulkan-sg32", "lavapipe",
      "lavapipe-sg4", "webgpu",     "webgpu-sg32", "gfx90a", "gfx942", "gfx1100"};
  uint64_t h[sizeof names / sizeof names[0]];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    poot_kir_target t;
    POOT_ASSERT_OK(poot_device_target_by_name(names[i], &t));
    h[i] = poot_kir_target_hash(&t);
    for (size_t j = 0; j < i; j++) assert_int_not_equal(h[i], h[j]);
    assert_true(t.max_vector_lanes == 4);
  }
  poot_kir_target t;
  POOT_ASSERT_STATUS_MSG(poot_device_target_by_name("sm_70", &t), POOT_NOT_FOUND, "known: interp");
  POOT_ASSERT_STATUS(poot_device_target_by_name("vulkan-sg3", &t), POOT_NOT_FOUND);
  poot_device_target_init(POOT_DEVICE_TARGET_GFX1100, 0, &t);
  assert_int_equal(t.subgroup_size, 32);
  assert_string_equal(t.amdgpu_arch, "gfx1100");
  assert_true(t.has_trap);
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 8, &t);
  assert_false(t.has_trap);
  assert_int_equal(t.lang, POOT_KIR_LANG_GLSL);
}

/* The device catalogue: every entry field for field as it was when KIR held
 * it (the hashes below were taken from the KIR constructors before the
 * move; the four GLSL ones since GLSL's default gemv_block_words of 48,
 * gfx90a's since its dot4_native, which changes its rendering),
 * each id and its name agree, and an id past the catalogue gives a target
 * nothing verifies against. */
static void test_catalogue(void **state) {
  (void)state;
  static const struct {
    const char *name;
    poot_device_target_id id;
    uint32_t sg;
    uint64_t hash;
  } want[] = {
      {"interp", POOT_DEVICE_TARGET_INTERP, 32, 0x3f443fd847f47674ull},
      {"interp-sg8", POOT_DEVICE_TARGET_INTERP, 8, 0x1fa1101afb367572ull},
      {"sm_80", POOT_DEVICE_TARGET_SM80, 0, 0xa5bee1db580a5d01ull},
      {"sm_90", POOT_DEVICE_TARGET_SM90, 0, 0xe3ac4cfa36dbffddull},
      {"vulkan", POOT_DEVICE_TARGET_VULKAN, 0, 0x33124b8c1d1dd8fbull},
      {"vulkan-sg32", POOT_DEVICE_TARGET_VULKAN, 32, 0xee256b942640bf66ull},
      {"lavapipe", POOT_DEVICE_TARGET_LAVAPIPE, 8, 0xe08c9e89027c85b8ull},
      {"lavapipe-sg4", POOT_DEVICE_TARGET_LAVAPIPE, 4, 0x67b70f5715287ba4ull},
      {"webgpu", POOT_DEVICE_TARGET_WEBGPU, 0, 0x6eca0659883b44f9ull},
      {"webgpu-sg32", POOT_DEVICE_TARGET_WEBGPU, 32, 0xd014782f6063633full},
      {"gfx90a", POOT_DEVICE_TARGET_GFX90A, 0, 0xa9b4ed409b6fab4full}, /* since dot4_native */
      {"gfx942", POOT_DEVICE_TARGET_GFX942, 0, 0x351a10dac10e07a1ull},
      {"gfx1100", POOT_DEVICE_TARGET_GFX1100, 0, 0xa66f533975b91d1full},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    poot_kir_target by_name, by_id;
    POOT_ASSERT_OK(poot_device_target_by_name(want[i].name, &by_name));
    poot_device_target_init(want[i].id, want[i].sg, &by_id);
    assert_true(poot_kir_target_hash(&by_name) == want[i].hash);
    assert_true(poot_kir_target_hash(&by_id) == want[i].hash);
    assert_string_equal(by_name.name, by_id.name);
  }
  poot_kir_target t;
  poot_device_target_init(POOT_DEVICE_TARGET_LAVAPIPE, 0, &t);
  assert_true(poot_kir_target_hash(&t) == 0x29f28cb984490f4full);
  assert_false(t.subgroup_ops);
  poot_device_target_init(POOT_DEVICE_TARGET_COUNT, 0, &t);
  assert_int_equal(t.max_workgroup_size, 0);
  assert_int_equal(t.lang, POOT_KIR_LANG_NONE);
  /* A language's defaults are what the catalogue's entries build on. */
  poot_kir_target_init(&t, POOT_KIR_LANG_PTX, 32);
  assert_int_equal(t.ptx_version, 78);
  assert_true(t.has_trap);
  assert_int_equal(t.watchdog_ms, 0);
  poot_kir_target_init(&t, POOT_KIR_LANG_GLSL, 0);
  assert_false(t.has_trap);
  assert_int_equal(t.vulkan_version, 12);
}

/* ----------------------------------------------------------- interpreter */

typedef struct fixture {
  poot_kir_kernel *k;
  uint32_t a[64], out[64];
  poot_kir_buffer bufs[2];
  poot_kir_interp_options o;
} fixture;

static void fx_init(fixture *f, poot_kir_kernel *k, size_t a_elems, size_t out_elems) {
  memset(f, 0, sizeof *f);
  f->k = k;
  for (uint32_t i = 0; i < 64; i++) f->a[i] = i;
  f->bufs[0] = (poot_kir_buffer){f->a, a_elems * 4};
  f->bufs[1] = (poot_kir_buffer){f->out, out_elems * 4};
  f->o.grid[0] = 1;
  f->o.subgroup_size = 8;
  f->o.buffers = f->bufs;
  f->o.buffer_count = 2;
}

/* out[lid * mul + add] = a[lid] (unguarded), and optionally a check. */
static poot_kir_kernel *build_copy(const char *name, uint32_t mul, uint32_t add, uint32_t lanes,
                                   int check_trap, uint32_t wg) {
  poot_kir_builder *b = new_builder(name, wg);
  uint32_t ra = add_buf(b, "a", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ);
  uint32_t ro = add_buf(b, "out", 1, POOT_KIR_U32, POOT_KIR_ACCESS_WRITE);
  poot_kir_value lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  poot_kir_value idx =
      bin(b, POOT_KIR_OP_ADD, bin(b, POOT_KIR_OP_MUL, lid, u32c(b, mul)), u32c(b, add));
  poot_kir_value x;
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ra, lid, 1, &x));
  if (check_trap >= 0) {
    poot_kir_value ok = bin(b, POOT_KIR_OP_NE, x, u32c(b, 5));
    POOT_ASSERT_OK(poot_kir_check(b, ok, (uint32_t)check_trap));
  }
  if (lanes > 1) POOT_ASSERT_OK(poot_kir_splat(b, lanes, x, &x));
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, idx, x));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  return k;
}

static void test_interp_faults(void **state) {
  (void)state;
  fixture f;
  /* Out of range: 16 threads write out[lid + 60] into 64 elements. */
  fx_init(&f, build_copy("oob", 1, 60, 1, -1, 16), 64, 64);
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT,
                         "kernel 'oob': out-of-range access: element 64 (+1 lanes) of binding "
                         "'out' with 64 elements at statement #");
  assert_int_equal(f.out[63], 3); /* threads before the fault did their writes */
  poot_kir_kernel_destroy(f.k);
  /* Reading past a short buffer. */
  fx_init(&f, build_copy("short", 1, 0, 1, -1, 16), 10, 64);
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT,
                         "element 10 (+1 lanes) of binding 'a' with 10 elements");
  poot_kir_kernel_destroy(f.k);
  /* Misaligned vector store: out[lid*2 + 1] with 2 lanes. */
  fx_init(&f, build_copy("misaligned", 2, 1, 2, -1, 8), 64, 64);
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT,
                         "misaligned 2-lane access at element 1 of 'out'");
  poot_kir_kernel_destroy(f.k);
  /* A failed check: KERNEL_FAULT naming kernel and trap code, or the error-word bit. */
  fx_init(&f, build_copy("checked", 1, 0, 1, 5, 16), 64, 64);
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_KERNEL_FAULT,
                         "kernel 'checked': check failed with trap code 5 at statement");
  uint32_t err = 0;
  f.o.error_word = &err;
  POOT_ASSERT_OK(poot_kir_interp_run(f.k, &f.o));
  assert_int_equal(err, 1u << 5);
  assert_int_equal(f.out[15], 15);
  poot_kir_kernel_destroy(f.k);
  /* Bad options. */
  fx_init(&f, build_copy("opts", 1, 0, 1, -1, 16), 64, 64);
  f.o.buffer_count = 1;
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT,
                         "has 2 bindings, 1 buffers given");
  f.o.buffer_count = 2;
  f.o.subgroup_size = 6;
  POOT_ASSERT_STATUS(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT);
  f.o.subgroup_size = 8;
  f.bufs[1].size = 7;
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(f.k, &f.o), POOT_INVALID_ARGUMENT,
                         "not a whole number of u32 elements");
  poot_kir_kernel_destroy(f.k);
}

static void test_interp_undefined(void **state) {
  (void)state;
  poot_kir_kernel *k = NULL;
  poot_kir_interp_options o = {.grid = {1, 1, 1}, .subgroup_size = 8};
  /* Integer division by zero. */
  poot_kir_builder *b = new_builder("divzero", 8);
  poot_kir_value lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  bin(b, POOT_KIR_OP_DIV, u32c(b, 10), lid);
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "integer division by zero");
  poot_kir_kernel_destroy(k);
  /* A shift by the bit width. */
  b = new_builder("bigshift", 8);
  bin(b, POOT_KIR_OP_SHL, u32c(b, 1), u32c(b, 32));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT, "shift amount");
  poot_kir_kernel_destroy(k);
  /* Reading shared memory nobody wrote, and out of its range. */
  b = new_builder("uninit", 8);
  uint32_t sh;
  POOT_ASSERT_OK(poot_kir_add_shared(b, "s", POOT_KIR_U32, 8, &sh));
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  poot_kir_value x;
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, lid, 1, &x));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "read of shared 's' element 0 that no thread has written");
  poot_kir_kernel_destroy(k);
  b = new_builder("shared_oob", 16);
  POOT_ASSERT_OK(poot_kir_add_shared(b, "s", POOT_KIR_U32, 8, &sh));
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, lid, lid));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "element 8 (+1 lanes) of shared 's' with 8 elements");
  poot_kir_kernel_destroy(k);
  /* A race: thread t reads s[t+1] written by thread t+1 without a barrier. */
  b = new_builder("race", 8);
  POOT_ASSERT_OK(poot_kir_add_shared(b, "s", POOT_KIR_U32, 9, &sh));
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  POOT_ASSERT_OK(
      poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, bin(b, POOT_KIR_OP_ADD, lid, u32c(b, 1)), lid));
  POOT_ASSERT_OK(
      poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, bin(b, POOT_KIR_OP_ADD, lid, u32c(b, 1)), 1, &x));
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, lid, 1, &x));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "no thread has written");
  o.no_race_check = true; /* with checks off the run completes */
  POOT_ASSERT_OK(poot_kir_interp_run(k, &o));
  o.no_race_check = false;
  poot_kir_kernel_destroy(k);
  b = new_builder("race2", 8);
  POOT_ASSERT_OK(poot_kir_add_shared(b, "s", POOT_KIR_U32, 9, &sh));
  lid = builtin(b, POOT_KIR_BUILTIN_LOCAL_INDEX);
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_SHARED, sh, lid, lid));
  POOT_ASSERT_OK(
      poot_kir_load(b, POOT_KIR_SPACE_SHARED, sh, bin(b, POOT_KIR_OP_XOR, lid, u32c(b, 1)), 1, &x));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "shared-memory race: 's' element 1 was written by thread 1");
  poot_kir_kernel_destroy(k);
  /* A runaway loop is stopped by max_steps. */
  b = new_builder("spin", 8);
  poot_kir_value i;
  POOT_ASSERT_OK(poot_kir_for_begin(b, u32c(b, 0), u32c(b, 4000000000u), u32c(b, 1), &i));
  bin(b, POOT_KIR_OP_ADD, i, i);
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  o.max_steps = 10000;
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_TIMEOUT, "more than 10000 statements");
  o.max_steps = 0;
  poot_kir_kernel_destroy(k);
  /* A zero step. */
  b = new_builder("step0", 8);
  lid = builtin(b, POOT_KIR_BUILTIN_WORKGROUP_ID);
  POOT_ASSERT_OK(poot_kir_for_begin(b, u32c(b, 0), u32c(b, 5), lid, &i));
  POOT_ASSERT_OK(poot_kir_end(b));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "for step 0 is not positive");
  poot_kir_kernel_destroy(k);
  /* A shuffle from a lane outside the subgroup. */
  b = new_builder("badlane", 8);
  lid = builtin(b, POOT_KIR_BUILTIN_SUBGROUP_LANE);
  POOT_ASSERT_OK(poot_kir_subgroup_shuffle(b, lid, bin(b, POOT_KIR_OP_ADD, lid, u32c(b, 4)), &x));
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  POOT_ASSERT_STATUS_MSG(poot_kir_interp_run(k, &o), POOT_INVALID_ARGUMENT,
                         "subgroup lane 8 does not exist");
  poot_kir_kernel_destroy(k);
}

/* Every allocation failure while building and running the GEMV surfaces as
 * OUT_OF_MEMORY, never a crash or leak (checked under ASan). */
static poot_status try_build(void *ctx) {
  const poot_kir_corpus_case *c = ctx;
  poot_kir_kernel *k = NULL;
  poot_status st = c->build(c, NULL, &k);
  if (st) assert_null(k);
  poot_kir_kernel_destroy(k);
  return st;
}

static void test_out_of_memory(void **state) {
  (void)state;
  const poot_kir_corpus_case *c = poot_kir_corpus_find("gemv_tiled_f32");
  assert_non_null(c);
  assert_true(poot_test_oom_sweep("build gemv", try_build, (void *)c, 2000) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_type_mismatch),     cmocka_unit_test(test_other_rejections),
      cmocka_unit_test(test_barrier_divergent), cmocka_unit_test(test_target_limits),
      cmocka_unit_test(test_printer_and_hash),  cmocka_unit_test(test_targets),
      cmocka_unit_test(test_catalogue),         cmocka_unit_test(test_interp_faults),
      cmocka_unit_test(test_interp_undefined),  cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
