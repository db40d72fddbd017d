/* pen_window.h — private to src/llm/driver (and its unit test): a request's
 * penalty window kept one id at a time (pen_window.c; docs/batching.md
 * "Penalties and grammars per row").
 *
 * The window of a history prefix of n ids is the distinct ids of its last
 * `lag` ids (lag 0: all of them) and how often each occurs there: what the
 * driver's counts state holds after feeding the same ids, and what the
 * batched runner writes in a penalized row's `sampler.pen_id` /
 * `sampler.pen_n` slots. The object keeps the distinct ids and their counts
 * in two dense arrays (in no particular order), a hash of id -> index into
 * them (open addressing, linear probing, deletion by backward shift, no
 * tombstones) and, with a lag, the ring of the window's ids so that the id
 * leaving it is decremented. A step costs O(ids fed); nothing is sorted.
 *
 * Not thread safe; one per request. */
#ifndef POOT_LLM_PEN_WINDOW_H
#define POOT_LLM_PEN_WINDOW_H

#include "poot/base.h"

#define PEN_WINDOW_DIRTY 16

typedef struct pen_window {
  int64_t lag;       /* ids the window holds at most (0: every id pushed) */
  int64_t max_ids;   /* the most history ids it is ever advanced to */
  int64_t vocab;     /* ids are in [0, vocab) */
  int64_t width;     /* capacity of ids / counts: min(window length, vocab) */
  int64_t n;         /* the history prefix it stands for */
  int64_t m;         /* distinct ids in the window */
  int32_t *ids;      /* [width]: the distinct ids */
  int32_t *counts;   /* [width]: their counts (each > 0) */
  int32_t *ring;     /* lag > 0: the window's ids, oldest at `head` when full */
  int64_t len, head; /* ids in the ring; where the next one goes */
  int32_t *slots;    /* [mask + 1]: 1 + index into ids, 0 = empty */
  uint32_t mask;
  /* The entries of ids / counts changed since the last write (all of them
   * once more than PEN_WINDOW_DIRTY changed), and that write's stamp. */
  int32_t dirty[PEN_WINDOW_DIRTY];
  int32_t n_dirty;
  bool all_dirty;
  uint64_t stamp;
} pen_window;

/* What a row of the runner's lists holds: the stamp of the write that
 * filled it (0: none) and how many of its entries are not padding. */
typedef struct pen_row {
  uint64_t stamp;
  int64_t m;
} pen_row;

/* Sizes the window for a history of at most `max_ids` ids over a vocabulary
 * of `vocab` ids, keeping the last `lag` (<= 0 or >= max_ids: all). Empty
 * (n = 0). INVALID_ARGUMENT for max_ids or vocab < 1; OUT_OF_MEMORY. On
 * failure *w is left deinit-safe. */
POOT_MUST_USE poot_status poot__pen_window_init(pen_window *w, int64_t lag, int64_t max_ids,
                                                int64_t vocab);
/* Frees the arrays; safe on a zeroed or failed window. */
void poot__pen_window_deinit(pen_window *w);
/* Brings the window to the prefix h[0..n) of a history that only grows:
 * the ids from its own n on are pushed (one step: one id), or, when n went
 * back or jumped past a whole window, it is rebuilt from h (the last lag
 * ids of the prefix). INVALID_ARGUMENT for an id outside the vocabulary or
 * n past max_ids (the window is then empty, n = 0). */
POOT_MUST_USE poot_status poot__pen_window_advance(pen_window *w, const int32_t *h, int64_t n);
/* Empties the window (n = 0). */
void poot__pen_window_reset(pen_window *w);
/* Writes the window into a row's lists `ids` / `counts` (`width` >= w->m
 * entries each; padded with id -1 and count 0) and records it in *row under
 * `stamp` (non-zero, never reused). When the row still holds this window's
 * last write, only the entries changed since are written (a decode step:
 * at most three), else the whole list; padding only where the row's last
 * list was longer. NULL w: an empty window. */
void poot__pen_window_write(pen_window *w, int32_t *ids, int32_t *counts, int64_t width,
                            pen_row *row, uint64_t stamp);

#endif /* POOT_LLM_PEN_WINDOW_H */
