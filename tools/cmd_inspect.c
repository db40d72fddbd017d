/* poot inspect MODEL [--json] [--tokenizer FILE]: format, architecture,
 * config, tensors, tokenizer and chat template of a model file. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "poot/llm/hf_config.h"
#include "poot/llm/model.h"
#include "poot/llm/store.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot inspect MODEL [--json] [--tokenizer FILE]\n"
    "\n"
    "Prints a model's format, architecture, configuration, tensors (name, type,\n"
    "shape, row-major), tokenizer summary and whether it carries a chat\n"
    "template. MODEL is a GGUF file (vocabulary-only files too), a safetensors\n"
    "file or folder, or a llama2.c checkpoint (--tokenizer names its tokenizer).\n"
    "\n";

typedef struct out {
  poot_strbuf sb;
  bool json;
} out;

/* ------------------------------------------------------------ GGUF values */

static void json_float(poot_strbuf *sb, double v, bool f32) {
  if (!isfinite(v)) {
    poot_strbuf_puts(sb, "null");
    return;
  }
  poot_strbuf_printf(sb, f32 ? "%.9g" : "%.17g", v);
}

static void json_scalar(poot_strbuf *sb, const poot_gguf_value *v) {
  switch (v->type) {
    case POOT_GGUF_VALUE_BOOL:
      poot_strbuf_puts(sb, v->u ? "true" : "false");
      break;
    case POOT_GGUF_VALUE_U8:
    case POOT_GGUF_VALUE_U16:
    case POOT_GGUF_VALUE_U32:
    case POOT_GGUF_VALUE_U64:
      poot_strbuf_printf(sb, "%llu", (unsigned long long)v->u);
      break;
    case POOT_GGUF_VALUE_I8:
    case POOT_GGUF_VALUE_I16:
    case POOT_GGUF_VALUE_I32:
    case POOT_GGUF_VALUE_I64:
      poot_strbuf_printf(sb, "%lld", (long long)v->i);
      break;
    case POOT_GGUF_VALUE_F32:
      json_float(sb, v->f, true);
      break;
    case POOT_GGUF_VALUE_F64:
      json_float(sb, v->f, false);
      break;
    default:
      poot_strbuf_puts(sb, "null");
  }
}

static void json_value(poot_strbuf *sb, const poot_gguf_value *v) {
  if (v->type == POOT_GGUF_VALUE_STRING) {
    poot_json_write_string(sb, v->str.data, (size_t)v->str.len, true);
  } else if (v->type == POOT_GGUF_VALUE_ARRAY) {
    poot_strbuf_putc(sb, '[');
    for (uint64_t i = 0; i < v->arr.count; i++) {
      if (i) poot_strbuf_putc(sb, ',');
      if (v->arr.elem_type == POOT_GGUF_VALUE_STRING) {
        poot_json_write_string(sb, v->arr.strings[i].data, (size_t)v->arr.strings[i].len, true);
      } else if (v->arr.elem_type == POOT_GGUF_VALUE_ARRAY) {
        json_value(sb, &v->arr.items[i]);
      } else {
        poot_gguf_value e;
        poot_status_free(poot_gguf_array_get_value(v, i, &e));
        json_scalar(sb, &e);
      }
    }
    poot_strbuf_putc(sb, ']');
  } else {
    json_scalar(sb, v);
  }
}

/* A short text form: scalars in full, strings up to 80 bytes, arrays as
 * their type, length and first elements. */
