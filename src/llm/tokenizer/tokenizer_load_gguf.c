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
static const char k_tekken_regex[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{"
    "N}|"
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char k_bloom_regex[] =
    " ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+";
static const char k_bailing_regex[] =
    "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|"
    "\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
static const char k_seed_coder_regex[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| "
    "?[^\\s\\p{L}\\p{N}\\r\\n]+|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/* DeepSeek's letter class, as its tokenizer.json spells it. */
static const char k_deepseek_letters[] =
    "\\s?[A-Za-z\xc2\xb5\xc3\x80-\xc3\x96\xc3\x98-\xc3\xb6\xc3\xb8-\xc6\xba\xc6\xbc-\xc6\xbf"
    "\xc7\x84-\xca\x93\xca\x95-\xca\xaf\xcd\xb0-\xcd\xb3\xcd\xb6\xcd\xb7\xcd\xbb-\xcd\xbd\xcd\xbf"
    "\xce\x86\xce\x88-\xce\x8a\xce\x8c\xce\x8e-\xce\xa1\xce\xa3-\xcf\xb5\xcf\xb7-\xd2\x81"
    "\xd2\x8a-\xd4\xaf\xd4\xb1-\xd5\x96\xe1\x82\xa0-\xe1\x83\x85\xe1\x8e\xa0-\xe1\x8f\xb5"
    "\xe1\x8f\xb8-\xe1\x8f\xbd\xe1\xb2\x90-\xe1\xb2\xba\xe1\xb2\xbd-\xe1\xb2\xbf\xe1\xb4\x80-"
    "\xe1\xb4\xab\xe1\xb5\xab-\xe1\xb5\xb7\xe1\xb5\xb9-\xe1\xb6\x9a\xe1\xb8\x80-\xe1\xbc\x95"
    "\xe1\xbc\x98-\xe1\xbc\x9d\xe1\xbc\xa0-\xe1\xbd\x85\xe1\xbd\x88-\xe1\xbd\x8d\xe1\xbd\x90-"
    "\xe1\xbd\x97\xe1\xbd\x99\xe1\xbd\x9b\xe1\xbd\x9d\xe1\xbd\x9f-\xe1\xbd\xbd\xe1\xbe\x80-"
    "\xe1\xbe\xb4\xe1\xbe\xb6-\xe1\xbe\xbc\xe1\xbe\xbe\xe1\xbf\x82-\xe1\xbf\x84\xe1\xbf\x86-"
    "\xe1\xbf\x8c\xe1\xbf\x90-\xe1\xbf\x93\xe1\xbf\x96-\xe1\xbf\x9b\xe1\xbf\xa0-\xe1\xbf\xac"
    "\xe1\xbf\xb2-\xe1\xbf\xb4\xe1\xbf\xb6-\xe1\xbf\xbc\xe2\x84\x82\xe2\x84\x87\xe2\x84\x8a-"
    "\xe2\x84\x93\xe2\x84\x95\xe2\x84\x99-\xe2\x84\x9d\xe2\x84\xa4\xe2\x84\xa6\xe2\x84\xa8"
    "\xe2\x84\xaa-\xe2\x84\xad\xe2\x84\xaf-\xe2\x84\xb4\xe2\x84\xb9\xe2\x84\xbc-\xe2\x84\xbf"
    "\xe2\x85\x85-\xe2\x85\x89\xe2\x85\x8e\xe2\x86\x83\xe2\x86\x84\xe2\xb0\x80-\xe2\xb1\xbb"
    "\xe2\xb1\xbe-\xe2\xb3\xa4\xe2\xb3\xab-\xe2\xb3\xae\xe2\xb3\xb2\xe2\xb3\xb3\xea\x99\x80-"
    "\xea\x99\xad\xea\x9a\x80-\xea\x9a\x9b\xea\x9c\xa2-\xea\x9d\xaf\xea\x9d\xb1-\xea\x9e\x87"
    "\xea\x9e\x8b-\xea\x9e\x8e\xea\xad\xb0-\xea\xae\xbf\xef\xac\x80-\xef\xac\x86\xef\xac\x93-"
    "\xef\xac\x97\xef\xbc\xa1-\xef\xbc\xba\xef\xbd\x81-\xef\xbd\x9a\xf0\x90\x90\x80-\xf0\x90\x91"
    "\x8f\xf0\x90\x92\xb0-\xf0\x90\x93\x93\xf0\x90\x93\x98-\xf0\x90\x93\xbb\xf0\x90\xb2\x80-"
    "\xf0\x90\xb2\xb2\xf0\x90\xb3\x80-\xf0\x90\xb3\xb2\xf0\x91\xa2\xa0-\xf0\x91\xa3\x9f"
    "\xf0\x9e\xa4\x80-\xf0\x9e\xa5\x83]+";
static const char k_cjk_hangul[] =
    "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+";
static const char k_deepseek3_main[] =
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static const char *const k_pre_llama3[] = {k_llama3_regex, NULL};
static const char *const k_pre_qwen2[] = {k_qwen2_regex, NULL};
static const char *const k_pre_gpt2[] = {poot__tok_gpt2_regex, NULL};
static const char *const k_pre_gpt4o[] = {k_gpt4o_regex, NULL};
static const char *const k_pre_default[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", k_gpt2_no_tail, "\\p{N}+",
                                            "[0-9][0-9][0-9]", NULL};
static const char *const k_pre_falcon[] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", k_gpt2_no_tail,
                                           "[0-9][0-9][0-9]", NULL};
static const char *const k_pre_starcoder[] = {"\\p{N}", k_gpt2_no_tail, NULL};
static const char *const k_pre_tekken[] = {k_tekken_regex, NULL};
static const char *const k_pre_bloom[] = {k_bloom_regex, NULL};
static const char *const k_pre_viking[] = {k_bloom_regex, "\\p{N}", NULL};
static const char *const k_pre_bailing[] = {k_bailing_regex, NULL};
static const char *const k_pre_seed_coder[] = {k_seed_coder_regex, NULL};
static const char *const k_pre_deepseek_llm[] = {
    "[\\r\\n]",
    k_deepseek_letters,
    "\\s?[!-/:-~\xef\xbc\x81-\xef\xbc\x8f\xef\xbc\x9a-"
    "\xef\xbd\x9e\xe2\x80\x98-\xe2\x80\x9f\xe3\x80\x80-"
    "\xe3\x80\x82]+",
    "\\s+$",
    k_cjk_hangul,
    "\\p{N}+",
    NULL};
static const char *const k_pre_deepseek_coder[] = {"[\\r\\n]",   "\\s?\\p{L}+", "\\s?\\p{P}+",
                                                   k_cjk_hangul, "\\p{N}",      NULL};
static const char *const k_pre_deepseek3[] = {
    "\\p{N}{1,3}", "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
    k_deepseek3_main, NULL};
static const char *const k_pre_chameleon[] = {"<sentinel:[0-9]+>",
                                              "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
                                              "([\\t\\n]|    |  )",
                                              "\\p{N}",
                                              "[\\p{P}!-/:-@\\[-`{-~]",
                                              k_gpt2_no_tail,
                                              NULL};

enum {
  IGN = POOT__PRE_IGNORE_MERGES,
  SEP = POOT__PRE_ADD_SEP,
  NOBOS = POOT__PRE_NO_BOS,
  BOS = POOT__PRE_ADD_BOS
};

static const poot__pre_entry k_pre_table[] = {
    {"default", k_pre_default, 0},
    {"llama3", k_pre_llama3, IGN},
    {"llama-v3", k_pre_llama3, IGN},
    {"llama-bpe", k_pre_llama3, IGN},
    {"falcon3", k_pre_llama3, IGN},
    {"falcon-h1", k_pre_llama3, IGN},
    {"pixtral", k_pre_llama3, IGN},
    {"midm-2.0", k_pre_llama3, IGN},
    {"lfm2", k_pre_llama3, IGN},
    {"dbrx", k_pre_llama3, 0},
    {"smaug-bpe", k_pre_llama3, 0},
    {"glm4", k_pre_llama3, NOBOS},
    {"chatglm-bpe", k_pre_llama3, NOBOS},
    {"qwen2", k_pre_qwen2, 0},
    {"deepseek-r1-qwen", k_pre_qwen2, 0},
    {"kormo", k_pre_qwen2, 0},
    {"megrez", k_pre_qwen2, 0},
    {"stablelm2", k_pre_qwen2, 0},
    {"hunyuan", k_pre_qwen2, 0},
    {"grok-2", k_pre_qwen2, 0},
    {"gpt-2", k_pre_gpt2, 0},
    {"phi-2", k_pre_gpt2, 0},
    {"jina-es", k_pre_gpt2, 0},
    {"jina-de", k_pre_gpt2, 0},
    {"gigachat", k_pre_gpt2, 0},
    {"jina-v2-es", k_pre_gpt2, 0},
    {"jina-v2-de", k_pre_gpt2, 0},
    {"a.x-4.0", k_pre_gpt2, 0},
    {"mellum", k_pre_gpt2, 0},
    {"mpt", k_pre_gpt2, 0},
    {"olmo", k_pre_gpt2, 0},
    {"jais", k_pre_gpt2, 0},
    {"trillion", k_pre_gpt2, 0},
    {"granite-docling", k_pre_gpt2, 0},
    {"exaone4", k_pre_gpt2, 0},
    {"jina-v1-en", k_pre_gpt2, SEP},
    {"jina-v2-code", k_pre_gpt2, SEP},
    {"roberta-bpe", k_pre_gpt2, SEP},
    {"gpt-4o", k_pre_gpt4o, 0},
    {"llama4", k_pre_gpt4o, 0},
    {"minimax-m2", k_pre_gpt4o, 0},
    {"falcon", k_pre_falcon, 0},
    {"starcoder", k_pre_starcoder, 0},
    {"refact", k_pre_starcoder, 0},
    {"command-r", k_pre_starcoder, 0},
    {"smollm", k_pre_starcoder, 0},
    {"codeshell", k_pre_starcoder, 0},
    {"exaone", k_pre_starcoder, 0},
    {"minerva-7b", k_pre_starcoder, 0},
    {"tekken", k_pre_tekken, IGN},
    {"poro-chat", k_pre_bloom, 0},
    {"bloom", k_pre_bloom, 0},
    {"gpt3-finnish", k_pre_bloom, 0},
    {"viking", k_pre_viking, 0},
    {"bailingmoe", k_pre_bailing, 0},
    {"bailingmoe2", k_pre_bailing, 0},
    {"llada-moe", k_pre_bailing, 0},
    {"seed-coder", k_pre_seed_coder, 0},
    {"deepseek-llm", k_pre_deepseek_llm, 0},
    {"deepseek-coder", k_pre_deepseek_coder, 0},
    {"deepseek-v3", k_pre_deepseek3, 0},
    {"hunyuan-dense", k_pre_deepseek3, 0},
    {"chameleon", k_pre_chameleon, BOS},
};

const poot__pre_entry *poot__tok_pre_lookup(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof k_pre_table / sizeof k_pre_table[0]; i++)
    if (strlen(k_pre_table[i].name) == len && memcmp(k_pre_table[i].name, name, len) == 0)
      return &k_pre_table[i];
  return NULL;
}

static bool str_is(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* An optional token id key; leaves *v alone when absent or outside the
 * vocabulary (llama.cpp keeps its default then, with a warning). */
static poot_status opt_id(const poot_gguf *g, const char *key, int32_t n_tokens, poot_token *v) {
  if (!poot_gguf_find(g, key)) return POOT_OK_STATUS;
  int64_t x;
  POOT_TRY(poot_gguf_get_i64(g, key, &x));
  if (x < 0 || x >= n_tokens) {
    poot_log(POOT_LOG_WARN, "tokenizer: %s = %lld is outside the vocabulary of %d; ignored", key,
             (long long)x, (int)n_tokens);
    return POOT_OK_STATUS;
  }
  *v = (poot_token)x;
  return POOT_OK_STATUS;
}

static poot_status opt_bool(const poot_gguf *g, const char *key, bool *v) {
  if (!poot_gguf_find(g, key)) return POOT_OK_STATUS;
  return poot_gguf_get_bool(g, key, v);
}

/* tokenizer.ggml.model: the tokenizer kind. */
static poot_status gguf_kind(const poot_gguf *g, poot_tokenizer_kind *out_kind) {
  *out_kind = POOT_TOKENIZER_BPE;
  const char *model;
  size_t model_len;
  POOT_TRY(poot_gguf_get_string(g, "tokenizer.ggml.model", &model, &model_len));
  if (str_is(model, model_len, "llama"))
    *out_kind = POOT_TOKENIZER_SPM;
  else if (str_is(model, model_len, "gpt2"))
    *out_kind = POOT_TOKENIZER_BPE;
  else if (str_is(model, model_len, "bert"))
    *out_kind = POOT_TOKENIZER_WORDPIECE;
  else
    return poot_status_make(POOT_UNSUPPORTED,
                            "tokenizer: tokenizer.ggml.model '%.*s' is not supported (poot reads "
                            "llama, gpt2 and bert)",
                            (int)model_len, model);
  return POOT_OK_STATUS;
}

/* A GGUF token type (llama.cpp's llama_token_type) as poot's attributes. */
static uint32_t token_attr(int32_t type) {
  switch (type) {
    case 2:
      return POOT_TOKEN_ATTR_UNKNOWN;
    case 3:
      return POOT_TOKEN_ATTR_CONTROL;
    case 4:
      return POOT_TOKEN_ATTR_USER_DEFINED;
    case 5:
      return POOT_TOKEN_ATTR_UNUSED;
    case 6:
      return POOT_TOKEN_ATTR_BYTE;
    default:
      return POOT_TOKEN_ATTR_NORMAL;
  }
}

/* The vocabulary: tokens with their scores and types. On success *out_tok
 * is a new tokenizer the caller owns. */
static poot_status gguf_vocab(const poot_gguf *g, poot_tokenizer_kind kind,
                              poot_tokenizer **out_tok) {
  *out_tok = NULL;
  const poot_gguf_value *tokens, *scores = NULL, *types = NULL;
  POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.tokens", POOT_GGUF_VALUE_STRING, &tokens));
  uint64_t n = poot_gguf_array_len(tokens);
  if (n == 0 || n > INT32_MAX)
    return poot_status_make(POOT_FORMAT, "tokenizer: tokenizer.ggml.tokens holds %llu tokens",
                            (unsigned long long)n);
  if (poot_gguf_find(g, "tokenizer.ggml.scores"))
    POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.scores", POOT_GGUF_VALUE_TYPE_COUNT, &scores));
  if (poot_gguf_find(g, "tokenizer.ggml.token_type"))
    POOT_TRY(
        poot_gguf_get_array(g, "tokenizer.ggml.token_type", POOT_GGUF_VALUE_TYPE_COUNT, &types));
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
    st = poot__tok_set(tok, (int32_t)i, text, len, score, token_attr(type));
  }
  if (st) {
    poot_tokenizer_destroy(tok);
    return st;
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
}

/* The special tokens: llama.cpp's defaults per kind, then the metadata.
 * *out_add_space_prefix gets the kind's default. */
static poot_status gguf_special_ids(const poot_gguf *g, poot_tokenizer *tok,
                                    bool *out_add_space_prefix) {
  *out_add_space_prefix = false;
  switch (tok->kind) {
    case POOT_TOKENIZER_SPM:
      tok->bos = 1, tok->eos = 2, tok->unk = 0;
      tok->add_bos = true;
      *out_add_space_prefix = true;
      break;
    case POOT_TOKENIZER_WORDPIECE:
      tok->bos = 101, tok->unk = 100, tok->sep = 102, tok->pad = 0;
      tok->add_bos = tok->add_sep = true;
      break;
    default:
      tok->byte_level = true;
      break;
  }
  POOT_TRY(opt_id(g, "tokenizer.ggml.cls_token_id", tok->n_tokens, &tok->bos));
  POOT_TRY(opt_id(g, "tokenizer.ggml.bos_token_id", tok->n_tokens, &tok->bos));
  POOT_TRY(opt_id(g, "tokenizer.ggml.eos_token_id", tok->n_tokens, &tok->eos));
  POOT_TRY(opt_id(g, "tokenizer.ggml.unknown_token_id", tok->n_tokens, &tok->unk));
  POOT_TRY(opt_id(g, "tokenizer.ggml.seperator_token_id", tok->n_tokens, &tok->sep));
  POOT_TRY(opt_id(g, "tokenizer.ggml.padding_token_id", tok->n_tokens, &tok->pad));
  POOT_TRY(opt_id(g, "tokenizer.ggml.eot_token_id", tok->n_tokens, &tok->eot));
  return POOT_OK_STATUS;
}

/* tokenizer.ggml.pre: a BPE tokenizer's split regexes and flags. */
static poot_status gguf_pre_tokenizer(const poot_gguf *g, poot_tokenizer *tok) {
  const char *pre = "default";
  size_t pre_len = 7;
  if (poot_gguf_find(g, "tokenizer.ggml.pre"))
    POOT_TRY(poot_gguf_get_string(g, "tokenizer.ggml.pre", &pre, &pre_len));
  if (tok->kind != POOT_TOKENIZER_BPE) return POOT_OK_STATUS;
  const poot__pre_entry *pe = poot__tok_pre_lookup(pre, pre_len);
  if (!pe) {
    /* llama.cpp does the same: an unknown name gets the default regexes. */
    poot_log(POOT_LOG_WARN,
             "tokenizer: unknown pre-tokenizer '%.*s' (tokenizer.ggml.pre); using 'default'",
             (int)pre_len, pre);
    pe = poot__tok_pre_lookup("default", 7);
  }
  for (const char *const *re = pe->regexes; *re; re++) POOT_TRY(poot__tok_add_split(tok, *re));
  if (!poot__tok_add_pre(tok, POOT__PRE_BYTE_LEVEL))
    return poot_status_make(POOT_INTERNAL, "tokenizer: too many pre-tokenizer steps");
  if (pe->flags & POOT__PRE_IGNORE_MERGES) tok->ignore_merges = tok->add_bos = true;
  if (pe->flags & POOT__PRE_ADD_BOS) tok->add_bos = true;
  if (pe->flags & POOT__PRE_ADD_SEP) tok->add_sep = true;
  if ((pe->flags & POOT__PRE_NO_BOS) && !poot_gguf_find(g, "tokenizer.ggml.bos_token_id"))
    tok->bos = POOT_TOKEN_NONE;
  return POOT_OK_STATUS;
}

/* The normalizer of SPM (the ▁ space) and WordPiece (BERT's). */
static void add_normalizer(poot_tokenizer *tok, bool add_space_prefix) {
  if (tok->kind == POOT_TOKENIZER_SPM) {
    tok->byte_fallback = true;
    if (add_space_prefix) {
      poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_PREPEND);
      op->a = " ", op->a_len = 1;
    }
    poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_REPLACE);
    op->a = " ", op->a_len = 1, op->b = "\xe2\x96\x81", op->b_len = 3;
    tok->strip_prefix_space = add_space_prefix;
  } else if (tok->kind == POOT_TOKENIZER_WORDPIECE) {
    poot__norm_op *op = poot__tok_add_norm(tok, POOT__NORM_BERT);
    op->clean_text = op->handle_chinese = op->strip_accents = op->lowercase = true;
    poot__tok_add_pre(tok, POOT__PRE_BERT);
    tok->wp_phantom = true;
    tok->strip_prefix_space = true;
  }
}

