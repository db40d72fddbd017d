/* family.c — the family table: names, detection from GGUF and Hugging Face
 * strings, config defaults, validation, the common config readers and the
 * weight maps. Each family's own rules live in models/<family>.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

static const poot__family *const families[] = {
    &poot__family_llama,  &poot__family_mistral, &poot__family_qwen2,
    &poot__family_qwen3,  &poot__family_gemma,   &poot__family_gemma2,
    &poot__family_gemma3, &poot__family_phi3,    &poot__family_bert,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

const poot__family *poot__family_of(poot_model_family family) {
  for (size_t i = 0; i < N_FAMILIES; i++)
    if (families[i]->family == family) return families[i];
  return NULL;
}

const char *poot_model_family_name(poot_model_family family) {
  switch (family) {
    case POOT_MODEL_FAMILY_LLAMA:
      return "llama";
    case POOT_MODEL_FAMILY_MISTRAL:
      return "mistral";
    case POOT_MODEL_FAMILY_QWEN2:
      return "qwen2";
    case POOT_MODEL_FAMILY_QWEN3:
      return "qwen3";
    case POOT_MODEL_FAMILY_GEMMA:
      return "gemma";
    case POOT_MODEL_FAMILY_GEMMA2:
      return "gemma2";
    case POOT_MODEL_FAMILY_GEMMA3:
      return "gemma3";
    case POOT_MODEL_FAMILY_PHI3:
      return "phi3";
    case POOT_MODEL_FAMILY_BERT:
      return "bert";
    default:
      return "?";
  }
}

bool poot_model_is_encoder(const poot_model_config *c) {
  return c && c->family == POOT_MODEL_FAMILY_BERT;
}

const char *poot_model_pooling_name(poot_model_pooling p) {
  switch (p) {
    case POOT_MODEL_POOLING_DEFAULT:
      return "default";
    case POOT_MODEL_POOLING_MEAN:
      return "mean";
    case POOT_MODEL_POOLING_CLS:
      return "cls";
    case POOT_MODEL_POOLING_LAST:
      return "last";
    default:
      return "?";
  }
}

poot_status poot_model_pooling_from_name(const char *name, poot_model_pooling *out) {
  *out = POOT_MODEL_POOLING_DEFAULT;
  static const poot_model_pooling all[] = {POOT_MODEL_POOLING_MEAN, POOT_MODEL_POOLING_CLS,
                                           POOT_MODEL_POOLING_LAST};
  for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(name, poot_model_pooling_name(all[i])) == 0) {
      *out = all[i];
      return NULL;
    }
  return BAD("pooling '%s' is not one of mean, cls, last", name ? name : "(null)");
}

static bool in_list(const char *const *list, const char *s) {
  if (!list || !s) return false;
  for (; *list; list++)
    if (strcmp(*list, s) == 0) return true;
  return false;
}

poot_status poot_model_family_from_gguf_arch(const char *arch, poot_model_family *out_family) {
  *out_family = POOT_MODEL_FAMILY_NONE;
  for (size_t i = 0; i < N_FAMILIES; i++)
    if (in_list(families[i]->gguf_archs, arch)) {
      *out_family = families[i]->family;
      return NULL;
    }
  return poot_status_make(POOT_UNSUPPORTED,
                          "GGUF architecture '%s' is not supported (llama, qwen2, qwen3, gemma, "
                          "gemma2, gemma3, phi3, bert are)",
                          arch ? arch : "(none)");
}

poot_status poot_model_family_from_hf(const char *architecture, const char *model_type,
                                      poot_model_family *out_family) {
  *out_family = POOT_MODEL_FAMILY_NONE;
  for (size_t i = 0; i < N_FAMILIES; i++)
    if (in_list(families[i]->hf_archs, architecture)) {
      *out_family = families[i]->family;
      return NULL;
    }
  for (size_t i = 0; i < N_FAMILIES; i++)
    if (in_list(families[i]->hf_model_types, model_type)) {
      *out_family = families[i]->family;
      return NULL;
    }
  return poot_status_make(POOT_UNSUPPORTED,
                          "Hugging Face architecture '%s' (model_type '%s') is not supported "
                          "(Llama, Mistral, Qwen2, Qwen3, Gemma 1/2/3, Phi-3, BERT are)",
                          architecture ? architecture : "(none)",
                          model_type ? model_type : "(none)");
}

void poot_model_config_init(poot_model_config *c, poot_model_family family) {
  memset(c, 0, sizeof *c);
  c->family = family;
  c->rope_mode = POOT_ROPE_NEOX;
  c->rope_theta = 10000.0;
  c->norm_eps = 1e-5;
  snprintf(c->architecture, sizeof c->architecture, "%s", poot_model_family_name(family));
  const poot__family *f = poot__family_of(family);
  if (f && f->defaults) f->defaults(c);
}

poot_status poot_model_config_validate(const poot_model_config *c) {
  if (!poot__family_of(c->family)) return BAD("model config: unknown family %d", (int)c->family);
  if (c->vocab_size < 1 || c->hidden_size < 1 || c->intermediate_size < 1 || c->n_layers < 1 ||
      c->n_heads < 1 || c->n_kv_heads < 1 || c->head_dim < 1)
    return BAD(
        "model config: vocab_size, hidden_size, intermediate_size, n_layers, n_heads, "
        "n_kv_heads and head_dim must all be >= 1");
  if (c->n_layers > POOT_MODEL_MAX_LAYERS)
    return BAD("model config: %lld layers (at most %d)", (long long)c->n_layers,
               POOT_MODEL_MAX_LAYERS);
  if (c->n_heads % c->n_kv_heads)
    return BAD("model config: n_heads %lld is not a multiple of n_kv_heads %lld",
               (long long)c->n_heads, (long long)c->n_kv_heads);
  if (c->rope_dims < 2 || c->rope_dims % 2 || c->rope_dims > c->head_dim ||
      c->rope_dims / 2 > POOT_MODEL_MAX_ROPE_PAIRS)
    return BAD("model config: rope_dims %lld must be even, >= 2 and <= head_dim %lld",
               (long long)c->rope_dims, (long long)c->head_dim);
  if (!(c->rope_theta > 0) || !isfinite(c->rope_theta))
    return BAD("model config: rope_theta must be > 0");
  if (!(c->rope_theta_local >= 0) || !isfinite(c->rope_theta_local))
    return BAD("model config: the sliding layers' rope_theta must be > 0");
  if (c->rope_scaling != POOT_MODEL_ROPE_SCALING_NONE &&
      c->rope_scaling != POOT_MODEL_ROPE_SCALING_FREQS && !(c->rope_factor > 0))
    return BAD("model config: rope scaling needs a factor > 0");
  if (c->rope_scaling == POOT_MODEL_ROPE_SCALING_LLAMA3 &&
      (c->rope_original_context < 1 || !(c->rope_high_freq_factor > c->rope_low_freq_factor)))
    return BAD(
        "model config: llama3 rope scaling needs original_max_position_embeddings and "
        "high_freq_factor > low_freq_factor");
  if (!(c->norm_eps >= 0)) return BAD("model config: norm_eps must be >= 0");
  if (c->sliding_window < 0) return BAD("model config: sliding_window must be >= 0");
  return NULL;
}

/* ------------------------------------------------------------- JSON helpers */

