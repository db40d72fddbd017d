/* poot bench — generation figures of DESIGN §10 on a device:
 *   poot bench -m MODEL [--tokenizer FILE] [--device D] [-p N] [-n N] [--json]
 * One run measures: compile + capture time of the decode and prefill
 * entries; prefill tokens per second (one chunk of N tokens); decode tokens
 * per second over N steps; host and device µs per decode step; dispatches
 * and submissions per step; the per-step time of replay against eager
 * submission of the same dispatches (and whether their ids agree); bytes a
 * decode step must read (weights + the K/V cache) against the device's
 * read-only streaming bandwidth (and its copy bandwidth) measured in the
 * same run, as a tokens-per-second limit. With --profile K it also submits
 * K decode steps (and one prefill chunk) eagerly and prints, for each kind
 * of dispatch, its device time, the bytes the plan says it moves and the
 * bandwidth that achieves against the measured limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/runtime.h"
#include "bench_batch.h"
#include "bench_bw.h"
#include "bench_sample.h"
#include "tool.h"

#define CMD "bench"

typedef struct phase {
  uint64_t steps, host_ns, device_ns, dispatches;
  double wall_s;
  uint64_t encode_ns; /* of host_ns: command buffers encoded in replay (wgpu) */
} phase;

static void snap(const poot_executor *ex, phase *p) {
  poot_exec_stats s;
  poot_exec_stats_get(ex, &s);
  p->steps = s.steps;
  p->host_ns = s.host_ns_total;
  p->device_ns = s.device_ns_total;
  p->dispatches = s.dispatches;
  p->encode_ns = s.encode_ns_total;
}

static phase diff(const phase *a, const phase *b, double wall_s) {
  phase d = {b->steps - a->steps,
             b->host_ns - a->host_ns,
             b->device_ns - a->device_ns,
             b->dispatches - a->dispatches,
             wall_s,
             b->encode_ns - a->encode_ns};
  return d;
}

/* ------------------------------------------------------------ profile */

/* Device time and bytes per kind of dispatch: labels with their value ids
 * removed ("dot %36 gemv sg" and "dot %90 gemv sg" are one kind). Bytes are
 * the plan's estimates (poot_exec_dispatch_info), K/V sweeps scaled to the
 * positions the step sees (attention stops at the causal bound). */
typedef struct prof_row {
  char label[96];
  uint64_t ns, count;
  double bytes, weight, kv, kv_bound; /* summed over the profiled steps */
} prof_row;

typedef struct profile {
  prof_row rows[64];
  uint32_t n;
  prof_row total;
  uint64_t dispatches;
  const poot_driver *drv; /* its position before each step: the visible length */
  int64_t cap;            /* the KV capacity the plan's K/V sweeps span */
  int64_t tokens;         /* tokens per profiled step */
} profile;

static void prof_init(profile *pr, const poot_driver *drv, int64_t cap, int64_t tokens) {
  pr->drv = drv;
  pr->cap = cap;
  pr->tokens = tokens;
}

static void prof_key(const char *label, char *out, size_t cap) {
  size_t o = 0;
  for (const char *p = label ? label : "?"; *p && o + 1 < cap; p++) {
    out[o++] = *p;
    if (*p == '%')
      while (p[1] >= '0' && p[1] <= '9') p++;
  }
  out[o] = '\0';
}

static void row_add(prof_row *r, uint64_t ns, double bytes, double weight, double kv,
                    double kv_bound) {
  r->ns += ns;
  r->count++;
  r->bytes += bytes;
  r->weight += weight;
  r->kv += kv;
  r->kv_bound += kv_bound;
}

static void prof_add(void *ctx, const poot_exec_dispatch_info *d) {
  profile *pr = ctx;
  char key[96];
  prof_key(d->label, key, sizeof key);
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
  /* A whole-state access is a sweep over the capacity; the kernel reads the
   * visible positions only. */
  double seen = 1.0;
  if (pr->drv && pr->cap > 0) {
    seen = (double)(poot_driver_pos(pr->drv) + pr->tokens) / (double)pr->cap;
    if (seen > 1.0) seen = 1.0;
  }
  double whole = (double)d->state_whole_bytes, part = (double)d->state_bytes - whole;
  double kv = part + whole * seen;
  double bytes = (double)d->bytes - (double)d->state_bytes + kv;
  row_add(&pr->rows[i], d->device_ns, bytes, (double)d->weight_bytes, kv, (double)d->state_bytes);
  row_add(&pr->total, d->device_ns, bytes, (double)d->weight_bytes, kv, (double)d->state_bytes);
  pr->dispatches++;
}

