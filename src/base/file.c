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

static const char *poot_file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* Opens path for reading only when it is a regular file. O_NONBLOCK keeps
 * open() of a FIFO without a writer from blocking forever; fstat then refuses
 * anything but a regular file, and the flag is cleared again (it has no
 * effect on regular files anyway). */
static poot_status poot_file_open_regular(const char *path, int *out_fd, struct stat *out_st) {
  *out_fd = -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return poot_file_errno("cannot open", path, errno);
  if (fstat(fd, out_st) != 0) {
    int err = errno;
    close(fd);
    return poot_file_errno("cannot stat", path, err);
  }
  if (!S_ISREG(out_st->st_mode)) {
    close(fd);
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "'%s' is %s, not a regular file: poot reads only regular files", path,
                            poot_file_kind(out_st->st_mode));
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *out_fd = fd;
  return NULL;
}

poot_status poot_file_map_open(const char *path, poot_file_map *out_map) {
  *out_map = (poot_file_map){0};
  int fd = -1;
  struct stat st;
  POOT_TRY(poot_file_open_regular(path, &fd, &st));
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
  int fd = -1;
  struct stat info;
  POOT_TRY(poot_file_open_regular(path, &fd, &info));
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int err = errno;
    close(fd);
    return poot_file_errno("cannot open", path, err);
  }
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
