/* tokenizer_load_gguf.c — a tokenizer from GGUF metadata (tokenizer.ggml.*),
 * with llama.cpp's defaults for what the metadata leaves out. */
#include <ctype.h>
#include <string.h>

#include "tokenizer_impl.h"

const char poot__tok_gpt2_regex[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static const char k_llama3_regex[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char k_qwen2_regex[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char k_gpt4o_regex[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char k_gpt2_no_tail[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

static const char *const k_pre_llama3[] = {k_llama3_regex, NULL};
static const char *const k_pre_qwen2[] = {k_qwen2_regex, NULL};
static const char *const k_pre_gpt2[] = {poot__tok_gpt2_regex, NULL};
static const char *const k_pre_gpt4o[] = {k_gpt4o_regex, NULL};
static const char *const k_pre_default[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", k_gpt2_no_tail,
                                            "\\p{N}+", "[0-9][0-9][0-9]", NULL};
static const char *const k_pre_falcon[] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", k_gpt2_no_tail,
                                           "[0-9][0-9][0-9]", NULL};
static const char *const k_pre_starcoder[] = {"\\p{N}", k_gpt2_no_tail, NULL};

typedef struct pre_entry {
  const char *name;
  const char *const *regexes;
} pre_entry;

static const pre_entry k_pre_table[] = {
    {"default", k_pre_default},     {"llama3", k_pre_llama3},       {"llama-v3", k_pre_llama3},
    {"llama-bpe", k_pre_llama3},    {"falcon3", k_pre_llama3},      {"pixtral", k_pre_llama3},
    {"qwen2", k_pre_qwen2},         {"deepseek-r1-qwen", k_pre_qwen2}, {"megrez", k_pre_qwen2},
    {"gpt-2", k_pre_gpt2},          {"phi-2", k_pre_gpt2},          {"jina-es", k_pre_gpt2},
    {"jina-de", k_pre_gpt2},        {"gigachat", k_pre_gpt2},       {"jina-v1-en", k_pre_gpt2},
    {"jina-v2-es", k_pre_gpt2},     {"jina-v2-de", k_pre_gpt2},     {"jina-v2-code", k_pre_gpt2},
    {"roberta-bpe", k_pre_gpt2},    {"gpt-4o", k_pre_gpt4o},        {"llama4", k_pre_gpt4o},
    {"falcon", k_pre_falcon},       {"starcoder", k_pre_starcoder}, {"refact", k_pre_starcoder},
    {"command-r", k_pre_starcoder}, {"smollm", k_pre_starcoder},    {"codeshell", k_pre_starcoder},
    {"exaone", k_pre_starcoder},    {"minerva-7b", k_pre_starcoder},
};

const char *const *poot__tok_pre_regexes(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof k_pre_table / sizeof k_pre_table[0]; i++)
    if (strlen(k_pre_table[i].name) == len && memcmp(k_pre_table[i].name, name, len) == 0)
      return k_pre_table[i].regexes;
  return NULL;
}

static bool str_is(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* An optional integer key; leaves *v alone when absent. */
static poot_status opt_id(const poot_gguf *g, const char *key, poot_token *v) {
  if (!poot_gguf_find(g, key)) return POOT_OK_STATUS;
  int64_t x;
  POOT_TRY(poot_gguf_get_i64(g, key, &x));
  *v = (x < 0 || x > INT32_MAX) ? POOT_TOKEN_NONE : (poot_token)x;
  return POOT_OK_STATUS;
}

static poot_status opt_bool(const poot_gguf *g, const char *key, bool *v) {
  if (!poot_gguf_find(g, key)) return POOT_OK_STATUS;
  return poot_gguf_get_bool(g, key, v);
}

static poot_status load(const poot_gguf *g, poot_tokenizer **out_tok) {
  const char *model;
  size_t model_len;
  POOT_TRY(poot_gguf_get_string(g, "tokenizer.ggml.model", &model, &model_len));
  poot_tokenizer_kind kind;
  if (str_is(model, model_len, "llama")) kind = POOT_TOKENIZER_SPM;
  else if (str_is(model, model_len, "gpt2")) kind = POOT_TOKENIZER_BPE;
  else if (str_is(model, model_len, "bert")) kind = POOT_TOKENIZER_WORDPIECE;
  else
    return poot_status_make(POOT_UNSUPPORTED,
                            "tokenizer: tokenizer.ggml.model '%.*s' is not supported (poot reads "
                            "llama, gpt2 and bert)",
                            (int)model_len, model);
  const poot_gguf_value *tokens, *scores = NULL, *types = NULL, *merges = NULL;
  POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.tokens", POOT_GGUF_VALUE_STRING, &tokens));
  uint64_t n = poot_gguf_array_len(tokens);
  if (n == 0 || n > INT32_MAX)
    return poot_status_make(POOT_FORMAT, "tokenizer: tokenizer.ggml.tokens holds %llu tokens",
                            (unsigned long long)n);
  if (poot_gguf_find(g, "tokenizer.ggml.scores"))
    POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.scores", POOT_GGUF_VALUE_TYPE_COUNT, &scores));
  if (poot_gguf_find(g, "tokenizer.ggml.token_type"))
    POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_TYPE_COUNT, &types));
  if (scores && poot_gguf_array_len(scores) != n)
    return poot_status_make(POOT_FORMAT, "tokenizer: %llu scores for %llu tokens",
                            (unsigned long long)poot_gguf_array_len(scores), (unsigned long long)n);
  if (types && poot_gguf_array_len(types) != n)
    return poot_status_make(POOT_FORMAT, "tokenizer: %llu token types for %llu tokens",
                            (unsigned long long)poot_gguf_array_len(types), (unsigned long long)n);

  poot_tokenizer *tok;
  POOT_TRY(poot__tok_new(kind, (int32_t)n, &tok));
  poot_status st = POOT_OK_STATUS;
  for (uint64_t i = 0; i < n && !st; i++) {
    const char *text;
    size_t len;
    float score = 0;
    int32_t type = 1;
    st = poot_gguf_array_get_string(tokens, i, &text, &len);
    if (!st && scores) st = poot_gguf_array_get_f32(scores, i, &score);
    if (!st && types) st = poot_gguf_array_get_i32(types, i, &type);
    if (st) break;
    uint32_t attr;
    switch (type) {
    case 2: attr = POOT_TOKEN_ATTR_UNKNOWN; break;
    case 3: attr = POOT_TOKEN_ATTR_CONTROL; break;
    case 4: attr = POOT_TOKEN_ATTR_USER_DEFINED; break;
    case 5: attr = POOT_TOKEN_ATTR_UNUSED; break;
    case 6: attr = POOT_TOKEN_ATTR_BYTE; break;
    default: attr = POOT_TOKEN_ATTR_NORMAL; break;
    }
    st = poot__tok_set(tok, (int32_t)i, text, len, score, attr);
  }
  if (st) goto fail;

  /* llama.cpp's defaults per kind, then the metadata. */
  bool add_space_prefix = false;
  switch (kind) {
  case POOT_TOKENIZER_SPM:
    tok->bos = 1, tok->eos = 2, tok->unk = 0;
    tok->add_bos = true;
    add_space_prefix = true;
    break;
  case POOT_TOKENIZER_WORDPIECE:
    tok->bos = 101, tok->unk = 100, tok->sep = 102, tok->pad = 0;
    tok->add_bos = tok->add_sep = true;
    break;
  default:
    tok->byte_level = true;
    break;
  }
  if ((st = opt_id(g, "tokenizer.ggml.cls_token_id", &tok->bos))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.bos_token_id", &tok->bos))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.eos_token_id", &tok->eos))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.unknown_token_id", &tok->unk))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.seperator_token_id", &tok->sep))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.padding_token_id", &tok->pad))) goto fail;
  if ((st = opt_id(g, "tokenizer.ggml.eot_token_id", &tok->eot))) goto fail;

  const char *pre = "default";
  size_t pre_len = 7;
  if (poot_gguf_find(g, "tokenizer.ggml.pre") &&
      (st = poot_gguf_get_string(g, "tokenizer.ggml.pre", &pre, &pre_len)))
    goto fail;
  if (kind == POOT_TOKENIZER_BPE) {
    const char *const *res = poot__tok_pre_regexes(pre, pre_len);
    if (!res) {
      st = poot_status_make(POOT_UNSUPPORTED,
                            "tokenizer: the pre-tokenizer '%.*s' (tokenizer.ggml.pre) is not "
                            "supported",
                            (int)pre_len, pre);
      goto fail;
    }
    for (; *res; res++)
      if ((st = poot__tok_add_split(tok, *res))) goto fail;
    if (!poot__tok_add_pre(tok, POOT__PRE_BYTE_LEVEL)) {
      st = poot_status_make(POOT_INTERNAL, "tokenizer: too many pre-tokenizer steps");
      goto fail;
    }
    if (poot__tok_pre_regexes(pre, pre_len) == k_pre_llama3) {
      tok->ignore_merges = true;
      tok->add_bos = true;
    }
  }
  if ((st = opt_bool(g, "tokenizer.ggml.add_bos_token", &tok->add_bos))) goto fail;
  if ((st = opt_bool(g, "tokenizer.ggml.add_eos_token", &tok->add_eos))) goto fail;
  if ((st = opt_bool(g, "tokenizer.ggml.add_sep_token", &tok->add_sep))) goto fail;
  if ((st = opt_bool(g, "tokenizer.ggml.add_space_prefix", &add_space_prefix))) goto fail;

  if (kind == POOT_TOKENIZER_SPM) {
    tok->byte_fallback = true;
    if (add_space_prefix) {
      poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_PREPEND);
      op->a = " ", op->a_len = 1;
    }
    poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_REPLACE);
    op->a = " ", op->a_len = 1, op->b = "\xe2\x96\x81", op->b_len = 3;
    tok->strip_prefix_space = add_space_prefix;
  } else if (kind == POOT_TOKENIZER_WORDPIECE) {
    poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_BERT);
    op->clean_text = op->handle_chinese = op->strip_accents = op->lowercase = true;
    poot__tok_add_pre(tok, POOT__PRE_BERT);
    tok->wp_phantom = true;
    tok->strip_prefix_space = true;
  }

  /* Phi-3's added tokens eat the whitespace after them (llama.cpp does this
   * by model name). */
  const char *name = NULL;
  size_t name_len = 0;
  if (poot_gguf_find(g, "general.name") &&
      !poot_status_is_ok(st = poot_gguf_get_string(g, "general.name", &name, &name_len)))
    goto fail;
  if (name) {
    char lower[64] = {0};
    for (size_t i = 0; i < name_len && i + 1 < sizeof lower; i++)
      lower[i] = (char)tolower((unsigned char)name[i]);
    if (strstr(lower, "phi-3") || strstr(lower, "phi3")) {
      for (int32_t i = 0; i < tok->n_tokens; i++) {
        poot__tok_entry *e = &tok->tokens[i];
        if (e->attr & (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_USER_DEFINED |
                       POOT_TOKEN_ATTR_UNKNOWN))
          e->attr |= POOT_TOKEN_ATTR_RSTRIP;
        if (!strcmp(e->text, "<unk>") || !strcmp(e->text, "<s>") ||
            !strcmp(e->text, "<|endoftext|>"))
          e->attr &= ~(uint32_t)POOT_TOKEN_ATTR_RSTRIP;
      }
    }
  }

  if ((st = poot__tok_finish(tok))) goto fail;

  if (kind == POOT_TOKENIZER_BPE) {
    if ((st = poot_gguf_get_array(g, "tokenizer.ggml.merges", POOT_GGUF_VALUE_STRING, &merges)))
      goto fail;
    uint64_t nm = poot_gguf_array_len(merges);
    for (uint64_t i = 0; i < nm; i++) {
      const char *m;
      size_t ml;
      if ((st = poot_gguf_array_get_string(merges, i, &m, &ml))) goto fail;
      const char *sp = ml > 1 ? memchr(m + 1, ' ', ml - 1) : NULL;
      if (!sp) {
        st = poot_status_make(POOT_FORMAT, "tokenizer: merge %llu ('%.*s') has no space",
                              (unsigned long long)i, (int)(ml > 64 ? 64 : ml), m);
        goto fail;
      }
      size_t al = (size_t)(sp - m);
      if ((st = poot__tok_add_merge(tok, m, al, sp + 1, ml - al - 1, (uint32_t)i))) goto fail;
    }
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
fail:
  poot_tokenizer_destroy(tok);
  return st;
}

poot_status poot_tokenizer_load_gguf(const poot_gguf *gguf, poot_tokenizer **out_tok) {
  *out_tok = NULL;
  if (!gguf) return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: no GGUF given");
  return poot_status_annotate(load(gguf, out_tok), "loading the tokenizer from GGUF metadata: ");
}
