/* poot generate — greedy text generation on a device (DESIGN §11):
 *   poot generate [-m MODEL] [--tokenizer FILE] [-p PROMPT] [-n N] [--temp 0]
 *                 [--device D] [--ids] [--cap N] [--chunk T] [--ignore-eos]
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

#define CMD "generate"
#define DEMO_REL "models/poot-demo.gguf"

typedef struct generate_flags {
  const char *model, *tokenizer, *prompt, *device;
  long long n, cap, chunk;
  double temp;
  bool ids, ignore_eos, quiet;
} generate_flags;

static int parse_flags(int argc, char **argv, generate_flags *g) {
  *g = (generate_flags){.prompt = "", .device = "auto", .n = 128};
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &g->model,
       "GGUF file, safetensors folder, or llama2.c checkpoint\n"
       "(default: the bundled demo model " DEMO_REL ")",
       0, 0},
      {POOT_FLAG_TOKENIZER, &g->tokenizer, "the tokenizer of a llama2.c checkpoint", 0, 0},
      {POOT_FLAG_PROMPT, &g->prompt, NULL, 0, 0},
      {POOT_FLAG_N_PREDICT, &g->n, "tokens to generate at most (default 128)", 0, LLONG_MAX},
      {POOT_FLAG_TEMP, &g->temp, NULL, 0, 0},
      {POOT_FLAG_DEVICE, &g->device,
       "auto (default: first present of ptx, rocm, vulkan, wgpu),\n"
       "a backend name, or backend:index",
       0, 0},
      {POOT_FLAG_IDS, &g->ids, NULL, 0, 0},
      {POOT_FLAG_CAP, &g->cap,
       "KV capacity (default: prompt + N rounded up to 64,\n"
       "at most the model's context length)",
       1, LLONG_MAX},
      {POOT_FLAG_CHUNK, &g->chunk, NULL, 1, LLONG_MAX},
      {POOT_FLAG_IGNORE_EOS, &g->ignore_eos, NULL, 0, 0},
      {POOT_FLAG_QUIET, &g->quiet, NULL, 0, 0},
      {POOT_FLAG_TOP_K, NULL, NULL, 0, 0},
      {POOT_FLAG_TOP_P, NULL, NULL, 0, 0},
      {POOT_FLAG_MIN_P, NULL, NULL, 0, 0},
      {POOT_FLAG_SEED, NULL, NULL, 0, 0},
      {POOT_FLAG_REPEAT_PENALTY, NULL, NULL, 0, 0},
  };
  const poot_tool_cli cli = {
      .cmd = CMD,
      .synopsis =
          "usage: poot generate [-m MODEL] [-p PROMPT] [-n N] [--temp 0] [--device D]\n"
          "                     [--ids] [--cap N] [--chunk T] [--tokenizer FILE] [--ignore-eos]\n\n"
          "Generates text greedily on a device, streaming tokens to stdout.\n\n",
      .options = options,
      .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && g->temp != 0.0)
    return poot_tool_usage_error(
        CMD, "--temp %g: sampling is not supported yet (only greedy, --temp 0)", g->temp);
  return rc;
}

static bool exists(const char *path) {
  return access(path, R_OK) == 0;
}

/* The demo model: next to this file's source tree, an install prefix, the
 * current directory. */
static bool find_demo(char *buf, size_t size) {
  const char *src = __FILE__; /* …/tools/cmd_generate.c */
  const char *slash = strrchr(src, '/');
  if (slash && slash != src) {
    size_t n = (size_t)(slash - src);
    snprintf(buf, size, "%.*s/../" DEMO_REL, (int)n, src);
    if (exists(buf)) return true;
  }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = 0;
    char *s = strrchr(exe, '/');
    if (s) {
      *s = 0;
      static const char *const rel[] = {"/../share/poot/" DEMO_REL, "/../" DEMO_REL,
                                        "/../../" DEMO_REL};
      for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, size, "%s%s", exe, rel[i]);
        if (exists(buf)) return true;
      }
    }
  }
  snprintf(buf, size, "%s", DEMO_REL);
  return exists(buf);
}

typedef struct stream_ctx {
  bool ids;
  size_t count;
} stream_ctx;

