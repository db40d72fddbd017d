/* model_open.c — libFuzzer targets for what a model file drives, end to end:
 * the files go to disk and through poot_model_open (the path `poot generate
 * -m` takes: format detection, the family config, the weight map, the
 * tokenizer, the chat template and stop ids), then a greedy prefill step
 * and one decode step on the oracle (poot_verify_greedy) over a KV capacity
 * of 3.
 *
 * fuzz_model_gguf: the input is one GGUF file.
 * fuzz_model_folder (POOT_FUZZ_MODEL_FOLDER): the input is a folder packed
 * in the container below, opened as a safetensors folder, or as a llama2.c
 * checkpoint with its tokenizer when the folder holds model.bin.
 *
 * The folder container: the magic "PFZ1", then records until the input
 * ends, each a 1-byte file number, a 4-byte little-endian length and that
 * many bytes of the file (a length past the end takes what is left). File
 * numbers, taken modulo the count: 0 config.json, 1 tokenizer.json,
 * 2 model.safetensors, 3 tokenizer_config.json, 4 generation_config.json,
 * 5 chat_template.jinja, 6 model.bin, 7 tokenizer.bin. A later record of a
 * file replaces an earlier one. tests/fuzz/gen_model_seeds.py writes it.
 *
 * What is checked: a rejection is a typed status (a known code other than
 * INTERNAL, with a message); an accepted model is consistent: a validated
 * config within the shape caps, ids the tokenizer produces inside its
 * vocabulary, one row of vocab logits per generated id, each id the argmax
 * of its row, and a prompt id past the embedding refused (a typed fault),
 * never evaluated. A shape over the caps is skipped before any
 * evaluation, so one input runs in milliseconds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "poot/llm/model.h"
#include "poot/llm/tokenizer.h"
#include "poot/llm/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Caps on what is evaluated (elements; the oracle runs naive loops). */
enum {
  CAP_VOCAB = 4096,
  CAP_HIDDEN = 256,
  CAP_FF = 1024,
  CAP_LAYERS = 4,
  CAP_HEADS = 16,
  CAP_HEAD_DIM = 128,
};

static const char *const k_files[] = {
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "tokenizer_config.json",
    "generation_config.json",
    "chat_template.jinja",
    "model.bin",
    "tokenizer.bin",
    "model.gguf",
};
enum { N_FOLDER_FILES = 8, FILE_GGUF = 8, FILE_L2C_MODEL = 6, FILE_L2C_TOK = 7 };

static char g_dir[512];
/* POOT_FUZZ_VERBOSE=1 prints each input's outcome (to check what seeds reach). */
static bool g_verbose;

static void path_of(int file, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s", g_dir, k_files[file]);
}

static void remove_all(void) {
  char p[640];
  for (size_t i = 0; i < sizeof k_files / sizeof k_files[0]; i++) {
    path_of((int)i, p, sizeof p);
    unlink(p);
  }
}

static void cleanup(void) {
  if (!g_dir[0]) return;
  remove_all();
  rmdir(g_dir);
}

static void setup_once(void) {
  if (g_dir[0]) return;
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/poot-fuzz-model-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    abort();
  }
  atexit(cleanup);
  g_verbose = getenv("POOT_FUZZ_VERBOSE") != NULL;
  poot_log_set_level(POOT_LOG_ERROR); /* warnings about odd metadata are expected */
}

static void write_file(int file, const uint8_t *p, size_t n) {
  char path[640];
  path_of(file, path, sizeof path);
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}

/* A rejection must be typed and explained; INTERNAL means a broken invariant. */
static void check_rejection(poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  const char *msg = poot_status_message(st);
  if (c == POOT_OK || c >= POOT_STATUS_CODE_COUNT || c == POOT_INTERNAL || !msg || !*msg) {
    fprintf(stderr, "untyped or internal rejection: %s: %s\n", poot_status_code_name(c),
            msg ? msg : "(null)");
    abort();
  }
  if (g_verbose) fprintf(stderr, "rejected: %s: %s\n", poot_status_code_name(c), msg);
  poot_status_free(st);
}

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static bool within_caps(const poot_model_config *c) {
  int64_t hd = c->head_dim > 0 ? c->head_dim : c->hidden_size / c->n_heads;
  return c->vocab_size <= CAP_VOCAB && c->hidden_size <= CAP_HIDDEN &&
         c->intermediate_size <= CAP_FF && c->n_layers <= CAP_LAYERS && c->n_heads <= CAP_HEADS &&
         c->n_kv_heads <= CAP_HEADS && hd <= CAP_HEAD_DIM;
}

/* Encodes a few texts; every id lies in the vocabulary and decodes (or the
 * refusal is typed). Returns the first id of the first text, or -1. */
static poot_token exercise_tokenizer(const poot_tokenizer *tok) {
  static const char *const texts[] = {"Hello world", "<s>a</s>  b\n", "caf\xc3\xa9 \xff"};
  int32_t n_vocab = poot_tokenizer_vocab_size(tok);
  CHECK(n_vocab >= 1);
  poot_token first = -1;
  for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
    poot_tokenizer_encode_options eo = {.add_special = true, .parse_special = t == 1};
    poot_token *ids = NULL;
    size_t n = 0;
    poot_status st = poot_tokenizer_encode(tok, texts[t], strlen(texts[t]), &eo, &ids, &n);
    if (st) {
      CHECK(ids == NULL && n == 0);
      check_rejection(st);
      continue;
    }
    for (size_t i = 0; i < n; i++) CHECK(ids[i] >= 0 && ids[i] < n_vocab);
    if (first < 0 && n) first = ids[0];
    poot_strbuf sb;
    poot_strbuf_init(&sb);
    st = poot_tokenizer_decode(tok, ids, n, NULL, &sb);
    if (st) check_rejection(st);
    poot_strbuf_deinit(&sb);
    poot_free(ids);
  }
  return first;
}

