/* The GGUF reader: validates the whole header once, against the file size,
 * so that the accessors never need to check anything again.
 *
 * Allocation bound: every element the reader allocates memory for (a key, a
 * value, a string reference, a tensor) is checked first to consume at least a
 * fixed number of bytes of the file, so the memory used is at most a small
 * multiple of the file's size whatever the counts in the header say. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/gguf.h"

struct poot_gguf {
  poot_file_map map;
  const uint8_t *data;
  size_t size;
  char *name;
  uint32_t version;
  uint32_t alignment;
  uint64_t data_offset;
  poot_arena arena;
  size_t n_kv;
  const char **keys;
  poot_gguf_value *values;
  size_t n_tensors;
  poot_gguf_tensor *tensors;
  poot_map kv_index;
  poot_map tensor_index;
};

/* The parsing cursor. */
typedef struct reader {
  poot_gguf *g;
  size_t pos;
} reader;

static const size_t value_type_size[POOT_GGUF_VALUE_TYPE_COUNT] = {
    [POOT_GGUF_VALUE_U8] = 1,    [POOT_GGUF_VALUE_I8] = 1,   [POOT_GGUF_VALUE_U16] = 2,
    [POOT_GGUF_VALUE_I16] = 2,   [POOT_GGUF_VALUE_U32] = 4,  [POOT_GGUF_VALUE_I32] = 4,
    [POOT_GGUF_VALUE_F32] = 4,   [POOT_GGUF_VALUE_BOOL] = 1, [POOT_GGUF_VALUE_STRING] = 0,
    [POOT_GGUF_VALUE_ARRAY] = 0, [POOT_GGUF_VALUE_U64] = 8,  [POOT_GGUF_VALUE_I64] = 8,
    [POOT_GGUF_VALUE_F64] = 8};

static POOT_MUST_USE poot_status fail(reader *r, size_t offset, const char *fmt, ...)
    POOT_PRINTF(3, 4);
static poot_status fail(reader *r, size_t offset, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return poot_status_make(POOT_FORMAT, "GGUF '%s': at byte offset %zu: %s", r->g->name, offset,
                          what);
}

static size_t remaining(const reader *r) {
  return r->g->size - r->pos;
}

/* Reads n bytes (n ≤ 8) into dst; FORMAT naming `field` when truncated. */
static poot_status read_bytes(reader *r, void *dst, size_t n, const char *field, const char *key) {
  if (remaining(r) < n)
    return fail(r, r->pos, "file truncated reading %s%s%s%s (needs %zu bytes, %zu left)", field,
                key ? " of key '" : "", key ? key : "", key ? "'" : "", n, remaining(r));
  memcpy(dst, r->g->data + r->pos, n);
  r->pos += n;
  return NULL;
}

static poot_status read_u32(reader *r, uint32_t *out, const char *field, const char *key) {
  *out = 0;
  return read_bytes(r, out, 4, field, key);
}

static poot_status read_u64(reader *r, uint64_t *out, const char *field, const char *key) {
  *out = 0;
  return read_bytes(r, out, 8, field, key);
}

/* A string: u64 length then bytes, borrowed from the mapping. */
static poot_status read_string(reader *r, poot_gguf_string *out, const char *field,
                               const char *key) {
  out->data = NULL;
  out->len = 0;
  size_t at = r->pos;
  uint64_t len = 0;
  POOT_TRY(read_u64(r, &len, field, key));
  if (len > remaining(r))
    return fail(r, at, "%s%s%s%s has length %llu but only %zu bytes remain in the file", field,
                key ? " of key '" : "", key ? key : "", key ? "'" : "", (unsigned long long)len,
                remaining(r));
  out->data = (const char *)r->g->data + r->pos;
  out->len = len;
  r->pos += (size_t)len;
  return NULL;
}