static int prof_cmp(const void *a, const void *b) {
  const prof_row *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* GB/s of a row (bytes per ns), 0 when the device cannot time. */
static double row_gbs(const prof_row *r) {
  return r->ns ? r->bytes / (double)r->ns : 0.0;
}

static void prof_json_row(const prof_row *r, double per, double steps, double limit_gbs) {
  double gbs = row_gbs(r);
  printf(
      "\"per_step\":%.2f,\"us_per_step\":%.2f,\"bytes_per_step\":%.0f,"
      "\"weight_bytes_per_step\":%.0f,\"kv_bytes_per_step\":%.0f,"
      "\"kv_bound_bytes_per_step\":%.0f,\"activation_bytes_per_step\":%.0f,\"gb_s\":%.3f,"
      "\"fraction_of_stream\":%.4f",
      steps > 0 ? (double)r->count / steps : 0.0, (double)r->ns * per,
      steps > 0 ? r->bytes / steps : 0.0, steps > 0 ? r->weight / steps : 0.0,
      steps > 0 ? r->kv / steps : 0.0, steps > 0 ? r->kv_bound / steps : 0.0,
      steps > 0 ? (r->bytes - r->weight - r->kv) / steps : 0.0, gbs,
      limit_gbs > 0 ? gbs / limit_gbs : 0.0);
}

static void prof_text_row(const prof_row *r, const profile *pr, double per, double steps,
                          double limit_gbs, const char *label) {
  double gbs = row_gbs(r);
  printf("  %9.1f µs %5.1f %%  %5.1f×  %9.3f MB  %8.1f GB/s  %5.1f %%  %s\n", (double)r->ns * per,
         pr->total.ns ? 100.0 * (double)r->ns / (double)pr->total.ns : 0.0,
         steps > 0 ? (double)r->count / steps : 0.0, steps > 0 ? r->bytes / steps * 1e-6 : 0.0, gbs,
         limit_gbs > 0 ? 100.0 * gbs / limit_gbs : 0.0, label);
}

/* Prints the profile per step (steps > 0), largest first, then a total
 * row; fractions are of limit_gbs (the measured limit, GB/s; 0: none). JSON
 * when asked. */
static void prof_print(profile *pr, const char *what, uint64_t steps, double limit_gbs, bool json,
                       bool *first) {
  qsort(pr->rows, pr->n, sizeof pr->rows[0], prof_cmp);
  double per = steps ? 1e-3 / (double)steps : 0, st = (double)steps;
  if (json) {
    printf("%s\"%s\":{\"steps\":%llu,\"device_us_per_step\":%.2f,\"total\":{", *first ? "" : ",",
           what, (unsigned long long)steps, (double)pr->total.ns * per);
    prof_json_row(&pr->total, per, st, limit_gbs);
    printf("},\"kinds\":[");
    for (uint32_t i = 0; i < pr->n; i++) {
      printf("%s{\"label\":\"%s\",", i ? "," : "", pr->rows[i].label);
      prof_json_row(&pr->rows[i], per, st, limit_gbs);
      printf("}");
    }
    printf("]}");
    *first = false;
    return;
  }
  printf(
      "profile      %s: %.1f µs of device time per step (eager, %llu steps); bytes per step "
      "from the plan, K/V at the visible positions\n",
      what, (double)pr->total.ns * per, (unsigned long long)steps);
  printf("  %12s %7s %7s %13s %14s %8s  %s\n", "device time", "share", "count", "bytes", "achieved",
         "of limit", "kind");
  for (uint32_t i = 0; i < pr->n; i++)
    prof_text_row(&pr->rows[i], pr, per, st, limit_gbs, pr->rows[i].label);
  prof_text_row(&pr->total, pr, per, st, limit_gbs, "total");
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

/* ------------------------------------------------------------ flags */

typedef struct bench_flags {
  const char *model, *tokenizer, *device, *kv_type, *matmul_precision, *forms_text;
  long long np, nd, eager_n, copy_mib, probe_limit_mib, prof_n, ctx_n, batch;
  bool json, sample;
  poot_dtype kv;
  poot_matmul_precision mp;
  uint32_t forms;
} bench_flags;

/* The counting flags' upper bounds: larger values are typing mistakes (and
 * --copy-mib past its bound would overflow the byte count). */
enum { BENCH_MAX_TOKENS = 1 << 24, BENCH_MAX_STEPS = 1 << 20, BENCH_MAX_COPY_MIB = 1 << 20 };

static int parse_flags(int argc, char **argv, bench_flags *f) {
  *f = (bench_flags){.device = "auto", .np = 64, .nd = 64, .eager_n = 8, .copy_mib = 1024};
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &f->model, NULL, 0, 0},
      {POOT_FLAG_TOKENIZER, &f->tokenizer, NULL, 0, 0},
      {POOT_FLAG_DEVICE, &f->device, "auto (default), a backend name, or backend:index", 0, 0},
      {POOT_FLAG_N_PROMPT, &f->np, "prefill tokens, one chunk (default 64; 0: none)", 0,
       BENCH_MAX_TOKENS},
      {POOT_FLAG_N_PREDICT, &f->nd, "decode steps (default 64)", 1, BENCH_MAX_TOKENS},
      {POOT_FLAG_CONTEXT, &f->ctx_n,
       "decode after C tokens of context (default 0: from an empty\n"
       "context, as llama-bench's tg test)",
       0, BENCH_MAX_TOKENS},
      {POOT_FLAG_EAGER_STEPS, &f->eager_n,
       "decode steps of the replay-vs-eager comparison (default 8)", 0, BENCH_MAX_STEPS},
      {POOT_FLAG_COPY_MIB, &f->copy_mib,
       "buffer size of the bandwidth probes, copy and read-only\n"
       "stream (default 1024; 0: off; at most 1048576); a device\n"
       "that cannot hold two such buffers is measured with the\n"
       "largest size that fits, and the output says so",
       0, BENCH_MAX_COPY_MIB},
      {POOT_FLAG_PROBE_LIMIT_MIB, &f->probe_limit_mib,
       "treat probe buffers over M MiB as refused (tests of the\n"
       "fallback; default 0: no limit)",
       0, BENCH_MAX_COPY_MIB},
      {POOT_FLAG_PROFILE, &f->prof_n,
       "per kind of dispatch over K eager decode steps and one\n"
       "eager prefill chunk: device time, the bytes the plan says\n"
       "it moves, and its achieved bandwidth against the measured\n"
       "limit (default 0: off)",
       0, BENCH_MAX_STEPS},
      {POOT_FLAG_JSON, &f->json, NULL, 0, 0},
      {POOT_FLAG_SAMPLE, &f->sample, NULL, 0, 0},
      {POOT_FLAG_KV_TYPE, &f->kv_type, NULL, 0, 0},
      {POOT_FLAG_MATMUL_PRECISION, &f->matmul_precision, NULL, 0, 0},
      {POOT_FLAG_FORMS, &f->forms_text, NULL, 0, 0},
      {POOT_FLAG_BATCH, NULL, NULL, 0, 0},
      {POOT_FLAG_SEQUENCES, &f->batch,
       "B sequences decoding together through the batched runner\n"
       "(paged KV): tokens per second and ms per step of the\n"
       "decode steps where all B step at once (default 0: the\n"
       "batch-1 driver's figures above)",
       0, 4096},
  };
  const poot_tool_cli cli = {
      .cmd = CMD,
      .synopsis =
          "usage: poot bench -m MODEL [--tokenizer FILE] [--device D] [-p N] [-n N]\n"
          "                  [--context C] [--eager-steps K] [--copy-mib M] [--profile K]\n"
          "                  [--probe-limit-mib M] [--kv-type f16|f32|q8_0] [--batch B] [--json]\n"
          "                  [--matmul-precision high|medium] [--forms LIST]\n\n"
          "Measures generation on a device (greedy, batch 1; --batch B: B sequences\n"
          "together).\n\n",
      .options = options,
      .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && !f->model) return poot_tool_usage_error(CMD, "give a model with -m MODEL");
  if (rc < 0 && !poot_tool_parse_kv_type(CMD, f->kv_type, &f->kv)) return POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_matmul_precision(CMD, f->matmul_precision, &f->mp))
    return POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_forms(CMD, f->forms_text, &f->forms)) return POOT_EXIT_USAGE;
  return rc;
}

