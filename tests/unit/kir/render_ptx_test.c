/* Tests of KIR's PTX renderer.
 *
 *   kir_render_ptx        every corpus and ops kernel renders for sm_80 and
 *                         sm_90; output is deterministic; salient instructions
 *                         are where they must be (golden checks)
 *   kir_render_ptx_ptxas  (argument "ptxas") every rendering is accepted by
 *                         `ptxas -arch=sm_80` / `-arch=sm_90`; SKIP without
 *                         ptxas on PATH */
#include <stdlib.h>

#include "poot/devices.h"
#include "poot_test.h"
#include "render_ptx_amdgpu_util.h"

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
  POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
  poot_kir_kernel_destroy(k);
  return poot_strbuf_take(&sb);
}

static void expect_has(const char *text, const char *needle, const char *what) {
  if (!strstr(text, needle)) fail_msg("%s: expected '%s' in the PTX", what, needle);
}
static void expect_lacks(const char *text, const char *needle, const char *what) {
  if (strstr(text, needle)) fail_msg("%s: did not expect '%s' in the PTX", what, needle);
}

/* ------------------------------------------------- render everything */

typedef struct walk_ctx {
  const poot_kir_target *t;
  const char *dir; /* write files here when set */
  size_t count;
} walk_ctx;

static poot_status check_header(void *vctx, const char *name, const poot_kir_kernel *k,
                                const char *text, size_t len) {
  walk_ctx *w = vctx;
  char want[128];
  snprintf(want, sizeof want, ".target sm_%u\n", (unsigned)w->t->sm_version);
  if (len == 0 || !strstr(text, ".version 7.8\n") || !strstr(text, want) ||
      !strstr(text, ".address_size 64\n"))
    return poot_status_make(POOT_INTERNAL, "%s: header lacks .version/.target/.address_size", name);
  snprintf(want, sizeof want, ".visible .entry %s(", k->name);
  if (!strstr(text, want)) return poot_status_make(POOT_INTERNAL, "%s: no entry '%s'", name, want);
  /* Never the contractible forms: the interpreter rounds every add and mul. */
  if (strstr(text, "\tadd.f32") || strstr(text, "\tmul.f32") || strstr(text, "\tsub.f32") ||
      strstr(text, "\tdiv.approx") || strstr(text, "\tdiv.full") || strstr(text, "\tsqrt.approx"))
    return poot_status_make(POOT_INTERNAL, "%s: an unrounded or approximate f32 op", name);
  if (k->has_checks && (!strstr(text, "trap;") || !strstr(text, "_fault")))
    return poot_status_make(POOT_INTERNAL, "%s: checks without trap", name);
  w->count++;
  return NULL;
}

static void render_all(const char *target_name) {
  poot_kir_target t;
  target_of(target_name, &t);
  walk_ctx w = {&t, NULL, 0};
  render_walk_stats stats;
  POOT_ASSERT_OK(render_walk(&t, poot_kir_render_ptx, check_header, &w, &stats));
  assert_true(stats.rendered >= 4);
  assert_int_equal(stats.rendered, w.count);
  /* PTX has every type, atomic and subgroup op the corpus uses. */
  assert_int_equal(stats.skipped, 0);
  printf("%s: %zu kernels rendered\n", target_name, stats.rendered);
}

static void test_render_all_sm80(void **state) {
  (void)state;
  render_all("sm_80");
}
static void test_render_all_sm90(void **state) {
  (void)state;
  render_all("sm_90");
}

/* ---------------------------------------------------- determinism */

