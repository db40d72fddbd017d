/* poot bench's bandwidth probes: a buffer-to-buffer copy (read + write) and
 * a read-only stream (a kernel that reads a whole buffer and writes nothing),
 * both recorded once and replayed. The stream kernel is built here in KIR,
 * not through the compiler's templates, so the limit it measures does not
 * move with the templates it is the yardstick of. */
#include <stdio.h>
#include <string.h>

#include "poot/kir.h"
#include "bench_bw.h"

enum {
  STREAM_UNROLL = 4, /* independent 16-byte loads in flight per thread and iteration */
  STREAM_MAX_GROUPS = 1024,
  STREAM_MAX_GROUPS_CPU = 32768, /* a power of two under every grid limit (65,535) */
  STREAM_GROUP = 256,            /* threads per workgroup (fewer when the target allows fewer) */
};
#define MIB ((uint64_t)1 << 20)
/* Element indices are u32: the stream reads at most 8 GiB. */
#define STREAM_MAX_BYTES ((uint64_t)8 << 30)
#define STREAM_MAGIC 0x9e3779b9u

/* The stream kernel's body: acc ^= src[((j*U + u)*T + gid)*4 .. +4) for j
 * in [0, iters), u in [0, U) (T threads in all), then a store only when the
 * lanes' XOR equals a constant no real data is chosen to hit: the loads
 * cannot be dropped, and the kernel writes almost nothing. */
static poot_status stream_body(poot_kir_builder *b, uint32_t src, uint32_t sink, uint32_t acc,
                               poot_kir_value iters) {
  poot_kir_value gid, ngrp, lsz, threads, zero, one, j, a, v, base, idx, t, x;
  POOT_TRY(poot_kir_global_id(b, 0, &gid));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_NUM_WORKGROUPS, 0, &ngrp));
  POOT_TRY(poot_kir_builtin_get(b, POOT_KIR_BUILTIN_LOCAL_SIZE, 0, &lsz));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, ngrp, lsz, &threads));
  POOT_TRY(poot_kir_const_u32(b, 0, &zero));
  POOT_TRY(poot_kir_const_u32(b, 1, &one));
  POOT_TRY(poot_kir_for_begin(b, zero, iters, one, &j));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a));
  for (uint32_t u = 0; u < STREAM_UNROLL; u++) {
    POOT_TRY(poot_kir_const_u32(b, STREAM_UNROLL, &t));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, j, t, &base));
    POOT_TRY(poot_kir_const_u32(b, u, &t));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, base, t, &base));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, base, threads, &base));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_ADD, base, gid, &idx));
    POOT_TRY(poot_kir_const_u32(b, 4, &t));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_MUL, idx, t, &idx));
    POOT_TRY(poot_kir_load(b, POOT_KIR_SPACE_GLOBAL, src, idx, 4, &v));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_XOR, a, v, &a));
  }
  POOT_TRY(poot_kir_priv_store(b, acc, 0, a));
  POOT_TRY(poot_kir_end(b));
  POOT_TRY(poot_kir_priv_load(b, acc, 0, &a));
  POOT_TRY(poot_kir_extract(b, a, 0, &x));
  for (uint32_t l = 1; l < 4; l++) {
    POOT_TRY(poot_kir_extract(b, a, l, &v));
    POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_XOR, x, v, &x));
  }
  poot_kir_value magic, hit;
  POOT_TRY(poot_kir_const_u32(b, STREAM_MAGIC, &magic));
  POOT_TRY(poot_kir_binary(b, POOT_KIR_OP_EQ, x, magic, &hit));
  POOT_TRY(poot_kir_if_begin(b, hit));
  POOT_TRY(poot_kir_store(b, POOT_KIR_SPACE_GLOBAL, sink, zero, x));
  return poot_kir_end(b);
}

