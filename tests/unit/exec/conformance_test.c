/* The device conformance suite (STYLE.md "Tests"; DESIGN §9): written once
 * against the executor and instantiated per backend (argv[1]: "vulkan", …,
 * any poot_device_open spec). Each case plans a graph for the device through
 * the engine and compares with poot_eval:
 *  - the template catalogue (tests/unit/compile/template_cases.c: every op
 *    and every kernel template and mode of the compiler): every case, with
 *    its primary output, each environment entry and each state's new value
 *    as the primary output in turn, two steps each (states carried on the
 *    device), on the device's own target and on a portable profile (no
 *    subgroups, 32-bit storage: the shared-memory modes), over every
 *    element: bit-exact where the case says so, else within its derived
 *    tolerance (docs/verification.md, "Device conformance");
 *  - elementwise and gemv graphs, and a small llama decode step traced by the
 *    families layer, over several steps (states carried on the device):
 *    within the stated tolerance (tier 2: atol = TOL_REL * max|oracle|);
 *  - replay of the recording versus eager submission of the same dispatches:
 *    bit-identical (tier 1);
 *  - a token id at the vocabulary size: KERNEL_FAULT naming the gather kernel
 *    and the trap code, then NEEDS_RESET until reset_state, then correct
 *    results again;
 *  - a device lost under a step (injected where the backend has a hook:
 *    Vulkan, wgpu): DEVICE_LOST, then POISONED for every step and reset.
 * A case a backend cannot run is in skip_list with its reason and prints
 * "SKIP <case> on <backend>: <reason>". On Vulkan the Khronos validation layer
 * is on when installed and must stay silent. Exit 77 when the device is
 * absent. */
#include "poot_test.h"

#include <math.h>
#include <stdarg.h>
#include <time.h>

#include "plan_util.h"
#include "poot/devices.h"
#include "template_cases.h"
#include "poot/eval.h"
#include "poot/exec.h"
#include "poot/llm/model.h"

/* The tier-2 bound used here: the compiler's own interpreter tests use 2e-5
 * of the largest oracle magnitude; a device adds its math library's error
 * (lavapipe's exp, for instance), so the device suite allows 1e-4. */
#define TOL_REL 1e-4

static const char *g_spec = "vulkan";
/* argv[2]: run only the catalogue cases whose name contains it. */
static const char *g_case_filter = NULL;

/* Cases a backend skips (a test's name or a catalogue case's name), each
 * with its reason. Empty: every backend present runs every case. */
typedef struct skip_entry {
  const char *backend, *test, *reason;
} skip_entry;
static const skip_entry skip_list[] = {{NULL, NULL, NULL}};

