/* GGUF's tables: tensor types (block size, bytes per block) and value types. */
#include <ctype.h>
#include <string.h>

#include "poot/llm/gguf.h"

static const poot_gguf_type_info poot_gguf_types[POOT_GGUF_TYPE_COUNT_] = {
    [POOT_GGUF_TYPE_F32] = {"f32", 1, 4, true},
    [POOT_GGUF_TYPE_F16] = {"f16", 1, 2, true},
    [POOT_GGUF_TYPE_Q4_0] = {"q4_0", 32, 18, true},
    [POOT_GGUF_TYPE_Q4_1] = {"q4_1", 32, 20, true},
    [POOT_GGUF_TYPE_Q5_0] = {"q5_0", 32, 22, true},
    [POOT_GGUF_TYPE_Q5_1] = {"q5_1", 32, 24, true},
    [POOT_GGUF_TYPE_Q8_0] = {"q8_0", 32, 34, true},
    [POOT_GGUF_TYPE_Q8_1] = {"q8_1", 32, 40, false},
    [POOT_GGUF_TYPE_Q2_K] = {"q2_k", 256, 84, true},
    [POOT_GGUF_TYPE_Q3_K] = {"q3_k", 256, 110, true},
    [POOT_GGUF_TYPE_Q4_K] = {"q4_k", 256, 144, true},
    [POOT_GGUF_TYPE_Q5_K] = {"q5_k", 256, 176, true},
    [POOT_GGUF_TYPE_Q6_K] = {"q6_k", 256, 210, true},
    [POOT_GGUF_TYPE_Q8_K] = {"q8_k", 256, 292, true},
    [POOT_GGUF_TYPE_IQ2_XXS] = {"iq2_xxs", 256, 66, false},
    [POOT_GGUF_TYPE_IQ2_XS] = {"iq2_xs", 256, 74, false},
    [POOT_GGUF_TYPE_IQ3_XXS] = {"iq3_xxs", 256, 98, false},
    [POOT_GGUF_TYPE_IQ1_S] = {"iq1_s", 256, 50, false},
    [POOT_GGUF_TYPE_IQ4_NL] = {"iq4_nl", 32, 18, false},
    [POOT_GGUF_TYPE_IQ3_S] = {"iq3_s", 256, 110, false},
    [POOT_GGUF_TYPE_IQ2_S] = {"iq2_s", 256, 82, false},
    [POOT_GGUF_TYPE_IQ4_XS] = {"iq4_xs", 256, 136, false},
    [POOT_GGUF_TYPE_I8] = {"i8", 1, 1, true},
    [POOT_GGUF_TYPE_I16] = {"i16", 1, 2, true},
    [POOT_GGUF_TYPE_I32] = {"i32", 1, 4, true},
    [POOT_GGUF_TYPE_I64] = {"i64", 1, 8, true},
    [POOT_GGUF_TYPE_F64] = {"f64", 1, 8, false},
    [POOT_GGUF_TYPE_IQ1_M] = {"iq1_m", 256, 56, false},
    [POOT_GGUF_TYPE_BF16] = {"bf16", 1, 2, true},
    [POOT_GGUF_TYPE_TQ1_0] = {"tq1_0", 256, 54, false},
    [POOT_GGUF_TYPE_TQ2_0] = {"tq2_0", 256, 66, false},
    [POOT_GGUF_TYPE_MXFP4] = {"mxfp4", 32, 17, false},
};

const poot_gguf_type_info *poot_gguf_type_info_of(uint32_t type) {
  if (type >= POOT_GGUF_TYPE_COUNT_ || !poot_gguf_types[type].name) return NULL;
  return &poot_gguf_types[type];
}

poot_status poot_gguf_type_from_name(const char *name, poot_gguf_type *out_type) {
  *out_type = POOT_GGUF_TYPE_F32;
  for (uint32_t t = 0; t < POOT_GGUF_TYPE_COUNT_; t++) {
    const char *n = poot_gguf_types[t].name;
    if (!n) continue;
    size_t i = 0;
    while (n[i] && name[i] && tolower((unsigned char)name[i]) == n[i]) i++;
    if (!n[i] && !name[i]) {
      *out_type = (poot_gguf_type)t;
      return NULL;
    }
  }
  return poot_status_make(POOT_NOT_FOUND, "unknown tensor type '%s'", name);
}

const char *poot_gguf_value_type_name(uint32_t type) {
  static const char *const names[POOT_GGUF_VALUE_TYPE_COUNT] = {
      "u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
      "bool", "string", "array", "u64", "i64", "f64"};
  return type < POOT_GGUF_VALUE_TYPE_COUNT ? names[type] : "?";
}

bool poot_gguf_row_size(uint32_t type, uint64_t n, uint64_t *out_bytes) {
  *out_bytes = 0;
  const poot_gguf_type_info *info = poot_gguf_type_info_of(type);
  if (!info || n % info->block_size) return false;
  return !__builtin_mul_overflow(n / info->block_size, (uint64_t)info->type_size, out_bytes);
}
