/* The shared flag table and its parser (tool.h): each flag is defined once
 * here, and every command that takes it spells it the same way. */
#include <limits.h>
#include <string.h>

#include "tool.h"

const poot_tool_flag poot_tool_flags[POOT_FLAG_COUNT] = {
    [POOT_FLAG_MODEL] = {"-m", "--model", NULL, POOT_TOOL_ARG_STRING, "MODEL",
                         "GGUF file, safetensors folder, or llama2.c checkpoint"},
    [POOT_FLAG_TOKENIZER] = {"-z", "--tokenizer", NULL, POOT_TOOL_ARG_STRING, "FILE",
                             "the tokenizer of a llama2.c checkpoint, or an override"},
    [POOT_FLAG_PROMPT] = {"-p", "--prompt", NULL, POOT_TOOL_ARG_STRING, "PROMPT",
                          "the prompt (default: empty, BOS only)"},
    [POOT_FLAG_MESSAGES] = {NULL, "--messages", NULL, POOT_TOOL_ARG_STRING, "FILE",
                            "a JSON array of {role, content}, rendered with the chat template"},
    [POOT_FLAG_PROMPT_IDS] = {NULL, "--prompt-ids", NULL, POOT_TOOL_ARG_STRING, "IDS",
                              "the prompt as token ids (\"1,2,3\"), bypassing the tokenizer"},
    [POOT_FLAG_N_PREDICT] = {"-n", "--n-predict", NULL, POOT_TOOL_ARG_INT, "N",
                             "tokens to generate"},
    [POOT_FLAG_N_PROMPT] = {"-p", "--n-prompt", NULL, POOT_TOOL_ARG_INT, "N",
                            "prompt (prefill) tokens"},
    [POOT_FLAG_DEVICE] = {NULL, "--device", NULL, POOT_TOOL_ARG_STRING, "D",
                          "auto (the first present of ptx, rocm, vulkan, wgpu),\n"
                          "a backend name, or backend:index"},
    [POOT_FLAG_TEMP] = {NULL, "--temp", "--temperature", POOT_TOOL_ARG_FLOAT, "T",
                        "temperature (default 0.8; 0: greedy, the most likely\ntoken every step)"},
    [POOT_FLAG_CAP] = {NULL, "--cap", NULL, POOT_TOOL_ARG_INT, "N", "KV capacity"},
    [POOT_FLAG_CHUNK] =
        {NULL, "--chunk", NULL, POOT_TOOL_ARG_INT, "T",
         "prefill chunk in tokens (default 512, the capacity below 512; then 128s, 16s; 1: none)"},
    [POOT_FLAG_CONTEXT] = {NULL, "--context", NULL, POOT_TOOL_ARG_INT, "C",
                           "tokens of context before the measured steps"},
    [POOT_FLAG_EAGER_STEPS] = {NULL, "--eager-steps", NULL, POOT_TOOL_ARG_INT, "K",
                               "decode steps of the replay-vs-eager comparison"},
    [POOT_FLAG_COPY_MIB] = {NULL, "--copy-mib", NULL, POOT_TOOL_ARG_INT, "M",
                            "buffer size of the bandwidth probes (copy and stream)"},
    [POOT_FLAG_PROBE_LIMIT_MIB] = {NULL, "--probe-limit-mib", NULL, POOT_TOOL_ARG_INT, "M",
                                   "treat probe buffers larger than M MiB as refused"},
    [POOT_FLAG_PROFILE] = {NULL, "--profile", NULL, POOT_TOOL_ARG_INT, "K",
                           "device time per kind of dispatch over K eager steps"},
    [POOT_FLAG_LOGITS] = {NULL, "--logits", NULL, POOT_TOOL_ARG_INT, "K",
                          "the full logits of the first K generated steps"},
    [POOT_FLAG_IDS] = {NULL, "--ids", NULL, POOT_TOOL_ARG_BOOL, NULL,
                       "print the generated token ids instead of text"},
    [POOT_FLAG_PAGED] = {NULL, "--paged", NULL, POOT_TOOL_ARG_BOOL, NULL,
                         "keep K/V in a paged block pool (same results)"},
    [POOT_FLAG_STATS] = {NULL, "--stats", NULL, POOT_TOOL_ARG_BOOL, NULL,
                         "print the prompt length and timing to stderr"},
    [POOT_FLAG_JSON] = {NULL, "--json", NULL, POOT_TOOL_ARG_BOOL, NULL,
                        "one JSON object on stdout"},
    [POOT_FLAG_IGNORE_EOS] = {NULL, "--ignore-eos", NULL, POOT_TOOL_ARG_BOOL, NULL,
                              "do not stop at the model's stop ids"},
    [POOT_FLAG_QUIET] = {"-q", "--quiet", NULL, POOT_TOOL_ARG_BOOL, NULL,
                         "no progress lines on stderr"},
    [POOT_FLAG_TOP_K] = {NULL, "--top-k", NULL, POOT_TOOL_ARG_INT, "N",
                         "keep the N most likely tokens (default 40; 0: off)"},
    [POOT_FLAG_TOP_P] = {NULL, "--top-p", NULL, POOT_TOOL_ARG_FLOAT, "P",
                         "keep the most likely tokens up to probability P\n(default 0.95; 1: off)"},
    [POOT_FLAG_MIN_P] = {NULL, "--min-p", NULL, POOT_TOOL_ARG_FLOAT, "P",
                         "drop tokens below P times the most likely one's\nprobability "
                         "(default 0.05; 0: off)"},
    [POOT_FLAG_SEED] = {NULL, "--seed", NULL, POOT_TOOL_ARG_INT, "S",
                        "the random seed (default -1: a random one, printed\nto stderr so "
                        "the run can be repeated)"},
    [POOT_FLAG_REPEAT_PENALTY] = {NULL, "--repeat-penalty", NULL, POOT_TOOL_ARG_FLOAT, "R",
                                  "penalize repeated tokens (default 1: off)"},
    [POOT_FLAG_BATCH] = {"-b", NULL, NULL, POOT_TOOL_ARG_REFUSED, NULL,
                         "batches other than 1 are not supported yet"},
    [POOT_FLAG_NO_BOS] = {NULL, "--no-bos", NULL, POOT_TOOL_ARG_BOOL, NULL,
                          "add none of the model's special tokens (BOS, EOS, [CLS]/[SEP])"},
    [POOT_FLAG_PARSE_SPECIAL] = {NULL, "--parse-special", NULL, POOT_TOOL_ARG_BOOL, NULL,
                                 "match special tokens written in the text (\"<s>\",\n"
                                 "\"<|eot_id|>\"); otherwise they are tokenized as text"},
    [POOT_FLAG_TIMING] = {NULL, "--timing", NULL, POOT_TOOL_ARG_BOOL, NULL,
                          "print the load and encode times to standard error"},
    [POOT_FLAG_SPECIAL] = {NULL, "--special", NULL, POOT_TOOL_ARG_BOOL, NULL,
                           "write control tokens (\"<s>\", \"<|eot_id|>\") as their text;\n"
                           "by default they write nothing"},
    [POOT_FLAG_KEEP_SPACE] = {NULL, "--keep-space", NULL, POOT_TOOL_ARG_BOOL, NULL,
                              "keep the leading space SentencePiece-style encoders add"},
    [POOT_FLAG_TEMPLATE] = {NULL, "--template", NULL, POOT_TOOL_ARG_STRING, "FILE",
                            "a chat template file instead of a model's"},
    [POOT_FLAG_BOS] = {NULL, "--bos", NULL, POOT_TOOL_ARG_STRING, "TOKEN", "the bos_token"},
    [POOT_FLAG_EOS] = {NULL, "--eos", NULL, POOT_TOOL_ARG_STRING, "TOKEN", "the eos_token"},
    [POOT_FLAG_GEN_PROMPT] = {NULL, "--add-generation-prompt", NULL, POOT_TOOL_ARG_SET, NULL,
                              "add_generation_prompt = true"},
    [POOT_FLAG_NO_GEN_PROMPT] = {NULL, "--no-generation-prompt", NULL, POOT_TOOL_ARG_SET, NULL,
                                 "add_generation_prompt = false"},
    [POOT_FLAG_NOW] = {NULL, "--now", NULL, POOT_TOOL_ARG_INT, "T",
                       "the time strftime_now sees, in seconds since the epoch"},
    [POOT_FLAG_TYPE] = {NULL, "--type", "--outtype", POOT_TOOL_ARG_STRING, "TYPE",
                        "the tensor type written"},
    [POOT_FLAG_NAME] = {NULL, "--name", NULL, POOT_TOOL_ARG_STRING, "NAME", "general.name"},
    [POOT_FLAG_INPUT] = {"-i", "--input", NULL, POOT_TOOL_ARG_LIST, "NAME=FILE.npy",
                         "bind a leaf to an array"},
    [POOT_FLAG_IMAGE] = {NULL, "--image", NULL, POOT_TOOL_ARG_STRING, "FILE",
                         "a PNG, JPEG or WebP image for a vision model (LLaVA)"},
    [POOT_FLAG_OUT] = {"-o", "--out", NULL, POOT_TOOL_ARG_STRING, "DIR",
                       "write the results into DIR"},
    [POOT_FLAG_ZERO_STATES] = {NULL, "--zero-states", NULL, POOT_TOOL_ARG_BOOL, NULL,
                               "states without an --input start as zeros"},
    [POOT_FLAG_GRAPH] = {"-g", NULL, NULL, POOT_TOOL_ARG_STRING, "FILE",
                         "a graph in the .pgraph text form instead of a model"},
    [POOT_FLAG_STEP] = {NULL, "--step", NULL, POOT_TOOL_ARG_STRING, "S",
                        "decode (default) or prefill:T"},
    [POOT_FLAG_SEQUENCES] = {NULL, "--batch", NULL, POOT_TOOL_ARG_INT, "B",
                             "sequences per step (default 1)"},
    [POOT_FLAG_TARGET] = {NULL, "--target", NULL, POOT_TOOL_ARG_STRING, "T", "the target"},
    [POOT_FLAG_EMIT] = {NULL, "--emit", NULL, POOT_TOOL_ARG_STRING, "DIR",
                        "write the plan and the kernels into DIR (created)"},
    [POOT_FLAG_NO_PASSES] = {NULL, "--no-passes", NULL, POOT_TOOL_ARG_BOOL, NULL,
                             "plan the graph as traced, without the graph passes"},
    [POOT_FLAG_SAMPLE] = {NULL, "--sample", NULL, POOT_TOOL_ARG_BOOL, NULL,
                          "also decode with llama.cpp's default sampling plus penalties, then "
                          "with a JSON grammar's mask too, and report the cost over greedy "
                          "(--batch B: every sequence sampled, penalties over its whole "
                          "history; the sampled rows' host time)"},
    [POOT_FLAG_TYPICAL] = {NULL, "--typical", NULL, POOT_TOOL_ARG_FLOAT, "P",
                           "locally typical sampling (default 1: off)"},
    [POOT_FLAG_REPEAT_LAST_N] = {NULL, "--repeat-last-n", NULL, POOT_TOOL_ARG_INT, "N",
                                 "tokens of history the penalties see (default 64;\n0: off, "
                                 "-1: all)"},
    [POOT_FLAG_PRESENCE_PENALTY] = {NULL, "--presence-penalty", NULL, POOT_TOOL_ARG_FLOAT, "A",
                                    "subtract A from each seen token (default 0: off)"},
    [POOT_FLAG_FREQUENCY_PENALTY] = {NULL, "--frequency-penalty", NULL, POOT_TOOL_ARG_FLOAT, "A",
                                     "subtract A per occurrence (default 0: off)"},
    [POOT_FLAG_LOGIT_BIAS] = {NULL, "--logit-bias", NULL, POOT_TOOL_ARG_LIST, "TOKEN(+|-)BIAS",
                              "add BIAS to a token id's logit (\"15043+1\",\n\"2-inf\" bans "
                              "token 2); repeatable"},
    [POOT_FLAG_GRAMMAR] = {NULL, "--grammar", NULL, POOT_TOOL_ARG_STRING, "GBNF",
                           "constrain the output to a GBNF grammar (its rule root)"},
    [POOT_FLAG_GRAMMAR_FILE] = {NULL, "--grammar-file", NULL, POOT_TOOL_ARG_STRING, "FILE",
                                "the GBNF grammar from a file"},
    [POOT_FLAG_JSON_SCHEMA] = {"-j", "--json-schema", NULL, POOT_TOOL_ARG_STRING, "SCHEMA",
                               "constrain the output to a JSON schema ({} is any\nJSON value)"},
    [POOT_FLAG_JSON_SCHEMA_FILE] = {"-jf", "--json-schema-file", NULL, POOT_TOOL_ARG_STRING, "FILE",
                                    "the JSON schema from a file"},
    [POOT_FLAG_STOP] = {NULL, "--stop", NULL, POOT_TOOL_ARG_LIST, "STRING",
                        "stop when the output holds STRING (not printed);\nrepeatable, and "
                        "each value is a comma-separated\nlist: \\, is a comma, \\n a "
                        "newline, \\\\ a backslash"},
    [POOT_FLAG_N_PROBS] = {NULL, "--n-probs", NULL, POOT_TOOL_ARG_INT, "N",
                           "the N most likely tokens' log-probabilities at\neach step, in "
                           "the --json output (0..20)"},
    [POOT_FLAG_SYSTEM] = {"-sys", "--system", "--system-prompt", POOT_TOOL_ARG_STRING, "TEXT",
                          "the system prompt"},
    [POOT_FLAG_KV_TYPE] = {NULL, "--kv-type", NULL, POOT_TOOL_ARG_STRING, "TYPE",
                           "the KV cache's element type: f16 (default: half\nthe "
                           "bytes of f32), f32 or q8_0 (about a quarter;\nsee docs/driver.md)"},
    [POOT_FLAG_MATMUL_PRECISION] = {NULL, "--matmul-precision", NULL, POOT_TOOL_ARG_STRING, "P",
                                    "the prefill GEMM's products on matrix fragments\n"
                                    "and the block-format decode GEMV: high (default:\n"
                                    "f32-like) or medium (x rounded once to 16 bits,\n"
                                    "or to int8 blocks for dp4a; see docs/compiler.md)"},
    [POOT_FLAG_FORMS] = {NULL, "--forms", NULL, POOT_TOOL_ARG_STRING, "LIST",
                         "opt-in compiler forms to measure, comma-separated:\n"
                         "big-tiles, x-emitter, gemv-one-row, w-emitter,\n"
                         "static-shared (default: none; see docs/compiler.md)"},
    [POOT_FLAG_POOLING] = {NULL, "--pooling", NULL, POOT_TOOL_ARG_STRING, "P",
                           "mean, cls or last (default: the model's, from\n"
                           "sentence-transformers' Pooling module)"},
    [POOT_FLAG_NORMALIZE] = {NULL, "--normalize", NULL, POOT_TOOL_ARG_BOOL, NULL,
                             "L2-normalize each vector (default: as the model\nsays)"},
    [POOT_FLAG_NO_NORMALIZE] = {NULL, "--no-normalize", NULL, POOT_TOOL_ARG_BOOL, NULL,
                                "do not normalize"},
    [POOT_FLAG_TRUNCATE] = {NULL, "--truncate", NULL, POOT_TOOL_ARG_BOOL, NULL,
                            "cut a text longer than the model's positions\n(default: an error)"},
    [POOT_FLAG_QUERY] = {"-q", "--query", NULL, POOT_TOOL_ARG_STRING, "TEXT", "the query"},
    [POOT_FLAG_BENCH] = {NULL, "--bench", NULL, POOT_TOOL_ARG_BOOL, NULL,
                         "measure throughput and latency instead"},
    [POOT_FLAG_HOST] = {NULL, "--host", NULL, POOT_TOOL_ARG_STRING, "ADDR",
                        "the IPv4 address to listen on (default 127.0.0.1)"},
    [POOT_FLAG_PORT] = {NULL, "--port", NULL, POOT_TOOL_ARG_INT, "N",
                        "the port (default 8080; 0: a free one, printed)"},
    [POOT_FLAG_API_KEY] = {NULL, "--api-key", NULL, POOT_TOOL_ARG_STRING, "KEY",
                           "requests need \"Authorization: Bearer KEY\""},
    [POOT_FLAG_CTX_SIZE] = {"-c", "--ctx-size", "--ctx", POOT_TOOL_ARG_INT, "N",
                            "context of a sequence: prompt + generated tokens"},
    [POOT_FLAG_MAX_SEQS] = {NULL, "--max-seqs", "--max-num-seqs", POOT_TOOL_ARG_INT, "N",
                            "sequences run at once"},
    [POOT_FLAG_MAX_QUEUE] = {NULL, "--max-queue", NULL, POOT_TOOL_ARG_INT, "N",
                             "requests that may wait; one more is a 429"},
    [POOT_FLAG_ALIAS] = {"-a", "--alias", "--served-model-name", POOT_TOOL_ARG_STRING, "NAME",
                         "the model's id in the API"},
    [POOT_FLAG_CHAT_TEMPLATE] = {NULL, "--chat-template", "--chat-template-file",
                                 POOT_TOOL_ARG_STRING, "FILE",
                                 "a Jinja chat template file instead of the model's"},
    [POOT_FLAG_TIMEOUT] = {"-to", "--timeout", NULL, POOT_TOOL_ARG_INT, "S",
                           "close a connection idle for S seconds"},
    [POOT_FLAG_MAX_BODY] = {NULL, "--max-body-bytes", NULL, POOT_TOOL_ARG_INT, "N",
                            "larger request bodies are refused (413)"},
    [POOT_FLAG_MAX_TOKENS] = {NULL, "--max-tokens", NULL, POOT_TOOL_ARG_INT, "N",
                              "the largest max_tokens a request may ask"},
    [POOT_FLAG_MAX_N] = {NULL, "--max-n", NULL, POOT_TOOL_ARG_INT, "N",
                         "the most choices (n) of one request"},
    [POOT_FLAG_MAX_MESSAGES] = {NULL, "--max-messages", NULL, POOT_TOOL_ARG_INT, "N",
                                "the most messages of one chat request"},
    [POOT_FLAG_PAGE_PATH] = {NULL, "--path", NULL, POOT_TOOL_ARG_STRING, "DIR",
                             "the chat page's files (default: " POOT_TOOL_CHAT_PAGE ")"},
    [POOT_FLAG_NO_WEBUI] = {NULL, "--no-webui", NULL, POOT_TOOL_ARG_BOOL, NULL,
                            "no chat page at /"},
};

