/* The wgpu device's kernels (poot's WGSL rendering → compute pipelines),
 * recordings (pipelines and bind groups built once, the dispatch list
 * cached), replay (the list encoded into new command buffers and submitted:
 * WebGPU command buffers cannot be submitted twice, so this re-encodes every
 * time and is not a replay of recorded commands) and synchronize (a bounded
 * wait, then the error words). */
#include <stdio.h>
#include <string.h>

#include "poot/graph.h"
#include "wgpu_impl.h"

/* ------------------------------------------------------------- kernels ---- */

void poot__wg_kernel_destroy(poot_device *device, poot_device_kernel *kernel) {
  if (!kernel) return;
  poot_wgpu_device *d = poot__wg_device_cast(device);
  if (!d) return;
  poot_wgpu_kernel *k = (poot_wgpu_kernel *)kernel;
  if (!device->poisoned) {
    if (k->pipeline) d->rt.api.wgpuComputePipelineRelease(k->pipeline);
    if (k->layout) d->rt.api.wgpuPipelineLayoutRelease(k->layout);
    if (k->set_layout) d->rt.api.wgpuBindGroupLayoutRelease(k->set_layout);
    if (k->module) d->rt.api.wgpuShaderModuleRelease(k->module);
  }
  poot_free(k->binding_numbers);
  poot_free(k->binding_written);
  poot_free(k->base.name);
  poot_free(k);
}

/* How the WGSL text declares binding `b`: the layout must say the same
 * (read-only storage, storage, uniform). */
static poot_wg_enum declared_type(const char *wgsl, uint32_t b) {
  char needle[64];
  snprintf(needle, sizeof needle, "@binding(%u) var<", b);
  const char *p = strstr(wgsl, needle);
  if (!p) return POOT_WG_BINDING_STORAGE;
  p += strlen(needle);
  if (strncmp(p, "uniform>", 8) == 0) return POOT_WG_BINDING_UNIFORM;
  if (strncmp(p, "storage, read>", 14) == 0) return POOT_WG_BINDING_READ_ONLY_STORAGE;
  return POOT_WG_BINDING_STORAGE;
}

