/* driver_generate.c — the generation loops of the driver (poot/llm/driver.h):
 * a prompt fed, then one token at a time until a stop, N tokens or the
 * capacity, each streamed through the detokenizer. */
#include <string.h>

#include "poot/llm/driver.h"
#include "poot/llm/tokenizer.h"

#include "driver_impl.h"

void poot_driver_generate_result_deinit(poot_driver_generate_result *r) {
  if (!r) return;
  poot_free(r->ids);
  poot_free(r->probs);
  poot_free(r->text);
  memset(r, 0, sizeof *r);
}

/* An id the tokenizer does not have: past its last token, in rows of the
 * embedding that only pad it (Hugging Face checkpoints round the embedding
 * up; docs/models.md). `what` says where the id came from. */
poot_status poot__driver_check_token_known(const poot_driver *d, poot_token id, const char *what,
                                           size_t at) {
  const poot_tokenizer *tok = poot_model_get_tokenizer(d->model);
  if (!tok || id < poot_tokenizer_vocab_size(tok)) return NULL;
  return poot_status_make(POOT_INVALID_ARGUMENT,
                          "driver: %s %zu is token id %d, but the tokenizer has %d tokens (ids "
                          "%d..%lld are embedding rows that only pad the vocabulary)",
                          what, at, (int)id, (int)poot_tokenizer_vocab_size(tok),
                          (int)poot_tokenizer_vocab_size(tok),
                          (long long)poot_model_get_config(d->model)->vocab_size - 1);
}

/* One generation's state. */
typedef struct gen {
  poot_driver *d;
  const poot_driver_generate_options *o;
  poot_driver_token_fn fn;
  void *fn_ctx;
  poot_driver_generate_result *out;
  size_t max_ids;
  poot_sampling_params *sp; /* a copy (ignore_eos adds bans); NULL: greedy */
  bool sampled;             /* through a sample entry (a kind or a grammar) */
  bool hist;                /* penalties: prompt fed through the history entries */
  driver_request req;
  poot_grammar_matcher *gm;
  uint32_t *mask;
  size_t mask_words;
  poot_stop_matcher *stops;
  poot_tokenizer_decoder *dec;
  poot_strbuf piece, text;
  uint64_t mask_ns;                /* time in fill_mask and prepare */
  bool preparing;                  /* the worker runs prepare_mask until the first mask */
  const poot_driver_input *inputs; /* generate_with_inputs: rows bound to the prompt */
  size_t n_inputs;
} gen;

static void gen_deinit(gen *g) {
  poot__driver_worker_stop(g->d->worker);
  g->d->worker = NULL;
  poot_free(g->sp);
  poot_grammar_matcher_destroy(g->gm);
  poot_free(g->mask);
  poot_stop_matcher_destroy(g->stops);
  poot_tokenizer_decoder_destroy(g->dec);
  poot_strbuf_deinit(&g->piece);
  poot_strbuf_deinit(&g->text);
}

/* The grammar's vocabulary of a model: its tokenizer's pieces (a control
 * token's text is not output a grammar can match), its end-of-generation
 * ids. The driver and the batched runner build it once each. */
poot_status poot__driver_grammar_vocab(const poot_model *model, poot_grammar_vocab **out) {
  *out = NULL;
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  if (!tok) return BAD("driver: a grammar needs the model's tokenizer");
  const int32_t n = poot_tokenizer_vocab_size(tok);
  char **texts = poot_calloc((size_t)n + 1, sizeof *texts);
  size_t *lens = poot_calloc((size_t)n + 1, sizeof *lens);
  int32_t *eog = poot_calloc((size_t)n + 1, sizeof *eog);
  poot_status st = !texts || !lens || !eog ? OOM("grammar vocabulary") : NULL;
  size_t n_eog = 0;
  for (int32_t i = 0; i < n && !st; i++) {
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    st = poot_tokenizer_token_to_piece(tok, i, false, &sb);
    lens[i] = sb.len;
    texts[i] = poot_strbuf_take(&sb);
    if (!st && sb.len && !texts[i]) st = OOM("grammar vocabulary");
    if (poot_tokenizer_is_end_of_generation(tok, i)) eog[n_eog++] = i;
    /* a special token's text is not output the grammar can match */
    if (poot_tokenizer_token_attr(tok, i) & POOT_TOKEN_ATTR_CONTROL) lens[i] = 0;
  }
  if (!st) st = poot_grammar_vocab_create((const char *const *)texts, lens, n, eog, n_eog, out);
  for (int32_t i = 0; texts && i < n; i++) poot_free(texts[i]);
  poot_free(texts);
  poot_free(lens);
  poot_free(eog);
  return st;
}

