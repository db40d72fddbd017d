/* The device conformance suite (STYLE.md "Tests"; DESIGN §9): written once
 * against the executor and instantiated per backend (argv[1]: "vulkan", …,
 * any poot_device_open spec). Each case plans a graph for the device through
 * the engine and compares with poot_eval:
 *  - elementwise and gemv graphs, and a small llama decode step traced by the
 *    families layer, over several steps (states carried on the device):
 *    within the stated tolerance (tier 2: atol = TOL_REL * max|oracle|);
 *  - replay of the recording versus eager submission of the same dispatches:
 *    bit-identical (tier 1);
 *  - a token id at the vocabulary size: KERNEL_FAULT naming the gather kernel
 *    and the trap code, then NEEDS_RESET until reset_state, then correct
 *    results again.
 * On Vulkan the Khronos validation layer is on when installed and must stay
 * silent. Exit 77 when the device is absent. */
#include "poot_test.h"

#include <math.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/exec.h"
#include "poot/llm/model.h"

/* The tier-2 bound used here: the compiler's own interpreter tests use 2e-5
 * of the largest oracle magnitude; a device adds its math library's error
 * (lavapipe's exp, for instance), so the device suite allows 1e-4. */
#define TOL_REL 1e-4

static const char *g_spec = "vulkan";

/* Cases a backend skips, each with its reason (none so far). */
typedef struct skip_entry {
  const char *backend, *test, *reason;
} skip_entry;
static const skip_entry skip_list[] = {{NULL, NULL, NULL}};

static bool skipped(const poot_device *d, const char *test) {
  for (const skip_entry *s = skip_list; s->backend; s++) {
    if (strcmp(s->backend, d->caps.backend) == 0 && strcmp(s->test, test) == 0) {
      printf("SKIP %s on %s: %s\n", test, s->backend, s->reason);
      return true;
    }
  }
  return false;
}

static poot_device *open_device(void) {
  poot_device_open_options o = {.validation = true};
  poot_device *d = NULL;
  POOT_ASSERT_OK(poot_device_open(g_spec, &o, &d));
  return d;
}

static void close_device(poot_device *d) {
#ifdef POOT_HAVE_VULKAN
  if (strcmp(d->caps.backend, "vulkan") == 0 && poot_vulkan_validation_enabled(d))
    assert_int_equal(poot_vulkan_validation_messages(d), 0);
#endif
  poot_device_destroy(d);
}

/* The storage class of the leaf bound as `name`. */
static poot_storage leaf_storage(const poot_graph *g, const char *name) {
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_storage s = POOT_STORAGE_TEMP;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (n->op != POOT_OP_LEAF) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    if (strcmp(sb.data, name) == 0) {
      s = n->storage;
      break;
    }
  }
  poot_strbuf_deinit(&sb);
  return s;
}

/* Splits generated inputs into weights (loaded once) and per-step inputs
 * (slots and params); states are left to the device (zero). */
typedef struct split {
  size_t nw, ns;
  poot_exec_input w[128], s[16];
} split;

static void split_inputs(const poot_graph *g, const pt_inputs *in, split *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < in->count; i++) {
    poot_storage s = leaf_storage(g, in->names[i]);
    poot_exec_input x = {in->names[i], &in->tensors[i]};
    if (s == POOT_STORAGE_WEIGHT) {
      assert_true(out->nw < 128);
      out->w[out->nw++] = x;
    } else if (s == POOT_STORAGE_SLOT || s == POOT_STORAGE_PARAM) {
      assert_true(out->ns < 16);
      out->s[out->ns++] = x;
    }
  }
}

static void set_int(pt_inputs *in, const char *name, int64_t v) {
  pt_inputs_set_int(in, name, v);
}

static double elem_f(const poot_tensor *t, size_t i) {
  if (t->type.dtype == POOT_DTYPE_F32) {
    float f;
    memcpy(&f, (const uint8_t *)t->data + 4 * i, 4);
    return f;
  }
  if (t->type.dtype == POOT_DTYPE_I32) {
    int32_t v;
    memcpy(&v, (const uint8_t *)t->data + 4 * i, 4);
    return v;
  }
  fail_msg("unexpected output dtype %s", poot_dtype_name(t->type.dtype));
  return 0;
}

/* Device output bytes against the oracle's tensor. */
static void compare(const char *what, const void *dev, const poot_tensor *ref, double tol_rel) {
  size_t n = ref->size / 4;
  poot_tensor d = *ref;
  d.data = (void *)dev;
  if (ref->type.dtype != POOT_DTYPE_F32) {
    if (memcmp(dev, ref->data, ref->size) != 0) fail_msg("%s: not bit-exact", what);
    return;
  }
  double mx = 0;
  for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(elem_f(ref, i)));
  double atol = tol_rel * (mx > 0 ? mx : 1);
  for (size_t i = 0; i < n; i++) {
    double a = elem_f(&d, i), b = elem_f(ref, i);
    if (!isfinite(a) || fabs(a - b) > atol)
      fail_msg("%s[%zu]: device %.9g oracle %.9g (atol %.3g)", what, i, a, b, atol);
  }
}

