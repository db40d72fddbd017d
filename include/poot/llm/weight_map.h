/* poot/llm/weight_map.h — weight maps: typed weight roles (poot_weight_ref:
 * role + layer) bound to tensor names of a weight store, and to the opaque
 * key (poot/graph.h's poot_weight_id) a weight leaf of a traced graph
 * carries.
 *
 * A map binds only what it names. A role the map does not name stays
 * unbound: lookups return NOT_FOUND, never a guess — even when the store
 * holds a tensor whose name spells the role (DESIGN §6). Each model family
 * declares its map; the builders below give the standard llama-style
 * naming of each format, which families extend or adjust.
 *
 * Not thread safe for writes; concurrent lookups on a finished map are. */
#ifndef POOT_LLM_WEIGHT_MAP_H
#define POOT_LLM_WEIGHT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"
#include "poot/llm/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Typed weight roles: the model's vocabulary of weights. Per-layer roles
 * carry a layer index ≥ 0; global roles carry layer -1. POOT_WEIGHT_CUSTOM
 * carries a free-form name instead (for weights outside this list) and may
 * have either. Display names follow GGUF's tensor names without the
 * ".weight" suffix: "token_embd", "blk.3.attn_q", "blk.3.attn_q_bias",
 * "output_norm". */
#define POOT_WEIGHT_ROLES(X)                           \
  X(TOKEN_EMBD, token_embd, 0)                         \
  X(TOKEN_TYPES, token_types, 0)                       \
  X(POSITION_EMBD, position_embd, 0)                   \
  X(TOKEN_EMBD_NORM, token_embd_norm, 0)               \
  X(TOKEN_EMBD_NORM_BIAS, token_embd_norm_bias, 0)     \
  X(ROPE_FREQS, rope_freqs, 0)                         \
  X(ATTN_NORM, attn_norm, 1)                           \
  X(ATTN_NORM_BIAS, attn_norm_bias, 1)                 \
  X(ATTN_Q, attn_q, 1)                                 \
  X(ATTN_Q_BIAS, attn_q_bias, 1)                       \
  X(ATTN_K, attn_k, 1)                                 \
  X(ATTN_K_BIAS, attn_k_bias, 1)                       \
  X(ATTN_V, attn_v, 1)                                 \
  X(ATTN_V_BIAS, attn_v_bias, 1)                       \
  X(ATTN_QKV, attn_qkv, 1)                             \
  X(ATTN_QKV_BIAS, attn_qkv_bias, 1)                   \
  X(ATTN_OUTPUT, attn_output, 1)                       \
  X(ATTN_OUTPUT_BIAS, attn_output_bias, 1)             \
  X(ATTN_Q_NORM, attn_q_norm, 1)                       \
  X(ATTN_K_NORM, attn_k_norm, 1)                       \
  X(ATTN_POST_NORM, attn_post_norm, 1)                 \
  X(ATTN_OUTPUT_NORM, attn_output_norm, 1)             \
  X(ATTN_OUTPUT_NORM_BIAS, attn_output_norm_bias, 1)   \
  X(FFN_NORM, ffn_norm, 1)                             \
  X(FFN_NORM_BIAS, ffn_norm_bias, 1)                   \
  X(FFN_GATE, ffn_gate, 1)                             \
  X(FFN_GATE_BIAS, ffn_gate_bias, 1)                   \
  X(FFN_UP, ffn_up, 1)                                 \
  X(FFN_UP_BIAS, ffn_up_bias, 1)                       \
  X(FFN_DOWN, ffn_down, 1)                             \
  X(FFN_DOWN_BIAS, ffn_down_bias, 1)                   \
  X(FFN_POST_NORM, ffn_post_norm, 1)                   \
  X(LAYER_OUTPUT_NORM, layer_output_norm, 1)           \
  X(LAYER_OUTPUT_NORM_BIAS, layer_output_norm_bias, 1) \
  X(OUTPUT_NORM, output_norm, 0)                       \
  X(OUTPUT_NORM_BIAS, output_norm_bias, 0)             \
  X(OUTPUT, output, 0)                                 \
  X(OUTPUT_BIAS, output_bias, 0)                       \
  X(CLS, cls, 0)                                       \
  X(CLS_BIAS, cls_bias, 0)                             \
  X(CLS_OUT, cls_out, 0)                               \
  X(CLS_OUT_BIAS, cls_out_bias, 0)

typedef enum poot_weight_role {
  POOT_WEIGHT_NONE = 0,
#define POOT__ROLE_ENUM(ID, name, per_layer) POOT_WEIGHT_##ID,
  POOT_WEIGHT_ROLES(POOT__ROLE_ENUM)
#undef POOT__ROLE_ENUM
      POOT_WEIGHT_CUSTOM, /* named by poot_weight_ref.name */
  POOT_WEIGHT_ROLE_COUNT
} poot_weight_role;

typedef struct poot_weight_ref {
  poot_weight_role role;
  int32_t layer;    /* ≥ 0 for per-layer roles, -1 for global ones */
  const char *name; /* CUSTOM only (NULL otherwise); borrowed */
} poot_weight_ref;

