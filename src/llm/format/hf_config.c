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

/* A rope parameter set: `obj` holds the 5.x keys (or the 4.x rope_scaling
 * object, whose type may be spelled "type"). */
static poot_status read_rope(const poot_json *obj, const char *name, const char *where,
                             poot_hf_rope *r) {
  field_ctx f = {obj, name};
  r->present = true;
  r->object = obj;
  const poot_json *ty = poot_json_get(obj, "rope_type");
  if (!ty || ty->type == POOT_JSON_NULL) ty = poot_json_get(obj, "type");
  if (ty && ty->type != POOT_JSON_NULL) {
    if (ty->type != POOT_JSON_STRING)
      return poot_status_make(POOT_FORMAT, "'%s': %s.rope_type is not a string", name, where);
    r->type = strcmp(ty->str, "su") == 0 ? "longrope" : ty->str;
  }
  POOT_TRY(get_num(&f, "rope_theta", &r->theta));
  POOT_TRY(get_num(&f, "factor", &r->factor));
  POOT_TRY(get_num(&f, "low_freq_factor", &r->low_freq_factor));
  POOT_TRY(get_num(&f, "high_freq_factor", &r->high_freq_factor));
  POOT_TRY(get_int(&f, "original_max_position_embeddings", &r->original_max_position_embeddings));
  POOT_TRY(get_num(&f, "attention_factor", &r->attention_factor));
  POOT_TRY(get_num(&f, "beta_fast", &r->beta_fast));
  POOT_TRY(get_num(&f, "beta_slow", &r->beta_slow));
  POOT_TRY(get_num(&f, "mscale", &r->mscale));
  POOT_TRY(get_num(&f, "mscale_all_dim", &r->mscale_all_dim));
  POOT_TRY(get_bool(&f, "truncate", &r->truncate));
  POOT_TRY(get_num(&f, "partial_rotary_factor", &r->partial_rotary_factor));
  const poot_json *sf = poot_json_get(obj, "short_factor"), *lf = poot_json_get(obj, "long_factor");
  if (sf && sf->type != POOT_JSON_NULL) r->short_factor = sf;
  if (lf && lf->type != POOT_JSON_NULL) r->long_factor = lf;
  return NULL;
}

static void rope_init(poot_hf_rope *r) {
  memset(r, 0, sizeof *r);
  r->type = "default";
  r->theta = NAN; /* absent until read */
  r->original_max_position_embeddings = -1;
  r->truncate = true;
}

/* The rope of the global layers and of the sliding ones, from 5.x
 * `rope_parameters` (flat, or keyed by layer type) or 4.x `rope_theta`,
 * `rope_scaling` and Gemma 3's `rope_local_base_freq`. A value missing from
 * a set falls back to the document's top-level one (transformers does the
 * same when it standardizes the parameters). */
static poot_status read_ropes(poot_hf_config *c, const char *name) {
  field_ctx f = {c->text, name};
  rope_init(&c->rope);
  rope_init(&c->rope_sliding);
  const poot_json *rp = poot_json_get(c->text, "rope_parameters");
  if (rp && rp->type != POOT_JSON_NULL && rp->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "'%s': rope_parameters is not an object", name);
  const poot_json *full = rp ? poot_json_get(rp, "full_attention") : NULL;
  const poot_json *slide = rp ? poot_json_get(rp, "sliding_attention") : NULL;
  if (full || slide) {
    if ((full && full->type != POOT_JSON_OBJECT) || (slide && slide->type != POOT_JSON_OBJECT))
      return poot_status_make(POOT_FORMAT,
                              "'%s': rope_parameters.full_attention / sliding_attention are not "
                              "objects",
                              name);
    if (full) POOT_TRY(read_rope(full, name, "rope_parameters.full_attention", &c->rope));
    if (slide) POOT_TRY(read_rope(slide, name, "rope_parameters.sliding_attention", &c->rope_sliding));
  } else if (rp && rp->type == POOT_JSON_OBJECT) {
    POOT_TRY(read_rope(rp, name, "rope_parameters", &c->rope));
  }
  const poot_json *rs = poot_json_get(c->text, "rope_scaling");
  if (rs && rs->type != POOT_JSON_NULL && rs->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "'%s': rope_scaling is not an object", name);
  if (!rp && rs && rs->type == POOT_JSON_OBJECT)
    POOT_TRY(read_rope(rs, name, "rope_scaling", &c->rope));
  /* Top-level values fill what a set leaves out. */
  /* Absent is NAN; a present value is kept as it is (the model config's
   * validation refuses a theta that is not > 0). */
  double theta = NAN, local = NAN;
  POOT_TRY(get_num(&f, "rope_theta", &theta));
  POOT_TRY(get_num(&f, "rope_local_base_freq", &local));
  if (isnan(c->rope.theta)) c->rope.theta = isnan(theta) ? 10000.0 : theta;
  c->rope.present = true;
  if (!isnan(local) && !c->rope_sliding.present) {
    c->rope_sliding.present = true;
    c->rope_sliding.theta = local;
  }
  if (c->rope_sliding.present && isnan(c->rope_sliding.theta))
    c->rope_sliding.theta = c->rope.theta;
  poot_hf_rope *sets[2] = {&c->rope, &c->rope_sliding};
  for (int i = 0; i < 2; i++) {
    if (sets[i]->original_max_position_embeddings < 0)
      sets[i]->original_max_position_embeddings = c->original_max_position_embeddings;
    if (!(sets[i]->partial_rotary_factor > 0))
      sets[i]->partial_rotary_factor = c->partial_rotary_factor;
  }
  c->rope_theta = c->rope.theta;
  c->partial_rotary_factor = c->rope.partial_rotary_factor;
  if (strcmp(c->rope.type, "default") != 0) c->rope_scaling = c->rope.object;
  return NULL;
}

