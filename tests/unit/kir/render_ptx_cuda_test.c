/* kir_render_ptx_cuda — runs the PTX-rendered corpus on an NVIDIA GPU through
 * the CUDA driver API and compares every output with the corpus's C
 * reference, as the interpreter test does; a case whose check fails on
 * purpose must trap, and the fault record must name the kernel (its hash) and
 * the trap code. SKIP (exit 77) when libcuda.so.1 or a device is absent.
 *
 * A plain C program (no cmocka), so that it can run on a GPU machine that
 * has only the driver. libcuda is opened with dlopen; the few driver types
 * and entry points it needs are declared here (the driver ABI is stable). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "poot/kir.h"
#include "poot/devices.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;

static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*PrimaryCtxReset)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemHostAlloc)(void **, size_t, unsigned);
  CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
  CUresult (*MemFreeHost)(void *);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void *, void **, void **);
  CUresult (*GetErrorString)(CUresult, const char **);
} cu;

#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76

static const char *cu_err(CUresult r) {
  const char *s = NULL;
  if (cu.GetErrorString) cu.GetErrorString(r, &s);
  return s ? s : "?";
}

static CUdevice dev;
static CUcontext ctx;

static int open_cuda(void) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  poot_dylib *lib = NULL;
  poot_status st = poot_dylib_open(names, &lib);
  if (st) {
    printf("SKIP: no CUDA driver (%s)\n", poot_status_message(st));
    poot_status_free(st);
    return 77;
  }
  const poot_dylib_symbol syms[] = {
      {"cuInit", (void **)&cu.Init, false},
      {"cuDeviceGet", (void **)&cu.DeviceGet, false},
      {"cuDeviceGetAttribute", (void **)&cu.DeviceGetAttribute, false},
      {"cuDevicePrimaryCtxRetain", (void **)&cu.PrimaryCtxRetain, false},
      {"cuDevicePrimaryCtxReset_v2", (void **)&cu.PrimaryCtxReset, false},
      {"cuCtxSetCurrent", (void **)&cu.CtxSetCurrent, false},
      {"cuCtxSynchronize", (void **)&cu.CtxSynchronize, false},
      {"cuModuleLoadDataEx", (void **)&cu.ModuleLoadDataEx, false},
      {"cuModuleUnload", (void **)&cu.ModuleUnload, false},
      {"cuModuleGetFunction", (void **)&cu.ModuleGetFunction, false},
      {"cuMemAlloc_v2", (void **)&cu.MemAlloc, false},
      {"cuMemFree_v2", (void **)&cu.MemFree, false},
      {"cuMemcpyHtoD_v2", (void **)&cu.MemcpyHtoD, false},
      {"cuMemcpyDtoH_v2", (void **)&cu.MemcpyDtoH, false},
      {"cuMemHostAlloc", (void **)&cu.MemHostAlloc, false},
      {"cuMemHostGetDevicePointer_v2", (void **)&cu.MemHostGetDevicePointer, false},
      {"cuMemFreeHost", (void **)&cu.MemFreeHost, false},
      {"cuLaunchKernel", (void **)&cu.LaunchKernel, false},
      {"cuGetErrorString", (void **)&cu.GetErrorString, false},
  };
  st = poot_dylib_load(lib, syms, sizeof syms / sizeof syms[0]);
  if (st) {
    printf("SKIP: %s\n", poot_status_message(st));
    poot_status_free(st);
    return 77;
  }
  CUresult r = cu.Init(0);
  if (r == 0) r = cu.DeviceGet(&dev, 0);
  if (r != 0) {
    printf("SKIP: no CUDA device (%s)\n", cu_err(r));
    return 77;
  }
  return 0;
}

static int make_context(void) {
  CUresult r = cu.PrimaryCtxRetain(&ctx, dev);
  if (r == 0) r = cu.CtxSetCurrent(ctx);
  if (r != 0) printf("FAIL: context: %s\n", cu_err(r));
  return r != 0;
}

/* Runs one prepared case; returns 0 on a match. */
static int run_case(const poot_kir_corpus_case *c, const poot_kir_kernel *k, const char *ptx,
                    poot_kir_corpus_run *run, bool *out_poisoned) {
  *out_poisoned = false;
  char log[8192] = "";
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  CUresult r = cu.ModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  if (r != 0) {
    printf("FAIL: %s: module load: %s\n%s\n", c->name, cu_err(r), log);
    return 1;
  }
  r = cu.ModuleGetFunction(&fn, mod, k->name);
  CUdeviceptr dptr[POOT_KIR_CORPUS_MAX_BUFFERS] = {0};
  void *args[POOT_KIR_CORPUS_MAX_BUFFERS + POOT_KIR_CORPUS_MAX_PARAMS + 1];
  uint32_t push[POOT_KIR_CORPUS_MAX_PARAMS];
  size_t na = 0;
  int fail = 0;
  uint32_t *record = NULL;
  CUdeviceptr drecord = 0;
  for (size_t i = 0; i < run->buffer_count && r == 0; i++) {
    size_t n = run->buffers[i].size ? run->buffers[i].size : 4;
    r = cu.MemAlloc(&dptr[i], n);
    if (r == 0 && run->buffers[i].size)
      r = cu.MemcpyHtoD(dptr[i], run->buffers[i].data, run->buffers[i].size);
    args[na++] = &dptr[i];
  }
  for (uint32_t i = 0; i < k->param_count; i++) {
    if (k->params[i].kind != POOT_KIR_PARAM_PUSH) continue;
    push[i] = run->params[i];
    args[na++] = &push[i];
  }
  if (r == 0 && k->has_checks) {
    r = cu.MemHostAlloc((void **)&record, 64, CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == 0) {
      memset(record, 0, 64);
      r = cu.MemHostGetDevicePointer(&drecord, record, 0);
    }
    args[na++] = &drecord;
  }
  if (r == 0) {
    const uint32_t *ws = k->workgroup_size;
    r = cu.LaunchKernel(fn, run->grid[0] ? run->grid[0] : 1, run->grid[1] ? run->grid[1] : 1,
                        run->grid[2] ? run->grid[2] : 1, ws[0] ? ws[0] : 1, ws[1] ? ws[1] : 1,
                        ws[2] ? ws[2] : 1, 0, NULL, args, NULL);
  }
  if (r == 0) r = cu.CtxSynchronize();
  if (run->expected_error_bits) {
    uint32_t code = (uint32_t)__builtin_ctz(run->expected_error_bits);
    if (r == 0) {
      printf("FAIL: %s: expected a trap with code %u, the kernel finished\n", c->name, code);
      fail = 1;
    } else if (!record || record[1] != 2 || record[2] != code || record[3] != (uint32_t)k->hash ||
               record[4] != (uint32_t)(k->hash >> 32) ||
               (record[0] & run->expected_error_bits) == 0) {
      printf(
          "FAIL: %s: trap (%s) but the fault record is wrong: state %u code %u hash %08x%08x "
          "bits %08x\n",
          c->name, cu_err(r), record ? record[1] : 0, record ? record[2] : 0,
          record ? record[4] : 0, record ? record[3] : 0, record ? record[0] : 0);
      fail = 1;
    } else {
      printf(
          "ok: %s trapped (%s); record: kernel %08x%08x, trap code %u, workgroup (%u,%u,%u) "
          "thread %u\n",
          c->name, cu_err(r), record[4], record[3], record[2], record[5], record[6], record[7],
          record[8]);
    }
    *out_poisoned = r != 0;
    if (record) cu.MemFreeHost(record);
    return fail;
  }
  if (r != 0) {
    printf("FAIL: %s (size %u): %s\n", c->name, run->size, cu_err(r));
    *out_poisoned = true;
    return 1;
  }
  for (size_t i = 0; i < run->buffer_count && r == 0; i++)
    if (run->buffers[i].size)
      r = cu.MemcpyDtoH(run->buffers[i].data, dptr[i], run->buffers[i].size);
  for (size_t i = 0; i < run->buffer_count; i++)
    if (dptr[i]) cu.MemFree(dptr[i]);
  if (record) cu.MemFreeHost(record);
  cu.ModuleUnload(mod);
  if (r != 0) {
    printf("FAIL: %s: copy back: %s\n", c->name, cu_err(r));
    return 1;
  }
  poot_status st = poot_kir_corpus_compare(k, run, NULL, false);
  if (st) {
    printf("FAIL: %s (size %u): %s\n", c->name, run->size, poot_status_message(st));
    poot_status_free(st);
    return 1;
  }
  return 0;
}