/* ------------------------------------------------------------ the run */

/* One bench run: its inputs, the runtime and every figure it measures. */
typedef struct bench_run {
  const bench_flags *f;
  poot_runtime *rt;
  const poot_model_config *config;
  long long cap, nprompt;
  poot_token *prompt, *ids_replay, *ids_eager;
  double load_s, capture_s, prefill_tps, prefill_ms;
  phase dec;
  poot_exec_stats stats; /* after the timed decode steps */
  double replay_us, eager_us;
  bool same_ids;
  profile *prof_dec, *prof_pre; /* NULL without --profile */
  profile *prof_smp, *prof_gra; /* --sample --profile: sampled, grammar */
  bench_bw bw;                  /* the probes (--copy-mib) */
  double limit_bw;      /* bytes/s a decode step is held to: the stream's, else the copy's */
  const char *limit_of; /* "stream", "copy" or "none" */
  bench_sample sample;  /* --sample */
} bench_run;

/* The KV capacity the measured steps need, the id buffers and a
 * deterministic prompt of in-vocabulary ids (none special, in practice). */
static poot_status size_run(bench_run *r) {
  const bench_flags *f = r->f;
  const poot_model_config *c = r->config;
  long long most = f->nd > f->eager_n ? f->nd : f->eager_n;
  if (f->prof_n > most) most = f->prof_n;
  long long cap = 1 + (f->np > 1 ? f->np : 1) + most;
  if (f->ctx_n + 1 + f->nd > cap) cap = f->ctx_n + 1 + f->nd;
  r->cap = cap = (cap + 15) / 16 * 16;
  if (c->context_length > 0 && cap > c->context_length)
    return poot_status_make(POOT_CAPACITY,
                            "-p %lld and -n %lld need %lld positions; the model has %lld", f->np,
                            f->nd, cap, (long long)c->context_length);
  r->ids_replay = poot_calloc((size_t)most + 1, sizeof *r->ids_replay);
  r->ids_eager = poot_calloc((size_t)f->eager_n + 1, sizeof *r->ids_eager);
  r->nprompt = f->np > f->ctx_n ? f->np : f->ctx_n;
  r->prompt = poot_calloc((size_t)r->nprompt + 1, sizeof *r->prompt);
  if (!r->ids_replay || !r->ids_eager || !r->prompt)
    return poot_status_make(POOT_OUT_OF_MEMORY, "bench: buffers");
  for (long long i = 0; i <= r->nprompt; i++)
    r->prompt[i] = (poot_token)((i * 7919 + 31) % (c->vocab_size > 8 ? c->vocab_size - 8 : 1) + 8);
  return NULL;
}

