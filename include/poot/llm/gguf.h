/* poot/llm/gguf.h — the GGUF file format: a reader (versions 2 and 3, memory
 * mapped) and a writer.
 *
 * A GGUF file is a header (magic "GGUF", version, tensor count, metadata
 * count), a list of typed key/value pairs, a list of tensor descriptions, and
 * a data section aligned to `general.alignment` (32 by default). Every number
 * is little-endian. Only little-endian files are read (a byte-swapped file is
 * UNSUPPORTED).
 *
 * Reader contract: poot_gguf_open validates the whole header once — every
 * value, every tensor's type, shape, offset and size against the file — and
 * never allocates more memory than a small multiple of the file's size, so a
 * hostile count or length is a FORMAT error naming the byte offset and the
 * field, never a huge allocation, an overflow or a read past the end.
 * Everything returned by the accessors is borrowed from the poot_gguf object
 * and stays valid until poot_gguf_destroy. Strings are (pointer, length)
 * pairs pointing into the mapped file and are NOT NUL-terminated, except keys
 * and tensor names, which are copied and NUL-terminated. A poot_gguf object
 * is immutable after open, so concurrent readers are safe. */
#ifndef POOT_LLM_GGUF_H
#define POOT_LLM_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POOT_GGUF_MAGIC 0x46554747u /* "GGUF" little-endian */
#define POOT_GGUF_DEFAULT_ALIGNMENT 32u
#define POOT_GGUF_MAX_DIMS 4u     /* GGML_MAX_DIMS */
#define POOT_GGUF_MAX_NESTING 32u /* arrays of arrays deeper than this are FORMAT */

/* Metadata value types, numbered as GGUF numbers them. */
typedef enum poot_gguf_value_type {
  POOT_GGUF_VALUE_U8 = 0,
  POOT_GGUF_VALUE_I8 = 1,
  POOT_GGUF_VALUE_U16 = 2,
  POOT_GGUF_VALUE_I16 = 3,
  POOT_GGUF_VALUE_U32 = 4,
  POOT_GGUF_VALUE_I32 = 5,
  POOT_GGUF_VALUE_F32 = 6,
  POOT_GGUF_VALUE_BOOL = 7,
  POOT_GGUF_VALUE_STRING = 8,
  POOT_GGUF_VALUE_ARRAY = 9,
  POOT_GGUF_VALUE_U64 = 10,
  POOT_GGUF_VALUE_I64 = 11,
  POOT_GGUF_VALUE_F64 = 12,
  POOT_GGUF_VALUE_TYPE_COUNT
} poot_gguf_value_type;

/* Tensor types, numbered as GGUF (ggml_type) numbers them. Ids 4 and 5 are
 * retired; the IQ and TQ types are known by size only. */
typedef enum poot_gguf_type {
  POOT_GGUF_TYPE_F32 = 0,
  POOT_GGUF_TYPE_F16 = 1,
  POOT_GGUF_TYPE_Q4_0 = 2,
  POOT_GGUF_TYPE_Q4_1 = 3,
  POOT_GGUF_TYPE_Q5_0 = 6,
  POOT_GGUF_TYPE_Q5_1 = 7,
  POOT_GGUF_TYPE_Q8_0 = 8,
  POOT_GGUF_TYPE_Q8_1 = 9,
  POOT_GGUF_TYPE_Q2_K = 10,
  POOT_GGUF_TYPE_Q3_K = 11,
  POOT_GGUF_TYPE_Q4_K = 12,
  POOT_GGUF_TYPE_Q5_K = 13,
  POOT_GGUF_TYPE_Q6_K = 14,
  POOT_GGUF_TYPE_Q8_K = 15,
  POOT_GGUF_TYPE_IQ2_XXS = 16,
  POOT_GGUF_TYPE_IQ2_XS = 17,
  POOT_GGUF_TYPE_IQ3_XXS = 18,
  POOT_GGUF_TYPE_IQ1_S = 19,
  POOT_GGUF_TYPE_IQ4_NL = 20,
  POOT_GGUF_TYPE_IQ3_S = 21,
  POOT_GGUF_TYPE_IQ2_S = 22,
  POOT_GGUF_TYPE_IQ4_XS = 23,
  POOT_GGUF_TYPE_I8 = 24,
  POOT_GGUF_TYPE_I16 = 25,
  POOT_GGUF_TYPE_I32 = 26,
  POOT_GGUF_TYPE_I64 = 27,
  POOT_GGUF_TYPE_F64 = 28,
  POOT_GGUF_TYPE_IQ1_M = 29,
  POOT_GGUF_TYPE_BF16 = 30,
  POOT_GGUF_TYPE_TQ1_0 = 34,
  POOT_GGUF_TYPE_TQ2_0 = 35,
  POOT_GGUF_TYPE_MXFP4 = 39,
  POOT_GGUF_TYPE_COUNT_ = 40
} poot_gguf_type;

