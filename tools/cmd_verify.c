/* poot verify — verification against the oracle (DESIGN §9).
 *   poot verify greedy -m MODEL [--tokenizer FILE] [-p PROMPT | --messages FILE.json]
 *                      -n N [--device D] [--ids] [--paged] [--cap C]
 * runs prefill and greedy decode steps on poot_eval and prints the generated
 * text (or, with --ids, the generated ids on one line). With --device D other
 * than eval it also runs the prompt on that device through the driver,
 * prints the device's output, and compares its ids (and, with --json or
 * --logits, its logits) with the oracle's under the margin rule of
 * docs/verification.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/eval.h"
#include "poot/exec.h"
#include "poot/llm/driver.h"
#include "poot/llm/model.h"
#include "poot/llm/verify.h"
#include "tool.h"

static const char *const CMD = "verify";

static void usage(void) {
  printf(
      "usage: poot verify greedy -m MODEL [--tokenizer FILE]\n"
      "                          [-p PROMPT | --messages FILE.json | --prompt-ids IDS]\n"
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
      "  --prompt-ids IDS   the prompt as token ids (\"1,2,3\"), bypassing the tokenizer\n"
      "  -n N               tokens to generate (default 16)\n"
      "  --device D         eval (default: the oracle only), or a device (auto, vulkan,\n"
      "                     ptx, backend:index): the oracle runs too, the device's output\n"
      "                     is printed, and its ids must equal the oracle's up to a flip\n"
      "                     inside the margin rule (exit 1 otherwise); --json/--logits\n"
      "                     also compare the logits of the compared steps\n"
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

/* One JSON object on one line (for scripts: the tier-3 reference checks).
 * `extra` (may be NULL) is appended as further members ("…":…). */
static void print_json(const poot_token *prompt, size_t np, const poot_verify_greedy_result *r,
                       const poot_strbuf *text, const char *extra) {
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
  if (extra) poot_strbuf_puts(&sb, extra);
  poot_strbuf_puts(&sb, "}\n");
  fwrite(sb.data, 1, sb.len, stdout);
  poot_strbuf_deinit(&sb);
}

/* The tier-2 tolerance of docs/verification.md for f32 against f32 (the
 * device and the oracle read the same stored weights): tol = κ·ε·max(1, rms)
 * with ε = λ·u·√(2S), S the sum of the reduction lengths on a logit's path.
 * A greedy flip is allowed where the oracle's margin is at most 2·tol. */
static double logit_tolerance(const poot_model_config *c, int64_t cap, const float *logits,
                              int64_t vocab) {
  const double lambda = 6.0, kappa = 8.0, u = 0x1p-24;
  int64_t hd = c->head_dim ? c->head_dim : (c->n_heads ? c->hidden_size / c->n_heads : 0);
  double h = (double)c->hidden_size, d = (double)hd, f = (double)c->intermediate_size;
  double per_layer = 4 * h + d + 2 * (double)cap + (double)c->n_heads * d + f;
  double sum = (double)c->n_layers * per_layer + 2 * h;
  double rms = 0;
  if (logits && vocab > 0) {
    for (int64_t i = 0; i < vocab; i++)
      if (isfinite(logits[i])) rms += (double)logits[i] * (double)logits[i];
    rms = sqrt(rms / (double)vocab);
  }
  double eps = lambda * u * sqrt(2 * sum);
  return kappa * eps * (rms > 1 ? rms : 1);
}

/* "1,2,3" or "1 2 3": ids below the model's vocabulary. */
static poot_status parse_ids(const poot_model *model, const char *text, poot_token **out,
                             size_t *n) {
  int64_t vocab = poot_model_get_config(model)->vocab_size;
  size_t cap = strlen(text) / 2 + 1;
  poot_token *ids = poot_calloc(cap, sizeof *ids);
  if (!ids) return poot_status_make(POOT_OUT_OF_MEMORY, "--prompt-ids: out of memory");
  size_t k = 0;
  const char *p = text;
  while (*p) {
    while (*p == ',' || *p == ' ') p++;
    if (!*p) break;
    char *end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || v >= vocab || k >= cap) {
      poot_free(ids);
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "--prompt-ids: '%.20s' is not an id in 0..%lld", p,
                              (long long)vocab - 1);
    }
    ids[k++] = (poot_token)v;
    p = end;
  }
  *out = ids;
  *n = k;
  return NULL;
}

