/* The weight store: one format-neutral list of the tensors of a GGUF,
 * safetensors or llama2.c file, pointing into the mapped file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "poot/llm/store.h"

struct poot_store {
  poot_store_format format;
  char *path;
  poot_gguf *gguf;
  poot_safetensors *st;
  poot_llama2c *l2c;
  poot_vec tensors; /* poot_store_tensor */
  poot_map index;
};

const char *poot_store_format_name(poot_store_format f) {
  switch (f) {
    case POOT_STORE_FORMAT_GGUF:
      return "gguf";
    case POOT_STORE_FORMAT_SAFETENSORS:
      return "safetensors";
    case POOT_STORE_FORMAT_LLAMA2C:
      return "llama2.c";
    default:
      return "none";
  }
}

poot_dtype poot_store_dtype_from_gguf(uint32_t t) {
  switch (t) {
    case POOT_GGUF_TYPE_F32:
      return POOT_DTYPE_F32;
    case POOT_GGUF_TYPE_F16:
      return POOT_DTYPE_F16;
    case POOT_GGUF_TYPE_BF16:
      return POOT_DTYPE_BF16;
    case POOT_GGUF_TYPE_I8:
      return POOT_DTYPE_I8;
    case POOT_GGUF_TYPE_I16:
      return POOT_DTYPE_I16;
    case POOT_GGUF_TYPE_I32:
      return POOT_DTYPE_I32;
    case POOT_GGUF_TYPE_I64:
      return POOT_DTYPE_I64;
    case POOT_GGUF_TYPE_Q8_0:
      return POOT_DTYPE_Q8_0;
    case POOT_GGUF_TYPE_Q4_0:
      return POOT_DTYPE_Q4_0;
    case POOT_GGUF_TYPE_Q4_1:
      return POOT_DTYPE_Q4_1;
    case POOT_GGUF_TYPE_Q5_0:
      return POOT_DTYPE_Q5_0;
    case POOT_GGUF_TYPE_Q5_1:
      return POOT_DTYPE_Q5_1;
    case POOT_GGUF_TYPE_Q2_K:
      return POOT_DTYPE_Q2_K;
    case POOT_GGUF_TYPE_Q3_K:
      return POOT_DTYPE_Q3_K;
    case POOT_GGUF_TYPE_Q4_K:
      return POOT_DTYPE_Q4_K;
    case POOT_GGUF_TYPE_Q5_K:
      return POOT_DTYPE_Q5_K;
    case POOT_GGUF_TYPE_Q6_K:
      return POOT_DTYPE_Q6_K;
    case POOT_GGUF_TYPE_Q8_K:
      return POOT_DTYPE_Q8_K;
    default:
      return POOT_DTYPE_NONE;
  }
}

poot_dtype poot_store_dtype_from_safetensors(poot_safetensors_dtype d) {
  switch (d) {
    case POOT_SAFETENSORS_F32:
      return POOT_DTYPE_F32;
    case POOT_SAFETENSORS_F16:
      return POOT_DTYPE_F16;
    case POOT_SAFETENSORS_BF16:
      return POOT_DTYPE_BF16;
    case POOT_SAFETENSORS_I8:
      return POOT_DTYPE_I8;
    case POOT_SAFETENSORS_U8:
      return POOT_DTYPE_U8;
    case POOT_SAFETENSORS_I16:
      return POOT_DTYPE_I16;
    case POOT_SAFETENSORS_I32:
      return POOT_DTYPE_I32;
    case POOT_SAFETENSORS_U32:
      return POOT_DTYPE_U32;
    case POOT_SAFETENSORS_I64:
      return POOT_DTYPE_I64;
    case POOT_SAFETENSORS_BOOL:
      return POOT_DTYPE_BOOL;
    default:
      return POOT_DTYPE_NONE;
  }
}

static poot_status push(poot_store *s, const poot_store_tensor *t) {
  POOT_TRY(poot_map_put_str(&s->index, t->name, s->tensors.len));
  return poot_vec_push(&s->tensors, t);
}

static poot_status fill_gguf(poot_store *s) {
  for (size_t i = 0; i < poot_gguf_tensor_count(s->gguf); i++) {
    const poot_gguf_tensor *g = poot_gguf_tensor_at(s->gguf, i);
    poot_store_tensor t = {.name = g->name,
                           .dtype = poot_store_dtype_from_gguf(g->type),
                           .gguf_type = (int32_t)g->type};
    t.type_name = poot_gguf_type_info_of(g->type)->name;
    t.shape.rank = g->n_dims;
    for (uint32_t d = 0; d < g->n_dims; d++) t.shape.dims[d] = (int64_t)g->dims[g->n_dims - 1 - d];
    t.data = g->data;
    t.size = (size_t)g->size;
    POOT_TRY(push(s, &t));
  }
  return NULL;
}

static poot_status fill_safetensors(poot_store *s) {
  for (size_t i = 0; i < poot_safetensors_tensor_count(s->st); i++) {
    const poot_safetensors_tensor *x = poot_safetensors_tensor_at(s->st, i);
    poot_store_tensor t = {
        .name = x->name, .dtype = poot_store_dtype_from_safetensors(x->dtype), .gguf_type = -1};
    t.type_name = poot_safetensors_dtype_name(x->dtype);
    t.shape.rank = x->rank;
    for (uint32_t d = 0; d < x->rank; d++) t.shape.dims[d] = (int64_t)x->shape[d];
    t.data = x->data;
    t.size = (size_t)x->size;
    POOT_TRY(push(s, &t));
  }
  return NULL;
}