static bool skipped(const poot_device *d, const char *test) {
  for (const skip_entry *s = skip_list; s->backend; s++) {
    if (strcmp(s->backend, d->caps.backend) == 0 && strcmp(s->test, test) == 0) {
      printf("SKIP %s on %s: %s\n", test, s->backend, s->reason);
      poot_test_note_skip(); /* the program then reports a skip, not a pass */
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

/* The storage class of the leaf bound as `name` (and a weight's key). */
static poot_storage leaf_storage(const poot_graph *g, const char *name, poot_weight_key *out_key) {
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
      *out_key = n->weight.key;
      break;
    }
  }
  poot_strbuf_deinit(&sb);
  return s;
}

/* A per-step input (a slot or a param) by the name it is generated under. */
typedef struct named_input {
  const char *name;
  const poot_tensor *tensor;
} named_input;

/* Splits generated inputs into weights (loaded once) and per-step inputs
 * (slots and params); states are left to the device (zero). */
typedef struct split {
  size_t nw, ns;
  poot_exec_weight w[128];
  named_input s[16];
} split;

/* The per-step inputs as values of the entry's handles, found by name. */
static void bind_inputs(const poot_executor *ex, uint32_t entry, const named_input *in, size_t n,
                        poot_exec_slot_value *out) {
  for (size_t i = 0; i < n; i++) {
    POOT_ASSERT_OK(poot_exec_entry_slot(ex, entry, in[i].name, &out[i].slot));
    out[i].tensor = in[i].tensor;
  }
}

static void split_inputs(const poot_graph *g, const pt_inputs *in, split *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < in->count; i++) {
    poot_weight_key key = 0;
    poot_storage s = leaf_storage(g, in->names[i], &key);
    if (s == POOT_STORAGE_WEIGHT) {
      assert_true(out->nw < 128);
      out->w[out->nw++] =
          (poot_exec_weight){.key = key, .name = in->names[i], .tensor = &in->tensors[i]};
    } else if (s == POOT_STORAGE_SLOT || s == POOT_STORAGE_PARAM) {
      assert_true(out->ns < 16);
      out->s[out->ns++] = (named_input){in->names[i], &in->tensors[i]};
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
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &again, NULL));
  assert_int_equal(entry, again); /* same key, same entry: no new capture */
  poot_exec_slot_value sv[16];
  bind_inputs(ex, entry, sp.s, sp.ns, sv);
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
    poot_eval_inputs eis = {.count = ne, .items = ei};
    poot_evaluation *ev = NULL;
    POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
    assert_true(ev->has_output);
    void *out = poot_malloc(ev->output.size);
    poot_exec_step_io io = {
        .input_count = sp.ns, .inputs = sv, .output = out, .output_size = ev->output.size};
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
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  poot_exec_slot_value sv[16];
  bind_inputs(ex, entry, sp.s, sp.ns, sv);
  float a[2][96], b[2][96];
  for (int mode = 0; mode < 2; mode++) {
    POOT_ASSERT_OK(poot_exec_reset_state(ex));
    for (int step = 0; step < 2; step++) {
      set_int(&in, "pos", step);
      set_int(&in, "token", 11 + step);
      poot_exec_step_io io = {.input_count = sp.ns,
                              .inputs = sv,
                              .output = mode ? (void *)b[step] : (void *)a[step],
                              .output_size = sizeof a[0],
                              .eager = mode == 1};
      POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
    }
  }
  assert_memory_equal(a, b, sizeof a);

  /* Queued steps (io.queue): a second entry of the same graph (the K/V
   * states are shared by name) stepped behind a queued step of the first
   * gives what two waited steps gave; the same entry twice waits in between;
   * a queued step reads no output. On a device that chains replays the
   * second runs behind the first with no wait between. */
  poot_exec_entry_key key2 = {"conformance", "decode-queued", "", ""};
  uint32_t entry2;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key2, g, &entry2, NULL));
  poot_exec_slot_value sv2[16];
  bind_inputs(ex, entry2, sp.s, sp.ns, sv2);
  for (int same = 0; same < 2; same++) {
    float q[96];
    POOT_ASSERT_OK(poot_exec_reset_state(ex));
    set_int(&in, "pos", 0);
    set_int(&in, "token", 11);
    poot_exec_step_io qa = {.input_count = sp.ns, .inputs = sv, .queue = true};
    POOT_ASSERT_OK(poot_exec_step(ex, entry, &qa));
    set_int(&in, "pos", 1);
    set_int(&in, "token", 12);
    poot_exec_step_io qb = {
        .input_count = sp.ns, .inputs = same ? sv : sv2, .output = q, .output_size = sizeof q};
    POOT_ASSERT_OK(poot_exec_step(ex, same ? entry : entry2, &qb));
    assert_memory_equal(q, a[1], sizeof q);
  }
  float q0[96];
  poot_exec_step_io qo = {
      .input_count = sp.ns, .inputs = sv, .output = q0, .output_size = sizeof q0, .queue = true};
  POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry, &qo), POOT_INVALID_ARGUMENT, "queued");

  /* A token id at the vocabulary size. */
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  set_int(&in, "pos", 0);
  set_int(&in, "token", 96);
  float out[96];
  poot_exec_step_io io = {
      .input_count = sp.ns, .inputs = sv, .output = out, .output_size = sizeof out};
  poot_status st = poot_exec_step(ex, entry, &io);
  assert_int_equal(poot_status_code_of(st), POOT_KERNEL_FAULT);
  const char *msg = poot_status_message(st);
  char code[32];
  snprintf(code, sizeof code, "trap code %d", (int)POOT_TRAP_TOKEN_OUT_OF_RANGE);
  /* The planner may fuse the gather with other groups into one kernel
   * (e.g. "poot_batch"): the message names that kernel, its groups and the
   * gather's trap code (and, from the error word, the trap's name). */
  bool trap = d->caps.target.has_trap;
  if (!strstr(msg, "kernel") || !strstr(msg, "poot_") || !strstr(msg, code) ||
      (!trap && !strstr(msg, "token_out_of_range")))
    fail_msg("the fault does not name the kernel and its trap: %s", msg);
  printf("fault: %s\n", msg);
  poot_status_free(st);
  if (trap) {
    /* A real trap poisons the device's context for the whole process
     * (exec.h, "faults"): every later call is refused without touching the
     * device. (This test runs last for that reason.) */
    assert_true(poot_device_is_poisoned(d));
    POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_POISONED);
    POOT_ASSERT_STATUS(poot_exec_reset_state(ex), POOT_POISONED);
    poot_executor_destroy(ex);
    pt_inputs_free(&in);
    close_device(d);
    poot_graph_destroy(g);
    return;
  }
  /* The error word: the device stays usable; the executable needs a reset. */
  set_int(&in, "token", 11);
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NEEDS_RESET);
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NEEDS_RESET);
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  assert_memory_equal(out, a[0], sizeof out); /* the same as before the fault */

  /* A queued step's fault is the next waiting step's status, then
   * NEEDS_RESET, and a reset clears it. */
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  set_int(&in, "token", 96);
  poot_exec_step_io qf = {.input_count = sp.ns, .inputs = sv, .queue = true};
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &qf));
  set_int(&in, "token", 11);
  poot_exec_step_io after = {
      .input_count = sp.ns, .inputs = sv2, .output = out, .output_size = sizeof out};
  POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry2, &after), POOT_KERNEL_FAULT, code);
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry2, &after), POOT_NEEDS_RESET);
  POOT_ASSERT_OK(poot_exec_reset_state(ex));
  POOT_ASSERT_OK(poot_exec_step(ex, entry2, &after));
  assert_memory_equal(out, a[0], sizeof out);

  /* Entry bookkeeping. */
  POOT_ASSERT_STATUS(poot_exec_remove_entry(ex, entry + 7), POOT_NOT_FOUND);
  POOT_ASSERT_OK(poot_exec_remove_entry(ex, entry));
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_NOT_FOUND);
  poot_exec_unload(ex);
  /* After unload the graph's weights are unbound. */
  uint32_t e2;
  POOT_ASSERT_STATUS_MSG(poot_exec_add_entry(ex, &key, g, &e2, NULL), POOT_NOT_FOUND, "token_embd");
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  close_device(d);
  poot_graph_destroy(g);
}

