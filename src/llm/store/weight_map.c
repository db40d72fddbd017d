/* Weight maps: typed roles bound to tensor names. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/weight_map.h"

typedef struct map_entry {
  poot_weight_role role;
  int32_t layer;
  char *custom; /* CUSTOM only */
  char *tensor;
  poot_weight_key key; /* the key of its graph weight leaf (poot_weight_ref_id) */
  bool bound;
} map_entry;

struct poot_weight_map {
  poot_vec entries; /* map_entry */
  size_t n_bound;
};

poot_status poot_weight_map_create(poot_weight_map **out_map) {
  *out_map = NULL;
  poot_weight_map *m = poot_calloc(1, sizeof *m);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "weight map: out of memory");
  poot_vec_init(&m->entries, sizeof(map_entry));
  *out_map = m;
  return NULL;
}

void poot_weight_map_destroy(poot_weight_map *m) {
  if (!m) return;
  for (size_t i = 0; i < m->entries.len; i++) {
    map_entry *e = poot_vec_at(&m->entries, i);
    poot_free(e->custom);
    poot_free(e->tensor);
  }
  poot_vec_deinit(&m->entries);
  poot_free(m);
}

static void ref_text(const poot_weight_ref *ref, char *buf, size_t n) {
  const char *name = poot_weight_role_name(ref->role);
  if (ref->role == POOT_WEIGHT_CUSTOM) name = ref->name ? ref->name : "(unnamed)";
  if (ref->layer >= 0)
    snprintf(buf, n, "blk.%d.%s", (int)ref->layer, name);
  else
    snprintf(buf, n, "%s", name);
}

static bool same_ref(const map_entry *e, const poot_weight_ref *ref) {
  if (e->role != ref->role || e->layer != ref->layer) return false;
  if (ref->role != POOT_WEIGHT_CUSTOM) return true;
  return ref->name && e->custom && strcmp(ref->name, e->custom) == 0;
}

static map_entry *find(const poot_weight_map *m, const poot_weight_ref *ref) {
  for (size_t i = 0; i < m->entries.len; i++) {
    map_entry *e = poot_vec_at(&m->entries, i);
    if (same_ref(e, ref)) return e;
  }
  return NULL;
}

poot_status poot_weight_map_bind(poot_weight_map *m, const poot_weight_ref *ref,
                                 const char *tensor_name) {
  char text[160];
  if (!ref || (unsigned)ref->role >= POOT_WEIGHT_ROLE_COUNT || ref->role == POOT_WEIGHT_NONE ||
      !tensor_name)
    return poot_status_make(POOT_INVALID_ARGUMENT, "weight map: bad role or tensor name");
  ref_text(ref, text, sizeof text);
  if (ref->role == POOT_WEIGHT_CUSTOM) {
    if (!ref->name || ref->layer < -1)
      return poot_status_make(POOT_INVALID_ARGUMENT, "weight map: a custom role needs a name");
  } else if (!poot_weight_ref_is_valid(ref)) {
    bool per_layer = poot_weight_role_is_per_layer(ref->role);
    return poot_status_make(
        POOT_INVALID_ARGUMENT, "weight map: role '%s' %s a layer index (got %d)",
        poot_weight_role_name(ref->role), per_layer ? "needs" : "takes no", (int)ref->layer);
  }
  char *tensor = poot_strdup(tensor_name);
  if (!tensor) return poot_status_make(POOT_OUT_OF_MEMORY, "weight map: out of memory");
  map_entry *e = find(m, ref);
  if (e) {
    poot_free(e->tensor);
    e->tensor = tensor;
    if (!e->bound) m->n_bound++;
    e->bound = true;
    return NULL;
  }
  map_entry n = {ref->role, ref->layer, NULL, tensor, poot_weight_key_of_name(text, strlen(text)),
                 true};
  if (ref->role == POOT_WEIGHT_CUSTOM && !(n.custom = poot_strdup(ref->name))) {
    poot_free(tensor);
    return poot_status_make(POOT_OUT_OF_MEMORY, "weight map: out of memory");
  }
  poot_status s = poot_vec_push(&m->entries, &n);
  if (s) {
    poot_free(n.custom);
    poot_free(tensor);
    return s;
  }
  m->n_bound++;
  return NULL;
}

