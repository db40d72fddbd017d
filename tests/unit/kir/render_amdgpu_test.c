/* Tests of KIR's AMDGPU renderer (LLVM IR for amdgcn-amd-amdhsa).
 *
 *   kir_render_amdgpu      every corpus and ops kernel renders for gfx90a,
 *                          gfx942 and gfx1100; output is deterministic;
 *                          salient instructions are where they must be
 *   kir_render_amdgpu_llc  (argument "llc") every rendering compiles with
 *                          `llc-19 -mcpu=<gfx> -filetype=obj` and links with
 *                          `ld.lld-19 -shared` into a code object (an AMDGPU
 *                          ELF); the GEMV's machine code has 16-byte loads,
 *                          the reductions ds_bpermute, the checks s_trap,
 *                          private arrays no scratch memory;
 *                          SKIP without the LLVM 19 tools on PATH */
#include <stdlib.h>

#include "poot/devices.h"
#include "poot_test.h"
#include "render_ptx_amdgpu_util.h"

static const char *const gfx_targets[] = {"gfx90a", "gfx942", "gfx1100"};

static void target_of(const char *name, poot_kir_target *t) {
  POOT_ASSERT_OK(poot_device_target_by_name(name, t));
}

static char *render_named(const char *name, const char *target_name) {
  poot_kir_target t;
  target_of(target_name, &t);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named(name, &t, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_amdgpu(k, &t, &sb));
  poot_kir_kernel_destroy(k);
  return poot_strbuf_take(&sb);
}

static void expect_has(const char *text, const char *needle, const char *what) {
  if (!strstr(text, needle)) fail_msg("%s: expected '%s' in the output", what, needle);
}
static void expect_lacks(const char *text, const char *needle, const char *what) {
  if (strstr(text, needle)) fail_msg("%s: did not expect '%s' in the output", what, needle);
}

/* True when some line holds both `a` and, at its end, `tail`. */
static bool line_has(const char *text, const char *a, const char *tail) {
  size_t tl = strlen(tail);
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    const char *hit = strstr(line, a);
    if (hit && hit < line + n && n >= tl && memcmp(line + n - tl, tail, tl) == 0) return true;
    line = end ? end + 1 : NULL;
  }
  return false;
}

/* ------------------------------------------------- render everything */

typedef struct walk_ctx {
  const poot_kir_target *t;
  size_t count;
} walk_ctx;

static poot_status check_module(void *vctx, const char *name, const poot_kir_kernel *k,
                                const char *text, size_t len) {
  walk_ctx *w = vctx;
  char want[160];
  if (len == 0 || !strstr(text, "target triple = \"amdgcn-amd-amdhsa\"\n") ||
      !strstr(text, "target datalayout = \"e-p:64:64-p1:64:64"))
    return poot_status_make(POOT_INTERNAL, "%s: no amdgcn triple or datalayout", name);
  snprintf(want, sizeof want, "define amdgpu_kernel void @%s(", k->name);
  if (!strstr(text, want)) return poot_status_make(POOT_INTERNAL, "%s: no '%s'", name, want);
  snprintf(want, sizeof want, "\"target-cpu\"=\"%s\"", w->t->amdgpu_arch);
  if (!strstr(text, want)) return poot_status_make(POOT_INTERNAL, "%s: no '%s'", name, want);
  if (!strstr(text, "!\"amdhsa_code_object_version\", i32 500"))
    return poot_status_make(POOT_INTERNAL, "%s: code object version not pinned", name);
  if (k->has_checks && (!strstr(text, "call void @llvm.trap()") || !strstr(text, "%fault_record")))
    return poot_status_make(POOT_INTERNAL, "%s: checks without trap", name);
  if (!k->has_checks && strstr(text, "llvm.trap"))
    return poot_status_make(POOT_INTERNAL, "%s: a trap without checks", name);
  w->count++;
  return NULL;
}

static void test_render_all(void **state) {
  (void)state;
  for (int i = 0; i < 3; i++) {
    poot_kir_target t;
    target_of(gfx_targets[i], &t);
    walk_ctx w = {&t, 0};
    render_walk_stats stats;
    POOT_ASSERT_OK(render_walk(&t, poot_kir_render_amdgpu, check_module, &w, &stats));
    assert_true(stats.rendered >= 4);
    assert_int_equal(stats.rendered, w.count);
    assert_int_equal(stats.skipped, 0);
    printf("%s: %zu kernels rendered\n", gfx_targets[i], stats.rendered);
  }
}