const poot_json *poot__json_member(const poot_json *obj, const char *key) {
  if (!obj || obj->type != POOT_JSON_OBJECT) return NULL;
  const poot_json *v = poot_json_get(obj, key);
  return v && v->type != POOT_JSON_NULL ? v : NULL;
}

bool poot__json_number(const poot_json *obj, const char *key, double *out) {
  const poot_json *v = poot__json_member(obj, key);
  if (!v || v->type != POOT_JSON_NUMBER) return false;
  *out = v->number;
  return true;
}

bool poot__json_bool(const poot_json *obj, const char *key, bool *out) {
  const poot_json *v = poot__json_member(obj, key);
  if (!v || v->type != POOT_JSON_BOOL) return false;
  *out = v->boolean;
  return true;
}

/* ----------------------------------------------------- common config: GGUF */

static poot_status gguf_lookup(const poot_gguf *g, const char *arch, const char *key,
                               const poot_gguf_value **out) {
  char k[160];
  snprintf(k, sizeof k, "%s.%s", arch, key);
  *out = poot_gguf_find(g, k);
  return NULL;
}

bool poot__gguf_arch_f64(const poot_gguf *g, const char *arch, const char *key, double *out) {
  char k[160];
  snprintf(k, sizeof k, "%s.%s", arch, key);
  if (!poot_gguf_find(g, k)) return false;
  poot_status st = poot_gguf_get_f64(g, k, out);
  if (st) {
    poot_status_free(st);
    return false;
  }
  return true;
}

