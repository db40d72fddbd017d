/* from_hf.c — a Hugging Face config → poot_model_config.
 *
 * config.json has one reader, poot_hf_config (src/llm/format/hf_config.c),
 * which knows every spelling transformers 4.x and 5.x write (rope_theta +
 * rope_scaling, rope_parameters flat or keyed by layer type, text_config,
 * hidden_activation/hidden_act, …). This file maps its fields onto the
 * model config: the common ones, the rope of the global and of the sliding
 * layers, which layers slide, and — for every key that is present and would
 * change the computation in a way poot does not implement — UNSUPPORTED
 * naming the key. The loader and the converter both go through here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../vision/vision_impl.h"
#include "models_impl.h"

poot_status poot__hf_unsupported(const poot_hf_config *hf, const char *key, const char *why) {
  return poot_status_make(POOT_UNSUPPORTED, "config.json (%s): '%s' %s",
                          hf->model_type ? hf->model_type : "?", key, why);
}

static bool json_floats(const poot_json *arr, float *out, int64_t n) {
  if (!arr || arr->type != POOT_JSON_ARRAY || (int64_t)arr->len != n) return false;
  for (int64_t i = 0; i < n; i++) {
    if (arr->items[i]->type != POOT_JSON_NUMBER || !isfinite(arr->items[i]->number)) return false;
    out[i] = (float)arr->items[i]->number;
  }
  return true;
}

/* transformers' get_mscale: 0.1 * m * ln(scale) + 1 (1 for scale <= 1). */
static double yarn_mscale(double scale, double m) {
  return scale <= 1.0 ? 1.0 : 0.1 * m * log(scale) + 1.0;
}

static poot_status rope_yarn(const poot_hf_config *hf, const poot_hf_rope *r,
                             poot_model_config *c) {
  if (r->original_max_position_embeddings < 1)
    return poot__hf_unsupported(hf, "rope_parameters.rope_type",
                                "is yarn without original_max_position_embeddings");
  double f = r->factor;
  if (!(f > 0) && hf->max_position_embeddings > 0)
    f = (double)hf->max_position_embeddings / (double)r->original_max_position_embeddings;
  if (!(f > 0))
    return poot__hf_unsupported(hf, "rope_parameters.factor", "is missing for yarn");
  c->rope_scaling = POOT_MODEL_ROPE_SCALING_YARN;
  c->rope_factor = f;
  c->rope_original_context = r->original_max_position_embeddings;
  c->rope_beta_fast = r->beta_fast > 0 ? r->beta_fast : 32.0;
  c->rope_beta_slow = r->beta_slow > 0 ? r->beta_slow : 1.0;
  c->rope_yarn_no_truncate = !r->truncate;
  if (r->attention_factor > 0)
    c->rope_attn_factor = r->attention_factor;
  else if (r->mscale > 0 && r->mscale_all_dim > 0)
    c->rope_attn_factor = yarn_mscale(f, r->mscale) / yarn_mscale(f, r->mscale_all_dim);
  else
    c->rope_attn_factor = yarn_mscale(f, 1.0);
  return NULL;
}

