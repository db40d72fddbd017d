/* The grammar of forced tool calls (docs/toolcalls.md "Forced calls"): the
 * calls a format writes, with each function's arguments constrained by its
 * JSON-schema "parameters", compiled through poot_json_schemas_to_gbnf. This
 * writes the formats; toolcall_match.c reads them. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/grammar.h"
#include "toolcall_impl.h"

static poot_status bad(const char *fmt, size_t i) {
  return poot_status_make(POOT_INVALID_ARGUMENT, fmt, i);
}

/* tools[i].function, checked: a name and an object (or absent) "parameters". */
static poot_status tool_function(const poot_json *tools, size_t i, const poot_json **out_fn,
                                 const poot_json **out_name) {
  const poot_json *t = tools->items[i];
  const poot_json *type = poot_json_get(t, "type");
  const poot_json *fn = poot_json_get(t, "function");
  if (!t || t->type != POOT_JSON_OBJECT || !fn || fn->type != POOT_JSON_OBJECT)
    return bad("tools[%zu] must be an object with a 'function' object", i);
  if (type && (type->type != POOT_JSON_STRING || strcmp(type->str, "function") != 0))
    return bad("tools[%zu].type must be \"function\"", i);
  const poot_json *name = poot_json_get(fn, "name");
  if (!name || name->type != POOT_JSON_STRING || name->len == 0)
    return bad("tools[%zu].function.name must be a non-empty string", i);
  const poot_json *params = poot_json_get(fn, "parameters");
  if (params && params->type != POOT_JSON_OBJECT && params->type != POOT_JSON_NULL)
    return bad("tools[%zu].function.parameters must be a JSON Schema object", i);
  *out_fn = fn;
  *out_name = name;
  return NULL;
}

poot_status poot_toolcall_tools_check(const poot_json *tools) {
  if (!tools || tools->type != POOT_JSON_ARRAY)
    return poot_status_make(POOT_INVALID_ARGUMENT, "'tools' must be a list");
  for (size_t i = 0; i < tools->len; i++) {
    const poot_json *fn = NULL, *name = NULL;
    POOT_TRY(tool_function(tools, i, &fn, &name));
  }
  return NULL;
}

/* One call's JSON with tool k's name and "tool-k" arguments, as a GBNF
 * sequence: {"name":"NAME","<key>":tool-k} (compact: the parsers accept it
 * and a small model would fill optional white space). */
static poot_status call_alt(poot_strbuf *sb, const poot_json *name, const char *key, size_t k) {
  poot_strbuf json;
  poot_strbuf_init(&json);
  poot_strbuf_puts(&json, "{\"name\":");
  poot_json_write_string(&json, name->str, name->len, false);
  poot_strbuf_printf(&json, ",\"%s\":", key);
  poot_status st = json.failed ? poot_status_make(POOT_OUT_OF_MEMORY, "toolcall grammar") : NULL;
  if (!st) st = poot_gbnf_literal(sb, json.data, json.len);
  poot_strbuf_printf(sb, " tool-%zu \"}\"", k);
  poot_strbuf_deinit(&json);
  return st;
}