poot_status poot__wg_kernel_create(poot_device *device, const poot_kir_kernel *kir,
                                   poot_device_kernel **out_kernel) {
  *out_kernel = NULL;
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  POOT_TRY(poot__wg_check_lost(d, "kernel creation"));
  const poot_wg_api *api = &d->rt.api;
  poot_wgpu_kernel *k = poot_calloc(1, sizeof *k);
  if (!k) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: kernel object");
  k->base.name = poot_strdup(kir->name);
  k->base.binding_count = kir->binding_count;
  k->base.has_checks = kir->has_checks;
  for (uint32_t i = 0; i < kir->param_count; i++)
    if (kir->params[i].kind == POOT_KIR_PARAM_PUSH) k->base.push_count++;
  k->binding_numbers = poot_calloc(kir->binding_count + 1, sizeof *k->binding_numbers);
  k->binding_written = poot_calloc(kir->binding_count + 1, sizeof *k->binding_written);
  k->error_binding = kir->error_binding;
  k->param_binding = kir->param_binding;
  poot_strbuf wgsl;
  poot_strbuf_init(&wgsl);
  poot_wg_layout_entry *entries = NULL;
  poot_status st = NULL;
  if (!k->base.name || !k->binding_numbers || !k->binding_written) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: kernel object");
    goto done;
  }
  for (uint32_t i = 0; i < kir->binding_count; i++) {
    k->binding_numbers[i] = kir->bindings[i].binding;
    k->binding_written[i] = kir->bindings[i].access != POOT_KIR_ACCESS_READ;
  }
  const uint64_t t0 = poot_time_ns();
  st = poot_kir_render_wgsl(kir, &device->caps.target, &wgsl);
  if (!st) st = poot_strbuf_status(&wgsl);
  if (st) {
    st = poot_status_annotate(st, "wgpu: kernel %s", kir->name);
    goto done;
  }
  const uint32_t n =
      kir->binding_count + (kir->has_checks ? 1u : 0u) + (k->base.push_count ? 1u : 0u);
  entries = poot_calloc(n + 1, sizeof *entries);
  if (!entries) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: bind group layout");
    goto done;
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = i < kir->binding_count                       ? k->binding_numbers[i]
                 : kir->has_checks && i == kir->binding_count ? k->error_binding
                                                              : k->param_binding;
    entries[i].binding = b;
    entries[i].visibility = POOT_WG_STAGE_COMPUTE;
    entries[i].buffer.type = declared_type(wgsl.data, b);
  }
  char label[200];
  snprintf(label, sizeof label, "kernel %s", kir->name);
  poot__wg_scope_push(d);
  poot_wg_shader_source_wgsl src = {.chain = {.stype = POOT_WG_STYPE_SHADER_SOURCE_WGSL},
                                    .code = {wgsl.data, wgsl.len}};
  poot_wg_shader_module_desc smd = {.next = &src.chain, .label = poot__wg_str(kir->name)};
  k->module = api->wgpuDeviceCreateShaderModule(d->device, &smd);
  poot_wg_bind_group_layout_desc bld = {
      .label = poot__wg_str(kir->name), .entry_count = n, .entries = entries};
  k->set_layout = api->wgpuDeviceCreateBindGroupLayout(d->device, &bld);
  poot_wg_pipeline_layout_desc pld = {.label = poot__wg_str(kir->name),
                                      .bind_group_layout_count = 1,
                                      .bind_group_layouts = &k->set_layout};
  k->layout = api->wgpuDeviceCreatePipelineLayout(d->device, &pld);
  poot_wg_compute_pipeline_desc cpd = {
      .label = poot__wg_str(kir->name),
      .layout = k->layout,
      .compute = {.module = k->module, .entry_point = poot__wg_str(kir->name)}};
  k->pipeline = api->wgpuDeviceCreateComputePipeline(d->device, &cpd);
  st = poot__wg_scope_pop(d, label);
  if (!st && (!k->module || !k->set_layout || !k->layout || !k->pipeline))
    st = poot_status_make(POOT_DEVICE_LOST, "wgpu: %s: the library returned no object", label);
  poot_log(POOT_LOG_DEBUG, "wgpu: kernel %s: WGSL %zu bytes, pipeline in %.1f ms", kir->name,
           wgsl.len, (double)(poot_time_ns() - t0) * 1e-6);
done:
  poot_free(entries);
  poot_strbuf_deinit(&wgsl);
  if (st) {
    if (poot_status_code_of(st) == POOT_TIMEOUT) {
      /* The library may still be working on the objects: keep them. */
      k->module = NULL;
      k->set_layout = NULL;
      k->layout = NULL;
      k->pipeline = NULL;
    }
    poot__wg_kernel_destroy(device, &k->base);
    return st;
  }
  *out_kernel = &k->base;
  return NULL;
}

/* ---------------------------------------------------------- recordings ---- */

