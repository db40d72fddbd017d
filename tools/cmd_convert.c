/* poot convert IN OUT.gguf [--type T] [--tokenizer FILE] [--name NAME] */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "poot/llm/convert.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot convert IN OUT.gguf [--type TYPE] [--tokenizer FILE] [--name NAME]\n"
    "\n"
    "Converts a llama2.c checkpoint or a Hugging Face safetensors folder\n"
    "(config.json, tokenizer.json) to GGUF, with the tokenizer and chat template\n"
    "in its metadata, tensor names as llama.cpp writes them; re-types a GGUF file.\n"
    "--type q4_k_m and q5_k_m write llama.cpp's k-quant mixtures (q6_k for the\n"
    "output and for attn_v/ffn_down of some layers; docs/models.md).\n"
    "\n";

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
  poot_convert_options o = {0};
  const char *type = NULL;
  const char *args[2] = {NULL, NULL};
  const poot_tool_option options[] = {
      {POOT_FLAG_TYPE, &type,
       "f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k,\n"
       "or the mixtures q4_k_m q5_k_m (default: the source's\n"
       "float type). 1-D tensors stay f32; a k-quant row the\n"
       "256 block does not divide is written q5_0/q5_1/q8_0,\n"
       "other rows the block does not divide f16.",
       0, 0},
      {POOT_FLAG_TOKENIZER, &o.tokenizer_path, "the llama2.c tokenizer file (llama2.c inputs)", 0,
       0},
      {POOT_FLAG_NAME, &o.name, "general.name (default: derived from IN)", 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0],
                             .args = args,
                             .max_args = 2};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (type) {
    poot_status s = poot_convert_type_from_name(type, &o.type, &o.mixture);
    if (s) {
      poot_status_free(s);
      return poot_tool_usage_error(cmd,
                                   "--type takes f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k "
                                   "q6_k q4_k_m q5_k_m, not '%s'",
                                   type);
    }
    o.type_set = true;
  }
  const char *in = args[0], *out = args[1];
  if (!in || !out) return poot_tool_usage_error(cmd, "needs IN and OUT.gguf");
  progress_state p = {isatty(2) != 0, POOT_LOG_ENABLED(POOT_LOG_INFO), -1, poot_time_s()};
  o.progress = on_progress;
  o.progress_ctx = &p;
  poot_status s = poot_convert_to_gguf(in, out, &o);
  if (s) return poot_tool_fail(cmd, s);
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_convert = {
    "convert", "convert a llama2.c, safetensors or GGUF model to GGUF (f16 … q4_k_m)",
    convert_main};
