/* /v1/embeddings and /v1/rerank (docs/serve.md "Encoders"): the request
 * parser, and the run on the runtime's encoder (poot_driver_embed) with the
 * response in OpenAI's shape (embeddings) and llama.cpp's / Jina's / Cohere's
 * (rerank). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/model.h"
#include "serve_impl.h"

typedef struct eparse {
  poot_arena *arena;
  const char **param;
} eparse;

static poot_status text_of(eparse *p, const char *field, const poot_json *v, size_t index,
                           poot__serve_prompt *out) {
  /* Jina and Cohere also send a document as {"text": …} */
  if (v->type == POOT_JSON_OBJECT && poot_json_get(v, "text")) v = poot_json_get(v, "text");
  if (v->type != POOT_JSON_STRING)
    return poot__serve_bad(p->param, field, "%s[%zu] must be a string", field, index);
  if (v->len == 0)
    return poot__serve_bad(p->param, field, "%s[%zu] is an empty string", field, index);
  *out = (poot__serve_prompt){.text = v->str, .len = v->len};
  return NULL;
}

/* input: a string, a list of strings, a list of ids, or a list of such lists. */
static poot_status parse_input(eparse *p, const poot_json *in, size_t max,
                               poot__serve_encode_request *r) {
  if (poot__serve_is_null(in)) return poot__serve_bad(p->param, "input", "'input' is required");
  const poot_json *one[1] = {in};
  const poot_json *const *items = one;
  size_t n = 1;
  bool ids_list = in->type == POOT_JSON_ARRAY && in->len && in->items[0]->type == POOT_JSON_NUMBER;
  if (in->type == POOT_JSON_ARRAY && !ids_list) {
    items = (const poot_json *const *)in->items;
    n = in->len;
  } else if (in->type != POOT_JSON_STRING && !ids_list) {
    return poot__serve_bad(
        p->param, "input",
        "'input' must be a string, a list of strings, a list of token ids or a list of "
        "such lists");
  }
  if (n == 0) return poot__serve_bad(p->param, "input", "'input' must not be empty");
  if (n > max)
    return poot__serve_bad(p->param, "input", "'input' has %zu items; at most %zu are accepted", n,
                           max);
  r->inputs = POOT_ARENA_NEW_ARRAY(p->arena, poot__serve_prompt, n);
  if (!r->inputs) return poot__serve_oom();
  r->n_inputs = n;
  for (size_t i = 0; i < n; i++) {
    if (items[i]->type == POOT_JSON_ARRAY)
      POOT_TRY(poot__serve_token_ids(p->arena, p->param, "input", items[i], i, &r->inputs[i]));
    else
      POOT_TRY(text_of(p, "input", items[i], i, &r->inputs[i]));
  }
  return NULL;
}

static poot_status parse_rerank(eparse *p, const poot_json *body, size_t max,
                                poot__serve_encode_request *r) {
  const poot_json *q = poot_json_get(body, "query");
  if (poot__serve_is_null(q)) return poot__serve_bad(p->param, "query", "'query' is required");
  if (q->type != POOT_JSON_STRING || q->len == 0)
    return poot__serve_bad(p->param, "query", "'query' must be a non-empty string");
  r->query = q->str;
  r->query_len = q->len;
  const poot_json *docs = poot_json_get(body, "documents");
  if (poot__serve_is_null(docs)) docs = poot_json_get(body, "texts"); /* another spelling */
  if (poot__serve_is_null(docs))
    return poot__serve_bad(p->param, "documents", "'documents' is required");
  if (docs->type != POOT_JSON_ARRAY || docs->len == 0)
    return poot__serve_bad(p->param, "documents",
                           "'documents' must be a non-empty list of strings");
  if (docs->len > max)
    return poot__serve_bad(p->param, "documents",
                           "'documents' has %zu items; at most %zu are accepted", docs->len, max);
  r->inputs = POOT_ARENA_NEW_ARRAY(p->arena, poot__serve_prompt, docs->len);
  if (!r->inputs) return poot__serve_oom();
  r->n_inputs = docs->len;
  for (size_t i = 0; i < docs->len; i++)
    POOT_TRY(text_of(p, "documents", docs->items[i], i, &r->inputs[i]));
  const poot_json *top = poot_json_get(body, "top_n");
  if (!poot__serve_is_null(top)) {
    if (top->type != POOT_JSON_NUMBER || top->number != floor(top->number) || top->number < 1)
      return poot__serve_bad(p->param, "top_n", "'top_n' must be an integer ≥ 1");
    r->top_n = top->number > (double)docs->len ? (int64_t)docs->len : (int64_t)top->number;
  }
  const poot_json *rd = poot_json_get(body, "return_documents");
  if (!poot__serve_is_null(rd)) {
    if (rd->type != POOT_JSON_BOOL)
      return poot__serve_bad(p->param, "return_documents",
                             "'return_documents' must be true or false");
    r->return_documents = rd->boolean;
  }
  return NULL;
}

