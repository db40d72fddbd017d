/* Target descriptions: the only facts renderers and templates consult. */
#include <stdlib.h>
#include <string.h>

#include "kir_impl.h"

#define BIT(s) POOT_KIR_SCALAR_BIT(POOT_KIR_##s)
#define WORDS (BIT(U32) | BIT(I32) | BIT(F32))
#define INTS32 (BIT(U32) | BIT(I32))
#define ARITH_FULL (BIT(BOOL) | BIT(I32) | BIT(U32) | BIT(I64) | BIT(F16) | BIT(F32))

static void base_init(poot_kir_target *t, const char *name, poot_kir_lang lang) {
  memset(t, 0, sizeof *t);
  t->name = name;
  t->lang = lang;
  t->max_workgroup_size = 1024;
  t->max_workgroup_dims[0] = 1024;
  t->max_workgroup_dims[1] = 1024;
  t->max_workgroup_dims[2] = 64;
  t->max_vector_lanes = 4;
  t->storage_types = POOT_KIR_ALL_STORAGE_TYPES;
  t->arith_types = ARITH_FULL;
  t->max_bindings = 32;
  t->max_push_bytes = 128;
}

static void set_subgroup(poot_kir_target *t, uint32_t size) {
  t->subgroup_size = size;
  t->subgroup_ops = size != 0;
  t->subgroup_size_min = size ? size : 1;
  t->subgroup_size_max = size ? size : 128;
}

void poot_kir_target_init_interp(poot_kir_target *t, uint32_t subgroup_size) {
  base_init(t, "interp", POOT_KIR_LANG_NONE);
  set_subgroup(t, subgroup_size ? subgroup_size : 32);
  t->max_workgroup_size = 4096;
  t->max_workgroup_dims[0] = t->max_workgroup_dims[1] = t->max_workgroup_dims[2] = 4096;
  t->shared_memory_bytes = 1u << 20;
  for (int a = 0; a < POOT_KIR_ATOMIC_COUNT; a++) t->atomic_types[a] = WORDS;
  t->max_bindings = 1024;
  t->max_push_bytes = 4096;
  t->has_trap = true;
}

static void ptx_init(poot_kir_target *t, const char *name, uint32_t sm) {
  base_init(t, name, POOT_KIR_LANG_PTX);
  set_subgroup(t, 32);
  t->shared_memory_bytes = 48 * 1024; /* static shared memory without opt-in */
  t->atomic_types[POOT_KIR_ATOMIC_ADD] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_MAX] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MIN] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_CAS] = WORDS; /* atom.cas.b32 */
  t->max_bindings = 64;
  t->max_push_bytes = 4096;
  t->has_trap = true;
  t->sm_version = sm;
  t->ptx_version = 78;
}

void poot_kir_target_init_sm80(poot_kir_target *t) {
  ptx_init(t, "sm_80", 80);
}
void poot_kir_target_init_sm90(poot_kir_target *t) {
  ptx_init(t, "sm_90", 90);
  t->grid_dependency = true;
}

void poot_kir_target_init_vulkan(poot_kir_target *t, uint32_t subgroup_size) {
  base_init(t, "vulkan", POOT_KIR_LANG_GLSL);
  set_subgroup(t, subgroup_size);
  t->shared_memory_bytes = 32 * 1024;
  t->atomic_types[POOT_KIR_ATOMIC_ADD] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MAX] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MIN] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_CAS] = INTS32;
  t->has_trap = false;
  t->watchdog_ms = 2000; /* desktop drivers reset a GPU busy ~2 s under a display */
  t->vulkan_version = 12;
}

void poot_kir_target_init_lavapipe(poot_kir_target *t, uint32_t subgroup_size) {
  poot_kir_target_init_vulkan(t, subgroup_size);
  t->name = "lavapipe";
  t->simd_cpu = true;
  /* llvmpipe implements VK_EXT_shader_atomic_float (buffer add/exchange). */
  t->atomic_types[POOT_KIR_ATOMIC_ADD] |= BIT(F32);
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] |= BIT(F32);
  t->watchdog_ms = 0;
}

void poot_kir_target_init_webgpu(poot_kir_target *t, uint32_t subgroup_size) {
  base_init(t, "webgpu", POOT_KIR_LANG_WGSL);
  set_subgroup(t, subgroup_size);
  t->max_workgroup_size = 256;
  t->max_workgroup_dims[0] = 256;
  t->max_workgroup_dims[1] = 256;
  t->max_workgroup_dims[2] = 64;
  t->shared_memory_bytes = 16 * 1024;
  t->storage_types = WORDS;
  t->arith_types = BIT(BOOL) | WORDS;
  for (int a = 0; a < POOT_KIR_ATOMIC_COUNT; a++) t->atomic_types[a] = INTS32;
  t->max_bindings = 8; /* maxStorageBuffersPerShaderStage default */
  t->max_push_bytes = 256;
  t->has_trap = false;
}

static void amdgpu_init(poot_kir_target *t, const char *arch, uint32_t wave) {
  base_init(t, arch, POOT_KIR_LANG_AMDGPU);
  set_subgroup(t, wave);
  t->shared_memory_bytes = 64 * 1024;
  t->atomic_types[POOT_KIR_ATOMIC_ADD] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_MAX] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MIN] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_CAS] = WORDS;
  t->max_bindings = 64;
  t->max_push_bytes = 4096;
  t->has_trap = true;
  t->amdgpu_arch = arch;
}

