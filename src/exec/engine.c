/* The generic engine: the executor of poot/exec.h §2 implemented once over
 * the device interface. An entry is a compiled plan with its device buffers,
 * kernels and one recording; weights and states belong to the executor and
 * are shared by every entry that names them. */
#include <stdio.h>
#include <string.h>

#include "poot/compile.h"
#include "poot/exec.h"

typedef struct engine_weight {
  char *name; /* display name, for messages */
  poot_type type;
  poot_device_buffer *buf;
} engine_weight;

typedef struct engine_state {
  char *name;
  poot_type type;
  uint64_t size;
  poot_device_buffer *buf;
} engine_state;

/* Where a binding's value goes in the entry's plan. */
typedef enum engine_place {
  ENGINE_PLACE_NONE = 0, /* the passes removed the leaf: a value is dropped */
  ENGINE_PLACE_SLOT,     /* words in the slot buffer */
  ENGINE_PLACE_INPUT,    /* an input buffer */
} engine_place;

typedef struct engine_target {
  engine_place place;
  uint32_t at; /* SLOT: the first word; INPUT: the plan buffer */
} engine_target;

typedef struct engine_entry {
  char *key;
  uint32_t id;
  poot_plan *plan;
  uint32_t binding_count;
  poot_exec_binding *binds;  /* what the graph declares (names owned) */
  engine_target *targets;    /* per binding */
  poot_device_buffer **bufs; /* per plan buffer */
  bool *owned;               /* bufs[i] belongs to the entry (not a weight or state) */
  poot_device_cmd *cmds;
  poot_device_buffer **bindings; /* every dispatch's buffers, flattened */
  poot_device_recording *rec;
  uint64_t output_bytes;
} engine_entry;

typedef struct engine {
  poot_executor base; /* first member */
  poot_device *dev;
  poot_kir_target target;
  poot_exec_target opts;
  poot_vec weights;      /* engine_weight */
  poot_map weight_index; /* poot_weight_key → index in weights */
  poot_vec states;       /* engine_state */
  poot_map state_index;
  poot_vec entries; /* engine_entry*, NULL when removed */
  poot_map entry_index;
  bool needs_reset;
  char reset_reason[512];
  /* The entry of a step submitted with io.queue whose replay is pending (not
   * yet waited for); NULL otherwise. */
  engine_entry *queued;
  poot_exec_stats stats;
  uint64_t weight_bytes;
} engine;

/* The engine's type tag: its vtable (STYLE: interfaces). */
static const poot_executor_vtable engine_vtable;

/* Checked downcast: NULL for another implementation's executor (the entries
 * that return a status say INTERNAL, the others do nothing). */
static engine *engine_cast(poot_executor *e) {
  return POOT_DOWNCAST(engine, base, e, &engine_vtable);
}

static poot_status refuse_if_poisoned(const engine *e) {
  if (!poot_device_is_poisoned(e->dev)) return NULL;
  return poot_status_make(POOT_POISONED, "engine: the %s device '%s' was poisoned (%s)",
                          e->dev->caps.backend, e->dev->caps.name, e->dev->poison_reason);
}

/* A step's fault (KERNEL_FAULT, TIMEOUT, DEVICE_LOST) makes every later step
 * NEEDS_RESET until reset_state. */
static poot_status note_fault(engine *e, poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  if (c == POOT_KERNEL_FAULT || c == POOT_TIMEOUT || c == POOT_DEVICE_LOST) {
    e->needs_reset = true;
    snprintf(e->reset_reason, sizeof e->reset_reason, "%s", poot_status_message(st));
  }
  return st;
}

/* Waits for the replay of a queued step (nothing when none is pending): its
 * fault is reported here, as that step's own would have been. */
static poot_status drain(engine *e) {
  if (!e->queued) return NULL;
  e->queued = NULL;
  uint64_t ns = 0;
  poot_status st = poot_device_synchronize(e->dev, &ns);
  e->stats.device_ns_total += ns;
  return note_fault(e, st);
}

/* ------------------------------------------------------------ entries ---- */

static void entry_destroy(engine_entry *en) {
  if (!en) return;
  poot_device_recording_destroy(en->rec);
  if (en->bufs && en->plan)
    for (uint32_t i = 0; i < en->plan->buffer_count; i++)
      if (en->owned[i]) poot_device_buffer_destroy(en->bufs[i]);
  poot_free(en->bufs);
  poot_free(en->owned);
  poot_free(en->cmds);
  poot_free(en->bindings);
  if (en->binds)
    for (uint32_t i = 0; i < en->binding_count; i++) poot_free((char *)en->binds[i].name);
  poot_free(en->binds);
  poot_free(en->targets);
  poot_plan_destroy(en->plan);
  poot_free(en->key);
  poot_free(en);
}