poot_status poot__serve_encode_request_parse(poot_arena *arena, const char *body, size_t len,
                                             poot__serve_encode_kind kind, size_t max_inputs,
                                             poot__serve_encode_request *r,
                                             const char **out_param) {
  memset(r, 0, sizeof *r);
  *out_param = NULL;
  r->kind = kind;
  r->dimensions = -1;
  r->top_n = -1;
  const poot_json *root = NULL;
  POOT_TRY(poot__serve_parse_object(arena, body, len, out_param, &root));
  eparse p = {.arena = arena, .param = out_param};
  const poot_json *model = poot_json_get(root, "model");
  if (!poot__serve_is_null(model)) {
    if (model->type != POOT_JSON_STRING)
      return poot__serve_bad(out_param, "model", "'model' must be a string");
    r->model = model->str;
  }
  const poot_json *tr = poot_json_get(root, "truncate");
  if (!poot__serve_is_null(tr)) {
    if (tr->type != POOT_JSON_BOOL)
      return poot__serve_bad(out_param, "truncate", "'truncate' must be true or false");
    r->truncate = tr->boolean;
  }
  if (kind == POOT_SERVE_RERANK) return parse_rerank(&p, root, max_inputs, r);
  POOT_TRY(parse_input(&p, poot_json_get(root, "input"), max_inputs, r));
  const poot_json *ef = poot_json_get(root, "encoding_format");
  if (!poot__serve_is_null(ef)) {
    if (ef->type != POOT_JSON_STRING ||
        (strcmp(ef->str, "float") != 0 && strcmp(ef->str, "base64") != 0))
      return poot__serve_bad(out_param, "encoding_format",
                             "'encoding_format' must be \"float\" or \"base64\"");
    r->base64 = strcmp(ef->str, "base64") == 0;
  }
  const poot_json *dim = poot_json_get(root, "dimensions");
  if (!poot__serve_is_null(dim)) {
    if (dim->type != POOT_JSON_NUMBER || dim->number != floor(dim->number) || dim->number < 1 ||
        dim->number > 1e9)
      return poot__serve_bad(out_param, "dimensions", "'dimensions' must be an integer ≥ 1");
    r->dimensions = (int64_t)dim->number;
  }
  return NULL;
}

/* ------------------------------------------------------------------- run */

/* Little-endian float32 bytes in base64 (what OpenAI's clients decode). */
static void put_base64(poot_strbuf *sb, const float *v, size_t n) {
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  unsigned char b[3];
  size_t k = 0, total = n * 4;
  poot_strbuf_putc(sb, '"');
  for (size_t i = 0; i < total; i++) {
    uint32_t bits;
    memcpy(&bits, &v[i / 4], 4);
    b[k++] = (unsigned char)(bits >> (8 * (i % 4))); /* little-endian whatever the host */
    if (k == 3 || i + 1 == total) {
      uint32_t w = (uint32_t)b[0] << 16 | (k > 1 ? (uint32_t)b[1] << 8 : 0) | (k > 2 ? b[2] : 0);
      char out[4] = {A[w >> 18], A[(w >> 12) & 63], k > 1 ? A[(w >> 6) & 63] : '=',
                     k > 2 ? A[w & 63] : '='};
      poot_strbuf_append(sb, out, 4);
      k = 0;
    }
  }
  poot_strbuf_putc(sb, '"');
}

