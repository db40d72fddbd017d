/* chat_template.c — the public chat-template API: compile once, render with
 * a context built from JSON. */
#include <string.h>

#include "poot/llm/chat_template.h"
#include "template_impl.h"

poot_status poot_chat_template_create(const char *source, size_t len,
                                      poot_chat_template **out_template) {
  *out_template = NULL;
  if (!source && len) return poot_status_make(POOT_INVALID_ARGUMENT, "template source is NULL");
  poot_chat_template *tpl = poot_calloc(1, sizeof *tpl);
  if (!tpl) return poot__tpl_oom();
  poot_arena_init(&tpl->arena, 0);
  tpl_token *tokens = NULL;
  size_t count = 0;
  char *copy = poot_arena_alloc(&tpl->arena, len + 1, 1);
  poot_status st = copy ? NULL : poot__tpl_oom();
  if (copy) {
    if (len) memcpy(copy, source, len);
    copy[len] = 0;
    tpl->source = copy;
    tpl->source_len = len;
  }
  if (!st) st = poot__tpl_lex(&tpl->arena, source ? source : "", len, &tokens, &count);
  if (!st) st = poot__tpl_parse(&tpl->arena, tokens, count, &tpl->root);
  if (st) {
    poot_chat_template_destroy(tpl);
    return st;
  }
  *out_template = tpl;
  return NULL;
}

const char *poot_chat_template_source(const poot_chat_template *tpl, size_t *out_len) {
  *out_len = tpl->source_len;
  return tpl->source;
}

void poot_chat_template_destroy(poot_chat_template *tpl) {
  if (!tpl) return;
  poot_arena_deinit(&tpl->arena);
  poot_free(tpl);
}

void poot_chat_template_render_params_default(poot_chat_template_render_params *params) {
  memset(params, 0, sizeof *params);
  params->add_generation_prompt = -1;
  params->now_epoch_s = -1;
}

static poot_status set_var(tpl_ctx *ctx, const char *name, tpl_value v) {
  tpl_scope *g = ctx->globals;
  for (size_t i = 0; i < g->n; i++) {
    if (strcmp(g->names[i], name) == 0) {
      g->vals[i] = v;
      return NULL;
    }
  }
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 16;
    const char **names = POOT_ARENA_NEW_ARRAY(&ctx->arena, const char *, cap);
    tpl_value *vals = POOT_ARENA_NEW_ARRAY(&ctx->arena, tpl_value, cap);
    if (!names || !vals) return poot__tpl_oom();
    if (g->n) {
      memcpy(names, g->names, g->n * sizeof *names);
      memcpy(vals, g->vals, g->n * sizeof *vals);
    }
    g->names = names;
    g->vals = vals;
    g->cap = cap;
  }
  g->names[g->n] = name;
  g->vals[g->n] = v;
  g->n++;
  return NULL;
}

static bool has_var(tpl_ctx *ctx, const char *name) {
  for (size_t i = 0; i < ctx->globals->n; i++)
    if (strcmp(ctx->globals->names[i], name) == 0) return true;
  return false;
}

static poot_status render(tpl_ctx *ctx, const poot_chat_template *tpl, const poot_json *vars) {
  ctx->globals = POOT_ARENA_NEW(&ctx->arena, tpl_scope);
  if (!ctx->globals) return poot__tpl_oom();
  if (vars) {
    if (vars->type != POOT_JSON_OBJECT)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "template variables must be a JSON object, not another value");
    for (size_t i = 0; i < vars->len; i++) {
      tpl_value v;
      POOT_TRY(poot__tv_from_json(ctx, vars->items[i], &v));
      char *name = poot_arena_strndup(&ctx->arena, vars->keys[i], vars->key_lens[i]);
      if (!name) return poot__tpl_oom();
      POOT_TRY(set_var(ctx, name, v));
    }
  }
  /* transformers passes these explicitly, so they are defined (as None). */
  if (!has_var(ctx, "tools")) POOT_TRY(set_var(ctx, "tools", tv_none()));
  if (!has_var(ctx, "documents")) POOT_TRY(set_var(ctx, "documents", tv_none()));
  if (ctx->params.add_generation_prompt >= 0)
    POOT_TRY(set_var(ctx, "add_generation_prompt", tv_bool(ctx->params.add_generation_prompt > 0)));
  else if (!has_var(ctx, "add_generation_prompt"))
    POOT_TRY(set_var(ctx, "add_generation_prompt", tv_bool(false)));
  if (ctx->params.bos_token) {
    tpl_value v;
    POOT_TRY(poot__tv_strdup(ctx, ctx->params.bos_token, strlen(ctx->params.bos_token), &v));
    POOT_TRY(set_var(ctx, "bos_token", v));
  }
  if (ctx->params.eos_token) {
    tpl_value v;
    POOT_TRY(poot__tv_strdup(ctx, ctx->params.eos_token, strlen(ctx->params.eos_token), &v));
    POOT_TRY(set_var(ctx, "eos_token", v));
  }
  tpl_scope *root = POOT_ARENA_NEW(&ctx->arena, tpl_scope);
  if (!root) return poot__tpl_oom();
  root->parent = ctx->globals;
  tpl_flow flow = FLOW_NORMAL;
  return poot__tpl_exec_body(ctx, root, tpl->root->body, tpl->root->nbody, &flow);
}

poot_status poot_chat_template_render(const poot_chat_template *tpl, const poot_json *vars,
                                      const poot_chat_template_render_params *params,
                                      char **out_text, size_t *out_len, char **out_raised) {
  *out_text = NULL;
  *out_len = 0;
  if (out_raised) *out_raised = NULL;
  if (!tpl) return poot_status_make(POOT_INVALID_ARGUMENT, "template is NULL");
  tpl_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  if (params)
    ctx.params = *params;
  else
    poot_chat_template_render_params_default(&ctx.params);
  if (!ctx.params.max_steps) ctx.params.max_steps = 100000000;
  if (!ctx.params.max_output) ctx.params.max_output = (size_t)64 << 20;
  if (!ctx.params.max_memory) ctx.params.max_memory = (size_t)256 << 20;
  if (!ctx.params.max_depth) ctx.params.max_depth = 256;
  poot_arena_init(&ctx.arena, 0);
  poot_strbuf out;
  poot_strbuf_init(&out);
  ctx.out = &out;
  poot_status st = render(&ctx, tpl, vars);
  if (!st) st = poot_strbuf_status(&out);
  if (!st) {
    *out_len = out.len;
    *out_text = poot_strbuf_take(&out);
    if (!*out_text) {
      *out_len = 0;
      st = poot__tpl_oom();
    }
  }
  if (st && ctx.raised && out_raised && poot_status_code_of(st) == POOT_INVALID_ARGUMENT) {
    *out_raised = ctx.raised;
    ctx.raised = NULL;
  }
  poot_free(ctx.raised);
  poot_strbuf_deinit(&out);
  poot_arena_deinit(&ctx.arena);
  return st;
}