/* The model, the device, and the driver: its load and its compile+capture timed. */
static poot_status start(bench_run *r) {
  const bench_flags *f = r->f;
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = f->model;
  ro.tokenizer_path = f->tokenizer;
  ro.skip_tokenizer = f->tokenizer == NULL && !f->sample; /* a grammar needs it */
  ro.device = f->device;
  ro.matmul_precision = f->mp;
  ro.forms = f->forms;
  POOT_TRY(poot_runtime_open(&ro, &r->rt));
  r->config = poot_model_get_config(poot_runtime_model(r->rt));
  POOT_TRY(size_run(r));
  POOT_TRY(poot_runtime_open_device(r->rt));
  poot_driver_options dopt = poot_driver_options_default();
  dopt.cap = r->cap;
  dopt.prefill_chunk = f->np > 1 ? f->np : 1;
  dopt.kv_dtype = f->kv;
  uint64_t t0 = poot_time_ns();
  POOT_TRY(poot_runtime_create_driver(r->rt, &dopt));
  r->load_s = (double)(poot_time_ns() - t0) * 1e-9;
  t0 = poot_time_ns();
  POOT_TRY(poot_driver_prepare(poot_runtime_driver(r->rt)));
  r->capture_s = (double)(poot_time_ns() - t0) * 1e-9;
  return NULL;
}

/* Prefill: one chunk of -p tokens (a warm-up chunk first). */
static poot_status measure_prefill(bench_run *r) {
  long long np = r->f->np;
  if (np <= 1) return NULL;
  poot_driver *drv = poot_runtime_driver(r->rt);
  poot_token next = 0;
  POOT_TRY(poot_driver_reset(drv));
  POOT_TRY(poot_driver_feed(drv, r->prompt, (size_t)np, &next, NULL));
  POOT_TRY(poot_driver_reset(drv));
  uint64_t p0 = poot_time_ns();
  POOT_TRY(poot_driver_feed(drv, r->prompt, (size_t)np, &next, NULL));
  double s = (double)(poot_time_ns() - p0) * 1e-9;
  r->prefill_ms = s * 1e3;
  r->prefill_tps = (double)np / s;
  return NULL;
}

/* Decode: from a reset, the context (--context tokens, in prefill chunks)
 * and one warm-up step, then -n timed steps: at positions ctx_n + 1 ..
 * ctx_n + nd (1 .. nd by default: an empty context, as llama-bench's tg
 * test). */
static poot_status measure_decode(bench_run *r) {
  poot_driver *drv = poot_runtime_driver(r->rt);
  const poot_executor *ex = poot_runtime_executor(r->rt);
  poot_token next = 0;
  POOT_TRY(poot_driver_reset(drv));
  POOT_TRY(poot_driver_feed(drv, r->prompt, (size_t)r->f->ctx_n + 1, &next, NULL));
  phase a, b;
  snap(ex, &a);
  uint64_t d0 = poot_time_ns();
  POOT_TRY(decode_steps(drv, next, r->f->nd, r->ids_replay));
  double dec_s = (double)(poot_time_ns() - d0) * 1e-9;
  snap(ex, &b);
  r->dec = diff(&a, &b, dec_s);
  poot_exec_stats_get(ex, &r->stats);
  return NULL;
}

/* Replay versus eager over the same --eager-steps steps from the same start. */
static poot_status measure_eager(bench_run *r) {
  long long n = r->f->eager_n;
  r->same_ids = true;
  if (n <= 0) return NULL;
  poot_driver *drv = poot_runtime_driver(r->rt);
  poot_token next = 0;
  POOT_TRY(poot_driver_reset(drv));
  POOT_TRY(poot_driver_feed(drv, r->prompt, 1, &next, NULL));
  uint64_t r0 = poot_time_ns();
  POOT_TRY(decode_steps(drv, next, n, r->ids_replay));
  r->replay_us = (double)(poot_time_ns() - r0) * 1e-3 / (double)n;
  POOT_TRY(poot_driver_reset(drv));
  POOT_TRY(poot_driver_feed(drv, r->prompt, 1, &next, NULL));
  poot_driver_set_eager(drv, true);
  uint64_t e0 = poot_time_ns();
  poot_status st = decode_steps(drv, next, n, r->ids_eager);
  r->eager_us = (double)(poot_time_ns() - e0) * 1e-3 / (double)n;
  poot_driver_set_eager(drv, false);
  POOT_TRY(st);
  r->same_ids = memcmp(r->ids_replay, r->ids_eager, (size_t)n * sizeof *r->ids_eager) == 0;
  return NULL;
}

