/* poot verify — verification against the oracle (DESIGN §9).
 *   poot verify greedy -m MODEL [--tokenizer FILE] [-p PROMPT | --messages FILE.json]
 *                      -n N [--device D] [--ids] [--paged] [--cap C]
 * runs prefill and greedy decode steps on poot_eval and prints the generated
 * text (or, with --ids, the generated ids on one line). With --device D other
 * than eval it also runs the prompt on that device through the driver,
 * prints the device's output, and compares its ids (and, with --json or
 * --logits, its logits) with the oracle's under the margin rule of
 * docs/verification.md. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/eval.h"
#include "poot/llm/verify.h"
#include "poot/runtime.h"
#include "tool.h"

static const char *const CMD = "verify";

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

/* ------------------------------------------------------------ flags */

typedef struct verify_flags {
  const char *model, *tokenizer, *prompt, *messages, *prompt_ids, *device, *kv_type;
  long long n, cap, keep_logits;
  bool ids, paged, stats, json, ignore_eos;
  poot_dtype kv;
} verify_flags;

static const char verify_synopsis[] =
    "usage: poot verify greedy -m MODEL [--tokenizer FILE]\n"
    "                          [-p PROMPT | --messages FILE.json | --prompt-ids IDS]\n"
    "                          -n N [--device eval] [--ids] [--paged] [--cap C] [--stats]\n"
    "                          [--json [--logits K]] [--ignore-eos] [--kv-type f16|f32|q8_0]\n\n"
    "Runs the model's prefill and decode graphs on the CPU oracle (poot_eval), greedy,\n"
    "and prints the generated text. Generation stops after N tokens or at the model's\n"
    "end of sequence (a llama2.c checkpoint: at BOS, as llama2.c's runner does).\n\n";

enum { VERIFY_N_OPTIONS = 15 };

/* The flags of `verify greedy` and where each goes. */
typedef struct verify_cli {
  poot_tool_option options[VERIFY_N_OPTIONS];
  poot_tool_cli cli;
} verify_cli;

static void verify_cli_init(verify_cli *c, verify_flags *f) {
  const poot_tool_option options[VERIFY_N_OPTIONS] = {
      {POOT_FLAG_MODEL, &f->model,
       "a GGUF file, a safetensors folder with config.json, or a\n"
       "llama2.c checkpoint (then --tokenizer is required)",
       0, 0},
      {POOT_FLAG_TOKENIZER, &f->tokenizer, "the tokenizer (llama2.c), or an override", 0, 0},
      {POOT_FLAG_PROMPT, &f->prompt,
       "prompt text (default: empty, BOS only where the model adds it)", 0, 0},
      {POOT_FLAG_MESSAGES, &f->messages, NULL, 0, 0},
      {POOT_FLAG_PROMPT_IDS, &f->prompt_ids, NULL, 0, 0},
      {POOT_FLAG_N_PREDICT, &f->n, "tokens to generate (default 16)", 0, LLONG_MAX},
      {POOT_FLAG_DEVICE, &f->device,
       "eval (default: the oracle only), or a device (auto, vulkan,\n"
       "ptx, backend:index): the oracle runs too, the device's output\n"
       "is printed, and its ids must equal the oracle's up to a flip\n"
       "inside the margin rule (exit 1 otherwise); --json/--logits\n"
       "also compare the logits of the compared steps",
       0, 0},
      {POOT_FLAG_IDS, &f->ids, "print the generated ids, separated by spaces, not text", 0, 0},
      {POOT_FLAG_PAGED, &f->paged, NULL, 0, 0},
      {POOT_FLAG_CAP, &f->cap, "KV capacity (default: prompt + N)", LLONG_MIN, LLONG_MAX},
      {POOT_FLAG_STATS, &f->stats, NULL, 0, 0},
      {POOT_FLAG_JSON, &f->json,
       "print one JSON object: prompt_ids, ids, stopped, margins (top-1\n"
       "minus top-2 logit per step), logits (with --logits), text",
       0, 0},
      {POOT_FLAG_LOGITS, &f->keep_logits,
       "with --json: the full logits of the first K generated steps", 0, LLONG_MAX},
      {POOT_FLAG_IGNORE_EOS, &f->ignore_eos, "do not stop at the model's end-of-sequence ids", 0,
       0},
      {POOT_FLAG_KV_TYPE, &f->kv_type,
       "the KV cache's element type on the oracle and the device:\nf16 (default, paged "
       "too) or f32",
       0, 0},
  };
  memcpy(c->options, options, sizeof options);
  c->cli = (poot_tool_cli){.cmd = CMD,
                           .synopsis = verify_synopsis,
                           .options = c->options,
                           .n_options = VERIFY_N_OPTIONS};
}

