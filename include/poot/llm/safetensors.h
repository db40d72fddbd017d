/* poot/llm/safetensors.h — the safetensors format: single files and sharded
 * models (model.safetensors.index.json), memory-mapped.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
 * optional "__metadata__": {string: string}}), then the data. Tensors are
 * dense, row-major (shape[0] outermost), little-endian. Data may be
 * unaligned: read it with memcpy.
 *
 * Contract: open validates every entry once (dtype known, shape × element
 * size = byte range, range inside the data section, no overlap) and
 * allocates memory bounded by the header's size, which is itself checked
 * against the file size and capped at 100 MB like the reference loader. A
 * malformed file is FORMAT naming the file, the byte offset (for the
 * header length and the JSON) and the tensor and field. Everything returned
 * is borrowed and valid until poot_safetensors_destroy; the object is
 * immutable after open. */
#ifndef POOT_LLM_SAFETENSORS_H
#define POOT_LLM_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POOT_SAFETENSORS_MAX_RANK 8
#define POOT_SAFETENSORS_MAX_HEADER (100u * 1000u * 1000u)

typedef enum poot_safetensors_dtype {
  POOT_SAFETENSORS_F32 = 0,
  POOT_SAFETENSORS_F16,
  POOT_SAFETENSORS_BF16,
  POOT_SAFETENSORS_F64,
  POOT_SAFETENSORS_I8,
  POOT_SAFETENSORS_U8,
  POOT_SAFETENSORS_I16,
  POOT_SAFETENSORS_U16,
  POOT_SAFETENSORS_I32,
  POOT_SAFETENSORS_U32,
  POOT_SAFETENSORS_I64,
  POOT_SAFETENSORS_U64,
  POOT_SAFETENSORS_BOOL,
  POOT_SAFETENSORS_DTYPE_COUNT
} poot_safetensors_dtype;

/* "F32", "BF16", "BOOL", … as the format spells them. */
const char *poot_safetensors_dtype_name(poot_safetensors_dtype dtype);
size_t poot_safetensors_dtype_size(poot_safetensors_dtype dtype); /* bytes per element */

typedef struct poot_safetensors_tensor {
  const char *name; /* NUL-terminated */
  poot_safetensors_dtype dtype;
  uint32_t rank;
  uint64_t shape[POOT_SAFETENSORS_MAX_RANK]; /* shape[0] outermost */
  uint64_t n_elements;
  const uint8_t *data; /* inside the mapping of `file` */
  uint64_t size;       /* bytes */
  const char *file;    /* the shard's path */
} poot_safetensors_tensor;

typedef struct poot_safetensors poot_safetensors;

/* Opens `path`: a .safetensors file, a model.safetensors.index.json, or a
 * folder holding model.safetensors or model.safetensors.index.json. For an
 * index, every shard it names is opened once and every tensor of the
 * weight_map must be in the shard it names (FORMAT otherwise). NOT_FOUND/IO
 * when a file cannot be mapped, FORMAT when malformed, UNSUPPORTED for a
 * dtype poot does not know (F8 types), OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_safetensors_open(const char *path, poot_safetensors **out_st);
/* Parses one file's bytes (borrowed; must outlive the object). */
POOT_MUST_USE poot_status poot_safetensors_open_memory(const void *data, size_t size,
                                                       const char *name, poot_safetensors **out_st);
void poot_safetensors_destroy(poot_safetensors *st); /* NULL-safe */

/* Tensors, sorted by name (shards merged). */
size_t poot_safetensors_tensor_count(const poot_safetensors *st);
const poot_safetensors_tensor *poot_safetensors_tensor_at(const poot_safetensors *st, size_t i);
const poot_safetensors_tensor *poot_safetensors_find(const poot_safetensors *st, const char *name);
/* The first file's "__metadata__" object (or the index's "metadata"), or
 * NULL when absent. Borrowed. */
const poot_json *poot_safetensors_metadata(const poot_safetensors *st);
/* Number of files (shards) opened. */
size_t poot_safetensors_file_count(const poot_safetensors *st);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_SAFETENSORS_H */
