/* registry.c — opens a model path: detects the format (poot_store_open) and
 * the family (GGUF general.architecture, HF architectures/model_type, or a
 * llama2.c header), and gathers config, weight map, tokenizer, chat template
 * and stop ids into one handle. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../models/models_impl.h"
#include "../vision/vision_impl.h"
#include "poot/llm/model.h"

struct poot_model {
  poot_model_config config;
  poot_store_format format;
  poot_store *store;
  poot_weight_map *map;
  poot_tokenizer *tok;
  poot_chat_template *tpl;
  char *bos_text;
  char *eos_text;
  poot_vec stop_ids;   /* poot_token */
  poot_vec copies;     /* void *: aligned copies of unaligned tensors */
  poot_map copy_index; /* tensor name → index in copies */
};

static poot_status oom(const char *what) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "model: %s", what);
}

static poot_status add_stop(poot_model *m, poot_token id) {
  if (id < 0) return NULL;
  for (size_t i = 0; i < m->stop_ids.len; i++)
    if (POOT_VEC_AT(&m->stop_ids, poot_token, i) == id) return NULL;
  return poot_vec_push(&m->stop_ids, &id);
}

/* The folder of a safetensors path (the path itself when it is a folder). */
static void folder_of(const char *path, char *out, size_t n) {
  struct stat sb;
  snprintf(out, n, "%s", path);
  if (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    char *slash = strrchr(out, '/');
    if (slash)
      *slash = 0;
    else
      snprintf(out, n, ".");
  }
  size_t len = strlen(out);
  while (len > 1 && out[len - 1] == '/') out[--len] = 0;
}

static bool file_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static poot_status set_template(poot_model *m, const char *src, size_t len) {
  if (!src || !len) return NULL;
  return poot_status_annotate(poot_chat_template_create(src, len, &m->tpl), "chat template");
}

/* HF chat template: tokenizer_config.json "chat_template" (a string or a list
 * of {name, template}, "default" preferred), else chat_template.jinja. */
static poot_status hf_template(poot_model *m, const char *folder) {
  char path[4200]; /* folder (under 4096 bytes, open_hf) and a file name: never cut */
  char *text = NULL;
  size_t size = 0;
  poot_status st = NULL;
  snprintf(path, sizeof path, "%s/tokenizer_config.json", folder);
  if (file_exists(path)) {
    POOT_TRY(poot_file_read_all(path, &text, &size));
    poot_arena arena;
    poot_arena_init(&arena, 0);
    poot_json *root = NULL;
    st = poot_json_parse(&arena, text, size, NULL, &root);
    if (!st) {
      const poot_json *t = poot__json_member(root, "chat_template");
      if (t && t->type == POOT_JSON_STRING) {
        st = set_template(m, t->str, t->len);
      } else if (t && t->type == POOT_JSON_ARRAY) {
        const poot_json *pick = NULL;
        for (size_t i = 0; i < t->len; i++) {
          const poot_json *e = t->items[i];
          const poot_json *nm = poot__json_member(e, "name"),
                          *tp = poot__json_member(e, "template");
          if (!tp || tp->type != POOT_JSON_STRING) continue;
          if (!pick || (nm && nm->type == POOT_JSON_STRING && strcmp(nm->str, "default") == 0))
            pick = tp;
        }
        if (pick) st = set_template(m, pick->str, pick->len);
      }
    } else {
      st = poot_status_annotate(st, "%s", path);
    }
    poot_arena_deinit(&arena);
    poot_free(text);
    text = NULL;
    if (st || m->tpl) return st;
  }
  snprintf(path, sizeof path, "%s/chat_template.jinja", folder);
  if (file_exists(path)) {
    POOT_TRY(poot_file_read_all(path, &text, &size));
    st = set_template(m, text, size);
    poot_free(text);
  }
  return st;
}

static poot_status hf_stops(poot_model *m, const char *folder) {
  char path[4200]; /* as hf_template's */
  snprintf(path, sizeof path, "%s/generation_config.json", folder);
  if (!file_exists(path)) return NULL;
  poot_hf_generation_config *gc = NULL;
  POOT_TRY(poot_hf_generation_config_load(path, &gc));
  poot_status st = NULL;
  for (size_t i = 0; i < gc->n_eos_token_ids && !st; i++)
    st = add_stop(m, (poot_token)gc->eos_token_ids[i]);
  poot_hf_generation_config_destroy(gc);
  return st;
}