/* Per-dispatch device time of eager steps (decode, then one prefill chunk). */
static poot_status measure_profile(bench_run *r) {
  const bench_flags *f = r->f;
  if (f->prof_n <= 0) return NULL;
  r->prof_dec = poot_calloc(1, sizeof *r->prof_dec);
  r->prof_pre = poot_calloc(1, sizeof *r->prof_pre);
  if (!r->prof_dec || !r->prof_pre) return poot_status_make(POOT_OUT_OF_MEMORY, "bench: profile");
  poot_driver *drv = poot_runtime_driver(r->rt);
  prof_init(r->prof_dec, drv, r->cap, 1);
  prof_init(r->prof_pre, drv, r->cap, f->np);
  poot_token next = 0;
  poot_driver_set_eager(drv, true);
  poot_status st = poot_driver_reset(drv);
  if (!st) st = poot_driver_feed(drv, r->prompt, 1, &next, NULL);
  poot_driver_set_dispatch_hook(drv, prof_add, r->prof_dec);
  if (!st) st = decode_steps(drv, next, f->prof_n, NULL);
  if (!st && f->np > 1) {
    poot_driver_set_dispatch_hook(drv, NULL, NULL);
    st = poot_driver_reset(drv);
    poot_driver_set_dispatch_hook(drv, prof_add, r->prof_pre);
    if (!st) st = poot_driver_feed(drv, r->prompt, (size_t)f->np, &next, NULL);
  }
  poot_driver_set_dispatch_hook(drv, NULL, NULL);
  poot_driver_set_eager(drv, false);
  return st;
}

/* The probes (--copy-mib), after every step so that they do not share the
 * device with the model's work; the limit is the read-only stream's, a
 * decode step being a read stream, else the copy's. */
static poot_status measure_bandwidth(bench_run *r) {
  r->limit_of = "none";
  if (!r->f->copy_mib) return NULL;
  uint64_t mib = (uint64_t)1 << 20;
  POOT_TRY(poot_bench_bandwidth(poot_runtime_device(r->rt), (uint64_t)r->f->copy_mib * mib,
                                (uint64_t)r->f->probe_limit_mib * mib, 5, &r->bw));
  r->limit_bw = r->bw.stream_bw > 0 ? r->bw.stream_bw : r->bw.copy_bw;
  r->limit_of = r->bw.stream_bw > 0 ? "stream" : "copy";
  return NULL;
}

/* ------------------------------------------------------------ the report */

/* The figures derived from the measured ones. */
typedef struct bench_figures {
  double step_bytes, kv_bytes, limit_tps, copy_limit_tps, stream_limit_tps, dec_tps, host_us,
      dev_us, disp, encode_us;
} bench_figures;

static bench_figures figures(const bench_run *r) {
  const phase *dec = &r->dec;
  bench_figures g;
  /* Bytes a decode step must read: the weights and the whole K/V cache (the
   * states, in the type the plan keeps them). */
  g.kv_bytes = (double)r->stats.state_bytes;
  if (g.kv_bytes <= 0) g.kv_bytes = (double)poot_driver_kv_bytes(poot_runtime_driver(r->rt));
  g.step_bytes = (double)r->stats.weight_bytes + g.kv_bytes;
  g.limit_tps = r->limit_bw > 0 ? r->limit_bw / g.step_bytes : 0;
  g.copy_limit_tps = r->bw.copy_bw > 0 ? r->bw.copy_bw / g.step_bytes : 0;
  g.stream_limit_tps = r->bw.stream_bw > 0 ? r->bw.stream_bw / g.step_bytes : 0;
  g.dec_tps = (double)r->f->nd / dec->wall_s;
  g.host_us = dec->steps ? (double)dec->host_ns * 1e-3 / (double)dec->steps : 0;
  g.dev_us =
      dec->steps && r->stats.device_timed ? (double)dec->device_ns * 1e-3 / (double)dec->steps : 0;
  g.disp = dec->steps ? (double)dec->dispatches / (double)dec->steps : 0;
  g.encode_us = dec->steps ? (double)dec->encode_ns * 1e-3 / (double)dec->steps : 0;
  return g;
}

/* The probes' sizes and any fallback, as JSON fields. */
static void print_json_probe(const bench_bw *bw) {
  printf(
      ",\"probe_asked_mib\":%llu,\"probe_mib\":%llu,\"stream_mib\":%llu,\"probe_fell_back\":%s"
      ",\"stream_below_copy\":%s",
      (unsigned long long)(bw->asked_bytes >> 20), (unsigned long long)(bw->bytes >> 20),
      (unsigned long long)(bw->stream_bytes >> 20), bw->fell_back ? "true" : "false",
      bw->stream_bw > 0 && bw->stream_bw < bw->copy_bw ? "true" : "false");
  const char *notes[2] = {bw->fell_back ? bw->why : "", bw->stream_error};
  const char *keys[2] = {"probe_note", "stream_note"};
  for (int i = 0; i < 2; i++) {
    if (!notes[i][0]) continue;
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    poot_json_write_string(&sb, notes[i], strlen(notes[i]), true);
    printf(",\"%s\":%s", keys[i], poot_strbuf_status(&sb) || !sb.data ? "\"?\"" : sb.data);
    poot_strbuf_deinit(&sb);
  }
}

/* The bandwidth lines: what a step reads, both probes, the limit and which
 * probe it comes from, and a fallback when there was one. */