/* The prompt's ids: given ids (--prompt-ids), the chat messages of a JSON
 * file, or the text (BOS where the tokenizer adds one). */
static poot_status encode_prompt(poot_model *model, const char *prompt, const char *messages,
                                 const char *prompt_ids, poot_token **pids, size_t *np) {
  poot_status st = NULL;
  if (messages) {
    char *mtext = NULL;
    size_t mlen = 0;
    POOT_TRY(poot_file_read_all(messages, &mtext, &mlen));
    st = poot_verify_encode_chat(model, mtext, mlen, pids, np, NULL);
    poot_free(mtext);
  } else if (prompt_ids) {
    st = parse_ids(model, prompt_ids, pids, np);
  } else {
    const char *p = prompt ? prompt : "";
    st = poot_verify_encode_text(model, p, strlen(p), pids, np);
  }
  if (!st && *np == 0)
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "the prompt is empty and the tokenizer adds no BOS; give -p TEXT");
  return st;
}

/* The oracle's run and the device's run of the same prompt, compared. */
static int verify_device(const char *model_path, const char *tok_path, const char *prompt,
                         const char *messages, const char *prompt_ids, const char *device, long long n, long long cap,
                         bool paged, bool ids, bool json, bool ignore_eos, bool stats,
                         long long keep_logits) {
  poot_model_open_options oo = {.tokenizer_path = tok_path};
  poot_model *model = NULL;
  poot_device *dev = NULL;
  poot_executor *ex = NULL;
  poot_driver *drv = NULL;
  poot_token *pids = NULL;
  float *dlogits = NULL;
  size_t np = 0;
  poot_verify_greedy_result res;
  memset(&res, 0, sizeof res);
  poot_driver_generate_result dres;
  memset(&dres, 0, sizeof dres);
  poot_strbuf out, extra;
  poot_strbuf_init(&out);
  poot_strbuf_init(&extra);
  int rc = POOT_EXIT_FAIL;
  poot_status st = poot_model_open(model_path, &oo, &model);
  if (st) goto fail;
  if ((st = encode_prompt(model, prompt, messages, prompt_ids, &pids, &np))) goto fail;
  const poot_model_config *c = poot_model_get_config(model);
  if (cap == 0) {
    cap = ((long long)np + n + 15) / 16 * 16;
    if (c->context_length > 0 && cap > c->context_length) cap = c->context_length;
  }
  if ((long long)np + n > cap) {
    st = poot_status_make(POOT_INVALID_ARGUMENT,
                          "the prompt (%zu ids) and %lld new tokens do not fit in capacity %lld",
                          np, n, cap);
    goto fail;
  }
  /* The device first: an absent device fails before the oracle's work. */
  if ((st = poot_device_open(device, NULL, &dev))) goto fail;
  if ((st = poot_engine_create(dev, &ex))) goto fail;
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = cap < 16 ? 1 : 16;
  dopt.program = model_path;
  if ((st = poot_driver_create(ex, model, &dopt, &drv))) goto fail;

  bool want_logits = json || keep_logits > 0;
  poot_verify_greedy_options go = poot_verify_greedy_options_default();
  go.max_new_tokens = n;
  go.cap = cap;
  go.paged = paged;
  go.ignore_stop = ignore_eos;
  /* The first step's logits give the tolerance's scale; with --json or
   * --logits every step's are kept to compare with the device's. */
  go.keep_logits = want_logits ? (size_t)(n > keep_logits ? n : keep_logits) : (n > 0 ? 1 : 0);
  poot_verify_evaluator ev = poot_verify_oracle();
  if ((st = poot_verify_greedy(model, &ev, pids, np, &go, &res))) goto fail;

  poot_driver_generate_options dgo = poot_driver_generate_options_default();
  dgo.max_new_tokens = n;
  dgo.ignore_stop = ignore_eos;
  dgo.no_text = true;
  uint64_t t0 = poot_time_ns();
  if ((st = poot_driver_generate_ids(drv, pids, np, &dgo, NULL, NULL, &dres))) goto fail;
  double dsec = (double)(poot_time_ns() - t0) * 1e-9;

  double tol = logit_tolerance(c, cap, res.n_logits ? res.logits : NULL, res.vocab);
  /* Compare the ids; the first difference ends the comparison. */
  size_t common = dres.n_ids < res.n_ids ? dres.n_ids : res.n_ids;
  size_t compared = common; /* steps whose inputs agree (their logits compare) */
  long long diff_at = -1;
  for (size_t k = 0; k < common; k++) {
    if (dres.ids[k] != res.ids[k]) {
      diff_at = (long long)k;
      compared = k + 1;
      break;
    }
  }
  bool flip = false;
  char mismatch[256] = "";
  if (diff_at >= 0) {
    double margin = (double)res.margins[diff_at];
    if (isfinite(margin) && margin <= 2 * tol) {
      flip = true;
      fprintf(stderr,
              "poot %s: step %lld: the device gives %d, the oracle %d; a flip inside the margin "
              "rule (oracle margin %.4g <= 2*tol %.4g); comparison stops there\n",
              CMD, diff_at, (int)dres.ids[diff_at], (int)res.ids[diff_at], margin, 2 * tol);
    } else {
      /* Reported after the logits are compared (they say where it comes from). */
      snprintf(mismatch, sizeof mismatch,
               "step %lld: the device gives id %d, the oracle %d (oracle margin %.4g > flip "
               "tolerance %.4g)",
               diff_at, (int)dres.ids[diff_at], (int)res.ids[diff_at], margin, 2 * tol);
    }
  } else if (dres.n_ids != res.n_ids) {
    st = poot_status_make(POOT_INTERNAL,
                          "the device generated %zu ids, the oracle %zu (equal over the first %zu)",
                          dres.n_ids, res.n_ids, common);
    goto fail;
  }
  if (dres.nonfinite) {
    st = poot_status_make(POOT_INTERNAL, "%zu device step(s) had NaN or infinite logits",
                          dres.nonfinite);
    goto fail;
  }

  /* Logits: teacher-forced on the oracle's ids over the compared steps. */
  double max_diff = -1;
  size_t n_dlogits = 0;
  if (want_logits && compared > 0 && res.n_logits >= compared) {
    size_t v = (size_t)res.vocab;
    if ((st = poot_driver_reset(drv))) goto fail;
    dlogits = poot_malloc(compared * v * sizeof(float));
    if (!dlogits) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "device logits");
      goto fail;
    }
    if ((st = poot_driver_feed_logits(drv, pids, np, dlogits))) goto fail;
    for (size_t k = 1; k < compared; k++)
      if ((st = poot_driver_feed_logits(drv, &res.ids[k - 1], 1, dlogits + k * v))) goto fail;
    n_dlogits = compared;
    max_diff = 0;
    size_t worst = 0;
    for (size_t i = 0; i < compared * v; i++) {
      double a = dlogits[i], b = res.logits[i];
      if (isfinite(b) && !isfinite(a)) {
        st = poot_status_make(POOT_INTERNAL,
                              "step %zu: the device's logit %zu is not finite, the oracle's is",
                              i / v, i % v);
        goto fail;
      }
      if (isfinite(a) && isfinite(b) && fabs(a - b) > max_diff) {
        max_diff = fabs(a - b);
        worst = i;
      }
    }
    if (mismatch[0]) {
      /* Where the device's own logits put the argmax at the differing step. */
      const float *row = dlogits + (size_t)diff_at * v;
      size_t best = 0;
      for (size_t i = 1; i < v; i++)
        if (row[i] > row[best]) best = i;
      st = poot_status_make(POOT_INTERNAL,
                            "%s; the device's logits at the compared steps differ by at most "
                            "%.4g (tolerance %.4g) and their argmax at step %lld is %zu",
                            mismatch, max_diff, tol, diff_at, best);
      goto fail;
    }
    if (max_diff > tol) {
      st = poot_status_make(POOT_INTERNAL,
                            "the device's logits differ from the oracle's by %.4g > tolerance %.4g "
                            "over %zu step(s) (step %zu, id %zu: device %.7g, oracle %.7g)",
                            max_diff, tol, compared, worst / v, worst % v, (double)dlogits[worst],
                            (double)res.logits[worst]);
      goto fail;
    }
  }

  if (mismatch[0]) {
    st = poot_status_make(POOT_INTERNAL, "%s", mismatch);
    goto fail;
  }
  poot_verify_greedy_result view = res;
  view.ids = dres.ids;
  view.n_ids = dres.n_ids;
  view.stopped = dres.stopped;
  view.seconds = dsec;
  if (json) {
    size_t kk = (size_t)keep_logits < n_dlogits ? (size_t)keep_logits : n_dlogits;
    view.logits = dlogits;
    view.n_logits = kk;
    if ((st = poot_verify_decode(model, pids, np, view.ids, view.n_ids, view.stopped, &out)))
      goto fail;
    const poot_device_caps *caps = poot_device_caps_get(dev);
    poot_strbuf_puts(&extra, ",\"device\":");
    poot_json_write_string(&extra, caps->backend, strlen(caps->backend), true);
    poot_strbuf_puts(&extra, ",\"oracle_ids\":[");
    for (size_t i = 0; i < res.n_ids; i++)
      poot_strbuf_printf(&extra, i ? ",%d" : "%d", (int)res.ids[i]);
    poot_strbuf_printf(&extra, "],\"compared_steps\":%zu,\"tolerance\":%.9g,", compared, tol);
    if (max_diff >= 0)
      poot_strbuf_printf(&extra, "\"max_logit_diff\":%.9g,", max_diff);
    else
      poot_strbuf_puts(&extra, "\"max_logit_diff\":null,");
    if (flip)
      poot_strbuf_printf(&extra, "\"flip\":{\"step\":%lld,\"margin\":%.9g}", diff_at,
                         (double)res.margins[diff_at]);
    else
      poot_strbuf_puts(&extra, "\"flip\":null");
    print_json(pids, np, &view, &out, extra.data);
  } else if (ids) {
    for (size_t i = 0; i < view.n_ids; i++) printf(i ? " %d" : "%d", (int)view.ids[i]);
    printf("\n");
  } else {
    if ((st = poot_verify_decode(model, pids, np, view.ids, view.n_ids, view.stopped, &out)))
      goto fail;
    fwrite(out.data, 1, out.len, stdout);
    printf("\n");
  }
  if (stats || (!json && max_diff >= 0))
    fprintf(stderr,
            "poot %s: %s: prompt %zu ids, %zu generated (oracle %.3f s, device %.3f s); "
            "%zu step(s) compared%s; max |logit diff| %s%.3g (tolerance %.3g)\n",
            CMD, poot_device_caps_get(dev)->backend, np, dres.n_ids, res.seconds, dsec, compared,
            flip ? " up to a flip" : "", max_diff >= 0 ? "" : "not measured ",
            max_diff >= 0 ? max_diff : 0.0, tol);
  rc = POOT_EXIT_OK;
  goto done;
