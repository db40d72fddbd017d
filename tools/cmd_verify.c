/* poot verify — verification against the oracle (DESIGN §9).
 *   poot verify greedy -m MODEL [--tokenizer FILE] [-p PROMPT | --messages FILE.json]
 *                      -n N [--device eval] [--ids] [--paged] [--cap C]
 * runs prefill and greedy decode steps on poot_eval and prints the generated
 * text (or, with --ids, the generated ids on one line). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/model.h"
#include "poot/llm/verify.h"
#include "tool.h"

static const char *const CMD = "verify";

static void usage(void) {
  printf(
      "usage: poot verify greedy -m MODEL [--tokenizer FILE] [-p PROMPT | --messages FILE.json]\n"
      "                          -n N [--device eval] [--ids] [--paged] [--cap C] [--stats]\n"
      "                          [--json [--logits K]] [--ignore-eos]\n\n"
      "Runs the model's prefill and decode graphs on the CPU oracle (poot_eval), greedy,\n"
      "and prints the generated text. Generation stops after N tokens or at the model's\n"
      "end of sequence (a llama2.c checkpoint: at BOS, as llama2.c's runner does).\n\n"
      "  -m MODEL           a GGUF file, a safetensors folder with config.json, or a\n"
      "                     llama2.c checkpoint (then --tokenizer is required)\n"
      "  --tokenizer FILE   the tokenizer (llama2.c), or an override\n"
      "  -p PROMPT          prompt text (default: empty, BOS only where the model adds it)\n"
      "  --messages FILE    a JSON array of {role, content}, rendered with the chat template\n"
      "  -n N               tokens to generate (default 16)\n"
      "  --device eval      the oracle (the only device of this command for now)\n"
      "  --ids              print the generated ids, separated by spaces, not text\n"
      "  --paged            keep K/V in a paged block pool (same results)\n"
      "  --cap C            KV capacity (default: prompt + N)\n"
      "  --stats            print the prompt length and timing to stderr\n"
      "  --json             print one JSON object: prompt_ids, ids, stopped, margins (top-1\n"
      "                     minus top-2 logit per step), logits (with --logits), text\n"
      "  --logits K         with --json: the full logits of the first K generated steps\n"
      "  --ignore-eos       do not stop at the model's end-of-sequence ids\n");
}

static void print_floats(poot_strbuf *sb, const float *x, size_t n) {
  poot_strbuf_putc(sb, '[');
  for (size_t i = 0; i < n; i++) {
    if (isfinite(x[i]))
      poot_strbuf_printf(sb, i ? ",%.9g" : "%.9g", (double)x[i]);
    else
      poot_strbuf_puts(sb, i ? ",null" : "null");
  }
  poot_strbuf_putc(sb, ']');
}

/* One JSON object on one line (for scripts: the tier-3 reference checks). */
static void print_json(const poot_token *prompt, size_t np, const poot_verify_greedy_result *r,
                       const poot_strbuf *text) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "{\"prompt_ids\":[");
  for (size_t i = 0; i < np; i++) poot_strbuf_printf(&sb, i ? ",%d" : "%d", (int)prompt[i]);
  poot_strbuf_puts(&sb, "],\"ids\":[");
  for (size_t i = 0; i < r->n_ids; i++) poot_strbuf_printf(&sb, i ? ",%d" : "%d", (int)r->ids[i]);
  poot_strbuf_printf(&sb, "],\"stopped\":%s,\"margins\":", r->stopped ? "true" : "false");
  print_floats(&sb, r->margins, r->n_ids);
  poot_strbuf_puts(&sb, ",\"logits\":[");
  for (size_t k = 0; k < r->n_logits; k++) {
    if (k) poot_strbuf_putc(&sb, ',');
    print_floats(&sb, r->logits + k * (size_t)r->vocab, (size_t)r->vocab);
  }
  poot_strbuf_printf(&sb, "],\"seconds\":%.6f,\"text\":", r->seconds);
  poot_json_write_string(&sb, text->data, text->len, true);
  poot_strbuf_puts(&sb, "}\n");
  fwrite(sb.data, 1, sb.len, stdout);
  poot_strbuf_deinit(&sb);
}