/* "attn_q", "custom", or "?" for an invalid role. */
const char *poot_weight_role_name(poot_weight_role role);
bool poot_weight_role_is_per_layer(poot_weight_role role);
/* Whether the layer index fits the role (per-layer roles need layer ≥ 0,
 * global ones -1; CUSTOM needs a name and layer ≥ -1). */
bool poot_weight_ref_is_valid(const poot_weight_ref *ref);
/* Appends the display name of a reference: "blk.3.attn_q", "output", for
 * CUSTOM its name ("vision.patch", per-layer "blk.2.x"). */
void poot_weight_ref_format(poot_strbuf *sb, const poot_weight_ref *ref);
/* Parses a display name of a listed role ("blk.3.attn_q", "token_embd"; not
 * CUSTOM). Returns false on an unknown role or a layer index that does not
 * fit the role. */
bool poot_weight_ref_parse(const char *text, size_t len, poot_weight_ref *out_ref);
/* The identity a graph's weight leaf of `ref` carries: the key the graph's
 * text form gives its display name, so a printed and re-parsed graph binds
 * the same weights. The name is written into `sb` and borrowed from it. */
POOT_MUST_USE poot_status poot_weight_ref_id(const poot_weight_ref *ref, poot_strbuf *sb,
                                             poot_weight_id *out_id);

typedef struct poot_weight_map poot_weight_map;

POOT_MUST_USE poot_status poot_weight_map_create(poot_weight_map **out_map);
void poot_weight_map_destroy(poot_weight_map *map); /* NULL-safe */

/* Binds `ref` (copied; a CUSTOM ref's name too) to `tensor_name` (copied),
 * replacing an earlier binding of the same ref. INVALID_ARGUMENT when the
 * layer does not fit the role (per-layer roles need layer ≥ 0, global ones
 * -1) or a CUSTOM ref has no name. */
POOT_MUST_USE poot_status poot_weight_map_bind(poot_weight_map *map, const poot_weight_ref *ref,
                                               const char *tensor_name);
/* Removes a binding (no-op when unbound). */
void poot_weight_map_unbind(poot_weight_map *map, const poot_weight_ref *ref);
/* The tensor name bound to `ref` (borrowed); NOT_FOUND naming the role when
 * unbound. */
POOT_MUST_USE poot_status poot_weight_map_lookup(const poot_weight_map *map,
                                                 const poot_weight_ref *ref, const char **out_name);
/* Bindings in bind order (an unbound entry is skipped by count/at). */
size_t poot_weight_map_count(const poot_weight_map *map);
/* Entry `index` < count: its ref and tensor name (borrowed). */
void poot_weight_map_at(const poot_weight_map *map, size_t index, poot_weight_ref *out_ref,
                        const char **out_name);

/* The bound reference whose key (poot_weight_ref_id) is `key`: how a graph's
 * weight leaf finds its role. NOT_FOUND naming `display_name` (may be NULL)
 * when no binding has the key. out_ref's name is borrowed from the map. */
POOT_MUST_USE poot_status poot_weight_map_find(const poot_weight_map *map, poot_weight_key key,
                                               const char *display_name, poot_weight_ref *out_ref);

/* The tensor bound to `ref` in `store`. NOT_FOUND when the role is unbound
 * or when the store lacks the bound name (the message says which). */
POOT_MUST_USE poot_status poot_weight_map_resolve(const poot_weight_map *map,
                                                  const poot_store *store,
                                                  const poot_weight_ref *ref,
                                                  const poot_store_tensor **out_tensor);

/* Tensor naming conventions. */
typedef enum poot_weight_naming {
  POOT_WEIGHT_NAMING_GGUF = 0, /* llama.cpp: token_embd.weight, blk.N.attn_q.weight */
  POOT_WEIGHT_NAMING_HF,       /* transformers: model.layers.N.self_attn.q_proj.weight */
  POOT_WEIGHT_NAMING_LLAMA2C,  /* Meta / llama2.c: layers.N.attention.wq.weight */
} poot_weight_naming;

/* The naming a store's format uses. */
poot_weight_naming poot_weight_naming_of_store(const poot_store *store);

typedef struct poot_weight_map_llama_options {
  int32_t n_layers;
  /* Bind OUTPUT to the token embedding (a shared classifier: llama2.c's
   * positive vocab_size, tie_word_embeddings). Otherwise OUTPUT is bound to
   * the format's output name. */
  bool tied_output;
  bool attn_qkv_bias; /* bind ATTN_{Q,K,V}_BIAS (Qwen2) */
  bool attn_qk_norm;  /* bind ATTN_{Q,K}_NORM (Qwen3) */
} poot_weight_map_llama_options;

/* The llama-style map (token embedding, per-layer attention and MLP
 * projections and norms, final norm, output) in `naming`. INVALID_ARGUMENT
 * for a negative layer count or a naming without the asked roles (llama2.c
 * has no biases or q/k norms). */
POOT_MUST_USE poot_status poot_weight_map_llama(poot_weight_naming naming,
                                                const poot_weight_map_llama_options *options,
                                                poot_weight_map **out_map);

/* The tensor name of a llama-style role in a naming, written into buf;
 * false when that naming has no name for the role. */
bool poot_weight_name_llama(poot_weight_naming naming, const poot_weight_ref *ref, char *buf,
                            size_t buf_size);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_WEIGHT_MAP_H */
