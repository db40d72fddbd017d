/* Runtime data next to the tree or under an install prefix (tool.h): the
 * bundled demo model, the chat page. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

static bool exists(const char *path) {
  return access(path, R_OK) == 0;
}

bool poot_tool_find_data(const char *rel, char *buf, size_t size) {
  const char *src = __FILE__; /* …/tools/support_demo.c */
  const char *slash = strrchr(src, '/');
  if (slash && slash != src) {
    size_t n = (size_t)(slash - src);
    snprintf(buf, size, "%.*s/../%s", (int)n, src, rel);
    if (exists(buf)) return true;
  }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = 0;
    char *s = strrchr(exe, '/');
    if (s) {
      *s = 0;
      static const char *const up[] = {"/../share/poot/", "/../", "/../../"};
      for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
        snprintf(buf, size, "%s%s%s", exe, up[i], rel);
        if (exists(buf)) return true;
      }
    }
  }
  snprintf(buf, size, "%s", rel);
  return exists(buf);
}

bool poot_tool_find_demo(char *buf, size_t size) {
  return poot_tool_find_data(POOT_TOOL_DEMO_MODEL, buf, size);
}

const char *poot_tool_default_model(const char *cmd, const char *model, char *buf, size_t size) {
  if (model) return model;
  if (poot_tool_find_demo(buf, size)) return buf;
  fprintf(stderr,
          "poot %s: the demo model " POOT_TOOL_DEMO_MODEL
          " was not found (next to the source tree, under <prefix>/share/poot, or in the current "
          "directory); give -m MODEL\n",
          cmd);
  return NULL;
}

const char *poot_tool_stop_reason_name(poot_driver_stop_reason reason) {
  switch (reason) {
    case POOT_DRIVER_STOP_LENGTH:
      return "length";
    case POOT_DRIVER_STOP_ID:
      return "stop_id";
    case POOT_DRIVER_STOP_STRING:
      return "stop_string";
    case POOT_DRIVER_STOP_CAPACITY:
      return "capacity";
    case POOT_DRIVER_STOP_GRAMMAR:
      return "grammar";
  }
  return "unknown";
}

void poot_tool_write_probs(poot_strbuf *sb, const poot_driver_generate_result *r) {
  poot_strbuf_puts(sb, "[");
  for (size_t i = 0; r->probs && i < r->n_ids; i++) {
    const poot_sampling_result *p = &r->probs[i];
    poot_strbuf_printf(sb, "%s{\"token\":%d,\"logprob\":%.6g,\"top\":[", i ? "," : "",
                       (int)p->token, (double)p->logprob);
    for (uint32_t k = 0; k < p->n_top; k++)
      poot_strbuf_printf(sb, "%s{\"token\":%d,\"logprob\":%.6g}", k ? "," : "",
                         (int)p->top[k].token, (double)p->top[k].logprob);
    poot_strbuf_puts(sb, "]}");
  }
  poot_strbuf_puts(sb, "]");
}