/* The driver's grammar vocabulary, built once. */
static poot_status grammar_vocab(poot_driver *d) {
  if (d->gvocab) return NULL;
  return poot__driver_grammar_vocab(d->model, &d->gvocab);
}

/* The grammar's wide contexts walked ahead of the first mask (on the worker,
 * while the prompt is fed). */
static poot_status prepare_mask(void *ctx) {
  gen *g = ctx;
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_grammar_matcher_prepare(g->gm, g->d->gvocab);
  g->mask_ns += poot_time_ns() - t0;
  return st;
}

/* Validates the options and sets up sampling, the grammar, stops and text. */
static poot_status gen_setup(gen *g, const poot_token *prompt, size_t count) {
  poot_driver *d = g->d;
  const poot_driver_generate_options *o = g->o;
  const int64_t V = poot_model_get_config(d->model)->vocab_size;
  if (!prompt || count < 1) return BAD("driver: the prompt needs at least one id");
  if (o->max_new_tokens < 0) return BAD("driver: max_new_tokens < 0");
  for (size_t i = 0; i < count; i++)
    POOT_TRY(poot__driver_check_token_known(d, prompt[i], "prompt id", i));
  g->max_ids = (size_t)o->max_new_tokens;
  poot_sampling_params dflt;
  const poot_sampling_params *p = o->sampling;
  if (!p && o->grammar) {
    poot_sampling_params_init(&dflt);
    dflt.temperature = 0.0f;
    p = &dflt;
  }
  if (p) {
    POOT_TRY(poot_sampling_params_validate(p, (uint32_t)V));
    if (!(g->sp = poot_malloc(sizeof *g->sp))) return OOM("sampling parameters");
    *g->sp = *p;
    const poot_tokenizer *tok = poot_model_get_tokenizer(d->model);
    if (p->ignore_eos && tok)
      for (int32_t i = 0; i < poot_tokenizer_vocab_size(tok); i++)
        if (poot_model_is_stop(d->model, i)) POOT_TRY(poot_sampling_params_ban_ids(g->sp, &i, 1));
    if (p->max_tokens >= 0 && (size_t)p->max_tokens < g->max_ids)
      g->max_ids = (size_t)p->max_tokens;
    uint32_t kind = poot_sampling_params_kind(g->sp) | (o->grammar ? POOT_SAMPLER_MASK : 0u);
    g->sampled = kind != 0;
    g->hist = (kind & POOT_SAMPLER_PENALTIES) != 0;
    POOT_TRY(poot_sampling_seed_resolve(g->sp, &g->out->seed));
    poot__driver_request_init(V, g->sp, g->out->seed, &g->req);
    g->req.kind = kind;
    g->req.n_probs = g->sp->n_probs;
    g->req.id = ++d->request;
    POOT_TRY(poot_stop_matcher_create(g->sp, &g->stops));
  }
  if (o->grammar) {
    POOT_TRY(grammar_vocab(d));
    POOT_TRY(poot_grammar_matcher_create(o->grammar, &g->gm));
    g->mask_words = (size_t)(V + 31) / 32;
    if (!(g->mask = poot_calloc(g->mask_words, sizeof *g->mask))) return OOM("grammar mask");
    /* the mask is filled on a second thread while the device runs the model;
     * its first job walks the grammar's wide contexts while the prompt is fed */
    POOT_TRY(poot__driver_worker_start(&d->worker));
    poot__driver_worker_post(d->worker, prepare_mask, g);
    g->preparing = true;
  }
  g->out->ids = poot_calloc(g->max_ids + 1, sizeof *g->out->ids);
  if (!g->out->ids) return OOM("generated ids");
  if (g->sp && g->sp->n_probs > 0 &&
      !(g->out->probs = poot_calloc(g->max_ids + 1, sizeof *g->out->probs)))
    return OOM("logprobs");
  return NULL;
}