static poot_status new_buffer(engine *e, poot_device_buffer_kind kind, uint64_t size,
                              poot_device_buffer **out) {
  return poot_device_buffer_create(e->dev, kind, size < 4 ? 4 : (size + 3) & ~(uint64_t)3, out);
}

/* Uploads `size` bytes, padding the last word with zeros. */
static poot_status upload_padded(poot_device_buffer *b, const void *data, uint64_t size) {
  uint64_t whole = size & ~(uint64_t)3;
  if (whole) POOT_TRY(poot_device_upload(b, 0, data, whole));
  if (whole != size) {
    uint32_t tail = 0;
    memcpy(&tail, (const uint8_t *)data + whole, (size_t)(size - whole));
    POOT_TRY(poot_device_upload(b, whole, &tail, 4));
  }
  return NULL;
}

static poot_status upload_zeros(poot_device_buffer *b) {
  void *z = poot_calloc(1, (size_t)b->size);
  if (!z)
    return poot_status_make(POOT_OUT_OF_MEMORY, "engine: %llu zero bytes",
                            (unsigned long long)b->size);
  poot_status st = poot_device_upload(b, 0, z, b->size);
  poot_free(z);
  return st;
}

static poot_status bind_weight(engine *e, const poot_plan_buffer *pb, poot_device_buffer **out) {
  uint64_t idx;
  if (!poot_map_get(&e->weight_index, &pb->weight_key, sizeof pb->weight_key, &idx))
    return poot_status_make(POOT_NOT_FOUND,
                            "engine: the graph reads weight '%s', which load_weights did not bind",
                            pb->name);
  engine_weight *w = &POOT_VEC_AT(&e->weights, engine_weight, idx);
  if (!poot_type_equal(&w->type, &pb->type) || w->buf->size < pb->size) {
    poot_strbuf a, b;
    poot_strbuf_init(&a);
    poot_strbuf_init(&b);
    poot_type_format(&a, &w->type);
    poot_type_format(&b, &pb->type);
    poot_status st = poot_status_make(POOT_INVALID_ARGUMENT,
                                      "engine: weight '%s' was loaded as %s; the graph reads %s",
                                      pb->name, a.data, b.data);
    poot_strbuf_deinit(&a);
    poot_strbuf_deinit(&b);
    return st;
  }
  *out = w->buf;
  return NULL;
}

static poot_status bind_state(engine *e, const poot_plan_buffer *pb, poot_device_buffer **out) {
  uint64_t idx;
  if (poot_map_get_str(&e->state_index, pb->name, &idx)) {
    engine_state *s = &POOT_VEC_AT(&e->states, engine_state, idx);
    if (!poot_type_equal(&s->type, &pb->type) || s->buf->size < pb->size)
      return poot_status_make(POOT_INVALID_ARGUMENT,
                              "engine: state '%s' differs in type from an earlier entry's",
                              pb->name);
    *out = s->buf;
    return NULL;
  }
  engine_state s = {.name = poot_strdup(pb->name), .type = pb->type, .size = pb->size};
  if (!s.name) return poot_status_make(POOT_OUT_OF_MEMORY, "engine: state name");
  poot_status st = new_buffer(e, POOT_DEVICE_BUFFER_LOCAL, pb->size, &s.buf);
  if (!st) st = upload_zeros(s.buf);
  if (!st) st = poot_map_put_str(&e->state_index, pb->name, e->states.len);
  if (!st) st = poot_vec_push(&e->states, &s);
  if (st) {
    poot_map_remove(&e->state_index, pb->name, strlen(pb->name));
    poot_device_buffer_destroy(s.buf);
    poot_free(s.name);
    return st;
  }
  *out = s.buf;
  return NULL;
}

static poot_status entry_buffers(engine *e, engine_entry *en) {
  const poot_plan *p = en->plan;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const poot_plan_buffer *pb = &p->buffers[i];
    switch (pb->cls) {
      case POOT_PLAN_BUFFER_WEIGHT:
        POOT_TRY(bind_weight(e, pb, &en->bufs[i]));
        break;
      case POOT_PLAN_BUFFER_STATE:
        POOT_TRY(bind_state(e, pb, &en->bufs[i]));
        break;
      case POOT_PLAN_BUFFER_SLOT:
      case POOT_PLAN_BUFFER_OUTPUT:
        /* Slots are written by the host every step; outputs are small and read
         * back every step: both live in host-visible memory, so neither needs
         * a staging copy on a discrete GPU. */
        en->owned[i] = true;
        POOT_TRY(new_buffer(e, POOT_DEVICE_BUFFER_SLOT, pb->size, &en->bufs[i]));
        break;
      default:
        en->owned[i] = true;
        POOT_TRY(new_buffer(e, POOT_DEVICE_BUFFER_LOCAL, pb->size, &en->bufs[i]));
        if (pb->cls == POOT_PLAN_BUFFER_CONST && pb->data)
          POOT_TRY(upload_padded(en->bufs[i], pb->data, pb->size));
        break;
    }
  }
  return NULL;
}

