/* poot convert IN OUT.gguf [--type T] [--tokenizer FILE] [--name NAME] */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "poot/llm/convert.h"
#include "tool.h"

static const char *const usage =
    "usage: poot convert IN OUT.gguf [--type TYPE] [--tokenizer FILE] [--name NAME]\n"
    "\n"
    "Converts a llama2.c checkpoint or a Hugging Face safetensors folder\n"
    "(config.json, tokenizer.json) to GGUF, with the tokenizer and chat template\n"
    "in its metadata, tensor names as llama.cpp writes them.\n"
    "\n"
    "  --type TYPE        f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 (default: the\n"
    "                     source's float type). 1-D tensors stay f32; rows the\n"
    "                     block size does not divide are written f16.\n"
    "  --tokenizer FILE   the llama2.c tokenizer file (llama2.c inputs)\n"
    "  --name NAME        general.name (default: derived from IN)\n";

typedef struct progress_state {
  bool tty;     /* stderr is a terminal: one line, rewritten */
  bool verbose; /* -v */
  int last_decile;
  double start;
} progress_state;

/* Progress on stderr: on a terminal always, otherwise with -v or for models
 * of 256 MiB and more, one line per tenth. */
static void on_progress(void *ctx, size_t done, size_t total, const char *name, uint64_t bytes_done,
                        uint64_t bytes_total) {
  progress_state *p = ctx;
  double pct = bytes_total ? 100.0 * (double)bytes_done / (double)bytes_total : 100.0;
  if (p->tty) {
    fprintf(stderr, "\r[%zu/%zu] %5.1f%% %-40.40s %.0f s", done, total, pct, name,
            poot_time_s() - p->start);
    if (done == total) fputc('\n', stderr);
  } else if (p->verbose || bytes_total >= (256ull << 20)) {
    int decile = (int)(pct / 10.0);
    if (decile == p->last_decile && done != total) return;
    p->last_decile = decile;
    fprintf(stderr, "poot convert: [%zu/%zu] %.0f%% %s (%.0f s)\n", done, total, pct, name,
            poot_time_s() - p->start);
  }
  fflush(stderr);
}

static int convert_main(int argc, char **argv) {
  const char *cmd = "convert";
  const char *in = NULL, *out = NULL;
  poot_convert_options o = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (poot_tool_is_help(a)) {
      fputs(usage, stdout);
      return POOT_EXIT_OK;
    } else if (strcmp(a, "--type") == 0 || strcmp(a, "--outtype") == 0) {
      const char *v = poot_tool_flag_value(cmd, argc, argv, &i);
      if (!v) return POOT_EXIT_USAGE;
      poot_gguf_type t;
      poot_status s = poot_gguf_type_from_name(v, &t);
      if (s || poot_convert_file_type(t) < 0) {
        poot_status_free(s);
        return poot_tool_usage_error(cmd,
                                     "--type takes f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1, "
                                     "not '%s'",
                                     v);
      }
      o.type = t;
      o.type_set = true;
    } else if (strcmp(a, "--tokenizer") == 0 || strcmp(a, "-z") == 0) {
      if (!(o.tokenizer_path = poot_tool_flag_value(cmd, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (strcmp(a, "--name") == 0) {
      if (!(o.name = poot_tool_flag_value(cmd, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (a[0] == '-' && a[1]) {
      return poot_tool_usage_error(cmd, "unknown flag '%s'", a);
    } else if (!in) {
      in = a;
    } else if (!out) {
      out = a;
    } else {
      return poot_tool_usage_error(cmd, "unexpected argument '%s'", a);
    }
  }
  if (!in || !out) return poot_tool_usage_error(cmd, "needs IN and OUT.gguf");
  progress_state p = {isatty(2) != 0, POOT_LOG_ENABLED(POOT_LOG_INFO), -1, poot_time_s()};
  o.progress = on_progress;
  o.progress_ctx = &p;
  poot_status s = poot_convert_to_gguf(in, out, &o);
  if (s) return poot_tool_fail(cmd, s);
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_convert = {
    "convert", "convert a llama2.c or safetensors model to GGUF", convert_main};
