/* Private to src/llm/grammar/: the compiled grammar's layout. */
#ifndef POOT_LLM_GRAMMAR_IMPL_H
#define POOT_LLM_GRAMMAR_IMPL_H

#include <stdint.h>

#include "poot/llm/grammar.h"

/* Element kinds. Every alternative is a run of elements closed by GEL_END. */
enum {
  GEL_END = 0,   /* end of an alternative */
  GEL_RANGE = 1, /* one byte in [lo, hi] */
  GEL_SET = 2,   /* one byte in sets[value] */
  GEL_RULE = 3,  /* a reference to rule `value` */
  GEL_ALT = 4,   /* builder only: separates alternatives */
};

typedef struct gel {
  uint8_t type;
  uint8_t lo, hi;
  uint32_t value;
} gel;

typedef struct gset {
  uint32_t bits[8];
} gset;

#define POOT_GRAMMAR_MAX_TEXT ((size_t)1 << 20)
#define POOT_GRAMMAR_MAX_RULES 65536u
#define POOT_GRAMMAR_MAX_ELEMS ((uint32_t)1 << 20)
#define POOT_GRAMMAR_MAX_NESTING 64
#define POOT_GRAMMAR_MAX_REPEAT 1000u
#define POOT_GRAMMAR_MAX_TOKEN 4096u

struct poot_grammar {
  gel *el; /* all alternatives, each closed by GEL_END */
  uint32_t n_el;
  uint32_t *alt_start; /* element index of each alternative */
  uint32_t *rule_alt;  /* rule r's alternatives are alt_start[rule_alt[r] .. rule_alt[r+1]) */
  uint32_t n_rules;
  uint32_t root;
  gset *sets;
  uint32_t n_sets;
  uint32_t max_stacks, max_depth;
};

static inline bool poot__gel_match(const poot_grammar *g, const gel *e, uint8_t b) {
  if (e->type == GEL_RANGE) return b >= e->lo && b <= e->hi;
  if (e->type == GEL_SET) return (g->sets[e->value].bits[b >> 5] >> (b & 31)) & 1u;
  return false;
}

/* Left-recursion check over the compiled rules (grammar_check.c). `names` gives each
 * rule's name for the message (NULL for a generated rule: the message names the nearest
 * named rule that reaches it). */
POOT_MUST_USE poot_status poot__grammar_check_left_recursion(const poot_grammar *g,
                                                             const char *const *names);

/* The vocabulary trie, in preorder: node i's subtree is [i, end); its children are
 * i + 1, end(i + 1), … up to end(i). Node 0 is the root (empty prefix). */
typedef struct gtrie_node {
  uint32_t end;
  uint32_t tok_off; /* tokens whose text ends here: tok_ids[tok_off .. tok_off + tok_n) */
  uint32_t tok_n;
  uint8_t byte;
} gtrie_node;

struct poot_grammar_vocab {
  int32_t n_tokens;
  gtrie_node *nodes;
  uint32_t n_nodes;
  int32_t *tok_ids;
  int32_t *eog;
  size_t n_eog;
  uint32_t max_len;
};

#endif /* POOT_LLM_GRAMMAR_IMPL_H */
