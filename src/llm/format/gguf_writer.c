/* The GGUF writer: metadata and tensor descriptions in memory, tensor data
 * streamed at write time. Layout as the reference writers produce it: the
 * header, key/values, tensor descriptions, padding to the alignment, then
 * each tensor's bytes padded to the alignment. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/gguf.h"

typedef struct writer_kv {
  char *key;
  poot_gguf_value value;
  bool removed;
} writer_kv;

typedef struct writer_tensor {
  char *name;
  poot_gguf_type type;
  uint32_t n_dims;
  uint64_t dims[POOT_GGUF_MAX_DIMS];
  uint64_t size;
  uint64_t offset;
  const void *data;
} writer_tensor;

struct poot_gguf_writer {
  poot_arena arena;
  poot_vec kvs;     /* writer_kv */
  poot_vec tensors; /* writer_tensor */
  poot_map kv_index;
  poot_map tensor_index;
  uint32_t alignment;
  poot_gguf_tensor_source source;
  void *source_ctx;
  poot_gguf_write_progress progress;
  void *progress_ctx;
};

static const size_t elem_size[POOT_GGUF_VALUE_TYPE_COUNT] = {
    [POOT_GGUF_VALUE_U8] = 1,  [POOT_GGUF_VALUE_I8] = 1,   [POOT_GGUF_VALUE_U16] = 2,
    [POOT_GGUF_VALUE_I16] = 2, [POOT_GGUF_VALUE_U32] = 4,  [POOT_GGUF_VALUE_I32] = 4,
    [POOT_GGUF_VALUE_F32] = 4, [POOT_GGUF_VALUE_BOOL] = 1, [POOT_GGUF_VALUE_U64] = 8,
    [POOT_GGUF_VALUE_I64] = 8, [POOT_GGUF_VALUE_F64] = 8};

static poot_status oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "GGUF writer: out of memory");
}

poot_status poot_gguf_writer_create(poot_gguf_writer **out_writer) {
  *out_writer = NULL;
  poot_gguf_writer *w = poot_calloc(1, sizeof *w);
  if (!w) return oom();
  poot_arena_init(&w->arena, 0);
  poot_vec_init(&w->kvs, sizeof(writer_kv));
  poot_vec_init(&w->tensors, sizeof(writer_tensor));
  poot_map_init(&w->kv_index);
  poot_map_init(&w->tensor_index);
  w->alignment = POOT_GGUF_DEFAULT_ALIGNMENT;
  *out_writer = w;
  return NULL;
}

void poot_gguf_writer_destroy(poot_gguf_writer *w) {
  if (!w) return;
  poot_arena_deinit(&w->arena);
  poot_vec_deinit(&w->kvs);
  poot_vec_deinit(&w->tensors);
  poot_map_deinit(&w->kv_index);
  poot_map_deinit(&w->tensor_index);
  poot_free(w);
}

/* Deep-copies `src` into the arena. */
static poot_status copy_value(poot_arena *a, const poot_gguf_value *src, poot_gguf_value *dst,
                              unsigned depth) {
  *dst = *src;
  if (src->type >= POOT_GGUF_VALUE_TYPE_COUNT)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: bad value type %u", src->type);
  if (src->type == POOT_GGUF_VALUE_STRING) {
    dst->str.data =
        poot_arena_memdup(a, src->str.len ? src->str.data : "", (size_t)src->str.len + 1, 1);
    if (!dst->str.data) return oom();
    return NULL;
  }
  if (src->type != POOT_GGUF_VALUE_ARRAY) return NULL;
  if (depth >= POOT_GGUF_MAX_NESTING)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: arrays nested too deeply");
  uint64_t n = src->arr.count;
  poot_gguf_value_type et = src->arr.elem_type;
  dst->arr.raw = NULL;
  dst->arr.strings = NULL;
  dst->arr.items = NULL;
  if (et >= POOT_GGUF_VALUE_TYPE_COUNT)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: bad array element type %u", et);
  if (n == 0) return NULL;
  if (elem_size[et]) {
    size_t bytes;
    if (!poot_size_mul((size_t)n, elem_size[et], &bytes) || !src->arr.raw)
      return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: bad array");
    dst->arr.raw = poot_arena_memdup(a, src->arr.raw, bytes, 8);
    if (!dst->arr.raw) return oom();
  } else if (et == POOT_GGUF_VALUE_STRING) {
    if (!src->arr.strings) return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: bad array");
    poot_gguf_string *s = POOT_ARENA_NEW_ARRAY(a, poot_gguf_string, n);
    if (!s) return oom();
    for (uint64_t i = 0; i < n; i++) {
      s[i].len = src->arr.strings[i].len;
      s[i].data =
          poot_arena_memdup(a, s[i].len ? src->arr.strings[i].data : "", (size_t)s[i].len + 1, 1);
      if (!s[i].data) return oom();
    }
    dst->arr.strings = s;
  } else {
    if (!src->arr.items) return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: bad array");
    poot_gguf_value *items = POOT_ARENA_NEW_ARRAY(a, poot_gguf_value, n);
    if (!items) return oom();
    for (uint64_t i = 0; i < n; i++) {
      if (src->arr.items[i].type != POOT_GGUF_VALUE_ARRAY)
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "GGUF writer: an array of arrays holds a non-array");
      POOT_TRY(copy_value(a, &src->arr.items[i], &items[i], depth + 1));
    }
    dst->arr.items = items;
  }
  return NULL;
}

