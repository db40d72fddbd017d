/* The Vulkan device's private header: the loaded entry points and the
 * objects that embed poot/exec.h's bases. Never leaves src/devices/vulkan. */
#ifndef POOT_DEVICES_VULKAN_VK_IMPL_H
#define POOT_DEVICES_VULKAN_VK_IMPL_H

#include "poot/devices.h"
#include "poot/exec.h"

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <pthread.h>

/* Instance-level entry points, resolved with vkGetInstanceProcAddr. */
#define POOT_VK_INSTANCE_FNS(X)               \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

/* Device-level entry points, resolved with vkGetDeviceProcAddr. */
#define POOT_VK_DEVICE_FNS(X)      \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkGetPipelineCacheData)        \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkFreeCommandBuffers)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdCopyBuffer)               \
  X(vkCmdPipelineBarrier)          \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkResetFences)                 \
  X(vkQueueSubmit)                 \
  X(vkWaitForFences)               \
  X(vkGetFenceStatus)              \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkCmdResetQueryPool)           \
  X(vkCmdWriteTimestamp)           \
  X(vkGetQueryPoolResults)

#define POOT_VK_DECLARE(name) PFN_##name name;

/* The loader and instance (shared by the probe and the device). */
typedef struct poot_vk_instance {
  poot_dylib *lib;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  POOT_VK_INSTANCE_FNS(POOT_VK_DECLARE)
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  bool validation;
  uint32_t validation_messages;
} poot_vk_instance;

typedef struct poot_vk_device {
  poot_device base; /* first member */
  poot_vk_instance vi;
  POOT_VK_DEVICE_FNS(POOT_VK_DECLARE)
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkPhysicalDeviceMemoryProperties mem;
  uint32_t local_type;    /* memory type for LOCAL buffers */
  uint32_t slot_type;     /* host-visible coherent type for SLOT and staging buffers */
  bool local_mappable;    /* LOCAL memory is host-visible and coherent (CPU, UMA) */
  uint64_t storage_align; /* minStorageBufferOffsetAlignment */
  VkCommandPool cmd_pool;
  VkFence fence;
  /* Fence waits poll the fence this long before blocking (a GPU: the
   * driver's blocking wait wakes ~0.2 ms late on some; 0: block at once, as
   * on a CPU device, whose work needs the cores; poot_vulkan_options.spin_us). */
  uint64_t spin_ns;
  poot_vulkan_fault inject;
  /* Kernel creation: how many, their time, and the diagnostic (the
   * per-kernel log at WARN and a budget after which creation ends in
   * TIMEOUT; poot_vulkan_options.diag). */
  uint32_t kernels_created;
  uint64_t kernel_ns;
  bool diag;
  uint64_t diag_budget_ns;
  /* Kernels may be created on several threads (vk_device.c, kernels_create:
   * glslang compiles in parallel, src/kir/spirv.c; vkCreateShaderModule,
   * vkCreateDescriptorSetLayout, vkCreatePipelineLayout and
   * vkCreateComputePipelines need no external synchronization of the device,
   * and the VkPipelineCache is not created EXTERNALLY_SYNCHRONIZED, so the
   * driver synchronizes it): the counters above and pipeline_cache_hits are
   * updated under this lock. */
  pthread_mutex_t create_lock;
  uint32_t compile_threads; /* threads kernels_create uses (1: one by one) */
  /* The VkPipelineCache (vk_cache.c), VK_NULL_HANDLE when disabled. */
  VkPipelineCache pipeline_cache;
  char *pipeline_cache_path;    /* owned; NULL: never written */
  size_t pipeline_cache_loaded; /* bytes read at create (0: cold) */
  uint32_t pipeline_cache_hits; /* pipelines the cache answered (feedback) */
  bool creation_feedback;       /* VK_EXT_pipeline_creation_feedback enabled */
  /* The diagnostic's pipeline statistics (VK_KHR_pipeline_executable_properties,
   * enabled only with diag where the device has it): each kernel's registers,
   * instructions and the like, as the driver words them. */
  PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR;
  PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR;
  double timestamp_ns;     /* nanoseconds per timestamp tick (0: cannot time) */
  uint64_t timestamp_mask; /* valid bits of a timestamp */
} poot_vk_device;

typedef struct poot_vk_buffer {
  poot_device_buffer base; /* first member */
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped; /* SLOT, or LOCAL when mappable */
} poot_vk_buffer;

typedef struct poot_vk_kernel {
  poot_device_kernel base; /* first member */
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t *binding_numbers; /* KIR binding numbers, in binding order */
  uint32_t error_binding;
  uint32_t descriptor_count; /* bindings + error word */
} poot_vk_kernel;

