/* poot/llm/weight_map.h — weight maps: typed weight roles (poot/graph.h's
 * poot_weight_ref: role + layer) bound to tensor names of a weight store.
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
