/* tools/npy.h — NumPy .npy files (format versions 1, 2 and 3), for the
 * `poot eval` command and the tests.
 *
 * Element types: little-endian f32 (<f4), f16 (<f2), i8 (|i1), u8 (|u1),
 * i16 (<i2), i32 (<i4), i64 (<i8), u32 (<u4), bool (|b1), and bf16. NumPy has
 * no bfloat16, so bf16 is written as '<u2' (the raw 16-bit patterns; read it
 * in Python with `a.astype(np.uint32) << 16` viewed as float32) and '<u2',
 * '|V2' and '<V2' all read as bf16. Only C order is supported; a Fortran-order
 * or big-endian file is UNSUPPORTED. A malformed file is a FORMAT error that
 * names the field; nothing here crashes on bad input. */
#ifndef POOT_TOOLS_NPY_H
#define POOT_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

#define POOT_NPY_MAX_RANK 16

typedef enum poot_npy_type {
  POOT_NPY_F32 = 0,
  POOT_NPY_F16,
  POOT_NPY_BF16,
  POOT_NPY_I8,
  POOT_NPY_U8,
  POOT_NPY_I16,
  POOT_NPY_I32,
  POOT_NPY_I64,
  POOT_NPY_U32,
  POOT_NPY_BOOL,
  POOT_NPY_TYPE_COUNT
} poot_npy_type;

/* An array: element type, shape (rank 0 is a scalar) and C-order data. */
typedef struct poot_npy {
  poot_npy_type type;
  int rank;
  int64_t shape[POOT_NPY_MAX_RANK];
  void *data;   /* owned (poot_free) after read; borrowed for write */
  size_t bytes; /* element count times element size */
} poot_npy;

size_t poot_npy_type_size(poot_npy_type type);
const char *poot_npy_type_name(poot_npy_type type); /* "f32", "bf16", … */
/* Element count of the shape (1 for rank 0). */
size_t poot_npy_count(const poot_npy *array);

/* Parses a whole .npy image (size bytes); the data is copied, so `bytes` may
 * be released afterwards. FORMAT naming the field on malformed input,
 * UNSUPPORTED for a valid file this reader does not take, OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_npy_parse(const void *bytes, size_t size, poot_npy *out_array);
/* Reads a file (IO/NOT_FOUND with the path) and parses it. */
POOT_MUST_USE poot_status poot_npy_read(const char *path, poot_npy *out_array);
/* Serializes to a format-1.0 image (heap buffer, poot_free). */
POOT_MUST_USE poot_status poot_npy_serialize(const poot_npy *array, void **out_bytes,
                                             size_t *out_size);
POOT_MUST_USE poot_status poot_npy_write(const char *path, const poot_npy *array);
/* Frees the data of an array that poot_npy_parse/read returned. NULL-safe. */
void poot_npy_deinit(poot_npy *array);

#endif
