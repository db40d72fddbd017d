/* bert.c — the BERT family: BERT-style encoders (BERT, and the MiniLM, BGE
 * and E5 embedding models built on it; cross-encoders as
 * BertForSequenceClassification). Word + position + token-type embeddings,
 * an embedding LayerNorm, post-norm blocks with biased projections and the
 * exact GELU, bidirectional attention; the graph is traced by encoder.c.
 *
 * Configuration comes from config.json (the one reader, poot_hf_config) plus
 * sentence-transformers' files beside it (modules.json, the Pooling module's
 * config.json, a Normalize module), or from GGUF metadata as llama.cpp's
 * converter writes the `bert` architecture (`bert.pooling_type`). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models_impl.h"

static void bert_defaults(poot_model_config *c) {
  c->norm_eps = 1e-12;
  c->activation = POOT_MODEL_ACT_GELU;
  c->type_vocab_size = 2;
  c->pooling = POOT_MODEL_POOLING_MEAN;
}

/* The number of labels of a classification head: num_labels, else the size
 * of id2label. */
static int64_t hf_labels(const poot_json *root) {
  double d = 0;
  if (poot__json_number(root, "num_labels", &d) && d >= 1) return (int64_t)d;
  const poot_json *m = poot__json_member(root, "id2label");
  if (m && m->type == POOT_JSON_OBJECT && m->len > 0) return (int64_t)m->len;
  return 1;
}

static poot_status bert_from_hf(const poot_hf_config *hf, poot_model_config *c) {
  const poot_json *root = hf->text;
  double d = 0;
  if (hf->layer_norm_eps > 0) c->norm_eps = hf->layer_norm_eps;
  if (poot__json_number(root, "type_vocab_size", &d)) c->type_vocab_size = (int64_t)d;
  if (c->type_vocab_size < 1)
    return poot_status_make(POOT_FORMAT, "config.json: type_vocab_size must be >= 1");
  if (c->context_length < 1)
    return poot_status_make(POOT_FORMAT, "config.json: max_position_embeddings is missing");
  const poot_json *pe = poot__json_member(root, "position_embedding_type");
  if (pe && pe->type == POOT_JSON_STRING && strcmp(pe->str, "absolute") != 0)
    return poot__hf_unsupported(hf, "position_embedding_type",
                                "is not 'absolute' (only absolute position embeddings are "
                                "supported)");
  bool is_decoder = false;
  if (poot__json_bool(root, "is_decoder", &is_decoder) && is_decoder)
    return poot__hf_unsupported(hf, "is_decoder", "is true (BERT runs as an encoder only)");
  const char *arch = hf->architecture ? hf->architecture : "";
  c->weights_prefixed = strncmp(arch, "BertFor", 7) == 0;
  if (strcmp(arch, "BertForSequenceClassification") == 0) c->n_labels = hf_labels(root);
  return NULL;
}

/* llama.cpp's pooling_type: 0 none, 1 mean, 2 cls, 3 last, 4 rank. */
static poot_status bert_from_gguf(const poot_gguf *g, const char *arch, const poot_store *store,
                                  poot_model_config *c) {
  (void)store;
  double d = 0;
  int64_t v = 0;
  if (poot__gguf_arch_f64(g, arch, "attention.layer_norm_epsilon", &d) && d > 0) c->norm_eps = d;
  const poot_gguf_tensor *tt = poot_gguf_find_tensor(g, "token_types.weight");
  if (tt && tt->n_dims == 2) c->type_vocab_size = (int64_t)tt->dims[1];
  const poot_gguf_tensor *co = poot_gguf_find_tensor(g, "cls.output.weight");
  if (co) c->n_labels = co->n_dims == 2 ? (int64_t)co->dims[1] : 1;
  /* llama.cpp's embedding tool normalizes (Euclidean) by default. */
  c->normalize = true;
  if (poot__gguf_arch_i64(g, arch, "pooling_type", &v)) {
    switch (v) {
      case 1:
        c->pooling = POOT_MODEL_POOLING_MEAN;
        break;
      case 2:
        c->pooling = POOT_MODEL_POOLING_CLS;
        break;
      case 3:
        c->pooling = POOT_MODEL_POOLING_LAST;
        break;
      case 4: /* rank: the classifier over [CLS] */
        c->pooling = POOT_MODEL_POOLING_CLS;
        c->normalize = false;
        if (c->n_labels < 1)
          return poot_status_make(
              POOT_FORMAT, "GGUF: %s.pooling_type is rank but cls.output.weight is missing", arch);
        break;
      default:
        return poot_status_make(POOT_UNSUPPORTED,
                                "GGUF: %s.pooling_type %lld is not supported (1 mean, 2 cls, 3 "
                                "last, 4 rank are)",
                                arch, (long long)v);
    }
  }
  bool causal = false;
  char key[128];
  snprintf(key, sizeof key, "%s.attention.causal", arch);
  if (poot_gguf_find(g, key)) {
    poot_status st = poot_gguf_get_bool(g, key, &causal);
    if (st) return poot_status_annotate(st, "GGUF: %s", key);
  }
  if (causal)
    return poot_status_make(POOT_UNSUPPORTED,
                            "GGUF: %s.attention.causal is true (BERT attends both ways)", arch);
  return NULL;
}