/* ---------------------------------------------------- determinism */

static poot_status check_deterministic(void *vctx, const char *name, const poot_kir_kernel *k,
                                       const char *text, size_t len) {
  walk_ctx *w = vctx;
  poot_strbuf a, b;
  poot_strbuf_init(&a);
  poot_strbuf_init(&b);
  poot_status st = poot_kir_render_amdgpu(k, w->t, &a);
  poot_kir_kernel *k2 = NULL;
  if (!st) st = render_build_named(name, w->t, &k2);
  if (!st) st = poot_kir_render_amdgpu(k2, w->t, &b);
  if (!st && (a.len != len || memcmp(a.data, text, len) != 0))
    st = poot_status_make(POOT_INTERNAL, "%s: two renders of one kernel differ", name);
  if (!st && (b.len != len || memcmp(b.data, text, len) != 0))
    st = poot_status_make(POOT_INTERNAL, "%s: a rebuilt kernel renders differently", name);
  poot_kir_kernel_destroy(k2);
  poot_strbuf_deinit(&a);
  poot_strbuf_deinit(&b);
  if (!st) w->count++;
  return st;
}

static void test_deterministic(void **state) {
  (void)state;
  for (int i = 0; i < 3; i++) {
    poot_kir_target t;
    target_of(gfx_targets[i], &t);
    walk_ctx w = {&t, 0};
    POOT_ASSERT_OK(render_walk(&t, poot_kir_render_amdgpu, check_deterministic, &w, NULL));
    assert_true(w.count >= 4);
  }
}

/* --------------------------------------------------------- golden */

static void test_golden_gemv(void **state) {
  (void)state;
  char *p = render_named("gemv_tiled_f32", "gfx942");
  expect_has(p, "load <4 x float>, ptr addrspace(1)", "gemv: 16-byte loads");
  expect_has(p, "ptr addrspace(1) readonly align", "gemv: read-only matrix");
  expect_has(p, "internal addrspace(3) global", "gemv: the x tile in LDS");
  expect_has(p, "call void @llvm.amdgcn.s.barrier()", "gemv: barriers");
  expect_has(p, "fence syncscope(\"workgroup\") release", "gemv: barrier fences");
  expect_has(p, "@llvm.fma.f32", "gemv");
  expect_has(p, "!reqd_work_group_size", "gemv: fixed workgroup size");
  expect_lacks(p, "wavefrontsize", "gemv on gfx942 is wave64 by default");
  poot_free(p);
}

static void test_golden_waves(void **state) {
  (void)state;
  char *p = render_named("reduce_sg_f32", "gfx90a");
  expect_has(p, "@llvm.amdgcn.ds.bpermute", "wave reduce");
  expect_has(p, "@llvm.amdgcn.mbcnt.hi", "wave64 lane id");
  if (!line_has(p, "xor i32", ", 32")) fail_msg("wave64: no butterfly distance 32");
  poot_free(p);
  p = render_named("reduce_sg_f32", "gfx1100");
  expect_has(p, "\"target-features\"=\"+wavefrontsize32\"", "gfx1100 is wave32");
  expect_lacks(p, "@llvm.amdgcn.mbcnt.hi", "wave32 lane id");
  if (line_has(p, "xor i32", ", 32")) fail_msg("wave32: a butterfly distance of 32");
  if (!line_has(p, "xor i32", ", 16")) fail_msg("wave32: no butterfly distance 16");
  poot_free(p);
  /* A gfx1100 target asked to run wave64 says so to the compiler. */
  poot_kir_target t;
  target_of("gfx1100", &t);
  t.subgroup_size = t.subgroup_size_min = t.subgroup_size_max = 64;
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named("reduce_sg_u32", &t, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_amdgpu(k, &t, &sb));
  expect_has(sb.data, "\"target-features\"=\"+wavefrontsize64\"", "gfx1100 wave64");
  poot_strbuf_deinit(&sb);
  poot_kir_kernel_destroy(k);
  p = render_named("ops_sync", "gfx942");
  static const char *const need[] = {
      "atomicrmw fadd ptr addrspace(1)", "atomicrmw add ptr addrspace(3)",
      "atomicrmw umax ptr addrspace(1)", "atomicrmw min ptr addrspace(1)",
      "atomicrmw xchg ptr addrspace(1)", "cmpxchg ptr addrspace(1)",
      "cmpxchg ptr addrspace(3)",        "@llvm.amdgcn.readlane",
      "@llvm.amdgcn.dispatch.ptr",       "syncscope(\"agent\") monotonic"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) expect_has(p, need[i], "ops_sync");
  poot_free(p);
}