/* One greedy prefill step and one decode step; the result must agree with
 * itself. */
static void run_oracle(poot_model *m, poot_token prompt, bool paged) {
  const poot_model_config *c = poot_model_get_config(m);
  poot_verify_evaluator ev = poot_verify_oracle();
  poot_verify_greedy_options o = {.max_new_tokens = 2,
                                  .cap = 3,
                                  .paged = paged,
                                  .block_size = paged ? 1 : 0,
                                  .ignore_stop = true,
                                  .keep_logits = 2};
  poot_verify_greedy_result r;
  poot_status st = poot_verify_greedy(m, &ev, &prompt, 1, &o, &r);
  if (st) {
    CHECK(r.ids == NULL && r.n_ids == 0);
    check_rejection(st);
    return;
  }
  /* A token past the embedding must fault in the gather, not read past it. */
  CHECK(prompt >= 0 && prompt < c->vocab_size);
  CHECK(r.vocab == c->vocab_size);
  CHECK(r.n_ids == 2 && r.n_logits == 2 && r.logits && r.margins);
  for (size_t k = 0; k < r.n_ids; k++) {
    const float *row = r.logits + k * (size_t)r.vocab;
    int64_t best = 0;
    for (int64_t i = 1; i < r.vocab; i++)
      if (row[i] > row[best]) best = i;
    CHECK(r.ids[k] == (poot_token)best);
    CHECK(r.ids[k] >= 0 && r.ids[k] < r.vocab);
  }
  if (g_verbose)
    fprintf(stderr, "ran: %s vocab %lld, ids %d %d\n", c->architecture, (long long)r.vocab,
            (int)r.ids[0], (int)r.ids[1]);
  poot_verify_greedy_result_deinit(&r);
}

static void open_and_run(const char *path, const poot_model_open_options *opts, bool paged) {
  poot_model *m = NULL;
  poot_status st = poot_model_open(path, opts, &m);
  if (st) {
    CHECK(m == NULL);
    check_rejection(st);
    return;
  }
  const poot_model_config *c = poot_model_get_config(m);
  CHECK(poot_status_is_ok(poot_model_config_validate(c)));
  CHECK(c->vocab_size >= 1 && c->hidden_size >= 1 && c->n_layers >= 1 && c->n_heads >= 1);
  CHECK(poot_model_get_weight_map(m) && poot_model_get_store(m));
  CHECK(poot_model_get_bos_text(m) && poot_model_get_eos_text(m));
  size_t n_stops = 0;
  const poot_token *stops = poot_model_get_stop_ids(m, &n_stops);
  for (size_t i = 0; i < n_stops; i++) CHECK(stops[i] >= 0 && poot_model_is_stop(m, stops[i]));
  if (!within_caps(c)) {
    if (g_verbose) fprintf(stderr, "skipped: over the shape caps\n");
    poot_model_destroy(m);
    return;
  }
  poot_token prompt = 0;
  const poot_tokenizer *tok = poot_model_get_tokenizer(m);
  if (tok) {
    poot_token first = exercise_tokenizer(tok);
    poot_tokenizer_specials sp = poot_tokenizer_get_specials(tok);
    prompt = sp.bos != POOT_TOKEN_NONE ? sp.bos : first >= 0 ? first : 0;
    CHECK(prompt < poot_tokenizer_vocab_size(tok));
  }
  /* A prompt id past the embedding is the model's to refuse (a typed
   * fault from the gather's check), so it is run too. */
  run_oracle(m, prompt, paged);
  poot_model_destroy(m);
}

#ifdef POOT_FUZZ_MODEL_FOLDER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup_once();
  if (size < 4 || memcmp(data, "PFZ1", 4) != 0) return 0;
  remove_all();
  const uint8_t *at[N_FOLDER_FILES] = {0};
  size_t len[N_FOLDER_FILES] = {0};
  bool present[N_FOLDER_FILES] = {0};
  size_t off = 4;
  while (size - off >= 5) {
    int file = data[off] % N_FOLDER_FILES;
    uint32_t n = (uint32_t)data[off + 1] | (uint32_t)data[off + 2] << 8 |
                 (uint32_t)data[off + 3] << 16 | (uint32_t)data[off + 4] << 24;
    off += 5;
    if (n > size - off) n = (uint32_t)(size - off);
    at[file] = data + off;
    len[file] = n;
    present[file] = true;
    off += n;
  }
  for (int i = 0; i < N_FOLDER_FILES; i++)
    if (present[i]) write_file(i, at[i], len[i]);
  char path[640], tpath[640];
  poot_model_open_options o = {0};
  if (present[FILE_L2C_MODEL]) {
    path_of(FILE_L2C_MODEL, path, sizeof path);
    if (present[FILE_L2C_TOK]) {
      path_of(FILE_L2C_TOK, tpath, sizeof tpath);
      o.tokenizer_path = tpath;
    }
  } else {
    snprintf(path, sizeof path, "%s", g_dir);
  }
  open_and_run(path, &o, (size & 1) != 0);
  return 0;
}

#else

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup_once();
  write_file(FILE_GGUF, data, size);
  char path[640];
  path_of(FILE_GGUF, path, sizeof path);
  open_and_run(path, NULL, (size & 1) != 0);
  return 0;
}

#endif
