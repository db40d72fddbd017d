/* poot tokenize -m MODEL [--no-bos] [--parse-special] */
#include <stdio.h>
#include <string.h>

#include "poot/llm/tokenizer.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot tokenize -m MODEL [--no-bos] [--parse-special]\n"
    "\n"
    "Reads text on standard input (all of it, newlines included) and prints its\n"
    "token ids on one line, separated by single spaces.\n"
    "\n";

static int tokenize_main(int argc, char **argv) {
  const char *cmd = "tokenize";
  const char *model = NULL;
  poot_tokenizer_encode_options opts = poot_tokenizer_encode_options_default();
  bool timing = false, no_bos = false;
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &model,
       "a GGUF file (a vocabulary-only one is fine), a\n"
       "tokenizer.json or a folder holding one, or a llama2.c\n"
       "tokenizer .bin",
       0, 0},
      {POOT_FLAG_NO_BOS, &no_bos, NULL, 0, 0},
      {POOT_FLAG_PARSE_SPECIAL, &opts.parse_special, NULL, 0, 0},
      {POOT_FLAG_TIMING, &timing, NULL, 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (no_bos) opts.add_special = false;
  if (!model) return poot_tool_usage_error(cmd, "-m MODEL is required");
  poot_tokenizer *tok = NULL;
  uint64_t t0 = poot_time_ns();
  poot_status st = poot_tokenizer_open_path(model, &tok);
  if (st) return poot_tool_fail(cmd, st);
  uint64_t t1 = poot_time_ns();
  char *text = NULL;
  size_t len = 0;
  poot_token *ids = NULL;
  size_t count = 0;
  st = poot_tool_read_stdin(&text, &len);
  uint64_t t2 = poot_time_ns();
  if (!st) st = poot_tokenizer_encode(tok, text, len, &opts, &ids, &count);
  uint64_t t3 = poot_time_ns();
  if (!st && timing)
    fprintf(stderr, "load %.6f s, encode %.6f s, %zu bytes, %zu tokens\n", (double)(t1 - t0) * 1e-9,
            (double)(t3 - t2) * 1e-9, len, count);
  if (!st) {
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    for (size_t i = 0; i < count; i++) {
      char buf[16];
      size_t n = 0;
      uint32_t v = (uint32_t)ids[i]; /* ids are never negative */
      do buf[sizeof buf - ++n] = (char)('0' + v % 10);
      while ((v /= 10) != 0);
      if (i) poot_strbuf_putc(&sb, ' ');
      poot_strbuf_append(&sb, buf + sizeof buf - n, n);
    }
    poot_strbuf_putc(&sb, '\n');
    st = poot_strbuf_status(&sb);
    if (!st && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
      st = poot_status_make(POOT_IO, "writing standard output failed");
    poot_strbuf_deinit(&sb);
  }
  poot_free(ids);
  poot_free(text);
  poot_tokenizer_destroy(tok);
  if (!st && fflush(stdout) != 0) st = poot_status_make(POOT_IO, "writing standard output failed");
  return st ? poot_tool_fail(cmd, st) : POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_tokenize = {"tokenize", "text on stdin to token ids",
                                                  tokenize_main};
