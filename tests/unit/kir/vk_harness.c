/* A minimal Vulkan compute harness for the KIR tests; see vk_harness.h. */
#include "vk_harness.h"

#include <stdio.h>
#include <string.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* Every entry point the harness uses, resolved at run time. */
#define VKH_INSTANCE_FNS(X)                   \
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

#define VKH_DEVICE_FNS(X)          \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
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
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier)          \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkQueueSubmit)                 \
  X(vkWaitForFences)               \
  X(vkDeviceWaitIdle)

#define VKH_DECLARE(name) PFN_##name name;

struct vkh {
  poot_dylib *lib;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  PFN_vkCreateInstance vkCreateInstance;
  VKH_INSTANCE_FNS(VKH_DECLARE)
  VKH_DEVICE_FNS(VKH_DECLARE)
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkPhysicalDeviceMemoryProperties mem;
  bool leaked; /* a wait ran out: the device is no longer used */
  vkh_info info;
};

static poot_status vk_fail(const char *what, VkResult r) {
  if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
    return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: %s failed (VkResult %d)", what, (int)r);
  return poot_status_make(POOT_DEVICE_LOST, "vulkan: %s failed (VkResult %d)", what, (int)r);
}

static bool has_extension(const VkExtensionProperties *exts, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

static poot_status create_instance(vkh *h) {
  static const char *const names[] = {"libvulkan.so.1", "libvulkan.so", NULL};
  poot_status st = poot_dylib_open(names, &h->lib);
  if (st) return poot_status_annotate(st, "no Vulkan loader");
  /* poot_status_annotate keeps the code; the caller wants NO_DEVICE. */
  const poot_dylib_symbol sym[] = {
      {"vkGetInstanceProcAddr", (void **)&h->vkGetInstanceProcAddr, false},
  };
  st = poot_dylib_load(h->lib, sym, 1);
  if (st) return st;
  h->vkCreateInstance = (PFN_vkCreateInstance)h->vkGetInstanceProcAddr(NULL, "vkCreateInstance");
  if (!h->vkCreateInstance) return poot_status_make(POOT_NO_DEVICE, "vulkan: no vkCreateInstance");
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "poot-kir-test",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkResult r = h->vkCreateInstance(&ici, NULL, &h->instance);
  if (r != VK_SUCCESS)
    return poot_status_make(POOT_NO_DEVICE, "vulkan: vkCreateInstance failed (VkResult %d)",
                            (int)r);
#define VKH_LOAD_I(name)                                              \
  h->name = (PFN_##name)h->vkGetInstanceProcAddr(h->instance, #name); \
  if (!h->name) return poot_status_make(POOT_NO_DEVICE, "vulkan: instance lacks %s", #name);
  VKH_INSTANCE_FNS(VKH_LOAD_I)
#undef VKH_LOAD_I
  return NULL;
}

static poot_status pick_device(vkh *h) {
  uint32_t n = 0;
  VkResult r = h->vkEnumeratePhysicalDevices(h->instance, &n, NULL);
  if (r != VK_SUCCESS || n == 0) return poot_status_make(POOT_NO_DEVICE, "vulkan: no device");
  VkPhysicalDevice devs[16];
  if (n > 16) n = 16;
  r = h->vkEnumeratePhysicalDevices(h->instance, &n, devs);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_fail("vkEnumeratePhysicalDevices", r);
  for (uint32_t d = 0; d < n; d++) {
    VkPhysicalDeviceProperties p;
    h->vkGetPhysicalDeviceProperties(devs[d], &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t qn = 0;
    h->vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &qn, NULL);
    VkQueueFamilyProperties q[16];
    if (qn > 16) qn = 16;
    h->vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &qn, q);
    for (uint32_t i = 0; i < qn; i++) {
      if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        h->phys = devs[d];
        h->queue_family = i;
        return NULL;
      }
    }
  }
  return poot_status_make(POOT_NO_DEVICE, "vulkan: no Vulkan 1.2 device with a compute queue");
}

static poot_status create_device(vkh *h) {
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  h->vkGetPhysicalDeviceProperties2(h->phys, &p2);
  h->vkGetPhysicalDeviceMemoryProperties(h->phys, &h->mem);
  vkh_info *in = &h->info;
  snprintf(in->device_name, sizeof in->device_name, "%s", p2.properties.deviceName);
  in->api_version = p2.properties.apiVersion;
  in->subgroup_size = sg.subgroupSize;
  in->subgroup_ops =
      (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? sg.supportedOperations : 0;
  in->max_workgroup_size = p2.properties.limits.maxComputeWorkGroupInvocations;
  in->max_shared_bytes = p2.properties.limits.maxComputeSharedMemorySize;
  in->max_push_bytes = p2.properties.limits.maxPushConstantsSize;

  uint32_t en = 0;
  VkResult r = h->vkEnumerateDeviceExtensionProperties(h->phys, NULL, &en, NULL);
  if (r != VK_SUCCESS) return vk_fail("vkEnumerateDeviceExtensionProperties", r);
  VkExtensionProperties *exts = poot_calloc(en ? en : 1, sizeof *exts);
  if (!exts) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: extension list");
  r = h->vkEnumerateDeviceExtensionProperties(h->phys, NULL, &en, exts);
  bool has_atomic_float = r == VK_SUCCESS && has_extension(exts, en, "VK_EXT_shader_atomic_float");
  poot_free(exts);

  /* Ask what the device has, then enable exactly that. */
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = has_atomic_float ? &af : NULL};
  VkPhysicalDeviceVulkan11Features f11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &f11};
  h->vkGetPhysicalDeviceFeatures2(h->phys, &f2);

  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
      .shaderBufferFloat32AtomicAdd = af.shaderBufferFloat32AtomicAdd,
      .shaderSharedFloat32AtomicAdd = af.shaderSharedFloat32AtomicAdd,
      .shaderBufferFloat32Atomics = af.shaderBufferFloat32Atomics,
      .shaderSharedFloat32Atomics = af.shaderSharedFloat32Atomics};
  VkPhysicalDeviceVulkan12Features f12_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = has_atomic_float ? &af_on : NULL,
      .storageBuffer8BitAccess = f12.storageBuffer8BitAccess,
      .uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess,
      .storagePushConstant8 = f12.storagePushConstant8,
      .shaderFloat16 = f12.shaderFloat16,
      .shaderInt8 = f12.shaderInt8,
      .shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics,
      .shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics,
      .vulkanMemoryModel = f12.vulkanMemoryModel,
      .vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope,
      .shaderSubgroupExtendedTypes = f12.shaderSubgroupExtendedTypes,
      .scalarBlockLayout = f12.scalarBlockLayout};
  VkPhysicalDeviceVulkan11Features f11_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
      .pNext = &f12_on,
      .storageBuffer16BitAccess = f11.storageBuffer16BitAccess,
      .uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess,
      .storagePushConstant16 = f11.storagePushConstant16};
  VkPhysicalDeviceFeatures2 f2_on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &f11_on};
  f2_on.features.robustBufferAccess = f2.features.robustBufferAccess;
  f2_on.features.shaderInt16 = f2.features.shaderInt16;
  f2_on.features.shaderInt64 = f2.features.shaderInt64;

  in->shader_int8 = f12.shaderInt8;
  in->shader_int16 = f2.features.shaderInt16;
  in->shader_int64 = f2.features.shaderInt64;
  in->shader_float16 = f12.shaderFloat16;
  in->storage_8bit = f12.storageBuffer8BitAccess;
  in->storage_16bit = f11.storageBuffer16BitAccess;
  in->atomic_float_add =
      has_atomic_float && af.shaderBufferFloat32AtomicAdd && af.shaderSharedFloat32AtomicAdd;
  in->robust_buffer_access = f2.features.robustBufferAccess;

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = h->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  const char *ext_names[] = {"VK_EXT_shader_atomic_float"};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2_on,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = has_atomic_float ? 1u : 0u,
                            .ppEnabledExtensionNames = ext_names};
  r = h->vkCreateDevice(h->phys, &dci, NULL, &h->device);
  if (r != VK_SUCCESS) return vk_fail("vkCreateDevice", r);
