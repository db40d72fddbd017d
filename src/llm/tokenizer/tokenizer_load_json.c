/* tokenizer_load_json.c — a tokenizer from Hugging Face's tokenizer.json
 * (and, optionally, tokenizer_config.json for the BOS/EOS policy). */
#include <math.h>
#include <string.h>

#include "tokenizer_impl.h"

static const poot_json *jget(const poot_json *o, const char *k) {
  return (o && o->type == POOT_JSON_OBJECT) ? poot_json_get(o, k) : NULL;
}

static bool jstr_is(const poot_json *v, const char *lit) {
  return v && v->type == POOT_JSON_STRING && strlen(lit) == v->len && !memcmp(v->str, lit, v->len);
}

static bool jbool(const poot_json *o, const char *k, bool def) {
  const poot_json *v = jget(o, k);
  return (v && v->type == POOT_JSON_BOOL) ? v->boolean : def;
}

static poot_status unsupported(const char *what, const poot_json *type) {
  if (type && type->type == POOT_JSON_STRING)
    return poot_status_make(POOT_UNSUPPORTED, "tokenizer.json: %s '%.*s' is not supported", what,
                            (int)(type->len > 64 ? 64 : type->len), type->str);
  return poot_status_make(POOT_UNSUPPORTED, "tokenizer.json: this %s is not supported", what);
}

/* A valid id from a JSON number, or -1. */
static int64_t jid(const poot_json *v) {
  if (!v || v->type != POOT_JSON_NUMBER) return -1;
  double d = v->number;
  if (!(d >= 0 && d < 16777216.0 * 64) || d != floor(d)) return -1;
  return (int64_t)d;
}

/* The store of pending text → the arena of the tokenizer: ids are decided
 * before the tokenizer exists, so the loader first measures. */
typedef struct loader {
  const poot_json *root, *model, *added, *vocab;
  poot_tokenizer_kind kind;
  int64_t n;
} loader;

static poot_status add_norm(poot_tokenizer *tok, const poot_json *n) {
  if (!n || n->type == POOT_JSON_NULL) return POOT_OK_STATUS;
  const poot_json *type = jget(n, "type");
  if (jstr_is(type, "Sequence")) {
    const poot_json *list = jget(n, "normalizers");
    if (!list || list->type != POOT_JSON_ARRAY) return unsupported("normalizer", type);
    for (size_t i = 0; i < list->len; i++) POOT_TRY(add_norm(tok, list->items[i]));
    return POOT_OK_STATUS;
  }
  poot__norm_op *op;
  if (jstr_is(type, "NFC"))
    op = poot__tok_add_norm(tok, POOT__NORM_NFC);
  else if (jstr_is(type, "NFD"))
    op = poot__tok_add_norm(tok, POOT__NORM_NFD);
  else if (jstr_is(type, "NFKC"))
    op = poot__tok_add_norm(tok, POOT__NORM_NFKC);
  else if (jstr_is(type, "NFKD"))
    op = poot__tok_add_norm(tok, POOT__NORM_NFKD);
  else if (jstr_is(type, "Lowercase"))
    op = poot__tok_add_norm(tok, POOT__NORM_LOWERCASE);
  else if (jstr_is(type, "StripAccents"))
    op = poot__tok_add_norm(tok, POOT__NORM_STRIP_ACCENTS);
  else if (jstr_is(type, "Prepend")) {
    const poot_json *p = jget(n, "prepend");
    if (!p || p->type != POOT_JSON_STRING) return unsupported("normalizer", type);
    op = poot__tok_add_norm(tok, POOT__NORM_PREPEND);
    if (op) op->a = poot_arena_memdup(&tok->arena, p->str, p->len + 1, 1), op->a_len = p->len;
    if (op && !op->a) return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer.json: normalizer");
  } else if (jstr_is(type, "Replace")) {
    const poot_json *pat = jget(jget(n, "pattern"), "String"), *c = jget(n, "content");
    if (!pat || pat->type != POOT_JSON_STRING || !c || c->type != POOT_JSON_STRING)
      return unsupported("Replace normalizer pattern (only String patterns are)", NULL);
    op = poot__tok_add_norm(tok, POOT__NORM_REPLACE);
    if (op) {
      op->a = poot_arena_memdup(&tok->arena, pat->str, pat->len + 1, 1), op->a_len = pat->len;
      op->b = poot_arena_memdup(&tok->arena, c->str, c->len + 1, 1), op->b_len = c->len;
      if (!op->a || !op->b)
        return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer.json: normalizer");
    }
  } else if (jstr_is(type, "BertNormalizer")) {
    op = poot__tok_add_norm(tok, POOT__NORM_BERT);
    if (op) {
      op->clean_text = jbool(n, "clean_text", true);
      op->handle_chinese = jbool(n, "handle_chinese_chars", true);
      op->lowercase = jbool(n, "lowercase", true);
      op->strip_accents = jbool(n, "strip_accents", op->lowercase);
    }
  } else {
    return unsupported("normalizer", type);
  }
  if (!op) return poot_status_make(POOT_UNSUPPORTED, "tokenizer.json: too many normalizer steps");
  return POOT_OK_STATUS;
}