bool poot__gguf_arch_i64(const poot_gguf *g, const char *arch, const char *key, int64_t *out) {
  char k[160];
  snprintf(k, sizeof k, "%s.%s", arch, key);
  if (!poot_gguf_find(g, k)) return false;
  poot_status st = poot_gguf_get_i64(g, k, out);
  if (st) {
    poot_status_free(st);
    return false;
  }
  return true;
}

/* `<arch>.rope.scaling.*` as llama.cpp writes them: linear and yarn from
 * keys; longrope's factors are tensors (read by the Phi-3 family), llama3's
 * the rope_freqs tensor (below). */
static poot_status rope_scaling_from_gguf(const poot_gguf *g, const char *arch,
                                          poot_model_config *out) {
  const poot_gguf_value *val = NULL;
  (void)gguf_lookup(g, arch, "rope.scaling.type", &val);
  if (!val) return NULL;
  if (val->type != POOT_GGUF_VALUE_STRING)
    return poot_status_make(POOT_FORMAT, "GGUF: %s.rope.scaling.type is not a string", arch);
  char ty[32];
  snprintf(ty, sizeof ty, "%.*s", (int)(val->str.len < 31 ? val->str.len : 31), val->str.data);
  double d = 0;
  int64_t v = 0;
  if (strcmp(ty, "none") == 0 || strcmp(ty, "longrope") == 0) return NULL;
  if (strcmp(ty, "linear") == 0) {
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.factor", &d) && d > 0 && d != 1.0) {
      out->rope_scaling = POOT_MODEL_ROPE_SCALING_LINEAR;
      out->rope_factor = d;
    }
    return NULL;
  }
  if (strcmp(ty, "yarn") == 0) {
    if (!poot__gguf_arch_f64(g, arch, "rope.scaling.factor", &d) || !(d > 0) ||
        !poot__gguf_arch_i64(g, arch, "rope.scaling.original_context_length", &v) || v < 1)
      return poot_status_make(POOT_FORMAT,
                              "GGUF: yarn rope scaling needs %s.rope.scaling.factor and "
                              "original_context_length",
                              arch);
    out->rope_scaling = POOT_MODEL_ROPE_SCALING_YARN;
    out->rope_factor = d;
    out->rope_original_context = v;
    out->rope_beta_fast = 32.0;
    out->rope_beta_slow = 1.0;
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.yarn_beta_fast", &d) && d > 0)
      out->rope_beta_fast = d;
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.yarn_beta_slow", &d) && d > 0)
      out->rope_beta_slow = d;
    out->rope_attn_factor = out->rope_factor <= 1.0 ? 1.0 : 0.1 * log(out->rope_factor) + 1.0;
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.yarn_attn_factor", &d) && d > 0)
      out->rope_attn_factor = d;
    double ext = 0;
    if (poot__gguf_arch_f64(g, arch, "rope.scaling.yarn_ext_factor", &ext) && ext != 1.0 &&
        ext >= 0)
      return poot_status_make(POOT_UNSUPPORTED,
                              "GGUF: %s.rope.scaling.yarn_ext_factor %g is not supported (1 is)",
                              arch, ext);
    return NULL;
  }
  return poot_status_make(POOT_UNSUPPORTED,
                          "GGUF: %s.rope.scaling.type '%s' is not supported (none, linear, yarn, "
                          "longrope are)",
                          arch, ty);
}