void poot_weight_map_unbind(poot_weight_map *m, const poot_weight_ref *ref) {
  map_entry *e = find(m, ref);
  if (e && e->bound) {
    e->bound = false;
    m->n_bound--;
  }
}

poot_status poot_weight_map_lookup(const poot_weight_map *m, const poot_weight_ref *ref,
                                   const char **out_name) {
  *out_name = NULL;
  const map_entry *e = find(m, ref);
  if (!e || !e->bound) {
    char text[160];
    ref_text(ref, text, sizeof text);
    return poot_status_make(POOT_NOT_FOUND, "weight role '%s' is not bound by the weight map",
                            text);
  }
  *out_name = e->tensor;
  return NULL;
}

size_t poot_weight_map_count(const poot_weight_map *m) {
  return m->n_bound;
}

void poot_weight_map_at(const poot_weight_map *m, size_t index, poot_weight_ref *out_ref,
                        const char **out_name) {
  memset(out_ref, 0, sizeof *out_ref);
  *out_name = NULL;
  for (size_t i = 0; i < m->entries.len; i++) {
    const map_entry *e = poot_vec_at(&m->entries, i);
    if (!e->bound) continue;
    if (index-- == 0) {
      out_ref->role = e->role;
      out_ref->layer = e->layer;
      out_ref->name = e->custom;
      *out_name = e->tensor;
      return;
    }
  }
}

poot_status poot_weight_map_find(const poot_weight_map *m, poot_weight_key key,
                                 const char *display_name, poot_weight_ref *out_ref) {
  memset(out_ref, 0, sizeof *out_ref);
  for (size_t i = 0; i < m->entries.len; i++) {
    const map_entry *e = poot_vec_at(&m->entries, i);
    if (!e->bound || e->key != key) continue;
    out_ref->role = e->role;
    out_ref->layer = e->layer;
    out_ref->name = e->custom;
    return NULL;
  }
  return poot_status_make(POOT_NOT_FOUND, "weight '%s' is not bound by the model's weight map",
                          display_name ? display_name : "?");
}

poot_status poot_weight_map_resolve(const poot_weight_map *m, const poot_store *store,
                                    const poot_weight_ref *ref,
                                    const poot_store_tensor **out_tensor) {
  *out_tensor = NULL;
  const char *name = NULL;
  POOT_TRY(poot_weight_map_lookup(m, ref, &name));
  poot_status s = poot_store_find(store, name, out_tensor);
  if (s) {
    char text[160];
    ref_text(ref, text, sizeof text);
    return poot_status_annotate(s, "weight role '%s'", text);
  }
  return NULL;
}

poot_weight_naming poot_weight_naming_of_store(const poot_store *store) {
  switch (poot_store_format_of(store)) {
    case POOT_STORE_FORMAT_SAFETENSORS:
      return POOT_WEIGHT_NAMING_HF;
    case POOT_STORE_FORMAT_LLAMA2C:
      return POOT_WEIGHT_NAMING_LLAMA2C;
    default:
      return POOT_WEIGHT_NAMING_GGUF;
  }
}