static poot_status check_deterministic(void *vctx, const char *name, const poot_kir_kernel *k,
                                       const char *text, size_t len) {
  walk_ctx *w = vctx;
  /* The same kernel object again, and a kernel built afresh. */
  poot_strbuf a, b;
  poot_strbuf_init(&a);
  poot_strbuf_init(&b);
  poot_status st = poot_kir_render_ptx(k, w->t, &a);
  poot_kir_kernel *k2 = NULL;
  if (!st) st = render_build_named(name, w->t, &k2);
  if (!st) st = poot_kir_render_ptx(k2, w->t, &b);
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
  static const char *const targets[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    poot_kir_target t;
    target_of(targets[i], &t);
    walk_ctx w = {&t, NULL, 0};
    POOT_ASSERT_OK(render_walk(&t, poot_kir_render_ptx, check_deterministic, &w, NULL));
    assert_true(w.count >= 4);
  }
  /* sm_90 kernels wait for the grid before them before any memory access
   * (none of this kernel's bindings is invariant). */
  char *b = render_named("gemv_tiled_f32", "sm_90");
  const char *wait = strstr(b, "\tgriddepcontrol.wait;\n");
  const char *load = strstr(b, "ld.global");
  assert_non_null(wait);
  assert_non_null(load);
  assert_true(wait < load);
  assert_null(strstr(wait + 2, "griddepcontrol.wait"));
  poot_free(b);
  /* Without grid dependencies, sm_80 and sm_90 differ only in the .target
   * line. */
  char *a = render_named("gemv_tiled_f32", "sm_80");
  poot_kir_target t90;
  target_of("sm_90", &t90);
  t90.grid_dependency = false;
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named("gemv_tiled_f32", &t90, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_ptx(k, &t90, &sb));
  poot_kir_kernel_destroy(k);
  assert_int_equal(strlen(a), sb.len);
  size_t diff = 0;
  for (size_t i = 0; a[i]; i++) diff += a[i] != sb.data[i];
  assert_true(diff > 0 && diff <= 4);
  assert_null(strstr(a, "griddepcontrol"));
  poot_free(a);
  poot_strbuf_deinit(&sb);
}

/* --------------------------------------------------------- golden */

static void test_golden_gemv(void **state) {
  (void)state;
  char *p = render_named("gemv_tiled_f32", "sm_90");
  expect_has(p, ".target sm_90", "gemv");
  expect_has(p, "ld.global.nc.v4.f32", "gemv: 16-byte loads of the read-only matrix");
  expect_has(p, ".shared .align 16 .b8", "gemv: the x tile in shared memory");
  expect_has(p, "bar.sync \t0;", "gemv: barriers around the tile");
  expect_has(p, "fma.rn.f32", "gemv");
  expect_has(p, ".reqntid", "gemv: fixed workgroup size");
  poot_free(p);
}

static void test_golden_reductions(void **state) {
  (void)state;
  char *p = render_named("reduce_sg_f32", "sm_80");
  expect_has(p, "shfl.sync.bfly.b32", "subgroup reduce");
  for (int off = 16; off >= 1; off /= 2) {
    char want[64];
    snprintf(want, sizeof want, ", %d, 31, -1;", off);
    expect_has(p, want, "subgroup reduce: every butterfly distance");
  }
  expect_has(p, "add.rn.f32", "subgroup reduce");
  poot_free(p);
  p = render_named("reduce_sg_maxmin_i32", "sm_80");
  expect_has(p, "max.s32", "subgroup max");
  expect_has(p, "min.s32", "subgroup min");
  poot_free(p);
  p = render_named("reduce_wg_f32", "sm_80");
  expect_has(p, "bar.sync \t0;", "workgroup reduce");
  expect_has(p, "st.shared.f32", "workgroup reduce");
  poot_free(p);
  p = render_named("ops_sync", "sm_90");
  expect_has(p, "shfl.sync.idx.b32", "shuffle and broadcast");
  expect_has(p, "atom.global.add.f32", "float atomic add");
  expect_has(p, "atom.shared.add.u32", "shared atomic add");
  expect_has(p, "atom.global.max.u32", "atomic max");
  expect_has(p, "atom.global.min.s32", "atomic min on i32");
  expect_has(p, "atom.global.exch.b32", "atomic exchange");
  expect_has(p, "atom.global.cas.b32", "atomic compare-exchange");
  expect_has(p, "%nctaid.x", "workgroup count");
  poot_free(p);
}

