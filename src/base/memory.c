/* Allocation wrappers with overflow checks and a per-thread failure hook. */
#include <stdlib.h>
#include <string.h>

#include "poot/base.h"

static _Thread_local uint64_t poot_fail_at;    /* 0: never fail */
static _Thread_local uint64_t poot_alloc_count; /* allocations since the hook was set */

void poot_alloc_fail_after(uint64_t n) {
  poot_fail_at = n;
  poot_alloc_count = 0;
}

uint64_t poot_alloc_count_since_set(void) { return poot_alloc_count; }

static bool poot_should_fail(void) {
  poot_alloc_count++;
  return poot_fail_at != 0 && poot_alloc_count >= poot_fail_at;
}

void *poot_malloc(size_t size) {
  if (poot_should_fail()) return NULL;
  return malloc(size ? size : 1);
}

void *poot_calloc(size_t count, size_t size) {
  size_t total;
  if (!poot_size_mul(count, size, &total)) return NULL;
  if (poot_should_fail()) return NULL;
  return calloc(1, total ? total : 1);
}

void *poot_realloc(void *ptr, size_t size) {
  if (poot_should_fail()) return NULL;
  return realloc(ptr, size ? size : 1);
}

void *poot_realloc_array(void *ptr, size_t count, size_t size) {
  size_t total;
  if (!poot_size_mul(count, size, &total)) return NULL;
  return poot_realloc(ptr, total);
}

void poot_free(void *ptr) { free(ptr); }

char *poot_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = poot_malloc(len + 1);
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = 0;
  return d;
}

char *poot_strdup(const char *s) { return poot_strndup(s, strlen(s)); }
