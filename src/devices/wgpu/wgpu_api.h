/* The part of the WebGPU C API (webgpu.h, with wgpu-native's wgpu.h
 * additions) that the wgpu device uses, declared here so that the build
 * needs no SDK: the library itself is loaded at run time (wgpu_device.c).
 *
 * Written from the API's specification, with our own names. The layout of
 * every struct and the value of every constant must equal the header of the
 * library version poot is tested with (wgpu-native as PyPI's `wgpu` 0.32.0
 * ships it: the webgpu.h of 2025 with WGPUStringView, userdata1/2 callback
 * infos, WGPUFuture, immediate data in the pipeline layout and the binding
 * array size in the layout entry); the test devices_wgpu_abi compares every
 * one with that header when it is installed. Never leaves src/devices/wgpu. */
#ifndef POOT_DEVICES_WGPU_WGPU_API_H
#define POOT_DEVICES_WGPU_WGPU_API_H

#include <stddef.h>
#include <stdint.h>

/* Opaque handles. */
typedef struct poot_wg_instance_t *poot_wg_instance;
typedef struct poot_wg_adapter_t *poot_wg_adapter;
typedef struct poot_wg_device_t *poot_wg_device;
typedef struct poot_wg_queue_t *poot_wg_queue;
typedef struct poot_wg_buffer_t *poot_wg_buffer;
typedef struct poot_wg_shader_module_t *poot_wg_shader_module;
typedef struct poot_wg_bind_group_layout_t *poot_wg_bind_group_layout;
typedef struct poot_wg_pipeline_layout_t *poot_wg_pipeline_layout;
typedef struct poot_wg_compute_pipeline_t *poot_wg_compute_pipeline;
typedef struct poot_wg_bind_group_t *poot_wg_bind_group;
typedef struct poot_wg_command_encoder_t *poot_wg_command_encoder;
typedef struct poot_wg_compute_pass_t *poot_wg_compute_pass;
typedef struct poot_wg_command_buffer_t *poot_wg_command_buffer;
typedef struct poot_wg_query_set_t *poot_wg_query_set;

/* Scalars. Enumerations are 32-bit values; flag sets are 64-bit. */
typedef uint32_t poot_wg_bool;
typedef uint32_t poot_wg_enum;
typedef uint64_t poot_wg_flags;

/* The wgpu-native release these declarations are those of (wgpuGetVersion:
 * major << 24 | minor << 16 | patch << 8 | build; PyPI's wgpu 0.32.0 ships
 * 29.0.1.1). A library of another major release is refused: its structs
 * may differ. */
#define POOT_WG_ABI_MAJOR 29u

#define POOT_WG_STRLEN SIZE_MAX
#define POOT_WG_WHOLE_SIZE UINT64_MAX

/* Structure types of chained structs. */
#define POOT_WG_STYPE_SHADER_SOURCE_WGSL 0x00000002u
#define POOT_WG_STYPE_INSTANCE_EXTRAS 0x00030004u /* wgpu-native */

/* Callback modes. */
#define POOT_WG_CALLBACK_ALLOW_PROCESS_EVENTS 0x00000002u
#define POOT_WG_CALLBACK_ALLOW_SPONTANEOUS 0x00000003u

/* Statuses (each callback's own enumeration; success is 1 in all). */
#define POOT_WG_SUCCESS 0x00000001u

/* Device lost reasons. */
#define POOT_WG_LOST_UNKNOWN 0x00000001u
#define POOT_WG_LOST_DESTROYED 0x00000002u
#define POOT_WG_LOST_CALLBACK_CANCELLED 0x00000003u

/* Error types and error scope filters. */
#define POOT_WG_ERROR_NONE 0x00000001u
#define POOT_WG_ERROR_VALIDATION 0x00000002u
#define POOT_WG_ERROR_OUT_OF_MEMORY 0x00000003u
#define POOT_WG_FILTER_VALIDATION 0x00000001u
#define POOT_WG_FILTER_OUT_OF_MEMORY 0x00000002u