static void widen_scalar(poot_gguf_value_type type, const uint8_t *p, poot_gguf_value *v) {
  memset(v, 0, sizeof *v);
  v->type = type;
  switch (type) {
    case POOT_GGUF_VALUE_U8:
      v->u = p[0];
      break;
    case POOT_GGUF_VALUE_BOOL:
      v->u = p[0] != 0;
      break;
    case POOT_GGUF_VALUE_I8:
      v->i = (int8_t)p[0];
      break;
    case POOT_GGUF_VALUE_U16: {
      uint16_t x;
      memcpy(&x, p, 2);
      v->u = x;
      break;
    }
    case POOT_GGUF_VALUE_I16: {
      int16_t x;
      memcpy(&x, p, 2);
      v->i = x;
      break;
    }
    case POOT_GGUF_VALUE_U32: {
      uint32_t x;
      memcpy(&x, p, 4);
      v->u = x;
      break;
    }
    case POOT_GGUF_VALUE_I32: {
      int32_t x;
      memcpy(&x, p, 4);
      v->i = x;
      break;
    }
    case POOT_GGUF_VALUE_F32: {
      float x;
      memcpy(&x, p, 4);
      v->f = x;
      break;
    }
    case POOT_GGUF_VALUE_U64:
      memcpy(&v->u, p, 8);
      break;
    case POOT_GGUF_VALUE_I64:
      memcpy(&v->i, p, 8);
      break;
    case POOT_GGUF_VALUE_F64:
      memcpy(&v->f, p, 8);
      break;
    default:
      break;
  }
}

static poot_status read_value(reader *r, poot_gguf_value_type type, poot_gguf_value *out,
                              const char *key, unsigned depth);

static poot_status read_array(reader *r, poot_gguf_value *out, const char *key, unsigned depth) {
  size_t at = r->pos;
  if (depth >= POOT_GGUF_MAX_NESTING)
    return fail(r, at, "arrays of key '%s' are nested deeper than %u levels", key,
                POOT_GGUF_MAX_NESTING);
  uint32_t elem = 0;
  POOT_TRY(read_u32(r, &elem, "the array element type", key));
  if (elem >= POOT_GGUF_VALUE_TYPE_COUNT)
    return fail(r, at, "array element type %u of key '%s' is not a GGUF value type", elem, key);
  size_t at_count = r->pos;
  uint64_t count = 0;
  POOT_TRY(read_u64(r, &count, "the array length", key));
  out->arr.elem_type = (poot_gguf_value_type)elem;
  out->arr.count = count;
  size_t fixed = value_type_size[elem];
  /* The least bytes one element can take: a bound on how many can exist. */
  size_t least = fixed ? fixed : elem == POOT_GGUF_VALUE_STRING ? 8 : 12;
  if (count > remaining(r) / least)
    return fail(r, at_count,
                "array of key '%s' claims %llu elements of type %s but only %zu bytes remain", key,
                (unsigned long long)count, poot_gguf_value_type_name(elem), remaining(r));
  if (fixed) {
    out->arr.raw = r->g->data + r->pos;
    r->pos += (size_t)count * fixed;
    return NULL;
  }
  if (elem == POOT_GGUF_VALUE_STRING) {
    poot_gguf_string *strs =
        count ? POOT_ARENA_NEW_ARRAY(&r->g->arena, poot_gguf_string, count) : NULL;
    if (count && !strs) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
    for (uint64_t i = 0; i < count; i++) {
      size_t at_i = r->pos;
      uint64_t len = 0;
      if (remaining(r) < 8)
        return fail(r, at_i, "file truncated reading the length of string %llu of key '%s'",
                    (unsigned long long)i, key);
      memcpy(&len, r->g->data + r->pos, 8);
      r->pos += 8;
      if (len > remaining(r))
        return fail(r, at_i, "string %llu of key '%s' has length %llu but only %zu bytes remain",
                    (unsigned long long)i, key, (unsigned long long)len, remaining(r));
      strs[i].data = (const char *)r->g->data + r->pos;
      strs[i].len = len;
      r->pos += (size_t)len;
    }
    out->arr.strings = strs;
    return NULL;
  }
  /* Nested arrays. */
  poot_gguf_value *items =
      count ? POOT_ARENA_NEW_ARRAY(&r->g->arena, poot_gguf_value, count) : NULL;
  if (count && !items) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  for (uint64_t i = 0; i < count; i++)
    POOT_TRY(read_value(r, POOT_GGUF_VALUE_ARRAY, &items[i], key, depth + 1));
  out->arr.items = items;
  return NULL;
}

static poot_status read_value(reader *r, poot_gguf_value_type type, poot_gguf_value *out,
                              const char *key, unsigned depth) {
  memset(out, 0, sizeof *out);
  out->type = type;
  if (type == POOT_GGUF_VALUE_STRING) return read_string(r, &out->str, "the string value", key);
  if (type == POOT_GGUF_VALUE_ARRAY) return read_array(r, out, key, depth);
  size_t n = value_type_size[type];
  if (remaining(r) < n)
    return fail(r, r->pos, "file truncated reading the %s value of key '%s' (needs %zu bytes)",
                poot_gguf_value_type_name(type), key, n);
  widen_scalar(type, r->g->data + r->pos, out);
  r->pos += n;
  return NULL;
}

