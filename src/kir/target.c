/* Target descriptions: the only facts renderers and templates consult.
 * KIR knows what a target is, each language's defaults and the
 * interpreter's target; the named devices are in src/devices/catalogue.c. */
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

/* PTX: warps of 32, 48 KiB of static shared memory (without the opt-in),
 * 32-bit atomics with atom.cas.b32, a real trap, PTX ISA 7.8. */
static void ptx_defaults(poot_kir_target *t) {
  t->shared_memory_bytes = 48 * 1024;
  t->atomic_types[POOT_KIR_ATOMIC_ADD] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_MAX] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MIN] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_CAS] = WORDS;
  t->max_bindings = 64;
  t->max_push_bytes = 4096;
  t->has_trap = true;
  t->ptx_version = 78;
  t->dot4_native = true; /* dp4a: sm_61 and later */
}

/* GLSL for Vulkan 1.2: integer atomics only, no trap (the error word). */
static void glsl_defaults(poot_kir_target *t) {
  for (int a = 0; a < POOT_KIR_ATOMIC_COUNT; a++) t->atomic_types[a] = INTS32;
  t->has_trap = false;
  t->vulkan_version = 12;
  t->gemv_block_words = 48;
}

/* WGSL: 32-bit types only, integer atomics, no trap. */
static void wgsl_defaults(poot_kir_target *t) {
  t->storage_types = WORDS;
  t->arith_types = BIT(BOOL) | WORDS;
  for (int a = 0; a < POOT_KIR_ATOMIC_COUNT; a++) t->atomic_types[a] = INTS32;
  t->has_trap = false;
}

/* LLVM IR for amdgcn: 64 KiB of LDS, 32-bit atomics, a real trap. */
static void amdgpu_defaults(poot_kir_target *t) {
  t->shared_memory_bytes = 64 * 1024;
  t->atomic_types[POOT_KIR_ATOMIC_ADD] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_MAX] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_MIN] = INTS32;
  t->atomic_types[POOT_KIR_ATOMIC_XCHG] = WORDS;
  t->atomic_types[POOT_KIR_ATOMIC_CAS] = WORDS;
  t->max_bindings = 64;
  t->max_push_bytes = 4096;
  t->has_trap = true;
}

void poot_kir_target_init(poot_kir_target *t, poot_kir_lang lang, uint32_t subgroup_size) {
  switch (lang) {
    case POOT_KIR_LANG_PTX:
      base_init(t, "ptx", lang);
      set_subgroup(t, subgroup_size);
      ptx_defaults(t);
      return;
    case POOT_KIR_LANG_GLSL:
      base_init(t, "glsl", lang);
      set_subgroup(t, subgroup_size);
      glsl_defaults(t);
      return;
    case POOT_KIR_LANG_WGSL:
      base_init(t, "wgsl", lang);
      set_subgroup(t, subgroup_size);
      wgsl_defaults(t);
      return;
    case POOT_KIR_LANG_AMDGPU:
      base_init(t, "amdgpu", lang);
      set_subgroup(t, subgroup_size);
      amdgpu_defaults(t);
      return;
    case POOT_KIR_LANG_NONE:
      break;
  }
  poot_kir_target_init_interp(t, subgroup_size);
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
  /* shared_memory_optin_bytes is left out: no renderer's text depends on
   * it (a kernel's own shared window decides PTX's static or dynamic
   * form), only what the verifier accepts. */
  h = poot_hash64_mix(h, t->storage_types);
  h = poot_hash64_mix(h, t->arith_types);
  for (int i = 0; i < POOT_KIR_ATOMIC_COUNT; i++) h = poot_hash64_mix(h, t->atomic_types[i]);
  h = poot_hash64_mix(h, t->max_vector_lanes);
  h = poot_hash64_mix(h, t->max_bindings);
  h = poot_hash64_mix(h, t->max_push_bytes);
  h = poot_hash64_mix(h, t->has_trap);
  h = poot_hash64_mix(h, t->simd_cpu);
  if (t->fma_fused) h = poot_hash64_mix(h, 0x666d61u); /* only when set: older hashes stay */
  if (t->f16_widen_native) h = poot_hash64_mix(h, 0x663136771u); /* likewise */
  if (t->f16_narrow_native) h = poot_hash64_mix(h, 0x6631366eu);
  if (t->gemv_block_words) h = poot_hash64_mix(h, 0x67627700u + t->gemv_block_words);
  /* dot4_native changes only the AMDGPU renderer's text (PTX renders dp4a
   * whatever it says; templates that read it build different KIR, which
   * the kernel hash already tells apart): mixed in there only. */
  if (t->dot4_native && t->lang == POOT_KIR_LANG_AMDGPU) h = poot_hash64_mix(h, 0x646f7434u);
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

bool poot_kir_target_has_matrix(const poot_kir_target *t) {
  if (!t) return false;
  if (t->lang == POOT_KIR_LANG_NONE) return true;
  return t->lang == POOT_KIR_LANG_PTX && t->sm_version >= 80;
}