static void test_golden_checks(void **state) {
  (void)state;
  char *p = render_named("scatter_checked", "gfx942");
  expect_has(p, "ptr addrspace(1) align 16 %fault_record)", "fault record is the last argument");
  expect_has(p, "label %fault", "check branches to the fault block");
  expect_has(p, "atomicrmw or ptr addrspace(1) %fault_record", "error-word bit");
  expect_has(p, "cmpxchg ptr addrspace(1) %st, i32 0, i32 1", "record claimed once");
  expect_has(p, "fence seq_cst", "system-scope fence");
  expect_has(p, "store atomic i32 2, ptr addrspace(1) %st release", "release store of the state");
  expect_has(p, "call void @llvm.trap()", "a real trap");
  poot_free(p);
}

static void test_golden_math_and_conversions(void **state) {
  (void)state;
  char *p = render_named("ops_math", "gfx90a");
  static const char *const need[] = {"@llvm.exp.f32",
                                     "@llvm.exp2.f32",
                                     "@llvm.log.f32",
                                     "@llvm.log2.f32",
                                     "@llvm.sqrt.f32",
                                     "@llvm.amdgcn.rsq.f32",
                                     "@poot.sin",
                                     "@poot.cos",
                                     "@poot.tanh",
                                     "@poot.erf",
                                     "@poot.pow",
                                     "@llvm.floor.f32",
                                     "@llvm.ceil.f32",
                                     "fdiv float",
                                     "fptrunc float",
                                     "fpext half",
                                     "define internal float @poot.tanh(float %x) #1",
                                     "alwaysinline"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) expect_has(p, need[i], "ops_math");
  poot_free(p);
  p = render_named("ops_convert", "gfx942");
  static const char *const cv[] = {"fptrunc float",
                                   "to bfloat",
                                   "@llvm.fptosi.sat.i32.f32",
                                   "@llvm.fptoui.sat.i8.f32",
                                   "sitofp i64",
                                   "uitofp i32",
                                   "sext i32",
                                   "zext i8",
                                   "trunc i64",
                                   "bitcast <4 x bfloat>"};
  for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++) expect_has(p, cv[i], "ops_convert");
  poot_free(p);
}

/* A subgroup reduction in a workgroup of `threads` threads. */
static poot_kir_kernel *partial_kernel(uint32_t threads) {
  poot_kir_kernel_desc desc = {"partial_sg", {threads, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&desc, &b));
  poot_kir_binding bd = {"v", 0, POOT_KIR_U32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
  uint32_t ref;
  poot_kir_value gid, x, r;
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bd, &ref));
  POOT_ASSERT_OK(poot_kir_global_id(b, 0, &gid));
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, ref, gid, 1, &x));
  POOT_ASSERT_OK(poot_kir_subgroup_reduce(b, POOT_KIR_OP_SG_REDUCE_ADD, x, &r));
  POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ref, gid, r));
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  return k;
}

/* Subgroup operations need whole subgroups: a workgroup of 48 threads has
 * a partial one, which the renderer refuses rather than run wrongly. */
static void test_partial_subgroup(void **state) {
  (void)state;
  poot_kir_target t;
  target_of("gfx1100", &t);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_kir_kernel *k = partial_kernel(48);
  POOT_ASSERT_STATUS_MSG(poot_kir_render_amdgpu(k, &t, &sb), POOT_UNSUPPORTED, "48 threads");
  poot_kir_kernel_destroy(k);
  k = partial_kernel(64);
  POOT_ASSERT_OK(poot_kir_render_amdgpu(k, &t, &sb));
  poot_kir_kernel_destroy(k);
  poot_strbuf_deinit(&sb);
}