#define VKH_LOAD_D(name)                                          \
  h->name = (PFN_##name)h->vkGetDeviceProcAddr(h->device, #name); \
  if (!h->name) return poot_status_make(POOT_DEVICE_LOST, "vulkan: device lacks %s", #name);
  VKH_DEVICE_FNS(VKH_LOAD_D)
#undef VKH_LOAD_D
  h->vkGetDeviceQueue(h->device, h->queue_family, 0, &h->queue);
  return NULL;
}

poot_status vkh_create(vkh **out_h) {
  *out_h = NULL;
  vkh *h = poot_calloc(1, sizeof *h);
  if (!h) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan harness");
  poot_status st = create_instance(h);
  if (st) {
    /* An absent loader or instance means there is no device to test on. */
    poot_status no = poot_status_make(POOT_NO_DEVICE, "%s", poot_status_message(st));
    poot_status_free(st);
    vkh_destroy(h);
    return no;
  }
  st = pick_device(h);
  if (!st) st = create_device(h);
  if (st) {
    vkh_destroy(h);
    return st;
  }
  *out_h = h;
  return NULL;
}

void vkh_destroy(vkh *h) {
  if (!h) return;
  if (h->device && !h->leaked) {
    (void)h->vkDeviceWaitIdle(h->device);
    h->vkDestroyDevice(h->device, NULL);
  }
  if (h->instance && h->vkDestroyInstance && !h->leaked) h->vkDestroyInstance(h->instance, NULL);
  if (!h->leaked) poot_dylib_close(h->lib);
  poot_free(h);
}

const vkh_info *vkh_get_info(const vkh *h) {
  return &h->info;
}

/* The resources of one dispatch, destroyed together. */
typedef struct vkh_run {
  uint32_t count;
  VkBuffer buf[64];
  VkDeviceMemory mem[64];
  VkShaderModule module;
  VkDescriptorSetLayout dsl;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  VkCommandPool cmd_pool;
  VkFence fence;
} vkh_run;

static void run_destroy(vkh *h, vkh_run *run) {
  VkDevice d = h->device;
  if (run->fence) h->vkDestroyFence(d, run->fence, NULL);
  if (run->cmd_pool) h->vkDestroyCommandPool(d, run->cmd_pool, NULL);
  if (run->pool) h->vkDestroyDescriptorPool(d, run->pool, NULL);
  if (run->pipeline) h->vkDestroyPipeline(d, run->pipeline, NULL);
  if (run->layout) h->vkDestroyPipelineLayout(d, run->layout, NULL);
  if (run->dsl) h->vkDestroyDescriptorSetLayout(d, run->dsl, NULL);
  if (run->module) h->vkDestroyShaderModule(d, run->module, NULL);
  for (uint32_t i = 0; i < run->count; i++) {
    if (run->buf[i]) h->vkDestroyBuffer(d, run->buf[i], NULL);
    if (run->mem[i]) h->vkFreeMemory(d, run->mem[i], NULL);
  }
}

static poot_status create_buffer(vkh *h, vkh_run *run, uint32_t i, const vkh_buffer *b) {
  /* Vulkan buffers cannot be empty; round up to whole words. */
  VkDeviceSize size = b->size ? ((b->size + 3) & ~(VkDeviceSize)3) : 4;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = h->vkCreateBuffer(h->device, &bci, NULL, &run->buf[i]);
  if (r != VK_SUCCESS) return vk_fail("vkCreateBuffer", r);
  VkMemoryRequirements req;
  h->vkGetBufferMemoryRequirements(h->device, run->buf[i], &req);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t t = 0; t < h->mem.memoryTypeCount; t++) {
    if ((req.memoryTypeBits & (1u << t)) && (h->mem.memoryTypes[t].propertyFlags & want) == want) {
      type = t;
      break;
    }
  }
  if (type == UINT32_MAX)
    return poot_status_make(POOT_UNSUPPORTED, "vulkan: no host-visible coherent memory type");
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  r = h->vkAllocateMemory(h->device, &mai, NULL, &run->mem[i]);
  if (r != VK_SUCCESS) return vk_fail("vkAllocateMemory", r);
  r = h->vkBindBufferMemory(h->device, run->buf[i], run->mem[i], 0);
  if (r != VK_SUCCESS) return vk_fail("vkBindBufferMemory", r);
  void *p = NULL;
  r = h->vkMapMemory(h->device, run->mem[i], 0, VK_WHOLE_SIZE, 0, &p);
  if (r != VK_SUCCESS) return vk_fail("vkMapMemory", r);
  memset(p, 0, (size_t)size);
  if (b->size) memcpy(p, b->data, b->size);
  h->vkUnmapMemory(h->device, run->mem[i]);
  return NULL;
}