/* Hugging Face names (BertModel's; "bert." first for BertFor… classes). */
typedef struct bert_name {
  poot_weight_role role;
  const char *hf;
} bert_name;

static const bert_name hf_names[] = {
    {POOT_WEIGHT_TOKEN_EMBD, "embeddings.word_embeddings.weight"},
    {POOT_WEIGHT_POSITION_EMBD, "embeddings.position_embeddings.weight"},
    {POOT_WEIGHT_TOKEN_TYPES, "embeddings.token_type_embeddings.weight"},
    {POOT_WEIGHT_TOKEN_EMBD_NORM, "embeddings.LayerNorm.weight"},
    {POOT_WEIGHT_TOKEN_EMBD_NORM_BIAS, "embeddings.LayerNorm.bias"},
    {POOT_WEIGHT_ATTN_Q, "encoder.layer.%d.attention.self.query.weight"},
    {POOT_WEIGHT_ATTN_Q_BIAS, "encoder.layer.%d.attention.self.query.bias"},
    {POOT_WEIGHT_ATTN_K, "encoder.layer.%d.attention.self.key.weight"},
    {POOT_WEIGHT_ATTN_K_BIAS, "encoder.layer.%d.attention.self.key.bias"},
    {POOT_WEIGHT_ATTN_V, "encoder.layer.%d.attention.self.value.weight"},
    {POOT_WEIGHT_ATTN_V_BIAS, "encoder.layer.%d.attention.self.value.bias"},
    {POOT_WEIGHT_ATTN_OUTPUT, "encoder.layer.%d.attention.output.dense.weight"},
    {POOT_WEIGHT_ATTN_OUTPUT_BIAS, "encoder.layer.%d.attention.output.dense.bias"},
    {POOT_WEIGHT_ATTN_OUTPUT_NORM, "encoder.layer.%d.attention.output.LayerNorm.weight"},
    {POOT_WEIGHT_ATTN_OUTPUT_NORM_BIAS, "encoder.layer.%d.attention.output.LayerNorm.bias"},
    {POOT_WEIGHT_FFN_UP, "encoder.layer.%d.intermediate.dense.weight"},
    {POOT_WEIGHT_FFN_UP_BIAS, "encoder.layer.%d.intermediate.dense.bias"},
    {POOT_WEIGHT_FFN_DOWN, "encoder.layer.%d.output.dense.weight"},
    {POOT_WEIGHT_FFN_DOWN_BIAS, "encoder.layer.%d.output.dense.bias"},
    {POOT_WEIGHT_LAYER_OUTPUT_NORM, "encoder.layer.%d.output.LayerNorm.weight"},
    {POOT_WEIGHT_LAYER_OUTPUT_NORM_BIAS, "encoder.layer.%d.output.LayerNorm.bias"},
    {POOT_WEIGHT_CLS, "pooler.dense.weight"},
    {POOT_WEIGHT_CLS_BIAS, "pooler.dense.bias"},
    {POOT_WEIGHT_CLS_OUT, "classifier.weight"},
    {POOT_WEIGHT_CLS_OUT_BIAS, "classifier.bias"},
};