static poot_status parse_header(reader *r) {
  poot_gguf *g = r->g;
  uint32_t magic = 0;
  POOT_TRY(read_u32(r, &magic, "the magic number", NULL));
  if (magic != POOT_GGUF_MAGIC)
    return fail(r, 0, "bad magic 0x%08x (expected \"GGUF\"): not a GGUF file", magic);
  POOT_TRY(read_u32(r, &g->version, "the version", NULL));
  if (g->version != 2 && g->version != 3) {
    if ((g->version & 0xffffu) == 0 && ((g->version >> 24) == 2 || (g->version >> 24) == 3))
      return poot_status_make(POOT_UNSUPPORTED,
                              "GGUF '%s': a big-endian file; only little-endian is supported",
                              g->name);
    return poot_status_make(
        POOT_UNSUPPORTED, "GGUF '%s': at byte offset 4: version %u is not supported (2 and 3 are)",
        g->name, g->version);
  }
  size_t at_tc = r->pos;
  uint64_t n_tensors = 0, n_kv = 0;
  POOT_TRY(read_u64(r, &n_tensors, "the tensor count", NULL));
  size_t at_kc = r->pos;
  POOT_TRY(read_u64(r, &n_kv, "the metadata key/value count", NULL));
  /* A key/value takes at least 13 bytes (key length, type, a u8); a tensor
   * description at least 24 (name length, n_dims, type, offset). */
  if (n_kv > remaining(r) / 13)
    return fail(r, at_kc, "metadata count %llu is impossible for %zu remaining bytes",
                (unsigned long long)n_kv, remaining(r));
  if (n_tensors > remaining(r) / 24)
    return fail(r, at_tc, "tensor count %llu is impossible for %zu remaining bytes",
                (unsigned long long)n_tensors, remaining(r));
  g->n_kv = (size_t)n_kv;
  g->n_tensors = (size_t)n_tensors;
  if (n_kv) {
    g->keys = POOT_ARENA_NEW_ARRAY(&g->arena, const char *, n_kv);
    g->values = POOT_ARENA_NEW_ARRAY(&g->arena, poot_gguf_value, n_kv);
    if (!g->keys || !g->values) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  }
  g->alignment = POOT_GGUF_DEFAULT_ALIGNMENT;
  for (size_t i = 0; i < g->n_kv; i++) {
    size_t at = r->pos;
    poot_gguf_string key;
    char field[64];
    snprintf(field, sizeof field, "the key of metadata entry %zu", i);
    POOT_TRY(read_string(r, &key, field, NULL));
    char *k = poot_arena_alloc(&g->arena, (size_t)key.len + 1, 1);
    if (!k) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
    memcpy(k, key.data, (size_t)key.len);
    /* Keys are handed out NUL-terminated, so they may not contain NUL. */
    if (memchr(key.data, 0, (size_t)key.len))
      return fail(r, at, "metadata key %zu contains a NUL byte", i);
    if (poot_map_get(&g->kv_index, k, (size_t)key.len, NULL))
      return fail(r, at, "duplicate metadata key '%s'", k);
    POOT_TRY(poot_map_put(&g->kv_index, k, (size_t)key.len, i));
    g->keys[i] = k;
    size_t at_type = r->pos;
    uint32_t type = 0;
    POOT_TRY(read_u32(r, &type, "the value type", k));
    if (type >= POOT_GGUF_VALUE_TYPE_COUNT)
      return fail(r, at_type, "value type %u of key '%s' is not a GGUF value type", type, k);
    POOT_TRY(read_value(r, (poot_gguf_value_type)type, &g->values[i], k, 0));
    if (strcmp(k, "general.alignment") == 0) {
      const poot_gguf_value *v = &g->values[i];
      if (v->type != POOT_GGUF_VALUE_U32 || v->u == 0 || (v->u & (v->u - 1)) != 0)
        return fail(r, at_type, "general.alignment must be a u32 power of two (got %s %llu)",
                    poot_gguf_value_type_name(v->type), (unsigned long long)v->u);
      g->alignment = (uint32_t)v->u;
    }
  }
  return NULL;
}