static poot_status fill_llama2c(poot_store *s) {
  for (size_t i = 0; i < poot_llama2c_tensor_count(s->l2c); i++) {
    const poot_llama2c_tensor *x = poot_llama2c_tensor_at(s->l2c, i);
    poot_store_tensor t = {
        .name = x->name, .dtype = POOT_DTYPE_F32, .type_name = "f32", .gguf_type = -1};
    t.shape.rank = x->rank;
    for (uint32_t d = 0; d < x->rank; d++) t.shape.dims[d] = (int64_t)x->shape[d];
    t.data = x->data;
    t.size = (size_t)x->size;
    POOT_TRY(push(s, &t));
  }
  return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Opens `path` with the reader its contents call for. */
static poot_status detect_and_open(poot_store *s, const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return poot_status_make(POOT_NOT_FOUND, "model '%s' does not exist", path);
  if (S_ISDIR(sb.st_mode) || ends_with(path, ".safetensors") || ends_with(path, ".json")) {
    s->format = POOT_STORE_FORMAT_SAFETENSORS;
    POOT_TRY(poot_safetensors_open(path, &s->st));
    return fill_safetensors(s);
  }
  poot_file_map map;
  POOT_TRY(poot_file_map_open(path, &map));
  uint32_t magic = 0;
  if (map.size >= 4) memcpy(&magic, map.data, 4);
  bool l2c = poot_llama2c_probe(map.data, map.size);
  /* A safetensors file starts with a header length followed by '{'. */
  bool st = false;
  if (map.size >= 9) {
    uint64_t n = 0;
    memcpy(&n, map.data, 8);
    st = n <= map.size - 8 && map.data[8] == '{';
  }
  poot_file_map_close(&map);
  if (magic == POOT_GGUF_MAGIC) {
    s->format = POOT_STORE_FORMAT_GGUF;
    POOT_TRY(poot_gguf_open(path, &s->gguf));
    return fill_gguf(s);
  }
  if (st) {
    s->format = POOT_STORE_FORMAT_SAFETENSORS;
    POOT_TRY(poot_safetensors_open(path, &s->st));
    return fill_safetensors(s);
  }
  if (l2c) {
    s->format = POOT_STORE_FORMAT_LLAMA2C;
    POOT_TRY(poot_llama2c_open(path, &s->l2c));
    return fill_llama2c(s);
  }
  /* Name the llama2.c mismatch when it looks like a checkpoint by name. */
  if (ends_with(path, ".bin")) {
    poot_llama2c *m = NULL;
    poot_status e = poot_llama2c_open(path, &m);
    poot_llama2c_destroy(m);
    if (e) return poot_status_annotate(e, "not GGUF or safetensors; as llama2.c");
  }
  return poot_status_make(POOT_FORMAT,
                          "model '%s': not a GGUF file, safetensors file or folder, or llama2.c "
                          "checkpoint",
                          path);
}

poot_status poot_store_open(const char *path, poot_store **out_store) {
  *out_store = NULL;
  poot_store *s = poot_calloc(1, sizeof *s);
  if (!s) return poot_status_make(POOT_OUT_OF_MEMORY, "store: out of memory");
  poot_vec_init(&s->tensors, sizeof(poot_store_tensor));
  poot_map_init(&s->index);
  s->path = poot_strdup(path);
  poot_status e = s->path ? detect_and_open(s, path)
                          : poot_status_make(POOT_OUT_OF_MEMORY, "store: out of memory");
  if (e) {
    poot_store_destroy(s);
    return e;
  }
  *out_store = s;
  return NULL;
}

void poot_store_destroy(poot_store *s) {
  if (!s) return;
  poot_gguf_destroy(s->gguf);
  poot_safetensors_destroy(s->st);
  poot_llama2c_destroy(s->l2c);
  poot_vec_deinit(&s->tensors);
  poot_map_deinit(&s->index);
  poot_free(s->path);
  poot_free(s);
}

poot_store_format poot_store_format_of(const poot_store *s) {
  return s->format;
}
const char *poot_store_path(const poot_store *s) {
  return s->path;
}
size_t poot_store_tensor_count(const poot_store *s) {
  return s->tensors.len;
}
const poot_store_tensor *poot_store_tensor_at(const poot_store *s, size_t i) {
  return i < s->tensors.len ? poot_vec_at(&s->tensors, i) : NULL;
}
poot_status poot_store_find(const poot_store *s, const char *name,
                            const poot_store_tensor **out_tensor) {
  *out_tensor = NULL;
  uint64_t i = 0;
  if (!name || !poot_map_get_str(&s->index, name, &i))
    return poot_status_make(POOT_NOT_FOUND, "model '%s' has no tensor '%s'", s->path,
                            name ? name : "(null)");
  *out_tensor = poot_vec_at(&s->tensors, (size_t)i);
  return NULL;
}
const poot_gguf *poot_store_gguf(const poot_store *s) {
  return s->gguf;
}
const poot_safetensors *poot_store_safetensors(const poot_store *s) {
  return s->st;
}
const poot_llama2c *poot_store_llama2c(const poot_store *s) {
  return s->l2c;
}