/* Makes the device's next submission report a lost device, where the
 * backend has such a hook; false where it has none. */
static bool inject_device_loss(poot_device *d) {
#ifdef POOT_HAVE_VULKAN
  if (strcmp(d->caps.backend, "vulkan") == 0) {
    poot_vulkan_device_inject(d, POOT_VULKAN_FAULT_SUBMIT_DEVICE_LOST);
    return true;
  }
#endif
#ifdef POOT_HAVE_WGPU
  if (strcmp(d->caps.backend, "wgpu") == 0) {
    poot_wgpu_device_inject(d, POOT_WGPU_FAULT_SUBMIT_DEVICE_LOST);
    return true;
  }
#endif
  (void)d;
  return false;
}

/* A device lost under a step: DEVICE_LOST, then every later step and reset
 * refused as POISONED without touching the device (the executor never
 * clears it). Backends without an injection hook say so and pass. */
static void test_device_loss_poisons(void **state) {
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
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, NULL));
  poot_exec_slot_value sv[16];
  bind_inputs(ex, entry, sp.s, sp.ns, sv);
  set_int(&in, "pos", 0);
  set_int(&in, "token", 11);
  float out[96];
  poot_exec_step_io io = {
      .input_count = sp.ns, .inputs = sv, .output = out, .output_size = sizeof out};
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  if (inject_device_loss(d)) {
    POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_DEVICE_LOST);
    assert_true(poot_device_is_poisoned(d));
    POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry, &io), POOT_POISONED, "lost");
    POOT_ASSERT_STATUS(poot_exec_reset_state(ex), POOT_POISONED);
    POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_POISONED);
  } else {
    printf("device loss on %s: no injection hook; not exercised here\n", d->caps.backend);
  }
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  poot_device_destroy(d);
  poot_graph_destroy(g);
}

