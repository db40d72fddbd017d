/* topk_bench [DEVICE] [STEPS]: device time of top_k over rows of the
 * sampling suffix's shapes (a Llama-3 vocabulary of 128,256 f32 logits,
 * k = 1,024, 40, 20 and 1; 32,000 for Llama-2), replayed through the
 * engine, then one eager step with each dispatch's own device time (the
 * pipeline's stages). Built, not run by ctest; its figures are recorded in
 * docs/topk.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot/exec.h"

#define CHECK(expr)                                                \
  do {                                                             \
    poot_status s_ = (expr);                                       \
    if (s_) {                                                      \
      fprintf(stderr, "%s: %s\n", #expr, poot_status_message(s_)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

static void on_dispatch(void *ctx, const poot_exec_dispatch_info *d) {
  (void)ctx;
  printf("    dispatch %u %-28s %8.2f us\n", d->index, d->label ? d->label : "?",
         (double)d->device_ns / 1e3);
}

/* One shape: the replayed steps' device time per step, then the stages. */
static int bench(poot_device *d, int64_t rows, int64_t n, int64_t k, int steps) {
  poot_graph *g = NULL;
  CHECK(poot_graph_create(&g));
  poot_type xt = poot_type_make(POOT_DTYPE_F32, 2, (int64_t[]){rows, n});
  poot_value x = POOT_VALUE_NONE, v = POOT_VALUE_NONE, ix = POOT_VALUE_NONE;
  CHECK(poot_graph_add_param(g, "x", &xt, &x));
  CHECK(poot_graph_top_k(g, x, k, &v, &ix));
  CHECK(poot_graph_set_output(g, ix));
  CHECK(poot_graph_verify(g));
  pt_inputs in;
  CHECK(pt_inputs_make(g, 1, 10, 0, 1.0f, &in));
  poot_executor *ex = NULL;
  CHECK(poot_engine_create(d, &ex));
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lld k%lld", (long long)rows, (long long)n, (long long)k);
  poot_exec_entry_key key = {"topk_bench", shape, "", ""};
  uint32_t entry = 0;
  CHECK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  poot_exec_slot_value sv;
  CHECK(poot_exec_entry_slot(ex, entry, "x", &sv.slot));
  sv.tensor = &in.tensors[0];
  size_t osz = (size_t)(rows * k) * 4;
  void *out = malloc(osz);
  if (!out) return 1;
  poot_exec_step_io io = {.input_count = 1, .inputs = &sv, .output = out, .output_size = osz};
  for (int i = 0; i < 3; i++) CHECK(poot_exec_step(ex, entry, &io));
  poot_exec_stats before, after;
  poot_exec_stats_get(ex, &before);
  uint64_t t = poot_time_ns();
  for (int i = 0; i < steps; i++) CHECK(poot_exec_step(ex, entry, &io));
  double host_us = (double)(poot_time_ns() - t) / 1e3 / steps;
  poot_exec_stats_get(ex, &after);
  double dev_us = after.device_timed
                      ? (double)(after.device_ns_total - before.device_ns_total) / 1e3 / steps
                      : 0;
  printf("%-16s %llu dispatches: %.2f us device, %.1f us host (wall) per step\n", shape,
         (unsigned long long)after.dispatches_per_step, dev_us, host_us);
  io.eager = true;
  io.on_dispatch = on_dispatch;
  CHECK(poot_exec_step(ex, entry, &io));
  free(out);
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
  return 0;
}

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "auto";
  int steps = argc > 2 ? atoi(argv[2]) : 100;
  poot_device *d = NULL;
  CHECK(poot_device_open(spec, NULL, &d));
  printf("device %s (%s)\n", d->caps.name, d->caps.kind);
  const int64_t shapes[][3] = {{1, 128256, 1024}, {1, 128256, 40},   {1, 128256, 20},
                               {1, 128256, 1},    {4, 128256, 1024}, {1, 32000, 40}};
  int rc = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes && !rc; i++)
    rc = bench(d, shapes[i][0], shapes[i][1], shapes[i][2], steps);
  poot_device_destroy(d);
  return rc;
}