/* One rope parameter set onto the config's scaling fields. */
static poot_status rope_scaling(const poot_hf_config *hf, const poot_hf_rope *r,
                                poot_model_config *c) {
  const char *ty = r->type;
  if (strcmp(ty, "default") == 0) return NULL;
  if (strcmp(ty, "linear") == 0) {
    if (!(r->factor > 0))
      return poot__hf_unsupported(hf, "rope_parameters.factor", "is missing for linear rope");
    c->rope_scaling = POOT_MODEL_ROPE_SCALING_LINEAR;
    c->rope_factor = r->factor;
    return NULL;
  }
  if (strcmp(ty, "dynamic") == 0) {
    if (!(r->factor > 0) || hf->max_position_embeddings < 1)
      return poot__hf_unsupported(hf, "rope_parameters.factor",
                                  "and max_position_embeddings are needed for dynamic rope");
    c->rope_scaling = POOT_MODEL_ROPE_SCALING_DYNAMIC;
    c->rope_factor = r->factor;
    c->rope_original_context = hf->max_position_embeddings;
    /* The scaling exists to run past max_position_embeddings: no bound. */
    c->context_length = 0;
    return NULL;
  }
  if (strcmp(ty, "yarn") == 0) return rope_yarn(hf, r, c);
  if (strcmp(ty, "llama3") == 0) {
    if (!(r->factor > 0) || r->original_max_position_embeddings < 1 ||
        !(r->high_freq_factor > r->low_freq_factor) || !(r->low_freq_factor > 0))
      return poot_status_make(POOT_FORMAT,
                              "config.json: llama3 rope scaling needs factor, low_freq_factor, "
                              "high_freq_factor and original_max_position_embeddings");
    c->rope_scaling = POOT_MODEL_ROPE_SCALING_LLAMA3;
    c->rope_factor = r->factor;
    c->rope_low_freq_factor = r->low_freq_factor;
    c->rope_high_freq_factor = r->high_freq_factor;
    c->rope_original_context = r->original_max_position_embeddings;
    return NULL;
  }
  if (strcmp(ty, "longrope") == 0) {
    int64_t half = c->rope_dims / 2;
    if (!json_floats(r->short_factor, c->rope_short_factors, half) ||
        !json_floats(r->long_factor, c->rope_long_factors, half))
      return poot_status_make(POOT_FORMAT,
                              "config.json: longrope needs short_factor and long_factor lists of "
                              "%lld numbers",
                              (long long)half);
    if (r->original_max_position_embeddings < 1)
      return poot_status_make(POOT_FORMAT,
                              "config.json: longrope needs original_max_position_embeddings");
    c->rope_scaling = POOT_MODEL_ROPE_SCALING_LONGROPE;
    c->rope_original_context = r->original_max_position_embeddings;
    double f = r->factor;
    if (!(f > 0))
      f = hf->max_position_embeddings > 0 ? (double)hf->max_position_embeddings /
                                                (double)r->original_max_position_embeddings
                                          : 1.0;
    c->rope_factor = f;
    if (r->attention_factor > 0) c->rope_attn_factor = r->attention_factor;
    return NULL;
  }
  char why[96];
  snprintf(why, sizeof why, "is '%s' (default, linear, dynamic, yarn, llama3, longrope are supported)",
           ty);
  return poot__hf_unsupported(hf, "rope_parameters.rope_type", why);
}

/* The sliding layers' own rope: a theta of their own, unscaled (Gemma 3);
 * any other difference from the global rope is not supported. */
static poot_status rope_sliding(const poot_hf_config *hf, poot_model_config *c) {
  const poot_hf_rope *s = &hf->rope_sliding;
  if (!s->present) return NULL;
  c->rope_theta_local = s->theta;
  if (strcmp(s->type, "default") == 0) {
    c->rope_local_unscaled = true;
    return NULL;
  }
  if (strcmp(s->type, hf->rope.type) != 0 || s->factor != hf->rope.factor)
    return poot__hf_unsupported(hf, "rope_parameters.sliding_attention",
                                "scales the sliding layers' rope differently from the global "
                                "layers' (only an unscaled sliding rope is supported)");
  c->rope_local_unscaled = false;
  return NULL;
}

/* Which layers slide: the window (none when the file sets none, or Qwen's
 * use_sliding_window is false), then `layer_types`, else the family's
 * default (every layer when it has none). */
static poot_status sliding_layers(const poot_hf_config *hf, const poot__family *f,
                                  poot_model_config *c) {
  if (hf->sliding_window <= 0 || hf->use_sliding_window == 0) return NULL;
  c->sliding_window = hf->sliding_window;
  const poot_json *lt = hf->layer_types;
  if (lt) {
    if ((int64_t)lt->len != c->n_layers)
      return poot_status_make(POOT_FORMAT, "config.json: layer_types has %zu entries for %lld layers",
                              lt->len, (long long)c->n_layers);
    for (size_t i = 0; i < lt->len; i++) {
      const char *t = lt->items[i]->str;
      if (strcmp(t, "sliding_attention") != 0 && strcmp(t, "full_attention") != 0)
        return poot__hf_unsupported(hf, "layer_types",
                                    "holds a layer type other than sliding_attention and "
                                    "full_attention");
      c->layer_sliding[i] = strcmp(t, "sliding_attention") == 0;
    }
    c->any_layer_sliding_marked = true;
    return NULL;
  }
  if (f->sliding_default) f->sliding_default(hf, c);
  return NULL;
}

