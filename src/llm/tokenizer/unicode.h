/* unicode.h — the small part of Unicode the tokenizers need (private to
 * src/llm/tokenizer/): UTF-8, general-category classes, lowercase, and
 * canonical normalization (NFD, NFC). Tables are generated from Python's
 * unicodedata by gen_unicode_data.py into unicode_data.c. */
#ifndef POOT_LLM_TOKENIZER_UNICODE_H
#define POOT_LLM_TOKENIZER_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

/* Category classes (bit flags), keep in step with gen_unicode_data.py. */
enum {
  POOT__UCD_CONTROL = 1,    /* C*: Cc Cf Cs Co Cn */
  POOT__UCD_PUNCT = 2,      /* P* */
  POOT__UCD_SYMBOL = 4,     /* S* */
  POOT__UCD_MN = 8,         /* Mn */
  POOT__UCD_LETTER = 16,    /* L* */
  POOT__UCD_NUMBER = 32,    /* N* */
  POOT__UCD_MARK = 64,      /* M* */
  POOT__UCD_SEPARATOR = 128 /* Z* */
};

extern const uint32_t poot__ucd_flag_runs[];
extern const size_t poot__ucd_flag_runs_count;
extern const uint32_t poot__ucd_lower[];
extern const size_t poot__ucd_lower_count;
extern const uint32_t poot__ucd_decomp[];
extern const size_t poot__ucd_decomp_count;
extern const uint32_t poot__ucd_decomp_pool[];
extern const size_t poot__ucd_decomp_pool_count;
extern const uint32_t poot__ucd_ccc_runs[];
extern const size_t poot__ucd_ccc_runs_count;
extern const uint32_t poot__ucd_compose[];
extern const size_t poot__ucd_compose_count;
extern const uint32_t poot__ucd_compat[];
extern const size_t poot__ucd_compat_count;
extern const uint32_t poot__ucd_compat_pool[];
extern const size_t poot__ucd_compat_pool_count;

#define POOT__UTF8_INVALID 0xFFFFFFFFu

/* The sequence length a UTF-8 lead byte announces (1 for a continuation or
 * invalid byte), as llama.cpp's unicode_len_utf8 does: no validation. */
static inline size_t poot__utf8_len(uint8_t lead) {
  static const uint8_t lens[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lens[lead >> 4];
}

/* Decodes one code point at s[0..n) (n ≥ 1). Sets *out_len to the bytes
 * consumed; returns POOT__UTF8_INVALID (with *out_len 1) for a malformed,
 * overlong, surrogate or truncated sequence. */
uint32_t poot__utf8_decode(const uint8_t *s, size_t n, size_t *out_len);
/* Encodes cp into out (4 bytes room); returns the length. */
size_t poot__utf8_encode(uint32_t cp, char *out);
/* True when s[0..n) is valid UTF-8. */
bool poot__utf8_valid(const uint8_t *s, size_t n);

uint32_t poot__ucd_flags(uint32_t cp);
/* Rust's / Python's char::is_whitespace (the White_Space property). */
bool poot__ucd_is_whitespace(uint32_t cp);
/* Single-character full lowercase into out (up to 3 code points); returns the count. */
size_t poot__ucd_lower_full(uint32_t cp, uint32_t out[3]);
uint8_t poot__ucd_ccc(uint32_t cp);

/* Appends the NFC / NFD / NFKC / NFKD form of s[0..n) to out. Invalid UTF-8
 * bytes are copied through unchanged. */
void poot__unicode_nfc(const char *s, size_t n, poot_strbuf *out);
void poot__unicode_nfd(const char *s, size_t n, poot_strbuf *out);
void poot__unicode_nfkc(const char *s, size_t n, poot_strbuf *out);
void poot__unicode_nfkd(const char *s, size_t n, poot_strbuf *out);

#endif
