/* The Vulkan device's kernels (GLSL → SPIR-V pipelines), recordings (command
 * buffers recorded once with baked descriptor sets), replay (resubmission of
 * the same command buffers) and synchronize (a bounded fence wait, then the
 * error words). */
#include <stdio.h>
#include <string.h>

#include "poot/graph.h"
#include "vk_impl.h"

/* ------------------------------------------------------------- kernels ---- */

void poot__vk_kernel_destroy(poot_device *device, poot_device_kernel *kernel) {
  if (!kernel) return;
  poot_vk_device *d = poot__vk_device_cast(device);
  if (!d) return;
  poot_vk_kernel *k = (poot_vk_kernel *)kernel;
  if (!device->poisoned && d->device) {
    if (k->pipeline) d->vkDestroyPipeline(d->device, k->pipeline, NULL);
    if (k->layout) d->vkDestroyPipelineLayout(d->device, k->layout, NULL);
    if (k->set_layout) d->vkDestroyDescriptorSetLayout(d->device, k->set_layout, NULL);
    if (k->module) d->vkDestroyShaderModule(d->device, k->module, NULL);
  }
  poot_free(k->binding_numbers);
  poot_free(k->base.name);
  poot_free(k);
}

/* The diagnostic's line of the driver's statistics of a pipeline's
 * executables (registers, instructions, ...: the driver's own names). */