/* The grammar's mask for the next step (driver_mask_fn; on the worker). */
static poot_status fill_mask(void *ctx) {
  gen *g = ctx;
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_grammar_matcher_fill_mask(g->gm, g->d->gvocab, g->mask, g->mask_words);
  g->mask_ns += poot_time_ns() - t0;
  return st;
}

/* The next id after `last`: greedy entries, or a sample entry with the mask. */
static poot_status gen_next(gen *g, poot_token last, poot_token *next) {
  if (!g->sampled) {
    bool nf = false;
    /* with input rows, a sequence recomputed at the restart keeps them */
    if (g->n_inputs)
      POOT_TRY(poot__driver_feed_next(g->d, last, next, &nf));
    else
      POOT_TRY(poot_driver_feed(g->d, &last, 1, next, &nf));
    g->out->nonfinite += nf;
    return NULL;
  }
  poot_sampling_result r;
  POOT_TRY(poot__driver_sample_step(g->d, &g->req, last, fill_mask, g, g->mask, &r));
  if (r.non_finite) {
    g->out->nonfinite++;
    if (r.token < 0 || r.token >= poot_model_get_config(g->d->model)->vocab_size)
      return poot_status_make(POOT_INTERNAL,
                              "driver: the logits were not finite; nothing could be drawn");
  }
  if (g->out->probs) g->out->probs[g->out->n_ids] = r;
  *next = r.token;
  return NULL;
}

/* Feeds the prompt (after the cached prefix when reuse_cache) but its last
 * id, which gen_next feeds. */
/* The prompt with input rows (generate_with_inputs): fed through the rows'
 * entries (a reset first); sampling feeds its last id through the sample
 * entry, so that id must be a token, not a row. */
/* After the prompt but its last id: the prepare job joined, the first id. */
static poot_status gen_prompt_done(gen *g, poot_token last, poot_token *next) {
  if (g->preparing) {
    g->preparing = false;
    POOT_TRY(poot__driver_worker_wait(g->d->worker));
  }
  return gen_next(g, last, next);
}

static poot_status gen_prompt_inputs(gen *g, const poot_token *prompt, size_t count,
                                     poot_token *next) {
  bool nf = false;
  if (!g->sampled) {
    POOT_TRY(poot__driver_feed_inputs(g->d, prompt, count, g->inputs, g->n_inputs, next, &nf));
    g->out->nonfinite += nf;
    return NULL;
  }
  if (g->hist)
    return poot_status_make(POOT_UNSUPPORTED,
                            "driver: repetition penalties with input rows are not supported yet");
  for (size_t i = 0; i < g->n_inputs; i++)
    for (size_t j = 0; j < g->inputs[i].n_rows; j++)
      if (g->inputs[i].rows[j].index == (int64_t)count - 1)
        return poot_status_make(POOT_UNSUPPORTED,
                                "driver: input '%s' has a row at the prompt's last index %zu; "
                                "sampling needs the last prompt id to be a token",
                                g->inputs[i].name ? g->inputs[i].name : "", count - 1);
  if (count > 1) {
    poot_token ignored;
    POOT_TRY(
        poot__driver_feed_inputs(g->d, prompt, count - 1, g->inputs, g->n_inputs, &ignored, &nf));
  } else {
    POOT_TRY(poot_driver_reset(g->d));
  }
  return gen_prompt_done(g, prompt[count - 1], next);
}

static poot_status gen_prompt(gen *g, const poot_token *prompt, size_t count, poot_token *next) {
  poot_driver *d = g->d;
  if (g->n_inputs) return gen_prompt_inputs(g, prompt, count, next);
  size_t keep = 0;
  if (g->o->reuse_cache) {
    while (keep + 1 < count && (int64_t)keep < d->pos && d->history[keep] == prompt[keep]) keep++;
    /* the penalty counts cover the whole cache: only an extension keeps them */
    if (g->hist && (!d->counts_valid || (int64_t)keep != d->pos)) keep = 0;
  }
  if (keep == 0) {
    POOT_TRY(poot_driver_reset(d));
  } else {
    d->pos = (int64_t)keep;
  }
  g->out->n_reused = keep;
  if (!g->sampled) {
    /* greedy: the whole rest of the prompt in one feed, so a model whose
     * rope depends on the length (a whole pass past whole_pass_at) computes
     * the first id in that pass, as poot_driver_feed defines it */
    bool nf = false;
    POOT_TRY(poot_driver_feed(d, prompt + keep, count - keep, next, &nf));
    g->out->nonfinite += nf;
    return NULL;
  }
  if (count - keep > 1) {
    poot_token ignored;
    int64_t ni = DRIVER_SAMPLER_IPARAMS;
    poot_tensor ti = {
        .type = poot_type_make(POOT_DTYPE_I32, 1, &ni), .data = g->req.i, .size = sizeof g->req.i};
    POOT_TRY(poot__driver_feed(d, prompt + keep, count - keep - 1, g->hist, &ti, &ignored, NULL));
  }
  return gen_prompt_done(g, prompt[count - 1], next);
}

