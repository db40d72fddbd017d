/* The backend registry: which backends this binary has, what each finds on
 * the machine, and opening a device by name ("auto", "vulkan", "vulkan:1"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"

#ifdef POOT_HAVE_VULKAN
/* The Vulkan settings a user or the GPU session gives through the
 * environment (docs/backends.md): only poot_device_open reads them, so a
 * test that creates its device directly is not affected. */
static bool env_flag(const char *name, bool *out) {
  const char *v = getenv(name);
  if (!v || !*v) return false;
  *out = strcmp(v, "0") != 0 && strcmp(v, "off") != 0 && strcmp(v, "no") != 0;
  return true;
}

static void vulkan_options_from_env(poot_vulkan_options *vo) {
  bool on = false;
  if (env_flag("POOT_VULKAN_GPU_FORMS", &on)) vo->gpu_forms = on;
  if (env_flag("POOT_VULKAN_CACHE", &on)) vo->no_pipeline_cache = !on;
  const char *dir = getenv("POOT_VULKAN_CACHE_DIR");
  if (dir && *dir) vo->pipeline_cache_dir = dir;
  if (env_flag("POOT_VULKAN_DIAG", &on)) vo->diag = on;
  if (env_flag("POOT_VULKAN_EXACT_F16", &on)) vo->exact_f16 = on;
  const char *spin = getenv("POOT_VULKAN_SPIN_US");
  if (spin && *spin) { /* "0": never poll */
    unsigned long us = strtoul(spin, NULL, 10);
    vo->spin_us = us == 0 || us >= UINT32_MAX ? UINT32_MAX : (uint32_t)us;
  }
  const char *threads = getenv("POOT_VULKAN_COMPILE_THREADS");
  if (threads && *threads) {
    unsigned long t = strtoul(threads, NULL, 10);
    vo->compile_threads = t > 16 ? 16 : (uint32_t)t;
  }
  const char *budget = getenv("POOT_VULKAN_DIAG_BUDGET_S");
  if (budget && *budget) vo->diag_budget_s = strtod(budget, NULL);
}
#endif

#ifdef POOT_HAVE_VULKAN
#include "vulkan/vk_impl.h"
#endif
#ifdef POOT_HAVE_PTX
#include "ptx/ptx_device.h"
#endif
#ifdef POOT_HAVE_WGPU
#include "wgpu/wgpu_impl.h"
#endif

/* DESIGN order for "auto": the first present wins. */
static const char *const backend_names[POOT_BACKEND_COUNT] = {"ptx", "rocm", "vulkan", "wgpu",
                                                              "npu"};

/* A backend not built into this binary: say so, and whether its runtime is
 * on the machine, so the user knows what a build with it would find. */
static void probe_runtime(poot_backend_report *r, const char *const *libs) {
  poot_dylib *lib = NULL;
  poot_status st = poot_dylib_open(libs, &lib);
  if (st) {
    snprintf(r->reason, sizeof r->reason, "%s not found", libs[0]);
    poot_status_free(st);
    return;
  }
  snprintf(r->reason, sizeof r->reason, "%s found, but this backend is not implemented yet",
           poot_dylib_name(lib));
  poot_dylib_close(lib);
}

#ifdef POOT_HAVE_VULKAN
static void probe_vulkan(poot_backend_report *r) {
  poot_vk_instance vi;
  poot_status st = poot__vk_instance_create(&vi, false);
  if (st) {
    snprintf(r->reason, sizeof r->reason, "%s", poot_status_message(st));
    poot_status_free(st);
    return;
  }
  uint32_t n = 0;
  VkPhysicalDevice devs[8];
  if (vi.vkEnumeratePhysicalDevices(vi.instance, &n, NULL) == VK_SUCCESS && n > 0) {
    if (n > 8) n = 8;
    VkResult res = vi.vkEnumeratePhysicalDevices(vi.instance, &n, devs);
    if (res != VK_SUCCESS && res != VK_INCOMPLETE) n = 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    poot__vk_describe(&vi, devs[i], i, &r->devices[i]);
    if (r->devices[i].usable) r->present = true;
  }
  r->device_count = n;
  if (n == 0)
    snprintf(r->reason, sizeof r->reason, "the Vulkan loader lists no device");
  else if (!r->present)
    snprintf(r->reason, sizeof r->reason, "no device poot can use");
  else
    snprintf(r->reason, sizeof r->reason, "%s", poot_dylib_name(vi.lib));
  poot__vk_instance_destroy(&vi);
}
#endif

#ifdef POOT_HAVE_WGPU
/* The library to try first (docs/backends.md): only poot_device_open and the
 * probe read it. */
static const char *wgpu_library_from_env(void) {
  const char *v = getenv("POOT_WGPU_LIBRARY");
  return v && *v ? v : NULL;
}

static void probe_wgpu(poot_backend_report *r) {
  poot_wg_runtime rt;
  poot_status st = poot__wg_runtime_open(&rt, wgpu_library_from_env());
  if (st) {
    snprintf(r->reason, sizeof r->reason, "%s", poot_status_message(st));
    poot_status_free(st);
    return;
  }
  poot_wg_adapter adapters[8];
  size_t n = poot__wg_adapters(&rt, adapters, 8);
  for (size_t i = 0; i < n; i++) {
    poot__wg_describe(&rt, adapters[i], (uint32_t)i, &r->devices[i]);
    if (r->devices[i].usable) r->present = true;
    rt.api.wgpuAdapterRelease(adapters[i]);
  }
  r->device_count = (uint32_t)n;
  if (n == 0)
    snprintf(r->reason, sizeof r->reason, "%s lists no adapter", poot_dylib_name(rt.lib));
  else
    snprintf(r->reason, sizeof r->reason, "%s", poot_dylib_name(rt.lib));
  poot__wg_runtime_close(&rt);
}
#endif

