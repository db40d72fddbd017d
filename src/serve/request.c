/* The request parser: the JSON body of /v1/chat/completions or
 * /v1/completions into a poot__serve_request (docs/serve.md "Requests").
 * Unknown fields are ignored; a field of the wrong type or value is
 * INVALID_ARGUMENT naming it (the server answers 400 with it as `param`). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_impl.h"

typedef struct parse {
  poot_arena *arena;
  const poot__serve_limits *limits;
  poot__serve_request *r;
  const char **param;
} parse;

poot_status poot__serve_bad(const char **out_param, const char *param, const char *fmt, ...) {
  *out_param = param;
  va_list ap;
  va_start(ap, fmt);
  poot_status st = poot_status_makev(POOT_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return st;
}

poot_status poot__serve_oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "out of memory while reading the request");
}

bool poot__serve_is_null(const poot_json *v) {
  return !v || v->type == POOT_JSON_NULL;
}

/* A number field in [lo, hi]; absent or null leaves *out. */
static poot_status get_number(parse *p, const poot_json *obj, const char *key, double lo,
                              double hi, bool lo_open, float *out) {
  const poot_json *v = poot_json_get(obj, key);
  if (poot__serve_is_null(v)) return NULL;
  if (v->type != POOT_JSON_NUMBER)
    return poot__serve_bad(p->param, key, "'%s' must be a number", key);
  double x = v->number;
  if (!isfinite(x) || x < lo || x > hi || (lo_open && x == lo))
    return poot__serve_bad(p->param, key, "'%s' = %s is out of range: it must be in %c%g, %g]", key,
                           v->str, lo_open ? '(' : '[', lo, hi);
  *out = (float)x;
  return NULL;
}

/* An integer field in [lo, hi]; absent or null leaves *out and *given. */
static poot_status get_int(parse *p, const poot_json *obj, const char *key, int64_t lo,
                           int64_t hi, int64_t *out, bool *given) {
  const poot_json *v = poot_json_get(obj, key);
  if (poot__serve_is_null(v)) return NULL;
  if (v->type != POOT_JSON_NUMBER || v->number != floor(v->number) || !isfinite(v->number))
    return poot__serve_bad(p->param, key, "'%s' must be an integer", key);
  if (v->number < (double)lo || v->number > (double)hi)
    return poot__serve_bad(p->param, key, "'%s' = %s is out of range: it must be in [%lld, %lld]",
                           key, v->str, (long long)lo, (long long)hi);
  *out = (int64_t)v->number;
  if (given) *given = true;
  return NULL;
}

static poot_status get_bool(parse *p, const poot_json *obj, const char *key, bool *out) {
  const poot_json *v = poot_json_get(obj, key);
  if (poot__serve_is_null(v)) return NULL;
  if (v->type != POOT_JSON_BOOL)
    return poot__serve_bad(p->param, key, "'%s' must be true or false", key);
  *out = v->boolean;
  return NULL;
}

/* ------------------------------------------------------------ messages */

static const char *const roles[] = {"system", "user", "assistant", "tool", "developer",
                                    "function"};

/* Base64 (RFC 4648, padding optional, no white space) into the arena.
 * False for any other character or a bad length. */
static bool base64_decode(poot_arena *arena, const char *s, size_t n, uint8_t **out,
                          size_t *out_len) {
  while (n && s[n - 1] == '=') n--;
  if (n % 4 == 1) return false;
  uint8_t *buf = poot_arena_alloc(arena, n / 4 * 3 + 3, 1);
  if (!buf) return false;
  size_t k = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+' || c == '-' ? 62
            : c == '/' || c == '_' ? 63
                                   : -1;
    if (v < 0) return false;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      buf[k++] = (uint8_t)(acc >> bits);
    }
  }
  *out = buf;
  *out_len = k;
  return true;
}

/* An image_url part: a data: URL holding base64 image bytes (the server
 * fetches nothing), appended to r->images. */