void poot__wg_recording_destroy(poot_device *device, poot_device_recording *recording) {
  if (!recording) return;
  poot_wgpu_device *d = poot__wg_device_cast(device);
  if (!d) return;
  poot_wgpu_recording *rec = (poot_wgpu_recording *)recording;
  const poot_wg_api *api = &d->rt.api;
  if (!device->poisoned) {
    /* Never release what the queue may still use: wait for it (bounded;
     * past the timeout the device is poisoned and everything is kept). */
    if (device->pending == recording && d->pending_state) {
      poot_status st = poot__wg_wait(d, &d->pending_state->done, device->timeout_ns,
                                     "the replay of a recording being destroyed");
      if (st) {
        poot__wg_sink_keep(d->sink, d->pending_state);
        poot_device_poison(device, poot_status_message(st));
        poot_status_free(st);
      } else {
        if (d->pending_mapped) api->wgpuBufferUnmap(rec->results);
        poot_free(d->pending_state);
      }
      d->pending_state = NULL;
      d->pending_mapped = false;
    }
  }
  if (!device->poisoned) {
    for (uint32_t i = 0; i < rec->cmd_count; i++)
      if (rec->cmds[i].group) api->wgpuBindGroupRelease(rec->cmds[i].group);
    for (uint32_t i = 0; i < rec->param_count; i++) {
      api->wgpuBufferDestroy(rec->params[i]);
      api->wgpuBufferRelease(rec->params[i]);
    }
    if (rec->errors) {
      api->wgpuBufferDestroy(rec->errors);
      api->wgpuBufferRelease(rec->errors);
    }
    if (rec->results) {
      api->wgpuBufferDestroy(rec->results);
      api->wgpuBufferRelease(rec->results);
    }
    if (rec->resolve) {
      api->wgpuBufferDestroy(rec->resolve);
      api->wgpuBufferRelease(rec->resolve);
    }
    /* Release only: wgpu-native 0.32 panics when a destroyed query set is
     * then released. */
    if (rec->timestamps) api->wgpuQuerySetRelease(rec->timestamps);
  }
  for (uint32_t i = 0; i < rec->checked_count; i++) {
    if (rec->checked_kernel) poot_free(rec->checked_kernel[i]);
    if (rec->checked_label) poot_free(rec->checked_label[i]);
  }
  poot_free(rec->checked_kernel);
  poot_free(rec->checked_label);
  poot_free(rec->checked_dispatch);
  poot_free(rec->slot_inputs);
  poot_free(rec->slot_outputs);
  poot_free(rec->output_offset);
  poot_free(rec->params);
  poot_free(rec->zeros);
  poot_free(rec->cmds);
  poot_free(rec);
}

/* Notes a SLOT buffer the commands touch: `slots` keeps each once, with
 * whether any command may write it. */
typedef struct slot_use {
  poot_wgpu_buffer *b;
  bool written;
} slot_use;

static void note_slot(slot_use *slots, uint32_t *n, poot_device_buffer *buffer, bool written) {
  if (!buffer || buffer->kind != POOT_DEVICE_BUFFER_SLOT) return;
  for (uint32_t i = 0; i < *n; i++) {
    if (&slots[i].b->base == buffer) {
      slots[i].written |= written;
      return;
    }
  }
  slots[*n].b = (poot_wgpu_buffer *)buffer;
  slots[*n].written = written;
  (*n)++;
}

/* The bind group of dispatch `c`: its buffers, its error word, its PUSH
 * values (a uniform buffer of its own, written once). */