bool poot_tool_parse_kv_type(const char *cmd, const char *text, poot_dtype *out) {
  *out = POOT_DTYPE_NONE;
  if (!text) return true;
  if (!strcmp(text, "f16")) {
    *out = POOT_DTYPE_F16;
    return true;
  }
  if (!strcmp(text, "f32")) {
    *out = POOT_DTYPE_F32;
    return true;
  }
  if (!strcmp(text, "q8_0")) {
    *out = POOT_DTYPE_Q8_0;
    return true;
  }
  (void)poot_tool_usage_error(cmd, "--kv-type takes f16, f32 or q8_0, not '%s'", text);
  return false;
}

bool poot_tool_parse_matmul_precision(const char *cmd, const char *text,
                                      poot_matmul_precision *out) {
  *out = POOT_MATMUL_HIGH;
  if (!text) return true;
  poot_status st = poot_matmul_precision_parse(text, out);
  if (!st) return true;
  (void)poot_tool_usage_error(cmd, "--matmul-precision: %s", poot_status_message(st));
  poot_status_free(st);
  return false;
}

bool poot_tool_parse_forms(const char *cmd, const char *text, uint32_t *out) {
  poot_status st = poot_compile_forms_parse(text, out);
  if (!st) return true;
  (void)poot_tool_usage_error(cmd, "--forms: %s", poot_status_message(st));
  poot_status_free(st);
  return false;
}

