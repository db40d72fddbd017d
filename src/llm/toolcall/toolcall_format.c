/* The tool-call formats and reasoning markers (one row each), detection from
 * a chat template, names, and call ids. */
#include <string.h>

#include "toolcall_impl.h"

static const poot__toolcall_format_row poot__formats[POOT_TOOLCALL_FORMAT_COUNT] = {
    {POOT_TOOLCALL_FORMAT_NONE, "none", NULL, 24, "call_"},
    {POOT_TOOLCALL_FORMAT_LLAMA3, "llama3", NULL, 24, "call_"},
    {POOT_TOOLCALL_FORMAT_HERMES, "hermes", "<tool_call>", 24, "call_"},
    /* Mistral's templates reject a call id that is not 9 letters and digits
     * when the conversation comes back with the call in it. */
    {POOT_TOOLCALL_FORMAT_MISTRAL, "mistral", "[TOOL_CALLS]", 9, ""},
};

static const poot__toolcall_reasoning_row poot__reasonings[POOT_TOOLCALL_REASONING_COUNT] = {
    {POOT_TOOLCALL_REASONING_NONE, "none", NULL, NULL},
    {POOT_TOOLCALL_REASONING_THINK, "think", "<think>", "</think>"},
    {POOT_TOOLCALL_REASONING_MISTRAL_THINK, "mistral", "[THINK]", "[/THINK]"},
};

const poot__toolcall_format_row *poot__toolcall_format_row_of(poot_toolcall_format format) {
  if ((unsigned)format >= POOT_TOOLCALL_FORMAT_COUNT) return NULL;
  return &poot__formats[format];
}

const poot__toolcall_reasoning_row *poot__toolcall_reasoning_row_of(poot_toolcall_reasoning r) {
  if ((unsigned)r >= POOT_TOOLCALL_REASONING_COUNT) return NULL;
  return &poot__reasonings[r];
}

void poot_toolcall_params_default(poot_toolcall_params *params) {
  memset(params, 0, sizeof *params);
  params->format = POOT_TOOLCALL_FORMAT_NONE;
  params->reasoning = POOT_TOOLCALL_REASONING_NONE;
  params->max_held = (size_t)1 << 20;
  params->max_calls = 128;
}

size_t poot__marker_find(const char *text, size_t len, const char *marker) {
  size_t m = strlen(marker);
  if (m == 0 || len < m) return SIZE_MAX;
  for (size_t i = 0; i + m <= len; i++) {
    const char *hit = memchr(text + i, marker[0], len - m + 1 - i);
    if (!hit) return SIZE_MAX;
    i = (size_t)(hit - text);
    if (memcmp(hit, marker, m) == 0) return i;
  }
  return SIZE_MAX;
}

size_t poot__marker_tail(const char *text, size_t len, const char *marker) {
  size_t m = strlen(marker);
  size_t k = m - 1 < len ? m - 1 : len;
  for (; k > 0; k--)
    if (memcmp(text + len - k, marker, k) == 0) return k;
  return 0;
}

static bool poot__has(const char *text, size_t len, const char *what) {
  return poot__marker_find(text, len, what) != SIZE_MAX;
}

/* The markers each template renders an assistant's calls with. A template
 * that names <tool_call> but fills it with another syntax (XML arguments,
 * <function=…>, a <tool_calls> list) is not HERMES. */
static poot_toolcall_format poot__detect_format(const char *t, size_t n) {
  if (poot__has(t, n, "[TOOL_CALLS]")) return POOT_TOOLCALL_FORMAT_MISTRAL;
  if (poot__has(t, n, "<tool_call>") && poot__has(t, n, "\"arguments") &&
      !poot__has(t, n, "<function=") && !poot__has(t, n, "<arg_key>") &&
      !poot__has(t, n, "<tool_calls>"))
    return POOT_TOOLCALL_FORMAT_HERMES;
  if (poot__has(t, n, "<|start_header_id|>") && poot__has(t, n, "\"parameters\""))
    return POOT_TOOLCALL_FORMAT_LLAMA3;
  return POOT_TOOLCALL_FORMAT_NONE;
}

void poot_toolcall_params_detect(poot_toolcall_params *params, const char *template_text,
                                 size_t len) {
  if (!template_text) len = 0;
  params->format = poot__detect_format(template_text, len);
  params->reasoning = POOT_TOOLCALL_REASONING_NONE;
  for (int r = POOT_TOOLCALL_REASONING_NONE + 1; r < POOT_TOOLCALL_REASONING_COUNT; r++)
    if (poot__has(template_text, len, poot__reasonings[r].open)) {
      params->reasoning = (poot_toolcall_reasoning)r;
      break;
    }
}

bool poot_toolcall_prompt_opens_reasoning(const poot_toolcall_params *params, const char *prompt,
                                          size_t len) {
  const poot__toolcall_reasoning_row *row = poot__toolcall_reasoning_row_of(params->reasoning);
  if (!row || !row->open || !prompt) return false;
  while (len > 0 && poot__is_ws(prompt[len - 1])) len--;
  size_t m = strlen(row->open);
  return len >= m && memcmp(prompt + len - m, row->open, m) == 0;
}

const char *poot_toolcall_format_name(poot_toolcall_format format) {
  const poot__toolcall_format_row *row = poot__toolcall_format_row_of(format);
  return row ? row->name : "?";
}

const char *poot_toolcall_reasoning_name(poot_toolcall_reasoning reasoning) {
  const poot__toolcall_reasoning_row *row = poot__toolcall_reasoning_row_of(reasoning);
  return row ? row->name : "?";
}

poot_status poot_toolcall_format_from_name(const char *name, poot_toolcall_format *out_format) {
  *out_format = POOT_TOOLCALL_FORMAT_NONE;
  if (!name) return poot_status_make(POOT_INVALID_ARGUMENT, "tool-call format: no name given");
  if (strcmp(name, "qwen") == 0) name = "hermes";
  for (int f = 0; f < POOT_TOOLCALL_FORMAT_COUNT; f++)
    if (strcmp(name, poot__formats[f].name) == 0) {
      *out_format = (poot_toolcall_format)f;
      return NULL;
    }
  return poot_status_make(POOT_INVALID_ARGUMENT,
                          "unknown tool-call format '%s' (known: none, llama3, hermes or qwen, "
                          "mistral)",
                          name);
}

static uint64_t poot__splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void poot__toolcall_make_id(const poot__toolcall_format_row *row, uint64_t seed, uint32_t index,
                            char *out) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  uint64_t state = poot_hash64_mix(seed, index);
  size_t n = strlen(row->id_prefix);
  memcpy(out, row->id_prefix, n);
  uint64_t bits = 0;
  uint32_t left = 0;
  for (uint32_t i = 0; i < row->id_chars; i++) {
    if (left == 0) {
      bits = poot__splitmix64(&state);
      left = 10; /* 10 draws of 6 bits from 64 */
    }
    out[n++] = alphabet[(bits & 63) % 62];
    bits >>= 6;
    left--;
  }
  out[n] = '\0';
}