poot_status poot_bench_stream_kernel(uint32_t group, poot_kir_kernel **out) {
  *out = NULL;
  poot_kir_builder *b = NULL;
  poot_kir_kernel_desc desc = {.name = "bench_stream_read", .workgroup_size = {group, 1, 1}};
  POOT_TRY(poot_kir_builder_create(&desc, &b));
  uint32_t src = 0, sink = 0, acc = 0, pit = 0;
  poot_kir_binding bs = {.name = "src",
                         .binding = 0,
                         .elem = POOT_KIR_U32,
                         .access = POOT_KIR_ACCESS_READ,
                         .align = 16,
                         .invariant = true};
  poot_kir_binding bk = {
      .name = "sink", .binding = 1, .elem = POOT_KIR_U32, .access = POOT_KIR_ACCESS_WRITE};
  poot_kir_param it = {.name = "iters", .type = POOT_KIR_U32, .kind = POOT_KIR_PARAM_PUSH};
  poot_kir_value iters;
  poot_status st = poot_kir_add_binding(b, &bs, &src);
  if (!st) st = poot_kir_add_binding(b, &bk, &sink);
  if (!st) st = poot_kir_add_param(b, &it, &pit);
  if (!st) st = poot_kir_add_private(b, "acc", poot_kir_type_make(POOT_KIR_U32, 4), 1, &acc);
  if (!st) st = poot_kir_param_get(b, pit, &iters);
  if (!st) st = stream_body(b, src, sink, acc, iters);
  if (st) {
    poot_kir_builder_destroy(b);
    return st;
  }
  return poot_kir_builder_finish(b, out);
}

void poot_bench_stream_shape(uint64_t bytes, uint32_t max_group, bool cpu, uint32_t *out_group,
                             uint32_t *out_groups, uint32_t *out_iters) {
  uint32_t group = STREAM_GROUP;
  while (max_group && group > max_group && group > 1) group /= 2;
  uint64_t chunk = (uint64_t)group * STREAM_UNROLL * 16; /* bytes of one workgroup-iteration */
  /* A GPU wants enough threads resident to cover memory latency, each with
   * a long loop; a CPU device (lavapipe) streams better with as many
   * workgroups as the grid allows and short loops. */
  uint64_t most = cpu ? STREAM_MAX_GROUPS_CPU : STREAM_MAX_GROUPS;
  uint64_t chunks = bytes / chunk, groups = 1;
  while (groups < most && chunks % (2 * groups) == 0) groups *= 2;
  *out_group = group;
  *out_groups = (uint32_t)groups;
  *out_iters = (uint32_t)(chunks / groups);
}

/* Replays `rec` once to warm up, then `reps` times; bytes per second of
 * `bytes_per_rep` moved by each replay (device time when the device times,
 * else wall time). */
static poot_status time_replays(poot_device *dev, poot_device_recording *rec, int reps,
                                double bytes_per_rep, double *out_bw) {
  *out_bw = 0;
  POOT_TRY(poot_device_replay(rec));
  POOT_TRY(poot_device_synchronize(dev, NULL));
  uint64_t t0 = poot_time_ns(), dev_ns = 0;
  for (int i = 0; i < reps; i++) {
    uint64_t d = 0;
    POOT_TRY(poot_device_replay(rec));
    POOT_TRY(poot_device_synchronize(dev, &d));
    dev_ns += d;
  }
  uint64_t ns = dev_ns ? dev_ns : poot_time_ns() - t0;
  *out_bw = ns ? bytes_per_rep * reps / ((double)ns * 1e-9) : 0;
  return NULL;
}

static poot_status copy_probe(poot_device *dev, poot_device_buffer *a, poot_device_buffer *b,
                              uint64_t bytes, int reps, double *out_bw) {
  poot_device_cmd cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.kind = POOT_DEVICE_CMD_COPY;
  cmd.src = a;
  cmd.dst = b;
  cmd.size = bytes;
  cmd.label = "bench copy";
  poot_device_recording *rec = NULL;
  POOT_TRY(poot_device_record(dev, &cmd, 1, NULL, &rec));
  poot_status st = time_replays(dev, rec, reps, 2.0 * (double)bytes, out_bw);
  poot_device_recording_destroy(rec);
  return st;
}

/* The stream over the first `bytes` of `src` (a multiple of 1 MiB). A
 * kernel the device cannot build or run is reported in `why`, not as an
 * error; a lost device is an error. */