static bool bert_weight_name(const poot_model_config *c, poot_weight_naming naming,
                             const poot_weight_ref *ref, char *buf, size_t n) {
  if (naming == POOT_WEIGHT_NAMING_GGUF) {
    /* llama.cpp: "cls" (the pooler's dense) and "cls.output" (the classifier). */
    if (ref->role == POOT_WEIGHT_CLS_OUT || ref->role == POOT_WEIGHT_CLS_OUT_BIAS) {
      int w =
          snprintf(buf, n, "cls.output.%s", ref->role == POOT_WEIGHT_CLS_OUT ? "weight" : "bias");
      return w > 0 && (size_t)w < n;
    }
    return poot__weight_name_standard(naming, ref, buf, n);
  }
  if (naming != POOT_WEIGHT_NAMING_HF) return false;
  for (size_t i = 0; i < sizeof hf_names / sizeof hf_names[0]; i++) {
    if (hf_names[i].role != ref->role) continue;
    /* The classifier sits beside "bert.", not under it. */
    bool cls_out = ref->role == POOT_WEIGHT_CLS_OUT || ref->role == POOT_WEIGHT_CLS_OUT_BIAS;
    const char *prefix = c->weights_prefixed && !cls_out ? "bert." : "";
    char fmt[128];
    snprintf(fmt, sizeof fmt, "%s%s", prefix, hf_names[i].hf);
    int w = ref->layer >= 0 ? snprintf(buf, n, fmt, (int)ref->layer) : snprintf(buf, n, "%s", fmt);
    return w > 0 && (size_t)w < n;
  }
  return false;
}

static size_t bert_roles(const poot_model_config *c, bool per_layer, poot_weight_role *out) {
  size_t n = 0;
  if (!per_layer) {
    out[n++] = POOT_WEIGHT_TOKEN_EMBD;
    out[n++] = POOT_WEIGHT_POSITION_EMBD;
    out[n++] = POOT_WEIGHT_TOKEN_TYPES;
    out[n++] = POOT_WEIGHT_TOKEN_EMBD_NORM;
    out[n++] = POOT_WEIGHT_TOKEN_EMBD_NORM_BIAS;
    if (c->n_labels > 0) {
      out[n++] = POOT_WEIGHT_CLS;
      out[n++] = POOT_WEIGHT_CLS_BIAS;
      out[n++] = POOT_WEIGHT_CLS_OUT;
      out[n++] = POOT_WEIGHT_CLS_OUT_BIAS;
    }
    return n;
  }
  static const poot_weight_role layer[] = {
      POOT_WEIGHT_ATTN_Q,
      POOT_WEIGHT_ATTN_Q_BIAS,
      POOT_WEIGHT_ATTN_K,
      POOT_WEIGHT_ATTN_K_BIAS,
      POOT_WEIGHT_ATTN_V,
      POOT_WEIGHT_ATTN_V_BIAS,
      POOT_WEIGHT_ATTN_OUTPUT,
      POOT_WEIGHT_ATTN_OUTPUT_BIAS,
      POOT_WEIGHT_ATTN_OUTPUT_NORM,
      POOT_WEIGHT_ATTN_OUTPUT_NORM_BIAS,
      POOT_WEIGHT_FFN_UP,
      POOT_WEIGHT_FFN_UP_BIAS,
      POOT_WEIGHT_FFN_DOWN,
      POOT_WEIGHT_FFN_DOWN_BIAS,
      POOT_WEIGHT_LAYER_OUTPUT_NORM,
      POOT_WEIGHT_LAYER_OUTPUT_NORM_BIAS,
  };
  for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) out[n++] = layer[i];
  return n;
}

/* ------------------------------------------- sentence-transformers files */

static bool file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* Reads and parses a JSON file into `arena` (the text is kept there too). */
static poot_status read_json(const char *path, poot_arena *arena, poot_json **out) {
  *out = NULL;
  char *text = NULL;
  size_t size = 0;
  POOT_TRY(poot_file_read_all(path, &text, &size));
  poot_status st = poot_json_parse(arena, text, size, NULL, out);
  poot_free(text);
  if (st) return poot_status_annotate(st, "%s", path);
  return NULL;
}

