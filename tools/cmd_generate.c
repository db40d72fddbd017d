/* poot generate — text generation on a device. The execution layer (the
 * executor, the engine and the first device) is not built yet, so this
 * command says so and fails; see README.md. */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static int generate_main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (poot_tool_is_help(argv[i])) {
      printf("usage: poot generate [-m MODEL] [-p PROMPT] [-n N] [--device D] [--ids]\n\n"
             "Generates text. Without -m it uses the project's bundled demo model.\n"
             "Not available yet: generation needs the execution layer, which this build\n"
             "does not have.\n");
      return POOT_EXIT_OK;
    }
  }
  fprintf(stderr, "poot generate: generation is not built yet (the execution layer and its "
                  "devices come in a later version); try 'poot --help' for what works now\n");
  return POOT_EXIT_FAIL;
}

const poot_tool_command poot_tool_cmd_generate = {"generate", "generate text (not built yet)",
                                                  generate_main};