static void print_text_bandwidth(const bench_run *r, const bench_figures *g) {
  const bench_bw *bw = &r->bw;
  printf("bandwidth    step reads %.2f MB (weights %.2f, K/V %.2f); ", g->step_bytes * 1e-6,
         (double)r->stats.weight_bytes * 1e-6, g->kv_bytes * 1e-6);
  if (!r->f->copy_mib) {
    printf("no probe (--copy-mib 0)\n");
    return;
  }
  printf("stream %.2f GB/s (read), copy %.2f GB/s (read + write), %llu MiB buffers\n",
         bw->stream_bw * 1e-9, bw->copy_bw * 1e-9, (unsigned long long)(bw->bytes >> 20));
  printf(
      "limit        %.1f tok/s from the %s bandwidth (decode at %.1f%%); from the copy %.1f "
      "tok/s\n",
      g->limit_tps, r->limit_of, g->limit_tps > 0 ? 100.0 * g->dec_tps / g->limit_tps : 0.0,
      g->copy_limit_tps);
  if (bw->fell_back)
    printf("note         --copy-mib %llu: %s; measured with %llu MiB instead\n",
           (unsigned long long)(bw->asked_bytes >> 20), bw->why,
           (unsigned long long)(bw->bytes >> 20));
  if (bw->stream_error[0])
    printf("note         the stream probe did not run (%s); the limit is the copy's\n",
           bw->stream_error);
  else if (bw->stream_bw < bw->copy_bw)
    printf(
        "note         the stream read less than the copy moved: its kernel falls short of "
        "this device's memory system, so the limit is low and fractions flatter\n");
}

/* Every profile that ran, text or JSON. */
static void print_profiles(const bench_run *r, bool json) {
  const bench_flags *f = r->f;
  double lim = r->limit_bw * 1e-9;
  bool first = true;
  prof_print(r->prof_dec, "decode", (uint64_t)f->prof_n, lim, json, &first);
  if (f->np > 1) prof_print(r->prof_pre, "prefill", 1, lim, json, &first);
  if (r->prof_smp) prof_print(r->prof_smp, "sampled", (uint64_t)f->prof_n, lim, json, &first);
  if (r->prof_gra) prof_print(r->prof_gra, "grammar", (uint64_t)f->prof_n, lim, json, &first);
}

static void print_json_report(const bench_run *r, const bench_figures *g) {
  const bench_flags *f = r->f;
  const poot_model_config *c = r->config;
  const poot_device_caps *caps = poot_runtime_device_caps(r->rt);
  const poot_exec_stats *s1 = &r->stats;
  printf(
      "{\"model\":\"%s\",\"family\":\"%s\",\"backend\":\"%s\",\"device\":\"%s\","
      "\"cap\":%lld,\"context\":%lld,\"prefill_tokens\":%lld,\"decode_steps\":%lld,"
      "\"load_s\":%.4f,\"capture_s\":%.4f,\"prefill_ms\":%.3f,\"prefill_tok_s\":%.2f,"
      "\"decode_tok_s\":%.2f,\"host_us_per_step\":%.2f,\"device_us_per_step\":%.2f,"
      "\"host_overhead_us_per_step\":%.2f,\"device_timed\":%s,\"dispatches_per_step\":%.1f,"
      "\"stages_per_step\":%llu,"
      "\"kernels\":%llu,\"replay_us_per_step\":%.2f,\"eager_us_per_step\":%.2f,"
      "\"eager_over_replay\":%.3f,\"eager_ids_equal\":%s,\"weight_bytes\":%llu,"
      "\"step_bytes\":%.0f,\"kv_bytes\":%.0f,\"copy_bandwidth_gb_s\":%.3f,"
      "\"stream_bandwidth_gb_s\":%.3f,\"limit_from\":\"%s\",\"limit_tok_s\":%.2f,"
      "\"copy_limit_tok_s\":%.2f,\"stream_limit_tok_s\":%.2f,\"fraction_of_limit\":%.4f",
      f->model, poot_model_family_name(c->family), caps->backend, caps->name, r->cap, f->ctx_n,
      f->np, f->nd, r->load_s, r->capture_s, r->prefill_ms, r->prefill_tps, g->dec_tps, g->host_us,
      g->dev_us, s1->device_timed ? g->host_us - g->dev_us : 0.0,
      s1->device_timed ? "true" : "false", g->disp, (unsigned long long)s1->stages_per_step,
      (unsigned long long)s1->kernels, r->replay_us, r->eager_us,
      r->replay_us > 0 ? r->eager_us / r->replay_us : 0.0, r->same_ids ? "true" : "false",
      (unsigned long long)s1->weight_bytes, g->step_bytes, g->kv_bytes, r->bw.copy_bw * 1e-9,
      r->bw.stream_bw * 1e-9, r->limit_of, g->limit_tps, g->copy_limit_tps, g->stream_limit_tps,
      g->limit_tps > 0 ? g->dec_tps / g->limit_tps : 0.0);
  print_json_probe(&r->bw);
  /* Host µs per decode step spent encoding command buffers (a device that
   * re-encodes each replay: wgpu; 0 elsewhere). */
  printf(",\"encode_us_per_step\":%.2f", g->encode_us);
  printf(",\"kv_type\":\"%s\"", poot_dtype_name(poot_driver_kv_dtype(poot_runtime_driver(r->rt))));
  printf(",\"matmul_precision\":\"%s\"", poot_matmul_precision_name(f->mp));
  char fb[64];
  printf(",\"forms\":\"%s\"", poot_compile_forms_name(f->forms, fb, sizeof fb));
  if (f->sample) {
    const bench_sample *b = &r->sample;
    printf(
        ",\"sample\":{\"steps\":%lld,\"greedy_us_per_step\":%.2f,\"sample_us_per_step\":%.2f,"
        "\"grammar_us_per_step\":%.2f,\"mask_us_per_step\":%.2f,"
        "\"mask_wait_us_per_step\":%.2f,\"sample_over_greedy\":%.4f,"
        "\"grammar_over_greedy\":%.4f}",
        b->steps, b->greedy_us, b->sample_us, b->grammar_us, b->mask_us, b->mask_wait_us,
        b->greedy_us > 0 ? b->sample_us / b->greedy_us : 0.0,
        b->greedy_us > 0 ? b->grammar_us / b->greedy_us : 0.0);
  }
  if (r->prof_dec) {
    printf(",\"profile\":{\"limit_gb_s\":%.3f,\"limit_from\":\"%s\",", r->limit_bw * 1e-9,
           r->limit_of);
    print_profiles(r, true);
    printf("}");
  }
  printf("}\n");
}

