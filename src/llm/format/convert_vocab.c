/* Tokenizer metadata for `poot convert`: llama2.c tokenizer files and
 * Hugging Face tokenizer.json, written as llama.cpp's converters write them
 * (tokenizer.ggml.model, tokens, scores or merges, token_type, special token
 * ids, add_bos/add_eos, chat templates). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_impl.h"

#define SPIECE_SPACE "\xe2\x96\x81" /* U+2581, SentencePiece's space */

poot_status poot__read_json(poot_arena *arena, const char *path, const poot_json **out_root) {
  *out_root = NULL;
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_file_read_all(path, &text, &len));
  poot_json *root = NULL;
  poot_status s = poot_json_parse(arena, text, len, NULL, &root);
  poot_free(text);
  if (s) return poot_status_annotate(s, "'%s'", path);
  *out_root = root;
  return NULL;
}

static bool is_byte_token(const char *s, size_t n) {
  if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return false;
  for (int i = 3; i < 5; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

poot_status poot__convert_vocab_llama2c(poot_gguf_writer *w, const poot_llama2c_vocab *v) {
  poot_status s = NULL;
  size_t n = (size_t)v->n_tokens;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  const char **toks = POOT_ARENA_NEW_ARRAY(&arena, const char *, n);
  size_t *lens = POOT_ARENA_NEW_ARRAY(&arena, size_t, n);
  int32_t *types = POOT_ARENA_NEW_ARRAY(&arena, int32_t, n);
  if (!toks || !lens || !types) {
    s = poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    const char *t = v->tokens[i];
    size_t len = v->token_lens[i];
    int32_t type = POOT__TOKEN_NORMAL;
    /* llama.cpp's converter: ids 0, 1, 2 are <unk>, <s>, </s> (the file
     * spells the latter two with newlines around them). */
    if (i == 0) {
      t = "<unk>", len = 5, type = POOT__TOKEN_UNKNOWN;
    } else if (i == 1) {
      t = "<s>", len = 3, type = POOT__TOKEN_CONTROL;
    } else if (i == 2) {
      t = "</s>", len = 4, type = POOT__TOKEN_CONTROL;
    } else if (is_byte_token(t, len)) {
      type = POOT__TOKEN_BYTE;
    } else {
      /* Spaces back to SentencePiece's U+2581. */
      size_t spaces = 0;
      for (size_t k = 0; k < len; k++) spaces += t[k] == ' ';
      if (spaces) {
        char *e = poot_arena_alloc(&arena, len + 2 * spaces + 1, 1);
        if (!e) {
          s = poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
          goto done;
        }
        size_t o = 0;
        for (size_t k = 0; k < len; k++) {
          if (t[k] == ' ') {
            memcpy(e + o, SPIECE_SPACE, 3);
            o += 3;
          } else {
            e[o++] = t[k];
          }
        }
        t = e;
        len = o;
      }
    }
    toks[i] = t;
    lens[i] = len;
    types[i] = type;
  }
  if ((s = poot_gguf_writer_set_string(w, "tokenizer.ggml.model", "llama", 5))) goto done;
  if ((s = poot_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", toks, lens, n))) goto done;
  if ((s = poot_gguf_writer_set_array(w, "tokenizer.ggml.scores", POOT_GGUF_VALUE_F32, v->scores,
                                      n)))
    goto done;
  if ((s = poot_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_I32, types,
                                      n)))
    goto done;
  if ((s = poot_gguf_writer_set_u32(w, "tokenizer.ggml.unknown_token_id", 0))) goto done;
  if ((s = poot_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 1))) goto done;
  s = poot_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 2);
done:
  poot_arena_deinit(&arena);
  return s;
}

/* ---------------------------------------------------------- tokenizer.json */

typedef struct hf_vocab {
  poot_arena *arena;
  size_t n;          /* vocabulary size */
  const char **toks; /* NULL where no token has the id */
  size_t *lens;
  int32_t *types;
  float *scores;
  const poot_json *added; /* added_tokens array or NULL */
  const poot_json *tok_json;
  const poot_json *tok_config; /* tokenizer_config.json or NULL */
} hf_vocab;

static poot_status json_id(const poot_json *v, const char *what, int64_t *out) {
  if (!v || v->type != POOT_JSON_NUMBER || v->number < 0 || v->number > 1e9 ||
      v->number != (double)(int64_t)v->number)
    return poot_status_make(POOT_FORMAT, "tokenizer.json: %s is not a token id", what);
  *out = (int64_t)v->number;
  return NULL;
}

/* The id of the token spelled `text` (vocab or added tokens), or -1. */
static int64_t find_token(const hf_vocab *v, const char *text, size_t len) {
  for (size_t i = 0; i < v->n; i++)
    if (v->toks[i] && v->lens[i] == len && memcmp(v->toks[i], text, len) == 0) return (int64_t)i;
  return -1;
}

/* llama.cpp's converter treats some added tokens as control tokens even
 * when tokenizer.json does not mark them special (does_token_look_special). */
static bool looks_special(const char *t, size_t n) {
  static const char *const exact[] = {"<pad>", "<mask>", "<2mass>", "[@BOS@]"};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (n == strlen(exact[i]) && memcmp(t, exact[i], n) == 0) return true;
#define POOT__WRAPPED(a, b)                                      \
  (n >= strlen(a) + strlen(b) && memcmp(t, a, strlen(a)) == 0 && \
   memcmp(t + n - strlen(b), b, strlen(b)) == 0)
  bool r = POOT__WRAPPED("<|", "|>") || POOT__WRAPPED("<\xef\xbd\x9c", "\xef\xbd\x9c>") ||
           POOT__WRAPPED("<unused", ">");
#undef POOT__WRAPPED
  return r;
}

/* The most tokens a converted vocabulary may have. */
#define POOT__MAX_VOCAB (1 << 24)

static poot_status build_vocab(hf_vocab *v, const poot_hf_config *config, bool spm) {
  const poot_json *model = poot_json_get(v->tok_json, "model");
  const poot_json *vocab = poot_json_get(model, "vocab");
  if (!vocab || vocab->type != POOT_JSON_OBJECT)
    return poot_status_make(POOT_UNSUPPORTED,
                            "tokenizer.json: model.vocab is not an object of token → id");
  v->added = poot_json_get(v->tok_json, "added_tokens");
  if (v->added && v->added->type != POOT_JSON_ARRAY) v->added = NULL;
  int64_t max_id = -1;
  for (size_t i = 0; i < vocab->len; i++) {
    int64_t id = 0;
    POOT_TRY(json_id(vocab->items[i], "a model.vocab value", &id));
    if (id > max_id) max_id = id;
  }
  for (size_t i = 0; v->added && i < v->added->len; i++) {
    int64_t id = 0;
    POOT_TRY(json_id(poot_json_get(v->added->items[i], "id"), "an added token's id", &id));
    if (id > max_id) max_id = id;
  }
  int64_t n = config && config->vocab_size > 0 ? config->vocab_size : max_id + 1;
  /* The table is allocated by the largest id, so a single stray id (or
   * vocab_size) must not ask for gigabytes: no real vocabulary comes near
   * 2^24 tokens. */
  if (n > POOT__MAX_VOCAB)
    return poot_status_make(POOT_FORMAT,
                            "tokenizer.json/config.json: a vocabulary of %lld tokens (largest id "
                            "%lld) exceeds poot's limit of %d",
                            (long long)n, (long long)max_id, POOT__MAX_VOCAB);
  if (max_id >= n)
    return poot_status_make(POOT_FORMAT,
                            "tokenizer.json has token id %lld but config.json's vocab_size is %lld",
                            (long long)max_id, (long long)n);
  v->n = (size_t)n;
  v->toks = POOT_ARENA_NEW_ARRAY(v->arena, const char *, v->n);
  v->lens = POOT_ARENA_NEW_ARRAY(v->arena, size_t, v->n);
  v->types = POOT_ARENA_NEW_ARRAY(v->arena, int32_t, v->n);
  v->scores = POOT_ARENA_NEW_ARRAY(v->arena, float, v->n);
  if (!v->toks || !v->lens || !v->types || !v->scores)
    return poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
  for (size_t i = 0; i < vocab->len; i++) {
    size_t id = (size_t)vocab->items[i]->number;
    v->toks[id] = vocab->keys[i];
    v->lens[id] = vocab->key_lens[i];
    v->types[id] = POOT__TOKEN_NORMAL;
    v->scores[id] = 0.0f; /* SentencePiece scores: spm_scores() */
    if (spm && is_byte_token(v->toks[id], v->lens[id])) v->types[id] = POOT__TOKEN_BYTE;
  }
  const poot_json *unk = poot_json_get(model, "unk_token");
  for (size_t i = 0; v->added && i < v->added->len; i++) {
    const poot_json *a = v->added->items[i];
    const poot_json *content = poot_json_get(a, "content"), *special = poot_json_get(a, "special");
    if (!content || content->type != POOT_JSON_STRING)
      return poot_status_make(POOT_FORMAT, "tokenizer.json: added token %zu has no content", i);
    size_t id = (size_t)poot_json_get(a, "id")->number;
    v->toks[id] = content->str;
    v->lens[id] = content->len;
    bool is_special = special && special->type == POOT_JSON_BOOL && special->boolean;
    v->types[id] = is_special || looks_special(content->str, content->len)
                       ? POOT__TOKEN_CONTROL
                       : POOT__TOKEN_USER_DEFINED;
    v->scores[id] = 0.0f;
  }
  if (spm && unk && unk->type == POOT_JSON_STRING) {
    int64_t id = find_token(v, unk->str, unk->len);
    if (id >= 0) v->types[id] = POOT__TOKEN_UNKNOWN;
  }
  /* Ids no token uses: llama.cpp writes "[PAD<id>]" as UNUSED. */
  for (size_t i = 0; i < v->n; i++) {
    if (v->toks[i]) continue;
    char buf[32];
    int k = snprintf(buf, sizeof buf, "[PAD%zu]", i);
    v->toks[i] = poot_arena_strndup(v->arena, buf, (size_t)k);
    if (!v->toks[i]) return poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
    v->lens[i] = (size_t)k;
    v->types[i] = POOT__TOKEN_UNUSED;
    v->scores[i] = 0.0f;
  }
  return NULL;
}

/* The two parts of merge `m` ("a b" or [a, b]); false when it is neither. */
static bool merge_parts(const poot_json *m, const char **a, size_t *a_len, const char **b,
                        size_t *b_len) {
  if (m->type == POOT_JSON_STRING) {
    const char *sp = memchr(m->str, ' ', m->len);
    if (!sp) return false;
    *a = m->str, *a_len = (size_t)(sp - m->str);
    *b = sp + 1, *b_len = m->len - *a_len - 1;
    return true;
  }
  if (m->type != POOT_JSON_ARRAY || m->len != 2 || m->items[0]->type != POOT_JSON_STRING ||
      m->items[1]->type != POOT_JSON_STRING)
    return false;
  *a = m->items[0]->str, *a_len = m->items[0]->len;
  *b = m->items[1]->str, *b_len = m->items[1]->len;
  return true;
}

/* SentencePiece scores that reproduce the tokenizer.json's merge order.
 * tokenizer.json has no scores, and the SentencePiece BPE that reads a
 * "llama" vocabulary (llama.cpp's, poot's) merges the adjacent pair whose
 * concatenation has the highest score, leftmost first, while tokenizers'
 * BPE merges the pair of lowest merge rank. A token made by merge rank r
 * scores -r (its first merge: the merges that make one token are adjacent in
 * files converted from SentencePiece, so ranks and scores order pairs
 * alike); every token no merge makes (bytes, single characters, special
 * and added tokens, unused ids) scores below all of them, -(merges + id). */
static poot_status spm_scores(hf_vocab *v, const poot_json *merges) {
  size_t n_merges = merges && merges->type == POOT_JSON_ARRAY ? merges->len : 0;
  poot_map by_text;
  poot_map_init(&by_text);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status s = NULL;
  for (size_t i = 0; i < v->n && !s; i++) {
    v->scores[i] = -(float)(n_merges + i);
    if (v->types[i] == POOT__TOKEN_NORMAL && !poot_map_get(&by_text, v->toks[i], v->lens[i], NULL))
      s = poot_map_put(&by_text, v->toks[i], v->lens[i], (uint64_t)i);
  }
  uint8_t *scored = s ? NULL : poot_calloc(v->n ? v->n : 1, 1);
  if (!s && !scored) s = poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
  for (size_t r = 0; r < n_merges && !s; r++) {
    const char *a, *b;
    size_t a_len, b_len;
    if (!merge_parts(merges->items[r], &a, &a_len, &b, &b_len)) {
      s = poot_status_make(POOT_FORMAT, "tokenizer.json: merge %zu is not \"a b\" or [a, b]", r);
      break;
    }
    poot_strbuf_clear(&sb);
    poot_strbuf_append(&sb, a, a_len);
    poot_strbuf_append(&sb, b, b_len);
    if ((s = poot_strbuf_status(&sb))) break;
    uint64_t id;
    if (!poot_map_get(&by_text, sb.data, sb.len, &id) || scored[id]) continue;
    scored[id] = 1;
    v->scores[id] = -(float)r;
  }
  poot_free(scored);
  poot_strbuf_deinit(&sb);
  poot_map_deinit(&by_text);
  return s;
}

/* Merges as "a b" strings; pairs with spaces encode them as U+0120 like the
 * gguf package does for the list form. */
static poot_status write_merges(poot_gguf_writer *w, poot_arena *arena, const poot_json *merges) {
  if (!merges || merges->type != POOT_JSON_ARRAY)
    return poot_status_make(POOT_UNSUPPORTED, "tokenizer.json: BPE model without merges");
  size_t n = merges->len;
  const char **strs = POOT_ARENA_NEW_ARRAY(arena, const char *, n ? n : 1);
  size_t *lens = POOT_ARENA_NEW_ARRAY(arena, size_t, n ? n : 1);
  if (!strs || !lens) return poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
  for (size_t i = 0; i < n; i++) {
    const poot_json *m = merges->items[i];
    if (m->type == POOT_JSON_STRING) {
      strs[i] = m->str;
      lens[i] = m->len;
      continue;
    }
    if (m->type != POOT_JSON_ARRAY || m->len != 2 || m->items[0]->type != POOT_JSON_STRING ||
        m->items[1]->type != POOT_JSON_STRING)
      return poot_status_make(POOT_FORMAT, "tokenizer.json: merge %zu is not \"a b\" or [a, b]", i);
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    for (int p = 0; p < 2; p++) {
      if (p) poot_strbuf_putc(&sb, ' ');
      const poot_json *part = m->items[p];
      for (size_t k = 0; k < part->len; k++) {
        if (part->str[k] == ' ')
          poot_strbuf_append(&sb, "\xc4\xa0", 2);
        else
          poot_strbuf_putc(&sb, part->str[k]);
      }
    }
    poot_status s = poot_strbuf_status(&sb);
    if (!s) {
      strs[i] = poot_arena_memdup(arena, sb.data, sb.len + 1, 1);
      lens[i] = sb.len;
      if (!strs[i]) s = poot_status_make(POOT_OUT_OF_MEMORY, "convert: out of memory");
    }
    poot_strbuf_deinit(&sb);
    POOT_TRY(s);
  }
  return poot_gguf_writer_set_string_array(w, "tokenizer.ggml.merges", strs, lens, n);
}

/* llama.cpp names pre-tokenizers by what they do; recognize the common
 * regular expressions. */
static const char *detect_pre(const poot_json *tok_json) {
  const poot_json *pre = poot_json_get(tok_json, "pre_tokenizer");
  if (!pre) return "default";
  const poot_json *list = poot_json_get(pre, "pretokenizers");
  size_t n = list && list->type == POOT_JSON_ARRAY ? list->len : 1;
  for (size_t i = 0; i < n; i++) {
    const poot_json *p = list && list->type == POOT_JSON_ARRAY ? list->items[i] : pre;
    const poot_json *type = poot_json_get(p, "type");
    if (!type || type->type != POOT_JSON_STRING) continue;
    if (strcmp(type->str, "Split") == 0) {
      const poot_json *re = poot_json_get(poot_json_get(p, "pattern"), "Regex");
      if (!re || re->type != POOT_JSON_STRING) continue;
      bool contractions = strstr(re->str, "(?i:'s|'t|'re|'ve|'m|'ll|'d)") != NULL;
      if (contractions && strstr(re->str, "\\p{N}{1,3}")) return "llama-bpe";
      if (contractions && strstr(re->str, "\\p{N}|")) return "qwen2";
    } else if (strcmp(type->str, "ByteLevel") == 0) {
      const poot_json *use_regex = poot_json_get(p, "use_regex");
      if (!use_regex || (use_regex->type == POOT_JSON_BOOL && use_regex->boolean)) return "gpt-2";
    }
  }
  return "default";
}

/* A special token setting of tokenizer_config.json: a string or an
 * AddedToken object with "content". */
static bool config_token(const poot_json *cfg, const char *key, const char **out, size_t *out_len) {
  const poot_json *t = poot_json_get(cfg, key);
  if (t && t->type == POOT_JSON_OBJECT) t = poot_json_get(t, "content");
  if (!t || t->type != POOT_JSON_STRING) return false;
  *out = t->str;
  *out_len = t->len;
  return true;
}

/* The end ids beyond the EOS: config.json's and generation_config.json's
 * eos_token_id lists (Llama 3: <|end_of_text|>, <|eot_id|>; Llama 3.1 adds
 * <|eom_id|>). GGUF has one key per kind, tokenizer.ggml.eot_token_id and
 * tokenizer.ggml.eom_token_id (llama.cpp's SpecialVocab fills the same
 * keys); a token spelled <|eom_id|> is the EOM, the first other id the EOT,
 * a second other id the EOM when that is still free. */
static poot_status write_end_ids(poot_gguf_writer *w, const hf_vocab *v,
                                 const poot_hf_config *config, const char *folder, int64_t eos) {
  int64_t ids[2 * POOT_HF_MAX_EOS];
  size_t n = 0;
  for (size_t i = 0; config && i < config->n_eos_token_ids; i++)
    ids[n++] = config->eos_token_ids[i];
  char path[4200];
  snprintf(path, sizeof path, "%s/generation_config.json", folder);
  struct stat sb;
  if (stat(path, &sb) == 0) {
    poot_hf_generation_config *g = NULL;
    POOT_TRY(poot_hf_generation_config_load(path, &g));
    for (size_t i = 0; i < g->n_eos_token_ids; i++) ids[n++] = g->eos_token_ids[i];
    poot_hf_generation_config_destroy(g);
  }
  int64_t eot = -1, eom = -1;
  for (size_t i = 0; i < n; i++) {
    int64_t id = ids[i];
    if (id < 0 || (size_t)id >= v->n || id == eos || id == eot || id == eom) continue;
    bool is_eom = v->lens[id] == 10 && memcmp(v->toks[id], "<|eom_id|>", 10) == 0;
    if (is_eom && eom < 0)
      eom = id;
    else if (eot < 0)
      eot = id;
    else if (eom < 0)
      eom = id;
  }
  if (eot >= 0) POOT_TRY(poot_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", (uint32_t)eot));
  if (eom >= 0) POOT_TRY(poot_gguf_writer_set_u32(w, "tokenizer.ggml.eom_token_id", (uint32_t)eom));
  return NULL;
}

static poot_status write_specials(poot_gguf_writer *w, const hf_vocab *v,
                                  const poot_hf_config *config, const char *folder) {
  static const struct {
    const char *cfg_key;
    const char *gguf_key;
  } specials[] = {{"bos_token", "tokenizer.ggml.bos_token_id"},
                  {"eos_token", "tokenizer.ggml.eos_token_id"},
                  {"unk_token", "tokenizer.ggml.unknown_token_id"},
                  {"sep_token", "tokenizer.ggml.seperator_token_id"},
                  {"pad_token", "tokenizer.ggml.padding_token_id"}};
  int64_t ids[5] = {-1, -1, -1, -1, -1};
  for (int i = 0; i < 5; i++) {
    const char *text;
    size_t len;
    if (v->tok_config && config_token(v->tok_config, specials[i].cfg_key, &text, &len))
      ids[i] = find_token(v, text, len);
  }
  /* config.json fills what tokenizer_config.json did not say. */
  if (config) {
    if (ids[0] < 0) ids[0] = config->bos_token_id;
    if (ids[1] < 0 && config->n_eos_token_ids) ids[1] = config->eos_token_ids[0];
    if (ids[4] < 0) ids[4] = config->pad_token_id;
  }
  for (int i = 0; i < 5; i++)
    if (ids[i] >= 0 && (size_t)ids[i] < v->n)
      POOT_TRY(poot_gguf_writer_set_u32(w, specials[i].gguf_key, (uint32_t)ids[i]));
  POOT_TRY(write_end_ids(w, v, config, folder, ids[1]));
  /* add_bos_token / add_eos_token: tokenizer_config.json, else the
   * post-processor's template. */
  const poot_json *ab = v->tok_config ? poot_json_get(v->tok_config, "add_bos_token") : NULL;
  const poot_json *ae = v->tok_config ? poot_json_get(v->tok_config, "add_eos_token") : NULL;
  if (ab && ab->type == POOT_JSON_BOOL)
    POOT_TRY(poot_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", ab->boolean));
  if (ae && ae->type == POOT_JSON_BOOL)
    POOT_TRY(poot_gguf_writer_set_bool(w, "tokenizer.ggml.add_eos_token", ae->boolean));
  if (ab && ae) return NULL;
  const poot_json *pp = poot_json_get(v->tok_json, "post_processor");
  const poot_json *procs = poot_json_get(pp, "processors");
  size_t n = procs && procs->type == POOT_JSON_ARRAY ? procs->len : 1;
  for (size_t i = 0; pp && i < n; i++) {
    const poot_json *p = procs && procs->type == POOT_JSON_ARRAY ? procs->items[i] : pp;
    const poot_json *type = poot_json_get(p, "type");
    const poot_json *single = poot_json_get(p, "single");
    if (!type || type->type != POOT_JSON_STRING || strcmp(type->str, "TemplateProcessing") != 0 ||
        !single || single->type != POOT_JSON_ARRAY || single->len == 0)
      continue;
    const poot_json *first = poot_json_get(poot_json_get(single->items[0], "SpecialToken"), "id");
    const poot_json *last =
        poot_json_get(poot_json_get(single->items[single->len - 1], "SpecialToken"), "id");
    bool add_bos = first && first->type == POOT_JSON_STRING && ids[0] >= 0 &&
                   find_token(v, first->str, first->len) == ids[0];
    bool add_eos = last && last->type == POOT_JSON_STRING && ids[1] >= 0 &&
                   find_token(v, last->str, last->len) == ids[1];
    if (!ab) POOT_TRY(poot_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", add_bos));
    if (!ae) POOT_TRY(poot_gguf_writer_set_bool(w, "tokenizer.ggml.add_eos_token", add_eos));
    break;
  }
  return NULL;
}

static poot_status write_chat_template(poot_gguf_writer *w, const hf_vocab *v, const char *folder) {
  const poot_json *t = v->tok_config ? poot_json_get(v->tok_config, "chat_template") : NULL;
  if (t && t->type == POOT_JSON_STRING)
    return poot_gguf_writer_set_string(w, "tokenizer.chat_template", t->str, t->len);
  if (t && t->type == POOT_JSON_ARRAY) {
    /* Named templates: "default" is the chat template, the others go under
     * tokenizer.chat_template.<name> and are listed in tokenizer.chat_templates. */
    const char *names[64];
    size_t n_names = 0;
    for (size_t i = 0; i < t->len; i++) {
      const poot_json *name = poot_json_get(t->items[i], "name");
      const poot_json *tmpl = poot_json_get(t->items[i], "template");
      if (!name || name->type != POOT_JSON_STRING || !tmpl || tmpl->type != POOT_JSON_STRING)
        continue;
      if (strcmp(name->str, "default") == 0) {
        POOT_TRY(poot_gguf_writer_set_string(w, "tokenizer.chat_template", tmpl->str, tmpl->len));
        continue;
      }
      char key[256];
      snprintf(key, sizeof key, "tokenizer.chat_template.%s", name->str);
      POOT_TRY(poot_gguf_writer_set_string(w, key, tmpl->str, tmpl->len));
      if (n_names < 64) names[n_names++] = name->str;
    }
    if (n_names)
      POOT_TRY(
          poot_gguf_writer_set_string_array(w, "tokenizer.chat_templates", names, NULL, n_names));
    return NULL;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/chat_template.jinja", folder);
  struct stat sb;
  if (stat(path, &sb) != 0) return NULL;
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_file_read_all(path, &text, &len));
  poot_status s = poot_gguf_writer_set_string(w, "tokenizer.chat_template", text, len);
  poot_free(text);
  return s;
}

poot_status poot__convert_vocab_hf(poot_gguf_writer *w, const char *folder,
                                   const poot_hf_config *config, uint32_t *out_n_tokens) {
  *out_n_tokens = 0;
  poot_arena arena;
  poot_arena_init(&arena, 0);
  hf_vocab v = {.arena = &arena};
  char path[4200];
  snprintf(path, sizeof path, "%s/tokenizer.json", folder);
  poot_status s = poot__read_json(&arena, path, &v.tok_json);
  if (s) {
    s = poot_status_annotate(s, "convert needs the model's tokenizer.json");
    goto done;
  }
  snprintf(path, sizeof path, "%s/tokenizer_config.json", folder);
  struct stat sb;
  if (stat(path, &sb) == 0 && (s = poot__read_json(&arena, path, &v.tok_config))) goto done;
  const poot_json *model = poot_json_get(v.tok_json, "model");
  const poot_json *type = poot_json_get(model, "type");
  const poot_json *byte_fallback = poot_json_get(model, "byte_fallback");
  if (!type || type->type != POOT_JSON_STRING || strcmp(type->str, "BPE") != 0) {
    s = poot_status_make(POOT_UNSUPPORTED,
                         "convert: tokenizer.json model type '%s' is not supported (BPE is)",
                         type && type->type == POOT_JSON_STRING ? type->str : "?");
    goto done;
  }
  bool spm = byte_fallback && byte_fallback->type == POOT_JSON_BOOL && byte_fallback->boolean;
  if ((s = build_vocab(&v, config, spm))) goto done;
  if (spm && (s = spm_scores(&v, poot_json_get(model, "merges")))) goto done;
  if ((s = poot_gguf_writer_set_string(w, "tokenizer.ggml.model", spm ? "llama" : "gpt2",
                                       spm ? 5 : 4)))
    goto done;
  if (!spm) {
    const char *pre = detect_pre(v.tok_json);
    if ((s = poot_gguf_writer_set_string(w, "tokenizer.ggml.pre", pre, strlen(pre)))) goto done;
  }
  if ((s = poot_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", v.toks, v.lens, v.n)))
    goto done;
  if (spm && (s = poot_gguf_writer_set_array(w, "tokenizer.ggml.scores", POOT_GGUF_VALUE_F32,
                                             v.scores, v.n)))
    goto done;
  if ((s = poot_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_I32, v.types,
                                      v.n)))
    goto done;
  if (!spm && (s = write_merges(w, &arena, poot_json_get(model, "merges")))) goto done;
  if ((s = write_specials(w, &v, config, folder))) goto done;
  if ((s = write_chat_template(w, &v, folder))) goto done;
  *out_n_tokens = (uint32_t)v.n;
done:
  poot_arena_deinit(&arena);
  return s;
}