static int by_offset(const void *a, const void *b) {
  const poot_gguf_tensor *x = *(const poot_gguf_tensor *const *)a;
  const poot_gguf_tensor *y = *(const poot_gguf_tensor *const *)b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  if (x->size != y->size) return x->size < y->size ? -1 : 1; /* empty tensors first */
  return x < y ? -1 : x > y; /* then in file order: the same report every run */
}

/* No two tensors may share bytes: a tensor whose offset was copied from
 * another, or whose type was relabelled to a wider one (f16 read as f32),
 * would read its neighbour's data and generate garbage. Sorted by offset,
 * each tensor must begin at or after the end of the one before it (empty
 * tensors take no bytes). The tensors' ends were checked against the file. */
static poot_status check_no_overlap(reader *r) {
  poot_gguf *g = r->g;
  if (g->n_tensors < 2) return NULL;
  const poot_gguf_tensor **order =
      poot_arena_alloc(&g->arena, g->n_tensors * sizeof *order, _Alignof(poot_gguf_tensor *));
  if (!order) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  for (size_t i = 0; i < g->n_tensors; i++) order[i] = &g->tensors[i];
  qsort(order, g->n_tensors, sizeof *order, by_offset);
  const poot_gguf_tensor *prev = NULL;
  for (size_t i = 0; i < g->n_tensors; i++) {
    const poot_gguf_tensor *t = order[i];
    if (t->size == 0) continue;
    if (prev && t->offset < prev->offset + prev->size)
      return fail(r, r->pos,
                  "tensor '%s' has offset %llu, expected at least %llu: tensor '%s' (%s, %llu "
                  "bytes at offset %llu) runs into it; GGUF tensors may not overlap",
                  t->name, (unsigned long long)t->offset,
                  (unsigned long long)(prev->offset + prev->size), prev->name,
                  poot_gguf_type_info_of(prev->type)->name, (unsigned long long)prev->size,
                  (unsigned long long)prev->offset);
    prev = t;
  }
  return NULL;
}

