/* tools/tool.h — what every poot subcommand shares. Flags are parsed only
 * here, in tools/ (STYLE.md). Exit codes: 0 success, 1 failure with a one-line
 * message naming the cause, 2 bad usage. */
#ifndef POOT_TOOLS_TOOL_H
#define POOT_TOOLS_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include "poot/base.h"
#include "poot/llm/driver.h"
#include "poot/runtime.h"

enum { POOT_EXIT_OK = 0, POOT_EXIT_FAIL = 1, POOT_EXIT_USAGE = 2 };

typedef struct poot_tool_command {
  const char *name;
  const char *summary; /* one line for `poot --help` */
  /* argv[0] is the subcommand's name; flags follow. */
  int (*main)(int argc, char **argv);
} poot_tool_command;

/* Prints "poot NAME: message" for a failed status, frees it, returns 1. */
int poot_tool_fail(const char *cmd, poot_status status);
/* Prints "poot NAME: message" and "try 'poot NAME --help'", returns 2. */
int poot_tool_usage_error(const char *cmd, const char *fmt, ...) POOT_PRINTF(2, 3);
/* True when argv[i] is -h or --help. */
bool poot_tool_is_help(const char *arg);
/* For a flag that takes a value: returns argv[i+1] and advances *i, or NULL
 * (after printing a usage error) when it is missing. */
const char *poot_tool_flag_value(const char *cmd, int argc, char **argv, int *i);
/* Parses a whole integer flag value; false (after a usage error) when it is not one. */
bool poot_tool_parse_i64(const char *cmd, const char *flag, const char *text, long long *out);
bool poot_tool_parse_f64(const char *cmd, const char *flag, const char *text, double *out);
/* --kv-type's value as the driver's kv_dtype (NULL, the flag absent:
 * POOT_DTYPE_NONE, the default); false (after a usage error) for anything
 * but f16, f32 or q8_0. */
bool poot_tool_parse_kv_type(const char *cmd, const char *text, poot_dtype *out);
/* --matmul-precision's value (NULL, the flag absent: POOT_MATMUL_HIGH);
 * false (after a usage error) for anything but high or medium. */
bool poot_tool_parse_matmul_precision(const char *cmd, const char *text,
                                      poot_matmul_precision *out);
/* --forms' value (NULL: 0, the compiler's defaults); false (after a usage
 * error) for a name poot_compile_forms_parse does not know. */
bool poot_tool_parse_forms(const char *cmd, const char *text, uint32_t *out);
/* ------------------------------------------------------------ flags */

/* Every flag a command may take, defined once in support_flags.c (its
 * spellings, its argument and its help), so a flag is spelled the same way
 * in every command. A command lists the flags it takes, each with where its
 * value goes. */
