/* poot — the command-line tool. Dispatches to tools/cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "tool.h"

#define POOT_TOOL_COMMAND(n) extern const poot_tool_command poot_tool_cmd_##n;
#include "commands.inc"
#undef POOT_TOOL_COMMAND

static const poot_tool_command *const poot_commands[] = {
#define POOT_TOOL_COMMAND(n) &poot_tool_cmd_##n,
#include "commands.inc"
#undef POOT_TOOL_COMMAND
    NULL};

static void print_help(FILE *f) {
  fprintf(f,
          "poot %s — a compiler and runtime for transformer inference\n\n"
          "usage: poot [-v|-vv] COMMAND [FLAGS]   (poot COMMAND --help for each)\n\n"
          "commands:\n",
          POOT_VERSION_STRING);
  for (size_t i = 0; poot_commands[i]; i++)
    fprintf(f, "  %-12s %s\n", poot_commands[i]->name, poot_commands[i]->summary);
  fprintf(f,
          "\nflags:\n  --help       this text\n  --version    the version\n"
          "  -v, -vv      more logging (info, debug) for any command, before or after it\n");
}

/* Strips the global verbosity flags from argv (they may appear before or
 * after the command) and applies them; returns the new argc. */
static int take_global_flags(int argc, char **argv) {
  int out = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0) {
      poot_log_set_level(POOT_LOG_INFO);
    } else if (strcmp(argv[i], "-vv") == 0) {
      poot_log_set_level(POOT_LOG_DEBUG);
    } else {
      argv[out++] = argv[i];
    }
  }
  argv[out] = NULL;
  return out;
}

int main(int argc, char **argv) {
  argc = take_global_flags(argc, argv);
  if (argc < 2) {
    print_help(stderr);
    return POOT_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (poot_tool_is_help(cmd) || strcmp(cmd, "help") == 0) {
    print_help(stdout);
    return POOT_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("poot %s\n", POOT_VERSION_STRING);
    return POOT_EXIT_OK;
  }
  for (size_t i = 0; poot_commands[i]; i++) {
    if (strcmp(poot_commands[i]->name, cmd) == 0) return poot_commands[i]->main(argc - 1, argv + 1);
  }
  fprintf(stderr, "poot: unknown command '%s' (poot --help lists them)\n", cmd);
  return POOT_EXIT_USAGE;
}