typedef struct scored {
  size_t index;
  float score;
} scored;

static int by_score(const void *a, const void *b) {
  const scored *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The sequences to run: [CLS] text [SEP] (rerank: the query and the
 * document as a pair), or the ids as given. */
static poot_status sequences(const poot_model *model, const poot__serve_encode_request *r,
                             poot_driver_sequence *seqs, size_t *tokens, const char **param) {
  int64_t vocab = poot_model_get_config(model)->vocab_size;
  for (size_t i = 0; i < r->n_inputs; i++) {
    const poot__serve_prompt *in = &r->inputs[i];
    if (!in->text) {
      for (size_t k = 0; k < in->n_ids; k++)
        if (in->ids[k] >= vocab) {
          *param = "input";
          return poot_status_make(POOT_INVALID_ARGUMENT,
                                  "input %zu: token id %d is past the vocabulary (%lld ids)", i,
                                  in->ids[k], (long long)vocab);
        }
      poot_token *ids = poot_malloc(in->n_ids * sizeof *ids);
      int32_t *types = poot_calloc(in->n_ids, sizeof *types);
      seqs[i] = (poot_driver_sequence){.ids = ids, .types = types, .count = in->n_ids};
      if (!ids || !types) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the sequences");
      memcpy(ids, in->ids, in->n_ids * sizeof *ids);
    } else {
      /* the tokenizer wants NUL-terminated text */
      char *text = poot_malloc(in->len + 1);
      char *query = r->query ? poot_malloc(r->query_len + 1) : NULL;
      poot_status st = !text || (r->query && !query)
                           ? poot_status_make(POOT_OUT_OF_MEMORY, "serve: the texts")
                           : NULL;
      if (!st) {
        memcpy(text, in->text, in->len);
        text[in->len] = 0;
        if (query) memcpy(query, r->query, r->query_len), query[r->query_len] = 0;
        poot_token *ids = NULL;
        int32_t *types = NULL;
        size_t count = 0;
        st = query ? poot_driver_encoder_tokenize(model, query, text, r->truncate, &ids, &types,
                                                  &count)
                   : poot_driver_encoder_tokenize(model, text, NULL, r->truncate, &ids, &types,
                                                  &count);
        seqs[i] = (poot_driver_sequence){.ids = ids, .types = types, .count = count};
      }
      poot_free(text);
      poot_free(query);
      if (st) {
        *param = r->kind == POOT_SERVE_RERANK ? "documents" : "input";
        poot_status_code code = poot_status_code_of(st);
        if (code == POOT_OUT_OF_MEMORY) return st;
        poot_status out = poot_status_make(
            POOT_INVALID_ARGUMENT, "%s %zu: %s%s", *param, i, poot_status_message(st),
            code == POOT_CAPACITY ? " (\"truncate\": true cuts it to fit)" : "");
        poot_status_free(st);
        return out;
      }
    }
    *tokens += seqs[i].count;
  }
  return NULL;
}

static void write_embeddings(poot_strbuf *sb, const char *model_name,
                             const poot__serve_encode_request *r, const float *out, size_t width,
                             size_t tokens) {
  poot_strbuf_puts(sb, "{\"object\":\"list\",\"data\":[");
  for (size_t i = 0; i < r->n_inputs; i++) {
    poot_strbuf_printf(sb, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":", i ? "," : "",
                       i);
    const float *v = out + i * width;
    if (r->base64) {
      put_base64(sb, v, width);
    } else {
      poot_strbuf_putc(sb, '[');
      for (size_t k = 0; k < width; k++) poot_strbuf_printf(sb, "%s%.9g", k ? "," : "", (double)v[k]);
      poot_strbuf_putc(sb, ']');
    }
    poot_strbuf_putc(sb, '}');
  }
  poot_strbuf_puts(sb, "],\"model\":");
  poot_json_write_string(sb, model_name, strlen(model_name), false);
  poot_strbuf_printf(sb, ",\"usage\":{\"prompt_tokens\":%zu,\"total_tokens\":%zu}}", tokens, tokens);
}

static poot_status write_rerank(poot_strbuf *sb, const char *model_name,
                                const poot__serve_encode_request *r, const float *out,
                                size_t width, size_t tokens) {
  scored *s = poot_malloc(r->n_inputs * sizeof *s);
  if (!s) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the scores");
  for (size_t i = 0; i < r->n_inputs; i++) s[i] = (scored){i, out[i * width]};
  qsort(s, r->n_inputs, sizeof *s, by_score);
  size_t n = r->top_n > 0 ? (size_t)r->top_n : r->n_inputs;
  poot_strbuf_puts(sb, "{\"object\":\"list\",\"model\":");
  poot_json_write_string(sb, model_name, strlen(model_name), false);
  poot_strbuf_puts(sb, ",\"results\":[");
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_printf(sb, "%s{\"index\":%zu,\"relevance_score\":%.9g", i ? "," : "", s[i].index,
                       (double)s[i].score);
    if (r->return_documents) {
      poot_strbuf_puts(sb, ",\"document\":{\"text\":");
      const poot__serve_prompt *d = &r->inputs[s[i].index];
      poot_json_write_string(sb, d->text, d->len, false);
      poot_strbuf_putc(sb, '}');
    }
    poot_strbuf_putc(sb, '}');
  }
  poot_strbuf_printf(sb, "],\"usage\":{\"prompt_tokens\":%zu,\"total_tokens\":%zu}}", tokens,
                     tokens);
  poot_free(s);
  return NULL;
}