static int verify_greedy(int argc, char **argv) {
  const char *model_path = NULL, *tok_path = NULL, *prompt = NULL, *messages = NULL;
  const char *device = "eval";
  long long n = 16, cap = 0;
  bool ids = false, paged = false, stats = false, json = false, ignore_eos = false;
  long long keep_logits = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (poot_tool_is_help(a)) {
      usage();
      return POOT_EXIT_OK;
    } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
      if (!(model_path = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--tokenizer") || !strcmp(a, "-z")) {
      if (!(tok_path = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
      if (!(prompt = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--messages")) {
      if (!(messages = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "-n")) {
      const char *v = poot_tool_flag_value(CMD, argc, argv, &i);
      if (!v || !poot_tool_parse_i64(CMD, "-n", v, &n)) return POOT_EXIT_USAGE;
      if (n < 0) return poot_tool_usage_error(CMD, "-n must be >= 0");
    } else if (!strcmp(a, "--cap")) {
      const char *v = poot_tool_flag_value(CMD, argc, argv, &i);
      if (!v || !poot_tool_parse_i64(CMD, "--cap", v, &cap)) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--device")) {
      if (!(device = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--ids")) {
      ids = true;
    } else if (!strcmp(a, "--paged")) {
      paged = true;
    } else if (!strcmp(a, "--stats")) {
      stats = true;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--ignore-eos")) {
      ignore_eos = true;
    } else if (!strcmp(a, "--logits")) {
      const char *v = poot_tool_flag_value(CMD, argc, argv, &i);
      if (!v || !poot_tool_parse_i64(CMD, "--logits", v, &keep_logits)) return POOT_EXIT_USAGE;
      if (keep_logits < 0) return poot_tool_usage_error(CMD, "--logits must be >= 0");
    } else {
      return poot_tool_usage_error(CMD, "unknown argument '%s'", a);
    }
  }
  if (!model_path) return poot_tool_usage_error(CMD, "greedy needs -m MODEL");
  if (prompt && messages) return poot_tool_usage_error(CMD, "give -p or --messages, not both");
  if (strcmp(device, "eval") != 0)
    return poot_tool_usage_error(CMD, "--device '%s': only 'eval' (the oracle) runs here", device);

  poot_model_open_options oo = {.tokenizer_path = tok_path};
  poot_model *model = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  char *mtext = NULL;
  size_t mlen = 0;
  poot_verify_greedy_result res;
  memset(&res, 0, sizeof res);
  poot_strbuf out;
  poot_strbuf_init(&out);
  int rc = POOT_EXIT_FAIL;
  poot_status st = poot_model_open(model_path, &oo, &model);
  if (st) goto fail;
  if (messages) {
    if ((st = poot_file_read_all(messages, &mtext, &mlen))) goto fail;
    if ((st = poot_verify_encode_chat(model, mtext, mlen, &pids, &np, NULL))) goto fail;
  } else {
    const char *p = prompt ? prompt : "";
    if ((st = poot_verify_encode_text(model, p, strlen(p), &pids, &np))) goto fail;
  }
  if (np == 0) {
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "the prompt is empty and the tokenizer adds no BOS; give -p TEXT");
    goto fail;
  }
  poot_verify_greedy_options go = poot_verify_greedy_options_default();
  go.max_new_tokens = n;
  go.cap = cap;
  go.paged = paged;
  go.ignore_stop = ignore_eos;
  go.keep_logits = (size_t)keep_logits;
  poot_verify_evaluator ev = poot_verify_oracle();
  if ((st = poot_verify_greedy(model, &ev, pids, np, &go, &res))) goto fail;
  if (json) {
    if ((st = poot_verify_decode(model, pids, np, res.ids, res.n_ids, res.stopped, &out)))
      goto fail;
    print_json(pids, np, &res, &out);
  } else if (ids) {
    for (size_t i = 0; i < res.n_ids; i++) printf(i ? " %d" : "%d", (int)res.ids[i]);
    printf("\n");
  } else {
    if ((st = poot_verify_decode(model, pids, np, res.ids, res.n_ids, res.stopped, &out)))
      goto fail;
    fwrite(out.data, 1, out.len, stdout);
    printf("\n");
  }
  if (stats)
    fprintf(stderr, "poot verify: prompt %zu ids, generated %zu in %.3f s (%.1f tok/s)%s\n", np,
            res.n_ids, res.seconds, res.seconds > 0 ? (double)res.n_ids / res.seconds : 0.0,
            res.stopped ? ", stopped at a stop id" : "");
  rc = POOT_EXIT_OK;
  goto done;
fail:
  rc = poot_tool_fail(CMD, st);
done:
  poot_verify_greedy_result_deinit(&res);
  poot_strbuf_deinit(&out);
  poot_free(mtext);
  poot_free(pids);
  poot_model_destroy(model);
  return rc;
}

static int verify_main(int argc, char **argv) {
  if (argc < 2) return poot_tool_usage_error(CMD, "give a mode: greedy");
  if (poot_tool_is_help(argv[1])) {
    usage();
    return POOT_EXIT_OK;
  }
  if (!strcmp(argv[1], "greedy")) return verify_greedy(argc - 1, argv + 1);
  return poot_tool_usage_error(CMD, "unknown mode '%s' (greedy is available)", argv[1]);
}

const poot_tool_command poot_tool_cmd_verify = {
    "verify", "run a model on the oracle (greedy) and check it against references", verify_main};