static poot_status bake_group(poot_wgpu_device *d, poot_wgpu_recording *rec,
                              const poot_device_cmd *c, uint32_t index, uint32_t checked_index,
                              poot_wg_bind_group *out) {
  const poot_wg_api *api = &d->rt.api;
  poot_wgpu_kernel *k = (poot_wgpu_kernel *)c->kernel;
  const uint32_t n =
      k->base.binding_count + (k->base.has_checks ? 1u : 0u) + (k->base.push_count ? 1u : 0u);
  poot_wg_bind_group_entry *e = poot_calloc(n + 1, sizeof *e);
  if (!e) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: bind group entries");
  poot_status st = NULL;
  uint32_t i = 0;
  for (; i < k->base.binding_count; i++) {
    poot_wgpu_buffer *b = (poot_wgpu_buffer *)c->buffers[i];
    if (b->alloc_size > d->limits.max_storage_buffer_binding_size) {
      st = poot_status_make(POOT_UNSUPPORTED,
                            "wgpu: dispatch %u (kernel %s) binds a buffer of %llu bytes; the "
                            "adapter binds at most %llu (maxStorageBufferBindingSize)",
                            index, k->base.name, (unsigned long long)b->alloc_size,
                            (unsigned long long)d->limits.max_storage_buffer_binding_size);
      goto done;
    }
    e[i] = (poot_wg_bind_group_entry){
        .binding = k->binding_numbers[i], .buffer = b->buffer, .size = b->alloc_size};
  }
  if (k->base.has_checks) {
    e[i] = (poot_wg_bind_group_entry){.binding = k->error_binding,
                                      .buffer = rec->errors,
                                      .offset = checked_index * d->storage_align,
                                      .size = 4};
    i++;
  }
  if (k->base.push_count > 64) { /* the target's max_push_bytes (256) keeps kernels below */
    st = poot_status_make(POOT_UNSUPPORTED, "wgpu: kernel %s has %u PUSH params; at most 64",
                          k->base.name, k->base.push_count);
    goto done;
  }
  if (k->base.push_count) {
    /* A uniform struct of 4-byte members is a multiple of 16 bytes. */
    uint64_t size = ((uint64_t)k->base.push_count * 4 + 15) & ~(uint64_t)15;
    poot_wg_buffer u = NULL;
    st = poot__wg_raw_buffer(d, size, POOT_WG_USAGE_UNIFORM | POOT_WG_USAGE_COPY_DST, "push values",
                             &u);
    if (st) goto done;
    rec->params[rec->param_count++] = u;
    uint32_t words[64] = {0};
    memcpy(words, c->push, k->base.push_count * 4);
    api->wgpuQueueWriteBuffer(d->queue, u, 0, words, (size_t)size);
    e[i] = (poot_wg_bind_group_entry){.binding = k->param_binding, .buffer = u, .size = size};
    i++;
  }
  char label[160];
  snprintf(label, sizeof label, "bind group of dispatch %u (kernel %s)", index, k->base.name);
  poot_wg_bind_group_desc desc = {
      .label = poot__wg_str(label), .layout = k->set_layout, .entry_count = n, .entries = e};
  poot__wg_scope_push(d);
  *out = api->wgpuDeviceCreateBindGroup(d->device, &desc);
  st = poot__wg_scope_pop(d, label);
  if (st && *out && poot_status_code_of(st) != POOT_TIMEOUT) {
    api->wgpuBindGroupRelease(*out);
    *out = NULL;
  }
done:
  poot_free(e);
  return st;
}