static poot_status parse_tensors(reader *r) {
  poot_gguf *g = r->g;
  if (g->n_tensors) {
    g->tensors = POOT_ARENA_NEW_ARRAY(&g->arena, poot_gguf_tensor, g->n_tensors);
    if (!g->tensors) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  }
  for (size_t i = 0; i < g->n_tensors; i++) {
    poot_gguf_tensor *t = &g->tensors[i];
    size_t at = r->pos;
    poot_gguf_string name;
    char field[64];
    snprintf(field, sizeof field, "the name of tensor %zu", i);
    POOT_TRY(read_string(r, &name, field, NULL));
    char *n = poot_arena_alloc(&g->arena, (size_t)name.len + 1, 1);
    if (!n) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
    memcpy(n, name.data, (size_t)name.len);
    t->name = n;
    if (memchr(name.data, 0, (size_t)name.len))
      return fail(r, at, "the name of tensor %zu contains a NUL byte", i);
    if (poot_map_get(&g->tensor_index, n, (size_t)name.len, NULL))
      return fail(r, at, "duplicate tensor name '%s'", n);
    POOT_TRY(poot_map_put(&g->tensor_index, n, (size_t)name.len, i));
    size_t at_nd = r->pos;
    char what[96];
    snprintf(what, sizeof what, "the dimension count of tensor '%.60s'", n);
    POOT_TRY(read_u32(r, &t->n_dims, what, NULL));
    if (t->n_dims > POOT_GGUF_MAX_DIMS)
      return fail(r, at_nd, "tensor '%s' has %u dimensions (at most %u)", n, t->n_dims,
                  POOT_GGUF_MAX_DIMS);
    t->n_elements = 1;
    for (uint32_t d = 0; d < POOT_GGUF_MAX_DIMS; d++) t->dims[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
      size_t at_d = r->pos;
      snprintf(what, sizeof what, "dimension %u of tensor '%.60s'", d, n);
      POOT_TRY(read_u64(r, &t->dims[d], what, NULL));
      if (t->dims[d] > (uint64_t)INT64_MAX ||
          __builtin_mul_overflow(t->n_elements, t->dims[d], &t->n_elements) ||
          t->n_elements > (uint64_t)INT64_MAX)
        return fail(r, at_d, "tensor '%s': dimension %u (%llu) overflows the element count", n, d,
                    (unsigned long long)t->dims[d]);
    }
    size_t at_type = r->pos;
    uint32_t type = 0;
    snprintf(what, sizeof what, "the type of tensor '%.60s'", n);
    POOT_TRY(read_u32(r, &type, what, NULL));
    const poot_gguf_type_info *info = poot_gguf_type_info_of(type);
    if (!info)
      return poot_status_make(POOT_UNSUPPORTED,
                              "GGUF '%s': at byte offset %zu: tensor '%s' has type id %u, which "
                              "poot does not know",
                              g->name, at_type, n, type);
    t->type = (poot_gguf_type)type;
    uint64_t row = 0;
    if (!poot_gguf_row_size(type, t->dims[0], &row))
      return fail(r, at_type,
                  "tensor '%s': innermost dimension %llu is not a multiple of the %s block size %u",
                  n, (unsigned long long)t->dims[0], info->name, info->block_size);
    uint64_t rows = t->dims[0] ? t->n_elements / t->dims[0] : 0;
    if (__builtin_mul_overflow(row, rows, &t->size))
      return fail(r, at_type, "tensor '%s': byte size overflows", n);
    size_t at_off = r->pos;
    snprintf(what, sizeof what, "the data offset of tensor '%.60s'", n);
    POOT_TRY(read_u64(r, &t->offset, what, NULL));
    if (t->offset % g->alignment)
      return fail(r, at_off, "tensor '%s': data offset %llu is not a multiple of the alignment %u",
                  n, (unsigned long long)t->offset, g->alignment);
  }
  /* The data section starts at the next multiple of the alignment. */
  uint64_t pad = (g->alignment - r->pos % g->alignment) % g->alignment;
  g->data_offset = (uint64_t)r->pos + pad;
  for (size_t i = 0; i < g->n_tensors; i++) {
    poot_gguf_tensor *t = &g->tensors[i];
    uint64_t end = 0;
    if (__builtin_add_overflow(g->data_offset, t->offset, &end) ||
        __builtin_add_overflow(end, t->size, &end) || end > g->size)
      return fail(r, r->pos,
                  "tensor '%s': data [%llu, +%llu) after the data section at %llu runs past the "
                  "end of the file (%zu bytes)",
                  t->name, (unsigned long long)t->offset, (unsigned long long)t->size,
                  (unsigned long long)g->data_offset, g->size);
    t->data = g->data + g->data_offset + t->offset;
  }
  return check_no_overlap(r);
}

static poot_status gguf_create(const char *name, poot_gguf **out) {
  poot_gguf *g = poot_calloc(1, sizeof *g);
  if (!g) return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  g->name = poot_strdup(name ? name : "<memory>");
  if (!g->name) {
    poot_free(g);
    return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF: out of memory");
  }
  poot_arena_init(&g->arena, 0);
  poot_map_init(&g->kv_index);
  poot_map_init(&g->tensor_index);
  *out = g;
  return NULL;
}

static poot_status gguf_parse(poot_gguf *g) {
  reader r = {g, 0};
  POOT_TRY(parse_header(&r));
  return parse_tensors(&r);
}

poot_status poot_gguf_open_memory(const void *data, size_t size, const char *name,
                                  poot_gguf **out_gguf) {
  *out_gguf = NULL;
  poot_gguf *g = NULL;
  POOT_TRY(gguf_create(name, &g));
  g->data = data;
  g->size = data ? size : 0;
  poot_status st = gguf_parse(g);
  if (st) {
    poot_gguf_destroy(g);
    return st;
  }
  *out_gguf = g;
  return NULL;
}

poot_status poot_gguf_open(const char *path, poot_gguf **out_gguf) {
  *out_gguf = NULL;
  poot_gguf *g = NULL;
  POOT_TRY(gguf_create(path, &g));
  poot_status st = poot_file_map_open(path, &g->map);
  if (st) goto fail;
  g->data = g->map.data;
  g->size = g->map.size;
  st = gguf_parse(g);
  if (st) goto fail;
  *out_gguf = g;
  return NULL;
fail:
  poot_gguf_destroy(g);
  return st;
}

void poot_gguf_destroy(poot_gguf *g) {
  if (!g) return;
  poot_map_deinit(&g->kv_index);
  poot_map_deinit(&g->tensor_index);
  poot_arena_deinit(&g->arena);
  poot_file_map_close(&g->map);
  poot_free(g->name);
  poot_free(g);
}