static poot_status add_pre(poot_tokenizer *tok, const poot_json *p) {
  if (!p || p->type == POOT_JSON_NULL) return POOT_OK_STATUS;
  const poot_json *type = jget(p, "type");
  if (jstr_is(type, "Sequence")) {
    const poot_json *list = jget(p, "pretokenizers");
    if (!list || list->type != POOT_JSON_ARRAY) return unsupported("pre-tokenizer", type);
    for (size_t i = 0; i < list->len; i++) POOT_TRY(add_pre(tok, list->items[i]));
    return POOT_OK_STATUS;
  }
  bool first = tok->n_pre == 0;
  poot__pre_op *op = NULL;
  if (jstr_is(type, "Split")) {
    const poot_json *pat = jget(p, "pattern");
    const poot_json *re = jget(pat, "Regex"), *lit = jget(pat, "String");
    if (!jstr_is(jget(p, "behavior"), "Isolated") || jbool(p, "invert", false))
      return unsupported("Split behaviour (only Isolated is)", NULL);
    op = poot__tok_add_pre(tok, POOT__PRE_SPLIT);
    if (!op) goto full;
    if (re && re->type == POOT_JSON_STRING) {
      POOT_TRY(poot__tok_compile_regex(re->str, re->len, &op->re));
    } else if (lit && lit->type == POOT_JSON_STRING) {
      poot_strbuf sb;
      poot_strbuf_init(&sb);
      poot_strbuf_puts(&sb, "\\Q");
      poot_strbuf_append(&sb, lit->str, lit->len);
      poot_strbuf_puts(&sb, "\\E");
      poot_status st = poot_strbuf_status(&sb);
      if (!st) st = poot__tok_compile_regex(sb.data, sb.len, &op->re);
      poot_strbuf_deinit(&sb);
      POOT_TRY(st);
    } else {
      return unsupported("Split pattern", NULL);
    }
  } else if (jstr_is(type, "ByteLevel")) {
    op = poot__tok_add_pre(tok, POOT__PRE_BYTE_LEVEL);
    if (!op) goto full;
    op->add_prefix_space = jbool(p, "add_prefix_space", true);
    if (op->add_prefix_space && !first)
      return unsupported("ByteLevel pre-tokenizer with add_prefix_space after another step", NULL);
    if (jbool(p, "use_regex", true))
      POOT_TRY(
          poot__tok_compile_regex(poot__tok_gpt2_regex, strlen(poot__tok_gpt2_regex), &op->re));
    tok->byte_level = true;
  } else if (jstr_is(type, "Metaspace")) {
    const poot_json *r = jget(p, "replacement");
    if (r && !jstr_is(r, "\xe2\x96\x81")) return unsupported("Metaspace replacement", r);
    if (!first) return unsupported("Metaspace pre-tokenizer after another step", NULL);
    op = poot__tok_add_pre(tok, POOT__PRE_METASPACE);
    if (!op) goto full;
    const poot_json *scheme = jget(p, "prepend_scheme");
    if (jstr_is(scheme, "first"))
      op->prepend_scheme = POOT__PREPEND_FIRST;
    else if (jstr_is(scheme, "never"))
      op->prepend_scheme = POOT__PREPEND_NEVER;
    else if (scheme)
      op->prepend_scheme = POOT__PREPEND_ALWAYS;
    else
      op->prepend_scheme =
          jbool(p, "add_prefix_space", true) ? POOT__PREPEND_ALWAYS : POOT__PREPEND_NEVER;
    op->split = jbool(p, "split", true);
    if (op->prepend_scheme != POOT__PREPEND_NEVER) tok->strip_prefix_space = true;
  } else if (jstr_is(type, "BertPreTokenizer")) {
    op = poot__tok_add_pre(tok, POOT__PRE_BERT);
    if (!op) goto full;
  } else if (jstr_is(type, "WhitespaceSplit")) {
    op = poot__tok_add_pre(tok, POOT__PRE_WHITESPACE_SPLIT);
    if (!op) goto full;
  } else if (jstr_is(type, "Whitespace")) {
    op = poot__tok_add_pre(tok, POOT__PRE_WHITESPACE_SPLIT);
    if (!op) goto full;
    POOT_TRY(poot__tok_add_split(tok, "\\w+|[^\\w\\s]+"));
  } else if (jstr_is(type, "Digits")) {
    op = poot__tok_add_pre(tok, POOT__PRE_DIGITS);
    if (!op) goto full;
    op->individual = jbool(p, "individual_digits", false);
  } else {
    return unsupported("pre-tokenizer", type);
  }
  return POOT_OK_STATUS;
full:
  return poot_status_make(POOT_UNSUPPORTED, "tokenizer.json: too many pre-tokenizer steps");
}