typedef enum poot_tool_flag_id {
  POOT_FLAG_MODEL,       /* -m, --model MODEL */
  POOT_FLAG_TOKENIZER,   /* --tokenizer FILE (-z) */
  POOT_FLAG_PROMPT,      /* -p, --prompt TEXT */
  POOT_FLAG_MESSAGES,    /* --messages FILE */
  POOT_FLAG_PROMPT_IDS,  /* --prompt-ids IDS */
  POOT_FLAG_N_PREDICT,   /* -n, --n-predict N */
  POOT_FLAG_N_PROMPT,    /* -p, --n-prompt N (bench: prefill tokens, as llama-bench) */
  POOT_FLAG_DEVICE,      /* --device D */
  POOT_FLAG_TEMP,        /* --temp T (--temperature) */
  POOT_FLAG_CAP,         /* --cap N */
  POOT_FLAG_CHUNK,       /* --chunk T */
  POOT_FLAG_CONTEXT,     /* --context C */
  POOT_FLAG_EAGER_STEPS, /* --eager-steps K */
  POOT_FLAG_COPY_MIB,    /* --copy-mib M */
  POOT_FLAG_PROFILE,     /* --profile K */
  POOT_FLAG_LOGITS,      /* --logits K */
  POOT_FLAG_IDS,         /* --ids */
  POOT_FLAG_PAGED,       /* --paged */
  POOT_FLAG_STATS,       /* --stats */
  POOT_FLAG_JSON,        /* --json */
  POOT_FLAG_IGNORE_EOS,  /* --ignore-eos */
  POOT_FLAG_QUIET,       /* -q, --quiet */
  POOT_FLAG_TOP_K,       /* --top-k N; the sampling flags: support_sampling.c */
  POOT_FLAG_TOP_P,
  POOT_FLAG_MIN_P,
  POOT_FLAG_SEED,
  POOT_FLAG_REPEAT_PENALTY,
  POOT_FLAG_PROBE_LIMIT_MIB,
  POOT_FLAG_BATCH,         /* -b: refused, batches other than 1 */
  POOT_FLAG_NO_BOS,        /* --no-bos */
  POOT_FLAG_PARSE_SPECIAL, /* --parse-special */
  POOT_FLAG_TIMING,        /* --timing */
  POOT_FLAG_SPECIAL,       /* --special */
  POOT_FLAG_KEEP_SPACE,    /* --keep-space */
  POOT_FLAG_TEMPLATE,      /* --template FILE */
  POOT_FLAG_BOS,           /* --bos TOKEN */
  POOT_FLAG_EOS,           /* --eos TOKEN */
  POOT_FLAG_GEN_PROMPT,    /* --add-generation-prompt */
  POOT_FLAG_NO_GEN_PROMPT, /* --no-generation-prompt */
  POOT_FLAG_NOW,           /* --now T */
  POOT_FLAG_TYPE,          /* --type TYPE (--outtype) */
  POOT_FLAG_NAME,          /* --name NAME */
  POOT_FLAG_INPUT,         /* -i, --input NAME=FILE.npy (repeated) */
  POOT_FLAG_IMAGE,         /* --image FILE (a LLaVA-style model's picture) */
  POOT_FLAG_OUT,           /* -o, --out DIR */
  POOT_FLAG_ZERO_STATES,   /* --zero-states */
  POOT_FLAG_GRAPH,         /* -g FILE.pgraph */
  POOT_FLAG_STEP,          /* --step S */
  POOT_FLAG_SEQUENCES,     /* --batch B (sequences per step) */
  POOT_FLAG_TARGET,        /* --target T */
  POOT_FLAG_EMIT,          /* --emit DIR */
  POOT_FLAG_NO_PASSES,     /* --no-passes */
  POOT_FLAG_SAMPLE,        /* --sample (bench: sampled decode beside greedy) */
  /* More sampling flags (support_sampling.c) and chat's. */
  POOT_FLAG_TYPICAL,           /* --typical P */
  POOT_FLAG_REPEAT_LAST_N,     /* --repeat-last-n N */
  POOT_FLAG_PRESENCE_PENALTY,  /* --presence-penalty A */
  POOT_FLAG_FREQUENCY_PENALTY, /* --frequency-penalty A */
  POOT_FLAG_LOGIT_BIAS,        /* --logit-bias TOKEN(+|-)BIAS (repeated) */
  POOT_FLAG_GRAMMAR,           /* --grammar GBNF */
  POOT_FLAG_GRAMMAR_FILE,      /* --grammar-file FILE */
  POOT_FLAG_JSON_SCHEMA,       /* -j, --json-schema SCHEMA */
  POOT_FLAG_JSON_SCHEMA_FILE,  /* -jf, --json-schema-file FILE */
  POOT_FLAG_STOP,              /* --stop STRING[,STRING...] (repeated) */
  POOT_FLAG_N_PROBS,           /* --n-probs N */
  POOT_FLAG_SYSTEM,            /* -sys, --system TEXT (chat) */
  POOT_FLAG_KV_TYPE,           /* --kv-type f16|f32|q8_0 */
  POOT_FLAG_MATMUL_PRECISION,  /* --matmul-precision high|medium */
  POOT_FLAG_FORMS,             /* --forms LIST (opt-in compiler forms) */
  /* Encoders (poot embed, poot rerank). */
  POOT_FLAG_POOLING,      /* --pooling mean|cls|last */
  POOT_FLAG_NORMALIZE,    /* --normalize */
  POOT_FLAG_NO_NORMALIZE, /* --no-normalize */
  POOT_FLAG_TRUNCATE,     /* --truncate */
  POOT_FLAG_QUERY,        /* -q, --query TEXT (rerank) */
  POOT_FLAG_BENCH,        /* --bench (embed: throughput and latency) */
  /* The server (poot serve): llama-server's and vLLM's spellings. */
  POOT_FLAG_HOST,          /* --host ADDR */
  POOT_FLAG_PORT,          /* --port N */
  POOT_FLAG_API_KEY,       /* --api-key KEY */
  POOT_FLAG_CTX_SIZE,      /* -c, --ctx-size N (--ctx) */
  POOT_FLAG_MAX_SEQS,      /* --max-seqs N (--max-num-seqs) */
  POOT_FLAG_MAX_QUEUE,     /* --max-queue N */
  POOT_FLAG_ALIAS,         /* -a, --alias NAME (--served-model-name) */
  POOT_FLAG_CHAT_TEMPLATE, /* --chat-template FILE (--chat-template-file) */
  POOT_FLAG_TIMEOUT,       /* -to, --timeout S */
  POOT_FLAG_MAX_BODY,      /* --max-body-bytes N */
  POOT_FLAG_MAX_TOKENS,    /* --max-tokens N */
  POOT_FLAG_MAX_N,         /* --max-n N */
  POOT_FLAG_MAX_MESSAGES,  /* --max-messages N */
  POOT_FLAG_PAGE_PATH,     /* --path DIR (the chat page's files) */
  POOT_FLAG_NO_WEBUI,      /* --no-webui */
  POOT_FLAG_COUNT
} poot_tool_flag_id;

