/* The graph passes on the real workload: every model family's decode, paged
 * decode and prefill graphs (small configs), run through the default
 * pipeline and evaluated against the traced graph, bit for bit, on random
 * finite weights, KV states and in-range slots. Prints how much each graph
 * shrinks. */
#include <stdlib.h>

#include "poot/compile_passes.h"
#include "poot/eval.h"
#include "poot/llm/model.h"
#include "poot_test.h"
#include "passes_gen.h"

static void small_config(poot_model_family f, poot_model_config *c) {
  poot_model_config_init(c, f);
  c->vocab_size = 40;
  c->hidden_size = 24;
  c->intermediate_size = 20;
  c->n_layers = 2;
  c->n_heads = 4;
  c->n_kv_heads = 2;
  c->head_dim = 8;
  c->rope_dims = 8;
  switch (f) {
    case POOT_MODEL_FAMILY_LLAMA:
      c->rope_scaling = POOT_MODEL_ROPE_SCALING_LLAMA3;
      c->rope_factor = 8;
      c->rope_low_freq_factor = 1;
      c->rope_high_freq_factor = 4;
      c->rope_original_context = 64;
      break;
    case POOT_MODEL_FAMILY_MISTRAL:
      c->sliding_window = 3;
      break;
    case POOT_MODEL_FAMILY_GEMMA2:
      c->attn_softcap = 50;
      c->final_softcap = 30;
      c->sliding_window = 3;
      c->any_layer_sliding_marked = true;
      c->layer_sliding[0] = 1;
      break;
    case POOT_MODEL_FAMILY_GEMMA3:
      c->sliding_window = 3;
      c->any_layer_sliding_marked = true;
      c->layer_sliding[0] = 1;
      c->rope_theta = 1e6;
      break;
    case POOT_MODEL_FAMILY_PHI3:
      c->rope_dims = 6;
      c->rope_scaling = POOT_MODEL_ROPE_SCALING_LONGROPE;
      c->rope_original_context = 6;
      c->rope_factor = 32;
      for (int i = 0; i < 3; i++) {
        c->rope_short_factors[i] = 1.0f + 0.5f * (float)i;
        c->rope_long_factors[i] = 4.0f + (float)i;
      }
      break;
    default:
      break;
  }
}

typedef struct bindings {
  size_t n;
  poot_eval_input items[256];
  poot_tensor tensors[256];
  char names[256][64];
} bindings;

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Finite floats in [-0.5, 0.5) (norm weights near 1), slots in range. */
static void make_bindings(const poot_graph *g, const poot_model_config *c, const poot_model_step *s,
                          uint64_t seed, bindings *b) {
  memset(b, 0, sizeof *b);
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (n->op != POOT_OP_LEAF || n->storage == POOT_STORAGE_CONST) continue;
    assert_true(b->n < 256);
    const poot_type *t = poot_graph_value_type(g, n->results[0]);
    size_t bytes = 0;
    POOT_ASSERT_OK(poot_type_byte_size(t->dtype, &t->shape, &bytes));
    const size_t eb = poot_dtype_info_of(t->dtype)->elem_bytes;
    uint8_t *data = calloc(bytes ? bytes : 1, 1);
    assert_non_null(data);
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    const bool norm = strstr(sb.data, "norm") != NULL;
    int64_t hi = 4;
    if (n->storage == POOT_STORAGE_SLOT && n->slot_kind == POOT_SLOT_TOKEN) hi = c->vocab_size;
    if (n->storage == POOT_STORAGE_SLOT && n->slot_kind == POOT_SLOT_POS) hi = s->cap - s->tokens;
    for (size_t e = 0; e * eb < bytes; e++) {
      uint64_t r = next(&seed);
      if (poot_dtype_is_float(t->dtype)) {
        float f = (float)(r >> 40) / (float)(1u << 24) - 0.5f;
        if (norm) f += 1.0f;
        if (t->dtype == POOT_DTYPE_F32)
          memcpy(data + 4 * e, &f, 4);
        else {
          uint16_t h = t->dtype == POOT_DTYPE_F16 ? poot_f32_to_f16(f) : poot_f32_to_bf16(f);
          memcpy(data + 2 * e, &h, 2);
        }
      } else {
        uint64_t v = r % (uint64_t)(hi > 0 ? hi : 1);
        memcpy(data + eb * e, &v, eb);
      }
    }
    snprintf(b->names[b->n], 64, "%s", sb.data);
    b->tensors[b->n] = (poot_tensor){*t, data, bytes};
    b->items[b->n] = (poot_eval_input){b->names[b->n], &b->tensors[b->n]};
    b->n++;
  }
  poot_strbuf_deinit(&sb);
}

static void free_bindings(bindings *b) {
  for (size_t i = 0; i < b->n; i++) free(b->tensors[i].data);
}

static void test_families(void **state) {
  (void)state;
  uint64_t total_in = 0, total_out = 0;
  for (int f = POOT_MODEL_FAMILY_LLAMA; f < POOT_MODEL_FAMILY_COUNT; f++) {
    poot_model_config c;
    small_config((poot_model_family)f, &c);
    if (poot_model_is_encoder(&c)) continue; /* no decoder steps: tests/unit/llm/encoders_test.c */
    const poot_model_step steps[3] = {
        {.batch = 2, .tokens = 1, .cap = 8},
        {.batch = 2, .tokens = 1, .cap = 8, .paged = true, .block_size = 4, .num_blocks = 6},
        {.batch = 1, .tokens = 3, .cap = 8},
    };
    for (int k = 0; k < 3; k++) {
      poot_graph *g = NULL, *out = NULL;
      POOT_ASSERT_OK(poot_model_trace(&c, &steps[k], NULL, &g));
      poot_pass_report rep;
      POOT_ASSERT_OK(poot_pass_run_default(g, NULL, &out, &rep));
      POOT_ASSERT_OK(poot_graph_verify(out));
      char *m = pg_check_text(out);
      if (m) fail_msg("%s", m);
      uint32_t ok_evals = 0;
      for (uint64_t seed = 1; seed <= 2; seed++) {
        bindings b;
        make_bindings(g, &c, &steps[k], seed * 1000 + (uint64_t)(f * 10 + k), &b);
        pg_inputs in = {b.n, b.items, NULL, NULL};
        poot_status_code code = POOT_OK;
        m = pg_compare(g, out, &in, &code);
        free_bindings(&b);
        if (m) fail_msg("%s step %d: %s", poot_model_family_name((poot_model_family)f), k, m);
        ok_evals += code == POOT_OK;
      }
      assert_int_equal(ok_evals, 2); /* the bindings are valid: a real comparison */
      printf(
          "%-8s %-7s nodes %4u -> %4u  (rounds %u: canonicalized %u, folded %u, merged %u, "
          "removed %u)\n",
          poot_model_family_name((poot_model_family)f),
          k == 0   ? "decode"
          : k == 1 ? "paged"
                   : "prefill",
          poot_graph_node_count(g), poot_graph_node_count(out), rep.rounds, rep.canonicalized,
          rep.folded, rep.merged, rep.removed);
      total_in += poot_graph_node_count(g);
      total_out += poot_graph_node_count(out);
      poot_graph_destroy(out);
      poot_graph_destroy(g);
    }
  }
  assert_true(total_out <= total_in);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_families)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
