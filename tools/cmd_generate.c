/* poot generate — greedy text generation on a device (DESIGN §11):
 *   poot generate [-m MODEL] [--tokenizer FILE] [-p PROMPT] [-n N] [--temp 0]
 *                 [--device D] [--ids] [--cap N] [--chunk T] [--ignore-eos]
 *                 [--image FILE]
 * Without -m it uses the bundled demo model (models/poot-demo.gguf), looked
 * up next to the source tree this binary was built from, under an install
 * prefix (<bin>/../share/poot/models), then in the current directory.
 * Tokens stream to stdout as they are produced; progress goes to stderr. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "poot/runtime.h"
#include "tool.h"
#include "tool_vision.h"

#define CMD "generate"

typedef struct generate_flags {
  const char *model, *tokenizer, *prompt, *device, *kv_type, *image, *matmul_precision;
  const char *forms_text;
  long long n, cap, chunk;
  poot_dtype kv;
  poot_matmul_precision mp;
  uint32_t forms;
  bool ids, json, quiet;
  poot_tool_sampling sampling;
} generate_flags;

static const char synopsis[] =
    "usage: poot generate [-m MODEL] [-p PROMPT] [-n N] [--device D] [--ids] [--json]\n"
    "                     [--cap N] [--chunk T] [--kv-type f16|f32|q8_0] [--tokenizer FILE]\n"
    "                     [--matmul-precision high|medium] [--forms LIST]\n"
    "                     [--temp T] [--top-k N] [--top-p P] [--min-p P] [--seed S] ...\n\n"
    "Generates text on a device, streaming tokens to stdout. Sampling follows\n"
    "llama.cpp's flags and defaults (temperature 0.8, top-k 40, top-p 0.95,\n"
    "min-p 0.05, a random seed); --temp 0 is greedy and deterministic.\n\n";

enum { GENERATE_OPTIONS = 14 };

static int parse_flags(int argc, char **argv, generate_flags *g) {
  *g = (generate_flags){.prompt = "", .device = "auto", .n = 128};
  poot_tool_sampling_init(&g->sampling);
  poot_tool_option options[GENERATE_OPTIONS + POOT_TOOL_SAMPLING_OPTIONS] = {
      {POOT_FLAG_MODEL, &g->model,
       "GGUF file, safetensors folder, or llama2.c checkpoint\n"
       "(default: the bundled demo model " POOT_TOOL_DEMO_MODEL ")",
       0, 0},
      {POOT_FLAG_TOKENIZER, &g->tokenizer, "the tokenizer of a llama2.c checkpoint", 0, 0},
      {POOT_FLAG_PROMPT, &g->prompt, NULL, 0, 0},
      {POOT_FLAG_N_PREDICT, &g->n, "tokens to generate at most (default 128)", 0, LLONG_MAX},
      {POOT_FLAG_DEVICE, &g->device,
       "auto (default: first present of ptx, rocm, vulkan, wgpu),\n"
       "a backend name, or backend:index",
       0, 0},
      {POOT_FLAG_IDS, &g->ids, NULL, 0, 0},
      {POOT_FLAG_JSON, &g->json,
       "print one JSON object instead of streaming: text, ids,\n"
       "n_prompt, reason, seed, probs (with --n-probs)",
       0, 0},
      {POOT_FLAG_CAP, &g->cap,
       "KV capacity (default: prompt + N rounded up to 64,\n"
       "at most the model's context length)",
       1, LLONG_MAX},
      {POOT_FLAG_CHUNK, &g->chunk, NULL, 1, LLONG_MAX},
      {POOT_FLAG_KV_TYPE, &g->kv_type, NULL, 0, 0},
      {POOT_FLAG_MATMUL_PRECISION, &g->matmul_precision, NULL, 0, 0},
      {POOT_FLAG_FORMS, &g->forms_text, NULL, 0, 0},
      {POOT_FLAG_QUIET, &g->quiet, NULL, 0, 0},
      {POOT_FLAG_IMAGE, &g->image,
       "an image for a LLaVA-style model: the prompt's image token\n"
       "(put before the prompt when it has none) becomes its rows",
       0, 0},
  };
  poot_tool_sampling_options(&g->sampling, options + GENERATE_OPTIONS);
  const poot_tool_cli cli = {
      .cmd = CMD,
      .synopsis = synopsis,
      .options = options,
      .n_options = sizeof options / sizeof options[0],
      .epilog =
          "\nstderr has the seed used (unless -q; with --temp > 0), progress and a\n"
          "summary line.\n"};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && !poot_tool_parse_kv_type(CMD, g->kv_type, &g->kv)) rc = POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_matmul_precision(CMD, g->matmul_precision, &g->mp))
    rc = POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_forms(CMD, g->forms_text, &g->forms)) rc = POOT_EXIT_USAGE;
  return rc;
}

typedef struct stream_ctx {
  bool ids, quiet; /* quiet: --json, nothing streamed */
  size_t count;
} stream_ctx;

