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
 *
 * Exit 77 when the device is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/exec.h"
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
  fprintf(
      stderr,
      "usage: vision_probe pixels|rows|greedy|decode ... (see tests/unit/llm/vision_probe.c)\n");
  return 2;
}