/* The Pooling module's config: which pooling_mode_* is on. */
static poot_status pooling_of(const char *path, poot_model_config *c) {
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *j = NULL;
  poot_status st = read_json(path, &arena, &j);
  if (st) {
    poot_arena_deinit(&arena);
    return st;
  }
  bool on = false;
  int modes = 0;
  if (poot__json_bool(j, "pooling_mode_mean_tokens", &on) && on)
    c->pooling = POOT_MODEL_POOLING_MEAN, modes++;
  if (poot__json_bool(j, "pooling_mode_cls_token", &on) && on)
    c->pooling = POOT_MODEL_POOLING_CLS, modes++;
  if (poot__json_bool(j, "pooling_mode_lasttoken", &on) && on)
    c->pooling = POOT_MODEL_POOLING_LAST, modes++;
  static const char *const other[] = {"pooling_mode_max_tokens",
                                      "pooling_mode_mean_sqrt_len_tokens",
                                      "pooling_mode_weightedmean_tokens"};
  for (size_t i = 0; i < 3 && !st; i++)
    if (poot__json_bool(j, other[i], &on) && on)
      st = poot_status_make(POOT_UNSUPPORTED,
                            "%s: '%s' is not supported (mean, cls, lasttoken are)", path, other[i]);
  if (!st && modes > 1)
    st = poot_status_make(POOT_UNSUPPORTED,
                          "%s: more than one pooling mode is on (their concatenation is not "
                          "supported)",
                          path);
  poot_arena_deinit(&arena);
  return st;
}

/* sentence_bert_config.json's max_seq_length, where the file has one. */
static poot_status max_seq_length_of(const char *folder, poot_model_config *c) {
  char path[4200];
  snprintf(path, sizeof path, "%s/sentence_bert_config.json", folder);
  if (!file_exists(path)) return NULL;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *cfg = NULL;
  poot_status st = read_json(path, &arena, &cfg);
  const poot_json *v = st ? NULL : poot__json_member(cfg, "max_seq_length");
  if (v && v->type != POOT_JSON_NULL) {
    if (v->type != POOT_JSON_NUMBER || v->number != floor(v->number) || v->number < 1 ||
        v->number > 1e9)
      st = poot_status_make(POOT_FORMAT, "%s: max_seq_length must be a positive integer", path);
    else
      c->max_seq_length = (int64_t)v->number;
  }
  poot_arena_deinit(&arena);
  return st;
}

poot_status poot__bert_read_sentence_transformers(const char *folder, poot_model_config *c) {
  POOT_TRY(max_seq_length_of(folder, c));
  char path[4200];
  snprintf(path, sizeof path, "%s/modules.json", folder);
  if (!file_exists(path)) return NULL; /* a bare BertModel: mean pooling, no normalization */
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *mods = NULL;
  poot_status st = read_json(path, &arena, &mods);
  if (!st && mods->type != POOT_JSON_ARRAY)
    st = poot_status_make(POOT_FORMAT, "%s: not a list of modules", path);
  for (size_t i = 0; !st && mods && mods->type == POOT_JSON_ARRAY && i < mods->len; i++) {
    const poot_json *m = mods->items[i];
    const poot_json *ty = poot__json_member(m, "type");
    const poot_json *sub = poot__json_member(m, "path");
    const char *t = ty && ty->type == POOT_JSON_STRING ? ty->str : "";
    const char *dot = strrchr(t, '.');
    const char *cls = dot ? dot + 1 : t;
    if (strcmp(cls, "Transformer") == 0) continue;
    if (strcmp(cls, "Normalize") == 0) {
      c->normalize = true;
    } else if (strcmp(cls, "Pooling") == 0) {
      char pc[4400];
      snprintf(pc, sizeof pc, "%s/%s/config.json", folder,
               sub && sub->type == POOT_JSON_STRING ? sub->str : "1_Pooling");
      st = pooling_of(pc, c);
    } else {
      st = poot_status_make(POOT_UNSUPPORTED,
                            "%s: module '%s' is not supported (Transformer, Pooling, Normalize "
                            "are)",
                            path, t);
    }
  }
  poot_arena_deinit(&arena);
  return st;
}

static const char *const gguf_archs[] = {"bert", NULL};
static const char *const hf_archs[] = {"BertModel", "BertForSequenceClassification", NULL};
static const char *const hf_types[] = {"bert", NULL};

const poot__family poot__family_bert = {
    .family = POOT_MODEL_FAMILY_BERT,
    .gguf_archs = gguf_archs,
    .hf_archs = hf_archs,
    .hf_model_types = hf_types,
    .defaults = bert_defaults,
    .from_hf = bert_from_hf,
    .from_gguf = bert_from_gguf,
    .weight_name = bert_weight_name,
    .roles = bert_roles,
};