static void print_help(void) {
  verify_flags f;
  verify_cli c;
  verify_cli_init(&c, &f);
  poot_tool_print_help(&c.cli, stdout);
}

/* argv[0] is "greedy". Returns -1 to go on, else the exit code. */
static int parse_flags(int argc, char **argv, verify_flags *f) {
  *f = (verify_flags){.device = "eval", .n = 16};
  verify_cli c;
  verify_cli_init(&c, f);
  int rc = poot_tool_parse(&c.cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (!f->model) return poot_tool_usage_error(CMD, "greedy needs -m MODEL");
  if (!poot_tool_parse_kv_type(CMD, f->kv_type, &f->kv)) return POOT_EXIT_USAGE;
  if ((f->prompt != NULL) + (f->messages != NULL) + (f->prompt_ids != NULL) > 1)
    return poot_tool_usage_error(CMD, "give one of -p, --messages and --prompt-ids");
  return -1;
}

/* ------------------------------------------------------------ the device run */

/* The oracle's run and the device's run of one prompt, and their comparison. */
typedef struct verify_run {
  const verify_flags *f;
  poot_runtime *rt;
  const poot_model_config *config;
  poot_token *pids;
  size_t np;
  long long cap;
  poot_verify_greedy_result oracle;
  poot_driver_generate_result device;
  double device_s, tol;
  double kv16;        /* the f16 cache's tolerance term (poot_verify_kv16_term), 0 with f32 */
  size_t compared;    /* steps whose inputs agree (their logits compare) */
  long long diff_at;  /* the first differing step, or -1 */
  bool flip;          /* the difference is inside the margin rule */
  char mismatch[256]; /* a difference outside it, reported after the logits */
  float *dlogits;     /* the device's teacher-forced logits of the compared steps */
  size_t n_dlogits;
  double max_diff; /* -1: not measured */
} verify_run;

static bool wants_logits(const verify_flags *f) {
  return f->json || f->keep_logits > 0;
}

/* The model, the prompt, the capacity and the driver. The device first: an
 * absent device fails before the oracle's work. */
static poot_status start_device(verify_run *r) {
  const verify_flags *f = r->f;
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = f->model;
  ro.tokenizer_path = f->tokenizer;
  ro.device = f->device;
  POOT_TRY(poot_runtime_open(&ro, &r->rt));
  poot_model *model = poot_runtime_model(r->rt);
  POOT_TRY(encode_prompt(model, f->prompt, f->messages, f->prompt_ids, &r->pids, &r->np));
  r->config = poot_model_get_config(model);
  r->cap = f->cap;
  if (r->cap == 0) {
    r->cap = ((long long)r->np + f->n + 15) / 16 * 16;
    if (r->config->context_length > 0 && r->cap > r->config->context_length)
      r->cap = r->config->context_length;
  }
  if ((long long)r->np + f->n > r->cap)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "the prompt (%zu ids) and %lld new tokens do not fit in capacity %lld",
                            r->np, f->n, r->cap);
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = r->cap;
  dopt.prefill_chunk = r->cap < 16 ? 1 : 16;
  dopt.kv_dtype = r->f->kv;
  return poot_runtime_create_driver(r->rt, &dopt);
}

/* With an f16 or q8_0 cache, the oracle runs the same ids again with an f32
 * cache and the difference of their logits widens the tolerance
 * (poot_verify_kv16_term, docs/verification.md "The f16 cache": a fresh
 * element within tier-2 error of the oracle's that lands on the other f16
 * neighbour or q8_0 quantum moves by at most one step, twice the rounding's
 * own bound). */
static poot_status kv16_term(verify_run *r, const poot_verify_greedy_options *go,
                             const poot_verify_evaluator *ev) {
  r->kv16 = 0;
  poot_dtype kv = r->f->kv ? r->f->kv : poot_model_kv_dtype_default(r->f->paged);
  if ((kv != POOT_DTYPE_F16 && kv != POOT_DTYPE_Q8_0) || r->oracle.n_logits == 0) return NULL;
  poot_verify_greedy_options g32 = *go;
  g32.kv_dtype = POOT_DTYPE_F32;
  g32.follow = r->oracle.ids;
  g32.n_follow = r->oracle.n_logits;
  g32.keep_logits = r->oracle.n_logits;
  poot_verify_greedy_result o32;
  POOT_TRY(poot_verify_greedy(poot_runtime_model(r->rt), ev, r->pids, r->np, &g32, &o32));
  size_t n = (o32.n_logits < r->oracle.n_logits ? o32.n_logits : r->oracle.n_logits) *
             (size_t)r->oracle.vocab;
  r->kv16 = poot_verify_kv16_term(r->oracle.logits, o32.logits, n);
  poot_verify_greedy_result_deinit(&o32);
  return NULL;
}