/* Buffer binding types. */
#define POOT_WG_BINDING_UNIFORM 0x00000002u
#define POOT_WG_BINDING_STORAGE 0x00000003u
#define POOT_WG_BINDING_READ_ONLY_STORAGE 0x00000004u

/* Adapter types and backends. */
#define POOT_WG_ADAPTER_DISCRETE 0x00000001u
#define POOT_WG_ADAPTER_INTEGRATED 0x00000002u
#define POOT_WG_ADAPTER_CPU 0x00000003u
#define POOT_WG_BACKEND_VULKAN 0x00000006u

/* Features: the standard ones, then wgpu-native's. */
#define POOT_WG_FEATURE_TIMESTAMP_QUERY 0x00000009u
#define POOT_WG_FEATURE_SHADER_F16 0x0000000Bu
#define POOT_WG_FEATURE_SUBGROUPS 0x00000012u
#define POOT_WG_FEATURE_NATIVE_SUBGROUP 0x00030021u
#define POOT_WG_FEATURE_NATIVE_TIMESTAMP_IN_ENCODERS 0x00030024u
#define POOT_WG_FEATURE_NATIVE_SHADER_INT64 0x00030026u
#define POOT_WG_FEATURE_NATIVE_SHADER_F32_ATOMIC 0x00030027u

/* Power preference. */
#define POOT_WG_POWER_HIGH_PERFORMANCE 0x00000002u

/* Flag bits: buffer usage, shader stages, map modes. */
#define POOT_WG_USAGE_MAP_READ 0x0001u
#define POOT_WG_USAGE_COPY_SRC 0x0004u
#define POOT_WG_USAGE_COPY_DST 0x0008u
#define POOT_WG_USAGE_UNIFORM 0x0040u
#define POOT_WG_USAGE_STORAGE 0x0080u
#define POOT_WG_USAGE_QUERY_RESOLVE 0x0200u

/* Query types. */
#define POOT_WG_QUERY_TIMESTAMP 0x00000002u
#define POOT_WG_STAGE_COMPUTE 0x0004u
#define POOT_WG_MAP_READ 0x0001u

/* A string with its length (POOT_WG_STRLEN: NUL-terminated). */
typedef struct poot_wg_string_view {
  const char *data;
  size_t length;
} poot_wg_string_view;

typedef struct poot_wg_chained {
  struct poot_wg_chained *next;
  poot_wg_enum stype;
} poot_wg_chained;

typedef struct poot_wg_future {
  uint64_t id;
} poot_wg_future;

typedef void (*poot_wg_adapter_cb)(poot_wg_enum status, poot_wg_adapter adapter,
                                   poot_wg_string_view message, void *userdata1, void *userdata2);
typedef void (*poot_wg_device_cb)(poot_wg_enum status, poot_wg_device device,
                                  poot_wg_string_view message, void *userdata1, void *userdata2);
typedef void (*poot_wg_lost_cb)(const poot_wg_device *device, poot_wg_enum reason,
                                poot_wg_string_view message, void *userdata1, void *userdata2);
typedef void (*poot_wg_error_cb)(const poot_wg_device *device, poot_wg_enum type,
                                 poot_wg_string_view message, void *userdata1, void *userdata2);
typedef void (*poot_wg_map_cb)(poot_wg_enum status, poot_wg_string_view message, void *userdata1,
                               void *userdata2);
typedef void (*poot_wg_done_cb)(poot_wg_enum status, poot_wg_string_view message, void *userdata1,
                                void *userdata2);
typedef void (*poot_wg_scope_cb)(poot_wg_enum status, poot_wg_enum type,
                                 poot_wg_string_view message, void *userdata1, void *userdata2);

/* A callback info: next, mode, callback, two user pointers (the uncaptured
 * error's has no mode). */
#define POOT_WG_CALLBACK_INFO(name, fn) \
  typedef struct name {                 \
    poot_wg_chained *next;              \
    poot_wg_enum mode;                  \
    fn callback;                        \
    void *userdata1;                    \
    void *userdata2;                    \
  } name
