/* poot embed — sentence embeddings of an encoder model (docs/encoders.md):
 *   poot embed -m MODEL [--device D] [-o FILE.npy] [--pooling P]
 *              [--normalize | --no-normalize] [--batch N] [--truncate] [--bench]
 * Lines on stdin, one vector per line out (JSON lines, or one f32 .npy). */
#include <stdio.h>
#include <string.h>

#include "npy.h"
#include "poot/llm/model.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot embed -m MODEL [--device D] [-o FILE.npy] [--pooling mean|cls|last]\n"
    "                  [--normalize|--no-normalize] [--batch N] [--truncate] [--bench]\n"
    "\n"
    "Reads texts on standard input, one a line (an empty line is an error), and\n"
    "writes one embedding per line: a JSON array of floats per line on stdout, or\n"
    "with -o one f32 .npy array [lines, dim]. MODEL is an encoder (BERT and the\n"
    "MiniLM / BGE / E5 models built on it): a sentence-transformers folder, whose\n"
    "modules.json says the pooling and normalization, or a GGUF 'bert' file.\n"
    "Texts are batched, up to --batch a step, padded to the longest (padding is\n"
    "masked and never pooled). With --bench it reads nothing and measures\n"
    "throughput (128-token sentences at --batch, default 64) and one-sentence\n"
    "latency.\n"
    "\n";

typedef struct embed_flags {
  const char *model, *device, *out, *pooling;
  bool normalize, no_normalize, truncate, bench, json, quiet;
  long long batch;
} embed_flags;

/* Writes the rows as JSON lines. */
static poot_status write_json_lines(const float *v, size_t n, size_t width) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (size_t i = 0; i < n; i++) {
    poot_strbuf_putc(&sb, '[');
    for (size_t j = 0; j < width; j++)
      poot_strbuf_printf(&sb, j ? ",%.9g" : "%.9g", (double)v[i * width + j]);
    poot_strbuf_puts(&sb, "]\n");
    if (sb.len > (1u << 20) || i + 1 == n) {
      poot_status st = poot_strbuf_status(&sb);
      if (!st && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
        st = poot_status_make(POOT_IO, "writing standard output failed");
      if (st) {
        poot_strbuf_deinit(&sb);
        return st;
      }
      sb.len = 0;
    }
  }
  poot_strbuf_deinit(&sb);
  return NULL;
}

/* --bench: sentences/s at batch B with 128-token sentences, and the latency
 * of one sentence, each after a warm-up step (compile and capture). */
static poot_status bench(poot_runtime *rt, const embed_flags *f,
                         const poot_driver_embed_options *o) {
  poot_driver *d = poot_runtime_driver(rt);
  const poot_model_config *c = poot_model_get_config(poot_runtime_model(rt));
  const size_t B = (size_t)f->batch, T = c->context_length < 128 ? (size_t)c->context_length : 128;
  const size_t width = poot_driver_embed_width(d, o);
  poot_token *ids = poot_malloc(T * sizeof *ids);
  poot_driver_sequence *seqs = poot_malloc(B * sizeof *seqs);
  float *out = poot_malloc(B * width * sizeof *out);
  poot_status st = NULL;
  if (!ids || !seqs || !out) st = poot_status_make(POOT_OUT_OF_MEMORY, "bench inputs");
  const poot_tokenizer *tok = poot_model_get_tokenizer(poot_runtime_model(rt));
  poot_tokenizer_specials sp =
      tok ? poot_tokenizer_get_specials(tok) : (poot_tokenizer_specials){.bos = 101, .sep = 102};
  if (!st) {
    /* Ordinary word pieces of a BERT vocabulary, [CLS] and [SEP] around. */
    for (size_t t = 0; t < T; t++) ids[t] = (poot_token)(2000 + (t * 37) % 5000);
    if (c->vocab_size < 7000)
      for (size_t t = 0; t < T; t++) ids[t] = (poot_token)(t % (size_t)c->vocab_size);
    ids[0] = sp.bos != POOT_TOKEN_NONE ? sp.bos : 0;
    ids[T - 1] = sp.sep != POOT_TOKEN_NONE ? sp.sep : 0;
    for (size_t i = 0; i < B; i++) seqs[i] = (poot_driver_sequence){.ids = ids, .count = T};
  }
  poot_driver_embed_options bo = *o;
  bo.max_batch = B;
  double thr = 0, lat_ms = 0;
  int iters = 0, lat_iters = 0;
  if (!st) st = poot_driver_embed(d, seqs, B, &bo, out); /* warm-up: compile, capture */
  if (!st) st = poot_driver_embed(d, seqs, 1, &bo, out);
  if (!st) {
    uint64_t t0 = poot_time_ns(), t1 = t0;
    while (!st && (iters < 3 || t1 - t0 < 2000000000ull) && iters < 10000) {
      st = poot_driver_embed(d, seqs, B, &bo, out);
      iters++;
      t1 = poot_time_ns();
    }
    thr = (double)(B * (size_t)iters) / ((double)(t1 - t0) * 1e-9);
    t0 = t1 = poot_time_ns();
    while (!st && (lat_iters < 5 || t1 - t0 < 1000000000ull) && lat_iters < 10000) {
      st = poot_driver_embed(d, seqs, 1, &bo, out);
      lat_iters++;
      t1 = poot_time_ns();
    }
    lat_ms = (double)(t1 - t0) * 1e-6 / lat_iters;
  }
  if (!st) {
    const poot_device_caps *caps = poot_runtime_device_caps(rt);
    if (f->json)
      printf(
          "{\"mode\":\"embed\",\"device\":\"%s\",\"device_name\":\"%s\",\"batch\":%zu,"
          "\"tokens\":%zu,\"sentences_per_s\":%.2f,\"latency_ms\":%.4f,\"steps\":%d}\n",
          caps->backend, caps->name, B, T, thr, lat_ms, iters);
    else
      printf(
          "embed %s (%s): %zu-token sentences, batch %zu: %.1f sentences/s; one sentence: "
          "%.3f ms\n",
          caps->backend, caps->name, T, B, thr, lat_ms);
  }
  poot_free(ids);
  poot_free(seqs);
  poot_free(out);
  return st;
}

