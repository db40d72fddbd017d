/* pen_window.c — a request's penalty window kept one id at a time
 * (pen_window.h). The batched runner used to sort each penalized row's
 * window every step (O(W log W) a row: a 4,096-id window at 64 rows was
 * milliseconds of host time a step); now a step pushes the row's new id,
 * decrements the one leaving a windowed history, and copies the dense
 * arrays out. */
#include "pen_window.h"

#include <string.h>

static inline uint32_t slot_of(const pen_window *w, int32_t id) {
  return ((uint32_t)id * 0x9E3779B1u) & w->mask;
}

void poot__pen_window_deinit(pen_window *w) {
  poot_free(w->ids);
  poot_free(w->counts);
  poot_free(w->ring);
  poot_free(w->slots);
  memset(w, 0, sizeof *w);
}

poot_status poot__pen_window_init(pen_window *w, int64_t lag, int64_t max_ids, int64_t vocab) {
  memset(w, 0, sizeof *w);
  if (max_ids < 1 || vocab < 1 || vocab > INT32_MAX)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "penalty window: %lld history ids over a vocabulary of %lld",
                            (long long)max_ids, (long long)vocab);
  w->lag = lag > 0 && lag < max_ids ? lag : 0;
  w->max_ids = max_ids;
  w->vocab = vocab;
  const int64_t len = w->lag ? w->lag : max_ids;
  w->width = len < vocab ? len : vocab;
  uint64_t n_slots = 16;
  while (n_slots < 2 * (uint64_t)w->width) n_slots *= 2; /* load at most 1/2 */
  if (n_slots > (uint64_t)1 << 31)
    return poot_status_make(POOT_INVALID_ARGUMENT, "penalty window: %lld ids is too wide",
                            (long long)w->width);
  w->mask = (uint32_t)(n_slots - 1);
  w->ids = poot_malloc((size_t)w->width * sizeof *w->ids);
  w->counts = poot_malloc((size_t)w->width * sizeof *w->counts);
  w->slots = poot_calloc((size_t)n_slots, sizeof *w->slots);
  if (w->lag) w->ring = poot_malloc((size_t)w->lag * sizeof *w->ring);
  if (!w->ids || !w->counts || !w->slots || (w->lag && !w->ring)) {
    poot__pen_window_deinit(w);
    return poot_status_make(POOT_OUT_OF_MEMORY, "penalty window: %lld ids", (long long)w->width);
  }
  return NULL;
}

void poot__pen_window_reset(pen_window *w) {
  if (w->slots) memset(w->slots, 0, ((size_t)w->mask + 1) * sizeof *w->slots);
  w->n = w->m = w->len = w->head = 0;
  w->all_dirty = true;
}

static inline void mark(pen_window *w, int64_t k) {
  if (w->all_dirty) return;
  if (w->n_dirty == PEN_WINDOW_DIRTY) {
    w->all_dirty = true;
    return;
  }
  w->dirty[w->n_dirty++] = (int32_t)k;
}

/* The slot holding id, or the empty slot where it would go. */
static uint32_t find(const pen_window *w, int32_t id) {
  uint32_t s = slot_of(w, id);
  while (w->slots[s] && w->ids[w->slots[s] - 1] != id) s = (s + 1) & w->mask;
  return s;
}

/* Empties slot s (linear probing's backward shift: every later entry of the
 * run that may move back does, so no lookup ever stops early). */
static void erase_slot(pen_window *w, uint32_t s) {
  uint32_t i = s, j = s;
  for (;;) {
    j = (j + 1) & w->mask;
    if (!w->slots[j]) break;
    const uint32_t home = slot_of(w, w->ids[w->slots[j] - 1]);
    if (((j - home) & w->mask) >= ((j - i) & w->mask)) {
      w->slots[i] = w->slots[j];
      i = j;
    }
  }
  w->slots[i] = 0;
}

static void add(pen_window *w, int32_t id) {
  const uint32_t s = find(w, id);
  if (w->slots[s]) {
    w->counts[w->slots[s] - 1]++;
    mark(w, w->slots[s] - 1);
    return;
  }
  /* m < width: a window holds at most min(its length, vocab) distinct ids */
  w->ids[w->m] = id;
  w->counts[w->m] = 1;
  mark(w, w->m);
  w->slots[s] = (int32_t)++w->m;
}

static void drop(pen_window *w, int32_t id) {
  const uint32_t s = find(w, id);
  const int32_t k = w->slots[s] - 1; /* present: it entered the window before */
  mark(w, k);
  if (--w->counts[k] > 0) return;
  erase_slot(w, s);
  const int64_t last = --w->m;
  if (k != last) { /* the last dense entry fills the hole */
    w->ids[k] = w->ids[last];
    w->counts[k] = w->counts[last];
    w->slots[find(w, w->ids[k])] = k + 1;
  }
}

static void push(pen_window *w, int32_t id) {
  if (w->lag) {
    if (w->len == w->lag) {
      drop(w, w->ring[w->head]);
    } else {
      w->len++;
    }
    w->ring[w->head] = id;
    w->head = w->head + 1 == w->lag ? 0 : w->head + 1;
  }
  add(w, id);
}

poot_status poot__pen_window_advance(pen_window *w, const int32_t *h, int64_t n) {
  if (n < 0 || n > w->max_ids) {
    poot__pen_window_reset(w);
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "penalty window: a history of %lld ids past its %lld", (long long)n,
                            (long long)w->max_ids);
  }
  if (n < w->n || (w->lag && n - w->n > w->lag)) {
    poot__pen_window_reset(w);
    w->n = w->lag && n > w->lag ? n - w->lag : 0;
  }
  for (int64_t i = w->n; i < n; i++) {
    if (h[i] < 0 || h[i] >= w->vocab) {
      poot__pen_window_reset(w);
      return poot_status_make(POOT_INVALID_ARGUMENT, "penalty window: history id %d at %lld", h[i],
                              (long long)i);
    }
    push(w, h[i]);
  }
  w->n = n;
  return NULL;
}

void poot__pen_window_write(pen_window *w, int32_t *ids, int32_t *counts, int64_t width,
                            pen_row *row, uint64_t stamp) {
  const int64_t m = w ? w->m : 0;
  if (w && !w->all_dirty && w->stamp != 0 && w->stamp == row->stamp) {
    for (int32_t i = 0; i < w->n_dirty; i++) {
      const int32_t k = w->dirty[i];
      if (k < m) ids[k] = w->ids[k], counts[k] = w->counts[k];
    }
  } else if (m > 0) {
    memcpy(ids, w->ids, (size_t)m * sizeof *ids);
    memcpy(counts, w->counts, (size_t)m * sizeof *counts);
  }
  const int64_t old = row->m < width ? row->m : width;
  if (old > m) { /* id -1 is all bits set */
    memset(ids + m, 0xff, (size_t)(old - m) * sizeof *ids);
    memset(counts + m, 0, (size_t)(old - m) * sizeof *counts);
  }
  row->m = m;
  row->stamp = w ? stamp : 0;
  if (w) {
    w->stamp = stamp;
    w->n_dirty = 0;
    w->all_dirty = false;
  }
}
