/* The Vulkan device: physical device selection, the logical device with
 * robustBufferAccess, the KIR target it compiles for, buffers, uploads and
 * downloads. Kernels and recordings are in vk_record.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vk_impl.h"

void poot_vulkan_options_init(poot_vulkan_options *options) {
  memset(options, 0, sizeof *options);
  options->index = -1;
}

static int kind_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

/* Picks options->index, or the best usable device by kind. */
static poot_status pick_device(poot_vk_device *d, int32_t index) {
  poot_vk_instance *vi = &d->vi;
  uint32_t n = 0;
  VkResult r = vi->vkEnumeratePhysicalDevices(vi->instance, &n, NULL);
  if (r != VK_SUCCESS || n == 0)
    return poot_status_make(POOT_NO_DEVICE, "vulkan: the loader lists no device");
  VkPhysicalDevice devs[16];
  if (n > 16) n = 16;
  r = vi->vkEnumeratePhysicalDevices(vi->instance, &n, devs);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return poot__vk_fail("vkEnumeratePhysicalDevices", r);
  poot_device_info info;
  if (index >= 0) {
    if ((uint32_t)index >= n)
      return poot_status_make(POOT_NOT_FOUND, "vulkan: no device %d (%u found)", (int)index, n);
    poot__vk_describe(vi, devs[index], (uint32_t)index, &info);
    if (!info.usable)
      return poot_status_make(POOT_UNSUPPORTED, "vulkan: device %d (%s) is refused: %s", (int)index,
                              info.name, info.why);
    d->phys = devs[index];
    d->base.caps.index = (uint32_t)index;
    return NULL;
  }
  int best = -1, best_rank = 99;
  char why[512] = "";
  for (uint32_t i = 0; i < n; i++) {
    poot__vk_describe(vi, devs[i], i, &info);
    if (!info.usable) {
      size_t len = strlen(why);
      snprintf(why + len, sizeof why - len, "%s%s: %s", len ? "; " : "", info.name, info.why);
      continue;
    }
    VkPhysicalDeviceProperties p;
    vi->vkGetPhysicalDeviceProperties(devs[i], &p);
    if (kind_rank(p.deviceType) < best_rank) {
      best_rank = kind_rank(p.deviceType);
      best = (int)i;
    }
  }
  if (best < 0) return poot_status_make(POOT_UNSUPPORTED, "vulkan: no usable device (%s)", why);
  d->phys = devs[best];
  d->base.caps.index = (uint32_t)best;
  return NULL;
}

static bool has_extension(const VkExtensionProperties *e, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(e[i].extensionName, name) == 0) return true;
  return false;
}

static uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties *mem, uint32_t bits,
                                 VkMemoryPropertyFlags want) {
  for (uint32_t t = 0; t < mem->memoryTypeCount; t++)
    if ((bits & (1u << t)) && (mem->memoryTypes[t].propertyFlags & want) == want) return t;
  return UINT32_MAX;
}

/* Creates the logical device with every feature KIR kernels may use that
 * the device has, and fills the KIR target from what it reports. */