typedef enum poot_tool_arg {
  POOT_TOOL_ARG_BOOL,    /* no value; sets a bool to true */
  POOT_TOOL_ARG_STRING,  /* a const char * (borrowed from argv) */
  POOT_TOOL_ARG_INT,     /* a long long inside the option's range */
  POOT_TOOL_ARG_FLOAT,   /* a double */
  POOT_TOOL_ARG_LIST,    /* repeated: appends its value to a poot_tool_list */
  POOT_TOOL_ARG_SET,     /* no value; stores the option's `min` into an int */
  POOT_TOOL_ARG_REFUSED, /* not supported yet: a usage error saying why */
} poot_tool_arg;

typedef struct poot_tool_flag {
  const char *short_name; /* "-m", or NULL */
  const char *long_name;  /* "--model", or NULL */
  const char *alias;      /* a further spelling kept working ("-z"), or NULL */
  poot_tool_arg arg;
  const char *metavar; /* the value's name in help ("MODEL"); NULL for BOOL */
  const char *help;    /* the help line; for REFUSED, why it is refused */
} poot_tool_flag;

/* The table, indexed by poot_tool_flag_id. */
extern const poot_tool_flag poot_tool_flags[POOT_FLAG_COUNT];

/* The values of a repeated flag: items[0..n), at most cap (the caller's storage). */
typedef struct poot_tool_list {
  const char **items;
  size_t n, cap;
} poot_tool_list;

/* One flag a command takes. */
typedef struct poot_tool_option {
  poot_tool_flag_id flag;
  /* By the arg: bool *, const char **, long long *, double *, poot_tool_list *
   * or int *; NULL for REFUSED. */
  void *dest;
  /* This command's help (its default, its meaning here); NULL: the flag's.
   * Lines after the first are indented under the first. */
  const char *help;
  /* INT: the accepted values; a value outside is a usage error. SET: min is
   * the value stored. */
  long long min, max;
} poot_tool_option;

/* A command's flags and help. */
typedef struct poot_tool_cli {
  const char *cmd;      /* "generate" */
  const char *synopsis; /* the usage lines and what the command does, before the flags */
  const poot_tool_option *options;
  size_t n_options;
  const char *epilog; /* after the flags, or NULL */
  /* Arguments that are not flags go to args[0..max_args) in order (the
   * caller sets them NULL first); one more is a usage error. */
  const char **args;
  size_t max_args;
} poot_tool_cli;

/* Parses argv[first..argc) against cli's options; -h/--help prints the help
 * to stdout. Returns -1 to go on, POOT_EXIT_OK after help, POOT_EXIT_USAGE
 * (after a usage error naming the flag) for an unknown flag, a missing or
 * malformed value, a value outside its range, a refused flag, a repeated
 * flag past its list's room or an argument past max_args. */
int poot_tool_parse(const poot_tool_cli *cli, int first, int argc, char **argv);
/* The synopsis, one line per option ("  -m, --model MODEL  help"), the epilog. */
void poot_tool_print_help(const poot_tool_cli *cli, FILE *f);

/* ------------------------------------------------------------ sampling */

/* The sampling flags of `poot generate` and `poot chat` (support_sampling.c):
 * llama.cpp's spellings and defaults. Values land here as parsed; _params
 * turns them into a poot_sampling_params. */