static bool spells(const poot_tool_flag *f, const char *arg) {
  return (f->short_name && !strcmp(arg, f->short_name)) ||
         (f->long_name && !strcmp(arg, f->long_name)) || (f->alias && !strcmp(arg, f->alias));
}

static const poot_tool_option *find_option(const poot_tool_cli *cli, const char *arg) {
  for (size_t i = 0; i < cli->n_options; i++)
    if (spells(&poot_tool_flags[cli->options[i].flag], arg)) return &cli->options[i];
  return NULL;
}

/* Stores the value of `o` (spelled `arg`) from argv; false after a usage error. */
static bool take_value(const poot_tool_cli *cli, const poot_tool_option *o, const char *arg,
                       int argc, char **argv, int *i) {
  const poot_tool_flag *f = &poot_tool_flags[o->flag];
  if (f->arg == POOT_TOOL_ARG_BOOL) {
    *(bool *)o->dest = true;
    return true;
  }
  if (f->arg == POOT_TOOL_ARG_SET) {
    *(int *)o->dest = (int)o->min;
    return true;
  }
  const char *v = poot_tool_flag_value(cli->cmd, argc, argv, i);
  if (!v) return false;
  if (f->arg == POOT_TOOL_ARG_STRING) {
    *(const char **)o->dest = v;
    return true;
  }
  if (f->arg == POOT_TOOL_ARG_FLOAT) return poot_tool_parse_f64(cli->cmd, arg, v, o->dest);
  if (f->arg == POOT_TOOL_ARG_LIST) {
    poot_tool_list *l = o->dest;
    if (l->n == l->cap) {
      (void)poot_tool_usage_error(cli->cmd, "%s is given too often (at most %zu)", arg, l->cap);
      return false;
    }
    l->items[l->n++] = v;
    return true;
  }
  long long x;
  if (!poot_tool_parse_i64(cli->cmd, arg, v, &x)) return false;
  if (x < o->min || x > o->max) {
    if (o->max == LLONG_MAX)
      (void)poot_tool_usage_error(cli->cmd, "%s must be >= %lld", arg, o->min);
    else
      (void)poot_tool_usage_error(cli->cmd, "%s %s is outside %lld..%lld", arg, v, o->min, o->max);
    return false;
  }
  *(long long *)o->dest = x;
  return true;
}

