/* Hand-written cases for the graph passes: every rewrite, the rewrites that
 * must NOT happen (they would change bits), folding, CSE, DCE, the default
 * pipeline, argument errors and out-of-memory behaviour. Every output graph
 * is also verified, round-tripped through the text form and evaluated
 * against its input on random bindings (passes_gen.h). */
#include <math.h>
#include <stdlib.h>

#include "poot/compile_passes.h"
#include "poot/eval.h"
#include "poot_test.h"
#include "passes_gen.h"

typedef poot_status (*pass_fn)(const poot_graph *, const poot_pass_options *, poot_graph **,
                               uint32_t *);

static poot_status run_default(const poot_graph *g, const poot_pass_options *o, poot_graph **out,
                               uint32_t *changes) {
  poot_pass_report rep;
  poot_status st = poot_pass_run_default(g, o, out, &rep);
  *changes = rep.canonicalized + rep.folded + rep.merged + rep.removed;
  return st;
}

static poot_graph *parse(const char *text) {
  poot_graph *g = NULL;
  POOT_ASSERT_OK(poot_graph_parse(text, strlen(text), &g));
  return g;
}

/* Checks what every pass output must satisfy against its input. */
static void check_equivalent(const poot_graph *in, poot_graph *out) {
  POOT_ASSERT_OK(poot_graph_verify(out));
  char *m = pg_check_text(out);
  if (m) fail_msg("%s", m);
  for (uint64_t seed = 1; seed <= 12; seed++) {
    pg_inputs inputs;
    POOT_ASSERT_OK(pg_make_inputs(in, seed, &inputs));
    m = pg_compare(in, out, &inputs, NULL);
    pg_inputs_free(&inputs);
    if (m) fail_msg("seed %llu: %s", (unsigned long long)seed, m);
  }
}

/* Runs `fn` on the graph of `text`; checks equivalence; returns the output
 * (caller destroys) and the change count. */
static poot_graph *run_opt(pass_fn fn, const char *text, const poot_pass_options *opt,
                           uint32_t *out_changes) {
  poot_graph *in = parse(text);
  poot_graph *out = NULL;
  uint32_t changes = 0;
  POOT_ASSERT_OK(fn(in, opt, &out, &changes));
  check_equivalent(in, out);
  poot_graph_destroy(in);
  if (out_changes) *out_changes = changes;
  return out;
}

static poot_graph *run(pass_fn fn, const char *text, uint32_t *out_changes) {
  return run_opt(fn, text, NULL, out_changes);
}

static uint32_t count(const poot_graph *g, poot_op op) {
  return pg_count_op(g, op);
}

/* The node that defines the output. */
static const poot_node *out_node(const poot_graph *g) {
  return poot_graph_value_node(g, poot_graph_output(g), NULL);
}

/* Evaluates a graph with one f32 scalar/tensor input "p" (bits given). */
static poot_evaluation *eval_bits(const poot_graph *g, const char *name, poot_type type,
                                  const void *data, size_t size) {
  poot_tensor t = {type, (void *)data, size};
  poot_eval_input item = {name, &t};
  poot_eval_inputs inputs = {.count = 1, .items = &item};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &inputs, NULL, &ev));
  return ev;
}

static uint32_t f32_bits(const poot_tensor *t) {
  uint32_t b;
  memcpy(&b, t->data, 4);
  return b;
}

/* ------------------------------------------------------------ canonicalize */

static void test_int_commutative_ops_are_ordered_then_merged(void **state) {
  (void)state;
  const char *text =
      "pgraph 1\n"
      "%a = param 0 \"a\" : i32[3]\n"
      "%b = param 1 \"b\" : i32[3]\n"
      "%x = add %b, %a : i32[3]\n"
      "%y = add %a, %b : i32[3]\n"
      "%m = max %b, %a : i32[3]\n"
      "%n = max %a, %b : i32[3]\n"
      "%e = eq %b, %a : bool[3]\n"
      "%f = eq %a, %b : bool[3]\n"
      "%z = sub %x, %y : i32[3]\n"
      "%w = sub %m, %n : i32[3]\n"
      "%s = select %e, %z, %w : i32[3]\n"
      "%t = select %f, %w, %z : i32[3]\n"
      "%u = mul %s, %t : i32[3]\n"
      "output %u\n";
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize, text, &changes);
  assert_int_equal(changes, 3); /* one of each pair is reordered */
  poot_graph_destroy(g);
  g = run(run_default, text, &changes);
  assert_int_equal(count(g, POOT_OP_ADD), 1);
  assert_int_equal(count(g, POOT_OP_MAX), 1);
  assert_int_equal(count(g, POOT_OP_EQ), 1);
  poot_graph_destroy(g);
}

static void test_float_add_mul_max_keep_their_order(void **state) {
  (void)state;
  /* With two NaN operands, which payload comes out depends on the order. */
  const char *text =
      "pgraph 1\n"
      "%a = param 0 \"a\" : f32[3]\n"
      "%b = param 1 \"b\" : f32[3]\n"
      "%x = add %b, %a : f32[3]\n"
      "%y = add %a, %b : f32[3]\n"
      "%m = max %b, %a : f32[3]\n"
      "%n = max %a, %b : f32[3]\n"
      "%z = sub %x, %y : f32[3]\n"
      "%w = sub %m, %n : f32[3]\n"
      "%u = mul %z, %w : f32[3]\n"
      "output %u\n";
  uint32_t changes = 0;
  poot_graph *g = run(run_default, text, &changes);
  assert_int_equal(changes, 0);
  assert_int_equal(count(g, POOT_OP_ADD), 2);
  assert_int_equal(count(g, POOT_OP_MAX), 2);
  poot_graph_destroy(g);
  /* The oracle indeed tells the orders apart. */
  poot_graph *in = parse(
      "pgraph 1\n%a = param 0 \"a\" : f32[]\n%b = param 1 \"b\" : f32[]\n"
      "%x = add %a, %b : f32[]\n%y = add %b, %a : f32[]\n"
      "output %x\nenv \"y\" = %y\n");
  uint32_t qa = 0x7fc00001u, qb = 0x7fc00002u;
  poot_tensor ta = {{POOT_DTYPE_F32, {0, {0}}}, &qa, 4}, tb = {{POOT_DTYPE_F32, {0, {0}}}, &qb, 4};
  poot_eval_input items[2] = {{"a", &ta}, {"b", &tb}};
  poot_eval_inputs inputs = {.count = 2, .items = items};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(in, &inputs, NULL, &ev));
  assert_int_not_equal(f32_bits(&ev->output), f32_bits(&ev->env[0].tensor));
  poot_evaluation_destroy(ev);
  poot_graph_destroy(in);
}