static void print_text_report(const bench_run *r, const bench_figures *g) {
  const bench_flags *f = r->f;
  const poot_model_config *c = r->config;
  const poot_device_caps *caps = poot_runtime_device_caps(r->rt);
  const poot_exec_stats *s1 = &r->stats;
  printf("model        %s (%s, %lld layers, vocab %lld), KV capacity %lld (%s)\n", f->model,
         poot_model_family_name(c->family), (long long)c->n_layers, (long long)c->vocab_size,
         r->cap, poot_dtype_name(poot_driver_kv_dtype(poot_runtime_driver(r->rt))));
  char fb[64];
  printf("device       %s: %s (matmul precision %s, forms %s)\n", caps->backend, caps->name,
         poot_matmul_precision_name(f->mp), poot_compile_forms_name(f->forms, fb, sizeof fb));
  printf("load         %.1f ms (weights %.2f MB)\n", r->load_s * 1e3,
         (double)s1->weight_bytes * 1e-6);
  printf("compile+capture %.1f ms (2 entries, %llu kernels)\n", r->capture_s * 1e3,
         (unsigned long long)s1->kernels);
  if (f->np > 1)
    printf("prefill      %lld tokens in %.2f ms: %.1f tok/s\n", f->np, r->prefill_ms,
           r->prefill_tps);
  if (f->ctx_n)
    printf("decode       %lld steps after %lld tokens of context: %.1f tok/s\n", f->nd, f->ctx_n,
           g->dec_tps);
  else
    printf("decode       %lld steps: %.1f tok/s\n", f->nd, g->dec_tps);
  printf("per step     host %.1f µs", g->host_us);
  if (s1->device_timed)
    printf(", device %.1f µs (host overhead %.1f µs)", g->dev_us, g->host_us - g->dev_us);
  else
    printf(" (the device cannot time)");
  printf(", %.0f dispatches, %llu submission(s)\n", g->disp,
         (unsigned long long)s1->stages_per_step);
  if (g->encode_us > 0)
    printf(
        "encode       %.1f µs/step of the host's: the dispatch list re-encoded into new command "
        "buffers every step (not a replay)\n",
        g->encode_us);
  if (f->eager_n > 0)
    printf(
        "replay/eager replay %.1f µs/step, eager %.1f µs/step (eager/replay %.2f×); ids "
        "%s\n",
        r->replay_us, r->eager_us, r->replay_us > 0 ? r->eager_us / r->replay_us : 0.0,
        r->same_ids ? "equal" : "DIFFER");
  print_text_bandwidth(r, g);
  if (f->sample) {
    const bench_sample *b = &r->sample;
    double g0 = b->greedy_us > 0 ? b->greedy_us : 1.0;
    printf(
        "sampling     greedy %.1f µs/step; sampled (k 40, p 0.95, min-p 0.05, T 0.8, "
        "penalties) %.1f µs (%+.1f%%); + JSON grammar %.1f µs (%+.1f%%), mask %.1f µs/step "
        "on its thread (%.1f µs of it waited for while the model ran)\n",
        b->greedy_us, b->sample_us, 100.0 * (b->sample_us / g0 - 1.0), b->grammar_us,
        100.0 * (b->grammar_us / g0 - 1.0), b->mask_us, b->mask_wait_us);
  }
  if (r->prof_dec) print_profiles(r, false);
}

