/* run.c — a plan on the KIR interpreter: the CPU reference "device" of the
 * compile tests. Buffers are host allocations; every dispatch runs in order
 * through poot_kir_interp_run. */
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

struct poot_plan_run {
  const poot_plan *plan;
  void **data;
};

poot_status poot_plan_run_create(const poot_plan *plan, poot_plan_run **out_run) {
  *out_run = NULL;
  poot_plan_run *r = poot_calloc(1, sizeof *r);
  if (!r) return poot_status_make(POOT_OUT_OF_MEMORY, "plan run: out of memory");
  r->plan = plan;
  r->data = poot_calloc(plan->buffer_count + 1, sizeof(void *));
  if (!r->data) {
    poot_free(r);
    return poot_status_make(POOT_OUT_OF_MEMORY, "plan run: out of memory");
  }
  for (uint32_t i = 0; i < plan->buffer_count; i++) {
    const poot_plan_buffer *b = &plan->buffers[i];
    r->data[i] = poot_calloc(b->size ? b->size : 4, 1);
    if (!r->data[i]) {
      poot_plan_run_destroy(r);
      return poot_status_make(POOT_OUT_OF_MEMORY, "plan run: out of memory (%llu bytes)",
                              (unsigned long long)b->size);
    }
    if (b->data) memcpy(r->data[i], b->data, b->size);
  }
  *out_run = r;
  return NULL;
}

void poot_plan_run_destroy(poot_plan_run *r) {
  if (!r) return;
  for (uint32_t i = 0; r->data && i < r->plan->buffer_count; i++) poot_free(r->data[i]);
  poot_free(r->data);
  poot_free(r);
}

/* One element of a slot tensor as a word (the temp word format). */
static void slot_words(const poot_tensor *t, uint32_t *w) {
  int64_t n = poot__cc_elems(&t->type.shape);
  const uint8_t *p = t->data;
  for (int64_t i = 0; i < n; i++) {
    switch (t->type.dtype) {
      case POOT_DTYPE_F32:
      case POOT_DTYPE_I32:
      case POOT_DTYPE_U32:
        memcpy(&w[i], p + 4 * i, 4);
        break;
      case POOT_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        float f = poot_f16_to_f32(h);
        memcpy(&w[i], &f, 4);
        break;
      }
      case POOT_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        float f = poot_bf16_to_f32(h);
        memcpy(&w[i], &f, 4);
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
      case POOT_DTYPE_I16: {
        int16_t h;
        memcpy(&h, p + 2 * i, 2);
        w[i] = (uint32_t)(int32_t)h;
        break;
      }
      case POOT_DTYPE_I64:
        memcpy(&w[2 * i], p + 8 * i, 8);
        break;
      default:
        break;
    }
  }
}

poot_status poot_plan_run_bind(poot_plan_run *r, size_t count, const poot_plan_input *in) {
  const poot_plan *p = r->plan;
  for (size_t i = 0; i < count; i++) {
    const poot_tensor *t = in[i].tensor;
    bool done = false;
    for (uint32_t s = 0; s < p->slot_count && !done; s++) {
      if (strcmp(p->slots[s].name, in[i].name) != 0) continue;
      if (!poot_type_equal(&p->slots[s].type, &t->type))
        return poot_status_make(POOT_INVALID_ARGUMENT, "plan run: slot '%s' has another type",
                                in[i].name);
      slot_words(t, (uint32_t *)r->data[1] + p->slots[s].word_offset);
      done = true;
    }
    for (uint32_t b = 2; b < p->buffer_count && !done; b++) {
      const poot_plan_buffer *pb = &p->buffers[b];
      if (pb->cls == POOT_PLAN_BUFFER_OUTPUT || pb->cls == POOT_PLAN_BUFFER_CONST) continue;
      if (strcmp(pb->name, in[i].name) != 0) continue;
      if (!poot_type_equal(&pb->type, &t->type) || t->size > pb->size)
        return poot_status_make(POOT_INVALID_ARGUMENT, "plan run: '%s' has another type",
                                in[i].name);
      memcpy(r->data[b], t->data, t->size);
      done = true;
    }
    if (!done) {
      /* a leaf the plan does not read (e.g. removed as unreachable) */
    }
  }
  return NULL;
}