static poot_status create_logical(poot_vk_device *d, const poot_vulkan_options *o) {
  poot_vk_instance *vi = &d->vi;
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  vi->vkGetPhysicalDeviceProperties2(d->phys, &p2);
  vi->vkGetPhysicalDeviceMemoryProperties(d->phys, &d->mem);
  const VkPhysicalDeviceLimits *lim = &p2.properties.limits;
  poot_device_caps *caps = &d->base.caps;
  caps->backend = "vulkan";
  snprintf(caps->name, sizeof caps->name, "%s", p2.properties.deviceName);
  snprintf(caps->kind, sizeof caps->kind, "%s", poot__vk_kind_name(p2.properties.deviceType));
  d->storage_align =
      lim->minStorageBufferOffsetAlignment ? lim->minStorageBufferOffsetAlignment : 4;

  uint32_t qn = 0;
  vi->vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &qn, NULL);
  VkQueueFamilyProperties q[16];
  if (qn > 16) qn = 16;
  vi->vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &qn, q);
  d->queue_family = UINT32_MAX;
  for (uint32_t i = 0; i < qn && d->queue_family == UINT32_MAX; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) d->queue_family = i;
  uint32_t ts_bits = d->queue_family < qn ? q[d->queue_family].timestampValidBits : 0;
  if (ts_bits && lim->timestampPeriod > 0) {
    d->timestamp_ns = lim->timestampPeriod;
    d->timestamp_mask = ts_bits >= 64 ? UINT64_MAX : (1ull << ts_bits) - 1;
  }

  uint32_t en = 0;
  VkResult r = vi->vkEnumerateDeviceExtensionProperties(d->phys, NULL, &en, NULL);
  if (r != VK_SUCCESS) return poot__vk_fail("vkEnumerateDeviceExtensionProperties", r);
  VkExtensionProperties *exts = poot_calloc(en ? en : 1, sizeof *exts);
  if (!exts) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: extension list");
  r = vi->vkEnumerateDeviceExtensionProperties(d->phys, NULL, &en, exts);
  bool atomic_float = r == VK_SUCCESS && has_extension(exts, en, "VK_EXT_shader_atomic_float");
  d->creation_feedback =
      r == VK_SUCCESS && has_extension(exts, en, "VK_EXT_pipeline_creation_feedback");
  bool exec_props = o->diag && r == VK_SUCCESS &&
                    has_extension(exts, en, "VK_KHR_pipeline_executable_properties");
  poot_free(exts);

  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = atomic_float ? &af : NULL};
  VkPhysicalDeviceVulkan11Features f11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &f11};
  vi->vkGetPhysicalDeviceFeatures2(d->phys, &f2);
  if (!f2.features.robustBufferAccess)
    return poot_status_make(POOT_UNSUPPORTED,
                            "vulkan: device '%s' lacks robustBufferAccess, which poot needs so "
                            "that a kernel whose check fails stays inside its buffers",
                            caps->name);

  /* Enable exactly what is there, nothing the kernels cannot use. */
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
      .shaderBufferFloat32AtomicAdd = af.shaderBufferFloat32AtomicAdd,
      .shaderBufferFloat32Atomics = af.shaderBufferFloat32Atomics,
      .shaderSharedFloat32AtomicAdd = af.shaderSharedFloat32AtomicAdd,
      .shaderSharedFloat32Atomics = af.shaderSharedFloat32Atomics};
  VkPhysicalDeviceVulkan12Features f12_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = atomic_float ? &af_on : NULL,
      .storageBuffer8BitAccess = f12.storageBuffer8BitAccess,
      .shaderFloat16 = f12.shaderFloat16,
      .shaderInt8 = f12.shaderInt8,
      .shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics,
      .shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics,
      .vulkanMemoryModel = f12.vulkanMemoryModel,
      .vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope,
      .shaderSubgroupExtendedTypes = f12.shaderSubgroupExtendedTypes};
  VkPhysicalDeviceVulkan11Features f11_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
      .pNext = &f12_on,
      .storageBuffer16BitAccess = f11.storageBuffer16BitAccess};
  VkPhysicalDeviceFeatures2 f2_on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &f11_on};
  f2_on.features.robustBufferAccess = VK_TRUE;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = f2_on.pNext,
      .pipelineExecutableInfo = VK_TRUE};
  if (exec_props) f2_on.pNext = &exec_on;
  f2_on.features.shaderInt16 = f2.features.shaderInt16;
  f2_on.features.shaderInt64 = f2.features.shaderInt64;

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = d->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  /* Pipeline creation feedback says whether the pipeline cache answered
   * (counted as hits); optional. */
  const char *ext_names[3];
  uint32_t ext_count = 0;
  if (atomic_float) ext_names[ext_count++] = "VK_EXT_shader_atomic_float";
  if (d->creation_feedback) ext_names[ext_count++] = "VK_EXT_pipeline_creation_feedback";
  if (exec_props) ext_names[ext_count++] = "VK_KHR_pipeline_executable_properties";
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2_on,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = ext_count,
                            .ppEnabledExtensionNames = ext_names};
  r = vi->vkCreateDevice(d->phys, &dci, NULL, &d->device);
  if (r != VK_SUCCESS) return poot__vk_fail("vkCreateDevice", r);