poot_status poot__wg_record(poot_device *device, const poot_device_cmd *cmds, uint32_t count,
                            const uint32_t *stage_of, uint32_t stage_count,
                            poot_device_recording **out_recording) {
  *out_recording = NULL;
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  POOT_TRY(poot__wg_check_lost(d, "recording"));
  poot_wgpu_recording *rec = poot_calloc(1, sizeof *rec);
  if (!rec) return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: recording");
  rec->base.device = device;
  poot_status st = NULL;
  uint32_t checked = 0, pushes = 0, refs = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (cmds[i].kind != POOT_DEVICE_CMD_DISPATCH) {
      refs += 2;
      continue;
    }
    const poot_wgpu_kernel *k = (const poot_wgpu_kernel *)cmds[i].kernel;
    if (k->base.has_checks) checked++;
    if (k->base.push_count) pushes++;
    refs += k->base.binding_count;
  }
  rec->cmds = poot_calloc(count + 1, sizeof *rec->cmds);
  rec->params = poot_calloc(pushes + 1, sizeof *rec->params);
  rec->checked_dispatch = poot_calloc(checked + 1, sizeof *rec->checked_dispatch);
  rec->checked_kernel = poot_calloc(checked + 1, sizeof *rec->checked_kernel);
  rec->checked_label = poot_calloc(checked + 1, sizeof *rec->checked_label);
  slot_use *slots = poot_calloc(refs + 1, sizeof *slots);
  if (!rec->cmds || !rec->params || !rec->checked_dispatch || !rec->checked_kernel ||
      !rec->checked_label || !slots) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: recording tables");
    goto fail;
  }
  rec->checked_count = checked;
  rec->stage_count = stage_count;
  if (checked) {
    rec->errors_size = checked * d->storage_align;
    rec->zeros = poot_calloc(1, (size_t)rec->errors_size);
    if (!rec->zeros) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: error words");
      goto fail;
    }
    st =
        poot__wg_raw_buffer(d, rec->errors_size,
                            POOT_WG_USAGE_STORAGE | POOT_WG_USAGE_COPY_SRC | POOT_WG_USAGE_COPY_DST,
                            "error words", &rec->errors);
    if (st) goto fail;
  }
  uint32_t ci = 0, nslots = 0;
  for (uint32_t i = 0; i < count; i++) {
    const poot_device_cmd *c = &cmds[i];
    poot_wg_cmd *w = &rec->cmds[i];
    w->stage = stage_of[i];
    rec->cmd_count = i + 1;
    if (c->kind == POOT_DEVICE_CMD_COPY) {
      w->copy = true;
      w->src = ((poot_wgpu_buffer *)c->src)->buffer;
      w->dst = ((poot_wgpu_buffer *)c->dst)->buffer;
      w->src_offset = c->src_offset;
      w->dst_offset = c->dst_offset;
      w->size = c->size;
      note_slot(slots, &nslots, c->src, false);
      note_slot(slots, &nslots, c->dst, true);
      continue;
    }
    poot_wgpu_kernel *k = (poot_wgpu_kernel *)c->kernel;
    for (uint32_t b = 0; b < k->base.binding_count; b++)
      note_slot(slots, &nslots, c->buffers[b], k->binding_written[b]);
    uint32_t this_checked = ci;
    if (k->base.has_checks) {
      rec->checked_dispatch[ci] = i;
      rec->checked_kernel[ci] = poot_strdup(k->base.name);
      rec->checked_label[ci] = c->label ? poot_strdup(c->label) : NULL;
      ci++;
      if (!rec->checked_kernel[ci - 1] || (c->label && !rec->checked_label[ci - 1])) {
        st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: naming checked dispatch %u", i);
        goto fail;
      }
    }
    st = bake_group(d, rec, c, i, this_checked, &w->group);
    if (st) goto fail;
    w->pipeline = k->pipeline;
    for (int g = 0; g < 3; g++) w->grid[g] = c->grid[g] ? c->grid[g] : 1;
  }
  /* SLOT buffers no command writes are the host's inputs: written before
   * every replay. One a command writes (an output) is read back instead. */
  rec->slot_inputs = poot_calloc(nslots + 1, sizeof *rec->slot_inputs);
  rec->slot_outputs = poot_calloc(nslots + 1, sizeof *rec->slot_outputs);
  rec->output_offset = poot_calloc(nslots + 1, sizeof *rec->output_offset);
  if (!rec->slot_inputs || !rec->slot_outputs || !rec->output_offset) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: slot list");
    goto fail;
  }
  for (uint32_t i = 0; i < nslots; i++)
    if (slots[i].written)
      rec->slot_outputs[rec->slot_output_count++] = slots[i].b;
    else
      rec->slot_inputs[rec->slot_input_count++] = slots[i].b;
  poot_free(slots);
  slots = NULL;
  /* The results buffer: the error words, then each output of at most
   * POOT_WG_RESULT_MAX bytes, so that one map at synchronize brings back all
   * a step reads (the engine's outputs are small). */
  rec->results_size = rec->errors_size;
  for (uint32_t i = 0; i < rec->slot_output_count; i++) {
    const uint64_t size = rec->slot_outputs[i]->alloc_size;
    rec->output_offset[i] = size <= POOT_WG_RESULT_MAX ? rec->results_size : UINT64_MAX;
    if (size <= POOT_WG_RESULT_MAX) rec->results_size += (size + 7) & ~(uint64_t)7;
  }
  if (d->timestamp_ns > 0 && count > 0) {
    poot_wg_query_set_desc qd = {
        .label = poot__wg_str("replay timestamps"), .type = POOT_WG_QUERY_TIMESTAMP, .count = 2};
    poot__wg_scope_push(d);
    rec->timestamps = d->rt.api.wgpuDeviceCreateQuerySet(d->device, &qd);
    st = poot__wg_scope_pop(d, "the replay's timestamp queries");
    if (!st)
      st = poot__wg_raw_buffer(d, 256, POOT_WG_USAGE_QUERY_RESOLVE | POOT_WG_USAGE_COPY_SRC,
                               "timestamp resolve", &rec->resolve);
    if (st) goto fail;
    rec->timestamps_offset = (rec->results_size + 7) & ~(uint64_t)7;
    rec->results_size = rec->timestamps_offset + 16;
  }
  if (rec->results_size) {
    st = poot__wg_raw_buffer(d, rec->results_size, POOT_WG_USAGE_MAP_READ | POOT_WG_USAGE_COPY_DST,
                             "results readback", &rec->results);
    if (st) goto fail;
  }
  *out_recording = &rec->base;
  return NULL;