poot_status poot_plan_run_step(poot_plan_run *r, const poot_plan_run_options *o) {
  const poot_plan *p = r->plan;
  poot_kir_buffer bufs[POOT_PLAN_MAX_BINDINGS];
  for (uint32_t i = 0; i < p->dispatch_count; i++) {
    const poot_plan_dispatch *d = &p->dispatches[i];
    const poot_kir_kernel *k = p->kernels[d->kernel];
    for (uint32_t b = 0; b < d->binding_count; b++) {
      bufs[b].data = r->data[d->bindings[b]];
      bufs[b].size = p->buffers[d->bindings[b]].size;
    }
    uint32_t err = 0;
    poot_kir_interp_options io;
    memset(&io, 0, sizeof io);
    memcpy(io.grid, d->grid, sizeof io.grid);
    io.subgroup_size = o && o->subgroup_size ? o->subgroup_size : k->subgroup_size;
    if (!io.subgroup_size)
      io.subgroup_size = p->target.subgroup_size ? p->target.subgroup_size : 32;
    io.buffers = bufs;
    io.buffer_count = d->binding_count;
    io.params = d->push;
    io.param_count = d->push_count;
    io.error_word = o && o->error_word ? &err : NULL;
    io.max_steps = 4000000000ull;
    poot_status st = poot_kir_interp_run(k, &io);
    if (!st && err) {
      uint32_t code = 0;
      while (!(err & (1u << code))) code++;
      return poot_status_make(POOT_KERNEL_FAULT,
                              "dispatch %u (kernel %s, %s): error word 0x%x: trap code %u (%s)", i,
                              k->name, d->what, err, code, poot_trap_name((poot_trap)code));
    }
    if (st) {
      poot_status_code c = poot_status_code_of(st);
      const char *msg = poot_status_message(st);
      unsigned code = 0;
      const char *tc = strstr(msg, "trap code ");
      if (tc) sscanf(tc, "trap code %u", &code);
      poot_status w = poot_status_make(c, "dispatch %u (kernel %s, %s): %s%s%s%s", i, k->name,
                                       d->what, msg, tc ? " (" : "",
                                       tc ? poot_trap_name((poot_trap)code) : "", tc ? ")" : "");
      poot_status_free(st);
      return w;
    }
  }
  return NULL;
}

static poot_status view(poot_plan_run *r, uint32_t b, poot_tensor *out) {
  const poot_plan_buffer *pb = &r->plan->buffers[b];
  out->type = pb->type;
  out->data = r->data[b];
  size_t n = 0;
  POOT_TRY(poot_type_byte_size(pb->type.dtype, &pb->type.shape, &n));
  out->size = n;
  return NULL;
}

poot_status poot_plan_run_output(poot_plan_run *r, poot_tensor *out) {
  memset(out, 0, sizeof *out);
  if (r->plan->output_buffer == UINT32_MAX)
    return poot_status_make(POOT_NOT_FOUND, "plan run: the graph has no primary output");
  return view(r, r->plan->output_buffer, out);
}

poot_status poot_plan_run_state(poot_plan_run *r, const char *name, poot_tensor *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < r->plan->state_count; i++) {
    uint32_t b = r->plan->state_buffers[i];
    if (b != UINT32_MAX && strcmp(r->plan->buffers[b].name, name) == 0) return view(r, b, out);
  }
  for (uint32_t i = 0; i < r->plan->env_count; i++) {
    uint32_t b = r->plan->env_buffers[i];
    if (strcmp(r->plan->buffers[b].name, name) == 0) return view(r, b, out);
  }
  return poot_status_make(POOT_NOT_FOUND, "plan run: no state '%s'", name);
}