static poot_status entry_commands(engine *e, engine_entry *en) {
  const poot_plan *p = en->plan;
  size_t total = 0;
  for (uint32_t i = 0; i < p->dispatch_count; i++) total += p->dispatches[i].binding_count;
  en->cmds = poot_calloc(p->dispatch_count + 1, sizeof *en->cmds);
  en->bindings = poot_calloc(total + 1, sizeof *en->bindings);
  if (!en->cmds || !en->bindings)
    return poot_status_make(POOT_OUT_OF_MEMORY, "engine: command list");
  size_t at = 0;
  /* Every kernel the cache lacks is compiled first, at once: a backend with
   * kernels_create builds them on several threads (and reports its own
   * progress on long work). */
  uint32_t before_all = e->dev->kernels_created;
  uint64_t t_all = poot_time_ns();
  POOT_TRY(poot_device_kernels_prepare(e->dev, (const poot_kir_kernel *const *)p->kernels,
                                       p->kernel_count));
  if (e->dev->kernels_created != before_all)
    poot_log(POOT_LOG_INFO, "engine: %u of %u kernels compiled for %s in %.1f ms",
             e->dev->kernels_created - before_all, p->kernel_count, e->dev->caps.name,
             (double)(poot_time_ns() - t_all) * 1e-6);
  /* Progress on long work where kernels are still compiled one at a time:
   * each is logged at INFO (-v), and every 5 s of compiling a WARN line
   * says how far it is, so a slow driver shows where the time goes. */
  uint64_t t_start = poot_time_ns(), next_note = 5000000000ull;
  uint32_t compiled = 0;
  for (uint32_t i = 0; i < p->dispatch_count; i++) {
    const poot_plan_dispatch *pd = &p->dispatches[i];
    poot_device_kernel *k = NULL;
    uint32_t before = e->dev->kernels_created;
    uint64_t t0 = poot_time_ns();
    POOT_TRY(poot_device_kernel_get(e->dev, p->kernels[pd->kernel], &k));
    if (e->dev->kernels_created != before) {
      uint64_t now = poot_time_ns();
      compiled++;
      poot_log(POOT_LOG_INFO, "engine: kernel %u of %u (%s, dispatch %u of %u) compiled in %.1f ms",
               pd->kernel + 1, p->kernel_count, k->name, i + 1, p->dispatch_count,
               (double)(now - t0) * 1e-6);
      if (now - t_start >= next_note) {
        poot_log(POOT_LOG_WARN,
                 "still compiling for %s: dispatch %u of %u (kernel %s), %u kernels compiled in "
                 "%.1f s so far",
                 e->dev->caps.name, i + 1, p->dispatch_count, k->name, compiled,
                 (double)(now - t_start) * 1e-9);
        next_note = now - t_start + 5000000000ull;
      }
    }
    if (k->binding_count != pd->binding_count || k->push_count != pd->push_count)
      return poot_status_make(POOT_INTERNAL,
                              "engine: dispatch %u (%s) binds %u buffers and %u constants; its "
                              "kernel takes %u and %u",
                              i, k->name, pd->binding_count, pd->push_count, k->binding_count,
                              k->push_count);
    for (uint32_t b = 0; b < pd->binding_count; b++)
      en->bindings[at + b] = en->bufs[pd->bindings[b]];
    en->cmds[i] = (poot_device_cmd){.kind = POOT_DEVICE_CMD_DISPATCH,
                                    .kernel = k,
                                    .grid = {pd->grid[0], pd->grid[1], pd->grid[2]},
                                    .buffers = &en->bindings[at],
                                    .push = pd->push,
                                    .weight_us = pd->weight_us,
                                    .label = pd->what};
    at += pd->binding_count;
  }
  return NULL;
}

/* Where the plan reads binding b: its slot or its input buffer, found by
 * the leaf's name once here, or nowhere (the passes removed the leaf). The
 * plan keeps the leaf's type. */
