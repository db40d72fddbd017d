/* tokenizer_pipeline.c — normalizers and pre-tokenizers (Hugging Face's
 * vocabulary of steps) and GPT-2's byte-level character mapping. */
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

/* ---------------------------------------------------------- byte mapping */

/* Printable bytes stand for themselves; the others (0-32, 127-160, 173)
 * take the code points from 256 up, in byte order. */
uint32_t poot__byte_to_char(uint8_t b) {
  if (b <= 32) return 256u + b;
  if (b >= 127 && b <= 160) return 289u + (b - 127u);
  if (b == 173) return 323u;
  return b;
}

int poot__char_to_byte(uint32_t cp) {
  if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 255 && cp != 173)) return (int)cp;
  if (cp >= 256 && cp <= 288) return (int)(cp - 256);
  if (cp >= 289 && cp <= 322) return (int)(cp - 289 + 127);
  if (cp == 323) return 173;
  return -1;
}

/* ----------------------------------------------------------- normalizers */

static bool is_chinese(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

static void put_cp(poot_strbuf *out, uint32_t cp) {
  char buf[4];
  poot_strbuf_append(out, buf, poot__utf8_encode(cp, buf));
}

/* Applies a per-code-point rewrite; invalid bytes pass through. */
typedef enum { MAP_LOWER, MAP_STRIP_MN, MAP_BERT_CLEAN_CJK } map_kind;

static void map_points(const char *s, size_t n, map_kind kind, const poot__norm_op *op,
                       poot_strbuf *out) {
  const uint8_t *u = (const uint8_t *)s;
  for (size_t i = 0; i < n;) {
    size_t l;
    uint32_t cp = poot__utf8_decode(u + i, n - i, &l);
    if (cp == POOT__UTF8_INVALID) {
      poot_strbuf_putc(out, s[i]);
      i++;
      continue;
    }
    i += l;
    switch (kind) {
      case MAP_LOWER: {
        uint32_t lo[3];
        size_t k = poot__ucd_lower_full(cp, lo);
        for (size_t j = 0; j < k; j++) put_cp(out, lo[j]);
        break;
      }
      case MAP_STRIP_MN:
        if (!(poot__ucd_flags(cp) & POOT__UCD_MN)) put_cp(out, cp);
        break;
      case MAP_BERT_CLEAN_CJK:
        if (op->clean_text) {
          if (cp == 0 || cp == 0xFFFD) break;
          if (poot__ucd_is_whitespace(cp)) {
            poot_strbuf_putc(out, ' ');
            break;
          }
          if (cp != '\t' && cp != '\n' && cp != '\r' && (poot__ucd_flags(cp) & POOT__UCD_CONTROL))
            break;
        }
        if (op->handle_chinese && is_chinese(cp)) {
          poot_strbuf_putc(out, ' ');
          put_cp(out, cp);
          poot_strbuf_putc(out, ' ');
          break;
        }
        put_cp(out, cp);
        break;
    }
  }
}

static void replace_all(const char *s, size_t n, const poot__norm_op *op, poot_strbuf *out) {
  if (op->a_len == 0) {
    poot_strbuf_append(out, s, n);
    return;
  }
  size_t i = 0;
  while (i < n) {
    const char *hit = memmem(s + i, n - i, op->a, op->a_len);
    if (!hit) break;
    size_t at = (size_t)(hit - s);
    poot_strbuf_append(out, s + i, at - i);
    poot_strbuf_append(out, op->b, op->b_len);
    i = at + op->a_len;
  }
  poot_strbuf_append(out, s + i, n - i);
}

void poot__tok_normalize(const poot_tokenizer *tok, const char *s, size_t n, poot_strbuf *out) {
  poot_strbuf_append(out, s, n);
  if (tok->n_norm == 0) return;
  poot_strbuf tmp;
  poot_strbuf_init(&tmp);
  for (size_t k = 0; k < tok->n_norm; k++) {
    const poot__norm_op *op = &tok->norm[k];
    poot_strbuf_clear(&tmp);
    switch (op->type) {
      case POOT__NORM_NFC:
        poot__unicode_nfc(out->data, out->len, &tmp);
        break;
      case POOT__NORM_NFD:
        poot__unicode_nfd(out->data, out->len, &tmp);
        break;
      case POOT__NORM_NFKC:
        poot__unicode_nfkc(out->data, out->len, &tmp);
        break;
      case POOT__NORM_NFKD:
        poot__unicode_nfkd(out->data, out->len, &tmp);
        break;
      case POOT__NORM_LOWERCASE:
        map_points(out->data, out->len, MAP_LOWER, op, &tmp);
        break;
      case POOT__NORM_STRIP_ACCENTS:
        poot__unicode_nfd(out->data, out->len, &tmp);
        {
          poot_strbuf t2;
          poot_strbuf_init(&t2);
          map_points(tmp.data, tmp.len, MAP_STRIP_MN, op, &t2);
          poot_strbuf_deinit(&tmp);
          tmp = t2;
        }
        break;
      case POOT__NORM_PREPEND:
        if (out->len) poot_strbuf_append(&tmp, op->a, op->a_len);
        poot_strbuf_append(&tmp, out->data, out->len);
        break;
      case POOT__NORM_REPLACE:
        replace_all(out->data, out->len, op, &tmp);
        break;
      case POOT__NORM_BERT: {
        map_points(out->data, out->len, MAP_BERT_CLEAN_CJK, op, &tmp);
        poot_strbuf t2;
        poot_strbuf_init(&t2);
        if (op->strip_accents) {
          poot__unicode_nfd(tmp.data, tmp.len, &t2);
          poot_strbuf_clear(&tmp);
          map_points(t2.data, t2.len, MAP_STRIP_MN, op, &tmp);
        }
        if (op->lowercase) {
          poot_strbuf_clear(&t2);
          map_points(tmp.data, tmp.len, MAP_LOWER, op, &t2);
          poot_strbuf_clear(&tmp);
          poot_strbuf_append(&tmp, t2.data, t2.len);
        }
        if (t2.failed) tmp.failed = true;
        poot_strbuf_deinit(&t2);
        break;
      }
    }
    /* Swap tmp into out. */
    poot_strbuf t = *out;
    *out = tmp;
    tmp = t;
    if (tmp.failed) out->failed = true;
  }
  poot_strbuf_deinit(&tmp);
}

/* -------------------------------------------------------- pre-tokenizers */

static poot_status add_piece(poot_vec *v, size_t off, size_t len) {
  if (len == 0) return POOT_OK_STATUS;
  poot__piece p = {off, len};
  return poot_vec_push(v, &p);
}

/* Splits one piece by a regex, keeping matches and the gaps between them. */
static poot_status split_regex(const pcre2_code *re, pcre2_match_context *mctx,
                               pcre2_match_data *md, const char *buf, poot__piece in,
                               poot_vec *out) {
  PCRE2_SPTR subject = (PCRE2_SPTR)(buf + in.off);
  size_t n = in.len, pos = 0, gap = 0;
  while (pos < n) {
    int rc = pcre2_match(re, subject, n, pos, 0, md, mctx);
    /* The JIT's stack is small; the interpreter keeps its frames on the heap. */
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(re, subject, n, pos, PCRE2_NO_JIT, md, mctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[128];
      pcre2_get_error_message(rc, msg, sizeof msg);
      return poot_status_make(rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
                                      rc == PCRE2_ERROR_HEAPLIMIT
                                  ? POOT_UNSUPPORTED
                                  : POOT_INTERNAL,
                              "tokenizer: the pre-tokenizer regex failed on a %zu-byte piece: %s",
                              n, (char *)msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    size_t s = ov[0], e = ov[1];
    if (e <= s) { /* empty match: move on by one character */
      pos = s + 1;
      while (pos < n && (subject[pos] & 0xC0) == 0x80) pos++;
      continue;
    }
    POOT_TRY(add_piece(out, in.off + gap, s - gap));
    POOT_TRY(add_piece(out, in.off + s, e - s));
    gap = pos = e;
  }
  return add_piece(out, in.off + gap, n - gap);
}

static bool bert_punct(uint32_t cp) {
  if (cp < 0x80)
    return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
           (cp >= 123 && cp <= 126);
  return (poot__ucd_flags(cp) & POOT__UCD_PUNCT) != 0;
}

/* Splits on whitespace (removed); with `punct`, isolates punctuation; with
 * `digits` (1 runs, 2 individual), isolates digits. */
static poot_status split_chars(const char *buf, poot__piece in, bool ws, bool punct, int digits,
                               poot_vec *out) {
  const uint8_t *u = (const uint8_t *)buf;
  size_t start = in.off, end = in.off + in.len, word = start;
  bool in_digits = false;
  for (size_t i = start; i < end;) {
    size_t l;
    uint32_t cp = poot__utf8_decode(u + i, end - i, &l);
    if (ws && cp != POOT__UTF8_INVALID && poot__ucd_is_whitespace(cp)) {
      POOT_TRY(add_piece(out, word, i - word));
      i += l;
      word = i;
      in_digits = false;
      continue;
    }
    if (punct && cp != POOT__UTF8_INVALID && bert_punct(cp)) {
      POOT_TRY(add_piece(out, word, i - word));
      POOT_TRY(add_piece(out, i, l));
      i += l;
      word = i;
      continue;
    }
    if (digits) {
      bool d = cp != POOT__UTF8_INVALID && (poot__ucd_flags(cp) & POOT__UCD_NUMBER);
      if (d && (digits == 2 || !in_digits)) {
        POOT_TRY(add_piece(out, word, i - word));
        word = i;
      } else if (!d && in_digits) {
        POOT_TRY(add_piece(out, word, i - word));
        word = i;
      }
      in_digits = d;
    }
    i += l;
  }
  return add_piece(out, word, end - word);
}

static const char k_metaspace[] = "\xe2\x96\x81";

poot_status poot__tok_pretokenize(const poot_tokenizer *tok, poot_strbuf *text, bool first,
                                  poot_vec *pieces) {
  poot_status st = POOT_OK_STATUS;
  poot_vec next;
  poot_vec_init(&next, sizeof(poot__piece));
  pcre2_match_data *md = NULL;
  POOT_TRY(add_piece(pieces, 0, text->len));
  for (size_t k = 0; k < tok->n_pre; k++) {
    const poot__pre_op *op = &tok->pre[k];
    if (op->type == POOT__PRE_METASPACE ||
        (op->type == POOT__PRE_BYTE_LEVEL && op->add_prefix_space)) {
      /* Rewrites the text: only valid as the first step (checked by the loaders). */
      poot_strbuf t;
      poot_strbuf_init(&t);
      if (op->type == POOT__PRE_METASPACE) {
        bool prepend = op->prepend_scheme == POOT__PREPEND_ALWAYS ||
                       (op->prepend_scheme == POOT__PREPEND_FIRST && first);
        if (prepend && text->len && text->data[0] != ' ' &&
            !(text->len >= 3 && memcmp(text->data, k_metaspace, 3) == 0))
          poot_strbuf_append(&t, k_metaspace, 3);
        for (size_t i = 0; i < text->len; i++) {
          if (text->data[i] == ' ')
            poot_strbuf_append(&t, k_metaspace, 3);
          else
            poot_strbuf_putc(&t, text->data[i]);
        }
      } else {
        if (text->len && text->data[0] != ' ') poot_strbuf_putc(&t, ' ');
        poot_strbuf_append(&t, text->data, text->len);
      }
      poot_strbuf_deinit(text);
      *text = t;
      if ((st = poot_strbuf_status(text))) goto done;
      poot_vec_clear(pieces);
      if ((st = add_piece(pieces, 0, text->len))) goto done;
    }
    poot_vec_clear(&next);
    const poot__piece *pc = pieces->data;
    size_t np = pieces->len;
    bool changed = true;
    switch (op->type) {
      case POOT__PRE_SPLIT:
      case POOT__PRE_BYTE_LEVEL:
        if (!op->re) {
          changed = false;
          break;
        }
        if (!md) {
          md = pcre2_match_data_create_from_pattern(op->re, NULL);
          if (!md) {
            st = poot_status_make(POOT_OUT_OF_MEMORY, "tokenizer: out of memory");
            goto done;
          }
        }
        for (size_t i = 0; i < np; i++)
          if ((st = split_regex(op->re, tok->match_ctx, md, text->data, pc[i], &next))) goto done;
        pcre2_match_data_free(md); /* patterns differ in capture counts */
        md = NULL;
        break;
      case POOT__PRE_METASPACE:
        if (!op->split) {
          changed = false;
          break;
        }
        for (size_t i = 0; i < np; i++) {
          size_t s = pc[i].off, e = pc[i].off + pc[i].len, word = s;
          for (size_t j = s; j + 3 <= e; j++) {
            if (j > word && memcmp(text->data + j, k_metaspace, 3) == 0) {
              if ((st = add_piece(&next, word, j - word))) goto done;
              word = j;
            }
          }
          if ((st = add_piece(&next, word, e - word))) goto done;
        }
        break;
      case POOT__PRE_BERT:
        for (size_t i = 0; i < np; i++)
          if ((st = split_chars(text->data, pc[i], true, true, 0, &next))) goto done;
        break;
      case POOT__PRE_WHITESPACE_SPLIT:
        for (size_t i = 0; i < np; i++)
          if ((st = split_chars(text->data, pc[i], true, false, 0, &next))) goto done;
        break;
      case POOT__PRE_DIGITS:
        for (size_t i = 0; i < np; i++)
          if ((st = split_chars(text->data, pc[i], false, false, op->individual ? 2 : 1, &next)))
            goto done;
        break;
    }
    if (changed) {
      poot_vec t = *pieces;
      *pieces = next;
      next = t;
    }
  }
done:
  pcre2_match_data_free(md);
  poot_vec_deinit(&next);
  return st;
}
