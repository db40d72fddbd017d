/* The VkPipelineCache file: the driver's compiled pipelines kept between
 * runs, so that a second start skips driver compilation.
 *
 * One file per device and driver: its name carries the vendor id, device
 * id, driver version and the pipeline-cache UUID; inside, the driver keys
 * each pipeline by its SPIR-V and layout, so each kernel's content (the KIR
 * rendered for this device's target) is its key and one file serves every
 * model and plan on that device. The file
 * is the driver's blob as vkGetPipelineCacheData returns it; before it is
 * handed back, the header Vulkan defines (VkPipelineCacheHeaderVersionOne)
 * must name this device and UUID, else the file is ignored with a warning.
 * It is written to a temporary name beside it and renamed (atomic). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vk_impl.h"

enum { CACHE_MAX_BYTES = 512u << 20 };

/* mkdir -p; false when a component cannot be made. */
static bool make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    bool ok = mkdir(path, 0755) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok) return false;
  }
  return mkdir(path, 0755) == 0 || errno == EEXIST;
}

/* The folder: the option, else $XDG_CACHE_HOME/poot/vulkan, else
 * $HOME/.cache/poot/vulkan; false when none can be named. */
static bool cache_dir(const poot_vulkan_options *o, poot_strbuf *out) {
  if (o->pipeline_cache_dir && *o->pipeline_cache_dir) {
    poot_strbuf_puts(out, o->pipeline_cache_dir);
    return true;
  }
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') {
    poot_strbuf_printf(out, "%s/poot/vulkan", xdg);
    return true;
  }
  const char *home = getenv("HOME");
  if (home && *home == '/') {
    poot_strbuf_printf(out, "%s/.cache/poot/vulkan", home);
    return true;
  }
  return false;
}