POOT_WG_CALLBACK_INFO(poot_wg_adapter_cb_info, poot_wg_adapter_cb);
POOT_WG_CALLBACK_INFO(poot_wg_device_cb_info, poot_wg_device_cb);
POOT_WG_CALLBACK_INFO(poot_wg_lost_cb_info, poot_wg_lost_cb);
POOT_WG_CALLBACK_INFO(poot_wg_map_cb_info, poot_wg_map_cb);
POOT_WG_CALLBACK_INFO(poot_wg_done_cb_info, poot_wg_done_cb);
POOT_WG_CALLBACK_INFO(poot_wg_scope_cb_info, poot_wg_scope_cb);
#undef POOT_WG_CALLBACK_INFO

typedef struct poot_wg_error_cb_info {
  poot_wg_chained *next;
  poot_wg_error_cb callback;
  void *userdata1;
  void *userdata2;
} poot_wg_error_cb_info;

typedef struct poot_wg_instance_desc {
  poot_wg_chained *next;
  size_t required_feature_count;
  const poot_wg_enum *required_features;
  const void *required_limits;
} poot_wg_instance_desc;

/* wgpu-native's instance extras (chained to the instance descriptor): which
 * backends the instance may use. Only `backends` is set; the rest is zero. */
typedef struct poot_wg_instance_extras {
  poot_wg_chained chain;
  poot_wg_flags backends;
  poot_wg_flags flags;
  poot_wg_enum dx12_shader_compiler;
  poot_wg_enum gles3_minor_version;
  poot_wg_enum gl_fence_behaviour;
  poot_wg_string_view dxc_path;
  poot_wg_enum dxc_max_shader_model;
  poot_wg_enum dx12_presentation_system;
  const uint8_t *budget_for_device_creation;
  const uint8_t *budget_for_device_loss;
  struct {
    poot_wg_enum type;
    struct {
      void *pointer;
      int screen;
    } data; /* the largest member of the handle union */
  } display_handle;
} poot_wg_instance_extras;
/* Backend sets: Vulkan alone, and the primary ones (Vulkan, Metal, DX12,
 * the browser's WebGPU; OpenGL excluded). */
#define POOT_WG_INSTANCE_BACKEND_VULKAN 0x1u
#define POOT_WG_INSTANCE_BACKEND_PRIMARY 0x2Du

/* wgpu-native's options of wgpuInstanceEnumerateAdapters. */
typedef struct poot_wg_enumerate_options {
  const poot_wg_chained *next;
  poot_wg_flags backends;
} poot_wg_enumerate_options;

typedef struct poot_wg_adapter_options {
  poot_wg_chained *next;
  poot_wg_enum feature_level;
  poot_wg_enum power_preference;
  poot_wg_bool force_fallback_adapter;
  poot_wg_enum backend_type;
  void *compatible_surface;
} poot_wg_adapter_options;

typedef struct poot_wg_adapter_info {
  poot_wg_chained *next;
  poot_wg_string_view vendor;
  poot_wg_string_view architecture;
  poot_wg_string_view device;
  poot_wg_string_view description;
  poot_wg_enum backend_type;
  poot_wg_enum adapter_type;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t subgroup_min_size;
  uint32_t subgroup_max_size;
} poot_wg_adapter_info;