static poot_status create_pipeline(vkh *h, vkh_run *run, const uint32_t *spirv, size_t words,
                                   uint32_t push_size) {
  VkShaderModuleCreateInfo smci = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = words * 4, .pCode = spirv};
  VkResult r = h->vkCreateShaderModule(h->device, &smci, NULL, &run->module);
  if (r != VK_SUCCESS) return vk_fail("vkCreateShaderModule", r);
  VkDescriptorSetLayoutBinding binds[64];
  for (uint32_t i = 0; i < run->count; i++) {
    binds[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  }
  VkDescriptorSetLayoutCreateInfo dlci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = run->count,
      .pBindings = binds};
  r = h->vkCreateDescriptorSetLayout(h->device, &dlci, NULL, &run->dsl);
  if (r != VK_SUCCESS) return vk_fail("vkCreateDescriptorSetLayout", r);
  VkPushConstantRange pcr = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = (push_size + 3) & ~3u};
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &run->dsl,
                                     .pushConstantRangeCount = push_size ? 1u : 0u,
                                     .pPushConstantRanges = &pcr};
  r = h->vkCreatePipelineLayout(h->device, &plci, NULL, &run->layout);
  if (r != VK_SUCCESS) return vk_fail("vkCreatePipelineLayout", r);
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = run->module,
                .pName = "main"},
      .layout = run->layout};
  r = h->vkCreateComputePipelines(h->device, VK_NULL_HANDLE, 1, &cpci, NULL, &run->pipeline);
  if (r != VK_SUCCESS) return vk_fail("vkCreateComputePipelines", r);
  return NULL;
}

