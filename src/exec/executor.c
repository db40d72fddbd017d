/* The executor interface's public half (poot/exec.h §2): argument checks
 * once, then the implementation's entry. */
#include "poot/exec.h"

poot_status poot_exec_target_set(poot_executor *executor, const poot_exec_target *target) {
  return executor->vt->target_set(executor, target);
}

poot_status poot_exec_load_weights(poot_executor *executor, size_t count,
                                   const poot_exec_weight *weights) {
  if (count && !weights)
    return poot_status_make(POOT_INVALID_ARGUMENT, "load_weights: %zu weights but no array", count);
  return executor->vt->load_weights(executor, count, weights);
}

poot_status poot_exec_add_entry(poot_executor *executor, const poot_exec_entry_key *key,
                                const poot_graph *graph, uint32_t *out_entry) {
  *out_entry = UINT32_MAX;
  if (!graph) return poot_status_make(POOT_INVALID_ARGUMENT, "add_entry: no graph");
  return executor->vt->add_entry(executor, key, graph, out_entry);
}

poot_status poot_exec_step(poot_executor *executor, uint32_t entry, const poot_exec_step_io *io) {
  if (io && io->input_count && !io->inputs)
    return poot_status_make(POOT_INVALID_ARGUMENT, "step: %zu inputs but no array",
                            io->input_count);
  if (io)
    for (size_t i = 0; i < io->input_count; i++)
      if (!io->inputs[i].name || !io->inputs[i].tensor)
        return poot_status_make(POOT_INVALID_ARGUMENT, "step: input %zu has no name or tensor", i);
  return executor->vt->step(executor, entry, io);
}

poot_status poot_exec_reset_state(poot_executor *executor) {
  return executor->vt->reset_state(executor);
}

poot_status poot_exec_remove_entry(poot_executor *executor, uint32_t entry) {
  return executor->vt->remove_entry(executor, entry);
}

void poot_exec_stats_get(const poot_executor *executor, poot_exec_stats *out_stats) {
  executor->vt->stats(executor, out_stats);
}

void poot_exec_unload(poot_executor *executor) {
  executor->vt->unload(executor);
}

void poot_executor_destroy(poot_executor *executor) {
  if (executor) executor->vt->destroy(executor);
}
