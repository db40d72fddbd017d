/* poot template — render a chat template the way Hugging Face transformers
 * does, from a model (GGUF metadata, or a Hugging Face model folder)
 * or from a bare template file. Prints the rendered prompt exactly, with no
 * newline added. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "poot/llm/chat_template.h"
#include "poot/llm/gguf.h"
#include "tool.h"

static const char *const CMD = "template";

static const char synopsis[] =
    "usage: poot template -m MODEL --messages FILE.json [--add-generation-prompt]\n"
    "       poot template --template FILE.jinja [--bos TOKEN --eos TOKEN] --messages FILE.json\n"
    "\n"
    "Renders a chat template (jinja2 semantics, as transformers' apply_chat_template)\n"
    "and prints the prompt exactly, without an added newline.\n"
    "\n";

static const char epilog[] =
    "\n"
    "Flags override the variables of FILE.json. A template that calls\n"
    "raise_exception(msg) exits 1 with its message.\n";

typedef struct model_info {
  char *template_text;
  size_t template_len;
  char *bos;
  char *eos;
} model_info;

static void model_info_deinit(model_info *m) {
  poot_free(m->template_text);
  poot_free(m->bos);
  poot_free(m->eos);
}

static char *gguf_token(const poot_gguf *g, const char *id_key) {
  uint64_t id = 0;
  poot_status st = poot_gguf_get_u64(g, id_key, &id);
  if (st) {
    poot_status_free(st);
    return NULL;
  }
  const poot_gguf_value *tokens = NULL;
  st = poot_gguf_get_array(g, "tokenizer.ggml.tokens", POOT_GGUF_VALUE_TYPE_COUNT, &tokens);
  if (st) {
    poot_status_free(st);
    return NULL;
  }
  if (id >= poot_gguf_array_len(tokens)) return NULL;
  const char *s = NULL;
  size_t n = 0;
  st = poot_gguf_array_get_string(tokens, id, &s, &n);
  if (st) {
    poot_status_free(st);
    return NULL;
  }
  return poot_strndup(s, n);
}

static poot_status load_gguf(const char *path, model_info *m) {
  poot_gguf *g = NULL;
  POOT_TRY(poot_gguf_open(path, &g));
  const char *t = NULL;
  size_t n = 0;
  poot_status st = poot_gguf_get_string(g, "tokenizer.chat_template", &t, &n);
  if (st) {
    poot_status_free(st);
    st =
        poot_status_make(POOT_NOT_FOUND, "%s has no chat template (tokenizer.chat_template)", path);
  } else {
    m->template_text = poot_strndup(t, n);
    m->template_len = n;
    m->bos = gguf_token(g, "tokenizer.ggml.bos_token_id");
    m->eos = gguf_token(g, "tokenizer.ggml.eos_token_id");
    if (!m->template_text) st = poot_status_make(POOT_OUT_OF_MEMORY, "out of memory");
  }
  poot_gguf_destroy(g);
  return st;
}

/* A special token in tokenizer_config.json: a string or {"content": ...}. */
static char *config_token(const poot_json *cfg, const char *key) {
  const poot_json *v = poot_json_get(cfg, key);
  if (v && v->type == POOT_JSON_OBJECT) v = poot_json_get(v, "content");
  if (!v || v->type != POOT_JSON_STRING) return NULL;
  return poot_strndup(v->str, v->len);
}

/* A Hugging Face model folder: the template from chat_template.jinja when
 * present (newer transformers save it there), else from tokenizer_config.json
 * (a string, or a list of named templates of which "default" is used); the
 * BOS/EOS strings from tokenizer_config.json. */
static poot_status load_folder(const char *dir, model_info *m) {
  char path[4096];
  snprintf(path, sizeof path, "%s/chat_template.jinja", dir);
  struct stat sbuf;
  if (stat(path, &sbuf) == 0)
    POOT_TRY(poot_file_read_all(path, &m->template_text, &m->template_len));
  snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
  char *text = NULL;
  size_t len = 0;
  poot_status st = poot_file_read_all(path, &text, &len);
  if (st) {
    if (m->template_text) { /* a template file alone is enough */
      poot_status_free(st);
      return NULL;
    }
    return st;
  }
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *cfg = NULL;
  st = poot_json_parse(&arena, text, len, NULL, &cfg);
  if (!st) {
    m->bos = config_token(cfg, "bos_token");
    m->eos = config_token(cfg, "eos_token");
    const poot_json *ct = poot_json_get(cfg, "chat_template");
    if (ct && ct->type == POOT_JSON_ARRAY) {
      const poot_json *pick = NULL;
      for (size_t i = 0; i < ct->len; i++) {
        const poot_json *name = poot_json_get(ct->items[i], "name");
        if (name && name->type == POOT_JSON_STRING && strcmp(name->str, "default") == 0)
          pick = poot_json_get(ct->items[i], "template");
      }
      ct = pick;
    }
    if (m->template_text) {
      /* chat_template.jinja wins. */
    } else if (!ct || ct->type != POOT_JSON_STRING) {
      st = poot_status_make(
          POOT_NOT_FOUND, "%s has no chat_template (and %s has no chat_template.jinja)", path, dir);
    } else {
      m->template_text = poot_strndup(ct->str, ct->len);
      m->template_len = ct->len;
      if (!m->template_text) st = poot_status_make(POOT_OUT_OF_MEMORY, "out of memory");
    }
  }
  poot_arena_deinit(&arena);
  poot_free(text);
  return st;
}