/* The oracle's greedy run, then the device's, of the same prompt. */
static poot_status run_both(verify_run *r) {
  const verify_flags *f = r->f;
  long long n = f->n;
  poot_verify_greedy_options go = poot_verify_greedy_options_default();
  go.max_new_tokens = n;
  go.cap = r->cap;
  go.paged = f->paged;
  go.ignore_stop = f->ignore_eos;
  go.kv_dtype = f->kv;
  /* The first step's logits give the tolerance's scale; with --json or
   * --logits every step's are kept to compare with the device's. */
  go.keep_logits =
      wants_logits(f) ? (size_t)(n > f->keep_logits ? n : f->keep_logits) : (n > 0 ? 1 : 0);
  poot_verify_evaluator ev = poot_verify_oracle();
  POOT_TRY(poot_verify_greedy(poot_runtime_model(r->rt), &ev, r->pids, r->np, &go, &r->oracle));
  POOT_TRY(kv16_term(r, &go, &ev));

  poot_driver_generate_options dgo = poot_driver_generate_options_default();
  dgo.max_new_tokens = n;
  dgo.ignore_stop = f->ignore_eos;
  dgo.no_text = true;
  uint64_t t0 = poot_time_ns();
  POOT_TRY(poot_driver_generate_ids(poot_runtime_driver(r->rt), r->pids, r->np, &dgo, NULL, NULL,
                                    &r->device));
  r->device_s = (double)(poot_time_ns() - t0) * 1e-9;
  return NULL;
}

/* Compares the ids; the first difference ends the comparison. A flip
 * inside the margin rule is reported and allowed; one outside it is kept in
 * r->mismatch until the logits say where it comes from. */
static poot_status compare_ids(verify_run *r) {
  const poot_verify_greedy_result *o = &r->oracle;
  const poot_driver_generate_result *d = &r->device;
  r->tol =
      poot_verify_tolerance(r->config, r->cap, o->n_logits ? o->logits : NULL, o->vocab, true) +
      r->kv16; /* a greedy flip: margin ≤ 2·tol */
  size_t common = d->n_ids < o->n_ids ? d->n_ids : o->n_ids;
  r->compared = common;
  r->diff_at = -1;
  for (size_t k = 0; k < common; k++) {
    if (d->ids[k] != o->ids[k]) {
      r->diff_at = (long long)k;
      r->compared = k + 1;
      break;
    }
  }
  if (r->diff_at >= 0) {
    long long at = r->diff_at;
    double margin = (double)o->margins[at];
    if (isfinite(margin) && margin <= 2 * r->tol) {
      r->flip = true;
      fprintf(stderr,
              "poot %s: step %lld: the device gives %d, the oracle %d; a flip inside the margin "
              "rule (oracle margin %.4g <= 2*tol %.4g); comparison stops there\n",
              CMD, at, (int)d->ids[at], (int)o->ids[at], margin, 2 * r->tol);
    } else {
      snprintf(r->mismatch, sizeof r->mismatch,
               "step %lld: the device gives id %d, the oracle %d (oracle margin %.4g > flip "
               "tolerance %.4g)",
               at, (int)d->ids[at], (int)o->ids[at], margin, 2 * r->tol);
    }
  } else if (d->n_ids != o->n_ids) {
    return poot_status_make(
        POOT_INTERNAL, "the device generated %zu ids, the oracle %zu (equal over the first %zu)",
        d->n_ids, o->n_ids, common);
  }
  if (d->nonfinite)
    return poot_status_make(POOT_INTERNAL, "%zu device step(s) had NaN or infinite logits",
                            d->nonfinite);
  return NULL;
}

/* The device's logits of the compared steps, teacher-forced on the oracle's ids. */
static poot_status feed_device_logits(verify_run *r) {
  size_t v = (size_t)r->oracle.vocab;
  poot_driver *drv = poot_runtime_driver(r->rt);
  POOT_TRY(poot_driver_reset(drv));
  r->dlogits = poot_malloc(r->compared * v * sizeof(float));
  if (!r->dlogits) return poot_status_make(POOT_OUT_OF_MEMORY, "device logits");
  POOT_TRY(poot_driver_feed_logits(drv, r->pids, r->np, r->dlogits));
  for (size_t k = 1; k < r->compared; k++)
    POOT_TRY(poot_driver_feed_logits(drv, &r->oracle.ids[k - 1], 1, r->dlogits + k * v));
  r->n_dlogits = r->compared;
  return NULL;
}