static poot_status place_binding(const poot_plan *p, const poot_exec_binding *b,
                                 engine_target *out) {
  *out = (engine_target){ENGINE_PLACE_NONE, 0};
  const poot_type *type = NULL;
  if (!b->is_input) {
    for (uint32_t s = 0; s < p->slot_count && !type; s++)
      if (strcmp(p->slots[s].name, b->name) == 0) {
        *out = (engine_target){ENGINE_PLACE_SLOT, p->slots[s].word_offset};
        type = &p->slots[s].type;
      }
  } else {
    for (uint32_t i = 2; i < p->buffer_count && !type; i++)
      if (p->buffers[i].cls == POOT_PLAN_BUFFER_INPUT && strcmp(p->buffers[i].name, b->name) == 0) {
        *out = (engine_target){ENGINE_PLACE_INPUT, i};
        type = &p->buffers[i].type;
      }
  }
  if (type && !poot_type_equal(type, &b->type))
    return poot_status_make(POOT_INTERNAL, "engine: the plan reads '%s' with another type",
                            b->name);
  if (out->place == ENGINE_PLACE_SLOT &&
      (p->buffer_count < 2 || p->buffers[1].cls != POOT_PLAN_BUFFER_SLOT))
    return poot_status_make(POOT_INTERNAL, "engine: the plan's buffer 1 is not its slot buffer");
  return NULL;
}

static bool declares_binding(const poot_node *n) {
  return n->op == POOT_OP_LEAF &&
         (n->storage == POOT_STORAGE_SLOT || n->storage == POOT_STORAGE_PARAM);
}

/* One binding per slot and root input of `graph`, in its order, each placed
 * in the entry's plan. */
static poot_status entry_bindings(engine_entry *en, const poot_graph *graph) {
  const poot_region *root = poot_graph_root(graph);
  uint32_t n = 0;
  for (uint32_t i = 0; i < root->num_nodes; i++)
    n += declares_binding(poot_graph_node(graph, root->nodes[i]));
  en->binds = poot_calloc(n + 1, sizeof *en->binds);
  en->targets = poot_calloc(n + 1, sizeof *en->targets);
  if (!en->binds || !en->targets) return poot_status_make(POOT_OUT_OF_MEMORY, "engine: bindings");
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = NULL;
  for (uint32_t i = 0; i < root->num_nodes && !st; i++) {
    const poot_node *node = poot_graph_node(graph, root->nodes[i]);
    if (!declares_binding(node)) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(graph, node, &sb);
    if ((st = poot_strbuf_status(&sb))) break;
    uint32_t k = en->binding_count;
    poot_exec_binding *b = &en->binds[k];
    *b = (poot_exec_binding){.name = poot_strdup(sb.data),
                             .slot = {en->id, k},
                             .type = *poot_graph_value_type(graph, node->results[0]),
                             .is_input = node->storage == POOT_STORAGE_PARAM};
    if (!b->name) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "engine: binding names");
      break;
    }
    en->binding_count++;
    st = place_binding(en->plan, b, &en->targets[k]);
    b->read = en->targets[k].place != ENGINE_PLACE_NONE;
  }
  poot_strbuf_deinit(&sb);
  return st;
}

static char *key_text(const poot_exec_entry_key *key) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  const char *parts[4] = {key ? key->program : NULL, key ? key->step_shape : NULL,
                          key ? key->sampling : NULL, key ? key->bound_inputs : NULL};
  for (int i = 0; i < 4; i++) {
    if (i) poot_strbuf_putc(&sb, '\x1f');
    poot_strbuf_puts(&sb, parts[i] ? parts[i] : "");
  }
  if (sb.failed) {
    poot_strbuf_deinit(&sb);
    return NULL;
  }
  return poot_strbuf_take(&sb);
}

