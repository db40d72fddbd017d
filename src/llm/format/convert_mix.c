/* `poot convert --type`: the names it takes, llama.cpp's file types, and the
 * per-tensor rule of the k-quant mixtures (Q4_K_M, Q5_K_M). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert_impl.h"
#include "poot/llm/convert.h"

int poot_convert_mixture_file_type(poot_convert_mixture mixture) {
  switch (mixture) {
    case POOT_CONVERT_MIXTURE_Q4_K_M:
      return 15;
    case POOT_CONVERT_MIXTURE_Q5_K_M:
      return 17;
    default:
      return -1;
  }
}

poot_status poot_convert_type_from_name(const char *name, poot_gguf_type *out_type,
                                        poot_convert_mixture *out_mixture) {
  *out_type = POOT_GGUF_TYPE_F32;
  *out_mixture = POOT_CONVERT_MIXTURE_NONE;
  if (!name) return poot_status_make(POOT_INVALID_ARGUMENT, "convert: no type given");
  if (strcasecmp(name, "q4_k_m") == 0) {
    *out_type = POOT_GGUF_TYPE_Q4_K;
    *out_mixture = POOT_CONVERT_MIXTURE_Q4_K_M;
    return NULL;
  }
  if (strcasecmp(name, "q5_k_m") == 0) {
    *out_type = POOT_GGUF_TYPE_Q5_K;
    *out_mixture = POOT_CONVERT_MIXTURE_Q5_K_M;
    return NULL;
  }
  poot_gguf_type t;
  poot_status s = poot_gguf_type_from_name(name, &t);
  if (!s && poot_convert_file_type(t) >= 0) {
    *out_type = t;
    return NULL;
  }
  poot_status_free(s);
  return poot_status_make(POOT_INVALID_ARGUMENT, "convert: type '%s' is not written (%s are)", name,
                          POOT__CONVERT_TYPE_NAMES);
}

poot_gguf_type poot__convert_k_fallback(poot_gguf_type type) {
  switch (type) {
    case POOT_GGUF_TYPE_Q4_K:
      return POOT_GGUF_TYPE_Q5_0;
    case POOT_GGUF_TYPE_Q5_K:
      return POOT_GGUF_TYPE_Q5_1;
    case POOT_GGUF_TYPE_Q6_K:
      return POOT_GGUF_TYPE_Q8_0;
    default:
      return POOT_GGUF_TYPE_F16;
  }
}

/* The layer of "blk.N.…", -1 for a global tensor. */
static long layer_of(const char *name) {
  if (strncmp(name, "blk.", 4) != 0) return -1;
  char *end = NULL;
  long l = strtol(name + 4, &end, 10);
  return end != name + 4 && *end == '.' ? l : -1;
}

/* llama.cpp's use_more_bits: the first and last eighth of the layers and
 * every third layer in between. */
static bool use_more_bits(long i, long n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

poot_gguf_type poot__convert_mix_type(poot_convert_mixture mixture, const char *gguf_name,
                                      int64_t n_layers, bool has_output) {
  const bool five = mixture == POOT_CONVERT_MIXTURE_Q5_K_M;
  const poot_gguf_type base = five ? POOT_GGUF_TYPE_Q5_K : POOT_GGUF_TYPE_Q4_K;
  if (strcmp(gguf_name, "output.weight") == 0 ||
      (!has_output && strcmp(gguf_name, "token_embd.weight") == 0))
    return POOT_GGUF_TYPE_Q6_K;
  const long layer = layer_of(gguf_name);
  if (layer < 0) return base;
  if (has_suffix(gguf_name, ".attn_qkv.weight"))
    return five ? POOT_GGUF_TYPE_Q6_K : POOT_GGUF_TYPE_Q5_K;
  if ((has_suffix(gguf_name, ".attn_v.weight") || has_suffix(gguf_name, ".ffn_down.weight")) &&
      use_more_bits(layer, (long)n_layers))
    return POOT_GGUF_TYPE_Q6_K;
  return base;
}