/* Phi-3's added tokens eat the whitespace after them (llama.cpp does this
 * by model name). */
static poot_status phi3_rstrip(const poot_gguf *g, poot_tokenizer *tok) {
  const char *name = NULL;
  size_t name_len = 0;
  if (poot_gguf_find(g, "general.name"))
    POOT_TRY(poot_gguf_get_string(g, "general.name", &name, &name_len));
  if (!name) return POOT_OK_STATUS;
  char lower[64] = {0};
  for (size_t i = 0; i < name_len && i + 1 < sizeof lower; i++)
    lower[i] = (char)tolower((unsigned char)name[i]);
  if (!strstr(lower, "phi-3") && !strstr(lower, "phi3")) return POOT_OK_STATUS;
  for (int32_t i = 0; i < tok->n_tokens; i++) {
    poot__tok_entry *e = &tok->tokens[i];
    if (e->attr &
        (POOT_TOKEN_ATTR_CONTROL | POOT_TOKEN_ATTR_USER_DEFINED | POOT_TOKEN_ATTR_UNKNOWN))
      e->attr |= POOT_TOKEN_ATTR_RSTRIP;
    if (!strcmp(e->text, "<unk>") || !strcmp(e->text, "<s>") || !strcmp(e->text, "<|endoftext|>"))
      e->attr &= ~(uint32_t)POOT_TOKEN_ATTR_RSTRIP;
  }
  return POOT_OK_STATUS;
}