/* Streams text through the stop matcher to the callback. Sets *stop when a
 * stop string matched. */
static poot_status gen_emit(gen *g, poot_token id, const char *text, size_t len, bool *stop) {
  const char *t = text;
  size_t n = len;
  if (g->stops) {
    poot_stop_output so;
    POOT_TRY(poot_stop_matcher_feed(g->stops, text, len, &so));
    t = so.text, n = so.len;
    if (so.stopped) {
      *stop = true;
      g->out->reason = POOT_DRIVER_STOP_STRING;
      g->out->stop_index = so.stop_index;
    }
  }
  if (n) poot_strbuf_append(&g->text, t, n);
  if (g->fn && (n || id >= 0) && !g->fn(g->fn_ctx, id, t ? t : "", n))
    return poot_status_make(POOT_CANCELLED, "driver: generation stopped by the caller");
  return NULL;
}

static bool is_stop_id(const gen *g, poot_token id) {
  if (g->sp)
    for (uint32_t i = 0; i < g->sp->n_stop_ids; i++)
      if (g->sp->stop_ids[i] == id) return true;
  if (g->o->ignore_stop || (g->sp && g->sp->ignore_eos)) return false;
  return poot_model_is_stop(g->d->model, id);
}

/* Records `next`; *done when generation ends with it. */
static poot_status gen_take(gen *g, poot_token next, bool *done) {
  poot_driver_generate_result *out = g->out;
  /* A padding row can win the argmax (an untrained or random model): like
   * transformers, it is generated and decodes to no text. */
  out->ids[out->n_ids++] = next;
  if (is_stop_id(g, next)) {
    out->stopped = true;
    out->reason = POOT_DRIVER_STOP_ID;
    *done = true;
    return NULL;
  }
  bool finished = false;
  if (g->gm) {
    size_t len = 0;
    const poot_tokenizer *tok = poot_model_get_tokenizer(g->d->model);
    poot_strbuf_clear(&g->piece);
    POOT_TRY(poot_tokenizer_token_to_piece(tok, next, false, &g->piece));
    len = g->piece.len;
    if (len) POOT_TRY(poot_grammar_matcher_accept(g->gm, g->piece.data, len));
    finished = poot_grammar_matcher_is_finished(g->gm) ||
               (len == 0 && poot_grammar_matcher_can_end(g->gm));
  }
  poot_strbuf_clear(&g->piece);
  if (g->dec) POOT_TRY(poot_tokenizer_decoder_push(g->dec, next, &g->piece));
  POOT_TRY(gen_emit(g, next, g->piece.data ? g->piece.data : "", g->piece.len, done));
  if (*done) return NULL;
  if (finished) {
    out->reason = POOT_DRIVER_STOP_GRAMMAR;
    *done = true;
  } else if (out->n_ids >= g->max_ids) {
    out->reason = POOT_DRIVER_STOP_LENGTH;
    *done = true;
  } else if (g->d->pos >= g->d->cap) {
    out->hit_cap = true;
    out->reason = POOT_DRIVER_STOP_CAPACITY;
    *done = true;
  }
  return NULL;
}

/* The text still held: the decoder's pending bytes, then the stop matcher's. */
static poot_status gen_flush(gen *g) {
  bool stop = false;
  if (g->dec && g->out->reason != POOT_DRIVER_STOP_STRING) {
    poot_strbuf_clear(&g->piece);
    POOT_TRY(poot_tokenizer_decoder_flush(g->dec, &g->piece));
    if (g->piece.len) POOT_TRY(gen_emit(g, -1, g->piece.data, g->piece.len, &stop));
  }
  if (g->stops && g->out->reason != POOT_DRIVER_STOP_STRING) {
    poot_stop_output so;
    poot_stop_matcher_finish(g->stops, &so);
    if (so.len) {
      poot_strbuf_append(&g->text, so.text, so.len);
      if (g->fn) g->fn(g->fn_ctx, -1, so.text, so.len);
    }
  }
  return NULL;
}