poot_status poot_gguf_writer_set_value(poot_gguf_writer *w, const char *key,
                                       const poot_gguf_value *value) {
  poot_gguf_value copy;
  POOT_TRY(copy_value(&w->arena, value, &copy, 0));
  uint64_t index = 0;
  if (poot_map_get_str(&w->kv_index, key, &index)) {
    writer_kv *kv = poot_vec_at(&w->kvs, (size_t)index);
    kv->value = copy;
    kv->removed = false;
    return NULL;
  }
  writer_kv kv = {poot_arena_strdup(&w->arena, key), copy, false};
  if (!kv.key) return oom();
  POOT_TRY(poot_map_put_str(&w->kv_index, kv.key, w->kvs.len));
  return poot_vec_push(&w->kvs, &kv);
}

void poot_gguf_writer_remove(poot_gguf_writer *w, const char *key) {
  uint64_t index = 0;
  if (!poot_map_get_str(&w->kv_index, key, &index)) return;
  writer_kv *kv = poot_vec_at(&w->kvs, (size_t)index);
  kv->removed = true;
}

poot_status poot_gguf_writer_set_u32(poot_gguf_writer *w, const char *key, uint32_t v) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_U32, .u = v};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_i32(poot_gguf_writer *w, const char *key, int32_t v) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_I32, .i = v};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_u64(poot_gguf_writer *w, const char *key, uint64_t v) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_U64, .u = v};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_f32(poot_gguf_writer *w, const char *key, float v) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_F32, .f = v};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_bool(poot_gguf_writer *w, const char *key, bool v) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_BOOL, .u = v ? 1 : 0};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_string(poot_gguf_writer *w, const char *key, const char *s,
                                        size_t len) {
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_STRING, .str = {s, len}};
  return poot_gguf_writer_set_value(w, key, &val);
}
poot_status poot_gguf_writer_set_array(poot_gguf_writer *w, const char *key,
                                       poot_gguf_value_type elem_type, const void *data,
                                       uint64_t count) {
  if (elem_type >= POOT_GGUF_VALUE_TYPE_COUNT || !elem_size[elem_type])
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "GGUF writer: set_array takes fixed-size elements, not %s",
                            poot_gguf_value_type_name(elem_type));
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_ARRAY};
  val.arr.elem_type = elem_type;
  val.arr.count = count;
  val.arr.raw = data;
  return poot_gguf_writer_set_value(w, key, &val);
}

poot_status poot_gguf_writer_set_string_array(poot_gguf_writer *w, const char *key,
                                              const char *const *strs, const size_t *lens,
                                              uint64_t count) {
  poot_gguf_string *tmp = NULL;
  if (count) {
    tmp = poot_calloc((size_t)count, sizeof *tmp);
    if (!tmp) return oom();
  }
  for (uint64_t i = 0; i < count; i++) {
    tmp[i].data = strs[i];
    tmp[i].len = lens ? lens[i] : strlen(strs[i]);
  }
  poot_gguf_value val = {.type = POOT_GGUF_VALUE_ARRAY};
  val.arr.elem_type = POOT_GGUF_VALUE_STRING;
  val.arr.count = count;
  val.arr.strings = tmp;
  poot_status st = poot_gguf_writer_set_value(w, key, &val);
  poot_free(tmp);
  return st;
}