static void test_gt_ge_become_lt_le(void **state) {
  (void)state;
  const char *text =
      "pgraph 1\n"
      "%a = param 0 \"a\" : f16[4]\n"
      "%b = param 1 \"b\" : f16[4]\n"
      "%x = gt %a, %b : bool[4]\n"
      "%y = lt %b, %a : bool[4]\n"
      "%p = ge %a, %b : bool[4]\n"
      "%q = le %b, %a : bool[4]\n"
      "%r = xor %x, %y : bool[4]\n"
      "%s = xor %p, %q : bool[4]\n"
      "%t = or %r, %s : bool[4]\n"
      "output %t\n";
  uint32_t changes = 0;
  poot_graph *g = run(run_default, text, &changes);
  assert_int_equal(count(g, POOT_OP_GT) + count(g, POOT_OP_GE), 0);
  /* x == y and p == q after CSE, so x ^ y is xor of a value with itself:
   * left alone (not a rewrite), but only one lt and one le remain. */
  assert_int_equal(count(g, POOT_OP_LT), 1);
  assert_int_equal(count(g, POOT_OP_LE), 1);
  poot_graph_destroy(g);
}

static void test_float_identities_need_quiet_operands(void **state) {
  (void)state;
  /* x * 1 on a parameter stays: a signalling NaN input comes out quieted. */
  const char *param_mul =
      "pgraph 1\n"
      "%p = param 0 \"p\" : f32[]\n"
      "%one = const [1] : f32[]\n"
      "%x = mul %p, %one : f32[]\n"
      "output %x\n";
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize, param_mul, &changes);
  assert_int_equal(changes, 0);
  assert_int_equal(count(g, POOT_OP_MUL), 1);
  uint32_t snan = 0x7f800001u;
  poot_type f32s = {POOT_DTYPE_F32, {0, {0}}};
  poot_evaluation *ev = eval_bits(g, "p", f32s, &snan, 4);
  assert_int_equal(f32_bits(&ev->output), 0x7fc00001u); /* the oracle quiets it */
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* On a computed value (never a signalling NaN) x*1, x/1, x+(-0), x-(+0)
   * and (-0)+x all go, on both sides and through broadcasts. */
  const char *computed =
      "pgraph 1\n"
      "%p = param 0 \"p\" : f32[2]\n"
      "%q = param 1 \"q\" : f32[2]\n"
      "%e = sub %p, %q : f32[2]\n"
      "%one = const [1] : f32[]\n"
      "%ones = broadcast %one {dims=[]} : f32[2]\n"
      "%nz = const [-0, -0] : f32[2]\n"
      "%pz = const [0] : f32[]\n"
      "%pzs = broadcast %pz {dims=[]} : f32[2]\n"
      "%a = mul %ones, %e : f32[2]\n"
      "%b = div %a, %ones : f32[2]\n"
      "%c = add %b, %nz : f32[2]\n"
      "%d = add %nz, %c : f32[2]\n"
      "%f = sub %d, %pzs : f32[2]\n"
      "output %f\n";
  g = run(poot_pass_canonicalize, computed, &changes);
  assert_int_equal(changes, 5);
  assert_int_equal(out_node(g)->op, POOT_OP_SUB); /* the output is e itself */
  assert_int_equal(count(g, POOT_OP_MUL) + count(g, POOT_OP_DIV) + count(g, POOT_OP_ADD), 0);
  poot_graph_destroy(g);
}

static void test_adding_positive_zero_is_not_an_identity(void **state) {
  (void)state;
  /* -0 + +0 = +0, so x + 0.0 must stay; so must x - (-0.0) and x * -1. */
  const char *text =
      "pgraph 1\n"
      "%p = param 0 \"p\" : f32[]\n"
      "%q = param 1 \"q\" : f32[]\n"
      "%e = sub %p, %q : f32[]\n"
      "%pz = const [0] : f32[]\n"
      "%nz = const [-0] : f32[]\n"
      "%a = add %e, %pz : f32[]\n"
      "%b = sub %a, %nz : f32[]\n"
      "output %b\n";
  uint32_t changes = 0;
  poot_graph *g = run(run_default, text, &changes);
  assert_int_equal(changes, 0);
  assert_int_equal(count(g, POOT_OP_ADD), 1);
  assert_int_equal(count(g, POOT_OP_SUB), 2);
  /* And the oracle says why: (-0 - +0) + 0 is +0. */
  float pv[2] = {-0.0f, 0.0f};
  poot_tensor tp = {{POOT_DTYPE_F32, {0, {0}}}, &pv[0], 4},
              tq = {{POOT_DTYPE_F32, {0, {0}}}, &pv[1], 4};
  poot_eval_input items[2] = {{"p", &tp}, {"q", &tq}};
  poot_eval_inputs inputs = {.count = 2, .items = items};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &inputs, NULL, &ev));
  assert_int_equal(f32_bits(&ev->output), 0x00000000u);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* Folding -0.0 + 0.0 gives +0.0 exactly. */
  g = run(run_default,
          "pgraph 1\n%a = const [-0] : f32[]\n%b = const [0] : f32[]\n%c = add %a, %b : f32[]\n"
          "output %c\n",
          &changes);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_CONST);
  assert_int_equal(f32_bits(out_node(g)->constant), 0x00000000u);
  poot_graph_destroy(g);
}