static poot_status engine_add_entry(poot_executor *ex, const poot_exec_entry_key *key,
                                    const poot_graph *graph, uint32_t *out_entry) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  *out_entry = UINT32_MAX;
  POOT_TRY(refuse_if_poisoned(e));
  POOT_TRY(drain(e));
  char *text = key_text(key);
  if (!text) return poot_status_make(POOT_OUT_OF_MEMORY, "engine: entry key");
  uint64_t id;
  if (poot_map_get_str(&e->entry_index, text, &id)) {
    poot_free(text);
    *out_entry = (uint32_t)id;
    return NULL;
  }
  engine_entry *en = poot_calloc(1, sizeof *en);
  if (!en) {
    poot_free(text);
    return poot_status_make(POOT_OUT_OF_MEMORY, "engine: entry");
  }
  en->key = text;
  en->id = (uint32_t)e->entries.len;
  poot_compile_options co;
  poot_compile_options_init(&co);
  co.target = &e->target;
  co.workgroup_size = e->opts.workgroup_size;
  co.coop_min = e->opts.coop_min;
  co.stage_budget_us = e->opts.stage_budget_us;
  co.no_local_reductions = e->opts.batch_invariant;
  co.matmul_precision = e->opts.matmul_precision;
  poot_compile_options_set_forms(&co, e->opts.forms);
  uint64_t t_begin = poot_time_ns();
  poot_status st = poot_plan_create(graph, &co, &en->plan);
  if (!st) {
    en->bufs = poot_calloc(en->plan->buffer_count + 1, sizeof *en->bufs);
    en->owned = poot_calloc(en->plan->buffer_count + 1, sizeof *en->owned);
    if (!en->bufs || !en->owned) st = poot_status_make(POOT_OUT_OF_MEMORY, "engine: buffers");
  }
  if (!st) st = entry_bindings(en, graph);
  if (!st) st = entry_buffers(e, en);
  uint64_t t_plan = poot_time_ns();
  if (!st) st = entry_commands(e, en);
  uint64_t t_kernels = poot_time_ns();
  if (!st && en->plan->dispatch_count == 0)
    st = poot_status_make(POOT_UNSUPPORTED, "engine: the plan has no dispatch");
  if (!st) {
    poot_device_record_options ro = {.stage_budget_us = e->opts.stage_budget_us};
    st = poot_device_record(e->dev, en->cmds, en->plan->dispatch_count, &ro, &en->rec);
  }
  if (!st)
    poot_log(POOT_LOG_INFO,
             "engine: plan of %u dispatches, %u kernels: plan and buffers %.1f ms, kernels %.1f "
             "ms, record %.1f ms",
             en->plan->dispatch_count, en->plan->kernel_count, (double)(t_plan - t_begin) * 1e-6,
             (double)(t_kernels - t_plan) * 1e-6, (double)(poot_time_ns() - t_kernels) * 1e-6);
  if (!st && en->plan->output_buffer != UINT32_MAX) {
    const poot_plan_buffer *ob = &en->plan->buffers[en->plan->output_buffer];
    size_t n = 0;
    st = poot_type_byte_size(ob->type.dtype, &ob->type.shape, &n);
    en->output_bytes = n;
  }
  id = en->id;
  if (!st) st = poot_vec_push(&e->entries, &en);
  if (!st) {
    st = poot_map_put_str(&e->entry_index, en->key, id);
    if (st) e->entries.len--;
  }
  if (st) {
    entry_destroy(en);
    return st;
  }
  e->stats.captures++;
  *out_entry = (uint32_t)id;
  return NULL;
}

static poot_status find_entry(const engine *e, uint32_t id, engine_entry **out) {
  *out = NULL;
  if (id >= e->entries.len || !POOT_VEC_AT(&e->entries, engine_entry *, id))
    return poot_status_make(POOT_NOT_FOUND, "engine: no entry %u", id);
  *out = POOT_VEC_AT(&e->entries, engine_entry *, id);
  return NULL;
}

static poot_status engine_remove_entry(poot_executor *ex, uint32_t id) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  engine_entry *en;
  POOT_TRY(find_entry(e, id, &en));
  POOT_TRY(drain(e));
  poot_map_remove(&e->entry_index, en->key, strlen(en->key));
  POOT_VEC_AT(&e->entries, engine_entry *, id) = NULL;
  entry_destroy(en);
  return NULL;
}

/* --------------------------------------------------------------- step ---- */

/* A slot tensor as 32-bit words (two per i64), the plan's slot format. */
static poot_status slot_words(const poot_tensor *t, uint32_t *w) {
  int64_t n = 0;
  POOT_TRY(poot_shape_elements(&t->type.shape, &n));
  const uint8_t *p = t->data;
  for (int64_t i = 0; i < n; i++) {
    switch (t->type.dtype) {
      case POOT_DTYPE_F32:
      case POOT_DTYPE_I32:
      case POOT_DTYPE_U32:
        memcpy(&w[i], p + 4 * i, 4);
        break;
      case POOT_DTYPE_I64:
        memcpy(&w[2 * i], p + 8 * i, 8);
        break;
      case POOT_DTYPE_F16:
      case POOT_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        float f = t->type.dtype == POOT_DTYPE_F16 ? poot_f16_to_f32(h) : poot_bf16_to_f32(h);
        memcpy(&w[i], &f, 4);
        break;
      }
      case POOT_DTYPE_I16: {
        int16_t h;
        memcpy(&h, p + 2 * i, 2);
        w[i] = (uint32_t)(int32_t)h;
        break;
      }
      case POOT_DTYPE_I8:
        w[i] = (uint32_t)(int32_t)(int8_t)p[i];
        break;
      case POOT_DTYPE_U8:
        w[i] = p[i];
        break;
      case POOT_DTYPE_BOOL:
        w[i] = p[i] != 0;
        break;
      default:
        return poot_status_make(POOT_UNSUPPORTED, "engine: a slot of dtype %s",
                                poot_dtype_name(t->type.dtype));
    }
  }
  return NULL;
}

