/* Bump allocation in blocks, freed all at once. */
#include <string.h>

#include "poot/base.h"

struct poot_arena_block {
  poot_arena_block *next;
  size_t size; /* payload bytes */
  size_t used;
  _Alignas(16) unsigned char data[];
};

void poot_arena_init(poot_arena *arena, size_t block_size) {
  arena->head = NULL;
  arena->block_size = block_size ? block_size : 64 * 1024;
  arena->used_total = 0;
}

void poot_arena_deinit(poot_arena *arena) {
  if (!arena) return;
  poot_arena_block *b = arena->head;
  while (b) {
    poot_arena_block *next = b->next;
    poot_free(b);
    b = next;
  }
  arena->head = NULL;
  arena->used_total = 0;
}

void *poot_arena_alloc(poot_arena *arena, size_t size, size_t align) {
  if (align == 0) align = 1;
  if (align > 4096 || (align & (align - 1))) return NULL;
  if (size == 0) size = 1;
  poot_arena_block *b = arena->head;
  if (b) {
    uintptr_t base = (uintptr_t)b->data;
    uintptr_t p = (base + b->used + (align - 1)) & ~(uintptr_t)(align - 1);
    size_t off = (size_t)(p - base);
    if (off <= b->size && size <= b->size - off) {
      b->used = off + size;
      arena->used_total += size;
      memset((void *)p, 0, size);
      return (void *)p;
    }
  }
  size_t payload = arena->block_size;
  size_t need;
  if (!poot_size_add(size, align, &need)) return NULL;
  if (need > payload) payload = need;
  size_t total;
  if (!poot_size_add(sizeof(poot_arena_block), payload, &total)) return NULL;
  poot_arena_block *nb = poot_malloc(total);
  if (!nb) return NULL;
  nb->size = payload;
  nb->used = 0;
  /* A block made for one large request goes behind the current head so the
   * head's free tail stays usable for small requests. */
  if (b && payload > arena->block_size) {
    nb->next = b->next;
    b->next = nb;
  } else {
    nb->next = b;
    arena->head = nb;
  }
  uintptr_t base = (uintptr_t)nb->data;
  uintptr_t p = (base + (align - 1)) & ~(uintptr_t)(align - 1);
  nb->used = (size_t)(p - base) + size;
  arena->used_total += size;
  memset((void *)p, 0, size);
  return (void *)p;
}

char *poot_arena_strndup(poot_arena *arena, const char *s, size_t n) {
  char *d = poot_arena_alloc(arena, n + 1, 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = 0;
  return d;
}

char *poot_arena_strdup(poot_arena *arena, const char *s) {
  return poot_arena_strndup(arena, s, strlen(s));
}

void *poot_arena_memdup(poot_arena *arena, const void *p, size_t size, size_t align) {
  void *d = poot_arena_alloc(arena, size, align);
  if (d && size) memcpy(d, p, size);
  return d;
}
