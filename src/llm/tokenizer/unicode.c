/* unicode.c — UTF-8, category classes, lowercase and canonical
 * normalization over the generated tables of unicode_data.c. */
#include "unicode.h"

#include <string.h>

uint32_t poot__utf8_decode(const uint8_t *s, size_t n, size_t *out_len) {
  *out_len = 1;
  uint8_t b = s[0];
  if (b < 0x80) return b;
  size_t len;
  uint32_t cp, min;
  if ((b & 0xE0) == 0xC0) {
    len = 2, cp = b & 0x1F, min = 0x80;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3, cp = b & 0x0F, min = 0x800;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4, cp = b & 0x07, min = 0x10000;
  } else {
    return POOT__UTF8_INVALID;
  }
  if (len > n) return POOT__UTF8_INVALID;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return POOT__UTF8_INVALID;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return POOT__UTF8_INVALID;
  *out_len = len;
  return cp;
}

size_t poot__utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

bool poot__utf8_valid(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    size_t l;
    if (poot__utf8_decode(s + i, n - i, &l) == POOT__UTF8_INVALID) return false;
    i += l;
  }
  return true;
}

/* Finds the run holding cp in a table of (first << 8 | value) runs. */
static uint32_t run_lookup(const uint32_t *runs, size_t count, uint32_t cp) {
  size_t lo = 0, hi = count; /* invariant: runs[lo].first <= cp */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if ((runs[mid] >> 8) <= cp)
      lo = mid;
    else
      hi = mid;
  }
  return runs[lo] & 0xFF;
}

uint32_t poot__ucd_flags(uint32_t cp) {
  if (cp > 0x10FFFF) return 0;
  return run_lookup(poot__ucd_flag_runs, poot__ucd_flag_runs_count, cp);
}

uint8_t poot__ucd_ccc(uint32_t cp) {
  if (cp < 0x300 || cp > 0x10FFFF) return 0;
  return (uint8_t)run_lookup(poot__ucd_ccc_runs, poot__ucd_ccc_runs_count, cp);
}

bool poot__ucd_is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