static bool on_token(void *ctx, poot_token id, const char *text, size_t len) {
  stream_ctx *s = ctx;
  if (s->quiet) return true;
  if (s->ids) {
    if (id >= 0) printf(s->count++ ? " %d" : "%d", (int)id);
  } else {
    fwrite(text, 1, len, stdout);
  }
  fflush(stdout);
  return true;
}

/* The prompt's ids; INVALID_ARGUMENT for an empty prompt without a BOS. */
static poot_status encode_prompt(const poot_model *model, const char *prompt, poot_token **pids,
                                 size_t *np) {
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  POOT_TRY(poot_tokenizer_encode(tok, prompt, strlen(prompt), &eo, pids, np));
  if (*np == 0)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the prompt is empty and the tokenizer adds no BOS; give -p TEXT");
  return NULL;
}

/* An image prompt: the image token put before the text when the text has
 * none (as LLaVA's "<image>\n" prefix), then expanded to the tower's rows. */
static poot_status image_prompt(poot_tool_vision *tv, const char *prompt, poot_token **pids,
                                size_t *np) {
  size_t len = 0;
  const char *it = poot_tool_vision_token_text(tv, &len);
  if (!it) return poot_status_make(POOT_INVALID_ARGUMENT, "the model has no image token text");
  char tag[128];
  snprintf(tag, sizeof tag, "%.*s", (int)len, it);
  if (strstr(prompt, tag)) return poot_tool_vision_encode_prompt(tv, prompt, 1, true, pids, np);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_printf(&sb, "%s\n%s", tag, prompt);
  poot_status st = poot_strbuf_status(&sb);
  if (!st) st = poot_tool_vision_encode_prompt(tv, sb.data, 1, true, pids, np);
  poot_strbuf_deinit(&sb);
  return st;
}

/* The KV capacity: --cap, or the prompt and N rounded up to 64, at most the
 * model's context length. CAPACITY when the prompt does not fit. */
static poot_status size_cap(const poot_model_config *c, size_t np, const generate_flags *g,
                            long long *out_cap) {
  long long cap = g->cap;
  if (cap == 0) {
    cap = ((long long)np + g->n + 63) / 64 * 64;
    if (c->context_length > 0 && cap > c->context_length) cap = c->context_length;
  }
  *out_cap = cap;
  if ((long long)np > cap)
    return poot_status_make(POOT_CAPACITY, "the prompt has %zu tokens; the KV capacity is %lld", np,
                            cap);
  return NULL;
}

/* The device, the engine and the driver, compiled before the first token. */
static poot_status start_driver(poot_runtime *rt, const generate_flags *g, long long cap,
                                size_t n_prompt) {
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  /* The batched runner's ladder (512, 128, 16; a chunk of the capacity
   * below 512, so a prompt of 128 tokens or more still takes the middle
   * rung): only the rungs this prompt walks are compiled now (a prompt of
   * 40 tokens compiles the 16-token entry, not the 512 one); any other
   * shape is compiled on its first use. */
  dopt.prefill_chunk = g->chunk ? g->chunk : cap >= 512 ? 512 : cap >= 16 ? cap : 1;
  dopt.kv_dtype = g->kv;
  POOT_TRY(poot_runtime_create_driver(rt, &dopt));
  const poot_device_caps *caps = poot_runtime_device_caps(rt);
  if (!g->quiet) {
    const poot_driver *d = poot_runtime_driver(rt);
    fprintf(stderr, "poot: compiling for %s (%s), KV capacity %lld (%s, %.1f MiB)…", caps->backend,
            caps->name, cap, poot_dtype_name(poot_driver_kv_dtype(d)),
            (double)poot_driver_kv_bytes(d) / (1024.0 * 1024.0));
    fflush(stderr);
  }
  uint64_t t0 = poot_time_ns();
  POOT_TRY(poot_driver_prepare_prompt(poot_runtime_driver(rt), n_prompt));
  if (!g->quiet) fprintf(stderr, " done in %.0f ms\n", (double)(poot_time_ns() - t0) * 1e-6);
  return NULL;
}