uint32_t poot_gguf_version(const poot_gguf *g) {
  return g->version;
}
uint32_t poot_gguf_alignment(const poot_gguf *g) {
  return g->alignment;
}
uint64_t poot_gguf_data_offset(const poot_gguf *g) {
  return g->data_offset;
}
const uint8_t *poot_gguf_file_data(const poot_gguf *g, size_t *out_size) {
  if (out_size) *out_size = g->size;
  return g->data;
}
size_t poot_gguf_kv_count(const poot_gguf *g) {
  return g->n_kv;
}
const char *poot_gguf_kv_key(const poot_gguf *g, size_t i) {
  return i < g->n_kv ? g->keys[i] : NULL;
}
const poot_gguf_value *poot_gguf_kv_value(const poot_gguf *g, size_t i) {
  return i < g->n_kv ? &g->values[i] : NULL;
}
const poot_gguf_value *poot_gguf_find(const poot_gguf *g, const char *key) {
  uint64_t i = 0;
  if (!key || !poot_map_get_str(&g->kv_index, key, &i)) return NULL;
  return &g->values[i];
}
size_t poot_gguf_tensor_count(const poot_gguf *g) {
  return g->n_tensors;
}
const poot_gguf_tensor *poot_gguf_tensor_at(const poot_gguf *g, size_t i) {
  return i < g->n_tensors ? &g->tensors[i] : NULL;
}
const poot_gguf_tensor *poot_gguf_find_tensor(const poot_gguf *g, const char *name) {
  uint64_t i = 0;
  if (!name || !poot_map_get_str(&g->tensor_index, name, &i)) return NULL;
  return &g->tensors[i];
}

/* ---------------------------------------------------------------- access */

static bool is_unsigned(poot_gguf_value_type t) {
  return t == POOT_GGUF_VALUE_U8 || t == POOT_GGUF_VALUE_U16 || t == POOT_GGUF_VALUE_U32 ||
         t == POOT_GGUF_VALUE_U64 || t == POOT_GGUF_VALUE_BOOL;
}
static bool is_signed(poot_gguf_value_type t) {
  return t == POOT_GGUF_VALUE_I8 || t == POOT_GGUF_VALUE_I16 || t == POOT_GGUF_VALUE_I32 ||
         t == POOT_GGUF_VALUE_I64;
}
static bool is_float(poot_gguf_value_type t) {
  return t == POOT_GGUF_VALUE_F32 || t == POOT_GGUF_VALUE_F64;
}

static poot_status type_error(const char *key, const poot_gguf_value *v, const char *want) {
  return poot_status_make(
      POOT_FORMAT, "GGUF key '%s' has type %s%s%s, expected %s", key,
      poot_gguf_value_type_name(v->type), v->type == POOT_GGUF_VALUE_ARRAY ? " of " : "",
      v->type == POOT_GGUF_VALUE_ARRAY ? poot_gguf_value_type_name(v->arr.elem_type) : "", want);
}

/* Converts an integer value into [lo, hi] (signed view) or [0, uhi]. */
static poot_status as_int(const char *key, const poot_gguf_value *v, int64_t lo, uint64_t hi,
                          const char *want, int64_t *out_i, uint64_t *out_u) {
  *out_i = 0;
  *out_u = 0;
  if (is_unsigned(v->type)) {
    if (v->u > hi) goto range;
    *out_u = v->u;
    *out_i = (int64_t)v->u;
    return NULL;
  }
  if (is_signed(v->type)) {
    if (v->i < lo || (v->i > 0 && (uint64_t)v->i > hi)) goto range;
    *out_i = v->i;
    *out_u = (uint64_t)v->i;
    return NULL;
  }
  return type_error(key, v, want);
range:
  if (is_unsigned(v->type))
    return poot_status_make(POOT_FORMAT, "GGUF key '%s': value %llu does not fit %s", key,
                            (unsigned long long)v->u, want);
  return poot_status_make(POOT_FORMAT, "GGUF key '%s': value %lld does not fit %s", key,
                          (long long)v->i, want);
}

static poot_status find_key(const poot_gguf *g, const char *key, const poot_gguf_value **out) {
  *out = poot_gguf_find(g, key);
  if (!*out) return poot_status_make(POOT_NOT_FOUND, "GGUF '%s' has no key '%s'", g->name, key);
  return NULL;
}