static poot_status open_hf(poot_model *m, const char *path, const poot_model_open_options *o) {
  char folder[4096], cpath[4200];
  folder_of(path, folder, sizeof folder);
  snprintf(cpath, sizeof cpath, "%s/config.json", folder);
  poot_hf_config *hf = NULL;
  POOT_TRY(poot_hf_config_load(cpath, &hf));
  poot_status st = poot_model_config_from_hf(hf, &m->config);
  for (size_t i = 0; !st && i < hf->n_eos_token_ids; i++)
    st = add_stop(m, (poot_token)hf->eos_token_ids[i]);
  poot_hf_config_destroy(hf);
  if (st) return poot_status_annotate(st, "%s", cpath);
  /* An encoder's pooling and normalization: sentence-transformers' files. */
  if (m->config.family == POOT_MODEL_FAMILY_BERT)
    POOT_TRY(poot__bert_read_sentence_transformers(folder, &m->config));
  POOT_TRY(poot_model_weight_map_create(&m->config, POOT_WEIGHT_NAMING_HF, &m->map));
  if (poot__llava_architecture(m->config.architecture, NULL) ||
      strcmp(m->config.architecture, "llava") == 0)
    POOT_TRY(poot__llava_bind_weights(m->map, m->store));
  if (!o->skip_tokenizer)
    POOT_TRY(poot_tokenizer_open_path(o->tokenizer_path ? o->tokenizer_path : folder, &m->tok));
  POOT_TRY(hf_template(m, folder));
  return hf_stops(m, folder);
}

static poot_status open_gguf(poot_model *m, const poot_model_open_options *o) {
  const poot_gguf *g = poot_store_gguf(m->store);
  POOT_TRY(poot_model_config_from_gguf(g, m->store, &m->config));
  POOT_TRY(poot_model_weight_map_create(&m->config, POOT_WEIGHT_NAMING_GGUF, &m->map));
  if (!o->skip_tokenizer) {
    if (o->tokenizer_path)
      POOT_TRY(poot_tokenizer_open_path(o->tokenizer_path, &m->tok));
    else
      POOT_TRY(poot_tokenizer_load_gguf(g, &m->tok));
  }
  const poot_gguf_value *t = poot_gguf_find(g, "tokenizer.chat_template");
  if (t && t->type == POOT_GGUF_VALUE_STRING)
    POOT_TRY(set_template(m, t->str.data, (size_t)t->str.len));
  return NULL;
}

static poot_status open_llama2c(poot_model *m, const char *path, const poot_model_open_options *o) {
  const poot_llama2c *l = poot_store_llama2c(m->store);
  const poot_llama2c_config *lc = poot_llama2c_config_of(l);
  POOT_TRY(poot_model_config_from_llama2c(lc, &m->config));
  POOT_TRY(poot_model_weight_map_create(&m->config, POOT_WEIGHT_NAMING_LLAMA2C, &m->map));
  if (o->skip_tokenizer) return NULL;
  if (!o->tokenizer_path)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "'%s' is a llama2.c checkpoint: give its tokenizer file (--tokenizer)",
                            path);
  char *data = NULL;
  size_t size = 0;
  POOT_TRY(poot_file_read_all(o->tokenizer_path, &data, &size));
  poot_status st = poot_tokenizer_load_llama2c(data, size, lc->vocab_size, &m->tok);
  poot_free(data);
  if (st) return poot_status_annotate(st, "%s", o->tokenizer_path);
  /* llama2.c's run.c ends a sample at BOS (token 1 delimits sequences). */
  poot_tokenizer_specials sp = poot_tokenizer_get_specials(m->tok);
  return add_stop(m, sp.bos != POOT_TOKEN_NONE ? sp.bos : 1);
}