poot_status poot_gguf_writer_add_tensor(poot_gguf_writer *w, const char *name, poot_gguf_type type,
                                        uint32_t n_dims, const uint64_t *dims, const void *data) {
  const poot_gguf_type_info *info = poot_gguf_type_info_of(type);
  if (!info)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: tensor '%s': unknown type %u",
                            name, (unsigned)type);
  if (n_dims > POOT_GGUF_MAX_DIMS)
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: tensor '%s': %u dimensions", name,
                            n_dims);
  if (poot_map_get_str(&w->tensor_index, name, NULL))
    return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: duplicate tensor '%s'", name);
  writer_tensor t = {.type = type, .n_dims = n_dims, .data = data};
  uint64_t rows = 1;
  for (uint32_t d = 0; d < POOT_GGUF_MAX_DIMS; d++) t.dims[d] = d < n_dims ? dims[d] : 1;
  for (uint32_t d = 1; d < POOT_GGUF_MAX_DIMS; d++)
    if (__builtin_mul_overflow(rows, t.dims[d], &rows))
      return poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: tensor '%s' is too big", name);
  uint64_t row = 0;
  if (!poot_gguf_row_size(type, t.dims[0], &row) || __builtin_mul_overflow(row, rows, &t.size))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "GGUF writer: tensor '%s': innermost dimension %llu is not a "
                            "multiple of the %s block size %u",
                            name, (unsigned long long)t.dims[0], info->name, info->block_size);
  t.name = poot_arena_strdup(&w->arena, name);
  if (!t.name) return oom();
  POOT_TRY(poot_map_put_str(&w->tensor_index, t.name, w->tensors.len));
  return poot_vec_push(&w->tensors, &t);
}

void poot_gguf_writer_set_source(poot_gguf_writer *w, poot_gguf_tensor_source source, void *ctx) {
  w->source = source;
  w->source_ctx = ctx;
}

void poot_gguf_writer_set_progress(poot_gguf_writer *w, poot_gguf_write_progress progress,
                                   void *ctx) {
  w->progress = progress;
  w->progress_ctx = ctx;
}

poot_status poot_gguf_writer_set_alignment(poot_gguf_writer *w, uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "GGUF writer: alignment %u is not a power of two", alignment);
  w->alignment = alignment;
  if (alignment == POOT_GGUF_DEFAULT_ALIGNMENT) {
    poot_gguf_writer_remove(w, "general.alignment");
    return NULL;
  }
  return poot_gguf_writer_set_u32(w, "general.alignment", alignment);
}

/* --------------------------------------------------------------- output */

static void put(poot_strbuf *sb, const void *p, size_t n) {
  poot_strbuf_append(sb, p, n);
}
static void put_u32(poot_strbuf *sb, uint32_t v) {
  put(sb, &v, 4);
}
static void put_u64(poot_strbuf *sb, uint64_t v) {
  put(sb, &v, 8);
}
static void put_str(poot_strbuf *sb, const char *s, uint64_t n) {
  put_u64(sb, n);
  if (n) put(sb, s, (size_t)n);
}

static void put_scalar(poot_strbuf *sb, const poot_gguf_value *v) {
  switch (v->type) {
    case POOT_GGUF_VALUE_U8:
    case POOT_GGUF_VALUE_BOOL: {
      uint8_t x = (uint8_t)v->u;
      put(sb, &x, 1);
      break;
    }
    case POOT_GGUF_VALUE_I8: {
      int8_t x = (int8_t)v->i;
      put(sb, &x, 1);
      break;
    }
    case POOT_GGUF_VALUE_U16: {
      uint16_t x = (uint16_t)v->u;
      put(sb, &x, 2);
      break;
    }
    case POOT_GGUF_VALUE_I16: {
      int16_t x = (int16_t)v->i;
      put(sb, &x, 2);
      break;
    }
    case POOT_GGUF_VALUE_U32:
      put_u32(sb, (uint32_t)v->u);
      break;
    case POOT_GGUF_VALUE_I32: {
      int32_t x = (int32_t)v->i;
      put(sb, &x, 4);
      break;
    }
    case POOT_GGUF_VALUE_F32: {
      float x = (float)v->f;
      put(sb, &x, 4);
      break;
    }
    case POOT_GGUF_VALUE_U64:
      put_u64(sb, v->u);
      break;
    case POOT_GGUF_VALUE_I64:
      put(sb, &v->i, 8);
      break;
    case POOT_GGUF_VALUE_F64:
      put(sb, &v->f, 8);
      break;
    default:
      break;
  }
}

static void put_value(poot_strbuf *sb, const poot_gguf_value *v) {
  if (v->type == POOT_GGUF_VALUE_STRING) {
    put_str(sb, v->str.data, v->str.len);
  } else if (v->type == POOT_GGUF_VALUE_ARRAY) {
    put_u32(sb, v->arr.elem_type);
    put_u64(sb, v->arr.count);
    if (elem_size[v->arr.elem_type]) {
      if (v->arr.count) put(sb, v->arr.raw, (size_t)v->arr.count * elem_size[v->arr.elem_type]);
    } else if (v->arr.elem_type == POOT_GGUF_VALUE_STRING) {
      for (uint64_t i = 0; i < v->arr.count; i++)
        put_str(sb, v->arr.strings[i].data, v->arr.strings[i].len);
    } else {
      for (uint64_t i = 0; i < v->arr.count; i++) put_value(sb, &v->arr.items[i]);
    }
  } else {
    put_scalar(sb, v);
  }
}