static poot_status image_part(parse *p, const poot_json *part, size_t index, size_t k) {
  const poot_json *iu = poot_json_get(part, "image_url");
  const poot_json *url = iu && iu->type == POOT_JSON_OBJECT ? poot_json_get(iu, "url") : iu;
  if (!url || url->type != POOT_JSON_STRING)
    return poot__serve_bad(p->param, "messages",
                           "messages[%zu].content[%zu].image_url.url must be a string", index, k);
  const char *u = url->str;
  if (strncmp(u, "data:", 5) != 0)
    return poot__serve_bad(
        p->param, "messages",
        "messages[%zu].content[%zu]: the server fetches nothing; send the image inline as "
        "a data: URL (data:image/png;base64,…)",
        index, k);
  const char *comma = memchr(u, ',', url->len);
  const char *b64 = comma ? strstr(u, ";base64") : NULL;
  if (!comma || !b64 || b64 > comma)
    return poot__serve_bad(p->param, "messages",
                           "messages[%zu].content[%zu]: the data: URL must be base64 (;base64,)",
                           index, k);
  poot__serve_image img = {0};
  size_t n = url->len - (size_t)(comma + 1 - u);
  if (!base64_decode(p->arena, comma + 1, n, &img.data, &img.len) || img.len == 0)
    return poot__serve_bad(p->param, "messages",
                           "messages[%zu].content[%zu]: the data: URL's base64 is not valid", index,
                           k);
  if (p->r->n_images == POOT_SERVE_MAX_IMAGES)
    return poot__serve_bad(p->param, "messages", "at most %d images are accepted in one request",
                           POOT_SERVE_MAX_IMAGES);
  p->r->images[p->r->n_images++] = img;
  return NULL;
}

/* The content for the template: a string as it is, null as "", a list of
 * text parts joined; with image parts, the list of parts as transformers'
 * processors give it ({"type":"text","text":…} and {"type":"image"}). */
static poot_status content_text(parse *p, const poot_json *content, size_t index,
                                poot_json **out) {
  poot_json *s = POOT_ARENA_NEW(p->arena, poot_json);
  if (!s) return poot__serve_oom();
  s->type = POOT_JSON_STRING;
  s->str = "";
  *out = s;
  if (poot__serve_is_null(content)) return NULL;
  if (content->type == POOT_JSON_STRING) {
    s->str = content->str;
    s->len = content->len;
    return NULL;
  }
  if (content->type != POOT_JSON_ARRAY)
    return poot__serve_bad(p->param, "messages",
                           "messages[%zu].content must be a string or a list of parts", index);
  size_t total = 0, images = 0;
  for (size_t i = 0; i < content->len; i++) {
    const poot_json *part = content->items[i];
    const poot_json *type = poot_json_get(part, "type");
    if (!part || part->type != POOT_JSON_OBJECT || !type || type->type != POOT_JSON_STRING)
      return poot__serve_bad(p->param, "messages",
                             "messages[%zu].content[%zu] must be an object with a 'type'", index,
                             i);
    if (strcmp(type->str, "image_url") == 0) {
      POOT_TRY(image_part(p, part, index, i));
      images++;
      continue;
    }
    if (strcmp(type->str, "text") != 0)
      return poot__serve_bad(
          p->param, "messages",
          "messages[%zu].content[%zu]: content parts of type '%s' are not supported "
          "(text and image_url)",
          index, i, type->str);
    const poot_json *text = poot_json_get(part, "text");
    if (!text || text->type != POOT_JSON_STRING)
      return poot__serve_bad(p->param, "messages",
                             "messages[%zu].content[%zu].text must be a string", index, i);
    total += text->len;
  }
  if (images) { /* the parts, images as {"type":"image"} */
    static const poot_json image_type = {.type = POOT_JSON_STRING, .str = "image", .len = 5};
    poot_json *list = POOT_ARENA_NEW(p->arena, poot_json);
    if (!list) return poot__serve_oom();
    *list = *content;
    list->items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, content->len);
    if (!list->items) return poot__serve_oom();
    for (size_t i = 0; i < content->len; i++) {
      poot_json *part = content->items[i];
      const poot_json *type = poot_json_get(part, "type");
      if (strcmp(type->str, "image_url") == 0) {
        poot_json *img = POOT_ARENA_NEW(p->arena, poot_json);
        poot_json **items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, 1);
        const char **keys = POOT_ARENA_NEW_ARRAY(p->arena, const char *, 1);
        size_t *lens = POOT_ARENA_NEW_ARRAY(p->arena, size_t, 1);
        if (!img || !items || !keys || !lens) return poot__serve_oom();
        items[0] = (poot_json *)&image_type, keys[0] = "type", lens[0] = 4;
        *img = (poot_json){.type = POOT_JSON_OBJECT, .items = items, .keys = keys,
                           .key_lens = lens, .len = 1};
        part = img;
      }
      list->items[i] = part;
    }
    *out = list;
    return NULL;
  }
  char *buf = poot_arena_alloc(p->arena, total + 1, 1);
  if (!buf) return poot__serve_oom();
  size_t at = 0;
  for (size_t i = 0; i < content->len; i++) {
    const poot_json *text = poot_json_get(content->items[i], "text");
    memcpy(buf + at, text->str, text->len);
    at += text->len;
  }
  s->str = buf;
  s->len = total;
  return NULL;
}

