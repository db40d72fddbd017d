/* vision.c — the vision handle of a LLaVA-style model: its configuration
 * (config.json's vision_config and LLaVA keys through the one config.json
 * reader, preprocessor_config.json), its weights (bound in the model's
 * weight map by the registry), the oracle path and the prompt's image-token
 * expansion (docs/vision.md). */
#include <stdio.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/hf_config.h"
#include "poot/llm/vision.h"
#include "vision_impl.h"
#include "vision_internal.h"

#define UNSUP(...) poot_status_make(POOT_UNSUPPORTED, __VA_ARGS__)

static poot_status get_int(const poot_json *o, const char *k, int64_t dflt, int64_t *out,
                           const char *where) {
  const poot_json *v = o ? poot_json_get(o, k) : NULL;
  *out = dflt;
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_NUMBER || !(v->number >= -1e15 && v->number <= 1e15) ||
      v->number != (double)(int64_t)v->number)
    return poot_status_make(POOT_FORMAT, "%s: '%s' is not an integer", where, k);
  *out = (int64_t)v->number;
  return NULL;
}

static const char *get_str(const poot_json *o, const char *k, const char *dflt) {
  const poot_json *v = o ? poot_json_get(o, k) : NULL;
  return v && v->type == POOT_JSON_STRING ? v->str : dflt;
}

static poot_status act_of(const char *name, const char *key, const char *where,
                          poot_vision_act *out) {
  if (strcmp(name, "quick_gelu") == 0)
    *out = POOT_VISION_ACT_QUICK_GELU;
  else if (strcmp(name, "gelu_pytorch_tanh") == 0 || strcmp(name, "gelu_new") == 0 ||
           strcmp(name, "gelu_tanh") == 0)
    *out = POOT_VISION_ACT_GELU_TANH;
  else if (strcmp(name, "gelu") == 0)
    *out = POOT_VISION_ACT_GELU;
  else
    return UNSUP("%s: '%s' is '%s' (quick_gelu, gelu and gelu_pytorch_tanh are supported)", where,
                 key, name);
  return NULL;
}

/* vision_config and the LLaVA keys of config.json (hf, read by the one
 * config.json reader). */
static poot_status read_config(const poot_hf_config *hf, const char *where, poot_vision_config *c) {
  const poot_json *root = hf->root, *vc = poot_json_get(root, "vision_config");
  if (!vc || vc->type != POOT_JSON_OBJECT)
    return UNSUP("%s: LLaVA config without a vision_config", where);
  const char *mt = get_str(vc, "model_type", "clip_vision_model");
  bool clip = strcmp(mt, "clip_vision_model") == 0;
  if (!clip && strcmp(mt, "siglip_vision_model") != 0)
    return UNSUP(
        "%s: vision_config.model_type '%s' is not supported (clip_vision_model and "
        "siglip_vision_model are)",
        where, mt);
  c->tower = clip ? POOT_VISION_TOWER_CLIP : POOT_VISION_TOWER_SIGLIP;
  /* transformers' CLIPVisionConfig / SiglipVisionConfig defaults. */
  POOT_TRY(get_int(vc, "hidden_size", 768, &c->hidden_size, where));
  POOT_TRY(get_int(vc, "intermediate_size", 3072, &c->intermediate_size, where));
  POOT_TRY(get_int(vc, "num_hidden_layers", 12, &c->n_layers, where));
  POOT_TRY(get_int(vc, "num_attention_heads", 12, &c->n_heads, where));
  POOT_TRY(get_int(vc, "image_size", 224, &c->image_size, where));
  POOT_TRY(get_int(vc, "patch_size", clip ? 32 : 16, &c->patch_size, where));
  int64_t ch = 3;
  POOT_TRY(get_int(vc, "num_channels", 3, &ch, where));
  if (ch != 3)
    return UNSUP("%s: vision_config.num_channels is %lld (3 is supported)", where, (long long)ch);
  const poot_json *eps = poot_json_get(vc, "layer_norm_eps");
  c->norm_eps = eps && eps->type == POOT_JSON_NUMBER ? eps->number : clip ? 1e-5 : 1e-6;
  POOT_TRY(act_of(get_str(vc, "hidden_act", clip ? "quick_gelu" : "gelu_pytorch_tanh"),
                  "vision_config.hidden_act", where, &c->act));
  if (c->hidden_size < 1 || c->intermediate_size < 1 || c->n_layers < 1 || c->n_heads < 1 ||
      c->hidden_size % c->n_heads || c->patch_size < 1 || c->image_size < c->patch_size ||
      c->image_size % c->patch_size || c->image_size > 4096 || c->n_layers > 256)
    return poot_status_make(POOT_FORMAT,
                            "%s: vision_config sizes are inconsistent (hidden %lld, heads %lld, "
                            "layers %lld, image %lld, patch %lld)",
                            where, (long long)c->hidden_size, (long long)c->n_heads,
                            (long long)c->n_layers, (long long)c->image_size,
                            (long long)c->patch_size);
  c->grid = c->image_size / c->patch_size;

  const poot_json *fl = poot_json_get(root, "vision_feature_layer");
  if (fl && fl->type == POOT_JSON_ARRAY)
    return UNSUP("%s: 'vision_feature_layer' is a list (one layer is supported)", where);
  int64_t layer;
  POOT_TRY(get_int(root, "vision_feature_layer", -2, &layer, where));
  c->feature_layer = layer < 0 ? c->n_layers + 1 + layer : layer;
  if (c->feature_layer < 0 || c->feature_layer > c->n_layers)
    return poot_status_make(POOT_FORMAT, "%s: vision_feature_layer %lld is outside the %lld layers",
                            where, (long long)layer, (long long)c->n_layers);
  const char *strategy = get_str(root, "vision_feature_select_strategy", "default");
  if (strcmp(strategy, "default") != 0 && strcmp(strategy, "full") != 0)
    return UNSUP("%s: vision_feature_select_strategy '%s' (default and full are supported)", where,
                 strategy);
  c->drop_cls = strcmp(strategy, "default") == 0;
  POOT_TRY(act_of(get_str(root, "projector_hidden_act", "gelu"), "projector_hidden_act", where,
                  &c->projector_act));
  const poot_json *pb = poot_json_get(root, "multimodal_projector_bias");
  c->projector_bias = !(pb && pb->type == POOT_JSON_BOOL && !pb->boolean);
  int64_t tok = -1;
  POOT_TRY(get_int(root, "image_token_index", -1, &tok, where));
  if (tok < 0) POOT_TRY(get_int(root, "image_token_id", -1, &tok, where));
  if (tok < 0) tok = 32000; /* LlavaConfig's default */
  c->image_token_id = tok;
  c->text_hidden = hf->hidden_size;
  int64_t tokens = c->grid * c->grid + (clip ? 1 : 0);
  c->rows = tokens - (c->drop_cls ? 1 : 0);
  if (c->rows < 1) return poot_status_make(POOT_FORMAT, "%s: the tower gives no image rows", where);
  return NULL;
}