/* Writes each value where the plan reads it (poot_exec_step checked the
 * handles and types). */
static poot_status write_inputs(engine_entry *en, const poot_exec_step_io *io) {
  const poot_plan *p = en->plan;
  for (size_t i = 0; i < io->input_count; i++) {
    const poot_exec_slot_value *v = &io->inputs[i];
    const engine_target *t = &en->targets[v->slot.index];
    if (t->place == ENGINE_PLACE_SLOT) {
      uint32_t *words = poot_device_buffer_host(en->bufs[1]);
      POOT_TRY(slot_words(v->tensor, words + t->at));
    } else if (t->place == ENGINE_PLACE_INPUT) {
      if (v->tensor->size > p->buffers[t->at].size)
        return poot_status_make(POOT_INVALID_ARGUMENT,
                                "engine: input '%s' holds %zu bytes; its type takes %llu",
                                en->binds[v->slot.index].name, v->tensor->size,
                                (unsigned long long)p->buffers[t->at].size);
      POOT_TRY(upload_padded(en->bufs[t->at], v->tensor->data, v->tensor->size));
    }
  }
  return NULL;
}

/* True when the step uploads a root input (a copy the device refuses while a
 * replay is pending). */
static bool uploads_inputs(const engine_entry *en, const poot_exec_step_io *io) {
  for (size_t i = 0; i < io->input_count; i++)
    if (en->targets[io->inputs[i].slot.index].place == ENGINE_PLACE_INPUT) return true;
  return false;
}

static poot_status run_entry(engine *e, engine_entry *en, const poot_exec_step_io *io,
                             uint64_t *device_ns) {
  *device_ns = 0;
  if (!io->eager) {
    /* Behind a queued step's pending replay: chained, no wait between. */
    poot_status st = e->queued ? poot_device_replay_chained(en->rec) : poot_device_replay(en->rec);
    e->queued = NULL;
    POOT_TRY(st);
    if (io->queue) {
      e->queued = en;
      return NULL;
    }
    return poot_device_synchronize(e->dev, device_ns);
  }
  POOT_TRY(drain(e));
  for (uint32_t i = 0; i < en->plan->dispatch_count; i++) {
    uint64_t ns = 0;
    POOT_TRY(poot_device_submit_one(e->dev, &en->cmds[i], &ns));
    *device_ns += ns;
    if (io->on_dispatch) {
      const poot_plan_dispatch *pd = &en->plan->dispatches[i];
      poot_exec_dispatch_info info = {.entry = en->id,
                                      .index = i,
                                      .label = en->cmds[i].label,
                                      .device_ns = ns,
                                      .bytes = pd->bytes,
                                      .weight_bytes = pd->weight_bytes,
                                      .state_bytes = pd->state_bytes,
                                      .state_whole_bytes = pd->state_whole_bytes};
      io->on_dispatch(io->on_dispatch_ctx, &info);
    }
  }
  return NULL;
}

static poot_status engine_bindings(const poot_executor *ex, uint32_t id, poot_exec_bindings *out) {
  engine_entry *en;
  POOT_TRY(find_entry((const engine *)ex, id, &en));
  *out = (poot_exec_bindings){.entry = id, .count = en->binding_count, .items = en->binds};
  return NULL;
}

static poot_status engine_step(poot_executor *ex, uint32_t id, const poot_exec_step_io *io) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  uint64_t t0 = poot_time_ns();
  engine_entry *en;
  POOT_TRY(find_entry(e, id, &en));
  POOT_TRY(refuse_if_poisoned(e));
  if (e->needs_reset)
    return poot_status_make(POOT_NEEDS_RESET,
                            "engine: an earlier step failed after it replayed (%s); call "
                            "reset_state first",
                            e->reset_reason);
  poot_exec_step_io none = {0};
  if (!io) io = &none;
  if (io->output && io->output_size != en->output_bytes)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "engine: the output takes %llu bytes; the caller gave %zu",
                            (unsigned long long)en->output_bytes, io->output_size);
  if (io->queue && io->output)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "engine: a queued step reads no output (pass output NULL)");
  /* A queued replay still reads its own slots, and root inputs are uploads:
   * both wait for it (so does an eager step). */
  if (e->queued && (e->queued == en || io->eager || uploads_inputs(en, io))) POOT_TRY(drain(e));
  POOT_TRY(write_inputs(en, io));
  const uint64_t encode0 = e->dev->encode_ns;
  uint64_t device_ns = 0;
  poot_status st = run_entry(e, en, io, &device_ns);
  if (st) return note_fault(e, st);
  if (io->output && en->output_bytes) {
    st = poot_device_download(en->bufs[en->plan->output_buffer], 0, io->output, en->output_bytes);
    if (st) return st;
  }
  e->stats.steps++;
  e->stats.dispatches += en->plan->dispatch_count;
  e->stats.dispatches_per_step = en->plan->dispatch_count;
  e->stats.stages_per_step = io->eager ? en->plan->dispatch_count : en->rec->stage_count;
  e->stats.device_ns_total += device_ns;
  e->stats.encode_ns_total += e->dev->encode_ns - encode0;
  e->stats.host_ns_total += poot_time_ns() - t0;
  return NULL;
}

