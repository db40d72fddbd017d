/* Private to src/compile/passes: the rebuild walker every pass is written
 * on, and small helpers shared by the passes. */
#ifndef POOT_PASSES_IMPL_H
#define POOT_PASSES_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "poot/compile_passes.h"

typedef struct pass_rb pass_rb;

/* Called for every node of every region, in order, after its operands were
 * mapped to the new graph (`ops`, num_operands entries; NULL for leaves).
 * A hook that handles the node writes one new value per result of `node`
 * into out_results and sets *out_done; otherwise the walker copies the node
 * (composites: with their bodies walked by the same hook). Leaves reach the
 * hook only for Consts. */
typedef poot_status (*pass_node_fn)(pass_rb *rb, const poot_node *node, const poot_value *ops,
                                    poot_value *out_results, bool *out_done);

/* Called after the walker copied a node itself (the hook did not handle
 * it), with the node's new results. */
typedef poot_status (*pass_post_fn)(pass_rb *rb, const poot_node *node, const poot_value *ops,
                                    const poot_value *results);

struct pass_rb {
  const poot_graph *src;
  poot_graph *dst;
  const poot_pass_options *opt;
  poot_value *map;     /* src value id -> dst value id (POOT_VALUE_NONE unmapped) */
  const uint8_t *drop; /* per src node id: nonzero = leave out (DCE); NULL: keep all */
  pass_node_fn hook;   /* NULL: plain copy */
  pass_post_fn post;   /* NULL: none */
  void *user;
  uint32_t region; /* the dst region being built */
  uint32_t changes;
};

/* Rebuilds rb->src into a new graph (rb->dst) with rb->hook, then sets the
 * results and verifies it. The caller sets src, opt, drop, hook, user; the
 * walker owns map and dst until it returns: on success *out_graph receives
 * dst; on failure everything is freed. */
POOT_MUST_USE poot_status poot__pass_rebuild(pass_rb *rb, poot_graph **out_graph);

/* Copies `node` of graph `from` (a core op or a composite with its body, no
 * hook) into the region being built of graph `to`, with operands `ops`
 * (values of `to`). `scratch` has room for every value id of `from`. */
POOT_MUST_USE poot_status poot__pass_copy_node(poot_graph *to, const poot_graph *from,
                                               const poot_node *node, const poot_value *ops,
                                               poot_value *scratch, poot_value *out_results);

/* The node defining a value of g, or NULL. */
const poot_node *poot__pass_def(const poot_graph *g, poot_value v);
/* True when v is defined by a Const leaf. */
bool poot__pass_is_const(const poot_graph *g, poot_value v);
/* When v is a Const, or a broadcast of one, whose elements all have the same
 * bytes (at least one element), copies those bytes (≤ 8) to out_elem. */
bool poot__pass_splat(const poot_graph *g, poot_value v, uint8_t out_elem[8]);
/* False only when no element of v can be a signalling NaN in any
 * evaluation (see docs/passes.md, "quiet values"). */
bool poot__pass_may_snan(const poot_graph *g, poot_value v, int depth);

/* Appends a structural key of a region (local value numbering, ops,
 * attributes, checks, Const bytes, nested bodies) to sb. `scratch` has room
 * for every value id of g. */
void poot__pass_region_key(const poot_graph *g, const poot_region *region, uint32_t *scratch,
                           poot_strbuf *sb);
/* Appends op, check and attributes of a core node to sb. */
void poot__pass_attrs_key(const poot_node *node, poot_strbuf *sb);
/* Appends the composite attributes of a node to sb. */
void poot__pass_cattrs_key(const poot_node *node, poot_strbuf *sb);

#endif /* POOT_PASSES_IMPL_H */
