/* poot/llm/store.h — the weight store: the named tensors of a model file,
 * backed by the memory-mapped file (no copies for GGUF, safetensors or
 * llama2.c), in one format-neutral description.
 *
 * Shapes are row-major as everywhere in poot (poot/graph.h): shape.dims[0] is
 * the outermost dimension and the last one varies fastest. GGUF lists its
 * dimensions innermost first, so a GGUF tensor with ne = [in, out] appears
 * here as [out, in] — the same shape the safetensors and llama2.c files give
 * the same weight. Packed GGUF formats are laid out in blocks along the last
 * dimension, as poot/graph.h describes.
 *
 * A store is immutable after open: concurrent readers are safe. Everything
 * returned is borrowed and valid until poot_store_destroy. */
#ifndef POOT_LLM_STORE_H
#define POOT_LLM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph.h"
#include "poot/llm/gguf.h"
#include "poot/llm/llama2c.h"
#include "poot/llm/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum poot_store_format {
  POOT_STORE_FORMAT_NONE = 0,
  POOT_STORE_FORMAT_GGUF,
  POOT_STORE_FORMAT_SAFETENSORS,
  POOT_STORE_FORMAT_LLAMA2C,
} poot_store_format;

/* "gguf", "safetensors", "llama2.c". */
const char *poot_store_format_name(poot_store_format format);

typedef struct poot_store_tensor {
  const char *name;
  /* poot's dtype, or POOT_DTYPE_NONE for a type poot reads but does not
   * compute with (GGUF q8_1, iq*, tq*, f64; safetensors F64, U16, U64). */
  poot_dtype dtype;
  const char *type_name; /* the file's own spelling: "q4_k", "BF16", "f32" */
  int32_t gguf_type;     /* GGUF sources: the tensor type id; -1 otherwise */
  poot_shape shape;      /* row-major */
  const void *data;      /* in the mapping; safetensors data may be unaligned */
  size_t size;           /* bytes */
} poot_store_tensor;

typedef struct poot_store poot_store;

/* Opens a model file and detects its format from its contents: GGUF (the
 * magic), safetensors (a folder holding model.safetensors, an index, or
 * *.safetensors shards; a .safetensors file; a .json index), llama2.c (a
 * header whose sizes match the file size exactly). NOT_FOUND when the path
 * does not exist, FORMAT when the contents match no format (or the matching
 * reader rejects them), IO, OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_store_open(const char *path, poot_store **out_store);
void poot_store_destroy(poot_store *store); /* NULL-safe */

poot_store_format poot_store_format_of(const poot_store *store);
const char *poot_store_path(const poot_store *store);
size_t poot_store_tensor_count(const poot_store *store);
const poot_store_tensor *poot_store_tensor_at(const poot_store *store, size_t index);
/* NOT_FOUND naming the tensor and the file when absent. */
POOT_MUST_USE poot_status poot_store_find(const poot_store *store, const char *name,
                                          const poot_store_tensor **out_tensor);

/* The underlying reader (NULL for the other formats). */
const poot_gguf *poot_store_gguf(const poot_store *store);
const poot_safetensors *poot_store_safetensors(const poot_store *store);
const poot_llama2c *poot_store_llama2c(const poot_store *store);

/* Maps a GGUF tensor type or a safetensors dtype to poot's dtype
 * (POOT_DTYPE_NONE when poot does not compute with it). */
poot_dtype poot_store_dtype_from_gguf(uint32_t gguf_type);
poot_dtype poot_store_dtype_from_safetensors(poot_safetensors_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_STORE_H */