poot_status poot__serve_encode_run(poot_runtime *rt, const char *model_name,
                                   const poot__serve_encode_request *r, poot_strbuf *sb,
                                   const char **param) {
  poot_driver *drv = poot_runtime_driver(rt);
  poot_driver_embed_options o = poot_driver_embed_options_default();
  o.scores = r->kind == POOT_SERVE_RERANK;
  size_t width = poot_driver_embed_width(drv, &o);
  if (width == 0) {
    *param = "model";
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the model '%s' has no classification head: it embeds, it cannot "
                            "rerank (use /v1/embeddings)",
                            model_name);
  }
  if (r->dimensions >= 0 && (size_t)r->dimensions != width) {
    *param = "dimensions";
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "'dimensions' = %lld: this model's embeddings have %zu dimensions "
                            "and are not shortened",
                            (long long)r->dimensions, width);
  }
  poot_driver_sequence *seqs = poot_calloc(r->n_inputs, sizeof *seqs);
  float *out = poot_malloc(r->n_inputs * width * sizeof *out);
  size_t tokens = 0;
  poot_status st = !seqs || !out ? poot_status_make(POOT_OUT_OF_MEMORY, "serve: the outputs")
                                 : sequences(poot_runtime_model(rt), r, seqs, &tokens, param);
  if (!st) st = poot_driver_embed(drv, seqs, r->n_inputs, &o, out);
  if (!st && r->kind == POOT_SERVE_EMBED) write_embeddings(sb, model_name, r, out, width, tokens);
  if (!st && r->kind == POOT_SERVE_RERANK) st = write_rerank(sb, model_name, r, out, width, tokens);
  for (size_t i = 0; seqs && i < r->n_inputs; i++) {
    poot_free((void *)seqs[i].ids);
    poot_free((void *)seqs[i].types);
  }
  poot_free(seqs);
  poot_free(out);
  return st;
}