/* A shallow copy of an object with member `key` replaced by `value`. */
static poot_json *with_member(parse *p, const poot_json *obj, const char *key, poot_json *value) {
  poot_json *copy = POOT_ARENA_NEW(p->arena, poot_json);
  poot_json **items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, obj->len ? obj->len : 1);
  if (!copy || !items) return NULL;
  *copy = *obj;
  for (size_t k = 0; k < obj->len; k++)
    items[k] = strcmp(obj->keys[k], key) == 0 ? value : obj->items[k];
  copy->items = items;
  return copy;
}

/* tool_calls[j].function.arguments given as a JSON string holding an object,
 * parsed into the object; NULL when it is not such a string. */
static poot_json *call_with_object_arguments(parse *p, const poot_json *call) {
  const poot_json *fn = poot_json_get(call, "function");
  const poot_json *args = fn && fn->type == POOT_JSON_OBJECT ? poot_json_get(fn, "arguments") : NULL;
  if (!args || args->type != POOT_JSON_STRING) return NULL;
  poot_json *obj = NULL;
  poot_json_parse_options jo = {.max_depth = 64};
  poot_status st = poot_json_parse(p->arena, args->str, args->len, &jo, &obj);
  if (st || obj->type != POOT_JSON_OBJECT) {
    poot_status_free(st);
    return NULL; /* not an object: the template gets the string */
  }
  poot_json *new_fn = with_member(p, fn, "arguments", obj);
  return new_fn ? with_member(p, call, "function", new_fn) : NULL;
}

/* r->messages with each assistant call's string arguments parsed into an
 * object (transformers' convention; r->messages_raw keeps the strings). */
static poot_status parse_call_arguments(parse *p, poot_json *msgs) {
  poot_json *out = NULL;
  for (size_t i = 0; i < msgs->len; i++) {
    const poot_json *m = msgs->items[i];
    const poot_json *calls = poot_json_get(m, "tool_calls");
    if (!calls || calls->type != POOT_JSON_ARRAY) continue;
    poot_json *new_calls = NULL;
    for (size_t j = 0; j < calls->len; j++) {
      poot_json *call = call_with_object_arguments(p, calls->items[j]);
      if (!call) continue;
      if (!new_calls) {
        new_calls = POOT_ARENA_NEW(p->arena, poot_json);
        poot_json **items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, calls->len);
        if (!new_calls || !items) return poot__serve_oom();
        *new_calls = *calls;
        memcpy(items, calls->items, calls->len * sizeof *items);
        new_calls->items = items;
      }
      new_calls->items[j] = call;
    }
    if (!new_calls) continue;
    if (!out) {
      out = POOT_ARENA_NEW(p->arena, poot_json);
      poot_json **items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, msgs->len);
      if (!out || !items) return poot__serve_oom();
      *out = *msgs;
      memcpy(items, msgs->items, msgs->len * sizeof *items);
      out->items = items;
    }
    out->items[i] = with_member(p, m, "tool_calls", new_calls);
    if (!out->items[i]) return poot__serve_oom();
  }
  if (out) p->r->messages = out;
  return NULL;
}