#define POOT_VK_LOAD_D(name)                                       \
  d->name = (PFN_##name)vi->vkGetDeviceProcAddr(d->device, #name); \
  if (!d->name) return poot_status_make(POOT_DEVICE_LOST, "vulkan: device lacks %s", #name);
  POOT_VK_DEVICE_FNS(POOT_VK_LOAD_D)
#undef POOT_VK_LOAD_D
  d->vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
  if (exec_props) {
    d->vkGetPipelineExecutablePropertiesKHR =
        (PFN_vkGetPipelineExecutablePropertiesKHR)vi->vkGetDeviceProcAddr(
            d->device, "vkGetPipelineExecutablePropertiesKHR");
    d->vkGetPipelineExecutableStatisticsKHR =
        (PFN_vkGetPipelineExecutableStatisticsKHR)vi->vkGetDeviceProcAddr(
            d->device, "vkGetPipelineExecutableStatisticsKHR");
  }

  /* The KIR target: GLSL's defaults and what this device reports. */
  const VkSubgroupFeatureFlags need_sg =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
      VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
  bool sg_ok = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
               (sg.supportedOperations & need_sg) == need_sg && sg.subgroupSize > 0;
  poot_kir_target *t = &caps->target;
  poot_kir_target_init(t, POOT_KIR_LANG_GLSL, sg_ok ? sg.subgroupSize : 0);
  t->name = "vulkan-device";
  /* gpu_forms: the planner's GPU forms on a CPU implementation too (the
   * kernels are correct for any subgroup size; only their speed differs). */
  t->simd_cpu = p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !o->gpu_forms;
  t->max_workgroup_size = lim->maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; i++) t->max_workgroup_dims[i] = lim->maxComputeWorkGroupSize[i];
  t->shared_memory_bytes = lim->maxComputeSharedMemorySize;
  t->max_push_bytes = lim->maxPushConstantsSize;
  uint32_t max_bind = lim->maxPerStageDescriptorStorageBuffers;
  t->max_bindings = max_bind < 64 ? max_bind : 64;
  if (!f12.storageBuffer8BitAccess || !f12.shaderInt8)
    t->storage_types &= ~(POOT_KIR_SCALAR_BIT(POOT_KIR_I8) | POOT_KIR_SCALAR_BIT(POOT_KIR_U8));
  if (!f11.storageBuffer16BitAccess || !f2.features.shaderInt16)
    t->storage_types &= ~(POOT_KIR_SCALAR_BIT(POOT_KIR_I16) | POOT_KIR_SCALAR_BIT(POOT_KIR_U16) |
                          POOT_KIR_SCALAR_BIT(POOT_KIR_F16) | POOT_KIR_SCALAR_BIT(POOT_KIR_BF16));
  if (!f2.features.shaderInt64) {
    t->storage_types &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
    t->arith_types &= ~POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  }
  if (atomic_float && af.shaderBufferFloat32AtomicAdd && af.shaderSharedFloat32AtomicAdd)
    t->atomic_types[POOT_KIR_ATOMIC_ADD] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
  if (atomic_float && af.shaderBufferFloat32Atomics && af.shaderSharedFloat32Atomics)
    t->atomic_types[POOT_KIR_ATOMIC_XCHG] |= POOT_KIR_SCALAR_BIT(POOT_KIR_F32);
  t->watchdog_ms = o->watchdog_ms;
  caps->watchdog_ms = o->watchdog_ms;
  caps->can_time = d->timestamp_ns > 0;

  for (uint32_t h = 0; h < d->mem.memoryHeapCount; h++) {
    if (d->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      caps->local_bytes += d->mem.memoryHeaps[h].size;
  }
  for (uint32_t i = 0; i < d->mem.memoryTypeCount; i++) {
    if (d->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      caps->host_visible_bytes = d->mem.memoryHeaps[d->mem.memoryTypes[i].heapIndex].size;
      break;
    }
  }
  return NULL;
}

/* Memory types for the buffer usage poot uses (every storage buffer has the
 * same usage, so one probe buffer answers for all). */
static poot_status pick_memory(poot_vk_device *d, bool force_staging) {
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = 256,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkBuffer probe;
  VkResult r = d->vkCreateBuffer(d->device, &bci, NULL, &probe);
  if (r != VK_SUCCESS) return poot__vk_fail("vkCreateBuffer", r);
  VkMemoryRequirements req;
  d->vkGetBufferMemoryRequirements(d->device, probe, &req);
  d->vkDestroyBuffer(d->device, probe, NULL);
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  d->slot_type = find_memory_type(&d->mem, req.memoryTypeBits, host);
  if (d->slot_type == UINT32_MAX)
    return poot_status_make(POOT_UNSUPPORTED, "vulkan: no host-visible coherent memory type");
  /* A CPU or integrated device shares host memory: take device-local memory
   * the host can map (no staging). A discrete GPU keeps weights and
   * activations in its own memory (host-visible device memory is a small BAR
   * window there), reached through staging copies. */
  bool uma = strcmp(d->base.caps.kind, "cpu") == 0 || strcmp(d->base.caps.kind, "integrated") == 0;
  d->local_type = uma ? find_memory_type(&d->mem, req.memoryTypeBits,
                                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host)
                      : UINT32_MAX;
  if (d->local_type == UINT32_MAX)
    d->local_type =
        find_memory_type(&d->mem, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (d->local_type == UINT32_MAX) d->local_type = d->slot_type;
  d->local_mappable =
      !force_staging && (d->mem.memoryTypes[d->local_type].propertyFlags & host) == host;
  return NULL;
}

static void vk_destroy(poot_device *device) {
  poot_vk_device *d = poot__vk_device_cast(device);
  if (!d) return;
  if (device->poisoned) {
    /* Pending work may still reference anything of this device: leak every
     * Vulkan object (the device and the loader too) and free host memory. */
    poot__vk_instance_abandon(&d->vi);
    poot_free(d->pipeline_cache_path); /* the cache itself is left, unwritten */
    pthread_mutex_destroy(&d->create_lock);
    poot_free(d);
    return;
  }
  if (d->device && d->vkDestroyDevice) {
    if (d->vkDeviceWaitIdle) (void)d->vkDeviceWaitIdle(d->device);
    poot__vk_cache_close(d);
    if (d->fence) d->vkDestroyFence(d->device, d->fence, NULL);
    if (d->cmd_pool) d->vkDestroyCommandPool(d->device, d->cmd_pool, NULL);
    d->vkDestroyDevice(d->device, NULL);
  } else if (d->device && d->vi.vkGetDeviceProcAddr) {
    PFN_vkDestroyDevice destroy =
        (PFN_vkDestroyDevice)d->vi.vkGetDeviceProcAddr(d->device, "vkDestroyDevice");
    if (destroy) destroy(d->device, NULL);
  }
  poot__vk_instance_destroy(&d->vi);
  pthread_mutex_destroy(&d->create_lock);
  poot_free(d);
}

poot_status poot__vk_buffer_create(poot_device *device, poot_device_buffer_kind kind, uint64_t size,
                                   poot_device_buffer **out_buffer) {
  *out_buffer = NULL;
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_buffer *b = poot_calloc(1, sizeof *b);
  if (!b) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: buffer object");
  b->base.device = device;
  b->base.kind = kind;
  b->base.size = size;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = (size + 3) & ~(uint64_t)3,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  poot_status st = NULL;
  VkResult r = d->vkCreateBuffer(d->device, &bci, NULL, &b->buffer);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkCreateBuffer", r);
    goto fail;
  }
  VkMemoryRequirements req;
  d->vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
  uint32_t type = kind == POOT_DEVICE_BUFFER_SLOT ? d->slot_type : d->local_type;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  r = d->vkAllocateMemory(d->device, &mai, NULL, &b->memory);
  if (r != VK_SUCCESS) {
    st = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
             ? poot_status_make(
                   POOT_OUT_OF_MEMORY, "vulkan: cannot allocate %llu bytes of %s memory on '%s'",
                   (unsigned long long)size,
                   kind == POOT_DEVICE_BUFFER_SLOT ? "host-visible" : "device", device->caps.name)
             : poot__vk_fail("vkAllocateMemory", r);
    goto fail;
  }
  r = d->vkBindBufferMemory(d->device, b->buffer, b->memory, 0);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkBindBufferMemory", r);
    goto fail;
  }
  if (kind == POOT_DEVICE_BUFFER_SLOT || d->local_mappable) {
    r = d->vkMapMemory(d->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
      st = poot__vk_fail("vkMapMemory", r);
      goto fail;
    }
    memset(b->mapped, 0, (size_t)bci.size);
  }
  if (kind == POOT_DEVICE_BUFFER_SLOT) b->base.host = b->mapped;
  *out_buffer = &b->base;
  return NULL;
fail:
  poot__vk_buffer_destroy(device, &b->base);
  return st;
}