void poot_kir_target_init_gfx90a(poot_kir_target *t) {
  amdgpu_init(t, "gfx90a", 64);
}
void poot_kir_target_init_gfx942(poot_kir_target *t) {
  amdgpu_init(t, "gfx942", 64);
}
void poot_kir_target_init_gfx1100(poot_kir_target *t) {
  amdgpu_init(t, "gfx1100", 32);
}

static bool parse_sg(const char *s, const char *prefix, uint32_t *out) {
  size_t n = strlen(prefix);
  if (strncmp(s, prefix, n) != 0) return false;
  char *end = NULL;
  unsigned long v = strtoul(s + n, &end, 10);
  if (!end || *end || end == s + n || v == 0 || v > 128 || (v & (v - 1))) return false;
  *out = (uint32_t)v;
  return true;
}

poot_status poot_kir_target_by_name(const char *name, poot_kir_target *out) {
  uint32_t sg = 0;
  memset(out, 0, sizeof *out);
  if (!name) name = "";
  if (strcmp(name, "interp") == 0)
    poot_kir_target_init_interp(out, 32);
  else if (parse_sg(name, "interp-sg", &sg))
    poot_kir_target_init_interp(out, sg);
  else if (strcmp(name, "sm_80") == 0)
    poot_kir_target_init_sm80(out);
  else if (strcmp(name, "sm_90") == 0)
    poot_kir_target_init_sm90(out);
  else if (strcmp(name, "vulkan") == 0)
    poot_kir_target_init_vulkan(out, 0);
  else if (parse_sg(name, "vulkan-sg", &sg))
    poot_kir_target_init_vulkan(out, sg);
  else if (strcmp(name, "lavapipe") == 0)
    poot_kir_target_init_lavapipe(out, 8);
  else if (parse_sg(name, "lavapipe-sg", &sg))
    poot_kir_target_init_lavapipe(out, sg);
  else if (strcmp(name, "webgpu") == 0)
    poot_kir_target_init_webgpu(out, 0);
  else if (parse_sg(name, "webgpu-sg", &sg))
    poot_kir_target_init_webgpu(out, sg);
  else if (strcmp(name, "gfx90a") == 0)
    poot_kir_target_init_gfx90a(out);
  else if (strcmp(name, "gfx942") == 0)
    poot_kir_target_init_gfx942(out);
  else if (strcmp(name, "gfx1100") == 0)
    poot_kir_target_init_gfx1100(out);
  else
    return poot_status_make(POOT_NOT_FOUND,
                            "kir: unknown target '%s' (known: interp, interp-sg<N>, sm_80, sm_90, "
                            "vulkan, vulkan-sg<N>, lavapipe, lavapipe-sg<N>, webgpu, "
                            "webgpu-sg<N>, gfx90a, gfx942, gfx1100)",
                            name);
  return POOT_OK_STATUS;
}

static uint64_t mix_str(uint64_t h, const char *s) {
  if (!s) return poot_hash64_mix(h, 0);
  return poot_hash64_mix(h, poot_hash64(s, strlen(s), 17));
}

uint64_t poot_kir_target_hash(const poot_kir_target *t) {
  /* Field by field (never the raw struct: padding and pointers vary). The
   * name is left out: it is for messages only. */
  uint64_t h = 0x6b69722d74677421ull;
  h = poot_hash64_mix(h, (uint64_t)t->lang);
  h = poot_hash64_mix(h, t->subgroup_size);
  h = poot_hash64_mix(h, t->subgroup_size_min);
  h = poot_hash64_mix(h, t->subgroup_size_max);
  h = poot_hash64_mix(h, t->subgroup_ops);
  h = poot_hash64_mix(h, t->max_workgroup_size);
  for (int i = 0; i < 3; i++) h = poot_hash64_mix(h, t->max_workgroup_dims[i]);
  h = poot_hash64_mix(h, t->shared_memory_bytes);
  h = poot_hash64_mix(h, t->storage_types);
  h = poot_hash64_mix(h, t->arith_types);
  for (int i = 0; i < POOT_KIR_ATOMIC_COUNT; i++) h = poot_hash64_mix(h, t->atomic_types[i]);
  h = poot_hash64_mix(h, t->max_vector_lanes);
  h = poot_hash64_mix(h, t->max_bindings);
  h = poot_hash64_mix(h, t->max_push_bytes);
  h = poot_hash64_mix(h, t->has_trap);
  h = poot_hash64_mix(h, t->simd_cpu);
  h = poot_hash64_mix(h, t->grid_dependency);
  h = poot_hash64_mix(h, t->watchdog_ms);
  h = poot_hash64_mix(h, t->sm_version);
  h = poot_hash64_mix(h, t->ptx_version);
  h = mix_str(h, t->amdgpu_arch);
  h = poot_hash64_mix(h, t->vulkan_version);
  return h;
}

poot_hash128 poot_kir_cache_key(const poot_kir_kernel *kernel, const poot_kir_target *target) {
  return poot_hash128_mix(kernel->hash128, poot_kir_target_hash(target));
}

bool poot_kir_kernel_same(const poot_kir_kernel *a, const poot_kir_kernel *b) {
  return a->text_len == b->text_len && memcmp(a->text, b->text, a->text_len) == 0;
}