/* With --json or --logits: the device's logits against the oracle's over
 * the compared steps, within the tolerance; a pending id mismatch is
 * reported here with where the device's own argmax lies. */
static poot_status compare_logits(verify_run *r) {
  r->max_diff = -1;
  if (!wants_logits(r->f) || r->compared == 0 || r->oracle.n_logits < r->compared) return NULL;
  POOT_TRY(feed_device_logits(r));
  size_t v = (size_t)r->oracle.vocab, worst = 0;
  const float *ref = r->oracle.logits, *dev = r->dlogits;
  r->max_diff = 0;
  for (size_t i = 0; i < r->compared * v; i++) {
    double a = dev[i], b = ref[i];
    if (isfinite(b) && !isfinite(a))
      return poot_status_make(POOT_INTERNAL,
                              "step %zu: the device's logit %zu is not finite, the oracle's is",
                              i / v, i % v);
    if (isfinite(a) && isfinite(b) && fabs(a - b) > r->max_diff) {
      r->max_diff = fabs(a - b);
      worst = i;
    }
  }
  if (r->mismatch[0]) {
    const float *row = dev + (size_t)r->diff_at * v;
    size_t best = 0;
    for (size_t i = 1; i < v; i++)
      if (row[i] > row[best]) best = i;
    return poot_status_make(POOT_INTERNAL,
                            "%s; the device's logits at the compared steps differ by at most "
                            "%.4g (tolerance %.4g) and their argmax at step %lld is %zu",
                            r->mismatch, r->max_diff, r->tol, r->diff_at, best);
  }
  if (r->max_diff > r->tol)
    return poot_status_make(POOT_INTERNAL,
                            "the device's logits differ from the oracle's by %.4g > tolerance "
                            "%.4g over %zu step(s) (step %zu, id %zu: device %.7g, oracle %.7g)",
                            r->max_diff, r->tol, r->compared, worst / v, worst % v,
                            (double)dev[worst], (double)ref[worst]);
  return NULL;
}

/* The members --json adds for a device run (after the oracle's). */
static void json_device_members(const verify_run *r, poot_strbuf *extra) {
  const poot_device_caps *caps = poot_runtime_device_caps(r->rt);
  poot_strbuf_puts(extra, ",\"device\":");
  poot_json_write_string(extra, caps->backend, strlen(caps->backend), true);
  poot_strbuf_puts(extra, ",\"oracle_ids\":[");
  for (size_t i = 0; i < r->oracle.n_ids; i++)
    poot_strbuf_printf(extra, i ? ",%d" : "%d", (int)r->oracle.ids[i]);
  poot_strbuf_printf(extra, "],\"compared_steps\":%zu,\"tolerance\":%.9g,\"kv16_term\":%.9g,",
                     r->compared, r->tol, r->kv16);
  if (r->max_diff >= 0)
    poot_strbuf_printf(extra, "\"max_logit_diff\":%.9g,", r->max_diff);
  else
    poot_strbuf_puts(extra, "\"max_logit_diff\":null,");
  if (r->flip)
    poot_strbuf_printf(extra, "\"flip\":{\"step\":%lld,\"margin\":%.9g}", r->diff_at,
                       (double)r->oracle.margins[r->diff_at]);
  else
    poot_strbuf_puts(extra, "\"flip\":null");
}

/* Prints the device's output (JSON, ids or text) and, when asked or when
 * logits were compared, the summary line on stderr. */