/* Argument errors are refused before anything replays. */
static void test_executor_arguments(void **state) {
  (void)state;
  poot_graph *g = trace_llama();
  poot_device *d = open_device();
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  /* a target in another kernel language than the device's */
  poot_kir_target other;
  poot_device_target_init(POOT_DEVICE_TARGET_SM90, 0, &other);
  if (other.lang == d->caps.target.lang)
    poot_device_target_init(POOT_DEVICE_TARGET_VULKAN, 32, &other);
  poot_exec_target t = {.target = &other};
  POOT_ASSERT_STATUS(poot_exec_target_set(ex, &t), POOT_UNSUPPORTED);
  /* the device's own target, asking more opt-in shared memory than it has */
  other = d->caps.target;
  other.shared_memory_optin_bytes = d->caps.target.shared_memory_optin_bytes + 1;
  t.target = &other;
  POOT_ASSERT_STATUS_MSG(poot_exec_target_set(ex, &t), POOT_UNSUPPORTED, "asks for more than");
  t.target = &d->caps.target;
  POOT_ASSERT_OK(poot_exec_target_set(ex, &t));
  POOT_ASSERT_OK(poot_exec_target_set(ex, NULL));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 9, 50, 0, 0.3f, &in));
  split sp;
  split_inputs(g, &in, &sp);
  poot_exec_weight twice[2] = {sp.w[0], sp.w[0]};
  POOT_ASSERT_STATUS(poot_exec_load_weights(ex, 2, twice), POOT_INVALID_ARGUMENT);
  POOT_ASSERT_OK(poot_exec_load_weights(ex, sp.nw, sp.w));
  POOT_ASSERT_STATUS(poot_exec_load_weights(ex, sp.nw, sp.w), POOT_INVALID_ARGUMENT);
  poot_exec_entry_key key = {"conformance", "decode", "", ""};
  uint32_t entry;
  poot_exec_bindings b;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, &b));
  /* The bindings: the graph's token and pos slots, both read. */
  assert_int_equal(b.entry, entry);
  assert_int_equal(b.count, 2);
  for (uint32_t i = 0; i < b.count; i++) {
    assert_int_equal(b.items[i].slot.entry, entry);
    assert_int_equal(b.items[i].slot.index, i);
    assert_false(b.items[i].is_input);
    assert_true(b.items[i].read);
  }
  poot_exec_slot_value sv[16];
  bind_inputs(ex, entry, sp.s, sp.ns, sv);
  poot_exec_slot h;
  POOT_ASSERT_STATUS_MSG(poot_exec_entry_slot(ex, entry, "possition", &h), POOT_INVALID_ARGUMENT,
                         "possition");
  assert_int_equal(h.entry, UINT32_MAX);
  POOT_ASSERT_STATUS(poot_exec_entry_slot(ex, entry + 7, "pos", &h), POOT_NOT_FOUND);
  float out[96];
  poot_exec_step_io io = {
      .input_count = sp.ns, .inputs = sv, .output = out, .output_size = sizeof out - 4};
  POOT_ASSERT_STATUS(poot_exec_step(ex, entry, &io), POOT_INVALID_ARGUMENT);
  io.output_size = sizeof out;
  /* A handle the entry does not have: another entry's, or past its last. */
  poot_exec_slot_value bad = sv[0];
  io.inputs = &bad;
  io.input_count = 1;
  bad.slot.entry = entry + 1;
  POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry, &io), POOT_INVALID_ARGUMENT, "does not have");
  bad.slot = (poot_exec_slot){entry, b.count};
  POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry, &io), POOT_INVALID_ARGUMENT, "does not have");
  /* A value of another type, named by its slot. */
  int64_t one = 1, p64 = 0;
  poot_tensor wide = {.type = poot_type_make(POOT_DTYPE_I64, 1, &one), .data = &p64, .size = 8};
  POOT_ASSERT_OK(poot_exec_entry_slot(ex, entry, "pos", &bad.slot));
  bad.tensor = &wide;
  POOT_ASSERT_STATUS_MSG(poot_exec_step(ex, entry, &io), POOT_INVALID_ARGUMENT, "'pos'");
  io.inputs = sv;
  io.input_count = sp.ns;
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io)); /* no NEEDS_RESET from a refused call */
  poot_executor_destroy(ex);
  pt_inputs_free(&in);
  close_device(d);
  poot_graph_destroy(g);
}

/* Every slot and root input the graph declares has a handle, also one the
 * passes removed: a value for it is accepted and dropped. */
static void test_unread_bindings(void **state) {
  (void)state;
  poot_graph *g = parse(
      "pgraph 1\n"
      "%0 = param 0 \"x\" : f32[4]\n"
      "%1 = param 1 \"unused\" : f32[4]\n"
      "%2 = slot pos : i32[1]\n"
      "%3 = exp %0 : f32[4]\n"
      "output %3\n");
  poot_device *d = open_device();
  poot_executor *ex = NULL;
  POOT_ASSERT_OK(poot_engine_create(d, &ex));
  poot_exec_entry_key key = {"conformance", "unread", "", "x"};
  uint32_t entry;
  poot_exec_bindings b;
  POOT_ASSERT_OK(poot_exec_add_entry(ex, &key, g, &entry, &b));
  assert_int_equal(b.count, 3);
  const char *names[3] = {"x", "unused", "pos"};
  for (uint32_t i = 0; i < 3; i++) {
    assert_string_equal(b.items[i].name, names[i]);
    assert_int_equal(b.items[i].is_input, i < 2);
  }
  assert_true(b.items[0].read);
  assert_false(b.items[1].read);
  assert_false(b.items[2].read);
  float x[4] = {0, 1, -1, 2}, junk[4] = {9, 9, 9, 9}, out[4];
  int32_t pos = 5;
  int64_t four = 4, one = 1;
  poot_tensor xt = {.type = poot_type_make(POOT_DTYPE_F32, 1, &four), .data = x, .size = 16};
  poot_tensor jt = {.type = xt.type, .data = junk, .size = 16};
  poot_tensor pt = {.type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &pos, .size = 4};
  poot_exec_slot_value v[3] = {
      {b.items[0].slot, &xt}, {b.items[1].slot, &jt}, {b.items[2].slot, &pt}};
  poot_exec_step_io io = {.input_count = 3, .inputs = v, .output = out, .output_size = sizeof out};
  POOT_ASSERT_OK(poot_exec_step(ex, entry, &io));
  for (int i = 0; i < 4; i++) assert_true(fabsf(out[i] - expf(x[i])) <= 1e-5f * expf(x[i]));
  poot_executor_destroy(ex);
  close_device(d);
  poot_graph_destroy(g);
}

/* ------------------------------------------------- the template catalogue */

/* The compile targets every case runs on: the device's own, and a portable
 * profile of it without subgroup operations and with 32-bit storage only
 * (64-bit integers kept where the device has them), which takes the
 * shared-memory modes of the contraction, attention and local-reduction
 * templates and the word-packed stores of narrow types. */
