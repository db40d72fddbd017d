/* poot bench's bandwidth probes (tools/support_bench_bw.c): the device's
 * copy bandwidth and its read-only streaming bandwidth, measured on buffers
 * of a chosen size, with a fallback to the largest size that fits. */
#ifndef POOT_TOOLS_BENCH_BW_H
#define POOT_TOOLS_BENCH_BW_H

#include <stdbool.h>
#include <stdint.h>

#include "poot/exec.h"
#include "poot/kir.h"

typedef struct bench_bw {
  uint64_t asked_bytes;   /* the buffer size asked for (--copy-mib) */
  uint64_t bytes;         /* the buffer size measured with */
  bool fell_back;         /* bytes < asked_bytes: the device refused the asked size */
  char why[256];          /* the refusal, when fell_back */
  double copy_bw;         /* bytes read plus written per second (0: not measured) */
  uint64_t stream_bytes;  /* the buffer size the stream probe read */
  double stream_bw;       /* bytes read per second (0: not measured) */
  char stream_error[256]; /* why the stream probe did not run, when stream_bw is 0 */
} bench_bw;

/* Measures the copy bandwidth (one recorded LOCAL→LOCAL copy of `bytes`,
 * replayed `reps` times after a warm-up; read plus written bytes per second)
 * and the read-only streaming bandwidth (a kernel that reads the whole source
 * buffer and writes nothing, replayed alike; read bytes per second). When
 * two buffers of `bytes` exceed the device's local memory, the device
 * refuses them, or they exceed limit_bytes (when non-zero: a test's stand-in
 * for a small device), the size is halved until they fit, down to 1 MiB,
 * and out->fell_back and out->why say so. A stream
 * kernel the device cannot run leaves stream_bw 0 with stream_error set.
 * Errors: OUT_OF_MEMORY when not even 1 MiB fits; the device's errors
 * (DEVICE_LOST, TIMEOUT, POISONED). */
POOT_MUST_USE poot_status poot_bench_bandwidth(poot_device *dev, uint64_t bytes,
                                               uint64_t limit_bytes, int reps, bench_bw *out);

/* The stream kernel (exposed for its test): `group` threads a workgroup
 * (a power of two ≥ 1); binding 0 the source (u32, read with 16-byte loads),
 * binding 1 a sink (u32; word 0 written only by a thread whose reads XOR to
 * 0x9e3779b9), push param 0 the iteration count. Thread t of T reads
 * source vectors (j*4 + u)*T + t for j < iters, u < 4. Errors of the
 * builder (OUT_OF_MEMORY). */
POOT_MUST_USE poot_status poot_bench_stream_kernel(uint32_t group, poot_kir_kernel **out_kernel);

/* The stream's launch for `bytes` (a multiple of group*64): threads per
 * workgroup (256, or the largest power of two ≤ max_group when that is
 * smaller and non-zero), workgroups (a power of two dividing the work, at
 * most 1,024, or 32,768 on a CPU device) and iterations, so that
 * group*groups*iters*64 == bytes. */
void poot_bench_stream_shape(uint64_t bytes, uint32_t max_group, bool cpu, uint32_t *out_group,
                             uint32_t *out_groups, uint32_t *out_iters);

#endif