size_t poot__ucd_lower_full(uint32_t cp, uint32_t out[3]) {
  if (cp < 0x80) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  if (cp == 0x130) { /* LATIN CAPITAL LETTER I WITH DOT ABOVE → i + COMBINING DOT ABOVE */
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  size_t lo = 0, hi = poot__ucd_lower_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint32_t k = poot__ucd_lower[2 * mid];
    if (k == cp) {
      out[0] = poot__ucd_lower[2 * mid + 1];
      return 1;
    }
    if (k < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  out[0] = cp;
  return 1;
}

/* ----------------------------------------------------------- normalization */

enum {
  HANGUL_S = 0xAC00,
  HANGUL_L = 0x1100,
  HANGUL_V = 0x1161,
  HANGUL_T = 0x11A7,
  HANGUL_LCOUNT = 19,
  HANGUL_VCOUNT = 21,
  HANGUL_TCOUNT = 28,
  HANGUL_NCOUNT = 588,
  HANGUL_SCOUNT = 11172
};

/* Invalid input bytes travel through the code point buffer as this tag | byte. */
#define RAW_BYTE_TAG 0x80000000u

enum { MAX_DECOMP = 18 }; /* the longest full decomposition (U+FDFA, compatibility) */

/* Looks cp up in a (cp, offset, length) table over a pool; 0 when absent. */
static size_t table_decompose(const uint32_t *table, size_t count, const uint32_t *pool,
                              uint32_t cp, uint32_t out[MAX_DECOMP]) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint32_t k = table[3 * mid];
    if (k == cp) {
      uint32_t off = table[3 * mid + 1], n = table[3 * mid + 2];
      if (n > MAX_DECOMP) n = MAX_DECOMP;
      memcpy(out, pool + off, n * sizeof(uint32_t));
      return n;
    }
    if (k < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* The full canonical (or, with compat, compatibility) decomposition of cp. */
static size_t decompose(uint32_t cp, bool compat, uint32_t out[MAX_DECOMP]) {
  if (cp >= HANGUL_S && cp < HANGUL_S + HANGUL_SCOUNT) {
    uint32_t s = cp - HANGUL_S;
    out[0] = HANGUL_L + s / HANGUL_NCOUNT;
    out[1] = HANGUL_V + (s % HANGUL_NCOUNT) / HANGUL_TCOUNT;
    if (s % HANGUL_TCOUNT == 0) return 2;
    out[2] = HANGUL_T + s % HANGUL_TCOUNT;
    return 3;
  }
  if (cp >= 0xA0) {
    size_t n = 0;
    if (compat)
      n = table_decompose(poot__ucd_compat, poot__ucd_compat_count, poot__ucd_compat_pool, cp, out);
    if (!n && cp >= 0xC0)
      n = table_decompose(poot__ucd_decomp, poot__ucd_decomp_count, poot__ucd_decomp_pool, cp, out);
    if (n) return n;
  }
  out[0] = cp;
  return 1;
}

static uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= HANGUL_L && a < HANGUL_L + HANGUL_LCOUNT && b >= HANGUL_V &&
      b < HANGUL_V + HANGUL_VCOUNT)
    return HANGUL_S + ((a - HANGUL_L) * HANGUL_VCOUNT + (b - HANGUL_V)) * HANGUL_TCOUNT;
  if (a >= HANGUL_S && a < HANGUL_S + HANGUL_SCOUNT && (a - HANGUL_S) % HANGUL_TCOUNT == 0 &&
      b > HANGUL_T && b < HANGUL_T + HANGUL_TCOUNT)
    return a + (b - HANGUL_T);
  size_t lo = 0, hi = poot__ucd_compose_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint32_t ka = poot__ucd_compose[3 * mid], kb = poot__ucd_compose[3 * mid + 1];
    if (ka == a && kb == b) return poot__ucd_compose[3 * mid + 2];
    if (ka < a || (ka == a && kb < b))
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

static uint8_t ccc_of(uint32_t cp) {
  return (cp & RAW_BYTE_TAG) ? 0 : poot__ucd_ccc(cp);
}

/* Decomposes and canonically orders s into a code point buffer. Returns NULL
 * on allocation failure. */
static uint32_t *nfd_points(const char *s, size_t n, bool compat, size_t *out_count) {
  /* A character of k bytes decomposes into at most 6k code points. */
  uint32_t *cps = poot_malloc((n * 6 + MAX_DECOMP) * sizeof(uint32_t));
  if (!cps) return NULL;
  size_t count = 0;
  const uint8_t *u = (const uint8_t *)s;
  for (size_t i = 0; i < n;) {
    size_t l;
    uint32_t cp = poot__utf8_decode(u + i, n - i, &l);
    if (cp == POOT__UTF8_INVALID) {
      cps[count++] = RAW_BYTE_TAG | u[i];
      i += 1;
      continue;
    }
    i += l;
    uint32_t d[MAX_DECOMP];
    size_t dn = decompose(cp, compat, d);
    for (size_t k = 0; k < dn; k++) cps[count++] = d[k];
  }
  /* Canonical ordering: a stable insertion sort of each run of non-starters. */
  for (size_t i = 1; i < count; i++) {
    uint8_t c = ccc_of(cps[i]);
    if (c == 0) continue;
    size_t j = i;
    uint32_t v = cps[i];
    while (j > 0 && ccc_of(cps[j - 1]) > c) {
      cps[j] = cps[j - 1];
      j--;
    }
    cps[j] = v;
  }
  *out_count = count;
  return cps;
}

static void put_points(const uint32_t *cps, size_t count, poot_strbuf *out) {
  char buf[4];
  for (size_t i = 0; i < count; i++) {
    if (cps[i] & RAW_BYTE_TAG) {
      poot_strbuf_putc(out, (char)(cps[i] & 0xFF));
    } else {
      size_t l = poot__utf8_encode(cps[i], buf);
      poot_strbuf_append(out, buf, l);
    }
  }
}

static bool below(const char *s, size_t n, uint8_t limit_lead) {
  for (size_t i = 0; i < n; i++)
    if ((uint8_t)s[i] >= limit_lead) return false;
  return true;
}

/* Normalizes one run (no ASCII inside, except maybe its first byte). */
static void normalize_run(const char *s, size_t n, bool do_compose, bool compat, poot_strbuf *out) {
  /* Below U+0300 nothing changes under NFC, below U+00C0 nothing under NFD;
   * compatibility mappings start right after ASCII (U+00A0). */
  if (below(s, n, compat ? 0x80 : do_compose ? 0xCC : 0xC0)) {
    poot_strbuf_append(out, s, n);
    return;
  }
  size_t count;
  uint32_t *cps = nfd_points(s, n, compat, &count);
  if (!cps) {
    out->failed = true;
    return;
  }
  if (do_compose) {
    size_t w = 0;
    long starter = -1;
    int last_cc = -1;
    for (size_t i = 0; i < count; i++) {
      uint32_t c = cps[i];
      int cc = ccc_of(c);
      if (starter >= 0 && !(c & RAW_BYTE_TAG) && !(cps[starter] & RAW_BYTE_TAG)) {
        bool adjacent = (size_t)starter == w - 1;
        if (adjacent || (last_cc < cc && last_cc != 0)) {
          uint32_t comp = compose(cps[starter], c);
          if (comp) {
            cps[starter] = comp;
            continue;
          }
        }
      }
      if (cc == 0) starter = (long)w;
      last_cc = cc;
      cps[w++] = c;
    }
    count = w;
  }
  put_points(cps, count, out);
  poot_free(cps);
}

/* ASCII characters are starters that never compose with what precedes them
 * and never reorder, so text normalizes run by run between them; the ASCII
 * character before a run goes with it, as a run may combine with it
 * ("e" + U+0301). Work and memory stay proportional to the non-ASCII runs. */
static void normalize(const char *s, size_t n, bool do_compose, bool compat, poot_strbuf *out) {
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && (uint8_t)s[j] < 0x80) j++;
    if (j == n) {
      poot_strbuf_append(out, s + i, n - i);
      return;
    }
    size_t start = j > i ? j - 1 : j;
    poot_strbuf_append(out, s + i, start - i);
    size_t k = j;
    while (k < n && (uint8_t)s[k] >= 0x80) k++;
    normalize_run(s + start, k - start, do_compose, compat, out);
    i = k;
  }
}

void poot__unicode_nfd(const char *s, size_t n, poot_strbuf *out) {
  normalize(s, n, false, false, out);
}

void poot__unicode_nfc(const char *s, size_t n, poot_strbuf *out) {
  normalize(s, n, true, false, out);
}

void poot__unicode_nfkd(const char *s, size_t n, poot_strbuf *out) {
  normalize(s, n, false, true, out);
}

void poot__unicode_nfkc(const char *s, size_t n, poot_strbuf *out) {
  normalize(s, n, true, true, out);
}