static poot_token id_of_json_token(const poot_tokenizer *tok, const poot_json *v) {
  if (v && v->type == POOT_JSON_OBJECT) v = jget(v, "content");
  if (!v || v->type != POOT_JSON_STRING) return POOT_TOKEN_NONE;
  return poot__tok_lookup(tok, v->str, v->len);
}

/* BOS/EOS policy from the post-processor, then tokenizer_config.json. */
static poot_status apply_post(poot_tokenizer *tok, const poot_json *post, const poot_json *cfg) {
  const poot_json *type = jget(post, "type");
  if (jstr_is(type, "TemplateProcessing")) {
    const poot_json *single = jget(post, "single");
    if (single && single->type == POOT_JSON_ARRAY && single->len) {
      const poot_json *first = jget(single->items[0], "SpecialToken");
      const poot_json *last = jget(single->items[single->len - 1], "SpecialToken");
      if (first) {
        poot_token id = id_of_json_token(tok, jget(first, "id"));
        if (id != POOT_TOKEN_NONE) tok->bos = id, tok->add_bos = true;
      }
      if (last && single->len > 1) {
        poot_token id = id_of_json_token(tok, jget(last, "id"));
        if (id != POOT_TOKEN_NONE) {
          if (tok->kind == POOT_TOKENIZER_WORDPIECE)
            tok->sep = id, tok->add_sep = true;
          else
            tok->eos = id, tok->add_eos = true;
        }
      }
    }
  } else if (jstr_is(type, "BertProcessing") || jstr_is(type, "RobertaProcessing")) {
    const poot_json *cls = jget(post, "cls"), *sep = jget(post, "sep");
    if (cls && cls->type == POOT_JSON_ARRAY && cls->len == 2) {
      int64_t id = jid(cls->items[1]);
      if (id >= 0 && id < tok->n_tokens) tok->bos = (poot_token)id, tok->add_bos = true;
    }
    if (sep && sep->type == POOT_JSON_ARRAY && sep->len == 2) {
      int64_t id = jid(sep->items[1]);
      if (id >= 0 && id < tok->n_tokens) {
        if (tok->kind == POOT_TOKENIZER_WORDPIECE)
          tok->sep = (poot_token)id, tok->add_sep = true;
        else
          tok->eos = (poot_token)id, tok->add_eos = true;
      }
    }
  }
  if (cfg) {
    poot_token id = id_of_json_token(tok, jget(cfg, "bos_token"));
    if (id != POOT_TOKEN_NONE && (tok->bos == POOT_TOKEN_NONE || !tok->add_bos)) tok->bos = id;
    id = id_of_json_token(tok, jget(cfg, "eos_token"));
    if (id != POOT_TOKEN_NONE && (tok->eos == POOT_TOKEN_NONE || !tok->add_eos)) tok->eos = id;
    id = id_of_json_token(tok, jget(cfg, "pad_token"));
    if (id != POOT_TOKEN_NONE) tok->pad = id;
    const poot_json *v = jget(cfg, "add_bos_token");
    if (v && v->type == POOT_JSON_BOOL) tok->add_bos = v->boolean;
    v = jget(cfg, "add_eos_token");
    if (v && v->type == POOT_JSON_BOOL) tok->add_eos = v->boolean;
  }
  return POOT_OK_STATUS;
}