/* ------------------------------------------------- state, weights, stats ---- */

static poot_status engine_reset_state(poot_executor *ex) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  POOT_TRY(refuse_if_poisoned(e));
  /* a queued step's fault is superseded by the reset it asks for */
  poot_status_free(drain(e));
  POOT_TRY(refuse_if_poisoned(e));
  for (size_t i = 0; i < e->states.len; i++)
    POOT_TRY(upload_zeros(POOT_VEC_AT(&e->states, engine_state, i).buf));
  e->needs_reset = false;
  e->reset_reason[0] = '\0';
  return NULL;
}

static void engine_unload(poot_executor *ex) {
  engine *e = engine_cast(ex);
  if (!e) return;
  poot_status_free(drain(e)); /* nothing may run on what is released */
  for (size_t i = 0; i < e->entries.len; i++) {
    entry_destroy(POOT_VEC_AT(&e->entries, engine_entry *, i));
    POOT_VEC_AT(&e->entries, engine_entry *, i) = NULL;
  }
  poot_map_deinit(&e->entry_index);
  poot_map_init(&e->entry_index);
  for (size_t i = 0; i < e->states.len; i++) {
    engine_state *s = &POOT_VEC_AT(&e->states, engine_state, i);
    poot_device_buffer_destroy(s->buf);
    poot_free(s->name);
  }
  poot_vec_clear(&e->states);
  poot_map_deinit(&e->state_index);
  poot_map_init(&e->state_index);
  for (size_t i = 0; i < e->weights.len; i++) {
    engine_weight *w = &POOT_VEC_AT(&e->weights, engine_weight, i);
    poot_device_buffer_destroy(w->buf);
    poot_free(w->name);
  }
  poot_vec_clear(&e->weights);
  poot_map_deinit(&e->weight_index);
  poot_map_init(&e->weight_index);
  e->weight_bytes = 0;
  e->needs_reset = false;
}

/* Uploads one weight and indexes it by key. */
static poot_status load_weight(engine *e, size_t i, const poot_exec_weight *in) {
  if (!in->tensor)
    return poot_status_make(POOT_INVALID_ARGUMENT, "engine: weight %zu ('%s') has no tensor", i,
                            in->name ? in->name : "?");
  if (poot_map_get(&e->weight_index, &in->key, sizeof in->key, NULL))
    return poot_status_make(POOT_INVALID_ARGUMENT, "engine: weight '%s' given twice",
                            in->name ? in->name : "?");
  engine_weight w = {.name = poot_strdup(in->name ? in->name : "?"), .type = in->tensor->type};
  poot_status st = w.name ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "engine: weight name");
  if (!st) st = new_buffer(e, POOT_DEVICE_BUFFER_LOCAL, in->tensor->size, &w.buf);
  if (!st) st = upload_padded(w.buf, in->tensor->data, in->tensor->size);
  if (!st) st = poot_map_put(&e->weight_index, &in->key, sizeof in->key, e->weights.len);
  if (!st) st = poot_vec_push(&e->weights, &w);
  if (st) {
    poot_map_remove(&e->weight_index, &in->key, sizeof in->key);
    poot_device_buffer_destroy(w.buf);
    poot_free(w.name);
    return st;
  }
  e->weight_bytes += in->tensor->size;
  return NULL;
}

static poot_status engine_load_weights(poot_executor *ex, size_t count,
                                       const poot_exec_weight *weights) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  POOT_TRY(refuse_if_poisoned(e));
  POOT_TRY(drain(e));
  if (e->weights.len)
    return poot_status_make(POOT_INVALID_ARGUMENT, "engine: weights are loaded (unload first)");
  poot_status st = NULL;
  for (size_t i = 0; i < count && !st; i++) st = load_weight(e, i, &weights[i]);
  if (st) engine_unload(ex);
  return st;
}