static void text_value(poot_strbuf *sb, const poot_gguf_value *v) {
  if (v->type == POOT_GGUF_VALUE_STRING) {
    size_t n = (size_t)v->str.len;
    bool cut = n > 80;
    poot_json_write_string(sb, v->str.data, cut ? 80 : n, true);
    if (cut) poot_strbuf_printf(sb, "… (%zu bytes)", n);
  } else if (v->type == POOT_GGUF_VALUE_ARRAY) {
    poot_strbuf_printf(sb, "[%s × %llu]", poot_gguf_value_type_name(v->arr.elem_type),
                       (unsigned long long)v->arr.count);
    if (v->arr.count && v->arr.elem_type != POOT_GGUF_VALUE_ARRAY) {
      poot_strbuf_puts(sb, " ");
      for (uint64_t i = 0; i < v->arr.count && i < 4; i++) {
        if (i) poot_strbuf_puts(sb, ", ");
        if (v->arr.elem_type == POOT_GGUF_VALUE_STRING) {
          poot_json_write_string(sb, v->arr.strings[i].data,
                                 (size_t)(v->arr.strings[i].len > 40 ? 40 : v->arr.strings[i].len),
                                 true);
        } else {
          poot_gguf_value e;
          poot_status_free(poot_gguf_array_get_value(v, i, &e));
          json_scalar(sb, &e);
        }
      }
      if (v->arr.count > 4) poot_strbuf_puts(sb, ", …");
    }
  } else {
    json_scalar(sb, v);
  }
}

static const char *gguf_str(const poot_gguf *g, const char *key, char *buf, size_t n) {
  const poot_gguf_value *v = poot_gguf_find(g, key);
  if (!v || v->type != POOT_GGUF_VALUE_STRING) return NULL;
  snprintf(buf, n, "%.*s", (int)(v->str.len < n ? v->str.len : n - 1), v->str.data);
  return buf;
}

static void print_shape(poot_strbuf *sb, const poot_shape *s) {
  poot_strbuf_putc(sb, '[');
  for (uint32_t d = 0; d < s->rank; d++)
    poot_strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)s->dims[d]);
  poot_strbuf_putc(sb, ']');
}

static void json_key(out *o, const char *key) {
  poot_json_write_string(&o->sb, key, strlen(key), true);
  poot_strbuf_putc(&o->sb, ':');
}

static void gguf_section(out *o, const poot_gguf *g) {
  char arch[64], buf[64];
  const char *a = gguf_str(g, "general.architecture", arch, sizeof arch);
  if (o->json) {
    poot_strbuf_printf(&o->sb, "\"gguf\":{\"version\":%u,\"alignment\":%u,\"data_offset\":%llu},",
                       poot_gguf_version(g), poot_gguf_alignment(g),
                       (unsigned long long)poot_gguf_data_offset(g));
    json_key(o, "architecture");
    if (a)
      poot_json_write_string(&o->sb, a, strlen(a), true);
    else
      poot_strbuf_puts(&o->sb, "null");
    poot_strbuf_puts(&o->sb, ",\"metadata\":{");
    for (size_t i = 0; i < poot_gguf_kv_count(g); i++) {
      if (i) poot_strbuf_putc(&o->sb, ',');
      const poot_gguf_value *v = poot_gguf_kv_value(g, i);
      json_key(o, poot_gguf_kv_key(g, i));
      poot_strbuf_printf(&o->sb, "{\"type\":\"%s\",", poot_gguf_value_type_name(v->type));
      if (v->type == POOT_GGUF_VALUE_ARRAY)
        poot_strbuf_printf(&o->sb, "\"elem_type\":\"%s\",",
                           poot_gguf_value_type_name(v->arr.elem_type));
      poot_strbuf_puts(&o->sb, "\"value\":");
      json_value(&o->sb, v);
      poot_strbuf_putc(&o->sb, '}');
    }
    poot_strbuf_puts(&o->sb, "},");
    /* Tokenizer summary. */
    poot_strbuf_puts(&o->sb, "\"tokenizer\":");
    const char *model = gguf_str(g, "tokenizer.ggml.model", buf, sizeof buf);
    if (!model) {
      poot_strbuf_puts(&o->sb, "null,");
    } else {
      poot_strbuf_puts(&o->sb, "{\"model\":");
      poot_json_write_string(&o->sb, model, strlen(model), true);
      poot_strbuf_printf(
          &o->sb, ",\"tokens\":%llu,\"merges\":%llu}",
          (unsigned long long)poot_gguf_array_len(poot_gguf_find(g, "tokenizer.ggml.tokens")),
          (unsigned long long)poot_gguf_array_len(poot_gguf_find(g, "tokenizer.ggml.merges")));
      poot_strbuf_putc(&o->sb, ',');
    }
    poot_strbuf_printf(&o->sb, "\"chat_template\":%s,",
                       poot_gguf_find(g, "tokenizer.chat_template") ? "true" : "false");
    return;
  }
  poot_strbuf_printf(&o->sb, "format:        gguf (version %u, alignment %u)\n",
                     poot_gguf_version(g), poot_gguf_alignment(g));
  poot_strbuf_printf(&o->sb, "architecture:  %s\n", a ? a : "(none)");
  poot_strbuf_puts(&o->sb, "metadata:\n");
  for (size_t i = 0; i < poot_gguf_kv_count(g); i++) {
    poot_strbuf_printf(&o->sb, "  %-48s ", poot_gguf_kv_key(g, i));
    text_value(&o->sb, poot_gguf_kv_value(g, i));
    poot_strbuf_putc(&o->sb, '\n');
  }
  const char *model = gguf_str(g, "tokenizer.ggml.model", buf, sizeof buf);
  if (model) {
    char pre[64];
    const char *p = gguf_str(g, "tokenizer.ggml.pre", pre, sizeof pre);
    poot_strbuf_printf(
        &o->sb, "tokenizer:     %s%s%s, %llu tokens", model, p ? " / " : "", p ? p : "",
        (unsigned long long)poot_gguf_array_len(poot_gguf_find(g, "tokenizer.ggml.tokens")));
    uint64_t merges = poot_gguf_array_len(poot_gguf_find(g, "tokenizer.ggml.merges"));
    if (merges) poot_strbuf_printf(&o->sb, ", %llu merges", (unsigned long long)merges);
    uint32_t id;
    poot_status s = poot_gguf_get_u32(g, "tokenizer.ggml.bos_token_id", &id);
    if (!s) poot_strbuf_printf(&o->sb, ", bos %u", id);
    poot_status_free(s);
    s = poot_gguf_get_u32(g, "tokenizer.ggml.eos_token_id", &id);
    if (!s) poot_strbuf_printf(&o->sb, ", eos %u", id);
    poot_status_free(s);
    poot_strbuf_putc(&o->sb, '\n');
  } else {
    poot_strbuf_puts(&o->sb, "tokenizer:     (none)\n");
  }
  const poot_gguf_value *t = poot_gguf_find(g, "tokenizer.chat_template");
  if (t && t->type == POOT_GGUF_VALUE_STRING)
    poot_strbuf_printf(&o->sb, "chat template: yes (%llu bytes)\n", (unsigned long long)t->str.len);
  else
    poot_strbuf_puts(&o->sb, "chat template: no\n");
}