/* ------------------------------------------------ math error survey */

#include <math.h>

typedef struct math_case {
  const char *name;
  poot_kir_op op;
  double lo, hi; /* uniform inputs, or (when log_scale) positive floats by bit pattern */
  bool log_scale;
  double (*ref)(double);
} math_case;

static double ref_rsqrt(double x) {
  return 1.0 / sqrt(x);
}

/* y = op(x) (or pow(x, 1.7) for POW) over n floats. */
static poot_status math_kernel(poot_kir_op op, poot_kir_kernel **out) {
  poot_kir_kernel_desc desc = {"math_survey", {256, 1, 1}, 0};
  poot_kir_builder *b = NULL;
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  poot_kir_binding bx = {"x", 0, POOT_KIR_F32, POOT_KIR_ACCESS_READ, 16, false};
  poot_kir_binding by = {"y", 1, POOT_KIR_F32, POOT_KIR_ACCESS_READ_WRITE, 16, false};
  uint32_t rx, ry;
  poot_kir_value gid, x, y, e;
  poot_status st = poot_kir_add_binding(b, &bx, &rx);
  if (!st) st = poot_kir_add_binding(b, &by, &ry);
  if (!st) st = poot_kir_global_id(b, 0, &gid);
  if (!st) st = poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, rx, gid, 1, &x);
  if (!st && op == POOT_KIR_OP_POW) {
    st = poot_kir_const_f32(b, 1.7f, &e);
    if (!st) st = poot_kir_binary(b, op, x, e, &y);
  } else if (!st) {
    st = poot_kir_unary(b, op, x, &y);
  }
  if (!st) st = poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, ry, gid, y);
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  return poot_kir_builder_finish(b, out);
}

