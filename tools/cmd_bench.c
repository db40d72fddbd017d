/* poot bench — generation figures of DESIGN §10 on a device:
 *   poot bench -m MODEL [--tokenizer FILE] [--device D] [-p N] [-n N] [--json]
 * One run measures: compile + capture time of the decode and prefill
 * entries; prefill tokens per second (one chunk of N tokens); decode tokens
 * per second over N steps; host and device µs per decode step; dispatches
 * and submissions per step; the per-step time of replay against eager
 * submission of the same dispatches (and whether their ids agree); bytes a
 * decode step must read (weights + the K/V cache) against the device's copy
 * bandwidth measured in the same run, as a tokens-per-second limit. With
 * --profile K it also submits K decode steps (and one prefill chunk) eagerly
 * and prints the device time of each kind of dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/devices.h"
#include "poot/exec.h"
#include "poot/llm/driver.h"
#include "tool.h"

#define CMD "bench"

static void usage(void) {
  printf(
      "usage: poot bench -m MODEL [--tokenizer FILE] [--device D] [-p N] [-n N]\n"
      "                  [--context C] [--eager-steps K] [--copy-mib M] [--profile K]\n"
      "                  [--json]\n\n"
      "Measures generation on a device (greedy, batch 1).\n\n"
      "  -m MODEL           GGUF file, safetensors folder, or llama2.c checkpoint\n"
      "  --device D         auto (default), a backend name, or backend:index\n"
      "  -p N               prefill tokens, one chunk (default 64; 0: none)\n"
      "  -n N               decode steps (default 64)\n"
      "  --context C        decode after C tokens of context (default 0: from an empty\n"
      "                     context, as llama-bench's tg test)\n"
      "  --eager-steps K    decode steps of the replay-vs-eager comparison (default 8)\n"
      "  --copy-mib M       buffer size of the copy-bandwidth probe (default 64; 0: off;\n"
      "                     at most 1048576)\n"
      "  --profile K        device time per kind of dispatch over K eager decode steps\n"
      "                     and one eager prefill chunk (default 0: off)\n"
      "  --json             one JSON object on stdout\n");
}

/* Device copy bandwidth (bytes read plus written per second) of one
 * recorded buffer-to-buffer copy, replayed `reps` times. A failure (two
 * buffers of `bytes` do not fit, the device is lost) is the bench's error. */
static poot_status copy_bandwidth(poot_device *dev, uint64_t bytes, int reps, double *out_bw) {
  poot_device_buffer *a = NULL, *b = NULL;
  poot_device_recording *rec = NULL;
  double bw = 0;
  *out_bw = 0;
  poot_status st = poot_device_buffer_create(dev, POOT_DEVICE_BUFFER_LOCAL, bytes, &a);
  if (!st) st = poot_device_buffer_create(dev, POOT_DEVICE_BUFFER_LOCAL, bytes, &b);
  poot_device_cmd cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.kind = POOT_DEVICE_CMD_COPY;
  cmd.src = a;
  cmd.dst = b;
  cmd.size = bytes;
  cmd.label = "bench copy";
  if (!st) st = poot_device_record(dev, &cmd, 1, NULL, &rec);
  /* One warm-up replay, then the timed ones. */
  if (!st) st = poot_device_replay(rec);
  if (!st) st = poot_device_synchronize(dev, NULL);
  uint64_t t0 = poot_time_ns(), dev_ns = 0;
  for (int i = 0; i < reps && !st; i++) {
    uint64_t d = 0;
    st = poot_device_replay(rec);
    if (!st) st = poot_device_synchronize(dev, &d);
    dev_ns += d;
  }
  uint64_t wall = poot_time_ns() - t0;
  if (!st) {
    uint64_t ns = dev_ns ? dev_ns : wall;
    bw = ns ? 2.0 * (double)bytes * reps / ((double)ns * 1e-9) : 0;
  }
  poot_device_recording_destroy(rec);
  poot_device_buffer_destroy(a);
  poot_device_buffer_destroy(b);
  *out_bw = bw;
  return poot_status_annotate(st, "the copy-bandwidth probe (--copy-mib %llu)",
                              (unsigned long long)(bytes >> 20));
}