typedef struct render_ctx {
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  const poot_strbuf *good; /* the text of a render with no failure */
} render_ctx;

static poot_status try_render(void *ctx) {
  const render_ctx *r = ctx;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot_kir_render_amdgpu(r->k, r->t, &sb);
  if (!st) {
    assert_int_equal(sb.len, r->good->len);
    assert_memory_equal(sb.data, r->good->data, r->good->len);
  }
  poot_strbuf_deinit(&sb);
  return st;
}

/* Every allocation the renderer makes may fail: it must then return
 * OUT_OF_MEMORY (never crash, never leak, never return broken text as OK),
 * and the text of a later successful render is unchanged. */
static void test_out_of_memory(void **state) {
  (void)state;
  static const char *const names[] = {"ops_control", "ops_sync", "gemv_tiled_f32",
                                      "scatter_checked"};
  poot_kir_target t;
  target_of("gfx942", &t);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(render_build_named(names[i], &t, &k));
    poot_strbuf good;
    poot_strbuf_init(&good);
    POOT_ASSERT_OK(poot_kir_render_amdgpu(k, &t, &good));
    render_ctx r = {k, &t, &good};
    assert_true(poot_test_oom_sweep(names[i], try_render, &r, 100000) > 0);
    poot_strbuf_deinit(&good);
    poot_kir_kernel_destroy(k);
  }
}

