/* poot_eval: composites, evaluated through their decomposition bodies, against
 * naive double-precision references (relative tolerance 1e-5: every body is a
 * short chain of correctly rounded f32 ops and one libm call per element,
 * far below that bound), plus generic and nested composites and a fault
 * raised inside a body. */
#include "eval_test_util.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* |got - want| <= rel * max(|want|, floor). */
static void assert_close(const float *got, const double *want, size_t n, double rel, double floor) {
  for (size_t i = 0; i < n; i++) {
    const double tol = rel * (fabs(want[i]) > floor ? fabs(want[i]) : floor);
    if (!(fabs((double)got[i] - want[i]) <= tol))
      fail_msg("element %zu: got %.9g, want %.9g", i, (double)got[i], want[i]);
  }
}

static void assert_rel(const float *got, const double *want, size_t n, double rel) {
  assert_close(got, want, n, rel, 1e-3);
}

static void test_norms(void **state) {
  (void)state;
  const float x[] = {1, 2, 3, 4, -0.5f, 0.25f, 8, -3};
  const float w[] = {1, 0.5f, -2, 1.5f}, b[] = {0.1f, 0.2f, 0.3f, 0.4f};
  poot_graph *g = tg_new();
  poot_value vx = tg_const(g, POOT_DTYPE_F32, 2, DIMS(2, 4), x);
  poot_value vw = tg_f32(g, 4, w), vb = tg_f32(g, 4, b), rms, rms_nw, ln;
  POOT_ASSERT_OK(poot_graph_rms_norm(g, vx, vw, 1e-5, &rms));
  POOT_ASSERT_OK(poot_graph_rms_norm(g, vx, POOT_VALUE_NONE, 0.0, &rms_nw));
  POOT_ASSERT_OK(poot_graph_layer_norm(g, vx, vw, vb, 1e-5, &ln));
  POOT_ASSERT_OK(poot_graph_add_env(g, "rms_nw", rms_nw));
  POOT_ASSERT_OK(poot_graph_add_env(g, "ln", ln));
  poot_evaluation *ev = tg_run(g, rms);
  double want[8], want_nw[8], want_ln[8];
  for (int r = 0; r < 2; r++) {
    double ss = 0, mean = 0, var = 0;
    for (int j = 0; j < 4; j++) ss += (double)x[4 * r + j] * x[4 * r + j], mean += x[4 * r + j];
    mean /= 4;
    for (int j = 0; j < 4; j++) var += (x[4 * r + j] - mean) * (x[4 * r + j] - mean);
    var /= 4;
    for (int j = 0; j < 4; j++) {
      want[4 * r + j] = x[4 * r + j] / sqrt(ss / 4 + 1e-5) * w[j];
      want_nw[4 * r + j] = x[4 * r + j] / sqrt(ss / 4);
      want_ln[4 * r + j] = (x[4 * r + j] - mean) / sqrt(var + 1e-5) * w[j] + b[j];
    }
  }
  assert_rel(ev->output.data, want, 8, 1e-5);
  assert_rel(poot_evaluation_env(ev, "rms_nw")->data, want_nw, 8, 1e-5);
  assert_rel(poot_evaluation_env(ev, "ln")->data, want_ln, 8, 1e-5);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  /* f16 input: statistics in f32, the result rounded to f16. */
  g = tg_new();
  uint16_t h[8];
  for (int i = 0; i < 8; i++) h[i] = poot_f32_to_f16(x[i]);
  vx = tg_const(g, POOT_DTYPE_F16, 2, DIMS(2, 4), h);
  POOT_ASSERT_OK(poot_graph_rms_norm(g, vx, POOT_VALUE_NONE, 0.0, &rms));
  ev = tg_run(g, rms);
  assert_int_equal(ev->output.type.dtype, POOT_DTYPE_F16);
  const uint16_t *rh = ev->output.data;
  for (int i = 0; i < 8; i++) {
    float got = poot_f16_to_f32(rh[i]);
    assert_true(fabs(got - want_nw[i]) <= fabs(want_nw[i]) * 1e-3 + 1e-4);
  }
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_softmax_and_activations(void **state) {
  (void)state;
  const float x[] = {1, 2, 3, -INFINITY, 0, -INFINITY, 1000, 1000, -5};
  poot_graph *g = tg_new();
  poot_value vx = tg_const(g, POOT_DTYPE_F32, 2, DIMS(3, 3), x), sm, sm0;
  POOT_ASSERT_OK(poot_graph_softmax(g, vx, 1, &sm));
  POOT_ASSERT_OK(poot_graph_softmax(g, vx, 0, &sm0));
  POOT_ASSERT_OK(poot_graph_add_env(g, "sm0", sm0));
  poot_evaluation *ev = tg_run(g, sm);
  double e1 = exp(-2.0), e2 = exp(-1.0), s = e1 + e2 + 1;
  const double want[] = {e1 / s, e2 / s, 1 / s, 0, 1, 0, 0.5, 0.5, 0};
  assert_rel(ev->output.data, want, 9, 1e-5);
  const float *s0 = poot_evaluation_env(ev, "sm0")->data;
  /* column 0: {1, -inf, 1000} → {0, 0, 1} */
  assert_true(s0[0] < 1e-30f && s0[3] == 0.0f && s0[6] == 1.0f);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);

  const float a[] = {-3, -0.5f, 0, 0.5f, 2, 10};
  const float up[] = {1, 2, 3, 4, 5, 6};
  g = tg_new();
  poot_value va = tg_f32(g, 6, a), vu = tg_f32(g, 6, up), si, ge, gt, sw, gg;
  POOT_ASSERT_OK(poot_graph_silu(g, va, &si));
  POOT_ASSERT_OK(poot_graph_gelu(g, va, false, &ge));
  POOT_ASSERT_OK(poot_graph_gelu(g, va, true, &gt));
  POOT_ASSERT_OK(poot_graph_swiglu(g, va, vu, &sw));
  POOT_ASSERT_OK(poot_graph_geglu(g, va, vu, &gg));
  POOT_ASSERT_OK(poot_graph_add_env(g, "gelu", ge));
  POOT_ASSERT_OK(poot_graph_add_env(g, "gelu_tanh", gt));
  POOT_ASSERT_OK(poot_graph_add_env(g, "swiglu", sw));
  POOT_ASSERT_OK(poot_graph_add_env(g, "geglu", gg));
  ev = tg_run(g, si);
  double w_si[6], w_ge[6], w_gt[6], w_sw[6], w_gg[6];
  for (int i = 0; i < 6; i++) {
    const double v = a[i];
    w_si[i] = v / (1 + exp(-v));
    w_ge[i] = 0.5 * v * (1 + erf(v / sqrt(2.0)));
    w_gt[i] = 0.5 * v * (1 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    w_sw[i] = w_si[i] * up[i];
    w_gg[i] = w_gt[i] * up[i];
  }
  assert_rel(ev->output.data, w_si, 6, 1e-5);
  /* gelu cancels at negative x (1 + erf(x/√2) → 0): one ULP of erf's
   * result near -1 is an absolute error of about 6e-8 × |x|, so below
   * |gelu| = 1 the bound is absolute. */
  assert_close(poot_evaluation_env(ev, "gelu")->data, w_ge, 6, 1e-5, 1.0);
  assert_close(poot_evaluation_env(ev, "gelu_tanh")->data, w_gt, 6, 1e-5, 1.0);
  assert_rel(poot_evaluation_env(ev, "swiglu")->data, w_sw, 6, 1e-5);
  assert_close(poot_evaluation_env(ev, "geglu")->data, w_gg, 6, 1e-5, 1.0);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

static void test_rope(void **state) {
  (void)state;
  /* x [T=2, H=1, D=6], rotating the first 4 features, positions 0 and 3. */
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(i + 1) * 0.25f;
  const int32_t pos[] = {0, 3};
  for (int mode = 0; mode <= 2; mode += 2) {
    poot_graph *g = tg_new();
    poot_value vx = tg_const(g, POOT_DTYPE_F32, 3, DIMS(2, 1, 6), x), vp = tg_i32(g, 2, pos), r;
    POOT_ASSERT_OK(poot_graph_rope(g, vx, vp, 10000.0, 4, (poot_rope_mode)mode, &r));
    poot_evaluation *ev = tg_run(g, r);
    double want[12];
    for (int t = 0; t < 2; t++) {
      const float *xr = x + 6 * t;
      double *wr = want + 6 * t;
      for (int j = 0; j < 6; j++) wr[j] = xr[j];
      for (int i = 0; i < 2; i++) {
        const double ang = pos[t] * pow(10000.0, -2.0 * i / 4);
        const int a = mode == 0 ? 2 * i : i, b = mode == 0 ? 2 * i + 1 : i + 2;
        wr[a] = xr[a] * cos(ang) - xr[b] * sin(ang);
        wr[b] = xr[a] * sin(ang) + xr[b] * cos(ang);
      }
    }
    assert_rel(ev->output.data, want, 12, 1e-5);
    poot_evaluation_destroy(ev);
    poot_graph_destroy(g);
  }
}

static void test_attention(void **state) {
  (void)state;
  /* q [T=2, Hq=2, D=2], k/v [C=3, Hkv=1, D=2], causal-style mask. */
  const float q[] = {1, 0, 0, 1, 0.5f, 0.5f, -1, 2};
  const float k[] = {1, 2, 3, 4, 5, 6};
  const float v[] = {1, -1, 2, -2, 30, 40};
  const uint8_t mask[] = {1, 1, 0, 1, 1, 1};
  poot_graph *g = tg_new();
  poot_value vq = tg_const(g, POOT_DTYPE_F32, 3, DIMS(2, 2, 2), q);
  poot_value vk = tg_const(g, POOT_DTYPE_F32, 3, DIMS(3, 1, 2), k);
  poot_value vv = tg_const(g, POOT_DTYPE_F32, 3, DIMS(3, 1, 2), v);
  poot_value vm = tg_const(g, POOT_DTYPE_BOOL, 2, DIMS(2, 3), mask), r;
  POOT_ASSERT_OK(poot_graph_attention(g, vq, vk, vv, vm, 0.5, &r));
  poot_evaluation *ev = tg_run(g, r);
  double want[8];
  for (int t = 0; t < 2; t++) {
    for (int h = 0; h < 2; h++) {
      double sc[3], mx = -INFINITY, sum = 0;
      for (int c = 0; c < 3; c++) {
        sc[c] = mask[3 * t + c] ? 0.5 * (q[4 * t + 2 * h] * k[2 * c] + q[4 * t + 2 * h + 1] * k[2 * c + 1])
                                : -INFINITY;
        if (sc[c] > mx) mx = sc[c];
      }
      for (int c = 0; c < 3; c++) sum += exp(sc[c] - mx);
      for (int d = 0; d < 2; d++) {
        double o = 0;
        for (int c = 0; c < 3; c++) o += exp(sc[c] - mx) / sum * v[2 * c + d];
        want[4 * t + 2 * h + d] = o;
      }
    }
  }
  assert_int_equal(ev->output.type.shape.rank, 3);
  assert_rel(ev->output.data, want, 8, 1e-5);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

/* A masked attention decode step over fixed-capacity K/V states: write the
 * new row at `pos` (dynamic_update_slice with a check), build the mask as
 * iota <= pos, attend over [cap]. Two steps; the second sees both rows. */
static void test_decode_step(void **state) {
  (void)state;
  enum { CAP = 4, D = 2 };
  poot_graph *g = tg_new();
  poot_type kv_t = poot_type_make(POOT_DTYPE_F32, 3, DIMS(CAP, 1, D));
  poot_type row_t = poot_type_make(POOT_DTYPE_F32, 3, DIMS(1, 1, D));
  poot_type pos_t = poot_type_make(POOT_DTYPE_I32, 1, DIMS(1));
  poot_value kc, vc, q, k, v, pos, zero, p0, kn, vn, io, pb, mask, att;
  POOT_ASSERT_OK(poot_graph_add_state(g, "k", &kv_t, &kc));
  POOT_ASSERT_OK(poot_graph_add_state(g, "v", &kv_t, &vc));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "q", &row_t, &q));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "knew", &row_t, &k));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_NAMED, "vnew", &row_t, &v));
  POOT_ASSERT_OK(poot_graph_add_slot(g, POOT_SLOT_POS, NULL, &pos_t, &pos));
  POOT_ASSERT_OK(poot_graph_const_int(g, POOT_DTYPE_I32, 0, &zero));
  poot_shape scalar = {0};
  POOT_ASSERT_OK(poot_graph_reshape(g, pos, &scalar, &p0));
  poot_value starts[3] = {p0, zero, zero};
  POOT_ASSERT_OK(poot_graph_dynamic_update_slice(g, kc, k, starts, POOT_TRAP_POS_OUT_OF_RANGE, &kn));
  POOT_ASSERT_OK(poot_graph_dynamic_update_slice(g, vc, v, starts, POOT_TRAP_POS_OUT_OF_RANGE, &vn));
  poot_type io_t = poot_type_make(POOT_DTYPE_I32, 2, DIMS(1, CAP));
  POOT_ASSERT_OK(poot_graph_iota(g, &io_t, 1, &io));
  poot_shape ms = poot_shape_of(2, 1, CAP);
  POOT_ASSERT_OK(poot_graph_broadcast(g, p0, &ms, NULL, &pb));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_LE, io, pb, &mask));
  POOT_ASSERT_OK(poot_graph_attention(g, q, kn, vn, mask, 1.0, &att));
  POOT_ASSERT_OK(poot_graph_set_state_update(g, kc, kn));
  POOT_ASSERT_OK(poot_graph_set_state_update(g, vc, vn));
  POOT_ASSERT_OK(poot_graph_set_output(g, att));
  POOT_ASSERT_OK(poot_graph_verify(g));

  float kz[CAP * D] = {0}, vz[CAP * D] = {0};
  /* Stale rows past pos must not matter: fill them with garbage. */
  for (int i = 2 * D; i < CAP * D; i++) kz[i] = vz[i] = 1000.0f;
  float q0[D] = {1, 0}, k0[D] = {1, 0}, v0[D] = {2, 3};
  int32_t pos0 = 0;
  poot_tensor tk = {kv_t, kz, sizeof kz}, tv = {kv_t, vz, sizeof vz}, tq = {row_t, q0, 8},
              tkn = {row_t, k0, 8}, tvn = {row_t, v0, 8}, tp = {pos_t, &pos0, 4};
  poot_eval_input items[] = {{"k", &tk}, {"v", &tv}, {"q", &tq}, {"knew", &tkn}, {"vnew", &tvn},
                             {"pos", &tp}};
  poot_eval_inputs in = {.count = 6, .items = items};
  poot_evaluation *ev = NULL;
  POOT_ASSERT_OK(poot_eval(g, &in, NULL, &ev));
  const float w0[] = {2, 3}; /* one visible position: its value */
  tg_assert_near(ev->output.data, w0, 2, 1e-6f);
  /* Step 2: feed the new states back, pos 1. */
  float k1[CAP * D], v1[CAP * D];
  memcpy(k1, poot_evaluation_state(ev, "k")->data, sizeof k1);
  memcpy(v1, poot_evaluation_state(ev, "v")->data, sizeof v1);
  assert_true(k1[0] == 1.0f && v1[1] == 3.0f && k1[2 * D] == 1000.0f);
  poot_evaluation_destroy(ev);
  float k1new[D] = {0, 1}, v1new[D] = {-4, 5}, q1[D] = {0.5f, 0.25f};
  int32_t pos1 = 1;
  tk.data = k1;
  tv.data = v1;
  tkn.data = k1new;
  tvn.data = v1new;
  tq.data = q1;
  tp.data = &pos1;
  POOT_ASSERT_OK(poot_eval(g, &in, NULL, &ev));
  const double s0 = 0.5, s1 = 0.25, m = s0, e0 = exp(s0 - m), e1 = exp(s1 - m);
  const float w1[] = {(float)((e0 * 2 + e1 * -4) / (e0 + e1)), (float)((e0 * 3 + e1 * 5) / (e0 + e1))};
  tg_assert_near(ev->output.data, w1, 2, 1e-5f);
  poot_evaluation_destroy(ev);
  /* pos == cap is a typed fault. */
  int32_t pos4 = CAP;
  tp.data = &pos4;
  POOT_ASSERT_STATUS_MSG(poot_eval(g, &in, NULL, &ev), POOT_KERNEL_FAULT, "pos_out_of_range");
  poot_graph_destroy(g);
}