#define POOT_GGUF_INT_GETTER(suffix, T, lo, hi)                                     \
  poot_status poot_gguf_get_##suffix(const poot_gguf *g, const char *key, T *out) { \
    *out = 0;                                                                       \
    const poot_gguf_value *v;                                                       \
    POOT_TRY(find_key(g, key, &v));                                                 \
    int64_t i;                                                                      \
    uint64_t u;                                                                     \
    POOT_TRY(as_int(key, v, (lo), (hi), #suffix, &i, &u));                          \
    *out = (T)((lo) < 0 ? (T)i : (T)u);                                             \
    return NULL;                                                                    \
  }

POOT_GGUF_INT_GETTER(u8, uint8_t, 0, UINT8_MAX)
POOT_GGUF_INT_GETTER(i8, int8_t, INT8_MIN, INT8_MAX)
POOT_GGUF_INT_GETTER(u16, uint16_t, 0, UINT16_MAX)
POOT_GGUF_INT_GETTER(i16, int16_t, INT16_MIN, INT16_MAX)
POOT_GGUF_INT_GETTER(u32, uint32_t, 0, UINT32_MAX)
POOT_GGUF_INT_GETTER(i32, int32_t, INT32_MIN, INT32_MAX)
POOT_GGUF_INT_GETTER(u64, uint64_t, 0, UINT64_MAX)
POOT_GGUF_INT_GETTER(i64, int64_t, INT64_MIN, INT64_MAX)

static poot_status as_f64(const char *key, const poot_gguf_value *v, double *out) {
  *out = 0;
  if (is_float(v->type))
    *out = v->f;
  else if (is_unsigned(v->type))
    *out = (double)v->u;
  else if (is_signed(v->type))
    *out = (double)v->i;
  else
    return type_error(key, v, "a number");
  return NULL;
}

poot_status poot_gguf_get_f64(const poot_gguf *g, const char *key, double *out) {
  *out = 0;
  const poot_gguf_value *v;
  POOT_TRY(find_key(g, key, &v));
  return as_f64(key, v, out);
}

poot_status poot_gguf_get_f32(const poot_gguf *g, const char *key, float *out) {
  *out = 0;
  double d = 0;
  POOT_TRY(poot_gguf_get_f64(g, key, &d));
  *out = (float)d;
  return NULL;
}

poot_status poot_gguf_get_bool(const poot_gguf *g, const char *key, bool *out) {
  *out = false;
  const poot_gguf_value *v;
  POOT_TRY(find_key(g, key, &v));
  if (v->type == POOT_GGUF_VALUE_BOOL)
    *out = v->u != 0;
  else if (is_unsigned(v->type))
    *out = v->u != 0;
  else if (is_signed(v->type))
    *out = v->i != 0;
  else
    return type_error(key, v, "bool");
  return NULL;
}

poot_status poot_gguf_get_string(const poot_gguf *g, const char *key, const char **out_data,
                                 size_t *out_len) {
  *out_data = NULL;
  if (out_len) *out_len = 0;
  const poot_gguf_value *v;
  POOT_TRY(find_key(g, key, &v));
  if (v->type != POOT_GGUF_VALUE_STRING) return type_error(key, v, "string");
  *out_data = v->str.data ? v->str.data : "";
  if (out_len) *out_len = (size_t)v->str.len;
  return NULL;
}

poot_status poot_gguf_get_array(const poot_gguf *g, const char *key, poot_gguf_value_type elem_type,
                                const poot_gguf_value **out_array) {
  *out_array = NULL;
  const poot_gguf_value *v;
  POOT_TRY(find_key(g, key, &v));
  if (v->type != POOT_GGUF_VALUE_ARRAY ||
      (elem_type != POOT_GGUF_VALUE_TYPE_COUNT && v->arr.elem_type != elem_type)) {
    char want[48];
    if (elem_type == POOT_GGUF_VALUE_TYPE_COUNT)
      snprintf(want, sizeof want, "array");
    else
      snprintf(want, sizeof want, "array of %s", poot_gguf_value_type_name(elem_type));
    return type_error(key, v, want);
  }
  *out_array = v;
  return NULL;
}

uint64_t poot_gguf_array_len(const poot_gguf_value *a) {
  return a && a->type == POOT_GGUF_VALUE_ARRAY ? a->arr.count : 0;
}

static poot_status check_index(const poot_gguf_value *a, uint64_t index) {
  if (!a || a->type != POOT_GGUF_VALUE_ARRAY)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF: not an array value");
  if (index >= a->arr.count)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF: index %llu past an array of %llu",
                            (unsigned long long)index, (unsigned long long)a->arr.count);
  return NULL;
}

