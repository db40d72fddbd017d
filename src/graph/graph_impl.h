/* graph_impl.h — private structures of the graph layer. Never leaves src/graph. */
#ifndef POOT_SRC_GRAPH_GRAPH_IMPL_H
#define POOT_SRC_GRAPH_GRAPH_IMPL_H

#include "poot/graph.h"

#define POOT__NO_NODE UINT32_MAX

/* One value: its type and the node (and result index) that defines it.
 * node is POOT__NO_NODE for an id the parser saw used but never defined. */
typedef struct poot__value {
  poot_type type;
  uint32_t node;
  uint32_t index;
} poot__value;

/* A region with its growable lists; `pub` points into them. */
typedef struct poot__region {
  poot_region pub;
  poot_vec nodes;  /* uint32_t node ids */
  poot_vec params; /* poot_value, by param index (NONE where missing) */
} poot__region;

/* An open composite: what composite_end needs. */
typedef struct poot__open {
  uint32_t region;       /* the body being built */
  uint32_t parent;       /* the region to return to */
  uint32_t node_mark;    /* node count at begin (for abort) */
  uint32_t value_mark;   /* value count at begin */
  uint32_t region_mark;  /* region count at begin */
  const char *name;      /* arena */
  uint32_t num_attrs;
  const poot_composite_attr *attrs; /* arena */
  uint32_t num_operands;
  const poot_value *operands; /* arena */
} poot__open;

typedef struct poot__state_rec {
  poot_value state;
  poot_value update; /* NONE: unchanged */
} poot__state_rec;

typedef struct poot__env_rec {
  const char *name;
  poot_value value;
} poot__env_rec;

struct poot_graph {
  poot_arena arena;
  poot_vec nodes;   /* poot_node * */
  poot_vec values;  /* poot__value */
  poot_vec regions; /* poot__region * */
  poot_vec open;    /* poot__open stack */
  uint32_t current; /* region being built */
  poot_value output;
  poot_vec states; /* poot__state_rec */
  poot_vec env;    /* poot__env_rec */
};

/* Accessors. */
static inline poot_node *poot__node(const poot_graph *g, uint32_t id) {
  return POOT_VEC_AT(&g->nodes, poot_node *, id);
}
static inline poot__value *poot__val(const poot_graph *g, poot_value v) {
  return &POOT_VEC_AT(&g->values, poot__value, v);
}
static inline poot__region *poot__reg(const poot_graph *g, uint32_t id) {
  return POOT_VEC_AT(&g->regions, poot__region *, id);
}

/* Adds a region (parent_node as given); returns its id in *out_id. */
POOT_MUST_USE poot_status poot__graph_new_region(poot_graph *g, uint32_t parent_node,
                                                 uint32_t *out_id);
/* Allocates a fresh value id with no defining node. */
POOT_MUST_USE poot_status poot__graph_new_value(poot_graph *g, poot_value *out);
/* Copies the node template into the arena with its operands and results
 * (the result ids given in `results`, typed `types`; NONE ids get fresh
 * values), appends it to region `region`, and binds the results to it. The
 * template's pointers are copied deeply for operands/results only; other
 * pointer fields must already live in the arena. */
POOT_MUST_USE poot_status poot__graph_append(poot_graph *g, uint32_t region,
                                             const poot_node *tmpl, const poot_type *types,
                                             poot_value *results, poot_node **out_node);
/* Registers a parsed/added State for the results list. */
POOT_MUST_USE poot_status poot__graph_note_state(poot_graph *g, poot_value state);

/* The op's shape rule and verifier: checks operand count, operand types,
 * attributes and trap; writes the result types (up to 2) and count.
 * INVALID_ARGUMENT "rule: details" on a violation. */
POOT_MUST_USE poot_status poot__op_infer(poot_op op, uint32_t num_operands,
                                         const poot_type *const *operand_types,
                                         const poot_attrs *attrs, poot_trap trap,
                                         poot_type *out_types, uint32_t *out_count);
/* Copies only the attribute fields that `op` reads (sorted reduce dims). */
void poot__attrs_canonical(poot_op op, uint32_t operand_rank, const poot_attrs *in,
                           poot_attrs *out);
/* Sets the attributes implied by the result type (dtype, shape, sizes). */
void poot__attrs_from_result(poot_op op, const poot_type *result, poot_attrs *attrs);
/* Whether an op may carry a check. */
bool poot__op_has_check(poot_op op);
/* Validates a composite name / attribute key / leaf name. */
bool poot__valid_composite_name(const char *name);
bool poot__valid_attr_key(const char *key);
/* Validates a type of a value (dims ≥ 0, rank ≤ 8, dtype valid, byte size
 * computable). INVALID_ARGUMENT "what: details". */
POOT_MUST_USE poot_status poot__check_type(const poot_type *type, const char *what);
/* Leaf rules (verifier and builder share them). */
POOT_MUST_USE poot_status poot__check_leaf(const poot_graph *g, const poot_node *node,
                                           const poot_type *type);

#endif
