/* vision_probe — the vision library's results as files, for
 * tests/unit/llm/vision_check.py (which compares them with Pillow, numpy and
 * the committed transformers vectors):
 *
 *   vision_probe pixels MODELDIR IMAGE OUT.f32      the processor's pixels
 *   vision_probe rows MODELDIR IMAGE DEVICE OUT.f32 the projector's rows
 *                                                   (DEVICE: eval, vulkan, ptx)
 *   vision_probe greedy MODELDIR IMAGE STEPS ID...  greedy ids on the oracle,
 *                                                   the image tokens' rows from
 *                                                   the tower (whole sequence
 *                                                   each step, as the reference)
 *   vision_probe decode FILE                        decodes (exit 0) or prints
 *                                                   the status (exit 3)
 *   vision_probe batch MODELDIR IMAGE_A IMAGE_B DEVICE STEPS ID...
 *                                                   the batched runner with
 *                                                   image rows against the
 *                                                   single driver (checks
 *                                                   below, cmd_batch); prints
 *                                                   PASS or the failures
 *
 * Exit 77 when the device is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/exec.h"
#include "poot/llm/batch.h"
#include "poot/llm/driver.h"
#include "poot/llm/vision.h"

static int fail(poot_status st) {
  fprintf(stderr, "vision_probe: %s: %s\n", poot_status_code_name(poot_status_code_of(st)),
          poot_status_message(st));
  poot_status_free(st);
  return 1;
}

static int write_f32(const char *path, const float *v, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(v, sizeof *v, n, f) != n) {
    fprintf(stderr, "vision_probe: cannot write %s\n", path);
    if (f) fclose(f);
    return 1;
  }
  fclose(f);
  return 0;
}

static poot_status pixels_of(const poot_vision_config *c, const char *image, float **out) {
  poot_image img = {0};
  POOT_TRY(poot_image_load(image, &img));
  *out = malloc((size_t)(3 * c->preprocess.out_height * c->preprocess.out_width) * sizeof **out);
  poot_status st = *out ? poot_vision_preprocess_image(&c->preprocess, &img, *out)
                        : poot_status_make(POOT_OUT_OF_MEMORY, "pixels");
  poot_image_deinit(&img);
  return st;
}

static int cmd_pixels(const char *dir, const char *image, const char *out) {
  char path[4200];
  snprintf(path, sizeof path, "%s/preprocessor_config.json", dir);
  poot_vision_config c;
  memset(&c, 0, sizeof c);
  poot_status st = poot_vision_preprocess_load(path, &c.preprocess);
  if (st) return fail(st);
  float *px = NULL;
  if ((st = pixels_of(&c, image, &px))) return free(px), fail(st);
  int rc = write_f32(out, px, (size_t)(3 * c.preprocess.out_height * c.preprocess.out_width));
  free(px);
  return rc;
}

typedef struct opened {
  poot_model *model;
  poot_vision *vision;
  float *pixels, *rows;
} opened;

static poot_status open_all(const char *dir, const char *image, opened *o) {
  memset(o, 0, sizeof *o);
  POOT_TRY(poot_model_open(dir, NULL, &o->model));
  POOT_TRY(poot_vision_open(o->model, dir, &o->vision));
  const poot_vision_config *c = poot_vision_get_config(o->vision);
  POOT_TRY(pixels_of(c, image, &o->pixels));
  o->rows = malloc((size_t)(c->rows * c->text_hidden) * sizeof *o->rows);
  return o->rows ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "rows");
}

static void close_all(opened *o) {
  free(o->pixels);
  free(o->rows);
  poot_vision_destroy(o->vision);
  poot_model_destroy(o->model);
}

static int cmd_rows(const char *dir, const char *image, const char *device, const char *out) {
  opened o;
  poot_status st = open_all(dir, image, &o);
  const poot_vision_config *c = st ? NULL : poot_vision_get_config(o.vision);
  poot_device *dev = NULL;
  poot_executor *ex = NULL;
  poot_vision_runner *r = NULL;
  if (!st && strcmp(device, "eval") == 0) {
    st = poot_vision_eval(o.vision, o.pixels, o.rows);
  } else if (!st) {
    st = poot_device_open(device, NULL, &dev);
    if (st && poot_status_code_of(st) == POOT_NO_DEVICE) {
      printf("SKIP: no %s device: %s\n", device, poot_status_message(st));
      poot_status_free(st);
      close_all(&o);
      return 77;
    }
    if (!st) st = poot_engine_create(dev, &ex);
    if (!st) st = poot_vision_runner_create(o.vision, ex, &r);
    if (!st) st = poot_vision_runner_encode(r, o.pixels, o.rows);
    /* A second image through the same entry: the pixels are a slot. */
    if (!st) st = poot_vision_runner_encode(r, o.pixels, o.rows);
    if (!st && poot_vision_runner_entries(r) != 1)
      st = poot_status_make(POOT_INTERNAL, "the runner added %u entries for one frame shape",
                            poot_vision_runner_entries(r));
  }
  int rc = st ? fail(st) : write_f32(out, o.rows, (size_t)(c->rows * c->text_hidden));
  poot_vision_runner_destroy(r);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  close_all(&o);
  return rc;
}

