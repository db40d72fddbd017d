/* NumPy .npy reading and writing (see npy.h). The header is a Python dict
 * literal; this parser accepts exactly the grammar NumPy writes (and the
 * spacing variants other writers produce) and rejects everything else. */
#include "npy.h"

#include <ctype.h>
#include <string.h>

static const struct {
  const char *descr; /* without byte-order character */
  poot_npy_type type;
  size_t size;
  const char *name;
} npy_types[] = {
    {"f4", POOT_NPY_F32, 4, "f32"},   {"f2", POOT_NPY_F16, 2, "f16"},
    {"u2", POOT_NPY_BF16, 2, "bf16"}, {"i1", POOT_NPY_I8, 1, "i8"},
    {"u1", POOT_NPY_U8, 1, "u8"},     {"i2", POOT_NPY_I16, 2, "i16"},
    {"i4", POOT_NPY_I32, 4, "i32"},   {"i8", POOT_NPY_I64, 8, "i64"},
    {"u4", POOT_NPY_U32, 4, "u32"},   {"b1", POOT_NPY_BOOL, 1, "bool"},
    {"V2", POOT_NPY_BF16, 2, "bf16"},
};
#define NPY_TYPE_ROWS (sizeof npy_types / sizeof npy_types[0])

size_t poot_npy_type_size(poot_npy_type type) {
  for (size_t i = 0; i < NPY_TYPE_ROWS; i++)
    if (npy_types[i].type == type) return npy_types[i].size;
  return 0;
}

const char *poot_npy_type_name(poot_npy_type type) {
  for (size_t i = 0; i < NPY_TYPE_ROWS; i++)
    if (npy_types[i].type == type) return npy_types[i].name;
  return "?";
}

static const char *type_descr(poot_npy_type type) {
  for (size_t i = 0; i < NPY_TYPE_ROWS; i++)
    if (npy_types[i].type == type) return npy_types[i].descr;
  return NULL;
}

size_t poot_npy_count(const poot_npy *array) {
  size_t n = 1;
  for (int i = 0; i < array->rank; i++) n *= (size_t)array->shape[i];
  return n;
}

void poot_npy_deinit(poot_npy *array) {
  if (!array) return;
  poot_free(array->data);
  array->data = NULL;
  array->bytes = 0;
}

/* ------------------------------------------------------------ header */

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A quoted Python string without escapes: copies into buf. */
static bool read_str(cursor *c, char *buf, size_t cap) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || n + 1 >= cap) return false;
    buf[n++] = *c->p++;
  }
  if (c->p >= c->end) return false;
  c->p++;
  buf[n] = 0;
  return true;
}

static bool read_word(cursor *c, const char *word) {
  skip_ws(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
  c->p += n;
  return true;
}

static bool read_dim(cursor *c, int64_t *out) {
  skip_ws(c);
  int64_t v = 0;
  int digits = 0;
  while (c->p < c->end && isdigit((unsigned char)*c->p)) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*c->p - '0');
    c->p++;
    digits++;
  }
  if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
  *out = v;
  return digits > 0;
}

static poot_status fmt_err(const char *what) {
  return poot_status_make(POOT_FORMAT, "npy: %s", what);
}

static poot_status parse_header(const char *h, size_t len, poot_npy *a) {
  cursor c = {h, h + len};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!eat(&c, '{')) return fmt_err("header is not a dict (missing '{')");
  for (;;) {
    if (eat(&c, '}')) break;
    char key[32];
    if (!read_str(&c, key, sizeof key)) return fmt_err("header key is not a quoted string");
    if (!eat(&c, ':')) return fmt_err("header: missing ':' after a key");
    if (strcmp(key, "descr") == 0) {
      char d[16];
      if (!read_str(&c, d, sizeof d)) return fmt_err("header: 'descr' is not a string");
      if (d[0] == '>') return poot_status_make(POOT_UNSUPPORTED, "npy: big-endian data ('%s')", d);
      const char *body = (d[0] == '<' || d[0] == '|' || d[0] == '=') ? d + 1 : d;
      bool found = false;
      for (size_t i = 0; i < NPY_TYPE_ROWS; i++) {
        if (strcmp(body, npy_types[i].descr) == 0) {
          a->type = npy_types[i].type;
          found = true;
          break;
        }
      }
      if (!found)
        return poot_status_make(POOT_UNSUPPORTED,
                                "npy: element type '%s' (supported: f4 f2 i1 u1 i2 i4 i8 u4 b1, "
                                "and u2/V2 as bf16)",
                                d);
      have_descr = true;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (read_word(&c, "False")) {
        have_order = true;
      } else if (read_word(&c, "True")) {
        return poot_status_make(POOT_UNSUPPORTED, "npy: Fortran-order arrays (save C order)");
      } else {
        return fmt_err("header: 'fortran_order' is not True or False");
      }
    } else if (strcmp(key, "shape") == 0) {
      if (!eat(&c, '(')) return fmt_err("header: 'shape' is not a tuple");
      a->rank = 0;
      while (!eat(&c, ')')) {
        if (a->rank >= POOT_NPY_MAX_RANK) return fmt_err("header: shape has too many dimensions");
        if (!read_dim(&c, &a->shape[a->rank]))
          return fmt_err("header: shape entry is not a number");
        a->rank++;
        if (!eat(&c, ',')) {
          if (!eat(&c, ')')) return fmt_err("header: shape tuple is not closed");
          break;
        }
      }
      have_shape = true;
    } else {
      return poot_status_make(POOT_FORMAT, "npy: unknown header key '%s'", key);
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}')) return fmt_err("header: missing ',' or '}' after a value");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return fmt_err("header lacks one of 'descr', 'fortran_order', 'shape'");
  return POOT_OK_STATUS;
}