enum { PROFILE_NATIVE, PROFILE_PORTABLE, PROFILE_COUNT };
static const char *const profile_names[PROFILE_COUNT] = {"native", "portable"};

static void profile_target(const poot_device *d, int profile, poot_kir_target *t) {
  *t = d->caps.target;
  if (profile == PROFILE_NATIVE) return;
  t->name = "portable";
  t->subgroup_ops = false;
  t->subgroup_size = t->subgroup_size_min = t->subgroup_size_max = 0;
  uint32_t words = POOT_KIR_SCALAR_BIT(POOT_KIR_U32) | POOT_KIR_SCALAR_BIT(POOT_KIR_I32) |
                   POOT_KIR_SCALAR_BIT(POOT_KIR_F32) | POOT_KIR_SCALAR_BIT(POOT_KIR_I64);
  t->storage_types &= words;
  t->arith_types &= words | POOT_KIR_SCALAR_BIT(POOT_KIR_BOOL);
  if (t->max_workgroup_size > 256) t->max_workgroup_size = 256;
}

/* Element i of f32/f16/bf16 bytes p (of t's dtype) as a double. */
static double elem_any(const poot_tensor *t, const uint8_t *p, size_t i) {
  uint16_t h;
  float f;
  switch (t->type.dtype) {
    case POOT_DTYPE_F32:
      memcpy(&f, p + 4 * i, 4);
      return f;
    case POOT_DTYPE_F16:
      memcpy(&h, p + 2 * i, 2);
      return poot_f16_to_f32(h);
    case POOT_DTYPE_BF16:
      memcpy(&h, p + 2 * i, 2);
      return poot_bf16_to_f32(h);
    default:
      return 0;
  }
}
/* One unit in the last place of an f16/bf16 value v (0 for f32: a device
 * computing a half result in f32 may round it the other way). */
static double half_ulp(poot_dtype dt, double v) {
  if (dt != POOT_DTYPE_F16 && dt != POOT_DTYPE_BF16) return 0;
  int e = v == 0 ? -1000 : (int)floor(log2(fabs(v)));
  int emin = dt == POOT_DTYPE_F16 ? -14 : -126, mant = dt == POOT_DTYPE_F16 ? 10 : 7;
  return ldexp(1.0, (e < emin ? emin : e) - mant);
}

/* What a case saw over all its comparisons. */
typedef struct case_report {
  bool failed;
  char why[512];
  double worst;        /* max of |err| / allowed */
  double err, allowed; /* at the worst element */
  double max_ref;      /* largest max|oracle| of a toleranced tensor */
  uint64_t dispatches[PROFILE_COUNT];
  uint32_t same[PROFILE_COUNT]; /* variants not run: the native profile's kernels */
  uint32_t variants;
  uint32_t skipped; /* profiles the target cannot run */
  double seconds;
} case_report;

static void report_fail(case_report *r, const char *fmt, ...) {
  if (r->failed) return; /* the first failure says the most */
  r->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
}

/* Device bytes against the oracle's tensor: bit-exact when tol is 0 or the
 * dtype is not a float; else within tol * max|oracle| (plus one ulp of an
 * f16/bf16 output) at every element. NaN or infinity where the oracle is
 * finite fails at any tolerance. */
static void compare_case(const char *label, const void *dev, const poot_tensor *ref,
                         const tc_case *c, case_report *r) {
  double tol = c->device_tol;
  const uint8_t *d = dev, *o = ref->data;
  poot_dtype dt = ref->type.dtype;
  bool fl = dt == POOT_DTYPE_F32 || dt == POOT_DTYPE_F16 || dt == POOT_DTYPE_BF16;
  size_t eb = poot_dtype_info_of(dt)->elem_bytes;
  size_t n = eb ? ref->size / eb : 0;
  if (tol == 0 || !fl) {
    if (memcmp(dev, ref->data, ref->size) == 0) return;
    size_t i = 0;
    while (i < ref->size && d[i] == o[i]) i++;
    if (fl)
      report_fail(r, "%s[%zu]: device %.9g oracle %.9g (bit-exact expected)", label, i / eb,
                  elem_any(ref, d, i / eb), elem_any(ref, o, i / eb));
    else
      report_fail(r,
                  "%s: byte %zu (element %zu of %s): device 0x%02x oracle 0x%02x (bit-exact "
                  "expected)",
                  label, i, eb ? i / eb : i, poot_dtype_name(dt), d[i], o[i]);
    return;
  }
  double mx = 0;
  for (size_t i = 0; i < n; i++) {
    double b = elem_any(ref, o, i);
    if (isfinite(b)) mx = fmax(mx, fabs(b));
  }
  r->max_ref = fmax(r->max_ref, mx);
  if (mx < c->min_ref) {
    report_fail(r,
                "%s: max|oracle| %.4g is below %.4g, which the derivation of the tolerance "
                "assumes",
                label, mx, c->min_ref);
    return;
  }
  double atol = tol * mx;
  for (size_t i = 0; i < n; i++) {
    double a = elem_any(ref, d, i), b = elem_any(ref, o, i);
    if (isnan(b) && isnan(a)) continue;
    if (!isfinite(b) && a == b) continue;
    double allowed = atol + half_ulp(dt, b), e = fabs(a - b);
    if (!isfinite(a) || !isfinite(b) || e > allowed) {
      report_fail(r, "%s[%zu]: device %.9g oracle %.9g (allowed %.3g = %.3g * max|oracle| %.4g%s)",
                  label, i, a, b, allowed, tol, mx, dt == POOT_DTYPE_F32 ? "" : " + 1 ulp");
      continue;
    }
    if (allowed > 0 && e / allowed > r->worst) {
      r->worst = e / allowed;
      r->err = e;
      r->allowed = allowed;
    }
  }
}