/* ----------------------------------------------- safetensors and llama2.c */

static void config_field(out *o, bool *first, const char *key, long long v) {
  if (v < 0) return;
  if (o->json) {
    poot_strbuf_printf(&o->sb, "%s\"%s\":%lld", *first ? "" : ",", key, v);
  } else {
    poot_strbuf_printf(&o->sb, "  %-24s %lld\n", key, v);
  }
  *first = false;
}

/* How poot reads the model (text form only): the rope of the global and
 * the sliding layers, which layers slide, the soft-caps; or why it cannot. */
static void model_section(out *o, const poot_model_config *c, poot_status st) {
  if (o->json) {
    poot_status_free(st);
    return;
  }
  if (st) {
    poot_strbuf_printf(&o->sb, "model:         cannot run: %s: %s\n",
                       poot_status_code_name(poot_status_code_of(st)), poot_status_message(st));
    poot_status_free(st);
    return;
  }
  poot_strbuf_printf(&o->sb, "model:         %s\n", poot_model_family_name(c->family));
  poot_strbuf_printf(&o->sb, "  rope                     theta %g, %lld of %lld dims, scaling %s",
                     c->rope_theta, (long long)c->rope_dims, (long long)c->head_dim,
                     poot_model_rope_scaling_name(c->rope_scaling));
  if (c->rope_factor > 0) poot_strbuf_printf(&o->sb, " factor %g", c->rope_factor);
  if (c->rope_original_context > 0)
    poot_strbuf_printf(&o->sb, " (original context %lld)", (long long)c->rope_original_context);
  poot_strbuf_putc(&o->sb, '\n');
  if (c->sliding_window > 0) {
    poot_strbuf_printf(&o->sb, "  sliding window           %lld on layers",
                       (long long)c->sliding_window);
    for (int64_t i = 0; i < c->n_layers; i++)
      if (!c->any_layer_sliding_marked || c->layer_sliding[i])
        poot_strbuf_printf(&o->sb, " %lld", (long long)i);
    poot_strbuf_putc(&o->sb, '\n');
    if (c->rope_theta_local > 0 || c->rope_local_unscaled)
      poot_strbuf_printf(&o->sb, "  sliding layers' rope     theta %g%s\n",
                         c->rope_theta_local > 0 ? c->rope_theta_local : c->rope_theta,
                         c->rope_local_unscaled ? ", unscaled" : "");
  }
  if (c->attn_softcap > 0 || c->final_softcap > 0)
    poot_strbuf_printf(&o->sb, "  soft-caps                attention %g, final %g\n",
                       c->attn_softcap, c->final_softcap);
}

