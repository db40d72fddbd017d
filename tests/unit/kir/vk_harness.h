/* tests/unit/kir/vk_harness.h — a minimal Vulkan compute harness for tests.
 *
 * It runs one SPIR-V compute shader at a time: buffers in, dispatch, buffers
 * out. libvulkan.so.1 is loaded at run time (poot_dylib), so a test program
 * built with it runs on a machine without Vulkan and skips there.
 *
 * The layout it binds is the one KIR's GLSL renderer emits: descriptor set 0,
 * binding i is storage buffer i of the `buffers` array; one push-constant
 * range of `push_size` bytes for the compute stage. The device is created
 * with robustBufferAccess, so an out-of-range access inside a kernel reads
 * zero or is dropped instead of faulting.
 *
 * Not thread safe; one harness per test program. */
#ifndef POOT_TESTS_KIR_VK_HARNESS_H
#define POOT_TESTS_KIR_VK_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

typedef struct vkh vkh;

/* What the device offers (and what the harness enabled on it). */
typedef struct vkh_info {
  char device_name[256];
  uint32_t api_version;
  uint32_t subgroup_size;
  uint32_t subgroup_ops;       /* VkSubgroupFeatureFlags in compute */
  uint32_t max_workgroup_size; /* maxComputeWorkGroupInvocations */
  uint32_t max_shared_bytes;   /* maxComputeSharedMemorySize */
  uint32_t max_push_bytes;     /* maxPushConstantsSize */
  bool shader_int8;
  bool shader_int16;
  bool shader_int64;
  bool shader_float16;
  bool storage_8bit;     /* storageBuffer8BitAccess */
  bool storage_16bit;    /* storageBuffer16BitAccess */
  bool atomic_float_add; /* shaderBufferFloat32AtomicAdd + shared */
  bool robust_buffer_access;
} vkh_info;

/* One buffer of a dispatch: `size` bytes copied in from `data` before the
 * dispatch and copied back into `data` after it. */
typedef struct vkh_buffer {
  void *data;
  size_t size;
} vkh_buffer;

/* Loads libvulkan.so.1, picks the first device with a compute queue and
 * creates a logical device with robustBufferAccess and every feature of
 * vkh_info that the device has. NO_DEVICE when the loader or a device is
 * absent (the caller skips); DEVICE_LOST/UNSUPPORTED on other failures. */
POOT_MUST_USE poot_status vkh_create(vkh **out_h);
void vkh_destroy(vkh *h); /* NULL-safe */
const vkh_info *vkh_get_info(const vkh *h);

/* Runs `spirv` (word_count words, entry point "main") over groups[0..2]
 * workgroups with the given buffers and push constants, waits on a fence for
 * at most timeout_ns, then copies every buffer back. TIMEOUT when the fence
 * wait ran out (resources are then leaked on purpose), DEVICE_LOST when
 * Vulkan failed. */
POOT_MUST_USE poot_status vkh_dispatch(vkh *h, const uint32_t *spirv, size_t word_count,
                                       vkh_buffer *buffers, uint32_t buffer_count, const void *push,
                                       uint32_t push_size, const uint32_t groups[3],
                                       uint64_t timeout_ns);

#endif
