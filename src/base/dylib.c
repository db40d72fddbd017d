/* Vendor runtimes are loaded at run time (DESIGN §6): a table of symbols is
 * resolved at once and the first missing one is named. */
#include <dlfcn.h>
#include <string.h>

#include "poot/base.h"

struct poot_dylib {
  void *handle;
  char *name;
};

poot_status poot_dylib_open(const char *const *names, poot_dylib **out_lib) {
  *out_lib = NULL;
  poot_strbuf why;
  poot_strbuf_init(&why);
  for (size_t i = 0; names && names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) {
      poot_strbuf_deinit(&why);
      poot_dylib *lib = poot_calloc(1, sizeof *lib);
      char *name = poot_strdup(names[i]);
      if (!lib || !name) {
        poot_free(lib);
        poot_free(name);
        dlclose(h);
        return poot_status_make(POOT_OUT_OF_MEMORY, "loading '%s'", names[i]);
      }
      lib->handle = h;
      lib->name = name;
      *out_lib = lib;
      return NULL;
    }
    const char *err = dlerror();
    poot_strbuf_printf(&why, "%s%s", why.len ? "; " : "", err ? err : names[i]);
  }
  poot_status st = poot_status_make(POOT_NOT_FOUND, "no library could be loaded (%s)",
                                    why.len ? why.data : "no candidates");
  poot_strbuf_deinit(&why);
  return st;
}

poot_status poot_dylib_load(poot_dylib *lib, const poot_dylib_symbol *table, size_t count) {
  for (size_t i = 0; i < count; i++) {
    dlerror();
    void *p = dlsym(lib->handle, table[i].name);
    if (!p && !table[i].optional) {
      for (size_t j = 0; j < i; j++) *table[j].out = NULL;
      return poot_status_make(POOT_NOT_FOUND, "'%s' has no symbol '%s' (the runtime is too old?)",
                              lib->name, table[i].name);
    }
    *table[i].out = p;
  }
  return NULL;
}

const char *poot_dylib_name(const poot_dylib *lib) { return lib ? lib->name : ""; }

void poot_dylib_close(poot_dylib *lib) {
  if (!lib) return;
  if (lib->handle) dlclose(lib->handle);
  poot_free(lib->name);
  poot_free(lib);
}
