/* The chat page's static files (docs/serve.md "The chat page"): GET / is
 * the folder's index.html, GET /NAME one of its files. Only plain names
 * ([A-Za-z0-9_-]+ "." [a-z]+) are served, so nothing outside the folder is
 * reachable; the files are read on each request (they are small). */
#include <stdio.h>
#include <string.h>

#include "serve_impl.h"

static const struct {
  const char *ext, *type;
} TYPES[] = {{"html", "text/html; charset=utf-8"},
             {"css", "text/css; charset=utf-8"},
             {"js", "text/javascript; charset=utf-8"},
             {"json", "application/json"},
             {"png", "image/png"},
             {"svg", "image/svg+xml"},
             {"ico", "image/x-icon"}};

/* The content type of a servable name, or NULL. */
static const char *type_of(const char *name) {
  size_t n = strlen(name), dot = 0, dots = 0;
  if (n == 0 || n > 64) return NULL;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (c == '.') {
      dot = i;
      dots++;
    } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_')) {
      return NULL;
    }
  }
  if (dots != 1 || dot == 0 || dot + 1 == n) return NULL;
  for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
    if (strcmp(name + dot + 1, TYPES[i].ext) == 0) return TYPES[i].type;
  return NULL;
}

bool poot__serve_page_path(const char *url) {
  return strcmp(url, "/") == 0 || (url[0] == '/' && type_of(url + 1));
}

unsigned poot__serve_page(const char *dir, const char *url, poot__http_response *out) {
  const char *name = strcmp(url, "/") == 0 ? "index.html" : url + 1;
  const char *type = type_of(name);
  char path[4096];
  if (!dir || !type || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
    return 404;
  char *data = NULL;
  size_t len = 0;
  poot_status st = poot_file_read_all(path, &data, &len);
  if (st) {
    poot_status_free(st);
    return 404;
  }
  out->status = 200;
  out->content_type = type;
  out->body = data;
  out->body_len = len;
  out->header_name = "Cache-Control";
  out->header_value = "no-cache";
  return 200;
}