static void test_integer_identities(void **state) {
  (void)state;
  const char *text =
      "pgraph 1\n"
      "%x = param 0 \"x\" : i16[3]\n"
      "%z = const [0, 0, 0] : i16[3]\n"
      "%o1 = const [1] : i16[]\n"
      "%o = broadcast %o1 {dims=[]} : i16[3]\n"
      "%m = const [-1, -1, -1] : i16[3]\n"
      "%a = add %z, %x : i16[3]\n"
      "%b = sub %a, %z : i16[3]\n"
      "%c = mul %b, %o : i16[3]\n"
      "%d = div %c, %o : i16[3]\n"
      "%e = or %d, %z : i16[3]\n"
      "%f = xor %z, %e : i16[3]\n"
      "%g = and %m, %f : i16[3]\n"
      "%h = shl %g, %z : i16[3]\n"
      "%i = shr %h, %z : i16[3]\n"
      "%k = sub %z, %i : i16[3]\n" /* 0 - x: not an identity */
      "%l = div %o, %k : i16[3]\n" /* 1 / x: neither */
      "%n = shl %z, %l : i16[3]\n" /* 0 << x: neither */
      "output %n\n";
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize, text, &changes);
  assert_int_equal(changes, 9);
  assert_int_equal(count(g, POOT_OP_SUB), 1);
  assert_int_equal(count(g, POOT_OP_DIV), 1);
  assert_int_equal(count(g, POOT_OP_SHL), 1);
  assert_int_equal(count(g, POOT_OP_ADD) + count(g, POOT_OP_MUL) + count(g, POOT_OP_OR) +
                       count(g, POOT_OP_XOR) + count(g, POOT_OP_AND) + count(g, POOT_OP_SHR),
                   0);
  poot_graph_destroy(g);
  /* bool: x | false, x ^ false and x & true go too. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : bool[2]\n%f = const [false, false] : bool[2]\n"
          "%t = const [true, true] : bool[2]\n%a = or %x, %f : bool[2]\n%b = xor %f, %a : bool[2]\n"
          "%c = and %b, %t : bool[2]\noutput %c\n",
          &changes);
  assert_int_equal(changes, 3);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_PARAM);
  poot_graph_destroy(g);
}

static void test_double_negation_and_abs(void **state) {
  (void)state;
  uint32_t changes = 0;
  /* f32 and integers: neg(neg(x)) = x bit for bit (a sign flip). */
  poot_graph *g = run(poot_pass_canonicalize,
                      "pgraph 1\n%x = param 0 \"x\" : f32[3]\n%a = neg %x : f32[3]\n"
                      "%b = neg %a : f32[3]\noutput %b\n",
                      &changes);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_PARAM);
  poot_graph_destroy(g);
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : i8[3]\n%a = neg %x : i8[3]\n%b = neg %a : i8[3]\n"
          "%c = not %b : i8[3]\n%d = not %c : i8[3]\noutput %d\n",
          &changes);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_PARAM);
  poot_graph_destroy(g);
  /* f16 neg rounds through f32 and quiets a signalling NaN: stays on a
   * parameter, goes on a computed value. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : f16[3]\n%a = neg %x : f16[3]\n%b = neg %a : f16[3]\n"
          "%e = exp %x : f16[3]\n%f = neg %e : f16[3]\n%h = neg %f : f16[3]\n"
          "%s = add %b, %h : f16[3]\noutput %s\n",
          &changes);
  assert_int_equal(changes, 1);
  assert_int_equal(count(g, POOT_OP_NEG), 3); /* neg %e stays until DCE */
  poot_graph_destroy(g);
  /* abs(abs x) = abs x; abs(neg x) = abs x for signed types, not unsigned. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : i32[3]\n%a = neg %x : i32[3]\n%b = abs %a : i32[3]\n"
          "%c = abs %b : i32[3]\n%u = param 1 \"u\" : u8[3]\n%v = neg %u : u8[3]\n"
          "%w = abs %v : u8[3]\n%y = convert %w : i32[3]\n%z = sub %c, %y : i32[3]\noutput %z\n",
          &changes);
  assert_int_equal(changes, 2);
  assert_int_equal(count(g, POOT_OP_ABS), 2);
  assert_int_equal(count(g, POOT_OP_NEG), 2); /* the i32 one is now dead */
  poot_graph_destroy(g);
}