/* `<arch>.attention.sliding_window` and which layers slide: the
 * `attention.sliding_window_pattern` bool array (or a period: a layer is
 * global when (i + 1) % period == 0), else the family's default (Gemma 2:
 * even layers; Gemma 3: period 6; others: every layer). Gemma 3's sliding
 * layers have their own base, `rope.freq_base_swa`. */
static poot_status sliding_from_gguf(const poot_gguf *g, const char *arch,
                                     poot_model_config *c) {
  int64_t w = 0;
  double d = 0;
  if (poot__gguf_arch_f64(g, arch, "rope.freq_base_swa", &d) && d > 0) c->rope_theta_local = d;
  if (!poot__gguf_arch_i64(g, arch, "attention.sliding_window", &w) || w <= 0) return NULL;
  c->sliding_window = w;
  int64_t period = c->family == POOT_MODEL_FAMILY_GEMMA2   ? 2
                   : c->family == POOT_MODEL_FAMILY_GEMMA3 ? 6
                                                           : 0;
  char key[128]; /* arch: at most 63 bytes (poot_model_config_from_gguf) */
  snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", arch);
  const poot_gguf_value *pat = poot_gguf_find(g, key);
  if (pat && pat->type == POOT_GGUF_VALUE_ARRAY) {
    if (poot_gguf_array_len(pat) != (uint64_t)c->n_layers)
      return poot_status_make(POOT_FORMAT, "GGUF: %s has %llu entries for %lld layers", key,
                              (unsigned long long)poot_gguf_array_len(pat),
                              (long long)c->n_layers);
    for (int64_t i = 0; i < c->n_layers; i++) {
      bool b = false;
      poot_status st = poot_gguf_array_get_bool(pat, (uint64_t)i, &b);
      if (st) return poot_status_annotate(st, "GGUF: %s: ", key);
      c->layer_sliding[i] = b;
    }
    c->any_layer_sliding_marked = true;
    return NULL;
  }
  int64_t p = 0;
  if (pat && poot__gguf_arch_i64(g, arch, "attention.sliding_window_pattern", &p) && p >= 1)
    period = p;
  if (period < 1) return NULL; /* every layer */
  for (int64_t i = 0; i < c->n_layers; i++) c->layer_sliding[i] = ((i + 1) % period) != 0;
  c->any_layer_sliding_marked = true;
  return NULL;
}

