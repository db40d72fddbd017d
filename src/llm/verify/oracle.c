/* oracle.c — greedy generation on an evaluator (poot_eval for `poot verify
 * greedy`): one prefill graph and one decode graph, traced once each, KV
 * states carried from one evaluation to the next. Each step costs one
 * evaluation of a constant-shape graph; nothing is re-run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/llm/verify.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

void poot_verify_greedy_result_deinit(poot_verify_greedy_result *r) {
  if (!r) return;
  poot_free(r->ids);
  poot_free(r->margins);
  poot_free(r->logits);
  memset(r, 0, sizeof *r);
}

/* One traced step graph with its bound weights. */
typedef struct step_graph {
  poot_graph *graph;
  poot_eval_weight *weights; /* bound by key */
  size_t n_weights;
  poot_eval_input *items; /* per-step inputs */
  size_t n_items;
  poot_tensor *tensors;
} step_graph;

static void step_graph_deinit(step_graph *s) {
  poot_free(s->items);
  poot_free(s->weights);
  poot_free(s->tensors);
  poot_graph_destroy(s->graph);
  memset(s, 0, sizeof *s);
}

/* Traces `step` and binds every Weight leaf; leaves room for the slots and
 * states after the weights. */
static poot_status step_graph_init(step_graph *s, poot_model *model, const poot_model_step *step,
                                   poot_dtype kv_dtype) {
  memset(s, 0, sizeof *s);
  poot_model_trace_options to = poot_model_trace_options_for(model);
  to.kv_dtype = kv_dtype;
  POOT_TRY(poot_model_trace(poot_model_get_config(model), step, &to, &s->graph));
  const poot_region *root = poot_graph_root(s->graph);
  size_t n_leaves = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++) {
    const poot_node *n = poot_graph_node(s->graph, root->nodes[i]);
    if (n->op == POOT_OP_LEAF && n->storage != POOT_STORAGE_CONST) n_leaves++;
  }
  s->items = poot_calloc(n_leaves + 1, sizeof *s->items);
  s->weights = poot_calloc(n_leaves + 1, sizeof *s->weights);
  s->tensors = poot_calloc(n_leaves + 1, sizeof *s->tensors);
  if (!s->items || !s->weights || !s->tensors)
    return poot_status_make(POOT_OUT_OF_MEMORY, "verify: bindings");
  poot_status st = NULL;
  for (uint32_t i = 0; i < root->num_nodes && !st; i++) {
    const poot_node *n = poot_graph_node(s->graph, root->nodes[i]);
    if (n->op != POOT_OP_LEAF || n->storage != POOT_STORAGE_WEIGHT) continue;
    size_t k = s->n_weights++;
    st = poot_model_weight_tensor(model, &n->weight, poot_graph_value_type(s->graph, n->results[0]),
                                  &s->tensors[k]);
    s->weights[k] = (poot_eval_weight){.key = n->weight.key, .tensor = &s->tensors[k]};
  }
  return st;
}

/* Sets the per-step inputs after the weights: slots, then states. */
static void step_set_inputs(step_graph *s, const poot_eval_input *extra, size_t n_extra) {
  s->n_items = 0;
  for (size_t i = 0; i < n_extra; i++) s->items[s->n_items++] = extra[i];
}

typedef struct run {
  poot_model *model;
  const poot_verify_evaluator *ev;
  const poot_verify_greedy_options *o;
  int64_t cap, block_size, n_blocks;
  poot_evaluation *prev; /* holds the current state values */
  int32_t *table;        /* paged: the sequence's block table */
} run;

