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

#include "poot/devices.h"
#include "poot/exec.h"
#include "poot/llm/driver.h"
#include "tool.h"

#define CMD "generate"
#define DEMO_REL "models/poot-demo.gguf"

static void usage(void) {
  printf(
      "usage: poot generate [-m MODEL] [-p PROMPT] [-n N] [--temp 0] [--device D]\n"
      "                     [--ids] [--cap N] [--chunk T] [--tokenizer FILE] [--ignore-eos]\n\n"
      "Generates text greedily on a device, streaming tokens to stdout.\n\n"
      "  -m MODEL           GGUF file, safetensors folder, or llama2.c checkpoint\n"
      "                     (default: the bundled demo model " DEMO_REL
      ")\n"
      "  --tokenizer FILE   the tokenizer of a llama2.c checkpoint (alias -z)\n"
      "  -p PROMPT          the prompt (default: empty, BOS only)\n"
      "  -n N               tokens to generate at most (default 128)\n"
      "  --temp 0           greedy decoding (the only sampling supported yet)\n"
      "  --device D         auto (default: first present of ptx, rocm, vulkan, wgpu),\n"
      "                     a backend name, or backend:index\n"
      "  --ids              print the generated token ids instead of text\n"
      "  --cap N            KV capacity (default: prompt + N rounded up to 64,\n"
      "                     at most the model's context length)\n"
      "  --chunk T          prefill chunk in tokens (default 16; 1: none)\n"
      "  --ignore-eos       do not stop at the model's stop ids\n"
      "  -q, --quiet        no progress lines on stderr\n");
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

static int generate_main(int argc, char **argv) {
  const char *model_path = NULL, *tok_path = NULL, *prompt = "", *device = "auto";
  long long n = 128, cap = 0, chunk = 0;
  bool ids = false, ignore_eos = false, quiet = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = NULL;
    if (poot_tool_is_help(a)) {
      usage();
      return POOT_EXIT_OK;
    } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
      if (!(model_path = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--tokenizer") || !strcmp(a, "-z")) {
      if (!(tok_path = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
      if (!(prompt = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
      if (!(v = poot_tool_flag_value(CMD, argc, argv, &i)) || !poot_tool_parse_i64(CMD, a, v, &n))
        return POOT_EXIT_USAGE;
      if (n < 0) return poot_tool_usage_error(CMD, "-n must be >= 0");
    } else if (!strcmp(a, "--cap")) {
      if (!(v = poot_tool_flag_value(CMD, argc, argv, &i)) || !poot_tool_parse_i64(CMD, a, v, &cap))
        return POOT_EXIT_USAGE;
      if (cap < 1) return poot_tool_usage_error(CMD, "--cap must be >= 1");
    } else if (!strcmp(a, "--chunk")) {
      if (!(v = poot_tool_flag_value(CMD, argc, argv, &i)) ||
          !poot_tool_parse_i64(CMD, a, v, &chunk))
        return POOT_EXIT_USAGE;
      if (chunk < 1) return poot_tool_usage_error(CMD, "--chunk must be >= 1");
    } else if (!strcmp(a, "--temp") || !strcmp(a, "--temperature")) {
      double t;
      if (!(v = poot_tool_flag_value(CMD, argc, argv, &i)) || !poot_tool_parse_f64(CMD, a, v, &t))
        return POOT_EXIT_USAGE;
      if (t != 0.0)
        return poot_tool_usage_error(CMD,
                                     "--temp %s: sampling is not supported yet (only "
                                     "greedy, --temp 0)",
                                     v);
    } else if (!strcmp(a, "--top-k") || !strcmp(a, "--top-p") || !strcmp(a, "--min-p") ||
               !strcmp(a, "--seed") || !strcmp(a, "--repeat-penalty")) {
      return poot_tool_usage_error(CMD, "%s: sampling is not supported yet (only greedy)", a);
    } else if (!strcmp(a, "--device")) {
      if (!(device = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "--ids")) {
      ids = true;
    } else if (!strcmp(a, "--ignore-eos")) {
      ignore_eos = true;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = true;
    } else {
      return poot_tool_usage_error(CMD, "unknown argument '%s'", a);
    }
  }
  char demo[PATH_MAX + 64];
  if (!model_path) {
    if (!find_demo(demo, sizeof demo)) {
      fprintf(stderr,
              "poot %s: the demo model " DEMO_REL
              " was not found (next to the source "
              "tree, under <prefix>/share/poot, or in the current directory); give "
              "-m MODEL\n",
              CMD);
      return POOT_EXIT_FAIL;
    }
    model_path = demo;
  }

  poot_model *model = NULL;
  poot_device *dev = NULL;
  poot_executor *ex = NULL;
  poot_driver *drv = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  poot_driver_generate_result res;
  memset(&res, 0, sizeof res);
  int rc = POOT_EXIT_FAIL;
  uint64_t t0 = poot_time_ns();
  poot_model_open_options oo = {.tokenizer_path = tok_path};
  poot_status st = poot_model_open(model_path, &oo, &model);
  if (st) goto fail;
  const poot_tokenizer *tok = poot_model_get_tokenizer(model);
  poot_tokenizer_encode_options eo = poot_tokenizer_encode_options_default();
  if ((st = poot_tokenizer_encode(tok, prompt, strlen(prompt), &eo, &pids, &np))) goto fail;
  if (np == 0) {
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "the prompt is empty and the tokenizer adds no BOS; give -p TEXT");
    goto fail;
  }
  const poot_model_config *c = poot_model_get_config(model);
  if (cap == 0) {
    cap = ((long long)np + n + 63) / 64 * 64;
    if (c->context_length > 0 && cap > c->context_length) cap = c->context_length;
  }
  if ((long long)np > cap) {
    st = poot_status_make(POOT_CAPACITY, "the prompt has %zu tokens; the KV capacity is %lld", np,
                          cap);
    goto fail;
  }
  uint64_t t1 = poot_time_ns();
  if (!quiet)
    fprintf(stderr, "poot: loaded %s (%s, %lld layers, vocab %lld) in %.0f ms\n", model_path,
            poot_model_family_name(c->family), (long long)c->n_layers, (long long)c->vocab_size,
            (double)(t1 - t0) * 1e-6);
  if ((st = poot_device_open(device, NULL, &dev))) goto fail;
  if ((st = poot_engine_create(dev, &ex))) goto fail;
  const poot_device_caps *caps = poot_device_caps_get(dev);
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = chunk ? chunk : (cap < 16 ? 1 : 16);
  dopt.program = model_path;
  if ((st = poot_driver_create(ex, model, &dopt, &drv))) goto fail;
  if (!quiet) {
    fprintf(stderr, "poot: compiling for %s (%s), KV capacity %lld…", caps->backend, caps->name,
            cap);
    fflush(stderr);
  }
  uint64_t t2 = poot_time_ns();
  if ((st = poot_driver_prepare(drv))) goto fail;
  if (!quiet) fprintf(stderr, " done in %.0f ms\n", (double)(poot_time_ns() - t2) * 1e-6);
  poot_driver_generate_options go = poot_driver_generate_options_default();
  go.max_new_tokens = n;
  go.ignore_stop = ignore_eos;
  go.no_text = ids;
  if ((long long)np + n - 1 > cap && !quiet)
    fprintf(stderr, "poot: note: the KV capacity %lld stops generation before %lld tokens\n", cap,
            n);
  stream_ctx sc = {.ids = ids};
  /* Text mode echoes the prompt, as llama.cpp does. */
  if (!ids && *prompt) fputs(prompt, stdout);
  st = poot_driver_generate_ids(drv, pids, np, &go, on_token, &sc, &res);
  /* --ids prints the final stop id too, as `poot verify greedy --ids` does. */
  if (ids && res.stopped && res.n_ids) printf(sc.count ? " %d" : "%d", (int)res.ids[res.n_ids - 1]);
  printf("\n");
  fflush(stdout);
  if (st) goto fail;
  if (res.nonfinite)
    fprintf(stderr, "poot: warning: %zu step(s) had NaN or infinite logits\n", res.nonfinite);
  if (!quiet) {
    size_t gen = res.n_ids;
    fprintf(stderr, "poot: prompt %zu tokens in %.3f s; generated %zu in %.3f s (%.1f tok/s)%s\n",
            np, res.prefill_s, gen, res.decode_s,
            res.decode_s > 0 && gen > 1 ? (double)(gen - 1) / res.decode_s : 0.0,
            res.stopped   ? ", stopped at a stop id"
            : res.hit_cap ? ", KV capacity full"
                          : "");
  }
  rc = POOT_EXIT_OK;
  goto done;
fail:
  rc = poot_tool_fail(CMD, st);
done:
  poot_driver_generate_result_deinit(&res);
  poot_free(pids);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(model);
  return rc;
}

const poot_tool_command poot_tool_cmd_generate = {
    "generate", "generate text greedily on a device (streamed)", generate_main};
