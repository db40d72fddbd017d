/* tokenizer_open.c — the llama2.c tokenizer format and the path opener that
 * tells GGUF, tokenizer.json and llama2.c files apart. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tokenizer_impl.h"

static uint32_t rd_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

poot_status poot_tokenizer_load_llama2c(const void *data, size_t size, int32_t vocab_size,
                                        poot_tokenizer **out_tok) {
  *out_tok = NULL;
  const uint8_t *p = data;
  if (!p || size < 4)
    return poot_status_make(POOT_FORMAT,
                            "llama2.c tokenizer: %zu bytes is too short for the "
                            "header (max_token_length at offset 0)",
                            size);
  if (vocab_size < 0)
    return poot_status_make(POOT_INVALID_ARGUMENT, "llama2.c tokenizer: vocab_size %d",
                            (int)vocab_size);
  int32_t max_len = (int32_t)rd_u32(p);
  if (max_len <= 0 || (size_t)max_len > size)
    return poot_status_make(POOT_FORMAT,
                            "llama2.c tokenizer: max_token_length %d at offset 0 "
                            "is not plausible",
                            (int)max_len);
  /* Count the tokens first (each is at least 8 bytes, so the count is bounded by the size). */
  int32_t count = 0;
  size_t off = 4;
  while (off < size && (vocab_size == 0 || count < vocab_size)) {
    if (size - off < 8)
      return poot_status_make(POOT_FORMAT,
                              "llama2.c tokenizer: token %d at offset %zu is "
                              "truncated (score and length)",
                              (int)count, off);
    int32_t len = (int32_t)rd_u32(p + off + 4);
    if (len < 0 || (size_t)len > size - off - 8)
      return poot_status_make(POOT_FORMAT,
                              "llama2.c tokenizer: token %d at offset %zu has "
                              "length %d past the end of the file",
                              (int)count, off, (int)len);
    off += 8 + (size_t)len;
    count++;
  }
  if (vocab_size && count < vocab_size)
    return poot_status_make(POOT_FORMAT, "llama2.c tokenizer: %d tokens found, %d expected",
                            (int)count, (int)vocab_size);
  if (count < 3)
    return poot_status_make(POOT_FORMAT, "llama2.c tokenizer: only %d tokens", (int)count);
  poot_tokenizer *tok;
  POOT_TRY(poot__tok_new(POOT_TOKENIZER_LLAMA2C, count, &tok));
  poot_status st = POOT_OK_STATUS;
  off = 4;
  for (int32_t i = 0; i < count && !st; i++) {
    float score = poot_f32_from_bits(rd_u32(p + off));
    size_t len = rd_u32(p + off + 4);
    const char *text = (const char *)p + off + 8;
    uint32_t attr = POOT_TOKEN_ATTR_NORMAL;
    if (i == 0)
      attr = POOT_TOKEN_ATTR_UNKNOWN;
    else if (i <= 2)
      attr = POOT_TOKEN_ATTR_CONTROL;
    else if (len == 6 && !memcmp(text, "<0x", 3) && text[5] == '>')
      attr = POOT_TOKEN_ATTR_BYTE;
    st = poot__tok_set(tok, i, text, len, score, attr);
    off += 8 + len;
  }
  if (!st) {
    tok->unk = 0, tok->bos = 1, tok->eos = 2;
    tok->add_bos = true;
    tok->llama2c_prefix = true;
    st = poot__tok_finish(tok);
  }
  if (st) {
    poot_tokenizer_destroy(tok);
    return st;
  }
  *out_tok = tok;
  return POOT_OK_STATUS;
}

static poot_status open_json_file(const char *json_path, const char *config_path,
                                  poot_tokenizer **out_tok) {
  char *json = NULL, *config = NULL;
  size_t json_len = 0, config_len = 0;
  POOT_TRY(poot_file_read_all(json_path, &json, &json_len));
  if (config_path) {
    poot_status s = poot_file_read_all(config_path, &config, &config_len);
    if (s) { /* the config is optional */
      poot_status_free(s);
      config = NULL;
      config_len = 0;
    }
  }
  poot_status st = poot_tokenizer_load_hf_json(json, json_len, config, config_len, out_tok);
  poot_free(json);
  poot_free(config);
  return poot_status_annotate(st, "%s", json_path);
}

poot_status poot_tokenizer_open_path(const char *path, poot_tokenizer **out_tok) {
  *out_tok = NULL;
  if (!path) return poot_status_make(POOT_INVALID_ARGUMENT, "tokenizer: no path given");
  struct stat sb;
  if (stat(path, &sb) != 0)
    return poot_status_make(POOT_NOT_FOUND, "tokenizer: '%s' does not exist", path);
  if (S_ISDIR(sb.st_mode)) {
    size_t n = strlen(path) + 32;
    char *jp = poot_malloc(n), *cp = poot_malloc(n);
    if (!jp || !cp) {
      poot_free(jp);
      poot_free(cp);
      return poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
    }
    snprintf(jp, n, "%s/tokenizer.json", path);
    snprintf(cp, n, "%s/tokenizer_config.json", path);
    poot_status st;
    if (stat(jp, &sb) != 0)
      st = poot_status_make(POOT_NOT_FOUND, "tokenizer: the folder '%s' holds no tokenizer.json",
                            path);
    else
      st = open_json_file(jp, cp, out_tok);
    poot_free(jp);
    poot_free(cp);
    return st;
  }
  poot_file_map map;
  POOT_TRY(poot_file_map_open(path, &map));
  poot_status st = POOT_OK_STATUS;
  if (map.size >= 4 && memcmp(map.data, "GGUF", 4) == 0) {
    poot_gguf *g = NULL;
    st = poot_gguf_open_memory(map.data, map.size, path, &g);
    if (!st) st = poot_tokenizer_load_gguf(g, out_tok);
    poot_gguf_destroy(g);
  } else {
    size_t i = 0;
    while (i < map.size && (map.data[i] == ' ' || map.data[i] == '\n' || map.data[i] == '\r' ||
                            map.data[i] == '\t'))
      i++;
    if (i < map.size && map.data[i] == '{') {
      /* A tokenizer.json: its tokenizer_config.json may sit beside it. */
      size_t n = strlen(path) + 32;
      char *cp = poot_malloc(n);
      if (!cp) {
        st = poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
      } else {
        snprintf(cp, n, "%s", path);
        char *slash = strrchr(cp, '/');
        snprintf(slash ? slash + 1 : cp, n - (size_t)(slash ? slash + 1 - cp : 0),
                 "tokenizer_config.json");
        st = open_json_file(path, cp, out_tok);
        poot_free(cp);
      }
    } else {
      st = poot_status_annotate(poot_tokenizer_load_llama2c(map.data, map.size, 0, out_tok), "%s",
                                path);
    }
  }
  poot_file_map_close(&map);
  return st;
}