int poot_tool_parse(const poot_tool_cli *cli, int first, int argc, char **argv) {
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (poot_tool_is_help(a)) {
      poot_tool_print_help(cli, stdout);
      return POOT_EXIT_OK;
    }
    const poot_tool_option *o = find_option(cli, a);
    if (!o && a[0] == '-' && a[1]) return poot_tool_usage_error(cli->cmd, "unknown flag '%s'", a);
    if (!o) {
      size_t k = 0;
      while (k < cli->max_args && cli->args[k]) k++;
      if (k == cli->max_args) return poot_tool_usage_error(cli->cmd, "unexpected argument '%s'", a);
      cli->args[k] = a;
      continue;
    }
    const poot_tool_flag *f = &poot_tool_flags[o->flag];
    if (f->arg == POOT_TOOL_ARG_REFUSED)
      return poot_tool_usage_error(cli->cmd, "%s: %s", a, f->help);
    if (!take_value(cli, o, a, argc, argv, &i)) return POOT_EXIT_USAGE;
  }
  return -1;
}

/* Prints `text` with every line after the first indented to `indent`. */
static void print_indented(FILE *f, const char *text, int indent) {
  for (const char *p = text; *p; p++) {
    fputc(*p, f);
    if (*p == '\n' && p[1]) fprintf(f, "%*s", indent, "");
  }
}

void poot_tool_print_help(const poot_tool_cli *cli, FILE *f) {
  enum { COLUMN = 24 };
  fputs(cli->synopsis, f);
  for (size_t i = 0; i < cli->n_options; i++) {
    const poot_tool_option *o = &cli->options[i];
    const poot_tool_flag *fl = &poot_tool_flags[o->flag];
    if (fl->arg == POOT_TOOL_ARG_REFUSED) continue;
    char names[96];
    snprintf(names, sizeof names, "%s%s%s%s%s%s%s", fl->short_name ? fl->short_name : "",
             fl->short_name && fl->long_name ? ", " : "", fl->long_name ? fl->long_name : "",
             fl->alias ? ", " : "", fl->alias ? fl->alias : "", fl->metavar ? " " : "",
             fl->metavar ? fl->metavar : "");
    int used = fprintf(f, "  %s", names);
    if (used + 1 > COLUMN)
      fprintf(f, "\n%*s", COLUMN, "");
    else
      fprintf(f, "%*s", COLUMN - used, "");
    print_indented(f, o->help ? o->help : fl->help, COLUMN);
    fputc('\n', f);
  }
  if (cli->epilog) fputs(cli->epilog, f);
}