/* Names per naming: GGUF, HF, llama2.c ("%d" is the layer). */
static const struct {
  poot_weight_role role;
  const char *names[3];
} llama_names[] = {
    {POOT_WEIGHT_TOKEN_EMBD,
     {"token_embd.weight", "model.embed_tokens.weight", "tok_embeddings.weight"}},
    {POOT_WEIGHT_OUTPUT_NORM, {"output_norm.weight", "model.norm.weight", "norm.weight"}},
    {POOT_WEIGHT_OUTPUT, {"output.weight", "lm_head.weight", "output.weight"}},
    {POOT_WEIGHT_ATTN_NORM,
     {"blk.%d.attn_norm.weight", "model.layers.%d.input_layernorm.weight",
      "layers.%d.attention_norm.weight"}},
    {POOT_WEIGHT_ATTN_Q,
     {"blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight",
      "layers.%d.attention.wq.weight"}},
    {POOT_WEIGHT_ATTN_K,
     {"blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight",
      "layers.%d.attention.wk.weight"}},
    {POOT_WEIGHT_ATTN_V,
     {"blk.%d.attn_v.weight", "model.layers.%d.self_attn.v_proj.weight",
      "layers.%d.attention.wv.weight"}},
    {POOT_WEIGHT_ATTN_OUTPUT,
     {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight",
      "layers.%d.attention.wo.weight"}},
    {POOT_WEIGHT_ATTN_Q_BIAS,
     {"blk.%d.attn_q.bias", "model.layers.%d.self_attn.q_proj.bias", NULL}},
    {POOT_WEIGHT_ATTN_K_BIAS,
     {"blk.%d.attn_k.bias", "model.layers.%d.self_attn.k_proj.bias", NULL}},
    {POOT_WEIGHT_ATTN_V_BIAS,
     {"blk.%d.attn_v.bias", "model.layers.%d.self_attn.v_proj.bias", NULL}},
    {POOT_WEIGHT_ATTN_OUTPUT_BIAS,
     {"blk.%d.attn_output.bias", "model.layers.%d.self_attn.o_proj.bias", NULL}},
    {POOT_WEIGHT_FFN_GATE_BIAS,
     {"blk.%d.ffn_gate.bias", "model.layers.%d.mlp.gate_proj.bias", NULL}},
    {POOT_WEIGHT_FFN_UP_BIAS, {"blk.%d.ffn_up.bias", "model.layers.%d.mlp.up_proj.bias", NULL}},
    {POOT_WEIGHT_FFN_DOWN_BIAS,
     {"blk.%d.ffn_down.bias", "model.layers.%d.mlp.down_proj.bias", NULL}},
    {POOT_WEIGHT_ATTN_Q_NORM,
     {"blk.%d.attn_q_norm.weight", "model.layers.%d.self_attn.q_norm.weight", NULL}},
    {POOT_WEIGHT_ATTN_K_NORM,
     {"blk.%d.attn_k_norm.weight", "model.layers.%d.self_attn.k_norm.weight", NULL}},
    {POOT_WEIGHT_FFN_NORM,
     {"blk.%d.ffn_norm.weight", "model.layers.%d.post_attention_layernorm.weight",
      "layers.%d.ffn_norm.weight"}},
    {POOT_WEIGHT_FFN_GATE,
     {"blk.%d.ffn_gate.weight", "model.layers.%d.mlp.gate_proj.weight",
      "layers.%d.feed_forward.w1.weight"}},
    {POOT_WEIGHT_FFN_UP,
     {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.up_proj.weight",
      "layers.%d.feed_forward.w3.weight"}},
    {POOT_WEIGHT_FFN_DOWN,
     {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight",
      "layers.%d.feed_forward.w2.weight"}},
};

bool poot_weight_name_llama(poot_weight_naming naming, const poot_weight_ref *ref, char *buf,
                            size_t buf_size) {
  if (buf_size) buf[0] = 0;
  if ((unsigned)naming > POOT_WEIGHT_NAMING_LLAMA2C) return false;
  for (size_t i = 0; i < sizeof llama_names / sizeof llama_names[0]; i++) {
    if (llama_names[i].role != ref->role) continue;
    const char *fmt = llama_names[i].names[naming];
    if (!fmt) return false;
    bool per_layer = poot_weight_role_is_per_layer(ref->role);
    if (per_layer != (ref->layer >= 0)) return false;
    int n = per_layer ? snprintf(buf, buf_size, fmt, (int)ref->layer)
                      : snprintf(buf, buf_size, "%s", fmt);
    return n > 0 && (size_t)n < buf_size;
  }
  return false;
}

