/* File mapping and whole-file reads and writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "poot/base.h"

static poot_status poot_file_errno(const char *what, const char *path, int err) {
  poot_status_code code = (err == ENOENT || err == ENOTDIR) ? POOT_NOT_FOUND : POOT_IO;
  return poot_status_make(code, "%s '%s': %s", what, path, strerror(err));
}

poot_status poot_file_map_open(const char *path, poot_file_map *out_map) {
  *out_map = (poot_file_map){0};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return poot_file_errno("cannot open", path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return poot_file_errno("cannot stat", path, err);
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return poot_status_make(POOT_INVALID_ARGUMENT, "'%s' is a folder, not a file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return NULL;
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return poot_file_errno("cannot map", path, err);
  out_map->base_ = p;
  out_map->map_size_ = (size_t)st.st_size;
  out_map->data = p;
  out_map->size = (size_t)st.st_size;
  return NULL;
}

void poot_file_map_close(poot_file_map *map) {
  if (!map) return;
  if (map->base_) munmap(map->base_, map->map_size_);
  *map = (poot_file_map){0};
}

poot_status poot_file_read_all(const char *path, char **out_data, size_t *out_size) {
  *out_data = NULL;
  if (out_size) *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return poot_file_errno("cannot open", path, errno);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) poot_strbuf_append(&sb, buf, n);
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    poot_strbuf_deinit(&sb);
    return poot_status_make(POOT_IO, "reading '%s' failed", path);
  }
  poot_status st = poot_strbuf_status(&sb);
  if (st) {
    poot_strbuf_deinit(&sb);
    return poot_status_annotate(st, "reading '%s'", path);
  }
  if (out_size) *out_size = sb.len;
  *out_data = poot_strbuf_take(&sb);
  if (!*out_data) return poot_status_make(POOT_OUT_OF_MEMORY, "reading '%s'", path);
  return NULL;
}

poot_status poot_file_write_all(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return poot_file_errno("cannot create", path, errno);
  size_t w = size ? fwrite(data, 1, size, f) : 0;
  int err = errno;
  if (fclose(f) != 0 || w != size) return poot_file_errno("cannot write", path, err ? err : EIO);
  return NULL;
}