static bool file_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

static void hf_section(out *o, const poot_store *store) {
  char folder[4096], path[4200];
  snprintf(folder, sizeof folder, "%s", poot_store_path(store));
  struct stat sb;
  if (stat(folder, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    char *slash = strrchr(folder, '/');
    if (slash)
      *slash = 0;
    else
      snprintf(folder, sizeof folder, ".");
  }
  snprintf(path, sizeof path, "%s/config.json", folder);
  poot_hf_config *c = NULL;
  if (file_exists(path)) {
    poot_status s = poot_hf_config_load(path, &c);
    if (s) {
      poot_log(POOT_LOG_WARN, "inspect: %s", poot_status_message(s));
      poot_status_free(s);
    }
  }
  const char *arch = c ? (c->model_type ? c->model_type : c->architecture) : NULL;
  bool first = true;
  if (o->json) {
    poot_strbuf_puts(&o->sb, "\"architecture\":");
    if (arch)
      poot_json_write_string(&o->sb, arch, strlen(arch), true);
    else
      poot_strbuf_puts(&o->sb, "null");
    poot_strbuf_puts(&o->sb, ",\"config\":{");
  } else {
    poot_strbuf_printf(&o->sb, "format:        safetensors (%zu file%s)\n",
                       poot_safetensors_file_count(poot_store_safetensors(store)),
                       poot_safetensors_file_count(poot_store_safetensors(store)) == 1 ? "" : "s");
    poot_strbuf_printf(&o->sb, "architecture:  %s\n", arch ? arch : "(no config.json)");
    if (c) poot_strbuf_puts(&o->sb, "config:\n");
  }
  if (c) {
    config_field(o, &first, "vocab_size", c->vocab_size);
    config_field(o, &first, "hidden_size", c->hidden_size);
    config_field(o, &first, "intermediate_size", c->intermediate_size);
    config_field(o, &first, "num_hidden_layers", c->num_hidden_layers);
    config_field(o, &first, "num_attention_heads", c->num_attention_heads);
    config_field(o, &first, "num_key_value_heads", c->num_key_value_heads);
    config_field(o, &first, "head_dim", c->head_dim);
    config_field(o, &first, "max_position_embeddings", c->max_position_embeddings);
  }
  if (o->json) poot_strbuf_puts(&o->sb, "},");
  if (c) {
    poot_model_config mc;
    model_section(o, &mc, poot_model_config_from_hf(c, &mc));
  }
  poot_hf_config_destroy(c);
  /* Tokenizer and chat template. */
  poot_arena arena;
  poot_arena_init(&arena, 0);
  snprintf(path, sizeof path, "%s/tokenizer.json", folder);
  const char *tok_type = NULL;
  size_t n_vocab = 0, n_added = 0;
  if (file_exists(path)) {
    char *text = NULL;
    size_t len = 0;
    poot_json *root = NULL;
    poot_status s = poot_file_read_all(path, &text, &len);
    if (!s) s = poot_json_parse(&arena, text, len, NULL, &root);
    poot_free(text);
    if (!s) {
      const poot_json *model = poot_json_get(root, "model");
      const poot_json *t = poot_json_get(model, "type");
      const poot_json *v = poot_json_get(model, "vocab");
      const poot_json *a = poot_json_get(root, "added_tokens");
      tok_type = t && t->type == POOT_JSON_STRING ? t->str : "?";
      n_vocab = v ? v->len : 0;
      n_added = a ? a->len : 0;
    }
    poot_status_free(s);
  }
  bool tmpl = false;
  snprintf(path, sizeof path, "%s/tokenizer_config.json", folder);
  if (file_exists(path)) {
    char *text = NULL;
    size_t len = 0;
    poot_json *root = NULL;
    poot_status s = poot_file_read_all(path, &text, &len);
    if (!s) s = poot_json_parse(&arena, text, len, NULL, &root);
    poot_free(text);
    if (!s) tmpl = poot_json_get(root, "chat_template") != NULL;
    poot_status_free(s);
  }
  snprintf(path, sizeof path, "%s/chat_template.jinja", folder);
  tmpl = tmpl || file_exists(path);
  if (o->json) {
    if (tok_type) {
      poot_strbuf_puts(&o->sb, "\"tokenizer\":{\"model\":");
      poot_json_write_string(&o->sb, tok_type, strlen(tok_type), true);
      poot_strbuf_printf(&o->sb, ",\"tokens\":%zu,\"added_tokens\":%zu},", n_vocab, n_added);
    } else {
      poot_strbuf_puts(&o->sb, "\"tokenizer\":null,");
    }
    poot_strbuf_printf(&o->sb, "\"chat_template\":%s,", tmpl ? "true" : "false");
  } else {
    if (tok_type)
      poot_strbuf_printf(&o->sb, "tokenizer:     tokenizer.json %s, %zu tokens + %zu added\n",
                         tok_type, n_vocab, n_added);
    else
      poot_strbuf_puts(&o->sb, "tokenizer:     (no tokenizer.json)\n");
    poot_strbuf_printf(&o->sb, "chat template: %s\n", tmpl ? "yes" : "no");
  }
  poot_arena_deinit(&arena);
}

static poot_status llama2c_section(out *o, const poot_store *store, const char *tok_path) {
  const poot_llama2c_config *c = poot_llama2c_config_of(poot_store_llama2c(store));
  bool first = true;
  if (o->json)
    poot_strbuf_puts(&o->sb, "\"architecture\":\"llama\",\"config\":{");
  else
    poot_strbuf_puts(&o->sb, "format:        llama2.c\narchitecture:  llama\nconfig:\n");
  config_field(o, &first, "dim", c->dim);
  config_field(o, &first, "hidden_dim", c->hidden_dim);
  config_field(o, &first, "n_layers", c->n_layers);
  config_field(o, &first, "n_heads", c->n_heads);
  config_field(o, &first, "n_kv_heads", c->n_kv_heads);
  config_field(o, &first, "vocab_size", c->vocab_size);
  config_field(o, &first, "seq_len", c->seq_len);
  if (o->json)
    poot_strbuf_printf(&o->sb, ",\"shared_classifier\":%s},",
                       c->shared_classifier ? "true" : "false");
  else
    poot_strbuf_printf(&o->sb, "  %-24s %s\n", "shared_classifier",
                       c->shared_classifier ? "yes" : "no");
  poot_llama2c_vocab *v = NULL;
  if (tok_path) POOT_TRY(poot_llama2c_vocab_load(tok_path, c->vocab_size, &v));
  if (o->json) {
    if (v)
      poot_strbuf_printf(&o->sb,
                         "\"tokenizer\":{\"model\":\"llama2.c\",\"tokens\":%d,"
                         "\"max_token_length\":%d},",
                         v->n_tokens, v->max_token_length);
    else
      poot_strbuf_puts(&o->sb, "\"tokenizer\":null,");
    poot_strbuf_puts(&o->sb, "\"chat_template\":false,");
  } else {
    if (v)
      poot_strbuf_printf(&o->sb, "tokenizer:     llama2.c, %d tokens (max length %d)\n",
                         v->n_tokens, v->max_token_length);
    else
      poot_strbuf_puts(&o->sb, "tokenizer:     (give --tokenizer FILE)\n");
    poot_strbuf_puts(&o->sb, "chat template: no\n");
  }
  poot_llama2c_vocab_destroy(v);
  return NULL;
}

static void tensors_section(out *o, const poot_store *store) {
  size_t n = poot_store_tensor_count(store);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += poot_store_tensor_at(store, i)->size;
  if (o->json) {
    poot_strbuf_puts(&o->sb, "\"tensors\":[");
  } else {
    poot_strbuf_printf(&o->sb, "tensors:       %zu (%.1f MiB)\n", n,
                       (double)total / (1024.0 * 1024.0));
  }
  for (size_t i = 0; i < n; i++) {
    const poot_store_tensor *t = poot_store_tensor_at(store, i);
    if (o->json) {
      if (i) poot_strbuf_putc(&o->sb, ',');
      poot_strbuf_puts(&o->sb, "{\"name\":");
      poot_json_write_string(&o->sb, t->name, strlen(t->name), true);
      poot_strbuf_printf(&o->sb, ",\"type\":\"%s\",\"shape\":", t->type_name);
      print_shape(&o->sb, &t->shape);
      poot_strbuf_printf(&o->sb, ",\"bytes\":%zu}", t->size);
    } else {
      poot_strbuf_printf(&o->sb, "  %-48s %-6s ", t->name, t->type_name);
      print_shape(&o->sb, &t->shape);
      poot_strbuf_putc(&o->sb, '\n');
    }
  }
  if (o->json) poot_strbuf_puts(&o->sb, "]");
}

static int inspect_main(int argc, char **argv) {
  const char *cmd = "inspect";
  const char *model = NULL, *tok = NULL;
  bool json = false;
  const char *args[1] = {NULL};
  const poot_tool_option options[] = {
      {POOT_FLAG_JSON, &json,
       "machine-readable output: every GGUF metadata value in\n"
       "full, the tensor list, the tokenizer and template",
       0, 0},
      {POOT_FLAG_TOKENIZER, &tok, "the llama2.c tokenizer file", 0, 0},
      {POOT_FLAG_MODEL, &model, "the model (or give it as MODEL)", 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0],
                             .args = args,
                             .max_args = 1};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (!model)
    model = args[0];
  else if (args[0])
    return poot_tool_usage_error(cmd, "unexpected argument '%s'", args[0]);
  if (!model) return poot_tool_usage_error(cmd, "needs MODEL");
  poot_store *store = NULL;
  poot_status s = poot_store_open(model, &store);
  if (s) return poot_tool_fail(cmd, s);
  out o = {.json = json};
  poot_strbuf_init(&o.sb);
  if (json) {
    poot_strbuf_printf(
        &o.sb, "{\"format\":\"%s\",\"path\":", poot_store_format_name(poot_store_format_of(store)));
    poot_json_write_string(&o.sb, model, strlen(model), true);
    poot_strbuf_putc(&o.sb, ',');
  }
  switch (poot_store_format_of(store)) {
    case POOT_STORE_FORMAT_GGUF:
      gguf_section(&o, poot_store_gguf(store));
      if (poot_gguf_find(poot_store_gguf(store), "general.architecture")) {
        poot_model_config mc;
        model_section(&o, &mc, poot_model_config_from_gguf(poot_store_gguf(store), store, &mc));
      }
      break;
    case POOT_STORE_FORMAT_SAFETENSORS:
      hf_section(&o, store);
      break;
    case POOT_STORE_FORMAT_LLAMA2C:
      s = llama2c_section(&o, store, tok);
      break;
    default:
      break;
  }
  if (!s) {
    tensors_section(&o, store);
    if (json) poot_strbuf_puts(&o.sb, "}\n");
    s = poot_strbuf_status(&o.sb);
  }
  poot_store_destroy(store);
  if (s) {
    poot_strbuf_deinit(&o.sb);
    return poot_tool_fail(cmd, s);
  }
  fwrite(o.sb.data, 1, o.sb.len, stdout);
  poot_strbuf_deinit(&o.sb);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "poot inspect: writing the output failed\n");
    return POOT_EXIT_FAIL;
  }
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_inspect = {
    "inspect", "show a model's format, config, tensors, tokenizer and template", inspect_main};
