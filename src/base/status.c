/* poot_status: an owned code + message; NULL is OK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poot/base.h"

struct poot_status_s {
  poot_status_code code;
  bool is_static; /* the shared out-of-memory status; never freed */
  const char *message;
  char storage[];
};

/* Returned when a status cannot be allocated: the message says so. */
static struct poot_status_s poot_status_oom = {POOT_OUT_OF_MEMORY, true,
                                               "out of memory (while reporting an error)"};

static const char *const poot_status_names[POOT_STATUS_CODE_COUNT] = {
    [POOT_OK] = "OK",
    [POOT_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
    [POOT_NOT_FOUND] = "NOT_FOUND",
    [POOT_OUT_OF_MEMORY] = "OUT_OF_MEMORY",
    [POOT_UNSUPPORTED] = "UNSUPPORTED",
    [POOT_FORMAT] = "FORMAT",
    [POOT_IO] = "IO",
    [POOT_CAPACITY] = "CAPACITY",
    [POOT_DEVICE_LOST] = "DEVICE_LOST",
    [POOT_KERNEL_FAULT] = "KERNEL_FAULT",
    [POOT_TIMEOUT] = "TIMEOUT",
    [POOT_POISONED] = "POISONED",
    [POOT_NEEDS_RESET] = "NEEDS_RESET",
    [POOT_NO_DEVICE] = "NO_DEVICE",
    [POOT_CANCELLED] = "CANCELLED",
    [POOT_INTERNAL] = "INTERNAL",
};

const char *poot_status_code_name(poot_status_code code) {
  if ((unsigned)code >= POOT_STATUS_CODE_COUNT) return "UNKNOWN";
  return poot_status_names[code];
}

poot_status poot_status_makev(poot_status_code code, const char *fmt, va_list ap) {
  if (code == POOT_OK) code = POOT_INTERNAL; /* a failure must never read as OK */
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  /* Status allocation bypasses the failure-injection hook on purpose: the
   * report of a failure must not itself fail in tests. */
  struct poot_status_s *s = malloc(sizeof *s + (size_t)n + 1);
  if (!s) return &poot_status_oom;
  s->code = code;
  s->is_static = false;
  vsnprintf(s->storage, (size_t)n + 1, fmt, ap);
  s->message = s->storage;
  return s;
}

poot_status poot_status_make(poot_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  poot_status s = poot_status_makev(code, fmt, ap);
  va_end(ap);
  return s;
}

poot_status poot_status_annotate(poot_status status, const char *fmt, ...) {
  if (!status) return NULL;
  if (status->is_static) return status;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  /* The ": " between context and message is added here; a prefix that
   * already ends with one would print a doubled ": :". */
  size_t n = strlen(prefix);
  while (n > 0 && (prefix[n - 1] == ' ' || prefix[n - 1] == ':')) prefix[--n] = '\0';
  poot_status out = poot_status_make(status->code, "%s: %s", prefix, status->message);
  if (out->is_static) return status; /* keep the original when out of memory */
  poot_status_free(status);
  return out;
}

poot_status_code poot_status_code_of(poot_status status) {
  return status ? status->code : POOT_OK;
}

const char *poot_status_message(poot_status status) { return status ? status->message : ""; }

void poot_status_free(poot_status status) {
  if (status && !status->is_static) free(status);
}

poot_status_code poot_status_consume(poot_status status) {
  poot_status_code c = poot_status_code_of(status);
  poot_status_free(status);
  return c;
}