void poot__vk_buffer_destroy(poot_device *device, poot_device_buffer *buffer) {
  poot_vk_device *d = poot__vk_device_cast(device);
  if (!d) return;
  poot_vk_buffer *b = (poot_vk_buffer *)buffer;
  if (!device->poisoned) {
    if (b->buffer) d->vkDestroyBuffer(d->device, b->buffer, NULL);
    if (b->memory) d->vkFreeMemory(d->device, b->memory, NULL); /* unmaps */
  }
  poot_free(b);
}

VkResult poot__vk_fence_wait(poot_vk_device *d, uint64_t timeout_ns) {
  VkResult r = VK_NOT_READY;
  if (d->spin_ns) {
    const uint64_t t0 = poot_time_ns(), spin = d->spin_ns < timeout_ns ? d->spin_ns : timeout_ns;
    while ((r = d->vkGetFenceStatus(d->device, d->fence)) == VK_NOT_READY &&
           poot_time_ns() - t0 < spin) {
    }
    if (r == VK_NOT_READY) {
      uint64_t spent = poot_time_ns() - t0;
      r = d->vkWaitForFences(d->device, 1, &d->fence, VK_TRUE,
                             timeout_ns > spent ? timeout_ns - spent : 0);
    }
  } else {
    r = d->vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, timeout_ns);
  }
  if (r != VK_SUCCESS) return r;
  return d->vkResetFences(d->device, 1, &d->fence);
}

