/* tools/tool.h — what every poot subcommand shares. Flags are parsed only
 * here, in tools/ (STYLE.md). Exit codes: 0 success, 1 failure with a one-line
 * message naming the cause, 2 bad usage. */
#ifndef POOT_TOOLS_TOOL_H
#define POOT_TOOLS_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include "poot/base.h"

enum { POOT_EXIT_OK = 0, POOT_EXIT_FAIL = 1, POOT_EXIT_USAGE = 2 };

typedef struct poot_tool_command {
  const char *name;
  const char *summary; /* one line for `poot --help` */
  /* argv[0] is the subcommand's name; flags follow. */
  int (*main)(int argc, char **argv);
} poot_tool_command;

/* Prints "poot NAME: message" for a failed status, frees it, returns 1. */
int poot_tool_fail(const char *cmd, poot_status status);
/* Prints "poot NAME: message" and "try 'poot NAME --help'", returns 2. */
int poot_tool_usage_error(const char *cmd, const char *fmt, ...) POOT_PRINTF(2, 3);
/* True when argv[i] is -h or --help. */
bool poot_tool_is_help(const char *arg);
/* For a flag that takes a value: returns argv[i+1] and advances *i, or NULL
 * (after printing a usage error) when it is missing. */
const char *poot_tool_flag_value(const char *cmd, int argc, char **argv, int *i);
/* Parses a whole integer flag value; false (after a usage error) when it is not one. */
bool poot_tool_parse_i64(const char *cmd, const char *flag, const char *text, long long *out);
bool poot_tool_parse_f64(const char *cmd, const char *flag, const char *text, double *out);
/* Reads all of stdin into a heap buffer (poot_free). */
poot_status poot_tool_read_stdin(char **out_data, size_t *out_size);

#endif
