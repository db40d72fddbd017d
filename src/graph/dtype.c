/* dtype.c — dtypes, shapes, types and the names of every graph enum. */
#include <stdio.h>
#include <string.h>

#include "graph_impl.h"

/* GGUF's block sizes: ggml.c type_traits (blck_size, type_size). */
static const poot_dtype_info dtype_table[POOT_DTYPE_COUNT] = {
    [POOT_DTYPE_F32] = {"f32", true, false, true, false, 32, 4, 1, 4},
    [POOT_DTYPE_F16] = {"f16", true, false, true, false, 16, 2, 1, 2},
    [POOT_DTYPE_BF16] = {"bf16", true, false, true, false, 16, 2, 1, 2},
    [POOT_DTYPE_I8] = {"i8", false, true, true, false, 8, 1, 1, 1},
    [POOT_DTYPE_U8] = {"u8", false, true, false, false, 8, 1, 1, 1},
    [POOT_DTYPE_I16] = {"i16", false, true, true, false, 16, 2, 1, 2},
    [POOT_DTYPE_I32] = {"i32", false, true, true, false, 32, 4, 1, 4},
    [POOT_DTYPE_I64] = {"i64", false, true, true, false, 64, 8, 1, 8},
    [POOT_DTYPE_U32] = {"u32", false, true, false, false, 32, 4, 1, 4},
    [POOT_DTYPE_BOOL] = {"bool", false, false, false, false, 8, 1, 1, 1},
    [POOT_DTYPE_Q8_0] = {"q8_0", false, false, false, true, 0, 0, 32, 34},
    [POOT_DTYPE_Q4_0] = {"q4_0", false, false, false, true, 0, 0, 32, 18},
    [POOT_DTYPE_Q4_1] = {"q4_1", false, false, false, true, 0, 0, 32, 20},
    [POOT_DTYPE_Q5_0] = {"q5_0", false, false, false, true, 0, 0, 32, 22},
    [POOT_DTYPE_Q5_1] = {"q5_1", false, false, false, true, 0, 0, 32, 24},
    [POOT_DTYPE_Q4_K] = {"q4_k", false, false, false, true, 0, 0, 256, 144},
    [POOT_DTYPE_Q5_K] = {"q5_k", false, false, false, true, 0, 0, 256, 176},
    [POOT_DTYPE_Q6_K] = {"q6_k", false, false, false, true, 0, 0, 256, 210},
    [POOT_DTYPE_Q8_K] = {"q8_k", false, false, false, true, 0, 0, 256, 292},
    [POOT_DTYPE_Q2_K] = {"q2_k", false, false, false, true, 0, 0, 256, 84},
    [POOT_DTYPE_Q3_K] = {"q3_k", false, false, false, true, 0, 0, 256, 110},
};

const poot_dtype_info *poot_dtype_info_of(poot_dtype dtype) {
  if ((int)dtype <= (int)POOT_DTYPE_NONE || (int)dtype >= (int)POOT_DTYPE_COUNT) return NULL;
  return &dtype_table[dtype];
}

const char *poot_dtype_name(poot_dtype dtype) {
  const poot_dtype_info *info = poot_dtype_info_of(dtype);
  return info ? info->name : "?";
}

static bool name_eq(const char *a, const char *b, size_t blen) {
  return strlen(a) == blen && memcmp(a, b, blen) == 0;
}

bool poot_dtype_from_name(const char *name, size_t len, poot_dtype *out_dtype) {
  *out_dtype = POOT_DTYPE_NONE;
  for (int i = 1; i < POOT_DTYPE_COUNT; i++) {
    if (name_eq(dtype_table[i].name, name, len)) {
      *out_dtype = (poot_dtype)i;
      return true;
    }
  }
  return false;
}

bool poot_dtype_is_int(poot_dtype dtype) {
  const poot_dtype_info *info = poot_dtype_info_of(dtype);
  return info && info->is_int;
}

