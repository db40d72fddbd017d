/* poot bench's bandwidth probes (tools/support_bench_bw.c): the device's
 * copy bandwidth and its read-only streaming bandwidth, measured on buffers
 * of a chosen size, with a fallback to the largest size that fits. */
#ifndef POOT_TOOLS_BENCH_BW_H
#define POOT_TOOLS_BENCH_BW_H

#include <stdbool.h>
#include <stdint.h>

#include "poot/exec.h"

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

#endif
