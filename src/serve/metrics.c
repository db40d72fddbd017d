/* The server's metrics and their Prometheus text exposition (docs/serve.md
 * "Metrics"). Counters and histograms under one mutex; the queue depth and
 * running sequences are atomics the engine sets. */
#include <stdio.h>
#include <string.h>

#include "serve_impl.h"

/* Bucket bounds in seconds, shared by the three histograms: from a 5 ms
 * inter-token gap to a minutes-long request. */
static const double bounds[POOT_HIST_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                 1,     2.5,  5,     10,   30,  60,   300};

static const char *const endpoint_names[POOT_ENDPOINT_COUNT] = {
    "chat_completions", "completions", "models", "health", "metrics", "embeddings", "rerank",
    "page", "other"};
static const char *const outcome_names[POOT_OUTCOME_COUNT] = {"ok", "cancelled", "client_error",
                                                              "rejected", "error"};

void poot__serve_metrics_init(poot__serve_metrics *m) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->mu, NULL);
  atomic_init(&m->queue_depth, 0);
  atomic_init(&m->running, 0);
  atomic_init(&m->kv_blocks_used, 0);
  atomic_init(&m->kv_blocks_free, 0);
  atomic_init(&m->prefix_tokens_reused, 0);
}

void poot__serve_metrics_deinit(poot__serve_metrics *m) { pthread_mutex_destroy(&m->mu); }

void poot__serve_metrics_request(poot__serve_metrics *m, poot__serve_endpoint e,
                                 poot__serve_outcome o) {
  pthread_mutex_lock(&m->mu);
  m->requests[e][o]++;
  pthread_mutex_unlock(&m->mu);
}

void poot__serve_metrics_tokens(poot__serve_metrics *m, uint64_t prompt, uint64_t generated) {
  pthread_mutex_lock(&m->mu);
  m->prompt_tokens += prompt;
  m->generation_tokens += generated;
  pthread_mutex_unlock(&m->mu);
}

void poot__serve_metrics_observe(poot__serve_metrics *m, poot__serve_hist *h, double seconds) {
  pthread_mutex_lock(&m->mu);
  size_t b = 0;
  while (b < POOT_HIST_BUCKETS && seconds > bounds[b]) b++;
  h->counts[b]++;
  h->sum += seconds;
  h->count++;
  pthread_mutex_unlock(&m->mu);
}

void poot__serve_metrics_recovery(poot__serve_metrics *m, bool rebuild, bool failed) {
  pthread_mutex_lock(&m->mu);
  if (failed)
    m->faults_failed++;
  else if (rebuild)
    m->recoveries_rebuild++;
  else
    m->recoveries_reset++;
  pthread_mutex_unlock(&m->mu);
}

static void write_hist(poot_strbuf *sb, const char *name, const char *help,
                       const poot__serve_hist *h) {
  poot_strbuf_printf(sb, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
  uint64_t cum = 0;
  for (size_t b = 0; b < POOT_HIST_BUCKETS; b++) {
    cum += h->counts[b];
    poot_strbuf_printf(sb, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[b], (unsigned long long)cum);
  }
  cum += h->counts[POOT_HIST_BUCKETS];
  poot_strbuf_printf(sb, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
                     (unsigned long long)cum, name, h->sum, name, (unsigned long long)h->count);
}

static void write_counter(poot_strbuf *sb, const char *name, const char *help, uint64_t v) {
  poot_strbuf_printf(sb, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
                     (unsigned long long)v);
}

static void write_gauge(poot_strbuf *sb, const char *name, const char *help, double v) {
  poot_strbuf_printf(sb, "# HELP %s %s\n# TYPE %s gauge\n%s %g\n", name, help, name, name, v);
}

void poot__serve_metrics_write(poot__serve_metrics *m, poot_strbuf *sb) {
  pthread_mutex_lock(&m->mu);
  poot_strbuf_puts(sb, "# HELP poot_requests_total HTTP requests by endpoint and outcome.\n"
                       "# TYPE poot_requests_total counter\n");
  for (size_t e = 0; e < POOT_ENDPOINT_COUNT; e++)
    for (size_t o = 0; o < POOT_OUTCOME_COUNT; o++)
      poot_strbuf_printf(sb, "poot_requests_total{endpoint=\"%s\",outcome=\"%s\"} %llu\n",
                         endpoint_names[e], outcome_names[o],
                         (unsigned long long)m->requests[e][o]);
  write_counter(sb, "poot_prompt_tokens_total", "Prompt tokens of the requests run.",
                m->prompt_tokens);
  write_counter(sb, "poot_generation_tokens_total", "Tokens generated.", m->generation_tokens);
  poot_strbuf_puts(sb, "# HELP poot_device_recoveries_total Device faults recovered, by how "
                       "(reset: the driver reset; rebuild: a new device context).\n"
                       "# TYPE poot_device_recoveries_total counter\n");
  poot_strbuf_printf(sb, "poot_device_recoveries_total{how=\"reset\"} %llu\n",
                     (unsigned long long)m->recoveries_reset);
  poot_strbuf_printf(sb, "poot_device_recoveries_total{how=\"rebuild\"} %llu\n",
                     (unsigned long long)m->recoveries_rebuild);
  write_counter(sb, "poot_device_fault_failures_total",
                "Requests failed because a device fault repeated.", m->faults_failed);
  write_gauge(sb, "poot_queue_depth", "Requests waiting for the engine.",
              (double)atomic_load(&m->queue_depth));
  write_gauge(sb, "poot_running_sequences",
              "Sequences running on the device (at most --max-seqs).",
              (double)atomic_load(&m->running));
  /* The batched engine's KV pool; 0 with the single engine, whose driver
   * keeps one sequence's contiguous cache. */
  double used = (double)atomic_load(&m->kv_blocks_used), free_ = (double)atomic_load(&m->kv_blocks_free);
  write_gauge(sb, "poot_kv_blocks_used", "KV pool blocks held by sequences (--max-seqs > 1).", used);
  write_gauge(sb, "poot_kv_blocks_free", "KV pool blocks held by none (--max-seqs > 1).", free_);
  write_gauge(sb, "poot_kv_cache_usage_ratio", "KV pool in use (0 with --max-seqs 1).",
              used + free_ > 0 ? used / (used + free_) : 0);
  write_counter(sb, "poot_prefix_cache_hits_total",
                "Prompt tokens matched in the KV pool instead of computed (--max-seqs > 1).",
                (uint64_t)atomic_load(&m->prefix_tokens_reused));
  write_hist(sb, "poot_time_to_first_token_seconds",
             "From the request queued to its first generated token.", &m->ttft);
  write_hist(sb, "poot_inter_token_latency_seconds", "Between two generated tokens of a request.",
             &m->itl);
  write_hist(sb, "poot_request_latency_seconds", "From the request queued to its end.",
             &m->latency);
  pthread_mutex_unlock(&m->mu);
}