/* The --json object: the text, the ids, why it stopped, the seed, logprobs. */
static poot_status print_json(const poot_driver_generate_result *res,
                              const poot_sampling_params *sp) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "{\"text\":");
  poot_json_write_string(&sb, res->text ? res->text : "", res->text_len, false);
  poot_strbuf_puts(&sb, ",\"ids\":[");
  for (size_t i = 0; i < res->n_ids; i++) poot_strbuf_printf(&sb, i ? ",%d" : "%d", res->ids[i]);
  poot_strbuf_printf(&sb, "],\"n_prompt\":%zu,\"reason\":\"%s\",\"stop_index\":%d,", res->n_prompt,
                     poot_tool_stop_reason_name(res->reason), (int)res->stop_index);
  poot_strbuf_printf(&sb,
                     "\"seed\":%llu,\"temperature\":%g,\"probs\":", (unsigned long long)sp->seed,
                     (double)sp->temperature);
  poot_tool_write_probs(&sb, res);
  poot_strbuf_puts(&sb, "}\n");
  poot_status st = poot_strbuf_status(&sb);
  if (!st) fwrite(sb.data, 1, sb.len, stdout);
  poot_strbuf_deinit(&sb);
  return st;
}

/* The summary line on stderr. */
static void print_summary(const poot_driver_generate_result *res, size_t np) {
  static const char *const why[] = {
      [POOT_DRIVER_STOP_LENGTH] = "",
      [POOT_DRIVER_STOP_ID] = ", stopped at a stop id",
      [POOT_DRIVER_STOP_STRING] = ", stopped at a stop string",
      [POOT_DRIVER_STOP_CAPACITY] = ", KV capacity full",
      [POOT_DRIVER_STOP_GRAMMAR] = ", the grammar is complete",
  };
  size_t gen = res->n_ids;
  fprintf(stderr, "poot: prompt %zu tokens in %.3f s; generated %zu in %.3f s (%.1f tok/s)%s\n", np,
          res->prefill_s, gen, res->decode_s,
          res->decode_s > 0 && gen > 1 ? (double)(gen - 1) / res->decode_s : 0.0,
          (unsigned)res->reason < sizeof why / sizeof why[0] ? why[res->reason] : "");
}

/* Generates from the prompt, streaming to stdout, then the summary line. */
static poot_status stream(poot_runtime *rt, const generate_flags *g, const poot_token *pids,
                          size_t np, long long cap, const poot_sampling_params *sp,
                          const poot_grammar *grammar, const poot_driver_input *image) {
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = g->n;
  go.ignore_stop = sp->ignore_eos;
  go.no_text = g->ids && !g->json;
  go.sampling = sp;
  go.grammar = grammar;
  if ((long long)np + g->n - 1 > cap && !g->quiet)
    fprintf(stderr, "poot: note: the KV capacity %lld stops generation before %lld tokens\n", cap,
            g->n);
  stream_ctx sc = {.ids = g->ids, .quiet = g->json};
  poot_driver_generate_result res;
  memset(&res, 0, sizeof res);
  /* Text mode echoes the prompt, as llama.cpp does. */
  if (!g->ids && !g->json && *g->prompt) fputs(g->prompt, stdout);
  poot_status st =
      image ? poot_driver_generate_with_inputs(poot_runtime_driver(rt), pids, np, image, 1, &go,
                                               on_token, &sc, &res)
            : poot_driver_generate_ids(poot_runtime_driver(rt), pids, np, &go, on_token, &sc, &res);
  if (g->json) {
    if (!st) st = print_json(&res, sp);
  } else {
    /* --ids prints the final stop id too, as `poot verify greedy --ids` does. */
    if (g->ids && res.stopped && res.n_ids)
      printf(sc.count ? " %d" : "%d", (int)res.ids[res.n_ids - 1]);
    printf("\n");
  }
  fflush(stdout);
  if (!st && res.nonfinite)
    fprintf(stderr, "poot: warning: %zu step(s) had NaN or infinite logits\n", res.nonfinite);
  if (!st && !g->quiet) print_summary(&res, np);
  poot_driver_generate_result_deinit(&res);
  return st;
}

