/* support_encoder.c — what `poot embed` and `poot rerank` share: the lines
 * of stdin, the encoder runtime, and tokenizing the texts. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/model.h"
#include "tool.h"

poot_status poot_tool_read_lines(char **out_text, char ***out_lines, size_t *out_count) {
  *out_text = NULL;
  *out_lines = NULL;
  *out_count = 0;
  char *text = NULL;
  size_t len = 0;
  POOT_TRY(poot_tool_read_stdin(&text, &len));
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += text[i] == '\n';
  if (len && text[len - 1] != '\n') n++;
  char **lines = poot_calloc(n ? n : 1, sizeof *lines);
  if (!lines) {
    poot_free(text);
    return poot_status_make(POOT_OUT_OF_MEMORY, "lines of standard input");
  }
  size_t k = 0, start = 0;
  for (size_t i = 0; i <= len && k < n; i++) {
    if (i < len && text[i] != '\n') continue;
    size_t end = i;
    if (end > start && text[end - 1] == '\r') end--;
    if (i < len) text[i] = '\0';
    if (end < len) text[end] = '\0';
    if (end == start) {
      poot_free(lines);
      poot_free(text);
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "line %zu of standard input is empty (one text a line)", k + 1);
    }
    lines[k++] = text + start;
    start = i + 1;
  }
  *out_text = text;
  *out_lines = lines;
  *out_count = k;
  return NULL;
}

poot_status poot_tool_open_encoder(const char *model, const char *device, poot_runtime **out_rt) {
  *out_rt = NULL;
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = model;
  ro.device = device;
  poot_runtime *rt = NULL;
  POOT_TRY(poot_runtime_open(&ro, &rt));
  const poot_model_config *c = poot_model_get_config(poot_runtime_model(rt));
  poot_status st = NULL;
  if (!poot_model_is_encoder(c))
    st = poot_status_make(POOT_UNSUPPORTED,
                          "'%s' is a %s decoder; embed and rerank need an encoder model (BERT: "
                          "a sentence-transformers folder or a GGUF 'bert' file)",
                          model, poot_model_family_name(c->family));
  if (!st) st = poot_runtime_create_driver(rt, NULL);
  if (st) {
    poot_runtime_destroy(rt);
    return st;
  }
  *out_rt = rt;
  return NULL;
}

void poot_tool_sequences_free(poot_driver_sequence *seqs, size_t n) {
  if (!seqs) return;
  for (size_t i = 0; i < n; i++) {
    poot_free((void *)seqs[i].ids);
    poot_free((void *)seqs[i].types);
  }
  poot_free(seqs);
}

poot_status poot_tool_sequences(const poot_model *model, const char *query, char **texts, size_t n,
                                bool truncate, poot_driver_sequence **out_seqs) {
  *out_seqs = NULL;
  poot_driver_sequence *seqs = poot_calloc(n ? n : 1, sizeof *seqs);
  if (!seqs) return poot_status_make(POOT_OUT_OF_MEMORY, "sequences");
  for (size_t i = 0; i < n; i++) {
    poot_token *ids = NULL;
    int32_t *types = NULL;
    size_t count = 0;
    poot_status st =
        query ? poot_driver_encoder_tokenize(model, query, texts[i], truncate, &ids, &types, &count)
              : poot_driver_encoder_tokenize(model, texts[i], NULL, truncate, &ids, &types, &count);
    if (st) {
      poot_tool_sequences_free(seqs, i);
      return poot_status_annotate(st, "line %zu", i + 1);
    }
    seqs[i] = (poot_driver_sequence){.ids = ids, .types = types, .count = count};
  }
  *out_seqs = seqs;
  return NULL;
}