/* The leaf bound as `name`: its storage and slot kind. */
static const poot_node *leaf_named(const poot_graph *g, const char *name) {
  const poot_region *root = poot_graph_root(g);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  const poot_node *found = NULL;
  for (uint32_t i = 0; i < root->num_nodes && !found; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (n->op != POOT_OP_LEAF) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    if (strcmp(sb.data, name) == 0) found = n;
  }
  poot_strbuf_deinit(&sb);
  return found;
}

/* The graph with `v` (a value of g) as its primary output: a copy through
 * the text form, where values are renumbered, so v is found again as the
 * same environment entry or state of the copy. which: 0 the output, 1 + i
 * environment entry i, 1 + nenv + i state i's new value. */
static poot_graph *variant_graph(const poot_graph *g, uint32_t which, char *label, size_t n) {
  uint32_t nenv = poot_graph_env_count(g);
  if (which == 0) {
    snprintf(label, n, "output");
    return NULL; /* g itself */
  }
  char *text = NULL;
  POOT_ASSERT_OK(poot_graph_to_text(g, &text));
  poot_graph *c = NULL;
  POOT_ASSERT_OK(poot_graph_parse(text, strlen(text), &c));
  poot_free(text);
  poot_value v;
  if (which <= nenv) {
    const char *name;
    poot_graph_env_at(c, which - 1, &name, &v);
    snprintf(label, n, "env %s", name);
  } else {
    poot_value s;
    poot_graph_state_at(c, which - 1 - nenv, &s, &v);
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_graph_leaf_name(c, poot_graph_value_node(c, s, NULL), &sb);
    snprintf(label, n, "state %s", sb.data);
    poot_strbuf_deinit(&sb);
  }
  POOT_ASSERT_OK(poot_graph_set_output(c, v));
  POOT_ASSERT_OK(poot_graph_verify(c));
  return c;
}

/* One variant of a case on one profile: two steps (positions 3 and 4) on the
 * device and the oracle, states carried by both, the primary output
 * compared after each. */
static void run_variant(poot_executor *ex, const tc_case *c, int profile, const char *vlabel,
                        const poot_graph *g, pt_inputs *in, const named_input *step_in,
                        size_t nstep, const char *pos_name, case_report *r) {
  char label[160];
  poot_status st = poot_exec_reset_state(ex);
  poot_exec_entry_key key = {"catalogue", c->name, profile_names[profile], vlabel};
  uint32_t entry = 0;
  if (!st) st = poot_exec_add_entry(ex, &key, g, &entry, NULL);
  poot_exec_slot_value *values = poot_calloc(nstep + 1, sizeof *values);
  assert_non_null(values);
  for (size_t i = 0; i < nstep && !st; i++) {
    st = poot_exec_entry_slot(ex, entry, step_in[i].name, &values[i].slot);
    values[i].tensor = step_in[i].tensor;
  }
  if (st) {
    poot_free(values);
    report_fail(r, "%s, %s: add_entry: %s", profile_names[profile], vlabel,
                poot_status_message(st));
    poot_status_free(st);
    return;
  }
  poot_evaluation *prev = NULL;
  poot_eval_input *ei = poot_calloc(in->count + 1, sizeof *ei);
  assert_non_null(ei);
  for (int step = 0; step < 2 && !r->failed; step++) {
    if (pos_name) pt_inputs_set_int(in, pos_name, 3 + step);
    for (size_t i = 0; i < in->count; i++) {
      const poot_tensor *t = &in->tensors[i];
      const poot_tensor *sv = prev ? poot_evaluation_state(prev, in->names[i]) : NULL;
      ei[i] = (poot_eval_input){in->names[i], sv ? sv : t};
    }
    poot_eval_inputs eis = {.count = in->count, .items = ei};
    poot_evaluation *ev = NULL;
    POOT_ASSERT_OK(poot_eval(g, &eis, NULL, &ev));
    assert_true(ev->has_output);
    void *out = poot_malloc(ev->output.size ? ev->output.size : 1);
    assert_non_null(out);
    poot_exec_step_io io = {
        .input_count = nstep, .inputs = values, .output = out, .output_size = ev->output.size};
    snprintf(label, sizeof label, "%s, %s, step %d", profile_names[profile], vlabel, step);
    st = poot_exec_step(ex, entry, &io);
    if (st) {
      report_fail(r, "%s: %s", label, poot_status_message(st));
      poot_status_free(st);
    } else {
      compare_case(label, out, &ev->output, c, r);
    }
    poot_free(out);
    poot_evaluation_destroy(prev);
    prev = ev;
  }
  poot_evaluation_destroy(prev);
  poot_free(ei);
  poot_free(values);
  poot_exec_stats s;
  poot_exec_stats_get(ex, &s);
  if (!r->dispatches[profile] || s.dispatches_per_step > r->dispatches[profile])
    r->dispatches[profile] = s.dispatches_per_step;
}

