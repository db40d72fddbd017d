/* The device catalogue: the named targets kernels are rendered for without
 * an opened device, and the watchdog budgets. KIR knows only what a target
 * is and each language's defaults (poot_kir_target_init); the facts of a
 * device model are here. */
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"

#define BIT(s) POOT_KIR_SCALAR_BIT(POOT_KIR_##s)

/* The most shared memory a block may opt in to (dynamic shared memory
 * through cuFuncSetAttribute), as the CUDA programming guide's table of
 * compute capabilities gives it: 163 KiB on 8.0, 227 KiB on 9.0. A device
 * reports its own (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
 * these are for compiling without one. */
#define SM80_SHARED_OPTIN 166912u
#define SM90_SHARED_OPTIN 232448u

static void ptx_target(poot_kir_target *t, const char *name, uint32_t sm, uint32_t optin) {
  poot_kir_target_init(t, POOT_KIR_LANG_PTX, 32);
  t->name = name;
  t->sm_version = sm;
  t->shared_memory_optin_bytes = optin;
}

static void vulkan_target(poot_kir_target *t, uint32_t subgroup_size) {
  poot_kir_target_init(t, POOT_KIR_LANG_GLSL, subgroup_size);
  t->name = "vulkan";
  t->shared_memory_bytes = 32 * 1024;
  t->watchdog_ms = POOT_DEVICE_WATCHDOG_DESKTOP_MS;
}

static void lavapipe_target(poot_kir_target *t, uint32_t subgroup_size) {
  vulkan_target(t, subgroup_size);
  t->name = "lavapipe";
  t->simd_cpu = true;
  /* llvmpipe implements VK_EXT_shader_atomic_float (buffer add/exchange). */
  t->atomic_types[POOT_KIR_ATOMIC_ADD] |= BIT(F32);
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] |= BIT(F32);
  t->watchdog_ms = 0; /* a CPU device has no display to protect */
}

static void webgpu_target(poot_kir_target *t, uint32_t subgroup_size) {
  poot_kir_target_init(t, POOT_KIR_LANG_WGSL, subgroup_size);
  t->name = "webgpu";
  t->max_workgroup_size = 256;
  t->max_workgroup_dims[0] = 256;
  t->max_workgroup_dims[1] = 256;
  t->max_workgroup_dims[2] = 64;
  t->shared_memory_bytes = 16 * 1024;
  t->max_bindings = 8; /* maxStorageBuffersPerShaderStage default */
  t->max_push_bytes = 256;
}

static void amdgpu_target(poot_kir_target *t, const char *arch, uint32_t wave) {
  poot_kir_target_init(t, POOT_KIR_LANG_AMDGPU, wave);
  t->name = arch;
  t->amdgpu_arch = arch;
}

void poot_device_target_init(poot_device_target_id id, uint32_t subgroup_size,
                             poot_kir_target *out_target) {
  poot_kir_target *t = out_target;
  switch (id) {
    case POOT_DEVICE_TARGET_INTERP:
      poot_kir_target_init_interp(t, subgroup_size);
      return;
    case POOT_DEVICE_TARGET_SM80:
      ptx_target(t, "sm_80", 80, SM80_SHARED_OPTIN);
      return;
    case POOT_DEVICE_TARGET_SM90:
      ptx_target(t, "sm_90", 90, SM90_SHARED_OPTIN);
      t->grid_dependency = true;
      return;
    case POOT_DEVICE_TARGET_VULKAN:
      vulkan_target(t, subgroup_size);
      return;
    case POOT_DEVICE_TARGET_LAVAPIPE:
      lavapipe_target(t, subgroup_size);
      return;
    case POOT_DEVICE_TARGET_WEBGPU:
      webgpu_target(t, subgroup_size);
      return;
    case POOT_DEVICE_TARGET_GFX90A:
      amdgpu_target(t, "gfx90a", 64);
      t->dot4_native = true; /* v_dot4_i32_i8 (LLVM 14 selects none on gfx942, gfx1100) */
      return;
    case POOT_DEVICE_TARGET_GFX942:
      amdgpu_target(t, "gfx942", 64);
      return;
    case POOT_DEVICE_TARGET_GFX1100:
      amdgpu_target(t, "gfx1100", 32);
      return;
    case POOT_DEVICE_TARGET_COUNT:
      break;
  }
  memset(t, 0, sizeof *t);
}

/* The names poot_device_target_by_name knows. An entry with a subgroup
 * suffix also takes "<name>-sg<N>". */
typedef struct catalogue_name {
  const char *name;
  poot_device_target_id id;
  bool sg_suffix;
  uint32_t default_sg;
} catalogue_name;

static const catalogue_name names[] = {
    {"interp", POOT_DEVICE_TARGET_INTERP, true, 32},
    {"sm_80", POOT_DEVICE_TARGET_SM80, false, 0},
    {"sm_90", POOT_DEVICE_TARGET_SM90, false, 0},
    {"vulkan", POOT_DEVICE_TARGET_VULKAN, true, 0},
    {"lavapipe", POOT_DEVICE_TARGET_LAVAPIPE, true, 8},
    {"webgpu", POOT_DEVICE_TARGET_WEBGPU, true, 0},
    {"gfx90a", POOT_DEVICE_TARGET_GFX90A, false, 0},
    {"gfx942", POOT_DEVICE_TARGET_GFX942, false, 0},
    {"gfx1100", POOT_DEVICE_TARGET_GFX1100, false, 0},
};

/* "<prefix>-sg<N>" with N a power of two in [1, 128]. */
static bool parse_sg(const char *s, const char *prefix, uint32_t *out) {
  size_t n = strlen(prefix);
  if (strncmp(s, prefix, n) != 0 || strncmp(s + n, "-sg", 3) != 0) return false;
  n += 3;
  char *end = NULL;
  unsigned long v = strtoul(s + n, &end, 10);
  if (!end || *end || end == s + n || v == 0 || v > 128 || (v & (v - 1))) return false;
  *out = (uint32_t)v;
  return true;
}

poot_status poot_device_target_by_name(const char *name, poot_kir_target *out_target) {
  memset(out_target, 0, sizeof *out_target);
  if (!name) name = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const catalogue_name *c = &names[i];
    uint32_t sg = c->default_sg;
    if (strcmp(name, c->name) == 0 || (c->sg_suffix && parse_sg(name, c->name, &sg))) {
      poot_device_target_init(c->id, sg, out_target);
      return POOT_OK_STATUS;
    }
  }
  return poot_status_make(POOT_NOT_FOUND,
                          "devices: unknown target '%s' (known: interp, interp-sg<N>, sm_80, "
                          "sm_90, vulkan, vulkan-sg<N>, lavapipe, lavapipe-sg<N>, webgpu, "
                          "webgpu-sg<N>, gfx90a, gfx942, gfx1100)",
                          name);
}