bool poot_dtype_is_packed(poot_dtype dtype) {
  const poot_dtype_info *info = poot_dtype_info_of(dtype);
  return info && info->is_packed;
}

/* ------------------------------------------------------------------ shapes */

poot_shape poot_shape_make(uint32_t rank, const int64_t *dims) {
  poot_shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  for (uint32_t i = 0; i < rank && i < POOT_MAX_RANK; i++) s.dims[i] = dims[i];
  return s;
}

poot_type poot_type_make(poot_dtype dtype, uint32_t rank, const int64_t *dims) {
  poot_type t;
  t.dtype = dtype;
  t.shape = poot_shape_make(rank, dims);
  return t;
}

bool poot_shape_equal(const poot_shape *a, const poot_shape *b) {
  if (a->rank != b->rank) return false;
  for (uint32_t i = 0; i < a->rank && i < POOT_MAX_RANK; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool poot_type_equal(const poot_type *a, const poot_type *b) {
  return a->dtype == b->dtype && poot_shape_equal(&a->shape, &b->shape);
}

/* "[d0,d1,...]" of a shape (at most POOT_MAX_RANK dims) into buf, for
 * messages. */
static const char *shape_text(const poot_shape *shape, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (uint32_t i = 0; i < shape->rank && i < POOT_MAX_RANK && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)shape->dims[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

poot_status poot_shape_elements(const poot_shape *shape, int64_t *out_count) {
  *out_count = 0;
  if (shape->rank > POOT_MAX_RANK)
    return poot_status_make(POOT_INVALID_ARGUMENT, "shape rank %u exceeds the maximum %d",
                            shape->rank, POOT_MAX_RANK);
  int64_t n = 1;
  for (uint32_t i = 0; i < shape->rank; i++) {
    char buf[POOT_MAX_RANK * 21 + 3];
    if (shape->dims[i] < 0)
      return poot_status_make(POOT_INVALID_ARGUMENT, "shape %s: dim %u is negative (%lld)",
                              shape_text(shape, buf, sizeof buf), i, (long long)shape->dims[i]);
    if (__builtin_mul_overflow(n, shape->dims[i], &n))
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "shape %s: the element count overflows a 64-bit integer",
                              shape_text(shape, buf, sizeof buf));
  }
  *out_count = n;
  return NULL;
}

poot_status poot_type_byte_size(poot_dtype dtype, const poot_shape *shape, size_t *out_bytes) {
  *out_bytes = 0;
  const poot_dtype_info *info = poot_dtype_info_of(dtype);
  if (!info) return poot_status_make(POOT_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  int64_t n = 0;
  POOT_TRY(poot_shape_elements(shape, &n));
  if (info->is_packed) {
    if (shape->rank == 0)
      return poot_status_make(POOT_INVALID_ARGUMENT, "a %s value cannot be a scalar", info->name);
    int64_t last = shape->dims[shape->rank - 1];
    if (last % info->block_elems != 0)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "%s needs the last dim (%lld) to be a multiple of %lld", info->name,
                              (long long)last, (long long)info->block_elems);
    n /= info->block_elems;
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow((uint64_t)n, (uint64_t)info->block_bytes, &bytes) ||
      bytes > (uint64_t)SIZE_MAX) {
    char buf[POOT_MAX_RANK * 21 + 3];
    return poot_status_make(POOT_INVALID_ARGUMENT, "type %s%s: the byte size overflows size_t",
                            info->name, shape_text(shape, buf, sizeof buf));
  }
  *out_bytes = (size_t)bytes;
  return NULL;
}

void poot_type_format(poot_strbuf *sb, const poot_type *type) {
  poot_strbuf_puts(sb, poot_dtype_name(type->dtype));
  poot_strbuf_putc(sb, '[');
  for (uint32_t i = 0; i < type->shape.rank && i < POOT_MAX_RANK; i++) {
    if (i) poot_strbuf_putc(sb, ',');
    poot_strbuf_printf(sb, "%lld", (long long)type->shape.dims[i]);
  }
  poot_strbuf_putc(sb, ']');
}

poot_status poot__check_type(const poot_type *type, const char *what) {
  if (!poot_dtype_info_of(type->dtype))
    return poot_status_make(POOT_INVALID_ARGUMENT, "%s: invalid dtype %d", what,
                            (int)type->dtype);
  size_t bytes = 0;
  poot_status st = poot_type_byte_size(type->dtype, &type->shape, &bytes);
  if (st) return poot_status_annotate(st, "%s", what);
  return NULL;
}

/* ------------------------------------------------------------- enum names */

static const char *const storage_names[POOT_STORAGE_COUNT] = {"temp", "const", "weight",
                                                              "state", "slot",  "param"};
const char *poot_storage_name(poot_storage storage) {
  if ((unsigned)storage >= POOT_STORAGE_COUNT) return "?";
  return storage_names[storage];
}

static const char *const slot_names[POOT_SLOT_KIND_COUNT] = {"none",     "token",     "pos",
                                                             "slot_map", "write_map", "named"};
const char *poot_slot_kind_name(poot_slot_kind kind) {
  if ((unsigned)kind >= POOT_SLOT_KIND_COUNT) return "?";
  return slot_names[kind];
}
bool poot_slot_kind_from_name(const char *name, size_t len, poot_slot_kind *out_kind) {
  *out_kind = POOT_SLOT_NONE;
  for (int i = 1; i < POOT_SLOT_KIND_COUNT; i++) {
    if (name_eq(slot_names[i], name, len)) {
      *out_kind = (poot_slot_kind)i;
      return true;
    }
  }
  return false;
}

static const char *const trap_names[POOT_TRAP_COUNT] = {
    "none",
    "index_out_of_range",
    "token_out_of_range",
    "pos_out_of_range",
    "write_map_out_of_range",
    "slice_out_of_range"};
const char *poot_trap_name(poot_trap trap) {
  if ((unsigned)trap >= POOT_TRAP_COUNT) return "?";
  return trap_names[trap];
}
bool poot_trap_from_name(const char *name, size_t len, poot_trap *out_trap) {
  *out_trap = POOT_TRAP_NONE;
  for (int i = 0; i < POOT_TRAP_COUNT; i++) {
    if (name_eq(trap_names[i], name, len)) {
      *out_trap = (poot_trap)i;
      return true;
    }
  }
  return false;
}

static const char *const reduce_names[POOT_REDUCE_KIND_COUNT] = {"none", "sum", "max", "min",
                                                                 "argmax"};
const char *poot_reduce_kind_name(poot_reduce_kind kind) {
  if ((unsigned)kind >= POOT_REDUCE_KIND_COUNT) return "?";
  return reduce_names[kind];
}

static const char *const rng_names[POOT_RNG_DIST_COUNT] = {"none", "bits", "uniform"};
const char *poot_rng_dist_name(poot_rng_dist dist) {
  if ((unsigned)dist >= POOT_RNG_DIST_COUNT) return "?";
  return rng_names[dist];
}

/* ------------------------------------------------------------ weight names */

poot_weight_key poot_weight_key_of_name(const char *name, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)name[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

poot_weight_id poot_weight_id_named(const char *name) {
  poot_weight_id id = {.key = poot_weight_key_of_name(name, name ? strlen(name) : 0), .name = name};
  return id;
}

/* Appends a C-escaped, double-quoted string. */
void poot__format_string(poot_strbuf *sb, const char *s);

/* A name the text form reads back as one word: a letter or '_' first, then
 * letters, digits, '_' and '.', not ending in '.' (a word ending in '.'
 * prefixes a quoted name there). */
static bool is_plain_name(const char *s) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  size_t n = 0;
  for (; s[n]; n++) {
    char c = s[n];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.'))
      return false;
  }
  return s[n - 1] != '.';
}

void poot_weight_name_format(poot_strbuf *sb, const char *name) {
  if (is_plain_name(name))
    poot_strbuf_puts(sb, name);
  else
    poot__format_string(sb, name ? name : "");
}