poot_status poot__vk_submit_wait(poot_vk_device *d, VkCommandBuffer cb) {
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
  VkResult r = d->vkQueueSubmit(d->queue, 1, &si, d->fence);
  if (r != VK_SUCCESS) return poot__vk_fail("vkQueueSubmit", r);
  r = poot__vk_fence_wait(d, d->base.timeout_ns);
  if (r == VK_TIMEOUT)
    return poot_status_make(POOT_TIMEOUT, "vulkan: a transfer did not finish within %.3f s",
                            (double)d->base.timeout_ns * 1e-9);
  if (r != VK_SUCCESS) return poot__vk_fail("vkWaitForFences", r);
  return NULL;
}

/* A copy through a host-visible staging buffer for memory the host cannot
 * map (discrete GPUs). to_device: host → buffer. */
static poot_status staged_copy(poot_vk_device *d, poot_vk_buffer *b, uint64_t offset, void *data,
                               uint64_t size, bool to_device) {
  poot_device_buffer *staging = NULL;
  POOT_TRY(poot__vk_buffer_create(&d->base, POOT_DEVICE_BUFFER_SLOT, size, &staging));
  poot_vk_buffer *s = (poot_vk_buffer *)staging;
  if (to_device) memcpy(s->mapped, data, (size_t)size);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = d->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
  poot_status st = NULL;
  VkResult r = d->vkAllocateCommandBuffers(d->device, &cbai, &cb);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkAllocateCommandBuffers", r);
    goto done;
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  (void)d->vkBeginCommandBuffer(cb, &bi);
  VkBufferCopy region = {
      .srcOffset = to_device ? 0 : offset, .dstOffset = to_device ? offset : 0, .size = size};
  d->vkCmdCopyBuffer(cb, to_device ? s->buffer : b->buffer, to_device ? b->buffer : s->buffer, 1,
                     &region);
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT};
  d->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &mb, 0, NULL, 0, NULL);
  r = d->vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkEndCommandBuffer", r);
    goto done;
  }
  st = poot__vk_submit_wait(d, cb);
  if (!st && !to_device) memcpy(data, s->mapped, (size_t)size);
done:
  if (poot_status_code_of(st) == POOT_TIMEOUT || poot_status_code_of(st) == POOT_DEVICE_LOST) {
    /* The copy may still run: leak the staging memory, free the object. */
    poot_free(s);
    return st;
  }
  if (cb) d->vkFreeCommandBuffers(d->device, d->cmd_pool, 1, &cb);
  poot__vk_buffer_destroy(&d->base, staging);
  return st;
}

static poot_status vk_upload(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                             const void *data, uint64_t size) {
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_buffer *b = (poot_vk_buffer *)buffer;
  if (b->mapped) {
    memcpy((uint8_t *)b->mapped + offset, data, (size_t)size);
    return NULL;
  }
  return staged_copy(d, b, offset, (void *)data, size, true);
}