typedef struct poot_wg_limits {
  poot_wg_chained *next;
  uint32_t max_texture_dimension_1d;
  uint32_t max_texture_dimension_2d;
  uint32_t max_texture_dimension_3d;
  uint32_t max_texture_array_layers;
  uint32_t max_bind_groups;
  uint32_t max_bind_groups_plus_vertex_buffers;
  uint32_t max_bindings_per_bind_group;
  uint32_t max_dynamic_uniform_buffers_per_pipeline_layout;
  uint32_t max_dynamic_storage_buffers_per_pipeline_layout;
  uint32_t max_sampled_textures_per_shader_stage;
  uint32_t max_samplers_per_shader_stage;
  uint32_t max_storage_buffers_per_shader_stage;
  uint32_t max_storage_textures_per_shader_stage;
  uint32_t max_uniform_buffers_per_shader_stage;
  uint64_t max_uniform_buffer_binding_size;
  uint64_t max_storage_buffer_binding_size;
  uint32_t min_uniform_buffer_offset_alignment;
  uint32_t min_storage_buffer_offset_alignment;
  uint32_t max_vertex_buffers;
  uint64_t max_buffer_size;
  uint32_t max_vertex_attributes;
  uint32_t max_vertex_buffer_array_stride;
  uint32_t max_inter_stage_shader_variables;
  uint32_t max_color_attachments;
  uint32_t max_color_attachment_bytes_per_sample;
  uint32_t max_compute_workgroup_storage_size;
  uint32_t max_compute_invocations_per_workgroup;
  uint32_t max_compute_workgroup_size_x;
  uint32_t max_compute_workgroup_size_y;
  uint32_t max_compute_workgroup_size_z;
  uint32_t max_compute_workgroups_per_dimension;
  uint32_t max_immediate_size;
} poot_wg_limits;

typedef struct poot_wg_queue_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
} poot_wg_queue_desc;

typedef struct poot_wg_device_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  size_t required_feature_count;
  const poot_wg_enum *required_features;
  const poot_wg_limits *required_limits;
  poot_wg_queue_desc default_queue;
  poot_wg_lost_cb_info device_lost;
  poot_wg_error_cb_info uncaptured_error;
} poot_wg_device_desc;

typedef struct poot_wg_buffer_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  poot_wg_flags usage;
  uint64_t size;
  poot_wg_bool mapped_at_creation;
} poot_wg_buffer_desc;

typedef struct poot_wg_shader_module_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
} poot_wg_shader_module_desc;

typedef struct poot_wg_shader_source_wgsl {
  poot_wg_chained chain;
  poot_wg_string_view code;
} poot_wg_shader_source_wgsl;

typedef struct poot_wg_buffer_binding_layout {
  poot_wg_chained *next;
  poot_wg_enum type;
  poot_wg_bool has_dynamic_offset;
  uint64_t min_binding_size;
} poot_wg_buffer_binding_layout;

/* One entry of a bind group layout; poot fills only the buffer part (the
 * sampler, texture and storage texture parts stay zero: not used). */
typedef struct poot_wg_layout_entry {
  poot_wg_chained *next;
  uint32_t binding;
  poot_wg_flags visibility;
  uint32_t binding_array_size;
  poot_wg_buffer_binding_layout buffer;
  struct {
    poot_wg_chained *next;
    poot_wg_enum type;
  } sampler;
  struct {
    poot_wg_chained *next;
    poot_wg_enum sample_type;
    poot_wg_enum view_dimension;
    poot_wg_bool multisampled;
  } texture;
  struct {
    poot_wg_chained *next;
    poot_wg_enum access;
    poot_wg_enum format;
    poot_wg_enum view_dimension;
  } storage_texture;
} poot_wg_layout_entry;

typedef struct poot_wg_bind_group_layout_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  size_t entry_count;
  const poot_wg_layout_entry *entries;
} poot_wg_bind_group_layout_desc;

typedef struct poot_wg_pipeline_layout_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  size_t bind_group_layout_count;
  const poot_wg_bind_group_layout *bind_group_layouts;
  uint32_t immediate_size;
} poot_wg_pipeline_layout_desc;

typedef struct poot_wg_compute_state {
  poot_wg_chained *next;
  poot_wg_shader_module module;
  poot_wg_string_view entry_point;
  size_t constant_count;
  const void *constants;
} poot_wg_compute_state;

typedef struct poot_wg_compute_pipeline_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  poot_wg_pipeline_layout layout;
  poot_wg_compute_state compute;
} poot_wg_compute_pipeline_desc;