static void test_golden_checks(void **state) {
  (void)state;
  char *p = render_named("scatter_checked", "sm_90");
  expect_has(p, "_fault\n)", "check: the fault record is the last parameter");
  expect_has(p, "bra \t$L__fault;", "check: branch to the handler");
  expect_has(p, "red.relaxed.sys.global.or.b32", "check: error-word bit");
  expect_has(p, "atom.relaxed.sys.global.cas.b32", "check: record claimed once");
  expect_has(p, "fence.sc.sys;", "check: system-scope fence");
  expect_has(p, "st.release.sys.global.u32", "check: release store of the state");
  expect_has(p, "\ttrap;", "check: a real trap");
  /* Kernel id: the two halves of the kernel hash are written. */
  poot_kir_target t;
  target_of("sm_90", &t);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named("scatter_checked", &t, &k));
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, "0x%08X;", (unsigned)(uint32_t)k->hash);
  snprintf(hi, sizeof hi, "0x%08X;", (unsigned)(uint32_t)(k->hash >> 32));
  expect_has(p, lo, "check: kernel hash, low word");
  expect_has(p, hi, "check: kernel hash, high word");
  poot_kir_kernel_destroy(k);
  poot_free(p);
  /* A kernel without checks has no fault parameter and no trap. */
  p = render_named("vadd_f32", "sm_80");
  expect_lacks(p, "trap", "vadd");
  expect_lacks(p, "_fault", "vadd");
  poot_free(p);
}

static void test_golden_math_and_conversions(void **state) {
  (void)state;
  char *p = render_named("ops_math", "sm_90");
  static const char *const need[] = {"ex2.approx.f32",
                                     "lg2.approx.f32",
                                     "sqrt.rn.f32",
                                     "rsqrt.approx.f32",
                                     "sin.approx.f32",
                                     "cos.approx.f32",
                                     "tanh.approx.f32",
                                     "div.rn.f32",
                                     "cvt.rmi.f32.f32",
                                     "cvt.rpi.f32.f32",
                                     "cvt.rn.f16.f32",
                                     "cvt.f32.f16",
                                     "ld.global.nc.v4.b16",
                                     "st.global.v4.f32",
                                     "copysign.f32",
                                     "min.f32",
                                     "max.f32"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) expect_has(p, need[i], "ops_math");
  poot_free(p);
  p = render_named("ops_convert", "sm_80");
  static const char *const cv[] = {
      "cvt.rn.bf16.f32",     "cvt.f32.bf16",   "cvt.rzi.sat.s32.f32", "cvt.rzi.sat.u8.f32",
      "cvt.rzi.sat.s64.f32", "cvt.rn.f32.s64", "cvt.rn.f32.u32",      "cvt.s64.s32",
      "cvt.u32.u64",         "bfe.s32",        "ld.global.nc.v2.u64", "mov.b32"};
  for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++) expect_has(p, cv[i], "ops_convert");
  poot_free(p);
  p = render_named("vadd_u8x4", "sm_80");
  expect_has(p, "ld.global.nc.v4.u8", "vadd_u8x4");
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
  target_of("sm_80", &t);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_kir_kernel *k = partial_kernel(48);
  POOT_ASSERT_STATUS_MSG(poot_kir_render_ptx(k, &t, &sb), POOT_UNSUPPORTED, "48 threads");
  poot_kir_kernel_destroy(k);
  k = partial_kernel(64);
  POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
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
  poot_status st = poot_kir_render_ptx(r->k, r->t, &sb);
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
  target_of("sm_90", &t);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    poot_kir_kernel *k = NULL;
    POOT_ASSERT_OK(render_build_named(names[i], &t, &k));
    poot_strbuf good;
    poot_strbuf_init(&good);
    POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &good));
    render_ctx r = {k, &t, &good};
    assert_true(poot_test_oom_sweep(names[i], try_render, &r, 100000) > 0);
    poot_strbuf_deinit(&good);
    poot_kir_kernel_destroy(k);
  }
}