static poot_status vk_download(poot_device *device, poot_device_buffer *buffer, uint64_t offset,
                               void *data, uint64_t size) {
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_buffer *b = (poot_vk_buffer *)buffer;
  if (b->mapped) {
    memcpy(data, (const uint8_t *)b->mapped + offset, (size_t)size);
    return NULL;
  }
  return staged_copy(d, b, offset, data, size, false);
}

/* Several kernels at once (poot_device_kernels_build); the diagnostic stays
 * one kernel after another: its last line names the kernel a hung driver
 * call is in, and its budget is a sum. */
static poot_status vk_kernels_create(poot_device *device, const poot_kir_kernel *const *kirs,
                                     uint32_t n, poot_device_kernel **out) {
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  return poot_device_kernels_build(device, poot__vk_kernel_create, kirs, n, out,
                                   d->diag ? 1 : d->compile_threads);
}

const poot_device_vtable poot__vk_vtable = {
    .destroy = vk_destroy,
    .buffer_create = poot__vk_buffer_create,
    .buffer_destroy = poot__vk_buffer_destroy,
    .upload = vk_upload,
    .download = vk_download,
    .kernel_create = poot__vk_kernel_create,
    .kernel_destroy = poot__vk_kernel_destroy,
    .kernels_create = vk_kernels_create,
    .record = poot__vk_record,
    .recording_destroy = poot__vk_recording_destroy,
    .replay = poot__vk_replay,
    .synchronize = poot__vk_synchronize,
};

poot_status poot_vulkan_device_create(const poot_vulkan_options *options,
                                      poot_device **out_device) {
  *out_device = NULL;
  poot_vulkan_options defaults;
  if (!options) {
    poot_vulkan_options_init(&defaults);
    options = &defaults;
  }
  poot_vk_device *d = poot_calloc(1, sizeof *d);
  if (!d) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: device object");
  if (pthread_mutex_init(&d->create_lock, NULL) != 0) {
    poot_free(d);
    return poot_status_make(POOT_INTERNAL, "vulkan: the kernel creation lock");
  }
  poot_status st = poot_device_base_init(&d->base, &poot__vk_vtable);
  if (st) {
    poot_free(d);
    return st;
  }
  poot_device_set_timeout(&d->base, options->timeout_ns);
  d->diag = options->diag;
  d->diag_budget_ns =
      (uint64_t)((options->diag_budget_s > 0 ? options->diag_budget_s : 60.0) * 1e9);
  d->compile_threads = poot_device_build_threads(options->compile_threads);
  st = poot__vk_instance_create(&d->vi, options->validation);
  if (!st) st = pick_device(d, options->index);
  if (!st) st = create_logical(d, options);
  if (!st) st = pick_memory(d, options->force_staging);
  /* Poll on a GPU (2 ms by default); never on a CPU device. */
  const uint32_t spin_us = options->spin_us ? options->spin_us : 2000;
  if (!st && strcmp(d->base.caps.kind, "cpu") != 0 && spin_us != UINT32_MAX)
    d->spin_ns = (uint64_t)spin_us * 1000;
  if (!st) {
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = d->queue_family};
    VkResult r = d->vkCreateCommandPool(d->device, &cpci, NULL, &d->cmd_pool);
    if (r != VK_SUCCESS) st = poot__vk_fail("vkCreateCommandPool", r);
  }
  if (!st) {
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = d->vkCreateFence(d->device, &fci, NULL, &d->fence);
    if (r != VK_SUCCESS) st = poot__vk_fail("vkCreateFence", r);
  }
  if (!st) poot__vk_cache_open(d, options);
  if (!st) st = poot__vk_probe_fma(d);
  if (!st) st = poot__vk_probe_f16(d, options->exact_f16);
  if (st) {
    poot_device_destroy(&d->base);
    return st;
  }
  *out_device = &d->base;
  return NULL;
}

void poot_vulkan_device_inject(poot_device *device, poot_vulkan_fault fault) {
  poot_vk_device *d = poot__vk_device_cast(device);
  if (d) d->inject = fault;
}

bool poot_vulkan_validation_enabled(const poot_device *device) {
  const poot_vk_device *d = poot__vk_device_cast(device);
  return d && d->vi.validation;
}

uint32_t poot_vulkan_validation_messages(const poot_device *device) {
  const poot_vk_device *d = poot__vk_device_cast(device);
  return d ? d->vi.validation_messages : 0;
}