static void test_convert_round_trips(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize,
                      "pgraph 1\n"
                      "%a = param 0 \"a\" : i8[2]\n"
                      "%b = param 1 \"b\" : i32[2]\n"
                      "%c = param 2 \"c\" : bool[2]\n"
                      "%d = param 3 \"d\" : f16[2]\n"
                      "%a1 = convert %a : i32[2]\n%a2 = convert %a1 : i8[2]\n"   /* exact */
                      "%a3 = convert %a : bf16[2]\n%a4 = convert %a3 : i8[2]\n"  /* exact */
                      "%b1 = convert %b : f32[2]\n%b2 = convert %b1 : i32[2]\n"  /* not */
                      "%b3 = convert %b : i16[2]\n%b4 = convert %b3 : i32[2]\n"  /* not */
                      "%c1 = convert %c : f16[2]\n%c2 = convert %c1 : bool[2]\n" /* exact */
                      "%d1 = convert %d : f32[2]\n%d2 = convert %d1 : f16[2]\n"  /* sNaN */
                      "%d3 = convert %d : f16[2]\n"                              /* sNaN */
                      "%e = convert %b : i32[2]\n"                               /* exact */
                      "%x1 = convert %a2 : i32[2]\n%x2 = convert %a4 : i32[2]\n"
                      "%x3 = convert %c2 : i32[2]\n%x4 = convert %d2 : i32[2]\n"
                      "%x5 = convert %d3 : i32[2]\n"
                      "%s1 = sub %x1, %x2 : i32[2]\n%s2 = sub %s1, %x3 : i32[2]\n"
                      "%s3 = sub %s2, %x4 : i32[2]\n%s4 = sub %s3, %b2 : i32[2]\n"
                      "%s5 = sub %s4, %b4 : i32[2]\n%s6 = sub %s5, %e : i32[2]\n"
                      "%s7 = sub %s6, %x5 : i32[2]\noutput %s7\n",
                      &changes);
  assert_int_equal(changes, 4);
  poot_graph_destroy(g);
  /* The f16 → f32 → f16 trip goes when the value cannot be a signalling NaN. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%d = param 0 \"d\" : f16[2]\n%q = sqrt %d : f16[2]\n"
          "%d1 = convert %q : f32[2]\n%d2 = convert %d1 : f16[2]\n%d3 = convert %d2 : f16[2]\n"
          "output %d3\n",
          &changes);
  assert_int_equal(changes, 2);
  assert_int_equal(out_node(g)->op, POOT_OP_SQRT);
  poot_graph_destroy(g);
  /* bitcast round trips and chains */
  g = run(run_default,
          "pgraph 1\n%x = param 0 \"x\" : f32[2]\n%a = bitcast %x : i32[2]\n"
          "%b = bitcast %a : f32[2]\n%c = bitcast %b : u32[2]\n%d = bitcast %c : i32[2]\n"
          "%e = bitcast %d : i32[2]\noutput %e\n",
          &changes);
  assert_int_equal(count(g, POOT_OP_BITCAST), 1);
  assert_int_equal(out_node(g)->op, POOT_OP_BITCAST);
  poot_graph_destroy(g);
}

static void test_movement_chains_and_identities(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g = run(run_default,
                      "pgraph 1\n"
                      "%x = param 0 \"x\" : f32[2,3,4]\n"
                      "%r1 = reshape %x : f32[6,4]\n%r2 = reshape %r1 : f32[24]\n"
                      "%r3 = reshape %r2 : f32[24]\n"
                      "%t1 = transpose %x {dims=[1,2,0]} : f32[3,4,2]\n"
                      "%t2 = transpose %t1 {dims=[1,2,0]} : f32[4,2,3]\n"
                      "%t3 = transpose %t2 {dims=[1,2,0]} : f32[2,3,4]\n" /* identity */
                      "%t4 = transpose %t3 {dims=[0,1,2]} : f32[2,3,4]\n"
                      "%s = slice %t4 {start=[0,0,0], limit=[2,3,4], stride=[1,1,1]} : f32[2,3,4]\n"
                      "%c = concat %s {axis=1} : f32[2,3,4]\n"
                      "%z = const [0] : f32[]\n"
                      "%p = pad %c, %z {low=[0,0,0], high=[0,0,0], interior=[0,0,0]} : f32[2,3,4]\n"
                      "%i = const [0] : i32[]\n"
                      "%ds = dynamic_slice %p, %i, %i, %i : f32[2,3,4]\n"
                      "%rr = reshape %ds : f32[24]\n"
                      "%sum = add %r3, %rr : f32[24]\n"
                      "output %sum\n",
                      &changes);
  assert_int_equal(count(g, POOT_OP_RESHAPE), 1); /* r3 ≡ rr after the rest goes: CSE */
  assert_int_equal(count(g, POOT_OP_TRANSPOSE) + count(g, POOT_OP_SLICE) +
                       count(g, POOT_OP_CONCAT) + count(g, POOT_OP_PAD) +
                       count(g, POOT_OP_DYNAMIC_SLICE),
                   0);
  poot_graph_destroy(g);
  /* Two transposes compose into one. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : i32[2,3,4]\n"
          "%t1 = transpose %x {dims=[1,2,0]} : i32[3,4,2]\n"
          "%t2 = transpose %t1 {dims=[0,2,1]} : i32[3,2,4]\noutput %t2\n",
          &changes);
  assert_int_equal(changes, 1);
  assert_int_equal(out_node(g)->attrs.dims[0], 1);
  assert_int_equal(out_node(g)->attrs.dims[1], 0);
  assert_int_equal(out_node(g)->attrs.dims[2], 2);
  poot_graph_destroy(g);
  /* A checked full-size dynamic_slice stays: its start may trap. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : f32[3]\n%i = slot pos : i32[]\n"
          "%d = dynamic_slice %x, %i check slice_out_of_range : f32[3]\noutput %d\n",
          &changes);
  assert_int_equal(changes, 0);
  poot_graph_destroy(g);
  /* Broadcast of broadcast composes; an identity broadcast goes. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%x = param 0 \"x\" : bf16[3]\n"
          "%b1 = broadcast %x {dims=[1]} : bf16[2,3]\n"
          "%b2 = broadcast %b1 {dims=[0,2]} : bf16[2,4,3]\n"
          "%b3 = broadcast %b2 {dims=[0,1,2]} : bf16[2,4,3]\noutput %b3\n",
          &changes);
  assert_int_equal(changes, 2);
  assert_int_equal(out_node(g)->op, POOT_OP_BROADCAST);
  assert_int_equal(poot_graph_value_node(g, out_node(g)->operands[0], NULL)->storage,
                   POOT_STORAGE_PARAM);
  assert_int_equal(out_node(g)->attrs.dims[0], 2);
  poot_graph_destroy(g);
}

static void test_select_rewrites(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize,
                      "pgraph 1\n%p = param 0 \"p\" : bool[2]\n%x = param 1 \"x\" : f16[2]\n"
                      "%y = param 2 \"y\" : f16[2]\n%a = select %p, %x, %x : f16[2]\n"
                      "%t = const [true, true] : bool[2]\n%b = select %t, %a, %y : f16[2]\n"
                      "%f1 = const [false] : bool[]\n%f = broadcast %f1 {dims=[]} : bool[2]\n"
                      "%c = select %f, %y, %b : f16[2]\noutput %c\n",
                      &changes);
  assert_int_equal(changes, 3);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_PARAM);
  poot_graph_destroy(g);
}

static void test_elementwise_moves_before_identical_broadcasts(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g = run(poot_pass_canonicalize,
                      "pgraph 1\n%a = param 0 \"a\" : f32[3]\n%b = param 1 \"b\" : f32[3]\n"
                      "%ba = broadcast %a {dims=[1]} : f32[4,3]\n"
                      "%bb = broadcast %b {dims=[1]} : f32[4,3]\n"
                      "%s = mul %ba, %bb : f32[4,3]\n%e = exp %s : f32[4,3]\noutput %e\n",
                      &changes);
  assert_int_equal(changes, 2); /* mul, then exp, move before the broadcast */
  assert_int_equal(out_node(g)->op, POOT_OP_BROADCAST);
  const poot_node *e = poot_graph_value_node(g, out_node(g)->operands[0], NULL);
  assert_int_equal(e->op, POOT_OP_EXP);
  assert_int_equal(poot_graph_value_type(g, e->results[0])->shape.rank, 1);
  poot_graph_destroy(g);
  /* A broadcast scalar joins any broadcast: rms_norm's (Σx² / n + eps) is
   * computed per row, not per element. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%r = param 0 \"r\" : f32[2]\n%br = broadcast %r {dims=[0]} : f32[2,24]\n"
          "%n = const [24] : f32[]\n%bn = broadcast %n {dims=[]} : f32[2,24]\n"
          "%e = const [1e-05] : f32[]\n%be = broadcast %e {dims=[]} : f32[2,24]\n"
          "%d = div %br, %bn : f32[2,24]\n%a = add %d, %be : f32[2,24]\n"
          "%q = rsqrt %a : f32[2,24]\noutput %q\n",
          &changes);
  assert_int_equal(changes, 3);
  assert_int_equal(out_node(g)->op, POOT_OP_BROADCAST);
  e = poot_graph_value_node(g, out_node(g)->operands[0], NULL);
  assert_int_equal(e->op, POOT_OP_RSQRT);
  assert_int_equal(poot_graph_value_type(g, e->results[0])->shape.dims[0], 2);
  assert_int_equal(poot_graph_value_type(g, e->results[0])->shape.rank, 1);
  poot_graph_destroy(g);
  /* Different non-scalar broadcasts stay. */
  g = run(poot_pass_canonicalize,
          "pgraph 1\n%a = param 0 \"a\" : f32[2]\n%b = param 1 \"b\" : f32[3]\n"
          "%ba = broadcast %a {dims=[0]} : f32[2,3]\n%bb = broadcast %b {dims=[1]} : f32[2,3]\n"
          "%s = sub %ba, %bb : f32[2,3]\noutput %s\n",
          &changes);
  assert_int_equal(changes, 0);
  poot_graph_destroy(g);
  /* With constants, the whole computation then folds to one scalar. */
  g = run(run_default,
          "pgraph 1\n%a = const [1.5] : f32[]\n%b = const [2] : f32[]\n"
          "%ba = broadcast %a {dims=[]} : f32[64,64]\n%bb = broadcast %b {dims=[]} : f32[64,64]\n"
          "%s = add %ba, %bb : f32[64,64]\noutput %s\n",
          &changes);
  assert_int_equal(count(g, POOT_OP_ADD), 0);
  assert_int_equal(out_node(g)->op, POOT_OP_BROADCAST);
  const poot_node *c = poot_graph_value_node(g, out_node(g)->operands[0], NULL);
  assert_int_equal(c->storage, POOT_STORAGE_CONST);
  assert_int_equal(f32_bits(c->constant), 0x40600000u); /* 3.5 */
  poot_graph_destroy(g);
}