/* model.type (or, without one, the shape of the model): the tokenizer kind,
 * with the vocabulary and added tokens checked for their shape. */
static poot_status json_kind(const poot_json *model, const poot_json *added,
                             poot_tokenizer_kind *out_kind) {
  *out_kind = POOT_TOKENIZER_BPE;
  const poot_json *type = jget(model, "type"), *vocab = jget(model, "vocab");
  const poot_json *merges = jget(model, "merges");
  poot_tokenizer_kind kind;
  if (jstr_is(type, "BPE") || (!type && merges))
    kind = POOT_TOKENIZER_BPE;
  else if (jstr_is(type, "Unigram") || (!type && vocab && vocab->type == POOT_JSON_ARRAY))
    kind = POOT_TOKENIZER_UNIGRAM;
  else if (jstr_is(type, "WordPiece") || (!type && vocab))
    kind = POOT_TOKENIZER_WORDPIECE;
  else
    return unsupported("model type", type);
  if (!vocab || (kind == POOT_TOKENIZER_UNIGRAM ? vocab->type != POOT_JSON_ARRAY
                                                : vocab->type != POOT_JSON_OBJECT))
    return poot_status_make(POOT_FORMAT, "tokenizer.json: model.vocab has the wrong shape");
  if (added && added->type != POOT_JSON_ARRAY)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: added_tokens is not an array");
  *out_kind = kind;
  return POOT_OK_STATUS;
}

/* The vocabulary size: one past the largest id. */
static poot_status json_vocab_size(poot_tokenizer_kind kind, const poot_json *vocab,
                                   const poot_json *added, int64_t *out_n) {
  int64_t n = 0;
  if (kind == POOT_TOKENIZER_UNIGRAM) {
    n = (int64_t)vocab->len;
  } else {
    for (size_t i = 0; i < vocab->len; i++) {
      int64_t id = jid(vocab->items[i]);
      if (id < 0)
        return poot_status_make(POOT_FORMAT, "tokenizer.json: vocab entry %zu has a bad id", i);
      if (id + 1 > n) n = id + 1;
    }
  }
  for (size_t i = 0; added && i < added->len; i++) {
    int64_t id = jid(jget(added->items[i], "id"));
    const poot_json *c = jget(added->items[i], "content");
    if (id < 0 || !c || c->type != POOT_JSON_STRING)
      return poot_status_make(POOT_FORMAT, "tokenizer.json: added token %zu is malformed", i);
    if (id + 1 > n) n = id + 1;
  }
  if (n <= 0 || n > (int64_t)vocab->len + (added ? (int64_t)added->len : 0) + 1024)
    return poot_status_make(POOT_FORMAT,
                            "tokenizer.json: the ids span %lld tokens for %zu "
                            "entries",
                            (long long)n, vocab->len);
  *out_n = n;
  return POOT_OK_STATUS;
}

/* One unigram piece, ["text", score]; *min_score tracks the lowest score. */
static poot_status json_unigram_piece(poot_tokenizer *tok, const poot_json *e, size_t i,
                                      float *min_score) {
  if (e->type != POOT_JSON_ARRAY || e->len != 2 || e->items[0]->type != POOT_JSON_STRING ||
      e->items[1]->type != POOT_JSON_NUMBER)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: unigram piece %zu is malformed", i);
  /* Checked as a double, before it becomes a float: -4e64 is finite
   * here but -inf as a float, and a score of -inf left the Viterbi
   * search without a path. */
  double dscore = e->items[1]->number;
  if (!poot__tok_score_ok(dscore))
    return poot_status_make(POOT_FORMAT,
                            "tokenizer.json: unigram piece %zu has the score %g; a score must "
                            "be finite and within ±%g (scores are log-probabilities)",
                            i, dscore, POOT__TOK_SCORE_LIMIT);
  float score = (float)dscore;
  if (score < *min_score) *min_score = score;
  return poot__tok_set(tok, (int32_t)i, e->items[0]->str, e->items[0]->len, score, 0);
}

