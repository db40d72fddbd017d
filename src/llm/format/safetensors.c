/* The safetensors reader: single files, folders and sharded models. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "poot/llm/safetensors.h"

typedef struct st_file {
  poot_file_map map;
  const uint8_t *data;
  size_t size;
  char *path;
} st_file;

struct poot_safetensors {
  poot_arena arena;
  st_file *files;
  size_t n_files;
  size_t files_cap;
  poot_vec tensors; /* poot_safetensors_tensor */
  poot_map index;   /* name → tensor index (after sorting) */
  const poot_json *metadata;
};

static const struct {
  const char *name;
  size_t size;
} dtypes[POOT_SAFETENSORS_DTYPE_COUNT] = {
    [POOT_SAFETENSORS_F32] = {"F32", 4},   [POOT_SAFETENSORS_F16] = {"F16", 2},
    [POOT_SAFETENSORS_BF16] = {"BF16", 2}, [POOT_SAFETENSORS_F64] = {"F64", 8},
    [POOT_SAFETENSORS_I8] = {"I8", 1},     [POOT_SAFETENSORS_U8] = {"U8", 1},
    [POOT_SAFETENSORS_I16] = {"I16", 2},   [POOT_SAFETENSORS_U16] = {"U16", 2},
    [POOT_SAFETENSORS_I32] = {"I32", 4},   [POOT_SAFETENSORS_U32] = {"U32", 4},
    [POOT_SAFETENSORS_I64] = {"I64", 8},   [POOT_SAFETENSORS_U64] = {"U64", 8},
    [POOT_SAFETENSORS_BOOL] = {"BOOL", 1},
};

const char *poot_safetensors_dtype_name(poot_safetensors_dtype d) {
  return (unsigned)d < POOT_SAFETENSORS_DTYPE_COUNT ? dtypes[d].name : "?";
}
size_t poot_safetensors_dtype_size(poot_safetensors_dtype d) {
  return (unsigned)d < POOT_SAFETENSORS_DTYPE_COUNT ? dtypes[d].size : 0;
}

static poot_status oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "safetensors: out of memory");
}

static poot_status st_create(poot_safetensors **out) {
  poot_safetensors *st = poot_calloc(1, sizeof *st);
  if (!st) return oom();
  poot_arena_init(&st->arena, 0);
  poot_vec_init(&st->tensors, sizeof(poot_safetensors_tensor));
  poot_map_init(&st->index);
  *out = st;
  return NULL;
}

void poot_safetensors_destroy(poot_safetensors *st) {
  if (!st) return;
  for (size_t i = 0; i < st->n_files; i++) {
    poot_file_map_close(&st->files[i].map);
    poot_free(st->files[i].path);
  }
  poot_free(st->files);
  poot_vec_deinit(&st->tensors);
  poot_map_deinit(&st->index);
  poot_arena_deinit(&st->arena);
  poot_free(st);
}

static poot_status add_file(poot_safetensors *st, const char *path, st_file **out) {
  *out = NULL;
  if (st->n_files == st->files_cap) {
    size_t cap = st->files_cap ? st->files_cap * 2 : 4;
    st_file *f = poot_realloc_array(st->files, cap, sizeof *f);
    if (!f) return oom();
    st->files = f;
    st->files_cap = cap;
  }
  st_file *f = &st->files[st->n_files];
  memset(f, 0, sizeof *f);
  f->path = poot_strdup(path);
  if (!f->path) return oom();
  st->n_files++;
  *out = f;
  return NULL;
}

/* An exact non-negative integer from a JSON number (its literal text). */
static bool json_u64(const poot_json *v, uint64_t *out) {
  *out = 0;
  if (!v || v->type != POOT_JSON_NUMBER || !v->str || !v->len) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < v->len; i++) {
    char c = v->str[i];
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(c - '0'), &x))
      return false;
  }
  *out = x;
  return true;
}

typedef struct range {
  uint64_t begin, end;
  size_t tensor;
} range;