fail:
  poot_free(slots);
  poot__wg_recording_destroy(device, &rec->base);
  return st;
}

/* ------------------------------------------------------ replay and sync ---- */

/* Writes the closing timestamp and copies it, the error words and the small
 * outputs into the results buffer (the end of the last stage). */
static void copy_results(poot_wgpu_device *d, poot_wgpu_recording *rec,
                         poot_wg_command_encoder enc) {
  const poot_wg_api *api = &d->rt.api;
  if (rec->timestamps) {
    api->wgpuCommandEncoderWriteTimestamp(enc, rec->timestamps, 1);
    api->wgpuCommandEncoderResolveQuerySet(enc, rec->timestamps, 0, 2, rec->resolve, 0);
    api->wgpuCommandEncoderCopyBufferToBuffer(enc, rec->resolve, 0, rec->results,
                                              rec->timestamps_offset, 16);
  }
  if (rec->errors)
    api->wgpuCommandEncoderCopyBufferToBuffer(enc, rec->errors, 0, rec->results, 0,
                                              rec->errors_size);
  for (uint32_t i = 0; i < rec->slot_output_count; i++) {
    if (rec->output_offset[i] == UINT64_MAX) continue;
    poot_wgpu_buffer *b = rec->slot_outputs[i];
    api->wgpuCommandEncoderCopyBufferToBuffer(enc, b->buffer, 0, rec->results,
                                              rec->output_offset[i], b->alloc_size);
  }
}

/* Encodes stage `s` of the cached list into one command buffer; the first
 * stage starts with a timestamp, the last ends with the other and copies the
 * results out (copy_results). */
static poot_status encode_stage(poot_wgpu_device *d, poot_wgpu_recording *rec, uint32_t s,
                                uint32_t *cursor, poot_wg_command_buffer *out) {
  const poot_wg_api *api = &d->rt.api;
  poot_wg_command_encoder enc = api->wgpuDeviceCreateCommandEncoder(d->device, NULL);
  if (!enc) return poot_status_make(POOT_DEVICE_LOST, "wgpu: no command encoder");
  poot_wg_compute_pass pass = NULL;
  if (s == 0 && rec->timestamps) api->wgpuCommandEncoderWriteTimestamp(enc, rec->timestamps, 0);
  for (; *cursor < rec->cmd_count && rec->cmds[*cursor].stage == s; (*cursor)++) {
    const poot_wg_cmd *w = &rec->cmds[*cursor];
    if (w->copy) {
      if (pass) {
        api->wgpuComputePassEncoderEnd(pass);
        api->wgpuComputePassEncoderRelease(pass);
        pass = NULL;
      }
      api->wgpuCommandEncoderCopyBufferToBuffer(enc, w->src, w->src_offset, w->dst, w->dst_offset,
                                                w->size);
      continue;
    }
    /* Dispatches of one compute pass see each other's writes: WebGPU
     * synchronizes every dispatch's storage accesses with the next. */
    if (!pass) pass = api->wgpuCommandEncoderBeginComputePass(enc, NULL);
    api->wgpuComputePassEncoderSetPipeline(pass, w->pipeline);
    api->wgpuComputePassEncoderSetBindGroup(pass, 0, w->group, 0, NULL);
    api->wgpuComputePassEncoderDispatchWorkgroups(pass, w->grid[0], w->grid[1], w->grid[2]);
  }
  if (pass) {
    api->wgpuComputePassEncoderEnd(pass);
    api->wgpuComputePassEncoderRelease(pass);
  }
  if (s + 1 == rec->stage_count && rec->results) copy_results(d, rec, enc);
  *out = api->wgpuCommandEncoderFinish(enc, NULL);
  api->wgpuCommandEncoderRelease(enc);
  if (!*out) return poot_status_make(POOT_DEVICE_LOST, "wgpu: finishing stage %u's commands", s);
  return NULL;
}