poot_status poot_gguf_array_get_value(const poot_gguf_value *a, uint64_t index,
                                      poot_gguf_value *out_value) {
  memset(out_value, 0, sizeof *out_value);
  POOT_TRY(check_index(a, index));
  size_t n = value_type_size[a->arr.elem_type];
  if (!n)
    return poot_status_make(POOT_FORMAT, "GGUF: array elements are %s, not scalars",
                            poot_gguf_value_type_name(a->arr.elem_type));
  widen_scalar(a->arr.elem_type, (const uint8_t *)a->arr.raw + (size_t)index * n, out_value);
  return NULL;
}

static poot_status elem_int(const poot_gguf_value *a, uint64_t index, int64_t lo, uint64_t hi,
                            const char *want, int64_t *out_i, uint64_t *out_u) {
  *out_i = 0;
  *out_u = 0;
  poot_gguf_value v;
  POOT_TRY(poot_gguf_array_get_value(a, index, &v));
  return as_int("<array element>", &v, lo, hi, want, out_i, out_u);
}

poot_status poot_gguf_array_get_u64(const poot_gguf_value *a, uint64_t index, uint64_t *out) {
  int64_t i;
  return elem_int(a, index, 0, UINT64_MAX, "u64", &i, out);
}
poot_status poot_gguf_array_get_i64(const poot_gguf_value *a, uint64_t index, int64_t *out) {
  uint64_t u;
  return elem_int(a, index, INT64_MIN, INT64_MAX, "i64", out, &u);
}
poot_status poot_gguf_array_get_i32(const poot_gguf_value *a, uint64_t index, int32_t *out) {
  *out = 0;
  int64_t i;
  uint64_t u;
  POOT_TRY(elem_int(a, index, INT32_MIN, INT32_MAX, "i32", &i, &u));
  *out = (int32_t)i;
  return NULL;
}
poot_status poot_gguf_array_get_f64(const poot_gguf_value *a, uint64_t index, double *out) {
  *out = 0;
  poot_gguf_value v;
  POOT_TRY(poot_gguf_array_get_value(a, index, &v));
  return as_f64("<array element>", &v, out);
}
poot_status poot_gguf_array_get_f32(const poot_gguf_value *a, uint64_t index, float *out) {
  *out = 0;
  double d;
  POOT_TRY(poot_gguf_array_get_f64(a, index, &d));
  *out = (float)d;
  return NULL;
}
poot_status poot_gguf_array_get_bool(const poot_gguf_value *a, uint64_t index, bool *out) {
  *out = false;
  poot_gguf_value v;
  POOT_TRY(poot_gguf_array_get_value(a, index, &v));
  if (is_unsigned(v.type))
    *out = v.u != 0;
  else if (is_signed(v.type))
    *out = v.i != 0;
  else
    return type_error("<array element>", &v, "bool");
  return NULL;
}
poot_status poot_gguf_array_get_string(const poot_gguf_value *a, uint64_t index,
                                       const char **out_data, size_t *out_len) {
  *out_data = NULL;
  if (out_len) *out_len = 0;
  POOT_TRY(check_index(a, index));
  if (a->arr.elem_type != POOT_GGUF_VALUE_STRING)
    return poot_status_make(POOT_FORMAT, "GGUF: array elements are %s, not strings",
                            poot_gguf_value_type_name(a->arr.elem_type));
  *out_data = a->arr.strings[index].data ? a->arr.strings[index].data : "";
  if (out_len) *out_len = (size_t)a->arr.strings[index].len;
  return NULL;
}
poot_status poot_gguf_array_get_array(const poot_gguf_value *a, uint64_t index,
                                      const poot_gguf_value **out_array) {
  *out_array = NULL;
  POOT_TRY(check_index(a, index));
  if (a->arr.elem_type != POOT_GGUF_VALUE_ARRAY)
    return poot_status_make(POOT_FORMAT, "GGUF: array elements are %s, not arrays",
                            poot_gguf_value_type_name(a->arr.elem_type));
  *out_array = &a->arr.items[index];
  return NULL;
}