static int range_cmp(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

/* Parses one file's header into st->tensors. */
static poot_status parse_file(poot_safetensors *st, st_file *f) {
  const char *name = f->path;
  if (f->size < 8)
    return poot_status_make(POOT_FORMAT,
                            "safetensors '%s': at byte offset 0: file truncated reading the "
                            "header length (%zu bytes)",
                            name, f->size);
  uint64_t n = 0;
  memcpy(&n, f->data, 8);
  if (n > f->size - 8)
    return poot_status_make(POOT_FORMAT,
                            "safetensors '%s': at byte offset 0: header length %llu exceeds the "
                            "file (%zu bytes)",
                            name, (unsigned long long)n, f->size);
  if (n > POOT_SAFETENSORS_MAX_HEADER)
    return poot_status_make(POOT_FORMAT,
                            "safetensors '%s': at byte offset 0: header length %llu exceeds the "
                            "%u byte limit",
                            name, (unsigned long long)n, POOT_SAFETENSORS_MAX_HEADER);
  poot_json *root = NULL;
  poot_json_parse_options opts = {.max_depth = 16};
  poot_status s = poot_json_parse(&st->arena, (const char *)f->data + 8, (size_t)n, &opts, &root);
  if (s)
    return poot_status_annotate(s, "safetensors '%s': header JSON (from byte offset 8)", name);
  if (root->type != POOT_JSON_OBJECT)
    return poot_status_make(
        POOT_FORMAT, "safetensors '%s': at byte offset 8: the header is not a JSON object", name);
  const uint8_t *base = f->data + 8 + n;
  uint64_t data_size = f->size - 8 - n;
  size_t first = st->tensors.len;
  range *ranges = root->len ? poot_calloc(root->len, sizeof *ranges) : NULL;
  if (root->len && !ranges) return oom();
  size_t n_ranges = 0;
  poot_status err = NULL;
  for (size_t i = 0; i < root->len && !err; i++) {
    const char *key = root->keys[i];
    const poot_json *e = root->items[i];
    if (strcmp(key, "__metadata__") == 0) {
      if (e->type != POOT_JSON_OBJECT) {
        err =
            poot_status_make(POOT_FORMAT, "safetensors '%s': __metadata__ is not an object", name);
        break;
      }
      if (!st->metadata) st->metadata = e;
      continue;
    }
    if (root->key_lens[i] != strlen(key)) {
      err = poot_status_make(POOT_FORMAT, "safetensors '%s': a tensor name contains NUL", name);
      break;
    }
    poot_safetensors_tensor t = {.name = key, .file = f->path};
    const poot_json *dt = poot_json_get(e, "dtype"), *shape = poot_json_get(e, "shape"),
                    *offs = poot_json_get(e, "data_offsets");
    if (e->type != POOT_JSON_OBJECT || !dt || dt->type != POOT_JSON_STRING) {
      err = poot_status_make(POOT_FORMAT, "safetensors '%s': tensor '%s': missing field 'dtype'",
                             name, key);
      break;
    }
    bool known = false;
    for (int d = 0; d < POOT_SAFETENSORS_DTYPE_COUNT; d++)
      if (strcmp(dt->str, dtypes[d].name) == 0) {
        t.dtype = (poot_safetensors_dtype)d;
        known = true;
      }
    if (!known) {
      err = poot_status_make(POOT_UNSUPPORTED,
                             "safetensors '%s': tensor '%s': dtype '%s' is not supported", name,
                             key, dt->str);
      break;
    }
    if (!shape || shape->type != POOT_JSON_ARRAY || shape->len > POOT_SAFETENSORS_MAX_RANK) {
      err = poot_status_make(POOT_FORMAT,
                             "safetensors '%s': tensor '%s': field 'shape' is missing, not an "
                             "array or longer than %d",
                             name, key, POOT_SAFETENSORS_MAX_RANK);
      break;
    }
    t.rank = (uint32_t)shape->len;
    t.n_elements = 1;
    for (uint32_t d = 0; d < t.rank; d++) {
      /* Dimensions and counts stay within int64 so that the store's signed
       * shapes hold them (a zero dimension would otherwise let any other
       * through). */
      if (!json_u64(shape->items[d], &t.shape[d]) || t.shape[d] > (uint64_t)INT64_MAX ||
          __builtin_mul_overflow(t.n_elements, t.shape[d], &t.n_elements) ||
          t.n_elements > (uint64_t)INT64_MAX) {
        err = poot_status_make(POOT_FORMAT,
                               "safetensors '%s': tensor '%s': field 'shape' dimension %u is not "
                               "a non-negative integer or overflows",
                               name, key, d);
        break;
      }
    }
    if (err) break;
    uint64_t begin = 0, end = 0;
    if (!offs || offs->type != POOT_JSON_ARRAY || offs->len != 2 ||
        !json_u64(offs->items[0], &begin) || !json_u64(offs->items[1], &end) || begin > end ||
        end > data_size) {
      err = poot_status_make(POOT_FORMAT,
                             "safetensors '%s': tensor '%s': field 'data_offsets' is not [begin, "
                             "end] inside the %llu-byte data section",
                             name, key, (unsigned long long)data_size);
      break;
    }
    if (__builtin_mul_overflow(t.n_elements, (uint64_t)dtypes[t.dtype].size, &t.size) ||
        t.size != end - begin) {
      err = poot_status_make(POOT_FORMAT,
                             "safetensors '%s': tensor '%s': field 'data_offsets' spans %llu "
                             "bytes but shape and dtype need %llu",
                             name, key, (unsigned long long)(end - begin),
                             (unsigned long long)t.size);
      break;
    }
    t.data = base + begin;
    if (poot_map_get_str(&st->index, key, NULL)) {
      err = poot_status_make(POOT_FORMAT, "safetensors '%s': duplicate tensor '%s'", name, key);
      break;
    }
    if ((err = poot_map_put_str(&st->index, key, st->tensors.len))) break;
    ranges[n_ranges++] = (range){begin, end, st->tensors.len};
    err = poot_vec_push(&st->tensors, &t);
  }
  if (!err && n_ranges > 1) {
    qsort(ranges, n_ranges, sizeof *ranges, range_cmp);
    for (size_t i = 1; i < n_ranges; i++) {
      if (ranges[i].begin < ranges[i - 1].end) {
        const poot_safetensors_tensor *a = poot_vec_at(&st->tensors, ranges[i - 1].tensor);
        const poot_safetensors_tensor *b = poot_vec_at(&st->tensors, ranges[i].tensor);
        err = poot_status_make(POOT_FORMAT,
                               "safetensors '%s': tensors '%s' and '%s' overlap in the data "
                               "section",
                               name, a->name, b->name);
        break;
      }
    }
  }
  (void)first;
  poot_free(ranges);
  return err;
}

static poot_status open_one(poot_safetensors *st, const char *path) {
  st_file *f = NULL;
  POOT_TRY(add_file(st, path, &f));
  POOT_TRY(poot_file_map_open(path, &f->map));
  f->data = f->map.data;
  f->size = f->map.size;
  return parse_file(st, f);
}

static int tensor_cmp(const void *a, const void *b) {
  return strcmp(((const poot_safetensors_tensor *)a)->name,
                ((const poot_safetensors_tensor *)b)->name);
}

/* Sorts tensors by name and rebuilds the index. */
static poot_status finish(poot_safetensors *st) {
  if (st->tensors.len > 1)
    qsort(st->tensors.data, st->tensors.len, sizeof(poot_safetensors_tensor), tensor_cmp);
  poot_map_deinit(&st->index);
  poot_map_init(&st->index);
  for (size_t i = 0; i < st->tensors.len; i++) {
    const poot_safetensors_tensor *t = poot_vec_at(&st->tensors, i);
    POOT_TRY(poot_map_put_str(&st->index, t->name, i));
  }
  return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static poot_status open_index(poot_safetensors *st, const char *path) {
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_file_read_all(path, &text, &len));
  poot_json *root = NULL;
  poot_status s = poot_json_parse(&st->arena, text, len, NULL, &root);
  poot_free(text);
  if (s) return poot_status_annotate(s, "safetensors index '%s'", path);
  const poot_json *wm = poot_json_get(root, "weight_map");
  if (root->type != POOT_JSON_OBJECT || !wm || wm->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "safetensors index '%s': no 'weight_map' object", path);
  const poot_json *meta = poot_json_get(root, "metadata");
  /* The folder the shards live in. */
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) : 0;
  poot_map shards;
  poot_map_init(&shards);
  poot_status err = NULL;
  for (size_t i = 0; i < wm->len && !err; i++) {
    const poot_json *file = wm->items[i];
    if (file->type != POOT_JSON_STRING || strchr(file->str, '/') ||
        strlen(file->str) != file->len || file->len == 0) {
      err = poot_status_make(POOT_FORMAT,
                             "safetensors index '%s': weight_map['%s'] is not a file name in the "
                             "index's folder",
                             path, wm->keys[i]);
      break;
    }
    if (poot_map_get_str(&shards, file->str, NULL)) continue;
    if ((err = poot_map_put_str(&shards, file->str, 1))) break;
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    if (slash) poot_strbuf_append(&sb, path, dir_len + 1);
    poot_strbuf_puts(&sb, file->str);
    err = poot_strbuf_status(&sb);
    if (!err) err = open_one(st, sb.data);
    poot_strbuf_deinit(&sb);
  }
  if (!err) err = finish(st);
  /* Every tensor the index names must be in the shard it names. */
  for (size_t i = 0; i < wm->len && !err; i++) {
    const poot_safetensors_tensor *t = poot_safetensors_find(st, wm->keys[i]);
    const char *base = t ? strrchr(t->file, '/') : NULL;
    base = base ? base + 1 : t ? t->file : NULL;
    if (!t || strcmp(base, wm->items[i]->str) != 0)
      err =
          poot_status_make(POOT_FORMAT, "safetensors index '%s': tensor '%s' is not in shard '%s'",
                           path, wm->keys[i], wm->items[i]->str);
  }
  poot_map_deinit(&shards);
  if (!err && meta && meta->type == POOT_JSON_OBJECT && !st->metadata) st->metadata = meta;
  return err;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder without an index: every *.safetensors file in it. */
static poot_status open_folder_files(poot_safetensors *st, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return poot_status_make(POOT_IO, "safetensors: cannot read folder '%s'", dir);
  poot_vec names;
  poot_vec_init(&names, sizeof(char *));
  poot_status err = NULL;
  struct dirent *e;
  while (!err && (e = readdir(d))) {
    if (!ends_with(e->d_name, ".safetensors")) continue;
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_strbuf_printf(&sb, "%s/%s", dir, e->d_name);
    err = poot_strbuf_status(&sb);
    char *p = poot_strbuf_take(&sb);
    poot_strbuf_deinit(&sb);
    if (!err) err = poot_vec_push(&names, &p);
    if (err) poot_free(p);
  }
  closedir(d);
  if (!err && names.len == 0)
    err = poot_status_make(POOT_NOT_FOUND, "safetensors: no .safetensors file in '%s'", dir);
  if (!err) {
    qsort(names.data, names.len, sizeof(char *), str_cmp);
    for (size_t i = 0; i < names.len && !err; i++)
      err = open_one(st, POOT_VEC_AT(&names, char *, i));
  }
  for (size_t i = 0; i < names.len; i++) poot_free(POOT_VEC_AT(&names, char *, i));
  poot_vec_deinit(&names);
  if (!err) err = finish(st);
  return err;
}

poot_status poot_safetensors_open(const char *path, poot_safetensors **out_st) {
  *out_st = NULL;
  poot_safetensors *st = NULL;
  POOT_TRY(st_create(&st));
  poot_status err = NULL;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    err = poot_status_make(POOT_NOT_FOUND, "safetensors: '%s' does not exist", path);
  } else if (S_ISDIR(sb.st_mode)) {
    poot_strbuf p;
    poot_strbuf_init(&p);
    poot_strbuf_printf(&p, "%s/model.safetensors.index.json", path);
    if (!(err = poot_strbuf_status(&p))) {
      if (is_file(p.data)) {
        err = open_index(st, p.data);
      } else {
        poot_strbuf_clear(&p);
        poot_strbuf_printf(&p, "%s/model.safetensors", path);
        if (!(err = poot_strbuf_status(&p))) {
          if (is_file(p.data)) {
            err = open_one(st, p.data);
            if (!err) err = finish(st);
          } else {
            err = open_folder_files(st, path);
          }
        }
      }
    }
    poot_strbuf_deinit(&p);
  } else if (ends_with(path, ".json")) {
    err = open_index(st, path);
  } else {
    err = open_one(st, path);
    if (!err) err = finish(st);
  }
  if (err) {
    poot_safetensors_destroy(st);
    return err;
  }
  *out_st = st;
  return NULL;
}

