/* poot/base.h — the base layer: status codes, memory, containers, logging,
 * timing, file mapping, dynamic loading, half-precision conversion and JSON.
 *
 * Everything here uses libc only. Every call that can fail returns a
 * poot_status; NULL means success. A status is owned by whoever receives it
 * and must be released with poot_status_free() (or returned further up). */
#ifndef POOT_BASE_H
#define POOT_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define POOT_MUST_USE __attribute__((warn_unused_result))
#define POOT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define POOT_MUST_USE
#define POOT_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ status */

/* The code set. Each code's meaning:
 *  OK               success (never carried by a non-NULL status)
 *  INVALID_ARGUMENT the caller passed something malformed (bad flag, bad graph)
 *  NOT_FOUND        a named thing (file, tensor, symbol, key) does not exist
 *  OUT_OF_MEMORY    host or device memory is exhausted
 *  UNSUPPORTED      valid input that this build or device cannot handle
 *  FORMAT           a file or text is malformed (names offset and field)
 *  IO               the operating system failed a read, write or map
 *  CAPACITY         a fixed capacity (KV cap, slots, sizes) would be exceeded
 *  DEVICE_LOST      the device or its driver failed; the context is poisoned
 *  KERNEL_FAULT     a kernel check failed (names kernel and trap code)
 *  TIMEOUT          a bounded wait ran out; the context is poisoned
 *  POISONED         the context was poisoned earlier; nothing was attempted
 *  NEEDS_RESET      an executable failed after replay; reset_state first
 *  NO_DEVICE        no device of the asked kind is present
 *  CANCELLED        the caller cancelled the work
 *  INTERNAL         a bug in poot: please report it */
typedef enum poot_status_code {
  POOT_OK = 0,
  POOT_INVALID_ARGUMENT,
  POOT_NOT_FOUND,
  POOT_OUT_OF_MEMORY,
  POOT_UNSUPPORTED,
  POOT_FORMAT,
  POOT_IO,
  POOT_CAPACITY,
  POOT_DEVICE_LOST,
  POOT_KERNEL_FAULT,
  POOT_TIMEOUT,
  POOT_POISONED,
  POOT_NEEDS_RESET,
  POOT_NO_DEVICE,
  POOT_CANCELLED,
  POOT_INTERNAL,
  POOT_STATUS_CODE_COUNT
} poot_status_code;

/* A status: NULL is OK; otherwise an owned object with a code and message. */
typedef struct poot_status_s *poot_status;

#define POOT_OK_STATUS ((poot_status)NULL)

/* Makes a status with a printf-style message. Never fails: when memory is
 * exhausted it returns a shared static status that free() ignores. */
POOT_MUST_USE poot_status poot_status_make(poot_status_code code, const char *fmt, ...)
    POOT_PRINTF(2, 3);
POOT_MUST_USE poot_status poot_status_makev(poot_status_code code, const char *fmt, va_list ap);
/* Prefixes context to a status's message as "context: message"; returns the
 * same code. Give the context without a trailing ": " (one given is dropped,
 * never doubled). Consumes `status`. Passing NULL returns NULL. */
POOT_MUST_USE poot_status poot_status_annotate(poot_status status, const char *fmt, ...)
    POOT_PRINTF(2, 3);
poot_status_code poot_status_code_of(poot_status status); /* POOT_OK for NULL */
const char *poot_status_message(poot_status status);      /* "" for NULL; borrowed */
const char *poot_status_code_name(poot_status_code code); /* "INVALID_ARGUMENT" */
void poot_status_free(poot_status status);                /* NULL-safe */
/* Frees the status and returns its code (for tests and tools). */
poot_status_code poot_status_consume(poot_status status);

static inline bool poot_status_is_ok(poot_status s) { return s == NULL; }

/* The one control-flow macro: return a failed status to the caller. */
#define POOT_TRY(expr)                                                                             \
  do {                                                                                             \
    poot_status poot__try_status = (expr);                                                         \
    if (poot__try_status) return poot__try_status;                                                 \
  } while (0)

/* --------------------------------------------------------------- downcasts */

/* The `type` whose member `member` is at `ptr` (Mesa's container_of). */
#define POOT_CONTAINER_OF(ptr, type, member)                                                       \
  ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* A checked downcast (IREE's `_cast`). An interface's base (poot_device,
 * poot_executor) carries its implementation's tag, the vtable pointer `vt`:
 * the `type` embedding `base` as `member` when base->vt is `vtable`; NULL
 * for NULL or another implementation's object (poot_downcast_check turns
 * that into a status). */