/* Keys every family reads the same way. */
static poot_status common_keys(const poot_hf_config *hf, poot_model_config *c) {
  c->vocab_size = hf->vocab_size;
  c->hidden_size = hf->hidden_size;
  c->intermediate_size = hf->intermediate_size;
  c->n_layers = hf->num_hidden_layers;
  c->n_heads = hf->num_attention_heads;
  c->n_kv_heads = hf->num_key_value_heads;
  c->head_dim = hf->head_dim;
  c->context_length = hf->max_position_embeddings > 0 ? hf->max_position_embeddings : 0;
  if (hf->rms_norm_eps > 0) c->norm_eps = hf->rms_norm_eps;
  c->rope_theta = hf->rope.theta;
  c->rope_dims = (int64_t)((double)c->head_dim * hf->partial_rotary_factor);
  c->rope_mode = POOT_ROPE_NEOX;
  c->tied_output = hf->tie_word_embeddings;
  if (c->vocab_size < 1 || c->hidden_size < 1 || c->intermediate_size < 1 || c->n_layers < 1 ||
      c->n_heads < 1)
    return poot_status_make(POOT_FORMAT,
                            "config.json: vocab_size %lld, hidden_size %lld, intermediate_size "
                            "%lld, num_hidden_layers %lld, num_attention_heads %lld: each must "
                            "be present and >= 1",
                            (long long)c->vocab_size, (long long)c->hidden_size,
                            (long long)c->intermediate_size, (long long)c->n_layers,
                            (long long)c->n_heads);
  if (c->n_layers > POOT_MODEL_MAX_LAYERS)
    return poot_status_make(POOT_UNSUPPORTED, "config.json: %lld layers (at most %d)",
                            (long long)c->n_layers, POOT_MODEL_MAX_LAYERS);
  if (c->rope_dims / 2 > POOT_MODEL_MAX_ROPE_PAIRS || c->rope_dims < 2)
    return poot_status_make(POOT_UNSUPPORTED, "config.json: rotary dims %lld",
                            (long long)c->rope_dims);
  if (hf->mlp_bias) return poot__hf_unsupported(hf, "mlp_bias", "is true (no MLP biases)");
  if (hf->use_bidirectional_attention)
    return poot__hf_unsupported(hf, "use_bidirectional_attention", "is true (causal only)");
  return NULL;
}

/* The activation: SiLU (SwiGLU) or the tanh GELU (GeGLU). */
static poot_status activation(const poot_hf_config *hf, poot_model_config *c) {
  const char *a = hf->hidden_act;
  if (!a) return NULL; /* the family's default */
  if (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0) {
    c->activation = POOT_MODEL_ACT_SILU;
    return NULL;
  }
  /* transformers runs Gemma's "gelu" as the tanh approximation too. */
  bool gemma = c->family == POOT_MODEL_FAMILY_GEMMA || c->family == POOT_MODEL_FAMILY_GEMMA2 ||
               c->family == POOT_MODEL_FAMILY_GEMMA3;
  if (strcmp(a, "gelu_pytorch_tanh") == 0 || strcmp(a, "gelu_tanh") == 0 ||
      strcmp(a, "gelu_new") == 0 || (gemma && strcmp(a, "gelu") == 0)) {
    c->activation = POOT_MODEL_ACT_GELU_TANH;
    return NULL;
  }
  /* Encoders: "gelu" is the exact (erf) GELU, as transformers runs it. */
  if (c->family == POOT_MODEL_FAMILY_BERT && strcmp(a, "gelu") == 0) {
    c->activation = POOT_MODEL_ACT_GELU;
    return NULL;
  }
  char why[96];
  snprintf(why, sizeof why, "is '%s' (silu and gelu_pytorch_tanh are supported)", a);
  return poot__hf_unsupported(hf, "hidden_act/hidden_activation", why);
}

poot_status poot_model_config_from_hf(const poot_hf_config *hf, poot_model_config *out) {
  poot_model_family fam;
  /* A LLaVA wrapper runs its text_config's model (docs/vision.md). */
  if (poot__llava_architecture(hf->architecture, hf->model_type))
    POOT_TRY(poot_model_family_from_hf(NULL, poot__llava_text_model_type(hf->text), &fam));
  else
    POOT_TRY(poot_model_family_from_hf(hf->architecture, hf->model_type, &fam));
  poot_model_config_init(out, fam);
  snprintf(out->architecture, sizeof out->architecture, "%s",
           hf->architecture ? hf->architecture : hf->model_type);
  const poot__family *f = poot__family_of(fam);
  POOT_TRY(common_keys(hf, out));
  POOT_TRY(activation(hf, out));
  POOT_TRY(rope_scaling(hf, &hf->rope, out));
  POOT_TRY(rope_sliding(hf, out));
  POOT_TRY(sliding_layers(hf, f, out));
  if (f->from_hf) POOT_TRY(f->from_hf(hf, out));
  return poot_model_config_validate(out);
}
