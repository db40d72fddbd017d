/* llama2.c checkpoints (legacy format) and tokenizer files. */
#include <stdio.h>
#include <string.h>

#include "poot/llm/llama2c.h"

#define HEADER_BYTES 28

struct poot_llama2c {
  poot_file_map map;
  const uint8_t *data;
  size_t size;
  char *name;
  poot_llama2c_config config;
  poot_arena arena;
  poot_vec tensors; /* poot_llama2c_tensor */
  poot_map index;
};

static const char *const header_fields[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                             "n_kv_heads", "vocab_size", "seq_len"};

/* Checks the header and computes the expected file size. */
static poot_status check_header(const uint8_t *data, size_t size, const char *name,
                                poot_llama2c_config *c, uint64_t *out_expected) {
  *out_expected = 0;
  memset(c, 0, sizeof *c);
  if (size < HEADER_BYTES)
    return poot_status_make(POOT_FORMAT,
                            "llama2.c '%s': at byte offset %zu: file truncated reading the "
                            "header field '%s'",
                            name, size - size % 4, header_fields[size / 4]);
  /* Limits that keep every size product below 2^63. */
  static const int32_t limits[7] = {1 << 20, 1 << 20, 1 << 12, 1 << 16, 1 << 16, 1 << 24, 1 << 24};
  int32_t h[7];
  memcpy(h, data, sizeof h);
  for (int i = 0; i < 7; i++) {
    int32_t v = i == 5 && h[i] < 0 && h[i] != INT32_MIN ? -h[i] : h[i];
    if (v <= 0 || v > limits[i])
      return poot_status_make(POOT_FORMAT,
                              "llama2.c '%s': at byte offset %d: header field '%s' is %d, not a "
                              "size",
                              name, i * 4, header_fields[i], h[i]);
  }
  c->dim = h[0];
  c->hidden_dim = h[1];
  c->n_layers = h[2];
  c->n_heads = h[3];
  c->n_kv_heads = h[4];
  c->shared_classifier = h[5] > 0;
  c->vocab_size = h[5] > 0 ? h[5] : -h[5];
  c->seq_len = h[6];
  if (c->dim % c->n_heads != 0 || c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0 ||
      (c->dim / c->n_heads) % 2 != 0)
    return poot_status_make(POOT_FORMAT,
                            "llama2.c '%s': at byte offset 12: n_heads %d and n_kv_heads %d do "
                            "not divide dim %d into even head sizes",
                            name, c->n_heads, c->n_kv_heads, c->dim);
  uint64_t dim = (uint64_t)c->dim, hid = (uint64_t)c->hidden_dim, L = (uint64_t)c->n_layers;
  uint64_t hs = dim / (uint64_t)c->n_heads, kv = hs * (uint64_t)c->n_kv_heads;
  uint64_t vocab = (uint64_t)c->vocab_size, seq = (uint64_t)c->seq_len;
  /* The limits above keep every product and the sum below 2^63. */
  uint64_t floats = vocab * dim + L * dim + L * dim * dim + 2 * L * kv * dim + L * dim * dim +
                    L * dim + 3 * L * hid * dim + dim + seq * hs;
  if (!c->shared_classifier) floats += vocab * dim;
  uint64_t expected = HEADER_BYTES + floats * 4;
  *out_expected = expected;
  return NULL;
}

bool poot_llama2c_probe(const void *data, size_t size) {
  poot_llama2c_config c;
  uint64_t expected = 0;
  poot_status s = check_header(data, size, "", &c, &expected);
  if (s) {
    poot_status_free(s);
    return false;
  }
  return expected == size;
}

static poot_status add(poot_llama2c *m, const char *name, uint32_t rank, uint64_t d0, uint64_t d1,
                       uint64_t *offset_floats) {
  poot_llama2c_tensor t = {.rank = rank};
  t.name = poot_arena_strdup(&m->arena, name);
  if (!t.name) return poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c: out of memory");
  t.shape[0] = d0;
  t.shape[1] = rank == 2 ? d1 : 1;
  t.size = d0 * t.shape[1] * 4;
  t.data = (const float *)(const void *)(m->data + HEADER_BYTES + *offset_floats * 4);
  if (rank == 1) t.shape[1] = 0;
  *offset_floats += t.size / 4;
  POOT_TRY(poot_map_put_str(&m->index, t.name, m->tensors.len));
  return poot_vec_push(&m->tensors, &t);
}