/* tools, tool_choice, parallel_tool_calls. */
static poot_status parse_tools(parse *p, const poot_json *body) {
  poot__serve_request *r = p->r;
  r->parallel_tool_calls = true;
  POOT_TRY(get_bool(p, body, "parallel_tool_calls", &r->parallel_tool_calls));
  const poot_json *tools = poot_json_get(body, "tools");
  if (!poot__serve_is_null(tools)) {
    poot_status st = poot_toolcall_tools_check(tools);
    if (st) {
      poot_status out = poot__serve_bad(p->param, "tools", "%s", poot_status_message(st));
      poot_status_free(st);
      return out;
    }
    if (tools->len) r->tools = tools;
  }
  const poot_json *tc = poot_json_get(body, "tool_choice");
  if (poot__serve_is_null(tc)) return NULL;
  if (tc->type == POOT_JSON_STRING) {
    if (strcmp(tc->str, "auto") == 0) r->tool_choice = POOT_TOOL_CHOICE_AUTO;
    else if (strcmp(tc->str, "none") == 0) r->tool_choice = POOT_TOOL_CHOICE_NONE;
    else if (strcmp(tc->str, "required") == 0) r->tool_choice = POOT_TOOL_CHOICE_REQUIRED;
    else
      return poot__serve_bad(p->param, "tool_choice",
                             "tool_choice '%s' is not one of none, auto, required", tc->str);
  } else {
    const poot_json *fn = poot_json_get(tc, "function");
    const poot_json *name = fn && fn->type == POOT_JSON_OBJECT ? poot_json_get(fn, "name") : NULL;
    if (tc->type != POOT_JSON_OBJECT || !name || name->type != POOT_JSON_STRING)
      return poot__serve_bad(
          p->param, "tool_choice",
          "'tool_choice' must be none, auto, required or {\"type\": \"function\", "
          "\"function\": {\"name\": …}}");
    r->tool_choice = POOT_TOOL_CHOICE_FUNCTION;
    r->tool_choice_name = name->str;
  }
  if ((r->tool_choice == POOT_TOOL_CHOICE_REQUIRED || r->tool_choice == POOT_TOOL_CHOICE_FUNCTION) &&
      !r->tools)
    return poot__serve_bad(
        p->param, "tool_choice", "tool_choice %s needs 'tools'",
        r->tool_choice == POOT_TOOL_CHOICE_REQUIRED ? "\"required\"" : "a function");
  return NULL;
}

/* Each message copied with its content made a string; other members (name,
 * tool_calls, tool_call_id) are kept for the template. */
static poot_status parse_messages(parse *p, const poot_json *body) {
  const poot_json *msgs = poot_json_get(body, "messages");
  if (poot__serve_is_null(msgs))
    return poot__serve_bad(p->param, "messages", "'messages' is required");
  if (msgs->type != POOT_JSON_ARRAY)
    return poot__serve_bad(p->param, "messages", "'messages' must be a list");
  if (msgs->len == 0) return poot__serve_bad(p->param, "messages", "'messages' must not be empty");
  if (msgs->len > p->limits->max_messages)
    return poot__serve_bad(p->param, "messages",
                           "'messages' has %zu messages; at most %zu are accepted", msgs->len,
                           p->limits->max_messages);
  poot_json *out = POOT_ARENA_NEW(p->arena, poot_json);
  if (!out) return poot__serve_oom();
  *out = *msgs;
  out->items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, msgs->len);
  if (!out->items) return poot__serve_oom();
  for (size_t i = 0; i < msgs->len; i++) {
    const poot_json *m = msgs->items[i];
    if (m->type != POOT_JSON_OBJECT)
      return poot__serve_bad(p->param, "messages", "messages[%zu] must be an object", i);
    const poot_json *role = poot_json_get(m, "role");
    if (!role || role->type != POOT_JSON_STRING)
      return poot__serve_bad(p->param, "messages", "messages[%zu].role must be a string", i);
    bool known = false;
    for (size_t k = 0; k < sizeof roles / sizeof *roles; k++)
      known = known || strcmp(role->str, roles[k]) == 0;
    if (!known)
      return poot__serve_bad(p->param, "messages",
                             "messages[%zu].role '%s' is not one of system, user, assistant, tool, "
                             "developer",
                             i, role->str);
    poot_json *copy = POOT_ARENA_NEW(p->arena, poot_json);
    if (!copy) return poot__serve_oom();
    *copy = *m;
    copy->items = POOT_ARENA_NEW_ARRAY(p->arena, poot_json *, m->len ? m->len : 1);
    if (!copy->items) return poot__serve_oom();
    bool has_content = false;
    for (size_t k = 0; k < m->len; k++) {
      copy->items[k] = m->items[k];
      if (strcmp(m->keys[k], "content") == 0 && !has_content) {
        has_content = true;
        POOT_TRY(content_text(p, m->items[k], i, &copy->items[k]));
      }
    }
    if (!has_content && !poot_json_get(m, "tool_calls"))
      return poot__serve_bad(p->param, "messages", "messages[%zu] has no 'content'", i);
    out->items[i] = copy;
  }
  p->r->messages_raw = out;
  p->r->messages = out;
  POOT_TRY(parse_call_arguments(p, out));
  return parse_tools(p, body);
}