static void log_statistics(poot_vk_device *d, VkPipeline pipeline, const char *name) {
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline};
  uint32_t ne = 0;
  if (d->vkGetPipelineExecutablePropertiesKHR(d->device, &pi, &ne, NULL) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < ne && e < 4; e++) {
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                      .pipeline = pipeline,
                                      .executableIndex = e};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = 32;
    for (uint32_t i = 0; i < n; i++)
      st[i] = (VkPipelineExecutableStatisticKHR){
          .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = d->vkGetPipelineExecutableStatisticsKHR(d->device, &ei, &n, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
    char line[1024];
    size_t len = 0;
    line[0] = '\0';
    for (uint32_t i = 0; i < n && len + 1 < sizeof line; i++) {
      int w = 0;
      switch (st[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
          w = snprintf(line + len, sizeof line - len, "%s%s=%s", i ? ", " : "", st[i].name,
                       st[i].value.b32 ? "yes" : "no");
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
          w = snprintf(line + len, sizeof line - len, "%s%s=%lld", i ? ", " : "", st[i].name,
                       (long long)st[i].value.i64);
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
          w = snprintf(line + len, sizeof line - len, "%s%s=%llu", i ? ", " : "", st[i].name,
                       (unsigned long long)st[i].value.u64);
          break;
        default:
          w = snprintf(line + len, sizeof line - len, "%s%s=%g", i ? ", " : "", st[i].name,
                       st[i].value.f64);
          break;
      }
      if (w < 0) break;
      len += (size_t)w < sizeof line - len ? (size_t)w : sizeof line - len - 1;
    }
    poot_log(POOT_LOG_WARN, "vulkan: kernel %s statistics: %s", name, line);
  }
}

poot_status poot__vk_kernel_create(poot_device *device, const poot_kir_kernel *kir,
                                   poot_device_kernel **out_kernel) {
  *out_kernel = NULL;
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_kernel *k = poot_calloc(1, sizeof *k);
  if (!k) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: kernel object");
  k->base.name = poot_strdup(kir->name);
  k->base.binding_count = kir->binding_count;
  k->base.has_checks = kir->has_checks;
  for (uint32_t i = 0; i < kir->param_count; i++)
    if (kir->params[i].kind == POOT_KIR_PARAM_PUSH) k->base.push_count++;
  k->binding_numbers = poot_calloc(kir->binding_count + 1, sizeof *k->binding_numbers);
  poot_vec words;
  poot_vec_init(&words, sizeof(uint32_t));
  VkDescriptorSetLayoutBinding *binds = NULL;
  poot_status st = NULL;
  if (!k->base.name || !k->binding_numbers) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: kernel object");
    goto done;
  }
  for (uint32_t i = 0; i < kir->binding_count; i++)
    k->binding_numbers[i] = kir->bindings[i].binding;
  k->error_binding = kir->error_binding;
  k->descriptor_count = kir->binding_count + (kir->has_checks ? 1u : 0u);

  pthread_mutex_lock(&d->create_lock);
  const uint64_t spent_ns = d->kernel_ns;
  const uint32_t made = d->kernels_created;
  pthread_mutex_unlock(&d->create_lock);
  if (d->diag && spent_ns >= d->diag_budget_ns) {
    st = poot_status_make(POOT_TIMEOUT,
                          "vulkan diagnostic: stopped before kernel %u (%s): kernel creation took "
                          "%.1f s in all, over the %.1f s budget (POOT_VULKAN_DIAG_BUDGET_S)",
                          made + 1, kir->name, (double)spent_ns * 1e-9,
                          (double)d->diag_budget_ns * 1e-9);
    goto done;
  }
  /* The diagnostic names the kernel first: a driver call that never
   * returns leaves this line last. */
  if (d->diag)
    poot_log(POOT_LOG_WARN, "vulkan: kernel %u %s: creating", made + 1, kir->name);
  uint64_t t0 = poot_time_ns();
  st = poot_kir_compile_spirv(kir, &device->caps.target, &words);
  if (st) {
    st = poot_status_annotate(st, "vulkan: kernel %s", kir->name);
    goto done;
  }
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = words.len * 4,
                                   .pCode = words.data};
  VkResult r = d->vkCreateShaderModule(d->device, &smci, NULL, &k->module);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkCreateShaderModule", r);
    goto done;
  }
  binds = poot_calloc(k->descriptor_count + 1, sizeof *binds);
  if (!binds) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: descriptor layout");
    goto done;
  }
  for (uint32_t i = 0; i < k->descriptor_count; i++) {
    binds[i] = (VkDescriptorSetLayoutBinding){
        .binding = i < kir->binding_count ? k->binding_numbers[i] : k->error_binding,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  }
  VkDescriptorSetLayoutCreateInfo dlci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = k->descriptor_count,
      .pBindings = binds};
  r = d->vkCreateDescriptorSetLayout(d->device, &dlci, NULL, &k->set_layout);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkCreateDescriptorSetLayout", r);
    goto done;
  }
  VkPushConstantRange pcr = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = k->base.push_count * 4};
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &k->set_layout,
                                     .pushConstantRangeCount = k->base.push_count ? 1u : 0u,
                                     .pPushConstantRanges = &pcr};
  r = d->vkCreatePipelineLayout(d->device, &plci, NULL, &k->layout);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkCreatePipelineLayout", r);
    goto done;
  }
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->module,
                .pName = "main"},
      .layout = k->layout};
  VkPipelineCreationFeedbackEXT feedback = {0};
  VkPipelineCreationFeedbackCreateInfoEXT fci = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO_EXT,
      .pPipelineCreationFeedback = &feedback};
  if (d->creation_feedback) cpci.pNext = &fci;
  const bool stats =
      d->vkGetPipelineExecutablePropertiesKHR && d->vkGetPipelineExecutableStatisticsKHR;
  if (stats) cpci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  pthread_mutex_lock(&d->create_lock);
  const bool refuse = d->inject == POOT_VULKAN_FAULT_PIPELINE_OUT_OF_MEMORY;
  if (refuse) d->inject = POOT_VULKAN_FAULT_NONE;
  pthread_mutex_unlock(&d->create_lock);
  uint64_t t1 = poot_time_ns();
  r = refuse ? VK_ERROR_OUT_OF_DEVICE_MEMORY
             : d->vkCreateComputePipelines(d->device, d->pipeline_cache, 1, &cpci, NULL,
                                           &k->pipeline);
  uint64_t t2 = poot_time_ns();
  if (r != VK_SUCCESS) st = poot__vk_fail("vkCreateComputePipelines", r);
  bool hit =
      (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT_EXT) &&
      (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT_EXT);
  pthread_mutex_lock(&d->create_lock);
  const uint32_t number = ++d->kernels_created;
  d->pipeline_cache_hits += hit;
  d->kernel_ns += t2 - t0;
  const double so_far_s = (double)d->kernel_ns * 1e-9;
  pthread_mutex_unlock(&d->create_lock);
  poot_log(d->diag ? POOT_LOG_WARN : POOT_LOG_DEBUG,
           "vulkan: kernel %u %s: SPIR-V %zu bytes in %.1f ms, vkCreateComputePipelines %.1f ms%s "
           "(kernels so far %.2f s)",
           number, kir->name, words.len * 4, (double)(t1 - t0) * 1e-6,
           (double)(t2 - t1) * 1e-6, hit ? " (pipeline cache hit)" : "", so_far_s);
  if (!st && stats) log_statistics(d, k->pipeline, kir->name);
