/* The call matchers: given the held text where a call may begin, decide
 * whether it is a complete, valid call of the format, not one, or cannot be
 * told yet. Each decision holds for any text that may follow, so a stream's
 * result never depends on where its pieces were split. */
#include <string.h>

#include "toolcall_impl.h"

#define POOT__PYTHON_TAG "<|python_tag|>"
#define POOT__MAX_JSON_DEPTH 512
#define POOT__MAX_NAME 256

void poot__matcher_init(poot__matcher *m) {
  memset(m, 0, sizeof *m);
  poot_arena_init(&m->arena, 4096);
  poot_strbuf_init(&m->text);
  m->extent.begin = SIZE_MAX;
}

void poot__matcher_reset(poot__matcher *m) {
  poot_arena_deinit(&m->arena);
  poot_arena_init(&m->arena, 4096);
  poot_strbuf_clear(&m->text);
  memset(&m->extent, 0, sizeof m->extent);
  m->extent.begin = SIZE_MAX;
  m->parsed = false;
  m->json_end = 0;
  m->found = NULL;
  m->found_count = 0;
}

void poot__matcher_deinit(poot__matcher *m) {
  poot_arena_deinit(&m->arena);
  poot_strbuf_deinit(&m->text);
}

static size_t poot__skip_ws(const char *text, size_t len, size_t pos) {
  while (pos < len && poot__is_ws(text[pos])) pos++;
  return pos;
}

/* Whether text[pos..len) begins with `marker`: YES (and *out_end past it),
 * MORE when the text ends inside a prefix of it, NO otherwise. */
static poot__match_kind poot__expect(const char *text, size_t len, size_t pos, const char *marker,
                                     size_t *out_end) {
  size_t m = strlen(marker);
  size_t have = len - pos < m ? len - pos : m;
  if (memcmp(text + pos, marker, have) != 0) return POOT__MATCH_NO;
  if (have < m) return POOT__MATCH_MORE;
  *out_end = pos + m;
  return POOT__MATCH_YES;
}

/* Scans on from e->pos for the end of the bracketed value that starts at
 * e->begin: YES with *out_end just past it, MORE when the text ends first, NO
 * when it nests deeper than poot_json_parse would accept. */
static poot__match_kind poot__extent_scan(poot__json_extent *e, const char *text, size_t len,
                                          size_t *out_end) {
  for (; e->pos < len; e->pos++) {
    char c = text[e->pos];
    if (e->in_string) {
      if (e->escape)
        e->escape = false;
      else if (c == '\\')
        e->escape = true;
      else if (c == '"')
        e->in_string = false;
      continue;
    }
    if (c == '"') {
      e->in_string = true;
    } else if (c == '{' || c == '[') {
      if (++e->depth > POOT__MAX_JSON_DEPTH) return POOT__MATCH_NO;
    } else if (c == '}' || c == ']') {
      if (e->depth == 0 || --e->depth == 0) {
        *out_end = ++e->pos;
        return POOT__MATCH_YES;
      }
    }
  }
  return POOT__MATCH_MORE;
}

/* The extent of the JSON value that must begin at `pos` with one of `opens`. */
static poot__match_kind poot__json_at(poot__matcher *m, const char *text, size_t len, size_t pos,
                                      const char *opens, size_t *out_end) {
  if (m->extent.begin == SIZE_MAX) {
    if (pos >= len) return POOT__MATCH_MORE;
    if (!strchr(opens, text[pos]) || text[pos] == '\0') return POOT__MATCH_NO;
    m->extent.begin = m->extent.pos = pos;
  }
  return poot__extent_scan(&m->extent, text, len, out_end);
}

static poot_status poot__oom(void) {
  return poot_status_make(POOT_OUT_OF_MEMORY, "tool-call parser: out of memory");
}

/* Serializes an arguments value compactly into m's arena: an object, or a
 * string holding one (some models quote their arguments); absent or null is
 * {}. *ok false when it is something else. */
static poot_status poot__arguments(poot__matcher *m, const poot_json *args, poot__call_found *out,
                                   bool *ok) {
  *ok = false;
  if (args && args->type == POOT_JSON_STRING) {
    poot_json *inner = NULL;
    poot_status st = poot_json_parse(&m->arena, args->str, args->len, NULL, &inner);
    if (st) {
      if (poot_status_code_of(st) == POOT_OUT_OF_MEMORY) return st;
      poot_status_free(st);
      return NULL;
    }
    args = inner;
  }
  if (args && args->type != POOT_JSON_OBJECT && args->type != POOT_JSON_NULL) return NULL;
  poot_strbuf_clear(&m->text);
  if (args && args->type == POOT_JSON_OBJECT)
    poot_json_write(&m->text, args, false, false);
  else
    poot_strbuf_puts(&m->text, "{}");
  POOT_TRY(poot_strbuf_status(&m->text));
  out->arguments = poot_arena_strndup(&m->arena, m->text.data, m->text.len);
  if (!out->arguments) return poot__oom();
  out->arguments_len = m->text.len;
  *ok = true;
  return NULL;
}