poot_status poot_vision_open(poot_model *model, const char *path, poot_vision **out) {
  *out = NULL;
  if (!model || !path) return poot_status_make(POOT_INVALID_ARGUMENT, "vision: NULL argument");
  const poot_model_config *mc = poot_model_get_config(model);
  if (!poot__llava_architecture(mc->architecture, NULL) && strcmp(mc->architecture, "llava") != 0)
    return UNSUP(
        "model '%s' (%s) has no vision tower: images need a LLaVA-style model "
        "(LlavaForConditionalGeneration)",
        path, mc->architecture);
  char folder[4096], file[4200];
  snprintf(folder, sizeof folder, "%s", path);
  size_t len = strlen(folder);
  if (len > 12 && strcmp(folder + len - 12, ".safetensors") == 0) {
    char *slash = strrchr(folder, '/');
    if (slash)
      *slash = 0;
    else
      snprintf(folder, sizeof folder, ".");
  }
  poot_vision *v = poot_calloc(1, sizeof *v);
  if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "vision handle");
  v->model = model;
  poot_hf_config *hf = NULL;
  snprintf(file, sizeof file, "%s/config.json", folder);
  poot_status st = poot_hf_config_load(file, &hf);
  if (!st) st = read_config(hf, file, &v->cfg);
  poot_hf_config_destroy(hf);
  if (!st) {
    snprintf(file, sizeof file, "%s/preprocessor_config.json", folder);
    st = poot_vision_preprocess_load(file, &v->cfg.preprocess);
  }
  if (!st && (v->cfg.preprocess.out_height != v->cfg.image_size ||
              v->cfg.preprocess.out_width != v->cfg.image_size))
    st = poot_status_make(POOT_FORMAT, "%s: the processor gives %dx%d pixels, the tower reads %lld",
                          file, v->cfg.preprocess.out_width, v->cfg.preprocess.out_height,
                          (long long)v->cfg.image_size);
  if (st) {
    poot_vision_destroy(v);
    return poot_status_annotate(st, "opening the vision tower of '%s'", path);
  }
  *out = v;
  return NULL;
}

void poot_vision_destroy(poot_vision *v) {
  poot_free(v);
}

const poot_vision_config *poot_vision_get_config(const poot_vision *v) {
  return &v->cfg;
}