done:
  poot_free(binds);
  poot_vec_deinit(&words);
  if (st) {
    poot__vk_kernel_destroy(device, &k->base);
    return st;
  }
  *out_kernel = &k->base;
  return NULL;
}

/* ---------------------------------------------------------- recordings ---- */

void poot__vk_recording_destroy(poot_device *device, poot_device_recording *recording) {
  if (!recording) return;
  poot_vk_device *d = poot__vk_device_cast(device);
  if (!d) return;
  poot_vk_recording *rec = (poot_vk_recording *)recording;
  if (!device->poisoned) {
    /* Never free command buffers the queue may still execute. */
    if (device->pending == recording) (void)d->vkDeviceWaitIdle(d->device);
    if (rec->cbs && rec->cb_count)
      d->vkFreeCommandBuffers(d->device, d->cmd_pool, rec->cb_count, rec->cbs);
    if (rec->pool) d->vkDestroyDescriptorPool(d->device, rec->pool, NULL);
    if (rec->timestamps) d->vkDestroyQueryPool(d->device, rec->timestamps, NULL);
  }
  if (rec->errors) poot__vk_buffer_destroy(device, &rec->errors->base);
  for (uint32_t i = 0; i < rec->checked_count; i++) {
    if (rec->checked_kernel) poot_free(rec->checked_kernel[i]);
    if (rec->checked_label) poot_free(rec->checked_label[i]);
  }
  poot_free(rec->checked_kernel);
  poot_free(rec->checked_label);
  poot_free(rec->checked_dispatch);
  poot_free(rec->cbs);
  poot_free(rec);
}

/* The barrier between two commands of one command buffer: every earlier
 * shader or transfer write is visible to every later shader or transfer
 * access. Nothing for the host: a barrier into the HOST stage costs a GPU a
 * flush of its caches to memory the host sees, which only the end of a
 * command buffer needs. */
static void device_barrier(poot_vk_device *d, VkCommandBuffer cb) {
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_TRANSFER_READ_BIT |
                                         VK_ACCESS_TRANSFER_WRITE_BIT};
  d->vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* The full barrier at the end of a command buffer: every earlier write
 * (shader, transfer, host) is visible to every later read or write, the next
 * command buffer's and the host's. */
static void full_barrier(poot_vk_device *d, VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  d->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                          VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &mb, 0, NULL, 0, NULL);
}

static uint64_t error_stride(const poot_vk_device *d) {
  uint64_t a = d->storage_align < 4 ? 4 : d->storage_align;
  return a;
}

/* Allocates and writes the descriptor set of dispatch `c` (baked: the
 * recording never changes them). */
static poot_status bake_set(poot_vk_device *d, poot_vk_recording *rec, const poot_device_cmd *c,
                            uint32_t checked_index, VkDescriptorSet *out_set) {
  poot_vk_kernel *k = (poot_vk_kernel *)c->kernel;
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = rec->pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &k->set_layout};
  VkResult r = d->vkAllocateDescriptorSets(d->device, &dsai, out_set);
  if (r != VK_SUCCESS) return poot__vk_fail("vkAllocateDescriptorSets", r);
  uint32_t n = k->descriptor_count;
  VkDescriptorBufferInfo *infos = poot_calloc(n + 1, sizeof *infos);
  VkWriteDescriptorSet *writes = poot_calloc(n + 1, sizeof *writes);
  if (!infos || !writes) {
    poot_free(infos);
    poot_free(writes);
    return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: descriptor writes");
  }
  for (uint32_t i = 0; i < n; i++) {
    if (i < k->base.binding_count) {
      poot_vk_buffer *b = (poot_vk_buffer *)c->buffers[i];
      infos[i] = (VkDescriptorBufferInfo){.buffer = b->buffer, .offset = 0, .range = VK_WHOLE_SIZE};
    } else {
      infos[i] = (VkDescriptorBufferInfo){
          .buffer = rec->errors->buffer, .offset = checked_index * error_stride(d), .range = 4};
    }
    writes[i] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = *out_set,
        .dstBinding = i < k->base.binding_count ? k->binding_numbers[i] : k->error_binding,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &infos[i]};
  }
  d->vkUpdateDescriptorSets(d->device, n, writes, 0, NULL);
  poot_free(infos);
  poot_free(writes);
  return NULL;
}