/* A composite built by hand, nested, and a failed check inside a body. */
static void test_generic_composites(void **state) {
  (void)state;
  poot_graph *g = tg_new();
  const float x[] = {1, 2, 3};
  const int32_t idx[] = {0, 5};
  poot_value vx = tg_f32(g, 3, x), vi = tg_i32(g, 2, idx), p[2], inner_p[1], d, dd, out[1];
  poot_value ops[2] = {vx, vi};
  POOT_ASSERT_OK(poot_graph_composite_begin(g, "test.outer", 0, NULL, 2, ops, p));
  POOT_ASSERT_OK(poot_graph_composite_begin(g, "test.double", 0, NULL, 1, p, inner_p));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, inner_p[0], inner_p[0], &d));
  POOT_ASSERT_OK(poot_graph_composite_end(g, 1, &d, &dd));
  poot_value gth;
  POOT_ASSERT_OK(poot_graph_gather(g, dd, p[1], 0, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &gth));
  POOT_ASSERT_OK(poot_graph_composite_end(g, 1, &gth, out));
  POOT_ASSERT_OK(poot_graph_set_output(g, out[0]));
  POOT_ASSERT_OK(poot_graph_verify(g));
  poot_eval_fault fault;
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.out_fault = &fault;
  poot_evaluation *ev = NULL;
  poot_status s = poot_eval(g, NULL, &opt, &ev);
  assert_int_equal(poot_status_code_of(s), POOT_KERNEL_FAULT);
  assert_non_null(strstr(poot_status_message(s), "in composite"));
  assert_non_null(strstr(poot_status_message(s), "test.outer"));
  assert_non_null(strstr(poot_status_message(s), "index_out_of_range"));
  poot_status_free(s);
  assert_int_equal(fault.op, POOT_OP_GATHER);
  assert_true(fault.composite_node != UINT32_MAX);
  const poot_node *c = poot_graph_node(g, fault.composite_node);
  assert_non_null(c);
  assert_string_equal(c->name, "test.outer");
  poot_graph_destroy(g);

  /* The same graph with in-range indices. */
  g = tg_new();
  const int32_t ok_idx[] = {2, 0};
  vx = tg_f32(g, 3, x);
  vi = tg_i32(g, 2, ok_idx);
  ops[0] = vx;
  ops[1] = vi;
  POOT_ASSERT_OK(poot_graph_composite_begin(g, "test.outer", 0, NULL, 2, ops, p));
  POOT_ASSERT_OK(poot_graph_composite_begin(g, "test.double", 0, NULL, 1, p, inner_p));
  POOT_ASSERT_OK(poot_graph_binary(g, POOT_OP_ADD, inner_p[0], inner_p[0], &d));
  POOT_ASSERT_OK(poot_graph_composite_end(g, 1, &d, &dd));
  POOT_ASSERT_OK(poot_graph_gather(g, dd, p[1], 0, 0, POOT_TRAP_INDEX_OUT_OF_RANGE, &gth));
  POOT_ASSERT_OK(poot_graph_composite_end(g, 1, &gth, out));
  ev = tg_run(g, out[0]);
  const float w[] = {6, 2};
  tg_assert_f32(ev->output.data, w, 2);
  poot_evaluation_destroy(ev);
  poot_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_norms),     cmocka_unit_test(test_softmax_and_activations),
      cmocka_unit_test(test_rope),      cmocka_unit_test(test_attention),
      cmocka_unit_test(test_decode_step),
      cmocka_unit_test(test_generic_composites),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