/* -------------------------------------------------------------- prompts */

poot_status poot__serve_token_ids(poot_arena *arena, const char **out_param, const char *field,
                                  const poot_json *list, size_t index, poot__serve_prompt *out) {
  if (list->len == 0)
    return poot__serve_bad(out_param, field, "%s %zu is an empty list of token ids", field, index);
  poot_token *ids = POOT_ARENA_NEW_ARRAY(arena, poot_token, list->len);
  if (!ids) return poot__serve_oom();
  for (size_t i = 0; i < list->len; i++) {
    const poot_json *v = list->items[i];
    if (v->type != POOT_JSON_NUMBER || v->number != floor(v->number) || v->number < 0 ||
        v->number > 2147483647.0)
      return poot__serve_bad(out_param, field, "%s %zu: token ids must be integers in [0, 2^31)",
                             field, index);
    ids[i] = (poot_token)v->number;
  }
  *out = (poot__serve_prompt){.ids = ids, .n_ids = list->len};
  return NULL;
}

static poot_status parse_prompts(parse *p, const poot_json *body) {
  const poot_json *prompt = poot_json_get(body, "prompt");
  if (poot__serve_is_null(prompt))
    return poot__serve_bad(p->param, "prompt", "'prompt' is required");
  poot__serve_request *r = p->r;
  if (prompt->type == POOT_JSON_STRING) {
    r->prompts = POOT_ARENA_NEW(p->arena, poot__serve_prompt);
    if (!r->prompts) return poot__serve_oom();
    r->prompts[0] = (poot__serve_prompt){.text = prompt->str, .len = prompt->len};
    r->n_prompts = 1;
    return NULL;
  }
  if (prompt->type != POOT_JSON_ARRAY || prompt->len == 0)
    return poot__serve_bad(
        p->param, "prompt",
        "'prompt' must be a string, a list of strings, a list of token ids or a list of "
        "such lists");
  /* A list of integers is one prompt of ids. */
  if (prompt->items[0]->type == POOT_JSON_NUMBER) {
    r->prompts = POOT_ARENA_NEW(p->arena, poot__serve_prompt);
    if (!r->prompts) return poot__serve_oom();
    r->n_prompts = 1;
    return poot__serve_token_ids(p->arena, p->param, "prompt", prompt, 0, &r->prompts[0]);
  }
  if (prompt->len > p->limits->max_prompts)
    return poot__serve_bad(p->param, "prompt", "'prompt' has %zu prompts; at most %zu are accepted",
                           prompt->len, p->limits->max_prompts);
  r->prompts = POOT_ARENA_NEW_ARRAY(p->arena, poot__serve_prompt, prompt->len);
  if (!r->prompts) return poot__serve_oom();
  r->n_prompts = prompt->len;
  for (size_t i = 0; i < prompt->len; i++) {
    const poot_json *v = prompt->items[i];
    if (v->type == POOT_JSON_STRING)
      r->prompts[i] = (poot__serve_prompt){.text = v->str, .len = v->len};
    else if (v->type == POOT_JSON_ARRAY)
      POOT_TRY(poot__serve_token_ids(p->arena, p->param, "prompt", v, i, &r->prompts[i]));
    else
      return poot__serve_bad(p->param, "prompt",
                             "prompt %zu must be a string or a list of token ids", i);
  }
  return NULL;
}