static void test_wrong_target(void **state) {
  (void)state;
  poot_kir_target t, amd;
  target_of("sm_80", &t);
  target_of("gfx942", &amd);
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(render_build_named("vadd_f32", &t, &k));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_STATUS(poot_kir_render_ptx(k, &amd, &sb), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_STATUS(poot_kir_render_ptx(NULL, &t, &sb), POOT_INVALID_ARGUMENT);
  poot_strbuf_deinit(&sb);
  poot_kir_kernel_destroy(k);
}

/* ------------------------------------------------------------ ptxas */

/* Renderings are written first, then ptxas runs over them in parallel. */
typedef struct ptxas_ctx {
  const poot_kir_target *t;
  const char *dir;
  FILE *list;
  size_t written;
} ptxas_ctx;

static poot_status write_ptx(void *vctx, const char *name, const poot_kir_kernel *k,
                             const char *text, size_t len) {
  (void)k;
  ptxas_ctx *p = vctx;
  char file[256];
  snprintf(file, sizeof file, "%s.sm_%u", name, (unsigned)p->t->sm_version);
  char ptx[300];
  snprintf(ptx, sizeof ptx, "%s.ptx", file);
  if (!render_write_file(p->dir, ptx, text, len))
    return poot_status_make(POOT_IO, "cannot write %s/%s", p->dir, ptx);
  fprintf(p->list, "%s %u\n", file, (unsigned)p->t->sm_version);
  p->written++;
  return NULL;
}

static int main_ptxas(void) {
  char ptxas[1024];
  if (!render_find_tool("ptxas", ptxas, sizeof ptxas))
    return poot_test_skip("ptxas (CUDA toolkit) is not on PATH");
  const char *dir = poot_test_tmpdir();
  char list_path[1024];
  snprintf(list_path, sizeof list_path, "%s/list", dir);
  FILE *list = fopen(list_path, "w");
  if (!list) return 1;
  size_t written = 0;
  static const char *const targets[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    poot_kir_target t;
    poot_status st = poot_device_target_by_name(targets[i], &t);
    ptxas_ctx p = {&t, dir, list, 0};
    if (!st) st = render_walk(&t, poot_kir_render_ptx, write_ptx, &p, NULL);
    if (st) {
      printf("FAIL: %s\n", poot_status_message(st));
      poot_status_free(st);
      fclose(list);
      return 1;
    }
    written += p.written;
  }
  fclose(list);
  /* Each job leaves NAME.ok when ptxas accepts NAME.ptx, else NAME.log. */
  (void)poot_test_system(
      "cd '%s' && xargs -P \"$(nproc)\" -L 1 sh -c '\"$0\" -arch=sm_$2 $1.ptx "
      "-o $1.cubin > $1.log 2>&1 && touch $1.ok' '%s' < list",
      dir, ptxas);
  size_t ok = 0, failed = 0;
  list = fopen(list_path, "r");
  char file[300];
  unsigned sm;
  while (list && fscanf(list, "%299s %u", file, &sm) == 2) {
    char okf[1400];
    snprintf(okf, sizeof okf, "%s/%s.ok", dir, file);
    FILE *f = fopen(okf, "r");
    if (f) {
      fclose(f);
      ok++;
    } else {
      failed++;
      printf("FAIL: ptxas -arch=sm_%u rejected %s:\n", sm, file);
      (void)poot_test_system("head -20 '%s/%s.log'", dir, file);
    }
  }
  if (list) fclose(list);
  printf("ptxas -arch=sm_80 and sm_90: %zu renderings accepted, %zu rejected\n", ok, failed);
  if (ok + failed != written || ok < 8) {
    printf("FAIL: %zu renderings written, %zu checked\n", written, ok + failed);
    return 1;
  }
  return failed ? 1 : 0;
}

/* ------------------------------------------------------- grid dependency */

/* out[i] = w[i] + x[i] with w invariant (a weight): on sm_90 the load of w
 * is issued before griddepcontrol.wait, the load of x after it. With
 * `stores` false the kernel only reads w: the wait comes last. */
static char *render_wait_kernel(bool stores, bool invariant) {
  poot_kir_kernel_desc d = {"grid_wait", {64, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&d, &b));
  poot_kir_binding bw = {"w", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, invariant};
  poot_kir_binding bx = {"x", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding bo = {"out", 2, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, false};
  uint32_t rw, rx, ro;
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bw, &rw));
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bx, &rx));
  POOT_ASSERT_OK(poot_kir_add_binding(b, &bo, &ro));
  poot_kir_value gid, w, x, y;
  POOT_ASSERT_OK(poot_kir_global_id(b, 0, &gid));
  POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rw, gid, 1, &w));
  if (stores) {
    POOT_ASSERT_OK(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, gid, 1, &x));
    POOT_ASSERT_OK(poot_kir_binary(b, POOT_KIR_OP_ADD, w, x, &y));
    POOT_ASSERT_OK(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ro, gid, y));
  }
  poot_kir_kernel *k = NULL;
  POOT_ASSERT_OK(poot_kir_builder_finish(b, &k));
  poot_kir_target t;
  target_of("sm_90", &t);
  POOT_ASSERT_OK(poot_kir_verify(k, &t));
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  POOT_ASSERT_OK(poot_kir_render_ptx(k, &t, &sb));
  poot_kir_kernel_destroy(k);
  char *text = poot_strdup(sb.data);
  poot_strbuf_deinit(&sb);
  return text;
}

