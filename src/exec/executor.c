/* The executor interface's public half (poot/exec.h §2): argument checks
 * once, then the implementation's entry. */
#include <string.h>

#include "poot/exec.h"

poot_status poot_exec_target_set(poot_executor *executor, const poot_exec_target *target) {
  return executor->vt->target_set(executor, target);
}

void poot_exec_target_get(const poot_executor *executor, poot_exec_target *out_target) {
  executor->vt->target_get(executor, out_target);
}

poot_status poot_exec_load_weights(poot_executor *executor, size_t count,
                                   const poot_exec_weight *weights) {
  if (count && !weights)
    return poot_status_make(POOT_INVALID_ARGUMENT, "load_weights: %zu weights but no array", count);
  return executor->vt->load_weights(executor, count, weights);
}

poot_status poot_exec_add_entry(poot_executor *executor, const poot_exec_entry_key *key,
                                const poot_graph *graph, uint32_t *out_entry,
                                poot_exec_bindings *out_bindings) {
  *out_entry = UINT32_MAX;
  if (out_bindings) *out_bindings = (poot_exec_bindings){.entry = UINT32_MAX};
  if (!graph) return poot_status_make(POOT_INVALID_ARGUMENT, "add_entry: no graph");
  POOT_TRY(executor->vt->add_entry(executor, key, graph, out_entry));
  return out_bindings ? executor->vt->bindings(executor, *out_entry, out_bindings) : NULL;
}

poot_status poot_exec_entry_bindings(const poot_executor *executor, uint32_t entry,
                                     poot_exec_bindings *out_bindings) {
  *out_bindings = (poot_exec_bindings){.entry = UINT32_MAX};
  return executor->vt->bindings(executor, entry, out_bindings);
}

/* The entry's binding names, for a message: "'token', 'pos'" or "none". */
static void binding_names(const poot_exec_bindings *b, poot_strbuf *sb) {
  for (uint32_t i = 0; i < b->count; i++)
    poot_strbuf_printf(sb, "%s'%s'", i ? ", " : "", b->items[i].name);
  if (!b->count) poot_strbuf_puts(sb, "none");
}

poot_status poot_exec_entry_slot(const poot_executor *executor, uint32_t entry, const char *name,
                                 poot_exec_slot *out_slot) {
  *out_slot = (poot_exec_slot){.entry = UINT32_MAX, .index = UINT32_MAX};
  if (!name) return poot_status_make(POOT_INVALID_ARGUMENT, "entry_slot: no name");
  poot_exec_bindings b;
  POOT_TRY(poot_exec_entry_bindings(executor, entry, &b));
  for (uint32_t i = 0; i < b.count; i++) {
    if (strcmp(b.items[i].name, name) != 0) continue;
    *out_slot = b.items[i].slot;
    return NULL;
  }
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  binding_names(&b, &sb);
  poot_status st =
      poot_status_make(POOT_INVALID_ARGUMENT,
                       "entry_slot: entry %u has no slot or input '%s' (its graph declares %s)",
                       entry, name, sb.failed ? "?" : sb.data);
  poot_strbuf_deinit(&sb);
  return st;
}

/* A value step may hand to the entry: a handle of this entry, in range, and
 * a tensor of the binding's type. */
static poot_status check_value(const poot_exec_bindings *b, size_t at,
                               const poot_exec_slot_value *v) {
  if (v->slot.entry != b->entry || v->slot.index >= b->count)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "step: input %zu is slot %u of entry %u, which entry %u does not "
                            "have (it has %u)",
                            at, v->slot.index, v->slot.entry, b->entry, b->count);
  const poot_exec_binding *bd = &b->items[v->slot.index];
  if (!v->tensor)
    return poot_status_make(POOT_INVALID_ARGUMENT, "step: %s '%s' has no tensor",
                            bd->is_input ? "input" : "slot", bd->name);
  if (poot_type_equal(&bd->type, &v->tensor->type)) return NULL;
  poot_strbuf want, got;
  poot_strbuf_init(&want);
  poot_strbuf_init(&got);
  poot_type_format(&want, &bd->type);
  poot_type_format(&got, &v->tensor->type);
  poot_status st =
      poot_status_make(POOT_INVALID_ARGUMENT, "step: %s '%s' is %s; the caller gave %s",
                       bd->is_input ? "input" : "slot", bd->name, want.failed ? "?" : want.data,
                       got.failed ? "?" : got.data);
  poot_strbuf_deinit(&want);
  poot_strbuf_deinit(&got);
  return st;
}

poot_status poot_exec_step(poot_executor *executor, uint32_t entry, const poot_exec_step_io *io) {
  if (io && io->input_count && !io->inputs)
    return poot_status_make(POOT_INVALID_ARGUMENT, "step: %zu inputs but no array",
                            io->input_count);
  if (io && io->input_count) {
    poot_exec_bindings b;
    POOT_TRY(poot_exec_entry_bindings(executor, entry, &b));
    for (size_t i = 0; i < io->input_count; i++) POOT_TRY(check_value(&b, i, &io->inputs[i]));
  }
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