/* Evaluates one step of `s` with tokens[T] starting at pos. */
static poot_status run_step(run *r, step_graph *s, const int32_t *tokens, int64_t T, int64_t pos,
                            poot_evaluation **out_eval) {
  *out_eval = NULL;
  poot_eval_input extra[8 + 2 * POOT_MODEL_MAX_LAYERS];
  size_t ne = 0;
  int64_t tdims[2] = {1, T}, one = 1;
  poot_tensor tok = {.type = poot_type_make(POOT_DTYPE_I32, 2, tdims),
                     .data = (void *)tokens,
                     .size = (size_t)T * 4};
  int32_t p32 = (int32_t)pos;
  poot_tensor post = {.type = poot_type_make(POOT_DTYPE_I32, 1, &one), .data = &p32, .size = 4};
  extra[ne++] = (poot_eval_input){"token", &tok};
  extra[ne++] = (poot_eval_input){"pos", &post};
  poot_tensor smt, wmt;
  int32_t *wm = NULL;
  poot_status st = NULL;
  if (r->o->paged) {
    int64_t nb = r->cap / r->block_size;
    int64_t sd[2] = {1, nb};
    smt = (poot_tensor){
        .type = poot_type_make(POOT_DTYPE_I32, 2, sd), .data = r->table, .size = (size_t)nb * 4};
    wm = poot_malloc((size_t)T * 4);
    if (!wm) return poot_status_make(POOT_OUT_OF_MEMORY, "verify: write map");
    for (int64_t t = 0; t < T; t++) {
      int64_t p = pos + t;
      wm[t] = r->table[p / r->block_size] * (int32_t)r->block_size + (int32_t)(p % r->block_size);
    }
    wmt = (poot_tensor){
        .type = poot_type_make(POOT_DTYPE_I32, 1, &T), .data = wm, .size = (size_t)T * 4};
    extra[ne++] = (poot_eval_input){"slot_map", &smt};
    extra[ne++] = (poot_eval_input){"write_map", &wmt};
  }
  if (r->prev) {
    for (uint32_t i = 0; i < r->prev->num_states; i++)
      extra[ne++] = (poot_eval_input){r->prev->states[i].name, &r->prev->states[i].tensor};
  }
  step_set_inputs(s, extra, ne);
  poot_eval_inputs in = {
      .count = s->n_items, .items = s->items, .weight_count = s->n_weights, .weights = s->weights};
  poot_eval_options eo;
  memset(&eo, 0, sizeof eo);
  eo.zero_missing_states = r->prev == NULL;
  st = r->ev->eval(s->graph, &in, &eo, out_eval);
  poot_free(wm);
  return st;
}

/* Runs prompt + ids as one prefill from position 0 with fresh states (the
 * whole KV cache recomputed: poot_model_rope_restart_length). */
static poot_status rerun_sequence(run *r, poot_model *model, const poot_token *prompt,
                                  size_t n_prompt, const poot_token *ids, size_t n_ids,
                                  poot_evaluation **out_eval) {
  int64_t T = (int64_t)(n_prompt + n_ids);
  int32_t *toks = poot_calloc((size_t)T, sizeof *toks);
  if (!toks) return poot_status_make(POOT_OUT_OF_MEMORY, "verify: rerun tokens");
  for (size_t i = 0; i < n_prompt; i++) toks[i] = prompt[i];
  for (size_t i = 0; i < n_ids; i++) toks[n_prompt + i] = ids[i];
  poot_model_step step = {.batch = 1,
                          .tokens = T,
                          .cap = r->cap,
                          .paged = r->o->paged,
                          .block_size = r->block_size,
                          .num_blocks = r->cap / r->block_size};
  step_graph g;
  poot_status st = step_graph_init(&g, model, &step, r->o->kv_dtype);
  r->ev->destroy(r->prev);
  r->prev = NULL;
  if (!st) st = run_step(r, &g, toks, T, 0, out_eval);
  step_graph_deinit(&g);
  poot_free(toks);
  return st;
}

/* Greedy pick, margin, and the optional logits copy. */
static void pick(const float *logits, int64_t vocab, poot_token *out_id, float *out_margin) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; i++)
    if (logits[i] > logits[best]) best = i;
  float second = -INFINITY;
  for (int64_t i = 0; i < vocab; i++)
    if (i != best && logits[i] > second) second = logits[i];
  *out_id = (poot_token)best;
  *out_margin = vocab > 1 ? logits[best] - second : INFINITY;
}