poot_status poot__wg_replay(poot_device *device, poot_device_recording *recording) {
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  poot_wgpu_recording *rec = (poot_wgpu_recording *)recording;
  const poot_wg_api *api = &d->rt.api;
  if (d->inject == POOT_WGPU_FAULT_SUBMIT_DEVICE_LOST) {
    d->inject = POOT_WGPU_FAULT_NONE;
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: queue submission (injected): device lost");
  }
  if (d->inject == POOT_WGPU_FAULT_DESTROY_DEVICE) {
    d->inject = POOT_WGPU_FAULT_NONE;
    api->wgpuDeviceDestroy(d->device);
    (void)api->wgpuDevicePoll(d->device, 0, NULL);
  }
  POOT_TRY(poot__wg_check_lost(d, "a replay"));
  /* The host's slot values and zeroed error words go first, in queue
   * order before the commands that read them. */
  for (uint32_t i = 0; i < rec->slot_input_count; i++) {
    poot_wgpu_buffer *b = rec->slot_inputs[i];
    if (!b->device_newer)
      api->wgpuQueueWriteBuffer(d->queue, b->buffer, 0, b->shadow, (size_t)b->alloc_size);
  }
  for (uint32_t i = 0; i < rec->slot_output_count; i++) rec->slot_outputs[i]->device_newer = true;
  if (rec->errors)
    api->wgpuQueueWriteBuffer(d->queue, rec->errors, 0, rec->zeros, (size_t)rec->errors_size);
  /* wgpu-native ends the process when a submission fails (it does not
   * report that one through a callback), so a loss the library has told of
   * by now, through either callback, stops the replay here. */
  POOT_TRY(poot__wg_check_lost(d, "a replay"));
  poot_wg_map_state *state = poot_calloc(1, sizeof *state);
  poot_wg_command_buffer cbs_small[8];
  poot_wg_command_buffer *cbs =
      rec->stage_count <= 8 ? cbs_small : poot_calloc(rec->stage_count, sizeof *cbs);
  if (!state || !cbs) {
    poot_free(state);
    if (cbs && cbs != cbs_small) poot_free(cbs);
    return poot_status_make(POOT_OUT_OF_MEMORY, "wgpu: replay state");
  }
  /* The re-encoding this backend pays every step (timed). */
  const uint64_t t0 = poot_time_ns();
  poot_status st = NULL;
  uint32_t cursor = 0, made = 0;
  for (uint32_t s = 0; s < rec->stage_count && !st; s++) {
    st = encode_stage(d, rec, s, &cursor, &cbs[s]);
    if (!st) made++;
  }
  d->base.encode_ns += poot_time_ns() - t0;
  d->base.encodes++;
  if (!st && made) api->wgpuQueueSubmit(d->queue, made, cbs);
  for (uint32_t s = 0; s < made; s++) api->wgpuCommandBufferRelease(cbs[s]);
  if (cbs != cbs_small) poot_free(cbs);
  if (!st) st = poot__wg_check_lost(d, "a submission");
  if (st) {
    poot_free(state);
    return st;
  }
  /* Completion: the map of the results (which waits for the commands that
   * wrote them), else the queue's own answer. */
  if (rec->results) {
    poot_wg_map_cb_info cb = {.mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS,
                              .callback = poot__wg_on_map,
                              .userdata1 = state};
    (void)api->wgpuBufferMapAsync(rec->results, POOT_WG_MAP_READ, 0, (size_t)rec->results_size, cb);
    d->pending_mapped = true;
  } else {
    poot_wg_done_cb_info cb = {.mode = POOT_WG_CALLBACK_ALLOW_SPONTANEOUS,
                               .callback = poot__wg_on_map,
                               .userdata1 = state};
    (void)api->wgpuQueueOnSubmittedWorkDone(d->queue, cb);
    d->pending_mapped = false;
  }
  d->pending_state = state;
  return NULL;
}