/* What poot knows about a tensor type: its name ("q4_0"), how many elements a
 * block holds and how many bytes a block takes. `computable` is true for the
 * types poot computes with (DESIGN §3: f32 f16 bf16 i8 i16 i32 i64 and q8_0
 * q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k q8_k); the reader accepts
 * every type of this table, and the weight store refuses the others as
 * UNSUPPORTED. */
typedef struct poot_gguf_type_info {
  const char *name;
  uint32_t block_size; /* elements per block */
  uint32_t type_size;  /* bytes per block */
  bool computable;
} poot_gguf_type_info;

/* NULL for an id poot does not know. */
const poot_gguf_type_info *poot_gguf_type_info_of(uint32_t type);
/* The type named `name` (case-insensitive: "q8_0", "F16"); NOT_FOUND otherwise. */
POOT_MUST_USE poot_status poot_gguf_type_from_name(const char *name, poot_gguf_type *out_type);
/* "u8", "string", "array", … ("?" for an unknown id). */
const char *poot_gguf_value_type_name(uint32_t type);
/* Bytes of one row of `n` elements of `type`; false when the type is unknown,
 * n is not a multiple of the block size, or the size overflows. */
bool poot_gguf_row_size(uint32_t type, uint64_t n, uint64_t *out_bytes);

/* A string: bytes and length, not NUL-terminated. */
typedef struct poot_gguf_string {
  const char *data;
  uint64_t len;
} poot_gguf_string;

/* One metadata value. Scalars are widened: unsigned types (and BOOL, 0/1)
 * into `u`, signed into `i`, F32 and F64 into `f` (exactly). An ARRAY holds
 * `count` elements of `elem_type`: fixed-size elements stay packed
 * little-endian in the file at `raw` (possibly unaligned; read them with the
 * poot_gguf_array_get_* helpers), STRING elements are in `strings`, ARRAY
 * elements (nested arrays) in `items`. */
typedef struct poot_gguf_value poot_gguf_value;
struct poot_gguf_value {
  poot_gguf_value_type type;
  union {
    uint64_t u;
    int64_t i;
    double f;
    poot_gguf_string str;
    struct {
      poot_gguf_value_type elem_type;
      uint64_t count;
      const void *raw;                 /* fixed-size elements */
      const poot_gguf_string *strings; /* elem_type STRING */
      const poot_gguf_value *items;    /* elem_type ARRAY */
    } arr;
  };
};

/* One tensor. dims[0] is the innermost (fastest varying) dimension, as in
 * GGUF/ggml; dims past n_dims are 1. `data` points into the mapping. */
typedef struct poot_gguf_tensor {
  const char *name; /* NUL-terminated copy */
  poot_gguf_type type;
  uint32_t n_dims;
  uint64_t dims[POOT_GGUF_MAX_DIMS];
  uint64_t n_elements;
  uint64_t offset; /* from the start of the data section */
  uint64_t size;   /* bytes */
  const uint8_t *data;
} poot_gguf_tensor;

typedef struct poot_gguf poot_gguf;

/* Maps and parses the file at `path`. NOT_FOUND/IO when it cannot be mapped,
 * FORMAT (naming the offset and the field) when it is malformed or truncated,
 * UNSUPPORTED for another version, a byte-swapped file or an unknown tensor
 * type, OUT_OF_MEMORY. *out_gguf is NULL on failure. */
POOT_MUST_USE poot_status poot_gguf_open(const char *path, poot_gguf **out_gguf);
/* Parses `size` bytes at `data` (borrowed: they must outlive the object).
 * `name` (borrowed during the call, may be NULL) names the input in errors. */
POOT_MUST_USE poot_status poot_gguf_open_memory(const void *data, size_t size, const char *name,
                                                poot_gguf **out_gguf);
void poot_gguf_destroy(poot_gguf *gguf); /* NULL-safe */

uint32_t poot_gguf_version(const poot_gguf *gguf);
uint32_t poot_gguf_alignment(const poot_gguf *gguf);
uint64_t poot_gguf_data_offset(const poot_gguf *gguf); /* file offset of the data section */
const uint8_t *poot_gguf_file_data(const poot_gguf *gguf, size_t *out_size);

