/* Hugging Face config.json and generation_config.json. */
#include <math.h>
#include <string.h>

#include "poot/llm/hf_config.h"

typedef struct field_ctx {
  const poot_json *root;
  const char *name;
} field_ctx;

static poot_status get_int(const field_ctx *c, const char *key, int64_t *out) {
  const poot_json *v = poot_json_get(c->root, key);
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_NUMBER || v->number != floor(v->number) || fabs(v->number) > 9.0e15)
    return poot_status_make(POOT_FORMAT, "'%s': field '%s' is not an integer", c->name, key);
  *out = (int64_t)v->number;
  return NULL;
}

static poot_status get_num(const field_ctx *c, const char *key, double *out) {
  const poot_json *v = poot_json_get(c->root, key);
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_NUMBER)
    return poot_status_make(POOT_FORMAT, "'%s': field '%s' is not a number", c->name, key);
  *out = v->number;
  return NULL;
}

static poot_status get_bool(const field_ctx *c, const char *key, bool *out) {
  const poot_json *v = poot_json_get(c->root, key);
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_BOOL)
    return poot_status_make(POOT_FORMAT, "'%s': field '%s' is not a boolean", c->name, key);
  *out = v->boolean;
  return NULL;
}

static poot_status get_str(const field_ctx *c, const char *key, const char **out) {
  const poot_json *v = poot_json_get(c->root, key);
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_STRING)
    return poot_status_make(POOT_FORMAT, "'%s': field '%s' is not a string", c->name, key);
  *out = v->str;
  return NULL;
}

/* eos_token_id: an integer or a list of integers. */
static poot_status get_ids(const field_ctx *c, const char *key, int64_t *ids, size_t *n) {
  *n = 0;
  const poot_json *v = poot_json_get(c->root, key);
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type == POOT_JSON_NUMBER) {
    int64_t x = -1;
    POOT_TRY(get_int(c, key, &x));
    ids[(*n)++] = x;
    return NULL;
  }
  if (v->type != POOT_JSON_ARRAY)
    return poot_status_make(POOT_FORMAT, "'%s': field '%s' is not an integer or a list", c->name,
                            key);
  for (size_t i = 0; i < v->len && *n < POOT_HF_MAX_EOS; i++) {
    const poot_json *x = v->items[i];
    if (x->type != POOT_JSON_NUMBER || x->number != floor(x->number) || fabs(x->number) > 9.0e15)
      return poot_status_make(POOT_FORMAT, "'%s': field '%s'[%zu] is not an integer", c->name, key,
                              i);
    ids[(*n)++] = (int64_t)x->number;
  }
  return NULL;
}

static poot_status parse_root(poot_arena *arena, const char *text, size_t len, const char *name,
                              const poot_json **out_root) {
  poot_json *root = NULL;
  poot_status s = poot_json_parse(arena, text, len, NULL, &root);
  if (s) return poot_status_annotate(s, "'%s': ", name);
  if (root->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "'%s': not a JSON object", name);
  *out_root = root;
  return NULL;
}

static poot_status fill_config(poot_hf_config *c, const char *name) {
  field_ctx f = {c->root, name};
  c->vocab_size = c->hidden_size = c->intermediate_size = c->num_hidden_layers = -1;
  c->num_attention_heads = c->num_key_value_heads = c->head_dim = -1;
  c->max_position_embeddings = c->bos_token_id = c->pad_token_id = -1;
  c->rope_theta = 10000.0;
  POOT_TRY(get_str(&f, "model_type", &c->model_type));
  POOT_TRY(get_str(&f, "torch_dtype", &c->torch_dtype));
  /* transformers 5 writes "dtype" instead of "torch_dtype". */
  if (!c->torch_dtype) POOT_TRY(get_str(&f, "dtype", &c->torch_dtype));
  const poot_json *arch = poot_json_get(c->root, "architectures");
  if (arch && arch->type == POOT_JSON_ARRAY && arch->len &&
      arch->items[0]->type == POOT_JSON_STRING)
    c->architecture = arch->items[0]->str;
  POOT_TRY(get_int(&f, "vocab_size", &c->vocab_size));
  POOT_TRY(get_int(&f, "hidden_size", &c->hidden_size));
  POOT_TRY(get_int(&f, "intermediate_size", &c->intermediate_size));
  POOT_TRY(get_int(&f, "num_hidden_layers", &c->num_hidden_layers));
  POOT_TRY(get_int(&f, "num_attention_heads", &c->num_attention_heads));
  POOT_TRY(get_int(&f, "num_key_value_heads", &c->num_key_value_heads));
  POOT_TRY(get_int(&f, "head_dim", &c->head_dim));
  POOT_TRY(get_int(&f, "max_position_embeddings", &c->max_position_embeddings));
  POOT_TRY(get_num(&f, "rms_norm_eps", &c->rms_norm_eps));
  POOT_TRY(get_num(&f, "layer_norm_eps", &c->layer_norm_eps));
  POOT_TRY(get_num(&f, "rope_theta", &c->rope_theta));
  POOT_TRY(get_bool(&f, "tie_word_embeddings", &c->tie_word_embeddings));
  POOT_TRY(get_bool(&f, "attention_bias", &c->attention_bias));
  POOT_TRY(get_int(&f, "bos_token_id", &c->bos_token_id));
  POOT_TRY(get_ids(&f, "eos_token_id", c->eos_token_ids, &c->n_eos_token_ids));
  POOT_TRY(get_int(&f, "pad_token_id", &c->pad_token_id));
  const poot_json *rs = poot_json_get(c->root, "rope_scaling");
  if (rs && rs->type == POOT_JSON_OBJECT) c->rope_scaling = rs;
  /* transformers 5 moves rope_theta and the scaling into "rope_parameters"
   * ({"rope_type": "default"|"linear"|"llama3"|..., "rope_theta": ...}). */
  const poot_json *rp = poot_json_get(c->root, "rope_parameters");
  if (rp && rp->type == POOT_JSON_OBJECT) {
    if (!poot_json_get(c->root, "rope_theta")) {
      field_ctx pf = {rp, name};
      POOT_TRY(get_num(&pf, "rope_theta", &c->rope_theta));
    }
    const poot_json *rt = poot_json_get(rp, "rope_type");
    if (!c->rope_scaling && rt && rt->type == POOT_JSON_STRING && strcmp(rt->str, "default") != 0)
      c->rope_scaling = rp;
  }
  if (c->num_key_value_heads < 0) c->num_key_value_heads = c->num_attention_heads;
  if (c->head_dim < 0 && c->hidden_size > 0 && c->num_attention_heads > 0)
    c->head_dim = c->hidden_size / c->num_attention_heads;
  return NULL;
}