poot_status poot_verify_greedy(poot_model *model, const poot_verify_evaluator *ev,
                               const poot_token *prompt, size_t n_prompt,
                               const poot_verify_greedy_options *options,
                               poot_verify_greedy_result *out) {
  memset(out, 0, sizeof *out);
  poot_verify_greedy_options dflt = poot_verify_greedy_options_default();
  const poot_verify_greedy_options *o = options ? options : &dflt;
  if (!model || !ev || !ev->eval || !ev->destroy)
    return BAD("poot_verify_greedy: NULL model or evaluator");
  if (!prompt || n_prompt < 1) return BAD("poot_verify_greedy: the prompt needs at least one id");
  if (o->max_new_tokens < 0) return BAD("poot_verify_greedy: max_new_tokens < 0");
  const poot_model_config *c = poot_model_get_config(model);
  run r = {.model = model, .ev = ev, .o = o};
  r.block_size = o->paged ? (o->block_size > 0 ? o->block_size : 16) : 1;
  int64_t need = (int64_t)n_prompt + o->max_new_tokens;
  r.cap = o->cap > 0 ? o->cap : need;
  if (o->paged) r.cap = (r.cap + r.block_size - 1) / r.block_size * r.block_size;
  if (r.cap < need)
    return BAD("poot_verify_greedy: capacity %lld is below prompt + N = %lld", (long long)r.cap,
               (long long)need);
  int64_t vocab = c->vocab_size;
  poot_status st = NULL;
  step_graph pre, dec;
  memset(&pre, 0, sizeof pre);
  memset(&dec, 0, sizeof dec);
  int32_t *toks = NULL;
  poot_evaluation *cur = NULL;
  size_t max_ids = (size_t)o->max_new_tokens;
  if (o->follow && o->n_follow < max_ids) max_ids = o->n_follow;
  out->ids = poot_calloc(max_ids + 1, sizeof *out->ids);
  out->margins = poot_calloc(max_ids + 1, sizeof *out->margins);
  size_t keep = o->keep_logits < max_ids ? o->keep_logits : max_ids;
  out->logits = keep ? poot_calloc(keep * (size_t)vocab, sizeof(float)) : NULL;
  toks = poot_calloc(n_prompt, sizeof *toks);
  if (o->paged) {
    /* A deliberately non-trivial block table: blocks in reverse pool order. */
    int64_t nb = r.cap / r.block_size;
    r.table = poot_calloc((size_t)nb, sizeof *r.table);
    if (r.table)
      for (int64_t b = 0; b < nb; b++) r.table[b] = (int32_t)(nb - 1 - b);
  }
  if (!out->ids || !out->margins || (keep && !out->logits) || !toks || (o->paged && !r.table)) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "verify: result arrays");
    goto done;
  }
  out->vocab = vocab;
  for (size_t i = 0; i < n_prompt; i++) toks[i] = prompt[i];
  poot_model_step step = {.batch = 1,
                          .tokens = (int64_t)n_prompt,
                          .cap = r.cap,
                          .paged = o->paged,
                          .block_size = r.block_size,
                          .num_blocks = r.cap / r.block_size};
  if ((st = step_graph_init(&pre, model, &step, o->kv_dtype))) goto done;
  step.tokens = 1;
  if (max_ids > 1 && (st = step_graph_init(&dec, model, &step, o->kv_dtype))) goto done;
  int64_t restart = poot_model_rope_restart_length(c);
  uint64_t t0 = poot_time_ns();
  int64_t pos = 0;
  if (max_ids == 0) goto done;
  if ((st = run_step(&r, &pre, toks, (int64_t)n_prompt, 0, &cur))) goto done;
  pos = (int64_t)n_prompt;
  for (;;) {
    if (!cur->has_output || cur->output.type.dtype != POOT_DTYPE_F32 ||
        cur->output.size != (size_t)vocab * sizeof(float)) {
      st = poot_status_make(POOT_INTERNAL, "verify: the step's output is not f32[1, %lld]",
                            (long long)vocab);
      goto done;
    }
    const float *logits = cur->output.data;
    poot_token id;
    float margin;
    pick(logits, vocab, &id, &margin);
    if (o->follow) id = o->follow[out->n_ids];
    if (out->n_ids < keep)
      memcpy(out->logits + out->n_ids * (size_t)vocab, logits, (size_t)vocab * sizeof(float));
    out->ids[out->n_ids] = id;
    out->margins[out->n_ids] = margin;
    out->n_ids++;
    if (!o->ignore_stop && poot_model_is_stop(model, id)) {
      out->stopped = true;
      break;
    }
    if (out->n_ids >= max_ids) break;
    ev->destroy(r.prev);
    r.prev = cur;
    cur = NULL;
    int32_t t32 = id;
    if (restart > 0 && pos == restart) {
      /* The sequence grows past the restart length: run it all again. */
      if ((st = rerun_sequence(&r, model, prompt, n_prompt, out->ids, out->n_ids, &cur))) goto done;
    } else if ((st = run_step(&r, &dec, &t32, 1, pos, &cur))) {
      goto done;
    }
    pos++;
  }
  out->n_logits = out->n_ids < keep ? out->n_ids : keep;
  out->seconds = (double)(poot_time_ns() - t0) * 1e-9;