/* Runs `steps` steps of graph g on the device and on the oracle (states
 * carried by both), comparing the primary output after each step. Slots
 * "pos" and "token" change every step when present. */
static void run_against_oracle(const char *what, poot_graph *g, int steps, double tol) {
  poot_device *d = open_device();
  if (skipped(d, what)) {
    close_device(d);
    return;
  }
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 77, 50, 0, 0.3f, &in));
  split sp;
  split_inputs(g, &in, &sp);
  POOT_ASSERT_OK(poot_exec_load_weights(ex, sp.nw, sp.w));
  poot_exec_entry_key key = {"conformance", what, "", ""};
  uint32_t entry = 0, again = 1;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry));
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &again));
  assert_int_equal(entry, again); /* same key, same entry: no new capture */
  poot_evaluation *prev = NULL;
  for (int step = 0; step < steps; step++) {
    set_int(&in, "pos", step);
    set_int(&in, "token", 3 + 7 * step);
    /* The oracle gets every leaf; states from its previous step. */
    poot_eval_input ei[160];
    size_t ne = 0;
    for (size_t i = 0; i < in.count; i++) {
      const poot_tensor *t = &in.tensors[i];
      if (prev) {
        const poot_tensor *st = poot_evaluation_state(prev, in.names[i]);
        if (st) t = st;
      }
      ei[ne++] = (poot_eval_input){in.names[i], t};
    }
    poot_eval_inputs eis = {ne, ei};
    poot_evaluation *ev = NULL;
    POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
    assert_true(ev->has_output);
    void *out = poot_malloc(ev->output.size);
    poot_exec_step_io io = {
        .input_count = sp.ns, .inputs = sp.s, .output = out, .output_size = ev->output.size};
    POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
    char label[64];
    snprintf(label, sizeof label, "%s step %d", what, step);
    compare(label, out, &ev->output, tol);
    poot_free(out);
    poot_evaluation_destroy(prev);
    prev = ev;
  }
  poot_evaluation_destroy(prev);
  poot_exec_stats s;
  poot_exec_stats_get(ex, &s);
  assert_int_equal(s.steps, (uint64_t)steps);
  assert_int_equal(s.captures, 1);
  assert_int_equal(s.entries, 1);
  assert_true(s.dispatches_per_step >= 1);
  assert_int_equal(s.dispatches, s.dispatches_per_step * (uint64_t)steps);
  assert_true(s.host_us_per_step > 0);
  assert_true(s.bytes_uploaded >= s.weight_bytes);
  if (s.device_timed) assert_true(s.device_us_per_step > 0);
  printf(
      "%s: %llu dispatches/step, %llu stages, %.1f us host/step, %.1f us device/step%s, "
      "%llu kernels\n",
      what, (unsigned long long)s.dispatches_per_step, (unsigned long long)s.stages_per_step,
      s.host_us_per_step, s.device_us_per_step, s.device_timed ? "" : " (not timed)",
      (unsigned long long)s.kernels);
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  close_device(d);
}

static poot_graph *parse(const char *text) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_parse(text, strlen(text), &g));
  return g;
}

static void test_elementwise(void **state) {
  (void)state;
  poot_graph *g = parse(
      "pgraph 1\n"
      "%0 = param 0 \"x\" : f32[4,37]\n"
      "%1 = weight output_norm : f32[37]\n"
      "%2 = broadcast %1 {dims=[1]} : f32[4,37]\n"
      "%3 = mul %0, %2 : f32[4,37]\n"
      "%4 = exp %3 : f32[4,37]\n"
      "%5 = add %4, %0 : f32[4,37]\n"
      "output %5\n");
  run_against_oracle("elementwise", g, 2, TOL_REL);
  poot_graph_destroy(g);
}

static void test_gemv(void **state) {
  (void)state;
  poot_graph *g = parse(
      "pgraph 1\n"
      "%0 = param 0 \"x\" : f32[1,300]\n"
      "%1 = weight output : f32[50,300]\n"
      "%2 = dot_general %0, %1 {lhs_batch=[], rhs_batch=[], lhs_contract=[1], "
      "rhs_contract=[1]} : f32[1,50]\n"
      "output %2\n");
  run_against_oracle("gemv", g, 2, TOL_REL);
  poot_graph_destroy(g);
}

static poot_graph *trace_llama(void) {
  poot_model_config c;
  poot_model_config_init(&c, POOT_MODEL_FAMILY_LLAMA);
  c.vocab_size = 96;
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.norm_eps = 1e-5;
  c.rope_dims = 16;
  c.rope_theta = 10000;
  c.rope_mode = POOT_ROPE_NEOX;
  poot_model_step s;
  memset(&s, 0, sizeof s);
  s.batch = 1;
  s.tokens = 1;
  s.cap = 16;
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_model_trace(&c, &s, NULL, &g));
  return g;
}

static void test_llama_decode(void **state) {
  (void)state;
  poot_graph *g = trace_llama();
  run_against_oracle("llama_decode", g, 3, TOL_REL);
  poot_graph_destroy(g);
}