/* A function name: 1 to 256 bytes, no control characters (it becomes a
 * NUL-terminated string). */
static bool poot__name_ok(const char *s, size_t n) {
  if (n == 0 || n > POOT__MAX_NAME) return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20) return false;
  return true;
}

/* {"name": "...", "arguments" (or "parameters"): {...}} → a found call.
 * need_args: the object must have one of the two (LLAMA3's calls carry no
 * marker, so a reply {"name": "Ada"} is content). */
static poot_status poot__call_object(poot__matcher *m, const poot_json *v, bool need_args,
                                     poot__call_found *out, bool *ok) {
  *ok = false;
  if (!v || v->type != POOT_JSON_OBJECT) return NULL;
  const poot_json *name = poot_json_get(v, "name");
  if (!name || name->type != POOT_JSON_STRING || !poot__name_ok(name->str, name->len)) return NULL;
  const poot_json *args = poot_json_get(v, "arguments");
  if (!args) args = poot_json_get(v, "parameters");
  if (!args && need_args) return NULL;
  POOT_TRY(poot__arguments(m, args, out, ok));
  if (!*ok) return NULL;
  out->name = poot_arena_strndup(&m->arena, name->str, name->len);
  if (!out->name) return poot__oom();
  out->name_len = name->len;
  return NULL;
}

/* Parses text[begin..end); *out NULL when it is not JSON. */
static poot_status poot__parse(poot__matcher *m, const char *text, size_t begin, size_t end,
                               poot_json **out) {
  poot_status st = poot_json_parse(&m->arena, text + begin, end - begin, NULL, out);
  if (st && poot_status_code_of(st) == POOT_OUT_OF_MEMORY) return st;
  poot_status_free(st);
  if (st) *out = NULL;
  return NULL;
}

/* The calls of one JSON value: an object is one call; when `list` an array
 * of call objects is several (at least one). *ok false if any is not a call. */
static poot_status poot__calls_of(poot__matcher *m, const poot_json *v, bool list, bool need_args,
                                  bool *ok) {
  *ok = false;
  if (!v) return NULL;
  bool is_list = list && v->type == POOT_JSON_ARRAY;
  size_t n = is_list ? v->len : 1;
  if (n == 0) return NULL;
  m->found = POOT_ARENA_NEW_ARRAY(&m->arena, poot__call_found, n);
  if (!m->found) return poot__oom();
  for (size_t i = 0; i < n; i++) {
    POOT_TRY(poot__call_object(m, is_list ? v->items[i] : v, need_args, &m->found[i], ok));
    if (!*ok) return NULL;
  }
  m->found_count = n;
  return NULL;
}

/* LLAMA3: ws [<|python_tag|> ws] {call object}. */
static poot_status poot__match_llama3(poot__matcher *m, const char *text, size_t len,
                                      poot__match_kind *kind, size_t *consumed) {
  if (!m->parsed) {
    size_t pos = poot__skip_ws(text, len, 0);
    if (m->extent.begin == SIZE_MAX && pos < len && text[pos] == '<') {
      *kind = poot__expect(text, len, pos, POOT__PYTHON_TAG, &pos);
      if (*kind != POOT__MATCH_YES) return NULL;
      pos = poot__skip_ws(text, len, pos);
    }
    size_t end = 0;
    *kind = poot__json_at(m, text, len, pos, "{", &end);
    if (*kind != POOT__MATCH_YES) return NULL;
    poot_json *v = NULL;
    POOT_TRY(poot__parse(m, text, m->extent.begin, end, &v));
    bool ok = false;
    POOT_TRY(poot__calls_of(m, v, false, true, &ok));
    if (!ok) {
      *kind = POOT__MATCH_NO;
      return NULL;
    }
    m->parsed = true;
    m->json_end = end;
  }
  *kind = POOT__MATCH_YES;
  *consumed = m->json_end;
  return NULL;
}

/* HERMES: <tool_call> ws {call object} ws </tool_call>. */
static poot_status poot__match_hermes(poot__matcher *m, const char *text, size_t len,
                                      poot__match_kind *kind, size_t *consumed) {
  if (!m->parsed) {
    size_t pos = poot__skip_ws(text, len, strlen("<tool_call>"));
    size_t end = 0;
    *kind = poot__json_at(m, text, len, pos, "{", &end);
    if (*kind != POOT__MATCH_YES) return NULL;
    poot_json *v = NULL;
    POOT_TRY(poot__parse(m, text, m->extent.begin, end, &v));
    bool ok = false;
    POOT_TRY(poot__calls_of(m, v, false, false, &ok));
    if (!ok) {
      *kind = POOT__MATCH_NO;
      return NULL;
    }
    m->parsed = true;
    m->json_end = end;
  }
  size_t pos = poot__skip_ws(text, len, m->json_end);
  if (pos == len) {
    *kind = POOT__MATCH_MORE;
    return NULL;
  }
  *kind = poot__expect(text, len, pos, "</tool_call>", consumed);
  return NULL;
}