static poot_status record_commands(poot_vk_device *d, poot_vk_recording *rec,
                                   const poot_device_cmd *cmds, uint32_t count,
                                   const uint32_t *stage_of) {
  uint32_t checked = 0;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  uint32_t stage = UINT32_MAX;
  for (uint32_t i = 0; i < count; i++) {
    const poot_device_cmd *c = &cmds[i];
    if (stage_of[i] != stage) {
      if (cb) {
        VkResult r = d->vkEndCommandBuffer(cb);
        if (r != VK_SUCCESS) return poot__vk_fail("vkEndCommandBuffer", r);
      }
      stage = stage_of[i];
      cb = rec->cbs[stage];
      /* Reusable: no ONE_TIME_SUBMIT; each replay waits before the next. */
      VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      VkResult r = d->vkBeginCommandBuffer(cb, &bi);
      if (r != VK_SUCCESS) return poot__vk_fail("vkBeginCommandBuffer", r);
      if (rec->timestamps && stage == 0) {
        d->vkCmdResetQueryPool(cb, rec->timestamps, 0, 2);
        d->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, rec->timestamps, 0);
      }
    }
    if (c->kind == POOT_DEVICE_CMD_COPY) {
      VkBufferCopy region = {
          .srcOffset = c->src_offset, .dstOffset = c->dst_offset, .size = c->size};
      d->vkCmdCopyBuffer(cb, ((poot_vk_buffer *)c->src)->buffer, ((poot_vk_buffer *)c->dst)->buffer,
                         1, &region);
    } else {
      poot_vk_kernel *k = (poot_vk_kernel *)c->kernel;
      VkDescriptorSet set;
      uint32_t ci = checked;
      if (k->base.has_checks) {
        rec->checked_dispatch[checked] = i;
        rec->checked_kernel[checked] = poot_strdup(k->base.name);
        rec->checked_label[checked] = c->label ? poot_strdup(c->label) : NULL;
        checked++;
        if (!rec->checked_kernel[checked - 1] || (c->label && !rec->checked_label[checked - 1]))
          return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: naming checked dispatch %u", i);
      }
      POOT_TRY(bake_set(d, rec, c, ci, &set));
      d->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
      d->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0,
                                 NULL);
      if (k->base.push_count)
        d->vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->base.push_count * 4,
                              c->push);
      d->vkCmdDispatch(cb, c->grid[0] ? c->grid[0] : 1, c->grid[1] ? c->grid[1] : 1,
                       c->grid[2] ? c->grid[2] : 1);
    }
    if (i + 1 == count || stage_of[i + 1] != stage)
      full_barrier(d, cb);
    else
      device_barrier(d, cb);
  }
  if (cb && rec->timestamps)
    d->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, rec->timestamps, 1);
  if (cb) {
    VkResult r = d->vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS) return poot__vk_fail("vkEndCommandBuffer", r);
  }
  return NULL;
}

poot_status poot__vk_record(poot_device *device, const poot_device_cmd *cmds, uint32_t count,
                            const uint32_t *stage_of, uint32_t stage_count,
                            poot_device_recording **out_recording) {
  *out_recording = NULL;
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_recording *rec = poot_calloc(1, sizeof *rec);
  if (!rec) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: recording");
  poot_status st = NULL;
  uint32_t sets = 0, descriptors = 0, checked = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (cmds[i].kind != POOT_DEVICE_CMD_DISPATCH) continue;
    const poot_vk_kernel *k = (const poot_vk_kernel *)cmds[i].kernel;
    sets++;
    descriptors += k->descriptor_count;
    if (k->base.has_checks) checked++;
  }
  rec->checked_dispatch = poot_calloc(checked + 1, sizeof *rec->checked_dispatch);
  rec->checked_kernel = poot_calloc(checked + 1, sizeof *rec->checked_kernel);
  rec->checked_label = poot_calloc(checked + 1, sizeof *rec->checked_label);
  rec->cbs = poot_calloc(stage_count, sizeof *rec->cbs);
  if (!rec->checked_dispatch || !rec->checked_kernel || !rec->checked_label || !rec->cbs) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: recording tables");
    goto fail;
  }
  rec->checked_count = checked;
  if (checked) {
    poot_device_buffer *eb = NULL;
    st = poot__vk_buffer_create(device, POOT_DEVICE_BUFFER_SLOT, checked * error_stride(d), &eb);
    if (st) goto fail;
    rec->errors = (poot_vk_buffer *)eb;
  }
  if (sets) {
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = descriptors ? descriptors : 1};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = sets,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &ps};
    VkResult r = d->vkCreateDescriptorPool(d->device, &dpci, NULL, &rec->pool);
    if (r != VK_SUCCESS) {
      st = poot__vk_fail("vkCreateDescriptorPool", r);
      goto fail;
    }
  }
  VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = d->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = stage_count};
  VkResult r = d->vkAllocateCommandBuffers(d->device, &cbai, rec->cbs);
  if (r != VK_SUCCESS) {
    st = poot__vk_fail("vkAllocateCommandBuffers", r);
    goto fail;
  }
  rec->cb_count = stage_count;
  if (d->timestamp_ns > 0) {
    VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 2};
    r = d->vkCreateQueryPool(d->device, &qpci, NULL, &rec->timestamps);
    if (r != VK_SUCCESS) rec->timestamps = VK_NULL_HANDLE; /* time is optional */
  }
  st = record_commands(d, rec, cmds, count, stage_of);
  if (st) goto fail;
  *out_recording = &rec->base;
  return NULL;
