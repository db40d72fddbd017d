/* The options and the default pipeline: canonicalize, constant-fold, CSE and
 * DCE, round after round, until a round changes nothing. */
#include <string.h>

#include "passes_impl.h"

void poot_pass_options_init(poot_pass_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->fold_max_bytes = 65536;
  options->fold_generators = false;
  options->max_rounds = 8;
}

typedef poot_status (*pass_fn)(const poot_graph *, const poot_pass_options *, poot_graph **,
                               uint32_t *);

poot_status poot_pass_run_default(const poot_graph *graph, const poot_pass_options *options,
                                  poot_graph **out_graph, poot_pass_report *out_report) {
  if (out_graph) *out_graph = NULL;
  if (out_report) memset(out_report, 0, sizeof *out_report);
  if (!graph || !out_graph)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_pass_run_default: NULL argument");
  poot_pass_options defaults;
  poot_pass_options_init(&defaults);
  const poot_pass_options *opt = options ? options : &defaults;
  static const pass_fn passes[4] = {poot_pass_canonicalize, poot_pass_constant_fold, poot_pass_cse,
                                    poot_pass_dce};
  poot_pass_report report;
  memset(&report, 0, sizeof report);
  uint32_t *counts[4] = {&report.canonicalized, &report.folded, &report.merged, &report.removed};
  poot_graph *cur = NULL; /* NULL: still the input */
  const uint32_t max_rounds = opt->max_rounds ? opt->max_rounds : 1;
  for (uint32_t round = 0; round < max_rounds; round++) {
    uint32_t changed = 0;
    for (int p = 0; p < 4; p++) {
      poot_graph *next = NULL;
      uint32_t c = 0;
      poot_status st = passes[p](cur ? cur : graph, opt, &next, &c);
      if (st) {
        poot_graph_destroy(cur);
        return st;
      }
      poot_graph_destroy(cur);
      cur = next;
      *counts[p] += c;
      changed += c;
    }
    report.rounds++;
    if (!changed) break;
  }
  *out_graph = cur;
  if (out_report) *out_report = report;
  return NULL;
}