/* ---------------------------------------------------------- constant fold */

static void test_fold_is_the_oracle(void **state) {
  (void)state;
  uint32_t changes = 0;
  /* f16 arithmetic rounds through f32 then to nearest even. */
  const char *text =
      "pgraph 1\n"
      "%a = const [1, 2048, -0, nan(0x7e01)] : f16[4]\n"
      "%b = const [0.0004883, 1, -0, 1] : f16[4]\n"
      "%c = add %a, %b : f16[4]\n"
      "%d = convert %c : f32[4]\n"
      "%k = const [1, 2] : u32[2]\n%n = const [3, 4] : u32[2]\n"
      "%r = rng %k, %n {dist=uniform} : bf16[3]\n"
      "%v, %i = top_k %d {k=2} : f32[2], i32[2]\n"
      "output %d\nenv \"r\" = %r\nenv \"v\" = %v\nenv \"i\" = %i\n";
  poot_graph *g = run(poot_pass_constant_fold, text, &changes);
  assert_int_equal(changes, 4);
  assert_int_equal(count(g, POOT_OP_ADD) + count(g, POOT_OP_CONVERT) + count(g, POOT_OP_RNG) +
                       count(g, POOT_OP_TOP_K),
                   0);
  const poot_node *o = out_node(g);
  assert_int_equal(o->storage, POOT_STORAGE_CONST);
  const uint32_t *bits = o->constant->data;
  assert_int_equal(bits[0], 0x3f800000u);               /* 1 + 2^-11 rounds to 1 (even) */
  assert_int_equal(bits[1], 0x45000000u);               /* 2048 + 1 rounds to 2048 */
  assert_int_equal(bits[2], 0x80000000u);               /* -0 + -0 = -0 */
  assert_int_equal(bits[3] & 0xffffe000u, 0x7fc02000u); /* the NaN payload survives */
  poot_graph_destroy(g);
}

