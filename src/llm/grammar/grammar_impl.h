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

/* Bytes in 22 groups for the trie's subtree signatures: a grammar's classes tend to take
 * or leave a group whole (JSON's string characters are every group but 0, 2, 3 and 4; an
 * e-mail atom's are groups 6–9, 13, 15, 16, 18 and 19). Group 21 is every byte ≥ 0x80;
 * whether those form whole characters is utf8_ok's. */
#define POOT_BYTE_HIGH_GROUP 21u
static inline uint32_t poot__byte_group(uint8_t b) {
  if (b >= 0x80) return POOT_BYTE_HIGH_GROUP;
  if (b >= '0' && b <= '9') return 6;
  if (b >= 'a' && b <= 'z') return 7;
  if (b >= 'A' && b <= 'Z') return 8;
  switch (b) {
    case '\t':
    case '\n':
    case '\r':
      return 1;
    case '"':
      return 2;
    case '\\':
      return 3;
    case 0x7F:
      return 4;
    case ' ':
      return 5;
    case '-':
      return 9;
    case '.':
      return 10;
    case ',':
      return 11;
    case ':':
      return 12;
    case '{':
    case '}':
      return 13;
    case '[':
    case ']':
      return 14;
    case '_':
      return 15;
    case '\'':
      return 16;
    case '(':
    case ')':
      return 17;
    case '/':
      return 18;
    case ';':
    case '<':
    case '>':
    case '@':
      return 20;
    default:
      return b < 0x20 ? 0 : 19;
  }
}
#define POOT_BYTE_GROUPS 22u

/* The vocabulary trie, in preorder: node i's subtree is [i, end); its children are
 * i + 1, end(i + 1), … up to end(i). Node 0 is the root (empty prefix). Tokens are numbered
 * in preorder, so a subtree's tokens are tok_ids[tok_off(i) .. tok_off(end(i))). */
typedef struct gtrie_node {
  uint32_t end;
  uint32_t tok_off; /* the first token at or after this node in preorder; those ending here
                       are tok_ids[tok_off .. tok_off + tok_n) */
  uint32_t tok_n;
  uint32_t sig; /* bit poot__byte_group(b) for every byte b below this node */
  uint8_t byte;
  uint8_t utf8_ok; /* the bytes below, read from here, are well-formed UTF-8 (a token may end
                      inside a character) */
  uint16_t height; /* the most bytes below this node (the longest token through it, less
                      this node's depth) */
  uint16_t depth;  /* this node's bytes (its prefix's length) */
  uint8_t bulk_ok; /* the subtree may be settled at once (poot__all_loop): bytes below, the
                      high group only when utf8_ok, height <= 256; kept here because the
                      walk asks at every live child */
} gtrie_node;

/* A node's child as the mask walk reads it: the children of node i lie side by side, at
 * kids[kid_off[i] .. kid_off[i + 1]) (the nodes themselves lie a subtree apart, and a walk
 * that read each child's node for its byte, signature and tokens missed the cache at every
 * child); each records where its own children are, so that a walk going down reads no
 * other table. */
typedef struct gtrie_kid {
  uint32_t node;  /* its index */
  uint32_t sig;   /* its gtrie_node's sig */
  uint32_t first; /* its children: kids[first .. first + n_less + 1) when height > 0 */
  uint32_t tok_off, tok_mid, tok_end; /* its tokens: tok_ids[tok_off .. tok_mid) end here,
                                         [tok_mid .. tok_end) below */
  uint16_t height;                    /* its gtrie_node's height, and bulk_ok (bit 15) */
  uint8_t byte;
  uint8_t n_less; /* its number of children less one */
} gtrie_kid;

static inline uint32_t poot__kid_height(const gtrie_kid *k) {
  return k->height & 0x7FFFu;
}
static inline bool poot__kid_bulk_ok(const gtrie_kid *k) {
  return k->height >> 15;
}

struct poot_grammar_vocab {
  int32_t n_tokens;
  gtrie_node *nodes;
  uint32_t n_nodes;
  gtrie_kid *kids;
  uint32_t *kid_off; /* n_nodes + 1 */
  int32_t *tok_ids;
  uint32_t n_trie_tokens; /* tokens in the trie (those with text, not end-of-generation) */
  int32_t *eog;
  size_t n_eog;
  uint32_t max_len;
  uint32_t *all; /* the mask of every token in the trie (a clearing walk starts from it) */
};

/* The first token index past node i's subtree. */
static inline uint32_t poot__trie_tok_end(const poot_grammar_vocab *v, uint32_t i) {
  uint32_t e = v->nodes[i].end;
  return e < v->n_nodes ? v->nodes[e].tok_off : v->n_trie_tokens;
}

#endif /* POOT_LLM_GRAMMAR_IMPL_H */