done:
  ev->destroy(cur);
  ev->destroy(r.prev);
  step_graph_deinit(&pre);
  step_graph_deinit(&dec);
  poot_free(toks);
  poot_free(r.table);
  if (st) poot_verify_greedy_result_deinit(out);
  return st;
}

/* ------------------------------------------------------------ prompts */

poot_status poot_verify_encode_text(const poot_model *model, const char *text, size_t len,
                                    poot_token **out_ids, size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  if (!tok) return BAD("verify: the model was opened without a tokenizer");
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  return poot_tokenizer_encode(tok, text ? text : "", len, &eo, out_ids, out_count);
}

poot_status poot_verify_encode_chat(const poot_model *model, const char *messages_json, size_t len,
                                    poot_token **out_ids, size_t *out_count, char **out_text) {
  *out_ids = NULL;
  *out_count = 0;
  if (out_text) *out_text = NULL;
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  const poot_chat_template *tpl = poot_model_get_chat_template(model);
  if (!tok) return BAD("verify: the model was opened without a tokenizer");
  if (!tpl) return poot_status_make(POOT_UNSUPPORTED, "verify: the model has no chat template");
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_json *msgs = NULL, *vars = NULL;
  char *text = NULL;
  size_t tlen = 0;
  poot_status st = poot_json_parse(&arena, messages_json, len, NULL, &msgs);
  if (st) goto done;
  const poot_json *list = msgs;
  if (msgs->type == POOT_JSON_OBJECT) list = poot_json_get(msgs, "messages");
  if (!list || list->type != POOT_JSON_ARRAY) {
    st = poot_status_make(POOT_FORMAT,
                          "verify: messages must be a JSON array of {role, content} (or an object "
                          "with a 'messages' array)");
    goto done;
  }
  poot_strbuf_puts(&sb, "{\"messages\":");
  poot_json_write(&sb, list, false, false);
  poot_strbuf_puts(&sb, ",\"add_generation_prompt\":true}");
  if ((st = poot_strbuf_status(&sb))) goto done;
  if ((st = poot_json_parse(&arena, sb.data, sb.len, NULL, &vars))) goto done;
  poot_chat_template_render_params p;
  poot_chat_template_render_params_default(&p);
  p.bos_token = poot_model_get_bos_text(model);
  p.eos_token = poot_model_get_eos_text(model);
  p.add_generation_prompt = 1;
  if ((st = poot_chat_template_render(tpl, vars, &p, &text, &tlen, NULL))) goto done;
  poot_tokenizer_encode_options eo = {.add_special = false, .parse_special = true};
  st = poot_tokenizer_encode(tok, text, tlen, &eo, out_ids, out_count);
done:
  if (out_text && !st)
    *out_text = text;
  else
    poot_free(text);
  poot_strbuf_deinit(&sb);
  poot_arena_deinit(&arena);
  return st;
}

poot_status poot_verify_decode(const poot_model *model, const poot_token *prompt, size_t n_prompt,
                               const poot_token *ids, size_t n_ids, bool stopped,
                               poot_strbuf *out) {
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  if (!tok) return BAD("verify: the model was opened without a tokenizer");
  if (stopped && n_ids) n_ids--;
  poot_tokenizer_decode_options dopt = poot_tokenizer_decode_options_default();
  dopt.vocab_rows = poot_model_get_config(model)->vocab_size;
  poot_tokenizer_decoder *dec = NULL;
  POOT_TRY(poot_tokenizer_decoder_create(tok, &dopt, &dec));
  poot_strbuf scratch;
  poot_strbuf_init(&scratch);
  poot_status st = NULL;
  /* The last prompt id sets the decoder's context (the space after BOS). */
  if (n_prompt) st = poot_tokenizer_decoder_push(dec, prompt[n_prompt - 1], &scratch);
  for (size_t i = 0; i < n_ids && !st; i++) st = poot_tokenizer_decoder_push(dec, ids[i], out);
  if (!st) st = poot_tokenizer_decoder_flush(dec, out);
  poot_strbuf_deinit(&scratch);
  poot_tokenizer_decoder_destroy(dec);
  return st;
}