static void test_fold_limits_and_generators(void **state) {
  (void)state;
  uint32_t changes = 0;
  const char *text =
      "pgraph 1\n"
      "%a = iota {axis=0} : f32[64]\n"
      "%b = exp %a : f32[64]\n"
      "%s = const [2] : f32[]\n"
      "%c = broadcast %s {dims=[]} : f32[64]\n"
      "%d = mul %b, %c : f32[64]\n"
      "output %d\n";
  /* By default iota and broadcast are not folded themselves, but ops on
   * them are: exp(iota) and its product with the broadcast fold. */
  poot_graph *g = run(poot_pass_constant_fold, text, &changes);
  assert_int_equal(changes, 2);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_CONST);
  assert_int_equal(count(g, POOT_OP_IOTA), 1);
  assert_int_equal(count(g, POOT_OP_BROADCAST), 1);
  poot_graph_destroy(g);
  g = run(poot_pass_constant_fold,
          "pgraph 1\n%a = iota {axis=0} : i32[8]\n%s = const [2] : i32[]\n"
          "%c = broadcast %s {dims=[]} : i32[8]\n%p = param 0 \"p\" : i32[8]\n"
          "%d = add %p, %a : i32[8]\n%e = mul %d, %c : i32[8]\noutput %e\n",
          &changes);
  assert_int_equal(changes, 0); /* generators feeding ops on inputs stay */
  poot_graph_destroy(g);
  poot_pass_options opt;
  poot_pass_options_init(&opt);
  opt.fold_generators = true;
  g = run_opt(poot_pass_constant_fold, text, &opt, &changes);
  assert_int_equal(changes, 4);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_CONST);
  poot_graph_destroy(g);
  opt.fold_max_bytes = 255; /* 64 f32 are 256 bytes */
  g = run_opt(poot_pass_constant_fold, text, &opt, &changes);
  assert_int_equal(changes, 0);
  poot_graph_destroy(g);
  opt.fold_max_bytes = 256;
  g = run_opt(poot_pass_constant_fold, text, &opt, &changes);
  assert_int_equal(changes, 4);
  poot_graph_destroy(g);
}

static void test_fold_keeps_failing_checks(void **state) {
  (void)state;
  uint32_t changes = 0;
  const char *bad =
      "pgraph 1\n"
      "%t = const [1, 2, 3] : f32[3]\n"
      "%i = const [1, 3] : i32[2]\n"
      "%g = gather %t, %i {axis=0, batch_dims=0} check token_out_of_range : f32[2]\n"
      "output %g\n";
  poot_graph *g = run(run_default, bad, &changes);
  assert_int_equal(count(g, POOT_OP_GATHER), 1);
  poot_eval_fault fault;
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.out_fault = &fault;
  poot_evaluation *ev = NULL;
  POOT_ASSERT_STATUS(poot_eval(g, NULL, &opt, &ev), POOT_KERNEL_FAULT);
  assert_int_equal(fault.trap, POOT_TRAP_TOKEN_OUT_OF_RANGE);
  assert_int_equal(fault.index, 3);
  poot_graph_destroy(g);
  /* In range, it folds. */
  g = run(run_default,
          "pgraph 1\n%t = const [1, 2, 3] : f32[3]\n%i = const [1, 2] : i32[2]\n"
          "%g = gather %t, %i {axis=0, batch_dims=0} check token_out_of_range : f32[2]\n"
          "output %g\n",
          &changes);
  assert_int_equal(count(g, POOT_OP_GATHER), 0);
  assert_int_equal(out_node(g)->storage, POOT_STORAGE_CONST);
  poot_graph_destroy(g);
}

static void test_fold_composites(void **state) {
  (void)state;
  poot_graph *in = NULL;
  POOT_ASSERT_OK(poot_graph_create(&in));
  float xs[6] = {1, 2, 3, -1, 0, 1e30f};
  poot_tensor t = {{POOT_DTYPE_F32, poot_shape_of(2, 2, 3)}, xs, sizeof xs};
  poot_value x = POOT_VALUE_NONE, y = POOT_VALUE_NONE, z = POOT_VALUE_NONE;
  POOT_ASSERT_OK(poot_graph_add_const(in, &t, &x));
  POOT_ASSERT_OK(poot_graph_softmax(in, x, 1, &y));
  POOT_ASSERT_OK(poot_graph_rms_norm(in, y, POOT_VALUE_NONE, 1e-5, &z));
  POOT_ASSERT_OK(poot_graph_set_output(in, z));
  POOT_ASSERT_OK(poot_graph_verify(in));
  poot_graph *out = NULL;
  uint32_t changes = 0;
  POOT_ASSERT_OK(poot_pass_constant_fold(in, NULL, &out, &changes));
  assert_int_equal(changes, 2);
  assert_int_equal(count(out, POOT_OP_COMPOSITE), 0);
  check_equivalent(in, out);
  poot_graph_destroy(out);
  poot_graph_destroy(in);
}

/* -------------------------------------------------------------------- cse */

