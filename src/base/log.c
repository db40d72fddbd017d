/* Logging to stderr with levels. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "poot/base.h"

static _Atomic int poot_log_level_value = POOT_LOG_WARN;
static pthread_mutex_t poot_log_mutex = PTHREAD_MUTEX_INITIALIZER;

void poot_log_set_level(poot_log_level level) { atomic_store(&poot_log_level_value, (int)level); }

poot_log_level poot_log_get_level(void) {
  return (poot_log_level)atomic_load(&poot_log_level_value);
}

void poot_log(poot_log_level level, const char *fmt, ...) {
  if (!POOT_LOG_ENABLED(level)) return;
  static const char *const names[] = {"error", "warning", "info", "debug", "trace"};
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&poot_log_mutex);
  fprintf(stderr, "poot: %s: ", names[level <= POOT_LOG_TRACE ? level : POOT_LOG_TRACE]);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  pthread_mutex_unlock(&poot_log_mutex);
  va_end(ap);
}