/* The vocabulary and the added tokens into `tok`. */
static poot_status json_vocab(poot_tokenizer *tok, const poot_json *vocab, const poot_json *added,
                              float *out_min_score) {
  *out_min_score = 0;
  for (size_t i = 0; i < vocab->len; i++) {
    if (tok->kind == POOT_TOKENIZER_UNIGRAM) {
      POOT_TRY(json_unigram_piece(tok, vocab->items[i], i, out_min_score));
    } else {
      int64_t id = jid(vocab->items[i]);
      POOT_TRY(poot__tok_set(tok, (int32_t)id, vocab->keys[i], vocab->key_lens[i],
                             tok->kind == POOT_TOKENIZER_BPE ? -(float)id : 0.0f, 0));
    }
  }
  for (size_t i = 0; added && i < added->len; i++) {
    const poot_json *a = added->items[i];
    const poot_json *c = jget(a, "content");
    uint32_t attr =
        jbool(a, "special", false) ? POOT_TOKEN_ATTR_CONTROL : POOT_TOKEN_ATTR_USER_DEFINED;
    if (jbool(a, "lstrip", false)) attr |= POOT_TOKEN_ATTR_LSTRIP;
    if (jbool(a, "rstrip", false)) attr |= POOT_TOKEN_ATTR_RSTRIP;
    POOT_TRY(poot__tok_set(tok, (int32_t)jid(jget(a, "id")), c->str, c->len, 0.0f, attr));
  }
  return POOT_OK_STATUS;
}

/* The model's options (byte fallback, ignore_merges, the subword prefix,
 * the unknown token of a unigram model). */
static poot_status json_model_options(poot_tokenizer *tok, const poot_json *model, int64_t n,
                                      float min_score) {
  poot_tokenizer_kind kind = tok->kind;
  tok->byte_fallback = jbool(model, "byte_fallback", false);
  tok->ignore_merges = jbool(model, "ignore_merges", false);
  tok->fuse_unk = jbool(model, "fuse_unk", kind == POOT_TOKENIZER_UNIGRAM);
  if (kind == POOT_TOKENIZER_BPE) {
    const poot_json *pre = jget(model, "continuing_subword_prefix"),
                    *suf = jget(model, "end_of_word_suffix");
    if ((pre && pre->type == POOT_JSON_STRING && pre->len) ||
        (suf && suf->type == POOT_JSON_STRING && suf->len))
      return unsupported("BPE continuing_subword_prefix / end_of_word_suffix", NULL);
  }
  if (kind == POOT_TOKENIZER_WORDPIECE) {
    const poot_json *pre = jget(model, "continuing_subword_prefix");
    if (pre && !jstr_is(pre, "##")) return unsupported("WordPiece continuing_subword_prefix", pre);
    int64_t mc = jid(jget(model, "max_input_chars_per_word"));
    if (mc > 0) tok->wp_max_chars = (uint32_t)mc;
    tok->strip_prefix_space = true;
  }
  if (kind == POOT_TOKENIZER_UNIGRAM) {
    tok->unigram_unk_score = min_score - 10.0f;
    int64_t u = jid(jget(model, "unk_id"));
    if (u >= 0 && u < n) tok->unk = (poot_token)u;
  }
  if (tok->byte_fallback)
    for (int32_t i = 0; i < tok->n_tokens; i++) {
      poot__tok_entry *e = &tok->tokens[i];
      if (e->text && e->len == 6 && !memcmp(e->text, "<0x", 3) && e->text[5] == '>' &&
          (e->attr & POOT_TOKEN_ATTR_NORMAL))
        e->attr = POOT_TOKEN_ATTR_BYTE;
    }
  return POOT_OK_STATUS;
}

