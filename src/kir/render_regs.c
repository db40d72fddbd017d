/* The register core of the PTX and AMDGPU renderers (render_regs.h). */
#include "render_regs.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

poot_status poot__kir_render_args(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                  const poot_strbuf *out, poot_kir_lang lang, const char *fn,
                                  const char *what) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "%s: NULL argument", fn);
  if (target->lang != lang || (lang == POOT_KIR_LANG_AMDGPU && !target->amdgpu_arch))
    return poot_status_make(POOT_INVALID_ARGUMENT, "%s: target '%s' is not %s target", fn,
                            target->name ? target->name : "?", what);
  return poot_kir_verify(kernel, target);
}

poot_status poot__kir_regs_init(poot__kir_regs *r, const poot_kir_kernel *k, const char *who,
                                const poot__kir_reg_classes *classes, bool named_values) {
  memset(r, 0, sizeof *r);
  r->k = k;
  r->who = who;
  r->classes = classes;
  poot_arena_init(&r->names, 0);
  r->value_reg = poot_calloc((size_t)k->value_count + 1, sizeof *r->value_reg);
  r->priv_first = poot_calloc((size_t)k->private_count + 1, sizeof *r->priv_first);
  if (named_values) r->value_name = poot_calloc((size_t)k->value_count + 1, sizeof *r->value_name);
  if (!r->value_reg || !r->priv_first || (named_values && !r->value_name))
    return poot_status_make(POOT_OUT_OF_MEMORY, "%s: out of memory", who);
  return NULL;
}

void poot__kir_regs_deinit(poot__kir_regs *r) {
  poot_status_free(r->err);
  r->err = NULL;
  poot_free(r->value_reg);
  poot_free(r->value_name);
  poot_free(r->priv_first);
  poot_arena_deinit(&r->names);
}

void poot__kir_regs_fail(poot__kir_regs *r, poot_status_code code, const poot_kir_inst *in,
                         const char *why) {
  if (r->err) return;
  r->err = poot_status_make(code, "%s: kernel '%s', statement #%" PRIu32 " (%s): %s", r->who,
                            r->k->name, in ? in->id : 0u, in ? poot_kir_op_name(in->op) : "-", why);
}

void poot__kir_regs_oom(poot__kir_regs *r) {
  if (!r->err) r->err = poot_status_make(POOT_OUT_OF_MEMORY, "%s: out of memory", r->who);
}

const char *poot__kir_regs_fmt(poot__kir_regs *r, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = n >= 0 ? poot_arena_alloc(&r->names, (size_t)n + 1, 1) : NULL;
  if (!s) {
    poot__kir_regs_oom(r);
    return r->scratch;
  }
  va_start(ap, f);
  vsnprintf(s, (size_t)n + 1, f, ap);
  va_end(ap);
  return s;
}

const char *poot__kir_regs_name(poot__kir_regs *r, uint32_t cls, uint32_t n) {
  return poot__kir_regs_fmt(r, "%s%" PRIu32, r->classes->prefix[cls], n);
}

const char *poot__kir_regs_temp(poot__kir_regs *r, uint32_t cls) {
  return poot__kir_regs_name(r, cls, poot__kir_regs_new(r, cls, 1));
}

static uint32_t lanes_of(poot_kir_type t) {
  return t.lanes ? t.lanes : 1u;
}

void poot__kir_regs_def(poot__kir_regs *r, const poot_kir_inst *in) {
  if (!in->result) return;
  poot_kir_type t = r->k->values[in->result].type;
  r->value_reg[in->result] =
      poot__kir_regs_new(r, poot__kir_regs_class(r, (poot_kir_scalar)t.scalar), lanes_of(t));
}

const char *poot__kir_regs_lane(poot__kir_regs *r, poot_kir_value v, uint32_t lane) {
  poot_kir_type t = r->k->values[v].type;
  return poot__kir_regs_name(r, poot__kir_regs_class(r, (poot_kir_scalar)t.scalar),
                             r->value_reg[v] + lane);
}

void poot__kir_regs_private_registers(poot__kir_regs *r) {
  for (uint32_t i = 0; i < r->k->private_count; i++) {
    const poot_kir_private *p = &r->k->privates[i];
    uint32_t cls = poot__kir_regs_class(r, (poot_kir_scalar)p->type.scalar);
    r->priv_first[i] = poot__kir_regs_new(r, cls, lanes_of(p->type) * p->count);
  }
}

void poot__kir_regs_private_slots(poot__kir_regs *r) {
  r->priv_total = 0;
  for (uint32_t i = 0; i < r->k->private_count; i++) {
    r->priv_first[i] = r->priv_total;
    r->priv_total += r->k->privates[i].count;
  }
}

bool poot__kir_block_uses_subgroups(const poot_kir_block *b) {
  for (const poot_kir_inst *in = b->first; in; in = in->next) {
    if (poot__kir_op_is_subgroup(in->op)) return true;
    if (poot__kir_block_uses_subgroups(&in->body) || poot__kir_block_uses_subgroups(&in->else_body))
      return true;
  }
  return false;
}
