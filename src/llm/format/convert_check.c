/* The last step of `poot convert`: the GGUF is written under a temporary
 * name, checked with the loader's own checks (poot_model_check_file), and
 * only then renamed to its place. A file poot would refuse (a million
 * layers, a negative rope_theta, no vocabulary, a missing projection) is
 * deleted and its refusal is the conversion's error.
 *
 * A GGUF input is re-typed with its metadata copied as it is; when poot does
 * not run the input itself (a vocabulary-only file, another architecture),
 * the output is not checked either, so re-typing stays a faithful copy. A
 * GGUF input that runs must give an output that runs. */
#include <stdio.h>

#include "convert_impl.h"
#include "poot/llm/model.h"

poot_status poot__convert_write_checked(poot_gguf_writer *w, const char *input,
                                        bool gguf_input, const char *output) {
  if (gguf_input) {
    poot_status runs = poot_model_check_file(input);
    if (runs) {
      poot_status_free(runs);
      return poot_gguf_writer_write_file(w, output);
    }
  }
  poot_strbuf tmp;
  poot_strbuf_init(&tmp);
  poot_strbuf_printf(&tmp, "%s.unchecked", output);
  poot_status st = poot_strbuf_status(&tmp);
  if (!st) st = poot_gguf_writer_write_file(w, tmp.data);
  if (st) goto done;
  st = poot_model_check_file(tmp.data);
  if (st) {
    remove(tmp.data);
    st = poot_status_annotate(st,
                              "convert: the written GGUF would not load, so '%s' was not written",
                              output);
    goto done;
  }
  if (rename(tmp.data, output) != 0) {
    remove(tmp.data);
    st = poot_status_make(POOT_IO, "convert: cannot rename '%s' to '%s'", tmp.data, output);
  }
done:
  poot_strbuf_deinit(&tmp);
  return st;
}