poot_status poot_toolcall_grammar(poot_toolcall_format format, const poot_json *tools,
                                  const poot_toolcall_grammar_options *options, char **out_gbnf,
                                  size_t *out_len) {
  *out_gbnf = NULL;
  *out_len = 0;
  poot_toolcall_grammar_options o = {0};
  if (options) o = *options;
  if (format < 0 || format >= POOT_TOOLCALL_FORMAT_COUNT)
    return poot_status_make(POOT_INVALID_ARGUMENT, "toolcall grammar: format %d is unknown",
                            (int)format);
  POOT_TRY(poot_toolcall_tools_check(tools));
  uint32_t max_calls = o.function ? 1 : o.max_calls ? o.max_calls : 8;
  if (max_calls > 128) max_calls = 128;
  size_t n = tools->len;
  poot_json_schema_rule *rules = poot_calloc(n ? n : 1, sizeof *rules);
  char (*names)[32] = poot_calloc(n ? n : 1, sizeof *names);
  poot_strbuf params, alts, root;
  poot_strbuf_init(&params);
  poot_strbuf_init(&alts);
  poot_strbuf_init(&root);
  size_t *offsets = poot_calloc(n ? n : 1, sizeof *offsets);
  poot_status st =
      !rules || !names || !offsets ? poot_status_make(POOT_OUT_OF_MEMORY, "toolcall grammar") : NULL;
  /* The arguments key: LLAMA3 (and NONE, which writes LLAMA3's shape) says
   * "parameters", as Llama's templates render a call. */
  const char *key = format == POOT_TOOLCALL_FORMAT_HERMES || format == POOT_TOOLCALL_FORMAT_MISTRAL
                        ? "arguments"
                        : "parameters";
  size_t used = 0;
  for (size_t i = 0; i < n && !st; i++) {
    const poot_json *fn = NULL, *name = NULL;
    st = tool_function(tools, i, &fn, &name);
    if (st) break;
    if (o.function && strcmp(o.function, name->str) != 0) continue;
    const poot_json *schema = poot_json_get(fn, "parameters");
    offsets[used] = params.len;
    if (schema && schema->type == POOT_JSON_OBJECT)
      poot_json_write(&params, schema, false, false);
    else
      poot_strbuf_puts(&params, "{\"type\":\"object\"}");
    snprintf(names[used], sizeof names[used], "tool-%zu", used);
    rules[used] = (poot_json_schema_rule){.name = names[used], .len = params.len - offsets[used]};
    if (used) poot_strbuf_puts(&alts, " | ");
    st = call_alt(&alts, name, key, used);
    used++;
  }
  if (!st && params.failed) st = poot_status_make(POOT_OUT_OF_MEMORY, "toolcall grammar");
  if (!st && used == 0)
    st = o.function ? poot_status_make(POOT_INVALID_ARGUMENT,
                                       "tool_choice names the function '%.200s', which 'tools' "
                                       "does not have",
                                       o.function)
                    : poot_status_make(POOT_INVALID_ARGUMENT,
                                       "tool_choice \"required\" needs at least one tool");
  for (size_t i = 0; i < used && !st; i++) rules[i].schema = params.data + offsets[i];
  if (!st) {
    /* one call, then max_calls - 1 more at most */
    const char *open = "", *close = "", *sep = ";";
    if (format == POOT_TOOLCALL_FORMAT_HERMES)
      open = "\"<tool_call>\\n\" ", close = " \"\\n</tool_call>\"", sep = "\"\\n\"";
    else if (format == POOT_TOOLCALL_FORMAT_MISTRAL)
      sep = "\",\"";
    else
      sep = "\";\"";
    poot_strbuf call;
    poot_strbuf_init(&call);
    poot_strbuf_printf(&call, "%s( %s )%s", open, alts.data, close);
    if (format == POOT_TOOLCALL_FORMAT_MISTRAL) poot_strbuf_puts(&root, "\"[TOOL_CALLS][\" ");
    poot_strbuf_append(&root, call.data, call.len);
    if (max_calls > 1)
      poot_strbuf_printf(&root, " ( %s %s ){0,%u}", sep, call.data, max_calls - 1);
    if (format == POOT_TOOLCALL_FORMAT_MISTRAL) poot_strbuf_puts(&root, " \"]\"");
    if (call.failed || root.failed) st = poot_status_make(POOT_OUT_OF_MEMORY, "toolcall grammar");
    poot_strbuf_deinit(&call);
  }
  if (!st) {
    poot_json_schema_options so = poot_json_schema_options_default();
    so.compact = true;
    so.ignore_unknown_formats = true;
    so.strict_properties = o.strict;
    st = poot_json_schemas_to_gbnf(rules, used, root.data, &so, out_gbnf, out_len);
    if (st) st = poot_status_annotate(st, "the tools' parameters");
  }
  poot_strbuf_deinit(&params);
  poot_strbuf_deinit(&alts);
  poot_strbuf_deinit(&root);
  poot_free(rules);
  poot_free(names);
  poot_free(offsets);
  return st;
}