/* The sampling parameters and the grammar of the flags, before anything is
 * opened; -1 to go on, else the exit code. */
static int sampling_setup(const generate_flags *g, poot_sampling_params *sp,
                          poot_grammar **grammar) {
  int rc = poot_tool_sampling_params(CMD, &g->sampling, 0, sp);
  if (rc < 0) rc = poot_tool_sampling_grammar(CMD, &g->sampling, grammar);
  return rc;
}

/* The model open: parameters checked against its vocabulary (exit 2), the
 * prompt encoded and the capacity sized. */
static poot_status open_model(poot_runtime *rt, const generate_flags *g,
                              const poot_sampling_params *sp, poot_tool_vision *tv,
                              poot_token **pids, size_t *np, long long *cap, bool *bad_params) {
  const poot_model_config *c = poot_model_get_config(poot_runtime_model(rt));
  poot_status st = poot_sampling_params_validate(sp, (uint32_t)c->vocab_size);
  if (st) {
    *bad_params = true;
    return st;
  }
  if (tv)
    POOT_TRY(image_prompt(tv, g->prompt, pids, np));
  else
    POOT_TRY(encode_prompt(poot_runtime_model(rt), g->prompt, pids, np));
  return size_cap(c, *np, g, cap);
}

static int generate_main(int argc, char **argv) {
  generate_flags g;
  int rc = parse_flags(argc, argv, &g);
  if (rc >= 0) return rc;
  poot_sampling_params sp;
  poot_grammar *grammar = NULL;
  if ((rc = sampling_setup(&g, &sp, &grammar)) >= 0) return rc;
  char demo[PATH_MAX + 64];
  if (!(g.model = poot_tool_default_model(CMD, g.model, demo, sizeof demo))) {
    poot_grammar_destroy(grammar);
    return POOT_EXIT_FAIL;
  }
  poot_runtime *rt = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  long long cap = 0;
  bool bad_params = false;
  uint64_t t0 = poot_time_ns();
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = g.model;
  ro.tokenizer_path = g.tokenizer;
  ro.device = g.device;
  ro.matmul_precision = g.mp;
  ro.forms = g.forms;
  poot_tool_vision *tv = NULL;
  poot_driver_input image = {0};
  poot_status st = poot_runtime_open(&ro, &rt);
  if (!st && g.image) st = poot_tool_vision_open(rt, g.model, &tv);
  if (!st && tv) { /* a bad image is reported before anything compiles */
    poot_image img;
    st = poot_image_load(g.image, &img);
    poot_image_deinit(&img);
  }
  if (!st) st = open_model(rt, &g, &sp, tv, &pids, &np, &cap, &bad_params);
  const poot_model_config *c = st ? NULL : poot_model_get_config(poot_runtime_model(rt));
  if (!st && !g.quiet)
    fprintf(stderr, "poot: loaded %s (%s, %lld layers, vocab %lld) in %.0f ms\n", g.model,
            poot_model_family_name(c->family), (long long)c->n_layers, (long long)c->vocab_size,
            (double)(poot_time_ns() - t0) * 1e-6);
  if (!st) st = start_driver(rt, &g, cap, np);
  if (!st && tv) st = poot_tool_vision_rows(tv, &g.image, 1, &image);
  if (!st) st = poot_tool_sampling_seed(CMD, &sp, g.quiet);
  if (!st) st = stream(rt, &g, pids, np, cap, &sp, grammar, tv ? &image : NULL);
  if (bad_params) {
    rc = poot_tool_usage_error(CMD, "%s", poot_status_message(st));
    poot_status_free(st);
  } else {
    rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  }
  poot_free(pids);
  poot_tool_vision_destroy(tv);
  poot_runtime_destroy(rt);
  poot_grammar_destroy(grammar);
  return rc;
}

const poot_tool_command poot_tool_cmd_generate = {
    "generate", "generate text on a device (streamed; llama.cpp's sampling flags)", generate_main};
