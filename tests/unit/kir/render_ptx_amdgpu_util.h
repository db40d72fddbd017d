/* render_ptx_amdgpu_util.h — helpers shared by the PTX and AMDGPU renderer
 * tests: walking every kernel (the shared corpus plus render_ptx_ops.h) for a
 * target, finding a target tool on PATH, and writing text to a file. */
#ifndef POOT_TESTS_KIR_RENDER_PTX_AMDGPU_UTIL_H
#define POOT_TESTS_KIR_RENDER_PTX_AMDGPU_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "poot/kir.h"

typedef poot_status (*render_fn)(const poot_kir_kernel *, const poot_kir_target *, poot_strbuf *);

/* Called for every kernel that builds for the target: name, kernel, and its
 * rendering (NUL-terminated). A failed status stops the walk. */
typedef poot_status (*render_visit_fn)(void *ctx, const char *name, const poot_kir_kernel *kernel,
                                       const char *text, size_t len);

typedef struct render_walk_stats {
  size_t rendered; /* kernels rendered */
  size_t skipped;  /* corpus cases the target does not support (UNSUPPORTED at build) */
} render_walk_stats;

/* Builds every corpus case and every ops kernel for `target`, renders each
 * with `render` and calls `visit`. Rendering must succeed for every kernel
 * that builds. */
POOT_MUST_USE poot_status render_walk(const poot_kir_target *target, render_fn render,
                                      render_visit_fn visit, void *ctx,
                                      render_walk_stats *out_stats);

/* Builds one kernel by corpus case name or ops kernel name ("ops_math"). */
POOT_MUST_USE poot_status render_build_named(const char *name, const poot_kir_target *target,
                                             poot_kir_kernel **out_kernel);

/* The full path of `tool` found on PATH (also $CUDA_HOME/bin and
 * $CUDA_PATH/bin), copied into out; false when absent. */
bool render_find_tool(const char *tool, char *out, size_t out_size);

/* Writes `len` bytes to dir/name; false on failure. */
bool render_write_file(const char *dir, const char *name, const char *text, size_t len);

#endif
