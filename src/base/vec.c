/* A growable array of fixed-size elements. */
#include <assert.h>
#include <string.h>

#include "poot/base.h"

void poot_vec_init(poot_vec *vec, size_t elem_size) {
  vec->data = NULL;
  vec->len = 0;
  vec->cap = 0;
  vec->elem_size = elem_size;
}

void poot_vec_deinit(poot_vec *vec) {
  if (!vec) return;
  poot_free(vec->data);
  vec->data = NULL;
  vec->len = vec->cap = 0;
}

poot_status poot_vec_reserve(poot_vec *vec, size_t cap) {
  if (cap <= vec->cap) return NULL;
  size_t n = vec->cap ? vec->cap : 8;
  while (n < cap) {
    if (n > SIZE_MAX / 2) {
      n = cap;
      break;
    }
    n *= 2;
  }
  void *d = poot_realloc_array(vec->data, n, vec->elem_size);
  if (!d)
    return poot_status_make(POOT_OUT_OF_MEMORY, "growing an array to %zu elements of %zu bytes",
                            n, vec->elem_size);
  vec->data = d;
  vec->cap = n;
  return NULL;
}

poot_status poot_vec_resize(poot_vec *vec, size_t len) {
  POOT_TRY(poot_vec_reserve(vec, len));
  if (len > vec->len)
    memset((char *)vec->data + vec->len * vec->elem_size, 0, (len - vec->len) * vec->elem_size);
  vec->len = len;
  return NULL;
}

poot_status poot_vec_push(poot_vec *vec, const void *elem) {
  if (vec->len == vec->cap) POOT_TRY(poot_vec_reserve(vec, vec->len + 1));
  char *dst = (char *)vec->data + vec->len * vec->elem_size;
  if (elem)
    memcpy(dst, elem, vec->elem_size);
  else
    memset(dst, 0, vec->elem_size);
  vec->len++;
  return NULL;
}

void *poot_vec_at(const poot_vec *vec, size_t index) {
  assert(index < vec->len);
  return (char *)vec->data + index * vec->elem_size;
}

void poot_vec_clear(poot_vec *vec) { vec->len = 0; }