poot_status poot_model_config_from_gguf(const poot_gguf *g, const poot_store *store,
                                        poot_model_config *out) {
  const char *archd = NULL;
  size_t alen = 0;
  char arch[64] = "";
  poot_status st = poot_gguf_get_string(g, "general.architecture", &archd, &alen);
  if (st) return poot_status_annotate(st, "GGUF model");
  snprintf(arch, sizeof arch, "%.*s", (int)(alen < 63 ? alen : 63), archd);
  poot_model_family fam;
  POOT_TRY(poot_model_family_from_gguf_arch(arch, &fam));
  poot_model_config_init(out, fam);
  snprintf(out->architecture, sizeof out->architecture, "%s", arch);
  int64_t v = 0;
  double d = 0;
  if (poot__gguf_arch_i64(g, arch, "embedding_length", &v)) out->hidden_size = v;
  if (poot__gguf_arch_i64(g, arch, "feed_forward_length", &v)) out->intermediate_size = v;
  if (poot__gguf_arch_i64(g, arch, "block_count", &v)) out->n_layers = v;
  if (poot__gguf_arch_i64(g, arch, "attention.head_count", &v)) out->n_heads = v;
  out->n_kv_heads = out->n_heads;
  if (poot__gguf_arch_i64(g, arch, "attention.head_count_kv", &v)) out->n_kv_heads = v;
  if (poot__gguf_arch_i64(g, arch, "context_length", &v)) out->context_length = v;
  out->head_dim = out->n_heads > 0 ? out->hidden_size / out->n_heads : 0;
  if (poot__gguf_arch_i64(g, arch, "attention.key_length", &v)) out->head_dim = v;
  out->rope_dims = out->head_dim;
  if (poot__gguf_arch_i64(g, arch, "rope.dimension_count", &v)) out->rope_dims = v;
  if (poot__gguf_arch_f64(g, arch, "attention.layer_norm_rms_epsilon", &d)) out->norm_eps = d;
  if (poot__gguf_arch_f64(g, arch, "rope.freq_base", &d)) out->rope_theta = d;
  POOT_TRY(rope_scaling_from_gguf(g, arch, out));
  out->vocab_size = 0;
  if (poot__gguf_arch_i64(g, arch, "vocab_size", &v)) out->vocab_size = v;
  const poot_gguf_tensor *te = poot_gguf_find_tensor(g, "token_embd.weight");
  if (te && te->n_dims == 2) {
    if (out->vocab_size <= 0) out->vocab_size = (int64_t)te->dims[1];
  }
  if (out->vocab_size <= 0) {
    const poot_gguf_value *toks = poot_gguf_find(g, "tokenizer.ggml.tokens");
    if (toks) out->vocab_size = (int64_t)poot_gguf_array_len(toks);
  }
  out->tied_output = poot_gguf_find_tensor(g, "output.weight") == NULL;
  /* llama.cpp's GGUF llama files carry Q/K permuted to the interleaved layout. */
  out->rope_mode = POOT_ROPE_NEOX;
  /* Per-frequency divisors (llama3 scaling as llama.cpp stores it). */
  const poot_gguf_tensor *rf = poot_gguf_find_tensor(g, "rope_freqs.weight");
  if (rf && rf->type == POOT_GGUF_TYPE_F32 && (int64_t)rf->n_elements == out->rope_dims / 2 &&
      out->rope_dims / 2 <= POOT_MODEL_MAX_ROPE_PAIRS) {
    memcpy(out->rope_short_factors, rf->data, (size_t)rf->n_elements * sizeof(float));
    out->rope_scaling = POOT_MODEL_ROPE_SCALING_FREQS;
  }
  if (out->vocab_size < 1 || out->hidden_size < 1 || out->n_layers < 1 || out->n_heads < 1)
    return poot_status_make(POOT_FORMAT,
                            "GGUF: %s.embedding_length, block_count, attention.head_count or the "
                            "vocabulary is missing",
                            arch);
  if (out->n_layers > POOT_MODEL_MAX_LAYERS)
    return poot_status_make(POOT_UNSUPPORTED, "GGUF: %lld layers (at most %d)",
                            (long long)out->n_layers, POOT_MODEL_MAX_LAYERS);
  /* Per-layer marks: only once the layer count is known to fit them. */
  POOT_TRY(sliding_from_gguf(g, arch, out));
  const poot__family *f = poot__family_of(fam);
  if (f->from_gguf) POOT_TRY(f->from_gguf(g, arch, store, out));
  return poot_model_config_validate(out);
}

poot_status poot_model_config_from_llama2c(const poot_llama2c_config *l, poot_model_config *out) {
  poot_model_config_init(out, POOT_MODEL_FAMILY_LLAMA);
  snprintf(out->architecture, sizeof out->architecture, "llama2.c");
  out->vocab_size = l->vocab_size;
  out->hidden_size = l->dim;
  out->intermediate_size = l->hidden_dim;
  out->n_layers = l->n_layers;
  out->n_heads = l->n_heads;
  out->n_kv_heads = l->n_kv_heads;
  out->head_dim = l->n_heads > 0 ? l->dim / l->n_heads : 0;
  out->rope_dims = out->head_dim;
  out->rope_mode = POOT_ROPE_NORM;
  out->rope_theta = 10000.0;
  out->norm_eps = 1e-5;
  out->context_length = l->seq_len;
  out->tied_output = l->shared_classifier;
  return poot_model_config_validate(out);
}

/* ------------------------------------------------------------- weight maps */

static const char *role_name(poot_weight_role role) {
  return poot_weight_role_name(role);
}