static int embed_main(int argc, char **argv) {
  const char *cmd = "embed";
  embed_flags f = {.device = "auto", .batch = 0};
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &f.model, "an encoder: a sentence-transformers folder or a GGUF\nbert file",
       0, 0},
      {POOT_FLAG_DEVICE, &f.device, NULL, 0, 0},
      {POOT_FLAG_OUT, &f.out, "write one f32 .npy [lines, dim] to FILE.npy", 0, 0},
      {POOT_FLAG_POOLING, &f.pooling, NULL, 0, 0},
      {POOT_FLAG_NORMALIZE, &f.normalize, NULL, 0, 0},
      {POOT_FLAG_NO_NORMALIZE, &f.no_normalize, NULL, 0, 0},
      {POOT_FLAG_SEQUENCES, &f.batch, "texts per step, a power of two (default 32;\n--bench: 64)",
       1, 4096},
      {POOT_FLAG_TRUNCATE, &f.truncate, NULL, 0, 0},
      {POOT_FLAG_BENCH, &f.bench, NULL, 0, 0},
      {POOT_FLAG_JSON, &f.json, "--bench: one JSON object", 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  if (!f.model) return poot_tool_usage_error(cmd, "-m MODEL is required");
  if (f.normalize && f.no_normalize)
    return poot_tool_usage_error(cmd, "--normalize and --no-normalize contradict each other");
  if (f.batch == 0) f.batch = f.bench ? 64 : 32;
  if (f.batch & (f.batch - 1))
    return poot_tool_usage_error(cmd, "--batch %lld is not a power of two", f.batch);
  poot_driver_embed_options o = poot_driver_embed_options_default();
  o.max_batch = (size_t)f.batch;
  o.normalize = f.normalize ? 1 : f.no_normalize ? -1 : 0;
  if (f.pooling) {
    poot_status ps = poot_model_pooling_from_name(f.pooling, &o.pooling);
    if (ps) {
      poot_status_free(ps);
      return poot_tool_usage_error(cmd, "--pooling '%s' is not one of mean, cls, last", f.pooling);
    }
  }
  char *text = NULL, **lines = NULL;
  size_t n = 0;
  poot_status st = NULL;
  if (!f.bench) st = poot_tool_read_lines(&text, &lines, &n);
  poot_runtime *rt = NULL;
  if (!st) st = poot_tool_open_encoder(f.model, f.device, &rt);
  if (!st && f.bench) st = bench(rt, &f, &o);
  poot_driver_sequence *seqs = NULL;
  float *out = NULL;
  if (!st && !f.bench) {
    poot_driver *d = poot_runtime_driver(rt);
    size_t width = poot_driver_embed_width(d, &o);
    st = poot_tool_sequences(poot_runtime_model(rt), NULL, lines, n, f.truncate, &seqs);
    if (!st) {
      out = poot_malloc((n ? n : 1) * width * sizeof *out);
      if (!out) st = poot_status_make(POOT_OUT_OF_MEMORY, "embeddings");
    }
    if (!st) st = poot_driver_embed(d, seqs, n, &o, out);
    if (!st && f.out) {
      poot_npy a = {.type = POOT_NPY_F32,
                    .rank = 2,
                    .shape = {(int64_t)n, (int64_t)width},
                    .data = out,
                    .bytes = n * width * sizeof *out};
      st = poot_npy_write(f.out, &a);
    } else if (!st) {
      st = write_json_lines(out, n, width);
    }
  }
  poot_tool_sequences_free(seqs, n);
  poot_free(out);
  poot_runtime_destroy(rt);
  poot_free(lines);
  poot_free(text);
  if (!st && fflush(stdout) != 0) st = poot_status_make(POOT_IO, "writing standard output failed");
  return st ? poot_tool_fail(cmd, st) : POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_embed = {"embed", "sentence embeddings of an encoder model",
                                               embed_main};