fail:
  rec->base.device = device;
  poot__vk_recording_destroy(device, &rec->base);
  return st;
}

/* ------------------------------------------------------ replay and sync ---- */

poot_status poot__vk_replay(poot_device *device, poot_device_recording *recording) {
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_recording *rec = (poot_vk_recording *)recording;
  /* The host zeroes the error words before the work that may set them. */
  if (rec->errors) memset(rec->errors->mapped, 0, (size_t)rec->errors->base.size);
  if (d->inject == POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST) {
    d->inject = POOT_VULKAN_FAULT_NONE;
    return poot__vk_fail("vkQueueSubmit (injected)", VK_ERROR_DEVICE_LOST);
  }
  /* One submission of every stage's command buffer in order, each its own
   * batch so that a watchdog sees them one at a time. */
  VkSubmitInfo *si = poot_calloc(rec->cb_count, sizeof *si);
  if (!si) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: submit infos");
  for (uint32_t i = 0; i < rec->cb_count; i++)
    si[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &rec->cbs[i]};
  VkResult r = d->vkQueueSubmit(d->queue, rec->cb_count, si, d->fence);
  poot_free(si);
  if (r != VK_SUCCESS) return poot__vk_fail("vkQueueSubmit", r);
  return NULL;
}

poot_status poot__vk_synchronize(poot_device *device, uint64_t timeout_ns,
                                 uint64_t *out_device_ns) {
  *out_device_ns = 0;
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  poot_vk_recording *rec = (poot_vk_recording *)device->pending;
  VkResult r = poot__vk_fence_wait(d, timeout_ns);
  if (r == VK_TIMEOUT)
    return poot_status_make(POOT_TIMEOUT,
                            "vulkan: the replay did not finish within %.3f s on '%s' (the "
                            "device is poisoned; its memory is left to the driver)",
                            (double)timeout_ns * 1e-9, device->caps.name);
  if (r != VK_SUCCESS) return poot__vk_fail("vkWaitForFences", r);
  if (rec && rec->timestamps) {
    uint64_t ts[2] = {0, 0};
    r = d->vkGetQueryPoolResults(d->device, rec->timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r == VK_SUCCESS)
      *out_device_ns = (uint64_t)((double)((ts[1] - ts[0]) & d->timestamp_mask) * d->timestamp_ns);
  }
  if (!rec || !rec->errors) return NULL;
  const uint8_t *words = rec->errors->mapped;
  for (uint32_t i = 0; i < rec->checked_count; i++) {
    uint32_t w;
    memcpy(&w, words + i * error_stride(d), 4);
    if (!w) continue;
    uint32_t code = (uint32_t)__builtin_ctz(w);
    const char *trap = code < POOT_TRAP_COUNT ? poot_trap_name((poot_trap)code) : "unknown";
    return poot_status_make(POOT_KERNEL_FAULT,
                            "vulkan: dispatch %u (kernel %s%s%s): check failed with trap code "
                            "%u (%s); error word 0x%08x",
                            rec->checked_dispatch[i], rec->checked_kernel[i],
                            rec->checked_label[i] ? ", " : "",
                            rec->checked_label[i] ? rec->checked_label[i] : "", code, trap, w);
  }
  return NULL;
}