static bool gguf_name(const poot_weight_ref *ref, char *buf, size_t n) {
  const char *r = role_name(ref->role);
  size_t len = strlen(r);
  bool bias = len > 5 && strcmp(r + len - 5, "_bias") == 0;
  int w;
  if (ref->layer >= 0)
    w = snprintf(buf, n, "blk.%d.%.*s.%s", (int)ref->layer, (int)(bias ? len - 5 : len), r,
                 bias ? "bias" : "weight");
  else
    w = snprintf(buf, n, "%.*s.%s", (int)(bias ? len - 5 : len), r, bias ? "bias" : "weight");
  return w > 0 && (size_t)w < n;
}

typedef struct std_name {
  poot_weight_role role;
  const char *hf;
  const char *meta;
} std_name;

static const std_name std_names[] = {
    {POOT_WEIGHT_TOKEN_EMBD, "model.embed_tokens.weight", "tok_embeddings.weight"},
    {POOT_WEIGHT_OUTPUT_NORM, "model.norm.weight", "norm.weight"},
    {POOT_WEIGHT_OUTPUT, "lm_head.weight", "output.weight"},
    {POOT_WEIGHT_ATTN_NORM, "model.layers.%d.input_layernorm.weight",
     "layers.%d.attention_norm.weight"},
    {POOT_WEIGHT_ATTN_Q, "model.layers.%d.self_attn.q_proj.weight",
     "layers.%d.attention.wq.weight"},
    {POOT_WEIGHT_ATTN_K, "model.layers.%d.self_attn.k_proj.weight",
     "layers.%d.attention.wk.weight"},
    {POOT_WEIGHT_ATTN_V, "model.layers.%d.self_attn.v_proj.weight",
     "layers.%d.attention.wv.weight"},
    {POOT_WEIGHT_ATTN_OUTPUT, "model.layers.%d.self_attn.o_proj.weight",
     "layers.%d.attention.wo.weight"},
    {POOT_WEIGHT_ATTN_Q_BIAS, "model.layers.%d.self_attn.q_proj.bias", NULL},
    {POOT_WEIGHT_ATTN_K_BIAS, "model.layers.%d.self_attn.k_proj.bias", NULL},
    {POOT_WEIGHT_ATTN_V_BIAS, "model.layers.%d.self_attn.v_proj.bias", NULL},
    {POOT_WEIGHT_ATTN_QKV, "model.layers.%d.self_attn.qkv_proj.weight", NULL},
    {POOT_WEIGHT_ATTN_Q_NORM, "model.layers.%d.self_attn.q_norm.weight", NULL},
    {POOT_WEIGHT_ATTN_K_NORM, "model.layers.%d.self_attn.k_norm.weight", NULL},
    {POOT_WEIGHT_FFN_NORM, "model.layers.%d.post_attention_layernorm.weight",
     "layers.%d.ffn_norm.weight"},
    {POOT_WEIGHT_FFN_GATE, "model.layers.%d.mlp.gate_proj.weight",
     "layers.%d.feed_forward.w1.weight"},
    {POOT_WEIGHT_FFN_UP, "model.layers.%d.mlp.up_proj.weight", "layers.%d.feed_forward.w3.weight"},
    {POOT_WEIGHT_FFN_DOWN, "model.layers.%d.mlp.down_proj.weight",
     "layers.%d.feed_forward.w2.weight"},
};

bool poot__weight_name_standard(poot_weight_naming naming, const poot_weight_ref *ref, char *buf,
                                size_t n) {
  if (naming == POOT_WEIGHT_NAMING_GGUF) return gguf_name(ref, buf, n);
  for (size_t i = 0; i < sizeof std_names / sizeof std_names[0]; i++) {
    if (std_names[i].role != ref->role) continue;
    const char *fmt = naming == POOT_WEIGHT_NAMING_HF ? std_names[i].hf : std_names[i].meta;
    if (!fmt) return false;
    int w = ref->layer >= 0 ? snprintf(buf, n, fmt, (int)ref->layer) : snprintf(buf, n, "%s", fmt);
    return w > 0 && (size_t)w < n;
  }
  return false;
}