typedef struct poot_vk_recording {
  poot_device_recording base; /* first member */
  VkDescriptorPool pool;
  uint32_t cb_count;
  VkCommandBuffer *cbs;
  /* One error word per checked dispatch, each at a storage-aligned offset
   * of a host-visible buffer; the host zeroes them before each replay. */
  poot_vk_buffer *errors;
  uint32_t checked_count;
  uint32_t *checked_dispatch; /* command index of each checked dispatch */
  char **checked_kernel;      /* its kernel's name (owned) */
  char **checked_label;       /* its label (owned, may be NULL) */
  VkQueryPool timestamps;     /* start and end of the replay, when the device can time */
} poot_vk_recording;

/* The Vulkan device's vtable, its type tag (vk_device.c). */
extern const poot_device_vtable poot__vk_vtable;

/* Checked downcasts (STYLE: interfaces): NULL, or INTERNAL from
 * poot__vk_device_of, for a device of another backend. */
static inline poot_vk_device *poot__vk_device_cast(const poot_device *d) {
  return POOT_DOWNCAST(poot_vk_device, base, d, &poot__vk_vtable);
}
POOT_MUST_USE static inline poot_status poot__vk_device_of(poot_device *d,
                                                           poot_vk_device **out_device) {
  *out_device = poot__vk_device_cast(d);
  return poot_downcast_check(*out_device, "Vulkan device");
}

/* vk_instance.c */
POOT_MUST_USE poot_status poot__vk_instance_create(poot_vk_instance *vi, bool validation);
void poot__vk_instance_destroy(poot_vk_instance *vi);
/* A poisoned device's loader: never closed (its instance and device are
 * leaked on purpose with it), kept reachable. */
void poot__vk_instance_abandon(poot_vk_instance *vi);
const char *poot__vk_kind_name(VkPhysicalDeviceType type);
poot_status poot__vk_fail(const char *what, VkResult r);
/* Fills `info` for physical device `phys`: usable and why not. */
void poot__vk_describe(poot_vk_instance *vi, VkPhysicalDevice phys, uint32_t index,
                       poot_device_info *info);

/* vk_record.c: kernels, recordings, replay, synchronize. */
POOT_MUST_USE poot_status poot__vk_kernel_create(poot_device *device, const poot_kir_kernel *kir,
                                                 poot_device_kernel **out_kernel);
void poot__vk_kernel_destroy(poot_device *device, poot_device_kernel *kernel);
POOT_MUST_USE poot_status poot__vk_record(poot_device *device, const poot_device_cmd *cmds,
                                          uint32_t count, const uint32_t *stage_of,
                                          uint32_t stage_count,
                                          poot_device_recording **out_recording);
void poot__vk_recording_destroy(poot_device *device, poot_device_recording *recording);
POOT_MUST_USE poot_status poot__vk_replay(poot_device *device, poot_device_recording *recording);
POOT_MUST_USE poot_status poot__vk_synchronize(poot_device *device, uint64_t timeout_ns,
                                               uint64_t *out_device_ns);

/* vk_probe.c: sets caps.target.fma_fused by one dispatch that compares the
 * device's fma() with the host's fmaf (device creation). */
POOT_MUST_USE poot_status poot__vk_probe_fma(poot_vk_device *d);
/* vk_probe.c: sets caps.target.f16_widen_native and f16_narrow_native by
 * two dispatches that compare the device's unpackHalf2x16 over every half
 * and its packHalf2x16 over every f16 rounding tie with base.h; exact_only:
 * both stay false (poot_vulkan_options.exact_f16). */
POOT_MUST_USE poot_status poot__vk_probe_f16(poot_vk_device *d, bool exact_only);

/* vk_cache.c: the VkPipelineCache file. open: reads and validates it (a
 * corrupt or foreign file is ignored with a warning) and creates the cache;
 * never fails (without a cache, pipelines are compiled). close: writes it
 * back atomically when pipelines were created, destroys it. */
void poot__vk_cache_open(poot_vk_device *d, const poot_vulkan_options *o);
void poot__vk_cache_close(poot_vk_device *d);

/* vk_device.c: buffers (used by the recorder for error words). */
POOT_MUST_USE poot_status poot__vk_buffer_create(poot_device *device, poot_device_buffer_kind kind,
                                                 uint64_t size, poot_device_buffer **out_buffer);
void poot__vk_buffer_destroy(poot_device *device, poot_device_buffer *buffer);
/* Submits one command buffer and waits (bounded) — uploads, downloads. */
/* Waits for d->fence (polled for d->spin_ns first, then blocking, within
 * timeout_ns in all) and resets it. VK_TIMEOUT is returned as is (the caller
 * words its TIMEOUT); another failure as the VkResult. */
VkResult poot__vk_fence_wait(poot_vk_device *d, uint64_t timeout_ns);
POOT_MUST_USE poot_status poot__vk_submit_wait(poot_vk_device *d, VkCommandBuffer cb);

#endif