static poot_status special_texts(poot_model *m) {
  poot_tokenizer_specials sp = poot_tokenizer_get_specials(m->tok);
  if (m->format != POOT_STORE_FORMAT_LLAMA2C) {
    POOT_TRY(add_stop(m, sp.eos));
    POOT_TRY(add_stop(m, sp.eot));
  }
  size_t len = 0;
  const char *b =
      sp.bos != POOT_TOKEN_NONE ? poot_tokenizer_token_text(m->tok, sp.bos, &len) : NULL;
  m->bos_text = b ? poot_strndup(b, len) : poot_strdup("");
  const char *e =
      sp.eos != POOT_TOKEN_NONE ? poot_tokenizer_token_text(m->tok, sp.eos, &len) : NULL;
  m->eos_text = e ? poot_strndup(e, len) : poot_strdup("");
  if (!m->bos_text || !m->eos_text) return oom("special token texts");
  return NULL;
}

/* Token ids index the embedding's rows, so a tokenizer with more tokens
 * than the embedding has rows is refused here, before any step could gather
 * past it. Fewer tokens is legal: Hugging Face checkpoints pad the embedding
 * (Qwen2: 151936 rows, 151665 tokens); the driver refuses ids in the padding
 * (docs/models.md). */
static poot_status check_tokenizer_size(const poot_model *m, const poot_model_open_options *o) {
  if (!m->tok) return NULL;
  int64_t tokens = poot_tokenizer_vocab_size(m->tok), rows = m->config.vocab_size;
  if (tokens <= rows) return NULL;
  return poot_status_make(
      o->tokenizer_path ? POOT_INVALID_ARGUMENT : POOT_FORMAT,
      "the tokenizer%s%s%s has %lld tokens but the model's embedding has %lld rows (vocab_size): "
      "ids %lld..%lld would have no embedding; give the model's own tokenizer",
      o->tokenizer_path ? " '" : "", o->tokenizer_path ? o->tokenizer_path : "",
      o->tokenizer_path ? "'" : "", (long long)tokens, (long long)rows, (long long)rows,
      (long long)tokens - 1);
}

poot_status poot_model_open(const char *path, const poot_model_open_options *options,
                            poot_model **out_model) {
  *out_model = NULL;
  if (!path) return poot_status_make(POOT_INVALID_ARGUMENT, "poot_model_open: NULL path");
  poot_model_open_options dflt = {0};
  const poot_model_open_options *o = options ? options : &dflt;
  poot_model *m = poot_calloc(1, sizeof *m);
  if (!m) return oom("handle");
  poot_vec_init(&m->stop_ids, sizeof(poot_token));
  poot_vec_init(&m->copies, sizeof(void *));
  poot_map_init(&m->copy_index);
  poot_status st = poot_store_open(path, &m->store);
  if (st) goto fail;
  m->format = poot_store_format_of(m->store);
  switch (m->format) {
    case POOT_STORE_FORMAT_GGUF:
      st = open_gguf(m, o);
      break;
    case POOT_STORE_FORMAT_SAFETENSORS:
      st = open_hf(m, path, o);
      break;
    case POOT_STORE_FORMAT_LLAMA2C:
      st = open_llama2c(m, path, o);
      break;
    default:
      st = poot_status_make(POOT_UNSUPPORTED, "'%s': unknown model format", path);
  }
  if (st) goto fail;
  if ((st = check_tokenizer_size(m, o))) goto fail;
  if (m->tok && (st = special_texts(m))) goto fail;
  if (!m->bos_text) m->bos_text = poot_strdup("");
  if (!m->eos_text) m->eos_text = poot_strdup("");
  if (!m->bos_text || !m->eos_text) {
    st = oom("special token texts");
    goto fail;
  }
  *out_model = m;
  return NULL;
fail:
  poot_model_destroy(m);
  return poot_status_annotate(st, "opening model '%s'", path);
}

void poot_model_destroy(poot_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->copies.len; i++) poot_free(POOT_VEC_AT(&m->copies, void *, i));
  poot_vec_deinit(&m->copies);
  poot_map_deinit(&m->copy_index);
  poot_vec_deinit(&m->stop_ids);
  poot_free(m->bos_text);
  poot_free(m->eos_text);
  poot_chat_template_destroy(m->tpl);
  poot_tokenizer_destroy(m->tok);
  poot_weight_map_destroy(m->map);
  poot_store_destroy(m->store);
  poot_free(m);
}