/* Logits of the last position of ids[0..n) with rows in place of the image
 * tokens, on the oracle from zeroed states. */
static poot_status oracle_next(opened *o, const int32_t *ids, int64_t n, const float *embeds,
                               const int32_t *on, poot_token *out) {
  const poot_model_config *mc = poot_model_get_config(o->model);
  poot_model_step step = {.batch = 1, .tokens = n, .cap = n, .input_embeds = true};
  poot_model_trace_options to = poot_model_trace_options_for(o->model);
  poot_graph *g = NULL;
  POOT_TRY(poot_model_trace(mc, &step, &to, &g));
  const poot_region *root = poot_graph_root(g);
  poot_eval_weight *w = calloc(root->num_nodes + 1, sizeof *w);
  poot_tensor *wt = calloc(root->num_nodes + 1, sizeof *wt);
  size_t nw = 0;
  poot_status st = w && wt ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "weights");
  for (uint32_t i = 0; i < root->num_nodes && !st; i++) {
    const poot_node *nd = poot_graph_node(g, root->nodes[i]);
    if (nd->op != POOT_OP_LEAF || nd->storage != POOT_STORAGE_WEIGHT) continue;
    st = poot_model_weight_tensor(o->model, &nd->weight, poot_graph_value_type(g, nd->results[0]),
                                  &wt[nw]);
    w[nw] = (poot_eval_weight){.key = nd->weight.key, .tensor = &wt[nw]};
    nw++;
  }
  int64_t td[2] = {1, n}, ed[3] = {1, n, mc->hidden_size}, one = 1;
  int32_t pos = 0;
  poot_tensor tt = {poot_type_make(POOT_DTYPE_I32, 2, td), (void *)ids, (size_t)n * 4};
  poot_tensor pt = {poot_type_make(POOT_DTYPE_I32, 1, &one), &pos, 4};
  poot_tensor et = {poot_type_make(POOT_DTYPE_F32, 3, ed), (void *)embeds,
                    (size_t)(n * mc->hidden_size) * sizeof(float)};
  poot_tensor ot = {poot_type_make(POOT_DTYPE_I32, 2, td), (void *)on, (size_t)n * 4};
  poot_eval_input in[4] = {{"token", &tt},
                           {"pos", &pt},
                           {POOT_MODEL_SLOT_EMBEDS, &et},
                           {POOT_MODEL_SLOT_EMBEDS_ON, &ot}};
  poot_eval_inputs ei = {.count = 4, .items = in, .weight_count = nw, .weights = w};
  poot_eval_options eo;
  poot_eval_options_init(&eo);
  eo.zero_missing_states = true;
  poot_evaluation *e = NULL;
  if (!st) st = poot_eval(g, &ei, &eo, &e);
  if (!st) {
    const float *l = e->output.data;
    int64_t best = 0;
    for (int64_t v = 1; v < mc->vocab_size; v++)
      if (l[v] > l[best]) best = v;
    *out = (poot_token)best;
  }
  poot_evaluation_destroy(e);
  free(w);
  free(wt);
  poot_graph_destroy(g);
  return st;
}