typedef struct poot_tool_sampling {
  double temp, top_p, min_p, typical, repeat_penalty, presence_penalty, frequency_penalty;
  long long top_k, repeat_last_n, seed, n_probs;
  bool ignore_eos;
  const char *grammar, *grammar_file, *json_schema, *json_schema_file;
  poot_tool_list logit_bias, stop;
  const char *bias_items[POOT_SAMPLING_MAX_BIAS];
  const char *stop_items[POOT_SAMPLING_MAX_STOPS];
} poot_tool_sampling;

/* Number of options poot_tool_sampling_options writes. */
enum { POOT_TOOL_SAMPLING_OPTIONS = 18 };

/* llama.cpp's defaults (poot_sampling_params_init); seed -1 (random). */
void poot_tool_sampling_init(poot_tool_sampling *s);
/* Writes the sampling options, whose values go to `s`, into out[0..POOT_TOOL_SAMPLING_OPTIONS). */
void poot_tool_sampling_options(poot_tool_sampling *s, poot_tool_option *out);
/* The parameters of the flags, validated (n_vocab 0: not against a vocabulary
 * yet); the seed stays POOT_SAMPLING_SEED_RANDOM for --seed -1. Returns -1 to
 * go on, or POOT_EXIT_USAGE after a usage error naming the flag or the field. */
int poot_tool_sampling_params(const char *cmd, const poot_tool_sampling *s, uint32_t n_vocab,
                              poot_sampling_params *out);
/* Compiles --grammar or --grammar-file (*out NULL when neither is given).
 * Returns -1 to go on, POOT_EXIT_USAGE after a usage error (both given; a
 * grammar that does not compile: the message has its line and column; the
 * JSON-schema flags, not wired yet), POOT_EXIT_FAIL when the file cannot be
 * read. */
int poot_tool_sampling_grammar(const char *cmd, const poot_tool_sampling *s, poot_grammar **out);
/* Resolves a random seed now, so a run can be repeated: prints "seed N" to
 * stderr unless quiet (only when the parameters draw). */
poot_status poot_tool_sampling_seed(const char *cmd, poot_sampling_params *p, bool quiet);

/* ------------------------------------------------------------ models and results */

#define POOT_TOOL_DEMO_MODEL "models/poot-demo.gguf"
#define POOT_TOOL_CHAT_PAGE "web/chat" /* poot serve's chat page (a folder) */

/* Finds the runtime data file or folder `rel` (support_demo.c): next to the
 * source tree this binary was built from, under an install prefix
 * (<bin>/../share/poot/REL, <bin>/../REL, <bin>/../../REL), then in the
 * current directory. */
bool poot_tool_find_data(const char *rel, char *buf, size_t size);
/* The bundled demo model (poot_tool_find_data of POOT_TOOL_DEMO_MODEL). */
bool poot_tool_find_demo(char *buf, size_t size);
/* `model` when given, else the demo model's path in buf; NULL (after a
 * one-line message) when it is not found. */
const char *poot_tool_default_model(const char *cmd, const char *model, char *buf, size_t size);
/* "length", "stop_id", "stop_string", "capacity", "grammar". */
const char *poot_tool_stop_reason_name(poot_driver_stop_reason reason);
/* The result's log-probabilities as a JSON array (one object per generated
 * id: token, logprob, top), [] without them. */
void poot_tool_write_probs(poot_strbuf *sb, const poot_driver_generate_result *r);

/* Reads all of stdin into a heap buffer (poot_free). */
poot_status poot_tool_read_stdin(char **out_data, size_t *out_size);

/* ------------------------------------------------------------ encoders */

/* The lines of standard input (support_encoder.c): each without its "\n"
 * (or "\r\n"); a last line without a newline counts. INVALID_ARGUMENT
 * naming the line for an empty one. *out_lines points into *out_text (both
 * poot_free). */
poot_status poot_tool_read_lines(char **out_text, char ***out_lines, size_t *out_count);

/* The runtime of an encoder model on `device` with its driver: fails before
 * opening a device (UNSUPPORTED) when the model is a decoder. */
poot_status poot_tool_open_encoder(const char *model, const char *device, poot_runtime **out_rt);

/* One sequence per text (with `pairs`, each text is the second of a pair
 * whose first is `query`), tokenized by poot_driver_encoder_tokenize. The
 * arrays are poot_malloc'ed; free with poot_tool_sequences_free. */
poot_status poot_tool_sequences(const poot_model *model, const char *query, char **texts, size_t n,
                                bool truncate, poot_driver_sequence **out_seqs);
void poot_tool_sequences_free(poot_driver_sequence *seqs, size_t n);

#endif