/* The largest value each counting flag takes: larger ones are typing
 * mistakes (and --copy-mib past this would overflow the byte count). */
typedef struct bench_flag_limit {
  const char *flag;
  long long max;
} bench_flag_limit;
static const bench_flag_limit bench_flag_limits[] = {
    {"-p", 1 << 24},          {"-n", 1 << 24},         {"--context", 1 << 24},
    {"--eager-steps", 1 << 20}, {"--profile", 1 << 20}, {"--copy-mib", 1 << 20},
};

static long long bench_flag_max(const char *flag) {
  for (size_t i = 0; i < sizeof bench_flag_limits / sizeof bench_flag_limits[0]; i++)
    if (!strcmp(bench_flag_limits[i].flag, flag)) return bench_flag_limits[i].max;
  return 0;
}

typedef struct phase {
  uint64_t steps, host_ns, device_ns, dispatches;
  double wall_s;
} phase;

static void snap(const poot_executor *ex, phase *p) {
  poot_exec_stats s;
  poot_exec_stats_get(ex, &s);
  p->steps = s.steps;
  p->host_ns = s.host_ns_total;
  p->device_ns = s.device_ns_total;
  p->dispatches = s.dispatches;
}

static phase diff(const phase *a, const phase *b, double wall_s) {
  phase d = {b->steps - a->steps, b->host_ns - a->host_ns, b->device_ns - a->device_ns,
             b->dispatches - a->dispatches, wall_s};
  return d;
}

/* ------------------------------------------------------------ profile */

/* Device time per kind of dispatch: labels with their value ids removed
 * ("dot %36 gemv sg" and "dot %90 gemv sg" are one kind). */
typedef struct prof_row {
  char label[96];
  uint64_t ns, count;
} prof_row;

typedef struct profile {
  prof_row rows[64];
  uint32_t n;
  uint64_t total_ns, dispatches;
} profile;

static void prof_key(const char *label, char *out, size_t cap) {
  size_t o = 0;
  for (const char *p = label ? label : "?"; *p && o + 1 < cap; p++) {
    out[o++] = *p;
    if (*p == '%')
      while (p[1] >= '0' && p[1] <= '9') p++;
  }
  out[o] = '\0';
}

static void prof_add(void *ctx, uint32_t index, const char *label, uint64_t ns) {
  (void)index;
  profile *pr = ctx;
  char key[96];
  prof_key(label, key, sizeof key);
  uint32_t i = 0;
  while (i < pr->n && strcmp(pr->rows[i].label, key) != 0) i++;
  if (i == pr->n) {
    if (pr->n == sizeof pr->rows / sizeof pr->rows[0]) {
      i = pr->n - 1; /* the table is full: the last row collects the rest */
      snprintf(pr->rows[i].label, sizeof pr->rows[i].label, "(other kinds)");
    } else {
      snprintf(pr->rows[i].label, sizeof pr->rows[i].label, "%s", key);
      pr->n++;
    }
  }
  pr->rows[i].ns += ns;
  pr->rows[i].count++;
  pr->total_ns += ns;
  pr->dispatches++;
}