static poot_status write_all(FILE *f, const void *p, size_t n, const char *path) {
  if (n && fwrite(p, 1, n, f) != n)
    return poot_status_make(POOT_IO, "GGUF writer: writing '%s' failed", path);
  return NULL;
}

static poot_status write_pad(FILE *f, uint64_t n, const char *path) {
  static const uint8_t zeros[4096];
  while (n) {
    size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
    POOT_TRY(write_all(f, zeros, k, path));
    n -= k;
  }
  return NULL;
}

static poot_status write_body(poot_gguf_writer *w, FILE *f, const char *path) {
  poot_status st = NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  uint8_t *buf = NULL;
  uint64_t buf_size = 0;
  size_t n_kv = 0;
  for (size_t i = 0; i < w->kvs.len; i++)
    if (!POOT_VEC_AT(&w->kvs, writer_kv, i).removed) n_kv++;
  put_u32(&sb, POOT_GGUF_MAGIC);
  put_u32(&sb, 3);
  put_u64(&sb, w->tensors.len);
  put_u64(&sb, n_kv);
  for (size_t i = 0; i < w->kvs.len; i++) {
    const writer_kv *kv = &POOT_VEC_AT(&w->kvs, writer_kv, i);
    if (kv->removed) continue;
    put_str(&sb, kv->key, strlen(kv->key));
    put_u32(&sb, kv->value.type);
    put_value(&sb, &kv->value);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < w->tensors.len; i++) {
    writer_tensor *t = &POOT_VEC_AT(&w->tensors, writer_tensor, i);
    put_str(&sb, t->name, strlen(t->name));
    put_u32(&sb, t->n_dims);
    for (uint32_t d = 0; d < t->n_dims; d++) put_u64(&sb, t->dims[d]);
    put_u32(&sb, t->type);
    t->offset = offset;
    put_u64(&sb, offset);
    offset += t->size + (w->alignment - t->size % w->alignment) % w->alignment;
  }
  if ((st = poot_strbuf_status(&sb))) goto done;
  if ((st = write_all(f, sb.data, sb.len, path))) goto done;
  /* The data section starts aligned; a file without tensors ends here (as the
   * reference writer leaves it). */
  if (w->tensors.len &&
      (st = write_pad(f, (w->alignment - sb.len % w->alignment) % w->alignment, path)))
    goto done;
  for (size_t i = 0; i < w->tensors.len; i++) {
    writer_tensor *t = &POOT_VEC_AT(&w->tensors, writer_tensor, i);
    const void *data = t->data;
    if (!data && t->size) {
      if (!w->source) {
        st = poot_status_make(POOT_INVALID_ARGUMENT, "GGUF writer: tensor '%s' has no data",
                              t->name);
        goto done;
      }
      if (t->size > buf_size) {
        poot_free(buf);
        buf = poot_malloc((size_t)t->size);
        buf_size = buf ? t->size : 0;
        if (!buf) {
          st = oom();
          goto done;
        }
      }
      if ((st = w->source(w->source_ctx, i, buf, t->size))) goto done;
      data = buf;
    }
    if ((st = write_all(f, data, (size_t)t->size, path))) goto done;
    if ((st = write_pad(f, (w->alignment - t->size % w->alignment) % w->alignment, path)))
      goto done;
    if (w->progress) w->progress(w->progress_ctx, i + 1, w->tensors.len, t->name);
  }
done:
  poot_free(buf);
  poot_strbuf_deinit(&sb);
  return st;
}

poot_status poot_gguf_writer_write_file(poot_gguf_writer *w, const char *path) {
  poot_strbuf tmp;
  poot_strbuf_init(&tmp);
  poot_strbuf_printf(&tmp, "%s.tmp", path);
  poot_status st = poot_strbuf_status(&tmp);
  if (st) goto done;
  FILE *f = fopen(tmp.data, "wb");
  if (!f) {
    st = poot_status_make(POOT_IO, "GGUF writer: cannot create '%s'", tmp.data);
    goto done;
  }
  st = write_body(w, f, path);
  if (fclose(f) != 0 && !st)
    st = poot_status_make(POOT_IO, "GGUF writer: writing '%s' failed", path);
  if (!st && rename(tmp.data, path) != 0)
    st = poot_status_make(POOT_IO, "GGUF writer: cannot rename '%s' to '%s'", tmp.data, path);
  if (st) remove(tmp.data);
done:
  poot_strbuf_deinit(&tmp);
  return st;
}