/* Why `data` is not this device's cache, or NULL when its header fits. */
static const char *header_mismatch(const uint8_t *data, size_t size,
                                   const VkPhysicalDeviceProperties *p) {
  VkPipelineCacheHeaderVersionOne h;
  if (size < sizeof h) return "shorter than the Vulkan pipeline-cache header";
  memcpy(&h, data, sizeof h);
  if (h.headerSize < sizeof h || h.headerSize > size) return "its header size is wrong";
  if (h.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
    return "its header version is unknown";
  if (h.vendorID != p->vendorID || h.deviceID != p->deviceID) return "made by another device";
  if (memcmp(h.pipelineCacheUUID, p->pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return "made by another driver build: pipeline-cache UUID differs";
  return NULL;
}

static VkPipelineCache create_cache(poot_vk_device *d, const void *data, size_t size) {
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = size,
                                  .pInitialData = size ? data : NULL};
  VkPipelineCache c = VK_NULL_HANDLE;
  if (d->vkCreatePipelineCache(d->device, &ci, NULL, &c) != VK_SUCCESS) c = VK_NULL_HANDLE;
  return c;
}

void poot__vk_cache_open(poot_vk_device *d, const poot_vulkan_options *o) {
  if (o->no_pipeline_cache) return;
  VkPhysicalDeviceProperties p;
  d->vi.vkGetPhysicalDeviceProperties(d->phys, &p);
  poot_strbuf path;
  poot_strbuf_init(&path);
  if (!cache_dir(o, &path)) {
    poot_log(POOT_LOG_INFO, "vulkan: no pipeline cache (neither XDG_CACHE_HOME nor HOME is set)");
    poot_strbuf_deinit(&path);
    return;
  }
  poot_strbuf_printf(&path, "/%04x-%04x-%08x-", p.vendorID, p.deviceID, p.driverVersion);
  for (uint32_t i = 0; i < VK_UUID_SIZE; i++)
    poot_strbuf_printf(&path, "%02x", p.pipelineCacheUUID[i]);
  poot_strbuf_puts(&path, ".bin");
  if (poot_strbuf_status(&path)) {
    poot_strbuf_deinit(&path);
    return;
  }
  char *data = NULL;
  size_t size = 0;
  poot_status st = poot_file_read_all(path.data, &data, &size);
  const char *why = NULL;
  if (st) {
    if (poot_status_code_of(st) != POOT_NOT_FOUND)
      poot_log(POOT_LOG_WARN, "vulkan: pipeline cache ignored: %s", poot_status_message(st));
    poot_status_free(st);
    size = 0;
  } else if (size > CACHE_MAX_BYTES) {
    why = "larger than 512 MiB";
  } else {
    why = header_mismatch((const uint8_t *)data, size, &p);
  }
  if (why) {
    poot_log(POOT_LOG_WARN, "vulkan: pipeline cache '%s' ignored (%s); it will be rewritten",
             path.data, why);
    size = 0;
  }
  d->pipeline_cache = create_cache(d, data, size);
  if (!d->pipeline_cache && size) {
    poot_log(POOT_LOG_WARN, "vulkan: pipeline cache '%s' ignored: the driver refused it",
             path.data);
    size = 0;
    d->pipeline_cache = create_cache(d, NULL, 0);
  }
  poot_free(data);
  d->pipeline_cache_loaded = d->pipeline_cache ? size : 0;
  d->pipeline_cache_path = d->pipeline_cache ? poot_strdup(path.data) : NULL;
  poot_log(POOT_LOG_INFO, "vulkan: pipeline cache %s (%zu bytes read)", path.data, size);
  poot_strbuf_deinit(&path);
}

/* Writes the cache's data to `path` through a temporary file and rename. */
static void write_cache(poot_vk_device *d, const char *path) {
  size_t size = 0;
  if (d->vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, NULL) != VK_SUCCESS || !size)
    return;
  void *data = poot_malloc(size);
  if (!data) return;
  poot_strbuf tmp;
  poot_strbuf_init(&tmp);
  poot_strbuf_printf(&tmp, "%s.%ld.tmp", path, (long)getpid());
  poot_status st = poot_strbuf_status(&tmp);
  if (!st && d->vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, data) != VK_SUCCESS)
    st = poot_status_make(POOT_IO, "vkGetPipelineCacheData failed");
  char *dir = st ? NULL : poot_strdup(path);
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash && slash != dir) {
    *slash = '\0';
    if (!make_dirs(dir)) st = poot_status_make(POOT_IO, "cannot create the folder '%s'", dir);
  }
  if (!st) st = poot_file_write_all(tmp.data, data, size);
  if (!st && rename(tmp.data, path) != 0)
    st = poot_status_make(POOT_IO, "cannot rename '%s' to '%s'", tmp.data, path);
  if (st) {
    remove(tmp.data);
    poot_log(POOT_LOG_INFO, "vulkan: pipeline cache not saved: %s", poot_status_message(st));
    poot_status_free(st);
  }
  poot_free(dir);
  poot_free(data);
  poot_strbuf_deinit(&tmp);
}

void poot__vk_cache_close(poot_vk_device *d) {
  if (!d->pipeline_cache) return;
  /* Only when the driver compiled something this run: a run that found
   * every pipeline in the cache leaves the file as it was. */
  if (d->pipeline_cache_path && d->kernels_created > d->pipeline_cache_hits)
    write_cache(d, d->pipeline_cache_path);
  d->vkDestroyPipelineCache(d->device, d->pipeline_cache, NULL);
  d->pipeline_cache = VK_NULL_HANDLE;
  poot_free(d->pipeline_cache_path);
  d->pipeline_cache_path = NULL;
}

void poot_vulkan_pipeline_cache_stats(const poot_device *device,
                                      poot_vulkan_pipeline_cache_info *out_info) {
  memset(out_info, 0, sizeof *out_info);
  const poot_vk_device *d = poot__vk_device_cast(device);
  if (!d) return;
  out_info->enabled = d->pipeline_cache != VK_NULL_HANDLE;
  out_info->bytes_loaded = d->pipeline_cache_loaded;
  out_info->pipelines = d->kernels_created;
  out_info->hits = d->pipeline_cache_hits;
  out_info->can_count_hits = d->creation_feedback;
}
