/* poot/llm/llama2c.h — llama2.c checkpoints (the legacy format) and
 * llama2.c tokenizer files.
 *
 * Checkpoint: seven little-endian int32 (dim, hidden_dim, n_layers, n_heads,
 * n_kv_heads, vocab_size, seq_len), then f32 arrays in this order:
 * token_embedding_table [vocab, dim], rms_att_weight [L, dim],
 * wq [L, n_heads*head_size, dim], wk [L, n_kv_heads*head_size, dim],
 * wv [L, n_kv_heads*head_size, dim], wo [L, dim, n_heads*head_size],
 * rms_ffn_weight [L, dim], w1 [L, hidden, dim], w2 [L, dim, hidden],
 * w3 [L, hidden, dim], rms_final_weight [dim], freq_cis_real and
 * freq_cis_imag [seq_len, head_size/2] (unused), and wcls [vocab, dim] only
 * when vocab_size is negative in the header (a separate classifier; the
 * absolute value is the vocabulary size). Otherwise the classifier shares
 * the token embedding. Each matrix is stored as PyTorch stores a Linear
 * weight: [out, in], row-major. The header's layout is the only marker of
 * the format, so open validates the exact file size.
 *
 * The checkpoint's tensors are exposed under Meta's llama names
 * ("tok_embeddings.weight", "layers.N.attention.wq.weight", …,
 * "norm.weight", "output.weight" — the last only for a separate
 * classifier), each a view into the mapped file (no copies).
 *
 * Tokenizer file: int32 max_token_length, then per token: f32 score, int32
 * length, that many bytes. The vocabulary size comes from the checkpoint. */
#ifndef POOT_LLM_LLAMA2C_H
#define POOT_LLM_LLAMA2C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_llama2c_config {
  int32_t dim;
  int32_t hidden_dim;
  int32_t n_layers;
  int32_t n_heads;
  int32_t n_kv_heads;
  int32_t vocab_size; /* always positive here */
  int32_t seq_len;
  bool shared_classifier;
} poot_llama2c_config;

typedef struct poot_llama2c_tensor {
  const char *name;
  uint32_t rank;     /* 1 or 2 */
  uint64_t shape[2]; /* row-major: shape[0] outermost */
  const float *data; /* inside the mapping (4-byte aligned) */
  uint64_t size;     /* bytes */
} poot_llama2c_tensor;

typedef struct poot_llama2c poot_llama2c;

/* Maps and validates a checkpoint. FORMAT naming the header field (and its
 * offset) for a non-positive or inconsistent size, or the expected and
 * actual file sizes; NOT_FOUND/IO; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_llama2c_open(const char *path, poot_llama2c **out_model);
POOT_MUST_USE poot_status poot_llama2c_open_memory(const void *data, size_t size, const char *name,
                                                   poot_llama2c **out_model);
void poot_llama2c_destroy(poot_llama2c *model); /* NULL-safe */

const poot_llama2c_config *poot_llama2c_config_of(const poot_llama2c *model);
size_t poot_llama2c_tensor_count(const poot_llama2c *model);
const poot_llama2c_tensor *poot_llama2c_tensor_at(const poot_llama2c *model, size_t i);
const poot_llama2c_tensor *poot_llama2c_find(const poot_llama2c *model, const char *name);
/* True when the first 28 bytes look like a llama2.c header and the file
 * size matches it exactly (used to detect the format). */
bool poot_llama2c_probe(const void *data, size_t size);

/* A llama2.c tokenizer file. Tokens are bytes (not NUL-terminated; a NUL
 * follows each for convenience) with their scores. */
typedef struct poot_llama2c_vocab {
  int32_t max_token_length;
  int32_t n_tokens;
  const char **tokens; /* each followed by a NUL byte */
  const uint32_t *token_lens;
  const float *scores;
  poot_arena arena; /* private */
} poot_llama2c_vocab;

/* Reads `n_tokens` tokens from a tokenizer file. FORMAT naming the token
 * index and byte offset when truncated or a length is negative or larger
 * than the rest of the file; trailing bytes are FORMAT too. */
POOT_MUST_USE poot_status poot_llama2c_vocab_load(const char *path, int32_t n_tokens,
                                                  poot_llama2c_vocab **out_vocab);
POOT_MUST_USE poot_status poot_llama2c_vocab_parse(const void *data, size_t size, int32_t n_tokens,
                                                   const char *name,
                                                   poot_llama2c_vocab **out_vocab);
void poot_llama2c_vocab_destroy(poot_llama2c_vocab *vocab); /* NULL-safe */

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_LLAMA2C_H */