/* --batch B: the batched runner's decode throughput (support_bench_batch.c). */
static int bench_batch_main(const bench_flags *f) {
  bench_run r;
  memset(&r, 0, sizeof r);
  r.f = f;
  poot_runtime_options ro = poot_runtime_options_default();
  ro.model_path = f->model;
  ro.tokenizer_path = f->tokenizer;
  ro.skip_tokenizer = f->tokenizer == NULL;
  ro.device = f->device;
  ro.matmul_precision = f->mp;
  ro.forms = f->forms;
  bench_batch bb;
  poot_status st = poot_runtime_open(&ro, &r.rt);
  if (!st) {
    r.config = poot_model_get_config(poot_runtime_model(r.rt));
    st = size_run(&r);
  }
  if (!st) st = poot_runtime_open_device(r.rt);
  if (!st) {
    long long np = f->np > 0 ? f->np : 1;
    st = poot_bench_batch(poot_runtime_executor(r.rt), poot_runtime_model(r.rt), (int32_t)f->batch,
                          r.prompt, np, f->nd, f->kv, f->sample, &bb);
  }
  if (!st) {
    const poot_device_caps *caps = poot_runtime_device_caps(r.rt);
    if (f->json) {
      printf(
          "{\"device\":\"%s\",\"backend\":\"%s\",\"batch\":%d,\"decode_batch\":%d,"
          "\"n_prompt\":%lld,\"steps\":%lld,\"tok_s\":%.3f,\"ms_per_step\":%.4f,"
          "\"device_ms_per_step\":%.4f,\"capture_s\":%.3f,\"prefill_s\":%.3f,"
          "\"kv_type\":\"%s\",\"kv_bytes\":%llu,\"num_blocks\":%d,\"block_size\":%d,"
          "\"sampled\":%s,\"sample_host_us_per_step\":%.2f}\n",
          caps->name, caps->backend, bb.batch, bb.decode_batch, bb.n_prompt, bb.steps, bb.tok_s,
          bb.step_ms, bb.device_ms, bb.capture_s, bb.prefill_s, poot_dtype_name(bb.kv_dtype),
          (unsigned long long)bb.kv_bytes, bb.num_blocks, bb.block_size,
          bb.sampled ? "true" : "false", bb.sample_host_us);
    } else {
      printf("device: %s (%s)\n", caps->name, caps->backend);
      printf(
          "batch %d (decode entry %d), prompt %lld ids each, K/V %s paged: %d blocks of %d "
          "(%.1f MiB)\n",
          bb.batch, bb.decode_batch, bb.n_prompt, poot_dtype_name(bb.kv_dtype), bb.num_blocks,
          bb.block_size, (double)bb.kv_bytes / (1024.0 * 1024.0));
      printf("compile + capture %.2f s, prompts %.3f s\n", bb.capture_s, bb.prefill_s);
      printf("decode: %.2f tok/s (%lld steps of %d sequences, %.3f ms per step", bb.tok_s, bb.steps,
             bb.batch, bb.step_ms);
      if (bb.device_ms > 0) printf(", device %.3f ms", bb.device_ms);
      printf(")\n");
      if (bb.sampled)
        printf(
            "sampled (llama.cpp's defaults, penalties over the whole history): host %.1f µs "
            "per step for the sampled rows\n",
            bb.sample_host_us);
    }
  }
  int rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  poot_free(r.ids_replay);
  poot_free(r.ids_eager);
  poot_free(r.prompt);
  poot_runtime_destroy(r.rt);
  return rc;
}

static int bench_main(int argc, char **argv) {
  bench_flags f;
  int rc = parse_flags(argc, argv, &f);
  if (rc >= 0) return rc;
  if (f.batch > 0) return bench_batch_main(&f);
  bench_run r;
  memset(&r, 0, sizeof r);
  r.f = &f;
  poot_status st = start(&r);
  if (!st) st = measure_prefill(&r);
  if (!st) st = measure_decode(&r);
  if (!st) st = measure_eager(&r);
  if (!st) st = measure_profile(&r);
  if (!st && f.sample)
    st = poot_bench_sample(poot_runtime_driver(r.rt), r.prompt, 1, f.nd, &r.sample);
  if (!st && f.sample && f.prof_n > 0) {
    r.prof_smp = poot_calloc(1, sizeof *r.prof_smp);
    r.prof_gra = poot_calloc(1, sizeof *r.prof_gra);
    if (!r.prof_smp || !r.prof_gra)
      st = poot_status_make(POOT_OUT_OF_MEMORY, "bench: profile");
    else {
      prof_init(r.prof_smp, poot_runtime_driver(r.rt), r.cap, 1);
      prof_init(r.prof_gra, poot_runtime_driver(r.rt), r.cap, 1);
      st = poot_bench_sample_profile(poot_runtime_driver(r.rt), r.prompt, 1, f.prof_n, prof_add,
                                     r.prof_smp, r.prof_gra);
    }
  }
  if (!st) st = measure_bandwidth(&r);
  if (!st) {
    bench_figures g = figures(&r);
    if (f.json)
      print_json_report(&r, &g);
    else
      print_text_report(&r, &g);
  }
  rc = st ? poot_tool_fail(CMD, st) : POOT_EXIT_OK;
  poot_free(r.prof_dec);
  poot_free(r.prof_pre);
  poot_free(r.prof_smp);
  poot_free(r.prof_gra);
  poot_free(r.ids_replay);
  poot_free(r.ids_eager);
  poot_free(r.prompt);
  poot_runtime_destroy(r.rt);
  return rc;
}

const poot_tool_command poot_tool_cmd_bench = {
    "bench", "measure generation on a device (tok/s, µs and dispatches per step)", bench_main};
