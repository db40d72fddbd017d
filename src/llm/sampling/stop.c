/* The stop-string matcher (include/poot/llm/sampling.h): streamed text in,
 * what may be shown now out, with the tail that could still begin a stop
 * string (or an unfinished UTF-8 sequence) held back. */
#include <stdlib.h>
#include <string.h>

#include "poot/llm/sampling.h"

struct poot_stop_matcher {
  uint32_t n_stops;
  poot_sampling_stop stops[POOT_SAMPLING_MAX_STOPS];
  char *buf; /* [emitted by the last call | held back] */
  size_t cap;
  size_t emitted; /* bytes at the front that the last call emitted */
  size_t len;     /* bytes in buf */
  bool stopped;
  int32_t stop_index;
};

poot_status poot_stop_matcher_create(const poot_sampling_params *params,
                                     poot_stop_matcher **out_matcher) {
  *out_matcher = NULL;
  poot_stop_matcher *m = calloc(1, sizeof *m);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "stop matcher: no memory");
  m->n_stops =
      params->n_stops < POOT_SAMPLING_MAX_STOPS ? params->n_stops : POOT_SAMPLING_MAX_STOPS;
  memcpy(m->stops, params->stops, m->n_stops * sizeof m->stops[0]);
  m->stop_index = -1;
  *out_matcher = m;
  return POOT_OK_STATUS;
}

void poot_stop_matcher_destroy(poot_stop_matcher *m) {
  if (!m) return;
  free(m->buf);
  free(m);
}

void poot_stop_matcher_reset(poot_stop_matcher *m) {
  m->emitted = m->len = 0;
  m->stopped = false;
  m->stop_index = -1;
}

/* The earliest-ending match in buf (then the longest); false if none. */
static bool find_stop(const poot_stop_matcher *m, size_t *out_start, int32_t *out_index) {
  size_t best_end = SIZE_MAX, best_len = 0;
  for (uint32_t k = 0; k < m->n_stops; k++) {
    size_t sl = m->stops[k].len;
    for (size_t i = 0; sl > 0 && i + sl <= m->len && i + sl <= best_end; i++) {
      if (memcmp(m->buf + i, m->stops[k].text, sl) != 0) continue;
      if (i + sl < best_end || sl > best_len) {
        best_end = i + sl, best_len = sl;
        *out_index = (int32_t)k;
      }
      break;
    }
  }
  if (best_end == SIZE_MAX) return false;
  *out_start = best_end - best_len;
  return true;
}

/* The longest suffix of buf that is a proper prefix of some stop string. */
static size_t partial_tail(const poot_stop_matcher *m) {
  size_t best = 0;
  for (uint32_t k = 0; k < m->n_stops; k++) {
    size_t sl = m->stops[k].len;
    for (size_t h = (sl - 1 < m->len ? sl - 1 : m->len); h > best; h--)
      if (memcmp(m->buf + m->len - h, m->stops[k].text, h) == 0) {
        best = h;
        break;
      }
  }
  return best;
}

/* Moves a cut at e back to the start of a UTF-8 sequence that would not end
 * before it. ASCII and malformed bytes are never held. */
static size_t utf8_cut(const char *buf, size_t e) {
  if (e == 0) return 0;
  size_t s = e - 1; /* the start of the sequence holding the last byte */
  for (int back = 0; back < 3 && s > 0 && ((unsigned char)buf[s] & 0xC0) == 0x80; back++) s--;
  unsigned char lead = (unsigned char)buf[s];
  if (lead < 0xC0 || lead >= 0xF8) return e;
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  return s + need > e ? s : e;
}

static poot_status append(poot_stop_matcher *m, const char *piece, size_t len) {
  size_t held = m->len - m->emitted;
  if (held && m->emitted) memmove(m->buf, m->buf + m->emitted, held);
  m->len = held;
  m->emitted = 0;
  if (held + len > m->cap) {
    size_t cap = m->cap ? m->cap : 256;
    while (cap < held + len) cap *= 2;
    char *grown = realloc(m->buf, cap);
    if (!grown)
      return poot_status_make(POOT_OUT_OF_MEMORY, "stop matcher: no memory for %zu bytes", cap);
    m->buf = grown;
    m->cap = cap;
  }
  if (len) memcpy(m->buf + m->len, piece, len);
  m->len += len;
  return POOT_OK_STATUS;
}

poot_status poot_stop_matcher_feed(poot_stop_matcher *m, const char *piece, size_t len,
                                   poot_stop_output *out) {
  *out = (poot_stop_output){.text = "", .stop_index = m->stop_index, .stopped = m->stopped};
  if (m->stopped) return POOT_OK_STATUS;
  POOT_TRY(append(m, piece, len));
  size_t start = 0;
  int32_t index = -1;
  if (find_stop(m, &start, &index)) {
    m->stopped = true;
    m->stop_index = index;
    *out = (poot_stop_output){.text = m->buf, .len = start, .stopped = true, .stop_index = index};
    m->emitted = m->len = 0;
    return POOT_OK_STATUS;
  }
  size_t cut = utf8_cut(m->buf, m->len - partial_tail(m));
  m->emitted = cut;
  out->text = m->buf ? m->buf : "";
  out->len = cut;
  return POOT_OK_STATUS;
}

void poot_stop_matcher_finish(poot_stop_matcher *m, poot_stop_output *out) {
  *out = (poot_stop_output){.text = "", .stop_index = m->stop_index, .stopped = m->stopped};
  if (m->stopped) return;
  size_t held = m->len - m->emitted;
  out->text = m->buf ? m->buf + m->emitted : "";
  out->len = held;
  m->emitted = m->len;
}