fail:
  rc = poot_tool_fail(CMD, st);
done:
  poot_verify_greedy_result_deinit(&res);
  poot_driver_generate_result_deinit(&dres);
  poot_strbuf_deinit(&out);
  poot_strbuf_deinit(&extra);
  poot_free(dlogits);
  poot_free(pids);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(model);
  return rc;
}

static int verify_greedy(int argc, char **argv) {
  const char *model_path = NULL, *tok_path = NULL, *prompt = NULL, *messages = NULL;
  const char *prompt_ids = NULL, *device = "eval";
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
    } else if (!strcmp(a, "--prompt-ids")) {
      if (!(prompt_ids = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
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
  if ((prompt != NULL) + (messages != NULL) + (prompt_ids != NULL) > 1)
    return poot_tool_usage_error(CMD, "give one of -p, --messages and --prompt-ids");
  if (strcmp(device, "eval") != 0)
    return verify_device(model_path, tok_path, prompt, messages, prompt_ids, device, n, cap, paged, ids, json,
                         ignore_eos, stats, keep_logits);

  poot_model_open_options oo = {.tokenizer_path = tok_path};
  poot_model *model = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  poot_verify_greedy_result res;
  memset(&res, 0, sizeof res);
  poot_strbuf out;
  poot_strbuf_init(&out);
  int rc = POOT_EXIT_FAIL;
  poot_status st = poot_model_open(model_path, &oo, &model);
  if (st) goto fail;
  if ((st = encode_prompt(model, prompt, messages, prompt_ids, &pids, &np))) goto fail;
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
    print_json(pids, np, &res, &out, NULL);
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