static poot_status read_input(const char *path, char **out, size_t *out_len) {
  if (strcmp(path, "-") == 0) return poot_tool_read_stdin(out, out_len);
  return poot_file_read_all(path, out, out_len);
}

static int run(const char *model, const char *template_path, const char *messages_path,
               const poot_chat_template_render_params *flags) {
  model_info m = {0};
  char *msg_text = NULL;
  size_t msg_len = 0;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_chat_template *tpl = NULL;
  char *out = NULL, *raised = NULL;
  size_t out_len = 0;
  int rc = POOT_EXIT_FAIL;
  poot_status st = NULL;
  poot_chat_template_render_params params = *flags;

  if (template_path) {
    st = poot_file_read_all(template_path, &m.template_text, &m.template_len);
  } else {
    struct stat sbuf;
    if (stat(model, &sbuf) == 0 && S_ISDIR(sbuf.st_mode))
      st = load_folder(model, &m);
    else
      st = load_gguf(model, &m);
  }
  if (st) goto fail;
  if (!params.bos_token) params.bos_token = m.bos;
  if (!params.eos_token) params.eos_token = m.eos;

  poot_json *vars = NULL;
  if (messages_path) {
    st = read_input(messages_path, &msg_text, &msg_len);
    if (st) goto fail;
    poot_json *root = NULL;
    st = poot_json_parse(&arena, msg_text, msg_len, NULL, &root);
    if (st) {
      st = poot_status_annotate(st, "%s", messages_path);
      goto fail;
    }
    if (root->type == POOT_JSON_ARRAY) {
      /* A bare list of messages. */
      vars = POOT_ARENA_NEW(&arena, poot_json);
      const char **keys = POOT_ARENA_NEW_ARRAY(&arena, const char *, 1);
      size_t *lens = POOT_ARENA_NEW_ARRAY(&arena, size_t, 1);
      poot_json **items = POOT_ARENA_NEW_ARRAY(&arena, poot_json *, 1);
      if (!vars || !keys || !lens || !items) {
        st = poot_status_make(POOT_OUT_OF_MEMORY, "out of memory");
        goto fail;
      }
      keys[0] = "messages";
      lens[0] = 8;
      items[0] = root;
      vars->type = POOT_JSON_OBJECT;
      vars->len = 1;
      vars->keys = keys;
      vars->key_lens = lens;
      vars->items = items;
    } else if (root->type == POOT_JSON_OBJECT) {
      vars = root;
    } else {
      st = poot_status_make(POOT_INVALID_ARGUMENT,
                            "%s must hold a list of messages or an object of template variables",
                            messages_path);
      goto fail;
    }
  }
  st = poot_chat_template_create(m.template_text, m.template_len, &tpl);
  if (st) goto fail;
  st = poot_chat_template_render(tpl, vars, &params, &out, &out_len, &raised);
  if (st) goto fail;
  if (out_len && fwrite(out, 1, out_len, stdout) != out_len) {
    st = poot_status_make(POOT_IO, "cannot write the output");
    goto fail;
  }
  fflush(stdout);
  rc = POOT_EXIT_OK;
  goto done;
fail:
  if (raised) {
    fprintf(stderr, "poot %s: the template raised an exception: %s\n", CMD, raised);
    poot_status_free(st);
  } else {
    rc = poot_tool_fail(CMD, st);
  }
  rc = POOT_EXIT_FAIL;
done:
  poot_free(out);
  poot_free(raised);
  poot_chat_template_destroy(tpl);
  poot_arena_deinit(&arena);
  poot_free(msg_text);
  model_info_deinit(&m);
  return rc;
}

static int template_main(int argc, char **argv) {
  const char *model = NULL, *template_path = NULL, *messages = NULL;
  poot_chat_template_render_params params;
  poot_chat_template_render_params_default(&params);
  long long now = -1;
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &model,
       "a GGUF file (tokenizer.chat_template and the BOS/EOS\n"
       "token strings) or a Hugging Face folder\n"
       "(chat_template.jinja / tokenizer_config.json)",
       0, 0},
      {POOT_FLAG_TEMPLATE, &template_path, "a template file instead of a model's", 0, 0},
      {POOT_FLAG_MESSAGES, &messages,
       "JSON: a list of messages, or an object of template\n"
       "variables (messages, tools, documents,\n"
       "add_generation_prompt, bos_token, eos_token,\n"
       "enable_thinking, ...); '-' reads stdin",
       0, 0},
      {POOT_FLAG_GEN_PROMPT, &params.add_generation_prompt, "set add_generation_prompt to true", 1,
       1},
      {POOT_FLAG_NO_GEN_PROMPT, &params.add_generation_prompt, "set add_generation_prompt to false",
       0, 0},
      {POOT_FLAG_BOS, &params.bos_token, "the bos_token string", 0, 0},
      {POOT_FLAG_EOS, &params.eos_token, "the eos_token string", 0, 0},
      {POOT_FLAG_NOW, &now,
       "the time strftime_now() formats, in seconds since\n"
       "the epoch, as UTC (default: now, local time)",
       0, LLONG_MAX},
  };
  const poot_tool_cli cli = {.cmd = CMD,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0],
                             .epilog = epilog};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (now >= 0) params.now_epoch_s = now;
  if (!model && !template_path)
    return poot_tool_usage_error(CMD, "give -m MODEL or --template FILE");
  if (model && template_path)
    return poot_tool_usage_error(CMD, "give -m MODEL or --template FILE, not both");
  return run(model, template_path, messages, &params);
}

const poot_tool_command poot_tool_cmd_template = {"template", "render a chat template",
                                                  template_main};