static poot_status record_and_submit(vkh *h, vkh_run *run, const void *push, uint32_t push_size,
                                     const uint32_t groups[3], uint64_t timeout_ns) {
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                             .descriptorCount = run->count ? run->count : 1};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 1,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &ps};
  VkResult r = h->vkCreateDescriptorPool(h->device, &dpci, NULL, &run->pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateDescriptorPool", r);
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = run->pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &run->dsl};
  VkDescriptorSet set;
  r = h->vkAllocateDescriptorSets(h->device, &dsai, &set);
  if (r != VK_SUCCESS) return vk_fail("vkAllocateDescriptorSets", r);
  VkDescriptorBufferInfo dbi[64];
  VkWriteDescriptorSet w[64];
  for (uint32_t i = 0; i < run->count; i++) {
    dbi[i] = (VkDescriptorBufferInfo){.buffer = run->buf[i], .offset = 0, .range = VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = set,
                                  .dstBinding = i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &dbi[i]};
  }
  if (run->count) h->vkUpdateDescriptorSets(h->device, run->count, w, 0, NULL);

  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = h->queue_family};
  r = h->vkCreateCommandPool(h->device, &cpci, NULL, &run->cmd_pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateCommandPool", r);
  VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = run->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
  VkCommandBuffer cb;
  r = h->vkAllocateCommandBuffers(h->device, &cbai, &cb);
  if (r != VK_SUCCESS) return vk_fail("vkAllocateCommandBuffers", r);
  VkCommandBufferBeginInfo cbbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  r = h->vkBeginCommandBuffer(cb, &cbbi);
  if (r != VK_SUCCESS) return vk_fail("vkBeginCommandBuffer", r);
  h->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, run->pipeline);
  h->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, run->layout, 0, 1, &set, 0, NULL);
  if (push_size) {
    uint8_t padded[256] = {0};
    memcpy(padded, push, push_size);
    h->vkCmdPushConstants(cb, run->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (push_size + 3) & ~3u,
                          padded);
  }
  h->vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
  /* Make the shader's writes visible to the host reads after the fence. */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  h->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                          1, &mb, 0, NULL, 0, NULL);
  r = h->vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS) return vk_fail("vkEndCommandBuffer", r);

  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = h->vkCreateFence(h->device, &fci, NULL, &run->fence);
  if (r != VK_SUCCESS) return vk_fail("vkCreateFence", r);
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
  r = h->vkQueueSubmit(h->queue, 1, &si, run->fence);
  if (r != VK_SUCCESS) return vk_fail("vkQueueSubmit", r);
  r = h->vkWaitForFences(h->device, 1, &run->fence, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT) {
    /* The GPU may still use everything of this run: leak it on purpose. */
    h->leaked = true;
    return poot_status_make(POOT_TIMEOUT, "vulkan: dispatch did not finish within %.3f s",
                            (double)timeout_ns * 1e-9);
  }
  if (r != VK_SUCCESS) {
    h->leaked = true;
    return vk_fail("vkWaitForFences", r);
  }
  return NULL;
}

poot_status vkh_dispatch(vkh *h, const uint32_t *spirv, size_t word_count, vkh_buffer *buffers,
                         uint32_t buffer_count, const void *push, uint32_t push_size,
                         const uint32_t groups[3], uint64_t timeout_ns) {
  if (h->leaked)
    return poot_status_make(POOT_POISONED, "vulkan: an earlier dispatch did not finish");
  if (buffer_count > 64 || push_size > 256 || push_size > h->info.max_push_bytes)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "vulkan harness: %u buffers, %u push bytes is too many", buffer_count,
                            push_size);
  vkh_run run;
  memset(&run, 0, sizeof run);
  poot_status st = NULL;
  for (uint32_t i = 0; i < buffer_count && !st; i++) {
    run.count = i + 1;
    st = create_buffer(h, &run, i, &buffers[i]);
  }
  run.count = buffer_count;
  if (!st) st = create_pipeline(h, &run, spirv, word_count, push_size);
  if (!st) st = record_and_submit(h, &run, push, push_size, groups, timeout_ns);
  for (uint32_t i = 0; i < buffer_count && !st; i++) {
    if (!buffers[i].size) continue;
    void *p = NULL;
    VkResult r = h->vkMapMemory(h->device, run.mem[i], 0, VK_WHOLE_SIZE, 0, &p);
    if (r != VK_SUCCESS) {
      st = vk_fail("vkMapMemory", r);
      break;
    }
    memcpy(buffers[i].data, p, buffers[i].size);
    h->vkUnmapMemory(h->device, run.mem[i]);
  }
  if (!h->leaked) run_destroy(h, &run);
  return st;
}