/* ------------------------------------------------------------- sampling */

static poot_status parse_stop(parse *p, const poot_json *body) {
  const poot_json *stop = poot_json_get(body, "stop");
  if (poot__serve_is_null(stop)) return NULL;
  const poot_json *one[1] = {stop};
  const poot_json *const *items = one;
  size_t n = 1;
  if (stop->type == POOT_JSON_ARRAY) {
    items = (const poot_json *const *)stop->items;
    n = stop->len;
  }
  if (n > POOT_SAMPLING_MAX_STOPS)
    return poot__serve_bad(p->param, "stop", "'stop' has %zu strings; at most %d are accepted", n,
                           POOT_SAMPLING_MAX_STOPS);
  for (size_t i = 0; i < n; i++) {
    const poot_json *s = items[i];
    if (s->type != POOT_JSON_STRING)
      return poot__serve_bad(p->param, "stop", "'stop' must be a string or a list of strings");
    if (s->len == 0 || s->len > POOT_SAMPLING_MAX_STOP_LEN || memchr(s->str, 0, s->len))
      return poot__serve_bad(p->param, "stop", "stop string %zu must have 1 to %d bytes and no NUL",
                             i, POOT_SAMPLING_MAX_STOP_LEN);
    poot_status st = poot_sampling_add_stop(&p->r->sampling, s->str, s->len);
    if (st) {
      poot_status_free(st);
      return poot__serve_bad(p->param, "stop", "stop string %zu cannot be added", i);
    }
  }
  return NULL;
}

static poot_status parse_logit_bias(parse *p, const poot_json *body) {
  const poot_json *lb = poot_json_get(body, "logit_bias");
  if (poot__serve_is_null(lb)) return NULL;
  if (lb->type != POOT_JSON_OBJECT)
    return poot__serve_bad(p->param, "logit_bias",
                           "'logit_bias' must be an object of token id → bias");
  if (lb->len > POOT_SAMPLING_MAX_BIAS)
    return poot__serve_bad(p->param, "logit_bias",
                           "'logit_bias' has %zu entries; at most %d are accepted", lb->len,
                           POOT_SAMPLING_MAX_BIAS);
  poot_sampling_params *sp = &p->r->sampling;
  for (size_t i = 0; i < lb->len; i++) {
    const char *k = lb->keys[i];
    char *end = NULL;
    long id = strtol(k, &end, 10);
    if (!*k || *end || id < 0 || id > 2147483647L || lb->key_lens[i] != strlen(k))
      return poot__serve_bad(p->param, "logit_bias", "logit_bias key '%s' is not a token id", k);
    const poot_json *v = lb->items[i];
    if (v->type != POOT_JSON_NUMBER || !(v->number >= -100 && v->number <= 100))
      return poot__serve_bad(p->param, "logit_bias",
                             "logit_bias[%s] must be a number in [-100, 100]", k);
    /* OpenAI: -100 bans the token in practice */
    sp->bias[sp->n_bias++] =
        (poot_sampling_bias){.token = (int32_t)id,
                             .bias = v->number <= -100 ? -INFINITY : (float)v->number};
  }
  return NULL;
}