/* The sliding-window and soft-capping keys (Mistral, Qwen 2, Gemma 2/3, Phi-3). */
static poot_status read_attention(poot_hf_config *c, const char *name) {
  field_ctx f = {c->text, name};
  c->sliding_window = c->max_window_layers = c->sliding_window_pattern = -1;
  c->use_sliding_window = -1;
  POOT_TRY(get_int(&f, "sliding_window", &c->sliding_window));
  bool use = false;
  const poot_json *u = poot_json_get(c->text, "use_sliding_window");
  if (u && u->type != POOT_JSON_NULL) {
    POOT_TRY(get_bool(&f, "use_sliding_window", &use));
    c->use_sliding_window = use ? 1 : 0;
  }
  POOT_TRY(get_int(&f, "max_window_layers", &c->max_window_layers));
  POOT_TRY(get_int(&f, "sliding_window_pattern", &c->sliding_window_pattern));
  if (c->sliding_window_pattern < 0)
    POOT_TRY(get_int(&f, "_sliding_window_pattern", &c->sliding_window_pattern));
  const poot_json *lt = poot_json_get(c->text, "layer_types");
  if (lt && lt->type != POOT_JSON_NULL) {
    if (lt->type != POOT_JSON_ARRAY)
      return poot_status_make(POOT_FORMAT, "'%s': layer_types is not a list", name);
    for (size_t i = 0; i < lt->len; i++)
      if (lt->items[i]->type != POOT_JSON_STRING)
        return poot_status_make(POOT_FORMAT, "'%s': layer_types[%zu] is not a string", name, i);
    c->layer_types = lt;
  }
  POOT_TRY(get_num(&f, "attn_logit_softcapping", &c->attn_logit_softcapping));
  POOT_TRY(get_num(&f, "final_logit_softcapping", &c->final_logit_softcapping));
  POOT_TRY(get_num(&f, "query_pre_attn_scalar", &c->query_pre_attn_scalar));
  POOT_TRY(get_bool(&f, "use_bidirectional_attention", &c->use_bidirectional_attention));
  return NULL;
}

static poot_status fill_config(poot_hf_config *c, const char *name) {
  field_ctx top = {c->root, name};
  c->vocab_size = c->hidden_size = c->intermediate_size = c->num_hidden_layers = -1;
  c->num_attention_heads = c->num_key_value_heads = c->head_dim = -1;
  c->max_position_embeddings = c->original_max_position_embeddings = -1;
  c->bos_token_id = c->pad_token_id = -1;
  c->partial_rotary_factor = 1.0;
  POOT_TRY(get_str(&top, "model_type", &c->model_type));
  POOT_TRY(get_str(&top, "torch_dtype", &c->torch_dtype));
  /* transformers 5 writes "dtype" instead of "torch_dtype". */
  if (!c->torch_dtype) POOT_TRY(get_str(&top, "dtype", &c->torch_dtype));
  const poot_json *arch = poot_json_get(c->root, "architectures");
  if (arch && arch->type == POOT_JSON_ARRAY && arch->len &&
      arch->items[0]->type == POOT_JSON_STRING)
    c->architecture = arch->items[0]->str;
  c->text = c->root;
  const poot_json *tc = poot_json_get(c->root, "text_config");
  if (tc && tc->type == POOT_JSON_OBJECT) c->text = tc;
  field_ctx f = {c->text, name};
  POOT_TRY(get_int(&f, "vocab_size", &c->vocab_size));
  POOT_TRY(get_int(&f, "hidden_size", &c->hidden_size));
  POOT_TRY(get_int(&f, "intermediate_size", &c->intermediate_size));
  POOT_TRY(get_int(&f, "num_hidden_layers", &c->num_hidden_layers));
  POOT_TRY(get_int(&f, "num_attention_heads", &c->num_attention_heads));
  POOT_TRY(get_int(&f, "num_key_value_heads", &c->num_key_value_heads));
  POOT_TRY(get_int(&f, "head_dim", &c->head_dim));
  POOT_TRY(get_int(&f, "max_position_embeddings", &c->max_position_embeddings));
  POOT_TRY(
      get_int(&f, "original_max_position_embeddings", &c->original_max_position_embeddings));
  POOT_TRY(get_num(&f, "rms_norm_eps", &c->rms_norm_eps));
  POOT_TRY(get_num(&f, "layer_norm_eps", &c->layer_norm_eps));
  POOT_TRY(get_num(&f, "partial_rotary_factor", &c->partial_rotary_factor));
  if (poot_json_get(c->text, "tie_word_embeddings"))
    POOT_TRY(get_bool(&f, "tie_word_embeddings", &c->tie_word_embeddings));
  else
    POOT_TRY(get_bool(&top, "tie_word_embeddings", &c->tie_word_embeddings));
  POOT_TRY(get_bool(&f, "attention_bias", &c->attention_bias));
  POOT_TRY(get_bool(&f, "mlp_bias", &c->mlp_bias));
  POOT_TRY(get_str(&f, "hidden_activation", &c->hidden_act));
  if (!c->hidden_act) POOT_TRY(get_str(&f, "hidden_act", &c->hidden_act));
  POOT_TRY(get_int(&top, "bos_token_id", &c->bos_token_id));
  POOT_TRY(get_ids(&top, "eos_token_id", c->eos_token_ids, &c->n_eos_token_ids));
  POOT_TRY(get_int(&top, "pad_token_id", &c->pad_token_id));
  POOT_TRY(read_ropes(c, name));
  POOT_TRY(read_attention(c, name));
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