poot_status poot_devices_probe(poot_backend_report out[POOT_BACKEND_COUNT]) {
  memset(out, 0, sizeof(poot_backend_report) * POOT_BACKEND_COUNT);
  for (int i = 0; i < POOT_BACKEND_COUNT; i++) out[i].backend = backend_names[i];
  static const char *const cuda[] = {"libcuda.so.1", NULL};
  static const char *const hsa[] = {"libhsa-runtime64.so.1", NULL};
  static const char *const wgpu[] = {"libwgpu_native.so", NULL};
  static const char *const npu[] = {"libze_loader.so.1", "libxrt_coreutil.so.2", NULL};
#ifdef POOT_HAVE_PTX
  (void)cuda;
  poot__ptx_probe(&out[0]);
  out[0].backend = backend_names[0];
#else
  probe_runtime(&out[0], cuda);
#endif
  probe_runtime(&out[1], hsa);
#ifdef POOT_HAVE_VULKAN
  out[2].built = true;
  probe_vulkan(&out[2]);
#else
  snprintf(out[2].reason, sizeof out[2].reason,
           "not built into this binary (POOT_BACKEND_VULKAN off or no Vulkan headers)");
#endif
#ifdef POOT_HAVE_WGPU
  (void)wgpu;
  out[3].built = true;
  probe_wgpu(&out[3]);
#else
  (void)wgpu;
  snprintf(out[3].reason, sizeof out[3].reason,
           "not built into this binary (POOT_BACKEND_WGPU off)");
#endif
  probe_runtime(&out[4], npu);
  return NULL;
}

static poot_status open_backend(const char *backend, int32_t index,
                                const poot_device_open_options *o, poot_device **out) {
#ifdef POOT_HAVE_PTX
  if (strcmp(backend, "ptx") == 0) {
    poot_ptx_options po;
    poot_ptx_options_init(&po);
    po.index = index;
    if (o) po.timeout_ns = o->timeout_ns;
    const char *threads = getenv("POOT_PTX_COMPILE_THREADS");
    if (threads && *threads) {
      unsigned long t = strtoul(threads, NULL, 10);
      po.compile_threads = t > 16 ? 16 : (uint32_t)t;
    }
    return poot_ptx_device_create(&po, out);
  }
#endif
#ifdef POOT_HAVE_VULKAN
  if (strcmp(backend, "vulkan") == 0) {
    poot_vulkan_options vo;
    poot_vulkan_options_init(&vo);
    vo.index = index;
    if (o) {
      vo.timeout_ns = o->timeout_ns;
      vo.watchdog_ms = o->watchdog_ms;
      vo.validation = o->validation;
    }
    vulkan_options_from_env(&vo);
    return poot_vulkan_device_create(&vo, out);
  }
#endif
#ifdef POOT_HAVE_WGPU
  if (strcmp(backend, "wgpu") == 0) {
    poot_wgpu_options wo;
    poot_wgpu_options_init(&wo);
    wo.index = index;
    if (o) {
      wo.timeout_ns = o->timeout_ns;
      wo.watchdog_ms = o->watchdog_ms;
    }
    wo.library = wgpu_library_from_env();
    return poot_wgpu_device_create(&wo, out);
  }
#endif
  (void)index;
  (void)o;
  (void)out;
  poot_backend_report reports[POOT_BACKEND_COUNT];
  POOT_TRY(poot_devices_probe(reports));
  for (int i = 0; i < POOT_BACKEND_COUNT; i++)
    if (strcmp(reports[i].backend, backend) == 0)
      return poot_status_make(POOT_NO_DEVICE, "%s: %s", backend, reports[i].reason);
  return poot_status_make(POOT_INVALID_ARGUMENT,
                          "unknown device '%s' (use auto, ptx, rocm, vulkan, wgpu, npu, or "
                          "backend:index)",
                          backend);
}

poot_status poot_device_open(const char *spec, const poot_device_open_options *options,
                             poot_device **out_device) {
  *out_device = NULL;
  if (!spec || !*spec) spec = "auto";
  char name[32];
  int32_t index = -1;
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (len == 0 || len >= sizeof name)
    return poot_status_make(POOT_INVALID_ARGUMENT, "bad device '%s'", spec);
  memcpy(name, spec, len);
  name[len] = '\0';
  if (colon) {
    char *end = NULL;
    long v = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || v < 0 || v > 1000)
      return poot_status_make(POOT_INVALID_ARGUMENT, "bad device index in '%s'", spec);
    index = (int32_t)v;
  }
  bool known = strcmp(name, "auto") == 0;
  for (int i = 0; i < POOT_BACKEND_COUNT; i++) known |= strcmp(name, backend_names[i]) == 0;
  if (!known)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "unknown device '%s' (use auto, ptx, rocm, vulkan, wgpu, npu, or "
                            "backend:index)",
                            spec);
  if (strcmp(name, "auto") != 0) return open_backend(name, index, options, out_device);
  poot_strbuf why;
  poot_strbuf_init(&why);
  for (int i = 0; i < POOT_BACKEND_COUNT; i++) {
    poot_status st = open_backend(backend_names[i], index, options, out_device);
    if (!st) {
      poot_strbuf_deinit(&why);
      return NULL;
    }
    poot_strbuf_printf(&why, "%s%s", why.len ? "; " : "", poot_status_message(st));
    poot_status_free(st);
  }
  poot_status st = poot_status_make(POOT_NO_DEVICE, "no device found (%s)", why.data);
  poot_strbuf_deinit(&why);
  return st;
}
