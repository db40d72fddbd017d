/* The Vulkan loader (libvulkan.so.1, loaded at run time), the instance with
 * the optional validation layer, and what a physical device offers. */
#include <stdio.h>
#include <string.h>

#include "vk_impl.h"

poot_status poot__vk_fail(const char *what, VkResult r) {
  if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
    return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: %s failed: out of memory (VkResult %d)",
                            what, (int)r);
  return poot_status_make(POOT_DEVICE_LOST, "vulkan: %s failed (VkResult %d%s)", what, (int)r,
                          r == VK_ERROR_DEVICE_LOST ? ", device lost" : "");
}

const char *poot__vk_kind_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  poot_vk_instance *vi = user;
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    vi->validation_messages++;
    poot_log(POOT_LOG_WARN, "vulkan validation: %s", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

static bool layer_installed(poot_vk_instance *vi, const char *name) {
  PFN_vkEnumerateInstanceLayerProperties enumerate =
      (PFN_vkEnumerateInstanceLayerProperties)vi->vkGetInstanceProcAddr(
          NULL, "vkEnumerateInstanceLayerProperties");
  if (!enumerate) return false;
  uint32_t n = 0;
  if (enumerate(&n, NULL) != VK_SUCCESS || n == 0) return false;
  VkLayerProperties *props = poot_calloc(n, sizeof *props);
  if (!props) return false;
  bool found = false;
  if (enumerate(&n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(props[i].layerName, name) == 0;
  poot_free(props);
  return found;
}

poot_status poot__vk_instance_create(poot_vk_instance *vi, bool validation) {
  memset(vi, 0, sizeof *vi);
  static const char *const names[] = {"libvulkan.so.1", "libvulkan.so", NULL};
  poot_status st = poot_dylib_open(names, &vi->lib);
  if (st) {
    poot_status no = poot_status_make(POOT_NO_DEVICE, "vulkan: libvulkan.so.1 not found (%s)",
                                      poot_status_message(st));
    poot_status_free(st);
    return no;
  }
  const poot_dylib_symbol sym[] = {
      {"vkGetInstanceProcAddr", (void **)&vi->vkGetInstanceProcAddr, false},
  };
  st = poot_dylib_load(vi->lib, sym, 1);
  if (st) {
    poot_status no = poot_status_make(POOT_NO_DEVICE, "vulkan: %s", poot_status_message(st));
    poot_status_free(st);
    return no;
  }
  PFN_vkCreateInstance create =
      (PFN_vkCreateInstance)vi->vkGetInstanceProcAddr(NULL, "vkCreateInstance");
  if (!create) return poot_status_make(POOT_NO_DEVICE, "vulkan: the loader lacks vkCreateInstance");
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  vi->validation = validation && layer_installed(vi, layer);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "poot",
                           .pEngineName = "poot",
                           .apiVersion = VK_API_VERSION_1_2};
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_validation,
      .pUserData = vi};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pNext = vi->validation ? &mci : NULL,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = vi->validation ? 1u : 0u,
                              .ppEnabledLayerNames = &layer,
                              .enabledExtensionCount = vi->validation ? 1u : 0u,
                              .ppEnabledExtensionNames = &ext};
  VkResult r = create(&ici, NULL, &vi->instance);
  if (r != VK_SUCCESS) {
    poot__vk_instance_destroy(vi);
    return poot_status_make(
        POOT_NO_DEVICE, "vulkan: vkCreateInstance failed (VkResult %d): no usable driver", (int)r);
  }
#define POOT_VK_LOAD_I(name)                                                     \
  vi->name = (PFN_##name)vi->vkGetInstanceProcAddr(vi->instance, #name);         \
  if (!vi->name) {                                                               \
    poot__vk_instance_destroy(vi);                                               \
    return poot_status_make(POOT_NO_DEVICE, "vulkan: instance lacks %s", #name); \
  }
  POOT_VK_INSTANCE_FNS(POOT_VK_LOAD_I)
#undef POOT_VK_LOAD_I
  if (vi->validation) {
    vi->vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT)vi->vkGetInstanceProcAddr(
            vi->instance, "vkCreateDebugUtilsMessengerEXT");
    vi->vkDestroyDebugUtilsMessengerEXT =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vi->vkGetInstanceProcAddr(
            vi->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (vi->vkCreateDebugUtilsMessengerEXT &&
        vi->vkCreateDebugUtilsMessengerEXT(vi->instance, &mci, NULL, &vi->messenger) != VK_SUCCESS)
      vi->messenger = VK_NULL_HANDLE;
  }
  return NULL;
}

/* Loaders of poisoned devices: kept loaded for good (the driver's threads may
 * still run pending work inside them) and reachable from here, so that a
 * leak checker sees a deliberate choice rather than a lost pointer. */
static poot_dylib *abandoned_loaders[64];
static unsigned abandoned_count;

void poot__vk_instance_abandon(poot_vk_instance *vi) {
  unsigned i = __atomic_fetch_add(&abandoned_count, 1u, __ATOMIC_RELAXED);
  if (i < sizeof abandoned_loaders / sizeof abandoned_loaders[0]) abandoned_loaders[i] = vi->lib;
  vi->lib = NULL;
}

void poot__vk_instance_destroy(poot_vk_instance *vi) {
  if (vi->messenger && vi->vkDestroyDebugUtilsMessengerEXT)
    vi->vkDestroyDebugUtilsMessengerEXT(vi->instance, vi->messenger, NULL);
  vi->messenger = VK_NULL_HANDLE;
  if (vi->instance && vi->vkDestroyInstance) vi->vkDestroyInstance(vi->instance, NULL);
  vi->instance = VK_NULL_HANDLE;
  poot_dylib_close(vi->lib);
  vi->lib = NULL;
}

void poot__vk_describe(poot_vk_instance *vi, VkPhysicalDevice phys, uint32_t index,
                       poot_device_info *info) {
  memset(info, 0, sizeof *info);
  VkPhysicalDeviceProperties p;
  vi->vkGetPhysicalDeviceProperties(phys, &p);
  snprintf(info->name, sizeof info->name, "%s", p.deviceName);
  snprintf(info->kind, sizeof info->kind, "%s", poot__vk_kind_name(p.deviceType));
  info->index = index;
  if (p.apiVersion < VK_API_VERSION_1_2) {
    snprintf(info->why, sizeof info->why, "Vulkan %u.%u; poot needs 1.2",
             VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion));
    return;
  }
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  vi->vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!f2.features.robustBufferAccess) {
    snprintf(info->why, sizeof info->why,
             "no robustBufferAccess (poot needs it so that a failed check stays inside its "
             "buffers)");
    return;
  }
  uint32_t qn = 0;
  vi->vkGetPhysicalDeviceQueueFamilyProperties(phys, &qn, NULL);
  VkQueueFamilyProperties q[16];
  if (qn > 16) qn = 16;
  vi->vkGetPhysicalDeviceQueueFamilyProperties(phys, &qn, q);
  for (uint32_t i = 0; i < qn; i++) {
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      info->usable = true;
      return;
    }
  }
  snprintf(info->why, sizeof info->why, "no compute queue");
}