static poot_status print_device_run(const verify_run *r) {
  const verify_flags *f = r->f;
  poot_model *model = poot_runtime_model(r->rt);
  poot_verify_greedy_result view = r->oracle;
  view.ids = r->device.ids;
  view.n_ids = r->device.n_ids;
  view.stopped = r->device.stopped;
  view.seconds = r->device_s;
  poot_strbuf out, extra;
  poot_strbuf_init(&out);
  poot_strbuf_init(&extra);
  poot_status st = NULL;
  if (f->json) {
    size_t kk = (size_t)f->keep_logits < r->n_dlogits ? (size_t)f->keep_logits : r->n_dlogits;
    view.logits = r->dlogits;
    view.n_logits = kk;
    st = poot_verify_decode(model, r->pids, r->np, view.ids, view.n_ids, view.stopped, &out);
    json_device_members(r, &extra);
    if (!st) print_json(r->pids, r->np, &view, &out, extra.data);
  } else if (f->ids) {
    for (size_t i = 0; i < view.n_ids; i++) printf(i ? " %d" : "%d", (int)view.ids[i]);
    printf("\n");
  } else {
    st = poot_verify_decode(model, r->pids, r->np, view.ids, view.n_ids, view.stopped, &out);
    if (!st) {
      fwrite(out.data, 1, out.len, stdout);
      printf("\n");
    }
  }
  if (!st && (f->stats || (!f->json && r->max_diff >= 0)))
    fprintf(stderr,
            "poot %s: %s: prompt %zu ids, %zu generated (oracle %.3f s, device %.3f s); "
            "%zu step(s) compared%s; max |logit diff| %s%.3g (tolerance %.3g)\n",
            CMD, poot_runtime_device_caps(r->rt)->backend, r->np, r->device.n_ids,
            r->oracle.seconds, r->device_s, r->compared, r->flip ? " up to a flip" : "",
            r->max_diff >= 0 ? "" : "not measured ", r->max_diff >= 0 ? r->max_diff : 0.0, r->tol);
  poot_strbuf_deinit(&out);
  poot_strbuf_deinit(&extra);
  return st;
}

/* The oracle's run and the device's run of the same prompt, compared. */
static int verify_device(const verify_flags *f) {
  verify_run r;
  memset(&r, 0, sizeof r);
  r.f = f;
  r.max_diff = -1;
  poot_status st = start_device(&r);
  if (!st) st = run_both(&r);
  if (!st) st = compare_ids(&r);
  if (!st) st = compare_logits(&r);
  if (!st && r.mismatch[0]) st = poot_status_make(POOT_INTERNAL, "%s", r.mismatch);
  if (!st) st = print_device_run(&r);
  int rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  poot_verify_greedy_result_deinit(&r.oracle);
  poot_driver_generate_result_deinit(&r.device);
  poot_free(r.dlogits);
  poot_free(r.pids);
  poot_runtime_destroy(r.rt);
  return rc;
}

/* ------------------------------------------------------------ the oracle run */

/* The oracle alone (--device eval): its ids, text or JSON. */
static int verify_oracle(const verify_flags *f) {
  poot_model_open_options oo = {.tokenizer_path = f->tokenizer};
  poot_model *model = NULL;
  poot_token *pids = NULL;
  size_t np = 0;
  poot_verify_greedy_result res;
  memset(&res, 0, sizeof res);
  poot_strbuf out;
  poot_strbuf_init(&out);
  int rc = POOT_EXIT_FAIL;
  poot_status st = poot_model_open(f->model, &oo, &model);
  if (st) goto fail;
  if ((st = encode_prompt(model, f->prompt, f->messages, f->prompt_ids, &pids, &np))) goto fail;
  poot_verify_greedy_options go = poot_verify_greedy_options_default();
  go.max_new_tokens = f->n;
  go.cap = f->cap;
  go.paged = f->paged;
  go.ignore_stop = f->ignore_eos;
  go.kv_dtype = f->kv;
  go.keep_logits = (size_t)f->keep_logits;
  poot_verify_evaluator ev = poot_verify_oracle();
  if ((st = poot_verify_greedy(model, &ev, pids, np, &go, &res))) goto fail;
  if (f->json) {
    if ((st = poot_verify_decode(model, pids, np, res.ids, res.n_ids, res.stopped, &out)))
      goto fail;
    print_json(pids, np, &res, &out, NULL);
  } else if (f->ids) {
    for (size_t i = 0; i < res.n_ids; i++) printf(i ? " %d" : "%d", (int)res.ids[i]);
    printf("\n");
  } else {
    if ((st = poot_verify_decode(model, pids, np, res.ids, res.n_ids, res.stopped, &out)))
      goto fail;
    fwrite(out.data, 1, out.len, stdout);
    printf("\n");
  }
  if (f->stats)
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
    print_help();
    return POOT_EXIT_OK;
  }
  if (strcmp(argv[1], "greedy") != 0)
    return poot_tool_usage_error(CMD, "unknown mode '%s' (greedy is available)", argv[1]);
  verify_flags f;
  int rc = parse_flags(argc - 1, argv + 1, &f);
  if (rc >= 0) return rc;
  return strcmp(f.device, "eval") != 0 ? verify_device(&f) : verify_oracle(&f);
}

const poot_tool_command poot_tool_cmd_verify = {
    "verify", "run a model on the oracle (greedy) and check it against references", verify_main};