/* Replay versus eager submission, and the gather fault. */
static void test_replay_eager_and_fault(void **state) {
  (void)state;
  poot_graph *g = trace_llama();
  poot_device *d = open_device();
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 5, 50, 0, 0.3f, &in));
  split sp;
  split_inputs(g, &in, &sp);
  POOT_ASSERT_OK(poot_exec_load_weights(ex, sp.nw, sp.w));
  poot_exec_entry_key key = {"conformance", "decode", "", ""};
  uint32_t entry;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry));
  float a[2][96], b[2][96];
  for (int mode = 0; mode < 2; mode++) {
    POOT_ASSERT_OK(poot_exec_reset_state(ex));
    for (int step = 0; step < 2; step++) {
      set_int(&in, "pos", step);
      set_int(&in, "token", 11 + step);
      poot_exec_step_io io = {.input_count = sp.ns,
                              .inputs = sp.s,
                              .output = mode ? (void *)b[step] : (void *)a[step],
                              .output_size = sizeof a[0],
                              .eager = mode == 1};
      POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
    }
  }
  assert_memory_equal(a, b, sizeof a);

  /* A token id at the vocabulary size. */
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  set_int(&in, "pos", 0);
  set_int(&in, "token", 96);
  float out[96];
  poot_exec_step_io io = {
      .input_count = sp.ns, .inputs = sp.s, .output = out, .output_size = sizeof out};
  poot_status st = poot_exec_step(ex, entry, &io);
  assert_int_equal(poot_status_code_of(st), POOT_KERNEL_FAULT);
  const char *msg = poot_status_message(st);
  char code[32];
  snprintf(code, sizeof code, "trap code %d", (int)POOT_TRAP_TOKEN_OUT_OF_RANGE);
  /* The planner may fuse the gather with other groups into one kernel
   * (e.g. "poot_batch"): the message names that kernel, its groups and the
   * gather's trap. */
  if (!strstr(msg, "kernel poot_") || !strstr(msg, code) || !strstr(msg, "token_out_of_range"))
    fail_msg("the fault does not name the kernel and its trap: %s", msg);
  printf("fault: %s\n", msg);
  poot_status_free(st);
  set_int(&in, "token", 11);
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NEEDS_RESET);
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NEEDS_RESET);
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  assert_memory_equal(out, a[0], sizeof out); /* the same as before the fault */

  /* Entry bookkeeping. */
  POOT_ASSERT_STATUS(poot_exec_remove_entry(ex, entry + 7), POOT_NOT_FOUND);
  POOT_ASSERT_OK(poot_exec_remove_entry(ex, entry));
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NOT_FOUND);
  poot_exec_unload(ex);
  /* After unload the graph's weights are unbound. */
  uint32_t e2;
  POOT_ASSERT_STATUS_MSG(poot_exec_add_entry(ex, &key, g, &e2), POOT_NOT_FOUND, "token_embd");
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  close_device(d);
  poot_graph_destroy(g);
}

/* Argument errors are refused before anything replays. */
static void test_executor_arguments(void **state) {
  (void)state;
  poot_graph *g = trace_llama();
  poot_device *d = open_device();
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  poot_kir_target ptx;
  poot_kir_target_init_sm90(&ptx);
  poot_exec_target t = {.target = &ptx};
  POOT_ASSERT_STATUS(poot_exec_target_set(ex, &t), POOT_UNSUPPORTED);
  t.target = &d->caps.target;
  POOT_ASSERT_OK(poot_exec_target_set(ex, &t));
  POOT_ASSERT_OK(poot_exec_target_set(ex, NULL));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 9, 50, 0, 0.3f, &in));
  split sp;
  split_inputs(g, &in, &sp);
  poot_exec_input twice[2] = {sp.w[0], sp.w[0]};
  POOT_ASSERT_STATUS(poot_exec_load_weights(ex, 2, twice), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_OK(poot_exec_load_weights(ex, sp.nw, sp.w));
  POOT_ASSERT_STATUS(poot_exec_load_weights(ex, sp.nw, sp.w), POOT_INVALID_ARGUMENT);
  poot_exec_entry_key key = {"conformance", "decode", "", ""};
  uint32_t entry;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry));
  float out[96];
  poot_exec_step_io io = {
      .input_count = sp.ns, .inputs = sp.s, .output = out, .output_size = sizeof out - 4};
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_INVALID_ARGUMENT);
  io.output_size = sizeof out;
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io)); /* no NEEDS_RESET from a refused call */
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  close_device(d);
  poot_graph_destroy(g);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  poot_device *d = NULL;
  poot_status st = poot_device_open(g_spec, NULL, &d);
  if (st) {
    int rc = poot_test_skip("device '%s' absent: %s", g_spec, poot_status_message(st));
    poot_status_free(st);
    return rc;
  }
  printf("conformance on %s: %s (%s)\n", g_spec, d->caps.name, d->caps.kind);
  poot_device_destroy(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise),        cmocka_unit_test(test_gemv),
      cmocka_unit_test(test_llama_decode),       cmocka_unit_test(test_replay_eager_and_fault),
      cmocka_unit_test(test_executor_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