static int prof_cmp(const void *a, const void *b) {
  const prof_row *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Prints the profile per step (steps > 0), largest first; JSON when asked. */
static void prof_print(profile *pr, const char *what, uint64_t steps, bool json, bool *first) {
  qsort(pr->rows, pr->n, sizeof pr->rows[0], prof_cmp);
  double per = steps ? 1e-3 / (double)steps : 0;
  if (json) {
    printf("%s\"%s\":{\"steps\":%llu,\"device_us_per_step\":%.2f,\"kinds\":[", *first ? "" : ",",
           what, (unsigned long long)steps, (double)pr->total_ns * per);
    for (uint32_t i = 0; i < pr->n; i++)
      printf("%s{\"label\":\"%s\",\"per_step\":%.2f,\"us_per_step\":%.2f}", i ? "," : "",
             pr->rows[i].label, steps ? (double)pr->rows[i].count / (double)steps : 0.0,
             (double)pr->rows[i].ns * per);
    printf("]}");
    *first = false;
    return;
  }
  printf("profile      %s: %.1f µs of device time per step (eager, %llu steps)\n", what,
         (double)pr->total_ns * per, (unsigned long long)steps);
  for (uint32_t i = 0; i < pr->n; i++)
    printf("  %9.1f µs %5.1f %%  %5.1f×  %s\n", (double)pr->rows[i].ns * per,
           pr->total_ns ? 100.0 * (double)pr->rows[i].ns / (double)pr->total_ns : 0.0,
           steps ? (double)pr->rows[i].count / (double)steps : 0.0, pr->rows[i].label);
}

/* Runs `n` decode steps from the current position starting at token `tok`;
 * ids (may be NULL) receives each step's choice. */
static poot_status decode_steps(poot_driver *drv, poot_token tok, int64_t n, poot_token *ids) {
  for (int64_t i = 0; i < n; i++) {
    poot_token next;
    POOT_TRY(poot_driver_feed(drv, &tok, 1, &next, NULL));
    if (ids) ids[i] = next;
    tok = next;
  }
  return NULL;
}

static int bench_main(int argc, char **argv) {
  const char *model_path = NULL, *tok_path = NULL, *device = "auto";
  long long np = 64, nd = 64, eager_n = 8, copy_mib = 64, prof_n = 0, ctx_n = 0;
  bool json = false;
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
    } else if (!strcmp(a, "--device")) {
      if (!(device = poot_tool_flag_value(CMD, argc, argv, &i))) return POOT_EXIT_USAGE;
    } else if (!strcmp(a, "-p") || !strcmp(a, "-n") || !strcmp(a, "--eager-steps") ||
               !strcmp(a, "--copy-mib") || !strcmp(a, "--profile") || !strcmp(a, "--context")) {
      long long x;
      if (!(v = poot_tool_flag_value(CMD, argc, argv, &i)) || !poot_tool_parse_i64(CMD, a, v, &x))
        return POOT_EXIT_USAGE;
      if (x < 0 || x > bench_flag_max(a))
        return poot_tool_usage_error(CMD, "%s %s is outside 0..%lld", a, v, bench_flag_max(a));
      if (!strcmp(a, "-p"))
        np = x;
      else if (!strcmp(a, "-n"))
        nd = x;
      else if (!strcmp(a, "--eager-steps"))
        eager_n = x;
      else if (!strcmp(a, "--profile"))
        prof_n = x;
      else if (!strcmp(a, "--context"))
        ctx_n = x;
      else
        copy_mib = x;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "-b")) {
      return poot_tool_usage_error(CMD, "-b: batches other than 1 are not supported yet");
    } else {
      return poot_tool_usage_error(CMD, "unknown argument '%s'", a);
    }
  }
  if (!model_path) return poot_tool_usage_error(CMD, "give a model with -m MODEL");
  if (nd < 1) return poot_tool_usage_error(CMD, "-n must be >= 1");

  poot_model *model = NULL;
  poot_device *dev = NULL;
  poot_executor *ex = NULL;
  poot_driver *drv = NULL;
  poot_token *ids_replay = NULL, *ids_eager = NULL, *prompt = NULL;
  int rc = POOT_EXIT_FAIL;
  poot_model_open_options oo = {.tokenizer_path = tok_path, .skip_tokenizer = tok_path == NULL};
  poot_status st = poot_model_open(model_path, &oo, &model);
  if (st) goto fail;
  const poot_model_config *c = poot_model_get_config(model);
  long long most = nd > eager_n ? nd : eager_n;
  if (prof_n > most) most = prof_n;
  long long cap = 1 + (np > 1 ? np : 1) + most;
  if (ctx_n + 1 + nd > cap) cap = ctx_n + 1 + nd;
  cap = (cap + 15) / 16 * 16;
  if (c->context_length > 0 && cap > c->context_length) {
    st = poot_status_make(POOT_CAPACITY,
                          "-p %lld and -n %lld need %lld positions; the model "
                          "has %lld",
                          np, nd, cap, (long long)c->context_length);
    goto fail;
  }
  ids_replay = poot_calloc((size_t)most + 1, sizeof *ids_replay);
  ids_eager = poot_calloc((size_t)eager_n + 1, sizeof *ids_eager);
  long long nprompt = np > ctx_n ? np : ctx_n;
  prompt = poot_calloc((size_t)nprompt + 1, sizeof *prompt);
  if (!ids_replay || !ids_eager || !prompt) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "bench: buffers");
    goto fail;
  }
  /* A deterministic prompt of in-vocabulary ids (none special, in practice). */
  for (long long i = 0; i <= nprompt; i++)
    prompt[i] = (poot_token)((i * 7919 + 31) % (c->vocab_size > 8 ? c->vocab_size - 8 : 1) + 8);
  if ((st = poot_device_open(device, NULL, &dev))) goto fail;
  if ((st = poot_engine_create(dev, &ex))) goto fail;
  const poot_device_caps *caps = poot_device_caps_get(dev);
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = cap;
  dopt.prefill_chunk = np > 1 ? np : 1;
  dopt.program = model_path;
  uint64_t t0 = poot_time_ns();
  if ((st = poot_driver_create(ex, model, &dopt, &drv))) goto fail;
  double load_s = (double)(poot_time_ns() - t0) * 1e-9;
  t0 = poot_time_ns();
  if ((st = poot_driver_prepare(drv))) goto fail;
  double capture_s = (double)(poot_time_ns() - t0) * 1e-9;

  /* Prefill: one chunk of np tokens (a warm-up chunk first). */
  double prefill_tps = 0, prefill_ms = 0;
  poot_token next = 0;
  if (np > 1) {
    if ((st = poot_driver_reset(drv))) goto fail;
    if ((st = poot_driver_feed(drv, prompt, (size_t)np, &next, NULL))) goto fail;
    if ((st = poot_driver_reset(drv))) goto fail;
    uint64_t p0 = poot_time_ns();
    if ((st = poot_driver_feed(drv, prompt, (size_t)np, &next, NULL))) goto fail;
    double s = (double)(poot_time_ns() - p0) * 1e-9;
    prefill_ms = s * 1e3;
    prefill_tps = (double)np / s;
  }
  /* Decode: from a reset, the context (--context tokens, in prefill
   * chunks) and one warm-up step, then nd timed steps: at positions
   * ctx_n + 1 .. ctx_n + nd (1 .. nd by default: an empty context, as
   * llama-bench's tg test). */
  if ((st = poot_driver_reset(drv))) goto fail;
  if ((st = poot_driver_feed(drv, prompt, (size_t)ctx_n + 1, &next, NULL))) goto fail;
  phase a, b;
  snap(ex, &a);
  uint64_t d0 = poot_time_ns();
  if ((st = decode_steps(drv, next, nd, ids_replay))) goto fail;
  double dec_s = (double)(poot_time_ns() - d0) * 1e-9;
  snap(ex, &b);
  phase dec = diff(&a, &b, dec_s);
  poot_exec_stats s1;
  poot_exec_stats_get(ex, &s1);

  /* Replay versus eager over the same eager_n steps from the same start. */
  double replay_us = 0, eager_us = 0;
  bool same_ids = true;
  if (eager_n > 0) {
    if ((st = poot_driver_reset(drv))) goto fail;
    if ((st = poot_driver_feed(drv, prompt, 1, &next, NULL))) goto fail;
    poot_token start = next;
    snap(ex, &a);
    uint64_t r0 = poot_time_ns();
    if ((st = decode_steps(drv, start, eager_n, ids_replay))) goto fail;
    replay_us = (double)(poot_time_ns() - r0) * 1e-3 / (double)eager_n;
    if ((st = poot_driver_reset(drv))) goto fail;
    if ((st = poot_driver_feed(drv, prompt, 1, &next, NULL))) goto fail;
    poot_driver_set_eager(drv, true);
    uint64_t e0 = poot_time_ns();
    st = decode_steps(drv, next, eager_n, ids_eager);
    eager_us = (double)(poot_time_ns() - e0) * 1e-3 / (double)eager_n;
    poot_driver_set_eager(drv, false);
    if (st) goto fail;
    same_ids = memcmp(ids_replay, ids_eager, (size_t)eager_n * sizeof *ids_eager) == 0;
  }

  /* Per-dispatch device time of eager steps (decode, then one prefill chunk). */
  profile *prof_dec = NULL, *prof_pre = NULL;
  if (prof_n > 0) {
    prof_dec = poot_calloc(1, sizeof *prof_dec);
    prof_pre = poot_calloc(1, sizeof *prof_pre);
    if (!prof_dec || !prof_pre) {
      poot_free(prof_dec);
      poot_free(prof_pre);
      st = poot_status_make(POOT_OUT_OF_MEMORY, "bench: profile");
      goto fail;
    }
    poot_driver_set_eager(drv, true);
    if (!(st = poot_driver_reset(drv))) st = poot_driver_feed(drv, prompt, 1, &next, NULL);
    poot_driver_set_dispatch_hook(drv, prof_add, prof_dec);
    if (!st) st = decode_steps(drv, next, prof_n, NULL);
    if (!st && np > 1) {
      poot_driver_set_dispatch_hook(drv, NULL, NULL);
      st = poot_driver_reset(drv);
      poot_driver_set_dispatch_hook(drv, prof_add, prof_pre);
      if (!st) st = poot_driver_feed(drv, prompt, (size_t)np, &next, NULL);
    }
    poot_driver_set_dispatch_hook(drv, NULL, NULL);
    poot_driver_set_eager(drv, false);
    if (st) {
      poot_free(prof_dec);
      poot_free(prof_pre);
      goto fail;
    }
  }

  /* Bytes a decode step must read: the weights and the whole K/V cache. */
  double kv_bytes =
      2.0 * (double)c->n_layers * (double)cap * (double)c->n_kv_heads * (double)c->head_dim * 4.0;
  double step_bytes = (double)s1.weight_bytes + kv_bytes;
  double bw = 0;
  if (copy_mib && (st = copy_bandwidth(dev, (uint64_t)copy_mib << 20, 5, &bw))) goto fail;
  double limit_tps = bw > 0 ? bw / step_bytes : 0;
  double dec_tps = (double)nd / dec.wall_s;
  double host_us = dec.steps ? (double)dec.host_ns * 1e-3 / (double)dec.steps : 0;
  double dev_us =
      dec.steps && s1.device_timed ? (double)dec.device_ns * 1e-3 / (double)dec.steps : 0;
  double disp = dec.steps ? (double)dec.dispatches / (double)dec.steps : 0;

  if (json) {
    printf(
        "{\"model\":\"%s\",\"family\":\"%s\",\"backend\":\"%s\",\"device\":\"%s\","
        "\"cap\":%lld,\"context\":%lld,\"prefill_tokens\":%lld,\"decode_steps\":%lld,"
        "\"load_s\":%.4f,\"capture_s\":%.4f,\"prefill_ms\":%.3f,\"prefill_tok_s\":%.2f,"
        "\"decode_tok_s\":%.2f,\"host_us_per_step\":%.2f,\"device_us_per_step\":%.2f,"
        "\"host_overhead_us_per_step\":%.2f,\"device_timed\":%s,\"dispatches_per_step\":%.1f,"
        "\"stages_per_step\":%llu,"
        "\"kernels\":%llu,\"replay_us_per_step\":%.2f,\"eager_us_per_step\":%.2f,"
        "\"eager_over_replay\":%.3f,\"eager_ids_equal\":%s,\"weight_bytes\":%llu,"
        "\"step_bytes\":%.0f,\"copy_bandwidth_gb_s\":%.3f,\"limit_tok_s\":%.2f,"
        "\"fraction_of_limit\":%.4f",
        model_path, poot_model_family_name(c->family), caps->backend, caps->name, cap, ctx_n, np,
        nd, load_s, capture_s, prefill_ms, prefill_tps, dec_tps, host_us, dev_us,
        s1.device_timed ? host_us - dev_us : 0.0, s1.device_timed ? "true" : "false", disp,
        (unsigned long long)s1.stages_per_step, (unsigned long long)s1.kernels, replay_us, eager_us,
        replay_us > 0 ? eager_us / replay_us : 0.0, same_ids ? "true" : "false",
        (unsigned long long)s1.weight_bytes, step_bytes, bw * 1e-9, limit_tps,
        limit_tps > 0 ? dec_tps / limit_tps : 0.0);
    if (prof_dec) {
      bool first = true;
      printf(",\"profile\":{");
      prof_print(prof_dec, "decode", (uint64_t)prof_n, true, &first);
      if (np > 1) prof_print(prof_pre, "prefill", 1, true, &first);
      printf("}");
    }
    printf("}\n");
  } else {
    printf("model        %s (%s, %lld layers, vocab %lld), KV capacity %lld\n", model_path,
           poot_model_family_name(c->family), (long long)c->n_layers, (long long)c->vocab_size,
           cap);
    printf("device       %s: %s\n", caps->backend, caps->name);
    printf("load         %.1f ms (weights %.2f MB)\n", load_s * 1e3,
           (double)s1.weight_bytes * 1e-6);
    printf("compile+capture %.1f ms (2 entries, %llu kernels)\n", capture_s * 1e3,
           (unsigned long long)s1.kernels);
    if (np > 1)
      printf("prefill      %lld tokens in %.2f ms: %.1f tok/s\n", np, prefill_ms, prefill_tps);
    if (ctx_n)
      printf("decode       %lld steps after %lld tokens of context: %.1f tok/s\n", nd, ctx_n,
             dec_tps);
    else
      printf("decode       %lld steps: %.1f tok/s\n", nd, dec_tps);
    printf("per step     host %.1f µs", host_us);
    if (s1.device_timed)
      printf(", device %.1f µs (host overhead %.1f µs)", dev_us, host_us - dev_us);
    else
      printf(" (the device cannot time)");
    printf(", %.0f dispatches, %llu submission(s)\n", disp, (unsigned long long)s1.stages_per_step);
    if (eager_n > 0)
      printf(
          "replay/eager replay %.1f µs/step, eager %.1f µs/step (eager/replay %.2f×); ids "
          "%s\n",
          replay_us, eager_us, replay_us > 0 ? eager_us / replay_us : 0.0,
          same_ids ? "equal" : "DIFFER");
    printf(
        "bandwidth    step reads %.2f MB; copy %.2f GB/s → limit %.1f tok/s (decode at "
        "%.1f%%)\n",
        step_bytes * 1e-6, bw * 1e-9, limit_tps, limit_tps > 0 ? 100.0 * dec_tps / limit_tps : 0.0);
    if (prof_dec) {
      bool first = true;
      prof_print(prof_dec, "decode", (uint64_t)prof_n, false, &first);
      if (np > 1) prof_print(prof_pre, "prefill", 1, false, &first);
    }
  }
  poot_free(prof_dec);
  poot_free(prof_pre);
  rc = POOT_EXIT_OK;
  goto done;
fail:
  rc = poot_tool_fail(CMD, st);
done:
  poot_free(ids_replay);
  poot_free(ids_eager);
  poot_free(prompt);
  poot_driver_destroy(drv);
  poot_executor_destroy(ex);
  poot_device_destroy(dev);
  poot_model_destroy(model);
  return rc;
}

const poot_tool_command poot_tool_cmd_bench = {
    "bench", "measure generation on a device (tok/s, µs and dispatches per step)", bench_main};
