/* Compile-time checks over the laid-out rules: left recursion is refused, because a
 * pushdown matcher that expands it never terminates. */
#include <string.h>

#include "grammar_impl.h"

/* Marks each rule that can match the empty string (a fixpoint over the rules). */
static void compute_nullable(const poot_grammar *g, uint8_t *nullable) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t k = g->n_rules; k-- > 0;) {
      if (nullable[k]) continue;
      for (uint32_t a = g->rule_alt[k]; a < g->rule_alt[k + 1] && !nullable[k]; a++) {
        const gel *e = &g->el[g->alt_start[a]];
        while (e->type == GEL_RULE && nullable[e->value]) e++;
        if (e->type == GEL_END) {
          nullable[k] = 1;
          changed = true;
        }
      }
    }
  }
}

typedef struct lr_frame {
  uint32_t rule, alt, elem; /* the next leftmost reference to look at */
} lr_frame;

/* The next rule that `f` reaches in leftmost position, or UINT32_MAX when done. */
static uint32_t next_left_ref(const poot_grammar *g, const uint8_t *nullable, lr_frame *f) {
  while (f->alt < g->rule_alt[f->rule + 1]) {
    const gel *e = &g->el[g->alt_start[f->alt] + f->elem];
    if (e->type == GEL_RULE) {
      /* Past a rule that cannot be empty, the rest of the alternative is not leftmost. */
      if (nullable[e->value])
        f->elem++;
      else {
        f->alt++;
        f->elem = 0;
      }
      return e->value;
    }
    f->alt++;
    f->elem = 0;
  }
  return UINT32_MAX;
}

static poot_status report(const lr_frame *stack, uint32_t depth, uint32_t cycle_from,
                          const char *const *names) {
  const char *name = NULL;
  for (uint32_t i = cycle_from; i < depth && !name; i++) name = names[stack[i].rule];
  for (uint32_t i = cycle_from; i-- > 0 && !name;) name = names[stack[i].rule];
  return poot_status_make(
      POOT_INVALID_ARGUMENT,
      "grammar: rule '%s' is left-recursive: it can reach itself without consuming input "
      "(directly, through rules that can match empty, or by repeating something that can "
      "match empty); left recursion is not supported, write it as a repetition instead "
      "(e.g. list ::= item (\",\" item)*)",
      name ? name : "?");
}

poot_status poot__grammar_check_left_recursion(const poot_grammar *g, const char *const *names) {
  uint32_t n = g->n_rules;
  uint8_t *nullable = poot_calloc(n ? n : 1, 1);
  uint8_t *color = poot_calloc(n ? n : 1, 1); /* 0 new, 1 on the stack, 2 done */
  uint32_t *pos_in_stack = poot_calloc(n ? n : 1, sizeof *pos_in_stack);
  lr_frame *stack = poot_calloc(n ? n : 1, sizeof *stack);
  poot_status st = POOT_OK_STATUS;
  if (!nullable || !color || !stack || !pos_in_stack) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (left-recursion check)");
    goto done;
  }
  compute_nullable(g, nullable);
  for (uint32_t r = 0; r < n && !st; r++) {
    if (color[r]) continue;
    uint32_t depth = 0;
    stack[depth++] = (lr_frame){.rule = r, .alt = g->rule_alt[r]};
    color[r] = 1;
    pos_in_stack[r] = 0;
    while (depth && !st) {
      uint32_t s = next_left_ref(g, nullable, &stack[depth - 1]);
      if (s == UINT32_MAX) {
        color[stack[--depth].rule] = 2;
      } else if (color[s] == 1) {
        st = report(stack, depth, pos_in_stack[s], names);
      } else if (color[s] == 0) {
        color[s] = 1;
        pos_in_stack[s] = depth;
        stack[depth++] = (lr_frame){.rule = s, .alt = g->rule_alt[s]};
      }
    }
  }
done:
  poot_free(nullable);
  poot_free(color);
  poot_free(pos_in_stack);
  poot_free(stack);
  return st;
}