static poot_status stream_probe(poot_device *dev, poot_device_buffer *src, uint64_t bytes, int reps,
                                bench_bw *out) {
  const poot_device_caps *caps = poot_device_caps_get(dev);
  bool cpu = strcmp(caps->kind, "cpu") == 0;
  uint32_t group = 0, groups = 0, iters = 0;
  poot_bench_stream_shape(bytes, caps->target.max_workgroup_size, cpu, &group, &groups, &iters);
  poot_kir_kernel *kir = NULL;
  poot_device_kernel *kern = NULL;
  poot_device_buffer *sink = NULL;
  poot_device_recording *rec = NULL;
  poot_status st = poot_bench_stream_kernel(group, &kir);
  if (!st) st = poot_device_kernel_get(dev, kir, &kern);
  if (!st) st = poot_device_buffer_create(dev, POOT_DEVICE_BUFFER_LOCAL, 16, &sink);
  poot_device_buffer *bufs[2] = {src, sink};
  poot_device_cmd cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.kind = POOT_DEVICE_CMD_DISPATCH;
  cmd.kernel = kern;
  cmd.grid[0] = groups;
  cmd.buffers = bufs;
  cmd.push = &iters;
  cmd.weight_us = 1.0;
  cmd.label = "bench stream";
  if (!st) st = poot_device_record(dev, &cmd, 1, NULL, &rec);
  if (!st) st = time_replays(dev, rec, reps, (double)bytes, &out->stream_bw);
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(sink);
  poot_kir_kernel_destroy(kir);
  out->stream_bytes = st ? 0 : bytes;
  poot_status_code c = poot_status_code_of(st);
  if (st && c != POOT_DEVICE_LOST && c != POOT_TIMEOUT && c != POOT_POISONED) {
    snprintf(out->stream_error, sizeof out->stream_error, "%s", poot_status_message(st));
    out->stream_bw = 0;
    poot_status_free(st);
    return NULL;
  }
  return st;
}

/* A refusal that a smaller size may avoid (not a lost device). */
static bool refusal(poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  return c == POOT_OUT_OF_MEMORY || c == POOT_CAPACITY || c == POOT_UNSUPPORTED ||
         c == POOT_INVALID_ARGUMENT;
}

/* Two buffers of the largest size ≤ bytes (halving, down to 1 MiB) that the
 * device gives, that its local memory holds and that limit_bytes allows. */
static poot_status make_pair(poot_device *dev, uint64_t limit_bytes, bench_bw *out,
                             poot_device_buffer **a, poot_device_buffer **b) {
  uint64_t local = poot_device_caps_get(dev)->local_bytes;
  for (uint64_t sz = out->asked_bytes; sz >= MIB; sz = sz / 2 / MIB * MIB) {
    poot_status st = NULL;
    if (limit_bytes && sz > limit_bytes)
      st = poot_status_make(POOT_OUT_OF_MEMORY, "the probe's limit is %llu MiB per buffer",
                            (unsigned long long)(limit_bytes / MIB));
    else if (local && sz > local / 2)
      st = poot_status_make(POOT_OUT_OF_MEMORY, "the device has %llu MiB of local memory",
                            (unsigned long long)(local / MIB));
    if (!st) st = poot_device_buffer_create(dev, POOT_DEVICE_BUFFER_LOCAL, sz, a);
    if (!st) st = poot_device_buffer_create(dev, POOT_DEVICE_BUFFER_LOCAL, sz, b);
    if (!st) {
      out->bytes = sz;
      out->fell_back = sz < out->asked_bytes;
      return NULL;
    }
    poot_device_buffer_destroy(*a);
    *a = NULL;
    if (!refusal(st)) return st;
    if (!out->why[0])
      snprintf(out->why, sizeof out->why, "two buffers of %llu MiB do not fit: %s",
               (unsigned long long)(sz / MIB), poot_status_message(st));
    poot_status_free(st);
  }
  return poot_status_make(POOT_OUT_OF_MEMORY, "not even two buffers of 1 MiB fit (%s)", out->why);
}

poot_status poot_bench_bandwidth(poot_device *dev, uint64_t bytes, uint64_t limit_bytes, int reps,
                                 bench_bw *out) {
  memset(out, 0, sizeof *out);
  out->asked_bytes = bytes < MIB ? MIB : bytes / MIB * MIB;
  poot_device_buffer *a = NULL, *b = NULL;
  poot_status st = make_pair(dev, limit_bytes, out, &a, &b);
  if (!st) st = copy_probe(dev, a, b, out->bytes, reps, &out->copy_bw);
  poot_device_buffer_destroy(b);
  uint64_t sbytes = out->bytes < STREAM_MAX_BYTES ? out->bytes : STREAM_MAX_BYTES;
  if (!st) st = stream_probe(dev, a, sbytes, reps, out);
  poot_device_buffer_destroy(a);
  return poot_status_annotate(st, "the bandwidth probes (--copy-mib %llu)",
                              (unsigned long long)(bytes / MIB));
}