/* Per-layer views of a [L, d0, d1] array. */
static poot_status add_layers(poot_llama2c *m, const char *fmt, uint32_t rank, uint64_t d0,
                              uint64_t d1, uint64_t *offset_floats) {
  for (int32_t l = 0; l < m->config.n_layers; l++) {
    char name[96];
    snprintf(name, sizeof name, fmt, (int)l);
    POOT_TRY(add(m, name, rank, d0, d1, offset_floats));
  }
  return NULL;
}

static poot_status build(poot_llama2c *m) {
  uint64_t expected = 0;
  POOT_TRY(check_header(m->data, m->size, m->name, &m->config, &expected));
  if (expected != m->size)
    return poot_status_make(POOT_FORMAT,
                            "llama2.c '%s': the header (dim %d, hidden %d, %d layers, %d heads, "
                            "%d kv heads, vocab %d%s, seq %d) needs %llu bytes but the file has "
                            "%zu",
                            m->name, m->config.dim, m->config.hidden_dim, m->config.n_layers,
                            m->config.n_heads, m->config.n_kv_heads, m->config.vocab_size,
                            m->config.shared_classifier ? " shared" : " separate",
                            m->config.seq_len, (unsigned long long)expected, m->size);
  const poot_llama2c_config *c = &m->config;
  uint64_t dim = (uint64_t)c->dim, hid = (uint64_t)c->hidden_dim;
  uint64_t hs = dim / (uint64_t)c->n_heads, kv = hs * (uint64_t)c->n_kv_heads;
  uint64_t off = 0;
  POOT_TRY(add(m, "tok_embeddings.weight", 2, (uint64_t)c->vocab_size, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.attention_norm.weight", 1, dim, 0, &off));
  POOT_TRY(add_layers(m, "layers.%d.attention.wq.weight", 2, dim, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.attention.wk.weight", 2, kv, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.attention.wv.weight", 2, kv, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.attention.wo.weight", 2, dim, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.ffn_norm.weight", 1, dim, 0, &off));
  POOT_TRY(add_layers(m, "layers.%d.feed_forward.w1.weight", 2, hid, dim, &off));
  POOT_TRY(add_layers(m, "layers.%d.feed_forward.w2.weight", 2, dim, hid, &off));
  POOT_TRY(add_layers(m, "layers.%d.feed_forward.w3.weight", 2, hid, dim, &off));
  POOT_TRY(add(m, "norm.weight", 1, dim, 0, &off));
  off += (uint64_t)c->seq_len * hs; /* freq_cis_real and freq_cis_imag */
  if (!c->shared_classifier)
    POOT_TRY(add(m, "output.weight", 2, (uint64_t)c->vocab_size, dim, &off));
  return NULL;
}

static poot_status create(const char *name, poot_llama2c **out) {
  poot_llama2c *m = poot_calloc(1, sizeof *m);
  if (!m) return poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c: out of memory");
  m->name = poot_strdup(name ? name : "<memory>");
  poot_arena_init(&m->arena, 0);
  poot_vec_init(&m->tensors, sizeof(poot_llama2c_tensor));
  poot_map_init(&m->index);
  *out = m;
  if (!m->name) return poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c: out of memory");
  return NULL;
}

void poot_llama2c_destroy(poot_llama2c *m) {
  if (!m) return;
  poot_file_map_close(&m->map);
  poot_free(m->name);
  poot_arena_deinit(&m->arena);
  poot_vec_deinit(&m->tensors);
  poot_map_deinit(&m->index);
  poot_free(m);
}

poot_status poot_llama2c_open_memory(const void *data, size_t size, const char *name,
                                     poot_llama2c **out_model) {
  *out_model = NULL;
  poot_llama2c *m = NULL;
  poot_status s = create(name, &m);
  if (!s) {
    m->data = data;
    m->size = data ? size : 0;
    s = build(m);
  }
  if (s) {
    poot_llama2c_destroy(m);
    return s;
  }
  *out_model = m;
  return NULL;
}

poot_status poot_llama2c_open(const char *path, poot_llama2c **out_model) {
  *out_model = NULL;
  poot_llama2c *m = NULL;
  poot_status s = create(path, &m);
  if (!s) s = poot_file_map_open(path, &m->map);
  if (!s) {
    m->data = m->map.data;
    m->size = m->map.size;
    s = build(m);
  }
  if (s) {
    poot_llama2c_destroy(m);
    return s;
  }
  *out_model = m;
  return NULL;
}

const poot_llama2c_config *poot_llama2c_config_of(const poot_llama2c *m) {
  return &m->config;
}
size_t poot_llama2c_tensor_count(const poot_llama2c *m) {
  return m->tensors.len;
}
const poot_llama2c_tensor *poot_llama2c_tensor_at(const poot_llama2c *m, size_t i) {
  return i < m->tensors.len ? poot_vec_at(&m->tensors, i) : NULL;
}
const poot_llama2c_tensor *poot_llama2c_find(const poot_llama2c *m, const char *name) {
  uint64_t i = 0;
  if (!name || !poot_map_get_str(&m->index, name, &i)) return NULL;
  return poot_vec_at(&m->tensors, (size_t)i);
}

/* ------------------------------------------------------------ tokenizer */

poot_status poot_llama2c_vocab_parse(const void *data, size_t size, int32_t n_tokens,
                                     const char *name, poot_llama2c_vocab **out_vocab) {
  *out_vocab = NULL;
  if (!name) name = "<memory>";
  if (n_tokens <= 0)
    return poot_status_make(POOT_INVALID_ARGUMENT, "llama2.c tokenizer '%s': %d tokens asked", name,
                            n_tokens);
  const uint8_t *p = data;
  if (!p) size = 0;
  /* Each token takes at least 8 bytes: a bound before allocating. */
  if ((uint64_t)n_tokens > size / 8)
    return poot_status_make(POOT_FORMAT, "llama2.c tokenizer '%s': %zu bytes cannot hold %d tokens",
                            name, size, n_tokens);
  poot_llama2c_vocab *v = poot_calloc(1, sizeof *v);
  if (!v) return poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c tokenizer: out of memory");
  poot_arena_init(&v->arena, 0);
  poot_status s = NULL;
  const char **tokens = POOT_ARENA_NEW_ARRAY(&v->arena, const char *, n_tokens);
  uint32_t *lens = POOT_ARENA_NEW_ARRAY(&v->arena, uint32_t, n_tokens);
  float *scores = POOT_ARENA_NEW_ARRAY(&v->arena, float, n_tokens);
  if (!tokens || !lens || !scores) {
    s = poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c tokenizer: out of memory");
    goto fail;
  }
  if (size < 4) {
    s = poot_status_make(POOT_FORMAT,
                         "llama2.c tokenizer '%s': at byte offset 0: file truncated reading "
                         "max_token_length",
                         name);
    goto fail;
  }
  memcpy(&v->max_token_length, p, 4);
  size_t pos = 4;
  for (int32_t i = 0; i < n_tokens; i++) {
    if (size - pos < 8) {
      s = poot_status_make(POOT_FORMAT,
                           "llama2.c tokenizer '%s': at byte offset %zu: file truncated reading "
                           "the score and length of token %d",
                           name, pos, (int)i);
      goto fail;
    }
    int32_t len = 0;
    memcpy(&scores[i], p + pos, 4);
    memcpy(&len, p + pos + 4, 4);
    if (len < 0 || (size_t)len > size - pos - 8) {
      s = poot_status_make(POOT_FORMAT,
                           "llama2.c tokenizer '%s': at byte offset %zu: token %d has length %d "
                           "but %zu bytes remain",
                           name, pos + 4, (int)i, (int)len, size - pos - 8);
      goto fail;
    }
    pos += 8;
    char *t = poot_arena_alloc(&v->arena, (size_t)len + 1, 1);
    if (!t) {
      s = poot_status_make(POOT_OUT_OF_MEMORY, "llama2.c tokenizer: out of memory");
      goto fail;
    }
    memcpy(t, p + pos, (size_t)len);
    tokens[i] = t;
    lens[i] = (uint32_t)len;
    pos += (size_t)len;
  }
  if (pos != size) {
    s = poot_status_make(POOT_FORMAT,
                         "llama2.c tokenizer '%s': at byte offset %zu: %zu bytes follow the last "
                         "of %d tokens (is the vocabulary size right?)",
                         name, pos, size - pos, (int)n_tokens);
    goto fail;
  }
  v->n_tokens = n_tokens;
  v->tokens = tokens;
  v->token_lens = lens;
  v->scores = scores;
  *out_vocab = v;
  return NULL;
fail:
  poot_llama2c_vocab_destroy(v);
  return s;
}

poot_status poot_llama2c_vocab_load(const char *path, int32_t n_tokens,
                                    poot_llama2c_vocab **out_vocab) {
  *out_vocab = NULL;
  poot_file_map map;
  POOT_TRY(poot_file_map_open(path, &map));
  poot_status s = poot_llama2c_vocab_parse(map.data, map.size, n_tokens, path, out_vocab);
  poot_file_map_close(&map);
  return s;
}

void poot_llama2c_vocab_destroy(poot_llama2c_vocab *v) {
  if (!v) return;
  poot_arena_deinit(&v->arena);
  poot_free(v);
}
