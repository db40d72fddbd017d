/* A hash map from byte strings to uint64, open addressing with linear probing
 * and tombstones. Keys are copied into one allocation per entry. */
#include <string.h>

#include "poot/base.h"

struct poot_map_entry {
  char *key; /* NULL: empty; POOT_MAP_TOMBSTONE: removed */
  size_t key_len;
  uint64_t hash;
  uint64_t value;
};

static char poot_map_tombstone_byte;
#define POOT_MAP_TOMBSTONE (&poot_map_tombstone_byte)

uint64_t poot_hash64_mix(uint64_t h, uint64_t v) {
  /* splitmix64 finalizer over the combination: stable and well spread. */
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t poot_hash64(const void *data, size_t len, uint64_t seed) {
  /* FNV-1a over the bytes, then a finalizer; byte order independent. */
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return poot_hash64_mix(h, len);
}

/* FNV-1a with the 128-bit prime 2^88 + 0x13b and its offset basis. */
__extension__ typedef unsigned __int128 poot_u128;

static poot_u128 fnv128_step(poot_u128 h, unsigned char byte) {
  const poot_u128 prime = ((poot_u128)1 << 88) + 0x13b;
  return (h ^ byte) * prime;
}

static poot_hash128 hash128_split(poot_u128 h) {
  poot_hash128 out = {(uint64_t)h, (uint64_t)(h >> 64)};
  return out;
}

static poot_u128 hash128_join(poot_hash128 h) { return ((poot_u128)h.hi << 64) | h.lo; }

poot_hash128 poot_hash128_of(const void *data, size_t len) {
  const unsigned char *p = data;
  poot_u128 h = ((poot_u128)0x6c62272e07bb0142ull << 64) | 0x62b821756295c58dull;
  for (size_t i = 0; i < len; i++) h = fnv128_step(h, p[i]);
  return hash128_split(h);
}

poot_hash128 poot_hash128_mix(poot_hash128 h, uint64_t v) {
  poot_u128 x = hash128_join(h);
  for (int i = 0; i < 8; i++) x = fnv128_step(x, (unsigned char)(v >> (8 * i)));
  return hash128_split(x);
}

void poot_map_init(poot_map *map) {
  map->entries = NULL;
  map->cap = 0;
  map->len = 0;
  map->tombstones = 0;
}

void poot_map_deinit(poot_map *map) {
  if (!map) return;
  for (size_t i = 0; i < map->cap; i++) {
    char *k = map->entries[i].key;
    if (k && k != POOT_MAP_TOMBSTONE) poot_free(k);
  }
  poot_free(map->entries);
  poot_map_init(map);
}

static poot_map_entry *poot_map_find(const poot_map *map, const void *key, size_t key_len,
                                     uint64_t hash) {
  if (!map->cap) return NULL;
  size_t mask = map->cap - 1;
  for (size_t i = hash & mask, n = 0; n < map->cap; i = (i + 1) & mask, n++) {
    poot_map_entry *e = &map->entries[i];
    if (!e->key) return NULL;
    if (e->key != POOT_MAP_TOMBSTONE && e->hash == hash && e->key_len == key_len &&
        memcmp(e->key, key, key_len) == 0)
      return e;
  }
  return NULL;
}

static poot_status poot_map_grow(poot_map *map) {
  size_t cap = map->cap ? map->cap * 2 : 16;
  poot_map_entry *fresh = poot_calloc(cap, sizeof *fresh);
  if (!fresh) return poot_status_make(POOT_OUT_OF_MEMORY, "growing a hash map to %zu slots", cap);
  for (size_t i = 0; i < map->cap; i++) {
    poot_map_entry *e = &map->entries[i];
    if (!e->key || e->key == POOT_MAP_TOMBSTONE) continue;
    size_t j = e->hash & (cap - 1);
    while (fresh[j].key) j = (j + 1) & (cap - 1);
    fresh[j] = *e;
  }
  poot_free(map->entries);
  map->entries = fresh;
  map->cap = cap;
  map->tombstones = 0;
  return NULL;
}

poot_status poot_map_put(poot_map *map, const void *key, size_t key_len, uint64_t value) {
  uint64_t hash = poot_hash64(key, key_len, 0);
  poot_map_entry *e = poot_map_find(map, key, key_len, hash);
  if (e) {
    e->value = value;
    return NULL;
  }
  /* Keep the load (live entries and tombstones) under 3/4. */
  if ((map->len + map->tombstones + 1) * 4 > map->cap * 3) POOT_TRY(poot_map_grow(map));
  char *k = poot_malloc(key_len + 1);
  if (!k) return poot_status_make(POOT_OUT_OF_MEMORY, "copying a %zu-byte map key", key_len);
  if (key_len) memcpy(k, key, key_len);
  k[key_len] = 0;
  size_t mask = map->cap - 1;
  size_t i = hash & mask;
  while (map->entries[i].key && map->entries[i].key != POOT_MAP_TOMBSTONE) i = (i + 1) & mask;
  if (map->entries[i].key == POOT_MAP_TOMBSTONE) map->tombstones--;
  map->entries[i] = (poot_map_entry){k, key_len, hash, value};
  map->len++;
  return NULL;
}

bool poot_map_get(const poot_map *map, const void *key, size_t key_len, uint64_t *out_value) {
  poot_map_entry *e = poot_map_find(map, key, key_len, poot_hash64(key, key_len, 0));
  if (!e) return false;
  if (out_value) *out_value = e->value;
  return true;
}

bool poot_map_remove(poot_map *map, const void *key, size_t key_len) {
  poot_map_entry *e = poot_map_find(map, key, key_len, poot_hash64(key, key_len, 0));
  if (!e) return false;
  poot_free(e->key);
  e->key = POOT_MAP_TOMBSTONE;
  map->len--;
  map->tombstones++;
  return true;
}

bool poot_map_next(const poot_map *map, size_t *iter, const void **out_key, size_t *out_key_len,
                   uint64_t *out_value) {
  for (size_t i = *iter; i < map->cap; i++) {
    poot_map_entry *e = &map->entries[i];
    if (!e->key || e->key == POOT_MAP_TOMBSTONE) continue;
    if (out_key) *out_key = e->key;
    if (out_key_len) *out_key_len = e->key_len;
    if (out_value) *out_value = e->value;
    *iter = i + 1;
    return true;
  }
  *iter = map->cap;
  return false;
}