poot_status poot_hf_config_parse(const char *text, size_t len, const char *name,
                                 poot_hf_config **out_config) {
  *out_config = NULL;
  poot_hf_config *c = poot_calloc(1, sizeof *c);
  if (!c) return poot_status_make(POOT_OUT_OF_MEMORY, "config: out of memory");
  poot_arena_init(&c->arena, 0);
  if (!name) name = "config.json";
  poot_status s = parse_root(&c->arena, text, len, name, &c->root);
  if (!s) s = fill_config(c, name);
  if (s) {
    poot_hf_config_destroy(c);
    return s;
  }
  *out_config = c;
  return NULL;
}

poot_status poot_hf_config_load(const char *path, poot_hf_config **out_config) {
  *out_config = NULL;
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_file_read_all(path, &text, &len));
  poot_status s = poot_hf_config_parse(text, len, path, out_config);
  poot_free(text);
  return s;
}

void poot_hf_config_destroy(poot_hf_config *c) {
  if (!c) return;
  poot_arena_deinit(&c->arena);
  poot_free(c);
}

static poot_status fill_generation(poot_hf_generation_config *c, const char *name) {
  field_ctx f = {c->root, name};
  c->bos_token_id = c->pad_token_id = c->top_k = c->max_length = c->max_new_tokens = -1;
  c->temperature = c->top_p = c->repetition_penalty = -1;
  POOT_TRY(get_int(&f, "bos_token_id", &c->bos_token_id));
  POOT_TRY(get_ids(&f, "eos_token_id", c->eos_token_ids, &c->n_eos_token_ids));
  POOT_TRY(get_int(&f, "pad_token_id", &c->pad_token_id));
  POOT_TRY(get_bool(&f, "do_sample", &c->do_sample));
  POOT_TRY(get_num(&f, "temperature", &c->temperature));
  POOT_TRY(get_num(&f, "top_p", &c->top_p));
  POOT_TRY(get_int(&f, "top_k", &c->top_k));
  POOT_TRY(get_int(&f, "max_length", &c->max_length));
  POOT_TRY(get_int(&f, "max_new_tokens", &c->max_new_tokens));
  POOT_TRY(get_num(&f, "repetition_penalty", &c->repetition_penalty));
  return NULL;
}

poot_status poot_hf_generation_config_parse(const char *text, size_t len, const char *name,
                                            poot_hf_generation_config **out_config) {
  *out_config = NULL;
  poot_hf_generation_config *c = poot_calloc(1, sizeof *c);
  if (!c) return poot_status_make(POOT_OUT_OF_MEMORY, "generation config: out of memory");
  poot_arena_init(&c->arena, 0);
  if (!name) name = "generation_config.json";
  poot_status s = parse_root(&c->arena, text, len, name, &c->root);
  if (!s) s = fill_generation(c, name);
  if (s) {
    poot_hf_generation_config_destroy(c);
    return s;
  }
  *out_config = c;
  return NULL;
}

poot_status poot_hf_generation_config_load(const char *path,
                                           poot_hf_generation_config **out_config) {
  *out_config = NULL;
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_file_read_all(path, &text, &len));
  poot_status s = poot_hf_generation_config_parse(text, len, path, out_config);
  poot_free(text);
  return s;
}

void poot_hf_generation_config_destroy(poot_hf_generation_config *c) {
  if (!c) return;
  poot_arena_deinit(&c->arena);
  poot_free(c);
}
