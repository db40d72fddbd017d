/* driver_embed.c — encoders through the driver (poot/llm/driver.h,
 * "Encoders"; docs/encoders.md): batches of sequences of different lengths
 * in one step, one entry per (B, T, output form), the lengths and token
 * types bound as slots. The entries have no state, so they never touch the
 * decoder sequence of the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/driver.h"

#include "driver_impl.h"

#define T_STEP 16 /* sequence lengths are padded to a multiple of this */

typedef struct embed_entry {
  bool added;
  uint32_t id;
  int64_t B, T;
  char form[32]; /* "scores", "mean+norm", "cls", … */
  poot_exec_slot token, len, types;
  uint64_t used;
} embed_entry;

struct poot__driver_embed {
  embed_entry e[POOT_DRIVER_EMBED_ENTRIES];
  size_t n;
  uint64_t clock;
};

static void drop(poot_driver *d, embed_entry *e) {
  if (e->added) poot_status_free(poot_exec_remove_entry(d->ex, e->id));
  e->added = false;
}

void poot__driver_embed_release(poot_driver *d) {
  if (!d->emb) return;
  for (size_t i = 0; i < d->emb->n; i++) drop(d, &d->emb->e[i]);
  poot_free(d->emb);
  d->emb = NULL;
}

static poot_model_step step_of(const poot_driver_embed_options *o, int64_t B, int64_t T) {
  poot_model_step s = {.batch = B,
                       .tokens = T,
                       .cap = T,
                       .output = o->scores ? POOT_MODEL_OUTPUT_SCORES : POOT_MODEL_OUTPUT_EMBEDDING,
                       .pooling = o->pooling,
                       .normalize = o->normalize};
  return s;
}

poot_status poot__driver_embed_weights_graph(poot_driver *d, poot_graph **out_graph) {
  *out_graph = NULL;
  const poot_model_config *c = poot_model_get_config(d->model);
  poot_driver_embed_options o = poot_driver_embed_options_default();
  o.scores = c->n_labels > 0;
  poot_model_step s = step_of(&o, 1, 1);
  poot_model_trace_options to = poot_model_trace_options_for(d->model);
  return poot_model_trace(c, &s, &to, out_graph);
}

/* The output form an entry is keyed by: what the step computes after the
 * encoder. */
static void form_of(const poot_model_config *c, const poot_driver_embed_options *o, char *buf,
                    size_t n) {
  if (o->scores) {
    snprintf(buf, n, "scores");
    return;
  }
  poot_model_pooling p = o->pooling != POOT_MODEL_POOLING_DEFAULT ? o->pooling : c->pooling;
  if (p == POOT_MODEL_POOLING_DEFAULT) p = POOT_MODEL_POOLING_MEAN;
  bool norm = o->normalize > 0 || (o->normalize == 0 && c->normalize);
  snprintf(buf, n, "%s%s", poot_model_pooling_name(p), norm ? "+norm" : "");
}