static bool on_token(void *ctx, poot_token id, const char *text, size_t len) {
  stream_ctx *s = ctx;
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
static poot_status start_driver(poot_runtime *rt, const generate_flags *g, long long cap) {
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = g->chunk ? g->chunk : (cap < 16 ? 1 : 16);
  POOT_TRY(poot_runtime_create_driver(rt, &dopt));
  const poot_device_caps *caps = poot_runtime_device_caps(rt);
  if (!g->quiet) {
    fprintf(stderr, "poot: compiling for %s (%s), KV capacity %lld…", caps->backend, caps->name,
            cap);
    fflush(stderr);
  }
  uint64_t t0 = poot_time_ns();
  POOT_TRY(poot_driver_prepare(poot_runtime_driver(rt)));
  if (!g->quiet) fprintf(stderr, " done in %.0f ms\n", (double)(poot_time_ns() - t0) * 1e-6);
  return NULL;
}

/* Generates from the prompt, streaming to stdout, then the summary line. */
static poot_status stream(poot_runtime *rt, const generate_flags *g, const poot_token *pids,
                          size_t np, long long cap) {
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = g->n;
  go.ignore_stop = g->ignore_eos;
  go.no_text = g->ids;
  if ((long long)np + g->n - 1 > cap && !g->quiet)
    fprintf(stderr, "poot: note: the KV capacity %lld stops generation before %lld tokens\n", cap,
            g->n);
  stream_ctx sc = {.ids = g->ids};
  poot_driver_generate_result res;
  memset(&res, 0, sizeof res);
  /* Text mode echoes the prompt, as llama.cpp does. */
  if (!g->ids && *g->prompt) fputs(g->prompt, stdout);
  poot_status st =
      poot_driver_generate_ids(poot_runtime_driver(rt), pids, np, &go, on_token, &sc, &res);
  /* --ids prints the final stop id too, as `poot verify greedy --ids` does. */
  if (g->ids && res.stopped && res.n_ids)
    printf(sc.count ? " %d" : "%d", (int)res.ids[res.n_ids - 1]);
  printf("\n");
  fflush(stdout);
  if (!st && res.nonfinite)
    fprintf(stderr, "poot: warning: %zu step(s) had NaN or infinite logits\n", res.nonfinite);
  if (!st && !g->quiet) {
    size_t gen = res.n_ids;
    fprintf(stderr, "poot: prompt %zu tokens in %.3f s; generated %zu in %.3f s (%.1f tok/s)%s\n",
            np, res.prefill_s, gen, res.decode_s,
            res.decode_s > 0 && gen > 1 ? (double)(gen - 1) / res.decode_s : 0.0,
            res.stopped   ? ", stopped at a stop id"
            : res.hit_cap ? ", KV capacity full"
                          : "");
  }
  poot_driver_generate_result_deinit(&res);
  return st;
}

static int generate_main(int argc, char **argv) {
  generate_flags g;
  int rc = parse_flags(argc, argv, &g);
  if (rc >= 0) return rc;
  char demo[PATH_MAX + 64];
  if (!g.model) {
    if (!find_demo(demo, sizeof demo)) {
      fprintf(stderr,
              "poot %s: the demo model " DEMO_REL
              " was not found (next to the source "
              "tree, under <prefix>/share/poot, or in the current directory); give "
              "-m MODEL\n",
              CMD);
      return POOT_EXIT_FAIL;
    }
    g.model = demo;
  }
  poot_runtime *rt = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  long long cap = 0;
  uint64_t t0 = poot_time_ns();
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = g.model;
  ro.tokenizer_path = g.tokenizer;
  ro.device = g.device;
  poot_status st = poot_runtime_open(&ro, &rt);
  if (!st) st = encode_prompt(poot_runtime_model(rt), g.prompt, &pids, &np);
  const poot_model_config *c = st ? NULL : poot_model_get_config(poot_runtime_model(rt));
  if (!st) st = size_cap(c, np, &g, &cap);
  if (!st && !g.quiet)
    fprintf(stderr, "poot: loaded %s (%s, %lld layers, vocab %lld) in %.0f ms\n", g.model,
            poot_model_family_name(c->family), (long long)c->n_layers, (long long)c->vocab_size,
            (double)(poot_time_ns() - t0) * 1e-6);
  if (!st) st = start_driver(rt, &g, cap);
  if (!st) st = stream(rt, &g, pids, np, cap);
  rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  poot_free(pids);
  poot_runtime_destroy(rt);
  return rc;
}

const poot_tool_command poot_tool_cmd_generate = {
    "generate", "generate text greedily on a device (streamed)", generate_main};