static void test_grid_dependency_wait(void **state) {
  (void)state;
  char *a = render_wait_kernel(true, true);
  const char *wait = strstr(a, "griddepcontrol.wait;");
  const char *first = strstr(a, "ld.global");
  assert_non_null(wait);
  assert_non_null(first);
  assert_true(first < wait);                  /* the weight's load runs ahead */
  assert_non_null(strstr(wait, "ld.global")); /* x is read after the wait */
  assert_null(strstr(wait + 1, "griddepcontrol.wait"));
  poot_free(a);
  /* the same kernel with w not invariant: the wait comes first */
  char *b = render_wait_kernel(true, false);
  wait = strstr(b, "griddepcontrol.wait;");
  first = strstr(b, "ld.global");
  assert_non_null(wait);
  assert_true(wait < first);
  poot_free(b);
  /* nothing but invariant reads: the wait still runs, last */
  char *c = render_wait_kernel(false, true);
  wait = strstr(c, "griddepcontrol.wait;");
  assert_non_null(wait);
  assert_true(strstr(c, "ld.global") < wait);
  assert_non_null(strstr(wait, "ret;"));
  poot_free(c);
  /* an invariant binding must be read-only */
  poot_kir_kernel_desc d = {"bad_invariant", {64, 1, 1}, 0};
  poot_kir_builder *bb = NULL;
  POOT_ASSERT_OK(poot_kir_builder_create(&d, &bb));
  poot_kir_binding bo = {"out", 0, POOT_KIR_F32, POOT_KIR_ACCESS_WRITE, 16, true};
  uint32_t ro;
  POOT_ASSERT_STATUS(poot_kir_add_binding(bb, &bo, &ro), POOT_INVALID_ARGUMENT);
  poot_kir_builder_destroy(bb);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ptxas") == 0) return main_ptxas();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_render_all_sm80),  cmocka_unit_test(test_render_all_sm90),
      cmocka_unit_test(test_deterministic),    cmocka_unit_test(test_grid_dependency_wait),
      cmocka_unit_test(test_golden_gemv),      cmocka_unit_test(test_golden_reductions),
      cmocka_unit_test(test_golden_checks),    cmocka_unit_test(test_golden_math_and_conversions),
      cmocka_unit_test(test_partial_subgroup), cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_wrong_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