/* Whether g plans to the same kernels and grids for targets a and b: the
 * second profile would then replay exactly the first one's kernels, and is
 * not run again. */
static bool same_plan(const poot_graph *g, const poot_kir_target *a, const poot_kir_target *b,
                      uint32_t workgroup_size) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.workgroup_size = workgroup_size;
  poot_plan *pa = NULL, *pb = NULL;
  o.target = a;
  poot_status sa = poot_plan_create(g, &o, &pa);
  o.target = b;
  poot_status sb = poot_plan_create(g, &o, &pb);
  bool same = !sa && !sb && pa->kernel_count == pb->kernel_count &&
              pa->dispatch_count == pb->dispatch_count;
  for (uint32_t k = 0; same && k < pa->kernel_count; k++)
    same = pa->kernels[k]->hash == pb->kernels[k]->hash;
  for (uint32_t i = 0; same && i < pa->dispatch_count; i++)
    same =
        pa->dispatches[i].kernel == pb->dispatches[i].kernel &&
        memcmp(pa->dispatches[i].grid, pb->dispatches[i].grid, sizeof pa->dispatches[i].grid) == 0;
  poot_status_free(sa);
  poot_status_free(sb);
  poot_plan_destroy(pa);
  poot_plan_destroy(pb);
  return same;
}

/* The dispatches g plans to for target t (after a failure: which kernels
 * computed what). */
static void print_plan(const poot_graph *g, const poot_kir_target *t, uint32_t workgroup_size) {
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = t;
  o.workgroup_size = workgroup_size;
  poot_plan *p = NULL;
  poot_status st = poot_plan_create(g, &o, &p);
  if (st) {
    printf("  plan: %s\n", poot_status_message(st));
    poot_status_free(st);
    return;
  }
  for (uint32_t i = 0; i < p->dispatch_count; i++)
    printf("  dispatch %u: kernel %u (%s), grid [%u,%u,%u]: %s\n", i, p->dispatches[i].kernel,
           p->kernels[p->dispatches[i].kernel]->name, p->dispatches[i].grid[0],
           p->dispatches[i].grid[1], p->dispatches[i].grid[2], p->dispatches[i].what);
  poot_plan_destroy(p);
}

/* Every variant of case c on every profile of device d. */
static void run_case(poot_device *d, const tc_case *c, case_report *r) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(tc_case_build(c, &g));
  pt_inputs in;
  POOT_ASSERT_OK(pt_inputs_make(g, 42, c->int_hi, 3, 1.0f, &in));
  /* weights loaded once per engine; slots and params every step; states
   * start at zero on both sides */
  poot_exec_weight *w = poot_calloc(in.count + 1, sizeof *w);
  named_input *si = poot_calloc(in.count + 1, sizeof *si);
  assert_true(w && si);
  size_t nw = 0, ns = 0;
  const char *pos_name = NULL;
  for (size_t i = 0; i < in.count; i++) {
    const poot_node *n = leaf_named(g, in.names[i]);
    assert_non_null(n);
    if (n->storage == POOT_STORAGE_WEIGHT)
      w[nw++] =
          (poot_exec_weight){.key = n->weight.key, .name = in.names[i], .tensor = &in.tensors[i]};
    if (n->storage == POOT_STORAGE_SLOT || n->storage == POOT_STORAGE_PARAM)
      si[ns++] = (named_input){in.names[i], &in.tensors[i]};
    if (n->storage == POOT_STORAGE_SLOT && n->slot_kind == POOT_SLOT_POS) pos_name = in.names[i];
  }
  uint32_t nvar = 1 + poot_graph_env_count(g) + poot_graph_state_count(g);
  r->variants = nvar;
  poot_kir_target native;
  profile_target(d, PROFILE_NATIVE, &native);
  for (int p = 0; p < PROFILE_COUNT && !r->failed; p++) {
    poot_kir_target t;
    profile_target(d, p, &t);
    if (p != PROFILE_NATIVE && c->native_only) continue;
    if (c->needs_i64 && !(t.arith_types & POOT_KIR_SCALAR_BIT(POOT_KIR_I64))) {
      printf("SKIP %s/%s on %s: the target has no 64-bit integers\n", c->name, profile_names[p],
             d->caps.backend);
      poot_test_note_skip(); /* a partly run case is a skip, never a pass */
      r->skipped++;
      continue;
    }
    poot_executor *ex = NULL;
    POOT_ASSERT_OK(poot_engine_create(d, &ex));
    poot_exec_target et = {.target = &t, .workgroup_size = c->exec_wg};
    POOT_ASSERT_OK(poot_exec_target_set(ex, &et));
    POOT_ASSERT_OK(poot_exec_load_weights(ex, nw, w));
    for (uint32_t v = 0; v < nvar && !r->failed; v++) {
      char vlabel[96];
      poot_graph *vg = variant_graph(g, v, vlabel, sizeof vlabel);
      if (p != PROFILE_NATIVE && same_plan(vg ? vg : g, &native, &t, c->exec_wg)) {
        r->same[p]++;
        poot_graph_destroy(vg);
        continue;
      }
      if (pos_name) pt_inputs_set_int(&in, pos_name, 3);
      run_variant(ex, c, p, vlabel, vg ? vg : g, &in, si, ns, pos_name, r);
      if (r->failed) {
        printf("FAIL %s (%s, %s): the plan\n", c->name, profile_names[p], vlabel);
        print_plan(vg ? vg : g, &t, c->exec_wg);
      }
      poot_graph_destroy(vg);
    }
    poot_executor_destroy(ex);
  }
  poot_free(w);
  poot_free(si);
  pt_inputs_free(&in);
  poot_graph_destroy(g);
}