static bool poot__mistral_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

/* MISTRAL, the newer form: name [CALL_ID]id [ARGS] {arguments}. pos is
 * where the name begins. */
static poot_status poot__match_mistral_named(poot__matcher *m, const char *text, size_t len,
                                             size_t pos, poot__match_kind *kind) {
  size_t name_begin = pos;
  while (pos < len && poot__mistral_name_char(text[pos]) && pos - name_begin <= POOT__MAX_NAME)
    pos++;
  size_t name_len = pos - name_begin;
  *kind = POOT__MATCH_NO;
  if (name_len > POOT__MAX_NAME) return NULL;
  if (m->extent.begin == SIZE_MAX) {
    size_t after = 0;
    *kind = poot__expect(text, len, pos, "[CALL_ID]", &after);
    if (*kind == POOT__MATCH_MORE) return NULL;
    if (*kind == POOT__MATCH_YES) {
      /* The model's own id is skipped: ids come from the request's seed. */
      pos = after;
      while (pos < len && poot__mistral_name_char(text[pos]) && pos - after <= 64) pos++;
      *kind = POOT__MATCH_NO;
      if (pos - after > 64) return NULL;
    }
    *kind = poot__expect(text, len, pos, "[ARGS]", &pos);
    if (*kind != POOT__MATCH_YES) return NULL;
    pos = poot__skip_ws(text, len, pos);
  }
  size_t end = 0;
  *kind = poot__json_at(m, text, len, pos, "{", &end);
  if (*kind != POOT__MATCH_YES) return NULL;
  poot_json *v = NULL;
  POOT_TRY(poot__parse(m, text, m->extent.begin, end, &v));
  m->found = POOT_ARENA_NEW(&m->arena, poot__call_found);
  if (!m->found) return poot__oom();
  bool ok = false;
  if (v && v->type == POOT_JSON_OBJECT) POOT_TRY(poot__arguments(m, v, m->found, &ok));
  if (!ok) {
    *kind = POOT__MATCH_NO;
    return NULL;
  }
  m->found->name = poot_arena_strndup(&m->arena, text + name_begin, name_len);
  if (!m->found->name) return poot__oom();
  m->found->name_len = name_len;
  m->found_count = 1;
  m->parsed = true;
  m->json_end = end;
  return NULL;
}

/* MISTRAL: [TOOL_CALLS] ws ([call objects…] | {call object} | name[ARGS]{…}). */
static poot_status poot__match_mistral(poot__matcher *m, const char *text, size_t len,
                                       poot__match_kind *kind, size_t *consumed) {
  size_t pos = poot__skip_ws(text, len, strlen("[TOOL_CALLS]"));
  if (!m->parsed) {
    *kind = POOT__MATCH_MORE;
    if (pos == len) return NULL;
    if (text[pos] == '[' || text[pos] == '{') {
      size_t end = 0;
      *kind = poot__json_at(m, text, len, pos, "[{", &end);
      if (*kind != POOT__MATCH_YES) return NULL;
      poot_json *v = NULL;
      POOT_TRY(poot__parse(m, text, m->extent.begin, end, &v));
      bool ok = false;
      POOT_TRY(poot__calls_of(m, v, true, false, &ok));
      *kind = POOT__MATCH_NO;
      if (!ok) return NULL;
      m->parsed = true;
      m->json_end = end;
    } else if (poot__mistral_name_char(text[pos])) {
      POOT_TRY(poot__match_mistral_named(m, text, len, pos, kind));
      if (!m->parsed) return NULL;
    } else {
      *kind = POOT__MATCH_NO;
      return NULL;
    }
  }
  *kind = POOT__MATCH_YES;
  *consumed = m->json_end;
  return NULL;
}

poot_status poot__toolcall_match(poot__matcher *m, poot_toolcall_format format, const char *text,
                                 size_t len, bool final, poot__match_kind *out_kind,
                                 size_t *out_consumed) {
  *out_kind = POOT__MATCH_NO;
  *out_consumed = 0;
  poot_status st = NULL;
  switch (format) {
    case POOT_TOOLCALL_FORMAT_LLAMA3:
      st = poot__match_llama3(m, text, len, out_kind, out_consumed);
      break;
    case POOT_TOOLCALL_FORMAT_HERMES:
      st = poot__match_hermes(m, text, len, out_kind, out_consumed);
      break;
    case POOT_TOOLCALL_FORMAT_MISTRAL:
      st = poot__match_mistral(m, text, len, out_kind, out_consumed);
      break;
    default:
      *out_kind = POOT__MATCH_NO;
      break;
  }
  if (st) {
    *out_kind = POOT__MATCH_NO;
    return st;
  }
  if (*out_kind == POOT__MATCH_MORE && final) *out_kind = POOT__MATCH_NO;
  return NULL;
}