poot_status poot_npy_parse(const void *bytes, size_t size, poot_npy *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *b = bytes;
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return fmt_err("missing the \\x93NUMPY magic");
  const unsigned major = b[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = (size_t)b[8] | ((size_t)b[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return fmt_err("file ends inside the header length");
    header_len = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
    start = 12;
  } else {
    return poot_status_make(POOT_UNSUPPORTED, "npy: format version %u.%u", major, b[7]);
  }
  if (header_len > size - start)
    return poot_status_make(POOT_FORMAT, "npy: header length %zu runs past the end of the file",
                            header_len);
  poot_npy a = {0};
  POOT_TRY(parse_header((const char *)b + start, header_len, &a));
  size_t count = 1, elem = poot_npy_type_size(a.type), need = 0;
  for (int i = 0; i < a.rank; i++) {
    if (a.shape[i] < 0 || !poot_size_mul(count, (size_t)a.shape[i], &count))
      return fmt_err("shape overflows");
  }
  if (!poot_size_mul(count, elem, &need)) return fmt_err("shape overflows");
  const size_t have = size - start - header_len;
  if (have != need)
    return poot_status_make(POOT_FORMAT, "npy: the shape needs %zu data bytes, the file has %zu",
                            need, have);
  a.data = poot_malloc(need ? need : 1);
  if (!a.data) return poot_status_make(POOT_OUT_OF_MEMORY, "npy: %zu bytes of data", need);
  if (need) memcpy(a.data, b + start + header_len, need);
  a.bytes = need;
  *out = a;
  return POOT_OK_STATUS;
}

poot_status poot_npy_read(const char *path, poot_npy *out) {
  memset(out, 0, sizeof *out);
  poot_file_map map = {0};
  POOT_TRY(poot_file_map_open(path, &map));
  poot_status s =
      poot_npy_parse(map.data ? (const void *)map.data : (const void *)"", map.size, out);
  poot_file_map_close(&map);
  return poot_status_annotate(s, "%s", path);
}

poot_status poot_npy_serialize(const poot_npy *a, void **out_bytes, size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  const char *descr = type_descr(a->type);
  if (!descr || a->rank < 0 || a->rank > POOT_NPY_MAX_RANK)
    return poot_status_make(POOT_INVALID_ARGUMENT, "npy: bad array description");
  if (a->bytes != poot_npy_count(a) * poot_npy_type_size(a->type))
    return poot_status_make(POOT_INVALID_ARGUMENT, "npy: %zu data bytes do not fit the shape",
                            a->bytes);
  poot_strbuf h;
  poot_strbuf_init(&h);
  const char order = poot_npy_type_size(a->type) == 1 ? '|' : '<';
  poot_strbuf_printf(&h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (", order, descr);
  for (int i = 0; i < a->rank; i++)
    poot_strbuf_printf(&h, "%lld%s", (long long)a->shape[i],
                       a->rank == 1 ? "," : (i + 1 < a->rank ? ", " : ""));
  poot_strbuf_puts(&h, "), }");
  /* Pad with spaces so that magic + length + header is a multiple of 64. */
  while ((10 + h.len + 1) % 64 != 0) poot_strbuf_putc(&h, ' ');
  poot_strbuf_putc(&h, '\n');
  poot_status s = poot_strbuf_status(&h);
  if (s || h.len > 65535) {
    poot_strbuf_deinit(&h);
    return s ? s : poot_status_make(POOT_INVALID_ARGUMENT, "npy: header too long");
  }
  const size_t total = 10 + h.len + a->bytes;
  uint8_t *buf = poot_malloc(total);
  if (!buf) {
    poot_strbuf_deinit(&h);
    return poot_status_make(POOT_OUT_OF_MEMORY, "npy: %zu bytes", total);
  }
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (uint8_t)(h.len & 0xFF);
  buf[9] = (uint8_t)(h.len >> 8);
  memcpy(buf + 10, h.data, h.len);
  if (a->bytes) memcpy(buf + 10 + h.len, a->data, a->bytes);
  poot_strbuf_deinit(&h);
  *out_bytes = buf;
  *out_size = total;
  return POOT_OK_STATUS;
}

poot_status poot_npy_write(const char *path, const poot_npy *array) {
  void *bytes = NULL;
  size_t size = 0;
  POOT_TRY(poot_npy_serialize(array, &bytes, &size));
  poot_status s = poot_file_write_all(path, bytes, size);
  poot_free(bytes);
  return s;
}