#define POOT_DOWNCAST(type, member, base, vtable)                                                  \
  ((base) && (base)->vt == (vtable) ? POOT_CONTAINER_OF(base, type, member) : NULL)

/* INTERNAL when a downcast gave NULL, naming what was expected; OK
 * otherwise. */
POOT_MUST_USE static inline poot_status poot_downcast_check(const void *cast, const char *what) {
  if (cast) return NULL;
  return poot_status_make(POOT_INTERNAL,
                          "%s: the object is not one (a downcast found another implementation)",
                          what);
}

/* ------------------------------------------------------------------ memory */

/* malloc-style wrappers that return NULL on failure (size overflow included).
 * Tests can make the n-th following allocation of this thread fail. */
void *poot_malloc(size_t size);
void *poot_calloc(size_t count, size_t size);
void *poot_realloc(void *ptr, size_t size);
void *poot_realloc_array(void *ptr, size_t count, size_t size);
void poot_free(void *ptr);
char *poot_strdup(const char *s);
char *poot_strndup(const char *s, size_t n);
/* Testing hook: fail the n-th allocation from now on this thread (1 = the
 * next); 0 disables. Returns how many allocations were made since set. */
void poot_alloc_fail_after(uint64_t n);
uint64_t poot_alloc_count_since_set(void);

