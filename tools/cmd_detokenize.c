/* poot detokenize -m MODEL [--special] [--keep-space] */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/llm/tokenizer.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot detokenize -m MODEL [--special] [--keep-space]\n"
    "\n"
    "Reads token ids on standard input (separated by spaces, commas or newlines;\n"
    "brackets are ignored) and writes their text, exactly, with no newline added.\n"
    "\n";

static int detokenize_main(int argc, char **argv) {
  const char *cmd = "detokenize";
  const char *model = NULL;
  poot_tokenizer_decode_options opts = poot_tokenizer_decode_options_default();
  bool keep_space = false;
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &model,
       "a GGUF file, a tokenizer.json or a folder holding one, or a\n"
       "llama2.c tokenizer .bin",
       0, 0},
      {POOT_FLAG_SPECIAL, &opts.render_special, NULL, 0, 0},
      {POOT_FLAG_KEEP_SPACE, &keep_space, NULL, 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (keep_space) opts.strip_prefix_space = false;
  if (!model) return poot_tool_usage_error(cmd, "-m MODEL is required");
  char *text = NULL;
  size_t len = 0;
  poot_status st = poot_tool_read_stdin(&text, &len);
  if (st) return poot_tool_fail(cmd, st);
  /* Parse the ids before loading, so bad input fails fast. */
  poot_vec ids;
  poot_vec_init(&ids, sizeof(poot_token));
  for (size_t i = 0; i < len && !st;) {
    unsigned char c = (unsigned char)text[i];
    if (isspace(c) || c == ',' || c == '[' || c == ']') {
      i++;
      continue;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(text + i, &end, 10);
    if (end == text + i || errno || v < 0 || v > INT32_MAX ||
        (*end && !isspace((unsigned char)*end) && *end != ',' && *end != ']')) {
      size_t n = 0;
      while (i + n < len && n < 20 && !isspace((unsigned char)text[i + n])) n++;
      st = poot_status_make(POOT_INVALID_ARGUMENT,
                            "'%.*s' at byte %zu of the input is not a "
                            "token id",
                            (int)n, text + i, i);
      poot_vec_deinit(&ids);
      poot_free(text);
      return poot_tool_fail(cmd, st);
    }
    poot_token id = (poot_token)v;
    st = poot_vec_push(&ids, &id);
    i = (size_t)(end - text);
  }
  poot_free(text);
  poot_tokenizer *tok = NULL;
  if (!st) st = poot_tokenizer_open_path(model, &tok);
  poot_strbuf out;
  poot_strbuf_init(&out);
  if (!st) st = poot_tokenizer_decode(tok, ids.data, ids.len, &opts, &out);
  if (!st && out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
    st = poot_status_make(POOT_IO, "writing standard output failed");
  if (!st && fflush(stdout) != 0) st = poot_status_make(POOT_IO, "writing standard output failed");
  poot_strbuf_deinit(&out);
  poot_vec_deinit(&ids);
  poot_tokenizer_destroy(tok);
  return st ? poot_tool_fail(cmd, st) : POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_detokenize = {"detokenize", "token ids on stdin to text",
                                                    detokenize_main};
