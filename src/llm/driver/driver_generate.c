/* driver_generate.c — the generation loops of the driver (poot/llm/driver.h):
 * a prompt fed, then one token at a time until a stop, N tokens or the
 * capacity, each streamed through the detokenizer. */
#include <string.h>

#include "poot/llm/driver.h"

#include "driver_impl.h"

void poot_driver_generate_result_deinit(poot_driver_generate_result *r) {
  if (!r) return;
  poot_free(r->ids);
  memset(r, 0, sizeof *r);
}

/* An id the tokenizer does not have: past its last token, in rows of the
 * embedding that only pad it (Hugging Face checkpoints round the embedding
 * up; docs/models.md). `what` says where the id came from. */
static poot_status check_token_known(const poot_driver *d, poot_token id, const char *what,
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

poot_status poot_driver_generate_ids(poot_driver *d, const poot_token *prompt, size_t count,
                                     const poot_driver_generate_options *options,
                                     poot_driver_token_fn fn, void *fn_ctx,
                                     poot_driver_generate_result *out) {
  memset(out, 0, sizeof *out);
  poot_driver_generate_options dflt = poot_driver_generate_options_default();
  const poot_driver_generate_options *o = options ? options : &dflt;
  if (!prompt || count < 1) return BAD("driver: the prompt needs at least one id");
  if (o->max_new_tokens < 0) return BAD("driver: max_new_tokens < 0");
  for (size_t i = 0; i < count; i++) POOT_TRY(check_token_known(d, prompt[i], "prompt id", i));
  out->n_prompt = count;
  const poot_tokenizer *tok = o->no_text ? NULL : poot_model_get_tokenizer(d->model);
  poot_tokenizer_decoder *dec = NULL;
  poot_strbuf text;
  poot_strbuf_init(&text);
  poot_status st = NULL;
  size_t max_ids = (size_t)o->max_new_tokens;
  out->ids = poot_calloc(max_ids + 1, sizeof *out->ids);
  if (!out->ids) {
    st = OOM("generated ids");
    goto done;
  }
  if (tok) {
    poot_tokenizer_decode_options dopt = poot_tokenizer_decode_options_default();
    dopt.vocab_rows = poot_model_get_config(d->model)->vocab_size;
    if ((st = poot_tokenizer_decoder_create(tok, &dopt, &dec))) goto done;
    /* The last prompt id sets the decoder's context (the space after BOS). */
    if ((st = poot_tokenizer_decoder_push(dec, prompt[count - 1], &text))) goto done;
    poot_strbuf_clear(&text);
  }
  if ((st = poot_driver_reset(d))) goto done;
  if (max_ids == 0) goto done;
  uint64_t t0 = poot_time_ns();
  poot_token next = -1;
  bool nf = false;
  if ((st = poot_driver_feed(d, prompt, count, &next, &nf))) goto done;
  out->nonfinite += nf;
  uint64_t t1 = poot_time_ns();
  out->prefill_s = (double)(t1 - t0) * 1e-9;
  for (;;) {
    /* A padding row can win the argmax (an untrained or random model): like
     * transformers, it is generated and decodes to no text. */
    out->ids[out->n_ids++] = next;
    if (!o->ignore_stop && poot_model_is_stop(d->model, next)) {
      out->stopped = true;
      break;
    }
    poot_strbuf_clear(&text);
    if (dec && (st = poot_tokenizer_decoder_push(dec, next, &text))) goto done;
    if (fn && !fn(fn_ctx, next, text.data ? text.data : "", text.len)) {
      st = poot_status_make(POOT_CANCELLED, "driver: generation stopped by the caller");
      goto done;
    }
    if (out->n_ids >= max_ids) break;
    if (d->pos >= d->cap) {
      out->hit_cap = true;
      break;
    }
    poot_token last = next;
    if ((st = poot_driver_feed(d, &last, 1, &next, &nf))) goto done;
    out->nonfinite += nf;
  }
  out->decode_s = (double)(poot_time_ns() - t1) * 1e-9;
  if (dec) {
    poot_strbuf_clear(&text);
    if ((st = poot_tokenizer_decoder_flush(dec, &text))) goto done;
    if (text.len && fn) fn(fn_ctx, -1, text.data, text.len);
  }
done:
  poot_tokenizer_decoder_destroy(dec);
  poot_strbuf_deinit(&text);
  return st;
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