static int cmd_greedy(const char *dir, const char *image, int steps, int argc, char **argv) {
  opened o;
  poot_status st = open_all(dir, image, &o);
  if (st) return close_all(&o), fail(st);
  const poot_vision_config *c = poot_vision_get_config(o.vision);
  const poot_model_config *mc = poot_model_get_config(o.model);
  int64_t H = mc->hidden_size, cap = argc + steps;
  int32_t *ids = calloc((size_t)cap, sizeof *ids), *on = calloc((size_t)cap, sizeof *on);
  float *embeds = calloc((size_t)(cap * H), sizeof *embeds);
  if (!ids || !on || !embeds) return fail(poot_status_make(POOT_OUT_OF_MEMORY, "greedy"));
  st = poot_vision_eval(o.vision, o.pixels, o.rows);
  int64_t n = argc, row = 0;
  for (int64_t i = 0; i < n; i++) {
    ids[i] = atoi(argv[i]);
    if (ids[i] == (int32_t)c->image_token_id) {
      /* Each run of image tokens is one image's rows, in order. */
      on[i] = 1;
      memcpy(embeds + i * H, o.rows + (row % c->rows) * H, (size_t)H * sizeof(float));
      row++;
    }
  }
  for (int s = 0; s < steps && !st; s++) {
    poot_token next = 0;
    st = oracle_next(&o, ids, n, embeds, on, &next);
    if (!st) {
      printf(s ? " %d" : "%d", (int)next);
      fflush(stdout);
      ids[n++] = next;
    }
  }
  printf("\n");
  free(ids);
  free(on);
  free(embeds);
  close_all(&o);
  return st ? fail(st) : 0;
}

/* ------------------------------------------------------------ batch */

typedef struct bctx {
  poot_model *model;
  const poot_vision_config *vc;
  poot_executor *ex_d, *ex_b;
  poot_driver *d;
  const int32_t *ids;
  int64_t n;
  int steps;
  int failures;
  /* the image rows of A and B as driver inputs (rows: c->rows each image) */
  poot_driver_input_row *rows[2];
  poot_driver_input in[2];
} bctx;

#define BCHECK(x, ...)              \
  do {                              \
    if (!(x)) {                     \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
      ctx->failures++;              \
    }                               \
  } while (0)

static void print_ids(const char *what, const int32_t *ids, int64_t n) {
  printf("%s:", what);
  for (int64_t i = 0; i < n; i++) printf(" %d", ids[i]);
  printf("\n");
}

/* Greedy ids of the single driver (inputs NULL: the ids alone). */
static poot_status driver_ids(bctx *ctx, const poot_driver_input *in,
                              const poot_sampling_params *sp, int32_t *out) {
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = ctx->steps;
  go.ignore_stop = true;
  go.no_text = true;
  go.sampling = sp;
  poot_driver_generate_result res = {0};
  poot_status st =
      in ? poot_driver_generate_with_inputs(ctx->d, ctx->ids, (size_t)ctx->n, in, 1, &go, NULL,
                                            NULL, &res)
         : poot_driver_generate_ids(ctx->d, ctx->ids, (size_t)ctx->n, &go, NULL, NULL, &res);
  if (!st && res.n_ids != (size_t)ctx->steps)
    st = poot_status_make(POOT_INTERNAL, "the driver gave %zu ids", res.n_ids);
  for (size_t i = 0; !st && i < res.n_ids; i++) out[i] = res.ids[i];
  poot_driver_generate_result_deinit(&res);
  return st;
}

static poot_status runner(bctx *ctx, int32_t blocks, bool prefix, poot_batch **out) {
  poot_batch_options bo = poot_batch_options_default();
  bo.max_batch = 4;
  bo.block_size = 4;
  bo.max_seq_len = (ctx->n + ctx->steps + 3) / 4 * 4;
  bo.num_blocks = blocks;
  bo.kv_dtype = POOT_DTYPE_F32;
  bo.no_prefix_cache = !prefix;
  return poot_batch_create(ctx->ex_b, ctx->model, &bo, out);
}

/* prompts[i] with image which[i] (0: A, 1: B, −1: none), sampled by sp[i]
 * (sp NULL or sp[i] NULL: greedy). */
static poot_status batch_run(bctx *ctx, poot_batch *b, const int *which, size_t n,
                             const poot_sampling_params *const *sp, poot_batch_output *outs) {
  poot_batch_prompt p[4];
  for (size_t i = 0; i < n; i++)
    p[i] = (poot_batch_prompt){.ids = ctx->ids,
                               .n = ctx->n,
                               .max_new_tokens = ctx->steps,
                               .sampling = sp ? sp[i] : NULL,
                               .inputs = which[i] >= 0 ? &ctx->in[which[i]] : NULL,
                               .n_inputs = which[i] >= 0 ? 1 : 0};
  return poot_batch_generate(b, p, n, NULL, outs);
}

