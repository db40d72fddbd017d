/* poot/llm/convert.h — model conversion to GGUF (`poot convert`).
 *
 * Inputs: a llama2.c checkpoint (with its tokenizer file), a Hugging Face
 * folder (safetensors weights, config.json, tokenizer.json and optionally
 * tokenizer_config.json, chat_template.jinja), or a GGUF file (re-typed:
 * every metadata value carried over in order, general.file_type and
 * general.name updated; without a type the output equals the input).
 * Output: a GGUF v3 file written the way llama.cpp's converters write it —
 * tensor names (token_embd.weight, blk.N.attn_q.weight, …), the llama-style
 * hyperparameters under `<arch>.…`, and the tokenizer and chat template in
 * `tokenizer.…` metadata. Hugging Face architectures: llama and mistral
 * (as "llama"), qwen2, qwen3, gemma, gemma2, gemma3_text (as "gemma3"), phi3.
 * Hugging Face llama Q and K projections are permuted back to GGUF's
 * interleaved rotary layout, Gemma norm weights are written as 1 + w, llama3
 * rope scaling becomes a `rope_freqs.weight` tensor and Phi-3 longrope
 * `rope_factors_long/short.weight`, all as llama.cpp's converter does
 * (docs/models.md lists the keys).
 *
 * Tensor types: 1-D tensors (norms, biases) stay f32. Every other tensor is
 * written as `type`, or as the mixture's rule picks (poot_convert_mixture).
 * A k-quant whose 256-element block does not divide the row length falls
 * back to the legacy format of llama.cpp's quantizer (q4_k → q5_0, q5_k →
 * q5_1, q6_k → q8_0); a type whose block still does not divide it falls back
 * to f16, as llama.cpp's converter does. Quantization is GGUF's reference
 * quantization for the legacy formats and poot's own for the k-quants
 * (poot/quant.h); packed GGUF sources are dequantized with GGUF's
 * dequantization first. Integer tensors and packed types poot cannot decode
 * are copied as they are. */
#ifndef POOT_LLM_CONVERT_H
#define POOT_LLM_CONVERT_H

#include <stdbool.h>
#include <stddef.h>

#include "poot/base.h"
#include "poot/llm/gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress after each tensor written (optional). */
typedef void (*poot_convert_progress)(void *ctx, size_t done, size_t total, const char *name,
                                      uint64_t bytes_done, uint64_t bytes_total);

/* A per-tensor mixture of types, as llama.cpp's quantizer makes its _M
 * files (docs/models.md states the rule). With n layers a layer i "uses
 * more bits" when i < n/8, i >= 7n/8 or (i - n/8) % 3 == 2:
 *   Q4_K_M: q4_k; q6_k for output.weight (token_embd.weight when the file
 *           has no output.weight), for attn_v and ffn_down of the layers
 *           that use more bits; q5_k for a fused attn_qkv.
 *   Q5_K_M: the same with q5_k, and q6_k for attn_qkv. */
typedef enum poot_convert_mixture {
  POOT_CONVERT_MIXTURE_NONE = 0, /* every tensor `type` */
  POOT_CONVERT_MIXTURE_Q4_K_M,
  POOT_CONVERT_MIXTURE_Q5_K_M,
} poot_convert_mixture;

typedef struct poot_convert_options {
  /* f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k.
   * `type_set` false picks the source's float type (lossless: f32 for
   * llama2.c, the safetensors dtype for Hugging Face models, f32 when the
   * source is mixed, each tensor's own type for GGUF). */
  poot_gguf_type type;
  bool type_set;
  /* A mixture instead of one type (`type` is then ignored). */
  poot_convert_mixture mixture;
  const char *tokenizer_path; /* llama2.c: the tokenizer file (required) */
  const char *name;           /* general.name; NULL: derived from the input */
  poot_convert_progress progress;
  void *progress_ctx;
} poot_convert_options;

/* Converts `input` to a GGUF file at `output`. INVALID_ARGUMENT for a type
 * convert does not write or a missing llama2.c tokenizer; UNSUPPORTED for an
 * architecture, tokenizer kind, rope scaling or tensor it cannot carry over
 * (naming it); FORMAT/NOT_FOUND/IO from the readers and the writer. The
 * output is written to a temporary name and renamed, so a failed conversion
 * leaves no partial file. */
POOT_MUST_USE poot_status poot_convert_to_gguf(const char *input, const char *output,
                                               const poot_convert_options *options);

/* llama.cpp's general.file_type for a tensor type (ALL_F32 = 0,
 * MOSTLY_F16 = 1, MOSTLY_Q8_0 = 7, MOSTLY_BF16 = 32, …; q4_k → MOSTLY_Q4_K_S
 * = 14, q5_k → MOSTLY_Q5_K_S = 16, q6_k → MOSTLY_Q6_K = 18); -1 for a type
 * convert does not write. */
int poot_convert_file_type(poot_gguf_type type);
/* The file type of a mixture: MOSTLY_Q4_K_M = 15, MOSTLY_Q5_K_M = 17; -1
 * for NONE. */
int poot_convert_mixture_file_type(poot_convert_mixture mixture);

/* Parses a --type name: a tensor type convert writes ("q8_0", "Q4_K",
 * case-insensitive; *out_mixture NONE) or a mixture ("q4_k_m", "q5_k_m";
 * *out_type its base type). INVALID_ARGUMENT naming every accepted name. */
POOT_MUST_USE poot_status poot_convert_type_from_name(const char *name, poot_gguf_type *out_type,
                                                      poot_convert_mixture *out_mixture);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_CONVERT_H */