/* model.merges of a BPE model: "a b" strings or ["a", "b"] pairs, by rank. */
static poot_status json_merges(poot_tokenizer *tok, const poot_json *merges) {
  if (!merges || merges->type != POOT_JSON_ARRAY)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: a BPE model without merges");
  for (size_t i = 0; i < merges->len; i++) {
    const poot_json *m = merges->items[i];
    const char *a, *b;
    size_t al, bl;
    if (m->type == POOT_JSON_STRING) {
      const char *sp = m->len > 1 ? memchr(m->str + 1, ' ', m->len - 1) : NULL;
      if (!sp) return poot_status_make(POOT_FORMAT, "tokenizer.json: merge %zu has no space", i);
      a = m->str, al = (size_t)(sp - m->str), b = sp + 1, bl = m->len - al - 1;
    } else if (m->type == POOT_JSON_ARRAY && m->len == 2 && m->items[0]->type == POOT_JSON_STRING &&
               m->items[1]->type == POOT_JSON_STRING) {
      a = m->items[0]->str, al = m->items[0]->len, b = m->items[1]->str, bl = m->items[1]->len;
    } else {
      return poot_status_make(POOT_FORMAT, "tokenizer.json: merge %zu is malformed", i);
    }
    POOT_TRY(poot__tok_add_merge(tok, a, al, b, bl, (uint32_t)i));
  }
  return POOT_OK_STATUS;
}

/* Everything after the vocabulary: options, normalizer, pre-tokenizer,
 * finishing, the unknown token, merges and the post-processor. */
static poot_status json_pipeline(poot_tokenizer *tok, const poot_json *root, const poot_json *model,
                                 const poot_json *cfg, int64_t n, float min_score) {
  POOT_TRY(json_model_options(tok, model, n, min_score));
  POOT_TRY(add_norm(tok, jget(root, "normalizer")));
  POOT_TRY(add_pre(tok, jget(root, "pre_tokenizer")));
  for (size_t i = 0; i < tok->n_norm; i++)
    if (tok->norm[i].type == POOT__NORM_PREPEND) tok->strip_prefix_space = true;
  POOT_TRY(poot__tok_finish(tok));
  if (tok->kind != POOT_TOKENIZER_UNIGRAM) {
    const poot_json *unk = jget(model, "unk_token");
    if (unk && unk->type == POOT_JSON_STRING) tok->unk = poot__tok_lookup(tok, unk->str, unk->len);
  }
  if (tok->kind == POOT_TOKENIZER_BPE) POOT_TRY(json_merges(tok, jget(model, "merges")));
  return apply_post(tok, jget(root, "post_processor"), cfg);
}

static poot_status load(poot_arena *arena, const char *json, size_t json_len, const char *config,
                        size_t config_len, poot_tokenizer **out_tok) {
  poot_json *root = NULL, *cfg = NULL;
  POOT_TRY(poot_json_parse(arena, json, json_len, NULL, &root));
  if (config && config_len) {
    poot_status s = poot_json_parse(arena, config, config_len, NULL, &cfg);
    if (s) return poot_status_annotate(s, "tokenizer_config.json");
    if (cfg->type != POOT_JSON_OBJECT) cfg = NULL;
  }
  if (root->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: the top level is not an object");
  const poot_json *model = jget(root, "model"), *added = jget(root, "added_tokens");
  if (!model || model->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: no \"model\" object");
  poot_tokenizer_kind kind = POOT_TOKENIZER_BPE;
  POOT_TRY(json_kind(model, added, &kind));
  const poot_json *vocab = jget(model, "vocab");
  int64_t n = 0;
  POOT_TRY(json_vocab_size(kind, vocab, added, &n));
  poot_tokenizer *tok;
  POOT_TRY(poot__tok_new(kind, (int32_t)n, &tok));
  float min_score = 0;
  poot_status st = json_vocab(tok, vocab, added, &min_score);
  if (!st) st = json_pipeline(tok, root, model, cfg, n, min_score);
  if (st) {
    poot_tokenizer_destroy(tok);
    return st;
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
}

poot_status poot_tokenizer_load_hf_json(const char *json, size_t json_len, const char *config_json,
                                        size_t config_len, poot_tokenizer **out_tok) {
  *out_tok = NULL;
  if (!json) return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer.json: no text given");
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_status st = load(&arena, json, json_len, config_json, config_len, out_tok);
  poot_arena_deinit(&arena);
  return st;
}