const poot_model_config *poot_model_get_config(const poot_model *m) {
  return &m->config;
}
const poot_store *poot_model_get_store(const poot_model *m) {
  return m->store;
}
const poot_weight_map *poot_model_get_weight_map(const poot_model *m) {
  return m->map;
}
poot_store_format poot_model_get_format(const poot_model *m) {
  return m->format;
}
const poot_tokenizer *poot_model_get_tokenizer(const poot_model *m) {
  return m->tok;
}
const poot_chat_template *poot_model_get_chat_template(const poot_model *m) {
  return m->tpl;
}
const char *poot_model_get_bos_text(const poot_model *m) {
  return m->bos_text;
}
const char *poot_model_get_eos_text(const poot_model *m) {
  return m->eos_text;
}

const poot_token *poot_model_get_stop_ids(const poot_model *m, size_t *out_count) {
  *out_count = m->stop_ids.len;
  return (const poot_token *)m->stop_ids.data;
}

bool poot_model_is_stop(const poot_model *m, poot_token id) {
  for (size_t i = 0; i < m->stop_ids.len; i++)
    if (POOT_VEC_AT(&m->stop_ids, poot_token, i) == id) return true;
  return m->tok && m->format != POOT_STORE_FORMAT_LLAMA2C &&
         poot_tokenizer_is_end_of_generation(m->tok, id);
}

static poot_status weight_type_cb(void *ctx, const poot_weight_ref *ref, const poot_type *expected,
                                  poot_type *out_type) {
  poot_model *m = ctx;
  const poot_store_tensor *t = NULL;
  POOT_TRY(poot_weight_map_resolve(m->map, m->store, ref, &t));
  if (t->dtype == POOT_DTYPE_NONE)
    return poot_status_make(POOT_UNSUPPORTED,
                            "tensor '%s' has type %s, which poot does not compute with", t->name,
                            t->type_name);
  out_type->dtype = t->dtype;
  out_type->shape = t->shape;
  /* 1-element-per-row vectors may be stored as [n] or [1, n]; accept the
   * family's shape when the element counts agree. */
  if (!poot_shape_equal(&t->shape, &expected->shape) && expected->shape.rank == 1 &&
      t->shape.rank == 2 && t->shape.dims[0] == 1 && t->shape.dims[1] == expected->shape.dims[0])
    out_type->shape = expected->shape;
  return NULL;
}

poot_model_trace_options poot_model_trace_options_for(const poot_model *model) {
  poot_model_trace_options o = {.weight_type = weight_type_cb, .weight_type_ctx = (void *)model};
  return o;
}

poot_status poot_model_weight_tensor(poot_model *m, const poot_weight_id *id, const poot_type *type,
                                     poot_tensor *out) {
  memset(out, 0, sizeof *out);
  poot_weight_ref ref;
  POOT_TRY(poot_weight_map_find(m->map, id->key, id->name, &ref));
  const poot_store_tensor *t = NULL;
  POOT_TRY(poot_weight_map_resolve(m->map, m->store, &ref, &t));
  size_t bytes = 0;
  POOT_TRY(poot_type_byte_size(type->dtype, &type->shape, &bytes));
  if (t->dtype != type->dtype || t->size != bytes)
    return poot_status_make(POOT_FORMAT,
                            "tensor '%s' (%s, %zu bytes) does not match the graph's %s", t->name,
                            t->type_name, t->size, poot_dtype_name(type->dtype));
  out->type = *type;
  out->size = bytes;
  const poot_dtype_info *info = poot_dtype_info_of(type->dtype);
  size_t align = info && !info->is_packed && info->elem_bytes ? info->elem_bytes : 1;
  if (((uintptr_t)t->data % align) == 0) {
    out->data = (void *)t->data;
    return NULL;
  }
  uint64_t idx = 0;
  if (poot_map_get_str(&m->copy_index, t->name, &idx)) {
    out->data = POOT_VEC_AT(&m->copies, void *, idx);
    return NULL;
  }
  void *copy = poot_malloc(bytes ? bytes : 1);
  if (!copy) return oom("aligned weight copy");
  memcpy(copy, t->data, bytes);
  poot_status st = poot_vec_push(&m->copies, &copy);
  if (st) {
    poot_free(copy);
    return st;
  }
  POOT_TRY(poot_map_put_str(&m->copy_index, t->name, m->copies.len - 1));
  out->data = copy;
  return NULL;
}
