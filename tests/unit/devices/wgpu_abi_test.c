/* Our declarations of the WebGPU C API (src/devices/wgpu/wgpu_api.h) against
 * the header of the library they are used with (webgpu.h and wgpu.h of
 * PyPI's wgpu wheel, found at configure time): the size of every struct, the
 * offset and size of every field, the value of every constant and the size
 * of every scalar type. A mismatch names the field; the build registers this
 * test only where the wheel's headers are installed. */
#include "poot_test.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include "wgpu_api.h"
#include <wgpu.h>

static int g_mismatches;

static void check(const char *what, unsigned long long ours, unsigned long long theirs) {
  if (ours == theirs) return;
  printf("MISMATCH %s: ours %llu, the header's %llu\n", what, ours, theirs);
  g_mismatches++;
}

#define SIZE(ours, theirs) check("sizeof " #ours, sizeof(ours), sizeof(theirs))
#define FIELD(ours, of, theirs, tf)                                                      \
  do {                                                                                   \
    check("offset of " #ours "." #of, offsetof(ours, of), offsetof(theirs, tf));         \
    check("size of " #ours "." #of, sizeof(((ours *)0)->of), sizeof(((theirs *)0)->tf)); \
  } while (0)
#define VALUE(ours, theirs) check(#ours, (unsigned long long)(ours), (unsigned long long)(theirs))

static void test_layouts(void **state) {
  (void)state;
  SIZE(poot_wg_string_view, WGPUStringView);
  FIELD(poot_wg_string_view, data, WGPUStringView, data);
  FIELD(poot_wg_string_view, length, WGPUStringView, length);
  SIZE(poot_wg_chained, WGPUChainedStruct);
  FIELD(poot_wg_chained, next, WGPUChainedStruct, next);
  FIELD(poot_wg_chained, stype, WGPUChainedStruct, sType);
  SIZE(poot_wg_future, WGPUFuture);
  FIELD(poot_wg_future, id, WGPUFuture, id);
  SIZE(poot_wg_adapter_cb_info, WGPURequestAdapterCallbackInfo);
  FIELD(poot_wg_adapter_cb_info, next, WGPURequestAdapterCallbackInfo, nextInChain);
  FIELD(poot_wg_adapter_cb_info, mode, WGPURequestAdapterCallbackInfo, mode);
  FIELD(poot_wg_adapter_cb_info, callback, WGPURequestAdapterCallbackInfo, callback);
  FIELD(poot_wg_adapter_cb_info, userdata1, WGPURequestAdapterCallbackInfo, userdata1);
  FIELD(poot_wg_adapter_cb_info, userdata2, WGPURequestAdapterCallbackInfo, userdata2);
  SIZE(poot_wg_device_cb_info, WGPURequestDeviceCallbackInfo);
  FIELD(poot_wg_device_cb_info, next, WGPURequestDeviceCallbackInfo, nextInChain);
  FIELD(poot_wg_device_cb_info, mode, WGPURequestDeviceCallbackInfo, mode);
  FIELD(poot_wg_device_cb_info, callback, WGPURequestDeviceCallbackInfo, callback);
  FIELD(poot_wg_device_cb_info, userdata1, WGPURequestDeviceCallbackInfo, userdata1);
  FIELD(poot_wg_device_cb_info, userdata2, WGPURequestDeviceCallbackInfo, userdata2);
  SIZE(poot_wg_lost_cb_info, WGPUDeviceLostCallbackInfo);
  FIELD(poot_wg_lost_cb_info, next, WGPUDeviceLostCallbackInfo, nextInChain);
  FIELD(poot_wg_lost_cb_info, mode, WGPUDeviceLostCallbackInfo, mode);
  FIELD(poot_wg_lost_cb_info, callback, WGPUDeviceLostCallbackInfo, callback);
  FIELD(poot_wg_lost_cb_info, userdata1, WGPUDeviceLostCallbackInfo, userdata1);
  FIELD(poot_wg_lost_cb_info, userdata2, WGPUDeviceLostCallbackInfo, userdata2);
  SIZE(poot_wg_map_cb_info, WGPUBufferMapCallbackInfo);
  FIELD(poot_wg_map_cb_info, next, WGPUBufferMapCallbackInfo, nextInChain);
  FIELD(poot_wg_map_cb_info, mode, WGPUBufferMapCallbackInfo, mode);
  FIELD(poot_wg_map_cb_info, callback, WGPUBufferMapCallbackInfo, callback);
  FIELD(poot_wg_map_cb_info, userdata1, WGPUBufferMapCallbackInfo, userdata1);
  FIELD(poot_wg_map_cb_info, userdata2, WGPUBufferMapCallbackInfo, userdata2);
  SIZE(poot_wg_done_cb_info, WGPUQueueWorkDoneCallbackInfo);
  FIELD(poot_wg_done_cb_info, next, WGPUQueueWorkDoneCallbackInfo, nextInChain);
  FIELD(poot_wg_done_cb_info, mode, WGPUQueueWorkDoneCallbackInfo, mode);
  FIELD(poot_wg_done_cb_info, callback, WGPUQueueWorkDoneCallbackInfo, callback);
  FIELD(poot_wg_done_cb_info, userdata1, WGPUQueueWorkDoneCallbackInfo, userdata1);
  FIELD(poot_wg_done_cb_info, userdata2, WGPUQueueWorkDoneCallbackInfo, userdata2);
  SIZE(poot_wg_scope_cb_info, WGPUPopErrorScopeCallbackInfo);
  FIELD(poot_wg_scope_cb_info, next, WGPUPopErrorScopeCallbackInfo, nextInChain);
  FIELD(poot_wg_scope_cb_info, mode, WGPUPopErrorScopeCallbackInfo, mode);
  FIELD(poot_wg_scope_cb_info, callback, WGPUPopErrorScopeCallbackInfo, callback);
  FIELD(poot_wg_scope_cb_info, userdata1, WGPUPopErrorScopeCallbackInfo, userdata1);
  FIELD(poot_wg_scope_cb_info, userdata2, WGPUPopErrorScopeCallbackInfo, userdata2);
  SIZE(poot_wg_error_cb_info, WGPUUncapturedErrorCallbackInfo);
  FIELD(poot_wg_error_cb_info, next, WGPUUncapturedErrorCallbackInfo, nextInChain);
  FIELD(poot_wg_error_cb_info, callback, WGPUUncapturedErrorCallbackInfo, callback);
  FIELD(poot_wg_error_cb_info, userdata1, WGPUUncapturedErrorCallbackInfo, userdata1);
  FIELD(poot_wg_error_cb_info, userdata2, WGPUUncapturedErrorCallbackInfo, userdata2);
  SIZE(poot_wg_instance_desc, WGPUInstanceDescriptor);
  FIELD(poot_wg_instance_desc, next, WGPUInstanceDescriptor, nextInChain);
  FIELD(poot_wg_instance_desc, required_feature_count, WGPUInstanceDescriptor,
        requiredFeatureCount);
  FIELD(poot_wg_instance_desc, required_features, WGPUInstanceDescriptor, requiredFeatures);
  FIELD(poot_wg_instance_desc, required_limits, WGPUInstanceDescriptor, requiredLimits);
  SIZE(poot_wg_instance_extras, WGPUInstanceExtras);
  FIELD(poot_wg_instance_extras, chain, WGPUInstanceExtras, chain);
  FIELD(poot_wg_instance_extras, backends, WGPUInstanceExtras, backends);
  FIELD(poot_wg_instance_extras, flags, WGPUInstanceExtras, flags);
  FIELD(poot_wg_instance_extras, dx12_shader_compiler, WGPUInstanceExtras, dx12ShaderCompiler);
  FIELD(poot_wg_instance_extras, gles3_minor_version, WGPUInstanceExtras, gles3MinorVersion);
  FIELD(poot_wg_instance_extras, gl_fence_behaviour, WGPUInstanceExtras, glFenceBehaviour);
  FIELD(poot_wg_instance_extras, dxc_path, WGPUInstanceExtras, dxcPath);
  FIELD(poot_wg_instance_extras, dxc_max_shader_model, WGPUInstanceExtras, dxcMaxShaderModel);
  FIELD(poot_wg_instance_extras, dx12_presentation_system, WGPUInstanceExtras,
        dx12PresentationSystem);
  FIELD(poot_wg_instance_extras, budget_for_device_creation, WGPUInstanceExtras,
        budgetForDeviceCreation);
  FIELD(poot_wg_instance_extras, budget_for_device_loss, WGPUInstanceExtras, budgetForDeviceLoss);
  FIELD(poot_wg_instance_extras, display_handle, WGPUInstanceExtras, displayHandle);
  SIZE(poot_wg_enumerate_options, WGPUInstanceEnumerateAdapterOptions);
  FIELD(poot_wg_enumerate_options, next, WGPUInstanceEnumerateAdapterOptions, nextInChain);
  FIELD(poot_wg_enumerate_options, backends, WGPUInstanceEnumerateAdapterOptions, backends);
  SIZE(poot_wg_adapter_options, WGPURequestAdapterOptions);
  FIELD(poot_wg_adapter_options, next, WGPURequestAdapterOptions, nextInChain);
  FIELD(poot_wg_adapter_options, feature_level, WGPURequestAdapterOptions, featureLevel);
  FIELD(poot_wg_adapter_options, power_preference, WGPURequestAdapterOptions, powerPreference);
  FIELD(poot_wg_adapter_options, force_fallback_adapter, WGPURequestAdapterOptions,
        forceFallbackAdapter);
  FIELD(poot_wg_adapter_options, backend_type, WGPURequestAdapterOptions, backendType);
  FIELD(poot_wg_adapter_options, compatible_surface, WGPURequestAdapterOptions, compatibleSurface);
  SIZE(poot_wg_adapter_info, WGPUAdapterInfo);
  FIELD(poot_wg_adapter_info, next, WGPUAdapterInfo, nextInChain);
  FIELD(poot_wg_adapter_info, vendor, WGPUAdapterInfo, vendor);
  FIELD(poot_wg_adapter_info, architecture, WGPUAdapterInfo, architecture);
  FIELD(poot_wg_adapter_info, device, WGPUAdapterInfo, device);
  FIELD(poot_wg_adapter_info, description, WGPUAdapterInfo, description);
  FIELD(poot_wg_adapter_info, backend_type, WGPUAdapterInfo, backendType);
  FIELD(poot_wg_adapter_info, adapter_type, WGPUAdapterInfo, adapterType);
  FIELD(poot_wg_adapter_info, vendor_id, WGPUAdapterInfo, vendorID);
  FIELD(poot_wg_adapter_info, device_id, WGPUAdapterInfo, deviceID);
  FIELD(poot_wg_adapter_info, subgroup_min_size, WGPUAdapterInfo, subgroupMinSize);
  FIELD(poot_wg_adapter_info, subgroup_max_size, WGPUAdapterInfo, subgroupMaxSize);
  SIZE(poot_wg_queue_desc, WGPUQueueDescriptor);
  FIELD(poot_wg_queue_desc, next, WGPUQueueDescriptor, nextInChain);
  FIELD(poot_wg_queue_desc, label, WGPUQueueDescriptor, label);
  SIZE(poot_wg_device_desc, WGPUDeviceDescriptor);
  FIELD(poot_wg_device_desc, next, WGPUDeviceDescriptor, nextInChain);
  FIELD(poot_wg_device_desc, label, WGPUDeviceDescriptor, label);
  FIELD(poot_wg_device_desc, required_feature_count, WGPUDeviceDescriptor, requiredFeatureCount);
  FIELD(poot_wg_device_desc, required_features, WGPUDeviceDescriptor, requiredFeatures);
  FIELD(poot_wg_device_desc, required_limits, WGPUDeviceDescriptor, requiredLimits);
  FIELD(poot_wg_device_desc, default_queue, WGPUDeviceDescriptor, defaultQueue);
  FIELD(poot_wg_device_desc, device_lost, WGPUDeviceDescriptor, deviceLostCallbackInfo);
  FIELD(poot_wg_device_desc, uncaptured_error, WGPUDeviceDescriptor, uncapturedErrorCallbackInfo);
  SIZE(poot_wg_buffer_desc, WGPUBufferDescriptor);
  FIELD(poot_wg_buffer_desc, next, WGPUBufferDescriptor, nextInChain);
  FIELD(poot_wg_buffer_desc, label, WGPUBufferDescriptor, label);
  FIELD(poot_wg_buffer_desc, usage, WGPUBufferDescriptor, usage);
  FIELD(poot_wg_buffer_desc, size, WGPUBufferDescriptor, size);
  FIELD(poot_wg_buffer_desc, mapped_at_creation, WGPUBufferDescriptor, mappedAtCreation);
  SIZE(poot_wg_shader_module_desc, WGPUShaderModuleDescriptor);
  FIELD(poot_wg_shader_module_desc, next, WGPUShaderModuleDescriptor, nextInChain);
  FIELD(poot_wg_shader_module_desc, label, WGPUShaderModuleDescriptor, label);
  SIZE(poot_wg_shader_source_wgsl, WGPUShaderSourceWGSL);
  FIELD(poot_wg_shader_source_wgsl, chain, WGPUShaderSourceWGSL, chain);
  FIELD(poot_wg_shader_source_wgsl, code, WGPUShaderSourceWGSL, code);
  SIZE(poot_wg_buffer_binding_layout, WGPUBufferBindingLayout);
  FIELD(poot_wg_buffer_binding_layout, next, WGPUBufferBindingLayout, nextInChain);
  FIELD(poot_wg_buffer_binding_layout, type, WGPUBufferBindingLayout, type);
  FIELD(poot_wg_buffer_binding_layout, has_dynamic_offset, WGPUBufferBindingLayout,
        hasDynamicOffset);
  FIELD(poot_wg_buffer_binding_layout, min_binding_size, WGPUBufferBindingLayout, minBindingSize);
  SIZE(poot_wg_layout_entry, WGPUBindGroupLayoutEntry);
  FIELD(poot_wg_layout_entry, next, WGPUBindGroupLayoutEntry, nextInChain);
  FIELD(poot_wg_layout_entry, binding, WGPUBindGroupLayoutEntry, binding);
  FIELD(poot_wg_layout_entry, visibility, WGPUBindGroupLayoutEntry, visibility);
  FIELD(poot_wg_layout_entry, binding_array_size, WGPUBindGroupLayoutEntry, bindingArraySize);
  FIELD(poot_wg_layout_entry, buffer, WGPUBindGroupLayoutEntry, buffer);
  FIELD(poot_wg_layout_entry, sampler, WGPUBindGroupLayoutEntry, sampler);
  FIELD(poot_wg_layout_entry, texture, WGPUBindGroupLayoutEntry, texture);
  FIELD(poot_wg_layout_entry, storage_texture, WGPUBindGroupLayoutEntry, storageTexture);
  SIZE(poot_wg_bind_group_layout_desc, WGPUBindGroupLayoutDescriptor);
  FIELD(poot_wg_bind_group_layout_desc, next, WGPUBindGroupLayoutDescriptor, nextInChain);
  FIELD(poot_wg_bind_group_layout_desc, label, WGPUBindGroupLayoutDescriptor, label);
  FIELD(poot_wg_bind_group_layout_desc, entry_count, WGPUBindGroupLayoutDescriptor, entryCount);
  FIELD(poot_wg_bind_group_layout_desc, entries, WGPUBindGroupLayoutDescriptor, entries);
  SIZE(poot_wg_pipeline_layout_desc, WGPUPipelineLayoutDescriptor);
  FIELD(poot_wg_pipeline_layout_desc, next, WGPUPipelineLayoutDescriptor, nextInChain);
  FIELD(poot_wg_pipeline_layout_desc, label, WGPUPipelineLayoutDescriptor, label);
  FIELD(poot_wg_pipeline_layout_desc, bind_group_layout_count, WGPUPipelineLayoutDescriptor,
        bindGroupLayoutCount);
  FIELD(poot_wg_pipeline_layout_desc, bind_group_layouts, WGPUPipelineLayoutDescriptor,
        bindGroupLayouts);
  FIELD(poot_wg_pipeline_layout_desc, immediate_size, WGPUPipelineLayoutDescriptor, immediateSize);
  SIZE(poot_wg_compute_state, WGPUComputeState);
  FIELD(poot_wg_compute_state, next, WGPUComputeState, nextInChain);
  FIELD(poot_wg_compute_state, module, WGPUComputeState, module);
  FIELD(poot_wg_compute_state, entry_point, WGPUComputeState, entryPoint);
  FIELD(poot_wg_compute_state, constant_count, WGPUComputeState, constantCount);
  FIELD(poot_wg_compute_state, constants, WGPUComputeState, constants);
  SIZE(poot_wg_compute_pipeline_desc, WGPUComputePipelineDescriptor);
  FIELD(poot_wg_compute_pipeline_desc, next, WGPUComputePipelineDescriptor, nextInChain);
  FIELD(poot_wg_compute_pipeline_desc, label, WGPUComputePipelineDescriptor, label);
  FIELD(poot_wg_compute_pipeline_desc, layout, WGPUComputePipelineDescriptor, layout);
  FIELD(poot_wg_compute_pipeline_desc, compute, WGPUComputePipelineDescriptor, compute);
  SIZE(poot_wg_bind_group_entry, WGPUBindGroupEntry);
  FIELD(poot_wg_bind_group_entry, next, WGPUBindGroupEntry, nextInChain);
  FIELD(poot_wg_bind_group_entry, binding, WGPUBindGroupEntry, binding);
  FIELD(poot_wg_bind_group_entry, buffer, WGPUBindGroupEntry, buffer);
  FIELD(poot_wg_bind_group_entry, offset, WGPUBindGroupEntry, offset);
  FIELD(poot_wg_bind_group_entry, size, WGPUBindGroupEntry, size);
  FIELD(poot_wg_bind_group_entry, sampler, WGPUBindGroupEntry, sampler);
  FIELD(poot_wg_bind_group_entry, texture_view, WGPUBindGroupEntry, textureView);
  SIZE(poot_wg_bind_group_desc, WGPUBindGroupDescriptor);
  FIELD(poot_wg_bind_group_desc, next, WGPUBindGroupDescriptor, nextInChain);
  FIELD(poot_wg_bind_group_desc, label, WGPUBindGroupDescriptor, label);
  FIELD(poot_wg_bind_group_desc, layout, WGPUBindGroupDescriptor, layout);
  FIELD(poot_wg_bind_group_desc, entry_count, WGPUBindGroupDescriptor, entryCount);
  FIELD(poot_wg_bind_group_desc, entries, WGPUBindGroupDescriptor, entries);
  SIZE(poot_wg_limits, WGPULimits);
  FIELD(poot_wg_limits, next, WGPULimits, nextInChain);
  FIELD(poot_wg_limits, max_texture_dimension_1d, WGPULimits, maxTextureDimension1D);
  FIELD(poot_wg_limits, max_texture_dimension_2d, WGPULimits, maxTextureDimension2D);
  FIELD(poot_wg_limits, max_texture_dimension_3d, WGPULimits, maxTextureDimension3D);
  FIELD(poot_wg_limits, max_texture_array_layers, WGPULimits, maxTextureArrayLayers);
  FIELD(poot_wg_limits, max_bind_groups, WGPULimits, maxBindGroups);
  FIELD(poot_wg_limits, max_bind_groups_plus_vertex_buffers, WGPULimits,
        maxBindGroupsPlusVertexBuffers);
  FIELD(poot_wg_limits, max_bindings_per_bind_group, WGPULimits, maxBindingsPerBindGroup);
  FIELD(poot_wg_limits, max_dynamic_uniform_buffers_per_pipeline_layout, WGPULimits,
        maxDynamicUniformBuffersPerPipelineLayout);
  FIELD(poot_wg_limits, max_dynamic_storage_buffers_per_pipeline_layout, WGPULimits,
        maxDynamicStorageBuffersPerPipelineLayout);
  FIELD(poot_wg_limits, max_sampled_textures_per_shader_stage, WGPULimits,
        maxSampledTexturesPerShaderStage);
  FIELD(poot_wg_limits, max_samplers_per_shader_stage, WGPULimits, maxSamplersPerShaderStage);
  FIELD(poot_wg_limits, max_storage_buffers_per_shader_stage, WGPULimits,
        maxStorageBuffersPerShaderStage);
  FIELD(poot_wg_limits, max_storage_textures_per_shader_stage, WGPULimits,
        maxStorageTexturesPerShaderStage);
  FIELD(poot_wg_limits, max_uniform_buffers_per_shader_stage, WGPULimits,
        maxUniformBuffersPerShaderStage);
  FIELD(poot_wg_limits, max_uniform_buffer_binding_size, WGPULimits, maxUniformBufferBindingSize);
  FIELD(poot_wg_limits, max_storage_buffer_binding_size, WGPULimits, maxStorageBufferBindingSize);
  FIELD(poot_wg_limits, min_uniform_buffer_offset_alignment, WGPULimits,
        minUniformBufferOffsetAlignment);
  FIELD(poot_wg_limits, min_storage_buffer_offset_alignment, WGPULimits,
        minStorageBufferOffsetAlignment);
  FIELD(poot_wg_limits, max_vertex_buffers, WGPULimits, maxVertexBuffers);
  FIELD(poot_wg_limits, max_buffer_size, WGPULimits, maxBufferSize);
  FIELD(poot_wg_limits, max_vertex_attributes, WGPULimits, maxVertexAttributes);
  FIELD(poot_wg_limits, max_vertex_buffer_array_stride, WGPULimits, maxVertexBufferArrayStride);
  FIELD(poot_wg_limits, max_inter_stage_shader_variables, WGPULimits, maxInterStageShaderVariables);
  FIELD(poot_wg_limits, max_color_attachments, WGPULimits, maxColorAttachments);
  FIELD(poot_wg_limits, max_color_attachment_bytes_per_sample, WGPULimits,
        maxColorAttachmentBytesPerSample);
  FIELD(poot_wg_limits, max_compute_workgroup_storage_size, WGPULimits,
        maxComputeWorkgroupStorageSize);
  FIELD(poot_wg_limits, max_compute_invocations_per_workgroup, WGPULimits,
        maxComputeInvocationsPerWorkgroup);
  FIELD(poot_wg_limits, max_compute_workgroup_size_x, WGPULimits, maxComputeWorkgroupSizeX);
  FIELD(poot_wg_limits, max_compute_workgroup_size_y, WGPULimits, maxComputeWorkgroupSizeY);
  FIELD(poot_wg_limits, max_compute_workgroup_size_z, WGPULimits, maxComputeWorkgroupSizeZ);
  FIELD(poot_wg_limits, max_compute_workgroups_per_dimension, WGPULimits,
        maxComputeWorkgroupsPerDimension);
  FIELD(poot_wg_limits, max_immediate_size, WGPULimits, maxImmediateSize);
  SIZE(poot_wg_query_set_desc, WGPUQuerySetDescriptor);
  FIELD(poot_wg_query_set_desc, next, WGPUQuerySetDescriptor, nextInChain);
  FIELD(poot_wg_query_set_desc, label, WGPUQuerySetDescriptor, label);
  FIELD(poot_wg_query_set_desc, type, WGPUQuerySetDescriptor, type);
  FIELD(poot_wg_query_set_desc, count, WGPUQuerySetDescriptor, count);
  SIZE(poot_wg_bool, WGPUBool);
  SIZE(poot_wg_flags, WGPUFlags);
  SIZE(poot_wg_flags, WGPUBufferUsage);
  SIZE(poot_wg_flags, WGPUInstanceBackend);
  SIZE(poot_wg_enum, WGPUSType);
  SIZE(poot_wg_enum, WGPUFeatureName);
  SIZE(poot_wg_instance, WGPUInstance);
  assert_int_equal(g_mismatches, 0);
}

static void test_values(void **state) {
  (void)state;
  g_mismatches = 0;
  VALUE(POOT_WG_STRLEN, WGPU_STRLEN);
  VALUE(POOT_WG_WHOLE_SIZE, WGPU_WHOLE_SIZE);
  VALUE(POOT_WG_STYPE_SHADER_SOURCE_WGSL, WGPUSType_ShaderSourceWGSL);
  VALUE(POOT_WG_STYPE_INSTANCE_EXTRAS, WGPUSType_InstanceExtras);
  VALUE(POOT_WG_CALLBACK_ALLOW_PROCESS_EVENTS, WGPUCallbackMode_AllowProcessEvents);
  VALUE(POOT_WG_CALLBACK_ALLOW_SPONTANEOUS, WGPUCallbackMode_AllowSpontaneous);
  VALUE(POOT_WG_SUCCESS, WGPUStatus_Success);
  VALUE(POOT_WG_SUCCESS, WGPUMapAsyncStatus_Success);
  VALUE(POOT_WG_SUCCESS, WGPUQueueWorkDoneStatus_Success);
  VALUE(POOT_WG_SUCCESS, WGPUPopErrorScopeStatus_Success);
  VALUE(POOT_WG_SUCCESS, WGPURequestDeviceStatus_Success);
  VALUE(POOT_WG_LOST_UNKNOWN, WGPUDeviceLostReason_Unknown);
  VALUE(POOT_WG_LOST_DESTROYED, WGPUDeviceLostReason_Destroyed);
  VALUE(POOT_WG_LOST_CALLBACK_CANCELLED, WGPUDeviceLostReason_CallbackCancelled);
  VALUE(POOT_WG_ERROR_NONE, WGPUErrorType_NoError);
  VALUE(POOT_WG_ERROR_VALIDATION, WGPUErrorType_Validation);
  VALUE(POOT_WG_ERROR_OUT_OF_MEMORY, WGPUErrorType_OutOfMemory);
  VALUE(POOT_WG_FILTER_VALIDATION, WGPUErrorFilter_Validation);
  VALUE(POOT_WG_FILTER_OUT_OF_MEMORY, WGPUErrorFilter_OutOfMemory);
  VALUE(POOT_WG_BINDING_UNIFORM, WGPUBufferBindingType_Uniform);
  VALUE(POOT_WG_BINDING_STORAGE, WGPUBufferBindingType_Storage);
  VALUE(POOT_WG_BINDING_READ_ONLY_STORAGE, WGPUBufferBindingType_ReadOnlyStorage);
  VALUE(POOT_WG_ADAPTER_DISCRETE, WGPUAdapterType_DiscreteGPU);
  VALUE(POOT_WG_ADAPTER_INTEGRATED, WGPUAdapterType_IntegratedGPU);
  VALUE(POOT_WG_ADAPTER_CPU, WGPUAdapterType_CPU);
  VALUE(POOT_WG_BACKEND_VULKAN, WGPUBackendType_Vulkan);
  VALUE(POOT_WG_FEATURE_TIMESTAMP_QUERY, WGPUFeatureName_TimestampQuery);
  VALUE(POOT_WG_FEATURE_SHADER_F16, WGPUFeatureName_ShaderF16);
  VALUE(POOT_WG_FEATURE_SUBGROUPS, WGPUFeatureName_Subgroups);
  VALUE(POOT_WG_FEATURE_NATIVE_SUBGROUP, WGPUNativeFeature_Subgroup);
  VALUE(POOT_WG_FEATURE_NATIVE_SHADER_INT64, WGPUNativeFeature_ShaderInt64);
  VALUE(POOT_WG_FEATURE_NATIVE_SHADER_F32_ATOMIC, WGPUNativeFeature_ShaderFloat32Atomic);
  VALUE(POOT_WG_POWER_HIGH_PERFORMANCE, WGPUPowerPreference_HighPerformance);
  VALUE(POOT_WG_USAGE_MAP_READ, WGPUBufferUsage_MapRead);
  VALUE(POOT_WG_USAGE_COPY_SRC, WGPUBufferUsage_CopySrc);
  VALUE(POOT_WG_USAGE_COPY_DST, WGPUBufferUsage_CopyDst);
  VALUE(POOT_WG_USAGE_UNIFORM, WGPUBufferUsage_Uniform);
  VALUE(POOT_WG_USAGE_STORAGE, WGPUBufferUsage_Storage);
  VALUE(POOT_WG_STAGE_COMPUTE, WGPUShaderStage_Compute);
  VALUE(POOT_WG_USAGE_QUERY_RESOLVE, WGPUBufferUsage_QueryResolve);
  VALUE(POOT_WG_QUERY_TIMESTAMP, WGPUQueryType_Timestamp);
  VALUE(POOT_WG_FEATURE_NATIVE_TIMESTAMP_IN_ENCODERS,
        WGPUNativeFeature_TimestampQueryInsideEncoders);
  VALUE(POOT_WG_MAP_READ, WGPUMapMode_Read);
  VALUE(POOT_WG_INSTANCE_BACKEND_VULKAN, WGPUInstanceBackend_Vulkan);
  VALUE(POOT_WG_INSTANCE_BACKEND_PRIMARY, WGPUInstanceBackend_Primary);
  assert_int_equal(g_mismatches, 0);
}

/* The library these headers came with (POOT_WGPU_LIBRARY, set by the build)
 * is of the release the device accepts. */
static void test_library_release(void **state) {
  (void)state;
  const char *path = getenv("POOT_WGPU_LIBRARY");
  if (!path || !*path) {
    printf("POOT_WGPU_LIBRARY unset: the library's release is not checked here\n");
    return;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(lib);
  uint32_t (*version)(void) = (uint32_t(*)(void))dlsym(lib, "wgpuGetVersion");
  assert_non_null(version);
  uint32_t v = version();
  printf("%s: wgpu-native %u.%u.%u.%u; poot accepts release %u\n", path, v >> 24, (v >> 16) & 255u,
         (v >> 8) & 255u, v & 255u, POOT_WG_ABI_MAJOR);
  assert_int_equal(v >> 24, POOT_WG_ABI_MAJOR);
  dlclose(lib);
}

int main(void) {
  printf("checked against %s/webgpu.h and wgpu.h\n", POOT_WGPU_HEADER_DIR);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layouts),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_library_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