poot_status poot__wg_synchronize(poot_device *device, uint64_t timeout_ns,
                                 uint64_t *out_device_ns) {
  *out_device_ns = 0;
  poot_wgpu_device *d = NULL;
  POOT_TRY(poot__wg_device_of(device, &d));
  poot_wgpu_recording *rec = (poot_wgpu_recording *)device->pending;
  poot_wg_map_state *state = d->pending_state;
  if (!state) return NULL;
  poot_status st = poot__wg_wait(d, &state->done, timeout_ns, "the replay");
  if (st) {
    poot__wg_sink_keep(d->sink, state); /* its callback may still come */
    d->pending_state = NULL;
    return st;
  }
  d->pending_state = NULL;
  const poot_wg_enum status = state->status;
  poot_free(state);
  if (status != POOT_WG_SUCCESS)
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: the replay on '%s' ended with status %u",
                            device->caps.name, (unsigned)status);
  if (!d->pending_mapped || !rec || !rec->results) return NULL;
  d->pending_mapped = false;
  const uint8_t *words =
      d->rt.api.wgpuBufferGetConstMappedRange(rec->results, 0, (size_t)rec->results_size);
  if (!words) {
    d->rt.api.wgpuBufferUnmap(rec->results);
    return poot_status_make(POOT_DEVICE_LOST, "wgpu: the replay's results have no mapped range");
  }
  if (rec->timestamps) {
    uint64_t ts[2];
    memcpy(ts, words + rec->timestamps_offset, sizeof ts);
    if (ts[1] > ts[0]) *out_device_ns = (uint64_t)((double)(ts[1] - ts[0]) * d->timestamp_ns);
  }
  /* The small outputs into their host copies, which downloads then read. */
  for (uint32_t i = 0; i < rec->slot_output_count; i++) {
    if (rec->output_offset[i] == UINT64_MAX) continue;
    poot_wgpu_buffer *b = rec->slot_outputs[i];
    memcpy(b->shadow, words + rec->output_offset[i], (size_t)b->alloc_size);
    b->device_newer = false;
  }
  for (uint32_t i = 0; i < rec->checked_count && !st; i++) {
    uint32_t w;
    memcpy(&w, words + i * d->storage_align, 4);
    if (!w) continue;
    uint32_t code = (uint32_t)__builtin_ctz(w);
    const char *trap = code < POOT_TRAP_COUNT ? poot_trap_name((poot_trap)code) : "unknown";
    st = poot_status_make(POOT_KERNEL_FAULT,
                          "wgpu: dispatch %u (kernel %s%s%s): check failed with trap code %u "
                          "(%s); error word 0x%08x",
                          rec->checked_dispatch[i], rec->checked_kernel[i],
                          rec->checked_label[i] ? ", " : "",
                          rec->checked_label[i] ? rec->checked_label[i] : "", code, trap, w);
  }
  d->rt.api.wgpuBufferUnmap(rec->results);
  return st;
}