/* The roles a config's trace reads (the map binds exactly these). */
static size_t config_roles(const poot_model_config *c, poot_weight_role *out) {
  size_t n = 0;
  out[n++] = POOT_WEIGHT_ATTN_NORM;
  if (c->fused_qkv) {
    out[n++] = POOT_WEIGHT_ATTN_QKV;
    if (c->qkv_bias) out[n++] = POOT_WEIGHT_ATTN_QKV_BIAS;
  } else {
    out[n++] = POOT_WEIGHT_ATTN_Q;
    out[n++] = POOT_WEIGHT_ATTN_K;
    out[n++] = POOT_WEIGHT_ATTN_V;
    if (c->qkv_bias) {
      out[n++] = POOT_WEIGHT_ATTN_Q_BIAS;
      out[n++] = POOT_WEIGHT_ATTN_K_BIAS;
      out[n++] = POOT_WEIGHT_ATTN_V_BIAS;
    }
  }
  if (c->qk_norm) {
    out[n++] = POOT_WEIGHT_ATTN_Q_NORM;
    out[n++] = POOT_WEIGHT_ATTN_K_NORM;
  }
  out[n++] = POOT_WEIGHT_ATTN_OUTPUT;
  if (c->post_norms) {
    out[n++] = POOT_WEIGHT_ATTN_POST_NORM;
    out[n++] = POOT_WEIGHT_FFN_POST_NORM;
  }
  out[n++] = POOT_WEIGHT_FFN_NORM;
  if (!c->fused_gate_up) out[n++] = POOT_WEIGHT_FFN_GATE;
  out[n++] = POOT_WEIGHT_FFN_UP;
  out[n++] = POOT_WEIGHT_FFN_DOWN;
  return n;
}

poot_status poot_model_weight_map_create(const poot_model_config *c, poot_weight_naming naming,
                                         poot_weight_map **out_map) {
  *out_map = NULL;
  POOT_TRY(poot_model_config_validate(c));
  const poot__family *f = poot__family_of(c->family);
  if (naming == POOT_WEIGHT_NAMING_LLAMA2C && c->family != POOT_MODEL_FAMILY_LLAMA)
    return poot_status_make(POOT_UNSUPPORTED, "family %s has no llama2.c naming",
                            poot_model_family_name(c->family));
  poot_weight_map *map = NULL;
  POOT_TRY(poot_weight_map_create(&map));
  poot_status st = NULL;
  char name[256];
  poot_weight_role globals[32] = {POOT_WEIGHT_TOKEN_EMBD, POOT_WEIGHT_OUTPUT_NORM,
                                  POOT_WEIGHT_OUTPUT};
  size_t ng = f->roles ? f->roles(c, false, globals) : 3;
  for (size_t i = 0; i < ng && !st; i++) {
    poot_weight_ref ref = {.role = globals[i], .layer = -1};
    /* A tied classifier reads TOKEN_EMBD; OUTPUT stays unbound. */
    if (globals[i] == POOT_WEIGHT_OUTPUT && c->tied_output) continue;
    if (!f->weight_name(c, naming, &ref, name, sizeof name)) {
      st = poot_status_make(
          POOT_UNSUPPORTED, "family %s has no %s name for %s", poot_model_family_name(c->family),
          naming == POOT_WEIGHT_NAMING_GGUF ? "GGUF" : "safetensors", role_name(globals[i]));
      break;
    }
    st = poot_weight_map_bind(map, &ref, name);
  }
  poot_weight_role roles[32];
  size_t nr = f->roles ? f->roles(c, true, roles) : config_roles(c, roles);
  for (int32_t L = 0; L < (int32_t)c->n_layers && !st; L++) {
    for (size_t i = 0; i < nr && !st; i++) {
      poot_weight_ref ref = {.role = roles[i], .layer = L};
      if (!f->weight_name(c, naming, &ref, name, sizeof name)) {
        st = poot_status_make(POOT_UNSUPPORTED, "family %s has no name for %s in this format",
                              poot_model_family_name(c->family), role_name(roles[i]));
        break;
      }
      st = poot_weight_map_bind(map, &ref, name);
    }
  }
  if (st) {
    poot_weight_map_destroy(map);
    return st;
  }
  *out_map = map;
  return NULL;
}
