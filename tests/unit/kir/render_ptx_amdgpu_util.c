/* Helpers for the PTX and AMDGPU renderer tests; see the header. */
#include "render_ptx_amdgpu_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"
#include "render_ptx_ops.h"

static poot_status render_one(const poot_kir_target *target, render_fn render,
                              render_visit_fn visit, void *ctx, const char *name,
                              const poot_kir_kernel *k) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = render(k, target, &sb);
  if (st) {
    st = poot_status_annotate(st, "rendering '%s' for %s", name, target->name);
  } else {
    st = visit(ctx, name, k, sb.data, sb.len);
  }
  poot_strbuf_deinit(&sb);
  return st;
}

poot_status render_walk(const poot_kir_target *target, render_fn render, render_visit_fn visit,
                        void *ctx, render_walk_stats *out_stats) {
  render_walk_stats stats = {0, 0};
  size_t n = 0;
  const poot_kir_corpus_case *cases = poot_kir_corpus(&n);
  poot_status st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    poot_kir_kernel *k = NULL;
    st = cases[i].build(&cases[i], target, &k);
    if (poot_status_code_of(st) == POOT_UNSUPPORTED) {
      poot_status_free(st);
      st = NULL;
      stats.skipped++;
      continue;
    }
    if (st) {
      st =
          poot_status_annotate(st, "building corpus case '%s' for %s", cases[i].name, target->name);
      break;
    }
    st = render_one(target, render, visit, ctx, cases[i].name, k);
    if (!st) stats.rendered++;
    poot_kir_kernel_destroy(k);
  }
  for (uint32_t i = 0; i < RENDER_OPS_KERNEL_COUNT && !st; i++) {
    poot_kir_kernel *k = NULL;
    st = render_ops_kernel(i, target->subgroup_size, &k);
    if (st) break;
    st = render_one(target, render, visit, ctx, k->name, k);
    if (!st) stats.rendered++;
    poot_kir_kernel_destroy(k);
  }
  if (out_stats) *out_stats = stats;
  return st;
}

poot_status render_build_named(const char *name, const poot_kir_target *target,
                               poot_kir_kernel **out_kernel) {
  *out_kernel = NULL;
  const poot_kir_corpus_case *c = poot_kir_corpus_find(name);
  if (c) return c->build(c, target, out_kernel);
  for (uint32_t i = 0; i < RENDER_OPS_KERNEL_COUNT; i++) {
    poot_kir_kernel *k = NULL;
    POOT_TRY(render_ops_kernel(i, target->subgroup_size, &k));
    if (strcmp(k->name, name) == 0) {
      *out_kernel = k;
      return NULL;
    }
    poot_kir_kernel_destroy(k);
  }
  return poot_status_make(POOT_NOT_FOUND, "no test kernel named '%s'", name);
}

static bool executable(const char *path) {
  return access(path, X_OK) == 0;
}

bool render_find_tool(const char *tool, char *out, size_t out_size) {
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    int k = snprintf(out, out_size, "%.*s/%s", (int)n, path, tool);
    if (n > 0 && k > 0 && (size_t)k < out_size && executable(out)) return true;
    path = end ? end + 1 : NULL;
  }
  static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
  for (size_t i = 0; i < 2; i++) {
    const char *h = getenv(homes[i]);
    if (!h) continue;
    int k = snprintf(out, out_size, "%s/bin/%s", h, tool);
    if (k > 0 && (size_t)k < out_size && executable(out)) return true;
  }
  if (out_size) out[0] = 0;
  return false;
}

bool render_write_file(const char *dir, const char *name, const char *text, size_t len) {
  char path[1024];
  int k = snprintf(path, sizeof path, "%s/%s", dir, name);
  if (k < 0 || (size_t)k >= sizeof path) return false;
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(text, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}
