/* Private to src/llm/toolcall/: the format table, the call matchers and the
 * stream object they share. */
#ifndef POOT_LLM_TOOLCALL_IMPL_H
#define POOT_LLM_TOOLCALL_IMPL_H

#include "poot/llm/toolcall.h"

/* One row per format: what opens a call inside the content (NULL: calls
 * only at the start of the content, LLAMA3), and how ids look. */
typedef struct poot__toolcall_format_row {
  poot_toolcall_format format;
  const char *name;
  const char *open;  /* the marker that begins a call in content, or NULL */
  uint32_t id_chars; /* letters and digits after the prefix */
  const char *id_prefix;
} poot__toolcall_format_row;

typedef struct poot__toolcall_reasoning_row {
  poot_toolcall_reasoning reasoning;
  const char *name;
  const char *open;
  const char *close;
} poot__toolcall_reasoning_row;

const poot__toolcall_format_row *poot__toolcall_format_row_of(poot_toolcall_format format);
const poot__toolcall_reasoning_row *poot__toolcall_reasoning_row_of(poot_toolcall_reasoning r);

/* Writes the id of call `index` (NUL-terminated) into out (≥ 40 bytes). */
void poot__toolcall_make_id(const poot__toolcall_format_row *row, uint64_t seed, uint32_t index,
                            char *out);

/* The incremental scan of one JSON value's extent (brackets and strings
 * only; the value itself is checked by poot_json_parse once complete). */
typedef struct poot__json_extent {
  size_t begin; /* offset of the opening bracket in the held text; SIZE_MAX: not started */
  size_t pos;   /* next offset to scan */
  uint32_t depth;
  bool in_string;
  bool escape;
} poot__json_extent;

/* What a matcher decided about the held text at the start of a call. */
typedef enum poot__match_kind {
  POOT__MATCH_MORE = 0, /* cannot tell yet */
  POOT__MATCH_NO,       /* not a call */
  POOT__MATCH_YES       /* a call (or several) of `consumed` bytes */
} poot__match_kind;

/* A call found by a matcher, before it gets its id: borrowed slices. */
typedef struct poot__call_found {
  const char *name;
  size_t name_len;
  const char *arguments;
  size_t arguments_len;
} poot__call_found;

/* The matcher's scratch state, reset for each candidate call. */
typedef struct poot__matcher {
  poot__json_extent extent;
  poot_arena arena; /* the parsed JSON and the serialized arguments; reset per candidate */
  poot_strbuf text; /* serialization scratch */
  bool parsed;      /* the call's JSON was complete and valid: found is set */
  size_t json_end;  /* where that JSON ended */
  poot__call_found *found;
  size_t found_count;
} poot__matcher;

/* Decides whether `text` (len bytes, starting where a call may start: the
 * format's open marker, or for LLAMA3 the content's first bytes) holds a
 * complete call. `final`: no more text will come. On YES, *out_consumed is
 * the call's length and m->found the calls (borrowed from m until the next
 * reset). A status only for OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot__toolcall_match(poot__matcher *m, poot_toolcall_format format,
                                               const char *text, size_t len, bool final,
                                               poot__match_kind *out_kind, size_t *out_consumed);
void poot__matcher_init(poot__matcher *m);
void poot__matcher_reset(poot__matcher *m);
void poot__matcher_deinit(poot__matcher *m);

static inline bool poot__is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Length of the longest proper prefix of `marker` that `text` (len bytes)
 * ends with: the bytes to hold back. */
size_t poot__marker_tail(const char *text, size_t len, const char *marker);
/* Offset of the first `marker` in text, or SIZE_MAX. */
size_t poot__marker_find(const char *text, size_t len, const char *marker);

#endif /* POOT_LLM_TOOLCALL_IMPL_H */