static poot_status entry_for(poot_driver *d, const poot_driver_embed_options *o, int64_t B,
                             int64_t T, embed_entry **out) {
  *out = NULL;
  if (!d->emb) {
    d->emb = poot_calloc(1, sizeof *d->emb);
    if (!d->emb) return OOM("encoder entries");
  }
  struct poot__driver_embed *m = d->emb;
  char form[32];
  form_of(poot_model_get_config(d->model), o, form, sizeof form);
  embed_entry *slot = NULL;
  for (size_t i = 0; i < m->n; i++) {
    embed_entry *x = &m->e[i];
    if (x->added && x->B == B && x->T == T && strcmp(x->form, form) == 0) {
      x->used = ++m->clock;
      *out = x;
      return NULL;
    }
    if (!x->added && !slot) slot = x;
  }
  if (!slot && m->n < POOT_DRIVER_EMBED_ENTRIES) slot = &m->e[m->n++];
  if (!slot) {
    slot = &m->e[0];
    for (size_t i = 1; i < m->n; i++)
      if (m->e[i].used < slot->used) slot = &m->e[i];
    drop(d, slot);
  }
  poot_model_step s = step_of(o, B, T);
  poot_model_trace_options to = poot_model_trace_options_for(d->model);
  poot_graph *g = NULL;
  POOT_TRY(poot_model_trace(poot_model_get_config(d->model), &s, &to, &g));
  char shape[64];
  snprintf(shape, sizeof shape, "embed:%lld:%lld", (long long)B, (long long)T);
  poot_exec_entry_key key = {
      .program = d->program,
      .step_shape = shape,
      .sampling = form,
      .bound_inputs = "token," POOT_MODEL_SLOT_SEQ_LEN "," POOT_MODEL_SLOT_TOKEN_TYPE};
  uint32_t id = UINT32_MAX;
  poot_status st = poot_exec_add_entry(d->ex, &key, g, &id, NULL);
  poot_graph_destroy(g);
  POOT_TRY(st);
  st = poot_exec_entry_slot(d->ex, id, "token", &slot->token);
  if (!st) st = poot_exec_entry_slot(d->ex, id, POOT_MODEL_SLOT_SEQ_LEN, &slot->len);
  if (!st) st = poot_exec_entry_slot(d->ex, id, POOT_MODEL_SLOT_TOKEN_TYPE, &slot->types);
  if (st) {
    poot_status_free(poot_exec_remove_entry(d->ex, id));
    return st;
  }
  slot->added = true;
  slot->id = id;
  slot->B = B;
  slot->T = T;
  snprintf(slot->form, sizeof slot->form, "%s", form);
  slot->used = ++m->clock;
  *out = slot;
  return NULL;
}

size_t poot_driver_embed_width(const poot_driver *d, const poot_driver_embed_options *o) {
  if (!d) return 0;
  const poot_model_config *c = poot_model_get_config(d->model);
  if (!poot_model_is_encoder(c)) return 0;
  if (o && o->scores) return c->n_labels > 0 ? (size_t)c->n_labels : 0;
  return (size_t)c->hidden_size;
}

/* A sequence's place in the length order: longer first, then input order. */
typedef struct by_length {
  size_t count, index;
} by_length;

