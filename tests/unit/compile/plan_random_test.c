/* plan_random_test.c — the planner on random well-typed graphs (the passes'
 * generator: every op family, composites, special float values, checks):
 * planned with serial contractions and the attention decomposition, so the
 * plan on the KIR interpreter must match poot_eval bit for bit (NaN payloads
 * aside), or fail with the same typed fault. Graphs using an op the planner
 * refuses (UNSUPPORTED) are counted, not failed. Usage: [count] [first seed]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes_gen.h"
#include "poot/compile.h"
#include "poot_test.h"

static bool is_nan_elem(poot_dtype dt, const uint8_t *p) {
  if (dt == POOT_DTYPE_F32) {
    float f;
    memcpy(&f, p, 4);
    return isnan(f);
  }
  if (dt == POOT_DTYPE_F16 || dt == POOT_DTYPE_BF16) {
    uint16_t h;
    memcpy(&h, p, 2);
    return dt == POOT_DTYPE_F16 ? ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
                                : ((h & 0x7f80) == 0x7f80 && (h & 0x7f));
  }
  return false;
}

static bool same(const poot_tensor *a, const poot_tensor *b, char *why, size_t n) {
  if (!poot_type_equal(&a->type, &b->type) || a->size != b->size) {
    snprintf(why, n, "type differs");
    return false;
  }
  size_t eb = poot_dtype_info_of(a->type.dtype)->elem_bytes;
  if (!eb) return memcmp(a->data, b->data, a->size) == 0;
  for (size_t o = 0; o + eb <= a->size; o += eb) {
    const uint8_t *x = (const uint8_t *)a->data + o, *y = (const uint8_t *)b->data + o;
    if (memcmp(x, y, eb) == 0) continue;
    if (is_nan_elem(a->type.dtype, x) && is_nan_elem(a->type.dtype, y)) continue;
    snprintf(why, n, "element %zu differs", o / eb);
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 150;
  uint64_t seed0 = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
  int failures = 0, unsupported = 0, faults = 0, ran = 0, other_trap = 0;
  poot_kir_target t;
  poot_kir_target_init_interp(&t, 32);
  for (int i = 0; i < count; i++) {
    uint64_t seed = seed0 + (uint64_t)i;
    poot_graph *g = NULL;
    uint32_t skipped = 0;
    if (pg_random_graph(seed, &g, &skipped)) continue;
    pg_inputs in;
    if (pg_make_inputs(g, seed * 7 + 1, &in)) {
      poot_graph_destroy(g);
      continue;
    }
    poot_eval_inputs eis = {.count = in.count, .items = in.items};
    poot_evaluation *ev = NULL;
    poot_eval_fault ef;
    poot_eval_options eo;
    poot_eval_options_init(&eo);
    eo.out_fault = &ef;
    poot_status est = poot_eval(g, &eis, &eo, &ev);
    poot_compile_options o;
    poot_compile_options_init(&o);
    o.target = &t;
    o.coop_min = UINT32_MAX;
    o.no_attention_template = true;
    poot_plan *plan = NULL;
    poot_status pst = poot_plan_create(g, &o, &plan);
    char why[300] = "";
    bool ok = true;
    if (pst) {
      if (poot_status_code_of(pst) == POOT_UNSUPPORTED) {
        unsupported++;
      } else {
        ok = false;
        snprintf(why, sizeof why, "plan: %s", poot_status_message(pst));
      }
      poot_status_free(pst);
    } else {
      poot_plan_run *run = NULL;
      poot_plan_input *pi = poot_calloc(in.count + 1, sizeof *pi);
      for (size_t j = 0; j < in.count; j++) {
        pi[j].name = in.items[j].name;
        pi[j].tensor = in.items[j].tensor;
      }
      poot_status rst = poot_plan_run_create(plan, &run);
      if (!rst) rst = poot_plan_run_bind(run, in.count, pi);
      if (!rst) rst = poot_plan_run_step(run, NULL);
      ran++;
      if (est) {
        /* the oracle faulted: the plan must fault too (with the same trap
         * unless several checks fail: the first reported may differ, the
         * plan's order is not the oracle's) */
        faults++;
        char code[48];
        snprintf(code, sizeof code, "(%s)", poot_trap_name(ef.trap));
        if (poot_status_code_of(rst) == POOT_KERNEL_FAULT &&
            !strstr(poot_status_message(rst), code))
          other_trap++;
        if (poot_status_code_of(est) == POOT_KERNEL_FAULT &&
            poot_status_code_of(rst) != POOT_KERNEL_FAULT) {
          ok = false;
          snprintf(why, sizeof why, "oracle fault %s, plan: %s", poot_status_message(est),
                   rst ? poot_status_message(rst) : "no fault");
        }
      } else if (rst) {
        ok = false;
        snprintf(why, sizeof why, "run: %s", poot_status_message(rst));
      } else {
        poot_tensor tt;
        if (ev->has_output && !poot_plan_run_output(run, &tt) &&
            !same(&tt, &ev->output, why, sizeof why))
          ok = false;
        for (uint32_t s = 0; ok && s < ev->num_states; s++)
          if (!poot_plan_run_state(run, ev->states[s].name, &tt) &&
              !same(&tt, &ev->states[s].tensor, why, sizeof why)) {
            ok = false;
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, " in state %s", ev->states[s].name);
          }
        for (uint32_t s = 0; ok && s < ev->num_env; s++)
          if (!poot_plan_run_state(run, ev->env[s].name, &tt) &&
              !same(&tt, &ev->env[s].tensor, why, sizeof why)) {
            ok = false;
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, " in env %s", ev->env[s].name);
          }
      }
      poot_status_free(rst);
      poot_free(pi);
      poot_plan_run_destroy(run);
      poot_plan_destroy(plan);
    }
    if (!ok) {
      failures++;
      printf("FAIL seed %llu: %s\n", (unsigned long long)seed, why);
      if (getenv("POOT_DUMP_FAILING")) {
        char *text = NULL;
        if (!poot_graph_to_text(g, &text)) fputs(text, stdout);
        poot_free(text);
      }
    }
    poot_status_free(est);
    poot_evaluation_destroy(ev);
    pg_inputs_free(&in);
    poot_graph_destroy(g);
  }
  printf(
      "%d graphs run on the interpreter (%d with an oracle fault, %d of them first reported "
      "at another check), %d refused as UNSUPPORTED, %d failures\n",
      ran, faults, other_trap, unsupported, failures);
  return failures ? 1 : 0;
}