poot_status poot_vision_weights(poot_vision *v, const poot_graph *g, poot_exec_weight **out_w,
                                poot_tensor **out_t, size_t *out_count) {
  *out_w = NULL;
  *out_t = NULL;
  *out_count = 0;
  const poot_region *root = poot_graph_root(g);
  size_t n = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op == POOT_OP_LEAF && node->storage == POOT_STORAGE_WEIGHT) n++;
  }
  poot_exec_weight *items = poot_calloc(n + 1, sizeof *items);
  poot_tensor *tensors = poot_calloc(n + 1, sizeof *tensors);
  if (!items || !tensors) {
    poot_free(items);
    poot_free(tensors);
    return poot_status_make(POOT_OUT_OF_MEMORY, "vision weights");
  }
  size_t k = 0;
  poot_status st = NULL;
  for (uint32_t i = 0; i < root->num_nodes && k < n && !st; i++) {
    const poot_node *node = poot_graph_node(g, root->nodes[i]);
    if (node->op != POOT_OP_LEAF || node->storage != POOT_STORAGE_WEIGHT) continue;
    st = poot_model_weight_tensor(v->model, &node->weight,
                                  poot_graph_value_type(g, node->results[0]), &tensors[k]);
    items[k] = (poot_exec_weight){
        .key = node->weight.key, .name = node->weight.name, .tensor = &tensors[k]};
    k++;
  }
  if (st) {
    poot_free(items);
    poot_free(tensors);
    return st;
  }
  *out_w = items;
  *out_t = tensors;
  *out_count = k;
  return NULL;
}

poot_status poot_vision_eval(poot_vision *v, const float *pixels, float *out_rows) {
  if (!v || !pixels || !out_rows)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_vision_eval: NULL argument");
  poot_graph *g = NULL;
  POOT_TRY(poot_vision_trace(v, &g));
  poot_exec_weight *w = NULL;
  poot_tensor *t = NULL;
  size_t n = 0;
  poot_evaluation *ev = NULL;
  poot_status st = poot_vision_weights(v, g, &w, &t, &n);
  poot_eval_weight *ew = NULL;
  if (!st) {
    ew = poot_calloc(n + 1, sizeof *ew);
    if (!ew) st = poot_status_make(POOT_OUT_OF_MEMORY, "vision eval");
  }
  if (!st) {
    for (size_t i = 0; i < n; i++)
      ew[i] = (poot_eval_weight){.key = w[i].key, .tensor = w[i].tensor};
    int64_t S = v->cfg.image_size;
    poot_tensor px = {.type = poot_type_make(POOT_DTYPE_F32, 4, (int64_t[]){1, 3, S, S}),
                      .data = (void *)pixels,
                      .size = (size_t)(3 * S * S) * sizeof(float)};
    poot_eval_input in = {.name = POOT_VISION_SLOT_PIXELS, .tensor = &px};
    poot_eval_inputs inputs = {.count = 1, .items = &in, .weight_count = n, .weights = ew};
    st = poot_eval(g, &inputs, NULL, &ev);
  }
  if (!st) {
    size_t bytes = (size_t)(v->cfg.rows * v->cfg.text_hidden) * sizeof(float);
    if (!ev->has_output || ev->output.size != bytes)
      st = poot_status_make(POOT_INTERNAL, "vision eval: unexpected output size");
    else
      memcpy(out_rows, ev->output.data, bytes);
  }
  poot_evaluation_destroy(ev);
  poot_free(ew);
  poot_free(w);
  poot_free(t);
  poot_graph_destroy(g);
  return st;
}

poot_status poot_vision_expand_prompt(const poot_vision_config *c, const poot_token *ids,
                                      size_t count, poot_token **out_ids, size_t *out_count,
                                      size_t **out_first, size_t *out_images) {
  *out_ids = NULL;
  *out_count = 0;
  if (out_first) *out_first = NULL;
  *out_images = 0;
  if (!c || (!ids && count))
    return poot_status_make(POOT_INVALID_ARGUMENT, "expand prompt: NULL argument");
  size_t images = 0;
  for (size_t i = 0; i < count; i++) images += ids[i] == (poot_token)c->image_token_id;
  size_t rows = (size_t)c->rows, n = count + images * (rows - 1);
  poot_token *o = poot_malloc((n + 1) * sizeof *o);
  size_t *first = out_first ? poot_malloc((images + 1) * sizeof *first) : NULL;
  if (!o || (out_first && !first)) {
    poot_free(o);
    poot_free(first);
    return poot_status_make(POOT_OUT_OF_MEMORY, "expand prompt");
  }
  size_t k = 0, m = 0;
  for (size_t i = 0; i < count; i++) {
    if (ids[i] != (poot_token)c->image_token_id) {
      o[k++] = ids[i];
      continue;
    }
    if (first) first[m] = k;
    m++;
    for (size_t r = 0; r < rows; r++) o[k++] = ids[i];
  }
  *out_ids = o;
  *out_count = n;
  if (out_first) *out_first = first;
  *out_images = images;
  return NULL;
}