static double ulp_of(double v) {
  float f = fabsf((float)v);
  if (f == 0.0f || !isfinite(f)) return ldexp(1.0, -149);
  return (double)(nextafterf(f, INFINITY) - f);
}

static double pow17(double x) {
  return pow(x, 1.7);
}

static int math_survey(const poot_kir_target *t) {
  static const math_case cases[] = {
      {"exp", POOT_KIR_OP_EXP, -87.0, 88.0, false, exp},
      {"exp2", POOT_KIR_OP_EXP2, -126.0, 127.0, false, exp2},
      {"log", POOT_KIR_OP_LOG, 0, 0, true, log},
      {"log2", POOT_KIR_OP_LOG2, 0, 0, true, log2},
      {"log 0.5<=x<=2", POOT_KIR_OP_LOG, 0.5, 2.0, false, log},
      {"log2 0.5<=x<=2", POOT_KIR_OP_LOG2, 0.5, 2.0, false, log2},
      {"log |log x|>=1", POOT_KIR_OP_LOG, 2.7182818, 1e30, false, log},
      {"sqrt", POOT_KIR_OP_SQRT, 0, 0, true, sqrt},
      {"rsqrt", POOT_KIR_OP_RSQRT, 0, 0, true, ref_rsqrt},
      {"sin |x|<=100pi", POOT_KIR_OP_SIN, -314.159, 314.159, false, sin},
      {"cos |x|<=100pi", POOT_KIR_OP_COS, -314.159, 314.159, false, cos},
      {"sin |x|<=1e5", POOT_KIR_OP_SIN, -1e5, 1e5, false, sin},
      {"tanh", POOT_KIR_OP_TANH, -10.0, 10.0, false, tanh},
      {"erf", POOT_KIR_OP_ERF, -5.0, 5.0, false, erf},
      {"pow(x,1.7) 0<x<=100", POOT_KIR_OP_POW, 0.0, 100.0, false, pow17},
  };
  enum { N = 1 << 22 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  if (!x || !y) return 1;
  printf("%-22s %12s %12s %14s\n", "function", "max ulp", "max abs", "at x");
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const math_case *mc = &cases[ci];
    uint64_t rs = 0x9E3779B97F4A7C15ull * (ci + 1);
    for (size_t i = 0; i < N; i++) {
      rs ^= rs << 13;
      rs ^= rs >> 7;
      rs ^= rs << 17;
      double u = (double)(rs >> 11) / 9007199254740992.0;
      if (mc->log_scale)
        x[i] = poot_f32_from_bits(0x00800000u + (uint32_t)(u * (0x7F7FFFFFu - 0x00800000u)));
      else
        x[i] = (float)(mc->lo + u * (mc->hi - mc->lo));
    }
    poot_kir_kernel *k = NULL;
    poot_status st = math_kernel(mc->op, &k);
    poot_strbuf ptx;
    poot_strbuf_init(&ptx);
    if (!st) st = poot_kir_render_ptx(k, t, &ptx);
    if (st) {
      printf("FAIL: %s: %s\n", mc->name, poot_status_message(st));
      poot_status_free(st);
      return 1;
    }
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CUdeviceptr dx = 0, dy = 0;
    CUresult r = cu.ModuleLoadDataEx(&mod, ptx.data, 0, NULL, NULL);
    if (r == 0) r = cu.ModuleGetFunction(&fn, mod, "math_survey");
    if (r == 0) r = cu.MemAlloc(&dx, N * sizeof *x);
    if (r == 0) r = cu.MemAlloc(&dy, N * sizeof *y);
    if (r == 0) r = cu.MemcpyHtoD(dx, x, N * sizeof *x);
    void *args[] = {&dx, &dy};
    if (r == 0) r = cu.LaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
    if (r == 0) r = cu.CtxSynchronize();
    if (r == 0) r = cu.MemcpyDtoH(y, dy, N * sizeof *y);
    if (r != 0) {
      printf("FAIL: %s: %s\n", mc->name, cu_err(r));
      return 1;
    }
    double max_ulp = 0, max_abs = 0, at = 0;
    for (size_t i = 0; i < N; i++) {
      double want = mc->ref((double)x[i]);
      if (!isfinite(want) || fabs(want) > 3.4e38) continue;
      double err = fabs((double)y[i] - want);
      double eu = err / ulp_of(want);
      if (!(eu <= max_ulp)) {
        max_ulp = eu;
        at = x[i];
      }
      if (err > max_abs) max_abs = err;
    }
    printf("%-22s %12.2f %12.3g %14.7g\n", mc->name, max_ulp, max_abs, at);
    cu.MemFree(dx);
    cu.MemFree(dy);
    cu.ModuleUnload(mod);
    poot_strbuf_deinit(&ptx);
    poot_kir_kernel_destroy(k);
  }
  free(x);
  free(y);
  return 0;
}