/* Checked size arithmetic: return false on overflow. */
static inline bool poot_size_mul(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool poot_size_add(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* An arena: bump allocation in blocks, freed all at once. Storage is
 * caller-provided (init/deinit). Not thread safe. */
typedef struct poot_arena_block poot_arena_block;
typedef struct poot_arena {
  poot_arena_block *head;
  size_t block_size; /* default block payload size */
  size_t used_total; /* bytes handed out, for stats */
} poot_arena;

void poot_arena_init(poot_arena *arena, size_t block_size); /* 0 → 64 KiB */
void poot_arena_deinit(poot_arena *arena);                  /* frees everything */
/* Returns zeroed memory aligned to `align` (a power of two ≤ 4096), or NULL. */
void *poot_arena_alloc(poot_arena *arena, size_t size, size_t align);
char *poot_arena_strdup(poot_arena *arena, const char *s);
char *poot_arena_strndup(poot_arena *arena, const char *s, size_t n);
void *poot_arena_memdup(poot_arena *arena, const void *p, size_t size, size_t align);
#define POOT_ARENA_NEW(arena, T) ((T *)poot_arena_alloc((arena), sizeof(T), _Alignof(T)))
#define POOT_ARENA_NEW_ARRAY(arena, T, n)                                                          \
  ((T *)poot_arena_alloc((arena), sizeof(T) * (size_t)(n), _Alignof(T)))

/* ------------------------------------------------------------- containers */

/* A growable array of fixed-size elements (init/deinit). */
typedef struct poot_vec {
  void *data;
  size_t len;
  size_t cap;
  size_t elem_size;
} poot_vec;

void poot_vec_init(poot_vec *vec, size_t elem_size);
void poot_vec_deinit(poot_vec *vec);
POOT_MUST_USE poot_status poot_vec_reserve(poot_vec *vec, size_t cap);
POOT_MUST_USE poot_status poot_vec_resize(poot_vec *vec, size_t len); /* new elems zeroed */
/* Appends a copy of *elem (elem may be NULL: appends zeroes). */
POOT_MUST_USE poot_status poot_vec_push(poot_vec *vec, const void *elem);
void *poot_vec_at(const poot_vec *vec, size_t index); /* asserts index < len */
void poot_vec_clear(poot_vec *vec);
#define POOT_VEC_AT(vec, T, i) (((T *)(vec)->data)[(i)])

/* A growable byte string, always NUL-terminated (init/deinit). */
typedef struct poot_strbuf {
  char *data; /* "" when empty; owned */
  size_t len;
  size_t cap;
  bool failed; /* an append ran out of memory; later appends are ignored */
} poot_strbuf;

void poot_strbuf_init(poot_strbuf *sb);
void poot_strbuf_deinit(poot_strbuf *sb);
void poot_strbuf_append(poot_strbuf *sb, const char *s, size_t n);
void poot_strbuf_puts(poot_strbuf *sb, const char *s);
void poot_strbuf_putc(poot_strbuf *sb, char c);
void poot_strbuf_printf(poot_strbuf *sb, const char *fmt, ...) POOT_PRINTF(2, 3);
void poot_strbuf_vprintf(poot_strbuf *sb, const char *fmt, va_list ap);
void poot_strbuf_clear(poot_strbuf *sb);
/* OUT_OF_MEMORY if any append failed since init/clear. */
POOT_MUST_USE poot_status poot_strbuf_status(const poot_strbuf *sb);
/* Hands the buffer to the caller (free with poot_free); sb becomes empty. */
char *poot_strbuf_take(poot_strbuf *sb);

/* A hash map from byte-string keys to uint64 values (keys are copied).
 * Open addressing; not thread safe. */
typedef struct poot_map_entry poot_map_entry;
typedef struct poot_map {
  poot_map_entry *entries;
  size_t cap;        /* power of two or 0 */
  size_t len;        /* live entries */
  size_t tombstones; /* removed slots not yet reused */
} poot_map;

void poot_map_init(poot_map *map);
void poot_map_deinit(poot_map *map);
/* Inserts or replaces. */
POOT_MUST_USE poot_status poot_map_put(poot_map *map, const void *key, size_t key_len,
                                       uint64_t value);
/* Returns true and sets *out_value when found. out_value may be NULL. */
bool poot_map_get(const poot_map *map, const void *key, size_t key_len, uint64_t *out_value);
bool poot_map_remove(poot_map *map, const void *key, size_t key_len);
static inline POOT_MUST_USE poot_status poot_map_put_str(poot_map *m, const char *k, uint64_t v) {
  size_t n = 0;
  while (k[n]) n++;
  return poot_map_put(m, k, n, v);
}
static inline bool poot_map_get_str(const poot_map *m, const char *k, uint64_t *out) {
  size_t n = 0;
  while (k[n]) n++;
  return poot_map_get(m, k, n, out);
}
/* Iteration: for (size_t it = 0; poot_map_next(m, &it, &k, &kl, &v);) */
bool poot_map_next(const poot_map *map, size_t *iter, const void **out_key, size_t *out_key_len,
                   uint64_t *out_value);

/* Stable 64-bit hashing (same value on every run and machine). */
uint64_t poot_hash64(const void *data, size_t len, uint64_t seed);
uint64_t poot_hash64_mix(uint64_t h, uint64_t v);

/* A stable 128-bit hash (FNV-1a 128 over the bytes), for cache keys that
 * must not collide by chance; a cache still compares contents on a hit. */
typedef struct poot_hash128 {
  uint64_t lo, hi;
} poot_hash128;
poot_hash128 poot_hash128_of(const void *data, size_t len);
/* Folds the 8 bytes of v (little-endian order) into h. */
poot_hash128 poot_hash128_mix(poot_hash128 h, uint64_t v);
static inline bool poot_hash128_equal(poot_hash128 a, poot_hash128 b) {
  return a.lo == b.lo && a.hi == b.hi;
}

/* ----------------------------------------------------------------- logging */

typedef enum poot_log_level {
  POOT_LOG_ERROR = 0,
  POOT_LOG_WARN,
  POOT_LOG_INFO,
  POOT_LOG_DEBUG,
  POOT_LOG_TRACE
} poot_log_level;

/* Messages at or below the level go to stderr (default WARN). The level is
 * process-wide and set only by tools; logging is thread safe. */
void poot_log_set_level(poot_log_level level);
poot_log_level poot_log_get_level(void);
void poot_log(poot_log_level level, const char *fmt, ...) POOT_PRINTF(2, 3);
#define POOT_LOG_ENABLED(level) ((level) <= poot_log_get_level())

/* ------------------------------------------------------------------ timing */

uint64_t poot_time_ns(void); /* monotonic clock, nanoseconds */
static inline double poot_time_s(void) { return (double)poot_time_ns() * 1e-9; }

/* ------------------------------------------------------------------- files */

typedef struct poot_file_map {
  const uint8_t *data; /* read-only; NULL when size is 0 */
  size_t size;
  void *base_; /* private */
  size_t map_size_;
} poot_file_map;

/* Maps a whole file read-only. IO/NOT_FOUND with the path on failure;
 * INVALID_ARGUMENT naming the path when it is not a regular file (a folder,
 * FIFO, device or socket: refused at once, never blocked on). */
POOT_MUST_USE poot_status poot_file_map_open(const char *path, poot_file_map *out_map);
void poot_file_map_close(poot_file_map *map); /* NULL-safe, idempotent */
/* Reads a whole regular file into a NUL-terminated heap buffer (free with
 * poot_free); the same refusals as poot_file_map_open. */
POOT_MUST_USE poot_status poot_file_read_all(const char *path, char **out_data, size_t *out_size);
POOT_MUST_USE poot_status poot_file_write_all(const char *path, const void *data, size_t size);

/* --------------------------------------------------------- dynamic loading */

typedef struct poot_dylib poot_dylib;

typedef struct poot_dylib_symbol {
  const char *name; /* symbol name */
  void **out;       /* where the address is stored */
  bool optional;    /* when true, a missing symbol leaves *out NULL */
} poot_dylib_symbol;

/* Opens the first library of `names` (a NULL-terminated list) that loads.
 * NOT_FOUND naming every candidate and dlerror() when none does. */
POOT_MUST_USE poot_status poot_dylib_open(const char *const *names, poot_dylib **out_lib);
/* Resolves every symbol of the table; NOT_FOUND naming the first required
 * symbol that is missing (and the library). */
POOT_MUST_USE poot_status poot_dylib_load(poot_dylib *lib, const poot_dylib_symbol *table,
                                          size_t count);
const char *poot_dylib_name(const poot_dylib *lib);
void poot_dylib_close(poot_dylib *lib); /* NULL-safe */

/* ---------------------------------------------------------- half precision */

/* IEEE binary16 and bfloat16 conversions. Narrowing rounds to nearest even;
 * NaN stays NaN (quiet), infinities and signed zeros are kept, subnormals are
 * handled exactly. */
float poot_f16_to_f32(uint16_t h);
uint16_t poot_f32_to_f16(float f);
float poot_bf16_to_f32(uint16_t h);
uint16_t poot_f32_to_bf16(float f);
static inline uint32_t poot_f32_bits(float f) {
  union {
    float f;
    uint32_t u;
  } v = {.f = f};
  return v.u;
}
static inline float poot_f32_from_bits(uint32_t u) {
  union {
    uint32_t u;
    float f;
  } v = {.u = u};
  return v.f;
}

/* -------------------------------------------------------------------- JSON */

/* A small JSON DOM (RFC 8259), parsed into an arena. Numbers keep both their
 * text and a double; strings are decoded UTF-8 with their byte length (they
 * may contain NUL). Object members keep their order. */
typedef enum poot_json_type {
  POOT_JSON_NULL = 0,
  POOT_JSON_BOOL,
  POOT_JSON_NUMBER,
  POOT_JSON_STRING,
  POOT_JSON_ARRAY,
  POOT_JSON_OBJECT
} poot_json_type;

typedef struct poot_json poot_json;
struct poot_json {
  poot_json_type type;
  bool boolean;
  double number;
  const char *str; /* STRING: decoded bytes; NUMBER: the literal text */
  size_t len;      /* STRING: byte length; ARRAY/OBJECT: number of items */
  poot_json **items;     /* ARRAY/OBJECT values */
  const char **keys;     /* OBJECT keys (decoded, NUL-terminated) */
  size_t *key_lens;      /* OBJECT key byte lengths */
};

typedef struct poot_json_parse_options {
  size_t max_depth; /* 0 → 512 */
} poot_json_parse_options;

/* Parses `text` (len bytes) into `arena`. FORMAT naming the byte offset,
 * line and what was expected on malformed input. */
POOT_MUST_USE poot_status poot_json_parse(poot_arena *arena, const char *text, size_t len,
                                          const poot_json_parse_options *options,
                                          poot_json **out_root);
/* Object member lookup (first match) or NULL. */
const poot_json *poot_json_get(const poot_json *obj, const char *key);
/* Serializes compactly (Python json.dumps style separators when `python_style`:
 * ", " and ": "; otherwise "," and ":"). Non-ASCII is escaped as \uXXXX when
 * ensure_ascii. Appends to sb. */
void poot_json_write(poot_strbuf *sb, const poot_json *value, bool python_style, bool ensure_ascii);
/* Appends a JSON string literal for bytes s[0..n). JSON text is UTF-8: each
 * ill-formed sequence (its maximal subpart) is written as U+FFFD. */
void poot_json_write_string(poot_strbuf *sb, const char *s, size_t n, bool ensure_ascii);

#ifdef __cplusplus
}
#endif

#endif /* POOT_BASE_H */