static void test_cse_merges_equal_nodes_only(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g =
      run(poot_pass_cse,
          "pgraph 1\n"
          "%x = param 0 \"x\" : f32[2]\n"
          "%c1 = const [1, -0] : f32[2]\n%c2 = const [1, -0] : f32[2]\n"
          "%c3 = const [1, 0] : f32[2]\n" /* +0: differs */
          "%c4 = const [nan(0x7fc00001), 1] : f32[2]\n"
          "%c5 = const [nan(0x7fc00002), 1] : f32[2]\n" /* payload differs */
          "%a1 = add %x, %c1 : f32[2]\n%a2 = add %x, %c2 : f32[2]\n"
          "%a3 = add %x, %c3 : f32[2]\n%a4 = add %x, %c4 : f32[2]\n"
          "%a5 = add %x, %c5 : f32[2]\n"
          "%k = const [7, 8] : u32[2]\n"
          "%r1 = rng %k, %k {dist=bits} : u32[2]\n%r2 = rng %k, %k {dist=bits} : u32[2]\n"
          "%s1 = slice %x {start=[0], limit=[2], stride=[2]} : f32[1]\n"
          "%s2 = slice %x {start=[0], limit=[1], stride=[1]} : f32[1]\n" /* differ */
          "%m = mul %a1, %a2 : f32[2]\n%n = mul %a3, %a4 : f32[2]\n%o = mul %m, %n : f32[2]\n"
          "%p = mul %o, %a5 : f32[2]\n"
          "output %p\nenv \"r1\" = %r1\nenv \"r2\" = %r2\nenv \"s1\" = %s1\n"
          "env \"s2\" = %s2\n",
          &changes);
  assert_int_equal(changes, 3); /* c2, a2, r2 */
  assert_int_equal(count(g, POOT_OP_ADD), 4);
  assert_int_equal(count(g, POOT_OP_RNG), 1);
  assert_int_equal(count(g, POOT_OP_SLICE), 2);
  poot_graph_destroy(g);
}

static void test_cse_never_merges_interface_leaves(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g = run(run_default,
                      "pgraph 1\n%s = state \"s\" : f32[2]\n%t = state \"t\" : f32[2]\n"
                      "%p = param 0 \"p\" : f32[2]\n%q = param 1 \"q\" : f32[2]\n"
                      "%a = add %s, %p : f32[2]\n%b = add %t, %q : f32[2]\n"
                      "output %a\nupdate %s = %b\nupdate %t = %a\n",
                      &changes);
  assert_int_equal(changes, 0);
  assert_int_equal(poot_graph_state_count(g), 2);
  poot_graph_destroy(g);
}

static void test_cse_composites_by_body(void **state) {
  (void)state;
  poot_graph *in = NULL;
  POOT_ASSERT_OK(poot_graph_create(&in));
  poot_type t = {POOT_DTYPE_F32, poot_shape_of(2, 2, 3)};
  poot_value x, a, b, c, s1, s2;
  POOT_ASSERT_OK(poot_graph_add_param(in, "x", &t, &x));
  POOT_ASSERT_OK(poot_graph_softmax(in, x, 1, &a));
  POOT_ASSERT_OK(poot_graph_softmax(in, x, 1, &b)); /* identical: merged */
  POOT_ASSERT_OK(poot_graph_softmax(in, x, 0, &c)); /* another axis: kept */
  POOT_ASSERT_OK(poot_graph_binary(in, POOT_OP_ADD, a, b, &s1));
  POOT_ASSERT_OK(poot_graph_binary(in, POOT_OP_ADD, s1, c, &s2));
  POOT_ASSERT_OK(poot_graph_set_output(in, s2));
  POOT_ASSERT_OK(poot_graph_verify(in));
  poot_graph *out = NULL;
  uint32_t changes = 0;
  POOT_ASSERT_OK(poot_pass_cse(in, NULL, &out, &changes));
  assert_true(changes >= 1);
  check_equivalent(in, out);
  assert_int_equal(count(in, POOT_OP_COMPOSITE), 3);
  poot_graph *out2 = NULL;
  POOT_ASSERT_OK(poot_pass_dce(out, NULL, &out2, &changes));
  assert_int_equal(count(out2, POOT_OP_COMPOSITE), 2);
  /* Constants in a body and at the root are never merged across regions. */
  assert_true(count(out2, POOT_OP_REDUCE) == 4);
  poot_graph_destroy(out2);
  poot_graph_destroy(out);
  poot_graph_destroy(in);
}

/* -------------------------------------------------------------------- dce */

static void test_dce(void **state) {
  (void)state;
  uint32_t changes = 0;
  poot_graph *g =
      run(poot_pass_dce,
          "pgraph 1\n"
          "%p = param 0 \"p\" : f32[3]\n"
          "%unused = param 1 \"unused\" : f32[3]\n"
          "%s = state \"s\" : i32[3]\n"
          "%pos = slot pos : i32[]\n"
          "%w = weight output : f32[3]\n"
          "%c = const [1, 2, 3] : f32[3]\n" /* unused: dropped */
          "%d = exp %p : f32[3]\n"          /* dead: dropped */
          "%i = const [5] : i32[1]\n"
          "%g = gather %p, %i {axis=0, batch_dims=0} check index_out_of_range : f32[1]\n"
          "%k = composite \"test.dead\" (%p) : f32[3] {\n"
          "  %kp = param 0 : f32[3]\n  %kn = neg %kp : f32[3]\n  return %kn\n}\n"
          "%m, %n = composite \"test.half\" (%p) : f32[3], f32[3] {\n"
          "  %mp = param 0 : f32[3]\n  %ma = abs %mp : f32[3]\n"
          "  %mb = sqrt %mp : f32[3]\n  %mc = exp %mp : f32[3]\n  return %ma, %mb\n}\n"
          "%h = composite \"test.check\" (%p) : f32[1] {\n"
          "  %hp = param 0 : f32[3]\n  %hi = const [0] : i32[1]\n"
          "  %hg = gather %hp, %hi {axis=0, batch_dims=0} check index_out_of_range : f32[1]\n"
          "  return %hg\n}\n"
          "output %m\n",
          &changes);
  /* dropped: c, d, composite k, exp inside test.half */
  assert_int_equal(changes, 4);
  assert_int_equal(count(g, POOT_OP_EXP), 0);
  assert_int_equal(count(g, POOT_OP_NEG), 0);
  assert_int_equal(count(g, POOT_OP_GATHER), 2);    /* checks are observable */
  assert_int_equal(count(g, POOT_OP_COMPOSITE), 2); /* test.half and test.check */
  assert_int_equal(count(g, POOT_OP_SQRT), 1);      /* an unused composite result stays */
  assert_int_equal(poot_graph_state_count(g), 1);
  assert_int_equal(poot_graph_root(g)->num_params, 2); /* the interface stays */
  uint32_t leaves = 0;
  const poot_region *root = poot_graph_root(g);
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    leaves += n->op == POOT_OP_LEAF && n->storage != POOT_STORAGE_CONST;
  }
  assert_int_equal(leaves, 5);
  poot_graph_destroy(g);
}