poot_status poot_safetensors_open_memory(const void *data, size_t size, const char *name,
                                         poot_safetensors **out_st) {
  *out_st = NULL;
  poot_safetensors *st = NULL;
  POOT_TRY(st_create(&st));
  st_file *f = NULL;
  poot_status err = add_file(st, name ? name : "<memory>", &f);
  if (!err) {
    f->data = data;
    f->size = data ? size : 0;
    err = parse_file(st, f);
  }
  if (!err) err = finish(st);
  if (err) {
    poot_safetensors_destroy(st);
    return err;
  }
  *out_st = st;
  return NULL;
}

size_t poot_safetensors_tensor_count(const poot_safetensors *st) {
  return st->tensors.len;
}
const poot_safetensors_tensor *poot_safetensors_tensor_at(const poot_safetensors *st, size_t i) {
  return i < st->tensors.len ? poot_vec_at(&st->tensors, i) : NULL;
}
const poot_safetensors_tensor *poot_safetensors_find(const poot_safetensors *st, const char *name) {
  uint64_t i = 0;
  if (!name || !poot_map_get_str(&st->index, name, &i)) return NULL;
  return poot_vec_at(&st->tensors, (size_t)i);
}
const poot_json *poot_safetensors_metadata(const poot_safetensors *st) {
  return st->metadata;
}
size_t poot_safetensors_file_count(const poot_safetensors *st) {
  return st->n_files;
}