static poot_status bind_named(poot_weight_map *m, poot_weight_naming naming, poot_weight_role role,
                              int32_t layer) {
  poot_weight_ref ref = {role, layer, NULL};
  char name[160];
  if (!poot_weight_name_llama(naming, &ref, name, sizeof name))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "weight map: the %s naming has no name for role '%s'",
                            naming == POOT_WEIGHT_NAMING_GGUF ? "GGUF"
                            : naming == POOT_WEIGHT_NAMING_HF ? "Hugging Face"
                                                              : "llama2.c",
                            poot_weight_role_name(role));
  return poot_weight_map_bind(m, &ref, name);
}

static poot_status build_llama(poot_weight_map *m, poot_weight_naming naming,
                               const poot_weight_map_llama_options *o) {
  POOT_TRY(bind_named(m, naming, POOT_WEIGHT_TOKEN_EMBD, -1));
  static const poot_weight_role per_layer[] = {
      POOT_WEIGHT_ATTN_NORM, POOT_WEIGHT_ATTN_Q,      POOT_WEIGHT_ATTN_K,
      POOT_WEIGHT_ATTN_V,    POOT_WEIGHT_ATTN_OUTPUT, POOT_WEIGHT_FFN_NORM,
      POOT_WEIGHT_FFN_GATE,  POOT_WEIGHT_FFN_UP,      POOT_WEIGHT_FFN_DOWN};
  for (int32_t l = 0; l < o->n_layers; l++) {
    for (size_t r = 0; r < sizeof per_layer / sizeof per_layer[0]; r++)
      POOT_TRY(bind_named(m, naming, per_layer[r], l));
    if (o->attn_qkv_bias) {
      POOT_TRY(bind_named(m, naming, POOT_WEIGHT_ATTN_Q_BIAS, l));
      POOT_TRY(bind_named(m, naming, POOT_WEIGHT_ATTN_K_BIAS, l));
      POOT_TRY(bind_named(m, naming, POOT_WEIGHT_ATTN_V_BIAS, l));
    }
    if (o->attn_qk_norm) {
      POOT_TRY(bind_named(m, naming, POOT_WEIGHT_ATTN_Q_NORM, l));
      POOT_TRY(bind_named(m, naming, POOT_WEIGHT_ATTN_K_NORM, l));
    }
  }
  POOT_TRY(bind_named(m, naming, POOT_WEIGHT_OUTPUT_NORM, -1));
  if (o->tied_output) {
    poot_weight_ref emb = {POOT_WEIGHT_TOKEN_EMBD, -1, NULL};
    char name[160];
    if (!poot_weight_name_llama(naming, &emb, name, sizeof name))
      return poot_status_make(POOT_INTERNAL, "weight map: no embedding name");
    poot_weight_ref out = {POOT_WEIGHT_OUTPUT, -1, NULL};
    return poot_weight_map_bind(m, &out, name);
  }
  return bind_named(m, naming, POOT_WEIGHT_OUTPUT, -1);
}

poot_status poot_weight_map_llama(poot_weight_naming naming,
                                  const poot_weight_map_llama_options *options,
                                  poot_weight_map **out_map) {
  *out_map = NULL;
  if (!options || options->n_layers < 0 || (unsigned)naming > POOT_WEIGHT_NAMING_LLAMA2C)
    return poot_status_make(POOT_INVALID_ARGUMENT, "weight map: bad llama options");
  poot_weight_map *m = NULL;
  POOT_TRY(poot_weight_map_create(&m));
  poot_status s = build_llama(m, naming, options);
  if (s) {
    poot_weight_map_destroy(m);
    return s;
  }
  *out_map = m;
  return NULL;
}
