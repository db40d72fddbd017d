/* driver_impl.h — private to src/llm/driver: the driver object and the
 * entry helpers its files share (driver.c: creation, entries and feeding;
 * driver_generate.c: the generation loops). */
#ifndef POOT_LLM_DRIVER_IMPL_H
#define POOT_LLM_DRIVER_IMPL_H

#include "poot/llm/driver.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)
#define OOM(what) poot_status_make(POOT_OUT_OF_MEMORY, "driver: %s", what)

#define DEFAULT_CHUNK 16

/* One entry: a step shape traced on first use. */
typedef struct driver_entry {
  int64_t tokens; /* T */
  bool logits;    /* no greedy suffix: the step reads back f32[1, vocab] */
  bool added;
  uint32_t id;
  poot_exec_slot token, pos; /* the entry's slots */
} driver_entry;

struct poot_driver {
  poot_executor *ex;
  poot_model *model;
  int64_t cap, chunk, pos;
  char *program;
  bool eager;
  poot_exec_dispatch_fn hook;
  void *hook_ctx;
  driver_entry decode, prefill;
  driver_entry decode_logits, prefill_logits; /* added only by feed_logits */
  /* The whole sequence in one pass, once it grows past the model's restart
   * length (poot_model_rope_restart_length); T is that sequence's length. */
  driver_entry restart, restart_logits;
  int64_t restart_at;    /* 0: never */
  int64_t whole_pass_at; /* a feed past this length runs in one pass (0: never) */
  poot_token *history; /* the tokens at positions [0, pos) */
  /* driver_encode.c: the encode and input-row entries (NULL until used). */
  struct poot__driver_encode *enc;
};

/* Adds entry `e` (trace, compile, capture) unless it was added. */
POOT_MUST_USE poot_status poot__driver_ensure_entry(poot_driver *d, driver_entry *e);

/* driver_encode.c: removes its entries and frees d->enc (destroy calls it
 * before unloading). */
void poot__driver_encode_release(poot_driver *d);

/* driver_encode.c: resets and feeds `prompt` from position 0 with the rows
 * of `inputs` (checked as poot_driver_generate_with_inputs says; copied and
 * kept for poot__driver_feed_next until poot__driver_inputs_clear or the next
 * call) and returns the greedy choice after it. */
POOT_MUST_USE poot_status poot__driver_feed_inputs(poot_driver *d, const poot_token *prompt,
                                                   size_t count, const poot_driver_input *inputs,
                                                   size_t n_inputs, poot_token *out_next,
                                                   bool *out_nonfinite);

/* driver_encode.c: poot_driver_feed of one generated id after
 * poot__driver_feed_inputs; a sequence recomputed at the rope restart
 * length keeps the prompt's rows. */
POOT_MUST_USE poot_status poot__driver_feed_next(poot_driver *d, poot_token id,
                                                 poot_token *out_next, bool *out_nonfinite);

/* driver_encode.c: forgets the rows poot__driver_feed_inputs kept (a
 * generation's end). */
void poot__driver_inputs_clear(poot_driver *d);

#endif /* POOT_LLM_DRIVER_IMPL_H */