static poot_status parse_sampling(parse *p, const poot_json *body) {
  poot__serve_request *r = p->r;
  poot_sampling_params *sp = &r->sampling;
  poot_sampling_params_init(sp);
  /* OpenAI's defaults: temperature 1, nothing truncated, no penalty. */
  sp->temperature = 1.0f;
  sp->top_k = 0;
  sp->top_p = 1.0f;
  sp->min_p = 0.0f;
  sp->typical_p = 1.0f;
  sp->repeat_penalty = 1.0f;
  sp->presence_penalty = 0.0f;
  sp->frequency_penalty = 0.0f;
  sp->seed = POOT_SAMPLING_SEED_RANDOM;
  POOT_TRY(get_number(p, body, "temperature", 0, 2, false, &sp->temperature));
  POOT_TRY(get_number(p, body, "top_p", 0, 1, true, &sp->top_p));
  POOT_TRY(get_number(p, body, "min_p", 0, 1, false, &sp->min_p));
  POOT_TRY(get_number(p, body, "presence_penalty", -2, 2, false, &sp->presence_penalty));
  POOT_TRY(get_number(p, body, "frequency_penalty", -2, 2, false, &sp->frequency_penalty));
  POOT_TRY(get_number(p, body, "repetition_penalty", 0, 10, true, &sp->repeat_penalty));
  int64_t top_k = 0;
  POOT_TRY(get_int(p, body, "top_k", -1, POOT_SAMPLING_MAX_TOP_K, &top_k, NULL));
  sp->top_k = top_k < 0 ? 0 : (int32_t)top_k; /* vLLM: -1 is off */
  int64_t seed = 0;
  POOT_TRY(get_int(p, body, "seed", INT64_MIN, INT64_MAX, &seed, &r->seed_given));
  /* masked to 63 bits, as poot generate does, so a reported seed repeats */
  if (r->seed_given) sp->seed = (uint64_t)seed & 0x7fffffffffffffffull;
  POOT_TRY(parse_stop(p, body));
  POOT_TRY(parse_logit_bias(p, body));
  return NULL;
}

/* ------------------------------------------------------------- the rest */

static poot_status parse_logprobs(parse *p, const poot_json *body) {
  poot__serve_request *r = p->r;
  int64_t top = 0;
  if (r->kind == POOT_SERVE_CHAT) {
    POOT_TRY(get_bool(p, body, "logprobs", &r->logprobs));
    bool given = false;
    POOT_TRY(get_int(p, body, "top_logprobs", 0, POOT_SAMPLING_MAX_PROBS, &top, &given));
    if (given && !r->logprobs)
      return poot__serve_bad(p->param, "top_logprobs", "'top_logprobs' needs 'logprobs': true");
  } else {
    POOT_TRY(get_int(p, body, "logprobs", 0, POOT_SAMPLING_MAX_PROBS, &top, &r->logprobs));
  }
  r->top_logprobs = (int32_t)top;
  /* the chosen id's logprob comes with the alternatives: ask for one at least */
  if (r->logprobs) r->sampling.n_probs = top > 0 ? (int32_t)top : 1;
  return NULL;
}

