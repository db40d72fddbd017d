/* Shared helpers of the poot subcommands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int poot_tool_fail(const char *cmd, poot_status status) {
  fprintf(stderr, "poot %s: %s\n", cmd, poot_status_message(status));
  poot_status_free(status);
  return POOT_EXIT_FAIL;
}

int poot_tool_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "poot %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\ntry 'poot %s --help'\n", cmd);
  va_end(ap);
  return POOT_EXIT_USAGE;
}

bool poot_tool_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

const char *poot_tool_flag_value(const char *cmd, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    (void)poot_tool_usage_error(cmd, "flag %s needs a value", argv[*i]);
    return NULL;
  }
  *i += 1;
  return argv[*i];
}

bool poot_tool_parse_i64(const char *cmd, const char *flag, const char *text, long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end) {
    (void)poot_tool_usage_error(cmd, "%s takes a whole number, not '%s'", flag, text);
    return false;
  }
  *out = v;
  return true;
}

bool poot_tool_parse_f64(const char *cmd, const char *flag, const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end) {
    (void)poot_tool_usage_error(cmd, "%s takes a number, not '%s'", flag, text);
    return false;
  }
  *out = v;
  return true;
}

poot_status poot_tool_read_stdin(char **out_data, size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) poot_strbuf_append(&sb, buf, n);
  if (ferror(stdin)) {
    poot_strbuf_deinit(&sb);
    return poot_status_make(POOT_IO, "reading standard input failed");
  }
  poot_status st = poot_strbuf_status(&sb);
  if (st) {
    poot_strbuf_deinit(&sb);
    return st;
  }
  *out_size = sb.len;
  *out_data = poot_strbuf_take(&sb);
  return NULL;
}