poot_status poot__driver_generate(poot_driver *d, const poot_token *prompt, size_t count,
                                  const poot_driver_input *inputs, size_t n_inputs,
                                  const poot_driver_generate_options *options,
                                  poot_driver_token_fn fn, void *fn_ctx,
                                  poot_driver_generate_result *out) {
  memset(out, 0, sizeof *out);
  out->stop_index = -1;
  poot_driver_generate_options dflt = poot_driver_generate_options_default();
  gen g = {.d = d,
           .o = options ? options : &dflt,
           .fn = fn,
           .fn_ctx = fn_ctx,
           .out = out,
           .inputs = inputs,
           .n_inputs = n_inputs};
  poot_strbuf_init(&g.piece);
  poot_strbuf_init(&g.text);
  poot_status st = gen_setup(&g, prompt, count);
  if (!st && !g.o->no_text) {
    const poot_tokenizer *tok = poot_model_get_tokenizer(d->model);
    if (tok) {
      poot_tokenizer_decode_options dopt = poot_tokenizer_decode_options_default();
      dopt.vocab_rows = poot_model_get_config(d->model)->vocab_size;
      st = poot_tokenizer_decoder_create(tok, &dopt, &g.dec);
      /* The last prompt id sets the decoder's context (the space after BOS). */
      if (!st) st = poot_tokenizer_decoder_push(g.dec, prompt[count - 1], &g.piece);
    }
  }
  out->n_prompt = count;
  if (!st && g.max_ids > 0) {
    uint64_t t0 = poot_time_ns();
    poot_token next = -1;
    st = gen_prompt(&g, prompt, count, &next);
    uint64_t t1 = poot_time_ns();
    out->prefill_s = (double)(t1 - t0) * 1e-9;
    for (bool done = false; !st;) {
      if ((st = gen_take(&g, next, &done)) || done) break;
      poot_token last = next;
      st = gen_next(&g, last, &next);
    }
    out->decode_s = (double)(poot_time_ns() - t1) * 1e-9;
    out->mask_s = (double)g.mask_ns * 1e-9;
    out->mask_wait_s = (double)g.req.wait_ns * 1e-9;
    if (!st) st = gen_flush(&g);
  } else if (!st) {
    st = poot_driver_reset(d);
  }
  if (g.text.len || !st) {
    out->text_len = g.text.len;
    out->text = poot_strbuf_take(&g.text);
    if (!out->text) out->text = poot_calloc(1, 1);
  }
  gen_deinit(&g);
  return st;
}

poot_status poot_driver_generate_ids(poot_driver *d, const poot_token *prompt, size_t count,
                                     const poot_driver_generate_options *options,
                                     poot_driver_token_fn fn, void *fn_ctx,
                                     poot_driver_generate_result *out) {
  return poot__driver_generate(d, prompt, count, NULL, 0, options, fn, fn_ctx, out);
}

poot_status poot_driver_generate(poot_driver *d, const char *prompt, size_t prompt_len,
                                 const poot_driver_generate_options *options,
                                 poot_driver_token_fn fn, void *fn_ctx,
                                 poot_driver_generate_result *out) {
  memset(out, 0, sizeof *out);
  poot_driver_generate_options dflt = poot_driver_generate_options_default();
  const poot_driver_generate_options *o = options ? options : &dflt;
  const poot_tokenizer *tok = poot_model_get_tokenizer(d->model);
  if (!tok) return BAD("driver: the model was opened without a tokenizer");
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  eo.add_special = o->add_bos;
  poot_token *ids = NULL;
  size_t n = 0;
  POOT_TRY(
      poot_tokenizer_encode(tok, prompt ? prompt : "", prompt ? prompt_len : 0, &eo, &ids, &n));
  poot_status st = NULL;
  if (n == 0)
    st = BAD("driver: the prompt is empty and the model adds no BOS token");
  else
    st = poot_driver_generate_ids(d, ids, n, o, fn, fn_ctx, out);
  poot_free(ids);
  return st;
}