/* Metadata, in file order. */
size_t poot_gguf_kv_count(const poot_gguf *gguf);
const char *poot_gguf_kv_key(const poot_gguf *gguf, size_t index);
const poot_gguf_value *poot_gguf_kv_value(const poot_gguf *gguf, size_t index);
/* The value of `key`, or NULL when absent. */
const poot_gguf_value *poot_gguf_find(const poot_gguf *gguf, const char *key);

/* Typed lookups. NOT_FOUND when the key is absent; FORMAT naming the key and
 * both types when the value has another type. Integer getters accept any
 * integer type (and BOOL) whose value fits the asked type (else FORMAT);
 * float getters accept F32 and F64 (and integers). get_string returns the
 * bytes (borrowed, not NUL-terminated) and length. */
POOT_MUST_USE poot_status poot_gguf_get_u8(const poot_gguf *g, const char *key, uint8_t *out);
POOT_MUST_USE poot_status poot_gguf_get_i8(const poot_gguf *g, const char *key, int8_t *out);
POOT_MUST_USE poot_status poot_gguf_get_u16(const poot_gguf *g, const char *key, uint16_t *out);
POOT_MUST_USE poot_status poot_gguf_get_i16(const poot_gguf *g, const char *key, int16_t *out);
POOT_MUST_USE poot_status poot_gguf_get_u32(const poot_gguf *g, const char *key, uint32_t *out);
POOT_MUST_USE poot_status poot_gguf_get_i32(const poot_gguf *g, const char *key, int32_t *out);
POOT_MUST_USE poot_status poot_gguf_get_u64(const poot_gguf *g, const char *key, uint64_t *out);
POOT_MUST_USE poot_status poot_gguf_get_i64(const poot_gguf *g, const char *key, int64_t *out);
POOT_MUST_USE poot_status poot_gguf_get_f32(const poot_gguf *g, const char *key, float *out);
POOT_MUST_USE poot_status poot_gguf_get_f64(const poot_gguf *g, const char *key, double *out);
POOT_MUST_USE poot_status poot_gguf_get_bool(const poot_gguf *g, const char *key, bool *out);
POOT_MUST_USE poot_status poot_gguf_get_string(const poot_gguf *g, const char *key,
                                               const char **out_data, size_t *out_len);
/* An ARRAY value; when elem_type is not POOT_GGUF_VALUE_TYPE_COUNT its
 * elements must have that type (else FORMAT). */
POOT_MUST_USE poot_status poot_gguf_get_array(const poot_gguf *g, const char *key,
                                              poot_gguf_value_type elem_type,
                                              const poot_gguf_value **out_array);

/* Element access on an ARRAY value (also nested ones). `index` must be below
 * count (else INVALID_ARGUMENT). Numeric getters convert like the typed
 * lookups above (FORMAT when the element type does not fit). */
uint64_t poot_gguf_array_len(const poot_gguf_value *array); /* 0 for a non-array */
POOT_MUST_USE poot_status poot_gguf_array_get_u64(const poot_gguf_value *a, uint64_t index,
                                                  uint64_t *out);
POOT_MUST_USE poot_status poot_gguf_array_get_i64(const poot_gguf_value *a, uint64_t index,
                                                  int64_t *out);
POOT_MUST_USE poot_status poot_gguf_array_get_i32(const poot_gguf_value *a, uint64_t index,
                                                  int32_t *out);
POOT_MUST_USE poot_status poot_gguf_array_get_f64(const poot_gguf_value *a, uint64_t index,
                                                  double *out);
POOT_MUST_USE poot_status poot_gguf_array_get_f32(const poot_gguf_value *a, uint64_t index,
                                                  float *out);
POOT_MUST_USE poot_status poot_gguf_array_get_bool(const poot_gguf_value *a, uint64_t index,
                                                   bool *out);
POOT_MUST_USE poot_status poot_gguf_array_get_string(const poot_gguf_value *a, uint64_t index,
                                                     const char **out_data, size_t *out_len);
/* A nested array element (the element type must be ARRAY). */
POOT_MUST_USE poot_status poot_gguf_array_get_array(const poot_gguf_value *a, uint64_t index,
                                                    const poot_gguf_value **out_array);
/* Reads any scalar value (not STRING/ARRAY) as the widened fields of a
 * poot_gguf_value; used for the elements of fixed-size arrays. */
POOT_MUST_USE poot_status poot_gguf_array_get_value(const poot_gguf_value *a, uint64_t index,
                                                    poot_gguf_value *out_value);