/* Each request's ids (caller ids 0 and 1). */
typedef struct brec {
  int32_t ids[2][64];
  int64_t n[2];
} brec;

static bool record(void *ctx, uint64_t caller_id, int32_t token, bool nonfinite) {
  (void)nonfinite;
  brec *r = ctx;
  if (caller_id < 2 && r->n[caller_id] < 64) r->ids[caller_id][r->n[caller_id]++] = token;
  return false;
}

static bool same(const int32_t *a, const int32_t *b, int64_t n) {
  return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* The checks of the batched runner with image rows (poot_batch_request.inputs),
 * on one runner (max_batch 4, blocks of 4, a pool of a little more than two
 * sequences, prefix reuse on), against the single driver's greedy ids; A's
 * and B's differ (their placeholder ids are equal):
 *   1. A alone, then B, then A: B reuses no block of A's (its rows salt its
 *      blocks); A again reuses its own; each its ids;
 *   2. A, B and the text together: each its ids;
 *   3. A, B, B, A: preempted requests prefill again with their rows;
 *   4. B through the row sampler (a logit bias) beside A greedy: the
 *      driver's ids with the same bias;
 *   5. a kernel fault after two ids, recovered (poot_batch_recover): the ids;
 *   6. bad inputs: a row at the last prompt index, a row of another width. */