typedef struct poot_wg_bind_group_entry {
  poot_wg_chained *next;
  uint32_t binding;
  poot_wg_buffer buffer;
  uint64_t offset;
  uint64_t size;
  void *sampler;
  void *texture_view;
} poot_wg_bind_group_entry;

typedef struct poot_wg_bind_group_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  poot_wg_bind_group_layout layout;
  size_t entry_count;
  const poot_wg_bind_group_entry *entries;
} poot_wg_bind_group_desc;

typedef struct poot_wg_query_set_desc {
  poot_wg_chained *next;
  poot_wg_string_view label;
  poot_wg_enum type;
  uint32_t count;
} poot_wg_query_set_desc;

/* The entry points the device resolves from the library, by name. */
#define POOT_WG_FNS(X)                                                                             \
  X(wgpuCreateInstance, poot_wg_instance, (const poot_wg_instance_desc *))                         \
  X(wgpuInstanceRequestAdapter, poot_wg_future,                                                    \
    (poot_wg_instance, const poot_wg_adapter_options *, poot_wg_adapter_cb_info))                  \
  X(wgpuInstanceProcessEvents, void, (poot_wg_instance))                                           \
  X(wgpuInstanceRelease, void, (poot_wg_instance))                                                 \
  X(wgpuInstanceEnumerateAdapters, size_t,                                                         \
    (poot_wg_instance, const poot_wg_enumerate_options *, poot_wg_adapter *))                      \
  X(wgpuAdapterGetInfo, poot_wg_enum, (poot_wg_adapter, poot_wg_adapter_info *))                   \
  X(wgpuAdapterInfoFreeMembers, void, (poot_wg_adapter_info))                                      \
  X(wgpuAdapterGetLimits, poot_wg_enum, (poot_wg_adapter, poot_wg_limits *))                       \
  X(wgpuAdapterHasFeature, poot_wg_bool, (poot_wg_adapter, poot_wg_enum))                          \
  X(wgpuAdapterRequestDevice, poot_wg_future,                                                      \
    (poot_wg_adapter, const poot_wg_device_desc *, poot_wg_device_cb_info))                        \
  X(wgpuAdapterRelease, void, (poot_wg_adapter))                                                   \
  X(wgpuDeviceGetQueue, poot_wg_queue, (poot_wg_device))                                           \
  X(wgpuDeviceCreateBuffer, poot_wg_buffer, (poot_wg_device, const poot_wg_buffer_desc *))         \
  X(wgpuDeviceCreateShaderModule, poot_wg_shader_module,                                           \
    (poot_wg_device, const poot_wg_shader_module_desc *))                                          \
  X(wgpuDeviceCreateBindGroupLayout, poot_wg_bind_group_layout,                                    \
    (poot_wg_device, const poot_wg_bind_group_layout_desc *))                                      \
  X(wgpuDeviceCreatePipelineLayout, poot_wg_pipeline_layout,                                       \
    (poot_wg_device, const poot_wg_pipeline_layout_desc *))                                        \
  X(wgpuDeviceCreateComputePipeline, poot_wg_compute_pipeline,                                     \
    (poot_wg_device, const poot_wg_compute_pipeline_desc *))                                       \
  X(wgpuDeviceCreateBindGroup, poot_wg_bind_group,                                                 \
    (poot_wg_device, const poot_wg_bind_group_desc *))                                             \
  X(wgpuDeviceCreateCommandEncoder, poot_wg_command_encoder, (poot_wg_device, const void *))       \
  X(wgpuDevicePushErrorScope, void, (poot_wg_device, poot_wg_enum))                                \
  X(wgpuDevicePopErrorScope, poot_wg_future, (poot_wg_device, poot_wg_scope_cb_info))              \
  X(wgpuDeviceDestroy, void, (poot_wg_device))                                                     \
  X(wgpuDeviceRelease, void, (poot_wg_device))                                                     \
  X(wgpuDevicePoll, poot_wg_bool, (poot_wg_device, poot_wg_bool, const uint64_t *))                \
  X(wgpuQueueWriteBuffer, void, (poot_wg_queue, poot_wg_buffer, uint64_t, const void *, size_t))   \
  X(wgpuQueueSubmit, void, (poot_wg_queue, size_t, const poot_wg_command_buffer *))                \
  X(wgpuQueueOnSubmittedWorkDone, poot_wg_future, (poot_wg_queue, poot_wg_done_cb_info))           \
  X(wgpuQueueRelease, void, (poot_wg_queue))                                                       \
  X(wgpuCommandEncoderBeginComputePass, poot_wg_compute_pass,                                      \
    (poot_wg_command_encoder, const void *))                                                       \
  X(wgpuCommandEncoderCopyBufferToBuffer, void,                                                    \
    (poot_wg_command_encoder, poot_wg_buffer, uint64_t, poot_wg_buffer, uint64_t, uint64_t))       \
  X(wgpuCommandEncoderFinish, poot_wg_command_buffer, (poot_wg_command_encoder, const void *))     \
  X(wgpuCommandEncoderRelease, void, (poot_wg_command_encoder))                                    \
  X(wgpuComputePassEncoderSetPipeline, void, (poot_wg_compute_pass, poot_wg_compute_pipeline))     \
  X(wgpuComputePassEncoderSetBindGroup, void,                                                      \
    (poot_wg_compute_pass, uint32_t, poot_wg_bind_group, size_t, const uint32_t *))                \
  X(wgpuComputePassEncoderDispatchWorkgroups, void,                                                \
    (poot_wg_compute_pass, uint32_t, uint32_t, uint32_t))                                          \
  X(wgpuComputePassEncoderEnd, void, (poot_wg_compute_pass))                                       \
  X(wgpuComputePassEncoderRelease, void, (poot_wg_compute_pass))                                   \
  X(wgpuCommandBufferRelease, void, (poot_wg_command_buffer))                                      \
  X(wgpuBufferMapAsync, poot_wg_future,                                                            \
    (poot_wg_buffer, poot_wg_flags, size_t, size_t, poot_wg_map_cb_info))                          \
  X(wgpuBufferGetConstMappedRange, const void *, (poot_wg_buffer, size_t, size_t))                 \
  X(wgpuBufferUnmap, void, (poot_wg_buffer))                                                       \
  X(wgpuBufferDestroy, void, (poot_wg_buffer))                                                     \
  X(wgpuBufferRelease, void, (poot_wg_buffer))                                                     \
  X(wgpuShaderModuleRelease, void, (poot_wg_shader_module))                                        \
  X(wgpuBindGroupLayoutRelease, void, (poot_wg_bind_group_layout))                                 \
  X(wgpuPipelineLayoutRelease, void, (poot_wg_pipeline_layout))                                    \
  X(wgpuComputePipelineRelease, void, (poot_wg_compute_pipeline))                                  \
  X(wgpuBindGroupRelease, void, (poot_wg_bind_group))                                              \
  X(wgpuDeviceCreateQuerySet, poot_wg_query_set, (poot_wg_device, const poot_wg_query_set_desc *)) \
  X(wgpuQuerySetRelease, void, (poot_wg_query_set))                                                \
  X(wgpuCommandEncoderWriteTimestamp, void,                                                        \
    (poot_wg_command_encoder, poot_wg_query_set, uint32_t))                                        \
  X(wgpuCommandEncoderResolveQuerySet, void,                                                       \
    (poot_wg_command_encoder, poot_wg_query_set, uint32_t, uint32_t, poot_wg_buffer, uint64_t))    \
  X(wgpuQueueGetTimestampPeriod, float, (poot_wg_queue))                                           \
  X(wgpuGetVersion, uint32_t, (void))

/* The loaded entry points. */
#define POOT_WG_DECLARE_FN(name, ret, args) ret(*name) args;
typedef struct poot_wg_api {
  POOT_WG_FNS(POOT_WG_DECLARE_FN)
} poot_wg_api;
#undef POOT_WG_DECLARE_FN

#endif