static poot_status engine_target_set(poot_executor *ex, const poot_exec_target *t) {
  engine *e = engine_cast(ex);
  POOT_TRY(poot_downcast_check(e, "engine"));
  POOT_TRY(refuse_if_poisoned(e));
  poot_exec_target opts = {0};
  if (t) opts = *t;
  const poot_kir_target *dt = &e->dev->caps.target;
  if (opts.target) {
    if (opts.target->lang != dt->lang || opts.target->has_trap != dt->has_trap ||
        opts.target->max_workgroup_size > dt->max_workgroup_size ||
        opts.target->shared_memory_bytes > dt->shared_memory_bytes ||
        opts.target->shared_memory_optin_bytes > dt->shared_memory_optin_bytes ||
        (opts.target->storage_types & ~dt->storage_types) ||
        (opts.target->subgroup_ops &&
         (!dt->subgroup_ops || opts.target->subgroup_size != dt->subgroup_size)))
      return poot_status_make(
          POOT_UNSUPPORTED, "engine: target '%s' asks for more than the %s device '%s' has",
          opts.target->name ? opts.target->name : "?", e->dev->caps.backend, e->dev->caps.name);
    e->target = *opts.target;
  } else {
    e->target = *dt;
  }
  opts.target = NULL;
  e->opts = opts;
  return NULL;
}

static void engine_target_get(const poot_executor *ex, poot_exec_target *out) {
  *out = ((const engine *)ex)->opts;
  out->target = NULL;
}

static void engine_stats(const poot_executor *ex, poot_exec_stats *out) {
  const engine *e = (const engine *)ex;
  *out = e->stats;
  out->entries = 0;
  for (size_t i = 0; i < e->entries.len; i++)
    if (POOT_VEC_AT(&e->entries, engine_entry *, i)) out->entries++;
  out->host_us_per_step =
      e->stats.steps ? (double)e->stats.host_ns_total / 1e3 / e->stats.steps : 0;
  out->encode_us_per_step =
      e->stats.steps ? (double)e->stats.encode_ns_total / 1e3 / e->stats.steps : 0;
  out->device_timed = e->dev->caps.can_time;
  out->device_us_per_step = e->stats.steps && out->device_timed
                                ? (double)e->stats.device_ns_total / 1e3 / e->stats.steps
                                : 0;
  out->bytes_uploaded = e->dev->bytes_uploaded;
  out->weight_bytes = e->weight_bytes;
  out->state_bytes = 0;
  for (size_t i = 0; i < e->states.len; i++)
    out->state_bytes += POOT_VEC_AT(&e->states, engine_state, i).size;
  out->kernels = e->dev->kernel_cache.len;
  out->memory_bytes = e->dev->caps.local_bytes;
}

static void engine_destroy(poot_executor *ex) {
  engine *e = engine_cast(ex);
  if (!e) return;
  engine_unload(ex);
  poot_vec_deinit(&e->entries);
  poot_vec_deinit(&e->states);
  poot_vec_deinit(&e->weights);
  poot_map_deinit(&e->entry_index);
  poot_map_deinit(&e->state_index);
  poot_map_deinit(&e->weight_index);
  poot_free(e);
}

static const poot_executor_vtable engine_vtable = {
    .destroy = engine_destroy,
    .target_set = engine_target_set,
    .target_get = engine_target_get,
    .load_weights = engine_load_weights,
    .add_entry = engine_add_entry,
    .bindings = engine_bindings,
    .step = engine_step,
    .reset_state = engine_reset_state,
    .remove_entry = engine_remove_entry,
    .stats = engine_stats,
    .unload = engine_unload,
};

poot_status poot_engine_create(poot_device *device, poot_executor **out_executor) {
  *out_executor = NULL;
  if (poot_device_is_poisoned(device))
    return poot_status_make(POOT_POISONED, "engine: the device was poisoned (%s)",
                            device->poison_reason);
  engine *e = poot_calloc(1, sizeof *e);
  if (!e) return poot_status_make(POOT_OUT_OF_MEMORY, "engine");
  e->base.vt = &engine_vtable;
  e->dev = device;
  e->target = device->caps.target;
  poot_vec_init(&e->weights, sizeof(engine_weight));
  poot_vec_init(&e->states, sizeof(engine_state));
  poot_vec_init(&e->entries, sizeof(engine_entry *));
  poot_map_init(&e->weight_index);
  poot_map_init(&e->state_index);
  poot_map_init(&e->entry_index);
  *out_executor = &e->base;
  return NULL;
}