int main(int argc, char **argv) {
  int rc = open_cuda();
  if (rc) return rc;
  int major = 0, minor = 0;
  cu.DeviceGetAttribute(&major, CU_ATTR_CC_MAJOR, dev);
  cu.DeviceGetAttribute(&minor, CU_ATTR_CC_MINOR, dev);
  poot_kir_target t;
  poot_status st = poot_device_target_by_name(major >= 9 ? "sm_90" : "sm_80", &t);
  if (st || major < 8) {
    printf("SKIP: compute capability %d.%d (needs 8.0 or newer)\n", major, minor);
    poot_status_free(st);
    return 77;
  }
  if (make_context()) return 1;
  if (argc > 1 && strcmp(argv[1], "--math") == 0) return math_survey(&t);
  /* A trap poisons the CUDA context for the rest of the process, so each
   * run that traps on purpose happens in a child process of its own:
   * `kir_render_ptx_cuda --trap CASE` runs just that case's trapping runs. */
  bool trap_mode = argc > 2 && strcmp(argv[1], "--trap") == 0;
  const char *only = trap_mode ? argv[2] : (argc > 1 ? argv[1] : NULL);
  size_t n = 0, passed = 0, failed = 0, skipped = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  for (size_t i = 0; i < n; i++) {
    const poot_kir_corpus_case *c = &cases[i];
    if (only && (trap_mode ? strcmp(c->name, only) != 0 : !strstr(c->name, only))) continue;
    poot_kir_kernel *k = NULL;
    st = c->build(c, &t, &k);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      poot_status_free(st);
      skipped++;
      continue;
    }
    poot_strbuf ptx;
    poot_strbuf_init(&ptx);
    if (!st) st = poot_kir_render_ptx(k, &t, &ptx);
    if (st) {
      printf("FAIL: %s: %s\n", c->name, poot_status_message(st));
      poot_status_free(st);
      failed++;
      poot_kir_kernel_destroy(k);
      poot_strbuf_deinit(&ptx);
      continue;
    }
    for (int j = 0; j < POOT_KIR_CORPUS_MAX_SIZES && c->sizes[j]; j++) {
      poot_kir_corpus_run run;
      memset(&run, 0, sizeof run);
      st = c->prepare(c, k, c->sizes[j], 1234 + (uint64_t)j, &run);
      if (st) {
        printf("FAIL: %s: prepare: %s\n", c->name, poot_status_message(st));
        poot_status_free(st);
        failed++;
        continue;
      }
      bool poisoned = false;
      if (!!run.expected_error_bits != trap_mode) {
        if (run.expected_error_bits) {
          char cmd[1024];
          snprintf(cmd, sizeof cmd, "'%s' --trap '%s'", argv[0], c->name);
          if (system(cmd) == 0)
            passed++;
          else
            failed++;
        }
        poot_kir_corpus_run_deinit(&run);
        continue;
      }
      if (run_case(c, k, ptx.data, &run, &poisoned) == 0)
        passed++;
      else
        failed++;
      poot_kir_corpus_run_deinit(&run);
      if (poisoned) {
        printf("the context is poisoned: no further runs in this process\n");
        poot_kir_kernel_destroy(k);
        poot_strbuf_deinit(&ptx);
        return failed ? 1 : 0;
      }
    }
    poot_kir_kernel_destroy(k);
    poot_strbuf_deinit(&ptx);
  }
  if (trap_mode) return failed ? 1 : 0;
  /* The matrix-fragment cases (sm_80+; none of them traps). */
  const poot_kir_corpus_case *mma = poot_kir_corpus_mma(&n);
  for (size_t i = 0; i < n; i++) {
    const poot_kir_corpus_case *c = &mma[i];
    if (only && !strstr(c->name, only)) continue;
    poot_kir_kernel *k = NULL;
    poot_strbuf ptx;
    poot_strbuf_init(&ptx);
    poot_kir_corpus_run run;
    memset(&run, 0, sizeof run);
    st = c->build(c, &t, &k);
    if (!st) st = poot_kir_render_ptx(k, &t, &ptx);
    if (!st) st = c->prepare(c, k, c->sizes[0], 1234, &run);
    bool poisoned = false;
    if (st) {
      printf("FAIL: %s: %s\n", c->name, poot_status_message(st));
      poot_status_free(st);
      failed++;
    } else if (run_case(c, k, ptx.data, &run, &poisoned) == 0) {
      passed++;
    } else {
      failed++;
    }
    poot_kir_corpus_run_deinit(&run);
    poot_kir_kernel_destroy(k);
    poot_strbuf_deinit(&ptx);
    if (poisoned) break;
  }
  printf("%s on compute capability %d.%d: %zu runs passed, %zu failed, %zu cases unsupported\n",
         t.name, major, minor, passed, failed, skipped);
  return failed ? 1 : (passed ? 0 : 77);
}