/* --------------------------------------------------------------- pipeline */

static void test_default_pipeline_on_the_attention_step(void **state) {
  (void)state;
  const char *src = poot_test_source_dir();
  if (!src) skip();
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/unit/graph/data/attention_step.pgraph", src);
  poot_graph *in = NULL;
  POOT_ASSERT_OK(poot_graph_load(path, &in));
  poot_graph *out = NULL;
  poot_pass_report rep;
  POOT_ASSERT_OK(poot_pass_run_default(in, NULL, &out, &rep));
  check_equivalent(in, out);
  assert_true(rep.rounds >= 1 && rep.rounds <= 8);
  /* A fixed point: running again changes nothing. */
  poot_graph *again = NULL;
  poot_pass_report rep2;
  POOT_ASSERT_OK(poot_pass_run_default(out, NULL, &again, &rep2));
  assert_int_equal(rep2.canonicalized + rep2.folded + rep2.merged + rep2.removed, 0);
  assert_int_equal(rep2.rounds, 1);
  char *t1 = NULL, *t2 = NULL;
  POOT_ASSERT_OK(poot_graph_to_text(out, &t1));
  POOT_ASSERT_OK(poot_graph_to_text(again, &t2));
  assert_string_equal(t1, t2);
  poot_free(t1);
  poot_free(t2);
  poot_graph_destroy(again);
  poot_graph_destroy(out);
  poot_graph_destroy(in);
}

static void test_null_arguments(void **state) {
  (void)state;
  pass_fn fns[4] = {poot_pass_canonicalize, poot_pass_constant_fold, poot_pass_cse, poot_pass_dce};
  poot_graph *g = parse("pgraph 1\n%x = param 0 \"x\" : f32[]\noutput %x\n");
  for (int i = 0; i < 4; i++) {
    poot_graph *out = (poot_graph *)1;
    uint32_t c = 7;
    POOT_ASSERT_STATUS(fns[i](NULL, NULL, &out, &c), POOT_INVALID_ARGUMENT);
    assert_null(out);
    assert_int_equal(c, 0);
    POOT_ASSERT_STATUS(fns[i](g, NULL, NULL, NULL), POOT_INVALID_ARGUMENT);
  }
  poot_graph *out = (poot_graph *)1;
  POOT_ASSERT_STATUS(poot_pass_run_default(NULL, NULL, &out, NULL), POOT_INVALID_ARGUMENT);
  assert_null(out);
  poot_graph_destroy(g);
}

typedef struct passes_ctx {
  poot_graph *in, *out;
} passes_ctx;

static poot_status try_passes(void *ctx) {
  passes_ctx *p = ctx;
  p->out = NULL;
  poot_status st = poot_pass_run_default(p->in, NULL, &p->out, NULL);
  if (st) assert_null(p->out);
  return st;
}

/* With failure injection off: the optimized graph computes what the input
 * does. */
static void after_passes(void *ctx, poot_status_code code) {
  passes_ctx *p = ctx;
  if (code == POOT_OK) check_equivalent(p->in, p->out);
  poot_graph_destroy(p->out);
  p->out = NULL;
}

static void test_out_of_memory(void **state) {
  (void)state;
  /* Every allocation failing in turn gives OUT_OF_MEMORY (never a crash or
   * a leak), until the pipeline has enough memory and succeeds. */
  const char *text =
      "pgraph 1\n"
      "%x = param 0 \"x\" : f32[2]\n"
      "%c = const [1] : f32[]\n%b = broadcast %c {dims=[]} : f32[2]\n"
      "%a = add %b, %b : f32[2]\n%m = mul %x, %a : f32[2]\n%n = mul %x, %a : f32[2]\n"
      "%k = composite \"test.k\" (%m, %n) : f32[2] {\n"
      "  %p = param 0 : f32[2]\n  %q = param 1 : f32[2]\n  %r = sub %p, %q : f32[2]\n"
      "  return %r\n}\n"
      "%d = exp %x : f32[2]\noutput %k\n";
  poot_graph *g = parse(text);
  passes_ctx p = {g, NULL};
  assert_true(poot_test_oom_sweep_after("default passes", try_passes, after_passes, &p, 100000) > 0);
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_commutative_ops_are_ordered_then_merged),
      cmocka_unit_test(test_float_add_mul_max_keep_their_order),
      cmocka_unit_test(test_gt_ge_become_lt_le),
      cmocka_unit_test(test_float_identities_need_quiet_operands),
      cmocka_unit_test(test_adding_positive_zero_is_not_an_identity),
      cmocka_unit_test(test_integer_identities),
      cmocka_unit_test(test_double_negation_and_abs),
      cmocka_unit_test(test_convert_round_trips),
      cmocka_unit_test(test_movement_chains_and_identities),
      cmocka_unit_test(test_select_rewrites),
      cmocka_unit_test(test_elementwise_moves_before_identical_broadcasts),
      cmocka_unit_test(test_fold_is_the_oracle),
      cmocka_unit_test(test_fold_limits_and_generators),
      cmocka_unit_test(test_fold_keeps_failing_checks),
      cmocka_unit_test(test_fold_composites),
      cmocka_unit_test(test_cse_merges_equal_nodes_only),
      cmocka_unit_test(test_cse_never_merges_interface_leaves),
      cmocka_unit_test(test_cse_composites_by_body),
      cmocka_unit_test(test_dce),
      cmocka_unit_test(test_default_pipeline_on_the_attention_step),
      cmocka_unit_test(test_null_arguments),
      cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