static void test_wrong_target(void **state) {
  (void)state;
  poot_kir_target t, ptx;
  target_of("gfx942", &t);
  target_of("sm_90", &ptx);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named("vadd_f32", &t, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_STATUS(poot_kir_render_amdgpu(k, &ptx, &sb), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_kir_render_amdgpu(k, NULL, &sb), POOT_INVALID_ARGUMENT);
  poot_strbuf_deinit(&sb);
  poot_kir_kernel_destroy(k);
}

/* -------------------------------------------------------------- llc */

/* Renderings are written first, then llc and ld.lld run over them in parallel. */
typedef struct llc_ctx {
  const poot_kir_target *t;
  const char *dir;
  FILE *list;
  size_t written;
} llc_ctx;

/* True when the file is a 64-bit little-endian ELF shared object for AMDGPU
 * (e_machine 224), which is what a code object is. */
static bool is_amdgpu_code_object(const char *path) {
  unsigned char h[20];
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  size_t n = fread(h, 1, sizeof h, f);
  fclose(f);
  return n == sizeof h && memcmp(h, "\177ELF", 4) == 0 && h[4] == 2 && h[5] == 1 &&
         h[16] == 3 /* ET_DYN */ && h[18] == 224;
}

static poot_status write_ll(void *vctx, const char *name, const poot_kir_kernel *k,
                            const char *text, size_t len) {
  (void)k;
  llc_ctx *p = vctx;
  const char *g = p->t->amdgpu_arch;
  char ll[300];
  snprintf(ll, sizeof ll, "%s_%s.ll", name, g);
  if (!render_write_file(p->dir, ll, text, len))
    return poot_status_make(POOT_IO, "cannot write %s/%s", p->dir, ll);
  fprintf(p->list, "%s_%s %s\n", name, g, g);
  p->written++;
  return NULL;
}

/* The machine code of one kernel must contain `needle`. */
static int asm_has(const char *llc, const char *dir, const char *kernel, const char *gfx,
                   const char *needle) {
  int rc = poot_test_system(
      "cd '%s' && '%s' -O2 -mtriple=amdgcn-amd-amdhsa -mcpu=%s %s_%s.ll -o %s_%s.s && "
      "grep -q -- '%s' %s_%s.s",
      dir, llc, gfx, kernel, gfx, kernel, gfx, needle, kernel, gfx);
  if (rc != 0) printf("FAIL: %s on %s: no '%s' in the machine code\n", kernel, gfx, needle);
  return rc != 0;
}

static int main_llc(void) {
  char llc[1024], lld[1024];
  if (!render_find_tool("llc-19", llc, sizeof llc) && !render_find_tool("llc", llc, sizeof llc))
    return poot_test_skip("llc-19 (Debian llvm-19) is not on PATH");
  if (!render_find_tool("ld.lld-19", lld, sizeof lld) &&
      !render_find_tool("ld.lld", lld, sizeof lld))
    return poot_test_skip("ld.lld-19 (Debian lld-19) is not on PATH");
  const char *dir = poot_test_tmpdir();
  char list_path[1024];
  snprintf(list_path, sizeof list_path, "%s/list", dir);
  FILE *list = fopen(list_path, "w");
  if (!list) return 1;
  size_t written = 0;
  for (int i = 0; i < 3; i++) {
    poot_kir_target t;
    poot_status st = poot_device_target_by_name(gfx_targets[i], &t);
    llc_ctx p = {&t, dir, list, 0};
    if (!st) st = render_walk(&t, poot_kir_render_amdgpu, write_ll, &p, NULL);
    if (st) {
      printf("FAIL: %s\n", poot_status_message(st));
      poot_status_free(st);
      fclose(list);
      return 1;
    }
    written += p.written;
  }
  fclose(list);
  /* Each job compiles NAME.ll to NAME.o, links NAME.co, and leaves NAME.ok. */
  (void)poot_test_system(
      "cd '%s' && xargs -P \"$(nproc)\" -L 1 sh -c '\"$0\" -O2 -mtriple=amdgcn-amd-amdhsa "
      "-mcpu=$2 -filetype=obj $1.ll -o $1.o > $1.log 2>&1 && \"%s\" -shared $1.o -o $1.co "
      ">> $1.log 2>&1 && touch $1.ok' '%s' < list",
      dir, lld, llc);
  size_t ok = 0, failed = 0;
  list = fopen(list_path, "r");
  char file[300], gfx[32];
  while (list && fscanf(list, "%299s %31s", file, gfx) == 2) {
    char okf[1400], co[1400];
    snprintf(okf, sizeof okf, "%s/%s.ok", dir, file);
    snprintf(co, sizeof co, "%s/%s.co", dir, file);
    FILE *f = fopen(okf, "r");
    if (f) fclose(f);
    if (f && is_amdgpu_code_object(co)) {
      ok++;
    } else {
      failed++;
      printf("FAIL: llc/ld.lld for %s rejected %s:\n", gfx, file);
      (void)poot_test_system("head -20 '%s/%s.log'", dir, file);
    }
  }
  if (list) fclose(list);
  printf("llc + ld.lld for gfx90a, gfx942, gfx1100: %zu code objects, %zu failures\n", ok, failed);
  if (ok + failed != written || ok < 12) {
    printf("FAIL: %zu renderings written, %zu checked\n", written, ok + failed);
    return 1;
  }
  for (int i = 0; i < 3; i++) {
    const char *g = gfx_targets[i];
    /* 16-byte global loads: gfx9 spells them dwordx4, gfx11 b128. */
    failed += (size_t)asm_has(llc, dir, "gemv_tiled_f32", g,
                              i < 2 ? "global_load_dwordx4" : "global_load_b128");
    failed += (size_t)asm_has(llc, dir, "reduce_sg_f32", g, "ds_bpermute_b32");
    failed += (size_t)asm_has(llc, dir, "scatter_checked", g, "s_trap 2");
    failed += (size_t)asm_has(llc, dir, "reduce_wg_f32", g, "s_barrier");
    /* Private arrays stay in registers: no scratch memory. */
    failed += (size_t)asm_has(llc, dir, "gemv_tiled_f32", g, ".private_segment_fixed_size: 0");
    failed += (size_t)asm_has(llc, dir, "ops_control", g, ".private_segment_fixed_size: 0");
  }
  failed += (size_t)asm_has(llc, dir, "reduce_sg_f32", "gfx1100", ".wavefront_size: 32");
  failed += (size_t)asm_has(llc, dir, "reduce_sg_f32", "gfx942", ".wavefront_size: 64");
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "llc") == 0) return main_llc();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_render_all),       cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_golden_gemv),      cmocka_unit_test(test_golden_waves),
      cmocka_unit_test(test_golden_checks),    cmocka_unit_test(test_golden_math_and_conversions),
      cmocka_unit_test(test_partial_subgroup), cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_wrong_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
