/* exec_bench [DEVICE] [STEPS]: per-step host and device time of a small
 * llama decode step through the engine, replayed versus submitted eagerly
 * (the same dispatches one by one), measured in one run. Built, not run by
 * ctest; its figures are recorded in docs/exec.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot/exec.h"
#include "poot/llm/model.h"

#define CHECK(expr)                                                \
  do {                                                             \
    poot_status s_ = (expr);                                       \
    if (s_) {                                                      \
      fprintf(stderr, "%s: %s\n", #expr, poot_status_message(s_)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "auto";
  int steps = argc > 2 ? atoi(argv[2]) : 50;
  poot_model_config c;
  poot_model_config_init(&c, POOT_MODEL_FAMILY_LLAMA);
  c.vocab_size = 512;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.n_layers = 4;
  c.n_heads = 8;
  c.n_kv_heads = 4;
  c.head_dim = 32;
  c.norm_eps = 1e-5;
  c.rope_dims = 32;
  c.rope_theta = 10000;
  c.rope_mode = POOT_ROPE_NEOX;
  poot_model_step st;
  memset(&st, 0, sizeof st);
  st.batch = 1;
  st.tokens = 1;
  st.cap = 128;
  poot_graph *g = NULL;
  CHECK(poot_model_trace(&c, &st, NULL, &g));
  poot_device *d = NULL;
  CHECK(poot_device_open(spec, NULL, &d));
  poot_executor *ex = NULL;
  CHECK(poot_engine_create(d, &ex));
  pt_inputs in;
  CHECK(pt_inputs_make(g, 1, 500, 0, 0.1f, &in));
  poot_exec_weight w[256];
  const char *sname[16];
  const poot_tensor *stensor[16];
  size_t nw = 0, ns = 0;
  for (size_t i = 0; i < in.count; i++) {
    if (!strcmp(in.names[i], "token") || !strcmp(in.names[i], "pos")) {
      sname[ns] = in.names[i];
      stensor[ns++] = &in.tensors[i];
    } else if (!strstr(in.names[i], ".k") && !strstr(in.names[i], ".v") && nw < 256)
      w[nw++] = (poot_exec_weight){.key = poot_weight_key_of_name(in.names[i], strlen(in.names[i])),
                                   .name = in.names[i],
                                   .tensor = &in.tensors[i]};
  }
  CHECK(poot_exec_load_weights(ex, nw, w));
  poot_exec_entry_key key = {"bench", "decode", "", ""};
  uint32_t entry;
  uint64_t t0 = poot_time_ns();
  CHECK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  double compile_ms = (double)(poot_time_ns() - t0) / 1e6;
  poot_exec_slot_value s[16];
  for (size_t i = 0; i < ns; i++) {
    CHECK(poot_exec_entry_slot(ex, entry, sname[i], &s[i].slot));
    s[i].tensor = stensor[i];
  }
  float *out = malloc((size_t)c.vocab_size * 4);
  printf("device %s (%s); compile+capture %.1f ms\n", d->caps.name, d->caps.kind, compile_ms);
  double host_us[2] = {0, 0};
  for (int mode = 0; mode < 2; mode++) {
    CHECK(poot_exec_reset_state(ex));
    for (int i = 0; i < 3; i++) { /* warm-up: first-use costs in the driver */
      poot_exec_step_io io = {.input_count = ns,
                              .inputs = s,
                              .output = out,
                              .output_size = (size_t)c.vocab_size * 4,
                              .eager = mode == 1};
      CHECK(poot_exec_step(ex, entry, &io));
    }
    poot_exec_stats before;
    poot_exec_stats_get(ex, &before);
    uint64_t t = poot_time_ns();
    for (int i = 0; i < steps; i++) {
      pt_inputs_set_int(&in, "pos", i % st.cap);
      pt_inputs_set_int(&in, "token", (7 * i) % c.vocab_size);
      poot_exec_step_io io = {.input_count = ns,
                              .inputs = s,
                              .output = out,
                              .output_size = (size_t)c.vocab_size * 4,
                              .eager = mode == 1};
      CHECK(poot_exec_step(ex, entry, &io));
    }
    host_us[mode] = (double)(poot_time_ns() - t) / 1e3 / steps;
    poot_exec_stats after;
    poot_exec_stats_get(ex, &after);
    double dev_us = after.device_timed && mode == 0
                        ? (double)(after.device_ns_total - before.device_ns_total) / 1e3 / steps
                        : 0;
    printf(
        "%-6s %d steps: %.1f us per step (host, wall), %llu dispatches/step, %llu "
        "submissions/step%s",
        mode ? "eager" : "replay", steps, host_us[mode],
        (unsigned long long)after.dispatches_per_step, (unsigned long long)after.stages_per_step,
        dev_us > 0 ? "" : "\n");
    if (dev_us > 0) printf(", %.1f us device\n", dev_us);
  }
  printf("eager / replay per-step time: %.2f\n", host_us[1] / host_us[0]);
  free(out);
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  poot_device_destroy(d);
  poot_graph_destroy(g);
  return 0;
}