/* tokenizer.ggml.merges: a BPE tokenizer's merges, "a b" each, by rank. */
static poot_status gguf_merges(const poot_gguf *g, poot_tokenizer *tok) {
  const poot_gguf_value *merges = NULL;
  POOT_TRY(poot_gguf_get_array(g, "tokenizer.ggml.merges", POOT_GGUF_VALUE_STRING, &merges));
  uint64_t nm = poot_gguf_array_len(merges);
  for (uint64_t i = 0; i < nm; i++) {
    const char *m;
    size_t ml;
    POOT_TRY(poot_gguf_array_get_string(merges, i, &m, &ml));
    const char *sp = ml > 1 ? memchr(m + 1, ' ', ml - 1) : NULL;
    if (!sp)
      return poot_status_make(POOT_FORMAT, "tokenizer: merge %llu ('%.*s') has no space",
                              (unsigned long long)i, (int)(ml > 64 ? 64 : ml), m);
    size_t al = (size_t)(sp - m);
    POOT_TRY(poot__tok_add_merge(tok, m, al, sp + 1, ml - al - 1, (uint32_t)i));
  }
  return POOT_OK_STATUS;
}

static poot_status load(const poot_gguf *g, poot_tokenizer **out_tok) {
  poot_tokenizer_kind kind = POOT_TOKENIZER_BPE;
  POOT_TRY(gguf_kind(g, &kind));
  poot_tokenizer *tok;
  POOT_TRY(gguf_vocab(g, kind, &tok));
  bool add_space_prefix = false;
  poot_status st = gguf_special_ids(g, tok, &add_space_prefix);
  if (!st) st = gguf_pre_tokenizer(g, tok);
  if (!st) st = opt_bool(g, "tokenizer.ggml.add_bos_token", &tok->add_bos);
  if (!st) st = opt_bool(g, "tokenizer.ggml.add_eos_token", &tok->add_eos);
  if (!st) st = opt_bool(g, "tokenizer.ggml.add_sep_token", &tok->add_sep);
  if (!st) st = opt_bool(g, "tokenizer.ggml.add_space_prefix", &add_space_prefix);
  if (!st) add_normalizer(tok, add_space_prefix);
  if (!st) st = phi3_rstrip(g, tok);
  if (!st) st = poot__tok_finish(tok);
  if (!st && kind == POOT_TOKENIZER_BPE) st = gguf_merges(g, tok);
  if (st) {
    poot_tokenizer_destroy(tok);
    return st;
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
}

poot_status poot_tokenizer_load_gguf(const poot_gguf *gguf, poot_tokenizer **out_tok) {
  *out_tok = NULL;
  if (!gguf) return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: no GGUF given");
  return poot_status_annotate(load(gguf, out_tok), "loading the tokenizer from GGUF metadata");
}
