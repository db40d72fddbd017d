/* poot devices [--json]: the backends found on this machine, with their
 * devices and why the others are absent (DESIGN §11). */
#include <stdio.h>
#include <string.h>

#include "poot/devices.h"
#include "tool.h"

static const char synopsis[] =
    "usage: poot devices [--json]\n"
    "\n"
    "Lists every backend (ptx, rocm, vulkan, wgpu, npu), whether this binary has it\n"
    "and found its runtime, each device it can open (index, kind, name) and, for\n"
    "whatever is absent or refused, the reason. `--device backend:index` of the\n"
    "other commands takes the indices shown here.\n"
    "\n";

static void print_json(const poot_backend_report *r) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_strbuf_puts(&sb, "{\"backends\":[");
  for (int b = 0; b < POOT_BACKEND_COUNT; b++) {
    if (b) poot_strbuf_putc(&sb, ',');
    poot_strbuf_printf(&sb,
                       "{\"name\":\"%s\",\"built\":%s,\"present\":%s,\"reason\":", r[b].backend,
                       r[b].built ? "true" : "false", r[b].present ? "true" : "false");
    poot_json_write_string(&sb, r[b].reason, strlen(r[b].reason), true);
    poot_strbuf_puts(&sb, ",\"devices\":[");
    for (uint32_t i = 0; i < r[b].device_count; i++) {
      const poot_device_info *d = &r[b].devices[i];
      if (i) poot_strbuf_putc(&sb, ',');
      poot_strbuf_printf(&sb, "{\"index\":%u,\"kind\":\"%s\",\"usable\":%s,\"name\":", d->index,
                         d->kind, d->usable ? "true" : "false");
      poot_json_write_string(&sb, d->name, strlen(d->name), true);
      poot_strbuf_puts(&sb, ",\"why\":");
      poot_json_write_string(&sb, d->why, strlen(d->why), true);
      poot_strbuf_putc(&sb, '}');
    }
    poot_strbuf_puts(&sb, "]}");
  }
  poot_strbuf_puts(&sb, "]}\n");
  fputs(sb.data, stdout);
  poot_strbuf_deinit(&sb);
}

static int devices_main(int argc, char **argv) {
  const char *cmd = "devices";
  bool json = false;
  const poot_tool_option options[] = {
      {POOT_FLAG_JSON, &json, "print one JSON object instead of text", 0, 0},
  };
  const poot_tool_cli cli = {.cmd = cmd,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  poot_backend_report r[POOT_BACKEND_COUNT];
  poot_status st = poot_devices_probe(r);
  if (st) return poot_tool_fail(cmd, st);
  if (json) {
    print_json(r);
    return POOT_EXIT_OK;
  }
  for (int b = 0; b < POOT_BACKEND_COUNT; b++) {
    if (!r[b].present) {
      printf("%-7s absent: %s\n", r[b].backend, r[b].reason);
    } else {
      printf("%-7s present (%s)\n", r[b].backend, r[b].reason);
    }
    for (uint32_t i = 0; i < r[b].device_count; i++) {
      const poot_device_info *d = &r[b].devices[i];
      if (d->usable)
        printf("  %s:%u  %-10s %s\n", r[b].backend, d->index, d->kind, d->name);
      else
        printf("  %s:%u  %-10s %s (refused: %s)\n", r[b].backend, d->index, d->kind, d->name,
               d->why);
    }
  }
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_devices = {
    "devices", "list the backends and devices on this machine", devices_main};