static int cmd_batch(const char *dir, const char *img_a, const char *img_b, const char *device,
                     int steps, int argc, char **argv) {
  bctx c = {.steps = steps}, *ctx = &c;
  poot_device *dev = NULL;
  poot_executor *ex_v = NULL;
  poot_vision_runner *vr = NULL;
  poot_status st = poot_device_open(device, NULL, &dev);
  if (st) {
    if (poot_status_code_of(st) != POOT_NO_DEVICE) return fail(st);
    printf("SKIP: no %s device: %s\n", device, poot_status_message(st));
    poot_status_free(st);
    return 77;
  }
  opened oa, ob;
  st = open_all(dir, img_a, &oa);
  if (!st) st = open_all(dir, img_b, &ob);
  if (st) return poot_device_destroy(dev), fail(st);
  c.model = oa.model;
  c.vc = poot_vision_get_config(oa.vision);
  const int64_t H = poot_model_get_config(c.model)->hidden_size, R = c.vc->rows;
  int32_t *ids = calloc((size_t)argc, sizeof *ids);
  for (int i = 0; i < argc; i++) ids[i] = atoi(argv[i]);
  c.ids = ids;
  c.n = argc;
  if (!st) st = poot_engine_create(dev, &ex_v);
  if (!st) st = poot_vision_runner_create(oa.vision, ex_v, &vr);
  if (!st) st = poot_vision_runner_encode(vr, oa.pixels, oa.rows);
  if (!st) st = poot_vision_runner_encode(vr, ob.pixels, ob.rows);
  /* the image tokens' positions: one image's rows, in order */
  for (int k = 0; k < 2 && !st; k++) {
    c.rows[k] = calloc((size_t)R, sizeof *c.rows[k]);
    int64_t r = 0;
    for (int64_t i = 0; i < c.n && r < R; i++)
      if (ids[i] == (int32_t)c.vc->image_token_id)
        c.rows[k][r] =
            (poot_driver_input_row){
                .index = i, .values = (k ? ob.rows : oa.rows) + r * H, .n_values = (size_t)H},
        r++;
    if (r != R)
      st = poot_status_make(POOT_INVALID_ARGUMENT, "the prompt has %lld image tokens, not %lld",
                            (long long)r, (long long)R);
    c.in[k] =
        (poot_driver_input){.name = POOT_MODEL_SLOT_EMBEDS, .rows = c.rows[k], .n_rows = (size_t)R};
  }
  poot_driver_options dopt = poot_driver_options_default();
  dopt.kv_dtype = POOT_DTYPE_F32;
  if (!st) st = poot_engine_create(dev, &c.ex_d);
  if (!st) st = poot_driver_create(c.ex_d, c.model, &dopt, &c.d);
  if (!st) st = poot_engine_create(dev, &c.ex_b);
  int32_t *want[3] = {calloc((size_t)steps, 4), calloc((size_t)steps, 4), calloc((size_t)steps, 4)};
  if (!st) st = driver_ids(ctx, &c.in[0], NULL, want[0]);
  if (!st) st = driver_ids(ctx, &c.in[1], NULL, want[1]);
  if (!st) st = driver_ids(ctx, NULL, NULL, want[2]);
  /* B through the row sampler: greedy with a logit bias that bans B's
   * third greedy id (a kind of its own, the cheapest to compile) */
  poot_sampling_params sp;
  poot_sampling_params_init(&sp);
  sp.temperature = 0;
  sp.seed = 42;
  sp.ignore_eos = true;
  sp.n_bias = 1;
  sp.bias[0] = (poot_sampling_bias){.token = want[1][2], .bias = -INFINITY};
  int32_t *want_s = calloc((size_t)steps, 4);
  if (!st) st = driver_ids(ctx, &c.in[1], &sp, want_s);
  if (!st) {
    print_ids("driver A", want[0], steps);
    print_ids("driver B", want[1], steps);
    print_ids("driver text", want[2], steps);
    BCHECK(!same(want[0], want[1], steps), "the two images give the same ids: the test is blind");
  }
  poot_batch *b = NULL;
  poot_batch_output outs[4];
  memset(outs, 0, sizeof outs);
  /* One runner: blocks for a little more than two sequences, prefix reuse on. */
  const int32_t per_seq = (int32_t)((c.n + steps + 3) / 4);
  if (!st) st = runner(ctx, 2 * per_seq + 2, true, &b);
  /* 1. A, then B, then A: the salt */
  const int order[3] = {0, 1, 0};
  for (int i = 0; i < 3 && !st; i++) {
    st = batch_run(ctx, b, &order[i], 1, NULL, outs);
    if (st) break;
    printf("alone %c: reused %lld of %lld\n", "AB"[order[i]], (long long)outs[0].reused_tokens,
           (long long)c.n);
    BCHECK(outs[0].n == steps && same(outs[0].ids, want[order[i]], steps),
           "alone %d (%c): ids differ from the driver's", i, "AB"[order[i]]);
    if (i == 1)
      BCHECK(outs[0].reused_tokens == 0, "B reused %lld tokens of A's blocks",
             (long long)outs[0].reused_tokens);
    if (i == 2) BCHECK(outs[0].reused_tokens > 0, "A again reused none of its own blocks");
    poot_batch_outputs_free(outs, 1);
  }
  /* 2. together, beside a text request; 3. four image requests on blocks
   * for two: preempted ones prefill again with their rows */
  const int which[2][4] = {{0, 1, -1}, {0, 1, 1, 0}};
  for (int t = 0; t < 2 && !st; t++) {
    const size_t n = t ? 4 : 3;
    st = batch_run(ctx, b, which[t], n, NULL, outs);
    int32_t pre = 0;
    for (size_t i = 0; i < n && !st; i++) {
      const int w = which[t][i] < 0 ? 2 : which[t][i];
      pre += outs[i].preemptions;
      BCHECK(outs[i].n == steps && same(outs[i].ids, want[w], steps),
             "%s: request %zu's ids differ from the driver's", t ? "four" : "together", i);
    }
    printf("%s: %d preemptions\n", t ? "four" : "together", pre);
    if (t) BCHECK(st || pre > 0, "no request was preempted: the test is blind");
    poot_batch_outputs_free(outs, n);
  }
  /* 4. B sampled (biased) beside A greedy: the sampled row is the prompt's
   * last id (no row), after its image's chunks at B = 1 */
  if (!st) {
    const int which[2] = {1, 0};
    const poot_sampling_params *sps[2] = {&sp, NULL};
    st = batch_run(ctx, b, which, 2, sps, outs);
    if (!st) {
      print_ids("driver B sampled", want_s, steps);
      print_ids("batch B sampled", outs[0].ids, outs[0].n);
      BCHECK(outs[0].n == steps && same(outs[0].ids, want_s, steps),
             "sampled: B's ids differ from the driver's with the same seed");
      BCHECK(outs[1].n == steps && same(outs[1].ids, want[0], steps),
             "sampled: A beside it differs from the driver's");
      BCHECK(!same(want_s, want[1], steps), "B sampled gives B's greedy ids: the test is blind");
    }
    poot_batch_outputs_free(outs, 2);
  }
  /* 5. a kernel fault after two ids of each, recovered */
  if (!st) {
    for (int i = 0; i < 2 && !st; i++)
      st = poot_batch_submit(b, &(poot_batch_request){.prompt = ids,
                                                      .n_prompt = c.n,
                                                      .max_new_tokens = steps,
                                                      .caller_id = (uint64_t)i,
                                                      .inputs = &c.in[i],
                                                      .n_inputs = 1});
    brec rec = {.n = {0, 0}};
    bool faulted = false;
    while (!st && poot_batch_busy(b)) {
      if (!faulted && rec.n[0] >= 2 && rec.n[1] >= 2) {
        poot_batch_arm_kernel_fault(b);
        faulted = true;
        poot_status f = poot_batch_step(b, record, &rec, NULL);
        BCHECK(poot_status_code_of(f) == POOT_KERNEL_FAULT, "the armed step did not fault");
        poot_status_free(f);
        st = poot_batch_recover(b, NULL);
        continue;
      }
      st = poot_batch_step(b, record, &rec, NULL);
      poot_scheduler_request_info ri;
      while (poot_batch_take_finished(b, &ri)) {
      }
    }
    int64_t *ng = rec.n;
    int32_t(*got)[64] = rec.ids;
    for (int i = 0; i < 2 && !st; i++)
      BCHECK(ng[i] == steps && same(got[i], want[i], steps),
             "after the fault: request %d's ids differ", i);
    BCHECK(st || faulted, "no fault was injected");
  }
  /* 6. bad inputs */
  if (!st) {
    poot_driver_input_row last = {.index = c.n - 1, .values = oa.rows, .n_values = (size_t)H};
    poot_driver_input bad = {.name = POOT_MODEL_SLOT_EMBEDS, .rows = &last, .n_rows = 1};
    poot_batch_request rq = {.prompt = ids,
                             .n_prompt = c.n,
                             .max_new_tokens = 1,
                             .caller_id = 9,
                             .inputs = &bad,
                             .n_inputs = 1};
    poot_status e = poot_batch_submit(b, &rq);
    BCHECK(poot_status_code_of(e) == POOT_INVALID_ARGUMENT, "a row at the last prompt index");
    poot_status_free(e);
    last.index = 0;
    last.n_values = (size_t)H - 1;
    e = poot_batch_submit(b, &rq);
    BCHECK(poot_status_code_of(e) == POOT_INVALID_ARGUMENT, "a row of another width");
    poot_status_free(e);
    BCHECK(!poot_batch_busy(b), "a refused request is held");
  }
  poot_batch_destroy(b);
  for (int i = 0; i < 3; i++) free(want[i]);
  free(want_s);
  free(c.rows[0]);
  free(c.rows[1]);
  free(ids);
  poot_driver_destroy(c.d);
  poot_executor_destroy(c.ex_d);
  poot_executor_destroy(c.ex_b);
  poot_vision_runner_destroy(vr);
  poot_executor_destroy(ex_v);
  poot_device_destroy(dev);
  close_all(&oa);
  close_all(&ob);
  if (st) return fail(st);
  printf(c.failures ? "FAILED (%d)\n" : "PASS\n", c.failures);
  return c.failures ? 1 : 0;
}

static int cmd_decode(const char *file) {
  poot_image img = {0};
  poot_status st = poot_image_load(file, &img);
  if (st) {
    printf("%s: %s\n", poot_status_code_name(poot_status_code_of(st)), poot_status_message(st));
    poot_status_free(st);
    return 3;
  }
  printf("%dx%d\n", img.width, img.height);
  poot_image_deinit(&img);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "pixels") == 0) return cmd_pixels(argv[2], argv[3], argv[4]);
  if (argc == 6 && strcmp(argv[1], "rows") == 0)
    return cmd_rows(argv[2], argv[3], argv[4], argv[5]);
  if (argc >= 6 && strcmp(argv[1], "greedy") == 0)
    return cmd_greedy(argv[2], argv[3], atoi(argv[4]), argc - 5, argv + 5);
  if (argc == 3 && strcmp(argv[1], "decode") == 0) return cmd_decode(argv[2]);
  if (argc >= 8 && strcmp(argv[1], "batch") == 0)
    return cmd_batch(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]), argc - 7, argv + 7);
  fprintf(stderr,
          "usage: vision_probe pixels|rows|greedy|decode|batch ... (see "
          "tests/unit/llm/vision_probe.c)\n");
  return 2;
}
