/* plan_bench.c — the compiler benchmark (not a test): a Llama-3.2-1B-shaped
 * decode step at batch 1 (traced by the families layer), planned for every
 * target: dispatches per step and per layer, bytes read per step against
 * the weights' size, plan and render time. Usage: plan_bench [WEIGHT_DTYPE]
 * [CAP] (default q8_0, 4096). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/compile.h"
#include "poot/devices.h"
#include "poot/llm/model.h"

static poot_dtype g_wt = POOT_DTYPE_Q8_0;

static poot_status wtype(void *ctx, const poot_weight_ref *ref, const poot_type *expected,
                         poot_type *out) {
  (void)ctx;
  (void)ref;
  *out = *expected;
  if (expected->shape.rank == 2 && expected->shape.dims[1] % 32 == 0) out->dtype = g_wt;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1 && !poot_dtype_from_name(argv[1], strlen(argv[1]), &g_wt)) return 2;
  int64_t cap = argc > 2 ? atoll(argv[2]) : 4096;
  poot_model_config c;
  poot_model_config_init(&c, POOT_MODEL_FAMILY_LLAMA);
  c.vocab_size = 128256;
  c.hidden_size = 2048;
  c.intermediate_size = 8192;
  c.n_layers = 16;
  c.n_heads = 32;
  c.n_kv_heads = 8;
  c.head_dim = 64;
  c.norm_eps = 1e-5;
  c.rope_dims = 64;
  c.rope_theta = 500000;
  c.rope_mode = POOT_ROPE_NEOX;
  c.tied_output = true;
  poot_model_step s;
  memset(&s, 0, sizeof s);
  s.batch = 1;
  s.tokens = 1;
  s.cap = cap;
  poot_model_trace_options o = {.weight_type = wtype, .weight_type_ctx = NULL};
  poot_graph *g = NULL;
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_model_trace(&c, &s, &o, &g);
  if (st) {
    fprintf(stderr, "trace: %s\n", poot_status_message(st));
    return 1;
  }
  printf("Llama-3.2-1B-shaped decode, batch 1, cap %lld, weights %s (trace %.1f ms)\n",
         (long long)cap, poot_dtype_name(g_wt), (double)(poot_time_ns() - t0) / 1e6);
  const char *names[] = {"sm_80", "vulkan-sg32", "webgpu", "gfx942"};
  for (int i = 0; i < 4; i++) {
    poot_kir_target t;
    if (poot_device_target_by_name(names[i], &t)) return 1;
    poot_compile_options co;
    poot_compile_options_init(&co);
    co.target = &t;
    poot_plan *p = NULL;
    uint64_t a = poot_time_ns();
    st = poot_plan_create(g, &co, &p);
    uint64_t b = poot_time_ns();
    if (st) {
      fprintf(stderr, "%s: %s\n", names[i], poot_status_message(st));
      return 1;
    }
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    for (uint32_t k = 0; k < p->kernel_count && !st; k++) {
      poot_strbuf_clear(&sb);
      st = poot_plan_render_kernel(p, k, &t, &sb);
    }
    uint64_t e = poot_time_ns();
    poot_strbuf_deinit(&sb);
    if (st) {
      fprintf(stderr, "%s render: %s\n", names[i], poot_status_message(st));
      return 1;
    }
    printf(
        "%-12s dispatches %4u (%.2f per layer incl. head share)  kernels %3u  bytes/step %llu  "
        "weights %llu  ratio %.4f  plan %.0f ms  render %.0f ms\n",
        names[i], p->dispatch_count, (double)p->dispatch_count / (double)c.n_layers,
        p->kernel_count, (unsigned long long)p->bytes_per_step, (unsigned long long)p->weight_bytes,
        (double)p->bytes_per_step / (double)p->weight_bytes, (double)(b - a) / 1e6,
        (double)(e - b) / 1e6);
    if (argc > 3 && i == 0) {
      poot_strbuf pb;
      poot_strbuf_init(&pb);
      poot_plan_print(p, &pb);
      fputs(pb.data, stdout);
      poot_strbuf_deinit(&pb);
    }
    poot_plan_destroy(p);
  }
  poot_graph_destroy(g);
  return 0;
}