static int by_length_desc(const void *a, const void *b) {
  const by_length *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int64_t pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

/* Runs seqs[0..n) (n ≤ B of the entry) as one step; rows into out. */
static poot_status run_chunk(poot_driver *d, const poot_driver_sequence *seqs, size_t n,
                             const poot_driver_embed_options *o, size_t max_batch, size_t width,
                             float *out) {
  const int64_t P = poot_model_get_config(d->model)->context_length;
  size_t longest = 1;
  for (size_t i = 0; i < n; i++)
    if (seqs[i].count > longest) longest = seqs[i].count;
  int64_t T = ((int64_t)longest + T_STEP - 1) / T_STEP * T_STEP;
  if (T > P) T = P;
  int64_t B = pow2_at_least((int64_t)n);
  if (B > (int64_t)max_batch) B = (int64_t)max_batch;
  embed_entry *e = NULL;
  POOT_TRY(entry_for(d, o, B, T, &e));
  size_t cells = (size_t)(B * T);
  int32_t *tok = poot_calloc(2 * cells + (size_t)B, sizeof *tok);
  float *res = poot_malloc((size_t)B * width * sizeof *res);
  if (!tok || !res) {
    poot_free(tok);
    poot_free(res);
    return OOM("encoder step inputs");
  }
  int32_t *types = tok + cells, *len = types + cells;
  for (int64_t b = 0; b < B; b++) {
    /* Rows past the batch hold one padding token (length 1, id 0, type 0):
     * every row needs a real key, and their results are dropped. */
    len[b] = 1;
    if ((size_t)b >= n) continue;
    const poot_driver_sequence *q = &seqs[b];
    len[b] = (int32_t)q->count;
    for (size_t t = 0; t < q->count; t++) {
      tok[b * T + (int64_t)t] = (int32_t)q->ids[t];
      types[b * T + (int64_t)t] = q->types ? q->types[t] : 0;
    }
  }
  int64_t bt[2] = {B, T};
  poot_tensor tt = {.type = poot_type_make(POOT_DTYPE_I32, 2, bt), .data = tok, .size = cells * 4};
  poot_tensor yt = {
      .type = poot_type_make(POOT_DTYPE_I32, 2, bt), .data = types, .size = cells * 4};
  poot_tensor lt = {
      .type = poot_type_make(POOT_DTYPE_I32, 1, &B), .data = len, .size = (size_t)B * 4};
  poot_exec_slot_value in[3] = {{e->token, &tt}, {e->types, &yt}, {e->len, &lt}};
  poot_exec_step_io io = {.input_count = 3,
                          .inputs = in,
                          .output = res,
                          .output_size = (size_t)B * width * sizeof *res,
                          .eager = d->eager,
                          .on_dispatch = d->hook,
                          .on_dispatch_ctx = d->hook_ctx};
  poot_status st = poot_exec_step(d->ex, e->id, &io);
  if (!st) memcpy(out, res, n * width * sizeof *out);
  poot_free(tok);
  poot_free(res);
  return st;
}

poot_status poot_driver_embed(poot_driver *d, const poot_driver_sequence *seqs, size_t n,
                              const poot_driver_embed_options *options, float *out) {
  if (!d) return BAD("driver: embed needs a driver");
  poot_driver_embed_options dflt = poot_driver_embed_options_default();
  const poot_driver_embed_options *o = options ? options : &dflt;
  const poot_model_config *c = poot_model_get_config(d->model);
  if (!poot_model_is_encoder(c))
    return poot_status_make(POOT_UNSUPPORTED,
                            "driver: %s is a decoder; embeddings and reranking need an encoder "
                            "model (BERT)",
                            poot_model_family_name(c->family));
  if (o->scores && c->n_labels < 1)
    return poot_status_make(POOT_UNSUPPORTED,
                            "driver: this model has no classification head: it embeds, it "
                            "cannot rerank (a cross-encoder is a BertForSequenceClassification)");
  size_t max_batch = o->max_batch ? o->max_batch : 32;
  if (max_batch & (max_batch - 1) || max_batch > 4096)
    return BAD("driver: embed max_batch %zu is not a power of two up to 4096", max_batch);
  if (n == 0) return NULL;
  if (!seqs || !out) return BAD("driver: embed needs sequences and an output buffer");
  for (size_t i = 0; i < n; i++) {
    if (!seqs[i].ids || seqs[i].count == 0)
      return BAD("driver: embed sequence %zu is empty (it needs at least its [CLS] and [SEP])", i);
    if ((int64_t)seqs[i].count > c->context_length)
      return poot_status_make(POOT_CAPACITY,
                              "driver: sequence %zu has %zu tokens, more than the model's %lld "
                              "positions (max_position_embeddings); truncate it",
                              i, seqs[i].count, (long long)c->context_length);
  }
  const size_t width = poot_driver_embed_width(d, o);
  if (n <= max_batch) return run_chunk(d, seqs, n, o, max_batch, width, out);
  /* More than one step: longest first (as sentence-transformers batches), so
   * each step pads to its own longest sequence, not the input's. A row does
   * not depend on its neighbours (docs/encoders.md), so the order changes
   * only the padding done, and the rows go back in input order. */
  by_length *order = poot_malloc(n * sizeof *order);
  poot_driver_sequence *chunk = poot_malloc(max_batch * sizeof *chunk);
  float *rows = poot_malloc(max_batch * width * sizeof *rows);
  if (!order || !chunk || !rows) {
    poot_free(order);
    poot_free(chunk);
    poot_free(rows);
    return OOM("encoder batch order");
  }
  for (size_t i = 0; i < n; i++) order[i] = (by_length){seqs[i].count, i};
  qsort(order, n, sizeof *order, by_length_desc);
  poot_status st = NULL;
  for (size_t i = 0; i < n && !st; i += max_batch) {
    size_t k = n - i < max_batch ? n - i : max_batch;
    for (size_t j = 0; j < k; j++) chunk[j] = seqs[order[i + j].index];
    st = run_chunk(d, chunk, k, o, max_batch, width, rows);
    for (size_t j = 0; j < k && !st; j++)
      memcpy(out + order[i + j].index * width, rows + j * width, width * sizeof *out);
  }
  poot_free(order);
  poot_free(chunk);
  poot_free(rows);
  return st;
}

/* ------------------------------------------------------------ tokenizing */

poot_status poot_driver_encoder_tokenize(const poot_model *model, const char *text,
                                         const char *pair, bool truncate, poot_token **out_ids,
                                         int32_t **out_types, size_t *out_count) {
  *out_ids = NULL;
  *out_types = NULL;
  *out_count = 0;
  if (!model || !text) return BAD("driver: encoder_tokenize needs a model and a text");
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  if (!tok) return poot_status_make(POOT_UNSUPPORTED, "driver: the model has no tokenizer");
  poot_tokenizer_specials sp = poot_tokenizer_get_specials(tok);
  poot_token sep = sp.sep != POOT_TOKEN_NONE ? sp.sep : sp.eos;
  if (pair && sep == POOT_TOKEN_NONE)
    return poot_status_make(POOT_UNSUPPORTED,
                            "driver: the tokenizer has no [SEP] to join a query and a document");
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  poot_token *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  POOT_TRY(poot_tokenizer_encode(tok, text, strlen(text), &eo, &a, &na));
  eo.add_special = false;
  poot_status st = NULL;
  if (pair) st = poot_tokenizer_encode(tok, pair, strlen(pair), &eo, &b, &nb);
  if (!st && na == 0) st = BAD("driver: the text gives no tokens");
  if (st) {
    poot_free(a);
    poot_free(b);
    return st;
  }
  /* The text's specials: [CLS] … [SEP] when the tokenizer adds them. */
  size_t head = na > 0 && a[0] == sp.bos && sp.add_bos ? 1 : 0;
  size_t tail = na > head && a[na - 1] == sep && sp.add_sep ? 1 : 0;
  size_t body_a = na - head - tail, body_b = nb;
  if (pair) tail = 1; /* the pair template: [CLS] A [SEP] B [SEP] */
  const poot_model_config *mc = poot_model_get_config(model);
  const size_t P = (size_t)poot_model_encoder_max_tokens(mc);
  size_t fixed = head + tail + (pair ? 1 : 0);
  if (body_a + body_b + fixed > P) {
    if (!truncate || fixed >= P) {
      poot_free(a);
      poot_free(b);
      return poot_status_make(POOT_CAPACITY,
                              "driver: %zu tokens exceed the model's %zu (%s); shorten the text "
                              "or truncate",
                              body_a + body_b + fixed, P,
                              (int64_t)P < mc->context_length
                                  ? "sentence-transformers' max_seq_length"
                                  : "max_position_embeddings");
    }
    /* Longest first: drop a token from whichever part is longer. */
    while (body_a + body_b + fixed > P) {
      if (body_a >= body_b)
        body_a--;
      else
        body_b--;
    }
  }
  size_t n = head + body_a + tail + (pair ? body_b + 1 : 0);
  poot_token *ids = poot_malloc(n * sizeof *ids);
  int32_t *types = poot_calloc(n, sizeof *types);
  if (!ids || !types) {
    poot_free(ids);
    poot_free(types);
    poot_free(a);
    poot_free(b);
    return OOM("encoder ids");
  }
  size_t k = 0;
  if (head) ids[k++] = a[0];
  memcpy(ids + k, a + head, body_a * sizeof *ids);
  k += body_a;
  if (tail) ids[k++] = sep;
  if (pair) {
    memcpy(ids + k, b, body_b * sizeof *ids);
    for (size_t i = k; i < k + body_b + 1; i++) types[i] = 1;
    k += body_b;
    ids[k++] = sep;
  }
  poot_free(a);
  poot_free(b);
  *out_ids = ids;
  *out_types = types;
  *out_count = k;
  return NULL;
}