/* The whole catalogue on the device: one line per case; every failure is
 * listed before the test fails. */
static void test_template_catalogue(void **state) {
  (void)state;
  poot_device *d = open_device();
  uint32_t failures = 0, skips = 0;
  char first[640] = "";
  for (size_t i = 0; i < tc_case_count; i++) {
    const tc_case *c = &tc_cases[i];
    if (g_case_filter && !strstr(c->name, g_case_filter)) continue;
    if (skipped(d, c->name)) {
      skips++;
      continue;
    }
    if (c->gpu_forms_only && d->caps.target.simd_cpu) {
      printf(
          "n/a  %s on %s: its form is for GPU targets; a simd_cpu device runs the other "
          "attention cases' form\n",
          c->name, d->caps.backend);
      continue;
    }
    case_report r;
    memset(&r, 0, sizeof r);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_case(d, c, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    char dispatches[64] = "";
    for (int p = 0; p < PROFILE_COUNT; p++) {
      size_t at = strlen(dispatches);
      if (p != PROFILE_NATIVE && c->native_only)
        snprintf(dispatches + at, sizeof dispatches - at, " (native only)");
      else if (r.same[p] == r.variants)
        snprintf(dispatches + at, sizeof dispatches - at, ", %s: same kernels", profile_names[p]);
      else
        snprintf(dispatches + at, sizeof dispatches - at, "%s%llu %s", p ? " + " : "",
                 (unsigned long long)r.dispatches[p], profile_names[p]);
    }
    skips += r.skipped;
    if (r.failed) {
      printf("FAIL %s: %s\n", c->name, r.why);
      if (!failures++) snprintf(first, sizeof first, "%s: %s", c->name, r.why);
    } else if (c->device_tol == 0 || r.allowed == 0) {
      printf("%-28s %u output(s), dispatches/step %s, %.2f s: bit-exact\n", c->name, r.variants,
             dispatches, r.seconds);
    } else {
      printf(
          "%-28s %u output(s), dispatches/step %s, %.2f s: max |err| %.3g, allowed %.3g there "
          "(%.2f of it; tol %.3g, max|oracle| %.3g)\n",
          c->name, r.variants, dispatches, r.seconds, r.err, r.allowed, r.worst, c->device_tol,
          r.max_ref);
    }
    fflush(stdout);
  }
  printf("catalogue on %s: %zu cases, %u failed, %u skipped\n", d->caps.backend, tc_case_count,
         failures, skips);
  close_device(d);
  if (failures)
    fail_msg("%u catalogue case(s) disagree with the oracle; first: %s", failures, first);
}

int main(int argc, char **argv) {
  if (argc > 1) g_spec = argv[1];
  if (argc > 2) g_case_filter = argv[2];
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
      cmocka_unit_test(test_elementwise),
      cmocka_unit_test(test_gemv),
      cmocka_unit_test(test_llama_decode),
      cmocka_unit_test(test_executor_arguments),
      cmocka_unit_test(test_unread_bindings),
      cmocka_unit_test(test_template_catalogue),
      cmocka_unit_test(test_device_loss_poisons),
      /* last: on a device with a real trap (PTX) the fault poisons the
       * process's context, and nothing can run on it afterwards */
      cmocka_unit_test(test_replay_eager_and_fault),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