static poot_status parse_response_format(parse *p, const poot_json *body) {
  const poot_json *rf = poot_json_get(body, "response_format");
  if (poot__serve_is_null(rf)) return NULL;
  const poot_json *type = poot_json_get(rf, "type");
  if (rf->type != POOT_JSON_OBJECT || !type || type->type != POOT_JSON_STRING)
    return poot__serve_bad(p->param, "response_format",
                           "'response_format' must be an object with a 'type'");
  if (strcmp(type->str, "text") == 0) return NULL;
  if (strcmp(type->str, "json_object") != 0 && strcmp(type->str, "json_schema") != 0)
    return poot__serve_bad(p->param, "response_format",
                           "response_format type '%s' is not one of text, json_object, json_schema",
                           type->str);
  if (strcmp(type->str, "json_schema") == 0) {
    const poot_json *js = poot_json_get(rf, "json_schema");
    if (!js || js->type != POOT_JSON_OBJECT || !poot_json_get(js, "schema"))
      return poot__serve_bad(
          p->param, "response_format",
          "response_format of type json_schema needs 'json_schema': {\"schema\": …}");
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_json_write(&sb, rf, false, false);
  poot_status st = poot_strbuf_status(&sb);
  if (!st) {
    p->r->response_format = poot_arena_memdup(p->arena, sb.data, sb.len + 1, 1);
    p->r->response_format_len = sb.len;
    if (!p->r->response_format) st = poot__serve_oom();
  }
  poot_strbuf_deinit(&sb);
  return st;
}

static poot_status parse_body(parse *p, const poot_json *body) {
  poot__serve_request *r = p->r;
  const poot_json *model = poot_json_get(body, "model");
  if (!poot__serve_is_null(model)) {
    if (model->type != POOT_JSON_STRING)
      return poot__serve_bad(p->param, "model", "'model' must be a string");
    r->model = model->str;
  }
  if (r->kind == POOT_SERVE_CHAT)
    POOT_TRY(parse_messages(p, body));
  else
    POOT_TRY(parse_prompts(p, body));
  r->max_tokens = -1;
  int64_t limit = p->limits->max_tokens;
  POOT_TRY(get_int(p, body, "max_tokens", 1, INT64_MAX, &r->max_tokens, NULL));
  POOT_TRY(get_int(p, body, "max_completion_tokens", 1, INT64_MAX, &r->max_tokens, NULL));
  if (r->max_tokens > limit)
    return poot__serve_bad(p->param, "max_tokens",
                           "'max_tokens' = %lld is more than this server allows (%lld)",
                           (long long)r->max_tokens, (long long)limit);
  int64_t n = 1;
  POOT_TRY(get_int(p, body, "n", 1, p->limits->max_n, &n, NULL));
  r->n = (uint32_t)n;
  if (r->n_prompts * r->n > 64)
    return poot__serve_bad(p->param, "n", "%zu prompts × n = %u choices; at most 64 are accepted",
                           r->n_prompts, r->n);
  POOT_TRY(get_bool(p, body, "stream", &r->stream));
  const poot_json *so = poot_json_get(body, "stream_options");
  if (!poot__serve_is_null(so)) {
    if (so->type != POOT_JSON_OBJECT)
      return poot__serve_bad(p->param, "stream_options", "'stream_options' must be an object");
    POOT_TRY(get_bool(p, so, "include_usage", &r->include_usage));
  }
  if (r->kind == POOT_SERVE_COMPLETION) {
    POOT_TRY(get_bool(p, body, "echo", &r->echo));
    if (r->echo) return poot__serve_bad(p->param, "echo", "'echo' is not supported yet");
  }
  POOT_TRY(parse_sampling(p, body));
  POOT_TRY(parse_logprobs(p, body));
  POOT_TRY(parse_response_format(p, body));
  if (r->response_format &&
      (r->tool_choice == POOT_TOOL_CHOICE_REQUIRED || r->tool_choice == POOT_TOOL_CHOICE_FUNCTION))
    return poot__serve_bad(
        p->param, "tool_choice",
        "tool_choice %s and 'response_format' each constrain the reply; give one",
        r->tool_choice == POOT_TOOL_CHOICE_REQUIRED ? "\"required\"" : "a function");
  poot_status st = poot_sampling_params_validate(&r->sampling, 0);
  if (st) {
    poot_status out = poot__serve_bad(p->param, NULL, "%s", poot_status_message(st));
    poot_status_free(st);
    return out;
  }
  return NULL;
}

poot_status poot__serve_parse_object(poot_arena *arena, const char *body, size_t len,
                                     const char **out_param, const poot_json **out_root) {
  *out_root = NULL;
  poot_json *root = NULL;
  poot_json_parse_options jo = {.max_depth = 64};
  poot_status st = poot_json_parse(arena, body, len, &jo, &root);
  if (st) {
    if (poot_status_code_of(st) == POOT_OUT_OF_MEMORY) return st;
    poot_status out = poot_status_make(POOT_INVALID_ARGUMENT, "the body is not valid JSON (%s)",
                                       poot_status_message(st));
    poot_status_free(st);
    return out;
  }
  if (root->type != POOT_JSON_OBJECT)
    return poot__serve_bad(out_param, NULL, "the request body must be a JSON object");
  *out_root = root;
  return NULL;
}

poot_status poot__serve_request_parse(poot_arena *arena, const char *body, size_t len,
                                      poot__serve_kind kind, const poot__serve_limits *limits,
                                      poot__serve_request *out_request, const char **out_param) {
  memset(out_request, 0, sizeof *out_request);
  *out_param = NULL;
  out_request->kind = kind;
  const poot_json *root = NULL;
  POOT_TRY(poot__serve_parse_object(arena, body, len, out_param, &root));
  parse p = {.arena = arena, .limits = limits, .r = out_request, .param = out_param};
  return parse_body(&p, root);
}