/* Tensors, in file order. */
size_t poot_gguf_tensor_count(const poot_gguf *gguf);
const poot_gguf_tensor *poot_gguf_tensor_at(const poot_gguf *gguf, size_t index);
/* The tensor named `name`, or NULL. */
const poot_gguf_tensor *poot_gguf_find_tensor(const poot_gguf *gguf, const char *name);

/* ------------------------------------------------------------------ writer */

/* Builds a GGUF v3 file in memory (metadata and tensor descriptions) and
 * writes it out, streaming tensor data one tensor at a time. Keys keep the
 * order they were first set in; setting a key again replaces its value. Not
 * thread safe. */
typedef struct poot_gguf_writer poot_gguf_writer;

/* Produces the `size` bytes of tensor `index` (in add order) into `dst`. */
typedef poot_status (*poot_gguf_tensor_source)(void *ctx, size_t index, void *dst, uint64_t size);
/* Progress callback: called after each tensor is written. */
typedef void (*poot_gguf_write_progress)(void *ctx, size_t done, size_t total, const char *name);

POOT_MUST_USE poot_status poot_gguf_writer_create(poot_gguf_writer **out_writer);
void poot_gguf_writer_destroy(poot_gguf_writer *writer); /* NULL-safe */

/* Sets `key` to a deep copy of `value` (any type, nested arrays included;
 * strings and raw array bytes are copied). INVALID_ARGUMENT for a malformed
 * value. */
POOT_MUST_USE poot_status poot_gguf_writer_set_value(poot_gguf_writer *w, const char *key,
                                                     const poot_gguf_value *value);
POOT_MUST_USE poot_status poot_gguf_writer_set_u32(poot_gguf_writer *w, const char *key,
                                                   uint32_t v);
POOT_MUST_USE poot_status poot_gguf_writer_set_i32(poot_gguf_writer *w, const char *key, int32_t v);
POOT_MUST_USE poot_status poot_gguf_writer_set_u64(poot_gguf_writer *w, const char *key,
                                                   uint64_t v);
POOT_MUST_USE poot_status poot_gguf_writer_set_f32(poot_gguf_writer *w, const char *key, float v);
POOT_MUST_USE poot_status poot_gguf_writer_set_bool(poot_gguf_writer *w, const char *key, bool v);
POOT_MUST_USE poot_status poot_gguf_writer_set_string(poot_gguf_writer *w, const char *key,
                                                      const char *s, size_t len);
/* An array of `count` fixed-size elements of `elem_type` (not STRING or
 * ARRAY) stored natively (int32_t for I32, float for F32, uint8_t 0/1 for
 * BOOL, …) at `data`, copied. */
POOT_MUST_USE poot_status poot_gguf_writer_set_array(poot_gguf_writer *w, const char *key,
                                                     poot_gguf_value_type elem_type,
                                                     const void *data, uint64_t count);
/* An array of strings; lens may be NULL (then each string is NUL-terminated). */
POOT_MUST_USE poot_status poot_gguf_writer_set_string_array(poot_gguf_writer *w, const char *key,
                                                            const char *const *strs,
                                                            const size_t *lens, uint64_t count);
/* Removes a key if present. */
void poot_gguf_writer_remove(poot_gguf_writer *w, const char *key);

/* Declares a tensor. dims[0] is innermost. `data` (borrowed until write, may
 * be NULL) holds its bytes; when NULL the writer asks `source` for them at
 * write time. INVALID_ARGUMENT for a duplicate name, an unknown type, a shape
 * whose innermost dimension is not a multiple of the block size. */
POOT_MUST_USE poot_status poot_gguf_writer_add_tensor(poot_gguf_writer *w, const char *name,
                                                      poot_gguf_type type, uint32_t n_dims,
                                                      const uint64_t *dims, const void *data);
void poot_gguf_writer_set_source(poot_gguf_writer *w, poot_gguf_tensor_source source, void *ctx);
void poot_gguf_writer_set_progress(poot_gguf_writer *w, poot_gguf_write_progress progress,
                                   void *ctx);
/* The alignment of tensor data (a power of two; default 32). A value other
 * than 32 is also written as general.alignment. */
POOT_MUST_USE poot_status poot_gguf_writer_set_alignment(poot_gguf_writer *w, uint32_t alignment);

/* Writes the file (to `path`.tmp, then renames). IO naming the path. */
POOT_MUST_USE poot_status poot_gguf_writer_write_file(poot_gguf_writer *w, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_GGUF_H */
